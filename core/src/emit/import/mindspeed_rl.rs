//! A MindSpeed-RL run YAML and its model block.

// The importer's shared types and helpers, and its imports (mod.rs).
use super::*;

/// Whether a YAML value is a MindSpeed-RL model block (`configs/model/<name>.yaml`): Megatron's
/// keys for the model's shape.
pub(super) fn model_block(v: &Yaml) -> bool {
    let Yaml::Hash(h) = v else { return false };
    ["num_layers", "hidden_size"].iter().all(|k| h.contains_key(&Yaml::String((*k).to_owned())))
}

/// A MindSpeed-RL run YAML: the Megatron settings, the actor's layout, the RL loop, the vLLM engine
/// and the paths, and a model block pasted with it (its keys are Megatron's flags). Values the plan
/// derives by itself (a mini-batch of the whole batch, `max_model_len` of prompt + response, the
/// automatic token budgets) come back as 0, "automatic".
pub(super) fn mindspeed_rl(map: &Hash, file: &mut PlanFile) -> Result<Reading, ImportError> {
    file.framework = Framework::MindSpeedRl;
    file.method = Method::Grpo;
    let mut r = Reading::default();
    let section = |name: &str| match map.get(&Yaml::String(name.to_owned())) {
        Some(Yaml::Hash(h)) => Some(h),
        _ => None,
    };
    let empty = Hash::new();
    let (mt, actor, rl, generate) = (
        section("megatron_training").unwrap_or(&empty),
        section("actor_config").unwrap_or(&empty),
        section("rl_config").unwrap_or(&empty),
        section("generate_config").unwrap_or(&empty),
    );
    let get = |h: &'_ Hash, k: &str| h.get(&Yaml::String(k.to_owned())).cloned();
    let int = |h: &Hash, sec: &str, k: &str| -> Result<Option<u32>, ImportError> {
        match get(h, k) {
            None => Ok(None),
            Some(Yaml::Integer(n)) if 0 <= n && n <= i64::from(u32::MAX) => Ok(Some(n as u32)),
            Some(_) => Err(ImportError::BadValue(format!("{sec}.{k}"), Expected::WholeNumber)),
        }
    };
    let flag = |h: &Hash, k: &str| matches!(get(h, k), Some(Yaml::Boolean(true)));
    let has = |h: &Hash, k: &str| get(h, k).is_some();

    let p = &mut file.parallel;
    p.sequence_parallel = flag(mt, "sequence_parallel");
    p.distributed_optimizer = flag(mt, "use_distributed_optimizer");
    p.swap_optimizer = flag(mt, "swap_optimizer");
    p.uneven_layers = has(mt, "num_layer_list");
    p.tp_comm_overlap = flag(mt, "use_ascend_coc");
    p.fused_kernels =
        ["use_fused_rmsnorm", "use_fused_swiglu", "use_fused_rotary_pos_emb"].iter().any(|k| flag(mt, k));
    p.cp = int(mt, "megatron_training", "context_parallel_size")?.unwrap_or(1);
    p.ep = int(mt, "megatron_training", "expert_model_parallel_size")?.unwrap_or(1);
    p.tp = int(actor, "actor_config", "tensor_model_parallel_size")?.unwrap_or(1);
    p.pp = int(actor, "actor_config", "pipeline_model_parallel_size")?.unwrap_or(1);
    file.precision = if flag(mt, "fp16") { Precision::Fp16 } else { Precision::Bf16 };
    let rc = &mut file.recompute;
    rc.granularity = match get(mt, "recompute_granularity").as_ref().and_then(Yaml::as_str) {
        None => RecomputeGranularity::None,
        Some("full") => RecomputeGranularity::Full,
        Some("selective") => RecomputeGranularity::Selective,
        Some(_) => {
            return Err(ImportError::BadValue(
                "megatron_training.recompute_granularity".into(),
                Expected::FullOrSelective,
            ));
        }
    };
    rc.method = match get(mt, "recompute_method").as_ref().and_then(Yaml::as_str) {
        Some("block") => RecomputeMethod::Block,
        _ => RecomputeMethod::Uniform,
    };
    rc.num_layers = int(mt, "megatron_training", "recompute_num_layers")?.unwrap_or(1);
    rc.activation_function = flag(mt, "recompute_activation_function");
    rc.swap_attention = flag(mt, "swap_attention");
    if let Some(g) = int(mt, "megatron_training", "global_batch_size")? {
        file.batch.global_batch = g;
    }
    if let Some(m) = int(actor, "actor_config", "micro_batch_size")? {
        file.batch.micro_batch = m;
    }
    let rl_file = &mut file.rl;
    if get(rl, "adv_estimator").as_ref().and_then(Yaml::as_str) == Some("gae") {
        file.method = Method::Ppo;
    }
    if let Some(r) = int(mt, "megatron_training", "lora_r")? {
        rl_file.lora = 0 < r;
        if 0 < r {
            file.lora.rank = r;
        }
    }
    if let Some(a) = int(mt, "megatron_training", "lora_alpha")? {
        file.lora.alpha = a;
    }
    match get(mt, "lora_target_modules") {
        None => {}
        Some(Yaml::Array(list)) if list.iter().all(|m| m.as_str().is_some()) => {
            let modules: Vec<String> = list.iter().map(yaml_text).collect();
            match lora_targets_of_modules(&modules) {
                Some(targets) => file.lora.targets = targets,
                None => {
                    r.rest.push(("megatron_training.lora_target_modules".to_owned(), format!("{list:?}")))
                }
            }
        }
        Some(other) => r.rest.push(("megatron_training.lora_target_modules".to_owned(), yaml_text(&other))),
    }
    if let Some(n) = int(rl, "rl_config", "n_samples_per_prompt")? {
        rl_file.n_samples_per_prompt = n;
    }
    if let Some(n) = int(rl, "rl_config", "max_prompt_length")? {
        rl_file.max_prompt_length = n;
    }
    let sampling = match get(generate, "sampling_config") {
        Some(Yaml::Hash(h)) => h,
        _ => Hash::new(),
    };
    if let Some(n) = int(&sampling, "generate_config.sampling_config", "max_tokens")? {
        rl_file.max_response_length = n;
    }
    rl_file.blocking = !has(rl, "blocking") || flag(rl, "blocking");
    rl_file.remove_padding = flag(rl, "use_remove_padding");
    rl_file.dynamic_batch = flag(rl, "use_dynamic_bsz");
    rl_file.enforce_eager = flag(generate, "enforce_eager");
    if let Some(tp) = int(generate, "generate_config", "infer_tensor_parallel_size")? {
        rl_file.rollout_tp = tp;
    }
    if let Some(n) = int(generate, "generate_config", "max_num_seqs")? {
        rl_file.max_num_seqs = n;
    }
    match get(generate, "gpu_memory_utilization") {
        None => {}
        Some(Yaml::Real(x)) if x.parse::<f64>().is_ok() => {
            rl_file.gpu_memory_utilization = x.parse().unwrap_or(0.5);
        }
        Some(Yaml::Integer(1)) => rl_file.gpu_memory_utilization = 1.0,
        Some(_) => {
            return Err(ImportError::BadValue(
                "generate_config.gpu_memory_utilization".into(),
                Expected::FractionUpToOne,
            ));
        }
    }
    let read = [
        int(rl, "rl_config", "mini_batch_size")?,
        int(generate, "generate_config", "max_model_len")?,
        int(generate, "generate_config", "max_num_batched_tokens")?,
        int(rl, "rl_config", "max_packing_token_size")?,
    ];
    set_rl_autos(file, read);

    // Every key, by section, that is neither applied above nor known as information.
    const APPLIED: &[&str] = &[
        "megatron_training.sequence_parallel",
        "megatron_training.use_distributed_optimizer",
        "megatron_training.swap_optimizer",
        "megatron_training.num_layer_list",
        "megatron_training.use_ascend_coc",
        "megatron_training.use_fused_rmsnorm",
        "megatron_training.use_fused_swiglu",
        "megatron_training.use_fused_rotary_pos_emb",
        "megatron_training.context_parallel_size",
        "megatron_training.expert_model_parallel_size",
        "megatron_training.bf16",
        "megatron_training.fp16",
        "megatron_training.recompute_granularity",
        "megatron_training.recompute_method",
        "megatron_training.recompute_num_layers",
        "megatron_training.recompute_activation_function",
        "megatron_training.swap_attention",
        "megatron_training.global_batch_size",
        "actor_config.micro_batch_size",
        "actor_config.tensor_model_parallel_size",
        "actor_config.pipeline_model_parallel_size",
        "rl_config.adv_estimator",
        "megatron_training.lora_r",
        "megatron_training.lora_alpha",
        "megatron_training.lora_target_modules",
        "rl_config.n_samples_per_prompt",
        "rl_config.max_prompt_length",
        "rl_config.mini_batch_size",
        "rl_config.blocking",
        "rl_config.use_remove_padding",
        "rl_config.use_dynamic_bsz",
        "rl_config.max_packing_token_size",
        "generate_config.enforce_eager",
        "generate_config.infer_tensor_parallel_size",
        "generate_config.max_num_seqs",
        "generate_config.gpu_memory_utilization",
        "generate_config.max_model_len",
        "generate_config.max_num_batched_tokens",
        "megatron_training.tokenizer_name_or_path",
        "megatron_training.data_path",
        "actor_config.save",
    ];
    let text_of = |h: &Hash, k: &str| get(h, k).as_ref().map(yaml_text);
    r.model_path = text_of(mt, "tokenizer_name_or_path");
    r.dataset = text_of(mt, "data_path");
    r.output_dir = text_of(actor, "save");
    r.names.extend([text_of(mt, "model"), text_of(actor, "model")].into_iter().flatten());
    // The devices the actor takes: the cluster, where the current one has another count.
    let resource = match get(rl, "actor_resource") {
        Some(Yaml::Hash(h)) => h,
        _ => Hash::new(),
    };
    if let Some(n) = int(&resource, "rl_config.actor_resource", "num_npus")?.filter(|&n| 0 < n) {
        let per = devices_per_node(file);
        if n != file.cluster.nodes.saturating_mul(per) {
            match (n % per, n < per) {
                (0, _) => file.cluster.nodes = n / per,
                (_, true) => (file.cluster.nodes, file.cluster.devices_per_node) = (1, Some(n)),
                _ => r.rest.push(("rl_config.actor_resource.num_npus".to_owned(), n.to_string())),
            }
        }
    }
    for (key, value) in map {
        let top = key.as_str().map_or_else(|| yaml_text(key), str::to_owned);
        if model_block(value) {
            // The model block: its keys are the model's flags (`num_layers: 28` is `--num-layers 28`).
            r.names.push(top);
            let Yaml::Hash(block) = value else { continue };
            for (k, v) in block {
                let flag = format!("--{}", yaml_text(k).replace('_', "-"));
                match v {
                    Yaml::Boolean(false) => {}
                    Yaml::Boolean(true) => r.shape.push((flag, String::new())),
                    v => r.shape.push((flag, yaml_text(v))),
                }
            }
            continue;
        }
        let Yaml::Hash(h) = value else {
            r.rest.push((top, yaml_text(value)));
            continue;
        };
        if top == "defaults" {
            r.rest.push((top, yaml_text(value)));
            continue;
        }
        for (k, v) in h {
            let key = format!("{top}.{}", yaml_text(k));
            if APPLIED.contains(&key.as_str()) {
                continue;
            }
            // The sampling settings and the actor's resources one level down: some are the plan's.
            match (key.as_str(), v) {
                ("generate_config.sampling_config" | "rl_config.actor_resource", Yaml::Hash(inner)) => {
                    for (ik, iv) in inner {
                        let ik = yaml_text(ik);
                        if !matches!(ik.as_str(), "max_tokens" | "num_npus") {
                            r.rest.push((format!("{key}.{ik}"), yaml_text(iv)));
                        }
                    }
                }
                _ => r.rest.push((key, yaml_text(v))),
            }
        }
    }
    Ok(r)
}
