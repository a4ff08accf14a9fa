//! Fixes that converge. A rule's own fix is the nearest value for its field; on its own it can
//! break another rule (Llama-3.1-405B on PP 16: "126 layers do not split over PP 16" offers PP 14,
//! which 1,024 devices at TP 8 do not divide, whose fix is PP 16 again). So before a finding is
//! shown, its fix is tried on the plan: it must resolve the finding and bring no error the plan
//! did not have. Where the rule's value fails, the field's other values are tried, nearest first;
//! where no value of that one field works, the finding is marked [`Finding::make_valid`] and
//! [`make_valid`] finds the nearest plan the search says fits and keeps every rule.

use crate::field::Field;
use serde_json::Value;

use crate::plan::{Framework, Method, PipelineSchedule, Plan, Precision, RecomputeGranularity};
use crate::report::{Code, Finding, Fix, Severity};
use crate::{memory, rules, search};

/// Whether `fix` on `plan` resolves `code` and brings no error `before` lacks: each error as its
/// rule and the field it names, where the rule fires once per field (`hf.no_model_parallel` for
/// TP, CP, PP, EP). For memory, a move that makes the plan fit.
fn converges(plan: &Plan, fix: &Fix, finding: &Finding, before: &[(Code, Option<String>)]) -> bool {
    let Ok(fixed) = rules::apply(plan, fix) else { return false };
    let mem = memory::estimate(&fixed);
    let after = rules::check(&fixed, &mem);
    // Resolved: the rule no longer fires (memory: the plan fits, not merely a lower peak). A rule
    // that fires once per field (`hf.no_model_parallel` for TP, PP, EP) is told apart by it.
    let resolved =
        !after.iter().any(|f| f.code == finding.code && f.args.get("field") == finding.args.get("field"));
    resolved
        && after.iter().all(|f| {
            f.severity != Severity::Error || before.contains(&(f.code, f.args.get("field").cloned()))
        })
}

/// The most values of one field a finding tries: enough for every divisor a degree can take at the
/// sizes plans have, few enough that a broken plan still evaluates in well under a millisecond.
const MAX_TRIES: usize = 24;

/// The value of a dotted plan-file field.
fn current(plan: &Plan, field: Field) -> Value {
    let file = serde_json::to_value(plan.to_file()).unwrap_or(Value::Null);
    field.path().split('.').fold(&file, |v, k| &v[k]).clone()
}

/// Other values of a field to try, nearest to the plan's own first, the rule's suggestion first
/// among equals. Whole numbers: every value to 64 and each power of two to 2^16, and the
/// suggestion's multiples; enumerations: every value.
fn candidates(plan: &Plan, fix: &Fix) -> Vec<Value> {
    if let Some(suggested) = fix.value.as_u64() {
        let now = current(plan, fix.field).as_u64().unwrap_or(suggested);
        let mut values: Vec<u64> = (1..=64).chain((0..=16).map(|k| 1u64 << k)).collect();
        values.extend((1..=16).map(|k| suggested.saturating_mul(k)));
        values.retain(|&v| 0 < v && v != now);
        crate::sort::sort_by_key(&mut values, |&v| (v.abs_diff(now), v != suggested, v));
        values.dedup();
        return values.into_iter().take(MAX_TRIES).map(Value::from).collect();
    }
    let wires: Vec<&'static str> = match fix.field {
        Field::Framework => Framework::ALL.iter().map(|x| x.wire()).collect(),
        Field::Method => Method::ALL.iter().map(|x| x.wire()).collect(),
        Field::Precision => Precision::ALL.iter().map(|x| x.wire()).collect(),
        Field::ParallelSchedule => PipelineSchedule::ALL.iter().map(|x| x.wire()).collect(),
        Field::RecomputeGranularity => RecomputeGranularity::ALL.iter().map(|x| x.wire()).collect(),
        _ => return vec![fix.value.clone()],
    };
    let now = current(plan, fix.field);
    let mut values = vec![fix.value.clone()];
    values.extend(wires.into_iter().map(Value::from).filter(|v| *v != now && *v != fix.value));
    values
}

/// The moves that free memory, cheapest first: what a plan that does not fit is offered before
/// anything else (RL's log-probabilities scored in smaller micro-batches, full recompute, sharding the
/// optimizer, then gradients and parameters, then offload).
fn memory_moves(plan: &Plan) -> Vec<Fix> {
    let p = &plan.parallel;
    let fix = |field: Field, value: Value| Fix { field, value };
    let mut moves = Vec::new();
    // RL's log-probabilities scored in larger micro-batches than the update's, whose logits can be
    // the peak: a smaller one costs a few more forwards, less than any move below; the largest
    // that fits is taken (tried in turn, largest first).
    if let Some((field, values)) = memory::log_prob_smaller(plan) {
        moves.extend(values.into_iter().map(|v| fix(field, Value::from(v))));
    }
    if plan.recompute.granularity != RecomputeGranularity::Full {
        moves.push(fix(Field::RecomputeGranularity, Value::from("full")));
    }
    match plan.framework {
        Framework::Megatron | Framework::MindSpeedLlm | Framework::MindSpeedRl | Framework::VerlMegatron => {
            if !p.distributed_optimizer {
                moves.push(fix(Field::ParallelDistributedOptimizer, Value::from(true)));
            }
            // Megatron-LM's own FSDP shards gradients and parameters too (as advice offers it).
            if plan.framework == Framework::Megatron && p.fsdp == crate::plan::Fsdp::None {
                moves.push(fix(Field::ParallelFsdp, Value::from("optim_grads_params")));
            }
        }
        _ => {
            for z in crate::plan::ZeroStage::ALL.into_iter().filter(|&z| p.zero_stage < z) {
                moves.push(fix(Field::ParallelZeroStage, Value::from(z.get())));
            }
            if !p.offload_optimizer {
                moves.push(fix(Field::ParallelOffloadOptimizer, Value::from(true)));
            }
        }
    }
    // VeRL's engines offload between passes at any sharding and DP (`optimizer_offload`,
    // `param_offload`): what frees an RL plan's rollout, where the engine's share sits beside the
    // actor's states.
    if plan.framework.is_verl() {
        if !p.offload_optimizer && plan.framework == Framework::VerlMegatron {
            moves.push(fix(Field::ParallelOffloadOptimizer, Value::from(true)));
        }
        if !p.offload_params {
            moves.push(fix(Field::ParallelOffloadParams, Value::from(true)));
        }
    }
    if 1 < plan.batch.micro_batch.get() {
        moves.push(fix(Field::BatchMicroBatch, Value::from(1)));
    }
    moves
}

/// Makes every finding's fix one that converges (see the module's words): keeps the rule's fix
/// when it does, else the nearest value of the same field that does, else (memory) the cheapest
/// move that makes the plan fit; where none does, drops the fix and marks the finding
/// [`Finding::make_valid`].
pub fn converge(plan: &Plan, findings: &mut [Finding]) {
    if findings.iter().all(|f| f.fix.is_none() && f.code != Code::MemoryDoesNotFit) {
        return;
    }
    let before: Vec<(Code, Option<String>)> = findings
        .iter()
        .filter(|f| f.severity == Severity::Error)
        .map(|f| (f.code, f.args.get("field").cloned()))
        .collect();
    for finding in findings.iter_mut() {
        let mut tries: Vec<Fix> = Vec::new();
        if let Some(fix) = &finding.fix {
            tries.push(fix.clone());
        }
        if finding.code == Code::MemoryDoesNotFit {
            tries.extend(memory_moves(plan));
        }
        let mut found = tries.iter().find(|f| converges(plan, f, finding, &before)).cloned();
        if found.is_none()
            && let Some(fix) = &finding.fix
        {
            found = candidates(plan, fix)
                .into_iter()
                .map(|value| Fix { field: fix.field, value })
                .find(|f| converges(plan, f, finding, &before));
        }
        finding.make_valid = found.is_none() && finding.severity == Severity::Error;
        finding.fix = found;
    }
}

/// The nearest plan that fits and keeps every rule, as changes to `plan`: of the search's feasible
/// plans (its fastest and its memory/speed front), the one that changes the fewest settings, the
/// fastest among those. `None` when the search finds none.
pub fn make_valid(plan: &Plan) -> Option<Vec<Fix>> {
    let found = search::search(plan);
    found
        .best
        .into_iter()
        .chain(found.pareto)
        .min_by(|a, b| {
            a.changes.len().cmp(&b.changes.len()).then(b.tokens_per_second.total_cmp(&a.tokens_per_second))
        })
        .map(|c| c.changes)
}
