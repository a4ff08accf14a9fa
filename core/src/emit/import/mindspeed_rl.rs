//! A MindSpeed-RL run YAML and its model block.

// The importer's shared types and helpers, and its imports (mod.rs).
use super::*;

/// Whether a YAML value is a MindSpeed-RL model block (`configs/model/<name>.yaml`): Megatron's
/// keys for the model's shape.
pub(super) fn model_block(v: &Yaml) -> bool {
    let Yaml::Hash(h) = v else { return false };
    ["num_layers", "hidden_size"].iter().all(|k| h.contains_key(&Yaml::String((*k).to_owned())))
}

/// The run YAML's sections the plan reads (`mindspeed_rl/config_cls/*.py`).
struct Sections<'a> {
    /// The actor's Megatron settings: `megatron_training`, with `actor_config`'s keys winning
    /// (MindSpeed-RL `cli/train_grpo.py`: `MegatronConfig({**megatron_training, **actor_config}, model)`).
    mt: Section<'a>,
    /// `actor_config`: the actor's layout and micro-batch.
    actor: Section<'a>,
    /// `rl_config`: the RL loop.
    rl: Section<'a>,
    /// `generate_config`: the vLLM engine.
    generate: Section<'a>,
}

/// A MindSpeed-RL run YAML: the Megatron settings, the actor's layout, the RL loop, the vLLM engine
/// and the paths, and a model block pasted with it (its keys are Megatron's flags). Values the plan
/// derives by itself (a mini-batch of the whole batch, `max_model_len` of prompt + response, the
/// automatic token budgets) come back as 0, "automatic".
pub(super) fn mindspeed_rl(map: &Hash, file: &mut PlanFile) -> Result<Reading, ImportError> {
    file.framework = Framework::MindSpeedRl;
    file.method = Method::Grpo;
    let mut r = Reading::default();
    let top = Section::top(map);
    let actor = top.section("actor_config");
    let s = Sections {
        mt: top.section("megatron_training").overridden_by(&actor),
        actor,
        rl: top.section("rl_config"),
        generate: top.section("generate_config"),
    };
    parallel(&s, file)?;
    file.precision = if s.mt.switch("fp16") { Precision::Fp16 } else { Precision::Bf16 };
    recompute(&s.mt, file)?;
    if let Some(g) = s.mt.whole("global_batch_size")? {
        file.batch.global_batch = g;
    }
    if let Some(m) = s.actor.whole("micro_batch_size")? {
        file.batch.micro_batch = m;
    }
    if s.rl.str("adv_estimator") == Some("gae") {
        file.method = Method::Ppo;
    }
    lora(&s.mt, file, &mut r)?;
    rl_loop(&s, file)?;
    engine(&s.generate, file)?;
    let (budget, log_prob_budget) = packing(&s.rl, &mut r)?;
    let autos = [
        s.rl.whole("mini_batch_size")?,
        s.generate.whole("max_model_len")?,
        s.generate.whole("max_num_batched_tokens")?,
        budget,
    ];
    let update_budget = set_rl_autos(file, autos);
    // The log-probabilities' forwards, the larger of the actor's and the reference's (the smaller
    // listed as not kept); each back to 0 ("the update's") where it is the update's.
    let log_prob = larger(&s.rl, ["actor_forward_micro_batch_size", "ref_forward_micro_batch_size"], &mut r)?;
    file.rl.log_prob_micro_batch = log_prob.filter(|&n| n != file.batch.micro_batch).unwrap_or(0);
    file.rl.log_prob_max_tokens_per_device = log_prob_budget.filter(|&n| n != update_budget).unwrap_or(0);
    r.model_path = s.mt.text("tokenizer_name_or_path");
    r.dataset = s.mt.text("data_path");
    r.output_dir = s.actor.text("save");
    r.names.extend([s.mt.text("model"), s.actor.text("model")].into_iter().flatten());
    actor_devices(&s.rl.section("actor_resource"), file, &mut r)?;
    unused(map, &mut r);
    Ok(r)
}

/// The layout: Megatron's switches and CP/EP sizes, the actor's TP and PP.
fn parallel(s: &Sections, file: &mut PlanFile) -> Result<(), ImportError> {
    let (mt, p) = (&s.mt, &mut file.parallel);
    p.sequence_parallel = mt.switch("sequence_parallel");
    p.distributed_optimizer = mt.switch("use_distributed_optimizer");
    p.swap_optimizer = mt.switch("swap_optimizer");
    p.uneven_layers = mt.has("num_layer_list");
    p.tp_comm_overlap = mt.switch("use_ascend_coc");
    p.fused_kernels =
        ["use_fused_rmsnorm", "use_fused_swiglu", "use_fused_rotary_pos_emb"].iter().any(|k| mt.switch(k));
    p.cp = mt.whole("context_parallel_size")?.unwrap_or(1);
    // emit::mindspeed_rl writes MindSpeed's Ulysses; the ring is the default, any other algorithm
    // is not modeled and left as not kept (`unused`).
    p.cp_algo = match mt.str("context_parallel_algo") {
        Some("ulysses_cp_algo") => CpAlgo::AllToAll,
        _ => CpAlgo::Ring,
    };
    p.ep = mt.whole("expert_model_parallel_size")?.unwrap_or(1);
    p.tp = s.actor.whole("tensor_model_parallel_size")?.unwrap_or(1);
    p.pp = s.actor.whole("pipeline_model_parallel_size")?.unwrap_or(1);
    // The layers per stage, listed or left by empty slots (`noop_layers` over `num_layers` padded
    // slots): the plan's layout, one stage per rank, unless it is the planner's own uneven split.
    let pp = u64::from(p.pp.max(1));
    let list = |key: &str| -> Option<Vec<u64>> {
        mt.text(key)?.trim_matches(['"', '\'', '[', ']']).split(',').map(|n| n.trim().parse().ok()).collect()
    };
    let sizes = match (list("noop_layers"), mt.whole("num_layers")?) {
        (Some(noop), Some(padded)) => crate::layout::noop_stage_sizes(u64::from(padded), pp, &noop),
        _ => list("num_layer_list").filter(|l| l.len() as u64 == pp && l.iter().all(|&n| 0 < n)),
    };
    if let Some(sizes) = sizes {
        set_stage_sizes(file, &sizes, pp);
    }
    Ok(())
}

/// Recomputation and swap-attention (`megatron_training`).
fn recompute(mt: &Section, file: &mut PlanFile) -> Result<(), ImportError> {
    let rc = &mut file.recompute;
    rc.granularity = match mt.str("recompute_granularity") {
        None => RecomputeGranularity::None,
        Some("full") => RecomputeGranularity::Full,
        Some("selective") => RecomputeGranularity::Selective,
        Some(_) => {
            return Err(ImportError::BadValue(mt.path("recompute_granularity"), Expected::FullOrSelective));
        }
    };
    rc.method = match mt.str("recompute_method") {
        Some("block") => RecomputeMethod::Block,
        _ => RecomputeMethod::Uniform,
    };
    rc.num_layers = mt.whole("recompute_num_layers")?.unwrap_or(1);
    rc.activation_function = mt.switch("recompute_activation_function");
    rc.swap_attention = mt.switch("swap_attention");
    Ok(())
}

/// LoRA (`megatron_training`): rank, alpha and the target modules; modules the plan cannot name
/// are not used.
fn lora(mt: &Section, file: &mut PlanFile, r: &mut Reading) -> Result<(), ImportError> {
    if let Some(rank) = mt.whole("lora_r")? {
        file.rl.lora = 0 < rank;
        if 0 < rank {
            file.lora.rank = rank;
        }
    }
    if let Some(a) = mt.whole("lora_alpha")? {
        file.lora.alpha = a;
    }
    let key = || mt.path("lora_target_modules");
    match mt.get("lora_target_modules") {
        None => {}
        Some(Yaml::Array(list)) if list.iter().all(|m| m.as_str().is_some()) => {
            let modules: Vec<String> = list.iter().map(yaml_text).collect();
            match lora_targets_of_modules(&modules) {
                Some(targets) => file.lora.targets = targets,
                None => r.rest.push((key(), format!("{list:?}"))),
            }
        }
        Some(other) => r.rest.push((key(), yaml_text(other))),
    }
    Ok(())
}

/// The RL loop (`rl_config`, and the response length from `generate_config.sampling_config`).
fn rl_loop(s: &Sections, file: &mut PlanFile) -> Result<(), ImportError> {
    let rl = &mut file.rl;
    if let Some(n) = s.rl.whole("n_samples_per_prompt")? {
        rl.n_samples_per_prompt = n;
    }
    if let Some(n) = s.rl.whole("max_prompt_length")? {
        rl.max_prompt_length = n;
    }
    if let Some(n) = s.generate.section("sampling_config").whole("max_tokens")? {
        rl.max_response_length = n;
    }
    rl.blocking = !s.rl.has("blocking") || s.rl.switch("blocking");
    rl.remove_padding = s.rl.switch("use_remove_padding");
    rl.dynamic_batch = s.rl.switch("use_dynamic_bsz");
    Ok(())
}

/// The vLLM engine (`generate_config`): eager mode, TP, sequences and its share of memory.
fn engine(generate: &Section, file: &mut PlanFile) -> Result<(), ImportError> {
    let rl = &mut file.rl;
    rl.enforce_eager = generate.switch("enforce_eager");
    if let Some(tp) = generate.whole("infer_tensor_parallel_size")? {
        rl.rollout_tp = tp;
    }
    // The experts spread over TP × EP ranks (the plan's rollout EP) once vLLM's expert
    // parallelism is on; off, the TP alone splits them.
    if let Some(ep) = generate.whole("infer_expert_parallel_size")?
        && 1 < ep
        && generate.switch("enable_expert_parallel")
    {
        rl.rollout_ep = ep.saturating_mul(rl.rollout_tp);
    }
    if let Some(n) = generate.whole("max_num_seqs")? {
        rl.max_num_seqs = n;
    }
    match generate.get("gpu_memory_utilization") {
        None => {}
        Some(Yaml::Real(x)) if x.parse::<f64>().is_ok() => {
            rl.gpu_memory_utilization = x.parse().unwrap_or(0.5);
        }
        Some(Yaml::Integer(1)) => rl.gpu_memory_utilization = 1.0,
        Some(_) => {
            return Err(ImportError::BadValue(
                generate.path("gpu_memory_utilization"),
                Expected::FractionUpToOne,
            ));
        }
    }
    Ok(())
}

/// The devices the actor takes (`rl_config.actor_resource.num_npus`): the cluster, where the
/// current one has another count; a count no whole number of nodes gives is not used.
fn actor_devices(resource: &Section, file: &mut PlanFile, r: &mut Reading) -> Result<(), ImportError> {
    let Some(n) = resource.whole("num_npus")?.filter(|&n| 0 < n) else { return Ok(()) };
    let per = devices_per_node(file);
    if n != file.cluster.nodes.saturating_mul(per) {
        match (n % per, n < per) {
            (0, _) => file.cluster.nodes = n / per,
            (_, true) => (file.cluster.nodes, file.cluster.devices_per_node) = (1, Some(n)),
            _ => r.rest.push((resource.path("num_npus"), n.to_string())),
        }
    }
    Ok(())
}

/// Every key the readers above apply or know as information, by section.
const APPLIED: &[&str] = &[
    "megatron_training.sequence_parallel",
    "megatron_training.use_distributed_optimizer",
    "megatron_training.swap_optimizer",
    "megatron_training.num_layer_list",
    "megatron_training.noop_layers",
    "megatron_training.use_ascend_coc",
    "megatron_training.use_fused_rmsnorm",
    "megatron_training.use_fused_swiglu",
    "megatron_training.use_fused_rotary_pos_emb",
    "megatron_training.context_parallel_size",
    "megatron_training.context_parallel_algo",
    "megatron_training.expert_model_parallel_size",
    "megatron_training.moe_tp_extend_ep",
    "megatron_training.moe_permutation_async_comm",
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
    "rl_config.update_max_packing_token_size",
    "rl_config.actor_max_packing_token_size",
    "rl_config.ref_max_packing_token_size",
    "rl_config.actor_forward_micro_batch_size",
    "rl_config.ref_forward_micro_batch_size",
    "generate_config.enforce_eager",
    "generate_config.infer_tensor_parallel_size",
    "generate_config.infer_expert_parallel_size",
    "generate_config.enable_expert_parallel",
    "generate_config.max_num_seqs",
    "generate_config.gpu_memory_utilization",
    "generate_config.max_model_len",
    "generate_config.max_num_batched_tokens",
    "megatron_training.tokenizer_name_or_path",
    "megatron_training.data_path",
    "actor_config.save",
];

/// The packed-row sizes: the update's, `update_max_packing_token_size`, which MindSpeed-RL packs the
/// update to, else the file's `max_packing_token_size` (what the file means; at 05a90d7 `RLConfig`
/// packs every role to 4,096 unless its own key is set); and the log-probabilities' forwards', the
/// larger of `actor_` and `ref_max_packing_token_size`, else the update's.
fn packing(rl: &Section, r: &mut Reading) -> Result<(Option<u32>, Option<u32>), ImportError> {
    let [file, update, actor, reference] = crate::emit::mindspeed_rl::PACKING_KEYS;
    let file_size = rl.whole(file)?;
    let budget = rl.whole(update)?.or(file_size);
    // The file's size alone, other than the default: MindSpeed-RL packs every role to the default
    // (`Caveat::PackingRolesUnset`).
    if let Some(tokens) = file_size
        && tokens != crate::plan::MINDSPEED_RL_PACKED_TOKENS
        && [update, actor, reference].into_iter().all(|key| !rl.has(key))
    {
        r.caveats.push(super::Caveat::PackingRolesUnset { tokens });
    }
    Ok((budget, larger(rl, [actor, reference], r)?))
}

/// The larger of two `rl_config` keys the plan holds as one (the actor's log-probabilities' and
/// the reference's), the smaller listed as not kept where they differ.
fn larger(rl: &Section, keys: [&str; 2], r: &mut Reading) -> Result<Option<u32>, ImportError> {
    let [a, b] = [rl.whole(keys[0])?, rl.whole(keys[1])?];
    if let (Some(x), Some(y)) = (a, b)
        && x != y
    {
        let smaller = if x < y { (keys[0], x) } else { (keys[1], y) };
        r.rest.push((format!("rl_config.{}", smaller.0), smaller.1.to_string()));
    }
    Ok(a.max(b))
}

/// Every key, by section, that is neither applied above nor known as information; a model block's
/// keys as the model's flags.
fn unused(map: &Hash, r: &mut Reading) {
    // The padded layer count the empty slots go with is read with them (`parallel`).
    let padded = |top: &str, h: &Hash| {
        matches!(top, "megatron_training" | "actor_config")
            && h.contains_key(&Yaml::String("noop_layers".to_owned()))
    };
    for (key, value) in map {
        let top = yaml_key(key);
        if model_block(value) {
            r.names.push(top);
            let Yaml::Hash(block) = value else { continue };
            model_block_flags(block, r);
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
            // The actor's keys override the Megatron settings of the same name, read as those.
            let as_megatron = match top.as_str() {
                "actor_config" => format!("megatron_training.{}", yaml_text(k)),
                _ => key.clone(),
            };
            let applied = APPLIED.contains(&key.as_str())
                || APPLIED.contains(&as_megatron.as_str())
                || (yaml_text(k) == "num_layers" && padded(&top, h));
            if applied && !unmodeled(&as_megatron, v) {
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
}

/// Whether an applied key holds a value the plan has no place for: a context-parallel algorithm
/// other than the ring and Ulysses (`hybrid_cp_algo`, `mamba_cp_algo`), read as the ring.
fn unmodeled(key: &str, value: &Yaml) -> bool {
    key == "megatron_training.context_parallel_algo"
        && !matches!(value.as_str(), Some("megatron_cp_algo" | "ulysses_cp_algo"))
}

/// The model block: its keys are the model's flags (`num_layers: 28` is `--num-layers 28`).
fn model_block_flags(block: &Hash, r: &mut Reading) {
    for (k, v) in block {
        let flag = format!("--{}", yaml_text(k).replace('_', "-"));
        match v {
            Yaml::Boolean(false) => {}
            Yaml::Boolean(true) => r.shape.push((flag, String::new())),
            v => r.shape.push((flag, yaml_text(v))),
        }
    }
}
