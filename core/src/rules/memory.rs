//! The memory knobs against the framework and the fit: the distributed optimizer's overlaps and
//! optimizer offload on the Megatron path, which FSDP each framework has, and a peak that exceeds
//! the device (with the first memory knob that lowers it as the fix).

use crate::field::Field;
use serde_json::Value;

use super::{Acc, Ctx};
use crate::plan::{Framework, RecomputeGranularity};
use crate::report::{Code, Severity};

/// The distributed optimizer's overlaps and optimizer offload on the Megatron path.
pub(super) fn megatron_optimizer(cx: &Ctx, acc: &mut Acc) {
    use crate::plan::{Fsdp, Precision};
    use Severity::{Error, Warning};
    let &Ctx { plan, p, .. } = cx;
    if p.fp8_param_gather {
        if !matches!(plan.precision, Precision::Fp8 | Precision::Mxfp8) {
            // Transformer Engine's fp8 parameters exist in fp8 training alone (`fp8_model_init`
            // under `--fp8-format`; `--fp4-param-gather` is NVFP4's own).
            acc.push(
                Error,
                Code::PrecisionFp8ParamGather,
                &[("precision", plan.precision.wire().to_owned())],
                Some((Field::ParallelFp8ParamGather, Value::from(false))),
            );
        } else if p.fsdp == Fsdp::Torch || (!p.distributed_optimizer && p.fsdp == Fsdp::None) {
            // `validate_args` (megatron/training/arguments.py at core_v0.19.0): "--fp8-param-gather
            // only supported with distributed optimizer, torch fsdp2, megatron fsdp", and under
            // torch FSDP2 with Transformer Engine 2.0 or later it turns it off ("will fallback to
            // bf16 all_gather").
            let fix = match p.fsdp == Fsdp::Torch {
                true => (Field::ParallelFp8ParamGather, false),
                false => (Field::ParallelDistributedOptimizer, true),
            };
            acc.push(Error, Code::ParallelFp8ParamGather, &[], Some((fix.0, Value::from(fix.1))));
        }
    }
    if p.grad_reduce_bf16 && !crate::memory::bf16_training(plan.precision) {
        // `validate_args` reads `--grad-reduce-in-bf16` in bf16 training alone.
        acc.push(
            Warning,
            Code::PrecisionGradReduceBf16,
            &[("precision", plan.precision.wire().to_owned())],
            Some((Field::ParallelGradReduceBf16, Value::from(false))),
        );
    }
    if p.overlap_param_gather && !(p.distributed_optimizer && p.overlap_grad_reduce) {
        // `validate_args`: the gather overlap needs both.
        // With the distributed optimizer on, turning on --overlap-grad-reduce completes the set;
        // otherwise the one switch that resolves it is the gather overlap itself.
        let (field, value) = match p.distributed_optimizer {
            true => (Field::ParallelOverlapGradReduce, true),
            false => (Field::ParallelOverlapParamGather, false),
        };
        acc.push(Error, Code::ParallelParamGatherNeeds, &[], Some((field, Value::from(value))));
    }
    // VeRL's `optimizer_offload` moves the states to the host between updates (`offload_megatron_optimizer`),
    // whatever the optimizer: not megatron-core's CPU optimizer.
    if p.offload_optimizer
        && !p.distributed_optimizer
        && plan.framework != crate::plan::Framework::VerlMegatron
    {
        // Megatron-LM `validate_args` (megatron/training/arguments.py @5be9626): --optimizer-cpu-offload
        // needs --use-precision-aware-optimizer, which `OptimizerConfig.__post_init__`
        // (megatron/core/optimizer/optimizer_config.py) allows only with the distributed optimizer.
        acc.push(
            Error,
            Code::ParallelOffloadNeedsDistributedOptimizer,
            &[],
            Some((Field::ParallelDistributedOptimizer, Value::from(true))),
        );
    }
}

/// FSDP: which frameworks have which (Megatron-LM (core_v0.19.0) has Megatron FSDP and torch
/// FSDP2; MindSpeed-LLM runs on core 0.12.1, whose parser has `--use-torch-fsdp2` but no
/// `--use-megatron-fsdp`; MindSpeed-RL's actors neither; VeRL's FSDP engine runs PyTorch's FSDP1 or
/// FSDP2 (`strategy: fsdp2`, verl/workers/engine/fsdp/transformer_impl.py at verl 0.9.1), never
/// Megatron FSDP; DeepSpeed and LLaMA-Factory shard with ZeRO), and what torch FSDP2 excludes.
pub(super) fn fsdp(cx: &Ctx, acc: &mut Acc) {
    use Severity::Error;
    let &Ctx { plan, arch, p, pp, ep, megatron, .. } = cx;
    // Every framework offers `none`.
    if !crate::choices::fsdp_offered(plan.framework).contains(&p.fsdp) {
        let fix = match plan.framework {
            Framework::MindSpeedLlm => Value::from("torch_fsdp2"),
            _ => Value::from("none"),
        };
        acc.push(
            Error,
            Code::FsdpFramework,
            &[("framework", plan.framework.wire().to_owned()), ("fsdp", p.fsdp.wire().to_owned())],
            Some((Field::ParallelFsdp, fix)),
        );
    }
    if megatron && p.fsdp == crate::plan::Fsdp::Torch {
        // megatron/training/arguments.py `validate_args`: --use-torch-fsdp2 asserts PP 1, EP 1, no
        // distributed optimizer and untied embeddings.
        let conflict: Option<(&str, Field, Value)> = if 1 < pp {
            Some(("pipeline parallelism", Field::ParallelFsdp, Value::from("optim_grads_params")))
        } else if 1 < ep {
            Some(("expert parallelism", Field::ParallelFsdp, Value::from("optim_grads_params")))
        } else if p.distributed_optimizer {
            Some(("the distributed optimizer", Field::ParallelDistributedOptimizer, Value::from(false)))
        } else if arch.tied_embeddings {
            Some(("tied embeddings", Field::ParallelFsdp, Value::from("optim_grads_params")))
        } else {
            None
        };
        if let Some((what, field, value)) = conflict {
            acc.push(Error, Code::FsdpTorch, &[("what", what.to_owned())], Some((field, value)));
        }
    }
}

/// The peak against the device's usable memory.
pub(super) fn fits(cx: &Ctx, acc: &mut Acc) {
    use Severity::Error;
    let &Ctx { plan, mem, p, megatron, .. } = cx;
    if !mem.stages.is_empty() && mem.usable_bytes < mem.peak_bytes {
        let gib = |b: u64| format!("{:.1}", b as f64 / (1u64 << 30) as f64);
        // A stage up the framework's own ladder (VeRL's has no ZeRO-1: `choices::zero_above`).
        let up = crate::choices::zero_above(plan.framework, p.zero_stage);
        let fix = match (megatron, up, plan.recompute.granularity) {
            (_, _, RecomputeGranularity::None) => Some((Field::RecomputeGranularity, Value::from("full"))),
            (false, Some(up), _) => Some((Field::ParallelZeroStage, Value::from(up.get()))),
            (true, _, _) if !p.distributed_optimizer => {
                Some((Field::ParallelDistributedOptimizer, Value::from(true)))
            }
            _ => None,
        };
        acc.push(
            Error,
            Code::MemoryDoesNotFit,
            &[("peak", gib(mem.peak_bytes)), ("usable", gib(mem.usable_bytes))],
            fix,
        );
    }
}
