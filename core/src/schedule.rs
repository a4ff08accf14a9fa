//! Pipeline schedules as a simulation: each rank runs an ordered list of forward (F), backward (B,
//! input gradients) and weight-gradient (W) passes; a pass starts when its rank is free and its
//! inputs have arrived. The timeline, the step's makespan and the bubble come from running it.
//! docs/pipeline.md derives the orders and the checks.

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
    /// Model chunk on this rank (0 unless interleaved).
    pub chunk: u32,
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

/// The durations the simulation needs, per rank and chunk, seconds.
#[derive(Clone, Debug, PartialEq)]
pub struct Costs {
    /// Ranks.
    pub pp: u32,
    /// Chunks per rank.
    pub vpp: u32,
    /// Forward time of chunk `c` on rank `r` at `[r * vpp + c]`.
    pub forward_seconds: Vec<f64>,
    /// Backward time (input gradients only when the schedule has W passes).
    pub backward_seconds: Vec<f64>,
    /// Weight-gradient time (used only by schedules with W passes).
    pub weight_seconds: Vec<f64>,
    /// Time to send an activation or gradient to the next rank.
    pub p2p_seconds: f64,
}

impl Costs {
    /// Every rank and chunk the same: `forward`, `backward` (and `weight`) seconds.
    pub fn uniform(pp: u32, vpp: u32, forward: f64, backward: f64, weight: f64, p2p: f64) -> Costs {
        let n = (pp * vpp) as usize;
        Costs {
            pp,
            vpp,
            forward_seconds: vec![forward; n],
            backward_seconds: vec![backward; n],
            weight_seconds: vec![weight; n],
            p2p_seconds: p2p,
        }
    }

    fn of(&self, pass: Pass, rank: u32, chunk: u32) -> f64 {
        let idx = (rank * self.vpp + chunk) as usize;
        match pass {
            Pass::F => self.forward_seconds[idx],
            Pass::B => self.backward_seconds[idx],
            Pass::W => self.weight_seconds[idx],
        }
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
    (0..pp)
        .map(|rank| match schedule {
            Schedule::GPipe => {
                let f = (0..m).map(|mb| Op { pass: Pass::F, microbatch: mb, chunk: 0 });
                let b = (0..m).map(|mb| Op { pass: Pass::B, microbatch: mb, chunk: 0 });
                f.chain(b).collect()
            }
            Schedule::OneFOneB => one_f_one_b(pp, rank, m, false),
            Schedule::ZbH1 => one_f_one_b(pp, rank, m, true),
            Schedule::Interleaved => interleaved(pp, vpp.max(1), rank, m.div_ceil(pp) * pp),
        })
        .collect()
}

fn one_f_one_b(pp: u32, rank: u32, m: u32, zero_bubble: bool) -> Vec<Op> {
    let warmup = (pp - rank - 1).min(m);
    let f = |mb| Op { pass: Pass::F, microbatch: mb, chunk: 0 };
    let b = |mb| Op { pass: Pass::B, microbatch: mb, chunk: 0 };
    let w = |mb| Op { pass: Pass::W, microbatch: mb, chunk: 0 };
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

fn interleaved(pp: u32, vpp: u32, rank: u32, m: u32) -> Vec<Op> {
    let total = m * vpp;
    let warmup = ((pp - rank - 1) * 2 + (vpp - 1) * pp).min(total);
    let forward =
        |k: u32| Op { pass: Pass::F, microbatch: (k / (pp * vpp)) * pp + k % pp, chunk: (k / pp) % vpp };
    let backward = |k: u32| Op {
        pass: Pass::B,
        microbatch: (k / (pp * vpp)) * pp + k % pp,
        chunk: vpp - 1 - (k / pp) % vpp,
    };
    let mut res = Vec::with_capacity(2 * total as usize);
    res.extend((0..warmup).map(forward));
    for k in 0..total - warmup {
        res.push(forward(warmup + k));
        res.push(backward(k));
    }
    res.extend((total - warmup..total).map(backward));
    res
}

/// Where a chunk sits in the pipeline: virtual stage `chunk · pp + rank` (Megatron's layout).
fn virtual_stage(pp: u32, rank: u32, chunk: u32) -> u32 {
    chunk * pp + rank
}

fn rank_chunk(pp: u32, vs: u32) -> (u32, u32) {
    (vs % pp, vs / pp)
}

/// Runs the orders against the costs.
///
/// Returns `None` if the orders deadlock, which only a malformed order can do.
pub fn simulate(orders: &[Vec<Op>], costs: &Costs) -> Option<Timeline> {
    let pp = costs.pp;
    let n_vs = pp * costs.vpp;
    let m = orders.iter().flatten().map(|op| op.microbatch + 1).max().unwrap_or(0) as usize;
    // End times of each pass, by micro-batch and virtual stage; NaN while not run.
    let slot = |mb: u32, vs: u32| mb as usize * n_vs as usize + vs as usize;
    let mut f_end = vec![f64::NAN; m * n_vs as usize];
    let mut b_end = vec![f64::NAN; m * n_vs as usize];
    let mut next = vec![0usize; orders.len()];
    let mut free = vec![0.0f64; orders.len()];
    let mut events = Vec::with_capacity(orders.iter().map(Vec::len).sum());
    let total: usize = orders.iter().map(Vec::len).sum();
    let p2p = costs.p2p_seconds;
    while events.len() < total {
        let mut progressed = false;
        for (rank, order) in orders.iter().enumerate() {
            let rank = rank as u32;
            while let Some(op) = order.get(next[rank as usize]) {
                let vs = virtual_stage(pp, rank, op.chunk);
                let ready = match op.pass {
                    Pass::F if vs == 0 => Some(0.0),
                    Pass::F => {
                        let (prev_rank, _) = rank_chunk(pp, vs - 1);
                        let end = f_end[slot(op.microbatch, vs - 1)];
                        (!end.is_nan()).then_some(end + if prev_rank == rank { 0.0 } else { p2p })
                    }
                    Pass::B if vs + 1 == n_vs => {
                        let end = f_end[slot(op.microbatch, vs)];
                        (!end.is_nan()).then_some(end)
                    }
                    Pass::B => {
                        let (next_rank, _) = rank_chunk(pp, vs + 1);
                        let end = b_end[slot(op.microbatch, vs + 1)];
                        let own = f_end[slot(op.microbatch, vs)];
                        (!end.is_nan() && !own.is_nan())
                            .then(|| (end + if next_rank == rank { 0.0 } else { p2p }).max(own))
                    }
                    Pass::W => {
                        let end = b_end[slot(op.microbatch, vs)];
                        (!end.is_nan()).then_some(end)
                    }
                };
                let Some(ready) = ready else { break };
                let start = ready.max(free[rank as usize]);
                let end = start + costs.of(op.pass, rank, op.chunk);
                match op.pass {
                    Pass::F => f_end[slot(op.microbatch, vs)] = end,
                    Pass::B => b_end[slot(op.microbatch, vs)] = end,
                    Pass::W => {}
                }
                free[rank as usize] = end;
                next[rank as usize] += 1;
                events.push(Event {
                    stage: rank,
                    chunk: op.chunk,
                    microbatch: op.microbatch,
                    pass: op.pass,
                    start_seconds: start,
                    end_seconds: end,
                });
                progressed = true;
            }
        }
        if !progressed {
            return None;
        }
    }
    let makespan_seconds = events.iter().map(|e| e.end_seconds).fold(0.0, f64::max);
    let busy: f64 = events.iter().map(|e| e.end_seconds - e.start_seconds).sum();
    let idle = (makespan_seconds * f64::from(pp) - busy).max(0.0);
    let (bubble_ratio, idle_frac) = match 0.0 < busy {
        true => (idle / busy, idle / (makespan_seconds * f64::from(pp))),
        false => (0.0, 0.0),
    };
    events.sort_by(|a, b| a.stage.cmp(&b.stage).then(a.start_seconds.total_cmp(&b.start_seconds)));
    Some(Timeline { events, makespan_seconds, bubble_ratio, idle_frac })
}
