//! RL training (VeRL, MindSpeed-RL) and its rollout engine (vLLM): prompts per update, the samples'
//! split over the actors, sequence and token budgets, the rollout's TP and memory, VeRL's Ulysses
//! sequence parallelism and LoRA rank.

use crate::field::Field;
use serde_json::Value;

use super::{Acc, Ctx, divisors_of, gcd, nearest_divisor, nearest_multiple};
use crate::plan::Framework;
use crate::report::{Code, Severity};

/// LoRA's rank against what vLLM serves, on VeRL.
pub(super) fn verl_lora_rank(cx: &Ctx, acc: &mut Acc) {
    use Severity::Error;
    let &Ctx { plan, rl, .. } = cx;
    if rl && plan.rl.lora && plan.framework == Framework::Verl && 512 < plan.lora.rank.get() {
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
    let split = world / cp.max(1);
    if plan.framework == Framework::Verl
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
    let per_device = u64::from(plan.rl.tokens_per_device(plan.framework, cp as u32));
    if plan.rl.dynamic_batch && per_device * cp.max(1) < sequence {
        // VeRL `seqlen_balancing.rearrange_micro_batches`: "max_token_len must be greater than
        // the sequence length" (the budget is per device × Ulysses SP); MindSpeed-RL packs alike.
        acc.push(
            Error,
            Code::RlTokenBudget,
            &[("budget", per_device.to_string()), ("tokens", sequence.to_string())],
            Some((Field::RlMaxTokensPerDevice, Value::from(sequence.div_ceil(cp.max(1))))),
        );
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
        // The smallest rollout TP whose weight shard leaves a fifth of the engine for KV cache.
        let all_weights = r.weights_bytes * rollout_tp;
        let fit = (1..=gcd(heads, world))
            .filter(|d| heads.is_multiple_of(*d) && world.is_multiple_of(*d))
            .find(|d| (all_weights / d) as f64 <= 0.8 * r.engine_bytes as f64);
        acc.push(Error, Code::RlEngineTooSmall, &[], fit.map(|d| (Field::RlRolloutTp, Value::from(d))));
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
