//! A schedule's pass orders compiled once into a straight-line program, then run against any
//! costs: each pass's end is `max(its inputs' arrivals, its rank's previous end) + its duration`,
//! in an order where every input comes first. The orders and their dependencies depend only on
//! the schedule, pp, vpp and the micro-batch count, never on the costs, so a search or a page
//! that evaluates many plans of one shape compiles it once ([`cached`]) and pays a few
//! nanoseconds per pass after that: no order is built, no readiness is tested, nothing is
//! allocated.
//!
//! Every schedule but DualPipeV runs in a compact form of the same program, which gives the same
//! ends ([`Program::compact`]): three numbers per pass instead of nine, so a deep pipeline's run
//! reads a third of the memory and takes half the time (the benchmark grid's slowest plans, PP 64
//! over 128 micro-batches: 57–68 µs → 28–32 µs, timed alternately on one machine).
//!
//! A step's makespan runs the compact form in runs ([`Run`]): within a wavefront the passes are
//! kept by kind and virtual stage, and the cost table by virtual stage, so that a wavefront's
//! forwards (or backwards) on consecutive stages read consecutive slots and costs, and each run
//! is one loop over slices that the compiler turns into vector instructions. The same arithmetic
//! pass for pass, so the same ends to the bit; the benchmark grid's slowest plans, PP 64 over 192
//! micro-batches, 19–20 µs → 9–9.5 µs. Drawing a timeline runs it pass by pass, for each start;
//! a program compiled only to draw ([`Program::compile_to_draw`], [`cached_to_draw`]) is neither
//! reordered nor joined into runs.
//!
//! The arithmetic is the event simulation's, term for term (the same additions in the same order;
//! `max` is exact in any order), so both give the same makespan to the bit (`core/tests/it/schedule.rs`).

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use trainplan_kernel::{Run, SENT, later};

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
    #[inline(always)]
    fn start(&self, values: &[f64], hops: &[f64; 2]) -> f64 {
        let forward = later(values[self.a as usize] + hops[self.ha as usize], values[self.c as usize]);
        later(later(forward, values[self.b as usize] + hops[self.hb as usize]), values[self.prev as usize])
    }
}

/// One pass of a [`Program`]'s compact form: its end, in slot `i + 1` for the `i`-th step, is
/// `max(v[input] + hop, v[prev]) + cost`. A third of a wide [`Instr`]'s bytes, so the run of a deep
/// pipeline (10^4 passes and more) streams a third of the memory.
#[derive(Clone, Copy, Debug)]
struct Step {
    /// The input's slot; the top bit ([`SENT`]) says whether it arrives over a send.
    input: u32,
    /// The rank's previous pass's slot.
    prev: u32,
    /// Index into the cost table.
    cost: u32,
}

/// `items` (indices into `key`) ordered stably by their keys, every key below `keys`.
fn counting_sort(items: impl Iterator<Item = u32> + Clone, key: &[u32], keys: usize) -> Vec<u32> {
    let mut next = vec![0u32; keys];
    for i in items.clone() {
        next[key[i as usize] as usize] += 1;
    }
    let mut at = 0;
    for slot in &mut next {
        (*slot, at) = (at, at + *slot);
    }
    let mut order = vec![0u32; at as usize];
    for i in items {
        let k = key[i as usize] as usize;
        order[next[k] as usize] = i;
        next[k] += 1;
    }
    order
}

/// A pass's index among each kind's costs in the cost table: chunk by chunk, each chunk's ranks in
/// order, so that interleaved virtual stages, which run one after another (`chunk · pp + rank`),
/// have consecutive costs.
fn table_index(pp: u32, rank: u32, chunk: u32) -> u32 {
    chunk * pp + rank
}

/// Where cost index `c` lies in one stride's copy of a table of `n` costs: residue `c % stride`'s
/// entries together, in order.
fn strided_position(n: usize, stride: u32, c: u32) -> u32 {
    let s = stride as usize;
    let r = c as usize % s;
    // Entries of the residues before r: each residue q holds ceil((n - q) / s).
    let before: usize = (0..r).map(|q| (n - q).div_ceil(s)).sum();
    (before + c as usize / s) as u32
}

/// A compiled schedule. Built by [`Program::compile`], run by [`Program::makespan`] and
/// `Program::events`.
#[derive(Debug)]
pub struct Program {
    pp: u32,
    vpp: u32,
    /// The passes in wide form; empty once the compact form holds them.
    instrs: Vec<Instr>,
    /// The passes in compact form, when every pass has one input besides its rank's previous pass
    /// (see [`Program::compact`]); empty otherwise.
    steps: Vec<Step>,
    /// Each rank's last pass's slot in the compact form.
    steps_last: Vec<u32>,
    /// The compact form's steps joined into runs ([`Run`]).
    runs: Vec<Run>,
    /// The cost-index strides above 1 the runs use, each with its copy of the cost table
    /// ([`Program::strided_costs`]).
    strides: Vec<u32>,
    /// Each instruction's rank and op, for drawing.
    ops: Vec<(u32, Op)>,
    /// Overlapped pairs (forward index, backward index) whose summed cost the table holds.
    pairs: Vec<(u32, u32)>,
    n_values: usize,
    /// Each rank's last pass's end slot.
    last: Vec<u32>,
    /// Each micro-batch's backward on the last virtual stage: its end's slot.
    last_backward: Vec<u32>,
}

/// Not yet computed, in [`Compiler`]'s slots.
const UNSET: u32 = u32::MAX;

/// A value slot and whether it arrives over a send.
type Input = (u32, u8);

/// What compiling needs beside the program: where each pass's end is kept (by micro-batch and
/// virtual stage), each rank's last pass, and the shape.
struct Compiler {
    layout: Layout,
    pp: u32,
    vpp: u32,
    n_vs: u32,
    f_end: Vec<u32>,
    b_end: Vec<u32>,
    last: Vec<u32>,
}

impl Compiler {
    fn at(&self, mb: u32, vs: u32) -> usize {
        mb as usize * self.n_vs as usize + vs as usize
    }

    /// Whether a value made on virtual stage `from_vs` reaches `rank` over a send.
    fn hop(&self, from_vs: u32, rank: u32) -> u8 {
        u8::from(rank_of(self.layout, self.pp, from_vs) != rank)
    }

    /// A forward's input: the previous virtual stage's forward, or the step's start.
    fn forward_in(&self, mb: u32, vs: u32, rank: u32) -> Option<Input> {
        if vs == 0 {
            return Some((ZERO, 0));
        }
        let end = self.f_end[self.at(mb, vs - 1)];
        (end != UNSET).then(|| (end, self.hop(vs - 1, rank)))
    }

    /// A backward's inputs: the next virtual stage's backward (none on the last), and its own forward.
    fn backward_in(&self, mb: u32, vs: u32, rank: u32) -> Option<(Input, u32)> {
        let own = self.f_end[self.at(mb, vs)];
        if own == UNSET {
            return None;
        }
        if vs + 1 == self.n_vs {
            return Some(((ZERO, 0), own));
        }
        let end = self.b_end[self.at(mb, vs + 1)];
        (end != UNSET).then(|| ((end, self.hop(vs + 1, rank)), own))
    }

    /// `op`'s instruction on `rank` if its inputs are computed: its inputs, cost and split cost
    /// indices (the cost table: forward, full backward, input backward, weight, then the pairs).
    fn inputs(&self, program: &mut Program, rank: u32, op: &Op) -> Option<(Input, Input, u32, u32, u32)> {
        let vs = virtual_stage(self.layout, self.pp, rank, op.chunk);
        let n = self.pp * self.vpp;
        // The cost table's index (chunk by chunk, [`Program::costs_into`]) and the cost lists'.
        let idx = table_index(self.pp, rank, op.chunk);
        let listed = rank * self.vpp + op.chunk;
        Some(match (op.pass, op.with_backward) {
            (Pass::F, None) => (self.forward_in(op.microbatch, vs, rank)?, (ZERO, 0), ZERO, idx, UNSET),
            (Pass::F, Some((mb, chunk))) => {
                let b_vs = virtual_stage(self.layout, self.pp, rank, chunk);
                let a = self.forward_in(op.microbatch, vs, rank)?;
                let (b, c) = self.backward_in(mb, b_vs, rank)?;
                (a, b, c, 4 * n + program.pair(listed, rank * self.vpp + chunk), idx)
            }
            (Pass::B, _) => {
                let (b, own) = self.backward_in(op.microbatch, vs, rank)?;
                let cost = if op.full { n + idx } else { 2 * n + idx };
                (b, (own, 0), ZERO, cost, UNSET)
            }
            (Pass::W, _) => {
                let end = self.b_end[self.at(op.microbatch, vs)];
                if end == UNSET {
                    return None;
                }
                ((end, 0), (ZERO, 0), ZERO, 3 * n + idx, UNSET)
            }
        })
    }

    /// Appends `op` on `rank` to the program if its inputs are computed; whether it did.
    fn issue(&mut self, program: &mut Program, rank: u32, op: &Op) -> bool {
        let Some((a, b, c, cost, split)) = self.inputs(program, rank, op) else {
            return false;
        };
        let out = program.n_values as u32;
        program.n_values += if split == UNSET { 1 } else { 2 };
        let prev = self.last[rank as usize];
        program.instrs.push(Instr { a: a.0, ha: a.1, b: b.0, hb: b.1, c, prev, out, cost, split });
        program.ops.push((rank, *op));
        let vs = virtual_stage(self.layout, self.pp, rank, op.chunk);
        let at = self.at(op.microbatch, vs);
        match (op.pass, op.with_backward) {
            (Pass::F, Some((mb, chunk))) => {
                self.f_end[at] = out + 1;
                let b_at = self.at(mb, virtual_stage(self.layout, self.pp, rank, chunk));
                self.b_end[b_at] = out;
            }
            (Pass::F, None) => self.f_end[at] = out,
            (Pass::B, _) => self.b_end[at] = out,
            (Pass::W, _) => {}
        }
        self.last[rank as usize] = out;
        true
    }
}

impl Program {
    /// Compiles `orders` (one per rank) for `vpp` chunks per rank; `None` if they deadlock, which
    /// only a malformed order can do.
    pub fn compile(schedule: Schedule, orders: &[Vec<Op>], vpp: u32) -> Option<Program> {
        Program::compile_as(schedule, orders, vpp, true)
    }

    /// [`Program::compile`] for drawing alone ([`Program::timeline`]): the passes left in the
    /// order they were issued, neither reordered by wavefront nor joined into runs, which only a
    /// makespan's run ([`Program::makespan`]) needs, and which take half or more of compiling
    /// (PP 16, VPP 4, as Llama 3.1 405B on 1,024 H100 runs, 256 micro-batches: 2.2 → 1.3 ms
    /// natively, 1.98 → 0.54 ms in the page's wasm; docs/pipeline.md). The same
    /// arithmetic on every pass in an order where every input still comes first, so the same
    /// events to the bit (`tests::a_program_compiled_to_draw_draws_and_runs_alike`; and
    /// `core/tests/it/schedule.rs`, whose reference timelines [`super::simulate`] draws this way).
    /// A makespan asked of it runs pass by pass.
    pub fn compile_to_draw(schedule: Schedule, orders: &[Vec<Op>], vpp: u32) -> Option<Program> {
        Program::compile_as(schedule, orders, vpp, false)
    }

    fn compile_as(schedule: Schedule, orders: &[Vec<Op>], vpp: u32, to_run: bool) -> Option<Program> {
        let pp = orders.len() as u32;
        let (layout, n_vs) = match schedule {
            Schedule::DualPipeV => (Layout::V, 2 * pp),
            _ => (Layout::Interleaved, pp * vpp),
        };
        let m = orders.iter().flatten().map(|op| op.microbatch + 1).max().unwrap_or(0) as usize;
        let slots = m * n_vs as usize;
        let mut compiler = Compiler {
            layout,
            pp,
            vpp,
            n_vs,
            f_end: vec![UNSET; slots],
            b_end: vec![UNSET; slots],
            last: vec![ZERO; orders.len()],
        };
        let total: usize = orders.iter().map(Vec::len).sum();
        let mut program = Program {
            pp,
            vpp,
            instrs: Vec::with_capacity(total),
            steps: Vec::new(),
            steps_last: Vec::new(),
            runs: Vec::new(),
            strides: Vec::new(),
            ops: Vec::with_capacity(total),
            pairs: Vec::new(),
            n_values: 1,
            last: Vec::new(),
            last_backward: Vec::new(),
        };
        let mut next = vec![0usize; orders.len()];
        while program.instrs.len() < total {
            let before = program.instrs.len();
            // One pass per rank per round, each as soon as its inputs are computed; neighbours
            // often depend on each other here, which `by_wavefront` undoes below.
            for (rank, order) in orders.iter().enumerate() {
                if let Some(op) = order.get(next[rank])
                    && compiler.issue(&mut program, rank as u32, op)
                {
                    next[rank] += 1;
                }
            }
            if program.instrs.len() == before {
                return None;
            }
        }
        program.last_backward = (0..m as u32).map(|mb| compiler.b_end[compiler.at(mb, n_vs - 1)]).collect();
        program.last = compiler.last;
        if to_run {
            program.by_wavefront();
        }
        program.compact();
        if to_run && program.is_compact() {
            program.join_runs();
        }
        Some(program)
    }

    /// Builds the compact form ([`Step`]) when it gives the same ends: when no pass is an
    /// overlapped F&B and each pass's second input is nothing or an earlier pass on its own rank (a
    /// backward's own forward). Such an input has ended by the time the rank's previous pass has
    /// (a rank's passes end in order: each starts after the one before ends, and no duration is
    /// negative), so leaving it out of the `max` changes no end, to the bit. The wide form is then
    /// dropped: a cached program keeps 40 bytes a pass (the step and its op, for drawing), not 60.
    fn compact(&mut self) {
        let mut slot = vec![0u32; self.n_values];
        let mut rank_of_slot = vec![u32::MAX; self.n_values];
        let mut steps = Vec::with_capacity(self.instrs.len());
        for (i, (ins, &(rank, _))) in self.instrs.iter().zip(&self.ops).enumerate() {
            let own_or_none = |v: u32| v == ZERO || rank_of_slot[v as usize] == rank;
            if ins.split != u32::MAX || ins.c != ZERO || !own_or_none(ins.b) || slot.len() as u32 >= SENT {
                return;
            }
            steps.push(Step {
                input: slot[ins.a as usize] | if ins.ha == 0 { 0 } else { SENT },
                prev: slot[ins.prev as usize],
                cost: ins.cost,
            });
            slot[ins.out as usize] = i as u32 + 1;
            rank_of_slot[ins.out as usize] = rank;
        }
        self.steps_last = self.last.iter().map(|&v| slot[v as usize]).collect();
        for v in &mut self.last_backward {
            *v = slot[*v as usize];
        }
        self.steps = steps;
        self.instrs = Vec::new();
    }

    /// Joins the compact form's steps into [`Run`]s: a step extends the run before it when its
    /// input and its previous pass are the slots after the last step's, arrive alike, were written
    /// before the run began, and its cost index continues the run's stride.
    fn join_runs(&mut self) {
        let n_table = 4 * (self.pp * self.vpp) as usize;
        // (first step, its step, cost stride, length) of the run being built.
        let mut runs: Vec<(usize, Step, u32, u32)> = Vec::new();
        for (k, step) in self.steps.iter().enumerate() {
            if let Some((first, head, stride, len)) = runs.last_mut() {
                let reads_done = |slot: u32| (slot as usize) <= *first;
                let follows = step.input == head.input + *len
                    && step.prev == head.prev + *len
                    && reads_done(step.input & !SENT)
                    && reads_done(step.prev);
                let cost_fits = match *len {
                    // Strides up to 4 (one kind's ranks in turn, every other one, ...), so that
                    // the strided table stays small.
                    1 => head.cost < step.cost && step.cost - head.cost <= 4,
                    _ => step.cost == head.cost + *len * *stride,
                };
                if follows && cost_fits {
                    if *len == 1 {
                        *stride = step.cost - head.cost;
                    }
                    *len += 1;
                    continue;
                }
            }
            runs.push((k, *step, 1, 1));
        }
        // Stride 1 reads the table itself; each other stride a copy of it after the table.
        let mut strides: Vec<u32> = runs.iter().map(|r| r.2).filter(|&s| 1 < s).collect();
        strides.sort_unstable();
        strides.dedup();
        self.runs = runs
            .iter()
            .map(|&(_, head, stride, len)| {
                let cost = match strides.binary_search(&stride) {
                    Ok(at) => ((1 + at) * n_table) as u32 + strided_position(n_table, stride, head.cost),
                    Err(_) => head.cost,
                };
                Run { len, input: head.input, prev: head.prev, cost }
            })
            .collect();
        self.strides = strides;
    }

    /// Reorders the passes by wavefront: each pass after every pass it waits on, passes with as
    /// long a chain of inputs behind them together. Issued rank by rank, each pass waits on the one
    /// just before it (the previous rank's forward of the same micro-batch), so a run is one long
    /// chain of dependent loads and stores; by wavefront, neighbouring passes are independent and
    /// the processor overlaps them. Every pass still comes after its inputs, each rank's passes stay
    /// in their order (each waits on the one before), and every pass's arithmetic is the same, so
    /// the makespan is the same to the bit.
    fn by_wavefront(&mut self) {
        let mut depth = vec![0u32; self.n_values];
        let depths: Vec<u32> = self
            .instrs
            .iter()
            .map(|ins| {
                let d =
                    1 + [ins.a, ins.b, ins.c, ins.prev].iter().map(|&v| depth[v as usize]).max().unwrap_or(0);
                depth[ins.out as usize] = d;
                if ins.split != u32::MAX {
                    depth[ins.out as usize + 1] = d;
                }
                d
            })
            .collect();
        // Within a wavefront, passes of one kind by virtual stage: their inputs, their ranks'
        // previous passes and their costs then lie at evenly spaced slots, which `join_runs` joins.
        // Sorted by that key, then stably by depth, each counted rather than compared (a whole
        // step's timeline compiles tens of thousands of passes on a keystroke).
        let n = (self.pp * self.vpp) as usize;
        let kind = |op: &Op| match (op.pass, op.full, op.with_backward) {
            (Pass::F, _, None) => 0,
            (Pass::F, _, Some(_)) => 1,
            (Pass::B, true, _) => 2,
            (Pass::B, false, _) => 3,
            (Pass::W, _, _) => 4,
        };
        let keys: Vec<u32> = self
            .ops
            .iter()
            .map(|(rank, op)| kind(op) * n as u32 + table_index(self.pp, *rank, op.chunk))
            .collect();
        let by_key = counting_sort(0..keys.len() as u32, &keys, 5 * n);
        let depth_max = depths.iter().max().map_or(0, |&d| d as usize + 1);
        let order = counting_sort(by_key.iter().copied(), &depths, depth_max);
        self.instrs = order.iter().map(|&i| self.instrs[i as usize]).collect();
        self.ops = order.iter().map(|&i| self.ops[i as usize]).collect();
    }

    /// The cost-table slot of an overlapped forward `f` and full backward `b` (indices of both).
    fn pair(&mut self, f: u32, b: u32) -> u32 {
        let k = match self.pairs.iter().position(|&p| p == (f, b)) {
            Some(k) => k,
            None => {
                self.pairs.push((f, b));
                self.pairs.len() - 1
            }
        };
        k as u32
    }

    /// Passes in the program.
    pub fn len(&self) -> usize {
        self.ops.len()
    }

    /// Whether the program runs no pass.
    pub fn is_empty(&self) -> bool {
        self.ops.is_empty()
    }

    /// Whether the compact form holds the passes (always, but for overlapped F&B).
    fn is_compact(&self) -> bool {
        self.instrs.is_empty()
    }

    /// The cost table for `costs`: per virtual index, the forward, the full backward (B + W), the
    /// input backward and the weight pass, then each overlapped pair's forward + full backward.
    fn costs_into(&self, costs: &Costs, table: &mut Vec<f64>) {
        let (pp, vpp) = (self.pp as usize, self.vpp as usize);
        let n = pp * vpp;
        let (f, b, w) = (costs.forward(), costs.backward(), costs.weight());
        // The lists hold each rank's chunks together; the table each chunk's ranks ([`table_index`]).
        table.clear();
        table.resize(4 * n, 0.0);
        let (tf, rest) = table.split_at_mut(n);
        let (tfull, rest) = rest.split_at_mut(n);
        let (tb, tw) = rest.split_at_mut(n);
        for (k, listed) in (0..vpp).flat_map(|c| (c..n).step_by(vpp)).enumerate().take(n) {
            (tf[k], tfull[k], tb[k], tw[k]) = (f[listed], b[listed] + w[listed], b[listed], w[listed]);
        }
        table.extend(self.pairs.iter().map(|&(fi, bi)| f[fi as usize] + (b[bi as usize] + w[bi as usize])));
    }

    /// Runs the program into `values` (each pass's end by slot: the compact form's `i`-th pass in
    /// slot `i + 1`), returning the makespan. `start_of` sees each pass's start in program order.
    fn run(
        &self,
        costs: &Costs,
        values: &mut Vec<f64>,
        table: &mut Vec<f64>,
        mut start_of: impl FnMut(f64),
    ) -> f64 {
        self.costs_into(costs, table);
        // Every slot is written before it is read (the order is topological) but the step's
        // start: no need to clear the rest.
        let n_values = if self.is_compact() { self.steps.len() + 1 } else { self.n_values };
        values.resize(values.len().max(n_values), 0.0);
        values[ZERO as usize] = 0.0;
        let hops = [0.0, costs.p2p_seconds];
        // Plain slices: through the buffers' `Vec`s, every store could move them and each pass
        // would load their addresses again.
        let (values, table) = (&mut values[..], &table[..]);
        // Cells, so that each pass's slot comes from an iterator beside its step (no bounds check
        // on the store) while the passes before it are read by index.
        let cells = Cell::from_mut(&mut values[..n_values]).as_slice_of_cells();
        for (step, out) in self.steps.iter().zip(&cells[1..]) {
            let arrived = cells[(step.input & !SENT) as usize].get() + hops[(step.input >> 31) as usize];
            let start = later(arrived, cells[step.prev as usize].get());
            start_of(start);
            out.set(start + table[step.cost as usize]);
        }
        for ins in &self.instrs {
            let start = ins.start(values, &hops);
            start_of(start);
            values[ins.out as usize] = start + table[ins.cost as usize];
            if ins.split != u32::MAX {
                values[ins.out as usize + 1] = start + table[ins.split as usize];
            }
        }
        // Each rank's passes end in order (durations are never negative), so the step ends with
        // the latest of the ranks' last passes.
        let last = if self.is_compact() { &self.steps_last } else { &self.last };
        last.iter().fold(0.0, |makespan, &slot| later(makespan, values[slot as usize]))
    }

    /// Appends to the cost table a copy of it for each stride above 1 the runs use, each residue's
    /// entries together ([`strided_position`]), so that every run's costs are consecutive.
    fn strided_costs(&self, table: &mut Vec<f64>) {
        let n = table.len();
        table.reserve(self.strides.len() * n);
        for &stride in &self.strides {
            for r in 0..stride as usize {
                for c in (r..n).step_by(stride as usize) {
                    table.push(table[c]);
                }
            }
        }
    }

    /// Runs the program into `values` as [`Program::run`] does, run by run ([`Run`]) where the
    /// compact form holds it: the same arithmetic for every pass, so the same ends to the bit.
    fn run_fast(&self, costs: &Costs, values: &mut Vec<f64>, table: &mut Vec<f64>) -> f64 {
        // The wide form, and a program compiled to draw, which has no runs.
        if !self.is_compact() || (self.runs.is_empty() && !self.steps.is_empty()) {
            return self.run(costs, values, table, |_| {});
        }
        self.costs_into(costs, table);
        self.strided_costs(table);
        let n_values = self.steps.len() + 1;
        values.resize(values.len().max(n_values), 0.0);
        values[ZERO as usize] = 0.0;
        trainplan_kernel::run(&mut values[..n_values], table, &self.runs, costs.p2p_seconds);
        self.steps_last.iter().fold(0.0, |makespan, &slot| later(makespan, values[slot as usize]))
    }

    /// The makespan against `costs` (which must have this program's pp and vpp).
    pub fn makespan(&self, costs: &Costs) -> f64 {
        SCRATCH.with(|scratch| {
            let (values, table) = &mut *scratch.borrow_mut();
            self.run_fast(costs, values, table)
        })
    }

    /// The makespan against `costs`, and what each of the last `span` micro-batches added to the
    /// end of the last virtual stage's backward (the step's last pass but for the drain behind it):
    /// in the steady state of a schedule that alternates forwards and backwards (1F1B, interleaved,
    /// ZB-H1, DualPipeV), the period each further micro-batch adds to the step; not GPipe's, whose
    /// last backwards follow each other at the backward's pace alone. `None` for the period when
    /// the program holds no more than `span` micro-batches.
    pub fn makespan_and_period(&self, costs: &Costs, span: u32) -> (f64, Option<f64>) {
        SCRATCH.with(|scratch| {
            let (values, table) = &mut *scratch.borrow_mut();
            let makespan = self.run_fast(costs, values, table);
            let ends = &self.last_backward;
            let period = (span as usize) < ends.len() && 0 < span;
            let period = period.then(|| {
                let (last, before) = (ends[ends.len() - 1], ends[ends.len() - 1 - span as usize]);
                (values[last as usize] - values[before as usize]) / f64::from(span)
            });
            (makespan, period)
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
        let mut starts = Vec::with_capacity(self.len());
        let compact = self.is_compact();
        let makespan = self.run(costs, &mut values, &mut table, |start| starts.push(start));
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
        for (i, (&(rank, op), &start)) in self.ops.iter().zip(&starts).enumerate() {
            // The compact form keeps the i-th pass's end in slot i + 1.
            let out = if compact { i + 1 } else { self.instrs[i].out as usize };
            let end = values[out];
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
                    let split = values[out + 1];
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
    /// The last program too large for [`CACHE`], so that one report's second use of it (the step's
    /// makespan, then its timeline or its advice) does not compile it again.
    static LARGE: RefCell<Option<(Key, Rc<Program>)>> = const { RefCell::new(None) };
}

/// What a program depends on, and whether it was compiled to run makespans ([`Program::compile`])
/// or to draw alone ([`Program::compile_to_draw`]).
type Key = (Schedule, u32, u32, u32, bool);

/// Programs kept: a search's plans share a few shapes, the page's edits one or two.
const CACHED_PROGRAMS: usize = 16;
/// Larger programs (some 2.5 MB and up) are not kept among them: only the last one is
/// ([`LARGE`]), dropped before the next large one is compiled, so that no two are held at once.
const CACHED_PASSES_MAX: usize = 1 << 16;

/// The compiled program of `schedule` over `pp` ranks, `vpp` chunks and `m` micro-batches (the
/// orders of [`super::orders`]), from the cache when it was compiled recently. `None` if the
/// orders deadlock.
pub fn cached(schedule: Schedule, pp: u32, vpp: u32, m: u32) -> Option<Rc<Program>> {
    kept(schedule, pp, vpp, m, true)
}

/// [`cached`] for drawing alone: a program compiled to run makespans if one is kept, else one
/// compiled to draw ([`Program::compile_to_draw`]), in half the time.
pub fn cached_to_draw(schedule: Schedule, pp: u32, vpp: u32, m: u32) -> Option<Rc<Program>> {
    kept(schedule, pp, vpp, m, false)
}

fn kept(schedule: Schedule, pp: u32, vpp: u32, m: u32, to_run: bool) -> Option<Rc<Program>> {
    // A program compiled to run also draws.
    let usable = |k: &Key| (k.0, k.1, k.2, k.3) == (schedule, pp, vpp, m) && (k.4 || !to_run);
    let hit = CACHE.with(|cache| {
        let mut cache = cache.borrow_mut();
        let at = cache.iter().position(|(k, _)| usable(k))?;
        let entry = cache.remove(at);
        let program = Rc::clone(&entry.1);
        cache.push(entry);
        Some(program)
    });
    if let Some(program) = hit {
        return Some(program);
    }
    let large =
        LARGE.with(|large| large.borrow().as_ref().filter(|(k, _)| usable(k)).map(|(_, p)| Rc::clone(p)));
    if let Some(program) = large {
        return Some(program);
    }
    // At least two passes a micro-batch and chunk on each rank: a program that will not fit the
    // cache lets the large one kept go first.
    let passes = 2 * u64::from(pp) * u64::from(vpp) * u64::from(m);
    if CACHED_PASSES_MAX as u64 <= passes {
        LARGE.with(|large| large.borrow_mut().take());
    }
    let orders = super::orders(schedule, pp, vpp, m);
    let program = Rc::new(Program::compile_as(schedule, &orders, vpp, to_run)?);
    if CACHED_PASSES_MAX < program.len() {
        LARGE.with(|large| *large.borrow_mut() = Some(((schedule, pp, vpp, m, to_run), Rc::clone(&program))));
    } else {
        CACHE.with(|cache| {
            let mut cache = cache.borrow_mut();
            // A program compiled to run replaces one of the same shape compiled to draw.
            cache.retain(|(k, _)| (k.0, k.1, k.2, k.3) != (schedule, pp, vpp, m));
            if CACHED_PROGRAMS <= cache.len() {
                cache.remove(0);
            }
            cache.push(((schedule, pp, vpp, m, to_run), Rc::clone(&program)));
        });
    }
    Some(program)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A program too large for the cache is kept alone until the next large one: asked for again
    /// (a report's makespan, then its timeline), it is the same program, not compiled twice; a
    /// second large shape takes its place.
    #[test]
    fn the_last_large_program_is_kept_alone() {
        let (a, b) = ((Schedule::OneFOneB, 256, 1, 256), (Schedule::OneFOneB, 256, 1, 512));
        let first = cached(a.0, a.1, a.2, a.3).expect("1F1B compiles");
        assert!(CACHED_PASSES_MAX < first.len());
        let again = cached_to_draw(a.0, a.1, a.2, a.3).expect("kept");
        assert!(Rc::ptr_eq(&first, &again), "compiled again");
        let other = cached(b.0, b.1, b.2, b.3).expect("1F1B compiles");
        assert!(!Rc::ptr_eq(&first, &other));
        // The first is no longer held by the cache: only this test's handles are left.
        assert_eq!(Rc::strong_count(&first), 2);
        assert!(Rc::ptr_eq(&other, &cached(b.0, b.1, b.2, b.3).expect("kept")));
    }

    /// Every schedule but DualPipeV (whose overlapped F&B waits on two inputs and ends twice) runs
    /// in the compact form, so the comparison of the makespan with the timeline
    /// (`core/tests/it/schedule.rs`) checks that form; DualPipeV keeps the wide one.
    #[test]
    fn every_schedule_without_overlap_runs_compact() {
        for (schedule, vpp) in [
            (Schedule::GPipe, 1),
            (Schedule::OneFOneB, 1),
            (Schedule::Interleaved, 3),
            (Schedule::ZbH1, 1),
            (Schedule::DualPipeV, 2),
        ] {
            let program = cached(schedule, 4, vpp, 8).expect("no deadlock");
            assert_eq!(program.is_compact(), schedule != Schedule::DualPipeV, "{schedule:?}");
            let (compact, wide) = (program.steps.len(), program.instrs.len());
            assert_eq!(compact + wide, program.len(), "{schedule:?}: one form holds every pass");
        }
    }

    /// A program compiled to draw gives every event a program compiled to run gives, to the bit
    /// (f64 equality on every start and end), and the same makespan run pass by pass; the cache
    /// hands a program compiled to run to a drawing, and replaces one compiled to draw when a
    /// makespan asks for its shape.
    #[test]
    fn a_program_compiled_to_draw_draws_and_runs_alike() {
        for (schedule, pp, vpp, m) in [
            (Schedule::OneFOneB, 8, 1, 24),
            (Schedule::Interleaved, 4, 3, 8),
            (Schedule::ZbH1, 6, 1, 18),
            (Schedule::GPipe, 5, 1, 10),
            (Schedule::DualPipeV, 4, 2, 8),
        ] {
            let n = (pp * vpp) as usize;
            // Uneven costs, so that no two passes end alike by accident.
            let cost =
                |scale: f64| (0..n).map(|i| scale * (1.0 + (i % 3) as f64 * 0.37)).collect::<Vec<f64>>();
            let costs = Costs::new(pp, vpp, &cost(1.0), &cost(1.9), &cost(0.6), 0.05);
            let orders = super::super::orders(schedule, pp, vpp, m);
            let to_run = Program::compile(schedule, &orders, vpp).expect("no deadlock");
            let to_draw = Program::compile_to_draw(schedule, &orders, vpp).expect("no deadlock");
            assert!(to_draw.runs.is_empty(), "{schedule:?}");
            let (ran, drawn) = (to_run.timeline(&costs), to_draw.timeline(&costs));
            assert_eq!(ran.events, drawn.events, "{schedule:?}");
            assert_eq!(ran.makespan_seconds.to_bits(), drawn.makespan_seconds.to_bits(), "{schedule:?}");
            assert_eq!(to_run.makespan(&costs).to_bits(), to_draw.makespan(&costs).to_bits(), "{schedule:?}");
        }
        let shape = (Schedule::OneFOneB, 7, 1, 29);
        let drawing = cached_to_draw(shape.0, shape.1, shape.2, shape.3).expect("no deadlock");
        assert!(drawing.runs.is_empty());
        let running = cached(shape.0, shape.1, shape.2, shape.3).expect("no deadlock");
        assert!(!running.runs.is_empty());
        let drawing_again = cached_to_draw(shape.0, shape.1, shape.2, shape.3).expect("no deadlock");
        assert!(Rc::ptr_eq(&running, &drawing_again), "a drawing takes the program compiled to run");
    }

    /// The runs hold every step of the compact form once, in order, each step's input and previous
    /// pass where its run says, every run reading only slots written before it starts; a deep
    /// 1F1B pipeline's wavefronts join into runs of dozens of passes (half its ranks each).
    #[test]
    fn runs_hold_every_step_and_read_only_what_is_written() {
        for (schedule, pp, vpp, m) in
            [(Schedule::OneFOneB, 64, 1, 192), (Schedule::Interleaved, 8, 3, 24), (Schedule::ZbH1, 6, 1, 18)]
        {
            let program = cached(schedule, pp, vpp, m).expect("no deadlock");
            let mut written = 1;
            for run in &program.runs {
                for t in 0..run.len {
                    let step = program.steps[written - 1 + t as usize];
                    assert_eq!((step.input, step.prev), (run.input + t, run.prev + t), "{schedule:?}");
                }
                let (input, len) = ((run.input & !SENT) as usize, run.len as usize);
                assert!(input + len <= written && run.prev as usize + len <= written, "{schedule:?}");
                written += len;
            }
            assert_eq!(written, program.steps.len() + 1, "{schedule:?}");
        }
        let deep = cached(Schedule::OneFOneB, 64, 1, 192).expect("no deadlock");
        assert!(12 * deep.runs.len() <= deep.steps.len(), "{} runs", deep.runs.len());
    }
}
