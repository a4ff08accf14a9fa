//! Runs the engine on the benchmark grid, its searches and a matrix of frameworks, methods, ZeRO
//! stages and memory knobs, each evaluation with the stack below it and the plan's unset optional
//! figures filled with subnormal floats, and reports every phase that computed with a subnormal
//! operand (the `DE` flag of x86's `MXCSR`). Such arithmetic is almost always on bytes nobody set:
//! the payload of a `None` that the optimizer computed with before picking the default, which
//! costs a microcode assist each time (docs/DESIGN.md, "Why are some optional figures scaled
//! through a call?").
//!
//! `--trap` instead unmasks the denormal-operand exception, so that the first such instruction
//! raises `SIGFPE`: run it under a debugger to see where (`gdb -batch -ex run -ex bt`).

use std::arch::asm;
use std::hint::black_box;

use trainplan_core::Plan;

#[path = "../../../core/benches/grid.rs"]
#[allow(dead_code)]
mod grid;

/// `MXCSR`'s denormal-operand flag, and its mask bit.
const DENORMAL_FLAG: u32 = 1 << 1;
const DENORMAL_MASK: u32 = 1 << 8;
/// The six exception flags.
const FLAGS: u32 = 0x3f;

fn mxcsr() -> u32 {
    let mut value = 0u32;
    // SAFETY: `stmxcsr` stores the register into the four bytes given.
    unsafe { asm!("stmxcsr [{}]", in(reg) &mut value, options(nostack)) };
    value
}

fn set_mxcsr(value: u32) {
    // SAFETY: `ldmxcsr` loads the register from the four bytes given; every value set here is one
    // read from it with flag or mask bits changed.
    unsafe { asm!("ldmxcsr [{}]", in(reg) &value, options(nostack)) };
}

/// Fills the stack below the caller with the smallest subnormal, so that a stale slot read as a
/// float is one.
#[inline(never)]
fn poison_stack() {
    let filled = [f64::from_bits(1); 1 << 14];
    black_box(&filled);
}

/// Leaves the smallest subnormal in the payload of each of the plan's unset optional figures.
fn poison_plan(plan: &mut Plan) {
    let subnormal = Some(f64::from_bits(1));
    macro_rules! poison {
        ($($field:ident).+) => {
            if plan.$($field).+.is_none() {
                plan.$($field).+ = subnormal;
                plan.$($field).+ = black_box(None);
            }
        };
    }
    poison!(overheads.runtime_context_mib);
    poison!(overheads.comm_buffer_mib);
    poison!(overheads.allocator_reserve);
    poison!(calibration.efficiency_scale);
    poison!(calibration.memory_offset_mib);
    poison!(calibration.rollout_scale);
    poison!(moe.capacity_factor);
}

/// Runs `phase` on a poisoned stack; whether it computed with a subnormal operand.
fn touches_subnormal(trap: bool, phase: impl FnOnce()) -> bool {
    let saved = mxcsr();
    poison_stack();
    let armed = if trap { saved & !DENORMAL_MASK } else { saved };
    set_mxcsr(armed & !FLAGS);
    phase();
    let flags = mxcsr();
    set_mxcsr(saved);
    flags & DENORMAL_FLAG != 0
}

/// The matrix: models, frameworks, methods, ZeRO stages, offload, recomputation and layouts, each
/// on an NVIDIA and an Ascend device; the plan files the engine refuses are skipped.
fn matrix() -> Vec<(String, Plan)> {
    let mut plans = Vec::new();
    let layouts =
        [(false, "none", 1, 1), (true, "full", 2, 2), (false, "selective", 4, 4), (true, "none", 8, 1)];
    for model in ["qwen2.5-7b", "llama-3.1-70b", "qwen3-30b-a3b", "deepseek-v3", "mixtral-8x7b"] {
        for framework in [
            "megatron",
            "deepspeed",
            "llamafactory",
            "mindspeed-llm",
            "verl",
            "verl-megatron",
            "mindspeed-rl",
        ] {
            for method in ["pretrain", "sft-full", "lora", "qlora", "dpo", "dpo-lora", "grpo", "ppo"] {
                for zero in 0..=3 {
                    for (offload, recompute, tp, pp) in layouts {
                        for hardware in ["h100-sxm-80g", "ascend-910b2"] {
                            let text = format!(
                                r#"{{"model": "{model}", "hardware": "{hardware}", "framework": "{framework}", "method": "{method}",
                                    "cluster": {{"nodes": 4}}, "parallel": {{"tp": {tp}, "pp": {pp}, "zero_stage": {zero},
                                    "offload_optimizer": {offload}, "offload_params": {offload}, "distributed_optimizer": {offload}}},
                                    "recompute": {{"granularity": "{recompute}"}}, "batch": {{"global_batch": 64, "seq_len": 4096}}}}"#
                            );
                            if let Ok(plan) = Plan::from_json(&text) {
                                let name = format!(
                                    "{model} {framework} {method} ZeRO-{zero} TP {tp} PP {pp} {recompute} offload {offload} {hardware}"
                                );
                                plans.push((name, plan));
                            }
                        }
                    }
                }
            }
        }
    }
    plans
}

fn main() {
    let trap = std::env::args().any(|a| a == "--trap");
    let mut plans = grid::plans();
    plans.extend(
        grid::SEARCHES
            .iter()
            .map(|(name, text)| (name.to_string(), Plan::from_json(text).expect("a search's plan"))),
    );
    plans.extend(matrix());
    let mut found = 0;
    let mut report = |name: &str, phase: &str, hit: bool| {
        if hit {
            found += 1;
            println!("subnormal operand: {phase} of {name}");
        }
    };
    for (name, plan) in &mut plans {
        poison_plan(plan);
        let plan = &*plan;
        if trap {
            eprintln!("{name}");
        }
        let mut mem = None;
        let hit = touches_subnormal(trap, || mem = Some(trainplan_core::memory::estimate(black_box(plan))));
        report(name, "memory::estimate", hit);
        let mem = mem.expect("set above");
        report(
            name,
            "time::estimate",
            touches_subnormal(trap, || {
                black_box(trainplan_core::time::estimate(black_box(plan), &mem));
            }),
        );
        report(
            name,
            "rules::check",
            touches_subnormal(trap, || {
                black_box(trainplan_core::rules::check(black_box(plan), &mem));
            }),
        );
        report(
            name,
            "evaluate",
            touches_subnormal(trap, || {
                black_box(trainplan_core::evaluate(black_box(plan)));
            }),
        );
    }
    for (name, text) in grid::SEARCHES {
        let mut plan = Plan::from_json(text).expect("a search's plan");
        poison_plan(&mut plan);
        report(
            name,
            "search",
            touches_subnormal(trap, || {
                black_box(trainplan_core::search::search(black_box(&plan)));
            }),
        );
    }
    println!("{} plans, each phase on a poisoned stack: {found} touched a subnormal operand", plans.len());
    if 0 < found {
        std::process::exit(1);
    }
}
