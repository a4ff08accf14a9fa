//! Catalogs of real models (and, later, hardware), each figure with its source.
//!
//! Every model's shape is copied from its official HF `config.json`; the address of that file is the
//! entry's `source` and the page shows it next to the model.

use crate::model::Architecture;

/// One catalog model.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ModelEntry {
    /// Stable lowercase kebab-case id used in plan files and permalinks, e.g. `llama-3-8b`.
    pub id: &'static str,
    /// Display name as the publisher writes it.
    pub name: &'static str,
    /// The architecture from the config.
    pub arch: Architecture,
    /// Where the config values come from.
    pub source: &'static str,
}

/// The model catalog, smallest first.
///
/// `head_dim` is `hidden_size / num_attention_heads` for all of these (none sets `head_dim` itself).
pub fn models() -> Vec<ModelEntry> {
    vec![
        ModelEntry {
            id: "qwen2.5-0.5b",
            name: "Qwen2.5-0.5B",
            source: "huggingface.co/Qwen/Qwen2.5-0.5B/blob/main/config.json",
            arch: Architecture {
                vocab_size: 151_936,
                hidden_size: 896,
                n_layers: 24,
                n_heads: 14,
                n_kv_heads: 2,
                head_dim: 64,
                intermediate_size: 4_864,
                qkv_bias: true,
                tied_embeddings: true,
            },
        },
        ModelEntry {
            id: "qwen2.5-3b",
            name: "Qwen2.5-3B",
            source: "huggingface.co/Qwen/Qwen2.5-3B/blob/main/config.json",
            arch: Architecture {
                vocab_size: 151_936,
                hidden_size: 2_048,
                n_layers: 36,
                n_heads: 16,
                n_kv_heads: 2,
                head_dim: 128,
                intermediate_size: 11_008,
                qkv_bias: true,
                tied_embeddings: true,
            },
        },
        ModelEntry {
            id: "llama-2-7b",
            name: "Llama-2-7B",
            source: "huggingface.co/meta-llama/Llama-2-7b-hf/blob/main/config.json",
            arch: Architecture {
                vocab_size: 32_000,
                hidden_size: 4_096,
                n_layers: 32,
                n_heads: 32,
                n_kv_heads: 32,
                head_dim: 128,
                intermediate_size: 11_008,
                qkv_bias: false,
                tied_embeddings: false,
            },
        },
        ModelEntry {
            id: "qwen2.5-7b",
            name: "Qwen2.5-7B",
            source: "huggingface.co/Qwen/Qwen2.5-7B/blob/main/config.json",
            arch: Architecture {
                vocab_size: 152_064,
                hidden_size: 3_584,
                n_layers: 28,
                n_heads: 28,
                n_kv_heads: 4,
                head_dim: 128,
                intermediate_size: 18_944,
                qkv_bias: true,
                tied_embeddings: false,
            },
        },
        ModelEntry {
            id: "llama-3-8b",
            name: "Llama-3-8B",
            source: "huggingface.co/meta-llama/Meta-Llama-3-8B/blob/main/config.json",
            arch: Architecture {
                vocab_size: 128_256,
                hidden_size: 4_096,
                n_layers: 32,
                n_heads: 32,
                n_kv_heads: 8,
                head_dim: 128,
                intermediate_size: 14_336,
                qkv_bias: false,
                tied_embeddings: false,
            },
        },
        ModelEntry {
            id: "llama-2-13b",
            name: "Llama-2-13B",
            source: "huggingface.co/meta-llama/Llama-2-13b-hf/blob/main/config.json",
            arch: Architecture {
                vocab_size: 32_000,
                hidden_size: 5_120,
                n_layers: 40,
                n_heads: 40,
                n_kv_heads: 40,
                head_dim: 128,
                intermediate_size: 13_824,
                qkv_bias: false,
                tied_embeddings: false,
            },
        },
    ]
}

/// Looks a model up by id.
pub fn model(id: &str) -> Option<ModelEntry> {
    models().into_iter().find(|m| m.id == id)
}
