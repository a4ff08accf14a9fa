//! Tuning advice: the moves an experienced engineer would try on this plan, each evaluated — what it
//! saves in memory and costs or gains in step time is computed by running the changed plan, never
//! written as canned text. The moves are the frameworks' documented tuning knobs (MindSpeed
//! `docs/zh/features/*.md`, VeRL `docs/perf/perf_tuning.rst`, transformers' DeepSpeed guide on
//! selecting a ZeRO stage) and the findings of the Megatron-LM, GPipe and QLoRA papers; each move
//! names its source beside it, and docs/advice.md explains each "why".
//!
//! [`advise`] generates the candidate moves family by family (`candidates.rs`), then evaluates each
//! on the changed plan, keeps those that help and break no rule, and orders them (`rank.rs`).

mod candidates;
mod rank;

use crate::plan::Plan;
use crate::report::Fix;
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
    "cp_algo",
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
    "cp_algo",
    "stack_megatron",
    "rollout_tp_down",
    "rollout_tp_up",
    "max_num_seqs_up",
    "precision_fp8",
    "search_best",
];

/// Ranked advice for a plan: when it does not fit, what saves the most memory first; when it fits,
/// what makes the step fastest while still fitting. A move is offered only if its plan breaks no
/// framework rule the current plan keeps.
pub fn advise(plan: &Plan) -> Vec<Advice> {
    let mem = memory::estimate(plan);
    let t = time::estimate(plan, &mem);
    let base = rank::Base::of(plan, &mem, &t);
    let kept = candidates::candidates(plan, &mem, base.fits)
        .into_iter()
        .filter_map(|candidate| rank::evaluate(plan, &base, candidate))
        .collect();
    rank::rank(&base, kept)
}

/// The search's fastest plan as a piece of advice, when it beats the plan by more than the model's
/// own error (1 %) or makes a plan that does not fit fit: advice and search then say the same.
/// `result` must be [`crate::search::search`]'s (or a finished `Search`'s) for this very plan.
pub fn from_search(plan: &Plan, result: &crate::search::SearchResult) -> Option<Advice> {
    let best = result.best.first()?;
    let mem = memory::estimate(plan);
    let t = time::estimate(plan, &mem);
    let fits = mem.peak_bytes <= mem.usable_bytes && rank::rule_errors(plan, &mem) == 0;
    let speed = best.tokens_per_second / t.tokens_per_second - 1.0;
    if best.changes.is_empty() || (fits && speed <= 0.01) {
        return None;
    }
    Some(Advice {
        code: "search_best",
        changes: best.changes.clone(),
        peak_bytes: best.peak_bytes,
        peak_delta_bytes: rank::peak_delta_bytes(best.peak_bytes, mem.peak_bytes),
        step_seconds: best.step_seconds,
        tokens_per_second: best.tokens_per_second,
        speed_delta_frac: speed,
        fits: true,
    })
}
