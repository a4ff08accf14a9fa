//! Core errors and findings in the user's language. The core names what is wrong as data (an enum
//! variant, a finding code with arguments); this module puts it in words.

use trainplan_core::advice::Move;
use trainplan_core::emit::flags::{FlagError, ValueType};
use trainplan_core::emit::import::{Caveat, Expected, ImportError, ModelOrigin};
use trainplan_core::field::Field;
use trainplan_core::hf::ConfigError;
use trainplan_core::permalink::PermalinkError;
use trainplan_core::plan::{
    Allowed, CpAlgo, Framework, Fsdp, Method, OffloadDevice, Optimizer, PipelineSchedule, PlanFileError,
    RecomputeGranularity, bound_text,
};
use trainplan_core::report::{Code, Finding};

use crate::i18n::{Key, Lang, fill, t};

/// A pipeline schedule by the name its paper or framework gives it (the report writes `1f1b`,
/// `interleaved`, `gpipe`, `zb-h1` or `dualpipev`); another name shows as itself.
pub fn schedule_name(lang: Lang, wire: &str) -> String {
    match PipelineSchedule::from_wire(wire) {
        Some(schedule) => schedule_choice(lang, schedule).to_owned(),
        None => wire.to_owned(),
    }
}

/// A schedule a plan can ask for, by its proper name ("automatic" for Megatron's own choice).
pub fn schedule_choice(lang: Lang, schedule: PipelineSchedule) -> &'static str {
    match schedule {
        PipelineSchedule::Auto => t(lang, Key::par_schedule_auto),
        PipelineSchedule::OneFOneB => "1F1B",
        PipelineSchedule::Interleaved => t(lang, Key::sched_interleaved),
        PipelineSchedule::GPipe => "GPipe",
        PipelineSchedule::ZbH1 => "ZB-H1",
        PipelineSchedule::DualPipeV => "DualPipeV",
    }
}

/// The words for a method.
pub fn method_key(m: Method) -> Key {
    match m {
        Method::Pretrain => Key::method_pretrain,
        Method::SftFull => Key::method_sft_full,
        Method::Lora => Key::method_lora,
        Method::Qlora => Key::method_qlora,
        Method::Freeze => Key::method_freeze,
        Method::Dpo => Key::method_dpo,
        Method::DpoLora => Key::method_dpo_lora,
        Method::Grpo => Key::method_grpo,
        Method::Ppo => Key::method_ppo,
    }
}

/// A refused config.json, in words.
pub fn config_error(lang: Lang, err: &ConfigError) -> String {
    match err {
        ConfigError::NotJson(detail) => fill(t(lang, Key::cfg_not_json), &[("detail", detail)]),
        ConfigError::NotObject => t(lang, Key::cfg_not_object).to_owned(),
        ConfigError::Missing(key) => fill(t(lang, Key::cfg_missing), &[("key", key)]),
        ConfigError::WrongType { key, expected } => {
            let expected = match *expected {
                "a whole number" => t(lang, Key::expected_whole_number),
                "a string" => t(lang, Key::expected_string),
                "true or false" => t(lang, Key::expected_bool),
                "a list of layer indices" => t(lang, Key::expected_layer_list),
                other => other,
            };
            fill(t(lang, Key::cfg_wrong_type), &[("key", key), ("expected", expected)])
        }
        ConfigError::OutOfRange { key, value, min, max } => fill(
            t(lang, Key::cfg_out_of_range),
            &[("key", key), ("value", value), ("min", &min.to_string()), ("max", &max.to_string())],
        ),
        ConfigError::Inconsistent(detail) => fill(t(lang, Key::cfg_inconsistent), &[("detail", detail)]),
        ConfigError::TooLarge => t(lang, Key::cfg_too_large).to_owned(),
    }
}

/// A refused plan, in words: configs in the user's language, the rest as the core words them.
pub fn plan_error(lang: Lang, err: &PlanFileError) -> String {
    match (lang, err) {
        (_, PlanFileError::Config(err)) => config_error(lang, err),
        (Lang::Zh, PlanFileError::OutOfRange { field, expected }) => {
            format!("{field} 必须{}", expected_zh(expected))
        }
        (_, other) => other.to_string(),
    }
}

/// What a plan field takes, in Chinese (the core's `Display` is the English).
fn expected_zh(expected: &Allowed) -> String {
    match *expected {
        Allowed::Between { min, max, unit } => {
            let unit = if unit.is_empty() { String::new() } else { format!(" {unit}") };
            format!("在 {} 到 {}{unit} 之间", bound_text(min), bound_text(max))
        }
        Allowed::AboveZeroAtMost { max } => format!("大于 0 且不超过 {}", bound_text(max)),
        Allowed::PeakOrFp16 => "大于 0（或填写 fp16_tflops）".to_owned(),
        Allowed::ZeroStage => "为 0、1、2 或 3".to_owned(),
        Allowed::RecomputeModules => {
            "为以下模块名：core_attn、moe_act、layernorm、mla_up_proj、mlp、moe、shared_experts".to_owned()
        }
        Allowed::LoraTargets => "为 \"all\" 或至少一个模块".to_owned(),
        Allowed::Vendor => "为 \"nvidia\"、\"ascend\" 或 \"other\"".to_owned(),
        Allowed::Text { max_bytes } => {
            format!("为不含控制字符（换行、制表符、NUL）的文本，最多 {max_bytes} 字节")
        }
        Allowed::Name { max_chars } => {
            format!("不超过 {max_chars} 个字符，且不含控制字符（换行、制表符、NUL）")
        }
        Allowed::LayoutSymbols { max_chars } => format!(
            "只含 Megatron 的布局符号：E（嵌入）、t（层）、m（MTP 层）、L（损失）、| 分隔阶段、(…)*n 与 x*n 重复、逗号；最多 {max_chars} 个字符"
        ),
    }
}

/// A permalink that could not be opened, in words.
pub fn link_error(lang: Lang, err: &PermalinkError) -> String {
    match err {
        PermalinkError::NotAPermalink => t(lang, Key::link_not_trainplan).to_owned(),
        PermalinkError::NewerVersion(version) => fill(t(lang, Key::link_newer), &[("version", version)]),
        PermalinkError::Corrupt(_) => t(lang, Key::link_corrupt).to_owned(),
        PermalinkError::Plan(err) => {
            fill(t(lang, Key::link_invalid_plan), &[("reason", &plan_error(lang, err))])
        }
        PermalinkError::TooManyPins(n) => fill(
            t(lang, Key::cmp_link_too_many),
            &[("n", &n.to_string()), ("max", &trainplan_core::compare::MAX_PINS.to_string())],
        ),
    }
}

/// A launch file that could not be read, in words.
pub fn import_error(lang: Lang, err: &ImportError) -> String {
    match err {
        ImportError::Unrecognized => t(lang, Key::import_unrecognized).to_owned(),
        ImportError::BadValue(key, expected) => {
            let expected = t(
                lang,
                match expected {
                    Expected::WholeNumber => Key::import_expected_whole_number,
                    Expected::PositiveWholeNumber => Key::import_expected_positive,
                    Expected::FollowedByValue => Key::import_expected_value,
                    Expected::FullOrSelective => Key::import_expected_recompute,
                    Expected::DualPipeV => Key::import_expected_schedule,
                    Expected::FsdpSharding => Key::import_expected_sharding,
                    Expected::FractionUpToOne => Key::import_expected_fraction,
                    Expected::Dropout => Key::import_expected_dropout,
                    Expected::ZeroStage => Key::import_expected_zero_stage,
                    Expected::MoeDispatcher => Key::import_expected_dispatcher,
                    Expected::Number => Key::import_expected_number,
                    Expected::AttentionBackend => Key::import_expected_attention_backend,
                },
            );
            fill(t(lang, Key::import_bad_value), &[("key", key), ("expected", expected)])
        }
    }
}

/// A flag a framework's own parser would refuse, in words.
pub fn flag_error(lang: Lang, err: &FlagError) -> String {
    match err {
        FlagError::Unknown { flag, framework } => {
            fill(t(lang, Key::flag_unknown), &[("flag", flag), ("framework", framework)])
        }
        FlagError::SwitchWithValue { flag, value } => {
            fill(t(lang, Key::flag_switch_with_value), &[("flag", flag), ("value", value)])
        }
        FlagError::ValueCount { flag, expected, given } => {
            let expected = match expected.as_str() {
                "one value" => t(lang, Key::flag_one_value).to_owned(),
                "at most one value" => t(lang, Key::flag_at_most_one_value).to_owned(),
                "at least one value" => t(lang, Key::flag_at_least_one_value).to_owned(),
                other => match other.strip_suffix(" values") {
                    Some(n) => fill(t(lang, Key::flag_n_values), &[("n", n)]),
                    None => other.to_owned(),
                },
            };
            fill(
                t(lang, Key::flag_value_count),
                &[("flag", flag), ("expected", &expected), ("given", &given.to_string())],
            )
        }
        FlagError::BadType { flag, value, value_type } => {
            let ty = match value_type {
                ValueType::Int => t(lang, Key::flag_type_int),
                ValueType::Float => t(lang, Key::flag_type_float),
                ValueType::Str => t(lang, Key::flag_type_string),
                ValueType::Other(name) => name,
            };
            fill(t(lang, Key::flag_bad_type), &[("flag", flag), ("type", ty), ("value", value)])
        }
        FlagError::NotAChoice { flag, value, choices } => {
            fill(t(lang, Key::flag_not_a_choice), &[("flag", flag), ("choices", choices), ("value", value)])
        }
    }
}

/// What an imported file makes its framework do that it may not mean, in `lang`.
pub fn caveat_text(lang: Lang, caveat: &Caveat) -> String {
    match caveat {
        Caveat::PackingRolesUnset { tokens } => {
            let default = trainplan_core::plan::MINDSPEED_RL_PACKED_TOKENS.to_string();
            fill(
                t(lang, Key::launch_import_packing_roles),
                &[("tokens", &tokens.to_string()), ("default", &default)],
            )
        }
    }
}

/// How an import told the model, in words; `kept` is the model's name when it told none.
pub fn model_origin(lang: Lang, origin: &ModelOrigin, kept: &str) -> String {
    let name = |id: &str| trainplan_core::catalog::model(id).map_or(id, |m| m.name).to_owned();
    match origin {
        ModelOrigin::Named(id) => fill(t(lang, Key::launch_import_model_named), &[("model", &name(id))]),
        ModelOrigin::Matched { from, id } => {
            fill(t(lang, Key::launch_import_model_matched), &[("model", &name(id)), ("path", from)])
        }
        ModelOrigin::Shape(id) => fill(t(lang, Key::launch_import_model_shape), &[("model", &name(id))]),
        ModelOrigin::Built { name } => fill(t(lang, Key::launch_import_model_built), &[("model", name)]),
        ModelOrigin::Unbuilt(flags) if !flags.is_empty() => {
            fill(t(lang, Key::launch_import_model_unbuilt), &[("model", kept), ("flags", &flags.join(", "))])
        }
        ModelOrigin::Unbuilt(_) | ModelOrigin::Unknown => {
            fill(t(lang, Key::launch_import_model_unknown), &[("model", kept)])
        }
    }
}

/// A finding, in words: the core's English, or its Chinese here. Every code has its words, or
/// this does not compile. Argument values that are the plan's own words (frameworks, fields) are
/// given as the page names them.
pub fn finding(lang: Lang, finding: &Finding) -> String {
    let args: Vec<(&str, String)> = finding.args.iter().map(|(k, v)| (*k, arg(lang, k, v))).collect();
    let template = match lang {
        Lang::En => finding.code.english(),
        Lang::Zh => zh(finding.code),
    };
    trainplan_core::report::fill(template, args.iter().map(|(k, v)| (*k, v.as_str())))
}

/// A finding's Chinese, `{name}` standing for its arguments. One arm per code, as the core lists
/// them (the match must cover every code), so it is as long as the list of rules.
// Long: one table, which the compiler holds to every code; split, no match would.
pub fn zh(code: Code) -> &'static str {
    match code {
        Code::ParallelFusedKernelsFramework => {
            "{framework} 自行选择算子：关闭 RMSNorm、SwiGLU 和 RoPE 融合算子是 MindSpeed 的开关。"
        }
        Code::MoeFramework => "{framework} 无法设置 MoE 内核、分发器或容量：这些设置只影响估算。",
        Code::MoeFlexFramework => "flex 分发器（DeepEP、HybridEP）只有 Megatron-LM 提供；{framework} 没有。",
        Code::MoeFlexParallel => "flex 分发器需要 TP × EP 大于 1。",
        Code::MoePadNeedsCapacity => "专家输入按容量补齐需要设置容量因子。",
        Code::MoeFlexPad => "使用 DeepEP 的 flex 分发器不能把专家输入按容量补齐。",
        Code::MoeOverlap => "专家并行 all-to-all 掩盖不能与{what}同时使用。",
        Code::ParallelAccountFramework => "{framework} 不能在流水线切分时把词嵌入和损失各算作一层。",
        Code::HwNoBlockScaling => "{device} 不支持 MXFP8/NVFP4 块缩放（需要 Blackwell）。",
        Code::PrecisionFramework => {
            "{framework} 没有 {precision} 方案：Megatron-LM 的 Transformer Engine 路径才有。"
        }
        Code::FsdpFramework => "{framework} 不支持 {fsdp}：它用自己的 ZeRO 或 FSDP 切分。",
        Code::FsdpTorch => "Megatron 中的 PyTorch FSDP2 不能与 {what} 同时使用。",
        Code::ModelUnknownType => "未知的 model_type \"{model_type}\"：已按 Llama 类解码器读取。",
        Code::ModelMoeLayerFreq => {
            "不支持 moe_layer_freq {moe_layer_freq}：稠密层之后的每一层都按 MoE 层计算。"
        }
        Code::ModelExpertsRead => {
            "从 {key} 读到 {n_experts} 个路由专家，每个 token 选 {top_k} 个（按 Mixtral 和 DeepSeek 配置的写法）：请对照模型卡核对参数量。"
        }
        Code::ModelLayerTypes => "layer_types 列出 {layers} 个非注意力层（{kind}）：每层都按全注意力层计算。",
        Code::HfQloraExperts => {
            "QLoRA 不量化路由专家（占模型 {share}%），它们仍为 16 位：bitsandbytes 只量化 nn.Linear 模块，而 transformers 5 把专家存为融合张量。4 位基座只为其余层省显存。"
        }
        Code::ModelQuantizationUnread => {
            "quantization_config 的 quant_method \"{method}\" 无法读取：权重按 16 位计算。"
        }
        Code::LlamafactoryPtqBase => {
            "该检查点以 {format} {bits} 位存储，LLaMA-Factory 直接在其上训练 LoRA：各层线性权重每个按 {bytes} 字节计算，而不是 2 字节。"
        }
        Code::LlamafactoryPtqLoraOnly => {
            "LLaMA-Factory 只能用 LoRA 训练 {format} 量化的检查点：冻结的打包权重不能做全参数训练。"
        }
        Code::LlamafactoryPtqZero3 => "LLaMA-Factory 不允许 {format} 量化的检查点使用 ZeRO-3。",
        Code::LlamafactoryPureBf16Zero3 => "LLaMA-Factory 不允许 pure_bf16 与 ZeRO-3 同时使用。",
        Code::HfGptOssSdpa => {
            "transformers 只能用 eager 或支持 sink 的 FlashAttention 内核（kernels-community/vllm-flash-attn3）运行 gpt-oss 的可学习注意力 sink，不能用 SDPA。"
        }
        Code::LlamafactoryGptOssKernel => {
            "LLaMA-Factory 总是用带注意力 sink 的 FlashAttention-3 内核运行 gpt-oss（不论 flash_attn 如何设置），并在加载模型时从 Hugging Face Hub 下载该内核（kernels-community/vllm-flash-attn3）：在不能联网的集群上请提前下载。"
        }
        Code::LlamafactoryLowRankDeepspeed => {
            "LLaMA-Factory 不允许 {optimizer} 与 DeepSpeed 同时使用：请不用 ZeRO 和卸载。"
        }
        Code::LlamafactoryLowRankLora => {
            "LLaMA-Factory 不允许 {optimizer} 与 LoRA 同时使用：{optimizer} 训练全部参数。"
        }
        Code::LlamafactoryLowRankLayerwiseDistributed => {
            "LLaMA-Factory 不允许在 {devices} 张卡上用逐层 {optimizer}：它只能单卡训练。"
        }
        Code::LlamafactoryLowRankLayerwiseAccumulation => {
            "逐层 {optimizer} 在每个参数的梯度到达时就更新它，因此不支持梯度累积：这里每步 {microbatches} 个微批。"
        }
        Code::LlamafactoryLowRankMixedPrecision => {
            "混合精度下 {optimizer} 的权重、梯度和状态都是 fp32（LLaMA-Factory 会警告）：pure_bf16 可减半。"
        }
        Code::VerlOffloadPolicyFsdp1 => {
            "offload_policy 是 FSDP2 的 CPU 卸载：VeRL 的 FSDP1 引擎会忽略它，actor 仍留在设备上。"
        }
        Code::LlamafactoryAdam8bitOffload => {
            "卸载优化器时，accelerate 会以 DeepSpeed 的 CPU Adam 代替 8-bit AdamW：fp32 动量放在主机内存，权重衰减按 Adam 的 L2 项计算。"
        }
        Code::LlamafactoryPtqDora => {
            "LLaMA-Factory 不允许在 {format} 量化的检查点上使用 DoRA：DoRA 需要基座权重的范数。"
        }
        Code::LlamafactoryPtqQuantizationBit => {
            "该检查点已是 {format} {bits} 位：LLaMA-Factory 忽略 quantization_bit，直接在其上训练 LoRA，规划也按此计算。"
        }
        Code::ModelPtq16bit => {
            "该检查点以 {format} {bits} 位存储，只有 LLaMA-Factory 能在训练 LoRA 时保持打包：在 {framework} 上按 16 位模型计算。"
        }
        Code::ModelIndexer => {
            "DeepSeek-V3.2 按 DeepSeek-V3 规划：其 lightning indexer（各层合计 {params} M 参数）与稀疏注意力未计入。"
        }
        Code::ModelVisionConfig => {
            "\"{model_type}\" 还包含视觉编码器（vision_config），未计入：只规划语言模型。"
        }
        Code::ModelVisionEncoder => {
            "\"{model_type}\" 还包含 {params} B 参数的视觉编码器（vision_config），未计入：只规划语言模型，编码器的 bf16 权重还需 {gib} GiB。"
        }
        Code::ModelVisionEncoderFrozen => {
            "\"{model_type}\" 还包含 {params} B 参数的视觉编码器（vision_config）。{framework} 在此方案中冻结它，其权重计入第一阶段（bf16 下分片前 {gib} GiB），它对每条序列中图像 token（{image_tokens} 个，在批大小处设置）的前向计入单步时间。"
        }
        Code::ModelVisionEncoderTrained => {
            "\"{model_type}\" 还包含 {params} B 参数的视觉编码器（vision_config）。{framework} 在此方案中将其与语言模型一同训练，其权重、梯度和优化器状态计入第一阶段，它对每条序列中图像 token（{image_tokens} 个，在批大小处设置）的前向与反向计入单步时间，其激活值计入第一阶段。"
        }
        Code::ModelTextConfig => {
            "语言模型取自 \"{model_type}\" 的 text_config：其他部分（视觉编码器、投影层）不计入。"
        }
        Code::BatchImageTokens => {
            "每条序列 {image_tokens} 个图像 token，超过序列本身的 {seq_len} 个 token：按 {seq_len} 计算。"
        }
        Code::BatchImageTokensUnused => {
            "每条序列 {image_tokens} 个图像 token 在此不影响任何结果：{framework} 在此方案中不运行该模型的视觉编码器。"
        }
        Code::BatchMeanSeqLen => {
            "平均样本长度 {mean} 个 token 超过序列长度 {seq_len}，而 {framework} 会把每个样本截断到该长度：按 {seq_len} 计算。"
        }
        Code::LlamafactoryMeanSeqPadded => {
            "LLaMA-Factory 把每个 {micro_batch} 条样本的微批补齐到其中最长的样本，因此每条样本按 {seq_len} 个 token 计算，而不是平均的 {mean}：微批为 1 时每条样本按自身长度训练。"
        }
        Code::MindspeedMeanSeqPadded => {
            "MindSpeed-LLM 把每个 {micro_batch} 条样本的微批补齐到其中最长的样本（--no-pad-to-seq-lengths，补齐到 8 的倍数），因此每条样本按 {seq_len} 个 token 计算，而不是平均的 {mean}：微批为 1 时每条样本按自身长度训练。"
        }
        Code::BatchDivisible => "全局批大小 {global_batch} 不是 {unit}（{what}）的整数倍。",
        Code::BatchFewMicrobatches => "PP {pp} 只有 {microbatches} 个微批：流水线大部分时间空闲。",
        Code::BatchVppMicrobatches => "{microbatches} 个微批不是 PP {pp} 的整数倍（交错调度要求）。",
        Code::FrameworkMindspeedOnNvidia => {
            "{framework} 面向昇腾 NPU；NVIDIA GPU 请使用 Megatron-LM 或 VeRL。"
        }
        Code::FrameworkRlOnly => "{framework} 只做强化学习（GRPO、PPO），不支持 {method}。",
        Code::HfDistributedOptimizer => {
            "{framework} 用 ZeRO 1 及以上分片优化器，而不是 Megatron 的分布式优化器。"
        }
        Code::HfNoModelParallel => "{framework} 不支持 {field}：它用 ZeRO/FSDP 分片。",
        Code::HwNoBf16 => "{device} 不支持 bf16：请用 fp16 加损失缩放训练。",
        Code::HwNoFp8 => "{device} 不支持 fp8（需要 Hopper、Ada 或 Blackwell）。",
        Code::HwTpAcrossNodes => {
            "TP {tp} 跨越了每节点 {devices_per_node} 卡的节点：每层的集合通信都要走网络。"
        }
        Code::MemoryDoesNotFit => "峰值每卡需要 {peak} GiB，可用只有 {usable} GiB。",
        Code::VerlMbridgeModel => {
            "VeRL 的 Megatron 引擎通过 mbridge 构建模型，而 mbridge 没有 model_type \"{model_type}\" 的桥接：请改用 VeRL 的 FSDP 引擎训练。"
        }
        Code::MethodDpoMegatron => "Megatron-LM 没有 DPO 训练：请用 LLaMA-Factory 或 MindSpeed-LLM。",
        Code::MethodLoraMegatron => {
            "Megatron-LM 的 pretrain_gpt.py 不支持 LoRA（会训练全部权重）：请用 LLaMA-Factory、MindSpeed-LLM 或 Megatron-Bridge 的 PEFT。"
        }
        Code::ScheduleFramework => "{framework} 没有 {schedule} 流水线调度。",
        Code::MindspeedDualpipevConflict => "MindSpeed 的 DualPipeV 不能与 {what} 同时使用。",
        Code::VerlLoraRank => "vLLM 支持的 LoRA 秩最大为 512，而不是 {rank}。",
        Code::VerlZeroStage => {
            "VeRL 的 FSDP 要么连同参数一起切分（ZeRO-3），要么只切分梯度和优化器状态（ZeRO-2），要么不切分（ZeRO-0），不能只切分优化器状态（ZeRO-1）。"
        }
        Code::MethodNeedsRlFramework => {
            "{method} 是强化学习：需要 VeRL 或 MindSpeed-RL，而不是 {framework}。"
        }
        Code::MethodQloraMegatron => "{framework} 不支持 4-bit QLoRA：请用 LLaMA-Factory。",
        Code::MethodFreezeFramework => "{framework} 不支持冻结微调：请用 LLaMA-Factory。",
        Code::MindspeedCocLora => "MindSpeed 的 --use-ascend-coc 不支持 LoRA。",
        Code::MindspeedKnobIgnored => "{field} 是 MindSpeed 的选项；{framework} 会忽略它。",
        Code::MindspeedLoraMoeDispatcher => {
            "MindSpeed 上对 MoE 做 LoRA 需要 --moe-token-dispatcher-type alltoall_seq（启动文件会设置）。"
        }
        Code::MindspeedSwapAttentionLora => "MindSpeed 的 --swap-attention 不支持 LoRA。",
        Code::MindspeedRlBf16 => "MindSpeed-RL 只支持 bf16 训练。",
        Code::VerlPrecision => "VeRL 只支持 bf16 或 fp16 训练（引擎的 dtype），不支持 {precision}。",
        Code::MindspeedRlGenerationDp => {
            "每步 {prompts} 条 prompt 无法均分给推理的 {engines} 个引擎（{world} 张卡 ÷ 推理 TP {rollout_tp}）。"
        }
        Code::MindspeedRlMicroBatch => {
            "每个 DP rank 的 {samples} 条回复（{prompts} 条 prompt ÷ DP {dp} × {n}）不是微批 {micro_batch} 的整数倍。"
        }
        Code::MindspeedRlRolloutEp => {
            "推理把专家分到 {rollout} 张卡上（TP × EP），这不是 actor 分布专家的 {ep} 个 rank（TP × EP）的倍数。"
        }
        Code::MindspeedRlLoraTpExtendEp => {
            "MindSpeed-RL 的 actor 在专家上训练 LoRA 时不能用专家并行：EP 大于 1 时其权重重分片需要 moe_tp_extend_ep，而 MindSpeed 的 LoRA 不支持它。"
        }
        Code::MindspeedRlTpExtendEp => {
            "actor 的 {experts} 个专家无法均分到 TP {tp} × EP {ep} 上，而 MindSpeed-RL 训练时按整个专家分布（moe_tp_extend_ep）。"
        }
        Code::MindspeedRlTpExtendEpDispatcher => {
            "MindSpeed-RL 的专家并行（moe_tp_extend_ep）只支持 alltoall 分发。"
        }
        Code::MindspeedRlRewardNodes => {
            "每步 {prompts} 条 prompt 无法均分给用规则奖励打分的 {nodes} 个节点。"
        }
        Code::ModelMlaYarnBetas => {
            "Megatron-LM 的命令行无法为多头潜在注意力（MLA）设置 YaRN 的 beta：模型的 beta_fast {beta_fast}、beta_slow {beta_slow} 会按 32 和 1 训练。"
        }
        Code::ModelRotaryMindspeedRl => {
            "MindSpeed-RL 的模型配置没有 rotary_percent 与 rotary_interleaved：actor 会对每个注意力头的全部维度做旋转位置编码，而该模型只旋转其中一部分（GLM 一半，Phi-4-mini 四分之三）。"
        }
        Code::ModelLongropeFramework => {
            "{framework} 的启动文件无法设置模型的 LongRoPE 缩放（逐频率因子与更大的注意力缩放）：它会按普通旋转位置编码训练，与检查点不是同一个模型。MindSpeed-LLM 可以构建它。"
        }
        Code::ModelLinearAttentionFramework => {
            "{framework} 无法构建模型的 Gated DeltaNet（线性注意力）层：其启动文件没有对应的配置项。"
        }
        Code::ParallelLinearAttentionHeads => {
            "Megatron-LM 把 Gated DeltaNet 层的 {key_heads} 个 key 头和 {value_heads} 个 value 头切分到 TP × CP = {tp_cp} 上，它必须同时整除两者。"
        }
        Code::ParallelLinearAttentionMindspeed => {
            "MindSpeed-LLM 只能在 TP 1、CP 1 下运行 Gated DeltaNet 层。"
        }
        Code::ModelSharedGateMindspeedRl => {
            "MindSpeed-RL 的模型配置没有 shared_expert_gate：actor 直接加上共享专家的输出，而模型会先乘以一个可学习的 sigmoid 门控。"
        }
        Code::ModelGemmaMegatron => {
            "这里为 {framework} 写出的脚本构建的是 Llama 的层，而不是 Gemma 的：训练的模型与检查点不同。LLaMA-Factory 与 VeRL 的 FSDP 引擎按 transformers 的实现运行 Gemma，MindSpeed-LLM 可运行 Gemma 2。"
        }
        Code::ModelPostNormsMegatron => {
            "{framework} 的脚本不会在注意力与 MLP 之后各加一层归一化，而 GLM-4-0414 的每层都有：训练的层与检查点的不同。"
        }
        Code::ModelSeqTooLong => "序列长度 {seq_len} 超过了模型的 {max} 个位置。",
        Code::ParallelCpSeq => "序列长度 {seq_len} 不是 2 × CP {cp} 的整数倍。",
        Code::ParallelCpA2aSeq => "序列长度 {seq_len} 不是 CP {cp} 的整数倍（all-to-all 上下文并行）。",
        Code::ParallelCpA2aHeads => {
            "all-to-all 上下文并行按注意力头切分：{heads} 个注意力头不能被 TP {tp} × CP {cp} 整除。"
        }
        Code::ParallelCpA2aKvHeads => {
            "Transformer Engine 的 all-to-all 上下文并行也切分 KV 头：{kv_heads} 个 KV 头不能被 TP {tp} × CP {cp} 整除。"
        }
        Code::ParallelSinksMindspeed => {
            "{framework} 没有对应模型可学习注意力 sink 的参数（Megatron-LM 的 --softmax-type learnable）。"
        }
        Code::ParallelSinksFlash => {
            "FlashAttention 不支持可学习的注意力 sink：Transformer Engine 只能用 cuDNN 融合注意力或非融合实现运行它。"
        }
        Code::ParallelSinksCpRing => {
            "上下文并行下，可学习的注意力 sink 只能用 cuDNN 融合注意力配合 all-to-all 运行，不能用 ring。"
        }
        Code::ParallelWindowCpRing => {
            "上下文并行下，滑动窗口注意力只能用 all-to-all 或 all-gather 运行，不能用 ring。"
        }
        Code::ParallelWindowCpMindspeed => {
            "序列长于模型 {window} token 的滑动窗口时，MindSpeed-LLM 不支持上下文并行。"
        }
        Code::ParallelWindowMindspeedRl => {
            "MindSpeed-RL 的模型配置没有滑动窗口参数：actor 会对整个序列做注意力，而模型只回看 {window} 个 token。"
        }
        Code::ParallelEpDense => "EP {ep} 需要 MoE 模型。",
        Code::ParallelExpertsEp => "{experts} 个专家不能被 EP {ep} 整除。",
        Code::ParallelHeadsTp => "{heads} 个注意力头不能被 TP {tp} 整除。",
        Code::ParallelKvHeadsTp => "{kv_heads} 个 KV 头既不是 TP {tp} 的倍数也不是它的约数。",
        Code::ParallelLayersPp => "{layers} 层无法均分到 PP {pp}。",
        Code::ParallelMoeTpNeedsSp => "EP 与 TP > 1 同时使用时需要开启序列并行。",
        Code::ParallelParamGatherNeeds => "--overlap-param-gather 需要分布式优化器和 --overlap-grad-reduce。",
        Code::ParallelOffloadNeedsDistributedOptimizer => {
            "优化器卸载（--optimizer-cpu-offload）需要分布式优化器。"
        }
        Code::ParallelSpWithoutTp => "TP 为 1 时序列并行不起作用（Megatron 会关闭它）。",
        Code::ParallelTpOverlapNeedsSp => "--tp-comm-overlap 需要 --sequence-parallel。",
        Code::ParallelVppLayers => "每个阶段 {layers_per_stage} 层无法分成 {vpp} 个虚拟块。",
        Code::ParallelVppNeedsPp => "VPP {vpp} 需要流水线并行（PP > 1）。",
        Code::ParallelWorld => "{world} 张卡无法分成 TP {tp} × PP {pp} × CP {cp}。",
        Code::ParallelWorldEp => "{world} 张卡无法分成 ETP {etp} × EP {ep} × PP {pp}。",
        Code::RecomputeCpuOffloadFramework => {
            "{framework} 没有 --cpu-offloading-num-layers（仅 Megatron-LM 有）：激活值仍留在设备上。"
        }
        Code::RecomputeCpuOffloadLayers => {
            "--cpu-offloading-num-layers {layers} 必须小于模型的 {n_layers} 层。"
        }
        Code::RecomputeCpuOffloadPp => "Megatron 在流水线并行（PP > 1）下不支持激活值卸载。",
        Code::RecomputeCpuOffloadRecompute => "Megatron 在开启激活重计算时不支持激活值卸载。",
        Code::RecomputeDistributeFramework => {
            "{framework} 没有 --distribute-saved-activations（仅 Megatron-LM 与 MindSpeed-LLM 支持）：每个检查点保留完整输入。"
        }
        Code::RecomputeDistributeTp => {
            "--distribute-saved-activations 需要 TP 大于 1：它把检查点切分到张量并行的各卡上。"
        }
        Code::RecomputeDistributeFull => "--distribute-saved-activations 只能与完全重计算一起使用。",
        Code::RecomputeDistributeSp => {
            "开启序列并行时必须关闭 --distribute-saved-activations：序列并行已经切分了检查点。"
        }
        Code::RecomputeModulesFp8 => "延迟缩放（delayed scaling）的 fp8 不能重计算 layernorm 或 moe_act。",
        Code::RecomputeModulesModel => "--recompute-modules {module} 需要{needs}。",
        Code::RecomputeNumLayers => "--recompute-num-layers {num_layers} 超过了每阶段的 {per_stage} 层。",
        Code::RlEngineTooSmall => "推理引擎分到的显存连权重都放不下。",
        Code::RlGpuMemoryUtilization => "gpu_memory_utilization 必须小于 1：训练也需要显存。",
        Code::RlRolloutTp => "{world} 张卡无法按推理 TP {rollout_tp} 划分。",
        Code::RlRolloutTpHeads => "{heads} 个注意力头不能被推理 TP {rollout_tp} 整除。",
        Code::RlRolloutEp => {
            "推理 EP {rollout_ep} 必须是推理 TP {rollout_tp} 的倍数（引擎的 TP × DP 个 rank），并能整除 {world} 张卡。"
        }
        Code::RlRolloutEpDense => "推理 EP {rollout_ep} 没有可切分的对象：模型没有路由专家。",
        Code::ScheduleDualpipevMicrobatches => "DualPipeV 至少需要 2 × PP 个微批，而不是 {microbatches} 个。",
        Code::VerlUlysses => "Ulysses SP {cp} 必须同时整除 {world} 张卡和 {heads} 个头。",
        Code::VerlUlyssesKvHeads => {
            "Ulysses SP {cp} 与 {kv_heads} 个 KV 头必须能互相整除（KV 头少于 SP 时会被复制）。"
        }
        Code::ParallelUnevenVpp => "非均匀流水线划分不能与 VPP 或 DualPipeV 同时使用。",
        Code::ParallelLayoutFramework => {
            "{framework} 没有流水线布局字符串（--pipeline-model-parallel-layout）。"
        }
        Code::ParallelLayoutSyntax => {
            "流水线布局在 {char} 处无法解析：E 词嵌入，t 层，m MTP 层，L 损失，| 分隔各段，(…)*n 与 x*n 表示重复。"
        }
        Code::ParallelLayoutStages => "流水线布局共 {stages} 段，不是 PP {pp} 的倍数。",
        Code::ParallelLayoutVpp => "流水线布局使每个 rank 有 {vpp} 个虚拟段，而计划的 VPP 为 {plan_vpp}。",
        Code::ParallelLayoutConflict => "流水线布局字符串不能与非均匀划分或词嵌入/损失计层同时使用。",
        Code::ParallelLayoutEnds => "流水线布局必须以词嵌入（E）开头、以损失（L）结尾，且各只出现一次。",
        Code::ParallelLayoutLayers => "流水线布局含 {count} 个解码层，而模型有 {layers} 层。",
        Code::ParallelLayoutMtp => {
            "流水线布局含 {count} 个 MTP 层，而计划训练 {mtp} 个；MTP 层须位于所有解码层之后，同在某个 rank 的最后一个虚拟段中。"
        }
        Code::MtpFramework => "{framework} 不训练 MTP 层（--mtp-num-layers）。",
        Code::PrecisionFp8ParamGather => {
            "--fp8-param-gather 以 fp8 保存权重：需要 fp8 或 MXFP8 训练，而不是 {precision}。"
        }
        Code::PrecisionGradReduceBf16 => {
            "--grad-reduce-in-bf16 只在 bf16 训练中生效；{precision} 训练会忽略它。"
        }
        Code::ParallelFp8ParamGather => {
            "--fp8-param-gather 需要分布式优化器或 Megatron FSDP；在 torch FSDP2 下 Megatron-LM 会将其关闭。"
        }
        Code::MindspeedSwapOptimizer => "--swap-optimizer 需要开启 --use-distributed-optimizer。",
        Code::MindspeedGroupLimitedEp => {
            "MindSpeed-LLM 的分组限制路由（DeepSeek-V2 的路由，每个 token 取 {top_groups} 组）要求专家并行大于 {top_groups}；当前计划 EP 为 {ep}。"
        }
        Code::MindspeedActFnLayers => {
            "--recompute-activation-function-num-layers {layers} 超过模型的 {n_layers} 层。"
        }
        Code::MindspeedActFnFullBlock => {
            "激活函数重计算与完全重计算同时开启时，需要 --recompute-method block。"
        }
        Code::LlamafactoryLayersRatioIgnored => {
            "recompute.layers_ratio 是 LLaMA-Factory（昇腾版）的参数；{framework} 会忽略它。"
        }
        Code::LlamafactoryLigerZero3 => {
            "Liger 的融合损失在输出层的前向之外读取其权重：ZeRO-3 下它可能是空分片，反向会因尺寸不匹配而失败。用 ZeRO-2，或把 stage3_param_persistence_threshold 设得足以保留整个输出层，可以避免。"
        }
        Code::LlamafactoryLayersRatioUpstream => {
            "recompute_layers_ratio 只有昇腾版 LLaMA-Factory 识别；上游 LLaMA-Factory 会因未知参数报错。"
        }
        Code::RlMiniBatch => "mini-batch {mini} 必须整除每步的 {prompts} 条 prompt。",
        Code::VerlRolloutEpNodes => {
            "开启专家并行时，VeRL 的 vLLM 引擎占满整个节点：推理 EP {rollout_ep} 不是每节点 {per_node} 张卡的倍数。"
        }
        Code::VerlMicroBatch => {
            "每张卡每个 mini-batch 的 {per_device} 条回答（{mini} 条 prompt × {n} ÷ {split} 张卡 ÷ Ulysses SP）无法按微批 {micro_batch} 划分。"
        }
        Code::VerlMiniBatchSplit => {
            "mini-batch {mini} × {n} 条回答无法均分到 actor 的 {split} 个数据并行组。"
        }
        Code::RlMeanPromptLength => "平均 prompt 长度 {mean} 个 token 超过最长 prompt {max}：按 {max} 计算。",
        Code::RlMeanResponseLength => "平均回答长度 {mean} 个 token 超过最长回答 {max}：按 {max} 计算。",
        Code::RlMaxModelLen => "vLLM max_model_len {max_model_len} 短于 prompt 加回答的长度（{tokens}）。",
        Code::RlMaxNumBatchedTokens => {
            "vLLM max_num_batched_tokens {batched} 小于 max_model_len {max_model_len}。"
        }
        Code::RlTokenBudget => {
            "打包 micro-batch 的 token 上限 {budget}（VeRL：单卡，× SP；MindSpeed-RL：整行）放不下一条 {tokens} token 的序列。"
        }
        Code::ZeroOffloadParamsNeeds3 => "参数卸载需要 ZeRO-3，而不是 ZeRO-{zero_stage}。",
        Code::ZeroOffloadOptimizerStage => {
            "DeepSpeed 只在 ZeRO-1 至 3 卸载优化器：ZeRO-{zero_stage} 下优化器状态仍留在设备上。"
        }
        Code::ZeroNvmeFramework => {
            "{framework} 只能卸载到主机内存：卸载到 NVMe 是 DeepSpeed 的功能（ZeRO-Infinity）。"
        }
        Code::ZeroNvmeStage => {
            "DeepSpeed 只在 ZeRO-3 下把状态换出到 NVMe：ZeRO-{zero_stage} 会把卸载的优化器状态留在主机内存。"
        }
        Code::ZeroNvmeNothing => "没有卸载任何状态，选择 NVMe 不起作用。",
        Code::ZeroPlusPlusStage => {
            "ZeRO++（hpZ、权重与梯度量化）只在 ZeRO-3 下生效：DeepSpeed 的 ZeRO-{zero_stage} 会忽略它。"
        }
        Code::ZeroHpzWorld => "hpZ 每组 {hpz} 个连续 rank，不能整除 {devices} 张卡。",
    }
}

/// An argument of a finding as the page says it: a framework by its name, a plan field by its
/// label, a known phrase in the page's language; anything else as the core wrote it.
fn arg(lang: Lang, name: &str, value: &str) -> String {
    use trainplan_core::plan::Framework;
    match name {
        "framework" => match Framework::from_wire(value) {
            Some(f) => f.name().to_owned(),
            None => value.to_owned(),
        },
        "method" => match Method::from_wire(value) {
            Some(m) => t(lang, method_key(m)).to_owned(),
            None => value.to_owned(),
        },
        "field" => Field::from_path(value).map_or_else(|| value.to_owned(), |f| field_label(lang, f)),
        _ => match (lang, value) {
            (Lang::Zh, "micro-batch × DP") => "微批 × DP".to_owned(),
            (Lang::Zh, "devices ÷ Ulysses SP") => "卡数 ÷ Ulysses SP".to_owned(),
            (Lang::Zh, "tied embeddings") => "共享的词嵌入与输出层".to_owned(),
            (Lang::Zh, "fewer than 2 × PP layers") => "少于 2 × PP 的层数".to_owned(),
            (Lang::Zh, "pipeline parallelism") => "流水线并行".to_owned(),
            (Lang::Zh, "expert parallelism") => "专家并行".to_owned(),
            (Lang::Zh, "the distributed optimizer") => "分布式优化器".to_owned(),
            _ => value.to_owned(),
        },
    }
}

/// Whose run a log's lines read as, in words.
pub fn log_source_key(source: trainplan_core::logparse::LogSource) -> Key {
    use trainplan_core::logparse::LogSource;
    match source {
        LogSource::Megatron => Key::logcal_source_megatron,
        LogSource::HfTrainer => Key::logcal_source_hf,
        LogSource::Verl => Key::logcal_source_verl,
        LogSource::MindSpeedRl => Key::logcal_source_mindspeed_rl,
        LogSource::DeepSpeed => Key::logcal_source_deepspeed,
    }
}

/// Plan changes as the page says them: `TP (tensor) = 4, Distributed optimizer = on`.
pub fn changes(lang: Lang, fixes: &[trainplan_core::report::Fix]) -> String {
    fixes
        .iter()
        .map(|f| format!("{} = {}", field_label(lang, f.field), value_text(lang, Some(f.field), &f.value)))
        .collect::<Vec<_>>()
        .join(", ")
}

/// A setting's value as the form shows it: a switch on or off (the optimizer too, a box there), a
/// choice by its option's words (the plan file's name where the form shows that), anything else as
/// written, without JSON's quotes.
pub fn value_text(lang: Lang, field: Option<Field>, value: &serde_json::Value) -> String {
    match value {
        serde_json::Value::Bool(on) => t(lang, if *on { Key::value_on } else { Key::value_off }).to_owned(),
        serde_json::Value::String(wire) => {
            field.and_then(|f| choice_text(lang, f, wire)).unwrap_or(wire).to_owned()
        }
        other => other.to_string(),
    }
}

/// The words the form's select gives the choice `wire` of `field`, where they are not the wire name.
fn choice_text(lang: Lang, field: Field, wire: &str) -> Option<&'static str> {
    Some(match field {
        Field::Framework => Framework::from_wire(wire)?.name(),
        Field::Method => t(lang, method_key(Method::from_wire(wire)?)),
        Field::ParallelSchedule => schedule_choice(lang, PipelineSchedule::from_wire(wire)?),
        Field::ParallelCpAlgo => cp_algo_choice(lang, CpAlgo::from_wire(wire)?),
        Field::ParallelOffloadDevice => offload_device_choice(lang, OffloadDevice::from_wire(wire)?),
        Field::ParallelFsdp => fsdp_choice(lang, Fsdp::from_wire(wire)?),
        Field::RecomputeGranularity => recompute_choice(lang, RecomputeGranularity::from_wire(wire)?),
        // The optimizer by the name its box gives it.
        Field::Optimizer => match Optimizer::from_wire(wire)? {
            Optimizer::AdamW8bit => t(lang, Key::training_adam_8bit),
            Optimizer::AdamW => "AdamW",
            Optimizer::Galore => t(lang, Key::training_galore),
            Optimizer::Apollo => t(lang, Key::training_apollo),
        },
        _ => return None,
    })
}

/// How CP exchanges, as the form's select says it.
pub fn cp_algo_choice(lang: Lang, algo: CpAlgo) -> &'static str {
    match algo {
        CpAlgo::Ring => t(lang, Key::par_cp_algo_ring),
        CpAlgo::AllToAll => t(lang, Key::par_cp_algo_alltoall),
    }
}

/// Where offloaded states go, as the form's select says it.
pub fn offload_device_choice(lang: Lang, device: OffloadDevice) -> &'static str {
    match device {
        OffloadDevice::Cpu => t(lang, Key::par_offload_device_cpu),
        OffloadDevice::Nvme => t(lang, Key::par_offload_device_nvme),
    }
}

/// An FSDP choice, as the form's select says it: off in words, a sharding by its plan-file name.
pub fn fsdp_choice(lang: Lang, fsdp: Fsdp) -> &'static str {
    match fsdp {
        Fsdp::None => t(lang, Key::par_fsdp_none),
        k => k.wire(),
    }
}

/// How much is recomputed, as the form's select says it.
pub fn recompute_choice(lang: Lang, granularity: RecomputeGranularity) -> &'static str {
    t(
        lang,
        match granularity {
            RecomputeGranularity::None => Key::rc_none,
            RecomputeGranularity::Selective => Key::rc_selective,
            RecomputeGranularity::Full => Key::rc_full,
        },
    )
}

/// A plan-file field (`parallel.tp`) by the label the form gives it; a field the form does not
/// label keeps its plan-file name.
pub fn field_label(lang: Lang, field: Field) -> String {
    if let Some(f) = crate::form::NumField::ALL.iter().find(|f| f.field() == field) {
        return t(lang, f.label()).to_owned();
    }
    match field_key(field) {
        Some(key) => t(lang, key).to_owned(),
        None => field.path().to_owned(),
    }
}

/// The label of a field the form shows other than as a typed number ([`crate::form::NumField`]);
/// every field is named, so a new one cannot be forgotten.
// Long: one arm per plan-file field, which the compiler holds to every field; split, no match would.
fn field_key(field: Field) -> Option<Key> {
    Some(match field {
        Field::Model => Key::model_title,
        Field::Hardware => Key::hw_device,
        Field::Framework => Key::training_framework,
        Field::Method => Key::training_method,
        Field::Precision => Key::training_precision,
        Field::Attention => Key::rc_attention,
        Field::LigerKernel => Key::rc_liger,
        Field::MtpLayers => Key::mtp_layers,
        Field::ParallelCpAlgo => Key::par_cp_algo,
        Field::ParallelSequenceParallel => Key::par_sp,
        Field::ParallelZeroStage => Key::par_zero,
        Field::ParallelDistributedOptimizer => Key::par_dist_opt,
        Field::ParallelOffloadOptimizer => Key::par_offload_opt,
        Field::ParallelOffloadParams => Key::par_offload_params,
        Field::ParallelOffloadDevice => Key::par_offload_device,
        Field::ParallelOverlapGradReduce => Key::par_overlap_grad,
        Field::ParallelOverlapParamGather => Key::par_overlap_param,
        Field::ParallelTpCommOverlap => Key::par_tp_overlap,
        Field::ParallelSwapOptimizer => Key::par_swap_opt,
        Field::ParallelUnevenLayers => Key::par_uneven,
        Field::ParallelSchedule => Key::par_schedule,
        Field::ParallelAccountEmbeddingLoss => Key::par_account,
        Field::ParallelGradReduceBf16 => Key::par_grad_bf16,
        Field::ParallelNoSyncAccumulation => Key::par_no_sync,
        Field::ParallelZeroHpz => Key::par_zero_hpz,
        Field::ParallelZeroQuantizedWeights => Key::par_zero_qw,
        Field::ParallelZeroQuantizedGradients => Key::par_zero_qg,
        Field::ParallelOffloadPolicy => Key::par_offload_policy,
        Field::ParallelFp8ParamGather => Key::par_fp8_params,
        Field::ParallelPipelineLayout => Key::par_layout,
        Field::ParallelFusedKernels => Key::par_fused,
        Field::ParallelFsdp => Key::par_fsdp,
        Field::MoeDispatcher => Key::moe_dispatcher,
        Field::MoeGroupedGemm => Key::moe_grouped_gemm,
        Field::MoePermuteFusion => Key::moe_permute_fusion,
        Field::MoeOverlapEpComm => Key::moe_overlap_ep_comm,
        Field::MoePadToCapacity => Key::moe_pad_to_capacity,
        Field::RecomputeGranularity => Key::rc_granularity,
        Field::RecomputeActivationFunction => Key::rc_act_fn,
        Field::RecomputeSwapAttention => Key::rc_swap_attn,
        Field::RecomputeDistributeSavedActivations => Key::rc_distribute,
        Field::RlDynamicBatch => Key::rl_dynamic_batch,
        Field::RlRemovePadding => Key::rl_remove_padding,
        Field::RlEnforceEager => Key::rl_enforce_eager,
        Field::RlBlocking => Key::rl_blocking,
        Field::RlKlLoss => Key::rl_kl_loss,
        Field::RlLora => Key::rl_lora,
        Field::LoraDora => Key::training_dora,
        Field::PureBf16 => Key::training_pure_bf16,
        Field::Optimizer => Key::training_optimizer,
        Field::LowRankLayerwise => Key::training_low_rank_layerwise,
        Field::FreezeLayers => Key::training_freeze_layers,
        Field::LaunchModelPath => Key::launch_model_path,
        Field::LaunchDataset => Key::launch_dataset,
        Field::LaunchOutputDir => Key::launch_output_dir,
        Field::LaunchMasterAddr => Key::launch_master_addr,
        Field::BudgetTokens => Key::cost_tokens,
        Field::BudgetDatasetTokens => Key::cost_dataset,
        Field::BudgetEpochs => Key::cost_epochs,
        Field::BudgetPricePerDeviceHour => Key::cost_price,
        Field::BudgetPue => Key::cost_pue,
        Field::HardwareCustomName => Key::hw_name,
        Field::HardwareCustomMemoryGb => Key::hw_memory_gb,
        Field::HardwareCustomBf16Tflops => Key::hw_bf16_tflops,
        Field::HardwareCustomMemoryTbPerS => Key::hw_memory_bw,
        Field::HardwareCustomIntraNodeGbPerS => Key::hw_intra,
        Field::HardwareCustomInterNodeGbitPerS => Key::hw_inter,
        Field::HardwareCustomBoardPowerW => Key::cost_power,
        Field::CalibrationEfficiencyScale => Key::cal_step,
        Field::CalibrationMemoryOffsetMib => Key::cal_peak,
        Field::CalibrationRolloutScale => Key::cal_rollout,
        // Typed numbers: labelled through `NumField` above.
        Field::ClusterNodes
        | Field::ClusterDevicesPerNode
        | Field::ClusterScaleUpDomain
        | Field::ClusterNvmeReadGbPerS
        | Field::ClusterNvmeWriteGbPerS
        | Field::LowRankRank
        | Field::ParallelTp
        | Field::ParallelPp
        | Field::ParallelVpp
        | Field::ParallelCp
        | Field::ParallelEp
        | Field::MoeCapacityFactor
        | Field::MoeImbalance
        | Field::RecomputeNumLayers
        | Field::RecomputeActivationFunctionLayers
        | Field::RecomputeLayersRatio
        | Field::RecomputeCpuOffloadLayers
        | Field::BatchMicroBatch
        | Field::BatchGlobalBatch
        | Field::BatchSeqLen
        | Field::BatchMeanSeqLen
        | Field::BatchImageTokens
        | Field::LoraRank
        | Field::LoraDropout
        | Field::RlRolloutTp
        | Field::RlRolloutEp
        | Field::RlNSamplesPerPrompt
        | Field::RlMaxPromptLength
        | Field::RlMaxResponseLength
        | Field::RlMeanPromptLength
        | Field::RlMeanResponseLength
        | Field::RlGpuMemoryUtilization
        | Field::RlMaxNumSeqs
        | Field::RlMiniBatch
        | Field::RlMaxTokensPerDevice
        | Field::RlLogProbMicroBatch
        | Field::RlLogProbMaxTokensPerDevice
        | Field::RlMaxModelLen
        | Field::RlMaxNumBatchedTokens
        | Field::OverheadsAllocatorReserve => return None,
        // Only in a plan file: the form has no control for these; they read as their names.
        Field::Version
        | Field::ParallelEtp
        | Field::RecomputeMethod
        | Field::RecomputeModules
        | Field::LoraAlpha
        | Field::LoraTargets
        | Field::LaunchMasterPort
        | Field::OverheadsRuntimeContextMib
        | Field::OverheadsCommBufferMib
        | Field::HardwareCustomVendor
        | Field::HardwareCustomFp16Tflops
        | Field::HardwareCustomFp8Tflops
        | Field::HardwareCustomFp4Tflops
        | Field::HardwareCustomDevicesPerNode
        | Field::HardwareCustomScaleUpDomain
        | Field::HardwareCustomGemmEfficiencyMax => return None,
    })
}

/// What a piece of advice does, and why.
pub fn advice(lang: Lang, code: Move) -> (String, String) {
    let (what, why) = match code {
        Move::DistributedOptimizer => {
            (Key::advice_distributed_optimizer, Key::advice_why_distributed_optimizer)
        }
        Move::OverlapGradReduce => (Key::advice_overlap_grad_reduce, Key::advice_why_overlap_grad_reduce),
        Move::SequenceParallel => (Key::advice_sequence_parallel, Key::advice_why_sequence_parallel),
        Move::TpCommOverlap => (Key::advice_tp_comm_overlap, Key::advice_why_tp_comm_overlap),
        Move::AscendCoc => (Key::advice_ascend_coc, Key::advice_why_ascend_coc),
        Move::FusedKernels => (Key::advice_fused_kernels, Key::advice_why_fused_kernels),
        Move::ZeroStage => (Key::advice_zero_stage, Key::advice_why_zero_stage),
        Move::ZeroStageDown => (Key::advice_zero_stage_down, Key::advice_why_zero_stage_down),
        Move::ZeroStage3 => (Key::advice_zero_stage_3, Key::advice_why_zero_stage_3),
        Move::OffloadOptimizer => (Key::advice_offload_optimizer, Key::advice_why_offload_optimizer),
        Move::OffloadParams => (Key::advice_offload_params, Key::advice_why_offload_params),
        Move::OnloadParams => (Key::advice_onload_params, Key::advice_why_onload_params),
        Move::Onload => (Key::advice_onload, Key::advice_why_onload),
        Move::OffloadToHost => (Key::advice_offload_to_host, Key::advice_why_offload_to_host),
        Move::HostOptimizer => (Key::advice_host_optimizer, Key::advice_why_host_optimizer),
        Move::RecomputeSelective => (Key::advice_recompute_selective, Key::advice_why_recompute_selective),
        Move::RecomputeFull => (Key::advice_recompute_full, Key::advice_why_recompute_full),
        Move::RecomputeLess => (Key::advice_recompute_less, Key::advice_why_recompute_less),
        Move::SwapAttention => (Key::advice_swap_attention, Key::advice_why_swap_attention),
        Move::FlashAttention => (Key::advice_flash_attention, Key::advice_why_flash_attention),
        Move::LigerKernel => (Key::advice_liger_kernel, Key::advice_why_liger_kernel),
        Move::PureBf16 => (Key::advice_pure_bf16, Key::advice_why_pure_bf16),
        Move::Adam8bit => (Key::advice_adam_8bit, Key::advice_why_adam_8bit),
        Move::Galore => (Key::advice_galore, Key::advice_why_galore),
        Move::MicroBatchUp => (Key::advice_micro_batch_up, Key::advice_why_micro_batch_up),
        Move::MicroBatchDown => (Key::advice_micro_batch_down, Key::advice_why_micro_batch_down),
        Move::MoreMicrobatches => (Key::advice_more_microbatches, Key::advice_why_more_microbatches),
        Move::Interleave => (Key::advice_interleave, Key::advice_why_interleave),
        Move::TpInNode => (Key::advice_tp_in_node, Key::advice_why_tp_in_node),
        Move::PpOverTp => (Key::advice_pp_over_tp, Key::advice_why_pp_over_tp),
        Move::CpAlgo => (Key::advice_cp_algo, Key::advice_why_cp_algo),
        Move::StackMegatron => (Key::advice_stack_megatron, Key::advice_why_stack_megatron),
        Move::CheapTogether => (Key::advice_cheap_together, Key::advice_why_cheap_together),
        Move::VerlUlysses => (Key::advice_verl_ulysses, Key::advice_why_verl_ulysses),
        Move::RolloutTpDown => (Key::advice_rollout_tp_down, Key::advice_why_rollout_tp_down),
        Move::RolloutTpUp => (Key::advice_rollout_tp_up, Key::advice_why_rollout_tp_up),
        Move::RolloutEpUp => (Key::advice_rollout_ep_up, Key::advice_why_rollout_ep_up),
        Move::MaxNumSeqsUp => (Key::advice_max_num_seqs_up, Key::advice_why_max_num_seqs_up),
        Move::PrecisionFp8 => (Key::advice_precision_fp8, Key::advice_why_precision_fp8),
        Move::LoraAllTargets => (Key::advice_lora_all_targets, Key::advice_why_lora_all_targets),
        Move::SearchBest => (Key::advice_search_best, Key::advice_why_search_best),
        Move::MegatronFsdp => (Key::advice_megatron_fsdp, Key::advice_why_megatron_fsdp),
        Move::GradReduceBf16 => (Key::advice_grad_reduce_bf16, Key::advice_why_grad_reduce_bf16),
        Move::Fp8ParamGather => (Key::advice_fp8_param_gather, Key::advice_why_fp8_param_gather),
        Move::NoSyncAccumulation => (Key::advice_no_sync, Key::advice_why_no_sync),
        Move::ZeroPlusPlus => (Key::advice_zeropp, Key::advice_why_zeropp),
        Move::VerlFsdp2 => (Key::advice_verl_fsdp2, Key::advice_why_verl_fsdp2),
        Move::LogProbSmaller => (Key::advice_log_prob_smaller, Key::advice_why_log_prob_smaller),
    };
    (t(lang, what).to_owned(), t(lang, why).to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn config_errors_read_in_both_languages() {
        let err = trainplan_core::hf::import(r#"{"model_type": "my_decoder"}"#).unwrap_err();
        assert_eq!(config_error(Lang::En, &err), "config.json has no \"hidden_size\".");
        assert_eq!(config_error(Lang::Zh, &err), "config.json 缺少 \"hidden_size\"。");
        let err = trainplan_core::hf::import(r#"{"hidden_size": "big"}"#).unwrap_err();
        assert_eq!(config_error(Lang::Zh, &err), "\"hidden_size\" 必须是整数。");
    }

    #[test]
    fn every_core_finding_has_words() {
        let text = r#"{"model": {"hf_config": {"model_type": "x", "vocab_size": 10, "hidden_size": 8,
            "intermediate_size": 16, "num_hidden_layers": 1, "num_attention_heads": 2,
            "max_position_embeddings": 4096}}}"#;
        let report = trainplan_core::evaluate(&trainplan_core::Plan::from_json(text).unwrap());
        assert_eq!(report.findings.len(), 1);
        assert_eq!(
            finding(Lang::En, &report.findings[0]),
            "Unknown model_type \"x\": read as a Llama-like decoder."
        );
        assert!(finding(Lang::Zh, &report.findings[0]).contains("未知的 model_type"));
    }

    #[test]
    fn out_of_range_reads_in_both_languages() {
        let err =
            trainplan_core::Plan::from_json(r#"{"model": "gpt2", "parallel": {"tp": 100000}}"#).unwrap_err();
        assert_eq!(plan_error(Lang::En, &err), "parallel.tp must be from 1 to 65536");
        assert_eq!(plan_error(Lang::Zh, &err), "parallel.tp 必须在 1 到 65536 之间");
        let err =
            trainplan_core::Plan::from_json(r#"{"model": "gpt2", "rl": {"gpu_memory_utilization": 2}}"#)
                .unwrap_err();
        assert_eq!(plan_error(Lang::Zh, &err), "rl.gpu_memory_utilization 必须大于 0 且不超过 1");
        // Units and large bounds read as the core writes them, in either language.
        let err =
            trainplan_core::Plan::from_json(r#"{"model": "gpt2", "overheads": {"comm_buffer_mib": -1}}"#)
                .unwrap_err();
        assert_eq!(plan_error(Lang::En, &err), "overheads.comm_buffer_mib must be from 0 to 1000000 MiB");
        assert_eq!(plan_error(Lang::Zh, &err), "overheads.comm_buffer_mib 必须在 0 到 1000000 MiB 之间");
        let err =
            trainplan_core::Plan::from_json(r#"{"model": "gpt2", "budget": {"tokens": 0}}"#).unwrap_err();
        assert_eq!(plan_error(Lang::Zh, &err), "budget.tokens 必须在 1 到 10^16 之间");
    }

    /// The optimizer reads as the form's boxes name it, in either language; plain AdamW by its name.
    #[test]
    fn the_optimizer_reads_as_its_box() {
        let text = |lang, wire: &str| value_text(lang, Some(Field::Optimizer), &serde_json::json!(wire));
        assert_eq!(text(Lang::En, "adamw"), "AdamW");
        assert_eq!(text(Lang::En, "adamw_8bit"), t(Lang::En, Key::training_adam_8bit));
        assert_eq!(text(Lang::Zh, "adamw_8bit"), t(Lang::Zh, Key::training_adam_8bit));
        assert_eq!(text(Lang::Zh, "galore"), t(Lang::Zh, Key::training_galore));
        assert_ne!(text(Lang::En, "galore"), text(Lang::En, "adamw_8bit"));
        assert_eq!(text(Lang::En, "apollo"), t(Lang::En, Key::training_apollo));
    }

    /// Every schedule the report names has its proper name in both languages (the report's names:
    /// `report::ScheduleReport::name`), and the interleaved one keeps its English word in Chinese.
    #[test]
    fn schedules_read_by_their_names() {
        let names: Vec<String> =
            ["1f1b", "interleaved", "gpipe", "zb-h1", "dualpipev"].map(|w| schedule_name(Lang::En, w)).into();
        assert_eq!(names, ["1F1B", "interleaved 1F1B", "GPipe", "ZB-H1", "DualPipeV"]);
        assert!(
            schedule_name(Lang::Zh, "interleaved").contains("交错")
                && schedule_name(Lang::Zh, "interleaved").contains("interleaved")
        );
        assert_eq!(schedule_name(Lang::Zh, "something-new"), "something-new");
    }

    #[test]
    fn changes_read_as_the_page_labels_them() {
        let fixes = [
            trainplan_core::report::Fix { field: Field::ParallelTp, value: 4.into() },
            trainplan_core::report::Fix { field: Field::ParallelDistributedOptimizer, value: true.into() },
            trainplan_core::report::Fix { field: Field::RecomputeGranularity, value: "none".into() },
        ];
        // The switch and the choice in the form's own words, not JSON's `true` and `"none"`.
        for (lang, on) in [(Lang::En, "on"), (Lang::Zh, "开")] {
            let [tp, opt, rc, none] =
                [Key::par_tp, Key::par_dist_opt, Key::rc_granularity, Key::rc_none].map(|k| t(lang, k));
            assert_eq!(changes(lang, &fixes), format!("{tp} = 4, {opt} = {on}, {rc} = {none}"));
        }
        // Megatron FSDP's sharding keeps its plan-file name; a value no select names stays as written.
        let fsdp = |lang, wire: &str| value_text(lang, Some(Field::ParallelFsdp), &wire.into());
        assert_eq!(fsdp(Lang::Zh, "optim_grads_params"), "optim_grads_params");
        assert_eq!(fsdp(Lang::En, "none"), t(Lang::En, Key::par_fsdp_none));
        assert_eq!(
            value_text(Lang::En, Some(Field::ParallelSchedule), &"something-new".into()),
            "something-new"
        );
        assert_eq!(value_text(Lang::En, None, &0.9.into()), "0.9");
    }

    /// A finding about a framework's missing degree names the framework and the field as the page
    /// does, in both languages (not `llamafactory` and `parallel.tp`).
    #[test]
    fn findings_name_frameworks_and_fields_as_the_page_does() {
        let plan =
            trainplan_core::Plan::from_json(r#"{"model": "qwen2.5-7b", "parallel": {"tp": 2}}"#).unwrap();
        let report = trainplan_core::evaluate(&plan);
        let f = report.findings.iter().find(|f| f.code == Code::HfNoModelParallel).unwrap();
        for lang in [Lang::En, Lang::Zh] {
            let text = finding(lang, f);
            assert!(text.contains("LLaMA-Factory") && text.contains(t(lang, Key::par_tp)), "{text}");
            assert!(!text.contains("llamafactory") && !text.contains("parallel.tp"), "{text}");
        }
    }

    #[test]
    fn every_finding_names_the_same_values_in_both_languages() {
        // Each code's Chinese fills exactly the arguments its English names.
        let names = |t: &str| {
            let mut v: Vec<String> =
                t.split('{').skip(1).filter_map(|p| p.split_once('}')).map(|(n, _)| n.to_owned()).collect();
            v.sort();
            v
        };
        for &code in Code::ALL {
            assert_eq!(names(code.english()), names(zh(code)), "{code}");
            assert!(!zh(code).is_empty());
        }
    }

    #[test]
    fn every_advice_of_the_core_has_words() {
        for &code in trainplan_core::advice::Move::ALL {
            for lang in Lang::ALL {
                let (what, why) = advice(lang, code);
                assert!(!what.is_empty() && what != code.name(), "{code} has no words");
                assert!(!why.is_empty(), "{code} has no why");
            }
        }
    }

    #[test]
    fn import_errors_read_in_both_languages() {
        let import = |text: &str| {
            let current = trainplan_core::Plan::first_visit().to_file();
            trainplan_core::emit::import::import(text, &current).unwrap_err()
        };
        let err = import("hello: world");
        assert!(import_error(Lang::En, &err).starts_with("Not a launch file trainplan reads"));
        assert!(import_error(Lang::Zh, &err).starts_with("不是 trainplan 能读取的启动文件"));
        let err = import("torchrun pretrain_gpt.py --tensor-model-parallel-size x\n");
        assert_eq!(import_error(Lang::En, &err), "--tensor-model-parallel-size must be a whole number.");
        assert_eq!(import_error(Lang::Zh, &err), "--tensor-model-parallel-size 必须为整数。");
        let err = import("stage: sft\ncutoff_len: -3\n");
        assert_eq!(import_error(Lang::Zh, &err), "cutoff_len 必须为正整数。");
        // The English of every phrase is the core's own.
        let err = ImportError::BadValue("k".to_owned(), Expected::FsdpSharding);
        assert_eq!(import_error(Lang::En, &err), "k must be optim, optim_grads or optim_grads_params.");
    }

    /// A MindSpeed-RL file whose packed rows only `max_packing_token_size` sizes says so in both
    /// languages, the English the core's own.
    #[test]
    fn a_caveat_reads_in_both_languages() {
        let current = trainplan_core::Plan::first_visit().to_file();
        let text = "defaults:\n  - model:\n      - qwen25_7b\nrl_config:\n  use_dynamic_bsz: true\n  max_packing_token_size: 8192\n";
        let got = trainplan_core::emit::import::import(text, &current).unwrap();
        assert_eq!(got.caveats, [Caveat::PackingRolesUnset { tokens: 8192 }]);
        let caveat = &got.caveats[0];
        assert_eq!(caveat_text(Lang::En, caveat), format!("As given, it runs otherwise: {caveat}."));
        assert!(
            caveat_text(Lang::Zh, caveat).contains("max_packing_token_size 8192"),
            "{}",
            caveat_text(Lang::Zh, caveat)
        );
    }

    #[test]
    fn refused_flags_and_the_model_read_in_both_languages() {
        let current = trainplan_core::Plan::first_visit().to_file();
        let script = "torchrun pretrain_gpt.py --tensor-model-parallel-size 2 --rotary-base 1e6 --my-flag\n";
        let got = trainplan_core::emit::import::import(script, &current).unwrap();
        let zh: Vec<String> = got.refused.iter().map(|e| flag_error(Lang::Zh, e)).collect();
        assert_eq!(
            zh,
            ["--rotary-base 应为整数，却给了 1e6", "Megatron-LM core_v0.19.0 没有 --my-flag 这个参数"]
        );
        let en: Vec<String> = got.refused.iter().map(|e| flag_error(Lang::En, e)).collect();
        assert_eq!(en, got.refused.iter().map(ToString::to_string).collect::<Vec<_>>());
        assert_eq!(got.model, ModelOrigin::Unknown);
        assert_eq!(
            model_origin(Lang::En, &got.model, "Qwen2.5-7B"),
            "Model not identified: kept Qwen2.5-7B — pick the model."
        );
        assert_eq!(
            model_origin(Lang::Zh, &got.model, "Qwen2.5-7B"),
            "未能识别模型：保留了 Qwen2.5-7B——请选择模型。"
        );
        let matched =
            ModelOrigin::Matched { from: "/models/Qwen2.5-14B-Instruct".into(), id: "qwen2.5-14b".into() };
        assert_eq!(
            model_origin(Lang::En, &matched, ""),
            "Model: Qwen2.5-14B, matched from the directory /models/Qwen2.5-14B-Instruct."
        );
        // Flags no family here builds (MindSpeed-LLM's PLM script) are named; none named, the
        // plain sentence.
        let plm = ModelOrigin::Unbuilt(vec!["--squared-relu".into()]);
        assert_eq!(
            model_origin(Lang::En, &plm, "Qwen2.5-7B"),
            "Model not identified: no family here builds the model the architecture flags describe (--squared-relu); kept Qwen2.5-7B — pick the model, or import its config.json."
        );
        assert_eq!(
            model_origin(Lang::Zh, &plm, "Qwen2.5-7B"),
            "未能识别模型：架构参数描述的模型（--squared-relu）没有可构建的模型族；保留了 Qwen2.5-7B——请选择模型，或导入其 config.json。"
        );
        assert_eq!(
            model_origin(Lang::En, &ModelOrigin::Unbuilt(Vec::new()), "Qwen2.5-7B"),
            "Model not identified: kept Qwen2.5-7B — pick the model."
        );
    }

    #[test]
    fn link_errors_read_in_both_languages() {
        let err = trainplan_core::permalink::decode("v9=abc").unwrap_err();
        assert_eq!(link_error(Lang::En, &err), "It was made by a newer version of trainplan (v9).");
        let err = trainplan_core::permalink::decode("v1=zz").unwrap_err();
        assert_eq!(link_error(Lang::Zh, &err), "链接已损坏：可能被截断或修改。");
        // An edited link with five pins (the pins are counted before any is read).
        let plan = trainplan_core::Plan::first_visit();
        let link = format!("{}{}", trainplan_core::permalink::encode(&plan), "&pin=x".repeat(5));
        let err = trainplan_core::permalink::decode_link(&link).unwrap_err();
        assert_eq!(link_error(Lang::En, &err), "It pins 5 plans; at most 4 can be compared.");
        assert_eq!(link_error(Lang::Zh, &err), "它固定了 5 个方案，最多只能对比 4 个。");
    }
}
