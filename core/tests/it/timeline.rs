//! The whole step's timeline for drawing (`step_timeline`): every pass of every micro-batch, counted
//! by hand from the schedule's definition, and the step's parts ending at the report's step time.

use trainplan_core::plan::Plan;
use trainplan_core::schedule::Pass;
use trainplan_core::time::{StepPart, StepTimeline};
use trainplan_core::{Report, evaluate, step_timeline};

fn whole(text: &str) -> (Plan, Report, StepTimeline) {
    let plan = Plan::from_json(text).unwrap();
    let report = evaluate(&plan);
    let timeline = step_timeline(&plan);
    (plan, report, timeline)
}

/// The parts run back to back from 0 to the report's step time; the passes lie inside the pipeline
/// part, whose length is the step's pipeline time, and each rank's passes never overlap.
#[track_caller]
fn check_spans(text: &str, report: &Report, t: &StepTimeline) {
    let step = report.time.step_seconds;
    assert_eq!(t.parts.first().map(|p| p.start_seconds), Some(0.0), "{text}");
    assert!(t.parts.windows(2).all(|w| w[0].end_seconds == w[1].start_seconds), "{text}");
    assert!(t.parts.iter().all(|p| p.start_seconds < p.end_seconds), "{text}");
    let end = t.parts.last().unwrap().end_seconds;
    assert!((end - step).abs() <= 1e-12 * step, "{text}: ends at {end}, the step is {step}");
    let pipeline = t.parts.iter().find(|p| p.part == StepPart::Pipeline).unwrap();
    for rank in 0..t.n_ranks {
        let mine: Vec<_> = t.events.iter().filter(|e| e.stage == rank).collect();
        assert!(mine.windows(2).all(|w| w[0].end_seconds <= w[1].start_seconds), "{text}: rank {rank}");
    }
    let first = t.events.iter().map(|e| e.start_seconds).fold(f64::INFINITY, f64::min);
    let last = t.events.iter().map(|e| e.end_seconds).fold(0.0, f64::max);
    assert!(pipeline.start_seconds <= first, "{text}");
    // The step extends the simulated first micro-batches by the steady state (time/pipeline.rs,
    // `pipeline_makespan`); the whole simulation agrees with it to 0.04 % on the plans below.
    let length = pipeline.end_seconds - pipeline.start_seconds;
    assert!((last - pipeline.end_seconds).abs() <= 1e-3 * length, "{text}: passes end {last}, {pipeline:?}");
}

/// Llama 3.1 405B on 1,024 H100 (TP 8, PP 16, VPP 4): 1,024 sequences a step over DP 8 at micro-batch
/// 1 is 128 micro-batches; Megatron's interleaved 1F1B runs one forward and one (full) backward of
/// each micro-batch on each of the 4 chunks of each of the 16 ranks: 16 · 4 · 128 · 2 = 16,384 passes,
/// each once.
#[test]
fn the_whole_step_runs_every_pass_of_every_micro_batch() {
    let text = r#"{"model": "llama-3.1-405b", "framework": "megatron", "method": "pretrain", "cluster": {"nodes": 128},
        "parallel": {"tp": 8, "pp": 16, "vpp": 4}, "batch": {"global_batch": 1024, "seq_len": 8192}}"#;
    let (_, report, t) = whole(text);
    assert_eq!((t.n_ranks, t.n_chunks, t.n_microbatches, t.microbatches_drawn), (16, 4, 128, 128));
    assert_eq!(report.schedule.n_microbatches, 128);
    assert_eq!(t.events.len(), 16_384);
    let mut seen = std::collections::HashSet::new();
    for e in &t.events {
        assert!(e.stage < 16 && e.chunk < 4 && e.microbatch < 128 && e.pass != Pass::W);
        assert!(seen.insert((e.stage, e.chunk, e.microbatch, e.pass)), "{e:?} twice");
    }
    let parts: Vec<StepPart> = t.parts.iter().map(|p| p.part).collect();
    assert_eq!(parts, [StepPart::Pipeline, StepPart::GradientSync, StepPart::Optimizer]);
    check_spans(text, &report, &t);
}

/// ZB-H1 splits each backward into B and W (Qi et al. 2023 §3): three passes per micro-batch and rank.
#[test]
fn zero_bubble_steps_draw_their_weight_passes() {
    let text = r#"{"model": "llama-3.1-8b", "framework": "megatron", "method": "pretrain", "cluster": {"nodes": 2},
        "parallel": {"tp": 4, "pp": 4, "schedule": "zb-h1"}, "batch": {"global_batch": 64, "seq_len": 4096}}"#;
    let (_, report, t) = whole(text);
    // 64 sequences over DP 1 at micro-batch 1.
    assert_eq!(t.n_microbatches, 64);
    assert_eq!(t.events.len(), 4 * 64 * 3);
    assert_eq!(t.events.iter().filter(|e| e.pass == Pass::W).count(), 4 * 64);
    check_spans(text, &report, &t);
}

/// GRPO: the responses are generated, then scored, then the actor trains on every response (VeRL
/// counts prompts, each with n responses): the pipeline runs the responses' micro-batches.
#[test]
fn rl_steps_generate_score_then_update() {
    let text =
        r#"{"model": "qwen2.5-7b", "framework": "verl", "method": "grpo", "parallel": {"zero_stage": 3}}"#;
    let (plan, report, t) = whole(text);
    let parts: Vec<StepPart> = t.parts.iter().map(|p| p.part).collect();
    assert_eq!(&parts[..3], [StepPart::Rollout, StepPart::LogProb, StepPart::Pipeline]);
    assert_eq!(t.parts[0].end_seconds, report.time.breakdown.rollout_seconds);
    // 64 prompts × 5 responses over DP 8 at micro-batch 1: 40 micro-batches, as the report says.
    let n = u64::from(plan.rl.n_samples_per_prompt.get());
    assert_eq!((plan.batch.global_batch.get(), n, report.memory.dp), (64, 5, 8));
    assert_eq!(u64::from(t.n_microbatches), 64 * 5 / 8);
    assert_eq!(u64::from(t.n_microbatches), report.schedule.n_microbatches);
    let update = t.parts[2].start_seconds;
    assert!(t.events.iter().all(|e| update <= e.start_seconds));
    check_spans(text, &report, &t);
}

/// A step with more passes than a drawing holds draws its first micro-batches and still ends at the
/// step time: PP 1 at 2^20 sequences of micro-batch 1 is 2^20 micro-batches of 2 passes.
#[test]
fn a_step_too_long_to_draw_draws_its_first_micro_batches() {
    let text = r#"{"model": "llama-3.1-8b", "framework": "megatron", "method": "pretrain", "cluster": {"nodes": 1},
        "parallel": {"tp": 8}, "batch": {"global_batch": 1048576, "seq_len": 1024}}"#;
    let (_, report, t) = whole(text);
    assert_eq!(t.n_microbatches, 1 << 20);
    assert!(0 < t.microbatches_drawn && t.microbatches_drawn < t.n_microbatches);
    assert_eq!(t.events.len(), 2 * t.microbatches_drawn as usize);
    let end = t.parts.last().unwrap().end_seconds;
    assert!((end - report.time.step_seconds).abs() <= 1e-12 * end);
}

/// Every plan of a small grid: the spans hold (dense and MoE, each framework, RL, 1F1B and
/// interleaved, recomputation on and off).
#[test]
fn every_plan_of_a_grid_draws_its_whole_step() {
    for model in ["qwen2.5-7b", "mixtral-8x7b", "gpt2"] {
        for framework in ["megatron", "llamafactory", "verl"] {
            for method in ["pretrain", "grpo"] {
                for (tp, pp, vpp) in [(1, 1, 1), (2, 2, 1), (8, 4, 2)] {
                    let text = format!(
                        r#"{{"model": "{model}", "framework": "{framework}", "method": "{method}", "cluster": {{"nodes": 4}},
                          "parallel": {{"tp": {tp}, "pp": {pp}, "vpp": {vpp}}}, "batch": {{"global_batch": 256}}}}"#
                    );
                    let (_, report, t) = whole(&text);
                    assert_eq!(t.microbatches_drawn, t.n_microbatches, "{text}");
                    check_spans(&text, &report, &t);
                }
            }
        }
    }
}
