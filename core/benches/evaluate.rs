//! Benchmark: time to evaluate one plan (memory, schedule simulation, step time, report), natively.
//! Run `cargo bench -p trainplan-core`; it prints microseconds per evaluation for a few plans.
//! Target (issue 5): a 70B plan on 1,024 devices in at most 20 µs. It also times whole searches.

use std::hint::black_box;
use std::time::Instant;

use trainplan_core::{Plan, evaluate};

/// Microseconds per call of `f`, timed over at least 0.5 s after a warm-up.
fn time_it(mut f: impl FnMut()) -> (f64, u64) {
    for _ in 0..100 {
        f();
    }
    let mut n = 0u64;
    let start = Instant::now();
    while start.elapsed().as_secs_f64() < 0.5 {
        for _ in 0..100 {
            f();
        }
        n += 100;
    }
    (start.elapsed().as_secs_f64() * 1e6 / n as f64, n)
}

fn bench(name: &str, text: &str) {
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
    let plan = Plan::from_json(text).expect("benchmark plans are valid");
    let result = trainplan_core::search::search(&plan);
    let (us, n) = time_it(|| {
        black_box(trainplan_core::search::search(black_box(&plan)));
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

/// Microseconds per evaluation over a grid of plans: every framework, dense and MoE, PP 1–64 with
/// and without VPP, CP, RL. Prints the median, the 90th percentile and the worst, and the worst
/// plan; the figures issue 15's targets are stated in.
fn grid() {
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
    let parsed: Vec<(String, Plan)> = plans
        .iter()
        .map(|(name, text)| (name.clone(), Plan::from_json(text).unwrap_or_else(|e| panic!("{name}: {e}"))))
        .collect();
    // Each plan timed in turn at each level, so machine noise spreads over all three alike.
    type Level = (&'static str, fn(&Plan));
    let levels: [Level; 3] = [
        ("estimate (memory and step time)", |plan| {
            let mem = trainplan_core::memory::estimate(plan);
            black_box(trainplan_core::time::estimate(plan, &mem));
        }),
        ("checked (and every rule of the framework)", |plan| {
            let mem = trainplan_core::memory::estimate(plan);
            black_box(trainplan_core::time::estimate(plan, &mem));
            black_box(trainplan_core::rules::check(plan, &mem));
        }),
        ("report (and fixes, advice inputs, timeline)", |plan| {
            black_box(evaluate(black_box(plan)));
        }),
    ];
    for (level, f) in levels {
        let mut times: Vec<(f64, String)> = parsed
            .iter()
            .map(|(name, plan)| {
                let mut n = 0u32;
                let start = Instant::now();
                while n < 20 || start.elapsed().as_secs_f64() < 0.01 {
                    f(black_box(plan));
                    n += 1;
                }
                (start.elapsed().as_secs_f64() * 1e6 / f64::from(n), name.clone())
            })
            .collect();
        times.sort_by(|a, b| a.0.total_cmp(&b.0));
        let at = |q: f64| times[((times.len() - 1) as f64 * q).round() as usize].0;
        let worst = times.last().expect("the grid has plans");
        println!(
            "grid {level:44} median {:7.2} µs, p90 {:7.2} µs, worst {:8.2} µs ({}), {} plans",
            at(0.5),
            at(0.9),
            worst.0,
            worst.1,
            times.len()
        );
    }
}

fn main() {
    simulate_only();
    grid();
    bench_search(
        "search: llama-3.1-70b pretrain, 32 × H100",
        r#"{"model": "llama-3.1-70b", "framework": "megatron", "method": "pretrain", "cluster": {"nodes": 4},
            "batch": {"global_batch": 64, "seq_len": 4096}}"#,
    );
    bench_search(
        "search: llama-3.1-70b pretrain, 1,024 × H100",
        r#"{"model": "llama-3.1-70b", "framework": "megatron", "method": "pretrain", "cluster": {"nodes": 128},
            "batch": {"global_batch": 1024, "seq_len": 8192}}"#,
    );
    bench_search("search: qwen2.5-7b lora, 8 × H100", r#"{"model": "qwen2.5-7b"}"#);
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
