//! Context parallelism by all-to-all (DeepSpeed-Ulysses; Megatron-LM `--cp-comm-type a2a`,
//! MindSpeed `ulysses_cp_algo`, VeRL's Ulysses): one layer's forward exchange on one device. Ring
//! attention's exchange is `layer.rs`'s (`cp_seconds`).

use super::Ctx;
use super::comm::mesh_share;
use crate::model::Attention;

/// Bytes of one element an all-to-all moves (bf16 activations, as the ring's K/V chunks).
const ELEMENT_BYTES: f64 = 2.0;

/// Seconds of one layer's forward all-to-alls under Ulysses context parallelism, none at CP 1
/// (docs/time.md, "Context parallelism").
///
/// Jacobs et al. 2023, "DeepSpeed Ulysses" (arXiv:2309.14509) §3: before the attention core an
/// all-to-all each on Q, K and V turns the sequence split (s ÷ c tokens, every head) into a head
/// split (every token, heads ÷ c), and one on the output turns it back; each device sends
/// (c − 1)/c of each tensor it holds, 4·N·h ÷ c per link for the four with multi-head attention
/// (N tokens, h hidden). Transformer Engine (`AttnFuncWithCPAndQKVOA2A`,
/// transformer_engine/pytorch/attention/dot_product_attention/context_parallel.py at v2.18) and
/// MindSpeed (`UlyssesContextAttention`) run them between the attention's projections and its
/// core, nothing to overlap them with, so all of it shows; the backward runs the same four again
/// (on the gradients), which `passes.rs` counts as it counts the forward's collectives.
///
/// With grouped-query attention K and V are narrower than Q: each moves its key/value heads
/// (÷ TP), unless there are fewer of them than CP ranks, when they are first repeated to split:
/// VeRL repeats them to c heads (`_ulysses_flash_attention_forward`, verl/models/transformers/
/// monkey_patch.py at b178a3c), MindSpeed to the query heads (`UlyssesContextAttention.forward`,
/// mindspeed/core/context_parallel/ulysses_context_parallel/ulysses_context_parallel.py at
/// 028de58), and Megatron-LM refuses (rule parallel.cp_a2a_kv_heads). MLA moves every head's key
/// (nope + rope) and value.
///
/// Placement as the MoE dispatch's all-to-all (`moe.rs`): CP peers sit `tp` ranks apart
/// (Megatron's order: TP innermost, then CP), `domain ÷ tp` of them share a scale-up domain; the
/// bytes bound for the domain cross its links (the share of a full mesh the peers use,
/// [`mesh_share`]), the rest the device's NIC, both at once.
pub(super) fn all_to_all_seconds(ctx: &Ctx) -> f64 {
    let (tp, cp) = (ctx.tp, ctx.cp);
    if cp <= 1.0 {
        return 0.0;
    }
    // Elements per token each device holds of Q, K, V and the output, per TP rank.
    let width = match ctx.arch.attention {
        Attention::Gqa { n_heads, n_kv_heads, head_dim, .. } => {
            let heads = n_heads as f64 / tp;
            let kv_heads = (n_kv_heads as f64 / tp).max(1.0);
            let moved_kv = match (kv_heads < cp, ctx.mindspeed) {
                (false, _) => kv_heads,
                (true, true) => heads,
                (true, false) => cp,
            };
            (2.0 * heads + 2.0 * moved_kv) * head_dim as f64
        }
        Attention::Mla { n_heads, qk_nope_head_dim, qk_rope_head_dim, v_head_dim, .. } => {
            let heads = n_heads as f64 / tp;
            heads * 2.0 * (qk_nope_head_dim + qk_rope_head_dim + v_head_dim) as f64
        }
    };
    let held_bytes = ctx.tokens * width * ELEMENT_BYTES;
    let hw = ctx.hw;
    let domain = f64::from(ctx.plan.cluster.scale_up_domain.get());
    let per_domain = (domain / tp).floor().clamp(1.0, cp);
    let intra = held_bytes * (per_domain - 1.0) / cp;
    let inter = held_bytes * (cp - per_domain) / cp;
    let scale_up = hw.intra_node_bytes_per_second / 2.0 * mesh_share(hw, per_domain as u64);
    let nic = hw.inter_node_bytes_per_second;
    let eff = hw.collective_eff;
    4.0 * hw.collective_latency_seconds + (intra / (scale_up * eff)).max(inter / (nic * eff))
}
