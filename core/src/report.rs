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
    /// Parameters the method trains: LoRA adapters for `lora`/`qlora`, every parameter otherwise.
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

/// Seconds per step by cause (the busiest stage's view).
#[derive(Clone, Debug, PartialEq, Serialize)]
#[allow(missing_docs)]
pub struct BreakdownReport {
    pub compute_seconds: f64,
    pub memory_bound_seconds: f64,
    pub recompute_seconds: f64,
    pub tp_comm_seconds: f64,
    pub cp_comm_seconds: f64,
    pub ep_comm_seconds: f64,
    pub pp_comm_seconds: f64,
    pub bubble_seconds: f64,
    pub dp_comm_seconds: f64,
    pub optimizer_seconds: f64,
    pub offload_seconds: f64,
    pub rollout_seconds: f64,
    pub log_prob_seconds: f64,
}

/// The pipeline schedule.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ScheduleReport {
    /// `1f1b`, `interleaved`, `gpipe` or `zb-h1`.
    pub name: &'static str,
    /// The pipeline bubble as a share of the step, in [0, 1): idle time over ranks × step,
    /// (p − 1)/(m + p − 1) for 1F1B with equal stages.
    pub bubble_fraction: f64,
    /// Idle over busy time, the bubble as Narayanan et al. 2021 state it: (p − 1)/m for 1F1B with
    /// equal stages. Unbounded (DeepSeek-V3's 61 layers on few micro-batches exceed 1).
    pub bubble_ratio: f64,
    /// Micro-batches per step.
    pub n_microbatches: u64,
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

/// Something about the plan worth saying, as data: the page translates `code` and fills in `args`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Finding {
    /// How much it matters.
    pub severity: Severity,
    /// Stable code, e.g. `parallel.heads_tp` (docs/validation.md lists them).
    pub code: &'static str,
    /// Values named in the message.
    pub args: BTreeMap<&'static str, String>,
    /// The message in English, for the CLI.
    pub message: String,
    /// The change that resolves it, when there is one: tried on the plan, it resolves the finding
    /// and brings no new error (`fixes::converge`).
    pub fix: Option<Fix>,
    /// No change of one setting resolves it without breaking another rule: the nearest plan that
    /// fits and keeps every rule is `fixes::make_valid`'s (a search, run when asked).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub make_valid: bool,
}

/// One field of the plan file set to a value: the nearest valid value or the switch to turn.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Fix {
    /// The plan-file field, dotted (`parallel.tp`).
    pub field: &'static str,
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
