//! The batch against the parallel layout: the sequence within the model's context, the global
//! batch a whole number of micro-batches × DP (Megatron `num_microbatches_calculator.py`, DeepSpeed
//! `DeepSpeedConfig._batch_assertion`, HF `TrainingArguments`, VeRL `validate_config`), and enough
//! micro-batches for the pipeline's schedule.

use crate::field::Field;
use serde_json::Value;

use super::{Acc, Ctx, gcd, nearest_divisor, nearest_multiple};
use crate::plan::{Framework, PipelineSchedule};
use crate::report::{Code, Severity};

/// Image tokens a sequence (`batch.image_tokens`): more than the sequence holds count as the whole
/// sequence (the step time and memory take at most that); on a model without a vision encoder the
/// plan's framework runs ([`crate::memory::vision_encoder`]) they change nothing.
pub(super) fn image_tokens(cx: &Ctx, acc: &mut Acc) {
    let plan = cx.plan;
    let images = plan.batch.image_tokens;
    if images == 0 {
        return;
    }
    let count = ("image_tokens", images.to_string());
    if crate::memory::loaded_vision_params(plan) == 0 {
        let framework = ("framework", plan.framework.name().to_owned());
        let fix = (Field::BatchImageTokens, Value::from(0));
        acc.push(Severity::Note, Code::BatchImageTokensUnused, &[count, framework], Some(fix));
        return;
    }
    let sequence = crate::memory::train_seq_len(plan);
    if sequence < u64::from(images) {
        let fix = (Field::BatchImageTokens, Value::from(sequence));
        acc.push(
            Severity::Warning,
            Code::BatchImageTokens,
            &[count, ("seq_len", sequence.to_string())],
            Some(fix),
        );
    }
}

/// The sequence length, the batch identity and the micro-batches per step.
pub(super) fn check(cx: &Ctx, acc: &mut Acc) {
    use Severity::{Error, Warning};
    let &Ctx { plan, mem, arch, p, world, pp, vpp, cp, mbs, gbs, seq, megatron, .. } = cx;
    // `validate_args`: max_position_embeddings ≥ seq_length, the model's context.
    if arch.max_position_embeddings < seq {
        acc.push(
            Warning,
            Code::ModelSeqTooLong,
            &[("seq_len", seq.to_string()), ("max", arch.max_position_embeddings.to_string())],
            Some((Field::BatchSeqLen, Value::from(arch.max_position_embeddings))),
        );
    }

    // The batch identity: the sources are in the module's doc.
    let dp = mem.dp;
    let n = u64::from(plan.rl.n_samples_per_prompt.get());
    let (batch_unit, what) = match plan.framework {
        Framework::Verl => (world / cp.max(1), "devices ÷ Ulysses SP"),
        // verl 0.9.1 `validate_config` (verl/utils/config.py) with the Megatron actor: the
        // responses divide into `megatron_dp × ppo_micro_batch_size_per_gpu`.
        Framework::VerlMegatron => (mbs * dp, "micro-batch × DP"),
        // MindSpeed-RL `_validate_data_parallel` (mindspeed_rl/config_cls/validate_config.py): the
        // prompts divide over the actor's DP, and each rank's responses into micro-batches (below).
        Framework::MindSpeedRl => (dp, "DP"),
        _ => (mbs * dp, "micro-batch × DP"),
    };
    let samples = match plan.framework.is_verl() {
        true => gbs * n,
        false => gbs,
    };
    let rank_samples = (gbs / dp.max(1)).saturating_mul(n);
    if !samples.is_multiple_of(batch_unit.max(1)) {
        let fix = match plan.framework {
            Framework::Verl | Framework::VerlMegatron => nearest_multiple(
                gbs,
                batch_unit / gcd(batch_unit, u64::from(plan.rl.n_samples_per_prompt.get())),
            ),
            _ => nearest_multiple(gbs, batch_unit),
        };
        acc.push(
            Error,
            Code::BatchDivisible,
            &[("global_batch", gbs.to_string()), ("unit", batch_unit.to_string()), ("what", what.to_owned())],
            Some((Field::BatchGlobalBatch, Value::from(fix))),
        );
    } else if plan.framework == Framework::MindSpeedRl && !rank_samples.is_multiple_of(mbs.max(1)) {
        // `(global_batch_size // data_parallel * n_samples) % micro_batch_size` (the same check).
        acc.push(
            Error,
            Code::MindspeedRlMicroBatch,
            &[
                ("samples", rank_samples.to_string()),
                ("prompts", gbs.to_string()),
                ("dp", dp.to_string()),
                ("n", n.to_string()),
                ("micro_batch", mbs.to_string()),
            ],
            Some((Field::BatchMicroBatch, Value::from(nearest_divisor(rank_samples, mbs)))),
        );
    } else if megatron && 1 < vpp && !mem.n_microbatches.is_multiple_of(pp) {
        // `forward_backward_pipelining_with_interleaving` (schedules.py): the interleaved schedule
        // needs micro-batches in groups of PP.
        acc.push(
            Error,
            Code::BatchVppMicrobatches,
            &[("microbatches", mem.n_microbatches.to_string()), ("pp", pp.to_string())],
            Some((Field::BatchGlobalBatch, Value::from(nearest_multiple(gbs, mbs * dp * pp)))),
        );
    }
    if megatron && 1 < pp && mem.n_microbatches < pp {
        acc.push(
            Warning,
            Code::BatchFewMicrobatches,
            &[("microbatches", mem.n_microbatches.to_string()), ("pp", pp.to_string())],
            Some((Field::BatchGlobalBatch, Value::from(mbs * dp * 4 * pp))),
        );
    }
    if megatron && p.schedule == PipelineSchedule::DualPipeV && mem.n_microbatches < 2 * pp {
        acc.push(
            Error,
            Code::ScheduleDualpipevMicrobatches,
            &[("microbatches", mem.n_microbatches.to_string()), ("pp", pp.to_string())],
            Some((Field::BatchGlobalBatch, Value::from(mbs * dp * 2 * pp))),
        );
    }
}
