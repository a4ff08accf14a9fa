//! LLaMA-Factory: the training YAML (keys of `src/llamafactory/hparams/*.py`), the DeepSpeed JSON
//! it points to (as `examples/deepspeed/ds_z*_config.json`; transformers' `HfTrainerDeepSpeedConfig`
//! fills the `"auto"` batch keys), and `launch.sh` with `llamafactory-cli train` under
//! FORCE_TORCHRUN and the node variables (`src/llamafactory/launcher.py`).

use serde_json::json;

use super::{
    EmittedFile, FileKind, accumulation, comment, model_path, model_slug, node_vars, script_opening, yaml_str,
};
use crate::Plan;
use crate::model::Family;
use crate::plan::{AttentionImpl, LoraTargets, Method, Precision, RecomputeGranularity};

/// LLaMA-Factory's templates for `model_type`s whose family does not name it (types the planner
/// reads Llama-like; Kimi K2's, read as DeepSeek-V3, whose turns are Moonlight's,
/// `<|im_user|>user<|im_middle|>…<|im_end|>`, Moonshot's earlier model: LLaMA-Factory registers no
/// Kimi K2 template): each type's models'
/// template in LLaMA-Factory 0.9.5's `DEFAULT_TEMPLATE` (`src/llamafactory/extras/constants.py`:
/// GPT-OSS-20B-Thinking `gpt_oss`, Llama-4-Scout-17B-16E-Instruct `llama4`, Gemma-3-27B-Instruct
/// `gemma3`, GLM-4.5-Air-Thinking `glm4_moe`, GLM-4.1V-9B-Thinking `glm4v`, GLM-4.5V-Air-Thinking
/// `glm4_5v`, Qwen2.5-VL-7B-Instruct `qwen2_vl`,
/// Qwen3-Next-80B-A3B-Instruct `qwen3_nothink`, Seed-OSS-36B-Instruct `seed_oss`), a wrapper's
/// type and its language model's alike.
const TEMPLATE_OF_TYPE: [(&str, &str); 13] = [
    ("gpt_oss", "gpt_oss"),
    ("glm4v", "glm4v"),
    ("glm4v_moe", "glm4_5v"),
    ("kimi_k2", "moonlight"),
    ("llama4", "llama4"),
    ("llama4_text", "llama4"),
    ("gemma3", "gemma3"),
    ("glm4_moe", "glm4_moe"),
    ("qwen2_vl", "qwen2_vl"),
    ("qwen2_5_vl", "qwen2_vl"),
    ("qwen2_5_vl_text", "qwen2_vl"),
    ("qwen3_next", "qwen3_nothink"),
    ("seed_oss", "seed_oss"),
];

/// LLaMA-Factory's chat template for the model (`src/llamafactory/data/template.py` names).
fn template(plan: &Plan) -> &'static str {
    let name = plan.model.name.to_ascii_lowercase();
    // The weights named (an import's `model_name_or_path`): a release of the model's architecture
    // may talk otherwise.
    let path = plan.launch.model_path.to_ascii_lowercase();
    // A config of a type its family does not speak for (imported or the catalog's): its own
    // template, where LLaMA-Factory has one.
    if let Some(config) = super::hf_config(plan) {
        let types = [Some(&config), config.get("text_config")]
            .into_iter()
            .flatten()
            .filter_map(|c| c.get("model_type").and_then(serde_json::Value::as_str));
        for model_type in types {
            // Qwen3-VL's Instruct models, dense and MoE, talk as `qwen3_vl_nothink`, its Thinking
            // ones as `qwen3_vl` (constants.py at ff6d4d1).
            if matches!(model_type, "qwen3_vl" | "qwen3_vl_moe") {
                let thinking = name.contains("thinking") || path.contains("thinking");
                return if thinking { "qwen3_vl" } else { "qwen3_vl_nothink" };
            }
            if let Some((_, t)) = TEMPLATE_OF_TYPE.iter().find(|(ty, _)| *ty == model_type) {
                return t;
            }
        }
    }
    // DeepSeek-R1 and the models distilled from it (Qwen2.5 and Llama 3 shapes) talk as R1 does
    // (`DeepSeek-R1-*-Distill` and `DeepSeek-R1-671B-Chat` in LLaMA-Factory's constants.py).
    if name.contains("deepseek-r1") {
        return "deepseekr1";
    }
    match plan.model.arch.family {
        Family::Qwen2 | Family::Qwen2Moe => "qwen",
        // Qwen3's Instruct-2507 releases answer without thinking: LLaMA-Factory registers them with
        // `qwen3_nothink` (constants.py at ff6d4d1), its Thinking-2507 ones with `qwen3`. Qwen3-Coder's
        // instruct models likewise (their cards: "supports only non-thinking mode"), which it does not
        // register.
        Family::Qwen3 | Family::Qwen3Moe if name.contains("coder") || path.contains("instruct-2507") => {
            "qwen3_nothink"
        }
        Family::Qwen3 | Family::Qwen3Moe => "qwen3",
        // LLaMA-Factory registers Qwen3-Next's Instruct model with `qwen3_nothink`, its Thinking
        // model with `qwen3` (src/llamafactory/extras/constants.py, v0.9.5).
        Family::Qwen3Next if name.contains("thinking") => "qwen3",
        Family::Qwen3Next => "qwen3_nothink",
        // Every Qwen3.5 model (v0.9.5's constants.py, a multimodal template).
        Family::Qwen35 | Family::Qwen35Moe => "qwen3_5",
        // Mistral-Nemo-2407 talks as `ministral`, Mistral-Small-24B-2501 as `mistral_small`
        // (constants.py at ff6d4d1).
        Family::Mistral if name.contains("nemo") => "ministral",
        Family::Mistral if name.contains("mistral-small") => "mistral_small",
        Family::Mistral | Family::Mixtral => "mistral",
        Family::Glm | Family::Glm4 => "glm4",
        Family::DeepseekV2 => "deepseek",
        // Moonlight (DeepSeek-V3's architecture) talks as `moonlight` (constants.py at ff6d4d1).
        Family::DeepseekV3 if name.contains("moonlight") => "moonlight",
        Family::DeepseekV3 => "deepseek3",
        // Gemma 2 and the text-only Gemma 3 (270M, 1B) talk as `gemma2`; a `gemma3` wrapper
        // (4B–27B, matched by its type above) as `gemma3` (constants.py at ff6d4d1).
        Family::Gemma2 | Family::Gemma3 => "gemma2",
        // Phi-4-mini talks as `phi4_mini`, Phi-4 as `phi4`, Phi-3 and Phi-3.5 as `phi`
        // (constants.py at ff6d4d1).
        Family::Phi3 if name.contains("phi-4-mini") || path.contains("phi-4-mini") => "phi4_mini",
        Family::Phi3 if name.contains("phi-4") || path.contains("phi-4") => "phi4",
        Family::Phi3 => "phi",
        Family::Llama if name.contains("llama-2") => "llama2",
        Family::Llama if name.contains("llama-3") => "llama3",
        _ => "default",
    }
}

/// The DeepSpeed JSON for LLaMA-Factory: batch keys `"auto"` (HF fills them from the YAML).
fn ds_config(plan: &Plan) -> serde_json::Value {
    let mut c = json!({
        "train_batch_size": "auto",
        "train_micro_batch_size_per_gpu": "auto",
        "gradient_accumulation_steps": "auto",
        "gradient_clipping": "auto",
        "zero_allow_untested_optimizer": true,
        "zero_optimization": super::deepspeed::zero_block(plan, true),
    });
    if let Some(aio) = super::deepspeed::aio_block(plan) {
        c["aio"] = aio;
    }
    match plan.precision {
        Precision::Fp16 => {
            c["fp16"] = json!({"enabled": "auto", "loss_scale": 0, "loss_scale_window": 1000,
                "initial_scale_power": 16, "hysteresis": 2, "min_loss_scale": 1});
        }
        _ => c["bf16"] = json!({"enabled": "auto"}),
    }
    c
}

/// The YAML, as `key: value` lines in LLaMA-Factory's example order: model, method, dataset, output,
/// train.
pub fn yaml(plan: &Plan, ds_name: Option<&str>) -> String {
    let mut y = model_keys(plan);
    y.push_str(&method_keys(plan, ds_name));
    y.push_str(&dataset_keys(plan));
    y.push_str(&output_keys(plan));
    y.push_str(&train_keys(plan));
    y
}

/// A `key: value` line.
fn kv(y: &mut String, k: &str, v: &str) {
    y.push_str(&format!("{k}: {v}\n"));
}

/// LLaMA-Factory's stage for the plan's method.
fn stage(plan: &Plan) -> &'static str {
    match plan.method {
        Method::Pretrain => "pt",
        Method::SftFull | Method::Lora | Method::Qlora | Method::Freeze => "sft",
        Method::Dpo | Method::DpoLora => "dpo",
        Method::Grpo | Method::Ppo => "ppo",
    }
}

/// The model, its attention kernel and Liger's kernels.
fn model_keys(plan: &Plan) -> String {
    let mut y = String::new();
    kv(&mut y, "model_name_or_path", &yaml_str(&model_path(plan)));
    kv(&mut y, "trust_remote_code", "true");
    let flash = match plan.attention {
        AttentionImpl::Flash => "fa2",
        AttentionImpl::Sdpa => "sdpa",
        AttentionImpl::Eager => "disabled",
    };
    kv(&mut y, "flash_attn", flash);
    // Liger's kernels, off unless asked (`enable_liger_kernel`, LLaMA-Factory's `ModelArguments`).
    if plan.liger_kernel {
        kv(&mut y, "enable_liger_kernel", "true");
    }
    y
}

/// The method: the stage, LoRA or full, QLoRA's quantization, DPO's loss, the reward model,
/// gradient checkpointing, and the DeepSpeed file.
fn method_keys(plan: &Plan, ds_name: Option<&str>) -> String {
    let mut y = String::new();
    kv(&mut y, "stage", stage(plan));
    kv(&mut y, "do_train", "true");
    match plan.method {
        Method::Lora | Method::Qlora | Method::DpoLora => {
            kv(&mut y, "finetuning_type", "lora");
            kv(&mut y, "lora_rank", &plan.lora.rank.to_string());
            kv(&mut y, "lora_alpha", &plan.lora.alpha.to_string());
            let targets = match &plan.lora.targets {
                LoraTargets::All => "all".to_owned(),
                LoraTargets::Only(t) => t.iter().map(|t| t.name()).collect::<Vec<_>>().join(","),
            };
            kv(&mut y, "lora_target", &targets);
            if 0.0 < plan.lora.dropout {
                kv(&mut y, "lora_dropout", &plan.lora.dropout.to_string());
            }
            if plan.lora.dora {
                kv(&mut y, "use_dora", "true");
            }
        }
        // The last `freeze_trainable_layers` decoder layers, every module of each
        // (`_setup_freeze_tuning`, src/llamafactory/model/adapter.py).
        Method::Freeze => {
            kv(&mut y, "finetuning_type", "freeze");
            kv(&mut y, "freeze_trainable_layers", &plan.freeze_layers.to_string());
            kv(&mut y, "freeze_trainable_modules", "all");
        }
        _ => kv(&mut y, "finetuning_type", "full"),
    }
    if plan.method == Method::Qlora {
        kv(&mut y, "quantization_bit", "4");
        // LLaMA-Factory recommends fp32 layer norms for quantized training (`hparams/parser.py`
        // warns without it).
        kv(&mut y, "upcast_layernorm", "true");
    }
    if plan.method.is_dpo() {
        kv(&mut y, "pref_beta", "0.1");
        kv(&mut y, "pref_loss", "sigmoid");
    }
    if matches!(plan.method, Method::Grpo | Method::Ppo) {
        kv(&mut y, "reward_model", &yaml_str("/path/to/reward_model"));
    }
    if plan.recompute.granularity == RecomputeGranularity::None {
        kv(&mut y, "disable_gradient_checkpointing", "true");
    } else if plan.recompute.layers_ratio_frac < 1.0 {
        // Only Ascend's LLaMA-Factory build reads this key; upstream's HfArgumentParser refuses
        // it ("Some keys are not used"), so it is written as a comment to uncomment on that build
        // (rule llamafactory.layers_ratio_upstream).
        kv(
            &mut y,
            "# recompute_layers_ratio",
            &format!(
                "{}   # Ascend's build only; upstream refuses the key",
                plan.recompute.layers_ratio_frac
            ),
        );
    }
    if let Some(name) = ds_name {
        kv(&mut y, "deepspeed", &yaml_str(name));
    }
    y
}

/// The dataset, its template and the sequence.
fn dataset_keys(plan: &Plan) -> String {
    let mut y = String::new();
    // LLaMA-Factory's demo datasets (`data/dataset_info.json`) by what the stage reads: plain
    // text for pre-training, preference pairs (`"ranking": true`) for DPO, instructions otherwise;
    // the DPO workflow refuses a dataset that is not a ranking one.
    let demo = match plan.method {
        Method::Pretrain => "c4_demo",
        Method::Dpo | Method::DpoLora => "dpo_en_demo",
        _ => "alpaca_en_demo",
    };
    let dataset = if plan.launch.dataset.is_empty() { demo } else { &plan.launch.dataset };
    kv(&mut y, "dataset", &yaml_str(dataset));
    kv(&mut y, "dataset_dir", &yaml_str("data"));
    kv(&mut y, "template", template(plan));
    kv(&mut y, "cutoff_len", &plan.batch.seq_len.to_string());
    kv(&mut y, "preprocessing_num_workers", "16");
    y
}

/// Where the run saves and logs.
fn output_keys(plan: &Plan) -> String {
    let mut y = String::new();
    let output = match plan.launch.output_dir.is_empty() {
        true => format!("saves/{}/{}", model_slug(plan), stage(plan)),
        false => plan.launch.output_dir.clone(),
    };
    kv(&mut y, "output_dir", &yaml_str(&output));
    kv(&mut y, "logging_steps", "10");
    kv(&mut y, "save_steps", "500");
    kv(&mut y, "plot_loss", "true");
    kv(&mut y, "report_to", "tensorboard");
    y
}

/// The batch, the schedule and the precision.
fn train_keys(plan: &Plan) -> String {
    let mut y = String::new();
    kv(&mut y, "per_device_train_batch_size", &plan.batch.micro_batch.to_string());
    kv(&mut y, "gradient_accumulation_steps", &accumulation(plan).to_string());
    let lr = match plan.method {
        // LLaMA-Factory's freeze-tuning example trains at 1e-4 too
        // (examples/extras/llama_pro/llama3_freeze_sft.yaml).
        Method::Lora | Method::Qlora | Method::Freeze => "1.0e-4",
        Method::Dpo | Method::DpoLora => "5.0e-6",
        _ => "1.0e-5",
    };
    kv(&mut y, "learning_rate", lr);
    // The budget's passes over the dataset (the cost panel's), written as a float as HF's are.
    kv(&mut y, "num_train_epochs", &format!("{:?}", plan.budget.epochs));
    kv(&mut y, "lr_scheduler_type", "cosine");
    // transformers 5 deprecates `warmup_ratio`; `warmup_steps` below 1 is read as the ratio
    // (`TrainingArguments.__post_init__`, transformers 5.6, which LLaMA-Factory 0.9.5 allows).
    kv(&mut y, "warmup_steps", "0.1");
    match plan.precision {
        // `pure_bf16` keeps the trained parameters bf16, written where the plan counts it: with bf16
        // precision, without DeepSpeed.
        Precision::Bf16 if plan.pure_bf16 && crate::memory::plain_torch(plan) => {
            kv(&mut y, "bf16", "true");
            kv(&mut y, "pure_bf16", "true");
        }
        Precision::Bf16 => kv(&mut y, "bf16", "true"),
        Precision::Fp16 => kv(&mut y, "fp16", "true"),
        Precision::Fp8 => {
            kv(&mut y, "bf16", "true");
            kv(&mut y, "fp8", "true");
        }
        Precision::Fp32 => {}
        // No block-scaled recipe in LLaMA-Factory (rule precision.framework): bf16, said in the header.
        Precision::Mxfp8 | Precision::Nvfp4 => kv(&mut y, "bf16", "true"),
    }
    // bitsandbytes' 8-bit AdamW, written where the Trainer builds it: without DeepSpeed, or handed
    // to DeepSpeed as its client optimizer (rule llamafactory.adam_8bit_offload: not kept when the
    // optimizer is offloaded).
    if plan.optimizer == crate::plan::Optimizer::AdamW8bit && crate::memory::eight_bit_adam_offered(plan) {
        kv(&mut y, "optim", "adamw_8bit");
    }
    // GaLore or APOLLO over every linear weight (`GaloreArguments`, `ApolloArguments`; the
    // Trainer's `optim` stays AdamW, so `GaLoreAdamW` / `APOLLOAdamW`), where the plan trains full
    // parameters (rule llamafactory.low_rank_lora).
    let prefix = match plan.optimizer {
        crate::plan::Optimizer::Galore => Some("galore"),
        crate::plan::Optimizer::Apollo => Some("apollo"),
        _ => None,
    };
    if let Some(prefix) = prefix.filter(|_| !plan.trains_lora()) {
        kv(&mut y, &format!("use_{prefix}"), "true");
        kv(&mut y, &format!("{prefix}_target"), "all");
        kv(&mut y, &format!("{prefix}_rank"), &plan.low_rank.rank.to_string());
        if plan.low_rank.layerwise {
            kv(&mut y, &format!("{prefix}_layerwise"), "true");
        }
    }
    kv(&mut y, "ddp_timeout", "180000000");
    y
}

/// `train.yaml`, the DeepSpeed JSON when ZeRO is on, and `launch.sh`.
pub fn files(plan: &Plan, header: &[String]) -> Vec<EmittedFile> {
    let p = &plan.parallel;
    // DeepSpeed offloads nothing at ZeRO-0 (`knobs::effective`): no file for it there.
    let ds_name = crate::memory::runs_deepspeed(plan).then(|| {
        let offload = if p.offload_optimizer || p.offload_params { "_offload" } else { "" };
        let nvme = if super::deepspeed::writes_nvme(plan) { "_nvme" } else { "" };
        format!("ds_z{}{offload}{nvme}_config.json", p.zero_stage)
    });
    let mut files = Vec::new();
    let mut text = comment(header);
    text.push_str(&yaml(plan, ds_name.as_deref()));
    files.push(EmittedFile { name: "train.yaml".to_owned(), kind: FileKind::Yaml, text });
    if let Some(name) = &ds_name {
        let json =
            serde_json::to_string_pretty(&ds_config(plan)).expect("a JSON value always serializes") + "\n";
        files.push(EmittedFile { name: name.clone(), kind: FileKind::Json, text: json });
    }
    // Layer-wise GaLore and APOLLO refuse a distributed launch ("Distributed training does not
    // support layer-wise GaLore.", and APOLLO alike, `get_train_args`), which torchrun is even over one process: LLaMA-Factory's
    // CLI runs the training in its own process where one device is visible and FORCE_TORCHRUN is
    // unset (`llamafactory/cli.py`).
    let in_process = plan.optimizer.projects() && plan.low_rank.layerwise && plan.cluster.n_devices() == 1;
    let mut sh = match in_process {
        true => script_opening(header, "One device, in LLaMA-Factory's own process (no torchrun)."),
        false => script_opening(
            header,
            "Run on every node with NODE_RANK set (0 … NNODES − 1); MASTER_ADDR is node 0.",
        ),
    };
    match in_process {
        true => sh.push_str("export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0}\n\n"),
        false => {
            sh.push_str("export FORCE_TORCHRUN=1\n");
            sh.push_str(&node_vars(plan, true, "NNODES", "NPROC_PER_NODE", "127.0.0.1"));
        }
    }
    if let Some(name) = &ds_name {
        sh.push_str(&super::deepspeed::nvme_check(plan, name));
    }
    sh.push_str("llamafactory-cli train train.yaml\n");
    files.push(EmittedFile { name: "launch.sh".to_owned(), kind: FileKind::Shell, text: sh });
    files
}
