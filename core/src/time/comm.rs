//! Collectives and links: a ring collective's time, and the bandwidth a group of ranks gets by
//! where it sits (inside a scale-up domain, switched or a full mesh, or across domains over the
//! NICs).

use super::Ctx;
use crate::hardware::Hardware;
use crate::memory;

/// Time for a ring collective moving `bytes` per device over `group` ranks at `link_bytes_per_second`
/// (one direction): all-reduce moves 2(n − 1)/n of the buffer, all-gather and reduce-scatter
/// (n − 1)/n; at the device's collective library's latency and bandwidth efficiency (NCCL's
/// [`COLLECTIVE_EFF`](super::COLLECTIVE_EFF) on NVIDIA, HCCL's
/// [`HCCL_COLLECTIVE_EFF`](super::HCCL_COLLECTIVE_EFF) on Ascend).
pub fn ring_seconds_on(
    hw: &Hardware,
    bytes: f64,
    group: f64,
    link_bytes_per_second: f64,
    all_reduce: bool,
) -> f64 {
    ring_seconds_at(hw.collective_latency_seconds, hw, bytes, group, link_bytes_per_second, all_reduce)
}

/// [`ring_seconds_on`] at a fixed cost per call of `latency_seconds` (a kernel of its own, as
/// vLLM's custom all-reduce at decode).
pub(super) fn ring_seconds_at(
    latency_seconds: f64,
    hw: &Hardware,
    bytes: f64,
    group: f64,
    link_bytes_per_second: f64,
    all_reduce: bool,
) -> f64 {
    if group <= 1.0 || bytes <= 0.0 {
        return 0.0;
    }
    let factor = if all_reduce { 2.0 } else { 1.0 } * (group - 1.0) / group;
    latency_seconds + factor * bytes / (link_bytes_per_second * hw.collective_eff)
}

/// The share of a device's scale-up links a group of `members` ranks in one domain drives: all of
/// them behind a switch (NVSwitch, UB); n − 1 of `mesh_links` in a full mesh (HCCS on Atlas 800T
/// A2: TP 2 uses one link of seven, TP 8 all seven; MindSpeed `auto_settings/module/communication/
/// comm_hardware/comm_hardware_info.py` `calbandwidth`, which scales 910B bandwidth by n − 1).
pub(super) fn mesh_share(hw: &Hardware, members: u64) -> f64 {
    match hw.mesh_links {
        0 => 1.0,
        _ if members <= 1 => 1.0,
        links => (members - 1).min(u64::from(links)) as f64 / f64::from(links),
    }
}

/// The bandwidth a ring collective gets per device for a group of `group` ranks placed `stride`
/// ranks apart. Inside the scale-up domain (the plan's node, or a whole NVL72 rack or CloudMatrix
/// supernode: `cluster.scale_up_domain`): NVLink/HCCS/UB, one direction (half the bidirectional
/// figure). Across domains: each node's members of the group drive their own NICs in parallel
/// (one NIC per device on DGX/HGX and Atlas nodes, "rail-optimized"), so a node with k members
/// moves k NICs' worth, capped by the intra-node link (NCCL's hierarchical rings; nccl-tests on
/// DGX A100: all-reduce bus bandwidth across nodes near 8 × 25 GB/s).
pub(super) fn group_bandwidth(hw: &Hardware, domain: u64, group: u64, stride: u64) -> f64 {
    let nvlink = hw.intra_node_bytes_per_second / 2.0;
    if group * stride <= domain {
        return nvlink * mesh_share(hw, group);
    }
    let members = (domain / stride.max(1)).clamp(1, group);
    let members_per_domain = members as f64;
    (hw.inter_node_bytes_per_second * members_per_domain).min(nvlink * mesh_share(hw, members))
}

/// A group of consecutive ranks (TP, EP inside TP): its bandwidth.
pub(super) fn link_bandwidth(ctx: &Ctx, span: u64) -> f64 {
    group_bandwidth(ctx.hw, u64::from(ctx.plan.cluster.scale_up_domain.get()), span, 1)
}

/// One send of a micro-batch's activations (or their gradients) between pipeline stages, seconds;
/// none with one stage.
pub(super) fn p2p_seconds(ctx: &Ctx, mem: &memory::Memory) -> f64 {
    let (plan, hw, arch) = (ctx.plan, ctx.hw, ctx.arch);
    let (tp, pp, cp) = (mem.layout.tp, mem.layout.pp, mem.layout.cp);
    // Pipeline: send one micro-batch's activations (÷ t with scatter/gather) between stages, whose
    // ranks sit tp · cp · dp apart (Megatron's order: PP outermost): over the scale-up fabric when
    // both stages sit in one domain, else over the node's NICs together.
    let p2p_bytes = ctx.tokens * arch.hidden_size as f64 * 2.0 / ctx.tp;
    let domain = u64::from(plan.cluster.scale_up_domain.get());
    let nvlink = hw.intra_node_bytes_per_second / 2.0;
    let p2p_bw = match 2 * tp * cp * mem.dp.max(1) <= domain {
        // One device to one device: a single link of a full mesh.
        true => nvlink * mesh_share(hw, 2),
        false => {
            (hw.inter_node_bytes_per_second * f64::from(plan.cluster.devices_per_node.get())).min(nvlink)
        }
    };
    match pp {
        1 => 0.0,
        _ => hw.collective_latency_seconds + p2p_bytes / (p2p_bw * hw.collective_eff),
    }
}
