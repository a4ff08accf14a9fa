//! RL's memory beside training: the rollout engine's weights and KV cache, and the phases of a
//! step (generation, scoring, update) each at its own peak (docs/memory.md, "RL").

use super::*;

/// The rollout engine: vLLM reserves `gpu_memory_utilization` of the device for its weights and KV
/// cache (vLLM `gpu_memory_utilization`: "the fraction of GPU memory to be used for the model executor").
/// The KV cache a full batch needs: per token and layer, K and V of the key/value heads in bf16
/// (MLA: the compressed latent, `kv_lora_rank + qk_rope_head_dim`, as vLLM's MLA backends cache it),
/// sharded over the rollout TP. The weights are bf16: the routed experts spread over the rollout's
/// expert parallelism when it is on, the rest split by its TP ([`rollout_weights_bytes`]).
pub fn rollout_memory(plan: &Plan) -> RolloutMemory {
    rollout_memory_of(plan, &model::count_params(&plan.model.arch))
}

/// [`rollout_memory`] of a model of `counts` parameters (counted once, [`ModelFacts`]).
pub(super) fn rollout_memory_of(plan: &Plan, counts: &model::ParamCounts) -> RolloutMemory {
    let engine_bytes = (plan.hardware.hw.memory_bytes as f64 * plan.rl.gpu_memory_utilization_frac) as u64;
    let (rest_bytes, experts_bytes) = rollout_weights_bytes(
        plan,
        counts,
        u64::from(plan.rl.rollout_tp.get()),
        u64::from(plan.rl.rollout_ep.get()),
    );
    let weights_bytes = rest_bytes.saturating_add(experts_bytes);
    RolloutMemory {
        engine_bytes,
        weights_bytes,
        experts_bytes,
        kv_cache_bytes: engine_bytes.saturating_sub(weights_bytes),
        kv_cache_needed_bytes: kv_cache_needed_bytes(plan),
    }
}

/// The bf16 weights on the fullest device of a rollout engine at TP `tp` and EP `ep`: the rest and
/// the routed experts.
/// Without expert parallelism vLLM splits every layer, experts included, by the TP. With it
/// (`enable_expert_parallel`), each of the `rollout_ep` ranks holds whole experts, the first ranks
/// one more when they do not divide evenly (vLLM `determine_expert_map`,
/// `vllm/model_executor/layers/fused_moe/layer.py`), and the rest stays split by the TP;
/// MindSpeed-RL's engine spreads the experts over its TP × EP ranks the same way
/// (`vllm_weight_container.py`: `_infer_ep_size * _infer_tp_size`).
/// A multimodal wrapper's vision encoder, where the plan's framework loads it ([`vision_encoder`]),
/// is in the rest, split by the TP as vLLM's vision towers split their linear layers by default
/// (`Qwen2_5_VisionMLP`'s `MergedColumnParallelLinear` and `RowParallelLinear`,
/// vllm/model_executor/models/qwen2_5_vl.py; whole on every rank only with `mm_encoder_tp_mode:
/// data`).
pub fn rollout_weights_bytes(plan: &Plan, counts: &model::ParamCounts, tp: u64, ep: u64) -> (u64, u64) {
    let (tp, ep) = (tp.max(1), ep.max(1));
    let vision = loaded_vision_params(plan);
    let n_experts = plan.model.arch.moe.as_ref().map_or(0, |moe| moe.n_experts);
    if ep == 1 || n_experts == 0 {
        let all = counts.total().saturating_add(vision).saturating_mul(BF16_BYTES) / tp;
        let experts = counts.experts.saturating_mul(BF16_BYTES) / tp;
        return (all - experts.min(all), experts.min(all));
    }
    let rest =
        (counts.total().saturating_sub(counts.experts)).saturating_add(vision).saturating_mul(BF16_BYTES)
            / tp;
    let experts =
        (counts.experts / n_experts).saturating_mul(n_experts.div_ceil(ep)).saturating_mul(BF16_BYTES);
    (rest, experts)
}

/// The KV cache the rollout engine needs for `max_num_seqs` sequences of the longest prompt and
/// response, at the rollout's TP.
pub fn kv_cache_needed_bytes(plan: &Plan) -> u64 {
    let arch = &plan.model.arch;
    let rl = &plan.rl;
    let tp = u64::from(rl.rollout_tp.get());
    let per_token_layer = match arch.attention {
        model::Attention::Gqa { n_kv_heads, head_dim, .. } => {
            2 * n_kv_heads * head_dim * BF16_BYTES / tp.min(n_kv_heads)
        }
        model::Attention::Mla { kv_lora_rank, qk_rope_head_dim, .. } => {
            (kv_lora_rank + qk_rope_head_dim) * BF16_BYTES
        }
    };
    let max_model_len = u64::from(rl.max_prompt_length.get()) + u64::from(rl.max_response_length.get());
    // Saturating: u32 sequence counts and lengths can ask for more than 2^64 bytes.
    u64::from(rl.max_num_seqs.get())
        .saturating_mul(max_model_len)
        .saturating_mul(arch.n_layers)
        .saturating_mul(per_token_layer)
}

/// RL (GRPO, PPO): the actor, its frozen reference and (PPO) a critic of the same size share the
/// devices with the rollout engine. Phases, after VeRL's `ActorRolloutRefWorker` colocation:
/// rollout holds the engine (its `gpu_memory_utilization` share: weights at rollout TP and KV cache)
/// beside the training weights; log-prob adds inference activations; update is the training step.
///
/// Every rank goes through every phase, so each phase is taken at the rank where it peaks: with
/// pipeline stages, the rank holding the embedding or the head peaks in rollout (the most weights)
/// while a middle rank with more activations in flight may peak in the update.
pub(super) fn rl_phases(ctx: &Ctx, stages: &[StageMemory]) -> Vec<PhaseMemory> {
    let plan = ctx.plan;
    if !matches!(plan.method, Method::Grpo | Method::Ppo) {
        return Vec::new();
    }
    let capacity = plan.hardware.hw.memory_bytes as f64;
    let engine = (capacity * plan.rl.gpu_memory_utilization_frac) as u64;
    // One stage's parts in a phase, in the order they are listed; a zero part is left out at the end.
    let verl = plan.framework.is_verl();
    let (params_out, optimizer_out) =
        (verl && plan.parallel.offload_params, verl && plan.parallel.offload_optimizer);
    let unless = |bytes: u64, offloaded: bool| if offloaded { 0 } else { bytes };
    let mindspeed_rl = plan.framework == crate::plan::Framework::MindSpeedRl;
    let parts_of = |stage: &StageMemory, phase: &'static str| -> [(&'static str, u64); 9] {
        let compute_copy = match phase {
            "rollout" => verl_compute_copy_bytes(plan, ctx.summary, stage.params),
            _ => 0,
        };
        let critic = critic_bytes(
            plan,
            stage,
            phase,
            compute_copy.min(stage.weights_bytes),
            (params_out, optimizer_out),
        );
        // The reference model: frozen weights, sharded as the actor's; with LoRA it is the
        // actor's own base with the adapters disabled (VeRL `ref_in_actor` when lora_rank > 0);
        // none where VeRL's actor has no KL loss (`rl.kl_loss`, [`runs_reference`]).
        // Every launch file keeps it on the host but for its log-probabilities. VeRL's FSDP engine
        // keeps its shards there even then, the units FSDP keeps gathered after a forward alone
        // on the device ([`verl_reference_on_host`]). VeRL's Megatron engine loads its weights for
        // that pass and offloads them after (`megatron.param_offload=True`, verl 0.9.1
        // `BaseEngineCtx._context_switch`, verl/workers/engine/base.py), and MindSpeed-RL's
        // integrated worker around `compute_ref_log_prob` (mindspeed_rl/workers/integrated_worker.py).
        let reference = match phase {
            _ if plan.rl.lora || phase != "log_prob" || !runs_reference(plan) => 0,
            _ if verl_reference_on_host(plan) => verl_compute_copy_bytes(plan, ctx.summary, stage.params),
            _ => stage.weights_bytes,
        };
        // MindSpeed-RL's launch file offloads the actor's parameters, gradients and optimizer
        // states while the engine generates (`generate_config.offload_train_param`, `_grad`,
        // `_optimizer`: `MegatronShardingManager.enter_infer_mode`), and between updates keeps
        // the parameters alone (`exit_train_mode` offloads the optimizer states and gradients,
        // `enter_forward_mode` loads the parameters), mindspeed_rl/workers/resharding/megatron_sharding_manager.py.
        // VeRL's engine offloads what `param_offload` and `optimizer_offload` name outside its
        // passes: the parameters while the engine generates, the optimizer states until the
        // update (`BaseEngineCtx._context_switch`: eval mode loads the model alone, train mode the
        // model, gradients and optimizer; both offload them on exit), verl/workers/engine/base.py.
        let (w, o) = match phase {
            "rollout" if mindspeed_rl => (0, 0),
            "log_prob" if mindspeed_rl => (stage.weights_bytes, 0),
            "rollout" => (
                unless(stage.weights_bytes.saturating_sub(compute_copy), params_out),
                unless(stage.optimizer_bytes, optimizer_out),
            ),
            "log_prob" => (stage.weights_bytes, unless(stage.optimizer_bytes, optimizer_out)),
            _ => (stage.weights_bytes, stage.optimizer_bytes),
        };
        // Gradients are freed after each update (`zero_grad(set_to_none=True)`); the rest stays
        // unless offloaded. Rollout adds the engine, log-prob the logits, update the whole
        // training stage.
        let (b, h) = (stage.buffers_bytes, stage.overhead_bytes);
        let persistent = |extra| {
            [
                ("weights", w),
                ("optimizer", o),
                ("buffers", b),
                ("overhead", h),
                ("reference", reference),
                ("critic", critic),
                extra,
                ("", 0),
                ("", 0),
            ]
        };
        match phase {
            "rollout" => persistent(("engine", engine)),
            // VeRL takes the entropy with the old log-probabilities (`_compute_old_log_prob`:
            // `calculate_entropy=True`, verl/trainer/ppo/ray_trainer.py), through the logits'
            // softmax and its product with them (`entropy_from_logits`): three bf16 copies.
            // Its forwards score `log_prob_micro_batch` sequences at a time, not the update's
            // micro-batch, or packed by tokens their own budget ([`log_prob_share`]).
            "log_prob" if verl => {
                persistent(("logits", log_prob_logits(plan, ctx.cp, stage.logits_bytes).saturating_mul(3)))
            }
            // MindSpeed-RL's, one copy, of its own micro-batch or packed row alike
            // (`actor_`/`ref_forward_micro_batch_size`, `actor_`/`ref_max_packing_token_size`).
            "log_prob" => persistent(("logits", log_prob_logits(plan, ctx.cp, stage.logits_bytes))),
            _ => [
                ("weights", w),
                ("gradients", stage.gradients_bytes),
                ("optimizer", o),
                ("activations", stage.activations_bytes),
                ("logits", stage.logits_bytes),
                ("buffers", b),
                ("overhead", h),
                ("reference", reference),
                ("critic", critic),
            ],
        }
    };
    // Saturating, as `StageMemory::total`: an absurd plan's terms can each be near 2^64.
    let total = |parts: &[(&'static str, u64)]| parts.iter().fold(0u64, |acc, &(_, b)| acc.saturating_add(b));
    ["rollout", "log_prob", "update"]
        .into_iter()
        .map(|phase| {
            // Worked out on the stack for every rank (a pipeline may have thousands); the parts
            // listed are the highest rank's.
            let parts = stages
                .iter()
                .map(|stage| parts_of(stage, phase))
                .max_by_key(|parts| total(parts))
                .unwrap_or_else(|| parts_of(&StageMemory::default(), phase));
            let parts: Vec<(&'static str, u64)> = parts.into_iter().filter(|&(_, b)| 0 < b).collect();
            PhaseMemory { phase, total: total(&parts), parts }
        })
        .collect()
}

/// The logits of one log-probability forward where the update's micro-batch holds `update` bytes
/// of them ([`log_prob_share`]).
fn log_prob_logits(plan: &Plan, cp: u64, update: u64) -> u64 {
    let (scored, trained) = log_prob_share(plan, cp);
    let scaled = u128::from(update) * u128::from(scored) / u128::from(trained.max(1));
    u64::try_from(scaled).unwrap_or(u64::MAX)
}

/// What one log-probability forward takes on a device against one update micro-batch, as
/// (scored, trained) in the same unit: `log_prob_micro_batch` sequences against the update's
/// micro-batch; packed by tokens, the packed rows of `log_prob_max_tokens_per_device` against the
/// update's budget, each at least one sequence (as [`super::activations`] packs them), split over
/// the CP group.
pub(crate) fn log_prob_share(plan: &Plan, cp: u64) -> (u64, u64) {
    let rl = &plan.rl;
    let micro = plan.batch.micro_batch.get();
    if !rl.dynamic_batch {
        return (u64::from(rl.log_prob_micro(micro)), u64::from(micro));
    }
    let cp32 = u32::try_from(cp).unwrap_or(u32::MAX);
    let rows = u64::from(crate::plan::packed_row_budgets(plan.framework, cp32));
    let sequence = u64::from(rl.sequence_tokens()).div_ceil(cp.max(1));
    let tokens = |budget: u32| (u64::from(budget) * rows).div_ceil(cp.max(1)).max(sequence);
    (
        tokens(rl.log_prob_tokens_per_device(plan.framework, cp32)),
        tokens(rl.tokens_per_device(plan.framework, cp32)),
    )
}

/// Where the log-probabilities' forwards score more at once than the update trains on at once
/// (`log_prob_share`: `rl.log_prob_micro_batch` above the update's micro-batch, or packed by
/// tokens `rl.log_prob_max_tokens_per_device` above the update's budget), the smaller settings that
/// lower their logits, which none of the moves that shard or recompute does: the field and its
/// values, the plan's halved again and again, largest first, down to the update's own figure.
/// Larger ones cost fewer forwards (and VeRL's reference streams its shards once per micro-batch:
/// time/rl.rs); at most 32 values, a `u32` halved. `None` where they score no more, or the plan's
/// framework reads neither (VeRL and MindSpeed-RL do: `knobs::Knob::RlLogProbMicroBatch`).
pub fn log_prob_smaller(plan: &Plan) -> Option<(crate::field::Field, Vec<u32>)> {
    use crate::field::Field;
    use crate::knobs::{Knob, applies};
    let cp = plan.parallel.cp.get();
    let (scored, trained) = log_prob_share(plan, u64::from(cp));
    if trained >= scored || !applies(plan.framework, plan.method, Knob::RlLogProbMicroBatch).yes() {
        return None;
    }
    let rl = &plan.rl;
    let (field, now, update) = match rl.dynamic_batch {
        false => {
            let micro = plan.batch.micro_batch.get();
            (Field::RlLogProbMicroBatch, rl.log_prob_micro(micro), micro)
        }
        true => (
            Field::RlLogProbMaxTokensPerDevice,
            rl.log_prob_tokens_per_device(plan.framework, cp),
            rl.tokens_per_device(plan.framework, cp),
        ),
    };
    let halves = std::iter::successors(Some(now / 2), |v| Some(v / 2)).take_while(|&v| update < v);
    Some((field, halves.chain([update]).collect()))
}

/// PPO's critic's bytes in `phase` on a rank shaped like `stage` (the actor's, which the critic
/// matches in size), `compute_copy` of whose weights VeRL's FSDP holds only while it computes; 0
/// but for PPO. VeRL's launch file offloads it as the actor (its engine config takes the same
/// `param_offload` and `optimizer_offload`: `offloaded`, parameters and optimizer states): what it
/// offloads is out in every phase here, its own update taking what the actor's does, one after the
/// other. VeRL's FSDP holds its 16-bit copies only while it computes ([`verl_compute_copy_bytes`]),
/// not while the engine generates; the critic alike.
///
/// MindSpeed-RL's critic worker offloads its parameters, gradients and optimizer states after it
/// is built and after every update, whatever the launch file says, and brings its parameters in
/// for its values and the rest for its update alone (`CriticWorker`,
/// mindspeed_rl/workers/critic_worker.py at 05a90d7), one worker after the other (`blocking`,
/// ppo_trainer_hybrid.py): while it computes, the actor's states are out as the launch file asks
/// (`offload_train_*`), and as large. So it adds nothing to any phase's peak, but where LoRA's actor
/// keeps its backbone on the device (`share_backbone`) beside the critic's values and update.
fn critic_bytes(
    plan: &Plan,
    stage: &StageMemory,
    phase: &str,
    compute_copy: u64,
    offloaded: (bool, bool),
) -> u64 {
    let unless = |bytes: u64, out: bool| if out { 0 } else { bytes };
    let full =
        || stage.weights_bytes.saturating_add(stage.gradients_bytes).saturating_add(stage.optimizer_bytes);
    match plan.method {
        Method::Ppo if plan.framework == crate::plan::Framework::MindSpeedRl => {
            match (plan.trains_lora(), phase) {
                (false, _) | (true, "rollout") => 0,
                (true, "log_prob") => stage.weights_bytes,
                (true, _) => full(),
            }
        }
        Method::Ppo => {
            unless((stage.weights_bytes - compute_copy).saturating_add(stage.gradients_bytes), offloaded.0)
                .saturating_add(unless(stage.optimizer_bytes, offloaded.1))
        }
        _ => 0,
    }
}

/// The micro-batches a step runs per data-parallel rank when the RL framework packs them by
/// tokens (`use_dynamic_bsz`): each actor update's responses on a rank, at their mean lengths (the
/// attention mask's sum), in as many micro-batches as the token budget of the rank's CP group
/// takes, no more than the responses. VeRL: `rearrange_micro_batches`, `min(num_groups,
/// ceildiv(total_seqlen, max_token_len))` with `max_token_len = max_token_len_per_gpu · sp_size`
/// (verl/utils/seqlen_balancing.py and verl/workers/engine/utils.py at verl 0.9.1), a multiple of
/// pp where the Megatron engine interleaves (`microbatch_group_size_per_vp_stage`). MindSpeed-RL:
/// the prompts' and responses' lengths over `max_packing_token_size`, rounded up, the budget the
/// whole packed row's (`_split_batches_with_dynamic_bsz`, mindspeed_rl/models/base/
/// base_training_engine.py, and `rearrange_micro_batches`, mindspeed_rl/utils/seqlen_balancing.py).
/// `None` for any other plan, whose micro-batches hold `batch.micro_batch` samples.
pub fn packed_microbatches(plan: &Plan, dp: u64, cp: u64, pp: u64, vpp: u64) -> Option<u64> {
    let rl = &plan.rl;
    if !packs_microbatches(plan) {
        return None;
    }
    let global = plan.batch.global_batch.get();
    let updates = u64::from(global.div_ceil(rl.mini_batch_prompts(global).clamp(1, global)));
    let responses = (step_samples(plan) / updates.max(1)).div_ceil(dp.max(1)).max(1);
    let tokens = u64::from(rl.mean_prompt_tokens()) + u64::from(rl.mean_response_tokens());
    let row = u64::from(rl.tokens_per_device(plan.framework, cp as u32))
        * u64::from(crate::plan::packed_row_budgets(plan.framework, cp as u32));
    let mut per_update = responses.saturating_mul(tokens).div_ceil(row.max(1)).clamp(1, responses);
    if plan.framework.is_verl() && 1 < vpp {
        per_update = per_update.next_multiple_of(pp.max(1));
    }
    Some(updates.saturating_mul(per_update))
}

/// Whether the plan's micro-batches are packed by tokens ([`packed_microbatches`]): `batch.micro_batch`
/// then plays no part (VeRL's `prepare_micro_batches` reads `micro_batch_size_per_gpu` only
/// without `use_dynamic_bsz`, MindSpeed-RL's `_forward_backward_batch` its `micro_batch_size`).
pub fn packs_microbatches(plan: &Plan) -> bool {
    matches!(plan.method, Method::Grpo | Method::Ppo)
        && plan.rl.dynamic_batch
        && (plan.framework.is_verl() || plan.framework == crate::plan::Framework::MindSpeedRl)
}
