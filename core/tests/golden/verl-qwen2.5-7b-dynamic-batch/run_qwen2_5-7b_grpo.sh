#!/bin/bash
# Written by trainplan for VeRL 0.9.1.
# Qwen2.5-7B GRPO with VeRL on 1 × 8 NVIDIA H100 SXM5 80GB (8 devices): DP 4, ZeRO 3; micro-batch
# 4, global batch 256, prompts 1024 + responses 8192 tokens; bf16. Planned peak 60.7 GiB per
# device, step 784.17 s.
# Reopen the plan: #v1=PVDRcoMwDPsXP7NdSSlj_EwugAtckzgzod3G8e9zmtFHSZZke4POxH6CdoPRUmes_sfqUhfg5p7pYKq9gCsbhw_iG7RwR7YgMxgnGgSPHChhGtAK_HqgV--Xt49OyGDYWJv4Dfog6QX8okQv0YwI7Vmi-SkOP95I69EZecUC0F-Je9Qow3yQznzrZ5e26KEtT6o6ZdavLvtx0JFu6BeR63NTZTkwuRCTa4xTNmaBcQnkF3xJTfmpspRjdEDWA97nXnYulWqa9CI_H9vWEuT1YlywmIdzlyTJfWQtrVHHdP6-_wE
# Run on the node.
set -euo pipefail

export VLLM_USE_V1=1

python3 -m verl.trainer.main_ppo \
    algorithm.adv_estimator=grpo \
    algorithm.use_kl_in_reward=False \
    data.train_files="$HOME/data/gsm8k/train.parquet" \
    data.val_files="$HOME/data/gsm8k/test.parquet" \
    data.train_batch_size=256 \
    data.max_prompt_length=1024 \
    data.max_response_length=8192 \
    data.filter_overlong_prompts=True \
    data.truncation='error' \
    actor_rollout_ref.model.path='Qwen/Qwen2.5-7B' \
    actor_rollout_ref.model.use_remove_padding=True \
    actor_rollout_ref.model.enable_gradient_checkpointing=True \
    actor_rollout_ref.actor.strategy=fsdp \
    actor_rollout_ref.actor.optim.lr=1e-6 \
    actor_rollout_ref.actor.ppo_mini_batch_size=64 \
    actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=4 \
    actor_rollout_ref.actor.ulysses_sequence_parallel_size=2 \
    actor_rollout_ref.actor.use_dynamic_bsz=True \
    actor_rollout_ref.actor.ppo_max_token_len_per_gpu=12288 \
    actor_rollout_ref.actor.use_kl_loss=True \
    actor_rollout_ref.actor.kl_loss_coef=0.001 \
    actor_rollout_ref.actor.kl_loss_type=low_var_kl \
    actor_rollout_ref.actor.entropy_coeff=0 \
    actor_rollout_ref.actor.fsdp_config.param_offload=False \
    actor_rollout_ref.actor.fsdp_config.optimizer_offload=False \
    actor_rollout_ref.rollout.name=vllm \
    actor_rollout_ref.rollout.n=8 \
    actor_rollout_ref.rollout.tensor_model_parallel_size=2 \
    actor_rollout_ref.rollout.gpu_memory_utilization=0.6 \
    actor_rollout_ref.rollout.max_num_seqs=256 \
    actor_rollout_ref.rollout.max_model_len=10240 \
    actor_rollout_ref.rollout.max_num_batched_tokens=16384 \
    actor_rollout_ref.rollout.enforce_eager=True \
    actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu=4 \
    actor_rollout_ref.rollout.log_prob_use_dynamic_bsz=True \
    actor_rollout_ref.rollout.log_prob_max_token_len_per_gpu=12288 \
    actor_rollout_ref.ref.log_prob_micro_batch_size_per_gpu=4 \
    actor_rollout_ref.ref.log_prob_use_dynamic_bsz=True \
    actor_rollout_ref.ref.log_prob_max_token_len_per_gpu=12288 \
    actor_rollout_ref.ref.fsdp_config.param_offload=True \
    trainer.critic_warmup=0 \
    trainer.logger='["console","tensorboard"]' \
    trainer.project_name=trainplan \
    trainer.experiment_name=qwen2_5-7b_grpo \
    trainer.n_gpus_per_node=8 \
    trainer.nnodes=1 \
    trainer.save_freq=50 \
    trainer.test_freq=10 \
    trainer.total_epochs=15 \
    critic.enable=False \
    "$@"
