//! Checkpoints stored quantized after training (GPTQ, AWQ, bitsandbytes): what config.json's
//! `quantization_config` says, the bytes each format stores per weight, and which framework keeps
//! a base that way while LoRA trains over it.
//!
//! LLaMA-Factory loads such a checkpoint as it is stored and trains LoRA over it
//! (`model/model_utils/quantization.py` `configure_quantization`, v0.9.5: a config's
//! `quantization_config` takes precedence over `quantization_bit`). fp8 and MXFP4 checkpoints it
//! loads dequantized (`FineGrainedFP8Config(dequantize=True)`, `Mxfp4Config(dequantize=True)`), so
//! those count as 16-bit models and are not read here. The Megatron frameworks convert a
//! checkpoint's 16-bit weights into their own format, and VeRL and DeepSpeed load what their
//! scripts load: the planner counts 16-bit weights for them (`rules::hf::prequantized`).

use serde_json::{Map, Value};

use crate::hf::ConfigError;
use crate::plan::{Framework, Plan};

/// How a checkpoint's layers store their linear weights.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// GPTQ (Frantar et al. 2022, arXiv 2210.17323), as transformers and gptqmodel store it
    /// (`PackableQuantLinear`): `qweight` packs the integers into int32, `qzeros` a zero point per
    /// group and output column at the same width, `scales` an fp16 scale per group and output
    /// column, `g_idx` an int32 per input row.
    Gptq,
    /// AWQ (Lin et al. 2023, arXiv 2306.00978) in AutoAWQ's GEMM layout: `qweight` and `qzeros`
    /// packed as GPTQ's, fp16 `scales` per group and output column, no `g_idx`.
    Awq,
    /// bitsandbytes' NF4 (Dettmers et al. 2023), saved 4-bit: 4 bits and a block scale per 64
    /// weights, the scales themselves 8-bit under double quantization.
    Nf4 {
        /// `bnb_4bit_use_double_quant`.
        double_quant: bool,
    },
    /// bitsandbytes' LLM.int8() (Dettmers et al. 2022, arXiv 2208.07339), saved 8-bit: a byte a
    /// weight and an fp32 scale per output row.
    Int8,
}

/// A checkpoint's stored quantization.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Prequantized {
    /// The format.
    pub format: Format,
    /// Bits per weight.
    pub bits: u32,
    /// Weights per scale and zero point along the input (`group_size`); `None` for one group per
    /// output column (GPTQ's `-1`) and for bitsandbytes, whose blocks are fixed.
    pub group_size: Option<u32>,
}

/// What a `quantization_config` says.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Stored {
    /// Weights a loader may keep packed.
    Packed(Prequantized),
    /// fp8 or MXFP4 weights, which LLaMA-Factory loads dequantized: a 16-bit model.
    Dequantized,
    /// A `quant_method` the planner does not read (AQLM, HQQ, compressed-tensors, …), as written.
    Unknown(String),
}

impl Prequantized {
    /// Bytes a stored linear weight takes: the packed integers, and the group's fp16 scale and
    /// packed zero point spread over its `group_size` weights (GPTQ's `g_idx`, 4 bytes per input
    /// row, is left out: a tenth of a percent of the packed weight for a layer 1,024 or more wide).
    pub fn bytes_per_param(&self) -> f64 {
        let bits = f64::from(self.bits);
        match self.format {
            Format::Gptq | Format::Awq => {
                let per_group = self.group_size.map_or(0.0, |g| (2.0 + bits / 8.0) / f64::from(g));
                bits / 8.0 + per_group
            }
            Format::Nf4 { double_quant: true } => crate::memory::NF4_BYTES_PER_PARAM,
            // An fp32 absmax per block of 64 (bitsandbytes `quantize_4bit`, blocksize 64).
            Format::Nf4 { double_quant: false } => 0.5 + 4.0 / 64.0,
            Format::Int8 => 1.0,
        }
    }

    /// Whether the routed experts stay 16-bit: bitsandbytes replaces `nn.Linear` modules alone,
    /// and transformers 5 holds a MoE layer's experts as fused 3-D tensors (as QLoRA's base,
    /// `memory::model_states`); GPTQ and AWQ checkpoints store each expert's projections packed.
    pub fn experts_16bit(&self) -> bool {
        matches!(self.format, Format::Nf4 { .. } | Format::Int8)
    }

    /// The format's name, as its authors write it.
    pub fn name(&self) -> &'static str {
        match self.format {
            Format::Gptq => "GPTQ",
            Format::Awq => "AWQ",
            Format::Nf4 { .. } => "bitsandbytes NF4",
            Format::Int8 => "bitsandbytes LLM.int8()",
        }
    }
}

/// The stored quantization a config's `quantization_config` names; `None` without one.
///
/// # Errors
///
/// A [`ConfigError`] naming the key, when a packed format's bits or group size cannot be real.
pub fn read(config: &Map<String, Value>) -> Result<Option<Stored>, ConfigError> {
    let Some(q) = config.get("quantization_config").and_then(Value::as_object) else {
        return Ok(None);
    };
    let method = q.get("quant_method").and_then(Value::as_str).unwrap_or("");
    // Each key by its path in config.json, for the message.
    let whole = |key: &'static str, path: &'static str| match q.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => {
            v.as_i64().map(Some).ok_or(ConfigError::WrongType { key: path, expected: "a whole number" })
        }
    };
    let bits = |key, path| match whole(key, path)? {
        None => Ok(4),
        Some(b @ 2..=8) => Ok(b as u32),
        Some(b) => Err(ConfigError::OutOfRange { key: path, value: b.to_string(), min: 2, max: 8 }),
    };
    // -1: one group per output column (GPTQ's `group_size=-1`).
    let group = |key, path| match whole(key, path)? {
        None => Ok(Some(128)),
        Some(-1) => Ok(None),
        Some(g @ 1..=65_536) => Ok(Some(g as u32)),
        Some(g) => Err(ConfigError::OutOfRange { key: path, value: g.to_string(), min: 1, max: 65_536 }),
    };
    let packed =
        |format, bits, group_size| Ok(Some(Stored::Packed(Prequantized { format, bits, group_size })));
    match method.to_ascii_lowercase().as_str() {
        // transformers `GPTQConfig`: `bits`, and `group_size` 128 by default.
        "gptq" => packed(
            Format::Gptq,
            bits("bits", "quantization_config.bits")?,
            group("group_size", "quantization_config.group_size")?,
        ),
        // transformers `AwqConfig` writes `bits` and `group_size`; AutoAWQ's own files `w_bit`
        // and `q_group_size`.
        "awq" => {
            let b = match q.contains_key("bits") {
                true => bits("bits", "quantization_config.bits")?,
                false => bits("w_bit", "quantization_config.w_bit")?,
            };
            let g = match q.contains_key("group_size") {
                true => group("group_size", "quantization_config.group_size")?,
                false => group("q_group_size", "quantization_config.q_group_size")?,
            };
            packed(Format::Awq, b, g)
        }
        // transformers `BitsAndBytesConfig`.
        "bitsandbytes" => {
            let flag = |key| q.get(key).and_then(Value::as_bool).unwrap_or(false);
            if flag("load_in_4bit") {
                packed(Format::Nf4 { double_quant: flag("bnb_4bit_use_double_quant") }, 4, None)
            } else if flag("load_in_8bit") {
                packed(Format::Int8, 8, None)
            } else {
                Ok(Some(Stored::Unknown(method.to_owned())))
            }
        }
        "fp8" | "mxfp4" => Ok(Some(Stored::Dequantized)),
        _ => Ok(Some(Stored::Unknown(method.chars().take(64).collect()))),
    }
}

/// The base the plan's LoRA trains over, as the framework loads it: packed where the framework
/// keeps it so (LLaMA-Factory), `None` where its weights are 16-bit.
pub fn kept(plan: &Plan) -> Option<Prequantized> {
    match plan.framework {
        Framework::LlamaFactory if plan.trains_lora() => plan.model.prequantized,
        _ => None,
    }
}

/// The words [`from_name`] reads in a release's name: the rest name the model itself
/// (`catalog::model_by_name` sets these aside where `from_name` finds a format).
pub const RELEASE_WORDS: &[&str] =
    &["gptq", "awq", "bnb", "4bit", "int2", "int3", "int4", "int8", "2bit", "3bit", "8bit", "w2", "w3", "w8"];

/// The `quantization_config` a checkpoint's name declares, as the quantized releases name theirs:
/// GPTQ and AWQ (`Qwen2.5-7B-Instruct-GPTQ-Int4`, `-GPTQ-Int8`, `-AWQ`), 4 bits unless `Int8` (or
/// `Int3`, `Int2`) says otherwise, in groups of 128, the default both formats are published with
/// (transformers `GPTQConfig`, AutoAWQ `q_group_size`); bitsandbytes NF4 saved with double
/// quantization (`unsloth/Qwen2.5-7B-Instruct-bnb-4bit`, whose config.json sets
/// `bnb_4bit_use_double_quant`). `None` for any other name.
pub fn from_name(path: &str) -> Option<Value> {
    // Every word read here is in `RELEASE_WORDS`.
    let name = path.rsplit(['/', '\\']).find(|part| !part.is_empty())?.to_ascii_lowercase();
    let words: Vec<&str> = name.split(['-', '_', '.']).collect();
    let has = |word: &str| words.contains(&word);
    if has("bnb") && has("4bit") {
        return Some(serde_json::json!({
            "quant_method": "bitsandbytes", "load_in_4bit": true, "bnb_4bit_quant_type": "nf4",
            "bnb_4bit_use_double_quant": true,
        }));
    }
    let method = words.iter().find_map(|w| match *w {
        "gptq" => Some("gptq"),
        "awq" => Some("awq"),
        _ => None,
    })?;
    let bits = words
        .iter()
        .find_map(|w| match *w {
            "int8" | "8bit" | "w8" => Some(8),
            "int3" | "3bit" | "w3" => Some(3),
            "int2" | "2bit" | "w2" => Some(2),
            _ => None,
        })
        .unwrap_or(4);
    Some(serde_json::json!({"quant_method": method, "bits": bits, "group_size": 128}))
}
