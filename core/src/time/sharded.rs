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
//! - Megatron FSDP and PyTorch FSDP2 on the Megatron path run the same traffic ([`moves`]), Megatron
//!   FSDP on every pipeline stage too, each stage its own parameters ([`floored`]).
//!
//! The traffic runs beside the compute, prefetched and on a stream of its own, so a pass takes the
//! longer of its compute and the traffic behind it; a reduction DeepSpeed is told not to overlap
//! (`overlap_comm: false`) adds to the backward. Across nodes, where a model's gathers outlast its
//! compute, this is what sets the step (ZeRO paper, Rajbhandari et al. 2020, §7.2: 3Ψ a step for
//! ZeRO-3, here once per micro-batch). Megatron's DDP, its distributed optimizer and Megatron FSDP
//! sharding the optimizer alone, which accumulate under `no_sync`, keep their reduction once a step
//! (`tail.rs`).

use super::comm::{group_bandwidth, ring_seconds_on};
use super::tail::{Share, dp_collective_seconds, gradient_bytes_per_param, share_of};
use super::{Ctx, HBM_EFF, HOST_LINK_BYTES_PER_SECOND};
use crate::memory;
use crate::plan::{Framework, Fsdp};

/// One micro-batch's data-parallel traffic, seconds.
#[derive(Clone, Copy)]
pub(super) struct Traffic {
    /// The parameters gathered before the forward.
    forward_gather: f64,
    /// The parameters gathered again before the backward (resharded after the forward).
    backward_gather: f64,
    /// The gradients reduced after the backward.
    reduce: f64,
    /// Whether the reduction overlaps the backward.
    overlapped: bool,
    /// Gathered once an update rather than every micro-batch (VeRL's `no_sync` at ZeRO-1 and 2).
    update_gather: f64,
    /// Reduced once an update, after its last backward, rather than every micro-batch (VeRL's
    /// `no_sync`).
    update_reduce: f64,
}

/// How a plan moves its states every micro-batch: gathers per micro-batch, whether the gradients
/// are sharded (reduce-scattered, else all-reduced), whether the reduction overlaps the backward.
#[derive(Clone, Copy)]
struct Moves {
    gathers: u8,
    sharded: bool,
    overlapped: bool,
    /// The gradients accumulate unsharded over an update's micro-batches and are reduced after
    /// its last (VeRL's `use_no_sync_for_gradient_accumulation`), the gathers of parameters kept
    /// whole from forward to backward (ZeRO-1 and 2) once an update too.
    once: bool,
}

/// How the plan moves its states every micro-batch, where it does (data parallel, the gradients
/// reduced per micro-batch), else `None`.
fn moves(ctx: &Ctx, mem: &memory::Memory) -> Option<Moves> {
    let (plan, p) = (ctx.plan, &ctx.plan.parallel);
    let layout = &mem.layout;
    let zero = p.zero_stage;
    let (gathers, sharded, overlapped) = match plan.framework {
        // Megatron FSDP reduces every backward where it shards the gradients ("Only reduce if we
        // are sharding gradients, or are on the final microbatch", `grad_reduce_every_bprop`,
        // megatron/core/distributed/fsdp/src/megatron_fsdp/megatron_fsdp.py) and, sharding the
        // parameters, gathers them for each layer's forward and again for its backward, prefetched
        // (its docs/runtime_schedule.md), on every pipeline stage alike; PyTorch FSDP2 alike
        // (pipelines refused, rule fsdp.torch), Megatron's wrapper keeping its default
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
        // Under FSDP2's CPU offload (`memory::verl_offload_policy`) every unit's shard is copied in
        // before it is gathered, at ZeRO-0 (a mesh of one) too ([`moving`]).
        Framework::Verl => match zero.get() {
            0 if memory::verl_offload_policy(plan) => (2, false, true),
            0 => (0, false, true),
            1 | 2 => (1, true, true),
            _ => (2, true, true),
        },
        _ => return None,
    };
    // Under `no_sync` FSDP skips the reduction, and with `SHARD_GRAD_OP` (ZeRO-1 and 2) the
    // resharding after backward, until the last micro-batch (`_post_backward_hook`,
    // `_should_free_in_backward`, torch/distributed/fsdp/_runtime_utils.py at torch 2.11; VeRL's
    // `_gradient_sync_context`, verl/workers/engine/fsdp/transformer_impl.py at verl 0.9.1).
    let once = plan.framework == Framework::Verl && p.no_sync_accumulation;
    Some(Moves { gathers, sharded, overlapped, once })
}

/// The least a micro-batch's traffic takes on the rank with the most parameters
/// ([`Traffic::least_per_microbatch`]), 0 where the plan moves nothing every micro-batch: that
/// rank runs `m` micro-batches, so the pipeline takes at least `m` times this (a bound a search
/// checks before working out the passes; one rank's, not the slowest's, so that a deep pipeline's
/// bound costs one rank's traffic).
pub(super) fn least_per_microbatch(ctx: &Ctx, mem: &memory::Memory) -> f64 {
    let Some(moves) = moves(ctx, mem) else { return 0.0 };
    let Some(busiest) = mem.stages.iter().max_by_key(|s| s.params) else { return 0.0 };
    moving(ctx, mem, busiest, moves).map_or(0.0, |traffic| traffic.least_per_microbatch())
}

/// The traffic of a micro-batch of `stage`'s parameters moved as `moves` says: `gathers`
/// parameter gathers, the gradients `sharded` (reduce-scattered) or all-reduced, the reduction
/// `overlapped` with the backward; `None` without data parallelism.
fn moving(ctx: &Ctx, mem: &memory::Memory, stage: &memory::StageMemory, moves: Moves) -> Option<Traffic> {
    let Moves { gathers, sharded, overlapped, once } = moves;
    let share = share_of(ctx, mem, stage);
    let offloaded = memory::verl_offload_policy(ctx.plan);
    if share.dp_cp <= 1.0 && !offloaded {
        return None;
    }
    // The compute copy is gathered (VeRL's FSDP gathers in `param_dtype: bf16` over its fp32
    // shards), or what the shards hold where less (QLoRA's NF4 base, a GPTQ or AWQ checkpoint:
    // memory/states.rs): the bytes a stored parameter takes, its dense shard over DP × CP and its
    // experts' over the expert-data-parallel group. Under FSDP2's CPU offload the fp32 shards are
    // on the host, the device holding none of them; under DeepSpeed's parameter offload
    // (ZeRO-Infinity's `offload_param`) the 16-bit shards, each copied into the device's buffer and
    // gathered over every rank as a shard on the device is (`_all_gather_coalesced`:
    // `flat_tensor.narrow(..).copy_(param.ds_tensor)`, then the all-gather,
    // deepspeed/runtime/zero/partition_parameters.py): the device's weights read 0 there (the
    // stage's states, `memory::states`, offload them wherever VeRL does not: it offloads between
    // its passes instead), and the gathers had moved nothing.
    let compute = memory::compute_bytes_per_param(ctx.plan);
    let host_shards = ctx.plan.parallel.offload_params && !ctx.plan.framework.is_verl();
    let stored = match offloaded || host_shards {
        true => compute,
        false => stage.weights_bytes as f64 / share.sharded_params().max(1.0),
    };
    let collective = |bytes, all_reduce| match 1.0 < share.dp_cp {
        true => dp_collective_seconds(ctx, mem, &share, bytes, all_reduce),
        false => 0.0,
    };
    // FSDP2's CPU offload copies each unit's fp32 shard in before its gather and each reduced fp32
    // gradient shard out, over the host link ("one H2D copy for each parameter before all-gather",
    // "one D2H copy for each gradient after reduce-scatter": pytorch/pytorch pull request 120256,
    // which added it): the copies are part of the traffic. At ZeRO-0 (a mesh of one, `fsdp_size=1`)
    // the shard is the whole model, and its gather gathers nothing.
    let sharded_params = 0 < ctx.plan.parallel.zero_stage.get();
    let shard = match sharded_params {
        true => share.sharded_params(),
        false => share.params_on_device,
    };
    let (copy_in, copy_out) = match offloaded {
        true => (4.0 * shard, 4.0 * share.trainable_share * shard),
        false => (0.0, 0.0),
    };
    // DeepSpeed ZeRO++ (ZeRO-3 only): qwZ gathers int8, hpZ gathers the backward's parameters
    // within its group, qgZ averages the gradients in int4 ([`ZeroPlusPlus`]).
    let zpp = ctx.plan.zero_plus_plus();
    let gathered = match zpp.quantized_weights {
        true => stored.min(compute).min(QWZ_BYTES_PER_PARAM),
        false => stored.min(compute),
    };
    let (all_gather, backward_all_gather) = match !offloaded || sharded_params {
        true => {
            let all_gather = collective(gathered, false) + qwz_seconds(ctx, &share, zpp.quantized_weights);
            let backward = match 1 < zpp.hpz {
                true => {
                    hpz_gather_seconds(ctx, &share, gathered, zpp.hpz)
                        + qwz_seconds(ctx, &share, zpp.quantized_weights)
                }
                false => all_gather,
            };
            (all_gather, backward)
        }
        false => (0.0, 0.0),
    };
    let gather = all_gather + copy_in / HOST_LINK_BYTES_PER_SECOND;
    let backward_gather = backward_all_gather + copy_in / HOST_LINK_BYTES_PER_SECOND;
    let grad_bytes = share.trainable_share * gradient_bytes_per_param(ctx, mem);
    let reduced = match qgz_applies(ctx, zpp, sharded, &share) {
        true => qgz_seconds(ctx, &share),
        false => collective(grad_bytes, !sharded),
    };
    let reduce = reduced + copy_out / HOST_LINK_BYTES_PER_SECOND;
    // Parameters kept whole from forward to backward (one gather a micro-batch) stay whole under
    // `no_sync` until the update's last backward: gathered once an update.
    let gathered_each = |n: u8, seconds: f64| match n <= gathers && !(once && gathers == 1) {
        true => seconds,
        false => 0.0,
    };
    Some(Traffic {
        forward_gather: gathered_each(1, gather),
        backward_gather: gathered_each(2, backward_gather),
        reduce: if once { 0.0 } else { reduce },
        overlapped,
        update_gather: if once && gathers == 1 { gather } else { 0.0 },
        update_reduce: if once { reduce } else { 0.0 },
    })
}

/// What a parameter gathered under ZeRO++'s qwZ moves: int8, and an fp32 scale per block of at
/// most 8,000 (`CUDAQuantizer.target_group_size`, deepspeed/runtime/zero/partition_parameters.py).
const QWZ_BYTES_PER_PARAM: f64 = 1.0 + 4.0 / 8000.0;

/// What a gradient averaged under ZeRO++'s qgZ moves: int4 (`swizzle_quant` and
/// `quantized_reduction` at 4 bits, `all_to_all_quant_reduce`,
/// deepspeed/runtime/comm/coalesced_collectives.py), its fp32 scales left out: one a group, and a
/// matrix has as many groups as its longer side (at least the world), 0.2 % of the int4 bytes of
/// a 4,096 × 4,096 one.
const QGZ_BYTES_PER_PARAM: f64 = 0.5;

/// qwZ's kernels per gather: each gathered parameter dequantized from int8 to 16 bits (1 byte read,
/// 2 written), memory-bound; 0 without qwZ.
fn qwz_seconds(ctx: &Ctx, share: &Share, on: bool) -> f64 {
    match on {
        true => 3.0 * share.params_on_device / (ctx.hw.memory_bytes_per_second * HBM_EFF),
        false => 0.0,
    }
}

/// hpZ's backward gather: a ring all-gather over its group of `group` consecutive ranks from each
/// rank's secondary shard, within a node where the group fits one (DeepSpeed's tutorial sets it to
/// the GPUs per node), instead of over every rank.
fn hpz_gather_seconds(ctx: &Ctx, share: &Share, bytes_per_param: f64, group: u64) -> f64 {
    let domain = u64::from(ctx.plan.cluster.scale_up_domain.get());
    let bandwidth = group_bandwidth(ctx.hw, domain, group, 1);
    ring_seconds_on(ctx.hw, share.params_on_device * bytes_per_param, group as f64, bandwidth, false)
}

/// Whether qgZ replaces the reduce-scatter: ZeRO-3 sharding the gradients over more than one node
/// (`DeepSpeedZeroOptimizer_Stage3`, deepspeed/runtime/zero/stage3.py: the reduce-scatter where
/// `num_nodes` is 1).
fn qgz_applies(ctx: &Ctx, zpp: crate::plan::ZeroPlusPlus, sharded: bool, share: &Share) -> bool {
    zpp.quantized_gradients && sharded && 1 < ctx.plan.cluster.nodes.get() && 1.0 < share.dp_cp
}

/// qgZ's gradient averaging: each rank's gradients quantized to int4 and exchanged all-to-all
/// among the node's L ranks, each reducing its 1/L, then exchanged all-to-all among the N ranks of
/// its local index across the nodes (one NIC each), each keeping its 1/(L·N) (ZeRO++'s quantized
/// gradients, Wang et al. 2023, arXiv 2306.10209); and the kernels that quantize (2 bytes read,
/// ½ written), reduce (½ read) and dequantize, memory-bound: 3 bytes a parameter.
fn qgz_seconds(ctx: &Ctx, share: &Share) -> f64 {
    let hw = ctx.hw;
    let cluster = &ctx.plan.cluster;
    let (local, nodes) = (u64::from(cluster.devices_per_node.get()), u64::from(cluster.nodes.get()));
    let domain = u64::from(cluster.scale_up_domain.get());
    let params = share.trainable_share * share.params_on_device;
    let bytes = params * QGZ_BYTES_PER_PARAM;
    let within = ring_seconds_on(hw, bytes, local as f64, group_bandwidth(hw, domain, local, 1), false);
    let across = ring_seconds_on(
        hw,
        bytes / local as f64,
        nodes as f64,
        group_bandwidth(hw, domain, nodes, local),
        false,
    );
    let kernels = 3.0 * params / (hw.memory_bytes_per_second * HBM_EFF);
    within + across + kernels
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
    /// Whether the plan moves parameters or gradients every micro-batch (else every figure is 0).
    pub(super) moved: bool,
    /// Seconds the traffic added.
    pub(super) added: f64,
    /// What a scoring forward (RL's log-probabilities, DPO's reference) takes three times of, per
    /// micro-batch: the passes before the traffic, or three parameter gathers where longer (a
    /// forward without gradients gathers once and reduces nothing); with a pipeline, the busiest
    /// rank's passes so lengthened, the pace of its steady state.
    pub(super) scoring_basis: f64,
    /// Seconds the traffic moved once an update adds to it ([`Traffic::update_gather`] behind the
    /// first forward, [`Traffic::update_reduce`] behind the last backward).
    pub(super) per_update: f64,
}

impl Floored {
    /// Nothing moved, nothing floored. Plain zeros rather than an `Option`'s `None`, whose payload
    /// holds whatever bytes were left there: the step's arithmetic is worked out on both sides of
    /// a test and one side picked, and a leftover subnormal multiplied there took a microcode
    /// assist on every evaluation (found by trapping on subnormal operands).
    const NONE: Floored = Floored { moved: false, added: 0.0, scoring_basis: 0.0, per_update: 0.0 };
}

/// The plan's passes (`lists`: each rank's chunks' forward, backward and weight passes, as
/// [`crate::schedule::Costs`] keeps them) lengthened by the traffic each micro-batch moves where
/// the plan moves it, else [`Floored::NONE`] and the passes as they were. Without a pipeline, the
/// one stage's traffic; with one, each rank's (its own parameters gathered and reduced), shared
/// among its chunks by their layers.
pub(super) fn floored(ctx: &Ctx, mem: &memory::Memory, lists: &mut [f64]) -> Floored {
    let Some(moves) = moves(ctx, mem) else { return Floored::NONE };
    if let [forward, backward, weight] = lists {
        let traffic = mem.stages.first().and_then(|stage| moving(ctx, mem, stage, moves));
        return match traffic {
            Some(traffic) => floor_passes(&traffic, forward, backward, *weight),
            None => Floored::NONE,
        };
    }
    pipeline_floored(ctx, mem, moves, lists)
}

/// [`floored`] for a pipeline: each rank's chunks floored by their share of the rank's traffic.
/// The busiest rank's additions count as the step's data-parallel time, and its lengthened passes
/// as a scoring forward's basis.
#[cold]
#[inline(never)]
fn pipeline_floored(ctx: &Ctx, mem: &memory::Memory, moves: Moves, lists: &mut [f64]) -> Floored {
    let layout = &mem.layout;
    let vpp = layout.chunks as usize;
    let n = lists.len() / 3;
    let (forward, rest) = lists.split_at_mut(n);
    let (backward, weight) = rest.split_at_mut(n);
    let (mut added, mut scoring_basis) = (0.0_f64, 0.0_f64);
    // Ranks holding the same parameters move the same: worked out once a run of them.
    let mut last: Option<((u64, u64, u64), Option<Traffic>)> = None;
    for (rank, stage) in mem.stages.iter().enumerate() {
        let holds = (stage.params, stage.expert_params, stage.weights_bytes);
        let traffic = match last {
            Some((held, traffic)) if held == holds => traffic,
            _ => moving(ctx, mem, stage, moves),
        };
        last = Some((holds, traffic));
        let Some(traffic) = traffic else { continue };
        let chunks = rank * vpp..(rank + 1) * vpp;
        let layers = stage.n_layers.max(1) as f64;
        let (mut rank_added, mut rank_basis) = (0.0, 0.0);
        for (c, at) in chunks.enumerate() {
            let held = layout.stage(rank as u64, c as u64);
            // A chunk without decoder layers (the head's alone) moves a layer's worth at most.
            let part = ((held.layers.end - held.layers.start).max(1) as f64 / layers).min(1.0);
            let share = Traffic {
                forward_gather: traffic.forward_gather * part,
                backward_gather: traffic.backward_gather * part,
                reduce: traffic.reduce * part,
                overlapped: traffic.overlapped,
                update_gather: traffic.update_gather * part,
                update_reduce: traffic.update_reduce * part,
            };
            let chunk = floor_passes(&share, &mut forward[at], &mut backward[at], weight[at]);
            rank_added += chunk.added;
            rank_basis += chunk.scoring_basis;
        }
        added = added.max(rank_added);
        scoring_basis = scoring_basis.max(rank_basis);
    }
    Floored { moved: true, added, scoring_basis, per_update: 0.0 }
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
    // Once an update: the gather behind the first forward (lengthened as above), the reduction
    // behind the last backward beside its gather.
    let last_reduce = match 0.0 < traffic.update_reduce {
        true => (traffic.backward_gather + traffic.update_reduce - compute).max(0.0) - backward_extra,
        false => 0.0,
    };
    let per_update = (traffic.update_gather - (*forward + forward_extra)).max(0.0) + last_reduce;
    *forward += forward_extra;
    *backward += backward_extra;
    Floored { moved: true, added: forward_extra + backward_extra, scoring_basis, per_update }
}
