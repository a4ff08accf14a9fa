//! Each candidate move applied and evaluated (peak, throughput, fits), kept only when it helps and
//! breaks no framework rule the plan keeps, and the kept ones ordered: what makes the plan fit, or
//! what makes it fastest.

use super::Advice;
use super::candidates::Candidate;
use crate::plan::Plan;
use crate::report::{Code, Fix, Severity};
use crate::{memory, rules, time};

/// The plan's current figures, to compare candidates with.
pub(super) struct Base {
    pub peak: u64,
    pub tokens_per_second: f64,
    pub fits: bool,
    /// Framework rules the plan breaks now ([`rule_errors`]).
    pub rule_errors: usize,
}

impl Base {
    pub fn of(plan: &Plan, mem: &memory::Memory, t: &time::StepTime) -> Base {
        Base {
            peak: mem.peak_bytes,
            tokens_per_second: t.tokens_per_second,
            fits: mem.peak_bytes <= mem.usable_bytes,
            rule_errors: rule_errors(plan, mem),
        }
    }
}

/// The plan with `changes` applied, its memory and its step time; `None` when a change does not
/// apply.
pub(super) fn evaluate_change(
    plan: &Plan,
    changes: &[Fix],
) -> Option<(Plan, memory::Memory, time::StepTime)> {
    let changed = rules::apply_all(plan, changes).ok()?;
    let mem = memory::estimate(&changed);
    let t = time::estimate(&changed, &mem);
    Some((changed, mem, t))
}

/// Framework rules a plan breaks, the memory check aside (advice is judged on memory separately).
pub(super) fn rule_errors(plan: &Plan, mem: &memory::Memory) -> usize {
    let findings = rules::check(plan, mem);
    findings.iter().filter(|f| f.severity == Severity::Error && f.code != Code::MemoryDoesNotFit).count()
}

/// `after − before` in bytes, in i128 so peaks above 2^63 bytes (absurd plans) neither overflow nor
/// wrap, then clamped to i64.
pub(super) fn peak_delta_bytes(after: u64, before: u64) -> i64 {
    (i128::from(after) - i128::from(before)).clamp(i128::from(i64::MIN), i128::from(i64::MAX)) as i64
}

/// The candidate applied and evaluated: its advice when it keeps the framework's rules (fits aside)
/// and is worth making against `base`, else `None`.
pub(super) fn evaluate(plan: &Plan, base: &Base, candidate: Candidate) -> Option<Advice> {
    let (changed, mem, t) = evaluate_change(plan, &candidate.changes)?;
    if base.rule_errors < rule_errors(&changed, &mem) {
        return None;
    }
    let res = Advice {
        code: candidate.code,
        changes: candidate.changes,
        peak_bytes: mem.peak_bytes,
        peak_delta_bytes: peak_delta_bytes(mem.peak_bytes, base.peak),
        step_seconds: t.step_seconds,
        tokens_per_second: t.tokens_per_second,
        speed_delta_frac: t.tokens_per_second / base.tokens_per_second - 1.0,
        fits: mem.peak_bytes <= mem.usable_bytes,
    };
    worth_making(base, &res).then_some(res)
}

/// A move worth making saves memory when it does not fit, or at least 1 % of the time while
/// fitting (less is inside the model's own error, docs/time.md); a move whose words promise speed
/// must be faster by that much, fitting or not.
fn worth_making(base: &Base, a: &Advice) -> bool {
    match base.fits {
        _ if a.code.promises_speed() && a.speed_delta_frac <= 0.01 => false,
        _ if a.code.for_quality() => a.fits,
        false => a.peak_delta_bytes < 0,
        true => a.fits && 0.01 < a.speed_delta_frac,
    }
}

/// The kept advice in order. A plan that does not fit is offered the moves that make it fit, the
/// fastest first; the ones that only shrink the peak, the most first, when none does. A plan that
/// fits is offered the fastest first. The sort is stable: equals keep the candidates' order.
pub(super) fn rank(base: &Base, mut res: Vec<Advice>) -> Vec<Advice> {
    if !base.fits && res.iter().any(|a| a.fits) {
        res.retain(|a| a.fits);
    }
    match base.fits {
        // Moves that make it fit first, the fastest of them first; then what saves the most.
        false => crate::sort::sort_by(&mut res, |a, b| match (a.fits, b.fits) {
            (true, true) => b.tokens_per_second.total_cmp(&a.tokens_per_second),
            (false, false) => a.peak_bytes.cmp(&b.peak_bytes),
            (fits, _) => (!fits).cmp(&fits),
        }),
        true => crate::sort::sort_by(&mut res, |a, b| b.tokens_per_second.total_cmp(&a.tokens_per_second)),
    }
    res
}
