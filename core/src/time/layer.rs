//! One decoder layer's forward on one device for one micro-batch: its GEMMs, the attention core,
//! the memory-bound kernels and the tensor- and context-parallel communication (the MoE
//! feed-forward is `moe.rs`'s).

use super::comm::{link_bandwidth, ring_seconds_on};
use super::gemm::{efficiency, gemm, gemm_16bit};
use super::moe::{moe_ep_overlapped, moe_feed_forward};
use super::ulysses::all_to_all_seconds;
use super::{
    ASCEND_COC_EXPOSED_FRAC, AUTOCAST_CAST_BYTES_PER_PARAM, Ctx, DEQUANT_4BIT_BYTES_PER_PARAM,
    ELEMENTWISE_BYTES_PER_TOKEN_HIDDEN, HBM_EFF, HF_EAGER_BYTES_PER_TOKEN_FFN,
    HF_EAGER_BYTES_PER_TOKEN_HIDDEN, HF_EAGER_BYTES_PER_TOKEN_Q, HF_EAGER_BYTES_PER_TOKEN_QK,
    HF_RMSNORM_BYTES_PER_TOKEN_UNIT, LIGER_RMSNORM_BYTES_PER_TOKEN_UNIT, LIGER_ROPE_BYTES_PER_TOKEN_QK,
    LIGER_SWIGLU_BYTES_PER_TOKEN_FFN, MOE_COMM_SM_FRAC, UNFUSED_RMSNORM_BYTES_PER_TOKEN_HIDDEN,
    UNFUSED_ROPE_BYTES_PER_TOKEN_QK, UNFUSED_SWIGLU_BYTES_PER_TOKEN_FFN,
};
use crate::hardware::Vendor;
use crate::memory;
use crate::model::{Attention, MlpKind};
use crate::plan::{AttentionImpl, CpAlgo, Method, Plan, RecomputeGranularity, RecomputeMethod};

/// Per-micro-batch work of one layer on one device, forward.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct LayerWork {
    pub(super) gemm_seconds: f64,
    pub(super) attention_seconds: f64,
    pub(super) memory_seconds: f64,
    /// Eager HF operators' forward traffic (LLaMA-Factory, VeRL's actor): their backward moves twice it.
    pub(super) eager_seconds: f64,
    pub(super) tp_seconds: f64,
    pub(super) cp_seconds: f64,
    pub(super) ep_seconds: f64,
    /// Backward only: the all-gather of the checkpoint's input that `--distribute-saved-activations`
    /// split over the TP ranks.
    pub(super) checkpoint_gather_seconds: f64,
    /// Forward only (and again where the forward is recomputed): DoRA's weight norms.
    pub(super) forward_only_seconds: f64,
    /// FLOPs as Megatron-LM counts them (`num_floating_point_operations`, core_v0.19.0: the
    /// attention core's causal half, no window).
    pub(super) model_flops: f64,
    /// Of which the attention core (scores and values).
    pub(super) attention_flops: f64,
    /// The attention core's FLOPs as its kernel runs them: every score pair where it masks the full
    /// matrix (eager), the causal half and the window's share where it skips the rest.
    pub(super) attention_hardware_flops: f64,
    /// The MLP's (or MoE layer's) GEMM seconds, part of `gemm_seconds`: what `--recompute-modules
    /// mlp` or `moe` reruns.
    pub(super) mlp_gemm_seconds: f64,
    /// The MLP's (or MoE layer's) FLOPs, part of `model_flops`.
    pub(super) mlp_flops: f64,
    /// The router's GEMM, part of `model_flops` here: the hardware runs it, but Megatron-LM's count
    /// leaves it out (`num_floating_point_operations` at core_v0.19.0 counts the routed and shared
    /// experts' GEMMs alone), so the step's model FLOPs do too ([`super::passes`]).
    pub(super) router_flops: f64,
    /// Whether this is an MoE layer.
    pub(super) moe_layer: bool,
    /// Autocast's casts of fp32 weights, part of `memory_seconds`: what a layer of 16-bit frozen
    /// weights does not do (freeze-tuning's frozen layers).
    pub(super) cast_seconds: f64,
}

impl LayerWork {
    /// What the hardware runs of the attention core beyond what the model's FLOPs count of it: `runs`
    /// runs as its kernel scores them, less `counted` of Megatron's count. The core has no
    /// weights, so its backward is its input gradients, twice its forward, under LoRA too, where
    /// the model's FLOPs count two passes of every GEMM (no weight gradients).
    pub(super) fn attention_hardware_extra(&self, runs: f64, counted: f64) -> f64 {
        runs * self.attention_hardware_flops - counted * self.attention_flops
    }

    /// Adds a GEMM's (seconds, FLOPs).
    fn add(&mut self, (seconds, flops): (f64, f64)) {
        self.gemm_seconds += seconds;
        self.model_flops += flops;
    }

    /// `self` and `other` weighted `1 − share` and `share`.
    fn mix(&self, other: &LayerWork, share: f64) -> LayerWork {
        let m = |a: f64, b: f64| (1.0 - share) * a + share * b;
        LayerWork {
            gemm_seconds: m(self.gemm_seconds, other.gemm_seconds),
            attention_seconds: m(self.attention_seconds, other.attention_seconds),
            memory_seconds: m(self.memory_seconds, other.memory_seconds),
            eager_seconds: m(self.eager_seconds, other.eager_seconds),
            tp_seconds: m(self.tp_seconds, other.tp_seconds),
            cp_seconds: m(self.cp_seconds, other.cp_seconds),
            ep_seconds: m(self.ep_seconds, other.ep_seconds),
            checkpoint_gather_seconds: m(self.checkpoint_gather_seconds, other.checkpoint_gather_seconds),
            forward_only_seconds: m(self.forward_only_seconds, other.forward_only_seconds),
            model_flops: m(self.model_flops, other.model_flops),
            attention_flops: m(self.attention_flops, other.attention_flops),
            attention_hardware_flops: m(self.attention_hardware_flops, other.attention_hardware_flops),
            mlp_gemm_seconds: m(self.mlp_gemm_seconds, other.mlp_gemm_seconds),
            mlp_flops: m(self.mlp_flops, other.mlp_flops),
            router_flops: m(self.router_flops, other.router_flops),
            moe_layer: self.moe_layer,
            cast_seconds: m(self.cast_seconds, other.cast_seconds),
        }
    }
}

/// One layer's forward on one device for one micro-batch. Where the model has Gated DeltaNet
/// layers, an average layer of the kind: its attention layers' work and its DeltaNet layers', each
/// by its share of the model's layers; each chunk's passes are then made its own layers'
/// ([`super::passes`]).
pub(super) fn layer_work(ctx: &Ctx, moe_layer: bool) -> LayerWork {
    let full = layer_work_of(ctx, moe_layer, false);
    match ctx.arch.linear_attention {
        None => full,
        Some(_) => {
            let linear = layer_work_of(ctx, moe_layer, true);
            full.mix(&linear, crate::model::linear_attention_share(ctx.arch))
        }
    }
}

/// One layer's forward of the kind as an attention layer and as a Gated DeltaNet layer, where the
/// model has both: what [`layer_work`]'s average is made of, for the stages that hold more or fewer
/// DeltaNet layers than the model's share ([`super::passes`]).
pub(super) fn layer_work_both(ctx: &Ctx, moe_layer: bool) -> Option<(LayerWork, LayerWork)> {
    ctx.arch.linear_attention?;
    Some((layer_work_of(ctx, moe_layer, false), layer_work_of(ctx, moe_layer, true)))
}

/// One layer's forward, its attention a Gated DeltaNet's where `linear`.
fn layer_work_of(ctx: &Ctx, moe_layer: bool, linear: bool) -> LayerWork {
    let mut w = LayerWork::default();
    let gdn = ctx.arch.linear_attention.filter(|_| linear);
    let (heads, q, kv, rotated) = match &gdn {
        Some(l) => linear_projections(ctx, l, &mut w),
        None => projections(ctx, &mut w),
    };
    let (projection_seconds, projection_flops) = (w.gemm_seconds, w.model_flops);
    let attention_flops = match &gdn {
        Some(l) => delta_rule(ctx, l, &mut w),
        None => attention_core(ctx, heads, q, &mut w),
    };
    match (&ctx.arch.moe, moe_layer) {
        (Some(moe), true) => moe_feed_forward(ctx, moe, &mut w),
        _ => dense_mlp(ctx, &mut w),
    }
    // What the MLP (or MoE) arm added, for selective recomputation of those modules.
    w.mlp_gemm_seconds = w.gemm_seconds - projection_seconds;
    w.mlp_flops = w.model_flops - projection_flops - attention_flops;
    w.moe_layer = moe_layer;
    elementwise(ctx, moe_layer, q, rotated, &mut w);
    if ctx.hf_eager.is_some_and(|e| e.casts_weights) {
        // Autocast gives each forward (and a recomputed one) 16-bit copies of the fp32 linear
        // weights, and casts their 16-bit gradients back: the layer's linear parameters, from its
        // GEMMs' FLOPs (2 · tokens · weights each), each pass.
        let weights = (w.model_flops - attention_flops) / (2.0 * ctx.tokens);
        w.cast_seconds = AUTOCAST_CAST_BYTES_PER_PARAM * weights / (ctx.hw.memory_bytes_per_second * HBM_EFF);
        w.memory_seconds += w.cast_seconds;
    }
    if let Some((bytes, experts)) = dequantized_base(ctx.plan) {
        // The packed base dequantized each pass: the layer's linear weights, outside the MoE block
        // where the routed experts stay 16-bit, as memory counts them (a shared expert's packed
        // weights are left out with them).
        let moe = if moe_layer && !experts { w.mlp_flops } else { 0.0 };
        let quantized = (w.model_flops - attention_flops - moe) / (2.0 * ctx.tokens);
        w.memory_seconds += bytes * quantized / (ctx.hw.memory_bytes_per_second * HBM_EFF);
    }
    w.tp_seconds = tp_seconds(ctx);
    w.checkpoint_gather_seconds = checkpoint_gather_seconds(ctx);
    w.cp_seconds = match ctx.plan.parallel.cp_algo {
        // Gated DeltaNet splits its heads over the context-parallel ranks by all-to-all whatever the
        // attention's exchange (`tensor_a2a_cp2hp`, megatron/core/ssm/gated_delta_net at core_v0.19.0).
        _ if gdn.is_some() => all_to_all_seconds(ctx),
        CpAlgo::Ring => cp_seconds(ctx, kv, w.attention_seconds),
        CpAlgo::AllToAll => all_to_all_seconds(ctx),
    };
    if moe_layer && 0.0 < w.ep_seconds && moe_ep_overlapped(ctx.plan) {
        // Overlapped dispatch and combine (Megatron-LM `--overlap-moe-expert-parallel-comm`,
        // `megatron/core/models/gpt/fine_grained_callables.py` at core_v0.19.0: one micro-batch's
        // all-to-alls run beside another's attention and expert compute; DeepSeek-V3's DualPipe,
        // arXiv 2412.19437 §3.2.1, the same inside its forward/backward chunk pairs). What exceeds
        // the other micro-batch's compute of this layer shows; the hidden part still costs the SMs
        // the communication kernels hold ([`MOE_COMM_SM_FRAC`]).
        let hide = w.gemm_seconds + w.attention_seconds;
        w.ep_seconds = (w.ep_seconds - hide).max(0.0) + w.ep_seconds.min(hide) * MOE_COMM_SM_FRAC;
    }
    w
}

/// The attention's projections added to `w`; returns the heads, the query and key/value widths,
/// and the query and key units the rotary embedding turns.
fn projections(ctx: &Ctx, w: &mut LayerWork) -> (f64, f64, f64, f64) {
    let (t, tokens, h) = (ctx.tp, ctx.tokens, ctx.arch.hidden_size as f64);
    match ctx.arch.attention {
        Attention::Gqa { n_heads, n_kv_heads, head_dim, .. } => {
            let (q, kv) = ((n_heads * head_dim) as f64, (n_kv_heads * head_dim) as f64);
            // The output gate's projection widens the query's (Megatron-LM counts it:
            // `gate_projection_size`, `num_floating_point_operations` at core_v0.19.0).
            let gate = if ctx.arch.attention_output_gate { q } else { 0.0 };
            w.add(gemm(ctx, tokens, h, (q + gate + 2.0 * kv) / t));
            w.add(gemm(ctx, tokens, q / t, h));
            (n_heads as f64, q, kv, q + kv)
        }
        Attention::Mla {
            n_heads,
            q_lora_rank,
            kv_lora_rank,
            qk_nope_head_dim,
            qk_rope_head_dim,
            v_head_dim,
        } => {
            let a = n_heads as f64;
            let qd = a * (qk_nope_head_dim + qk_rope_head_dim) as f64;
            match q_lora_rank {
                Some(r) => {
                    w.add(gemm(ctx, tokens, h, r as f64));
                    w.add(gemm(ctx, tokens, r as f64, qd / t));
                }
                None => w.add(gemm(ctx, tokens, h, qd / t)),
            }
            w.add(gemm(ctx, tokens, h, (kv_lora_rank + qk_rope_head_dim) as f64));
            w.add(gemm(ctx, tokens, kv_lora_rank as f64, a * (qk_nope_head_dim + v_head_dim) as f64 / t));
            w.add(gemm(ctx, tokens, a * v_head_dim as f64 / t, h));
            // MLA turns each head's rope part of the query and one shared rope key.
            (a, qd, qd / 2.0, (a + 1.0) * qk_rope_head_dim as f64)
        }
    }
}

/// Gated DeltaNet's projections added to `w` (`in_proj_qkvz` and `in_proj_ba` as one GEMM, as
/// Megatron-LM's `in_proj` is; `out_proj`), and its causal convolution's FLOPs and traffic;
/// returns the value heads, the values' width twice (the output and the attention's input width
/// the eager kernels' traffic is counted over) and no rotated units (it has no rotary embedding).
fn linear_projections(
    ctx: &Ctx,
    l: &crate::model::LinearAttention,
    w: &mut LayerWork,
) -> (f64, f64, f64, f64) {
    let (t, tokens, h) = (ctx.tp, ctx.tokens, ctx.arch.hidden_size as f64);
    let (key_dim, value_dim, heads) = (l.key_dim() as f64, l.value_dim() as f64, l.value_heads as f64);
    w.add(gemm(ctx, tokens, h, (2.0 * key_dim + 2.0 * value_dim + 2.0 * heads) / t));
    w.add(gemm(ctx, tokens, value_dim / t, h));
    // The depthwise convolution over q, k and v: Megatron-LM's count (`num_floating_point_operations`,
    // core_v0.19.0: `linear_conv_kernel_dim * (2 * qk_dim + v_dim)` multiply-adds a token), run as
    // a memory-bound kernel reading its input and writing its output.
    let channels = (2.0 * key_dim + value_dim) / t;
    w.model_flops += 2.0 * tokens * l.conv_kernel as f64 * channels;
    w.memory_seconds += 2.0 * 2.0 * tokens * channels / (ctx.hw.memory_bytes_per_second * HBM_EFF);
    (heads, value_dim, value_dim, 0.0)
}

/// Gated DeltaNet's chunked delta rule added to `w`, as the attention core is (its backward twice
/// its forward, rerun where the core is); returns its model FLOPs: Megatron-LM's count,
/// `num_v_heads * v_head_dim ** 2 * 4` multiply-adds a token ("KK^T, VK^T, S(a(I-bKK^T)), and SQ",
/// `num_floating_point_operations`, megatron/training/training.py at core_v0.19.0), which the
/// hardware's count takes too (the chunked kernel's own is of the same order: its 64-token blocks'
/// products and the state's updates). Its kernels (FLA's Triton `chunk_gated_delta_rule`) run small
/// products, at the attention kernels' efficiency for their FLOPs.
fn delta_rule(ctx: &Ctx, l: &crate::model::LinearAttention, w: &mut LayerWork) -> f64 {
    let v = l.value_head_dim as f64;
    let flops = 2.0 * 4.0 * ctx.tokens * l.value_heads as f64 * v * v / ctx.tp;
    w.model_flops += flops;
    w.attention_flops = flops;
    w.attention_hardware_flops = flops;
    w.attention_seconds = flops / (ctx.peak * efficiency(ctx, flops));
    flops
}

/// The attention core (scores and values) added to `w`; returns its model FLOPs.
fn attention_core(ctx: &Ctx, heads: f64, q: f64, w: &mut LayerWork) -> f64 {
    let (t, tokens) = (ctx.tp, ctx.tokens);
    // Attention scores and values: 2·2·b·s²·q per layer over every pair. Causal kernels skip the
    // masked half; eager kernels score it and also read and write the score matrix. Under context
    // parallelism each rank scores its s ÷ cp queries against all s keys: `b`, the device's
    // tokens over the sequence, is already the micro-batch ÷ cp.
    let b = tokens / ctx.seq;
    let eager = ctx.plan.attention == AttentionImpl::Eager;
    // Sliding-window layers score only the window's pairs where the kernel skips the rest (flash
    // attention's and Transformer Engine's `window_size`, cuDNN's fused attention too); an eager
    // kernel masks the same full matrix, and so does PyTorch's SDPA under transformers, which is
    // handed the window as a mask. The share is the mean over the model's layers
    // (`model::attention_pair_share`). The model's FLOPs are Megatron-LM's count, the causal half
    // of the pairs whatever the kernel and window ("causal mask (only half of the mask is
    // non-zero)", `num_floating_point_operations`, megatron/training/training.py at core_v0.19.0;
    // the core_v0.12.1 MindSpeed-LLM and MindSpeed-RL run on halves it too, `seq_length /
    // hidden_size / 2`; before core_v0.12 it counted every pair, as Narayanan et al. 2021 Eq. 3
    // does), so MFU compares with their logs; the hardware's are what the kernel scores.
    let skips = match ctx.plan.attention {
        AttentionImpl::Eager => false,
        AttentionImpl::Sdpa => memory::path(ctx.plan.framework) == memory::Path::Megatron,
        AttentionImpl::Flash => true,
    };
    let window = match skips {
        true => crate::model::attention_pair_share(ctx.arch, ctx.seq),
        false => 1.0,
    };
    let every_pair = 4.0 * b * ctx.seq * ctx.seq * q / t;
    let attention_flops = 0.5 * every_pair;
    w.model_flops += attention_flops;
    w.attention_flops = attention_flops;
    let causal = if eager { 1.0 } else { 0.5 };
    w.attention_hardware_flops = every_pair * causal * window;
    w.attention_seconds = w.attention_hardware_flops / (ctx.peak * efficiency(ctx, every_pair));
    if eager {
        // The score matrix goes through memory: written by QKᵀ, read and written by the masked
        // softmax, read by the product with V (4 × 2 bytes), plus a dropout mask and output (3 bytes)
        // where the model trains with attention dropout.
        let scores = b * heads / t * ctx.seq * ctx.seq;
        let bytes_per_score = if ctx.arch.family == crate::model::Family::Gpt2 { 11.0 } else { 8.0 };
        w.attention_seconds += bytes_per_score * scores / (ctx.hw.memory_bytes_per_second * HBM_EFF);
    }
    attention_flops
}

/// A dense layer's MLP GEMMs added to `w`.
fn dense_mlp(ctx: &Ctx, w: &mut LayerWork) {
    let (t, tokens, h) = (ctx.tp, ctx.tokens, ctx.arch.hidden_size as f64);
    let f = ctx.arch.mlp.intermediate_size as f64;
    let n_up = if ctx.arch.mlp.kind == MlpKind::Gated { 2.0 } else { 1.0 };
    w.add(gemm(ctx, tokens, h, n_up * f / t));
    w.add(gemm(ctx, tokens, f / t, h));
}

/// The memory-bound elementwise kernels added to `w` (norms, residuals, activations, rotary; on
/// MindSpeed without its fused kernels, their eager operators).
fn elementwise(ctx: &Ctx, moe_layer: bool, q: f64, rotated: f64, w: &mut LayerWork) {
    let arch = ctx.arch;
    let (t, tokens, h) = (ctx.tp, ctx.tokens, arch.hidden_size as f64);
    w.memory_seconds +=
        ELEMENTWISE_BYTES_PER_TOKEN_HIDDEN * tokens * h / t / (ctx.hw.memory_bytes_per_second * HBM_EFF);
    if !ctx.plan.parallel.fused_kernels && ctx.mindspeed {
        // MindSpeed without its fused RMSNorm, SwiGLU and rotary kernels: each runs as eager
        // operators, reading and writing its tensors several times (docs/time.md "Ascend").
        // Routed experts' SwiGLU is the MoE arm's; GPT-2 has LayerNorm and learned positions.
        let gated = !moe_layer && arch.mlp.kind == MlpKind::Gated;
        let swiglu = match gated {
            true => UNFUSED_SWIGLU_BYTES_PER_TOKEN_FFN * arch.mlp.intermediate_size as f64,
            false => 0.0,
        };
        let norms_and_rope = match arch.family {
            crate::model::Family::Gpt2 => 0.0,
            _ => UNFUSED_RMSNORM_BYTES_PER_TOKEN_HIDDEN * h + UNFUSED_ROPE_BYTES_PER_TOKEN_QK * rotated,
        };
        let bytes = norms_and_rope + swiglu;
        w.memory_seconds += bytes * tokens / t / (ctx.hw.memory_bytes_per_second * HBM_EFF);
    }
    if let Some(eager) = ctx.hf_eager {
        // HF's modules (LLaMA-Factory, VeRL's actor) run eager operators: norms, residual adds,
        // rotary and the attention output's copy, SwiGLU (the routed experts' is the MoE arm's),
        // beyond the fused-kernel traffic counted above; PEFT's adapters add theirs. Each
        // elementwise operator's backward reads its saved operands and the incoming gradient and
        // writes a gradient per input: about twice its forward's bytes (`kind_passes`).
        let gated = !moe_layer && arch.mlp.kind == MlpKind::Gated;
        let qk_norm = matches!(arch.attention, Attention::Gqa { qk_norm: true, .. });
        let ffn = if gated { arch.mlp.intermediate_size as f64 } else { 0.0 };
        // Liger's kernels (LLaMA-Factory `enable_liger_kernel`, VeRL `use_liger`) run each norm,
        // the rotary embedding and SwiGLU as one kernel; the residual adds and the output's copy
        // stay eager.
        let (norm, rope, swiglu) = match eager.liger {
            true => (
                LIGER_RMSNORM_BYTES_PER_TOKEN_UNIT,
                match memory::liger_patches_rope(arch.family) {
                    true => LIGER_ROPE_BYTES_PER_TOKEN_QK,
                    false => HF_EAGER_BYTES_PER_TOKEN_QK,
                },
                LIGER_SWIGLU_BYTES_PER_TOKEN_FFN,
            ),
            false => {
                (HF_RMSNORM_BYTES_PER_TOKEN_UNIT, HF_EAGER_BYTES_PER_TOKEN_QK, HF_EAGER_BYTES_PER_TOKEN_FFN)
            }
        };
        // Two norms and two residual adds a layer: HF_EAGER_BYTES_PER_TOKEN_HIDDEN with eager norms;
        // two norms more where the attention's and the MLP's outputs are normed (GLM-4-0414's,
        // Gemma's `post_*_layernorm`: `Glm4DecoderLayer`, `Gemma2DecoderLayer`).
        let post_norms = if arch.post_norms { 2.0 * norm } else { 0.0 };
        let hidden =
            HF_EAGER_BYTES_PER_TOKEN_HIDDEN - 2.0 * (HF_RMSNORM_BYTES_PER_TOKEN_UNIT - norm) + post_norms;
        let bytes = (hidden - ELEMENTWISE_BYTES_PER_TOKEN_HIDDEN).max(0.0) * h
            + rope * rotated
            + HF_EAGER_BYTES_PER_TOKEN_Q * q
            // Qwen3's `q_norm` and `k_norm` normalize every query and key head: RMSNorms over the
            // rotated units.
            + if qk_norm { norm * rotated } else { 0.0 }
            + swiglu * ffn
            + eager.lora_bytes_per_unit * eager.lora_units_per_layer
            + eager.dora_bytes_per_token;
        let bandwidth = ctx.hw.memory_bytes_per_second * HBM_EFF;
        w.eager_seconds += bytes * tokens / t / bandwidth;
        // DoRA's norms, once a forward whatever the tokens; and with a dropout the adapted modules'
        // base GEMMs run again on the dropped input, in forward and for its input gradient (time,
        // not the model's FLOPs).
        w.forward_only_seconds += eager.dora_bytes_per_forward / bandwidth;
        if 0.0 < eager.dora_rerun_weights {
            w.gemm_seconds += gemm_16bit(ctx, tokens, eager.dora_rerun_weights, 1.0).0;
        }
    }
}

/// The tensor-parallel collectives of one layer's forward, as far as they show.
fn tp_seconds(ctx: &Ctx) -> f64 {
    let (t, tokens, h) = (ctx.tp, ctx.tokens, ctx.arch.hidden_size as f64);
    if t <= 1.0 {
        return 0.0;
    }
    // TP: two all-reduces per layer forward (after attention and MLP), or all-gather + reduce-scatter
    // of the same volume with sequence parallelism (Korthikanti et al. 2022 §4.2.2).
    let bytes = tokens * h * 2.0;
    let bw = link_bandwidth(ctx, t as u64);
    let mut seconds = 2.0 * ring_seconds_on(ctx.hw, bytes, t, bw, true);
    if ctx.plan.parallel.tp_comm_overlap {
        // Transformer Engine's userbuffers hide 70 %; on Ascend the flag is MindSpeed's CoC.
        seconds *= match ctx.hw.vendor {
            Vendor::Ascend => ASCEND_COC_EXPOSED_FRAC,
            _ => 0.3,
        };
    }
    seconds
}

/// Megatron `--distribute-saved-activations` under full recomputation without sequence parallelism:
/// each checkpoint's input (the layer's hidden states, 2 bytes an element) is split over the TP
/// ranks after forward and all-gathered before the recomputed forward (`CheckpointFunction`,
/// megatron/core/tensor_parallel/random.py at core_v0.19.0: `split_tensor_into_1d_equal_chunks`,
/// `gather_split_1d_tensor`). Per layer: one gather per checkpoint, so a uniform checkpoint of
/// `recompute.num_layers` layers shares its gather among them; the block method checkpoints each
/// of its layers alone.
fn checkpoint_gather_seconds(ctx: &Ctx) -> f64 {
    let (plan, t) = (ctx.plan, ctx.tp);
    let distributed = plan.recompute.distribute_saved_activations
        && plan.recompute.granularity == RecomputeGranularity::Full
        && !plan.parallel.sequence_parallel;
    if !distributed || t <= 1.0 {
        return 0.0;
    }
    let bytes = ctx.tokens * ctx.arch.hidden_size as f64 * 2.0;
    let layers_per_gather = match plan.recompute.method {
        RecomputeMethod::Uniform => f64::from(plan.recompute.num_layers.get()),
        RecomputeMethod::Block => 1.0,
    };
    ring_seconds_on(ctx.hw, bytes, t, link_bandwidth(ctx, t as u64), false) / layers_per_gather
}

/// The ring's context-parallel exchange of one layer's forward (keys and values of width `kv`)
/// beyond the attention core's `attention_seconds`, which hide the rest; all-to-all is
/// `ulysses.rs`'s.
fn cp_seconds(ctx: &Ctx, kv: f64, attention_seconds: f64) -> f64 {
    let (t, tokens) = (ctx.tp, ctx.tokens);
    if ctx.cp <= 1.0 {
        return 0.0;
    }
    // CP ring attention: (c − 1) steps, each passing this rank's K and V chunk; mostly hidden
    // behind the attention compute (Megatron's ring overlaps send with the local block).
    let kv_bytes = 2.0 * tokens * kv * 2.0 / t;
    let bw = link_bandwidth(ctx, (ctx.cp * t) as u64);
    let exchange =
        (ctx.cp - 1.0) * (ctx.hw.collective_latency_seconds + kv_bytes / (bw * ctx.hw.collective_eff));
    (exchange - attention_seconds).max(0.0)
}

/// Bytes a packed base weight moves to be dequantized for a pass, and whether the routed experts
/// are packed too; `None` for a 16-bit base. QLoRA: bitsandbytes' `MatMul4Bit`
/// ([`DEQUANT_4BIT_BYTES_PER_PARAM`]). A checkpoint stored packed, under LLaMA-Factory: the
/// packed weight read and its 16-bit copy written, as gptqmodel's training kernel does
/// (`TorchQuantLinear._forward`: `dequantize_weight`, then `torch.matmul`; LLaMA-Factory turns
/// the exllama kernels off); the scales and zero points left out.
fn dequantized_base(plan: &Plan) -> Option<(f64, bool)> {
    match crate::quantized::kept(plan) {
        Some(q) => Some((f64::from(q.bits) / 8.0 + 2.0, !q.experts_16bit())),
        None if plan.method == Method::Qlora && memory::path(plan.framework) == memory::Path::Hf => {
            Some((DEQUANT_4BIT_BYTES_PER_PARAM, false))
        }
        None => None,
    }
}
