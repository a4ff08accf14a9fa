//! A VeRL `main_ppo` Hydra override list.

// The importer's shared types and helpers, and its imports (mod.rs).
use super::*;

/// VeRL's overrides: the RL loop, the FSDP actor (by default ZeRO-3's sharding), the vLLM engine, the cluster
/// and the paths. Values the plan derives by itself come back as 0, "automatic".
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
    // The rollout's DP: with expert parallelism, EP ÷ TP (which the plan derives); else not the plan's.
    let mut rollout_dp: Option<(String, u32)> = None;
    let (mut unsharded, mut resharded) = (false, true);
    for w in words(text) {
        let Some((key, value)) = w.split_once('=') else { continue };
        if !key.contains('.') {
            // Hydra's own options: a config other than `ppo_trainer` (`ppo_megatron_trainer`, the
            // Megatron backend the plan does not model) is said, not passed over.
            if key == "--config-name" && hydra_unquoted(value).trim_end_matches(".yaml") != "ppo_trainer" {
                r.rest.push((key.to_owned(), value.to_owned()));
            }
            continue;
        }
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
            "actor_rollout_ref.actor.use_dynamic_bsz" => file.rl.dynamic_batch = flag(v),
            "actor_rollout_ref.actor.ppo_max_token_len_per_gpu" => budget = Some(num(key, v)?),
            "actor_rollout_ref.model.use_remove_padding" => file.rl.remove_padding = flag(v),
            "actor_rollout_ref.model.use_liger" => file.liger_kernel = flag(v),
            "actor_rollout_ref.rollout.enforce_eager" => file.rl.enforce_eager = flag(v),
            "actor_rollout_ref.rollout.max_model_len" => model_len = Some(num(key, v)?),
            "actor_rollout_ref.rollout.max_num_batched_tokens" => batched = Some(num(key, v)?),
            "actor_rollout_ref.actor.ulysses_sequence_parallel_size" => file.parallel.cp = num(key, v)?,
            "actor_rollout_ref.actor.fsdp_config.param_offload" => file.parallel.offload_params = flag(v),
            "actor_rollout_ref.actor.fsdp_config.optimizer_offload" => {
                file.parallel.offload_optimizer = flag(v)
            }
            // The sharding (`sharding` in emit/verl.rs): over no rank, or the gradients and
            // optimizer states alone; a group of other ranks (HSDP) is no ZeRO stage.
            "actor_rollout_ref.actor.fsdp_config.fsdp_size" => match v.trim() {
                "1" => unsharded = true,
                "-1" => {}
                _ => r.rest.push((key.to_owned(), v.to_owned())),
            },
            "actor_rollout_ref.actor.fsdp_config.reshard_after_forward" => resharded = flag(v),
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
            "actor_rollout_ref.model.lora_rank" => {
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
            "actor_rollout_ref.model.lora_alpha" => file.lora.alpha = num(key, v)?,
            "trainer.n_gpus_per_node" => file.cluster.devices_per_node = Some(num(key, v)?),
            "trainer.nnodes" => file.cluster.nodes = num(key, v)?,
            k => r.rest.push((k.to_owned(), v.to_owned())),
        }
    }
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
    set_rl_autos(file, [mini, model_len, batched, budget]);
    Ok(r)
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
