//! Activation recomputation on the Megatron path against the model and the framework
//! (`TransformerConfig.__post_init__` in megatron/core/transformer/transformer_config.py at
//! core_v0.19.0): full recomputation's block count per stage, the modules selective recomputation
//! names, activation offload to the host, and checkpoints split over TP.

use crate::field::Field;
use serde_json::Value;

use super::{Acc, Ctx};
use crate::model::Attention;
use crate::plan::{Framework, Precision, RecomputeGranularity};
use crate::report::{Code, Severity};

/// The Megatron path's recomputation: blocks per stage, then the modules, then activation offload.
pub(super) fn megatron(cx: &Ctx, acc: &mut Acc) {
    use Severity::Error;
    let &Ctx { plan, arch, pp, mem, .. } = cx;
    // Uneven stages (a layout, or the planner's own split): the fullest stage's count stands for
    // layers ÷ PP (a MindSpeed config padding its layers with empty slots counts the padded layers,
    // which its fullest stage holds: Qwen3-235B's 94 as 96 over PP 16 with 6 recomputed).
    let uneven = plan.parallel.pipeline_layout.is_some() || plan.parallel.uneven_layers;
    let layers_per_stage = match uneven {
        true => (0..pp).map(|rank| mem.layout.rank_n_layers(rank)).max().unwrap_or(1).max(1),
        false => (arch.n_layers / pp.max(1)).max(1),
    };
    if plan.recompute.granularity == RecomputeGranularity::Full
        && layers_per_stage < u64::from(plan.recompute.num_layers.get())
    {
        // `TransformerConfig.__post_init__`: recompute_num_layers in [1, layers / PP].
        acc.push(
            Error,
            Code::RecomputeNumLayers,
            &[
                ("num_layers", plan.recompute.num_layers.to_string()),
                ("per_stage", layers_per_stage.to_string()),
            ],
            Some((Field::RecomputeNumLayers, Value::from(layers_per_stage))),
        );
    }
    modules(cx, acc);
    cpu_offload(cx, acc);
}

/// Megatron's checks on `--recompute-modules` (`__post_init__`).
fn modules(cx: &Ctx, acc: &mut Acc) {
    use Severity::Error;
    let &Ctx { plan, arch, .. } = cx;
    let rc = &plan.recompute;
    let writes_modules = matches!(plan.framework, Framework::Megatron | Framework::MindSpeedLlm);
    if writes_modules && rc.granularity == RecomputeGranularity::Selective {
        let names = |modules: crate::plan::RecomputeModules| {
            modules.list().into_iter().map(str::to_owned).collect::<Vec<String>>()
        };
        let mla = matches!(arch.attention, Attention::Mla { .. });
        // "mla_up_proj in recompute_modules is only supported with multi_latent_attention";
        // "moe_act in recompute_modules is only supported with moe_grouped_gemm", which a dense
        // model has no use for.
        for (on, module, needs, off) in [
            (rc.modules.mla_up_proj && !mla, "mla_up_proj", "multi-latent attention", {
                let mut m = rc.modules;
                m.mla_up_proj = false;
                m
            }),
            (rc.modules.moe_act && arch.moe.is_none(), "moe_act", "an MoE model (grouped GEMM)", {
                let mut m = rc.modules;
                m.moe_act = false;
                m
            }),
        ] {
            if on {
                acc.push(
                    Error,
                    Code::RecomputeModulesModel,
                    &[("module", module.to_owned()), ("needs", needs.to_owned())],
                    Some((Field::RecomputeModules, Value::from(names(off)))),
                );
            }
        }
        // "Delayed scaling does not support moe_act and layernorm recompute for fp8": the fp8
        // plans are written with Megatron's default recipe, delayed.
        if plan.precision == Precision::Fp8 && (rc.modules.layernorm || rc.modules.moe_act) {
            let mut m = rc.modules;
            m.layernorm = false;
            m.moe_act = false;
            acc.push(
                Error,
                Code::RecomputeModulesFp8,
                &[],
                Some((Field::RecomputeModules, Value::from(names(m)))),
            );
        }
    }
}

/// Megatron's checks on `--cpu-offloading-num-layers` (`__post_init__`), a Megatron-LM flag only.
fn cpu_offload(cx: &Ctx, acc: &mut Acc) {
    use Severity::{Error, Warning};
    let &Ctx { plan, arch, .. } = cx;
    let rc = &plan.recompute;
    if rc.cpu_offload_layers == 0 {
        return;
    }
    if plan.framework != Framework::Megatron {
        acc.push(
            Warning,
            Code::RecomputeCpuOffloadFramework,
            &[("framework", plan.framework.wire().to_owned())],
            Some((Field::RecomputeCpuOffloadLayers, Value::from(0))),
        );
        return;
    }
    // "CPU offloading can be done only for layers less than {num_layers}".
    if arch.n_layers <= u64::from(rc.cpu_offload_layers) {
        acc.push(
            Error,
            Code::RecomputeCpuOffloadLayers,
            &[("layers", rc.cpu_offload_layers.to_string()), ("n_layers", arch.n_layers.to_string())],
            Some((Field::RecomputeCpuOffloadLayers, Value::from(arch.n_layers.saturating_sub(1)))),
        );
    }
    // "Currently there is no support for Pipeline parallelism with CPU offloading".
    if 1 < plan.parallel.pp.get() {
        acc.push(
            Error,
            Code::RecomputeCpuOffloadPp,
            &[],
            Some((Field::RecomputeCpuOffloadLayers, Value::from(0))),
        );
    }
    // "CPU offloading does not work when activation recomputation is enabled".
    if rc.granularity != RecomputeGranularity::None {
        acc.push(
            Error,
            Code::RecomputeCpuOffloadRecompute,
            &[],
            Some((Field::RecomputeGranularity, Value::from("none"))),
        );
    }
}

/// `--distribute-saved-activations`: Megatron's `validate_args` (megatron/training/arguments.py)
/// asserts TP above 1 and full recomputation, and `TransformerConfig.__post_init__` refuses it with
/// sequence parallelism (both at core_v0.19.0 and core_v0.12.1, which MindSpeed-LLM runs on).
pub(super) fn distribute_saved_activations(cx: &Ctx, acc: &mut Acc) {
    use Severity::{Error, Warning};
    let &Ctx { plan, tp, .. } = cx;
    if !plan.recompute.distribute_saved_activations {
        return;
    }
    let off = Some((Field::RecomputeDistributeSavedActivations, Value::from(false)));
    if !matches!(plan.framework, Framework::Megatron | Framework::MindSpeedLlm) {
        let framework = [("framework", plan.framework.wire().to_owned())];
        acc.push(Warning, Code::RecomputeDistributeFramework, &framework, off);
        return;
    }
    // "can distribute recomputed activations only across tensor model parallel groups".
    if tp <= 1 {
        acc.push(Error, Code::RecomputeDistributeTp, &[], off.clone());
    }
    // "distributed recompute activations is only application to full recompute granularity".
    if plan.recompute.granularity != RecomputeGranularity::Full {
        acc.push(Error, Code::RecomputeDistributeFull, &[], off.clone());
    }
    // "distribute_saved_activations: … must be false when sequence parallel is enabled".
    if plan.parallel.sequence_parallel {
        acc.push(Error, Code::RecomputeDistributeSp, &[], off);
    }
}
