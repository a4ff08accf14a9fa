//! A schedule's pass orders compiled once into a straight-line program, then run against any
//! costs: each pass's end is `max(its inputs' arrivals, its rank's previous end) + its duration`,
//! in an order where every input comes first. The orders and their dependencies depend only on
//! the schedule, pp, vpp and the micro-batch count, never on the costs, so a search or a page
//! that evaluates many plans of one shape compiles it once ([`cached`]) and pays a few
//! nanoseconds per pass after that: no order is built, no readiness is tested, nothing is
//! allocated.
//!
//! The arithmetic is the event simulation's, term for term (the same additions in the same order;
//! `max` is exact in any order), so both give the same makespan to the bit (`core/tests/it/schedule.rs`).

use std::cell::RefCell;
use std::rc::Rc;

use super::{Costs, Layout, Op, Pass, Schedule, rank_of, virtual_stage};

/// The value slot that always holds 0.0: the start of the step, and an absent input.
const ZERO: u32 = 0;

/// One pass: its end is `max(v[a] + hop[ha], v[b] + hop[hb], v[c], v[prev]) + cost`, written to
/// `v[out]`; an overlapped forward and backward also writes the forward's end to `v[split]`.
#[derive(Clone, Copy, Debug)]
struct Instr {
    a: u32,
    b: u32,
    c: u32,
    prev: u32,
    out: u32,
    /// Index into the cost table (see [`Program::costs_into`]).
    cost: u32,
    /// The forward's cost index of an overlapped F&B, whose end goes to `out + 1`; `u32::MAX` if none.
    split: u32,
    /// Whether `a` and `b` arrive over a send (index into `[0.0, p2p]`).
    ha: u8,
    hb: u8,
}

impl Instr {
    /// When the pass starts: its inputs have arrived and its rank is free.
    fn start(&self, values: &[f64], hops: &[f64; 2]) -> f64 {
        let forward = later(values[self.a as usize] + hops[self.ha as usize], values[self.c as usize]);
        later(later(forward, values[self.b as usize] + hops[self.hb as usize]), values[self.prev as usize])
    }
}

/// The later of two times. Times are never NaN, so this is `f64::max` without its NaN handling:
/// one instruction instead of five, on the run's critical path.
fn later(a: f64, b: f64) -> f64 {
    if a < b { b } else { a }
}

/// A compiled schedule. Built by [`Program::compile`], run by [`Program::makespan`] and
/// [`Program::events`].
#[derive(Debug)]
pub struct Program {
    pp: u32,
    vpp: u32,
    instrs: Vec<Instr>,
    /// Each instruction's rank and op, for drawing.
    ops: Vec<(u32, Op)>,
    /// Overlapped pairs (forward index, backward index) whose summed cost the table holds.
    pairs: Vec<(u32, u32)>,
    n_values: usize,
    /// Each rank's last pass's end slot.
    last: Vec<u32>,
}

/// Where a pass's end is kept while compiling: slots by micro-batch and virtual stage.
struct Slots {
    n_vs: usize,
    f_end: Vec<u32>,
    b_end: Vec<u32>,
}

impl Slots {
    fn at(&self, mb: u32, vs: u32) -> usize {
        mb as usize * self.n_vs + vs as usize
    }
}

impl Program {
    /// Compiles `orders` (one per rank) for `vpp` chunks per rank; `None` if they deadlock, which
    /// only a malformed order can do.
    pub fn compile(schedule: Schedule, orders: &[Vec<Op>], vpp: u32) -> Option<Program> {
        let pp = orders.len() as u32;
        let (layout, n_vs) = match schedule {
            Schedule::DualPipeV => (Layout::V, 2 * pp),
            _ => (Layout::Interleaved, pp * vpp),
        };
        let m = orders.iter().flatten().map(|op| op.microbatch + 1).max().unwrap_or(0) as usize;
        let unset = u32::MAX;
        let mut slots = Slots {
            n_vs: n_vs as usize,
            f_end: vec![unset; m * n_vs as usize],
            b_end: vec![unset; m * n_vs as usize],
        };
        let total: usize = orders.iter().map(Vec::len).sum();
        let mut program = Program {
            pp,
            vpp,
            instrs: Vec::with_capacity(total),
            ops: Vec::with_capacity(total),
            pairs: Vec::new(),
            n_values: 1,
            last: Vec::new(),
        };
        let mut next = vec![0usize; orders.len()];
        let mut last = vec![ZERO; orders.len()];
        let n = pp * vpp;
        // Cost table: forward, full backward (B + W), input backward, weight, then the pairs.
        let (full, input, weight) = (n, 2 * n, 3 * n);
        let hop = |from_vs: u32, rank: u32| u8::from(rank_of(layout, pp, from_vs) != rank);
        let mut done = 0;
        while done < total {
            let mut progressed = false;
            for (rank, order) in orders.iter().enumerate() {
                let r = rank as u32;
                // One pass per rank per round: consecutive passes are then on different ranks
                // and independent, so a run overlaps them instead of waiting on each in turn.
                if let Some(op) = order.get(next[rank]) {
                    let vs = virtual_stage(layout, pp, r, op.chunk);
                    let idx = r * vpp + op.chunk;
                    // The forward's input: the previous virtual stage's forward, or the step's start.
                    let forward_in = |slots: &Slots, mb: u32| match vs {
                        0 => Some((ZERO, 0)),
                        _ => {
                            let end = slots.f_end[slots.at(mb, vs - 1)];
                            (end != unset).then(|| (end, hop(vs - 1, r)))
                        }
                    };
                    // The backward's inputs: its own forward, and the next virtual stage's backward.
                    let backward_in = |slots: &Slots, mb: u32, vs: u32| {
                        let own = slots.f_end[slots.at(mb, vs)];
                        if own == unset {
                            return None;
                        }
                        if vs + 1 == n_vs {
                            return Some(((ZERO, 0), own));
                        }
                        let end = slots.b_end[slots.at(mb, vs + 1)];
                        (end != unset).then(|| ((end, hop(vs + 1, r)), own))
                    };
                    let (a, b, c, cost, split) = match (op.pass, op.with_backward) {
                        (Pass::F, None) => match forward_in(&slots, op.microbatch) {
                            Some(a) => (a, (ZERO, 0), ZERO, idx, u32::MAX),
                            None => continue,
                        },
                        (Pass::F, Some((mb, chunk))) => {
                            let b_vs = virtual_stage(layout, pp, r, chunk);
                            match forward_in(&slots, op.microbatch).zip(backward_in(&slots, mb, b_vs)) {
                                Some((a, (b, c))) => {
                                    let pair = (idx, r * vpp + chunk);
                                    let k = match program.pairs.iter().position(|&p| p == pair) {
                                        Some(k) => k,
                                        None => {
                                            program.pairs.push(pair);
                                            program.pairs.len() - 1
                                        }
                                    };
                                    (a, b, c, 4 * n + k as u32, idx)
                                }
                                None => continue,
                            }
                        }
                        (Pass::B, _) => match backward_in(&slots, op.microbatch, vs) {
                            Some((b, own)) => {
                                let cost = if op.full { full + idx } else { input + idx };
                                (b, (own, 0), ZERO, cost, u32::MAX)
                            }
                            None => continue,
                        },
                        (Pass::W, _) => {
                            let end = slots.b_end[slots.at(op.microbatch, vs)];
                            if end == unset {
                                continue;
                            }
                            ((end, 0), (ZERO, 0), ZERO, weight + idx, u32::MAX)
                        }
                    };
                    let out = program.n_values as u32;
                    program.n_values += if split == u32::MAX { 1 } else { 2 };
                    program.instrs.push(Instr {
                        a: a.0,
                        ha: a.1,
                        b: b.0,
                        hb: b.1,
                        c,
                        prev: last[rank],
                        out,
                        cost,
                        split,
                    });
                    program.ops.push((r, *op));
                    match (op.pass, op.with_backward) {
                        (Pass::F, Some((mb, chunk))) => {
                            let at = slots.at(op.microbatch, vs);
                            slots.f_end[at] = out + 1;
                            let at = slots.at(mb, virtual_stage(layout, pp, r, chunk));
                            slots.b_end[at] = out;
                        }
                        (Pass::F, None) => {
                            let at = slots.at(op.microbatch, vs);
                            slots.f_end[at] = out;
                        }
                        (Pass::B, _) => {
                            let at = slots.at(op.microbatch, vs);
                            slots.b_end[at] = out;
                        }
                        (Pass::W, _) => {}
                    }
                    last[rank] = out;
                    next[rank] += 1;
                    done += 1;
                    progressed = true;
                }
            }
            if !progressed {
                return None;
            }
        }
        program.last = last;
        Some(program)
    }

    /// Passes in the program.
    pub fn len(&self) -> usize {
        self.instrs.len()
    }

    /// Whether the program runs no pass.
    pub fn is_empty(&self) -> bool {
        self.instrs.is_empty()
    }

    /// The cost table for `costs`: per virtual index, the forward, the full backward (B + W), the
    /// input backward and the weight pass, then each overlapped pair's forward + full backward.
    fn costs_into(&self, costs: &Costs, table: &mut Vec<f64>) {
        let n = (self.pp * self.vpp) as usize;
        let (f, b, w) = (&costs.forward_seconds, &costs.backward_seconds, &costs.weight_seconds);
        table.clear();
        table.extend_from_slice(&f[..n]);
        table.extend((0..n).map(|i| b[i] + w[i]));
        table.extend_from_slice(&b[..n]);
        table.extend_from_slice(&w[..n]);
        table.extend(self.pairs.iter().map(|&(fi, bi)| f[fi as usize] + (b[bi as usize] + w[bi as usize])));
    }

    /// Runs the program into `values` (each pass's end by slot), returning the makespan.
    fn run(&self, costs: &Costs, values: &mut Vec<f64>, table: &mut Vec<f64>) -> f64 {
        self.costs_into(costs, table);
        values.clear();
        values.resize(self.n_values, 0.0);
        let hops = [0.0, costs.p2p_seconds];
        for ins in &self.instrs {
            let start = ins.start(values, &hops);
            let end = start + table[ins.cost as usize];
            values[ins.out as usize] = end;
            if ins.split != u32::MAX {
                values[ins.out as usize + 1] = start + table[ins.split as usize];
            }
        }
        // Each rank's passes end in order (durations are never negative), so the step ends with
        // the latest of the ranks' last passes.
        self.last.iter().fold(0.0, |makespan, &slot| later(makespan, values[slot as usize]))
    }

    /// The makespan against `costs` (which must have this program's pp and vpp).
    pub fn makespan(&self, costs: &Costs) -> f64 {
        SCRATCH.with(|scratch| {
            let (values, table) = &mut *scratch.borrow_mut();
            self.run(costs, values, table)
        })
    }

    /// The run against `costs` pass by pass, with its bubble.
    pub fn timeline(&self, costs: &Costs) -> super::Timeline {
        let (events, makespan_seconds) = self.events(costs);
        let busy: f64 = events.iter().map(|e| e.end_seconds - e.start_seconds).sum();
        let idle = (makespan_seconds * f64::from(self.pp) - busy).max(0.0);
        let (bubble_ratio, idle_frac) = match 0.0 < busy {
            true => (idle / busy, idle / (makespan_seconds * f64::from(self.pp))),
            false => (0.0, 0.0),
        };
        super::Timeline { events, makespan_seconds, bubble_ratio, idle_frac }
    }

    /// Every pass as it ran against `costs`, rank after rank, each rank's in time order (an
    /// overlapped F&B as its forward then its backward), and the makespan.
    fn events(&self, costs: &Costs) -> (Vec<super::Event>, f64) {
        let (mut values, mut table) = (Vec::new(), Vec::new());
        let makespan = self.run(costs, &mut values, &mut table);
        // Each rank's events start where the ranks before it end (an overlapped F&B is two).
        let mut cursor = vec![0usize; self.pp as usize + 1];
        for &(rank, op) in &self.ops {
            cursor[rank as usize + 1] += 1 + usize::from(op.with_backward.is_some());
        }
        for r in 1..cursor.len() {
            cursor[r] += cursor[r - 1];
        }
        let placeholder = super::Event {
            stage: 0,
            chunk: 0,
            microbatch: 0,
            pass: Pass::F,
            start_seconds: 0.0,
            end_seconds: 0.0,
        };
        let mut events = vec![placeholder; cursor[self.pp as usize]];
        let hops = [0.0, costs.p2p_seconds];
        for (ins, &(rank, op)) in self.instrs.iter().zip(&self.ops) {
            let end = values[ins.out as usize];
            // The start as the run computed it, from the same (now final) inputs.
            let start = ins.start(&values, &hops);
            let event = |pass, microbatch, chunk, start_seconds, end_seconds| super::Event {
                stage: rank,
                chunk,
                microbatch,
                pass,
                start_seconds,
                end_seconds,
            };
            let at = &mut cursor[rank as usize];
            match op.with_backward {
                Some((mb, chunk)) => {
                    let split = values[ins.out as usize + 1];
                    events[*at] = event(Pass::F, op.microbatch, op.chunk, start, split);
                    events[*at + 1] = event(Pass::B, mb, chunk, split, end);
                    *at += 2;
                }
                None => {
                    events[*at] = event(op.pass, op.microbatch, op.chunk, start, end);
                    *at += 1;
                }
            }
        }
        (events, makespan)
    }
}

thread_local! {
    /// The value and cost buffers [`Program::makespan`] reuses.
    static SCRATCH: RefCell<(Vec<f64>, Vec<f64>)> = const { RefCell::new((Vec::new(), Vec::new())) };
    /// Recently compiled programs, most recent last.
    static CACHE: RefCell<Vec<(Key, Rc<Program>)>> = const { RefCell::new(Vec::new()) };
}

/// What a program depends on.
type Key = (Schedule, u32, u32, u32);

/// Programs kept: a search's plans share a few shapes, the page's edits one or two.
const CACHED_PROGRAMS: usize = 16;
/// Larger programs (some 2.5 MB and up) are compiled each time rather than kept.
const CACHED_PASSES_MAX: usize = 1 << 16;

/// The compiled program of `schedule` over `pp` ranks, `vpp` chunks and `m` micro-batches (the
/// orders of [`super::orders`]), from the cache when it was compiled recently. `None` if the
/// orders deadlock.
pub fn cached(schedule: Schedule, pp: u32, vpp: u32, m: u32) -> Option<Rc<Program>> {
    let key = (schedule, pp, vpp, m);
    let hit = CACHE.with(|cache| {
        let mut cache = cache.borrow_mut();
        let at = cache.iter().position(|(k, _)| *k == key)?;
        let entry = cache.remove(at);
        let program = Rc::clone(&entry.1);
        cache.push(entry);
        Some(program)
    });
    if let Some(program) = hit {
        return Some(program);
    }
    let program = Rc::new(Program::compile(schedule, &super::orders(schedule, pp, vpp, m), vpp)?);
    if program.len() <= CACHED_PASSES_MAX {
        CACHE.with(|cache| {
            let mut cache = cache.borrow_mut();
            if CACHED_PROGRAMS <= cache.len() {
                cache.remove(0);
            }
            cache.push((key, Rc::clone(&program)));
        });
    }
    Some(program)
}
