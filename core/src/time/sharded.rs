//! The data-parallel traffic of every micro-batch where the gradients (and with them, often, the
//! parameters) are sharded and no pipeline runs:
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
//! ZeRO-3, here once per micro-batch). Plans with a pipeline, and Megatron's DDP and distributed
//! optimizer (which accumulate under `no_sync`), keep their reduction once a step (`tail.rs`).

use super::Ctx;
use super::comm::{group_bandwidth, ring_seconds_on};
use super::tail::{Share, gradient_bytes_per_param, share};
use crate::memory;
use crate::plan::{Framework, Fsdp, Precision};

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

/// The traffic of each micro-batch where the plan runs it (no pipeline, data parallel, the
/// gradients reduced per micro-batch), else `None`.
pub(super) fn traffic(ctx: &Ctx, mem: &memory::Memory) -> Option<Traffic> {
    let (plan, p) = (ctx.plan, &ctx.plan.parallel);
    let layout = &mem.layout;
    if layout.pp != 1 || layout.chunks != 1 {
        return None;
    }
    let zero = p.zero_stage;
    // (gathers per micro-batch, whether the gradients are sharded, the reduction overlapped).
    let (gathers, sharded, overlapped) = match plan.framework {
        // Megatron FSDP reduces every backward where it shards the gradients ("Only reduce if we
        // are sharding gradients, or are on the final microbatch", `grad_reduce_every_bprop`,
        // megatron/core/distributed/fsdp/src/megatron_fsdp/megatron_fsdp.py) and, sharding the
        // parameters, gathers them for each layer's forward and again for its backward, prefetched
        // (its docs/runtime_schedule.md); PyTorch FSDP2 alike, Megatron's wrapper keeping its
        // default `reshard_after_forward=True` and a `no_sync` that does nothing
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
    let Share { dp_cp, params_on_device, trainable_share, .. } = share(ctx, mem);
    if dp_cp <= 1.0 {
        return None;
    }
    let (hw, tp, cp) = (ctx.hw, layout.tp, layout.cp);
    let bandwidth = group_bandwidth(hw, u64::from(plan.cluster.scale_up_domain.get()), mem.dp * cp, tp);
    // The compute copy is gathered: 16-bit, fp32 when the plan trains in fp32 (VeRL's FSDP gathers
    // in `param_dtype: bf16` over its fp32 shards), or what the shards hold where less (QLoRA's NF4
    // base, a GPTQ or AWQ checkpoint: memory/states.rs).
    let compute_bytes = if plan.precision == Precision::Fp32 { 4.0 } else { 2.0 };
    let stored =
        mem.stages.first().map_or(0.0, |s| s.weights_bytes as f64) * dp_cp / params_on_device.max(1.0);
    let param_bytes = stored.min(compute_bytes);
    let gather = ring_seconds_on(hw, params_on_device * param_bytes, dp_cp, bandwidth, false);
    let grad_bytes = params_on_device * trainable_share * gradient_bytes_per_param(ctx, mem);
    let reduce = ring_seconds_on(hw, grad_bytes, dp_cp, bandwidth, !sharded);
    Some(Traffic {
        forward_gather: if 1 <= gathers { gather } else { 0.0 },
        backward_gather: if 2 <= gathers { gather } else { 0.0 },
        reduce,
        overlapped,
    })
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

/// Lengthens the one stage's forward and backward (`forward`, `backward`, `weight`: one entry each)
/// to the traffic that does not fit behind them.
pub(super) fn floor_passes(
    traffic: &Traffic,
    forward: &mut [f64],
    backward: &mut [f64],
    weight: &[f64],
) -> Floored {
    let (Some(f), Some(b), Some(&w)) = (forward.first_mut(), backward.first_mut(), weight.first()) else {
        return Floored { added: 0.0, scoring_basis: 0.0 };
    };
    let scoring_basis = (*f + *b + w).max(3.0 * traffic.forward_gather);
    let forward_extra = (traffic.forward_gather - *f).max(0.0);
    let compute = *b + w;
    let backward_extra = match traffic.overlapped {
        true => (traffic.backward_gather + traffic.reduce - compute).max(0.0),
        false => (traffic.backward_gather - compute).max(0.0) + traffic.reduce,
    };
    *f += forward_extra;
    *b += backward_extra;
    Floored { added: forward_extra + backward_extra, scoring_basis }
}
