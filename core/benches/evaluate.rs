//! Benchmark: time to evaluate one plan (memory, schedule simulation, step time, report), natively.
//! Run `cargo bench -p trainplan-core`; it prints microseconds per evaluation for a few plans.
//! Target (issue 5): a 70B plan on 1,024 devices in at most 20 µs. It also times whole searches.

use std::hint::black_box;
use std::time::Instant;

use trainplan_core::{Plan, evaluate};

#[path = "grid.rs"]
mod grid;

/// Microseconds per call of `f`, timed over at least 0.5 s after a warm-up: 100 calls and batches
/// of 100, fewer where a call takes over a millisecond (a whole MoE RL search takes a quarter of a
/// second).
fn time_it(mut f: impl FnMut()) -> (f64, u64) {
    let once = Instant::now();
    f();
    let calls = ((1e-3 / once.elapsed().as_secs_f64().max(1e-9)) as u64).clamp(1, 100);
    for _ in 0..calls {
        f();
    }
    let mut n = 0u64;
    let start = Instant::now();
    while start.elapsed().as_secs_f64() < 0.5 {
        for _ in 0..calls {
            f();
        }
        n += calls;
    }
    (start.elapsed().as_secs_f64() * 1e6 / n as f64, n)
}

/// Whether `name` is run: `cargo bench -p trainplan-core -- FILTER` runs only the lines whose name
/// contains FILTER (cargo passes `--bench` too).
fn wanted(name: &str) -> bool {
    std::env::args().skip(1).find(|a| !a.starts_with("--")).is_none_or(|filter| name.contains(&filter))
}

fn bench(name: &str, text: &str) {
    if !wanted(name) {
        return;
    }
    let plan = Plan::from_json(text).expect("benchmark plans are valid");
    let (whole, n) = time_it(|| {
        black_box(evaluate(black_box(&plan)));
    });
    let (memory, _) = time_it(|| {
        black_box(trainplan_core::memory::estimate(black_box(&plan)));
    });
    let mem = trainplan_core::memory::estimate(&plan);
    let (time, _) = time_it(|| {
        black_box(trainplan_core::time::estimate(black_box(&plan), black_box(&mem)));
    });
    println!("{name:52} {whole:8.1} µs per evaluation (memory {memory:.1}, time {time:.1}; {n} runs)");
}

/// A whole search: plans considered per second, and the share the memory check prunes before the
/// rules and the step-time simulation run.
fn bench_search(name: &str, text: &str) {
    bench_search_with(name, text, trainplan_core::search::search);
    // The same in two parts, one after the other, each through JSON, then merged: a two-core
    // page's work (one part per Web Worker), so what splitting the space costs.
    bench_search_with(&format!("{name}, in 2 parts"), text, |plan| grid::search_in_parts(plan, 2));
    // The same on every core, as the command line runs it (`search_on_threads`).
    let threads = std::thread::available_parallelism().map_or(1, usize::from);
    if 1 < threads {
        let name = format!("{name}, {threads} threads");
        bench_search_with(&name, text, |plan| trainplan_core::search::search_on_threads(plan, threads));
    }
}

fn bench_search_with(name: &str, text: &str, search: impl Fn(&Plan) -> trainplan_core::search::SearchResult) {
    if !wanted(name) {
        return;
    }
    let plan = Plan::from_json(text).expect("benchmark plans are valid");
    let result = search(&plan);
    let (us, n) = time_it(|| {
        black_box(search(black_box(&plan)));
    });
    let per_second = result.considered as f64 / (us * 1e-6);
    println!(
        "{name:52} {:8.2} ms per search: {} plans ({} pruned unevaluated), {} fit, {} feasible, {} simulated; {:.0} plans/s ({n} runs)",
        us / 1e3,
        result.considered,
        result.pruned,
        result.fit,
        result.feasible,
        result.simulated,
        per_second
    );
}

/// Microseconds per evaluation over the benchmark grid (benches/grid.rs), at each level.
fn grid() {
    let start = Instant::now();
    for line in grid::run(&|| start.elapsed().as_secs_f64(), 0.01) {
        println!("{line}");
    }
}

fn main() {
    if wanted("simulation alone") {
        simulate_only();
    }
    if wanted("grid") {
        grid();
    }
    for (name, text) in grid::SEARCHES {
        bench_search(name, text);
    }
    bench("qwen2.5-7b lora, 8 × H100", r#"{"model": "qwen2.5-7b"}"#);
    bench(
        "llama-3.1-70b pretrain, 1,024 × H100, tp8 pp8 vpp2",
        r#"{"model": "llama-3.1-70b", "framework": "megatron", "method": "pretrain", "cluster": {"nodes": 128},
            "parallel": {"tp": 8, "pp": 8, "vpp": 2, "distributed_optimizer": true, "sequence_parallel": true},
            "recompute": {"granularity": "selective"}, "batch": {"global_batch": 1024, "seq_len": 8192}}"#,
    );
    bench(
        "deepseek-v3 pretrain, 2,048 × H800, pp16 ep64 dualpipev",
        r#"{"model": "deepseek-v3", "hardware": "h800-sxm-80g", "framework": "megatron", "method": "pretrain",
            "cluster": {"nodes": 256}, "parallel": {"pp": 16, "ep": 64, "schedule": "dualpipev", "distributed_optimizer": true},
            "batch": {"global_batch": 15360, "seq_len": 4096}}"#,
    );
}

/// The schedule simulation alone: 512 passes.
fn simulate_only() {
    use trainplan_core::schedule::{self, Costs, Schedule};
    let costs = Costs::uniform(8, 2, 1.0, 1.0, 1.0, 0.1);
    let (t, n) = time_it(|| {
        let orders = schedule::orders(Schedule::Interleaved, 8, 2, 16);
        black_box(schedule::simulate(Schedule::Interleaved, &orders, &costs));
    });
    println!("{:52} {t:8.1} µs ({n} runs)", "interleaved p8 v2 m16 simulation alone");
    let (t, n) = time_it(|| {
        black_box(schedule::orders(Schedule::Interleaved, black_box(8), 2, 16));
    });
    println!("{:52} {t:8.1} µs ({n} runs)", "of which the pass orders");
}
