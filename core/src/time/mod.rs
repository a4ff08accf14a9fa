//! Step time, throughput and FLOPs utilization: per-layer FLOPs at a size-dependent efficiency,
//! memory-bound work at HBM bandwidth, collectives by placement, the pipeline schedule simulated,
//! the data-parallel tail and the optimizer step. docs/time.md derives every term.

use crate::hardware::Hardware;
use crate::memory;
use crate::model::{self, Architecture};
use crate::plan::{Framework, Method, Plan, Precision, RecomputeGranularity};
use crate::schedule::{self, Costs, Schedule, Timeline};

mod comm;
mod gemm;
mod layer;
mod moe;
mod pipeline;
mod rl;

pub use comm::ring_seconds_on;
use comm::{group_bandwidth, mesh_share};
use gemm::{gemm, gemm_16bit};
pub use gemm::{gemm_efficiency, gemm_efficiency_on, peak_flops};
use layer::{LayerWork, layer_work};
use pipeline::{SIMULATED_PASSES_MAX, pipeline_makespan, rank_seconds, simulated_passes};
pub use pipeline::{schedule_of, uniform_makespan};
use rl::rl_phases;

/// Asymptotic fraction of peak of a large GEMM, end to end in a training step.
/// Tier: fitted, the one free constant of the time model: Narayanan et al. 2021 Table 1 with the
/// authors' run settings gives mean error 2.3 %, worst 6.9 % (`core/tests/it/time.rs`).
pub const GEMM_EFF_MAX: f64 = 0.66;
/// GEMM size at which efficiency is half the asymptote, FLOPs.
/// Tier: derived: LLMCompass's A100 matmul sweep (`ae/figure5/ab/real_hardware/matmul_A100.csv`)
/// measures about 60 % of peak at 17–39 GFLOP, which this curve gives (53–60 %).
pub const GEMM_HALF_FLOPS: f64 = 4e9;
/// What fp8 GEMMs reach of the fp8 peak relative to what bf16 GEMMs of the same size reach of
/// theirs: the fp8 tensor cores' doubled peak is not doubled in practice (scaling, E4M3/E5M2
/// operand handling, smaller tiles). Tier: fitted on torchtitan `docs/performance.md` Table 1
/// (Llama 3.1 8B on 8 × H100, FSDP, local batch 2, selective recompute: bf16 6,667 and fp8 8,532
/// tokens/s per GPU, ×1.28 end to end); checked on its 405B pair (`core/tests/it/time.rs`).
pub const FP8_GEMM_RELATIVE_EFF: f64 = 0.82;
/// Fraction of HBM bandwidth elementwise kernels reach. Tier: derived (STREAM-like kernels reach
/// 80–90 % of HBM bandwidth on A100/H100).
pub const HBM_EFF: f64 = 0.8;
/// Effective host↔device bandwidth for offloaded states, bytes/s. Tier: derived (PCIe 4.0 ×16 is
/// 32 GB/s per direction, PCI-SIG; pinned-memory copies reach about 80 % of it).
pub const HOST_LINK_BYTES_PER_SECOND: f64 = 25e9;
/// Bytes of 16-bit elementwise traffic per token and hidden unit in one layer's forward (norms,
/// residual adds, bias/activation/dropout kernels, rotary): each reads and writes h-wide tensors.
/// Tier: derived from the kernels Megatron runs per layer (about 12 reads/writes of 2-byte tensors).
pub const ELEMENTWISE_BYTES_PER_TOKEN_HIDDEN: f64 = 24.0;
/// Fraction of link bandwidth a ring collective reaches. Tier: derived: nccl-tests on one 8 × A100
/// node measure 229 GB/s all-reduce bus bandwidth at 1 GiB (stas00/ml-engineering
/// `network/README.md`), 0.76 of NVLink's 300 GB/s in one direction.
pub const COLLECTIVE_EFF: f64 = 0.75;
/// Fixed cost of one collective or point-to-point call, seconds (launch and synchronization).
/// Tier: derived (NCCL latencies of tens of microseconds).
pub const COLLECTIVE_LATENCY_SECONDS: f64 = 20e-6;
/// [`GEMM_EFF_MAX`] for Ascend 910B/910C (and 910A, unmeasured): NVIDIA's asymptote scaled by how
/// much closer to its datasheet peak an Ascend GEMM gets in the same benchmark. Tier: derived:
/// zzc0721/torch-performance-test-data's `torch.matmul` sweep measures 315.36 TFLOPS BF16 on a
/// 910B2 (issue #109, 4096², 0.839 of 376) and 797.51 on an H100 SXM (issue #79, 8192², 0.806 of
/// 989): 0.66 × 0.839 / 0.806 = 0.687. Checked on Pangu Ultra (`core/tests/it/ascend.rs`).
pub const ASCEND_GEMM_EFF_MAX: f64 = 0.69;
/// Fraction of link bandwidth an HCCL collective reaches (HCCS inside an Atlas 800T A2 node, RoCE
/// across, UB in CloudMatrix384). Tier: derived: DeepEP-Ascend's normal kernels on CloudMatrix384
/// (sgl-project/sgl-kernel-npu `README.md`, EP 8, DeepSeek-V3 pre-training shapes) move 146 GB/s
/// dispatching and 125 GB/s combining over a 910C die's 196 GB/s one-way link: 0.74 and 0.64,
/// mean 0.69. The only published HCCL bandwidth measurement found; HCCS and RoCE take it too.
pub const HCCL_COLLECTIVE_EFF: f64 = 0.69;
/// Fixed cost of one HCCL collective or send/receive, seconds. Tier: derived: HCCL kernels are
/// launched like NCCL's (one task per call on the device's stream); no public small-message
/// hccl_test figure was found, so NCCL's tens of microseconds stand.
pub const HCCL_COLLECTIVE_LATENCY_SECONDS: f64 = 20e-6;
/// Share of the TP communication MindSpeed's CoC (`--use-ascend-coc --coc-parallel-num 2`) leaves
/// exposed. Tier: derived: CoC cuts each matmul and its all-reduce (or all-gather/reduce-scatter)
/// into `coc-parallel-num` chunks and pipelines them, so one chunk's communication of 2 stays
/// (MindSpeed `docs/zh/features/communication-over-computation.md`); the emitter writes 2.
pub const ASCEND_COC_EXPOSED_FRAC: f64 = 0.5;
/// Extra bytes per token and hidden unit, per layer's forward, that MindSpeed's two RMSNorms cost
/// unfused (eager `pow`/`mean`/`rsqrt`/`mul` in fp32 instead of `npu_rms_norm`). Tier: fitted on
/// MindSpeed `docs/zh/features/rms_norm.md` (Llama-2-7B: `--use-fused-rmsnorm` +2.7 % throughput)
/// with MindSpeed-LLM's Llama-2-7B layout (`examples/mindspore/llama2/pretrain_llama2_7b_ms.sh`:
/// 8 NPUs, TP 1, PP 2, micro-batch 1, batch 256, sequence 4096) on a 910B2.
pub const UNFUSED_RMSNORM_BYTES_PER_TOKEN_HIDDEN: f64 = 23.4;
/// Extra bytes per token and MLP intermediate unit, per gated MLP's forward, of an unfused SwiGLU
/// (`silu` then `mul` instead of `npu_swiglu`). Tier: fitted on MindSpeed
/// `docs/zh/features/swiglu.md` (Llama-2-7B: `--use-fused-swiglu` +4.7 %), same layout.
pub const UNFUSED_SWIGLU_BYTES_PER_TOKEN_FFN: f64 = 15.2;
/// Extra bytes per token and rotated query/key unit, per layer's forward, of an unfused rotary
/// embedding (`rotate_half`, two products and a sum instead of `npu_rotary_mul`). Tier: fitted on
/// MindSpeed `docs/zh/features/rotary-embedding.md` (Llama-2-7B: `--use-fused-rotary-pos-emb`
/// +1 %), same layout.
pub const UNFUSED_ROPE_BYTES_PER_TOKEN_QK: f64 = 4.34;
/// The busiest device's routed tokens over the mean when the plan does not say (`moe.imbalance`).
/// Tier: derived: Switch Transformer (Fedus et al., JMLR 2022, §2.2 and Table 1) trains with
/// capacity factor 1.25, the headroom over the mean at which its auxiliary-loss-balanced experts
/// drop almost no tokens, so the busiest expert carries about 1.25 × the mean; the Megatron MoE
/// README's auxiliary-loss and aux-loss-free balancing aim at the same band.
pub const MOE_IMBALANCE: f64 = 1.25;
/// Rows of one expert's block in a grouped GEMM: each expert's tokens are padded up to a multiple
/// of it, half a block wasted on average. Tier: spec: DeepGEMM's contiguous grouped layout aligns
/// every expert's tokens to the GEMM M block (`get_mk_alignment_for_contiguous_layout()` = 128,
/// deepseek-ai/DeepGEMM README), CUTLASS's Hopper grouped GEMMs tile M by 128 as well.
pub const GROUPED_GEMM_BLOCK_ROWS: f64 = 128.0;
/// Host-side cost of one expert GEMM when the experts run as a loop (Megatron `SequentialMLP`,
/// no `--moe-grouped-gemm`), seconds: a kernel launch plus PyTorch's eager dispatch of the GEMM and
/// its slicing. Tier: derived: NVIDIA's CUDA Graphs post (developer.nvidia.com/blog/cuda-graphs/)
/// measures 3.8 µs per small kernel launched back to back, and an eager PyTorch op adds several µs
/// of Python and dispatcher time.
pub const EXPERT_LOOP_SECONDS_PER_GEMM: f64 = 10e-6;
/// Passes over the routed rows (top-k copies of h-wide rows) in one direction of an MoE layer's
/// token permutation with Transformer Engine's fused kernels (`--moe-permute-fusion`): permute
/// (read, write), sort by local expert after the all-to-all (read, write), unsort (read, write),
/// unpermute (read; it also writes the token rows, counted apart). Tier: derived from Megatron
/// `token_dispatcher.py` (`MoEAlltoAllTokenDispatcher`) and `moe_utils.py` at core_v0.19.0.
pub const MOE_PERMUTE_PASSES_FUSED: f64 = 7.0;
/// The same without fusion: the unfused `unpermute` multiplies by the routing probabilities
/// (read, write) and scatter-adds into zeroed token rows (read, and a read and write per copy),
/// four passes more. Tier: derived from `moe_utils.py` `unpermute` at core_v0.19.0.
pub const MOE_PERMUTE_PASSES_UNFUSED: f64 = 11.0;
/// Bytes per router logit of one token: written in fp32 by the gating GEMM, read and written by
/// the softmax or sigmoid, read by top-k (4 + 8 + 4). Tier: derived from Megatron `router.py`
/// (`TopKRouter`, router logits in fp32) at core_v0.19.0.
pub const ROUTER_BYTES_PER_LOGIT: f64 = 16.0;
/// Fraction of link bandwidth DeepEP's normal (training) kernels reach. Tier: derived: DeepEP's
/// table on H800 (deepseek-ai/DeepEP `docs/legacy.md`, "Normal kernels"): intranode EP 8 153 GB/s
/// of NVLink's ~160 GB/s, internode EP 16/32/64 43/58/51 GB/s of CX7's 50 GB/s (mean 0.98).
pub const FLEX_LINK_EFF: f64 = 0.96;
/// Share of the compute the overlapped all-to-all kernels take away while they run (the SMs they
/// hold). Tier: spec: DeepSeek-V3 (arXiv 2412.19437 §3.2.2) dedicates 20 of the H800's 132 SMs to
/// communication.
pub const MOE_COMM_SM_FRAC: f64 = 20.0 / 132.0;
/// The most passes a whole step's drawn timeline ([`StepTime::whole_timeline`]) simulates: some
/// 8 MB of passes, a few milliseconds. Llama 3.1 405B on 1,024 devices (PP 16, VPP 4, 128
/// micro-batches) runs 16,384; a step with more draws its first micro-batches pass by pass.
const DRAWN_PASSES_MAX: u64 = 1 << 18;

/// Time of a plan.
#[derive(Clone, Debug, PartialEq)]
pub struct StepTime {
    /// One optimizer step.
    pub step_seconds: f64,
    /// Tokens trained per second, all devices.
    pub tokens_per_second: f64,
    /// Tokens per second per device.
    pub tokens_per_second_per_device: f64,
    /// Sequences trained per second.
    pub samples_per_second: f64,
    /// FLOPs of the model per step (forward and backward, no recomputation; Megatron's count).
    pub model_flops_per_step: f64,
    /// FLOPs the devices run per step, recomputation included.
    pub hardware_flops_per_step: f64,
    /// Model FLOPs per second over the devices' dense peak.
    pub mfu_frac: f64,
    /// Hardware FLOPs per second over the devices' dense peak.
    pub hfu_frac: f64,
    /// Where the step's time goes.
    pub breakdown: Breakdown,
    /// Bubble over busy time in the pipeline, as the schedule ran.
    pub bubble_ratio: f64,
    /// The schedule that ran.
    pub schedule: Schedule,
    /// Idle time as a share of ranks × the pipeline's makespan.
    pub idle_frac: f64,
    /// What the schedule ran on, to draw its timeline on demand ([`StepTime::timeline`]).
    pub pipeline: Pipeline,
}

/// A plan's pipeline as the step time saw it: the schedule, each rank's and chunk's pass
/// durations, and how many micro-batches a drawn timeline shows.
#[derive(Clone, Debug, PartialEq)]
pub struct Pipeline {
    /// The schedule.
    pub schedule: Schedule,
    /// Pass durations per rank and chunk, and the send time between ranks.
    pub costs: Costs,
    /// Micro-batches the timeline runs: the step's, at most two per stage (the steady state
    /// beyond repeats).
    pub microbatches: u32,
    /// Micro-batches the step's pipeline runs (with RL, one per response).
    pub n_microbatches: u32,
    /// The pipeline's time in the step: its makespan over all `n_microbatches`.
    pub makespan_seconds: f64,
    /// The step's host transfers after the pipeline (offloaded optimizer states and parameters;
    /// offloaded activations are part of the passes).
    pub offload_seconds: f64,
}

impl StepTime {
    /// The schedule's first micro-batches pass by pass, for drawing: built only when asked for,
    /// since the step time itself comes from closed forms where the schedule allows
    /// ([`uniform_makespan`]). Empty when the pipeline is too long to simulate.
    pub fn timeline(&self) -> Timeline {
        let p = &self.pipeline;
        let (pp, vpp) = (p.costs.pp, p.costs.vpp);
        let empty = Timeline { events: Vec::new(), makespan_seconds: 0.0, bubble_ratio: 0.0, idle_frac: 0.0 };
        if SIMULATED_PASSES_MAX < simulated_passes(p.schedule, pp, vpp, p.microbatches) {
            return empty;
        }
        let program = schedule::cached(p.schedule, pp, vpp, p.microbatches);
        program.map_or(empty, |program| program.timeline(&p.costs))
    }

    /// The whole step along its time axis, for drawing: with RL the generation and the scoring
    /// first, then the pipeline running every micro-batch pass by pass, then the gradients'
    /// reduction, the optimizer step and the host transfers, each where the step time adds it
    /// ([`estimate`]); the parts end at [`StepTime::step_seconds`]. Built only when asked for (a
    /// full simulation of the schedule; [`crate::evaluate`] runs only its first micro-batches).
    /// Past [`DRAWN_PASSES_MAX`] passes, the first micro-batches that fit are simulated and
    /// `microbatches_drawn` says how many.
    ///
    /// ```
    /// use trainplan_core::{Plan, memory, time};
    ///
    /// let plan = Plan::from_json(r#"{"model": "llama-3.1-8b", "framework": "megatron", "method": "pretrain",
    ///     "cluster": {"nodes": 2}, "parallel": {"tp": 4, "pp": 4}, "batch": {"global_batch": 64}}"#)?;
    /// let t = time::estimate(&plan, &memory::estimate(&plan));
    /// let whole = t.whole_timeline();
    /// // 64 sequences over DP 1 at micro-batch 1: 64 micro-batches, a forward and a backward of
    /// // each on each of the 4 ranks.
    /// assert_eq!(whole.events.len(), 64 * 2 * 4);
    /// assert_eq!(whole.parts.last().unwrap().end_seconds, t.step_seconds);
    /// # Ok::<(), trainplan_core::plan::PlanFileError>(())
    /// ```
    pub fn whole_timeline(&self) -> StepTimeline {
        let p = &self.pipeline;
        let b = &self.breakdown;
        let (pp, vpp, m) = (p.costs.pp, p.costs.vpp, p.n_microbatches.max(1));
        // The micro-batches the drawn order holds (interleaving rounds up to groups of pp, as the
        // step's own simulation does), or as many as the bound allows.
        let per_microbatch = 3 * u64::from(pp) * u64::from(vpp);
        let m_drawn = match simulated_passes(p.schedule, pp, vpp, m) <= DRAWN_PASSES_MAX {
            true => m,
            false => {
                let fit = (DRAWN_PASSES_MAX / per_microbatch).min(u64::from(m)) as u32;
                match p.schedule {
                    Schedule::Interleaved => fit / pp * pp,
                    _ => fit,
                }
            }
        };
        let simulated =
            match (0 < m_drawn, simulated_passes(p.schedule, pp, vpp, m_drawn) <= DRAWN_PASSES_MAX) {
                (true, true) => {
                    schedule::cached(p.schedule, pp, vpp, m_drawn).map(|program| program.timeline(&p.costs))
                }
                _ => None,
            };
        let steps = [
            (StepPart::Rollout, b.rollout_seconds),
            (StepPart::LogProb, b.log_prob_seconds),
            (StepPart::Pipeline, p.makespan_seconds),
            (StepPart::GradientSync, b.dp_comm_seconds),
            (StepPart::Optimizer, b.optimizer_seconds),
            (StepPart::Offload, p.offload_seconds),
        ];
        let mut parts = Vec::with_capacity(steps.len());
        let mut at = 0.0;
        let mut pipeline_start = 0.0;
        for (part, seconds) in steps {
            if part == StepPart::Pipeline {
                pipeline_start = at;
            }
            if 0.0 < seconds {
                parts.push(PartSpan { part, start_seconds: at, end_seconds: at + seconds });
                at += seconds;
            }
        }
        let events = simulated
            .map(|t| {
                let shift = |e: schedule::Event| schedule::Event {
                    start_seconds: e.start_seconds + pipeline_start,
                    end_seconds: e.end_seconds + pipeline_start,
                    ..e
                };
                t.events.into_iter().map(shift).collect()
            })
            .unwrap_or_default();
        StepTimeline {
            events,
            parts,
            n_ranks: pp,
            n_chunks: vpp,
            n_microbatches: m,
            microbatches_drawn: m_drawn,
        }
    }
}

/// A whole step along its time axis ([`StepTime::whole_timeline`]).
#[derive(Clone, Debug, PartialEq)]
pub struct StepTimeline {
    /// The pipeline's passes, rank by rank, at their times in the step.
    pub events: Vec<schedule::Event>,
    /// The step's parts in order, back to back from 0 to the step time; empty ones left out.
    pub parts: Vec<PartSpan>,
    /// Pipeline ranks.
    pub n_ranks: u32,
    /// Model chunks per rank (VPP's, DualPipeV's two).
    pub n_chunks: u32,
    /// Micro-batches the step's pipeline runs.
    pub n_microbatches: u32,
    /// Micro-batches drawn pass by pass: all of them, unless the step has too many passes.
    pub microbatches_drawn: u32,
}

/// One part of a step, from its start to its end, seconds from the step's start.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PartSpan {
    /// What runs.
    pub part: StepPart,
    /// Start, seconds.
    pub start_seconds: f64,
    /// End, seconds.
    pub end_seconds: f64,
}

/// What a part of a step does.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum StepPart {
    /// RL: generating the responses.
    Rollout,
    /// RL: the actor's and the reference's log-probabilities of the responses.
    LogProb,
    /// The training pipeline's forward and backward passes (with RL, the actor's update).
    Pipeline,
    /// Data-parallel gradient reduction not hidden behind the backward.
    GradientSync,
    /// The optimizer step.
    Optimizer,
    /// Offloaded states crossing the host link.
    Offload,
}

/// Seconds of a step by cause, on the slowest pipeline stage's critical path.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Breakdown {
    /// Matrix multiplications and attention.
    pub compute_seconds: f64,
    /// Elementwise kernels bound by memory bandwidth.
    pub memory_bound_seconds: f64,
    /// Recomputation's extra forward work.
    pub recompute_seconds: f64,
    /// Tensor-parallel collectives not hidden.
    pub tp_comm_seconds: f64,
    /// Context-parallel exchanges not hidden.
    pub cp_comm_seconds: f64,
    /// Expert-parallel all-to-alls not hidden.
    pub ep_comm_seconds: f64,
    /// Pipeline sends and receives on the critical path.
    pub pp_comm_seconds: f64,
    /// Pipeline bubble.
    pub bubble_seconds: f64,
    /// Data-parallel gradient reduction (and ZeRO-3 gathers) not hidden.
    pub dp_comm_seconds: f64,
    /// Optimizer step.
    pub optimizer_seconds: f64,
    /// Host transfers for offloaded states.
    pub offload_seconds: f64,
    /// RL: generating the responses (prefill and decode in the rollout engine).
    pub rollout_seconds: f64,
    /// RL: log-probabilities of the responses under the actor and the reference.
    pub log_prob_seconds: f64,
}

struct Ctx<'a> {
    plan: &'a Plan,
    /// Parameters a token passes through.
    active_params: f64,
    arch: &'a Architecture,
    hw: &'a Hardware,
    /// Dense peak of the 16-bit (or fp32) units: attention, the head, MFU's denominator.
    peak: f64,
    /// The linear layers' GEMMs: in fp8 plans the fp8 peak at what fp8 GEMMs reach of it
    /// ([`FP8_GEMM_RELATIVE_EFF`]), else [`Ctx::peak`].
    linear_peak: f64,
    /// Whether the linear layers run in fp8 (Transformer Engine): their inputs are cast first.
    fp8: bool,
    /// Whether MindSpeed runs the plan (MindSpeed-LLM, MindSpeed-RL): its fused-kernel switch counts.
    mindspeed: bool,
    tp: f64,
    cp: f64,
    ep: f64,
    tokens: f64,
    seq: f64,
}

/// Estimates a plan's step.
pub fn estimate(plan: &Plan, mem: &memory::Memory) -> StepTime {
    estimate_within(plan, mem, None).expect("without a limit there is always an estimate")
}

/// [`estimate`], or `None` when the step provably takes longer than `limit_seconds`: the bound
/// (every pass of the busiest rank back to back, plus the step's own terms) is checked before the
/// schedule is simulated.
pub fn estimate_within(plan: &Plan, mem: &memory::Memory, limit_seconds: Option<f64>) -> Option<StepTime> {
    // Settings the plan's framework has no flag for play no part (`knobs::effective`).
    let plan = &*crate::knobs::effective(plan);
    let arch = &plan.model.arch;
    let hw = &plan.hardware.hw;
    let p = &plan.parallel;
    let layout = &mem.layout;
    let megatron = layout.model_parallel;
    let (tp, pp, cp, ep) = (layout.tp, layout.pp, layout.cp, layout.ep);
    let b = f64::from(plan.batch.micro_batch.get());
    let seq = match plan.method {
        Method::Grpo | Method::Ppo => {
            f64::from(plan.rl.max_prompt_length.get()) + f64::from(plan.rl.max_response_length.get())
        }
        _ => f64::from(plan.batch.seq_len.get()),
    };
    let ctx = Ctx {
        plan,
        active_params: mem.params_active as f64,
        arch,
        hw,
        peak: peak_flops(hw, plan.precision),
        // NVFP4 and MXFP8 as fp8 (TE casts, then the block-scaled GEMM); NVFP4 on the fp4 units.
        // The fp8 relative efficiency stands in for fp4's, which no public pair measures yet.
        linear_peak: match plan.precision {
            Precision::Fp8 | Precision::Mxfp8 if hw.has_fp8() => {
                hw.fp8_flops_per_second * FP8_GEMM_RELATIVE_EFF
            }
            Precision::Nvfp4 if hw.has_block_scaling() => hw.fp4_flops_per_second * FP8_GEMM_RELATIVE_EFF,
            _ => peak_flops(hw, plan.precision),
        },
        fp8: plan.precision.low_precision() && hw.has_fp8(),
        mindspeed: matches!(plan.framework, Framework::MindSpeedLlm | Framework::MindSpeedRl),
        tp: tp as f64,
        cp: cp as f64,
        ep: ep as f64,
        tokens: b * seq / cp as f64,
        seq,
    };
    let dense = layer_work(&ctx, false);
    let moe = layer_work(&ctx, true);

    // Head and loss on the last stage: the logits GEMM and a memory-bound softmax.
    let v = arch.vocab_size as f64;
    let (head_seconds, head_flops) = gemm_16bit(&ctx, ctx.tokens, arch.hidden_size as f64, v / ctx.tp);
    let head_memory = 3.0 * 4.0 * ctx.tokens * v / ctx.tp / (hw.memory_bytes_per_second * HBM_EFF);

    // Backward is twice the forward's GEMMs (input and weight gradients); recomputation reruns the
    // forward (full) or the attention core (selective) before it.
    let recompute = plan.recompute.granularity;
    let schedule_kind = layout.schedule;
    // Chunks per rank: VPP's, or DualPipeV's two (stage r and stage 2·pp − 1 − r).
    let vpp = layout.chunks;
    let n_chunks = (pp * vpp) as usize;
    let chunks: Vec<&crate::layout::VirtualStage> =
        (0..n_chunks as u64).map(|idx| layout.stage(idx / vpp, idx % vpp)).collect();
    let mut forward = vec![0.0; n_chunks];
    let mut backward = vec![0.0; n_chunks];
    let mut weight = vec![0.0; n_chunks];
    // Forward, input gradients and (unless the base is frozen) weight gradients: 3 GEMM passes, or 2.
    let frozen = plan.trains_lora();
    let passes = if frozen { 2.0 } else { 3.0 };
    let rerun_share = if recompute == RecomputeGranularity::Full { 1.0 } else { 0.0 };
    // Per rank, one micro-batch's seconds by cause, for the breakdown.
    let mut per_rank = vec![Breakdown::default(); pp as usize];
    // Each layer kind's passes and causes once (a dense and an MoE layer), then counted per chunk:
    // the work is the same for every layer of a kind.
    let per_kind = |l: &LayerWork| {
        let comm = l.tp_seconds + l.cp_seconds + l.ep_seconds;
        let fwd = l.gemm_seconds + l.attention_seconds + l.memory_seconds + comm;
        let (rerun, rerun_flops) = match recompute {
            RecomputeGranularity::Full => (fwd, l.model_flops),
            RecomputeGranularity::Selective => selective_rerun(plan, l),
            RecomputeGranularity::None => (0.0, 0.0),
        };
        // Input gradients: one GEMM per forward GEMM, attention twice, the collectives again,
        // after the recomputed forward; weight gradients: one GEMM per forward GEMM. A frozen base
        // (LoRA, QLoRA) needs no weight gradients; the adapters' are negligible.
        let bwd = l.gemm_seconds + 2.0 * l.attention_seconds + l.memory_seconds + comm + rerun;
        let wgt = if frozen { 0.0 } else { l.gemm_seconds };
        let causes = Breakdown {
            // Forward, input-gradient and (unless frozen) weight-gradient GEMMs; attention thrice.
            compute_seconds: passes * l.gemm_seconds + 3.0 * l.attention_seconds,
            memory_bound_seconds: (2.0 + rerun_share) * l.memory_seconds,
            recompute_seconds: match recompute {
                RecomputeGranularity::Full => l.gemm_seconds + l.attention_seconds,
                _ => rerun,
            },
            tp_comm_seconds: (2.0 + rerun_share) * l.tp_seconds,
            cp_comm_seconds: (2.0 + rerun_share) * l.cp_seconds,
            ep_comm_seconds: (2.0 + rerun_share) * l.ep_seconds,
            ..Breakdown::default()
        };
        (fwd, bwd, wgt, causes, rerun_flops)
    };
    let kinds = [per_kind(&dense), per_kind(&moe)];
    let last_layer = arch.n_layers.saturating_sub(1);
    for (idx, stage) in chunks.iter().enumerate() {
        // Layers of each kind here; an MTP layer runs a decoder layer like the model's last (its
        // head and loss are added below).
        let mut count = [0.0_f64; 2];
        for layer in stage.layers.clone() {
            count[usize::from(model::is_moe_layer(arch, layer))] += 1.0;
        }
        count[usize::from(model::is_moe_layer(arch, last_layer))] += stage.mtp as f64;
        let r = &mut per_rank[idx / vpp as usize];
        for ((fwd, bwd, wgt, causes, _), n) in kinds.iter().zip(count) {
            if n == 0.0 {
                continue;
            }
            forward[idx] += n * fwd;
            backward[idx] += n * bwd;
            weight[idx] += n * wgt;
            r.compute_seconds += n * causes.compute_seconds;
            r.memory_bound_seconds += n * causes.memory_bound_seconds;
            r.recompute_seconds += n * causes.recompute_seconds;
            r.tp_comm_seconds += n * causes.tp_comm_seconds;
            r.cp_comm_seconds += n * causes.cp_comm_seconds;
            r.ep_comm_seconds += n * causes.ep_comm_seconds;
        }
    }
    let mut model_flops_per_mb = 0.0;
    let mut recompute_flops_per_mb = 0.0;
    let n_moe = (0..arch.n_layers).filter(|&idx| model::is_moe_layer(arch, idx)).count() as f64;
    for (l, kind, n) in [(&dense, &kinds[0], arch.n_layers as f64 - n_moe), (&moe, &kinds[1], n_moe)] {
        model_flops_per_mb += n * passes * l.model_flops;
        recompute_flops_per_mb += n * kind.4;
    }
    // The head and the loss on the stage that holds them, once more for each MTP layer (its own
    // prediction through the shared head), and each MTP layer's projection of [h; embedding] to h.
    let h = arch.hidden_size as f64;
    let (proj_seconds, proj_flops) = gemm(&ctx, ctx.tokens, 2.0 * h, h / ctx.tp);
    let n_mtp = plan.mtp_layers as f64 * f64::from(megatron);
    let mtp_kind = usize::from(model::is_moe_layer(arch, last_layer));
    model_flops_per_mb += n_mtp * passes * [&dense, &moe][mtp_kind].model_flops;
    recompute_flops_per_mb += n_mtp * kinds[mtp_kind].4;
    model_flops_per_mb += passes * (head_flops * (1.0 + n_mtp) + proj_flops * n_mtp);
    // Activation offloading (Megatron `--cpu-offloading-num-layers`, PP 1 only): each offloaded
    // layer's activations cross the host link after its forward and again before its backward,
    // overlapped with the next layer's forward (and the previous one's backward): "offloaded to the
    // CPU asynchronously" (megatron/core/model_parallel_config.py `cpu_offloading`; the context is
    // Transformer Engine's `get_cpu_offload_context`, megatron/core/transformer/transformer_block.py);
    // what does not fit behind it shows.
    let mut activation_offload_seconds = 0.0;
    let offloaded =
        u64::from(plan.recompute.cpu_offload_layers).min(chunks[0].layers.end - chunks[0].layers.start);
    let offloaded_bytes = mem.stages.first().map_or(0, |s| s.offloaded_activations) as f64;
    if megatron && pp == 1 && 0 < offloaded && 0.0 < offloaded_bytes {
        let transfer = offloaded_bytes / offloaded as f64 / HOST_LINK_BYTES_PER_SECOND;
        let n = (chunks[0].layers.end - chunks[0].layers.start).max(1) as f64;
        let (fwd_layer, bwd_layer) = (forward[0] / n, backward[0] / n);
        let exposed = offloaded as f64 * ((transfer - fwd_layer).max(0.0) + (transfer - bwd_layer).max(0.0));
        forward[0] += offloaded as f64 * (transfer - fwd_layer).max(0.0);
        backward[0] += offloaded as f64 * (transfer - bwd_layer).max(0.0);
        activation_offload_seconds = exposed;
    }

    for (idx, stage) in chunks.iter().enumerate() {
        let heads = f64::from(u8::from(stage.loss)) + stage.mtp as f64;
        let proj = stage.mtp as f64 * proj_seconds;
        forward[idx] += heads * (head_seconds + head_memory) + proj;
        backward[idx] += heads * (2.0 * head_seconds + head_memory) + 2.0 * proj;
        let r = &mut per_rank[idx / vpp as usize];
        r.compute_seconds += 3.0 * (heads * head_seconds + proj);
        r.memory_bound_seconds += 2.0 * heads * head_memory;
    }

    // Pipeline: send one micro-batch's activations (÷ t with scatter/gather) between stages, whose
    // ranks sit tp · cp · dp apart (Megatron's order: PP outermost): over the scale-up fabric when
    // both stages sit in one domain, else over the node's NICs together.
    let p2p_bytes = ctx.tokens * arch.hidden_size as f64 * 2.0 / ctx.tp;
    let domain = u64::from(plan.cluster.scale_up_domain.get());
    let nvlink = hw.intra_node_bytes_per_second / 2.0;
    let p2p_bw = match 2 * tp * cp * mem.dp.max(1) <= domain {
        // One device to one device: a single link of a full mesh.
        true => nvlink * mesh_share(hw, 2),
        false => {
            (hw.inter_node_bytes_per_second * f64::from(plan.cluster.devices_per_node.get())).min(nvlink)
        }
    };
    let p2p_seconds = match pp {
        1 => 0.0,
        _ => hw.collective_latency_seconds + p2p_bytes / (p2p_bw * hw.collective_eff),
    };

    // RL trains on every sampled response: VeRL's batch counts prompts, each with n responses.
    let rl = matches!(plan.method, Method::Grpo | Method::Ppo);
    let m = match rl {
        true => mem.n_microbatches.saturating_mul(u64::from(plan.rl.n_samples_per_prompt.get())),
        false => mem.n_microbatches,
    };
    // Saturated, not truncated: 2^32 micro-batches or more take as long as 2^32 − 1 would, near enough.
    let m = u32::try_from(m).unwrap_or(u32::MAX);
    // Data parallel: gradients reduced (reduce-scatter with the distributed optimizer or ZeRO, then
    // parameters gathered), over the NIC unless the whole group sits in one node.
    let dp = mem.dp as f64;
    // Gradients are reduced, and optimizer states sharded, over the data- and context-parallel
    // ranks together (Megatron's `dp_cp_group`, megatron/core/distributed/distributed_data_parallel.py;
    // VeRL's FSDP mesh spans its Ulysses groups).
    let dp_cp = (mem.dp * cp) as f64;
    // Parameters this device computes with: ZeRO-3 shards (or offloads) what it stores, not what
    // it gathers, reduces and updates, so there the count comes from the model (HF frameworks run
    // without TP and PP, rule hf.no_model_parallel; the division keeps a stray plan sensible).
    let shards_params = match megatron {
        false => p.zero_stage == 3,
        true => matches!(p.fsdp, crate::plan::Fsdp::OptimGradsParams | crate::plan::Fsdp::Torch),
    };
    let params_on_device = match shards_params {
        true => mem.params_total as f64 / (tp * u64::from(p.pp.get())).max(1) as f64,
        false => mem.stages.iter().map(|s| s.params).max().unwrap_or(0) as f64,
    };
    let trainable_share = match plan.trains_lora() {
        true => mem.params_lora as f64 / mem.params_total.max(1) as f64,
        false => 1.0,
    };
    // Megatron reduces fp32 main gradients in bf16 training (`accumulate_allreduce_grads_in_fp32`
    // defaults on for bf16) and 16-bit gradients in fp16; DeepSpeed reduces 16-bit gradients.
    let grad_dtype_bytes = match (megatron, plan.precision) {
        (_, Precision::Fp32) => 4.0,
        (true, Precision::Bf16 | Precision::Fp8 | Precision::Mxfp8 | Precision::Nvfp4) => 4.0,
        _ => 2.0,
    };
    let grad_bytes = params_on_device * trainable_share * grad_dtype_bytes;
    // The data- and context-parallel peers sit tp ranks apart (Megatron's rank order: TP innermost, then CP, DP, PP).
    let dp_bw = group_bandwidth(hw, u64::from(plan.cluster.scale_up_domain.get()), mem.dp * cp, tp);
    let mut dp_seconds = ring_seconds_on(hw, grad_bytes, dp_cp, dp_bw, true);
    if shards_params {
        // ZeRO-3 and FSDP's parameter sharding gather the parameters for forward and backward:
        // 1.5× the all-reduce (ZeRO paper §7.2).
        dp_seconds *= 1.5;
    }
    if p.distributed_optimizer && p.overlap_param_gather {
        // The distributed optimizer reduce-scatters gradients and all-gathers parameters, half the
        // volume each; `--overlap-param-gather` hides the gather behind the next forward.
        dp_seconds *= 0.5;
    }
    if p.overlap_grad_reduce {
        // Overlapped with the last micro-batch's backward; what does not fit behind it shows.
        let last_backward = backward.iter().cloned().fold(0.0, f64::max);
        dp_seconds = (dp_seconds - last_backward).max(0.1 * dp_seconds);
    }
    // Optimizer: Adam reads and writes fp32 master weights, two moments and gradients, and writes
    // the 16-bit weights: about 18 bytes per parameter it owns (÷ dp when sharded).
    let sharded = p.distributed_optimizer || (!megatron && 1 <= p.zero_stage);
    let owned = params_on_device * trainable_share / if sharded { dp_cp } else { 1.0 };
    let optimizer_seconds = 18.0 * owned / (hw.memory_bytes_per_second * HBM_EFF);
    // Offload: optimizer states cross the host link twice a step.
    let offload_seconds = match p.offload_optimizer {
        true => 2.0 * 16.0 * owned / HOST_LINK_BYTES_PER_SECOND,
        false => 0.0,
    } + match crate::memory::swaps_optimizer(plan) {
        // MindSpeed swap-optimizer: the optimizer states (fp32 master weights and both moments, 12
        // bytes per owned parameter in bf16; memory::state_bytes) come in and go out once per step,
        // slice by slice, while AdamW runs.
        true => {
            2.0 * crate::memory::state_bytes(true, plan.precision).optimizer * owned
                / HOST_LINK_BYTES_PER_SECOND
        }
        false => 0.0,
    } + match p.offload_params && !megatron {
        // ZeRO-Infinity fetches each device's 16-bit parameter shard from the host for every
        // micro-batch's forward and again for its backward (DeepSpeed `offload_param`).
        true => 2.0 * 2.0 * params_on_device / dp_cp * m as f64 / HOST_LINK_BYTES_PER_SECOND,
        false => 0.0,
    };

    // RL updates the actor once per mini-batch of prompts (VeRL `ppo_mini_batch_size`,
    // MindSpeed-RL `mini_batch_size`): each update reduces gradients and steps the optimizer.
    let updates = match rl {
        true => {
            let global = plan.batch.global_batch.get();
            f64::from(global.div_ceil(plan.rl.mini_batch_prompts(global).clamp(1, global)))
        }
        false => 1.0,
    };
    let (dp_seconds, optimizer_seconds, offload_seconds) =
        (dp_seconds * updates, optimizer_seconds * updates, offload_seconds * updates);

    // No schedule beats its busiest rank running all its passes back to back: a lower bound on the
    // step that lets a search skip the simulation of a plan that cannot win.
    if let Some(limit) = limit_seconds {
        let slowest = (0..pp as usize)
            .map(|r| rank_seconds(&forward, &backward, &weight, vpp as usize, r))
            .fold(0.0, f64::max);
        let lower = f64::from(m) * slowest + dp_seconds + optimizer_seconds + offload_seconds;
        // A margin for rounding: the simulation adds the same durations in another order.
        if limit < lower * (1.0 - 1e-9) {
            return None;
        }
    }
    let costs = Costs {
        pp: pp as u32,
        vpp: vpp as u32,
        forward_seconds: forward,
        backward_seconds: backward,
        weight_seconds: weight,
        p2p_seconds,
    };
    let (forward, backward, weight) =
        (&costs.forward_seconds, &costs.backward_seconds, &costs.weight_seconds);
    let shape = pipeline_makespan(schedule_kind, m, &costs);
    let makespan = shape.makespan_seconds;
    let (rollout_seconds, log_prob_seconds) = match rl {
        true => rl_phases(&ctx, makespan),
        false => (0.0, 0.0),
    };
    let step_seconds =
        makespan + dp_seconds + optimizer_seconds + offload_seconds + rollout_seconds + log_prob_seconds;
    let n_devices = plan.cluster.n_devices() as f64;
    let samples = (m as f64) * b * dp;
    let tokens_per_step = samples * seq;
    let model_flops_per_step = model_flops_per_mb * ctx.tp * ctx.cp * samples / b;
    let hardware_flops_per_step =
        (model_flops_per_mb + recompute_flops_per_mb) * ctx.tp * ctx.cp * samples / b;
    let peak_all = ctx.peak * n_devices;

    // The busiest rank's causes over all micro-batches, then the step's own terms.
    let rank_busy = |r: usize| rank_seconds(forward, backward, weight, vpp as usize, r);
    let busiest = (0..pp as usize).max_by(|&a, &b| rank_busy(a).total_cmp(&rank_busy(b))).unwrap_or(0);
    let mf = m as f64;
    let r = &per_rank[busiest];
    let busy = rank_busy(busiest);
    // Sends and receives of each chunk's activations and gradients, as far as they lengthen the
    // pipeline beyond the busiest rank's work (the schedule hides the rest behind other passes).
    let idle = (makespan - busy * mf).max(0.0);
    let pp_comm = if 1 < pp { (2.0 * f64::from(vpp as u32) * p2p_seconds * mf).min(idle) } else { 0.0 };
    let breakdown = Breakdown {
        compute_seconds: r.compute_seconds * mf,
        memory_bound_seconds: r.memory_bound_seconds * mf,
        recompute_seconds: r.recompute_seconds * mf,
        tp_comm_seconds: r.tp_comm_seconds * mf,
        cp_comm_seconds: r.cp_comm_seconds * mf,
        ep_comm_seconds: r.ep_comm_seconds * mf,
        pp_comm_seconds: pp_comm,
        // The rest of the makespan: idle time, the sends above counted apart.
        bubble_seconds: idle - pp_comm,
        dp_comm_seconds: dp_seconds,
        optimizer_seconds,
        offload_seconds: offload_seconds + activation_offload_seconds * mf,
        rollout_seconds,
        log_prob_seconds,
    };

    Some(StepTime {
        step_seconds,
        tokens_per_second: tokens_per_step / step_seconds,
        tokens_per_second_per_device: tokens_per_step / step_seconds / n_devices,
        samples_per_second: samples / step_seconds,
        model_flops_per_step,
        hardware_flops_per_step,
        mfu_frac: model_flops_per_step / (step_seconds * peak_all),
        hfu_frac: hardware_flops_per_step / (step_seconds * peak_all),
        breakdown,
        bubble_ratio: shape.bubble_ratio,
        schedule: schedule_kind,
        idle_frac: shape.idle_frac,
        pipeline: Pipeline {
            schedule: schedule_kind,
            microbatches: shape.simulated_microbatches,
            n_microbatches: m,
            makespan_seconds: makespan,
            offload_seconds,
            costs,
        },
    })
}

/// What selective recomputation reruns in one layer's backward, as (seconds, FLOPs): each module
/// `--recompute-modules` names reruns its forward (Megatron-LM core_v0.19.0
/// `transformer_config.py` `recompute_modules`; Korthikanti et al. 2022 §5 for `core_attn`):
/// `core_attn` the attention core, `mlp` a dense layer's MLP GEMMs, `moe` an MoE layer's expert
/// GEMMs and its dispatch and combine, `layernorm` the two norms (a read and a write of h 16-bit
/// values each: 8 of the layer's [`ELEMENTWISE_BYTES_PER_TOKEN_HIDDEN`]). `moe_act`, `mla_up_proj`
/// and `shared_experts` rerun small or uncounted kernels and add nothing here (docs/time.md).
fn selective_rerun(plan: &Plan, l: &LayerWork) -> (f64, f64) {
    let modules = memory::recompute_modules(plan);
    let mut res = (0.0, 0.0);
    if modules.core_attn {
        res = (l.attention_seconds, l.attention_flops);
    }
    let mlp = (!l.moe_layer && modules.mlp) || (l.moe_layer && modules.moe);
    if mlp {
        res.0 += l.mlp_gemm_seconds + l.ep_seconds;
        res.1 += l.mlp_flops;
    }
    if modules.layernorm {
        res.0 += l.memory_seconds * 8.0 / ELEMENTWISE_BYTES_PER_TOKEN_HIDDEN;
    }
    res
}

/// Days to train `tokens` at the plan's throughput.
pub fn days_to_train(time: &StepTime, tokens: f64) -> f64 {
    tokens / time.tokens_per_second / 86_400.0
}
