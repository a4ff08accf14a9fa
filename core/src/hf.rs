//! Reading an HF `config.json` into an [`Architecture`].
//!
//! Every `model_type` of [`Family`] is read with the defaults its transformers configuration class
//! uses; an unknown `model_type` is read as a Llama-like decoder with a warning. Values that cannot
//! describe a real model (zero, negative, fractional, absurdly large, inconsistent) are refused with a
//! message naming the key. Nothing here panics on any input (fuzzed in tests).

use std::fmt;

use serde_json::{Map, Value};

use crate::model::{self, Architecture, Attention, Family, Mlp, MlpKind, Moe, MoeLayers, Norm};

/// The largest model the planner accepts: 10^15 parameters, a thousand times the largest trained today.
pub const MAX_PARAMS: u64 = 1_000_000_000_000_000;

/// An architecture read from a config, with what the reader had to assume.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Imported {
    /// The architecture.
    pub arch: Architecture,
    /// Assumptions the user should know about.
    pub warnings: Vec<ImportWarning>,
}

/// Something the reader assumed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ImportWarning {
    /// Occurs when `model_type` is missing or not a known family; the config was read as Llama-like.
    UnknownModelType(String),
    /// Occurs when a MoE config sets `moe_layer_freq` other than 1; every layer past
    /// `first_k_dense_replace` was taken as MoE, as in every published DeepSeek config.
    MoeLayerFreq(u64),
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
    /// Occurs when a required key is absent (or `null`).
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
    let obj = value.as_object().ok_or(ConfigError::NotObject)?;
    let cfg = Cfg { obj };
    let model_type = match obj.get("model_type") {
        Some(Value::String(t)) => t.as_str(),
        None | Some(Value::Null) => "",
        Some(_) => return Err(ConfigError::WrongType { key: "model_type", expected: "a string" }),
    };
    let mut warnings = Vec::new();
    let family = match Family::from_model_type(model_type) {
        Some(family) => family,
        None => {
            warnings.push(ImportWarning::UnknownModelType(model_type.to_owned()));
            Family::Llama
        }
    };
    let arch = match family {
        Family::Gpt2 => gpt2(&cfg)?,
        _ => decoder(&cfg, family, &mut warnings)?,
    };
    check_consistent(&arch)?;
    let counts = model::count_params(&arch);
    if MAX_PARAMS < counts.total().saturating_add(counts.mtp) {
        return Err(ConfigError::TooLarge);
    }
    Ok(Imported { arch, warnings })
}

// Ranges wide enough for every published model and narrow enough that no product overflows.
const MAX_WIDTH: u64 = 1 << 20;
const MAX_VOCAB: u64 = 1 << 24;
const MAX_LAYERS: u64 = 1 << 12;
const MAX_HEADS: u64 = 1 << 14;
const MAX_EXPERTS: u64 = 1 << 14;
const MAX_POSITIONS: u64 = 1 << 26;

struct Cfg<'a> {
    obj: &'a Map<String, Value>,
}

impl Cfg<'_> {
    /// A count in `[min, max]`, or `None` when the key is absent or `null`.
    fn opt(&self, key: &'static str, min: u64, max: u64) -> Result<Option<u64>, ConfigError> {
        let value = match self.obj.get(key) {
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

    fn req(&self, key: &'static str, min: u64, max: u64) -> Result<u64, ConfigError> {
        self.opt(key, min, max)?.ok_or(ConfigError::Missing(key))
    }

    fn flag(&self, key: &'static str, default: bool) -> Result<bool, ConfigError> {
        match self.obj.get(key) {
            None | Some(Value::Null) => Ok(default),
            Some(Value::Bool(b)) => Ok(*b),
            Some(_) => Err(ConfigError::WrongType { key, expected: "true or false" }),
        }
    }

    fn list(&self, key: &'static str) -> Result<Vec<u64>, ConfigError> {
        match self.obj.get(key) {
            None | Some(Value::Null) => Ok(Vec::new()),
            Some(Value::Array(items)) => items
                .iter()
                .map(|item| {
                    item.as_u64().ok_or(ConfigError::WrongType { key, expected: "a list of layer indices" })
                })
                .collect(),
            Some(_) => Err(ConfigError::WrongType { key, expected: "a list of layer indices" }),
        }
    }
}

/// Source: transformers `models/gpt2/configuration_gpt2.py` (`n_embd`, `n_layer`, `n_head`,
/// `n_positions`, `n_inner` = None → 4·n_embd, `tie_word_embeddings` from `PretrainedConfig`, default true).
fn gpt2(cfg: &Cfg) -> Result<Architecture, ConfigError> {
    let hidden_size = cfg.req("n_embd", 1, MAX_WIDTH)?;
    let n_heads = cfg.req("n_head", 1, MAX_HEADS)?;
    let n_positions = cfg.opt("n_positions", 1, MAX_POSITIONS)?.unwrap_or(1024);
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
        tied_embeddings: cfg.flag("tie_word_embeddings", true)?,
        n_mtp_layers: 0,
    })
}

/// Llama-like decoders, with each family's differences. Sources, transformers
/// `models/<family>/configuration_<family>.py` and `modeling_<family>.py`: `LlamaConfig`
/// (`attention_bias`, `mlp_bias`, `tie_word_embeddings=False`), `Qwen2Attention` (q/k/v bias always),
/// `Qwen3Config`/`Qwen3Attention` (`head_dim` 128 default, q/k norm), `GlmConfig` (`attention_bias=True`,
/// o without bias, fused `gate_up_proj`), `MixtralConfig` (`num_local_experts`, `intermediate_size` per
/// expert), `Qwen2MoeConfig` (`decoder_sparse_step=1`, `mlp_only_layers=[]`, shared expert and gate),
/// `DeepseekV3Config` (`first_k_dense_replace`, `n_shared_experts`, MLA ranks, `num_nextn_predict_layers`).
fn decoder(
    cfg: &Cfg,
    family: Family,
    warnings: &mut Vec<ImportWarning>,
) -> Result<Architecture, ConfigError> {
    let hidden_size = cfg.req("hidden_size", 1, MAX_WIDTH)?;
    let n_layers = cfg.req("num_hidden_layers", 1, MAX_LAYERS)?;
    let n_heads = cfg.req("num_attention_heads", 1, MAX_HEADS)?;
    let vocab_size = cfg.req("vocab_size", 1, MAX_VOCAB)?;
    let max_position_embeddings = cfg.opt("max_position_embeddings", 1, MAX_POSITIONS)?.unwrap_or(4096);
    let tied_embeddings = cfg.flag("tie_word_embeddings", false)?;
    let attention_bias_default = family == Family::Glm || family == Family::Glm4;
    let attention_bias = cfg.flag("attention_bias", attention_bias_default)?;

    let is_mla = matches!(family, Family::DeepseekV2 | Family::DeepseekV3);
    let attention = if is_mla {
        Attention::Mla {
            n_heads,
            // `DeepseekV3Config` defaults an absent q_lora_rank to 1536; an explicit null (V2-Lite)
            // projects queries directly. DeepSeek's own config_16B.json writes 0 for null.
            q_lora_rank: match cfg.obj.get("q_lora_rank") {
                None => Some(1536),
                Some(_) => cfg.opt("q_lora_rank", 0, MAX_WIDTH)?.filter(|&r| 0 < r),
            },
            kv_lora_rank: cfg.req("kv_lora_rank", 1, MAX_WIDTH)?,
            qk_nope_head_dim: cfg.req("qk_nope_head_dim", 1, MAX_WIDTH)?,
            qk_rope_head_dim: cfg.req("qk_rope_head_dim", 1, MAX_WIDTH)?,
            v_head_dim: cfg.req("v_head_dim", 1, MAX_WIDTH)?,
        }
    } else {
        let n_kv_heads = cfg.opt("num_key_value_heads", 1, MAX_HEADS)?.unwrap_or(n_heads);
        let head_dim = match cfg.opt("head_dim", 1, MAX_WIDTH)? {
            Some(d) => d,
            None if family == Family::Qwen3 || family == Family::Qwen3Moe => 128,
            None if hidden_size.is_multiple_of(n_heads) => hidden_size / n_heads,
            None => {
                return Err(ConfigError::Inconsistent(format!(
                    "hidden_size ({hidden_size}) is not a multiple of num_attention_heads ({n_heads}) and head_dim is not set"
                )));
            }
        };
        let (qkv_bias, o_bias) = match family {
            Family::Qwen2 => (true, false),
            Family::Qwen2Moe => (cfg.flag("qkv_bias", true)?, false),
            Family::Glm | Family::Glm4 => (attention_bias, false),
            Family::Mistral | Family::Mixtral => (false, false),
            _ => (attention_bias, attention_bias),
        };
        Attention::Gqa {
            n_heads,
            n_kv_heads,
            head_dim,
            qkv_bias,
            o_bias,
            qk_norm: matches!(family, Family::Qwen3 | Family::Qwen3Moe),
            fused_qkv: false,
        }
    };

    let moe = moe(cfg, family, n_layers, warnings)?;
    // Mixtral has no dense layer; its `intermediate_size` is the expert width.
    let intermediate_size = match (&moe, family) {
        (Some(m), Family::Mixtral) => m.expert_intermediate_size,
        _ => cfg.req("intermediate_size", 1, MAX_WIDTH)?,
    };
    let mlp = Mlp {
        kind: MlpKind::Gated,
        intermediate_size,
        bias: family == Family::Llama && cfg.flag("mlp_bias", false)?,
        fused_gate_up: matches!(family, Family::Glm | Family::Glm4),
    };
    let n_mtp_layers = match family {
        Family::DeepseekV3 => cfg.opt("num_nextn_predict_layers", 0, MAX_LAYERS)?.unwrap_or(0),
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
        post_norms: family == Family::Glm4,
        learned_positions: 0,
        max_position_embeddings,
        tied_embeddings,
        n_mtp_layers,
    })
}

fn moe(
    cfg: &Cfg,
    family: Family,
    n_layers: u64,
    warnings: &mut Vec<ImportWarning>,
) -> Result<Option<Moe>, ConfigError> {
    let top_k = || cfg.req("num_experts_per_tok", 1, MAX_EXPERTS);
    let res = match family {
        Family::Mixtral => Moe {
            n_experts: cfg.req("num_local_experts", 1, MAX_EXPERTS)?,
            top_k: top_k()?,
            expert_intermediate_size: cfg.req("intermediate_size", 1, MAX_WIDTH)?,
            shared_intermediate_size: 0,
            shared_expert_gate: false,
            layers: MoeLayers::FromLayer(0),
        },
        Family::Qwen2Moe | Family::Qwen3Moe => {
            let Some(n_experts) = cfg.opt("num_experts", 1, MAX_EXPERTS)? else { return Ok(None) };
            let qwen2 = family == Family::Qwen2Moe;
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
                    step: cfg.opt("decoder_sparse_step", 1, MAX_LAYERS)?.unwrap_or(1),
                    dense: cfg.list("mlp_only_layers")?,
                },
            }
        }
        Family::DeepseekV2 | Family::DeepseekV3 => {
            let Some(n_experts) = cfg.opt("n_routed_experts", 1, MAX_EXPERTS)? else { return Ok(None) };
            let freq = cfg.opt("moe_layer_freq", 1, MAX_LAYERS)?.unwrap_or(1);
            if freq != 1 {
                warnings.push(ImportWarning::MoeLayerFreq(freq));
            }
            let expert_intermediate_size = cfg.req("moe_intermediate_size", 1, MAX_WIDTH)?;
            let n_shared = cfg.opt("n_shared_experts", 0, MAX_EXPERTS)?.unwrap_or(0);
            Moe {
                n_experts,
                top_k: top_k()?,
                expert_intermediate_size,
                shared_intermediate_size: n_shared * expert_intermediate_size,
                shared_expert_gate: false,
                layers: MoeLayers::FromLayer(cfg.opt("first_k_dense_replace", 0, n_layers)?.unwrap_or(0)),
            }
        }
        _ => return Ok(None),
    };
    Ok(Some(res))
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
