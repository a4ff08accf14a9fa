//! RL's phases before the actor's update: generating the responses in the rollout engine and
//! scoring them (log-probabilities under the actor and the reference).

use super::{Ctx, HBM_EFF, HOST_LINK_BYTES_PER_SECOND, gemm_efficiency};
use crate::memory;
use crate::plan::Plan;

/// RL's generation, per step (VeRL's `ActorRolloutRefWorker` phases): every device group of
/// `rollout_tp` runs an engine; each engine prefills its prompts (2 · N_active FLOPs per token,
/// compute-bound) and decodes its responses `max_num_seqs` at a time (fewer when its KV cache
/// cannot hold them), each decode step bound by reading the weights and the KV cache from memory
/// (Pope et al. 2022, "Efficiently Scaling Transformer Inference" §2) or by its FLOPs, whichever
/// is slower, then its collectives ([`decode_collectives_seconds`]). It depends on the rollout's
/// settings and the engine's memory alone, not on the training's layout.
///
/// Every response `max_response_length` long, the engine decodes in waves, each that many steps.
/// Given a shorter mean length, vLLM's continuous batching admits a waiting sequence as soon as one
/// finishes (`vllm/v1/core/sched/scheduler.py`): the steps are the engine's tokens over the
/// sequences it holds at once, and never fewer than the longest response takes.
pub(super) fn rollout_seconds(ctx: &Ctx, mem: &memory::Memory) -> f64 {
    let plan = ctx.plan;
    let rl = &plan.rl;
    let n_devices = plan.cluster.n_devices() as f64;
    let rollout_tp = f64::from(rl.rollout_tp.get());
    let engines = (n_devices / rollout_tp).max(1.0);
    let prompts = f64::from(plan.batch.global_batch.get());
    let sequences = prompts * f64::from(rl.n_samples_per_prompt.get()) / engines;
    let (longest_prompt, longest) =
        (f64::from(rl.max_prompt_length.get()), f64::from(rl.max_response_length.get()));
    // vLLM takes each prompt without padding (VeRL 0.9.1 `experimental/agent_loop/single_turn_agent_loop.py`
    // builds each prompt's token ids from its messages).
    let (prompt, response) = (f64::from(rl.mean_prompt_tokens()), f64::from(rl.mean_response_tokens()));
    let active = ctx.active_params;
    let peak = ctx.peak * rollout_tp;
    let prefill = 2.0 * active * sequences * prompt / (peak * gemm_efficiency(2.0 * active * prompt));
    // One token's KV cache on one device of an engine.
    let kv_per_token_device = memory::kv_cache_needed_bytes(plan) as f64
        / (f64::from(rl.max_num_seqs.get()) * (longest_prompt + longest));
    // The sequences an engine decodes at once: `max_num_seqs`, or fewer where the KV cache left
    // beside its weights cannot hold them at their average context (the prompt and half the
    // response). vLLM's scheduler admits a sequence only while free KV blocks remain and preempts
    // one when they run out (`vllm/v1/core/sched/scheduler.py`), so a short cache decodes in more
    // waves (VeRL `docs/perf/perf_tuning.rst`: raise `gpu_memory_utilization` or the rollout's TP
    // for a larger cache).
    let held = mem.rollout.as_ref().map_or(f64::INFINITY, |r| {
        (r.kv_cache_bytes as f64 / (kv_per_token_device * (prompt + 0.5 * response))).floor()
    });
    // Decode: per step, the weights (bf16) and the batch's KV cache so far cross the memory bus.
    let batch = sequences.min(f64::from(rl.max_num_seqs.get())).min(held).max(1.0);
    // Responses all as long as the longest run in whole waves; shorter on average, as many steps
    // as the tokens take at `batch` a step, and the longest's at least.
    let steps = match response < longest {
        true => (sequences * response / batch).max(longest),
        false => (sequences / batch).ceil() * longest,
    };
    let kv_per_token = kv_per_token_device * rollout_tp;
    let bandwidth = ctx.hw.memory_bytes_per_second * HBM_EFF * rollout_tp;
    let weights = decoded_weights_bytes(ctx, mem, batch);
    let mut decode = decode_collectives_seconds(ctx, batch);
    for step in [0.25, 0.75] {
        // Two-point average over the response: the KV cache grows linearly.
        let context = prompt + step * response;
        let bytes = weights + batch * context * kv_per_token;
        let flops = 2.0 * active * batch;
        decode += 0.5 * (bytes / bandwidth).max(flops / (peak * gemm_efficiency(flops)));
    }
    // A fit to a measured run's generation (`calibration.rollout_scale`, `logparse::calibrate`).
    (prefill + steps * decode) * plan.calibration.rollout()
}

/// Scoring the responses: a forward pass of the actor and of the reference over every response,
/// each about a third of the update's pipeline time without recomputation, the reference's no
/// shorter than bringing its weights from the host where they live there (`reference_stream`
/// seconds: [`reference_stream_seconds`]; FSDP copies the next unit's shard on a stream of its own
/// while the one before computes, so the longer of the two counts), and after moving its weights
/// in and out around the pass where they are offloaded whole (`reference_switch` seconds:
/// [`reference_switch_seconds`]); the actor's alone where the plan runs no reference
/// (`reference` is `None`: VeRL without its KL loss, [`memory::runs_reference`]). It grows with the
/// update's makespan, so a bound on that bounds it.
pub(super) fn log_prob_seconds(update_makespan: f64, reference: Option<(f64, f64)>) -> f64 {
    let forward = update_makespan / 3.0;
    match reference {
        Some((stream, switch)) => forward + forward.max(stream) + switch,
        None => forward,
    }
}

/// PPO's critic, a value model of the actor's size trained on the same devices (docs/memory.md,
/// "RL"), once a step beside the actor: its values, a forward over every response (a scoring
/// forward, a third of `scoring_basis`), then its update, the actor's again (`update_makespan`, and
/// `update_tail`: the update's gradient reduction, optimizer step and host moves). VeRL runs
/// `_compute_values` after the log-probabilities and `_update_critic` before `_update_actor`
/// (`RayPPOTrainer.fit`, verl/trainer/ppo/ray_trainer.py at verl 0.9.1); MindSpeed-RL its critic
/// worker's `compute_values` and `update_critic` (mindspeed_rl/trainer/ppo_trainer_hybrid.py at
/// 05a90d7); neither overlaps them with the actor's work. Its value head, one output, is lighter
/// than the actor's vocabulary head counted here: an overstatement of the head's share. 0 but
/// for PPO.
pub(super) fn critic_seconds(ctx: &Ctx, update_makespan: f64, update_tail: f64, scoring_basis: f64) -> f64 {
    match ctx.ppo {
        true => scoring_basis / 3.0 + update_makespan + update_tail,
        false => 0.0,
    }
}

/// The seconds a step's reference forwards spend bringing the reference's fp32 shards over the
/// host link, where VeRL's FSDP engine keeps them on the host ([`memory::verl_reference_on_host`]):
/// every unit's shard for every micro-batch, the reference scoring every response in its own
/// micro-batches (`ref.log_prob_micro_batch_size_per_gpu`, or `log_prob_max_token_len_per_gpu`
/// packed by tokens: the plan's `log_prob_micro_batch` and `log_prob_max_tokens_per_device`,
/// [`memory::log_prob_share`]). FSDP1 copies a unit's shard in before each forward even where the unit
/// is still gathered, as the root is (`FlatParamHandle.pre_unshard` → `_use_low_precision_shard`,
/// torch/distributed/fsdp/_flat_param.py at torch 2.11.0); FSDP2 skips its root's own (a final
/// norm, or a tied embedding), which this counts. VeRL pull request 7182 (2026) reports such
/// reference forwards 40–70 times as long as the actor's for a 4B model. 0 for any other plan.
pub(super) fn reference_stream_seconds(plan: &Plan, mem: &memory::Memory) -> f64 {
    let params = mem.stages.first().map_or(0, |s| s.params);
    let dp_cp = mem.dp.saturating_mul(mem.layout.cp);
    let shards = memory::verl_reference_host_bytes(plan, params, dp_cp) as f64;
    // The reference's micro-batches: the update's sequences, `log_prob_micro_batch` at a time.
    let (scored, trained) = memory::log_prob_share(plan, mem.layout.cp);
    let forwards = mem.n_microbatches.saturating_mul(trained).div_ceil(scored.max(1));
    shards * forwards as f64 / HOST_LINK_BYTES_PER_SECOND
}

/// The seconds a step spends moving the reference's weights in before its pass and out after,
/// where VeRL's Megatron engine offloads them whole between passes (`megatron.param_offload=True`
/// in the launch file; `BaseEngineCtx._context_switch`, verl/workers/engine/base.py, and
/// `load_megatron_model_to_gpu` / `offload_megatron_model_to_cpu` over pinned buffers,
/// verl/utils/megatron_utils.py at verl 0.9.1): the fullest stage's 16-bit weights each way over
/// the host link, the pass waiting on them. 0 for any other plan.
pub(super) fn reference_switch_seconds(plan: &Plan, mem: &memory::Memory) -> f64 {
    memory::verl_reference_switched_bytes(plan, &mem.stages) as f64 * 2.0 / HOST_LINK_BYTES_PER_SECOND
}

/// Handing the trained weights to the rollout engine, once a step, seconds (0 but for RL): VeRL
/// times it as `update_weights` after the actor's update (`RayPPOTrainer.fit`,
/// verl/trainer/ppo/ray_trainer.py at verl 0.9.1), MindSpeed-RL runs it as it enters inference,
/// before the next generation (`MegatronShardingManager.enter_infer_mode`,
/// mindspeed_rl/workers/resharding/megatron_sharding_manager.py at 05a90d7): one step's worth
/// either way. Each collective as the training's ([`super::comm::ring_seconds_on`]); the
/// engines' Python, their per-tensor calls and the rollout's KV cache being freed and remade are
/// not counted, so this is the least it takes.
///
/// - **VeRL's FSDP engine** gathers every parameter whole, in fp32 (its `model_dtype`), over the
///   FSDP group (`DTensor.full_tensor()` in `FSDPEngine.get_per_tensor_param`,
///   verl/workers/engine/fsdp/transformer_impl.py), and every device hands the whole model to the
///   engine beside it through a bucket in device memory, "model parameters … in fp32 full
///   precision" (`BucketedWeightSender`, verl/workers/rollout/vllm_rollout/bucketed_weight_transfer.py):
///   the bucket written and read, then the engine's TP share read and stored in bf16. A LoRA plan
///   hands its adapters alone once the base is in the engine (`base_sync_done`). With its
///   parameters offloaded, FSDP1 brings them in for the export and sends them out after
///   (`load_fsdp_model_to_gpu`, `offload_fsdp_model_to_cpu`); FSDP2 copies each shard in alone.
/// - **VeRL's Megatron engine** exports each tensor in bf16 to every rank (Megatron-Bridge
///   `export_hf_weights`, as `per_tensor_generator` in verl/utils/megatron_utils.py does: broadcast
///   over the pipeline's ranks, gathered over the TP ranks, routed experts over the EP ranks),
///   bringing offloaded parameters in first and sending them out after
///   (`load_megatron_model_to_gpu`; `engine_workers.py` step 3), then hands it over as above.
/// - **MindSpeed-RL** gathers its stage's tensors over the training's TP ranks, keeps the
///   rollout's TP share, and broadcasts each stage's share over the pipeline's ranks into the
///   engine's own weight buffers (`get_infer_params`: `_update_weight_buffers_intra_pp`, `_inter_pp`,
///   mindspeed_rl/workers/resharding/vllm_weight_container.py); no bucket, no host copy.
///
/// Where vLLM sleeps at level 1, it keeps its weights on the host during the training and brings
/// them back first (`CuMemAllocator.sleep(offload_tags=("weights",))`; VeRL resumes them before
/// every sync, verl/workers/engine_workers.py): VeRL on Ascend and a LoRA plan's adapter engine
/// sleep at level 1 (`vLLMHttpServer._resolve_sleep_level`,
/// verl/workers/rollout/vllm_rollout/vllm_async_server.py), its weights out and in over the host
/// link once a step.
pub(super) fn weight_sync_seconds(ctx: &Ctx, mem: &memory::Memory) -> f64 {
    let plan = ctx.plan;
    if !ctx.rl {
        return 0.0;
    }
    let hw = ctx.hw;
    let layout = &mem.layout;
    let domain = u64::from(plan.cluster.scale_up_domain.get());
    let gather = |bytes: f64, group: u64, stride: u64| {
        let bw = super::comm::group_bandwidth(hw, domain, group, stride);
        super::comm::ring_seconds_on(hw, bytes, group as f64, bw, false)
    };
    let rollout_tp = f64::from(plan.rl.rollout_tp.get());
    let lora = plan.trains_lora();
    let params = mem.params_total as f64;
    // The pipeline's ranks sit world ÷ PP apart (Megatron's order, PP outermost).
    let pp_stride = plan.cluster.n_devices() / layout.pp.max(1);
    let verl_offloaded = match plan.framework.is_verl() && plan.parallel.offload_params {
        true => super::tail::verl_offloaded_weights(ctx, mem) / HOST_LINK_BYTES_PER_SECOND,
        false => 0.0,
    };
    // What every device hands the engine beside it through the bucket, and the engine's store.
    let handover = |whole: f64| {
        let (trained, stored) = match lora {
            true => (whole, whole),
            false => (whole / rollout_tp, 2.0 * params / rollout_tp),
        };
        (2.0 * whole + trained + stored) / (hw.memory_bytes_per_second * HBM_EFF)
    };
    let synced = match plan.framework {
        crate::plan::Framework::Verl => {
            let whole = 4.0 * if lora { mem.params_lora as f64 } else { params };
            let group = match plan.parallel.zero_stage.get() {
                0 => 1,
                _ => layout.dp * layout.cp,
            };
            let moves = if memory::verl_fsdp2(plan) { 1.0 } else { 2.0 };
            gather(whole, group, 1) + handover(whole) + moves * verl_offloaded
        }
        crate::plan::Framework::VerlMegatron => {
            let bytes = memory::compute_bytes_per_param(plan);
            let whole = bytes * if lora { mem.params_lora as f64 } else { params };
            let experts = match plan.model.arch.moe.is_some() && !lora {
                true => bytes * memory::ModelFacts::recent(plan).summary().counts.experts as f64,
                false => 0.0,
            };
            let (tp, ep, etp) = (layout.tp, layout.ep, layout.etp);
            let dense = whole - experts;
            let held = dense / tp as f64 + experts / (ep * etp) as f64;
            gather(held, layout.pp, pp_stride)
                + gather(dense, tp, 1)
                + gather(experts / etp as f64, ep, etp)
                + gather(experts, etp, 1)
                + handover(whole)
                + 2.0 * verl_offloaded
        }
        _ => {
            let whole = memory::compute_bytes_per_param(plan) * params;
            gather(whole / layout.pp as f64, layout.tp, 1) + gather(whole / rollout_tp, layout.pp, pp_stride)
        }
    };
    let asleep_on_host = plan.framework.is_verl() && (hw.vendor == crate::hardware::Vendor::Ascend || lora);
    let woken = match asleep_on_host {
        true => 2.0 * mem.rollout.as_ref().map_or(0, |r| r.weights_bytes) as f64 / HOST_LINK_BYTES_PER_SECOND,
        false => 0.0,
    };
    synced + woken
}

/// The weights one engine reads from memory per decode step, bf16, over all its devices. A dense
/// model: every weight a token passes through. A MoE layer reads each expert any token of the step
/// routes to: of E experts, with top-k routing spread evenly, B tokens leave an expert untouched
/// with probability (1 − k/E)^B, so a step reads 1 − (1 − k/E)^B of the experts' weights (k/E for a
/// single sequence, the active parameters; nearly all of them for a batch of hundreds, why MoE
/// decoding is bound by the whole model's weights: DeepSpeed-MoE, Rajbhandari et al. 2022 §5).
/// With the rollout's expert parallelism the experts are spread over its TP × DP ranks, which route
/// all their engines' tokens together: each device reads its own experts' share, the fullest
/// device's as the engine's memory holds them ([`memory::rollout_weights_bytes`]; the all-to-all
/// between them: [`decode_collectives_seconds`]).
fn decoded_weights_bytes(ctx: &Ctx, mem: &memory::Memory, batch: f64) -> f64 {
    let rl = &ctx.plan.rl;
    let moe = ctx.plan.model.arch.moe.as_ref();
    let (Some(moe), Some(engine)) = (moe, mem.rollout.as_ref().filter(|r| 0 < r.experts_bytes)) else {
        return 2.0 * ctx.active_params;
    };
    let tp = f64::from(rl.rollout_tp.get());
    let spread = f64::from(rl.rollout_ep.get()).max(tp);
    let (e, k) = (moe.n_experts as f64, (moe.top_k as f64).min(moe.n_experts as f64));
    let touched = 1.0 - (1.0 - k / e).powf(batch * spread / tp);
    let (experts, rest) = (engine.experts_bytes as f64, (engine.weights_bytes - engine.experts_bytes) as f64);
    tp * (rest + touched * experts)
}

/// One all-reduce of a decode step's `bytes` over the rollout's `tp` ranks: a ring's bytes over
/// the group's links, inside an NVIDIA node at the fixed cost of vLLM's own kernel as measured,
/// elsewhere at the training's. Against vLLM's all-reduce on H100 today (the fastest of its
/// backends at each size, as it picks them: custom all-reduce, then symmetric memory; vllm-project/
/// vllm pull request 24111), at TP 4 and 6 from 0.5 to 4 MiB: within 16 % (the test below).
fn decode_all_reduce_seconds(hw: &crate::hardware::Hardware, domain: u64, tp: u64, bytes: f64) -> f64 {
    let bw = super::comm::group_bandwidth(hw, domain, tp, 1);
    let latency = match hw.vendor == crate::hardware::Vendor::Nvidia && tp <= domain {
        true => super::DECODE_ALL_REDUCE_LATENCY_SECONDS,
        false => hw.collective_latency_seconds,
    };
    super::comm::ring_seconds_at(latency, hw, bytes, tp as f64, bw, true)
}

/// The collectives of one decode step of an engine holding `batch` sequences, seconds: with the
/// rollout's TP, an all-reduce of the step's hidden states after each layer's attention and after
/// each MLP (Megatron's split, which vLLM's `RowParallelLinear` keeps: Shoeybi et al. 2019 §3);
/// with its EP, each MoE layer's tokens dispatched to their experts' ranks and combined back (two
/// all-to-alls, timed as the training's collectives) instead of the MLP's all-reduce. At
/// decode's small messages an all-reduce costs mostly its fixed latency, and a step makes two a
/// layer: Llama 3.1 8B at TP 8 makes 64, 0.6 ms at one sequence, nearly as long as reading its
/// 16 GB of weights over eight H100s at 80 % of 3.35 TB/s (0.75 ms). Prefill's collectives (large
/// messages, a few calls per prompt) are not counted.
fn decode_collectives_seconds(ctx: &Ctx, batch: f64) -> f64 {
    let (plan, hw, arch) = (ctx.plan, ctx.hw, ctx.arch);
    let (tp, ep) = (u64::from(plan.rl.rollout_tp.get()), u64::from(plan.rl.rollout_ep.get()));
    let domain = u64::from(plan.cluster.scale_up_domain.get());
    let hidden_bytes = batch * arch.hidden_size as f64 * 2.0;
    let layers = arch.n_layers as f64;
    let all_reduce = decode_all_reduce_seconds(hw, domain, tp, hidden_bytes);
    let (moe_layers, all_to_all) = match (arch.moe.as_ref(), 1 < ep) {
        (Some(moe), true) => {
            // Each of the EP group's ranks sends the others their share ((g − 1)/g, the ring's
            // one-way factor) of its tokens' k copies (the engine's tokens spread over its TP
            // ranks), each way.
            let bytes = hidden_bytes * moe.top_k as f64 / tp as f64;
            let bw = super::comm::group_bandwidth(hw, domain, ep, 1);
            let call = super::comm::ring_seconds_on(hw, bytes, ep as f64, bw, false);
            (crate::model::moe_layers_in(arch, 0..arch.n_layers) as f64, 2.0 * call)
        }
        _ => (0.0, 0.0),
    };
    (2.0 * layers - moe_layers) * all_reduce + moe_layers * all_to_all
}

#[cfg(test)]
mod tests {
    use super::*;

    /// vLLM's all-reduce on H100s behind NVSwitch, the fastest of its backends at each size (the
    /// "Best" column of vllm-project/vllm pull request 24111's device-communicator benchmark, bf16
    /// tensors of (32 … 256) × 8192, ms): the decode all-reduce keeps within 20 % of each.
    #[test]
    fn the_decode_all_reduce_keeps_to_vllms_measured_times() {
        let hw = crate::hardware::device("h100-sxm-80g").expect("in the catalog");
        let mib = 1024.0 * 1024.0;
        let measured = [
            (4, 0.5, 0.010),
            (4, 1.0, 0.015),
            (4, 2.0, 0.022),
            (4, 4.0, 0.029),
            (6, 0.5, 0.013),
            (6, 1.0, 0.016),
            (6, 2.0, 0.021),
            (6, 4.0, 0.031),
        ];
        for (tp, size, ms) in measured {
            let modelled = decode_all_reduce_seconds(&hw, 8, tp, size * mib) * 1e3;
            assert!(
                (modelled / ms - 1.0).abs() <= 0.2,
                "TP {tp}, {size} MiB: {modelled:.4} ms against {ms} ms"
            );
        }
    }
}
