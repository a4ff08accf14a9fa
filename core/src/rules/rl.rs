//! RL training (VeRL, MindSpeed-RL) and its rollout engine (vLLM): prompts per update, the samples'
//! split over the actors, sequence and token budgets, the rollout's TP and memory, VeRL's Ulysses
//! sequence parallelism and LoRA rank.

use crate::field::Field;
use serde_json::Value;

use super::{Acc, Ctx, divisors_of, gcd, nearest_divisor, nearest_multiple};
use crate::plan::{Framework, Plan, ZeroStage};
use crate::report::{Code, Severity};

/// LoRA's rank against what vLLM serves, on VeRL.
pub(super) fn verl_lora_rank(cx: &Ctx, acc: &mut Acc) {
    use Severity::Error;
    let &Ctx { plan, rl, .. } = cx;
    if rl && plan.rl.lora && plan.framework.is_verl() && 512 < plan.lora.rank.get() {
        // vLLM serves the adapters with `max_lora_rank` at most 512 (vllm/config/lora.py
        // `MaxLoRARanks`); VeRL rounds a rank up to the next allowed value and refuses one above
        // (verl/utils/vllm/utils.py `get_vllm_max_lora_rank`).
        acc.push(
            Error,
            Code::VerlLoraRank,
            &[("rank", plan.lora.rank.to_string())],
            Some((Field::LoraRank, Value::from(512))),
        );
    }
}

/// A ZeRO stage VeRL's FSDP engine has no sharding for, ZeRO-1 ([`crate::choices::zero_offered`]).
/// The launch file writes the stage above's setting, which the fix names.
pub(super) fn verl_zero_stage(cx: &Ctx, acc: &mut Acc) {
    use Severity::Error;
    let &Ctx { plan, p, .. } = cx;
    if !crate::choices::zero_offered(plan.framework).contains(&p.zero_stage) {
        let above = crate::choices::zero_above(plan.framework, p.zero_stage).unwrap_or(ZeroStage::THREE);
        acc.push(Error, Code::VerlZeroStage, &[], Some((Field::ParallelZeroStage, Value::from(above.get()))));
    }
}

/// FSDP2's CPU offload (`offload_policy`) asked of VeRL's FSDP1 engine: `strategy: fsdp` builds its
/// actor with no CPU offload whatever the key says (`FSDPEngine._build_fsdp_module`,
/// verl/workers/engine/fsdp/transformer_impl.py at verl 0.9.1), so nothing leaves the device. The
/// fix runs FSDP2.
pub(super) fn verl_offload_policy_fsdp1(cx: &Ctx, acc: &mut Acc) {
    let &Ctx { plan, p, .. } = cx;
    if plan.framework == Framework::Verl && p.offload_policy && !crate::memory::verl_fsdp2(plan) {
        let fix = (Field::ParallelFsdp, Value::from(crate::plan::Fsdp::Torch.wire()));
        acc.push(Severity::Warning, Code::VerlOffloadPolicyFsdp1, &[], Some(fix));
    }
}

/// The prompts per update and their samples over the actors, and the sequence against the
/// engine's and the packer's token budgets.
pub(super) fn batches(cx: &Ctx, acc: &mut Acc) {
    use Severity::Error;
    let &Ctx { plan, world, cp, gbs, mbs, .. } = cx;
    let prompts = gbs;
    let mini = u64::from(plan.rl.mini_batch);
    if mini != 0 && (prompts < mini || !prompts.is_multiple_of(mini)) {
        // VeRL `ActorConfig.validate`: train_batch_size ≥ ppo_mini_batch_size; updates per step
        // = train_batch / mini (verl/workers/config/actor.py); MindSpeed-RL likewise.
        acc.push(
            Error,
            Code::RlMiniBatch,
            &[("mini", mini.to_string()), ("prompts", prompts.to_string())],
            Some((Field::RlMiniBatch, Value::from(nearest_divisor(prompts, mini)))),
        );
    }
    let n = u64::from(plan.rl.n_samples_per_prompt.get());
    // The actor's data-parallel ranks: the devices over Ulysses SP on FSDP, over TP × PP × CP on
    // Megatron; verl 0.9.1's engine worker asserts that a mini-batch's responses divide among them
    // (`TrainingWorker.train_batch`, verl/workers/engine_workers.py).
    let split = match plan.framework {
        Framework::VerlMegatron => cx.mem.dp,
        _ => world / cp.max(1),
    };
    if plan.framework.is_verl()
        && mini != 0
        && prompts.is_multiple_of(mini)
        && !(mini * n).is_multiple_of(split.max(1))
    {
        // VeRL FSDP worker normalization: ppo_mini_batch_size · n ÷ (world ÷ Ulysses SP) must be
        // whole, or samples are silently dropped (`ActorRolloutRefWorker.__init__`, fsdp_workers.py).
        let step = split / gcd(split, n);
        let fix = divisors_of(prompts)
            .filter(|d| d.is_multiple_of(step.max(1)))
            .min_by_key(|d| (d.abs_diff(mini), *d));
        acc.push(
            Error,
            Code::VerlMiniBatchSplit,
            &[("mini", mini.to_string()), ("n", n.to_string()), ("split", split.to_string())],
            fix.map(|d| (Field::RlMiniBatch, Value::from(d))),
        );
    }
    // VeRL's FSDP worker takes each device's share of a mini-batch's responses in micro-batches of
    // `ppo_micro_batch_size_per_gpu` (which the launch file sets to the plan's micro-batch), and
    // asserts they divide: "normalized ppo_mini_batch_size … should be divisible by
    // ppo_micro_batch_size_per_gpu" (`ActorRolloutRefWorker.__init__`, verl/workers/fsdp_workers.py).
    let mini_prompts = u64::from(plan.rl.mini_batch_prompts(plan.batch.global_batch.get()));
    let mini_per_device = mini_prompts * n / split.max(1);
    if plan.framework == Framework::Verl && 0 < mini_per_device && !mini_per_device.is_multiple_of(mbs.max(1))
    {
        acc.push(
            Error,
            Code::VerlMicroBatch,
            &[
                ("per_device", mini_per_device.to_string()),
                ("mini", mini_prompts.to_string()),
                ("n", n.to_string()),
                ("split", split.to_string()),
                ("micro_batch", mbs.to_string()),
            ],
            Some((Field::BatchMicroBatch, Value::from(nearest_divisor(mini_per_device, mbs)))),
        );
    }
    // A mean above its longest is counted as the longest: VeRL filters out prompts longer than
    // `max_prompt_length` (`filter_overlong_prompts`), and no response runs past
    // `max_response_length` (vLLM's `max_tokens` for each).
    let rl = &plan.rl;
    let means = [
        (rl.mean_prompt_length, rl.max_prompt_length, Code::RlMeanPromptLength, Field::RlMeanPromptLength),
        (
            rl.mean_response_length,
            rl.max_response_length,
            Code::RlMeanResponseLength,
            Field::RlMeanResponseLength,
        ),
    ];
    for (mean, longest, code, field) in means {
        if longest.get() < mean {
            let args = [("mean", mean.to_string()), ("max", longest.to_string())];
            acc.push(Severity::Warning, code, &args, Some((field, Value::from(longest.get()))));
        }
    }
    let sequence = u64::from(plan.rl.sequence_tokens());
    let model_len = u64::from(plan.rl.model_len());
    if model_len < sequence {
        // MindSpeed-RL validate_rl_args: max_model_len ≥ seq_length; VeRL's vLLM
        // rollout asserts max_model_len ≥ prompt_length + response_length.
        acc.push(
            Error,
            Code::RlMaxModelLen,
            &[("max_model_len", model_len.to_string()), ("tokens", sequence.to_string())],
            Some((Field::RlMaxModelLen, Value::from(0))),
        );
    }
    let batched = u64::from(plan.rl.batched_tokens());
    if batched < model_len {
        // vLLM SchedulerConfig: max_num_batched_tokens smaller than max_model_len limits the
        // sequence length (an error without chunked prefill; VeRL raises with it too).
        acc.push(
            Error,
            Code::RlMaxNumBatchedTokens,
            &[("batched", batched.to_string()), ("max_model_len", model_len.to_string())],
            Some((Field::RlMaxNumBatchedTokens, Value::from(model_len))),
        );
    }
    token_budget(plan, cp, sequence, acc);
}

/// The packer's token budget against the longest sequence (`sequence` tokens), with dynamic
/// batching. VeRL's budget is each device's, its packed row the budget × Ulysses SP (`cp`);
/// MindSpeed-RL's is the packed row itself, which its CP group splits
/// (`_split_batches_with_dynamic_bsz`).
fn token_budget(plan: &Plan, cp: u64, sequence: u64, acc: &mut Acc) {
    let budget = u64::from(plan.rl.tokens_per_device(plan.framework, cp as u32));
    let per_row = u64::from(crate::plan::packed_row_budgets(plan.framework, cp as u32));
    if plan.rl.dynamic_batch && budget * per_row < sequence {
        // VeRL `seqlen_balancing.rearrange_micro_batches`: "max_token_len must be greater than
        // the sequence length"; MindSpeed-RL's: "seqlen of items … must <= max_token_len"
        // (mindspeed_rl/utils/seqlen_balancing.py).
        acc.push(
            Severity::Error,
            Code::RlTokenBudget,
            &[("budget", budget.to_string()), ("tokens", sequence.to_string())],
            Some((Field::RlMaxTokensPerDevice, Value::from(sequence.div_ceil(per_row)))),
        );
    }
}

/// Whether the rollout can spread its experts over `ep` devices at rollout TP `tp`: whole TP × DP
/// groups that divide the devices (rule rl.rollout_ep) and, on VeRL, whole nodes (rule
/// verl.rollout_ep_nodes). What the search, the advice and the engine's fix walk.
pub(crate) fn rollout_ep_layout(plan: &Plan, tp: u64, ep: u64) -> bool {
    let per_node = u64::from(plan.cluster.devices_per_node.get());
    ep.is_multiple_of(tp.max(1))
        && plan.cluster.n_devices().is_multiple_of(ep.max(1))
        && (!plan.framework.is_verl() || ep.is_multiple_of(per_node))
}

/// The smallest rollout TP within the scale-up domain whose weights leave a fifth of the engine for
/// KV cache, its expert parallelism kept; failing that, with routed experts, the smallest rollout
/// EP that does; failing that, a TP across the domain (vLLM's TP spans nodes, over slower links).
fn engine_fix(cx: &Ctx, engine_bytes: u64) -> Option<(Field, Value)> {
    let &Ctx { plan, world, heads, .. } = cx;
    let counts = crate::model::count_params(&plan.model.arch);
    let fits = |tp: u64, ep: u64| {
        let (rest, experts) = crate::memory::rollout_weights_bytes(plan, &counts, tp, ep);
        (rest + experts) as f64 <= 0.8 * engine_bytes as f64
    };
    let (tp, ep) = (u64::from(plan.rl.rollout_tp.get()), u64::from(plan.rl.rollout_ep.get()));
    let domain = u64::from(plan.cluster.scale_up_domain.get());
    let tps = || {
        (1..=gcd(heads, world))
            .filter(move |d| {
                heads.is_multiple_of(*d) && world.is_multiple_of(*d) && (ep == 1 || ep.is_multiple_of(*d))
            })
            .filter(|&d| fits(d, ep))
    };
    let experts = plan.model.arch.moe.is_some();
    let spread = || {
        divisors_of(world)
            .filter(|d| experts && tp < *d && rollout_ep_layout(plan, tp, *d))
            .filter(|&d| fits(tp, d))
            .min()
            .map(|d| (Field::RlRolloutEp, d))
    };
    let within = tps().find(|&d| d <= domain).map(|d| (Field::RlRolloutTp, d));
    let across = || tps().next().map(|d| (Field::RlRolloutTp, d));
    within.or_else(spread).or_else(across).map(|(field, d)| (field, Value::from(d)))
}

/// The rollout engine's expert parallelism: on a model with routed experts, over whole TP × DP
/// groups of the devices (VeRL `RolloutConfig.__post_init__`: "expert_parallel_size must be equal
/// to tensor_model_parallel_size * data_parallel_size", verl/workers/config/rollout.py), over whole
/// nodes on VeRL, and on MindSpeed-RL a multiple of the actor's TP × EP, over which its training
/// spreads the experts.
pub(super) fn rollout_ep(cx: &Ctx, acc: &mut Acc) {
    use Severity::{Error, Warning};
    let &Ctx { plan, world, ep, .. } = cx;
    let (tp, rollout_ep) = (u64::from(plan.rl.rollout_tp.get()), u64::from(plan.rl.rollout_ep.get()));
    let experts = plan.model.arch.moe.is_some();
    let args = |extra: &[(&'static str, String)]| {
        let mut args = vec![("rollout_ep", rollout_ep.to_string()), ("rollout_tp", tp.to_string())];
        args.extend_from_slice(extra);
        args
    };
    // The rollout EP nearest the plan's that divides the devices and is a multiple of the TP and of
    // `step`; 1 when none.
    let nearest = |step: u64| {
        divisors_of(world)
            .filter(|d| d.is_multiple_of(tp) && d.is_multiple_of(step.max(1)))
            .min_by_key(|d| (d.abs_diff(rollout_ep), *d))
            .unwrap_or(1)
    };
    if 1 < rollout_ep && !experts {
        acc.push(Warning, Code::RlRolloutEpDense, &args(&[]), Some((Field::RlRolloutEp, Value::from(1))));
        return;
    }
    if 1 < rollout_ep && (!rollout_ep.is_multiple_of(tp) || !world.is_multiple_of(rollout_ep)) {
        acc.push(
            Error,
            Code::RlRolloutEp,
            &args(&[("world", world.to_string())]),
            Some((Field::RlRolloutEp, Value::from(nearest(1)))),
        );
        return;
    }
    let per_node = u64::from(plan.cluster.devices_per_node.get());
    if plan.framework.is_verl() && 1 < rollout_ep && !rollout_ep.is_multiple_of(per_node) {
        // With expert parallelism, a replica's workers on a node must be all of the node's
        // devices (`vLLMHttpServer.launch_server` asserts `len(self.workers) ==
        // data_parallel_size_local * tensor_model_parallel_size` with `data_parallel_size_local =
        // gpus_per_node // tensor_model_parallel_size`, verl/workers/rollout/vllm_rollout/
        // vllm_async_server.py), while a replica is TP × DP devices (verl/workers/rollout/replica.py).
        acc.push(
            Error,
            Code::VerlRolloutEpNodes,
            &args(&[("per_node", per_node.to_string())]),
            Some((Field::RlRolloutEp, Value::from(nearest(per_node)))),
        );
    }
    // MindSpeed-RL always spreads the engine's experts over its TP × `infer_expert_parallel_size`
    // ranks, and its weight resharding refuses a count the training's expert ranks do not divide
    // ("The training expert size should be divisibled by the inference expert size",
    // `MegatronStyleVllmWeightContainer._validate_parallel_config`,
    // mindspeed_rl/workers/resharding/vllm_weight_container.py): with EP above 1 the training
    // spreads its experts over TP × EP (`moe_tp_extend_ep`, which the launch file sets, rule
    // mindspeed_rl.tp_extend_ep).
    let spread = rollout_ep.max(tp);
    let trained = if 1 < ep { cx.tp * ep } else { 1 };
    if plan.framework == Framework::MindSpeedRl && experts && !spread.is_multiple_of(trained) {
        acc.push(
            Error,
            Code::MindspeedRlRolloutEp,
            &[("rollout", spread.to_string()), ("ep", trained.to_string())],
            Some((Field::RlRolloutEp, Value::from(nearest(trained)))),
        );
    }
    if let Some(moe) =
        plan.model.arch.moe.as_ref().filter(|_| plan.framework == Framework::MindSpeedRl && 1 < ep)
    {
        // `--moe-tp-extend-ep` (`MoETpExtendEpFeature.validate_args`,
        // mindspeed/features_manager/moe/tp_extend_ep.py): "only support when num_experts % ( tp * ep ) == 0"
        // (its need for no capacity factor holds: MindSpeed-RL's configs have no capacity flag), and
        // the all-to-all dispatcher.
        if !moe.n_experts.is_multiple_of(cx.tp * ep) {
            let fix = divisors_of(moe.n_experts / gcd(moe.n_experts, cx.tp).max(1))
                .filter(|d| cx.world.is_multiple_of(cx.tp * d))
                .min_by_key(|d| (d.abs_diff(ep), *d));
            acc.push(
                Error,
                Code::MindspeedRlTpExtendEp,
                &[("experts", moe.n_experts.to_string()), ("tp", cx.tp.to_string()), ("ep", ep.to_string())],
                fix.map(|d| (Field::ParallelEp, Value::from(d))),
            );
        }
        if plan.moe.dispatcher == crate::plan::MoeDispatcher::AllGather {
            // MindSpeed docs/features/megatron_moe/megatron-moe-tp-extend-ep.md: "当前仅支持alltoall
            // dispatcher" (the all-to-all dispatcher only).
            acc.push(
                Error,
                Code::MindspeedRlTpExtendEpDispatcher,
                &[],
                Some((Field::MoeDispatcher, Value::from("alltoall"))),
            );
        }
    }
}

/// The rollout engine: its TP against the devices and heads, its memory, and VeRL's Ulysses.
pub(super) fn rollout(cx: &Ctx, acc: &mut Acc) {
    use Severity::Error;
    let &Ctx { plan, mem, world, cp, gbs, heads, kv_heads, .. } = cx;
    let rollout_tp = u64::from(plan.rl.rollout_tp.get());
    if !world.is_multiple_of(rollout_tp) {
        acc.push(
            Error,
            Code::RlRolloutTp,
            &[("world", world.to_string()), ("rollout_tp", rollout_tp.to_string())],
            Some((Field::RlRolloutTp, Value::from(nearest_divisor(world, rollout_tp)))),
        );
    }
    if !heads.is_multiple_of(rollout_tp) {
        acc.push(
            Error,
            Code::RlRolloutTpHeads,
            &[("heads", heads.to_string()), ("rollout_tp", rollout_tp.to_string())],
            Some((Field::RlRolloutTp, Value::from(nearest_divisor(heads, rollout_tp)))),
        );
    }
    if plan.framework == Framework::MindSpeedRl && world.is_multiple_of(rollout_tp) {
        // MindSpeed-RL `validate_rl_args` (mindspeed_rl/config_cls/validate_config.py): the
        // generation's data parallel size is the actor's devices ÷ (infer TP · infer PP), and
        // `_validate_data_parallel(global_batch_size, generate_config.data_parallel_size, …,
        // "Generation")` needs the step's prompts to divide by it.
        let engines = world / rollout_tp;
        if !gbs.is_multiple_of(engines) {
            // The nearest rollout TP that keeps the other rollout rules, else the batch.
            let tp = divisors_of(gcd(heads, world))
                .filter(|&d| gbs.is_multiple_of(world / d))
                .min_by_key(|d| (d.abs_diff(rollout_tp), *d));
            let fix = match tp {
                Some(d) => (Field::RlRolloutTp, Value::from(d)),
                None => (Field::BatchGlobalBatch, Value::from(nearest_multiple(gbs, engines))),
            };
            acc.push(
                Error,
                Code::MindspeedRlGenerationDp,
                &[
                    ("prompts", gbs.to_string()),
                    ("engines", engines.to_string()),
                    ("world", world.to_string()),
                    ("rollout_tp", rollout_tp.to_string()),
                ],
                Some(fix),
            );
        }
    }
    let nodes = u64::from(plan.cluster.nodes.get());
    if plan.framework == Framework::MindSpeedRl && !gbs.is_multiple_of(nodes) {
        // MindSpeed-RL scores with the rule reward (the launch file sets `rule_reward: true`, no
        // reward model) one share of the step's prompts per Ray node, and `validate_rl_args`
        // raises "global_batch_size … must be divisible by the number of nodes in the ray cluster".
        acc.push(
            Error,
            Code::MindspeedRlRewardNodes,
            &[("prompts", gbs.to_string()), ("nodes", nodes.to_string())],
            Some((Field::BatchGlobalBatch, Value::from(nearest_multiple(gbs, nodes)))),
        );
    }
    if plan.rl.gpu_memory_utilization_frac >= 1.0 {
        acc.push(
            Error,
            Code::RlGpuMemoryUtilization,
            &[],
            Some((Field::RlGpuMemoryUtilization, Value::from(0.6))),
        );
    }
    if let Some(r) = &mem.rollout
        && r.kv_cache_bytes == 0
    {
        acc.push(
            Error,
            Code::RlEngineTooSmall,
            &[],
            if acc.lean { None } else { engine_fix(cx, r.engine_bytes) },
        );
    }
    if plan.framework == Framework::Verl && 1 < cp {
        // VeRL's `apply_monkey_patch` (verl/models/transformers/monkey_patch.py) asserts
        // `num_attention_heads % ulysses_sp_size == 0` and `num_key_value_heads % ulysses_sp_size == 0
        // or ulysses_sp_size % num_key_value_heads == 0` (fewer key/value heads are repeated); the
        // FSDP device mesh needs the devices to divide.
        let kv_fits = |d: u64| kv_heads.is_multiple_of(d) || d.is_multiple_of(kv_heads);
        let nearest = || {
            super::divisors_of(gcd(world, heads))
                .filter(|&d| kv_fits(d))
                .min_by_key(|d| (d.abs_diff(cp), *d))
                .unwrap_or(1)
        };
        if !world.is_multiple_of(cp) || !heads.is_multiple_of(cp) {
            acc.push(
                Error,
                Code::VerlUlysses,
                &[("cp", cp.to_string()), ("heads", heads.to_string()), ("world", world.to_string())],
                Some((Field::ParallelCp, Value::from(nearest()))),
            );
        } else if !kv_fits(cp) {
            acc.push(
                Error,
                Code::VerlUlyssesKvHeads,
                &[("cp", cp.to_string()), ("kv_heads", kv_heads.to_string())],
                Some((Field::ParallelCp, Value::from(nearest()))),
            );
        }
    }
}
