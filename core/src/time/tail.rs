//! The step's tail after the pipeline: the data-parallel gradient reduction (and ZeRO-3/FSDP
//! gathers) not hidden behind the backward, the optimizer step, the host transfers of offloaded
//! states, each once per RL update.

use super::comm::{group_bandwidth, ring_seconds_on};
use super::{
    CPU_ADAMW_BYTES_PER_PARAM, Ctx, FUSED_CPU_ADAM_BYTES_PER_PARAM, HBM_EFF, HOST_LINK_BYTES_PER_SECOND,
    HOST_MEMORY_BYTES_PER_SECOND,
};
use crate::memory;
use crate::plan::{Framework, Precision};

/// The step's terms after the pipeline, seconds.
pub(super) struct StepTail {
    /// Data-parallel gradient reduction (and ZeRO-3 gathers) not hidden.
    pub(super) dp_seconds: f64,
    /// The optimizer step.
    pub(super) optimizer_seconds: f64,
    /// Offloaded optimizer states and parameters crossing the host link.
    pub(super) offload_seconds: f64,
}

/// What one device holds of the model, as the tail sees it.
pub(super) struct Share {
    /// Data- and context-parallel ranks.
    pub(super) dp_cp: f64,
    /// Whether ZeRO-3 or FSDP shards the parameters (gathered for forward and backward).
    pub(super) shards_params: bool,
    /// Parameters this device computes with.
    pub(super) params_on_device: f64,
    /// Of those, the routed experts', whose gradients and optimizer states are shared over the
    /// expert-data-parallel ranks instead ([`Share::edp`]).
    pub(super) experts_on_device: f64,
    /// Expert-data-parallel ranks (world ÷ (PP · EP · expert TP)).
    pub(super) edp: f64,
    /// The share of them that trains: LoRA's adapters, else all.
    pub(super) trainable_share: f64,
}

impl Share {
    /// The parameters a device owns where the states are sharded: its dense ones' share of DP × CP
    /// and its experts' of the expert-data-parallel ranks.
    pub(super) fn sharded_params(&self) -> f64 {
        (self.params_on_device - self.experts_on_device) / self.dp_cp + self.experts_on_device / self.edp
    }
}

/// The step's tail for `m` micro-batches whose last backward on each stage takes `backward`;
/// `per_microbatch` where the states moved with every micro-batch (`sharded.rs`): what they added
/// once an update.
pub(super) fn step_tail(
    ctx: &Ctx,
    mem: &memory::Memory,
    backward: &[f64],
    m: u32,
    per_microbatch: Option<f64>,
) -> StepTail {
    let (plan, p, hw) = (ctx.plan, &ctx.plan.parallel, ctx.hw);
    let megatron = mem.layout.model_parallel;
    let share = share(ctx, mem);
    let dp_seconds = match per_microbatch {
        Some(per_update) => updated_params_gather_seconds(ctx, mem, &share) + per_update,
        None => gradient_sync_seconds(ctx, mem, &share, backward),
    };
    let (dp_cp, params_on_device, trainable_share) =
        (share.dp_cp, share.params_on_device, share.trainable_share);
    // Optimizer: Adam reads and writes fp32 master weights, two moments and gradients, and writes
    // the 16-bit weights: about 18 bytes per parameter it owns (÷ dp when sharded).
    let sharded = p.distributed_optimizer || (!megatron && p.zero_stage.shards_optimizer());
    let owned = trainable_share * if sharded { share.sharded_params() } else { params_on_device };
    // Under plain PyTorch (LLaMA-Factory without DeepSpeed) the parameters are fp32 and their own
    // master copy: fused AdamW reads the parameter, gradient and both moments and writes three of
    // them back (28 bytes), and gradient clipping reads the gradients for their norm and scales them
    // in place (12 more; `torch.nn.utils.clip_grad_norm_`, the `Trainer`'s `max_grad_norm`).
    // VeRL's FSDP engine keeps fp32 shards alike (`model_dtype: fp32`, memory/states.rs) and clips its
    // gradients (`clip_grad: 1.0`, verl/trainer/config/optim/fsdp.yaml).
    // With LLaMA-Factory's `pure_bf16` the same passes move bf16 parameters, gradients and moments:
    // half the bytes.
    let fp32_shards =
        crate::memory::fp32_trainables(plan) || (plan.framework == crate::plan::Framework::Verl && !megatron);
    let pure_bf16 = crate::memory::plain_torch(plan) && !fp32_shards;
    // bitsandbytes' 8-bit AdamW reads and writes its moments a byte each: 4 bytes where fp32
    // moments move 16 and bf16 ones 8.
    let eight_bit = crate::memory::plain_torch(plan) && plan.optimizer == crate::plan::Optimizer::AdamW8bit;
    let bytes_per_param = match (fp32_shards, pure_bf16, eight_bit) {
        (true, _, true) => 28.0,
        (true, _, false) => 40.0,
        (false, true, true) => 16.0,
        (false, true, false) => 20.0,
        (false, false, _) => 18.0,
    };
    // The frameworks whose offloaded optimizer steps on the host (VeRL's and MindSpeed-RL's move
    // the states between phases instead and step on the device).
    let on_host = matches!(
        plan.framework,
        Framework::DeepSpeed | Framework::LlamaFactory | Framework::Megatron | Framework::MindSpeedLlm
    ) && p.offload_optimizer;
    let optimizer_seconds = match (crate::memory::verl_offload_policy(plan), on_host) {
        // FSDP2's CPU offload steps AdamW on the host's fp32 shards, with PyTorch's single-tensor
        // AdamW (no foreach or fused kernel takes a CPU tensor); its copies over the host link are
        // the micro-batches' traffic (`sharded.rs`).
        (true, _) => CPU_ADAMW_BYTES_PER_PARAM * owned / HOST_MEMORY_BYTES_PER_SECOND,
        // DeepSpeed's offloaded optimizer is its CPU Adam, over the device's fp32 partition in host
        // memory (ZeRO-Offload, Ren et al. 2021; `DeepSpeedCPUAdam`), whichever device keeps it;
        // Megatron's is PyTorch's fused AdamW over the host's fp32 copies.
        (false, true) => FUSED_CPU_ADAM_BYTES_PER_PARAM * owned / HOST_MEMORY_BYTES_PER_SECOND,
        (false, false) => bytes_per_param * owned / (hw.memory_bytes_per_second * HBM_EFF),
    };
    let nvme = crate::memory::nvme_swap(plan);
    // Offload: optimizer states cross the host link twice a step.
    let verl = plan.framework.is_verl();
    let offload_seconds = match p.offload_optimizer && !verl {
        true => 2.0 * 16.0 * owned / HOST_LINK_BYTES_PER_SECOND,
        false => 0.0,
    } + match nvme.optimizer {
        // ZeRO-Infinity reads each sub-group's fp32 parameters, moments and gradients from the
        // drive before its step and writes all but the gradients back after, and writes the
        // gradients as they are reduced (`_optimizer_states_and_gradient_swap_in` / `_out`,
        // `swap_out_gradients`, deepspeed/runtime/zero/stage3.py): 16 bytes each way a parameter,
        // every device of the node on the one volume, one sub-group after another (the launch
        // files leave `pipeline_read` and `pipeline_write` off).
        true => nvme_optimizer_seconds(ctx, owned),
        false => 0.0,
    } + match crate::memory::swaps_optimizer(plan) {
        // MindSpeed swap-optimizer: the optimizer states (fp32 master weights and both moments, 12
        // bytes per owned parameter in bf16; memory::state_bytes) come in and go out once per step,
        // slice by slice, while AdamW runs.
        true => {
            2.0 * crate::memory::state_bytes(crate::memory::Path::Megatron, plan.precision).optimizer * owned
                / HOST_LINK_BYTES_PER_SECOND
        }
        false => 0.0,
    } + match p.offload_params && !megatron && !verl {
        // ZeRO-Infinity fetches each device's 16-bit parameter shard from the host for every
        // micro-batch's forward and again for its backward (DeepSpeed `offload_param`); from NVMe
        // it reads them into pinned buffers as the host link carries the previous ones to the
        // device, so the slower of the two paces them, and writes the updated shard back once an
        // update (`AsyncPartitionedParameterSwapper`, deepspeed/runtime/swap_tensor/
        // partitioned_param_swapper.py).
        true => {
            let fetched = 2.0 * 2.0 * params_on_device / dp_cp * m as f64;
            match nvme.params {
                true => nvme_params_seconds(ctx, fetched, 2.0 * params_on_device / dp_cp),
                false => fetched / HOST_LINK_BYTES_PER_SECOND,
            }
        }
        false => 0.0,
    };
    let updates = updates(ctx);
    StepTail {
        dp_seconds: dp_seconds * updates,
        optimizer_seconds: optimizer_seconds * updates,
        offload_seconds: offload_seconds * updates
            + match plan.framework.is_verl() && (p.offload_params || p.offload_optimizer) {
                true => verl_offload_seconds(ctx, mem),
                false => 0.0,
            }
            + match plan.framework == crate::plan::Framework::MindSpeedRl {
                true => mindspeed_rl_offload_seconds(ctx, mem),
                false => 0.0,
            },
    }
}

/// One device's share of its node's NVMe volume, read and write, bytes/s: every device of the
/// node swaps to it at once.
fn nvme_bytes_per_second(ctx: &Ctx) -> (f64, f64) {
    let c = &ctx.plan.cluster;
    let devices = f64::from(c.devices_per_node.get());
    (c.nvme_read_gb_per_s * 1e9 / devices, c.nvme_write_gb_per_s * 1e9 / devices)
}

/// The optimizer's swaps to NVMe a step for `owned` parameters: 16 bytes each read and written.
/// Cold, as the other NVMe paths: a search's plans keep their states on the host or the device.
#[cold]
fn nvme_optimizer_seconds(ctx: &Ctx, owned: f64) -> f64 {
    let (read, write) = nvme_bytes_per_second(ctx);
    16.0 * owned * (1.0 / read + 1.0 / write)
}

/// The parameters' swaps to NVMe a step: `fetched` bytes read as fast as the slower of the drive's
/// share and the host link, `written` bytes written back.
#[cold]
fn nvme_params_seconds(ctx: &Ctx, fetched: f64, written: f64) -> f64 {
    let (read, write) = nvme_bytes_per_second(ctx);
    (fetched / HOST_LINK_BYTES_PER_SECOND).max(fetched / read) + written / write
}

/// The bytes of the stage that holds the most of `bytes`: what a move of every stage's states at
/// once waits on.
fn fullest(mem: &memory::Memory, bytes: fn(&memory::StageMemory) -> u64) -> f64 {
    mem.stages.iter().map(bytes).max().unwrap_or(0) as f64
}

/// MindSpeed-RL's offload, once a step, as its launch file asks (`offload_train_param`,
/// `offload_train_optimizer`, `offload_train_grad`) and `MegatronShardingManager` runs it
/// (mindspeed_rl/workers/resharding/megatron_sharding_manager.py, MindSpeed-RL 05a90d7): the
/// parameters go out while the engine generates (`enter_infer_mode`), come in for the
/// log-probabilities (`enter_forward_mode`), and, unless the reference shares the actor's backbone
/// (LoRA, `share_backbone`), go out after them and come in again for the update
/// (`exit_forward_mode`, `enter_train_mode`); the optimizer states come in for the update and go
/// out after it (`exit_train_mode`); the gradients are dropped and remade, never copied
/// (`swap_tensors_to_host(…, copy_data=False)`, megatron_off_loader.py). The integrated worker
/// brings the reference in for its log-probabilities and sends it out after
/// (`compute_ref_log_prob`, mindspeed_rl/workers/integrated_worker.py). Each the busiest stage's
/// bytes over the host link; the host copies are pageable (`torch.empty_like(…, device='cpu')`),
/// which move slower than the pinned rate counted here.
#[cold]
#[inline(never)]
fn mindspeed_rl_offload_seconds(ctx: &Ctx, mem: &memory::Memory) -> f64 {
    let shared_backbone = ctx.plan.trains_lora();
    let (weights, optimizer) = (fullest(mem, |s| s.weights_bytes), fullest(mem, |s| s.optimizer_bytes));
    let (param_moves, reference_moves) = if shared_backbone { (2.0, 0.0) } else { (4.0, 2.0) };
    ((param_moves + reference_moves) * weights + 2.0 * optimizer) / HOST_LINK_BYTES_PER_SECOND
}

/// MindSpeed-RL's critic's host moves, once a step: its parameters in for its values, its
/// optimizer states in for its update, and both out after it, whatever the launch file says; its
/// gradients dropped and remade, not copied (`CriticWorker.compute_values`, `update`,
/// mindspeed_rl/workers/critic_worker.py at 05a90d7; `swap_tensors_to_host(…, copy_data=False)`).
/// The critic is the actor's size: the busiest stage's bytes over the host link. 0 elsewhere.
pub(super) fn mindspeed_rl_critic_offload_seconds(ctx: &Ctx, mem: &memory::Memory) -> f64 {
    match ctx.plan.framework == crate::plan::Framework::MindSpeedRl && ctx.ppo {
        true => {
            2.0 * (fullest(mem, |s| s.weights_bytes) + fullest(mem, |s| s.optimizer_bytes))
                / HOST_LINK_BYTES_PER_SECOND
        }
        false => 0.0,
    }
}

/// VeRL's offload, once a step: the parameters come in for the log-probabilities and go out, and
/// come in again with the gradients for the update, the optimizer states with them, and all go out
/// after (`BaseEngineCtx._context_switch`, verl/workers/engine/base.py: eval mode moves the model,
/// train mode the model, its gradients and the optimizer, around every call), on the busiest stage.
#[cold]
#[inline(never)]
fn verl_offload_seconds(ctx: &Ctx, mem: &memory::Memory) -> f64 {
    let (plan, p) = (ctx.plan, &ctx.plan.parallel);
    if !plan.framework.is_verl() || !(p.offload_params || p.offload_optimizer) {
        return 0.0;
    }
    let params = match p.offload_params {
        true => 4.0 * verl_offloaded_weights(ctx, mem) + 2.0 * fullest(mem, |s| s.gradients_bytes),
        false => 0.0,
    };
    let optimizer = match p.offload_optimizer {
        true => 2.0 * fullest(mem, |s| s.optimizer_bytes),
        false => 0.0,
    };
    (params + optimizer) / HOST_LINK_BYTES_PER_SECOND
}

/// The weights VeRL's offload moves between the host and the busiest stage: its weights but the
/// compute-dtype copy its FSDP engine keeps while it computes, which is freed, not moved.
pub(super) fn verl_offloaded_weights(ctx: &Ctx, mem: &memory::Memory) -> f64 {
    let moved =
        mem.stages.iter().map(|s| s.weights_bytes.saturating_sub(memory::verl_compute_copy(ctx.plan, s)));
    moved.max().unwrap_or(0) as f64
}

/// The parameters one device computes with, and over how many ranks its gradients and optimizer
/// states are shared.
pub(super) fn share(ctx: &Ctx, mem: &memory::Memory) -> Share {
    // The busiest stage's parameters (what ZeRO-3 and FSDP gather, reduce and update, not the
    // shard they store).
    match mem.stages.iter().max_by_key(|s| s.params) {
        Some(busiest) => share_of(ctx, mem, busiest),
        None => share_of(ctx, mem, &memory::StageMemory::default()),
    }
}

/// [`share`] of `stage`'s parameters.
pub(super) fn share_of(ctx: &Ctx, mem: &memory::Memory, stage: &memory::StageMemory) -> Share {
    let p = &ctx.plan.parallel;
    let (megatron, cp) = (mem.layout.model_parallel, mem.layout.cp);
    // Gradients are reduced, and optimizer states sharded, over the data- and context-parallel
    // ranks together (Megatron's `dp_cp_group`, megatron/core/distributed/distributed_data_parallel.py;
    // VeRL's FSDP mesh spans its Ulysses groups).
    let dp_cp = (mem.dp * cp) as f64;
    let shards_params = match megatron {
        false => p.zero_stage.shards_params(),
        true => matches!(p.fsdp, crate::plan::Fsdp::OptimGradsParams | crate::plan::Fsdp::Torch),
    };
    let (params_on_device, experts_on_device) = (stage.params as f64, stage.expert_params as f64);
    // Only what the method trains has gradients to reduce and states to step: LoRA's adapters,
    // freeze-tuning's layers, or every parameter (a share of 1).
    let trainable_share = mem.params_trained as f64 / mem.params_total.max(1) as f64;
    Share {
        dp_cp,
        shards_params,
        params_on_device,
        experts_on_device,
        edp: mem.layout.edp.max(1) as f64,
        trainable_share,
    }
}

/// Data parallel: gradients reduced (reduce-scatter with the distributed optimizer or ZeRO, then
/// parameters gathered), over the NIC unless the whole group sits in one node; what the last
/// micro-batch's backward (the longest of `backward`) does not hide when overlapped.
fn gradient_sync_seconds(ctx: &Ctx, mem: &memory::Memory, share: &Share, backward: &[f64]) -> f64 {
    let p = &ctx.plan.parallel;
    let mut dp_seconds = dp_collective_seconds(
        ctx,
        mem,
        share,
        share.trainable_share * gradient_bytes_per_param(ctx, mem),
        true,
    );
    if share.shards_params {
        // ZeRO-3 and FSDP's parameter sharding gather the parameters for forward and backward:
        // 1.5× the all-reduce (ZeRO paper §7.2).
        dp_seconds *= 1.5;
    }
    if p.distributed_optimizer && p.overlap_param_gather {
        // The distributed optimizer reduce-scatters gradients and all-gathers parameters, half the
        // volume each; `--overlap-param-gather` hides the gather behind the next forward.
        dp_seconds *= 0.5;
    }
    if p.overlap_grad_reduce {
        // Overlapped with the last micro-batch's backward; what does not fit behind it shows.
        let last_backward = backward.iter().cloned().fold(0.0, f64::max);
        dp_seconds = (dp_seconds - last_backward).max(0.1 * dp_seconds);
    }
    dp_seconds
}

/// Bytes a gradient is reduced in: Megatron reduces fp32 main gradients in bf16 training
/// (`accumulate_allreduce_grads_in_fp32` defaults on for bf16) and 16-bit gradients in fp16,
/// bf16 with `--grad-reduce-in-bf16` ([`memory::bf16_gradients`]); DeepSpeed reduces 16-bit
/// gradients; VeRL's FSDP engine fp32 (`mixed_precision.reduce_dtype: fp32`,
/// verl/trainer/config/engine/fsdp.yaml at verl 0.9.1).
pub(super) fn gradient_bytes_per_param(ctx: &Ctx, mem: &memory::Memory) -> f64 {
    let plan = ctx.plan;
    let megatron = mem.layout.model_parallel;
    match (megatron, plan.precision) {
        _ if memory::bf16_gradients(plan) => 2.0,
        (_, Precision::Fp32) => 4.0,
        (true, Precision::Bf16 | Precision::Fp8 | Precision::Mxfp8 | Precision::Nvfp4) => 4.0,
        (false, _) if plan.framework == crate::plan::Framework::Verl => 4.0,
        _ => 2.0,
    }
}

/// What the step's end adds where the gradients were reduced after every micro-batch: DeepSpeed
/// ZeRO-2 gathers the updated 16-bit parameters after the optimizer step (`all_gather_dp_groups`,
/// deepspeed/runtime/zero/stage_1_and_2.py); ZeRO-3 and VeRL's FSDP keep them sharded until the
/// next forward gathers them (`sharded.rs`).
fn updated_params_gather_seconds(ctx: &Ctx, mem: &memory::Memory, share: &Share) -> f64 {
    let plan = ctx.plan;
    if plan.framework == crate::plan::Framework::Verl || share.shards_params {
        return 0.0;
    }
    dp_collective_seconds(
        ctx,
        mem,
        share,
        share.trainable_share * memory::compute_bytes_per_param(plan),
        false,
    )
}

/// A ring collective (all-reduce, else all-gather or reduce-scatter) of `bytes_per_param` for
/// each parameter this device computes with: the dense ones over DP × CP, then the routed experts
/// over the expert-data-parallel group, as Megatron's DDP keeps them in buffers of their own
/// (`expert_parallel_buffers`, megatron/core/distributed/distributed_data_parallel.py) reduced
/// over that group, whose ranks sit EP × expert TP apart (`expert_decoder_rank_generator`, order
/// "tp-ep-dp-pp", megatron/core/parallel_state.py; both at Megatron-LM d98e8a6). One collective
/// where the groups are the same (no EP, or EP × expert TP = TP).
pub(super) fn dp_collective_seconds(
    ctx: &Ctx,
    mem: &memory::Memory,
    share: &Share,
    bytes_per_param: f64,
    all_reduce: bool,
) -> f64 {
    let hw = ctx.hw;
    let expert_stride = mem.layout.ep * mem.layout.etp;
    if expert_stride == mem.layout.tp || share.experts_on_device <= 0.0 {
        let bytes = share.params_on_device * bytes_per_param;
        return ring_seconds_on(hw, bytes, share.dp_cp, dp_bandwidth(ctx, mem), all_reduce);
    }
    let dense = (share.params_on_device - share.experts_on_device) * bytes_per_param;
    let experts = share.experts_on_device * bytes_per_param;
    let domain = u64::from(ctx.plan.cluster.scale_up_domain.get());
    let edp_bandwidth = group_bandwidth(hw, domain, mem.layout.edp, expert_stride);
    ring_seconds_on(hw, dense, share.dp_cp, dp_bandwidth(ctx, mem), all_reduce)
        + ring_seconds_on(hw, experts, share.edp, edp_bandwidth, all_reduce)
}

/// The bandwidth each rank of the data- and context-parallel group gets: its peers sit tp ranks
/// apart (Megatron's rank order: TP innermost, then CP, DP, PP).
pub(super) fn dp_bandwidth(ctx: &Ctx, mem: &memory::Memory) -> f64 {
    let (tp, cp) = (mem.layout.tp, mem.layout.cp);
    group_bandwidth(ctx.hw, u64::from(ctx.plan.cluster.scale_up_domain.get()), mem.dp * cp, tp)
}

/// Gradient reductions and optimizer steps per step: RL updates the actor once per mini-batch of
/// prompts (VeRL `ppo_mini_batch_size`, MindSpeed-RL `mini_batch_size`), each reducing gradients
/// and stepping the optimizer; else one.
fn updates(ctx: &Ctx) -> f64 {
    let plan = ctx.plan;
    match ctx.rl {
        true => {
            let global = plan.batch.global_batch.get();
            f64::from(global.div_ceil(plan.rl.mini_batch_prompts(global).clamp(1, global)))
        }
        false => 1.0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::Plan;

    /// Mixtral 8x7B on 8 H100 with EP 8 (no TP, no PP): DP 8, and the expert-data-parallel group of
    /// world ÷ (PP · EP · expert TP) = 1. Its config.json: 32 layers of 8 experts, each three
    /// 4,096 × 14,336 matrices, so each device computes with one expert a layer: 32 · 3 · 4,096 ·
    /// 14,336 = 5,637,144,576 parameters. Those are reduced by no one; the rest over DP 8.
    #[test]
    fn experts_reduce_over_the_expert_data_parallel_group() {
        let text = |nodes: u32| {
            format!(
                r#"{{"model": "mixtral-8x7b", "framework": "megatron", "method": "pretrain", "cluster": {{"nodes": {nodes}}},
                    "parallel": {{"ep": 8, "distributed_optimizer": true}}, "batch": {{"global_batch": 64, "seq_len": 4096}}}}"#
            )
        };
        let plan = Plan::from_json(&text(1)).unwrap();
        let mem = memory::estimate(&plan);
        let ctx = Ctx::new(&plan, &mem);
        let share = super::share(&ctx, &mem);
        assert_eq!((mem.layout.dp, mem.layout.edp), (8, 1));
        assert_eq!(share.experts_on_device, 5_637_144_576.0);
        let dense_only = ring_seconds_on(
            ctx.hw,
            (share.params_on_device - share.experts_on_device) * 4.0,
            8.0,
            dp_bandwidth(&ctx, &mem),
            true,
        );
        assert_eq!(dp_collective_seconds(&ctx, &mem, &share, 4.0, true), dense_only);
        // On two nodes the experts' group is the two devices holding the same experts, a node
        // apart: one NIC each, the experts' reduction beside the dense one.
        let plan = Plan::from_json(&text(2)).unwrap();
        let mem = memory::estimate(&plan);
        let ctx = Ctx::new(&plan, &mem);
        let share = super::share(&ctx, &mem);
        assert_eq!((mem.layout.dp, mem.layout.edp), (16, 2));
        let hw = ctx.hw;
        let experts =
            ring_seconds_on(hw, share.experts_on_device * 4.0, 2.0, hw.inter_node_bytes_per_second, true);
        let dense = ring_seconds_on(
            hw,
            (share.params_on_device - share.experts_on_device) * 4.0,
            16.0,
            dp_bandwidth(&ctx, &mem),
            true,
        );
        assert_eq!(dp_collective_seconds(&ctx, &mem, &share, 4.0, true), dense + experts);
    }
}
