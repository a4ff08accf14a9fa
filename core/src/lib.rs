//! The trainplan planning engine.
//!
//! A [`Plan`] (model, cluster, …) goes in; a [`Report`] (parameter counts, memory, …) comes out.
//! The engine is pure: it does no IO (no files, no clock, no printing) and depends on no web crate,
//! so the same code runs natively in the `trainplan` CLI and as wasm in the page.
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

pub mod catalog;
pub mod memory;
pub mod model;
pub mod plan;
pub mod report;

pub use plan::Plan;
pub use report::Report;

/// Evaluates a plan. Never fails: a well-typed plan always has a report.
pub fn evaluate(plan: &Plan) -> Report {
    let arch = &plan.model.arch;
    let params = model::count_params(arch);
    let n_devices = plan.cluster.n_devices();
    let weights = memory::zero3_weight_bytes_per_device(arch, n_devices, memory::BF16_BYTES);
    Report {
        model_id: plan.model.id.to_owned(),
        n_devices,
        params: report::ParamsReport {
            total: params.total(),
            embedding: params.embedding,
            attention: params.attention,
            mlp: params.mlp,
            norms: params.norms,
            head: params.head,
            per_layer: params.per_layer,
        },
        memory: report::MemoryReport { zero3_bf16_weight_bytes_per_device: weights },
    }
}
