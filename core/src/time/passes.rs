//! Each virtual stage's forward, backward and weight-gradient seconds for one micro-batch: its
//! layers by kind (dense, MoE) with recomputation, the head and the loss, the MTP layers and
//! activation offloading; the per-rank breakdown by cause, and the model's and recomputation's
//! FLOPs per micro-batch.

use super::gemm::{efficiency, gemm, gemm_16bit};
use super::layer::{LayerWork, layer_work, layer_work_both};
use super::{Breakdown, Ctx, ELEMENTWISE_BYTES_PER_TOKEN_HIDDEN, HBM_EFF, HOST_LINK_BYTES_PER_SECOND};
use crate::layout::{Layout, RankHolds, VirtualStage};
use crate::memory;
use crate::model::{self, Architecture};
use crate::plan::{Plan, RecomputeGranularity};

/// One micro-batch's passes on every virtual stage, in the schedule's order (rank by rank, each
/// rank's chunks in turn), and what they add up to.
pub(super) struct PassCosts {
    /// Each virtual stage's forward seconds, then its backward (input-gradient) seconds,
    /// recomputation included, then its weight-gradient seconds: [`Costs`](crate::schedule::Costs)'
    /// three lists.
    pub(super) lists: Vec<f64>,
    /// The model's FLOPs per micro-batch on one device, as Megatron counts them.
    pub(super) model_flops_per_mb: f64,
    /// Recomputation's FLOPs per micro-batch on one device.
    pub(super) recompute_flops_per_mb: f64,
    /// What the hardware runs beyond those two per micro-batch on one device: the attention core
    /// as its kernel scores it (every pair where eager, the causal half and the window's share where
    /// it skips the rest) less the causal half Megatron counts, in every pass and rerun of it.
    pub(super) hardware_extra_flops_per_mb: f64,
    /// Activation offloading's host transfers per micro-batch, as far as they show.
    pub(super) activation_offload_seconds: f64,
    /// What a rank's causes are counted from ([`Causes::of_rank`]).
    pub(super) causes: Causes,
}

/// Each layer kind's passes and the head's and the MTP projection's seconds: what a rank's
/// breakdown by cause is counted from, for the one rank the breakdown shows.
pub(super) struct Causes {
    kinds: [KindPasses; 2],
    /// Freeze-tuning's frozen layers; `None` where every layer trains.
    frozen: Option<Box<Frozen>>,
    /// Gated DeltaNet layers apart from attention ones; `None` where the model has none of both.
    linear: Option<Box<LinearLayers>>,
    head: (f64, f64, f64),
    proj_seconds: f64,
    /// The vision encoder's passes on the first stage; `None` where it runs over no image.
    encoder: Option<Box<EncoderPasses>>,
}

/// Freeze-tuning's frozen layers: those before the layers it trains (`memory::trained_layers`), and
/// a frozen dense and MoE layer's passes ([`frozen_passes`]).
pub(super) struct Frozen {
    trained: std::ops::Range<u64>,
    kinds: [KindPasses; 2],
}

impl Frozen {
    /// Of a chunk's layers by kind ([`layer_counts`]), the frozen ones.
    fn counts(&self, arch: &Architecture, stage: &VirtualStage) -> [f64; 2] {
        let end = stage.layers.end.min(self.trained.start);
        if end <= stage.layers.start {
            return [0.0; 2];
        }
        let moe = model::moe_layers_in(arch, stage.layers.start..end);
        [(end - stage.layers.start - moe) as f64, moe as f64]
    }

    /// Each chunk's passes, counted with every layer trained, with its frozen layers' made their
    /// forwards alone. Apart from the chunks' own loop, which every other plan runs.
    #[cold]
    #[inline(never)]
    fn correct_chunks(
        &self,
        arch: &Architecture,
        layout: &Layout,
        kinds: &[KindPasses; 2],
        forward: &mut [f64],
        backward: &mut [f64],
        weight: &mut [f64],
    ) {
        in_schedule_order(
            layout,
            |_| true,
            |idx, stage| {
                for ((kind, frozen), n) in kinds.iter().zip(&self.kinds).zip(self.counts(arch, stage)) {
                    forward[idx] += n * (frozen.forward - kind.forward);
                    backward[idx] -= n * kind.backward;
                    weight[idx] -= n * kind.weight;
                }
            },
        );
    }

    /// What the FLOPs counted with every layer trained overcount, as [model, recompute, hardware
    /// extra]: the frozen layers' backward GEMMs and recomputation, and the frozen head's weight
    /// gradient.
    #[cold]
    #[inline(never)]
    fn flops(
        &self,
        ctx: &Ctx,
        layers: [&LayerWork; 2],
        kinds: &[KindPasses; 2],
        head_flops: f64,
    ) -> [f64; 3] {
        let passes = gemm_passes(ctx.plan);
        let frozen_moe = model::moe_layers_in(ctx.arch, 0..self.trained.start) as f64;
        let frozen = [self.trained.start as f64 - frozen_moe, frozen_moe];
        let (mut model, mut recompute, mut hardware) = ((passes - 2.0) * head_flops, 0.0, 0.0);
        for ((l, kind), n) in layers.iter().zip(kinds).zip(frozen) {
            model += n * (passes - 1.0) * (l.model_flops - l.router_flops);
            recompute += n * kind.rerun_flops;
            let rerun = kind.rerun_attention;
            hardware += n
                * (l.attention_hardware_extra(ATTENTION_RUNS - 1.0 + rerun, passes - 1.0 + rerun)
                    + (passes - 1.0) * l.router_flops);
        }
        [model, recompute, hardware]
    }
}

/// A model's Gated DeltaNet layers: each kind's passes ([`KindPasses`]) are an average layer's,
/// its attention and DeltaNet layers each by its share of the model (`share`); a chunk holding
/// `n_l` DeltaNet layers of a kind's `n` runs (`n_l` − share · n) × (a DeltaNet layer's passes
/// less an attention layer's) beyond `n` average layers' (the passes are linear in the layer's
/// work), so each chunk's passes are its own layers' exactly. Freeze-tuning keeps the average.
pub(super) struct LinearLayers {
    share: f64,
    /// Per kind (dense, MoE), a DeltaNet layer's passes less an attention layer's.
    delta: [KindPasses; 2],
}

impl LinearLayers {
    /// `None` for a model without both kinds of layer.
    fn of(ctx: &Ctx) -> Option<Box<LinearLayers>> {
        let (dense_full, dense_linear) = layer_work_both(ctx, false)?;
        let delta = |full: &LayerWork, linear: &LayerWork| {
            let (a, b) = (kind_passes(ctx.plan, full), kind_passes(ctx.plan, linear));
            let (x, y) = (&a.causes, &b.causes);
            KindPasses {
                forward: b.forward - a.forward,
                backward: b.backward - a.backward,
                weight: b.weight - a.weight,
                causes: Breakdown {
                    compute_seconds: y.compute_seconds - x.compute_seconds,
                    memory_bound_seconds: y.memory_bound_seconds - x.memory_bound_seconds,
                    recompute_seconds: y.recompute_seconds - x.recompute_seconds,
                    tp_comm_seconds: y.tp_comm_seconds - x.tp_comm_seconds,
                    cp_comm_seconds: y.cp_comm_seconds - x.cp_comm_seconds,
                    ep_comm_seconds: y.ep_comm_seconds - x.ep_comm_seconds,
                    ..Breakdown::default()
                },
                rerun_flops: 0.0,
                rerun_attention: 0.0,
            }
        };
        let dense = delta(&dense_full, &dense_linear);
        let moe = match layer_work_both(ctx, true).filter(|_| ctx.arch.moe.is_some()) {
            Some((full, linear)) => delta(&full, &linear),
            None => dense.clone(),
        };
        Some(Box::new(LinearLayers { share: model::linear_attention_share(ctx.arch), delta: [dense, moe] }))
    }

    /// Of a chunk's layers by kind (`counts`, [`layer_counts`]), the weights of `delta` that make
    /// its average layers its own: its DeltaNet layers of each kind less the share of all of them.
    fn weights(&self, arch: &Architecture, stage: &VirtualStage, counts: [f64; 2]) -> [f64; 2] {
        let mut linear = [0.0; 2];
        let kind = |i: u64| usize::from(model::is_moe_layer(arch, i));
        for i in stage.layers.clone().filter(|&i| model::is_linear_attention_layer(arch, i)) {
            linear[kind(i)] += 1.0;
        }
        // An MTP layer runs a decoder layer like the model's last.
        let last = arch.n_layers.saturating_sub(1);
        if 0 < stage.mtp && model::is_linear_attention_layer(arch, last) {
            linear[kind(last)] += stage.mtp as f64;
        }
        [linear[0] - self.share * counts[0], linear[1] - self.share * counts[1]]
    }
}

/// One layer kind's (dense or MoE) passes for one micro-batch, and their seconds by cause.
#[derive(Clone)]
struct KindPasses {
    forward: f64,
    backward: f64,
    weight: f64,
    causes: Breakdown,
    rerun_flops: f64,
    /// Reruns of the attention core a backward makes (full recomputation, or selective with
    /// `core_attn`): 1 or 0.
    rerun_attention: f64,
}

/// Each virtual stage's passes for one micro-batch: its layers, then activation offloading on the
/// first stage, then the head, the loss and the MTP layers' own work where a stage holds them.
pub(super) fn pass_costs(ctx: &Ctx, mem: &memory::Memory) -> PassCosts {
    let layout = &mem.layout;
    let dense = layer_work(ctx, false);
    // A dense model counts no MoE layer anywhere (every count of that kind is 0), so its dense
    // layer stands in rather than an MoE one being worked out.
    let moe_work = ctx.arch.moe.is_some().then(|| layer_work(ctx, true));
    let moe = moe_work.as_ref().unwrap_or(&dense);
    // Each layer kind's passes and causes once (a dense and an MoE layer), then counted per chunk:
    // the work is the same for every layer of a kind.
    let dense_passes = kind_passes(ctx.plan, &dense);
    let moe_passes = match &moe_work {
        Some(moe) => kind_passes(ctx.plan, moe),
        None => dense_passes.clone(),
    };
    let kinds = [dense_passes, moe_passes];
    let frozen = memory::trained_layers(ctx.plan)
        .map(|trained| Box::new(Frozen { trained, kinds: [frozen_passes(&dense), frozen_passes(moe)] }));
    let linear = if frozen.is_none() { LinearLayers::of(ctx) } else { None };
    let n_chunks = (layout.pp * layout.chunks) as usize;
    // The three lists in one allocation, zeroed here rather than by the allocator (a zeroed
    // allocation bypasses its cache of recently freed blocks, and a search takes and frees one per
    // plan it times).
    let mut lists = Vec::with_capacity(3 * n_chunks);
    lists.resize(3 * n_chunks, 0.0);
    let (forward, rest) = lists.split_at_mut(n_chunks);
    let (backward, weight) = rest.split_at_mut(n_chunks);
    // Chunks of a model whose layers are all of one kind, dense or MoE, without MTP layers: each
    // chunk's count of that kind alone ([`one_kind_chunk`]). A loop of its own, so that it stays
    // inline.
    match one_kind(ctx.arch, layout, &kinds, linear.as_deref()) {
        Some(one) => in_schedule_order(
            layout,
            |_| true,
            |idx, stage| {
                (forward[idx], backward[idx], weight[idx]) = one_kind_chunk(one, stage);
            },
        ),
        None => in_schedule_order(
            layout,
            |_| true,
            |idx, stage| {
                (forward[idx], backward[idx], weight[idx]) =
                    chunk_passes(ctx.arch, &kinds, linear.as_deref(), stage);
            },
        ),
    }
    let head = head(ctx);
    // Each MTP layer's projection of [h; embedding] to h.
    let h = ctx.arch.hidden_size as f64;
    let (proj_seconds, proj_flops) = gemm(ctx, ctx.tokens, 2.0 * h, h / ctx.tp);
    let [mut model_flops_per_mb, mut recompute_flops_per_mb, mut hardware_extra_flops_per_mb] =
        flops_per_microbatch(ctx, layout.model_parallel, [&dense, moe], &kinds, head.1, proj_flops);
    if let Some(frozen) = &frozen {
        frozen.correct_chunks(ctx.arch, layout, &kinds, forward, backward, weight);
        let [model, recompute, hardware] = frozen.flops(ctx, [&dense, moe], &kinds, head.1);
        model_flops_per_mb -= model;
        recompute_flops_per_mb -= recompute;
        hardware_extra_flops_per_mb -= hardware;
    }
    // Out of line, and asked only of a model with an encoder and images: a check every estimate
    // pays (docs/DESIGN.md, "What does the median plan cost?").
    let encoder = match (&ctx.arch.vision, ctx.plan.batch.image_tokens) {
        (None, _) | (_, 0) => None,
        (Some(vision), _) => {
            let flops = [&mut model_flops_per_mb, &mut recompute_flops_per_mb];
            add_encoder(ctx, vision, (&mut forward[0], &mut backward[0]), flops)
        }
    };
    let causes = Causes { kinds, frozen, linear, head, proj_seconds, encoder };
    let activation_offload_seconds = offload_activations(ctx, mem, layout.stage(0, 0), forward, backward);
    add_heads(layout, head, proj_seconds, forward, backward);
    PassCosts {
        lists,
        model_flops_per_mb,
        recompute_flops_per_mb,
        hardware_extra_flops_per_mb,
        activation_offload_seconds,
        causes,
    }
}

/// A chunk's forward, backward and weight seconds for one micro-batch: its layers of each kind,
/// and the Gated DeltaNet layers' difference from attention ones where the model has both.
fn chunk_passes(
    arch: &Architecture,
    kinds: &[KindPasses; 2],
    linear: Option<&LinearLayers>,
    stage: &VirtualStage,
) -> (f64, f64, f64) {
    let (mut f, mut b, mut w) = (0.0, 0.0, 0.0);
    let counts = layer_counts(arch, stage);
    for (kind, n) in kinds.iter().zip(counts) {
        if n != 0.0 {
            f += n * kind.forward;
            b += n * kind.backward;
            w += n * kind.weight;
        }
    }
    if let Some(linear) = linear {
        for (delta, n) in linear.delta.iter().zip(linear.weights(arch, stage, counts)) {
            f += n * delta.forward;
            b += n * delta.backward;
            w += n * delta.weight;
        }
    }
    (f, b, w)
}

/// The one kind every chunk's layers are of, where [`chunk_passes`] is a count times that kind's
/// passes ([`one_kind_chunk`]): every layer dense or every one MoE ([`model::one_layer_kind`]), no
/// Gated DeltaNet layers apart, and no MTP layer on any chunk.
fn one_kind<'k>(
    arch: &Architecture,
    layout: &Layout,
    kinds: &'k [KindPasses; 2],
    linear: Option<&LinearLayers>,
) -> Option<&'k KindPasses> {
    let moe = model::one_layer_kind(arch)?;
    let plain = linear.is_none() && layout.stages.iter().all(|stage| stage.mtp == 0);
    plain.then(|| &kinds[usize::from(moe)])
}

/// [`chunk_passes`] of a chunk whose layers are all of kind `one` ([`one_kind`]): the other kind's
/// count is 0, and 0.0 + x is x, so the same seconds to the bit.
fn one_kind_chunk(one: &KindPasses, stage: &VirtualStage) -> (f64, f64, f64) {
    // Through `i64`, one instruction where `u64` takes several: a layer count is far below 2^63,
    // where both give the same float.
    let n = (stage.layers.end - stage.layers.start) as i64 as f64;
    match n != 0.0 {
        true => (n * one.forward, n * one.backward, n * one.weight),
        false => (0.0, 0.0, 0.0),
    }
}

/// A chunk's decoder layers by kind, (dense, MoE): an MTP layer runs a decoder layer like the
/// model's last (its head and loss are added in [`add_heads`]).
fn layer_counts(arch: &Architecture, stage: &VirtualStage) -> [f64; 2] {
    let n = stage.layers.end - stage.layers.start;
    if arch.moe.is_none() && stage.mtp == 0 {
        return [n as f64, 0.0];
    }
    let moe = model::moe_layers_in(arch, stage.layers.clone());
    let mut count = [(n - moe) as f64, moe as f64];
    if 0 < stage.mtp {
        count[usize::from(model::is_moe_layer(arch, arch.n_layers.saturating_sub(1)))] += stage.mtp as f64;
    }
    count
}

impl Causes {
    /// Rank `rank`'s seconds for one micro-batch by cause: each chunk's layers by kind, then the
    /// heads and MTP projections of the chunks that hold them.
    pub(super) fn of_rank(&self, arch: &Architecture, layout: &Layout, rank: u64) -> Breakdown {
        let Causes { kinds, frozen, linear, head: (head_seconds, _, head_memory), proj_seconds, encoder } =
            self;
        let mut r = Breakdown::default();
        if let (0, Some(encoder)) = (rank, encoder) {
            r.compute_seconds += encoder.forward + encoder.backward;
            r.recompute_seconds += encoder.rerun;
        }
        let chunks = layout.rank_stages(rank);
        for stage in chunks.clone() {
            let counts = layer_counts(arch, stage);
            add_causes(&mut r, kinds, counts, 1.0);
            if let Some(linear) = linear {
                add_causes(&mut r, &linear.delta, linear.weights(arch, stage, counts), 1.0);
            }
            // Freeze-tuning's frozen layers: their forwards' causes, not a trained layer's.
            if let Some(frozen) = frozen {
                let n = frozen.counts(arch, stage);
                add_causes(&mut r, kinds, n, -1.0);
                add_causes(&mut r, &frozen.kinds, n, 1.0);
            }
        }
        for stage in chunks {
            let heads = f64::from(u8::from(stage.loss)) + stage.mtp as f64;
            let proj = stage.mtp as f64 * proj_seconds;
            r.compute_seconds += 3.0 * (heads * head_seconds + proj);
            r.memory_bound_seconds += 2.0 * heads * head_memory;
        }
        r
    }
}

/// Adds `counts` layers of each kind's seconds by cause, times `sign`, to `r`.
fn add_causes(r: &mut Breakdown, kinds: &[KindPasses; 2], counts: [f64; 2], sign: f64) {
    for (kind, n) in kinds.iter().zip(counts) {
        if n == 0.0 {
            continue;
        }
        let n = sign * n;
        let causes = &kind.causes;
        r.compute_seconds += n * causes.compute_seconds;
        r.memory_bound_seconds += n * causes.memory_bound_seconds;
        r.recompute_seconds += n * causes.recompute_seconds;
        r.tp_comm_seconds += n * causes.tp_comm_seconds;
        r.cp_comm_seconds += n * causes.cp_comm_seconds;
        r.ep_comm_seconds += n * causes.ep_comm_seconds;
    }
}

/// One micro-batch's decoder-layer passes on an average rank: every virtual stage's layers by kind,
/// at [`kind_passes`]' seconds each, over the ranks. The busiest rank's passes take at least as
/// long, so a pipeline of `m` micro-batches takes at least `m` times this: a bound a search checks
/// before working out each stage's passes. The head, the MTP layers and offloading only add.
pub(super) fn mean_rank_layer_seconds(ctx: &Ctx, mem: &memory::Memory) -> f64 {
    let stages = &mem.layout.stages;
    // The split and a layout string number the layers in order from the first, so the last stage
    // ends where they all do: no walk over the stages (a search reads this layout cold, long after
    // it was made, and the walk cost more than the rest of the bound).
    let n_layers = stages.last().map_or(0, |s| s.layers.end);
    debug_assert_eq!(n_layers, stages.iter().map(|s| s.layers.end - s.layers.start).sum::<u64>());
    let n_moe = model::moe_layers_in(ctx.arch, 0..n_layers);
    let mut total = 0.0;
    // Freeze-tuning's frozen layers run their forwards alone: every layer's frozen forward, no more
    // than a frozen or a trained layer runs.
    let freeze = ctx.plan.method == crate::plan::Method::Freeze;
    for (n, moe) in [(n_layers - n_moe, false), (n_moe, true)] {
        if 0 < n {
            let work = layer_work(ctx, moe);
            total += n as f64
                * match freeze {
                    true => frozen_passes(&work).forward,
                    false => {
                        let kind = kind_passes(ctx.plan, &work);
                        kind.forward + kind.backward + kind.weight
                    }
                };
        }
    }
    total / mem.layout.pp.max(1) as f64
}

/// The attention core's forward and its backward (input gradients only: it has no weights), in
/// forwards' worth: 1 + 2, whether or not the base is frozen.
const ATTENTION_RUNS: f64 = 3.0;

/// Forward, input gradients and (unless the base is frozen) weight gradients: 3 GEMM passes, or 2.
fn gemm_passes(plan: &Plan) -> f64 {
    if plan.trains_lora() { 2.0 } else { 3.0 }
}

/// One layer's passes from its forward work. Backward is twice the forward's GEMMs (input and
/// weight gradients); recomputation reruns the forward (full) or the attention core (selective)
/// before it.
fn kind_passes(plan: &Plan, l: &LayerWork) -> KindPasses {
    let recompute = plan.recompute.granularity;
    let frozen = plan.trains_lora();
    let passes = gemm_passes(plan);
    let rerun_share = if recompute == RecomputeGranularity::Full { 1.0 } else { 0.0 };
    let comm = l.tp_seconds + l.cp_seconds + l.ep_seconds;
    let fwd = l.gemm_seconds
        + l.attention_seconds
        + l.memory_seconds
        + l.eager_seconds
        + l.forward_only_seconds
        + comm;
    let (rerun, rerun_flops, rerun_attention) = match recompute {
        RecomputeGranularity::Full => (fwd, l.model_flops, 1.0),
        RecomputeGranularity::Selective => selective_rerun(plan, l),
        RecomputeGranularity::None => (0.0, 0.0, 0.0),
    };
    // Input gradients: one GEMM per forward GEMM, attention twice, the collectives again,
    // after the recomputed forward; weight gradients: one GEMM per forward GEMM. A frozen base
    // (LoRA, QLoRA) needs no weight gradients; the adapters' are negligible.
    let gather = l.checkpoint_gather_seconds;
    let bwd = l.gemm_seconds
        + 2.0 * l.attention_seconds
        + l.memory_seconds
        + 2.0 * l.eager_seconds
        + comm
        + rerun
        + gather;
    let wgt = if frozen { 0.0 } else { l.gemm_seconds };
    let causes = Breakdown {
        // Forward, input-gradient and (unless frozen) weight-gradient GEMMs; attention thrice.
        compute_seconds: passes * l.gemm_seconds + 3.0 * l.attention_seconds,
        memory_bound_seconds: (2.0 + rerun_share) * l.memory_seconds
            + (3.0 + rerun_share) * l.eager_seconds
            + (1.0 + rerun_share) * l.forward_only_seconds,
        recompute_seconds: match recompute {
            RecomputeGranularity::Full => l.gemm_seconds + l.attention_seconds,
            _ => rerun,
        },
        tp_comm_seconds: (2.0 + rerun_share) * l.tp_seconds + gather,
        cp_comm_seconds: (2.0 + rerun_share) * l.cp_seconds,
        ep_comm_seconds: (2.0 + rerun_share) * l.ep_seconds,
        ..Breakdown::default()
    };
    KindPasses { forward: fwd, backward: bwd, weight: wgt, causes, rerun_flops, rerun_attention }
}

/// A layer freeze-tuning keeps frozen (before the trained ones): its forward alone, on its 16-bit
/// weights (no autocast casts). No backward reaches it, since its input needs no gradient and its
/// weights none, and nothing reruns it: LLaMA-Factory checkpoints only the layers with trainable
/// parameters (`get_custom_gradient_checkpointing_func`,
/// src/llamafactory/model/model_utils/checkpointing.py).
fn frozen_passes(l: &LayerWork) -> KindPasses {
    let comm = l.tp_seconds + l.cp_seconds + l.ep_seconds;
    let memory = l.memory_seconds - l.cast_seconds;
    let forward =
        l.gemm_seconds + l.attention_seconds + memory + l.eager_seconds + l.forward_only_seconds + comm;
    let causes = Breakdown {
        compute_seconds: l.gemm_seconds + l.attention_seconds,
        memory_bound_seconds: memory + l.eager_seconds + l.forward_only_seconds,
        tp_comm_seconds: l.tp_seconds,
        cp_comm_seconds: l.cp_seconds,
        ep_comm_seconds: l.ep_seconds,
        ..Breakdown::default()
    };
    KindPasses { forward, backward: 0.0, weight: 0.0, causes, rerun_flops: 0.0, rerun_attention: 0.0 }
}

/// The vision encoder's passes ([`encoder_passes`]) added to the first chunk's and its FLOPs to the
/// micro-batch's [model, recompute] FLOPs.
#[inline(never)]
fn add_encoder(
    ctx: &Ctx,
    vision: &crate::vision::Encoder,
    (forward, backward): (&mut f64, &mut f64),
    [model_flops, recompute_flops]: [&mut f64; 2],
) -> Option<Box<EncoderPasses>> {
    let encoder = encoder_passes(ctx, vision)?;
    *model_flops += encoder.model_flops;
    *recompute_flops += encoder.rerun_flops;
    *forward += encoder.forward;
    *backward += encoder.backward + encoder.rerun;
    Some(encoder)
}

/// A multimodal model's vision encoder on the first stage, for one micro-batch: its passes' seconds
/// and FLOPs ([`encoder_passes`]).
pub(super) struct EncoderPasses {
    forward: f64,
    /// Input and weight gradients.
    backward: f64,
    /// The forward again in the backward, under full recomputation.
    rerun: f64,
    /// Forward and backward FLOPs, as the model's.
    model_flops: f64,
    rerun_flops: f64,
}

/// The vision encoder's work for one micro-batch where the framework runs it
/// ([`memory::vision_encoder`]): a forward over each sequence's image tokens
/// (`Batch::image_tokens`, at most the sequence), two FLOPs per parameter a token passes through
/// (`vision::Encoder::token_params`) and split by TP as the weights are; where it trains, a
/// backward of twice that (input and weight gradients, Kaplan et al. 2020's 2N + 4N) and, under
/// full recomputation (Hugging Face models checkpoint the encoder's blocks with the decoder's:
/// `gradient_checkpointing_enable`), the forward again. A frozen encoder takes no backward: nothing
/// before it asks for a gradient. Its GEMMs run at the efficiency of the language model's over the
/// same tokens (their sizes are alike: Qwen2.5-VL's encoder multiplies 2 × 2 patches of width
/// 1,280 per token where its decoder multiplies one of 3,584). Its attention over each image's
/// patches adds 4 · width · P FLOPs a patch in each block that spans the image
/// (`vision::Encoder::attention_layers`; windows left out), P the image's patches: the encoder's
/// fixed size where it has one (Gemma 3), else the sequence's image tokens taken as one image, an
/// upper bound where a sequence holds several. `None` where the framework does not run the
/// encoder.
fn encoder_passes(ctx: &Ctx, v: &crate::vision::Encoder) -> Option<Box<EncoderPasses>> {
    let trains = match memory::vision_encoder(ctx.plan) {
        memory::VisionEncoder::NotLoaded => return None,
        memory::VisionEncoder::Frozen => false,
        memory::VisionEncoder::Trained => true,
    };
    let image_tokens = f64::from(ctx.plan.batch.image_tokens).min(ctx.seq);
    let tokens = image_tokens * ctx.micro_batch / ctx.cp;
    // The attention over each image's P patches in the blocks that span it, QKᵀ and the weighted
    // values: 4 · P² · width FLOPs a block, so 4 · width · P per patch; a sequence's image tokens
    // are one image unless the encoder takes images of one size.
    let patches = image_tokens * v.token_patches as f64;
    let per_image = match v.image_patches {
        0 => patches,
        n => patches.min(n as f64),
    };
    let attention = 4.0 * v.attention_layers as f64 * v.width as f64 * per_image;
    let flops = tokens * (2.0 * v.token_params as f64 + v.token_patches as f64 * attention) / ctx.tp;
    let h = ctx.arch.hidden_size as f64;
    let forward = flops / (ctx.peak * efficiency(ctx, 2.0 * tokens * h * h));
    let rerun = trains && ctx.plan.recompute.granularity == RecomputeGranularity::Full;
    let (backward, passes) = if trains { (2.0, 3.0) } else { (0.0, 1.0) };
    let rerun = f64::from(u8::from(rerun));
    Some(Box::new(EncoderPasses {
        forward,
        backward: backward * forward,
        rerun: rerun * forward,
        model_flops: passes * flops,
        rerun_flops: rerun * flops,
    }))
}

/// Head and loss on the last stage: the logits GEMM and a memory-bound softmax, as (GEMM seconds,
/// GEMM FLOPs, memory-bound seconds).
fn head(ctx: &Ctx) -> (f64, f64, f64) {
    let arch = ctx.arch;
    let v = arch.vocab_size as f64;
    let (head_seconds, head_flops) = gemm_16bit(ctx, ctx.tokens, arch.hidden_size as f64, v / ctx.tp);
    // An fp32 softmax read and written, per pass. The HF `Trainer`'s loss (LLaMA-Factory) first
    // copies the 16-bit logits to fp32 (`logits.float()` in transformers' `ForCausalLMLoss`: 2 + 4),
    // and PyTorch's log-softmax reads its input twice (maximum, sum) before reading it again to
    // write (16); its backward zero-fills the gradient (4), reads gradient, output and gradient
    // again to write (16) and casts back (4 + 2): 48 bytes a logit, 24 a pass.
    // Liger's fused linear cross entropy moves each chunk's 16-bit logits a few times in forward
    // and none in backward ([`super::LIGER_FLCE_BYTES_PER_LOGIT_PASS`]); its GEMMs are the head's.
    let bytes = if crate::memory::liger_fused_loss(ctx.plan) {
        super::LIGER_FLCE_BYTES_PER_LOGIT_PASS
    } else if crate::memory::hf_trainer_loss(ctx.plan) {
        24.0
    } else {
        3.0 * 4.0
    };
    let head_memory = bytes * ctx.tokens * v / ctx.tp / (ctx.hw.memory_bytes_per_second * HBM_EFF);
    (head_seconds, head_flops, head_memory)
}

/// The model's and recomputation's FLOPs per micro-batch on one device, and what the hardware runs
/// beyond them, as [model, recompute, hardware extra]: the decoder layers, the MTP layers, the head
/// once more for each MTP layer and their projections.
fn flops_per_microbatch(
    ctx: &Ctx,
    megatron: bool,
    layers: [&LayerWork; 2],
    kinds: &[KindPasses; 2],
    head_flops: f64,
    proj_flops: f64,
) -> [f64; 3] {
    let (plan, arch) = (ctx.plan, ctx.arch);
    let passes = gemm_passes(plan);
    let [dense, moe] = layers;
    let mut model_flops_per_mb = 0.0;
    let mut recompute_flops_per_mb = 0.0;
    let mut hardware_extra = 0.0;
    let n_moe = model::moe_layers_in(arch, 0..arch.n_layers) as f64;
    // The router's GEMMs run on the hardware but are no model FLOPs in Megatron's count.
    for (l, kind, n) in [(dense, &kinds[0], arch.n_layers as f64 - n_moe), (moe, &kinds[1], n_moe)] {
        model_flops_per_mb += n * passes * (l.model_flops - l.router_flops);
        recompute_flops_per_mb += n * kind.rerun_flops;
        let rerun = kind.rerun_attention;
        hardware_extra += n
            * (l.attention_hardware_extra(ATTENTION_RUNS + rerun, passes + rerun) + passes * l.router_flops);
    }
    // The head and the loss on the stage that holds them, once more for each MTP layer (its own
    // prediction through the shared head), and each MTP layer's projection of [h; embedding] to h.
    let last_layer = arch.n_layers.saturating_sub(1);
    let n_mtp = plan.mtp_layers as f64 * f64::from(megatron);
    let mtp_kind = usize::from(model::is_moe_layer(arch, last_layer));
    let mtp = [dense, moe][mtp_kind];
    model_flops_per_mb += n_mtp * passes * (mtp.model_flops - mtp.router_flops);
    recompute_flops_per_mb += n_mtp * kinds[mtp_kind].rerun_flops;
    let rerun = kinds[mtp_kind].rerun_attention;
    hardware_extra += n_mtp
        * (mtp.attention_hardware_extra(ATTENTION_RUNS + rerun, passes + rerun) + passes * mtp.router_flops);
    model_flops_per_mb += passes * (head_flops * (1.0 + n_mtp) + proj_flops * n_mtp);
    [model_flops_per_mb, recompute_flops_per_mb, hardware_extra]
}

/// Activation offloading on the first stage (`first`), added to its passes; returns the transfers'
/// seconds that show, per micro-batch.
///
/// Megatron `--cpu-offloading-num-layers`, PP 1 only: each offloaded layer's activations cross the
/// host link after its forward and again before its backward, overlapped with the next layer's
/// forward (and the previous one's backward): "offloaded to the CPU asynchronously"
/// (megatron/core/model_parallel_config.py `cpu_offloading`; the context is Transformer Engine's
/// `get_cpu_offload_context`, megatron/core/transformer/transformer_block.py); what does not fit
/// behind it shows.
fn offload_activations(
    ctx: &Ctx,
    mem: &memory::Memory,
    first: &VirtualStage,
    forward: &mut [f64],
    backward: &mut [f64],
) -> f64 {
    let (megatron, pp) = (mem.layout.model_parallel, mem.layout.pp);
    let mut activation_offload_seconds = 0.0;
    let offloaded =
        u64::from(ctx.plan.recompute.cpu_offload_layers).min(first.layers.end - first.layers.start);
    let offloaded_bytes = mem.stages.first().map_or(0, |s| s.offloaded_activations_bytes) as f64;
    if megatron && pp == 1 && 0 < offloaded && 0.0 < offloaded_bytes {
        let transfer = offloaded_bytes / offloaded as f64 / HOST_LINK_BYTES_PER_SECOND;
        let n = (first.layers.end - first.layers.start).max(1) as f64;
        let (fwd_layer, bwd_layer) = (forward[0] / n, backward[0] / n);
        let exposed = offloaded as f64 * ((transfer - fwd_layer).max(0.0) + (transfer - bwd_layer).max(0.0));
        forward[0] += offloaded as f64 * (transfer - fwd_layer).max(0.0);
        backward[0] += offloaded as f64 * (transfer - bwd_layer).max(0.0);
        activation_offload_seconds = exposed;
    }
    activation_offload_seconds
}

/// The head and the loss (from [`head`]) on the chunk that holds them, once more per MTP layer with
/// its projection, added to the chunks' passes.
fn add_heads(
    layout: &Layout,
    (head_seconds, _, head_memory): (f64, f64, f64),
    proj_seconds: f64,
    forward: &mut [f64],
    backward: &mut [f64],
) {
    // Only the ranks that hold a head have a chunk that does.
    let with_heads = |holds: RankHolds| holds.loss || 0 < holds.mtp;
    in_schedule_order(layout, with_heads, |idx, stage| {
        if stage.loss || 0 < stage.mtp {
            let heads = f64::from(u8::from(stage.loss)) + stage.mtp as f64;
            let proj = stage.mtp as f64 * proj_seconds;
            forward[idx] += heads * (head_seconds + head_memory) + proj;
            backward[idx] += heads * (2.0 * head_seconds + head_memory) + 2.0 * proj;
        }
    });
}

/// Hands `visit` every virtual stage of the ranks `wanted` takes (by what each holds over its
/// chunks, [`Layout::rank`]) with its index in the schedule's order: rank by rank, each rank's
/// chunks in turn (rank `r`'s chunk `c` at `r · chunks + c`). Plain loops: no division per stage,
/// and none of an iterator adapter's bookkeeping on this per-plan path.
fn in_schedule_order<'a>(
    layout: &'a Layout,
    wanted: impl Fn(RankHolds) -> bool,
    mut visit: impl FnMut(usize, &'a VirtualStage),
) {
    // One chunk a rank (most plans): the stages in model order are the ranks'.
    if layout.chunks == 1 {
        let ranks = (layout.pp as usize).min(layout.stages.len());
        for (rank, stage) in layout.stages[..ranks].iter().enumerate() {
            if wanted(layout.rank(rank as u64)) {
                visit(rank, stage);
            }
        }
        return;
    }
    for rank in 0..layout.pp {
        if wanted(layout.rank(rank)) {
            let first = (rank * layout.chunks) as usize;
            for chunk in 0..layout.chunks {
                visit(first + chunk as usize, layout.stage(rank, chunk));
            }
        }
    }
}

/// What selective recomputation reruns in one layer's backward, as (seconds, FLOPs, reruns of the
/// attention core: 1 or 0): each module
/// `--recompute-modules` names reruns its forward (Megatron-LM core_v0.19.0
/// `transformer_config.py` `recompute_modules`; Korthikanti et al. 2022 §5 for `core_attn`):
/// `core_attn` the attention core, `mlp` a dense layer's MLP GEMMs, `moe` an MoE layer's expert
/// GEMMs and its dispatch and combine, `layernorm` the two norms (a read and a write of h 16-bit
/// values each: 8 of the layer's [`ELEMENTWISE_BYTES_PER_TOKEN_HIDDEN`]). `moe_act`, `mla_up_proj`
/// and `shared_experts` rerun small or uncounted kernels and add nothing here (docs/time.md).
fn selective_rerun(plan: &Plan, l: &LayerWork) -> (f64, f64, f64) {
    let modules = memory::recompute_modules(plan);
    let mut res = (0.0, 0.0, 0.0);
    if modules.core_attn {
        res = (l.attention_seconds, l.attention_flops, 1.0);
    }
    let mlp = (!l.moe_layer && modules.mlp) || (l.moe_layer && modules.moe);
    if mlp {
        res.0 += l.mlp_gemm_seconds + l.ep_seconds;
        res.1 += l.mlp_flops;
    }
    if modules.layernorm {
        res.0 += l.memory_seconds * 8.0 / ELEMENTWISE_BYTES_PER_TOKEN_HIDDEN;
    }
    res
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Where every chunk's layers are of one kind, a count times that kind's passes is what the
    /// sums by kind give, to the bit: dense (Llama 3.1 8B, 70B and 405B, split evenly, unevenly
    /// and interleaved) and all-MoE (Qwen3-235B-A22B). Not taken where kinds mix (DeepSeek-V3's
    /// first dense layers) or a chunk holds an MTP layer (Llama 3.1 8B trained with one).
    #[test]
    fn chunks_of_one_kind_cost_what_their_sums_by_kind_give() {
        let mut chunks = 0;
        for (model, parallel, mtp, taken) in [
            ("llama-3.1-8b", "\"pp\": 32", 0, true),
            ("llama-3.1-70b", "\"pp\": 16, \"vpp\": 2", 0, true),
            ("llama-3.1-405b", "\"pp\": 32, \"vpp\": 3", 0, true),
            ("qwen3-235b-a22b", "\"pp\": 4, \"uneven_layers\": true", 0, true),
            ("deepseek-v3", "\"pp\": 16", 0, false),
            ("llama-3.1-8b", "\"pp\": 4", 1, false),
        ] {
            let text = format!(
                r#"{{"model": "{model}", "framework": "megatron", "method": "pretrain", "cluster": {{"nodes": 64}},
                    "parallel": {{{parallel}}}, "mtp_layers": {mtp}, "batch": {{"global_batch": 512}}}}"#
            );
            let plan = Plan::from_json(&text).unwrap_or_else(|e| panic!("{text}: {e}"));
            let mem = memory::estimate(&plan);
            let ctx = Ctx::new(&plan, &mem);
            let (dense, moe) = (layer_work(&ctx, false), layer_work(&ctx, true));
            let kinds = [kind_passes(&plan, &dense), kind_passes(&plan, &moe)];
            let one = one_kind(ctx.arch, &mem.layout, &kinds, None);
            assert_eq!(one.is_some(), taken, "{text}");
            for stage in one.iter().flat_map(|_| mem.layout.stages.iter()) {
                let (f, b, w) = one_kind_chunk(one.unwrap(), stage);
                let summed = chunk_passes(ctx.arch, &kinds, None, stage);
                assert_eq!(
                    [f, b, w].map(f64::to_bits),
                    [summed.0, summed.1, summed.2].map(f64::to_bits),
                    "{text}"
                );
                chunks += 1;
            }
        }
        assert_eq!(chunks, 32 + 32 + 96 + 4);
    }
}
