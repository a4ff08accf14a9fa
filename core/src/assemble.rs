//! The [`Report`] assembled from the engine's parts: the model counted once, memory and step time
//! computed once from it, the pipeline schedule, cost, the rules checked with their fixes, and the
//! warnings of the model's import, each turned into the report's serialized form. Also the two
//! other ways in that evaluate the plan: the whole step's timeline for drawing and the calibration
//! fitted to a measured run. `lib.rs` exposes them as `evaluate`, `step_timeline` and `calibrate`.

use std::collections::BTreeMap;

use crate::hf::ImportWarning;
use crate::report::{self, Code, Finding, Report, Severity};
use crate::{Plan, cost, fixes, memory, model, plan, rules, schedule, time};

/// The plan's report: memory and time computed once, the rules checked and their fixes converged.
pub(crate) fn report(plan: &Plan) -> Report {
    // The model counted once, for memory and for the report.
    let facts = memory::ModelFacts::of(plan);
    let effective = crate::knobs::effective(plan);
    let mem = memory::estimate_with(&effective, &facts);
    let time = time::estimate_effective(&effective, &mem);
    let n_devices = plan.cluster.n_devices();
    let hw = &plan.hardware.hw;
    Report {
        version: report::REPORT_VERSION,
        model: model_report(plan),
        hardware: report::HardwareReport {
            id: hw.id.clone(),
            name: hw.name.clone(),
            memory_bytes: hw.memory_bytes,
            reported: hw.reported,
        },
        n_devices,
        params: params_report(plan, &facts, mem.params_trained),
        memory: memory_report(plan, &mem, n_devices),
        time: time_report(&time),
        schedule: schedule_report(&time, mem.n_microbatches),
        calibration: report::CalibrationReport {
            efficiency_scale: plan.calibration.efficiency(),
            rollout_scale: plan.calibration.rollout(),
            memory_offset_mib: plan.calibration.memory_offset_mib.unwrap_or(0.0),
        },
        cost: cost_report(plan, &time),
        findings: {
            let mut rules = rules::check(plan, &mem);
            fixes::converge(plan, &mut rules);
            plan.model.warnings.iter().map(|w| import_finding(plan, w)).chain(rules).collect()
        },
    }
}

fn model_report(plan: &Plan) -> report::ModelReport {
    let arch = &plan.model.arch;
    report::ModelReport {
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
    }
}

/// The parameter counts from the model counted once (`facts`), with the LoRA adapters', and the
/// `trainable` ones memory counted (`memory::Memory::params_trained`).
fn params_report(plan: &Plan, facts: &memory::ModelFacts, trainable: u64) -> report::ParamsReport {
    let counts = &facts.summary().counts;
    let lora = match plan.trains_lora() {
        true => facts.lora_params(),
        // A rank the method does not use is the default's (`knobs::effective`).
        false => {
            let rank = crate::knobs::effective(plan).lora.rank.get();
            let scope = memory::lora_scope(plan.framework);
            model::lora_params(&plan.model.arch, u64::from(rank), &plan.lora.targets.list(), scope)
        }
    };
    let layers = facts
        .summary()
        .layers
        .iter()
        .map(|l| report::LayerReport {
            kind: if l.moe { "moe" } else { "dense" },
            linear_attention: l.linear_attention,
            n_layers: l.n_layers,
            params_per_layer: l.params_per_layer,
        })
        .collect();
    report::ParamsReport {
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
        vision: plan.model.arch.vision_params(),
        lora,
        layers,
    }
}

/// The whole step, simulated pass by pass ([`crate::step_timeline`]).
pub(crate) fn step_timeline(plan: &Plan) -> time::StepTimeline {
    time::estimate(plan, &memory::estimate(plan)).whole_timeline()
}

/// The calibration fitted to a measured run ([`crate::calibrate`]).
pub(crate) fn calibrate(
    plan: &Plan,
    measured_step_seconds: Option<f64>,
    measured_peak_bytes: Option<u64>,
) -> plan::CalibrationFile {
    let mut res = plan.calibration;
    let with = |calibration: plan::CalibrationFile| {
        let mut p = plan.clone();
        p.calibration = calibration;
        p
    };
    if let Some(measured) = measured_step_seconds.filter(|x| x.is_finite() && 0.0 < *x) {
        // Step time falls as efficiency rises: bisect on the multiplier's logarithm.
        let step = |scale: f64| {
            let p = with(plan::CalibrationFile { efficiency_scale: Some(scale), ..res });
            time::estimate(&p, &memory::estimate(&p)).step_seconds
        };
        let (mut lo, mut hi) = (0.05_f64.ln(), 5.0_f64.ln());
        for _ in 0..60 {
            let mid = 0.5 * (lo + hi);
            match step(mid.exp()) < measured {
                true => hi = mid,
                false => lo = mid,
            }
        }
        res.efficiency_scale = Some((0.5 * (lo + hi)).exp());
    }
    if let Some(measured) = measured_peak_bytes {
        let without = with(plan::CalibrationFile { memory_offset_mib: None, ..res });
        let predicted = memory::estimate(&without).peak_bytes as f64;
        let offset_mib = (measured as f64 - predicted) / (1u64 << 20) as f64;
        res.memory_offset_mib = Some(offset_mib.clamp(-1e6, 1e6));
    }
    res
}

fn cost_report(plan: &Plan, time: &time::StepTime) -> report::CostReport {
    let c = cost::estimate(plan, time);
    let hw = &plan.hardware.hw;
    report::CostReport {
        budget_tokens: c.budget_tokens,
        default_budget_for_fine_tuning: cost::default_budget_for_fine_tuning(plan),
        tokens_per_step: c.tokens_per_step,
        steps: c.steps,
        wall_seconds: c.wall_seconds,
        device_hours: c.device_hours,
        board_power_watts: hw.board_power_watts,
        board_power_reported: hw.board_power_reported,
        pue: plan.budget.pue,
        energy_kwh: c.energy_kwh,
        price_per_device_hour: plan.budget.price_per_device_hour,
        price: c.price,
    }
}

fn time_report(t: &time::StepTime) -> report::TimeReport {
    report::TimeReport {
        step_seconds: t.step_seconds,
        tokens_per_second: t.tokens_per_second,
        tokens_per_second_per_device: t.tokens_per_second_per_device,
        samples_per_second: t.samples_per_second,
        mfu: t.mfu_frac,
        hfu: t.hfu_frac,
        model_flops_per_step: t.model_flops_per_step,
        hardware_flops_per_step: t.hardware_flops_per_step,
        days_per_trillion_tokens: time::days_to_train(t, 1e12),
        breakdown: t.breakdown.clone(),
    }
}

fn schedule_report(t: &time::StepTime, n_microbatches: u64) -> report::ScheduleReport {
    use schedule::{Pass, Schedule};
    report::ScheduleReport {
        name: match t.schedule {
            Schedule::GPipe => "gpipe",
            Schedule::OneFOneB => "1f1b",
            Schedule::Interleaved => "interleaved",
            Schedule::ZbH1 => "zb-h1",
            Schedule::DualPipeV => "dualpipev",
        },
        bubble_fraction: t.idle_frac,
        bubble_ratio: t.bubble_ratio,
        n_microbatches,
        n_ranks: t.pipeline_ranks(),
        timeline: t
            .timeline()
            .events
            .iter()
            .take(4000)
            .map(|e| report::EventReport {
                stage: e.stage,
                chunk: e.chunk,
                microbatch: e.microbatch,
                pass: match e.pass {
                    Pass::F => "F",
                    Pass::B => "B",
                    Pass::W => "W",
                },
                start_seconds: e.start_seconds,
                end_seconds: e.end_seconds,
            })
            .collect(),
    }
}

fn memory_report(plan: &Plan, mem: &memory::Memory, n_devices: u64) -> report::MemoryReport {
    let stages: Vec<report::StageReport> = mem
        .stages
        .iter()
        .enumerate()
        .map(|(idx, s)| report::StageReport {
            stage: idx as u64,
            n_layers: s.n_layers,
            weights: s.weights_bytes,
            gradients: s.gradients_bytes,
            optimizer: s.optimizer_bytes,
            activations: s.activations_bytes,
            logits: s.logits_bytes,
            buffers: s.buffers_bytes,
            overhead: s.overhead_bytes,
            total: s.total(),
        })
        .collect();
    let peak_stage = stages.iter().max_by_key(|s| s.total).map_or(0, |s| s.stage);
    report::MemoryReport {
        phases: {
            let top = mem.phases.iter().map(|p| p.total).max().unwrap_or(0);
            let first_top = mem.phases.iter().position(|p| p.total == top);
            mem.phases
                .iter()
                .enumerate()
                .map(|(i, p)| report::PhaseReport {
                    phase: p.phase,
                    total: p.total,
                    parts: p.parts.iter().map(|&(part, bytes)| report::PhasePart { part, bytes }).collect(),
                    peak: Some(i) == first_top && top == mem.peak_bytes,
                })
                .collect()
        },
        rollout: mem.rollout.as_ref().map(|r| report::RolloutReport {
            engine_bytes: r.engine_bytes,
            weights_bytes: r.weights_bytes,
            kv_cache_bytes: r.kv_cache_bytes,
            kv_cache_needed_bytes: r.kv_cache_needed_bytes,
        }),
        stages,
        peak_moment: mem.peak_moment.map(memory::PeakMoment::name),
        peak_bytes: mem.peak_bytes,
        peak_stage,
        capacity_bytes: mem.capacity_bytes,
        usable_bytes: mem.usable_bytes,
        fits: mem.peak_bytes <= mem.usable_bytes,
        host_bytes_per_node: mem.host_bytes_per_node,
        nvme_bytes_per_node: mem.nvme_bytes_per_node,
        dp: mem.dp,
        n_microbatches: mem.n_microbatches,
        // A vision encoder the framework loads is sharded too, counted as one tensor.
        zero3_bf16_weight_bytes_per_device: memory::zero3_weight_bytes_per_device(
            &plan.model.arch,
            n_devices,
            memory::BF16_BYTES,
        )
        .saturating_add(
            memory::loaded_vision_params(plan).div_ceil(n_devices).saturating_mul(memory::BF16_BYTES),
        ),
    }
}

fn import_finding(plan: &Plan, warning: &ImportWarning) -> Finding {
    let (code, args) = match warning {
        ImportWarning::UnknownModelType(t) => {
            (Code::ModelUnknownType, BTreeMap::from([("model_type", t.clone())]))
        }
        ImportWarning::MoeLayerFreq(n) => {
            (Code::ModelMoeLayerFreq, BTreeMap::from([("moe_layer_freq", n.to_string())]))
        }
        ImportWarning::ExpertsRead { key, n_experts, top_k } => (
            Code::ModelExpertsRead,
            BTreeMap::from([
                ("key", (*key).to_owned()),
                ("n_experts", n_experts.to_string()),
                ("top_k", top_k.to_string()),
            ]),
        ),
        ImportWarning::OtherLayerTypes { kind, layers } => {
            (Code::ModelLayerTypes, BTreeMap::from([("kind", kind.clone()), ("layers", layers.to_string())]))
        }
        ImportWarning::QuantizationUnread(method) => {
            (Code::ModelQuantizationUnread, BTreeMap::from([("method", method.clone())]))
        }
        ImportWarning::TextConfig(t) => (Code::ModelTextConfig, BTreeMap::from([("model_type", t.clone())])),
        ImportWarning::VisionConfig(t) => {
            (Code::ModelVisionConfig, BTreeMap::from([("model_type", t.clone())]))
        }
        // Millions of parameters, to one place.
        ImportWarning::Indexer { params } => {
            (Code::ModelIndexer, BTreeMap::from([("params", format!("{:.1}", *params as f64 / 1e6))]))
        }
        // Billions of parameters, and their weights' GiB in bf16, to two places; counted or not as
        // the plan's framework holds the encoder.
        ImportWarning::VisionEncoder { model_type, params } => (
            match memory::vision_encoder(plan) {
                memory::VisionEncoder::NotLoaded => Code::ModelVisionEncoder,
                memory::VisionEncoder::Frozen => Code::ModelVisionEncoderFrozen,
                memory::VisionEncoder::Trained => Code::ModelVisionEncoderTrained,
            },
            BTreeMap::from([
                ("model_type", model_type.clone()),
                ("params", format!("{:.2}", *params as f64 / 1e9)),
                ("gib", format!("{:.2}", *params as f64 * 2.0 / (1u64 << 30) as f64)),
                ("framework", plan.framework.name().to_owned()),
                ("image_tokens", plan.batch.image_tokens.to_string()),
            ]),
        ),
    };
    Finding { severity: Severity::Warning, code, args, fix: None, make_valid: false }
}
