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

pub mod catalog;
pub mod hardware;
pub mod hf;
pub mod memory;
pub mod model;
pub mod permalink;
pub mod plan;
pub mod report;

use std::collections::BTreeMap;

pub use plan::Plan;
pub use report::Report;

use crate::hf::ImportWarning;
use crate::plan::Method;
use crate::report::{Finding, Severity};

/// Evaluates a plan. Never fails: a well-typed plan always has a report.
pub fn evaluate(plan: &Plan) -> Report {
    let arch = &plan.model.arch;
    let counts = model::count_params(arch);
    let lora = model::lora_params(arch, u64::from(plan.lora.rank.get()), &plan.lora.targets.list());
    let trainable = match plan.method {
        Method::Lora | Method::Qlora => lora,
        _ => counts.total(),
    };
    let n_devices = plan.cluster.n_devices();
    let layers = model::layer_counts(arch)
        .into_iter()
        .map(|l| report::LayerReport {
            kind: if l.moe { "moe" } else { "dense" },
            n_layers: l.n_layers,
            params_per_layer: l.params_per_layer,
        })
        .collect();
    let hw = &plan.hardware.hw;
    Report {
        version: report::REPORT_VERSION,
        model: report::ModelReport {
            name: plan.model.name.clone(),
            model_type: arch.family.model_type(),
            n_layers: arch.n_layers,
            hidden_size: arch.hidden_size,
            vocab_size: arch.vocab_size,
            n_heads: arch.attention.n_heads(),
            n_experts: arch.moe.as_ref().map_or(0, |m| m.n_experts),
            top_k: arch.moe.as_ref().map_or(0, |m| m.top_k),
            tied_embeddings: arch.tied_embeddings,
            max_position_embeddings: arch.max_position_embeddings,
        },
        hardware: report::HardwareReport {
            id: hw.id.clone(),
            name: hw.name.clone(),
            memory_bytes: hw.memory_bytes,
            reported: hw.reported,
        },
        n_devices,
        params: report::ParamsReport {
            total: counts.total(),
            active: counts.active,
            trainable,
            embedding: counts.embedding,
            attention: counts.attention,
            mlp: counts.mlp,
            experts: counts.experts,
            shared_experts: counts.shared_experts,
            router: counts.router,
            norms: counts.norms,
            head: counts.head,
            mtp: counts.mtp,
            lora,
            layers,
        },
        memory: memory_report(plan, n_devices),
        findings: plan.model.warnings.iter().map(import_finding).collect(),
    }
}

fn memory_report(plan: &Plan, n_devices: u64) -> report::MemoryReport {
    let mem = memory::estimate(plan);
    let stages: Vec<report::StageReport> = mem
        .stages
        .iter()
        .enumerate()
        .map(|(idx, s)| report::StageReport {
            stage: idx as u64,
            n_layers: s.n_layers,
            weights: s.weights,
            gradients: s.gradients,
            optimizer: s.optimizer,
            activations: s.activations,
            logits: s.logits,
            buffers: s.buffers,
            overhead: s.overhead,
            total: s.total(),
        })
        .collect();
    let peak_stage = stages.iter().max_by_key(|s| s.total).map_or(0, |s| s.stage);
    report::MemoryReport {
        phases: mem.phases.iter().map(|p| report::PhaseReport { phase: p.phase, total: p.total }).collect(),
        rollout: mem.rollout.map(|r| report::RolloutReport {
            engine_bytes: r.engine_bytes,
            weights_bytes: r.weights_bytes,
            kv_cache_bytes: r.kv_cache_bytes,
            kv_cache_needed_bytes: r.kv_cache_needed_bytes,
        }),
        stages,
        peak_bytes: mem.peak_bytes,
        peak_stage,
        capacity_bytes: mem.capacity_bytes,
        usable_bytes: mem.usable_bytes,
        fits: mem.peak_bytes <= mem.usable_bytes,
        host_bytes_per_node: mem.host_bytes_per_node,
        dp: mem.dp,
        n_microbatches: mem.n_microbatches,
        zero3_bf16_weight_bytes_per_device: memory::zero3_weight_bytes_per_device(
            &plan.model.arch,
            n_devices,
            memory::BF16_BYTES,
        ),
    }
}

fn import_finding(warning: &ImportWarning) -> Finding {
    let (code, args) = match warning {
        ImportWarning::UnknownModelType(t) => {
            ("model.unknown_type", BTreeMap::from([("model_type", t.clone())]))
        }
        ImportWarning::MoeLayerFreq(n) => {
            ("model.moe_layer_freq", BTreeMap::from([("moe_layer_freq", n.to_string())]))
        }
    };
    Finding { severity: Severity::Warning, code, args, message: warning.to_string() }
}
