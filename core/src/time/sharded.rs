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
use super::tail::{compute_bytes_per_param, dp_collective_seconds, gradient_bytes_per_param, share};
use crate::memory;
use crate::plan::{Framework, Fsdp};

/// One micro-batch's data-parallel traffic, seconds.
pub(super) struct Traffic {
    /// The parameters gathered before the forward.
    forward_gather: f64,
    /// The parameters gathered again before the backward (resharded after the forward).
    backward_gather: f64,
    /// The gradients reduced after the backward.
    reduce: f64,
    /// Whether the reduction overlaps the backward.
    overlapped: bool,
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
    let share = share(ctx, mem);
    let stage = mem.stages.first()?;
    if share.dp_cp <= 1.0 {
        return None;
    }
    // The compute copy is gathered (VeRL's FSDP gathers in `param_dtype: bf16` over its fp32
    // shards), or what the shards hold where less (QLoRA's NF4 base, a GPTQ or AWQ checkpoint:
    // memory/states.rs): the bytes a stored parameter takes, its dense shard over DP × CP and its
    // experts' over the expert-data-parallel group.
    let experts = share.experts_on_device;
    let shard = (share.params_on_device - experts) / share.dp_cp + experts / share.edp;
    let stored = stage.weights_bytes as f64 / shard.max(1.0);
    let gather =
        dp_collective_seconds(ctx, mem, &share, stored.min(compute_bytes_per_param(ctx.plan)), false);
    let grad_bytes = share.trainable_share * gradient_bytes_per_param(ctx, mem);
    let gathered = |n: u8| if n <= gathers { gather } else { 0.0 };
    Some(Traffic {
        forward_gather: gathered(1),
        backward_gather: gathered(2),
        reduce: dp_collective_seconds(ctx, mem, &share, grad_bytes, !sharded),
        overlapped,
    })
}

impl Traffic {
    /// The least a micro-batch takes for its traffic alone: the passes take at least their gathers
    /// and reduction ([`floor_passes`]), so `m` micro-batches take at least `m` times this, a bound
    /// a search checks before working out the passes.
    pub(super) fn least_per_microbatch(&self) -> f64 {
        self.forward_gather + self.backward_gather + self.reduce
    }
}

/// What the traffic did to one micro-batch's passes.
#[derive(Clone, Copy)]
pub(super) struct Floored {
    /// Seconds the traffic added.
    pub(super) added: f64,
    /// What a scoring forward (RL's log-probabilities, DPO's reference) takes three times of: the
    /// passes before the traffic, or three parameter gathers where longer (a forward without
    /// gradients gathers once and reduces nothing).
    pub(super) scoring_basis: f64,
}

/// The plan's passes (`lists`: its one stage's forward, backward and weight pass, as
/// [`crate::schedule::Costs`] keeps them) lengthened by the traffic each micro-batch moves where
/// the plan moves it ([`traffic`]), else `None` and the passes as they were.
pub(super) fn floored(ctx: &Ctx, mem: &memory::Memory, lists: &mut [f64]) -> Option<Floored> {
    let traffic = traffic(ctx, mem)?;
    match lists {
        [forward, backward, weight] => Some(floor_passes(&traffic, forward, backward, *weight)),
        _ => None,
    }
}

/// Lengthens the forward and the backward to the traffic that does not fit behind them.
fn floor_passes(traffic: &Traffic, forward: &mut f64, backward: &mut f64, weight: f64) -> Floored {
    let scoring_basis = (*forward + *backward + weight).max(3.0 * traffic.forward_gather);
    let forward_extra = (traffic.forward_gather - *forward).max(0.0);
    let compute = *backward + weight;
    let backward_extra = match traffic.overlapped {
        true => (traffic.backward_gather + traffic.reduce - compute).max(0.0),
        false => (traffic.backward_gather - compute).max(0.0) + traffic.reduce,
    };
    *forward += forward_extra;
    *backward += backward_extra;
    Floored { added: forward_extra + backward_extra, scoring_basis }
}
