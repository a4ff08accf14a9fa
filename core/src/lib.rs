//! The trainplan planning engine.
//!
//! A [`Plan`] (model, hardware, cluster, framework, method, parallelism, …) goes in; a [`Report`]
//! (parameter counts, memory, …) comes out. The engine is pure: it does no IO (no files, no clock,
//! no printing) and depends on no web crate, so the same code runs natively in the `trainplan` CLI
//! and as wasm in the page.
//!
//! # Example
//!
//! ```
//! use trainplan_core::Plan;
//!
//! let plan = Plan::from_json(r#"{"model": "llama-2-7b", "cluster": {"nodes": 1, "devices_per_node": 8}}"#)?;
//! let report = trainplan_core::evaluate(&plan);
//! // Llama-2-7B has 6,738,415,616 parameters (HF transformers `num_parameters()`).
//! assert_eq!(report.params.total, 6_738_415_616);
//! # Ok::<(), trainplan_core::plan::PlanFileError>(())
//! ```

#![deny(missing_docs)]
#![deny(clippy::print_stdout, clippy::print_stderr)]

#[macro_use]
mod named;

pub mod advice;
mod assemble;
pub mod catalog;
pub mod choices;
pub mod compare;
pub mod cost;
pub mod emit;
pub mod export;
pub mod field;
pub mod fixes;
pub mod hardware;
pub mod hf;
pub mod knobs;
pub mod layout;
pub mod logparse;
pub mod memory;
pub mod model;
pub mod overheads;
pub mod permalink;
pub mod plan;
pub mod quantized;
pub mod report;
pub mod rules;
pub mod schedule;
pub mod search;
pub mod sort;
pub mod sweep;
pub mod time;
pub mod vision;

pub use plan::Plan;
pub use report::Report;

/// Evaluates a plan. Never fails: a well-typed plan always has a report.
pub fn evaluate(plan: &Plan) -> Report {
    assemble::report(plan)
}

/// The plan's whole step along its time axis, for drawing: every pass of every micro-batch and the
/// step's other parts ([`time::StepTime::whole_timeline`]), ending at the report's step time. Kept
/// out of [`evaluate`]: it simulates the whole schedule, which the step time does not need.
pub fn step_timeline(plan: &Plan) -> time::StepTimeline {
    assemble::step_timeline(plan)
}

/// Fits the plan's calibration to a measured run of it: the efficiency multiplier that makes the
/// predicted step time equal `measured_step_seconds`, and the memory offset that makes the predicted
/// peak equal `measured_peak_bytes`. Either measurement may be absent; the result keeps the plan's
/// current value for it. A step time faster than peak allows is fitted to the largest multiplier.
pub fn calibrate(
    plan: &Plan,
    measured_step_seconds: Option<f64>,
    measured_peak_bytes: Option<u64>,
) -> plan::CalibrationFile {
    assemble::calibrate(plan, measured_step_seconds, measured_peak_bytes)
}
