//! What a finding's fix needs: the nearest value that divides or is a multiple (the fixes' own
//! arithmetic), and `apply`, which edits a plan through its file form (or directly for the fields
//! fixes set most) and reads it back, so a fixed plan is checked as a typed one is.

use crate::field::Field;
use crate::plan::{Fsdp, OffloadDevice, PipelineSchedule, Plan, RecomputeGranularity};
use crate::report::Fix;

/// The divisor of `n` nearest to `target` (the smaller one on a tie).
pub fn nearest_divisor(n: u64, target: u64) -> u64 {
    divisors_of(n).min_by_key(|d| (d.abs_diff(target), *d)).unwrap_or(1)
}

/// Every divisor of `n` (n ≥ 1), found in √n steps: a 67-million-device cluster has its divisors
/// listed in 8,192 steps, not 67 million.
pub(crate) fn divisors_of(n: u64) -> impl Iterator<Item = u64> {
    let n = n.max(1);
    (1..).take_while(move |d| d * d <= n).filter(move |d| n.is_multiple_of(*d)).flat_map(move |d| [d, n / d])
}

/// The multiple of `step` nearest to `value`, at least `step`; on a tie the larger one.
pub fn nearest_multiple(value: u64, step: u64) -> u64 {
    let step = step.max(1);
    let down = value / step * step;
    let up = down + step;
    match (down, value - down < up - value) {
        (0, _) => step,
        (_, true) => down,
        (_, false) => up,
    }
}

/// The greatest common divisor of `a` and `b`, at least 1.
pub(super) fn gcd(a: u64, b: u64) -> u64 {
    match b {
        0 => a.max(1),
        _ => gcd(b, a % b),
    }
}

/// Applies `fixes` in order (each must leave a valid plan): what advice and search results change.
///
/// # Errors
///
/// The first fix whose plan file is not a valid plan, refused as [`apply`] refuses it.
pub fn apply_all(plan: &Plan, fixes: &[Fix]) -> Result<Plan, crate::plan::PlanFileError> {
    let mut res = plan.clone();
    for fix in fixes {
        res = apply(&res, fix)?;
    }
    Ok(res)
}

/// Applies a fix to a plan: the plan file with one field replaced, read back as a plan.
///
/// # Errors
///
/// The core's refusal if the fixed file is not a valid plan (a fix never produces one in tests).
pub fn apply(plan: &Plan, fix: &Fix) -> Result<Plan, crate::plan::PlanFileError> {
    if let Some(fixed) = apply_direct(plan, fix) {
        return Ok(fixed);
    }
    let mut value = serde_json::to_value(plan.to_file()).expect("a plan file is always JSON");
    let mut slot = &mut value;
    for key in fix.field.path().split('.') {
        slot = &mut slot[key];
    }
    *slot = fix.value.clone();
    // Read back from text, as every plan file is: a second reader of `Value`s would compile the whole
    // plan file's deserializer again (some 40 KB of the page's wasm) for these rare fields.
    let file = serde_json::from_str(&value.to_string())
        .map_err(|e| crate::plan::PlanFileError::Json(e.to_string()))?;
    Plan::from_file(&file)
}

/// [`apply`] without the plan file's round trip, for the fields fixes set most (a converging fix
/// tries many values): the same checks `Plan::from_file` makes, on the one field. `None` for any
/// other field or a value out of range, which then takes the round trip and its message.
fn apply_direct(plan: &Plan, fix: &Fix) -> Option<Plan> {
    use std::num::NonZeroU32;
    let count = |max: u32| {
        fix.value.as_u64().filter(|&v| v <= u64::from(max)).and_then(|v| NonZeroU32::new(v as u32))
    };
    let degree = || count(1 << 16);
    let size = || count(1 << 24);
    let switch = || fix.value.as_bool();
    // A choice by the name plan files give it: the serde name, so the same parse.
    let name = || fix.value.as_str();
    let mut res = plan.clone();
    let p = &mut res.parallel;
    match fix.field {
        Field::ParallelTp => p.tp = degree()?,
        Field::ParallelPp => p.pp = degree()?,
        Field::ParallelVpp => p.vpp = degree()?,
        Field::ParallelCp => p.cp = degree()?,
        Field::ParallelEp => p.ep = degree()?,
        Field::ParallelEtp => p.etp = degree()?,
        Field::ParallelZeroStage => {
            p.zero_stage = crate::plan::ZeroStage::new(u8::try_from(fix.value.as_u64()?).ok()?)?
        }
        Field::ParallelSequenceParallel => p.sequence_parallel = switch()?,
        Field::ParallelDistributedOptimizer => p.distributed_optimizer = switch()?,
        Field::ParallelOffloadOptimizer => p.offload_optimizer = switch()?,
        Field::ParallelOffloadParams => p.offload_params = switch()?,
        Field::ParallelOffloadDevice => p.offload_device = OffloadDevice::from_wire(name()?)?,
        Field::ParallelOverlapGradReduce => p.overlap_grad_reduce = switch()?,
        Field::ParallelOverlapParamGather => p.overlap_param_gather = switch()?,
        Field::ParallelUnevenLayers => p.uneven_layers = switch()?,
        Field::ParallelAccountEmbeddingLoss => p.account_embedding_loss = switch()?,
        Field::ParallelGradReduceBf16 => p.grad_reduce_bf16 = switch()?,
        Field::ParallelFp8ParamGather => p.fp8_param_gather = switch()?,
        Field::ParallelNoSyncAccumulation => p.no_sync_accumulation = switch()?,
        Field::ParallelOffloadPolicy => p.offload_policy = switch()?,
        Field::ParallelZeroHpz => p.zero_hpz = degree()?,
        Field::ParallelZeroQuantizedWeights => p.zero_quantized_weights = switch()?,
        Field::ParallelZeroQuantizedGradients => p.zero_quantized_gradients = switch()?,
        Field::ParallelFsdp => p.fsdp = Fsdp::from_wire(name()?)?,
        Field::ParallelSchedule => p.schedule = PipelineSchedule::from_wire(name()?)?,
        Field::RecomputeGranularity => res.recompute.granularity = RecomputeGranularity::from_wire(name()?)?,
        Field::LowRankLayerwise => res.low_rank.layerwise = fix.value.as_bool()?,
        Field::BatchMicroBatch => res.batch.micro_batch = size()?,
        Field::BatchGlobalBatch => res.batch.global_batch = size()?,
        _ => return None,
    }
    Some(res)
}
