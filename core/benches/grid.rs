//! The benchmark grid: every framework, dense and MoE, PP 1–64 with and without VPP, CP, RL; and
//! the levels an evaluation is timed at; and the searches timed. Shared by the native benchmark
//! (`benches/evaluate.rs`) and the same figures from the page's wasm build in headless Chromium
//! (the grid in `tests/wasm_bench.rs`, the searches in `tests/wasm_search_bench.rs`, each in a wasm
//! instance of its own), so the two measure the same plans the same way; only the clock differs.

use std::hint::black_box;

use trainplan_core::{Plan, evaluate};

/// The grid's plans, named.
pub fn plans() -> Vec<(String, Plan)> {
    let mut plans: Vec<(String, String)> = Vec::new();
    for (model, nodes) in
        [("llama-3.1-8b", 1), ("llama-3.1-70b", 16), ("llama-3.1-405b", 128), ("qwen3-235b-a22b", 128)]
    {
        for pp in [1u32, 2, 4, 8, 16, 32, 64] {
            for vpp in [1u32, 2, 4] {
                for cp in [1u32, 2] {
                    let text = format!(
                        r#"{{"model": "{model}", "framework": "megatron", "method": "pretrain", "cluster": {{"nodes": {nodes}}},
                            "parallel": {{"tp": 8, "pp": {pp}, "vpp": {vpp}, "cp": {cp}, "distributed_optimizer": true,
                            "sequence_parallel": true}}, "recompute": {{"granularity": "selective"}},
                            "batch": {{"micro_batch": 1, "global_batch": 1024, "seq_len": 8192}}}}"#
                    );
                    plans.push((format!("{model} pp{pp} vpp{vpp} cp{cp}"), text));
                }
            }
        }
    }
    for (name, text) in [
        (
            "deepseek-v3 dualpipev",
            r#"{"model": "deepseek-v3", "hardware": "h800-sxm-80g", "framework": "megatron", "method": "pretrain", "cluster": {"nodes": 256}, "parallel": {"pp": 16, "ep": 64, "schedule": "dualpipev", "distributed_optimizer": true}, "batch": {"global_batch": 15360, "seq_len": 4096}}"#,
        ),
        (
            "mixtral ep8 vpp2",
            r#"{"model": "mixtral-8x7b", "framework": "megatron", "method": "pretrain", "cluster": {"nodes": 4}, "parallel": {"tp": 2, "pp": 2, "vpp": 2, "ep": 8, "distributed_optimizer": true}, "batch": {"global_batch": 256, "seq_len": 4096}}"#,
        ),
        ("qwen2.5-7b lora llamafactory", r#"{"model": "qwen2.5-7b"}"#),
        (
            "llama-3-8b deepspeed zero3",
            r#"{"model": "llama-3-8b", "framework": "deepspeed", "method": "sft-full", "parallel": {"zero_stage": 3}}"#,
        ),
        ("qwen2.5-7b grpo verl", r#"{"model": "qwen2.5-7b", "framework": "verl", "method": "grpo"}"#),
        (
            "qwen2.5-7b mindspeed-llm 910b",
            r#"{"model": "qwen2.5-7b", "hardware": "ascend-910b2", "framework": "mindspeed-llm", "method": "sft-full", "parallel": {"tp": 4, "pp": 2}}"#,
        ),
        (
            "qwen2.5-7b grpo mindspeed-rl",
            r#"{"model": "qwen2.5-7b", "hardware": "ascend-910b2", "framework": "mindspeed-rl", "method": "grpo", "cluster": {"nodes": 2}}"#,
        ),
    ] {
        plans.push((name.to_owned(), text.to_owned()));
    }
    plans
        .into_iter()
        .map(|(name, text)| {
            let plan = Plan::from_json(&text).unwrap_or_else(|e| panic!("{name}: {e}"));
            (name, plan)
        })
        .collect()
}

/// The searches both benchmarks time, named: each from its plan file, over its whole space.
pub const SEARCHES: [(&str, &str); 4] = [
    (
        "search: llama-3.1-70b pretrain, 32 × H100",
        r#"{"model": "llama-3.1-70b", "framework": "megatron", "method": "pretrain", "cluster": {"nodes": 4},
            "batch": {"global_batch": 64, "seq_len": 4096}}"#,
    ),
    (
        "search: llama-3.1-70b pretrain, 1,024 × H100",
        r#"{"model": "llama-3.1-70b", "framework": "megatron", "method": "pretrain", "cluster": {"nodes": 128},
            "batch": {"global_batch": 1024, "seq_len": 8192}}"#,
    ),
    ("search: qwen2.5-7b lora, 8 × H100", r#"{"model": "qwen2.5-7b"}"#),
    // MoE RL: the rollout's TP and EP over every training layout (656,392 plans).
    (
        "search: qwen3-30b-a3b grpo (MindSpeed-RL), 64 × 910B",
        r#"{"model": "qwen3-30b-a3b", "hardware": "ascend-910b2", "framework": "mindspeed-rl", "method": "grpo",
            "cluster": {"nodes": 8}}"#,
    ),
];

/// A plan's memory and step time as a search works them out: the plan as its framework runs it
/// made once for both (`knobs::effective`), the model's counts kept from the last plan of the same
/// model. Returns the memory.
fn estimate(plan: &Plan) -> trainplan_core::memory::Memory {
    let effective = trainplan_core::knobs::effective(plan);
    let facts = trainplan_core::memory::ModelFacts::recent(plan);
    let mem = trainplan_core::memory::estimate_with(&effective, &facts);
    black_box(trainplan_core::time::estimate_effective(&effective, &mem));
    mem
}

/// A level of evaluation: its name and what it runs.
pub type Level = (&'static str, fn(&Plan));

/// What one plan costs at three levels: the estimate a search makes of every plan, the same with the
/// framework's rules checked, and the page's whole report.
pub const LEVELS: [Level; 3] = [
    ("estimate (memory and step time)", |plan| {
        black_box(estimate(plan));
    }),
    ("checked (and every rule of the framework)", |plan| {
        let mem = estimate(plan);
        black_box(trainplan_core::rules::check(plan, &mem));
    }),
    ("report (and fixes, advice inputs, timeline)", |plan| {
        black_box(evaluate(black_box(plan)));
    }),
];

/// Rounds each plan is timed in, the rounds going over the whole grid in turn: a plan's figure is
/// the median of its rounds, so that a burst of other work on the machine spoils one round of many
/// plans rather than every round of one (a single round had made the worst plan the noisiest).
const ROUNDS: usize = 5;

/// Microseconds per call of `f` on `plan`, repeated for at least `seconds` and 4 calls, after one
/// call untimed (which compiles the plan's pipeline programs again if the plans timed since have
/// pushed them out of the cache: the figure is a plan evaluated again, as a page's redraw or a
/// search's next plan of the same shape is). The clock
/// is read once per batch, the batch doubling until it takes a sixteenth of that time: a
/// browser's clock takes about a microsecond a read (`tests/wasm_bench.rs` prints it), as long as
/// a plan, and read once per call it had added that to each.
fn time_plan(clock: &dyn Fn() -> f64, f: fn(&Plan), plan: &Plan, seconds: f64) -> f64 {
    f(black_box(plan));
    let (mut n, mut batch) = (0u32, 1u32);
    let start = clock();
    loop {
        for _ in 0..batch {
            f(black_box(plan));
        }
        n += batch;
        let elapsed = clock() - start;
        if 4 <= n && seconds <= elapsed {
            return elapsed * 1e6 / f64::from(n);
        }
        if elapsed < seconds / 16.0 {
            batch *= 2;
        }
    }
}

/// Times every plan at every level (each plan for at least `min_seconds` over [`ROUNDS`] rounds,
/// so a coarse clock still resolves it) and returns a line per level: median, 90th percentile,
/// worst and its plan. `clock` gives seconds from any fixed start.
pub fn run(clock: &dyn Fn() -> f64, min_seconds: f64) -> Vec<String> {
    let plans = plans();
    // Every plan once at every level first: a browser compiles wasm in tiers as it runs, and the
    // first plans timed would pay for the compiling.
    for (_, f) in &LEVELS {
        for (_, plan) in &plans {
            f(black_box(plan));
        }
    }
    LEVELS
        .iter()
        .map(|&(level, f)| {
            let mut rounds = vec![Vec::with_capacity(ROUNDS); plans.len()];
            for _ in 0..ROUNDS {
                for ((_, plan), times) in plans.iter().zip(&mut rounds) {
                    times.push(time_plan(clock, f, plan, min_seconds / ROUNDS as f64));
                }
            }
            let mut times: Vec<(f64, &str)> = rounds
                .iter_mut()
                .zip(&plans)
                .map(|(times, (name, _))| {
                    times.sort_by(f64::total_cmp);
                    (times[ROUNDS / 2], name.as_str())
                })
                .collect();
            times.sort_by(|a, b| a.0.total_cmp(&b.0));
            let at = |q: f64| times[((times.len() - 1) as f64 * q).round() as usize].0;
            let worst = times.last().expect("the grid has plans");
            // How many plans take longer than 10 µs, the most one evaluation should take.
            let over = times.iter().filter(|(t, _)| 10.0 < *t).count();
            format!(
                "grid {level:44} median {:7.2} µs, p90 {:7.2} µs, worst {:8.2} µs ({}), {} plans, {over} over 10 µs",
                at(0.5),
                at(0.9),
                worst.0,
                worst.1,
                times.len()
            )
        })
        .collect()
}

/// Milliseconds per search of each of [`SEARCHES`] on one thread (each repeated for at least
/// `min_seconds` after one run that warms it up), two lines each: the whole search, then
/// [`search_in_parts`] in two. `clock` gives seconds from any fixed start.
#[cfg_attr(
    not(target_arch = "wasm32"),
    expect(dead_code, reason = "the native benchmark times these searches itself, on every core too")
)]
pub fn run_searches(clock: &dyn Fn() -> f64, min_seconds: f64) -> Vec<String> {
    let time = |search: &dyn Fn()| {
        let mut n = 0u32;
        let start = clock();
        while n < 1 || clock() - start < min_seconds {
            search();
            n += 1;
        }
        ((clock() - start) * 1e3 / f64::from(n), n)
    };
    SEARCHES
        .iter()
        .flat_map(|(name, text)| {
            let plan = Plan::from_json(text).unwrap_or_else(|e| panic!("{name}: {e}"));
            let result = trainplan_core::search::search(&plan);
            let (whole, n) = time(&|| {
                black_box(trainplan_core::search::search(black_box(&plan)));
            });
            let (parted, m) = time(&|| {
                black_box(search_in_parts(black_box(&plan), 2));
            });
            [
                format!(
                    "{name:52} {whole:8.2} ms per search, one thread: {} plans, {} feasible ({n} runs)",
                    result.considered, result.feasible
                ),
                format!("{:52} {parted:8.2} ms per search ({m} runs)", format!("{name}, in 2 parts")),
            ]
        })
        .collect()
}

/// The search from `plan` as the page runs it: in `parts` parts (here one after the other, in the
/// page one per Web Worker), each sent back as JSON, then merged.
pub fn search_in_parts(plan: &Plan, parts: u32) -> trainplan_core::search::SearchResult {
    use trainplan_core::search::{Partial, Search};
    let partials: Vec<Partial> = (0..parts)
        .map(|part| {
            let mut search = Search::part(plan, part, parts);
            while !search.step(usize::MAX) {}
            let json = serde_json::to_string(&search.finish_part()).expect("a part is JSON");
            serde_json::from_str(&json).expect("a part reads back")
        })
        .collect();
    trainplan_core::search::merge(plan, &partials).expect("the parts are the whole search")
}
