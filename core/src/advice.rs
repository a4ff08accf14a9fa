//! Tuning advice: the moves an experienced engineer would try on this plan, each evaluated — what it
//! saves in memory and costs or gains in step time is computed by running the changed plan, never
//! written as canned text. The moves are the frameworks' documented tuning knobs (MindSpeed
//! `docs/zh/features/*.md`, VeRL `docs/perf/perf_tuning.rst`, transformers' DeepSpeed guide on
//! selecting a ZeRO stage) and the findings of the Megatron-LM, GPipe and QLoRA papers; each move
//! names its source below, and docs/advice.md explains each "why".

use serde_json::Value;

use crate::hardware::Vendor;
use crate::plan::{AttentionImpl, Framework, Method, Plan, RecomputeGranularity};
use crate::report::{Fix, Severity};
use crate::rules;
use crate::{memory, time};

/// One piece of advice with its computed effect.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Advice {
    /// Stable code, e.g. `distributed_optimizer` (the page translates it and its "why").
    pub code: &'static str,
    /// The plan-file changes, applied in order.
    pub changes: Vec<Fix>,
    /// Peak memory per device after the change, bytes.
    pub peak_bytes: u64,
    /// Change of the peak, bytes (negative saves memory).
    pub peak_delta_bytes: i64,
    /// Step time after the change, seconds.
    pub step_seconds: f64,
    /// Tokens per second after the change.
    pub tokens_per_second: f64,
    /// Relative change of the throughput, tokens per second (positive is faster). Throughput, not
    /// step time, because a move may change the tokens a step trains.
    pub speed_delta_frac: f64,
    /// Whether the changed plan fits in memory.
    pub fits: bool,
}

/// The plan's current figures, to compare candidates with.
struct Base {
    peak: u64,
    tokens_per_second: f64,
    fits: bool,
}

/// Every code [`advise`] can give, for the page's translations.
pub const CODES: &[&str] = &[
    "distributed_optimizer",
    "overlap_grad_reduce",
    "sequence_parallel",
    "tp_comm_overlap",
    "ascend_coc",
    "fused_kernels",
    "zero_stage",
    "zero_stage_down",
    "zero_stage_3",
    "offload_optimizer",
    "offload_params",
    "recompute_selective",
    "recompute_full",
    "recompute_less",
    "swap_attention",
    "flash_attention",
    "micro_batch_up",
    "micro_batch_down",
    "more_microbatches",
    "interleave",
    "tp_in_node",
    "pp_over_tp",
    "stack_megatron",
    "cheap_together",
    "verl_ulysses",
    "rollout_tp_down",
    "rollout_tp_up",
    "max_num_seqs_up",
    "precision_fp8",
    "lora_all_targets",
    "search_best",
    "megatron_fsdp",
];

/// Moves offered for what they buy besides speed or memory (model quality), shown with their
/// computed cost whenever the changed plan still fits.
pub const QUALITY: &[&str] = &["lora_all_targets"];

/// Moves whose words promise speed ("runs faster", "trains fastest", "shrinks the bubble"): shown
/// only when the computed figure agrees, so text and figure never contradict.
pub const SPEED: &[&str] = &[
    "overlap_grad_reduce",
    "tp_comm_overlap",
    "ascend_coc",
    "fused_kernels",
    "zero_stage_down",
    "recompute_less",
    "flash_attention",
    "micro_batch_up",
    "more_microbatches",
    "interleave",
    "tp_in_node",
    "stack_megatron",
    "rollout_tp_down",
    "rollout_tp_up",
    "max_num_seqs_up",
    "precision_fp8",
    "search_best",
];

fn evaluate_change(plan: &Plan, changes: &[Fix]) -> Option<(Plan, memory::Memory, time::StepTime)> {
    let changed = rules::apply_all(plan, changes).ok()?;
    let mem = memory::estimate(&changed);
    let t = time::estimate(&changed, &mem);
    Some((changed, mem, t))
}

/// Framework rules a plan breaks, the memory check aside (advice is judged on memory separately).
fn rule_errors(plan: &Plan, mem: &memory::Memory) -> usize {
    let findings = rules::check(plan, mem);
    findings
        .iter()
        .filter(|f| f.severity == Severity::Error && f.code != crate::report::Code::MemoryDoesNotFit)
        .count()
}

fn fix(field: &'static str, value: impl Into<Value>) -> Fix {
    Fix { field, value: value.into() }
}

/// Ranked advice for a plan: when it does not fit, what saves the most memory first; when it fits,
/// what makes the step fastest while still fitting. A move is offered only if its plan breaks no
/// framework rule the current plan keeps.
pub fn advise(plan: &Plan) -> Vec<Advice> {
    let mem = memory::estimate(plan);
    let t = time::estimate(plan, &mem);
    let base = Base {
        peak: mem.peak_bytes,
        tokens_per_second: t.tokens_per_second,
        fits: mem.peak_bytes <= mem.usable_bytes,
    };
    let errors_before = rule_errors(plan, &mem);
    let p = &plan.parallel;
    let megatron = crate::layout::model_parallel(plan.framework);
    let mindspeed = matches!(plan.framework, Framework::MindSpeedLlm | Framework::MindSpeedRl);
    let tp = u64::from(p.tp.get());
    let pp = u64::from(p.pp.get());
    let mbs = u64::from(plan.batch.micro_batch.get());
    let per_node = u64::from(plan.cluster.devices_per_node.get());
    let n_devices = plan.cluster.n_devices();
    let params = mem.params_total;

    let mut candidates: Vec<(&'static str, Vec<Fix>)> = Vec::new();
    // The distributed optimizer shards fp32 states over DP at almost no cost (Megatron-LM
    // docs/api-guide/dist_optimizer.md; MindSpeed docs/zh/features/distributed-optimizer.md).
    if megatron && !p.distributed_optimizer && 1 < mem.dp {
        candidates.push(("distributed_optimizer", vec![fix("parallel.distributed_optimizer", true)]));
    }
    // Overlap the gradient reduction (and the parameter gather) with compute (MindSpeed
    // docs/zh/features/async-ddp.md, async-ddp-param-gather.md).
    if megatron && 1 < mem.dp && !p.overlap_grad_reduce {
        let mut changes = vec![fix("parallel.overlap_grad_reduce", true)];
        if p.distributed_optimizer {
            changes.push(fix("parallel.overlap_param_gather", true));
        }
        candidates.push(("overlap_grad_reduce", changes));
    }
    // Sequence parallelism with TP divides the activations TP leaves whole (Korthikanti et al. 2022).
    if megatron && 1 < tp && !p.sequence_parallel {
        candidates.push(("sequence_parallel", vec![fix("parallel.sequence_parallel", true)]));
    }
    // TP communication pipelined with GEMMs: Transformer Engine's userbuffers (Megatron
    // `--tp-comm-overlap`), or Ascend CoC (MindSpeed docs/zh/features/communication-over-computation.md).
    if megatron && 1 < tp && p.sequence_parallel && !p.tp_comm_overlap && plan.method != Method::Lora {
        let code = if plan.hardware.hw.vendor == Vendor::Ascend { "ascend_coc" } else { "tp_comm_overlap" };
        candidates.push((code, vec![fix("parallel.tp_comm_overlap", true)]));
    }
    // MindSpeed's fused RMSNorm, SwiGLU and RoPE kernels (docs/zh/features/rms_norm.md, swiglu.md,
    // rotary-embedding.md), when the plan runs without them.
    if matches!(plan.framework, Framework::MindSpeedLlm | Framework::MindSpeedRl) && !p.fused_kernels {
        candidates.push(("fused_kernels", vec![fix("parallel.fused_kernels", true)]));
    }
    // The ZeRO ladder, cheapest first: 0 → 1 → 2 → 3 → 3 + offload (transformers
    // docs/source/en/deepspeed.md, "Select a ZeRO stage").
    if !megatron {
        match p.zero_stage {
            // One rung up; when it does not fit, the lowest rung that does (no climbing 1 → 2 → 3
            // through "still too big").
            z if z < 3 => {
                let fits_at = |stage: u8| {
                    evaluate_change(plan, &[fix("parallel.zero_stage", stage)])
                        .is_some_and(|(_, m, _)| m.peak_bytes <= m.usable_bytes)
                };
                let rung = match base.fits {
                    true => z + 1,
                    false => ((z + 1)..=3).find(|&s| fits_at(s)).unwrap_or(z + 1),
                };
                candidates.push(("zero_stage", vec![fix("parallel.zero_stage", u64::from(rung))]));
            }
            _ if !p.offload_optimizer => {
                candidates.push(("offload_optimizer", vec![fix("parallel.offload_optimizer", true)]))
            }
            _ if !p.offload_params => {
                candidates.push(("offload_params", vec![fix("parallel.offload_params", true)]))
            }
            _ => {}
        }
        if !base.fits {
            // Jump the ladder when one rung will not do: ZeRO-3, then offloading on top of it.
            if 1 <= p.zero_stage && p.zero_stage < 2 {
                candidates.push(("zero_stage_3", vec![fix("parallel.zero_stage", 3)]));
            }
            if p.zero_stage < 3 {
                candidates.push((
                    "offload_optimizer",
                    vec![fix("parallel.zero_stage", 3), fix("parallel.offload_optimizer", true)],
                ));
            }
            if !p.offload_params && (p.zero_stage < 3 || !p.offload_optimizer) {
                candidates.push((
                    "offload_params",
                    vec![
                        fix("parallel.zero_stage", 3),
                        fix("parallel.offload_optimizer", true),
                        fix("parallel.offload_params", true),
                    ],
                ));
            }
        }
        // Fewer shards communicate less when memory allows it.
        if base.fits && 0 < p.zero_stage && !p.offload_optimizer && !p.offload_params {
            candidates
                .push(("zero_stage_down", vec![fix("parallel.zero_stage", u64::from(p.zero_stage) - 1)]));
        }
    }
    // Recomputation: trade compute for memory when it does not fit, memory for speed when it does.
    match (plan.recompute.granularity, base.fits) {
        (RecomputeGranularity::None, false) => {
            candidates.push(("recompute_selective", vec![fix("recompute.granularity", "selective")]));
            candidates.push(("recompute_full", vec![fix("recompute.granularity", "full")]));
        }
        (RecomputeGranularity::Selective, false) => {
            candidates.push(("recompute_full", vec![fix("recompute.granularity", "full")]))
        }
        (RecomputeGranularity::Full, true) => candidates.push((
            "recompute_less",
            vec![fix("recompute.granularity", if megatron { "selective" } else { "none" })],
        )),
        _ => {}
    }
    // Swap attention activations to the host on Ascend (MindSpeed docs/zh/features/swap_attention.md).
    if mindspeed && !base.fits && !plan.recompute.swap_attention && plan.method != Method::Lora {
        candidates.push(("swap_attention", vec![fix("recompute.swap_attention", true)]));
    }
    // Flash attention never keeps the score matrix.
    if plan.attention == AttentionImpl::Eager {
        candidates.push(("flash_attention", vec![fix("attention", "flash")]));
    }
    // Micro-batch: larger GEMMs run faster while memory lasts; smaller saves activations
    // (Narayanan et al. 2021, "Efficient Large-Scale Language Model Training on GPU Clusters Using
    // Megatron-LM", §3.4).
    let gbs = u64::from(plan.batch.global_batch.get());
    if base.fits && (2 * mbs).saturating_mul(mem.dp) <= gbs {
        candidates.push(("micro_batch_up", vec![fix("batch.micro_batch", 2 * mbs)]));
    }
    if !base.fits && 1 < mbs {
        candidates.push(("micro_batch_down", vec![fix("batch.micro_batch", mbs / 2)]));
    }
    // Pipeline: at least 4 × PP micro-batches (GPipe, Huang et al. 2019 §2.3: the bubble is
    // negligible when M ≥ 4 × K), or the interleaved schedule.
    if megatron && 1 < pp && mem.n_microbatches < 4 * pp {
        candidates.push((
            "more_microbatches",
            vec![fix("batch.global_batch", (4 * pp * mbs).saturating_mul(mem.dp))],
        ));
    }
    if megatron && 1 < pp && p.vpp.get() == 1 && (plan.model.arch.n_layers / pp).is_multiple_of(2) {
        candidates.push(("interleave", vec![fix("parallel.vpp", 2)]));
    }
    // TP stays inside a node (Narayanan et al. 2021 §3.2, takeaway #1). The cost order is
    // pp < dp < ep < cp < tp: Megatron's default rank order tp-cp-ep-dp-pp (`initialize_model_parallel`,
    // megatron/core/parallel_state.py) gives the most communicating groups the nearest ranks.
    if megatron && per_node < tp {
        candidates.push((
            "tp_in_node",
            vec![fix("parallel.tp", per_node), fix("parallel.pp", pp.saturating_mul(tp) / per_node)],
        ));
    }
    if megatron && 2 < tp && !base.fits {
        candidates.push(("pp_over_tp", vec![fix("parallel.pp", pp.saturating_mul(2))]));
    }
    // The stack by cluster and model size: Megatron/MindSpeed from 32 devices and 100B parameters;
    // LLaMA-Factory (with ZeRO-3 for 70B+) below. Megatron's TP/PP beat ZeRO-3 at 175B and 530B as
    // devices are added (Narayanan et al. 2021 §5.2, Table 2); the thresholds are common practice,
    // not a measured crossover.
    let big = 100_000_000_000 <= params && 32 <= n_devices;
    let full = matches!(plan.method, Method::Pretrain | Method::SftFull);
    if big && full && !megatron {
        let framework = if plan.hardware.hw.vendor == Vendor::Ascend { "mindspeed-llm" } else { "megatron" };
        let tp_fix = rules::nearest_divisor(plan.model.arch.attention.n_heads(), per_node.min(8));
        candidates.push((
            "stack_megatron",
            vec![
                fix("framework", framework),
                fix("parallel.tp", tp_fix),
                fix("parallel.distributed_optimizer", true),
            ],
        ));
    }

    // VeRL long sequences: Ulysses sequence parallelism splits each sequence over `cp` devices
    // (`ulysses_sequence_parallel_size`, VeRL docs/perf/perf_tuning.rst; each device's token budget
    // then covers response / sp).
    let rl = matches!(plan.method, Method::Grpo | Method::Ppo);
    let rl_len = u64::from(plan.rl.max_prompt_length.get()) + u64::from(plan.rl.max_response_length.get());
    if plan.framework == Framework::Verl && rl && 8192 <= rl_len && p.cp.get() == 1 {
        candidates.push(("verl_ulysses", vec![fix("parallel.cp", 2)]));
    }
    // Rollout engine: TP of the engine and the sequences it decodes at once (VeRL
    // docs/perf/perf_tuning.rst, "Rollout Generation Tuning": a smaller tensor_parallel_size, a larger
    // max_num_seqs).
    if rl {
        let rollout_tp = u64::from(plan.rl.rollout_tp.get());
        if 1 < rollout_tp {
            candidates.push(("rollout_tp_down", vec![fix("rl.rollout_tp", rollout_tp / 2)]));
        }
        if 2 * rollout_tp <= per_node {
            candidates.push(("rollout_tp_up", vec![fix("rl.rollout_tp", 2 * rollout_tp)]));
        }
        let seqs = u64::from(plan.rl.max_num_seqs.get());
        candidates.push(("max_num_seqs_up", vec![fix("rl.max_num_seqs", 2 * seqs)]));
    }
    // fp8 GEMMs on devices that have them (Hopper, Ada, Blackwell), with Transformer Engine.
    if megatron && plan.hardware.hw.has_fp8() && plan.precision == crate::plan::Precision::Bf16 && !rl {
        candidates.push(("precision_fp8", vec![fix("precision", "fp8")]));
    }
    // LoRA on every linear layer learns closer to full fine-tuning than q/v alone (QLoRA paper §4;
    // LLaMA-Factory's default `lora_target: all`, src/llamafactory/hparams/finetuning_args.py); it
    // costs a little memory and time, shown as computed.
    if plan.trains_lora() && plan.lora.targets != crate::plan::LoraTargets::All {
        candidates.push(("lora_all_targets", vec![fix("lora.targets", "all")]));
    }

    // Megatron FSDP: parameters and gradients sharded too, when the distributed optimizer alone
    // leaves the plan too big (megatron/core/distributed/fsdp, `--use-megatron-fsdp`).
    if plan.framework == Framework::Megatron && !base.fits && 1 < mem.dp && p.fsdp == crate::plan::Fsdp::None
    {
        candidates.push((
            "megatron_fsdp",
            vec![fix("parallel.fsdp", "optim_grads_params"), fix("parallel.distributed_optimizer", true)],
        ));
    }

    // When it does not fit, the moves that cost (almost) no time, all at once: often enough together
    // where each alone is not.
    if !base.fits {
        let cheap: Vec<Fix> = candidates
            .iter()
            .filter(|(code, _)| {
                matches!(*code, "distributed_optimizer" | "sequence_parallel" | "swap_attention")
            })
            .flat_map(|(_, changes)| changes.iter().cloned())
            .collect();
        if 2 <= cheap.len() {
            candidates.push(("cheap_together", cheap));
        }
    }

    let mut res: Vec<Advice> = candidates
        .into_iter()
        .filter_map(|(code, changes)| {
            let (changed, mem, t) = evaluate_change(plan, &changes)?;
            let errors = rule_errors(&changed, &mem);
            // Offer only moves that keep the framework's rules (fits aside).
            if errors_before < errors {
                return None;
            }
            Some(Advice {
                code,
                changes,
                peak_bytes: mem.peak_bytes,
                // In i128: peaks above 2^63 bytes (absurd plans) neither overflow nor wrap.
                peak_delta_bytes: (i128::from(mem.peak_bytes) - i128::from(base.peak))
                    .clamp(i128::from(i64::MIN), i128::from(i64::MAX))
                    as i64,
                step_seconds: t.step_seconds,
                tokens_per_second: t.tokens_per_second,
                speed_delta_frac: t.tokens_per_second / base.tokens_per_second - 1.0,
                fits: mem.peak_bytes <= mem.usable_bytes,
            })
        })
        // A move worth making saves memory when it does not fit, or at least 1 % of the time while
        // fitting (less is inside the model's own error, docs/time.md); a move whose words promise
        // speed must be faster by that much, fitting or not.
        .filter(|a| match base.fits {
            _ if SPEED.contains(&a.code) && a.speed_delta_frac <= 0.01 => false,
            _ if QUALITY.contains(&a.code) => a.fits,
            false => a.peak_delta_bytes < 0,
            true => a.fits && 0.01 < a.speed_delta_frac,
        })
        .collect();
    // A plan that does not fit is offered the moves that make it fit; the ones that only shrink
    // the peak are shown when none does.
    if !base.fits && res.iter().any(|a| a.fits) {
        res.retain(|a| a.fits);
    }
    match base.fits {
        // Moves that make it fit first, the fastest of them first; then what saves the most.
        false => res.sort_by(|a, b| match (a.fits, b.fits) {
            (true, true) => b.tokens_per_second.total_cmp(&a.tokens_per_second),
            (false, false) => a.peak_bytes.cmp(&b.peak_bytes),
            (fits, _) => (!fits).cmp(&fits),
        }),
        true => res.sort_by(|a, b| b.tokens_per_second.total_cmp(&a.tokens_per_second)),
    }
    res
}

/// The search's fastest plan as a piece of advice, when it beats the plan by more than the model's
/// own error (1 %) or makes a plan that does not fit fit: advice and search then say the same.
/// `result` must be [`crate::search::search`]'s (or a finished `Search`'s) for this very plan.
pub fn from_search(plan: &Plan, result: &crate::search::SearchResult) -> Option<Advice> {
    let best = result.best.first()?;
    let mem = memory::estimate(plan);
    let t = time::estimate(plan, &mem);
    let fits = mem.peak_bytes <= mem.usable_bytes && rule_errors(plan, &mem) == 0;
    let speed = best.tokens_per_second / t.tokens_per_second - 1.0;
    if best.changes.is_empty() || (fits && speed <= 0.01) {
        return None;
    }
    Some(Advice {
        code: "search_best",
        changes: best.changes.clone(),
        peak_bytes: best.peak_bytes,
        peak_delta_bytes: (i128::from(best.peak_bytes) - i128::from(mem.peak_bytes))
            .clamp(i128::from(i64::MIN), i128::from(i64::MAX)) as i64,
        step_seconds: best.step_seconds,
        tokens_per_second: best.tokens_per_second,
        speed_delta_frac: speed,
        fits: true,
    })
}
