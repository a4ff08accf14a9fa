//! What the user typed, kept as typed, and the one function that turns it into a core plan.
//!
//! Choices from lists (model, hardware, framework, method, switches) live in a core `PlanFile`;
//! numbers the user types live as text, so a half-typed or wrong value stays on screen with its
//! message instead of being lost. [`PlanForm::to_plan`] is the only place the two meet.

use trainplan_core::Plan;
use trainplan_core::field::Field;
use trainplan_core::plan::{
    CustomDevice, Framework, HardwareField, HardwareSpec, ModelField, PlanFile, PlanFileError,
};

/// The page's inputs.
#[derive(Clone, Debug, PartialEq)]
pub struct PlanForm {
    /// Everything chosen from a list, and the imported config if any.
    pub file: PlanFile,
    /// Every typed whole number, as typed, indexed by [`NumField`].
    pub numbers: Vec<String>,
    /// The custom device's figures as typed, used when `custom_hardware` is on.
    pub custom: CustomForm,
    /// Whether the device is the custom one.
    pub custom_hardware: bool,
}

/// The whole numbers a user types.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum NumField {
    /// `cluster.nodes`.
    Nodes,
    /// `cluster.devices_per_node`; empty means the hardware's usual count.
    DevicesPerNode,
    /// `lora.rank`.
    LoraRank,
    /// `freeze_layers`.
    FreezeLayers,
    /// `lora.dropout`, from 0 to 0.9.
    LoraDropout,
    /// `parallel.tp`.
    Tp,
    /// `parallel.pp`.
    Pp,
    /// `parallel.vpp`.
    Vpp,
    /// `parallel.cp`.
    Cp,
    /// `parallel.ep`.
    Ep,
    /// `parallel.zero_hpz_partition_size`.
    ZeroHpz,
    /// `batch.micro_batch`.
    MicroBatch,
    /// `batch.global_batch`.
    GlobalBatch,
    /// `batch.seq_len`.
    SeqLen,
    /// `recompute.num_layers`.
    RecomputeLayers,
    /// `recompute.activation_function_layers`; empty means every layer.
    ActFnLayers,
    /// `recompute.layers_ratio`, a fraction in (0, 1].
    LayersRatio,
    /// `recompute.cpu_offload_layers`; empty means none.
    CpuOffloadLayers,
    /// `rl.rollout_tp`.
    RolloutTp,
    /// `rl.rollout_ep`.
    RolloutEp,
    /// `rl.n_samples_per_prompt`.
    Samples,
    /// `batch.mean_seq_len`; empty means every sample at the sequence length.
    MeanSeqLen,
    /// `batch.image_tokens`; empty means text only.
    ImageTokens,
    /// `rl.max_prompt_length`.
    PromptLen,
    /// `rl.max_response_length`.
    ResponseLen,
    /// `rl.mean_prompt_length`; empty means every prompt at the longest.
    MeanPromptLen,
    /// `rl.mean_response_length`; empty means every response at the longest.
    MeanResponseLen,
    /// `rl.mini_batch`; empty means the whole batch.
    MiniBatch,
    /// `rl.max_tokens_per_device`; empty means the framework's default.
    TokenBudget,
    /// `rl.gpu_memory_utilization`, a fraction in (0, 1].
    GpuMemoryUtilization,
    /// `rl.max_num_seqs`.
    MaxNumSeqs,
    /// `rl.log_prob_micro_batch`; empty means the update's micro-batch.
    LogProbMicroBatch,
    /// `rl.log_prob_max_tokens_per_device`; empty means the update's budget.
    LogProbTokens,
    /// `rl.max_model_len`; empty means prompt + response.
    MaxModelLen,
    /// `rl.max_num_batched_tokens`; empty means automatic.
    BatchedTokens,
    /// `cluster.scale_up_domain`: devices on one NVLink/HCCS fabric; empty means the device's.
    ScaleUp,
    /// `overheads.allocator_reserve`: the share of device memory kept free, in [0, 0.5]; empty
    /// means the default the verdict, advice and search use.
    MemoryMargin,
    /// `mtp_layers`; empty means none.
    MtpLayers,
    /// `moe.imbalance`: the busiest device's expert tokens over the mean, from 1 to 64.
    MoeImbalance,
    /// `moe.capacity_factor`: more than 0, at most 64; empty means dropless.
    MoeCapacity,
    /// `low_rank.rank`.
    LowRankRank,
    /// `cluster.nvme_read_gb_per_s`; empty means the default.
    NvmeRead,
    /// `cluster.nvme_write_gb_per_s`; empty means the default.
    NvmeWrite,
}

/// What text a number field takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NumKind {
    /// A whole number, at least 1.
    Count,
    /// A whole number, or empty for the automatic value (written as 0).
    Auto,
    /// A fraction in (0, 1].
    Fraction,
    /// A positive number (a factor), at most 64.
    Factor,
    /// A bandwidth in GB/s, more than 0 and at most 1,000, or empty for the default.
    Rate,
}

impl NumField {
    /// Every field, in form order; the index is the field's slot in [`PlanForm::numbers`].
    pub const ALL: [NumField; 43] = [
        NumField::Nodes,
        NumField::DevicesPerNode,
        NumField::LoraRank,
        NumField::FreezeLayers,
        NumField::LowRankRank,
        NumField::LoraDropout,
        NumField::Tp,
        NumField::Pp,
        NumField::Vpp,
        NumField::Cp,
        NumField::Ep,
        NumField::ZeroHpz,
        NumField::MicroBatch,
        NumField::GlobalBatch,
        NumField::SeqLen,
        NumField::MeanSeqLen,
        NumField::ImageTokens,
        NumField::RecomputeLayers,
        NumField::ActFnLayers,
        NumField::LayersRatio,
        NumField::CpuOffloadLayers,
        NumField::RolloutTp,
        NumField::RolloutEp,
        NumField::Samples,
        NumField::PromptLen,
        NumField::ResponseLen,
        NumField::MeanPromptLen,
        NumField::MeanResponseLen,
        NumField::MiniBatch,
        NumField::TokenBudget,
        NumField::GpuMemoryUtilization,
        NumField::MaxNumSeqs,
        NumField::LogProbMicroBatch,
        NumField::LogProbTokens,
        NumField::MaxModelLen,
        NumField::BatchedTokens,
        NumField::MemoryMargin,
        NumField::ScaleUp,
        NumField::MtpLayers,
        NumField::MoeImbalance,
        NumField::MoeCapacity,
        NumField::NvmeRead,
        NumField::NvmeWrite,
    ];

    /// What text the field takes.
    pub fn kind(self) -> NumKind {
        match self {
            NumField::ActFnLayers
            | NumField::CpuOffloadLayers
            | NumField::MiniBatch
            | NumField::MeanPromptLen
            | NumField::MeanResponseLen
            | NumField::MeanSeqLen
            | NumField::ImageTokens
            | NumField::TokenBudget
            | NumField::LogProbMicroBatch
            | NumField::LogProbTokens
            | NumField::MaxModelLen
            | NumField::BatchedTokens
            | NumField::MtpLayers => NumKind::Auto,
            NumField::LayersRatio
            | NumField::GpuMemoryUtilization
            | NumField::MemoryMargin
            | NumField::LoraDropout => NumKind::Fraction,
            NumField::MoeImbalance | NumField::MoeCapacity => NumKind::Factor,
            NumField::NvmeRead | NumField::NvmeWrite => NumKind::Rate,
            _ => NumKind::Count,
        }
    }

    fn idx(self) -> usize {
        NumField::ALL.iter().position(|&f| f == self).expect("every field is in ALL")
    }

    /// The plan file's value of this field, as the form shows it.
    fn text(self, file: &PlanFile) -> String {
        match self {
            NumField::DevicesPerNode => {
                file.cluster.devices_per_node.map(|n| n.to_string()).unwrap_or_default()
            }
            NumField::ScaleUp => file.cluster.scale_up_domain.map(|n| n.to_string()).unwrap_or_default(),
            NumField::LayersRatio => file.recompute.layers_ratio.to_string(),
            NumField::LoraDropout => file.lora.dropout.to_string(),
            NumField::GpuMemoryUtilization => file.rl.gpu_memory_utilization.to_string(),
            NumField::MemoryMargin => {
                file.overheads.allocator_reserve.map(|x| x.to_string()).unwrap_or_default()
            }
            NumField::MoeImbalance => file.moe.imbalance.to_string(),
            NumField::MoeCapacity => file.moe.capacity_factor.map(|x| x.to_string()).unwrap_or_default(),
            NumField::NvmeRead => file.cluster.nvme_read_gb_per_s.map(|x| x.to_string()).unwrap_or_default(),
            NumField::NvmeWrite => {
                file.cluster.nvme_write_gb_per_s.map(|x| x.to_string()).unwrap_or_default()
            }
            f => match (f.kind(), f.read(file)) {
                (NumKind::Auto, Some(0)) | (_, None) => String::new(),
                (_, Some(n)) => n.to_string(),
            },
        }
    }

    /// Writes the field's text into the plan file; false when the text is not what the field takes.
    fn apply(self, file: &mut PlanFile, text: &str) -> bool {
        match (self, self.kind(), text) {
            (NumField::DevicesPerNode | NumField::ScaleUp, _, "") => self.write(file, None),
            (_, NumKind::Auto, "") => self.write(file, Some(0)),
            (NumField::LayersRatio, _, _) => match parse_fraction(text) {
                Some(x) => file.recompute.layers_ratio = x,
                None => return false,
            },
            (NumField::LoraDropout, _, _) => {
                match text.trim().parse::<f64>().ok().filter(|x| x.is_finite() && (0.0..=0.9).contains(x)) {
                    Some(x) => file.lora.dropout = x,
                    None => return false,
                }
            }
            (NumField::MemoryMargin, _, "") => file.overheads.allocator_reserve = None,
            (NumField::MemoryMargin, _, _) => {
                match text.trim().parse::<f64>().ok().filter(|x| x.is_finite() && (0.0..=0.5).contains(x)) {
                    Some(x) => file.overheads.allocator_reserve = Some(x),
                    None => return false,
                }
            }
            (NumField::MoeCapacity, _, "") => file.moe.capacity_factor = None,
            (NumField::MoeCapacity, _, _) => match parse_factor(text).filter(|&x| 0.0 < x) {
                Some(x) => file.moe.capacity_factor = Some(x),
                None => return false,
            },
            (NumField::MoeImbalance, _, _) => match parse_factor(text).filter(|&x| 1.0 <= x) {
                Some(x) => file.moe.imbalance = x,
                None => return false,
            },
            (NumField::NvmeRead | NumField::NvmeWrite, _, text) => {
                let rate = match text.trim() {
                    "" => None,
                    text => {
                        match text.parse::<f64>().ok().filter(|x| {
                            x.is_finite() && 0.0 < *x && *x <= trainplan_core::plan::NVME_GB_PER_S_MAX
                        }) {
                            Some(x) => Some(x),
                            None => return false,
                        }
                    }
                };
                match self {
                    NumField::NvmeRead => file.cluster.nvme_read_gb_per_s = rate,
                    _ => file.cluster.nvme_write_gb_per_s = rate,
                }
            }
            (NumField::GpuMemoryUtilization, _, _) => match parse_fraction(text) {
                Some(x) => file.rl.gpu_memory_utilization = x,
                None => return false,
            },
            (_, NumKind::Auto, _) => match parse_whole(text) {
                Some(n) => self.write(file, Some(n)),
                None => return false,
            },
            (_, _, _) => match parse_count(text) {
                Some(n) => self.write(file, Some(n)),
                None => return false,
            },
        }
        true
    }

    /// The plan file's whole-number value of this field (fractions have none).
    fn read(self, file: &PlanFile) -> Option<u32> {
        Some(match self {
            NumField::Nodes => file.cluster.nodes,
            NumField::DevicesPerNode => return file.cluster.devices_per_node,
            NumField::ScaleUp => return file.cluster.scale_up_domain,
            NumField::LoraRank => file.lora.rank,
            NumField::FreezeLayers => file.freeze_layers,
            NumField::LowRankRank => file.low_rank.rank,
            NumField::Tp => file.parallel.tp,
            NumField::Pp => file.parallel.pp,
            NumField::Vpp => file.parallel.vpp,
            NumField::Cp => file.parallel.cp,
            NumField::Ep => file.parallel.ep,
            NumField::MicroBatch => file.batch.micro_batch,
            NumField::GlobalBatch => file.batch.global_batch,
            NumField::SeqLen => file.batch.seq_len,
            NumField::MeanSeqLen => file.batch.mean_seq_len,
            NumField::ImageTokens => file.batch.image_tokens,
            NumField::RecomputeLayers => file.recompute.num_layers,
            NumField::ActFnLayers => file.recompute.activation_function_layers,
            NumField::CpuOffloadLayers => file.recompute.cpu_offload_layers,
            NumField::RolloutTp => file.rl.rollout_tp,
            NumField::RolloutEp => file.rl.rollout_ep,
            NumField::Samples => file.rl.n_samples_per_prompt,
            NumField::PromptLen => file.rl.max_prompt_length,
            NumField::ResponseLen => file.rl.max_response_length,
            NumField::MeanPromptLen => file.rl.mean_prompt_length,
            NumField::MeanResponseLen => file.rl.mean_response_length,
            NumField::MiniBatch => file.rl.mini_batch,
            NumField::TokenBudget => file.rl.max_tokens_per_device,
            NumField::MaxNumSeqs => file.rl.max_num_seqs,
            NumField::LogProbMicroBatch => file.rl.log_prob_micro_batch,
            NumField::LogProbTokens => file.rl.log_prob_max_tokens_per_device,
            NumField::MaxModelLen => file.rl.max_model_len,
            NumField::BatchedTokens => file.rl.max_num_batched_tokens,
            NumField::MtpLayers => file.mtp_layers,
            NumField::ZeroHpz => file.parallel.zero_hpz_partition_size,
            NumField::LayersRatio
            | NumField::LoraDropout
            | NumField::GpuMemoryUtilization
            | NumField::MemoryMargin
            | NumField::MoeImbalance
            | NumField::MoeCapacity
            | NumField::NvmeRead
            | NumField::NvmeWrite => return None,
        })
    }

    fn write(self, file: &mut PlanFile, value: Option<u32>) {
        let n = value.unwrap_or(1);
        match self {
            NumField::Nodes => file.cluster.nodes = n,
            NumField::DevicesPerNode => file.cluster.devices_per_node = value,
            NumField::ScaleUp => file.cluster.scale_up_domain = value,
            NumField::LoraRank => file.lora.rank = n,
            NumField::FreezeLayers => file.freeze_layers = n,
            NumField::LowRankRank => file.low_rank.rank = n,
            NumField::Tp => file.parallel.tp = n,
            NumField::Pp => file.parallel.pp = n,
            NumField::Vpp => file.parallel.vpp = n,
            NumField::Cp => file.parallel.cp = n,
            NumField::Ep => file.parallel.ep = n,
            NumField::MicroBatch => file.batch.micro_batch = n,
            NumField::GlobalBatch => file.batch.global_batch = n,
            NumField::SeqLen => file.batch.seq_len = n,
            NumField::MeanSeqLen => file.batch.mean_seq_len = value.unwrap_or(0),
            NumField::ImageTokens => file.batch.image_tokens = value.unwrap_or(0),
            NumField::RecomputeLayers => file.recompute.num_layers = n,
            NumField::ActFnLayers => file.recompute.activation_function_layers = value.unwrap_or(0),
            NumField::CpuOffloadLayers => file.recompute.cpu_offload_layers = value.unwrap_or(0),
            NumField::RolloutTp => file.rl.rollout_tp = n,
            NumField::RolloutEp => file.rl.rollout_ep = n,
            NumField::Samples => file.rl.n_samples_per_prompt = n,
            NumField::PromptLen => file.rl.max_prompt_length = n,
            NumField::ResponseLen => file.rl.max_response_length = n,
            NumField::MeanPromptLen => file.rl.mean_prompt_length = value.unwrap_or(0),
            NumField::MeanResponseLen => file.rl.mean_response_length = value.unwrap_or(0),
            NumField::MiniBatch => file.rl.mini_batch = value.unwrap_or(0),
            NumField::TokenBudget => file.rl.max_tokens_per_device = value.unwrap_or(0),
            NumField::MaxNumSeqs => file.rl.max_num_seqs = n,
            NumField::LogProbMicroBatch => file.rl.log_prob_micro_batch = value.unwrap_or(0),
            NumField::LogProbTokens => file.rl.log_prob_max_tokens_per_device = value.unwrap_or(0),
            NumField::MaxModelLen => file.rl.max_model_len = value.unwrap_or(0),
            NumField::BatchedTokens => file.rl.max_num_batched_tokens = value.unwrap_or(0),
            NumField::MtpLayers => file.mtp_layers = value.unwrap_or(0),
            NumField::ZeroHpz => file.parallel.zero_hpz_partition_size = n,
            NumField::LayersRatio
            | NumField::LoraDropout
            | NumField::GpuMemoryUtilization
            | NumField::MemoryMargin
            | NumField::MoeImbalance
            | NumField::MoeCapacity
            | NumField::NvmeRead
            | NumField::NvmeWrite => {}
        }
    }

    /// The field's label on the page.
    pub fn label(self) -> crate::i18n::Key {
        use crate::i18n::Key;
        match self {
            NumField::Nodes => Key::plan_form_nodes,
            NumField::DevicesPerNode => Key::plan_form_devices_per_node,
            NumField::MemoryMargin => Key::plan_form_margin,
            NumField::ScaleUp => Key::plan_form_scale_up,
            NumField::LoraRank => Key::training_lora_rank,
            NumField::FreezeLayers => Key::training_freeze_layers,
            NumField::LowRankRank => Key::training_low_rank_rank,
            NumField::LoraDropout => Key::training_lora_dropout,
            NumField::MicroBatch => Key::batch_micro,
            NumField::GlobalBatch => Key::batch_global,
            NumField::SeqLen => Key::batch_seq,
            NumField::MeanSeqLen => Key::batch_mean_seq,
            NumField::ImageTokens => Key::batch_image_tokens,
            NumField::Tp => Key::par_tp,
            NumField::Pp => Key::par_pp,
            NumField::Vpp => Key::par_vpp,
            NumField::Cp => Key::par_cp,
            NumField::Ep => Key::par_ep,
            NumField::MtpLayers => Key::mtp_layers,
            NumField::ZeroHpz => Key::par_zero_hpz,
            NumField::RecomputeLayers => Key::rc_layers,
            NumField::ActFnLayers => Key::rc_act_fn_layers,
            NumField::CpuOffloadLayers => Key::rc_cpu_offload_layers,
            NumField::LayersRatio => Key::rc_layers_ratio,
            NumField::RolloutTp => Key::rl_rollout_tp,
            NumField::RolloutEp => Key::rl_rollout_ep,
            NumField::Samples => Key::rl_samples,
            NumField::MiniBatch => Key::rl_mini_batch,
            NumField::PromptLen => Key::rl_prompt_len,
            NumField::ResponseLen => Key::rl_response_len,
            NumField::MeanPromptLen => Key::rl_mean_prompt_len,
            NumField::MeanResponseLen => Key::rl_mean_response_len,
            NumField::TokenBudget => Key::rl_token_budget,
            NumField::GpuMemoryUtilization => Key::rl_gpu_mem,
            NumField::MaxNumSeqs => Key::rl_max_num_seqs,
            NumField::LogProbMicroBatch => Key::rl_log_prob_micro,
            NumField::LogProbTokens => Key::rl_log_prob_tokens,
            NumField::MaxModelLen => Key::rl_max_model_len,
            NumField::BatchedTokens => Key::rl_batched_tokens,
            NumField::MoeImbalance => Key::moe_imbalance,
            NumField::MoeCapacity => Key::moe_capacity,
            NumField::NvmeRead => Key::par_nvme_read,
            NumField::NvmeWrite => Key::par_nvme_write,
        }
    }

    /// The field's label for a plan of `framework`: the token budget is each device's on VeRL
    /// (`ppo_max_token_len_per_gpu`) and a packed row's on MindSpeed-RL (`max_packing_token_size`,
    /// which its CP group splits), and the log-probabilities' batching is named by each one's keys
    /// (VeRL's per device, MindSpeed-RL's per role); every other field is [`NumField::label`], which
    /// the findings' and the advice's changes use whatever the framework.
    pub fn label_in(self, framework: Framework) -> crate::i18n::Key {
        use crate::i18n::Key;
        match (self, framework) {
            (NumField::TokenBudget, Framework::Verl) => Key::rl_token_budget_device,
            (NumField::TokenBudget, Framework::MindSpeedRl) => Key::rl_token_budget_row,
            (NumField::LogProbMicroBatch, Framework::Verl | Framework::VerlMegatron) => {
                Key::rl_log_prob_micro_device
            }
            (NumField::LogProbTokens, Framework::Verl | Framework::VerlMegatron) => {
                Key::rl_log_prob_tokens_device
            }
            (NumField::LogProbMicroBatch, Framework::MindSpeedRl) => Key::rl_log_prob_micro_forward,
            (NumField::LogProbTokens, Framework::MindSpeedRl) => Key::rl_log_prob_tokens_row,
            _ => self.label(),
        }
    }

    /// The plan file's field, as core errors and fixes name it.
    pub fn field(self) -> Field {
        match self {
            NumField::Nodes => Field::ClusterNodes,
            NumField::DevicesPerNode => Field::ClusterDevicesPerNode,
            NumField::LoraRank => Field::LoraRank,
            NumField::FreezeLayers => Field::FreezeLayers,
            NumField::LowRankRank => Field::LowRankRank,
            NumField::LoraDropout => Field::LoraDropout,
            NumField::Tp => Field::ParallelTp,
            NumField::Pp => Field::ParallelPp,
            NumField::Vpp => Field::ParallelVpp,
            NumField::Cp => Field::ParallelCp,
            NumField::Ep => Field::ParallelEp,
            NumField::MicroBatch => Field::BatchMicroBatch,
            NumField::GlobalBatch => Field::BatchGlobalBatch,
            NumField::SeqLen => Field::BatchSeqLen,
            NumField::MeanSeqLen => Field::BatchMeanSeqLen,
            NumField::ImageTokens => Field::BatchImageTokens,
            NumField::RecomputeLayers => Field::RecomputeNumLayers,
            NumField::ActFnLayers => Field::RecomputeActivationFunctionLayers,
            NumField::CpuOffloadLayers => Field::RecomputeCpuOffloadLayers,
            NumField::LayersRatio => Field::RecomputeLayersRatio,
            NumField::RolloutTp => Field::RlRolloutTp,
            NumField::RolloutEp => Field::RlRolloutEp,
            NumField::Samples => Field::RlNSamplesPerPrompt,
            NumField::PromptLen => Field::RlMaxPromptLength,
            NumField::ResponseLen => Field::RlMaxResponseLength,
            NumField::MeanPromptLen => Field::RlMeanPromptLength,
            NumField::MeanResponseLen => Field::RlMeanResponseLength,
            NumField::MiniBatch => Field::RlMiniBatch,
            NumField::TokenBudget => Field::RlMaxTokensPerDevice,
            NumField::GpuMemoryUtilization => Field::RlGpuMemoryUtilization,
            NumField::MaxNumSeqs => Field::RlMaxNumSeqs,
            NumField::LogProbMicroBatch => Field::RlLogProbMicroBatch,
            NumField::LogProbTokens => Field::RlLogProbMaxTokensPerDevice,
            NumField::MaxModelLen => Field::RlMaxModelLen,
            NumField::BatchedTokens => Field::RlMaxNumBatchedTokens,
            NumField::MemoryMargin => Field::OverheadsAllocatorReserve,
            NumField::ScaleUp => Field::ClusterScaleUpDomain,
            NumField::MtpLayers => Field::MtpLayers,
            NumField::ZeroHpz => Field::ParallelZeroHpz,
            NumField::MoeImbalance => Field::MoeImbalance,
            NumField::MoeCapacity => Field::MoeCapacityFactor,
            NumField::NvmeRead => Field::ClusterNvmeReadGbPerS,
            NumField::NvmeWrite => Field::ClusterNvmeWriteGbPerS,
        }
    }
}

/// A custom device's figures, as typed.
#[derive(Clone, Debug, PartialEq)]
pub struct CustomForm {
    /// Display name.
    pub name: String,
    /// Memory, GB.
    pub memory_gb: String,
    /// Dense bf16 TFLOPS.
    pub bf16_tflops: String,
    /// Memory bandwidth, TB/s.
    pub memory_tb_per_s: String,
    /// Intra-node link, GB/s.
    pub intra_node_gb_per_s: String,
    /// Network, Gb/s.
    pub inter_node_gbit_per_s: String,
    /// The figures the form does not show (vendor, fp16, fp8, devices per node), kept as they came.
    pub base: CustomDevice,
}

impl Default for CustomForm {
    /// An H100 SXM's datasheet figures: a sensible place to start editing.
    fn default() -> Self {
        CustomForm::from_device(&CustomDevice {
            name: "custom device".to_owned(),
            vendor: "other".to_owned(),
            memory_gb: 80.0,
            bf16_tflops: 989.0,
            fp16_tflops: None,
            fp8_tflops: 0.0,
            fp4_tflops: None,
            memory_tb_per_s: 3.35,
            intra_node_gb_per_s: 900.0,
            inter_node_gbit_per_s: 400.0,
            devices_per_node: 8,
            scale_up_domain: None,
            gemm_efficiency_max: None,
            board_power_w: None,
        })
    }
}

/// A field of the form that holds something the plan cannot use.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FormField {
    /// The model (an unknown id or an unreadable config).
    Model,
    /// The hardware choice.
    Hardware,
    /// A typed whole number.
    Number(NumField),
    /// One of the custom device's figures.
    Custom(CustomField),
    /// The pipeline layout string.
    PipelineLayout,
}

/// The custom device's fields.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[allow(missing_docs)]
pub enum CustomField {
    Name,
    MemoryGb,
    Bf16Tflops,
    MemoryTbPerS,
    IntraNodeGbPerS,
    InterNodeGbitPerS,
}

/// Why the form is not a plan: the fields to mark, and the core's reason when it has one.
#[derive(Clone, Debug, PartialEq)]
pub struct FormError {
    /// Fields holding unusable text, in form order.
    pub fields: Vec<FormField>,
    /// The core's refusal, when the text parsed but the plan is invalid.
    pub plan: Option<PlanFileError>,
}

impl PlanForm {
    /// The form a first visit shows: the core's default plan.
    pub fn first_visit() -> PlanForm {
        PlanForm::from_plan(&Plan::first_visit())
    }

    /// The form showing a plan (from a permalink or saved state).
    pub fn from_plan(plan: &Plan) -> PlanForm {
        let file = plan.to_file();
        let (custom, custom_hardware) = match &plan.hardware.spec {
            HardwareSpec::Custom(c) => (CustomForm::from_device(c), true),
            HardwareSpec::Catalog(_) => (CustomForm::default(), false),
        };
        let numbers = NumField::ALL.iter().map(|f| f.text(&file)).collect();
        PlanForm { numbers, custom, custom_hardware, file }
    }

    /// The text of a number field.
    pub fn number(&self, field: NumField) -> &str {
        &self.numbers[field.idx()]
    }

    /// Sets the text of a number field.
    pub fn set_number(&mut self, field: NumField, text: String) {
        self.numbers[field.idx()] = text;
    }

    /// The catalog id of the chosen model, if it is one.
    pub fn model_id(&self) -> Option<&str> {
        match &self.file.model {
            ModelField::Id(id) => Some(id),
            ModelField::Config { .. } => None,
        }
    }

    /// The plan the form describes, or what stops it.
    ///
    /// # Errors
    ///
    /// A [`FormError`] naming the fields whose text is unusable, or carrying the core's reason.
    pub fn to_plan(&self) -> Result<Plan, FormError> {
        let mut bad = Vec::new();
        let mut file = self.file.clone();
        for field in NumField::ALL {
            if !field.apply(&mut file, self.number(field).trim()) {
                bad.push(FormField::Number(field));
            }
        }
        if self.custom_hardware {
            match self.custom.to_device() {
                Ok(device) => file.hardware = HardwareField::Custom { custom: device },
                Err(fields) => bad.extend(fields.into_iter().map(FormField::Custom)),
            }
        }
        if !bad.is_empty() {
            return Err(FormError { fields: bad, plan: None });
        }
        Plan::from_file(&file).map_err(|err| FormError { fields: vec![field_of(&err)], plan: Some(err) })
    }

    /// The form with the model changed to a catalog id.
    pub fn with_catalog_model(mut self, id: &str) -> PlanForm {
        self.file.model = ModelField::Id(id.to_owned());
        self
    }
}

impl CustomForm {
    /// The fields showing a device's figures.
    pub fn from_device(c: &CustomDevice) -> CustomForm {
        CustomForm {
            name: c.name.clone(),
            memory_gb: c.memory_gb.to_string(),
            bf16_tflops: c.bf16_tflops.to_string(),
            memory_tb_per_s: c.memory_tb_per_s.to_string(),
            intra_node_gb_per_s: c.intra_node_gb_per_s.to_string(),
            inter_node_gbit_per_s: c.inter_node_gbit_per_s.to_string(),
            base: c.clone(),
        }
    }

    /// The device the fields describe; each figure is range-checked again by the core.
    fn to_device(&self) -> Result<CustomDevice, Vec<CustomField>> {
        let mut bad = Vec::new();
        let mut number = |text: &str, field| match text.trim().parse::<f64>() {
            Ok(x) if x.is_finite() && 0.0 <= x => x,
            _ => {
                bad.push(field);
                0.0
            }
        };
        let device = CustomDevice {
            name: self.name.trim().to_owned(),
            memory_gb: number(&self.memory_gb, CustomField::MemoryGb),
            bf16_tflops: number(&self.bf16_tflops, CustomField::Bf16Tflops),
            memory_tb_per_s: number(&self.memory_tb_per_s, CustomField::MemoryTbPerS),
            intra_node_gb_per_s: number(&self.intra_node_gb_per_s, CustomField::IntraNodeGbPerS),
            inter_node_gbit_per_s: number(&self.inter_node_gbit_per_s, CustomField::InterNodeGbitPerS),
            ..self.base.clone()
        };
        if device.name.is_empty() {
            bad.insert(0, CustomField::Name);
        }
        match bad.is_empty() {
            true => Ok(device),
            false => Err(bad),
        }
    }
}

/// The form field a core refusal is about.
fn field_of(err: &PlanFileError) -> FormField {
    match err {
        PlanFileError::UnknownModel(_) | PlanFileError::Config(_) => FormField::Model,
        PlanFileError::UnknownHardware(_) => FormField::Hardware,
        PlanFileError::OutOfRange { field, .. } => {
            if let Some(&num) = NumField::ALL.iter().find(|f| f.field() == *field) {
                return FormField::Number(num);
            }
            match field {
                Field::HardwareCustomName => FormField::Custom(CustomField::Name),
                Field::HardwareCustomMemoryGb => FormField::Custom(CustomField::MemoryGb),
                Field::HardwareCustomBf16Tflops | Field::HardwareCustomFp16Tflops => {
                    FormField::Custom(CustomField::Bf16Tflops)
                }
                Field::HardwareCustomMemoryTbPerS => FormField::Custom(CustomField::MemoryTbPerS),
                Field::HardwareCustomIntraNodeGbPerS => FormField::Custom(CustomField::IntraNodeGbPerS),
                Field::HardwareCustomInterNodeGbitPerS => FormField::Custom(CustomField::InterNodeGbitPerS),
                Field::ParallelPipelineLayout => FormField::PipelineLayout,
                // The custom device's figures the form has no box for (they come from a file).
                Field::HardwareCustomVendor
                | Field::HardwareCustomFp8Tflops
                | Field::HardwareCustomFp4Tflops
                | Field::HardwareCustomDevicesPerNode
                | Field::HardwareCustomScaleUpDomain
                | Field::HardwareCustomBoardPowerW
                | Field::HardwareCustomGemmEfficiencyMax => FormField::Hardware,
                _ => FormField::Model,
            }
        }
        _ => FormField::Model,
    }
}

/// A count of at least 1; surrounding spaces and `_`/`,` digit separators are accepted.
fn parse_count(text: &str) -> Option<u32> {
    parse_whole(text).filter(|&n| 0 < n)
}

/// A whole number, 0 included, with `_` or `,` as digit separators.
fn parse_whole(text: &str) -> Option<u32> {
    let digits: String = text.trim().chars().filter(|ch| !matches!(ch, '_' | ',')).collect();
    digits.parse::<u32>().ok()
}

/// A factor: a finite number at most 64 (the plan file's bound on `moe` factors).
fn parse_factor(text: &str) -> Option<f64> {
    text.trim().parse::<f64>().ok().filter(|x| x.is_finite() && *x <= 64.0)
}

/// A fraction in (0, 1].
fn parse_fraction(text: &str) -> Option<f64> {
    text.trim().parse::<f64>().ok().filter(|x| x.is_finite() && 0.0 < *x && *x <= 1.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn form() -> PlanForm {
        PlanForm::first_visit()
    }

    #[test]
    fn the_first_visit_is_the_default_plan() {
        assert_eq!(form().to_plan().unwrap(), Plan::first_visit());
        assert_eq!(form().number(NumField::DevicesPerNode), "", "the hardware's count is not pinned");
        assert_eq!(form().number(NumField::SeqLen), "4096");
    }

    #[test]
    fn counts_are_read_leniently() {
        let mut f = form();
        f.set_number(NumField::Nodes, " 2 ".to_owned());
        f.set_number(NumField::DevicesPerNode, "1,024".to_owned());
        assert_eq!(f.to_plan().unwrap().cluster.n_devices(), 2_048);
    }

    #[test]
    fn each_bad_field_is_named() {
        let mut f = form();
        f.set_number(NumField::Nodes, "0".to_owned());
        f.set_number(NumField::DevicesPerNode, "x".to_owned());
        f.set_number(NumField::LoraRank, "-8".to_owned());
        f.set_number(NumField::SeqLen, "4k".to_owned());
        let err = f.to_plan().unwrap_err();
        let expected: Vec<_> =
            [NumField::Nodes, NumField::DevicesPerNode, NumField::LoraRank, NumField::SeqLen]
                .into_iter()
                .map(FormField::Number)
                .collect();
        assert_eq!(err.fields, expected);
        let mut f = form().with_catalog_model("no-such-model");
        assert_eq!(f.to_plan().unwrap_err().fields, vec![FormField::Model]);
        f = form();
        f.custom_hardware = true;
        f.custom.memory_gb = "lots".to_owned();
        assert_eq!(f.to_plan().unwrap_err().fields, vec![FormField::Custom(CustomField::MemoryGb)]);
        f.custom.memory_gb = "0".to_owned();
        let err = f.to_plan().unwrap_err();
        assert_eq!(err.fields, vec![FormField::Custom(CustomField::MemoryGb)]);
        assert!(err.plan.is_some(), "the core says why 0 GB is refused");
    }

    #[test]
    fn the_token_budget_is_labelled_with_the_key_the_launch_files_set() {
        use crate::i18n::{Lang, t};
        // Each RL framework's label names the key its launch files carry the budget in.
        for (framework, key) in [
            (Framework::Verl, "ppo_max_token_len_per_gpu"),
            (Framework::MindSpeedRl, "max_packing_token_size"),
        ] {
            let mut file = form().file;
            (file.framework, file.method) = (framework, trainplan_core::plan::Method::Grpo);
            file.rl.dynamic_batch = true;
            let plan = Plan::from_file(&file).unwrap();
            let files = trainplan_core::emit::emit(&plan, "").unwrap();
            assert!(files.iter().any(|f| f.text.contains(key)), "{framework:?}'s launch files set {key}");
            let label = NumField::TokenBudget.label_in(framework);
            for lang in [Lang::En, Lang::Zh] {
                assert!(t(lang, label).contains(key), "{framework:?} {lang:?}: {}", t(lang, label));
            }
        }
        // Per device on VeRL, per packed row on MindSpeed-RL; elsewhere the field's own label.
        assert!(t(Lang::En, NumField::TokenBudget.label_in(Framework::Verl)).contains("per device"));
        assert!(
            t(Lang::En, NumField::TokenBudget.label_in(Framework::MindSpeedRl)).contains("per packed row")
        );
        assert_eq!(NumField::TokenBudget.label_in(Framework::Megatron), NumField::TokenBudget.label());
        assert_eq!(NumField::Tp.label_in(Framework::Verl), NumField::Tp.label());
    }

    #[test]
    fn auto_and_fraction_fields_read_as_their_kind() {
        let mut f = form();
        // Empty means automatic (0 in the plan); a number pins it.
        assert_eq!(f.number(NumField::MaxModelLen), "");
        f.set_number(NumField::MiniBatch, "32".to_owned());
        f.set_number(NumField::GpuMemoryUtilization, " 0.45 ".to_owned());
        f.set_number(NumField::LayersRatio, "0.5".to_owned());
        f.set_number(NumField::LoraDropout, "0.05".to_owned());
        let plan = f.to_plan().unwrap();
        assert_eq!((plan.rl.mini_batch, plan.rl.max_model_len), (32, 0));
        assert_eq!(plan.rl.gpu_memory_utilization_frac, 0.45);
        assert_eq!(plan.recompute.layers_ratio_frac, 0.5);
        assert_eq!(plan.lora.dropout, 0.05);
        // A fraction above 1, a negative budget, an empty count and a dropout past 0.9 are each named.
        f.set_number(NumField::GpuMemoryUtilization, "1.5".to_owned());
        f.set_number(NumField::TokenBudget, "-1".to_owned());
        f.set_number(NumField::RolloutTp, String::new());
        f.set_number(NumField::LoraDropout, "0.95".to_owned());
        let err = f.to_plan().unwrap_err();
        let expected: Vec<_> = [
            NumField::LoraDropout,
            NumField::RolloutTp,
            NumField::TokenBudget,
            NumField::GpuMemoryUtilization,
        ]
        .into_iter()
        .map(FormField::Number)
        .collect();
        assert_eq!(err.fields, expected);
        // Every RL knob survives the round trip through the form.
        let rl = Plan::from_json(
            r#"{"model": "qwen2.5-7b", "framework": "verl", "method": "grpo", "parallel": {"zero_stage": 3},
                "recompute": {"activation_function_layers": 3},
                "rl": {"rollout_tp": 2, "n_samples_per_prompt": 8, "max_prompt_length": 1024, "max_response_length": 4096,
                "mini_batch": 16, "dynamic_batch": true, "max_tokens_per_device": 20000, "remove_padding": false,
                "enforce_eager": true, "max_model_len": 6000, "max_num_batched_tokens": 9000, "blocking": false,
                "gpu_memory_utilization": 0.55, "max_num_seqs": 128}}"#,
        )
        .unwrap();
        assert_eq!(PlanForm::from_plan(&rl).to_plan().unwrap(), rl);
    }

    #[test]
    fn every_plan_shown_reads_back_as_itself() {
        for text in [
            r#"{"model": "deepseek-v3", "hardware": "ascend-910c", "cluster": {"nodes": 64}, "method": "pretrain",
               "framework": "mindspeed-llm", "parallel": {"tp": 8, "pp": 8, "vpp": 2, "ep": 64, "distributed_optimizer": true},
               "batch": {"micro_batch": 1, "global_batch": 4096, "seq_len": 4096},
               "recompute": {"granularity": "full", "method": "block", "num_layers": 2, "swap_attention": true}}"#,
            r#"{"model": "gpt2", "hardware": {"custom": {"name": "lab", "memory_gb": 24, "bf16_tflops": 80,
               "memory_tb_per_s": 1, "intra_node_gb_per_s": 64, "inter_node_gbit_per_s": 100,
               "devices_per_node": 16, "vendor": "ascend", "fp8_tflops": 10.5}},
               "cluster": {"devices_per_node": 4}, "lora": {"rank": 32}}"#,
            r#"{"model": {"hf_config": {"model_type": "llama", "vocab_size": 1000, "hidden_size": 64,
               "intermediate_size": 128, "num_hidden_layers": 2, "num_attention_heads": 4}}}"#,
        ] {
            let plan = Plan::from_json(text).unwrap();
            assert_eq!(PlanForm::from_plan(&plan).to_plan().unwrap(), plan, "{text}");
        }
    }
}
