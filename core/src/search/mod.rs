//! The fastest plan that fits: an exhaustive walk over the parallel layout, the memory knobs and
//! the micro-batch, keeping what is trained (model, method, global batch, sequence, precision) and
//! the cluster as the user set them. Memory is checked first and the framework's rules second, so
//! the step-time simulation runs only for plans that fit and that the framework accepts.
//!
//! The walk over the knobs is `space.rs` (each plan as the knobs it sets: `settings.rs`); the two
//! passes over it, memory and rules then step time, are [`Search`]. The rules are checked for their
//! verdict alone ([`rules::errors`]), no message or fix worked out.
//!
//! A search can run in parts ([`Search::part`], one per Web Worker in the page, four per thread on
//! the command line: [`search_on_threads`]) whose results [`merge`] into exactly the whole search's
//! (`parts.rs`); `core/tests/it/search.rs` checks both the pruning and the merge against
//! evaluating every plan.

use serde::{Deserialize, Serialize};

use crate::plan::Plan;
use crate::report::{Code, Fix, Severity};
use crate::{memory, rules, time};
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering::Relaxed};

/// A plan the search found, as changes to the plan it started from.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Candidate {
    /// Plan-file changes, in an order `rules::apply` accepts one by one.
    pub changes: Vec<Fix>,
    /// Peak memory per device, bytes.
    pub peak_bytes: u64,
    /// Usable memory left free at the peak, bytes: the margin beyond the one the plan keeps
    /// (`overheads.allocator_reserve`). A plan with little to spare ranks by speed like any other,
    /// but the page shows how little.
    pub headroom_bytes: u64,
    /// Step time, seconds.
    pub step_seconds: f64,
    /// Tokens per second, whole cluster.
    pub tokens_per_second: f64,
    /// Model FLOPs utilization.
    pub mfu_frac: f64,
}

/// What the search did and found.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SearchResult {
    /// Plans in the space.
    pub considered: u64,
    /// Of those, plans known not to fit without evaluating them: the same layout and knobs did not
    /// fit with a smaller micro-batch, and the global batch is a whole number of this micro-batch
    /// × DP (the peak then never falls as the micro-batch grows).
    pub pruned: u64,
    /// Plans that fit in memory.
    pub fit: u64,
    /// Plans that fit and break no framework rule.
    pub feasible: u64,
    /// Of those, plans whose schedule was simulated; the others provably could not rank.
    pub simulated: u64,
    /// The fastest feasible plans, fastest first, at most [`TOP`].
    pub best: Vec<Candidate>,
    /// The feasible plans no other beats in both memory and speed, least memory first.
    pub pareto: Vec<Candidate>,
    /// The framework's rules the plans that fit broke, most often broken first: why a search that
    /// found plans that fit found none that runs.
    pub blocked: Vec<Blocking>,
}

/// A rule that plans which fit broke.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Blocking {
    /// The rule.
    pub code: Code,
    /// How many plans that fit broke it.
    pub plans: u64,
    /// The first of them in the space, as changes to the plan searched from (so its finding can be
    /// shown with its values).
    pub changes: Vec<Fix>,
}

/// A rule plans of one part of a search broke: its code, how many plans that fit broke it, and the
/// first of them's place in the whole space.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Blocked {
    /// The rule.
    pub code: Code,
    /// Plans that fit and broke it.
    pub plans: u64,
    /// The first such plan's place in the whole space.
    pub first: u64,
}

/// How many of the fastest plans [`search`] returns.
pub const TOP: usize = 10;

mod parts;
mod settings;
mod space;

pub use parts::merge;
use parts::{Share, assemble, fastest, in_space_order, pareto, space_in_parts};
use settings::Knobs;
use space::{Plans, space, walk_space};

/// Searches the plan's space: the fastest plans that fit and keep every framework rule.
pub fn search(plan: &Plan) -> SearchResult {
    let mut search = Search::new(plan);
    while !search.step(usize::MAX) {}
    search.finish()
}

/// [`search`] on `threads` threads (the command line; a page runs its parts in Web Workers): the
/// space cut into parts ([`Search::part`]), four per thread so that no thread waits long on a
/// slower share, each thread taking the next part left, and the parts [`merge`]d. The parts share
/// the tenth fastest step any of them has found, a bound as sound as a part's own (ten plans are
/// faster either way). The same plans as [`search`]; `simulated` differs (each part prunes by its
/// own fastest plans and by what the others found so far) and varies between runs. On one
/// thread, or where there are no threads (wasm), it is [`search`].
pub fn search_on_threads(plan: &Plan, threads: usize) -> SearchResult {
    if threads <= 1 || cfg!(target_arch = "wasm32") {
        return search(plan);
    }
    let threads = threads.min(64);
    let parts = u32::try_from(4 * threads).unwrap_or(u32::MAX);
    let (all, shares) = space_in_parts(plan, parts);
    let next = AtomicU32::new(0);
    let tenth = Arc::new(AtomicU64::new(f64::INFINITY.to_bits()));
    let partials: Vec<Partial> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads)
            .map(|_| {
                let (all, shares, next, tenth) = (&all, &shares, &next, &tenth);
                scope.spawn(move || {
                    let mut done = Vec::new();
                    loop {
                        let part = next.fetch_add(1, Relaxed);
                        if parts <= part {
                            break done;
                        }
                        let places = shares[part as usize].clone();
                        let knobs = places.iter().map(|&i| all[i as usize]).collect();
                        let mut search = Search::of(plan, knobs, places, all.len() as u64);
                        search.shared_tenth = Some(tenth.clone());
                        while !search.step(usize::MAX) {}
                        done.push(search.finish_part());
                    }
                })
            })
            .collect();
        // A part's panic is a bug; it surfaces here as it would have on one thread.
        let joined = handles.into_iter().map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)));
        joined.flatten().collect()
    });
    // `assemble` puts the found plans back in space order, whichever thread ran which part.
    assemble(plan, &partials, |index| all[index as usize])
}

/// [`search`] evaluating every plan, pruning none: the reference the pruned search must equal.
pub fn search_unpruned(plan: &Plan) -> SearchResult {
    let mut search = Search::new(plan);
    search.prune = false;
    while !search.step(usize::MAX) {}
    search.finish()
}

/// A search that runs a slice at a time, so that a page can show progress and stay responsive:
/// call [`Search::step`] until it returns `true`, then [`Search::finish`].
pub struct Search {
    prune: bool,
    base: Knobs,
    space: Plans,
    /// Plans in the whole space.
    whole: u64,
    /// Each plan's place in the whole space (a part holds a share of it, [`Search::part`]).
    places: Vec<u32>,
    work: Plan,
    facts: memory::ModelFacts,
    /// Pass 1's position in `space`.
    next: usize,
    /// The last plan that did not fit.
    unfit: Option<(Knobs, u64)>,
    fit: u64,
    feasible: u64,
    pruned: u64,
    /// Plans that fit and keep every rule, waiting for pass 2.
    kept: Vec<Kept>,
    /// Pass 2's order of `kept`: least peak memory first, then space order (set when it starts).
    order: Vec<u32>,
    /// Pass 2's position in `order`; `None` during pass 1.
    timed: Option<usize>,
    simulated: u64,
    fastest_step: f64,
    top_steps: Vec<f64>,
    /// The tenth fastest step any part running beside this one has found (as `f64` bits; positive
    /// floats order as their bits), when parts run at once ([`search_on_threads`]).
    shared_tenth: Option<Arc<AtomicU64>>,
    found: Vec<Found>,
    /// Each rule plans that fit broke: its code, how many, the first's place, and the last plan
    /// counted (a plan counts once per rule however many findings it has of it).
    blocked: Vec<(Code, u64, u32, usize)>,
    /// Whether the plan trains with RL (and the space walks the rollout's settings).
    rl: bool,
    /// Pass 1's last memory (with RL, of each micro-batch) and the knobs it is of, the rollout's
    /// left out ([`memorize`]).
    memo: [Option<(Knobs, memory::Memory)>; MEMO_SLOTS],
}

/// Micro-batches whose memory [`memorize`] keeps at once: the space's are powers of two to 64.
const MEMO_SLOTS: usize = 8;

/// Works out the memory of `plan`, the search's working plan set to `knobs`, into `memo` and says
/// where it is kept. The space walks the rollout's settings just outside the micro-batch, so with RL
/// (`rl`) a training layout comes back once for every rollout setting a few plans later (as many as
/// it has micro-batches): its memory is kept per micro-batch and only the rollout engine's part is
/// worked out again ([`memory::set_rollout`]). A plan that differs from a kept one only in the
/// micro-batch takes the bytes the micro-batch does not change from it
/// ([`memory::estimate_rebatched`]). Neither shortcut when evaluating every plan in full (`prune`
/// off: [`search_unpruned`], which tests this against).
fn memorize(
    memo: &mut [Option<(Knobs, memory::Memory)>; MEMO_SLOTS],
    knobs: Knobs,
    plan: &crate::knobs::Effective,
    facts: &memory::ModelFacts,
    (prune, rl): (bool, bool),
) -> usize {
    let (training, at) = match rl {
        true => (
            Knobs { rollout_tp: 0, rollout_ep: 0, ..knobs },
            knobs.micro_batch.trailing_zeros() as usize % MEMO_SLOTS,
        ),
        false => (knobs, 0),
    };
    match &mut memo[at] {
        Some((key, mem)) if prune && rl && *key == training => memory::set_rollout(mem, plan, facts),
        _ => {
            // The micro-batch is walked innermost: the plan before (kept in its own slot with RL)
            // most often differs from this one in it alone.
            let same_but_micro_batch = |(key, _): &&(Knobs, memory::Memory)| {
                Knobs { micro_batch: training.micro_batch, ..*key } == training
            };
            let mem = match memo.iter().flatten().find(same_but_micro_batch) {
                Some((_, base)) if prune => memory::estimate_rebatched(plan, facts, base),
                _ => memory::estimate_with(plan, facts),
            };
            memo[at] = Some((training, mem));
        }
    }
    at
}

/// A plan pass 1 kept for pass 2: its place in `space`, [`time::layer_bound_seconds`] and its
/// memory's figures.
#[derive(Clone, Copy, Debug)]
struct Kept {
    at: usize,
    layer_bound_seconds: f64,
    peak_bytes: u64,
    usable_bytes: u64,
}

/// A plan one part of a search found: its place in the whole space and its figures.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Found {
    /// Index into the search's whole space.
    pub index: u64,
    /// Peak memory per device, bytes.
    pub peak_bytes: u64,
    /// Usable memory left free at the peak, bytes.
    pub headroom_bytes: u64,
    /// Step time, seconds.
    pub step_seconds: f64,
    /// Tokens per second, whole cluster.
    pub tokens_per_second: f64,
    /// Model FLOPs utilization.
    pub mfu_frac: f64,
}

/// What one part of a search found ([`Search::part`]): its counts, and the plans that can still be
/// among the fastest or on the Pareto front once the parts are merged ([`merge`]). Plain data, so a
/// part can run in a Web Worker and send it back as JSON.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Partial {
    /// Plans in this part.
    pub considered: u64,
    /// Plans pruned unevaluated.
    pub pruned: u64,
    /// Plans that fit.
    pub fit: u64,
    /// Plans that fit and keep every rule.
    pub feasible: u64,
    /// Plans whose step time was estimated.
    pub simulated: u64,
    /// This part's fastest [`TOP`] and its Pareto front, in space order.
    pub found: Vec<Found>,
    /// The rules its plans that fit broke.
    pub blocked: Vec<Blocked>,
    /// Plans in the whole space (each part walks all of it to find its share).
    pub space: u64,
    /// The settings of the plans it names (its found plans, each broken rule's first), by place
    /// and ascending, so that [`merge`] need not walk the space again: in a page, that walk held
    /// the page's own thread up for 0.1 s after an MoE RL search (656,392 plans).
    settings: Vec<(u64, Knobs)>,
}

impl Partial {
    /// The places of the plans it names: its found plans, then each broken rule's first.
    fn named(&self) -> impl Iterator<Item = u64> + '_ {
        self.found.iter().map(|f| f.index).chain(self.blocked.iter().map(|b| b.first))
    }
}

impl Search {
    /// A search from `plan`; nothing is evaluated yet.
    pub fn new(plan: &Plan) -> Search {
        Search::part(plan, 0, 1)
    }

    /// Part `part` of `parts` of the search from `plan`: its share of the runs of plans that differ
    /// only in the micro-batch and the rollout's settings (so a part prunes as the whole search
    /// would, and works each training layout's memory out once), spread over the space so that the
    /// parts share alike in the plans that fit, which cost the most. Run every part (in any order,
    /// anywhere) and [`merge`] them: the result is the whole search's.
    pub fn part(plan: &Plan, part: u32, parts: u32) -> Search {
        match parts {
            // The whole space, moved rather than copied (3 M plans of an MoE RL search are 150 MB).
            0 | 1 => {
                let all = space(plan);
                let places = (0..all.len() as u32).collect();
                let whole = all.len() as u64;
                Search::of(plan, all, places, whole)
            }
            // Only this part's share is kept, the space walked once.
            _ => {
                let (mut share, mut knobs, mut places) =
                    (Share::new(part, parts), Plans::default(), Vec::new());
                let mut whole = 0;
                walk_space(plan, &mut |k, starts| {
                    if let Some(place) = share.place_of(starts) {
                        knobs.push(k);
                        places.push(place);
                    }
                    whole += 1;
                });
                Search::of(plan, knobs, places, whole)
            }
        }
    }

    /// A search of the plans `space` from `plan`, at `places` in the whole space.
    fn of(plan: &Plan, space: Plans, places: Vec<u32>, whole: u64) -> Search {
        Search {
            prune: true,
            base: Knobs::of(plan),
            space,
            whole,
            places,
            work: plan.clone(),
            // The search changes no model, method or LoRA setting: count the model once.
            facts: memory::ModelFacts::of(plan),
            next: 0,
            unfit: None,
            fit: 0,
            feasible: 0,
            pruned: 0,
            kept: Vec::new(),
            order: Vec::new(),
            timed: None,
            simulated: 0,
            fastest_step: f64::INFINITY,
            top_steps: Vec::new(),
            shared_tenth: None,
            found: Vec::new(),
            blocked: Vec::new(),
            rl: matches!(plan.method, crate::plan::Method::Grpo | crate::plan::Method::Ppo),
            memo: Default::default(),
        }
    }

    /// Work done and all the work, in plans: each plan counts once in pass 1 (memory and rules)
    /// and once more in pass 2 (step time) if it gets there.
    pub fn progress(&self) -> (u64, u64) {
        let total = self.space.len() + self.kept.len();
        let done = self.next + self.timed.unwrap_or(0);
        (done as u64, total as u64)
    }

    /// Evaluates up to `budget` plans; `true` when the search is complete.
    pub fn step(&mut self, budget: usize) -> bool {
        let mut budget = budget.max(1);
        // Pass 1: memory, then the rules. Keeps the plans that fit and keep every rule.
        while self.next < self.space.len() {
            if budget == 0 {
                return false;
            }
            budget -= 1;
            let knobs = self.space[self.next];
            self.next += 1;
            // The space lists micro-batches in ascending order last, so a plan that differs from
            // the last unfit one (of DP `dp`) only by a larger micro-batch cannot fit either, as
            // long as the step's samples (the global batch, with RL every response) are a whole
            // number of its micro-batch × DP (so of the smaller one's too): both then hold the same
            // samples per step, a larger share of them in flight. Where the micro-batches per step
            // round down (a plan the batch rule refuses), fewer samples may be in flight, and a
            // larger micro-batch can fit (Qwen2.5-7B on 8 H100, PP 4 VPP 2, global batch 48, DP 2:
            // micro-batch 8 runs 3 micro-batches and does not fit, micro-batch 16 runs 1 and does),
            // so it is evaluated.
            let samples = memory::step_samples(&self.work);
            let larger_than_unfit = self.unfit.is_some_and(|(u, dp)| {
                u.micro_batch < knobs.micro_batch
                    && Knobs { micro_batch: knobs.micro_batch, ..u } == knobs
                    && samples.is_multiple_of(u64::from(knobs.micro_batch) * dp)
            });
            if self.prune && larger_than_unfit {
                self.pruned += 1;
                continue;
            }
            knobs.set(&mut self.work);
            // The plan as its framework runs it, made once for its memory and its bound.
            let plan = crate::knobs::effective(&self.work);
            let at = memorize(&mut self.memo, knobs, &plan, &self.facts, (self.prune, self.rl));
            let Some((_, mem)) = &self.memo[at] else { unreachable!("memorize keeps it") };
            if mem.usable_bytes < mem.peak_bytes {
                self.unfit = Some((knobs, mem.dp));
                continue;
            }
            let errors = rules::errors(&self.work, mem);
            // Only its figures are kept: pass 2 works the memory out again for the few plans its
            // bound does not stop, rather than holding every plan's stages until then.
            let kept = errors.is_empty().then(|| Kept {
                at: self.next - 1,
                layer_bound_seconds: time::layer_bound_seconds(&plan, mem),
                peak_bytes: mem.peak_bytes,
                usable_bytes: mem.usable_bytes,
            });
            drop(plan);
            self.fit += 1;
            if self.breaks_a_rule(self.next - 1, &errors) {
                continue;
            }
            self.feasible += 1;
            self.kept.extend(kept);
        }
        // Pass 2: step time, least memory first. A plan whose step provably takes longer than both
        // the tenth fastest so far and the fastest plan with no more memory can be neither among
        // the fastest nor on the Pareto front, so its schedule is not simulated.
        let start = match self.timed {
            Some(i) => i,
            None => {
                // Indices sorted rather than the plans' memory moved about, by keys gathered
                // first: reading each plan's memory per comparison wandered over all of it.
                let mut keyed: Vec<(u64, u32)> =
                    self.kept.iter().enumerate().map(|(k, kept)| (kept.peak_bytes, k as u32)).collect();
                keyed.sort_unstable();
                self.order = keyed.into_iter().map(|(_, k)| k).collect();
                0
            }
        };
        let mut i = start;
        while i < self.order.len() {
            if budget == 0 {
                self.timed = Some(i);
                return false;
            }
            budget -= 1;
            let k = self.order[i] as usize;
            let Kept { at, layer_bound_seconds, peak_bytes, usable_bytes } = self.kept[k];
            i += 1;
            let own_tenth = if self.top_steps.len() < TOP { f64::INFINITY } else { self.top_steps[TOP - 1] };
            // Ten plans found by another part are as many as ten of this part's: a plan slower than
            // them is not among the fastest either.
            let others =
                self.shared_tenth.as_ref().map_or(f64::INFINITY, |t| f64::from_bits(t.load(Relaxed)));
            let tenth = own_tenth.min(others);
            // Strictly slower than the tenth can be dropped; a tie with the fastest leaves the front too.
            let limit = self.prune.then(|| self.fastest_step.max(tenth)).filter(|l| l.is_finite());
            // `estimate_within`'s first bound, worked out in pass 1: most plans stop here, before
            // the plan is set up again (70B on 1,024 H100: 33,554 plans reach pass 2).
            if limit.is_some_and(|limit| time::rules_out(limit, layer_bound_seconds)) {
                continue;
            }
            self.space[at].set(&mut self.work);
            let plan = crate::knobs::effective(&self.work);
            let mem = memory::estimate_with(&plan, &self.facts);
            let Some(t) = time::estimate_within(&plan, &mem, limit) else { continue };
            self.simulated += 1;
            if !t.tokens_per_second.is_finite() {
                continue;
            }
            self.fastest_step = self.fastest_step.min(t.step_seconds);
            let rank = self.top_steps.partition_point(|s| *s <= t.step_seconds);
            self.top_steps.insert(rank, t.step_seconds);
            self.top_steps.truncate(TOP);
            if let (Some(shared), Some(tenth)) = (&self.shared_tenth, self.top_steps.get(TOP - 1)) {
                shared.fetch_min(tenth.to_bits(), Relaxed);
            }
            self.found.push(Found {
                index: u64::from(self.places[at]),
                peak_bytes,
                headroom_bytes: usable_bytes.saturating_sub(peak_bytes),
                step_seconds: t.step_seconds,
                tokens_per_second: t.tokens_per_second,
                mfu_frac: t.mfu_frac,
            });
        }
        self.timed = Some(i);
        true
    }

    /// Whether the plan that fits at `at` breaks a rule (an error among its `findings`); each rule it
    /// breaks counts it once in `blocked`.
    fn breaks_a_rule(&mut self, at: usize, findings: &[crate::report::Finding]) -> bool {
        let mut broken = false;
        for f in findings.iter().filter(|f| f.severity == Severity::Error) {
            broken = true;
            match self.blocked.iter_mut().find(|b| b.0 == f.code) {
                Some(b) if b.3 == at => {}
                Some(b) => (b.1, b.3) = (b.1 + 1, at),
                None => self.blocked.push((f.code, 1, self.places[at], at)),
            }
        }
        broken
    }

    /// This part's result, to [`merge`] with the other parts'; plans not yet evaluated (if
    /// [`Search::step`] has not finished) are left out.
    pub fn finish_part(mut self) -> Partial {
        self.partial()
    }

    /// [`Search::finish_part`], leaving the space to look the found plans up in.
    fn partial(&mut self) -> Partial {
        // Only a part's own fastest TOP can be among the merged fastest, and only a plan on its own
        // front can be on the merged front (a plan beaten within its part is beaten overall).
        let mut found = std::mem::take(&mut self.found);
        in_space_order(&mut found);
        let best = fastest(&found);
        let front = pareto(&found);
        found.retain(|f| best.contains(&f.index) || front.contains(&f.index));
        let mut res = Partial {
            considered: self.space.len() as u64,
            pruned: self.pruned,
            fit: self.fit,
            feasible: self.feasible,
            simulated: self.simulated,
            found,
            blocked: self
                .blocked
                .iter()
                .map(|&(code, plans, first, _)| Blocked { code, plans, first: u64::from(first) })
                .collect(),
            space: self.whole,
            settings: Vec::new(),
        };
        let mut named: Vec<u64> = res.named().collect();
        crate::sort::sort_by(&mut named, u64::cmp);
        named.dedup();
        res.settings = named.into_iter().map(|index| (index, self.knobs_at(index))).collect();
        res
    }

    /// The settings of the plan at `index` in the whole space, one of this search's.
    fn knobs_at(&self, index: u64) -> Knobs {
        // Places ascend.
        self.space[self.places.partition_point(|&p| u64::from(p) < index)]
    }

    /// The result; plans not yet evaluated (if [`Search::step`] has not finished) are left out.
    pub fn finish(mut self) -> SearchResult {
        let mut plan = self.work.clone();
        self.base.set(&mut plan);
        let partial = self.partial();
        assemble(&plan, &[partial], |index| self.knobs_at(index))
    }
}
