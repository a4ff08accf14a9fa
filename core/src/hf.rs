//! Reading an HF `config.json` into an [`Architecture`].
//!
//! Every `model_type` of [`Family`] is read with the defaults its transformers configuration class
//! uses (`__init__`, transformers 4.57.1), so a key the class defaults may be left out; an unknown
//! `model_type` is read as a Llama-like decoder with a warning, its shape keys required, its routed experts
//! read under the known families' keys (`generic_moe`); a multimodal wrapper's language model is read
//! from its `text_config`. Values that cannot
//! describe a real model (zero, negative, fractional, absurdly large, inconsistent) are refused with a
//! message naming the key. Nothing here panics on any input (fuzzed in tests).

use std::fmt;

use serde_json::{Map, Value};

use crate::model::{
    self, Architecture, Attention, Family, GroupLimit, LinearAttention, Mlp, MlpKind, Moe, MoeLayers, Norm,
    SlidingWindow,
};
use crate::quantized::{self, Prequantized, Stored};

/// The largest model the planner accepts: 10^15 parameters, a thousand times the largest trained today.
pub const MAX_PARAMS: u64 = 1_000_000_000_000_000;

/// An architecture read from a config, with what the reader had to assume.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Imported {
    /// The architecture.
    pub arch: Architecture,
    /// Assumptions the user should know about.
    pub warnings: Vec<ImportWarning>,
    /// Weights stored packed (GPTQ, AWQ, bitsandbytes: `quantization_config`).
    pub prequantized: Option<Prequantized>,
}

/// Something the reader assumed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ImportWarning {
    /// Occurs when `model_type` is missing or not a known family; the config was read as Llama-like.
    UnknownModelType(String),
    /// Occurs when a MoE config sets `moe_layer_freq` other than 1; every layer past
    /// `first_k_dense_replace` was taken as MoE, as in every published DeepSeek config.
    MoeLayerFreq(u64),
    /// Occurs when an unknown `model_type` names routed experts: they were read under the keys
    /// Mixtral's, Qwen-MoE's and DeepSeek's configs use (`generic_moe`), where a Llama-like
    /// reading alone would count a dense model a tenth of the size (gpt-oss-20b: 2.4 B for 20.9 B).
    ExpertsRead {
        /// The key the expert count came from.
        key: &'static str,
        /// Routed experts per MoE layer.
        n_experts: u64,
        /// Experts per token.
        top_k: u64,
    },
    /// Occurs when `layer_types` lists layers other than attention (linear attention, convolution,
    /// state-space): each was counted as a full-attention layer.
    OtherLayerTypes {
        /// The first such kind, as written.
        kind: String,
        /// How many layers are not attention layers.
        layers: u64,
    },
    /// Occurs when the shape is in `text_config` (a multimodal wrapper: Llama 4, Gemma 3, Mistral 3):
    /// the language model was read from it, and the other towers (vision encoder, projector) are not
    /// counted. Holds the wrapper's `model_type`.
    TextConfig(String),
    /// Occurs when `quantization_config` names a `quant_method` the planner does not read (AQLM,
    /// HQQ, compressed-tensors, …): the weights were counted as 16-bit. Holds the method.
    QuantizationUnread(String),
    /// Occurs for DeepSeek-V3.2 (`deepseek_v32`), read as DeepSeek-V3's architecture: its lightning
    /// indexer, beside every layer's attention and the MTP layers', is not counted. Holds the
    /// indexer's parameters, all layers.
    Indexer {
        /// Parameters of every layer's indexer.
        params: u64,
    },
    /// Occurs when a config with its own shape also holds a `vision_config` (Qwen2-VL and
    /// Qwen2.5-VL write their language model at the top): the vision encoder is not counted. Holds
    /// the config's `model_type`.
    VisionConfig(String),
    /// Occurs in place of [`ImportWarning::VisionConfig`] or [`ImportWarning::TextConfig`] where
    /// the vision encoder's parameters are known ([`crate::vision::encoder_params`]: Qwen2-VL,
    /// Qwen2.5-VL, Qwen3-VL, Qwen3.5, Gemma 3, Mistral 3, GLM-4.1V, GLM-4.5V): they are not among the language model's
    /// counts, and a plan holds them as its framework does ([`crate::memory::vision_encoder`]).
    VisionEncoder {
        /// The config's `model_type`.
        model_type: String,
        /// The encoder's parameters, its projector's included.
        params: u64,
    },
}

impl fmt::Display for ImportWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ImportWarning::UnknownModelType(t) if t.is_empty() => {
                write!(f, "no model_type: read as a Llama-like decoder")
            }
            ImportWarning::UnknownModelType(t) => {
                write!(f, "unknown model_type {t:?}: read as a Llama-like decoder")
            }
            ImportWarning::MoeLayerFreq(n) => {
                write!(
                    f,
                    "moe_layer_freq {n} is not supported: every layer after the dense ones taken as MoE"
                )
            }
            ImportWarning::ExpertsRead { key, n_experts, top_k } => write!(
                f,
                "{n_experts} routed experts ({top_k} per token) read from {key:?} as Mixtral's and DeepSeek's configs write them; check the parameter count against the model card"
            ),
            ImportWarning::OtherLayerTypes { kind, layers } => {
                write!(
                    f,
                    "layer_types lists {layers} layers that are not attention ({kind:?}): each counted as a full-attention layer"
                )
            }
            ImportWarning::QuantizationUnread(method) => write!(
                f,
                "quantization_config's quant_method {method:?} is not read: the weights are counted as 16-bit"
            ),
            ImportWarning::VisionConfig(t) => {
                write!(f, "{t:?} also holds a vision encoder (vision_config), which is not counted")
            }
            ImportWarning::Indexer { params } => write!(
                f,
                "DeepSeek-V3.2's lightning indexer ({params} parameters over its layers) is not counted: read as DeepSeek-V3"
            ),
            ImportWarning::VisionEncoder { model_type, params } => write!(
                f,
                "{model_type:?} also holds a vision encoder of {params} parameters (vision_config), not among the language model's counts"
            ),
            ImportWarning::TextConfig(t) => {
                write!(
                    f,
                    "the language model read from the text_config of {t:?}: its other parts (a vision encoder, a projector) are not counted"
                )
            }
        }
    }
}

/// Why a config was refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ConfigError {
    /// Occurs when the text is not JSON.
    NotJson(String),
    /// Occurs when the JSON is not an object.
    NotObject,
    /// Occurs when a key the model needs is absent and transformers has no default for it (DeepSeek-V2's
    /// `num_experts_per_tok`, an unknown `model_type`'s shape), or is `null` where transformers gives
    /// `None` no meaning.
    Missing(&'static str),
    /// Occurs when a key holds the wrong kind of value (a string for a number, a fraction for a count).
    WrongType {
        /// The key.
        key: &'static str,
        /// What it must be.
        expected: &'static str,
    },
    /// Occurs when a number is outside what any real model uses.
    OutOfRange {
        /// The key.
        key: &'static str,
        /// The value found.
        value: String,
        /// Smallest accepted value.
        min: u64,
        /// Largest accepted value.
        max: u64,
    },
    /// Occurs when keys contradict each other (heads not divisible by key/value heads, top-k above the expert count).
    Inconsistent(String),
    /// Occurs when the model would have more than [`MAX_PARAMS`] parameters.
    TooLarge,
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ConfigError::NotJson(msg) => write!(f, "config.json is not valid JSON: {msg}"),
            ConfigError::NotObject => write!(f, "config.json must be a JSON object"),
            ConfigError::Missing(key) => write!(f, "config.json has no {key:?}"),
            ConfigError::WrongType { key, expected } => write!(f, "{key:?} must be {expected}"),
            ConfigError::OutOfRange { key, value, min, max } => {
                write!(f, "{key:?} is {value}; it must be from {min} to {max}")
            }
            ConfigError::Inconsistent(msg) => f.write_str(msg),
            ConfigError::TooLarge => write!(f, "the model would have more than 10^15 parameters"),
        }
    }
}

impl std::error::Error for ConfigError {}

/// Reads config.json text.
///
/// # Errors
///
/// A [`ConfigError`] naming the key that cannot be used.
pub fn import(text: &str) -> Result<Imported, ConfigError> {
    let value: Value = serde_json::from_str(text).map_err(|e| ConfigError::NotJson(e.to_string()))?;
    import_value(&value)
}

/// Reads a parsed config.json.
///
/// # Errors
///
/// A [`ConfigError`] naming the key that cannot be used.
pub fn import_value(value: &Value) -> Result<Imported, ConfigError> {
    let outer = value.as_object().ok_or(ConfigError::NotObject)?;
    let mut warnings = Vec::new();
    // The language model: a wrapper's text_config, or the config itself where it writes its shape.
    let outer_type = model_type_of(outer)?;
    let vision = outer.get("vision_config").and_then(Value::as_object);
    let text = language_model(outer);
    let obj = text.unwrap_or(outer);
    // The wrapper's `tie_word_embeddings` where its text_config leaves it out (Qwen3-VL's).
    let tied;
    let obj = match outer.get("tie_word_embeddings") {
        Some(tie)
            if crate::vision::wrapper_ties_embeddings(outer_type)
                && !obj.contains_key("tie_word_embeddings") =>
        {
            let mut own = obj.clone();
            own.insert("tie_word_embeddings".to_owned(), tie.clone());
            tied = own;
            &tied
        }
        _ => obj,
    };
    let model_type = model_type_of(obj)?;
    let known = Family::from_model_type(model_type);
    let cfg = Cfg::new(obj, known);
    let family = match known {
        Some(family) => family,
        None => {
            warnings.push(ImportWarning::UnknownModelType(model_type.to_owned()));
            Family::Llama
        }
    };
    let mut arch = match family {
        Family::Gpt2 => gpt2(&cfg)?,
        _ => decoder(&cfg, family, known.is_none(), &mut warnings)?,
    };
    if arch.linear_attention.is_none() {
        warnings.extend(other_layer_types(obj));
    }
    if model_type == "deepseek_v32" {
        warnings.push(ImportWarning::Indexer { params: indexer_params(&cfg, &arch)? });
    }
    check_consistent(&arch)?;
    // The wrapper's other parts, named first: a vision encoder whose parameters are known with
    // them (its projector may take the language model's width), else what was left out.
    let encoder = vision.and_then(|_| crate::vision::encoder(outer_type, outer, arch.hidden_size));
    arch.vision = encoder.map(Box::new);
    let named = match (encoder.map(|e| e.params), text, vision) {
        (Some(params), _, _) => {
            Some(ImportWarning::VisionEncoder { model_type: outer_type.to_owned(), params })
        }
        (None, Some(_), _) => Some(ImportWarning::TextConfig(outer_type.to_owned())),
        (None, None, Some(_)) => Some(ImportWarning::VisionConfig(outer_type.to_owned())),
        (None, None, None) => None,
    };
    if let Some(named) = named {
        warnings.insert(0, named);
    }
    // The wrapper's own config holds it where there is one (transformers saves it at the top).
    let prequantized = match quantized::read(outer)? {
        Some(Stored::Packed(q)) => Some(q),
        Some(Stored::Unknown(method)) => {
            warnings.push(ImportWarning::QuantizationUnread(method));
            None
        }
        Some(Stored::Dequantized) | None => None,
    };
    let counts = model::count_params(&arch);
    if MAX_PARAMS < counts.total().saturating_add(counts.mtp) {
        return Err(ConfigError::TooLarge);
    }
    Ok(Imported { arch, warnings, prequantized })
}

/// DeepSeek-V3.2's lightning indexer, every layer's and each MTP layer's (a layer like the rest):
/// `wq_b` from the query compression to `index_n_heads × index_head_dim`, `wk` from the width to
/// `index_head_dim`, `k_norm` a LayerNorm of `index_head_dim` (weight and bias) and `weights_proj`
/// from the width to `index_n_heads`, none with a bias (`Indexer`, DeepSeek's
/// inference/model.py for V3.2-Exp; transformers `DeepseekV32Indexer`), 64 heads of 128 by default
/// (`DeepseekV32Config`).
fn indexer_params(cfg: &Cfg, arch: &Architecture) -> Result<u64, ConfigError> {
    let heads = cfg.opt("index_n_heads", 1, MAX_HEADS)?.unwrap_or(64);
    let head_dim = cfg.opt("index_head_dim", 1, MAX_WIDTH)?.unwrap_or(128);
    // Every released V3.2 compresses its queries; a config without `q_lora_rank` is read as
    // projecting the indexer's queries from the width.
    let q_rank = match arch.attention {
        Attention::Mla { q_lora_rank: Some(rank), .. } => rank,
        _ => arch.hidden_size,
    };
    let h = arch.hidden_size;
    // Saturating: the keys' bounds allow products past 2^64, which no real model comes near.
    let per_layer =
        [q_rank.saturating_mul(heads).saturating_mul(head_dim), h * head_dim, 2 * head_dim, h * heads]
            .into_iter()
            .fold(0, u64::saturating_add);
    Ok(per_layer.saturating_mul(arch.n_layers + arch.n_mtp_layers))
}

/// The config's `model_type`, `""` when it has none.
fn model_type_of(obj: &Map<String, Value>) -> Result<&str, ConfigError> {
    match obj.get("model_type") {
        Some(Value::String(t)) => Ok(t.as_str()),
        None | Some(Value::Null) => Ok(""),
        Some(_) => Err(ConfigError::WrongType { key: "model_type", expected: "a string" }),
    }
}

/// The language model's config inside a multimodal wrapper that writes no shape of its own (no
/// `hidden_size`, nor GPT-2's `n_embd`): its `text_config`, as transformers' `get_text_config()`
/// finds it (Llama 4, Gemma 3, Mistral 3; Qwen2-VL wrote its shape at the top, and is read there).
fn language_model(obj: &Map<String, Value>) -> Option<&Map<String, Value>> {
    if obj.contains_key("hidden_size") || obj.contains_key("n_embd") {
        return None;
    }
    obj.get("text_config")?.as_object()
}

/// The layers `layer_types` lists that are not attention layers (Qwen3-Next's `linear_attention`,
/// LFM2's `conv`), which every family here counts as attention layers: the first such kind and how
/// many. Full and sliding-window attention hold the same parameters. Without the list, Qwen3-Next's
/// `full_attention_interval` says the same: every layer but each interval's last is linear
/// attention (transformers `Qwen3NextConfig.__init__`).
fn other_layer_types(obj: &Map<String, Value>) -> Option<ImportWarning> {
    let interval = obj.get("full_attention_interval").and_then(Value::as_u64).filter(|&k| 1 < k);
    let layers = obj.get("num_hidden_layers").and_then(Value::as_u64);
    if let (None, Some(k), Some(n)) = (obj.get("layer_types"), interval, layers) {
        let linear = n - n / k;
        return (0 < linear)
            .then(|| ImportWarning::OtherLayerTypes { kind: "linear_attention".to_owned(), layers: linear });
    }
    let kinds = obj.get("layer_types")?.as_array()?;
    let attention = |kind: &str| matches!(kind, "full_attention" | "sliding_attention" | "attention");
    let mut others = kinds.iter().filter_map(Value::as_str).filter(|kind| !attention(kind));
    let first = others.next()?;
    // Named as the config writes it where it is a type's name (`conv`, `linear_attention`); any
    // other text (a number, "NaN") is not repeated back.
    let named = first.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_');
    let kind = if named && !first.is_empty() { first } else { "unnamed" };
    Some(ImportWarning::OtherLayerTypes { kind: kind.to_owned(), layers: 1 + others.count() as u64 })
}

// Ranges wide enough for every published model and narrow enough that no product overflows.
const MAX_WIDTH: u64 = 1 << 20;
const MAX_VOCAB: u64 = 1 << 24;
pub(crate) const MAX_LAYERS: u64 = 1 << 12;
const MAX_HEADS: u64 = 1 << 14;
const MAX_EXPERTS: u64 = 1 << 14;
const MAX_POSITIONS: u64 = 1 << 26;

/// The `__init__` defaults of the transformers configuration class of `family`, for the keys this
/// module reads and the ones launch files need (`rope_theta`, the norm epsilon); `null` where the
/// default is `None`. Source: transformers 4.57.1, `models/<model_type>/configuration_<model_type>.py`
/// (`GPT2Config`, `LlamaConfig`, `MistralConfig`, `Qwen2Config`, `Qwen3Config`, `GlmConfig`,
/// `Glm4Config`, `MixtralConfig`, `Qwen2MoeConfig`, `Qwen3MoeConfig`, `DeepseekV2Config`,
/// `DeepseekV3Config`, `GptOssConfig`, whose `attention_bias` is set `True` in its body);
/// `tie_word_embeddings` for GPT-2 is `PretrainedConfig`'s (`True`).
/// A key missing here is not the class's: transformers reads it (as `head_dim` in Qwen2's
/// attention) only when the config.json sets it.
fn class_defaults(family: Family) -> Value {
    // JSON text read by the parser the importer already uses: written as `json!` literals, these
    // were 16 KB of code in the page's first module.
    let text = match family {
        Family::Gpt2 => {
            r#"{"vocab_size": 50257, "n_positions": 1024, "n_embd": 768, "n_layer": 12, "n_head": 12, "n_inner": null, "layer_norm_epsilon": 1e-05, "tie_word_embeddings": true}"#
        }
        Family::Llama => {
            r#"{"vocab_size": 32000, "hidden_size": 4096, "intermediate_size": 11008, "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": null, "head_dim": null, "max_position_embeddings": 2048, "rms_norm_eps": 1e-06, "rope_theta": 10000.0, "tie_word_embeddings": false, "attention_bias": false, "mlp_bias": false}"#
        }
        Family::Mistral => {
            r#"{"vocab_size": 32000, "hidden_size": 4096, "intermediate_size": 14336, "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8, "head_dim": null, "max_position_embeddings": 131072, "rms_norm_eps": 1e-06, "rope_theta": 10000.0, "tie_word_embeddings": false, "sliding_window": 4096}"#
        }
        Family::Qwen2 => {
            r#"{"vocab_size": 151936, "hidden_size": 4096, "intermediate_size": 22016, "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 32, "max_position_embeddings": 32768, "rms_norm_eps": 1e-06, "rope_theta": 10000.0, "tie_word_embeddings": false}"#
        }
        Family::Qwen3 => {
            r#"{"vocab_size": 151936, "hidden_size": 4096, "intermediate_size": 22016, "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 32, "head_dim": 128, "max_position_embeddings": 32768, "rms_norm_eps": 1e-06, "rope_theta": 10000.0, "tie_word_embeddings": false, "attention_bias": false}"#
        }
        Family::Glm | Family::Glm4 => {
            r#"{"vocab_size": 151552, "hidden_size": 4096, "intermediate_size": 13696, "num_hidden_layers": 40, "num_attention_heads": 32, "num_key_value_heads": 2, "head_dim": 128, "max_position_embeddings": 131072, "rms_norm_eps": 1.5625e-07, "rope_theta": 10000.0, "tie_word_embeddings": false, "attention_bias": true, "partial_rotary_factor": 0.5}"#
        }
        Family::Mixtral => {
            r#"{"vocab_size": 32000, "hidden_size": 4096, "intermediate_size": 14336, "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8, "head_dim": null, "max_position_embeddings": 131072, "rms_norm_eps": 1e-05, "rope_theta": 1000000.0, "tie_word_embeddings": false, "num_experts_per_tok": 2, "num_local_experts": 8, "sliding_window": null}"#
        }
        Family::Qwen2Moe => {
            r#"{"vocab_size": 151936, "hidden_size": 2048, "intermediate_size": 5632, "num_hidden_layers": 24, "num_attention_heads": 16, "num_key_value_heads": 16, "max_position_embeddings": 32768, "rms_norm_eps": 1e-06, "rope_theta": 10000.0, "tie_word_embeddings": false, "decoder_sparse_step": 1, "moe_intermediate_size": 1408, "shared_expert_intermediate_size": 5632, "num_experts_per_tok": 4, "num_experts": 60, "norm_topk_prob": false, "mlp_only_layers": null, "qkv_bias": true}"#
        }
        Family::Qwen3Moe => {
            r#"{"vocab_size": 151936, "hidden_size": 2048, "intermediate_size": 6144, "num_hidden_layers": 24, "num_attention_heads": 32, "num_key_value_heads": 4, "max_position_embeddings": 32768, "rms_norm_eps": 1e-06, "rope_theta": 10000.0, "tie_word_embeddings": false, "attention_bias": false, "decoder_sparse_step": 1, "moe_intermediate_size": 768, "num_experts_per_tok": 8, "num_experts": 128, "norm_topk_prob": false, "mlp_only_layers": null}"#
        }
        Family::DeepseekV2 => {
            r#"{"vocab_size": 32000, "hidden_size": 4096, "intermediate_size": 11008, "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": null, "max_position_embeddings": 2048, "rms_norm_eps": 1e-06, "rope_theta": 10000.0, "tie_word_embeddings": false, "attention_bias": false, "mlp_bias": false, "first_k_dense_replace": 0, "kv_lora_rank": 512, "q_lora_rank": 1536, "n_routed_experts": 64, "n_shared_experts": 2, "qk_nope_head_dim": 128, "qk_rope_head_dim": 64, "v_head_dim": 128, "num_experts_per_tok": null, "norm_topk_prob": false, "moe_intermediate_size": 1407, "topk_method": "greedy", "n_group": null, "topk_group": null, "routed_scaling_factor": 1.0}"#
        }
        Family::DeepseekV3 => {
            r#"{"vocab_size": 129280, "hidden_size": 7168, "intermediate_size": 18432, "moe_intermediate_size": 2048, "num_hidden_layers": 61, "num_attention_heads": 128, "num_key_value_heads": 128, "n_shared_experts": 1, "n_routed_experts": 256, "kv_lora_rank": 512, "q_lora_rank": 1536, "qk_rope_head_dim": 64, "v_head_dim": 128, "qk_nope_head_dim": 128, "num_experts_per_tok": 8, "first_k_dense_replace": 3, "norm_topk_prob": true, "routed_scaling_factor": 2.5, "n_group": 8, "topk_group": 4, "max_position_embeddings": 4096, "rms_norm_eps": 1e-06, "rope_theta": 10000.0, "tie_word_embeddings": false, "attention_bias": false}"#
        }
        Family::Glm4Moe => {
            r#"{"vocab_size": 151552, "hidden_size": 4096, "intermediate_size": 10944, "num_hidden_layers": 46, "num_attention_heads": 96, "num_key_value_heads": 8, "max_position_embeddings": 131072, "rms_norm_eps": 1e-05, "rope_theta": 10000.0, "tie_word_embeddings": false, "attention_bias": false, "use_qk_norm": false, "partial_rotary_factor": 0.5, "moe_intermediate_size": 1408, "num_experts_per_tok": 8, "n_shared_experts": 1, "n_routed_experts": 128, "routed_scaling_factor": 1.0, "n_group": 1, "topk_group": 1, "first_k_dense_replace": 1, "norm_topk_prob": true}"#
        }
        // `Qwen3NextConfig` (transformers 5, whose fields are the 4.57.1 `__init__`'s): its
        // `full_attention_interval` (4) is read where `layer_types` is not written.
        Family::Qwen3Next => {
            r#"{"vocab_size": 151936, "hidden_size": 2048, "intermediate_size": 5632, "num_hidden_layers": 48, "num_attention_heads": 16, "num_key_value_heads": 2, "head_dim": 256, "max_position_embeddings": 32768, "rms_norm_eps": 1e-06, "rope_theta": 10000.0, "tie_word_embeddings": false, "attention_bias": false, "linear_conv_kernel_dim": 4, "linear_key_head_dim": 128, "linear_value_head_dim": 128, "linear_num_key_heads": 16, "linear_num_value_heads": 32, "full_attention_interval": 4, "decoder_sparse_step": 1, "moe_intermediate_size": 512, "shared_expert_intermediate_size": 512, "num_experts_per_tok": 10, "num_experts": 512, "norm_topk_prob": true, "mlp_only_layers": null, "partial_rotary_factor": 0.25}"#
        }
        // `Qwen3_5TextConfig` and `Qwen3_5MoeTextConfig` (transformers 5, models/qwen3_5 and
        // qwen3_5_moe): the MoE one is `Qwen3NextConfig`'s with `intermediate_size`,
        // `decoder_sparse_step`, `norm_topk_prob` and `mlp_only_layers` deleted (every layer holds
        // experts); both read `full_attention_interval` (4) where `layer_types` is not written.
        Family::Qwen35 => {
            r#"{"vocab_size": 248320, "hidden_size": 4096, "intermediate_size": 12288, "num_hidden_layers": 32, "num_attention_heads": 16, "num_key_value_heads": 4, "head_dim": 256, "max_position_embeddings": 32768, "rms_norm_eps": 1e-06, "rope_theta": 10000.0, "tie_word_embeddings": false, "attention_bias": false, "linear_conv_kernel_dim": 4, "linear_key_head_dim": 128, "linear_value_head_dim": 128, "linear_num_key_heads": 16, "linear_num_value_heads": 32, "full_attention_interval": 4, "partial_rotary_factor": 0.25}"#
        }
        Family::Qwen35Moe => {
            r#"{"vocab_size": 248320, "hidden_size": 2048, "num_hidden_layers": 40, "num_attention_heads": 16, "num_key_value_heads": 2, "head_dim": 256, "max_position_embeddings": 32768, "rms_norm_eps": 1e-06, "rope_theta": 10000.0, "tie_word_embeddings": false, "attention_bias": false, "linear_conv_kernel_dim": 4, "linear_key_head_dim": 128, "linear_value_head_dim": 128, "linear_num_key_heads": 16, "linear_num_value_heads": 32, "full_attention_interval": 4, "moe_intermediate_size": 512, "shared_expert_intermediate_size": 512, "num_experts_per_tok": 8, "num_experts": 256, "partial_rotary_factor": 0.25}"#
        }
        // `Gemma2Config` (transformers at 008e574, models/gemma2/configuration_gemma2.py: its
        // `layer_types` by default windowed on every even index, as gpt-oss's) and
        // `Gemma3TextConfig` (models/gemma3/configuration_gemma3.py at 008f5c8: `sliding_window_pattern`
        // 6, read where `layer_types` is not written, as transformers 5 still reads it: "the pattern
        // used to be a simple int, and it's still present in configs on the Hub").
        Family::Gemma2 => {
            r#"{"vocab_size": 256000, "hidden_size": 2304, "intermediate_size": 9216, "num_hidden_layers": 26, "num_attention_heads": 8, "num_key_value_heads": 4, "head_dim": 256, "max_position_embeddings": 8192, "rms_norm_eps": 1e-06, "rope_theta": 10000.0, "tie_word_embeddings": true, "attention_bias": false, "sliding_window": 4096, "query_pre_attn_scalar": 256, "final_logit_softcapping": 30.0}"#
        }
        Family::Gemma3 => {
            r#"{"vocab_size": 262208, "hidden_size": 2304, "intermediate_size": 9216, "num_hidden_layers": 26, "num_attention_heads": 8, "num_key_value_heads": 4, "head_dim": 256, "max_position_embeddings": 131072, "rms_norm_eps": 1e-06, "rope_theta": 1000000.0, "tie_word_embeddings": true, "attention_bias": false, "sliding_window": 4096, "sliding_window_pattern": 6}"#
        }
        // `Phi3Config` (transformers 4.57.1 models/phi3/configuration_phi3.py): no `attention_bias`
        // (`Phi3Attention` and `Phi3MLP` build every projection without a bias), `head_dim` read where
        // a config sets it, as `Phi3Attention` does (`getattr(config, "head_dim", …)`).
        Family::Phi3 => {
            r#"{"vocab_size": 32064, "hidden_size": 3072, "intermediate_size": 8192, "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": null, "max_position_embeddings": 4096, "original_max_position_embeddings": 4096, "rms_norm_eps": 1e-05, "rope_theta": 10000.0, "rope_scaling": null, "tie_word_embeddings": false, "partial_rotary_factor": 1.0, "sliding_window": null}"#
        }
        Family::GptOss => {
            r#"{"vocab_size": 201088, "hidden_size": 2880, "intermediate_size": 2880, "num_hidden_layers": 36, "num_attention_heads": 64, "num_key_value_heads": 8, "head_dim": 64, "max_position_embeddings": 131072, "rms_norm_eps": 1e-05, "rope_theta": 150000.0, "tie_word_embeddings": false, "attention_bias": true, "num_experts_per_tok": 4, "num_local_experts": 128, "sliding_window": 128, "layer_types": null}"#
        }
    };
    serde_json::from_str(text)
        .expect("each family's defaults are JSON (`every_family_has_its_class_defaults`)")
}

/// The keys a Llama-like reading of an unknown `model_type` cannot take from `LlamaConfig`: its
/// defaults describe Llama-2-7B, not the model at hand.
const SHAPE_KEYS: [&str; 5] =
    ["vocab_size", "hidden_size", "intermediate_size", "num_hidden_layers", "num_attention_heads"];

/// `GPT2Config.attribute_map`: (attribute, the standard name that sets it). `PretrainedConfig.__init__`
/// sets the standard name after the class set its own, so it wins when both are written.
const GPT2_ALIASES: [(&str, &str); 4] = [
    ("n_embd", "hidden_size"),
    ("n_positions", "max_position_embeddings"),
    ("n_head", "num_attention_heads"),
    ("n_layer", "num_hidden_layers"),
];

/// A config.json as transformers' configuration class sees it: the keys written, then the class's
/// `__init__` defaults.
struct Cfg<'a> {
    obj: &'a Map<String, Value>,
    defaults: Map<String, Value>,
    aliases: &'static [(&'static str, &'static str)],
}

impl<'a> Cfg<'a> {
    /// `family` is `None` for an unknown `model_type`, read with `LlamaConfig`'s defaults but for
    /// [`SHAPE_KEYS`], which it must write.
    fn new(obj: &'a Map<String, Value>, family: Option<Family>) -> Self {
        let own_type = obj.get("model_type").and_then(Value::as_str).unwrap_or("");
        let class = match crate::vision::language_family(own_type) {
            Some(Family::Qwen2) => qwen2_vl_text_defaults(),
            Some(Family::Qwen3Moe) => qwen3_vl_moe_text_defaults(),
            Some(Family::Glm4Moe) => glm4v_moe_text_defaults(),
            Some(Family::Glm4) => glm4v_text_defaults(),
            Some(_) => qwen3_vl_text_defaults(),
            None => class_defaults(family.unwrap_or(Family::Llama)),
        };
        let mut defaults = match class {
            Value::Object(map) => map,
            _ => Map::new(),
        };
        if family.is_none() {
            for key in SHAPE_KEYS {
                defaults.remove(key);
            }
        }
        let aliases: &'static [(&'static str, &'static str)] = match family {
            Some(Family::Gpt2) => &GPT2_ALIASES,
            _ => &[],
        };
        Cfg { obj, defaults, aliases }
    }

    /// The value transformers holds for `key` (`None` for absent everywhere), and the key it was
    /// written under.
    fn get(&self, key: &'static str) -> (&'static str, Option<&Value>) {
        for &(attribute, alias) in self.aliases {
            if attribute == key
                && let Some(value) = self.obj.get(alias)
            {
                return (alias, Some(value));
            }
        }
        match self.obj.get(key) {
            Some(value) => (key, Some(value)),
            None => (key, self.defaults.get(key)),
        }
    }

    /// A count in `[min, max]`, or `None` when transformers holds `None` for the key (a `null`
    /// written or defaulted, or a key absent that the class does not define).
    fn opt(&self, key: &'static str, min: u64, max: u64) -> Result<Option<u64>, ConfigError> {
        let (key, value) = self.get(key);
        let value = match value {
            None | Some(Value::Null) => return Ok(None),
            Some(value) => value,
        };
        let Value::Number(number) = value else {
            return Err(ConfigError::WrongType { key, expected: "a whole number" });
        };
        let out_of_range = || ConfigError::OutOfRange { key, value: number.to_string(), min, max };
        let n = match (number.as_u64(), number.as_i64(), number.as_f64()) {
            (Some(n), _, _) => n,
            (None, Some(_), _) => return Err(out_of_range()),
            // 4096.0 is a whole number written as a float; 0.5 is not a count.
            (None, None, Some(x)) if x.fract() == 0.0 && (0.0..1e18).contains(&x) => x as u64,
            (None, None, Some(x)) if x.fract() == 0.0 => return Err(out_of_range()),
            _ => return Err(ConfigError::WrongType { key, expected: "a whole number" }),
        };
        if n < min || max < n {
            return Err(out_of_range());
        }
        Ok(Some(n))
    }

    /// A count transformers cannot build the model without: `None` has no meaning for it, so a
    /// `null` (written, or the class default as DeepSeek-V2's `num_experts_per_tok`) is refused.
    fn req(&self, key: &'static str, min: u64, max: u64) -> Result<u64, ConfigError> {
        self.opt(key, min, max)?.ok_or(ConfigError::Missing(key))
    }

    /// A flag; `None` reads as false, as Python's truth test does.
    fn flag(&self, key: &'static str) -> Result<bool, ConfigError> {
        match self.get(key) {
            (_, None | Some(Value::Null)) => Ok(false),
            (_, Some(Value::Bool(b))) => Ok(*b),
            (key, Some(_)) => Err(ConfigError::WrongType { key, expected: "true or false" }),
        }
    }

    /// A list of layer indices; `None` is the empty list (`Qwen2MoeConfig`: `mlp_only_layers=None` → `[]`).
    fn list(&self, key: &'static str) -> Result<Vec<u64>, ConfigError> {
        match self.get(key) {
            (_, None | Some(Value::Null)) => Ok(Vec::new()),
            (key, Some(Value::Array(items))) => items
                .iter()
                .map(|item| {
                    item.as_u64().ok_or(ConfigError::WrongType { key, expected: "a list of layer indices" })
                })
                .collect(),
            (key, Some(_)) => Err(ConfigError::WrongType { key, expected: "a list of layer indices" }),
        }
    }
}

/// The value HF transformers holds for `key` of a config.json: the config's own, else its
/// configuration class's `__init__` default (transformers 4.57.1), for the keys the importer
/// reads plus `rope_theta` and the norm epsilon (`rms_norm_eps`, GPT-2's `layer_norm_epsilon`).
/// `None` where that value is `null`, where the class leaves the key unset, and for an unknown
/// `model_type`'s shape keys (`hidden_size`, …), which have no default.
///
/// ```
/// let config = serde_json::json!({"model_type": "mixtral", "rope_theta": 500000.0});
/// assert_eq!(trainplan_core::hf::config_value(&config, "rope_theta"), Some(serde_json::json!(500000.0)));
/// assert_eq!(trainplan_core::hf::config_value(&config, "rms_norm_eps"), Some(serde_json::json!(1e-05)));
/// ```
pub fn config_value(config: &Value, key: &str) -> Option<Value> {
    let outer = config.as_object()?;
    let obj = language_model(outer).unwrap_or(outer);
    let family = obj.get("model_type").and_then(Value::as_str).and_then(Family::from_model_type);
    let cfg = Cfg::new(obj, family);
    let own =
        cfg.aliases.iter().find(|(attribute, _)| *attribute == key).and_then(|(_, alias)| obj.get(*alias));
    own.or_else(|| obj.get(key)).or_else(|| cfg.defaults.get(key)).filter(|v| !v.is_null()).cloned()
}

/// The class defaults of Qwen2-VL's and Qwen2.5-VL's language model (transformers
/// `Qwen2VLTextConfig`, `Qwen2_5_VLTextConfig`, alike: `models/qwen2_vl/configuration_qwen2_vl.py`,
/// `models/qwen2_5_vl/configuration_qwen2_5_vl.py`), which differ from `Qwen2Config`'s: a 72B
/// shape, `rope_theta` 1,000,000 and `rms_norm_eps` 1e-5. The wrapper's own type reads the same
/// (its text config takes the wrapper's keys).
fn qwen2_vl_text_defaults() -> Value {
    let text = r#"{"vocab_size": 152064, "hidden_size": 8192, "intermediate_size": 29568, "num_hidden_layers": 80, "num_attention_heads": 64, "num_key_value_heads": 8, "max_position_embeddings": 32768, "rms_norm_eps": 1e-05, "rope_theta": 1000000.0, "tie_word_embeddings": false}"#;
    serde_json::from_str(text).unwrap_or(Value::Null)
}

/// The class defaults of Qwen3-VL's language model (transformers `Qwen3VLTextConfig`,
/// `models/qwen3_vl/configuration_qwen3_vl.py`: Qwen3Config's shape with 128,000 positions and
/// its `default_theta` of 500,000).
fn qwen3_vl_text_defaults() -> Value {
    let text = r#"{"vocab_size": 151936, "hidden_size": 4096, "intermediate_size": 22016, "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 32, "head_dim": 128, "max_position_embeddings": 128000, "rms_norm_eps": 1e-06, "rope_theta": 500000.0, "tie_word_embeddings": false, "attention_bias": false}"#;
    serde_json::from_str(text).unwrap_or(Value::Null)
}

/// The class defaults of Qwen3-VL's MoE language model (transformers `Qwen3VLMoeTextConfig`,
/// `models/qwen3_vl_moe/configuration_qwen3_vl_moe.py`: 60 experts of 1,408, 4 a token, tied
/// embeddings, `head_dim` from the width, `default_theta` 500,000). It has no `norm_topk_prob`:
/// its router always renormalizes the top k (`Qwen3VLMoeTextTopKRouter`), which `true` says.
fn qwen3_vl_moe_text_defaults() -> Value {
    let text = r#"{"vocab_size": 151936, "hidden_size": 2048, "intermediate_size": 5632, "num_hidden_layers": 24, "num_attention_heads": 16, "num_key_value_heads": 16, "head_dim": null, "max_position_embeddings": 128000, "rms_norm_eps": 1e-06, "rope_theta": 500000.0, "tie_word_embeddings": true, "attention_bias": false, "decoder_sparse_step": 1, "moe_intermediate_size": 1408, "num_experts_per_tok": 4, "num_experts": 60, "mlp_only_layers": null, "norm_topk_prob": true}"#;
    serde_json::from_str(text).unwrap_or(Value::Null)
}

/// The class defaults of GLM-4.5V's language model (transformers `Glm4vMoeTextConfig`,
/// `models/glm4v_moe/configuration_glm4v_moe.py`): GLM-4.5-Air's shape with a vocabulary of
/// 151,424, 65,536 positions and biased q, k and v; no `head_dim` (its attention then takes the
/// width over the heads) and no q/k norms (`Glm4vMoeTextAttention` is `Glm4Attention`).
fn glm4v_moe_text_defaults() -> Value {
    let text = r#"{"vocab_size": 151424, "hidden_size": 4096, "intermediate_size": 10944, "num_hidden_layers": 46, "num_attention_heads": 96, "num_key_value_heads": 8, "max_position_embeddings": 65536, "rms_norm_eps": 1e-05, "tie_word_embeddings": false, "attention_bias": true, "use_qk_norm": false, "partial_rotary_factor": 0.5, "moe_intermediate_size": 1408, "num_experts_per_tok": 8, "n_shared_experts": 1, "n_routed_experts": 128, "routed_scaling_factor": 1.0, "n_group": 1, "topk_group": 1, "first_k_dense_replace": 1, "norm_topk_prob": true}"#;
    serde_json::from_str(text).unwrap_or(Value::Null)
}

/// GLM-4.1V's language model's class defaults (`Glm4vTextConfig`, transformers
/// `models/glm4v/configuration_glm4v.py`): GLM-4.1V-9B's shape. Its attention's q, k and v always
/// carry biases (`Glm4vTextAttention`, `bias=True`, no config key), and its heads are
/// `hidden_size ÷ num_attention_heads` wide.
fn glm4v_text_defaults() -> Value {
    let text = r#"{"vocab_size": 151552, "hidden_size": 4096, "intermediate_size": 13696, "num_hidden_layers": 40, "num_attention_heads": 32, "num_key_value_heads": 2, "max_position_embeddings": 32768, "rms_norm_eps": 1e-05, "tie_word_embeddings": false, "attention_bias": true}"#;
    serde_json::from_str(text).unwrap_or(Value::Null)
}

/// Source: transformers `models/gpt2/configuration_gpt2.py` (`GPT2Config`: `vocab_size=50257`,
/// `n_positions=1024`, `n_embd=768`, `n_layer=12`, `n_head=12`, `n_inner=None` → 4·n_embd in
/// `modeling_gpt2.py`'s `GPT2Block`, `tie_word_embeddings` from `PretrainedConfig`, default true).
fn gpt2(cfg: &Cfg) -> Result<Architecture, ConfigError> {
    let hidden_size = cfg.req("n_embd", 1, MAX_WIDTH)?;
    let n_heads = cfg.req("n_head", 1, MAX_HEADS)?;
    let n_positions = cfg.req("n_positions", 1, MAX_POSITIONS)?;
    if !hidden_size.is_multiple_of(n_heads) {
        return Err(ConfigError::Inconsistent(format!(
            "n_embd ({hidden_size}) is not a multiple of n_head ({n_heads})"
        )));
    }
    Ok(Architecture {
        family: Family::Gpt2,
        vocab_size: cfg.req("vocab_size", 1, MAX_VOCAB)?,
        hidden_size,
        n_layers: cfg.req("n_layer", 1, MAX_LAYERS)?,
        attention: Attention::Gqa {
            n_heads,
            n_kv_heads: n_heads,
            head_dim: hidden_size / n_heads,
            qkv_bias: true,
            o_bias: true,
            qk_norm: false,
            fused_qkv: true,
        },
        mlp: Mlp {
            kind: MlpKind::Plain,
            intermediate_size: cfg.opt("n_inner", 1, MAX_WIDTH)?.unwrap_or(4 * hidden_size),
            bias: true,
            fused_gate_up: false,
        },
        moe: None,
        norm: Norm::Layer,
        post_norms: false,
        learned_positions: n_positions,
        max_position_embeddings: n_positions,
        tied_embeddings: cfg.flag("tie_word_embeddings")?,
        n_mtp_layers: 0,
        attention_sinks: false,
        sliding_window: None,
        linear_attention: None,
        attention_output_gate: false,
        logit_softcap: false,
        vision: None,
    })
}

/// Llama-like decoders, with each family's differences. Sources, transformers 4.57.1
/// `models/<family>/configuration_<family>.py` and `modeling_<family>.py`: `LlamaConfig`
/// (`attention_bias`, `mlp_bias`, `num_key_value_heads=None` → heads, `head_dim=None` → hidden/heads),
/// `Qwen2Attention` (q/k/v bias always, `head_dim` from the config if set, hidden/heads otherwise),
/// `Qwen3Config`/`Qwen3Attention` (`head_dim=128`, q/k norm; `Qwen3MoeConfig` has no `head_dim`),
/// `GlmConfig` (`attention_bias=True`, `head_dim=128`, o without bias, fused `gate_up_proj`),
/// `MistralAttention` (`head_dim` None → hidden/heads, no bias), `MixtralConfig` (`num_local_experts`,
/// `intermediate_size` per expert), `Qwen2MoeConfig` (`decoder_sparse_step=1`, `mlp_only_layers=None`
/// → `[]`, shared expert and gate), `DeepseekV3Config` (`first_k_dense_replace`, `n_shared_experts`,
/// MLA ranks; `num_nextn_predict_layers` is DeepSeek's key, unknown to transformers).
fn decoder(
    cfg: &Cfg,
    family: Family,
    unknown: bool,
    warnings: &mut Vec<ImportWarning>,
) -> Result<Architecture, ConfigError> {
    let hidden_size = cfg.req("hidden_size", 1, MAX_WIDTH)?;
    let n_layers = cfg.req("num_hidden_layers", 1, MAX_LAYERS)?;
    let n_heads = cfg.req("num_attention_heads", 1, MAX_HEADS)?;
    let vocab_size = cfg.req("vocab_size", 1, MAX_VOCAB)?;
    let max_position_embeddings = cfg.req("max_position_embeddings", 1, MAX_POSITIONS)?;
    let tied_embeddings = cfg.flag("tie_word_embeddings")?;

    // An unknown type that writes MLA's ranks (DeepSeek-V3.2's `deepseek_v32`) takes DeepSeek's
    // attention, as its configuration class does.
    let is_mla = matches!(family, Family::DeepseekV2 | Family::DeepseekV3)
        || unknown && cfg.opt("kv_lora_rank", 1, MAX_WIDTH)?.is_some();
    let attention = if is_mla {
        Attention::Mla {
            n_heads,
            // `q_lora_rank=None` projects queries directly (V2-Lite writes null; DeepSeek's own
            // config_16B.json writes 0 for it).
            q_lora_rank: cfg.opt("q_lora_rank", 0, MAX_WIDTH)?.filter(|&r| 0 < r),
            kv_lora_rank: cfg.req("kv_lora_rank", 1, MAX_WIDTH)?,
            qk_nope_head_dim: cfg.req("qk_nope_head_dim", 1, MAX_WIDTH)?,
            qk_rope_head_dim: cfg.req("qk_rope_head_dim", 1, MAX_WIDTH)?,
            v_head_dim: cfg.req("v_head_dim", 1, MAX_WIDTH)?,
        }
    } else {
        // `num_key_value_heads=None` → `num_attention_heads` ("for backward compatibility" in each
        // class that has the rule; read the same in the others, whose attention would fail on None).
        let n_kv_heads = cfg.opt("num_key_value_heads", 1, MAX_HEADS)?.unwrap_or(n_heads);
        let head_dim = head_dim(cfg, family, hidden_size, n_heads)?;
        let attention_bias = cfg.flag("attention_bias")?;
        let (qkv_bias, o_bias) = match family {
            Family::Qwen2 => (true, false),
            Family::Qwen2Moe => (cfg.flag("qkv_bias")?, false),
            Family::Glm | Family::Glm4 | Family::Glm4Moe => (attention_bias, false),
            Family::Mistral | Family::Mixtral | Family::Phi3 => (false, false),
            _ => (attention_bias, attention_bias),
        };
        Attention::Gqa {
            n_heads,
            n_kv_heads,
            head_dim,
            qkv_bias,
            o_bias,
            qk_norm: matches!(family, Family::Qwen3 | Family::Qwen3Moe | Family::Gemma3)
                || family.has_linear_attention()
                || family == Family::Glm4Moe && cfg.flag("use_qk_norm")?,
            // Phi-3's `qkv_proj` (`Phi3Attention`): the same weights as three, one LoRA target.
            fused_qkv: family == Family::Phi3,
        }
    };

    check_rotary_share(cfg)?;
    let moe = match unknown {
        true => generic_moe(cfg, n_layers, warnings)?,
        false => moe(cfg, family, n_layers, warnings)?,
    };
    // Mixtral has no dense layer; its `intermediate_size` is the expert width. Nor has an unknown
    // model whose every layer holds experts, which may leave the key out.
    let intermediate_size = match (&moe, family) {
        (Some(m), Family::Mixtral | Family::GptOss | Family::Qwen35Moe) => m.expert_intermediate_size,
        (Some(m), _) if unknown => match cfg.opt("intermediate_size_mlp", 1, MAX_WIDTH)? {
            // Llama 4's dense layers ([`generic_moe`]).
            Some(width) => width,
            None if m.layers == MoeLayers::FromLayer(0) => {
                cfg.opt("intermediate_size", 1, MAX_WIDTH)?.unwrap_or(m.expert_intermediate_size)
            }
            None => cfg.req("intermediate_size", 1, MAX_WIDTH)?,
        },
        _ => cfg.req("intermediate_size", 1, MAX_WIDTH)?,
    };
    let mlp = Mlp {
        kind: MlpKind::Gated,
        intermediate_size,
        // gpt-oss has no dense MLP; its experts' projections are biased, as every linear layer is.
        bias: family == Family::Llama && cfg.flag("mlp_bias")? || family == Family::GptOss,
        fused_gate_up: matches!(family, Family::Glm | Family::Glm4 | Family::Phi3),
    };
    let n_mtp_layers = match family {
        Family::DeepseekV3 | Family::Glm4Moe => {
            cfg.opt("num_nextn_predict_layers", 0, MAX_LAYERS)?.unwrap_or(0)
        }
        _ => 0,
    };
    Ok(Architecture {
        family,
        vocab_size,
        hidden_size,
        n_layers,
        attention,
        mlp,
        moe,
        norm: Norm::Rms,
        post_norms: matches!(family, Family::Glm4 | Family::Gemma2 | Family::Gemma3),
        learned_positions: 0,
        max_position_embeddings,
        tied_embeddings,
        n_mtp_layers,
        attention_sinks: family == Family::GptOss,
        sliding_window: layer_window(cfg, family, n_layers, max_position_embeddings)?,
        linear_attention: match family.has_linear_attention() {
            true => linear_attention(cfg, family, n_layers)?,
            false => None,
        },
        attention_output_gate: family.has_linear_attention(),
        logit_softcap: family == Family::Gemma2
            && cfg.get("final_logit_softcapping").1.and_then(Value::as_f64).is_some_and(|cap| 0.0 < cap),
        vision: None,
    })
}

/// The share of each head the rotary embedding turns (GLM, Phi-3, Qwen3-Next and Qwen3.5 read
/// `partial_rotary_factor`): a head of no rotated dimension, or of more than all of them, is no
/// model.
fn check_rotary_share(cfg: &Cfg) -> Result<(), ConfigError> {
    match cfg.get("partial_rotary_factor") {
        (_, None | Some(Value::Null)) => Ok(()),
        (_, Some(Value::Number(n))) if n.as_f64().is_some_and(|r| 0.0 < r && r <= 1.0) => Ok(()),
        (_, Some(Value::Number(n))) => Err(ConfigError::Inconsistent(format!(
            "partial_rotary_factor ({n}) must be above 0 and at most 1"
        ))),
        (key, Some(_)) => Err(ConfigError::WrongType { key, expected: "a number" }),
    }
}

/// The sliding window a family's layers attend through, where its config sets one.
fn layer_window(
    cfg: &Cfg,
    family: Family,
    n_layers: u64,
    max_position_embeddings: u64,
) -> Result<Option<SlidingWindow>, ConfigError> {
    Ok(match family {
        Family::GptOss | Family::Gemma2 => sliding_window(cfg, n_layers, 2)?,
        Family::Gemma3 => sliding_window(cfg, n_layers, gemma3_pattern(cfg)?)?,
        // Every layer through the window (`MistralAttention`, `MixtralAttention`: one
        // `sliding_window` for all; `MistralConfig` defaults it to 4096, Mixtral to none).
        Family::Mistral | Family::Mixtral => {
            cfg.opt("sliding_window", 1, MAX_POSITIONS)?.map(|size| SlidingWindow { size, full_every: 0 })
        }
        // Phi-3's too (`Phi3Model.forward`: one sliding-window mask for every layer where the
        // config sets `sliding_window`; Phi-3-mini-4k 2047). A window as long as the context or
        // longer masks nothing (Phi-4-mini writes 262,144 over 131,072 positions).
        Family::Phi3 => cfg
            .opt("sliding_window", 1, MAX_POSITIONS)?
            .filter(|&size| size < max_position_embeddings)
            .map(|size| SlidingWindow { size, full_every: 0 }),
        _ => None,
    })
}

/// Qwen3-Next's and Qwen3.5's Gated DeltaNet layers (transformers `Qwen3NextConfig`,
/// `Qwen3NextGatedDeltaNet`; `Qwen3_5TextConfig`, `Qwen3_5GatedDeltaNet`):
/// every layer of `layer_types` that is `linear_attention`, or where the list is not written,
/// every layer but each `full_attention_interval`-th. Read where the full-attention layers are
/// every k-th, as every published config writes them.
fn linear_attention(
    cfg: &Cfg,
    family: Family,
    n_layers: u64,
) -> Result<Option<LinearAttention>, ConfigError> {
    let full_every = match cfg.get("layer_types").1.and_then(Value::as_array) {
        None => cfg.req("full_attention_interval", 1, MAX_LAYERS)?,
        // No full-attention layer: one past the last, which no layer reaches.
        Some(kinds) => match full_attention_every(kinds, n_layers, "linear_attention")? {
            0 => n_layers + 1,
            every => every,
        },
    };
    if full_every == 1 {
        return Ok(None);
    }
    let res = LinearAttention {
        key_heads: cfg.req("linear_num_key_heads", 1, MAX_HEADS)?,
        value_heads: cfg.req("linear_num_value_heads", 1, MAX_HEADS)?,
        key_head_dim: cfg.req("linear_key_head_dim", 1, MAX_WIDTH)?,
        value_head_dim: cfg.req("linear_value_head_dim", 1, MAX_WIDTH)?,
        conv_kernel: cfg.req("linear_conv_kernel_dim", 1, 1 << 10)?,
        full_every,
        split_in_proj: family != Family::Qwen3Next,
    };
    // `Qwen3NextGatedDeltaNet` repeats each key head over `num_v_heads // num_k_heads` value heads.
    if !res.value_heads.is_multiple_of(res.key_heads) {
        return Err(ConfigError::Inconsistent(format!(
            "linear_num_value_heads ({}) is not a multiple of linear_num_key_heads ({})",
            res.value_heads, res.key_heads
        )));
    }
    Ok(Some(res))
}

/// A head's width: `head_dim`, or where it is `None` or the class has no such key,
/// hidden_size // num_attention_heads, refused where it does not divide, but for
/// `Glm4MoeAttention`, which rounds down (`getattr(config, "head_dim", hidden_size //
/// num_attention_heads)`: its class defaults, 4,096 over 96 heads, give 42).
fn head_dim(cfg: &Cfg, family: Family, hidden_size: u64, n_heads: u64) -> Result<u64, ConfigError> {
    match cfg.opt("head_dim", 1, MAX_WIDTH)? {
        Some(d) => Ok(d),
        None if hidden_size.is_multiple_of(n_heads) || family == Family::Glm4Moe => Ok(hidden_size / n_heads),
        None => Err(ConfigError::Inconsistent(format!(
            "hidden_size ({hidden_size}) is not a multiple of num_attention_heads ({n_heads}) and head_dim is not set"
        ))),
    }
}

/// A sliding window of `sliding_window` tokens on the layers `layer_types` names
/// `sliding_attention`; where the list is not written, on every layer but each `unlisted`-th, as
/// the family's configuration class fills it in: gpt-oss and Gemma 2 every even index
/// (`GptOssConfig`, `Gemma2Config`: `"sliding_attention" if bool((i + 1) % 2) else
/// "full_attention"`), Gemma 3 its `sliding_window_pattern` ([`gemma3_pattern`]). A list that is
/// not every `k`-th layer full, the rest windowed (the pattern Megatron-LM's
/// `--window-attn-skip-freq` writes) is refused.
fn sliding_window(cfg: &Cfg, n_layers: u64, unlisted: u64) -> Result<Option<SlidingWindow>, ConfigError> {
    let Some(size) = cfg.opt("sliding_window", 1, MAX_POSITIONS)? else { return Ok(None) };
    let full_every = match cfg.get("layer_types").1.and_then(Value::as_array) {
        None => unlisted,
        Some(kinds) => full_attention_every(kinds, n_layers, "sliding_attention")?,
    };
    Ok((full_every != 1).then_some(SlidingWindow { size, full_every }))
}

/// Gemma 3's full-attention layer every this many (transformers `Gemma3TextConfig`:
/// `"sliding_attention" if bool((i + 1) % self._sliding_window_pattern) else "full_attention"`;
/// the Hub's configs write `sliding_window_pattern`, newer ones `_sliding_window_pattern`; 6).
fn gemma3_pattern(cfg: &Cfg) -> Result<u64, ConfigError> {
    Ok(match cfg.opt("_sliding_window_pattern", 1, MAX_LAYERS)? {
        Some(k) => k,
        None => cfg.opt("sliding_window_pattern", 1, MAX_LAYERS)?.unwrap_or(6),
    })
}

/// Every how many layers `layer_types` holds a full-attention layer, the others of kind `other`
/// (counted from 1, as Megatron-LM's `--window-attn-skip-freq` and `--linear-attention-freq` take
/// it); 0 where none is full. A list that is not that pattern, or not one entry a layer, is refused.
fn full_attention_every(kinds: &[Value], n_layers: u64, other: &str) -> Result<u64, ConfigError> {
    let full: Vec<u64> =
        (0..).zip(kinds).filter(|(_, kind)| kind.as_str() != Some(other)).map(|(i, _)| i).collect();
    let every = full.first().map_or(0, |&first| first + 1);
    let regular = kinds.len() as u64 == n_layers
        && full.iter().enumerate().all(|(k, &i)| i + 1 == (k as u64 + 1) * every)
        && full.len() as u64 == n_layers.checked_div(every).unwrap_or(0);
    match regular {
        true => Ok(every),
        false => Err(ConfigError::Inconsistent(format!(
            "layer_types: only every k-th layer of full attention, the others {other}, is read"
        ))),
    }
}

fn moe(
    cfg: &Cfg,
    family: Family,
    n_layers: u64,
    warnings: &mut Vec<ImportWarning>,
) -> Result<Option<Moe>, ConfigError> {
    let top_k = || cfg.req("num_experts_per_tok", 1, MAX_EXPERTS);
    let res = match family {
        // Mixtral; gpt-oss's `GptOssMLP` the same, its experts' projections and router biased.
        Family::Mixtral | Family::GptOss => Moe {
            n_experts: cfg.req("num_local_experts", 1, MAX_EXPERTS)?,
            top_k: top_k()?,
            expert_intermediate_size: cfg.req("intermediate_size", 1, MAX_WIDTH)?,
            shared_intermediate_size: 0,
            shared_expert_gate: false,
            layers: MoeLayers::FromLayer(0),
            group_limited: None,
            biased: family == Family::GptOss,
        },
        Family::Qwen2Moe | Family::Qwen3Moe | Family::Qwen3Next => {
            // `Qwen2MoeDecoderLayer`: a layer is sparse only when `config.num_experts > 0`.
            let n_experts = cfg.req("num_experts", 0, MAX_EXPERTS)?;
            if n_experts == 0 {
                return Ok(None);
            }
            // Qwen3-Next's block is Qwen2-MoE's: a shared expert and its gate beside the routed ones.
            let qwen2 = family != Family::Qwen3Moe;
            Moe {
                n_experts,
                top_k: top_k()?,
                expert_intermediate_size: cfg.req("moe_intermediate_size", 1, MAX_WIDTH)?,
                shared_intermediate_size: match qwen2 {
                    true => cfg.opt("shared_expert_intermediate_size", 1, MAX_WIDTH)?.unwrap_or(0),
                    false => 0,
                },
                shared_expert_gate: qwen2,
                layers: MoeLayers::Step {
                    step: cfg.req("decoder_sparse_step", 1, MAX_LAYERS)?,
                    dense: cfg.list("mlp_only_layers")?,
                },
                group_limited: None,
                biased: false,
            }
        }
        // `Qwen3_5MoeDecoderLayer`: `Qwen3NextSparseMoeBlock` on every layer.
        Family::Qwen35Moe => Moe {
            n_experts: cfg.req("num_experts", 1, MAX_EXPERTS)?,
            top_k: top_k()?,
            expert_intermediate_size: cfg.req("moe_intermediate_size", 1, MAX_WIDTH)?,
            shared_intermediate_size: cfg.opt("shared_expert_intermediate_size", 1, MAX_WIDTH)?.unwrap_or(0),
            shared_expert_gate: true,
            layers: MoeLayers::FromLayer(0),
            group_limited: None,
            biased: false,
        },
        Family::DeepseekV2 | Family::DeepseekV3 | Family::Glm4Moe => {
            let n_experts = cfg.req("n_routed_experts", 1, MAX_EXPERTS)?;
            // DeepSeek's own key, unknown to transformers (every layer from `first_k_dense_replace` on is MoE).
            let freq = cfg.opt("moe_layer_freq", 1, MAX_LAYERS)?.unwrap_or(1);
            if freq != 1 {
                warnings.push(ImportWarning::MoeLayerFreq(freq));
            }
            let expert_intermediate_size = cfg.req("moe_intermediate_size", 1, MAX_WIDTH)?;
            // `DeepseekV2MoE`: no shared experts when `n_shared_experts is None`.
            let n_shared = cfg.opt("n_shared_experts", 0, MAX_EXPERTS)?.unwrap_or(0);
            Moe {
                n_experts,
                top_k: top_k()?,
                expert_intermediate_size,
                shared_intermediate_size: n_shared * expert_intermediate_size,
                shared_expert_gate: false,
                // `DeepseekV3DecoderLayer`: MoE where `layer_idx >= first_k_dense_replace`, none past the last.
                layers: MoeLayers::FromLayer(cfg.req("first_k_dense_replace", 0, MAX_LAYERS)?.min(n_layers)),
                group_limited: match family {
                    Family::DeepseekV2 => group_limit(cfg, n_experts)?,
                    _ => None,
                },
                biased: false,
            }
        }
        _ => return Ok(None),
    };
    Ok(Some(res))
}

/// The routed experts of an unknown `model_type`, under the keys the known families' configs write
/// them with (transformers 4.57.1, `MixtralConfig`, `Qwen2MoeConfig`, `DeepseekV3Config`): the
/// count as `num_local_experts` (Mixtral; gpt-oss too), `num_experts` (Qwen-MoE) or
/// `n_routed_experts` (DeepSeek; GLM-4.5 too); the experts per token as `num_experts_per_tok` (or
/// gpt-oss's `experts_per_token`); an expert's width as `moe_intermediate_size`, else
/// `intermediate_size` (Mixtral's way); shared experts as DeepSeek's `n_shared_experts` experts of
/// that width or Qwen2-MoE's `shared_expert_intermediate_size`; the layers holding experts as
/// DeepSeek's `first_k_dense_replace`, or Qwen-MoE's `decoder_sparse_step` (Llama 4's
/// `interleave_moe_layer_step` picks the same layers) and `mlp_only_layers`, else every layer.
/// Llama 4's `intermediate_size_mlp` says its MoE layers also hold a shared expert. `None` when no
/// count is written, or it is 0. What a model does beyond these (expert biases and attention
/// sinks, as gpt-oss has, which is read as itself) is not counted: the warning says to check the
/// count against the model card.
fn generic_moe(
    cfg: &Cfg,
    n_layers: u64,
    warnings: &mut Vec<ImportWarning>,
) -> Result<Option<Moe>, ConfigError> {
    let mut counted = None;
    for key in ["num_local_experts", "num_experts", "n_routed_experts"] {
        if let Some(n) = cfg.opt(key, 0, MAX_EXPERTS)? {
            counted = Some((key, n));
            break;
        }
    }
    let Some((key, n_experts)) = counted.filter(|&(_, n)| 0 < n) else {
        // Experts named under other keys (ERNIE-4.5's `moe_num_experts`, `moe_k`) would be read as
        // a dense model a fraction of the size: refused, saying how to write them.
        let other = cfg.obj.iter().find(|(k, v)| k.contains("expert") && v.as_u64().is_some_and(|n| 1 < n));
        if let (None, Some((other, value))) = (counted, other) {
            return Err(ConfigError::Inconsistent(format!(
                "{other} ({value}) names experts under a key this reader does not take: write their count as num_local_experts, num_experts or n_routed_experts and the experts per token as num_experts_per_tok"
            )));
        }
        return Ok(None);
    };
    let top_k = match cfg.opt("num_experts_per_tok", 1, MAX_EXPERTS)? {
        Some(k) => k,
        None => cfg
            .opt("experts_per_token", 1, MAX_EXPERTS)?
            .ok_or(ConfigError::Missing("num_experts_per_tok"))?,
    };
    let expert_intermediate_size = match cfg.opt("moe_intermediate_size", 1, MAX_WIDTH)? {
        Some(width) => width,
        None => cfg.req("intermediate_size", 1, MAX_WIDTH)?,
    };
    // Llama 4 writes its dense layers' width as `intermediate_size_mlp`, and each of its MoE layers
    // holds a shared expert of `intermediate_size` beside the routed ones (transformers 4.57.1
    // `Llama4TextMoe.shared_expert`, `Llama4TextDecoderLayer`).
    let llama4 = cfg.opt("intermediate_size_mlp", 1, MAX_WIDTH)?.is_some();
    let shared_intermediate_size = match cfg.opt("n_shared_experts", 0, MAX_EXPERTS)? {
        Some(n) => n * expert_intermediate_size,
        None if llama4 => expert_intermediate_size,
        None => cfg.opt("shared_expert_intermediate_size", 0, MAX_WIDTH)?.unwrap_or(0),
    };
    let freq = cfg.opt("moe_layer_freq", 1, MAX_LAYERS)?.unwrap_or(1);
    if freq != 1 {
        warnings.push(ImportWarning::MoeLayerFreq(freq));
    }
    let layers = match cfg.opt("first_k_dense_replace", 0, MAX_LAYERS)? {
        Some(first) => MoeLayers::FromLayer(first.min(n_layers)),
        None => {
            let step = match cfg.opt("decoder_sparse_step", 1, MAX_LAYERS)? {
                Some(step) => step,
                None => cfg.opt("interleave_moe_layer_step", 1, MAX_LAYERS)?.unwrap_or(1),
            };
            match (step, cfg.list("mlp_only_layers")?) {
                (1, dense) if dense.is_empty() => MoeLayers::FromLayer(0),
                (step, dense) => MoeLayers::Step { step, dense },
            }
        }
    };
    warnings.push(ImportWarning::ExpertsRead { key, n_experts, top_k });
    Ok(Some(Moe {
        n_experts,
        top_k,
        expert_intermediate_size,
        shared_intermediate_size,
        shared_expert_gate: false,
        layers,
        group_limited: None,
        biased: false,
    }))
}

/// DeepSeek-V2's groups (`DeepseekV2Config`): with `topk_method` `group_limited_greedy`, `n_group`
/// groups of the experts and `topk_group` of them kept per token; `view(…, n_group, -1)` needs the
/// groups to divide the experts. The greedy router (the class default) has none.
fn group_limit(cfg: &Cfg, n_experts: u64) -> Result<Option<GroupLimit>, ConfigError> {
    if !matches!(cfg.get("topk_method"), (_, Some(Value::String(m))) if m == "group_limited_greedy") {
        return Ok(None);
    }
    let groups = cfg.req("n_group", 1, n_experts)?;
    let top_groups = cfg.req("topk_group", 1, groups)?;
    if !n_experts.is_multiple_of(groups) {
        return Err(ConfigError::Inconsistent(format!(
            "n_group ({groups}) does not divide n_routed_experts ({n_experts})"
        )));
    }
    Ok(Some(GroupLimit { groups, top_groups }))
}

fn check_consistent(arch: &Architecture) -> Result<(), ConfigError> {
    if let Attention::Gqa { n_heads, n_kv_heads, .. } = arch.attention
        && !n_heads.is_multiple_of(n_kv_heads)
    {
        return Err(ConfigError::Inconsistent(format!(
            "num_attention_heads ({n_heads}) is not a multiple of num_key_value_heads ({n_kv_heads})"
        )));
    }
    if let Some(moe) = &arch.moe
        && moe.n_experts < moe.top_k
    {
        return Err(ConfigError::Inconsistent(format!(
            "num_experts_per_tok ({}) is more than the {} experts",
            moe.top_k, moe.n_experts
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every family's defaults read as an object that names the keys every shape needs (GPT-2 by its
    /// own names): a typo in their JSON text would otherwise surface only when a config leaves a
    /// key out.
    #[test]
    fn every_family_has_its_class_defaults() {
        use Family::*;
        for family in [
            Gpt2, Llama, Mistral, Qwen2, Qwen3, Glm, Glm4, Mixtral, Qwen2Moe, Qwen3Moe, DeepseekV2,
            DeepseekV3, Qwen3Next, Qwen35, Qwen35Moe,
        ] {
            let Value::Object(defaults) = class_defaults(family) else { panic!("{family:?}: not an object") };
            let keys: &[&str] = match family {
                Gpt2 => &["vocab_size", "n_embd", "n_layer", "n_head"],
                // `Qwen3_5MoeTextConfig` deletes `intermediate_size`: no layer is dense.
                Qwen35Moe => &["vocab_size", "hidden_size", "num_hidden_layers", "num_attention_heads"],
                _ => &SHAPE_KEYS,
            };
            for key in keys {
                assert!(defaults.get(*key).is_some_and(Value::is_u64), "{family:?}: {key}");
            }
        }
    }
}
