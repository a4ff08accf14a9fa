//! The planner against real training steps on a GPU: core/tests/data/gpu_peak.json, made by
//! tools/gpu_peak on one NVIDIA H200 (torch 2.11, transformers 5.17), eight LLaMA-Factory-style
//! runs of catalog models (random weights) under plain PyTorch: LoRA and full fine-tuning, with and
//! without gradient checkpointing, 2 K to 64 K tokens a micro-batch.

use serde_json::Value;
use trainplan_core::{Plan, evaluate};

/// Each measured run, and the plan that describes it.
fn runs() -> Vec<(Value, Plan)> {
    let data: Value =
        serde_json::from_str(include_str!("../data/gpu_peak.json")).expect("the measurements are JSON");
    let runs = data["runs"].as_array().expect("runs").clone();
    assert_eq!(runs.len(), 8);
    runs.into_iter()
        .map(|r| {
            assert!(r["error"].is_null(), "{}: {}", r["name"], r["error"]);
            let text = serde_json::json!({
                "model": r["model"],
                "hardware": "h200-sxm-141g",
                "cluster": {"nodes": 1, "devices_per_node": 1},
                "framework": "llamafactory",
                "method": if r["method"] == "lora" { "lora" } else { "sft-full" },
                "attention": "sdpa",
                "recompute": {"granularity": if r["gradient_checkpointing"] == true { "full" } else { "none" }},
                "batch": {"micro_batch": r["micro_batch"], "global_batch": r["micro_batch"], "seq_len": r["seq_len"]},
            })
            .to_string();
            let plan = Plan::from_json(&text).expect("a valid plan");
            (r, plan)
        })
        .collect()
}

fn u(v: &Value) -> u64 {
    v.as_u64().expect("an integer")
}

/// The allocator's peak in the steady steps: the first also creates AdamW's states.
fn steady_peak(run: &Value) -> u64 {
    run["steps"].as_array().expect("steps")[1..].iter().map(|s| u(&s["peak_allocated"])).max().expect("steps")
}

#[test]
fn the_catalog_counts_the_parameters_the_models_have() {
    for (run, plan) in runs() {
        let report = evaluate(&plan);
        // PyTorch's own count of the built model's parameters (tied heads once) and PEFT's count of
        // the adapters on every linear layer but the head at rank 8.
        assert_eq!(report.params.total, u(&run["n_params"]), "{}", run["name"]);
        let trainable = if run["method"] == "lora" { report.params.lora } else { report.params.total };
        assert_eq!(trainable, u(&run["n_trainable"]), "{}", run["name"]);
    }
}

#[test]
fn plain_torch_peaks_are_within_one_percent_of_the_measured() {
    // The device's peak less what the allocator does not count: the runtime context and the
    // communication buffers (none on one device). The measured peak is `max_memory_allocated`.
    // Every run is within 1 % (largest miss −0.8 %). Before the peak-moment model the same runs
    // missed by −11.7 % to +9.8 %; before autocast's saved input copies were counted (full
    // fine-tuning's and LoRA's, tools/hf_activations `autocast.py`), the two runs without
    // checkpointing missed by −4.6 % and −4.3 %.
    for (run, plan) in runs() {
        let stage = &evaluate(&plan).memory.stages[0];
        let planned = (stage.total - stage.overhead - stage.buffers) as f64;
        let measured = steady_peak(&run) as f64;
        let miss = planned / measured - 1.0;
        assert!(
            miss.abs() <= 0.01,
            "{}: planned {planned:.3e}, measured {measured:.3e} ({miss:+.3})",
            run["name"]
        );
    }
}

#[test]
fn the_peak_is_at_the_moment_the_allocator_trace_shows() {
    // tools/gpu_peak replays the allocator's trace of the second step to the peak and groups what
    // is allocated there by the code that allocated it. Gradients appear only at the end of
    // backward (recomputing a checkpointed layer there), the autograd engine's own allocations (no
    // Python frame) only in backward; a peak with neither is in the forward.
    for (run, plan) in runs() {
        let groups = run["peak_breakdown"]["groups"].as_array().expect("groups");
        let has = |key: &str| groups.iter().any(|g| g[0].as_str().is_some_and(|k| k.contains(key)));
        let traced = match (has("[recompute]"), has("(backward: autograd engine)")) {
            (true, _) => "backward_end",
            (false, true) => "loss_backward",
            (false, false) => "forward",
        };
        let memory = evaluate(&plan).memory;
        let stage = &memory.stages[0];
        let tokens_v = u(&run["micro_batch"]) * u(&run["seq_len"]) * plan.model.arch.vocab_size;
        // The moment's terms: gradients only at the end of backward, the loss's 10sbV in forward
        // and 12sbV in its backward, none after it.
        let terms = match (stage.gradients, stage.logits) {
            (g, 0) if 0 < g => "backward_end",
            (0, l) if l == 12 * tokens_v => "loss_backward",
            (0, l) if l == 10 * tokens_v => "forward",
            other => panic!("{}: no moment has these terms: {other:?}", run["name"]),
        };
        assert_eq!(memory.peak_moment, Some(terms), "{}", run["name"]);
        assert_eq!(terms, traced, "{}", run["name"]);
    }
}

#[test]
fn llamafactory_step_times_are_within_a_quarter_of_the_measured() {
    // The steps' wall time on the H200 (the faster of the second and third). The planner counts
    // HF's eager operators, PEFT's casts, autocast's weight copies, the fp32 loss and fused AdamW
    // from the code (time::HF_EAGER_*, LORA_BYTES_PER_TOKEN_UNIT, AUTOCAST_CAST_BYTES_PER_PARAM),
    // not from these runs. Every run is still slower than planned (−4 % to −25 %: small GEMMs and
    // the Trainer's own work); before those counts the planner was 37–50 % fast on each.
    for (run, plan) in runs() {
        let planned = evaluate(&plan).time.step_seconds;
        let steps = run["steps"].as_array().expect("steps");
        let measured =
            steps[1..].iter().map(|s| s["seconds"].as_f64().expect("seconds")).fold(f64::INFINITY, f64::min);
        let miss = planned / measured - 1.0;
        assert!(
            (-0.25..=0.10).contains(&miss),
            "{}: planned {planned:.3} s, measured {measured:.3} s ({miss:+.3})",
            run["name"]
        );
    }
}
