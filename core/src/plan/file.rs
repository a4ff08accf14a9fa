//! The plan file: [`PlanFile`], the JSON form of a [`Plan`] that the CLI reads, the permalink carries
//! and docs/plan-format.md documents, with its defaults; reading it into a plan, each field checked
//! against its bounds ([`PlanFileError`] names what is wrong), and writing a plan back.

use std::fmt;

use super::*;
use crate::catalog;
use crate::field::Field;
use crate::hardware;
use crate::hf::{self, ConfigError};

/// A plan as written in JSON. Every field but `model` may be omitted.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PlanFile {
    /// Format version; [`PLAN_FILE_VERSION`] when omitted.
    #[serde(default = "plan_file_version")]
    pub version: u32,
    /// A catalog id (`"llama-3-8b"`) or `{"hf_config": {…}, "name": "…"}`.
    pub model: ModelField,
    /// A catalog id (`"h100-sxm-80g"`) or `{"custom": {…}}`; `h100-sxm-80g` when omitted.
    #[serde(default = "default_hardware")]
    pub hardware: HardwareField,
    /// Nodes and devices per node.
    #[serde(default)]
    pub cluster: ClusterFile,
    /// `llamafactory` when omitted.
    #[serde(default = "default_framework")]
    pub framework: Framework,
    /// `lora` when omitted.
    #[serde(default = "default_method")]
    pub method: Method,
    /// MTP layers; none when omitted.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub mtp_layers: u32,
    /// Parallelism; all degrees 1 when omitted.
    #[serde(default)]
    pub parallel: ParallelFile,
    /// Recomputation; full, every layer, when omitted (the HF default of gradient checkpointing).
    #[serde(default)]
    pub recompute: RecomputeFile,
    /// Batch sizes.
    #[serde(default)]
    pub batch: BatchFile,
    /// `bf16` when omitted.
    #[serde(default = "default_precision")]
    pub precision: Precision,
    /// `flash` when omitted.
    #[serde(default = "default_attention")]
    pub attention: AttentionImpl,
    /// Liger's kernels (LLaMA-Factory `enable_liger_kernel`, VeRL `use_liger`); off when omitted,
    /// as in both.
    #[serde(default, skip_serializing_if = "is_false")]
    pub liger_kernel: bool,
    /// LLaMA-Factory's `pure_bf16`: the trained parameters stay bf16; off when omitted.
    #[serde(default, skip_serializing_if = "is_false")]
    pub pure_bf16: bool,
    /// `adamw` (the default), `adamw_8bit`, `galore` or `apollo`.
    #[serde(default = "adamw", skip_serializing_if = "is_adamw")]
    pub optimizer: Optimizer,
    /// The last decoder layers freeze-tuning trains; LLaMA-Factory's 2 when omitted.
    #[serde(default = "default_freeze_layers", skip_serializing_if = "is_default_freeze_layers")]
    pub freeze_layers: u32,
    /// The low-rank optimizers' settings; LLaMA-Factory's defaults when omitted (and then left out).
    #[serde(default, skip_serializing_if = "LowRankFile::is_default")]
    pub low_rank: LowRankFile,
    /// LoRA settings.
    #[serde(default)]
    pub lora: LoraFile,
    /// RL settings.
    #[serde(default)]
    pub rl: RlFile,
    /// MoE layer settings; Megatron-LM's recommended MoE flags when omitted (not written then).
    #[serde(default, skip_serializing_if = "MoeFile::is_default")]
    pub moe: MoeFile,
    /// Runtime overheads.
    #[serde(default)]
    pub overheads: OverheadsFile,
    /// Factors fitted to a measured run (`trainplan_core::calibrate`); none when omitted.
    #[serde(default)]
    pub calibration: CalibrationFile,
    /// Paths and addresses for the launch files; each framework's usual placeholder when empty.
    #[serde(default)]
    pub launch: LaunchFile,
    /// The tokens to train and the prices, for the time and cost to train (docs/cost.md); 10^12
    /// tokens, no price, when omitted (not written then).
    #[serde(default, skip_serializing_if = "BudgetFile::is_default")]
    pub budget: BudgetFile,
}

/// The model field: an id or a config.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum ModelField {
    /// A catalog id.
    Id(String),
    /// An HF config.json.
    Config {
        /// The config.json object.
        hf_config: Value,
        /// A display name; the config's `_name_or_path` or `custom model` when omitted.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        name: Option<String>,
    },
}

/// The hardware field: an id or a custom device.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum HardwareField {
    /// A catalog id.
    Id(String),
    /// A custom device.
    Custom {
        /// Its figures.
        custom: CustomDevice,
    },
}

/// The cluster as written.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClusterFile {
    /// Number of nodes; 1 when omitted.
    #[serde(default = "one", skip_serializing_if = "is_one")]
    pub nodes: u32,
    /// Devices in each node; the hardware's usual count (8, or 16 for Ascend 910C) when omitted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub devices_per_node: Option<u32>,
    /// Devices on one scale-up fabric (NVLink, HCCS, UB) where the intra-node bandwidth holds;
    /// when omitted, the device's (72 for GB200/GB300 NVL72, a CloudMatrix384 supernode for
    /// Ascend 910C), else the node.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scale_up_domain: Option<u32>,
    /// What a node's NVMe volume reads, GB/s, where DeepSpeed offloads to it;
    /// [`NVME_READ_GB_PER_S_DEFAULT`] when omitted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nvme_read_gb_per_s: Option<f64>,
    /// What it writes, GB/s; [`NVME_WRITE_GB_PER_S_DEFAULT`] when omitted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nvme_write_gb_per_s: Option<f64>,
}

impl Default for ClusterFile {
    fn default() -> Self {
        ClusterFile {
            nodes: 1,
            devices_per_node: None,
            scale_up_domain: None,
            nvme_read_gb_per_s: None,
            nvme_write_gb_per_s: None,
        }
    }
}

/// Parallelism as written.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
#[allow(missing_docs)]
pub struct ParallelFile {
    pub tp: u32,
    pub pp: u32,
    pub vpp: u32,
    pub cp: u32,
    /// `ring` when omitted (and then left out).
    #[serde(skip_serializing_if = "is_ring")]
    pub cp_algo: CpAlgo,
    pub ep: u32,
    pub etp: u32,
    pub sequence_parallel: bool,
    pub zero_stage: u8,
    pub distributed_optimizer: bool,
    pub offload_optimizer: bool,
    pub offload_params: bool,
    /// `cpu` when omitted (and then left out).
    #[serde(skip_serializing_if = "is_cpu")]
    pub offload_device: OffloadDevice,
    pub overlap_grad_reduce: bool,
    pub overlap_param_gather: bool,
    /// Off when omitted (and then left out).
    #[serde(skip_serializing_if = "is_false")]
    pub grad_reduce_bf16: bool,
    /// Off when omitted (and then left out).
    #[serde(skip_serializing_if = "is_false")]
    pub fp8_param_gather: bool,
    /// Off when omitted (and then left out).
    #[serde(skip_serializing_if = "is_false")]
    pub no_sync_accumulation: bool,
    /// Off when omitted (and then left out).
    #[serde(skip_serializing_if = "is_false")]
    pub offload_policy: bool,
    /// DeepSpeed ZeRO++ hpZ's group; 1 (off) when omitted (and then left out). DeepSpeed's 0 is
    /// off too, read as 1.
    #[serde(skip_serializing_if = "is_one")]
    pub zero_hpz_partition_size: u32,
    /// Off when omitted (and then left out).
    #[serde(skip_serializing_if = "is_false")]
    pub zero_quantized_weights: bool,
    /// Off when omitted (and then left out).
    #[serde(skip_serializing_if = "is_false")]
    pub zero_quantized_gradients: bool,
    pub tp_comm_overlap: bool,
    pub swap_optimizer: bool,
    pub uneven_layers: bool,
    pub schedule: PipelineSchedule,
    pub fsdp: Fsdp,
    pub account_embedding_loss: bool,
    /// Megatron's pipeline layout string; empty for none.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub pipeline_layout: String,
    pub fused_kernels: bool,
}

impl Default for ParallelFile {
    fn default() -> Self {
        ParallelFile {
            tp: 1,
            pp: 1,
            vpp: 1,
            cp: 1,
            cp_algo: CpAlgo::Ring,
            ep: 1,
            etp: 1,
            sequence_parallel: false,
            zero_stage: 0,
            distributed_optimizer: false,
            offload_optimizer: false,
            offload_params: false,
            offload_device: OffloadDevice::Cpu,
            overlap_grad_reduce: false,
            overlap_param_gather: false,
            grad_reduce_bf16: false,
            fp8_param_gather: false,
            no_sync_accumulation: false,
            offload_policy: false,
            zero_hpz_partition_size: 1,
            zero_quantized_weights: false,
            zero_quantized_gradients: false,
            tp_comm_overlap: false,
            swap_optimizer: false,
            uneven_layers: false,
            schedule: PipelineSchedule::Auto,
            fsdp: Fsdp::None,
            account_embedding_loss: false,
            pipeline_layout: String::new(),
            fused_kernels: true,
        }
    }
}

/// Recomputation as written.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
#[allow(missing_docs)]
pub struct RecomputeFile {
    pub granularity: RecomputeGranularity,
    pub method: RecomputeMethod,
    pub num_layers: u32,
    pub activation_function: bool,
    pub swap_attention: bool,
    /// MindSpeed `--recompute-activation-function-num-layers`; 0 = every layer.
    pub activation_function_layers: u32,
    /// LLaMA-Factory on Ascend `recompute_layers_ratio`, in (0, 1].
    pub layers_ratio: f64,
    /// Megatron `--recompute-modules`; `["core_attn"]` when omitted.
    #[serde(skip_serializing_if = "is_default_modules")]
    pub modules: Vec<String>,
    /// Megatron `--cpu-offloading-num-layers`; 0 when omitted.
    #[serde(skip_serializing_if = "is_zero")]
    pub cpu_offload_layers: u32,
    /// Megatron `--distribute-saved-activations`; left out when `false`.
    #[serde(skip_serializing_if = "is_false")]
    pub distribute_saved_activations: bool,
}

fn is_default_modules(modules: &[String]) -> bool {
    modules.len() == 1 && modules[0] == "core_attn"
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

fn is_zero_f64(x: &f64) -> bool {
    *x == 0.0
}

fn adamw() -> Optimizer {
    Optimizer::AdamW
}

fn is_adamw(o: &Optimizer) -> bool {
    *o == Optimizer::AdamW
}

/// LLaMA-Factory's `freeze_trainable_layers` default (`FreezeArguments`,
/// src/llamafactory/hparams/finetuning_args.py).
pub const FREEZE_LAYERS_DEFAULT: u32 = 2;

fn default_freeze_layers() -> u32 {
    FREEZE_LAYERS_DEFAULT
}

fn is_default_freeze_layers(n: &u32) -> bool {
    *n == FREEZE_LAYERS_DEFAULT
}

/// The low-rank optimizers' settings as written (`optimizer: galore` or `apollo`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct LowRankFile {
    /// `galore_rank` / `apollo_rank`; LLaMA-Factory's 16 when omitted.
    pub rank: u32,
    /// `galore_layerwise` / `apollo_layerwise`; off when omitted.
    pub layerwise: bool,
}

impl LowRankFile {
    /// LLaMA-Factory's default rank (`GaloreArguments.galore_rank`, `ApolloArguments.apollo_rank`).
    pub const DEFAULT_RANK: u32 = 16;

    fn is_default(&self) -> bool {
        *self == LowRankFile::default()
    }
}

impl Default for LowRankFile {
    fn default() -> Self {
        LowRankFile { rank: LowRankFile::DEFAULT_RANK, layerwise: false }
    }
}

fn is_false(b: &bool) -> bool {
    !*b
}

fn is_ring(algo: &CpAlgo) -> bool {
    *algo == CpAlgo::Ring
}

fn is_cpu(device: &OffloadDevice) -> bool {
    *device == OffloadDevice::Cpu
}

impl Default for RecomputeFile {
    fn default() -> Self {
        RecomputeFile {
            granularity: RecomputeGranularity::Full,
            method: RecomputeMethod::Uniform,
            num_layers: 1,
            activation_function: false,
            swap_attention: false,
            activation_function_layers: 0,
            layers_ratio: 1.0,
            modules: vec!["core_attn".to_owned()],
            cpu_offload_layers: 0,
            distribute_saved_activations: false,
        }
    }
}

/// Overheads as written; each omitted figure takes the default documented in docs/memory.md.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct OverheadsFile {
    /// Runtime context, MiB; 1000 when omitted.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub runtime_context_mib: Option<f64>,
    /// Buffers per communication group, MiB; 200 on Ascend (HCCL_BUFFSIZE), 128 elsewhere, when omitted.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub comm_buffer_mib: Option<f64>,
    /// Allocator reserve as a fraction of device memory; 0.05 when omitted.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub allocator_reserve: Option<f64>,
}

/// Factors fitted to a measured run, as written. Both are 'no change' when omitted.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct CalibrationFile {
    /// Multiplies the compute efficiency of every GEMM; 1 when omitted.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub efficiency_scale: Option<f64>,
    /// Added to every device's runtime overhead, MiB (negative to subtract); 0 when omitted.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub memory_offset_mib: Option<f64>,
    /// Multiplies an RL step's generation time; 1 when omitted.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rollout_scale: Option<f64>,
}

impl CalibrationFile {
    /// The efficiency multiplier in effect.
    pub fn efficiency(&self) -> f64 {
        self.efficiency_scale.unwrap_or(1.0)
    }

    /// The generation-time multiplier in effect.
    pub fn rollout(&self) -> f64 {
        self.rollout_scale.unwrap_or(1.0)
    }

    /// The memory offset in effect, bytes.
    pub fn memory_offset_bytes(&self) -> f64 {
        crate::overheads::mib_or(self.memory_offset_mib, 0.0)
    }
}

/// MoE layer settings as written (docs/plan-format.md, docs/time.md "MoE layers"). The defaults
/// are what trainplan's Megatron-LM and MindSpeed-LLM scripts have always written
/// (`--moe-grouped-gemm --moe-token-dispatcher-type alltoall`, the Megatron MoE README's
/// performance tips) and Megatron's own defaults for the rest (`TransformerConfig` at core_v0.19.0:
/// no permute fusion, no EP overlap, dropless).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct MoeFile {
    /// `--moe-token-dispatcher-type`; `alltoall` when omitted.
    pub dispatcher: MoeDispatcher,
    /// `--moe-grouped-gemm`: one grouped GEMM over the local experts instead of a loop of GEMMs.
    pub grouped_gemm: bool,
    /// `--moe-permute-fusion`: Transformer Engine's fused token permutation and unpermutation.
    pub permute_fusion: bool,
    /// Megatron-LM `--overlap-moe-expert-parallel-comm` (MindSpeed-LLM `--moe-alltoall-overlap-comm`):
    /// the dispatch and combine all-to-alls hidden behind another micro-batch's compute.
    pub overlap_ep_comm: bool,
    /// `--moe-expert-capacity-factor`: each expert takes at most this many times its mean tokens
    /// (the rest are dropped); dropless when omitted.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub capacity_factor: Option<f64>,
    /// `--moe-pad-expert-input-to-capacity`: every expert's input padded to its capacity.
    pub pad_to_capacity: bool,
    /// The busiest device's expert tokens over the mean with EP above 1, at least 1
    /// ([`crate::time::MOE_IMBALANCE`] when omitted).
    pub imbalance: f64,
}

impl Default for MoeFile {
    fn default() -> Self {
        MoeFile {
            dispatcher: MoeDispatcher::AllToAll,
            grouped_gemm: true,
            permute_fusion: false,
            overlap_ep_comm: false,
            capacity_factor: None,
            pad_to_capacity: false,
            imbalance: crate::time::MOE_IMBALANCE,
        }
    }
}

impl MoeFile {
    /// Whether every setting is at its default (the plan file then leaves the section out).
    pub fn is_default(&self) -> bool {
        *self == MoeFile::default()
    }

    /// The factor by which the busiest device's expert tokens exceed the mean on the critical path:
    /// the imbalance, capped at the capacity factor, or exactly the capacity factor when inputs are
    /// padded to it (Megatron `moe_utils.py`, `topk_routing_with_score_function` and
    /// `apply_router_token_dropping` at core_v0.19.0).
    pub fn load_factor(&self) -> f64 {
        match (self.capacity_factor, self.pad_to_capacity) {
            (Some(c), true) => c,
            (Some(c), false) => self.imbalance.min(c),
            (None, _) => self.imbalance,
        }
    }
}

/// The cluster section: counts of at least 1; the node and the scale-up domain from the device
/// where the file leaves them out.
fn cluster(c: &ClusterFile, hw: &Hardware) -> Result<Cluster, PlanFileError> {
    let devices_per_node = c.devices_per_node.unwrap_or(hw.devices_per_node);
    let domain = c.scale_up_domain.unwrap_or(default_scale_up(hw, devices_per_node));
    let bandwidth = |x: Option<f64>, default: f64, field: Field| {
        let x = x.unwrap_or(default);
        match x.is_finite() && 0.0 < x && x <= NVME_GB_PER_S_MAX {
            true => Ok(x),
            false => Err(PlanFileError::OutOfRange {
                field,
                expected: Allowed::AboveZeroAtMost { max: NVME_GB_PER_S_MAX },
            }),
        }
    };
    Ok(Cluster {
        nodes: count(c.nodes, Field::ClusterNodes, Limit::Degree)?,
        devices_per_node: count(devices_per_node, Field::ClusterDevicesPerNode, Limit::Node)?,
        scale_up_domain: count(domain, Field::ClusterScaleUpDomain, Limit::Degree)?,
        nvme_read_gb_per_s: bandwidth(
            c.nvme_read_gb_per_s,
            NVME_READ_GB_PER_S_DEFAULT,
            Field::ClusterNvmeReadGbPerS,
        )?,
        nvme_write_gb_per_s: bandwidth(
            c.nvme_write_gb_per_s,
            NVME_WRITE_GB_PER_S_DEFAULT,
            Field::ClusterNvmeWriteGbPerS,
        )?,
    })
}

/// The most a node's NVMe volume may read or write in a plan, GB/s: far above any node's drives
/// today (eight PCIe Gen5 SSDs read 48 GB/s), a bound on typing errors.
pub const NVME_GB_PER_S_MAX: f64 = 1000.0;

/// The parallel section: degrees of at least 1, a ZeRO stage of 0 to 3, a pipeline layout that parses.
fn parallel(p: &ParallelFile) -> Result<Parallel, PlanFileError> {
    let Some(zero_stage) = ZeroStage::new(p.zero_stage) else {
        return Err(PlanFileError::OutOfRange {
            field: Field::ParallelZeroStage,
            expected: Allowed::ZeroStage,
        });
    };
    Ok(Parallel {
        tp: count(p.tp, Field::ParallelTp, Limit::Degree)?,
        pp: count(p.pp, Field::ParallelPp, Limit::Degree)?,
        vpp: count(p.vpp, Field::ParallelVpp, Limit::Degree)?,
        cp: count(p.cp, Field::ParallelCp, Limit::Degree)?,
        cp_algo: p.cp_algo,
        ep: count(p.ep, Field::ParallelEp, Limit::Degree)?,
        etp: count(p.etp, Field::ParallelEtp, Limit::Degree)?,
        sequence_parallel: p.sequence_parallel,
        zero_stage,
        distributed_optimizer: p.distributed_optimizer,
        offload_optimizer: p.offload_optimizer,
        offload_params: p.offload_params,
        offload_device: p.offload_device,
        overlap_grad_reduce: p.overlap_grad_reduce,
        overlap_param_gather: p.overlap_param_gather,
        grad_reduce_bf16: p.grad_reduce_bf16,
        fp8_param_gather: p.fp8_param_gather,
        no_sync_accumulation: p.no_sync_accumulation,
        offload_policy: p.offload_policy,
        zero_hpz: count(p.zero_hpz_partition_size.max(1), Field::ParallelZeroHpz, Limit::Degree)?,
        zero_quantized_weights: p.zero_quantized_weights,
        zero_quantized_gradients: p.zero_quantized_gradients,
        tp_comm_overlap: p.tp_comm_overlap,
        swap_optimizer: p.swap_optimizer,
        uneven_layers: p.uneven_layers,
        schedule: p.schedule,
        fsdp: p.fsdp,
        account_embedding_loss: p.account_embedding_loss,
        pipeline_layout: pipeline_layout(&p.pipeline_layout)?,
        fused_kernels: p.fused_kernels,
    })
}

/// The recomputation section: a layer ratio in (0, 1], known module names.
fn recompute(r: &RecomputeFile) -> Result<Recompute, PlanFileError> {
    if !(r.layers_ratio.is_finite() && 0.0 < r.layers_ratio && r.layers_ratio <= 1.0) {
        return Err(PlanFileError::OutOfRange {
            field: Field::RecomputeLayersRatio,
            expected: Allowed::AboveZeroAtMost { max: 1.0 },
        });
    }
    Ok(Recompute {
        granularity: r.granularity,
        method: r.method,
        num_layers: count(r.num_layers, Field::RecomputeNumLayers, Limit::Degree)?,
        activation_function: r.activation_function,
        swap_attention: r.swap_attention,
        activation_function_layers: count_or_zero(
            r.activation_function_layers,
            Field::RecomputeActivationFunctionLayers,
            Limit::Degree,
        )?,
        layers_ratio_frac: r.layers_ratio,
        modules: RecomputeModules::try_from_names(r.modules.iter().map(String::as_str)).map_err(|_| {
            PlanFileError::OutOfRange { field: Field::RecomputeModules, expected: Allowed::RecomputeModules }
        })?,
        cpu_offload_layers: count_or_zero(
            r.cpu_offload_layers,
            Field::RecomputeCpuOffloadLayers,
            Limit::Degree,
        )?,
        distribute_saved_activations: r.distribute_saved_activations,
    })
}

/// The overheads section: memory terms from 0 to 1,000,000 MiB, an allocator reserve of at most half.
fn check_overheads(o: &OverheadsFile) -> Result<(), PlanFileError> {
    for (x, field) in [
        (o.runtime_context_mib, Field::OverheadsRuntimeContextMib),
        (o.comm_buffer_mib, Field::OverheadsCommBufferMib),
    ] {
        if x.is_some_and(|x| !(x.is_finite() && (0.0..=1e6).contains(&x))) {
            return Err(PlanFileError::OutOfRange {
                field,
                expected: Allowed::Between { min: 0.0, max: 1e6, unit: "MiB" },
            });
        }
    }
    if o.allocator_reserve.is_some_and(|x| !(x.is_finite() && (0.0..=0.5).contains(&x))) {
        return Err(PlanFileError::OutOfRange {
            field: Field::OverheadsAllocatorReserve,
            expected: Allowed::between(0.0, 0.5),
        });
    }
    Ok(())
}

/// The batch section: sizes of at least 1.
fn batch(b: &BatchFile) -> Result<Batch, PlanFileError> {
    Ok(Batch {
        micro_batch: count(b.micro_batch, Field::BatchMicroBatch, Limit::Size)?,
        global_batch: count(b.global_batch, Field::BatchGlobalBatch, Limit::Size)?,
        seq_len: count(b.seq_len, Field::BatchSeqLen, Limit::Size)?,
        mean_seq_len: count_or_zero(b.mean_seq_len, Field::BatchMeanSeqLen, Limit::Size)?,
        image_tokens: count_or_zero(b.image_tokens, Field::BatchImageTokens, Limit::Size)?,
    })
}

/// The LoRA section: a rank of at least 1, known target modules.
fn lora(l: &LoraFile) -> Result<Lora, PlanFileError> {
    let targets = match &l.targets {
        TargetsField::Word(word) => lora_targets(word.split(','))?,
        TargetsField::List(names) => lora_targets(names.iter().map(String::as_str))?,
    };
    if !(l.dropout.is_finite() && (0.0..=0.9).contains(&l.dropout)) {
        return Err(PlanFileError::OutOfRange {
            field: Field::LoraDropout,
            expected: Allowed::between(0.0, 0.9),
        });
    }
    let rank = count(l.rank, Field::LoraRank, Limit::Degree)?;
    Ok(Lora { rank, alpha: l.alpha, targets, dropout: l.dropout, dora: l.dora })
}

/// The RL section: counts in range, a memory utilization in (0, 1].
fn rl(rl_file: &RlFile) -> Result<Rl, PlanFileError> {
    let utilization = rl_file.gpu_memory_utilization;
    if !(0.0 < utilization && utilization <= 1.0) {
        return Err(PlanFileError::OutOfRange {
            field: Field::RlGpuMemoryUtilization,
            expected: Allowed::AboveZeroAtMost { max: 1.0 },
        });
    }
    Ok(Rl {
        rollout_tp: count(rl_file.rollout_tp, Field::RlRolloutTp, Limit::Degree)?,
        rollout_ep: count(rl_file.rollout_ep, Field::RlRolloutEp, Limit::Degree)?,
        n_samples_per_prompt: count(
            rl_file.n_samples_per_prompt,
            Field::RlNSamplesPerPrompt,
            Limit::Samples,
        )?,
        max_prompt_length: count(rl_file.max_prompt_length, Field::RlMaxPromptLength, Limit::Size)?,
        max_response_length: count(rl_file.max_response_length, Field::RlMaxResponseLength, Limit::Size)?,
        mean_prompt_length: count_or_zero(
            rl_file.mean_prompt_length,
            Field::RlMeanPromptLength,
            Limit::Size,
        )?,
        mean_response_length: count_or_zero(
            rl_file.mean_response_length,
            Field::RlMeanResponseLength,
            Limit::Size,
        )?,
        gpu_memory_utilization_frac: utilization,
        max_num_seqs: count(rl_file.max_num_seqs, Field::RlMaxNumSeqs, Limit::Size)?,
        mini_batch: count_or_zero(rl_file.mini_batch, Field::RlMiniBatch, Limit::Size)?,
        dynamic_batch: rl_file.dynamic_batch,
        max_tokens_per_device: count_or_zero(
            rl_file.max_tokens_per_device,
            Field::RlMaxTokensPerDevice,
            Limit::Size,
        )?,
        remove_padding: rl_file.remove_padding,
        enforce_eager: rl_file.enforce_eager,
        log_prob_micro_batch: count_or_zero(
            rl_file.log_prob_micro_batch,
            Field::RlLogProbMicroBatch,
            Limit::Size,
        )?,
        log_prob_max_tokens_per_device: count_or_zero(
            rl_file.log_prob_max_tokens_per_device,
            Field::RlLogProbMaxTokensPerDevice,
            Limit::Size,
        )?,
        max_model_len: count_or_zero(rl_file.max_model_len, Field::RlMaxModelLen, Limit::Size)?,
        max_num_batched_tokens: count_or_zero(
            rl_file.max_num_batched_tokens,
            Field::RlMaxNumBatchedTokens,
            Limit::Size,
        )?,
        blocking: rl_file.blocking,
        kl_loss: rl_file.kl_loss,
        lora: rl_file.lora,
    })
}

fn moe(m: &MoeFile) -> Result<MoeFile, PlanFileError> {
    if !(m.imbalance.is_finite() && (1.0..=64.0).contains(&m.imbalance)) {
        return Err(PlanFileError::OutOfRange {
            field: Field::MoeImbalance,
            expected: Allowed::between(1.0, 64.0),
        });
    }
    if let Some(c) = m.capacity_factor
        && !(c.is_finite() && 0.0 < c && c <= 64.0)
    {
        return Err(PlanFileError::OutOfRange {
            field: Field::MoeCapacityFactor,
            expected: Allowed::AboveZeroAtMost { max: 64.0 },
        });
    }
    Ok(*m)
}

/// Batch sizes as written.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
#[allow(missing_docs)]
pub struct BatchFile {
    pub micro_batch: u32,
    pub global_batch: u32,
    pub seq_len: u32,
    /// 0 = every sample `seq_len` long.
    pub mean_seq_len: u32,
    /// 0 = text only.
    pub image_tokens: u32,
}

impl Default for BatchFile {
    fn default() -> Self {
        BatchFile { micro_batch: 1, global_batch: 64, seq_len: 4096, mean_seq_len: 0, image_tokens: 0 }
    }
}

/// LoRA as written.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
#[allow(missing_docs)]
pub struct LoraFile {
    pub rank: u32,
    pub alpha: u32,
    /// `"all"` or a list of module names (`q_proj`, `v_proj`, …).
    pub targets: TargetsField,
    /// The dropout on each adapter's input (`lora_dropout`), 0–0.9; 0 is written as nothing.
    #[serde(skip_serializing_if = "is_zero_f64")]
    pub dropout: f64,
    /// DoRA (`use_dora`); false is written as nothing.
    #[serde(skip_serializing_if = "is_false")]
    pub dora: bool,
}

impl LoraFile {
    /// The rank a plan file that names none trains (LLaMA-Factory's `lora_rank` default, 8).
    pub const DEFAULT_RANK: u32 = 8;
}

impl Default for LoraFile {
    fn default() -> Self {
        LoraFile {
            rank: LoraFile::DEFAULT_RANK,
            alpha: 16,
            targets: TargetsField::Word("all".to_owned()),
            dropout: 0.0,
            dora: false,
        }
    }
}

/// LoRA targets as written: `"all"` or a list.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
#[allow(missing_docs)]
pub enum TargetsField {
    Word(String),
    List(Vec<String>),
}

/// RL settings as written.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
#[allow(missing_docs)]
pub struct RlFile {
    pub rollout_tp: u32,
    /// 1 = no expert parallelism in the rollout engine.
    pub rollout_ep: u32,
    pub n_samples_per_prompt: u32,
    pub max_prompt_length: u32,
    pub max_response_length: u32,
    /// 0 = every prompt runs to `max_prompt_length`.
    pub mean_prompt_length: u32,
    /// 0 = every response runs to `max_response_length`.
    pub mean_response_length: u32,
    pub gpu_memory_utilization: f64,
    pub max_num_seqs: u32,
    /// Prompts per actor update; 0 = the whole batch.
    pub mini_batch: u32,
    pub dynamic_batch: bool,
    /// 0 = the framework's default.
    pub max_tokens_per_device: u32,
    pub remove_padding: bool,
    pub enforce_eager: bool,
    /// Sequences a device scores at once for the log-probabilities; 0 = the update's micro-batch.
    pub log_prob_micro_batch: u32,
    /// Tokens a device scores at once for the log-probabilities, packed; 0 = the update's budget.
    pub log_prob_max_tokens_per_device: u32,
    /// 0 = prompt + response.
    pub max_model_len: u32,
    /// 0 = the larger of 8192 and one sequence.
    pub max_num_batched_tokens: u32,
    pub blocking: bool,
    /// VeRL `use_kl_loss`: the KL to the reference in the actor's loss (the reference then runs).
    pub kl_loss: bool,
    /// The actor trains LoRA adapters (the `lora` block's rank, alpha and targets).
    pub lora: bool,
}

impl Default for RlFile {
    fn default() -> Self {
        // VeRL's GRPO example (`examples/grpo_trainer/run_qwen2-7b.sh`): rollout.n 5, prompts 512,
        // responses 1024, gpu_memory_utilization 0.6; vLLM's default max_num_seqs 256.
        RlFile {
            rollout_tp: 1,
            rollout_ep: 1,
            n_samples_per_prompt: 5,
            max_prompt_length: 512,
            max_response_length: 1024,
            mean_prompt_length: 0,
            mean_response_length: 0,
            gpu_memory_utilization: 0.6,
            max_num_seqs: 256,
            mini_batch: 0,
            // VeRL's and MindSpeed-RL's defaults (`verl/workers/config/model.py`,
            // `mindspeed_rl/config_cls/rl_config.py`); VeRL removes padding by default, MindSpeed-RL
            // does not, and the plan takes VeRL's side.
            dynamic_batch: false,
            max_tokens_per_device: 0,
            remove_padding: true,
            enforce_eager: false,
            log_prob_micro_batch: 0,
            log_prob_max_tokens_per_device: 0,
            max_model_len: 0,
            max_num_batched_tokens: 0,
            blocking: true,
            // The KL loss of VeRL's GRPO examples (`use_kl_loss=True`, `kl_loss_coef=0.001`).
            kl_loss: true,
            lora: false,
        }
    }
}

/// What the launch files name that only the user knows. Empty means the framework's usual
/// placeholder (the model's Hugging Face id, a demo dataset, `saves/…`, `${MASTER_ADDR}`). The
/// emitters quote every one of these; the plan refuses control characters (newline, tab, NUL).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct LaunchFile {
    /// Model weights: a Hugging Face id or a local directory (Megatron: the converted checkpoint).
    pub model_path: String,
    /// Training data: LLaMA-Factory dataset names, a Megatron data prefix, or a VeRL parquet file.
    pub dataset: String,
    /// Where checkpoints and logs go.
    pub output_dir: String,
    /// The first node's address; empty keeps `${MASTER_ADDR}` from the environment.
    pub master_addr: String,
    /// The rendezvous port; 29500 (torchrun's default) when 0.
    pub master_port: u16,
}

/// The run as a whole, as written: how many tokens it trains on, and what a device-hour and the
/// facility cost (docs/cost.md). Each figure is documented with its default.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct BudgetFile {
    /// Tokens to train on (pretraining: the corpus budget, 10^12 = 1T); used when
    /// `dataset_tokens` is 0. 10^12 when omitted, from 1 to [`BUDGET_TOKENS_MAX`].
    pub tokens: u64,
    /// Tokens in one pass over the fine-tuning dataset; with it the budget is `epochs` ×
    /// `dataset_tokens`. 0 (none) when omitted.
    pub dataset_tokens: u64,
    /// Passes over the dataset (HF `num_train_epochs`, fractions allowed), more than 0 and at
    /// most 10,000; 1 when omitted.
    pub epochs: f64,
    /// Price of one device-hour, in any currency, from 0 to 10^6; 0 (no price, no cost shown)
    /// when omitted.
    pub price_per_device_hour: f64,
    /// Power usage effectiveness: the facility's power over the IT equipment's, from 1 to 5; 1
    /// (the devices' own power only) when omitted.
    pub pue: f64,
}

/// The largest token budget a plan takes: 10^16, far beyond any published run (Llama 3 trained on
/// some 1.5 × 10^13 tokens), and exact in f64.
pub const BUDGET_TOKENS_MAX: u64 = 10_000_000_000_000_000;

impl Default for BudgetFile {
    fn default() -> Self {
        BudgetFile {
            tokens: 1_000_000_000_000,
            dataset_tokens: 0,
            epochs: 1.0,
            price_per_device_hour: 0.0,
            pue: 1.0,
        }
    }
}

impl BudgetFile {
    /// Whether every setting is at its default (the plan file then leaves the section out).
    pub fn is_default(&self) -> bool {
        *self == BudgetFile::default()
    }

    /// The tokens the run trains on: `epochs` × `dataset_tokens` with a dataset size, else `tokens`.
    pub fn budget_tokens(&self) -> f64 {
        match self.dataset_tokens {
            0 => self.tokens as f64,
            n => self.epochs * n as f64,
        }
    }
}

fn budget(b: &BudgetFile) -> Result<BudgetFile, PlanFileError> {
    if !(1..=BUDGET_TOKENS_MAX).contains(&b.tokens) {
        return Err(PlanFileError::OutOfRange {
            field: Field::BudgetTokens,
            expected: Allowed::between(1.0, BUDGET_TOKENS_MAX as f64),
        });
    }
    if BUDGET_TOKENS_MAX < b.dataset_tokens {
        return Err(PlanFileError::OutOfRange {
            field: Field::BudgetDatasetTokens,
            expected: Allowed::between(0.0, BUDGET_TOKENS_MAX as f64),
        });
    }
    if !(b.epochs.is_finite() && 0.0 < b.epochs && b.epochs <= 10_000.0) {
        return Err(PlanFileError::OutOfRange {
            field: Field::BudgetEpochs,
            expected: Allowed::AboveZeroAtMost { max: 10_000.0 },
        });
    }
    if !(b.price_per_device_hour.is_finite() && (0.0..=1e6).contains(&b.price_per_device_hour)) {
        return Err(PlanFileError::OutOfRange {
            field: Field::BudgetPricePerDeviceHour,
            expected: Allowed::between(0.0, 1e6),
        });
    }
    if !(b.pue.is_finite() && (1.0..=5.0).contains(&b.pue)) {
        return Err(PlanFileError::OutOfRange {
            field: Field::BudgetPue,
            expected: Allowed::between(1.0, 5.0),
        });
    }
    Ok(*b)
}

/// Longest text a launch field takes.
pub const LAUNCH_TEXT_MAX: usize = 4096;

fn launch(l: &LaunchFile) -> Result<LaunchFile, PlanFileError> {
    for (field, text) in [
        (Field::LaunchModelPath, &l.model_path),
        (Field::LaunchDataset, &l.dataset),
        (Field::LaunchOutputDir, &l.output_dir),
        (Field::LaunchMasterAddr, &l.master_addr),
    ] {
        if text.chars().any(char::is_control) || LAUNCH_TEXT_MAX < text.len() {
            return Err(PlanFileError::OutOfRange {
                field,
                expected: Allowed::Text { max_bytes: LAUNCH_TEXT_MAX },
            });
        }
    }
    Ok(l.clone())
}

/// What a field takes, in [`PlanFileError::OutOfRange`]: numbers and kinds, so each language words
/// them itself (`Display` is the English).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Allowed {
    /// From `min` to `max`, both included, in `unit` (empty for none).
    Between {
        /// The least accepted.
        min: f64,
        /// The most accepted.
        max: f64,
        /// The unit after the numbers, such as `MiB`.
        unit: &'static str,
    },
    /// More than 0 and at most `max`.
    AboveZeroAtMost {
        /// The most accepted.
        max: f64,
    },
    /// A device's peak: more than 0, or left out when `fp16_tflops` is given.
    PeakOrFp16,
    /// A ZeRO stage: 0, 1, 2 or 3.
    ZeroStage,
    /// Names of the modules selective recomputation reruns.
    RecomputeModules,
    /// `"all"` or at least one module.
    LoraTargets,
    /// `"nvidia"`, `"ascend"` or `"other"`.
    Vendor,
    /// Text without control characters, at most `max_bytes` bytes.
    Text {
        /// The longest accepted, bytes.
        max_bytes: usize,
    },
    /// At most `max_chars` characters.
    Name {
        /// The longest accepted, characters.
        max_chars: usize,
    },
    /// Megatron's pipeline layout symbols, at most `max_chars` characters.
    LayoutSymbols {
        /// The longest accepted, characters.
        max_chars: usize,
    },
}

impl Allowed {
    /// From `min` to `max`, no unit.
    pub const fn between(min: f64, max: f64) -> Allowed {
        Allowed::Between { min, max, unit: "" }
    }
}

/// A bound as plan files write it: plainly, but a power of ten from 10^10 up as one (10^16).
pub fn bound_text(x: f64) -> String {
    let exponent = x.log10().round();
    match 10.0 <= exponent && 10f64.powf(exponent) == x {
        true => format!("10^{exponent}"),
        false => x.to_string(),
    }
}

impl fmt::Display for Allowed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Allowed::Between { min, max, unit } => {
                write!(f, "from {} to {}", bound_text(min), bound_text(max))?;
                match unit {
                    "" => Ok(()),
                    unit => write!(f, " {unit}"),
                }
            }
            Allowed::AboveZeroAtMost { max } => write!(f, "more than 0 and at most {}", bound_text(max)),
            Allowed::PeakOrFp16 => f.write_str("more than 0 (or give fp16_tflops)"),
            Allowed::ZeroStage => f.write_str("0, 1, 2 or 3"),
            Allowed::RecomputeModules => {
                f.write_str("names from core_attn, moe_act, layernorm, mla_up_proj, mlp, moe, shared_experts")
            }
            Allowed::LoraTargets => f.write_str("\"all\" or at least one module"),
            Allowed::Vendor => f.write_str("\"nvidia\", \"ascend\" or \"other\""),
            Allowed::Text { max_bytes } => {
                write!(f, "text without control characters (newline, tab, NUL), at most {max_bytes} bytes")
            }
            Allowed::Name { max_chars } => {
                write!(f, "at most {max_chars} characters, none a control character (newline, tab, NUL)")
            }
            Allowed::LayoutSymbols { max_chars } => write!(
                f,
                "Megatron's layout symbols only: E (embedding), t (layer), m (MTP layer), L (loss), | between \
                 stages, (…)*n and x*n repeats, commas; at most {max_chars} characters"
            ),
        }
    }
}

/// Why a plan was rejected.
#[derive(Clone, Debug, PartialEq)]
pub enum PlanFileError {
    /// Occurs when the text is not JSON, or not a plan object (a missing `model`, an unknown key,
    /// a value of the wrong type).
    Json(String),
    /// Occurs when the file's `version` is newer than this build understands.
    UnsupportedVersion(u32),
    /// Occurs when `model` names no catalog model.
    UnknownModel(String),
    /// Occurs when `hardware` names no catalog device.
    UnknownHardware(String),
    /// Occurs when `model.hf_config` cannot be read.
    Config(ConfigError),
    /// Occurs when a value is outside its range (a zero count, a ZeRO stage of 4, a utilization above 1).
    OutOfRange {
        /// The field.
        field: Field,
        /// What it must be.
        expected: Allowed,
    },
    /// Occurs when a LoRA target is not a module name the planner knows.
    UnknownLoraTarget(String),
}

impl fmt::Display for PlanFileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PlanFileError::Json(msg) => write!(f, "invalid plan: {msg}"),
            PlanFileError::UnsupportedVersion(v) => {
                write!(f, "plan version {v} is newer than this build reads (version {PLAN_FILE_VERSION})")
            }
            PlanFileError::UnknownModel(id) => {
                write!(f, "unknown model {id:?}: `trainplan models` lists the catalog")
            }
            PlanFileError::UnknownHardware(id) => {
                write!(f, "unknown hardware {id:?}: `trainplan hardware` lists the catalog")
            }
            PlanFileError::Config(err) => write!(f, "model.hf_config: {err}"),
            PlanFileError::OutOfRange { field, expected } => write!(f, "{field} must be {expected}"),
            PlanFileError::UnknownLoraTarget(name) => write!(
                f,
                "unknown LoRA target {name:?}: use \"all\" or module names such as q_proj, v_proj, gate_proj"
            ),
        }
    }
}

impl std::error::Error for PlanFileError {}

impl Plan {
    /// Reads a plan from its JSON text.
    ///
    /// # Errors
    ///
    /// A [`PlanFileError`] naming what is wrong; the input is never partly applied.
    pub fn from_json(text: &str) -> Result<Plan, PlanFileError> {
        let file: PlanFile = serde_json::from_str(text).map_err(|e| PlanFileError::Json(e.to_string()))?;
        Plan::from_file(&file)
    }

    /// Validates a decoded plan file.
    ///
    /// # Errors
    ///
    /// A [`PlanFileError`] for a newer version, an unknown id, an unreadable config or a value out of range.
    pub fn from_file(file: &PlanFile) -> Result<Plan, PlanFileError> {
        if PLAN_FILE_VERSION < file.version {
            return Err(PlanFileError::UnsupportedVersion(file.version));
        }
        let model = model_choice(&file.model)?;
        let hardware = device_choice(&file.hardware)?;
        let cluster = cluster(&file.cluster, &hardware.hw)?;
        let parallel = parallel(&file.parallel)?;
        let recompute = recompute(&file.recompute)?;
        let o = &file.overheads;
        check_overheads(o)?;
        let batch = batch(&file.batch)?;
        let lora = lora(&file.lora)?;
        let rl = rl(&file.rl)?;
        Ok(Plan {
            model,
            hardware,
            cluster,
            framework: file.framework,
            method: file.method,
            mtp_layers: mtp_layers(file.mtp_layers)?,
            parallel,
            recompute,
            batch,
            precision: file.precision,
            attention: file.attention,
            liger_kernel: file.liger_kernel,
            pure_bf16: file.pure_bf16,
            optimizer: file.optimizer,
            freeze_layers: count(file.freeze_layers, Field::FreezeLayers, Limit::Degree)?,
            low_rank: LowRank {
                rank: count(file.low_rank.rank, Field::LowRankRank, Limit::Degree)?,
                layerwise: file.low_rank.layerwise,
            },
            lora,
            rl,
            moe: moe(&file.moe)?,
            overheads: *o,
            calibration: calibration(&file.calibration)?,
            launch: launch(&file.launch)?,
            budget: budget(&file.budget)?,
        })
    }

    /// The cluster section as written: what the device implies left out.
    fn cluster_file(&self) -> ClusterFile {
        let c = &self.cluster;
        ClusterFile {
            nodes: c.nodes.get(),
            devices_per_node: Some(c.devices_per_node.get())
                .filter(|&n| n != self.hardware.hw.devices_per_node),
            scale_up_domain: Some(c.scale_up_domain.get())
                .filter(|&n| n != default_scale_up(&self.hardware.hw, c.devices_per_node.get())),
            nvme_read_gb_per_s: Some(c.nvme_read_gb_per_s).filter(|&x| x != NVME_READ_GB_PER_S_DEFAULT),
            nvme_write_gb_per_s: Some(c.nvme_write_gb_per_s).filter(|&x| x != NVME_WRITE_GB_PER_S_DEFAULT),
        }
    }

    /// The plan file that reads back as this plan. Fields equal to their defaults are written too;
    /// [`crate::permalink`] drops them.
    pub fn to_file(&self) -> PlanFile {
        let model = match &self.model.spec {
            ModelSpec::Catalog(id) => ModelField::Id(id.clone()),
            ModelSpec::HfConfig(config) => {
                ModelField::Config { hf_config: config.clone(), name: Some(self.model.name.clone()) }
            }
        };
        let hardware = match &self.hardware.spec {
            HardwareSpec::Catalog(id) => HardwareField::Id(id.clone()),
            HardwareSpec::Custom(custom) => HardwareField::Custom { custom: custom.clone() },
        };
        let p = &self.parallel;
        let targets = match &self.lora.targets {
            LoraTargets::All => TargetsField::Word("all".to_owned()),
            LoraTargets::Only(list) => TargetsField::List(list.iter().map(|t| t.name().to_owned()).collect()),
        };
        PlanFile {
            version: PLAN_FILE_VERSION,
            model,
            hardware,
            cluster: self.cluster_file(),
            framework: self.framework,
            method: self.method,
            mtp_layers: self.mtp_layers,
            parallel: ParallelFile {
                tp: p.tp.get(),
                pp: p.pp.get(),
                vpp: p.vpp.get(),
                cp: p.cp.get(),
                cp_algo: p.cp_algo,
                ep: p.ep.get(),
                etp: p.etp.get(),
                sequence_parallel: p.sequence_parallel,
                zero_stage: p.zero_stage.get(),
                distributed_optimizer: p.distributed_optimizer,
                offload_optimizer: p.offload_optimizer,
                offload_params: p.offload_params,
                offload_device: p.offload_device,
                overlap_grad_reduce: p.overlap_grad_reduce,
                overlap_param_gather: p.overlap_param_gather,
                grad_reduce_bf16: p.grad_reduce_bf16,
                fp8_param_gather: p.fp8_param_gather,
                no_sync_accumulation: p.no_sync_accumulation,
                offload_policy: p.offload_policy,
                zero_hpz_partition_size: p.zero_hpz.get(),
                zero_quantized_weights: p.zero_quantized_weights,
                zero_quantized_gradients: p.zero_quantized_gradients,
                tp_comm_overlap: p.tp_comm_overlap,
                swap_optimizer: p.swap_optimizer,
                uneven_layers: p.uneven_layers,
                schedule: p.schedule,
                fsdp: p.fsdp,
                account_embedding_loss: p.account_embedding_loss,
                pipeline_layout: p.pipeline_layout.clone().unwrap_or_default(),
                fused_kernels: p.fused_kernels,
            },
            recompute: RecomputeFile {
                granularity: self.recompute.granularity,
                method: self.recompute.method,
                num_layers: self.recompute.num_layers.get(),
                activation_function: self.recompute.activation_function,
                swap_attention: self.recompute.swap_attention,
                activation_function_layers: self.recompute.activation_function_layers,
                layers_ratio: self.recompute.layers_ratio_frac,
                modules: self.recompute.modules.list().into_iter().map(str::to_owned).collect(),
                cpu_offload_layers: self.recompute.cpu_offload_layers,
                distribute_saved_activations: self.recompute.distribute_saved_activations,
            },
            batch: BatchFile {
                micro_batch: self.batch.micro_batch.get(),
                global_batch: self.batch.global_batch.get(),
                seq_len: self.batch.seq_len.get(),
                mean_seq_len: self.batch.mean_seq_len,
                image_tokens: self.batch.image_tokens,
            },
            precision: self.precision,
            attention: self.attention,
            liger_kernel: self.liger_kernel,
            pure_bf16: self.pure_bf16,
            optimizer: self.optimizer,
            freeze_layers: self.freeze_layers.get(),
            low_rank: LowRankFile { rank: self.low_rank.rank.get(), layerwise: self.low_rank.layerwise },
            lora: LoraFile {
                rank: self.lora.rank.get(),
                alpha: self.lora.alpha,
                targets,
                dropout: self.lora.dropout,
                dora: self.lora.dora,
            },
            rl: RlFile {
                rollout_tp: self.rl.rollout_tp.get(),
                rollout_ep: self.rl.rollout_ep.get(),
                n_samples_per_prompt: self.rl.n_samples_per_prompt.get(),
                max_prompt_length: self.rl.max_prompt_length.get(),
                max_response_length: self.rl.max_response_length.get(),
                mean_prompt_length: self.rl.mean_prompt_length,
                mean_response_length: self.rl.mean_response_length,
                gpu_memory_utilization: self.rl.gpu_memory_utilization_frac,
                max_num_seqs: self.rl.max_num_seqs.get(),
                mini_batch: self.rl.mini_batch,
                dynamic_batch: self.rl.dynamic_batch,
                max_tokens_per_device: self.rl.max_tokens_per_device,
                remove_padding: self.rl.remove_padding,
                enforce_eager: self.rl.enforce_eager,
                log_prob_micro_batch: self.rl.log_prob_micro_batch,
                log_prob_max_tokens_per_device: self.rl.log_prob_max_tokens_per_device,
                max_model_len: self.rl.max_model_len,
                max_num_batched_tokens: self.rl.max_num_batched_tokens,
                blocking: self.rl.blocking,
                kl_loss: self.rl.kl_loss,
                lora: self.rl.lora,
            },
            moe: self.moe,
            overheads: self.overheads,
            calibration: self.calibration,
            launch: self.launch.clone(),
            budget: self.budget,
        }
    }

    /// The plan a first visit shows: Qwen2.5-7B, LoRA SFT with LLaMA-Factory on one node of 8 × H100.
    pub fn first_visit() -> Plan {
        Plan::from_json(r#"{"model": "qwen2.5-7b"}"#).expect("the default plan is valid")
    }
}

impl PlanFile {
    /// The plan file with only a model: every other field at its default.
    pub fn minimal(model: ModelField) -> PlanFile {
        PlanFile {
            version: PLAN_FILE_VERSION,
            model,
            hardware: default_hardware(),
            cluster: ClusterFile::default(),
            framework: default_framework(),
            method: default_method(),
            mtp_layers: 0,
            parallel: ParallelFile::default(),
            recompute: RecomputeFile::default(),
            batch: BatchFile::default(),
            precision: default_precision(),
            attention: default_attention(),
            liger_kernel: false,
            pure_bf16: false,
            optimizer: Optimizer::AdamW,
            freeze_layers: FREEZE_LAYERS_DEFAULT,
            low_rank: LowRankFile::default(),
            lora: LoraFile::default(),
            rl: RlFile::default(),
            moe: MoeFile::default(),
            overheads: OverheadsFile::default(),
            calibration: CalibrationFile::default(),
            launch: LaunchFile::default(),
            budget: BudgetFile::default(),
        }
    }
}

fn calibration(c: &CalibrationFile) -> Result<CalibrationFile, PlanFileError> {
    if c.efficiency_scale.is_some_and(|x| !(x.is_finite() && (0.05..=5.0).contains(&x))) {
        return Err(PlanFileError::OutOfRange {
            field: Field::CalibrationEfficiencyScale,
            expected: Allowed::between(0.05, 5.0),
        });
    }
    if c.rollout_scale.is_some_and(|x| !(x.is_finite() && (0.05..=20.0).contains(&x))) {
        return Err(PlanFileError::OutOfRange {
            field: Field::CalibrationRolloutScale,
            expected: Allowed::between(0.05, 20.0),
        });
    }
    if c.memory_offset_mib.is_some_and(|x| !(x.is_finite() && x.abs() <= 1e6)) {
        return Err(PlanFileError::OutOfRange {
            field: Field::CalibrationMemoryOffsetMib,
            expected: Allowed::Between { min: -1e6, max: 1e6, unit: "MiB" },
        });
    }
    Ok(*c)
}

/// Upper limits of the plan's counts: far beyond any real run (a 1,024-device node, 65,536 nodes,
/// a 16-million-token sequence), and low enough that no product the engine forms of them leaves
/// u64 or loses its meaning in f64. A value above its limit is refused with the limit named.
#[derive(Clone, Copy, Debug)]
enum Limit {
    /// Nodes, parallel degrees, layer counts, LoRA ranks: 65,536.
    Degree,
    /// Devices per node: 1,024.
    Node,
    /// Token counts and batch sizes: 16,777,216 (2^24).
    Size,
    /// Responses per prompt: 1,024.
    Samples,
}

impl Limit {
    fn max(self) -> u32 {
        match self {
            Limit::Degree => 1 << 16,
            Limit::Node | Limit::Samples => 1 << 10,
            Limit::Size => 1 << 24,
        }
    }

    fn allowed(self, zero: bool) -> Allowed {
        Allowed::between(f64::from(u8::from(!zero)), f64::from(self.max()))
    }
}

/// The longest pipeline layout string a plan takes: DeepSeek-V3's is 14 characters, a layout
/// written out for 1,024 virtual stages of two layers some 3,000.
const PIPELINE_LAYOUT_MAX: usize = 4096;

/// A pipeline layout as written: empty for none; else only Megatron's layout symbols (`E`, `t`,
/// `m`, `L`, `|`, `,`, `(`, `)`, `*` and digits, `parse_str_to_list`), so nothing else can reach a
/// launch script. Whether Megatron accepts the layout for the model is a rule
/// (`rules::apply`, `parallel.layout_*`).
fn pipeline_layout(text: &str) -> Result<Option<String>, PlanFileError> {
    let ok = text.len() <= PIPELINE_LAYOUT_MAX
        && text.chars().all(|c| "ELtm|,()*".contains(c) || c.is_ascii_digit());
    match ok {
        true if text.is_empty() => Ok(None),
        true => Ok(Some(text.to_owned())),
        false => Err(PlanFileError::OutOfRange {
            field: Field::ParallelPipelineLayout,
            expected: Allowed::LayoutSymbols { max_chars: PIPELINE_LAYOUT_MAX },
        }),
    }
}

/// The MTP layers a plan trains: at most [`MTP_LAYERS_MAX`].
fn mtp_layers(n: u32) -> Result<u32, PlanFileError> {
    match n <= MTP_LAYERS_MAX {
        true => Ok(n),
        false => Err(PlanFileError::OutOfRange {
            field: Field::MtpLayers,
            expected: Allowed::between(0.0, f64::from(MTP_LAYERS_MAX)),
        }),
    }
}

/// The most MTP layers a plan may train (DeepSeek-V3 trains 1; its paper §2.2 describes D sequential
/// modules, and no published run uses more than a few).
pub const MTP_LAYERS_MAX: u32 = 16;

fn count(n: u32, field: Field, limit: Limit) -> Result<NonZeroU32, PlanFileError> {
    match NonZeroU32::new(n) {
        Some(n) if n.get() <= limit.max() => Ok(n),
        _ => Err(PlanFileError::OutOfRange { field, expected: limit.allowed(false) }),
    }
}

/// A count where 0 means "automatic" or "all".
fn count_or_zero(n: u32, field: Field, limit: Limit) -> Result<u32, PlanFileError> {
    match n <= limit.max() {
        true => Ok(n),
        false => Err(PlanFileError::OutOfRange { field, expected: limit.allowed(true) }),
    }
}

/// Targets as written, in a list or a comma-separated word: `"all"` anywhere among them means every
/// module (names beside it add nothing, though each must still be a module), the names otherwise.
fn lora_targets<'a>(names: impl Iterator<Item = &'a str>) -> Result<LoraTargets, PlanFileError> {
    let mut res = Vec::new();
    let mut all = false;
    for name in names.map(str::trim).filter(|n| !n.is_empty()) {
        if name == "all" {
            all = true;
            continue;
        }
        let target =
            LoraTarget::from_name(name).ok_or_else(|| PlanFileError::UnknownLoraTarget(name.to_owned()))?;
        res.push(target);
    }
    if all {
        return Ok(LoraTargets::All);
    }
    crate::sort::sort(&mut res);
    res.dedup();
    if res.is_empty() {
        return Err(PlanFileError::OutOfRange { field: Field::LoraTargets, expected: Allowed::LoraTargets });
    }
    Ok(LoraTargets::Only(res))
}

fn model_choice(field: &ModelField) -> Result<ModelChoice, PlanFileError> {
    match field {
        ModelField::Id(id) => {
            let entry = catalog::model(id).ok_or_else(|| PlanFileError::UnknownModel(id.clone()))?;
            Ok(ModelChoice {
                spec: ModelSpec::Catalog(id.clone()),
                name: entry.name.to_owned(),
                arch: entry.arch.clone(),
                warnings: Vec::new(),
                prequantized: None,
            })
        }
        ModelField::Config { hf_config, name } => {
            let imported = hf::import_value(hf_config).map_err(PlanFileError::Config)?;
            let name = match name {
                Some(name) => name.clone(),
                None => match hf_config.get("_name_or_path").and_then(Value::as_str) {
                    Some(path) if !path.is_empty() => path.to_owned(),
                    _ => "custom model".to_owned(),
                },
            };
            // The name is written into launch files' comments: a newline would end the comment.
            if name.chars().any(char::is_control) || LAUNCH_TEXT_MAX < name.len() {
                return Err(PlanFileError::OutOfRange {
                    field: Field::Model,
                    expected: Allowed::Text { max_bytes: LAUNCH_TEXT_MAX },
                });
            }
            Ok(ModelChoice {
                spec: ModelSpec::HfConfig(hf_config.clone()),
                name,
                arch: imported.arch,
                warnings: imported.warnings,
                prequantized: imported.prequantized,
            })
        }
    }
}

fn device_choice(field: &HardwareField) -> Result<DeviceChoice, PlanFileError> {
    match field {
        HardwareField::Id(id) => {
            let hw = hardware::device(id).ok_or_else(|| PlanFileError::UnknownHardware(id.clone()))?;
            Ok(DeviceChoice { spec: HardwareSpec::Catalog(id.clone()), hw })
        }
        HardwareField::Custom { custom } => {
            Ok(DeviceChoice { spec: HardwareSpec::Custom(custom.clone()), hw: custom_hardware(custom)? })
        }
    }
}

/// A custom device in base units, every figure checked to be finite and in a plausible range.
/// The scale-up domain when the plan leaves it out: the device's fabric where it spans more than a
/// node (NVL72 racks, CloudMatrix supernodes), else the plan's node.
fn default_scale_up(hw: &Hardware, devices_per_node: u32) -> u32 {
    match hw.scale_up_domain == hw.devices_per_node {
        true => devices_per_node,
        false => hw.scale_up_domain,
    }
}

/// The longest name a custom device takes, characters.
const CUSTOM_NAME_MAX: usize = 80;

fn custom_hardware(c: &CustomDevice) -> Result<Hardware, PlanFileError> {
    fn range(x: f64, lo: f64, hi: f64, field: Field) -> Result<f64, PlanFileError> {
        range_in(x, lo, hi, "", field)
    }
    fn range_in(x: f64, lo: f64, hi: f64, unit: &'static str, field: Field) -> Result<f64, PlanFileError> {
        match x.is_finite() && lo <= x && x <= hi {
            true => Ok(x),
            false => Err(PlanFileError::OutOfRange {
                field,
                expected: Allowed::Between { min: lo, max: hi, unit },
            }),
        }
    }
    let memory_gb = range(c.memory_gb, 0.1, 100_000.0, Field::HardwareCustomMemoryGb)?;
    let bf16 = range(c.bf16_tflops, 0.0, 1e6, Field::HardwareCustomBf16Tflops)?;
    let fp16 = range(c.fp16_tflops.unwrap_or(bf16), 0.0, 1e6, Field::HardwareCustomFp16Tflops)?;
    if bf16 == 0.0 && fp16 == 0.0 {
        return Err(PlanFileError::OutOfRange {
            field: Field::HardwareCustomBf16Tflops,
            expected: Allowed::PeakOrFp16,
        });
    }
    let fp8 = range(c.fp8_tflops, 0.0, 1e6, Field::HardwareCustomFp8Tflops)?;
    let fp4 = match c.fp4_tflops {
        Some(x) => Some(range(x, 0.0, 1e6, Field::HardwareCustomFp4Tflops)?),
        None => None,
    };
    let memory_bw = range(c.memory_tb_per_s, 0.001, 1000.0, Field::HardwareCustomMemoryTbPerS)?;
    let intra = range(c.intra_node_gb_per_s, 0.001, 1e6, Field::HardwareCustomIntraNodeGbPerS)?;
    let inter = range(c.inter_node_gbit_per_s, 0.001, 1e7, Field::HardwareCustomInterNodeGbitPerS)?;
    let vendor = match c.vendor.as_str() {
        "nvidia" => Vendor::Nvidia,
        "ascend" => Vendor::Ascend,
        "other" => Vendor::Other,
        _ => {
            return Err(PlanFileError::OutOfRange {
                field: Field::HardwareCustomVendor,
                expected: Allowed::Vendor,
            });
        }
    };
    let gemm_efficiency_max = match c.gemm_efficiency_max {
        Some(x) => range(x, 0.05, 1.0, Field::HardwareCustomGemmEfficiencyMax)?,
        None if vendor == Vendor::Ascend => crate::time::ASCEND_GEMM_EFF_MAX,
        None => crate::time::GEMM_EFF_MAX,
    };
    // Ascend devices talk through HCCL, the others through NCCL (or its like); a custom fabric's
    // topology is unknown, so it counts as switched.
    let (collective_eff, collective_latency_seconds) = match vendor {
        Vendor::Ascend => (crate::time::HCCL_COLLECTIVE_EFF, crate::time::HCCL_COLLECTIVE_LATENCY_SECONDS),
        _ => (crate::time::COLLECTIVE_EFF, crate::time::COLLECTIVE_LATENCY_SECONDS),
    };
    // The name is written into launch files' comments: a newline would end the comment.
    if c.name.chars().count() > CUSTOM_NAME_MAX || c.name.chars().any(char::is_control) {
        return Err(PlanFileError::OutOfRange {
            field: Field::HardwareCustomName,
            expected: Allowed::Name { max_chars: CUSTOM_NAME_MAX },
        });
    }
    Ok(Hardware {
        id: "custom".to_owned(),
        name: c.name.clone(),
        vendor,
        memory_bytes: (memory_gb * (1u64 << 30) as f64) as u64,
        bf16_flops_per_second: bf16 * 1e12,
        fp16_flops_per_second: fp16 * 1e12,
        fp8_flops_per_second: fp8 * 1e12,
        fp4_flops_per_second: fp4.unwrap_or(0.0) * 1e12,
        memory_bytes_per_second: memory_bw * 1e12,
        intra_node_bytes_per_second: intra * 1e9,
        inter_node_bytes_per_second: inter * 1e9 / 8.0,
        devices_per_node: count(c.devices_per_node, Field::HardwareCustomDevicesPerNode, Limit::Node)?.get(),
        scale_up_domain: match c.scale_up_domain {
            Some(n) => count(n, Field::HardwareCustomScaleUpDomain, Limit::Degree)?.get(),
            None => count(c.devices_per_node, Field::HardwareCustomDevicesPerNode, Limit::Node)?.get(),
        },
        reported: true,
        source: "entered by the user".to_owned(),
        gemm_efficiency_max,
        collective_eff,
        collective_latency_seconds,
        mesh_links: 0,
        board_power_watts: match c.board_power_w {
            Some(x) => range_in(x, 0.0, 100_000.0, "W", Field::HardwareCustomBoardPowerW)?,
            None => 0.0,
        },
        board_power_reported: true,
        board_power_source: "entered by the user".to_owned(),
    })
}

fn plan_file_version() -> u32 {
    PLAN_FILE_VERSION
}

fn default_hardware() -> HardwareField {
    HardwareField::Id("h100-sxm-80g".to_owned())
}

fn default_framework() -> Framework {
    Framework::LlamaFactory
}

fn default_method() -> Method {
    Method::Lora
}

fn default_precision() -> Precision {
    Precision::Bf16
}

fn default_attention() -> AttentionImpl {
    AttentionImpl::Flash
}

fn one() -> u32 {
    1
}

fn is_one(n: &u32) -> bool {
    *n == 1
}

pub(super) fn eight() -> u32 {
    8
}

pub(super) fn custom_name() -> String {
    "custom device".to_owned()
}

pub(super) fn other_vendor() -> String {
    "other".to_owned()
}
