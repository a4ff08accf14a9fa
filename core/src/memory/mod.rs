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
//!
//! Each kind of term has its module: model states (`states.rs`), activations (`activations.rs`),
//! logits and loss (`loss.rs`), RL's rollout and phases (`rl.rs`); this one lays them out per
//! stage and rank, adds the buffers and overheads, and finds the peak.

use crate::knobs::Effective;
use crate::layout::Layout;
use crate::model::{self, Architecture};
use crate::plan::{Framework, Method, Plan, Precision, RecomputeGranularity};

mod activations;
mod loss;
mod rl;
mod states;

pub use activations::*;
pub use loss::runs_plain_torch;
pub(crate) use loss::*;
pub use rl::*;
pub use states::*;

/// Bytes per element of a bf16 (or fp16) tensor.
pub const BF16_BYTES: u64 = 2;

/// Bytes per element of an fp32 tensor.
pub const FP32_BYTES: u64 = 4;

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

/// Bytes of bitsandbytes' 8-bit AdamW states a parameter: two moments of a byte each and, for
/// each, an fp32 absolute maximum per block of 2,048 elements (`Optimizer2State.init_state`,
/// bitsandbytes/optim/optimizer.py: `blocks = n // 2048`, `absmax1`, `absmax2`): 2 + 8/2048.
pub const ADAM_8BIT_BYTES_PER_PARAM: f64 = 2.00390625;

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
    /// What each node's NVMe volume holds where DeepSpeed offloads to it ([`nvme_swap`]).
    pub nvme_bytes_per_node: u64,
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
    /// Parameters the method trains: every one, LoRA's adapters, or freeze-tuning's layers.
    pub params_trained: u64,
    /// Where every layer runs, as memory counted it (time reads the same).
    pub layout: Layout,
    /// The activations' shapes this estimate worked out, for a plan that differs only in the
    /// micro-batch ([`estimate_rebatched`]).
    shapes: Shapes,
}

/// The activations' shapes an estimate worked out, by the first rank of each run of alike ranks
/// (the first few runs), and the micro-batch they are of: a plan that differs only in the
/// micro-batch, both powers of two, scales them ([`ActivationShape::scaled`]) rather than working
/// them out again. Scratch, not a figure: any two compare equal.
#[derive(Clone, Copy, Debug, Default)]
struct Shapes {
    micro_batch: u64,
    kept: [(u64, ActivationShape); 4],
    n: usize,
}

impl PartialEq for Shapes {
    fn eq(&self, _: &Shapes) -> bool {
        true
    }
}

impl Shapes {
    /// The shape kept for `rank`, scaled to micro-batch `micro_batch`, where both micro-batches
    /// are powers of two.
    fn scaled_to(&self, rank: u64, micro_batch: u64) -> Option<ActivationShape> {
        let powers = self.micro_batch.is_power_of_two() && micro_batch.is_power_of_two();
        let (_, shape) = self.kept[..self.n].iter().find(|(r, _)| *r == rank).filter(|_| powers)?;
        Some(shape.scaled(micro_batch as f64 / self.micro_batch as f64))
    }

    fn keep(&mut self, rank: u64, shape: ActivationShape) {
        if let Some(slot) = self.kept.get_mut(self.n) {
            *slot = (rank, shape);
            self.n += 1;
        }
    }
}

/// One pipeline stage's memory on one device, bytes.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct StageMemory {
    /// Decoder layers on this stage.
    pub n_layers: u64,
    /// Parameters this device computes with on this stage (after TP and EP, before ZeRO or FSDP
    /// sharding): what its gradients and optimizer step cover.
    pub params: u64,
    /// Of those, the routed experts' (after EP and expert TP): their gradients are reduced and
    /// their optimizer states sharded over the expert-data-parallel group, not DP × CP.
    pub expert_params: u64,
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
    /// The last layer's backward after the loss's: the saved activations and that layer
    /// recomputed, with the hidden state's gradient Liger's fused loss left, or DoRA's norms
    /// worked out again; no logits.
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

/// Bytes of a parameter's compute copy (what FSDP and ZeRO-3 gather, and FSDP's unsharded
/// gradients hold): 16-bit, fp32 when the plan trains in fp32.
pub fn compute_bytes_per_param(plan: &Plan) -> f64 {
    if plan.precision == Precision::Fp32 { 4.0 } else { BF16_BYTES as f64 }
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

/// The plan's shape, derived once.
struct Ctx<'a> {
    plan: &'a Plan,
    arch: &'a Architecture,
    summary: &'a model::Summary,
    /// LoRA adapter parameters of the whole model for the plan's rank and targets.
    lora_params: u64,
    /// The adapted linear modules outside the routed experts: (Σ input widths, count).
    lora_inputs: (u64, u64),
    /// DoRA's shape over those modules where the plan trains DoRA ([`dora_of`]), else all 0.
    dora: model::DoraShape,
    /// The parameters freeze-tuning trains, of the whole model ([`params_of_layers`] of
    /// [`trained_layers`]); 0 for other methods.
    freeze_params: u64,
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
    /// It trains fp32 parameters under autocast ([`fp32_trainables`]; not with `pure_bf16`).
    fp32_trainables: bool,
    /// The communication buffers and gathered units every rank holds alike ([`buffers`]), worked
    /// out once for all the rank shapes.
    buffers_bytes: u64,
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
    estimate_with(&crate::knobs::effective(plan), &ModelFacts::recent(plan))
}

/// What memory needs from a plan's model and method, counted once: a search evaluates thousands of
/// plans of one model, and counting its tensors is most of an estimate's work.
#[derive(Clone, Debug, PartialEq)]
pub struct ModelFacts {
    summary: model::Summary,
    lora_params: u64,
    /// The adapted linear modules outside the routed experts: (Σ input widths, count).
    lora_inputs: (u64, u64),
    /// What DoRA would add to those modules; counted where the plan sets it (`lora.dora`).
    dora: model::DoraShape,
}

impl ModelFacts {
    /// Counts the plan's model (and its LoRA adapters when the method trains them).
    pub fn of(plan: &Plan) -> ModelFacts {
        let arch = &plan.model.arch;
        let (lora_params, lora_inputs, dora) = match plan.trains_lora() {
            true => {
                let (targets, scope) = (plan.lora.targets.list(), lora_scope(plan.framework));
                let rank = u64::from(plan.lora.rank.get());
                (
                    model::lora_params(arch, rank, &targets, scope),
                    model::lora_dense_inputs(arch, &targets, scope),
                    model::dora_shape(arch, &targets, scope),
                )
            }
            false => (0, (0, 0), model::DoraShape::default()),
        };
        ModelFacts { summary: model::Summary::of(arch), lora_params, lora_inputs, dora }
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

/// [`estimate`] with the model's counts already made and the plan as its framework runs it
/// ([`crate::knobs::effective`], which time takes too); `facts` must be [`ModelFacts::of`] a plan
/// with the same model, method and LoRA settings.
pub fn estimate_with(plan: &Effective, facts: &ModelFacts) -> Memory {
    estimate_from(plan, facts, None)
}

/// [`estimate_with`] for a plan that differs from the one `same_but_micro_batch` is the memory of
/// only in its micro-batch: the layout and each rank's bytes that the micro-batch does not change
/// (parameters, their states, buffers, overhead) are taken from it, the rest worked out, to the
/// same bytes. A search walks the micro-batch innermost and estimates most of its plans this way.
pub fn estimate_rebatched(plan: &Effective, facts: &ModelFacts, same_but_micro_batch: &Memory) -> Memory {
    estimate_from(plan, facts, Some(same_but_micro_batch))
}

fn estimate_from(plan: &Effective, facts: &ModelFacts, previous: Option<&Memory>) -> Memory {
    // Settings the plan's framework has no flag for play no part (`knobs::effective`).
    let plan: &Plan = plan;
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
    let m =
        packed_microbatches(plan, dp, cp, pp, vpp).unwrap_or_else(|| (step_samples(plan) / (b * dp)).max(1));
    let (summary, lora_inputs) = (&facts.summary, facts.lora_inputs);
    let dora = dora_of(plan, facts);
    // DoRA trains a magnitude per output unit of each adapted module beside the adapters.
    let lora_params = facts.lora_params.saturating_add(dora.outputs);
    let ctx = Ctx {
        plan,
        arch,
        summary,
        lora_params,
        lora_inputs,
        dora,
        freeze_params: trained_layers(plan).map_or(0, |layers| params_of_layers(arch, summary, layers)),
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
        plain_torch: plain_torch(plan),
        fp32_trainables: fp32_trainables(plan),
        buffers_bytes: 0,
    };
    let ctx = Ctx { buffers_bytes: buffers(&ctx), ..ctx };

    let Ranks { stages, worst_stage, offloaded, shapes, peak_moment } = ranks(&ctx, &layout, previous);
    let capacity_bytes = plan.hardware.hw.memory_bytes;
    let usable_bytes = (capacity_bytes as f64 * (1.0 - plan.overheads().allocator_reserve_frac)) as u64;
    let phases = rl_phases(&ctx, &stages);
    let rollout = matches!(plan.method, Method::Grpo | Method::Ppo)
        .then(|| rollout_memory_of(plan, &ctx.summary.counts));
    let peak_bytes = phases.iter().map(|p| p.total).max().unwrap_or(0).max(worst_stage);
    Memory {
        host_bytes_per_node: host_bytes(&ctx, &stages, offloaded),
        nvme_bytes_per_node: nvme_bytes_per_node(&ctx),
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
        params_trained: trained_params(&ctx),
        layout,
        shapes,
    }
}

/// Each rank's bytes, and what they add up to ([`estimate_from`]).
struct Ranks {
    stages: Vec<StageMemory>,
    /// The most any rank holds.
    worst_stage: u64,
    /// The most one micro-batch offloads to the host from a rank.
    offloaded: u64,
    shapes: Shapes,
    /// A plain PyTorch step's moment of its peak, on the rank that peaks.
    peak_moment: Option<PeakMoment>,
}

/// Each rank's bytes, a run of alike ranks at a time; from `previous`'s where only the micro-batch
/// differs ([`estimate_rebatched`]).
fn ranks(ctx: &Ctx, layout: &Layout, previous: Option<&Memory>) -> Ranks {
    // A run of ranks shaped alike (the same layers by kind, the same embedding, loss and MTP
    // layers: every middle rank of an even split) holds the same bytes but for the micro-batches in
    // flight, so its shape is worked out once, for its first rank: its bytes, their total, and its
    // activations' shape, each rank adding only its activations in flight. A layer's activation
    // bytes by kind are worked out once for every rank.
    let (plan, arch, pp, b) = (ctx.plan, ctx.arch, layout.pp, u64::from(ctx.plan.batch.micro_batch.get()));
    let kinds = KindBytes::new(ctx);
    let in_flight = InFlight::of(ctx);
    let mut stages: Vec<StageMemory> = Vec::with_capacity(pp as usize);
    let (mut worst_stage, mut offloaded) = (0, 0);
    let mut shapes = Shapes { micro_batch: b, ..Shapes::default() };
    let mut peak_moment = None;
    let one_kind = model::one_layer_kind(arch).is_some() && arch.linear_attention.is_none();
    // The layers' activations of the last run's first rank, by how many layers it holds, for the
    // next runs that hold as many ([`LayersShape`]: the first, middle and last ranks of an even
    // split differ only by the embedding, loss and MTP layers): where the layers are all of one
    // kind and each chunk's count plays no part (one chunk a rank, or no full recomputation).
    let by_chunk = layout.chunks != 1 && plan.recompute.granularity == RecomputeGranularity::Full;
    let mut alike_layers = (one_kind && !by_chunk).then_some(None);
    let mut rank = 0;
    while rank < pp {
        let end = alike_until(arch, layout, rank, one_kind);
        // A plain PyTorch step's terms are those of its peak moment, which the micro-batch picks:
        // nothing carries over from another micro-batch's.
        let states = previous.filter(|_| !ctx.plain_torch).and_then(|p| p.stages.get(rank as usize));
        let scaled = previous
            .filter(|_| activations::scales_with_micro_batch(ctx))
            .and_then(|p| p.shapes.scaled_to(rank, b));
        let (stage, act) = stage_shape(ctx, &kinds, layout, rank, (states, scaled), alike_layers.as_mut());
        shapes.keep(rank, act);
        offloaded = offloaded.max(act.offloaded as u64);
        match ctx.plain_torch {
            true => {
                let (peak, moment) = plain_torch_peak(ctx, &stage, &act);
                if worst_stage < peak.total() {
                    worst_stage = peak.total();
                    peak_moment = Some(moment);
                }
                stages.extend((rank..end).map(|_| peak.clone()));
            }
            false => {
                // The terms but the activations (none yet): saturating sums add in any order.
                let rest = stage.total();
                let alike = StageMemory { offloaded_activations_bytes: act.offloaded as u64, ..stage };
                for r in rank..end {
                    let activations_bytes = act.on_device(in_flight.at(r));
                    worst_stage = worst_stage.max(rest.saturating_add(activations_bytes));
                    stages.push(StageMemory { activations_bytes, ..alike });
                }
            }
        }
        rank = end;
    }
    Ranks { stages, worst_stage, offloaded, shapes, peak_moment }
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
    /// Its Gated DeltaNet layers (0 for every other model).
    n_linear: u64,
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
        let n_linear = match arch.linear_attention {
            Some(_) => layout
                .rank_stages(rank)
                .map(|s| model::linear_attention_layers_in(arch, s.layers.clone()))
                .sum(),
            None => 0,
        };
        RankShape {
            n_layers: holds.n_layers,
            n_moe,
            n_linear,
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

/// The end of the run of ranks from `rank` on shaped alike ([`RankShape`]); of a model whose
/// layers are all of one kind (`one_kind`: [`model::one_layer_kind`], no Gated DeltaNet layers),
/// those that hold alike ([`Layout::alike_until`]), a comparison of their sums alone.
fn alike_until(arch: &Architecture, layout: &Layout, rank: u64, one_kind: bool) -> u64 {
    let pp = layout.pp;
    if one_kind {
        return layout.alike_until(rank).min(pp);
    }
    let this = RankShape::of(arch, layout, rank);
    let mut end = rank + 1;
    while end < pp
        && RankShape::of(arch, layout, end).same_as(&this, || same_kinds(arch, layout, end - 1, end))
    {
        end += 1;
    }
    end
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
    /// How many layers the rank holds (that keep activations, [`StageLayers::saving`]).
    n: u64,
    /// The rank's positions before the first one counted.
    skip: u64,
    /// Whether every layer of the model holds experts ([`model::one_layer_kind`]): the MoE layers
    /// among positions are then their count.
    all_moe: bool,
}

impl<'a> StageLayers<'a> {
    fn of(arch: &'a Architecture, layout: &'a Layout, rank: u64) -> StageLayers<'a> {
        let all_moe = model::one_layer_kind(arch) == Some(true);
        StageLayers { arch, layout, rank, n: layout.rank_n_layers(rank), skip: 0, all_moe }
    }

    /// The layers among these that keep activations for backward: every one but under
    /// freeze-tuning, whose frozen layers run outside autograd's graph (their inputs need no
    /// gradient, and LLaMA-Factory checkpoints only the layers with trainable parameters:
    /// `get_custom_gradient_checkpointing_func`, src/llamafactory/model/model_utils/checkpointing.py),
    /// so the trained ones alone: the model's last, so the rank's last.
    fn saving(self, plan: &Plan) -> StageLayers<'a> {
        let Some(trained) = trained_layers(plan) else { return self };
        let held: u64 = self
            .layout
            .rank_stages(self.rank)
            .map(|s| s.layers.end.min(trained.end).saturating_sub(s.layers.start.max(trained.start)))
            .sum();
        let n = held.min(self.n);
        StageLayers { skip: self.skip + (self.n - n), n, ..self }
    }

    /// The layer indices at positions `from..to`, chunk by chunk.
    fn ranges(&self, from: u64, to: u64) -> impl Iterator<Item = std::ops::Range<u64>> + '_ {
        let (from, to) = (from + self.skip, to + self.skip);
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
            // The positions `ranges` finds: those below the rank's `n` counted ones.
            Some(_) if self.all_moe => to.min(self.n).saturating_sub(from),
            Some(_) => self.ranges(from, to).map(|r| model::moe_layers_in(self.arch, r)).sum(),
        }
    }

    /// The Gated DeltaNet layers among positions `from..to` of the stage.
    fn linear_attention_in(&self, from: u64, to: u64) -> u64 {
        match self.arch.linear_attention {
            None => 0,
            Some(_) => self.ranges(from, to).map(|r| model::linear_attention_layers_in(self.arch, r)).sum(),
        }
    }
}

/// A rank's bytes but for its activations, and the shape of those ([`ActivationShape::in_flight`]
/// gives them for the rank's micro-batches in flight). The bytes that do not depend on the
/// micro-batch come from `states` when given, and the shape from `shape`: the same rank's of a
/// plan that differs only in it (the shape scaled to this micro-batch).
fn stage_shape(
    ctx: &Ctx,
    kinds: &KindBytes,
    layout: &Layout,
    stage_idx: u64,
    (states, shape): (Option<&StageMemory>, Option<ActivationShape>),
    alike: Option<&mut Option<(u64, LayersShape)>>,
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
    // Freeze-tuning's frozen embedding keeps no output for backward either.
    let frozen_embedding = ctx.plan.method == Method::Freeze;
    let (saving, embedding) = (layers.saving(ctx.plan), first && !frozen_embedding);
    let act = match shape {
        Some(scaled) => {
            debug_assert_eq!(scaled, activation_shape(ctx, kinds, &saving, embedding, mtp), "rescaled");
            scaled
        }
        None => {
            let layers = match alike {
                Some(&mut Some((n, layers))) if n == saving.n => {
                    debug_assert_eq!(layers, layers_shape(ctx, kinds, &saving), "alike layers");
                    layers
                }
                _ => layers_shape(ctx, kinds, &saving),
            };
            if let Some(alike) = alike {
                *alike = Some((saving.n, layers));
            }
            layers.with(embedding, mtp)
        }
    };
    if last || 0 < mtp {
        // The loss's logits, and each MTP layer's own (it predicts one more token, through the
        // shared head), on the stages that compute them.
        res.logits_bytes = logits_bytes(ctx).saturating_mul(u64::from(last) + mtp);
    }
    (res, act)
}

/// The decoder layers freeze-tuning trains: the model's last `freeze_layers`, or every layer when
/// it has fewer, as LLaMA-Factory picks them (`_setup_freeze_tuning`,
/// src/llamafactory/model/adapter.py: `range(max(0, num_layers - freeze_trainable_layers),
/// num_layers)`, every module of each with `freeze_trainable_modules: all`); `None` for every other
/// method. The embedding, the final norm and the head stay frozen (they are no decoder layer's).
pub fn trained_layers(plan: &Plan) -> Option<std::ops::Range<u64>> {
    (plan.method == Method::Freeze).then(|| {
        let n = plan.model.arch.n_layers;
        n.saturating_sub(u64::from(plan.freeze_layers.get()))..n
    })
}

/// The parameters of decoder layers `layers`, counted by kind.
pub fn params_of_layers(arch: &Architecture, summary: &model::Summary, layers: std::ops::Range<u64>) -> u64 {
    let n_moe = model::moe_layers_in(arch, layers.clone());
    let n_dense = (layers.end.saturating_sub(layers.start)).saturating_sub(n_moe);
    let n_linear = model::linear_attention_layers_in(arch, layers) as i64;
    n_dense
        .saturating_mul(summary.dense_layer.total())
        .saturating_add(n_moe.saturating_mul(summary.moe_layer.total()))
        .saturating_add_signed(n_linear.saturating_mul(summary.linear_attention_delta))
}

/// The parameters of the whole model the plan trains: LoRA's adapters, freeze-tuning's layers, or
/// every parameter.
fn trained_params(ctx: &Ctx) -> u64 {
    if ctx.plan.trains_lora() {
        ctx.lora_params
    } else if ctx.plan.method == Method::Freeze {
        ctx.freeze_params
    } else {
        ctx.summary.counts.total()
    }
}

/// DoRA's shape over the adapted modules where `plan` (its effective settings) trains DoRA, else
/// all 0; `facts` must be [`ModelFacts::of`] the plan.
pub fn dora_of(plan: &Plan, facts: &ModelFacts) -> model::DoraShape {
    match plan.trains_lora() && plan.lora.dora {
        true => facts.dora,
        false => model::DoraShape::default(),
    }
}

/// The bytes DoRA's norms take while one module works them out, every forward (and again as a
/// checkpointed layer is recomputed; PEFT 0.18.1 `DoraLinearLayer.forward`): an in × in identity
/// of the input's dtype (`x_eye`) multiplied through the adapter to get its weight, and the base
/// weight in the input's dtype, which `get_weight_norm` adds the scaled adapter weight to, all
/// alive until the forward returns. With 16-bit adapters (a DeepSpeed engine) that is the identity
/// and three 16-bit weights: 2 · (in² + 3 · in · out). With fp32 adapters under autocast (plain
/// PyTorch without `pure_bf16`) PEFT casts the input to fp32 first (`Linear.forward`,
/// `_cast_input_dtype`), so the identity is fp32 beside autocast's 16-bit copy of it that the
/// adapter's graph keeps, the base weight is copied to fp32 and the sum is fp32:
/// 6 · in² + 12 · in · out (tools/hf_activations
/// `autocast.py` sees the identity's 16-bit copy and the fp32 norms). QLoRA dequantizes the base
/// weight to 16 bits first (`dequantize_module_weight`): 2 · in · out more. The module with the
/// largest 16-bit workspace ([`model::DoraShape::widest`]).
fn dora_workspace_bytes(ctx: &Ctx) -> u64 {
    let (d_in, d_out) = ctx.dora.widest;
    let (squares, weights) = if ctx.fp32_trainables { (6, 12) } else { (2, 6) };
    let dequantized = if ctx.plan.method == Method::Qlora { 2 } else { 0 };
    let square = d_in.saturating_mul(d_in).saturating_mul(squares);
    square.saturating_add(d_in.saturating_mul(d_out).saturating_mul(weights + dequantized))
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
    // Under FSDP2's CPU offload every unit comes to the device so, a LoRA plan's frozen base too.
    let gathers_units = verl_casts_to_compute(ctx.plan) || verl_offload_policy(ctx.plan);
    let verl_units = gathers_units && !verl_keeps_parameters_whole(ctx.plan);
    if (ctx.path == Path::Hf && ctx.plan.parallel.zero_stage.shards_params() && 1 < ctx.dp) || verl_units {
        // ZeRO-3 gathers a layer's full parameters to compute it, and prefetches the next:
        // two layers in bf16 (`stage3_prefetch_bucket_size`, `stage3_max_live_parameters`).
        let layers = &ctx.summary.layers;
        let largest = layers.iter().map(|l| l.params_per_layer).max().unwrap_or(0);
        res += 2 * largest * 2;
    }
    // DoRA's norms, worked out module by module in every forward: a plain PyTorch step counts them
    // at the moment they happen (`plain_torch_peak`).
    if !ctx.plain_torch {
        res = res.saturating_add(dora_workspace_bytes(ctx));
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

/// Host memory a node needs: what is offloaded or swapped ([`host_bytes_per_node`]), and per device
/// `offloaded`, one micro-batch's offloaded activations; a VeRL reference's, its FSDP engine's fp32
/// shards ([`verl_reference_on_host`]) or its Megatron engine's fullest stage's weights between
/// passes ([`verl_reference_switched_bytes`]); and a VeRL actor's under FSDP2's CPU offload, its
/// shards and their states ([`verl_offload_host_bytes`]).
fn host_bytes(ctx: &Ctx, stages: &[StageMemory], offloaded: u64) -> u64 {
    let plan = ctx.plan;
    let per_device = offloaded
        .saturating_add(verl_reference_host_bytes(plan, ctx.summary.counts.total(), ctx.dp * ctx.cp))
        .saturating_add(verl_reference_switched_bytes(plan, stages))
        .saturating_add(verl_offload_host_bytes(ctx));
    let devices = u64::from(plan.cluster.devices_per_node.get());
    host_bytes_per_node(ctx).saturating_add(per_device.saturating_mul(devices))
}

/// Host memory each node needs for what is offloaded or swapped: optimizer states (and ZeRO-3
/// parameters) of all its devices, pinned. DeepSpeed's estimator multiplies by 1.5 for buffers
/// (`estimate_zero3_model_states_mem_needs`, `additional_buffer_factor`). What DeepSpeed swaps to
/// NVMe ([`nvme_swap`]) passes through pinned buffers instead ([`nvme_buffer_bytes`]).
fn host_bytes_per_node(ctx: &Ctx) -> u64 {
    let p = &ctx.plan.parallel;
    let swapped = swaps_optimizer(ctx.plan);
    // VeRL's FSDP2 CPU offload turns its engine's own offload off (`verl_offload_policy`); its host
    // bytes are counted with the reference's.
    if (!p.offload_optimizer && !p.offload_params && !swapped) || verl_offload_policy(ctx.plan) {
        return 0;
    }
    let nvme = nvme_swap(ctx.plan);
    let total = ctx.summary.counts.total() as f64;
    let bytes = state_bytes(ctx.path, ctx.plan.precision);
    let per_device_share = per_device_share(ctx);
    let mut per_device = 0.0;
    if (p.offload_optimizer || swapped) && !nvme.optimizer {
        per_device += optimizer_offload_bytes(ctx);
    }
    if p.offload_params && !nvme.params {
        per_device += total * bytes.weights * per_device_share;
    }
    let devices = f64::from(ctx.plan.cluster.devices_per_node.get());
    (per_device * devices * 1.5) as u64 + nvme_buffer_bytes(ctx, nvme) * devices as u64
}

/// A device's share of the model's states where ZeRO shards them over every rank.
fn per_device_share(ctx: &Ctx) -> f64 {
    1.0 / ((ctx.tp * ctx.pp * ctx.cp) as f64 * ctx.dp as f64)
}

/// The bytes a device offloads of its optimizer: its shard of the optimizer states and, under
/// ZeRO-Offload, the fp32 gradient partitions it keeps beside them (`stage_1_and_2.py` /
/// `stage3.py` with `offload_optimizer`).
fn optimizer_offload_bytes(ctx: &Ctx) -> f64 {
    let owned = trained_params(ctx) as f64 * per_device_share(ctx);
    let gradients = match ctx.path == Path::Hf && ctx.plan.parallel.zero_stage.shards_optimizer() {
        true => 4.0,
        false => 0.0,
    };
    owned * (state_bytes(ctx.path, ctx.plan.precision).optimizer + gradients)
}

/// What DeepSpeed keeps on the node's NVMe rather than in host memory (ZeRO-Infinity): the
/// optimizer's states and fp32 gradient partitions, and the 16-bit parameter partitions, each where
/// it is offloaded and `parallel.offload_device` is `nvme`. ZeRO-3's optimizer alone swaps
/// (`DeepSpeedZeroOptimizer_Stage3._configure_tensor_swapping`); ZeRO-1/2 keep the states in host
/// memory whatever the device (`stage_1_and_2.py`: any device but `none` is `cpu_offload`; rule
/// `zero.nvme_stage`), and parameter offload is ZeRO-3's alone.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct NvmeSwap {
    /// The optimizer states and fp32 gradient partitions.
    pub optimizer: bool,
    /// The 16-bit parameter partitions.
    pub params: bool,
}

/// What `plan` swaps to NVMe ([`NvmeSwap`]).
pub fn nvme_swap(plan: &Plan) -> NvmeSwap {
    let p = &plan.parallel;
    let deepspeed = matches!(plan.framework, Framework::DeepSpeed | Framework::LlamaFactory);
    if p.offload_device != crate::plan::OffloadDevice::Nvme || !deepspeed || !p.zero_stage.shards_params() {
        return NvmeSwap::default();
    }
    NvmeSwap { optimizer: p.offload_optimizer, params: p.offload_params }
}

/// DeepSpeed's `sub_group_size` as the launch files write it (`emit/deepspeed.rs`), elements:
/// ZeRO-3 steps the optimizer a sub-group at a time and swaps each in and out whole.
pub const SUB_GROUP_SIZE: u64 = 1_000_000_000;
/// The optimizer's NVMe swap buffers (`offload_optimizer.buffer_count`), as the launch files write
/// it: DeepSpeed's default (`DeepSpeedZeroOffloadOptimizerConfig`), one per fp32 tensor Adam keeps.
pub const NVME_OPTIMIZER_BUFFERS: u64 = 4;
/// The parameters' NVMe swap buffers (`offload_param.buffer_count`), as written: DeepSpeed's default
/// (`DeepSpeedZeroOffloadParamConfig`).
pub const NVME_PARAM_BUFFERS: u64 = 5;
/// Elements in each of those (`offload_param.buffer_size`), as written: DeepSpeed's default.
pub const NVME_PARAM_BUFFER_ELEMENTS: u64 = 100_000_000;

/// The pinned host buffers one device's swaps to NVMe take, bytes. The optimizer's:
/// [`NVME_OPTIMIZER_BUFFERS`] buffers of the largest sub-group's elements in fp32
/// (`OptimizerSwapper.__init__`, `SwapBufferManager(num_elems=largest_numel,
/// count=swap_config.buffer_count)`, deepspeed/runtime/swap_tensor/optimizer_utils.py), a
/// sub-group being at most the device's shard; the parameters': [`NVME_PARAM_BUFFERS`] buffers of
/// [`NVME_PARAM_BUFFER_ELEMENTS`] elements in the parameters' dtype
/// (`AsyncPartitionedParameterSwapper`, partitioned_param_swapper.py).
fn nvme_buffer_bytes(ctx: &Ctx, nvme: NvmeSwap) -> u64 {
    let mut bytes = 0.0;
    if nvme.optimizer {
        let owned = trained_params(ctx) as f64 * per_device_share(ctx);
        bytes += NVME_OPTIMIZER_BUFFERS as f64 * owned.min(SUB_GROUP_SIZE as f64) * FP32_BYTES as f64;
    }
    if nvme.params {
        let elements = (NVME_PARAM_BUFFERS * NVME_PARAM_BUFFER_ELEMENTS) as f64;
        bytes += elements * state_bytes(ctx.path, ctx.plan.precision).weights;
    }
    bytes as u64
}

/// What each node keeps on its NVMe volume ([`NvmeSwap`]): every device's fp32 parameter
/// partition, both moments and fp32 gradient partition (each swapped as a file of its own:
/// `OptimizerSwapper._swap_in_parameter` and `swap_out_gradients`), and its 16-bit parameter
/// partition.
#[inline]
fn nvme_bytes_per_node(ctx: &Ctx) -> u64 {
    match ctx.plan.parallel.offload_device {
        crate::plan::OffloadDevice::Nvme => swapped_bytes_per_node(ctx),
        crate::plan::OffloadDevice::Cpu => 0,
    }
}

/// [`nvme_bytes_per_node`] where the plan offloads to NVMe. Cold: a search's plans keep their
/// states on the host or the device.
#[cold]
fn swapped_bytes_per_node(ctx: &Ctx) -> u64 {
    let nvme = nvme_swap(ctx.plan);
    let mut per_device = 0.0;
    if nvme.optimizer {
        per_device += optimizer_offload_bytes(ctx);
    }
    if nvme.params {
        let weights = state_bytes(ctx.path, ctx.plan.precision).weights;
        per_device += ctx.summary.counts.total() as f64 * weights * per_device_share(ctx);
    }
    (per_device * f64::from(ctx.plan.cluster.devices_per_node.get())) as u64
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

    /// Of a model whose layers are all of one kind, the runs of alike ranks the estimate takes
    /// from the layout's sums alone are those that comparing each rank's shape with the next
    /// finds: dense (Llama 3.1 8B and 70B, with MTP-free even and uneven splits, interleaved) and
    /// all-MoE (Qwen3-235B-A22B), against the same runs walked rank by rank.
    #[test]
    fn runs_of_one_kind_are_the_ranks_that_hold_alike() {
        // Runs of one rank, and of more.
        let mut runs = [0; 2];
        for (model, parallel) in [
            ("llama-3.1-8b", "\"pp\": 32"),
            ("llama-3.1-8b", "\"pp\": 4, \"vpp\": 2"),
            ("llama-3.1-70b", "\"pp\": 16"),
            ("llama-3.1-70b", "\"pp\": 64"),
            ("llama-3.1-405b", "\"pp\": 32, \"vpp\": 3"),
            ("qwen3-235b-a22b", "\"pp\": 4"),
            ("qwen3-235b-a22b", "\"pp\": 32"),
        ] {
            for uneven in [false, true] {
                let text = format!(
                    r#"{{"model": "{model}", "framework": "megatron", "method": "pretrain", "cluster": {{"nodes": 32}},
                        "parallel": {{{parallel}, "uneven_layers": {uneven}}}, "batch": {{"global_batch": 512}}}}"#
                );
                let plan = Plan::from_json(&text).unwrap_or_else(|e| panic!("{text}: {e}"));
                let (arch, layout) = (&plan.model.arch, Layout::of(&plan));
                assert!(model::one_layer_kind(arch).is_some() && arch.linear_attention.is_none(), "{model}");
                let mut rank = 0;
                while rank < layout.pp {
                    let end = alike_until(arch, &layout, rank, true);
                    assert_eq!(end, alike_until(arch, &layout, rank, false), "{text}: from rank {rank}");
                    runs[usize::from(rank + 1 < end)] += 1;
                    rank = end;
                }
            }
        }
        // Both occur: the first and last ranks apart, the middle ones of an even split alike.
        assert!(runs.iter().all(|&n| 0 < n), "{runs:?}");
    }

    /// An all-MoE model's layers among a rank's positions are their count, as walking the rank's
    /// chunks finds them: Qwen3-235B-A22B's 94 layers split evenly, unevenly and interleaved, with
    /// freeze-tuning's trained layers alone kept (`StageLayers::saving`).
    #[test]
    fn all_moe_positions_count_as_walking_the_chunks() {
        let (mut compared, mut skipped) = (0, 0);
        for (parallel, method) in [
            ("\"pp\": 4", "pretrain"),
            ("\"pp\": 8, \"uneven_layers\": true", "pretrain"),
            ("\"pp\": 4, \"vpp\": 3", "pretrain"),
            ("\"pp\": 4", "freeze"),
        ] {
            let text = format!(
                r#"{{"model": "qwen3-235b-a22b", "framework": "megatron", "method": "{method}", "cluster": {{"nodes": 32}},
                    "parallel": {{{parallel}}}, "freeze_layers": 30}}"#
            );
            let plan = Plan::from_json(&text).unwrap_or_else(|e| panic!("{text}: {e}"));
            let (arch, layout) = (&plan.model.arch, Layout::of(&plan));
            for rank in 0..layout.pp {
                let counted = StageLayers::of(arch, &layout, rank).saving(&plan);
                assert!(counted.all_moe, "{text}");
                skipped += usize::from(0 < counted.skip);
                let walked =
                    StageLayers { all_moe: false, ..StageLayers::of(arch, &layout, rank).saving(&plan) };
                for from in 0..=counted.n + 1 {
                    for to in from..=counted.n + 2 {
                        assert_eq!(
                            counted.moe_in(from, to),
                            walked.moe_in(from, to),
                            "{text}: rank {rank}, {from}..{to}"
                        );
                        compared += 1;
                    }
                }
            }
        }
        assert!(1_000 < compared, "{compared}");
        // Freeze-tuning's 30 trained layers of 94 leave ranks 0 and 1 of 4 counting none of theirs
        // and rank 2 skipping some.
        assert_eq!(skipped, 3);
    }

    /// Which layers hold experts decides whether a model's layers are of one kind.
    #[test]
    fn one_layer_kind_tells_dense_all_moe_and_mixed_stacks() {
        let kind = |model: &str| {
            let plan = Plan::from_json(&format!(r#"{{"model": "{model}"}}"#)).unwrap();
            model::one_layer_kind(&plan.model.arch)
        };
        assert_eq!(kind("llama-3.1-8b"), Some(false));
        // Every one of Qwen3-235B-A22B's 94 layers holds 128 experts (`decoder_sparse_step` 1), and
        // every one of Mixtral's 32 its 8 (`MixtralDecoderLayer`'s `block_sparse_moe`).
        assert_eq!(kind("qwen3-235b-a22b"), Some(true));
        assert_eq!(kind("mixtral-8x7b"), Some(true));
        // DeepSeek-V3's first 3 layers are dense (`first_k_dense_replace`).
        assert_eq!(kind("deepseek-v3"), None);
    }
}
