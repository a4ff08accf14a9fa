//! Model states per rank: weights, gradients and optimizer states by parameter group, as each
//! framework shards them (ZeRO, the distributed optimizer, FSDP), keeps them in low precision or
//! quantized, or casts them for compute (docs/memory.md, "Model states").

use super::*;
use crate::plan::ZeroStage;

/// Whether Megatron keeps and reduces its gradients in bf16 (`--grad-reduce-in-bf16`): only in bf16
/// training (fp8 and fp4 among it), where it turns `accumulate_allreduce_grads_in_fp32` off
/// (megatron/training/arguments.py at core_v0.19.0), so the main-gradient buffer takes the
/// parameters' bf16 (`DistributedDataParallelConfig.grad_reduce_in_fp32`), 2 bytes instead of 4.
pub(crate) fn bf16_gradients(plan: &Plan) -> bool {
    path(plan.framework) == Path::Megatron && plan.parallel.grad_reduce_bf16 && bf16_training(plan.precision)
}

/// Training on bf16 parameters: bf16 itself, and fp8 and fp4, whose Megatron recipes run beside
/// `--bf16` (`emit::megatron`'s precision flags).
pub(crate) fn bf16_training(precision: Precision) -> bool {
    matches!(precision, Precision::Bf16 | Precision::Fp8 | Precision::Mxfp8 | Precision::Nvfp4)
}

/// Whether `plan` can keep Transformer Engine's fp8 parameters as [`fp8_parameters`] counts them:
/// fp8 or MXFP8 training (`--fp4-param-gather` is NVFP4's own), with the distributed optimizer or
/// a Megatron FSDP that leaves the parameters whole (Megatron-LM `validate_args` at core_v0.19.0
/// asks for one of them, and turns the gather off under torch FSDP2; parameter-sharded FSDP is not
/// modelled this way).
pub(crate) fn fp8_parameters_fit(plan: &Plan) -> bool {
    use crate::plan::Fsdp;
    let p = &plan.parallel;
    let sharded =
        (p.distributed_optimizer && p.fsdp == Fsdp::None) || matches!(p.fsdp, Fsdp::Optim | Fsdp::OptimGrads);
    matches!(plan.precision, Precision::Fp8 | Precision::Mxfp8) && sharded
}

/// Model-state bytes per device for `n_params` parameters under DeepSpeed ZeRO over `dp` ranks
/// (ZeRO paper Fig. 1: baseline (2 + 2 + K)Ψ; P_os 4Ψ + KΨ/N; P_os+g 2Ψ + (2 + K)Ψ/N; P_os+g+p (2 + 2 + K)Ψ/N).
pub fn zero_model_states(n_params: f64, bytes: StateBytes, zero_stage: ZeroStage, dp: u64) -> StateBytes {
    let dp = dp.max(1) as f64;
    let shard = |sharded: bool, x: f64| if sharded { x / dp } else { x };
    StateBytes {
        weights: shard(zero_stage.shards_params(), n_params * bytes.weights),
        gradients: shard(zero_stage.shards_gradients(), n_params * bytes.gradients),
        optimizer: shard(zero_stage.shards_optimizer(), n_params * bytes.optimizer),
    }
}

/// Weight bytes one device holds under ZeRO-3 sharding over `n_devices`.
///
/// DeepSpeed pads every parameter to a multiple of the world size and gives each rank an equal slice,
/// so a tensor of `numel` elements costs `ceil(numel / n)` elements on every rank.
/// Source: DeepSpeed `deepspeed/runtime/zero/partition_parameters.py`, `Init._aligned_size` and
/// `Init._padding_size` (`remainder = ds_numel % world_size`), `partition_size = tensor_size // world_size`.
///
/// ```
/// use trainplan_core::{catalog, memory};
/// let arch = &catalog::model("llama-2-7b").unwrap().arch;
/// // One device holds everything: 2 bytes for each of the 6,738,415,616 parameters.
/// assert_eq!(memory::zero3_weight_bytes_per_device(arch, 1, memory::BF16_BYTES), 13_476_831_232);
/// ```
///
/// # Panics
///
/// If `n_devices` is 0, which [`crate::plan::Cluster`] never allows.
pub fn zero3_weight_bytes_per_device(arch: &Architecture, n_devices: u64, bytes_per_param: u64) -> u64 {
    assert!(0 < n_devices, "a cluster has at least one device");
    model::tensors(arch)
        .iter()
        .filter(|t| !t.mtp)
        .map(|t| t.numel.div_ceil(n_devices).saturating_mul(t.count))
        .fold(0, u64::saturating_add)
        .saturating_mul(bytes_per_param)
}

/// ZeRO++ hpZ's secondary shard of `params` parameters: each rank keeps its share over the hpZ
/// group beside its ZeRO-3 shard, in the parameters' own dtype, on the device (`_partition_param_sec`,
/// deepspeed/runtime/zero/partition_parameters.py: `tensor_size // num_ranks_in_param_group`
/// elements on the partition's `remote_device`, the host under parameter offload, where it is not
/// counted here). ZeRO++'s hierarchical partitioning: Wang et al. 2023, arXiv 2306.10209.
fn hpz_secondary_bytes(ctx: &Ctx, params: u64) -> u64 {
    let hpz = ctx.plan.zero_plus_plus().hpz;
    if hpz <= 1 || ctx.plan.parallel.offload_params {
        return 0;
    }
    (params as f64 / hpz as f64 * super::compute_bytes_per_param(ctx.plan)) as u64
}

/// A rank's bytes that the micro-batch does not change: its parameters, their weights, gradients
/// and optimizer states, the buffers and the runtime's overhead.
pub(super) fn stage_states(
    ctx: &Ctx,
    layers: &StageLayers,
    first: bool,
    last: bool,
    mtp: u64,
) -> StageMemory {
    let arch = ctx.arch;
    // Parameters on this device, dense and expert apart (they shard over different groups): the
    // stage's layers counted by kind.
    let (mut dense, mut expert, mut norms_router) = (0.0, 0.0, 0.0);
    let n_moe = layers.moe_in(0, layers.n);
    for (moe_layer, count) in [(false, layers.n - n_moe), (true, n_moe)] {
        if count == 0 {
            continue;
        }
        let counts = if moe_layer { &ctx.summary.moe_layer } else { &ctx.summary.dense_layer };
        let count = count as f64;
        dense += count * (counts.attention + counts.mlp + counts.shared_experts) as f64 / ctx.tp as f64;
        norms_router += count * (counts.norms + counts.router) as f64;
        expert += count * counts.experts as f64 / (ctx.ep * ctx.etp) as f64;
    }
    // Gated DeltaNet layers hold other attention weights than the attention layers counted above.
    let n_linear = layers.linear_attention_in(0, layers.n);
    if 0 < n_linear {
        dense += ctx.summary.linear_attention_extra(n_linear) / ctx.tp as f64;
    }
    // The layers' linear weights (all but norms and routers), for low-precision weight copies.
    let linear_layers = dense + expert;
    dense += norms_router;
    if 0 < mtp {
        // An MTP module (DeepSeek-V3 §2.2; Megatron `multi_token_prediction.py`): a decoder layer
        // like the model's last, the projection of [h; embedding] back to h (2h × h, column
        // parallel) and two norms; the embedding and the output head are shared with the model.
        let last = arch.n_layers.saturating_sub(1);
        let counts = ctx.summary.layer(arch, last);
        let linear =
            ctx.summary.linear_attention_extra(u64::from(model::is_linear_attention_layer(arch, last)));
        let h = arch.hidden_size as f64;
        let per = (counts.attention + counts.mlp + counts.shared_experts) as f64 / ctx.tp as f64
            + linear / ctx.tp as f64
            + (counts.norms + counts.router) as f64
            + 2.0 * h * h / ctx.tp as f64
            + 2.0 * h;
        dense += mtp as f64 * per;
        expert += mtp as f64 * counts.experts as f64 / (ctx.ep * ctx.etp) as f64;
    }
    let whole = &ctx.summary.counts;
    let final_norm = ctx.summary.final_norm;
    // Embedding (vocab-parallel, ÷ tp) on the first stage; the head on the last, and a tied head is a
    // second copy there when pp > 1 (Megatron `share_embeddings_and_output_weights`).
    if first {
        dense += whole.embedding as f64 / ctx.tp as f64;
    }
    // A multimodal wrapper's vision encoder, on the first stage: trained parameters, or frozen bytes.
    let (trained_vision, frozen_vision) = vision_states(ctx, first);
    dense += trained_vision;
    if last {
        dense += final_norm as f64;
        let head = match (arch.tied_embeddings, ctx.pp) {
            (false, _) => whole.head as f64,
            (true, 1) => 0.0,
            (true, _) => (arch.vocab_size * arch.hidden_size) as f64,
        };
        dense += head / ctx.tp as f64;
    }

    let mut res = StageMemory {
        n_layers: layers.n,
        params: (dense + expert) as u64,
        expert_params: expert as u64,
        ..StageMemory::default()
    };
    model_states(ctx, dense, expert, linear_layers, &mut res);
    if verl_offload_policy(ctx.plan) {
        // FSDP2's CPU offload keeps the fp32 parameter shards, their gradient shards and AdamW's
        // states in host memory throughout ([`verl_offload_host_bytes`]): the device holds what
        // FSDP keeps gathered after a forward, and gradients it accumulates unsharded. A full
        // fine-tune's is its compute copy; a LoRA plan's frozen base is already in its compute
        // dtype, whole from forward to backward at ZeRO-1/2 (as `model_states` counted it), else a
        // unit at a time, counted with the buffers.
        let lora_whole = ctx.plan.trains_lora() && verl_keeps_parameters_whole(ctx.plan);
        if !lora_whole {
            res.weights_bytes = verl_compute_copy_bytes(ctx.plan, ctx.summary, (dense + expert) as u64);
        }
        res.gradients_bytes = unsharded_gradient_bytes(ctx, dense + expert);
        res.optimizer_bytes = 0;
    }
    res.weights_bytes = res.weights_bytes.saturating_add(frozen_vision);
    let linear = linear_layers + mtp_linear(ctx, mtp);
    res.weights_bytes += low_precision_weight_copies(ctx, linear) as u64;
    if fp8_parameters(ctx) {
        // The quantized copies are the weights: no 16-bit copy beside them.
        let sixteen_bit = linear * state_bytes(ctx.path, ctx.plan.precision).weights;
        res.weights_bytes = res.weights_bytes.saturating_sub(sixteen_bit as u64);
    }
    res.buffers_bytes = ctx.buffers_bytes.saturating_add(hpz_secondary_bytes(ctx, res.params));
    if ctx.plain_torch && 1 < ctx.dp {
        // PyTorch DDP copies every gradient into its all-reduce buckets, which live as long as the
        // model: `gradient_as_bucket_view` (off by default, and transformers' `Trainer` sets only
        // `find_unused_parameters`, `bucket_cap_mb` and `broadcast_buffers`) would make the
        // gradients views of them instead ("the saved memory size will be equal to the total
        // gradients size": `torch.nn.parallel.DistributedDataParallel`'s documentation). The
        // buckets take the gradients' dtype, fp32 here but with `pure_bf16`.
        let trainable = match (ctx.plan.trains_lora(), ctx.plan.method) {
            (true, _) => ctx.lora_params,
            (false, Method::Freeze) => (res.params as f64 * trained_share(ctx)) as u64,
            (false, _) => res.params,
        };
        let bytes = if ctx.fp32_trainables { 4 } else { 2 };
        res.buffers_bytes = res.buffers_bytes.saturating_add(trainable.saturating_mul(bytes));
    }
    // A calibration's offset (fitted to a measured peak) adjusts the runtime overhead.
    let overhead =
        ctx.plan.overheads().runtime_context_bytes as f64 + ctx.plan.calibration.memory_offset_bytes();
    res.overhead_bytes = overhead.max(0.0) as u64;
    res
}

/// How a plan holds its model's vision encoder ([`vision_encoder`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VisionEncoder {
    /// No encoder, or a framework whose launcher plans the language model alone (Megatron-LM,
    /// MindSpeed-LLM and MindSpeed-RL train multimodal models through other entry points).
    NotLoaded,
    /// Loaded and frozen: its weights in the compute dtype, no gradient or optimizer state.
    Frozen,
    /// Loaded and trained with the language model.
    Trained,
}

/// How `plan`'s framework holds a multimodal wrapper's vision encoder and projector
/// ([`Architecture::vision`]), by its defaults. LLaMA-Factory loads the whole wrapper and
/// freezes both (`freeze_vision_tower` and `freeze_multi_modal_projector`, each `True` by default,
/// src/llamafactory/hparams/finetuning_args.py; `get_forbidden_modules`,
/// src/llamafactory/model/model_utils/visual.py, keeps LoRA's adapters out of them too). VeRL trains
/// the tower with the actor (`freeze_vision_tower: false`, verl/trainer/config/actor/actor.yaml at
/// b178a3c) and a DeepSpeed full fine-tune trains every parameter; a LoRA plan leaves every base
/// weight frozen, the encoder's among them.
pub fn vision_encoder(plan: &Plan) -> VisionEncoder {
    if plan.model.arch.vision.is_none() {
        return VisionEncoder::NotLoaded;
    }
    let loads =
        matches!(plan.framework, Framework::LlamaFactory | Framework::DeepSpeed) || plan.framework.is_verl();
    let trains =
        plan.framework != Framework::LlamaFactory && !plan.trains_lora() && plan.method != Method::Freeze;
    match (loads, trains) {
        (false, _) => VisionEncoder::NotLoaded,
        (true, false) => VisionEncoder::Frozen,
        (true, true) => VisionEncoder::Trained,
    }
}

/// The vision encoder's parameters where `plan`'s framework loads it ([`vision_encoder`]), else 0.
pub fn loaded_vision_params(plan: &Plan) -> u64 {
    match vision_encoder(plan) {
        VisionEncoder::NotLoaded => 0,
        VisionEncoder::Frozen | VisionEncoder::Trained => plan.model.arch.vision_params(),
    }
}

/// The vision encoder on a stage ([`vision_encoder`]; the first stage holds it): the parameters it
/// adds to those the stage trains, and the bytes of its frozen weights.
///
/// Split by the plan's TP, as VeRL's Megatron engine builds it (mbridge's vision config is a copy
/// of the language model's, pipeline parallelism set to 1: `get_vision_model_config(deepcopy(
/// self.config))`, mbridge/models/qwen2_5_vl/__init__.py); the other frameworks that load it have
/// no TP. Trained, it is trained as the language model is and its states shard alike. Frozen, its
/// parameters are in the compute dtype (LLaMA-Factory loads the wrapper in it and casts only
/// trainable parameters to fp32, `_setup_full_tuning`), sharded by ZeRO-3 as every parameter is,
/// and on the host where ZeRO-3 offloads the parameters. Under QLoRA bitsandbytes also packs the
/// encoder's linear layers, so this is the most they take.
fn vision_states(ctx: &Ctx, first: bool) -> (f64, u64) {
    let n = ctx.arch.vision_params() as f64 / ctx.tp as f64;
    match first.then(|| vision_encoder(ctx.plan)) {
        Some(VisionEncoder::Trained) => (n, 0),
        Some(VisionEncoder::Frozen) => {
            let p = &ctx.plan.parallel;
            let bytes =
                StateBytes { weights: compute_bytes_per_param(ctx.plan), gradients: 0.0, optimizer: 0.0 };
            let frozen = zero_model_states(n, bytes, zero_stage(ctx), ctx.dp * ctx.cp);
            let offloaded = p.offload_params && !ctx.plan.framework.is_verl() && p.zero_stage.shards_params();
            // Full DPO's frozen reference is a second load of the whole wrapper (TRL
            // `DPOTrainer`'s `ref_model`), its encoder as frozen as the policy's.
            let copies = if ctx.plan.method == Method::Dpo { 2 } else { 1 };
            (0.0, if offloaded { 0 } else { copies * frozen.weights as u64 })
        }
        _ => (0.0, 0),
    }
}

/// Whether the plan's linear layers run in fp8 or fp4 on its device.
pub(super) fn fp8_linear(plan: &Plan) -> bool {
    quantized_element_bytes(plan).is_some()
}

/// Bytes per element of a quantized linear weight or input when the plan's linear layers run in
/// fp8 or fp4 on its device: 1 in fp8; MXFP8 adds an 8-bit scale per 32 elements (OCP Microscaling
/// Formats spec v1.0 §5); NVFP4 is 4 bits with an 8-bit scale per 16 (NVIDIA, "Introducing NVFP4",
/// 2025).
pub(super) fn quantized_element_bytes(plan: &Plan) -> Option<f64> {
    let hw = &plan.hardware.hw;
    match plan.precision {
        Precision::Fp8 if hw.has_fp8() => Some(1.0),
        Precision::Mxfp8 if hw.has_block_scaling() => Some(1.0 + 1.0 / 32.0),
        Precision::Nvfp4 if hw.has_block_scaling() => Some(0.5 + 1.0 / 16.0),
        _ => None,
    }
}

/// Bytes of the quantized weight copies fp8 and fp4 training keeps beside the 16-bit weights of
/// `linear` parameters on the device. Transformer Engine quantizes each linear layer's weight once
/// per step and caches it across micro-batches, row-wise for the forward GEMM and column-wise
/// (transposed) for the backward's input gradients (transformer_engine/pytorch/module/linear.py
/// `quantize_weight(..., cache=...)` with `is_first_microbatch`, NVIDIA/TransformerEngine d0067d0),
/// each at [`quantized_element_bytes`]. Megatron path only: the HF frameworks' fp8 goes through accelerate's backends, whose
/// weight handling is not modelled; under parameter sharding only the gathered layers (two) are
/// quantized at once.
pub(super) fn low_precision_weight_copies(ctx: &Ctx, linear: f64) -> f64 {
    let Some(per_copy) = quantized_element_bytes(ctx.plan) else { return 0.0 };
    if ctx.path != Path::Megatron || ctx.plan.trains_lora() {
        return 0.0;
    }
    let layers = (ctx.arch.n_layers / ctx.pp).max(1) as f64;
    let gathered = match ctx.plan.parallel.fsdp {
        crate::plan::Fsdp::OptimGradsParams | crate::plan::Fsdp::Torch => 2.0_f64.min(layers) / layers,
        _ => 1.0,
    };
    2.0 * per_copy * linear * gathered
}

/// Whether the linear layers' weights are Transformer Engine's fp8 parameters
/// (`--fp8-param-gather`: `fp8_model_init`, megatron/core/transformer/transformer_config.py
/// `fp8_param`): the row-wise and column-wise fp8 data [`low_precision_weight_copies`] counts are then
/// the weights themselves, and the distributed optimizer's fp32 master copy (counted with the
/// optimizer) is the only other. Where the plan's layout cannot keep them ([`fp8_parameters_fit`];
/// rules precision.fp8_param_gather and parallel.fp8_param_gather) the weights stay as counted.
pub(super) fn fp8_parameters(ctx: &Ctx) -> bool {
    let plan = ctx.plan;
    ctx.path == Path::Megatron
        && plan.parallel.fp8_param_gather
        && fp8_parameters_fit(plan)
        && quantized_element_bytes(plan).is_some()
        && !plan.trains_lora()
}

/// The linear parameters of `mtp` MTP layers on the device (as [`stage_memory`] counts them).
pub(super) fn mtp_linear(ctx: &Ctx, mtp: u64) -> f64 {
    if mtp == 0 {
        return 0.0;
    }
    let last = ctx.arch.n_layers.saturating_sub(1);
    let counts = ctx.summary.layer(ctx.arch, last);
    let linear =
        ctx.summary.linear_attention_extra(u64::from(model::is_linear_attention_layer(ctx.arch, last)));
    let h = ctx.arch.hidden_size as f64;
    mtp as f64
        * ((counts.attention + counts.mlp + counts.shared_experts) as f64 / ctx.tp as f64
            + linear / ctx.tp as f64
            + 2.0 * h * h / ctx.tp as f64
            + counts.experts as f64 / (ctx.ep * ctx.etp) as f64)
}

/// Bytes per parameter of a frozen LoRA base of `total` parameters (`expert` of them routed
/// experts, `linear` the layers' linear weights), whose 16-bit weights take `sixteen_bit`.
///
/// QLoRA's NF4 holds the layers' linear weights outside the routed experts alone: bitsandbytes
/// replaces `nn.Linear` modules only, and transformers keeps the output head out of it
/// (transformers 5.6.0 `integrations/bitsandbytes.py` `replace_with_bnb_linear`,
/// `quantizers/base.py` `get_keys_to_not_convert`), so the embedding, the head, the norms, the
/// routers (`TopKRouter` modules) and the routed experts (fused 3-D parameters: Qwen3-MoE's stay
/// `Qwen3MoeExperts` under bitsandbytes 0.50.2) stay 16-bit. A checkpoint stored packed (GPTQ,
/// AWQ) keeps its layers' linear weights so, the experts' too, and takes precedence over QLoRA's
/// quantization ([`crate::quantized::kept`]).
pub(super) fn frozen_base_bytes(plan: &Plan, sixteen_bit: f64, total: f64, expert: f64, linear: f64) -> f64 {
    let packed = match (crate::quantized::kept(plan), plan.method) {
        (Some(q), _) if q.experts_16bit() => Some((q.bytes_per_param(), linear - expert)),
        (Some(q), _) => Some((q.bytes_per_param(), linear)),
        (None, Method::Qlora) => Some((NF4_BYTES_PER_PARAM, linear - expert)),
        (None, _) => None,
    };
    match packed {
        Some((packed_bytes, quantized)) if 0.0 < total => {
            let quantized = quantized.clamp(0.0, total);
            (packed_bytes * quantized + sixteen_bit * (total - quantized)) / total
        }
        _ => sixteen_bit,
    }
}

/// Whether a step can run bitsandbytes' 8-bit AdamW (`optim: adamw_8bit`): LLaMA-Factory's HF
/// `Trainer` builds it under plain PyTorch ([`runs_plain_torch`]), and under DeepSpeed hands it to
/// the engine as a client optimizer (transformers `deepspeed_optim_sched`: no `optimizer` in the
/// DeepSpeed file, `trainer.create_optimizer()`), which steps it over its own fp32 partitions.
/// `deepspeed`: whether the step goes to DeepSpeed (ZeRO shards, or states are offloaded). The
/// plan's and a plan file's alike ([`crate::choices::offers_eight_bit_adam`]).
pub fn offers_eight_bit_adam(framework: Framework, method: Method, deepspeed: bool) -> bool {
    runs_plain_torch(framework, method, deepspeed) || (framework == Framework::LlamaFactory && deepspeed)
}

/// [`offers_eight_bit_adam`] for `plan`: LLaMA-Factory's fine-tuning, under DeepSpeed or not.
pub(crate) fn eight_bit_adam_offered(plan: &Plan) -> bool {
    offers_eight_bit_adam(plan.framework, plan.method, runs_deepspeed(plan))
}

/// Whether the plan's step keeps 8-bit AdamW's moments: where it is offered
/// ([`offers_eight_bit_adam`]) and the optimizer stays on the device. With DeepSpeed's optimizer
/// offload, accelerate swaps any client optimizer for DeepSpeed's CPU Adam before the engine starts
/// (accelerate 1.11.0 `Accelerator._prepare_deepspeed`, `map_pytorch_optim_to_deepspeed` in
/// `utils/deepspeed.py`), fp32 moments in host memory: rule `llamafactory.adam_8bit_offload`.
pub(crate) fn eight_bit_adam(plan: &Plan) -> bool {
    plan.optimizer == crate::plan::Optimizer::AdamW8bit
        && eight_bit_adam_offered(plan)
        && !plan.parallel.offload_optimizer
}

/// Bytes of AdamW's two moments for a trained parameter of `element` bytes: each in the
/// parameter's dtype (`torch.optim.AdamW`: `zeros_like(p)`), or with 8-bit AdamW
/// ([`eight_bit_adam`]) a byte each and an fp32 scale per block of 2,048
/// ([`ADAM_8BIT_BYTES_PER_PARAM`]; tensors under 4,096 elements, the norms' weights, keep fp32
/// moments there: left out; DeepSpeed's flat fp32 partitions are whole tensors far above it).
pub(super) fn moment_bytes(ctx: &Ctx, element: f64) -> f64 {
    match eight_bit_adam(ctx.plan) {
        true => ADAM_8BIT_BYTES_PER_PARAM,
        false => 2.0 * element,
    }
}

/// Bytes per parameter of each model state as the plan's framework keeps them ([`state_bytes`]).
pub(super) fn stage_state_bytes(ctx: &Ctx) -> StateBytes {
    let plan = ctx.plan;
    // VeRL's FSDP engine builds its models in fp32 (`model_dtype: fp32`, verl 0.9.1
    // verl/trainer/config/engine/fsdp.yaml, the reference's too) and computes in bf16 under FSDP's
    // mixed precision (`param_dtype: bf16`, `reduce_dtype: fp32`; `_build_module` and
    // `_build_fsdp_module`, verl/workers/engine/fsdp/transformer_impl.py): its shards are fp32
    // weights, fp32 gradients and AdamW's two fp32 moments, the weights their own master copy. The
    // same 16 bytes a parameter as mixed precision's 2 + 2 + 12, held differently, which matters
    // where a phase holds the weights without the rest.
    if plan.framework == Framework::Verl && ctx.path == Path::Hf && plan.precision != Precision::Fp32 {
        return StateBytes { weights: 4.0, gradients: 4.0, optimizer: 8.0 };
    }
    let mut bytes = state_bytes(ctx.path, plan.precision);
    if bf16_gradients(plan) {
        bytes.gradients = 2.0;
    }
    // 8-bit AdamW as DeepSpeed's client optimizer: the engine keeps its fp32 master weights and
    // steps the optimizer over them, whose two moments take a byte each where fp32 ones take 8
    // (`Optimizer2State.init_state` sizes them by the fp32 partition it is given).
    if ctx.path == Path::Hf && !ctx.plain_torch && eight_bit_adam(plan) {
        bytes.optimizer += moment_bytes(ctx, 4.0) - 8.0;
    }
    bytes
}

/// Weights, gradients and optimizer states for `dense` and `expert` parameters on this device, of
/// which `linear_layers` are the layers' linear weights.
pub(super) fn model_states(ctx: &Ctx, dense: f64, expert: f64, linear_layers: f64, res: &mut StageMemory) {
    let plan = ctx.plan;
    let p = &plan.parallel;
    let bytes = stage_state_bytes(ctx);
    // VeRL's offload moves the states out between phases, not out of the update: its engine loads
    // the parameters (and gradients) for each forward-only or training pass and the optimizer
    // states for the update, and offloads them after (verl 0.9.1 `BaseEngineCtx._context_switch`,
    // verl/workers/engine/base.py, for the FSDP and the Megatron engine alike). A stage holds them
    // all, and [`rl_phases`] leaves out what each phase has offloaded.
    let verl = plan.framework.is_verl();
    let (offload_params, offload_optimizer) = (p.offload_params && !verl, p.offload_optimizer && !verl);
    let on_device = |x: f64, offloaded: bool| if offloaded { 0 } else { x as u64 };

    if plan.trains_lora() {
        // Frozen base: bf16 weights, or packed ones ([`frozen_base_bytes`]). Trainable LoRA
        // weights are fp32 (LLaMA-Factory casts trainable parameters to fp32), so 4 + 4 + 8 bytes.
        let total_params = dense + expert;
        let base_bytes = frozen_base_bytes(plan, bytes.weights, total_params, expert, linear_layers);
        // Adapters follow their base weights: this device holds the same share of both.
        let share = total_params / ctx.summary.counts.total().max(1) as f64;
        let lora_params = ctx.lora_params as f64 * share;
        // `pure_bf16` keeps them bf16 without DeepSpeed: 2 + 2 + 4 bytes ([`fp32_trainables`]).
        let adapters = match ctx.plain_torch && !ctx.fp32_trainables {
            true => StateBytes { weights: 2.0, gradients: 2.0, optimizer: moment_bytes(ctx, 2.0) },
            false => StateBytes { weights: 4.0, gradients: 4.0, optimizer: moment_bytes(ctx, 4.0) },
        };
        let sharded = zero_model_states(lora_params, adapters, zero_stage(ctx), ctx.dp * ctx.cp);
        let base = zero_model_states(
            total_params,
            StateBytes { weights: base_bytes, ..bytes },
            zero_stage(ctx),
            ctx.dp * ctx.cp,
        );
        res.weights_bytes = on_device(base.weights + sharded.weights, offload_params);
        res.gradients_bytes = sharded.gradients as u64;
        res.optimizer_bytes = on_device(sharded.optimizer, offload_optimizer);
        return;
    }
    // Freeze-tuning: the trained layers' states as a full fine-tune keeps its parameters' (fp32
    // under plain PyTorch: LLaMA-Factory's `_setup_freeze_tuning` casts the trainable parameters as
    // `_setup_full_tuning` does), the frozen rest as weights alone in the compute dtype, sharded by
    // ZeRO-3 as every parameter is.
    let share = if plan.method == Method::Freeze { trained_share(ctx) } else { 1.0 };
    trained_states(ctx, bytes, dense * share, expert * share, res);
    if share < 1.0 {
        let frozen = zero_model_states(
            (dense + expert) * (1.0 - share),
            StateBytes { gradients: 0.0, optimizer: 0.0, ..bytes },
            zero_stage(ctx),
            ctx.dp * ctx.cp,
        );
        let offloaded = offload_params && p.zero_stage.shards_params();
        res.weights_bytes = res.weights_bytes.saturating_add(on_device(frozen.weights, offloaded));
    }
}

/// Whether the plan's step is GaLore's or APOLLO's (`optimizer: galore`, `apollo`): LLaMA-Factory's full-parameter
/// training without DeepSpeed, which it refuses GaLore under ("GaLore and APOLLO are incompatible
/// with DeepSpeed yet", `get_train_args`, src/llamafactory/hparams/parser.py; rule
/// `llamafactory.low_rank_deepspeed`), and not beside LoRA (rule `llamafactory.low_rank_lora`).
pub(crate) fn low_rank_steps(plan: &Plan) -> bool {
    plan.optimizer.projects()
        && plan.framework == Framework::LlamaFactory
        && !plan.trains_lora()
        && !runs_deepspeed(plan)
}

/// GaLore's or APOLLO's optimizer states and, layer-wise, gradients for `n` trained parameters of
/// `bytes` each ([`crate::model::low_rank_shape`]): the projected weights' moments and projections
/// in the parameters' dtype (galore_torch keeps them in the gradient's: `torch.zeros_like(grad)`,
/// and `get_orthogonal_matrix` casts the SVD's factor back; apollo_torch 1.0.3 alike, its random
/// projection generated from a seed and kept between updates, `GradientProjector.ortho_matrix`), AdamW's moments for the rest (embeddings,
/// head, norms, biases). Layer-wise (`galore_layerwise`), every parameter is stepped by its own
/// optimizer from a hook as soon as its gradient is accumulated, which then drops the gradient
/// (`optimizer_hook`: `step()` and `zero_grad()`, `_create_galore_optimizer` and
/// `_create_apollo_optimizer`): at most the largest
/// tensor's gradient is held.
fn low_rank_states(ctx: &Ctx, n: f64, bytes: f64, res: &mut StageMemory) {
    let plan = ctx.plan;
    let shape = crate::model::low_rank_shape(ctx.arch, u64::from(plan.low_rank.rank.get()));
    // Freeze-tuning projects its trained layers' weights alone (`requires_grad`).
    let share = n / ctx.summary.counts.total().max(1) as f64;
    let projected = shape.params as f64 * share;
    res.optimizer_bytes =
        ((n - projected).max(0.0) * moment_bytes(ctx, bytes) + shape.states as f64 * share * bytes) as u64;
    if plan.low_rank.layerwise {
        res.gradients_bytes = (crate::model::largest_tensor(ctx.arch) as f64).min(n) as u64 * bytes as u64;
    }
}

/// The share of the model's parameters freeze-tuning trains (of every stage's: the trained layers
/// are the last, and the HF path that runs them holds the whole model on each device).
fn trained_share(ctx: &Ctx) -> f64 {
    ctx.freeze_params as f64 / ctx.summary.counts.total().max(1) as f64
}

/// Weights, gradients and optimizer states for `dense` and `expert` parameters, every one trained,
/// of `bytes` ([`stage_state_bytes`]) each.
fn trained_states(ctx: &Ctx, bytes: StateBytes, dense: f64, expert: f64, res: &mut StageMemory) {
    let plan = ctx.plan;
    let p = &plan.parallel;
    let verl = plan.framework.is_verl();
    let (offload_params, offload_optimizer) = (p.offload_params && !verl, p.offload_optimizer && !verl);
    let on_device = |x: f64, offloaded: bool| if offloaded { 0 } else { x as u64 };

    if ctx.plain_torch {
        // LLaMA-Factory casts the trainable parameters to fp32 unless `pure_bf16` or ZeRO-3
        // (`model/adapter.py` `_setup_full_tuning`, `cast_trainable_params_to_fp32`) and trains them
        // under autocast: fp32 weights that are their own master copy, fp32 gradients and AdamW's
        // two fp32 moments, 4 + 4 + 8 bytes (measured: tools/gpu_peak, 12 bytes a parameter
        // between steps). With `pure_bf16` they stay bf16, and PyTorch's AdamW keeps its moments
        // in the parameter's dtype (`torch.optim.AdamW`: `exp_avg = torch.zeros_like(p)`): 2 + 2 + 4.
        let n = dense + expert;
        let bytes = if ctx.fp32_trainables { 4.0 } else { 2.0 };
        res.weights_bytes = (n * bytes) as u64;
        res.gradients_bytes = (n * bytes) as u64;
        res.optimizer_bytes = (n * moment_bytes(ctx, bytes)) as u64;
        if low_rank_steps(plan) {
            low_rank_states(ctx, n, bytes, res);
        }
        return;
    }
    match ctx.path {
        Path::Megatron => {
            // Distributed optimizer: optimizer states sharded over dp (dense) and expert-dp (experts);
            // gradients stay whole (Megatron dist_optimizer.md: 6 + 12/d for bf16). Megatron FSDP
            // shards gradients too (`optim_grads`) and parameters (`optim_grads_params`, and torch
            // FSDP2), each over the same groups (megatron/core/distributed/fsdp: ZeRO-2/ZeRO-3
            // layouts); a sharded parameter is gathered a layer at a time, so two layers' weights
            // (this one and the prefetched next) are whole at once.
            use crate::plan::Fsdp;
            let fsdp = p.fsdp;
            let sharded_optimizer = p.distributed_optimizer || fsdp != Fsdp::None;
            let sharded_grads = matches!(fsdp, Fsdp::OptimGrads | Fsdp::OptimGradsParams | Fsdp::Torch);
            let sharded_params = matches!(fsdp, Fsdp::OptimGradsParams | Fsdp::Torch);
            let shard = |x: f64, group: u64, on: bool| if on { x / group as f64 } else { x };
            let opt_shard = |x: f64, group: u64| shard(x, group, sharded_optimizer);
            let layers = (ctx.arch.n_layers / ctx.pp).max(1) as f64;
            let gathered = (dense + expert) * 2.0_f64.min(layers) / layers;
            res.weights_bytes = match sharded_params {
                true => {
                    (shard(dense, ctx.dp * ctx.cp, true) + shard(expert, ctx.edp, true) + gathered)
                        * bytes.weights
                }
                false => (dense + expert) * bytes.weights,
            } as u64;
            res.gradients_bytes = ((shard(dense, ctx.dp * ctx.cp, sharded_grads)
                + shard(expert, ctx.edp, sharded_grads))
                * bytes.gradients) as u64;
            let optimizer = opt_shard(dense * bytes.optimizer, ctx.dp * ctx.cp)
                + opt_shard(expert * bytes.optimizer, ctx.edp);
            res.optimizer_bytes = match swaps_optimizer(plan) {
                // The step copies one slice in while the previous one is updated and copied out:
                // two slices live at once (MindSpeed swap-optimizer: h2d, AdamW, d2h per slice).
                true => (optimizer * 2.0 / SWAP_OPTIMIZER_TIMES) as u64,
                false => on_device(optimizer, offload_optimizer),
            };
        }
        Path::Hf => {
            let states = zero_model_states(dense + expert, bytes, zero_stage(ctx), ctx.dp * ctx.cp);
            res.weights_bytes = match verl_keeps_parameters_whole(plan) {
                // The fp32 shard, and the whole model in the compute dtype from forward to backward.
                true => ((dense + expert) * bytes.weights / (ctx.dp * ctx.cp) as f64) as u64,
                false => on_device(states.weights, offload_params && p.zero_stage.shards_params()),
            }
            .saturating_add(verl_compute_copy_bytes(plan, ctx.summary, (dense + expert) as u64));
            // ZeRO-Offload keeps the gradient partitions with the optimizer on the host: the device
            // holds only the reduce buckets, counted with the buffers (DeepSpeed
            // `stage_1_and_2.py` / `stage3.py` with `offload_optimizer`: fp32 gradient partitions
            // in pinned CPU memory; ZeRO-Offload paper §4.1).
            res.gradients_bytes =
                on_device(states.gradients, offload_optimizer && p.zero_stage.shards_optimizer());
            res.optimizer_bytes = on_device(states.optimizer, offload_optimizer);
            res.gradients_bytes =
                res.gradients_bytes.saturating_add(unsharded_gradient_bytes(ctx, dense + expert));
        }
    }
    // DPO keeps a frozen reference model beside the policy (TRL `DPOTrainer` ref_model); LoRA DPO
    // uses the base with adapters disabled instead, so it costs nothing more.
    if plan.method == Method::Dpo {
        let reference = zero_model_states(
            dense + expert,
            StateBytes { weights: 2.0, ..bytes },
            zero_stage(ctx),
            ctx.dp * ctx.cp,
        );
        res.weights_bytes += reference.weights as u64;
    }
}

/// Whether the plan is VeRL's FSDP engine sharding the gradients and optimizer states alone
/// (ZeRO-1 or 2: `reshard_after_forward: False`, `ShardingStrategy.SHARD_GRAD_OP`, verl 0.9.1
/// `get_sharding_strategy`, verl/workers/engine/fsdp/utils.py). Under that strategy "parameters are
/// sharded outside computation" too, and FSDP "unshards before the forward, does not reshard them
/// after the forward, and only reshards them after the backward computation" (PyTorch
/// `ShardingStrategy.SHARD_GRAD_OP`, torch/distributed/fsdp/api.py; FSDP2's
/// `reshard_after_forward=False` alike), the unsharded parameters in the mixed precision's
/// `param_dtype`, "the dtype for forward/backward computation" (FSDP2 `MixedPrecisionPolicy`), bf16
/// in VeRL (`_build_fsdp_module`, verl/workers/engine/fsdp/transformer_impl.py). So a device holds
/// the fp32 shard and, while it computes, a whole 16-bit copy: not the whole fp32 model.
pub(crate) fn verl_keeps_parameters_whole(plan: &Plan) -> bool {
    plan.framework == Framework::Verl
        && plan.precision != Precision::Fp32
        && matches!(plan.parallel.zero_stage.get(), 1 | 2)
}

/// The gradients VeRL's FSDP engine holds whole while it accumulates them unsharded
/// ([`verl_accumulates_unsharded`]), of the `params` the device computes with: what trains, beside
/// the shards they are reduced into after the update's last micro-batch. FSDP1 accumulates them in
/// the compute dtype; FSDP2 upcasts each to the mixed precision's `reduce_dtype` to accumulate it
/// (`FSDPParam.to_accumulated_grad_if_needed`, torch/distributed/fsdp/_fully_shard/_fsdp_param.py
/// at torch 2.11.0), fp32 in VeRL (`mixed_precision.reduce_dtype`, verl/trainer/config/engine/fsdp.yaml
/// at verl 0.9.1): twice a 16-bit step's bytes.
fn unsharded_gradient_bytes(ctx: &Ctx, params: f64) -> u64 {
    let plan = ctx.plan;
    if !verl_accumulates_unsharded(plan) {
        return 0;
    }
    let trainable = if plan.trains_lora() { ctx.lora_params as f64 } else { params };
    let bytes = match verl_fsdp2(plan) {
        true => FP32_BYTES as f64,
        false => super::compute_bytes_per_param(plan),
    };
    (trainable * bytes) as u64
}

/// Whether the plan is VeRL's FSDP engine on PyTorch's FSDP2 (`strategy: fsdp2`, `fully_shard`).
pub(crate) fn verl_fsdp2(plan: &Plan) -> bool {
    plan.framework == Framework::Verl && plan.parallel.fsdp == crate::plan::Fsdp::Torch
}

/// Whether VeRL's FSDP2 engine runs the actor under FSDP2's CPU offload (`offload_policy`,
/// `parallel.offload_policy`): `CPUOffloadPolicy(pin_memory=True)`, which also turns the engine's
/// own `param_offload` and `optimizer_offload` off (`FSDPEngine._build_fsdp_module`,
/// verl/workers/engine/fsdp/transformer_impl.py at verl 0.9.1). FSDP1 (`strategy: fsdp`) reads no
/// such key: rule `verl.offload_policy_fsdp1`.
pub(crate) fn verl_offload_policy(plan: &Plan) -> bool {
    plan.parallel.offload_policy && verl_fsdp2(plan)
}

/// The host bytes per device of an actor under FSDP2's CPU offload ([`verl_offload_policy`]): its
/// fp32 parameter shards (`model_dtype: fp32`), and for what trains their fp32 gradient shards
/// (`reduce_dtype: fp32`) and AdamW's two fp32 moments, 4 + 4 + 8 bytes a trained parameter, over
/// the FSDP mesh (DP × CP; one device at ZeRO-0, `fsdp_size=1`); 0 elsewhere.
pub(super) fn verl_offload_host_bytes(ctx: &Ctx) -> u64 {
    let plan = ctx.plan;
    if !verl_offload_policy(plan) {
        return 0;
    }
    let params = ctx.summary.counts.total();
    let trainable = if plan.trains_lora() { ctx.lora_params } else { params };
    let shards = if plan.parallel.zero_stage.get() == 0 { 1 } else { ctx.dp * ctx.cp };
    let bytes = params.saturating_mul(FP32_BYTES).saturating_add(trainable.saturating_mul(3 * FP32_BYTES));
    bytes / shards.max(1)
}

/// Whether the plan is VeRL's FSDP engine accumulating its gradients unsharded
/// (`use_no_sync_for_gradient_accumulation`, verl/workers/engine/fsdp/transformer_impl.py at verl
/// 0.9.1) over sharded ones (ZeRO ≥ 1): under `no_sync`, "FSDP will accumulate the full model
/// gradients (instead of gradient shards) until the eventual sync" (PyTorch
/// `FullyShardedDataParallel.no_sync`, torch/distributed/fsdp/fully_sharded_data_parallel.py),
/// in the unsharded parameters' dtype, the compute dtype (VeRL's `strategy: fsdp`).
pub(super) fn verl_accumulates_unsharded(plan: &Plan) -> bool {
    plan.framework == Framework::Verl
        && plan.parallel.no_sync_accumulation
        && plan.parallel.zero_stage.shards_optimizer()
}

/// Whether the plan is VeRL's FSDP engine over fp32 parameters, computing on 16-bit copies of them
/// (`param_dtype`): not in fp32, and not training LoRA (whose frozen base is 16-bit already).
pub(super) fn verl_casts_to_compute(plan: &Plan) -> bool {
    plan.framework == Framework::Verl && plan.precision != Precision::Fp32 && !plan.trains_lora()
}

/// The bytes VeRL's FSDP engine (not training LoRA) holds in the compute dtype while it computes,
/// beyond its fp32 shards, for a stage of `params` parameters: at ZeRO-1/2 the whole model
/// ([`verl_keeps_parameters_whole`]); at ZeRO-3 and ZeRO-0 (one FSDP unit a decoder layer, the rest
/// in the root's: `get_fsdp_wrap_policy`, verl/utils/fsdp_utils.py) the root's embedding, final
/// norm and untied head, which FSDP does not free after forward ("Do not free the root's
/// parameters in the post-forward for `FULL_SHARD` with the intention that they are immediately
/// used for backward computation": PyTorch `_post_forward_reshard`,
/// torch/distributed/fsdp/_runtime_utils.py); the decoder layers' gathered copies, two at a time,
/// are counted with the buffers. Not while the engine generates ([`rl_phases`]).
///
/// FSDP2 (`strategy: fsdp2`) shards an untied embedding and head as units of their own
/// (`_select_fsdp2_wrap_targets`, verl/utils/fsdp_utils.py at verl 0.9.1), the root keeping the final
/// norm: the embedding's copy is freed once its forward is done, and the head's is live at the
/// loss, the step's peak; a tied embedding stays in the root, as under FSDP1.
pub(super) fn verl_compute_copy_bytes(plan: &Plan, summary: &model::Summary, params: u64) -> u64 {
    if !verl_casts_to_compute(plan) {
        return 0;
    }
    let counts = &summary.counts;
    // An untied model's head is counted apart (`counts.head`, 0 when tied).
    let embedding = match verl_fsdp2(plan) && 0 < counts.head {
        true => 0,
        false => counts.embedding,
    };
    let copied = match verl_keeps_parameters_whole(plan) {
        true => params,
        false => embedding.saturating_add(summary.final_norm).saturating_add(counts.head),
    };
    copied.saturating_mul(BF16_BYTES)
}

/// Whether VeRL's FSDP engine keeps the RL plan's reference model on the host. A forward-only
/// engine (the reference's `forward_only: True`, verl/trainer/config/ref/dp_ref.yaml at verl 0.9.1)
/// wraps its model in FSDP's own CPU offload whatever `param_offload` says: FSDP1's
/// `CPUOffload(offload_params=True)`, FSDP2's `CPUOffloadPolicy(pin_memory=True)`
/// (`FSDPEngine._build_fsdp_module`, verl/workers/engine/fsdp/transformer_impl.py), which also
/// turns the engine's own offload off, so its `to` moves nothing. Its fp32 shards
/// (`model_dtype: fp32`) stay on the host; each unit's shard comes to the device for the unit's
/// forward and its gathered copy is freed after, but for the units FSDP keeps gathered after a
/// forward, the same the actor's keeps ([`verl_compute_copy_bytes`]). A LoRA plan's reference is
/// the actor's own base with the adapters off (`ref_in_actor`).
pub(crate) fn verl_reference_on_host(plan: &Plan) -> bool {
    plan.framework == Framework::Verl && runs_reference(plan) && !plan.rl.lora
}

/// Whether the RL plan builds and runs a reference model: every MindSpeed-RL plan, a VeRL plan
/// where the actor's loss holds the KL to it (`rl.kl_loss`, VeRL's `need_reference_policy`).
pub(crate) fn runs_reference(plan: &Plan) -> bool {
    matches!(plan.method, Method::Grpo | Method::Ppo) && (!plan.framework.is_verl() || plan.rl.kl_loss)
}

/// The host bytes the reference's fp32 shards take per device ([`verl_reference_on_host`]) for a
/// model of `params` parameters sharded over `dp_cp` devices (VeRL's FSDP mesh spans the Ulysses
/// groups; at ZeRO-0, `fsdp_size=1`, every device holds the whole model); 0 for any other plan.
pub(crate) fn verl_reference_host_bytes(plan: &Plan, params: u64, dp_cp: u64) -> u64 {
    if !verl_reference_on_host(plan) {
        return 0;
    }
    let shards = if plan.parallel.zero_stage.get() == 0 { 1 } else { dp_cp.max(1) };
    params.saturating_mul(FP32_BYTES) / shards
}

/// The reference's 16-bit weights VeRL's Megatron engine moves whole between the host and the
/// fullest of `stages` around the reference's pass (`megatron.param_offload=True`, as the launch
/// file sets it: `BaseEngineCtx._context_switch`, verl/workers/engine/base.py at verl 0.9.1), kept
/// in pinned host memory between (`offload_megatron_model_to_cpu`, verl/utils/megatron_utils.py);
/// 0 for any other plan. A LoRA plan's reference is the actor's own base.
pub(crate) fn verl_reference_switched_bytes(plan: &Plan, stages: &[StageMemory]) -> u64 {
    let switched = plan.framework == Framework::VerlMegatron && runs_reference(plan) && !plan.rl.lora;
    match switched {
        true => stages.iter().map(|s| s.weights_bytes).max().unwrap_or(0),
        false => 0,
    }
}

/// The part of a VeRL FSDP stage's weights that is its compute-dtype copy (at ZeRO-1/2 the whole
/// model, at ZeRO-3 and 0 the root unit's embedding, final norm and head, 2 bytes each): freed
/// between passes, so not what its offload moves.
pub fn verl_compute_copy(plan: &Plan, stage: &StageMemory) -> u64 {
    match verl_casts_to_compute(plan) {
        true => verl_compute_copy_bytes(plan, &ModelFacts::recent(plan).summary, stage.params),
        false => 0,
    }
}

/// The ZeRO stage whose sharding the plan's states follow: the HF path's own, or on the Megatron
/// path the one its FSDP or distributed optimizer matches.
pub(super) fn zero_stage(ctx: &Ctx) -> ZeroStage {
    let stage = match ctx.path {
        Path::Hf => return ctx.plan.parallel.zero_stage,
        Path::Megatron => match ctx.plan.parallel.fsdp {
            crate::plan::Fsdp::OptimGradsParams | crate::plan::Fsdp::Torch => 3,
            crate::plan::Fsdp::OptimGrads => 2,
            crate::plan::Fsdp::Optim => 1,
            crate::plan::Fsdp::None if ctx.plan.parallel.distributed_optimizer => 1,
            crate::plan::Fsdp::None => 0,
        },
    };
    ZeroStage::ALL[stage]
}
