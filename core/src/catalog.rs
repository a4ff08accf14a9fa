//! The model and hardware catalogs, each figure with its source.
//!
//! A catalog model is the part of its official HF `config.json` that shapes the parameter count,
//! copied verbatim and read by the same importer as a user's upload ([`crate::hf::import`]), so the
//! catalog and the importer cannot drift apart. The page shows each model's source beside it.

use std::sync::OnceLock;

use crate::hf;
use crate::model::Architecture;

/// One catalog model.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ModelEntry {
    /// Stable lowercase kebab-case id used in plan files and permalinks, e.g. `llama-3-8b`.
    pub id: &'static str,
    /// Display name as the publisher writes it.
    pub name: &'static str,
    /// The architecture read from `config`.
    pub arch: Architecture,
    /// Where the config values come from.
    pub source: &'static str,
}

/// The model catalog, by family and size.
pub fn models() -> &'static [ModelEntry] {
    static MODELS: OnceLock<Vec<ModelEntry>> = OnceLock::new();
    MODELS.get_or_init(|| {
        CONFIGS
            .iter()
            .map(|c| ModelEntry {
                id: c.id,
                name: c.name,
                // Every entry is read in tests (`catalog_configs_read_without_warnings`).
                arch: hf::import(c.config)
                    .map(|imported| imported.arch)
                    .unwrap_or_else(|e| panic!("{}: {e}", c.id)),
                source: c.source,
            })
            .collect()
    })
}

/// Looks a model up by id.
pub fn model(id: &str) -> Option<&'static ModelEntry> {
    models().iter().find(|m| m.id == id)
}

/// The catalog model a directory or repository name spells, by family, version and size: the
/// path's last part first, then the ones above it. A fine-tune's variant words (`-Instruct`,
/// `-Chat`, `-Base`, `-hf`, `-it`, a `Meta-` prefix, a release date such as `-2507`) keep the
/// architecture and are set aside; a version the catalog id does not carry (`-v0.1`) is tried
/// without; MindSpeed-RL's dotless names (`qwen25_7b`) are read too.
///
/// ```
/// use trainplan_core::catalog::model_by_name;
///
/// assert_eq!(model_by_name("/models/Qwen2.5-14B-Instruct").map(|m| m.id), Some("qwen2.5-14b"));
/// assert_eq!(model_by_name("/data/Meta-Llama-3.1-70B-Instruct").map(|m| m.id), Some("llama-3.1-70b"));
/// assert_eq!(model_by_name("Qwen/Qwen2-7B-Instruct").map(|m| m.id), Some("qwen2-7b"));
/// assert_eq!(model_by_name("mistralai/Mistral-Nemo-Instruct-2407").map(|m| m.id), Some("mistral-nemo"));
/// assert_eq!(model_by_name("Qwen/Qwen2.5-Coder-14B-Instruct").map(|m| m.id), Some("qwen2.5-coder-14b"));
/// assert_eq!(model_by_name("moonshotai/Moonlight-16B-A3B-Instruct").map(|m| m.id), Some("moonlight-16b-a3b"));
/// assert_eq!(model_by_name("/models/Qwen2.5-13B"), None);
/// ```
pub fn model_by_name(path: &str) -> Option<&'static ModelEntry> {
    path.split(['/', '\\']).rev().filter(|part| !part.is_empty()).find_map(model_by_dir_name)
}

fn model_by_dir_name(name: &str) -> Option<&'static ModelEntry> {
    const VARIANTS: &[&str] = &["instruct", "chat", "base", "hf", "it", "meta"];
    let is_date = |w: &str| matches!(w.len(), 4 | 6 | 8) && w.bytes().all(|b| b.is_ascii_digit());
    let is_version = |w: &str| {
        w.strip_prefix('v').is_some_and(|r| {
            r.starts_with(|c: char| c.is_ascii_digit()) && r.bytes().all(|b| b.is_ascii_digit() || b == b'.')
        })
    };
    // A GPTQ, AWQ or bitsandbytes checkpoint keeps its model's architecture (`-GPTQ-Int4`, `-AWQ`, `-bnb-4bit`:
    // `crate::quantized::from_name` reads its format).
    let packed = crate::quantized::from_name(name).is_some();
    let quantization = |w: &str| packed && crate::quantized::RELEASE_WORDS.contains(&w);
    let words: Vec<String> = name
        .split(['-', '_', ' '])
        .map(str::to_ascii_lowercase)
        .filter(|w| !w.is_empty() && !VARIANTS.contains(&w.as_str()) && !is_date(w) && !quantization(w))
        .collect();
    if words.is_empty() {
        return None;
    }
    let squash = |text: &str, dots: bool| -> String {
        text.chars()
            .filter(|c| c.is_ascii_alphanumeric() || (dots && *c == '.'))
            .map(|c| c.to_ascii_lowercase())
            .collect()
    };
    let unversioned: Vec<&str> = words.iter().map(String::as_str).filter(|w| !is_version(w)).collect();
    for spelled in [words.join("-"), unversioned.join("-")] {
        for dots in [true, false] {
            let key = squash(&spelled, dots);
            if let Some(m) = models().iter().find(|m| squash(m.id, dots) == key) {
                return Some(m);
            }
        }
    }
    None
}

/// A catalog model as written: its config text and where it comes from.
pub struct CatalogConfig {
    /// Stable id.
    pub id: &'static str,
    /// Display name.
    pub name: &'static str,
    /// The official config.json the values are copied from.
    pub source: &'static str,
    /// The keys of that config.json that shape the model.
    pub config: &'static str,
}

/// Llama 3.1 8B's config, which DeepSeek-R1-Distill-Llama-8B, distilled onto it, keeps.
const LLAMA_3_1_8B: &str = r#"{"model_type": "llama", "vocab_size": 128256, "hidden_size": 4096, "intermediate_size": 14336, "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8, "max_position_embeddings": 131072, "tie_word_embeddings": false, "attention_bias": false, "mlp_bias": false, "rope_theta": 500000.0, "rms_norm_eps": 1e-05, "rope_scaling": {"factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0, "original_max_position_embeddings": 8192, "rope_type": "llama3"}}"#;

/// Llama 3.1 70B's config, which DeepSeek-R1-Distill-Llama-70B (on Llama 3.3 70B, the same shape) keeps.
const LLAMA_3_1_70B: &str = r#"{"model_type": "llama", "vocab_size": 128256, "hidden_size": 8192, "intermediate_size": 28672, "num_hidden_layers": 80, "num_attention_heads": 64, "num_key_value_heads": 8, "max_position_embeddings": 131072, "tie_word_embeddings": false, "attention_bias": false, "mlp_bias": false, "rope_theta": 500000.0, "rms_norm_eps": 1e-05, "rope_scaling": {"factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0, "original_max_position_embeddings": 8192, "rope_type": "llama3"}}"#;

/// DeepSeek-V3's config, which DeepSeek-R1, trained on DeepSeek-V3-Base, keeps.
const DEEPSEEK_V3: &str = r#"{"model_type": "deepseek_v3", "vocab_size": 129280, "hidden_size": 7168, "intermediate_size": 18432, "moe_intermediate_size": 2048, "num_hidden_layers": 61, "num_attention_heads": 128, "num_key_value_heads": 128, "n_routed_experts": 256, "n_shared_experts": 1, "num_experts_per_tok": 8, "first_k_dense_replace": 3, "moe_layer_freq": 1, "q_lora_rank": 1536, "kv_lora_rank": 512, "qk_rope_head_dim": 64, "qk_nope_head_dim": 128, "v_head_dim": 128, "num_nextn_predict_layers": 1, "max_position_embeddings": 163840, "tie_word_embeddings": false, "rope_theta": 10000, "rms_norm_eps": 1e-06, "topk_method": "noaux_tc", "n_group": 8, "topk_group": 4, "routed_scaling_factor": 2.5, "norm_topk_prob": true, "scoring_func": "sigmoid", "rope_scaling": {"beta_fast": 32, "beta_slow": 1, "factor": 40, "mscale": 1.0, "mscale_all_dim": 1.0, "original_max_position_embeddings": 4096, "type": "yarn"}}"#;

/// The catalog config of `id`.
pub fn config(id: &str) -> Option<&'static CatalogConfig> {
    CONFIGS.iter().find(|c| c.id == id)
}

/// The `model_type` a catalog config writes first (every catalog config starts with it; a test
/// checks it against the parsed config).
pub fn model_type(config: &'static str) -> Option<&'static str> {
    config.strip_prefix(r#"{"model_type": ""#)?.split('"').next()
}

/// The catalog's configs. Each `source` is the official `config.json`; the values were checked
/// (rope_theta, norm epsilon and rope_scaling as the launch files need them, from the same files)
/// against copies of it and against the published parameter counts in `core/tests/it/params.rs`.
pub const CONFIGS: &[CatalogConfig] = &[
    CatalogConfig {
        id: "gpt2",
        name: "GPT-2 (124M)",
        source: "huggingface.co/openai-community/gpt2/blob/main/config.json",
        config: r#"{"model_type": "gpt2", "vocab_size": 50257, "n_embd": 768, "n_layer": 12, "n_head": 12, "n_positions": 1024, "layer_norm_epsilon": 1e-05}"#,
    },
    CatalogConfig {
        id: "gpt2-xl",
        name: "GPT-2 XL (1.5B)",
        source: "huggingface.co/openai-community/gpt2-xl/blob/main/config.json",
        config: r#"{"model_type": "gpt2", "vocab_size": 50257, "n_embd": 1600, "n_layer": 48, "n_head": 25, "n_positions": 1024, "layer_norm_epsilon": 1e-05}"#,
    },
    CatalogConfig {
        id: "qwen2.5-0.5b",
        name: "Qwen2.5-0.5B",
        source: "huggingface.co/Qwen/Qwen2.5-0.5B/blob/main/config.json",
        config: r#"{"model_type": "qwen2", "vocab_size": 151936, "hidden_size": 896, "intermediate_size": 4864, "num_hidden_layers": 24, "num_attention_heads": 14, "num_key_value_heads": 2, "max_position_embeddings": 32768, "tie_word_embeddings": true, "rope_theta": 1000000.0, "rms_norm_eps": 1e-06}"#,
    },
    CatalogConfig {
        id: "qwen3-0.6b",
        name: "Qwen3-0.6B",
        source: "huggingface.co/Qwen/Qwen3-0.6B/blob/main/config.json",
        config: r#"{"model_type": "qwen3", "vocab_size": 151936, "hidden_size": 1024, "intermediate_size": 3072, "num_hidden_layers": 28, "num_attention_heads": 16, "num_key_value_heads": 8, "head_dim": 128, "max_position_embeddings": 40960, "tie_word_embeddings": true, "attention_bias": false, "rope_theta": 1000000.0, "rms_norm_eps": 1e-06}"#,
    },
    CatalogConfig {
        id: "gemma-3-1b",
        name: "Gemma-3-1B",
        source: "huggingface.co/google/gemma-3-1b-pt/blob/main/config.json",
        config: r#"{"model_type": "gemma3_text", "vocab_size": 262144, "hidden_size": 1152, "intermediate_size": 6912, "num_hidden_layers": 26, "num_attention_heads": 4, "num_key_value_heads": 1, "head_dim": 256, "max_position_embeddings": 32768, "rms_norm_eps": 1e-06, "rope_theta": 1000000, "sliding_window": 512, "sliding_window_pattern": 6, "query_pre_attn_scalar": 256}"#,
    },
    CatalogConfig {
        id: "llama-3.2-1b",
        name: "Llama-3.2-1B",
        source: "huggingface.co/meta-llama/Llama-3.2-1B/blob/main/config.json",
        config: r#"{"model_type": "llama", "vocab_size": 128256, "hidden_size": 2048, "intermediate_size": 8192, "num_hidden_layers": 16, "num_attention_heads": 32, "num_key_value_heads": 8, "head_dim": 64, "max_position_embeddings": 131072, "tie_word_embeddings": true, "attention_bias": false, "mlp_bias": false, "rope_theta": 500000.0, "rms_norm_eps": 1e-05, "rope_scaling": {"factor": 32.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0, "original_max_position_embeddings": 8192, "rope_type": "llama3"}}"#,
    },
    CatalogConfig {
        id: "qwen2.5-1.5b",
        name: "Qwen2.5-1.5B",
        source: "huggingface.co/Qwen/Qwen2.5-1.5B/blob/main/config.json",
        config: r#"{"model_type": "qwen2", "vocab_size": 151936, "hidden_size": 1536, "intermediate_size": 8960, "num_hidden_layers": 28, "num_attention_heads": 12, "num_key_value_heads": 2, "max_position_embeddings": 131072, "tie_word_embeddings": true, "rope_theta": 1000000.0, "rms_norm_eps": 1e-06}"#,
    },
    CatalogConfig {
        id: "deepseek-r1-distill-qwen-1.5b",
        name: "DeepSeek-R1-Distill-Qwen-1.5B",
        source: "huggingface.co/deepseek-ai/DeepSeek-R1-Distill-Qwen-1.5B/blob/main/config.json",
        config: r#"{"model_type": "qwen2", "vocab_size": 151936, "hidden_size": 1536, "intermediate_size": 8960, "num_hidden_layers": 28, "num_attention_heads": 12, "num_key_value_heads": 2, "max_position_embeddings": 131072, "tie_word_embeddings": false, "rope_theta": 10000, "rms_norm_eps": 1e-06}"#,
    },
    CatalogConfig {
        id: "qwen3-1.7b",
        name: "Qwen3-1.7B",
        source: "huggingface.co/Qwen/Qwen3-1.7B/blob/main/config.json",
        config: r#"{"model_type": "qwen3", "vocab_size": 151936, "hidden_size": 2048, "intermediate_size": 6144, "num_hidden_layers": 28, "num_attention_heads": 16, "num_key_value_heads": 8, "head_dim": 128, "max_position_embeddings": 40960, "tie_word_embeddings": true, "attention_bias": false, "rope_theta": 1000000.0, "rms_norm_eps": 1e-06}"#,
    },
    CatalogConfig {
        id: "gemma-2-2b",
        name: "Gemma-2-2B",
        source: "huggingface.co/google/gemma-2-2b/blob/main/config.json",
        config: r#"{"model_type": "gemma2", "vocab_size": 256000, "hidden_size": 2304, "intermediate_size": 9216, "num_hidden_layers": 26, "num_attention_heads": 8, "num_key_value_heads": 4, "head_dim": 256, "max_position_embeddings": 8192, "rms_norm_eps": 1e-06, "rope_theta": 10000.0, "sliding_window": 4096, "query_pre_attn_scalar": 256, "final_logit_softcapping": 30.0}"#,
    },
    CatalogConfig {
        id: "qwen2.5-3b",
        name: "Qwen2.5-3B",
        source: "huggingface.co/Qwen/Qwen2.5-3B/blob/main/config.json",
        config: r#"{"model_type": "qwen2", "vocab_size": 151936, "hidden_size": 2048, "intermediate_size": 11008, "num_hidden_layers": 36, "num_attention_heads": 16, "num_key_value_heads": 2, "max_position_embeddings": 32768, "tie_word_embeddings": true, "rope_theta": 1000000.0, "rms_norm_eps": 1e-06}"#,
    },
    CatalogConfig {
        id: "llama-3.2-3b",
        name: "Llama-3.2-3B",
        source: "huggingface.co/meta-llama/Llama-3.2-3B/blob/main/config.json",
        config: r#"{"model_type": "llama", "vocab_size": 128256, "hidden_size": 3072, "intermediate_size": 8192, "num_hidden_layers": 28, "num_attention_heads": 24, "num_key_value_heads": 8, "head_dim": 128, "max_position_embeddings": 131072, "tie_word_embeddings": true, "attention_bias": false, "mlp_bias": false, "rope_theta": 500000.0, "rms_norm_eps": 1e-05, "rope_scaling": {"factor": 32.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0, "original_max_position_embeddings": 8192, "rope_type": "llama3"}}"#,
    },
    CatalogConfig {
        id: "phi-3.5-mini",
        name: "Phi-3.5-mini-instruct",
        source: "huggingface.co/microsoft/Phi-3.5-mini-instruct/blob/main/config.json",
        config: r#"{"model_type": "phi3", "vocab_size": 32064, "hidden_size": 3072, "intermediate_size": 8192, "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 32, "max_position_embeddings": 131072, "original_max_position_embeddings": 4096, "sliding_window": 262144, "tie_word_embeddings": false, "attention_bias": false, "rope_theta": 10000.0, "rms_norm_eps": 1e-05, "rope_scaling": {"long_factor": [1.0800000429153442, 1.1100000143051147, 1.1399999856948853, 1.340000033378601, 1.5899999141693115, 1.600000023841858, 1.6200000047683716, 2.620000123977661, 3.2300000190734863, 3.2300000190734863, 4.789999961853027, 7.400000095367432, 7.700000286102295, 9.09000015258789, 12.199999809265137, 17.670000076293945, 24.46000099182129, 28.57000160217285, 30.420001983642578, 30.840002059936523, 32.590003967285156, 32.93000411987305, 42.320003509521484, 44.96000289916992, 50.340003967285156, 50.45000457763672, 57.55000305175781, 57.93000411987305, 58.21000289916992, 60.1400032043457, 62.61000442504883, 62.62000274658203, 62.71000289916992, 63.1400032043457, 63.1400032043457, 63.77000427246094, 63.93000411987305, 63.96000289916992, 63.970001220703125, 64.02999877929688, 64.06999969482422, 64.08000183105469, 64.12000274658203, 64.41000366210938, 64.4800033569336, 64.51000213623047, 64.52999877929688, 64.83999633789062], "short_factor": [1.0, 1.0199999809265137, 1.0299999713897705, 1.0299999713897705, 1.0499999523162842, 1.0499999523162842, 1.0499999523162842, 1.0499999523162842, 1.0499999523162842, 1.0699999332427979, 1.0999999046325684, 1.1099998950958252, 1.1599998474121094, 1.1599998474121094, 1.1699998378753662, 1.2899998426437378, 1.339999794960022, 1.679999828338623, 1.7899998426437378, 1.8199998140335083, 1.8499997854232788, 1.8799997568130493, 1.9099997282028198, 1.9399996995925903, 1.9899996519088745, 2.0199997425079346, 2.0199997425079346, 2.0199997425079346, 2.0199997425079346, 2.0199997425079346, 2.0199997425079346, 2.0299997329711914, 2.0299997329711914, 2.0299997329711914, 2.0299997329711914, 2.0299997329711914, 2.0299997329711914, 2.0299997329711914, 2.0299997329711914, 2.0299997329711914, 2.0799996852874756, 2.0899996757507324, 2.189999580383301, 2.2199995517730713, 2.5899994373321533, 2.729999542236328, 2.749999523162842, 2.8399994373321533], "type": "longrope"}}"#,
    },
    CatalogConfig {
        id: "phi-4-mini",
        name: "Phi-4-mini-instruct",
        source: "huggingface.co/microsoft/Phi-4-mini-instruct/blob/main/config.json",
        config: r#"{"model_type": "phi3", "vocab_size": 200064, "hidden_size": 3072, "intermediate_size": 8192, "num_hidden_layers": 32, "num_attention_heads": 24, "num_key_value_heads": 8, "max_position_embeddings": 131072, "original_max_position_embeddings": 4096, "partial_rotary_factor": 0.75, "sliding_window": 262144, "tie_word_embeddings": true, "attention_bias": false, "mlp_bias": false, "rope_theta": 10000.0, "rms_norm_eps": 1e-05, "rope_scaling": {"long_factor": [1, 1.118320672, 1.250641126, 1.398617824, 1.564103225, 1.74916897, 1.956131817, 2.187582649, 2.446418898, 2.735880826, 3.059592084, 3.421605075, 3.826451687, 4.279200023, 4.785517845, 5.351743533, 5.984965424, 6.693110555, 7.485043894, 8.370679318, 9.36110372, 10.4687158, 11.70738129, 13.09260651, 14.64173252, 16.37415215, 18.31155283, 20.47818807, 22.90118105, 25.61086418, 28.64115884, 32.03, 32.1, 32.13, 32.23, 32.6, 32.61, 32.64, 32.66, 32.7, 32.71, 32.93, 32.97, 33.28, 33.49, 33.5, 44.16, 47.77], "short_factor": [1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0], "type": "longrope"}}"#,
    },
    CatalogConfig {
        id: "qwen3-4b",
        name: "Qwen3-4B",
        source: "huggingface.co/Qwen/Qwen3-4B/blob/main/config.json",
        config: r#"{"model_type": "qwen3", "vocab_size": 151936, "hidden_size": 2560, "intermediate_size": 9728, "num_hidden_layers": 36, "num_attention_heads": 32, "num_key_value_heads": 8, "head_dim": 128, "max_position_embeddings": 40960, "tie_word_embeddings": true, "attention_bias": false, "rope_theta": 1000000.0, "rms_norm_eps": 1e-06}"#,
    },
    CatalogConfig {
        id: "llama-2-7b",
        name: "Llama-2-7B",
        source: "huggingface.co/meta-llama/Llama-2-7b-hf/blob/main/config.json",
        config: r#"{"model_type": "llama", "vocab_size": 32000, "hidden_size": 4096, "intermediate_size": 11008, "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 32, "max_position_embeddings": 4096, "tie_word_embeddings": false, "rope_theta": 10000.0, "rms_norm_eps": 1e-05}"#,
    },
    CatalogConfig {
        id: "deepseek-llm-7b",
        name: "DeepSeek-LLM-7B",
        source: "huggingface.co/deepseek-ai/deepseek-llm-7b-base/blob/main/config.json",
        config: r#"{"model_type": "llama", "vocab_size": 102400, "hidden_size": 4096, "intermediate_size": 11008, "num_hidden_layers": 30, "num_attention_heads": 32, "num_key_value_heads": 32, "max_position_embeddings": 4096, "tie_word_embeddings": false, "rope_theta": 10000.0, "rms_norm_eps": 1e-06}"#,
    },
    CatalogConfig {
        id: "mistral-7b-v0.1",
        name: "Mistral-7B-v0.1",
        source: "huggingface.co/mistralai/Mistral-7B-v0.1/blob/main/config.json",
        config: r#"{"model_type": "mistral", "vocab_size": 32000, "hidden_size": 4096, "intermediate_size": 14336, "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8, "max_position_embeddings": 32768, "tie_word_embeddings": false, "rope_theta": 10000.0, "rms_norm_eps": 1e-05, "sliding_window": 4096}"#,
    },
    CatalogConfig {
        id: "mistral-7b-v0.3",
        name: "Mistral-7B-v0.3",
        source: "huggingface.co/mistralai/Mistral-7B-v0.3/blob/main/config.json",
        config: r#"{"model_type": "mistral", "vocab_size": 32768, "hidden_size": 4096, "intermediate_size": 14336, "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8, "max_position_embeddings": 32768, "tie_word_embeddings": false, "rope_theta": 1000000.0, "rms_norm_eps": 1e-05, "sliding_window": null}"#,
    },
    CatalogConfig {
        id: "qwen2-7b",
        name: "Qwen2-7B",
        source: "huggingface.co/Qwen/Qwen2-7B/blob/main/config.json",
        config: r#"{"model_type": "qwen2", "vocab_size": 152064, "hidden_size": 3584, "intermediate_size": 18944, "num_hidden_layers": 28, "num_attention_heads": 28, "num_key_value_heads": 4, "max_position_embeddings": 131072, "tie_word_embeddings": false, "rope_theta": 1000000.0, "rms_norm_eps": 1e-06}"#,
    },
    CatalogConfig {
        id: "qwen2.5-7b",
        name: "Qwen2.5-7B",
        source: "huggingface.co/Qwen/Qwen2.5-7B/blob/main/config.json",
        config: r#"{"model_type": "qwen2", "vocab_size": 152064, "hidden_size": 3584, "intermediate_size": 18944, "num_hidden_layers": 28, "num_attention_heads": 28, "num_key_value_heads": 4, "max_position_embeddings": 131072, "tie_word_embeddings": false, "rope_theta": 1000000.0, "rms_norm_eps": 1e-06}"#,
    },
    CatalogConfig {
        id: "qwen2.5-math-7b",
        name: "Qwen2.5-Math-7B",
        source: "huggingface.co/Qwen/Qwen2.5-Math-7B/blob/main/config.json",
        config: r#"{"model_type": "qwen2", "vocab_size": 152064, "hidden_size": 3584, "intermediate_size": 18944, "num_hidden_layers": 28, "num_attention_heads": 28, "num_key_value_heads": 4, "max_position_embeddings": 4096, "tie_word_embeddings": false, "rope_theta": 10000.0, "rms_norm_eps": 1e-06}"#,
    },
    CatalogConfig {
        id: "qwen2.5-coder-7b",
        name: "Qwen2.5-Coder-7B",
        source: "huggingface.co/Qwen/Qwen2.5-Coder-7B-Instruct/blob/main/config.json",
        config: r#"{"model_type": "qwen2", "vocab_size": 152064, "hidden_size": 3584, "intermediate_size": 18944, "num_hidden_layers": 28, "num_attention_heads": 28, "num_key_value_heads": 4, "max_position_embeddings": 32768, "tie_word_embeddings": false, "rope_theta": 1000000.0, "rms_norm_eps": 1e-06}"#,
    },
    CatalogConfig {
        id: "deepseek-r1-distill-qwen-7b",
        name: "DeepSeek-R1-Distill-Qwen-7B",
        source: "huggingface.co/deepseek-ai/DeepSeek-R1-Distill-Qwen-7B/blob/main/config.json",
        config: r#"{"model_type": "qwen2", "vocab_size": 152064, "hidden_size": 3584, "intermediate_size": 18944, "num_hidden_layers": 28, "num_attention_heads": 28, "num_key_value_heads": 4, "max_position_embeddings": 131072, "tie_word_embeddings": false, "rope_theta": 10000, "rms_norm_eps": 1e-06}"#,
    },
    CatalogConfig {
        id: "llama-3-8b",
        name: "Llama-3-8B",
        source: "huggingface.co/meta-llama/Meta-Llama-3-8B/blob/main/config.json",
        config: r#"{"model_type": "llama", "vocab_size": 128256, "hidden_size": 4096, "intermediate_size": 14336, "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8, "max_position_embeddings": 8192, "tie_word_embeddings": false, "attention_bias": false, "rope_theta": 500000.0, "rms_norm_eps": 1e-05}"#,
    },
    CatalogConfig {
        id: "llama-3.1-8b",
        name: "Llama-3.1-8B",
        source: "huggingface.co/meta-llama/Llama-3.1-8B/blob/main/config.json",
        config: LLAMA_3_1_8B,
    },
    CatalogConfig {
        id: "deepseek-r1-distill-llama-8b",
        name: "DeepSeek-R1-Distill-Llama-8B",
        source: "huggingface.co/deepseek-ai/DeepSeek-R1-Distill-Llama-8B/blob/main/config.json",
        config: LLAMA_3_1_8B,
    },
    CatalogConfig {
        id: "qwen3-8b",
        name: "Qwen3-8B",
        source: "huggingface.co/Qwen/Qwen3-8B/blob/main/config.json",
        config: r#"{"model_type": "qwen3", "vocab_size": 151936, "hidden_size": 4096, "intermediate_size": 12288, "num_hidden_layers": 36, "num_attention_heads": 32, "num_key_value_heads": 8, "head_dim": 128, "max_position_embeddings": 40960, "tie_word_embeddings": false, "attention_bias": false, "rope_theta": 1000000.0, "rms_norm_eps": 1e-06}"#,
    },
    CatalogConfig {
        id: "gemma-2-9b",
        name: "Gemma-2-9B",
        source: "huggingface.co/google/gemma-2-9b/blob/main/config.json",
        config: r#"{"model_type": "gemma2", "vocab_size": 256000, "hidden_size": 3584, "intermediate_size": 14336, "num_hidden_layers": 42, "num_attention_heads": 16, "num_key_value_heads": 8, "head_dim": 256, "max_position_embeddings": 8192, "rms_norm_eps": 1e-06, "rope_theta": 10000.0, "sliding_window": 4096, "query_pre_attn_scalar": 256, "final_logit_softcapping": 30.0}"#,
    },
    CatalogConfig {
        id: "glm-4-9b",
        name: "GLM-4-9B",
        source: "huggingface.co/THUDM/glm-4-9b-chat-hf/blob/main/config.json",
        config: r#"{"model_type": "glm", "vocab_size": 151552, "hidden_size": 4096, "intermediate_size": 13696, "num_hidden_layers": 40, "num_attention_heads": 32, "num_key_value_heads": 2, "head_dim": 128, "max_position_embeddings": 131072, "tie_word_embeddings": false, "attention_bias": true}"#,
    },
    CatalogConfig {
        id: "mistral-nemo",
        name: "Mistral-Nemo-2407",
        source: "huggingface.co/mistralai/Mistral-Nemo-Instruct-2407/blob/04d8a90549d23fc6bd7f642064003592df51e9b3/config.json",
        config: r#"{"model_type": "mistral", "vocab_size": 131072, "hidden_size": 5120, "intermediate_size": 14336, "num_hidden_layers": 40, "num_attention_heads": 32, "num_key_value_heads": 8, "head_dim": 128, "max_position_embeddings": 131072, "tie_word_embeddings": false, "rope_theta": 1000000.0, "rms_norm_eps": 1e-05, "sliding_window": null}"#,
    },
    CatalogConfig {
        id: "llama-2-13b",
        name: "Llama-2-13B",
        source: "huggingface.co/meta-llama/Llama-2-13b-hf/blob/main/config.json",
        config: r#"{"model_type": "llama", "vocab_size": 32000, "hidden_size": 5120, "intermediate_size": 13824, "num_hidden_layers": 40, "num_attention_heads": 40, "num_key_value_heads": 40, "max_position_embeddings": 4096, "tie_word_embeddings": false, "rope_theta": 10000.0, "rms_norm_eps": 1e-05}"#,
    },
    CatalogConfig {
        id: "phi-4",
        name: "Phi-4",
        source: "huggingface.co/microsoft/phi-4/blob/main/config.json",
        config: r#"{"model_type": "phi3", "vocab_size": 100352, "hidden_size": 5120, "intermediate_size": 17920, "num_hidden_layers": 40, "num_attention_heads": 40, "num_key_value_heads": 10, "max_position_embeddings": 16384, "original_max_position_embeddings": 16384, "rope_scaling": null, "sliding_window": null, "tie_word_embeddings": false, "attention_bias": false, "rope_theta": 250000, "rms_norm_eps": 1e-05}"#,
    },
    CatalogConfig {
        id: "qwen2.5-14b",
        name: "Qwen2.5-14B",
        source: "huggingface.co/Qwen/Qwen2.5-14B/blob/main/config.json",
        config: r#"{"model_type": "qwen2", "vocab_size": 152064, "hidden_size": 5120, "intermediate_size": 13824, "num_hidden_layers": 48, "num_attention_heads": 40, "num_key_value_heads": 8, "max_position_embeddings": 131072, "tie_word_embeddings": false, "rope_theta": 1000000.0, "rms_norm_eps": 1e-06}"#,
    },
    CatalogConfig {
        id: "qwen2.5-coder-14b",
        name: "Qwen2.5-Coder-14B",
        source: "huggingface.co/Qwen/Qwen2.5-Coder-14B-Instruct/blob/main/config.json",
        config: r#"{"model_type": "qwen2", "vocab_size": 152064, "hidden_size": 5120, "intermediate_size": 13824, "num_hidden_layers": 48, "num_attention_heads": 40, "num_key_value_heads": 8, "max_position_embeddings": 32768, "tie_word_embeddings": false, "rope_theta": 1000000.0, "rms_norm_eps": 1e-06}"#,
    },
    CatalogConfig {
        id: "deepseek-r1-distill-qwen-14b",
        name: "DeepSeek-R1-Distill-Qwen-14B",
        source: "huggingface.co/deepseek-ai/DeepSeek-R1-Distill-Qwen-14B/blob/main/config.json",
        config: r#"{"model_type": "qwen2", "vocab_size": 152064, "hidden_size": 5120, "intermediate_size": 13824, "num_hidden_layers": 48, "num_attention_heads": 40, "num_key_value_heads": 8, "max_position_embeddings": 131072, "tie_word_embeddings": false, "rope_theta": 1000000.0, "rms_norm_eps": 1e-05}"#,
    },
    CatalogConfig {
        id: "qwen3-14b",
        name: "Qwen3-14B",
        source: "huggingface.co/Qwen/Qwen3-14B/blob/main/config.json",
        config: r#"{"model_type": "qwen3", "vocab_size": 151936, "hidden_size": 5120, "intermediate_size": 17408, "num_hidden_layers": 40, "num_attention_heads": 40, "num_key_value_heads": 8, "head_dim": 128, "max_position_embeddings": 40960, "tie_word_embeddings": false, "attention_bias": false, "rope_theta": 1000000.0, "rms_norm_eps": 1e-06}"#,
    },
    CatalogConfig {
        id: "mistral-small-24b",
        name: "Mistral-Small-24B-2501",
        source: "huggingface.co/mistralai/Mistral-Small-24B-Instruct-2501/blob/main/config.json",
        config: r#"{"model_type": "mistral", "vocab_size": 131072, "hidden_size": 5120, "intermediate_size": 32768, "num_hidden_layers": 40, "num_attention_heads": 32, "num_key_value_heads": 8, "head_dim": 128, "max_position_embeddings": 32768, "tie_word_embeddings": false, "rope_theta": 100000000.0, "rms_norm_eps": 1e-05, "sliding_window": null}"#,
    },
    CatalogConfig {
        id: "gemma-2-27b",
        name: "Gemma-2-27B",
        source: "huggingface.co/google/gemma-2-27b/blob/main/config.json",
        config: r#"{"model_type": "gemma2", "vocab_size": 256000, "hidden_size": 4608, "intermediate_size": 36864, "num_hidden_layers": 46, "num_attention_heads": 32, "num_key_value_heads": 16, "head_dim": 128, "max_position_embeddings": 8192, "rms_norm_eps": 1e-06, "rope_theta": 10000.0, "sliding_window": 4096, "query_pre_attn_scalar": 144, "final_logit_softcapping": 30.0}"#,
    },
    CatalogConfig {
        id: "qwen2.5-32b",
        name: "Qwen2.5-32B",
        source: "huggingface.co/Qwen/Qwen2.5-32B/blob/main/config.json",
        config: r#"{"model_type": "qwen2", "vocab_size": 152064, "hidden_size": 5120, "intermediate_size": 27648, "num_hidden_layers": 64, "num_attention_heads": 40, "num_key_value_heads": 8, "max_position_embeddings": 131072, "tie_word_embeddings": false, "rope_theta": 1000000.0, "rms_norm_eps": 1e-06}"#,
    },
    CatalogConfig {
        id: "qwen2.5-coder-32b",
        name: "Qwen2.5-Coder-32B",
        source: "huggingface.co/Qwen/Qwen2.5-Coder-32B-Instruct/blob/main/config.json",
        config: r#"{"model_type": "qwen2", "vocab_size": 152064, "hidden_size": 5120, "intermediate_size": 27648, "num_hidden_layers": 64, "num_attention_heads": 40, "num_key_value_heads": 8, "max_position_embeddings": 32768, "tie_word_embeddings": false, "rope_theta": 1000000.0, "rms_norm_eps": 1e-06}"#,
    },
    CatalogConfig {
        id: "deepseek-r1-distill-qwen-32b",
        name: "DeepSeek-R1-Distill-Qwen-32B",
        source: "huggingface.co/deepseek-ai/DeepSeek-R1-Distill-Qwen-32B/blob/main/config.json",
        config: r#"{"model_type": "qwen2", "vocab_size": 152064, "hidden_size": 5120, "intermediate_size": 27648, "num_hidden_layers": 64, "num_attention_heads": 40, "num_key_value_heads": 8, "max_position_embeddings": 131072, "tie_word_embeddings": false, "rope_theta": 1000000.0, "rms_norm_eps": 1e-05}"#,
    },
    CatalogConfig {
        id: "qwq-32b",
        name: "QwQ-32B",
        source: "huggingface.co/Qwen/QwQ-32B/blob/main/config.json",
        config: r#"{"model_type": "qwen2", "vocab_size": 152064, "hidden_size": 5120, "intermediate_size": 27648, "num_hidden_layers": 64, "num_attention_heads": 40, "num_key_value_heads": 8, "max_position_embeddings": 131072, "tie_word_embeddings": false, "rope_theta": 1000000.0, "rms_norm_eps": 1e-05}"#,
    },
    CatalogConfig {
        id: "qwen3-32b",
        name: "Qwen3-32B",
        source: "huggingface.co/Qwen/Qwen3-32B/blob/main/config.json",
        config: r#"{"model_type": "qwen3", "vocab_size": 151936, "hidden_size": 5120, "intermediate_size": 25600, "num_hidden_layers": 64, "num_attention_heads": 64, "num_key_value_heads": 8, "head_dim": 128, "max_position_embeddings": 40960, "tie_word_embeddings": false, "attention_bias": false, "rope_theta": 1000000.0, "rms_norm_eps": 1e-06}"#,
    },
    CatalogConfig {
        id: "llama-2-70b",
        name: "Llama-2-70B",
        source: "huggingface.co/meta-llama/Llama-2-70b-hf/blob/main/config.json",
        config: r#"{"model_type": "llama", "vocab_size": 32000, "hidden_size": 8192, "intermediate_size": 28672, "num_hidden_layers": 80, "num_attention_heads": 64, "num_key_value_heads": 8, "max_position_embeddings": 4096, "tie_word_embeddings": false, "rope_theta": 10000.0, "rms_norm_eps": 1e-05}"#,
    },
    CatalogConfig {
        id: "llama-3-70b",
        name: "Llama-3-70B",
        source: "huggingface.co/meta-llama/Meta-Llama-3-70B/blob/main/config.json",
        config: r#"{"model_type": "llama", "vocab_size": 128256, "hidden_size": 8192, "intermediate_size": 28672, "num_hidden_layers": 80, "num_attention_heads": 64, "num_key_value_heads": 8, "max_position_embeddings": 8192, "tie_word_embeddings": false, "attention_bias": false, "rope_theta": 500000.0, "rms_norm_eps": 1e-05}"#,
    },
    CatalogConfig {
        id: "llama-3.1-70b",
        name: "Llama-3.1-70B",
        source: "huggingface.co/meta-llama/Llama-3.1-70B/blob/main/config.json",
        config: LLAMA_3_1_70B,
    },
    CatalogConfig {
        id: "llama-3.3-70b",
        name: "Llama-3.3-70B",
        source: "huggingface.co/meta-llama/Llama-3.3-70B-Instruct/blob/main/config.json",
        config: LLAMA_3_1_70B,
    },
    CatalogConfig {
        id: "deepseek-r1-distill-llama-70b",
        name: "DeepSeek-R1-Distill-Llama-70B",
        source: "huggingface.co/deepseek-ai/DeepSeek-R1-Distill-Llama-70B/blob/main/config.json",
        config: LLAMA_3_1_70B,
    },
    CatalogConfig {
        id: "qwen2-72b",
        name: "Qwen2-72B",
        source: "huggingface.co/Qwen/Qwen2-72B/blob/main/config.json",
        config: r#"{"model_type": "qwen2", "vocab_size": 152064, "hidden_size": 8192, "intermediate_size": 29568, "num_hidden_layers": 80, "num_attention_heads": 64, "num_key_value_heads": 8, "max_position_embeddings": 131072, "tie_word_embeddings": false, "rope_theta": 1000000.0, "rms_norm_eps": 1e-05}"#,
    },
    CatalogConfig {
        id: "qwen2.5-72b",
        name: "Qwen2.5-72B",
        source: "huggingface.co/Qwen/Qwen2.5-72B/blob/main/config.json",
        config: r#"{"model_type": "qwen2", "vocab_size": 152064, "hidden_size": 8192, "intermediate_size": 29568, "num_hidden_layers": 80, "num_attention_heads": 64, "num_key_value_heads": 8, "max_position_embeddings": 131072, "tie_word_embeddings": false, "rope_theta": 1000000.0, "rms_norm_eps": 1e-06}"#,
    },
    CatalogConfig {
        id: "llama-3.1-405b",
        name: "Llama-3.1-405B",
        source: "huggingface.co/meta-llama/Llama-3.1-405B/blob/main/config.json",
        config: r#"{"model_type": "llama", "vocab_size": 128256, "hidden_size": 16384, "intermediate_size": 53248, "num_hidden_layers": 126, "num_attention_heads": 128, "num_key_value_heads": 8, "head_dim": 128, "max_position_embeddings": 131072, "tie_word_embeddings": false, "attention_bias": false, "mlp_bias": false, "rope_theta": 500000.0, "rms_norm_eps": 1e-05, "rope_scaling": {"factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0, "original_max_position_embeddings": 8192, "rope_type": "llama3"}}"#,
    },
    CatalogConfig {
        id: "mixtral-8x7b",
        name: "Mixtral-8x7B",
        source: "huggingface.co/mistralai/Mixtral-8x7B-v0.1/blob/main/config.json",
        config: r#"{"model_type": "mixtral", "vocab_size": 32000, "hidden_size": 4096, "intermediate_size": 14336, "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8, "num_local_experts": 8, "num_experts_per_tok": 2, "max_position_embeddings": 32768, "tie_word_embeddings": false, "rope_theta": 1000000.0, "rms_norm_eps": 1e-05}"#,
    },
    CatalogConfig {
        id: "mixtral-8x22b",
        name: "Mixtral-8x22B",
        source: "huggingface.co/mistralai/Mixtral-8x22B-v0.1/blob/main/config.json",
        config: r#"{"model_type": "mixtral", "vocab_size": 32000, "hidden_size": 6144, "intermediate_size": 16384, "num_hidden_layers": 56, "num_attention_heads": 48, "num_key_value_heads": 8, "num_local_experts": 8, "num_experts_per_tok": 2, "max_position_embeddings": 65536, "tie_word_embeddings": false, "rope_theta": 1000000.0, "rms_norm_eps": 1e-05}"#,
    },
    CatalogConfig {
        id: "qwen1.5-moe-a2.7b",
        name: "Qwen1.5-MoE-A2.7B",
        source: "huggingface.co/Qwen/Qwen1.5-MoE-A2.7B/blob/main/config.json",
        config: r#"{"model_type": "qwen2_moe", "vocab_size": 151936, "hidden_size": 2048, "intermediate_size": 5632, "moe_intermediate_size": 1408, "shared_expert_intermediate_size": 5632, "num_hidden_layers": 24, "num_attention_heads": 16, "num_key_value_heads": 16, "num_experts": 60, "num_experts_per_tok": 4, "decoder_sparse_step": 1, "max_position_embeddings": 8192, "tie_word_embeddings": false, "rope_theta": 1000000.0, "rms_norm_eps": 1e-06}"#,
    },
    CatalogConfig {
        id: "qwen2-57b-a14b",
        name: "Qwen2-57B-A14B",
        source: "huggingface.co/Qwen/Qwen2-57B-A14B/blob/main/config.json",
        config: r#"{"model_type": "qwen2_moe", "vocab_size": 151936, "hidden_size": 3584, "intermediate_size": 18944, "moe_intermediate_size": 2560, "shared_expert_intermediate_size": 20480, "num_hidden_layers": 28, "num_attention_heads": 28, "num_key_value_heads": 4, "num_experts": 64, "num_experts_per_tok": 8, "decoder_sparse_step": 1, "max_position_embeddings": 131072, "tie_word_embeddings": false, "rope_theta": 1000000.0, "rms_norm_eps": 1e-06}"#,
    },
    CatalogConfig {
        id: "qwen3-30b-a3b",
        name: "Qwen3-30B-A3B",
        source: "huggingface.co/Qwen/Qwen3-30B-A3B/blob/main/config.json",
        config: r#"{"model_type": "qwen3_moe", "vocab_size": 151936, "hidden_size": 2048, "intermediate_size": 6144, "moe_intermediate_size": 768, "num_hidden_layers": 48, "num_attention_heads": 32, "num_key_value_heads": 4, "head_dim": 128, "num_experts": 128, "num_experts_per_tok": 8, "norm_topk_prob": true, "decoder_sparse_step": 1, "mlp_only_layers": [], "max_position_embeddings": 40960, "tie_word_embeddings": false, "attention_bias": false, "rope_theta": 1000000.0, "rms_norm_eps": 1e-06}"#,
    },
    CatalogConfig {
        id: "qwen3-coder-30b-a3b",
        name: "Qwen3-Coder-30B-A3B",
        source: "huggingface.co/Qwen/Qwen3-Coder-30B-A3B-Instruct/blob/main/config.json",
        config: r#"{"model_type": "qwen3_moe", "vocab_size": 151936, "hidden_size": 2048, "intermediate_size": 5472, "moe_intermediate_size": 768, "num_hidden_layers": 48, "num_attention_heads": 32, "num_key_value_heads": 4, "head_dim": 128, "num_experts": 128, "num_experts_per_tok": 8, "norm_topk_prob": true, "decoder_sparse_step": 1, "mlp_only_layers": [], "max_position_embeddings": 262144, "tie_word_embeddings": false, "attention_bias": false, "rope_theta": 10000000, "rms_norm_eps": 1e-06}"#,
    },
    CatalogConfig {
        id: "qwen3-235b-a22b",
        name: "Qwen3-235B-A22B",
        source: "huggingface.co/Qwen/Qwen3-235B-A22B/blob/main/config.json",
        config: r#"{"model_type": "qwen3_moe", "vocab_size": 151936, "hidden_size": 4096, "intermediate_size": 12288, "moe_intermediate_size": 1536, "num_hidden_layers": 94, "num_attention_heads": 64, "num_key_value_heads": 4, "head_dim": 128, "num_experts": 128, "num_experts_per_tok": 8, "norm_topk_prob": true, "decoder_sparse_step": 1, "mlp_only_layers": [], "max_position_embeddings": 40960, "tie_word_embeddings": false, "attention_bias": false, "rope_theta": 1000000.0, "rms_norm_eps": 1e-06}"#,
    },
    CatalogConfig {
        id: "qwen3-coder-480b-a35b",
        name: "Qwen3-Coder-480B-A35B",
        source: "huggingface.co/Qwen/Qwen3-Coder-480B-A35B-Instruct/blob/9d90cf8fca1bf7b7acca42d3fc9ae694a2194069/config.json",
        config: r#"{"model_type": "qwen3_moe", "vocab_size": 151936, "hidden_size": 6144, "intermediate_size": 8192, "moe_intermediate_size": 2560, "num_hidden_layers": 62, "num_attention_heads": 96, "num_key_value_heads": 8, "head_dim": 128, "num_experts": 160, "num_experts_per_tok": 8, "norm_topk_prob": true, "decoder_sparse_step": 1, "mlp_only_layers": [], "max_position_embeddings": 262144, "tie_word_embeddings": false, "attention_bias": false, "rope_theta": 10000000, "rms_norm_eps": 1e-06}"#,
    },
    CatalogConfig {
        id: "qwen3-next-80b-a3b",
        name: "Qwen3-Next-80B-A3B",
        source: "huggingface.co/Qwen/Qwen3-Next-80B-A3B-Instruct/blob/main/config.json",
        config: r#"{"model_type": "qwen3_next", "vocab_size": 151936, "hidden_size": 2048, "intermediate_size": 5120, "moe_intermediate_size": 512, "shared_expert_intermediate_size": 512, "num_hidden_layers": 48, "num_attention_heads": 16, "num_key_value_heads": 2, "head_dim": 256, "linear_conv_kernel_dim": 4, "linear_key_head_dim": 128, "linear_value_head_dim": 128, "linear_num_key_heads": 16, "linear_num_value_heads": 32, "full_attention_interval": 4, "num_experts": 512, "num_experts_per_tok": 10, "norm_topk_prob": true, "decoder_sparse_step": 1, "mlp_only_layers": [], "max_position_embeddings": 262144, "tie_word_embeddings": false, "attention_bias": false, "partial_rotary_factor": 0.25, "rope_theta": 10000000, "rms_norm_eps": 1e-06}"#,
    },
    CatalogConfig {
        id: "moonlight-16b-a3b",
        name: "Moonlight-16B-A3B",
        source: "huggingface.co/moonshotai/Moonlight-16B-A3B-Instruct/blob/4e735b07a89f73647dfab71ab91b840f362ede5b/config.json",
        config: r#"{"model_type": "deepseek_v3", "vocab_size": 163840, "hidden_size": 2048, "intermediate_size": 11264, "moe_intermediate_size": 1408, "num_hidden_layers": 27, "num_attention_heads": 16, "num_key_value_heads": 16, "n_routed_experts": 64, "n_shared_experts": 2, "num_experts_per_tok": 6, "first_k_dense_replace": 1, "moe_layer_freq": 1, "q_lora_rank": null, "kv_lora_rank": 512, "qk_rope_head_dim": 64, "qk_nope_head_dim": 128, "v_head_dim": 128, "num_nextn_predict_layers": 0, "max_position_embeddings": 8192, "tie_word_embeddings": false, "attention_bias": false, "rope_theta": 50000.0, "rms_norm_eps": 1e-05, "topk_method": "noaux_tc", "n_group": 1, "topk_group": 1, "routed_scaling_factor": 2.446, "norm_topk_prob": true, "scoring_func": "sigmoid"}"#,
    },
    CatalogConfig {
        id: "deepseek-v2-lite",
        name: "DeepSeek-V2-Lite",
        source: "huggingface.co/deepseek-ai/DeepSeek-V2-Lite/blob/main/config.json",
        config: r#"{"model_type": "deepseek_v2", "vocab_size": 102400, "hidden_size": 2048, "intermediate_size": 10944, "moe_intermediate_size": 1408, "num_hidden_layers": 27, "num_attention_heads": 16, "num_key_value_heads": 16, "n_routed_experts": 64, "n_shared_experts": 2, "num_experts_per_tok": 6, "first_k_dense_replace": 1, "moe_layer_freq": 1, "q_lora_rank": null, "kv_lora_rank": 512, "qk_rope_head_dim": 64, "qk_nope_head_dim": 128, "v_head_dim": 128, "max_position_embeddings": 163840, "tie_word_embeddings": false, "rope_theta": 10000, "rms_norm_eps": 1e-06, "topk_method": "greedy", "n_group": 1, "topk_group": 1, "routed_scaling_factor": 1.0, "norm_topk_prob": false, "scoring_func": "softmax", "rope_scaling": {"beta_fast": 32, "beta_slow": 1, "factor": 40, "mscale": 0.707, "mscale_all_dim": 0.707, "original_max_position_embeddings": 4096, "type": "yarn"}}"#,
    },
    CatalogConfig {
        id: "deepseek-v2",
        name: "DeepSeek-V2",
        source: "huggingface.co/deepseek-ai/DeepSeek-V2/blob/main/config.json",
        config: r#"{"model_type": "deepseek_v2", "vocab_size": 102400, "hidden_size": 5120, "intermediate_size": 12288, "moe_intermediate_size": 1536, "num_hidden_layers": 60, "num_attention_heads": 128, "num_key_value_heads": 128, "n_routed_experts": 160, "n_shared_experts": 2, "num_experts_per_tok": 6, "first_k_dense_replace": 1, "moe_layer_freq": 1, "q_lora_rank": 1536, "kv_lora_rank": 512, "qk_rope_head_dim": 64, "qk_nope_head_dim": 128, "v_head_dim": 128, "max_position_embeddings": 163840, "tie_word_embeddings": false, "rope_theta": 10000, "rms_norm_eps": 1e-06, "topk_method": "group_limited_greedy", "n_group": 8, "topk_group": 3, "routed_scaling_factor": 16.0, "norm_topk_prob": false, "scoring_func": "softmax", "rope_scaling": {"beta_fast": 32, "beta_slow": 1, "factor": 40, "mscale": 0.707, "mscale_all_dim": 0.707, "original_max_position_embeddings": 4096, "type": "yarn"}}"#,
    },
    CatalogConfig {
        id: "deepseek-v3",
        name: "DeepSeek-V3",
        source: "huggingface.co/deepseek-ai/DeepSeek-V3/blob/main/config.json",
        config: DEEPSEEK_V3,
    },
    CatalogConfig {
        id: "deepseek-r1",
        name: "DeepSeek-R1",
        source: "huggingface.co/deepseek-ai/DeepSeek-R1/blob/main/config.json",
        config: DEEPSEEK_V3,
    },
    CatalogConfig {
        id: "kimi-k2",
        name: "Kimi-K2",
        source: "huggingface.co/moonshotai/Kimi-K2-Instruct/blob/main/config.json",
        config: r#"{"model_type": "kimi_k2", "vocab_size": 163840, "hidden_size": 7168, "intermediate_size": 18432, "moe_intermediate_size": 2048, "num_hidden_layers": 61, "num_attention_heads": 64, "num_key_value_heads": 64, "n_routed_experts": 384, "n_shared_experts": 1, "num_experts_per_tok": 8, "first_k_dense_replace": 1, "moe_layer_freq": 1, "q_lora_rank": 1536, "kv_lora_rank": 512, "qk_rope_head_dim": 64, "qk_nope_head_dim": 128, "v_head_dim": 128, "num_nextn_predict_layers": 0, "max_position_embeddings": 131072, "tie_word_embeddings": false, "rope_theta": 50000.0, "rms_norm_eps": 1e-06, "topk_method": "noaux_tc", "n_group": 1, "topk_group": 1, "routed_scaling_factor": 2.827, "norm_topk_prob": true, "scoring_func": "sigmoid", "rope_scaling": {"beta_fast": 1.0, "beta_slow": 1.0, "factor": 32.0, "mscale": 1.0, "mscale_all_dim": 1.0, "original_max_position_embeddings": 4096, "type": "yarn"}}"#,
    },
    CatalogConfig {
        id: "glm-4.5-air",
        name: "GLM-4.5-Air",
        source: "huggingface.co/zai-org/GLM-4.5-Air/blob/main/config.json",
        config: r#"{"model_type": "glm4_moe", "vocab_size": 151552, "hidden_size": 4096, "intermediate_size": 10944, "moe_intermediate_size": 1408, "num_hidden_layers": 46, "num_attention_heads": 96, "num_key_value_heads": 8, "head_dim": 128, "attention_bias": true, "use_qk_norm": false, "partial_rotary_factor": 0.5, "n_routed_experts": 128, "n_shared_experts": 1, "num_experts_per_tok": 8, "first_k_dense_replace": 1, "n_group": 1, "topk_group": 1, "routed_scaling_factor": 1.0, "norm_topk_prob": true, "num_nextn_predict_layers": 1, "max_position_embeddings": 131072, "tie_word_embeddings": false, "rope_theta": 1000000, "rms_norm_eps": 1e-05}"#,
    },
    CatalogConfig {
        id: "glm-4.5",
        name: "GLM-4.5",
        source: "huggingface.co/zai-org/GLM-4.5/blob/main/config.json",
        config: r#"{"model_type": "glm4_moe", "vocab_size": 151552, "hidden_size": 5120, "intermediate_size": 12288, "moe_intermediate_size": 1536, "num_hidden_layers": 92, "num_attention_heads": 96, "num_key_value_heads": 8, "head_dim": 128, "attention_bias": true, "use_qk_norm": true, "partial_rotary_factor": 0.5, "n_routed_experts": 160, "n_shared_experts": 1, "num_experts_per_tok": 8, "first_k_dense_replace": 3, "n_group": 1, "topk_group": 1, "routed_scaling_factor": 2.5, "norm_topk_prob": true, "num_nextn_predict_layers": 1, "max_position_embeddings": 131072, "tie_word_embeddings": false, "rope_theta": 1000000, "rms_norm_eps": 1e-05}"#,
    },
    CatalogConfig {
        id: "glm-4.6",
        name: "GLM-4.6",
        source: "huggingface.co/zai-org/GLM-4.6/blob/main/config.json",
        config: r#"{"model_type": "glm4_moe", "vocab_size": 151552, "hidden_size": 5120, "intermediate_size": 12288, "moe_intermediate_size": 1536, "num_hidden_layers": 92, "num_attention_heads": 96, "num_key_value_heads": 8, "head_dim": 128, "attention_bias": true, "use_qk_norm": true, "partial_rotary_factor": 0.5, "n_routed_experts": 160, "n_shared_experts": 1, "num_experts_per_tok": 8, "first_k_dense_replace": 3, "n_group": 1, "topk_group": 1, "routed_scaling_factor": 2.5, "norm_topk_prob": true, "num_nextn_predict_layers": 1, "max_position_embeddings": 202752, "tie_word_embeddings": false, "rope_theta": 1000000, "rms_norm_eps": 1e-05}"#,
    },
    CatalogConfig {
        id: "gpt-oss-20b",
        name: "gpt-oss-20b",
        source: "huggingface.co/openai/gpt-oss-20b/blob/main/config.json",
        config: r#"{"model_type": "gpt_oss", "vocab_size": 201088, "hidden_size": 2880, "intermediate_size": 2880, "num_hidden_layers": 24, "num_attention_heads": 64, "num_key_value_heads": 8, "head_dim": 64, "num_local_experts": 32, "num_experts_per_tok": 4, "experts_per_token": 4, "attention_bias": true, "sliding_window": 128, "layer_types": ["sliding_attention", "full_attention", "sliding_attention", "full_attention", "sliding_attention", "full_attention", "sliding_attention", "full_attention", "sliding_attention", "full_attention", "sliding_attention", "full_attention", "sliding_attention", "full_attention", "sliding_attention", "full_attention", "sliding_attention", "full_attention", "sliding_attention", "full_attention", "sliding_attention", "full_attention", "sliding_attention", "full_attention"], "max_position_embeddings": 131072, "initial_context_length": 4096, "tie_word_embeddings": false, "rope_theta": 150000, "rms_norm_eps": 1e-05, "swiglu_limit": 7.0, "router_aux_loss_coef": 0.9, "rope_scaling": {"beta_fast": 32.0, "beta_slow": 1.0, "factor": 32.0, "original_max_position_embeddings": 4096, "rope_type": "yarn", "truncate": false}}"#,
    },
    CatalogConfig {
        id: "gpt-oss-120b",
        name: "gpt-oss-120b",
        source: "huggingface.co/openai/gpt-oss-120b/blob/main/config.json",
        config: r#"{"model_type": "gpt_oss", "vocab_size": 201088, "hidden_size": 2880, "intermediate_size": 2880, "num_hidden_layers": 36, "num_attention_heads": 64, "num_key_value_heads": 8, "head_dim": 64, "num_local_experts": 128, "num_experts_per_tok": 4, "experts_per_token": 4, "attention_bias": true, "sliding_window": 128, "layer_types": ["sliding_attention", "full_attention", "sliding_attention", "full_attention", "sliding_attention", "full_attention", "sliding_attention", "full_attention", "sliding_attention", "full_attention", "sliding_attention", "full_attention", "sliding_attention", "full_attention", "sliding_attention", "full_attention", "sliding_attention", "full_attention", "sliding_attention", "full_attention", "sliding_attention", "full_attention", "sliding_attention", "full_attention", "sliding_attention", "full_attention", "sliding_attention", "full_attention", "sliding_attention", "full_attention", "sliding_attention", "full_attention", "sliding_attention", "full_attention", "sliding_attention", "full_attention"], "max_position_embeddings": 131072, "initial_context_length": 4096, "tie_word_embeddings": false, "rope_theta": 150000, "rms_norm_eps": 1e-05, "swiglu_limit": 7.0, "router_aux_loss_coef": 0.9, "rope_scaling": {"beta_fast": 32.0, "beta_slow": 1.0, "factor": 32.0, "original_max_position_embeddings": 4096, "rope_type": "yarn", "truncate": false}}"#,
    },
];
