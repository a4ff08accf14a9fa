//! The `moe` section (kernels, token dispatch, capacity, overlap of the expert-parallel
//! communication) against the framework and the rest of the plan.

use crate::field::Field;
use serde_json::Value;

use super::{Acc, Ctx};
use crate::plan::{Framework, PipelineSchedule, Precision, RecomputeGranularity};
use crate::report::{Code, Severity};

/// The `moe` section against the framework and the plan: what Megatron-LM checks
/// (`TransformerConfig.__post_init__` in `megatron/core/transformer/transformer_config.py` at
/// core_v0.19.0) and which frameworks have each flag (core/data/flags/*.tsv).
pub(super) fn check(cx: &Ctx, acc: &mut Acc) {
    use crate::plan::MoeDispatcher;
    use Severity::*;
    let &Ctx { plan, p, .. } = cx;
    let m = &plan.moe;
    let framework = plan.framework;
    let off = |field: Field| Some((field, Value::from(false)));
    // The HF path (DeepSpeed, LLaMA-Factory, VeRL's FSDP actors) runs the model's own MoE block;
    // MindSpeed-RL's config classes have no capacity flags, nor does VeRL's launch file.
    let written = match framework {
        Framework::Megatron | Framework::MindSpeedLlm => true,
        // VeRL's Megatron engine: the launch file writes the dispatcher and kernels alone.
        Framework::MindSpeedRl | Framework::VerlMegatron => m.capacity_factor.is_none() && !m.pad_to_capacity,
        _ => m.is_default(),
    };
    if !written {
        acc.push(Warning, Code::MoeFramework, &[("framework", framework.wire().to_owned())], None);
    }
    if m.dispatcher == MoeDispatcher::Flex && framework != Framework::Megatron {
        // `--moe-flex-dispatcher-backend` (DeepEP, HybridEP) is Megatron-LM's; MindSpeed's parsers
        // have no backend for it.
        acc.push(
            Error,
            Code::MoeFlexFramework,
            &[("framework", framework.wire().to_owned())],
            Some((Field::MoeDispatcher, Value::from("alltoall"))),
        );
    }
    if m.dispatcher == MoeDispatcher::Flex && p.tp.get() * p.ep.get() <= 1 {
        // `MoEFlexTokenDispatcher.__init__` (`token_dispatcher.py`): "DeepEP dispatcher requires
        // TPxEP > 1".
        acc.push(Error, Code::MoeFlexParallel, &[], Some((Field::MoeDispatcher, Value::from("alltoall"))));
    }
    if m.pad_to_capacity && m.capacity_factor.is_none() {
        // "moe_expert_capacity_factor must be set to use moe_pad_expert_input_to_capacity".
        acc.push(Error, Code::MoePadNeedsCapacity, &[], off(Field::MoePadToCapacity));
    } else if m.pad_to_capacity && m.dispatcher == MoeDispatcher::Flex {
        // "Flex token dispatcher with deepep backend does not support moe_pad_expert_input_to_capacity".
        acc.push(Error, Code::MoeFlexPad, &[], off(Field::MoePadToCapacity));
    }
    if m.overlap_ep_comm {
        // Megatron-LM's `overlap_moe_expert_parallel_comm` asserts EP > 1, the alltoall or flex
        // dispatcher, no full recomputation, VPP when PP > 1, and a bf16 or fp16 model. MindSpeed's
        // own `--moe-alltoall-overlap-comm` asks for EP > 1, an all-to-all dispatcher and grouped
        // GEMM alone (`MoEAlltoAllOverlapFeature.validate_args`,
        // mindspeed/features_manager/moe/moe_alltoall_overlap.py at 028de58): MindSpeed-LLM's own
        // Qwen3-235B script runs it with full recomputation and no virtual stages.
        let ascend = matches!(framework, Framework::MindSpeedLlm | Framework::MindSpeedRl);
        let what = match () {
            _ if p.ep.get() <= 1 => Some("expert parallelism 1"),
            _ if m.dispatcher == MoeDispatcher::AllGather => Some("the allgather dispatcher"),
            _ if ascend && !m.grouped_gemm => Some("experts without grouped GEMM"),
            _ if ascend => None,
            _ if plan.recompute.granularity == RecomputeGranularity::Full => Some("full recomputation"),
            _ if 1 < p.pp.get() && p.vpp.get() <= 1 && p.schedule != PipelineSchedule::DualPipeV => {
                Some("pipeline parallelism without virtual stages")
            }
            _ if plan.precision == Precision::Fp32 => Some("fp32"),
            _ => None,
        };
        if let Some(what) = what {
            acc.push(Error, Code::MoeOverlap, &[("what", what.to_owned())], off(Field::MoeOverlapEpComm));
        }
    }
}
