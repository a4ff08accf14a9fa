//! Exact parameter counts against values published by others, for every catalog model.

use LoraScope::{Hf, Megatron};
use trainplan_core::model::{self, LoraScope, LoraTarget};
use trainplan_core::{catalog, hf};

/// One catalog model's expected counts and where they come from.
struct Row {
    id: &'static str,
    total: u64,
    source: &'static str,
}

/// Totals equal to HF transformers' `num_parameters()`, each from a source independent of this code.
/// "keras-hub" is keras-team/keras-hub `keras_hub/src/models/*/..._presets.py` `"params"`; "index" is the
/// repo's `model.safetensors.index.json` `total_size` divided by the bytes per element; "HF API" is the
/// Hub's `safetensors.total`. Where a checkpoint stores more than transformers instantiates (rotary
/// `inv_freq` in Llama-2, GPT-2's causal-mask buffers, Qwen3's untied copy of a tied head), the row says so.
const ROWS: &[Row] = &[
    Row {
        id: "gpt2",
        total: 124_439_808,
        source: "keras-hub gpt2_base_en; Hub total 137,022,720 adds 12 × 1024² mask buffers",
    },
    Row { id: "gpt2-xl", total: 1_557_611_200, source: "keras-hub gpt2_extra_large_en" },
    Row {
        id: "qwen2.5-0.5b",
        total: 494_032_768,
        source: "keras-hub qwen2.5_0.5b_en; safetensors header: 290 tensors, 494,032,768 elements",
    },
    Row {
        id: "qwen3-0.6b",
        total: 596_049_920,
        source: "keras-hub qwen3_0.6b_en; `sum(p.numel())` printout (Hub 751,632,384 stores lm_head untied)",
    },
    Row {
        id: "llama-3.2-1b",
        total: 1_235_814_400,
        source: "Hub totalParameters for meta-llama/Llama-3.2-1B",
    },
    Row { id: "qwen2.5-1.5b", total: 1_543_714_304, source: "HF model_info safetensors.total" },
    Row {
        id: "deepseek-r1-distill-qwen-1.5b",
        total: 1_543_714_304 + 151_936 * 1_536,
        source: "Qwen2.5-1.5B's (HF model_info) and its head untied, 151,936 × 1,536",
    },
    Row { id: "qwen3-1.7b", total: 1_720_574_976, source: "keras-hub qwen3_1.7b_en" },
    Row {
        id: "qwen2.5-3b",
        total: 3_100_905_472 - 14_966_784,
        source: "keras-hub qwen2.5_3b_en (3,085,938,688 = PEFT's all 3,100,905,472 − trainable 14,966,784 at LoRA r 8)",
    },
    Row {
        id: "llama-3.2-3b",
        total: 3_212_749_824,
        source: "HF API safetensors BF16 for Llama-3.2-3B-Instruct",
    },
    Row {
        id: "phi-3.5-mini",
        total: 3_821_079_552,
        source: "the Hub API's count for microsoft/Phi-3.5-mini-instruct: 3,821,079,552; Phi-3-mini's index \
                 total_size on the same shape, 7,642,159,104 B, is twice it",
    },
    Row {
        id: "phi-4-mini",
        total: 3_836_021_760,
        source: "the Hub API's safetensors count for microsoft/Phi-4-mini-instruct (revision cfbefac): \
                 3,836,021,760 BF16, tied head",
    },
    Row {
        id: "qwen3-4b",
        total: 4_022_468_096,
        source: "keras-hub qwen3_4b_en; GGUF general.parameter_count",
    },
    Row {
        id: "llama-2-7b",
        total: 6_738_415_616,
        source: "Together SDK model_param_count; keras-hub llama2_7b_en (Hub adds 2,048 inv_freq)",
    },
    Row {
        id: "deepseek-llm-7b",
        // Each rank's norms (two a layer, the final one on the last stage) are whole on all 4 TP ranks.
        total: 4 * (863_887_360 + 863_891_456) - 3 * (30 * 2 + 1) * 4_096,
        source: "Megatron-LM's count of each rank's parameters, printed in a VeRL run of deepseek-llm-7b-chat at \
                 TP 4 × PP 2: rank (3, 0) 863,887,360, rank (3, 1) 863,891,456",
    },
    Row {
        id: "mistral-7b-v0.1",
        total: 7_241_732_096,
        source: "keras-hub mistral_7b_en; index 14,483,464,192 B / 2",
    },
    Row { id: "mistral-7b-v0.3", total: 7_248_023_552, source: "keras-hub mistral_0.3_7b_en" },
    Row {
        id: "qwen2-7b",
        total: 15_231_233_024 / 2,
        source: "Qwen2.5-7B's shape (index of Qwen2.5-7B-Instruct: 15,231,233,024 B bf16): the Qwen2 report's Table 1 \
                 (arXiv:2407.10671) gives both the same sizes, and their config.json the same keys",
    },
    Row {
        id: "qwen2.5-7b",
        total: 15_231_233_024 / 2,
        source: "index of Qwen2.5-7B-Instruct: 15,231,233,024 B bf16",
    },
    Row {
        id: "qwen2.5-coder-7b",
        total: 7_615_616_512,
        source: "llama.cpp n_params of Qwen2.5-Coder-7B-Instruct",
    },
    Row {
        id: "qwen2.5-math-7b",
        total: 15_231_233_024 / 2,
        source: "Qwen2.5-7B's shape (index of Qwen2.5-7B-Instruct: 15,231,233,024 B bf16); only its 4,096 positions \
                 and rope_theta differ",
    },
    Row {
        id: "deepseek-r1-distill-qwen-7b",
        total: 15_231_233_024 / 2,
        source: "Qwen2.5-7B's shape (index of Qwen2.5-7B-Instruct: 15,231,233,024 B bf16); only rope_theta differs",
    },
    Row {
        id: "llama-3-8b",
        total: 16_060_522_496 / 2,
        source: "index of Meta-Llama-3-8B: 16,060,522,496 B bf16; keras-hub llama3_8b_en",
    },
    Row { id: "llama-3.1-8b", total: 8_030_261_248, source: "HF API safetensors.total, rev d04e592b" },
    Row {
        id: "deepseek-r1-distill-llama-8b",
        total: 8_030_261_248,
        source: "Llama-3.1-8B's shape (HF API), its base; litgpt's config of the distill has the same",
    },
    Row {
        id: "qwen3-8b",
        total: 8_190_735_360,
        source: "keras-hub qwen3_8b_en; transformers run `PARAMS 8190735360`",
    },
    Row {
        id: "glm-4-9b",
        total: 9_399_951_360,
        source: "glm-4-9b-chat load printout: 9,399,951,360 trainable; chatllm.cpp",
    },
    Row {
        id: "llama-2-13b",
        total: 13_015_864_320,
        source: "index metadata total_parameters 13,015,864,320; Together SDK",
    },
    Row {
        id: "mistral-nemo",
        total: 24_495_564_800 / 2,
        source: "index of Mistral-Nemo-Instruct-2407 24,495,564,800 B bf16 (363 tensors); 12,247,782,400 at rev 04d8a905",
    },
    Row {
        id: "phi-4",
        total: 14_659_507_200,
        source: "the Hub API's safetensors count for microsoft/phi-4 (revision 2db69c1): 14,659,507,200 BF16; \
                 its index's total_size 29,319,014,400 B is twice it",
    },
    Row {
        id: "qwen2.5-14b",
        total: 14_770_033_664,
        source: "GGUF general.parameter_count; payload 29,540,067,328 B / 2",
    },
    Row {
        id: "qwen2.5-coder-14b",
        total: 14_770_033_664,
        source: "llama.cpp n_params of Qwen2.5-Coder-14B-Instruct (vocab 152064)",
    },
    Row {
        id: "deepseek-r1-distill-qwen-14b",
        total: 29_540_067_328 / 2,
        source: "Qwen2.5-14B's shape (its GGUF payload 29,540,067,328 B bf16), its base: derived copies of the distill's \
                 config give the same sizes; its four shards, 8.71 + 8.67 + 8.67 + 3.49 GB, agree",
    },
    Row {
        id: "mistral-small-24b",
        total: 47_144_806_400 / 2,
        source: "index of Mistral-Small-24B-Instruct-2501 47,144,806,400 B bf16; Hub count of unsloth's copy 23,572,403,200",
    },
    Row { id: "qwen3-14b", total: 14_768_307_200, source: "keras-hub qwen3_14b_en" },
    Row {
        id: "qwen2.5-32b",
        total: 32_763_876_352,
        source: "keras-hub qwen2.5_instruct_32b_en; 771 tensors, 65,527,752,704 B",
    },
    Row {
        id: "qwen2.5-coder-32b",
        total: 32_763_876_352,
        source: "Qwen2.5-32B's shape (65,527,752,704 B bf16); a model gateway's parameter_size 32,763,876,352",
    },
    Row {
        id: "deepseek-r1-distill-qwen-32b",
        total: 32_763_876_352,
        source: "HF API safetensors parameters BF16 32,763,876,352 of deepseek-ai/DeepSeek-R1-Distill-Qwen-32B",
    },
    Row {
        id: "qwq-32b",
        total: 32_763_876_352,
        source: "a load printout of QwQ-32B's 14 safetensors files: 32,763,876,352 parameters; Qwen2.5-32B's shape",
    },
    Row { id: "qwen3-32b", total: 32_762_123_264, source: "keras-hub qwen3_32b_en" },
    Row {
        id: "llama-2-70b",
        total: 68_976_648_192,
        source: "Together SDK; LoRAM paper table (Hub adds 5,120 inv_freq)",
    },
    Row {
        id: "llama-3-70b",
        total: 141_107_412_992 / 2,
        source: "index of the same-shape Llama-3.1-70B: 141,107,412,992 B bf16",
    },
    Row { id: "llama-3.1-70b", total: 70_553_706_496, source: "HF API safetensors.total, rev 349b2ddb" },
    Row { id: "llama-3.3-70b", total: 70_553_706_496, source: "HF API safetensors.total, rev 6f6073b4" },
    Row {
        id: "deepseek-r1-distill-llama-70b",
        total: 70_553_706_496,
        source: "Llama-3.1-70B's shape (HF API), as Llama-3.3-70B-Instruct, its base, has it",
    },
    Row {
        id: "qwen2-72b",
        total: 145_412_407_296 / 2,
        source: "Qwen2.5-72B's shape (index of Qwen2.5-72B-Instruct: 145,412,407,296 B bf16): the Qwen2 report's \
                 Table 1 (arXiv:2407.10671) gives both the same sizes; only the norm's epsilon differs",
    },
    Row {
        id: "qwen2.5-72b",
        total: 145_412_407_296 / 2,
        source: "index of Qwen2.5-72B-Instruct: 145,412,407,296 B bf16; keras-hub",
    },
    Row {
        id: "llama-3.1-405b",
        total: 405_853_388_800,
        source: "HF API safetensors.total, rev b906e4dc (num_key_value_heads 8)",
    },
    Row { id: "mixtral-8x7b", total: 93_405_585_408 / 2, source: "index 93,405,585,408 B bf16; keras-hub" },
    Row {
        id: "mixtral-8x22b",
        total: 281_241_268_224 / 2,
        source: "checkpoint tensor bytes 281,241,268,224 bf16 (vocab 32000)",
    },
    Row {
        id: "qwen1.5-moe-a2.7b",
        total: 28_631_568_384 / 2,
        source: "index 28,631,568,384 B bf16; keras-hub; chatllm.cpp",
    },
    Row { id: "qwen2-57b-a14b", total: 57_408_658_944, source: "HF API fixture (one source only)" },
    Row { id: "qwen3-30b-a3b", total: 61_064_245_248 / 2, source: "index 61,064,245,248 B bf16; keras-hub" },
    Row {
        id: "qwen3-coder-30b-a3b",
        total: 61_064_245_248 / 2,
        source: "index of Qwen3-Coder-30B-A3B-Instruct 61,064,245,248 B bf16; GGUF total 30,532,122,624",
    },
    Row {
        id: "qwen3-coder-480b-a35b",
        total: 480_154_875_392,
        source: "HF API safetensors BF16 of Qwen3-Coder-480B-A35B-Instruct, rev 9d90cf8f",
    },
    Row {
        id: "qwen3-235b-a22b",
        total: 470_187_269_120 / 2,
        source: "index 470,187,269,120 B bf16; keras-hub; HF API",
    },
    Row {
        id: "deepseek-v2-lite",
        total: 31_412_968_448 / 2,
        source: "index 31,412,968,448 B bf16; chatllm.cpp",
    },
    Row { id: "deepseek-v2", total: 235_741_434_880, source: "third-party table (one source only)" },
    Row {
        id: "deepseek-v3",
        total: 671_026_419_200 - 58 * 256,
        source: "DeepSeek remote code 671,026,419,200 counts e_score_correction_bias, a buffer in transformers",
    },
    Row {
        id: "qwen3-next-80b-a3b",
        total: 79_674_391_296,
        source: "by hand from transformers' modeling_qwen3_next.py (`qwen3_next_counts_as_its_modeling_code_builds_it`); card: 80B",
    },
    Row {
        id: "deepseek-r1",
        total: 671_026_419_200 - 58 * 256,
        source: "DeepSeek-V3's architecture and config (DeepSeek-R1 README: 671B total, 37B activated, trained on DeepSeek-V3-Base)",
    },
    // The Gemma 2 report (Gemma Team 2024, arXiv 2408.00118), Table 1's non-embedding parameters,
    // and the tied embedding of the configs' 256,000 rows (the table counts 256,128).
    Row {
        id: "gemma-2-2b",
        total: 2_024_517_888 + 256_000 * 2_304,
        source: "Gemma 2 report, Table 1: 2,024,517,888 non-embedding",
    },
    Row {
        id: "gemma-2-9b",
        total: 8_324_201_984 + 256_000 * 3_584,
        source: "Gemma 2 report, Table 1: 8,324,201,984 non-embedding",
    },
    Row {
        id: "gemma-2-27b",
        total: 26_047_480_320 + 256_000 * 4_608,
        source: "Gemma 2 report, Table 1: 26,047,480,320 non-embedding",
    },
];

/// Models whose publishers give their counts rounded, each against its own digits: gpt-oss's model
/// card (arXiv 2508.10925, Table 1: 116.83 B and 20.91 B total; MLP 114.71 B and 19.12 B, attention
/// 0.96 B and 0.64 B, embedding and unembedding 1.16 B), and Kimi K2's card ("1T" total); the
/// exact hand count of gpt-oss-20b is `core/tests/it/hf.rs`'s.
const ROUNDED: [(&str, f64, f64, &str); 4] = [
    (
        "gemma-3-1b",
        1.0,
        0.01,
        "Gemma 3 report (arXiv 2503.19786), Table 1: 302M embedding, 698M non-embedding",
    ),
    ("gpt-oss-20b", 20.91, 0.01, "gpt-oss model card, Table 1"),
    ("gpt-oss-120b", 116.83, 0.01, "gpt-oss model card, Table 1"),
    ("kimi-k2", 1000.0, 100.0, "Kimi-K2 model card: 1T total parameters"),
];

/// Models whose publishers give one rounded figure without saying what it counts (GLM-4.5's card,
/// huggingface.co/zai-org/GLM-4.5: 355B and 106B total; its MTP layer, which transformers does not
/// build, is 4.0 B and 2.4 B): within 1 %. Their exact count by hand from transformers'
/// `modeling_glm4_moe.py` is `core/tests/it/hf.rs`'s (`glm_4_5_counts_as_its_modeling_code_builds_it`).
const NEAR: [(&str, f64, &str); 2] =
    [("glm-4.5", 355.0, "GLM-4.5 card: 355B total"), ("glm-4.5-air", 106.0, "GLM-4.5 card: 106B total")];

#[test]
fn gpt_oss_components_match_the_model_card() {
    for (id, mlp, attention, embeddings) in
        [("gpt-oss-20b", 19.12, 0.64, 1.16), ("gpt-oss-120b", 114.71, 0.96, 1.16)]
    {
        let c = model::count_params(&catalog::model(id).unwrap().arch);
        let billions = |n: u64| (n as f64 / 1e7).round() / 100.0;
        // The card's MLP is the experts with the router.
        assert_eq!(billions(c.experts + c.router), mlp, "{id}: MLP");
        assert_eq!(billions(c.attention), attention, "{id}: attention");
        assert_eq!(billions(c.embedding + c.head), embeddings, "{id}: embedding and unembedding");
    }
}

#[test]
fn every_catalog_model_has_its_published_count() {
    for row in ROWS {
        let entry = catalog::model(row.id).unwrap_or_else(|| panic!("{} is not in the catalog", row.id));
        let total = model::count_params(&entry.arch).total();
        assert_eq!(total, row.total, "{}: total parameters (source: {})", row.id, row.source);
    }
    for (id, published_billions, unit, source) in ROUNDED {
        let total = model::count_params(&catalog::model(id).unwrap().arch).total() as f64 / 1e9;
        let rounded = (total / unit).round() * unit;
        assert!((rounded - published_billions).abs() < unit / 2.0, "{id}: {total:.3}B total ({source})");
    }
    for (id, published_billions, source) in NEAR {
        let total = model::count_params(&catalog::model(id).unwrap().arch).total() as f64 / 1e9;
        assert!((total / published_billions - 1.0).abs() < 0.01, "{id}: {total:.3}B total ({source})");
    }
    // Every catalog model is in one of the tables above (or checked apart below: GLM-4.6 with its
    // MTP layer, Moonlight without its embeddings), so none goes unchecked.
    for entry in catalog::models() {
        let listed = ROWS.iter().any(|r| r.id == entry.id)
            || ["glm-4.6", "moonlight-16b-a3b"].contains(&entry.id)
            || ROUNDED.iter().any(|r| r.0 == entry.id)
            || NEAR.iter().any(|r| r.0 == entry.id);
        assert!(listed, "{} has no published count", entry.id);
    }
    assert!(30 <= catalog::models().len());
}

/// Active parameters per token, against the publishers' rounded figures (the only published form).
#[test]
fn moe_active_parameters_match_the_model_cards() {
    // Publishers round or truncate to their last digit; the count must lie within one unit of it.
    // `active` includes the embedding and head, as Mistral and Qwen count; DeepSeek's README counts
    // 36.6B without the input embedding (0.93B), which is checked apart.
    for (id, published_billions, unit, source) in [
        ("mixtral-8x7b", 12.9, 0.1, "Mistral: 12.9B active"),
        ("mixtral-8x22b", 39.0, 1.0, "Mistral: 39B active"),
        ("qwen1.5-moe-a2.7b", 2.7, 0.1, "Qwen1.5-MoE card: 2.7B activated"),
        ("qwen3-30b-a3b", 3.3, 0.1, "Qwen3 card: 3.3B activated"),
        ("qwen3-coder-30b-a3b", 3.3, 0.1, "Qwen3-Coder-30B-A3B card: 3.3B activated"),
        ("qwen3-coder-480b-a35b", 35.0, 1.0, "Qwen3-Coder-480B-A35B card: 35B activated"),
        ("qwen3-235b-a22b", 22.0, 1.0, "Qwen3 card: 22B activated"),
        ("qwen2-57b-a14b", 14.0, 1.0, "Qwen2 card: A14B"),
        ("deepseek-v2", 21.0, 1.0, "DeepSeek-V2 paper: 21B activated"),
        ("deepseek-v3", 37.0, 1.0, "DeepSeek-V3 paper: 37B activated"),
        ("kimi-k2", 32.0, 1.0, "Kimi-K2 card: 32B activated"),
    ] {
        let arch = &catalog::model(id).unwrap().arch;
        let active = model::count_params(arch).active as f64 / 1e9;
        assert!((active - published_billions).abs() < unit, "{id}: {active:.3}B active ({source})");
    }
    // gpt-oss's card counts the unembedding but not the embedding: 5.13 B and 3.61 B active.
    for (id, published) in [("gpt-oss-120b", 5.13), ("gpt-oss-20b", 3.61)] {
        let arch = &catalog::model(id).unwrap().arch;
        let active = model::count_params(arch).active - arch.vocab_size * arch.hidden_size;
        assert_eq!((active as f64 / 1e7).round() / 100.0, published, "{id}: active (gpt-oss model card)");
    }
    let v3 = &catalog::model("deepseek-v3").unwrap().arch;
    let without_input_embedding = model::count_params(v3).active - v3.vocab_size * v3.hidden_size;
    assert_eq!((without_input_embedding as f64 / 1e8).round() / 10.0, 36.6, "DeepSeek-V3 README_WEIGHTS");
}

#[test]
fn deepseek_v3_mtp_is_counted_apart() {
    // The Hub's safetensors API for deepseek-ai/DeepSeek-V3 ("685B") lists F8_E4M3 680,571,043,840 and
    // BF16 3,918,786,560 weight elements (F32 holds only block scales and routing biases). They are the
    // 671B main model, the MTP layer, and the MTP layer's own copies of the embedding and head.
    let arch = &catalog::model("deepseek-v3").unwrap().arch;
    let c = model::count_params(arch);
    let copies = 2 * arch.vocab_size * arch.hidden_size;
    assert_eq!(c.total() + c.mtp + copies, 680_571_043_840 + 3_918_786_560);
}

/// The Hub's safetensors count for zai-org/GLM-4.6 (356,785,898,816) holds what transformers does not
/// build: the MTP layer, and each MoE router's `e_score_correction_bias` (a buffer in
/// `modeling_glm4_moe.py`), 160 in each of the 89 MoE layers and the MTP layer.
#[test]
fn glm_4_6_counts_with_its_mtp_layer_as_the_hub() {
    let c = model::count_params(&catalog::model("glm-4.6").unwrap().arch);
    assert_eq!(c.total() + c.mtp + 90 * 160, 356_785_898_816);
}

/// Moonlight-16B-A3B's published 15.29B total and 2.24B activated parameters count neither its
/// embedding nor its head (ai-tldr.dev/models/moonlight-16b-a3b, after Moonshot's release; its
/// name's "16B" and "A3B" count them); the catalog's counts, less both, round to them.
#[test]
fn moonlight_counts_as_published_without_its_embeddings() {
    let arch = &catalog::model("moonlight-16b-a3b").unwrap().arch;
    let c = model::count_params(arch);
    let tables = 2 * arch.vocab_size * arch.hidden_size;
    let billions = |n: u64| (n as f64 / 1e7).round() / 100.0;
    assert_eq!(billions(c.total() - tables), 15.29);
    assert_eq!(billions(c.active - tables), 2.24);
}

#[test]
fn components_sum_to_total_and_layers_add_up() {
    for entry in catalog::models() {
        let c = model::count_params(&entry.arch);
        let sum =
            c.embedding + c.attention + c.mlp + c.experts + c.shared_experts + c.router + c.norms + c.head;
        assert_eq!(sum, c.total(), "{}", entry.id);
        let layers: u64 =
            model::layer_counts(&entry.arch).iter().map(|l| l.n_layers * l.params_per_layer).sum();
        // Layers hold everything but embedding, positions, head and the final norm.
        let final_norm = match entry.arch.norm {
            trainplan_core::model::Norm::Rms => entry.arch.hidden_size,
            trainplan_core::model::Norm::Layer => 2 * entry.arch.hidden_size,
        };
        assert_eq!(layers + c.embedding + c.head + final_norm, c.total(), "{}", entry.id);
        assert_eq!(c.head == 0, entry.arch.tied_embeddings, "{}", entry.id);
        assert!(c.active <= c.total(), "{}", entry.id);
        assert_eq!(c.active == c.total(), entry.arch.moe.is_none(), "{}", entry.id);
    }
}

#[test]
fn llama_2_7b_layer_by_hand() {
    // 4·h² attention + 3·h·i MLP + 2·h norms, with h = 4096, i = 11008: an exact count by hand.
    let layers = model::layer_counts(&catalog::model("llama-2-7b").unwrap().arch);
    assert_eq!(layers.len(), 1);
    assert_eq!(layers[0].params_per_layer, 4 * 4096 * 4096 + 3 * 4096 * 11008 + 2 * 4096);
}

#[track_caller]
fn check_lora(id: &str, rank: u64, targets: &[LoraTarget], scope: LoraScope, expected: u64) {
    let arch = &catalog::model(id).unwrap().arch;
    assert_eq!(
        model::lora_params(arch, rank, targets, scope),
        expected,
        "{id} r={rank} {targets:?} {scope:?}"
    );
}

#[test]
fn lora_trainable_parameters_match_peft_printouts() {
    use LoraTarget::*;
    let all = LoraTarget::ALL;
    // Qwen2.5-3B, lora_target all, r 8: 36 layers × 8 × (q 2048+2048, k 2048+256, v 2048+256, o 2048+2048,
    // gate/up/down 3 × (2048+11008)) = 14,966,784, PEFT's "trainable params" over keras-hub's 3,085,938,688.
    check_lora("qwen2.5-3b", 8, &all, Hf, 14_966_784);
    // LLaMA-Factory logs, Llama-3-8B, r 8, "Found linear modules: q_proj,v_proj,k_proj,down_proj,up_proj,
    // o_proj,gate_proj": "trainable params: 20,971,520 || all params: 8,051,232,768".
    check_lora("llama-3-8b", 8, &all, Hf, 20_971_520);
    check_lora("llama-3-8b", 8, &[Q, K, V, O, Gate, Up, Down], Hf, 20_971_520);
    // PEFT's classic example, Llama-2-7B, r 8, q_proj and v_proj:
    // "trainable params: 4,194,304 || all params: 6,742,609,920".
    check_lora("llama-2-7b", 8, &[Q, V], Hf, 4_194_304);
    // PEFT printouts, Llama-2-7B, r 8, all seven projections: "all params: 6,758,404,096".
    check_lora("llama-2-7b", 8, &all, Hf, 6_758_404_096 - 6_738_415_616);
    // GPT-2 with c_attn, r 8: one fused adapter per layer, 12 × 8 × (768 + 2304) (exact count).
    check_lora("gpt2", 8, &[Qkv], Hf, 12 * 8 * (768 + 2304));
    // Phi-3's fused `qkv_proj` and `gate_up_proj` (transformers `Phi3Attention`, `Phi3MLP`) are one
    // adapter each. PEFT printouts: Phi-4, r 8, ["o_proj", "qkv_proj"]: "trainable params: 7,372,800
    // || all params: 14,666,880,000" (datawhalechina/self-llm, models/phi4/04-Phi-4-Lora 微调.ipynb);
    // Phi-4-mini-instruct, r 16, "all-linear": "trainable params: 23,068,672 || all params:
    // 3,859,090,432" (arvindsuresh-math/Aug-2025-Math-Solution-Classifier,
    // notebooks/modelling/error-detection.ipynb); Phi-4-mini, r 32, of its listed names only
    // "down_proj" matched: "trainable params: 11,534,336" (shashuat/multilingual-summarization,
    // docs/docs.md). Each "all params" less its trainable ones is the catalog's count.
    check_lora("phi-4", 8, &[O, QkvProj], Hf, 7_372_800);
    assert_eq!(
        model::count_params(&catalog::model("phi-4").unwrap().arch).total() + 7_372_800,
        14_666_880_000
    );
    check_lora("phi-4-mini", 16, &all, Hf, 23_068_672);
    check_lora("phi-4-mini", 16, &[QkvProj, O, GateUp, Down], Hf, 23_068_672);
    check_lora("phi-4-mini", 32, &[Down], Hf, 11_534_336);
    // Llama's separate projections are no module of Phi-3's.
    check_lora("phi-4-mini", 8, &[Q, K, V, Gate, Up], Hf, 0);
    // LoRA scales linearly with the rank.
    check_lora("qwen2.5-3b", 16, &all, Hf, 2 * 14_966_784);
}

#[test]
fn lora_on_moe_adapts_every_expert_under_megatron() {
    // Mixtral-8x7B, r 8, experts' gate/up/down: 32 layers × 8 experts × 3 adapters × 8 × (4096 + 14336)
    // (exact count: Megatron's LoRA wraps each expert's projections); the router adds 32 × 8 × (4096 + 8).
    use LoraTarget::*;
    let experts = 32 * 8 * 3 * 8 * (4096 + 14336);
    check_lora("mixtral-8x7b", 8, &[Gate, Up, Down], Megatron, experts);
    check_lora("mixtral-8x7b", 8, &[Gate, Up, Down, Router], Megatron, experts + 32 * 8 * (4096 + 8));
    // MLA targets exist only where MLA is.
    check_lora("llama-3-8b", 8, &[QA, QB, KvA, KvB], Megatron, 0);
    let v3 = &catalog::model("deepseek-v3").unwrap().arch;
    assert!(0 < model::lora_params(v3, 8, &[QA, QB, KvA, KvB], Megatron));
}

#[test]
fn lora_under_peft_wraps_no_routed_expert() {
    // Each MoE family instantiated in transformers 5.6.0, LLaMA-Factory 0.9.5's
    // `find_all_linear_modules` (the modules `lora_target: all` wraps) found: Mixtral and Qwen3-MoE
    // q_proj, k_proj, v_proj, o_proj (the experts fused 3-D parameters, the router a `TopKRouter`);
    // DeepSeek-V2 also its `Linear` router `gate`. Exact counts from the catalog's widths.
    use LoraTarget::*;
    let all = LoraTarget::ALL;
    check_lora("mixtral-8x7b", 8, &[Gate, Up, Down, Router], Hf, 0);
    // Mixtral-8x7B: 32 layers × 8 × (q 4096 + 4096, k and v 4096 + 1024, o 4096 + 4096).
    check_lora("mixtral-8x7b", 8, &all, Hf, 32 * 8 * (2 * 8192 + 2 * 5120));
    // Qwen3-30B-A3B: 48 layers × 8 × (q 2048 + 4096, k and v 2048 + 512, o 4096 + 2048).
    check_lora("qwen3-30b-a3b", 8, &all, Hf, 48 * 8 * (6144 + 2 * 2560 + 6144));
    // DeepSeek-V2-Lite (27 layers, the first dense; h 2048, 16 heads; 64 experts of 1408, 2
    // shared): its router Linear(2048, 64) in the 26 MoE layers is wrapped, its experts are not.
    let lite = &catalog::model("deepseek-v2-lite").unwrap().arch;
    let with_router = model::lora_params(lite, 8, &all, Hf);
    let without =
        model::lora_params(lite, 8, &all.iter().copied().filter(|t| *t != Router).collect::<Vec<_>>(), Hf);
    assert_eq!(with_router - without, 26 * 8 * (2048 + 64));
    assert!(without < model::lora_params(lite, 8, &all, Megatron));
}

#[test]
fn catalog_configs_read_without_warnings() {
    for c in catalog::CONFIGS {
        let imported = hf::import(c.config).unwrap_or_else(|e| panic!("{}: {e}", c.id));
        assert!(imported.warnings.is_empty(), "{}: {:?}", c.id, imported.warnings);
        assert!(c.source.ends_with("/config.json"), "{} cites no config", c.id);
        // Its `model_type`, read without parsing it (`catalog::model_type`), is the config's.
        let parsed: serde_json::Value = serde_json::from_str(c.config).unwrap();
        assert_eq!(catalog::model_type(c.config), parsed["model_type"].as_str(), "{}", c.id);
        assert!(catalog::model_type(c.config).is_some(), "{} writes no model_type first", c.id);
        assert!(
            c.id.chars().all(|ch| ch.is_ascii_lowercase() || ch.is_ascii_digit() || ch == '-' || ch == '.'),
            "{} is not lowercase kebab-case",
            c.id
        );
    }
    let mut ids: Vec<_> = catalog::CONFIGS.iter().map(|c| c.id).collect();
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), catalog::CONFIGS.len(), "duplicate catalog ids");
}

/// Qwen3-Next-80B-A3B counted by hand from the shapes transformers' `modeling_qwen3_next.py` builds
/// (h = 2,048; 48 layers, every 4th attention, the others Gated DeltaNet; 512 experts of 512, a
/// shared expert of 512 and its gate): its card's 80B total and 3B activated.
#[test]
fn qwen3_next_counts_as_its_modeling_code_builds_it() {
    let arch = &catalog::model("qwen3-next-80b-a3b").unwrap().arch;
    let c = model::count_params(arch);
    let h: u64 = 2048;
    // `Qwen3NextAttention`: q_proj 16 heads × 256 × 2 (the output gate), k and v 2 × 256, o_proj,
    // q_norm and k_norm of 256.
    let attention = h * 16 * 256 * 2 + 2 * h * 2 * 256 + 16 * 256 * h + 2 * 256;
    // `Qwen3NextGatedDeltaNet`: key_dim 16 × 128, value_dim 32 × 128; in_proj_qkvz, in_proj_ba,
    // conv1d (2·key_dim + value_dim channels × 4), dt_bias, A_log, norm (128), out_proj.
    let (key_dim, value_dim) = (16 * 128, 32 * 128);
    let gdn = h * (2 * key_dim + 2 * value_dim)
        + h * 2 * 32
        + (2 * key_dim + value_dim) * 4
        + 32
        + 32
        + 128
        + value_dim * h;
    assert_eq!(attention, 27_263_488);
    assert_eq!(gdn, 33_718_464);
    assert_eq!(c.attention, 12 * attention + 36 * gdn);
    // `Qwen3NextSparseMoeBlock`: 512 experts (gate, up, down of 512), the router, the shared expert
    // and its gate.
    assert_eq!(c.experts, 48 * 512 * 3 * h * 512);
    assert_eq!(c.router, 48 * h * 512);
    assert_eq!(c.shared_experts, 48 * (3 * h * 512 + h));
    assert_eq!(c.norms, 48 * 2 * h + h);
    assert_eq!(c.embedding + c.head, 2 * 151_936 * h);
    assert_eq!(c.total(), 79_674_391_296);
    // Per layer: the summary's attention layer, and its DeltaNet layer beyond it.
    let summary = model::Summary::of(arch);
    assert_eq!(summary.linear_attention_delta, gdn as i64 - attention as i64);
    // 10 of the 512 experts a token: 3.87B with the embedding and the head, 3.25B without, the
    // card's "3B activated" (A3B).
    let active = c.active - c.embedding - c.head;
    assert_eq!(c.active, c.total() - 48 * 502 * 3 * h * 512);
    assert_eq!((active as f64 / 1e9).floor(), 3.0);
}

/// LoRA on Qwen3.5's Gated DeltaNet adapts four input projections where Qwen3-Next's adapts two:
/// the same weights, and per DeltaNet layer two more adapters' r · h on their inputs (PEFT
/// `lora_A` is `Linear(in, r)`: `in_proj_qkv` and `in_proj_z` against `in_proj_qkvz`, `in_proj_b`
/// and `in_proj_a` against `in_proj_ba`). Megatron's LoRA names none of them.
#[test]
fn lora_on_qwen3_5_adapts_its_split_projections() {
    let wrapper =
        serde_json::json!({"model_type": "qwen3_5_moe", "text_config": {"model_type": "qwen3_5_moe_text"}});
    let split = trainplan_core::hf::import_value(&wrapper).unwrap().arch;
    let mut fused = split.clone();
    fused.linear_attention.as_mut().unwrap().split_in_proj = false;
    assert_eq!(model::count_params(&split), model::count_params(&fused));
    let lora = |arch, scope| model::lora_params(arch, 16, &LoraTarget::ALL, scope);
    assert_eq!(lora(&split, LoraScope::Hf) - lora(&fused, LoraScope::Hf), 30 * 2 * 16 * 2048);
    assert_eq!(lora(&split, LoraScope::Megatron), lora(&fused, LoraScope::Megatron));
}
