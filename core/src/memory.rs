//! Memory per device: model states by parameter group and sharding, activations by layer and
//! pipeline stage, logits, communication buffers and runtime overheads. docs/memory.md derives
//! every term with its source.
//!
//! Two paths, as the frameworks allocate:
//! - the Megatron path (Megatron-LM, MindSpeed-LLM, MindSpeed-RL): fp32 main gradients, the
//!   distributed optimizer, TP/SP/CP/EP/PP sharding, fused kernels;
//! - the HF path (LLaMA-Factory, DeepSpeed, the VeRL FSDP actor): DeepSpeed ZeRO 0–3, HF modules
//!   whose saved tensors were measured (tools/hf_activations).
//!
//! Both add each term at its own peak. LLaMA-Factory without DeepSpeed (plain PyTorch) is known
//! moment by moment instead: its terms are those of the step's highest moment (`plain_torch_peak`,
//! measured on an H200 by tools/gpu_peak).

use crate::layout::Layout;
use crate::model::{self, Architecture, MlpKind};
use crate::plan::{
    AttentionImpl, Framework, Method, Plan, Precision, RecomputeGranularity, RecomputeMethod, ZeroStage,
};

/// Bytes per element of a bf16 (or fp16) tensor.
pub const BF16_BYTES: u64 = 2;

/// CUDA/CANN context, kernels and library workspaces per device, bytes.
/// Tier: community estimate (furiousteabag/vram-calculator `app/_lib/index.ts` counts 1000 MiB of
/// CUDA kernels and context).
pub const RUNTIME_CONTEXT_BYTES: u64 = 1000 << 20;

/// HCCL's buffer per communication group on Ascend, bytes: `HCCL_BUFFSIZE` defaults to 200 MB.
/// Tier: spec (CANN environment variable reference, `HCCL_BUFFSIZE`,
/// <https://www.hiascend.com/document/detail/zh/canncommercial/81RC1/apiref/envvar/envref_07_0080.html>).
pub const HCCL_BUFFER_BYTES: u64 = 200 << 20;

/// NCCL's buffers per communication group, bytes: `NCCL_BUFFSIZE` 4 MiB per channel, up to 32
/// channels over NVLink. Tier: derived from the NCCL environment variable defaults.
pub const NCCL_BUFFER_BYTES: u64 = 128 << 20;

/// Share of device memory the caching allocator loses to fragmentation and rounding.
/// Tier: community estimate (llm-cluster-simulator caps usable memory at 85–87 % of HBM, with
/// the runtime context counted apart: zhebrak/llm-cluster-simulator).
pub const ALLOCATOR_RESERVE_FRAC: f64 = 0.05;

/// Bytes per parameter of a 4-bit NF4 base with double quantization (QLoRA, Dettmers et al. 2023
/// §2: 4 bits + 8-bit absmax per 64 + fp32 per 256 blocks = 4.127 bits).
pub const NF4_BYTES_PER_PARAM: f64 = 4.127 / 8.0;

/// MindSpeed `--swap-optimizer-times`' default: the step brings the optimizer states back to the
/// device in this many slices (`swap_optimizer_feature.py`: "each swap will be moved
/// len(shard_fp32_from_float16) // swap_optimizer_times elements"; docs/features/swap-optimizer.md).
pub const SWAP_OPTIMIZER_TIMES: f64 = 16.0;

/// Memory of a plan, per pipeline stage and for the device at its peak.
#[derive(Clone, Debug, PartialEq)]
pub struct Memory {
    /// One entry per pipeline stage.
    pub stages: Vec<StageMemory>,
    /// RL only: the peak of each phase on the most loaded stage.
    pub phases: Vec<PhaseMemory>,
    /// RL only: the rollout engine's share of the device.
    pub rollout: Option<RolloutMemory>,
    /// Where the step peaks when its terms are those of one moment (`plain_torch_peak`); `None`
    /// where each term is counted at its own peak and the terms added.
    pub peak_moment: Option<PeakMoment>,
    /// The largest total of any stage or phase.
    pub peak_bytes: u64,
    /// Device memory.
    pub capacity_bytes: u64,
    /// What the framework can use: capacity less the allocator's reserve.
    pub usable_bytes: u64,
    /// Host memory each node needs for offloaded states.
    pub host_bytes_per_node: u64,
    /// Data parallel size: devices ÷ (tp · pp · cp).
    pub dp: u64,
    /// Micro-batches per step and pipeline: the step's samples ÷ (micro batch · dp), the samples
    /// being the global batch, or with RL its prompts × responses per prompt ([`step_samples`]).
    pub n_microbatches: u64,
    /// The model's parameters, for callers that need them with the memory.
    pub params_total: u64,
    /// Parameters a token passes through.
    pub params_active: u64,
    /// LoRA adapter parameters the method trains (0 unless LoRA or QLoRA).
    pub params_lora: u64,
    /// Where every layer runs, as memory counted it (time reads the same).
    pub layout: Layout,
}

/// One pipeline stage's memory on one device, bytes.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct StageMemory {
    /// Decoder layers on this stage.
    pub n_layers: u64,
    /// Parameters this device computes with on this stage (after TP and EP, before ZeRO or FSDP
    /// sharding): what its gradients and optimizer step cover.
    pub params: u64,
    /// Parameters held on this device (after TP/EP/ZeRO sharding).
    pub weights_bytes: u64,
    /// Gradients.
    pub gradients_bytes: u64,
    /// Optimizer states (fp32 master weights and Adam moments).
    pub optimizer_bytes: u64,
    /// Activations saved for backward, all micro-batches in flight.
    pub activations_bytes: u64,
    /// Logits and loss (last stage).
    pub logits_bytes: u64,
    /// Communication buffers and ZeRO-3 gathered parameters.
    pub buffers_bytes: u64,
    /// Runtime context.
    pub overhead_bytes: u64,
    /// Activations of one micro-batch that wait in host memory (Megatron
    /// `--cpu-offloading-num-layers`): sent after each offloaded layer's forward, fetched before
    /// its backward. Not part of the device's total.
    pub offloaded_activations_bytes: u64,
}

impl StageMemory {
    /// Every term added up.
    pub fn total(&self) -> u64 {
        [
            self.weights_bytes,
            self.gradients_bytes,
            self.optimizer_bytes,
            self.activations_bytes,
            self.logits_bytes,
            self.buffers_bytes,
            self.overhead_bytes,
        ]
        .into_iter()
        .fold(0, u64::saturating_add)
    }
}

/// The moment of a plain PyTorch step whose allocations a stage's terms are.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PeakMoment {
    /// The loss in forward: autocast's weight copies, the saved activations, the logits.
    Forward,
    /// The loss's backward: the saved activations, the log-softmax and its gradients.
    LossBackward,
    /// The end of backward: every gradient.
    BackwardEnd,
    /// The last layer's backward behind Liger's fused loss: the saved activations, that layer
    /// recomputed and the hidden state's gradient the loss left; no logits.
    LayerBackward,
}

impl PeakMoment {
    /// The moment's name as the report writes it.
    pub fn name(self) -> &'static str {
        match self {
            PeakMoment::Forward => "forward",
            PeakMoment::LossBackward => "loss_backward",
            PeakMoment::BackwardEnd => "backward_end",
            PeakMoment::LayerBackward => "layer_backward",
        }
    }
}

/// An RL phase's peak.
#[derive(Clone, Debug, PartialEq)]
pub struct PhaseMemory {
    /// `rollout`, `log_prob` or `update`.
    pub phase: &'static str,
    /// Bytes at the phase's peak.
    pub total: u64,
    /// What makes up `total`, as (part, bytes), non-zero parts only: the actor's `weights`,
    /// `gradients`, `optimizer`, `activations`, `logits`, `buffers`, `overhead`, and the
    /// `reference`, `critic` and rollout `engine` beside it.
    pub parts: Vec<(&'static str, u64)>,
}

/// The rollout engine (vLLM/SGLang) on one device, bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RolloutMemory {
    /// What the engine reserves: `gpu_memory_utilization` of the device.
    pub engine_bytes: u64,
    /// Its copy of the weights, bf16, sharded over the rollout TP (the routed experts over its EP).
    pub weights_bytes: u64,
    /// Of which the routed experts' (0 for a dense model).
    pub experts_bytes: u64,
    /// What is left of the reservation for the KV cache.
    pub kv_cache_bytes: u64,
    /// The KV cache `max_num_seqs` sequences of `max_prompt_length + max_response_length` need.
    pub kv_cache_needed_bytes: u64,
}

/// Which allocation rules a framework follows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Path {
    /// Megatron-LM and the MindSpeed frameworks: fp32 main gradients in mixed precision.
    Megatron,
    /// DeepSpeed and the frameworks over it (LLaMA-Factory, VeRL's FSDP): 16-bit gradients.
    Hf,
}

/// Which linear modules the framework's LoRA wraps: Megatron's every one, PEFT's over HF's
/// modules no routed expert ([`model::LoraScope`]).
pub fn lora_scope(framework: Framework) -> model::LoraScope {
    match path(framework) {
        Path::Megatron => model::LoraScope::Megatron,
        Path::Hf => model::LoraScope::Hf,
    }
}

/// The allocation rules `framework` follows.
pub fn path(framework: Framework) -> Path {
    match crate::layout::model_parallel(framework) {
        true => Path::Megatron,
        false => Path::Hf,
    }
}

/// Bytes per parameter of each model state, before sharding.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct StateBytes {
    /// Weights.
    pub weights: f64,
    /// Gradients.
    pub gradients: f64,
    /// Optimizer states.
    pub optimizer: f64,
}

/// Bytes per trainable parameter with Adam.
///
/// Sources: ZeRO (Rajbhandari et al. 2020, §3.1): mixed precision keeps fp16 weights and gradients
/// (2 + 2) and K = 12 bytes of fp32 master weights, momentum and variance. Megatron-LM
/// `docs/source/api-guide/dist_optimizer.md` table: bf16 weights with fp32 main gradients are
/// 2 + 4 + 12 = 18 bytes; fp16 weights with fp16 gradients 2 + 2 + 16 = 20 (the optimizer also keeps
/// fp32 main gradients); fp32 throughout 4 + 4 + 8 = 16.
pub fn state_bytes(path: Path, precision: Precision) -> StateBytes {
    let (weights, gradients, optimizer) = match (path, precision) {
        (_, Precision::Fp32) => (4.0, 4.0, 8.0),
        (Path::Megatron, Precision::Bf16 | Precision::Fp8 | Precision::Mxfp8 | Precision::Nvfp4) => {
            (2.0, 4.0, 12.0)
        }
        (Path::Megatron, Precision::Fp16) => (2.0, 2.0, 16.0),
        (Path::Hf, _) => (2.0, 2.0, 12.0),
    };
    StateBytes { weights, gradients, optimizer }
}

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

/// The plan's shape, derived once.
struct Ctx<'a> {
    plan: &'a Plan,
    arch: &'a Architecture,
    summary: &'a model::Summary,
    /// LoRA adapter parameters of the whole model for the plan's rank and targets.
    lora_params: u64,
    /// The adapted linear modules outside the routed experts: (Σ input widths, count).
    lora_inputs: (u64, u64),
    path: Path,
    tp: u64,
    pp: u64,
    vpp: u64,
    cp: u64,
    ep: u64,
    etp: u64,
    dp: u64,
    edp: u64,
    m: u64,
    /// The step runs under plain PyTorch ([`plain_torch`]): its terms are its peak moment's.
    plain_torch: bool,
}

/// The samples a step trains on: the global batch, or with RL (GRPO, PPO) every response sampled for
/// its prompts, which the actor's update splits over DP in micro-batches: VeRL normalizes
/// `ppo_mini_batch_size × n` by the data-parallel size (`verl/workers/fsdp_workers.py`,
/// `ActorRolloutRefWorker.__init__`), MindSpeed-RL takes `global_batch_size // dp × n_samples` per
/// rank in micro-batches (`mindspeed_rl/config_cls/validate_config.py`, `_validate_data_parallel`).
pub fn step_samples(plan: &Plan) -> u64 {
    let prompts = u64::from(plan.batch.global_batch.get());
    match matches!(plan.method, Method::Grpo | Method::Ppo) {
        true => prompts.saturating_mul(u64::from(plan.rl.n_samples_per_prompt.get())),
        false => prompts,
    }
}

/// Estimates the memory of a plan. Never fails; degrees that do not divide the cluster are rounded
/// down here and reported as findings by the rules.
pub fn estimate(plan: &Plan) -> Memory {
    estimate_with(plan, &ModelFacts::recent(plan))
}

/// What memory needs from a plan's model and method, counted once: a search evaluates thousands of
/// plans of one model, and counting its tensors is most of an estimate's work.
#[derive(Clone, Debug, PartialEq)]
pub struct ModelFacts {
    summary: model::Summary,
    lora_params: u64,
    /// The adapted linear modules outside the routed experts: (Σ input widths, count).
    lora_inputs: (u64, u64),
}

impl ModelFacts {
    /// Counts the plan's model (and its LoRA adapters when the method trains them).
    pub fn of(plan: &Plan) -> ModelFacts {
        let arch = &plan.model.arch;
        let (lora_params, lora_inputs) = match plan.trains_lora() {
            true => {
                let (targets, scope) = (plan.lora.targets.list(), lora_scope(plan.framework));
                let rank = u64::from(plan.lora.rank.get());
                (
                    model::lora_params(arch, rank, &targets, scope),
                    model::lora_dense_inputs(arch, &targets, scope),
                )
            }
            false => (0, (0, 0)),
        };
        ModelFacts { summary: model::Summary::of(arch), lora_params, lora_inputs }
    }

    /// [`ModelFacts::of`], kept for the next plan of the same model, method, adapters and LoRA scope
    /// (a page's edits and a search's plans change everything but those).
    pub fn recent(plan: &Plan) -> std::rc::Rc<ModelFacts> {
        type Key = (Architecture, bool, u32, crate::plan::LoraTargets, model::LoraScope);
        thread_local! {
            static RECENT: std::cell::RefCell<Option<(Key, std::rc::Rc<ModelFacts>)>> =
                const { std::cell::RefCell::new(None) };
        }
        let lora = plan.trains_lora();
        let same = |key: &Key| {
            key.0 == plan.model.arch
                && key.1 == lora
                && key.2 == plan.lora.rank.get()
                && key.3 == plan.lora.targets
                && key.4 == lora_scope(plan.framework)
        };
        RECENT.with(|recent| {
            let mut recent = recent.borrow_mut();
            match &*recent {
                Some((key, facts)) if same(key) => std::rc::Rc::clone(facts),
                _ => {
                    let facts = std::rc::Rc::new(ModelFacts::of(plan));
                    let key = (
                        plan.model.arch.clone(),
                        lora,
                        plan.lora.rank.get(),
                        plan.lora.targets.clone(),
                        lora_scope(plan.framework),
                    );
                    *recent = Some((key, std::rc::Rc::clone(&facts)));
                    facts
                }
            }
        })
    }

    /// The model's parameter counts: whole, per layer kind, the final norm.
    pub fn summary(&self) -> &model::Summary {
        &self.summary
    }

    /// The LoRA adapters' parameters when the method trains them, else 0.
    pub fn lora_params(&self) -> u64 {
        self.lora_params
    }
}

/// [`estimate`] with the model's counts already made; `facts` must be [`ModelFacts::of`] a plan with
/// the same model, method and LoRA settings.
pub fn estimate_with(plan: &Plan, facts: &ModelFacts) -> Memory {
    estimate_from(plan, facts, None)
}

/// [`estimate_with`] for a plan that differs from the one `same_but_micro_batch` is the memory of
/// only in its micro-batch: the layout and each rank's bytes that the micro-batch does not change
/// (parameters, their states, buffers, overhead) are taken from it, the rest worked out, to the
/// same bytes. A search walks the micro-batch innermost and estimates most of its plans this way.
pub fn estimate_rebatched(plan: &Plan, facts: &ModelFacts, same_but_micro_batch: &Memory) -> Memory {
    estimate_from(plan, facts, Some(same_but_micro_batch))
}

fn estimate_from(plan: &Plan, facts: &ModelFacts, previous: Option<&Memory>) -> Memory {
    // Settings the plan's framework has no flag for play no part (`knobs::effective`).
    let plan = &*crate::knobs::effective(plan);
    let arch = &plan.model.arch;
    let path = path(plan.framework);
    let layout = match previous {
        Some(previous) => {
            debug_assert_eq!(previous.layout, Layout::of(plan), "re-batched from another layout");
            previous.layout.clone()
        }
        None => Layout::of(plan),
    };
    let (tp, pp, vpp, cp, ep, etp, dp, edp) =
        (layout.tp, layout.pp, layout.vpp, layout.cp, layout.ep, layout.etp, layout.dp, layout.edp);
    let b = u64::from(plan.batch.micro_batch.get());
    let m = (step_samples(plan) / (b * dp)).max(1);
    let (summary, lora_params, lora_inputs) = (&facts.summary, facts.lora_params, facts.lora_inputs);
    let plain_torch = plain_torch(plan);
    let ctx = Ctx {
        plan,
        arch,
        summary,
        lora_params,
        lora_inputs,
        path,
        tp,
        pp,
        vpp,
        cp,
        ep,
        etp,
        dp,
        edp,
        m,
        plain_torch,
    };

    // A rank shaped like the one before it (the same layers by kind, the same embedding, loss and
    // MTP layers: every middle rank of an even split) holds the same bytes but for the micro-batches
    // in flight, so its shape is worked out once: its bytes, their total, and its activations'
    // shape, each rank adding only its activations in flight. A layer's activation bytes by kind
    // are worked out once for every rank.
    let kinds = KindBytes::new(&ctx);
    let in_flight = InFlight::of(&ctx);
    let mut stages: Vec<StageMemory> = Vec::with_capacity(pp as usize);
    let (mut worst_stage, mut offloaded) = (0, 0);
    let mut shape: Option<Shaped> = None;
    let mut peak_moment = None;
    for rank in 0..pp {
        let this = RankShape::of(arch, &layout, rank);
        let same = match &shape {
            Some(s) => s.rank.same_as(&this, || same_kinds(arch, &layout, rank - 1, rank)),
            None => false,
        };
        if !same {
            // A plain PyTorch step's terms are those of its peak moment, which the micro-batch
            // picks: nothing carries over from another micro-batch's.
            let states = previous.filter(|_| !ctx.plain_torch).and_then(|p| p.stages.get(rank as usize));
            let (stage, act) = stage_shape(&ctx, &kinds, &layout, rank, states);
            // The terms but the activations (none yet): saturating sums add in any order.
            let rest = stage.total();
            let offloaded = act.offloaded as u64;
            shape = Some(Shaped { rank: this, stage, act, rest, offloaded });
        }
        let Some(s) = &shape else { unreachable!("set above") };
        let activations_bytes = s.act.on_device(in_flight.at(rank));
        offloaded = offloaded.max(s.offloaded);
        let stage = match ctx.plain_torch {
            true => {
                let (peak, moment) = plain_torch_peak(&ctx, &s.stage, &s.act);
                if worst_stage < peak.total() {
                    worst_stage = peak.total();
                    peak_moment = Some(moment);
                }
                peak
            }
            false => {
                worst_stage = worst_stage.max(s.rest.saturating_add(activations_bytes));
                StageMemory { activations_bytes, offloaded_activations_bytes: s.offloaded, ..s.stage.clone() }
            }
        };
        stages.push(stage);
    }
    let hw = &plan.hardware.hw;
    let capacity_bytes = hw.memory_bytes;
    let usable_bytes = (capacity_bytes as f64 * (1.0 - plan.overheads().allocator_reserve_frac)) as u64;
    let phases = rl_phases(&ctx, &stages);
    let rollout = matches!(plan.method, Method::Grpo | Method::Ppo)
        .then(|| rollout_memory_of(plan, &ctx.summary.counts));
    let peak_bytes = phases.iter().map(|p| p.total).max().unwrap_or(0).max(worst_stage);
    // Offloaded activations wait in pinned host memory, one micro-batch's per device.
    let offloaded_per_node = offloaded.saturating_mul(u64::from(plan.cluster.devices_per_node.get()));
    Memory {
        host_bytes_per_node: host_bytes_per_node(&ctx).saturating_add(offloaded_per_node),
        stages,
        phases,
        rollout,
        peak_moment,
        peak_bytes,
        capacity_bytes,
        usable_bytes,
        dp,
        n_microbatches: m,
        params_total: ctx.summary.counts.total(),
        params_active: ctx.summary.counts.active,
        params_lora: ctx.lora_params,
        layout,
    }
}

/// Sets `mem`, the memory of a plan that differs from `plan` at most in the rollout's TP and EP, to
/// `plan`'s: the rollout engine is the only part of a plan's memory those settings change (the
/// engine's share of the device is `gpu_memory_utilization`'s, whatever it holds), so a search
/// walking the rollout's settings works each training layout's memory out once.
/// `facts` must be [`ModelFacts::of`] `plan`.
pub fn set_rollout(mem: &mut Memory, plan: &Plan, facts: &ModelFacts) {
    if mem.rollout.is_some() {
        mem.rollout = Some(rollout_memory_of(plan, &facts.summary.counts));
    }
}

/// What decides whether two ranks hold the same bytes: its layers by kind, and its embedding, loss
/// and MTP layers (the layout's sums per rank; MoE layers counted over its chunks).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct RankShape {
    n_layers: u64,
    n_moe: u64,
    embedding: bool,
    loss: bool,
    mtp: u64,
}

impl RankShape {
    fn of(arch: &Architecture, layout: &Layout, rank: u64) -> RankShape {
        let holds = layout.rank(rank);
        let n_moe = match arch.moe {
            Some(_) => layout.rank_stages(rank).map(|s| model::moe_layers_in(arch, s.layers.clone())).sum(),
            None => 0,
        };
        RankShape {
            n_layers: holds.n_layers,
            n_moe,
            embedding: holds.embedding,
            loss: holds.loss,
            mtp: holds.mtp,
        }
    }

    /// Whether a rank of this shape holds what one of `other`'s does. Ranks whose layers are all of
    /// one kind (every layer of a dense model; every layer past the first dense ones of most MoE
    /// models) compare by counts; mixed ones ask `same_kinds` for the layers' order.
    fn same_as(&self, other: &RankShape, same_kinds: impl FnOnce() -> bool) -> bool {
        self == other && (self.n_moe == 0 || self.n_moe == self.n_layers || same_kinds())
    }
}

/// Whether ranks `a` and `b` hold layers of the same kinds in the same order.
fn same_kinds(arch: &Architecture, layout: &Layout, a: u64, b: u64) -> bool {
    let kinds = |rank: u64| layout.rank_layers(rank).map(|l| model::is_moe_layer(arch, l));
    kinds(a).eq(kinds(b))
}

/// Whether ranks `a` and `b` hold the same: as many layers of each kind in the same order, and
/// the same embedding, loss and MTP layers.
#[cfg(test)]
fn same_shape(arch: &Architecture, layout: &Layout, a: u64, b: u64) -> bool {
    RankShape::of(arch, layout, a).same_as(&RankShape::of(arch, layout, b), || same_kinds(arch, layout, a, b))
}

/// A rank's decoder layers by position (its chunks' layers in order), as far as their bytes differ:
/// which positions hold MoE layers, counted from the chunks' ranges without walking the layers.
struct StageLayers<'a> {
    arch: &'a Architecture,
    layout: &'a Layout,
    rank: u64,
    /// How many layers the rank holds.
    n: u64,
}

impl<'a> StageLayers<'a> {
    fn of(arch: &'a Architecture, layout: &'a Layout, rank: u64) -> StageLayers<'a> {
        StageLayers { arch, layout, rank, n: layout.rank_n_layers(rank) }
    }

    /// The layer indices at positions `from..to`, chunk by chunk.
    fn ranges(&self, from: u64, to: u64) -> impl Iterator<Item = std::ops::Range<u64>> + '_ {
        // The chunk's first position in the rank; its layers follow from `stage.layers.start`.
        let mut next = 0;
        self.layout.rank_stages(self.rank).filter_map(move |stage| {
            let first = next;
            next += stage.layers.end.saturating_sub(stage.layers.start);
            let (lo, hi) = (from.max(first), to.min(next));
            (lo < hi).then(|| stage.layers.start + (lo - first)..stage.layers.start + (hi - first))
        })
    }

    /// Whether position `pos` holds an MoE layer; past the stage's layers, a layer like the model's
    /// last (an MTP layer's decoder layer).
    fn moe_at(&self, pos: u64) -> bool {
        match pos < self.n {
            true => self.moe_in(pos, pos + 1) == 1,
            false => model::is_moe_layer(self.arch, self.arch.n_layers.saturating_sub(1)),
        }
    }

    /// The MoE layers among positions `from..to` of the stage.
    fn moe_in(&self, from: u64, to: u64) -> u64 {
        match self.arch.moe {
            None => 0,
            Some(_) => self.ranges(from, to).map(|r| model::moe_layers_in(self.arch, r)).sum(),
        }
    }
}

/// A rank's bytes but for its activations, and the shape of those ([`ActivationShape::in_flight`]
/// gives them for the rank's micro-batches in flight). The bytes that do not depend on the
/// micro-batch come from `states` when given: the same rank's of a plan that differs only in it.
fn stage_shape(
    ctx: &Ctx,
    kinds: &KindBytes,
    layout: &Layout,
    stage_idx: u64,
    states: Option<&StageMemory>,
) -> (StageMemory, ActivationShape) {
    let layers = StageLayers::of(ctx.arch, layout, stage_idx);
    let first = layout.holds_embedding(stage_idx);
    let last = layout.holds_loss(stage_idx);
    let mtp = layout.rank_mtp(stage_idx);
    let mut res = match states {
        Some(states) => StageMemory {
            activations_bytes: 0,
            offloaded_activations_bytes: 0,
            logits_bytes: 0,
            ..states.clone()
        },
        None => stage_states(ctx, &layers, first, last, mtp),
    };
    let act = activation_shape(ctx, kinds, &layers, first, mtp);
    if last || 0 < mtp {
        // The loss's logits, and each MTP layer's own (it predicts one more token, through the
        // shared head), on the stages that compute them.
        res.logits_bytes = logits_bytes(ctx).saturating_mul(u64::from(last) + mtp);
    }
    (res, act)
}

/// A rank's bytes that the micro-batch does not change: its parameters, their weights, gradients
/// and optimizer states, the buffers and the runtime's overhead.
fn stage_states(ctx: &Ctx, layers: &StageLayers, first: bool, last: bool, mtp: u64) -> StageMemory {
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
    // The layers' linear weights (all but norms and routers), for low-precision weight copies.
    let linear_layers = dense + expert;
    dense += norms_router;
    if 0 < mtp {
        // An MTP module (DeepSeek-V3 §2.2; Megatron `multi_token_prediction.py`): a decoder layer
        // like the model's last, the projection of [h; embedding] back to h (2h × h, column
        // parallel) and two norms; the embedding and the output head are shared with the model.
        let counts = ctx.summary.layer(arch, arch.n_layers.saturating_sub(1));
        let h = arch.hidden_size as f64;
        let per = (counts.attention + counts.mlp + counts.shared_experts) as f64 / ctx.tp as f64
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
    if last {
        dense += final_norm as f64;
        let head = match (arch.tied_embeddings, ctx.pp) {
            (false, _) => whole.head as f64,
            (true, 1) => 0.0,
            (true, _) => (arch.vocab_size * arch.hidden_size) as f64,
        };
        dense += head / ctx.tp as f64;
    }

    let mut res =
        StageMemory { n_layers: layers.n, params: (dense + expert) as u64, ..StageMemory::default() };
    model_states(ctx, dense, expert, linear_layers, &mut res);
    let linear = linear_layers + mtp_linear(ctx, mtp);
    res.weights_bytes += low_precision_weight_copies(ctx, linear) as u64;
    if fp8_parameters(ctx) {
        // The quantized copies are the weights: no 16-bit copy beside them.
        let sixteen_bit = linear * state_bytes(ctx.path, ctx.plan.precision).weights;
        res.weights_bytes = res.weights_bytes.saturating_sub(sixteen_bit as u64);
    }
    res.buffers_bytes = buffers(ctx);
    if ctx.plain_torch && 1 < ctx.dp {
        // PyTorch DDP copies every gradient into its all-reduce buckets, which live as long as the
        // model: `gradient_as_bucket_view` (off by default, and transformers' `Trainer` sets only
        // `find_unused_parameters`, `bucket_cap_mb` and `broadcast_buffers`) would make the
        // gradients views of them instead ("the saved memory size will be equal to the total
        // gradients size": `torch.nn.parallel.DistributedDataParallel`'s documentation). The
        // buckets take the gradients' dtype, fp32 here.
        let trainable = match ctx.plan.trains_lora() {
            true => ctx.lora_params,
            false => res.params,
        };
        res.buffers_bytes = res.buffers_bytes.saturating_add(trainable.saturating_mul(4));
    }
    // A calibration's offset (fitted to a measured peak) adjusts the runtime overhead.
    let overhead =
        ctx.plan.overheads().runtime_context_bytes as f64 + ctx.plan.calibration.memory_offset_bytes();
    res.overhead_bytes = overhead.max(0.0) as u64;
    res
}

/// Whether the plan's linear layers run in fp8 or fp4 on its device.
fn fp8_linear(plan: &Plan) -> bool {
    quantized_element_bytes(plan).is_some()
}

/// Bytes per element of a quantized linear weight or input when the plan's linear layers run in
/// fp8 or fp4 on its device: 1 in fp8; MXFP8 adds an 8-bit scale per 32 elements (OCP Microscaling
/// Formats spec v1.0 §5); NVFP4 is 4 bits with an 8-bit scale per 16 (NVIDIA, "Introducing NVFP4",
/// 2025).
fn quantized_element_bytes(plan: &Plan) -> Option<f64> {
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
fn low_precision_weight_copies(ctx: &Ctx, linear: f64) -> f64 {
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
fn fp8_parameters(ctx: &Ctx) -> bool {
    let plan = ctx.plan;
    ctx.path == Path::Megatron
        && plan.parallel.fp8_param_gather
        && fp8_parameters_fit(plan)
        && quantized_element_bytes(plan).is_some()
        && !plan.trains_lora()
}

/// The linear parameters of `mtp` MTP layers on the device (as [`stage_memory`] counts them).
fn mtp_linear(ctx: &Ctx, mtp: u64) -> f64 {
    if mtp == 0 {
        return 0.0;
    }
    let counts = ctx.summary.layer(ctx.arch, ctx.arch.n_layers.saturating_sub(1));
    let h = ctx.arch.hidden_size as f64;
    mtp as f64
        * ((counts.attention + counts.mlp + counts.shared_experts) as f64 / ctx.tp as f64
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
fn frozen_base_bytes(plan: &Plan, sixteen_bit: f64, total: f64, expert: f64, linear: f64) -> f64 {
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

/// Bytes per parameter of each model state as the plan's framework keeps them ([`state_bytes`]).
fn stage_state_bytes(ctx: &Ctx) -> StateBytes {
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
    bytes
}

/// Weights, gradients and optimizer states for `dense` and `expert` parameters on this device, of
/// which `linear_layers` are the layers' linear weights.
fn model_states(ctx: &Ctx, dense: f64, expert: f64, linear_layers: f64, res: &mut StageMemory) {
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
        let sharded = zero_model_states(
            lora_params,
            StateBytes { weights: 4.0, gradients: 4.0, optimizer: 8.0 },
            zero_stage(ctx),
            ctx.dp * ctx.cp,
        );
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

    if ctx.plain_torch {
        // LLaMA-Factory casts the trainable parameters to fp32 unless `pure_bf16` or ZeRO-3
        // (`model/adapter.py` `_setup_full_tuning`, `cast_trainable_params_to_fp32`) and trains them
        // under autocast: fp32 weights that are their own master copy, fp32 gradients and AdamW's
        // two fp32 moments, 4 + 4 + 8 bytes (measured: tools/gpu_peak, 12 bytes a parameter
        // between steps).
        let n = dense + expert;
        res.weights_bytes = (n * 4.0) as u64;
        res.gradients_bytes = (n * 4.0) as u64;
        res.optimizer_bytes = (n * 8.0) as u64;
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
fn verl_keeps_parameters_whole(plan: &Plan) -> bool {
    plan.framework == Framework::Verl
        && plan.precision != Precision::Fp32
        && matches!(plan.parallel.zero_stage.get(), 1 | 2)
}

/// Whether the plan is VeRL's FSDP engine over fp32 parameters, computing on 16-bit copies of them
/// (`param_dtype`): not in fp32, and not training LoRA (whose frozen base is 16-bit already).
fn verl_casts_to_compute(plan: &Plan) -> bool {
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
fn verl_compute_copy_bytes(plan: &Plan, summary: &model::Summary, params: u64) -> u64 {
    if !verl_casts_to_compute(plan) {
        return 0;
    }
    let copied = match verl_keeps_parameters_whole(plan) {
        true => params,
        false => {
            summary.counts.embedding.saturating_add(summary.final_norm).saturating_add(summary.counts.head)
        }
    };
    copied.saturating_mul(BF16_BYTES)
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
fn zero_stage(ctx: &Ctx) -> ZeroStage {
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

/// Attention dropout and hidden dropout as the family trains: GPT-2 style models with 0.1
/// (Megatron's default `--attention-dropout`/`--hidden-dropout`), modern decoders with none.
fn has_dropout(arch: &Architecture) -> bool {
    arch.family == model::Family::Gpt2
}

/// What a layer keeps for backward, beyond what the parallel degrees decide.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Saved {
    /// Selective recompute: the core attention's score tensors are recomputed.
    pub selective: bool,
    /// MindSpeed activation-function recompute: the MLP activation's output is recomputed.
    pub activation_function: bool,
    /// Leave out the attention tensors (Q/K/V, scores, output): MindSpeed swap-attention keeps
    /// them in host memory.
    pub without_attention: bool,
    /// Megatron `--recompute-modules mlp`: the dense MLP keeps only its input.
    pub mlp: bool,
    /// `layernorm`: the two norms' outputs (the QKV and MLP inputs) are discarded.
    pub layernorm: bool,
    /// `moe_act`: the experts' activation output is discarded.
    pub moe_act: bool,
    /// `moe`: the MoE layer keeps only its input.
    pub moe: bool,
    /// `shared_experts`: the shared experts keep only their input.
    pub shared_experts: bool,
    /// `mla_up_proj`: MLA's up-projected queries, keys and values are discarded.
    pub mla_up_proj: bool,
}

/// How a layer runs: the path, kernels, shapes on one device, and what recomputation drops.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LayerCase {
    /// The Megatron path (else the HF path).
    pub megatron: bool,
    /// The attention kernel.
    pub attention: AttentionImpl,
    /// Tokens per sequence on the device (after CP).
    pub seq_len: u64,
    /// Sequences per micro-batch.
    pub micro_batch: u64,
    /// Tensor parallel size.
    pub tp: u64,
    /// Megatron sequence parallelism.
    pub sequence_parallel: bool,
    /// What recomputation drops.
    pub saved: Saved,
    /// The linear layers run in fp8 or fp4 (Transformer Engine on the Megatron path): each keeps
    /// its input quantized for the weight gradient, 1 byte per element instead of 2
    /// (transformer_engine/pytorch/module/linear.py: the quantized input is saved with only its
    /// column-wise data). Dense layers only; the MoE experts' inputs are counted at 2 bytes.
    pub fp8_inputs: bool,
    /// The HF path's RMSNorm, gated MLP and routed experts run Liger's kernels (`liger`), which
    /// keep less for backward than HF's modules (see [`layer_activation_bytes`]).
    pub liger: bool,
}

/// Bytes saved for backward by one decoder layer for one micro-batch, on one device.
///
/// Megatron path (Korthikanti et al. 2022, §4.1, generalised to GQA, gated MLPs and no dropout):
/// per token, layer-norm inputs 4h, QKV input 2h, Q/K/V 2(q + 2kv), core attention (eager:
/// softmax 2as, dropout mask as and output 2as; flash: output 2q and fp32 softmax stats 4a), o_proj
/// input 2q, MLP input 2h, MLP inner 4f (GELU) or 6f (SwiGLU: gate and up, product), dropout masks
/// 2h. With GPT's shapes this is the paper's 34sbh + 5as²b. Without sequence parallelism the
/// layer-norm and linear inputs and the masks (10sbh) stay whole on each TP rank; the rest is ÷ t.
///
/// HF path (measured with tools/hf_activations, transformers 5.24, bf16): per token, each RMSNorm
/// 8h + 4 (fp32 upcast, normalized, weighted), Q/K/V 2(q + 2kv) and output 2q with an fp32 log-sum-exp
/// 4a (sdpa/flash) or, eager, K/V repeated to all heads and the softmax 6as (fp32 + bf16 copy), MLP 8f.
/// With Liger's kernels (liger-kernel 0.8.5, `liger_kernel/ops/`): each RMSNorm keeps its input and
/// an fp32 factor a row (`LigerRMSNormFunction`: `save_for_backward(X, W, RSTD)`) beside its output,
/// the next linear's input: 4h + 4; a dense gated MLP keeps the gate's and the up projection's
/// outputs (`LigerSiLUMulFunction`, and GeGLU's alike: `save_for_backward(a, b)`) and the product,
/// the down projection's input: 6f. Its fused experts (transformers 5's `*Experts` modules) keep,
/// per routed copy, the gate and up outputs, the routing weight and three indices: 4f_e + 16.
pub fn layer_activation_bytes(arch: &Architecture, moe_layer: bool, case: &LayerCase) -> f64 {
    let LayerCase {
        megatron,
        attention,
        seq_len,
        micro_batch,
        tp,
        sequence_parallel,
        saved,
        fp8_inputs,
        liger,
    } = *case;
    // Bytes per element of a saved linear input: the QKV, output-projection, MLP and FC2 inputs.
    let input = if megatron && fp8_inputs { 1.0 } else { 2.0 };
    let (s, b, h) = (seq_len as f64, micro_batch as f64, arch.hidden_size as f64);
    let t = tp as f64;
    let tokens = s * b;
    let (a, q, kv) = attention_widths(arch);
    let dropout = megatron && has_dropout(arch);
    let flash = attention != AttentionImpl::Eager;
    let moe = arch.moe.as_ref().filter(|_| moe_layer);

    // Per-token bytes that TP leaves whole (unless SP) and those it divides.
    let (whole, mut split);
    if megatron {
        whole = 4.0 * h + input * h + input * h + if dropout { 2.0 * h } else { 0.0 };
        // `layernorm` recompute discards the norms' outputs, the QKV and MLP inputs (2h each), and
        // reruns the norms from their kept inputs (transformer_config.py: "output-discarding
        // checkpointing").
        let whole = whole - if saved.layernorm { 2.0 * input * h } else { 0.0 };
        split = 2.0 * (q + 2.0 * kv) + input * q;
        // `mla_up_proj` discards the up-projected Q, K and V (rerun from the compressed latents).
        if saved.mla_up_proj && matches!(arch.attention, model::Attention::Mla { .. }) {
            split -= 2.0 * (q + 2.0 * kv);
        }
        if flash {
            split += 4.0 * a;
        } else if !saved.selective {
            split += (2.0 + if dropout { 3.0 } else { 0.0 }) * a * s;
        }
        if saved.without_attention {
            split = 0.0;
        }
        split += match moe {
            Some(_) => 0.0,
            // `mlp` recompute checkpoints the MLP: only its input (counted in `whole`) is kept.
            None if saved.mlp => 0.0,
            // Activation-function recompute drops the activation's output: 2f of the inner tensors.
            None => {
                let f = arch.mlp.intermediate_size as f64;
                // Of the inner tensors, the activation's output (2f) is FC2's input.
                mlp_inner_megatron(arch.mlp.kind, f)
                    - (2.0 - input) * f
                    - if saved.activation_function { input * f } else { 0.0 }
            }
        };
        if let Some(moe) = moe {
            return megatron_moe_recomputed(arch, moe, case, whole, split);
        }
        let per_token = if sequence_parallel { (whole + split) / t } else { whole + split / t };
        return per_token * tokens;
    } else {
        whole = 2.0 * ((if liger { 4.0 } else { 8.0 }) * h + 4.0);
        split = if flash {
            2.0 * (q + 2.0 * kv) + 2.0 * q + 4.0 * a
        } else {
            2.0 * (3.0 * q) + 2.0 * q + 6.0 * a * s
        };
        if saved.without_attention {
            split = 0.0;
        }
        split += match moe {
            Some(_) => 0.0,
            None => match arch.mlp.kind {
                MlpKind::Gated => (if liger { 6.0 } else { 8.0 }) * arch.mlp.intermediate_size as f64,
                MlpKind::Plain => 4.0 * arch.mlp.intermediate_size as f64,
            },
        };
    }
    if let Some(moe) = moe {
        // Routed tokens: k copies of the input and output (2h each) and the expert's inner tensors;
        // router logits and probabilities in fp32 (8E); a shared expert is a dense gated MLP
        // (NVIDIA/Megatron-LM PR #6782, MoE-aware `compute_activation_memory`; measured for Mixtral
        // on the HF path).
        let k = moe.top_k as f64;
        let f_e = moe.expert_intermediate_size as f64;
        let routed = match (megatron, liger) {
            (true, _) => k * (4.0 * h + 6.0 * f_e),
            // Liger's fused experts (`LigerExperts`, `LigerFusedMoEFunction.forward` in
            // `liger_kernel/ops/fused_moe.py`) gather the tokens inside the kernel and recompute
            // the down projection's output in backward: per routed copy they keep the gate and up
            // outputs (`pre_act`, 2f_e in the input's dtype), the fp32 routing weight and three
            // int32 indices (`x_gather_idx`, `s_scatter_idx`, `s_reverse_scatter_idx`); the
            // input is the layer's, kept by the norm's count.
            (false, true) => k * (4.0 * f_e + 4.0 + 3.0 * 4.0),
            (false, false) => k * (4.0 * h + 8.0 * f_e),
        };
        split += routed + 8.0 * moe.n_experts as f64;
        // Liger replaces the shared expert with its SwiGLU MLP (`LigerQwen3MoeSwiGLUMLP`): 6f_s.
        if 0 < moe.shared_intermediate_size {
            split +=
                (if megatron || liger { 6.0 } else { 8.0 }) * moe.shared_intermediate_size as f64 + 2.0 * h;
        }
    }
    let per_token = if sequence_parallel { (whole + split) / t } else { whole + split / t };
    per_token * tokens
}

/// A Megatron MoE layer's saved bytes with `--recompute-modules` `moe`, `moe_act` and
/// `shared_experts`: the routed part of [`layer_activation_bytes`] (k copies of input and output,
/// 6f_e inner, fp32 router 8E) less what each module discards: `moe` keeps only the layer's input,
/// `moe_act` the activation's output (2f_e of the 6f_e), `shared_experts` the shared MLP's inner
/// tensors and output.
fn megatron_moe_recomputed(
    arch: &Architecture,
    moe: &model::Moe,
    case: &LayerCase,
    whole: f64,
    split: f64,
) -> f64 {
    let (h, t) = (arch.hidden_size as f64, case.tp as f64);
    let saved = case.saved;
    let k = moe.top_k as f64;
    let f_e = moe.expert_intermediate_size as f64;
    let mut split = split;
    if !saved.moe {
        // In fp8 the experts' FC1 input (the dispatched copy, h) and FC2 input (the activation's
        // output, f_e) are kept quantized, a byte per element (as `fp8_inputs` for dense layers;
        // DeepSeek-V3 §3.3.3 caches them in fp8 too).
        let input = if case.fp8_inputs { 1.0 } else { 2.0 };
        let inner = 4.0 * f_e + if saved.moe_act { 0.0 } else { input * f_e };
        split += k * (2.0 * h + input * h + inner) + 8.0 * moe.n_experts as f64;
        if 0 < moe.shared_intermediate_size && !saved.shared_experts {
            split += 6.0 * moe.shared_intermediate_size as f64 + 2.0 * h;
        }
    }
    let per_token = if case.sequence_parallel { (whole + split) / t } else { whole + split / t };
    per_token * (case.seq_len * case.micro_batch) as f64
}

/// Bytes padding the experts' inputs to capacity (`moe.pad_to_capacity`, Megatron
/// `--moe-pad-expert-input-to-capacity`) adds to one MoE layer's saved activations: the routed
/// part of [`layer_activation_bytes`] (k copies of 4h + 6f_e per token) grows to the capacity
/// factor c times the mean (docs/time.md, "MoE layers").
pub fn moe_padding_bytes(plan: &crate::plan::Plan, tokens: f64, tp: f64) -> f64 {
    let (Some(moe), Some(c)) = (&plan.model.arch.moe, plan.moe.capacity_factor) else {
        return 0.0;
    };
    if !plan.moe.pad_to_capacity {
        return 0.0;
    }
    let h = plan.model.arch.hidden_size as f64;
    let routed_per_token = moe.top_k as f64 * (4.0 * h + 6.0 * moe.expert_intermediate_size as f64);
    (c - 1.0) * routed_per_token * tokens / tp.max(1.0)
}

/// MLP inner bytes per token on the Megatron path: GELU saves fc1's output and GELU's output (4f);
/// fused SwiGLU saves the gate/up output and the product (6f).
fn mlp_inner_megatron(kind: MlpKind, f: f64) -> f64 {
    match kind {
        MlpKind::Plain => 4.0 * f,
        MlpKind::Gated => 6.0 * f,
    }
}

/// Heads, query width and key/value width per token (MLA: the decompressed keys/values).
fn attention_widths(arch: &Architecture) -> (f64, f64, f64) {
    match arch.attention {
        model::Attention::Gqa { n_heads, n_kv_heads, head_dim, .. } => {
            (n_heads as f64, (n_heads * head_dim) as f64, (n_kv_heads * head_dim) as f64)
        }
        model::Attention::Mla { n_heads, qk_nope_head_dim, qk_rope_head_dim, v_head_dim, .. } => {
            let a = n_heads as f64;
            // Keys are as wide as queries, values v_head_dim: K and V together are 2·kv wide.
            let q = a * (qk_nope_head_dim + qk_rope_head_dim) as f64;
            (a, q, (q + a * v_head_dim as f64) / 2.0)
        }
    }
}

/// A stage's activations in parts: what each micro-batch in flight keeps, and what the stage holds
/// once whatever is in flight.
struct ActivationShape {
    /// One micro-batch's bytes kept on the device.
    per_microbatch: f64,
    /// Recomputation's working set.
    working: f64,
    /// Swap-attention's window of two layers' attention tensors.
    swap_window: f64,
    /// The layer being copied to or from the host.
    offload_window: f64,
    /// One micro-batch's bytes offloaded to the host.
    offloaded: f64,
    /// The stage's first layer's activations, as its forward saves them: what the end of a
    /// backward still holds, recomputed or kept.
    first_layer: f64,
}

impl ActivationShape {
    /// Activations on the device of a rank with `in_flight` micro-batches in flight
    /// ([`InFlight::at`]), with recomputation.
    fn on_device(&self, in_flight: f64) -> u64 {
        (self.per_microbatch * in_flight + self.working + self.swap_window + self.offload_window) as u64
    }
}

/// A run of ranks' shape ([`RankShape`]) and what it holds: its bytes but for the activations in
/// flight, their total, the activations' shape and one micro-batch's bytes offloaded to the host.
struct Shaped {
    rank: RankShape,
    stage: StageMemory,
    act: ActivationShape,
    rest: u64,
    offloaded: u64,
}

/// One micro-batch's saved bytes over a stage's `n` layers (`sum_bytes` over a range of positions), and the
/// working set recomputation adds once, under full recomputation's `method` over groups of
/// `group` layers (`None`: no full recomputation) with `hidden` bytes of a layer's input.
fn recomputed_layers(
    full_method: Option<RecomputeMethod>,
    n: u64,
    group: u64,
    hidden: f64,
    sum_bytes: &dyn Fn(u64, u64) -> f64,
) -> (f64, f64) {
    match full_method {
        None => (sum_bytes(0, n), 0.0),
        // Uniform: each group of `num_layers` keeps its input; backward recomputes one group at a time.
        Some(RecomputeMethod::Uniform) => {
            let n_groups = n.div_ceil(group) as f64;
            let one_group = sum_bytes(0, n.min(group));
            (n_groups * hidden, one_group)
        }
        // Block: the first `num_layers` layers keep only their inputs, the rest everything.
        Some(RecomputeMethod::Block) => {
            let recomputed = n.min(group) as f64 * hidden;
            let kept = sum_bytes(n.min(group), n);
            let one = sum_bytes(0, n.min(1));
            (recomputed + kept, one)
        }
    }
}

/// [`recomputed_layers`] chunk by chunk: with virtual stages every model chunk is a
/// `TransformerBlock` of its own, whose `_checkpointed_forward` counts `recompute_num_layers` over
/// its own layers (megatron/core/transformer/transformer_block.py at core_v0.19.0), so the block
/// method recomputes the first ones of each chunk and the uniform one groups each chunk's. The
/// chunks' saved bytes add up; their working sets do not (one chunk recomputes at a time).
fn recomputed_by_chunk(
    layers: &StageLayers,
    full_method: Option<RecomputeMethod>,
    (num_layers, hidden, window): (u64, f64, std::ops::Range<u64>),
    sum_bytes: &dyn Fn(u64, u64) -> f64,
) -> (f64, f64) {
    let mut from = 0;
    // A chunk whose layers all save alike (one kind, all inside or all outside the
    // activation-function window) has figures that depend on its length, kind and side alone:
    // worked out once for each, so that a rank of many chunks costs one pass over them (each
    // `sum_bytes` walks the rank's chunks). At most two chunks straddle the window's ends.
    // Kept on the stack: an even split's chunks are of one kind, an uneven one's of a few lengths
    // (a kind past the fourth is worked out each time, to the same figures). Key: the chunk's length,
    // whether its layers are MoE, whether they are inside the window.
    let mut seen = [((0, false, false), (0.0, 0.0)); 4];
    let mut n_seen = 0;
    layers.layout.rank_stages(layers.rank).fold((0.0, 0.0f64), |(kept, working), stage| {
        let c = stage.layers.end.saturating_sub(stage.layers.start);
        let moe = model::moe_layers_in(layers.arch, stage.layers.clone());
        let at = from;
        let inside = window.start <= at && at + c <= window.end;
        let outside = window.is_empty() || at + c <= window.start || window.end <= at;
        let key = (c, 0 < moe, inside);
        let alike = (inside || outside) && (moe == 0 || moe == c);
        from += c;
        let known = match alike {
            true => seen[..n_seen].iter().find(|(k, _)| *k == key).map(|(_, figures)| *figures),
            false => None,
        };
        let (k, w) = match known {
            Some(figures) => figures,
            None => {
                let chunk_sum = |a: u64, b: u64| sum_bytes(at + a, at + b);
                let figures =
                    recomputed_layers(full_method, c, num_layers.clamp(1, c.max(1)), hidden, &chunk_sum);
                if alike && n_seen < seen.len() {
                    seen[n_seen] = (key, figures);
                    n_seen += 1;
                }
                figures
            }
        };
        (kept + k, working.max(w))
    })
}

/// What every layer saves under the plan's selective recomputation: it reruns the modules
/// `--recompute-modules` names.
fn selectively_saved(plan: &Plan) -> Saved {
    let selective = plan.recompute.granularity == RecomputeGranularity::Selective;
    let modules = recompute_modules(plan);
    Saved {
        selective: selective && modules.core_attn,
        mlp: selective && modules.mlp,
        layernorm: selective && modules.layernorm,
        moe_act: selective && modules.moe_act,
        moe: selective && modules.moe,
        shared_experts: selective && modules.shared_experts,
        mla_up_proj: selective && modules.mla_up_proj,
        ..Saved::default()
    }
}

/// One layer's activation bytes by its kind and what it saves, each worked out once per plan: a
/// layer's bytes depend on those, not on its position or its stage, and a stage holds dozens of
/// layers of at most two kinds. What a layer saves varies within a stage only by the activation-function window
/// and swap-attention, so a layer's kind and those two bits index the memo.
struct KindBytes<'a> {
    ctx: &'a Ctx<'a>,
    /// The stage's shape of a layer; `saved` is set per call.
    case: LayerCase,
    memo: [std::cell::Cell<Option<f64>>; 8],
}

impl<'a> KindBytes<'a> {
    /// The plan's layer shape, no kind worked out yet.
    fn new(ctx: &'a Ctx<'a>) -> KindBytes<'a> {
        let plan = ctx.plan;
        let megatron = ctx.path == Path::Megatron;
        let (b, seq) = micro_batch_shape(ctx);
        KindBytes {
            ctx,
            case: LayerCase {
                megatron,
                attention: plan.attention,
                seq_len: seq,
                micro_batch: b,
                tp: ctx.tp,
                sequence_parallel: megatron && plan.parallel.sequence_parallel && 1 < ctx.tp,
                saved: selectively_saved(plan),
                fp8_inputs: fp8_linear(plan),
                liger: !megatron && liger(plan),
            },
            memo: Default::default(),
        }
    }

    fn bytes(&self, moe_layer: bool, saved: Saved) -> f64 {
        let slot = &self.memo[usize::from(moe_layer) * 4
            + usize::from(saved.activation_function) * 2
            + usize::from(saved.without_attention)];
        if let Some(bytes) = slot.get() {
            return bytes;
        }
        let case = LayerCase { saved, ..self.case };
        let padding = match moe_layer && case.megatron {
            true => {
                moe_padding_bytes(self.ctx.plan, (case.seq_len * case.micro_batch) as f64, self.ctx.tp as f64)
            }
            false => 0.0,
        };
        let bytes = layer_activation_bytes(self.ctx.arch, moe_layer, &case) + padding;
        slot.set(Some(bytes));
        bytes
    }
}

/// The activations of a stage holding `layers` (and the embedding, and `mtp` MTP layers).
fn activation_shape(
    ctx: &Ctx,
    kinds: &KindBytes,
    layers: &StageLayers,
    embedding: bool,
    mtp: u64,
) -> ActivationShape {
    let plan = ctx.plan;
    let arch = ctx.arch;
    // The plan's layer shape, as the layers' bytes were worked out for.
    let LayerCase { megatron, micro_batch: b, seq_len: seq, sequence_parallel: sp, saved, .. } = kinds.case;
    let rc = &plan.recompute;
    let full = rc.granularity == RecomputeGranularity::Full;
    let n = layers.n;
    // LLaMA-Factory on Ascend checkpoints the first `recompute_layers_ratio` of the layers and keeps
    // the rest: the block method over that many layers.
    let ratio = plan.framework == Framework::LlamaFactory && rc.layers_ratio_frac < 1.0;
    let (method, group) = match ratio {
        true => (RecomputeMethod::Block, (rc.layers_ratio_frac * n as f64).ceil() as u64),
        false => (rc.method, u64::from(rc.num_layers.get()).clamp(1, n.max(1))),
    };
    // MindSpeed's activation-function recompute (the Megatron path only) covers
    // `--recompute-activation-function-num-layers` layers of the stage, after the fully recomputed
    // ones of the block method: "no layer is both fully and activation-function recomputed".
    let act_fn_from = match (full, method) {
        (true, RecomputeMethod::Block) => group,
        _ => 0,
    };
    let act_fn_to = match rc.activation_function_layers {
        0 => n,
        k => act_fn_from + u64::from(k),
    };
    let bytes_of = |moe_layer: bool, saved: Saved| kinds.bytes(moe_layer, saved);
    // What the layer at a position saves: the activation-function window, and swap-attention
    // (MindSpeed), which keeps the attention tensors of the layer being computed and the one being
    // prefetched on the device while the others wait in host memory.
    let act_fn = megatron && rc.activation_function;
    let swap = megatron && rc.swap_attention;
    let saved_in =
        |window: bool| Saved { activation_function: act_fn && window, without_attention: swap, ..saved };
    let layer_with = |pos: u64, saved: Saved| bytes_of(layers.moe_at(pos), saved);
    let in_window = |pos: u64| (act_fn_from..act_fn_to).contains(&pos);
    let layer_bytes = |pos: u64| layer_with(pos, saved_in(in_window(pos)));
    // The layers at positions `from..to`, counted by kind inside and outside the window.
    let sum_bytes = |from: u64, to: u64| -> f64 {
        let inside = (from.max(act_fn_from), to.min(act_fn_to));
        let parts = [
            (from, to.min(act_fn_from), false),
            (inside.0, inside.1.max(inside.0), true),
            (from.max(act_fn_to), to, false),
        ];
        parts
            .into_iter()
            .filter(|&(a, z, _)| a < z)
            .map(|(a, z, window)| {
                let moe = layers.moe_in(a, z);
                let dense = z - a - moe;
                let of = |moe_layer: bool, count: u64| match count {
                    0 => 0.0,
                    k => k as f64 * bytes_of(moe_layer, saved_in(window)),
                };
                of(false, dense) + of(true, moe)
            })
            .sum()
    };
    let swap_window = match (swap, n) {
        (true, 1..) => {
            let at_0 = Saved { activation_function: act_fn && in_window(0), ..saved };
            2.0 * (layer_with(0, at_0) - layer_with(0, Saved { without_attention: true, ..at_0 }))
        }
        _ => 0.0,
    };
    // A checkpoint keeps its input: sequence parallelism leaves each TP rank its share of it, and
    // so does Megatron's `--distribute-saved-activations` under full recomputation
    // (`split_tensor_into_1d_equal_chunks` in `CheckpointFunction.forward`,
    // megatron/core/tensor_parallel/random.py at core_v0.19.0).
    let split = sp || (megatron && full && rc.distribute_saved_activations);
    let hidden = (2 * seq * b * arch.hidden_size) as f64 / if split { ctx.tp as f64 } else { 1.0 };

    // Megatron's activation offloading (`--cpu-offloading-num-layers N`: Transformer Engine's
    // `get_cpu_offload_context` in megatron/core/transformer/transformer_block.py): the first N
    // layers' saved tensors go to host memory after their forward and come back before their
    // backward; the layer being copied stays on the device.
    let offloaded = offloaded_layers(plan, n);
    let offload_window = if 0 < offloaded && 0 < n { layer_bytes(0) } else { 0.0 };
    let offloaded_bytes = sum_bytes(0, offloaded.min(n));
    let full_method = full.then_some(method);
    let (per_microbatch, working) = match layers.layout.chunks {
        2.. if full_method.is_some() => {
            let window = if act_fn { act_fn_from..act_fn_to } else { 0..0 };
            let chunks = (u64::from(rc.num_layers.get()), hidden, window);
            recomputed_by_chunk(layers, full_method, chunks, &sum_bytes)
        }
        _ => recomputed_layers(full_method, n, group, hidden, &sum_bytes),
    };
    // The embedding's output (and its dropout mask) on the first stage.
    let embedding =
        if embedding { hidden * if megatron && has_dropout(arch) { 1.5 } else { 1.0 } } else { 0.0 };
    // Each MTP layer keeps what a decoder layer like the model's last keeps, plus its inputs: the
    // previous depth's hidden state and the next token's embedding, concatenated and projected
    // (DeepSeek-V3 §2.2); its recomputation follows the plan's like any layer's.
    let mtp_layer = match full {
        true => 3.0 * hidden,
        false => layer_with(n, saved) + 3.0 * hidden,
    };
    ActivationShape {
        per_microbatch: per_microbatch - offloaded_bytes + embedding + mtp as f64 * mtp_layer,
        working,
        swap_window,
        offload_window,
        offloaded: offloaded_bytes,
        first_layer: sum_bytes(0, n.min(1)),
    }
}

/// The modules selective recomputation reruns as the plan's framework is told: Megatron-LM's
/// `--recompute-modules`; MindSpeed-LLM's (Megatron core 0.12.1, no `shared_experts`); elsewhere the
/// attention core only (MindSpeed-RL writes no modules; the HF path's selective mode is attention's).
pub fn recompute_modules(plan: &Plan) -> crate::plan::RecomputeModules {
    let modules = plan.recompute.modules;
    match plan.framework {
        Framework::Megatron => modules,
        Framework::MindSpeedLlm => crate::plan::RecomputeModules { shared_experts: false, ..modules },
        _ => crate::plan::RecomputeModules::DEFAULT,
    }
}

/// Layers of a stage of `n_layers` whose activations Megatron offloads to the host
/// (`--cpu-offloading-num-layers`, Megatron-LM only; at most the stage's layers).
fn offloaded_layers(plan: &Plan, n_layers: u64) -> u64 {
    match plan.framework {
        Framework::Megatron => u64::from(plan.recompute.cpu_offload_layers).min(n_layers),
        _ => 0,
    }
}

/// Tokens per trained sequence: the batch's `seq_len`, or for RL a prompt and its response
/// (VeRL trains on `max_prompt_length + max_response_length`).
fn train_seq_len(plan: &Plan) -> u64 {
    match plan.method {
        Method::Grpo | Method::Ppo => u64::from(plan.rl.sequence_tokens()),
        _ => u64::from(plan.batch.seq_len.get()),
    }
}

/// One micro-batch on one device as (sequences, tokens each), after the context-parallel split.
/// RL with dynamic batching packs sequences up to a token budget per device instead (VeRL
/// `use_dynamic_bsz` + `ppo_max_token_len_per_gpu`, MindSpeed-RL `max_packing_token_size`): one
/// packed row of that many tokens, the worst case the packer allows.
fn micro_batch_shape(ctx: &Ctx) -> (u64, u64) {
    let plan = ctx.plan;
    let rl = matches!(plan.method, Method::Grpo | Method::Ppo);
    match rl && plan.rl.dynamic_batch {
        true => {
            let tokens = plan.rl.tokens_per_device(plan.framework, ctx.cp as u32);
            (1, u64::from(tokens).max(train_seq_len(plan).div_ceil(ctx.cp)))
        }
        false => (
            u64::from(plan.batch.micro_batch.get()) * sequences_per_sample(plan.method),
            train_seq_len(plan).div_ceil(ctx.cp),
        ),
    }
}

/// Sequences a sample puts through the model: DPO's pair, its chosen and its rejected response in
/// one batch, twice the micro-batch (LLaMA-Factory `PairwiseDataCollatorWithPadding`:
/// "2 * n examples where the first n examples represent chosen examples"; MindSpeed-LLM's
/// `DPOTrainer` splits its logits in chosen and rejected halves), else one.
pub fn sequences_per_sample(method: Method) -> u64 {
    if method.is_dpo() { 2 } else { 1 }
}

/// Micro-batches whose activations stage `stage_idx` holds at its peak.
///
/// 1F1B (Narayanan et al. 2021 §2.2): stage i runs p − i warm-up forwards, so it holds min(p − i, m).
/// Interleaved 1F1B with v chunks (Megatron `schedules.py`, `get_num_warmup_microbatches`):
/// (p − i − 1)·2 + (v − 1)·p warm-up chunk forwards plus one, each of 1/v of the stage's layers.
pub fn in_flight_microbatches(pp: u64, vpp: u64, stage_idx: u64, n_microbatches: u64) -> f64 {
    if pp <= 1 {
        return 1.0;
    }
    if vpp <= 1 {
        return (pp - stage_idx).min(n_microbatches) as f64;
    }
    let chunks = (pp - stage_idx - 1) * 2 + (vpp - 1) * pp + 1;
    chunks.min(n_microbatches * vpp) as f64 / vpp as f64
}

/// Micro-batches in flight on each rank of a plan ([`in_flight_microbatches`], and GPipe's and
/// DualPipeV's), its terms worked out once: each rank's count is then `(first − per_rank · rank)`
/// capped at `most`, over `chunks`. Every term is a whole number below 2^53 (exact as a float) or
/// DualPipeV's half, and converting to a float is monotone (it commutes with `min`), so each count
/// is the integer formula's to the bit (`tests::in_flight_is_the_formula_per_rank`).
#[derive(Clone, Copy, Debug)]
struct InFlight {
    first: f64,
    per_rank: f64,
    most: f64,
    chunks: f64,
}

impl InFlight {
    fn of(ctx: &Ctx) -> InFlight {
        InFlight::new(ctx.plan.parallel.schedule, ctx.pp, ctx.vpp, ctx.m)
    }

    /// `schedule` over `pp` ranks of `vpp` chunks each, `m` micro-batches a step.
    fn new(schedule: crate::plan::PipelineSchedule, pp: u64, vpp: u64, m: u64) -> InFlight {
        use crate::plan::PipelineSchedule;
        let flat = |n: f64, most: f64| InFlight { first: n, per_rank: 0.0, most, chunks: 1.0 };
        match schedule {
            _ if pp <= 1 => flat(1.0, f64::INFINITY),
            // GPipe runs every forward before any backward.
            PipelineSchedule::GPipe => flat(m as f64, f64::INFINITY),
            // DualPipeV (deepseek-ai/DualPipe README): PP + 1 micro-batches of one of the 2·pp
            // stages, i.e. pp + ½ micro-batches of this rank's layers, on every rank.
            PipelineSchedule::DualPipeV => flat(pp as f64 + 0.5, m as f64),
            _ if vpp <= 1 => InFlight { first: pp as f64, per_rank: 1.0, most: m as f64, chunks: 1.0 },
            _ => InFlight {
                first: ((pp - 1) * 2 + (vpp - 1) * pp + 1) as f64,
                per_rank: 2.0,
                most: (m * vpp) as f64,
                chunks: vpp as f64,
            },
        }
    }

    /// Micro-batches in flight on `rank`.
    fn at(&self, rank: u64) -> f64 {
        (self.first - self.per_rank * rank as f64).min(self.most) / self.chunks
    }
}

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
fn logits_bytes(ctx: &Ctx) -> u64 {
    let tokens_v = tokens_v(ctx);
    match ctx.path {
        Path::Megatron => tokens_v.saturating_mul(6) / ctx.tp,
        // DeepSpeed runs the module in its 16-bit dtype; fp32 training keeps fp32.
        Path::Hf if liger_fused_loss(ctx.plan) => {
            liger_loss_bytes(ctx, if ctx.plan.precision == Precision::Fp32 { 4 } else { 2 }).total()
        }
        Path::Hf if hf_trainer_loss(ctx.plan) => tokens_v.saturating_mul(12),
        Path::Hf if ctx.plan.framework == Framework::Verl => tokens_v.saturating_mul(2),
        Path::Hf => tokens_v.saturating_mul(10),
    }
}

/// The planner's families Liger's kernels patch, as (family, by LLaMA-Factory, by VeRL).
/// LLaMA-Factory picks an `apply_liger_kernel_to_*` by `model_type`
/// (`src/llamafactory/model/model_utils/liger_kernel.py`: `glm` and `glm4`, `llama`, `mistral`,
/// `mixtral`, `qwen2`, `qwen3`, `qwen3_moe` among the types it lists); VeRL's `use_liger` asks
/// Liger to patch the model instance (`_apply_liger_kernel_to_instance`,
/// `MODEL_TYPE_TO_APPLY_LIGER_FN` in `liger_kernel/transformers/monkey_patch.py`, liger-kernel
/// 0.8.5: no `glm`, but DeepSeek's). Any other model trains unpatched.
const LIGER_PATCHED: &[(model::Family, bool, bool)] = &[
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
];

/// Whether the plan's HF modules run Liger's kernels: LLaMA-Factory's `enable_liger_kernel` or
/// VeRL's `use_liger` on a model type it patches ([`liger_patches`]): fused RMSNorm, SwiGLU, rotary
/// embedding and, under transformers 5, MoE experts.
pub(crate) fn liger(plan: &Plan) -> bool {
    plan.liger_kernel && liger_patches_model(plan)
}

/// Whether the plan's framework patches its model with Liger's kernels ([`liger_patches`]). Both
/// pick the patch by `model_type`, so a config whose `model_type` is unknown (read Llama-like) is
/// not patched: LLaMA-Factory logs that the model does not support Liger and trains on.
pub(crate) fn liger_patches_model(plan: &Plan) -> bool {
    let unknown =
        plan.model.warnings.iter().any(|w| matches!(w, crate::hf::ImportWarning::UnknownModelType(_)));
    !unknown && liger_patches(plan.framework, plan.model.arch.family)
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
        && matches!(plan.method, Method::Pretrain | Method::SftFull | Method::Lora | Method::Qlora)
}

/// What Liger's fused linear cross entropy holds for one micro-batch of `b·s` tokens
/// (`liger_kernel/ops/fused_linear_cross_entropy.py`, `fused_linear_cross_entropy_forward`): it
/// runs the head and the loss chunk by chunk in forward, each chunk's logits (`chunk_size` tokens ×
/// V, in the matmul's 16-bit output) turned into their gradient in place, and keeps only the
/// hidden state's gradient (`grad_input`, the input's dtype: `hidden_bytes` a unit) and the fp32
/// loss per token for backward. The chunk holds about as many logits as the hidden state has
/// units: `inc_factor = ⌈V / h⌉`, `chunk_size = next_power_of_2(⌈b·s / inc_factor⌉)`, at most b·s.
fn liger_loss_bytes(ctx: &Ctx, hidden_bytes: u64) -> LigerLoss {
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
struct LigerLoss {
    /// One chunk's logits, their gradient written over them.
    chunk_logits: u64,
    /// The gradient of the hidden state the head reads, kept for backward.
    grad_input: u64,
    /// The fp32 loss of each token.
    loss: u64,
}

impl LigerLoss {
    /// Everything held at once in forward.
    fn total(&self) -> u64 {
        self.chunk_logits.saturating_add(self.grad_input).saturating_add(self.loss)
    }
}

/// Whether the plan's loss is the HF `Trainer`'s (transformers' `ForCausalLMLoss`): LLaMA-Factory's.
/// Memory (its backward's 12sbV) and time (its fp32 passes) both read it.
pub(crate) fn hf_trainer_loss(plan: &Plan) -> bool {
    plan.framework == Framework::LlamaFactory
}

/// Tokens times the vocabulary of one micro-batch: the logits' elements.
fn tokens_v(ctx: &Ctx) -> u64 {
    let (b, seq) = micro_batch_shape(ctx);
    // Saturating: 65,536 sequences of 10^7 tokens over a 10^7 vocabulary pass 2^64 bytes.
    b.saturating_mul(seq).saturating_mul(ctx.arch.vocab_size)
}

/// Whether the step runs under plain PyTorch, its allocations known moment by moment: LLaMA-Factory
/// without DeepSpeed (ZeRO 0, nothing offloaded; PyTorch DDP over several devices), fine-tuning or
/// pre-training with its HF `Trainer`. tools/gpu_peak measured it on one device.
pub(crate) fn plain_torch(plan: &Plan) -> bool {
    plan.framework == Framework::LlamaFactory
        && !plan.parallel.zero_stage.shards_optimizer()
        && !plan.parallel.offload_optimizer
        && !plan.parallel.offload_params
        && matches!(plan.method, Method::Pretrain | Method::SftFull | Method::Lora | Method::Qlora)
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
fn plain_torch_peak(ctx: &Ctx, states: &StageMemory, act: &ActivationShape) -> (StageMemory, PeakMoment) {
    let (plan, arch) = (ctx.plan, ctx.arch);
    // One micro-batch in flight: the HF path has no pipeline.
    let (b, seq) = micro_batch_shape(ctx);
    let tokens = b.saturating_mul(seq);
    let tokens_v = tokens_v(ctx);
    let (h, layers) = (arch.hidden_size, states.n_layers);
    let autocast = plan.precision != Precision::Fp32;
    let full = !plan.trains_lora();
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
    let cast_inputs = match full && autocast {
        true => {
            let attention = match arch.attention {
                model::Attention::Gqa { fused_qkv: true, .. } => 1,
                model::Attention::Gqa { .. } => 3,
                // MLA's query and compressed key/value projections.
                model::Attention::Mla { .. } => 2,
            };
            let mlp = if arch.mlp.kind == MlpKind::Gated { 2 } else { 1 };
            (2 * (attention + mlp) * h).saturating_mul(tokens)
        }
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
            .saturating_add(cast_inputs.saturating_mul(layers)),
    };
    let first_layer = ((act.first_layer + lora_layer).max(0.0) as u64).saturating_add(cast_inputs);
    // Autocast casts the weights of the linear layers and the output head (not the input
    // embedding's lookup) to 16 bits; fp32 training casts nothing. Norm weights, a few thousand a
    // layer, are counted with them.
    let cast = match (autocast, full) {
        (false, _) => 0,
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
    let kept_casts = if checkpointed { 0 } else { cast };
    if liger_fused_loss(plan) {
        let head_gradient = if full { arch.vocab_size.saturating_mul(h).saturating_mul(4) } else { 0 };
        let recomputed = if checkpointed { first_layer } else { 0 };
        // The hidden state is fp32 where the residual stream is: fp32 training, or full fine-tuning
        // under autocast (fp32 weights).
        let hidden_fp32 = plan.precision == Precision::Fp32 || (full && autocast);
        let loss = liger_loss_bytes(ctx, if hidden_fp32 { 4 } else { 2 });
        return liger_peak(
            |weights, activations, logits| at(w.saturating_add(weights), head_gradient, activations, logits),
            (cast, kept_casts),
            (saved, recomputed),
            &loss,
            backward_end,
        );
    }
    let forward = at(w.saturating_add(cast), 0, saved, tokens_v.saturating_mul(10));
    let loss_backward = at(w.saturating_add(kept_casts), 0, saved, tokens_v.saturating_mul(12));
    highest([
        (forward, PeakMoment::Forward),
        (loss_backward, PeakMoment::LossBackward),
        (backward_end, PeakMoment::BackwardEnd),
    ])
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
fn liger_peak(
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

/// The moment with the most bytes (the first of equals).
fn highest(moments: [(StageMemory, PeakMoment); 3]) -> (StageMemory, PeakMoment) {
    let [first, rest @ ..] = moments;
    rest.into_iter().fold(first, |a, b| if b.0.total() > a.0.total() { b } else { a })
}

/// Communication buffers, and the gathered parameters ZeRO-3 keeps live.
fn buffers(ctx: &Ctx) -> u64 {
    let per_group = ctx.plan.overheads().comm_buffer_bytes;
    let groups =
        [ctx.tp, ctx.pp, ctx.dp, ctx.cp, ctx.ep * ctx.etp].into_iter().filter(|&g| 1 < g).count() as u64;
    let mut res = groups * per_group;
    // VeRL's FSDP engine unshards each decoder layer's unit in bf16 to compute it, sharded or not
    // (at ZeRO-0 over a group of one: the cast is the unsharding), and frees it after: two units
    // at a time, the one computing and the one prefetched. At ZeRO-1/2 the whole model's copy is
    // counted with the weights instead ([`verl_compute_copy_bytes`]).
    let verl_units = verl_casts_to_compute(ctx.plan) && !verl_keeps_parameters_whole(ctx.plan);
    if (ctx.path == Path::Hf && ctx.plan.parallel.zero_stage.shards_params() && 1 < ctx.dp) || verl_units {
        // ZeRO-3 gathers a layer's full parameters to compute it, and prefetches the next:
        // two layers in bf16 (`stage3_prefetch_bucket_size`, `stage3_max_live_parameters`).
        let layers = &ctx.summary.layers;
        let largest = layers.iter().map(|l| l.params_per_layer).max().unwrap_or(0);
        res += 2 * largest * 2;
    }
    res
}

/// Whether MindSpeed's swap-optimizer is in effect: a MindSpeed framework's Megatron path with the
/// distributed optimizer, which the feature requires (`swap_optimizer_feature.py`
/// `dependency_check(args, 'use_distributed_optimizer')`; rule mindspeed.swap_optimizer otherwise).
pub fn swaps_optimizer(plan: &Plan) -> bool {
    let p = &plan.parallel;
    p.swap_optimizer
        && p.distributed_optimizer
        && !p.offload_optimizer
        && matches!(plan.framework, Framework::MindSpeedLlm | Framework::MindSpeedRl)
        && !plan.trains_lora()
}

/// Host memory each node needs for what is offloaded or swapped: optimizer states (and ZeRO-3
/// parameters) of all its devices, pinned. DeepSpeed's estimator multiplies by 1.5 for buffers
/// (`estimate_zero3_model_states_mem_needs`, `additional_buffer_factor`).
fn host_bytes_per_node(ctx: &Ctx) -> u64 {
    let p = &ctx.plan.parallel;
    let swapped = swaps_optimizer(ctx.plan);
    if !p.offload_optimizer && !p.offload_params && !swapped {
        return 0;
    }
    let total = ctx.summary.counts.total() as f64;
    let trainable = match ctx.plan.trains_lora() {
        true => ctx.lora_params as f64,
        false => total,
    };
    let bytes = state_bytes(ctx.path, ctx.plan.precision);
    let model_parallel = (ctx.tp * ctx.pp * ctx.cp) as f64;
    let per_device_share = 1.0 / (model_parallel * ctx.dp as f64);
    let mut per_device = 0.0;
    if p.offload_optimizer || swapped {
        per_device += trainable * bytes.optimizer * per_device_share;
        // The fp32 gradient partitions ZeRO-Offload keeps beside the optimizer (above).
        if ctx.path == Path::Hf && p.zero_stage.shards_optimizer() {
            per_device += trainable * 4.0 * per_device_share;
        }
    }
    if p.offload_params {
        per_device += total * bytes.weights * per_device_share;
    }
    let devices = f64::from(ctx.plan.cluster.devices_per_node.get());
    (per_device * devices * 1.5) as u64
}

/// The rollout engine: vLLM reserves `gpu_memory_utilization` of the device for its weights and KV
/// cache (vLLM `gpu_memory_utilization`: "the fraction of GPU memory to be used for the model executor").
/// The KV cache a full batch needs: per token and layer, K and V of the key/value heads in bf16
/// (MLA: the compressed latent, `kv_lora_rank + qk_rope_head_dim`, as vLLM's MLA backends cache it),
/// sharded over the rollout TP. The weights are bf16: the routed experts spread over the rollout's
/// expert parallelism when it is on, the rest split by its TP ([`rollout_weights_bytes`]).
pub fn rollout_memory(plan: &Plan) -> RolloutMemory {
    rollout_memory_of(plan, &model::count_params(&plan.model.arch))
}

/// [`rollout_memory`] of a model of `counts` parameters (counted once, [`ModelFacts`]).
fn rollout_memory_of(plan: &Plan, counts: &model::ParamCounts) -> RolloutMemory {
    let engine_bytes = (plan.hardware.hw.memory_bytes as f64 * plan.rl.gpu_memory_utilization_frac) as u64;
    let (rest_bytes, experts_bytes) = rollout_weights_bytes(
        plan,
        counts,
        u64::from(plan.rl.rollout_tp.get()),
        u64::from(plan.rl.rollout_ep.get()),
    );
    let weights_bytes = rest_bytes.saturating_add(experts_bytes);
    RolloutMemory {
        engine_bytes,
        weights_bytes,
        experts_bytes,
        kv_cache_bytes: engine_bytes.saturating_sub(weights_bytes),
        kv_cache_needed_bytes: kv_cache_needed_bytes(plan),
    }
}

/// The bf16 weights on the fullest device of a rollout engine at TP `tp` and EP `ep`: the rest and
/// the routed experts.
/// Without expert parallelism vLLM splits every layer, experts included, by the TP. With it
/// (`enable_expert_parallel`), each of the `rollout_ep` ranks holds whole experts, the first ranks
/// one more when they do not divide evenly (vLLM `determine_expert_map`,
/// `vllm/model_executor/layers/fused_moe/layer.py`), and the rest stays split by the TP;
/// MindSpeed-RL's engine spreads the experts over its TP × EP ranks the same way
/// (`vllm_weight_container.py`: `_infer_ep_size * _infer_tp_size`).
pub fn rollout_weights_bytes(plan: &Plan, counts: &model::ParamCounts, tp: u64, ep: u64) -> (u64, u64) {
    let (tp, ep) = (tp.max(1), ep.max(1));
    let n_experts = plan.model.arch.moe.as_ref().map_or(0, |moe| moe.n_experts);
    if ep == 1 || n_experts == 0 {
        let all = counts.total().saturating_mul(BF16_BYTES) / tp;
        let experts = counts.experts.saturating_mul(BF16_BYTES) / tp;
        return (all - experts.min(all), experts.min(all));
    }
    let rest = counts.total().saturating_sub(counts.experts).saturating_mul(BF16_BYTES) / tp;
    let experts =
        (counts.experts / n_experts).saturating_mul(n_experts.div_ceil(ep)).saturating_mul(BF16_BYTES);
    (rest, experts)
}

/// The KV cache the rollout engine needs for `max_num_seqs` sequences of the longest prompt and
/// response, at the rollout's TP.
pub fn kv_cache_needed_bytes(plan: &Plan) -> u64 {
    let arch = &plan.model.arch;
    let rl = &plan.rl;
    let tp = u64::from(rl.rollout_tp.get());
    let per_token_layer = match arch.attention {
        model::Attention::Gqa { n_kv_heads, head_dim, .. } => {
            2 * n_kv_heads * head_dim * BF16_BYTES / tp.min(n_kv_heads)
        }
        model::Attention::Mla { kv_lora_rank, qk_rope_head_dim, .. } => {
            (kv_lora_rank + qk_rope_head_dim) * BF16_BYTES
        }
    };
    let max_model_len = u64::from(rl.max_prompt_length.get()) + u64::from(rl.max_response_length.get());
    // Saturating: u32 sequence counts and lengths can ask for more than 2^64 bytes.
    u64::from(rl.max_num_seqs.get())
        .saturating_mul(max_model_len)
        .saturating_mul(arch.n_layers)
        .saturating_mul(per_token_layer)
}

/// RL (GRPO, PPO): the actor, its frozen reference and (PPO) a critic of the same size share the
/// devices with the rollout engine. Phases, after VeRL's `ActorRolloutRefWorker` colocation:
/// rollout holds the engine (its `gpu_memory_utilization` share: weights at rollout TP and KV cache)
/// beside the training weights; log-prob adds inference activations; update is the training step.
///
/// Every rank goes through every phase, so each phase is taken at the rank where it peaks: with
/// pipeline stages, the rank holding the embedding or the head peaks in rollout (the most weights)
/// while a middle rank with more activations in flight may peak in the update.
fn rl_phases(ctx: &Ctx, stages: &[StageMemory]) -> Vec<PhaseMemory> {
    let plan = ctx.plan;
    if !matches!(plan.method, Method::Grpo | Method::Ppo) {
        return Vec::new();
    }
    let capacity = plan.hardware.hw.memory_bytes as f64;
    let engine = (capacity * plan.rl.gpu_memory_utilization_frac) as u64;
    // One stage's parts in a phase, in the order they are listed; a zero part is left out at the end.
    let verl = plan.framework.is_verl();
    let (params_out, optimizer_out) =
        (verl && plan.parallel.offload_params, verl && plan.parallel.offload_optimizer);
    let unless = |bytes: u64, offloaded: bool| if offloaded { 0 } else { bytes };
    let parts_of = |stage: &StageMemory, phase: &'static str| -> [(&'static str, u64); 9] {
        // PPO's critic, the actor's size. VeRL's launch file offloads it as the actor (its engine
        // config takes the same `param_offload` and `optimizer_offload`): what it offloads is out
        // in every phase here, its own update taking what the actor's does, one after the other.
        // VeRL's FSDP holds its 16-bit copies only while it computes ([`verl_compute_copy_bytes`]),
        // not while the engine generates; the critic alike.
        let compute_copy = match phase {
            "rollout" => verl_compute_copy_bytes(plan, ctx.summary, stage.params),
            _ => 0,
        };
        let critic = match plan.method {
            Method::Ppo => unless(
                stage.weights_bytes.saturating_sub(compute_copy).saturating_add(stage.gradients_bytes),
                params_out,
            )
            .saturating_add(unless(stage.optimizer_bytes, optimizer_out)),
            _ => 0,
        };
        // The reference model: frozen bf16 weights, sharded as the actor's; with LoRA it is the
        // actor's own base with the adapters disabled (VeRL `ref_in_actor` when lora_rank > 0).
        // Both launch files keep it on the host but for its log-probabilities: VeRL's offloads it
        // (`ref.fsdp_config.param_offload=True`), and its engine loads the weights for that pass
        // and offloads them after (verl 0.9.1 `BaseEngineCtx._context_switch`,
        // verl/workers/engine/base.py); MindSpeed-RL's integrated worker loads and offloads its
        // reference around `compute_ref_log_prob` (mindspeed_rl/workers/integrated_worker.py).
        let offloaded_reference = phase != "log_prob";
        let reference = if plan.rl.lora || offloaded_reference { 0 } else { stage.weights_bytes };
        // MindSpeed-RL's launch file offloads the actor's parameters, gradients and optimizer
        // states while the engine generates (`generate_config.offload_train_param`, `_grad`,
        // `_optimizer`: `MegatronShardingManager.enter_infer_mode`), and between updates keeps
        // the parameters alone (`exit_train_mode` offloads the optimizer states and gradients,
        // `enter_forward_mode` loads the parameters), mindspeed_rl/workers/resharding/megatron_sharding_manager.py.
        let mindspeed_rl = plan.framework == crate::plan::Framework::MindSpeedRl;
        // VeRL's engine offloads what `param_offload` and `optimizer_offload` name outside its
        // passes: the parameters while the engine generates, the optimizer states until the
        // update (`BaseEngineCtx._context_switch`: eval mode loads the model alone, train mode the
        // model, gradients and optimizer; both offload them on exit), verl/workers/engine/base.py.
        let (w, o) = match phase {
            "rollout" if mindspeed_rl => (0, 0),
            "log_prob" if mindspeed_rl => (stage.weights_bytes, 0),
            "rollout" => (
                unless(stage.weights_bytes.saturating_sub(compute_copy), params_out),
                unless(stage.optimizer_bytes, optimizer_out),
            ),
            "log_prob" => (stage.weights_bytes, unless(stage.optimizer_bytes, optimizer_out)),
            _ => (stage.weights_bytes, stage.optimizer_bytes),
        };
        // Gradients are freed after each update (`zero_grad(set_to_none=True)`); the rest stays
        // unless offloaded. Rollout adds the engine, log-prob the logits, update the whole
        // training stage.
        let (b, h) = (stage.buffers_bytes, stage.overhead_bytes);
        let persistent = |extra| {
            [
                ("weights", w),
                ("optimizer", o),
                ("buffers", b),
                ("overhead", h),
                ("reference", reference),
                ("critic", critic),
                extra,
                ("", 0),
                ("", 0),
            ]
        };
        match phase {
            "rollout" => persistent(("engine", engine)),
            // VeRL takes the entropy with the old log-probabilities (`_compute_old_log_prob`:
            // `calculate_entropy=True`, verl/trainer/ppo/ray_trainer.py), through the logits'
            // softmax and its product with them (`entropy_from_logits`): three bf16 copies.
            "log_prob" if verl => persistent(("logits", stage.logits_bytes.saturating_mul(3))),
            "log_prob" => persistent(("logits", stage.logits_bytes)),
            _ => [
                ("weights", w),
                ("gradients", stage.gradients_bytes),
                ("optimizer", o),
                ("activations", stage.activations_bytes),
                ("logits", stage.logits_bytes),
                ("buffers", b),
                ("overhead", h),
                ("reference", reference),
                ("critic", critic),
            ],
        }
    };
    // Saturating, as `StageMemory::total`: an absurd plan's terms can each be near 2^64.
    let total = |parts: &[(&'static str, u64)]| parts.iter().fold(0u64, |acc, &(_, b)| acc.saturating_add(b));
    ["rollout", "log_prob", "update"]
        .into_iter()
        .map(|phase| {
            // Worked out on the stack for every rank (a pipeline may have thousands); the parts
            // listed are the highest rank's.
            let parts = stages
                .iter()
                .map(|stage| parts_of(stage, phase))
                .max_by_key(|parts| total(parts))
                .unwrap_or_else(|| parts_of(&StageMemory::default(), phase));
            let parts: Vec<(&'static str, u64)> = parts.into_iter().filter(|&(_, b)| 0 < b).collect();
            PhaseMemory { phase, total: total(&parts), parts }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each rank's count from [`InFlight`] is the integer formula's to the bit: Megatron's warm-up
    /// count ([`in_flight_microbatches`]) for 1F1B, interleaved (which `Auto`, `OneFOneB` and
    /// `Interleaved` run) and ZB-H1, every micro-batch for GPipe, pp + ½ capped at m for DualPipeV.
    #[test]
    fn in_flight_is_the_formula_per_rank() {
        use crate::plan::PipelineSchedule;
        let mut checked = 0;
        for &schedule in PipelineSchedule::ALL {
            for (pp, vpp, m) in
                [(1, 1, 1), (1, 3, 8), (2, 1, 1), (4, 1, 3), (4, 2, 64), (8, 3, 5), (64, 4, 1024), (7, 5, 2)]
            {
                let in_flight = InFlight::new(schedule, pp, vpp, m);
                for rank in 0..pp {
                    let expected = match schedule {
                        _ if pp <= 1 => 1.0,
                        PipelineSchedule::GPipe => m as f64,
                        PipelineSchedule::DualPipeV => (pp as f64 + 0.5).min(m as f64),
                        _ => in_flight_microbatches(pp, vpp, rank, m),
                    };
                    assert_eq!(
                        in_flight.at(rank).to_bits(),
                        expected.to_bits(),
                        "{schedule:?} pp {pp} vpp {vpp} m {m} rank {rank}"
                    );
                    checked += 1;
                }
            }
        }
        // Every rank of every shape: 91 ranks a schedule.
        assert_eq!(checked, 91 * PipelineSchedule::ALL.len());
    }

    /// The counting shortcut of [`same_shape`] agrees with walking both ranks' layers by kind, for
    /// MoE layouts of every pattern: DeepSeek-V3's first dense layers, Qwen3's all-MoE stack,
    /// and Qwen2-MoE's every other layer with listed dense ones (split evenly, unevenly, interleaved).
    #[test]
    fn ranks_compare_by_counts_as_by_walking_their_layers() {
        let qwen2_moe = r#"{"name": "q", "hf_config": {"model_type": "qwen2_moe", "num_hidden_layers": 24,
            "decoder_sparse_step": 2, "mlp_only_layers": [5, 13], "num_experts": 8, "num_experts_per_tok": 2,
            "moe_intermediate_size": 512, "hidden_size": 1024, "intermediate_size": 2048,
            "num_attention_heads": 8, "num_key_value_heads": 8, "vocab_size": 32000}}"#;
        let plans = [
            (r#""deepseek-v3""#, "\"pp\": 16"),
            (r#""deepseek-v3""#, "\"pp\": 8, \"vpp\": 2"),
            (r#""qwen3-235b-a22b""#, "\"pp\": 4, \"vpp\": 2"),
            (r#""qwen3-235b-a22b""#, "\"pp\": 16"),
            (qwen2_moe, "\"pp\": 4"),
            (qwen2_moe, "\"pp\": 3, \"vpp\": 2"),
            (qwen2_moe, "\"pp\": 5"),
        ];
        let mut compared = [0; 2];
        for (model, parallel) in plans {
            let text = format!(
                r#"{{"model": {model}, "framework": "megatron", "method": "pretrain", "cluster": {{"nodes": 32}},
                    "parallel": {{{parallel}, "uneven_layers": true}}, "batch": {{"global_batch": 512}}}}"#
            );
            let plan = Plan::from_json(&text).unwrap_or_else(|e| panic!("{text}: {e}"));
            let (arch, layout) = (&plan.model.arch, Layout::of(&plan));
            let kinds = |rank: u64| layout.rank_layers(rank).map(|l| model::is_moe_layer(arch, l));
            for rank in 1..layout.pp {
                let walked = kinds(rank - 1).eq(kinds(rank))
                    && layout.holds_embedding(rank - 1) == layout.holds_embedding(rank)
                    && layout.holds_loss(rank - 1) == layout.holds_loss(rank)
                    && layout.rank_mtp(rank - 1) == layout.rank_mtp(rank);
                assert_eq!(
                    same_shape(arch, &layout, rank - 1, rank),
                    walked,
                    "{text}: ranks {} and {rank}",
                    rank - 1
                );
                compared[usize::from(walked)] += 1;
            }
        }
        // Both answers occur.
        assert!(compared.iter().all(|&n| 0 < n), "{compared:?}");
    }
}
