//! Which plan settings a framework and a method take.
//!
//! A setting applies when the framework has a flag or key for it (the emitters in `emit/` write it)
//! and the engine models it on that framework's path; the page shows those and keeps the rest out of
//! sight. A setting that does not apply changes nothing the engine computes: at most a finding says
//! it is ignored (or, where the framework would refuse or silently drop it, that it breaks a rule),
//! with the fix that resets it. `core/tests/it/knobs.rs` sets each one that does not apply to a value
//! off its default and finds the same report.
//!
//! Sources, per framework:
//! - Megatron-LM and MindSpeed-LLM: the command-line flags their parsers declare at the pinned
//!   commits (`core/data/flags/megatron-lm.tsv`: Megatron-LM core_v0.19.0, 5be9626;
//!   `core/data/flags/mindspeed-llm.tsv`), which `emit::flags` checks every written flag against.
//! - MindSpeed-RL: the keys of its config classes (`core/data/flags/mindspeed-rl.tsv`:
//!   `MegatronConfig`, `RLConfig`, `GenerateConfig`).
//! - DeepSpeed: the `zero_optimization` keys of `deepspeed/runtime/zero/config.py` (`stage`,
//!   `overlap_comm`, `offload_optimizer`, `offload_param`).
//! - LLaMA-Factory: the same DeepSpeed config through its `deepspeed:` key, `flash_attn` and
//!   `enable_liger_kernel`
//!   (`src/llamafactory/hparams/model_args.py`), and Ascend's `recompute_layers_ratio`.
//! - VeRL: the Hydra keys of `verl/trainer/config/ppo_trainer.yaml` it is launched with
//!   (`actor_rollout_ref.actor.ulysses_sequence_parallel_size`, `model.use_liger`, `fsdp_config.param_offload`,
//!   `fsdp_config.optimizer_offload`).
//!
//! A setting a framework has no choice over is put at the one value it runs: VeRL's context
//! parallelism is Ulysses, all-to-all ([`framework_cp_algo`]).

use std::num::NonZeroU32;

use crate::Plan;
use crate::field::Field;
use crate::plan::{
    CpAlgo, Framework, Fsdp, LoraFile, Method, MoeFile, PipelineSchedule, RecomputeModules, ZeroStage,
};

/// A setting of the plan that only some frameworks or methods take.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Knob {
    /// `parallel.tp`.
    Tp,
    /// `parallel.pp`.
    Pp,
    /// `parallel.vpp`.
    Vpp,
    /// `parallel.cp`.
    Cp,
    /// `parallel.cp_algo`.
    CpAlgo,
    /// `parallel.ep`.
    Ep,
    /// `parallel.zero_stage`.
    ZeroStage,
    /// `parallel.schedule`.
    Schedule,
    /// `parallel.fsdp`.
    Fsdp,
    /// `parallel.distributed_optimizer`.
    DistributedOptimizer,
    /// `parallel.sequence_parallel`.
    SequenceParallel,
    /// `parallel.offload_optimizer`.
    OffloadOptimizer,
    /// `parallel.offload_params`.
    OffloadParams,
    /// `parallel.offload_device`.
    OffloadDevice,
    /// `parallel.overlap_grad_reduce`.
    OverlapGradReduce,
    /// `parallel.overlap_param_gather`.
    OverlapParamGather,
    /// `parallel.grad_reduce_bf16`.
    GradReduceBf16,
    /// `parallel.fp8_param_gather`.
    Fp8ParamGather,
    /// `parallel.no_sync_accumulation`.
    NoSyncAccumulation,
    /// `parallel.offload_policy`.
    OffloadPolicy,
    /// `parallel.zero_hpz_partition_size`.
    ZeroHpz,
    /// `parallel.zero_quantized_weights`.
    ZeroQuantizedWeights,
    /// `parallel.zero_quantized_gradients`.
    ZeroQuantizedGradients,
    /// `parallel.tp_comm_overlap`.
    TpCommOverlap,
    /// `parallel.swap_optimizer`.
    SwapOptimizer,
    /// `parallel.uneven_layers`.
    UnevenLayers,
    /// `parallel.account_embedding_loss`.
    AccountEmbeddingLoss,
    /// `parallel.pipeline_layout`.
    PipelineLayout,
    /// `mtp_layers`.
    MtpLayers,
    /// `parallel.fused_kernels`.
    FusedKernels,
    /// `moe.dispatcher`.
    MoeDispatcher,
    /// `moe.grouped_gemm`.
    MoeGroupedGemm,
    /// `moe.permute_fusion`.
    MoePermuteFusion,
    /// `moe.overlap_ep_comm`.
    MoeOverlapEpComm,
    /// `moe.pad_to_capacity`.
    MoePadToCapacity,
    /// `moe.capacity_factor`.
    MoeCapacity,
    /// `moe.imbalance`.
    MoeImbalance,
    /// `recompute.num_layers`.
    RecomputeLayers,
    /// `attention`.
    Attention,
    /// `liger_kernel`.
    LigerKernel,
    /// `pure_bf16`.
    PureBf16,
    /// `optimizer`.
    Optimizer,
    /// `low_rank.rank`.
    LowRankRank,
    /// `low_rank.layerwise`.
    LowRankLayerwise,
    /// `recompute.activation_function`.
    ActivationFunction,
    /// `recompute.activation_function_layers`.
    ActivationFunctionLayers,
    /// `recompute.swap_attention`.
    SwapAttention,
    /// `recompute.modules`.
    RecomputeModules,
    /// `recompute.cpu_offload_layers`.
    CpuOffloadLayers,
    /// `recompute.distribute_saved_activations`.
    DistributeSavedActivations,
    /// `recompute.layers_ratio`.
    LayersRatio,
    /// `freeze_layers`.
    FreezeLayers,
    /// `lora.rank`.
    LoraRank,
    /// `lora.dropout`.
    LoraDropout,
    /// `lora.dora`.
    LoraDora,
    /// `batch.seq_len`.
    SeqLen,
    /// `batch.mean_seq_len`.
    MeanSeqLen,
    /// The `rl` section (rollout, lengths, engine).
    Rl,
    /// `rl.blocking`.
    RlBlocking,
    /// `rl.kl_loss`.
    RlKlLoss,
    /// `rl.log_prob_micro_batch`.
    RlLogProbMicroBatch,
    /// `rl.log_prob_max_tokens_per_device`.
    RlLogProbTokens,
}

/// Whether a setting applies, and if not, who takes it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Applies {
    /// The framework takes it and the method uses it.
    Yes,
    /// The framework has no flag or key for it; these frameworks have.
    Frameworks(&'static [Framework]),
    /// The method has no use for it; these methods have.
    Methods(&'static [Method]),
}

impl Applies {
    /// Whether the setting applies.
    pub fn yes(self) -> bool {
        self == Applies::Yes
    }
}

/// The frameworks that split the model with Megatron's parallel state (`layout::model_parallel`).
const MEGATRON_PATH: &[Framework] =
    &[Framework::Megatron, Framework::MindSpeedLlm, Framework::MindSpeedRl, Framework::VerlMegatron];
/// Megatron-LM's and MindSpeed-LLM's parsers and MindSpeed-RL's `MegatronConfig`: the Megatron path
/// but VeRL's, whose engine config names the sizes, the distributed optimizer, sequence parallelism,
/// offload and, through `override_transformer_config`, recomputation and the MoE layer's kernels
/// (verl 0.9.1 `verl/trainer/config/engine/megatron.yaml`).
const MEGATRON_FLAGS: &[Framework] = &[Framework::Megatron, Framework::MindSpeedLlm, Framework::MindSpeedRl];
/// The frameworks that run the model as Hugging Face transformers builds it.
const HF_PATH: &[Framework] = &[Framework::DeepSpeed, Framework::LlamaFactory, Framework::Verl];
/// Megatron-LM's own parser and MindSpeed-LLM's (core 0.12.1).
const MEGATRON_PARSERS: &[Framework] = &[Framework::Megatron, Framework::MindSpeedLlm];
/// Ascend's MindSpeed frameworks.
const MINDSPEED: &[Framework] = &[Framework::MindSpeedLlm, Framework::MindSpeedRl];
/// Methods that train LoRA adapters (RL with `rl.lora`).
const LORA_METHODS: &[Method] = &[Method::Lora, Method::Qlora, Method::DpoLora, Method::Grpo, Method::Ppo];
/// Reinforcement-learning methods.
const RL_METHODS: &[Method] = &[Method::Grpo, Method::Ppo];
/// Methods that train on samples of their own lengths (LLaMA-Factory's SFT).
const SAMPLE_METHODS: &[Method] = &[Method::SftFull, Method::Lora, Method::Qlora, Method::Freeze];
/// Methods that train on fixed-length sequences.
const SEQUENCE_METHODS: &[Method] = &[
    Method::Pretrain,
    Method::SftFull,
    Method::Lora,
    Method::Qlora,
    Method::Freeze,
    Method::Dpo,
    Method::DpoLora,
];

impl Knob {
    /// Every knob, in the order the page shows them.
    pub const ALL: &[Knob] = &[
        Knob::Tp,
        Knob::Pp,
        Knob::Vpp,
        Knob::Cp,
        Knob::CpAlgo,
        Knob::Ep,
        Knob::ZeroStage,
        Knob::Schedule,
        Knob::Fsdp,
        Knob::DistributedOptimizer,
        Knob::SequenceParallel,
        Knob::OffloadOptimizer,
        Knob::OffloadParams,
        Knob::OffloadDevice,
        Knob::OverlapGradReduce,
        Knob::OverlapParamGather,
        Knob::GradReduceBf16,
        Knob::Fp8ParamGather,
        Knob::NoSyncAccumulation,
        Knob::OffloadPolicy,
        Knob::ZeroHpz,
        Knob::ZeroQuantizedWeights,
        Knob::ZeroQuantizedGradients,
        Knob::TpCommOverlap,
        Knob::SwapOptimizer,
        Knob::UnevenLayers,
        Knob::AccountEmbeddingLoss,
        Knob::PipelineLayout,
        Knob::MtpLayers,
        Knob::FusedKernels,
        Knob::MoeDispatcher,
        Knob::MoeGroupedGemm,
        Knob::MoePermuteFusion,
        Knob::MoeOverlapEpComm,
        Knob::MoePadToCapacity,
        Knob::MoeCapacity,
        Knob::MoeImbalance,
        Knob::RecomputeLayers,
        Knob::Attention,
        Knob::LigerKernel,
        Knob::PureBf16,
        Knob::Optimizer,
        Knob::LowRankRank,
        Knob::LowRankLayerwise,
        Knob::ActivationFunction,
        Knob::ActivationFunctionLayers,
        Knob::SwapAttention,
        Knob::RecomputeModules,
        Knob::CpuOffloadLayers,
        Knob::DistributeSavedActivations,
        Knob::LayersRatio,
        Knob::FreezeLayers,
        Knob::LoraRank,
        Knob::LoraDropout,
        Knob::LoraDora,
        Knob::SeqLen,
        Knob::MeanSeqLen,
        Knob::Rl,
        Knob::RlBlocking,
        Knob::RlKlLoss,
        Knob::RlLogProbMicroBatch,
        Knob::RlLogProbTokens,
    ];

    /// The plan file's dotted name of the setting (`rl` for the whole section).
    pub fn path(self) -> &'static str {
        self.field().map_or("rl", Field::path)
    }

    /// The plan file's field the setting is; `None` for [`Knob::Rl`], the whole `rl` section.
    pub fn field(self) -> Option<Field> {
        Some(match self {
            Knob::Tp => Field::ParallelTp,
            Knob::Pp => Field::ParallelPp,
            Knob::Vpp => Field::ParallelVpp,
            Knob::Cp => Field::ParallelCp,
            Knob::CpAlgo => Field::ParallelCpAlgo,
            Knob::Ep => Field::ParallelEp,
            Knob::ZeroStage => Field::ParallelZeroStage,
            Knob::Schedule => Field::ParallelSchedule,
            Knob::Fsdp => Field::ParallelFsdp,
            Knob::DistributedOptimizer => Field::ParallelDistributedOptimizer,
            Knob::SequenceParallel => Field::ParallelSequenceParallel,
            Knob::OffloadOptimizer => Field::ParallelOffloadOptimizer,
            Knob::OffloadParams => Field::ParallelOffloadParams,
            Knob::OffloadDevice => Field::ParallelOffloadDevice,
            Knob::OverlapGradReduce => Field::ParallelOverlapGradReduce,
            Knob::OverlapParamGather => Field::ParallelOverlapParamGather,
            Knob::GradReduceBf16 => Field::ParallelGradReduceBf16,
            Knob::Fp8ParamGather => Field::ParallelFp8ParamGather,
            Knob::NoSyncAccumulation => Field::ParallelNoSyncAccumulation,
            Knob::ZeroHpz => Field::ParallelZeroHpz,
            Knob::ZeroQuantizedWeights => Field::ParallelZeroQuantizedWeights,
            Knob::ZeroQuantizedGradients => Field::ParallelZeroQuantizedGradients,
            Knob::OffloadPolicy => Field::ParallelOffloadPolicy,
            Knob::TpCommOverlap => Field::ParallelTpCommOverlap,
            Knob::SwapOptimizer => Field::ParallelSwapOptimizer,
            Knob::UnevenLayers => Field::ParallelUnevenLayers,
            Knob::AccountEmbeddingLoss => Field::ParallelAccountEmbeddingLoss,
            Knob::PipelineLayout => Field::ParallelPipelineLayout,
            Knob::MtpLayers => Field::MtpLayers,
            Knob::FusedKernels => Field::ParallelFusedKernels,
            Knob::MoeDispatcher => Field::MoeDispatcher,
            Knob::MoeGroupedGemm => Field::MoeGroupedGemm,
            Knob::MoePermuteFusion => Field::MoePermuteFusion,
            Knob::MoeOverlapEpComm => Field::MoeOverlapEpComm,
            Knob::MoePadToCapacity => Field::MoePadToCapacity,
            Knob::MoeCapacity => Field::MoeCapacityFactor,
            Knob::MoeImbalance => Field::MoeImbalance,
            Knob::RecomputeLayers => Field::RecomputeNumLayers,
            Knob::Attention => Field::Attention,
            Knob::LigerKernel => Field::LigerKernel,
            Knob::PureBf16 => Field::PureBf16,
            Knob::Optimizer => Field::Optimizer,
            Knob::LowRankRank => Field::LowRankRank,
            Knob::LowRankLayerwise => Field::LowRankLayerwise,
            Knob::ActivationFunction => Field::RecomputeActivationFunction,
            Knob::ActivationFunctionLayers => Field::RecomputeActivationFunctionLayers,
            Knob::SwapAttention => Field::RecomputeSwapAttention,
            Knob::RecomputeModules => Field::RecomputeModules,
            Knob::CpuOffloadLayers => Field::RecomputeCpuOffloadLayers,
            Knob::DistributeSavedActivations => Field::RecomputeDistributeSavedActivations,
            Knob::LayersRatio => Field::RecomputeLayersRatio,
            Knob::FreezeLayers => Field::FreezeLayers,
            Knob::LoraRank => Field::LoraRank,
            Knob::LoraDropout => Field::LoraDropout,
            Knob::LoraDora => Field::LoraDora,
            Knob::SeqLen => Field::BatchSeqLen,
            Knob::MeanSeqLen => Field::BatchMeanSeqLen,
            Knob::Rl => return None,
            Knob::RlBlocking => Field::RlBlocking,
            Knob::RlKlLoss => Field::RlKlLoss,
            Knob::RlLogProbMicroBatch => Field::RlLogProbMicroBatch,
            Knob::RlLogProbTokens => Field::RlLogProbMaxTokensPerDevice,
        })
    }
}

/// Whether the framework reads `knob` on a device of `vendor`: every knob but one is read
/// wherever its framework runs. LLaMA-Factory's `recompute_layers_ratio` is read by Ascend's
/// packaged LLaMA-Factory alone; upstream's parser refuses keys it does not know
/// (`_parse_args`, src/llamafactory/hparams/parser.py; rule llamafactory.layers_ratio_upstream).
pub fn read_on(knob: Knob, vendor: crate::hardware::Vendor) -> bool {
    match knob {
        Knob::LayersRatio => vendor == crate::hardware::Vendor::Ascend,
        _ => true,
    }
}

/// Whether the form takes `knob` for a plan on `framework` training with `method` on `vendor`'s
/// devices: it [`applies`] and is [`read_on`] them (`None`, the device not known: as if it were).
pub fn takes(
    framework: Framework,
    method: Method,
    knob: Knob,
    vendor: Option<crate::hardware::Vendor>,
) -> bool {
    applies(framework, method, knob).yes() && vendor.is_none_or(|v| read_on(knob, v))
}

/// Whether `knob` applies to a plan on `framework` training with `method`.
///
/// # Example
///
/// ```
/// use trainplan_core::knobs::{Applies, Knob, applies};
/// use trainplan_core::plan::{Framework, Method};
///
/// // LLaMA-Factory runs DeepSpeed ZeRO, not Megatron's distributed optimizer.
/// assert!(applies(Framework::LlamaFactory, Method::Lora, Knob::ZeroStage).yes());
/// assert!(!applies(Framework::LlamaFactory, Method::Lora, Knob::DistributedOptimizer).yes());
/// ```
// Long: one arm per knob, each beside the flags or keys that take it; split, no match would hold
// every knob to an answer.
pub fn applies(framework: Framework, method: Method, knob: Knob) -> Applies {
    let only = |frameworks: &'static [Framework]| match frameworks.contains(&framework) {
        true => Applies::Yes,
        false => Applies::Frameworks(frameworks),
    };
    let for_methods = |methods: &'static [Method]| match methods.contains(&method) {
        true => Applies::Yes,
        false => Applies::Methods(methods),
    };
    match knob {
        // `--tensor-model-parallel-size`, `--pipeline-model-parallel-size`,
        // `--num-virtual-stages-per-pipeline-rank` (MindSpeed-LLM: `--num-layers-per-virtual-
        // pipeline-stage`), `--expert-model-parallel-size`, `--use-distributed-optimizer`,
        // `--sequence-parallel`, `--overlap-param-gather`, `--decoder-first/last-pipeline-num-layers`
        // (MindSpeed: `--num-layer-list`): Megatron's parsers and MindSpeed-RL's `MegatronConfig`
        // (`tensor_model_parallel_size`, `use_distributed_optimizer`, …); with the schedule and
        // `--overlap-param-gather`, theirs alone. The HF path has none (rule hf.no_model_parallel).
        // VeRL's Megatron engine: `tensor_model_parallel_size`, `pipeline_model_parallel_size`,
        // `virtual_pipeline_model_parallel_size`, `expert_model_parallel_size`,
        // `use_distributed_optimizer`, `sequence_parallel`, and `override_transformer_config`'s
        // `recompute_num_layers`, `num_layers_in_first/last_pipeline_stage`,
        // `moe_token_dispatcher_type`, `moe_grouped_gemm`, `moe_permute_fusion`
        // (verl/trainer/config/engine/megatron.yaml; megatron-core's `TransformerConfig`); megatron-core
        // picks the schedule from the virtual stages.
        Knob::Tp
        | Knob::Pp
        | Knob::Vpp
        | Knob::Ep
        | Knob::DistributedOptimizer
        | Knob::SequenceParallel
        | Knob::UnevenLayers
        | Knob::RecomputeLayers
        | Knob::MoeDispatcher
        | Knob::MoeGroupedGemm
        | Knob::MoePermuteFusion => only(MEGATRON_PATH),
        // Not VeRL's Megatron engine's parameter gather: overlapped, the distributed optimizer's
        // step leaves the updated parameters ungathered until the next forward
        // (`should_sync_params`, megatron/core/optimizer/distrib_optimizer.py), and VeRL sends the
        // weights to its rollout engine after the update without a forward or a gather of its own
        // (it only registers `start_param_sync` as the forward's hook: `register_megatron_training_hooks`,
        // verl/utils/megatron_utils.py at verl 0.9.1), so the rollout would get the parts other
        // ranks updated as they were before the update.
        Knob::Schedule | Knob::OverlapParamGather | Knob::MoeOverlapEpComm => only(MEGATRON_FLAGS),
        // `--context-parallel-size` on the Megatron path; VeRL's FSDP actor splits sequences with
        // Ulysses (`ulysses_sequence_parallel_size`).
        Knob::Cp => only(&[
            Framework::Megatron,
            Framework::MindSpeedLlm,
            Framework::MindSpeedRl,
            Framework::Verl,
            Framework::VerlMegatron,
        ]),
        // How CP exchanges: Megatron-LM `--cp-comm-type` (megatron-lm.tsv), MindSpeed-LLM
        // `--context-parallel-algo` (mindspeed-llm.tsv), MindSpeed-RL `context_parallel_algo`
        // (mindspeed-rl.tsv, `MegatronConfig`). VeRL's FSDP actor has Ulysses only
        // (`ulysses_sequence_parallel_size`, verl/models/transformers/monkey_patch.py), DeepSpeed's
        // sequence parallelism is Ulysses too and LLaMA-Factory's YAML has no CP: no choice there.
        // VeRL's Megatron engine passes `override_transformer_config.cp_comm_type` to megatron-core's
        // `TransformerConfig` (verl 0.9.1 `verl/models/mcore/config_converter.py`: the overrides
        // update its arguments), the ring (`p2p`) unless told.
        Knob::CpAlgo => only(&[
            Framework::Megatron,
            Framework::MindSpeedLlm,
            Framework::MindSpeedRl,
            Framework::VerlMegatron,
        ]),
        // DeepSpeed `zero_optimization.stage` (LLaMA-Factory's `deepspeed:` file; VeRL's FSDP
        // actor shards as ZeRO-3 does, `fsdp_config.fsdp_size: -1`).
        Knob::ZeroStage => only(HF_PATH),
        // `--use-megatron-fsdp` is Megatron-LM's; MindSpeed-LLM's parser has `--use-torch-fsdp2`
        // only, and VeRL's FSDP engine `strategy: fsdp2` (PyTorch FSDP2) beside its default FSDP1
        // (rule fsdp.framework).
        Knob::Fsdp => only(&[Framework::Megatron, Framework::MindSpeedLlm, Framework::Verl]),
        // VeRL's FSDP engine `use_no_sync_for_gradient_accumulation` (`FSDPEngineConfig`,
        // verl/workers/config/engine.py at verl 0.9.1); its Megatron engine accumulates under
        // Megatron's own `no_sync` already. Its `offload_policy` (the same config) likewise.
        Knob::NoSyncAccumulation | Knob::OffloadPolicy => only(&[Framework::Verl]),
        // ZeRO++ (`zero_optimization.zero_hpz_partition_size`, `zero_quantized_weights`,
        // `zero_quantized_gradients`, deepspeed/runtime/zero/config.py): DeepSpeed's, and
        // LLaMA-Factory's through its DeepSpeed file. VeRL's FSDP has none.
        Knob::ZeroHpz | Knob::ZeroQuantizedWeights | Knob::ZeroQuantizedGradients => {
            only(&[Framework::DeepSpeed, Framework::LlamaFactory])
        }
        // `--optimizer-cpu-offload` (Megatron-LM, MindSpeed-LLM), `offload_train_optimizer`
        // (MindSpeed-RL), `zero_optimization.offload_optimizer` (DeepSpeed, LLaMA-Factory),
        // `fsdp_config.optimizer_offload` (VeRL): every framework.
        Knob::OffloadOptimizer => Applies::Yes,
        // `zero_optimization.offload_param` (DeepSpeed, LLaMA-Factory) and
        // `fsdp_config.param_offload` (VeRL), `megatron.param_offload` (VeRL's Megatron engine);
        // Megatron's parsers declare no parameter offload.
        Knob::OffloadParams => {
            only(&[Framework::DeepSpeed, Framework::LlamaFactory, Framework::Verl, Framework::VerlMegatron])
        }
        // `zero_optimization.offload_optimizer.device` / `offload_param.device` (DeepSpeed, and
        // LLaMA-Factory through its DeepSpeed file); every other framework offloads to host memory
        // alone (rule zero.nvme_framework).
        Knob::OffloadDevice => only(&[Framework::DeepSpeed, Framework::LlamaFactory]),
        // `--overlap-grad-reduce` (Megatron-LM, MindSpeed-LLM), `overlap_grad_reduce`
        // (MindSpeed-RL's `MegatronConfig`), `zero_optimization.overlap_comm` (DeepSpeed,
        // LLaMA-Factory), and VeRL's Megatron engine through `override_ddp_config` (verl 0.9.1
        // `verl/utils/megatron_utils.py`: its DDP config has `overlap_grad_reduce: False`, which the
        // engine's `override_ddp_config` replaces). VeRL's FSDP actor has no such key.
        Knob::OverlapGradReduce => only(&[
            Framework::Megatron,
            Framework::MindSpeedLlm,
            Framework::MindSpeedRl,
            Framework::DeepSpeed,
            Framework::LlamaFactory,
            Framework::VerlMegatron,
        ]),
        // `--tp-comm-overlap` (Megatron-LM), `--use-ascend-coc` (MindSpeed-LLM), MindSpeed-RL's
        // `use_ascend_coc`.
        Knob::TpCommOverlap => only(MEGATRON_FLAGS),
        // `--swap-optimizer`, `--recompute-activation-function(-num-layers)`, `--swap-attention`,
        // `--use-fused-rmsnorm --use-fused-swiglu --use-fused-rotary-pos-emb`: MindSpeed's
        // features (mindspeed-llm.tsv; MindSpeed-RL's `MegatronConfig`).
        Knob::SwapOptimizer
        | Knob::ActivationFunction
        | Knob::ActivationFunctionLayers
        | Knob::SwapAttention
        | Knob::FusedKernels => only(MINDSPEED),
        // `--account-for-embedding-in-pipeline-split`, `--grad-reduce-in-bf16`, `--fp8-param-gather`,
        // `--pipeline-model-parallel-layout`,
        // `--mtp-num-layers`, `--moe-expert-capacity-factor`, `--moe-pad-expert-input-to-capacity`,
        // `--recompute-modules`, `--distribute-saved-activations`: declared by Megatron-LM and
        // MindSpeed-LLM, not by MindSpeed-RL's config classes.
        // The routed load on the busiest device (`moe.imbalance`) is no framework's flag: it
        // describes the router, and it moves work between devices only where expert parallelism
        // spreads the experts over them, which the HF path never does (`time::moe`: with EP 1 one
        // device holds every expert).
        Knob::MoeImbalance => only(MEGATRON_PATH),
        // MindSpeed-RL's `num_layer_list` carries a layout of one stage per rank (rule
        // parallel.layout_framework for any other).
        Knob::PipelineLayout => only(MEGATRON_FLAGS),
        Knob::AccountEmbeddingLoss
        | Knob::GradReduceBf16
        | Knob::Fp8ParamGather
        | Knob::MtpLayers
        | Knob::MoePadToCapacity
        | Knob::MoeCapacity
        | Knob::RecomputeModules
        | Knob::DistributeSavedActivations => only(MEGATRON_PARSERS),
        // `--cpu-offloading-num-layers`: Megatron-LM's parser only.
        Knob::CpuOffloadLayers => only(&[Framework::Megatron]),
        // Ascend's LLaMA-Factory `recompute_layers_ratio`.
        Knob::LayersRatio => only(&[Framework::LlamaFactory]),
        // Every framework picks its attention kernel: Megatron-LM and MindSpeed-LLM
        // `--attention-backend` / `--use-flash-attn`, MindSpeed-RL `use_flash_attn`, the HF path
        // transformers' `attn_implementation` (LLaMA-Factory `flash_attn`).
        Knob::Attention => Applies::Yes,
        // LLaMA-Factory `enable_liger_kernel` (`src/llamafactory/hparams/model_args.py`), VeRL
        // `actor_rollout_ref.model.use_liger` (`verl/workers/config/model.py`).
        Knob::LigerKernel => only(&[Framework::LlamaFactory, Framework::Verl]),
        // LLaMA-Factory `FinetuningArguments.pure_bf16` (`src/llamafactory/hparams/finetuning_args.py`).
        // The HF `Trainer`'s `optim` (transformers `TrainingArguments`), which LLaMA-Factory passes on.
        Knob::PureBf16 | Knob::Optimizer => only(&[Framework::LlamaFactory]),
        // LLaMA-Factory's `galore_rank` and `galore_layerwise` (`GaloreArguments`), `apollo_rank`
        // and `apollo_layerwise` (`ApolloArguments`), for the methods that train full parameters
        // (rule llamafactory.low_rank_lora refuses them beside LoRA).
        Knob::LowRankRank | Knob::LowRankLayerwise => {
            match for_methods(&[Method::Pretrain, Method::SftFull, Method::Freeze, Method::Dpo]) {
                Applies::Yes => only(&[Framework::LlamaFactory]),
                no => no,
            }
        }
        // MindSpeed-RL `RLConfig.blocking`.
        Knob::RlBlocking => match for_methods(RL_METHODS) {
            Applies::Yes => only(&[Framework::MindSpeedRl]),
            no => no,
        },
        // VeRL `actor_rollout_ref.actor.use_kl_loss`, both engines; MindSpeed-RL's integrated worker
        // scores with its reference on every step (`compute_ref_log_prob`).
        Knob::RlKlLoss => match for_methods(RL_METHODS) {
            Applies::Yes => only(&[Framework::Verl, Framework::VerlMegatron]),
            no => no,
        },
        // VeRL `log_prob_micro_batch_size_per_gpu` and `log_prob_max_token_len_per_gpu` (the
        // rollout's and the reference's), both engines; MindSpeed-RL `actor_` and
        // `ref_forward_micro_batch_size` (`IntegratedWorker.compute_log_prob` and
        // `compute_ref_log_prob` run with them, mindspeed_rl/workers/integrated_worker.py) and
        // `actor_` and `ref_max_packing_token_size` (`BaseTrainingEngine`'s forward-only packing,
        // mindspeed_rl/models/base/base_training_engine.py), all at 05a90d7.
        Knob::RlLogProbMicroBatch | Knob::RlLogProbTokens => match for_methods(RL_METHODS) {
            Applies::Yes => only(&[Framework::Verl, Framework::VerlMegatron, Framework::MindSpeedRl]),
            no => no,
        },
        // LLaMA-Factory `FreezeArguments.freeze_trainable_layers`; no other framework here
        // freeze-tunes (rule method.freeze_framework).
        Knob::FreezeLayers => match for_methods(&[Method::Freeze]) {
            Applies::Yes => only(&[Framework::LlamaFactory]),
            no => no,
        },
        Knob::LoraRank => for_methods(LORA_METHODS),
        // LLaMA-Factory `FinetuningArguments.lora_dropout` and `use_dora`; MindSpeed-LLM declares
        // neither flag and VeRL's `LoraConfig` sets neither, so their adapters run without them.
        Knob::LoraDropout | Knob::LoraDora => match for_methods(LORA_METHODS) {
            Applies::Yes => only(&[Framework::LlamaFactory]),
            no => no,
        },
        Knob::Rl => for_methods(RL_METHODS),
        Knob::SeqLen => for_methods(SEQUENCE_METHODS),
        // LLaMA-Factory's SFT collator pads a micro-batch to its longest sample. Its DPO collator
        // pads a pair's chosen and rejected responses together (`PairwiseDataCollatorWithPadding`),
        // so even one pair trains at the longer of two; its pre-training packs samples into full
        // `cutoff_len` rows (`packing`, on for `stage: pt`), as Megatron's and MindSpeed's datasets do.
        // MindSpeed-LLM's fine-tuning pads every micro-batch to `--seq-length` unless told
        // `--no-pad-to-seq-lengths`, which the launch file then writes: its collator pads to the
        // longest sample, a multiple of `--pad-to-multiple-of` (8) (`build_pretraining_data_loader`,
        // mindspeed_llm/legacy/data/data_samplers.py at c77308a).
        Knob::MeanSeqLen => match for_methods(SAMPLE_METHODS) {
            Applies::Yes => only(&[Framework::LlamaFactory, Framework::MindSpeedLlm]),
            no => no,
        },
    }
}

/// A knob's bit in [`off_knobs`]' mask (there are fewer than 64 knobs).
fn knob_bit(knob: Knob) -> u64 {
    1 << knob as u32
}

const _: () = {
    assert!(Knob::ALL.len() < 64, "a knob's bit must fit the mask, all ones left free");
    // `Knob::ALL[i]` has bit i: the list and a mask name the knobs alike.
    let mut i = 0;
    while i < Knob::ALL.len() {
        assert!(Knob::ALL[i] as usize == i, "Knob::ALL is in declaration order");
        i += 1;
    }
};

/// Whether `knob` is among the knobs of `off` ([`off_knobs`]).
pub(crate) fn is_off(off: u64, knob: Knob) -> bool {
    off & knob_bit(knob) != 0
}

/// The knobs `framework` and `method` do not take, one bit each ([`knob_bit`]): [`applies`] over
/// every knob, worked out once per pair (memory and time ask for every plan they estimate).
pub(crate) fn off_knobs(framework: Framework, method: Method) -> u64 {
    const PAIRS: usize = Framework::ALL.len() * Method::ALL.len();
    // A mask has a bit per knob only, so all ones marks a pair not worked out yet.
    const UNKNOWN: u64 = u64::MAX;
    thread_local! {
        static TABLE: [std::cell::Cell<u64>; PAIRS] = const { [const { std::cell::Cell::new(UNKNOWN) }; PAIRS] };
    }
    let at = framework as usize * Method::ALL.len() + method as usize;
    TABLE.with(|table| {
        let cell = &table[at];
        if cell.get() == UNKNOWN {
            let mask = Knob::ALL
                .iter()
                .filter(|&&knob| !applies(framework, method, knob).yes())
                .fold(0, |mask, &knob| mask | knob_bit(knob));
            cell.set(mask);
        }
        cell.get()
    })
}

/// The context-parallel algorithm a framework without the choice runs: VeRL's Ulysses is
/// all-to-all (verl/models/transformers/monkey_patch.py at b178a3c, `_ulysses_flash_attention_forward`:
/// `gather_seq_scatter_heads` on Q, K and V, `gather_heads_scatter_seq` on the output); the others
/// have no CP at all ([`Knob::Cp`]), so the plan file's default stands.
pub fn framework_cp_algo(framework: Framework) -> CpAlgo {
    match framework {
        Framework::Verl => CpAlgo::AllToAll,
        _ => CpAlgo::Ring,
    }
}

/// The plan as its framework runs it: every setting that does not apply put back to the plan
/// file's default (`PlanFile`, docs/plan-format.md), or to the one value the framework runs where
/// it has no choice ([`framework_cp_algo`], where the context is split). Memory and time are
/// computed on it, so a setting the framework has no flag for changes no figure; the rules read
/// the plan as written and name such a setting. Borrows the plan when nothing needs resetting (the usual case).
pub fn effective(plan: &Plan) -> Effective<'_> {
    let off_mask = off_knobs(plan.framework, plan.method);
    if off_mask == 0 {
        return Effective(Resets::Same(plan));
    }
    // The plan is copied at the first setting that is off its reset value; most plans leave them
    // all there and are only read. Each knob resets fields no other knob does, so each is compared
    // with the plan as written. Boxed, as the result is: a plan is 1.2 KB, and moved by value (a
    // `Cow`, an `Option`) it was copied on every call, a third of this function's time.
    let mut owned: Option<Box<Plan>> = None;
    macro_rules! reset {
        ($($field:ident).+, $value:expr) => {{
            let value = $value;
            if plan.$($field).+ != value {
                owned.get_or_insert_with(|| Box::new(plan.clone())).$($field).+ = value;
            }
        }};
    }
    let one = NonZeroU32::MIN;
    let moe_default = MoeFile::default();
    // Each knob's reset, in declaration order (`CpAlgo` reads CP after CP's reset), tested bit by
    // bit in one straight run: a loop over the set bits paid a dispatch per knob, and most
    // frameworks leave thirty and more off.
    macro_rules! resets {
        ($($knob:ident => $reset:expr;)*) => {{
            // Every knob named once: this match fails to compile if one is missing.
            const _: fn(Knob) = |knob| match knob { $(Knob::$knob => {})* };
            $(if off_mask & knob_bit(Knob::$knob) != 0 { $reset })*
        }};
    }
    resets! {
        Tp => reset!(parallel.tp, one);
        Pp => reset!(parallel.pp, one);
        Vpp => reset!(parallel.vpp, one);
        Cp => reset!(parallel.cp, one);
        // Inert without a context split (no exchange either way, and CP reset above when it does
        // not apply), and left as it is there: a VeRL plan's default ring would otherwise copy the
        // whole plan on every estimate.
        CpAlgo => if 1 < owned.as_deref().unwrap_or(plan).parallel.cp.get() {
            reset!(parallel.cp_algo, framework_cp_algo(plan.framework))
        };
        Ep => reset!(parallel.ep, one);
        ZeroStage => reset!(parallel.zero_stage, ZeroStage::NONE);
        Schedule => reset!(parallel.schedule, PipelineSchedule::Auto);
        Fsdp => reset!(parallel.fsdp, Fsdp::None);
        DistributedOptimizer => reset!(parallel.distributed_optimizer, false);
        SequenceParallel => reset!(parallel.sequence_parallel, false);
        OffloadOptimizer => reset!(parallel.offload_optimizer, false);
        OffloadParams => reset!(parallel.offload_params, false);
        OffloadDevice => reset!(parallel.offload_device, crate::plan::OffloadDevice::Cpu);
        OverlapGradReduce => reset!(parallel.overlap_grad_reduce, false);
        OverlapParamGather => reset!(parallel.overlap_param_gather, false);
        GradReduceBf16 => reset!(parallel.grad_reduce_bf16, false);
        Fp8ParamGather => reset!(parallel.fp8_param_gather, false);
        NoSyncAccumulation => reset!(parallel.no_sync_accumulation, false);
        ZeroHpz => reset!(parallel.zero_hpz, one);
        ZeroQuantizedWeights => reset!(parallel.zero_quantized_weights, false);
        ZeroQuantizedGradients => reset!(parallel.zero_quantized_gradients, false);
        OffloadPolicy => reset!(parallel.offload_policy, false);
        TpCommOverlap => reset!(parallel.tp_comm_overlap, false);
        SwapOptimizer => reset!(parallel.swap_optimizer, false);
        UnevenLayers => reset!(parallel.uneven_layers, false);
        AccountEmbeddingLoss => reset!(parallel.account_embedding_loss, false);
        PipelineLayout => reset!(parallel.pipeline_layout, None);
        MtpLayers => reset!(mtp_layers, 0);
        FusedKernels => reset!(parallel.fused_kernels, true);
        MoeDispatcher => reset!(moe.dispatcher, moe_default.dispatcher);
        MoeGroupedGemm => reset!(moe.grouped_gemm, moe_default.grouped_gemm);
        MoePermuteFusion => reset!(moe.permute_fusion, moe_default.permute_fusion);
        MoeOverlapEpComm => reset!(moe.overlap_ep_comm, moe_default.overlap_ep_comm);
        MoePadToCapacity => reset!(moe.pad_to_capacity, moe_default.pad_to_capacity);
        MoeCapacity => reset!(moe.capacity_factor, moe_default.capacity_factor);
        MoeImbalance => reset!(moe.imbalance, moe_default.imbalance);
        RecomputeLayers => reset!(recompute.num_layers, one);
        ActivationFunction => reset!(recompute.activation_function, false);
        ActivationFunctionLayers => reset!(recompute.activation_function_layers, 0);
        SwapAttention => reset!(recompute.swap_attention, false);
        RecomputeModules => reset!(recompute.modules, RecomputeModules::DEFAULT);
        CpuOffloadLayers => reset!(recompute.cpu_offload_layers, 0);
        DistributeSavedActivations => reset!(recompute.distribute_saved_activations, false);
        LayersRatio => reset!(recompute.layers_ratio_frac, 1.0);
        FreezeLayers => reset!(
            freeze_layers,
            NonZeroU32::new(crate::plan::FREEZE_LAYERS_DEFAULT).unwrap_or(one)
        );
        LoraRank => reset!(lora.rank, NonZeroU32::new(LoraFile::DEFAULT_RANK).unwrap_or(one));
        LoraDropout => reset!(lora.dropout, 0.0);
        LoraDora => reset!(lora.dora, false);
        // Read by no figure of a method that does not use them (the test in
        // core/tests/it/knobs.rs holds that).
        Attention => {};
        LigerKernel => reset!(liger_kernel, false);
        PureBf16 => reset!(pure_bf16, false);
        Optimizer => reset!(optimizer, crate::plan::Optimizer::AdamW);
        LowRankRank => reset!(
            low_rank.rank,
            NonZeroU32::new(crate::plan::LowRankFile::DEFAULT_RANK).unwrap_or(one)
        );
        LowRankLayerwise => reset!(low_rank.layerwise, false);
        SeqLen => {};
        MeanSeqLen => reset!(batch.mean_seq_len, 0);
        Rl => {};
        RlBlocking => {};
        RlKlLoss => reset!(rl.kl_loss, true);
        RlLogProbMicroBatch => reset!(rl.log_prob_micro_batch, 0);
        RlLogProbTokens => reset!(rl.log_prob_max_tokens_per_device, 0);
    }
    value_resets(plan, &mut owned);
    match owned {
        Some(owned) => Effective(Resets::Reset(owned)),
        None => Effective(Resets::Same(plan)),
    }
}

/// [`effective`]'s resets that hang on the plan's values, not on its framework and method alone:
/// into `owned`, which holds the plan's copy once anything is reset.
fn value_resets(plan: &Plan, owned: &mut Option<Box<Plan>>) {
    macro_rules! reset {
        ($($field:ident).+, $value:expr) => {{
            let value = $value;
            if owned.as_deref().unwrap_or(plan).$($field).+ != value {
                owned.get_or_insert_with(|| Box::new(plan.clone())).$($field).+ = value;
            }
        }};
    }
    // DeepSpeed offloads the optimizer at ZeRO-1 to 3 alone and the parameters at ZeRO-3 alone
    // (`zero_optimization.offload_optimizer`: "Valid for ZeRO stage 1, 2, 3",
    // deepspeed/runtime/zero/config.py; below them its engine wraps the optimizer without ZeRO,
    // `_configure_optimizer`, and reads neither): the launch files leave them out there, and the
    // rules name them (zero.offload_optimizer_stage, zero.offload_params_needs_3).
    if matches!(plan.framework, Framework::DeepSpeed | Framework::LlamaFactory) {
        let zero = plan.parallel.zero_stage;
        if !zero.shards_optimizer() {
            reset!(parallel.offload_optimizer, false);
        }
        if !zero.shards_params() {
            reset!(parallel.offload_params, false);
        }
    }
    // LLaMA-Factory loads gpt-oss on the FlashAttention-3 kernel with attention sinks whatever
    // `flash_attn` says (`configure_attn_implementation`,
    // src/llamafactory/model/model_utils/attention.py: `kernels-community/vllm-flash-attn3`).
    if plan.framework == Framework::LlamaFactory && plan.model.arch.family == crate::model::Family::GptOss {
        reset!(attention, crate::plan::AttentionImpl::Flash);
    }
}

/// A plan as its framework runs it ([`effective`]): the plan itself, or a copy with the settings
/// the framework does not take reset. Sixteen bytes, where a `Cow` of a plan is the plan's 1.2 KB.
/// Made by [`effective`] alone, so memory and time, which take one (`memory::estimate_with`,
/// `time::estimate_within`), read every plan as its framework runs it and a caller that asks for
/// both resets the plan once.
#[derive(Debug)]
pub struct Effective<'a>(Resets<'a>);

#[derive(Debug)]
enum Resets<'a> {
    /// Nothing needed resetting.
    Same(&'a Plan),
    /// A copy, some settings reset.
    Reset(Box<Plan>),
}

impl std::ops::Deref for Effective<'_> {
    type Target = Plan;

    fn deref(&self) -> &Plan {
        match &self.0 {
            Resets::Same(plan) => plan,
            Resets::Reset(plan) => plan,
        }
    }
}
