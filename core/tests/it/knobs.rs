//! A setting that does not apply to the plan's framework or method changes nothing the engine
//! computes: set off its default, the report is the same, but for the finding that names it (the
//! core's note that it is ignored, or its rule that the framework has no such flag), whose fix
//! resets it. Which settings apply is `knobs::applies` (its sources: the frameworks' flag tables
//! in core/data/flags/, DeepSpeed's and VeRL's config keys).

use serde_json::{Value, json};
use trainplan_core::field::Field;
use trainplan_core::knobs::{Applies, Knob, applies};
use trainplan_core::plan::{Framework, Method, Plan};
use trainplan_core::report::{Fix, Report};
use trainplan_core::{evaluate, rules};

/// A value off the plan file's default for each knob (defaults: docs/plan-format.md).
fn changed_value(knob: Knob) -> (&'static str, Value) {
    let path = knob.path();
    let value = match knob {
        Knob::Tp | Knob::Pp | Knob::Vpp | Knob::Cp | Knob::Ep => json!(2),
        Knob::ZeroStage => json!(2),
        Knob::Schedule => json!("gpipe"),
        Knob::CpAlgo => json!("alltoall"),
        Knob::OffloadDevice => json!("nvme"),
        Knob::Fsdp => json!("optim_grads_params"),
        Knob::DistributedOptimizer
        | Knob::SequenceParallel
        | Knob::OffloadOptimizer
        | Knob::OffloadParams
        | Knob::OverlapGradReduce
        | Knob::OverlapParamGather
        | Knob::GradReduceBf16
        | Knob::Fp8ParamGather
        | Knob::NoSyncAccumulation
        | Knob::OffloadPolicy
        | Knob::ZeroQuantizedWeights
        | Knob::ZeroQuantizedGradients
        | Knob::TpCommOverlap
        | Knob::SwapOptimizer
        | Knob::UnevenLayers
        | Knob::AccountEmbeddingLoss
        | Knob::MoePermuteFusion
        | Knob::MoeOverlapEpComm
        | Knob::MoePadToCapacity
        | Knob::ActivationFunction
        | Knob::SwapAttention
        | Knob::DistributeSavedActivations
        | Knob::LigerKernel => json!(true),
        Knob::FusedKernels | Knob::MoeGroupedGemm | Knob::RlBlocking | Knob::RlKlLoss => json!(false),
        Knob::PipelineLayout => json!("Et*27|tL"),
        Knob::MtpLayers => json!(1),
        Knob::RlLogProbMicroBatch => json!(8),
        Knob::RlLogProbTokens => json!(40_000),
        Knob::ZeroHpz => json!(8),
        Knob::MoeDispatcher => json!("allgather"),
        Knob::MoeCapacity => json!(1.5),
        Knob::MoeImbalance => json!(2.0),
        Knob::RecomputeLayers => json!(2),
        Knob::Attention => json!("eager"),
        Knob::ActivationFunctionLayers => json!(2),
        Knob::RecomputeModules => json!(["core_attn", "mlp"]),
        Knob::CpuOffloadLayers => json!(2),
        Knob::LayersRatio => json!(0.5),
        Knob::LoraRank => json!(64),
        Knob::FreezeLayers => json!(4),
        Knob::LowRankRank => json!(64),
        Knob::LowRankLayerwise => json!(true),
        Knob::LoraDropout => json!(0.1),
        Knob::LoraDora => json!(true),
        Knob::PureBf16 => json!(true),
        Knob::Optimizer => json!("adamw_8bit"),
        Knob::SeqLen => json!(2048),
        Knob::MeanSeqLen => json!(512),
        // One setting of the section stands for it: the responses per prompt.
        Knob::Rl => return ("rl.n_samples_per_prompt", json!(4)),
    };
    (path, value)
}

/// The plans of the grid: each framework with the methods it runs, on a dense and an MoE model,
/// two nodes of eight devices (so every data-parallel figure is more than one).
fn grid() -> Vec<(Framework, Method, Plan)> {
    let pairs = [
        (Framework::Megatron, Method::Pretrain),
        (Framework::DeepSpeed, Method::SftFull),
        (Framework::LlamaFactory, Method::Lora),
        (Framework::LlamaFactory, Method::SftFull),
        (Framework::LlamaFactory, Method::Freeze),
        (Framework::MindSpeedLlm, Method::Pretrain),
        (Framework::MindSpeedLlm, Method::Lora),
        (Framework::Verl, Method::Grpo),
        (Framework::MindSpeedRl, Method::Grpo),
    ];
    let mut res = Vec::new();
    for model in ["qwen2.5-7b", "qwen3-30b-a3b"] {
        for (framework, method) in pairs {
            // MindSpeed runs on Ascend NPUs (rule framework.mindspeed_on_nvidia otherwise).
            let hardware = match framework {
                Framework::MindSpeedLlm | Framework::MindSpeedRl => "ascend-910b2",
                _ => "h100-sxm-80g",
            };
            let text = json!({
                "model": model,
                "hardware": hardware,
                "framework": framework.wire(),
                "method": method.wire(),
                "cluster": {"nodes": 2, "devices_per_node": 8},
                "batch": {"micro_batch": 1, "global_batch": 64, "seq_len": 4096},
            });
            let plan = Plan::from_json(&text.to_string()).unwrap_or_else(|e| panic!("{text}: {e}"));
            res.push((framework, method, plan));
        }
    }
    res
}

/// The plan with one knob set off its default.
fn with_knob(plan: &Plan, knob: Knob) -> Plan {
    let (field, value) = changed_value(knob);
    let field = Field::from_path(field).unwrap_or_else(|| panic!("{field} is no plan-file field"));
    rules::apply(plan, &Fix { field, value }).unwrap_or_else(|e| panic!("{field}: {e}"))
}

/// The report without the findings about `field`: those whose fix resets it, and for the `moe`
/// section the warning that the framework writes none of it (rule moe.framework, no fix). A fix
/// that moves the plan to another framework is left out of the comparison: there the setting may
/// apply, so the nearest fix may differ.
fn without_findings_on(report: &Report, field: &str) -> Report {
    let mut res = report.clone();
    res.findings.retain(|f| match &f.fix {
        Some(fix) => fix.field != field,
        None => !(f.code.as_str() == "moe.framework" && field.starts_with("moe.")),
    });
    for f in &mut res.findings {
        if f.fix.as_ref().is_some_and(|fix| fix.field == "framework") {
            f.fix = None;
        }
    }
    res
}

#[test]
fn a_setting_that_does_not_apply_changes_nothing() {
    let mut checked = 0;
    let mut moved = Vec::new();
    for (framework, method, plan) in grid() {
        let base = without_findings_on(&evaluate(&plan), "");
        for &knob in Knob::ALL {
            if applies(framework, method, knob).yes() {
                continue;
            }
            let changed = with_knob(&plan, knob);
            assert_ne!(changed, plan, "{knob:?} was not changed");
            let (field, _) = changed_value(knob);
            let report = without_findings_on(&evaluate(&changed), field);
            let parts = [
                ("params", report.params != base.params),
                ("memory", report.memory != base.memory),
                ("time", report.time != base.time),
                ("schedule", report.schedule != base.schedule),
                ("findings", report.findings != base.findings),
                ("the rest", report.model != base.model || report.n_devices != base.n_devices),
            ];
            let differ: Vec<_> = parts.iter().filter(|(_, d)| *d).map(|(name, _)| *name).collect();
            if !differ.is_empty() {
                let findings: Vec<_> = report
                    .findings
                    .iter()
                    .filter(|f| !base.findings.contains(f))
                    .map(|f| format!("{} {:?} {:?}", f.code.as_str(), f.args, f.fix))
                    .collect();
                moved.push(format!(
                    "{knob:?} on {} {} ({}): {differ:?} {findings:?}",
                    framework.wire(),
                    method.wire(),
                    plan.model.name
                ));
            }
            checked += 1;
        }
    }
    assert!(moved.is_empty(), "settings that do not apply changed the report:\n{}", moved.join("\n"));
    // Every pair of the grid has settings it does not take (LLaMA-Factory alone: the Megatron
    // parallel state, MindSpeed's features, the RL section).
    assert!(200 < checked, "{checked}");
}

/// The check above can fail: the same changes do move the report where they apply.
#[test]
fn the_same_settings_change_the_report_where_they_apply() {
    let plan = |text: Value| Plan::from_json(&text.to_string()).unwrap();
    let cases = [
        (
            Knob::DistributedOptimizer,
            json!({"model": "qwen2.5-7b", "framework": "megatron", "method": "pretrain", "cluster": {"nodes": 2}}),
        ),
        (
            Knob::ZeroStage,
            json!({"model": "qwen2.5-7b", "framework": "llamafactory", "method": "sft-full", "cluster": {"nodes": 2}}),
        ),
        (Knob::Tp, json!({"model": "qwen2.5-7b", "framework": "megatron", "method": "pretrain"})),
        (
            Knob::OffloadParams,
            json!({"model": "qwen2.5-7b", "framework": "deepspeed", "method": "sft-full", "parallel": {"zero_stage": 3}}),
        ),
        (
            Knob::OffloadDevice,
            json!({"model": "qwen2.5-7b", "framework": "deepspeed", "method": "sft-full", "parallel": {"zero_stage": 3, "offload_optimizer": true}}),
        ),
        (
            Knob::Attention,
            json!({"model": "qwen2.5-7b", "framework": "llamafactory", "method": "sft-full", "recompute": {"granularity": "none"}}),
        ),
        (
            Knob::MoeImbalance,
            json!({"model": "qwen3-30b-a3b", "framework": "megatron", "method": "pretrain", "cluster": {"nodes": 2}, "parallel": {"ep": 8}}),
        ),
        (
            Knob::SwapAttention,
            json!({"model": "qwen2.5-7b", "hardware": "ascend-910b2", "framework": "mindspeed-llm", "method": "pretrain", "recompute": {"granularity": "none"}}),
        ),
        (
            Knob::CpAlgo,
            json!({"model": "llama-3.1-8b", "framework": "megatron", "method": "pretrain", "parallel": {"cp": 2}, "batch": {"seq_len": 32768}}),
        ),
        (
            Knob::DistributeSavedActivations,
            json!({"model": "qwen2.5-7b", "framework": "megatron", "method": "pretrain", "parallel": {"tp": 4}}),
        ),
    ];
    for (knob, text) in cases {
        let plan = plan(text);
        assert!(applies(plan.framework, plan.method, knob).yes(), "{knob:?}");
        let (base, changed) = (evaluate(&plan), evaluate(&with_knob(&plan, knob)));
        assert!(base.memory != changed.memory || base.time != changed.time, "{knob:?} changed nothing");
    }
}

#[test]
fn the_page_shows_what_each_framework_takes() {
    use Framework::*;
    // LLaMA-Factory (upstream src/llamafactory/hparams): DeepSpeed ZeRO and offload, its
    // attention kernel, no Megatron parallel state.
    for knob in
        [Knob::ZeroStage, Knob::OffloadOptimizer, Knob::OffloadParams, Knob::Attention, Knob::LayersRatio]
    {
        assert_eq!(applies(LlamaFactory, Method::Lora, knob), Applies::Yes, "{knob:?}");
    }
    for knob in [Knob::Tp, Knob::Pp, Knob::Vpp, Knob::DistributedOptimizer, Knob::SwapOptimizer, Knob::Fsdp] {
        assert!(matches!(applies(LlamaFactory, Method::Lora, knob), Applies::Frameworks(_)), "{knob:?}");
    }
    // Megatron-LM core_v0.19.0 declares --use-distributed-optimizer and --cpu-offloading-num-layers
    // (megatron-lm.tsv) but no swap optimizer (a MindSpeed feature) and no ZeRO stage.
    assert!(applies(Megatron, Method::Pretrain, Knob::CpuOffloadLayers).yes());
    assert_eq!(
        applies(Megatron, Method::Pretrain, Knob::SwapOptimizer),
        Applies::Frameworks(&[MindSpeedLlm, MindSpeedRl])
    );
    assert!(!applies(MindSpeedLlm, Method::Pretrain, Knob::CpuOffloadLayers).yes());
    // Ulysses in VeRL's FSDP engine is its context parallelism, all-to-all with no other choice;
    // the Megatron path picks ring or all-to-all, VeRL's Megatron engine too (megatron-core's
    // `cp_comm_type`). RL settings belong to RL methods.
    assert!(applies(Verl, Method::Grpo, Knob::Cp).yes());
    assert_eq!(
        applies(Verl, Method::Grpo, Knob::CpAlgo),
        Applies::Frameworks(&[Megatron, MindSpeedLlm, MindSpeedRl, VerlMegatron])
    );
    assert_eq!(trainplan_core::knobs::framework_cp_algo(Verl), trainplan_core::plan::CpAlgo::AllToAll);
    for framework in [Megatron, MindSpeedLlm, MindSpeedRl] {
        assert!(applies(framework, Method::Pretrain, Knob::CpAlgo).yes(), "{framework:?}");
    }
    assert!(matches!(applies(Megatron, Method::Pretrain, Knob::Rl), Applies::Methods(_)));
    assert!(applies(MindSpeedRl, Method::Grpo, Knob::RlBlocking).yes());
    assert!(!applies(Verl, Method::Grpo, Knob::RlBlocking).yes());
}

/// LLaMA-Factory's `recompute_layers_ratio` is read by Ascend's packaged LLaMA-Factory alone
/// (upstream's parser refuses keys it does not know); every other knob wherever its framework runs.
#[test]
fn one_knob_is_read_on_ascend_alone() {
    use trainplan_core::hardware::Vendor;
    use trainplan_core::knobs::{Knob, read_on};
    for &knob in Knob::ALL.iter() {
        let on_ascend_only = knob == Knob::LayersRatio;
        assert!(read_on(knob, Vendor::Ascend), "{knob:?}");
        assert_eq!(read_on(knob, Vendor::Nvidia), !on_ascend_only, "{knob:?}");
        assert_eq!(read_on(knob, Vendor::Other), !on_ascend_only, "{knob:?}");
    }
    // The form takes the ratio for LLaMA-Factory on Ascend, or while the device is not known.
    use trainplan_core::knobs::takes;
    use trainplan_core::plan::{Framework, Method};
    let (lf, sft) = (Framework::LlamaFactory, Method::SftFull);
    assert!(takes(lf, sft, Knob::LayersRatio, Some(Vendor::Ascend)));
    assert!(takes(lf, sft, Knob::LayersRatio, None));
    assert!(!takes(lf, sft, Knob::LayersRatio, Some(Vendor::Nvidia)));
    assert!(!takes(Framework::Megatron, Method::Pretrain, Knob::LayersRatio, Some(Vendor::Ascend)));
}
