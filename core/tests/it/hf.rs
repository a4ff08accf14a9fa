//! Reading HF config.json: every family, clear refusals, no panic on any input.

use proptest::prelude::*;
use trainplan_core::hf::{self, ConfigError, ImportWarning};
use trainplan_core::model::{self, Family};

#[track_caller]
fn refused(text: &str) -> ConfigError {
    match hf::import(text) {
        Ok(imported) => panic!("{text} was accepted as {imported:?}"),
        Err(err) => err,
    }
}

const LLAMA: &str = r#"{"model_type": "llama", "vocab_size": 32000, "hidden_size": 4096, "intermediate_size": 11008,
  "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 32}"#;

#[test]
fn a_real_config_with_every_usual_key_reads() {
    // The keys of meta-llama/Llama-2-7b-hf's config.json, including those the planner ignores.
    let text = r#"{"architectures": ["LlamaForCausalLM"], "bos_token_id": 1, "eos_token_id": 2,
      "hidden_act": "silu", "hidden_size": 4096, "initializer_range": 0.02, "intermediate_size": 11008,
      "max_position_embeddings": 4096, "model_type": "llama", "num_attention_heads": 32,
      "num_hidden_layers": 32, "num_key_value_heads": 32, "pretraining_tp": 1, "rms_norm_eps": 1e-05,
      "rope_scaling": null, "tie_word_embeddings": false, "torch_dtype": "float16",
      "transformers_version": "4.31.0.dev0", "use_cache": true, "vocab_size": 32000}"#;
    let imported = hf::import(text).unwrap();
    assert!(imported.warnings.is_empty());
    assert_eq!(model::count_params(&imported.arch).total(), 6_738_415_616);
}

#[test]
fn an_unknown_model_type_reads_as_llama_with_a_warning() {
    let text = LLAMA.replace("\"llama\"", "\"my_new_decoder\"");
    let imported = hf::import(&text).unwrap();
    assert_eq!(imported.arch.family, Family::Llama);
    assert_eq!(imported.warnings, vec![ImportWarning::UnknownModelType("my_new_decoder".to_owned())]);
    assert_eq!(model::count_params(&imported.arch).total(), 6_738_415_616);
    let without = LLAMA.replace("\"model_type\": \"llama\",", "");
    assert_eq!(hf::import(&without).unwrap().warnings, vec![ImportWarning::UnknownModelType(String::new())]);
}

#[test]
fn missing_and_wrong_values_name_the_key() {
    assert_eq!(refused("not json"), ConfigError::NotJson("expected ident at line 1 column 2".to_owned()));
    assert_eq!(refused("[1, 2]"), ConfigError::NotObject);
    assert_eq!(refused(&LLAMA.replace("\"hidden_size\": 4096,", "")), ConfigError::Missing("hidden_size"));
    assert_eq!(
        refused(&LLAMA.replace("\"hidden_size\": 4096", "\"hidden_size\": \"4096\"")),
        ConfigError::WrongType { key: "hidden_size", expected: "a whole number" }
    );
    assert_eq!(
        refused(&LLAMA.replace("\"hidden_size\": 4096", "\"hidden_size\": 40.5")),
        ConfigError::WrongType { key: "hidden_size", expected: "a whole number" }
    );
    for value in ["0", "-4096", "1e30", "99999999999999999999", "5000"] {
        match refused(&LLAMA.replace("\"num_hidden_layers\": 32", &format!("\"num_hidden_layers\": {value}")))
        {
            ConfigError::OutOfRange { key: "num_hidden_layers", value: shown, min: 1, max: 4096 } => {
                assert_eq!(shown.parse::<f64>().unwrap(), value.parse::<f64>().unwrap());
            }
            other => panic!("{value}: {other:?}"),
        }
    }
    // 4096.0 is still a whole number.
    assert!(hf::import(&LLAMA.replace("\"hidden_size\": 4096", "\"hidden_size\": 4096.0")).is_ok());
    assert_eq!(
        refused(&LLAMA.replace("\"num_key_value_heads\": 32", "\"num_key_value_heads\": 5")),
        ConfigError::Inconsistent(
            "num_attention_heads (32) is not a multiple of num_key_value_heads (5)".to_owned()
        )
    );
    assert_eq!(
        refused(
            &LLAMA
                .replace("\"tie_word_embeddings\"", "x")
                .replace("}", ", \"tie_word_embeddings\": \"yes\"}")
        ),
        ConfigError::WrongType { key: "tie_word_embeddings", expected: "true or false" }
    );
}

#[test]
fn absurd_sizes_are_refused_not_overflowed() {
    let huge = r#"{"model_type": "mixtral", "vocab_size": 16000000, "hidden_size": 1000000, "intermediate_size": 1000000,
      "num_hidden_layers": 4000, "num_attention_heads": 1000, "num_local_experts": 16000, "num_experts_per_tok": 2}"#;
    assert_eq!(refused(huge), ConfigError::TooLarge);
    let top_k = r#"{"model_type": "mixtral", "vocab_size": 32000, "hidden_size": 4096, "intermediate_size": 14336,
      "num_hidden_layers": 32, "num_attention_heads": 32, "num_local_experts": 8, "num_experts_per_tok": 9}"#;
    assert!(matches!(refused(top_k), ConfigError::Inconsistent(_)));
}

#[test]
fn deepseek_q_lora_rank_absent_null_and_zero() {
    // transformers' DeepseekV3Config defaults an absent q_lora_rank to 1536; V2-Lite writes null
    // (DeepSeek's own config_16B.json writes 0): both mean queries are projected directly.
    let lite = trainplan_core::catalog::CONFIGS.iter().find(|c| c.id == "deepseek-v2-lite").unwrap().config;
    let with_null = hf::import(lite).unwrap().arch;
    let with_zero = hf::import(&lite.replace("\"q_lora_rank\": null", "\"q_lora_rank\": 0")).unwrap().arch;
    let absent = hf::import(&lite.replace("\"q_lora_rank\": null, ", "")).unwrap().arch;
    assert_eq!(with_null, with_zero);
    assert_ne!(with_null, absent);
    assert_eq!(model::count_params(&with_null).total(), 15_706_484_224);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    /// Any JSON text at all: an answer, never a panic.
    #[test]
    fn arbitrary_text_never_panics(text in ".{0,200}") {
        let _ = hf::import(&text);
    }

    /// Llama-like configs with random values in and beyond the accepted ranges: a count or a refusal.
    #[test]
    fn random_configs_count_or_refuse(
        family in prop::sample::select(Family::ALL.to_vec()),
        hidden in prop_oneof![Just(0_i64), 1..=8192_i64, Just(-1), Just(i64::MAX)],
        layers in prop_oneof![Just(0_i64), 1..=200_i64, Just(1 << 40)],
        heads in 1..=128_i64,
        kv_divisor in 1..=8_i64,
        vocab in 1..=300_000_i64,
        experts in 0..=300_i64,
        top_k in 0..=16_i64,
        tied in any::<bool>(),
    ) {
        let config = serde_json::json!({
            "model_type": family.model_type(),
            "vocab_size": vocab, "hidden_size": hidden, "n_embd": hidden,
            "intermediate_size": hidden.saturating_mul(3), "moe_intermediate_size": 512,
            "num_hidden_layers": layers, "n_layer": layers,
            "num_attention_heads": heads, "n_head": heads, "num_key_value_heads": (heads / kv_divisor).max(1),
            "num_local_experts": experts, "num_experts": experts, "n_routed_experts": experts,
            "num_experts_per_tok": top_k, "n_shared_experts": 1, "first_k_dense_replace": 1,
            "kv_lora_rank": 512, "qk_nope_head_dim": 128, "qk_rope_head_dim": 64, "v_head_dim": 128,
            "tie_word_embeddings": tied,
        });
        if let Ok(imported) = hf::import_value(&config) {
            let counts = model::count_params(&imported.arch);
            prop_assert!(0 < counts.total() && counts.total() <= hf::MAX_PARAMS);
            prop_assert!(counts.active <= counts.total());
        }
    }
}
