//! How the layers are split over pipeline stages and run: Megatron's `--pipeline-model-parallel-layout`
//! and MTP layers, layers per stage and per virtual chunk (`validate_args` in
//! megatron/training/arguments.py), uneven stages (Megatron-LM's first/last-stage sizes,
//! MindSpeed's `--num-layer-list`), the schedules each framework has and DualPipeV's conflicts.

use crate::field::Field;
use serde_json::Value;

use super::{Acc, Ctx, nearest_divisor};
use crate::plan::{Framework, PipelineSchedule};
use crate::report::{Code, Severity};

/// Megatron's checks of a `--pipeline-model-parallel-layout` (megatron/training/arguments.py
/// `validate_args` and megatron/core/transformer/pipeline_parallel_layer_layout.py
/// `validate_layer_layout`, core_v0.19.0) and of MTP layers; whether the layout string takes the
/// place of the other split rules.
pub(super) fn layout_string(cx: &Ctx, acc: &mut Acc) -> bool {
    use Severity::Error;
    let &Ctx { plan, arch, p, pp, .. } = cx;
    let framework = || vec![("framework", plan.framework.wire().to_owned())];
    let clear = || Some((Field::ParallelPipelineLayout, Value::from("")));
    // Megatron-LM and MindSpeed-LLM (its parser, mindspeed_llm/features_manager, has the flag and
    // `--mtp-num-layers`); MindSpeed-RL's config classes and the HF path have neither.
    let has = matches!(plan.framework, Framework::Megatron | Framework::MindSpeedLlm);
    if 0 < plan.mtp_layers && !has {
        acc.push(Error, Code::MtpFramework, &framework(), Some((Field::MtpLayers, Value::from(0))));
    }
    let Some(text) = p.pipeline_layout.as_deref() else { return false };
    // MindSpeed-RL lists each stage's layers (`num_layer_list`, mindspeed-rl.tsv): a layout of one
    // stage per rank, the embedding on the first and the loss on the last.
    let listed =
        plan.framework == Framework::MindSpeedRl && crate::layout::listed_stage_sizes(text, pp).is_some();
    if !has && !listed {
        acc.push(Error, Code::ParallelLayoutFramework, &framework(), clear());
        return false;
    }
    let stages = match crate::layout::parse(text) {
        Ok(stages) => stages,
        Err(crate::layout::LayoutError::Character(c)) => {
            acc.push(Error, Code::ParallelLayoutSyntax, &[("char", c.to_string())], clear());
            return true;
        }
        Err(crate::layout::LayoutError::TooLong) => {
            acc.push(Error, Code::ParallelLayoutSyntax, &[("char", "*".to_owned())], clear());
            return true;
        }
    };
    let n = stages.len() as u64;
    if !n.is_multiple_of(pp) {
        acc.push(
            Error,
            Code::ParallelLayoutStages,
            &[("stages", n.to_string()), ("pp", pp.to_string())],
            clear(),
        );
        return true;
    }
    let vpp = n / pp;
    if u64::from(p.vpp.get()) != vpp {
        // `TransformerConfig.__post_init__`: a VPP size given must equal the layout's.
        acc.push(
            Error,
            Code::ParallelLayoutVpp,
            &[("vpp", vpp.to_string()), ("plan_vpp", p.vpp.to_string())],
            Some((Field::ParallelVpp, Value::from(vpp))),
        );
    }
    if p.account_embedding_loss || p.uneven_layers {
        // `TransformerConfig.__post_init__`: "pipeline_model_parallel_layout cannot be set with
        // other pipeline layout arguments".
        let field = if p.account_embedding_loss {
            Field::ParallelAccountEmbeddingLoss
        } else {
            Field::ParallelUnevenLayers
        };
        acc.push(Error, Code::ParallelLayoutConflict, &[], Some((field, Value::from(false))));
    }
    let (e, l, t, m) = crate::layout::counts(&stages);
    let ends = stages.first().is_some_and(|s| s.embedding) && stages.last().is_some_and(|s| s.loss);
    if !(ends && e == 1 && l == 1) {
        acc.push(Error, Code::ParallelLayoutEnds, &[], clear());
    }
    if t != arch.n_layers {
        acc.push(
            Error,
            Code::ParallelLayoutLayers,
            &[("count", t.to_string()), ("layers", arch.n_layers.to_string())],
            clear(),
        );
    }
    // MTP: as many as trained, after every decoder layer, all in one stage that is the last chunk
    // of its rank (`validate_layer_layout`).
    let first_mtp = stages.iter().position(|s| 0 < s.mtp);
    let placed = match first_mtp {
        None => true,
        Some(idx) => {
            let stage = &stages[idx];
            let after = stages[idx + 1..].iter().all(|s| s.layers.is_empty());
            let one_stage = stage.mtp == m;
            let last_chunk = vpp <= 1 || idx as u64 / pp == vpp - 1;
            after && one_stage && last_chunk
        }
    };
    if m != u64::from(plan.mtp_layers) || !placed {
        let fix = match placed {
            true => (Field::MtpLayers, Value::from(m)),
            false => (Field::ParallelPipelineLayout, Value::from("")),
        };
        acc.push(
            Error,
            Code::ParallelLayoutMtp,
            &[("count", m.to_string()), ("mtp", plan.mtp_layers.to_string())],
            Some(fix),
        );
    }
    true
}

/// The Megatron path's split of the layers over PP stages and VPP chunks; `layout_string` (what
/// [`layout_string`] returned) says a layout string takes the place of these rules.
pub(super) fn megatron_split(cx: &Ctx, layout_string: bool, acc: &mut Acc) {
    use Severity::Error;
    let &Ctx { plan, arch, p, pp, vpp, .. } = cx;
    let layout = crate::layout::uneven_sizes(arch.n_layers, pp);
    // `validate_args`: the embedding and the loss count as a layer each when asked.
    let accounted = arch.n_layers + if p.account_embedding_loss { 2 } else { 0 };
    let even = accounted.is_multiple_of(pp);
    // megatron-core splits uneven stages over virtual chunks when each stage's layers divide by
    // VPP (megatron/core/transformer/transformer_block.py `get_num_layers_to_build`): Megatron-LM,
    // and VeRL's Megatron engine, which builds its model with megatron-core's `TransformerConfig`
    // (verl 0.9.1 `verl/models/mcore/config_converter.py`). MindSpeed's `--num-layer-list` does not
    // take VPP.
    let uneven_chunks = matches!(plan.framework, Framework::Megatron | Framework::VerlMegatron)
        && layout.as_ref().is_some_and(|sizes| sizes.iter().all(|s| s.is_multiple_of(vpp) && vpp <= *s));
    if !(layout_string || even || p.uneven_layers && layout.is_some()) {
        // `validate_args`: layers % PP == 0 without an uneven layout (Megatron's first/last-stage sizes,
        // MindSpeed's --num-layer-list), which is the fix where one exists: uneven stages, or
        // counting the embedding and the loss (Megatron-LM, when n + 2 divides), else the
        // nearest PP that divides. (MindSpeed-LLM's parser, Megatron core 0.12.1, has the flags.)
        let fix = match (&layout, 1 < vpp) {
            _ if matches!(plan.framework, Framework::Megatron | Framework::MindSpeedLlm)
                && !p.account_embedding_loss
                && (arch.n_layers + 2).is_multiple_of(pp) =>
            {
                (Field::ParallelAccountEmbeddingLoss, Value::from(true))
            }
            (Some(_), false) => (Field::ParallelUnevenLayers, Value::from(true)),
            _ => (Field::ParallelPp, Value::from(nearest_divisor(arch.n_layers, pp))),
        };
        acc.push(
            Error,
            Code::ParallelLayersPp,
            &[("layers", arch.n_layers.to_string()), ("pp", pp.to_string())],
            Some(fix),
        );
    }
    let dualpipe = p.schedule == PipelineSchedule::DualPipeV;
    if !layout_string && p.uneven_layers && layout.is_some() && (1 < vpp && !uneven_chunks || dualpipe) {
        // MindSpeed `--num-layer-list`: not with VPP (mindspeed_llm/features_manager/megatron_basic/
        // training_basic.py), not with dualpipev (pipeline_parallel/num_layer_list.py); the plan's
        // uneven layout is per stage, not per virtual chunk.
        acc.push(
            Error,
            Code::ParallelUnevenVpp,
            &[("vpp", vpp.to_string())],
            Some(match dualpipe {
                true => (Field::ParallelSchedule, Value::from("auto")),
                false => (Field::ParallelVpp, Value::from(1)),
            }),
        );
    }
    if 1 < vpp {
        // `validate_args`: VPP needs PP > 1 and layers per stage divisible by VPP.
        if pp <= 1 {
            acc.push(
                Error,
                Code::ParallelVppNeedsPp,
                &[("vpp", vpp.to_string())],
                Some((Field::ParallelVpp, Value::from(1))),
            );
        } else if !(layout_string || p.uneven_layers && uneven_chunks || (accounted / pp).is_multiple_of(vpp))
        {
            let per_stage = accounted / pp;
            acc.push(
                Error,
                Code::ParallelVppLayers,
                &[("layers_per_stage", per_stage.to_string()), ("vpp", vpp.to_string())],
                Some((Field::ParallelVpp, Value::from(nearest_divisor(per_stage.max(1), vpp).max(1)))),
            );
        }
    }
}

/// The pipeline schedule against the framework: which schedules it has, and what MindSpeed's
/// DualPipeV cannot run with.
pub(super) fn schedule(cx: &Ctx, acc: &mut Acc) {
    use Severity::Error;
    let &Ctx { plan, arch, p, pp, vpp, cp, megatron, .. } = cx;
    if megatron && 1 < pp {
        // The schedules each framework has: Megatron-LM 1F1B and interleaved 1F1B
        // (`megatron/core/pipeline_parallel/schedules.py`); MindSpeed adds DualPipeV
        // (`--schedules-method dualpipev`, mindspeed/features_manager/pipeline_parallel/
        // dualpipev_feature.py, MindSpeed-LLM only). GPipe and ZB-H1 are drawn for comparison.
        let has = match p.schedule {
            PipelineSchedule::Auto | PipelineSchedule::OneFOneB | PipelineSchedule::Interleaved => true,
            PipelineSchedule::DualPipeV => plan.framework == Framework::MindSpeedLlm,
            PipelineSchedule::GPipe | PipelineSchedule::ZbH1 => false,
        };
        if !has {
            acc.push(
                Error,
                Code::ScheduleFramework,
                &[
                    ("schedule", p.schedule.wire().to_owned()),
                    ("framework", plan.framework.wire().to_owned()),
                ],
                Some((Field::ParallelSchedule, Value::from("auto"))),
            );
        }
    }
    if plan.framework == Framework::MindSpeedLlm && p.schedule == PipelineSchedule::DualPipeV {
        // MindSpeed `DualpipeVFeature.validate_args` (dualpipev_feature.py at 028de58): each
        // conflict raises at start-up. One finding, the first conflict, with its fix.
        let conflict: Option<(&str, Field, Value)> = if p.overlap_grad_reduce {
            Some(("overlap_grad_reduce", Field::ParallelOverlapGradReduce, Value::from(false)))
        } else if plan.recompute.swap_attention {
            Some(("swap_attention", Field::RecomputeSwapAttention, Value::from(false)))
        } else if 1 < cp {
            Some(("context_parallel", Field::ParallelCp, Value::from(1)))
        } else if 1 < vpp {
            Some(("virtual_pipeline", Field::ParallelVpp, Value::from(1)))
        } else if pp == 1 {
            Some(("pipeline_model_parallel_size = 1", Field::ParallelSchedule, Value::from("auto")))
        } else if arch.tied_embeddings {
            Some(("tied embeddings", Field::ParallelSchedule, Value::from("auto")))
        } else if arch.n_layers < 2 * pp {
            Some(("fewer than 2 × PP layers", Field::ParallelSchedule, Value::from("auto")))
        } else {
            None
        };
        if let Some((what, field, value)) = conflict {
            acc.push(
                Error,
                Code::MindspeedDualpipevConflict,
                &[("what", what.to_owned())],
                Some((field, value)),
            );
        }
    }
}

/// Counting the embedding and the loss as layers, where the framework has the flags.
pub(super) fn account_framework(cx: &Ctx, acc: &mut Acc) {
    use Severity::Error;
    let &Ctx { plan, p, .. } = cx;
    if p.account_embedding_loss && !matches!(plan.framework, Framework::Megatron | Framework::MindSpeedLlm) {
        // Megatron's `--account-for-*-in-pipeline-split`: MindSpeed-LLM's parser has them (core
        // 0.12.1), MindSpeed-RL's config classes do not, and the HF path has no pipeline.
        acc.push(
            Error,
            Code::ParallelAccountFramework,
            &[("framework", plan.framework.wire().to_owned())],
            Some((Field::ParallelAccountEmbeddingLoss, Value::from(false))),
        );
    }
}
