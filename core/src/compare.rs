//! Plans side by side: the one being edited and up to [`MAX_PINS`] pinned ones. The figures that
//! decide between them (peak memory, fit, step time, throughput, MFU, broken rules) with the best
//! marked, memory stage by stage, the settings that differ and the findings not every plan has.
//! The page renders this; it computes nothing of its own.

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::Value;

use crate::plan::{Plan, PlanFile};
use crate::report::{Finding, Report, Severity};

/// Figures closer than this (relative) are the same: the estimates are not finer than that, and a
/// 0.1 % edge should not be shown as a win.
pub const SAME_WITHIN: f64 = 0.005;

/// The most plans that can be pinned beside the current one: five columns still fit a laptop's
/// results column, and a phone scrolls them.
pub const MAX_PINS: usize = 4;

/// A figure compared.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Metric {
    /// Devices in the cluster.
    Devices,
    /// Peak memory per device, bytes.
    PeakBytes,
    /// Whether the peak fits in usable memory: 1 or 0.
    Fits,
    /// Step time, seconds.
    StepSeconds,
    /// Tokens per second, all devices.
    TokensPerSecond,
    /// Model FLOPs utilization, a fraction.
    Mfu,
    /// Rules broken with severity error.
    Errors,
    /// Rules broken with severity warning.
    Warnings,
}

impl Metric {
    /// Every metric, in the order the comparison lists them.
    pub const ALL: [Metric; 8] = [
        Metric::Devices,
        Metric::PeakBytes,
        Metric::Fits,
        Metric::StepSeconds,
        Metric::TokensPerSecond,
        Metric::Mfu,
        Metric::Errors,
        Metric::Warnings,
    ];

    /// The metric's name as serialized, e.g. `peak_bytes`.
    pub fn name(self) -> &'static str {
        match self {
            Metric::Devices => "devices",
            Metric::PeakBytes => "peak_bytes",
            Metric::Fits => "fits",
            Metric::StepSeconds => "step_seconds",
            Metric::TokensPerSecond => "tokens_per_second",
            Metric::Mfu => "mfu",
            Metric::Errors => "errors",
            Metric::Warnings => "warnings",
        }
    }

    /// Whether a smaller value is the better one (`None`: neither, e.g. the cluster's size).
    pub fn lower_is_better(self) -> Option<bool> {
        match self {
            Metric::Devices => None,
            Metric::PeakBytes | Metric::StepSeconds | Metric::Errors | Metric::Warnings => Some(true),
            Metric::Fits | Metric::TokensPerSecond | Metric::Mfu => Some(false),
        }
    }

    /// Whether the figure is a count (compared exactly, its change shown as `+1`), not a measure.
    pub fn is_count(self) -> bool {
        matches!(self, Metric::Devices | Metric::Fits | Metric::Errors | Metric::Warnings)
    }

    /// Whether the figure is a speed, which only a plan that runs can win (see [`Row::best`]).
    fn is_speed(self) -> bool {
        matches!(self, Metric::StepSeconds | Metric::TokensPerSecond | Metric::Mfu)
    }

    /// The metric's value in a report.
    pub fn of(self, report: &Report) -> f64 {
        let count = |s: Severity| report.findings.iter().filter(|f| f.severity == s).count() as f64;
        match self {
            Metric::Devices => report.n_devices as f64,
            Metric::PeakBytes => report.memory.peak_bytes as f64,
            Metric::Fits => f64::from(u8::from(report.memory.fits)),
            Metric::StepSeconds => report.time.step_seconds,
            Metric::TokensPerSecond => report.time.tokens_per_second,
            Metric::Mfu => report.time.mfu,
            Metric::Errors => count(Severity::Error),
            Metric::Warnings => count(Severity::Warning),
        }
    }
}

/// How a plan's figure differs from the first plan's (the current one).
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Change {
    /// The same (within [`SAME_WITHIN`] for measured figures, exactly for counts).
    Same,
    /// A count changed by this much (devices, errors, warnings): `+1`, not "×∞".
    By(f64),
    /// A measured figure scaled by this factor.
    Times(f64),
}

/// One figure of every plan.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Row {
    /// What is compared.
    pub metric: Metric,
    /// Each plan's value, in the order the plans were given.
    pub values: Vec<f64>,
    /// How each plan's value differs from the first plan's (the first's is [`Change::Same`]).
    pub changes: Vec<Change>,
    /// Which plans have the best value: the best and those within [`SAME_WITHIN`] of it (counts:
    /// equal to it). A speed is won only among the plans that run (fit and break no rule) when any
    /// does: the fastest plan that does not fit is no plan. All `false` when every plan would be
    /// marked (nothing sets one apart), for one plan alone, and for a figure with no better
    /// direction.
    pub best: Vec<bool>,
}

/// One pipeline stage's peak memory in each plan (`None` where a plan has fewer stages).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct StageRow {
    /// Stage index.
    pub stage: u64,
    /// Each plan's total, bytes.
    pub totals: Vec<Option<u64>>,
}

/// A plan-file setting that not every plan sets the same way, as dotted path and each plan's value
/// (JSON; `null` when absent).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Difference {
    /// Dotted path, e.g. `parallel.tp`.
    pub field: String,
    /// Each plan's value.
    pub values: Vec<Value>,
}

/// The comparison of plans, the current one first.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Comparison {
    /// The deciding figures, in [`Metric::ALL`]'s order.
    pub rows: Vec<Row>,
    /// Memory per stage.
    pub stages: Vec<StageRow>,
    /// Settings that differ, in the plan file's order.
    pub differences: Vec<Difference>,
    /// Each plan's findings whose code not every plan has.
    pub distinct: Vec<Vec<Finding>>,
    /// The better plan overall (its index): one that fits in memory and breaks no rule ranks above
    /// one that does not, whatever its speed; between plans of a kind, the higher throughput. `None`
    /// when the two best tie (within [`SAME_WITHIN`]) or there is one plan only.
    pub best: Option<usize>,
}

/// Compares plans (file and report each); the first is the one the changes are measured from.
///
/// ```
/// use trainplan_core::{Plan, compare, evaluate};
/// let a = Plan::from_json(r#"{"model": "qwen2.5-7b"}"#)?;
/// let b = Plan::from_json(r#"{"model": "qwen2.5-7b", "cluster": {"nodes": 2}}"#)?;
/// let (ra, rb) = (evaluate(&a), evaluate(&b));
/// let c = compare::compare(&[(&a.to_file(), &ra), (&b.to_file(), &rb)]);
/// assert_eq!(c.differences[0].field, "cluster.nodes");
/// assert_eq!(c.differences[0].values, [1, 2]);
/// # Ok::<(), trainplan_core::plan::PlanFileError>(())
/// ```
pub fn compare(plans: &[(&PlanFile, &Report)]) -> Comparison {
    let reports: Vec<&Report> = plans.iter().map(|(_, r)| *r).collect();
    let runs: Vec<bool> = reports.iter().map(|r| runs(r)).collect();
    let rows = Metric::ALL
        .into_iter()
        .map(|metric| {
            let values: Vec<f64> = reports.iter().map(|r| metric.of(r)).collect();
            let changes = values.iter().map(|&v| change(metric, values[0], v)).collect();
            let best = best(metric, &values, &runs);
            Row { metric, values, changes, best }
        })
        .collect();
    let n_stages = reports.iter().map(|r| r.memory.stages.len()).max().unwrap_or(0);
    let stages = (0..n_stages)
        .map(|i| StageRow {
            stage: i as u64,
            totals: reports.iter().map(|r| r.memory.stages.get(i).map(|s| s.total)).collect(),
        })
        .collect();
    let distinct = reports
        .iter()
        .map(|r| {
            let everywhere =
                |f: &Finding| reports.iter().all(|o| o.findings.iter().any(|g| g.code == f.code));
            r.findings.iter().filter(|f| !everywhere(f)).cloned().collect()
        })
        .collect();
    let files: Vec<&PlanFile> = plans.iter().map(|(f, _)| *f).collect();
    Comparison { rows, stages, differences: differences(&files), distinct, best: overall(&reports) }
}

/// Whether a plan runs: it fits in memory and breaks no rule.
fn runs(report: &Report) -> bool {
    report.memory.fits && report.findings.iter().all(|f| f.severity != Severity::Error)
}

/// Whether two figures are the same as the comparison reads them.
fn same(metric: Metric, a: f64, b: f64) -> bool {
    match metric.is_count() {
        true => a == b,
        false => (a - b).abs() <= SAME_WITHIN * a.abs().max(b.abs()),
    }
}

/// How `value` differs from `first`.
fn change(metric: Metric, first: f64, value: f64) -> Change {
    let ratio = (first != 0.0).then(|| value / first).filter(|r| r.is_finite());
    match (metric.is_count(), ratio) {
        _ if same(metric, first, value) => Change::Same,
        (true, _) | (false, None) => Change::By(value - first),
        (false, Some(x)) => Change::Times(x),
    }
}

/// Which plans have the best value of a row (see [`Row::best`]).
fn best(metric: Metric, values: &[f64], runs: &[bool]) -> Vec<bool> {
    let none = vec![false; values.len()];
    let Some(lower) = metric.lower_is_better() else { return none };
    if values.len() < 2 || values.iter().any(|v| !v.is_finite()) {
        return none;
    }
    let any_runs = runs.iter().any(|&r| r);
    let candidate = |i: usize| !metric.is_speed() || !any_runs || runs[i];
    let better = |a: f64, b: f64| if lower { a < b } else { b < a };
    let Some(top) =
        (0..values.len()).filter(|&i| candidate(i)).map(|i| values[i]).reduce(|a, b| match better(b, a) {
            true => b,
            false => a,
        })
    else {
        return none;
    };
    let marked: Vec<bool> = (0..values.len()).map(|i| candidate(i) && same(metric, values[i], top)).collect();
    match marked.iter().all(|&m| m) {
        true => none,
        false => marked,
    }
}

/// Which plan is better overall (see [`Comparison::best`]).
fn overall(reports: &[&Report]) -> Option<usize> {
    let key = |i: usize| (runs(reports[i]), reports[i].time.tokens_per_second);
    if reports.iter().any(|r| !r.time.tokens_per_second.is_finite()) {
        return None;
    }
    let mut order: Vec<usize> = (0..reports.len()).collect();
    crate::sort::sort_by(&mut order, |&a, &b| {
        let ((ra, ta), (rb, tb)) = (key(a), key(b));
        rb.cmp(&ra).then(tb.total_cmp(&ta))
    });
    let (&first, second) = (order.first()?, order.get(1)?);
    let ((r1, t1), (r2, t2)) = (key(first), key(*second));
    match r1 == r2 && same(Metric::TokensPerSecond, t1, t2) {
        true => None,
        false => Some(first),
    }
}

/// The settings whose values are not the same in every plan file, leaf by leaf. A model given as a
/// whole config.json counts as one setting.
pub fn differences(files: &[&PlanFile]) -> Vec<Difference> {
    let leaves: Vec<BTreeMap<String, Value>> = files.iter().map(|f| leaves(f)).collect();
    let mut fields: Vec<&String> = leaves.iter().flat_map(|l| l.keys()).collect();
    crate::sort::sort(&mut fields);
    fields.dedup();
    fields
        .into_iter()
        .filter_map(|field| {
            let values: Vec<Value> =
                leaves.iter().map(|l| l.get(field).cloned().unwrap_or(Value::Null)).collect();
            values.iter().any(|v| v != &values[0]).then(|| Difference { field: field.clone(), values })
        })
        .collect()
}

/// The plan file's settings by dotted path. A field the file leaves out is at its default: the node
/// count is written out (1), the rest (the hardware's devices per node, unset overheads) stay
/// absent and compare as `null`, which the page shows as "default".
pub fn leaves(file: &PlanFile) -> BTreeMap<String, Value> {
    let value = serde_json::to_value(file).expect("a plan file is always JSON");
    let mut out = BTreeMap::new();
    flatten("", &value, &mut out);
    out.entry("cluster.nodes".to_owned()).or_insert_with(|| Value::from(file.cluster.nodes));
    out
}

fn flatten(prefix: &str, value: &Value, out: &mut BTreeMap<String, Value>) {
    match value {
        // The model and a custom device are one choice each, whatever their inner keys.
        Value::Object(map) if !matches!(prefix, "model" | "hardware") => {
            for (key, v) in map {
                let path = if prefix.is_empty() { key.clone() } else { format!("{prefix}.{key}") };
                flatten(&path, v, out);
            }
        }
        _ => {
            out.insert(prefix.to_owned(), value.clone());
        }
    }
}

/// Why a plan was not pinned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PinRefused {
    /// Occurs when [`MAX_PINS`] plans are pinned already.
    Full,
    /// Occurs when the same plan is pinned already.
    AlreadyPinned,
}

/// Pins `plan` after the plans pinned already.
///
/// # Errors
///
/// [`PinRefused`]; the pins are then as they were.
pub fn pin(pins: &mut Vec<Plan>, plan: &Plan) -> Result<(), PinRefused> {
    if pins.contains(plan) {
        return Err(PinRefused::AlreadyPinned);
    }
    if MAX_PINS <= pins.len() {
        return Err(PinRefused::Full);
    }
    pins.push(plan.clone());
    Ok(())
}

/// Makes pin `idx` the current plan: the current plan takes its place among the pins, so nothing is
/// lost. Returns the plan to edit now; `None` (and nothing changed) when there is no such pin.
pub fn make_current(pins: &mut [Plan], idx: usize, current: &Plan) -> Option<Plan> {
    let slot = pins.get_mut(idx)?;
    Some(std::mem::replace(slot, current.clone()))
}
