//! The data-parallel traffic of every micro-batch where the gradients (and with them, often, the
//! parameters) are sharded:
//! - DeepSpeed ZeRO-2 and 3 reduce the gradients after each micro-batch's backward, not once a step
//!   ("ZeRO stage >= 2 communicates during non gradient accumulation boundaries as well",
//!   `DeepSpeedEngine.allreduce_gradients`, deepspeed/runtime/engine.py at v0.19.8), and ZeRO-3
//!   gathers each module's parameters before its forward and again before its backward, releasing
//!   them after each (`pre_sub_module_forward_function`, `pre_sub_module_backward_function`,
//!   deepspeed/runtime/zero/parameter_offload.py);
//! - VeRL's FSDP engine reduces after every micro-batch too
//!   (`use_no_sync_for_gradient_accumulation: false`, verl/trainer/config/engine/fsdp.yaml at verl
//!   0.9.1), in fp32 (`mixed_precision.reduce_dtype: fp32`), and gathers the parameters for forward
//!   and, resharded after it (ZeRO-3, its default), again for backward;
//! - Megatron FSDP and PyTorch FSDP2 on the Megatron path run the same traffic ([`traffic`]).
//!
//! The traffic runs beside the compute, prefetched and on a stream of its own, so a pass takes the
//! longer of its compute and the traffic behind it; a reduction DeepSpeed is told not to overlap
//! (`overlap_comm: false`) adds to the backward. Across nodes, where a model's gathers outlast its
//! compute, this is what sets the step (ZeRO paper, Rajbhandari et al. 2020, §7.2: 3Ψ a step for
//! ZeRO-3, here once per micro-batch). Megatron's DDP, its distributed optimizer and Megatron FSDP
//! sharding the optimizer alone, which accumulate under `no_sync`, and every plan with a pipeline
//! keep their reduction once a step (`tail.rs`).

use super::Ctx;
use super::comm::{group_bandwidth, ring_seconds_on};
use super::tail::{Share, gradient_bytes_per_param, share};
use crate::hardware::Hardware;
use crate::memory;
use crate::plan::{Framework, Fsdp, Precision};

/// How a plan's data-parallel states move every micro-batch.
pub(super) struct Traffic {
    /// Parameter gathers per micro-batch: before the forward, and again before the backward
    /// where they were resharded after it.
    gathers: u8,
    /// Whether the gradients are reduce-scattered (sharded) rather than all-reduced.
    sharded: bool,
    /// Whether the reduction overlaps the backward.
    overlapped: bool,
    /// The data-parallel group's ranks (with CP's) and the bandwidth each gets.
    dp_cp: f64,
    bandwidth: f64,
    /// Bytes a gathered parameter and a reduced gradient take.
    param_bytes_max: f64,
    grad_bytes: f64,
    /// The share of the parameters that trains: LoRA's adapters, else all.
    trainable_share: f64,
}

/// The traffic of each micro-batch where the plan runs it (data parallel, no pipeline, the
/// gradients reduced per micro-batch), else `None`.
pub(super) fn traffic(ctx: &Ctx, mem: &memory::Memory) -> Option<Traffic> {
    let (plan, p) = (ctx.plan, &ctx.plan.parallel);
    let layout = &mem.layout;
    // With a pipeline, Megatron FSDP would gather and reduce every micro-batch too, but the page's
    // size-first build ran every deep pipeline's estimate a third slower in the browser whenever
    // pipelines could take that path (the benchmark grid's worst plan in wasm 23 → 31 µs, its code
    // unchanged): left out, so a pipeline keeps one reduction a step (docs/time.md).
    if layout.pp != 1 {
        return None;
    }
    let zero = p.zero_stage;
    // (gathers per micro-batch, whether the gradients are sharded, the reduction overlapped).
    let (gathers, sharded, overlapped) = match plan.framework {
        // Megatron FSDP reduces every backward where it shards the gradients ("Only reduce if we
        // are sharding gradients, or are on the final microbatch", `grad_reduce_every_bprop`,
        // megatron/core/distributed/fsdp/src/megatron_fsdp/megatron_fsdp.py) and, sharding the
        // parameters, gathers them for each layer's forward and again for its backward, prefetched
        // (its docs/runtime_schedule.md); PyTorch FSDP2 alike, Megatron's wrapper keeping its default
        // `reshard_after_forward=True` and a `no_sync` that does nothing
        // (megatron/core/distributed/torch_fully_sharded_data_parallel.py, data_parallel_base.py,
        // at Megatron-LM d98e8a6). Both reduce on a stream of their own.
        _ if layout.model_parallel => match p.fsdp {
            Fsdp::OptimGrads => (0, true, true),
            Fsdp::OptimGradsParams | Fsdp::Torch => (2, true, true),
            Fsdp::None | Fsdp::Optim => return None,
        },
        Framework::DeepSpeed | Framework::LlamaFactory if zero.shards_gradients() => {
            (if zero.shards_params() { 2 } else { 0 }, true, p.overlap_grad_reduce)
        }
        // FSDP2 reduce-scatters in its post-backward hooks on a stream of its own, always overlapped;
        // ZeRO-1 and 2 keep the parameters gathered from forward to backward
        // (`reshard_after_forward: False`, emit/verl.rs), ZeRO-0 replicates them (`fsdp_size: 1`) and
        // all-reduces.
        Framework::Verl => match zero.get() {
            0 => (0, false, true),
            1 | 2 => (1, true, true),
            _ => (2, true, true),
        },
        _ => return None,
    };
    moving(ctx, mem, (gathers, sharded, overlapped))
}

/// The traffic of a plan that moves its states every micro-batch: `gathers` parameter gathers,
/// the gradients `sharded` (reduce-scattered) or all-reduced, the reduction `overlapped` with the
/// backward; `None` without data parallelism.
fn moving(
    ctx: &Ctx,
    mem: &memory::Memory,
    (gathers, sharded, overlapped): (u8, bool, bool),
) -> Option<Traffic> {
    let plan = ctx.plan;
    let layout = &mem.layout;
    let Share { dp_cp, trainable_share, .. } = share(ctx, mem);
    if dp_cp <= 1.0 {
        return None;
    }
    let (tp, cp) = (layout.tp, layout.cp);
    Some(Traffic {
        gathers,
        sharded,
        overlapped,
        dp_cp,
        bandwidth: group_bandwidth(ctx.hw, u64::from(plan.cluster.scale_up_domain.get()), mem.dp * cp, tp),
        // The compute copy is gathered: 16-bit, fp32 when the plan trains in fp32 (VeRL's FSDP
        // gathers in `param_dtype: bf16` over its fp32 shards), or what the shards hold where less
        // (QLoRA's NF4 base, a GPTQ or AWQ checkpoint: memory/states.rs).
        param_bytes_max: if plan.precision == Precision::Fp32 { 4.0 } else { 2.0 },
        grad_bytes: gradient_bytes_per_param(ctx, mem),
        trainable_share,
    })
}

impl Traffic {
    /// One micro-batch's (forward gather, backward gather, reduction) seconds on a rank that
    /// holds `stage`.
    fn of_stage(&self, hw: &Hardware, stage: &memory::StageMemory) -> (f64, f64, f64) {
        let params = stage.params as f64;
        let stored = stage.weights_bytes as f64 * self.dp_cp / params.max(1.0);
        let gather_bytes = params * stored.min(self.param_bytes_max);
        let gather = ring_seconds_on(hw, gather_bytes, self.dp_cp, self.bandwidth, false);
        let grad_bytes = params * self.trainable_share * self.grad_bytes;
        let reduce = ring_seconds_on(hw, grad_bytes, self.dp_cp, self.bandwidth, !self.sharded);
        let gathered = |n: u8| if n <= self.gathers { gather } else { 0.0 };
        (gathered(1), gathered(2), reduce)
    }

    /// The least a micro-batch takes on the busiest rank for its traffic alone: every rank's passes
    /// take at least their gathers and reduction ([`floor_passes`]), so `m` micro-batches take at
    /// least `m` times this, a bound a search checks before working out each stage's passes.
    pub(super) fn least_per_microbatch(&self, hw: &Hardware, mem: &memory::Memory) -> f64 {
        let each = mem.stages.iter().map(|stage| self.of_stage(hw, stage));
        each.map(|(forward, backward, reduce)| forward + backward + reduce).fold(0.0, f64::max)
    }
}

/// What the traffic did to one micro-batch's passes.
pub(super) struct Floored {
    /// Seconds the traffic added to each rank's passes.
    pub(super) added: Vec<f64>,
    /// Without a pipeline, what a scoring forward (RL's log-probabilities, DPO's reference) takes
    /// three times of: the passes before the traffic, or three parameter gathers where longer (a
    /// forward without gradients gathers once and reduces nothing); `None` with a pipeline, whose
    /// scoring follows its makespan.
    pub(super) scoring_basis: Option<f64>,
}

/// The plan's passes (`lists`: forwards, backwards and weight passes, as [`crate::schedule::Costs`]
/// keeps them) lengthened by the traffic each micro-batch moves where the plan moves it
/// ([`traffic`], [`floor_passes`]), else `None` and the passes as they were. Kept out of line: most
/// plans move nothing, and the step's estimate stays as small as it was without it.
#[inline(never)]
pub(super) fn floored(ctx: &Ctx, mem: &memory::Memory, lists: &mut [f64]) -> Option<Floored> {
    let traffic = traffic(ctx, mem)?;
    let n = lists.len() / 3;
    let (forward, rest) = lists.split_at_mut(n);
    let (backward, weight) = rest.split_at_mut(n);
    Some(floor_passes(&traffic, ctx.hw, mem, mem.layout.chunks as usize, (forward, backward, weight)))
}

/// Lengthens each rank's forwards and backwards (`forward`, `backward`, `weight`: a rank's `vpp`
/// chunks in turn, as [`crate::schedule::Costs`] keeps them) to the traffic that does not fit
/// behind them, shared among its chunks as their compute is.
fn floor_passes(
    traffic: &Traffic,
    hw: &Hardware,
    mem: &memory::Memory,
    vpp: usize,
    (forward, backward, weight): (&mut [f64], &mut [f64], &[f64]),
) -> Floored {
    let vpp = vpp.max(1);
    let mut added = Vec::with_capacity(mem.stages.len());
    let mut scoring_basis = None;
    let ranks =
        forward.chunks_exact_mut(vpp).zip(backward.chunks_exact_mut(vpp)).zip(weight.chunks_exact(vpp));
    for (((f, b), w), stage) in ranks.zip(mem.stages.iter()) {
        let (forward_gather, backward_gather, reduce) = traffic.of_stage(hw, stage);
        let forward_compute: f64 = f.iter().sum();
        let backward_compute: f64 = b.iter().zip(w).map(|(b, w)| b + w).sum();
        if mem.stages.len() == 1 && vpp == 1 {
            scoring_basis = Some((forward_compute + backward_compute).max(3.0 * forward_gather));
        }
        let forward_extra = (forward_gather - forward_compute).max(0.0);
        let backward_extra = match traffic.overlapped {
            true => (backward_gather + reduce - backward_compute).max(0.0),
            false => (backward_gather - backward_compute).max(0.0) + reduce,
        };
        // Each chunk's share of the rank's compute, evenly where the rank computes nothing.
        let share = |part: f64, total: f64| if 0.0 < total { part / total } else { 1.0 / vpp as f64 };
        if 0.0 < forward_extra {
            for pass in f.iter_mut() {
                *pass += forward_extra * share(*pass, forward_compute);
            }
        }
        if 0.0 < backward_extra {
            for (pass, weight) in b.iter_mut().zip(w) {
                *pass += backward_extra * share(*pass + weight, backward_compute);
            }
        }
        added.push(forward_extra + backward_extra);
    }
    Floored { added, scoring_basis }
}
