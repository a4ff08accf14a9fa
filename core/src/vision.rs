//! A multimodal config's vision encoder (`vision_config`), which the planner leaves out of the plan:
//! its parameters counted from transformers' modules, so that the import says how much it leaves
//! out. Counted for Qwen2-VL and Qwen2.5-VL, whose configs write their language model at the top
//! (or, saved by transformers 5, in a `text_config`) beside the encoder's shape.
//!
//! Qwen2-VL (transformers `models/qwen2_vl/modeling_qwen2_vl.py`, `Qwen2VisionTransformerPretrainedModel`):
//! - `PatchEmbed`: a Conv3d of `in_channels · temporal_patch_size · patch_size² · embed_dim`, no bias;
//! - `depth` × `Qwen2VLVisionBlock`: two LayerNorms of `embed_dim` (weight and bias), the
//!   attention's `qkv` (embed_dim → 3 · embed_dim) and `proj` (embed_dim → embed_dim), the MLP's
//!   `fc1` (embed_dim → ⌊embed_dim · mlp_ratio⌋) and `fc2` back, each linear with its bias;
//! - `PatchMerger`: a LayerNorm of `embed_dim`, then `spatial_merge_size²` patches' features
//!   through a linear to as many and one to `hidden_size` (the language model's width), with biases.
//!
//! Qwen2.5-VL (`models/qwen2_5_vl/modeling_qwen2_5_vl.py`, `Qwen2_5_VisionTransformerPretrainedModel`):
//! the same embedding, of `hidden_size`; blocks of two RMSNorms (weight only), `qkv` and `proj`
//! with biases and a gated MLP (`gate_proj`, `up_proj` of hidden_size → intermediate_size,
//! `down_proj` back, with biases); a merger whose norm is an RMSNorm and whose last linear goes to
//! `out_hidden_size`.
//!
//! Keys a config leaves out take their class's defaults (`Qwen2VLVisionConfig`,
//! `Qwen2_5_VLVisionConfig` in the same folders' `configuration_*.py`). The released configs write
//! `in_chans`, which those classes do not read: the channels are their `in_channels`, 3 by default.

use serde_json::{Map, Value};

/// The largest width or count read from a vision config; larger ones are not counted.
const MAX_DIM: u64 = 1 << 20;

/// Whether `model_type` is Qwen2-VL's or Qwen2.5-VL's, the wrapper or its text class.
pub fn is_qwen2_vl(model_type: &str) -> bool {
    matches!(model_type, "qwen2_vl" | "qwen2_5_vl" | "qwen2_vl_text" | "qwen2_5_vl_text")
}

/// The parameters of the vision encoder that a config of type `model_type` describes in `vision`
/// (its `vision_config`), projector included; `None` for another type, or where a key holds no
/// usable count.
///
/// ```
/// // Qwen2.5-VL-7B-Instruct's vision_config: 676,550,144 parameters.
/// let vision = serde_json::json!({"depth": 32, "hidden_size": 1280, "intermediate_size": 3420,
///     "num_heads": 16, "in_chans": 3, "out_hidden_size": 3584, "patch_size": 14,
///     "spatial_merge_size": 2, "temporal_patch_size": 2});
/// let params = trainplan_core::vision::encoder_params("qwen2_5_vl", vision.as_object().unwrap());
/// assert_eq!(params, Some(676_550_144));
/// ```
pub fn encoder_params(model_type: &str, vision: &Map<String, Value>) -> Option<u64> {
    let count = |key: &str, default: u64| match vision.get(key) {
        None | Some(Value::Null) => Some(u128::from(default)),
        Some(v) => v.as_u64().filter(|n| (1..=MAX_DIM).contains(n)).map(u128::from),
    };
    let channels = count("in_channels", 3)?;
    let depth = count("depth", 32)?;
    let patch = count("patch_size", 14)?;
    let temporal = count("temporal_patch_size", 2)?;
    let merge = count("spatial_merge_size", 2)?;
    let (width, norm, mlp, out) = match model_type {
        "qwen2_vl" => {
            let e = count("embed_dim", 1280)?;
            // `int(config.embed_dim * config.mlp_ratio)`: the ratio may be a fraction.
            let ratio = match vision.get("mlp_ratio") {
                None | Some(Value::Null) => 4.0,
                Some(v) => v.as_f64().filter(|r| r.is_finite() && 0.0 < *r)?,
            };
            let hidden = (e as f64 * ratio).floor();
            if !(1.0..=MAX_DIM as f64).contains(&hidden) {
                return None;
            }
            let hidden = hidden as u128;
            // fc1 and fc2 with biases; LayerNorms of weight and bias.
            (e, 2 * e, e * hidden + hidden + hidden * e + e, count("hidden_size", 3584)?)
        }
        "qwen2_5_vl" => {
            let e = count("hidden_size", 3584)?;
            let i = count("intermediate_size", 3420)?;
            // gate_proj, up_proj and down_proj with biases; RMSNorms of weight alone.
            (e, e, 2 * (e * i + i) + i * e + e, count("out_hidden_size", 3584)?)
        }
        _ => return None,
    };
    let embedding = channels * temporal * patch * patch * width;
    // Two norms, qkv and proj with biases, the MLP.
    let block = 2 * norm + (width * 3 * width + 3 * width) + (width * width + width) + mlp;
    // The merger's norm, then spatial_merge_size² patches' features in and out, then to `out`.
    let merged = merge * merge * width;
    let merger = norm + (merged * merged + merged) + (merged * out + out);
    // Each factor is at most 2^20, so every term fits in 128 bits; the count may not fit in 64.
    u64::try_from(embedding + depth * block + merger).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Qwen2-VL-7B-Instruct's vision_config (as released: `embed_dim`, `mlp_ratio` and the
    /// language model's `hidden_size`), counted by hand module by module from
    /// `modeling_qwen2_vl.py`: the model card's 8.29 B parameters less its language model
    /// (Qwen2-7B's 7,615,616,512) leave 675,759,104, which this is.
    #[test]
    fn qwen2_vl_encoder_is_counted_module_by_module() {
        let vision = serde_json::json!({"depth": 32, "embed_dim": 1280, "mlp_ratio": 4, "num_heads": 16,
            "in_chans": 3, "hidden_size": 3584, "patch_size": 14, "spatial_merge_size": 2, "temporal_patch_size": 2});
        let (e, m, h) = (1280u64, 5120u64, 3584u64);
        let patch_embed = 3 * 2 * 14 * 14 * e;
        let norms = 2 * (e + e);
        let attn = (e * 3 * e + 3 * e) + (e * e + e);
        let mlp = (e * m + m) + (m * e + e);
        let merger = (e + e) + (4 * e * 4 * e + 4 * e) + (4 * e * h + h);
        let by_hand = patch_embed + 32 * (norms + attn + mlp) + merger;
        assert_eq!(by_hand, 675_759_104);
        assert_eq!(encoder_params("qwen2_vl", vision.as_object().unwrap()), Some(by_hand));
        // The class's defaults are Qwen2-VL-7B's encoder.
        assert_eq!(encoder_params("qwen2_vl", &Map::new()), Some(by_hand));
        // A fractional ratio is floored as `int()` floors it.
        let mut odd = vision.clone();
        odd["mlp_ratio"] = serde_json::json!(2.6667);
        let m = (1280.0f64 * 2.6667).floor() as u64;
        let mlp_odd = (e * m + m) + (m * e + e);
        assert_eq!(
            encoder_params("qwen2_vl", odd.as_object().unwrap()),
            Some(by_hand - 32 * (mlp - mlp_odd))
        );
    }

    /// Qwen2.5-VL-7B-Instruct's: the model card's 8.29 B less Qwen2.5-7B's language model; by hand
    /// from `modeling_qwen2_5_vl.py` (RMSNorms, a gated MLP with biases).
    #[test]
    fn qwen2_5_vl_encoder_is_counted_module_by_module() {
        let (e, i, o) = (1280u64, 3420u64, 3584u64);
        let block = 2 * e + (e * 3 * e + 3 * e) + (e * e + e) + 2 * (e * i + i) + (i * e + e);
        let merger = e + (4 * e * 4 * e + 4 * e) + (4 * e * o + o);
        let by_hand = 3 * 2 * 14 * 14 * e + 32 * block + merger;
        assert_eq!(by_hand, 676_550_144);
        let vision = serde_json::json!({"depth": 32, "hidden_size": 1280, "intermediate_size": 3420,
            "out_hidden_size": 3584, "fullatt_block_indexes": [7, 15, 23, 31]});
        assert_eq!(encoder_params("qwen2_5_vl", vision.as_object().unwrap()), Some(by_hand));
    }

    /// What cannot be counted is not: another type, a key of the wrong kind or out of range, an MLP
    /// wider than any width read; and a count past 64 bits is nothing rather than a panic.
    #[test]
    fn what_cannot_be_counted_is_none() {
        let ok = serde_json::json!({"depth": 32});
        assert!(encoder_params("qwen3_vl", ok.as_object().unwrap()).is_none());
        for (model_type, bad) in [
            ("qwen2_vl", serde_json::json!({"depth": "32"})),
            ("qwen2_5_vl", serde_json::json!({"depth": 0})),
            ("qwen2_vl", serde_json::json!({"depth": -1})),
            ("qwen2_5_vl", serde_json::json!({"hidden_size": 2_000_000})),
            ("qwen2_vl", serde_json::json!({"mlp_ratio": "4"})),
            ("qwen2_vl", serde_json::json!({"mlp_ratio": 0.0})),
            ("qwen2_vl", serde_json::json!({"embed_dim": 1_048_576, "mlp_ratio": 2.0})),
        ] {
            assert_eq!(encoder_params(model_type, bad.as_object().unwrap()), None, "{model_type} {bad}");
        }
        let wide = serde_json::json!({"depth": MAX_DIM, "hidden_size": MAX_DIM, "intermediate_size": MAX_DIM,
            "out_hidden_size": MAX_DIM, "spatial_merge_size": MAX_DIM});
        assert!(encoder_params("qwen2_5_vl", wide.as_object().unwrap()).is_none());
    }
}
