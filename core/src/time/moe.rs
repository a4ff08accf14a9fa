//! An MoE layer's feed-forward: the router, the routed experts' GEMMs on the busiest device, the
//! shared experts, the token permutation, and the dispatch and combine by dispatcher
//! (docs/time.md, "MoE layers").

use super::comm::{link_bandwidth, ring_seconds_on};
use super::gemm::{efficiency, gemm, gemm_16bit};
use super::layer::LayerWork;
use super::{
    Ctx, EXPERT_LOOP_SECONDS_PER_GEMM, FLEX_LINK_EFF, GROUPED_GEMM_BLOCK_ROWS, HBM_EFF,
    MOE_PERMUTE_PASSES_FUSED, MOE_PERMUTE_PASSES_UNFUSED, ROUTER_BYTES_PER_LOGIT,
};
use crate::model;
use crate::plan::{MoeDispatcher, PipelineSchedule, Plan};

/// Whether the plan hides the dispatch and combine all-to-alls behind compute: it asks for
/// Megatron-LM's EP overlap (MindSpeed-LLM `--moe-alltoall-overlap-comm`), or runs DualPipeV,
/// whose forward/backward chunk pairs overlap them (DeepSeek-V3, arXiv 2412.19437 §3.2.1).
pub(super) fn moe_ep_overlapped(plan: &Plan) -> bool {
    plan.moe.overlap_ep_comm || plan.parallel.schedule == PipelineSchedule::DualPipeV
}

/// One MoE layer's feed-forward on one device for one micro-batch, forward (docs/time.md, "MoE
/// layers"): the router, the routed experts on the busiest device, the shared experts, the token
/// permutation and the dispatch and combine.
pub(super) fn moe_feed_forward(ctx: &Ctx, moe: &model::Moe, w: &mut LayerWork) {
    let settings = &ctx.plan.moe;
    let (t, tokens, h) = (ctx.tp, ctx.tokens, ctx.arch.hidden_size as f64);
    // Routed tokens: top-k copies through experts of width f_e, spread over the EP group. With
    // balanced routing each device processes as many token-slots as its own tokens send
    // (tokens · k), spread over its E / ep local experts; the busiest device takes the load
    // factor times that (imbalance, capacity, padding: `MoeFile::load_factor`). With EP 1 one
    // device holds every expert, so the imbalance among them moves no work off it; padding still
    // computes the padded rows.
    let load = match (1.0 < ctx.ep, settings.pad_to_capacity) {
        (false, false) => 1.0,
        _ => settings.load_factor(),
    };
    let routed = tokens * moe.top_k as f64;
    let f_e = moe.expert_intermediate_size as f64 / f64::from(ctx.plan.parallel.etp.get());
    let local_experts = (moe.n_experts as f64 / ctx.ep).max(1.0);
    let rows = routed / local_experts * load;
    // Gate and up projections and the down projection: 3 GEMMs of rows × h × f_e per expert.
    w.gemm_seconds += 3.0 * expert_gemm_seconds(ctx, rows, local_experts, h, f_e);
    w.model_flops += 3.0 * 2.0 * routed * h * f_e;
    // Router: the gating GEMM (`TopKRouter` keeps it in 16 bits or fp32, never fp8) and the
    // memory-bound scoring and top-k over fp32 logits.
    let (router_seconds, router_flops) = gemm_16bit(ctx, tokens, h, moe.n_experts as f64);
    w.gemm_seconds += router_seconds;
    w.model_flops += router_flops;
    w.router_flops = router_flops;
    let hbm = ctx.hw.memory_bytes_per_second * HBM_EFF;
    w.memory_seconds += ROUTER_BYTES_PER_LOGIT * tokens * moe.n_experts as f64 / hbm;
    if 0 < moe.shared_intermediate_size {
        for _ in 0..3 {
            let (seconds, flops) = gemm(ctx, tokens, h, moe.shared_intermediate_size as f64 / t);
            w.gemm_seconds += seconds;
            w.model_flops += flops;
        }
    }
    // Token permutation and unpermutation (memory-bound gathers and scatters of 16-bit rows),
    // the backward the same again (`estimate_within` counts memory work both ways).
    let passes = match settings.permute_fusion {
        true => MOE_PERMUTE_PASSES_FUSED,
        false => MOE_PERMUTE_PASSES_UNFUSED,
    };
    w.memory_seconds += (passes * routed * load + tokens) * h * 2.0 / t / hbm;
    if 1.0 < ctx.ep {
        w.ep_seconds += ep_dispatch_combine_seconds(ctx, routed, moe.top_k as f64);
    }
}

/// Seconds of one of an MoE layer's expert GEMMs (`rows` tokens × `k` by `k` × `n`, per expert)
/// over all `experts` local experts, forward. Each expert's GEMM is the slower of its FLOPs and
/// its bytes (weights and activations read, output written: small expert batches are bound by
/// memory); its efficiency loses the padding of each expert's rows to the grouped GEMM's block
/// ([`GROUPED_GEMM_BLOCK_ROWS`]). A grouped GEMM (`--moe-grouped-gemm`) is one kernel as large as
/// all experts together; a loop runs each expert's GEMM alone, at its own size's efficiency, and
/// pays [`EXPERT_LOOP_SECONDS_PER_GEMM`] per expert.
fn expert_gemm_seconds(ctx: &Ctx, rows: f64, experts: f64, k: f64, n: f64) -> f64 {
    if rows <= 0.0 || k <= 0.0 || n <= 0.0 {
        return 0.0;
    }
    let flops = 2.0 * rows * k * n;
    let grouped = ctx.plan.moe.grouped_gemm;
    let size_efficiency = match grouped {
        true => efficiency(ctx, flops * experts),
        false => efficiency(ctx, flops),
    };
    let padding = rows / (rows + GROUPED_GEMM_BLOCK_ROWS / 2.0);
    let compute = flops / (ctx.linear_peak * size_efficiency * padding);
    let element_bytes = if ctx.fp8 { 1.0 } else { 2.0 };
    let hbm = ctx.hw.memory_bytes_per_second * HBM_EFF;
    let traffic = (element_bytes * (k * n + rows * k) + 2.0 * rows * n) / hbm;
    // fp8: the input and the weight cast first, as for the dense GEMMs (`gemm`).
    let cast = match ctx.fp8 {
        true => 3.0 * (rows * k + k * n) / hbm,
        false => 0.0,
    };
    let launch = if grouped { 0.0 } else { EXPERT_LOOP_SECONDS_PER_GEMM };
    experts * (compute.max(traffic) + cast + launch)
}

/// Seconds of an MoE layer's dispatch and combine, forward, on the busiest link, by dispatcher
/// (docs/time.md, "MoE layers"). EP peers sit `tp` ranks apart (Megatron's order: TP innermost,
/// then EP), so `domain ÷ tp` of them share a scale-up domain (NVLink/HCCS) and the rest sit
/// behind the NICs, one per device.
///
/// - all-to-all: each device sends (ep − 1)/ep of its routed rows (k copies, 16-bit): the share
///   bound for its own domain over the scale-up links, the rest over its NIC, both at once.
///   Not a ring: each byte crosses one link once.
/// - flex (DeepEP/HybridEP): a token crosses the network once per remote domain that holds one
///   of its k experts, (d − 1)(1 − (1 − 1/d)^k) of d domains with uniform routing, then NVLink
///   forwards it; fp8 plans dispatch in fp8 (DeepSeek-V3 §3.3, DeepEP's FP8 dispatch), combine
///   in bf16.
/// - all-gather: the EP × TP group gathers every token (ring all-gather) and reduce-scatters
///   the outputs (`MoEAllGatherTokenDispatcher`).
fn ep_dispatch_combine_seconds(ctx: &Ctx, routed: f64, top_k: f64) -> f64 {
    let (ep, tp) = (ctx.ep, ctx.tp);
    let h = ctx.arch.hidden_size as f64;
    let hw = ctx.hw;
    let domain = u64::from(ctx.plan.cluster.scale_up_domain.get());
    let tokens = routed / top_k.max(1.0);
    let dispatcher = ctx.plan.moe.dispatcher;
    if dispatcher == MoeDispatcher::AllGather {
        let group = ep * tp;
        let gathered = tokens * h * 2.0 / tp * group;
        let bw = link_bandwidth(ctx, group as u64);
        return 2.0 * ring_seconds_on(hw, gathered, group, bw, false);
    }
    let nvlink = hw.intra_node_bytes_per_second / 2.0;
    let nic = hw.inter_node_bytes_per_second;
    let per_domain = ((domain as f64 / tp).floor()).clamp(1.0, ep);
    let flex = dispatcher == MoeDispatcher::Flex;
    // The device's collective library (NCCL or HCCL, `Hardware::collective_eff`), or DeepEP's.
    let eff = if flex { FLEX_LINK_EFF } else { hw.collective_eff };
    let rows_bytes = |bytes_per_element: f64| routed * h * bytes_per_element / tp;
    let direction = |bytes_per_element: f64| {
        let routed_bytes = rows_bytes(bytes_per_element);
        let (intra, inter) = match flex {
            false => (routed_bytes * (per_domain - 1.0) / ep, routed_bytes * (ep - per_domain) / ep),
            true => {
                let domains = (ep / per_domain).max(1.0);
                let remote = (domains - 1.0) * (1.0 - (1.0 - 1.0 / domains).powf(top_k));
                let token_bytes = tokens * h * bytes_per_element / tp;
                (routed_bytes * (per_domain - 1.0) / per_domain, token_bytes * remote)
            }
        };
        hw.collective_latency_seconds + (intra / (nvlink * eff)).max(inter / (nic * eff))
    };
    let dispatch_bytes = if flex && ctx.fp8 { 1.0 } else { 2.0 };
    direction(dispatch_bytes) + direction(2.0)
}
