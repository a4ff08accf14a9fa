//! The HF path (DeepSpeed, LLaMA-Factory, VeRL's FSDP actors): model parallelism it does not have,
//! ZeRO's offloads below the stages that take them, the Megatron-only distributed optimizer, and LLaMA-Factory's
//! recomputed-layer ratio and Liger's fused loss under ZeRO-3.

use crate::field::Field;
use serde_json::Value;

use super::{Acc, Ctx};
use crate::hardware::Vendor;
use crate::plan::Framework;
use crate::report::{Code, Severity};

/// What the HF path has no flag for, or has only under ZeRO-3.
pub(super) fn check(cx: &Ctx, acc: &mut Acc) {
    use Severity::{Error, Note, Warning};
    let &Ctx { plan, p, tp, pp, cp, ep, .. } = cx;
    let model_parallel = [(Field::ParallelTp, tp), (Field::ParallelPp, pp), (Field::ParallelEp, ep)];
    // An error, not a hint: the launch file would silently train without the degree (VeRL's
    // FSDP strategy, DeepSpeed and LLaMA-Factory have none; VeRL's Megatron strategy does).
    for (field, degree) in model_parallel {
        if 1 < degree {
            acc.push(
                Error,
                Code::HfNoModelParallel,
                &[("field", field.path().to_owned()), ("framework", plan.framework.wire().to_owned())],
                Some((field, Value::from(1))),
            );
        }
    }
    if 1 < cp && plan.framework != Framework::Verl {
        acc.push(
            Error,
            Code::HfNoModelParallel,
            &[
                ("field", Field::ParallelCp.path().to_owned()),
                ("framework", plan.framework.wire().to_owned()),
            ],
            Some((Field::ParallelCp, Value::from(1))),
        );
    }
    // VeRL's FSDP engine offloads its parameters between passes at any sharding
    // (`offload_fsdp_model_to_cpu`, verl/utils/fsdp_utils.py), not DeepSpeed's ZeRO-Infinity.
    if p.offload_params && !p.zero_stage.shards_params() && plan.framework != Framework::Verl {
        // DeepSpeed `_configure_zero_optimizer` (runtime/engine.py): parameter offload is ZeRO-3 only.
        acc.push(
            Error,
            Code::ZeroOffloadParamsNeeds3,
            &[("zero_stage", p.zero_stage.to_string())],
            Some((Field::ParallelZeroStage, Value::from(3))),
        );
    }
    // DeepSpeed offloads the optimizer at ZeRO-1 to 3 alone ("Valid for ZeRO stage 1, 2, 3",
    // `offload_optimizer`, deepspeed/runtime/zero/config.py): at ZeRO-0 its engine wraps the
    // optimizer without ZeRO (`_configure_optimizer`, runtime/engine.py) and reads none of it.
    if p.offload_optimizer && !p.zero_stage.shards_optimizer() && plan.framework != Framework::Verl {
        acc.push(
            Warning,
            Code::ZeroOffloadOptimizerStage,
            &[("zero_stage", p.zero_stage.to_string())],
            Some((Field::ParallelZeroStage, Value::from(1))),
        );
    }
    if p.distributed_optimizer {
        acc.push(
            Note,
            Code::HfDistributedOptimizer,
            &[("framework", plan.framework.wire().to_owned())],
            Some((Field::ParallelDistributedOptimizer, Value::from(false))),
        );
    }
}

/// Offloading to NVMe (`parallel.offload_device: nvme`): DeepSpeed's alone (LLaMA-Factory through
/// its DeepSpeed file), by ZeRO-3's optimizer alone, and only of what is offloaded
/// (`memory::nvme_swap`).
pub(super) fn nvme(cx: &Ctx, acc: &mut Acc) {
    let &Ctx { plan, p, .. } = cx;
    if p.offload_device != crate::plan::OffloadDevice::Nvme {
        return;
    }
    let cpu = (Field::ParallelOffloadDevice, Value::from("cpu"));
    if !matches!(plan.framework, Framework::DeepSpeed | Framework::LlamaFactory) {
        let framework = [("framework", plan.framework.wire().to_owned())];
        acc.push(Severity::Warning, Code::ZeroNvmeFramework, &framework, Some(cpu));
    } else if !p.offload_optimizer && !p.offload_params {
        acc.push(Severity::Note, Code::ZeroNvmeNothing, &[], Some(cpu));
    } else if p.offload_optimizer && !p.zero_stage.shards_params() {
        acc.push(
            Severity::Warning,
            Code::ZeroNvmeStage,
            &[("zero_stage", p.zero_stage.to_string())],
            Some((Field::ParallelZeroStage, Value::from(3))),
        );
    }
}

/// DeepSpeed ZeRO++ (DeepSpeed, LLaMA-Factory through its DeepSpeed file; other frameworks have no
/// key for it, which the knobs' own finding says): read by the stage-3 engine alone
/// (`DeepSpeedZeroOptimizer_Stage3`, deepspeed/runtime/zero/stage3.py; `_configure_zero_optimizer`
/// hands the stage-1 and 2 engine none of it), and hpZ's groups of consecutive ranks must divide
/// the world (`_create_zero_param_parallel_group`, deepspeed/utils/groups.py: `_ensure_divisibility`
/// of the world by the group, taken as at most the world).
pub(super) fn zero_plus_plus(cx: &Ctx, acc: &mut Acc) {
    let &Ctx { plan, p, world, .. } = cx;
    if !p.asks_zero_plus_plus() || !matches!(plan.framework, Framework::DeepSpeed | Framework::LlamaFactory) {
        return;
    }
    if !p.zero_stage.shards_params() {
        let stage = [("zero_stage", p.zero_stage.to_string())];
        acc.push(
            Severity::Warning,
            Code::ZeroPlusPlusStage,
            &stage,
            Some((Field::ParallelZeroStage, Value::from(3))),
        );
        return;
    }
    let hpz = plan.zero_plus_plus().hpz;
    if 1 < hpz && !world.is_multiple_of(hpz) {
        // A node's devices where they divide the world (DeepSpeed's tutorial sets hpZ to them).
        let per_node = u64::from(plan.cluster.devices_per_node.get());
        let fix = match world.is_multiple_of(per_node) {
            true => per_node,
            false => super::fix::nearest_divisor(world, hpz),
        };
        let args = [("hpz", hpz.to_string()), ("devices", world.to_string())];
        acc.push(
            Severity::Error,
            Code::ZeroHpzWorld,
            &args,
            Some((Field::ParallelZeroHpz, Value::from(fix))),
        );
    }
}

/// LLaMA-Factory's `recompute_layers_ratio`: read by Ascend's packaged LLaMA-Factory only.
pub(super) fn layers_ratio(cx: &Ctx, acc: &mut Acc) {
    use Severity::{Note, Warning};
    let &Ctx { plan, hw, .. } = cx;
    if plan.recompute.layers_ratio_frac < 1.0 {
        let ratio = format!("{}", plan.recompute.layers_ratio_frac);
        if plan.framework != Framework::LlamaFactory {
            acc.push(
                Note,
                Code::LlamafactoryLayersRatioIgnored,
                &[("framework", plan.framework.wire().to_owned())],
                Some((Field::RecomputeLayersRatio, Value::from(1.0))),
            );
        } else if hw.vendor != Vendor::Ascend {
            // Ascend's packaged LLaMA-Factory reads it (`backend_config.training`; no public source);
            // upstream's `_parse_args` (src/llamafactory/hparams/parser.py) refuses keys it does not know.
            acc.push(
                Warning,
                Code::LlamafactoryLayersRatioUpstream,
                &[("ratio", ratio)],
                Some((Field::RecomputeLayersRatio, Value::from(1.0))),
            );
        }
    }
}

/// Liger's fused linear cross entropy under ZeRO-3: Liger's patched forward hands the output
/// layer's weight to the fused loss by attribute, never calling that layer, so ZeRO-3's gather hook
/// may not run and the weight is an empty shard (Liger-Kernel `fused_linear_cross_entropy.py`
/// asserts on exactly that; linkedin/Liger-Kernel issue #1048 fails in backward on Qwen3-8B and
/// passes at ZeRO-2 or with `stage3_param_persistence_threshold` raised). A warning: whether the
/// head stays whole depends on DeepSpeed's persistence threshold and the model.
pub(super) fn liger_zero3(cx: &Ctx, acc: &mut Acc) {
    let plan = cx.plan;
    if crate::memory::liger_fused_loss(plan) && plan.parallel.zero_stage.shards_params() {
        acc.push(
            Severity::Warning,
            Code::LlamafactoryLigerZero3,
            &[],
            Some((Field::ParallelZeroStage, Value::from(2))),
        );
    }
}

/// LLaMA-Factory's `pure_bf16` under ZeRO-3: the argument parser refuses it
/// (`hparams/parser.py` `get_train_args`: "`pure_bf16` is incompatible with DeepSpeed ZeRO-3.").
pub(super) fn pure_bf16_zero3(cx: &Ctx, acc: &mut Acc) {
    let plan = cx.plan;
    if plan.pure_bf16 && plan.framework == Framework::LlamaFactory && plan.parallel.zero_stage.shards_params()
    {
        let fix = (Field::PureBf16, Value::from(false));
        acc.push(Severity::Error, Code::LlamafactoryPureBf16Zero3, &[], Some(fix));
    }
}

/// 8-bit AdamW with DeepSpeed's optimizer offload: accelerate swaps any client optimizer for
/// DeepSpeed's CPU Adam before the engine starts (accelerate 1.11.0 `Accelerator._prepare_deepspeed`
/// and `map_pytorch_optim_to_deepspeed`, `utils/deepspeed.py`), with fp32 moments in host memory and,
/// for bitsandbytes' 8-bit AdamW, `adamw_mode=False`: weight decay as Adam's L2 term. A warning:
/// the run starts, with another optimizer than the one asked for. At ZeRO-0 nothing is offloaded
/// (zero.offload_optimizer_stage) and no DeepSpeed file is written.
pub(super) fn adam_8bit_offload(cx: &Ctx, acc: &mut Acc) {
    let plan = cx.plan;
    if plan.optimizer == crate::plan::Optimizer::AdamW8bit
        && plan.parallel.offload_optimizer
        && plan.parallel.zero_stage.shards_optimizer()
        && crate::memory::eight_bit_adam_offered(plan)
    {
        let fix = (Field::Optimizer, Value::from("adamw"));
        acc.push(Severity::Warning, Code::LlamafactoryAdam8bitOffload, &[], Some(fix));
    }
}

/// gpt-oss on LLaMA-Factory: loaded on the FlashAttention-3 kernel with attention sinks whatever
/// `flash_attn` says, fetched from the Hugging Face Hub as the model loads
/// (`configure_attn_implementation`, src/llamafactory/model/model_utils/attention.py:
/// `load_and_register_kernel("kernels-community/vllm-flash-attn3")`; [`crate::knobs::effective`]
/// counts that kernel).
/// Elsewhere on transformers' modules (DeepSpeed, VeRL's FSDP engine) gpt-oss has no SDPA: its
/// sinks run eager or in a FlashAttention kernel that takes them (`GptOssPreTrainedModel`,
/// transformers `models/gpt_oss/modeling_gpt_oss.py`: `_supports_sdpa = False`).
pub(super) fn gpt_oss_kernel(cx: &Ctx, acc: &mut Acc) {
    let plan = cx.plan;
    if plan.model.arch.family != crate::model::Family::GptOss {
        return;
    }
    if plan.framework == Framework::LlamaFactory {
        acc.push(Severity::Note, Code::LlamafactoryGptOssKernel, &[], None);
    } else if crate::memory::path(plan.framework) == crate::memory::Path::Hf
        && plan.attention == crate::plan::AttentionImpl::Sdpa
    {
        let flash = (Field::Attention, Value::from(crate::plan::AttentionImpl::Flash.wire()));
        acc.push(Severity::Error, Code::HfGptOssSdpa, &[], Some(flash));
    }
}

/// GaLore and APOLLO (`optimizer: galore`, `apollo`) on LLaMA-Factory: refused with DeepSpeed and
/// beside LoRA; layer-wise, refused over several devices and with gradient accumulation; under
/// mixed precision, warned of.
pub(super) fn low_rank(cx: &Ctx, acc: &mut Acc) {
    use Severity::{Error, Warning};
    let &Ctx { plan, world, .. } = cx;
    if !plan.optimizer.projects() || plan.framework != Framework::LlamaFactory {
        return;
    }
    let optimizer = [("optimizer", low_rank_name(plan.optimizer).to_owned())];
    let adamw = (Field::Optimizer, Value::from("adamw"));
    if plan.trains_lora() {
        acc.push(Error, Code::LlamafactoryLowRankLora, &optimizer, Some(adamw.clone()));
    }
    if crate::memory::runs_deepspeed(plan) {
        // ZeRO 0 drops the DeepSpeed file.
        let fix = (Field::ParallelZeroStage, Value::from(0));
        acc.push(Error, Code::LlamafactoryLowRankDeepspeed, &optimizer, Some(fix));
    }
    let stepwise = (Field::LowRankLayerwise, Value::from(false));
    if plan.low_rank.layerwise && 1 < world {
        acc.push(
            Error,
            Code::LlamafactoryLowRankLayerwiseDistributed,
            &[("devices", world.to_string()), optimizer[0].clone()],
            Some(stepwise.clone()),
        );
    }
    let microbatches = cx.mem.n_microbatches;
    if plan.low_rank.layerwise && 1 < microbatches {
        acc.push(
            Error,
            Code::LlamafactoryLowRankLayerwiseAccumulation,
            &[("microbatches", microbatches.to_string()), optimizer[0].clone()],
            Some(stepwise),
        );
    }
    if !plan.pure_bf16 && !plan.trains_lora() {
        let fix =
            (plan.precision == crate::plan::Precision::Bf16).then(|| (Field::PureBf16, Value::from(true)));
        acc.push(Warning, Code::LlamafactoryLowRankMixedPrecision, &optimizer, fix);
    }
}

/// The low-rank optimizer's name as LLaMA-Factory's messages give it.
fn low_rank_name(optimizer: crate::plan::Optimizer) -> &'static str {
    match optimizer {
        crate::plan::Optimizer::Apollo => "APOLLO",
        _ => "GaLore",
    }
}

/// QLoRA on a model with routed experts: bitsandbytes replaces `nn.Linear` modules alone, and
/// transformers 5 holds the experts as fused 3-D parameters, so they stay 16-bit (transformers
/// 5.6.0 with bitsandbytes 0.50.2: Qwen3-MoE's `Qwen3MoeExperts` unconverted; the memory counts
/// them so, docs/memory.md). A note: the 4-bit base saves memory on the other layers alone.
pub(super) fn qlora_experts(cx: &Ctx, acc: &mut Acc) {
    let plan = cx.plan;
    let packed_base = crate::quantized::kept(plan).is_some();
    if plan.method != crate::plan::Method::Qlora || cx.megatron || cx.arch.moe.is_none() || packed_base {
        return;
    }
    let counts = crate::model::count_params(cx.arch);
    let share = counts.experts as f64 / counts.total().max(1) as f64;
    acc.push(Severity::Note, Code::HfQloraExperts, &[("share", format!("{:.0}", 100.0 * share))], None);
}

/// A checkpoint stored quantized (GPTQ, AWQ, bitsandbytes). LLaMA-Factory v0.9.5 trains LoRA over
/// it as stored and checks: no ZeRO-3 (`model/model_utils/quantization.py`
/// `configure_quantization`: "DeepSpeed ZeRO-3 or FSDP is incompatible with PTQ-quantized
/// models."), LoRA only (`model/adapter.py` `init_adapter`: "Quantized models can only be used
/// for the LoRA or OFT tuning."), and `quantization_bit` ignored ("`quantization_bit` will not
/// affect on the PTQ-quantized models."). Elsewhere a note: the plan counts the 16-bit model
/// ([`crate::quantized::kept`]).
pub(super) fn prequantized(cx: &Ctx, acc: &mut Acc) {
    use crate::plan::Method;
    let plan = cx.plan;
    let Some(q) = plan.model.prequantized else {
        return;
    };
    let format = || ("format", q.name().to_owned());
    let bits = || ("bits", q.bits.to_string());
    if plan.framework != Framework::LlamaFactory {
        let framework = ("framework", plan.framework.wire().to_owned());
        acc.push(Severity::Note, Code::ModelPtq16bit, &[format(), bits(), framework], None);
        return;
    }
    // Loading the checkpoint refuses ZeRO-3 whatever the method; the adapters' setup then refuses
    // full-parameter training.
    if plan.parallel.zero_stage.shards_params() {
        let fix = (Field::ParallelZeroStage, Value::from(2));
        acc.push(Severity::Error, Code::LlamafactoryPtqZero3, &[format()], Some(fix));
    }
    if !plan.trains_lora() {
        let lora = if plan.method == Method::Dpo { Method::DpoLora } else { Method::Lora };
        let fix = (Field::Method, Value::from(lora.wire()));
        acc.push(Severity::Error, Code::LlamafactoryPtqLoraOnly, &[format()], Some(fix));
        return;
    }
    // `_setup_lora_tuning` (model/adapter.py) refuses DoRA over any stored quantization but
    // bitsandbytes', whose weights PEFT dequantizes for the norms.
    let bitsandbytes =
        matches!(q.format, crate::quantized::Format::Nf4 { .. } | crate::quantized::Format::Int8);
    if plan.lora.dora && !bitsandbytes {
        let fix = (Field::LoraDora, Value::from(false));
        acc.push(Severity::Error, Code::LlamafactoryPtqDora, &[format()], Some(fix));
    }
    if plan.method == Method::Qlora {
        let fix = (Field::Method, Value::from(Method::Lora.wire()));
        acc.push(Severity::Warning, Code::LlamafactoryPtqQuantizationBit, &[format(), bits()], Some(fix));
    }
    let bytes = ("bytes", format!("{:.3}", q.bytes_per_param()));
    acc.push(Severity::Note, Code::LlamafactoryPtqBase, &[format(), bits(), bytes], None);
}

/// The samples' mean length (`batch.mean_seq_len`), where the framework trains samples at their
/// own lengths: a mean above `seq_len`, to which LLaMA-Factory cuts every sample
/// (`data/processor/supervised.py` through `processor_utils.py` `infer_seqlen`) and MindSpeed-LLM
/// too (`DecoderPackedMTFDataset._cut_token`, unless `--no-cut-token`), counts as it; at a
/// micro-batch above 1 the collator pads each micro-batch to its longest sample (LLaMA-Factory
/// `data/collator.py`, `SFTDataCollatorWith4DAttentionMask` over transformers'
/// `DataCollatorForSeq2Seq`; MindSpeed-LLM's `DataCollatorForSeq2Seq` under
/// `--no-pad-to-seq-lengths`), so the step counts `seq_len` ([`crate::plan::Batch::trained_seq_len`]).
pub(super) fn mean_seq_len(cx: &Ctx, acc: &mut Acc) {
    let plan = cx.plan;
    let b = &plan.batch;
    let knob = crate::knobs::Knob::MeanSeqLen;
    if b.mean_seq_len == 0 || !crate::knobs::applies(plan.framework, plan.method, knob).yes() {
        return;
    }
    let (mean, seq) = (b.mean_seq_len.to_string(), b.seq_len.to_string());
    if b.seq_len.get() < b.mean_seq_len {
        let fix = (Field::BatchMeanSeqLen, Value::from(b.seq_len.get()));
        acc.push(
            Severity::Warning,
            Code::BatchMeanSeqLen,
            &[
                ("mean", mean.clone()),
                ("seq_len", seq.clone()),
                ("framework", plan.framework.wire().to_owned()),
            ],
            Some(fix),
        );
    }
    if 1 < b.micro_batch.get() {
        let args = [("micro_batch", b.micro_batch.to_string()), ("mean", mean), ("seq_len", seq)];
        let code = match plan.framework {
            Framework::MindSpeedLlm => Code::MindspeedMeanSeqPadded,
            _ => Code::LlamafactoryMeanSeqPadded,
        };
        acc.push(Severity::Note, code, &args, Some((Field::BatchMicroBatch, Value::from(1))));
    }
}
