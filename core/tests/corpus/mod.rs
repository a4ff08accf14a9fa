//! The conformance corpus: the golden plans (`tests/golden/*/plan.json`) and a deterministic spread
//! of generated plans over every framework, method, dense and MoE model, ZeRO and offload variant,
//! and NVIDIA and Ascend device. Their emitted files are what the conformance checks feed to each
//! framework's own parser (`conformance/`) and to the recorded flag tables (`core/data/flags/`).
//!
//! Shared by the `corpus` example (which writes the files out) and the integration tests.

use std::path::Path;

/// One plan of the corpus: a stable name and the plan file's text.
#[derive(Clone, Debug)]
pub struct Entry {
    /// A directory-safe name, unique in the corpus.
    pub name: String,
    /// The plan file (JSON).
    pub plan: String,
}

/// The golden plans, in directory order.
pub fn golden() -> Vec<Entry> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden");
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .filter_map(|e| e.ok())
        .filter(|e| e.path().join("plan.json").is_file())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
        .into_iter()
        .map(|name| {
            let plan = std::fs::read_to_string(dir.join(&name).join("plan.json")).unwrap();
            Entry { name: format!("golden-{name}"), plan }
        })
        .collect()
}

/// A generated spread: for each framework, each method it runs, a dense and an MoE model where the
/// framework trains MoE, ZeRO and offload variants for the HF-path frameworks, NVIDIA and Ascend.
pub fn generated() -> Vec<Entry> {
    let mut out = Vec::new();
    let mut add = |name: &str, plan: serde_json::Value| {
        out.push(Entry { name: format!("gen-{name}"), plan: plan.to_string() });
    };
    use serde_json::json;

    // Megatron-LM: pre-training and full SFT, dense and MoE, VPP, CP, FP8, recompute variants.
    for (model, nodes, par) in [
        (
            "llama-3-8b",
            1,
            json!({"tp": 2, "pp": 2, "sequence_parallel": true, "distributed_optimizer": true}),
        ),
        (
            "qwen2.5-7b",
            1,
            json!({"tp": 4, "cp": 2, "sequence_parallel": true, "distributed_optimizer": true,
            "overlap_grad_reduce": true, "overlap_param_gather": true, "tp_comm_overlap": true}),
        ),
        (
            "llama-3.1-70b",
            8,
            json!({"tp": 8, "pp": 4, "vpp": 5, "sequence_parallel": true,
            "distributed_optimizer": true}),
        ),
        ("qwen3-30b-a3b", 2, json!({"tp": 1, "pp": 2, "ep": 8, "distributed_optimizer": true})),
        ("deepseek-v2-lite", 1, json!({"tp": 1, "pp": 1, "ep": 8, "distributed_optimizer": true})),
    ] {
        for method in ["pretrain", "sft-full"] {
            add(
                &format!("megatron-{model}-{method}"),
                json!({"model": model, "cluster": {"nodes": nodes}, "framework": "megatron", "method": method,
                       "parallel": par, "recompute": {"granularity": "selective"},
                       "batch": {"micro_batch": 1, "global_batch": 128, "seq_len": 4096}}),
            );
        }
    }
    // gpt-oss: sliding windows, learned sinks (cuDNN's fused attention: `attention: sdpa`), biased experts.
    add(
        "megatron-gpt-oss-120b",
        json!({"model": "gpt-oss-120b", "cluster": {"nodes": 2}, "framework": "megatron", "method": "sft-full",
               "attention": "sdpa", "parallel": {"tp": 1, "pp": 2, "ep": 8, "distributed_optimizer": true},
               "batch": {"micro_batch": 1, "global_batch": 64, "seq_len": 8192}}),
    );
    // Mistral-7B-v0.1's 4,096-token window on every layer, beyond it: Megatron-LM over all-to-all
    // context parallelism (the ring takes no window), MindSpeed-LLM without CP.
    add(
        "megatron-mistral-7b-v0.1-window",
        json!({"model": "mistral-7b-v0.1", "framework": "megatron", "method": "pretrain",
               "parallel": {"tp": 2, "cp": 2, "cp_algo": "alltoall", "sequence_parallel": true,
               "distributed_optimizer": true}, "batch": {"micro_batch": 1, "global_batch": 64, "seq_len": 16384}}),
    );
    add(
        "mindspeed-llm-mistral-7b-v0.1-window",
        json!({"model": "mistral-7b-v0.1", "hardware": "ascend-910b2", "framework": "mindspeed-llm",
               "method": "pretrain", "parallel": {"tp": 4, "sequence_parallel": true, "distributed_optimizer": true},
               "batch": {"micro_batch": 1, "global_batch": 64, "seq_len": 8192}}),
    );
    // GLM-4-9B's rotary embedding on half of each head, in interleaved pairs.
    for (framework, hardware) in [("megatron", "h100-sxm-80g"), ("mindspeed-llm", "ascend-910b2")] {
        add(
            &format!("{framework}-glm-4-9b"),
            json!({"model": "glm-4-9b", "hardware": hardware, "framework": framework, "method": "sft-full",
                   "parallel": {"tp": 2, "sequence_parallel": true, "distributed_optimizer": true},
                   "batch": {"micro_batch": 1, "global_batch": 64, "seq_len": 8192}}),
        );
    }
    // GLM-4.5-Air: its partial rotary embedding, q/k/v biases, a dense first layer, DeepSeek-V3's router.
    for (framework, hardware) in [("megatron", "h100-sxm-80g"), ("mindspeed-llm", "ascend-910b3")] {
        add(
            &format!("{framework}-glm-4.5-air"),
            json!({"model": "glm-4.5-air", "hardware": hardware, "cluster": {"nodes": 4}, "framework": framework,
                   "method": "sft-full", "parallel": {"tp": 2, "pp": 2, "ep": 8, "sequence_parallel": true,
                   "distributed_optimizer": true}, "batch": {"micro_batch": 1, "global_batch": 64, "seq_len": 4096}}),
        );
    }
    // Kimi K2: DeepSeek-V3's architecture with 384 experts and one expert group.
    for framework in ["megatron", "mindspeed-llm"] {
        let hardware = if framework == "megatron" { "h800-sxm-80g" } else { "ascend-910b3" };
        add(
            &format!("{framework}-kimi-k2"),
            json!({"model": "kimi-k2", "hardware": hardware, "cluster": {"nodes": 64}, "framework": framework,
                   "method": "pretrain", "parallel": {"tp": 8, "pp": 8, "ep": 8, "distributed_optimizer": true,
                   "sequence_parallel": true}, "batch": {"micro_batch": 1, "global_batch": 512, "seq_len": 4096}}),
        );
    }
    add(
        "megatron-llama-3-8b-fp8-full-recompute",
        json!({"model": "llama-3-8b", "framework": "megatron", "method": "pretrain", "precision": "fp8",
               "parallel": {"tp": 2, "sequence_parallel": true, "distributed_optimizer": true},
               "recompute": {"granularity": "full", "method": "block", "num_layers": 4},
               "batch": {"micro_batch": 1, "global_batch": 64, "seq_len": 8192}}),
    );
    // Megatron-LM's own Llama 3 8B fp8 example's layout: bf16 gradients and fp8 parameters
    // (`examples/llama/train_llama3_8b_h100_fp8.sh`: `--grad-reduce-in-bf16`, `--fp8-param-gather`).
    add(
        "megatron-llama-3.1-8b-fp8-params",
        json!({"model": "llama-3.1-8b", "framework": "megatron", "method": "pretrain", "precision": "fp8",
               "parallel": {"distributed_optimizer": true, "overlap_grad_reduce": true, "overlap_param_gather": true,
                            "grad_reduce_bf16": true, "fp8_param_gather": true},
               "recompute": {"granularity": "none"},
               "batch": {"micro_batch": 1, "global_batch": 128, "seq_len": 8192}}),
    );
    // All-to-all context parallelism (`parallel.cp_algo`): Megatron-LM's `--cp-comm-type a2a` on
    // Full recomputation with each checkpoint's input split over TP 4 (no sequence parallelism).
    for (framework, hardware) in [("megatron", "h100-sxm-80g"), ("mindspeed-llm", "ascend-910b2")] {
        add(
            &format!("{framework}-llama-3-8b-distribute-saved-activations"),
            json!({"model": "llama-3-8b", "hardware": hardware, "framework": framework, "method": "pretrain",
                   "parallel": {"tp": 4, "distributed_optimizer": true},
                   "recompute": {"granularity": "full", "method": "uniform", "num_layers": 1,
                                 "distribute_saved_activations": true},
                   "batch": {"micro_batch": 1, "global_batch": 64, "seq_len": 4096}}),
        );
    }
    // Llama-3-8B at 32K (8 key/value heads over TP 2 × CP 4), MindSpeed-LLM's `ulysses_cp_algo` on
    // Qwen2.5-7B (28 heads over CP 4, its 4 key/value heads repeated as MindSpeed does).
    add(
        "megatron-llama-3-8b-cp-alltoall",
        json!({"model": "llama-3-8b", "framework": "megatron", "method": "pretrain",
               "parallel": {"tp": 2, "cp": 4, "cp_algo": "alltoall", "sequence_parallel": true,
                            "distributed_optimizer": true},
               "batch": {"micro_batch": 1, "global_batch": 64, "seq_len": 32768}}),
    );
    add(
        "mindspeed-llm-qwen2.5-7b-cp-alltoall",
        json!({"model": "qwen2.5-7b", "hardware": "ascend-910b2", "framework": "mindspeed-llm", "method": "pretrain",
               "parallel": {"cp": 4, "cp_algo": "alltoall", "distributed_optimizer": true},
               "batch": {"micro_batch": 1, "global_batch": 64, "seq_len": 32768}}),
    );
    // Each attention kernel Megatron-LM's `--attention-backend` names, and the optimizer offloaded to
    // the host (with the distributed optimizer it needs).
    for (attention, offload) in [("sdpa", false), ("eager", true)] {
        add(
            &format!("megatron-llama-3-8b-attention-{attention}"),
            json!({"model": "llama-3-8b", "framework": "megatron", "method": "pretrain", "attention": attention,
                   "parallel": {"tp": 2, "sequence_parallel": true, "distributed_optimizer": true,
                                "offload_optimizer": offload},
                   "batch": {"micro_batch": 1, "global_batch": 64, "seq_len": 4096}}),
        );
    }
    // Fine-tuning on samples shorter than the sequence: each micro-batch padded to its longest
    // sample (`--no-pad-to-seq-lengths`), not to `--seq-length`.
    add(
        "mindspeed-llm-qwen2.5-7b-sft-mean-length",
        json!({"model": "qwen2.5-7b", "hardware": "ascend-910b2", "framework": "mindspeed-llm", "method": "sft-full",
               "parallel": {"tp": 4, "pp": 2, "distributed_optimizer": true},
               "batch": {"micro_batch": 1, "global_batch": 64, "seq_len": 4096, "mean_seq_len": 700}}),
    );
    add(
        "mindspeed-llm-qwen2.5-7b-eager-attention",
        json!({"model": "qwen2.5-7b", "hardware": "ascend-910b3", "framework": "mindspeed-llm", "method": "pretrain",
               "attention": "eager", "parallel": {"tp": 2, "distributed_optimizer": true},
               "batch": {"micro_batch": 1, "global_batch": 64, "seq_len": 4096}}),
    );
    // Megatron FSDP (every sharding strategy) and PyTorch FSDP2, Llama-3-8B at 8K without recompute.
    for fsdp in ["optim", "optim_grads", "optim_grads_params", "torch_fsdp2"] {
        add(
            &format!("megatron-llama-3-8b-fsdp-{fsdp}"),
            json!({"model": "llama-3-8b", "framework": "megatron", "method": "pretrain",
                   "parallel": {"fsdp": fsdp, "overlap_grad_reduce": true},
                   "recompute": {"granularity": "none"},
                   "batch": {"micro_batch": 1, "global_batch": 64, "seq_len": 8192}}),
        );
    }
    // Llama 3.1 405B's 126 layers over PP 16 with VPP, the embedding and the loss counted as layers.
    add(
        "megatron-llama-3.1-405b-account-embedding-loss",
        json!({"model": "llama-3.1-405b", "cluster": {"nodes": 128}, "framework": "megatron", "method": "pretrain",
               "parallel": {"tp": 8, "pp": 16, "vpp": 8, "account_embedding_loss": true, "sequence_parallel": true,
                            "distributed_optimizer": true},
               "recompute": {"granularity": "selective"},
               "batch": {"micro_batch": 1, "global_batch": 1024, "seq_len": 8192}}),
    );
    // DeepSeek-V3's layout on Megatron-LM: the embedding with one layer, 30 stages of two, the MTP
    // layer and the loss last (Megatron-LM's DeepSeek-V3 recipe, `--pipeline-model-parallel-layout`);
    // Llama 2 7B's 32 layers unevenly over PP 6 × VPP 2 (4, 4 × 6, 4 layers: chunks of 2 and 3).
    add(
        "megatron-deepseek-v3-pipeline-layout-mtp",
        json!({"model": "deepseek-v3", "cluster": {"nodes": 256}, "framework": "megatron", "method": "pretrain",
               "mtp_layers": 1, "precision": "fp8",
               "parallel": {"tp": 1, "pp": 16, "vpp": 2, "ep": 64, "pipeline_layout": "Et|(tt|)*30mL",
                            "distributed_optimizer": true},
               "recompute": {"granularity": "selective"},
               "batch": {"micro_batch": 1, "global_batch": 16384, "seq_len": 4096}}),
    );
    add(
        "megatron-uneven-vpp",
        json!({"model": "llama-2-7b", "cluster": {"nodes": 6}, "framework": "megatron", "method": "pretrain",
               "parallel": {"tp": 8, "pp": 6, "vpp": 2, "uneven_layers": true, "sequence_parallel": true,
                            "distributed_optimizer": true},
               "batch": {"micro_batch": 1, "global_batch": 48, "seq_len": 4096}}),
    );
    // Megatron `--recompute-modules` beyond the default, and activation offloading (PP 1).
    add(
        "megatron-llama-3.1-8b-recompute-modules",
        json!({"model": "llama-3.1-8b", "cluster": {"nodes": 1}, "framework": "megatron", "method": "pretrain",
               "parallel": {"tp": 2, "sequence_parallel": true, "distributed_optimizer": true},
               "recompute": {"granularity": "selective", "modules": ["core_attn", "layernorm", "mlp"]},
               "batch": {"micro_batch": 1, "global_batch": 64, "seq_len": 8192}}),
    );
    add(
        "megatron-llama-3.1-8b-cpu-offload",
        json!({"model": "llama-3.1-8b", "cluster": {"nodes": 1}, "framework": "megatron", "method": "pretrain",
               "parallel": {"tp": 2, "sequence_parallel": true, "distributed_optimizer": true},
               "recompute": {"granularity": "none", "cpu_offload_layers": 16},
               "batch": {"micro_batch": 1, "global_batch": 64, "seq_len": 8192}}),
    );
    // DeepSeek-V3's MoE kernels: the flex dispatcher, fused permutation and the EP overlap, and
    // a padded capacity factor on Mixtral through MindSpeed-LLM.
    add(
        "megatron-deepseek-v3-moe-flex-overlap",
        json!({"model": "deepseek-v3", "cluster": {"nodes": 32}, "framework": "megatron", "method": "pretrain",
               "precision": "fp8",
               "parallel": {"ep": 64, "distributed_optimizer": true},
               "recompute": {"granularity": "selective"},
               "moe": {"dispatcher": "flex", "permute_fusion": true, "overlap_ep_comm": true},
               "batch": {"micro_batch": 1, "global_batch": 256, "seq_len": 4096}}),
    );
    add(
        "mindspeed-llm-mixtral-moe-capacity",
        json!({"model": "mixtral-8x7b", "hardware": "ascend-910b2", "cluster": {"nodes": 2}, "framework": "mindspeed-llm",
               "method": "pretrain",
               "parallel": {"tp": 2, "ep": 8, "distributed_optimizer": true},
               "recompute": {"granularity": "selective"},
               "moe": {"permute_fusion": true, "overlap_ep_comm": true, "capacity_factor": 1.5, "pad_to_capacity": true},
               "batch": {"micro_batch": 1, "global_batch": 64, "seq_len": 4096}}),
    );
    // Blackwell's block-scaled recipes on GB200 NVL72.
    for precision in ["mxfp8", "nvfp4"] {
        add(
            &format!("megatron-llama-3.1-70b-gb200-{precision}"),
            json!({"model": "llama-3.1-70b", "hardware": "gb200-186g", "cluster": {"nodes": 16},
                   "framework": "megatron", "method": "pretrain", "precision": precision,
                   "parallel": {"tp": 4, "pp": 2, "sequence_parallel": true, "distributed_optimizer": true},
                   "recompute": {"granularity": "selective"},
                   "batch": {"micro_batch": 1, "global_batch": 128, "seq_len": 8192}}),
        );
    }
    add(
        "megatron-deepseek-v3-uneven",
        json!({"model": "deepseek-v3", "cluster": {"nodes": 64}, "framework": "megatron", "method": "pretrain",
               "parallel": {"tp": 1, "pp": 8, "ep": 64, "uneven_layers": true, "distributed_optimizer": true},
               "recompute": {"granularity": "full", "num_layers": 1},
               "batch": {"micro_batch": 1, "global_batch": 1024, "seq_len": 4096}}),
    );

    // DeepSpeed: every ZeRO stage, optimizer and parameter offload, fp16 and bf16.
    for (zero, opt, params, precision) in [
        (0, false, false, "bf16"),
        (1, false, false, "bf16"),
        (2, true, false, "fp16"),
        (3, false, false, "bf16"),
        (3, true, true, "bf16"),
    ] {
        add(
            &format!(
                "deepspeed-zero{zero}{}{}-{precision}",
                if opt { "-opt" } else { "" },
                if params { "-params" } else { "" }
            ),
            json!({"model": "qwen2.5-1.5b", "framework": "deepspeed", "method": "sft-full", "precision": precision,
                   "parallel": {"zero_stage": zero, "offload_optimizer": opt, "offload_params": params},
                   "recompute": {"granularity": "full"},
                   "batch": {"micro_batch": 2, "global_batch": 64, "seq_len": 2048}}),
        );
    }

    // ZeRO-Infinity: the optimizer states and the parameters swapped to NVMe (`offload_*.device`,
    // the `aio` block).
    add(
        "deepspeed-zero3-nvme-qwen2.5-7b",
        json!({"model": "qwen2.5-7b", "framework": "deepspeed", "method": "sft-full",
               "parallel": {"zero_stage": 3, "offload_optimizer": true, "offload_params": true, "offload_device": "nvme"},
               "batch": {"micro_batch": 1, "global_batch": 32, "seq_len": 2048}}),
    );
    add(
        "llamafactory-zero3-nvme-qwen2.5-14b",
        json!({"model": "qwen2.5-14b", "framework": "llamafactory", "method": "sft-full",
               "parallel": {"zero_stage": 3, "offload_optimizer": true, "offload_device": "nvme"},
               "batch": {"micro_batch": 1, "global_batch": 16, "seq_len": 2048}}),
    );

    // ZeRO++ across two nodes: hpZ over a node, quantized weights and gradients.
    for framework in ["deepspeed", "llamafactory"] {
        add(
            &format!("{framework}-zero3-zeropp-llama-3-8b"),
            json!({"model": "llama-3-8b", "framework": framework, "method": "sft-full", "cluster": {"nodes": 2},
                   "parallel": {"zero_stage": 3, "overlap_grad_reduce": true, "zero_hpz_partition_size": 8,
                   "zero_quantized_weights": true, "zero_quantized_gradients": true},
                   "batch": {"micro_batch": 1, "global_batch": 64, "seq_len": 4096}}),
        );
    }

    // LLaMA-Factory: every method it runs, ZeRO variants, NVIDIA and Ascend, dense and MoE.
    for (method, model, zero, hw) in [
        ("pretrain", "qwen2.5-1.5b", 2, "h100-sxm-80g"),
        ("sft-full", "llama-3-8b", 3, "h100-sxm-80g"),
        ("lora", "qwen2.5-7b", 0, "ascend-910b2"),
        ("qlora", "llama-3.1-8b", 0, "rtx-4090-24g"),
        ("dpo", "qwen2.5-7b", 3, "h100-sxm-80g"),
        ("lora", "qwen3-30b-a3b", 3, "h100-sxm-80g"),
        ("sft-full", "qwen2.5-14b", 3, "ascend-910b2"),
    ] {
        add(
            &format!("llamafactory-{method}-{model}-zero{zero}-{hw}"),
            json!({"model": model, "hardware": hw, "framework": "llamafactory", "method": method,
                   "parallel": {"zero_stage": zero, "offload_optimizer": zero == 3 && model == "qwen2.5-14b"},
                   "recompute": {"granularity": "full"},
                   "batch": {"micro_batch": 1, "global_batch": 32, "seq_len": 2048}}),
        );
    }
    // DoRA (`use_dora`, its `FinetuningArguments`).
    // GLM-4.5-Air's LoRA on LLaMA-Factory's glm4_moe template.
    add(
        "llamafactory-lora-glm-4.5-air",
        json!({"model": "glm-4.5-air", "framework": "llamafactory", "method": "lora", "cluster": {"nodes": 2},
               "parallel": {"zero_stage": 3}}),
    );
    // Templates of their own: gpt-oss's (a reasoning template), DeepSeek-R1's distills' (deepseekr1).
    add(
        "llamafactory-lora-gpt-oss-20b",
        json!({"model": "gpt-oss-20b", "framework": "llamafactory", "method": "lora"}),
    );
    add(
        "llamafactory-sft-full-deepseek-r1-distill-qwen-7b-zero3",
        json!({"model": "deepseek-r1-distill-qwen-7b", "framework": "llamafactory", "method": "sft-full",
               "parallel": {"zero_stage": 3}}),
    );
    add(
        "llamafactory-dora-qwen2.5-7b",
        json!({"model": "qwen2.5-7b", "framework": "llamafactory", "method": "lora",
               "lora": {"dora": true}, "batch": {"micro_batch": 1, "global_batch": 8, "seq_len": 2048}}),
    );
    // bf16 trained parameters (`pure_bf16`, its `FinetuningArguments`) and bitsandbytes' 8-bit AdamW
    // (`optim`, transformers' `TrainingArguments`), without DeepSpeed.
    add(
        "llamafactory-pure-bf16-qwen2.5-1.5b",
        json!({"model": "qwen2.5-1.5b", "framework": "llamafactory", "method": "sft-full", "pure_bf16": true,
               "optimizer": "adamw_8bit", "batch": {"micro_batch": 1, "global_batch": 8, "seq_len": 2048}}),
    );
    // Freeze-tuning (`finetuning_type: freeze`, `freeze_trainable_layers`, its
    // `FreezeArguments`), without DeepSpeed and under ZeRO-3.
    add(
        "llamafactory-freeze-qwen2.5-7b",
        json!({"model": "qwen2.5-7b", "framework": "llamafactory", "method": "freeze", "freeze_layers": 4,
               "batch": {"micro_batch": 1, "global_batch": 8, "seq_len": 2048}}),
    );
    add(
        "llamafactory-freeze-zero3-qwen2.5-14b",
        json!({"model": "qwen2.5-14b", "framework": "llamafactory", "method": "freeze",
               "parallel": {"zero_stage": 3}, "batch": {"micro_batch": 1, "global_batch": 16, "seq_len": 2048}}),
    );
    // GaLore (`use_galore`, `galore_rank`, `galore_layerwise`, its `GaloreArguments`), layer by
    // layer on one device in bf16.
    add(
        "llamafactory-galore-qwen2.5-7b",
        json!({"model": "qwen2.5-7b", "framework": "llamafactory", "method": "sft-full", "optimizer": "galore",
               "low_rank": {"rank": 128, "layerwise": true}, "pure_bf16": true, "cluster": {"devices_per_node": 1},
               "batch": {"micro_batch": 1, "global_batch": 1, "seq_len": 2048}}),
    );
    // APOLLO (`use_apollo`, `apollo_rank`, its `ApolloArguments`) over DDP on 8 devices.
    add(
        "llamafactory-apollo-qwen2.5-7b",
        json!({"model": "qwen2.5-7b", "framework": "llamafactory", "method": "sft-full", "optimizer": "apollo",
               "low_rank": {"rank": 256}, "pure_bf16": true,
               "batch": {"micro_batch": 1, "global_batch": 8, "seq_len": 2048}}),
    );
    // 8-bit AdamW handed to DeepSpeed as its client optimizer: `optim` beside the ZeRO-2 file.
    add(
        "llamafactory-adam-8bit-zero2-qwen2.5-7b",
        json!({"model": "qwen2.5-7b", "framework": "llamafactory", "method": "sft-full", "optimizer": "adamw_8bit",
               "parallel": {"zero_stage": 2}, "batch": {"micro_batch": 1, "global_batch": 16, "seq_len": 2048}}),
    );
    // Liger's kernels (`enable_liger_kernel`, LLaMA-Factory's `ModelArguments`) and the adapters'
    // dropout (`lora_dropout`, its `FinetuningArguments`).
    add(
        "llamafactory-lora-liger-qwen2.5-7b",
        json!({"model": "qwen2.5-7b", "framework": "llamafactory", "method": "lora", "liger_kernel": true,
               "lora": {"dropout": 0.05}, "batch": {"micro_batch": 2, "global_batch": 16, "seq_len": 4096}}),
    );
    add(
        "llamafactory-dpo-lora-qwen2.5-7b",
        json!({"model": "qwen2.5-7b", "framework": "llamafactory", "method": "dpo-lora",
               "lora": {"rank": 8}, "parallel": {"zero_stage": 2},
               "batch": {"micro_batch": 1, "global_batch": 16, "seq_len": 2048}}),
    );

    // MindSpeed-LLM: pre-training, full SFT, LoRA and DPO, dense and MoE, swap-attention, DualPipeV.
    for (method, model, nodes, par, recompute) in [
        (
            "pretrain",
            "qwen2.5-7b",
            1,
            json!({"tp": 2, "pp": 2, "sequence_parallel": true, "distributed_optimizer": true}),
            json!({"granularity": "selective"}),
        ),
        (
            "sft-full",
            "llama-3-8b",
            1,
            json!({"tp": 4, "sequence_parallel": true, "distributed_optimizer": true}),
            json!({"granularity": "full", "method": "uniform", "num_layers": 1}),
        ),
        ("lora", "qwen2.5-14b", 1, json!({"tp": 4}), json!({"granularity": "none"})),
        (
            "dpo",
            "qwen2.5-7b",
            1,
            json!({"tp": 4, "distributed_optimizer": true}),
            json!({"granularity": "full"}),
        ),
        (
            "pretrain",
            "qwen3-30b-a3b",
            2,
            json!({"tp": 2, "pp": 2, "ep": 4, "sequence_parallel": true,
            "distributed_optimizer": true}),
            json!({"granularity": "full", "num_layers": 1}),
        ),
        (
            "pretrain",
            "qwen3-30b-a3b",
            4,
            json!({"tp": 1, "pp": 4, "ep": 8, "distributed_optimizer": true,
            "schedule": "dualpipev"}),
            json!({"granularity": "full", "num_layers": 1}),
        ),
    ] {
        add(
            &format!(
                "mindspeed-llm-{method}-{model}{}",
                if par.get("schedule").is_some() { "-dualpipev" } else { "" }
            ),
            json!({"model": model, "hardware": "ascend-910b2", "cluster": {"nodes": nodes},
                   "framework": "mindspeed-llm", "method": method, "parallel": par, "recompute": recompute,
                   "batch": {"micro_batch": 1, "global_batch": 64, "seq_len": 4096}}),
        );
    }

    // MindSpeed-LLM without its fused RMSNorm, SwiGLU and RoPE kernels.
    add(
        "mindspeed-llm-pretrain-qwen2.5-7b-unfused",
        json!({"model": "qwen2.5-7b", "hardware": "ascend-910b2", "framework": "mindspeed-llm", "method": "pretrain",
               "parallel": {"tp": 8, "sequence_parallel": true, "distributed_optimizer": true, "fused_kernels": false},
               "recompute": {"granularity": "none"},
               "batch": {"micro_batch": 1, "global_batch": 64, "seq_len": 4096}}),
    );

    // VeRL: GRPO and PPO, LoRA, offload, Ulysses, NVIDIA and Ascend.
    for (name, method, model, hw, extra) in [
        ("grpo", "grpo", "qwen2.5-7b", "h100-sxm-80g", json!({})),
        ("ppo", "ppo", "qwen2.5-3b", "h100-sxm-80g", json!({})),
        ("grpo-lora", "lora", "qwen2.5-7b", "h100-sxm-80g", json!({})),
        (
            "grpo-offload-ascend",
            "grpo",
            "qwen2.5-7b",
            "ascend-910b2",
            json!({"offload_optimizer": true, "offload_params": true}),
        ),
        ("grpo-ulysses", "grpo", "qwen2.5-7b", "h200-sxm-141g", json!({"cp": 2})),
        ("grpo-moe-rollout-ep", "grpo", "qwen3-30b-a3b", "h100-sxm-80g", json!({"offload_optimizer": true})),
        // VeRL's other shardings: none (`fsdp_size=1`, actor, reference and critic) and ZeRO-2's
        // (`reshard_after_forward=False`).
        ("ppo-replicated", "ppo", "qwen2.5-0.5b", "h100-sxm-80g", json!({"zero_stage": 0})),
        ("grpo-zero2", "grpo", "qwen2.5-1.5b", "h100-sxm-80g", json!({"zero_stage": 2})),
        // Gradients reduced once an update (`use_no_sync_for_gradient_accumulation`), actor and critic.
        ("ppo-no-sync", "ppo", "qwen2.5-1.5b", "h100-sxm-80g", json!({"no_sync_accumulation": true})),
        // PyTorch's FSDP2 (`strategy: fsdp2`), actor, reference and critic; at ZeRO-2 too.
        ("ppo-fsdp2", "ppo", "qwen2.5-3b", "h100-sxm-80g", json!({"fsdp": "torch_fsdp2"})),
        // FSDP2's CPU offload (`offload_policy`), actor and critic.
        (
            "ppo-fsdp2-offload-policy",
            "ppo",
            "qwen2.5-3b",
            "h100-sxm-80g",
            json!({"fsdp": "torch_fsdp2", "offload_policy": true}),
        ),
        (
            "grpo-fsdp2-zero2",
            "grpo",
            "qwen2.5-1.5b",
            "h100-sxm-80g",
            json!({"fsdp": "torch_fsdp2", "zero_stage": 2}),
        ),
    ] {
        let mut par = json!({"zero_stage": 3});
        for (k, v) in extra.as_object().unwrap() {
            par[k] = v.clone();
        }
        let (method, lora) = if method == "lora" { ("grpo", true) } else { (method, false) };
        let mut plan = json!({"model": model, "hardware": hw, "framework": "verl", "method": method,
                              "parallel": par, "rl": {"rollout_tp": 2, "n_samples_per_prompt": 8,
                              "max_prompt_length": 1024, "max_response_length": 2048},
                              "batch": {"micro_batch": 4, "global_batch": 256}});
        if lora {
            plan["lora"] = json!({"rank": 32, "alpha": 64});
            plan["rl"]["lora"] = json!(true);
        }
        if name.ends_with("rollout-ep") {
            // vLLM's expert parallelism over the rollout's TP 2 × DP 4 ranks.
            plan["rl"]["rollout_ep"] = json!(8);
        }
        if name == "ppo" {
            // Typed paths Hydra would read as syntax or stop at (a comma, a space, `~`, Chinese):
            // written in Hydra's quotes (`emit::verl::hydra_value`).
            plan["launch"] =
                json!({"dataset": "/数据/gsm8k/train,v2.parquet", "output_dir": "~/checkpoints/qwen 3b"});
        }
        if name == "grpo-ulysses" {
            // Liger's kernels on the actor (`actor_rollout_ref.model.use_liger`).
            plan["liger_kernel"] = json!(true);
        }
        add(&format!("verl-{name}"), plan);
    }

    // VeRL's Megatron engine: TP and PP, VPP with full recomputation and offload, PPO's critic, MoE
    // with EP and the rollout's EP, CP on long responses.
    for (name, method, model, nodes, par, extra) in [
        ("grpo-tp-pp", "grpo", "qwen2.5-7b", 1, json!({"tp": 2, "pp": 2}), json!({})),
        (
            "grpo-vpp-offload",
            "grpo",
            "qwen2.5-14b",
            2,
            json!({"tp": 4, "pp": 2, "vpp": 2, "offload_params": true, "offload_optimizer": true}),
            json!({"recompute": {"granularity": "full", "method": "uniform", "num_layers": 1}}),
        ),
        (
            "ppo-tp",
            "ppo",
            "qwen2.5-3b",
            1,
            json!({"tp": 2}),
            json!({"recompute": {"granularity": "selective"}}),
        ),
        // LoRA through Megatron-Bridge, the actor's and PPO's critic's.
        (
            "grpo-lora",
            "grpo",
            "qwen2.5-7b",
            1,
            json!({"tp": 2}),
            json!({"rl": {"lora": true}, "lora": {"rank": 32, "alpha": 64}}),
        ),
        (
            "ppo-lora-attention",
            "ppo",
            "qwen2.5-3b",
            1,
            json!({"tp": 2}),
            json!({"rl": {"lora": true}, "lora": {"rank": 16, "alpha": 32, "targets": ["q_proj", "k_proj", "v_proj", "o_proj"]}}),
        ),
        // Uneven stages: Qwen2.5-7B's 28 layers over PP 8 as 2 + 6 × 4 + 2 (megatron-core's
        // `num_layers_in_first/last_pipeline_stage`).
        ("grpo-uneven", "grpo", "qwen2.5-7b", 1, json!({"pp": 8, "uneven_layers": true}), json!({})),
        // Uneven stages with VPP: Llama 2 7B's 32 layers as 4, 6, 6, 6, 6, 4 in two chunks each.
        (
            "grpo-uneven-vpp",
            "grpo",
            "llama-2-7b",
            6,
            json!({"tp": 8, "pp": 6, "vpp": 2, "uneven_layers": true}),
            json!({"batch": {"global_batch": 48}}),
        ),
        // fp16, the engines' other dtype, on the actor, the reference and PPO's critic.
        ("ppo-fp16", "ppo", "qwen2.5-3b", 1, json!({"tp": 2}), json!({"precision": "fp16"})),
        // The gradient reduction overlapped, through `override_ddp_config`, on the actor and PPO's critic.
        ("ppo-overlap", "ppo", "qwen2.5-3b", 1, json!({"tp": 2, "overlap_grad_reduce": true}), json!({})),
        (
            "grpo-moe-ep",
            "grpo",
            "qwen3-30b-a3b",
            2,
            json!({"tp": 2, "pp": 2, "ep": 4, "offload_optimizer": true}),
            json!({"rl": {"rollout_ep": 8}}),
        ),
        (
            "grpo-cp",
            "grpo",
            "qwen2.5-7b",
            1,
            json!({"tp": 2, "cp": 2}),
            json!({"rl": {"max_response_length": 8192}}),
        ),
        // Context parallelism by all-to-all: megatron-core's `cp_comm_type`.
        (
            "grpo-cp-a2a",
            "grpo",
            "qwen2.5-7b",
            1,
            json!({"tp": 2, "cp": 2, "cp_algo": "alltoall"}),
            json!({"rl": {"max_response_length": 8192}}),
        ),
    ] {
        let mut plan = json!({"model": model, "hardware": "h100-sxm-80g", "framework": "verl-megatron",
                              "method": method, "cluster": {"nodes": nodes},
                              "parallel": par, "rl": {"rollout_tp": 2, "n_samples_per_prompt": 8,
                              "max_prompt_length": 1024, "max_response_length": 2048},
                              "batch": {"micro_batch": 2, "global_batch": 256}});
        plan["parallel"]["distributed_optimizer"] = json!(true);
        plan["parallel"]["sequence_parallel"] = json!(true);
        for (k, v) in extra.as_object().unwrap() {
            match v.as_object() {
                Some(section) if plan.get(k).is_some() => {
                    for (kk, vv) in section {
                        plan[k][kk] = vv.clone();
                    }
                }
                _ => plan[k] = v.clone(),
            }
        }
        add(&format!("verl-megatron-{name}"), plan);
    }

    // VeRL's FSDP engine in fp16 (its `dtype`), PPO: the actor, the reference and the critic.
    add(
        "verl-ppo-fp16",
        json!({"model": "qwen2.5-3b", "hardware": "h100-sxm-80g", "framework": "verl", "method": "ppo",
               "precision": "fp16", "parallel": {"zero_stage": 3},
               "rl": {"rollout_tp": 2, "n_samples_per_prompt": 8, "max_prompt_length": 1024, "max_response_length": 2048},
               "batch": {"micro_batch": 4, "global_batch": 256}}),
    );

    // MindSpeed-RL: GRPO and PPO, dense and MoE.
    for (name, method, model, nodes, par) in [
        ("grpo-qwen2.5-7b", "grpo", "qwen2.5-7b", 1, json!({"tp": 4, "distributed_optimizer": true})),
        (
            "ppo-qwen2.5-7b",
            "ppo",
            "qwen2.5-7b",
            2,
            json!({"tp": 4, "pp": 2, "sequence_parallel": true,
            "distributed_optimizer": true}),
        ),
        (
            "grpo-qwen3-30b-a3b",
            "grpo",
            "qwen3-30b-a3b",
            2,
            json!({"tp": 2, "pp": 2, "ep": 4,
            "sequence_parallel": true, "distributed_optimizer": true}),
        ),
        (
            "grpo-qwen2.5-7b-unfused",
            "grpo",
            "qwen2.5-7b",
            1,
            json!({"tp": 4, "distributed_optimizer": true, "fused_kernels": false}),
        ),
        (
            "grpo-qwen2.5-7b-cp-alltoall",
            "grpo",
            "qwen2.5-7b",
            1,
            json!({"tp": 2, "cp": 2, "cp_algo": "alltoall", "distributed_optimizer": true}),
        ),
    ] {
        // With experts, the rollout spreads them over 8 ranks (TP 2 × EP 4), a multiple of the
        // actor's EP as MindSpeed-RL's resharding needs (rule mindspeed_rl.rollout_ep).
        let rollout_ep = if par.get("ep").is_some() { 8 } else { 1 };
        add(
            &format!("mindspeed-rl-{name}"),
            json!({"model": model, "hardware": "ascend-910b2", "cluster": {"nodes": nodes},
                   "framework": "mindspeed-rl", "method": method, "parallel": par,
                   "rl": {"rollout_tp": 2, "rollout_ep": rollout_ep, "n_samples_per_prompt": 8, "max_prompt_length": 1024,
                          "max_response_length": 2048},
                   "batch": {"micro_batch": 1, "global_batch": 32}}),
        );
    }
    out
}

/// Golden then generated.
pub fn all() -> Vec<Entry> {
    let mut all = golden();
    all.extend(generated());
    all
}
