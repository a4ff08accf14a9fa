//! The plan: every input of a planning question, and its file format.
//!
//! [`Plan`] is the validated, typed input of [`crate::evaluate`]. [`PlanFile`] is its JSON form, the
//! one the CLI reads, the permalink carries and docs/plan-format.md documents; only `model` is
//! required and every other field has a documented default. [`Plan::from_file`] is the only place a
//! plan can be rejected, and [`Plan::to_file`] writes the file that reads back as the same plan.

use std::num::NonZeroU32;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::hardware::{Hardware, Vendor};
use crate::hf::ImportWarning;
use crate::model::{Architecture, LoraTarget};
use crate::quantized::Prequantized;

mod file;

pub use file::*;

/// The version of the plan file format this build reads and writes.
pub const PLAN_FILE_VERSION: u32 = 1;

/// A validated plan.
#[derive(Clone, Debug, PartialEq)]
pub struct Plan {
    /// The model to train.
    pub model: ModelChoice,
    /// The device.
    pub hardware: DeviceChoice,
    /// How many devices.
    pub cluster: Cluster,
    /// The training framework.
    pub framework: Framework,
    /// The training method.
    pub method: Method,
    /// Multi-token-prediction layers trained beside the model (Megatron `--mtp-num-layers`;
    /// DeepSeek-V3 §2.2 trains 1): each a decoder layer with its own loss, on the last stage unless
    /// the pipeline layout places them.
    pub mtp_layers: u32,
    /// Parallelism and sharding.
    pub parallel: Parallel,
    /// Activation recomputation.
    pub recompute: Recompute,
    /// Batch and sequence sizes.
    pub batch: Batch,
    /// Numeric precision of compute.
    pub precision: Precision,
    /// Attention implementation (HF path).
    pub attention: AttentionImpl,
    /// Liger's Triton kernels for HF models (LLaMA-Factory `enable_liger_kernel`,
    /// `llamafactory/model/model_utils/liger_kernel.py`; VeRL `actor_rollout_ref.model.use_liger`):
    /// fused RMSNorm, SwiGLU and rotary embedding, and for LLaMA-Factory's pre-training and SFT the
    /// fused linear cross entropy, which never holds a whole micro-batch's logits (docs/memory.md
    /// "Liger's kernels").
    pub liger_kernel: bool,
    /// LLaMA-Factory's `pure_bf16` (`FinetuningArguments`): the trained parameters are not cast to
    /// fp32 (`model/adapter.py`, `cast_trainable_params_to_fp32`), so without DeepSpeed they,
    /// their gradients and AdamW's moments are bf16 (docs/memory.md). Read with bf16 precision.
    pub pure_bf16: bool,
    /// The optimizer (LLaMA-Factory's `optim`); read without DeepSpeed, whose engine keeps its own
    /// states (docs/memory.md).
    pub optimizer: Optimizer,
    /// The decoder layers freeze-tuning trains, the model's last (LLaMA-Factory
    /// `freeze_trainable_layers`; used by `freeze`).
    pub freeze_layers: NonZeroU32,
    /// The low-rank optimizers' settings (used with `optimizer: galore` and `apollo`).
    pub low_rank: LowRank,
    /// LoRA settings (used by `lora` and `qlora`).
    pub lora: Lora,
    /// RL settings (used by `grpo` and `ppo`).
    pub rl: Rl,
    /// MoE layer settings (validated; used by models with experts).
    pub moe: MoeFile,
    /// Runtime overheads as given (validated); [`Plan::overheads`] (in `overheads.rs`) resolves the
    /// defaults.
    pub overheads: OverheadsFile,
    /// Factors fitted to a measured run (validated), applied to this plan's estimates.
    pub calibration: CalibrationFile,
    /// Paths and addresses the launch files name (validated: no control characters).
    pub launch: LaunchFile,
    /// The run's token budget and prices, for the time and cost to train (validated; docs/cost.md).
    pub budget: BudgetFile,
}

/// The model, as chosen and as read.
#[derive(Clone, Debug, PartialEq)]
pub struct ModelChoice {
    /// What the plan file says.
    pub spec: ModelSpec,
    /// Display name.
    pub name: String,
    /// The architecture.
    pub arch: Architecture,
    /// What the config reader assumed (imported configs only).
    pub warnings: Vec<ImportWarning>,
    /// How the checkpoint stores its weights, when packed (imported configs only).
    pub prequantized: Option<Prequantized>,
}

/// Where the model comes from.
#[derive(Clone, Debug, PartialEq)]
pub enum ModelSpec {
    /// A catalog id.
    Catalog(String),
    /// An HF config.json, kept as given so the plan round-trips.
    HfConfig(Value),
}

/// The device, as chosen and in base units.
#[derive(Clone, Debug, PartialEq)]
pub struct DeviceChoice {
    /// What the plan file says.
    pub spec: HardwareSpec,
    /// The figures.
    pub hw: Hardware,
}

/// Where the device figures come from.
#[derive(Clone, Debug, PartialEq)]
pub enum HardwareSpec {
    /// A catalog id.
    Catalog(String),
    /// A device the user described.
    Custom(CustomDevice),
}

/// The cluster's size. Both counts are at least 1 by construction.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Cluster {
    /// Number of nodes.
    pub nodes: NonZeroU32,
    /// Accelerators in each node.
    pub devices_per_node: NonZeroU32,
    /// Accelerators on one scale-up fabric (`cluster.scale_up_domain` resolved): groups inside it
    /// communicate at the intra-node bandwidth.
    pub scale_up_domain: NonZeroU32,
    /// What a node's NVMe volume reads, GB/s (`cluster.nvme_read_gb_per_s`): where DeepSpeed
    /// offloads to NVMe (ZeRO-Infinity), every device of the node reads its states from it.
    pub nvme_read_gb_per_s: f64,
    /// What a node's NVMe volume writes, GB/s (`cluster.nvme_write_gb_per_s`).
    pub nvme_write_gb_per_s: f64,
}

/// A node's NVMe read bandwidth where the plan gives none, GB/s. Tier: measured: DeepSpeed's
/// `ds_io` over four PCIe Gen4 NVMe SSDs in RAID-0 (an Azure NC96ads_A100_v4 VM) reads at
/// 10 GB/s and writes at 5 GB/s; four Gen5 SSDs 27 and 11, eight 48 and 26 (an ND-H200-v5)
/// (deepspeedai/DeepSpeed blogs/deepnvme/08-2024/README.md and 06-2025/README.md).
pub const NVME_READ_GB_PER_S_DEFAULT: f64 = 10.0;
/// A node's NVMe write bandwidth where the plan gives none, GB/s; the same measurement as
/// [`NVME_READ_GB_PER_S_DEFAULT`].
pub const NVME_WRITE_GB_PER_S_DEFAULT: f64 = 5.0;

impl Cluster {
    /// All devices of the cluster.
    pub fn n_devices(&self) -> u64 {
        u64::from(self.nodes.get()) * u64::from(self.devices_per_node.get())
    }
}

/// Reads a wire name for [`wire_enum`]'s types: a string, then the type's own lookup. One reader
/// of strings for every such type; serde's derive wrote a visitor for each (1.1–1.3 KB of the
/// page's wasm apiece). Its error reads as the derive's: "unknown variant `x`, expected one of …".
fn read_wire<'de, D: serde::Deserializer<'de>, T>(
    deserializer: D,
    from_wire: fn(&str) -> Option<T>,
    wires: &'static [&'static str],
) -> Result<T, D::Error> {
    let name = String::deserialize(deserializer)?;
    from_wire(&name).ok_or_else(|| serde::de::Error::unknown_variant(&name, wires))
}

macro_rules! wire_enum {
    ($(#[$doc:meta])* $name:ident { $($(#[$vdoc:meta])* $variant:ident = $wire:literal,)* }) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum $name {
            $($(#[$vdoc])* $variant,)*
        }

        impl Serialize for $name {
            fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.serialize_str(self.wire())
            }
        }

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<$name, D::Error> {
                read_wire(deserializer, $name::from_wire, &[$($wire),*])
            }
        }

        impl $name {
            /// Every value, in the order pickers list them.
            pub const ALL: &[$name] = &[$($name::$variant),*];

            /// The name plan files and permalinks use.
            pub fn wire(self) -> &'static str {
                match self { $($name::$variant => $wire,)* }
            }

            /// The value [`Self::wire`] names, as a plan file reads it; `None` for another name.
            pub fn from_wire(name: &str) -> Option<$name> {
                Self::ALL.iter().copied().find(|v| v.wire() == name)
            }
        }
    };
}

wire_enum! {
    /// Training frameworks.
    Framework {
        /// NVIDIA Megatron-LM (megatron-core).
        Megatron = "megatron",
        /// Microsoft DeepSpeed, standalone.
        DeepSpeed = "deepspeed",
        /// LLaMA-Factory (HF Trainer, optionally over DeepSpeed).
        LlamaFactory = "llamafactory",
        /// Ascend MindSpeed-LLM (Megatron on NPUs).
        MindSpeedLlm = "mindspeed-llm",
        /// VeRL with its FSDP actor (`ppo_trainer`), vLLM rollout.
        Verl = "verl",
        /// VeRL with its Megatron-core actor (`ppo_megatron_trainer`: `actor.strategy=megatron`),
        /// vLLM rollout.
        VerlMegatron = "verl-megatron",
        /// Ascend MindSpeed-RL.
        MindSpeedRl = "mindspeed-rl",
    }
}

wire_enum! {
    /// Training methods.
    Method {
        /// Pre-training from scratch or continued.
        Pretrain = "pretrain",
        /// Supervised fine-tuning of every weight.
        SftFull = "sft-full",
        /// LoRA adapters on a frozen bf16 base.
        Lora = "lora",
        /// LoRA on a 4-bit quantized base.
        Qlora = "qlora",
        /// Freeze-tuning: supervised fine-tuning of the last [`Plan::freeze_layers`] decoder
        /// layers, every other weight frozen (LLaMA-Factory `finetuning_type: freeze`).
        Freeze = "freeze",
        /// Direct preference optimization (policy and frozen reference).
        Dpo = "dpo",
        /// DPO training LoRA adapters on a frozen base, the base with adapters off as the
        /// reference (LLaMA-Factory `finetuning_type: lora` with `stage: dpo`).
        DpoLora = "dpo-lora",
        /// Group relative policy optimization.
        Grpo = "grpo",
        /// Proximal policy optimization (with a critic).
        Ppo = "ppo",
    }
}

impl Method {
    /// Whether the method is DPO, full or LoRA: preference pairs, and a frozen reference scoring them.
    pub fn is_dpo(self) -> bool {
        matches!(self, Method::Dpo | Method::DpoLora)
    }
}

wire_enum! {
    /// Compute precision.
    Precision {
        /// bf16 mixed precision.
        Bf16 = "bf16",
        /// fp16 mixed precision with loss scaling.
        Fp16 = "fp16",
        /// fp32 throughout.
        Fp32 = "fp32",
        /// fp8 matmuls (Transformer Engine, per-tensor scaling: Megatron's `--fp8-format hybrid`),
        /// bf16 elsewhere.
        Fp8 = "fp8",
        /// MXFP8 block scaling (32-element blocks, E8M0 scales): Blackwell's fp8 recipe
        /// (Megatron `--fp8-recipe mxfp8`), bf16 elsewhere.
        Mxfp8 = "mxfp8",
        /// NVFP4 (4-bit E2M1 with 16-element blocks): Blackwell's fp4 recipe (Megatron
        /// `--fp4-format e2m1 --fp4-recipe nvfp4`), bf16 elsewhere.
        Nvfp4 = "nvfp4",
    }
}

wire_enum! {
    /// The optimizer's kind (LLaMA-Factory: the HF `Trainer`'s `optim`).
    Optimizer {
        /// AdamW, its two moments in the trained parameters' dtype.
        AdamW = "adamw",
        /// bitsandbytes' 8-bit AdamW (Dettmers et al. 2022, "8-bit Optimizers via Block-wise
        /// Quantization"): each moment a byte an element, with an fp32 scale per block of 2,048
        /// (`Optimizer2State.init_state` in bitsandbytes/optim/optimizer.py).
        AdamW8bit = "adamw_8bit",
        /// GaLore (Zhao et al. 2024, "GaLore: Memory-Efficient LLM Training by Gradient Low-Rank
        /// Projection"): AdamW over each linear weight's gradient projected to [`LowRank::rank`]
        /// (`GaLoreAdamW`, galore_torch; LLaMA-Factory `use_galore`), the rest plain AdamW.
        Galore = "galore",
        /// APOLLO (Zhu et al. 2025, "APOLLO: SGD-like Memory, AdamW-level Performance"): AdamW's
        /// moments over each linear weight's gradient projected to [`LowRank::rank`] by a random
        /// matrix, which scale the whole gradient channel by channel (`APOLLOAdamW`, apollo_torch;
        /// LLaMA-Factory `use_apollo`), the rest plain AdamW.
        Apollo = "apollo",
    }
}

impl Optimizer {
    /// GaLore or APOLLO: AdamW's moments of each linear weight's gradient projected to a low rank.
    pub fn projects(self) -> bool {
        matches!(self, Optimizer::Galore | Optimizer::Apollo)
    }
}

/// LLaMA-Factory's settings of its low-rank optimizers, read with [`Optimizer::Galore`] and
/// [`Optimizer::Apollo`] (`GaloreArguments` and `ApolloArguments`,
/// src/llamafactory/hparams/finetuning_args.py, each with keys of its own).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LowRank {
    /// `galore_rank` / `apollo_rank`: the projected gradients' rank.
    pub rank: NonZeroU32,
    /// `galore_layerwise` / `apollo_layerwise`: each parameter stepped by its own optimizer as soon
    /// as its gradient is accumulated, and its gradient freed (`register_post_accumulate_grad_hook`).
    pub layerwise: bool,
}

wire_enum! {
    /// Attention kernels of the HF path.
    AttentionImpl {
        /// FlashAttention 2.
        Flash = "flash",
        /// PyTorch scaled_dot_product_attention.
        Sdpa = "sdpa",
        /// Plain matmul + softmax, materializing the score matrix.
        Eager = "eager",
    }
}

wire_enum! {
    /// The pipeline schedule a plan asks for.
    PipelineSchedule {
        /// 1F1B, interleaved when `vpp` > 1 (Megatron's choice).
        Auto = "auto",
        /// All forwards, then all backwards.
        GPipe = "gpipe",
        /// One forward, one backward.
        OneFOneB = "1f1b",
        /// Interleaved 1F1B over `vpp` chunks.
        Interleaved = "interleaved",
        /// Zero-bubble ZB-H1.
        ZbH1 = "zb-h1",
        /// DeepSeek's DualPipeV (two chunks per rank, V-shaped).
        DualPipeV = "dualpipev",
    }
}

wire_enum! {
    /// Fully sharded data parallelism on the Megatron path (Megatron-LM `--use-megatron-fsdp
    /// --data-parallel-sharding-strategy …`, or PyTorch FSDP2 `--use-torch-fsdp2`), beside or instead
    /// of the distributed optimizer; on VeRL's FSDP engine, which FSDP it runs (`strategy: fsdp`,
    /// PyTorch's `FullyShardedDataParallel`, or `fsdp2`, its `fully_shard`), sharded as
    /// `parallel.zero_stage` says.
    Fsdp {
        /// No FSDP: DDP, with the distributed optimizer if asked. On VeRL: FSDP1 (`strategy: fsdp`).
        None = "none",
        /// Megatron FSDP sharding the optimizer states (the distributed optimizer's memory).
        Optim = "optim",
        /// Megatron FSDP sharding optimizer states and gradients (ZeRO-2's memory).
        OptimGrads = "optim_grads",
        /// Megatron FSDP sharding optimizer states, gradients and parameters (ZeRO-3's memory).
        OptimGradsParams = "optim_grads_params",
        /// PyTorch FSDP2 (`fully_shard`): everything sharded; no PP, no EP, no distributed optimizer.
        /// On VeRL: `strategy: fsdp2`, sharded as `parallel.zero_stage` says.
        Torch = "torch_fsdp2",
    }
}

wire_enum! {
    /// How much activation recomputation.
    RecomputeGranularity {
        /// Keep every activation.
        None = "none",
        /// Recompute attention's core (Megatron `--recompute-granularity selective`).
        Selective = "selective",
        /// Recompute whole layers (`full`; HF gradient checkpointing).
        Full = "full",
    }
}

wire_enum! {
    /// How full recomputation picks layers (Megatron `--recompute-method`).
    RecomputeMethod {
        /// Checkpoint every `num_layers` layers.
        Uniform = "uniform",
        /// Recompute the first `num_layers` layers of each stage.
        Block = "block",
    }
}

wire_enum! {
    /// How an MoE layer's tokens reach their experts (Megatron `--moe-token-dispatcher-type`,
    /// `megatron/core/transformer/moe/token_dispatcher.py` at core_v0.19.0).
    MoeDispatcher {
        /// Every rank gathers the EP group's tokens and keeps those of its experts
        /// (`MoEAllGatherTokenDispatcher`): all-gather in, reduce-scatter out.
        AllGather = "allgather",
        /// Each rank sends each token copy to its expert's rank (`MoEAlltoAllTokenDispatcher`).
        AllToAll = "alltoall",
        /// DeepEP or HybridEP kernels (`MoEFlexTokenDispatcher`, `--moe-flex-dispatcher-backend`):
        /// a token crosses the network once per destination node, then NVLink forwards it.
        Flex = "flex",
    }
}

wire_enum! {
    /// How context parallelism exchanges the sequence inside attention. Megatron-LM
    /// `--cp-comm-type p2p | a2a` (megatron/training/arguments.py at core_v0.19.0, 5be9626; Transformer
    /// Engine `attn_forward_func_with_cp`), MindSpeed-LLM and MindSpeed-RL `--context-parallel-algo
    /// megatron_cp_algo | ulysses_cp_algo` (Ascend/MindSpeed `mindspeed/features_manager/
    /// context_parallel/`); VeRL's FSDP actor has only Ulysses (`ulysses_sequence_parallel_size`).
    /// The hybrid forms (`a2a+p2p`, `hybrid_cp_algo`) and the all-gather of K/V are not modeled.
    CpAlgo {
        /// Ring attention: each rank passes its K/V chunk around the ring, overlapped with the
        /// attention core (Megatron `p2p`, MindSpeed `megatron_cp_algo`; both frameworks' default).
        Ring = "ring",
        /// DeepSpeed-Ulysses: all-to-alls trade the sequence split for a head split before the
        /// attention core and back after it (Megatron `a2a`, MindSpeed `ulysses_cp_algo`).
        AllToAll = "alltoall",
    }
}

wire_enum! {
    /// Where DeepSpeed keeps offloaded states (`offload_optimizer.device`, `offload_param.device`;
    /// deepspeed/runtime/zero/offload_config.py, `OffloadDeviceEnum`). With NVMe (ZeRO-Infinity,
    /// Rajbhandari et al. 2021) the optimizer still steps on the CPU ("Optimizer computation is
    /// offload to CPU regardless of device option"), its states read from the drive and written
    /// back a sub-group at a time; ZeRO-3 alone swaps them (`DeepSpeedZeroOptimizer_Stage3`; the
    /// ZeRO-1/2 optimizer takes any device but `none` for the CPU, `stage_1_and_2.py`).
    OffloadDevice {
        /// Pinned host memory.
        Cpu = "cpu",
        /// The node's NVMe volume, through pinned host buffers.
        Nvme = "nvme",
    }
}

/// A DeepSpeed ZeRO stage, 0 to 3 (Rajbhandari et al. 2020, "ZeRO", §5: stage 1 shards the
/// optimizer states over the data-parallel ranks, stage 2 also the gradients, stage 3 also the
/// parameters). Each stage shards what the one below it does, so stages compare in order.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ZeroStage(u8);

impl ZeroStage {
    /// No sharding: plain data parallelism.
    pub const NONE: ZeroStage = ZeroStage(0);
    /// Gradients and optimizer states sharded.
    pub const TWO: ZeroStage = ZeroStage(2);
    /// Every model state sharded.
    pub const THREE: ZeroStage = ZeroStage(3);
    /// Every stage, lowest first.
    pub const ALL: [ZeroStage; 4] = [ZeroStage(0), ZeroStage(1), ZeroStage(2), ZeroStage(3)];

    /// The stage numbered `stage`; `None` above 3.
    pub const fn new(stage: u8) -> Option<ZeroStage> {
        match stage {
            0..=3 => Some(ZeroStage(stage)),
            _ => None,
        }
    }

    /// The stage's number, as DeepSpeed's `zero_optimization.stage` writes it.
    pub const fn get(self) -> u8 {
        self.0
    }

    /// Whether the optimizer states are sharded (stage 1 and up).
    pub const fn shards_optimizer(self) -> bool {
        1 <= self.0
    }

    /// Whether the gradients are sharded too (stage 2 and up).
    pub const fn shards_gradients(self) -> bool {
        2 <= self.0
    }

    /// Whether the parameters are sharded too (stage 3).
    pub const fn shards_params(self) -> bool {
        self.0 == 3
    }
}

/// DeepSpeed ZeRO++ as it takes effect: at ZeRO-3 alone, where DeepSpeed's stage-3 engine reads it
/// (`DeepSpeedZeroOptimizer_Stage3`, deepspeed/runtime/zero/stage3.py; the stage-1 and 2 engine
/// reads none of its keys). ZeRO++: Wang et al. 2023, arXiv 2306.10209.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ZeroPlusPlus {
    /// hpZ's secondary group, ranks, at most the world (`_create_zero_param_parallel_group`,
    /// deepspeed/utils/groups.py: `min(group_size, world_size)`); 1 where off.
    pub hpz: u64,
    /// qwZ: parameters gathered in int8.
    pub quantized_weights: bool,
    /// qgZ: gradients averaged in int4 across nodes.
    pub quantized_gradients: bool,
}

impl Parallel {
    /// Whether the plan asks for any of ZeRO++, whether or not its stage reads it.
    pub fn asks_zero_plus_plus(&self) -> bool {
        1 < self.zero_hpz.get() || self.zero_quantized_weights || self.zero_quantized_gradients
    }
}

impl std::fmt::Display for ZeroStage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

/// Parallel degrees and sharding. Data parallelism is derived: devices ÷ (tp · pp · cp).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Parallel {
    /// Tensor parallel size.
    pub tp: NonZeroU32,
    /// Pipeline parallel size.
    pub pp: NonZeroU32,
    /// Virtual pipeline chunks per stage (interleaved 1F1B); 1 = not interleaved.
    pub vpp: NonZeroU32,
    /// Context parallel size.
    pub cp: NonZeroU32,
    /// How context parallelism exchanges the sequence (with `cp` > 1).
    pub cp_algo: CpAlgo,
    /// Expert parallel size.
    pub ep: NonZeroU32,
    /// Expert tensor parallel size.
    pub etp: NonZeroU32,
    /// Megatron sequence parallelism (with tp > 1).
    pub sequence_parallel: bool,
    /// DeepSpeed ZeRO stage.
    pub zero_stage: ZeroStage,
    /// Megatron's distributed optimizer.
    pub distributed_optimizer: bool,
    /// Optimizer states in host memory.
    pub offload_optimizer: bool,
    /// Parameters in host memory (ZeRO-3).
    pub offload_params: bool,
    /// Where DeepSpeed offloads what `offload_optimizer` and `offload_params` send away: host
    /// memory or the node's NVMe (ZeRO-Infinity; `zero_optimization.offload_*.device`).
    pub offload_device: OffloadDevice,
    /// Megatron `--overlap-grad-reduce` / DeepSpeed `overlap_comm`: gradient reduction overlaps backward.
    pub overlap_grad_reduce: bool,
    /// Megatron `--overlap-param-gather`: the distributed optimizer's gather overlaps forward.
    pub overlap_param_gather: bool,
    /// Megatron `--grad-reduce-in-bf16`: the gradient buffer and its data-parallel reduction in
    /// bf16 rather than fp32 (`accumulate_allreduce_grads_in_fp32` off).
    pub grad_reduce_bf16: bool,
    /// VeRL's FSDP engine `use_no_sync_for_gradient_accumulation`: the gradients accumulate unsharded
    /// over an update's micro-batches and are reduced once, after its last, instead of after each.
    pub no_sync_accumulation: bool,
    /// DeepSpeed ZeRO++'s hierarchical partitioning (hpZ, `zero_hpz_partition_size`): beside its
    /// ZeRO-3 shard over every rank, each rank keeps a secondary shard over a group of this many
    /// consecutive ranks (a node's), from which the backward gathers the parameters instead of
    /// across the nodes. 1 is off.
    pub zero_hpz: NonZeroU32,
    /// DeepSpeed ZeRO++'s quantized weights (qwZ, `zero_quantized_weights`): ZeRO-3 gathers the
    /// parameters in int8 with a scale per block instead of in 16 bits.
    pub zero_quantized_weights: bool,
    /// DeepSpeed ZeRO++'s quantized gradients (qgZ, `zero_quantized_gradients`): ZeRO-3 averages
    /// the gradients in int4 by an all-to-all within the node and another across the nodes,
    /// instead of a reduce-scatter in their own precision.
    pub zero_quantized_gradients: bool,
    /// VeRL's FSDP2 engine `offload_policy`: the actor's FSDP2 `CPUOffloadPolicy`, its fp32
    /// parameter shards, gradients and AdamW states in host memory throughout, each unit's shard
    /// copied in to be gathered and its gradient shard copied out, AdamW stepped by the CPU.
    pub offload_policy: bool,
    /// Megatron `--fp8-param-gather`: fp8 training keeps the linear layers' weights in fp8 alone
    /// (Transformer Engine's fp8 parameters, no 16-bit copy) and gathers them in fp8.
    pub fp8_param_gather: bool,
    /// Megatron `--tp-comm-overlap` (Transformer Engine) / MindSpeed `--use-ascend-coc`: TP collectives
    /// pipelined with the GEMMs around them.
    pub tp_comm_overlap: bool,
    /// MindSpeed `--swap-optimizer`: the distributed optimizer's fp32 states wait in host memory
    /// during forward and backward and come back to the device in slices for the step.
    pub swap_optimizer: bool,
    /// Layers that do not divide by `pp` go to the first and last stages ([`crate::layout::stage_layers`]):
    /// Megatron `--decoder-first/last-pipeline-num-layers`, MindSpeed `--num-layer-list`.
    pub uneven_layers: bool,
    /// The pipeline schedule.
    pub schedule: PipelineSchedule,
    /// Fully sharded data parallelism on the Megatron path.
    pub fsdp: Fsdp,
    /// Megatron `--account-for-embedding-in-pipeline-split --account-for-loss-in-pipeline-split`:
    /// the embedding and the loss each count as a layer when the layers are split over stages, so
    /// the first and last stages hold one transformer layer fewer (Llama 3.1 405B's 126 layers
    /// over 16 stages).
    pub account_embedding_loss: bool,
    /// Megatron `--pipeline-model-parallel-layout`: which virtual stage holds the embedding (`E`),
    /// which decoder layers (`t`), the MTP layers (`m`) and the loss (`L`), stages split by `|`
    /// ([`crate::layout::parse`]). `None`: the split the other knobs give.
    pub pipeline_layout: Option<String>,
    /// MindSpeed's fused RMSNorm, SwiGLU and rotary-embedding kernels (`--use-fused-rmsnorm
    /// --use-fused-swiglu --use-fused-rotary-pos-emb`, `mindspeed/features_manager/`); on by default
    /// as in MindSpeed-LLM's example scripts. Off, each runs as separate eager operators, which
    /// costs memory-bound time (docs/time.md "Ascend").
    pub fused_kernels: bool,
}

/// Activation recomputation.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Recompute {
    /// None, selective or full.
    pub granularity: RecomputeGranularity,
    /// For full: uniform or block.
    pub method: RecomputeMethod,
    /// For full: layers per checkpoint (uniform) or recomputed layers per stage (block).
    pub num_layers: NonZeroU32,
    /// MindSpeed `--recompute-activation-function`: the MLP activation's output is recomputed.
    pub activation_function: bool,
    /// MindSpeed `--swap-attention`: attention activations wait in host memory until backward.
    pub swap_attention: bool,
    /// MindSpeed `--recompute-activation-function-num-layers`: the activation function is recomputed
    /// in this many layers of each stage (after any fully recomputed ones); 0 = every layer.
    pub activation_function_layers: u32,
    /// LLaMA-Factory on Ascend (`recompute_layers_ratio`): the share of layers gradient
    /// checkpointing covers, in (0, 1]; 1 = every layer, as upstream LLaMA-Factory does.
    pub layers_ratio_frac: f64,
    /// Megatron `--recompute-modules`: what selective recomputation reruns.
    pub modules: RecomputeModules,
    /// Megatron `--cpu-offloading-num-layers`: the activations of this many layers wait in host
    /// memory between their forward and backward; 0 = none.
    pub cpu_offload_layers: u32,
    /// Megatron `--distribute-saved-activations`: with full recomputation and TP but no sequence
    /// parallelism, each checkpoint's input is split over the TP ranks and gathered again in
    /// backward (megatron/core/tensor_parallel/random.py, `CheckpointFunction`).
    pub distribute_saved_activations: bool,
}

/// The submodules Megatron's selective recomputation checkpoints (`--recompute-modules`,
/// megatron/core/transformer/transformer_config.py at core_v0.19.0, `recompute_modules`; default
/// `["core_attn"]`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RecomputeModules {
    /// `core_attn`: the attention core (scores, softmax, dropout, values).
    pub core_attn: bool,
    /// `mlp`: the dense MLP.
    pub mlp: bool,
    /// `layernorm`: the input and pre-MLP norms (their outputs are discarded).
    pub layernorm: bool,
    /// `moe_act`: the experts' activation function (its output is discarded).
    pub moe_act: bool,
    /// `moe`: the whole MoE layer.
    pub moe: bool,
    /// `shared_experts`: the MoE layer's shared experts.
    pub shared_experts: bool,
    /// `mla_up_proj`: MLA's up-projections and RoPE (their outputs are discarded).
    pub mla_up_proj: bool,
}

impl RecomputeModules {
    /// The module names, in Megatron's order.
    pub const NAMES: [&'static str; 7] =
        ["core_attn", "moe_act", "layernorm", "mla_up_proj", "mlp", "moe", "shared_experts"];

    /// Megatron's default: `core_attn` only.
    pub const DEFAULT: RecomputeModules = RecomputeModules {
        core_attn: true,
        mlp: false,
        layernorm: false,
        moe_act: false,
        moe: false,
        shared_experts: false,
        mla_up_proj: false,
    };

    /// No module.
    pub const NONE: RecomputeModules = RecomputeModules {
        core_attn: false,
        mlp: false,
        layernorm: false,
        moe_act: false,
        moe: false,
        shared_experts: false,
        mla_up_proj: false,
    };

    fn slot(&mut self, name: &str) -> Option<&mut bool> {
        match name {
            "core_attn" => Some(&mut self.core_attn),
            "moe_act" => Some(&mut self.moe_act),
            "layernorm" => Some(&mut self.layernorm),
            "mla_up_proj" => Some(&mut self.mla_up_proj),
            "mlp" => Some(&mut self.mlp),
            "moe" => Some(&mut self.moe),
            "shared_experts" => Some(&mut self.shared_experts),
            _ => None,
        }
    }

    /// The modules set, by name, in Megatron's order.
    pub fn list(&self) -> Vec<&'static str> {
        let mut copy = *self;
        Self::NAMES.into_iter().filter(|n| copy.slot(n).is_some_and(|on| *on)).collect()
    }

    /// Reads module names as Megatron spells them.
    ///
    /// # Errors
    ///
    /// The first name that is not a module.
    pub fn try_from_names<'a>(names: impl IntoIterator<Item = &'a str>) -> Result<Self, String> {
        let mut res = Self::NONE;
        for name in names {
            match res.slot(name) {
                Some(on) => *on = true,
                None => return Err(name.to_owned()),
            }
        }
        Ok(res)
    }
}

/// Batch and sequence sizes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Batch {
    /// Sequences per device per micro-step.
    pub micro_batch: NonZeroU32,
    /// Sequences per optimizer step, all devices.
    pub global_batch: NonZeroU32,
    /// Tokens per sequence.
    pub seq_len: NonZeroU32,
    /// The samples' mean length, tokens; 0 = every sample `seq_len` long. LLaMA-Factory's SFT
    /// trains each sample at its own length: its collator pads a micro-batch to its longest
    /// sample (`SFTDataCollatorWith4DAttentionMask`, a `DataCollatorForSeq2Seq`), so at
    /// micro-batch 1 none ([`Batch::trained_seq_len`]); so does MindSpeed-LLM's fine-tuning with
    /// `--no-pad-to-seq-lengths`, which its launch file then writes. Memory stays at `seq_len`,
    /// which any sample may reach.
    pub mean_seq_len: u32,
    /// Tokens of each sequence that hold an image, the vision encoder's output in the language
    /// model's sequence (Qwen2-VL's `<|image_pad|>` tokens, Gemma 3's 256 a picture); 0 = text
    /// only. Part of the sequence's tokens, so the language model's work is already counted; where
    /// the framework loads the encoder (`memory::vision_encoder`) its forward over them (and its
    /// backward, where it trains) joins the first stage's passes.
    pub image_tokens: u32,
}

impl Batch {
    /// Tokens a sequence trains on, on average: the samples' mean length at micro-batch 1 (at
    /// most `seq_len`); `seq_len` otherwise, each micro-batch padded to its longest sample.
    /// [`crate::knobs::effective`] puts `mean_seq_len` back to 0 where the framework and method
    /// do not train samples at their own length.
    pub fn trained_seq_len(&self) -> u32 {
        match self.micro_batch.get() {
            1 => mean_within(self.mean_seq_len, self.seq_len),
            _ => self.seq_len.get(),
        }
    }
}

/// A mean length as counted: at most the `longest`, which 0 (no mean given) stands for.
fn mean_within(mean: u32, longest: NonZeroU32) -> u32 {
    match mean {
        0 => longest.get(),
        n => n.min(longest.get()),
    }
}

/// LoRA settings.
#[derive(Clone, Debug, PartialEq)]
pub struct Lora {
    /// Rank `r`.
    pub rank: NonZeroU32,
    /// Scale numerator `alpha`.
    pub alpha: u32,
    /// Adapted modules.
    pub targets: LoraTargets,
    /// The dropout on each adapter's input, 0–0.9 (PEFT's `lora_dropout`; 0 runs none).
    pub dropout: f64,
    /// DoRA: each adapted module's output rescaled by a trained magnitude per output unit over the
    /// adapted weight's norm (Liu et al. 2024, arXiv 2402.09353; PEFT's `use_dora`).
    pub dora: bool,
}

/// Which linear modules get adapters.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LoraTargets {
    /// Every linear module but the head (LLaMA-Factory `lora_target: all`).
    All,
    /// These modules, sorted, without repeats.
    Only(Vec<LoraTarget>),
}

impl LoraTargets {
    /// The targets as a list.
    pub fn list(&self) -> Vec<LoraTarget> {
        match self {
            LoraTargets::All => LoraTarget::ALL.to_vec(),
            LoraTargets::Only(targets) => targets.clone(),
        }
    }
}

/// RL settings (GRPO, PPO).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Rl {
    /// Tensor parallel size of the rollout engine.
    pub rollout_tp: NonZeroU32,
    /// Devices the rollout engine's routed experts are spread over (vLLM's expert parallelism: the
    /// engine's TP × DP ranks, VeRL `rollout.expert_parallel_size`, MindSpeed-RL
    /// `infer_expert_parallel_size` × the rollout TP); 1 = off, the experts split by the TP.
    pub rollout_ep: NonZeroU32,
    /// Responses sampled per prompt (`rollout.n`, `n_samples_per_prompt`).
    pub n_samples_per_prompt: NonZeroU32,
    /// Longest prompt, tokens.
    pub max_prompt_length: NonZeroU32,
    /// Longest response, tokens.
    pub max_response_length: NonZeroU32,
    /// The prompts' mean length, tokens, as VeRL logs it (`prompt_length/mean`); 0 = every prompt
    /// runs to the longest. The rollout prefills the prompts without their padding, and without
    /// padding the update trains on them so; the memory stays at the longest.
    pub mean_prompt_length: u32,
    /// The responses' mean length, tokens, as the framework logs it (VeRL `response_length/mean`,
    /// MindSpeed-RL `response_length/mean`); 0 = every response runs to the longest. Sets the
    /// rollout's decode steps and, without padding, the tokens each update trains on; the memory
    /// stays at the longest, which any batch may reach.
    pub mean_response_length: u32,
    /// Share of device memory the rollout engine may take, in (0, 1].
    pub gpu_memory_utilization_frac: f64,
    /// Sequences the rollout engine decodes at once.
    pub max_num_seqs: NonZeroU32,
    /// Prompts per actor update (VeRL `ppo_mini_batch_size`, MindSpeed-RL `mini_batch_size`);
    /// 0 = the whole batch, one update per step.
    pub mini_batch: u32,
    /// Pack micro-batches by tokens rather than sequences (`use_dynamic_bsz`).
    pub dynamic_batch: bool,
    /// Tokens a device takes in one packed micro-batch (VeRL `ppo_max_token_len_per_gpu`, times
    /// Ulysses SP for the packed row), or on MindSpeed-RL the packed row's, which its CP group splits
    /// (`max_packing_token_size`); 0 = the framework's default, at least one sequence.
    pub max_tokens_per_device: u32,
    /// Train on unpadded, concatenated sequences (`use_remove_padding`).
    pub remove_padding: bool,
    /// vLLM `enforce_eager`: decode without CUDA/ACL graphs.
    pub enforce_eager: bool,
    /// Sequences a device scores at once for the old log-probabilities and the reference's (VeRL
    /// `rollout.log_prob_micro_batch_size_per_gpu` and `ref.log_prob_micro_batch_size_per_gpu`: a
    /// forward alone, often run with more sequences than the update's micro-batch); 0 = the
    /// update's micro-batch. Packed by tokens (`dynamic_batch`) it is not used.
    pub log_prob_micro_batch: u32,
    /// Tokens a device scores at once in those forwards, packed by tokens (VeRL
    /// `rollout.log_prob_max_token_len_per_gpu` and `ref.log_prob_max_token_len_per_gpu`; its DAPO
    /// scripts give them 3 sequences' tokens where the update takes 2); 0 = the update's budget.
    /// Used only packed by tokens (`dynamic_batch`).
    pub log_prob_max_tokens_per_device: u32,
    /// vLLM `max_model_len`; 0 = prompt + response.
    pub max_model_len: u32,
    /// vLLM `max_num_batched_tokens`; 0 = the larger of 8192 (VeRL's default) and one sequence.
    pub max_num_batched_tokens: u32,
    /// MindSpeed-RL `blocking`: each phase waits for the previous one to finish.
    pub blocking: bool,
    /// VeRL `actor_rollout_ref.actor.use_kl_loss`: the actor's loss holds the KL to the reference,
    /// so the reference model is built and scores every response (`need_reference_policy`,
    /// verl/trainer/ppo/utils.py at verl 0.9.1); without it (as DAPO runs) there is no reference.
    pub kl_loss: bool,
    /// The actor (and a PPO critic) trains LoRA adapters of [`Plan::lora`] on a frozen base
    /// (VeRL `actor_rollout_ref.model.lora_rank`); the reference is the base with the adapters off.
    pub lora: bool,
}

impl Rl {
    /// Tokens of one prompt and its response.
    pub fn sequence_tokens(&self) -> u32 {
        self.max_prompt_length.get().saturating_add(self.max_response_length.get())
    }

    /// The responses' mean length in effect: the plan's, at most the longest; the longest when
    /// the plan leaves it at 0.
    pub fn mean_response_tokens(&self) -> u32 {
        mean_within(self.mean_response_length, self.max_response_length)
    }

    /// The prompts' mean length in effect: the plan's, at most the longest; the longest when the
    /// plan leaves it at 0.
    pub fn mean_prompt_tokens(&self) -> u32 {
        mean_within(self.mean_prompt_length, self.max_prompt_length)
    }

    /// Tokens the update trains on per sequence, on average: the mean prompt and the mean response
    /// once padding is removed (VeRL `use_remove_padding`: the batch's sequences concatenated
    /// without their pads), else the longest of each, every prompt and response padded to it
    /// (VeRL's batches hold `max_prompt_length` and `max_response_length` columns).
    pub fn trained_sequence_tokens(&self) -> u32 {
        match self.remove_padding {
            true => self.mean_prompt_tokens().saturating_add(self.mean_response_tokens()),
            false => self.sequence_tokens(),
        }
    }

    /// Prompts per actor update: the mini-batch, or the whole batch when it is 0.
    pub fn mini_batch_prompts(&self, global_batch: u32) -> u32 {
        if self.mini_batch == 0 { global_batch } else { self.mini_batch }
    }

    /// Sequences a device scores at once in the log-probabilities' forwards: the plan's figure,
    /// or `micro_batch`, the update's, when it is 0.
    pub fn log_prob_micro(&self, micro_batch: u32) -> u32 {
        if self.log_prob_micro_batch == 0 { micro_batch } else { self.log_prob_micro_batch }
    }

    /// vLLM's `max_model_len` in effect.
    pub fn model_len(&self) -> u32 {
        if self.max_model_len == 0 { self.sequence_tokens() } else { self.max_model_len }
    }

    /// vLLM's `max_num_batched_tokens` in effect.
    pub fn batched_tokens(&self) -> u32 {
        match self.max_num_batched_tokens {
            0 => auto_batched_tokens(self.model_len()),
            n => n,
        }
    }

    /// Tokens one device scores per packed micro-batch in the log-probabilities' forwards: the
    /// plan's figure, or the update's ([`Rl::tokens_per_device`]) when it is 0.
    pub fn log_prob_tokens_per_device(&self, framework: Framework, cp: u32) -> u32 {
        match self.log_prob_max_tokens_per_device {
            0 => self.tokens_per_device(framework, cp),
            n => n,
        }
    }

    /// Tokens one device takes per packed micro-batch: the plan's figure or [`auto_tokens_per_device`].
    pub fn tokens_per_device(&self, framework: Framework, cp: u32) -> u32 {
        match self.max_tokens_per_device {
            0 => auto_tokens_per_device(framework, self.sequence_tokens(), cp),
            n => n,
        }
    }
}

/// vLLM's `max_num_batched_tokens` when the plan leaves it at 0: the larger of VeRL's default
/// 8192 (`verl/trainer/config/_generated_ppo_trainer.yaml`) and `max_model_len`, which vLLM requires
/// without chunked prefill.
pub fn auto_batched_tokens(model_len: u32) -> u32 {
    model_len.max(8192)
}

/// MindSpeed-RL's packed row when nothing sets it: `RLConfig`'s `max_packing_token_size`, and each
/// role's (mindspeed_rl/config_cls/rl_config.py at 05a90d7).
pub const MINDSPEED_RL_PACKED_TOKENS: u32 = 4096;

/// The packed micro-batch's token budget per device when the plan leaves it at 0: the framework's
/// default (VeRL `ppo_max_token_len_per_gpu` 16384, MindSpeed-RL `max_packing_token_size` 4096;
/// `verl/trainer/config/_generated_ppo_trainer.yaml`, `mindspeed_rl/config_cls/rl_config.py`) raised
/// to one sequence: on VeRL split over `cp` ranks, on MindSpeed-RL whole (its row is the CP group's).
pub fn auto_tokens_per_device(framework: Framework, sequence_tokens: u32, cp: u32) -> u32 {
    let default = if framework == Framework::MindSpeedRl { MINDSPEED_RL_PACKED_TOKENS } else { 16384 };
    sequence_tokens.div_ceil(packed_row_budgets(framework, cp)).max(default)
}

/// How many token budgets one packed row of a dynamic batch holds, the row split over the CP
/// group: VeRL's budget is each device's, its row `max_token_len_per_gpu · sp_size`
/// (verl/workers/engine/utils.py `prepare_micro_batches`, verl 0.9.1), so `cp`; MindSpeed-RL's
/// budget is the row itself (`_split_batches_with_dynamic_bsz`,
/// mindspeed_rl/models/base/base_training_engine.py), so 1.
pub fn packed_row_budgets(framework: Framework, cp: u32) -> u32 {
    match framework {
        Framework::MindSpeedRl => 1,
        _ => cp.max(1),
    }
}

/// A device the user described, in the units datasheets use.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CustomDevice {
    /// Display name.
    #[serde(default = "custom_name")]
    pub name: String,
    /// `nvidia`, `ascend` or `other`.
    #[serde(default = "other_vendor")]
    pub vendor: String,
    /// Device memory, GB as vendors print HBM sizes, which are binary (80 GB = 80 GiB).
    pub memory_gb: f64,
    /// Dense bf16 TFLOPS; 0 = no bf16.
    #[serde(default)]
    pub bf16_tflops: f64,
    /// Dense fp16 TFLOPS; the bf16 figure when omitted.
    #[serde(default)]
    pub fp16_tflops: Option<f64>,
    /// Dense fp8 TFLOPS; 0 = no fp8.
    #[serde(default)]
    pub fp8_tflops: f64,
    /// Dense fp4 TFLOPS (MXFP8/NVFP4 block scaling); none = no fp4.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fp4_tflops: Option<f64>,
    /// Memory bandwidth, TB/s.
    pub memory_tb_per_s: f64,
    /// Intra-node link per device, both directions, GB/s.
    pub intra_node_gb_per_s: f64,
    /// Network per device, Gb/s.
    pub inter_node_gbit_per_s: f64,
    /// Devices per node.
    #[serde(default = "eight")]
    pub devices_per_node: u32,
    /// Devices on one scale-up fabric (NVLink, HCCS); the node when omitted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scale_up_domain: Option<u32>,
    /// Asymptotic fraction of the dense peak a large GEMM reaches in a training step (a measured
    /// matmul sweep, or a calibrated run); the vendor's figure when omitted (0.66 NVIDIA and other,
    /// 0.69 Ascend; docs/time.md).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gemm_efficiency_max: Option<f64>,
    /// Maximum board power (TDP), W, for the energy estimate (docs/cost.md); unknown when omitted,
    /// and then no energy is estimated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub board_power_w: Option<f64>,
}

// ---------------------------------------------------------------------------------------------
// The file format.

impl Framework {
    /// Whether the plan runs VeRL, with either actor: its batch keys, rollout and trainer.
    pub fn is_verl(self) -> bool {
        matches!(self, Framework::Verl | Framework::VerlMegatron)
    }

    /// The framework's name as its users write it, the same in every language.
    pub fn name(self) -> &'static str {
        match self {
            Framework::Megatron => "Megatron-LM",
            Framework::DeepSpeed => "DeepSpeed",
            Framework::LlamaFactory => "LLaMA-Factory",
            Framework::MindSpeedLlm => "MindSpeed-LLM",
            Framework::Verl => "VeRL",
            Framework::VerlMegatron => "VeRL (Megatron)",
            Framework::MindSpeedRl => "MindSpeed-RL",
        }
    }
}

impl Precision {
    /// Whether the linear layers run below 16 bits (fp8, MXFP8, NVFP4), everything else in bf16.
    pub fn low_precision(self) -> bool {
        matches!(self, Precision::Fp8 | Precision::Mxfp8 | Precision::Nvfp4)
    }
}

impl Plan {
    /// ZeRO++ as it takes effect ([`ZeroPlusPlus`]); all off below ZeRO-3.
    pub fn zero_plus_plus(&self) -> ZeroPlusPlus {
        let p = &self.parallel;
        let on = p.zero_stage.shards_params();
        ZeroPlusPlus {
            hpz: if on { u64::from(p.zero_hpz.get()).min(self.cluster.n_devices()) } else { 1 },
            quantized_weights: on && p.zero_quantized_weights,
            quantized_gradients: on && p.zero_quantized_gradients,
        }
    }

    /// The model's config.json `model_type` (a multimodal wrapper's, where it has one): what a
    /// framework loading the model by type reads; `None` where the config writes none.
    pub fn hf_model_type(&self) -> Option<&str> {
        match &self.model.spec {
            ModelSpec::Catalog(id) => {
                crate::catalog::config(id).and_then(|c| crate::catalog::model_type(c.config))
            }
            ModelSpec::HfConfig(v) => v.get("model_type").and_then(Value::as_str),
        }
    }

    /// Whether the trained weights are LoRA adapters on a frozen base: the `lora`, `qlora` and
    /// `dpo-lora` methods, and RL with `rl.lora`.
    pub fn trains_lora(&self) -> bool {
        match self.method {
            Method::Lora | Method::Qlora | Method::DpoLora => true,
            Method::Grpo | Method::Ppo => self.rl.lora,
            _ => false,
        }
    }
}
