//! The search split into parts, with no browser in sight: what a search worker runs
//! ([`run_part`]), the messages it sends back ([`Reply`], JSON text), and how the page gathers the
//! parts' progress and results into the whole search's result ([`Gather`]). The page's in-page
//! search (where no worker can start) goes through the same [`Gather`], as one part.
//!
//! The core guarantees the merge: `search::merge` of every part equals the whole
//! search (`core/tests/it/search.rs`).

use serde::{Deserialize, Serialize};
use trainplan_core::search::{self, Partial, Search, SearchResult};
use trainplan_core::{Plan, permalink};

/// The most workers a search starts: past this the parts are small and the workers' start-up (one
/// wasm instance each) outweighs the work they share.
pub const MAX_WORKERS: u32 = 16;
/// Plans evaluated between two checks of the clock.
pub const SLICE: usize = 32;
/// Milliseconds between two progress messages of a worker: about three frames, so the bar moves
/// smoothly while the page's thread spends next to nothing on the messages.
pub const PROGRESS_MS: f64 = 50.0;

/// How many workers to start for a browser that reports `hardware_concurrency` logical cores
/// (`navigator.hardwareConcurrency`, <https://developer.mozilla.org/en-US/docs/Web/API/Navigator/hardwareConcurrency>):
/// one per core, at least 1 and at most [`MAX_WORKERS`]. A value the browser leaves out or
/// garbles counts as 1.
pub fn worker_count(hardware_concurrency: f64) -> u32 {
    match hardware_concurrency.is_finite() {
        true => hardware_concurrency.clamp(1.0, f64::from(MAX_WORKERS)) as u32,
        false => 1,
    }
}

/// The plan as the text a worker reads: the permalink's JSON (the plan file without its defaults),
/// which `Plan::from_json` reads back as the same plan (the permalink's round trip is a property
/// test of the core).
pub fn plan_text(plan: &Plan) -> String {
    permalink::compact_json(&plan.to_file())
}

/// A message from a search worker to the page, as JSON text: `{"progress": {…}}`, `{"part": {…}}` or
/// `{"failed": {"message": …}}`. Externally tagged (serde's default), which reads without buffering
/// the message first as an internally tagged enum would: less code in the wasm.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Reply {
    /// Plans evaluated so far, of all the work the part knows of now.
    Progress {
        /// Work done, in plans.
        done: u64,
        /// All the work, in plans; it grows when plans reach the second pass.
        total: u64,
    },
    /// The part is done.
    Part {
        /// The plan the worker searched, written back as [`plan_text`]: the page checks that it reads
        /// as its own plan.
        plan: String,
        /// What the part found.
        partial: Partial,
    },
    /// The worker could not run its part: the wasm did not load, or the plan did not read.
    Failed {
        /// Why, for the console.
        message: String,
    },
}

impl Reply {
    /// The message as the JSON text a worker posts.
    pub fn to_text(&self) -> String {
        serde_json::to_string(self).expect("a reply is plain data")
    }
}

/// Runs part `part` of `parts` of the search from the plan `plan_text` to the end, posting a
/// [`Reply::Progress`] at most every [`PROGRESS_MS`] by `now`, then the [`Reply::Part`] (or a
/// [`Reply::Failed`] if the plan does not read). A worker runs it in one go: the page stops a
/// worker by terminating it.
pub fn run_part(plan_text: &str, part: u32, parts: u32, now: impl Fn() -> f64, mut post: impl FnMut(String)) {
    let plan = match Plan::from_json(plan_text) {
        Ok(plan) => plan,
        Err(err) => return post(Reply::Failed { message: err.to_string() }.to_text()),
    };
    let mut search = Search::part(&plan, part, parts);
    let mut last = now();
    while !search.step(SLICE) {
        let at = now();
        if PROGRESS_MS <= at - last {
            last = at;
            let (done, total) = search.progress();
            post(Reply::Progress { done, total }.to_text());
        }
    }
    post(Reply::Part { plan: self::plan_text(&plan), partial: search.finish_part() }.to_text());
}

/// The parts of one search as they come in: each part's progress and, once done, its result.
#[derive(Clone, Debug)]
pub struct Gather {
    fractions: Vec<f64>,
    partials: Vec<Option<Partial>>,
}

impl Gather {
    /// Nothing in yet from any of `parts` parts.
    pub fn new(parts: u32) -> Gather {
        let parts = parts.max(1) as usize;
        Gather { fractions: vec![0.0; parts], partials: vec![None; parts] }
    }

    /// How many parts the search is split into.
    pub fn parts(&self) -> u32 {
        self.partials.len() as u32
    }

    /// Part `part` has done `done` of `total` plans.
    pub fn progress(&mut self, part: u32, done: u64, total: u64) {
        if let Some(f) = self.fractions.get_mut(part as usize) {
            *f = (done as f64 / total.max(1) as f64).clamp(0.0, 1.0);
        }
    }

    /// The share of the whole search done, 0 to 1. The parts are near-equal shares of the space
    /// (`Search::part`), so each counts for one part's worth; a part not heard from counts as not
    /// started.
    pub fn fraction(&self) -> f64 {
        self.fractions.iter().sum::<f64>() / self.fractions.len() as f64
    }

    /// Part `part` finished with `partial`. `Ok(true)` once every part is in.
    ///
    /// # Errors
    ///
    /// When the part's number is not one of this search's, or it came in twice.
    pub fn finish(&mut self, part: u32, partial: Partial) -> Result<bool, String> {
        let slot = self.partials.get_mut(part as usize).ok_or(format!("no part {part}"))?;
        if slot.is_some() {
            return Err(format!("part {part} came in twice"));
        }
        *slot = Some(partial);
        self.fractions[part as usize] = 1.0;
        Ok(self.partials.iter().all(Option::is_some))
    }

    /// A worker's [`Reply::Part`] for part `part`: its plan must read as `plan`, the one the page
    /// searches from, or the part belongs to another search. `Ok(true)` once every part is in.
    ///
    /// # Errors
    ///
    /// When the worker searched another plan, or [`Gather::finish`] refuses the part.
    pub fn receive(
        &mut self,
        part: u32,
        worker_plan: &str,
        partial: Partial,
        plan: &Plan,
    ) -> Result<bool, String> {
        let theirs = Plan::from_json(worker_plan).map_err(|err| format!("part {part}'s plan: {err}"))?;
        if theirs != *plan {
            return Err(format!("part {part} searched another plan"));
        }
        self.finish(part, partial)
    }

    /// The whole search's result from every part, in part order.
    ///
    /// # Errors
    ///
    /// When a part is missing, or the parts are not the whole of this plan's search (`search::merge`).
    pub fn merge(&self, plan: &Plan) -> Result<SearchResult, String> {
        let partials: Option<Vec<Partial>> = self.partials.iter().cloned().collect();
        let partials = partials.ok_or("a part is missing")?;
        search::merge(plan, &partials)
    }
}

#[cfg(test)]
mod tests {
    use std::cell::Cell;

    use super::*;

    /// Megatron-LM pretraining of a 7B model on 2 × 8 H100: a space of a few thousand plans, quick natively.
    const PLAN: &str = r#"{"model": "qwen2.5-7b", "framework": "megatron", "method": "pretrain",
        "cluster": {"nodes": 2}, "batch": {"global_batch": 64}}"#;

    fn plan() -> Plan {
        Plan::from_json(PLAN).unwrap()
    }

    /// Runs every part as a worker would, with a clock that advances [`PROGRESS_MS`] at each look, and gathers
    /// the replies as the page does.
    fn run_all(plan: &Plan, parts: u32) -> (Gather, Vec<Reply>) {
        let mut gather = Gather::new(parts);
        let mut progress = Vec::new();
        for part in 0..parts {
            let clock = Cell::new(0.0);
            let now = || {
                clock.set(clock.get() + PROGRESS_MS);
                clock.get()
            };
            let mut replies = Vec::new();
            run_part(&plan_text(plan), part, parts, now, |text| replies.push(text));
            for text in replies {
                match serde_json::from_str::<Reply>(&text).unwrap() {
                    Reply::Part { plan: theirs, partial } => {
                        let all_in = gather.receive(part, &theirs, partial, plan).unwrap();
                        assert_eq!(all_in, part + 1 == parts);
                    }
                    reply => progress.push(reply),
                }
            }
        }
        (gather, progress)
    }

    #[test]
    fn worker_counts_follow_the_cores_within_bounds() {
        assert_eq!(worker_count(8.0), 8);
        assert_eq!(worker_count(2.0), 2);
        assert_eq!(worker_count(1.0), 1);
        assert_eq!(worker_count(0.0), 1);
        assert_eq!(worker_count(-3.0), 1);
        assert_eq!(worker_count(128.0), MAX_WORKERS);
        assert_eq!(worker_count(f64::NAN), 1);
        assert_eq!(worker_count(f64::INFINITY), 1);
    }

    #[test]
    fn the_plan_text_reads_back_as_the_plan() {
        let p = plan();
        assert_eq!(Plan::from_json(&plan_text(&p)).unwrap(), p);
        // An imported config and a custom device with fractional figures travel whole.
        let imported = Plan::from_json(
            r#"{"model": {"hf_config": {"model_type": "qwen2", "vocab_size": 151936, "hidden_size": 896,
                "intermediate_size": 4864, "num_hidden_layers": 24, "num_attention_heads": 14,
                "num_key_value_heads": 2, "tie_word_embeddings": true}, "name": "mine"},
                "hardware": {"custom": {"name": "lab-npu", "memory_gb": 63.7, "bf16_tflops": 312.3,
                "memory_tb_per_s": 1.93, "intra_node_gb_per_s": 392.5, "inter_node_gbit_per_s": 200.1}}}"#,
        )
        .unwrap();
        assert_eq!(Plan::from_json(&plan_text(&imported)).unwrap(), imported);
    }

    #[test]
    fn parts_run_as_workers_merge_into_the_whole_search() {
        let p = plan();
        let whole = search::search(&p);
        assert!(!whole.best.is_empty(), "the test plan must find plans");
        for parts in [1, 3, 8] {
            let (gather, progress) = run_all(&p, parts);
            assert_eq!(gather.fraction(), 1.0);
            // Each part prunes the step-time simulation by its own fastest so far, so parts simulate
            // more plans than the whole search; everything else is the same.
            let merged = gather.merge(&p).unwrap();
            assert_eq!((&merged.best, &merged.pareto), (&whole.best, &whole.pareto), "{parts} parts");
            assert_eq!(
                (merged.considered, merged.pruned, merged.fit, merged.feasible),
                (whole.considered, whole.pruned, whole.fit, whole.feasible),
                "{parts} parts"
            );
            assert!(whole.simulated <= merged.simulated);
            // A worker reports as it goes: after each slice but the last, with this clock.
            assert!(!progress.is_empty());
            for reply in progress {
                let Reply::Progress { done, total } = reply else { panic!("{reply:?}") };
                assert!(done <= total, "{done} of {total}");
            }
        }
    }

    #[test]
    fn progress_is_the_mean_of_the_parts() {
        let mut g = Gather::new(4);
        assert_eq!(g.fraction(), 0.0);
        g.progress(0, 50, 100);
        g.progress(1, 10, 10);
        assert_eq!(g.fraction(), 0.375);
        g.progress(2, 0, 0);
        g.progress(9, 1, 1);
        assert_eq!(g.fraction(), 0.375, "an empty part or a part out of range changes nothing");
        assert_eq!(Gather::new(0).parts(), 1);
    }

    #[test]
    fn a_part_of_another_plan_or_twice_or_missing_is_refused() {
        let p = plan();
        let other =
            Plan::from_json(r#"{"model": "qwen2.5-7b", "framework": "megatron", "method": "pretrain"}"#)
                .unwrap();
        let partial = Search::part(&p, 0, 2).finish_part();
        let mut g = Gather::new(2);
        assert!(g.receive(0, &plan_text(&other), partial.clone(), &p).is_err());
        assert!(g.receive(0, "{", partial.clone(), &p).is_err());
        assert_eq!(g.receive(0, &plan_text(&p), partial.clone(), &p), Ok(false));
        assert!(g.finish(0, partial.clone()).is_err(), "twice");
        assert!(g.finish(2, partial).is_err(), "out of range");
        assert!(g.merge(&p).is_err(), "part 1 is missing");
    }

    #[test]
    fn the_worker_scripts_own_failure_reads_as_one() {
        // public/search-worker.js writes this message itself when the glue or the wasm does not load.
        let script = include_str!("../public/search-worker.js");
        assert!(script.contains("JSON.stringify({ failed: { message: String(err) } })"), "{script}");
        let reply: Reply =
            serde_json::from_str(r#"{"failed": {"message": "TypeError: import failed"}}"#).unwrap();
        assert_eq!(reply, Reply::Failed { message: "TypeError: import failed".to_owned() });
    }

    #[test]
    fn a_plan_that_does_not_read_fails_the_worker() {
        let mut replies = Vec::new();
        run_part("{\"model\": \"no-such-model\"}", 0, 1, || 0.0, |text| replies.push(text));
        assert_eq!(replies.len(), 1);
        let reply: Reply = serde_json::from_str(&replies[0]).unwrap();
        assert!(matches!(reply, Reply::Failed { .. }), "{reply:?}");
    }
}
