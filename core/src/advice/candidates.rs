//! The tuning moves worth trying on a plan, before any is evaluated: each a [`Candidate`], its code
//! and the plan-file changes that make it, from the frameworks' tuning docs and the parallelism
//! papers (each family's source beside it; docs/advice.md gives each "why"). Which moves help is
//! decided in [`super::rank`], on the changed plans.

use crate::field::Field;
use serde_json::Value;

use super::Move;
use crate::hardware::Vendor;
use crate::memory::Memory;
use crate::plan::{AttentionImpl, CpAlgo, Framework, Method, Plan, RecomputeGranularity, ZeroStage};
use crate::report::Fix;
use crate::rules;

/// A move to try and the plan-file changes, in order.
pub(super) struct Candidate {
    pub code: Move,
    pub changes: Vec<Fix>,
}

/// What the families read: the plan, its memory, and the facts about it several families share.
struct Ctx<'a> {
    plan: &'a Plan,
    mem: &'a Memory,
    /// Whether the plan fits in memory now.
    fits: bool,
    /// Whether the plan runs on a Megatron-family framework (`layout::model_parallel`).
    megatron: bool,
    /// Whether the plan runs on MindSpeed-LLM or MindSpeed-RL.
    mindspeed: bool,
    /// Whether the method is RL (GRPO or PPO).
    rl: bool,
    tp: u64,
    pp: u64,
    mbs: u64,
    per_node: u64,
}

fn fix(field: Field, value: impl Into<Value>) -> Fix {
    Fix { field, value: value.into() }
}

fn candidate(code: Move, changes: Vec<Fix>) -> Candidate {
    Candidate { code, changes }
}

/// Every move worth trying on `plan`, whose memory is `mem`, family by family. The order is the
/// ranking's tie-break (its sort is stable): a move keeps its place among equals.
pub(super) fn candidates(plan: &Plan, mem: &Memory, fits: bool) -> Vec<Candidate> {
    let p = &plan.parallel;
    let ctx = Ctx {
        plan,
        mem,
        fits,
        megatron: crate::layout::model_parallel(plan.framework),
        mindspeed: matches!(plan.framework, Framework::MindSpeedLlm | Framework::MindSpeedRl),
        rl: matches!(plan.method, Method::Grpo | Method::Ppo),
        tp: u64::from(p.tp.get()),
        pp: u64::from(p.pp.get()),
        mbs: u64::from(plan.batch.micro_batch.get()),
        per_node: u64::from(plan.cluster.devices_per_node.get()),
    };
    let mut res = megatron_switches(&ctx);
    res.extend(zero_ladder(&ctx));
    res.extend(onload(&ctx));
    res.extend(offload_to_host(&ctx));
    res.extend(megatron_host_optimizer(&ctx));
    res.extend(activation_moves(&ctx));
    res.extend(batch_moves(&ctx));
    res.extend(layout_moves(&ctx));
    res.extend(rl_moves(&ctx));
    res.extend(fp8(&ctx));
    res.extend(lora_all_targets(&ctx));
    res.extend(megatron_fsdp(&ctx));
    res.extend(no_sync_accumulation(&ctx));
    res.extend(zero_plus_plus(&ctx));
    res.extend(verl_fsdp2(&ctx));
    res.extend(megatron_low_precision_states(&ctx));
    res.extend(cheap_together(&ctx, &res));
    res
}

/// The Megatron family's switches that cost (almost) nothing: shard, overlap, fuse.
fn megatron_switches(ctx: &Ctx) -> Vec<Candidate> {
    let (plan, p, megatron, dp) = (ctx.plan, &ctx.plan.parallel, ctx.megatron, ctx.mem.dp);
    let mut res = Vec::new();
    // The distributed optimizer shards fp32 states over DP at almost no cost (Megatron-LM
    // docs/api-guide/dist_optimizer.md; MindSpeed docs/zh/features/distributed-optimizer.md).
    if megatron && !p.distributed_optimizer && 1 < dp {
        res.push(candidate(Move::DistributedOptimizer, vec![fix(Field::ParallelDistributedOptimizer, true)]));
    }
    // Overlap the gradient reduction (and the parameter gather) with compute (MindSpeed
    // docs/zh/features/async-ddp.md, async-ddp-param-gather.md); on DeepSpeed (and LLaMA-Factory
    // through it) `overlap_comm`, which overlaps the partitioned reductions ZeRO runs with the
    // backward (time/sharded.rs).
    let deepspeed_overlap = !megatron
        && p.zero_stage.shards_optimizer()
        && crate::knobs::applies(plan.framework, plan.method, crate::knobs::Knob::OverlapGradReduce).yes();
    if (megatron || deepspeed_overlap) && 1 < dp && !p.overlap_grad_reduce {
        let mut changes = vec![fix(Field::ParallelOverlapGradReduce, true)];
        // VeRL's Megatron engine has no parameter gather to overlap (`knobs::applies`).
        let gathers =
            crate::knobs::applies(plan.framework, plan.method, crate::knobs::Knob::OverlapParamGather);
        if p.distributed_optimizer && gathers.yes() {
            changes.push(fix(Field::ParallelOverlapParamGather, true));
        }
        res.push(candidate(Move::OverlapGradReduce, changes));
    }
    // Sequence parallelism with TP divides the activations TP leaves whole (Korthikanti et al. 2022).
    if megatron && 1 < ctx.tp && !p.sequence_parallel {
        res.push(candidate(Move::SequenceParallel, vec![fix(Field::ParallelSequenceParallel, true)]));
    }
    // TP communication pipelined with GEMMs: Transformer Engine's userbuffers (Megatron
    // `--tp-comm-overlap`), or Ascend CoC (MindSpeed docs/zh/features/communication-over-computation.md).
    // Both need sequence parallelism, which it turns on where the plan has it off (it costs no
    // time: the same volume as reduce-scatter and all-gather), so a plan without it is shown what
    // the overlap gains.
    if megatron && 1 < ctx.tp && !p.tp_comm_overlap && plan.method != Method::Lora {
        let code =
            if plan.hardware.hw.vendor == Vendor::Ascend { Move::AscendCoc } else { Move::TpCommOverlap };
        let mut changes = Vec::new();
        if !p.sequence_parallel {
            changes.push(fix(Field::ParallelSequenceParallel, true));
        }
        changes.push(fix(Field::ParallelTpCommOverlap, true));
        res.push(candidate(code, changes));
    }
    // MindSpeed's fused RMSNorm, SwiGLU and RoPE kernels (docs/zh/features/rms_norm.md, swiglu.md,
    // rotary-embedding.md), when the plan runs without them.
    if ctx.mindspeed && !p.fused_kernels {
        res.push(candidate(Move::FusedKernels, vec![fix(Field::ParallelFusedKernels, true)]));
    }
    res
}

/// The ZeRO ladder of the HF-path frameworks, cheapest first: 0 → 1 → 2 → 3 → 3 + offload
/// (transformers docs/source/en/deepspeed.md, "Select a ZeRO stage"), over the stages the
/// framework has ([`crate::choices::zero_offered`]: VeRL's has no ZeRO-1).
fn zero_ladder(ctx: &Ctx) -> Vec<Candidate> {
    let (plan, p) = (ctx.plan, &ctx.plan.parallel);
    let mut res = Vec::new();
    if ctx.megatron {
        return res;
    }
    let offered = crate::choices::zero_offered(plan.framework);
    match crate::choices::zero_above(plan.framework, p.zero_stage) {
        // One rung up; when it does not fit, the lowest rung that does (no climbing 1 → 2 → 3
        // through "still too big").
        Some(up) => {
            let fits_at = |stage: ZeroStage| {
                super::rank::evaluate_change(plan, &[fix(Field::ParallelZeroStage, stage.get())])
                    .is_some_and(|(_, m, _)| m.peak_bytes <= m.usable_bytes)
            };
            let rung = match ctx.fits {
                true => up,
                false => offered.iter().copied().filter(|&s| up <= s).find(|&s| fits_at(s)).unwrap_or(up),
            };
            res.push(candidate(Move::ZeroStage, vec![fix(Field::ParallelZeroStage, rung.get())]));
        }
        _ if !p.offload_optimizer => {
            res.push(candidate(Move::OffloadOptimizer, vec![fix(Field::ParallelOffloadOptimizer, true)]))
        }
        _ if !p.offload_params => {
            res.push(candidate(Move::OffloadParams, vec![fix(Field::ParallelOffloadParams, true)]))
        }
        _ => {}
    }
    if !ctx.fits {
        // Jump the ladder when one rung will not do: ZeRO-3, then offloading on top of it.
        if p.zero_stage.shards_optimizer() && !p.zero_stage.shards_gradients() {
            res.push(candidate(Move::ZeroStage3, vec![fix(Field::ParallelZeroStage, 3)]));
        }
        if !p.zero_stage.shards_params() {
            res.push(candidate(
                Move::OffloadOptimizer,
                vec![fix(Field::ParallelZeroStage, 3), fix(Field::ParallelOffloadOptimizer, true)],
            ));
        }
        if !p.offload_params && (!p.zero_stage.shards_params() || !p.offload_optimizer) {
            res.push(candidate(
                Move::OffloadParams,
                vec![
                    fix(Field::ParallelZeroStage, 3),
                    fix(Field::ParallelOffloadOptimizer, true),
                    fix(Field::ParallelOffloadParams, true),
                ],
            ));
        }
    }
    // Fewer shards communicate less when memory allows it.
    let down = crate::choices::zero_below(plan.framework, p.zero_stage);
    if let Some(down) = down.filter(|_| ctx.fits && !p.offload_optimizer && !p.offload_params) {
        res.push(candidate(Move::ZeroStageDown, vec![fix(Field::ParallelZeroStage, down.get())]));
    }
    res
}

/// The host offloads of a plan that fits without them, turned off: the states back on the device,
/// where the copies over the host link and the optimizer's step on the CPU no longer pace the step
/// (ZeRO-Offload, Ren et al. 2021, arXiv:2101.06840: offloading trades device memory for CPU
/// compute and host traffic). Where both the parameters and the optimizer's states are offloaded,
/// the parameters alone first: they move every micro-batch, the optimizer's states once a step
/// (ZeRO-Infinity, Rajbhandari et al. 2021, arXiv:2104.07857). Only settings the framework takes.
fn onload(ctx: &Ctx) -> Vec<Candidate> {
    use crate::knobs::{Knob, applies};
    let (plan, p) = (ctx.plan, &ctx.plan.parallel);
    let taken = |on: bool, knob: Knob| on && applies(plan.framework, plan.method, knob).yes();
    let offloads = [
        (taken(p.offload_params, Knob::OffloadParams), Field::ParallelOffloadParams),
        (taken(p.offload_optimizer, Knob::OffloadOptimizer), Field::ParallelOffloadOptimizer),
        (taken(p.swap_optimizer, Knob::SwapOptimizer), Field::ParallelSwapOptimizer),
        (taken(p.offload_policy, Knob::OffloadPolicy), Field::ParallelOffloadPolicy),
    ];
    let all: Vec<Fix> = offloads.iter().filter(|(on, _)| *on).map(|&(_, field)| fix(field, false)).collect();
    let mut res = Vec::new();
    if !ctx.fits || all.is_empty() {
        return res;
    }
    if offloads[0].0 && offloads[1].0 {
        res.push(candidate(Move::OnloadParams, vec![fix(Field::ParallelOffloadParams, false)]));
    }
    res.push(candidate(Move::Onload, all));
    res
}

/// States swapped to NVMe kept in host memory instead, whether the plan fits or not (the device
/// holds the same either way): the drive's reads and writes leave the step, and the node needs the
/// host memory the states take (ZeRO-Infinity, Rajbhandari et al. 2021: NVMe extends host memory
/// at a fraction of its bandwidth).
fn offload_to_host(ctx: &Ctx) -> Vec<Candidate> {
    let nvme = crate::memory::nvme_swap(ctx.plan);
    match nvme.optimizer || nvme.params {
        true => vec![candidate(Move::OffloadToHost, vec![fix(Field::ParallelOffloadDevice, "cpu")])],
        false => Vec::new(),
    }
}

/// The Megatron family's optimizer states off the device, for a plan that does not fit: Megatron-LM
/// steps them on the CPU (`--optimizer-cpu-offload`, over the distributed optimizer: rule
/// parallel.offload_needs_distributed_optimizer), MindSpeed swaps them to the host through forward
/// and backward and back for the step (`--swap-optimizer`, over the distributed optimizer:
/// `swap_optimizer_feature.py`; not for LoRA, `memory::swaps_optimizer`), VeRL's Megatron engine
/// moves them off between its updates (`optimizer_offload`).
fn megatron_host_optimizer(ctx: &Ctx) -> Vec<Candidate> {
    use crate::knobs::{Knob, applies};
    let (plan, p) = (ctx.plan, &ctx.plan.parallel);
    let takes = |knob: Knob| applies(plan.framework, plan.method, knob).yes();
    let (on, knob, field) = match ctx.mindspeed {
        // Swapped already, offloaded instead (which the swap then leaves alone), or LoRA's.
        true => (
            p.swap_optimizer || p.offload_optimizer || plan.trains_lora(),
            Knob::SwapOptimizer,
            Field::ParallelSwapOptimizer,
        ),
        false => (p.offload_optimizer, Knob::OffloadOptimizer, Field::ParallelOffloadOptimizer),
    };
    if !ctx.megatron || ctx.fits || on || !takes(knob) {
        return Vec::new();
    }
    let mut changes = Vec::new();
    if plan.framework != Framework::VerlMegatron && !p.distributed_optimizer {
        changes.push(fix(Field::ParallelDistributedOptimizer, true));
    }
    changes.push(fix(field, true));
    vec![candidate(Move::HostOptimizer, changes)]
}

/// Activations: recompute them, swap them to the host, or never keep the score matrix.
fn activation_moves(ctx: &Ctx) -> Vec<Candidate> {
    let plan = ctx.plan;
    let mut res = Vec::new();
    // Recomputation: trade compute for memory when it does not fit, memory for speed when it does.
    match (plan.recompute.granularity, ctx.fits) {
        (RecomputeGranularity::None, false) => {
            res.push(candidate(
                Move::RecomputeSelective,
                vec![fix(Field::RecomputeGranularity, "selective")],
            ));
            res.push(candidate(Move::RecomputeFull, vec![fix(Field::RecomputeGranularity, "full")]));
        }
        (RecomputeGranularity::Selective, false) => {
            res.push(candidate(Move::RecomputeFull, vec![fix(Field::RecomputeGranularity, "full")]))
        }
        (RecomputeGranularity::Full, true) => res.push(candidate(
            Move::RecomputeLess,
            vec![fix(Field::RecomputeGranularity, if ctx.megatron { "selective" } else { "none" })],
        )),
        // Selective recomputation reruns the attention core (and what `--recompute-modules` adds):
        // shown where keeping it all fits and runs faster.
        (RecomputeGranularity::Selective, true) => {
            res.push(candidate(Move::RecomputeLess, vec![fix(Field::RecomputeGranularity, "none")]))
        }
        _ => {}
    }
    // Swap attention activations to the host on Ascend (MindSpeed docs/zh/features/swap_attention.md).
    if ctx.mindspeed && !ctx.fits && !plan.recompute.swap_attention && plan.method != Method::Lora {
        res.push(candidate(Move::SwapAttention, vec![fix(Field::RecomputeSwapAttention, true)]));
    }
    // Flash attention never keeps the score matrix.
    if plan.attention == AttentionImpl::Eager {
        res.push(candidate(Move::FlashAttention, vec![fix(Field::Attention, "flash")]));
    }
    // Liger's kernels (LLaMA-Factory `enable_liger_kernel`, VeRL `use_liger`), on the models they
    // patch: fused norms, SwiGLU and rotary embedding, and for LLaMA-Factory's pre-training and SFT
    // a loss that keeps no logits.
    if !plan.liger_kernel && crate::memory::liger_patches_model(plan) {
        res.push(candidate(Move::LigerKernel, vec![fix(Field::LigerKernel, true)]));
    }
    // LLaMA-Factory's `pure_bf16` where it would train fp32 parameters in bf16 without DeepSpeed:
    // half the model states, offered for memory alone (it drops the fp32 master copy).
    let fp32 = crate::memory::fp32_trainables(plan) && plan.precision == crate::plan::Precision::Bf16;
    if !ctx.fits && fp32 {
        res.push(candidate(Move::PureBf16, vec![fix(Field::PureBf16, true)]));
    }
    // bitsandbytes' 8-bit AdamW where it keeps its moments on the device, without DeepSpeed or
    // handed to it: a byte a moment (`optim: adamw_8bit`).
    let adamw = plan.optimizer == crate::plan::Optimizer::AdamW;
    if !ctx.fits
        && adamw
        && crate::memory::eight_bit_adam_offered(plan)
        && !plan.parallel.offload_optimizer
        && crate::knobs::applies(plan.framework, plan.method, crate::knobs::Knob::Optimizer).yes()
    {
        res.push(candidate(Move::Adam8bit, vec![fix(Field::Optimizer, "adamw_8bit")]));
    }
    // GaLore over a full fine-tune without DeepSpeed (LLaMA-Factory refuses it under DeepSpeed and
    // beside LoRA): each linear weight's moments at the plan's rank, the rest AdamW's.
    let low_rank = crate::knobs::applies(plan.framework, plan.method, crate::knobs::Knob::LowRankRank).yes();
    if !ctx.fits && adamw && low_rank && !crate::memory::runs_deepspeed(plan) {
        res.push(candidate(Move::Galore, vec![fix(Field::Optimizer, "galore")]));
    }
    res
}

/// The micro-batch, and the micro-batches a pipeline needs to keep its bubble small.
fn batch_moves(ctx: &Ctx) -> Vec<Candidate> {
    let (plan, mem, pp, mbs) = (ctx.plan, ctx.mem, ctx.pp, ctx.mbs);
    let mut res = Vec::new();
    // Micro-batch: larger GEMMs run faster while memory lasts; smaller saves activations
    // (Narayanan et al. 2021, "Efficient Large-Scale Language Model Training on GPU Clusters Using
    // Megatron-LM", §3.4).
    let gbs = u64::from(plan.batch.global_batch.get());
    if ctx.fits && (2 * mbs).saturating_mul(mem.dp) <= gbs {
        res.push(candidate(Move::MicroBatchUp, vec![fix(Field::BatchMicroBatch, 2 * mbs)]));
    }
    if !ctx.fits && 1 < mbs {
        res.push(candidate(Move::MicroBatchDown, vec![fix(Field::BatchMicroBatch, mbs / 2)]));
    }
    // Pipeline: at least 4 × PP micro-batches (GPipe, Huang et al. 2019 §2.3: the bubble is
    // negligible when M ≥ 4 × K), or the interleaved schedule.
    if ctx.megatron && 1 < pp && mem.n_microbatches < 4 * pp {
        res.push(candidate(
            Move::MoreMicrobatches,
            vec![fix(Field::BatchGlobalBatch, (4 * pp * mbs).saturating_mul(mem.dp))],
        ));
    }
    if ctx.megatron
        && 1 < pp
        && plan.parallel.vpp.get() == 1
        && (plan.model.arch.n_layers / pp).is_multiple_of(2)
    {
        res.push(candidate(Move::Interleave, vec![fix(Field::ParallelVpp, 2)]));
    }
    res
}

/// Where the parallel groups sit, and which stack runs the plan.
fn layout_moves(ctx: &Ctx) -> Vec<Candidate> {
    let (plan, megatron, tp, pp, per_node) = (ctx.plan, ctx.megatron, ctx.tp, ctx.pp, ctx.per_node);
    let mut res = Vec::new();
    // TP stays inside a node (Narayanan et al. 2021 §3.2, takeaway #1). The cost order is
    // pp < dp < ep < cp < tp: Megatron's default rank order tp-cp-ep-dp-pp (`initialize_model_parallel`,
    // megatron/core/parallel_state.py) gives the most communicating groups the nearest ranks.
    if megatron && per_node < tp {
        res.push(candidate(
            Move::TpInNode,
            vec![fix(Field::ParallelTp, per_node), fix(Field::ParallelPp, pp.saturating_mul(tp) / per_node)],
        ));
    }
    if megatron && 2 < tp && !ctx.fits {
        res.push(candidate(Move::PpOverTp, vec![fix(Field::ParallelPp, pp.saturating_mul(2))]));
    }
    // Context parallelism's other exchange: the ring hides its K/V passes behind the attention core,
    // all-to-all moves Q, K, V and the output once with nothing to hide them (Jacobs et al. 2023
    // §3), so which is faster depends on the heads, the sequence and the links; the figure decides.
    let takes_algo = crate::knobs::applies(plan.framework, plan.method, crate::knobs::Knob::CpAlgo).yes();
    if takes_algo && 1 < plan.parallel.cp.get() {
        let other = match plan.parallel.cp_algo {
            CpAlgo::Ring => CpAlgo::AllToAll,
            CpAlgo::AllToAll => CpAlgo::Ring,
        };
        res.push(candidate(Move::CpAlgo, vec![fix(Field::ParallelCpAlgo, other.wire())]));
    }
    // The stack by cluster and model size: Megatron/MindSpeed from 32 devices and 100B parameters;
    // LLaMA-Factory (with ZeRO-3 for 70B+) below. Megatron's TP/PP beat ZeRO-3 at 175B and 530B as
    // devices are added (Narayanan et al. 2021 §5.2, Table 2); the thresholds are common practice,
    // not a measured crossover.
    let big = 100_000_000_000 <= ctx.mem.params_total && 32 <= plan.cluster.n_devices();
    let full = matches!(plan.method, Method::Pretrain | Method::SftFull);
    if big && full && !megatron {
        let framework = if plan.hardware.hw.vendor == Vendor::Ascend { "mindspeed-llm" } else { "megatron" };
        let tp_fix = rules::nearest_divisor(plan.model.arch.attention.n_heads(), per_node.min(8));
        res.push(candidate(
            Move::StackMegatron,
            vec![
                fix(Field::Framework, framework),
                fix(Field::ParallelTp, tp_fix),
                fix(Field::ParallelDistributedOptimizer, true),
            ],
        ));
    }
    res
}

/// RL: split long sequences, size the rollout engine.
fn rl_moves(ctx: &Ctx) -> Vec<Candidate> {
    let plan = ctx.plan;
    let mut res = Vec::new();
    if !ctx.rl {
        return res;
    }
    // VeRL long sequences: Ulysses sequence parallelism splits each sequence over `cp` devices
    // (`ulysses_sequence_parallel_size`, VeRL docs/perf/perf_tuning.rst; each device's token budget
    // then covers response / sp).
    let rl_len = u64::from(plan.rl.max_prompt_length.get()) + u64::from(plan.rl.max_response_length.get());
    if plan.framework == Framework::Verl && 8192 <= rl_len && plan.parallel.cp.get() == 1 {
        res.push(candidate(Move::VerlUlysses, vec![fix(Field::ParallelCp, 2)]));
    }
    // Rollout engine: TP of the engine and the sequences it decodes at once (VeRL
    // docs/perf/perf_tuning.rst, "Rollout Generation Tuning": a smaller tensor_parallel_size, a larger
    // max_num_seqs).
    let rollout_tp = u64::from(plan.rl.rollout_tp.get());
    if 1 < rollout_tp {
        res.push(candidate(Move::RolloutTpDown, vec![fix(Field::RlRolloutTp, rollout_tp / 2)]));
    }
    if 2 * rollout_tp <= ctx.per_node {
        res.push(candidate(Move::RolloutTpUp, vec![fix(Field::RlRolloutTp, 2 * rollout_tp)]));
    }
    // With routed experts, the next rollout EP: whole experts over more of the engine's ranks leave
    // more of its memory to the KV cache and each device fewer to read (vLLM `enable_expert_parallel`).
    if let Some(moe) = &plan.model.arch.moe {
        let world = plan.cluster.n_devices();
        let spread = u64::from(plan.rl.rollout_ep.get()).max(rollout_tp);
        let next = (spread + 1..=world.min(moe.n_experts))
            .find(|&d| crate::rules::rollout_ep_layout(plan, rollout_tp, d));
        if let Some(ep) = next {
            res.push(candidate(Move::RolloutEpUp, vec![fix(Field::RlRolloutEp, ep)]));
        }
    }
    let seqs = u64::from(plan.rl.max_num_seqs.get());
    res.push(candidate(Move::MaxNumSeqsUp, vec![fix(Field::RlMaxNumSeqs, 2 * seqs)]));
    // Log-probabilities scored in larger micro-batches (or packed rows) than the update's, where
    // the plan does not fit: their logits can be its peak (VeRL `log_prob_micro_batch_size_per_gpu`,
    // MindSpeed-RL `actor_`/`ref_forward_micro_batch_size`; memory/rl.rs). The largest smaller
    // setting that fits, as the memory finding's fix takes it, else the update's own.
    if let Some((field, values)) = crate::memory::log_prob_smaller(plan).filter(|_| !ctx.fits) {
        let fits = |v: u32| {
            super::rank::evaluate_change(plan, &[fix(field, u64::from(v))])
                .is_some_and(|(_, m, _)| m.peak_bytes <= m.usable_bytes)
        };
        let value = values.iter().copied().find(|&v| fits(v)).or(values.last().copied());
        if let Some(value) = value {
            res.push(candidate(Move::LogProbSmaller, vec![fix(field, u64::from(value))]));
        }
    }
    res
}

/// fp8 GEMMs on devices that have them (Hopper, Ada, Blackwell), with Transformer Engine.
fn fp8(ctx: &Ctx) -> Option<Candidate> {
    let plan = ctx.plan;
    let bf16 = plan.precision == crate::plan::Precision::Bf16;
    (ctx.megatron && plan.hardware.hw.has_fp8() && bf16 && !ctx.rl)
        .then(|| candidate(Move::PrecisionFp8, vec![fix(Field::Precision, "fp8")]))
}

/// LoRA on every linear layer learns closer to full fine-tuning than q/v alone (QLoRA paper §4;
/// LLaMA-Factory's default `lora_target: all`, src/llamafactory/hparams/finetuning_args.py); it
/// costs a little memory and time, shown as computed.
fn lora_all_targets(ctx: &Ctx) -> Option<Candidate> {
    let plan = ctx.plan;
    (plan.trains_lora() && plan.lora.targets != crate::plan::LoraTargets::All)
        .then(|| candidate(Move::LoraAllTargets, vec![fix(Field::LoraTargets, "all")]))
}

/// Megatron FSDP: parameters and gradients sharded too, when the distributed optimizer alone
/// leaves the plan too big (megatron/core/distributed/fsdp, `--use-megatron-fsdp`).
fn megatron_fsdp(ctx: &Ctx) -> Option<Candidate> {
    let plan = ctx.plan;
    let unsharded = plan.parallel.fsdp == crate::plan::Fsdp::None;
    (plan.framework == Framework::Megatron && !ctx.fits && 1 < ctx.mem.dp && unsharded).then(|| {
        candidate(
            Move::MegatronFsdp,
            vec![
                fix(Field::ParallelFsdp, "optim_grads_params"),
                fix(Field::ParallelDistributedOptimizer, true),
            ],
        )
    })
}

/// VeRL's FSDP engine reducing its gradients once an update instead of after every micro-batch
/// (`use_no_sync_for_gradient_accumulation`), where they are sharded over more than one rank: less
/// traffic for the whole model's gradients held unsharded (time/sharded.rs, memory/states.rs).
fn no_sync_accumulation(ctx: &Ctx) -> Option<Candidate> {
    let (plan, p) = (ctx.plan, &ctx.plan.parallel);
    let applies = crate::knobs::applies(plan.framework, plan.method, crate::knobs::Knob::NoSyncAccumulation);
    (applies.yes()
        && !p.no_sync_accumulation
        && p.zero_stage.shards_optimizer()
        && 1 < ctx.mem.dp * ctx.mem.layout.cp)
        .then(|| candidate(Move::NoSyncAccumulation, vec![fix(Field::ParallelNoSyncAccumulation, true)]))
}

/// DeepSpeed ZeRO++ all at once where ZeRO-3 spans nodes and none of it is on: hpZ over a node
/// (DeepSpeed's tutorial, deepspeed.ai/tutorials/zeropp: `zero_hpz_partition_size` the GPUs per
/// node), qwZ and qgZ. Shown where the step is faster (time/sharded.rs), which needs the traffic
/// to outlast the compute: the low-bandwidth clusters ZeRO++ was made for (ZeRO++, Wang et al.
/// 2023, arXiv 2306.10209).
fn zero_plus_plus(ctx: &Ctx) -> Option<Candidate> {
    let (plan, p) = (ctx.plan, &ctx.plan.parallel);
    let applies = crate::knobs::applies(plan.framework, plan.method, crate::knobs::Knob::ZeroHpz);
    let per_node = u64::from(plan.cluster.devices_per_node.get());
    let divides = plan.cluster.n_devices().is_multiple_of(per_node);
    (applies.yes()
        && !p.asks_zero_plus_plus()
        && p.zero_stage.shards_params()
        && 1 < plan.cluster.nodes.get()
        && divides)
        .then(|| {
            candidate(
                Move::ZeroPlusPlus,
                vec![
                    fix(Field::ParallelZeroHpz, per_node),
                    fix(Field::ParallelZeroQuantizedWeights, true),
                    fix(Field::ParallelZeroQuantizedGradients, true),
                ],
            )
        })
}

/// VeRL's FSDP engine on FSDP2 (`strategy: fsdp2`) where the plan does not fit: an untied
/// embedding becomes a unit of its own, its bf16 copy freed after its forward, where FSDP1's root
/// keeps it to the loss (memory/states.rs `verl_compute_copy_bytes`). Not under `no_sync`, where
/// FSDP2 accumulates the gradients in fp32, twice FSDP1's bytes.
fn verl_fsdp2(ctx: &Ctx) -> Option<Candidate> {
    let (plan, p) = (ctx.plan, &ctx.plan.parallel);
    let fsdp1 = plan.framework == Framework::Verl && p.fsdp == crate::plan::Fsdp::None;
    (fsdp1 && !ctx.fits && !p.no_sync_accumulation)
        .then(|| candidate(Move::VerlFsdp2, vec![fix(Field::ParallelFsdp, "torch_fsdp2")]))
}

/// Megatron's low-precision states, as Megatron-LM's own fp8 example runs them
/// (`examples/llama/train_llama3_8b_h100_fp8.sh`): gradients kept and reduced in bf16
/// (`--grad-reduce-in-bf16`, bf16 training) and, in fp8 training with the distributed optimizer or
/// Megatron FSDP, the linear weights kept in fp8 alone (`--fp8-param-gather`). Full training on
/// Megatron-LM and MindSpeed-LLM, whose parsers have both.
fn megatron_low_precision_states(ctx: &Ctx) -> Vec<Candidate> {
    let (plan, p) = (ctx.plan, &ctx.plan.parallel);
    let parsers = matches!(plan.framework, Framework::Megatron | Framework::MindSpeedLlm);
    if !parsers || plan.trains_lora() {
        return Vec::new();
    }
    let mut res = Vec::new();
    if crate::memory::bf16_training(plan.precision) && !p.grad_reduce_bf16 {
        res.push(candidate(Move::GradReduceBf16, vec![fix(Field::ParallelGradReduceBf16, true)]));
    }
    if crate::memory::fp8_parameters_fit(plan) && !p.fp8_param_gather {
        res.push(candidate(Move::Fp8ParamGather, vec![fix(Field::ParallelFp8ParamGather, true)]));
    }
    res
}

/// When it does not fit, the moves among `so_far` that cost (almost) no time, all at once: often
/// enough together where each alone is not.
fn cheap_together(ctx: &Ctx, so_far: &[Candidate]) -> Option<Candidate> {
    if ctx.fits {
        return None;
    }
    let cheap: Vec<Fix> = so_far
        .iter()
        .filter(|c| {
            matches!(
                c.code,
                Move::DistributedOptimizer
                    | Move::SequenceParallel
                    | Move::SwapAttention
                    | Move::GradReduceBf16
                    | Move::Fp8ParamGather
                    | Move::VerlFsdp2
            )
        })
        .flat_map(|c| c.changes.iter().cloned())
        .collect();
    (2 <= cheap.len()).then(|| candidate(Move::CheapTogether, cheap))
}
