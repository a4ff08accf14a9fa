//! The report: everything the engine computes for a plan, in the shape the CLI prints as JSON and
//! the page renders. Field names are stable (docs/plan-format.md); later features add fields beside them.

use std::collections::BTreeMap;

use serde::Serialize;

/// The version of the report's JSON shape.
pub const REPORT_VERSION: u32 = 1;

/// The result of [`crate::evaluate`].
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Report {
    /// [`REPORT_VERSION`].
    pub version: u32,
    /// The model as read.
    pub model: ModelReport,
    /// The device.
    pub hardware: HardwareReport,
    /// Devices in the cluster.
    pub n_devices: u64,
    /// Parameter counts.
    pub params: ParamsReport,
    /// Memory per device.
    pub memory: MemoryReport,
    /// Step time, throughput and FLOPs utilization.
    pub time: TimeReport,
    /// The pipeline schedule as simulated.
    pub schedule: ScheduleReport,
    /// The calibration in effect (1 and 0 when none was fitted).
    pub calibration: CalibrationReport,
    /// Time, device-hours, energy and price of training the plan's token budget (docs/cost.md).
    pub cost: CostReport,
    /// What the plan should know: warnings from reading the model, and (later) every rule it breaks.
    pub findings: Vec<Finding>,
}

/// The model.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ModelReport {
    /// Display name.
    pub name: String,
    /// HF `model_type` it was read as.
    pub model_type: &'static str,
    /// Decoder layers.
    pub n_layers: u64,
    /// Model width.
    pub hidden_size: u64,
    /// Vocabulary size.
    pub vocab_size: u64,
    /// Query heads.
    pub n_heads: u64,
    /// Routed experts per MoE layer; 0 for a dense model.
    pub n_experts: u64,
    /// Experts per token; 0 for a dense model.
    pub top_k: u64,
    /// Whether the head shares the embedding.
    pub tied_embeddings: bool,
    /// Context length the model was trained for.
    pub max_position_embeddings: u64,
}

/// The device.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct HardwareReport {
    /// Catalog id or `custom`.
    pub id: String,
    /// Display name.
    pub name: String,
    /// Device memory, bytes.
    pub memory_bytes: u64,
    /// Whether some figure is a community report.
    pub reported: bool,
}

/// Exact parameter counts, equal to what HF transformers instantiates.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ParamsReport {
    /// All parameters, tied tensors counted once (`model.num_parameters()`).
    pub total: u64,
    /// Parameters one token passes through (MoE: the routed experts it skips are left out).
    pub active: u64,
    /// Parameters the method trains: LoRA adapters for `lora`/`qlora`, the trained layers' for
    /// `freeze`, every parameter otherwise.
    pub trainable: u64,
    /// Token embedding (and learned positions).
    pub embedding: u64,
    /// Attention, all layers.
    pub attention: u64,
    /// Dense MLPs, all layers.
    pub mlp: u64,
    /// Routed experts, all layers.
    pub experts: u64,
    /// Shared experts, all layers.
    pub shared_experts: u64,
    /// MoE routers, all layers.
    pub router: u64,
    /// Norms.
    pub norms: u64,
    /// Untied output head; 0 when tied to the embedding.
    pub head: u64,
    /// Multi-token-prediction layers (DeepSeek-V3), not in `total`.
    pub mtp: u64,
    /// A multimodal model's vision encoder and projector (`vision_config`), not in `total`: held on
    /// the first stage as the framework loads it (`memory::vision_encoder`).
    pub vision: u64,
    /// LoRA adapter parameters for the plan's rank and targets (whatever the method).
    pub lora: u64,
    /// Decoder layers by kind: dense and MoE.
    pub layers: Vec<LayerReport>,
}

/// Layers of one kind.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct LayerReport {
    /// `dense` or `moe`.
    pub kind: &'static str,
    /// Gated DeltaNet layers in place of attention (written only where true).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub linear_attention: bool,
    /// How many.
    pub n_layers: u64,
    /// Parameters in each.
    pub params_per_layer: u64,
}

/// Memory per device, in bytes (docs/memory.md derives every term).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct MemoryReport {
    /// Every pipeline stage, first to last.
    pub stages: Vec<StageReport>,
    /// RL only: the peak of each phase (`rollout`, `log_prob`, `update`) on the most loaded stage.
    pub phases: Vec<PhaseReport>,
    /// RL only: the rollout engine's reservation, its weights, the KV cache left and the KV cache a
    /// full batch needs.
    pub rollout: Option<RolloutReport>,
    /// Where the step peaks when the terms are one moment's (LLaMA-Factory without DeepSpeed:
    /// `forward`, at the loss; `loss_backward`; `backward_end`; with Liger's fused loss
    /// `layer_backward`); `null` where each term is counted
    /// at its own peak and the terms added.
    pub peak_moment: Option<&'static str>,
    /// The highest total of any stage or phase: what must fit.
    pub peak_bytes: u64,
    /// The stage with the highest total.
    pub peak_stage: u64,
    /// Device memory.
    pub capacity_bytes: u64,
    /// Device memory less the allocator's reserve.
    pub usable_bytes: u64,
    /// Whether `peak_bytes` fits in `usable_bytes`.
    pub fits: bool,
    /// Host memory each node needs for offloaded states (0 without offload).
    pub host_bytes_per_node: u64,
    /// What each node's NVMe volume holds where DeepSpeed offloads to it (0 otherwise).
    pub nvme_bytes_per_node: u64,
    /// Data parallel size the memory assumes.
    pub dp: u64,
    /// Micro-batches per step and pipeline.
    pub n_microbatches: u64,
    /// bf16 weights on each device when ZeRO-3 shards every parameter over all devices.
    pub zero3_bf16_weight_bytes_per_device: u64,
}

/// One pipeline stage on one device, bytes.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct StageReport {
    /// Stage index, from 0.
    pub stage: u64,
    /// Decoder layers on the stage.
    pub n_layers: u64,
    /// Weights held on the device.
    pub weights: u64,
    /// Gradients.
    pub gradients: u64,
    /// Optimizer states.
    pub optimizer: u64,
    /// Activations of all micro-batches in flight.
    pub activations: u64,
    /// Logits and loss (last stage).
    pub logits: u64,
    /// Communication buffers (NCCL/HCCL) and ZeRO-3 gathered parameters.
    pub buffers: u64,
    /// Runtime context.
    pub overhead: u64,
    /// The sum of the above.
    pub total: u64,
}

/// The rollout engine on one device, bytes.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct RolloutReport {
    /// `gpu_memory_utilization` of the device.
    pub engine_bytes: u64,
    /// bf16 weights at the rollout TP.
    pub weights_bytes: u64,
    /// The reservation less the weights.
    pub kv_cache_bytes: u64,
    /// `max_num_seqs` × (`max_prompt_length` + `max_response_length`) tokens of KV cache.
    pub kv_cache_needed_bytes: u64,
}

/// An RL phase's peak.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct PhaseReport {
    /// `rollout`, `log_prob` or `update`.
    pub phase: &'static str,
    /// Bytes at the phase's peak.
    pub total: u64,
    /// What makes up `total`, bottom to top: `weights`, `gradients`, `optimizer`, `activations`,
    /// `logits`, `buffers`, `overhead` of the actor, then the `reference`, the `critic` and the
    /// rollout `engine`. Non-zero parts only; they add up to `total`.
    pub parts: Vec<PhasePart>,
    /// Whether this phase is the plan's peak.
    pub peak: bool,
}

/// One part of an RL phase's memory.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct PhasePart {
    /// What it is (see [`PhaseReport::parts`]).
    pub part: &'static str,
    /// Bytes.
    pub bytes: u64,
}

/// Factors fitted to a measured run, as applied.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CalibrationReport {
    /// Multiplier on every GEMM's efficiency.
    pub efficiency_scale: f64,
    /// Added to each device's runtime overhead, MiB.
    pub memory_offset_mib: f64,
    /// Multiplier on an RL step's generation time.
    pub rollout_scale: f64,
}

/// Training the plan's token budget (docs/cost.md; `crate::cost::estimate`).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CostReport {
    /// Tokens trained: `budget.tokens`, or `budget.epochs` × `budget.dataset_tokens`.
    pub budget_tokens: f64,
    /// A fine-tuning plan whose budget is still the pretraining default (10^12 tokens, no dataset
    /// size): the figures are for that default, not for the plan's own data.
    pub default_budget_for_fine_tuning: bool,
    /// Tokens per optimizer step.
    pub tokens_per_step: f64,
    /// Optimizer steps: the budget over the tokens per step, rounded up.
    pub steps: u64,
    /// Wall-clock time of those steps, seconds.
    pub wall_seconds: f64,
    /// Devices × wall-clock hours.
    pub device_hours: f64,
    /// The device's maximum board power (TDP), W; 0 when unknown.
    pub board_power_watts: f64,
    /// Whether the board power is a public report or an estimate rather than a datasheet figure.
    pub board_power_reported: bool,
    /// The facility's power usage effectiveness applied to the energy.
    pub pue: f64,
    /// Energy at board power × PUE, kWh: the devices only (no hosts, network or storage); left out
    /// when the board power is unknown.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub energy_kwh: Option<f64>,
    /// Price per device-hour given by the plan (any currency); 0 when none.
    pub price_per_device_hour: f64,
    /// Device-hours × the price; left out when the plan gives no price.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub price: Option<f64>,
}

/// Step time and throughput (docs/time.md).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TimeReport {
    /// One optimizer step, seconds.
    pub step_seconds: f64,
    /// Tokens per second, all devices.
    pub tokens_per_second: f64,
    /// Tokens per second per device.
    pub tokens_per_second_per_device: f64,
    /// Sequences per second.
    pub samples_per_second: f64,
    /// Model FLOPs utilization: the model's FLOPs (no recomputation) per second over the dense peak.
    pub mfu: f64,
    /// Hardware FLOPs utilization: FLOPs the devices run (recomputation included) over the peak.
    /// The difference from `mfu` is recomputation's extra forward work.
    pub hfu: f64,
    /// Model FLOPs per step.
    pub model_flops_per_step: f64,
    /// Hardware FLOPs per step.
    pub hardware_flops_per_step: f64,
    /// Days to train one trillion tokens at this throughput.
    pub days_per_trillion_tokens: f64,
    /// Where the time goes, seconds per step.
    pub breakdown: BreakdownReport,
}

/// Seconds per step by cause (the busiest stage's view): the time model's own breakdown.
pub type BreakdownReport = crate::time::Breakdown;

/// The pipeline schedule.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ScheduleReport {
    /// `1f1b`, `interleaved`, `gpipe` or `zb-h1`.
    pub name: &'static str,
    /// The stages' idle share of the pipeline's time, in [0, 1): idle time over ranks × makespan,
    /// (p − 1)/(m + p − 1) for 1F1B with equal stages; with uneven stages it also holds the
    /// others' waits for the busiest (whose own idle time is the breakdown's `bubble_seconds`).
    pub bubble_fraction: f64,
    /// Idle over busy time, the bubble as Narayanan et al. 2021 state it: (p − 1)/m for 1F1B with
    /// equal stages. Unbounded (DeepSeek-V3's 61 layers on few micro-batches exceed 1).
    pub bubble_ratio: f64,
    /// Micro-batches per step.
    pub n_microbatches: u64,
    /// Pipeline ranks the schedule runs on.
    pub n_ranks: u32,
    /// The first micro-batches' passes, as simulated (at most 4000).
    pub timeline: Vec<EventReport>,
}

/// One pass of the timeline.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct EventReport {
    /// Pipeline rank.
    pub stage: u32,
    /// Model chunk on the rank.
    pub chunk: u32,
    /// Micro-batch.
    pub microbatch: u32,
    /// `F`, `B` or `W`.
    pub pass: &'static str,
    /// Start, seconds.
    pub start_seconds: f64,
    /// End, seconds.
    pub end_seconds: f64,
}

macro_rules! codes {
    ($($variant:ident = $wire:literal => $english:literal,)*) => {
        /// What a finding is about: one variant per rule (and per warning from reading a model). The
        /// page maps every variant to its words, so a new rule cannot go untranslated.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum Code {
            $(#[doc = $wire] $variant,)*
        }

        impl Code {
            /// Every code.
            pub const ALL: &[Code] = &[$(Code::$variant),*];

            /// The stable dotted name plan tools and docs/validation.md use, e.g. `parallel.world`.
            pub fn as_str(self) -> &'static str {
                match self { $(Code::$variant => $wire,)* }
            }

            /// The finding in English, `{name}` standing for its arguments: the CLI's words, and
            /// the page's English.
            pub fn english(self) -> &'static str {
                match self { $(Code::$variant => $english,)* }
            }
        }
    };
}

codes! {
    ParallelFusedKernelsFramework = "parallel.fused_kernels_framework" => "{framework} picks its own kernels: turning off the fused RMSNorm, SwiGLU and RoPE kernels is a MindSpeed switch.",
    MoeFramework = "moe.framework" => "{framework} cannot be told the MoE kernel, dispatcher or capacity settings: they change the estimate only.",
    MoeFlexFramework = "moe.flex_framework" => "The flex dispatcher (DeepEP, HybridEP) is Megatron-LM's; {framework} has none.",
    MoeFlexParallel = "moe.flex_parallel" => "The flex dispatcher needs TP × EP above 1.",
    MoePadNeedsCapacity = "moe.pad_needs_capacity" => "Padding the experts' inputs to capacity needs a capacity factor.",
    MoeFlexPad = "moe.flex_pad" => "The flex dispatcher with DeepEP cannot pad the experts' inputs to capacity.",
    MoeOverlap = "moe.overlap" => "The expert-parallel all-to-all overlap cannot run with {what}.",
    ParallelAccountFramework = "parallel.account_framework" => "{framework} cannot count the embedding and the loss as layers in the pipeline split.",
    HwNoBlockScaling = "hw.no_block_scaling" => "{device} has no MXFP8/NVFP4 block scaling (Blackwell needed).",
    PrecisionFp8ParamGather = "precision.fp8_param_gather" => "--fp8-param-gather keeps the weights in fp8: it needs fp8 or MXFP8 training, not {precision}.",
    PrecisionGradReduceBf16 = "precision.grad_reduce_bf16" => "--grad-reduce-in-bf16 acts in bf16 training alone; {precision} training ignores it.",
    ParallelFp8ParamGather = "parallel.fp8_param_gather" => "--fp8-param-gather needs the distributed optimizer or Megatron FSDP; under torch FSDP2 Megatron-LM turns it off.",
    PrecisionFramework = "precision.framework" => "{framework} has no {precision} recipe: Megatron-LM's Transformer Engine path has it.",
    FsdpFramework = "fsdp.framework" => "{framework} has no {fsdp}: it shards with ZeRO or FSDP of its own.",
    FsdpTorch = "fsdp.torch" => "PyTorch FSDP2 in Megatron cannot run with {what}.",
    ModelUnknownType = "model.unknown_type" => "Unknown model_type \"{model_type}\": read as a Llama-like decoder.",
    ModelMoeLayerFreq = "model.moe_layer_freq" => "moe_layer_freq {moe_layer_freq} is not supported: every layer after the dense ones is taken as MoE.",
    ModelExpertsRead = "model.experts_read" => "{n_experts} routed experts, {top_k} per token, read from {key} as Mixtral's and DeepSeek's configs write them: check the parameter count against the model card.",
    ModelLayerTypes = "model.layer_types" => "layer_types lists {layers} layers that are not attention ({kind}): each is counted as a full-attention layer.",
    HfQloraExperts = "hf.qlora_experts" => "QLoRA leaves the routed experts, {share} % of the model, 16-bit: bitsandbytes quantizes nn.Linear modules, and transformers 5 holds the experts as fused tensors. The 4-bit base saves memory on the other layers alone.",
    ModelQuantizationUnread = "model.quantization_unread" => "quantization_config's quant_method \"{method}\" is not read: the weights are counted as 16-bit.",
    LlamafactoryPtqBase = "llamafactory.ptq_base" => "The checkpoint is stored {format} {bits}-bit, and LLaMA-Factory trains LoRA over it as stored: its layers' linear weights count {bytes} bytes each instead of 2.",
    LlamafactoryPtqLoraOnly = "llamafactory.ptq_lora_only" => "LLaMA-Factory trains a {format}-quantized checkpoint with LoRA only: its frozen packed weights take no full-parameter training.",
    LlamafactoryPtqZero3 = "llamafactory.ptq_zero3" => "LLaMA-Factory refuses ZeRO-3 with a {format}-quantized checkpoint.",
    LlamafactoryPureBf16Zero3 = "llamafactory.pure_bf16_zero3" => "LLaMA-Factory refuses pure_bf16 with ZeRO-3.",
    HfGptOssSdpa = "hf.gpt_oss_sdpa" => "transformers runs gpt-oss's learned attention sinks eager or in a FlashAttention kernel that takes them (kernels-community/vllm-flash-attn3), not in SDPA.",
    LlamafactoryGptOssKernel = "llamafactory.gpt_oss_kernel" => "LLaMA-Factory runs gpt-oss on the FlashAttention-3 kernel with attention sinks whatever flash_attn says, and fetches it from the Hugging Face Hub (kernels-community/vllm-flash-attn3) as the model loads: on a cluster without internet, download it beforehand.",
    LlamafactoryLowRankDeepspeed = "llamafactory.low_rank_deepspeed" => "LLaMA-Factory refuses {optimizer} with DeepSpeed: train without ZeRO or offload.",
    LlamafactoryLowRankLora = "llamafactory.low_rank_lora" => "LLaMA-Factory refuses {optimizer} beside LoRA: {optimizer} trains full parameters.",
    LlamafactoryLowRankLayerwiseDistributed = "llamafactory.low_rank_layerwise_distributed" => "LLaMA-Factory refuses layer-wise {optimizer} over {devices} devices: it steps on one device alone.",
    LlamafactoryLowRankLayerwiseAccumulation = "llamafactory.low_rank_layerwise_accumulation" => "Layer-wise {optimizer} steps each parameter as its gradient arrives, so it refuses gradient accumulation: {microbatches} micro-batches a step here.",
    LlamafactoryLowRankMixedPrecision = "llamafactory.low_rank_mixed_precision" => "{optimizer} under mixed precision keeps fp32 weights, gradients and states (LLaMA-Factory warns of it): pure_bf16 halves them.",
    LlamafactoryAdam8bitOffload = "llamafactory.adam_8bit_offload" => "With the optimizer offloaded, accelerate runs DeepSpeed's CPU Adam instead of 8-bit AdamW: fp32 moments in host memory, weight decay as Adam's L2 term.",
    LlamafactoryPtqDora = "llamafactory.ptq_dora" => "LLaMA-Factory refuses DoRA on a {format}-quantized checkpoint: DoRA needs the base weight's norms.",
    LlamafactoryPtqQuantizationBit = "llamafactory.ptq_quantization_bit" => "The checkpoint is already {format} {bits}-bit: LLaMA-Factory ignores quantization_bit and trains LoRA over it as stored, as the plan counts it.",
    ModelPtq16bit = "model.ptq_16bit" => "The checkpoint is stored {format} {bits}-bit, which LLaMA-Factory alone keeps packed while LoRA trains: on {framework} the plan counts the 16-bit model.",
    ModelIndexer = "model.indexer" => "DeepSeek-V3.2 is planned as DeepSeek-V3: its lightning indexer ({params} M parameters over its layers) and its sparse attention are not counted.",
    ModelVisionConfig = "model.vision_config" => "\"{model_type}\" also holds a vision encoder (vision_config), which is not counted: the language model alone is planned.",
    ModelVisionEncoder = "model.vision_encoder" => "\"{model_type}\" also holds a vision encoder of {params} B parameters (vision_config), which is not counted: the language model alone is planned, and the encoder's weights would take {gib} GiB more in bf16.",
    ModelVisionEncoderFrozen = "model.vision_encoder_frozen" => "\"{model_type}\" also holds a vision encoder of {params} B parameters (vision_config). {framework} keeps it frozen for this plan, so its weights are counted on the first stage ({gib} GiB in bf16 before any sharding), and its forward over each sequence's image tokens ({image_tokens}, set with the batch) in the step time.",
    ModelVisionEncoderTrained = "model.vision_encoder_trained" => "\"{model_type}\" also holds a vision encoder of {params} B parameters (vision_config). {framework} trains it with the language model for this plan, so its weights, gradients and optimizer states are counted on the first stage, and its forward and backward over each sequence's image tokens ({image_tokens}, set with the batch) in the step time and its activations for them on the first stage.",
    ModelTextConfig = "model.text_config" => "The language model is read from the text_config of \"{model_type}\": its other parts (a vision encoder, a projector) are not counted.",
    BatchImageTokens = "batch.image_tokens" => "{image_tokens} image tokens a sequence are more than its {seq_len} tokens: counted as {seq_len}.",
    BatchImageTokensUnused = "batch.image_tokens_unused" => "{image_tokens} image tokens a sequence change nothing here: {framework} runs no vision encoder for this model.",
    BatchMeanSeqLen = "batch.mean_seq_len" => "A mean sample of {mean} tokens is longer than the sequence length, {seq_len}, to which {framework} cuts every sample: counted as {seq_len}.",
    LlamafactoryMeanSeqPadded = "llamafactory.mean_seq_padded" => "LLaMA-Factory pads each micro-batch of {micro_batch} samples to its longest, so the step counts {seq_len} tokens a sample, not the mean {mean}: at micro-batch 1 each sample trains at its own length.",
    MindspeedMeanSeqPadded = "mindspeed.mean_seq_padded" => "MindSpeed-LLM pads each micro-batch of {micro_batch} samples to its longest (--no-pad-to-seq-lengths, to a multiple of 8), so the step counts {seq_len} tokens a sample, not the mean {mean}: at micro-batch 1 each sample trains at its own length.",
    BatchDivisible = "batch.divisible" => "Global batch {global_batch} is not a multiple of {unit} ({what}).",
    BatchFewMicrobatches = "batch.few_microbatches" => "Only {microbatches} micro-batches for PP {pp}: most of the pipeline idles.",
    BatchVppMicrobatches = "batch.vpp_microbatches" => "{microbatches} micro-batches are not a multiple of PP {pp} (interleaved schedule).",
    FrameworkMindspeedOnNvidia = "framework.mindspeed_on_nvidia" => "{framework} targets Ascend NPUs; on NVIDIA GPUs use Megatron-LM or VeRL.",
    FrameworkRlOnly = "framework.rl_only" => "{framework} trains with RL (GRPO, PPO), not {method}.",
    HfDistributedOptimizer = "hf.distributed_optimizer" => "{framework} shards the optimizer with ZeRO stage 1 or more, not Megatron's distributed optimizer.",
    HfNoModelParallel = "hf.no_model_parallel" => "{framework} has no {field}: it shards with ZeRO/FSDP instead.",
    HwNoBf16 = "hw.no_bf16" => "{device} has no bf16: train in fp16 with loss scaling.",
    HwNoFp8 = "hw.no_fp8" => "{device} has no fp8 (Hopper, Ada or Blackwell needed).",
    HwTpAcrossNodes = "hw.tp_across_nodes" => "TP {tp} spans nodes of {devices_per_node} devices: its collectives cross the network every layer.",
    MemoryDoesNotFit = "memory.does_not_fit" => "Needs {peak} GiB per device at its peak; {usable} GiB are usable.",
    VerlMbridgeModel = "verl.mbridge_model" => "VeRL's Megatron engine builds the model through mbridge, which has no bridge for model_type \"{model_type}\": VeRL's FSDP engine trains it.",
    MethodDpoMegatron = "method.dpo_megatron" => "Megatron-LM has no DPO trainer: use LLaMA-Factory or MindSpeed-LLM.",
    MethodLoraMegatron = "method.lora_megatron" => "Megatron-LM's pretrain_gpt.py has no LoRA (it would train every weight): use LLaMA-Factory, MindSpeed-LLM, or Megatron-Bridge's PEFT.",
    ScheduleFramework = "schedule.framework" => "{framework} has no {schedule} pipeline schedule.",
    MindspeedDualpipevConflict = "mindspeed.dualpipev_conflict" => "MindSpeed's DualPipeV cannot run with {what}.",
    VerlLoraRank = "verl.lora_rank" => "vLLM serves LoRA ranks up to 512, not {rank}.",
    VerlZeroStage = "verl.zero_stage" => "VeRL's FSDP shards the parameters with the rest (ZeRO-3), the gradients and optimizer states (ZeRO-2) or nothing (ZeRO-0), never the optimizer states alone (ZeRO-1).",
    MethodNeedsRlFramework = "method.needs_rl_framework" => "{method} is RL: it runs on VeRL or MindSpeed-RL, not {framework}.",
    MethodQloraMegatron = "method.qlora_megatron" => "{framework} has no 4-bit QLoRA: use LLaMA-Factory.",
    MethodFreezeFramework = "method.freeze_framework" => "{framework} has no freeze-tuning: use LLaMA-Factory.",
    MindspeedCocLora = "mindspeed.coc_lora" => "MindSpeed's --use-ascend-coc does not support LoRA.",
    MindspeedKnobIgnored = "mindspeed.knob_ignored" => "{field} is a MindSpeed option; {framework} ignores it.",
    MindspeedLoraMoeDispatcher = "mindspeed.lora_moe_dispatcher" => "LoRA on MoE in MindSpeed needs --moe-token-dispatcher-type alltoall_seq (the launch file sets it).",
    MindspeedSwapAttentionLora = "mindspeed.swap_attention_lora" => "MindSpeed's --swap-attention does not support LoRA.",
    MindspeedGroupLimitedEp = "mindspeed.group_limited_ep" => "MindSpeed-LLM's group-limited router (DeepSeek-V2's, {top_groups} groups a token) needs expert parallelism above {top_groups}; the plan has EP {ep}.",
    MindspeedRlBf16 = "mindspeed_rl.bf16" => "MindSpeed-RL trains in bf16 only.",
    VerlPrecision = "verl.precision" => "VeRL trains in bf16 or fp16 (its engines' dtype), not {precision}.",
    VerlOffloadPolicyFsdp1 = "verl.offload_policy_fsdp1" => "offload_policy is FSDP2's CPU offload: VeRL's FSDP1 engine ignores it and keeps the actor on the device.",
    MindspeedRlGenerationDp = "mindspeed_rl.generation_dp" => "The {prompts} prompts of a step do not divide over the rollout's {engines} engines ({world} devices ÷ rollout TP {rollout_tp}).",
    MindspeedRlMicroBatch = "mindspeed_rl.micro_batch" => "The {samples} responses per DP rank ({prompts} prompts ÷ DP {dp} × {n}) are not a multiple of micro-batch {micro_batch}.",
    MindspeedRlRolloutEp = "mindspeed_rl.rollout_ep" => "The rollout spreads the experts over {rollout} devices (its TP × EP), which is not a multiple of the {ep} ranks the actor spreads them over (TP × EP).",
    MindspeedRlLoraTpExtendEp = "mindspeed_rl.lora_tp_extend_ep" => "MindSpeed-RL's actor trains LoRA on experts without expert parallelism: its resharding needs moe_tp_extend_ep with EP above 1, which MindSpeed's LoRA refuses.",
    MindspeedRlTpExtendEp = "mindspeed_rl.tp_extend_ep" => "The actor's {experts} experts do not divide over TP {tp} × EP {ep}, over which MindSpeed-RL's training spreads them whole (moe_tp_extend_ep).",
    MindspeedRlTpExtendEpDispatcher = "mindspeed_rl.tp_extend_ep_dispatcher" => "MindSpeed-RL's expert parallelism (moe_tp_extend_ep) dispatches tokens all-to-all only.",
    MindspeedRlRewardNodes = "mindspeed_rl.reward_nodes" => "The {prompts} prompts of a step do not divide over the {nodes} nodes that score them with the rule reward.",
    ModelMlaYarnBetas = "model.mla_yarn_betas" => "Megatron-LM's command line sets no YaRN betas for multi-latent attention: the model's beta_fast {beta_fast} and beta_slow {beta_slow} train as 32 and 1.",
    ModelRotaryMindspeedRl = "model.rotary_mindspeed_rl" => "MindSpeed-RL's model config has no rotary_percent or rotary_interleaved: its actor rotates every dimension of each head, where this model rotates only part of them (GLM half, Phi-4-mini three quarters).",
    ModelLongropeFramework = "model.longrope_framework" => "{framework}'s launch file cannot set the model's LongRoPE scaling (per-frequency factors and a larger attention scale): it trains plain rotary positions, another model than the checkpoint. MindSpeed-LLM builds it.",
    ModelLinearAttentionFramework = "model.linear_attention_framework" => "{framework} cannot build the model's Gated DeltaNet layers: its launch file has no key for them.",
    ParallelLinearAttentionHeads = "parallel.linear_attention_heads" => "Megatron-LM splits the Gated DeltaNet layers' {key_heads} key and {value_heads} value heads over TP × CP = {tp_cp}, which must divide both.",
    ParallelLinearAttentionMindspeed = "parallel.linear_attention_mindspeed" => "MindSpeed-LLM runs the Gated DeltaNet layers at TP 1 and CP 1 only.",
    ModelSharedGateMindspeedRl = "model.shared_gate_mindspeed_rl" => "MindSpeed-RL's model config has no shared_expert_gate: its actor adds the shared expert's output ungated, where the model scales it by a learned sigmoid gate.",
    ModelGemmaMegatron = "model.gemma_megatron" => "{framework}'s script written here builds Llama's layers, not Gemma's: it trains another model than the checkpoint's. LLaMA-Factory and VeRL's FSDP engine run Gemma as transformers builds it, MindSpeed-LLM Gemma 2.",
    ModelPostNormsMegatron = "model.post_norms_megatron" => "{framework}'s script builds no norm after attention and after the MLP, which GLM-4-0414's layers hold: it trains another layer than the checkpoint's.",
    ModelSeqTooLong = "model.seq_too_long" => "Sequence length {seq_len} is longer than the model's {max} positions.",
    ParallelCpSeq = "parallel.cp_seq" => "Sequence length {seq_len} is not a multiple of 2 × CP {cp}.",
    ParallelCpA2aSeq = "parallel.cp_a2a_seq" => "Sequence length {seq_len} is not a multiple of CP {cp} (all-to-all context parallelism).",
    ParallelCpA2aHeads = "parallel.cp_a2a_heads" => "All-to-all context parallelism splits the heads: {heads} attention heads do not divide by TP {tp} × CP {cp}.",
    ParallelCpA2aKvHeads = "parallel.cp_a2a_kv_heads" => "Transformer Engine's all-to-all context parallelism splits the key/value heads too: {kv_heads} do not divide by TP {tp} × CP {cp}.",
    ParallelSinksMindspeed = "parallel.sinks_mindspeed" => "{framework} has no flag for the model's learned attention sinks (Megatron-LM's --softmax-type learnable).",
    ParallelSinksFlash = "parallel.sinks_flash" => "FlashAttention has no learned attention sinks: Transformer Engine runs them in cuDNN's fused attention or unfused only.",
    ParallelSinksCpRing = "parallel.sinks_cp_ring" => "Learned attention sinks under context parallelism run in cuDNN's fused attention over all-to-all only, not the ring.",
    ParallelWindowCpRing = "parallel.window_cp_ring" => "Sliding-window attention under context parallelism runs over all-to-all or all-gather only, not the ring.",
    ParallelWindowCpMindspeed = "parallel.window_cp_mindspeed" => "MindSpeed-LLM runs no context parallelism for sequences longer than the model's {window}-token sliding window.",
    ParallelWindowMindspeedRl = "parallel.window_mindspeed_rl" => "MindSpeed-RL's model config has no sliding window: its actor attends to the whole sequence, where the model reaches back {window} tokens.",
    ParallelEpDense = "parallel.ep_dense" => "EP {ep} needs a mixture-of-experts model.",
    ParallelExpertsEp = "parallel.experts_ep" => "{experts} experts do not divide by EP {ep}.",
    ParallelHeadsTp = "parallel.heads_tp" => "{heads} attention heads do not divide by TP {tp}.",
    ParallelKvHeadsTp = "parallel.kv_heads_tp" => "{kv_heads} key/value heads are neither a multiple nor a divisor of TP {tp}.",
    ParallelLayersPp = "parallel.layers_pp" => "{layers} layers do not split evenly over PP {pp}.",
    ParallelMoeTpNeedsSp = "parallel.moe_tp_needs_sp" => "EP with TP > 1 needs sequence parallelism.",
    ParallelParamGatherNeeds = "parallel.param_gather_needs" => "--overlap-param-gather needs the distributed optimizer and --overlap-grad-reduce.",
    ParallelOffloadNeedsDistributedOptimizer = "parallel.offload_needs_distributed_optimizer" => "Optimizer offload (--optimizer-cpu-offload) needs the distributed optimizer.",
    ParallelSpWithoutTp = "parallel.sp_without_tp" => "Sequence parallelism does nothing with TP 1 (Megatron turns it off).",
    ParallelTpOverlapNeedsSp = "parallel.tp_overlap_needs_sp" => "--tp-comm-overlap needs --sequence-parallel.",
    ParallelVppLayers = "parallel.vpp_layers" => "{layers_per_stage} layers per stage do not split into {vpp} virtual chunks.",
    ParallelVppNeedsPp = "parallel.vpp_needs_pp" => "VPP {vpp} needs pipeline parallelism (PP > 1).",
    ParallelWorld = "parallel.world" => "{world} devices do not divide into TP {tp} × PP {pp} × CP {cp}.",
    ParallelWorldEp = "parallel.world_ep" => "{world} devices do not divide into ETP {etp} × EP {ep} × PP {pp}.",
    RecomputeCpuOffloadFramework = "recompute.cpu_offload_framework" => "{framework} has no --cpu-offloading-num-layers (Megatron-LM only): the activations stay on the device.",
    RecomputeCpuOffloadLayers = "recompute.cpu_offload_layers" => "--cpu-offloading-num-layers {layers} must be below the model's {n_layers} layers.",
    RecomputeCpuOffloadPp = "recompute.cpu_offload_pp" => "Megatron does not offload activations with pipeline parallelism (PP > 1).",
    RecomputeCpuOffloadRecompute = "recompute.cpu_offload_recompute" => "Megatron does not offload activations when activation recomputation is on.",
    RecomputeDistributeFramework = "recompute.distribute_framework" => "{framework} has no --distribute-saved-activations (Megatron-LM and MindSpeed-LLM only): each checkpoint keeps its whole input.",
    RecomputeDistributeTp = "recompute.distribute_tp" => "--distribute-saved-activations needs TP above 1: it splits checkpoints over the tensor-parallel ranks.",
    RecomputeDistributeFull = "recompute.distribute_full" => "--distribute-saved-activations works with full recomputation only.",
    RecomputeDistributeSp = "recompute.distribute_sp" => "--distribute-saved-activations must be off with sequence parallelism, which already splits the checkpoints.",
    RecomputeModulesFp8 = "recompute.modules_fp8" => "fp8 with delayed scaling cannot recompute layernorm or moe_act.",
    RecomputeModulesModel = "recompute.modules_model" => "--recompute-modules {module} needs {needs}.",
    RecomputeNumLayers = "recompute.num_layers" => "--recompute-num-layers {num_layers} exceeds the {per_stage} layers of a stage.",
    RlEngineTooSmall = "rl.engine_too_small" => "The rollout engine's share of memory does not even hold its weights.",
    RlGpuMemoryUtilization = "rl.gpu_memory_utilization" => "gpu_memory_utilization must stay below 1: the trainer needs memory too.",
    RlRolloutTp = "rl.rollout_tp" => "{world} devices do not divide into rollout TP {rollout_tp}.",
    RlRolloutTpHeads = "rl.rollout_tp_heads" => "{heads} attention heads do not divide by rollout TP {rollout_tp}.",
    RlRolloutEp = "rl.rollout_ep" => "Rollout EP {rollout_ep} must be a multiple of rollout TP {rollout_tp} (the engine's TP × DP ranks) and divide the {world} devices.",
    RlRolloutEpDense = "rl.rollout_ep_dense" => "Rollout EP {rollout_ep} spreads nothing: the model has no routed experts.",
    ScheduleDualpipevMicrobatches = "schedule.dualpipev_microbatches" => "DualPipeV needs at least 2 × PP micro-batches, not {microbatches}.",
    VerlUlysses = "verl.ulysses" => "Ulysses SP {cp} must divide both the {world} devices and the {heads} heads.",
    VerlUlyssesKvHeads = "verl.ulysses_kv_heads" => "Ulysses SP {cp} and the {kv_heads} key/value heads must divide one another (fewer key/value heads than SP are repeated).",
    ParallelUnevenVpp = "parallel.uneven_vpp" => "Uneven pipeline stages cannot be combined with VPP or DualPipeV.",
    ParallelLayoutFramework = "parallel.layout_framework" => "{framework} has no pipeline layout string (--pipeline-model-parallel-layout).",
    ParallelLayoutSyntax = "parallel.layout_syntax" => "The pipeline layout cannot be read at {char}: E embedding, t layer, m MTP layer, L loss, | between stages, (…)*n and x*n repeats.",
    ParallelLayoutStages = "parallel.layout_stages" => "The pipeline layout has {stages} stages, not a multiple of PP {pp}.",
    ParallelLayoutVpp = "parallel.layout_vpp" => "The pipeline layout makes {vpp} virtual stages per rank; the plan says VPP {plan_vpp}.",
    ParallelLayoutConflict = "parallel.layout_conflict" => "A pipeline layout string cannot be combined with uneven stages or the embedding/loss accounting.",
    ParallelLayoutEnds = "parallel.layout_ends" => "The pipeline layout must start with the embedding (E) and end with the loss (L), each once.",
    ParallelLayoutLayers = "parallel.layout_layers" => "The pipeline layout holds {count} decoder layers; the model has {layers}.",
    ParallelLayoutMtp = "parallel.layout_mtp" => "The pipeline layout holds {count} MTP layers where the plan trains {mtp}; they must follow every decoder layer, together in the last chunk of a rank.",
    MtpFramework = "mtp.framework" => "{framework} does not train MTP layers (--mtp-num-layers).",
    MindspeedSwapOptimizer = "mindspeed.swap_optimizer" => "--swap-optimizer needs --use-distributed-optimizer.",
    MindspeedActFnLayers = "mindspeed.act_fn_layers" => "--recompute-activation-function-num-layers {layers} exceeds the model's {n_layers} layers.",
    MindspeedActFnFullBlock = "mindspeed.act_fn_full_block" => "Activation-function recompute with full recompute needs --recompute-method block.",
    LlamafactoryLayersRatioIgnored = "llamafactory.layers_ratio_ignored" => "The recompute layers ratio is a key of LLaMA-Factory on Ascend; {framework} ignores it.",
    LlamafactoryLigerZero3 = "llamafactory.liger_zero3" => "Liger's fused loss reads the output layer's weight outside that layer's forward: under ZeRO-3 it can be an empty shard, and backward fails on a size mismatch. ZeRO-2, or a stage3_param_persistence_threshold that keeps the head whole, avoids it.",
    LlamafactoryLayersRatioUpstream = "llamafactory.layers_ratio_upstream" => "recompute_layers_ratio is read by Ascend's LLaMA-Factory build; upstream LLaMA-Factory rejects the key.",
    RlMiniBatch = "rl.mini_batch" => "Mini-batch {mini} must divide the {prompts} prompts of a step.",
    VerlRolloutEpNodes = "verl.rollout_ep_nodes" => "With expert parallelism VeRL's vLLM engine spans whole nodes: rollout EP {rollout_ep} is not a multiple of the {per_node} devices per node.",
    VerlMicroBatch = "verl.micro_batch" => "A device's {per_device} responses per mini-batch ({mini} prompts × {n} ÷ {split} devices ÷ Ulysses SP) do not divide into micro-batches of {micro_batch}.",
    VerlMiniBatchSplit = "verl.mini_batch_split" => "Mini-batch {mini} × {n} responses does not split over the actor's {split} data-parallel ranks.",
    RlMeanPromptLength = "rl.mean_prompt_length" => "A mean prompt of {mean} tokens is longer than the longest prompt, {max}: counted as {max}.",
    RlMeanResponseLength = "rl.mean_response_length" => "A mean response of {mean} tokens is longer than the longest response, {max}: counted as {max}.",
    RlMaxModelLen = "rl.max_model_len" => "vLLM max_model_len {max_model_len} is shorter than a prompt and its response ({tokens}).",
    RlMaxNumBatchedTokens = "rl.max_num_batched_tokens" => "vLLM max_num_batched_tokens {batched} is smaller than max_model_len {max_model_len}.",
    RlTokenBudget = "rl.token_budget" => "The packed micro-batch's token budget {budget} (VeRL: a device's, × SP; MindSpeed-RL: the whole row's) cannot hold one sequence of {tokens} tokens.",
    ZeroOffloadParamsNeeds3 = "zero.offload_params_needs_3" => "Parameter offload needs ZeRO-3, not ZeRO-{zero_stage}.",
    ZeroOffloadOptimizerStage = "zero.offload_optimizer_stage" => "DeepSpeed offloads the optimizer at ZeRO-1 to 3 alone: at ZeRO-{zero_stage} its states stay on the device.",
    ZeroNvmeFramework = "zero.nvme_framework" => "{framework} offloads to host memory alone: offloading to NVMe is DeepSpeed's (ZeRO-Infinity).",
    ZeroNvmeStage = "zero.nvme_stage" => "DeepSpeed swaps states to NVMe under ZeRO-3 alone: ZeRO-{zero_stage} keeps the offloaded optimizer states in host memory.",
    ZeroNvmeNothing = "zero.nvme_nothing" => "Nothing is offloaded, so the choice of NVMe changes nothing.",
    ZeroPlusPlusStage = "zero.zeropp_stage" => "ZeRO++ (hpZ, quantized weights and gradients) acts under ZeRO-3 alone: DeepSpeed's ZeRO-{zero_stage} ignores it.",
    ZeroHpzWorld = "zero.hpz_world" => "hpZ's groups of {hpz} consecutive ranks do not divide the {devices} devices.",
}

impl Code {
    /// The finding's English with `args` filled in.
    pub fn message(self, args: &BTreeMap<&'static str, String>) -> String {
        fill(self.english(), args.iter().map(|(k, v)| (*k, v.as_str())))
    }
}

impl std::fmt::Display for Code {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for Code {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

/// A code from its dotted name (a search's parts send theirs between workers as JSON).
impl<'de> serde::Deserialize<'de> for Code {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let name = <std::borrow::Cow<'de, str>>::deserialize(deserializer)?;
        Code::ALL
            .iter()
            .copied()
            .find(|c| c.as_str() == name)
            .ok_or_else(|| serde::de::Error::custom(format!("no rule is called {name}")))
    }
}

impl PartialEq<&str> for Code {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

/// `template` with each `{name}` replaced by its value (a name with no value stays as written).
/// One pass and one allocation: the rules build a message for every finding of every plan the
/// search tries.
pub fn fill<'a>(template: &str, args: impl IntoIterator<Item = (&'a str, &'a str)> + Clone) -> String {
    let mut res = String::with_capacity(template.len() + 32);
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        res.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        match after.find('}') {
            Some(close) => {
                let name = &after[..close];
                match args.clone().into_iter().find(|(n, _)| *n == name) {
                    Some((_, value)) => res.push_str(value),
                    None => {
                        res.push('{');
                        res.push_str(name);
                        res.push('}');
                    }
                }
                rest = &after[close + 1..];
            }
            None => {
                res.push_str(&rest[open..]);
                rest = "";
            }
        }
    }
    res.push_str(rest);
    res
}

/// Something about the plan worth saying, as data: the page translates `code` and fills in `args`.
/// Its English ([`Finding::message`]) is written when asked for (the JSON report carries it as
/// `message`), not when the rules find it: the rules run in the page's first module, and the
/// English of every code they can find would come with them (6.6 KB gzip of it, where the page
/// shows the findings from a module loaded after the plan is drawn).
#[derive(Clone, Debug, PartialEq)]
pub struct Finding {
    /// How much it matters.
    pub severity: Severity,
    /// What it is about (docs/validation.md lists the codes).
    pub code: Code,
    /// Values named in the message.
    pub args: BTreeMap<&'static str, String>,
    /// The change that resolves it, when there is one: tried on the plan, it resolves the finding
    /// and brings no new error (`fixes::converge`).
    pub fix: Option<Fix>,
    /// No change of one setting resolves it without breaking another rule: the nearest plan that
    /// fits and keeps every rule is `fixes::make_valid`'s (a search, run when asked).
    pub make_valid: bool,
}

impl Finding {
    /// The message in English ([`Code::message`]), for the CLI and the launch files' headers.
    pub fn message(&self) -> String {
        self.code.message(&self.args)
    }
}

impl Serialize for Finding {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        /// The finding as the JSON report writes it, its English among its fields.
        #[derive(Serialize)]
        struct Written<'a> {
            severity: Severity,
            code: Code,
            args: &'a BTreeMap<&'static str, String>,
            message: String,
            fix: &'a Option<Fix>,
            #[serde(skip_serializing_if = "std::ops::Not::not")]
            make_valid: bool,
        }
        let f = self;
        let message = f.message();
        let written = Written {
            severity: f.severity,
            code: f.code,
            args: &f.args,
            message,
            fix: &f.fix,
            make_valid: f.make_valid,
        };
        written.serialize(serializer)
    }
}

/// One field of the plan file set to a value: the nearest valid value or the switch to turn.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Fix {
    /// The plan-file field (written dotted, `parallel.tp`).
    pub field: crate::field::Field,
    /// Its new value.
    pub value: serde_json::Value,
}

/// How much a finding matters.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// The plan will not launch or will not fit.
    Error,
    /// The plan runs but something is likely wrong.
    Warning,
    /// Worth knowing.
    Note,
}
