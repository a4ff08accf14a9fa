//! The sweep over node counts: its binary search finds exactly what a linear scan finds, each found
//! value fits and the next does not, and the rows cover the node counts asked for.

use trainplan_core::Plan;
use trainplan_core::sweep::{self, Knob};

fn plan(text: &str) -> Plan {
    Plan::from_json(text).unwrap_or_else(|e| panic!("{e}: {text}"))
}

/// Plans whose longest sequence or largest micro-batch lies well inside the scanned range.
const PLANS: &[&str] = &[
    r#"{"model": "llama-2-7b", "hardware": "rtx-4090-24g", "recompute": {"granularity": "none"}}"#,
    r#"{"model": "qwen2.5-7b", "method": "sft-full", "hardware": "a100-sxm-40g", "parallel": {"zero_stage": 3},
        "recompute": {"granularity": "none"}}"#,
    r#"{"model": "llama-3-8b", "framework": "megatron", "method": "pretrain", "hardware": "l40s-48g",
        "parallel": {"tp": 2, "distributed_optimizer": true}, "recompute": {"granularity": "none"},
        "batch": {"global_batch": 256}}"#,
    r#"{"model": "gpt2", "hardware": "t4-16g", "method": "sft-full", "precision": "fp16", "attention": "eager",
        "recompute": {"granularity": "none"}, "batch": {"global_batch": 512, "seq_len": 1024}}"#,
    // DP 2, global batch 48: over every micro-batch memory is not monotone (9 fits where 6 and 8 do
    // not: the micro-batches per step round down); over the divisors of 24 it is.
    r#"{"model": "qwen2.5-7b", "framework": "mindspeed-llm", "method": "pretrain",
        "parallel": {"tp": 1, "pp": 4, "vpp": 2, "fsdp": "optim_grads_params"}, "recompute": {"granularity": "none"},
        "batch": {"micro_batch": 1, "global_batch": 48, "seq_len": 2048}}"#,
];

#[test]
fn binary_search_equals_a_linear_scan() {
    let mut inside = 0;
    for text in PLANS {
        let p = plan(text);
        for (knob, hi) in
            [(Knob::SeqLen, 4096), (Knob::MicroBatch, sweep::upper(&p, Knob::MicroBatch).min(64))]
        {
            // The scan: every value from 1 to hi, in order (micro-batches: those dividing the
            // global batch ÷ DP); memory is monotone, so the fitting values are a prefix.
            let values: Vec<u32> = (1..=hi)
                .filter(|v| knob == Knob::SeqLen || sweep::upper(&p, knob).is_multiple_of(*v))
                .collect();
            if knob == Knob::MicroBatch {
                assert_eq!(sweep::micro_batches(&p, hi), values, "{text}");
            }
            let fitting: Vec<bool> = values.iter().map(|&v| sweep::fits(&p, knob, v)).collect();
            let prefix = fitting.iter().take_while(|&&f| f).count();
            assert!(fitting[prefix..].iter().all(|&f| !f), "{text} {knob:?}: not monotone");
            let expected = prefix.checked_sub(1).map(|i| values[i]);
            assert_eq!(sweep::largest(&p, knob, hi), expected, "{text} {knob:?}");
            if 1 < prefix && prefix < values.len() {
                inside += 1;
            }
        }
    }
    // The plans were chosen so that most answers lie strictly inside the range.
    assert!(5 <= inside, "only {inside} answers inside the scanned ranges");
}

#[test]
fn each_row_fits_and_one_more_does_not() {
    let p = plan(
        r#"{"model": "llama-3-8b", "framework": "megatron", "method": "sft-full", "cluster": {"nodes": 3},
            "parallel": {"tp": 2, "pp": 2, "distributed_optimizer": true}, "batch": {"global_batch": 96}}"#,
    );
    let s = sweep::sweep(&p, 8);
    // Powers of two to 8, and the plan's own 3.
    assert_eq!(s.rows.iter().map(|r| r.nodes).collect::<Vec<_>>(), [1, 2, 3, 4, 8]);
    assert_eq!(s.rows.iter().filter(|r| r.current).map(|r| r.nodes).collect::<Vec<_>>(), [3]);
    for row in &s.rows {
        assert!(row.layout_fits, "tp 2 × pp 2 divides every node of 8");
        let mut at = p.clone();
        at.cluster.nodes = std::num::NonZeroU32::new(row.nodes).unwrap();
        for (knob, fit) in [(Knob::SeqLen, &row.seq_len), (Knob::MicroBatch, &row.micro_batch)] {
            let fit = fit.as_ref().unwrap_or_else(|| panic!("{} nodes {knob:?}: nothing fits", row.nodes));
            assert!(sweep::fits(&at, knob, fit.value), "{} nodes {knob:?}", row.nodes);
            assert_eq!(fit.capped, fit.value == sweep::upper(&at, knob));
            if !fit.capped {
                // The next value the sweep tries (micro-batches: the next that divides the global
                // batch ÷ DP) does not fit.
                let next = (fit.value + 1..=sweep::upper(&at, knob))
                    .find(|v| knob == Knob::SeqLen || sweep::upper(&at, knob).is_multiple_of(*v))
                    .expect("below the upper end");
                assert!(!sweep::fits(&at, knob, next), "{} nodes {knob:?}", row.nodes);
            }
            assert!(0.0 < fit.step_seconds && 0.0 < fit.tokens_per_second);
        }
    }
    // More data parallelism spreads the optimizer states: the longest sequence never shrinks.
    let lens: Vec<u32> = s.rows.iter().map(|r| r.seq_len.as_ref().unwrap().value).collect();
    assert!(lens.windows(2).all(|w| w[0] <= w[1]), "{lens:?}");
}

#[test]
fn a_layout_larger_than_the_cluster_is_marked() {
    // PP 16 × TP 8 needs 128 devices: 16 nodes of 8.
    let p = plan(
        r#"{"model": "llama-3.1-405b", "framework": "megatron", "method": "pretrain", "cluster": {"nodes": 16},
            "parallel": {"tp": 8, "pp": 16, "distributed_optimizer": true}}"#,
    );
    let s = sweep::sweep(&p, 32);
    for row in &s.rows {
        assert_eq!(row.layout_fits, 16 <= row.nodes, "{} nodes", row.nodes);
        if !row.layout_fits {
            assert!(row.seq_len.is_none() && row.micro_batch.is_none());
        }
    }
}

#[test]
fn rl_plans_sweep_the_micro_batch_only() {
    let p = plan(r#"{"model": "qwen2.5-7b", "framework": "verl", "method": "grpo"}"#);
    let s = sweep::sweep(&p, 2);
    assert!(!s.seq_len_applies);
    assert!(s.rows.iter().all(|r| r.seq_len.is_none()));
    // Its micro-batches split each device's responses, not its prompts: 64 prompts × 5 ÷ 8 devices.
    assert_eq!(sweep::upper(&p, Knob::MicroBatch), 40);
    assert_eq!(sweep::micro_batches(&p, 64), [1, 2, 4, 5, 8, 10, 20, 40]);
}

#[test]
fn a_batch_smaller_than_the_data_parallel_size_is_marked() {
    // 64 sequences a step: 8 nodes of 8 give each of the 64 ranks one; 16 nodes would leave half idle.
    let p = plan(r#"{"model": "qwen2.5-7b"}"#);
    for row in sweep::sweep(&p, 64).rows {
        assert_eq!(row.batch_fits, row.n_devices <= 64, "{} devices", row.n_devices);
        assert_eq!(row.micro_batch.is_some(), row.batch_fits, "{} devices", row.n_devices);
    }
}
