//! Every rule fires on a plan that breaks it, stays silent on one that keeps it, and its fix
//! resolves it (each rule's framework file is in docs/validation.md).

use trainplan_core::field::Field;
use trainplan_core::plan::Plan;
use trainplan_core::{evaluate, rules};

fn codes(text: &str) -> Vec<&'static str> {
    let plan = Plan::from_json(text).unwrap_or_else(|e| panic!("{text}: {e}"));
    evaluate(&plan).findings.iter().map(|f| f.code.as_str()).collect()
}

/// (code, a plan that breaks the rule, a plan that keeps it)
const CASES: &[(&str, &str, &str)] = &[
    // LLaMA-Factory v0.9.5 `get_train_args`: GaLore with a DeepSpeed file (ZeRO-2) refused; without.
    (
        "llamafactory.low_rank_deepspeed",
        r#"{"model": "qwen2.5-7b", "method": "sft-full", "optimizer": "galore", "pure_bf16": true, "parallel": {"zero_stage": 2}}"#,
        r#"{"model": "qwen2.5-7b", "method": "sft-full", "optimizer": "galore", "pure_bf16": true}"#,
    ),
    // The same for APOLLO, whose keys LLaMA-Factory checks with GaLore's.
    (
        "llamafactory.low_rank_deepspeed",
        r#"{"model": "qwen2.5-7b", "method": "sft-full", "optimizer": "apollo", "pure_bf16": true, "parallel": {"zero_stage": 3}}"#,
        r#"{"model": "qwen2.5-7b", "method": "sft-full", "optimizer": "apollo", "pure_bf16": true}"#,
    ),
    // `FinetuningArguments.__post_init__`: GaLore beside LoRA refused.
    (
        "llamafactory.low_rank_lora",
        r#"{"model": "qwen2.5-7b", "method": "lora", "optimizer": "galore"}"#,
        r#"{"model": "qwen2.5-7b", "method": "lora"}"#,
    ),
    // Layer-wise GaLore over 8 devices refused (distributed launch); on one it is not.
    (
        "llamafactory.low_rank_layerwise_distributed",
        r#"{"model": "qwen2.5-7b", "method": "sft-full", "optimizer": "galore", "pure_bf16": true, "low_rank": {"layerwise": true}, "batch": {"micro_batch": 1, "global_batch": 8}}"#,
        r#"{"model": "qwen2.5-7b", "method": "sft-full", "optimizer": "galore", "pure_bf16": true, "low_rank": {"layerwise": true}, "cluster": {"devices_per_node": 1}, "batch": {"micro_batch": 1, "global_batch": 1}}"#,
    ),
    // `_create_galore_optimizer`: layer-wise with 4 micro-batches a step refused; with one kept.
    (
        "llamafactory.low_rank_layerwise_accumulation",
        r#"{"model": "qwen2.5-7b", "method": "sft-full", "optimizer": "galore", "pure_bf16": true, "low_rank": {"layerwise": true}, "cluster": {"devices_per_node": 1}, "batch": {"micro_batch": 1, "global_batch": 4}}"#,
        r#"{"model": "qwen2.5-7b", "method": "sft-full", "optimizer": "galore", "pure_bf16": true, "low_rank": {"layerwise": true}, "cluster": {"devices_per_node": 1}, "batch": {"micro_batch": 4, "global_batch": 4}}"#,
    ),
    // `get_train_args` warns of GaLore under mixed precision; with `pure_bf16` it does not.
    (
        "llamafactory.low_rank_mixed_precision",
        r#"{"model": "qwen2.5-7b", "method": "sft-full", "optimizer": "galore"}"#,
        r#"{"model": "qwen2.5-7b", "method": "sft-full", "optimizer": "galore", "pure_bf16": true}"#,
    ),
    // verl 0.9.1 builds the Megatron engine's model through mbridge, which registers no bridge
    // for Mistral's `model_type` (mbridge/models at 10cb17f); Qwen2's it has.
    (
        "verl.mbridge_model",
        r#"{"model": "mistral-7b-v0.3", "framework": "verl-megatron", "method": "grpo"}"#,
        r#"{"model": "qwen2.5-7b", "framework": "verl-megatron", "method": "grpo"}"#,
    ),
    // Kimi K2 is DeepSeek-V3's architecture, but its config's own type has no bridge; Moonlight,
    // the same shape written as `deepseek_v3`, has.
    (
        "verl.mbridge_model",
        r#"{"model": "kimi-k2", "framework": "verl-megatron", "method": "grpo", "cluster": {"nodes": 128}}"#,
        r#"{"model": "moonlight-16b-a3b", "framework": "verl-megatron", "method": "grpo"}"#,
    ),
    // verl 0.9.1 `dtype: bfloat16 # ["bfloat16", "float16"]`, both engines.
    (
        "verl.precision",
        r#"{"model": "qwen2.5-7b", "framework": "verl-megatron", "method": "grpo", "precision": "fp8"}"#,
        r#"{"model": "qwen2.5-7b", "framework": "verl-megatron", "method": "grpo", "precision": "fp16"}"#,
    ),
    // verl 0.9.1 `TrainingWorker.train_batch`: a mini-batch's 3 responses over the Megatron actor's
    // DP 2 (TP 2 × PP 2 on 8 devices) do not split; 2 do.
    (
        "verl.mini_batch_split",
        r#"{"model": "qwen2.5-7b", "framework": "verl-megatron", "method": "grpo", "parallel": {"tp": 2, "pp": 2}, "batch": {"global_batch": 6, "micro_batch": 1}, "rl": {"n_samples_per_prompt": 1, "mini_batch": 3}}"#,
        r#"{"model": "qwen2.5-7b", "framework": "verl-megatron", "method": "grpo", "parallel": {"tp": 2, "pp": 2}, "batch": {"global_batch": 6, "micro_batch": 1}, "rl": {"n_samples_per_prompt": 1, "mini_batch": 2}}"#,
    ),
    // verl 0.9.1 `validate_config` with the Megatron actor: 10 prompts × 1 response against
    // megatron_dp 2 × ppo_micro_batch_size_per_gpu 3 = 6; at micro-batch 1 they divide.
    (
        "batch.divisible",
        r#"{"model": "qwen2.5-7b", "framework": "verl-megatron", "method": "grpo", "parallel": {"tp": 2, "pp": 2}, "batch": {"global_batch": 10, "micro_batch": 3}, "rl": {"n_samples_per_prompt": 1}}"#,
        r#"{"model": "qwen2.5-7b", "framework": "verl-megatron", "method": "grpo", "parallel": {"tp": 2, "pp": 2}, "batch": {"global_batch": 10, "micro_batch": 1}, "rl": {"n_samples_per_prompt": 1}}"#,
    ),
    (
        "batch.mean_seq_len",
        r#"{"model": "qwen2.5-7b", "batch": {"seq_len": 2048, "mean_seq_len": 4096}}"#,
        r#"{"model": "qwen2.5-7b", "batch": {"seq_len": 2048, "mean_seq_len": 1024}}"#,
    ),
    // The step time and memory count at most the sequence's tokens as image tokens.
    (
        "batch.image_tokens",
        r#"{"model": {"hf_config": {"model_type": "qwen2_5_vl", "hidden_size": 512, "intermediate_size": 1024, "num_hidden_layers": 2, "num_attention_heads": 8, "num_key_value_heads": 8, "vocab_size": 1000, "max_position_embeddings": 4096, "vision_config": {"depth": 2, "hidden_size": 64, "intermediate_size": 128, "out_hidden_size": 512}}}, "batch": {"seq_len": 2048, "image_tokens": 4096}}"#,
        r#"{"model": {"hf_config": {"model_type": "qwen2_5_vl", "hidden_size": 512, "intermediate_size": 1024, "num_hidden_layers": 2, "num_attention_heads": 8, "num_key_value_heads": 8, "vocab_size": 1000, "max_position_embeddings": 4096, "vision_config": {"depth": 2, "hidden_size": 64, "intermediate_size": 128, "out_hidden_size": 512}}}, "batch": {"seq_len": 2048, "image_tokens": 1024}}"#,
    ),
    // A text model has no encoder to run over them.
    (
        "batch.image_tokens_unused",
        r#"{"model": "qwen2.5-7b", "batch": {"image_tokens": 256}}"#,
        r#"{"model": "qwen2.5-7b"}"#,
    ),
    (
        "llamafactory.mean_seq_padded",
        r#"{"model": "qwen2.5-7b", "batch": {"micro_batch": 2, "mean_seq_len": 512}}"#,
        r#"{"model": "qwen2.5-7b", "batch": {"micro_batch": 1, "mean_seq_len": 512}}"#,
    ),
    (
        "mindspeed.mean_seq_padded",
        r#"{"model": "qwen2.5-7b", "hardware": "ascend-910b2", "framework": "mindspeed-llm", "method": "sft-full", "parallel": {"tp": 4}, "batch": {"micro_batch": 2, "mean_seq_len": 512}}"#,
        r#"{"model": "qwen2.5-7b", "hardware": "ascend-910b2", "framework": "mindspeed-llm", "method": "sft-full", "parallel": {"tp": 4}, "batch": {"micro_batch": 1, "mean_seq_len": 512}}"#,
    ),
    (
        "rl.mean_prompt_length",
        r#"{"model": "qwen2.5-7b", "framework": "verl", "method": "grpo", "rl": {"mean_prompt_length": 600}}"#,
        r#"{"model": "qwen2.5-7b", "framework": "verl", "method": "grpo", "rl": {"mean_prompt_length": 500}}"#,
    ),
    (
        "rl.mean_response_length",
        r#"{"model": "qwen2.5-7b", "framework": "verl", "method": "grpo", "rl": {"mean_response_length": 2048}}"#,
        r#"{"model": "qwen2.5-7b", "framework": "verl", "method": "grpo", "rl": {"mean_response_length": 1024}}"#,
    ),
    (
        "hf.qlora_experts",
        r#"{"model": "qwen3-30b-a3b", "method": "qlora"}"#,
        r#"{"model": "qwen3-30b-a3b", "method": "lora"}"#,
    ),
    (
        "llamafactory.liger_zero3",
        r#"{"model": "qwen2.5-7b", "liger_kernel": true, "parallel": {"zero_stage": 3}}"#,
        r#"{"model": "qwen2.5-7b", "liger_kernel": true, "parallel": {"zero_stage": 2}}"#,
    ),
    (
        "hw.no_bf16",
        r#"{"model": "qwen2.5-0.5b", "hardware": "v100-sxm-32g"}"#,
        r#"{"model": "qwen2.5-0.5b", "hardware": "v100-sxm-32g", "precision": "fp16"}"#,
    ),
    (
        "hw.no_fp8",
        r#"{"model": "qwen2.5-0.5b", "hardware": "a100-sxm-80g", "precision": "fp8"}"#,
        r#"{"model": "qwen2.5-0.5b", "hardware": "h100-sxm-80g", "precision": "fp8"}"#,
    ),
    (
        "hw.tp_across_nodes",
        r#"{"model": "llama-3-8b", "framework": "megatron", "method": "pretrain", "cluster": {"nodes": 2, "devices_per_node": 4}, "parallel": {"tp": 8}}"#,
        r#"{"model": "llama-3-8b", "framework": "megatron", "method": "pretrain", "cluster": {"nodes": 2, "devices_per_node": 4}, "parallel": {"tp": 4}}"#,
    ),
    (
        "method.needs_rl_framework",
        r#"{"model": "qwen2.5-0.5b", "method": "grpo"}"#,
        r#"{"model": "qwen2.5-0.5b", "method": "grpo", "framework": "verl"}"#,
    ),
    (
        "framework.rl_only",
        r#"{"model": "qwen2.5-0.5b", "framework": "verl", "method": "lora"}"#,
        r#"{"model": "qwen2.5-0.5b", "framework": "verl", "method": "grpo"}"#,
    ),
    (
        "method.dpo_megatron",
        r#"{"model": "qwen2.5-0.5b", "framework": "megatron", "method": "dpo"}"#,
        r#"{"model": "qwen2.5-0.5b", "framework": "mindspeed-llm", "hardware": "ascend-910b2", "method": "dpo"}"#,
    ),
    (
        "method.qlora_megatron",
        r#"{"model": "qwen2.5-0.5b", "framework": "megatron", "method": "qlora"}"#,
        r#"{"model": "qwen2.5-0.5b", "method": "qlora"}"#,
    ),
    (
        "method.freeze_framework",
        r#"{"model": "qwen2.5-0.5b", "framework": "megatron", "method": "freeze"}"#,
        r#"{"model": "qwen2.5-0.5b", "method": "freeze"}"#,
    ),
    (
        "framework.mindspeed_on_nvidia",
        r#"{"model": "qwen2.5-0.5b", "framework": "mindspeed-llm", "method": "pretrain"}"#,
        r#"{"model": "qwen2.5-0.5b", "framework": "mindspeed-llm", "method": "pretrain", "hardware": "ascend-910b2"}"#,
    ),
    // Prompts 12 over 8 engines (rollout TP 1); TP 2 runs 4, which divide them.
    (
        "mindspeed_rl.generation_dp",
        r#"{"model": "qwen2.5-7b", "framework": "mindspeed-rl", "hardware": "ascend-910b2", "method": "grpo", "batch": {"global_batch": 12}, "rl": {"rollout_tp": 1}}"#,
        r#"{"model": "qwen2.5-7b", "framework": "mindspeed-rl", "hardware": "ascend-910b2", "method": "grpo", "batch": {"global_batch": 12}, "rl": {"rollout_tp": 2}}"#,
    ),
    // 2 prompts over DP 2 (TP 4 on 8 devices), 5 responses each: 5 per rank, in micro-batches of 4
    // (broken) or 1 (kept); rollout TP 4 runs 2 engines, which the prompts divide.
    (
        "mindspeed_rl.micro_batch",
        r#"{"model": "qwen2.5-7b", "framework": "mindspeed-rl", "hardware": "ascend-910b2", "method": "grpo", "parallel": {"tp": 4}, "batch": {"global_batch": 2, "micro_batch": 4}, "rl": {"rollout_tp": 4}}"#,
        r#"{"model": "qwen2.5-7b", "framework": "mindspeed-rl", "hardware": "ascend-910b2", "method": "grpo", "parallel": {"tp": 4}, "batch": {"global_batch": 2, "micro_batch": 1}, "rl": {"rollout_tp": 4}}"#,
    ),
    // The rule reward scores a share of the prompts per node: 36 do not divide over 8 nodes, 64 do.
    (
        "mindspeed_rl.reward_nodes",
        r#"{"model": "qwen2.5-7b", "framework": "mindspeed-rl", "hardware": "ascend-910b2", "method": "grpo", "cluster": {"nodes": 8}, "batch": {"global_batch": 36}}"#,
        r#"{"model": "qwen2.5-7b", "framework": "mindspeed-rl", "hardware": "ascend-910b2", "method": "grpo", "cluster": {"nodes": 8}, "batch": {"global_batch": 64}}"#,
    ),
    (
        "mindspeed_rl.bf16",
        r#"{"model": "qwen2.5-0.5b", "framework": "mindspeed-rl", "hardware": "ascend-910b2", "method": "grpo", "precision": "fp16"}"#,
        r#"{"model": "qwen2.5-0.5b", "framework": "mindspeed-rl", "hardware": "ascend-910b2", "method": "grpo"}"#,
    ),
    // Megatron `validate_args`: world ÷ (TP·PP·CP)
    (
        "parallel.world",
        r#"{"model": "llama-3-8b", "framework": "megatron", "method": "pretrain", "parallel": {"tp": 2, "pp": 3}}"#,
        r#"{"model": "llama-3-8b", "framework": "megatron", "method": "pretrain", "parallel": {"tp": 2, "pp": 4}}"#,
    ),
    // `TransformerConfig`: Qwen2.5-0.5B has 14 heads.
    (
        "parallel.heads_tp",
        r#"{"model": "qwen2.5-0.5b", "framework": "megatron", "method": "pretrain", "parallel": {"tp": 4}}"#,
        r#"{"model": "qwen2.5-0.5b", "framework": "megatron", "method": "pretrain", "parallel": {"tp": 2}}"#,
    ),
    // `TransformerConfig`: Qwen2.5-7B has 28 heads and 4 key/value heads; TP 14 divides the heads
    // but not the groups.
    (
        "parallel.kv_heads_tp",
        r#"{"model": "qwen2.5-7b", "framework": "megatron", "method": "pretrain", "cluster": {"devices_per_node": 14}, "parallel": {"tp": 14}}"#,
        r#"{"model": "qwen2.5-7b", "framework": "megatron", "method": "pretrain", "parallel": {"tp": 4}}"#,
    ),
    // `validate_args`: Qwen2.5-7B has 28 layers.
    (
        "parallel.layers_pp",
        r#"{"model": "qwen2.5-7b", "framework": "megatron", "method": "pretrain", "parallel": {"pp": 8}}"#,
        r#"{"model": "qwen2.5-7b", "framework": "megatron", "method": "pretrain", "parallel": {"pp": 4}}"#,
    ),
    // `validate_args`: virtual pipeline stages
    (
        "parallel.vpp_needs_pp",
        r#"{"model": "llama-3-8b", "framework": "megatron", "method": "pretrain", "parallel": {"vpp": 2}}"#,
        r#"{"model": "llama-3-8b", "framework": "megatron", "method": "pretrain", "parallel": {"pp": 2, "vpp": 2}}"#,
    ),
    (
        "parallel.vpp_layers",
        r#"{"model": "llama-3-8b", "framework": "megatron", "method": "pretrain", "parallel": {"pp": 4, "vpp": 3}}"#,
        r#"{"model": "llama-3-8b", "framework": "megatron", "method": "pretrain", "parallel": {"pp": 4, "vpp": 4}}"#,
    ),
    // `validate_args`, `initialize_model_parallel`: experts and EP
    (
        "parallel.ep_dense",
        r#"{"model": "llama-3-8b", "framework": "megatron", "method": "pretrain", "parallel": {"ep": 2}}"#,
        r#"{"model": "mixtral-8x7b", "framework": "megatron", "method": "pretrain", "parallel": {"ep": 2}}"#,
    ),
    (
        "parallel.experts_ep",
        r#"{"model": "mixtral-8x7b", "framework": "megatron", "method": "pretrain", "cluster": {"nodes": 2, "devices_per_node": 3}, "parallel": {"ep": 3}}"#,
        r#"{"model": "mixtral-8x7b", "framework": "megatron", "method": "pretrain", "parallel": {"ep": 4}}"#,
    ),
    (
        "parallel.world_ep",
        r#"{"model": "qwen3-30b-a3b", "framework": "megatron", "method": "pretrain", "cluster": {"devices_per_node": 12}, "parallel": {"ep": 8}}"#,
        r#"{"model": "qwen3-30b-a3b", "framework": "megatron", "method": "pretrain", "parallel": {"ep": 8}}"#,
    ),
    (
        "parallel.moe_tp_needs_sp",
        r#"{"model": "mixtral-8x7b", "framework": "megatron", "method": "pretrain", "parallel": {"tp": 2, "ep": 2}}"#,
        r#"{"model": "mixtral-8x7b", "framework": "megatron", "method": "pretrain", "parallel": {"tp": 2, "ep": 2, "sequence_parallel": true}}"#,
    ),
    // `validate_args`: sequence parallelism
    (
        "parallel.sp_without_tp",
        r#"{"model": "llama-3-8b", "framework": "megatron", "method": "pretrain", "parallel": {"sequence_parallel": true}}"#,
        r#"{"model": "llama-3-8b", "framework": "megatron", "method": "pretrain", "parallel": {"tp": 2, "sequence_parallel": true}}"#,
    ),
    (
        "parallel.tp_overlap_needs_sp",
        r#"{"model": "llama-3-8b", "framework": "megatron", "method": "pretrain", "parallel": {"tp": 2, "tp_comm_overlap": true}}"#,
        r#"{"model": "llama-3-8b", "framework": "megatron", "method": "pretrain", "parallel": {"tp": 2, "tp_comm_overlap": true, "sequence_parallel": true}}"#,
    ),
    // `validate_args`: context parallelism
    (
        "parallel.cp_seq",
        r#"{"model": "llama-3-8b", "framework": "megatron", "method": "pretrain", "parallel": {"cp": 2}, "batch": {"seq_len": 4098}}"#,
        r#"{"model": "llama-3-8b", "framework": "megatron", "method": "pretrain", "parallel": {"cp": 2}, "batch": {"seq_len": 4096}}"#,
    ),
    // All-to-all context parallelism (MindSpeed `UlyssesContextParallelFeature.validate_args`;
    // Transformer Engine `AttnFuncWithCPAndQKVOA2A`): Qwen2.5-7B has 28 heads and 4 key/value
    // heads, Llama-3-8B 32 and 8 (their config.json). MindSpeed's Ulysses needs seq % CP only:
    // 4,100 tokens split over CP 4, not over its ring's 2 × CP.
    (
        "parallel.cp_a2a_seq",
        r#"{"model": "qwen2.5-7b", "hardware": "ascend-910b2", "framework": "mindspeed-llm", "method": "pretrain", "parallel": {"cp": 4, "cp_algo": "alltoall"}, "batch": {"seq_len": 4098}}"#,
        r#"{"model": "qwen2.5-7b", "hardware": "ascend-910b2", "framework": "mindspeed-llm", "method": "pretrain", "parallel": {"cp": 4, "cp_algo": "alltoall"}, "batch": {"seq_len": 4100}}"#,
    ),
    (
        "parallel.cp_seq",
        r#"{"model": "qwen2.5-7b", "hardware": "ascend-910b2", "framework": "mindspeed-llm", "method": "pretrain", "parallel": {"cp": 4}, "batch": {"seq_len": 4100}}"#,
        r#"{"model": "qwen2.5-7b", "hardware": "ascend-910b2", "framework": "mindspeed-llm", "method": "pretrain", "parallel": {"cp": 4, "cp_algo": "alltoall"}, "batch": {"seq_len": 4100}}"#,
    ),
    // Megatron-LM checks 2 × CP whatever the algorithm (`validate_args`).
    (
        "parallel.cp_seq",
        r#"{"model": "llama-3-8b", "framework": "megatron", "method": "pretrain", "parallel": {"cp": 4, "cp_algo": "alltoall"}, "batch": {"seq_len": 4100}}"#,
        r#"{"model": "llama-3-8b", "framework": "megatron", "method": "pretrain", "parallel": {"cp": 4, "cp_algo": "alltoall"}, "batch": {"seq_len": 4104}}"#,
    ),
    (
        "parallel.cp_a2a_heads",
        r#"{"model": "qwen2.5-7b", "hardware": "ascend-910b2", "framework": "mindspeed-llm", "method": "pretrain", "parallel": {"tp": 2, "cp": 4, "cp_algo": "alltoall"}}"#,
        r#"{"model": "qwen2.5-7b", "hardware": "ascend-910b2", "framework": "mindspeed-llm", "method": "pretrain", "parallel": {"tp": 1, "cp": 4, "cp_algo": "alltoall"}}"#,
    ),
    (
        "parallel.cp_a2a_kv_heads",
        r#"{"model": "llama-3-8b", "framework": "megatron", "method": "pretrain", "cluster": {"nodes": 2}, "parallel": {"tp": 4, "cp": 4, "cp_algo": "alltoall"}}"#,
        r#"{"model": "llama-3-8b", "framework": "megatron", "method": "pretrain", "cluster": {"nodes": 2}, "parallel": {"tp": 2, "cp": 4, "cp_algo": "alltoall"}}"#,
    ),
    // VeRL's Megatron engine runs Transformer Engine's all-to-all too (megatron-core `cp_comm_type`).
    (
        "parallel.cp_a2a_kv_heads",
        r#"{"model": "llama-3-8b", "framework": "verl-megatron", "method": "grpo", "cluster": {"nodes": 2}, "parallel": {"tp": 4, "cp": 4, "cp_algo": "alltoall"}}"#,
        r#"{"model": "llama-3-8b", "framework": "verl-megatron", "method": "grpo", "cluster": {"nodes": 2}, "parallel": {"tp": 2, "cp": 4, "cp_algo": "alltoall"}}"#,
    ),
    // Llama-3.1-70B's 8 key/value heads leave one per rank at TP 8, which CP 2 cannot split;
    // MindSpeed repeats it to the query heads instead.
    (
        "parallel.cp_a2a_kv_heads",
        r#"{"model": "llama-3.1-70b", "framework": "megatron", "method": "pretrain", "cluster": {"nodes": 2}, "parallel": {"tp": 8, "cp": 2, "cp_algo": "alltoall"}}"#,
        r#"{"model": "llama-3.1-70b", "hardware": "ascend-910b2", "framework": "mindspeed-llm", "method": "pretrain", "cluster": {"nodes": 2}, "parallel": {"tp": 8, "cp": 2, "cp_algo": "alltoall"}}"#,
    ),
    // `validate_args`: Llama-2 has 4096 positions.
    (
        "model.seq_too_long",
        r#"{"model": "llama-2-7b", "batch": {"seq_len": 8192}}"#,
        r#"{"model": "llama-2-7b", "batch": {"seq_len": 4096}}"#,
    ),
    // `validate_args`: the overlapped parameter gather
    (
        "parallel.param_gather_needs",
        r#"{"model": "llama-3-8b", "framework": "megatron", "method": "pretrain", "parallel": {"overlap_param_gather": true}}"#,
        r#"{"model": "llama-3-8b", "framework": "megatron", "method": "pretrain", "parallel": {"overlap_param_gather": true, "overlap_grad_reduce": true, "distributed_optimizer": true}}"#,
    ),
    // `TransformerConfig`: 32 layers over PP 4 is 8 per stage.
    (
        "recompute.num_layers",
        r#"{"model": "llama-3-8b", "framework": "megatron", "method": "pretrain", "parallel": {"pp": 4}, "recompute": {"num_layers": 9}}"#,
        r#"{"model": "llama-3-8b", "framework": "megatron", "method": "pretrain", "parallel": {"pp": 4}, "recompute": {"num_layers": 8}}"#,
    ),
    // MindSpeed: CoC and swap-attention are not for LoRA
    (
        "mindspeed.swap_attention_lora",
        r#"{"model": "qwen2.5-7b", "framework": "mindspeed-llm", "hardware": "ascend-910b2", "method": "lora", "recompute": {"swap_attention": true}}"#,
        r#"{"model": "qwen2.5-7b", "framework": "mindspeed-llm", "hardware": "ascend-910b2", "method": "sft-full", "recompute": {"swap_attention": true}}"#,
    ),
    (
        "mindspeed.coc_lora",
        r#"{"model": "qwen2.5-7b", "framework": "mindspeed-llm", "hardware": "ascend-910b2", "method": "lora", "parallel": {"tp": 2, "sequence_parallel": true, "tp_comm_overlap": true}}"#,
        r#"{"model": "qwen2.5-7b", "framework": "mindspeed-llm", "hardware": "ascend-910b2", "method": "lora", "parallel": {"tp": 2, "sequence_parallel": true}}"#,
    ),
    (
        "mindspeed.knob_ignored",
        r#"{"model": "qwen2.5-7b", "recompute": {"activation_function": true}}"#,
        r#"{"model": "qwen2.5-7b"}"#,
    ),
    // Batch identity (Megatron, DeepSpeed, LLaMA-Factory): 8 devices × micro-batch 1.
    (
        "batch.divisible",
        r#"{"model": "qwen2.5-7b", "batch": {"global_batch": 60}}"#,
        r#"{"model": "qwen2.5-7b", "batch": {"global_batch": 64}}"#,
    ),
    (
        "batch.vpp_microbatches",
        r#"{"model": "llama-3-8b", "framework": "megatron", "method": "pretrain", "parallel": {"tp": 2, "pp": 4, "vpp": 2}, "batch": {"global_batch": 6}}"#,
        r#"{"model": "llama-3-8b", "framework": "megatron", "method": "pretrain", "parallel": {"tp": 2, "pp": 4, "vpp": 2}, "batch": {"global_batch": 8}}"#,
    ),
    (
        "batch.few_microbatches",
        r#"{"model": "llama-3-8b", "framework": "megatron", "method": "pretrain", "parallel": {"tp": 2, "pp": 4}, "batch": {"global_batch": 2}}"#,
        r#"{"model": "llama-3-8b", "framework": "megatron", "method": "pretrain", "parallel": {"tp": 2, "pp": 4}, "batch": {"global_batch": 32}}"#,
    ),
    (
        "schedule.dualpipev_microbatches",
        r#"{"model": "llama-3-8b", "hardware": "ascend-910b2", "framework": "mindspeed-llm", "method": "pretrain", "parallel": {"tp": 2, "pp": 4, "schedule": "dualpipev"}, "batch": {"global_batch": 4}}"#,
        r#"{"model": "llama-3-8b", "hardware": "ascend-910b2", "framework": "mindspeed-llm", "method": "pretrain", "parallel": {"tp": 2, "pp": 4, "schedule": "dualpipev"}, "batch": {"global_batch": 16}}"#,
    ),
    // Megatron-LM has 1F1B and interleaved 1F1B only (megatron/core/pipeline_parallel/schedules.py);
    // DualPipeV is MindSpeed's (dualpipev_feature.py).
    (
        "schedule.framework",
        r#"{"model": "llama-3-8b", "framework": "megatron", "method": "pretrain", "parallel": {"tp": 2, "pp": 4, "schedule": "dualpipev"}, "batch": {"global_batch": 16}}"#,
        r#"{"model": "llama-3-8b", "hardware": "ascend-910b2", "framework": "mindspeed-llm", "method": "pretrain", "parallel": {"tp": 2, "pp": 4, "schedule": "dualpipev"}, "batch": {"global_batch": 16}}"#,
    ),
    // MindSpeed DualpipeVFeature.validate_args: not with overlap_grad_reduce; Qwen2.5-0.5B ties
    // its embeddings, which DualPipeV refuses too.
    (
        "mindspeed.dualpipev_conflict",
        r#"{"model": "llama-3-8b", "hardware": "ascend-910b2", "framework": "mindspeed-llm", "method": "pretrain", "parallel": {"tp": 2, "pp": 4, "schedule": "dualpipev", "overlap_grad_reduce": true}, "batch": {"global_batch": 16}}"#,
        r#"{"model": "llama-3-8b", "hardware": "ascend-910b2", "framework": "mindspeed-llm", "method": "pretrain", "parallel": {"tp": 2, "pp": 4, "schedule": "dualpipev"}, "batch": {"global_batch": 16}}"#,
    ),
    (
        "mindspeed.dualpipev_conflict",
        r#"{"model": "qwen2.5-0.5b", "hardware": "ascend-910b2", "framework": "mindspeed-llm", "method": "pretrain", "parallel": {"tp": 2, "pp": 4, "schedule": "dualpipev"}, "batch": {"global_batch": 16}}"#,
        r#"{"model": "qwen2.5-0.5b", "hardware": "ascend-910b2", "framework": "mindspeed-llm", "method": "pretrain", "parallel": {"tp": 2, "pp": 4}, "batch": {"global_batch": 16}}"#,
    ),
    // Megatron FSDP is Megatron-LM's; DeepSpeed shards with ZeRO.
    (
        "fsdp.framework",
        r#"{"model": "qwen2.5-0.5b", "framework": "deepspeed", "method": "sft-full", "parallel": {"fsdp": "optim_grads_params"}}"#,
        r#"{"model": "qwen2.5-0.5b", "framework": "megatron", "method": "pretrain", "parallel": {"fsdp": "optim_grads_params"}}"#,
    ),
    // VeRL's FSDP engine runs PyTorch's FSDP1 or FSDP2 (`strategy: fsdp2`), never Megatron FSDP.
    (
        "fsdp.framework",
        r#"{"model": "qwen2.5-7b", "framework": "verl", "method": "grpo", "parallel": {"fsdp": "optim_grads"}}"#,
        r#"{"model": "qwen2.5-7b", "framework": "verl", "method": "grpo", "parallel": {"fsdp": "torch_fsdp2"}}"#,
    ),
    // megatron/training/arguments.py: --use-torch-fsdp2 asserts PP 1.
    (
        "fsdp.torch",
        r#"{"model": "llama-3-8b", "framework": "megatron", "method": "pretrain", "parallel": {"pp": 2, "fsdp": "torch_fsdp2"}}"#,
        r#"{"model": "llama-3-8b", "framework": "megatron", "method": "pretrain", "parallel": {"fsdp": "torch_fsdp2"}}"#,
    ),
    // MXFP8 and NVFP4 are Blackwell's, and Megatron-LM's recipes.
    (
        "hw.no_block_scaling",
        r#"{"model": "llama-3-8b", "framework": "megatron", "method": "pretrain", "precision": "mxfp8"}"#,
        r#"{"model": "llama-3-8b", "hardware": "b200-180g", "framework": "megatron", "method": "pretrain", "precision": "mxfp8"}"#,
    ),
    (
        "precision.framework",
        r#"{"model": "llama-3-8b", "hardware": "b200-180g", "method": "sft-full", "precision": "nvfp4"}"#,
        r#"{"model": "llama-3-8b", "hardware": "b200-180g", "framework": "megatron", "method": "pretrain", "precision": "nvfp4"}"#,
    ),
    // The fused-kernel switch is MindSpeed's.
    (
        "parallel.fused_kernels_framework",
        r#"{"model": "qwen2.5-7b", "framework": "megatron", "method": "pretrain", "parallel": {"fused_kernels": false}}"#,
        r#"{"model": "qwen2.5-7b", "hardware": "ascend-910b2", "framework": "mindspeed-llm", "method": "pretrain", "parallel": {"fused_kernels": false}}"#,
    ),
    // The MoE section (`TransformerConfig.__post_init__`, core_v0.19.0).
    (
        "moe.framework",
        r#"{"model": "mixtral-8x7b", "framework": "llamafactory", "method": "lora", "moe": {"permute_fusion": true}}"#,
        r#"{"model": "mixtral-8x7b", "framework": "llamafactory", "method": "lora"}"#,
    ),
    (
        "moe.flex_framework",
        r#"{"model": "mixtral-8x7b", "hardware": "ascend-910b2", "framework": "mindspeed-llm", "method": "pretrain", "cluster": {"nodes": 2}, "parallel": {"ep": 8}, "moe": {"dispatcher": "flex"}}"#,
        r#"{"model": "mixtral-8x7b", "hardware": "ascend-910b2", "framework": "mindspeed-llm", "method": "pretrain", "cluster": {"nodes": 2}, "parallel": {"ep": 8}}"#,
    ),
    (
        "moe.flex_parallel",
        r#"{"model": "mixtral-8x7b", "framework": "megatron", "method": "pretrain", "cluster": {"nodes": 2}, "moe": {"dispatcher": "flex"}}"#,
        r#"{"model": "mixtral-8x7b", "framework": "megatron", "method": "pretrain", "cluster": {"nodes": 2}, "parallel": {"ep": 8}, "moe": {"dispatcher": "flex"}}"#,
    ),
    (
        "moe.pad_needs_capacity",
        r#"{"model": "mixtral-8x7b", "framework": "megatron", "method": "pretrain", "cluster": {"nodes": 2}, "parallel": {"ep": 8}, "moe": {"pad_to_capacity": true}}"#,
        r#"{"model": "mixtral-8x7b", "framework": "megatron", "method": "pretrain", "cluster": {"nodes": 2}, "parallel": {"ep": 8}, "moe": {"pad_to_capacity": true, "capacity_factor": 1.25}}"#,
    ),
    (
        "moe.flex_pad",
        r#"{"model": "mixtral-8x7b", "framework": "megatron", "method": "pretrain", "cluster": {"nodes": 2}, "parallel": {"ep": 8}, "moe": {"dispatcher": "flex", "pad_to_capacity": true, "capacity_factor": 1.25}}"#,
        r#"{"model": "mixtral-8x7b", "framework": "megatron", "method": "pretrain", "cluster": {"nodes": 2}, "parallel": {"ep": 8}, "moe": {"dispatcher": "flex", "capacity_factor": 1.25}}"#,
    ),
    (
        "moe.overlap",
        r#"{"model": "mixtral-8x7b", "framework": "megatron", "method": "pretrain", "cluster": {"nodes": 2}, "parallel": {"ep": 8}, "recompute": {"granularity": "full"}, "moe": {"overlap_ep_comm": true}}"#,
        r#"{"model": "mixtral-8x7b", "framework": "megatron", "method": "pretrain", "cluster": {"nodes": 2}, "parallel": {"ep": 8}, "recompute": {"granularity": "selective"}, "moe": {"overlap_ep_comm": true}}"#,
    ),
    // MindSpeed-RL's config classes have no --account-for-*-in-pipeline-split.
    (
        "parallel.account_framework",
        r#"{"model": "qwen2.5-7b", "hardware": "ascend-910b2", "framework": "mindspeed-rl", "method": "grpo", "parallel": {"pp": 2, "account_embedding_loss": true}}"#,
        r#"{"model": "qwen2.5-7b", "hardware": "ascend-910b2", "framework": "mindspeed-rl", "method": "grpo", "parallel": {"pp": 2}}"#,
    ),
    // Megatron-LM's pretrain_gpt.py has no LoRA.
    (
        "method.lora_megatron",
        r#"{"model": "qwen2.5-0.5b", "framework": "megatron", "method": "lora"}"#,
        r#"{"model": "qwen2.5-0.5b", "framework": "mindspeed-llm", "hardware": "ascend-910b2", "method": "lora"}"#,
    ),
    // VeRL get_vllm_max_lora_rank: ranks above 512 are refused.
    // VeRL's FSDP has no ZeRO-1 (verl/workers/engine/fsdp/utils.py); ZeRO-2 is `reshard_after_forward: False`.
    (
        "verl.zero_stage",
        r#"{"model": "qwen2.5-7b", "framework": "verl", "method": "grpo", "parallel": {"zero_stage": 1}}"#,
        r#"{"model": "qwen2.5-7b", "framework": "verl", "method": "grpo", "parallel": {"zero_stage": 2}}"#,
    ),
    (
        "verl.lora_rank",
        r#"{"model": "qwen2.5-0.5b", "framework": "verl", "method": "grpo", "rl": {"lora": true}, "lora": {"rank": 1024}}"#,
        r#"{"model": "qwen2.5-0.5b", "framework": "verl", "method": "grpo", "rl": {"lora": true}, "lora": {"rank": 500}}"#,
    ),
    // HF path
    (
        "hf.no_model_parallel",
        r#"{"model": "qwen2.5-7b", "parallel": {"tp": 2}}"#,
        r#"{"model": "qwen2.5-7b", "parallel": {"zero_stage": 3}}"#,
    ),
    (
        "zero.offload_params_needs_3",
        r#"{"model": "qwen2.5-7b", "parallel": {"zero_stage": 2, "offload_params": true}}"#,
        r#"{"model": "qwen2.5-7b", "parallel": {"zero_stage": 3, "offload_params": true}}"#,
    ),
    (
        "zero.offload_optimizer_stage",
        r#"{"model": "qwen2.5-7b", "framework": "deepspeed", "method": "sft-full", "parallel": {"zero_stage": 0, "offload_optimizer": true}}"#,
        r#"{"model": "qwen2.5-7b", "framework": "deepspeed", "method": "sft-full", "parallel": {"zero_stage": 1, "offload_optimizer": true}}"#,
    ),
    (
        "hf.distributed_optimizer",
        r#"{"model": "qwen2.5-7b", "parallel": {"distributed_optimizer": true}}"#,
        r#"{"model": "qwen2.5-7b", "parallel": {"zero_stage": 1}}"#,
    ),
    // RL
    (
        "rl.rollout_tp",
        r#"{"model": "qwen2.5-7b", "framework": "verl", "method": "grpo", "rl": {"rollout_tp": 3}}"#,
        r#"{"model": "qwen2.5-7b", "framework": "verl", "method": "grpo", "rl": {"rollout_tp": 4}}"#,
    ),
    (
        "rl.rollout_tp_heads",
        r#"{"model": "qwen2.5-0.5b", "framework": "verl", "method": "grpo", "rl": {"rollout_tp": 4}}"#,
        r#"{"model": "qwen2.5-0.5b", "framework": "verl", "method": "grpo", "rl": {"rollout_tp": 2}}"#,
    ),
    (
        "rl.gpu_memory_utilization",
        r#"{"model": "qwen2.5-7b", "framework": "verl", "method": "grpo", "rl": {"gpu_memory_utilization": 1.0}}"#,
        r#"{"model": "qwen2.5-7b", "framework": "verl", "method": "grpo", "rl": {"gpu_memory_utilization": 0.6}}"#,
    ),
    // vLLM's expert parallelism runs over the engine's TP × DP ranks (VeRL `RolloutConfig`): EP 3
    // is no multiple of TP 2, EP 8 is (and divides the 8 devices).
    (
        "rl.rollout_ep",
        r#"{"model": "qwen3-30b-a3b", "framework": "verl", "method": "grpo", "rl": {"rollout_tp": 2, "rollout_ep": 3}}"#,
        r#"{"model": "qwen3-30b-a3b", "framework": "verl", "method": "grpo", "rl": {"rollout_tp": 2, "rollout_ep": 8}}"#,
    ),
    (
        "rl.rollout_ep_dense",
        r#"{"model": "qwen2.5-7b", "framework": "verl", "method": "grpo", "rl": {"rollout_ep": 8}}"#,
        r#"{"model": "qwen2.5-7b", "framework": "verl", "method": "grpo", "rl": {"rollout_ep": 1}}"#,
    ),
    // With EP, VeRL's replica holds every device of its nodes: EP 4 on nodes of 8 does not, EP 8 does.
    (
        "verl.rollout_ep_nodes",
        r#"{"model": "qwen3-30b-a3b", "framework": "verl", "method": "grpo", "cluster": {"nodes": 2}, "rl": {"rollout_tp": 2, "rollout_ep": 4}}"#,
        r#"{"model": "qwen3-30b-a3b", "framework": "verl", "method": "grpo", "cluster": {"nodes": 2}, "rl": {"rollout_tp": 2, "rollout_ep": 8}}"#,
    ),
    // MindSpeed-RL's resharding spreads the experts over infer TP × infer EP ranks, which the
    // actor's TP × EP must divide: TP 2 alone is 2 (broken for TP 1 × EP 4), EP 8 is 8 (kept).
    (
        "mindspeed_rl.rollout_ep",
        r#"{"model": "qwen3-30b-a3b", "framework": "mindspeed-rl", "hardware": "ascend-910b2", "method": "grpo", "parallel": {"ep": 4}, "rl": {"rollout_tp": 2}}"#,
        r#"{"model": "qwen3-30b-a3b", "framework": "mindspeed-rl", "hardware": "ascend-910b2", "method": "grpo", "parallel": {"ep": 4}, "rl": {"rollout_tp": 2, "rollout_ep": 8}}"#,
    ),
    // With EP, MindSpeed-RL's training spreads whole experts over TP × EP (moe_tp_extend_ep):
    // Mixtral's 8 experts over TP 4 × EP 4 do not divide, over TP 2 × EP 4 they do.
    (
        "mindspeed_rl.tp_extend_ep",
        r#"{"model": "mixtral-8x7b", "framework": "mindspeed-rl", "hardware": "ascend-910b2", "method": "grpo", "cluster": {"nodes": 2}, "parallel": {"tp": 4, "ep": 4}}"#,
        r#"{"model": "mixtral-8x7b", "framework": "mindspeed-rl", "hardware": "ascend-910b2", "method": "grpo", "cluster": {"nodes": 2}, "parallel": {"tp": 2, "ep": 4}}"#,
    ),
    (
        "mindspeed_rl.tp_extend_ep_dispatcher",
        r#"{"model": "qwen3-30b-a3b", "framework": "mindspeed-rl", "hardware": "ascend-910b2", "method": "grpo", "parallel": {"ep": 4}, "moe": {"dispatcher": "allgather"}}"#,
        r#"{"model": "qwen3-30b-a3b", "framework": "mindspeed-rl", "hardware": "ascend-910b2", "method": "grpo", "parallel": {"ep": 4}, "moe": {"dispatcher": "alltoall"}}"#,
    ),
    (
        "rl.engine_too_small",
        r#"{"model": "qwen2.5-72b", "framework": "verl", "method": "grpo", "parallel": {"zero_stage": 3}, "rl": {"gpu_memory_utilization": 0.3}}"#,
        r#"{"model": "qwen2.5-72b", "framework": "verl", "method": "grpo", "parallel": {"zero_stage": 3}, "rl": {"rollout_tp": 4, "gpu_memory_utilization": 0.6}}"#,
    ),
    (
        "verl.ulysses",
        r#"{"model": "qwen2.5-7b", "framework": "verl", "method": "grpo", "parallel": {"cp": 3}}"#,
        r#"{"model": "qwen2.5-7b", "framework": "verl", "method": "grpo", "parallel": {"cp": 4}}"#,
    ),
    // Megatron's checks on `--distribute-saved-activations` (validate_args, __post_init__); the
    // setting is off in each good plan, as the fix turns it.
    (
        "recompute.distribute_tp",
        r#"{"model": "llama-3.1-8b", "framework": "megatron", "method": "pretrain", "recompute": {"granularity": "full", "distribute_saved_activations": true}}"#,
        r#"{"model": "llama-3.1-8b", "framework": "megatron", "method": "pretrain", "recompute": {"granularity": "full"}}"#,
    ),
    (
        "recompute.distribute_full",
        r#"{"model": "llama-3.1-8b", "framework": "megatron", "method": "pretrain", "parallel": {"tp": 2}, "recompute": {"granularity": "selective", "distribute_saved_activations": true}}"#,
        r#"{"model": "llama-3.1-8b", "framework": "megatron", "method": "pretrain", "parallel": {"tp": 2}, "recompute": {"granularity": "selective"}}"#,
    ),
    (
        "recompute.distribute_sp",
        r#"{"model": "llama-3.1-8b", "framework": "megatron", "method": "pretrain", "parallel": {"tp": 2, "sequence_parallel": true}, "recompute": {"granularity": "full", "distribute_saved_activations": true}}"#,
        r#"{"model": "llama-3.1-8b", "framework": "megatron", "method": "pretrain", "parallel": {"tp": 2, "sequence_parallel": true}, "recompute": {"granularity": "full"}}"#,
    ),
    (
        "recompute.distribute_framework",
        r#"{"model": "qwen2.5-7b", "framework": "deepspeed", "method": "sft-full", "recompute": {"granularity": "full", "distribute_saved_activations": true}}"#,
        r#"{"model": "qwen2.5-7b", "framework": "deepspeed", "method": "sft-full", "recompute": {"granularity": "full"}}"#,
    ),
    // Qwen2.5-14B: 40 heads, 8 key/value heads (its config.json); on 40 devices SP 5 divides both
    // the heads and the devices, but 5 and 8 divide neither way.
    (
        "verl.ulysses_kv_heads",
        r#"{"model": "qwen2.5-14b", "framework": "verl", "method": "grpo", "cluster": {"nodes": 5}, "parallel": {"cp": 5}}"#,
        r#"{"model": "qwen2.5-14b", "framework": "verl", "method": "grpo", "cluster": {"nodes": 5}, "parallel": {"cp": 4}}"#,
    ),
    // Uneven stages: DeepSeek-V3's 61 layers on 8 stages need them; they do not combine with VPP.
    (
        "parallel.layers_pp",
        r#"{"model": "deepseek-v3", "framework": "megatron", "method": "pretrain", "cluster": {"nodes": 64}, "parallel": {"tp": 8, "pp": 8, "ep": 8}}"#,
        r#"{"model": "deepseek-v3", "framework": "megatron", "method": "pretrain", "cluster": {"nodes": 64}, "parallel": {"tp": 8, "pp": 8, "ep": 8, "uneven_layers": true}}"#,
    ),
    (
        "parallel.uneven_vpp",
        r#"{"model": "deepseek-v3", "framework": "megatron", "method": "pretrain", "cluster": {"nodes": 64}, "parallel": {"tp": 8, "pp": 8, "vpp": 2, "ep": 8, "uneven_layers": true}}"#,
        r#"{"model": "deepseek-v3", "framework": "megatron", "method": "pretrain", "cluster": {"nodes": 64}, "parallel": {"tp": 8, "pp": 8, "ep": 8, "uneven_layers": true}}"#,
    ),
    // MindSpeed and Ascend LLaMA-Factory knobs
    // Megatron-LM's fp8 parameters and bf16 gradients (`validate_args`, core_v0.19.0).
    (
        "precision.fp8_param_gather",
        r#"{"model": "llama-3.1-8b", "framework": "megatron", "method": "pretrain", "parallel": {"distributed_optimizer": true, "fp8_param_gather": true}}"#,
        r#"{"model": "llama-3.1-8b", "framework": "megatron", "method": "pretrain", "precision": "fp8", "parallel": {"distributed_optimizer": true, "fp8_param_gather": true}}"#,
    ),
    (
        "parallel.fp8_param_gather",
        r#"{"model": "llama-3.1-8b", "framework": "megatron", "method": "pretrain", "precision": "fp8", "parallel": {"fp8_param_gather": true}}"#,
        r#"{"model": "llama-3.1-8b", "framework": "megatron", "method": "pretrain", "precision": "fp8", "parallel": {"fsdp": "optim_grads", "fp8_param_gather": true}}"#,
    ),
    (
        "precision.grad_reduce_bf16",
        r#"{"model": "llama-3.1-8b", "framework": "megatron", "method": "pretrain", "precision": "fp16", "parallel": {"grad_reduce_bf16": true}}"#,
        r#"{"model": "llama-3.1-8b", "framework": "megatron", "method": "pretrain", "parallel": {"grad_reduce_bf16": true}}"#,
    ),
    // DeepSeek-V2 routes each token within 3 of 8 groups (its config.json: `topk_group` 3); MindSpeed-LLM
    // asserts EP above that (`_validate_group_limited_greedy`), its DeepSeek-V2 script runs EP 8.
    (
        "mindspeed.group_limited_ep",
        r#"{"model": "deepseek-v2", "framework": "mindspeed-llm", "hardware": "ascend-910b2", "method": "pretrain", "cluster": {"nodes": 8}, "parallel": {"pp": 4, "ep": 2}}"#,
        r#"{"model": "deepseek-v2", "framework": "mindspeed-llm", "hardware": "ascend-910b2", "method": "pretrain", "cluster": {"nodes": 8}, "parallel": {"pp": 4, "ep": 4}}"#,
    ),
    (
        "mindspeed.swap_optimizer",
        r#"{"model": "qwen2.5-7b", "framework": "mindspeed-llm", "hardware": "ascend-910b2", "method": "sft-full", "parallel": {"tp": 2, "swap_optimizer": true}}"#,
        r#"{"model": "qwen2.5-7b", "framework": "mindspeed-llm", "hardware": "ascend-910b2", "method": "sft-full", "parallel": {"tp": 2, "swap_optimizer": true, "distributed_optimizer": true}}"#,
    ),
    (
        "mindspeed.act_fn_layers",
        r#"{"model": "qwen2.5-7b", "framework": "mindspeed-llm", "hardware": "ascend-910b2", "method": "sft-full", "parallel": {"tp": 4}, "recompute": {"granularity": "none", "activation_function": true, "activation_function_layers": 29}}"#,
        r#"{"model": "qwen2.5-7b", "framework": "mindspeed-llm", "hardware": "ascend-910b2", "method": "sft-full", "parallel": {"tp": 4}, "recompute": {"granularity": "none", "activation_function": true, "activation_function_layers": 28}}"#,
    ),
    (
        "mindspeed.act_fn_full_block",
        r#"{"model": "qwen2.5-7b", "framework": "mindspeed-llm", "hardware": "ascend-910b2", "method": "sft-full", "parallel": {"tp": 4}, "recompute": {"granularity": "full", "activation_function": true}}"#,
        r#"{"model": "qwen2.5-7b", "framework": "mindspeed-llm", "hardware": "ascend-910b2", "method": "sft-full", "parallel": {"tp": 4}, "recompute": {"granularity": "full", "method": "block", "activation_function": true}}"#,
    ),
    (
        "llamafactory.layers_ratio_ignored",
        r#"{"model": "qwen2.5-7b", "framework": "deepspeed", "method": "sft-full", "parallel": {"zero_stage": 3}, "recompute": {"layers_ratio": 0.5}}"#,
        r#"{"model": "qwen2.5-7b", "framework": "deepspeed", "method": "sft-full", "parallel": {"zero_stage": 3}}"#,
    ),
    (
        "llamafactory.layers_ratio_upstream",
        r#"{"model": "qwen2.5-7b", "recompute": {"layers_ratio": 0.5}}"#,
        r#"{"model": "qwen2.5-7b", "hardware": "ascend-910b2", "recompute": {"layers_ratio": 0.5}}"#,
    ),
    (
        "rl.mini_batch",
        r#"{"model": "qwen2.5-7b", "framework": "verl", "method": "grpo", "batch": {"global_batch": 64}, "rl": {"mini_batch": 24}}"#,
        r#"{"model": "qwen2.5-7b", "framework": "verl", "method": "grpo", "batch": {"global_batch": 64}, "rl": {"mini_batch": 32}}"#,
    ),
    // V: ppo_mini_batch_size · n over world ÷ SP: 8 devices, n 5 → the mini-batch must be a multiple of 8.
    (
        "verl.mini_batch_split",
        r#"{"model": "qwen2.5-7b", "framework": "verl", "method": "grpo", "batch": {"global_batch": 64}, "rl": {"mini_batch": 4}}"#,
        r#"{"model": "qwen2.5-7b", "framework": "verl", "method": "grpo", "batch": {"global_batch": 64}, "rl": {"mini_batch": 8}}"#,
    ),
    // V: each device's share of a mini-batch in micro-batches: 64 prompts × 5 ÷ 8 devices = 40, not a
    // multiple of 16 (broken) but of 8 (kept).
    (
        "verl.micro_batch",
        r#"{"model": "qwen2.5-7b", "framework": "verl", "method": "grpo", "batch": {"global_batch": 64, "micro_batch": 16}}"#,
        r#"{"model": "qwen2.5-7b", "framework": "verl", "method": "grpo", "batch": {"global_batch": 64, "micro_batch": 8}}"#,
    ),
    (
        "rl.max_model_len",
        r#"{"model": "qwen2.5-7b", "framework": "verl", "method": "grpo", "rl": {"max_model_len": 1024}}"#,
        r#"{"model": "qwen2.5-7b", "framework": "verl", "method": "grpo", "rl": {"max_model_len": 2048}}"#,
    ),
    (
        "rl.max_num_batched_tokens",
        r#"{"model": "qwen2.5-7b", "framework": "verl", "method": "grpo", "rl": {"max_num_batched_tokens": 1024}}"#,
        r#"{"model": "qwen2.5-7b", "framework": "verl", "method": "grpo", "rl": {"max_num_batched_tokens": 1536}}"#,
    ),
    (
        "rl.token_budget",
        r#"{"model": "qwen2.5-7b", "framework": "verl", "method": "grpo", "rl": {"dynamic_batch": true, "max_tokens_per_device": 1024}}"#,
        r#"{"model": "qwen2.5-7b", "framework": "verl", "method": "grpo", "rl": {"dynamic_batch": true, "max_tokens_per_device": 1536}}"#,
    ),
    // MindSpeed-RL's budget is the packed row its CP group splits: at CP 2 it must still hold a
    // whole 1,536-token sequence, where VeRL's 768 a device would do.
    (
        "rl.token_budget",
        r#"{"model": "qwen2.5-7b", "hardware": "ascend-910b2", "framework": "mindspeed-rl", "method": "grpo", "parallel": {"cp": 2}, "rl": {"dynamic_batch": true, "max_tokens_per_device": 1024}}"#,
        r#"{"model": "qwen2.5-7b", "hardware": "ascend-910b2", "framework": "mindspeed-rl", "method": "grpo", "parallel": {"cp": 2}, "rl": {"dynamic_batch": true, "max_tokens_per_device": 1536}}"#,
    ),
    (
        "rl.token_budget",
        r#"{"model": "qwen2.5-7b", "framework": "verl", "method": "grpo", "parallel": {"cp": 2}, "rl": {"dynamic_batch": true, "max_tokens_per_device": 512}}"#,
        r#"{"model": "qwen2.5-7b", "framework": "verl", "method": "grpo", "parallel": {"cp": 2}, "rl": {"dynamic_batch": true, "max_tokens_per_device": 768}}"#,
    ),
    // Memory
    (
        "memory.does_not_fit",
        r#"{"model": "llama-3.1-70b", "method": "sft-full"}"#,
        r#"{"model": "llama-3.1-70b", "method": "lora", "parallel": {"zero_stage": 3}}"#,
    ),
    // Megatron's pipeline layout string and MTP layers (pipeline_parallel_layer_layout.py)
    (
        "parallel.layout_framework",
        r#"{"model": "llama-2-7b", "framework": "deepspeed", "parallel": {"pipeline_layout": "Et*32L"}}"#,
        r#"{"model": "llama-2-7b", "framework": "deepspeed"}"#,
    ),
    (
        "parallel.layout_syntax",
        r#"{"model": "llama-2-7b", "framework": "megatron", "method": "pretrain", "cluster": {"nodes": 1}, "parallel": {"pp": 2, "pipeline_layout": "Et*16|(t*16L"}}"#,
        r#"{"model": "llama-2-7b", "framework": "megatron", "method": "pretrain", "cluster": {"nodes": 1}, "parallel": {"pp": 2, "pipeline_layout": "Et*16|t*16L"}}"#,
    ),
    (
        "parallel.layout_stages",
        r#"{"model": "llama-2-7b", "framework": "megatron", "method": "pretrain", "cluster": {"nodes": 1}, "parallel": {"pp": 2, "pipeline_layout": "Et*32L"}}"#,
        r#"{"model": "llama-2-7b", "framework": "megatron", "method": "pretrain", "cluster": {"nodes": 1}, "parallel": {"pp": 1, "pipeline_layout": "Et*32L"}}"#,
    ),
    (
        "parallel.layout_vpp",
        r#"{"model": "llama-2-7b", "framework": "megatron", "method": "pretrain", "cluster": {"nodes": 1}, "parallel": {"pp": 2, "pipeline_layout": "Et*8|t*8|t*8|t*8L"}}"#,
        r#"{"model": "llama-2-7b", "framework": "megatron", "method": "pretrain", "cluster": {"nodes": 1}, "parallel": {"pp": 2, "vpp": 2, "pipeline_layout": "Et*8|t*8|t*8|t*8L"}}"#,
    ),
    (
        "parallel.layout_conflict",
        r#"{"model": "llama-2-7b", "framework": "megatron", "method": "pretrain", "cluster": {"nodes": 1}, "parallel": {"pp": 2, "account_embedding_loss": true, "pipeline_layout": "Et*16|t*16L"}}"#,
        r#"{"model": "llama-2-7b", "framework": "megatron", "method": "pretrain", "cluster": {"nodes": 1}, "parallel": {"pp": 2, "pipeline_layout": "Et*16|t*16L"}}"#,
    ),
    (
        "parallel.layout_ends",
        r#"{"model": "llama-2-7b", "framework": "megatron", "method": "pretrain", "cluster": {"nodes": 1}, "parallel": {"pp": 2, "pipeline_layout": "t*16|Et*16L"}}"#,
        r#"{"model": "llama-2-7b", "framework": "megatron", "method": "pretrain", "cluster": {"nodes": 1}, "parallel": {"pp": 2, "pipeline_layout": "Et*16|t*16L"}}"#,
    ),
    (
        "parallel.layout_layers",
        r#"{"model": "llama-2-7b", "framework": "megatron", "method": "pretrain", "cluster": {"nodes": 1}, "parallel": {"pp": 2, "pipeline_layout": "Et*16|t*15L"}}"#,
        r#"{"model": "llama-2-7b", "framework": "megatron", "method": "pretrain", "cluster": {"nodes": 1}, "parallel": {"pp": 2, "pipeline_layout": "Et*16|t*16L"}}"#,
    ),
    (
        "parallel.layout_mtp",
        r#"{"model": "llama-2-7b", "framework": "megatron", "method": "pretrain", "cluster": {"nodes": 1}, "mtp_layers": 1, "parallel": {"pp": 2, "pipeline_layout": "Et*16|t*16L"}}"#,
        r#"{"model": "llama-2-7b", "framework": "megatron", "method": "pretrain", "cluster": {"nodes": 1}, "mtp_layers": 1, "parallel": {"pp": 2, "pipeline_layout": "Et*16|t*16mL"}}"#,
    ),
    // gpt-oss's learned sinks: Transformer Engine's fused attention or unfused, never FlashAttention;
    // under CP the fused attention over all-to-all alone; no flag on MindSpeed.
    (
        "parallel.sinks_flash",
        r#"{"model": "gpt-oss-20b", "framework": "megatron", "method": "sft-full", "attention": "flash", "parallel": {"ep": 8}}"#,
        r#"{"model": "gpt-oss-20b", "framework": "megatron", "method": "sft-full", "attention": "sdpa", "parallel": {"ep": 8}}"#,
    ),
    (
        "parallel.sinks_cp_ring",
        r#"{"model": "gpt-oss-20b", "framework": "megatron", "method": "sft-full", "attention": "sdpa", "parallel": {"ep": 4, "cp": 2}}"#,
        r#"{"model": "gpt-oss-20b", "framework": "megatron", "method": "sft-full", "attention": "sdpa", "parallel": {"ep": 4, "cp": 2, "cp_algo": "alltoall"}}"#,
    ),
    (
        "parallel.sinks_mindspeed",
        r#"{"model": "gpt-oss-20b", "hardware": "ascend-910b2", "framework": "mindspeed-llm", "method": "sft-full", "parallel": {"ep": 8}}"#,
        r#"{"model": "gpt-oss-20b", "hardware": "ascend-910b2", "framework": "megatron", "method": "sft-full", "attention": "sdpa", "parallel": {"ep": 8}}"#,
    ),
    // Mistral-7B-v0.1's 4,096-token window: Transformer Engine's context parallelism takes it over
    // all-to-all, not the ring; MindSpeed-LLM runs no CP beyond it; MindSpeed-RL cannot say it.
    // Mistral-7B-v0.3 has no window.
    (
        "parallel.window_cp_ring",
        r#"{"model": "mistral-7b-v0.1", "framework": "megatron", "method": "pretrain", "parallel": {"tp": 2, "cp": 2}, "batch": {"seq_len": 16384}}"#,
        r#"{"model": "mistral-7b-v0.1", "framework": "megatron", "method": "pretrain", "parallel": {"tp": 2, "cp": 2, "cp_algo": "alltoall"}, "batch": {"seq_len": 16384}}"#,
    ),
    (
        "parallel.window_cp_mindspeed",
        r#"{"model": "mistral-7b-v0.1", "hardware": "ascend-910b2", "framework": "mindspeed-llm", "method": "pretrain", "parallel": {"tp": 2, "cp": 2}, "batch": {"seq_len": 8192}}"#,
        r#"{"model": "mistral-7b-v0.1", "hardware": "ascend-910b2", "framework": "mindspeed-llm", "method": "pretrain", "parallel": {"tp": 2, "cp": 2}, "batch": {"seq_len": 4096}}"#,
    ),
    (
        "parallel.window_mindspeed_rl",
        r#"{"model": "mistral-7b-v0.1", "hardware": "ascend-910b2", "framework": "mindspeed-rl", "method": "grpo", "cluster": {"nodes": 2}, "batch": {"seq_len": 8192}}"#,
        r#"{"model": "mistral-7b-v0.3", "hardware": "ascend-910b2", "framework": "mindspeed-rl", "method": "grpo", "cluster": {"nodes": 2}, "batch": {"seq_len": 8192}}"#,
    ),
    // GLM's partial, interleaved rotary embedding has no key in MindSpeed-RL's model config.
    (
        "model.rotary_mindspeed_rl",
        r#"{"model": "glm-4-9b", "hardware": "ascend-910b2", "framework": "mindspeed-rl", "method": "grpo", "cluster": {"nodes": 2}}"#,
        r#"{"model": "qwen2.5-7b", "hardware": "ascend-910b2", "framework": "mindspeed-rl", "method": "grpo", "cluster": {"nodes": 2}}"#,
    ),
    // GLM-4-0414's norms after attention and after the MLP: no Megatron-family flag builds them;
    // GLM-4-9B (`glm`) has none.
    (
        "model.post_norms_megatron",
        r#"{"model": {"hf_config": {"model_type": "glm4", "vocab_size": 151552, "hidden_size": 4096, "intermediate_size": 13696, "num_hidden_layers": 40, "num_attention_heads": 32, "num_key_value_heads": 2, "head_dim": 128, "attention_bias": true}, "name": "GLM-4-9B-0414"}, "framework": "megatron", "method": "pretrain"}"#,
        r#"{"model": "glm-4-9b", "framework": "megatron", "method": "pretrain"}"#,
    ),
    // Gemma 2's layers: Megatron-LM's script here builds Llama's; MindSpeed-LLM's Gemma 2 spec
    // builds them.
    (
        "model.gemma_megatron",
        r#"{"model": {"hf_config": {"model_type": "gemma2", "hidden_size": 3584, "intermediate_size": 14336, "num_hidden_layers": 42, "num_attention_heads": 16, "num_key_value_heads": 8}, "name": "Gemma-2-9B"}, "framework": "megatron", "hardware": "ascend-910b2", "method": "sft-full"}"#,
        r#"{"model": {"hf_config": {"model_type": "gemma2", "hidden_size": 3584, "intermediate_size": 14336, "num_hidden_layers": 42, "num_attention_heads": 16, "num_key_value_heads": 8}, "name": "Gemma-2-9B"}, "framework": "mindspeed-llm", "hardware": "ascend-910b2", "method": "sft-full"}"#,
    ),
    // Qwen3-Next's Gated DeltaNet layers: 16 key and 32 value heads.
    (
        "parallel.linear_attention_heads",
        r#"{"model": "qwen3-next-80b-a3b", "framework": "megatron", "method": "pretrain", "cluster": {"nodes": 4}, "parallel": {"tp": 8, "cp": 4, "ep": 8}}"#,
        r#"{"model": "qwen3-next-80b-a3b", "framework": "megatron", "method": "pretrain", "cluster": {"nodes": 4}, "parallel": {"tp": 4, "cp": 4, "ep": 8}}"#,
    ),
    (
        "parallel.linear_attention_mindspeed",
        r#"{"model": "qwen3-next-80b-a3b", "hardware": "ascend-910b2", "framework": "mindspeed-llm", "method": "pretrain", "cluster": {"nodes": 8}, "parallel": {"tp": 2, "pp": 4, "ep": 8}}"#,
        r#"{"model": "qwen3-next-80b-a3b", "hardware": "ascend-910b2", "framework": "mindspeed-llm", "method": "pretrain", "cluster": {"nodes": 8}, "parallel": {"pp": 8, "ep": 8}}"#,
    ),
    (
        "model.linear_attention_framework",
        r#"{"model": "qwen3-next-80b-a3b", "hardware": "ascend-910b2", "framework": "mindspeed-rl", "method": "grpo", "cluster": {"nodes": 8}}"#,
        r#"{"model": "qwen3-next-80b-a3b", "hardware": "ascend-910b2", "framework": "verl", "method": "grpo", "cluster": {"nodes": 8}}"#,
    ),
    // Qwen2-MoE's gate on its shared expert has no key in MindSpeed-RL's model config.
    (
        "model.shared_gate_mindspeed_rl",
        r#"{"model": "qwen1.5-moe-a2.7b", "hardware": "ascend-910b2", "framework": "mindspeed-rl", "method": "grpo", "cluster": {"nodes": 2}}"#,
        r#"{"model": "qwen1.5-moe-a2.7b", "hardware": "ascend-910b2", "framework": "mindspeed-llm", "method": "pretrain", "cluster": {"nodes": 2}}"#,
    ),
    // MindSpeed's LoRA on experts: the sequence all-to-all alone, and no moe_tp_extend_ep, which
    // MindSpeed-RL's resharding needs with EP.
    (
        "mindspeed.lora_moe_dispatcher",
        r#"{"model": "qwen3-30b-a3b", "hardware": "ascend-910b3", "framework": "mindspeed-llm", "method": "lora", "cluster": {"nodes": 2}, "parallel": {"ep": 8}}"#,
        r#"{"model": "qwen3-30b-a3b", "hardware": "ascend-910b3", "framework": "mindspeed-llm", "method": "sft-full", "cluster": {"nodes": 2}, "parallel": {"ep": 8}}"#,
    ),
    (
        "mindspeed_rl.lora_tp_extend_ep",
        r#"{"model": "qwen3-30b-a3b", "hardware": "ascend-910b3", "framework": "mindspeed-rl", "method": "grpo", "cluster": {"nodes": 2}, "parallel": {"ep": 8}, "rl": {"lora": true}}"#,
        r#"{"model": "qwen3-30b-a3b", "hardware": "ascend-910b3", "framework": "mindspeed-rl", "method": "grpo", "cluster": {"nodes": 2}, "rl": {"lora": true}}"#,
    ),
    // DeepSpeed ZeRO++: read by the stage-3 engine alone; hpZ's groups must divide the world.
    (
        "zero.zeropp_stage",
        r#"{"model": "llama-3-8b", "framework": "deepspeed", "method": "sft-full", "cluster": {"nodes": 2}, "parallel": {"zero_stage": 2, "zero_hpz_partition_size": 8}}"#,
        r#"{"model": "llama-3-8b", "framework": "deepspeed", "method": "sft-full", "cluster": {"nodes": 2}, "parallel": {"zero_stage": 3, "zero_hpz_partition_size": 8}}"#,
    ),
    (
        "zero.hpz_world",
        r#"{"model": "llama-3-8b", "framework": "llamafactory", "method": "sft-full", "cluster": {"nodes": 2}, "parallel": {"zero_stage": 3, "zero_hpz_partition_size": 6}}"#,
        r#"{"model": "llama-3-8b", "framework": "llamafactory", "method": "sft-full", "cluster": {"nodes": 2}, "parallel": {"zero_stage": 3, "zero_hpz_partition_size": 16}}"#,
    ),
    // Kimi K2's YaRN betas (1 and 1) have no Megatron-LM flag under MLA; DeepSeek-V3's are the defaults.
    (
        "model.mla_yarn_betas",
        r#"{"model": "kimi-k2", "framework": "megatron", "method": "pretrain", "cluster": {"nodes": 64}}"#,
        r#"{"model": "deepseek-v3", "framework": "megatron", "method": "pretrain", "cluster": {"nodes": 64}}"#,
    ),
    (
        "hf.gpt_oss_sdpa",
        r#"{"model": "gpt-oss-20b", "framework": "deepspeed", "method": "sft-full", "attention": "sdpa"}"#,
        r#"{"model": "gpt-oss-20b", "framework": "deepspeed", "method": "sft-full", "attention": "flash"}"#,
    ),
    (
        "llamafactory.gpt_oss_kernel",
        r#"{"model": "gpt-oss-20b"}"#,
        r#"{"model": "gpt-oss-20b", "framework": "deepspeed", "method": "sft-full"}"#,
    ),
    (
        "mtp.framework",
        r#"{"model": "llama-2-7b", "framework": "deepspeed", "mtp_layers": 1}"#,
        r#"{"model": "llama-2-7b", "framework": "megatron", "method": "pretrain", "mtp_layers": 1}"#,
    ),
];

#[test]
fn every_rule_fires_when_broken_and_stays_silent_when_kept() {
    for (code, broken, kept) in CASES {
        assert!(codes(broken).contains(code), "{code} did not fire on {broken}: {:?}", codes(broken));
        assert!(!codes(kept).contains(code), "{code} fired on {kept}");
    }
}

#[test]
fn fixes_resolve_their_findings() {
    for (code, broken, _) in CASES {
        let plan = Plan::from_json(broken).unwrap();
        let report = evaluate(&plan);
        let finding = report.findings.iter().find(|f| f.code == *code).unwrap();
        let Some(fix) = &finding.fix else { continue };
        let fixed = rules::apply(&plan, fix)
            .unwrap_or_else(|e| panic!("{code}: the fix {fix:?} gives an invalid plan: {e}"));
        let after: Vec<_> = evaluate(&fixed).findings.iter().map(|f| f.code.as_str()).collect();
        // A fix may leave a neighbouring rule to fix next, but never the same one (memory excepted:
        // one switch may not be enough).
        if *code != "memory.does_not_fit" {
            assert!(!after.contains(code), "{code}: fix {fix:?} left it: {after:?}");
        }
    }
}

#[test]
fn the_default_plan_breaks_no_rule() {
    let report = evaluate(&Plan::first_visit());
    assert!(report.findings.is_empty(), "{:?}", report.findings);
}

#[test]
fn errors_come_first_and_messages_name_the_values() {
    let report = evaluate(
        &Plan::from_json(r#"{"model": "qwen2.5-0.5b", "framework": "megatron", "method": "pretrain", "parallel": {"tp": 4, "sequence_parallel": true}, "hardware": "v100-sxm-32g"}"#)
            .unwrap(),
    );
    let severities: Vec<_> = report.findings.iter().map(|f| f.severity as u8).collect();
    assert!(severities.windows(2).all(|w| w[0] <= w[1]), "{:?}", report.findings);
    let heads = report.findings.iter().find(|f| f.code == "parallel.heads_tp").unwrap();
    let message = heads.message();
    assert!(message.contains("14") && message.contains('4'), "{message}");
    assert_eq!(heads.args["heads"], "14");
}

#[test]
fn nearest_values() {
    assert_eq!(rules::nearest_divisor(14, 4), 2);
    assert_eq!(rules::nearest_divisor(28, 8), 7);
    assert_eq!(rules::nearest_divisor(32, 8), 8);
    assert_eq!(rules::nearest_multiple(60, 8), 64);
    assert_eq!(rules::nearest_multiple(3, 8), 8);
    assert_eq!(rules::nearest_multiple(100, 8), 104);
}

/// A plan grid that breaks many rules at once: frameworks × methods × layouts × batches on
/// several models and devices.
fn grid() -> Vec<String> {
    let mut plans = Vec::new();
    for (model, hw, nodes) in [
        ("qwen2.5-0.5b", "h100-sxm-80g", 1),
        ("llama-3-8b", "a100-sxm-80g", 2),
        ("qwen2.5-7b", "ascend-910b2", 1),
        ("mixtral-8x7b", "h100-sxm-80g", 4),
        ("llama-3.1-70b", "rtx-4090-24g", 2),
    ] {
        for framework in ["megatron", "deepspeed", "llamafactory", "mindspeed-llm", "verl", "mindspeed-rl"] {
            for method in ["pretrain", "lora", "dpo", "grpo"] {
                for (tp, pp, vpp, cp, cp_algo) in [
                    (1, 1, 1, 1, "ring"),
                    (3, 1, 1, 1, "ring"),
                    (2, 3, 1, 1, "ring"),
                    (2, 4, 3, 1, "ring"),
                    (8, 16, 4, 2, "ring"),
                    (2, 1, 1, 4, "alltoall"),
                ] {
                    for gbs in [7, 64] {
                        plans.push(format!(
                            r#"{{"model": "{model}", "hardware": "{hw}", "cluster": {{"nodes": {nodes}}},
                                "framework": "{framework}", "method": "{method}",
                                "parallel": {{"tp": {tp}, "pp": {pp}, "vpp": {vpp}, "cp": {cp}, "cp_algo": "{cp_algo}"}},
                                "batch": {{"global_batch": {gbs}}}}}"#
                        ));
                    }
                }
            }
        }
    }
    plans
}

/// Every fix the report offers, on every plan of the grid, resolves its finding and brings no
/// error the plan did not have; a finding with no such fix says so (`make_valid`).
#[test]
fn fixes_never_introduce_a_new_error() {
    let errors = |p: &Plan| -> Vec<&'static str> {
        evaluate(p)
            .findings
            .iter()
            .filter(|f| f.severity == trainplan_core::report::Severity::Error)
            .map(|f| f.code.as_str())
            .collect()
    };
    let (mut fixes, mut make_valid) = (0, 0);
    for text in grid() {
        let plan = Plan::from_json(&text).unwrap_or_else(|e| panic!("{text}: {e}"));
        let report = evaluate(&plan);
        let before = errors(&plan);
        for f in &report.findings {
            // The English is the code's one template, every `{name}` filled from the arguments.
            assert!(!f.message().contains('{'), "{}: {}", f.code, f.message());
            if f.make_valid {
                assert!(f.fix.is_none());
                make_valid += 1;
            }
            let Some(fix) = &f.fix else { continue };
            fixes += 1;
            let fixed = rules::apply(&plan, fix).unwrap_or_else(|e| panic!("{}: {fix:?}: {e}", f.code));
            let after = errors(&fixed);
            let new: Vec<_> = after.iter().filter(|c| !before.contains(c)).collect();
            assert!(new.is_empty(), "{}: fix {fix:?} brings {new:?} on {text}", f.code);
            let left = evaluate(&fixed)
                .findings
                .iter()
                .any(|g| g.code == f.code && g.args.get("field") == f.args.get("field"));
            assert!(!left, "{}: fix {fix:?} leaves it on {text}", f.code);
        }
    }
    println!("{fixes} fixes checked, {make_valid} findings left to make_valid");
    assert!(1000 < fixes, "{fixes}");
}

/// Llama-3.1-405B on 1,024 H100 at TP 8 × PP 16 × VPP 4: PP 14 would split the 126 layers but
/// not the devices, and PP 16 the devices but not the layers. Clicking fixes never goes in a
/// circle: each click removes an error, and when no single change can, the finding says
/// `make_valid` and the searched plan keeps every rule.
#[test]
fn the_405b_fixes_do_not_loop() {
    let mut plan = Plan::from_json(
        r#"{"model": "llama-3.1-405b", "framework": "megatron", "method": "pretrain", "cluster": {"nodes": 128},
            "parallel": {"tp": 8, "pp": 16, "vpp": 4, "sequence_parallel": true, "distributed_optimizer": true},
            "batch": {"global_batch": 1024, "seq_len": 8192}}"#,
    )
    .unwrap();
    let mut seen = vec![plan.to_file()];
    for _ in 0..10 {
        let report = evaluate(&plan);
        let Some(f) = report.findings.iter().find(|f| f.severity == trainplan_core::report::Severity::Error)
        else {
            return;
        };
        match &f.fix {
            Some(fix) => {
                plan = rules::apply(&plan, fix).unwrap();
                assert!(!seen.contains(&plan.to_file()), "{} loops back with {fix:?}", f.code);
                seen.push(plan.to_file());
            }
            None => {
                assert!(f.make_valid, "{} has neither a fix nor make_valid", f.code);
                let changes =
                    trainplan_core::fixes::make_valid(&plan).expect("the search finds a valid plan");
                let valid = rules::apply_all(&plan, &changes).unwrap();
                let r = evaluate(&valid);
                assert!(r.memory.fits);
                assert!(
                    r.findings.iter().all(|f| f.severity != trainplan_core::report::Severity::Error),
                    "{:?}",
                    r.findings
                );
                return;
            }
        }
    }
    panic!("ten clicks and still broken");
}

/// `rules::apply` sets the fields fixes use most without the plan file's round trip: for each of
/// them the plan is the one the round trip gives, and values out of range are refused the same way.
#[test]
fn direct_and_round_trip_fixes_agree() {
    use trainplan_core::plan::{Fsdp, PipelineSchedule, RecomputeGranularity};
    use trainplan_core::report::Fix;
    let base =
        Plan::from_json(r#"{"model": "llama-3-8b", "framework": "megatron", "method": "pretrain"}"#).unwrap();
    // `field` set to `value` both ways: the plans must be the same, or both refused.
    let agree = |field: &str, value: serde_json::Value| {
        let fix = Fix { field: Field::from_path(field).unwrap(), value: value.clone() };
        let direct = rules::apply(&base, &fix);
        let mut file = serde_json::to_value(base.to_file()).unwrap();
        let (section, key) = field.split_once('.').unwrap();
        file[section][key] = value.clone();
        let round = serde_json::from_value(file)
            .map_err(|e| e.to_string())
            .and_then(|f| Plan::from_file(&f).map_err(|e| e.to_string()));
        assert_eq!(direct.as_ref().ok(), round.as_ref().ok(), "{field} = {value}");
        assert_eq!(direct.is_err(), round.is_err(), "{field} = {value}");
    };
    for field in [
        "parallel.tp",
        "parallel.pp",
        "parallel.vpp",
        "parallel.cp",
        "parallel.ep",
        "parallel.etp",
        "parallel.zero_stage",
        "batch.micro_batch",
        "batch.global_batch",
    ] {
        for v in [0u64, 1, 2, 3, 4, 7, 65536, 65537, 1 << 24, (1 << 24) + 1] {
            agree(field, v.into());
        }
    }
    for field in [
        "parallel.sequence_parallel",
        "parallel.distributed_optimizer",
        "parallel.offload_optimizer",
        "parallel.offload_params",
        "parallel.overlap_grad_reduce",
        "parallel.overlap_param_gather",
        "parallel.uneven_layers",
        "parallel.account_embedding_loss",
    ] {
        for v in [true, false] {
            agree(field, v.into());
            assert!(
                rules::apply(&base, &Fix { field: Field::from_path(field).unwrap(), value: v.into() })
                    .is_ok()
            );
        }
    }
    // Choices by name: every name each takes, and names it does not (refused both ways alike).
    let wrong = ["", "Full", "none ", "gpipe2"];
    for (field, names) in [
        ("parallel.fsdp", Fsdp::ALL.iter().map(|v| v.wire()).collect::<Vec<_>>()),
        ("parallel.schedule", PipelineSchedule::ALL.iter().map(|v| v.wire()).collect()),
        ("recompute.granularity", RecomputeGranularity::ALL.iter().map(|v| v.wire()).collect()),
    ] {
        for name in names.into_iter().chain(wrong) {
            agree(field, name.into());
        }
    }
}

/// Megatron's `TransformerConfig.__post_init__` checks on `--recompute-modules` and
/// `--cpu-offloading-num-layers` (core_v0.19.0), each fixed by its suggestion.
#[test]
fn recompute_modules_and_cpu_offload_follow_megatron() {
    let codes = |extra: &str| {
        let text = format!(
            r#"{{"model": "llama-3.1-8b", "framework": "megatron", "method": "pretrain", "cluster": {{"nodes": 1}},
                "batch": {{"global_batch": 8}}{extra}}}"#
        );
        let report = trainplan_core::evaluate(&Plan::from_json(&text).unwrap());
        report
            .findings
            .iter()
            .map(|f| f.code.as_str())
            .filter(|c| c.starts_with("recompute."))
            .collect::<Vec<_>>()
    };
    assert!(
        codes(r#", "recompute": {"granularity": "selective", "modules": ["core_attn", "mlp", "layernorm"]}"#)
            .is_empty()
    );
    assert_eq!(
        codes(r#", "recompute": {"granularity": "selective", "modules": ["mla_up_proj"]}"#),
        ["recompute.modules_model"]
    );
    assert_eq!(
        codes(r#", "recompute": {"granularity": "selective", "modules": ["moe_act"]}"#),
        ["recompute.modules_model"]
    );
    assert_eq!(
        codes(r#", "precision": "fp8", "recompute": {"granularity": "selective", "modules": ["layernorm"]}"#),
        ["recompute.modules_fp8"]
    );
    assert!(codes(r#", "recompute": {"granularity": "none", "cpu_offload_layers": 4}"#).is_empty());
    assert_eq!(
        codes(r#", "recompute": {"granularity": "none", "cpu_offload_layers": 32}"#),
        ["recompute.cpu_offload_layers"]
    );
    assert_eq!(
        codes(r#", "parallel": {"pp": 2}, "recompute": {"granularity": "none", "cpu_offload_layers": 4}"#),
        ["recompute.cpu_offload_pp"]
    );
    assert_eq!(
        codes(r#", "recompute": {"granularity": "full", "cpu_offload_layers": 4}"#),
        ["recompute.cpu_offload_recompute"]
    );
    let ms = r#"{"model": "llama-3.1-8b", "framework": "mindspeed-llm", "hardware": "ascend-910b2", "method": "pretrain",
        "recompute": {"granularity": "none", "cpu_offload_layers": 4}}"#;
    let report = trainplan_core::evaluate(&Plan::from_json(ms).unwrap());
    assert!(report.findings.iter().any(|f| f.code.as_str() == "recompute.cpu_offload_framework"));
}

#[test]
fn rl_batches_count_responses_not_prompts() {
    // MindSpeed-RL's own checks (`validate_rl_args`, mindspeed_rl/config_cls/validate_config.py):
    // 2 prompts % DP 2 = 0, and 2 ÷ 2 × 8 responses = 8 per rank, a multiple of micro-batch 4. So the
    // update runs 8 ÷ 4 = 2 micro-batches per rank, though 2 prompts are fewer than micro-batch × DP.
    let text = r#"{"model": "qwen2.5-7b", "framework": "mindspeed-rl", "hardware": "ascend-910b2", "method": "grpo",
        "parallel": {"tp": 4}, "batch": {"global_batch": 2, "micro_batch": 4}, "rl": {"rollout_tp": 4, "n_samples_per_prompt": 8}}"#;
    let report = evaluate(&Plan::from_json(text).expect("a valid plan"));
    let codes: Vec<&str> = report.findings.iter().map(|f| f.code.as_str()).collect();
    assert!(!codes.iter().any(|c| c.starts_with("batch.") || c.starts_with("mindspeed_rl.")), "{codes:?}");
    assert_eq!((report.memory.dp, report.memory.n_microbatches), (2, 2));
    assert_eq!(report.schedule.n_microbatches, 2);
    // VeRL: 4 prompts × 8 responses over 8 devices (FSDP, DP 8) are 4 per device: 4 micro-batches of 1.
    let text = r#"{"model": "qwen2.5-7b", "framework": "verl", "method": "grpo", "batch": {"global_batch": 4, "micro_batch": 1},
        "rl": {"n_samples_per_prompt": 8, "mini_batch": 4}}"#;
    let report = evaluate(&Plan::from_json(text).expect("a valid plan"));
    assert_eq!((report.memory.dp, report.memory.n_microbatches), (8, 4));
}

/// MindSpeed's own `--moe-alltoall-overlap-comm` asks for EP > 1, an all-to-all dispatcher and grouped
/// GEMM alone (`MoEAlltoAllOverlapFeature.validate_args`, mindspeed/features_manager/moe/moe_alltoall_overlap.py),
/// and MindSpeed-LLM's own Qwen3-235B script (`examples/mcore/qwen3_moe/pretrain_qwen3_235b_a22b_4k_A3_ptd.sh`)
/// runs it with full recomputation: Megatron-LM's conditions on its own overlap do not apply there.
#[test]
fn mindspeeds_all_to_all_overlap_keeps_its_own_conditions() {
    let plan = |framework: &str, hardware: &str, moe: &str| {
        format!(
            r#"{{"model": "qwen3-30b-a3b", "framework": "{framework}", "method": "pretrain", "hardware": "{hardware}",
                "cluster": {{"nodes": 2}}, "parallel": {{"pp": 2, "ep": 8, "distributed_optimizer": true}},
                "recompute": {{"granularity": "full"}}, "moe": {{"overlap_ep_comm": true{moe}}}}}"#
        )
    };
    assert!(codes(&plan("megatron", "h100-sxm-80g", "")).contains(&"moe.overlap"));
    assert!(!codes(&plan("mindspeed-llm", "ascend-910b2", "")).contains(&"moe.overlap"));
    assert!(
        codes(&plan("mindspeed-llm", "ascend-910b2", r#", "grouped_gemm": false"#)).contains(&"moe.overlap")
    );
}

#[test]
fn a_packed_checkpoint_meets_llamafactorys_own_checks() {
    // Qwen2.5-7B's config stored as GPTQ 4-bit (Qwen/Qwen2.5-7B-Instruct-GPTQ-Int4). Each case:
    // the code, the plan's other settings that break it, the ones that keep it.
    let plan = |rest: &str| {
        let config = trainplan_core::catalog::CONFIGS.iter().find(|c| c.id == "qwen2.5-7b").unwrap().config;
        let mut value: serde_json::Value = serde_json::from_str(config).unwrap();
        value["quantization_config"] =
            serde_json::json!({"quant_method": "gptq", "bits": 4, "group_size": 128});
        Plan::from_json(&format!(r#"{{"model": {{"hf_config": {value}}}, {rest}}}"#)).unwrap()
    };
    let lf = r#""framework": "llamafactory", "#;
    let cases = [
        // model/adapter.py `init_adapter`: LoRA or OFT only.
        ("llamafactory.ptq_lora_only", r#""method": "sft-full""#, r#""method": "lora""#),
        ("llamafactory.ptq_lora_only", r#""method": "dpo""#, r#""method": "dpo-lora""#),
        // quantization.py `configure_quantization`: no ZeRO-3, quantization_bit ignored.
        (
            "llamafactory.ptq_zero3",
            r#""method": "lora", "parallel": {"zero_stage": 3}"#,
            r#""method": "lora""#,
        ),
        // The load refuses ZeRO-3 before the adapters refuse full training.
        (
            "llamafactory.ptq_zero3",
            r#""method": "sft-full", "parallel": {"zero_stage": 3}"#,
            r#""method": "sft-full""#,
        ),
        ("llamafactory.ptq_quantization_bit", r#""method": "qlora""#, r#""method": "lora""#),
        ("llamafactory.ptq_base", r#""method": "lora""#, r#""method": "sft-full""#),
        // model/adapter.py `_setup_lora_tuning`: "DoRA is not compatible with PTQ-quantized models."
        ("llamafactory.ptq_dora", r#""method": "lora", "lora": {"dora": true}"#, r#""method": "lora""#),
    ];
    let others = [(
        "model.ptq_16bit",
        r#""framework": "megatron", "method": "lora""#,
        r#""framework": "llamafactory", "method": "lora""#,
    )];
    let cases = cases.map(|(code, broken, kept)| (code, format!("{lf}{broken}"), format!("{lf}{kept}")));
    let others = others.map(|(code, broken, kept)| (code, broken.to_owned(), kept.to_owned()));
    for (code, broken, kept) in cases.into_iter().chain(others) {
        let (broken, kept) = (plan(&broken), plan(&kept));
        let codes = |plan: &Plan| evaluate(plan).findings.iter().map(|f| f.code.as_str()).collect::<Vec<_>>();
        assert!(codes(&broken).contains(&code), "{code} did not fire: {:?}", codes(&broken));
        assert!(!codes(&kept).contains(&code), "{code} fired on the plan that keeps it: {:?}", codes(&kept));
        // Each fix resolves its finding.
        let report = evaluate(&broken);
        if let Some(fix) = &report.findings.iter().find(|f| f.code == code).unwrap().fix {
            let fixed = rules::apply(&broken, fix).unwrap();
            assert!(!codes(&fixed).contains(&code), "{code}: {fix:?} left it");
        }
    }
    // bitsandbytes' stored weights pass that check (PEFT dequantizes them for the norms).
    let config = trainplan_core::catalog::CONFIGS.iter().find(|c| c.id == "qwen2.5-7b").unwrap().config;
    let mut value: serde_json::Value = serde_json::from_str(config).unwrap();
    value["quantization_config"] = serde_json::json!({"quant_method": "bitsandbytes", "load_in_4bit": true});
    let text =
        format!(r#"{{"model": {{"hf_config": {value}}}, {lf}"method": "lora", "lora": {{"dora": true}}}}"#);
    let report = evaluate(&Plan::from_json(&text).unwrap());
    assert!(report.findings.iter().all(|f| f.code != "llamafactory.ptq_dora"), "{:?}", report.findings);
}

/// mbridge looks up the config's own `model_type`: an imported Qwen2.5-VL (`qwen2_5_vl`, which it
/// bridges) keeps the rule, the same language model imported as Mistral's type does not, and the
/// rule is VeRL's Megatron engine's alone.
#[test]
fn verl_megatron_needs_a_model_type_mbridge_bridges() {
    let plan = |config: &str, framework: &str| {
        format!(r#"{{"model": {{"hf_config": {config}}}, "framework": "{framework}", "method": "grpo"}}"#)
    };
    let vl = crate::hf::QWEN2_5_VL_7B;
    assert!(!codes(&plan(vl, "verl-megatron")).contains(&"verl.mbridge_model"));
    let mistral = vl.replace(r#""model_type": "qwen2_5_vl""#, r#""model_type": "mistral""#);
    assert!(codes(&plan(&mistral, "verl-megatron")).contains(&"verl.mbridge_model"));
    assert!(!codes(&plan(&mistral, "verl")).contains(&"verl.mbridge_model"));
}
