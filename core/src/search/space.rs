//! The search's space: every knob setting it walks for a plan's framework, in the order whose runs
//! of plans differing only in the micro-batch and the rollout's settings the passes rely on
//! ([`walk_space`]).
//!
//! For the Megatron family (Megatron-LM, MindSpeed-LLM, MindSpeed-RL, and VeRL's Megatron engine
//! less what its config does not name: [`taken_knobs`]) TP over the divisors of the scale-up
//! domain (a node, or an NVL72 rack) that divide the attention heads (TP stays on the fast links:
//! Narayanan et al. 2021, "Efficient Large-Scale Language Model Training on GPU Clusters Using
//! Megatron-LM", §3.2 takeaway #1), PP over every count that divides the layers or leaves the
//! rest to the first and last stages, VPP over the divisors of a stage's layers, CP over powers of
//! two to 16 from 8K tokens, EP over powers of two for MoE models, MindSpeed-LLM's DualPipeV,
//! recomputation none / selective / full (uniform, or a block of ¼, ½ or ¾ of a stage's layers),
//! MindSpeed's swap-attention, the optimizer's states on the device, offloaded to the host or (for
//! MindSpeed) swapped there between steps; with the distributed optimizer or Megatron FSDP,
//! sequence parallelism and overlapped gradient reduction on wherever they apply (each saves memory
//! or hides communication without adding any: Megatron-LM docs/api-guide/dist_optimizer.md,
//! Korthikanti et al. 2022 §4.2.2, MindSpeed docs/zh/features/async-ddp.md). For the HF family
//! (DeepSpeed, LLaMA-Factory, VeRL) no model parallelism, ZeRO 0–3 with optimizer and parameter
//! offload (and DeepSpeed ZeRO++'s hpZ over a node where ZeRO-3 spans nodes), Liger's kernels off and on (LLaMA-Factory, VeRL, on the models they patch), gradient
//! checkpointing on or off, and Ulysses CP for VeRL. RL (GRPO, PPO) also walks the
//! rollout engine's TP over the divisors of the scale-up domain that divide the heads: at the
//! default TP 1 a 32B model's weights alone fill the engine's share of an 80 GB device, and every
//! plan would break rl.engine_too_small; with routed experts, also the rollout's expert parallelism
//! over larger multiples of that TP. Micro-batch over powers of two for all, but where RL packs
//! its micro-batches by tokens (`memory::packs_microbatches`), which reads none. A method the framework
//! cannot train (PPO on MindSpeed-LLM) leaves the plan alone in the space: no knob walked changes
//! that verdict.

use super::settings::Knobs;
use crate::plan::{
    CpAlgo, Framework, PipelineSchedule, Plan, RecomputeGranularity, RecomputeMethod, ZeroStage,
};
use crate::{memory, rules};

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
        // Packing by tokens reads no micro-batch: the plan's alone, not copies of one plan.
        let packed = memory::packs_microbatches(self.plan).then_some(self.base.micro_batch);
        let walked = powers_of_two(64).filter(move |b| packed.is_none() && (u64::from(*b) * dp) <= samples);
        packed.into_iter().chain(walked)
    }
}

/// Every knob setting the search walks for this plan's framework.
pub(super) fn space(plan: &Plan) -> Plans {
    let mut res = Plans::default();
    walk_space(plan, &mut |knobs, _| res.push(knobs));
    res
}

/// Knob settings in order, kept in blocks of [`Plans::BLOCK`]: one list grown by doubling holds,
/// at its peak, the old list beside a new one twice its length, and a page's worker keeps that peak
/// for good (a wasm memory never shrinks): one part of two of an MoE RL search (Qwen3-30B-A3B GRPO
/// over 64 910B, 656,392 plans) peaked at 40 MB natively for 15 MB of settings.
#[derive(Default)]
pub(super) struct Plans {
    blocks: Vec<Vec<Knobs>>,
    len: usize,
}

impl Plans {
    /// Settings per block (52 bytes each): 208 KB.
    const BLOCK: usize = 4096;

    #[inline]
    pub(super) fn push(&mut self, knobs: Knobs) {
        if self.len.is_multiple_of(Plans::BLOCK) {
            self.blocks.push(Vec::with_capacity(Plans::BLOCK));
        }
        if let Some(block) = self.blocks.last_mut() {
            block.push(knobs);
        }
        self.len += 1;
    }

    pub(super) fn len(&self) -> usize {
        self.len
    }

    #[cfg(test)]
    pub(super) fn iter(&self) -> impl Iterator<Item = &Knobs> {
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
pub(super) fn walk_space(plan: &Plan, visit: &mut dyn FnMut(Knobs, bool)) {
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
        keep!(Tp => tp, Pp => pp, Vpp => vpp, Cp => cp, CpAlgo => cp_algo, Ep => ep, ZeroStage => zero_stage, ZeroHpz => zero_hpz,
            OffloadOptimizer => offload_optimizer, OffloadParams => offload_params,
            SwapOptimizer => swap_optimizer, DistributedOptimizer => distributed_optimizer,
            SequenceParallel => sequence_parallel, OverlapGradReduce => overlap_grad_reduce,
            OverlapParamGather => overlap_param_gather, RecomputeLayers => recompute_layers,
            SwapAttention => swap_attention, Schedule => schedule, Fsdp => fsdp,
            UnevenLayers => uneven_layers, LigerKernel => liger_kernel,
            NoSyncAccumulation => no_sync_accumulation, OffloadPolicy => offload_policy);
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
                                        zero_hpz: base.zero_hpz,
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
                                        no_sync_accumulation: base.no_sync_accumulation,
                                        offload_policy: base.offload_policy,
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
/// parallel.cp_a2a_heads and, but for MindSpeed, parallel.cp_a2a_kv_heads: MindSpeed's
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
    let mindspeed = matches!(plan.framework, Framework::MindSpeedLlm | Framework::MindSpeedRl);
    let kv_split = mindspeed || kv_heads.is_multiple_of(split);
    match heads_split && kv_split {
        true => vec![CpAlgo::Ring, CpAlgo::AllToAll],
        false => vec![CpAlgo::Ring],
    }
}

/// VPP over the divisors of each stage's layers (Megatron: the layers of a stage divide by VPP);
/// uneven stages (`sizes`) take VPP on megatron-core's first and last stage sizes (Megatron-LM, VeRL's
/// Megatron engine), not on MindSpeed's layer list (rule parallel.uneven_vpp).
fn vpp_options(plan: &Plan, pp: u32, per_stage: u64, sizes: Option<&[u64]>) -> Vec<u32> {
    match (pp, sizes) {
        (1, _) => vec![1],
        (_, None) => divisors(per_stage, per_stage).collect(),
        (_, Some(sizes)) => divisors(per_stage, per_stage)
            .filter(|&v| {
                v == 1
                    || (matches!(plan.framework, Framework::Megatron | Framework::VerlMegatron)
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
/// optimizer and parameter offload (ZeRO++'s hpZ: [`hpz_options`]), Liger's kernels off and on where the framework patches the
/// model, gradient checkpointing on or off, Ulysses CP for VeRL and, where its FSDP engine shards
/// the gradients, their reduction every micro-batch or once an update, and the micro-batch.
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
        // VeRL's FSDP engine reduces sharded gradients every micro-batch or once an update
        // (`use_no_sync_for_gradient_accumulation`); a replicated one gains nothing from deferring.
        let own = [base.no_sync_accumulation];
        let syncs = |zero_stage: ZeroStage| match plan.framework == Framework::Verl
            && zero_stage.shards_optimizer()
        {
            true => &[false, true][..],
            false => &own[..],
        };
        // The stages the framework shards by (`choices::zero_offered`: VeRL's engine has no ZeRO-1).
        for (zero_stage, liger_kernel, no_sync_accumulation) in crate::choices::zero_offered(plan.framework)
            .iter()
            .copied()
            .flat_map(|z| ligers.iter().flat_map(move |&l| syncs(z).iter().map(move |&s| (z, l, s))))
        {
            // VeRL's FSDP2 engine may run FSDP2's own CPU offload instead (`offload_policy`, which
            // turns those two off: `memory::verl_offload_policy`).
            const OFFLOADS: [(bool, bool, bool); 5] = [
                (false, false, false),
                (true, false, false),
                (false, true, false),
                (true, true, false),
                (false, false, true),
            ];
            let offloads = if crate::memory::verl_fsdp2(plan) { &OFFLOADS[..] } else { &OFFLOADS[..4] };
            let hpzs = hpz_options(shape, zero_stage);
            let settings = hpzs.iter().flat_map(|&hpz| offloads.iter().map(move |&o| (hpz, o)));
            for (zero_hpz, (offload_optimizer, offload_params, offload_policy)) in settings {
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
                            zero_hpz,
                            offload_optimizer,
                            offload_params,
                            offload_policy,
                            overlap_grad_reduce: true,
                            recompute,
                            micro_batch,
                            rollout_tp,
                            rollout_ep,
                            liger_kernel,
                            no_sync_accumulation,
                            ..base
                        };
                        visit(knobs, std::mem::take(&mut starts));
                    }
                }
            }
        }
    }
}

/// DeepSpeed ZeRO++'s hpZ groups the space walks at `zero_stage`: off, and a node's devices, where
/// ZeRO-3 spans nodes and the node's devices divide the world. hpZ keeps a secondary shard of the
/// parameters within each group, so that the backward's gathers stay on the node's links (Wang et
/// al. 2023, "ZeRO++: Extremely Efficient Collective Communication for Giant Model Training", §3.2;
/// DeepSpeed's ZeRO++ tutorial sets it to a node's GPUs), memory traded for speed and nothing the
/// training computes changed. Its quantized weights and gradients (qwZ, qgZ) change the numbers
/// trained on, so they stay as the plan has them (the advice `zero_plus_plus` offers them).
/// Elsewhere hpZ is off below ZeRO-3, where DeepSpeed reads none of it (`zero.zeropp_stage`), and
/// the plan's own on one node, where it gathers over the same links either way.
fn hpz_options(shape: &Shape, zero_stage: ZeroStage) -> Vec<u32> {
    let Shape { plan, base, world, .. } = *shape;
    let node = plan.cluster.devices_per_node.get();
    let takes = crate::knobs::applies(plan.framework, plan.method, crate::knobs::Knob::ZeroHpz).yes();
    match (takes, zero_stage.shards_params()) {
        (false, _) => vec![base.zero_hpz],
        (true, false) => vec![1],
        (true, true) if u64::from(node) < world && world.is_multiple_of(u64::from(node)) => {
            let mut hpzs = vec![1, node, base.zero_hpz];
            hpzs.sort_unstable();
            hpzs.dedup();
            hpzs
        }
        (true, true) => vec![base.zero_hpz],
    }
}
