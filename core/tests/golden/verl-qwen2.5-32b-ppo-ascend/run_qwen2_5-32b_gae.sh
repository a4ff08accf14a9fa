#!/bin/bash
# Written by trainplan for VeRL 0.9.1.
# Qwen2.5-32B PPO with VeRL on 2 × 8 Huawei Ascend 910B2 64GB (16 devices): DP 8, ZeRO 3,
# optimizer offload, parameter offload; micro-batch 2, global batch 64, prompts 512 + responses
# 8192 tokens; bf16. Planned peak 47.1 GiB per device, step 1025.84 s.
# Reopen the plan: #v1=RVBLUsMwDL2L10lDE5ihXbJjyQk8iq00mfoXWSEMmdwduS2w8_v4PUmb6oHNqM6b8pOhqB-w3Stl3JIZqWghWsx3diDwuEa6qrP6RHKqUiOQXYFQGMgGg61Px6e-FcXBEu7pFhgyslia8mw88NgwwRQOCWheRKqUlxqnk0jFd0O5-VgxtIeXumvf6veQmRZTvHHhtLC2ExWvuSZuZnF2bV-nFJVM6pHHaEUt-BEuaP7L64WVcnCuCJsySVaU5GFwEayOiSc_fZcLSCn-C-WPz7-sGKLODBfZv5NaumV5-NKEOcWQUTsMl7LT6_Ek-RSdk-k1S93zvv8A
# 2 nodes: `ray start --head --dashboard-host=0.0.0.0` on the head, `ray start --address=<head>:6379` on the others, then run this on the head.
set -euo pipefail

export VLLM_USE_V1=1

python3 -m verl.trainer.main_ppo \
    algorithm.adv_estimator=gae \
    algorithm.use_kl_in_reward=False \
    data.train_files='/data/math/train.parquet' \
    data.val_files='/data/math/train.parquet' \
    data.train_batch_size=64 \
    data.max_prompt_length=512 \
    data.max_response_length=8192 \
    data.filter_overlong_prompts=True \
    data.truncation='error' \
    actor_rollout_ref.model.path='/models/Qwen2.5-32B-Instruct' \
    actor_rollout_ref.model.use_remove_padding=True \
    actor_rollout_ref.model.enable_gradient_checkpointing=True \
    actor_rollout_ref.actor.strategy=fsdp \
    actor_rollout_ref.actor.optim.lr=1e-6 \
    actor_rollout_ref.actor.ppo_mini_batch_size=64 \
    actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=2 \
    actor_rollout_ref.actor.ulysses_sequence_parallel_size=2 \
    actor_rollout_ref.actor.use_dynamic_bsz=False \
    actor_rollout_ref.actor.ppo_max_token_len_per_gpu=16384 \
    actor_rollout_ref.actor.use_kl_loss=True \
    actor_rollout_ref.actor.kl_loss_coef=0.001 \
    actor_rollout_ref.actor.kl_loss_type=low_var_kl \
    actor_rollout_ref.actor.entropy_coeff=0 \
    actor_rollout_ref.actor.fsdp_config.param_offload=True \
    actor_rollout_ref.actor.fsdp_config.optimizer_offload=True \
    actor_rollout_ref.rollout.name=vllm \
    actor_rollout_ref.rollout.n=5 \
    actor_rollout_ref.rollout.tensor_model_parallel_size=4 \
    actor_rollout_ref.rollout.gpu_memory_utilization=0.6 \
    actor_rollout_ref.rollout.max_num_seqs=256 \
    actor_rollout_ref.rollout.max_model_len=8704 \
    actor_rollout_ref.rollout.max_num_batched_tokens=8704 \
    actor_rollout_ref.rollout.enforce_eager=False \
    actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu=2 \
    actor_rollout_ref.rollout.log_prob_use_dynamic_bsz=False \
    actor_rollout_ref.rollout.log_prob_max_token_len_per_gpu=16384 \
    actor_rollout_ref.ref.log_prob_micro_batch_size_per_gpu=2 \
    actor_rollout_ref.ref.log_prob_use_dynamic_bsz=False \
    actor_rollout_ref.ref.log_prob_max_token_len_per_gpu=16384 \
    actor_rollout_ref.ref.fsdp_config.param_offload=True \
    trainer.critic_warmup=0 \
    trainer.logger='["console","tensorboard"]' \
    trainer.project_name=trainplan \
    trainer.experiment_name=qwen2_5-32b_gae \
    trainer.n_gpus_per_node=8 \
    trainer.nnodes=2 \
    trainer.save_freq=50 \
    trainer.test_freq=10 \
    trainer.total_epochs=15 \
    critic.model.path='/models/Qwen2.5-32B-Instruct' \
    critic.optim.lr=1e-5 \
    critic.ppo_mini_batch_size=64 \
    critic.ppo_micro_batch_size_per_gpu=2 \
    critic.use_dynamic_bsz=False \
    critic.ppo_max_token_len_per_gpu=16384 \
    critic.strategy=fsdp \
    critic.ulysses_sequence_parallel_size=2 \
    critic.fsdp.param_offload=True \
    critic.fsdp.optimizer_offload=True \
    trainer.device=npu \
    trainer.default_local_dir='/ckpt/qwen32b-ppo' \
    "$@"
