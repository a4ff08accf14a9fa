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

fn catalog_config(id: &str) -> &'static str {
    trainplan_core::catalog::CONFIGS.iter().find(|c| c.id == id).unwrap().config
}

fn with_model_type(config: &str, model_type: &str) -> serde_json::Value {
    let mut value: serde_json::Value = serde_json::from_str(config).unwrap();
    value["model_type"] = serde_json::json!(model_type);
    value
}

/// openai/gpt-oss-20b's config.json (huggingface.co/openai/gpt-oss-20b/blob/main/config.json),
/// `layer_types` and `quantization_config` left out (`GptOssConfig` writes the same alternation
/// when it is absent).
const GPT_OSS_20B: &str = r#"{"architectures": ["GptOssForCausalLM"], "attention_bias": true,
  "attention_dropout": 0.0, "eos_token_id": 200002, "experts_per_token": 4, "head_dim": 64,
  "hidden_act": "silu", "hidden_size": 2880, "initial_context_length": 4096, "initializer_range": 0.02,
  "intermediate_size": 2880, "max_position_embeddings": 131072, "model_type": "gpt_oss",
  "num_attention_heads": 64, "num_experts_per_tok": 4, "num_hidden_layers": 24, "num_key_value_heads": 8,
  "num_local_experts": 32, "output_router_logits": false, "pad_token_id": 199999, "rms_norm_eps": 1e-05,
  "rope_theta": 150000, "router_aux_loss_coef": 0.9, "sliding_window": 128, "swiglu_limit": 7.0,
  "tie_word_embeddings": false, "transformers_version": "4.55.0.dev0", "use_cache": true,
  "vocab_size": 201088}"#;

/// Every tensor of transformers' `modeling_gpt_oss.py` (4.55), counted by hand from its shapes:
/// embedding and untied head V·h each; per layer q, k, v, o with bias (attention_bias), 64
/// attention sinks, two RMSNorms, the router Linear(h, 32) with bias, and the experts'
/// gate_up_proj [32, h, 2f] with its bias [32, 2f] and down_proj [32, f, h] with its bias [32, h];
/// the final norm. Returns (the whole count, the sinks and biases of one layer, its experts' weights).
fn gpt_oss_20b_by_hand() -> (u64, u64, u64) {
    let (v, h, f, e, layers, heads, kv, d) = (201_088u64, 2880u64, 2880u64, 32u64, 24u64, 64u64, 8u64, 64u64);
    let attention = (h * heads * d + heads * d) + 2 * (h * kv * d + kv * d) + (heads * d * h + h);
    let (sinks, router_bias, expert_biases) = (heads, e, e * 2 * f + e * h);
    let experts = e * (h * 2 * f + f * h);
    let per_layer = attention + sinks + 2 * h + (e * h + router_bias) + experts + expert_biases;
    (2 * v * h + layers * per_layer + h, sinks + router_bias + expert_biases, experts)
}

/// Phi-3-mini-4k-instruct's config.json as published (its first upload, transformers 4.39.3).
const PHI_3_MINI_4K: &str = r#"{"_name_or_path": "Phi-3-mini-4k-instruct", "architectures": ["Phi3ForCausalLM"],
  "attention_dropout": 0.0, "auto_map": {"AutoConfig": "configuration_phi3.Phi3Config",
  "AutoModelForCausalLM": "modeling_phi3.Phi3ForCausalLM"}, "bos_token_id": 1, "embd_pdrop": 0.0,
  "eos_token_id": 32000, "hidden_act": "silu", "hidden_size": 3072, "initializer_range": 0.02,
  "intermediate_size": 8192, "max_position_embeddings": 4096, "model_type": "phi3", "num_attention_heads": 32,
  "num_hidden_layers": 32, "num_key_value_heads": 32, "original_max_position_embeddings": 4096,
  "pad_token_id": 32000, "resid_pdrop": 0.0, "rms_norm_eps": 1e-05, "rope_scaling": null, "rope_theta": 10000.0,
  "sliding_window": 2047, "tie_word_embeddings": false, "torch_dtype": "bfloat16",
  "transformers_version": "4.39.3", "use_cache": true, "vocab_size": 32064}"#;

/// Phi-3-mini-4k reads as the Hub counts it (its safetensors API: 3,821,079,552 parameters, twice
/// that in its index's total_size, bf16), a window of 2,047 on every layer (`Phi3Model.forward`: one
/// sliding-window mask for the stack), and LoRA over its fused projections as PEFT printed it:
/// r 16 on ["qkv_proj", "o_proj", "gate_up_proj", "down_proj"] "trainable params: 25,165,824 || all
/// params: 3,846,245,376" (nehru/ai-docstring-generator, README.md and fine_tune_phi3_final.py); r 8
/// on Llama's seven names, of which only `o_proj` and `down_proj` exist there, "trainable params:
/// 4,456,448 || all params: 3,825,536,000" (datawhalechina/self-llm,
/// models/phi-3/Phi-3-mini-4k-Instruct-Lora.ipynb).
#[test]
fn phi_3_reads_its_fused_projections_and_window() {
    use model::{LoraScope, LoraTarget};
    let imported = hf::import(PHI_3_MINI_4K).unwrap();
    assert_eq!(imported.warnings, vec![]);
    let arch = &imported.arch;
    assert_eq!(arch.family, Family::Phi3);
    let total = model::count_params(arch).total();
    assert_eq!(total, 3_821_079_552);
    let window = arch.sliding_window.unwrap();
    assert_eq!((window.size, window.windowed_layers(32)), (2047, 32));
    let four = [LoraTarget::QkvProj, LoraTarget::O, LoraTarget::GateUp, LoraTarget::Down];
    let lora = model::lora_params(arch, 16, &four, LoraScope::Hf);
    assert_eq!((lora, total + lora), (25_165_824, 3_846_245_376));
    let llama_names = [
        LoraTarget::Q,
        LoraTarget::K,
        LoraTarget::V,
        LoraTarget::O,
        LoraTarget::Gate,
        LoraTarget::Up,
        LoraTarget::Down,
    ];
    let lora = model::lora_params(arch, 8, &llama_names, LoraScope::Hf);
    assert_eq!((lora, total + lora), (4_456_448, 3_825_536_000));
    // A rotary share of no dimension, or of more than a head, is refused with its key named.
    let mut config: serde_json::Value = serde_json::from_str(PHI_3_MINI_4K).unwrap();
    for (factor, refused) in [(0.0, true), (1.5, true), (-0.5, true), (0.75, false), (1.0, false)] {
        config["partial_rotary_factor"] = serde_json::json!(factor);
        let read = hf::import_value(&config);
        assert_eq!(
            matches!(&read, Err(ConfigError::Inconsistent(m)) if m.contains("partial_rotary_factor")),
            refused
        );
        assert_eq!(read.is_ok(), !refused);
    }
    config["partial_rotary_factor"] = serde_json::json!("half");
    assert!(matches!(
        hf::import_value(&config),
        Err(ConfigError::WrongType { key: "partial_rotary_factor", .. })
    ));
}

#[test]
fn gpt_oss_counts_its_sinks_and_biased_experts() {
    let imported = hf::import(GPT_OSS_20B).unwrap();
    assert_eq!(imported.warnings, vec![]);
    assert_eq!(imported.arch.family, Family::GptOss);
    let (exact, _, experts) = gpt_oss_20b_by_hand();
    assert_eq!(exact, 20_914_757_184);
    let counts = model::count_params(&imported.arch);
    assert_eq!(counts.total(), exact);
    assert_eq!(counts.experts, 24 * (experts + 32 * (2 * 2880 + 2880)));
    // The alternation `GptOssConfig` writes when `layer_types` is absent: even layers windowed.
    let window = imported.arch.sliding_window.unwrap();
    assert_eq!((window.size, window.full_every, window.windowed_layers(24)), (128, 2, 12));
    // A list that is not every k-th layer full is refused, not misread.
    let mut odd: serde_json::Value = serde_json::from_str(GPT_OSS_20B).unwrap();
    let mut kinds = vec![serde_json::json!("sliding_attention"); 24];
    kinds[5] = serde_json::json!("full_attention");
    odd["layer_types"] = serde_json::Value::Array(kinds);
    assert!(matches!(hf::import_value(&odd), Err(ConfigError::Inconsistent(_))));
}

#[test]
fn an_unknown_model_type_with_experts_counts_them() {
    // gpt-oss-20b's keys under a type the planner does not know: the experts are read from the
    // keys the known families write, the sinks and biases are not (0.03 %).
    let imported = hf::import_value(&with_model_type(GPT_OSS_20B, "my_oss")).unwrap();
    assert_eq!(
        imported.warnings,
        vec![
            ImportWarning::UnknownModelType("my_oss".to_owned()),
            ImportWarning::ExpertsRead { key: "num_local_experts", n_experts: 32, top_k: 4 },
        ]
    );
    let (exact, sinks_and_biases, experts) = gpt_oss_20b_by_hand();
    let counts = model::count_params(&imported.arch);
    assert_eq!(counts.total(), exact - 24 * sinks_and_biases);
    assert_eq!(counts.experts, 24 * experts);
}

#[test]
fn unknown_model_types_read_experts_as_the_known_families_write_them() {
    // Mixtral's keys under another name: the same model.
    let mixtral = hf::import(catalog_config("mixtral-8x7b")).unwrap();
    let renamed = hf::import_value(&with_model_type(catalog_config("mixtral-8x7b"), "my_moe")).unwrap();
    assert_eq!(
        renamed.warnings[1],
        ImportWarning::ExpertsRead { key: "num_local_experts", n_experts: 8, top_k: 2 }
    );
    assert_eq!(model::count_params(&renamed.arch), model::count_params(&mixtral.arch));
    // Qwen3-MoE's (`num_experts`, `moe_intermediate_size`, `decoder_sparse_step`) and DeepSeek-V3's
    // (`n_routed_experts`, `n_shared_experts`, `first_k_dense_replace`): the same experts, shared
    // experts and routers; their attention (Qwen3's q/k norms, DeepSeek's MLA) is another matter.
    for (id, key) in [("qwen3-30b-a3b", "num_experts"), ("deepseek-v3", "n_routed_experts")] {
        let known = model::count_params(&hf::import(catalog_config(id)).unwrap().arch);
        let mut config = with_model_type(catalog_config(id), "my_moe");
        config["num_key_value_heads"] = config["num_attention_heads"].clone();
        let renamed = hf::import_value(&config).unwrap();
        assert!(matches!(renamed.warnings[1], ImportWarning::ExpertsRead { key: k, .. } if k == key), "{id}");
        let counts = model::count_params(&renamed.arch);
        assert_eq!(
            (counts.experts, counts.shared_experts, counts.router, counts.mlp),
            (known.experts, known.shared_experts, known.router, known.mlp),
            "{id}"
        );
        assert!(0 < counts.experts && counts.active < counts.total(), "{id}");
    }
    // DeepSeek-V3's keys under another name (DeepSeek-V3.2's `deepseek_v32`): MLA's ranks read
    // as DeepSeek's attention, the same attention parameters.
    let known = model::count_params(&hf::import(catalog_config("deepseek-v3")).unwrap().arch);
    let renamed = hf::import_value(&with_model_type(catalog_config("deepseek-v3"), "deepseek_v32")).unwrap();
    let counts = model::count_params(&renamed.arch);
    assert!(matches!(renamed.arch.attention, model::Attention::Mla { .. }));
    assert_eq!(
        (counts.attention, counts.experts, counts.total()),
        (known.attention, known.experts, known.total())
    );
    // An expert count of 0 is a dense model; experts without a count per token are refused.
    let mut dense = with_model_type(catalog_config("mixtral-8x7b"), "my_moe");
    dense["num_local_experts"] = serde_json::json!(0);
    assert_eq!(hf::import_value(&dense).unwrap().arch.moe, None);
    // Experts under keys the reader does not take (ERNIE-4.5's) are refused, not read dense.
    let mut ernie = with_model_type(catalog_config("mixtral-8x7b"), "ernie4_5_moe");
    let obj = ernie.as_object_mut().unwrap();
    obj.remove("num_local_experts");
    obj.remove("num_experts_per_tok");
    obj.insert("moe_num_experts".to_owned(), serde_json::json!(64));
    match hf::import_value(&ernie) {
        Err(ConfigError::Inconsistent(msg)) => assert!(msg.starts_with("moe_num_experts (64)"), "{msg}"),
        other => panic!("read as {other:?}"),
    }
    let mut no_top_k = with_model_type(catalog_config("mixtral-8x7b"), "my_moe");
    no_top_k.as_object_mut().unwrap().remove("num_experts_per_tok");
    assert_eq!(hf::import_value(&no_top_k), Err(ConfigError::Missing("num_experts_per_tok")));
}

/// meta-llama/Llama-4-Scout-17B-16E's config.json, its text_config's shape keys and the wrapper's
/// model_type (the vision_config cut to two keys).
const LLAMA_4_SCOUT: &str = r#"{"architectures": ["Llama4ForConditionalGeneration"], "model_type": "llama4",
  "text_config": {"attention_bias": false, "head_dim": 128, "hidden_size": 5120, "interleave_moe_layer_step": 1,
    "intermediate_size": 8192, "intermediate_size_mlp": 16384, "max_position_embeddings": 10485760,
    "model_type": "llama4_text", "num_attention_heads": 40, "num_experts_per_tok": 1, "num_hidden_layers": 48,
    "num_key_value_heads": 8, "num_local_experts": 16, "rms_norm_eps": 1e-05, "rope_theta": 500000.0,
    "tie_word_embeddings": false, "use_qk_norm": true, "vocab_size": 202048},
  "vision_config": {"hidden_size": 1408, "model_type": "llama4_vision_model"}}"#;

#[test]
fn llama_4_reads_its_shared_expert_and_dense_width() {
    let imported = hf::import(LLAMA_4_SCOUT).unwrap();
    assert_eq!(
        imported.warnings,
        vec![
            ImportWarning::TextConfig("llama4".to_owned()),
            ImportWarning::UnknownModelType("llama4_text".to_owned()),
            ImportWarning::ExpertsRead { key: "num_local_experts", n_experts: 16, top_k: 1 },
        ]
    );
    // Every tensor of transformers' `modeling_llama4.py` (4.57.1) for the text model, counted by
    // hand: embedding and untied head V·h each; per layer q and o h·h, k and v h·1,024 (no bias;
    // the q/k L2 norm has no weight), two RMSNorms, the router Linear(h, 16), the experts'
    // gate_up_proj [16, h, 2·8,192] and down_proj [16, 8,192, h], the shared expert's three
    // h × 8,192 projections; the final norm. 17.2 B of it active, as the model's name says.
    let (v, h, f, e, layers) = (202_048u64, 5_120u64, 8_192u64, 16u64, 48u64);
    let per_layer = 2 * h * h + 2 * h * 1_024 + 2 * h + h * e + e * 3 * h * f + 3 * h * f;
    let counts = model::count_params(&imported.arch);
    assert_eq!(counts.total(), 2 * v * h + layers * per_layer + h);
    assert_eq!(counts.total(), 107_769_861_120);
    assert_eq!(counts.active / 100_000_000, 171);
    // Maverick's layout: every other layer MoE (interleave_moe_layer_step 2), the others dense MLPs
    // of intermediate_size_mlp.
    let mut maverick: serde_json::Value = serde_json::from_str(LLAMA_4_SCOUT).unwrap();
    maverick["text_config"]["interleave_moe_layer_step"] = serde_json::json!(2);
    let counts = model::count_params(&hf::import_value(&maverick).unwrap().arch);
    assert_eq!(counts.mlp, 24 * 3 * h * 16_384);
    assert_eq!(counts.experts, 24 * e * 3 * h * f);
}

#[test]
fn layers_that_are_not_attention_are_named() {
    // Qwen3-Next's layer_types: three linear-attention layers to each full-attention one, read as
    // its Gated DeltaNet layers (no warning beyond the defaults' none).
    let mut config: serde_json::Value =
        serde_json::from_str(&LLAMA.replace("\"llama\"", "\"qwen3_next\"")).unwrap();
    let kinds: Vec<&str> =
        (0..32).map(|i| if i % 4 == 3 { "full_attention" } else { "linear_attention" }).collect();
    config["layer_types"] = serde_json::json!(kinds);
    let read = hf::import_value(&config).unwrap();
    assert!(read.warnings.is_empty(), "{:?}", read.warnings);
    let linear = read.arch.linear_attention.unwrap();
    assert_eq!(linear.full_every, 4);
    assert_eq!(model::linear_attention_layers_in(&read.arch, 0..32), 24);
    assert!(
        model::is_linear_attention_layer(&read.arch, 2) && !model::is_linear_attention_layer(&read.arch, 3)
    );
    // Qwen3-Next's own config.json writes the interval instead (Qwen/Qwen3-Next-80B-A3B-Instruct).
    let mut interval = config.clone();
    interval.as_object_mut().unwrap().remove("layer_types");
    interval["full_attention_interval"] = serde_json::json!(4);
    assert_eq!(hf::import_value(&interval).unwrap().arch, read.arch);
    // Full-attention layers other than every k-th are refused by name.
    let mut irregular = config.clone();
    irregular["layer_types"][5] = serde_json::json!("full_attention");
    assert!(
        matches!(hf::import_value(&irregular), Err(ConfigError::Inconsistent(m)) if m.contains("layer_types"))
    );
    // Another type's layers that are not attention (LFM2's `conv`) are named.
    let mut other: serde_json::Value = serde_json::from_str(LLAMA).unwrap();
    let kinds: Vec<&str> = (0..32).map(|i| if i % 2 == 0 { "conv" } else { "full_attention" }).collect();
    other["layer_types"] = serde_json::json!(kinds);
    let warnings = hf::import_value(&other).unwrap().warnings;
    assert_eq!(warnings, [ImportWarning::OtherLayerTypes { kind: "conv".to_owned(), layers: 16 }]);
    // Text that names no type (found by the fuzzing: "NaN") is not repeated back.
    other["layer_types"][0] = serde_json::json!("NaN");
    let warnings = hf::import_value(&other).unwrap().warnings;
    assert_eq!(warnings, [ImportWarning::OtherLayerTypes { kind: "unnamed".to_owned(), layers: 16 }]);
    // Sliding-window layers hold the parameters full ones do.
    other["layer_types"] = serde_json::json!(["sliding_attention", "full_attention"]);
    assert!(hf::import_value(&other).unwrap().warnings.is_empty());
}

#[test]
fn a_multimodal_wrapper_is_read_from_its_text_config() {
    // Mistral 3's layout (mistralai/Mistral-Small-3.1-24B-Instruct-2503): the language model's
    // config under text_config, the vision tower's under vision_config, no shape at the top.
    let text: serde_json::Value = serde_json::from_str(catalog_config("mistral-7b-v0.3")).unwrap();
    let wrapper = serde_json::json!({
        "model_type": "mistral3", "text_config": text,
        "vision_config": {"model_type": "pixtral", "hidden_size": 1024, "num_hidden_layers": 24},
        "image_token_index": 10,
    });
    let imported = hf::import_value(&wrapper).unwrap();
    // Its Pixtral encoder named with its size (`vision.rs`): PixtralVisionConfig's defaults but
    // the two keys given (patches of 16, an MLP of 4,096), the projector to the text model's 4,096.
    let (h, t) = (1024u64, 4096u64);
    let pixtral = 3 * 16 * 16 * h + h + 24 * (2 * h + 4 * h * h + 3 * h * 4096);
    let projector = h + 4 * h * h + h * t + t * t;
    assert_eq!(
        imported.warnings,
        vec![ImportWarning::VisionEncoder { model_type: "mistral3".to_owned(), params: pixtral + projector }]
    );
    // The language model is the text config's; the encoder's size is kept beside it, and what an
    // image token passes through: 2 × 2 patches through the encoder and the projector's norm, the
    // token through the merger and the two linears.
    let lm = hf::import_value(&text).unwrap().arch;
    let token = 4 * (pixtral + h) + 4 * h * h + h * t + t * t;
    // Each of 24 blocks saves for backward, per patch: two RMSNorms (8h + 4 each), q, k, v and the
    // output (8h) with a 4-byte log-sum-exp for each of 16 heads, and the gated MLP (8i).
    let block = 2 * (8 * h + 4) + 8 * h + 4 * 16 + 8 * 4096;
    let encoder = trainplan_core::vision::Encoder {
        params: pixtral + projector,
        token_params: token,
        depth: 24,
        token_saved_bytes: 4 * 24 * block,
        // Every block attends over each whole image, whose size varies.
        width: h,
        token_patches: 4,
        attention_layers: 24,
        image_patches: 0,
    };
    let vision = model::Architecture { vision: Some(Box::new(encoder)), ..lm };
    assert_eq!(imported.arch, vision);
    assert_eq!(hf::config_value(&wrapper, "rope_theta"), hf::config_value(&text, "rope_theta"));
    // A config with its own shape is read at the top, whatever else it holds; a vision tower beside
    // it (Qwen2.5-VL's layout) is named.
    let mut top = text.clone();
    top["text_config"] = serde_json::json!({"hidden_size": 8});
    assert!(hf::import_value(&top).unwrap().warnings.is_empty());
    top["vision_config"] = serde_json::json!({"depth": 32, "hidden_size": 1280});
    assert_eq!(
        hf::import_value(&top).unwrap().warnings,
        vec![ImportWarning::VisionConfig("mistral".to_owned())]
    );
}

/// Qwen2.5-VL-7B-Instruct's config.json as released (the language model's shape at the top, the
/// vision encoder's in `vision_config`, M-RoPE in `rope_scaling`).
pub(crate) const QWEN2_5_VL_7B: &str = r#"{"architectures": ["Qwen2_5_VLForConditionalGeneration"], "attention_dropout": 0.0,
  "bos_token_id": 151643, "eos_token_id": 151645, "vision_start_token_id": 151652, "vision_end_token_id": 151653,
  "vision_token_id": 151654, "image_token_id": 151655, "video_token_id": 151656, "hidden_act": "silu",
  "hidden_size": 3584, "initializer_range": 0.02, "intermediate_size": 18944, "max_position_embeddings": 128000,
  "max_window_layers": 28, "model_type": "qwen2_5_vl", "num_attention_heads": 28, "num_hidden_layers": 28,
  "num_key_value_heads": 4, "rms_norm_eps": 1e-06, "rope_theta": 1000000.0, "sliding_window": 32768,
  "tie_word_embeddings": false, "torch_dtype": "bfloat16", "transformers_version": "4.41.2", "use_cache": true,
  "use_sliding_window": false,
  "vision_config": {"depth": 32, "hidden_act": "silu", "hidden_size": 1280, "intermediate_size": 3420,
    "num_heads": 16, "in_chans": 3, "out_hidden_size": 3584, "patch_size": 14, "spatial_merge_size": 2,
    "spatial_patch_size": 14, "window_size": 112, "fullatt_block_indexes": [7, 15, 23, 31],
    "tokens_per_second": 2, "temporal_patch_size": 2},
  "rope_scaling": {"type": "mrope", "mrope_section": [16, 24, 24]}, "vocab_size": 152064}"#;

/// Qwen2-VL's and Qwen2.5-VL's language model is Qwen2's decoder, q, k and v with biases
/// (transformers `Qwen2_5_VLAttention`), where it had been read as an unknown Llama-like type
/// without them. Qwen2.5-VL-7B's is Qwen2.5-7B's shape (vocabulary 152,064, 28 layers of h = 3,584):
/// the catalog's Qwen2.5-7B, read from its own config, has as many parameters. Its vision encoder
/// (676,550,144, counted by hand in `vision.rs`'s tests) is named with its size: with it, the
/// model card's 8.29 B parameters.
#[test]
fn qwen2_5_vl_reads_qwen2s_decoder_and_names_its_vision_encoder() {
    let config: serde_json::Value = serde_json::from_str(QWEN2_5_VL_7B).unwrap();
    let read = hf::import_value(&config).unwrap();
    let arch = &read.arch;
    assert_eq!(arch.family, Family::Qwen2);
    assert!(matches!(arch.attention, model::Attention::Gqa { qkv_bias: true, o_bias: false, .. }));
    let lm = model::count_params(arch).total();
    let qwen2_5_7b = hf::import(catalog_config("qwen2.5-7b")).unwrap().arch;
    assert_eq!(lm, model::count_params(&qwen2_5_7b).total());
    let vision = 676_550_144;
    assert_eq!(
        read.warnings,
        [ImportWarning::VisionEncoder { model_type: "qwen2_5_vl".to_owned(), params: vision }]
    );
    // The two parts make the whole model's parameters, Qwen2.5-VL-7B-Instruct's 8,292,166,656.
    assert_eq!(lm + vision, 8_292_166_656);
    // Saved by transformers 5: the language model in a `text_config` of its own type, read alike.
    let text: serde_json::Map<String, serde_json::Value> = config
        .as_object()
        .unwrap()
        .iter()
        .filter(|(k, _)| !matches!(k.as_str(), "vision_config" | "model_type" | "architectures"))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    let mut text = serde_json::Value::Object(text);
    text["model_type"] = serde_json::json!("qwen2_5_vl_text");
    let nested = serde_json::json!({"model_type": "qwen2_5_vl", "text_config": text,
        "vision_config": config["vision_config"].clone()});
    let read_nested = hf::import_value(&nested).unwrap();
    assert_eq!(read_nested.arch, read.arch);
    assert_eq!(read_nested.warnings, read.warnings);
    // Keys left out take the text class's defaults, not Qwen2Config's (`rope_theta` 10,000).
    let mut bare = config.clone();
    bare.as_object_mut().unwrap().remove("rope_theta");
    assert_eq!(hf::config_value(&bare, "rope_theta"), Some(serde_json::json!(1000000.0)));
    // Qwen2-VL's own type likewise; a vision encoder of another shape still named, uncounted.
    let mut qwen2_vl = config.clone();
    qwen2_vl["model_type"] = serde_json::json!("qwen2_vl");
    qwen2_vl["vision_config"] = serde_json::json!({"depth": 32, "embed_dim": 1280, "mlp_ratio": 4,
        "hidden_size": 3584, "in_chans": 3, "patch_size": 14, "spatial_merge_size": 2, "temporal_patch_size": 2});
    let read2 = hf::import_value(&qwen2_vl).unwrap();
    assert_eq!(read2.arch.family, Family::Qwen2);
    assert_eq!(
        read2.warnings,
        [ImportWarning::VisionEncoder { model_type: "qwen2_vl".to_owned(), params: 675_759_104 }]
    );
    qwen2_vl["vision_config"]["depth"] = serde_json::json!("32");
    assert_eq!(
        hf::import_value(&qwen2_vl).unwrap().warnings,
        [ImportWarning::VisionConfig("qwen2_vl".to_owned())]
    );
}

/// Qwen3-VL's language model is Qwen3's decoder (transformers `Qwen3VLTextAttention`: q/k norms,
/// no biases), in the `text_config` of a `qwen3_vl` config; it had been read as an unknown
/// Llama-like type, without the norms. Qwen3-VL-2B-Instruct's (as released, the vision config cut
/// to its shape), by hand: a tied embedding of 151,936 × 2,048 and 28 layers of 16 query and 8
/// key/value heads of 128, an MLP of 6,144, two norms and the q/k norms; its vision encoder
/// (406,957,056, counted by hand in `vision.rs`'s tests) is named with its size.
#[test]
fn qwen3_vl_reads_qwen3s_decoder_from_its_text_config() {
    let config = serde_json::json!({"architectures": ["Qwen3VLForConditionalGeneration"], "image_token_id": 151655,
        "model_type": "qwen3_vl",
        "text_config": {"attention_bias": false, "attention_dropout": 0.0, "bos_token_id": 151643, "dtype": "bfloat16",
            "eos_token_id": 151645, "head_dim": 128, "hidden_act": "silu", "hidden_size": 2048, "initializer_range": 0.02,
            "intermediate_size": 6144, "max_position_embeddings": 262144, "model_type": "qwen3_vl_text",
            "num_attention_heads": 16, "num_hidden_layers": 28, "num_key_value_heads": 8, "rms_norm_eps": 1e-06,
            "rope_scaling": {"mrope_interleaved": true, "mrope_section": [24, 20, 20], "rope_type": "default"},
            "rope_theta": 5000000, "tie_word_embeddings": true, "use_cache": true, "vocab_size": 151936},
        "tie_word_embeddings": true, "transformers_version": "4.57.0.dev0", "video_token_id": 151656,
        "vision_config": {"deepstack_visual_indexes": [5, 11, 17], "depth": 24, "hidden_size": 1024,
            "intermediate_size": 4096, "num_position_embeddings": 2304, "out_hidden_size": 2048, "patch_size": 16}});
    let read = hf::import_value(&config).unwrap();
    let arch = &read.arch;
    assert_eq!(arch.family, Family::Qwen3);
    assert!(matches!(arch.attention, model::Attention::Gqa { qk_norm: true, qkv_bias: false, .. }));
    assert!(arch.tied_embeddings);
    let (h, heads, kv, d, ffn) = (2048u64, 16u64, 8u64, 128u64, 6144u64);
    let layer = h * heads * d + 2 * h * kv * d + heads * d * h + 2 * d + 3 * h * ffn + 2 * h;
    let by_hand = 151_936 * h + 28 * layer + h;
    assert_eq!(model::count_params(arch).total(), by_hand);
    assert_eq!(by_hand + 406_957_056, 2_127_532_032);
    assert_eq!(
        read.warnings,
        [ImportWarning::VisionEncoder { model_type: "qwen3_vl".to_owned(), params: 406_957_056 }]
    );
    // Read as Qwen3, but neither framework's Liger patch is Qwen3's (`memory::loss`): LLaMA-Factory
    // lists no `qwen3_vl`, and VeRL's leaves the MLP unfused. Qwen2.5-VL's is Qwen2's in both.
    let peak = |config: &serde_json::Value, framework: &str, liger: bool| {
        let text = format!(
            r#"{{"model": {{"hf_config": {config}}}, "framework": "{framework}", "method": "lora", "liger_kernel": {liger}}}"#
        );
        trainplan_core::evaluate(&trainplan_core::Plan::from_json(&text).unwrap()).memory.peak_bytes
    };
    let qwen2_5_vl: serde_json::Value = serde_json::from_str(QWEN2_5_VL_7B).unwrap();
    for framework in ["llamafactory", "verl"] {
        assert_eq!(peak(&config, framework, true), peak(&config, framework, false), "{framework}");
        assert!(peak(&qwen2_5_vl, framework, true) < peak(&qwen2_5_vl, framework, false), "{framework}");
    }
    // A key left out takes the text class's default: rope_theta 500,000, not Qwen3Config's.
    let mut bare = config.clone();
    bare["text_config"].as_object_mut().unwrap().remove("rope_theta");
    assert_eq!(hf::config_value(&bare, "rope_theta"), Some(serde_json::json!(500000.0)));
}

/// Qwen3-VL's MoE models: the language model is Qwen3-MoE's decoder (transformers
/// `Qwen3VLMoeTextSparseMoeBlock`, `Qwen3MoeExperts`), in the `text_config` of a `qwen3_vl_moe`
/// config. Qwen3-VL-30B-A3B-Instruct's (as released; its text_config leaves
/// `tie_word_embeddings` to the wrapper, `false`) is Qwen3-30B-A3B's shape: the catalog's,
/// read from its own config, has as many parameters. Its vision encoder, by hand as in
/// `vision.rs`'s tests (27 blocks of 1,152, three DeepStack mergers to 2,048): 538,631,408.
#[test]
fn qwen3_vl_moe_reads_qwen3_moes_decoder_and_the_wrappers_tie() {
    let config = serde_json::json!({"architectures": ["Qwen3VLMoeForConditionalGeneration"], "image_token_id": 151655,
        "model_type": "qwen3_vl_moe",
        "text_config": {"attention_bias": false, "decoder_sparse_step": 1, "head_dim": 128, "hidden_size": 2048,
            "intermediate_size": 6144, "max_position_embeddings": 262144, "mlp_only_layers": [],
            "model_type": "qwen3_vl_moe_text", "moe_intermediate_size": 768, "norm_topk_prob": true,
            "num_attention_heads": 32, "num_experts": 128, "num_experts_per_tok": 8, "num_hidden_layers": 48,
            "num_key_value_heads": 4, "rms_norm_eps": 1e-06,
            "rope_scaling": {"mrope_interleaved": true, "mrope_section": [24, 20, 20], "rope_type": "default"},
            "rope_theta": 5000000, "vocab_size": 151936},
        "tie_word_embeddings": false, "video_token_id": 151656,
        "vision_config": {"deepstack_visual_indexes": [8, 16, 24], "depth": 27, "hidden_act": "gelu_pytorch_tanh",
            "hidden_size": 1152, "in_channels": 3, "intermediate_size": 4304, "num_heads": 16,
            "num_position_embeddings": 2304, "out_hidden_size": 2048, "patch_size": 16, "spatial_merge_size": 2,
            "temporal_patch_size": 2}});
    let read = hf::import_value(&config).unwrap();
    assert_eq!(read.arch.family, Family::Qwen3Moe);
    assert!(!read.arch.tied_embeddings);
    let qwen3_30b = hf::import(catalog_config("qwen3-30b-a3b")).unwrap().arch;
    assert_eq!(model::count_params(&read.arch).total(), model::count_params(&qwen3_30b).total());
    assert_eq!(
        read.warnings,
        [ImportWarning::VisionEncoder { model_type: "qwen3_vl_moe".to_owned(), params: 538_631_408 }]
    );
    // Without the wrapper's key, the text class's default ties them (`Qwen3VLMoeTextConfig`).
    let mut untold = config.clone();
    untold.as_object_mut().unwrap().remove("tie_word_embeddings");
    assert!(hf::import_value(&untold).unwrap().arch.tied_embeddings);
}

/// Gemma 3's multimodal configs (google/gemma-3-4b-it's, which names few keys: transformers'
/// `Gemma3TextConfig` defaults fill the rest) name their SigLIP encoder and projector with their
/// size: 419,816,304, counted by hand in `vision.rs`'s tests; with the language model read from
/// the same config, the whole model's 4,300,079,472 (the model card's 4.3 B).
#[test]
fn gemma_3s_vision_encoder_is_named_with_its_size() {
    let config = serde_json::json!({"architectures": ["Gemma3ForConditionalGeneration"], "boi_token_index": 255999,
        "eoi_token_index": 256000, "image_token_index": 262144, "mm_tokens_per_image": 256, "model_type": "gemma3",
        "torch_dtype": "bfloat16",
        "text_config": {"hidden_size": 2560, "intermediate_size": 10240, "model_type": "gemma3_text",
            "num_hidden_layers": 34, "rope_scaling": {"factor": 8.0, "rope_type": "linear"}, "sliding_window": 1024},
        "vision_config": {"hidden_size": 1152, "image_size": 896, "intermediate_size": 4304,
            "model_type": "siglip_vision_model", "num_attention_heads": 16, "num_hidden_layers": 27, "patch_size": 14,
            "vision_use_head": false}});
    let read = hf::import_value(&config).unwrap();
    assert_eq!(read.arch.family, Family::Gemma3);
    let vision = 419_816_304;
    assert_eq!(
        read.warnings,
        [ImportWarning::VisionEncoder { model_type: "gemma3".to_owned(), params: vision }]
    );
    // The language model read from the same config and the encoder make the whole model's
    // parameters, gemma-3-4b-it's 4,300,079,472.
    assert_eq!(model::count_params(&read.arch).total() + vision, 4_300_079_472);
}

/// Mistral-Small-3.1-24B-Instruct-2503's config (its text model under `text_config`, Pixtral's
/// shape under `vision_config`): the language model is Mistral-Small-24B's (the catalog's, read
/// from its own config), the vision encoder and projector named with their size (438,958,080, by
/// hand in `vision.rs`'s tests); together the whole model's 24,011,361,280 (the model card's 24 B).
#[test]
fn mistral_3s_pixtral_encoder_is_named_with_its_size() {
    let text: serde_json::Value = serde_json::from_str(catalog_config("mistral-small-24b")).unwrap();
    let config = serde_json::json!({"architectures": ["Mistral3ForConditionalGeneration"], "image_token_index": 10,
        "model_type": "mistral3", "multimodal_projector_bias": false, "projector_hidden_act": "gelu",
        "spatial_merge_size": 2, "text_config": text, "vision_feature_layer": -1,
        "vision_config": {"head_dim": 64, "hidden_act": "silu", "hidden_size": 1024, "image_size": 1540,
            "intermediate_size": 4096, "model_type": "pixtral", "num_attention_heads": 16, "num_channels": 3,
            "num_hidden_layers": 24, "patch_size": 14, "rope_theta": 10000.0}});
    let read = hf::import_value(&config).unwrap();
    let lm = model::count_params(&read.arch).total();
    assert_eq!(lm, model::count_params(&hf::import_value(&text).unwrap().arch).total());
    let vision = 438_958_080;
    assert_eq!(
        read.warnings,
        [ImportWarning::VisionEncoder { model_type: "mistral3".to_owned(), params: vision }]
    );
    // The two parts make the whole model's parameters, Mistral-Small-3.1-24B-Instruct-2503's
    // 24,011,361,280.
    assert_eq!(lm + vision, 24_011_361_280);
}

#[test]
fn missing_and_wrong_values_name_the_key() {
    assert_eq!(refused("not json"), ConfigError::NotJson("expected ident at line 1 column 2".to_owned()));
    assert_eq!(refused("[1, 2]"), ConfigError::NotObject);
    // An unknown model_type has no configuration class to default its shape.
    let unknown = LLAMA.replace("\"llama\"", "\"my_new_decoder\"");
    assert_eq!(refused(&unknown.replace("\"hidden_size\": 4096,", "")), ConfigError::Missing("hidden_size"));
    assert_eq!(refused("{}"), ConfigError::Missing("hidden_size"));
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

/// The `__init__` defaults of each supported model_type's transformers configuration class, written
/// out as the values transformers resolves them to (`None` rules applied). Source: transformers 4.57.1,
/// `src/transformers/models/<model_type>/configuration_<model_type>.py` (and `modeling_<model_type>.py`
/// where the model reads a key the class does not define, as Qwen2's `head_dim`). Each row: the
/// model_type, the keys transformers requires (no usable default), the defaults, and the catalog model
/// the defaults describe (same parameter count) where there is one.
const CLASS_DEFAULTS: [(&str, &str, &str, Option<&str>); 20] = [
    // GPT2Config; n_inner=None → 4·n_embd (GPT2Block); tie_word_embeddings from PretrainedConfig.
    (
        "gpt2",
        "{}",
        r#"{"vocab_size": 50257, "n_positions": 1024, "n_embd": 768, "n_layer": 12, "n_head": 12,
      "n_inner": 3072, "tie_word_embeddings": true}"#,
        Some("gpt2"),
    ),
    // LlamaConfig; num_key_value_heads=None → num_attention_heads, head_dim=None → hidden_size // heads.
    (
        "llama",
        "{}",
        r#"{"vocab_size": 32000, "hidden_size": 4096, "intermediate_size": 11008,
      "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 32, "head_dim": 128,
      "max_position_embeddings": 2048, "tie_word_embeddings": false, "attention_bias": false,
      "mlp_bias": false}"#,
        Some("llama-2-7b"),
    ),
    // MistralConfig; head_dim=None → hidden_size // heads (MistralAttention); sliding_window=4096.
    (
        "mistral",
        "{}",
        r#"{"vocab_size": 32000, "hidden_size": 4096, "intermediate_size": 14336,
      "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8, "head_dim": 128,
      "max_position_embeddings": 131072, "tie_word_embeddings": false, "sliding_window": 4096}"#,
        Some("mistral-7b-v0.1"),
    ),
    // Qwen2Config; no head_dim key: Qwen2Attention takes hidden_size // heads.
    (
        "qwen2",
        "{}",
        r#"{"vocab_size": 151936, "hidden_size": 4096, "intermediate_size": 22016,
      "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 32, "head_dim": 128,
      "max_position_embeddings": 32768, "tie_word_embeddings": false}"#,
        None,
    ),
    // Qwen3Config.
    (
        "qwen3",
        "{}",
        r#"{"vocab_size": 151936, "hidden_size": 4096, "intermediate_size": 22016,
      "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 32, "head_dim": 128,
      "max_position_embeddings": 32768, "tie_word_embeddings": false, "attention_bias": false}"#,
        None,
    ),
    // GlmConfig.
    (
        "glm",
        "{}",
        r#"{"vocab_size": 151552, "hidden_size": 4096, "intermediate_size": 13696,
      "num_hidden_layers": 40, "num_attention_heads": 32, "num_key_value_heads": 2, "head_dim": 128,
      "max_position_embeddings": 131072, "tie_word_embeddings": false, "attention_bias": true}"#,
        None,
    ),
    // Glm4Config.
    (
        "glm4",
        "{}",
        r#"{"vocab_size": 151552, "hidden_size": 4096, "intermediate_size": 13696,
      "num_hidden_layers": 40, "num_attention_heads": 32, "num_key_value_heads": 2, "head_dim": 128,
      "max_position_embeddings": 131072, "tie_word_embeddings": false, "attention_bias": true}"#,
        None,
    ),
    // MixtralConfig; head_dim=None → hidden_size // heads (MixtralAttention); sliding_window=None.
    (
        "mixtral",
        "{}",
        r#"{"vocab_size": 32000, "hidden_size": 4096, "intermediate_size": 14336,
      "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8, "head_dim": 128,
      "max_position_embeddings": 131072, "tie_word_embeddings": false, "num_local_experts": 8,
      "num_experts_per_tok": 2, "sliding_window": null}"#,
        Some("mixtral-8x7b"),
    ),
    // Qwen2MoeConfig; mlp_only_layers=None → [].
    (
        "qwen2_moe",
        "{}",
        r#"{"vocab_size": 151936, "hidden_size": 2048, "intermediate_size": 5632,
      "num_hidden_layers": 24, "num_attention_heads": 16, "num_key_value_heads": 16, "head_dim": 128,
      "max_position_embeddings": 32768, "tie_word_embeddings": false, "num_experts": 60,
      "num_experts_per_tok": 4, "moe_intermediate_size": 1408, "shared_expert_intermediate_size": 5632,
      "decoder_sparse_step": 1, "mlp_only_layers": [], "qkv_bias": true}"#,
        Some("qwen1.5-moe-a2.7b"),
    ),
    // Qwen3MoeConfig: no head_dim key, unlike Qwen3Config; Qwen3MoeAttention takes hidden_size // heads.
    (
        "qwen3_moe",
        "{}",
        r#"{"vocab_size": 151936, "hidden_size": 2048, "intermediate_size": 6144,
      "num_hidden_layers": 24, "num_attention_heads": 32, "num_key_value_heads": 4, "head_dim": 64,
      "max_position_embeddings": 32768, "tie_word_embeddings": false, "attention_bias": false,
      "num_experts": 128, "num_experts_per_tok": 8, "moe_intermediate_size": 768, "decoder_sparse_step": 1,
      "mlp_only_layers": []}"#,
        None,
    ),
    // DeepseekV2Config; num_experts_per_tok=None, which DeepseekV2MoEGate cannot route with: required.
    (
        "deepseek_v2",
        r#"{"num_experts_per_tok": 6}"#,
        r#"{"vocab_size": 32000, "hidden_size": 4096,
      "intermediate_size": 11008, "num_hidden_layers": 32, "num_attention_heads": 32,
      "max_position_embeddings": 2048, "tie_word_embeddings": false, "first_k_dense_replace": 0,
      "kv_lora_rank": 512, "q_lora_rank": 1536, "n_routed_experts": 64, "n_shared_experts": 2,
      "qk_nope_head_dim": 128, "qk_rope_head_dim": 64, "v_head_dim": 128, "moe_intermediate_size": 1407}"#,
        None,
    ),
    // DeepseekV3Config (num_nextn_predict_layers is DeepSeek's key, unknown to transformers: 0).
    (
        "deepseek_v3",
        "{}",
        r#"{"vocab_size": 129280, "hidden_size": 7168, "intermediate_size": 18432,
      "moe_intermediate_size": 2048, "num_hidden_layers": 61, "num_attention_heads": 128,
      "n_shared_experts": 1, "n_routed_experts": 256, "kv_lora_rank": 512, "q_lora_rank": 1536,
      "qk_rope_head_dim": 64, "v_head_dim": 128, "qk_nope_head_dim": 128, "num_experts_per_tok": 8,
      "first_k_dense_replace": 3, "max_position_embeddings": 4096, "tie_word_embeddings": false,
      "num_nextn_predict_layers": 0}"#,
        Some("deepseek-v3"),
    ),
    // GptOssConfig (transformers 4.57.1: `attention_bias` set True in its body, `layer_types=None`
    // → sliding on even layers): gpt-oss-120b's shape.
    (
        "gpt_oss",
        "{}",
        r#"{"vocab_size": 201088, "hidden_size": 2880, "intermediate_size": 2880, "num_hidden_layers": 36,
      "num_attention_heads": 64, "num_key_value_heads": 8, "head_dim": 64, "max_position_embeddings": 131072,
      "tie_word_embeddings": false, "attention_bias": true, "num_experts_per_tok": 4, "num_local_experts": 128,
      "sliding_window": 128}"#,
        Some("gpt-oss-120b"),
    ),
    // Glm4MoeConfig (partial_rotary_factor 0.5 set in its body; no head_dim key: Glm4MoeAttention
    // takes hidden_size // heads, 42). GLM-4.5-Air's shape but for its q/k/v biases.
    (
        "glm4_moe",
        "{}",
        r#"{"vocab_size": 151552, "hidden_size": 4096, "intermediate_size": 10944, "num_hidden_layers": 46,
      "num_attention_heads": 96, "num_key_value_heads": 8, "head_dim": 42, "max_position_embeddings": 131072,
      "tie_word_embeddings": false, "attention_bias": false, "use_qk_norm": false, "moe_intermediate_size": 1408,
      "num_experts_per_tok": 8, "n_shared_experts": 1, "n_routed_experts": 128, "first_k_dense_replace": 1,
      "num_nextn_predict_layers": 0}"#,
        None,
    ),
    // Qwen3NextConfig (transformers 5 fields; full_attention_interval 4 where layer_types is not
    // written): Qwen3-Next-80B-A3B's shape, whose every layer holds experts (its intermediate_size
    // builds no layer).
    (
        "qwen3_next",
        "{}",
        r#"{"vocab_size": 151936, "hidden_size": 2048, "intermediate_size": 5632, "num_hidden_layers": 48,
      "num_attention_heads": 16, "num_key_value_heads": 2, "head_dim": 256, "max_position_embeddings": 32768,
      "tie_word_embeddings": false, "attention_bias": false, "linear_conv_kernel_dim": 4, "linear_key_head_dim": 128,
      "linear_value_head_dim": 128, "linear_num_key_heads": 16, "linear_num_value_heads": 32,
      "full_attention_interval": 4, "decoder_sparse_step": 1, "moe_intermediate_size": 512,
      "shared_expert_intermediate_size": 512, "num_experts_per_tok": 10, "num_experts": 512, "mlp_only_layers": []}"#,
        Some("qwen3-next-80b-a3b"),
    ),
    // Qwen3_5TextConfig (transformers 5, models/qwen3_5): Qwen3.5-9B's shape.
    (
        "qwen3_5_text",
        "{}",
        r#"{"vocab_size": 248320, "hidden_size": 4096, "intermediate_size": 12288, "num_hidden_layers": 32,
      "num_attention_heads": 16, "num_key_value_heads": 4, "head_dim": 256, "max_position_embeddings": 32768,
      "tie_word_embeddings": false, "attention_bias": false, "linear_conv_kernel_dim": 4, "linear_key_head_dim": 128,
      "linear_value_head_dim": 128, "linear_num_key_heads": 16, "linear_num_value_heads": 32,
      "full_attention_interval": 4}"#,
        None,
    ),
    // Qwen3_5MoeTextConfig (models/qwen3_5_moe): Qwen3.5-35B-A3B's shape, experts on every layer.
    (
        "qwen3_5_moe_text",
        "{}",
        r#"{"vocab_size": 248320, "hidden_size": 2048, "num_hidden_layers": 40, "num_attention_heads": 16,
      "num_key_value_heads": 2, "head_dim": 256, "max_position_embeddings": 32768, "tie_word_embeddings": false,
      "attention_bias": false, "linear_conv_kernel_dim": 4, "linear_key_head_dim": 128, "linear_value_head_dim": 128,
      "linear_num_key_heads": 16, "linear_num_value_heads": 32, "full_attention_interval": 4,
      "moe_intermediate_size": 512, "shared_expert_intermediate_size": 512, "num_experts_per_tok": 8, "num_experts": 256}"#,
        None,
    ),
    // Gemma2Config (transformers at 008e574): layer_types None → windowed on every even index.
    (
        "gemma2",
        "{}",
        r#"{"vocab_size": 256000, "hidden_size": 2304, "intermediate_size": 9216, "num_hidden_layers": 26,
      "num_attention_heads": 8, "num_key_value_heads": 4, "head_dim": 256, "max_position_embeddings": 8192,
      "tie_word_embeddings": true, "attention_bias": false, "sliding_window": 4096}"#,
        None,
    ),
    // Gemma3TextConfig: sliding_window_pattern 6 where layer_types is not written.
    (
        "gemma3_text",
        "{}",
        r#"{"vocab_size": 262208, "hidden_size": 2304, "intermediate_size": 9216, "num_hidden_layers": 26,
      "num_attention_heads": 8, "num_key_value_heads": 4, "head_dim": 256, "max_position_embeddings": 131072,
      "tie_word_embeddings": true, "attention_bias": false, "sliding_window": 4096, "sliding_window_pattern": 6}"#,
        None,
    ),
    // Phi3Config (transformers 4.57.1): Phi-3-mini's shape, key/value heads None → the heads.
    (
        "phi3",
        "{}",
        r#"{"vocab_size": 32064, "hidden_size": 3072, "intermediate_size": 8192, "num_hidden_layers": 32,
      "num_attention_heads": 32, "num_key_value_heads": 32, "max_position_embeddings": 4096,
      "tie_word_embeddings": false, "partial_rotary_factor": 1.0, "sliding_window": null}"#,
        None,
    ),
];

fn with(base: &serde_json::Value, extra: &serde_json::Value) -> serde_json::Value {
    let mut res = base.clone();
    for (key, value) in extra.as_object().unwrap() {
        res[key] = value.clone();
    }
    res
}

#[test]
fn every_key_transformers_defaults_may_be_left_out() {
    let covered: Vec<&str> = CLASS_DEFAULTS.iter().map(|row| row.0).collect();
    assert_eq!(covered, Family::ALL.map(|f| f.model_type()));
    for (model_type, required, defaults, same_count_as) in CLASS_DEFAULTS {
        let minimal =
            with(&serde_json::json!({"model_type": model_type}), &serde_json::from_str(required).unwrap());
        let defaults: serde_json::Value = serde_json::from_str(defaults).unwrap();
        let read = hf::import_value(&minimal).unwrap_or_else(|e| panic!("{minimal}: {e}"));
        assert!(read.warnings.is_empty(), "{model_type}");
        let written = hf::import_value(&with(&minimal, &defaults)).unwrap().arch;
        assert_eq!(read.arch, written, "{model_type}");
        // Each default alone, so a difference names its key.
        for (key, value) in defaults.as_object().unwrap() {
            let one = hf::import_value(&with(&minimal, &serde_json::json!({key: value}))).unwrap().arch;
            assert_eq!(one, read.arch, "{model_type}: {key} = {value}");
        }
        if let Some(id) = same_count_as {
            let catalog = model::count_params(&trainplan_core::catalog::model(id).unwrap().arch);
            assert_eq!(model::count_params(&read.arch).total(), catalog.total(), "{model_type} as {id}");
        }
        // Every required key is named when it is left out.
        for key in serde_json::from_str::<serde_json::Value>(required).unwrap().as_object().unwrap().keys() {
            let mut without = minimal.clone();
            without.as_object_mut().unwrap().remove(key);
            assert!(matches!(hf::import_value(&without), Err(ConfigError::Missing(k)) if k == key), "{key}");
        }
    }
}

#[test]
fn deepseek_v3_without_its_lora_ranks_reads_as_published() {
    // DeepSeek-V3's config.json sets kv_lora_rank 512 and q_lora_rank 1536, DeepseekV3Config's defaults.
    let v3 = trainplan_core::catalog::CONFIGS.iter().find(|c| c.id == "deepseek-v3").unwrap().config;
    assert!(v3.contains("\"q_lora_rank\": 1536, \"kv_lora_rank\": 512, "));
    let without = v3.replace("\"q_lora_rank\": 1536, \"kv_lora_rank\": 512, ", "");
    let read = hf::import(&without).unwrap();
    assert!(read.warnings.is_empty());
    assert_eq!(read.arch, hf::import(v3).unwrap().arch);
    // 671B in the model card, 685B with the MTP module (params.rs checks the exact figure).
    let counts = model::count_params(&read.arch);
    assert_eq!(
        counts.total(),
        model::count_params(&trainplan_core::catalog::model("deepseek-v3").unwrap().arch).total()
    );
    assert_eq!(counts.total() / 1_000_000_000, 671);
}

#[test]
fn null_means_what_none_means_in_transformers() {
    let read = |text: &str| hf::import(text).unwrap_or_else(|e| panic!("{text}: {e}")).arch;
    let gqa = |arch: &model::Architecture| match arch.attention {
        model::Attention::Gqa { n_heads, n_kv_heads, head_dim, .. } => (n_heads, n_kv_heads, head_dim),
        model::Attention::Mla { .. } => panic!("{arch:?} has MLA"),
    };
    // `num_key_value_heads=None` → num_attention_heads; Qwen2Config's absent default is 32, which 28
    // heads cannot share, as in transformers.
    assert_eq!(
        gqa(&read(
            r#"{"model_type": "qwen2", "num_attention_heads": 28, "hidden_size": 3584, "num_key_value_heads": null}"#
        )),
        (28, 28, 128)
    );
    assert_eq!(
        refused(r#"{"model_type": "qwen2", "num_attention_heads": 28, "hidden_size": 3584}"#),
        ConfigError::Inconsistent(
            "num_attention_heads (28) is not a multiple of num_key_value_heads (32)".to_owned()
        )
    );
    // head_dim=None → hidden_size // heads; Qwen3Config's default is 128, Qwen3MoeConfig has none.
    assert_eq!(
        gqa(&read(r#"{"model_type": "qwen3", "hidden_size": 1024, "num_attention_heads": 16, "num_key_value_heads": 8}"#)).2,
        128
    );
    assert_eq!(
        gqa(&read(
            r#"{"model_type": "qwen3", "hidden_size": 1024, "num_attention_heads": 16, "num_key_value_heads": 8, "head_dim": null}"#
        ))
        .2,
        64
    );
    assert_eq!(
        gqa(&read(r#"{"model_type": "qwen3_moe", "hidden_size": 1024, "num_attention_heads": 16}"#)).2,
        64
    );
    // DeepseekV2MoE builds no shared experts for n_shared_experts=None.
    let v2 = read(r#"{"model_type": "deepseek_v2", "num_experts_per_tok": 6, "n_shared_experts": null}"#);
    assert_eq!(v2.moe.unwrap().shared_intermediate_size, 0);
    // Qwen2MoeDecoderLayer: num_experts 0 is a dense model.
    assert_eq!(read(r#"{"model_type": "qwen2_moe", "num_experts": 0}"#).moe, None);
    // DeepseekV3DecoderLayer: no MoE layer when first_k_dense_replace (3) covers them all.
    let two = read(r#"{"model_type": "deepseek_v3", "num_hidden_layers": 2}"#);
    assert!(!(0..2).any(|i| model::is_moe_layer(&two, i)));
    // A null where None means nothing is refused, naming the key.
    assert_eq!(
        refused(r#"{"model_type": "llama", "hidden_size": null}"#),
        ConfigError::Missing("hidden_size")
    );
    assert_eq!(
        refused(r#"{"model_type": "deepseek_v3", "kv_lora_rank": null}"#),
        ConfigError::Missing("kv_lora_rank")
    );
}

#[test]
fn gpt2_reads_the_standard_names_of_its_attribute_map() {
    // GPT2Config.attribute_map: hidden_size → n_embd, …; PretrainedConfig sets them last, so they win.
    let standard = hf::import(
        r#"{"model_type": "gpt2", "hidden_size": 1024, "num_hidden_layers": 24, "num_attention_heads": 16,
        "max_position_embeddings": 1024, "n_embd": 768, "n_layer": 12}"#,
    )
    .unwrap()
    .arch;
    let own =
        hf::import(r#"{"model_type": "gpt2", "n_embd": 1024, "n_layer": 24, "n_head": 16}"#).unwrap().arch;
    assert_eq!(standard, own);
    assert_eq!(
        refused(r#"{"model_type": "gpt2", "hidden_size": "wide"}"#),
        ConfigError::WrongType { key: "hidden_size", expected: "a whole number" }
    );
}

#[test]
fn config_value_gives_the_written_value_or_the_class_default() {
    let value = |config: serde_json::Value, key: &str| hf::config_value(&config, key);
    let json = |text: &str| serde_json::from_str::<serde_json::Value>(text).unwrap();
    assert_eq!(value(json(r#"{"model_type": "mixtral"}"#), "rope_theta"), Some(json("1000000.0")));
    assert_eq!(value(json(r#"{"model_type": "llama"}"#), "rope_theta"), Some(json("10000.0")));
    assert_eq!(
        value(json(r#"{"model_type": "llama", "rope_theta": 500000.0}"#), "rope_theta"),
        Some(json("500000.0"))
    );
    assert_eq!(value(json(r#"{"model_type": "glm4"}"#), "rms_norm_eps"), Some(json("1.5625e-07")));
    assert_eq!(value(json(r#"{"model_type": "gpt2"}"#), "layer_norm_epsilon"), Some(json("1e-05")));
    assert_eq!(value(json(r#"{"model_type": "gpt2", "hidden_size": 1600}"#), "n_embd"), Some(json("1600")));
    assert_eq!(value(json(r#"{"model_type": "llama", "rope_theta": null}"#), "rope_theta"), None);
    assert_eq!(value(json(r#"{"model_type": "llama"}"#), "num_key_value_heads"), None);
    // An unknown model_type takes LlamaConfig's defaults but for its shape.
    assert_eq!(value(json(r#"{"model_type": "my_decoder"}"#), "rms_norm_eps"), Some(json("1e-06")));
    assert_eq!(value(json(r#"{"model_type": "my_decoder"}"#), "hidden_size"), None);
    assert_eq!(value(json("[]"), "rope_theta"), None);
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
        // Every family, and an unknown type read Llama-like with its experts.
        model_type in prop::sample::select(Family::ALL.iter().map(|f| f.model_type()).chain(["my_moe"]).collect::<Vec<_>>()),
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
            "model_type": model_type,
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

/// DeepSeek-V2's router picks a token's experts from 3 of 8 groups (its config.json:
/// `"topk_method": "group_limited_greedy", "n_group": 8, "topk_group": 3`); V2-Lite's greedily from
/// all 64 (`"greedy"`, as `DeepseekV2Config` defaults it). Groups that do not divide the experts
/// cannot be built (`route_tokens_to_experts` views the scores as `n_group` equal groups) and are
/// refused, naming both.
#[test]
fn deepseek_v2_reads_its_router_groups() {
    let limit = |id: &str| hf::import(catalog_config(id)).unwrap().arch.moe.unwrap().group_limited;
    assert_eq!(limit("deepseek-v2"), Some(model::GroupLimit { groups: 8, top_groups: 3 }));
    assert_eq!(limit("deepseek-v2-lite"), None);
    // DeepSeek-V3's groups belong to its own router (`noaux_tc`), which the launch files write apart.
    assert_eq!(limit("deepseek-v3"), None);
    let v2 = catalog_config("deepseek-v2");
    assert_eq!(
        refused(&v2.replace("\"n_group\": 8", "\"n_group\": 7")),
        ConfigError::Inconsistent("n_group (7) does not divide n_routed_experts (160)".to_owned())
    );
    assert_eq!(refused(&v2.replace("\"n_group\": 8, ", "")), ConfigError::Missing("n_group"));
    let without_method = v2.replace("\"topk_method\": \"group_limited_greedy\", ", "");
    assert_eq!(hf::import(&without_method).unwrap().arch.moe.unwrap().group_limited, None);
}

#[test]
fn a_quantization_config_reads_as_its_format_stores_it() {
    use trainplan_core::quantized::{Format, Prequantized};
    // The `quantization_config` blocks of Qwen/Qwen2.5-7B-Instruct-GPTQ-Int4, -AWQ, a bitsandbytes
    // 4-bit save (transformers `BitsAndBytesConfig.to_dict`), Qwen/Qwen3-8B-FP8, and an AQLM model.
    let read = |q: &str| {
        let mut config: serde_json::Value = serde_json::from_str(LLAMA).unwrap();
        config["quantization_config"] = serde_json::from_str(q).unwrap();
        hf::import(&config.to_string())
    };
    let gptq = r#"{"bits": 4, "damp_percent": 0.01, "desc_act": false, "group_size": 128,
      "model_file_base_name": "model", "model_name_or_path": null, "quant_method": "gptq",
      "static_groups": false, "sym": true, "true_sequential": true}"#;
    let awq = r#"{"bits": 4, "group_size": 128, "modules_to_not_convert": null, "quant_method": "awq",
      "version": "gemm", "zero_point": true}"#;
    let nf4 = r#"{"quant_method": "bitsandbytes", "load_in_4bit": true, "load_in_8bit": false,
      "bnb_4bit_quant_type": "nf4", "bnb_4bit_use_double_quant": true, "bnb_4bit_compute_dtype": "bfloat16"}"#;
    let fp8 = r#"{"activation_scheme": "dynamic", "fmt": "e4m3", "quant_method": "fp8", "weight_block_size": [128, 128]}"#;
    let packed = |format, bits, group_size| Some(Prequantized { format, bits, group_size });
    assert_eq!(read(gptq).unwrap().prequantized, packed(Format::Gptq, 4, Some(128)));
    assert_eq!(read(awq).unwrap().prequantized, packed(Format::Awq, 4, Some(128)));
    assert_eq!(read(nf4).unwrap().prequantized, packed(Format::Nf4 { double_quant: true }, 4, None));
    // AutoAWQ's own key names, and GPTQ's one group per column.
    let autoawq =
        r#"{"quant_method": "awq", "w_bit": 4, "q_group_size": 64, "zero_point": true, "version": "GEMM"}"#;
    assert_eq!(read(autoawq).unwrap().prequantized, packed(Format::Awq, 4, Some(64)));
    let column = r#"{"quant_method": "gptq", "bits": 8, "group_size": -1}"#;
    assert_eq!(read(column).unwrap().prequantized, packed(Format::Gptq, 8, None));
    // fp8 loads dequantized under LLaMA-Factory: a 16-bit model, nothing to say.
    let fp8 = read(fp8).unwrap();
    assert_eq!((fp8.prequantized, fp8.warnings.len()), (None, 0));
    // A method the planner does not read is named, and the model counted 16-bit.
    let aqlm = read(r#"{"quant_method": "aqlm", "nbits_per_codebook": 16, "num_codebooks": 1}"#).unwrap();
    assert_eq!(aqlm.prequantized, None);
    assert_eq!(aqlm.warnings, [ImportWarning::QuantizationUnread("aqlm".to_owned())]);
    // Bits no format has, or a group size that is not one, are refused by key.
    assert!(matches!(
        read(r#"{"quant_method": "gptq", "bits": 16}"#),
        Err(ConfigError::OutOfRange { key: "quantization_config.bits", .. })
    ));
    assert!(matches!(
        read(r#"{"quant_method": "awq", "bits": 4, "group_size": "128"}"#),
        Err(ConfigError::WrongType { key: "quantization_config.group_size", .. })
    ));
    assert!(matches!(
        read(r#"{"quant_method": "gptq", "bits": 4, "group_size": 0}"#),
        Err(ConfigError::OutOfRange { key: "quantization_config.group_size", .. })
    ));
}

#[test]
fn packed_weights_take_their_formats_bytes() {
    use trainplan_core::quantized::{Format, Prequantized};
    // GPTQ and AWQ: the packed integers, then an fp16 scale and a packed zero point per group of
    // input weights (gptqmodel `PackableQuantLinear` buffers `qweight`, `qzeros`, `scales`).
    let q = |format, bits, group_size| Prequantized { format, bits, group_size }.bytes_per_param();
    assert_eq!(q(Format::Gptq, 4, Some(128)), 0.5 + 2.5 / 128.0);
    assert_eq!(q(Format::Awq, 4, Some(64)), 0.5 + 2.5 / 64.0);
    assert_eq!(q(Format::Gptq, 8, Some(128)), 1.0 + 3.0 / 128.0);
    assert_eq!(q(Format::Gptq, 3, None), 0.375);
    // bitsandbytes: NF4 with double quantization 4.127 bits (Dettmers et al. 2023 §2), without it
    // a 4-byte absmax per 64; LLM.int8() a byte.
    assert_eq!(q(Format::Nf4 { double_quant: true }, 4, None), 4.127 / 8.0);
    assert_eq!(q(Format::Nf4 { double_quant: false }, 4, None), 0.5625);
    assert_eq!(q(Format::Int8, 8, None), 1.0);
}

/// Kimi K2.5's wrapper (`model_type: kimi_k25`, its language model a `kimi_k2` under `text_config`,
/// as moonshotai/Kimi-K2.6's config.json nests it): read as DeepSeek-V3 from the text config, the
/// same count as the catalog's Kimi-K2, with the warning that the wrapper's vision tower is left out.
#[test]
fn kimi_k2_reads_as_deepseek_v3_even_inside_its_multimodal_wrapper() {
    let text: serde_json::Value = serde_json::from_str(catalog_config("kimi-k2")).unwrap();
    let wrapper = serde_json::json!({"model_type": "kimi_k25", "text_config": text,
        "vision_config": {"vt_num_hidden_layers": 27}});
    let imported = hf::import_value(&wrapper).unwrap();
    assert_eq!(imported.arch.family, Family::DeepseekV3);
    assert_eq!(imported.warnings, vec![ImportWarning::TextConfig("kimi_k25".to_owned())]);
    let kimi = &trainplan_core::catalog::model("kimi-k2").unwrap().arch;
    assert_eq!(model::count_params(&imported.arch), model::count_params(kimi));
}

/// Mistral's and Mixtral's attention reaches back `sliding_window` tokens on every layer
/// (`MistralAttention`, `MixtralAttention`). Mistral-7B-v0.1's config.json writes 4096; v0.3's and
/// Mixtral's write `null` (no window); a mistral config that leaves the key out takes
/// `MistralConfig`'s 4096, a mixtral one `MixtralConfig`'s none.
#[test]
fn mistral_reads_its_sliding_window_on_every_layer() {
    use trainplan_core::model::SlidingWindow;
    let window = |id: &str| hf::import(catalog_config(id)).unwrap().arch.sliding_window;
    let every_layer = SlidingWindow { size: 4096, full_every: 0 };
    assert_eq!(window("mistral-7b-v0.1"), Some(every_layer));
    assert_eq!(every_layer.windowed_layers(32), 32);
    assert_eq!(window("mistral-7b-v0.3"), None);
    assert_eq!(window("mixtral-8x7b"), None);
    let mut left_out: serde_json::Value = serde_json::from_str(catalog_config("mistral-7b-v0.1")).unwrap();
    left_out.as_object_mut().unwrap().remove("sliding_window");
    assert_eq!(hf::import_value(&left_out).unwrap().arch.sliding_window, Some(every_layer));
    let mut mixtral: serde_json::Value = serde_json::from_str(catalog_config("mixtral-8x7b")).unwrap();
    mixtral["sliding_window"] = serde_json::json!(4096);
    assert_eq!(hf::import_value(&mixtral).unwrap().arch.sliding_window, Some(every_layer));
}

/// GLM-4.5 and GLM-4.5-Air (`glm4_moe`) read as transformers builds them, counted against a count
/// by hand from `modeling_glm4_moe.py`'s shapes: per layer q/k/v with biases and o without, two
/// norms (and GLM-4.5's q/k norms of a head's width); the first `first_k_dense_replace` layers a
/// dense MLP of `intermediate_size`, the others 128 or 160 experts and a shared expert of
/// `moe_intermediate_size` and the router's weight (its `e_score_correction_bias` is a buffer);
/// the final norm, the embedding and the untied head; the MTP layer apart, as transformers does
/// not build it. GLM-4.5-Air's card says 106B: 106,852,245,504 here; GLM-4.5's says 355B, between
/// 352,797,814,784 here and the 356.8 B its MTP layer makes of it.
#[test]
fn glm_4_5_counts_as_its_modeling_code_builds_it() {
    let by_hand = |h: u64, layers: u64, inter: u64, moe: u64, experts: u64, dense: u64, qk_norm: bool| {
        let (heads, kv, hd, vocab) = (96, 8, 128, 151_552);
        let attention = h * heads * hd
            + heads * hd
            + 2 * (h * kv * hd + kv * hd)
            + heads * hd * h
            + if qk_norm { 2 * hd } else { 0 };
        let dense_layer = attention + 2 * h + 3 * h * inter;
        let moe_layer = attention + 2 * h + experts * 3 * h * moe + 3 * h * moe + experts * h;
        dense * dense_layer + (layers - dense) * moe_layer + h + 2 * vocab * h
    };
    for (id, expected, qk_norm) in [
        ("glm-4.5-air", by_hand(4096, 46, 10944, 1408, 128, 1, false), false),
        ("glm-4.5", by_hand(5120, 92, 12288, 1536, 160, 3, true), true),
    ] {
        let arch = hf::import(catalog_config(id)).unwrap().arch;
        assert_eq!(model::count_params(&arch).total(), expected, "{id}");
        assert_eq!(arch.n_mtp_layers, 1, "{id}");
        let trainplan_core::model::Attention::Gqa { qkv_bias, o_bias, qk_norm: norm, .. } = arch.attention
        else {
            panic!("{id}: not GQA")
        };
        assert_eq!((qkv_bias, o_bias, norm), (true, false, qk_norm), "{id}");
    }
    assert_eq!(by_hand(4096, 46, 10944, 1408, 128, 1, false), 106_852_245_504);
    assert_eq!(by_hand(5120, 92, 12288, 1536, 160, 3, true), 352_797_814_784);
}

/// Qwen3.5's configs wrap the language model (`Qwen3_5MoeConfig`, `Qwen3_5Config`: `text_config`
/// and a vision encoder's `vision_config`): the text model is read, the vision encoder named with
/// its size, and the wrapper's `tie_word_embeddings` taken where the text config leaves it out. Qwen3.5-35B-A3B's shape (the MoE text class's defaults) counted by hand from
/// transformers' `modeling_qwen3_5_moe.py`: Qwen3-Next's attention and MoE block on 40 layers of
/// h = 2,048 (10 attention, 30 Gated DeltaNet), 256 experts of 512, its DeltaNet's input projected
/// by four modules whose weights are Qwen3-Next's two.
#[test]
fn qwen3_5_is_read_from_its_text_config() {
    let wrapper = serde_json::json!({"model_type": "qwen3_5_moe", "text_config": {"model_type": "qwen3_5_moe_text"},
        "vision_config": {"depth": 27}});
    let read = hf::import_value(&wrapper).unwrap();
    // The vision encoder (Qwen3-VL's without DeepStack, `Qwen3_5VisionConfig`'s defaults but its
    // depth) by hand: a biased Conv3d of 3 · 2 · 16² to 1,152, 2,304 positions, 27 blocks of
    // LayerNorms, qkv, proj and an MLP of 4,304, a merger of 4 · 1,152 to 3,584.
    let (e, i, m, o) = (1152u64, 4304u64, 4608u64, 3584u64);
    let block = 4 * e + (3 * e * e + 3 * e) + (e * e + e) + (e * i + i) + (i * e + e);
    let vision = 3 * 2 * 16 * 16 * e + e + 2304 * e + 27 * block + 2 * e + (m * m + m) + (m * o + o);
    assert_eq!(vision, 453_650_672);
    assert_eq!(
        read.warnings,
        [ImportWarning::VisionEncoder { model_type: "qwen3_5_moe".to_owned(), params: vision }]
    );
    let arch = &read.arch;
    assert_eq!(arch.family, Family::Qwen35Moe);
    assert!(arch.linear_attention.unwrap().split_in_proj && arch.attention_output_gate);
    let c = model::count_params(arch);
    let h: u64 = 2048;
    let attention = h * 16 * 256 * 2 + 2 * h * 2 * 256 + 16 * 256 * h + 2 * 256;
    let gdn =
        h * (2 * 2048 + 4096) + h * 4096 + 2 * h * 32 + (2 * 2048 + 4096) * 4 + 32 + 32 + 128 + 4096 * h;
    assert_eq!(c.attention, 10 * attention + 30 * gdn);
    assert_eq!(c.experts, 40 * 256 * 3 * h * 512);
    assert_eq!(c.router + c.shared_experts, 40 * (h * 256 + 3 * h * 512 + h));
    assert_eq!(c.total(), 34_660_610_688);
    // Qwen3.5-9B's shape (the dense text class's defaults), a dense MLP on every layer.
    let dense = serde_json::json!({"model_type": "qwen3_5", "text_config": {"model_type": "qwen3_5_text"}});
    let arch = hf::import_value(&dense).unwrap().arch;
    assert_eq!((arch.family, arch.moe.is_none()), (Family::Qwen35, true));
    assert_eq!(model::count_params(&arch).mlp, 32 * 3 * 4096 * 12288);
    assert!(!arch.tied_embeddings);
    // Both wrappers take `tie_word_embeddings` (False by default); a text config that writes its
    // own keeps it.
    for (model_type, text_type) in [("qwen3_5", "qwen3_5_text"), ("qwen3_5_moe", "qwen3_5_moe_text")] {
        let tied = serde_json::json!({"model_type": model_type, "tie_word_embeddings": true,
            "text_config": {"model_type": text_type}});
        assert!(hf::import_value(&tied).unwrap().arch.tied_embeddings, "{model_type}");
        let mut own = tied.clone();
        own["text_config"]["tie_word_embeddings"] = serde_json::json!(false);
        assert!(!hf::import_value(&own).unwrap().arch.tied_embeddings, "{model_type}");
    }
}

/// Gemma 2 as transformers builds it (`Gemma2DecoderLayer`: q, k, v, o without biases; a norm
/// before and after attention and before and after the MLP; a GeLU-gated MLP of gate, up and down;
/// tied embeddings; every other layer through a 4,096-token window). The non-embedding parameters
/// are the Gemma 2 report's (Gemma Team 2024, arXiv 2408.00118, Table 1): 2,024,517,888 (2B),
/// 8,324,201,984 (9B), 26,047,480,320 (27B); its embedding counts 256,128 rows, the configs'
/// vocabulary 256,000. The 2B's shape is `Gemma2Config`'s defaults, so a config of its type alone
/// reads as it.
#[test]
fn gemma_2_counts_as_its_report_does() {
    for (shape, non_embedding, h) in [
        (r#""model_type": "gemma2""#, 2_024_517_888u64, 2_304u64),
        (
            r#""model_type": "gemma2", "hidden_size": 3584, "intermediate_size": 14336, "num_hidden_layers": 42, "num_attention_heads": 16, "num_key_value_heads": 8, "head_dim": 256, "sliding_window": 4096"#,
            8_324_201_984,
            3_584,
        ),
        (
            r#""model_type": "gemma2", "hidden_size": 4608, "intermediate_size": 36864, "num_hidden_layers": 46, "num_attention_heads": 32, "num_key_value_heads": 16, "head_dim": 128, "sliding_window": 4096"#,
            26_047_480_320,
            4_608,
        ),
    ] {
        let read = hf::import(&format!("{{{shape}}}")).unwrap();
        assert!(read.warnings.is_empty(), "{:?}", read.warnings);
        let arch = &read.arch;
        assert_eq!(arch.family, Family::Gemma2);
        let counts = model::count_params(arch);
        assert_eq!(counts.total() - 256_000 * h, non_embedding, "{shape}");
        assert!(arch.tied_embeddings);
        let window = arch.sliding_window.unwrap();
        assert_eq!((window.size, window.full_every), (4_096, 2));
    }
}

/// Gemma 3's text model (`Gemma3DecoderLayer`: Gemma 2's layer with q/k norms of the head's width;
/// five windowed layers to each full one). Gemma-3-1B's config (google/gemma-3-1b-pt: 262,144
/// tokens, width 1,152, 26 layers, 4 heads and 1 key/value head of 256, MLP 6,912, a 512-token
/// window, `sliding_window_pattern` 6), counted by hand: embedding V·h, tied; per layer q and o
/// h·1,024 each, k and v h·256 each, two q/k norms of 256, four norms of h, the MLP 3·h·6,912; the
/// final norm. 999,885,952 parameters: the Gemma 3 report's 302 M embedding and 698 M non-embedding
/// (Gemma Team 2025, arXiv 2503.19786, Table 1). Its layers 6, 12, 18 and 24 attend to the whole
/// sequence; a wrapper's `text_config` reads alike, and `layer_types` where written wins.
#[test]
fn gemma_3_counts_its_qk_norms_and_windows_five_layers_in_six() {
    let one_b = r#"{"model_type": "gemma3_text", "vocab_size": 262144, "hidden_size": 1152, "intermediate_size": 6912, "num_hidden_layers": 26, "num_attention_heads": 4, "num_key_value_heads": 1, "head_dim": 256, "sliding_window": 512, "sliding_window_pattern": 6, "max_position_embeddings": 32768, "rope_theta": 1000000, "rope_local_base_freq": 10000, "query_pre_attn_scalar": 256}"#;
    let read = hf::import(one_b).unwrap();
    assert!(read.warnings.is_empty(), "{:?}", read.warnings);
    let (v, h) = (262_144u64, 1_152u64);
    let layer = 2 * h * 1_024 + 2 * h * 256 + 2 * 256 + 4 * h + 3 * h * 6_912;
    let counts = model::count_params(&read.arch);
    assert_eq!(counts.total(), v * h + 26 * layer + h);
    assert_eq!(counts.total(), 999_885_952);
    assert_eq!(((v * h) as f64 / 1e6).round(), 302.0);
    assert_eq!(((26 * layer + h) as f64 / 1e6).round(), 698.0);
    let window = read.arch.sliding_window.unwrap();
    assert_eq!((window.size, window.full_every, window.windowed_layers(26)), (512, 6, 22));
    // In a `gemma3` wrapper, its text_config; `layer_types` written instead of the pattern.
    let mut wrapped: serde_json::Value = serde_json::json!({"model_type": "gemma3", "text_config": serde_json::from_str::<serde_json::Value>(one_b).unwrap()});
    let kinds: Vec<&str> =
        (0..26).map(|i| if (i + 1) % 2 == 0 { "full_attention" } else { "sliding_attention" }).collect();
    wrapped["text_config"]["layer_types"] = serde_json::json!(kinds);
    let read = hf::import_value(&wrapped).unwrap();
    assert_eq!(read.warnings, [ImportWarning::TextConfig("gemma3".to_owned())]);
    assert_eq!(model::count_params(&read.arch).total(), 999_885_952);
    assert_eq!(read.arch.sliding_window.unwrap().full_every, 2);
}

/// DeepSeek-V3.2-Exp's config.json is DeepSeek-V3's with its own type and the indexer's keys
/// (`index_n_heads` 64, `index_head_dim` 128, `index_topk` 2,048): read as DeepSeek-V3's
/// architecture, the same counts as the catalog's DeepSeek-V3, and its lightning indexer named with
/// its size, counted by hand from DeepSeek's `Indexer` (inference/model.py for V3.2-Exp, as
/// transformers' `DeepseekV32Indexer` builds it): `wq_b` 1,536 → 64 × 128, `wk` 7,168 → 128,
/// `k_norm` a LayerNorm of 128 (weight and bias), `weights_proj` 7,168 → 64, in each of the 61
/// layers and the MTP layer.
#[test]
fn deepseek_v3_2_reads_as_v3_and_names_its_indexer() {
    let mut config: serde_json::Value = serde_json::from_str(catalog_config("deepseek-v3")).unwrap();
    config["model_type"] = serde_json::json!("deepseek_v32");
    config["index_n_heads"] = serde_json::json!(64);
    config["index_head_dim"] = serde_json::json!(128);
    config["index_topk"] = serde_json::json!(2048);
    let read = hf::import_value(&config).unwrap();
    let v3 = hf::import(catalog_config("deepseek-v3")).unwrap().arch;
    assert_eq!(read.arch, v3);
    let per_layer = 1536 * 64 * 128 + 7168 * 128 + 2 * 128 + 7168 * 64;
    assert_eq!(per_layer, 13_959_424);
    assert_eq!(read.warnings, [ImportWarning::Indexer { params: 62 * per_layer }]);
    // The indexer's keys left out take `DeepseekV32Config`'s defaults, the same 64 heads of 128.
    let mut bare = config.clone();
    bare.as_object_mut().unwrap().retain(|k, _| !k.starts_with("index_"));
    assert_eq!(hf::import_value(&bare).unwrap().warnings, read.warnings);
    // Keys at the importer's bounds count without overflowing (2^54 a layer's `wq_b` alone).
    let mut huge = config.clone();
    huge["index_n_heads"] = serde_json::json!(1 << 14);
    huge["index_head_dim"] = serde_json::json!(1 << 20);
    huge["q_lora_rank"] = serde_json::json!(1 << 20);
    let per_layer: u128 = (1 << 54) + 7168 * (1 << 20) + 2 * (1 << 20) + 7168 * (1 << 14);
    let params = u64::try_from(62 * per_layer).unwrap_or(u64::MAX);
    assert_eq!(hf::import_value(&huge).unwrap().warnings, [ImportWarning::Indexer { params }]);
}

/// GLM-4.5V's config wraps a GLM-4.5-Air language model (`Glm4vMoeConfig`: `text_config` of type
/// `glm4v_moe_text`, a `vision_config`): read as GLM-4.5's MoE decoder (`Glm4vMoeTextAttention` is
/// `Glm4Attention`, biased q, k and v without q/k norms; GLM-4.5's MoE and layers), where it had
/// been an unknown Llama-like type. With GLM-4.5-Air's own keys it counts as the catalog's
/// GLM-4.5-Air, its vision encoder (GLM-4.1V's, `Glm4vMoeVisionModel` being `Glm4vVisionModel`)
/// beside it. A key left out takes the text class's default (a vocabulary of 151,424, not
/// GLM-4.5's 151,552).
#[test]
fn glm_4_5v_reads_glm_4_5s_decoder_from_its_text_config() {
    let mut text: serde_json::Value = serde_json::from_str(catalog_config("glm-4.5-air")).unwrap();
    text["model_type"] = serde_json::json!("glm4v_moe_text");
    let wrapper = serde_json::json!({"model_type": "glm4v_moe", "text_config": text.clone(),
        "vision_config": {"depth": 24, "hidden_size": 1536, "out_hidden_size": 4096}});
    let read = hf::import_value(&wrapper).unwrap();
    let air = hf::import(catalog_config("glm-4.5-air")).unwrap().arch;
    assert_eq!(read.arch, model::Architecture { vision: read.arch.vision.clone(), ..air });
    // The encoder with `Glm4vVisionConfig`'s other defaults: GLM-4.1V-9B's, counted below.
    let params = GLM_4_1V_ENCODER;
    assert_eq!(read.arch.vision_params(), params);
    assert_eq!(read.warnings, [ImportWarning::VisionEncoder { model_type: "glm4v_moe".to_owned(), params }]);
    let mut bare = wrapper.clone();
    bare["text_config"].as_object_mut().unwrap().remove("vocab_size");
    assert_eq!(hf::import_value(&bare).unwrap().arch.vocab_size, 151_424);
}

/// GLM-4.1V-9B's vision encoder, by hand from transformers `models/glm4v/modeling_glm4v.py` with
/// `Glm4vVisionConfig`'s defaults (width 1,536, 24 blocks, `out_hidden_size` 4,096,
/// `intermediate_size` 13,696, 336-pixel images in patches of 14, no attention bias): 576 learned
/// positions, the Conv3d patch embedding with its bias, each block's two RMSNorms, `qkv`, `proj`
/// and a gated MLP through 4,096, the two RMSNorms around the blocks, the 2 × 2 Conv2d
/// downsample with its bias, and the merger (a linear of 4,096, a LayerNorm, a gated MLP through
/// 13,696).
const GLM_4_1V_ENCODER: u64 = {
    let (e, o, i) = (1536, 4096, 13696);
    let positions = 24 * 24 * e;
    let conv = 3 * 2 * 14 * 14 * e + e;
    let block = 2 * e + 3 * e * e + e * e + 3 * e * o;
    let downsample = 4 * e * o + o;
    let merger = o * o + 2 * o + 3 * o * i;
    positions + conv + 24 * block + 2 * e + downsample + merger
};

/// GLM-4.1V-9B-Thinking's config writes its language model at the top, beside its
/// `vision_config` (`Glm4vConfig` builds the text config from those keys): read as GLM-4-0414's
/// decoder (biased q, k and v, a fused gate and up projection, four RMSNorms a layer), 9,400,279,040
/// parameters, and its encoder of 892,498,432 beside them: 10.29 B together, the model card's
/// 10.3 B. The same language model under a `text_config` of type `glm4v_text` reads alike.
#[test]
fn glm_4_1v_reads_glm_4s_decoder_and_its_encoder() {
    let config = serde_json::json!({"architectures": ["Glm4vForConditionalGeneration"], "model_type": "glm4v",
        "attention_bias": true, "hidden_act": "silu", "hidden_size": 4096, "intermediate_size": 13696,
        "max_position_embeddings": 65536, "num_attention_heads": 32, "num_hidden_layers": 40,
        "num_key_value_heads": 2, "partial_rotary_factor": 0.5, "rms_norm_eps": 1e-05, "rope_theta": 10000.0,
        "tie_word_embeddings": false, "vocab_size": 151552,
        "vision_config": {"attention_bias": false, "depth": 24, "hidden_act": "silu", "hidden_size": 1536,
            "image_size": 336, "in_channels": 3, "intermediate_size": 13696, "model_type": "glm4v",
            "num_heads": 12, "out_hidden_size": 4096, "patch_size": 14, "rms_norm_eps": 1e-05,
            "spatial_merge_size": 2, "temporal_patch_size": 2}});
    let read = hf::import_value(&config).unwrap();
    assert_eq!(read.arch.family, model::Family::Glm4);
    assert!(read.arch.post_norms && read.arch.mlp.fused_gate_up);
    // Per layer: q (4,096 + bias), k and v (256 each + bias), o, the fused MLP, four norms.
    let layer = (4096 * 4096 + 4096) + 2 * (4096 * 256 + 256) + 4096 * 4096 + 3 * 4096 * 13696 + 4 * 4096;
    let lm = 40 * layer + 4096 + 2 * 151552 * 4096;
    assert_eq!(lm, 9_400_279_040);
    assert_eq!(model::count_params(&read.arch).total(), lm);
    assert_eq!(GLM_4_1V_ENCODER, 892_498_432);
    assert_eq!(read.arch.vision_params(), GLM_4_1V_ENCODER);
    assert_eq!(
        read.warnings,
        [ImportWarning::VisionEncoder { model_type: "glm4v".to_owned(), params: GLM_4_1V_ENCODER }]
    );
    // Under a text_config of its text class's type.
    let mut text = config.as_object().unwrap().clone();
    let vision = text.remove("vision_config").unwrap();
    text.insert("model_type".to_owned(), serde_json::json!("glm4v_text"));
    let wrapped = serde_json::json!({"model_type": "glm4v", "text_config": text, "vision_config": vision});
    assert_eq!(hf::import_value(&wrapped).unwrap().arch, read.arch);
}
