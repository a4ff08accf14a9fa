//! One plan of the search's space as the knobs it sets ([`Knobs`]): read from a plan, set on a
//! working plan in place, and told back as plan-file changes.

use crate::field::Field;
use crate::plan::{CpAlgo, PipelineSchedule, Plan, RecomputeGranularity, RecomputeMethod, ZeroStage};
use crate::report::Fix;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The knobs the search sets, all `Copy`, applied to a working plan in place.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub(super) struct Knobs {
    pub(super) tp: u32,
    pub(super) pp: u32,
    pub(super) vpp: u32,
    pub(super) cp: u32,
    pub(super) cp_algo: CpAlgo,
    pub(super) ep: u32,
    #[serde(with = "zero_stage_number")]
    pub(super) zero_stage: ZeroStage,
    /// DeepSpeed ZeRO++'s hpZ group (`zero_hpz_partition_size`); 1 is off.
    pub(super) zero_hpz: u32,
    pub(super) offload_optimizer: bool,
    pub(super) offload_params: bool,
    pub(super) swap_optimizer: bool,
    pub(super) distributed_optimizer: bool,
    pub(super) sequence_parallel: bool,
    pub(super) overlap_grad_reduce: bool,
    pub(super) overlap_param_gather: bool,
    pub(super) recompute: RecomputeGranularity,
    pub(super) recompute_method: RecomputeMethod,
    pub(super) recompute_layers: u32,
    pub(super) swap_attention: bool,
    pub(super) schedule: PipelineSchedule,
    pub(super) micro_batch: u32,
    pub(super) uneven_layers: bool,
    pub(super) fsdp: crate::plan::Fsdp,
    pub(super) rollout_tp: u32,
    pub(super) rollout_ep: u32,
    pub(super) liger_kernel: bool,
    pub(super) no_sync_accumulation: bool,
    pub(super) offload_policy: bool,
}

impl Knobs {
    pub(super) fn of(plan: &Plan) -> Knobs {
        let p = &plan.parallel;
        Knobs {
            tp: p.tp.get(),
            pp: p.pp.get(),
            vpp: p.vpp.get(),
            cp: p.cp.get(),
            cp_algo: p.cp_algo,
            ep: p.ep.get(),
            zero_stage: p.zero_stage,
            zero_hpz: p.zero_hpz.get(),
            offload_optimizer: p.offload_optimizer,
            offload_params: p.offload_params,
            swap_optimizer: p.swap_optimizer,
            distributed_optimizer: p.distributed_optimizer,
            sequence_parallel: p.sequence_parallel,
            overlap_grad_reduce: p.overlap_grad_reduce,
            overlap_param_gather: p.overlap_param_gather,
            recompute: plan.recompute.granularity,
            recompute_method: plan.recompute.method,
            recompute_layers: plan.recompute.num_layers.get(),
            swap_attention: plan.recompute.swap_attention,
            schedule: p.schedule,
            micro_batch: plan.batch.micro_batch.get(),
            uneven_layers: p.uneven_layers,
            fsdp: p.fsdp,
            rollout_tp: plan.rl.rollout_tp.get(),
            rollout_ep: plan.rl.rollout_ep.get(),
            liger_kernel: plan.liger_kernel,
            no_sync_accumulation: p.no_sync_accumulation,
            offload_policy: p.offload_policy,
        }
    }

    pub(super) fn set(self, plan: &mut Plan) {
        let nz = |x: u32| std::num::NonZeroU32::new(x.max(1)).expect("at least 1");
        let p = &mut plan.parallel;
        p.tp = nz(self.tp);
        p.pp = nz(self.pp);
        p.vpp = nz(self.vpp);
        p.cp = nz(self.cp);
        p.cp_algo = self.cp_algo;
        p.ep = nz(self.ep);
        p.zero_stage = self.zero_stage;
        p.zero_hpz = nz(self.zero_hpz);
        p.offload_optimizer = self.offload_optimizer;
        p.offload_params = self.offload_params;
        p.swap_optimizer = self.swap_optimizer;
        p.distributed_optimizer = self.distributed_optimizer;
        p.sequence_parallel = self.sequence_parallel;
        p.overlap_grad_reduce = self.overlap_grad_reduce;
        p.overlap_param_gather = self.overlap_param_gather;
        p.uneven_layers = self.uneven_layers;
        p.fsdp = self.fsdp;
        p.schedule = self.schedule;
        plan.recompute.granularity = self.recompute;
        plan.recompute.method = self.recompute_method;
        plan.recompute.num_layers = nz(self.recompute_layers);
        plan.recompute.swap_attention = self.swap_attention;
        plan.batch.micro_batch = nz(self.micro_batch);
        plan.rl.rollout_tp = nz(self.rollout_tp);
        plan.rl.rollout_ep = nz(self.rollout_ep);
        plan.liger_kernel = self.liger_kernel;
        plan.parallel.no_sync_accumulation = self.no_sync_accumulation;
        plan.parallel.offload_policy = self.offload_policy;
    }

    /// The plan-file changes from `from` to `self`, in an order each step of which parses.
    pub(super) fn changes(self, from: Knobs) -> Vec<Fix> {
        let mut res = Vec::new();
        let mut push = |field: Field, changed: bool, value: Value| {
            if changed {
                res.push(Fix { field, value });
            }
        };
        push(Field::ParallelTp, self.tp != from.tp, self.tp.into());
        push(
            Field::ParallelUnevenLayers,
            self.uneven_layers != from.uneven_layers,
            self.uneven_layers.into(),
        );
        push(Field::ParallelPp, self.pp != from.pp, self.pp.into());
        push(Field::ParallelVpp, self.vpp != from.vpp, self.vpp.into());
        push(Field::ParallelCp, self.cp != from.cp, self.cp.into());
        push(Field::ParallelCpAlgo, self.cp_algo != from.cp_algo, self.cp_algo.wire().into());
        push(Field::ParallelEp, self.ep != from.ep, self.ep.into());
        push(Field::ParallelZeroStage, self.zero_stage != from.zero_stage, self.zero_stage.get().into());
        push(Field::ParallelZeroHpz, self.zero_hpz != from.zero_hpz, self.zero_hpz.into());
        push(
            Field::ParallelOffloadOptimizer,
            self.offload_optimizer != from.offload_optimizer,
            self.offload_optimizer.into(),
        );
        push(
            Field::ParallelOffloadParams,
            self.offload_params != from.offload_params,
            self.offload_params.into(),
        );
        push(
            Field::ParallelSwapOptimizer,
            self.swap_optimizer != from.swap_optimizer,
            self.swap_optimizer.into(),
        );
        push(
            Field::ParallelDistributedOptimizer,
            self.distributed_optimizer != from.distributed_optimizer,
            self.distributed_optimizer.into(),
        );
        push(
            Field::ParallelSequenceParallel,
            self.sequence_parallel != from.sequence_parallel,
            self.sequence_parallel.into(),
        );
        push(
            Field::ParallelOverlapGradReduce,
            self.overlap_grad_reduce != from.overlap_grad_reduce,
            self.overlap_grad_reduce.into(),
        );
        push(
            Field::ParallelOverlapParamGather,
            self.overlap_param_gather != from.overlap_param_gather,
            self.overlap_param_gather.into(),
        );
        push(
            Field::RecomputeGranularity,
            self.recompute != from.recompute,
            serde_json::to_value(self.recompute).expect("an enum always serializes"),
        );
        push(
            Field::RecomputeMethod,
            self.recompute_method != from.recompute_method,
            serde_json::to_value(self.recompute_method).expect("an enum always serializes"),
        );
        push(
            Field::RecomputeNumLayers,
            self.recompute_layers != from.recompute_layers,
            self.recompute_layers.into(),
        );
        push(
            Field::RecomputeSwapAttention,
            self.swap_attention != from.swap_attention,
            self.swap_attention.into(),
        );
        push(
            Field::ParallelSchedule,
            self.schedule != from.schedule,
            serde_json::to_value(self.schedule).expect("an enum always serializes"),
        );
        push(
            Field::ParallelFsdp,
            self.fsdp != from.fsdp,
            serde_json::to_value(self.fsdp).expect("an enum always serializes"),
        );
        push(Field::RlRolloutTp, self.rollout_tp != from.rollout_tp, self.rollout_tp.into());
        push(Field::RlRolloutEp, self.rollout_ep != from.rollout_ep, self.rollout_ep.into());
        push(Field::BatchMicroBatch, self.micro_batch != from.micro_batch, self.micro_batch.into());
        push(Field::LigerKernel, self.liger_kernel != from.liger_kernel, self.liger_kernel.into());
        push(
            Field::ParallelNoSyncAccumulation,
            self.no_sync_accumulation != from.no_sync_accumulation,
            self.no_sync_accumulation.into(),
        );
        push(
            Field::ParallelOffloadPolicy,
            self.offload_policy != from.offload_policy,
            self.offload_policy.into(),
        );
        res
    }
}

/// A ZeRO stage in a part's JSON ([`Partial`]): its number, as the plan file writes it.
mod zero_stage_number {
    use crate::plan::ZeroStage;
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(stage: &ZeroStage, to: S) -> Result<S::Ok, S::Error> {
        to.serialize_u8(stage.get())
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(from: D) -> Result<ZeroStage, D::Error> {
        let stage = u8::deserialize(from)?;
        ZeroStage::new(stage).ok_or_else(|| serde::de::Error::custom(format!("no ZeRO stage {stage}")))
    }
}
