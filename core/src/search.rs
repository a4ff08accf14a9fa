//! The fastest plan that fits: an exhaustive walk over the parallel layout, the memory knobs and
//! the micro-batch, keeping what is trained (model, method, global batch, sequence, precision) and
//! the cluster as the user set them. Memory is checked first and the framework's rules second, so
//! the step-time simulation runs only for plans that fit and that the framework accepts.
//!
//! The walk: for the Megatron family (Megatron-LM, MindSpeed-LLM, MindSpeed-RL) TP over the divisors
//! of the scale-up domain (a node, or an NVL72 rack) that divide the attention heads (TP stays on the
//! fast links: Narayanan et al. 2021, "Efficient Large-Scale Language Model Training on GPU Clusters
//! Using Megatron-LM", §3.2 takeaway #1), PP over every count that divides the layers or leaves the
//! rest to the first and last stages, VPP over the divisors of a stage's layers, CP over powers of
//! two to 16 from 8K tokens, EP over powers of two for MoE models, MindSpeed-LLM's DualPipeV,
//! recomputation none / selective / full (uniform, or a block of ¼, ½ or ¾ of a stage's layers),
//! MindSpeed's swap-attention, the optimizer's states on the device, offloaded to the host or (for
//! MindSpeed) swapped there between steps; with the distributed optimizer or Megatron FSDP,
//! sequence parallelism and overlapped gradient reduction on wherever they apply (each saves memory
//! or hides communication without adding any: Megatron-LM docs/api-guide/dist_optimizer.md,
//! Korthikanti et al. 2022 §4.2.2, MindSpeed docs/zh/features/async-ddp.md). For the HF family
//! (DeepSpeed, LLaMA-Factory, VeRL) no model parallelism, ZeRO 0–3 with optimizer and parameter
//! offload, Liger's kernels off and on (LLaMA-Factory, VeRL, on the models they patch), gradient
//! checkpointing on or off, and Ulysses CP for VeRL. RL (GRPO, PPO) also walks the
//! rollout engine's TP over the divisors of the scale-up domain that divide the heads: at the
//! default TP 1 a 32B model's weights alone fill the engine's share of an 80 GB device, and every
//! plan would break rl.engine_too_small; with routed experts, also the rollout's expert parallelism
//! over larger multiples of that TP. Micro-batch over powers of two for all. A method the framework
//! cannot train (PPO on MindSpeed-LLM) leaves the plan alone in the space: no knob walked changes
//! that verdict. The rules are checked for their verdict alone ([`rules::errors`]), no message or
//! fix worked out.
//!
//! A search can run in parts ([`Search::part`], one per Web Worker in the page, four per thread on
//! the command line: [`search_on_threads`]) whose results
//! [`merge`] into exactly the whole search's; `core/tests/it/search.rs` checks both the pruning and
//! the merge against evaluating every plan.

use crate::field::Field;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::plan::{
    CpAlgo, Framework, PipelineSchedule, Plan, RecomputeGranularity, RecomputeMethod, ZeroStage,
};
use crate::report::{Code, Fix, Severity};
use crate::{memory, rules, time};
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering::Relaxed};

/// A plan the search found, as changes to the plan it started from.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Candidate {
    /// Plan-file changes, in an order `rules::apply` accepts one by one.
    pub changes: Vec<Fix>,
    /// Peak memory per device, bytes.
    pub peak_bytes: u64,
    /// Usable memory left free at the peak, bytes: the margin beyond the one the plan keeps
    /// (`overheads.allocator_reserve`). A plan with little to spare ranks by speed like any other,
    /// but the page shows how little.
    pub headroom_bytes: u64,
    /// Step time, seconds.
    pub step_seconds: f64,
    /// Tokens per second, whole cluster.
    pub tokens_per_second: f64,
    /// Model FLOPs utilization.
    pub mfu_frac: f64,
}

/// What the search did and found.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SearchResult {
    /// Plans in the space.
    pub considered: u64,
    /// Of those, plans known not to fit without evaluating them: the same layout and knobs did not
    /// fit with a smaller micro-batch, and the global batch is a whole number of this micro-batch
    /// × DP (the peak then never falls as the micro-batch grows).
    pub pruned: u64,
    /// Plans that fit in memory.
    pub fit: u64,
    /// Plans that fit and break no framework rule.
    pub feasible: u64,
    /// Of those, plans whose schedule was simulated; the others provably could not rank.
    pub simulated: u64,
    /// The fastest feasible plans, fastest first, at most [`TOP`].
    pub best: Vec<Candidate>,
    /// The feasible plans no other beats in both memory and speed, least memory first.
    pub pareto: Vec<Candidate>,
    /// The framework's rules the plans that fit broke, most often broken first: why a search that
    /// found plans that fit found none that runs.
    pub blocked: Vec<Blocking>,
}

/// A rule that plans which fit broke.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Blocking {
    /// The rule.
    pub code: Code,
    /// How many plans that fit broke it.
    pub plans: u64,
    /// The first of them in the space, as changes to the plan searched from (so its finding can be
    /// shown with its values).
    pub changes: Vec<Fix>,
}

/// A rule plans of one part of a search broke: its code, how many plans that fit broke it, and the
/// first of them's place in the whole space.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Blocked {
    /// The rule.
    pub code: Code,
    /// Plans that fit and broke it.
    pub plans: u64,
    /// The first such plan's place in the whole space.
    pub first: u64,
}

/// How many of the fastest plans [`search`] returns.
pub const TOP: usize = 10;

/// The knobs the search sets, all `Copy`, applied to a working plan in place.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
struct Knobs {
    tp: u32,
    pp: u32,
    vpp: u32,
    cp: u32,
    cp_algo: CpAlgo,
    ep: u32,
    #[serde(with = "zero_stage_number")]
    zero_stage: ZeroStage,
    offload_optimizer: bool,
    offload_params: bool,
    swap_optimizer: bool,
    distributed_optimizer: bool,
    sequence_parallel: bool,
    overlap_grad_reduce: bool,
    overlap_param_gather: bool,
    recompute: RecomputeGranularity,
    recompute_method: RecomputeMethod,
    recompute_layers: u32,
    swap_attention: bool,
    schedule: PipelineSchedule,
    micro_batch: u32,
    uneven_layers: bool,
    fsdp: crate::plan::Fsdp,
    rollout_tp: u32,
    rollout_ep: u32,
    liger_kernel: bool,
}

impl Knobs {
    fn of(plan: &Plan) -> Knobs {
        let p = &plan.parallel;
        Knobs {
            tp: p.tp.get(),
            pp: p.pp.get(),
            vpp: p.vpp.get(),
            cp: p.cp.get(),
            cp_algo: p.cp_algo,
            ep: p.ep.get(),
            zero_stage: p.zero_stage,
            offload_optimizer: p.offload_optimizer,
            offload_params: p.offload_params,
            swap_optimizer: p.swap_optimizer,
            distributed_optimizer: p.distributed_optimizer,
            sequence_parallel: p.sequence_parallel,
            overlap_grad_reduce: p.overlap_grad_reduce,
            overlap_param_gather: p.overlap_param_gather,
            recompute: plan.recompute.granularity,
            recompute_method: plan.recompute.method,
            recompute_layers: plan.recompute.num_layers.get(),
            swap_attention: plan.recompute.swap_attention,
            schedule: p.schedule,
            micro_batch: plan.batch.micro_batch.get(),
            uneven_layers: p.uneven_layers,
            fsdp: p.fsdp,
            rollout_tp: plan.rl.rollout_tp.get(),
            rollout_ep: plan.rl.rollout_ep.get(),
            liger_kernel: plan.liger_kernel,
        }
    }

    fn set(self, plan: &mut Plan) {
        let nz = |x: u32| std::num::NonZeroU32::new(x.max(1)).expect("at least 1");
        let p = &mut plan.parallel;
        p.tp = nz(self.tp);
        p.pp = nz(self.pp);
        p.vpp = nz(self.vpp);
        p.cp = nz(self.cp);
        p.cp_algo = self.cp_algo;
        p.ep = nz(self.ep);
        p.zero_stage = self.zero_stage;
        p.offload_optimizer = self.offload_optimizer;
        p.offload_params = self.offload_params;
        p.swap_optimizer = self.swap_optimizer;
        p.distributed_optimizer = self.distributed_optimizer;
        p.sequence_parallel = self.sequence_parallel;
        p.overlap_grad_reduce = self.overlap_grad_reduce;
        p.overlap_param_gather = self.overlap_param_gather;
        p.uneven_layers = self.uneven_layers;
        p.fsdp = self.fsdp;
        p.schedule = self.schedule;
        plan.recompute.granularity = self.recompute;
        plan.recompute.method = self.recompute_method;
        plan.recompute.num_layers = nz(self.recompute_layers);
        plan.recompute.swap_attention = self.swap_attention;
        plan.batch.micro_batch = nz(self.micro_batch);
        plan.rl.rollout_tp = nz(self.rollout_tp);
        plan.rl.rollout_ep = nz(self.rollout_ep);
        plan.liger_kernel = self.liger_kernel;
    }

    /// The plan-file changes from `from` to `self`, in an order each step of which parses.
    fn changes(self, from: Knobs) -> Vec<Fix> {
        let mut res = Vec::new();
        let mut push = |field: Field, changed: bool, value: Value| {
            if changed {
                res.push(Fix { field, value });
            }
        };
        push(Field::ParallelTp, self.tp != from.tp, self.tp.into());
        push(
            Field::ParallelUnevenLayers,
            self.uneven_layers != from.uneven_layers,
            self.uneven_layers.into(),
        );
        push(Field::ParallelPp, self.pp != from.pp, self.pp.into());
        push(Field::ParallelVpp, self.vpp != from.vpp, self.vpp.into());
        push(Field::ParallelCp, self.cp != from.cp, self.cp.into());
        push(Field::ParallelCpAlgo, self.cp_algo != from.cp_algo, self.cp_algo.wire().into());
        push(Field::ParallelEp, self.ep != from.ep, self.ep.into());
        push(Field::ParallelZeroStage, self.zero_stage != from.zero_stage, self.zero_stage.get().into());
        push(
            Field::ParallelOffloadOptimizer,
            self.offload_optimizer != from.offload_optimizer,
            self.offload_optimizer.into(),
        );
        push(
            Field::ParallelOffloadParams,
            self.offload_params != from.offload_params,
            self.offload_params.into(),
        );
        push(
            Field::ParallelSwapOptimizer,
            self.swap_optimizer != from.swap_optimizer,
            self.swap_optimizer.into(),
        );
        push(
            Field::ParallelDistributedOptimizer,
            self.distributed_optimizer != from.distributed_optimizer,
            self.distributed_optimizer.into(),
        );
        push(
            Field::ParallelSequenceParallel,
            self.sequence_parallel != from.sequence_parallel,
            self.sequence_parallel.into(),
        );
        push(
            Field::ParallelOverlapGradReduce,
            self.overlap_grad_reduce != from.overlap_grad_reduce,
            self.overlap_grad_reduce.into(),
        );
        push(
            Field::ParallelOverlapParamGather,
            self.overlap_param_gather != from.overlap_param_gather,
            self.overlap_param_gather.into(),
        );
        push(
            Field::RecomputeGranularity,
            self.recompute != from.recompute,
            serde_json::to_value(self.recompute).expect("an enum always serializes"),
        );
        push(
            Field::RecomputeMethod,
            self.recompute_method != from.recompute_method,
            serde_json::to_value(self.recompute_method).expect("an enum always serializes"),
        );
        push(
            Field::RecomputeNumLayers,
            self.recompute_layers != from.recompute_layers,
            self.recompute_layers.into(),
        );
        push(
            Field::RecomputeSwapAttention,
            self.swap_attention != from.swap_attention,
            self.swap_attention.into(),
        );
        push(
            Field::ParallelSchedule,
            self.schedule != from.schedule,
            serde_json::to_value(self.schedule).expect("an enum always serializes"),
        );
        push(
            Field::ParallelFsdp,
            self.fsdp != from.fsdp,
            serde_json::to_value(self.fsdp).expect("an enum always serializes"),
        );
        push(Field::RlRolloutTp, self.rollout_tp != from.rollout_tp, self.rollout_tp.into());
        push(Field::RlRolloutEp, self.rollout_ep != from.rollout_ep, self.rollout_ep.into());
        push(Field::BatchMicroBatch, self.micro_batch != from.micro_batch, self.micro_batch.into());
        push(Field::LigerKernel, self.liger_kernel != from.liger_kernel, self.liger_kernel.into());
        res
    }
}

fn divisors(n: u64, max: u64) -> impl Iterator<Item = u32> {
    (1..=n.min(max)).filter(move |d| n.is_multiple_of(*d)).map(|d| d as u32)
}

fn powers_of_two(max: u64) -> impl Iterator<Item = u32> {
    (0..20).map(|k| 1u32 << k).take_while(move |x| u64::from(*x) <= max)
}

/// What every part of the space shares: the plan's knobs as set, the cluster and the batch.
struct Shape<'a> {
    plan: &'a Plan,
    base: Knobs,
    world: u64,
    /// The scale-up domain: a node, or an NVL72 rack (TP and the rollout's TP stay within it).
    domain: u64,
    /// The samples a step trains on ([`memory::step_samples`]: with RL, every response).
    samples: u64,
    seq: u64,
    /// Sequences of 8K tokens or more: context parallelism is worth trying.
    long: bool,
}

impl Shape<'_> {
    /// Micro-batches over powers of two to 64 that the step's samples hold at data parallelism `dp`.
    fn micro_batches(&self, dp: u64) -> impl Iterator<Item = u32> + use<> {
        let samples = self.samples;
        powers_of_two(64).filter(move |b| (u64::from(*b) * dp) <= samples)
    }
}

/// A ZeRO stage in a part's JSON ([`Partial`]): its number, as the plan file writes it.
mod zero_stage_number {
    use crate::plan::ZeroStage;
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(stage: &ZeroStage, to: S) -> Result<S::Ok, S::Error> {
        to.serialize_u8(stage.get())
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(from: D) -> Result<ZeroStage, D::Error> {
        let stage = u8::deserialize(from)?;
        ZeroStage::new(stage).ok_or_else(|| serde::de::Error::custom(format!("no ZeRO stage {stage}")))
    }
}

/// Every knob setting the search walks for this plan's framework.
fn space(plan: &Plan) -> Plans {
    let mut res = Plans::default();
    walk_space(plan, &mut |knobs, _| res.push(knobs));
    res
}

/// Knob settings in order, kept in blocks of [`Plans::BLOCK`]: one list grown by doubling holds,
/// at its peak, the old list beside a new one twice its length, and a page's worker keeps that peak
/// for good (a wasm memory never shrinks): one part of two of an MoE RL search (Qwen3-30B-A3B GRPO
/// over 64 910B, 656,392 plans) peaked at 40 MB natively for 15 MB of settings.
#[derive(Default)]
struct Plans {
    blocks: Vec<Vec<Knobs>>,
    len: usize,
}

impl Plans {
    /// Settings per block (52 bytes each): 208 KB.
    const BLOCK: usize = 4096;

    #[inline]
    fn push(&mut self, knobs: Knobs) {
        if self.len.is_multiple_of(Plans::BLOCK) {
            self.blocks.push(Vec::with_capacity(Plans::BLOCK));
        }
        if let Some(block) = self.blocks.last_mut() {
            block.push(knobs);
        }
        self.len += 1;
    }

    fn len(&self) -> usize {
        self.len
    }

    fn iter(&self) -> impl Iterator<Item = &Knobs> {
        self.blocks.iter().flatten()
    }
}

impl std::ops::Index<usize> for Plans {
    type Output = Knobs;

    #[inline]
    fn index(&self, i: usize) -> &Knobs {
        &self.blocks[i / Plans::BLOCK][i % Plans::BLOCK]
    }
}

impl FromIterator<Knobs> for Plans {
    fn from_iter<I: IntoIterator<Item = Knobs>>(iter: I) -> Plans {
        let mut res = Plans::default();
        for knobs in iter {
            res.push(knobs);
        }
        res
    }
}

/// Hands `visit` every knob setting of the plan's [`space`] in turn, none of them kept (a part
/// keeps its share alone, [`Search::part`]; 2.9 M plans of an MoE RL search are 150 MB), with
/// whether it starts a run ([`starts_run`]): the loops know it, where comparing each plan with the
/// one before cost more than walking the space.
fn walk_space(plan: &Plan, visit: &mut dyn FnMut(Knobs, bool)) {
    // No layout trains a method its framework does not: the space is the plan alone, whose
    // finding (with its fix, another framework) the search then reports, at once.
    if rules::method_unsupported(plan, &memory::estimate(plan)) {
        visit(Knobs::of(plan), true);
        return;
    }
    let seq = u64::from(plan.batch.seq_len.get());
    let shape = Shape {
        plan,
        base: Knobs::of(plan),
        world: plan.cluster.n_devices(),
        domain: u64::from(plan.cluster.scale_up_domain.get())
            .max(u64::from(plan.cluster.devices_per_node.get())),
        samples: memory::step_samples(plan),
        seq,
        long: 8192 <= seq,
    };
    // A setting the framework does not take stays as the plan has it: the plan runs the same either
    // way (`knobs::effective`), and a plan found names only what the framework's files can say.
    let as_taken = taken_knobs(plan);
    let visit = &mut |knobs: Knobs, starts: bool| visit(as_taken(knobs), starts);
    match crate::layout::model_parallel(plan.framework) {
        true => megatron_space(&shape, visit),
        false => hf_space(&shape, visit),
    }
}

/// The settings of a space's plan with those `plan`'s framework and method do not take
/// ([`crate::knobs::applies`]) put back to `plan`'s own.
fn taken_knobs(plan: &Plan) -> impl Fn(Knobs) -> Knobs + use<> {
    use crate::knobs::{Knob, is_off};
    let base = Knobs::of(plan);
    let off = crate::knobs::off_knobs(plan.framework, plan.method);
    move |mut k: Knobs| {
        macro_rules! keep {
            ($($knob:ident => $field:ident),*) => {$(if is_off(off, Knob::$knob) { k.$field = base.$field; })*};
        }
        keep!(Tp => tp, Pp => pp, Vpp => vpp, Cp => cp, CpAlgo => cp_algo, Ep => ep, ZeroStage => zero_stage,
            OffloadOptimizer => offload_optimizer, OffloadParams => offload_params,
            SwapOptimizer => swap_optimizer, DistributedOptimizer => distributed_optimizer,
            SequenceParallel => sequence_parallel, OverlapGradReduce => overlap_grad_reduce,
            OverlapParamGather => overlap_param_gather, RecomputeLayers => recompute_layers,
            SwapAttention => swap_attention, Schedule => schedule, Fsdp => fsdp,
            UnevenLayers => uneven_layers, LigerKernel => liger_kernel);
        k
    }
}

/// The Megatron family's space: TP, PP, CP and how it exchanges, EP, FSDP, VPP and the schedule,
/// recomputation, swap-attention and the micro-batch.
// Long: one nest of loops, a setting a level, so that a run of plans differing in the micro-batch
// alone comes out together (`starts_run`).
fn megatron_space(shape: &Shape, visit: &mut dyn FnMut(Knobs, bool)) {
    let Shape { plan, base, world, domain, seq, long, .. } = *shape;
    let arch = &plan.model.arch;
    let experts = arch.moe.as_ref().map_or(1, |m| m.n_experts);
    let n_layers = arch.n_layers;
    // TP divides the attention heads (Megatron `validate_args`) and stays inside the scale-up
    // domain, a node or an NVL72 rack (Narayanan et al. 2021 §3.2 takeaway #1: TP across the
    // slower inter-node links costs more than it saves).
    let tps: Vec<u32> = divisors(domain, domain)
        .filter(|tp| arch.attention.n_heads().is_multiple_of(u64::from(*tp)))
        .collect();
    // PP over every count that divides the layers, or leaves the rest to the first and last
    // stages (layout::uneven_sizes): DeepSeek-V3's 61 layers still get 2, 4, 8 and 16 stages.
    let pps: Vec<u32> = (1..=n_layers.min(u64::from(u32::MAX)))
        .filter(|&pp| n_layers.is_multiple_of(pp) || crate::layout::uneven_sizes(n_layers, pp).is_some())
        .filter(|&pp| world.is_multiple_of(pp))
        .map(|pp| pp as u32)
        .collect();
    // CP over powers of two to 16 on long sequences; Megatron cuts each sequence into 2 · CP
    // chunks for load balance (megatron/core/utils.py `get_batch_on_this_cp_rank`).
    let cps: Vec<u64> =
        [1, 2, 4, 8, 16].into_iter().filter(|&cp| cp == 1 || (long && seq.is_multiple_of(2 * cp))).collect();
    for &tp in &tps {
        for &pp in &pps {
            let sizes = crate::layout::uneven_sizes(n_layers, u64::from(pp));
            let uneven = sizes.is_some();
            // Layers per stage: the most any stage holds.
            let per_stage =
                sizes.as_ref().map_or(n_layers / u64::from(pp), |s| s.iter().copied().max().unwrap_or(1));
            for &cp in &cps {
                let model = u64::from(tp) * u64::from(pp) * cp;
                if !world.is_multiple_of(model) {
                    continue;
                }
                let dp = world / model;
                let eps: Vec<u32> = match 1 < experts {
                    true => powers_of_two(dp.min(experts))
                        .filter(|e| experts.is_multiple_of(u64::from(*e)))
                        .collect(),
                    false => vec![1],
                };
                // Megatron-LM's own FSDP beside the distributed optimizer (its sharding of
                // gradients and parameters, rule fsdp.framework: Megatron-LM only).
                let fsdps: &[crate::plan::Fsdp] = match plan.framework == Framework::Megatron && 1 < dp {
                    true => &[crate::plan::Fsdp::None, crate::plan::Fsdp::OptimGradsParams],
                    false => &[crate::plan::Fsdp::None],
                };
                let vpps = vpp_options(plan, pp, per_stage, sizes.as_deref());
                // The schedules the framework has beyond 1F1B: MindSpeed-LLM's DualPipeV, with one
                // chunk per rank and no CP (rule schedule.dualpipev).
                let dualpipe = plan.framework == Framework::MindSpeedLlm && 1 < pp && cp == 1;
                let recomputes = recompute_options(&base, per_stage);
                let cp_algos = cp_algo_options(plan, &base, tp, cp);
                // MindSpeed's swap-attention moves attention activations to the host.
                let swaps: &[bool] = match plan.framework == Framework::MindSpeedLlm {
                    true => &[false, true],
                    false => &[base.swap_attention],
                };
                let host_states = host_state_options(plan.framework, dp, base.offload_params);
                let rollouts = rollout_options(plan, &base, world, domain);
                let layouts = eps.into_iter().flat_map(|ep| fsdps.iter().map(move |&f| (ep, f)));
                for (ep, fsdp, &cp_algo) in
                    layouts.flat_map(|(ep, f)| cp_algos.iter().map(move |a| (ep, f, a)))
                {
                    let schedules = vpps
                        .iter()
                        .map(|&v| (v, PipelineSchedule::Auto))
                        .chain(dualpipe.then_some((1, PipelineSchedule::DualPipeV)));
                    for (vpp, schedule) in schedules {
                        for &(recompute, recompute_method, recompute_layers) in &recomputes {
                            let host = swaps.iter().flat_map(|s| host_states.iter().map(move |h| (s, h)));
                            for (
                                (&swap_attention, &(offload_optimizer, swap_optimizer, offload_params)),
                                (rollout, &(rollout_tp, rollout_ep)),
                            ) in host.flat_map(|h| rollouts.iter().enumerate().map(move |r| (h, r)))
                            {
                                // A run starts with the first rollout setting (the micro-batches
                                // are the same for every one).
                                let mut starts = rollout == 0;
                                for micro_batch in shape.micro_batches(dp) {
                                    let knobs = Knobs {
                                        tp,
                                        pp,
                                        vpp,
                                        cp: cp as u32,
                                        cp_algo,
                                        ep,
                                        // Knobs of the other family stay as the user left them.
                                        zero_stage: base.zero_stage,
                                        offload_optimizer,
                                        swap_optimizer,
                                        offload_params,
                                        distributed_optimizer: 1 < dp,
                                        sequence_parallel: 1 < tp,
                                        // DualPipeV refuses the overlapped gradient reduction.
                                        overlap_grad_reduce: 1 < dp
                                            && schedule != PipelineSchedule::DualPipeV,
                                        overlap_param_gather: 1 < dp,
                                        recompute,
                                        recompute_method,
                                        recompute_layers,
                                        swap_attention,
                                        schedule,
                                        micro_batch,
                                        uneven_layers: uneven || base.uneven_layers,
                                        fsdp,
                                        rollout_tp,
                                        rollout_ep,
                                        liger_kernel: base.liger_kernel,
                                    };
                                    visit(knobs, std::mem::take(&mut starts));
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}

/// How CP exchanges, where it splits the sequence (CP > 1) on a framework that takes the choice
/// (`knobs::applies`): the ring, and all-to-all where the heads split over TP × CP (the rules
/// parallel.cp_a2a_heads and, on Megatron-LM, parallel.cp_a2a_kv_heads: MindSpeed's
/// `UlyssesContextParallelFeature.validate_args`, Transformer Engine's `AttnFuncWithCPAndQKVOA2A`).
/// Elsewhere the plan's own. The CP sizes come from the ring's rule (seq % 2·CP), so MindSpeed's
/// all-to-all at a CP that divides the sequence only once is not walked.
fn cp_algo_options(plan: &Plan, base: &Knobs, tp: u32, cp: u64) -> Vec<CpAlgo> {
    let takes = crate::knobs::applies(plan.framework, plan.method, crate::knobs::Knob::CpAlgo).yes();
    if cp <= 1 || !takes {
        return vec![base.cp_algo];
    }
    let split = u64::from(tp) * cp;
    let attention = &plan.model.arch.attention;
    let kv_heads = match attention {
        crate::model::Attention::Gqa { n_kv_heads, .. } => *n_kv_heads,
        crate::model::Attention::Mla { n_heads, .. } => *n_heads,
    };
    let heads_split = attention.n_heads().is_multiple_of(split);
    let kv_split = plan.framework != Framework::Megatron || kv_heads.is_multiple_of(split);
    match heads_split && kv_split {
        true => vec![CpAlgo::Ring, CpAlgo::AllToAll],
        false => vec![CpAlgo::Ring],
    }
}

/// VPP over the divisors of each stage's layers (Megatron: the layers of a stage divide by VPP);
/// uneven stages (`sizes`) take VPP on Megatron-LM only (rule parallel.uneven_vpp), MindSpeed's
/// layer list does not.
fn vpp_options(plan: &Plan, pp: u32, per_stage: u64, sizes: Option<&[u64]>) -> Vec<u32> {
    match (pp, sizes) {
        (1, _) => vec![1],
        (_, None) => divisors(per_stage, per_stage).collect(),
        (_, Some(sizes)) => divisors(per_stage, per_stage)
            .filter(|&v| {
                v == 1
                    || (plan.framework == Framework::Megatron
                        && sizes.iter().all(|s| s.is_multiple_of(u64::from(v))))
            })
            .collect(),
    }
}

/// Where the model's states live between steps, as (optimizer offloaded, optimizer swapped,
/// parameters offloaded): on the device; the optimizer computed on the host
/// (`--optimizer-cpu-offload`, which needs the distributed optimizer: Megatron-LM `validate_args`,
/// so only with data parallelism); for MindSpeed, swapped to the host and back around each step
/// (`--swap-optimizer`, swap_optimizer_feature.py, also over the distributed optimizer). VeRL's
/// Megatron engine offloads the parameters, the optimizer states or both between its passes
/// (`param_offload`, `optimizer_offload`), at any DP. Elsewhere the parameters stay as the plan has
/// them (`base_params`).
fn host_state_options(framework: Framework, dp: u64, base_params: bool) -> Vec<(bool, bool, bool)> {
    if framework == Framework::VerlMegatron {
        return vec![(false, false, false), (true, false, false), (false, false, true), (true, false, true)];
    }
    let mut res = vec![(false, false, base_params)];
    if 1 < dp {
        res.push((true, false, base_params));
        if matches!(framework, Framework::MindSpeedLlm | Framework::MindSpeedRl) {
            res.push((false, true, base_params));
        }
    }
    res
}

/// The rollout engine's TP and expert parallelism, for RL (GRPO, PPO). TP: every divisor of the
/// scale-up domain that divides the attention heads and the devices (vLLM's
/// `verify_with_parallel_config`, rule rl.rollout_tp_heads; the rollout's device mesh, rule
/// rl.rollout_tp), as training TP stays on the fast links. A larger TP shards the engine's weights,
/// leaving room for the KV cache, and runs fewer engines. With routed experts, each TP also with
/// the experts spread over every larger multiple of it that divides the devices, up to one expert
/// a rank (rule rl.rollout_ep; on VeRL whole nodes, rule verl.rollout_ep_nodes): a model whose
/// experts outweigh one engine's share of a device needs it. Elsewhere the plan's own, which plays
/// no part.
fn rollout_options(plan: &Plan, base: &Knobs, world: u64, domain: u64) -> Vec<(u32, u32)> {
    if !matches!(plan.method, crate::plan::Method::Grpo | crate::plan::Method::Ppo) {
        return vec![(base.rollout_tp, base.rollout_ep)];
    }
    let heads = plan.model.arch.attention.n_heads();
    let experts = plan.model.arch.moe.as_ref().map_or(0, |moe| moe.n_experts);
    let mut res = Vec::new();
    for tp in divisors(domain, domain) {
        let tp64 = u64::from(tp);
        if !(heads.is_multiple_of(tp64) && world.is_multiple_of(tp64)) {
            continue;
        }
        res.push((tp, 1));
        let eps = divisors(world, experts.min(world))
            .filter(|&ep| tp64 < u64::from(ep) && crate::rules::rollout_ep_layout(plan, tp64, ep.into()));
        res.extend(eps.map(|ep| (tp, ep)));
    }
    res
}

/// Recomputation: none, selective, full layer by layer, and full over a block of the first ¼, ½
/// or ¾ of each stage's layers (Megatron `--recompute-method block`).
fn recompute_options(base: &Knobs, per_stage: u64) -> Vec<(RecomputeGranularity, RecomputeMethod, u32)> {
    let mut recomputes = vec![
        (RecomputeGranularity::None, base.recompute_method, base.recompute_layers),
        (RecomputeGranularity::Selective, base.recompute_method, base.recompute_layers),
        (RecomputeGranularity::Full, RecomputeMethod::Uniform, 1),
    ];
    let mut blocks: Vec<u32> = [1, 2, 3]
        .iter()
        .map(|q| (per_stage * q).div_ceil(4) as u32)
        .filter(|&k| u64::from(k) < per_stage)
        .collect();
    blocks.dedup();
    recomputes.extend(blocks.into_iter().map(|k| (RecomputeGranularity::Full, RecomputeMethod::Block, k)));
    recomputes
}

/// The HF family's space (DeepSpeed, LLaMA-Factory, VeRL): no model parallelism; ZeRO 0–3 with
/// optimizer and parameter offload, Liger's kernels off and on where the framework patches the
/// model, gradient checkpointing on or off, Ulysses CP for VeRL, and the micro-batch.
fn hf_space(shape: &Shape, visit: &mut dyn FnMut(Knobs, bool)) {
    let Shape { plan, base, world, domain, long, .. } = *shape;
    let rollouts = rollout_options(plan, &base, world, domain);
    // Liger's kernels off and on where the framework patches the model with them.
    let ligers: &[bool] = match crate::memory::liger_patches_model(plan) {
        true => &[false, true],
        false => &[false],
    };
    let cps: Vec<u32> = match plan.framework == Framework::Verl && long {
        true => vec![1, 2, 4],
        false => vec![base.cp],
    };
    for cp in cps {
        if !world.is_multiple_of(u64::from(cp)) {
            continue;
        }
        let dp = world / u64::from(cp);
        for (zero_stage, liger_kernel) in
            ZeroStage::ALL.into_iter().flat_map(|z| ligers.iter().map(move |&l| (z, l)))
        {
            for (offload_optimizer, offload_params) in
                [(false, false), (true, false), (false, true), (true, true)]
            {
                // DeepSpeed offloads the optimizer from stage 1 and parameters at stage 3 alone
                // (`zero/config.py`, the latter with the optimizer); VeRL's FSDP engine either, or
                // both, between its passes at any sharding (`param_offload`, `optimizer_offload`).
                let deepspeed_takes = (!offload_optimizer || zero_stage.shards_optimizer())
                    && (!offload_params || (zero_stage.shards_params() && offload_optimizer));
                if plan.framework != Framework::Verl && !deepspeed_takes {
                    continue;
                }
                let settings = [RecomputeGranularity::None, RecomputeGranularity::Full]
                    .into_iter()
                    .flat_map(|r| rollouts.iter().enumerate().map(move |(i, &t)| (r, i, t)));
                for (recompute, rollout, (rollout_tp, rollout_ep)) in settings {
                    // A run starts with the first rollout setting, as in `megatron_space`.
                    let mut starts = rollout == 0;
                    for micro_batch in shape.micro_batches(dp) {
                        let knobs = Knobs {
                            tp: 1,
                            pp: 1,
                            vpp: 1,
                            ep: 1,
                            cp,
                            zero_stage,
                            offload_optimizer,
                            offload_params,
                            overlap_grad_reduce: true,
                            recompute,
                            micro_batch,
                            rollout_tp,
                            rollout_ep,
                            liger_kernel,
                            ..base
                        };
                        visit(knobs, std::mem::take(&mut starts));
                    }
                }
            }
        }
    }
}

/// Searches the plan's space: the fastest plans that fit and keep every framework rule.
pub fn search(plan: &Plan) -> SearchResult {
    let mut search = Search::new(plan);
    while !search.step(usize::MAX) {}
    search.finish()
}

/// [`search`] on `threads` threads (the command line; a page runs its parts in Web Workers): the
/// space cut into parts ([`Search::part`]), four per thread so that no thread waits long on a
/// slower share, each thread taking the next part left, and the parts [`merge`]d. The parts share
/// the tenth fastest step any of them has found, a bound as sound as a part's own (ten plans are
/// faster either way). The same plans as [`search`]; `simulated` differs (each part prunes by its
/// own fastest plans and by what the others found so far) and varies between runs. On one
/// thread, or where there are no threads (wasm), it is [`search`].
pub fn search_on_threads(plan: &Plan, threads: usize) -> SearchResult {
    if threads <= 1 || cfg!(target_arch = "wasm32") {
        return search(plan);
    }
    let all = space(plan);
    let threads = threads.min(64);
    let parts = u32::try_from(4 * threads).unwrap_or(u32::MAX);
    let next = AtomicU32::new(0);
    let tenth = Arc::new(AtomicU64::new(f64::INFINITY.to_bits()));
    let partials: Vec<Partial> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads)
            .map(|_| {
                let (all, next, tenth) = (&all, &next, &tenth);
                scope.spawn(move || {
                    let mut done = Vec::new();
                    loop {
                        let part = next.fetch_add(1, Relaxed);
                        if parts <= part {
                            break done;
                        }
                        let mut search = Search::of_share(plan, all, part, parts);
                        search.shared_tenth = Some(tenth.clone());
                        while !search.step(usize::MAX) {}
                        done.push(search.finish_part());
                    }
                })
            })
            .collect();
        // A part's panic is a bug; it surfaces here as it would have on one thread.
        let joined = handles.into_iter().map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)));
        joined.flatten().collect()
    });
    // `assemble` puts the found plans back in space order, whichever thread ran which part.
    assemble(plan, &partials, |index| all[index as usize])
}

/// [`search`] evaluating every plan, pruning none: the reference the pruned search must equal.
pub fn search_unpruned(plan: &Plan) -> SearchResult {
    let mut search = Search::new(plan);
    search.prune = false;
    while !search.step(usize::MAX) {}
    search.finish()
}

/// A search that runs a slice at a time, so that a page can show progress and stay responsive:
/// call [`Search::step`] until it returns `true`, then [`Search::finish`].
pub struct Search {
    prune: bool,
    base: Knobs,
    space: Plans,
    /// Plans in the whole space.
    whole: u64,
    /// Each plan's place in the whole space (a part holds a share of it, [`Search::part`]).
    places: Vec<u32>,
    work: Plan,
    facts: memory::ModelFacts,
    /// Pass 1's position in `space`.
    next: usize,
    /// The last plan that did not fit.
    unfit: Option<(Knobs, u64)>,
    fit: u64,
    feasible: u64,
    pruned: u64,
    /// Plans that fit and keep every rule, waiting for pass 2.
    kept: Vec<Kept>,
    /// Pass 2's order of `kept`: least peak memory first, then space order (set when it starts).
    order: Vec<u32>,
    /// Pass 2's position in `order`; `None` during pass 1.
    timed: Option<usize>,
    simulated: u64,
    fastest_step: f64,
    top_steps: Vec<f64>,
    /// The tenth fastest step any part running beside this one has found (as `f64` bits; positive
    /// floats order as their bits), when parts run at once ([`search_on_threads`]).
    shared_tenth: Option<Arc<AtomicU64>>,
    found: Vec<Found>,
    /// Each rule plans that fit broke: its code, how many, the first's place, and the last plan
    /// counted (a plan counts once per rule however many findings it has of it).
    blocked: Vec<(Code, u64, u32, usize)>,
    /// Whether the plan trains with RL (and the space walks the rollout's settings).
    rl: bool,
    /// Pass 1's last memory (with RL, of each micro-batch) and the knobs it is of, the rollout's
    /// left out ([`Search::memory`]).
    memo: [Option<(Knobs, memory::Memory)>; MEMO_SLOTS],
}

/// Micro-batches whose memory [`Search::memory`] keeps at once: the space's are powers of two to 64.
const MEMO_SLOTS: usize = 8;

/// A plan pass 1 kept for pass 2: its place in `space`, [`time::layer_bound_seconds`] and its
/// memory's figures.
#[derive(Clone, Copy, Debug)]
struct Kept {
    at: usize,
    layer_bound_seconds: f64,
    peak_bytes: u64,
    usable_bytes: u64,
}

/// A plan one part of a search found: its place in the whole space and its figures.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Found {
    /// Index into the search's whole space.
    pub index: u64,
    /// Peak memory per device, bytes.
    pub peak_bytes: u64,
    /// Usable memory left free at the peak, bytes.
    pub headroom_bytes: u64,
    /// Step time, seconds.
    pub step_seconds: f64,
    /// Tokens per second, whole cluster.
    pub tokens_per_second: f64,
    /// Model FLOPs utilization.
    pub mfu_frac: f64,
}

/// What one part of a search found ([`Search::part`]): its counts, and the plans that can still be
/// among the fastest or on the Pareto front once the parts are merged ([`merge`]). Plain data, so a
/// part can run in a Web Worker and send it back as JSON.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Partial {
    /// Plans in this part.
    pub considered: u64,
    /// Plans pruned unevaluated.
    pub pruned: u64,
    /// Plans that fit.
    pub fit: u64,
    /// Plans that fit and keep every rule.
    pub feasible: u64,
    /// Plans whose step time was estimated.
    pub simulated: u64,
    /// This part's fastest [`TOP`] and its Pareto front, in space order.
    pub found: Vec<Found>,
    /// The rules its plans that fit broke.
    pub blocked: Vec<Blocked>,
    /// Plans in the whole space (each part walks all of it to find its share).
    pub space: u64,
    /// The settings of the plans it names (its found plans, each broken rule's first), by place
    /// and ascending, so that [`merge`] need not walk the space again: in a page, that walk held
    /// the page's own thread up for 0.1 s after an MoE RL search (656,392 plans).
    settings: Vec<(u64, Knobs)>,
}

impl Partial {
    /// The places of the plans it names: its found plans, then each broken rule's first.
    fn named(&self) -> impl Iterator<Item = u64> + '_ {
        self.found.iter().map(|f| f.index).chain(self.blocked.iter().map(|b| b.first))
    }
}

impl Search {
    /// A search from `plan`; nothing is evaluated yet.
    pub fn new(plan: &Plan) -> Search {
        Search::part(plan, 0, 1)
    }

    /// Part `part` of `parts` of the search from `plan`: its share of the runs of plans that differ
    /// only in the micro-batch and the rollout's settings (so a part prunes as the whole search
    /// would, and works each training layout's memory out once), spread over the space so that the
    /// parts share alike in the plans that fit, which cost the most. Run every part (in any order,
    /// anywhere) and [`merge`] them: the result is the whole search's.
    pub fn part(plan: &Plan, part: u32, parts: u32) -> Search {
        match parts {
            // The whole space, moved rather than copied (3 M plans of an MoE RL search are 150 MB).
            0 | 1 => {
                let all = space(plan);
                let places = (0..all.len() as u32).collect();
                let whole = all.len() as u64;
                Search::of(plan, all, places, whole)
            }
            // Only this part's share is kept, the space walked once.
            _ => {
                let (mut share, mut knobs, mut places) =
                    (Share::new(part, parts), Plans::default(), Vec::new());
                let mut whole = 0;
                walk_space(plan, &mut |k, starts| {
                    if let Some(place) = share.place_of(starts) {
                        knobs.push(k);
                        places.push(place);
                    }
                    whole += 1;
                });
                Search::of(plan, knobs, places, whole)
            }
        }
    }

    /// Part `part` of `parts` of `all`, the space of the search from `plan`.
    fn of_share(plan: &Plan, all: &Plans, part: u32, parts: u32) -> Search {
        let places = share(all, part, parts);
        Search::of(plan, places.iter().map(|&i| all[i as usize]).collect(), places, all.len() as u64)
    }

    /// A search of the plans `space` from `plan`, at `places` in the whole space.
    fn of(plan: &Plan, space: Plans, places: Vec<u32>, whole: u64) -> Search {
        Search {
            prune: true,
            base: Knobs::of(plan),
            space,
            whole,
            places,
            work: plan.clone(),
            // The search changes no model, method or LoRA setting: count the model once.
            facts: memory::ModelFacts::of(plan),
            next: 0,
            unfit: None,
            fit: 0,
            feasible: 0,
            pruned: 0,
            kept: Vec::new(),
            order: Vec::new(),
            timed: None,
            simulated: 0,
            fastest_step: f64::INFINITY,
            top_steps: Vec::new(),
            shared_tenth: None,
            found: Vec::new(),
            blocked: Vec::new(),
            rl: matches!(plan.method, crate::plan::Method::Grpo | crate::plan::Method::Ppo),
            memo: Default::default(),
        }
    }

    /// Work done and all the work, in plans: each plan counts once in pass 1 (memory and rules)
    /// and once more in pass 2 (step time) if it gets there.
    pub fn progress(&self) -> (u64, u64) {
        let total = self.space.len() + self.kept.len();
        let done = self.next + self.timed.unwrap_or(0);
        (done as u64, total as u64)
    }

    /// Evaluates up to `budget` plans; `true` when the search is complete.
    pub fn step(&mut self, budget: usize) -> bool {
        let mut budget = budget.max(1);
        // Pass 1: memory, then the rules. Keeps the plans that fit and keep every rule.
        while self.next < self.space.len() {
            if budget == 0 {
                return false;
            }
            budget -= 1;
            let knobs = self.space[self.next];
            self.next += 1;
            // The space lists micro-batches in ascending order last, so a plan that differs from
            // the last unfit one (of DP `dp`) only by a larger micro-batch cannot fit either, as
            // long as the step's samples (the global batch, with RL every response) are a whole
            // number of its micro-batch × DP (so of the smaller one's too): both then hold the same
            // samples per step, a larger share of them in flight. Where the micro-batches per step
            // round down (a plan the batch rule refuses), fewer samples may be in flight, and a
            // larger micro-batch can fit (Qwen2.5-7B on 8 H100, PP 4 VPP 2, global batch 48, DP 2:
            // micro-batch 8 runs 3 micro-batches and does not fit, micro-batch 16 runs 1 and does),
            // so it is evaluated.
            let samples = memory::step_samples(&self.work);
            let larger_than_unfit = self.unfit.is_some_and(|(u, dp)| {
                u.micro_batch < knobs.micro_batch
                    && Knobs { micro_batch: knobs.micro_batch, ..u } == knobs
                    && samples.is_multiple_of(u64::from(knobs.micro_batch) * dp)
            });
            if self.prune && larger_than_unfit {
                self.pruned += 1;
                continue;
            }
            knobs.set(&mut self.work);
            let at = self.memory(knobs);
            let Some((_, mem)) = &self.memo[at] else { unreachable!("Search::memory keeps it") };
            if mem.usable_bytes < mem.peak_bytes {
                self.unfit = Some((knobs, mem.dp));
                continue;
            }
            let errors = rules::errors(&self.work, mem);
            // Only its figures are kept: pass 2 works the memory out again for the few plans its
            // bound does not stop, rather than holding every plan's stages until then.
            let kept = errors.is_empty().then(|| Kept {
                at: self.next - 1,
                layer_bound_seconds: time::layer_bound_seconds(&self.work, mem),
                peak_bytes: mem.peak_bytes,
                usable_bytes: mem.usable_bytes,
            });
            self.fit += 1;
            if self.breaks_a_rule(self.next - 1, &errors) {
                continue;
            }
            self.feasible += 1;
            self.kept.extend(kept);
        }
        // Pass 2: step time, least memory first. A plan whose step provably takes longer than both
        // the tenth fastest so far and the fastest plan with no more memory can be neither among
        // the fastest nor on the Pareto front, so its schedule is not simulated.
        let start = match self.timed {
            Some(i) => i,
            None => {
                // Indices sorted rather than the plans' memory moved about, by keys gathered
                // first: reading each plan's memory per comparison wandered over all of it.
                let mut keyed: Vec<(u64, u32)> =
                    self.kept.iter().enumerate().map(|(k, kept)| (kept.peak_bytes, k as u32)).collect();
                keyed.sort_unstable();
                self.order = keyed.into_iter().map(|(_, k)| k).collect();
                0
            }
        };
        let mut i = start;
        while i < self.order.len() {
            if budget == 0 {
                self.timed = Some(i);
                return false;
            }
            budget -= 1;
            let k = self.order[i] as usize;
            let Kept { at, layer_bound_seconds, peak_bytes, usable_bytes } = self.kept[k];
            i += 1;
            let own_tenth = if self.top_steps.len() < TOP { f64::INFINITY } else { self.top_steps[TOP - 1] };
            // Ten plans found by another part are as many as ten of this part's: a plan slower than
            // them is not among the fastest either.
            let others =
                self.shared_tenth.as_ref().map_or(f64::INFINITY, |t| f64::from_bits(t.load(Relaxed)));
            let tenth = own_tenth.min(others);
            // Strictly slower than the tenth can be dropped; a tie with the fastest leaves the front too.
            let limit = self.prune.then(|| self.fastest_step.max(tenth)).filter(|l| l.is_finite());
            // `estimate_within`'s first bound, worked out in pass 1: most plans stop here, before
            // the plan is set up again (70B on 1,024 H100: 33,554 plans reach pass 2).
            if limit.is_some_and(|limit| time::rules_out(limit, layer_bound_seconds)) {
                continue;
            }
            self.space[at].set(&mut self.work);
            let mem = memory::estimate_with(&self.work, &self.facts);
            let Some(t) = time::estimate_within(&self.work, &mem, limit) else { continue };
            self.simulated += 1;
            if !t.tokens_per_second.is_finite() {
                continue;
            }
            self.fastest_step = self.fastest_step.min(t.step_seconds);
            let rank = self.top_steps.partition_point(|s| *s <= t.step_seconds);
            self.top_steps.insert(rank, t.step_seconds);
            self.top_steps.truncate(TOP);
            if let (Some(shared), Some(tenth)) = (&self.shared_tenth, self.top_steps.get(TOP - 1)) {
                shared.fetch_min(tenth.to_bits(), Relaxed);
            }
            self.found.push(Found {
                index: u64::from(self.places[at]),
                peak_bytes,
                headroom_bytes: usable_bytes.saturating_sub(peak_bytes),
                step_seconds: t.step_seconds,
                tokens_per_second: t.tokens_per_second,
                mfu_frac: t.mfu_frac,
            });
        }
        self.timed = Some(i);
        true
    }

    /// Works out the memory of the working plan, set to `knobs`, and says where it is kept. The
    /// space walks the rollout's settings just outside the micro-batch, so with RL a training layout
    /// comes back once for every rollout setting a few plans later (as many as it has
    /// micro-batches): its memory is kept per micro-batch and only the rollout engine's part is
    /// worked out again ([`memory::set_rollout`]). A plan that differs from a kept one only in the
    /// micro-batch takes the bytes the micro-batch does not change from it
    /// ([`memory::estimate_rebatched`]).
    fn memory(&mut self, knobs: Knobs) -> usize {
        let (training, at) = match self.rl {
            true => (
                Knobs { rollout_tp: 0, rollout_ep: 0, ..knobs },
                knobs.micro_batch.trailing_zeros() as usize % MEMO_SLOTS,
            ),
            false => (knobs, 0),
        };
        match &mut self.memo[at] {
            // Not when evaluating every plan in full ([`search_unpruned`]), which tests this against.
            Some((key, mem)) if self.prune && self.rl && *key == training => {
                memory::set_rollout(mem, &self.work, &self.facts)
            }
            _ => {
                // The micro-batch is walked innermost: the plan before (kept in its own slot with
                // RL) most often differs from this one in it alone.
                let same_but_micro_batch = |(key, _): &&(Knobs, memory::Memory)| {
                    Knobs { micro_batch: training.micro_batch, ..*key } == training
                };
                let mem = match self.memo.iter().flatten().find(same_but_micro_batch) {
                    Some((_, base)) if self.prune => {
                        memory::estimate_rebatched(&self.work, &self.facts, base)
                    }
                    _ => memory::estimate_with(&self.work, &self.facts),
                };
                self.memo[at] = Some((training, mem));
            }
        }
        at
    }

    /// Whether the plan that fits at `at` breaks a rule (an error among its `findings`); each rule it
    /// breaks counts it once in `blocked`.
    fn breaks_a_rule(&mut self, at: usize, findings: &[crate::report::Finding]) -> bool {
        let mut broken = false;
        for f in findings.iter().filter(|f| f.severity == Severity::Error) {
            broken = true;
            match self.blocked.iter_mut().find(|b| b.0 == f.code) {
                Some(b) if b.3 == at => {}
                Some(b) => (b.1, b.3) = (b.1 + 1, at),
                None => self.blocked.push((f.code, 1, self.places[at], at)),
            }
        }
        broken
    }

    /// This part's result, to [`merge`] with the other parts'; plans not yet evaluated (if
    /// [`Search::step`] has not finished) are left out.
    pub fn finish_part(mut self) -> Partial {
        self.partial()
    }

    /// [`Search::finish_part`], leaving the space to look the found plans up in.
    fn partial(&mut self) -> Partial {
        // Only a part's own fastest TOP can be among the merged fastest, and only a plan on its own
        // front can be on the merged front (a plan beaten within its part is beaten overall).
        let mut found = std::mem::take(&mut self.found);
        in_space_order(&mut found);
        let best = fastest(&found);
        let front = pareto(&found);
        found.retain(|f| best.contains(&f.index) || front.contains(&f.index));
        let mut res = Partial {
            considered: self.space.len() as u64,
            pruned: self.pruned,
            fit: self.fit,
            feasible: self.feasible,
            simulated: self.simulated,
            found,
            blocked: self
                .blocked
                .iter()
                .map(|&(code, plans, first, _)| Blocked { code, plans, first: u64::from(first) })
                .collect(),
            space: self.whole,
            settings: Vec::new(),
        };
        let mut named: Vec<u64> = res.named().collect();
        crate::sort::sort_by(&mut named, u64::cmp);
        named.dedup();
        res.settings = named.into_iter().map(|index| (index, self.knobs_at(index))).collect();
        res
    }

    /// The settings of the plan at `index` in the whole space, one of this search's.
    fn knobs_at(&self, index: u64) -> Knobs {
        // Places ascend.
        self.space[self.places.partition_point(|&p| u64::from(p) < index)]
    }

    /// The result; plans not yet evaluated (if [`Search::step`] has not finished) are left out.
    pub fn finish(mut self) -> SearchResult {
        let mut plan = self.work.clone();
        self.base.set(&mut plan);
        let partial = self.partial();
        assemble(&plan, &[partial], |index| self.knobs_at(index))
    }
}

/// The places in `space` that part `part` of `parts` runs, ascending ([`Share`]).
fn share(space: &Plans, part: u32, parts: u32) -> Vec<u32> {
    let mut share = Share::new(part, parts);
    let mut before = None;
    space.iter().filter_map(|knobs| share.place_of(starts_run(before.replace(knobs), knobs))).collect()
}

/// Whether `knobs`, the plan after `before` in the space (if any), starts a run: differs from it in
/// more than the micro-batch and the rollout's settings ([`Share`]).
fn starts_run(before: Option<&Knobs>, knobs: &Knobs) -> bool {
    before.is_none_or(|b| {
        Knobs {
            micro_batch: knobs.micro_batch,
            rollout_tp: knobs.rollout_tp,
            rollout_ep: knobs.rollout_ep,
            ..*b
        } != *knobs
    })
}

/// Which plans of the space, met in order, part `part` of `parts` runs: the space cut into runs of
/// plans that differ only in the micro-batch and the rollout's settings (one training layout's,
/// whose memory [`Search::memory`] then reuses; were those spread over the parts too, a layout's
/// rollout settings would meet in one part in eight on two threads), and the runs spread over the
/// parts ([`part_of`]). Cut into contiguous shares instead, the shares of larger TP held more plans
/// that fit and took longer (70B on 1,024 H100 in halves: 28.5 and 39.5 ms, against 35.0 and 34.4
/// spread; medians of 15 alternated rounds).
struct Share {
    part: usize,
    parts: usize,
    /// The last plan met: its place and its run.
    last: Option<(u32, u64)>,
}

impl Share {
    fn new(part: u32, parts: u32) -> Share {
        Share { part: part as usize, parts: parts.max(1) as usize, last: None }
    }

    /// The place of the next plan of the space, if this part runs it; `starts_run` says whether
    /// that plan starts a run ([`starts_run`]).
    fn place_of(&mut self, starts_run: bool) -> Option<u32> {
        let (place, run) = match self.last {
            None => (0, 0),
            Some((place, run)) => (place + 1, run + u64::from(starts_run)),
        };
        self.last = Some((place, run));
        (part_of(run, self.parts) == self.part).then_some(place)
    }
}

/// The part that run `run` of the space goes to, of `parts`: spread by a multiplicative hash
/// (Knuth's, the golden ratio's 64-bit fraction), since taking every n-th run would follow the
/// space's own periods (runs cycle through the settings of the knobs walked inside a layout, so a
/// part could hold one setting's runs: 70B on 32 H100 in two parts, 920 and 1,425 plans that fit;
/// by the hash 1,176 and 1,169).
fn part_of(run: u64, parts: usize) -> usize {
    ((run.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 32) % parts as u64) as usize
}

/// Sorts found plans by their place in the space (each place holds one plan, so no order is left
/// to ties). One sort for both callers: a search may find plans by the hundred thousand.
fn in_space_order(found: &mut [Found]) {
    found.sort_unstable_by_key(|f| f.index);
}

/// Indices of the fastest [`TOP`] of `found`, fastest first, less memory breaking ties and then the
/// order of `found` (space order): the first [`TOP`] of `found` stably sorted so, kept in one pass
/// (a search may find plans by the hundred thousand, and only ten are wanted).
fn fastest(found: &[Found]) -> Vec<u64> {
    let before = |a: &Found, b: &Found| {
        b.tokens_per_second.total_cmp(&a.tokens_per_second).then(a.peak_bytes.cmp(&b.peak_bytes)).is_lt()
    };
    let mut best: Vec<&Found> = Vec::with_capacity(TOP + 1);
    for f in found {
        // After every kept plan it does not come before: equals keep their order.
        let at = best.iter().position(|kept| before(f, kept)).unwrap_or(best.len());
        if at < TOP {
            best.insert(at, f);
            best.truncate(TOP);
        }
    }
    best.iter().map(|f| f.index).collect()
}

/// Indices of the Pareto front of `found`, least memory first: sorted by peak, a plan stays if it
/// is faster than every plan with less memory.
fn pareto(found: &[Found]) -> Vec<u64> {
    let mut by_peak: Vec<&Found> = found.iter().collect();
    crate::sort::sort_by(&mut by_peak, |a, b| {
        a.peak_bytes.cmp(&b.peak_bytes).then(b.tokens_per_second.total_cmp(&a.tokens_per_second))
    });
    let mut res = Vec::new();
    let mut fastest = 0.0;
    for f in by_peak {
        if fastest < f.tokens_per_second {
            fastest = f.tokens_per_second;
            res.push(f.index);
        }
    }
    res
}

/// Merges the parts of a search from `plan` ([`Search::part`], all of them, in any order) into the
/// whole search's result. Parts that are not together one whole search (too few, of searches of
/// different sizes, or naming plans outside it or without their settings) are refused; that they
/// are `plan`'s is the caller's to know (the page checks the plan each worker read).
pub fn merge(plan: &Plan, parts: &[Partial]) -> Result<SearchResult, String> {
    let Some(size) = parts.first().map(|p| p.space) else { return Err("no part to merge".into()) };
    if let Some(p) = parts.iter().find(|p| p.space != size) {
        return Err(format!("the parts are of searches of {size} and {} plans", p.space));
    }
    let considered: u64 = parts.iter().map(|p| p.considered).sum();
    if considered != size {
        return Err(format!("the parts hold {considered} plans, the search {size}"));
    }
    if let Some(f) = parts.iter().flat_map(|p| &p.found).find(|f| size <= f.index) {
        return Err(format!("plan {} is outside the search's {size} plans", f.index));
    }
    if let Some(b) = parts.iter().flat_map(|p| &p.blocked).find(|b| size <= b.first) {
        return Err(format!("plan {} is outside the search's {size} plans", b.first));
    }
    let mut settings: Vec<(u64, Knobs)> = parts.iter().flat_map(|p| p.settings.iter().copied()).collect();
    crate::sort::sort_by(&mut settings, |a, b| a.0.cmp(&b.0));
    if let Some(index) =
        parts.iter().flat_map(Partial::named).find(|i| settings.binary_search_by_key(i, |s| s.0).is_err())
    {
        return Err(format!("plan {index} comes without its settings"));
    }
    Ok(assemble(plan, parts, |index| {
        let at = settings.binary_search_by_key(&index, |s| s.0).expect("checked above");
        settings[at].1
    }))
}

/// The rules the parts' plans that fit broke, merged: plans added up, the first place the least;
/// most often broken first, then the one broken earliest in the space, then in the order the rules
/// list them on that plan (the method before the batch: a plan alone in the space breaks both).
fn blocking(plan: &Plan, parts: &[Partial], knobs: &impl Fn(u64) -> Knobs) -> Vec<Blocking> {
    let base = Knobs::of(plan);
    let mut merged: Vec<(Code, u64, u64)> = Vec::new();
    for b in parts.iter().flat_map(|p| &p.blocked) {
        match merged.iter_mut().find(|m| m.0 == b.code) {
            Some(m) => (m.1, m.2) = (m.1 + b.plans, m.2.min(b.first)),
            None => merged.push((b.code, b.plans, b.first)),
        }
    }
    let mut work = plan.clone();
    let mut listed = |code: Code, first: u64| {
        knobs(first).set(&mut work);
        let errors = rules::errors(&work, &memory::estimate(&work));
        errors.iter().position(|f| f.code == code).unwrap_or(usize::MAX)
    };
    let mut keyed: Vec<_> =
        merged.into_iter().map(|(code, plans, first)| (code, plans, first, listed(code, first))).collect();
    crate::sort::sort_by(&mut keyed, |a, b| b.1.cmp(&a.1).then(a.2.cmp(&b.2)).then(a.3.cmp(&b.3)));
    keyed
        .into_iter()
        .map(|(code, plans, first, _)| Blocking { code, plans, changes: knobs(first).changes(base) })
        .collect()
}

/// The result from the parts' counts and found plans, each plan's knobs given by `knobs` from its
/// place in the space.
fn assemble(plan: &Plan, parts: &[Partial], knobs: impl Fn(u64) -> Knobs) -> SearchResult {
    let base = Knobs::of(plan);
    // In space order, whatever share each part held: ties between equally fast plans go by place.
    let mut found: Vec<Found> = parts.iter().flat_map(|p| p.found.iter().copied()).collect();
    in_space_order(&mut found);
    let candidate = |index: u64| {
        let f = found.iter().find(|f| f.index == index).expect("an index from the list");
        Candidate {
            changes: knobs(f.index).changes(base),
            peak_bytes: f.peak_bytes,
            headroom_bytes: f.headroom_bytes,
            step_seconds: f.step_seconds,
            tokens_per_second: f.tokens_per_second,
            mfu_frac: f.mfu_frac,
        }
    };
    SearchResult {
        considered: parts.iter().map(|p| p.considered).sum(),
        pruned: parts.iter().map(|p| p.pruned).sum(),
        fit: parts.iter().map(|p| p.fit).sum(),
        feasible: parts.iter().map(|p| p.feasible).sum(),
        simulated: parts.iter().map(|p| p.simulated).sum(),
        best: fastest(&found).into_iter().map(candidate).collect(),
        pareto: pareto(&found).into_iter().map(candidate).collect(),
        blocked: blocking(plan, parts, &knobs),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The runs the walk marks are the runs comparing each plan with the one before finds, so a
    /// part in a Web Worker (marks) holds the plans a part on a thread (comparisons) does: over
    /// both families, MindSpeed-LLM's DualPipeV and swaps, and the rollout's settings of RL.
    #[test]
    fn the_walk_marks_the_runs_the_settings_show() {
        for text in [
            r#"{"model": "llama-3.1-70b", "framework": "megatron", "method": "pretrain", "cluster": {"nodes": 4}}"#,
            r#"{"model": "qwen2.5-7b", "framework": "mindspeed-llm", "method": "sft-full", "cluster": {"nodes": 2}}"#,
            r#"{"model": "qwen3-30b-a3b", "framework": "mindspeed-rl", "method": "grpo"}"#,
            r#"{"model": "qwen2.5-7b", "framework": "verl", "method": "grpo", "batch": {"seq_len": 8192}}"#,
            r#"{"model": "qwen2.5-7b", "framework": "deepspeed", "method": "sft-full"}"#,
            r#"{"model": "qwen2.5-7b", "framework": "mindspeed-llm", "method": "ppo"}"#,
        ] {
            let plan = Plan::from_json(text).expect("the plan reads");
            let (mut marked, mut compared, mut before) = (Vec::new(), Vec::new(), None);
            walk_space(&plan, &mut |knobs, starts| {
                marked.push(starts);
                compared.push(starts_run(before.as_ref(), &knobs));
                before = Some(knobs);
            });
            let runs = marked.iter().filter(|&&s| s).count();
            assert!(
                runs < marked.len() || marked.len() == 1,
                "{text}: {runs} runs of {} plans",
                marked.len()
            );
            assert_eq!(marked, compared, "{text}");
            let all = space(&plan);
            for part in 0..3 {
                assert_eq!(Search::part(&plan, part, 3).places, share(&all, part, 3), "{text}: part {part}");
            }
        }
    }

    /// The one-pass selection keeps what a stable sort's first [`TOP`] would: over lists full of
    /// ties in speed and in memory, of every length around [`TOP`].
    #[test]
    fn the_fastest_are_the_first_of_the_stable_sort() {
        let mut seed = 0x2545_f491_4f6c_dd1d_u64;
        let mut next = |n: u64| {
            seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
            (seed >> 33) % n
        };
        for len in [0, 1, 9, 10, 11, 37, 300] {
            for _ in 0..20 {
                let found: Vec<Found> = (0..len)
                    .map(|index| Found {
                        index,
                        peak_bytes: next(4),
                        headroom_bytes: 0,
                        step_seconds: 1.0,
                        tokens_per_second: next(5) as f64,
                        mfu_frac: 0.5,
                    })
                    .collect();
                let mut sorted = found.clone();
                sorted.sort_by(|a, b| {
                    b.tokens_per_second.total_cmp(&a.tokens_per_second).then(a.peak_bytes.cmp(&b.peak_bytes))
                });
                let expected: Vec<u64> = sorted.iter().take(TOP).map(|f| f.index).collect();
                assert_eq!(fastest(&found), expected, "{found:?}");
            }
        }
    }
}
