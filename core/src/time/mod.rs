//! Step time, throughput and FLOPs utilization: per-layer FLOPs at a size-dependent efficiency,
//! memory-bound work at HBM bandwidth, collectives by placement, the pipeline schedule simulated,
//! the data-parallel tail and the optimizer step. docs/time.md derives every term.

use crate::hardware::Hardware;
use crate::knobs::Effective;
use crate::memory;
use crate::model::Architecture;
use crate::plan::{Framework, Method, Plan, Precision};
use crate::schedule::{self, Costs, Schedule, Timeline};

mod comm;
mod gemm;
mod layer;
mod moe;
mod passes;
mod pipeline;
mod rl;
mod sharded;
mod tail;
mod ulysses;

pub use comm::ring_seconds_on;
pub use gemm::{gemm_efficiency, gemm_efficiency_on, peak_flops};
use pipeline::{SIMULATED_PASSES_MAX, busiest_rank, pipeline_makespan, simulated_passes};
pub use pipeline::{makespan_bound, schedule_of, uniform_makespan};

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
/// Host memory bandwidth a device's process gets, bytes/s. Tier: derived (a DGX H100 has two Xeon
/// Platinum 8480C for its eight GPUs, NVIDIA DGX H100 user guide; each has eight DDR5-4800 channels,
/// Intel's specification, 8 × 4,800 MT/s × 8 bytes = 307.2 GB/s a socket, four GPUs' share each:
/// 76.8 GB/s, of which streaming kernels reach about 80 %, as on HBM).
pub const HOST_MEMORY_BYTES_PER_SECOND: f64 = 61.44e9;
/// Host memory traffic of one fp32 parameter's AdamW step on the CPU, bytes. Tier: derived
/// (PyTorch 2.11.0 `_single_tensor_adam`, torch/optim/adam.py: the foreach and fused kernels serve
/// no CPU tensor, `_get_foreach_kernels_supported_devices`; its passes over the parameter `p`,
/// gradient `g` and moments `m`, `v`, 4 bytes an element each: `p.mul_` 8, `m.lerp_(g)` 12,
/// `v.mul_` 8, `v.addcmul_(g, g)` 12, `v.sqrt()` 8, its division 8, `add_(eps)` 8,
/// `p.addcdiv_(m, denom)` 16, and gradient clipping's norm and scaling 12: `clip_grad_norm_`).
pub const CPU_ADAMW_BYTES_PER_PARAM: f64 = 92.0;
/// Host memory traffic of one fp32 parameter's step in a fused CPU Adam, bytes: DeepSpeed's CPU
/// Adam, which steps the optimizer wherever DeepSpeed offloads it (to host memory or to NVMe), and
/// PyTorch's fused AdamW on CPU tensors, which Megatron's `--optimizer-cpu-offload` steps
/// (`HybridDeviceOptimizer` with `torch.optim.AdamW(fused=True)`, megatron/core/optimizer/
/// __init__.py). Tier: derived (`Adam_Optimizer::Step_AVX`, deepspeedai/DeepSpeed
/// csrc/includes/cpu_adam.h: it loads the gradient, both moments and the parameter and stores the
/// parameter and both moments, 4 bytes an element each, in one pass, as PyTorch's fused kernel
/// does; the gradients' norm is taken on the device as they are reduced).
pub const FUSED_CPU_ADAM_BYTES_PER_PARAM: f64 = 28.0;
/// Bytes of 16-bit elementwise traffic per token and hidden unit in one layer's forward (norms,
/// residual adds, bias/activation/dropout kernels, rotary): each reads and writes h-wide tensors.
/// Tier: derived from the kernels Megatron runs per layer (about 12 reads/writes of 2-byte tensors).
pub const ELEMENTWISE_BYTES_PER_TOKEN_HIDDEN: f64 = 24.0;
/// Fixed cost of one all-reduce of a decode step inside an NVIDIA node, seconds (vLLM's custom
/// all-reduce for TP, latency-bound at decode's small messages). Tier: derived: the mean of vLLM's
/// six measurements at 512 B and 4 KiB over TP 2, 4 and 8 on H100 (9.5, 9.1, 10.1, 8.8, 8.5 and
/// 9.3 µs; sgl-project/sglang pull request 2904, without CUDA graphs).
pub const DECODE_ALL_REDUCE_LATENCY_SECONDS: f64 = 9.2e-6;
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
/// Bytes per token and normalized unit of HF's eager RMSNorm. Tier: derived: counted from
/// transformers' `LlamaRMSNorm.forward`: `to(float32)` 2 + 4, `pow` 4 + 4, `mean` 4, the product
/// with `rsqrt` 4 + 4, `to(input_dtype)` 4 + 2, the weight's product 2 + 2.
pub const HF_RMSNORM_BYTES_PER_TOKEN_UNIT: f64 = 36.0;
/// Bytes per token and hidden unit of one layer's forward through HF's eager modules, where a
/// fused-kernel layer moves [`ELEMENTWISE_BYTES_PER_TOKEN_HIDDEN`]: two RMSNorms and two residual
/// adds (2 + 2 + 2 each): 2 · 36 + 2 · 6. Tier: derived: counted from transformers'
/// `LlamaDecoderLayer.forward`.
pub const HF_EAGER_BYTES_PER_TOKEN_HIDDEN: f64 = 84.0;
/// Bytes per token and rotated query/key unit of HF's eager rotary embedding (`q * cos +
/// rotate_half(q) * sin`: 2 + 2, the half negated 1 + 1 and concatenated 2 + 2, 2 + 2, the sum
/// 4 + 2). Tier: derived: counted from `apply_rotary_pos_emb` in transformers' `modeling_llama.py`.
pub const HF_EAGER_BYTES_PER_TOKEN_QK: f64 = 20.0;
/// Bytes per token and query unit of the attention's output made contiguous for `o_proj`
/// (`attn_output.transpose(1, 2).contiguous()`: 2 + 2). Tier: derived: transformers'
/// `sdpa_attention_forward`.
pub const HF_EAGER_BYTES_PER_TOKEN_Q: f64 = 4.0;
/// Bytes per token and MLP intermediate unit of HF's eager SwiGLU (`act_fn(gate) * up`: `silu`
/// 2 + 2, the product 4 + 2). Tier: derived: counted from `LlamaMLP.forward`.
pub const HF_EAGER_BYTES_PER_TOKEN_FFN: f64 = 10.0;
/// Bytes per token and unit of (in + out) of a LoRA-wrapped linear layer's forward under PEFT:
/// `lora_B`'s output scaled (2 + 2) and added to the base's (4 + 2), 10 per output unit, the
/// outputs being about half the units: 5. Tier: derived: counted from PEFT `tuners/lora/layer.py`
/// `Linear.forward`.
pub const LORA_BYTES_PER_TOKEN_UNIT: f64 = 5.0;
/// The same with fp32 adapters under autocast (plain PyTorch: LLaMA-Factory casts trainable
/// parameters to fp32; DeepSpeed casts the whole module to 16 bits): the input is also cast to the
/// adapter's dtype (2 + 4) and back to 16 bits by autocast (4 + 2), 12 per input unit; 11 per unit
/// of the two together. Tier: derived: PEFT `Linear.forward` (`_cast_input_dtype`).
pub const LORA_FP32_BYTES_PER_TOKEN_UNIT: f64 = 11.0;
/// Bytes per token and output unit of DoRA's rescaling in forward with 16-bit adapters and
/// magnitudes (a DeepSpeed engine casts the model): `(m − 1) · base_result` (2 + 2),
/// `m · lora_result` (2 + 2), `· scaling` (2 + 2), their sum (4 + 2), added to the base's output
/// (4 + 2). Tier: derived: counted from PEFT 0.18.1 `tuners/lora/dora.py` `DoraLinearLayer.forward`.
pub const DORA_BYTES_PER_TOKEN_OUTPUT: f64 = 24.0;
/// The same with fp32 magnitudes under autocast (plain PyTorch): each product with the fp32
/// magnitude writes fp32 (2 + 4 twice), the scaling (4 + 4), the sum (8 + 4), the add to the
/// 16-bit output (2 + 4 + 4), and PEFT casts the module's output back to 16 bits (4 + 2,
/// `Linear.forward`: `result.to(torch_result_dtype)`). Tier: derived.
pub const DORA_FP32_BYTES_PER_TOKEN_OUTPUT: f64 = 48.0;
/// Bytes per weight element DoRA's norm moves every forward with 16-bit adapters, whatever the
/// tokens: the adapter's weight written by `lora_B(lora_A(x_eye))` (2), scaled (2 + 2), added to
/// the base weight (2 + 2 + 2) and its rows' norms read (2). Tier: derived: PEFT 0.18.1 `dora.py`
/// (`forward`, `get_weight_norm`).
pub const DORA_NORM_BYTES_PER_WEIGHT: f64 = 14.0;
/// The same with fp32 adapters under autocast, whose input PEFT casts to fp32: the base weight
/// copied to fp32 (2 + 4), the adapter's weight written (2) and scaled (2 + 2), the fp32 sum
/// (4 + 2 + 4) and its norms read (4). Tier: derived.
pub const DORA_FP32_NORM_BYTES_PER_WEIGHT: f64 = 26.0;
/// Bytes per element of the in × in identity DoRA multiplies through the adapter every forward
/// with 16-bit adapters (`torch.eye` written, then read by `lora_A`: 2 + 2). Tier: derived: PEFT
/// 0.18.1 `dora.py`.
pub const DORA_IDENTITY_BYTES_PER_ELEMENT: f64 = 4.0;
/// The same with fp32 adapters under autocast: the fp32 identity written (4), autocast's 16-bit
/// copy made (4 + 2) and read by `lora_A` (2). Tier: derived.
pub const DORA_FP32_IDENTITY_BYTES_PER_ELEMENT: f64 = 12.0;
/// Bytes per token and normalized unit of Liger's fused RMSNorm (`liger_kernel/ops/rms_norm.py`:
/// one kernel reads the 16-bit input and writes the output, 2 + 2; the per-row `rstd` it caches is
/// negligible). Tier: derived: counted from the kernel.
pub const LIGER_RMSNORM_BYTES_PER_TOKEN_UNIT: f64 = 4.0;
/// Bytes per token and rotated query/key unit of Liger's rotary embedding
/// (`liger_kernel/ops/rope.py`: q and k read and written in place, 2 + 2). Tier: derived.
pub const LIGER_ROPE_BYTES_PER_TOKEN_QK: f64 = 4.0;
/// Bytes per token and MLP intermediate unit of Liger's SwiGLU (`liger_kernel/ops/swiglu.py`:
/// gate and up read, the product written, 2 + 2 + 2). Tier: derived.
pub const LIGER_SWIGLU_BYTES_PER_TOKEN_FFN: f64 = 6.0;
/// Bytes per logit and pass of Liger's fused linear cross entropy
/// (`liger_kernel/ops/fused_linear_cross_entropy.py`): each chunk's 16-bit logits written by the
/// matmul (2), read by the cross-entropy kernel's online softmax (2), then read and overwritten with
/// their gradient (2 + 2), all in forward; backward reads no logit: 8 a logit, 4 a pass. Tier:
/// derived: counted from `liger_cross_entropy_kernel`.
pub const LIGER_FLCE_BYTES_PER_LOGIT_PASS: f64 = 4.0;
/// Bytes per fp32 parameter autocast moves to give a forward its 16-bit copy (4 read, 2 written),
/// and the backward its gradient's fp32 cast (2 read, 4 written). Tier: spec (the dtypes).
pub const AUTOCAST_CAST_BYTES_PER_PARAM: f64 = 6.0;
/// Bytes per 4-bit parameter bitsandbytes moves to dequantize a QLoRA base weight for one pass: the
/// packed NF4 read (0.5) and its 16-bit copy written (2), the block scales (one 8-bit scale per 64
/// parameters under double quantization) left out. Training takes this path in forward and in
/// backward (bitsandbytes 0.50.2 `MatMul4Bit`: `F.dequantize_4bit` then a 16-bit matmul for the
/// input gradient; the forward's `gemm_4bit` dequantizes and calls `F.linear` past a few hundred
/// tokens a micro-batch, `backends/cuda/ops.py` `_gemm_4bit_use_custom_cuda`). Tier: derived.
pub const DEQUANT_4BIT_BYTES_PER_PARAM: f64 = 2.5;
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
    /// Micro-batches the timeline runs: the step's, at most two per stage where the closed form
    /// holds and three where the schedule is simulated (the steady state beyond repeats).
    pub microbatches: u32,
    /// Micro-batches the step's pipeline runs (with RL, one per response).
    pub n_microbatches: u32,
    /// The pipeline's time in the step: its makespan over all `n_microbatches`.
    pub makespan_seconds: f64,
    /// The step's host transfers after the pipeline (offloaded optimizer states and parameters;
    /// offloaded activations are part of the passes).
    pub offload_seconds: f64,
    /// The step's data-parallel reduction after the pipeline (where the HF path reduces after every
    /// micro-batch, what the step's end adds; the rest is part of the passes).
    pub gradient_sync_seconds: f64,
}

impl StepTime {
    /// Pipeline ranks the schedule runs on (the whole timeline's lanes).
    pub fn pipeline_ranks(&self) -> u32 {
        self.pipeline.costs.pp
    }

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
    /// Past `DRAWN_PASSES_MAX` passes, the first micro-batches that fit are simulated and
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
                (true, true) => schedule::cached_to_draw(p.schedule, pp, vpp, m_drawn)
                    .map(|program| program.timeline(&p.costs)),
                _ => None,
            };
        let steps = [
            (StepPart::Rollout, b.rollout_seconds),
            (StepPart::LogProb, b.log_prob_seconds),
            (StepPart::Critic, b.critic_seconds),
            (StepPart::Pipeline, p.makespan_seconds),
            (StepPart::GradientSync, p.gradient_sync_seconds),
            (StepPart::Optimizer, b.optimizer_seconds),
            (StepPart::Offload, p.offload_seconds),
            (StepPart::WeightSync, b.weight_sync_seconds),
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
    /// PPO: the critic's values of the responses and its update.
    Critic,
    /// The training pipeline's forward and backward passes (with RL, the actor's update).
    Pipeline,
    /// Data-parallel gradient reduction not hidden behind the backward.
    GradientSync,
    /// The optimizer step.
    Optimizer,
    /// Offloaded states crossing the host link.
    Offload,
    /// RL: the trained weights handed to the rollout engine for the next step's generation.
    WeightSync,
}

/// Seconds of a step by cause, on the slowest pipeline stage's critical path (the report's `time.breakdown`).
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
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
    /// Pipeline bubble: the busiest stage's idle time, what the bubble adds to the step.
    pub bubble_seconds: f64,
    /// Data-parallel gradient reduction (and ZeRO-3 gathers) not hidden.
    pub dp_comm_seconds: f64,
    /// Optimizer step.
    pub optimizer_seconds: f64,
    /// Host transfers for offloaded states.
    pub offload_seconds: f64,
    /// RL: generating the responses (prefill and decode in the rollout engine).
    pub rollout_seconds: f64,
    /// RL: log-probabilities of the responses under the actor and the reference; DPO: under the
    /// frozen reference.
    pub log_prob_seconds: f64,
    /// PPO: the critic's values of the responses and its update, the actor's again (docs/time.md,
    /// "RL").
    pub critic_seconds: f64,
    /// RL: the trained weights handed to the rollout engine (VeRL's `update_weights`, MindSpeed-RL's
    /// resharding).
    pub weight_sync_seconds: f64,
}

/// What every phase of the estimate reads: the plan (its effective settings), the device, and the
/// sizes one device works at.
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
    /// Whether the plan trains by RL (GRPO, PPO): generation first, every response trained on.
    rl: bool,
    /// Whether the plan trains by PPO: a critic trained beside the actor ([`rl::critic_seconds`]).
    ppo: bool,
    /// RL: the reference's scoring, where the plan runs one ([`memory::runs_reference`]): the
    /// seconds its forwards take to bring their weights from the host, where they live there (VeRL's
    /// FSDP engine, [`rl::reference_stream_seconds`]), and to move them in and out around its pass
    /// (VeRL's Megatron engine, [`rl::reference_switch_seconds`]).
    reference: Option<(f64, f64)>,
    /// LLaMA-Factory's and VeRL's HF modules, eager: their elementwise traffic ([`HfEager`]), `None`
    /// elsewhere.
    hf_eager: Option<HfEager>,
    tp: f64,
    cp: f64,
    ep: f64,
    /// Sequences per micro-batch (DPO's pairs two each: [`memory::sequences_per_sample`]).
    micro_batch: f64,
    /// Whether the plan trains by DPO: a forward of the frozen reference over each micro-batch.
    dpo: bool,
    /// Tokens one device holds of a micro-batch (its sequence share under CP).
    tokens: f64,
    seq: f64,
}

impl<'a> Ctx<'a> {
    /// The context of `plan` (its effective settings) with its memory's layout.
    fn new(plan: &'a Plan, mem: &memory::Memory) -> Self {
        let hw = &plan.hardware.hw;
        let layout = &mem.layout;
        let (tp, cp, ep) = (layout.tp, layout.cp, layout.ep);
        let rl = matches!(plan.method, Method::Grpo | Method::Ppo);
        // Sequences a micro-batch holds: the plan's micro-batch, or where the micro-batches are
        // packed by tokens, their share of the responses on average (the memory's count,
        // `memory::packed_microbatches`).
        let b = match memory::packs_microbatches(plan) {
            true => memory::step_samples(plan) as f64 / (layout.dp.max(1) * mem.n_microbatches.max(1)) as f64,
            false => {
                f64::from(plan.batch.micro_batch.get()) * memory::sequences_per_sample(plan.method) as f64
            }
        };
        // RL trains on each prompt and its response, at their mean length once padding is removed
        // (`Rl::trained_sequence_tokens`); LLaMA-Factory's SFT each sample at its own
        // length at micro-batch 1 (`Batch::trained_seq_len`). Memory keeps the longest, which
        // any batch may reach.
        let seq = match rl {
            true => f64::from(plan.rl.trained_sequence_tokens()),
            false => f64::from(plan.batch.trained_seq_len()),
        };
        Ctx {
            plan,
            active_params: mem.params_active as f64,
            arch: &plan.model.arch,
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
            rl,
            ppo: plan.method == Method::Ppo,
            reference: memory::runs_reference(plan)
                .then(|| (rl::reference_stream_seconds(plan, mem), rl::reference_switch_seconds(plan, mem))),
            hf_eager: HfEager::of(plan, mem),
            tp: tp as f64,
            cp: cp as f64,
            ep: ep as f64,
            micro_batch: b,
            dpo: plan.method.is_dpo(),
            tokens: b * seq / cp as f64,
            seq,
        }
    }
}

/// What HF's modules move through memory beyond fused kernels' traffic, in LLaMA-Factory and in
/// VeRL's FSDP actor (neither fuses them unless told: LLaMA-Factory `enable_liger_kernel`, which
/// the plan's `liger_kernel` sets, VeRL `use_liger`, both off by default): they run as eager
/// PyTorch operators (transformers'
/// `modeling_llama.py` and its copies: `LlamaRMSNorm`, `apply_rotary_pos_emb`,
/// `act_fn(gate_proj(x)) * up_proj(x)`), PEFT's adapters add theirs, and without DeepSpeed (plain
/// PyTorch, `memory::plain_torch`) so do autocast's weight casts.
#[derive(Clone, Copy, Debug)]
struct HfEager {
    /// Σ (in + out) of the linear layers LoRA adapters wrap, per layer (none in the routed experts,
    /// [`HfEager::of`]); 0 without LoRA.
    lora_units_per_layer: f64,
    /// Bytes per token and unit of them: [`LORA_FP32_BYTES_PER_TOKEN_UNIT`] under plain PyTorch
    /// (fp32 adapters), else [`LORA_BYTES_PER_TOKEN_UNIT`].
    lora_bytes_per_unit: f64,
    /// DoRA's bytes per token, per layer: its rescaling over the adapted output widths
    /// ([`DORA_BYTES_PER_TOKEN_OUTPUT`], [`DORA_FP32_BYTES_PER_TOKEN_OUTPUT`]); 0 without DoRA.
    dora_bytes_per_token: f64,
    /// DoRA's bytes per forward, per layer, whatever the tokens: its norms
    /// ([`DORA_NORM_BYTES_PER_WEIGHT`], [`DORA_IDENTITY_BYTES_PER_ELEMENT`], or their fp32 forms).
    dora_bytes_per_forward: f64,
    /// Σ in × out of the adapted modules per layer, where DoRA runs the base again on the dropped
    /// input (a LoRA dropout above 0: `DoraLinearVariant.forward` passes no `base_result`); else 0.
    dora_rerun_weights: f64,
    /// Whether autocast casts fp32 weights to 16 bits each forward (plain PyTorch full
    /// fine-tuning in bf16 or fp16).
    casts_weights: bool,
    /// Whether Liger's kernels replace the norms, the rotary embedding and SwiGLU
    /// ([`memory::liger`]).
    liger: bool,
}

impl HfEager {
    fn of(plan: &Plan, mem: &memory::Memory) -> Option<HfEager> {
        if !matches!(plan.framework, Framework::LlamaFactory | Framework::Verl) {
            return None;
        }
        // fp32 trainable parameters under autocast: plain PyTorch without `pure_bf16`.
        let fp32 = memory::fp32_trainables(plan);
        // LoRA's parameters over its rank: Σ (in + out) of the layers PEFT wraps, none a routed
        // expert under transformers 5 ([`model::LoraScope::Hf`]), so every adapter sees every token.
        let lora_units_per_layer = match plan.trains_lora() {
            true => {
                mem.params_lora as f64
                    / (f64::from(plan.lora.rank.get()) * plan.model.arch.n_layers.max(1) as f64)
            }
            false => 0.0,
        };
        // Freeze-tuning's trained layers are fp32 too (its frozen ones are not: `passes`).
        let casts_weights = fp32 && !plan.trains_lora() && plan.precision != Precision::Fp32;
        let lora_bytes_per_unit =
            if fp32 { LORA_FP32_BYTES_PER_TOKEN_UNIT } else { LORA_BYTES_PER_TOKEN_UNIT };
        // Counted only where the plan trains DoRA: the model's facts are not read otherwise.
        let dora = match plan.lora.dora && plan.trains_lora() {
            true => memory::dora_of(plan, &memory::ModelFacts::recent(plan)),
            false => crate::model::DoraShape::default(),
        };
        let layers = plan.model.arch.n_layers.max(1) as f64;
        // DoRA's path replaces the plain adapter's output side: its output scaled and added to the
        // base's, 10 bytes an output unit (twice `LORA_BYTES_PER_TOKEN_UNIT`, a unit of in + out).
        let per_output = if fp32 { DORA_FP32_BYTES_PER_TOKEN_OUTPUT } else { DORA_BYTES_PER_TOKEN_OUTPUT }
            - 2.0 * LORA_BYTES_PER_TOKEN_UNIT;
        let (per_weight, per_square) = match fp32 {
            true => (DORA_FP32_NORM_BYTES_PER_WEIGHT, DORA_FP32_IDENTITY_BYTES_PER_ELEMENT),
            false => (DORA_NORM_BYTES_PER_WEIGHT, DORA_IDENTITY_BYTES_PER_ELEMENT),
        };
        // With a dropout under autocast, the base's second run casts that fp32 weight copy back to
        // 16 bits for its GEMM.
        let recast = if fp32 && 0.0 < plan.lora.dropout { AUTOCAST_CAST_BYTES_PER_PARAM } else { 0.0 };
        // QLoRA's 4-bit base is dequantized once more for the norms (`dequantize_module_weight`).
        let dequantize = if plan.method == Method::Qlora { DEQUANT_4BIT_BYTES_PER_PARAM } else { 0.0 };
        let norms =
            (per_weight + recast + dequantize) * dora.weights as f64 + per_square * dora.squares as f64;
        Some(HfEager {
            lora_units_per_layer,
            lora_bytes_per_unit,
            dora_bytes_per_token: per_output * dora.outputs as f64 / layers,
            dora_bytes_per_forward: norms / layers,
            dora_rerun_weights: if 0.0 < plan.lora.dropout { dora.weights as f64 / layers } else { 0.0 },
            casts_weights,
            liger: memory::liger(plan),
        })
    }
}

/// The first bound [`estimate_within`] checks: every micro-batch's decoder layers on the average
/// rank, back to back, and with RL the rollout and the scoring that pipeline implies. No step is
/// shorter; a search works it out while the plan's memory is fresh and compares it with its limit
/// ([`rules_out`]) before reading the plan again.
pub fn layer_bound_seconds(plan: &Effective, mem: &memory::Memory) -> f64 {
    let plan: &Plan = plan;
    let ctx = Ctx::new(plan, mem);
    let rollout =
        if ctx.rl { rl::rollout_seconds(&ctx, mem) + rl::weight_sync_seconds(&ctx, mem) } else { 0.0 };
    let m = pipeline::microbatches(mem);
    let layers = layer_bound(&ctx, mem, m);
    // Where ZeRO or FSDP moves its states every micro-batch, no rank's passes are shorter than
    // that traffic (`sharded.rs`); the scoring stays the layers' (it gathers once and reduces
    // nothing, so the traffic would overstate it).
    let traffic = f64::from(m) * sharded::least_per_microbatch(&ctx, mem);
    step_bound(&ctx, layers, rollout) + (traffic - layers).max(0.0)
}

/// The average rank's decoder layers for `m` micro-batches, back to back: no pipeline is shorter.
fn layer_bound(ctx: &Ctx, mem: &memory::Memory, m: u32) -> f64 {
    f64::from(m) * passes::mean_rank_layer_seconds(ctx, mem)
}

/// A step no shorter than a pipeline of `makespan_bound` seconds, with RL after its `rollout` (and
/// the weights' hand-over to it) and the scoring such a pipeline implies ([`rl::log_prob_seconds`] grows with the makespan).
fn step_bound(ctx: &Ctx, makespan_bound: f64, rollout: f64) -> f64 {
    makespan_bound
        + rollout
        + scoring_seconds(ctx, makespan_bound)
        + rl::critic_seconds(ctx, makespan_bound, 0.0, makespan_bound)
}

/// What PPO's critic adds after its update's pipeline: the update's gradient reduction and optimizer
/// step, as the actor's, and the host moves where VeRL offloads it as the actor (the launch file
/// gives `critic.fsdp.param_offload` and `optimizer_offload` the actor's values), and MindSpeed-RL's
/// critic worker's own moves, which it makes whatever the launch file says
/// ([`tail::mindspeed_rl_critic_offload_seconds`]).
fn critic_tail(ctx: &Ctx, mem: &memory::Memory, tail: &tail::StepTail) -> f64 {
    let offload = match ctx.plan.framework.is_verl() {
        true => tail.offload_seconds,
        false => tail::mindspeed_rl_critic_offload_seconds(ctx, mem),
    };
    tail.dp_seconds + tail.optimizer_seconds + offload
}

/// The log-probability passes beside the training's pipeline of `makespan` seconds: RL's actor and
/// reference ([`rl::log_prob_seconds`]); DPO's frozen reference over the same chosen and rejected
/// sequences, one forward, about a third of their training passes (LLaMA-Factory
/// `CustomDPOTrainer.compute_reference_log_probs`, under `torch.no_grad()`; MindSpeed-LLM's
/// `DPOModel` runs the reference beside the policy); none otherwise.
fn scoring_seconds(ctx: &Ctx, makespan: f64) -> f64 {
    match (ctx.rl, ctx.dpo) {
        (true, _) => rl::log_prob_seconds(makespan, ctx.reference),
        (false, true) => makespan / 3.0,
        (false, false) => 0.0,
    }
}

/// Whether a lower bound on a step rules it out under `limit`: with a margin for rounding, as the
/// simulation adds the same durations in another order.
pub fn rules_out(limit: f64, bound_seconds: f64) -> bool {
    limit < bound_seconds * (1.0 - 1e-9)
}

/// Estimates a plan's step.
pub fn estimate(plan: &Plan, mem: &memory::Memory) -> StepTime {
    estimate_effective(&crate::knobs::effective(plan), mem)
}

/// [`estimate`] of the plan as its framework runs it, for a caller that made it once for the
/// plan's memory too ([`crate::knobs::effective`]).
pub fn estimate_effective(plan: &Effective, mem: &memory::Memory) -> StepTime {
    estimate_within(plan, mem, None).expect("without a limit there is always an estimate")
}

/// [`estimate`] of the plan as its framework runs it (settings it has no flag for play no part:
/// [`crate::knobs::effective`], made once for its memory and its time), or `None` when the step
/// provably takes longer than `limit_seconds`: two bounds,
/// the average rank's decoder layers back to back (before each stage's passes are worked out) and
/// every pass of the busiest rank back to back plus the step's own terms (before the schedule is
/// simulated), each with RL's rollout and the scoring it implies (`step_bound`).
///
/// The phases in turn: each virtual stage's passes for one micro-batch (`passes.rs`, from one
/// layer's work in `layer.rs` and `moe.rs`), the sends between stages (`comm.rs`), the tail after
/// the pipeline (`tail.rs`), the pipeline's makespan (`pipeline.rs`) and with RL the generation
/// and scoring before it (`rl.rs`).
pub fn estimate_within(
    plan: &Effective,
    mem: &memory::Memory,
    limit_seconds: Option<f64>,
) -> Option<StepTime> {
    let ctx = Ctx::new(plan, mem);
    let layout = &mem.layout;
    let m = pipeline::microbatches(mem);
    // RL's generation first, and the weights' hand-over to it: neither depends on the training's
    // pipeline, and both bound the step.
    let rollout_seconds = if ctx.rl { rl::rollout_seconds(&ctx, mem) } else { 0.0 };
    let weight_sync_seconds = rl::weight_sync_seconds(&ctx, mem);
    let rl_fixed = rollout_seconds + weight_sync_seconds;
    // A first bound, before each stage's passes are worked out: the average rank's layers.
    if limit_seconds
        .is_some_and(|limit| rules_out(limit, step_bound(&ctx, layer_bound(&ctx, mem, m), rl_fixed)))
    {
        return None;
    }
    let mut passes = passes::pass_costs(&ctx, mem);
    // Each micro-batch's gathers and reduction where ZeRO or FSDP shards them (`sharded.rs`).
    let floored = sharded::floored(&ctx, mem, &mut passes.lists);
    // The scoring forwards gather the parameters once each and reduce nothing: without a pipeline
    // they scale with the passes before the traffic, or with the gathers where longer.
    let scoring_basis = |makespan: f64| match floored.moved {
        true => floored.scoring_basis * f64::from(m),
        false => makespan,
    };
    let costs =
        Costs::from_lists(layout.pp as u32, layout.chunks as u32, passes.lists, comm::p2p_seconds(&ctx, mem));
    let tail = tail::step_tail(&ctx, mem, costs.backward(), m, floored.moved.then_some(floored.per_update));
    let (busiest, slowest) = busiest_rank(&costs);
    // No schedule beats its ranks' fill, work and drain (`pipeline::makespan_bound`): a lower bound
    // on the step that lets a search skip the simulation of a plan that cannot win.
    if let Some(limit) = limit_seconds {
        let tail_seconds = tail.dp_seconds + tail.optimizer_seconds + tail.offload_seconds;
        let makespan_bound = makespan_bound(layout.schedule, m, &costs);
        let lower = makespan_bound
            + rl_fixed
            + scoring_seconds(&ctx, scoring_basis(makespan_bound))
            + tail_seconds
            + rl::critic_seconds(
                &ctx,
                makespan_bound,
                critic_tail(&ctx, mem, &tail),
                scoring_basis(makespan_bound),
            );
        if rules_out(limit, lower) {
            return None;
        }
    }
    let schedule_kind = layout.schedule;
    let shape = pipeline_makespan(schedule_kind, m, &costs, slowest);
    let makespan = shape.makespan_seconds;
    let log_prob_seconds = scoring_seconds(&ctx, scoring_basis(makespan));
    let critic_seconds =
        rl::critic_seconds(&ctx, makespan, critic_tail(&ctx, mem, &tail), scoring_basis(makespan));
    let step_seconds = makespan
        + tail.dp_seconds
        + tail.optimizer_seconds
        + tail.offload_seconds
        + rollout_seconds
        + log_prob_seconds
        + critic_seconds
        + weight_sync_seconds;
    let n_devices = plan.cluster.n_devices() as f64;
    // Every device's micro-batches, each of `micro_batch` sequences: a sample is a prompt, a
    // response, or DPO's pair of two; the tokens are every sequence's.
    let microbatches = f64::from(m) * mem.dp as f64;
    let samples = microbatches * ctx.micro_batch / memory::sequences_per_sample(plan.method) as f64;
    let tokens_per_step = microbatches * ctx.micro_batch * ctx.seq;
    // PPO's critic trains the actor's passes again ([`rl::critic_seconds`]): its FLOPs count too.
    let trained = if ctx.ppo { 2.0 } else { 1.0 };
    let model_flops_per_step = trained * passes.model_flops_per_mb * ctx.tp * ctx.cp * microbatches;
    let hardware_flops_per_step = trained
        * (passes.model_flops_per_mb + passes.recompute_flops_per_mb + passes.hardware_extra_flops_per_mb)
        * ctx.tp
        * ctx.cp
        * microbatches;
    let peak_all = ctx.peak * n_devices;
    let breakdown = Breakdown {
        rollout_seconds,
        log_prob_seconds,
        critic_seconds,
        weight_sync_seconds,
        ..pipeline_breakdown(
            &costs,
            (busiest, slowest),
            |rank| passes.causes.of_rank(ctx.arch, layout, rank),
            (passes.activation_offload_seconds, floored.added),
            &tail,
            m,
            makespan,
        )
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
            offload_seconds: tail.offload_seconds,
            gradient_sync_seconds: tail.dp_seconds,
            costs,
        },
    })
}

/// The step's time by cause but RL's phases: the busiest rank's causes over all `m` micro-batches
/// (`busiest`, its seconds and `rank_causes` for one micro-batch; per micro-batch too, activation
/// offloading's host transfers and the data-parallel traffic the passes could not hide), the sends
/// and the bubble of the pipeline's `makespan`, then the step's own terms.
fn pipeline_breakdown(
    costs: &Costs,
    (busiest, busy): (usize, f64),
    rank_causes: impl FnOnce(u64) -> Breakdown,
    (activation_offload_seconds, dp_per_microbatch): (f64, f64),
    tail: &tail::StepTail,
    m: u32,
    makespan: f64,
) -> Breakdown {
    let (pp, vpp) = (costs.pp, costs.vpp);
    let mf = m as f64;
    let r = &rank_causes(busiest as u64);
    // Sends and receives of each chunk's activations and gradients, as far as they lengthen the
    // pipeline beyond the busiest rank's work (the schedule hides the rest behind other passes).
    let idle = (makespan - busy * mf).max(0.0);
    let pp_comm = if 1 < pp { (2.0 * f64::from(vpp) * costs.p2p_seconds * mf).min(idle) } else { 0.0 };
    Breakdown {
        compute_seconds: r.compute_seconds * mf,
        memory_bound_seconds: r.memory_bound_seconds * mf,
        recompute_seconds: r.recompute_seconds * mf,
        tp_comm_seconds: r.tp_comm_seconds * mf,
        cp_comm_seconds: r.cp_comm_seconds * mf,
        ep_comm_seconds: r.ep_comm_seconds * mf,
        pp_comm_seconds: pp_comm,
        // The rest of the makespan: idle time, the sends above counted apart.
        bubble_seconds: idle - pp_comm,
        dp_comm_seconds: tail.dp_seconds + dp_per_microbatch * mf,
        optimizer_seconds: tail.optimizer_seconds,
        offload_seconds: tail.offload_seconds + activation_offload_seconds * mf,
        ..Breakdown::default()
    }
}

/// Days to train `tokens` at the plan's throughput.
pub fn days_to_train(time: &StepTime, tokens: f64) -> f64 {
    tokens / time.tokens_per_second / 86_400.0
}

#[cfg(test)]
mod tests {
    use super::*;

    /// PEFT wraps q, k, v and o of Qwen3-30B-A3B under LLaMA-Factory (transformers 5 holds the
    /// experts fused, the router as a `TopKRouter`: [`model::LoraScope::Hf`]), and each sees every
    /// token. Its config.json: hidden 2,048; 32 query and 4 key/value heads of 128. Σ (in + out) a
    /// layer: q 2,048 + 4,096, k and v 2,048 + 512 each, o 4,096 + 2,048. Counting every expert's
    /// and the router's adapters for every token had made it 63 times more (1,100,928).
    #[test]
    fn lora_traffic_counts_the_adapters_peft_wraps() {
        let plan = Plan::from_json(r#"{"model": "qwen3-30b-a3b", "method": "lora"}"#).unwrap();
        let eager = HfEager::of(&plan, &memory::estimate(&plan)).expect("LLaMA-Factory runs HF's modules");
        let per_layer = (2_048 + 4_096) + 2 * (2_048 + 512) + (4_096 + 2_048);
        assert_eq!(eager.lora_units_per_layer, f64::from(per_layer));
    }
}
