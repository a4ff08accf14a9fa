//! A LLaMA-Factory training YAML.

// The importer's shared types and helpers, and its imports (mod.rs).
use super::*;

/// The keys the readers below apply.
const APPLIED: &[&str] = &[
    "model_name_or_path",
    "dataset",
    "output_dir",
    "stage",
    "finetuning_type",
    "freeze_trainable_layers",
    "freeze_trainable_modules",
    "lora_rank",
    "lora_alpha",
    "lora_target",
    "lora_dropout",
    "use_dora",
    "quantization_bit",
    "cutoff_len",
    "per_device_train_batch_size",
    "gradient_accumulation_steps",
    "disable_gradient_checkpointing",
    "recompute_layers_ratio",
    "bf16",
    "fp16",
    "fp8",
    "num_train_epochs",
    "flash_attn",
    "enable_liger_kernel",
    "pure_bf16",
    "optim",
    "use_galore",
    "galore_target",
    "galore_rank",
    "galore_layerwise",
    "use_apollo",
    "apollo_target",
    "apollo_rank",
    "apollo_layerwise",
    "deepspeed",
];

/// A LLaMA-Factory YAML: method, LoRA, batch, recomputation, precision, attention, Liger, the DeepSpeed
/// stage as the file's name gives it, and the paths.
pub(super) fn llamafactory(map: &Hash, text: &str, file: &mut PlanFile) -> Result<Reading, ImportError> {
    file.framework = Framework::LlamaFactory;
    let mut r = Reading::default();
    let y = Section::top(map);
    method_and_lora(&y, file, &mut r)?;
    batch(&y, file)?;
    recompute(&y, text, file)?;
    file.precision = match (y.switch("bf16"), y.switch("fp16"), y.switch("fp8")) {
        (_, _, true) => Precision::Fp8,
        (true, _, _) => Precision::Bf16,
        (_, true, _) => Precision::Fp16,
        _ => Precision::Fp32,
    };
    if let Some(f) = y.str("flash_attn") {
        file.attention = match f {
            "fa2" | "fa3" | "auto" => crate::plan::AttentionImpl::Flash,
            "sdpa" => crate::plan::AttentionImpl::Sdpa,
            _ => crate::plan::AttentionImpl::Eager,
        };
    }
    file.liger_kernel = y.switch("enable_liger_kernel");
    // `pure_bf16` computes in bf16 whatever the mixed-precision keys say (`hparams/parser.py`:
    // `compute_dtype` is bf16 when `bf16` or `pure_bf16`).
    file.pure_bf16 = y.switch("pure_bf16");
    // The HF `Trainer`'s `optim` (transformers `OptimizerNames`): bitsandbytes' 8-bit AdamW under
    // any of its names, PyTorch's AdamW under its own; another optimizer is listed as not used.
    match y.str("optim") {
        None | Some("adamw_torch" | "adamw_torch_fused") => {}
        Some("adamw_8bit" | "adamw_bnb_8bit" | "paged_adamw_8bit") => {
            file.optimizer = crate::plan::Optimizer::AdamW8bit
        }
        Some(other) => r.rest.push(("optim".to_owned(), other.to_owned())),
    }
    low_rank(&y, file, &mut r)?;
    if file.pure_bf16 {
        file.precision = Precision::Bf16;
    }
    // The passes the cost panel's budget counts; one the plan cannot hold is listed as not used.
    if let Some(value) = y.get("num_train_epochs") {
        let epochs = match value {
            Yaml::Real(x) => x.parse::<f64>().ok(),
            Yaml::Integer(n) => Some(*n as f64),
            _ => None,
        };
        match epochs.filter(|e| 0.0 < *e && *e <= 10_000.0) {
            Some(epochs) => file.budget.epochs = epochs,
            None => r.rest.push(("num_train_epochs".to_owned(), yaml_text(value))),
        }
    }
    // The DeepSpeed file's stage is in its name as LLaMA-Factory ships them (`ds_z3_offload_config.json`).
    if let Some(ds) = y.str("deepspeed") {
        if let Some(stage) =
            ds.split("ds_z").nth(1).and_then(|r| r.chars().next()).and_then(|c| c.to_digit(10))
        {
            file.parallel.zero_stage = stage as u8;
        }
        file.parallel.offload_optimizer = ds.contains("offload");
        if ds.contains("nvme") {
            file.parallel.offload_device = OffloadDevice::Nvme;
        }
    }
    r.model_path = y.text("model_name_or_path");
    r.dataset = y.text("dataset");
    r.output_dir = y.text("output_dir");
    for (k, v) in map {
        let key = yaml_key(k);
        if !APPLIED.contains(&key.as_str()) {
            r.rest.push((key, yaml_text(v)));
        }
    }
    Ok(r)
}

/// The method (`stage`, `finetuning_type`, `quantization_bit`) and LoRA's rank, alpha and targets.
fn method_and_lora(y: &Section, file: &mut PlanFile, r: &mut Reading) -> Result<(), ImportError> {
    let finetuning = y.str("finetuning_type").unwrap_or("lora");
    file.method = match (y.str("stage").unwrap_or("sft"), finetuning) {
        ("pt", _) => Method::Pretrain,
        ("dpo", "lora") => Method::DpoLora,
        ("dpo", _) => Method::Dpo,
        ("ppo", _) => Method::Ppo,
        (_, "lora") if y.positive("quantization_bit")?.is_some() => Method::Qlora,
        (_, "lora") => Method::Lora,
        (_, "freeze") => Method::Freeze,
        _ => Method::SftFull,
    };
    // Freeze-tuning's last `freeze_trainable_layers` layers, every module of each: the first n
    // layers (a negative count) or some modules alone are no plan's, and are listed as not used.
    match y.get("freeze_trainable_layers") {
        None => {}
        Some(Yaml::Integer(n)) if 0 < *n && *n <= i64::from(u32::MAX) => file.freeze_layers = *n as u32,
        Some(other) => r.rest.push(("freeze_trainable_layers".to_owned(), yaml_text(other))),
    }
    match y.str("freeze_trainable_modules") {
        None | Some("all") => {}
        Some(other) => r.rest.push(("freeze_trainable_modules".to_owned(), other.to_owned())),
    }
    // The plan trains adapters in SFT and DPO alone, and freezes layers in SFT alone: LoRA
    // pre-training or PPO, or freeze-tuning outside SFT, is read as full training, and the key is
    // listed as not used.
    let freeze_elsewhere = finetuning == "freeze" && file.method != Method::Freeze;
    if freeze_elsewhere || (finetuning != "full" && matches!(file.method, Method::Pretrain | Method::Ppo)) {
        r.rest.push(("finetuning_type".to_owned(), finetuning.to_owned()));
    }
    if let Some(rank) = y.positive("lora_rank")? {
        file.lora.rank = rank;
    }
    if let Some(a) = y.positive("lora_alpha")? {
        file.lora.alpha = a;
    }
    match y.get("lora_target") {
        None => {}
        Some(Yaml::String(t)) => file.lora.targets = TargetsField::Word(t.to_owned()),
        Some(other) => r.rest.push(("lora_target".to_owned(), yaml_text(other))),
    }
    file.lora.dropout = match y.get("lora_dropout") {
        None | Some(Yaml::Integer(0)) => 0.0,
        Some(Yaml::Real(p)) if p.parse::<f64>().is_ok_and(|p| (0.0..=0.9).contains(&p)) => {
            p.parse().unwrap_or(0.0)
        }
        Some(_) => return Err(ImportError::BadValue("lora_dropout".into(), Expected::Dropout)),
    };
    file.lora.dora = y.switch("use_dora");
    Ok(())
}

/// The sequence, the per-device batch, and the global batch it makes.
fn batch(y: &Section, file: &mut PlanFile) -> Result<(), ImportError> {
    if let Some(n) = y.positive("cutoff_len")? {
        file.batch.seq_len = n;
    }
    let micro = y.positive("per_device_train_batch_size")?.unwrap_or(1);
    let gas = y.positive("gradient_accumulation_steps")?.unwrap_or(1);
    file.batch.micro_batch = micro;
    // Global batch = per-device batch × accumulation × world (HF Trainer).
    let world = file.cluster.nodes.saturating_mul(devices_per_node(file));
    file.batch.global_batch = micro.saturating_mul(gas).saturating_mul(world.max(1));
    Ok(())
}

/// Gradient checkpointing and the Ascend build's share of layers it recomputes.
fn recompute(y: &Section, text: &str, file: &mut PlanFile) -> Result<(), ImportError> {
    file.recompute.granularity = match y.switch("disable_gradient_checkpointing") {
        true => RecomputeGranularity::None,
        false => RecomputeGranularity::Full,
    };
    match y.get("recompute_layers_ratio") {
        None => {
            // The emitter writes the Ascend build's layers ratio as a comment (upstream refuses
            // the key); read it back from there too.
            let commented = text.lines().find_map(|l| l.trim().strip_prefix("# recompute_layers_ratio:"));
            if let Some(ratio) =
                commented.and_then(|c| c.split_whitespace().next()).and_then(|c| c.parse::<f64>().ok())
                && 0.0 < ratio
                && ratio <= 1.0
            {
                file.recompute.layers_ratio = ratio;
            }
        }
        Some(Yaml::Real(ratio)) if ratio.parse::<f64>().is_ok_and(|x| 0.0 < x && x <= 1.0) => {
            file.recompute.layers_ratio = ratio.parse().unwrap_or(1.0);
        }
        Some(Yaml::Integer(1)) => file.recompute.layers_ratio = 1.0,
        Some(_) => {
            return Err(ImportError::BadValue("recompute_layers_ratio".into(), Expected::FractionUpToOne));
        }
    }
    Ok(())
}

/// GaLore (`use_galore`, `GaloreArguments`) or APOLLO (`use_apollo`, `ApolloArguments`): the rank
/// and layer-wise stepping over every linear weight. Some modules alone (`*_target`), either over
/// bitsandbytes' 8-bit AdamW (`GaLoreAdamW8bit`), or the other one's keys, are no plan's, and are
/// listed as not used.
fn low_rank(y: &Section, file: &mut PlanFile, r: &mut Reading) -> Result<(), ImportError> {
    let used = [("galore", crate::plan::Optimizer::Galore), ("apollo", crate::plan::Optimizer::Apollo)]
        .into_iter()
        .find(|(prefix, _)| y.switch(&format!("use_{prefix}")));
    for prefix in ["galore", "apollo"].into_iter().filter(|p| used.is_none_or(|(u, _)| u != *p)) {
        for key in ["target", "rank", "layerwise"].map(|k| format!("{prefix}_{k}")) {
            if let Some(value) = y.get(&key) {
                r.rest.push((key, yaml_text(value)));
            }
        }
    }
    let Some((prefix, optimizer)) = used else { return Ok(()) };
    if file.optimizer == crate::plan::Optimizer::AdamW8bit {
        r.rest.push(("optim".to_owned(), y.str("optim").unwrap_or_default().to_owned()));
    }
    file.optimizer = optimizer;
    if let Some(rank) = y.positive(&format!("{prefix}_rank"))? {
        file.low_rank.rank = rank;
    }
    file.low_rank.layerwise = y.switch(&format!("{prefix}_layerwise"));
    let target = format!("{prefix}_target");
    match y.str(&target) {
        None | Some("all") => {}
        Some(other) => r.rest.push((target, other.to_owned())),
    }
    Ok(())
}
