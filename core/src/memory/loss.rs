//! The logits and the loss at the end of the model: the output layer's logits, Liger's fused loss,
//! and plain PyTorch's step moment by moment (docs/memory.md, "Logits", "A plain PyTorch step"
//! and "Liger's kernels").

use super::*;
use crate::model::MlpKind;
use crate::plan::{RecomputeGranularity, RecomputeMethod};

/// Logits and loss on the last stage, one micro-batch.
///
/// Megatron: the output layer's bf16 logits (2sbV/t) and the vocab-parallel cross entropy's fp32
/// softmax (4sbV/t) (`tensor_parallel/cross_entropy.py` saves `exp_logits`). HF path: bf16 logits,
/// their fp32 upcast and the fp32 log-softmax the loss saves, 10sbV in forward (4sbV saved:
/// tools/hf_activations); the HF `Trainer`'s loss peaks higher in its backward, 12sbV: the saved
/// log-softmax and the two fp32 gradients the autograd engine makes of it (tools/gpu_peak traced
/// it on an H200), which is LLaMA-Factory's. Other HF-path trainers (a DeepSpeed `train.py`)
/// compute their own loss: 10sbV. VeRL takes its log-probabilities through a fused cross entropy,
/// flash-attn's Triton kernel on NVIDIA (`cross_entropy_loss` with `inplace_backward`, which writes
/// the gradient over the logits it keeps) or torch_npu's `npu_cross_entropy_loss` on Ascend
/// (verl 0.9.1 `logprobs_from_logits`, verl/utils/torch_functional.py): the bf16 logits alone, 2sbV.
///
/// Liger's fused linear cross entropy (LLaMA-Factory with `enable_liger_kernel`, pre-training and
/// SFT) never holds the logits: [`liger_loss_bytes`].
pub(super) fn logits_bytes(ctx: &Ctx) -> u64 {
    let tokens_v = tokens_v(ctx);
    let cap = softcap_bytes(ctx);
    match ctx.path {
        Path::Megatron => tokens_v.saturating_mul(6).saturating_add(cap) / ctx.tp,
        // DeepSpeed runs the module in its 16-bit dtype; fp32 training keeps fp32.
        Path::Hf if liger_fused_loss(ctx.plan) => {
            liger_loss_bytes(ctx, if ctx.plan.precision == Precision::Fp32 { 4 } else { 2 }).total()
        }
        Path::Hf if hf_trainer_loss(ctx.plan) => tokens_v.saturating_mul(12).saturating_add(cap),
        Path::Hf if ctx.plan.framework == Framework::Verl => tokens_v.saturating_mul(2).saturating_add(cap),
        Path::Hf => tokens_v.saturating_mul(10).saturating_add(cap),
    }
}

/// What Gemma 2's soft cap on the logits keeps beside them (before the TP split), one micro-batch:
/// `logits / cap`, `tanh`, `× cap` (transformers `Gemma2ForCausalLM.forward`; MindSpeed-LLM's
/// `GPTModel.forward` under `--output-logit-softcapping`, mindspeed_llm/core/models/gpt/gpt_model.py),
/// of which the tanh saves its 16-bit output for backward until the loss's gradient reaches it:
/// 2sbV more in the loss's forward and in its backward. The division's and the product's outputs
/// are saved by neither (a product by a number keeps no tensor). Liger's fused loss caps inside
/// its chunks and keeps no logits; a Megatron-family script other than MindSpeed-LLM's Gemma 2
/// spec applies no cap (`emit::megatron::builds_gemma2`).
fn softcap_bytes(ctx: &Ctx) -> u64 {
    let applied = match ctx.path {
        Path::Megatron => crate::emit::megatron::builds_gemma2(ctx.plan),
        Path::Hf => !liger_fused_loss(ctx.plan),
    };
    match ctx.arch.logit_softcap && applied {
        true => tokens_v(ctx).saturating_mul(2),
        false => 0,
    }
}

/// The planner's families Liger's kernels patch, as (family, by LLaMA-Factory, by VeRL).
/// LLaMA-Factory picks an `apply_liger_kernel_to_*` by `model_type`
/// (`src/llamafactory/model/model_utils/liger_kernel.py`: `glm` and `glm4`, `llama`, `mistral`,
/// `mixtral`, `qwen2`, `qwen3`, `qwen3_moe`, `gpt_oss` among the types it lists); VeRL's
/// `use_liger` asks Liger to patch the model instance (`_apply_liger_kernel_to_instance`,
/// `MODEL_TYPE_TO_APPLY_LIGER_FN` in `liger_kernel/transformers/monkey_patch.py`, liger-kernel
/// 0.8.5: no `glm`, but DeepSeek's and `gpt_oss`). Neither lists `qwen2_moe` or `glm4_moe`. Any
/// other model trains unpatched. gpt-oss's patch leaves its experts as they are (`swiglu=False`
/// in `apply_liger_kernel_to_gpt_oss`: their clamped SwiGLU is its own): [`liger_fuses_experts`].
/// Both list `qwen3_next` (LLaMA-Factory 0.9.5; liger-kernel 0.8.5 `apply_liger_kernel_to_qwen3_next`:
/// its zero-centred RMSNorms, the fused loss, the routed and shared experts' SwiGLU; its rotary
/// embedding left as it is, `rope=False`: [`liger_patches_rope`]) and Qwen3.5 (LLaMA-Factory its
/// dense `qwen3_5` alone, liger-kernel both, `apply_liger_kernel_to_qwen3_5` and `_qwen3_5_moe`,
/// `rope=False` too). Both patch Gemma 2 and Gemma 3 (LLaMA-Factory `gemma2`, `gemma3_text`,
/// `gemma3`; liger-kernel `apply_liger_kernel_to_gemma2`, `_gemma3_text`, `_gemma3`: their
/// offset RMSNorms, GeGLU and fused loss), and Phi-3 (LLaMA-Factory `phi3`; liger-kernel
/// `apply_liger_kernel_to_phi3`: RMSNorm, its fused gate and up through Liger's SwiGLU, rotary
/// embedding, the fused loss). Qwen2-VL and Qwen2.5-VL, whose language model is read as `qwen2`
/// (`model::Family::from_model_type`), are patched by their own types' entries in both
/// (LLaMA-Factory `qwen2_vl`, `qwen2_5_vl`; liger-kernel `apply_liger_kernel_to_qwen2_vl` and
/// `_qwen2_5_vl` in `MODEL_TYPE_TO_APPLY_LIGER_FN`).
pub(super) const LIGER_PATCHED: &[(model::Family, bool, bool)] = &[
    (model::Family::Glm, true, false),
    (model::Family::Glm4, true, true),
    (model::Family::Llama, true, true),
    (model::Family::Mistral, true, true),
    (model::Family::Mixtral, true, true),
    (model::Family::Qwen2, true, true),
    (model::Family::Qwen3, true, true),
    (model::Family::Qwen3Moe, true, true),
    (model::Family::DeepseekV2, false, true),
    (model::Family::DeepseekV3, false, true),
    (model::Family::GptOss, true, true),
    (model::Family::Qwen3Next, true, true),
    (model::Family::Gemma2, true, true),
    (model::Family::Gemma3, true, true),
    (model::Family::Qwen35, true, true),
    (model::Family::Qwen35Moe, false, true),
    (model::Family::Phi3, true, true),
];

/// Whether Liger's patch of `family` replaces its rotary embedding: every patch but Qwen3-Next's
/// and Qwen3.5's (`apply_liger_kernel_to_qwen3_next(rope=False, …)` and its Qwen3.5 ones,
/// liger-kernel 0.8.5, which neither LLaMA-Factory nor VeRL overrides).
pub(crate) fn liger_patches_rope(family: model::Family) -> bool {
    !family.has_linear_attention()
}

/// Whether Liger's patch of `family` runs its routed experts through its fused kernel
/// (`LigerExperts`): every patched MoE family's but gpt-oss's, whose patch keeps its own experts
/// (`apply_liger_kernel_to_gpt_oss`: RMSNorm, rotary embedding and the fused loss alone).
pub(crate) fn liger_fuses_experts(family: model::Family) -> bool {
    family != model::Family::GptOss
}

/// Whether the plan's HF modules run Liger's kernels: LLaMA-Factory's `enable_liger_kernel` or
/// VeRL's `use_liger` on a model type it patches ([`liger_patches`]): fused RMSNorm, SwiGLU, rotary
/// embedding and, under transformers 5, MoE experts.
pub(crate) fn liger(plan: &Plan) -> bool {
    plan.liger_kernel && liger_patches_model(plan)
}

/// Whether the plan's framework patches its model with Liger's kernels ([`liger_patches`]). Both
/// pick the patch by `model_type`, so a config whose `model_type` is unknown (read Llama-like) is
/// not patched: LLaMA-Factory logs that the model does not support Liger and trains on. Nor is
/// Qwen3-VL, read as Qwen3 (or Qwen3-MoE): LLaMA-Factory's list has no `qwen3_vl` or
/// `qwen3_vl_moe`, and liger-kernel's `apply_liger_kernel_to_qwen3_vl` (VeRL's) leaves the MLP
/// unfused (`swiglu=False`), a patch the planner does not model.
pub(crate) fn liger_patches_model(plan: &Plan) -> bool {
    let unknown =
        plan.model.warnings.iter().any(|w| matches!(w, crate::hf::ImportWarning::UnknownModelType(_)));
    let family = plan.model.arch.family;
    let qwen3 = matches!(family, model::Family::Qwen3 | model::Family::Qwen3Moe);
    !unknown && liger_patches(plan.framework, family) && !(qwen3 && is_qwen3_vl(plan))
}

/// Whether the plan's model is a Qwen3-VL config ([`liger_patches_model`]), read as Qwen3 or
/// Qwen3-MoE. Out of line: the estimate asks it only of those families with Liger on.
#[inline(never)]
fn is_qwen3_vl(plan: &Plan) -> bool {
    match &plan.model.spec {
        crate::plan::ModelSpec::HfConfig(config) => {
            let model_type = config.get("model_type").and_then(serde_json::Value::as_str);
            matches!(model_type, Some("qwen3_vl" | "qwen3_vl_text" | "qwen3_vl_moe" | "qwen3_vl_moe_text"))
        }
        crate::plan::ModelSpec::Catalog(_) => false,
    }
}

/// Whether `framework` patches a model of `family` with Liger's kernels ([`LIGER_PATCHED`]).
pub(crate) fn liger_patches(framework: Framework, family: model::Family) -> bool {
    LIGER_PATCHED.iter().any(|&(f, llamafactory, verl)| {
        f == family
            && match framework {
                Framework::LlamaFactory => llamafactory,
                Framework::Verl => verl,
                _ => false,
            }
    })
}

/// Whether the loss is also Liger's fused linear cross entropy: LLaMA-Factory asks for whole logits
/// (`require_logits`) in every stage but pre-training and SFT (`src/llamafactory/model/loader.py`:
/// `finetuning_args.stage not in ["pt", "sft"]`), and then applies Liger's plain cross entropy,
/// which DPO's and PPO's own losses do not call.
///
/// VeRL's actor calls the patched forward without labels, so Liger computes the whole logits there
/// (`lce_forward` skips them only when it has labels to train on): its loss is unchanged.
pub(crate) fn liger_fused_loss(plan: &Plan) -> bool {
    liger(plan)
        && plan.framework == Framework::LlamaFactory
        && matches!(
            plan.method,
            Method::Pretrain | Method::SftFull | Method::Lora | Method::Qlora | Method::Freeze
        )
}

/// What Liger's fused linear cross entropy holds for one micro-batch of `b·s` tokens
/// (`liger_kernel/ops/fused_linear_cross_entropy.py`, `fused_linear_cross_entropy_forward`): it
/// runs the head and the loss chunk by chunk in forward, each chunk's logits (`chunk_size` tokens ×
/// V, in the matmul's 16-bit output) turned into their gradient in place, and keeps only the
/// hidden state's gradient (`grad_input`, the input's dtype: `hidden_bytes` a unit) and the fp32
/// loss per token for backward. The chunk holds about as many logits as the hidden state has
/// units: `inc_factor = ⌈V / h⌉`, `chunk_size = next_power_of_2(⌈b·s / inc_factor⌉)`, at most b·s.
pub(super) fn liger_loss_bytes(ctx: &Ctx, hidden_bytes: u64) -> LigerLoss {
    let (b, seq) = micro_batch_shape(ctx);
    let tokens = b.saturating_mul(seq);
    let (v, h) = (ctx.arch.vocab_size, ctx.arch.hidden_size.max(1));
    let inc_factor = v.div_ceil(h).max(1);
    let chunk = tokens.div_ceil(inc_factor).checked_next_power_of_two().unwrap_or(u64::MAX).min(tokens);
    let logit_bytes = if ctx.plan.precision == Precision::Fp32 { 4 } else { 2 };
    LigerLoss {
        chunk_logits: chunk.saturating_mul(v).saturating_mul(logit_bytes),
        grad_input: tokens.saturating_mul(h).saturating_mul(hidden_bytes),
        loss: tokens.saturating_mul(4),
    }
}

/// The fused loss's buffers ([`liger_loss_bytes`]).
pub(super) struct LigerLoss {
    /// One chunk's logits, their gradient written over them.
    pub(super) chunk_logits: u64,
    /// The gradient of the hidden state the head reads, kept for backward.
    pub(super) grad_input: u64,
    /// The fp32 loss of each token.
    pub(super) loss: u64,
}

impl LigerLoss {
    /// Everything held at once in forward.
    pub(super) fn total(&self) -> u64 {
        self.chunk_logits.saturating_add(self.grad_input).saturating_add(self.loss)
    }
}

/// Whether the plan's loss is the HF `Trainer`'s (transformers' `ForCausalLMLoss`): LLaMA-Factory's.
/// Memory (its backward's 12sbV) and time (its fp32 passes) both read it.
pub(crate) fn hf_trainer_loss(plan: &Plan) -> bool {
    plan.framework == Framework::LlamaFactory
}

/// Tokens times the vocabulary of one micro-batch: the logits' elements.
pub(super) fn tokens_v(ctx: &Ctx) -> u64 {
    let (b, seq) = micro_batch_shape(ctx);
    // Saturating: 65,536 sequences of 10^7 tokens over a 10^7 vocabulary pass 2^64 bytes.
    b.saturating_mul(seq).saturating_mul(ctx.arch.vocab_size)
}

/// Whether an HF-path run hands its step to DeepSpeed: ZeRO shards (LLaMA-Factory writes a
/// DeepSpeed file then, `emit::llamafactory`; DeepSpeed offloads nothing at ZeRO-0, so an offload
/// asked there writes none: `knobs::effective`).
pub(crate) fn runs_deepspeed(plan: &Plan) -> bool {
    plan.parallel.zero_stage.shards_optimizer()
}

/// Whether the step runs under plain PyTorch, its allocations known moment by moment: LLaMA-Factory
/// without DeepSpeed (ZeRO 0, nothing offloaded; PyTorch DDP over several devices), fine-tuning or
/// pre-training with its HF `Trainer`. tools/gpu_peak measured it on one device.
pub(crate) fn plain_torch(plan: &Plan) -> bool {
    runs_plain_torch(plan.framework, plan.method, runs_deepspeed(plan))
}

/// Whether a step runs under plain PyTorch (LLaMA-Factory's `Trainer` without DeepSpeed, fine-tuning
/// or pre-training), from its framework, method and whether it hands its step to DeepSpeed: the
/// plan's (`plain_torch`) and a plan file's alike ([`crate::choices::plain_torch`]).
pub fn runs_plain_torch(framework: Framework, method: Method, deepspeed: bool) -> bool {
    framework == Framework::LlamaFactory
        && !deepspeed
        && matches!(
            method,
            Method::Pretrain | Method::SftFull | Method::Lora | Method::Qlora | Method::Freeze
        )
}

/// Whether a plain PyTorch step ([`plain_torch`]) trains fp32 parameters: LLaMA-Factory casts the
/// trainable parameters to fp32 (`model/adapter.py`, `cast_trainable_params_to_fp32`) unless
/// `pure_bf16` keeps them bf16, which it reads with bf16 compute (`hparams/parser.py`:
/// `compute_dtype` bf16). Under DeepSpeed the engine keeps its own fp32 master weights either way.
pub(crate) fn fp32_trainables(plan: &Plan) -> bool {
    plain_torch(plan) && !(plan.pure_bf16 && plan.precision == Precision::Bf16)
}

/// A plain PyTorch step's bytes at its peak moment, from `states` (weights, every gradient,
/// optimizer states, buffers and overhead, as `stage_states` gives them for this path), the
/// activations' shape and the logits.
///
/// The terms of the additive paths peak at different moments; here each term is what is allocated
/// at the step's highest moment of three (tools/gpu_peak traced the allocator through a step of
/// eight runs and found each run's peak at the moment this picks):
/// - the loss in forward: autocast's bf16 copies of every fp32 weight it cast (held until the
///   forward leaves autocast; `torch.autocast` caches casts of leaf tensors that require grad), the
///   saved activations, and the loss's bf16 logits, their fp32 upcast and its fp32 log-softmax
///   (10sbV);
/// - the loss's backward: the saved activations, the saved log-softmax (4sbV) and the two fp32
///   gradients the autograd engine makes of it (8sbV); without checkpointing the cast weights
///   are still saved for backward;
/// - the end of backward: every gradient, and the first layer's activations (recomputed, or kept
///   without checkpointing).
///
/// Gradients are set to `None` between steps (`Trainer` zeroes with `set_to_none`), so the first
/// two moments hold none.
pub(super) fn plain_torch_peak(
    ctx: &Ctx,
    states: &StageMemory,
    act: &ActivationShape,
) -> (StageMemory, PeakMoment) {
    let (plan, arch) = (ctx.plan, ctx.arch);
    // One micro-batch in flight: the HF path has no pipeline.
    let (b, seq) = micro_batch_shape(ctx);
    let tokens = b.saturating_mul(seq);
    let logits = |k: u64| tokens_v(ctx).saturating_mul(k).saturating_add(softcap_bytes(ctx));
    let (h, layers) = (arch.hidden_size, states.n_layers);
    // Autocast casts fp32 parameters to 16 bits; with `pure_bf16` they are bf16 already, and the
    // step saves and keeps what a 16-bit model does ([`fp32_trainables`]).
    let autocast = plan.precision != Precision::Fp32 && ctx.fp32_trainables;
    // Freeze-tuning trains fp32 layers on a frozen 16-bit embedding and head: the residual stream
    // stays 16-bit, and only the trained layers' weights are cast.
    let freeze = plan.method == Method::Freeze;
    let full = !plan.trains_lora() && !freeze;
    let fp32_layers = match (full, trained_layers(plan)) {
        (true, _) => layers,
        (false, Some(trained)) => (trained.end - trained.start).min(layers),
        (false, None) => 0,
    };
    // Checkpointing as the activations count it: every layer keeps only its input under full
    // recomputation; selective keeps the layers' tensors less the attention's.
    let checkpointed = plan.recompute.granularity == RecomputeGranularity::Full;
    // Full fine-tuning casts the embedding to fp32 too, and its lookup is no autocast operator: the
    // residual stream is fp32 (each block's 16-bit output promotes to it in the residual add), so
    // every checkpoint keeps 4sbh, not 2sbh (traced: twice the hidden bytes a layer in the three
    // checkpointed full fine-tuning runs, once in the LoRA ones).
    let fp32_stream = checkpointed
        && plan.recompute.method == RecomputeMethod::Uniform
        && 1.0 <= plan.recompute.layers_ratio_frac
        && full
        && autocast;
    // With fp32 weights under autocast (full fine-tuning in 16 bits) a norm's output is fp32, and
    // each linear layer that reads it casts and saves its own 16-bit copy where a 16-bit model
    // saves one shared input: 2 bytes per token and hidden unit more for each (tools/hf_activations
    // `autocast.py` on Llama shapes: 10h a layer more, for q, k, v, gate and up).
    let cast_inputs = match 0 < fp32_layers && autocast {
        true => cast_input_bytes(arch).saturating_mul(tokens),
        false => 0,
    };
    // LoRA under autocast (fp32 adapters on a frozen 16-bit base) saves differently from a trained
    // 16-bit layer: each adapter keeps its own 16-bit copy of its input for `lora_A`'s gradient (2
    // bytes per input unit) and its rank-wide output, while the frozen base keeps no norm output
    // (the norms' weights are frozen: 2 · 4h) and no input of the down projection (2f). Counted
    // for LoRA (QLoRA's 4-bit base runs bitsandbytes' own matmul) on the Llama layout (separate
    // q, k, v; gated MLP; no routed experts), where tools/hf_activations `autocast.py` measures
    // it: 5.4h a layer more at Llama-3.2-1B's widths, of which 1.4h the adapters' weight copies at
    // 256 tokens. It may be negative: adapters on a few modules save less than the base trained.
    let llama_layout = arch.moe.is_none()
        && matches!(arch.attention, model::Attention::Gqa { fused_qkv: false, .. })
        && arch.mlp.kind == MlpKind::Gated;
    let lora_layer = match plan.method == Method::Lora && autocast && llama_layout {
        true => {
            let (inputs, modules) = ctx.lora_inputs;
            let rank = f64::from(plan.lora.rank.get());
            let per_token = (2.0 * inputs as f64 + 2.0 * rank * modules as f64) / arch.n_layers.max(1) as f64
                - 8.0 * h as f64
                - 2.0 * arch.mlp.intermediate_size as f64;
            per_token * tokens as f64
        }
        false => 0.0,
    };
    let saved = match checkpointed {
        true => (act.per_microbatch * if fp32_stream { 2.0 } else { 1.0 }) as u64,
        false => ((act.per_microbatch + lora_layer * layers as f64).max(0.0) as u64)
            .saturating_add(cast_inputs.saturating_mul(fp32_layers)),
    };
    let first_layer = ((act.first_layer + lora_layer).max(0.0) as u64).saturating_add(cast_inputs);
    // Autocast casts the weights of the linear layers and the output head (not the input
    // embedding's lookup) to 16 bits; fp32 training casts nothing. Norm weights, a few thousand a
    // layer, are counted with them.
    let cast = match (autocast, full) {
        (false, _) => 0,
        (true, false) if freeze => ctx.freeze_params.saturating_mul(2),
        (true, false) => ctx.lora_params.saturating_mul(2),
        (true, true) => {
            let embedding = if arch.tied_embeddings { 0 } else { ctx.summary.counts.embedding };
            states.params.saturating_sub(embedding).saturating_mul(2)
        }
    };
    let at = |weights: u64, gradients: u64, activations: u64, logits: u64| StageMemory {
        weights_bytes: weights,
        gradients_bytes: gradients,
        activations_bytes: activations,
        logits_bytes: logits,
        offloaded_activations_bytes: 0,
        ..states.clone()
    };
    let w = states.weights_bytes;
    let backward_end = at(w, states.gradients_bytes, first_layer, 0);
    let dora_moment = dora_peak(ctx, (states, w, cast), saved, first_layer, checkpointed);
    let kept_casts = if checkpointed { 0 } else { cast };
    if liger_fused_loss(plan) {
        let head_gradient = if full { arch.vocab_size.saturating_mul(h).saturating_mul(4) } else { 0 };
        let recomputed = if checkpointed { first_layer } else { 0 };
        // The hidden state is fp32 where the residual stream is: fp32 training, or full fine-tuning
        // under autocast (fp32 weights).
        let hidden_fp32 = plan.precision == Precision::Fp32 || (full && autocast);
        let loss = liger_loss_bytes(ctx, if hidden_fp32 { 4 } else { 2 });
        let peak = liger_peak(
            |weights, activations, logits| at(w.saturating_add(weights), head_gradient, activations, logits),
            (cast, kept_casts),
            (saved, recomputed),
            &loss,
            backward_end,
        );
        return higher(peak, dora_moment);
    }
    let forward = at(w.saturating_add(cast), 0, saved, logits(10));
    let loss_backward = at(w.saturating_add(kept_casts), 0, saved, logits(12));
    let peak = highest([
        (forward, PeakMoment::Forward),
        (loss_backward, PeakMoment::LossBackward),
        (backward_end, PeakMoment::BackwardEnd),
    ]);
    higher(peak, dora_moment)
}

/// The bytes per token a layer of fp32 weights under autocast saves more than a 16-bit one: each
/// linear layer that reads a norm's fp32 output keeps its own 16-bit copy of it (q, k and v apart,
/// or fused; MLA's query and compressed key/value projections; gate and up apart, or fused as
/// GLM's and Phi-3's `gate_up_proj`, or the one up).
fn cast_input_bytes(arch: &Architecture) -> u64 {
    let attention = match arch.attention {
        model::Attention::Gqa { fused_qkv: true, .. } => 1,
        model::Attention::Gqa { .. } => 3,
        model::Attention::Mla { .. } => 2,
    };
    let mlp = if arch.mlp.kind == MlpKind::Gated && !arch.mlp.fused_gate_up { 2 } else { 1 };
    2 * (attention + mlp) * arch.hidden_size
}

/// The moment DoRA's norms take their workspace (`dora_workspace_bytes`), in each adapted module's
/// forward: without checkpointing in the last layer's forward (every layer's activations `saved`, no
/// logits yet); under it, at the latest when the last layer is recomputed after the loss's backward
/// (the checkpoints saved and that layer's activations, `first_layer`'s, no logits). `None` without
/// DoRA. `weights` is the stage's resident weights, `cast` autocast's 16-bit copies in forward.
fn dora_peak(
    ctx: &Ctx,
    (states, weights, cast): (&StageMemory, u64, u64),
    saved: u64,
    first_layer: u64,
    checkpointed: bool,
) -> Option<(StageMemory, PeakMoment)> {
    let dora = dora_workspace_bytes(ctx);
    let (weights, activations, moment) = match checkpointed {
        true => (weights, saved.saturating_add(first_layer), PeakMoment::LayerBackward),
        false => (weights.saturating_add(cast), saved, PeakMoment::Forward),
    };
    let stage = StageMemory {
        weights_bytes: weights,
        gradients_bytes: 0,
        activations_bytes: activations.saturating_add(dora),
        logits_bytes: 0,
        offloaded_activations_bytes: 0,
        ..states.clone()
    };
    (0 < dora).then_some((stage, moment))
}

/// A plain PyTorch step's peak behind Liger's fused loss, from `at` (a moment's bytes from its extra
/// weights, activations and loss buffers), autocast's copies in forward and those kept for backward,
/// the saved activations and the last layer recomputed, the loss's buffers and the end of backward.
///
/// In forward the fused loss holds a chunk of logits, the hidden state's gradient (fp32 where the
/// residual stream is: full fine-tuning under autocast) and, when the head is trained, its weight's
/// gradient made in forward (`grad_weight`, the weight's fp32), kept until backward hands it to the
/// parameter (`at` adds that to every moment but the last). Its backward only scales what it kept;
/// the last layer's backward (recomputed under checkpointing) comes next.
pub(super) fn liger_peak(
    at: impl Fn(u64, u64, u64) -> StageMemory,
    (cast, kept_casts): (u64, u64),
    (saved, recomputed): (u64, u64),
    loss: &LigerLoss,
    backward_end: StageMemory,
) -> (StageMemory, PeakMoment) {
    let forward = at(cast, saved, loss.total());
    let layer_backward = at(kept_casts, saved.saturating_add(recomputed), loss.grad_input);
    highest([
        (forward, PeakMoment::Forward),
        (layer_backward, PeakMoment::LayerBackward),
        (backward_end, PeakMoment::BackwardEnd),
    ])
}

/// `peak`, or `other` where it holds more bytes.
fn higher(
    peak: (StageMemory, PeakMoment),
    other: Option<(StageMemory, PeakMoment)>,
) -> (StageMemory, PeakMoment) {
    match other {
        Some(other) if other.0.total() > peak.0.total() => other,
        _ => peak,
    }
}

/// The moment with the most bytes (the first of equals).
pub(super) fn highest(moments: [(StageMemory, PeakMoment); 3]) -> (StageMemory, PeakMoment) {
    let [first, rest @ ..] = moments;
    rest.into_iter().fold(first, |a, b| if b.0.total() > a.0.total() { b } else { a })
}
