//! The method against the framework: RL methods on the RL frameworks and only there, what the
//! Megatron path does not train (DPO, QLoRA, LoRA on Megatron-LM), MindSpeed on its own devices and
//! MindSpeed-RL in bf16.

use crate::field::Field;
use serde_json::Value;

use super::{Acc, Ctx};
use crate::hardware::Vendor;
use crate::plan::{Framework, Method, Precision};
use crate::report::{Code, Severity};

/// The model types mbridge has a bridge for (`@register_model`, mbridge/models at 10cb17f, June
/// 2026; Qwen3.5's and Qwen3-Omni's registered where their Megatron-Core modules import).
const MBRIDGE_MODEL_TYPES: [&str; 19] = [
    "deepseek_v3",
    "gemma3",
    "glm4_moe",
    "glm4v",
    "glm4v_moe",
    "internvl_chat",
    "llama",
    "mimo",
    "mixtral",
    "qwen2",
    "qwen2_5_vl",
    "qwen2_moe",
    "qwen3",
    "qwen3_5",
    "qwen3_5_moe",
    "qwen3_moe",
    "qwen3_omni_moe",
    "qwen3_vl",
    "qwen3_vl_moe",
];

/// Whether the framework trains the method (and the method's fix, a framework that does).
pub(super) fn check(cx: &Ctx, acc: &mut Acc) {
    use Severity::{Error, Warning};
    let &Ctx { plan, hw, megatron, mindspeed, rl, .. } = cx;
    let method_fix = match hw.vendor {
        Vendor::Ascend => "mindspeed-rl",
        _ => "verl",
    };
    if rl && !matches!(plan.framework, Framework::Verl | Framework::VerlMegatron | Framework::MindSpeedRl) {
        acc.push(
            Error,
            Code::MethodNeedsRlFramework,
            &[("method", plan.method.wire().to_owned()), ("framework", plan.framework.wire().to_owned())],
            Some((Field::Framework, Value::from(method_fix))),
        );
    }
    if !rl && matches!(plan.framework, Framework::Verl | Framework::VerlMegatron | Framework::MindSpeedRl) {
        acc.push(
            Error,
            Code::FrameworkRlOnly,
            &[("framework", plan.framework.wire().to_owned()), ("method", plan.method.wire().to_owned())],
            Some((Field::Method, Value::from("grpo"))),
        );
    }
    if plan.framework == Framework::VerlMegatron {
        // VeRL's Megatron engine builds the model through mbridge by default (`vanilla_mbridge:
        // True`, verl 0.9.1 verl/trainer/config/engine/megatron.yaml; `AutoBridge.from_config`,
        // verl/workers/engine/megatron/transformer_impl.py), which looks the config's
        // `model_type` up among its bridges and raises "Unregistered model type" for any other
        // (mbridge/core/auto_bridge.py).
        let model_type = plan.hf_model_type().unwrap_or("");
        if !MBRIDGE_MODEL_TYPES.contains(&model_type) {
            acc.push(
                Error,
                Code::VerlMbridgeModel,
                &[("model_type", model_type.to_owned())],
                Some((Field::Framework, Value::from("verl"))),
            );
        }
    }
    if plan.method.is_dpo() && plan.framework == Framework::Megatron {
        acc.push(Error, Code::MethodDpoMegatron, &[], Some((Field::Framework, Value::from("llamafactory"))));
    }
    if plan.method == Method::Qlora && megatron {
        // Megatron-LM trains no 4-bit base; MindSpeed-LLM documents `--qlora`
        // (docs/en/pytorch/training/finetune/mcore/qlora_finetune.md) but advises against it until
        // a fix lands, and its parser (master c77308a) declares no such flag.
        acc.push(
            Error,
            Code::MethodQloraMegatron,
            &[("framework", plan.framework.wire().to_owned())],
            Some((Field::Framework, Value::from("llamafactory"))),
        );
    }
    if plan.method == Method::Freeze && plan.framework != Framework::LlamaFactory {
        // LLaMA-Factory's `finetuning_type: freeze` (`_setup_freeze_tuning`,
        // src/llamafactory/model/adapter.py); Megatron-LM's and MindSpeed-LLM's parsers and
        // DeepSpeed's own scripts here declare no layer freezing.
        acc.push(
            Error,
            Code::MethodFreezeFramework,
            &[("framework", plan.framework.wire().to_owned())],
            Some((Field::Framework, Value::from("llamafactory"))),
        );
    }
    if plan.method == Method::Lora && plan.framework == Framework::Megatron {
        // Megatron-LM's pretrain_gpt.py has no LoRA: every parameter would train. LoRA on
        // Megatron models is Megatron-Bridge's PEFT, MindSpeed-LLM's --lora-r, or the HF path.
        let to = if hw.vendor == Vendor::Ascend { "mindspeed-llm" } else { "llamafactory" };
        acc.push(Error, Code::MethodLoraMegatron, &[], Some((Field::Framework, Value::from(to))));
    }
    if mindspeed && hw.vendor == Vendor::Nvidia {
        acc.push(
            Warning,
            Code::FrameworkMindspeedOnNvidia,
            &[("framework", plan.framework.wire().to_owned())],
            Some((Field::Framework, Value::from(if rl { "verl" } else { "megatron" }))),
        );
    }
    if plan.framework.is_verl() && !matches!(plan.precision, Precision::Bf16 | Precision::Fp16) {
        // verl 0.9.1 `dtype: bfloat16 # ["bfloat16", "float16"]` of both engines
        // (verl/trainer/config/engine/fsdp.yaml, megatron.yaml; `McoreEngineConfig.__post_init__`
        // asserts it).
        acc.push(
            Error,
            Code::VerlPrecision,
            &[("precision", plan.precision.wire().to_owned())],
            Some((Field::Precision, Value::from("bf16"))),
        );
    }
    if plan.framework == Framework::MindSpeedRl && plan.precision != Precision::Bf16 {
        // MindSpeed-RL `validate_rl_args`: bf16 training and bf16 generation.
        acc.push(
            Error,
            Code::MindspeedRlBf16,
            &[("precision", plan.precision.wire().to_owned())],
            Some((Field::Precision, Value::from("bf16"))),
        );
    }
}
