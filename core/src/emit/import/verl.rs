//! A VeRL `main_ppo` Hydra override list.

// The importer's shared types and helpers, and its imports (mod.rs).
use super::*;

/// VeRL's overrides: the RL loop, the FSDP actor (by default ZeRO-3's sharding) or the Megatron one,
/// the vLLM engine, the cluster and the paths. Values the plan derives by itself come back as 0,
/// "automatic".
// Long: one arm per override key VeRL's launch scripts write, each beside the plan field it sets.
pub(super) fn verl(text: &str, file: &mut PlanFile) -> Result<Reading, ImportError> {
    file.framework = Framework::Verl;
    file.method = Method::Grpo;
    // VeRL samples one response per prompt unless told otherwise (`n: 1`,
    // verl/trainer/config/rollout/rollout.yaml in verl 0.9.1), not the plan's default of five.
    file.rl.n_samples_per_prompt = 1;
    let mut r = Reading::default();
    let vars = script_vars(text);
    // Read as written; a value equal to what the plan derives by itself goes back to 0 (auto) below.
    let (mut mini, mut model_len, mut batched, mut budget) = (None, None, None, None);
    // The log-probabilities' micro-batch and packed budget: the rollout's (the actor's old
    // log-probabilities) and the reference's, which the plan takes as one, the larger of each,
    // where the phase peaks.
    let (mut log_prob, mut log_prob_budget): (Option<u32>, Option<u32>) = (None, None);
    // The rollout's DP: with expert parallelism, EP ÷ TP (which the plan derives); else not the plan's.
    let mut rollout_dp: Option<(String, u32)> = None;
    let (mut unsharded, mut resharded) = (false, true);
    // The critic's Megatron sizes, which the plan takes from the actor's: kept to compare after.
    let mut critic_megatron: Vec<(String, String)> = Vec::new();
    // The other models' engines (`strategy`), which the plan runs as the actor's: compared after.
    let mut engines: Vec<(String, String)> = Vec::new();
    for w in words(text) {
        let Some((key, value)) = w.split_once('=') else { continue };
        if !key.contains('.') {
            // Hydra's own options: `ppo_megatron_trainer` is the Megatron engine's config; any
            // other than `ppo_trainer` is said, not passed over.
            match (key, hydra_unquoted(value).trim_end_matches(".yaml")) {
                ("--config-name", "ppo_megatron_trainer") => file.framework = Framework::VerlMegatron,
                ("--config-name", "ppo_trainer") => {}
                ("--config-name", _) => r.rest.push((key.to_owned(), value.to_owned())),
                _ => {}
            }
            continue;
        }
        // Hydra's `+key` adds a key the config does not declare (`++key` adds or overrides).
        let key = key.trim_start_matches('+');
        let written = hydra_unquoted(value);
        // A value set outside the script (`$HOME/data/…`) is not the plan's: compared as written.
        let Some(v) = expand(written, &vars, &mut 64) else {
            r.rest.push((key.to_owned(), written.to_owned()));
            // The model's directory still names it (`${HOME}/verl/models/Qwen3-8B`).
            if key == "actor_rollout_ref.model.path" {
                r.names.push(expand_leniently(written, &vars));
            }
            continue;
        };
        // A script variable's value may hold the quotes in turn (`FILES="'a,b'"`).
        let v = match v == written {
            true => written,
            false => hydra_unquoted(&v),
        };
        let flag = |v: &str| v.eq_ignore_ascii_case("true");
        match key {
            "algorithm.adv_estimator" => file.method = if v == "gae" { Method::Ppo } else { Method::Grpo },
            "data.train_batch_size" => file.batch.global_batch = num(key, v)?,
            "data.max_prompt_length" => file.rl.max_prompt_length = num(key, v)?,
            "data.max_response_length" => file.rl.max_response_length = num(key, v)?,
            "data.train_files" => r.dataset = Some(v.to_owned()),
            "actor_rollout_ref.model.path" => r.model_path = Some(v.to_owned()),
            "trainer.default_local_dir" => r.output_dir = Some(v.to_owned()),
            "actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu" => file.batch.micro_batch = num(key, v)?,
            "actor_rollout_ref.actor.ppo_mini_batch_size" => mini = Some(num(key, v)?),
            "actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu"
            | "actor_rollout_ref.ref.log_prob_micro_batch_size_per_gpu" => {
                let n = num(key, v)?;
                log_prob = Some(log_prob.map_or(n, |m: u32| m.max(n)));
            }
            "actor_rollout_ref.rollout.log_prob_max_token_len_per_gpu"
            | "actor_rollout_ref.ref.log_prob_max_token_len_per_gpu" => {
                let n = num(key, v)?;
                log_prob_budget = Some(log_prob_budget.map_or(n, |m: u32| m.max(n)));
            }
            "actor_rollout_ref.actor.use_dynamic_bsz" => file.rl.dynamic_batch = flag(v),
            "actor_rollout_ref.actor.ppo_max_token_len_per_gpu" => budget = Some(num(key, v)?),
            "actor_rollout_ref.model.use_remove_padding" => file.rl.remove_padding = flag(v),
            "actor_rollout_ref.model.use_liger" => file.liger_kernel = flag(v),
            "actor_rollout_ref.actor.use_kl_loss" => file.rl.kl_loss = flag(v),
            "actor_rollout_ref.rollout.enforce_eager" => file.rl.enforce_eager = flag(v),
            "actor_rollout_ref.rollout.max_model_len" => model_len = Some(num(key, v)?),
            "actor_rollout_ref.rollout.max_num_batched_tokens" => batched = Some(num(key, v)?),
            "actor_rollout_ref.actor.ulysses_sequence_parallel_size" => file.parallel.cp = num(key, v)?,
            "actor_rollout_ref.actor.fsdp_config.param_offload" => file.parallel.offload_params = flag(v),
            "actor_rollout_ref.actor.fsdp_config.use_no_sync_for_gradient_accumulation" => {
                file.parallel.no_sync_accumulation = flag(v)
            }
            "actor_rollout_ref.actor.fsdp_config.optimizer_offload" => {
                file.parallel.offload_optimizer = flag(v)
            }
            "actor_rollout_ref.actor.fsdp_config.offload_policy" => file.parallel.offload_policy = flag(v),
            // The sharding (`sharding` in emit/verl.rs): over no rank, or the gradients and
            // optimizer states alone; a group of other ranks (HSDP) is no ZeRO stage.
            "actor_rollout_ref.actor.fsdp_config.fsdp_size" => match v.trim() {
                "1" => unsharded = true,
                "-1" => {}
                _ => r.rest.push((key.to_owned(), v.to_owned())),
            },
            "actor_rollout_ref.actor.fsdp_config.reshard_after_forward" => resharded = flag(v),
            // The engine's compute dtype (`bfloat16`, its default, or `float16`).
            "actor_rollout_ref.actor.fsdp_config.dtype" => match engine_dtype(v) {
                Some(precision) => file.precision = precision,
                None => r.rest.push((key.to_owned(), v.to_owned())),
            },
            "actor_rollout_ref.rollout.n" => file.rl.n_samples_per_prompt = num(key, v)?,
            "actor_rollout_ref.rollout.tensor_model_parallel_size" => file.rl.rollout_tp = num(key, v)?,
            "actor_rollout_ref.rollout.expert_parallel_size" => file.rl.rollout_ep = num(key, v)?,
            "actor_rollout_ref.rollout.data_parallel_size" => rollout_dp = Some((v.to_owned(), num(key, v)?)),
            "actor_rollout_ref.rollout.max_num_seqs" => file.rl.max_num_seqs = num(key, v)?,
            "actor_rollout_ref.rollout.gpu_memory_utilization" => {
                file.rl.gpu_memory_utilization = v
                    .parse()
                    .map_err(|_| ImportError::BadValue(key.to_owned(), Expected::FractionUpToOne))?;
            }
            "actor_rollout_ref.model.enable_gradient_checkpointing" => {
                file.recompute.granularity =
                    if flag(v) { RecomputeGranularity::Full } else { RecomputeGranularity::None };
            }
            // The FSDP engine's PEFT keys and the Megatron engine's Megatron-Bridge section alike.
            "actor_rollout_ref.model.lora_rank" | "actor_rollout_ref.model.lora.rank" => {
                let rank = num(key, v)?;
                // 0 is VeRL's "no LoRA"; the plan's rank keeps its default then.
                file.rl.lora = 0 < rank;
                if 0 < rank {
                    file.lora.rank = rank;
                }
            }
            "actor_rollout_ref.model.target_modules" => {
                let list = v.trim_matches(['[', ']']);
                file.lora.targets = match list {
                    "all-linear" => TargetsField::Word("all".to_owned()),
                    names => TargetsField::List(names.split(',').map(|n| n.trim().to_owned()).collect()),
                };
            }
            "actor_rollout_ref.model.lora_alpha" | "actor_rollout_ref.model.lora.alpha" => {
                file.lora.alpha = num(key, v)?
            }
            // Megatron-Bridge's modules: megatron-core's fused linears.
            "actor_rollout_ref.model.lora.target_modules" => {
                let modules: Vec<String> =
                    v.trim_matches(['[', ']']).split(',').map(|n| n.trim().to_owned()).collect();
                match lora_targets_of_modules(&modules) {
                    Some(targets) => file.lora.targets = targets,
                    None => r.rest.push((key.to_owned(), v.to_owned())),
                }
            }
            "actor_rollout_ref.actor.strategy" => match v {
                "megatron" => file.framework = Framework::VerlMegatron,
                "fsdp" => (file.framework, file.parallel.fsdp) = (Framework::Verl, Fsdp::None),
                // The FSDP engine on PyTorch's FSDP2 (`fully_shard`): the plan's `torch_fsdp2`.
                "fsdp2" => (file.framework, file.parallel.fsdp) = (Framework::Verl, Fsdp::Torch),
                _ => r.rest.push((key.to_owned(), v.to_owned())),
            },
            k if k.starts_with("actor_rollout_ref.actor.megatron.") => {
                if !megatron_engine_key(&k["actor_rollout_ref.actor.megatron.".len()..], v, file)? {
                    r.rest.push((k.to_owned(), v.to_owned()));
                }
            }
            // The reference offloaded but for its pass, as the plan runs it.
            "actor_rollout_ref.ref.megatron.param_offload" if flag(v) => {}
            k if k.starts_with("critic.megatron.") => critic_megatron.push((k.to_owned(), v.to_owned())),
            // Scripts for FSDP2 name every model's engine, and the actor engine's own key, which
            // the actor's `strategy` overrides (`FSDPActorConfig.__post_init__`, verl 0.9.1
            // verl/workers/config/actor.py; the reference takes the actor's, ref/ref.yaml).
            "actor_rollout_ref.ref.strategy"
            | "actor_rollout_ref.actor.fsdp_config.strategy"
            | "critic.strategy"
            | "reward_model.strategy" => engines.push((key.to_owned(), v.to_owned())),
            "trainer.n_gpus_per_node" => file.cluster.devices_per_node = Some(num(key, v)?),
            "trainer.nnodes" => file.cluster.nodes = num(key, v)?,
            k => r.rest.push((k.to_owned(), v.to_owned())),
        }
    }
    // The critic's engine is the actor's: a setting that differs is not the plan's.
    for (key, v) in critic_megatron {
        let mut actor = file.clone();
        let same = megatron_engine_key(&key["critic.megatron.".len()..], &v, &mut actor).unwrap_or(false)
            && actor.parallel == file.parallel
            && actor.recompute == file.recompute
            && actor.moe == file.moe
            && actor.precision == file.precision;
        if !same {
            r.rest.push((key, v));
        }
    }
    let actor = crate::emit::verl::strategy_of(file.framework, file.parallel.fsdp);
    r.rest.extend(engines.into_iter().filter(|(_, v)| v != actor));
    file.parallel.zero_stage = match (unsharded, resharded) {
        (true, _) => 0,
        (false, false) => 2,
        (false, true) => 3,
    };
    if let Some((written, dp)) = rollout_dp {
        let (tp, ep) = (file.rl.rollout_tp, file.rl.rollout_ep);
        if !(1 < ep && u64::from(dp) * u64::from(tp) == u64::from(ep)) {
            r.rest.push(("actor_rollout_ref.rollout.data_parallel_size".to_owned(), written));
        }
    }
    let update_budget = set_rl_autos(file, [mini, model_len, batched, budget]);
    // Each back to 0 ("the update's") where it is the update's.
    file.rl.log_prob_micro_batch = log_prob.filter(|&n| n != file.batch.micro_batch).unwrap_or(0);
    file.rl.log_prob_max_tokens_per_device = log_prob_budget.filter(|&n| n != update_budget).unwrap_or(0);
    Ok(r)
}

/// One key of VeRL's Megatron engine config (`megatron.yaml`, under `actor_rollout_ref.actor.megatron`),
/// read into the plan file; `false` for a key the plan does not take.
fn megatron_engine_key(key: &str, v: &str, file: &mut PlanFile) -> Result<bool, ImportError> {
    let flag = v.eq_ignore_ascii_case("true");
    let p = &mut file.parallel;
    let full = || format!("actor_rollout_ref.actor.megatron.{key}");
    match key {
        "tensor_model_parallel_size" => p.tp = num(&full(), v)?,
        "pipeline_model_parallel_size" => p.pp = num(&full(), v)?,
        "virtual_pipeline_model_parallel_size" if v == "null" => p.vpp = 1,
        "virtual_pipeline_model_parallel_size" => p.vpp = num(&full(), v)?,
        "context_parallel_size" => p.cp = num(&full(), v)?,
        "expert_model_parallel_size" => p.ep = num(&full(), v)?,
        "expert_tensor_parallel_size" if v == "null" => {}
        "expert_tensor_parallel_size" => p.etp = num(&full(), v)?,
        "sequence_parallel" => p.sequence_parallel = flag,
        "use_distributed_optimizer" => p.distributed_optimizer = flag,
        "param_offload" => p.offload_params = flag,
        "optimizer_offload" => p.offload_optimizer = flag,
        "dtype" => match engine_dtype(v) {
            Some(precision) => file.precision = precision,
            None => return Ok(false),
        },
        "override_transformer_config.recompute_granularity" => {
            file.recompute.granularity = match v {
                "full" => RecomputeGranularity::Full,
                "selective" => RecomputeGranularity::Selective,
                "null" => RecomputeGranularity::None,
                _ => return Ok(false),
            }
        }
        "override_transformer_config.recompute_method" => match RecomputeMethod::from_wire(v) {
            Some(m) => file.recompute.method = m,
            None if v == "null" => {}
            None => return Ok(false),
        },
        "override_transformer_config.recompute_num_layers" if v == "null" => {}
        "override_transformer_config.recompute_num_layers" => file.recompute.num_layers = num(&full(), v)?,
        "override_transformer_config.moe_token_dispatcher_type" => {
            match crate::plan::MoeDispatcher::from_wire(v) {
                Some(d) => file.moe.dispatcher = d,
                None => return Ok(false),
            }
        }
        "override_transformer_config.moe_grouped_gemm" => file.moe.grouped_gemm = flag,
        // Uneven stages: the plan's own split, whose first and last stages the file it writes
        // compares with these.
        "override_transformer_config.num_layers_in_first_pipeline_stage"
        | "override_transformer_config.num_layers_in_last_pipeline_stage" => {
            p.uneven_layers = true;
            return Ok(false);
        }
        "override_transformer_config.moe_permute_fusion" => file.moe.permute_fusion = flag,
        "override_ddp_config.overlap_grad_reduce" => p.overlap_grad_reduce = flag,
        "override_transformer_config.cp_comm_type" => match v {
            "a2a" => p.cp_algo = CpAlgo::AllToAll,
            "p2p" => p.cp_algo = CpAlgo::Ring,
            _ => return Ok(false),
        },
        _ => return Ok(false),
    }
    Ok(true)
}

/// The precision an engine's `dtype` names (both engines: `bfloat16`, their default, or `float16`).
fn engine_dtype(v: &str) -> Option<Precision> {
    match v {
        "float16" => Some(Precision::Fp16),
        "bfloat16" => Some(Precision::Bf16),
        _ => None,
    }
}

/// A Hydra value without the one pair of quotes around it (`"a,b"` and `'a,b'` are `a,b`), which the
/// VeRL emitter writes around text Hydra would otherwise read as syntax; the text inside stays as
/// it is, quotes included.
fn hydra_unquoted(value: &str) -> &str {
    let quoted = |q: char| value.len() >= 2 && value.starts_with(q) && value.ends_with(q);
    match quoted('"') || quoted('\'') {
        true => &value[1..value.len() - 1],
        false => value,
    }
}
