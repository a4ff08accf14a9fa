//! The sweep: for node counts 1, 2, 4, … (and the plan's own), the longest sequence and,
//! separately, the largest micro-batch that fit in memory with the plan's other settings, each with
//! its step time and throughput.
//!
//! Memory grows with the sequence length and with the micro-batch (docs/memory.md: activations,
//! logits and the micro-batches in flight all scale with them; nothing shrinks), so "fits" is
//! monotone and a binary search finds the largest fitting value exactly; a test holds it to a linear
//! scan. Micro-batches are those that divide the step's samples ÷ DP (the global batch, with RL every
//! response: `memory::step_samples`), the ones every framework runs (the samples a whole number of
//! micro-batch × DP): with another, the micro-batches per step
//! round down, fewer samples may be in flight, and memory is no longer monotone (Qwen2.5-7B on 8
//! H100, PP 4 VPP 2, DP 2, global batch 48: 9 fits where 6 and 8 do not). Otherwise only memory
//! decides: the framework rules (divisibility by CP or TP) are the plan's findings once a value is
//! taken.

use serde::Serialize;

use crate::memory::{self, ModelFacts};
use crate::plan::{Method, Plan};
use crate::time;

/// The largest value the sweep tries for a sequence length or a micro-batch: the plan's limit for
/// token counts and batch sizes (2^24, docs/plan-format.md).
pub const VALUE_MAX: u32 = 1 << 24;

/// The sweep's default largest node count.
pub const DEFAULT_MAX_NODES: u32 = 64;

/// The largest node count a sweep takes (the plan's limit on nodes).
pub const MAX_NODES_LIMIT: u32 = 1 << 16;

/// The sweep over node counts.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Sweep {
    /// Whether the sequence length sweep applies: RL methods train on prompts and responses of the
    /// RL settings' lengths, which `batch.seq_len` does not set.
    pub seq_len_applies: bool,
    /// One row per node count, ascending.
    pub rows: Vec<SweepRow>,
}

/// One node count.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SweepRow {
    /// Nodes.
    pub nodes: u32,
    /// Devices: nodes × devices per node.
    pub n_devices: u64,
    /// Whether this is the plan's own node count.
    pub current: bool,
    /// Whether the plan's parallel sizes divide the devices (tp · pp · cp and pp · ep · etp); when
    /// not, nothing else is computed.
    pub layout_fits: bool,
    /// Whether the global batch gives every data-parallel rank a sequence (global batch ≥ DP);
    /// when not, nothing else is computed.
    pub batch_fits: bool,
    /// The longest sequence that fits with the plan's micro-batch; `None` when not even one token
    /// does, or the sweep does not apply.
    pub seq_len: Option<Fit>,
    /// The largest micro-batch that fits with the plan's sequence length among those that divide
    /// the global batch ÷ DP; `None` when not even one sequence does.
    pub micro_batch: Option<Fit>,
}

/// The largest fitting value and what the plan does with it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Fit {
    /// The value: tokens per sequence, or sequences per micro-batch.
    pub value: u32,
    /// Whether the search stopped at its upper end ([`VALUE_MAX`], or the global batch ÷ DP for a
    /// micro-batch) with memory to spare.
    pub capped: bool,
    /// The peak memory per device with it, bytes.
    pub peak_bytes: u64,
    /// The step time with it, seconds.
    pub step_seconds: f64,
    /// Tokens per second with it, all devices.
    pub tokens_per_second: f64,
}

/// What the sweep varies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Knob {
    /// `batch.seq_len`.
    SeqLen,
    /// `batch.micro_batch`.
    MicroBatch,
}

/// Sweeps node counts 1, 2, 4, … up to `max_nodes` (clamped to 1 ..= [`MAX_NODES_LIMIT`]) and the
/// plan's own.
pub fn sweep(plan: &Plan, max_nodes: u32) -> Sweep {
    let max_nodes = max_nodes.clamp(1, MAX_NODES_LIMIT);
    let own = plan.cluster.nodes.get();
    let mut nodes: Vec<u32> =
        std::iter::successors(Some(1u32), |&n| n.checked_mul(2)).take_while(|&n| n <= max_nodes).collect();
    if !nodes.contains(&own) {
        nodes.push(own);
        crate::sort::sort(&mut nodes);
    }
    let facts = ModelFacts::of(plan);
    let seq_len_applies = !matches!(plan.method, Method::Grpo | Method::Ppo);
    let rows = nodes
        .into_iter()
        .map(|n| {
            let mut p = plan.clone();
            p.cluster.nodes = std::num::NonZeroU32::new(n).expect("node counts start at 1");
            row(&p, &facts, n == own, seq_len_applies)
        })
        .collect();
    Sweep { seq_len_applies, rows }
}

fn row(plan: &Plan, facts: &ModelFacts, current: bool, seq_len_applies: bool) -> SweepRow {
    let n_devices = plan.cluster.n_devices();
    let layout = crate::layout::Layout::of(plan);
    let layout_fits = layout.tp * layout.pp * layout.cp * layout.dp == n_devices
        && layout.pp * layout.ep * layout.etp * layout.edp == n_devices;
    let batch_fits = layout.dp <= memory::step_samples(plan);
    let (seq_len, micro_batch) = match layout_fits && batch_fits {
        true => (
            seq_len_applies.then(|| fit(plan, facts, Knob::SeqLen)).flatten(),
            fit(plan, facts, Knob::MicroBatch),
        ),
        false => (None, None),
    };
    SweepRow {
        nodes: plan.cluster.nodes.get(),
        n_devices,
        current,
        layout_fits,
        batch_fits,
        seq_len,
        micro_batch,
    }
}

/// The plan with `knob` set to `value`.
fn with(plan: &Plan, knob: Knob, value: u32) -> Plan {
    let mut p = plan.clone();
    let value = std::num::NonZeroU32::new(value).expect("values start at 1");
    match knob {
        Knob::SeqLen => p.batch.seq_len = value,
        Knob::MicroBatch => p.batch.micro_batch = value,
    }
    p
}

/// The search's upper end for `knob`: [`VALUE_MAX`], and for a micro-batch the step's samples ÷ DP
/// (a larger one leaves a step less than one micro-batch per rank), at least 1.
pub fn upper(plan: &Plan, knob: Knob) -> u32 {
    match knob {
        Knob::SeqLen => VALUE_MAX,
        Knob::MicroBatch => {
            let dp = crate::layout::Layout::of(plan).dp.max(1);
            let per_rank = memory::step_samples(plan) / dp;
            per_rank.clamp(1, u64::from(VALUE_MAX)) as u32
        }
    }
}

/// Whether the plan with `knob` at `value` fits in memory.
pub fn fits(plan: &Plan, knob: Knob, value: u32) -> bool {
    let p = with(plan, knob, value);
    let mem = memory::estimate(&p);
    mem.peak_bytes <= mem.usable_bytes
}

/// The micro-batches the sweep tries up to `hi`, ascending: those that divide the step's samples ÷ DP
/// ([`upper`]).
pub fn micro_batches(plan: &Plan, hi: u32) -> Vec<u32> {
    let per_rank = u64::from(upper(plan, Knob::MicroBatch));
    let mut values: Vec<u32> =
        crate::rules::divisors_of(per_rank).filter(|&d| d <= u64::from(hi)).map(|d| d as u32).collect();
    crate::sort::sort(&mut values);
    values.dedup();
    values
}

/// The largest value of `knob` up to `hi` with which the plan fits (a sequence length from 1, a
/// micro-batch among [`micro_batches`]), by binary search on the monotone memory; `None` when the
/// smallest does not fit.
pub fn largest(plan: &Plan, knob: Knob, hi: u32) -> Option<u32> {
    largest_with(plan, &ModelFacts::of(plan), knob, hi)
}

fn largest_with(plan: &Plan, facts: &ModelFacts, knob: Knob, hi: u32) -> Option<u32> {
    let fits = |value: u32| {
        let mem = memory::estimate_with(&crate::knobs::effective(&with(plan, knob, value)), facts);
        mem.peak_bytes <= mem.usable_bytes
    };
    // The sequence lengths run to 2^24: indexed, not listed.
    let divisors = match knob {
        Knob::SeqLen => None,
        Knob::MicroBatch => Some(micro_batches(plan, hi)),
    };
    let n = divisors.as_ref().map_or(hi as usize, Vec::len);
    let value = |i: usize| divisors.as_ref().map_or(i as u32 + 1, |d| d[i]);
    if n == 0 || !fits(value(0)) {
        return None;
    }
    // Invariant: candidate `lo` fits; every candidate above `hi` does not.
    let (mut lo, mut hi) = (0usize, n - 1);
    while lo < hi {
        let mid = lo + (hi - lo).div_ceil(2);
        match fits(value(mid)) {
            true => lo = mid,
            false => hi = mid - 1,
        }
    }
    Some(value(lo))
}

fn fit(plan: &Plan, facts: &ModelFacts, knob: Knob) -> Option<Fit> {
    let hi = upper(plan, knob);
    let value = largest_with(plan, facts, knob, hi)?;
    let p = with(plan, knob, value);
    let p = crate::knobs::effective(&p);
    let mem = memory::estimate_with(&p, facts);
    let t = time::estimate_effective(&p, &mem);
    Some(Fit {
        value,
        capped: value == hi,
        peak_bytes: mem.peak_bytes,
        step_seconds: t.step_seconds,
        tokens_per_second: t.tokens_per_second,
    })
}
