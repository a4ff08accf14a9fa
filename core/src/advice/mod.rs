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
    /// The move, written as its stable code (`distributed_optimizer`).
    pub code: Move,
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

named_enum! {
    /// A move [`advise`] can propose, by its stable code (`distributed_optimizer`): the page words
    /// each one and its "why", docs/advice.md explains it.
    pub enum Move ("Every move, in the order candidates are generated.") {
        DistributedOptimizer = "distributed_optimizer",
        OverlapGradReduce = "overlap_grad_reduce",
        SequenceParallel = "sequence_parallel",
        TpCommOverlap = "tp_comm_overlap",
        AscendCoc = "ascend_coc",
        FusedKernels = "fused_kernels",
        ZeroStage = "zero_stage",
        ZeroStageDown = "zero_stage_down",
        ZeroStage3 = "zero_stage_3",
        OffloadOptimizer = "offload_optimizer",
        OffloadParams = "offload_params",
        OnloadParams = "onload_params",
        Onload = "onload",
        OffloadToHost = "offload_to_host",
        HostOptimizer = "host_optimizer",
        RecomputeSelective = "recompute_selective",
        RecomputeFull = "recompute_full",
        RecomputeLess = "recompute_less",
        SwapAttention = "swap_attention",
        FlashAttention = "flash_attention",
        LigerKernel = "liger_kernel",
        PureBf16 = "pure_bf16",
        Adam8bit = "adamw_8bit",
        Galore = "galore",
        MicroBatchUp = "micro_batch_up",
        MicroBatchDown = "micro_batch_down",
        MoreMicrobatches = "more_microbatches",
        Interleave = "interleave",
        TpInNode = "tp_in_node",
        PpOverTp = "pp_over_tp",
        CpAlgo = "cp_algo",
        StackMegatron = "stack_megatron",
        CheapTogether = "cheap_together",
        VerlUlysses = "verl_ulysses",
        RolloutTpDown = "rollout_tp_down",
        RolloutTpUp = "rollout_tp_up",
        RolloutEpUp = "rollout_ep_up",
        MaxNumSeqsUp = "max_num_seqs_up",
        PrecisionFp8 = "precision_fp8",
        LoraAllTargets = "lora_all_targets",
        SearchBest = "search_best",
        MegatronFsdp = "megatron_fsdp",
        GradReduceBf16 = "grad_reduce_bf16",
        Fp8ParamGather = "fp8_param_gather",
        NoSyncAccumulation = "no_sync_accumulation",
        ZeroPlusPlus = "zero_plus_plus",
        VerlFsdp2 = "verl_fsdp2",
        LogProbSmaller = "log_prob_smaller",
    }
}

impl Move {
    /// Offered for what it buys besides speed or memory (model quality): shown with its computed
    /// cost whenever the changed plan still fits.
    pub fn for_quality(self) -> bool {
        matches!(self, Move::LoraAllTargets)
    }

    /// Its words promise speed ("runs faster", "trains fastest", "shrinks the bubble"): shown only
    /// when the computed figure agrees, so text and figure never contradict.
    pub fn promises_speed(self) -> bool {
        matches!(
            self,
            Move::OverlapGradReduce
                | Move::NoSyncAccumulation
                | Move::ZeroPlusPlus
                | Move::TpCommOverlap
                | Move::AscendCoc
                | Move::FusedKernels
                | Move::ZeroStageDown
                | Move::OnloadParams
                | Move::Onload
                | Move::OffloadToHost
                | Move::RecomputeLess
                | Move::FlashAttention
                | Move::LigerKernel
                | Move::MicroBatchUp
                | Move::MoreMicrobatches
                | Move::Interleave
                | Move::TpInNode
                | Move::CpAlgo
                | Move::StackMegatron
                | Move::RolloutTpDown
                | Move::RolloutTpUp
                | Move::RolloutEpUp
                | Move::MaxNumSeqsUp
                | Move::PrecisionFp8
                | Move::SearchBest
        )
    }
}

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
        code: Move::SearchBest,
        changes: best.changes.clone(),
        peak_bytes: best.peak_bytes,
        peak_delta_bytes: rank::peak_delta_bytes(best.peak_bytes, mem.peak_bytes),
        step_seconds: best.step_seconds,
        tokens_per_second: best.tokens_per_second,
        speed_delta_frac: speed,
        fits: true,
    })
}
