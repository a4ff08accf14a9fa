//! A multimodal config's vision encoder (`vision_config`): its parameters, and the parameters,
//! attention and saved bytes an image token costs it ([`Encoder`]), counted from transformers'
//! modules. The plan holds it as its framework loads the encoder (`memory::vision_encoder`) and
//! runs it over the image tokens of each sequence (`batch.image_tokens`: `time`, and where it
//! trains, `memory`'s activations). Counted for Qwen2-VL and Qwen2.5-VL, whose configs write their
//! language model at the top (or, saved by transformers 5, in a `text_config`) beside the
//! encoder's shape, and for Qwen3-VL (`models/qwen3_vl/modeling_qwen3_vl.py`) and Qwen3.5, whose
//! language model is always in a `text_config`; for Gemma 3's SigLIP encoder and Mistral 3's
//! Pixtral encoder, with their projectors (`gemma3`, `mistral3`); and for GLM-4.1V's and
//! GLM-4.5V's (`glm4v`).
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

/// The language model's family of a vision-language `model_type` (the wrapper's, or its text
/// class's in a `text_config`): Qwen2-VL's and Qwen2.5-VL's is Qwen2's decoder, Qwen3-VL's
/// Qwen3's and its MoE models' Qwen3-MoE's (transformers `Qwen3VLMoeTextSparseMoeBlock` is
/// `Qwen3MoeSparseMoeBlock`, its experts `Qwen3MoeExperts`), GLM-4.5V's GLM-4.5's. `None` for any
/// other type.
pub fn language_family(model_type: &str) -> Option<crate::model::Family> {
    use crate::model::Family;
    match model_type {
        "qwen2_vl" | "qwen2_5_vl" | "qwen2_vl_text" | "qwen2_5_vl_text" => Some(Family::Qwen2),
        "qwen3_vl_text" => Some(Family::Qwen3),
        "qwen3_vl_moe_text" => Some(Family::Qwen3Moe),
        // GLM-4.5V's is GLM-4.5's MoE decoder without q/k norms (transformers
        // `Glm4vMoeTextAttention(Glm4Attention)`; its MoE and layers GLM-4.5's).
        "glm4v_moe_text" => Some(Family::Glm4Moe),
        // GLM-4.1V's is GLM-4-0414's decoder (transformers `models/glm4v/modeling_glm4v.py`:
        // `Glm4vTextAttention`'s q, k and v with biases, o without; `Glm4vTextMLP`'s fused
        // `gate_up_proj` without bias; four RMSNorms a layer, the attention's and the MLP's outputs
        // normed too), as `Glm4ForCausalLM`'s; under the wrapper's type where its shape is at the
        // top (`Glm4vConfig` builds its text config from the other keys), or its text class's.
        "glm4v" | "glm4v_text" => Some(Family::Glm4),
        _ => None,
    }
}

/// Whether a wrapper of `model_type` holds the model's `tie_word_embeddings` (Qwen3-VL's
/// `Qwen3VLConfig` and `Qwen3VLMoeConfig` take it, `False` by default, and so do Qwen3.5's
/// `Qwen3_5Config` and `Qwen3_5MoeConfig`, transformers models/qwen3_5 and qwen3_5_moe), which its
/// released `text_config` may leave out (Qwen3-VL-30B-A3B-Instruct's does).
pub fn wrapper_ties_embeddings(model_type: &str) -> bool {
    matches!(model_type, "qwen3_vl" | "qwen3_vl_moe" | "qwen3_5" | "qwen3_5_moe")
}

/// A vision encoder's size, and the work and memory one image token costs it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Encoder {
    /// Parameters, projectors included.
    pub params: u64,
    /// The parameters one image token of the language model's sequence passes through: each of the
    /// patches merged or pooled into it through the patch embedding and every block, then the
    /// token through the merger and projector (learned positions, looked up rather than multiplied,
    /// are not among them). A forward costs about twice this in FLOPs per image token (two per
    /// weight a value passes through, as for the language model), the attention over each image's
    /// patches aside.
    pub token_params: u64,
    /// Its blocks (transformer layers).
    pub depth: u64,
    /// The bytes an image token's patches save in the blocks for backward, nothing recomputed:
    /// per block and patch, each norm's (an RMSNorm 8w + 4, as the language model's on the Hugging
    /// Face path, `memory::layer_activation_bytes`; a LayerNorm its input, its fp32 mean and
    /// reciprocal deviation and its output, the next linear's input: 4w + 8), the attention's q, k,
    /// v and output in bf16 and its fp32 log-sum-exp per head (8w + 4 · heads, flash or SDPA), and
    /// the MLP's (a gated one 8i, a plain one 4i), for width w and MLP width i.
    pub token_saved_bytes: u64,
    /// The blocks' width.
    pub width: u64,
    /// Patches merged or pooled into one image token.
    pub token_patches: u64,
    /// Blocks whose attention spans each whole image (the others attend within windows, whose
    /// scores are left out): every block but Qwen2.5-VL's, whose `fullatt_block_indexes` name
    /// them.
    pub attention_layers: u64,
    /// Patches in every image, where the encoder takes images of one size (Gemma 3's SigLIP at
    /// `image_size`); 0 where each image has its own (the Qwen and GLM encoders, Pixtral), counted
    /// as one image per sequence.
    pub image_patches: u64,
}

/// An encoder's blocks as its activations see them ([`Encoder::token_saved_bytes`]).
struct Blocks {
    depth: u128,
    width: u128,
    heads: u128,
    /// RMSNorms (else LayerNorms).
    rms: bool,
    /// The MLP's inner width, and whether it is gated.
    mlp: (u128, bool),
    /// Patches merged or pooled into one image token.
    patches: u128,
    /// Blocks attending over a whole image ([`Encoder::attention_layers`]).
    full_attention: u128,
    /// [`Encoder::image_patches`].
    image_patches: u128,
}

impl Blocks {
    /// `depth` blocks of `width` and `heads` (RMSNorms where `rms`, an MLP of `mlp`'s width, gated
    /// or not), `patches` to an image token, each block attending over the whole image, whose size
    /// varies.
    fn new(depth: u128, (width, heads): (u128, u128), rms: bool, mlp: (u128, bool), patches: u128) -> Blocks {
        Blocks { depth, width, heads, rms, mlp, patches, full_attention: depth, image_patches: 0 }
    }

    /// One block's saved bytes for one patch.
    fn saved_per_patch(&self) -> u128 {
        let w = self.width;
        let norm = if self.rms { 8 * w + 4 } else { 4 * w + 8 };
        let mlp = if self.mlp.1 { 8 * self.mlp.0 } else { 4 * self.mlp.0 };
        2 * norm + 8 * w + 4 * self.heads + mlp
    }
}

/// The parameters of the vision encoder that a multimodal config of type `model_type` describes
/// in its `vision_config`, projectors included (Gemma 3's and Mistral 3's to the language model's
/// `text_width`, Mistral 3's shaped by the wrapper's own keys); `None` for another type, or where
/// a key holds no usable count.
///
/// ```
/// // Qwen2.5-VL-7B-Instruct's vision_config: 676,550,144 parameters.
/// let config = serde_json::json!({"model_type": "qwen2_5_vl", "vision_config": {"depth": 32,
///     "hidden_size": 1280, "intermediate_size": 3420, "num_heads": 16, "in_chans": 3,
///     "out_hidden_size": 3584, "patch_size": 14, "spatial_merge_size": 2, "temporal_patch_size": 2}});
/// let params = trainplan_core::vision::encoder_params("qwen2_5_vl", config.as_object().unwrap(), 3584);
/// assert_eq!(params, Some(676_550_144));
/// ```
pub fn encoder_params(model_type: &str, config: &Map<String, Value>, text_width: u64) -> Option<u64> {
    encoder(model_type, config, text_width).map(|e| e.params)
}

/// [`encoder_params`] with the work an image token costs the encoder ([`Encoder::token_params`]).
pub fn encoder(model_type: &str, config: &Map<String, Value>, text_width: u64) -> Option<Encoder> {
    let read = Read(config.get("vision_config")?.as_object()?);
    let (params, token_params, blocks) = match model_type {
        "gemma3" => gemma3(&read, &Read(config), u128::from(text_width))?,
        "mistral3" => mistral3(&read, &Read(config), u128::from(text_width))?,
        "qwen2_vl" => qwen2_vl(&read)?,
        "qwen2_5_vl" => qwen2_5_vl(&read)?,
        "qwen3_vl" | "qwen3_vl_moe" => qwen3_vl(&read, true)?,
        // `Qwen3_5VisionModel` is Qwen3-VL's with its DeepStack mergers deleted
        // (`models/qwen3_5/modeling_qwen3_5.py`); `Qwen3_5VisionConfig`'s defaults are Qwen3-VL's.
        "qwen3_5" | "qwen3_5_moe" => qwen3_vl(&read, false)?,
        // `Glm4vMoeVisionModel` is `Glm4vVisionModel` (models/glm4v_moe/modular_glm4v_moe.py).
        "glm4v" | "glm4v_moe" => glm4v(&read)?,
        _ => return None,
    };
    let per_token = blocks.patches * blocks.depth;
    let narrow = |n: u128| u64::try_from(n).ok();
    Some(Encoder {
        params: narrow(params)?,
        token_params: narrow(token_params)?,
        depth: narrow(blocks.depth)?,
        token_saved_bytes: narrow(per_token * blocks.saved_per_patch())?,
        width: narrow(blocks.width)?,
        token_patches: narrow(blocks.patches)?,
        attention_layers: narrow(blocks.full_attention)?,
        image_patches: narrow(blocks.image_patches)?,
    })
}

/// An `nn.Linear(inputs, outputs)`'s parameters, its bias where it has one.
fn linear(inputs: u128, outputs: u128, bias: bool) -> u128 {
    inputs * outputs + if bias { outputs } else { 0 }
}

/// A block's biased q, k and v (one fused `qkv`, or three) and output projection of `width`.
fn biased_attention(width: u128) -> u128 {
    linear(width, 3 * width, true) + linear(width, width, true)
}

/// A vision config's counts, each at most [`MAX_DIM`], so that every term below fits in 128 bits.
struct Read<'a>(&'a Map<String, Value>);

impl Read<'_> {
    /// `key`'s count, or the class's `default` where the config leaves it out.
    fn count(&self, key: &str, default: u64) -> Option<u128> {
        match self.0.get(key) {
            None | Some(Value::Null) => Some(u128::from(default)),
            Some(v) => v.as_u64().filter(|n| (1..=MAX_DIM).contains(n)).map(u128::from),
        }
    }

    /// The patch embedding's Conv3d weights of `width` outputs, and the patches merged into a
    /// token (spatial_merge_size²). Patch size's default is `patch`.
    fn patches(&self, width: u128, patch: u64) -> Option<(u128, u128)> {
        let p = self.count("patch_size", patch)?;
        let conv = self.count("in_channels", 3)? * self.count("temporal_patch_size", 2)? * p * p * width;
        let merge = self.count("spatial_merge_size", 2)?;
        Some((conv, merge * merge))
    }
}

/// Gemma 3 (transformers `models/gemma3/modeling_gemma3.py`, `Gemma3ForConditionalGeneration`):
/// SigLIP's vision transformer (`models/siglip/modeling_siglip.py`, `SiglipVisionTransformer`: a
/// Conv2d patch embedding with its bias, (image_size ÷ patch_size)² learned positions, layers of
/// two LayerNorms, q, k, v and out projections and an MLP of fc1 and fc2, all with biases, a last
/// LayerNorm, and the attention-pooling head where `vision_use_head`, true unless the config says
/// otherwise, as Gemma 3's do), then `Gemma3MultiModalProjector`: a matrix from the vision width
/// to the language model's and an RMSNorm. Defaults: `SiglipVisionConfig`'s.
///
/// The projector pools each square of patches into one of the wrapper's `mm_tokens_per_image`
/// tokens (256 by default, `Gemma3Config`: an `AvgPool2d` of (image_size ÷ patch_size) ÷
/// √tokens patches a side), so a token passes that many patches through the encoder (the pooling
/// head, where there is one, counted per patch too: its keys and values are) and itself through
/// the projector.
fn gemma3(read: &Read, wrapper: &Read, text_width: u128) -> Option<(u128, u128, Blocks)> {
    let h = read.count("hidden_size", 768)?;
    let i = read.count("intermediate_size", 3072)?;
    let layers = read.count("num_hidden_layers", 12)?;
    let patch = read.count("patch_size", 16)?;
    let image = read.count("image_size", 224)?;
    let channels = read.count("num_channels", 3)?;
    let positions = (image / patch) * (image / patch);
    let embeddings = channels * patch * patch * h + h + positions * h;
    let mlp = linear(h, i, true) + linear(i, h, true);
    let layer = 2 * 2 * h + biased_attention(h) + mlp;
    let head = match read.0.get("vision_use_head") {
        Some(Value::Bool(false)) => 0,
        // The probe, the multi-head attention's in and out projections, a LayerNorm, an MLP.
        _ => h + biased_attention(h) + 2 * h + mlp,
    };
    let projector = linear(h, text_width, false) + h;
    // `int(mm_tokens_per_image ** 0.5)` tokens a side; at least one patch a token.
    let kernel = (image / patch / wrapper.count("mm_tokens_per_image", 256)?.isqrt()).max(1);
    let per_patch = channels * patch * patch * h + h + layers * layer + 2 * h + head;
    let heads = read.count("num_attention_heads", 12)?;
    let blocks = Blocks {
        image_patches: (image / patch) * (image / patch),
        ..Blocks::new(layers, (h, heads), false, (i, false), kernel * kernel)
    };
    Some((
        embeddings + layers * layer + 2 * h + head + projector,
        kernel * kernel * per_patch + projector,
        blocks,
    ))
}

/// Mistral 3 (transformers `models/mistral3/modeling_mistral3.py`): Pixtral's encoder
/// (`models/pixtral/modeling_pixtral.py`, `PixtralVisionModel`: a Conv2d patch embedding without
/// bias, an RMSNorm, layers of two RMSNorms, q, k, v and o projections and a gated MLP, none with
/// biases; rotary positions, which hold none), then `Mistral3MultiModalProjector`: an RMSNorm, the
/// patch merger's linear from `spatial_merge_size`² patches to one, and two linears to the
/// language model's width, biased where the wrapper's `multimodal_projector_bias` says, the first
/// taking one vision width per `vision_feature_layer` listed. Defaults: `PixtralVisionConfig`'s
/// and `Mistral3Config`'s.
fn mistral3(read: &Read, wrapper: &Read, text_width: u128) -> Option<(u128, u128, Blocks)> {
    let h = read.count("hidden_size", 1024)?;
    let i = read.count("intermediate_size", 4096)?;
    let layers = read.count("num_hidden_layers", 24)?;
    let patch = read.count("patch_size", 16)?;
    let channels = read.count("num_channels", 3)?;
    let layer = 2 * h + 4 * linear(h, h, false) + 3 * linear(h, i, false);
    let encoder = channels * patch * patch * h + h + layers * layer;
    let merge = wrapper.count("spatial_merge_size", 2)?;
    let feature_layers = match wrapper.0.get("vision_feature_layer") {
        Some(Value::Array(list)) => list.len() as u128,
        _ => 1,
    };
    let bias = matches!(wrapper.0.get("multimodal_projector_bias"), Some(Value::Bool(true)));
    let merger = linear(merge * merge * h, h, false);
    let project = linear(feature_layers * h, text_width, bias) + linear(text_width, text_width, bias);
    // Each patch through the encoder and the projector's norm, each token through the rest.
    let token = merge * merge * (encoder + h) + merger + project;
    let heads = read.count("num_attention_heads", 16)?;
    let blocks = Blocks::new(layers, (h, heads), true, (i, true), merge * merge);
    Some((encoder + h + merger + project, token, blocks))
}

/// Qwen2-VL: LayerNorms, an MLP of fc1 and fc2, the merger to the language model's `hidden_size`.
fn qwen2_vl(read: &Read) -> Option<(u128, u128, Blocks)> {
    let e = read.count("embed_dim", 1280)?;
    // `int(config.embed_dim * config.mlp_ratio)`: the ratio may be a fraction.
    let ratio = match read.0.get("mlp_ratio") {
        None | Some(Value::Null) => 4.0,
        Some(v) => v.as_f64().filter(|r| r.is_finite() && 0.0 < *r)?,
    };
    let m = (e as f64 * ratio).floor();
    if !(1.0..=MAX_DIM as f64).contains(&m) {
        return None;
    }
    let m = m as u128;
    let out = read.count("hidden_size", 3584)?;
    let depth = read.count("depth", 32)?;
    let (embedding, merge) = read.patches(e, 14)?;
    let merged = merge * e;
    let block = 2 * 2 * e + biased_attention(e) + linear(e, m, true) + linear(m, e, true);
    let merger = 2 * e + linear(merged, merged, true) + linear(merged, out, true);
    let per_patch = embedding + depth * block;
    let heads = read.count("num_heads", 16)?;
    let blocks = Blocks::new(depth, (e, heads), false, (m, false), merge);
    Some((per_patch + merger, merge * per_patch + merger, blocks))
}

/// Qwen2.5-VL: RMSNorms, a gated MLP with biases, the merger to `out_hidden_size`.
fn qwen2_5_vl(read: &Read) -> Option<(u128, u128, Blocks)> {
    let e = read.count("hidden_size", 3584)?;
    let i = read.count("intermediate_size", 3420)?;
    let out = read.count("out_hidden_size", 3584)?;
    let depth = read.count("depth", 32)?;
    let (embedding, merge) = read.patches(e, 14)?;
    let merged = merge * e;
    let block = 2 * e + biased_attention(e) + 2 * linear(e, i, true) + linear(i, e, true);
    let merger = e + linear(merged, merged, true) + linear(merged, out, true);
    let per_patch = embedding + depth * block;
    let heads = read.count("num_heads", 16)?;
    // Only the blocks `fullatt_block_indexes` names attend over the whole image; the others
    // within windows of `window_size` pixels.
    let full_attention = match read.0.get("fullatt_block_indexes") {
        None | Some(Value::Null) => 4,
        Some(v) => v.as_array()?.len() as u128,
    };
    let blocks = Blocks { full_attention, ..Blocks::new(depth, (e, heads), true, (i, true), merge) };
    Some((per_patch + merger, merge * per_patch + merger, blocks))
}

/// GLM-4.1V and GLM-4.5V (transformers `models/glm4v/modeling_glm4v.py`, `Glm4vVisionModel`, its
/// config `Glm4vVisionConfig`): learned positions for (image_size ÷ patch_size)² patches
/// (interpolated to each image's grid, `Glm4vVisionEmbeddings`), a Conv3d patch embedding with its
/// bias, an RMSNorm after it, `depth` blocks of two RMSNorms, `qkv` (biased where
/// `attention_bias`) and `proj` without bias, and a gated MLP to `out_hidden_size` (not
/// `intermediate_size`: `Glm4VisionMlp`) and back, without biases; an RMSNorm after the blocks; a
/// Conv2d with its bias merging spatial_merge_size² patches into `out_hidden_size`; and the
/// merger (`Glm4vVisionPatchMerger`): a linear of `out_hidden_size`, a LayerNorm, and a gated MLP
/// through `intermediate_size`, none biased.
fn glm4v(read: &Read) -> Option<(u128, u128, Blocks)> {
    let e = read.count("hidden_size", 1536)?;
    let o = read.count("out_hidden_size", 4096)?;
    let i = read.count("intermediate_size", 13696)?;
    let depth = read.count("depth", 24)?;
    let patch = read.count("patch_size", 14)?;
    let image = read.count("image_size", 336)?;
    let bias = matches!(read.0.get("attention_bias"), Some(Value::Bool(true)));
    let conv = read.count("in_channels", 3)? * read.count("temporal_patch_size", 2)? * patch * patch * e + e;
    let merge = read.count("spatial_merge_size", 2)?;
    let positions = (image / patch) * (image / patch) * e;
    let block = 2 * e + linear(e, 3 * e, bias) + linear(e, e, false) + 3 * linear(e, o, false);
    let downsample = merge * merge * e * o + o;
    let merger = linear(o, o, false) + 2 * o + 3 * linear(o, i, false);
    // Each patch through the embedding, its norm, the blocks and the last norm.
    let per_patch = conv + e + depth * block + e;
    let heads = read.count("num_heads", 12)?;
    let blocks = Blocks::new(depth, (e, heads), true, (o, true), merge * merge);
    Some((
        positions + per_patch + downsample + merger,
        merge * merge * per_patch + downsample + merger,
        blocks,
    ))
}

/// Qwen3-VL (and its MoE models', `Qwen3VLMoeVisionConfig` being `Qwen3VLVisionConfig`): a patch
/// embedding with its bias and learned positions (`pos_embed`, num_position_embeddings × width),
/// LayerNorms, an MLP of linear_fc1 and linear_fc2, the merger to `out_hidden_size`, and one more
/// merger per DeepStack layer (`deepstack_merger_list`, their LayerNorm over the merged features)
/// where it has them (`deepstack`).
fn qwen3_vl(read: &Read, deepstack: bool) -> Option<(u128, u128, Blocks)> {
    let e = read.count("hidden_size", 1152)?;
    let i = read.count("intermediate_size", 4304)?;
    let out = read.count("out_hidden_size", 3584)?;
    let depth = read.count("depth", 27)?;
    let positions = read.count("num_position_embeddings", 2304)?;
    let deepstack = match read.0.get("deepstack_visual_indexes") {
        _ if !deepstack => 0,
        None | Some(Value::Null) => 3,
        Some(v) => v.as_array()?.len() as u128,
    };
    let (conv, merge) = read.patches(e, 16)?;
    let merged = merge * e;
    let block = 2 * 2 * e + biased_attention(e) + linear(e, i, true) + linear(i, e, true);
    let project = linear(merged, merged, true) + linear(merged, out, true);
    let merger = 2 * e + project;
    let deepstack_merger = 2 * merged + project;
    // The learned positions are interpolated per patch, not multiplied.
    let per_patch = conv + e + depth * block;
    let mergers = merger + deepstack * deepstack_merger;
    let heads = read.count("num_heads", 16)?;
    let blocks = Blocks::new(depth, (e, heads), false, (i, false), merge);
    Some((per_patch + positions * e + mergers, merge * per_patch + mergers, blocks))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `encoder_params` of a config whose `vision_config` is `vision`.
    fn params(model_type: &str, vision: &Value, text_width: u64) -> Option<u64> {
        let config = serde_json::json!({ "vision_config": vision });
        encoder_params(model_type, config.as_object().unwrap(), text_width)
    }

    /// [`Encoder::token_params`] of a config whose `vision_config` is `vision`.
    fn token_params(model_type: &str, vision: &Value, text_width: u64) -> Option<u64> {
        let config = serde_json::json!({ "vision_config": vision });
        encoder(model_type, config.as_object().unwrap(), text_width).map(|e| e.token_params)
    }

    /// Qwen2-VL-7B-Instruct's vision_config (as released: `embed_dim`, `mlp_ratio` and the
    /// language model's `hidden_size`), counted by hand module by module from
    /// `modeling_qwen2_vl.py`: 675,759,104. With its language model (Qwen2-7B's shape,
    /// 7,615,616,512) it makes 8,291,375,616, the model card's 8.29 B.
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
        assert_eq!(params("qwen2_vl", &vision, 0), Some(by_hand));
        // An image token is 2 × 2 patches, each through the embedding and the blocks, then the
        // merger once.
        let token = 4 * (patch_embed + 32 * (norms + attn + mlp)) + merger;
        assert_eq!(token_params("qwen2_vl", &vision, 0), Some(token));
        // LayerNorms keep their input, fp32 mean and deviation and their output; the plain MLP
        // its inner tensor twice (fc1's output, fc2's input).
        let config = serde_json::json!({ "vision_config": vision });
        let saved = 2 * (4 * e + 8) + 8 * e + 4 * 16 + 4 * m;
        let counted = encoder("qwen2_vl", config.as_object().unwrap(), 0).unwrap();
        assert_eq!(counted.token_saved_bytes, 4 * 32 * saved);
        // The class's defaults are Qwen2-VL-7B's encoder.
        assert_eq!(params("qwen2_vl", &serde_json::json!({}), 0), Some(by_hand));
        // A fractional ratio is floored as `int()` floors it.
        let mut odd = vision.clone();
        odd["mlp_ratio"] = serde_json::json!(2.6667);
        let m = (1280.0f64 * 2.6667).floor() as u64;
        let mlp_odd = (e * m + m) + (m * e + e);
        assert_eq!(params("qwen2_vl", &odd, 0), Some(by_hand - 32 * (mlp - mlp_odd)));
    }

    /// Qwen2.5-VL-7B-Instruct's, by hand from `modeling_qwen2_5_vl.py` (RMSNorms, a gated MLP
    /// with biases): 676,550,144. With Qwen2.5-7B's language model it makes 8,292,166,656, the
    /// model card's 8.29 B.
    #[test]
    fn qwen2_5_vl_encoder_is_counted_module_by_module() {
        let (e, i, o) = (1280u64, 3420u64, 3584u64);
        let block = 2 * e + (e * 3 * e + 3 * e) + (e * e + e) + 2 * (e * i + i) + (i * e + e);
        let merger = e + (4 * e * 4 * e + 4 * e) + (4 * e * o + o);
        let by_hand = 3 * 2 * 14 * 14 * e + 32 * block + merger;
        assert_eq!(by_hand, 676_550_144);
        let vision = serde_json::json!({"depth": 32, "hidden_size": 1280, "intermediate_size": 3420,
            "out_hidden_size": 3584, "fullatt_block_indexes": [7, 15, 23, 31]});
        assert_eq!(params("qwen2_5_vl", &vision, 0), Some(by_hand));
        assert_eq!(
            token_params("qwen2_5_vl", &vision, 0),
            Some(4 * (3 * 2 * 14 * 14 * e + 32 * block) + merger)
        );
        // Saved for backward per patch and block: two RMSNorms, q, k, v and the output with a
        // log-sum-exp per head (16 by default), the gated MLP; checkpointed, the block's input.
        let config = serde_json::json!({ "vision_config": vision });
        let encoder = encoder("qwen2_5_vl", config.as_object().unwrap(), 0).unwrap();
        let saved = 2 * (8 * e + 4) + 8 * e + 4 * 16 + 8 * i;
        assert_eq!(encoder.depth, 32);
        assert_eq!(encoder.token_saved_bytes, 4 * 32 * saved);
        // The four blocks `fullatt_block_indexes` names attend over the whole image; images vary.
        let shape = (encoder.width, encoder.token_patches, encoder.attention_layers, encoder.image_patches);
        assert_eq!(shape, (1280, 4, 4, 0));
    }

    /// Qwen3-VL-2B-Instruct's vision_config, by hand from `modeling_qwen3_vl.py`: the Conv3d with
    /// its bias, 2,304 learned positions, 24 blocks of LayerNorms and a GELU MLP, the merger and
    /// three DeepStack mergers (LayerNorm over the 4,096 merged features). With its language model
    /// (Qwen3-1.7B's shape, tied: `hf.rs`'s tests) it makes 2,127,532,032 parameters.
    #[test]
    fn qwen3_vl_encoder_is_counted_module_by_module() {
        let (e, i, o, m) = (1024u64, 4096u64, 2048u64, 4096u64);
        let patch_embed = 3 * 2 * 16 * 16 * e + e;
        let pos_embed = 2304 * e;
        let block = 2 * (e + e) + (e * 3 * e + 3 * e) + (e * e + e) + (e * i + i) + (i * e + e);
        let fcs = (m * m + m) + (m * o + o);
        let merger = (e + e) + fcs;
        let deepstack = 3 * ((m + m) + fcs);
        let by_hand = patch_embed + pos_embed + 24 * block + merger + deepstack;
        assert_eq!(by_hand, 406_957_056);
        let vision = serde_json::json!({"deepstack_visual_indexes": [5, 11, 17], "depth": 24,
            "hidden_act": "gelu_pytorch_tanh", "hidden_size": 1024, "in_channels": 3, "intermediate_size": 4096,
            "model_type": "qwen3_vl", "num_heads": 16, "num_position_embeddings": 2304, "out_hidden_size": 2048,
            "patch_size": 16, "spatial_merge_size": 2, "temporal_patch_size": 2});
        assert_eq!(params("qwen3_vl", &vision, 0), Some(by_hand));
        // Each of an image token's 2 × 2 patches through the embedding (the positions are looked
        // up) and the blocks, then the token through the merger and the DeepStack mergers.
        let token = 4 * (patch_embed + 24 * block) + merger + deepstack;
        assert_eq!(token_params("qwen3_vl", &vision, 0), Some(token));
        assert_eq!(token_params("qwen3_5", &vision, 0), Some(token - deepstack));
        // The MoE models' vision class is the same one.
        assert_eq!(params("qwen3_vl_moe", &vision, 0), Some(by_hand));
        // Qwen3.5's encoder is the same without its DeepStack mergers, whatever the config lists.
        assert_eq!(params("qwen3_5", &vision, 0), Some(by_hand - deepstack));
        assert_eq!(params("qwen3_5_moe", &vision, 0), Some(by_hand - deepstack));
        // Each DeepStack layer named adds a merger.
        let mut four = vision.clone();
        four["deepstack_visual_indexes"] = serde_json::json!([2, 5, 11, 17]);
        assert_eq!(params("qwen3_vl", &four, 0), Some(by_hand + (m + m) + fcs));
    }

    /// Gemma-3-4B's SigLIP encoder (as google/gemma-3-4b-it's config writes it: 27 layers of 1,152,
    /// an MLP of 4,304, 896-pixel images in patches of 14, no pooling head) and its projector to the
    /// language model's 2,560, by hand from `modeling_siglip.py` and `modeling_gemma3.py`. With the
    /// language model read from the same config (3,880,263,168, `hf.rs`'s tests) it makes
    /// 4,300,079,472, the model card's 4.3 B.
    #[test]
    fn gemma3_siglip_encoder_is_counted_module_by_module() {
        let (h, i) = (1152u64, 4304u64);
        let embeddings = 3 * 14 * 14 * h + h + 64 * 64 * h;
        let mlp = (h * i + i) + (i * h + h);
        let layer = 2 * (h + h) + 4 * (h * h + h) + mlp;
        let projector = h * 2560 + h;
        let by_hand = embeddings + 27 * layer + (h + h) + projector;
        assert_eq!(by_hand, 419_816_304);
        let vision = serde_json::json!({"hidden_size": 1152, "image_size": 896, "intermediate_size": 4304,
            "model_type": "siglip_vision_model", "num_attention_heads": 16, "num_hidden_layers": 27,
            "patch_size": 14, "vision_use_head": false});
        let mut vision = vision.clone();
        assert_eq!(params("gemma3", &vision, 2560), Some(by_hand));
        // 64 × 64 patches pooled into 256 tokens: 4 × 4 patches a token through the encoder, then
        // the projector; 64 tokens an image pool 8 × 8.
        let per_patch = 3 * 14 * 14 * h + h + 27 * layer + (h + h);
        assert_eq!(token_params("gemma3", &vision, 2560), Some(16 * per_patch + projector));
        let config = serde_json::json!({"vision_config": vision, "mm_tokens_per_image": 64});
        let fewer = encoder("gemma3", config.as_object().unwrap(), 2560).unwrap();
        assert_eq!((fewer.params, fewer.token_params), (by_hand, 64 * per_patch + projector));
        // Every image is 64 × 64 patches, each block attending over all of them.
        assert_eq!((fewer.token_patches, fewer.attention_layers, fewer.image_patches), (64, 27, 4096));
        // SigLIP's pooling head where the config does not turn it off: its probe, a multi-head
        // attention's in and out projections, a LayerNorm and an MLP.
        vision.as_object_mut().unwrap().remove("vision_use_head");
        let head = h + (3 * h * h + 3 * h) + (h * h + h) + (h + h) + mlp;
        assert_eq!(params("gemma3", &vision, 2560), Some(by_hand + head));
    }

    /// Mistral-Small-3.1-24B's Pixtral encoder (24 layers of 1,024, an MLP of 4,096, patches of 14)
    /// and its projector to the language model's 5,120 (merging 2 × 2 patches, no biases), by hand
    /// from `modeling_pixtral.py` and `modeling_mistral3.py`: 438,958,080. With its language
    /// model, Mistral-Small-24B's shape (23,572,403,200: `hf.rs`'s tests), it makes
    /// 24,011,361,280, the model card's 24 B.
    #[test]
    fn mistral3_pixtral_encoder_is_counted_module_by_module() {
        let (h, i, t) = (1024u64, 4096u64, 5120u64);
        let encoder = 3 * 14 * 14 * h + h + 24 * (2 * h + 4 * h * h + 3 * h * i);
        let projector = h + 4 * h * h + h * t + t * t;
        assert_eq!(encoder + projector, 438_958_080);
        let vision = serde_json::json!({"head_dim": 64, "hidden_act": "silu", "hidden_size": 1024, "image_size": 1540,
            "intermediate_size": 4096, "model_type": "pixtral", "num_attention_heads": 16, "num_channels": 3,
            "num_hidden_layers": 24, "patch_size": 14, "rope_theta": 10000.0});
        assert_eq!(params("mistral3", &vision, 5120), Some(encoder + projector));
        // Each of a token's 2 × 2 patches through the encoder and the projector's norm, then the
        // token through the merger and the two linears.
        let token = 4 * (encoder + h) + 4 * h * h + h * t + t * t;
        assert_eq!(token_params("mistral3", &vision, 5120), Some(token));
        // The wrapper's keys: biased projections, two feature layers, 3 × 3 patches merged.
        let config = serde_json::json!({"vision_config": vision, "multimodal_projector_bias": true,
            "vision_feature_layer": [-1, -2], "spatial_merge_size": 3});
        let wider = encoder + h + 9 * h * h + (2 * h * t + t) + (t * t + t);
        assert_eq!(encoder_params("mistral3", config.as_object().unwrap(), 5120), Some(wider));
    }

    /// GLM-4.1V's encoder with its config class's defaults: the sum `hf.rs`'s tests check against
    /// the model card, here by part, and what an image token passes through: 2 × 2 patches
    /// through the embedding, the norms and the blocks, then the downsample and the merger once.
    #[test]
    fn glm4v_encoder_is_counted_module_by_module() {
        let (e, o, i) = (1536u64, 4096u64, 13696u64);
        let conv = 3 * 2 * 14 * 14 * e + e;
        let block = 2 * e + 3 * e * e + e * e + 3 * e * o;
        let (downsample, merger) = (4 * e * o + o, o * o + 2 * o + 3 * o * i);
        let per_patch = conv + e + 24 * block + e;
        assert_eq!(
            params("glm4v", &serde_json::json!({}), 0),
            Some(576 * e + per_patch + downsample + merger)
        );
        assert_eq!(
            token_params("glm4v", &serde_json::json!({}), 0),
            Some(4 * per_patch + downsample + merger)
        );
        // `attention_bias` biases q, k and v; GLM-4.5V's encoder is the same class.
        let biased = serde_json::json!({"attention_bias": true});
        assert_eq!(
            params("glm4v_moe", &biased, 0),
            Some(576 * e + per_patch + downsample + merger + 24 * 3 * e)
        );
    }

    /// What cannot be counted is not: another type, a key of the wrong kind or out of range, an MLP
    /// wider than any width read; and a count past 64 bits is nothing rather than a panic.
    #[test]
    fn what_cannot_be_counted_is_none() {
        let ok = serde_json::json!({"depth": 32});
        assert!(params("qwen3_next", &ok, 0).is_none());
        for (model_type, bad) in [
            ("qwen2_vl", serde_json::json!({"depth": "32"})),
            ("qwen2_5_vl", serde_json::json!({"depth": 0})),
            ("qwen2_vl", serde_json::json!({"depth": -1})),
            ("qwen2_5_vl", serde_json::json!({"hidden_size": 2_000_000})),
            ("qwen2_vl", serde_json::json!({"mlp_ratio": "4"})),
            ("qwen2_vl", serde_json::json!({"mlp_ratio": 0.0})),
            ("qwen2_vl", serde_json::json!({"embed_dim": 1_048_576, "mlp_ratio": 2.0})),
            ("qwen3_vl", serde_json::json!({"deepstack_visual_indexes": 3})),
        ] {
            assert_eq!(params(model_type, &bad, 0), None, "{model_type} {bad}");
        }
        let wide = serde_json::json!({"depth": MAX_DIM, "hidden_size": MAX_DIM, "intermediate_size": MAX_DIM,
            "out_hidden_size": MAX_DIM, "spatial_merge_size": MAX_DIM});
        assert!(params("qwen2_5_vl", &wide, 0).is_none());
    }
}
