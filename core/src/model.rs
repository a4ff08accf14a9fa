//! Model architectures and their exact parameter accounting.
//!
//! An [`Architecture`] is the shape of a decoder-only transformer as its HF `config.json` gives it:
//! GPT-2 style (LayerNorm, GELU MLP with biases, learned positions), Llama-style dense decoders
//! (RMSNorm, SwiGLU, GQA, optional qkv bias and q/k norm), and mixtures of experts (Mixtral,
//! Qwen2-MoE, Qwen3-MoE, DeepSeek-V2/V3 with multi-head latent attention, gpt-oss with attention sinks,
//! sliding windows and biased experts).
//!
//! [`tensors`] lists every parameter tensor the reference implementation (HF transformers 4.x)
//! creates, grouped by shape with a multiplicity. Counts, LoRA sizes and sharded sizes are all
//! derived from that one list, so they cannot disagree; `core/tests/it/params.rs` checks each catalog
//! model against its published count.

/// The shape of a decoder-only transformer.
///
/// Field names follow HF `config.json` without prefixes (`hf::import` reads each from its key).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Architecture {
    /// The HF `model_type` this shape was read as (`llama`, `qwen2`, `deepseek_v3`, …).
    pub family: Family,
    /// Vocabulary size: rows of the embedding and of the output head.
    pub vocab_size: u64,
    /// Model width `h`.
    pub hidden_size: u64,
    /// Number of decoder layers (MTP layers not included).
    pub n_layers: u64,
    /// The attention block.
    pub attention: Attention,
    /// The dense MLP (every layer of a dense model; the first layers of some MoE models).
    pub mlp: Mlp,
    /// The mixture of experts, if any.
    pub moe: Option<Moe>,
    /// LayerNorm (weight and bias) or RMSNorm (weight only).
    pub norm: Norm,
    /// Whether each layer also normalizes the outputs of attention and MLP (GLM-4-0414: four norms a layer).
    pub post_norms: bool,
    /// Learned absolute positions (GPT-2's `wpe`) of this many rows; 0 for rotary positions.
    pub learned_positions: u64,
    /// Context length the model was trained for (`max_position_embeddings`).
    pub max_position_embeddings: u64,
    /// Whether the output head shares the embedding matrix (`tie_word_embeddings`).
    pub tied_embeddings: bool,
    /// DeepSeek-V3's multi-token-prediction layers (`num_nextn_predict_layers`): in the checkpoint and
    /// in training, but not instantiated by HF transformers, so counted apart from `total`.
    pub n_mtp_layers: u64,
    /// A learned logit per head that every query's softmax also normalizes over (gpt-oss's
    /// `sinks`, one parameter a head a layer: transformers `GptOssAttention`).
    pub attention_sinks: bool,
    /// Layers whose attention reaches back a fixed window of tokens only (gpt-oss's
    /// `sliding_window` on its `sliding_attention` layers, Mistral's and Mixtral's on every layer);
    /// `None` where every layer attends to the whole sequence.
    pub sliding_window: Option<SlidingWindow>,
    /// Gated DeltaNet layers in place of attention on all but every `full_every`-th layer
    /// (Qwen3-Next's `linear_attention` layers); `None` where every layer is an attention layer.
    pub linear_attention: Option<LinearAttention>,
    /// A sigmoid gate on the attention's output, its weights a second query projection
    /// (transformers `Qwen3NextAttention`: `q_proj` of 2 · heads · head_dim, `attn_output *
    /// torch.sigmoid(gate)`; Megatron-LM `--attention-output-gate`).
    pub attention_output_gate: bool,
    /// Gemma 2's soft cap on the output logits (`final_logit_softcapping`: `tanh(logits / cap) ·
    /// cap`, transformers `Gemma2ForCausalLM.forward`), whose tanh keeps its output for backward.
    pub logit_softcap: bool,
    /// A multimodal wrapper's vision encoder and projector ([`crate::vision::encoder`]), `None` for
    /// a language model alone (boxed: most models have none, and every estimate reads the
    /// architecture). Not among the counts (`count_params` is the language model's): the
    /// frameworks that load the whole wrapper hold it on the first stage (`memory::states`) and run
    /// it over each sequence's image tokens (`batch.image_tokens`: `time`, and where it trains,
    /// `memory`'s activations).
    pub vision: Option<Box<crate::vision::Encoder>>,
}

/// Gated DeltaNet (Yang et al. 2024, arXiv 2412.06464), a linear-attention layer: queries, keys,
/// values, an output gate `z`, and per value head a decay `a` and a step size `b`, projected from
/// the input; a causal depthwise convolution over q, k and v; the delta rule's recurrent state of
/// `key_head_dim × value_head_dim` per value head; a gated RMSNorm; the output projection.
/// Shapes: transformers `Qwen3NextGatedDeltaNet` (modeling_qwen3_next.py): `in_proj_qkvz` of
/// (2·key_dim + 2·value_dim) × h, `in_proj_ba` of 2·value_heads × h, `conv1d` of
/// (2·key_dim + value_dim) × 1 × kernel without bias, `dt_bias` and `A_log` of value_heads each,
/// `norm` of value_head_dim, `out_proj` of h × value_dim.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LinearAttention {
    /// Query and key heads (`linear_num_key_heads`).
    pub key_heads: u64,
    /// Value heads (`linear_num_value_heads`), a multiple of the key heads.
    pub value_heads: u64,
    /// Width of a query or key head (`linear_key_head_dim`).
    pub key_head_dim: u64,
    /// Width of a value head (`linear_value_head_dim`).
    pub value_head_dim: u64,
    /// The convolution's width (`linear_conv_kernel_dim`).
    pub conv_kernel: u64,
    /// Every `full_every`-th layer (counted from 1) is an attention layer, the others Gated
    /// DeltaNet (`full_attention_interval`, or the config's `layer_types` where they repeat so).
    pub full_every: u64,
    /// The input projections as four modules (Qwen3.5's `Qwen3_5GatedDeltaNet`: `in_proj_qkv`,
    /// `in_proj_z`, `in_proj_b`, `in_proj_a`) rather than Qwen3-Next's two (`in_proj_qkvz`,
    /// `in_proj_ba`): the same weights, other LoRA adapters.
    pub split_in_proj: bool,
}

impl LinearAttention {
    /// Queries' (and keys') width over all heads.
    pub fn key_dim(&self) -> u64 {
        self.key_heads.saturating_mul(self.key_head_dim)
    }

    /// Values' width over all heads.
    pub fn value_dim(&self) -> u64 {
        self.value_heads.saturating_mul(self.value_head_dim)
    }
}

/// Whether decoder layer `layer_idx` is a Gated DeltaNet layer.
pub fn is_linear_attention_layer(arch: &Architecture, layer_idx: u64) -> bool {
    arch.linear_attention.is_some_and(|l| !(layer_idx + 1).is_multiple_of(l.full_every.max(1)))
}

/// How many of the decoder layers `layers` are Gated DeltaNet layers, counted without walking them.
pub fn linear_attention_layers_in(arch: &Architecture, layers: std::ops::Range<u64>) -> u64 {
    let Some(linear) = arch.linear_attention else { return 0 };
    if layers.end <= layers.start {
        return 0;
    }
    let k = linear.full_every.max(1);
    (layers.end - layers.start) - (layers.end / k - layers.start / k)
}

/// The share of the model's decoder layers that are Gated DeltaNet layers (0 without them): what a
/// layer's work and saved bytes are averaged by, as the sliding window's share of score pairs is.
pub fn linear_attention_share(arch: &Architecture) -> f64 {
    linear_attention_layers_in(arch, 0..arch.n_layers) as f64 / arch.n_layers.max(1) as f64
}

/// Sliding-window attention on some layers: the same parameters, fewer scores.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SlidingWindow {
    /// Tokens a query attends to, itself included (`sliding_window`).
    pub size: u64,
    /// Every `full_every`-th layer (counted from 1) attends to the whole sequence, the others to
    /// the window: Megatron-LM's `window_attn_skip_freq` (`is_layer_window_attention`,
    /// megatron/core/transformer/utils.py), 2 for gpt-oss's alternating `layer_types`.
    pub full_every: u64,
}

impl SlidingWindow {
    /// How many of `n_layers` layers attend through the window.
    pub fn windowed_layers(&self, n_layers: u64) -> u64 {
        n_layers - n_layers.checked_div(self.full_every).unwrap_or(0)
    }
}

/// The share of a causal attention's score pairs the model's layers compute, averaged over its
/// layers: 1 without sliding windows; a windowed layer over `seq` tokens scores
/// Σ min(i + 1, w) = w(w + 1)/2 + (s − w)·w pairs where a causal one scores s(s + 1)/2.
pub fn attention_pair_share(arch: &Architecture, seq: f64) -> f64 {
    let Some(window) = arch.sliding_window else { return 1.0 };
    let (s, w) = (seq.max(1.0), (window.size as f64).min(seq.max(1.0)));
    let windowed = (w * (w + 1.0) / 2.0 + (s - w) * w) / (s * (s + 1.0) / 2.0);
    let n = arch.n_layers.max(1) as f64;
    let k = window.windowed_layers(arch.n_layers) as f64;
    ((n - k) + k * windowed) / n
}

/// The model families the planner knows, by HF `model_type`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Family {
    /// `gpt2`.
    Gpt2,
    /// `llama` (Llama 2, 3, 3.1, 3.2, and any unknown type read as Llama-like).
    Llama,
    /// `mistral`: Llama's shape with a sliding window on every layer where the config sets one
    /// (`MistralConfig` defaults it to 4096; v0.2 and later write `null`).
    Mistral,
    /// `qwen2` (Qwen2, Qwen2.5): qkv bias.
    Qwen2,
    /// `qwen3`: q/k norm.
    Qwen3,
    /// `glm` (GLM-4-9B in HF's own implementation): qkv bias, fused gate/up.
    Glm,
    /// `glm4` (GLM-4-0414): as `glm` plus post-attention and post-MLP norms.
    Glm4,
    /// `mixtral`.
    Mixtral,
    /// `qwen2_moe`: routed experts plus one gated shared expert.
    Qwen2Moe,
    /// `qwen3_moe`.
    Qwen3Moe,
    /// `deepseek_v2`: MLA and routed + shared experts.
    DeepseekV2,
    /// `deepseek_v3`: as V2 with a routing bias and MTP layers (Kimi K2's `kimi_k2` too).
    DeepseekV3,
    /// `gpt_oss`: biased attention with a learned sink per head, sliding-window attention on every
    /// other layer, routed experts with biases.
    GptOss,
    /// `glm4_moe` (GLM-4.5, GLM-4.5-Air): GQA with q/k/v biases (and q/k norms where
    /// `use_qk_norm`), rotary positions on half of each head, DeepSeek-V3's MoE (dense first
    /// layers, a shared expert, sigmoid routing with a correction bias) and MTP layers.
    Glm4Moe,
    /// `qwen3_next`: Gated DeltaNet on three layers of four, gated attention with q/k norms on the
    /// fourth, routed experts with a gated shared expert.
    Qwen3Next,
    /// `qwen3_5_text`, Qwen3.5's language model (in the `text_config` of a `qwen3_5` config):
    /// Qwen3-Next's layers with a dense MLP, its Gated DeltaNet's input projections split
    /// (`in_proj_qkv`, `in_proj_z`, `in_proj_b`, `in_proj_a`).
    Qwen35,
    /// `qwen3_5_moe_text` (in a `qwen3_5_moe` config): Qwen3-Next's layers, every one holding
    /// experts, its Gated DeltaNet's input projections split as Qwen3.5's.
    Qwen35Moe,
    /// `gemma2`: GQA with a head width of its own, a norm before and after attention and the MLP
    /// each, a GeLU-gated MLP (as wide as SwiGLU's), tied embeddings, a sliding window on every
    /// other layer (transformers `Gemma2Config`, `Gemma2DecoderLayer`).
    Gemma2,
    /// `gemma3_text` (alone, or in a `gemma3` config): Gemma 2's layers with q/k norms, five
    /// windowed layers to each full one (`Gemma3TextConfig.sliding_window_pattern`).
    Gemma3,
    /// `phi3` (Phi-3, Phi-3.5-mini, Phi-4, Phi-4-mini): Llama's layer with q, k and v in one
    /// `qkv_proj` and gate and up in one `gate_up_proj`, no biases, rotary positions on the first
    /// `partial_rotary_factor` of each head, a sliding window on every layer where the config sets
    /// one (transformers `Phi3Config`, `Phi3Attention`, `Phi3MLP`).
    Phi3,
}

impl Family {
    /// Every family, in the order docs and pickers list them.
    pub const ALL: [Family; 20] = [
        Family::Gpt2,
        Family::Llama,
        Family::Mistral,
        Family::Qwen2,
        Family::Qwen3,
        Family::Glm,
        Family::Glm4,
        Family::Mixtral,
        Family::Qwen2Moe,
        Family::Qwen3Moe,
        Family::DeepseekV2,
        Family::DeepseekV3,
        Family::GptOss,
        Family::Glm4Moe,
        Family::Qwen3Next,
        Family::Qwen35,
        Family::Qwen35Moe,
        Family::Gemma2,
        Family::Gemma3,
        Family::Phi3,
    ];

    /// The HF `model_type` string.
    pub fn model_type(self) -> &'static str {
        match self {
            Family::Gpt2 => "gpt2",
            Family::Llama => "llama",
            Family::Mistral => "mistral",
            Family::Qwen2 => "qwen2",
            Family::Qwen3 => "qwen3",
            Family::Glm => "glm",
            Family::Glm4 => "glm4",
            Family::Mixtral => "mixtral",
            Family::Qwen2Moe => "qwen2_moe",
            Family::Qwen3Moe => "qwen3_moe",
            Family::DeepseekV2 => "deepseek_v2",
            Family::DeepseekV3 => "deepseek_v3",
            Family::GptOss => "gpt_oss",
            Family::Glm4Moe => "glm4_moe",
            Family::Qwen3Next => "qwen3_next",
            Family::Qwen35 => "qwen3_5_text",
            Family::Qwen35Moe => "qwen3_5_moe_text",
            Family::Gemma2 => "gemma2",
            Family::Gemma3 => "gemma3_text",
            Family::Phi3 => "phi3",
        }
    }

    /// Whether it has Gated DeltaNet layers (Qwen3-Next's and Qwen3.5's `linear_attention`).
    pub fn has_linear_attention(self) -> bool {
        matches!(self, Family::Qwen3Next | Family::Qwen35 | Family::Qwen35Moe)
    }

    /// Whether its rotary embedding turns only part of each head (`partial_rotary_factor`, 0.5 by
    /// default: transformers `GlmConfig`, `Glm4Config`, `Glm4MoeConfig`).
    pub fn rotates_part_of_each_head(self) -> bool {
        matches!(self, Family::Glm | Family::Glm4 | Family::Glm4Moe)
    }

    /// The family of an HF `model_type`, if known.
    pub fn from_model_type(model_type: &str) -> Option<Family> {
        // Kimi K2 is DeepSeek-V3's architecture under a type of its own, so that inference engines
        // tell the two apart (its config.json names `DeepseekV3ForCausalLM`; Kimi-K2 README,
        // "Other": change `model_type` to `deepseek_v3` where a framework does not know it).
        // DeepSeek-V3.2 is DeepSeek-V3's architecture with a lightning indexer beside each layer's
        // attention (transformers `DeepseekV32Config`, whose other keys and defaults are V3's), which
        // the importer names with its size (`hf::ImportWarning::Indexer`).
        if matches!(model_type, "kimi_k2" | "deepseek_v32") {
            return Some(Family::DeepseekV3);
        }
        // Qwen2-VL's and Qwen2.5-VL's language model is Qwen2's decoder (transformers
        // `Qwen2VLAttention`, `Qwen2_5_VLAttention`: q, k and v with biases, o without; Qwen2's MLP
        // and RMSNorm), under the wrapper's type where its shape is at the top, or its text class's
        // in a `text_config`; Qwen3-VL's is Qwen3's (`Qwen3VLTextAttention`: q/k norms, biases
        // where `attention_bias`). Only their rotary positions (M-RoPE) differ, which hold no
        // parameters.
        if let Some(family) = crate::vision::language_family(model_type) {
            return Some(family);
        }
        Family::ALL.into_iter().find(|f| f.model_type() == model_type)
    }
}

impl Architecture {
    /// The vision encoder's parameters ([`Architecture::vision`]), 0 for a language model alone.
    pub fn vision_params(&self) -> u64 {
        self.vision.as_ref().map_or(0, |v| v.params)
    }
}

/// The attention block of one layer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Attention {
    /// Multi-head attention with grouped key/value heads (MHA when equal, MQA when one).
    Gqa {
        /// Query heads.
        n_heads: u64,
        /// Key/value heads.
        n_kv_heads: u64,
        /// Width of one head.
        head_dim: u64,
        /// Bias on the q, k and v projections.
        qkv_bias: bool,
        /// Bias on the output projection.
        o_bias: bool,
        /// RMSNorm of width `head_dim` on queries and keys (Qwen3).
        qk_norm: bool,
        /// q, k and v are one fused linear module (GPT-2 `c_attn`): the same parameters, but one
        /// LoRA adapter of `in = h, out = q + 2·kv` instead of three.
        fused_qkv: bool,
    },
    /// DeepSeek's multi-head latent attention: queries and keys/values pass through low-rank
    /// compressions (`q_lora_rank`, `kv_lora_rank`); part of each head carries rotary positions.
    Mla {
        /// Heads.
        n_heads: u64,
        /// Query compression rank; `None` projects queries directly (DeepSeek-V2-Lite).
        q_lora_rank: Option<u64>,
        /// Key/value compression rank.
        kv_lora_rank: u64,
        /// Per-head query/key width without rotary positions.
        qk_nope_head_dim: u64,
        /// Per-head query/key width with rotary positions (shared by all heads for keys).
        qk_rope_head_dim: u64,
        /// Per-head value width.
        v_head_dim: u64,
    },
}

impl Attention {
    /// Query heads.
    pub fn n_heads(&self) -> u64 {
        match *self {
            Attention::Gqa { n_heads, .. } | Attention::Mla { n_heads, .. } => n_heads,
        }
    }
}

/// A feed-forward block.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Mlp {
    /// Gated (SwiGLU: gate, up, down) or plain (GELU: up, down).
    pub kind: MlpKind,
    /// Inner width.
    pub intermediate_size: u64,
    /// Bias on every projection (GPT-2).
    pub bias: bool,
    /// Gate and up are one fused linear module (GLM `gate_up_proj`): the same parameters, one LoRA adapter.
    pub fused_gate_up: bool,
}

/// The two MLP shapes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MlpKind {
    /// `down(act(gate(x)) * up(x))`: three matrices.
    Gated,
    /// `down(act(up(x)))`: two matrices.
    Plain,
}

/// Normalization layers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Norm {
    /// RMSNorm: a weight of width `h`.
    Rms,
    /// LayerNorm: a weight and a bias of width `h`.
    Layer,
}

/// A mixture-of-experts block.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Moe {
    /// Routed experts per MoE layer.
    pub n_experts: u64,
    /// Experts each token is routed to.
    pub top_k: u64,
    /// Inner width of one routed expert (a gated MLP).
    pub expert_intermediate_size: u64,
    /// Inner width of the always-active shared expert MLP; 0 when none. DeepSeek's
    /// `n_shared_experts` experts form one MLP of `n_shared_experts × moe_intermediate_size`.
    pub shared_intermediate_size: u64,
    /// A sigmoid gate `Linear(h, 1)` scales the shared expert's output (Qwen2-MoE).
    /// DeepSeek-V3's per-expert routing bias (`e_score_correction_bias`) is no parameter: transformers
    /// registers it as a buffer and no gradient trains it.
    pub shared_expert_gate: bool,
    /// Which layers are MoE layers; the others use the dense [`Mlp`].
    pub layers: MoeLayers,
    /// Each routed expert's projections and the router carry biases (gpt-oss:
    /// `GptOssExperts.gate_up_proj_bias`, `down_proj_bias`, `GptOssTopKRouter.bias`).
    pub biased: bool,
    /// DeepSeek-V2's `group_limited_greedy` router: a token's experts come from its best groups
    /// only. `None`: from every expert (greedy), or as another router picks them.
    pub group_limited: Option<GroupLimit>,
}

/// The groups a group-limited router picks from (transformers 5.6.0 `DeepseekV2Moe.route_tokens_to_experts`:
/// the experts split into `n_group` equal groups, each scored by its best expert, the top
/// `topk_group` groups kept).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GroupLimit {
    /// Expert groups (`n_group`); they divide the experts.
    pub groups: u64,
    /// Groups a token's experts come from (`topk_group`), at most `groups`.
    pub top_groups: u64,
}

/// Which decoder layers hold experts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MoeLayers {
    /// Every layer from index `first_k_dense` on (DeepSeek `first_k_dense_replace`; 0 = all).
    FromLayer(u64),
    /// Layer `i` is sparse when `(i + 1) % step == 0` and `i` is not listed (Qwen2/3-MoE
    /// `decoder_sparse_step` and `mlp_only_layers`).
    Step {
        /// `decoder_sparse_step`.
        step: u64,
        /// `mlp_only_layers`: layer indices that stay dense.
        dense: Vec<u64>,
    },
}

impl Moe {
    /// Whether decoder layer `layer_idx` holds experts.
    pub fn is_moe_layer(&self, layer_idx: u64) -> bool {
        match &self.layers {
            MoeLayers::FromLayer(first) => *first <= layer_idx,
            MoeLayers::Step { step, dense } => {
                0 < *step && (layer_idx + 1).is_multiple_of(*step) && !dense.contains(&layer_idx)
            }
        }
    }
}

/// Which part of the model a parameter tensor belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Component {
    /// Token embedding (and GPT-2's learned positions).
    Embedding,
    /// Attention projections, their biases and q/k norms.
    Attention,
    /// Dense MLP projections.
    Mlp,
    /// Routed experts.
    Experts,
    /// Shared experts and their gate.
    SharedExperts,
    /// MoE routers.
    Router,
    /// Layer norms and the final norm.
    Norm,
    /// Untied output head.
    Head,
}

/// The linear modules LoRA can adapt, by their HF module names.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum LoraTarget {
    /// `q_proj`.
    Q,
    /// `k_proj`.
    K,
    /// `v_proj`.
    V,
    /// Fused q, k, v: GPT-2 `c_attn`.
    Qkv,
    /// `o_proj` (GPT-2: `attn.c_proj`).
    O,
    /// `gate_proj` (Mixtral `w1`).
    Gate,
    /// `up_proj` (Mixtral `w3`; GPT-2 `c_fc`).
    Up,
    /// Fused gate and up: GLM `gate_up_proj`.
    GateUp,
    /// `down_proj` (Mixtral `w2`; GPT-2 `mlp.c_proj`).
    Down,
    /// MLA `q_a_proj`.
    QA,
    /// MLA `q_b_proj`.
    QB,
    /// MLA `kv_a_proj_with_mqa`.
    KvA,
    /// MLA `kv_b_proj`.
    KvB,
    /// MoE router `gate` and Qwen2-MoE `shared_expert_gate`.
    Router,
    /// Gated DeltaNet's `in_proj_qkvz`.
    InProjQkvz,
    /// Gated DeltaNet's `in_proj_ba`.
    InProjBa,
    /// Gated DeltaNet's `out_proj`.
    OutProj,
    /// Qwen3.5's Gated DeltaNet `in_proj_qkv`.
    InProjQkv,
    /// Qwen3.5's Gated DeltaNet `in_proj_z`.
    InProjZ,
    /// Qwen3.5's Gated DeltaNet `in_proj_b`.
    InProjB,
    /// Qwen3.5's Gated DeltaNet `in_proj_a`.
    InProjA,
    /// Fused q, k, v: Phi-3's `qkv_proj`.
    QkvProj,
}

impl LoraTarget {
    /// Every target, in the order `lora_target: all` lists them.
    pub const ALL: [LoraTarget; 22] = [
        LoraTarget::Q,
        LoraTarget::K,
        LoraTarget::V,
        LoraTarget::Qkv,
        LoraTarget::O,
        LoraTarget::Gate,
        LoraTarget::Up,
        LoraTarget::GateUp,
        LoraTarget::Down,
        LoraTarget::QA,
        LoraTarget::QB,
        LoraTarget::KvA,
        LoraTarget::KvB,
        LoraTarget::Router,
        LoraTarget::InProjQkvz,
        LoraTarget::InProjBa,
        LoraTarget::OutProj,
        LoraTarget::InProjQkv,
        LoraTarget::InProjZ,
        LoraTarget::InProjB,
        LoraTarget::InProjA,
        LoraTarget::QkvProj,
    ];

    /// The name a plan file, LLaMA-Factory's `lora_target` and PEFT's `target_modules` use.
    pub fn name(self) -> &'static str {
        match self {
            LoraTarget::Q => "q_proj",
            LoraTarget::K => "k_proj",
            LoraTarget::V => "v_proj",
            LoraTarget::Qkv => "c_attn",
            LoraTarget::O => "o_proj",
            LoraTarget::Gate => "gate_proj",
            LoraTarget::Up => "up_proj",
            LoraTarget::GateUp => "gate_up_proj",
            LoraTarget::Down => "down_proj",
            LoraTarget::QA => "q_a_proj",
            LoraTarget::QB => "q_b_proj",
            LoraTarget::KvA => "kv_a_proj_with_mqa",
            LoraTarget::KvB => "kv_b_proj",
            LoraTarget::Router => "gate",
            LoraTarget::InProjQkvz => "in_proj_qkvz",
            LoraTarget::InProjBa => "in_proj_ba",
            LoraTarget::OutProj => "out_proj",
            LoraTarget::InProjQkv => "in_proj_qkv",
            LoraTarget::InProjZ => "in_proj_z",
            LoraTarget::InProjB => "in_proj_b",
            LoraTarget::InProjA => "in_proj_a",
            LoraTarget::QkvProj => "qkv_proj",
        }
    }

    /// Whether a Gated DeltaNet projection.
    pub fn is_linear_attention(self) -> bool {
        matches!(
            self,
            LoraTarget::InProjQkvz
                | LoraTarget::InProjBa
                | LoraTarget::OutProj
                | LoraTarget::InProjQkv
                | LoraTarget::InProjZ
                | LoraTarget::InProjB
                | LoraTarget::InProjA
        )
    }

    /// The target of a module name, if it is one.
    pub fn from_name(name: &str) -> Option<LoraTarget> {
        LoraTarget::ALL.into_iter().find(|t| t.name() == name)
    }
}

/// A group of `count` parameter tensors of `numel` elements each.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TensorGroup {
    /// The component these tensors belong to.
    pub component: Component,
    /// Elements in one tensor.
    pub numel: u64,
    /// How many such tensors the model holds.
    pub count: u64,
    /// For the weight of a linear module: which LoRA target it is, and its `(in, out)` widths.
    pub linear: Option<(LoraTarget, u64, u64)>,
    /// Routed-expert tensors: each token uses `top_k` of `n_experts` of them.
    pub routed: bool,
    /// Part of DeepSeek-V3's MTP layers (not in `total`).
    pub mtp: bool,
}

/// Every parameter tensor of the model, as HF transformers instantiates it, plus the MTP layers
/// (flagged `mtp`) that DeepSeek trains but transformers leaves out.
///
/// Sources, HF transformers 4.x `src/transformers/models/<family>/modeling_<family>.py`:
/// `LlamaAttention`/`LlamaMLP`/`LlamaDecoderLayer`/`LlamaModel`; `Qwen2Attention` (q/k/v `bias=True`,
/// o without); `Qwen3Attention` (`q_norm`, `k_norm` = RMSNorm(head_dim)); `GlmAttention` (q/k/v
/// `bias=config.attention_bias`), `GlmMLP` (`gate_up_proj` fused, same count); `Glm4DecoderLayer`
/// (`post_self_attn_layernorm`, `post_mlp_layernorm`); `GPT2Attention` (`c_attn` Conv1D 3h with
/// bias, `c_proj`), `GPT2MLP` (`c_fc`, `c_proj` with bias), `GPT2Model` (`wte`, `wpe`, LayerNorms
/// with bias); `MixtralSparseMoeBlock` (`gate` Linear(h, E, bias=False), experts `w1`/`w2`/`w3`);
/// `Qwen2MoeSparseMoeBlock` (`gate`, `experts`, `shared_expert`, `shared_expert_gate` Linear(h, 1));
/// `DeepseekV3Attention` (`q_a_proj`, `q_a_layernorm`, `q_b_proj`, `kv_a_proj_with_mqa`,
/// `kv_a_layernorm`, `kv_b_proj`, `o_proj`), `DeepseekV3MoE` (`gate`, `experts`, `shared_experts`).
pub fn tensors(arch: &Architecture) -> Vec<TensorGroup> {
    let h = arch.hidden_size;
    let mut acc = Acc { res: Vec::new() };
    let plain = |component, numel, count| TensorGroup {
        component,
        numel,
        count,
        linear: None,
        routed: false,
        mtp: false,
    };

    acc.res.push(plain(Component::Embedding, arch.vocab_size.saturating_mul(h), 1));
    if 0 < arch.learned_positions {
        acc.res.push(plain(Component::Embedding, arch.learned_positions.saturating_mul(h), 1));
    }

    let n_moe_layers = match &arch.moe {
        Some(moe) => (0..arch.n_layers).filter(|&i| moe.is_moe_layer(i)).count() as u64,
        None => 0,
    };
    let n_dense_layers = arch.n_layers - n_moe_layers;
    // Of each kind, the Gated DeltaNet layers.
    let n_linear_moe =
        (0..arch.n_layers).filter(|&i| is_moe_layer(arch, i) && is_linear_attention_layer(arch, i));
    let n_linear_moe = n_linear_moe.count() as u64;
    let n_linear_dense = linear_attention_layers_in(arch, 0..arch.n_layers) - n_linear_moe;
    layer_tensors(arch, n_dense_layers, n_linear_dense, false, &mut acc);
    layer_tensors(arch, n_moe_layers, n_linear_moe, true, &mut acc);

    acc.norm(Component::Norm, h, 1, arch.norm);
    if !arch.tied_embeddings {
        // `lm_head` is no LoRA target: LLaMA-Factory's `find_all_linear_modules` forbids it.
        acc.res.push(plain(Component::Head, h.saturating_mul(arch.vocab_size), 1));
    }

    // DeepSeek-V3 MTP module (paper §2.2): per depth an embedding-projection `eh_proj` (2h → h), norms
    // `enorm`, `hnorm` and a full MoE decoder layer; the embedding and head are shared with the main model.
    if 0 < arch.n_mtp_layers {
        let start = acc.res.len();
        layer_tensors(arch, arch.n_mtp_layers, 0, arch.moe.is_some(), &mut acc);
        acc.res.push(plain(Component::Attention, 2 * h.saturating_mul(h), arch.n_mtp_layers));
        acc.norm(Component::Norm, h, 3 * arch.n_mtp_layers, arch.norm);
        for t in &mut acc.res[start..] {
            t.mtp = true;
        }
    }
    acc.res.retain(|t| 0 < t.count && 0 < t.numel);
    acc.res
}

struct Acc {
    res: Vec<TensorGroup>,
}

impl Acc {
    /// A linear module's weight (and bias) on `count` layers.
    fn linear(
        &mut self,
        component: Component,
        target: LoraTarget,
        d_in: u64,
        d_out: u64,
        count: u64,
        bias: bool,
    ) {
        let group = TensorGroup {
            component,
            numel: d_in.saturating_mul(d_out),
            count,
            linear: Some((target, d_in, d_out)),
            routed: false,
            mtp: false,
        };
        self.res.push(group);
        if bias {
            self.res.push(TensorGroup { numel: d_out, linear: None, ..group });
        }
    }

    fn norm(&mut self, component: Component, width: u64, count: u64, norm: Norm) {
        for _ in 0..norm_tensor_count(norm) {
            let group =
                TensorGroup { component, numel: width, count, linear: None, routed: false, mtp: false };
            self.res.push(group);
        }
    }
}

/// Tensors in one norm: RMSNorm has a weight, LayerNorm a weight and a bias.
fn norm_tensor_count(norm: Norm) -> u64 {
    match norm {
        Norm::Rms => 1,
        Norm::Layer => 2,
    }
}

/// The tensors of `n` decoder layers of one kind, dense or MoE, `n_linear` of them Gated DeltaNet
/// layers in place of attention.
fn layer_tensors(arch: &Architecture, n: u64, n_linear: u64, moe_layer: bool, acc: &mut Acc) {
    if n == 0 {
        return;
    }
    let h = arch.hidden_size;
    let norms_per_layer = if arch.post_norms { 4 } else { 2 };
    acc.norm(Component::Norm, h, norms_per_layer * n, arch.norm);
    if let Some(linear) = arch.linear_attention.filter(|_| 0 < n_linear) {
        linear_attention_tensors(h, &linear, n_linear, acc);
    }
    let n_full = n - n_linear;
    attention_tensors(arch, n_full, acc);
    mlp_block_tensors(arch, n, moe_layer, acc);
}

/// Gated DeltaNet's tensors on `n` layers ([`LinearAttention`]'s shapes; no biases).
fn linear_attention_tensors(h: u64, l: &LinearAttention, n: u64, acc: &mut Acc) {
    let (key_dim, value_dim) = (l.key_dim(), l.value_dim());
    match l.split_in_proj {
        false => {
            acc.linear(
                Component::Attention,
                LoraTarget::InProjQkvz,
                h,
                2 * key_dim + 2 * value_dim,
                n,
                false,
            );
            acc.linear(Component::Attention, LoraTarget::InProjBa, h, 2 * l.value_heads, n, false);
        }
        true => {
            acc.linear(Component::Attention, LoraTarget::InProjQkv, h, 2 * key_dim + value_dim, n, false);
            acc.linear(Component::Attention, LoraTarget::InProjZ, h, value_dim, n, false);
            acc.linear(Component::Attention, LoraTarget::InProjB, h, l.value_heads, n, false);
            acc.linear(Component::Attention, LoraTarget::InProjA, h, l.value_heads, n, false);
        }
    }
    let plain = |numel| TensorGroup {
        component: Component::Attention,
        numel,
        count: n,
        linear: None,
        routed: false,
        mtp: false,
    };
    // The depthwise convolution over q, k and v, `dt_bias`, `A_log` and the gated norm's weight.
    acc.res.push(plain((2 * key_dim + value_dim).saturating_mul(l.conv_kernel)));
    acc.res.push(plain(l.value_heads));
    acc.res.push(plain(l.value_heads));
    acc.res.push(plain(l.value_head_dim));
    acc.linear(Component::Attention, LoraTarget::OutProj, value_dim, h, n, false);
}

/// The attention's tensors on `n` layers.
fn attention_tensors(arch: &Architecture, n: u64, acc: &mut Acc) {
    if n == 0 {
        return;
    }
    let h = arch.hidden_size;
    match arch.attention {
        Attention::Gqa { n_heads, n_kv_heads, head_dim, qkv_bias, o_bias, qk_norm, fused_qkv } => {
            let (q, kv) = (n_heads * head_dim, n_kv_heads * head_dim);
            // The output gate's projection is the query projection's second half.
            let q_out = if arch.attention_output_gate { 2 * q } else { q };
            if fused_qkv {
                let target = if arch.family == Family::Gpt2 { LoraTarget::Qkv } else { LoraTarget::QkvProj };
                acc.linear(Component::Attention, target, h, q + 2 * kv, n, qkv_bias);
            } else {
                acc.linear(Component::Attention, LoraTarget::Q, h, q_out, n, qkv_bias);
                acc.linear(Component::Attention, LoraTarget::K, h, kv, n, qkv_bias);
                acc.linear(Component::Attention, LoraTarget::V, h, kv, n, qkv_bias);
            }
            acc.linear(Component::Attention, LoraTarget::O, q, h, n, o_bias);
            if qk_norm {
                acc.norm(Component::Attention, head_dim, 2 * n, Norm::Rms);
            }
            if arch.attention_sinks {
                acc.res.push(TensorGroup {
                    component: Component::Attention,
                    numel: n_heads,
                    count: n,
                    linear: None,
                    routed: false,
                    mtp: false,
                });
            }
        }
        Attention::Mla {
            n_heads,
            q_lora_rank,
            kv_lora_rank,
            qk_nope_head_dim,
            qk_rope_head_dim,
            v_head_dim,
        } => {
            let q_head_dim = qk_nope_head_dim + qk_rope_head_dim;
            match q_lora_rank {
                Some(rank) => {
                    acc.linear(Component::Attention, LoraTarget::QA, h, rank, n, false);
                    acc.norm(Component::Attention, rank, n, Norm::Rms);
                    acc.linear(Component::Attention, LoraTarget::QB, rank, n_heads * q_head_dim, n, false);
                }
                None => acc.linear(Component::Attention, LoraTarget::Q, h, n_heads * q_head_dim, n, false),
            }
            acc.linear(Component::Attention, LoraTarget::KvA, h, kv_lora_rank + qk_rope_head_dim, n, false);
            acc.norm(Component::Attention, kv_lora_rank, n, Norm::Rms);
            let kv_b_out = n_heads * (qk_nope_head_dim + v_head_dim);
            acc.linear(Component::Attention, LoraTarget::KvB, kv_lora_rank, kv_b_out, n, false);
            acc.linear(Component::Attention, LoraTarget::O, n_heads * v_head_dim, h, n, false);
        }
    }
}

/// The MLP's or the MoE block's tensors on `n` layers.
fn mlp_block_tensors(arch: &Architecture, n: u64, moe_layer: bool, acc: &mut Acc) {
    let h = arch.hidden_size;
    match (&arch.moe, moe_layer) {
        (Some(moe), true) => {
            let start = acc.res.len();
            let expert = Mlp {
                kind: MlpKind::Gated,
                intermediate_size: moe.expert_intermediate_size,
                bias: moe.biased,
                fused_gate_up: false,
            };
            mlp_tensors(expert, h, n.saturating_mul(moe.n_experts), Component::Experts, acc);
            for t in &mut acc.res[start..] {
                t.routed = true;
            }
            acc.linear(Component::Router, LoraTarget::Router, h, moe.n_experts, n, moe.biased);
            if 0 < moe.shared_intermediate_size {
                let shared = Mlp {
                    kind: MlpKind::Gated,
                    intermediate_size: moe.shared_intermediate_size,
                    bias: false,
                    fused_gate_up: false,
                };
                mlp_tensors(shared, h, n, Component::SharedExperts, acc);
            }
            if moe.shared_expert_gate {
                acc.linear(Component::SharedExperts, LoraTarget::Router, h, 1, n, false);
            }
        }
        _ => mlp_tensors(arch.mlp, h, n, Component::Mlp, acc),
    }
}

fn mlp_tensors(mlp: Mlp, h: u64, n: u64, component: Component, acc: &mut Acc) {
    let i = mlp.intermediate_size;
    match (mlp.kind, mlp.fused_gate_up) {
        (MlpKind::Gated, true) => acc.linear(component, LoraTarget::GateUp, h, 2 * i, n, mlp.bias),
        (MlpKind::Gated, false) => {
            acc.linear(component, LoraTarget::Gate, h, i, n, mlp.bias);
            acc.linear(component, LoraTarget::Up, h, i, n, mlp.bias);
        }
        (MlpKind::Plain, _) => acc.linear(component, LoraTarget::Up, h, i, n, mlp.bias),
    }
    acc.linear(component, LoraTarget::Down, i, h, n, mlp.bias);
}

/// Exact parameter counts by component.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct ParamCounts {
    /// Token embedding and learned positions.
    pub embedding: u64,
    /// Attention, all layers.
    pub attention: u64,
    /// Dense MLPs, all layers.
    pub mlp: u64,
    /// Routed experts, all layers.
    pub experts: u64,
    /// Shared experts and their gates, all layers.
    pub shared_experts: u64,
    /// Routers, all layers.
    pub router: u64,
    /// Norms, all layers plus the final norm.
    pub norms: u64,
    /// Untied output head; 0 when tied.
    pub head: u64,
    /// Parameters one token passes through: everything but the `n_experts − top_k` routed experts
    /// it skips in each MoE layer. Equal to the total for a dense model.
    pub active: u64,
    /// DeepSeek-V3's MTP layers, outside every other field.
    pub mtp: u64,
}

impl ParamCounts {
    /// All parameters HF transformers instantiates, each shared tensor once (`model.num_parameters()`).
    pub fn total(&self) -> u64 {
        [
            self.embedding,
            self.attention,
            self.mlp,
            self.experts,
            self.shared_experts,
            self.router,
            self.norms,
            self.head,
        ]
        .into_iter()
        .fold(0, u64::saturating_add)
    }
}

/// Counts parameters by component from [`tensors`].
pub fn count_params(arch: &Architecture) -> ParamCounts {
    let (mtp, main): (Vec<TensorGroup>, Vec<TensorGroup>) = tensors(arch).into_iter().partition(|t| t.mtp);
    let mut res = sum_by_component(&main);
    res.mtp = sum_by_component(&mtp).total();
    // A token passes through top_k of the n_experts routed experts of each MoE layer.
    let skipped = match &arch.moe {
        Some(moe) => main
            .iter()
            .filter(|t| t.routed)
            .map(|t| {
                t.numel.saturating_mul(t.count) / moe.n_experts
                    * (moe.n_experts - moe.top_k.min(moe.n_experts))
            })
            .fold(0, u64::saturating_add),
        None => 0,
    };
    res.active = res.total().saturating_sub(skipped);
    res
}

/// The counts an evaluation needs again and again, computed once.
#[derive(Clone, Debug, PartialEq)]
pub struct Summary {
    /// The whole model.
    pub counts: ParamCounts,
    /// One dense decoder layer, by component.
    pub dense_layer: ParamCounts,
    /// One MoE decoder layer, by component (zero for a dense model).
    pub moe_layer: ParamCounts,
    /// The final norm.
    pub final_norm: u64,
    /// Decoder layers by kind.
    pub layers: Vec<LayerCounts>,
    /// A Gated DeltaNet layer's parameters less an attention layer's (0 without such layers):
    /// `dense_layer` and `moe_layer` are attention layers.
    pub linear_attention_delta: i64,
}

impl Summary {
    /// Counts `arch` once.
    pub fn of(arch: &Architecture) -> Summary {
        let counts = count_params(arch);
        let dense_layer = sum_by_component(&one_layer(arch, false));
        let moe_layer = match arch.moe {
            Some(_) => sum_by_component(&one_layer(arch, true)),
            None => ParamCounts::default(),
        };
        let layers = layer_counts(arch);
        let in_layers: u64 = layers.iter().map(|l| l.n_layers * l.params_per_layer).sum();
        let final_norm = counts.total() - counts.embedding - counts.head - in_layers;
        let linear_attention_delta = match arch.linear_attention {
            Some(linear) => {
                let mut acc = Acc { res: Vec::new() };
                linear_attention_tensors(arch.hidden_size, &linear, 1, &mut acc);
                let gdn = sum_by_component(&acc.res).attention;
                gdn as i64 - dense_layer.attention as i64
            }
            None => 0,
        };
        Summary { counts, dense_layer, moe_layer, final_norm, layers, linear_attention_delta }
    }

    /// The parameters of `n_linear` Gated DeltaNet layers beyond as many attention layers'.
    pub fn linear_attention_extra(&self, n_linear: u64) -> f64 {
        n_linear as f64 * self.linear_attention_delta as f64
    }

    /// One decoder layer's counts by component.
    pub fn layer(&self, arch: &Architecture, layer_idx: u64) -> &ParamCounts {
        match is_moe_layer(arch, layer_idx) {
            true => &self.moe_layer,
            false => &self.dense_layer,
        }
    }
}

/// The parameters of one decoder layer of each kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LayerCounts {
    /// Layers of this kind.
    pub n_layers: u64,
    /// Parameters in one of them.
    pub params_per_layer: u64,
    /// Whether they hold experts.
    pub moe: bool,
    /// Whether they are Gated DeltaNet layers.
    pub linear_attention: bool,
}

/// The tensors of one decoder layer: the MoE kind when `moe` and the model has experts, else dense;
/// an attention layer where the model has Gated DeltaNet layers too.
pub fn one_layer(arch: &Architecture, moe: bool) -> Vec<TensorGroup> {
    let mut acc = Acc { res: Vec::new() };
    layer_tensors(arch, 1, 0, moe && arch.moe.is_some(), &mut acc);
    acc.res
}

/// Whether decoder layer `layer_idx` holds experts.
pub fn is_moe_layer(arch: &Architecture, layer_idx: u64) -> bool {
    arch.moe.as_ref().is_some_and(|m| m.is_moe_layer(layer_idx))
}

/// Whether every decoder layer is of one kind: `Some(false)` where none holds experts,
/// `Some(true)` where all do (Mixtral, Qwen3's MoE models), `None` where the kinds mix
/// (DeepSeek-V3's first dense layers, Qwen2-MoE's listed dense ones). A range of layers is then
/// told by its count alone.
pub fn one_layer_kind(arch: &Architecture) -> Option<bool> {
    match moe_layers_in(arch, 0..arch.n_layers) {
        0 => Some(false),
        n if n == arch.n_layers => Some(true),
        _ => None,
    }
}

/// How many of the decoder layers `layers` (a range of indices) hold experts, counted without
/// walking them: as [`is_moe_layer`] says of each.
pub fn moe_layers_in(arch: &Architecture, layers: std::ops::Range<u64>) -> u64 {
    let Some(moe) = &arch.moe else { return 0 };
    if layers.end <= layers.start {
        return 0;
    }
    match &moe.layers {
        MoeLayers::FromLayer(first) => layers.end.saturating_sub(layers.start.max(*first)),
        MoeLayers::Step { step: 0, .. } => 0,
        MoeLayers::Step { step, dense } => {
            // Indices i with (i + 1) a multiple of `step`: the multiples in start + 1 ..= end (every
            // index at step 1, Qwen3's MoE models, without the division: a search counts often).
            let sparse = match step {
                1 => layers.end - layers.start,
                _ => layers.end / step - layers.start / step,
            };
            // Less the listed dense ones among them, each counted once.
            let listed = dense
                .iter()
                .enumerate()
                .filter(|&(k, &i)| {
                    layers.contains(&i) && (i + 1).is_multiple_of(*step) && !dense[..k].contains(&i)
                })
                .count() as u64;
            sparse - listed
        }
    }
}

/// Parameters by component of some tensor groups (`active` and `mtp` left at 0).
pub fn sum_by_component(groups: &[TensorGroup]) -> ParamCounts {
    let mut res = ParamCounts::default();
    for t in groups {
        let n = t.numel.saturating_mul(t.count);
        let slot = match t.component {
            Component::Embedding => &mut res.embedding,
            Component::Attention => &mut res.attention,
            Component::Mlp => &mut res.mlp,
            Component::Experts => &mut res.experts,
            Component::SharedExperts => &mut res.shared_experts,
            Component::Router => &mut res.router,
            Component::Norm => &mut res.norms,
            Component::Head => &mut res.head,
        };
        *slot = slot.saturating_add(n);
    }
    res
}

/// Parameters per decoder layer, dense and MoE layers apart, and each kind's Gated DeltaNet layers
/// apart from its attention layers (MTP layers excluded).
pub fn layer_counts(arch: &Architecture) -> Vec<LayerCounts> {
    let n_moe = match &arch.moe {
        Some(moe) => (0..arch.n_layers).filter(|&i| moe.is_moe_layer(i)).count() as u64,
        None => 0,
    };
    // Each kind's Gated DeltaNet layers apart from its attention layers.
    let linear = |moe: bool| {
        (0..arch.n_layers)
            .filter(|&i| is_moe_layer(arch, i) == moe && is_linear_attention_layer(arch, i))
            .count() as u64
    };
    [(arch.n_layers - n_moe, false), (n_moe, true)]
        .into_iter()
        .flat_map(|(n, moe)| {
            let n_linear = if arch.linear_attention.is_some() { linear(moe) } else { 0 };
            [(n - n_linear, 0, moe), (n_linear, 1, moe)]
        })
        .filter(|&(n, _, _)| 0 < n)
        .map(|(n, n_linear, moe)| {
            let mut acc = Acc { res: Vec::new() };
            layer_tensors(arch, 1, n_linear, moe, &mut acc);
            let params_per_layer =
                acc.res.iter().map(|t| t.numel.saturating_mul(t.count)).fold(0, u64::saturating_add);
            LayerCounts { n_layers: n, params_per_layer, moe, linear_attention: n_linear == 1 }
        })
        .collect()
}

/// Which linear modules a framework's LoRA wraps.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LoraScope {
    /// Megatron's LoRA (MindSpeed-LLM): every linear layer its targets name, each routed expert's
    /// and the router's among them. Its grouped experts carry an adapter pair per expert
    /// (`mindspeed_llm/tasks/posttrain/lora/moe/experts.py`, `LoraParallelGroupedMlp…`: `weights1_a`,
    /// `weights1_b`, `weights2_a`, `weights2_b` run through the same grouped GEMM as the experts).
    Megatron,
    /// PEFT over transformers 5's modules, as LLaMA-Factory's `lora_target: all`
    /// (`find_all_linear_modules`: modules whose class name holds `Linear`) and PEFT's `all-linear`
    /// find them: routed experts are fused 3-D parameters (`Qwen3MoeExperts.gate_up_proj`), and
    /// every router but DeepSeek-V2's a `TopKRouter` holding its own weight, so neither is wrapped.
    /// Seen by instantiating each MoE family in transformers 5.6.0 under LLaMA-Factory 0.9.5 and
    /// PEFT 0.18.1: Mixtral's and Qwen3-MoE's targets are q, k, v and o alone; Qwen2-MoE's add its
    /// shared expert and `shared_expert_gate` (both `Linear`), DeepSeek's its dense layers and
    /// shared experts, DeepSeek-V2's its `Linear` router `gate`.
    Hf,
}

/// The linear modules LoRA wraps for `targets` outside the routed experts and the MTP layers:
/// (Σ input widths, count), over the whole model.
pub fn lora_dense_inputs(arch: &Architecture, targets: &[LoraTarget], scope: LoraScope) -> (u64, u64) {
    adapted(arch, targets, scope).into_iter().filter(|a| !a.routed).fold((0, 0), |(inputs, modules), a| {
        (inputs.saturating_add(a.d_in.saturating_mul(a.count)), modules.saturating_add(a.count))
    })
}

/// What DoRA adds to the linear modules LoRA wraps outside the routed experts (PEFT 0.18.1
/// `tuners/lora/dora.py`, `DoraLinearLayer`), over the whole model.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DoraShape {
    /// Σ output widths: a trained magnitude per output unit (`lora_magnitude_vector`), and per
    /// token the two outputs the rescaling keeps for backward.
    pub outputs: u64,
    /// Σ in × out: the weights whose norms every forward works out again.
    pub weights: u64,
    /// Σ in²: the identity each forward multiplies through the adapter (`x_eye`).
    pub squares: u64,
    /// (in, out) of the module whose in² + 3 · in · out is largest: its identity and the three
    /// weight-sized temporaries alive together while its norm is worked out.
    pub widest: (u64, u64),
}

/// [`DoraShape`] of the modules `targets` name that `scope` wraps, outside the routed experts.
pub fn dora_shape(arch: &Architecture, targets: &[LoraTarget], scope: LoraScope) -> DoraShape {
    let workspace =
        |(d_in, d_out): (u64, u64)| d_in.saturating_mul(d_in.saturating_add(d_out.saturating_mul(3)));
    adapted(arch, targets, scope).into_iter().filter(|a| !a.routed).fold(DoraShape::default(), |acc, a| {
        let (square, weight) = (a.d_in.saturating_mul(a.d_in), a.d_in.saturating_mul(a.d_out));
        let module = (a.d_in, a.d_out);
        DoraShape {
            outputs: acc.outputs.saturating_add(a.d_out.saturating_mul(a.count)),
            weights: acc.weights.saturating_add(weight.saturating_mul(a.count)),
            squares: acc.squares.saturating_add(square.saturating_mul(a.count)),
            widest: if workspace(acc.widest) < workspace(module) { module } else { acc.widest },
        }
    })
}

/// A linear module LoRA wraps: its widths, how many the model holds, and whether a routed expert's.
struct Adapted {
    d_in: u64,
    d_out: u64,
    count: u64,
    routed: bool,
}

/// The linear modules `targets` name that `scope` wraps, outside the MTP layers (which are not
/// adapted).
fn adapted(arch: &Architecture, targets: &[LoraTarget], scope: LoraScope) -> Vec<Adapted> {
    let wrapped = |t: &&TensorGroup| match scope {
        // Megatron's targets name its attention's and MLP's modules (`linear_qkv`, `linear_proj`,
        // `linear_fc1`, `linear_fc2`); Gated DeltaNet's are `in_proj` and `out_proj`
        // (megatron/core/ssm/gated_delta_net at core_v0.19.0), which they do not name.
        LoraScope::Megatron => !t.linear.is_some_and(|(target, _, _)| target.is_linear_attention()),
        LoraScope::Hf => !t.routed && (t.component != Component::Router || arch.family == Family::DeepseekV2),
    };
    tensors(arch)
        .iter()
        .filter(|t| !t.mtp)
        .filter(wrapped)
        .filter_map(|t| t.linear.map(|lin| (lin, t.count, t.routed)))
        .filter(|((target, _, _), _, _)| targets.contains(target))
        .map(|((_, d_in, d_out), count, routed)| Adapted { d_in, d_out, count, routed })
        .collect()
}

/// What GaLore projects ([`low_rank_shape`]), over the whole model.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LowRankShape {
    /// The projected weights' parameters: every `nn.Linear` weight of the decoder layers.
    pub params: u64,
    /// Their optimizer states, elements: for an `out × in` weight and rank r (at most the smaller
    /// side), the two moments of the projected gradient, `r × max(out, in)` each, and the
    /// projection, `r × min(out, in)`.
    pub states: u64,
}

/// The weights LLaMA-Factory's GaLore and APOLLO project (`galore_target` / `apollo_target: all`:
/// every `torch.nn.Linear` that `find_all_linear_modules` names, the output head excepted;
/// `_create_galore_optimizer` and `_create_apollo_optimizer`,
/// src/llamafactory/train/trainer_utils.py) and their states for `rank`. The routed experts are
/// fused 3-D parameters in transformers 5 and GPT-2's projections `Conv1D` modules: neither is an
/// `nn.Linear`, so both stay with plain AdamW. The projection (`GaLoreProjector`, galore_torch,
/// `proj_type: std`) multiplies the gradient on its shorter side: a tall weight's gradient (out ≥ in)
/// by an `r × in` matrix from the right, into `out × r`; a wide one's by an `out × r` matrix from the
/// left, into `r × in`; AdamW's moments are the projected gradient's shape (`GaLoreAdamW.step`).
/// APOLLO's random projection (`GradientProjector`, apollo_torch 1.0.3, `proj: random`) has the
/// same shapes, its moments too (`APOLLOAdamW.step`).
pub fn low_rank_shape(arch: &Architecture, rank: u64) -> LowRankShape {
    if arch.family == Family::Gpt2 {
        return LowRankShape::default();
    }
    adapted(arch, &LoraTarget::ALL, LoraScope::Hf).into_iter().filter(|a| !a.routed).fold(
        LowRankShape::default(),
        |acc, a| {
            let (long, short) = (a.d_in.max(a.d_out), a.d_in.min(a.d_out));
            let r = rank.min(short);
            let states = r.saturating_mul(long.saturating_mul(2).saturating_add(short));
            LowRankShape {
                params: acc.params.saturating_add(a.d_in.saturating_mul(a.d_out).saturating_mul(a.count)),
                states: acc.states.saturating_add(states.saturating_mul(a.count)),
            }
        },
    )
}

/// The largest parameter tensor's elements: what a step that frees each gradient as soon as its
/// parameter is updated holds of gradients at most.
pub fn largest_tensor(arch: &Architecture) -> u64 {
    tensors(arch).iter().filter(|t| !t.mtp).map(|t| t.numel).max().unwrap_or(0)
}

/// LoRA's trainable parameters: `rank × (in + out)` for every linear module `scope` wraps (PEFT
/// `LoraLayer.update_layer`: `lora_A` is `Linear(in, r)`, `lora_B` is `Linear(r, out)`, no bias).
///
/// Under Megatron each routed expert gets its own adapter when its projections are targets; under
/// PEFT no routed expert does ([`LoraScope::Hf`]). MTP layers are not adapted. The output head and
/// embedding are never targets.
pub fn lora_params(arch: &Architecture, rank: u64, targets: &[LoraTarget], scope: LoraScope) -> u64 {
    adapted(arch, targets, scope)
        .into_iter()
        .map(|a| rank.saturating_mul(a.d_in + a.d_out).saturating_mul(a.count))
        .fold(0, u64::saturating_add)
}
