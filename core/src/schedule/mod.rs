//! Pipeline schedules as a simulation: each rank runs an ordered list of forward (F), backward (B,
//! input gradients) and weight-gradient (W) passes; a pass starts when its rank is free and its
//! inputs have arrived. The timeline, the step's makespan and the bubble come from running it.
//! docs/pipeline.md derives the orders and the checks.

mod program;

pub use program::{Program, cached, cached_to_draw};

/// A pipeline schedule.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Schedule {
    /// All forwards, then all backwards (Huang et al. 2019).
    GPipe,
    /// One forward, one backward (PipeDream-Flush; Narayanan et al. 2021 §2.2.1).
    OneFOneB,
    /// 1F1B over `v` model chunks per rank (Narayanan et al. 2021 §2.2.2; Megatron `schedules.py`).
    Interleaved,
    /// 1F1B with the backward split into input (B) and weight (W) gradients, W deferred into the
    /// cool-down (Qi et al. 2023, "Zero Bubble Pipeline Parallelism", ZB-H1).
    ZbH1,
    /// DeepSeek's DualPipeV: each rank holds two chunks of a V-shaped pipeline (stage r and stage
    /// 2p − 1 − r) and overlaps a forward of one with a backward of the other (deepseek-ai/DualPipe
    /// `dualpipe/dualpipev.py`). Needs at least 2p micro-batches.
    DualPipeV,
}

/// What a pass computes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Pass {
    /// Forward.
    F,
    /// Backward (input gradients; with no W pass, the whole backward).
    B,
    /// Weight gradients.
    W,
}

/// One pass on one rank, in the order the rank runs them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Op {
    /// The pass.
    pub pass: Pass,
    /// Micro-batch index.
    pub microbatch: u32,
    /// Model chunk on this rank (0 unless interleaved or V-shaped).
    pub chunk: u32,
    /// For B: whether it also computes the weight gradients (no W pass follows).
    pub full: bool,
    /// A full backward run together with this forward (DualPipeV's overlapped F&B): micro-batch and chunk.
    pub with_backward: Option<(u32, u32)>,
}

impl Op {
    fn f(microbatch: u32, chunk: u32) -> Op {
        Op { pass: Pass::F, microbatch, chunk, full: false, with_backward: None }
    }

    fn b(microbatch: u32, chunk: u32, full: bool) -> Op {
        Op { pass: Pass::B, microbatch, chunk, full, with_backward: None }
    }

    fn w(microbatch: u32, chunk: u32) -> Op {
        Op { pass: Pass::W, microbatch, chunk, full: false, with_backward: None }
    }
}

/// A pass as it ran.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Event {
    /// Pipeline rank.
    pub stage: u32,
    /// Model chunk on the rank.
    pub chunk: u32,
    /// Micro-batch.
    pub microbatch: u32,
    /// The pass.
    pub pass: Pass,
    /// Start, seconds from the step's start.
    pub start_seconds: f64,
    /// End, seconds.
    pub end_seconds: f64,
}

/// The durations the simulation needs, per rank and chunk, seconds: a list per kind of pass, chunk
/// `c` of rank `r` at `[r * vpp + c]` of each ([`Costs::forward`], [`Costs::backward`],
/// [`Costs::weight`]), the three in one allocation.
#[derive(Clone, PartialEq)]
pub struct Costs {
    /// Ranks.
    pub pp: u32,
    /// Chunks per rank.
    pub vpp: u32,
    /// The forward, input-backward and weight-gradient lists, one after the other.
    lists: Vec<f64>,
    /// Time to send an activation or gradient to the next rank.
    pub p2p_seconds: f64,
}

impl Costs {
    /// `forward`, input-`backward` and `weight`-gradient seconds (a W pass, or part of a full
    /// backward) per rank and chunk, as many of each.
    ///
    /// # Panics
    ///
    /// When the three lists differ in length.
    pub fn new(pp: u32, vpp: u32, forward: &[f64], backward: &[f64], weight: &[f64], p2p: f64) -> Costs {
        assert!(
            forward.len() == backward.len() && backward.len() == weight.len(),
            "one duration of each pass per rank and chunk"
        );
        Costs { pp, vpp, lists: [forward, backward, weight].concat(), p2p_seconds: p2p }
    }

    /// From the three lists already laid one after the other, as [`Costs`] keeps them.
    pub(crate) fn from_lists(pp: u32, vpp: u32, lists: Vec<f64>, p2p: f64) -> Costs {
        debug_assert!(lists.len().is_multiple_of(3), "three lists as long as each other");
        Costs { pp, vpp, lists, p2p_seconds: p2p }
    }

    /// Every rank and chunk the same: `forward`, input-`backward` and `weight` seconds.
    pub fn uniform(pp: u32, vpp: u32, forward: f64, backward: f64, weight: f64, p2p: f64) -> Costs {
        let n = (pp * vpp) as usize;
        let lists = [forward, backward, weight].into_iter().flat_map(|s| std::iter::repeat_n(s, n)).collect();
        Costs { pp, vpp, lists, p2p_seconds: p2p }
    }

    /// Durations in each list.
    fn len(&self) -> usize {
        self.lists.len() / 3
    }

    /// Forward seconds.
    pub fn forward(&self) -> &[f64] {
        &self.lists[..self.len()]
    }

    /// Backward seconds for input gradients.
    pub fn backward(&self) -> &[f64] {
        let n = self.len();
        &self.lists[n..2 * n]
    }

    /// Weight-gradient seconds: a W pass, or part of a full backward.
    pub fn weight(&self) -> &[f64] {
        &self.lists[2 * self.len()..]
    }

    /// The forward, input-backward and weight-gradient lists, to change.
    pub fn lists_mut(&mut self) -> (&mut [f64], &mut [f64], &mut [f64]) {
        let n = self.len();
        let (forward, rest) = self.lists.split_at_mut(n);
        let (backward, weight) = rest.split_at_mut(n);
        (forward, backward, weight)
    }

    /// Every rank's and chunk's passes for one micro-batch, added up.
    pub fn total_seconds(&self) -> f64 {
        let passes = self.forward().iter().zip(self.backward()).zip(self.weight());
        passes.map(|((f, b), w)| f + b + w).sum()
    }
}

impl std::fmt::Debug for Costs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Costs")
            .field("pp", &self.pp)
            .field("vpp", &self.vpp)
            .field("forward_seconds", &self.forward())
            .field("backward_seconds", &self.backward())
            .field("weight_seconds", &self.weight())
            .field("p2p_seconds", &self.p2p_seconds)
            .finish()
    }
}

/// A simulated step.
#[derive(Clone, Debug, PartialEq)]
pub struct Timeline {
    /// Every pass, rank by rank in run order.
    pub events: Vec<Event>,
    /// From the first pass's start to the last pass's end.
    pub makespan_seconds: f64,
    /// Idle time over busy time, summed over ranks: the bubble as Narayanan et al. 2021 state it,
    /// (p − 1)/m for 1F1B with equal stages.
    pub bubble_ratio: f64,
    /// Idle time as a share of ranks × makespan: (p − 1)/(m + p − 1) for 1F1B with equal stages.
    pub idle_frac: f64,
}

/// The order each rank runs its passes in.
///
/// Sources: GPipe and 1F1B as in Narayanan et al. 2021 Fig. 3–4 (1F1B warm-up: `pp − rank − 1`
/// forwards); interleaved as Megatron-LM `core/pipeline_parallel/schedules.py`
/// `forward_backward_pipelining_with_interleaving` (warm-up `(pp − rank − 1)·2 + (vpp − 1)·pp`
/// virtual micro-batches; forward k runs chunk `(k / pp) % vpp` on micro-batch
/// `(k / (pp·vpp))·pp + k % pp`, backward k the chunk `vpp − 1 − (k / pp) % vpp`); ZB-H1 as 1F1B
/// with each backward's W pass deferred by `rank` backwards (Qi et al. 2023 §3, Fig. 3).
///
/// `n_microbatches` must be a multiple of `pp` for the interleaved schedule (Megatron's rule);
/// other counts are rounded up here.
pub fn orders(schedule: Schedule, pp: u32, vpp: u32, n_microbatches: u32) -> Vec<Vec<Op>> {
    let m = n_microbatches.max(1);
    // Interleaving's forward and backward sequences are the same on every rank; only the warm-up
    // differs.
    let (forward, backward) = match schedule {
        Schedule::Interleaved => interleaved_sequences(pp, vpp.max(1), m.div_ceil(pp) * pp),
        _ => (Vec::new(), Vec::new()),
    };
    (0..pp)
        .map(|rank| match schedule {
            Schedule::GPipe => {
                let f = (0..m).map(|mb| Op::f(mb, 0));
                let b = (0..m).map(|mb| Op::b(mb, 0, true));
                f.chain(b).collect()
            }
            Schedule::OneFOneB => one_f_one_b(pp, rank, m, false),
            Schedule::ZbH1 => one_f_one_b(pp, rank, m, true),
            Schedule::Interleaved => interleaved(pp, vpp.max(1), rank, &forward, &backward),
            Schedule::DualPipeV => dual_pipe_v(pp, rank, m.max(2 * pp)),
        })
        .collect()
}

fn one_f_one_b(pp: u32, rank: u32, m: u32, zero_bubble: bool) -> Vec<Op> {
    let warmup = (pp - rank - 1).min(m);
    let f = |mb| Op::f(mb, 0);
    let b = |mb| Op::b(mb, 0, !zero_bubble);
    let w = |mb| Op::w(mb, 0);
    let mut res = Vec::with_capacity(3 * m as usize);
    let mut deferred = std::collections::VecDeque::new();
    let mut backward = |res: &mut Vec<Op>, mb: u32| {
        res.push(b(mb));
        if zero_bubble {
            deferred.push_back(mb);
            // ZB-H1: the W of micro-batch j follows the B of micro-batch j + rank; the last `rank`
            // W passes fill the cool-down (sail-sg/zero-bubble-pipeline-parallelism,
            // `efficiency.py::get_hand_schedule`).
            if rank < deferred.len() as u32 {
                let done = deferred.pop_front().expect("non-empty");
                res.push(w(done));
            }
        }
    };
    for mb in 0..warmup {
        res.push(f(mb));
    }
    for k in 0..m - warmup {
        res.push(f(warmup + k));
        backward(&mut res, k);
    }
    for k in m - warmup..m {
        backward(&mut res, k);
    }
    res.extend(deferred.into_iter().map(w));
    res
}

/// Megatron's interleaved 1F1B visits the chunks in groups of `pp` micro-batches: the k-th forward
/// is micro-batch (k ÷ (pp·vpp))·pp + k mod pp on chunk (k ÷ pp) mod vpp, and the k-th backward
/// the same micro-batch on the chunks in reverse (`schedules.py`, `get_model_chunk_id`). `m` is a
/// multiple of `pp`.
fn interleaved_sequences(pp: u32, vpp: u32, m: u32) -> (Vec<Op>, Vec<Op>) {
    let total = (m * vpp) as usize;
    let (mut forward, mut backward) = (Vec::with_capacity(total), Vec::with_capacity(total));
    for group in 0..m / pp {
        for chunk in 0..vpp {
            for j in 0..pp {
                forward.push(Op::f(group * pp + j, chunk));
                backward.push(Op::b(group * pp + j, vpp - 1 - chunk, true));
            }
        }
    }
    (forward, backward)
}

/// Rank `rank`'s interleaved order: (p − r − 1)·2 + (v − 1)·p warm-up forwards, then one forward
/// and one backward at a time, then the remaining backwards.
fn interleaved(pp: u32, vpp: u32, rank: u32, forward: &[Op], backward: &[Op]) -> Vec<Op> {
    let total = forward.len();
    let warmup = (((pp - rank - 1) * 2 + (vpp - 1) * pp) as usize).min(total);
    let mut res = Vec::with_capacity(2 * total);
    res.extend_from_slice(&forward[..warmup]);
    for (f, b) in forward[warmup..].iter().zip(&backward[..total - warmup]) {
        res.push(*f);
        res.push(*b);
    }
    res.extend_from_slice(&backward[total - warmup..]);
    res
}

/// DualPipeV's order on `rank` (deepseek-ai/DualPipe `dualpipe/dualpipev.py`, `step()`): eight
/// steps whose counts depend on the rank; W passes wait in one FIFO shared by both chunks.
fn dual_pipe_v(pp: u32, rank: u32, m: u32) -> Vec<Op> {
    let mut res = Vec::new();
    let (mut f0, mut f1, mut b0, mut b1) = (0, 0, 0, 0);
    let mut queue = std::collections::VecDeque::new();
    let last_rank = rank + 1 == pp;
    let take = |counter: &mut u32| {
        let res = *counter;
        *counter += 1;
        res
    };
    // Step 1: nF0.
    for _ in 0..(pp - rank - 1) * 2 {
        res.push(Op::f(take(&mut f0), 0));
    }
    // Step 2: nF0F1.
    for _ in 0..rank + 1 {
        res.push(Op::f(take(&mut f0), 0));
        res.push(Op::f(take(&mut f1), 1));
    }
    // Step 3: nB1W1F1, zero bubble: the W runs right after its B.
    for _ in 0..pp - rank - 1 {
        let mb = take(&mut b1);
        res.push(Op::b(mb, 1, false));
        res.push(Op::w(mb, 1));
        res.push(Op::f(take(&mut f1), 1));
    }
    // Step 4 (main): nF0B1F1B0, each pair overlapped (the last rank's first pair runs apart).
    for i in 0..(m + rank + 1).saturating_sub(2 * pp) {
        let (f, b) = (take(&mut f0), take(&mut b1));
        if i == 0 && last_rank {
            res.push(Op::f(f, 0));
            res.push(Op::b(b, 1, true));
        } else {
            res.push(Op { with_backward: Some((b, 1)), ..Op::f(f, 0) });
        }
        let (f, b) = (take(&mut f1), take(&mut b0));
        res.push(Op { with_backward: Some((b, 0)), ..Op::f(f, 1) });
    }
    // Step 5: nB1F1B0.
    for _ in 0..pp - rank - 1 {
        res.push(Op::b(take(&mut b1), 1, true));
        let (f, b) = (take(&mut f1), take(&mut b0));
        res.push(Op { with_backward: Some((b, 0)), ..Op::f(f, 1) });
    }
    // Step 6: nB1B0, the second half input-only with W deferred.
    let step_6 = rank + 1;
    let mut zero_bubble = false;
    for i in 0..step_6 {
        if i == step_6 / 2 && rank % 2 == 1 {
            zero_bubble = true;
        }
        let mb = take(&mut b1);
        res.push(Op::b(mb, 1, !zero_bubble));
        if zero_bubble {
            queue.push_back((mb, 1));
        }
        if i == step_6 / 2 && rank.is_multiple_of(2) {
            zero_bubble = true;
        }
        let mb = take(&mut b0);
        res.push(Op::b(mb, 0, !zero_bubble));
        if zero_bubble {
            queue.push_back((mb, 0));
        }
    }
    // Step 7: nWB0.
    for _ in 0..pp - rank - 1 {
        if let Some((mb, chunk)) = queue.pop_front() {
            res.push(Op::w(mb, chunk));
        }
        let mb = take(&mut b0);
        res.push(Op::b(mb, 0, false));
        queue.push_back((mb, 0));
    }
    // Step 8: nW.
    res.extend(queue.into_iter().map(|(mb, chunk)| Op::w(mb, chunk)));
    res
}

/// The pipeline position (virtual stage) of `chunk` on `rank` under a schedule.
pub fn position(schedule: Schedule, pp: u32, rank: u32, chunk: u32) -> u32 {
    let layout = match schedule {
        Schedule::DualPipeV => Layout::V,
        _ => Layout::Interleaved,
    };
    virtual_stage(layout, pp, rank, chunk)
}

/// How chunks map to pipeline positions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Layout {
    /// Megatron: chunk c of rank r is virtual stage `c · pp + r`.
    Interleaved,
    /// DualPipeV: chunk 0 of rank r is stage r, chunk 1 is stage 2p − 1 − r.
    V,
}

fn virtual_stage(layout: Layout, pp: u32, rank: u32, chunk: u32) -> u32 {
    match (layout, chunk) {
        (Layout::V, 1) => 2 * pp - 1 - rank,
        (Layout::V, _) => rank,
        (Layout::Interleaved, _) => chunk * pp + rank,
    }
}

fn rank_of(layout: Layout, pp: u32, vs: u32) -> u32 {
    match layout {
        Layout::V if pp <= vs => 2 * pp - 1 - vs,
        Layout::V => vs,
        Layout::Interleaved => vs % pp,
    }
}

/// The makespan of a schedule's orders against the costs: [`simulate`] without keeping the
/// passes (the same arithmetic, so the same makespan to the bit). `None` if the orders deadlock.
pub fn makespan(schedule: Schedule, orders: &[Vec<Op>], costs: &Costs) -> Option<f64> {
    Some(Program::compile(schedule, orders, costs.vpp)?.makespan(costs))
}

/// Runs a schedule's orders against the costs: each rank runs its next pass as soon as the pass's
/// inputs have arrived ([`Program`]).
///
/// Returns `None` if the orders deadlock, which only a malformed order can do.
pub fn simulate(schedule: Schedule, orders: &[Vec<Op>], costs: &Costs) -> Option<Timeline> {
    Some(Program::compile_to_draw(schedule, orders, costs.vpp)?.timeline(costs))
}

#[cfg(test)]
mod order_tests {
    use super::*;

    /// The interleaved orders built from shared sequences are Megatron's, pass for pass: the k-th
    /// forward of a rank is micro-batch (k ÷ (p·v))·p + k mod p on chunk (k ÷ p) mod v, the k-th
    /// backward the same micro-batch on chunk v − 1 − (k ÷ p) mod v, after (p − r − 1)·2 + (v − 1)·p
    /// warm-up forwards (`schedules.py`, `get_model_chunk_id` and the warm-up count).
    #[test]
    fn interleaved_orders_are_megatrons() {
        for (pp, vpp, m) in [(2, 2, 4), (4, 2, 8), (4, 3, 12), (8, 4, 16), (3, 2, 7)] {
            let orders = orders(Schedule::Interleaved, pp, vpp, m);
            let m = m.div_ceil(pp) * pp;
            let total = m * vpp;
            for (rank, order) in orders.iter().enumerate() {
                let rank = rank as u32;
                let forward = |k: u32| Op::f((k / (pp * vpp)) * pp + k % pp, (k / pp) % vpp);
                let backward = |k: u32| Op::b((k / (pp * vpp)) * pp + k % pp, vpp - 1 - (k / pp) % vpp, true);
                let warmup = ((pp - rank - 1) * 2 + (vpp - 1) * pp).min(total);
                let mut expected: Vec<Op> = (0..warmup).map(forward).collect();
                for k in 0..total - warmup {
                    expected.push(forward(warmup + k));
                    expected.push(backward(k));
                }
                expected.extend((total - warmup..total).map(backward));
                assert_eq!(order, &expected, "pp {pp} vpp {vpp} m {m} rank {rank}");
            }
        }
    }
}
