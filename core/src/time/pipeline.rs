//! The pipeline's time: which schedule a plan runs, its makespan for a step's micro-batches (a
//! closed form where the stages are even, else the schedule simulated for a few micro-batches per
//! stage and the steady state extended), and one rank's work per micro-batch.

use crate::memory;
use crate::plan::{PipelineSchedule, Plan};
use crate::schedule::{self, Costs, Schedule};

/// Micro-batches per stage the closed form is taken for before extending the steady state.
const SIMULATED_MICROBATCHES_PER_STAGE: u32 = 2;
/// Groups of pp micro-batches the schedule is simulated for before the steady state's period is
/// measured over the last of them: the first group fills the pipeline, and in the second uneven
/// chunks can still settle (Qwen3-235B on PP 32 with 2 chunks: a micro-batch adds 54.4 ms in the
/// second group, 61.7 ms in every one after).
const STEADY_GROUPS: u32 = 3;
/// The most passes the schedule simulation runs; past it the closed form stands in. A simulation
/// costs pp · 2pp · vpp passes: 128 stages take some 10^5, 4,096 stages would take 10^8 (seconds
/// and gigabytes), so that bound keeps every evaluation fast.
pub(super) const SIMULATED_PASSES_MAX: u64 = 1 << 20;

/// The pipeline's makespan for `m` micro-batches and its idle share.
pub(super) struct PipelineShape {
    pub(super) makespan_seconds: f64,
    pub(super) bubble_ratio: f64,
    pub(super) idle_frac: f64,
    /// The micro-batches the first part stands for (the rest extend the steady state).
    pub(super) simulated_microbatches: u32,
}

/// Passes a simulation of `m` micro-batches runs (interleaving rounds up to groups of pp,
/// DualPipeV runs at least 2·pp: `schedule::orders`).
pub(super) fn simulated_passes(kind: Schedule, pp: u32, vpp: u32, m: u32) -> u64 {
    let m = match kind {
        Schedule::Interleaved => m.div_ceil(pp) * pp,
        Schedule::DualPipeV => m.max(2 * pp),
        _ => m,
    };
    3 * u64::from(pp) * u64::from(vpp) * u64::from(m)
}

/// The pipeline's time for `m` micro-batches: the schedule for a few micro-batches per stage,
/// then the steady state extended to `m`.
///
/// Where the stages allow [`uniform_makespan`]'s closed form, the last stage paces the steady
/// state, busy all the time, and each further micro-batch adds the busiest rank's `slowest`
/// seconds (`core/tests/it/schedule.rs` checks the closed form against the simulation).
/// Elsewhere (uneven stages, MTP, ZB-H1's and DualPipeV's weight passes, slow links) the schedule
/// is simulated pass by pass for [`STEADY_GROUPS`] · pp micro-batches (all of them when fewer)
/// and for pp fewer, and each further micro-batch adds what each of the last pp added, but never
/// less than `slowest`: the steady state's own period, which exceeds the busiest rank's work
/// where the stages' uneven chunks wait on each other. Extended by `slowest` instead, Qwen3-235B
/// on PP 32 with 2 chunks of 1 or 2 of its 94 layers (CP 2, 512 micro-batches) took 14.7 s where
/// its whole schedule simulated takes 17.7 s (17 % short); Llama 3.1 405B on PP 32 with 3 chunks
/// 13 % short; even 1F1B stages a tenth of a percent or two (docs/pipeline.md).
///
/// `slowest` is the busiest rank's seconds per micro-batch ([`busiest_rank`]).
pub(super) fn pipeline_makespan(kind: Schedule, m: u32, costs: &Costs, slowest: f64) -> PipelineShape {
    let pp = costs.pp;
    // The micro-batches an order holds: interleaving rounds up to groups of pp.
    let whole = |n: u32| if kind == Schedule::Interleaved { n.div_ceil(pp) * pp } else { n };
    let closed_m = whole(m.min(SIMULATED_MICROBATCHES_PER_STAGE * pp).max(1));
    let (m_sim, first, per_microbatch) = match uniform_makespan(kind, closed_m, costs) {
        Some(first) => (closed_m, first, slowest),
        None => {
            let m_sim = whole(m.min(STEADY_GROUPS * pp).max(1));
            let (first, period) = simulated_makespan(kind, m_sim, costs, pp);
            // What each of the last pp micro-batches added, never less than the busiest rank's work.
            (m_sim, first, period.map_or(slowest, |period| period.max(slowest)))
        }
    };
    let makespan = first + f64::from(m.saturating_sub(m_sim)) * per_microbatch;
    let busy_total = costs.total_seconds() * f64::from(m);
    let idle = (makespan * f64::from(pp) - busy_total).max(0.0);
    PipelineShape {
        makespan_seconds: makespan,
        bubble_ratio: idle / busy_total.max(f64::MIN_POSITIVE),
        idle_frac: idle / (makespan * f64::from(pp)).max(f64::MIN_POSITIVE),
        simulated_microbatches: m_sim,
    }
}

/// The makespan of `m` micro-batches (a whole number of groups of pp when interleaved) simulated
/// pass by pass (the shape's compiled program from `schedule::cached`), and what each of the last
/// `span` added to it in the steady state (`schedule::Program::makespan_and_period`); `None` when
/// the run holds no more than `span` micro-batches or is not simulated.
fn simulated_makespan(kind: Schedule, m: u32, costs: &Costs, span: u32) -> (f64, Option<f64>) {
    let (pp, vpp) = (costs.pp, costs.vpp);
    let simulated = match simulated_passes(kind, pp, vpp, m) <= SIMULATED_PASSES_MAX {
        true => schedule::cached(kind, pp, vpp, m).map(|program| match kind {
            // GPipe runs every backward after every forward, so its last backwards follow each
            // other at the backward's pace alone; its period is the makespan's own gain.
            Schedule::GPipe if span < m => {
                let makespan = program.makespan(costs);
                let before = schedule::cached(kind, pp, vpp, m - span).map(|p| p.makespan(costs));
                (makespan, before.map(|before| (makespan - before) / f64::from(span)))
            }
            _ => program.makespan_and_period(costs, span),
        }),
        false => None,
    };
    // Too many passes to simulate, or a malformed order deadlocked: every stage's work in turn,
    // with the 1F1B bubble.
    simulated.unwrap_or_else(|| (costs.total_seconds() / f64::from(pp) * f64::from(m + pp - 1), None))
}

/// Whether the makespan of `m` micro-batches over `pp` ranks of `vpp` chunks chains each rank's fill,
/// work and drain ([`makespan_bound`]): GPipe, 1F1B and interleaved 1F1B, simulated (or in closed
/// form) rather than estimated past [`SIMULATED_PASSES_MAX`].
fn chains(kind: Schedule, pp: u32, vpp: u32, m: u32) -> bool {
    matches!(kind, Schedule::GPipe | Schedule::OneFOneB | Schedule::Interleaved)
        && (vpp <= 1 || kind == Schedule::Interleaved)
        && simulated_passes(kind, pp, vpp, m.min(STEADY_GROUPS * pp).div_ceil(pp) * pp)
            <= SIMULATED_PASSES_MAX
}

/// A lower bound on the makespan the step time takes for `m` micro-batches, before anything is
/// simulated: the longest of each rank's fill, work and drain. Under GPipe, 1F1B and interleaved
/// 1F1B a rank's first pass is micro-batch 0's forward of its first chunk, which waits for that
/// forward on every rank before it and a send from each; it then runs all its passes, m · its
/// seconds per micro-batch; its last pass is a full backward of its first chunk (`schedule::orders`),
/// which every rank before it still runs, a send apart. These are passes the simulation chains
/// (each after its input's arrival and its rank's previous pass), and the steady state it extends
/// adds no less than the busiest rank's seconds a micro-batch, so the bound holds for the
/// extended makespan too; on even stages it is GPipe's and 1F1B's closed form (Narayanan et al.
/// 2021 §2.2: the bubble (p − 1)·u), and interleaving's less the sends between its chunks. Elsewhere (ZB-H1 defers weight passes past the last backward, DualPipeV's
/// ranks start at both ends, a pipeline too deep to simulate is estimated in closed form) `m` ×
/// the busiest rank's seconds, which no schedule beats.
pub fn makespan_bound(kind: Schedule, m: u32, costs: &Costs) -> f64 {
    let (pp, vpp) = (costs.pp, costs.vpp.max(1) as usize);
    let chains = chains(kind, pp, vpp as u32, m);
    let c = costs.p2p_seconds;
    // A rank's chunks are `vpp` consecutive entries, its first chunk the first of them.
    let (forward, backward, weight) = (costs.forward(), costs.backward(), costs.weight());
    // The ranks before this one's fill and drain; this rank's seconds a micro-batch (summed as
    // `busiest_rank` sums them) and its first chunk's forward and full backward, which the ranks
    // after it wait for.
    let (mut fill, mut drain, mut bound, mut seconds, mut first) = (0.0, 0.0, 0.0f64, 0.0, (0.0, 0.0));
    for (at, ((&f, &b), &w)) in forward.iter().zip(backward).zip(weight).enumerate() {
        seconds += f + b + w;
        if at % vpp == 0 {
            first = (f, b + w);
        }
        if at % vpp + 1 == vpp {
            bound = bound.max(fill + f64::from(m) * seconds + drain);
            if chains {
                (fill, drain) = (fill + first.0 + c, drain + c + first.1);
            }
            seconds = 0.0;
        }
    }
    bound
}

/// The makespan of `m` micro-batches in closed form, when every virtual stage runs the same passes
/// except the last (which holds the head and the loss) and the schedule is GPipe, 1F1B or
/// interleaved 1F1B, or the pipeline has one stage; `None` otherwise.
///
/// With per-stage forward f, backward b and weight w (u = f + b + w), the last stage δ longer
/// (δ_f + δ_b, its weight pass the same), a send taking c, p ranks and v chunks each:
/// - one stage: every pass back to back, m · Σ u;
/// - GPipe and 1F1B: (m + p − 1)·u + m·δ + 2(p − 1)·c (Narayanan et al. 2021 §2.2: the bubble
///   (p − 1)·u; the last stage is busiest, so its extra δ counts on every micro-batch, and a
///   micro-batch's sends to the last stage and back lie on the critical path once);
/// - interleaved (m a multiple of p): (m·v + p − 1)·u + m·δ + 2(p·v − 1)·c with per-chunk u
///   (§2.2.2: the bubble shrinks v-fold; sends cross every virtual stage).
///
/// These hold while the last stage paces the steady state: δ ≥ 2c (else a send's round trip
/// between the last two stages does, and the simulation runs), and when interleaved, a send no
/// longer than a chunk's forward or backward. `core/tests/it/schedule.rs` compares them with the
/// simulation on random costs.
pub fn uniform_makespan(kind: Schedule, m: u32, costs: &Costs) -> Option<f64> {
    let (pp, vpp) = (costs.pp, costs.vpp);
    let (forward, backward, weight) = (costs.forward(), costs.backward(), costs.weight());
    let n = forward.len();
    // The three lists are as long as each other (`Costs` keeps them so).
    if n == 0 || n != (pp * vpp) as usize {
        return None;
    }
    let mf = f64::from(m);
    if pp == 1 && kind != Schedule::DualPipeV {
        return Some(mf * costs.total_seconds());
    }
    // Interleaving runs whole groups of pp micro-batches (`schedule::orders` rounds up).
    let whole_groups = kind != Schedule::Interleaved || m.is_multiple_of(pp);
    if !whole_groups || !matches!(kind, Schedule::GPipe | Schedule::OneFOneB | Schedule::Interleaved) {
        return None;
    }
    let (f, b, w) = (forward[0], backward[0], weight[0]);
    // Every middle stage compared, without stopping at the first that differs: most plans asked
    // have even stages, and a loop without an exit runs several stages at once.
    let body = 1..n - 1;
    let passes = forward[body.clone()].iter().zip(&backward[body.clone()]).zip(&weight[body]);
    let body_uniform = passes.fold(true, |same, ((&fi, &bi), &wi)| same & (fi == f) & (bi == b) & (wi == w));
    let (delta_f, delta_b) = (forward[n - 1] - f, backward[n - 1] - b);
    let c = costs.p2p_seconds;
    let last_paces = 0.0 <= delta_f && 0.0 <= delta_b && 2.0 * c <= delta_f + delta_b;
    let sends_fit = vpp == 1 || (c <= f && c <= b);
    if !(body_uniform && weight[n - 1] == w && last_paces && sends_fit) {
        return None;
    }
    let (p, v) = (f64::from(pp), f64::from(vpp));
    let u = f + b + w;
    let delta = delta_f + delta_b;
    Some(match kind {
        Schedule::Interleaved => (mf * v + p - 1.0) * u + mf * delta + 2.0 * (p * v - 1.0) * c,
        _ => (mf + p - 1.0) * u + mf * delta + 2.0 * (p - 1.0) * c,
    })
}

/// The schedule a plan runs: the one it names, or 1F1B, interleaved whenever it has virtual chunks
/// (1F1B named too: Megatron interleaves whenever VPP is set, `get_forward_backward_func` in
/// megatron/core/pipeline_parallel/schedules.py, and the launch file sets it). GPipe and ZB-H1,
/// drawn for comparison, run one chunk a rank ([`crate::layout::Layout::of`]).
pub fn schedule_of(plan: &Plan, vpp: u64) -> Schedule {
    match (plan.parallel.schedule, vpp) {
        (PipelineSchedule::Auto | PipelineSchedule::Interleaved | PipelineSchedule::OneFOneB, 2..) => {
            Schedule::Interleaved
        }
        (PipelineSchedule::Auto | PipelineSchedule::Interleaved | PipelineSchedule::OneFOneB, _) => {
            Schedule::OneFOneB
        }
        (PipelineSchedule::GPipe, _) => Schedule::GPipe,
        (PipelineSchedule::ZbH1, _) => Schedule::ZbH1,
        (PipelineSchedule::DualPipeV, _) => Schedule::DualPipeV,
    }
}

/// Micro-batches the step's pipeline runs: the memory's count (with RL, of every sampled response:
/// [`memory::step_samples`]).
pub(super) fn microbatches(mem: &memory::Memory) -> u32 {
    // Saturated, not truncated: 2^32 micro-batches or more take as long as 2^32 − 1 would, near enough.
    u32::try_from(mem.n_microbatches).unwrap_or(u32::MAX)
}

/// The busiest rank (the last of equals) and its seconds for one micro-batch, all its passes back
/// to back.
pub(super) fn busiest_rank(costs: &Costs) -> (usize, f64) {
    let (forward, backward, weight) = (costs.forward(), costs.backward(), costs.weight());
    let mut busiest = (0usize, 0.0f64);
    let mut keep = |r: usize, seconds: f64| {
        // The last of equals, as `Iterator::max_by` keeps.
        if busiest.1.total_cmp(&seconds).is_le() || r == 0 {
            busiest = (r, seconds);
        }
    };
    let pp = costs.pp as usize;
    match costs.vpp as usize {
        // One chunk a rank (most plans): its passes alone, what a sum of one gives to the bit.
        0 | 1 => {
            // Indexed over slices cut to one length: no bounds check, and none of a three-way
            // zip's bookkeeping, which the compiler kept in memory.
            let n = pp.min(forward.len()).min(backward.len()).min(weight.len());
            let (forward, backward, weight) = (&forward[..n], &backward[..n], &weight[..n]);
            for r in 0..n {
                keep(r, forward[r] + backward[r] + weight[r]);
            }
        }
        // Each rank's chunks are `vpp` consecutive entries, summed in order.
        vpp => {
            let ranks =
                forward.chunks_exact(vpp).zip(backward.chunks_exact(vpp)).zip(weight.chunks_exact(vpp));
            for (r, ((f, b), w)) in ranks.take(pp).enumerate() {
                keep(r, f.iter().zip(b).zip(w).map(|((f, b), w)| f + b + w).sum());
            }
        }
    }
    busiest
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The bound holds for the makespan the step time takes, the schedule simulated for a few
    /// groups of micro-batches and the steady state extended, on uneven random costs over deep
    /// pipelines and many more micro-batches than are simulated.
    #[test]
    fn the_extended_makespan_keeps_the_bound() {
        let mut state = 0x9E37_79B9_7F4A_7C15u64;
        let mut unit = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 11) as f64 / (1u64 << 53) as f64
        };
        let mut tighter = 0;
        for trial in 0..400 {
            let kind = [Schedule::GPipe, Schedule::OneFOneB, Schedule::Interleaved][trial % 3];
            let pp = 2 + (unit() * 30.0) as u32;
            let vpp = if kind == Schedule::Interleaved { 2 + (unit() * 3.0) as u32 } else { 1 };
            let m = 1 + (unit() * 300.0) as u32;
            let n = (pp * vpp) as usize;
            let mut draw = || (0..n).map(|_| 0.05 + unit()).collect::<Vec<f64>>();
            let (f, b, w) = (draw(), draw(), draw());
            let costs = Costs::new(pp, vpp, &f, &b, &w, 0.3 * unit());
            let slowest = busiest_rank(&costs).1;
            let makespan = pipeline_makespan(kind, m, &costs, slowest).makespan_seconds;
            let bound = makespan_bound(kind, m, &costs);
            assert!(bound <= makespan * (1.0 + 1e-12), "{kind:?} p{pp} v{vpp} m{m}: {bound} > {makespan}");
            assert!(f64::from(m) * slowest <= bound, "{kind:?} p{pp} v{vpp} m{m}: below the busiest rank");
            tighter += usize::from(f64::from(m) * slowest < bound);
        }
        // Whenever a rank past the first is the busiest, its fill and drain add.
        assert!(300 < tighter, "{tighter}");
    }
}
