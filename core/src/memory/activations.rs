//! Activations per layer and per stage: each layer kind's saved tensors, what recomputation,
//! selective recomputation and offload leave of them, and how many micro-batches are in flight
//! at once (docs/memory.md, "Activations per layer" and "Pipeline in flight").

use super::*;
use crate::model::MlpKind;
use crate::plan::{AttentionImpl, RecomputeGranularity, RecomputeMethod};

/// Attention dropout and hidden dropout as the family trains: GPT-2 style models with 0.1
/// (Megatron's default `--attention-dropout`/`--hidden-dropout`), modern decoders with none.
pub(super) fn has_dropout(arch: &Architecture) -> bool {
    arch.family == model::Family::Gpt2
}

/// What a layer keeps for backward, beyond what the parallel degrees decide.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Saved {
    /// Selective recompute: the core attention's score tensors are recomputed.
    pub selective: bool,
    /// MindSpeed activation-function recompute: the MLP activation's output is recomputed.
    pub activation_function: bool,
    /// Leave out the attention tensors (Q/K/V, scores, output): MindSpeed swap-attention keeps
    /// them in host memory.
    pub without_attention: bool,
    /// Megatron `--recompute-modules mlp`: the dense MLP keeps only its input.
    pub mlp: bool,
    /// `layernorm`: the two norms' outputs (the QKV and MLP inputs) are discarded.
    pub layernorm: bool,
    /// `moe_act`: the experts' activation output is discarded.
    pub moe_act: bool,
    /// `moe`: the MoE layer keeps only its input.
    pub moe: bool,
    /// `shared_experts`: the shared experts keep only their input.
    pub shared_experts: bool,
    /// `mla_up_proj`: MLA's up-projected queries, keys and values are discarded.
    pub mla_up_proj: bool,
}

/// How a layer runs: the path, kernels, shapes on one device, and what recomputation drops.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LayerCase {
    /// The Megatron path (else the HF path).
    pub megatron: bool,
    /// The attention kernel.
    pub attention: AttentionImpl,
    /// Tokens per sequence on the device (after CP).
    pub seq_len: u64,
    /// Sequences per micro-batch.
    pub micro_batch: u64,
    /// Tensor parallel size.
    pub tp: u64,
    /// Megatron sequence parallelism.
    pub sequence_parallel: bool,
    /// What recomputation drops.
    pub saved: Saved,
    /// The linear layers run in fp8 or fp4 (Transformer Engine on the Megatron path): each keeps
    /// its input quantized for the weight gradient, 1 byte per element instead of 2
    /// (transformer_engine/pytorch/module/linear.py: the quantized input is saved with only its
    /// column-wise data). Dense layers only; the MoE experts' inputs are counted at 2 bytes.
    pub fp8_inputs: bool,
    /// The HF path's RMSNorm, gated MLP and routed experts run Liger's kernels (`liger`), which
    /// keep less for backward than HF's modules (see [`layer_activation_bytes`]).
    pub liger: bool,
}

/// Bytes saved for backward by one decoder layer for one micro-batch, on one device.
///
/// Megatron path (Korthikanti et al. 2022, §4.1, generalised to GQA, gated MLPs and no dropout):
/// per token, layer-norm inputs 4h, QKV input 2h, Q/K/V 2(q + 2kv), core attention (eager:
/// softmax 2as, dropout mask as and output 2as; flash: output 2q and fp32 softmax stats 4a), o_proj
/// input 2q, MLP input 2h, MLP inner 4f (GELU) or 6f (SwiGLU: gate and up, product), dropout masks
/// 2h. With GPT's shapes this is the paper's 34sbh + 5as²b. Without sequence parallelism the
/// layer-norm and linear inputs and the masks (10sbh) stay whole on each TP rank; the rest is ÷ t.
///
/// HF path (measured with tools/hf_activations, transformers 5.24, bf16): per token, each RMSNorm
/// (two, or four with norms after attention and the MLP) 8h + 4 (fp32 upcast, normalized,
/// weighted), Q/K/V 2(q + 2kv) and output 2q with an fp32 log-sum-exp
/// 4a (sdpa/flash) or, eager, K/V repeated to all heads and the softmax 6as (fp32 + bf16 copy), MLP 8f.
/// With Liger's kernels (liger-kernel 0.8.5, `liger_kernel/ops/`): each RMSNorm keeps its input and
/// an fp32 factor a row (`LigerRMSNormFunction`: `save_for_backward(X, W, RSTD)`) beside its output,
/// the next linear's input: 4h + 4; a dense gated MLP keeps the gate's and the up projection's
/// outputs (`LigerSiLUMulFunction`, and GeGLU's alike: `save_for_backward(a, b)`) and the product,
/// the down projection's input: 6f. Its fused experts (transformers 5's `*Experts` modules) keep,
/// per routed copy, the gate and up outputs, the routing weight and three indices: 4f_e + 16.
pub fn layer_activation_bytes(arch: &Architecture, moe_layer: bool, case: &LayerCase) -> f64 {
    let LayerCase {
        megatron,
        attention,
        seq_len,
        micro_batch,
        tp,
        sequence_parallel,
        saved,
        fp8_inputs,
        liger,
    } = *case;
    // Bytes per element of a saved linear input: the QKV, output-projection, MLP and FC2 inputs.
    let input = if megatron && fp8_inputs { 1.0 } else { 2.0 };
    let (s, b, h) = (seq_len as f64, micro_batch as f64, arch.hidden_size as f64);
    let t = tp as f64;
    let tokens = s * b;
    let (a, q, kv) = attention_widths(arch);
    let dropout = megatron && has_dropout(arch);
    let flash = attention != AttentionImpl::Eager;
    let moe = arch.moe.as_ref().filter(|_| moe_layer);

    // Per-token bytes that TP leaves whole (unless SP) and those it divides.
    let (whole, mut split);
    if megatron {
        whole = 4.0 * h + input * h + input * h + if dropout { 2.0 * h } else { 0.0 };
        // `layernorm` recompute discards the norms' outputs, the QKV and MLP inputs (2h each), and
        // reruns the norms from their kept inputs (transformer_config.py: "output-discarding
        // checkpointing").
        let whole = whole - if saved.layernorm { 2.0 * input * h } else { 0.0 };
        split = 2.0 * (q + 2.0 * kv) + input * q;
        // `mla_up_proj` discards the up-projected Q, K and V (rerun from the compressed latents).
        if saved.mla_up_proj && matches!(arch.attention, model::Attention::Mla { .. }) {
            split -= 2.0 * (q + 2.0 * kv);
        }
        if flash {
            split += 4.0 * a;
        } else if !saved.selective {
            split += (2.0 + if dropout { 3.0 } else { 0.0 }) * a * s;
        }
        split = with_linear_attention(arch, split, input);
        if saved.without_attention {
            split = 0.0;
        }
        split += match moe {
            Some(_) => 0.0,
            // `mlp` recompute checkpoints the MLP: only its input (counted in `whole`) is kept.
            None if saved.mlp => 0.0,
            // Activation-function recompute drops the activation's output: 2f of the inner tensors.
            None => {
                let f = arch.mlp.intermediate_size as f64;
                // Of the inner tensors, the activation's output (2f) is FC2's input.
                mlp_inner_megatron(arch.mlp.kind, f)
                    - (2.0 - input) * f
                    - if saved.activation_function { input * f } else { 0.0 }
            }
        };
        if let Some(moe) = moe {
            return megatron_moe_recomputed(arch, moe, case, whole, split);
        }
        let per_token = if sequence_parallel { (whole + split) / t } else { whole + split / t };
        return per_token * tokens;
    } else {
        // Two norms a layer, four where the attention's and the MLP's outputs are normed too
        // (GLM-4-0414's, Gemma's `post_*_layernorm`), each keeping what the first two keep.
        let norms = if arch.post_norms { 4.0 } else { 2.0 };
        whole = norms * ((if liger { 4.0 } else { 8.0 }) * h + 4.0);
        split = if flash {
            2.0 * (q + 2.0 * kv) + 2.0 * q + 4.0 * a
        } else {
            2.0 * (3.0 * q) + 2.0 * q + 6.0 * a * s
        };
        split = with_linear_attention(arch, split, 2.0);
        if saved.without_attention {
            split = 0.0;
        }
        split += match moe {
            Some(_) => 0.0,
            None => match arch.mlp.kind {
                MlpKind::Gated => (if liger { 6.0 } else { 8.0 }) * arch.mlp.intermediate_size as f64,
                MlpKind::Plain => 4.0 * arch.mlp.intermediate_size as f64,
            },
        };
    }
    if let Some(moe) = moe {
        // Routed tokens: k copies of the input and output (2h each) and the expert's inner tensors;
        // router logits and probabilities in fp32 (8E); a shared expert is a dense gated MLP
        // (NVIDIA/Megatron-LM PR #6782, MoE-aware `compute_activation_memory`; measured for Mixtral
        // on the HF path).
        let k = moe.top_k as f64;
        let f_e = moe.expert_intermediate_size as f64;
        let routed = match (megatron, liger && super::loss::liger_fuses_experts(arch.family)) {
            (true, _) => k * (4.0 * h + 6.0 * f_e),
            // Liger's fused experts (`LigerExperts`, `LigerFusedMoEFunction.forward` in
            // `liger_kernel/ops/fused_moe.py`) gather the tokens inside the kernel and recompute
            // the down projection's output in backward: per routed copy they keep the gate and up
            // outputs (`pre_act`, 2f_e in the input's dtype), the fp32 routing weight and three
            // int32 indices (`x_gather_idx`, `s_scatter_idx`, `s_reverse_scatter_idx`); the
            // input is the layer's, kept by the norm's count.
            (false, true) => k * (4.0 * f_e + 4.0 + 3.0 * 4.0),
            (false, false) => k * (4.0 * h + 8.0 * f_e),
        };
        split += routed + 8.0 * moe.n_experts as f64;
        // Liger replaces the shared expert with its SwiGLU MLP (`LigerQwen3MoeSwiGLUMLP`): 6f_s.
        if 0 < moe.shared_intermediate_size {
            split +=
                (if megatron || liger { 6.0 } else { 8.0 }) * moe.shared_intermediate_size as f64 + 2.0 * h;
        }
    }
    let per_token = if sequence_parallel { (whole + split) / t } else { whole + split / t };
    per_token * tokens
}

/// The attention's saved bytes per token (`attention`, the TP-split part) of an average layer of a
/// model with Gated DeltaNet layers: its attention layers' (with the output gate, the core's output
/// and the gate's sigmoid, 4q more: the gated product is the output projection's input, already
/// counted) and its DeltaNet layers' ([`linear_attention_bytes`]), each by its share of the layers,
/// as the sliding window's share of score pairs is averaged (`model::attention_pair_share`). The
/// rest of a model's layers unchanged.
fn with_linear_attention(arch: &Architecture, attention: f64, input: f64) -> f64 {
    let gate = match arch.attention_output_gate {
        true => 4.0 * attention_widths(arch).1,
        false => 0.0,
    };
    let Some(linear) = arch.linear_attention else { return attention + gate };
    let share = model::linear_attention_share(arch);
    (1.0 - share) * (attention + gate) + share * linear_attention_bytes(&linear, input)
}

/// One Gated DeltaNet layer's saved bytes per token, all split by TP (its heads are): the
/// convolution's input (q, k, v: 2·(2·key_dim + value_dim)), the output gate `z` (2·value_dim),
/// `b` and `a` (4 bytes a value head), what the chunked delta rule keeps for its backward (FLA
/// `ChunkGatedDeltaRuleFunction.forward`, fla/ops/gated_delta_rule/chunk.py: `save_for_backward(q,
/// k, v, g, beta, A, …)`: q and k repeated over the value heads, 2 bytes each; the decay's fp32
/// cumulative sum `g` and `beta`, 6 bytes a value head; `A`, the chunk's 64 × 64 solve, 128 bytes
/// a value head, chunk 64 as Megatron-LM and MindSpeed-LLM run it; its chunk states are recomputed
/// in backward), its output for the gated norm (2·value_dim) and the norm's output, the output
/// projection's input (`input` bytes an element). Megatron-LM's module
/// (megatron/core/ssm/gated_delta_net at core_v0.19.0) and transformers' `Qwen3NextGatedDeltaNet`
/// call the same kernel.
pub(super) fn linear_attention_bytes(l: &model::LinearAttention, input: f64) -> f64 {
    let (key_dim, value_dim, heads) = (l.key_dim() as f64, l.value_dim() as f64, l.value_heads as f64);
    let repeated_qk = 2.0 * 2.0 * heads * l.key_head_dim as f64;
    2.0 * (2.0 * key_dim + value_dim)
        + 2.0 * value_dim
        + 4.0 * heads
        + repeated_qk
        + 2.0 * value_dim
        + 6.0 * heads
        + 2.0 * 64.0 * heads
        + 2.0 * value_dim
        + input * value_dim
}

/// A Megatron MoE layer's saved bytes with `--recompute-modules` `moe`, `moe_act` and
/// `shared_experts`: the routed part of [`layer_activation_bytes`] (k copies of input and output,
/// 6f_e inner, fp32 router 8E) less what each module discards: `moe` keeps only the layer's input,
/// `moe_act` the activation's output (2f_e of the 6f_e), `shared_experts` the shared MLP's inner
/// tensors and output.
pub(super) fn megatron_moe_recomputed(
    arch: &Architecture,
    moe: &model::Moe,
    case: &LayerCase,
    whole: f64,
    split: f64,
) -> f64 {
    let (h, t) = (arch.hidden_size as f64, case.tp as f64);
    let saved = case.saved;
    let k = moe.top_k as f64;
    let f_e = moe.expert_intermediate_size as f64;
    let mut split = split;
    if !saved.moe {
        // In fp8 the experts' FC1 input (the dispatched copy, h) and FC2 input (the activation's
        // output, f_e) are kept quantized, a byte per element (as `fp8_inputs` for dense layers;
        // DeepSeek-V3 §3.3.3 caches them in fp8 too).
        let input = if case.fp8_inputs { 1.0 } else { 2.0 };
        let inner = 4.0 * f_e + if saved.moe_act { 0.0 } else { input * f_e };
        split += k * (2.0 * h + input * h + inner) + 8.0 * moe.n_experts as f64;
        if 0 < moe.shared_intermediate_size && !saved.shared_experts {
            split += 6.0 * moe.shared_intermediate_size as f64 + 2.0 * h;
        }
    }
    let per_token = if case.sequence_parallel { (whole + split) / t } else { whole + split / t };
    per_token * (case.seq_len * case.micro_batch) as f64
}

/// Bytes padding the experts' inputs to capacity (`moe.pad_to_capacity`, Megatron
/// `--moe-pad-expert-input-to-capacity`) adds to one MoE layer's saved activations: the routed
/// part of [`layer_activation_bytes`] (k copies of 4h + 6f_e per token) grows to the capacity
/// factor c times the mean (docs/time.md, "MoE layers").
pub fn moe_padding_bytes(plan: &crate::plan::Plan, tokens: f64, tp: f64) -> f64 {
    let (Some(moe), Some(c)) = (&plan.model.arch.moe, plan.moe.capacity_factor) else {
        return 0.0;
    };
    if !plan.moe.pad_to_capacity {
        return 0.0;
    }
    let h = plan.model.arch.hidden_size as f64;
    let routed_per_token = moe.top_k as f64 * (4.0 * h + 6.0 * moe.expert_intermediate_size as f64);
    (c - 1.0) * routed_per_token * tokens / tp.max(1.0)
}

/// MLP inner bytes per token on the Megatron path: GELU saves fc1's output and GELU's output (4f);
/// fused SwiGLU saves the gate/up output and the product (6f).
pub(super) fn mlp_inner_megatron(kind: MlpKind, f: f64) -> f64 {
    match kind {
        MlpKind::Plain => 4.0 * f,
        MlpKind::Gated => 6.0 * f,
    }
}

/// Heads, query width and key/value width per token (MLA: the decompressed keys/values).
pub(super) fn attention_widths(arch: &Architecture) -> (f64, f64, f64) {
    match arch.attention {
        model::Attention::Gqa { n_heads, n_kv_heads, head_dim, .. } => {
            (n_heads as f64, (n_heads * head_dim) as f64, (n_kv_heads * head_dim) as f64)
        }
        model::Attention::Mla { n_heads, qk_nope_head_dim, qk_rope_head_dim, v_head_dim, .. } => {
            let a = n_heads as f64;
            // Keys are as wide as queries, values v_head_dim: K and V together are 2·kv wide.
            let q = a * (qk_nope_head_dim + qk_rope_head_dim) as f64;
            (a, q, (q + a * v_head_dim as f64) / 2.0)
        }
    }
}

/// A stage's activations in parts: what each micro-batch in flight keeps, and what the stage holds
/// once whatever is in flight.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(super) struct ActivationShape {
    /// One micro-batch's bytes kept on the device.
    pub(super) per_microbatch: f64,
    /// Recomputation's working set.
    pub(super) working: f64,
    /// Swap-attention's window of two layers' attention tensors.
    pub(super) swap_window: f64,
    /// The layer being copied to or from the host.
    pub(super) offload_window: f64,
    /// One micro-batch's bytes offloaded to the host.
    pub(super) offloaded: f64,
    /// The stage's first layer's activations, as its forward saves them: what the end of a
    /// backward still holds, recomputed or kept.
    pub(super) first_layer: f64,
}

/// Whether a plan's activation shapes scale with its micro-batch ([`ActivationShape::scaled`]):
/// every part sums bytes proportional to the micro-batch's tokens but where the step packs its
/// sequences by tokens ([`micro_batch_shape`]: one row whatever the micro-batch) or runs under
/// plain PyTorch (DoRA's fp32 weight copies there are the same for any tokens,
/// [`dora_saved_bytes`], and the step's peak moment is picked per micro-batch).
pub(super) fn scales_with_micro_batch(ctx: &Ctx) -> bool {
    let packed = matches!(ctx.plan.method, Method::Grpo | Method::Ppo) && ctx.plan.rl.dynamic_batch;
    !packed && !ctx.plain_torch
}

impl ActivationShape {
    /// The shape at `factor` times the micro-batch, `factor` a power of two (or its inverse), of a
    /// plan whose shapes scale with it ([`scales_with_micro_batch`]): scaling by a power of two
    /// rounds nowhere, so these are the bytes worked out afresh, to the bit (debug builds check
    /// it: `stage_shape`).
    pub(super) fn scaled(&self, factor: f64) -> ActivationShape {
        ActivationShape {
            per_microbatch: self.per_microbatch * factor,
            working: self.working * factor,
            swap_window: self.swap_window * factor,
            offload_window: self.offload_window * factor,
            offloaded: self.offloaded * factor,
            first_layer: self.first_layer * factor,
        }
    }

    /// Activations on the device of a rank with `in_flight` micro-batches in flight
    /// ([`InFlight::at`]), with recomputation.
    pub(super) fn on_device(&self, in_flight: f64) -> u64 {
        (self.per_microbatch * in_flight + self.working + self.swap_window + self.offload_window) as u64
    }
}

/// One micro-batch's saved bytes over a stage's `n` layers (`sum_bytes` over a range of positions), and the
/// working set recomputation adds once, under full recomputation's `method` over groups of
/// `group` layers (`None`: no full recomputation) with `hidden` bytes of a layer's input.
pub(super) fn recomputed_layers(
    full_method: Option<RecomputeMethod>,
    n: u64,
    group: u64,
    hidden: f64,
    sum_bytes: &dyn Fn(u64, u64) -> f64,
) -> (f64, f64) {
    match full_method {
        None => (sum_bytes(0, n), 0.0),
        // Uniform: each group of `num_layers` keeps its input; backward recomputes one group at a time.
        Some(RecomputeMethod::Uniform) => {
            let n_groups = n.div_ceil(group) as f64;
            let one_group = sum_bytes(0, n.min(group));
            (n_groups * hidden, one_group)
        }
        // Block: the first `num_layers` layers keep only their inputs, the rest everything.
        Some(RecomputeMethod::Block) => {
            let recomputed = n.min(group) as f64 * hidden;
            let kept = sum_bytes(n.min(group), n);
            let one = sum_bytes(0, n.min(1));
            (recomputed + kept, one)
        }
    }
}

/// [`recomputed_layers`] chunk by chunk: with virtual stages every model chunk is a
/// `TransformerBlock` of its own, whose `_checkpointed_forward` counts `recompute_num_layers` over
/// its own layers (megatron/core/transformer/transformer_block.py at core_v0.19.0), so the block
/// method recomputes the first ones of each chunk and the uniform one groups each chunk's. The
/// chunks' saved bytes add up; their working sets do not (one chunk recomputes at a time).
pub(super) fn recomputed_by_chunk(
    layers: &StageLayers,
    full_method: Option<RecomputeMethod>,
    (num_layers, hidden, window): (u64, f64, std::ops::Range<u64>),
    sum_bytes: &dyn Fn(u64, u64) -> f64,
) -> (f64, f64) {
    // Every chunk alike (a dense model's even split, no activation-function window): the first
    // chunk's figures, added up as the fold below adds them, without its per-chunk bookkeeping (a
    // search walks VPP up to 40 and reads this for every plan).
    if window.is_empty() && layers.arch.moe.is_none() {
        let length =
            |stage: &crate::layout::VirtualStage| stage.layers.end.saturating_sub(stage.layers.start);
        let mut stages = layers.layout.rank_stages(layers.rank);
        let c = stages.clone().next().map_or(0, length);
        if stages.all(|stage| length(stage) == c) {
            let (k, w) = recomputed_layers(full_method, c, num_layers.clamp(1, c.max(1)), hidden, sum_bytes);
            let (mut kept, mut working) = (0.0, 0.0f64);
            for _ in 0..layers.layout.chunks {
                (kept, working) = (kept + k, working.max(w));
            }
            // The same figures as chunk by chunk, to the bit: checked wherever tests reach here.
            debug_assert_eq!(
                (kept, working),
                chunk_by_chunk(layers, full_method, (num_layers, hidden, window), sum_bytes)
            );
            return (kept, working);
        }
    }
    chunk_by_chunk(layers, full_method, (num_layers, hidden, window), sum_bytes)
}

/// [`recomputed_by_chunk`] one chunk at a time.
fn chunk_by_chunk(
    layers: &StageLayers,
    full_method: Option<RecomputeMethod>,
    (num_layers, hidden, window): (u64, f64, std::ops::Range<u64>),
    sum_bytes: &dyn Fn(u64, u64) -> f64,
) -> (f64, f64) {
    let mut from = 0;
    // A chunk whose layers all save alike (one kind, all inside or all outside the
    // activation-function window) has figures that depend on its length, kind and side alone:
    // worked out once for each, so that a rank of many chunks costs one pass over them (each
    // `sum_bytes` walks the rank's chunks). At most two chunks straddle the window's ends.
    // Kept on the stack: an even split's chunks are of one kind, an uneven one's of a few lengths
    // (a kind past the fourth is worked out each time, to the same figures). Key: the chunk's length,
    // whether its layers are MoE, whether they are inside the window.
    let mut seen = [((0, false, false), (0.0, 0.0)); 4];
    let mut n_seen = 0;
    layers.layout.rank_stages(layers.rank).fold((0.0, 0.0f64), |(kept, working), stage| {
        let c = stage.layers.end.saturating_sub(stage.layers.start);
        let moe = model::moe_layers_in(layers.arch, stage.layers.clone());
        let at = from;
        let inside = window.start <= at && at + c <= window.end;
        let outside = window.is_empty() || at + c <= window.start || window.end <= at;
        let key = (c, 0 < moe, inside);
        let alike = (inside || outside) && (moe == 0 || moe == c);
        from += c;
        let known = match alike {
            true => seen[..n_seen].iter().find(|(k, _)| *k == key).map(|(_, figures)| *figures),
            false => None,
        };
        let (k, w) = match known {
            Some(figures) => figures,
            None => {
                let chunk_sum = |a: u64, b: u64| sum_bytes(at + a, at + b);
                let figures =
                    recomputed_layers(full_method, c, num_layers.clamp(1, c.max(1)), hidden, &chunk_sum);
                if alike && n_seen < seen.len() {
                    seen[n_seen] = (key, figures);
                    n_seen += 1;
                }
                figures
            }
        };
        (kept + k, working.max(w))
    })
}

/// What every layer saves under the plan's selective recomputation: it reruns the modules
/// `--recompute-modules` names.
pub(super) fn selectively_saved(plan: &Plan) -> Saved {
    let selective = plan.recompute.granularity == RecomputeGranularity::Selective;
    let modules = recompute_modules(plan);
    Saved {
        selective: selective && modules.core_attn,
        mlp: selective && modules.mlp,
        layernorm: selective && modules.layernorm,
        moe_act: selective && modules.moe_act,
        moe: selective && modules.moe,
        shared_experts: selective && modules.shared_experts,
        mla_up_proj: selective && modules.mla_up_proj,
        ..Saved::default()
    }
}

/// One layer's activation bytes by its kind and what it saves, each worked out once per plan: a
/// layer's bytes depend on those, not on its position or its stage, and a stage holds dozens of
/// layers of at most two kinds. What a layer saves varies within a stage only by the activation-function window
/// and swap-attention, so a layer's kind and those two bits index the memo.
pub(super) struct KindBytes<'a> {
    pub(super) ctx: &'a Ctx<'a>,
    /// The stage's shape of a layer; `saved` is set per call.
    pub(super) case: LayerCase,
    /// What a layer's LoRA dropout and DoRA keep beside it ([`lora_dropout_bytes`],
    /// [`dora_saved_bytes`]).
    adapters: f64,
    pub(super) memo: [std::cell::Cell<Option<f64>>; 8],
}

impl<'a> KindBytes<'a> {
    /// The plan's layer shape, no kind worked out yet.
    pub(super) fn new(ctx: &'a Ctx<'a>) -> KindBytes<'a> {
        let plan = ctx.plan;
        let megatron = ctx.path == Path::Megatron;
        let (b, seq) = micro_batch_shape(ctx);
        KindBytes {
            ctx,
            case: LayerCase {
                megatron,
                attention: plan.attention,
                seq_len: seq,
                micro_batch: b,
                tp: ctx.tp,
                sequence_parallel: megatron && plan.parallel.sequence_parallel && 1 < ctx.tp,
                saved: selectively_saved(plan),
                fp8_inputs: fp8_linear(plan),
                liger: !megatron && liger(plan),
            },
            adapters: lora_dropout_bytes(ctx, (seq * b) as f64) + dora_saved_bytes(ctx, (seq * b) as f64),
            memo: Default::default(),
        }
    }

    pub(super) fn bytes(&self, moe_layer: bool, saved: Saved) -> f64 {
        let slot = &self.memo[usize::from(moe_layer) * 4
            + usize::from(saved.activation_function) * 2
            + usize::from(saved.without_attention)];
        if let Some(bytes) = slot.get() {
            return bytes;
        }
        let case = LayerCase { saved, ..self.case };
        let padding = match moe_layer && case.megatron {
            true => {
                moe_padding_bytes(self.ctx.plan, (case.seq_len * case.micro_batch) as f64, self.ctx.tp as f64)
            }
            false => 0.0,
        };
        let bytes = layer_activation_bytes(self.ctx.arch, moe_layer, &case) + padding + self.adapters;
        slot.set(Some(bytes));
        bytes
    }
}

/// The bytes a layer's LoRA dropout keeps for backward for `tokens` tokens, an average layer's.
///
/// PEFT runs a dropout of its own on each adapter's input (`LoraLayer.update_layer`:
/// `nn.Dropout(p=lora_dropout)`, `nn.Identity` at 0; `Linear.forward`:
/// `lora_B(lora_A(dropout(x)))`), so q, k and v, which share their input, each drop their own
/// copy. The dropout keeps its mask: PyTorch's fused kernel, which CUDA and NPU devices run
/// (`is_fused_kernel_acceptable`, aten/src/ATen/native/Dropout.cpp), returns a bool mask, a byte
/// an element, that `native_dropout`'s backward reads (`native_dropout_cuda`,
/// aten/src/ATen/native/cuda/Dropout.cu); torch_npu's packs a bit an element
/// (`npu_dropout_gen_mask`: ⌈n/128⌉·128/8 bytes). Under autocast (fp32 adapters on a 16-bit base,
/// LLaMA-Factory without DeepSpeed) `lora_A` saves a 16-bit copy of its input with or without the
/// dropout, so the mask is all that is new; with 16-bit adapters (a DeepSpeed engine casts the
/// model) `lora_A` saved the base's own input before and now saves the dropped copy, 2 bytes more. On CPU the same step
/// keeps a noise tensor of the input's type instead (tools/hf_activations `autocast.py`:
/// 4 bytes × (5h + q + f) more a token and layer at Llama-3.2-1B's widths, 40h).
fn lora_dropout_bytes(ctx: &Ctx, tokens: f64) -> f64 {
    let plan = ctx.plan;
    if !(plan.trains_lora() && 0.0 < plan.lora.dropout) {
        return 0.0;
    }
    let mask = match plan.hardware.hw.vendor {
        crate::hardware::Vendor::Ascend => 0.125,
        _ => 1.0,
    };
    let copy = if super::loss::runs_deepspeed(plan) { 2.0 } else { 0.0 };
    let inputs_per_layer = ctx.lora_inputs.0 as f64 / ctx.arch.n_layers.max(1) as f64;
    (mask + copy) * inputs_per_layer * tokens
}

/// The bytes a layer's DoRA keeps for backward for `tokens` tokens, an average layer's: PEFT's
/// `DoraLinearLayer.forward` rescales each adapted module's output as
/// `(m/‖W + sBA‖ − 1) · base_result + m/‖W + sBA‖ · lora_result · s`, and the trained magnitude
/// `m`'s gradient needs both outputs: two 16-bit tensors of the module's output width (the base's
/// output is reused where no dropout runs, `DoraLinearVariant.forward`; with one, the base is run
/// again on the dropped input, whose copy the adapter already keeps). Measured with PEFT 0.18.1
/// under autocast (tools/hf_activations `autocast.py`, `lora-dora`): at Llama-3.2-1B's widths 46h
/// a token and layer more than LoRA, exactly 4 bytes × the output widths (q 2048, k 512, v 512,
/// o 2048, gate 8192, up 8192, down 2048: 23,552 = 11.5h).
///
/// Under plain PyTorch with fp32 adapters and a dropout the base's second run is `F.linear` on the fp32 input with
/// the base weight copied to fp32, which autocast casts back to a 16-bit copy that the GEMM keeps
/// for backward: 2 bytes a weight element of every adapted module, whatever the tokens (measured:
/// 121.6 MB a layer at Llama-3.2-1B's widths, its 60.8 M linear weights).
fn dora_saved_bytes(ctx: &Ctx, tokens: f64) -> f64 {
    let layers = ctx.arch.n_layers.max(1) as f64;
    let weight_copies = match ctx.fp32_trainables && 0.0 < ctx.plan.lora.dropout {
        true => 2.0 * ctx.dora.weights as f64,
        false => 0.0,
    };
    (4.0 * ctx.dora.outputs as f64 * tokens + weight_copies) / layers
}

/// The activations of a stage holding `layers` (and the embedding, and `mtp` MTP layers).
pub(super) fn activation_shape(
    ctx: &Ctx,
    kinds: &KindBytes,
    layers: &StageLayers,
    embedding: bool,
    mtp: u64,
) -> ActivationShape {
    layers_shape(ctx, kinds, layers).with(embedding, mtp)
}

/// What a stage's decoder layers keep ([`layers_shape`]), before the embedding's output and the MTP
/// layers are added ([`LayersShape::with`]): ranks whose layers are alike share it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct LayersShape {
    /// One micro-batch's bytes the layers keep on the device (those offloaded taken out).
    kept: f64,
    working: f64,
    swap_window: f64,
    offload_window: f64,
    offloaded: f64,
    first_layer: f64,
    /// The embedding's output, on the stage that holds the embedding, with a trained vision
    /// encoder's saved bytes there ([`encoder_activations`]).
    embedding: f64,
    /// What each MTP layer keeps.
    mtp_layer: f64,
    /// A trained vision encoder's working set under recomputation, on the stage that holds the
    /// embedding.
    encoder_working: f64,
}

impl LayersShape {
    /// The stage's activations with the embedding's output (`embedding`) and `mtp` MTP layers:
    /// the same sums in the same order as [`activation_shape`] worked out whole.
    pub(super) fn with(&self, embedding: bool, mtp: u64) -> ActivationShape {
        // The larger working set without `f64::max`'s NaN handling: byte counts are never NaN.
        let (embedding, working) = match embedding {
            true if self.working < self.encoder_working => (self.embedding, self.encoder_working),
            true => (self.embedding, self.working),
            false => (0.0, self.working),
        };
        ActivationShape {
            per_microbatch: self.kept + embedding + mtp as f64 * self.mtp_layer,
            working,
            swap_window: self.swap_window,
            offload_window: self.offload_window,
            offloaded: self.offloaded,
            first_layer: self.first_layer,
        }
    }
}

/// What the decoder layers `layers` keep for backward ([`LayersShape`]).
pub(super) fn layers_shape(ctx: &Ctx, kinds: &KindBytes, layers: &StageLayers) -> LayersShape {
    let plan = ctx.plan;
    let arch = ctx.arch;
    // The plan's layer shape, as the layers' bytes were worked out for.
    let LayerCase { megatron, micro_batch: b, seq_len: seq, sequence_parallel: sp, saved, .. } = kinds.case;
    let rc = &plan.recompute;
    let full = rc.granularity == RecomputeGranularity::Full;
    let n = layers.n;
    // LLaMA-Factory on Ascend checkpoints the first `recompute_layers_ratio` of the layers and keeps
    // the rest: the block method over that many layers.
    let ratio = plan.framework == Framework::LlamaFactory && rc.layers_ratio_frac < 1.0;
    let (method, group) = match ratio {
        true => (RecomputeMethod::Block, (rc.layers_ratio_frac * n as f64).ceil() as u64),
        false => (rc.method, u64::from(rc.num_layers.get()).clamp(1, n.max(1))),
    };
    // MindSpeed's activation-function recompute (the Megatron path only) covers
    // `--recompute-activation-function-num-layers` layers of the stage, after the fully recomputed
    // ones of the block method: "no layer is both fully and activation-function recomputed".
    let act_fn_from = match (full, method) {
        (true, RecomputeMethod::Block) => group,
        _ => 0,
    };
    let act_fn_to = match rc.activation_function_layers {
        0 => n,
        k => act_fn_from + u64::from(k),
    };
    let bytes_of = |moe_layer: bool, saved: Saved| kinds.bytes(moe_layer, saved);
    // What the layer at a position saves: the activation-function window, and swap-attention
    // (MindSpeed), which keeps the attention tensors of the layer being computed and the one being
    // prefetched on the device while the others wait in host memory.
    let act_fn = megatron && rc.activation_function;
    let swap = megatron && rc.swap_attention;
    let saved_in =
        |window: bool| Saved { activation_function: act_fn && window, without_attention: swap, ..saved };
    let layer_with = |pos: u64, saved: Saved| bytes_of(layers.moe_at(pos), saved);
    let in_window = |pos: u64| (act_fn_from..act_fn_to).contains(&pos);
    let layer_bytes = |pos: u64| layer_with(pos, saved_in(in_window(pos)));
    // The layers at positions `from..to`, counted by kind inside and outside the window.
    let sum_bytes = |from: u64, to: u64| -> f64 {
        let inside = (from.max(act_fn_from), to.min(act_fn_to));
        let parts = [
            (from, to.min(act_fn_from), false),
            (inside.0, inside.1.max(inside.0), true),
            (from.max(act_fn_to), to, false),
        ];
        // A plain loop over the three parts: the iterator chain it replaces (filter, map, sum over
        // an array's `IntoIter`) stayed a chain of calls in the page's size-first build.
        let mut total = 0.0;
        for &(a, z, window) in &parts {
            if a < z {
                let moe = layers.moe_in(a, z);
                let dense = z - a - moe;
                let of = |moe_layer: bool, count: u64| match count {
                    0 => 0.0,
                    k => k as f64 * bytes_of(moe_layer, saved_in(window)),
                };
                total += of(false, dense) + of(true, moe);
            }
        }
        total
    };
    let swap_window = match (swap, n) {
        (true, 1..) => {
            let at_0 = Saved { activation_function: act_fn && in_window(0), ..saved };
            2.0 * (layer_with(0, at_0) - layer_with(0, Saved { without_attention: true, ..at_0 }))
        }
        _ => 0.0,
    };
    // A checkpoint keeps its input: sequence parallelism leaves each TP rank its share of it, and
    // so does Megatron's `--distribute-saved-activations` under full recomputation
    // (`split_tensor_into_1d_equal_chunks` in `CheckpointFunction.forward`,
    // megatron/core/tensor_parallel/random.py at core_v0.19.0).
    let split = sp || (megatron && full && rc.distribute_saved_activations);
    let hidden = (2 * seq * b * arch.hidden_size) as f64 / if split { ctx.tp as f64 } else { 1.0 };

    // Megatron's activation offloading (`--cpu-offloading-num-layers N`: Transformer Engine's
    // `get_cpu_offload_context` in megatron/core/transformer/transformer_block.py): the first N
    // layers' saved tensors go to host memory after their forward and come back before their
    // backward; the layer being copied stays on the device.
    let offloaded = offloaded_layers(plan, n);
    let offload_window = if 0 < offloaded && 0 < n { layer_bytes(0) } else { 0.0 };
    let offloaded_bytes = sum_bytes(0, offloaded.min(n));
    let full_method = full.then_some(method);
    let (per_microbatch, working) = match layers.layout.chunks {
        2.. if full_method.is_some() => {
            let window = if act_fn { act_fn_from..act_fn_to } else { 0..0 };
            let chunks = (u64::from(rc.num_layers.get()), hidden, window);
            recomputed_by_chunk(layers, full_method, chunks, &sum_bytes)
        }
        _ => recomputed_layers(full_method, n, group, hidden, &sum_bytes),
    };
    // The embedding's output (and its dropout mask) on the first stage.
    let embedding = hidden * if megatron && has_dropout(arch) { 1.5 } else { 1.0 };
    // Each MTP layer keeps what a decoder layer like the model's last keeps, plus its inputs: the
    // previous depth's hidden state and the next token's embedding, concatenated and projected
    // (DeepSeek-V3 §2.2); its recomputation follows the plan's like any layer's.
    let mtp_layer = match full {
        true => 3.0 * hidden,
        false => layer_with(n, saved) + 3.0 * hidden,
    };
    // Asked only of a model with an encoder: a check every estimate pays, out of line.
    let (encoder, encoder_working) = match &arch.vision {
        None => (0.0, 0.0),
        Some(vision) => encoder_activations(plan, vision, (seq, b), full),
    };
    LayersShape {
        kept: per_microbatch - offloaded_bytes,
        working,
        swap_window,
        offload_window,
        offloaded: offloaded_bytes,
        first_layer: sum_bytes(0, n.min(1)),
        embedding: embedding + encoder,
        mtp_layer,
        encoder_working,
    }
}

/// What a vision encoder the plan trains ([`vision_encoder`]: VeRL's, a DeepSpeed full
/// fine-tune's) keeps for backward over a micro-batch of `seq` tokens × `b` sequences on one
/// device, as (saved bytes, recomputation's working set): the micro-batch's image tokens (each
/// sequence's `batch.image_tokens` share of its tokens, so a packed row holds its sequences'
/// share) times what each saves in the encoder's blocks ([`crate::vision::Encoder`]); under full
/// recomputation (Hugging Face gradient checkpointing, which checkpoints the encoder's blocks with
/// the decoder's) the blocks' inputs, and one block's bytes while its backward recomputes it. A
/// frozen encoder saves nothing: no gradient flows into it. Not split by TP (VeRL's Megatron
/// engine splits the encoder's weights; its activations are counted whole, an upper bound); the
/// patch embedding's and the merger's own are left out.
#[inline(never)]
fn encoder_activations(
    plan: &Plan,
    v: &crate::vision::Encoder,
    (seq, b): (u64, u64),
    full: bool,
) -> (f64, f64) {
    if plan.batch.image_tokens == 0 || !matches!(vision_encoder(plan), VisionEncoder::Trained) {
        return (0.0, 0.0);
    }
    let sample = train_seq_len(plan).max(1) as f64;
    let images = (seq * b) as f64 * (f64::from(plan.batch.image_tokens).min(sample) / sample);
    match full {
        true => (
            // The blocks' inputs, 2 bytes a value: 2 · width a patch and block.
            images * (2 * v.token_patches * v.depth * v.width) as f64,
            images * v.token_saved_bytes as f64 / v.depth.max(1) as f64,
        ),
        false => (images * v.token_saved_bytes as f64, 0.0),
    }
}

/// The modules selective recomputation reruns as the plan's framework is told: Megatron-LM's
/// `--recompute-modules`; MindSpeed-LLM's (Megatron core 0.12.1, no `shared_experts`); elsewhere the
/// attention core only (MindSpeed-RL writes no modules; the HF path's selective mode is attention's).
pub fn recompute_modules(plan: &Plan) -> crate::plan::RecomputeModules {
    let modules = plan.recompute.modules;
    match plan.framework {
        Framework::Megatron => modules,
        Framework::MindSpeedLlm => crate::plan::RecomputeModules { shared_experts: false, ..modules },
        _ => crate::plan::RecomputeModules::DEFAULT,
    }
}

/// Layers of a stage of `n_layers` whose activations Megatron offloads to the host
/// (`--cpu-offloading-num-layers`, Megatron-LM only; at most the stage's layers).
pub(super) fn offloaded_layers(plan: &Plan, n_layers: u64) -> u64 {
    match plan.framework {
        Framework::Megatron => u64::from(plan.recompute.cpu_offload_layers).min(n_layers),
        _ => 0,
    }
}

/// Tokens per trained sequence: the batch's `seq_len`, or for RL a prompt and its response
/// (VeRL trains on `max_prompt_length + max_response_length`).
pub fn train_seq_len(plan: &Plan) -> u64 {
    match plan.method {
        Method::Grpo | Method::Ppo => u64::from(plan.rl.sequence_tokens()),
        _ => u64::from(plan.batch.seq_len.get()),
    }
}

/// One micro-batch on one device as (sequences, tokens each), after the context-parallel split.
/// RL with dynamic batching packs sequences up to a token budget instead (VeRL `use_dynamic_bsz` +
/// `ppo_max_token_len_per_gpu`, each device's; MindSpeed-RL `max_packing_token_size`, the packed
/// row's, which its CP group splits): one packed row of that many tokens on each device, the
/// worst case the packer allows.
pub(super) fn micro_batch_shape(ctx: &Ctx) -> (u64, u64) {
    let plan = ctx.plan;
    let rl = matches!(plan.method, Method::Grpo | Method::Ppo);
    match rl && plan.rl.dynamic_batch {
        true => {
            let budget = u64::from(plan.rl.tokens_per_device(plan.framework, ctx.cp as u32));
            // The packed row, split over the CP group.
            let row = budget * u64::from(crate::plan::packed_row_budgets(plan.framework, ctx.cp as u32));
            (1, row.div_ceil(ctx.cp).max(train_seq_len(plan).div_ceil(ctx.cp)))
        }
        false => (
            u64::from(plan.batch.micro_batch.get()) * sequences_per_sample(plan.method),
            train_seq_len(plan).div_ceil(ctx.cp),
        ),
    }
}

/// Sequences a sample puts through the model: DPO's pair, its chosen and its rejected response in
/// one batch, twice the micro-batch (LLaMA-Factory `PairwiseDataCollatorWithPadding`:
/// "2 * n examples where the first n examples represent chosen examples"; MindSpeed-LLM's
/// `DPOTrainer` splits its logits in chosen and rejected halves), else one.
pub fn sequences_per_sample(method: Method) -> u64 {
    if method.is_dpo() { 2 } else { 1 }
}

/// Micro-batches whose activations stage `stage_idx` holds at its peak.
///
/// 1F1B (Narayanan et al. 2021 §2.2): stage i runs p − i warm-up forwards, so it holds min(p − i, m).
/// Interleaved 1F1B with v chunks (Megatron `schedules.py`, `get_num_warmup_microbatches`):
/// (p − i − 1)·2 + (v − 1)·p warm-up chunk forwards plus one, each of 1/v of the stage's layers.
pub fn in_flight_microbatches(pp: u64, vpp: u64, stage_idx: u64, n_microbatches: u64) -> f64 {
    if pp <= 1 {
        return 1.0;
    }
    if vpp <= 1 {
        return (pp - stage_idx).min(n_microbatches) as f64;
    }
    let chunks = (pp - stage_idx - 1) * 2 + (vpp - 1) * pp + 1;
    chunks.min(n_microbatches * vpp) as f64 / vpp as f64
}

/// Micro-batches in flight on each rank of a plan ([`in_flight_microbatches`], and GPipe's and
/// DualPipeV's), its terms worked out once: each rank's count is then `(first − per_rank · rank)`
/// capped at `most`, over `chunks`. Every term is a whole number below 2^53 (exact as a float) or
/// DualPipeV's half, and converting to a float is monotone (it commutes with `min`), so each count
/// is the integer formula's to the bit (`tests::in_flight_is_the_formula_per_rank`).
#[derive(Clone, Copy, Debug)]
pub(super) struct InFlight {
    pub(super) first: f64,
    pub(super) per_rank: f64,
    pub(super) most: f64,
    pub(super) chunks: f64,
}

impl InFlight {
    pub(super) fn of(ctx: &Ctx) -> InFlight {
        InFlight::new(ctx.plan.parallel.schedule, ctx.pp, ctx.vpp, ctx.m)
    }

    /// `schedule` over `pp` ranks of `vpp` chunks each, `m` micro-batches a step.
    pub(super) fn new(schedule: crate::plan::PipelineSchedule, pp: u64, vpp: u64, m: u64) -> InFlight {
        use crate::plan::PipelineSchedule;
        let flat = |n: f64, most: f64| InFlight { first: n, per_rank: 0.0, most, chunks: 1.0 };
        match schedule {
            _ if pp <= 1 => flat(1.0, f64::INFINITY),
            // GPipe runs every forward before any backward.
            PipelineSchedule::GPipe => flat(m as f64, f64::INFINITY),
            // DualPipeV (deepseek-ai/DualPipe README): PP + 1 micro-batches of one of the 2·pp
            // stages, i.e. pp + ½ micro-batches of this rank's layers, on every rank.
            PipelineSchedule::DualPipeV => flat(pp as f64 + 0.5, m as f64),
            _ if vpp <= 1 => InFlight { first: pp as f64, per_rank: 1.0, most: m as f64, chunks: 1.0 },
            _ => InFlight {
                first: ((pp - 1) * 2 + (vpp - 1) * pp + 1) as f64,
                per_rank: 2.0,
                most: (m * vpp) as f64,
                chunks: vpp as f64,
            },
        }
    }

    /// Micro-batches in flight on `rank`. Asked once per rank of every plan, so in the fewest
    /// instructions that give the same float: the rank through `i64` (one conversion, where `u64`
    /// takes five), the cap as a comparison (no count is NaN, so `f64::min`'s check for it is
    /// idle), and no division by one chunk (`x / 1.0` is `x`).
    pub(super) fn at(&self, rank: u64) -> f64 {
        let n = self.first - self.per_rank * rank as i64 as f64;
        let n = if n < self.most { n } else { self.most };
        if self.chunks == 1.0 { n } else { n / self.chunks }
    }
}
