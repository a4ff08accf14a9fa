//! What a setting can never do, over every framework: an offload, a recomputation or an overlap
//! turned off never makes a step faster, and sequence parallelism, the distributed optimizer,
//! recomputation and an offload never add memory; and more work (a longer sequence, a larger
//! micro-batch, LoRA rank or global batch) never takes less. Each is how its framework works, whatever the
//! numbers (an offload adds copies over the host link and moves nothing off the network; a
//! recomputation runs a forward again; sharding keeps less), so a plan that breaks one is a
//! model that counts something it should not: DeepSpeed's offloaded parameters had been gathered
//! for free (`time::offloaded_parameters_are_still_gathered_over_the_network`), and an optimizer
//! offload at ZeRO-0, which DeepSpeed does not read, had sped LLaMA-Factory's step up
//! (`memory::deepspeed_offloads_nothing_at_zero_0`). Only pairs of plans that both run (no error)
//! are compared.

use serde_json::{Value, json};
use trainplan_core::report::Severity;
use trainplan_core::{Plan, evaluate};

/// A plan's step seconds and peak bytes, `None` where it does not parse or breaks a rule.
fn figures(plan: &Value) -> Option<(f64, u64)> {
    let plan = Plan::from_json(&plan.to_string()).ok()?;
    let report = evaluate(&plan);
    let runs = !report.findings.iter().any(|f| f.severity == Severity::Error);
    runs.then_some((report.time.step_seconds, report.memory.peak_bytes))
}

/// `plan` with the value at `path` (`/a/b`) set.
fn with(plan: &Value, path: &str, value: &Value) -> Value {
    let mut plan = plan.clone();
    let (parent, key) = path.rsplit_once('/').expect("a path names a key");
    let mut at = &mut plan;
    for part in parent.split('/').filter(|p| !p.is_empty()) {
        at = at.as_object_mut().expect("an object").entry(part).or_insert_with(|| json!({}));
    }
    at[key] = value.clone();
    plan
}

/// A setting from `off` to `on`: whether the step may not get faster, and whether the peak may not
/// grow.
struct Toggle {
    path: &'static str,
    off: Value,
    on: Value,
    not_faster: bool,
    not_larger: bool,
}

fn toggles() -> Vec<Toggle> {
    let t = |path, off, on, not_faster, not_larger| Toggle { path, off, on, not_faster, not_larger };
    vec![
        t("/parallel/offload_optimizer", json!(false), json!(true), true, true),
        t("/parallel/offload_params", json!(false), json!(true), true, true),
        t("/recompute/granularity", json!("none"), json!("full"), true, true),
        t("/recompute/granularity", json!("none"), json!("selective"), true, true),
        t("/parallel/overlap_grad_reduce", json!(true), json!(false), true, false),
        t("/parallel/overlap_param_gather", json!(true), json!(false), true, false),
        t("/parallel/sequence_parallel", json!(false), json!(true), false, true),
        t("/parallel/distributed_optimizer", json!(false), json!(true), false, true),
    ]
}

#[test]
fn no_setting_does_what_its_framework_cannot() {
    let frameworks: [(&str, &[&str], (u32, u32)); 6] = [
        ("deepspeed", &["sft-full", "lora"], (1, 1)),
        ("llamafactory", &["sft-full", "lora", "dpo"], (1, 1)),
        ("verl", &["grpo"], (1, 1)),
        ("megatron", &["pretrain", "lora"], (2, 2)),
        ("mindspeed-llm", &["sft-full"], (4, 1)),
        ("mindspeed-rl", &["grpo"], (2, 2)),
    ];
    let (mut compared, mut broken) = (0, Vec::new());
    for model in ["qwen2.5-7b", "qwen3-30b-a3b", "gpt-oss-20b"] {
        for (framework, methods, (tp, pp)) in frameworks {
            for (method, hardware, nodes, zero) in methods
                .iter()
                .flat_map(|m| ["h100-sxm-80g", "ascend-910b2"].map(|h| (m, h)))
                .flat_map(|(m, h)| [1, 4].map(|n| (m, h, n)))
                .flat_map(|(m, h, n)| [0, 2, 3].map(|z| (m, h, n, z)))
            {
                let base = json!({"model": model, "hardware": hardware, "framework": framework, "method": method,
                    "cluster": {"nodes": nodes}, "parallel": {"zero_stage": zero, "tp": tp, "pp": pp},
                    "batch": {"micro_batch": 1, "global_batch": 128, "seq_len": 4096}});
                for toggle in toggles() {
                    let (off, on) =
                        (with(&base, toggle.path, &toggle.off), with(&base, toggle.path, &toggle.on));
                    let (Some((t_off, m_off)), Some((t_on, m_on))) = (figures(&off), figures(&on)) else {
                        continue;
                    };
                    compared += 1;
                    let what = format!(
                        "{model} {framework} {method} {hardware} ×{nodes} ZeRO-{zero} {}",
                        toggle.path
                    );
                    if toggle.not_faster && t_on < t_off * (1.0 - 1e-12) {
                        broken.push(format!("{what}: {t_off:.4} → {t_on:.4} s"));
                    }
                    if toggle.not_larger && m_off < m_on {
                        broken.push(format!("{what}: {m_off} → {m_on} B"));
                    }
                }
            }
        }
    }
    assert!(broken.is_empty(), "{} of {compared} pairs:\n{}", broken.len(), broken.join("\n"));
    assert!(1_000 < compared, "{compared} pairs compared");
}

/// More work never takes less: a longer sequence neither less memory nor less time, a larger
/// micro-batch no less memory, a larger LoRA rank neither less memory nor less time, a larger
/// global batch no less time, and more nodes over the same batch no more memory on a device.
#[test]
fn more_work_never_takes_less() {
    let frameworks: [(&str, &[&str], (u32, u32)); 6] = [
        ("deepspeed", &["sft-full", "lora"], (1, 1)),
        ("llamafactory", &["sft-full", "lora", "qlora", "dpo"], (1, 1)),
        ("verl", &["grpo"], (1, 1)),
        ("megatron", &["pretrain", "lora"], (2, 2)),
        ("mindspeed-llm", &["lora"], (4, 1)),
        ("mindspeed-rl", &["grpo"], (2, 2)),
    ];
    let (mut compared, mut broken) = (0, Vec::new());
    for model in ["qwen2.5-7b", "qwen3-30b-a3b", "gpt-oss-20b"] {
        for (framework, methods, (tp, pp)) in frameworks {
            for (method, zero) in methods.iter().flat_map(|m| [0, 2, 3].map(|z| (m, z))) {
                let plan = |nodes: u32, seq: u32, micro_batch: u32, rank: u32, global_batch: u32| {
                    json!({"model": model, "framework": framework, "method": method, "cluster": {"nodes": nodes},
                        "parallel": {"zero_stage": zero, "tp": tp, "pp": pp, "distributed_optimizer": true},
                        "lora": {"rank": rank},
                        "batch": {"micro_batch": micro_batch, "global_batch": global_batch, "seq_len": seq}})
                };
                let Some((time, memory)) = figures(&plan(1, 4096, 1, 16, 256)) else { continue };
                let what = format!("{model} {framework} {method} ZeRO-{zero}");
                let mut check = |changed: &str, more: Value, time_too: bool, memory_too: bool| {
                    let Some((t, m)) = figures(&more) else { return };
                    compared += 1;
                    if time_too && t < time * (1.0 - 1e-12) {
                        broken.push(format!("{what}, {changed}: {time:.4} → {t:.4} s"));
                    }
                    if memory_too && m < memory {
                        broken.push(format!("{what}, {changed}: {memory} → {m} B"));
                    }
                };
                check("8,192 tokens", plan(1, 8192, 1, 16, 256), true, true);
                check("micro-batch 2", plan(1, 4096, 2, 16, 256), false, true);
                check("rank 64", plan(1, 4096, 1, 64, 256), true, true);
                check("global batch 512", plan(1, 4096, 1, 16, 512), true, false);
                // Fewer nodes over the same batch: no less memory on a device than more nodes.
                if let (Some((_, one)), Some((_, four))) =
                    (figures(&plan(1, 4096, 1, 16, 256)), figures(&plan(4, 4096, 1, 16, 256)))
                {
                    compared += 1;
                    if one < four {
                        broken.push(format!("{what}, 4 nodes: {one} → {four} B"));
                    }
                }
            }
        }
    }
    assert!(broken.is_empty(), "{} of {compared} pairs:\n{}", broken.len(), broken.join("\n"));
    assert!(200 < compared, "{compared} pairs compared");
}
