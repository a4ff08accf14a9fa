//! Two plans side by side: a pinned one and the one being edited. The figures that decide between
//! them (peak memory, fit, step time, throughput, MFU, broken rules), memory stage by stage, the
//! settings that differ and the findings only one of them has. The page renders this; it computes
//! nothing of its own.

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::Value;

use crate::plan::PlanFile;
use crate::report::{Finding, Report, Severity};

/// Figures closer than this (relative) are the same: the estimates are not finer than that, and a
/// 0.1 % edge should not be shown as a win.
pub const SAME_WITHIN: f64 = 0.005;

/// A figure compared.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Metric {
    /// Devices in the cluster.
    Devices,
    /// Peak memory per device, bytes.
    PeakBytes,
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
    /// The metric's name as serialized, e.g. `peak_bytes`.
    pub fn name(self) -> &'static str {
        match self {
            Metric::Devices => "devices",
            Metric::PeakBytes => "peak_bytes",
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
            Metric::TokensPerSecond | Metric::Mfu => Some(false),
        }
    }
}

/// Which plan does better on a row.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Better {
    /// The pinned plan.
    Pinned,
    /// The current plan.
    Current,
    /// Neither: equal, or a figure with no better direction.
    Neither,
}

/// One figure of both plans.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Row {
    /// What is compared.
    pub metric: Metric,
    /// The pinned plan's value.
    pub pinned: f64,
    /// The current plan's value.
    pub current: f64,
    /// Current ÷ pinned; `None` when the pinned value is 0.
    pub ratio: Option<f64>,
    /// How the current plan's value differs, as the page shows it.
    pub change: Change,
    /// Which does better.
    pub better: Better,
}

/// How a figure changed from the pinned plan to the current one.
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

/// One pipeline stage's peak memory in each plan (`None` where the plan has fewer stages).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct StageRow {
    /// Stage index.
    pub stage: u64,
    /// Pinned plan's total, bytes.
    pub pinned: Option<u64>,
    /// Current plan's total, bytes.
    pub current: Option<u64>,
}

/// A plan-file setting that differs, as dotted path and both values (JSON; `null` when absent).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Difference {
    /// Dotted path, e.g. `parallel.tp`.
    pub field: String,
    /// The pinned plan's value.
    pub pinned: Value,
    /// The current plan's value.
    pub current: Value,
}

/// The comparison.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Comparison {
    /// The deciding figures.
    pub rows: Vec<Row>,
    /// Memory per stage.
    pub stages: Vec<StageRow>,
    /// Settings that differ, in the plan file's order.
    pub differences: Vec<Difference>,
    /// Findings (by code) only the pinned plan has.
    pub only_pinned: Vec<Finding>,
    /// Findings (by code) only the current plan has.
    pub only_current: Vec<Finding>,
    /// The better plan overall: one that fits in memory and breaks no rule ranks above one that
    /// does not, whatever its speed; between two of a kind, the higher throughput (ties within
    /// [`SAME_WITHIN`] are neither).
    pub better: Better,
}

/// Compares the pinned plan (file and report) with the current one.
pub fn compare(pinned: (&PlanFile, &Report), current: (&PlanFile, &Report)) -> Comparison {
    let (a, b) = (pinned.1, current.1);
    let count = |r: &Report, s: Severity| r.findings.iter().filter(|f| f.severity == s).count() as f64;
    let figures = [
        (Metric::Devices, a.n_devices as f64, b.n_devices as f64),
        (Metric::PeakBytes, a.memory.peak_bytes as f64, b.memory.peak_bytes as f64),
        (Metric::StepSeconds, a.time.step_seconds, b.time.step_seconds),
        (Metric::TokensPerSecond, a.time.tokens_per_second, b.time.tokens_per_second),
        (Metric::Mfu, a.time.mfu, b.time.mfu),
        (Metric::Errors, count(a, Severity::Error), count(b, Severity::Error)),
        (Metric::Warnings, count(a, Severity::Warning), count(b, Severity::Warning)),
    ];
    let rows = figures
        .into_iter()
        .map(|(metric, pinned, current)| {
            let close = (current - pinned).abs() <= SAME_WITHIN * pinned.abs().max(current.abs());
            let better = match metric.lower_is_better() {
                _ if close || !pinned.is_finite() || !current.is_finite() => Better::Neither,
                None => Better::Neither,
                Some(lower) if (current < pinned) == lower => Better::Current,
                Some(_) => Better::Pinned,
            };
            let ratio = (pinned != 0.0).then(|| current / pinned).filter(|r| r.is_finite());
            let count = matches!(metric, Metric::Devices | Metric::Errors | Metric::Warnings);
            let change = match (count, ratio) {
                (true, _) if current == pinned => Change::Same,
                (true, _) => Change::By(current - pinned),
                (false, _) if close => Change::Same,
                (false, Some(x)) => Change::Times(x),
                (false, None) => Change::By(current - pinned),
            };
            Row { metric, pinned, current, ratio, change, better }
        })
        .collect();
    let n_stages = a.memory.stages.len().max(b.memory.stages.len());
    let stages = (0..n_stages)
        .map(|i| StageRow {
            stage: i as u64,
            pinned: a.memory.stages.get(i).map(|s| s.total),
            current: b.memory.stages.get(i).map(|s| s.total),
        })
        .collect();
    let only = |x: &Report, y: &Report| {
        x.findings.iter().filter(|f| !y.findings.iter().any(|g| g.code == f.code)).cloned().collect()
    };
    Comparison {
        rows,
        stages,
        differences: differences(pinned.0, current.0),
        only_pinned: only(a, b),
        only_current: only(b, a),
        better: overall(a, b),
    }
}

/// Which plan is better overall (see [`Comparison::better`]).
fn overall(pinned: &Report, current: &Report) -> Better {
    let runs = |r: &Report| r.memory.fits && r.findings.iter().all(|f| f.severity != Severity::Error);
    match (runs(pinned), runs(current)) {
        (true, false) => Better::Pinned,
        (false, true) => Better::Current,
        _ => {
            let (a, b) = (pinned.time.tokens_per_second, current.time.tokens_per_second);
            if !a.is_finite() || !b.is_finite() || (a - b).abs() <= SAME_WITHIN * a.abs().max(b.abs()) {
                Better::Neither
            } else if a < b {
                Better::Current
            } else {
                Better::Pinned
            }
        }
    }
}

/// The settings whose values differ between two plan files, leaf by leaf. A model given as a whole
/// config.json counts as one setting.
pub fn differences(pinned: &PlanFile, current: &PlanFile) -> Vec<Difference> {
    let (a, b) = (leaves(pinned), leaves(current));
    let mut fields: Vec<&String> = a.keys().chain(b.keys()).collect();
    fields.sort();
    fields.dedup();
    fields
        .into_iter()
        .filter_map(|field| {
            let (x, y) =
                (a.get(field).cloned().unwrap_or(Value::Null), b.get(field).cloned().unwrap_or(Value::Null));
            (x != y).then(|| Difference { field: field.clone(), pinned: x, current: y })
        })
        .collect()
}

/// The plan file's settings by dotted path. A field the file leaves out is at its default: the node
/// count is written out (1), the rest (the hardware's devices per node, unset overheads) stay
/// absent and compare as `null`, which the page shows as "default".
fn leaves(file: &PlanFile) -> BTreeMap<String, Value> {
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
