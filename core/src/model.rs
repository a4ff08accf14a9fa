//! Model architectures and their exact parameter accounting.
//!
//! An [`Architecture`] is the shape of a decoder-only transformer as its HF `config.json` gives it.
//! [`tensors`] lists every parameter tensor the reference implementation (HF transformers) creates,
//! grouped by shape with a multiplicity; counts and sharded sizes are derived from that one list so
//! they can never disagree.

/// The shape of a dense decoder-only transformer (Llama, Qwen2, Mistral family).
///
/// Field names follow HF `config.json` (`hidden_size`, `num_attention_heads`, …) without the prefixes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Architecture {
    /// Vocabulary size, the rows of the embedding and of the output head.
    pub vocab_size: u64,
    /// Model width `h`.
    pub hidden_size: u64,
    /// Number of decoder layers.
    pub n_layers: u64,
    /// Number of query heads.
    pub n_heads: u64,
    /// Number of key/value heads (`n_heads` for MHA, fewer for GQA, 1 for MQA).
    pub n_kv_heads: u64,
    /// Width of one attention head; `hidden_size / n_heads` unless the config says otherwise.
    pub head_dim: u64,
    /// Width of the MLP's inner projection.
    pub intermediate_size: u64,
    /// Whether q, k and v projections carry a bias (Qwen2/2.5: yes; Llama: no).
    pub qkv_bias: bool,
    /// Whether the output head shares the embedding matrix (`tie_word_embeddings`).
    pub tied_embeddings: bool,
}

/// Which part of the model a parameter tensor belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Component {
    /// Token embedding.
    Embedding,
    /// q, k, v and output projections (with their biases).
    Attention,
    /// Gate, up and down projections.
    Mlp,
    /// RMSNorm / LayerNorm weights, per layer and final.
    Norm,
    /// Output head (`lm_head`), absent when tied to the embedding.
    Head,
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
}

/// Exact parameter counts by component.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct ParamCounts {
    /// Token embedding.
    pub embedding: u64,
    /// Attention projections, all layers.
    pub attention: u64,
    /// MLP projections, all layers.
    pub mlp: u64,
    /// Norm weights, all layers plus the final norm.
    pub norms: u64,
    /// Untied output head; 0 when tied.
    pub head: u64,
    /// One decoder layer (attention + MLP + its two norms).
    pub per_layer: u64,
}

impl ParamCounts {
    /// All parameters, each shared tensor counted once (as `model.num_parameters()` does).
    pub fn total(&self) -> u64 {
        self.embedding + self.attention + self.mlp + self.norms + self.head
    }
}

/// Every parameter tensor of the model, as HF transformers instantiates it.
///
/// Source: `transformers/models/llama/modeling_llama.py` (`LlamaAttention`, `LlamaMLP`, `LlamaDecoderLayer`,
/// `LlamaModel`, `LlamaForCausalLM`) and `models/qwen2/modeling_qwen2.py` (`Qwen2Attention`: q/k/v with
/// `bias=True`, o without). Linear weights are `[out, in]`; RMSNorm has one weight of width `h`.
pub fn tensors(arch: &Architecture) -> Vec<TensorGroup> {
    let h = arch.hidden_size;
    let q_width = arch.n_heads * arch.head_dim;
    let kv_width = arch.n_kv_heads * arch.head_dim;
    let layers = arch.n_layers;
    let group = |component, numel, count| TensorGroup { component, numel, count };
    let mut res = vec![
        group(Component::Embedding, arch.vocab_size * h, 1),
        // q_proj, k_proj, v_proj, o_proj.
        group(Component::Attention, h * q_width, layers),
        group(Component::Attention, h * kv_width, 2 * layers),
        group(Component::Attention, q_width * h, layers),
        // gate_proj, up_proj [i, h] and down_proj [h, i].
        group(Component::Mlp, h * arch.intermediate_size, 3 * layers),
        // input_layernorm and post_attention_layernorm per layer, then the final norm.
        group(Component::Norm, h, 2 * layers + 1),
    ];
    if arch.qkv_bias {
        res.push(group(Component::Attention, q_width, layers));
        res.push(group(Component::Attention, kv_width, 2 * layers));
    }
    if !arch.tied_embeddings {
        res.push(group(Component::Head, arch.vocab_size * h, 1));
    }
    res
}

/// Counts parameters by component from [`tensors`].
pub fn count_params(arch: &Architecture) -> ParamCounts {
    let mut res = ParamCounts::default();
    for t in tensors(arch) {
        let n = t.numel * t.count;
        match t.component {
            Component::Embedding => res.embedding += n,
            Component::Attention => res.attention += n,
            Component::Mlp => res.mlp += n,
            Component::Norm => res.norms += n,
            Component::Head => res.head += n,
        }
    }
    // Each layer holds the same tensors, so one layer is the layered parts divided by the depth;
    // the final norm (one tensor of width h) is not part of any layer.
    res.per_layer = (res.attention + res.mlp + res.norms - arch.hidden_size) / arch.n_layers.max(1);
    res
}
