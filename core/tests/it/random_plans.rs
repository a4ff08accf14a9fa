//! Random plans of every knob, for what `tests/fuzz.rs` (reports, links, launch files) leaves out:
//! the whole step's timeline is finite and in order, the exports are well formed, every fix the
//! report offers resolves its finding without an error the plan did not have, every piece of
//! advice is the report of the plan it leads to, the sweep finds the largest value that fits, and
//! the search's prunings change nothing it returns.

use proptest::prelude::*;
use trainplan_core::knobs::effective;
use trainplan_core::plan::{Framework, Fsdp, Method, MoeDispatcher, PipelineSchedule};
use trainplan_core::report::Severity;
use trainplan_core::{Plan, advice, evaluate, export, memory, rules, search, step_timeline, sweep};

use crate::permalink::plan_strategy;

/// The permalink's random plans, with the schedule, sharding, MoE and offload knobs drawn too, and
/// LLaMA-Factory's pure_bf16, 8-bit AdamW, DoRA and LoRA dropout.
fn any_plan() -> impl Strategy<Value = Plan> {
    (
        plan_strategy(),
        (prop::sample::select(PipelineSchedule::ALL.to_vec()), prop::sample::select(Fsdp::ALL.to_vec())),
        (prop::sample::select(MoeDispatcher::ALL.to_vec()), prop::option::of(0.5..=4.0_f64), 1.0..=3.0_f64),
        (0..=64_u32, 0..=64_u32, 0.0..=1.0_f64, 1..=8_u32, 0.0..=0.9_f64),
        any::<[bool; 19]>(),
        prop::sample::select(vec![1_u32, 2, 6, 8, 16]),
    )
        .prop_map(
            |(
                plan,
                (schedule, fsdp),
                (dispatcher, capacity, imbalance),
                (offload, act_layers, ratio, etp, dropout),
                b,
                hpz,
            )| {
                let mut file = serde_json::to_value(plan.to_file()).expect("a plan file serializes");
                let parallel = &mut file["parallel"];
                parallel["schedule"] = schedule.wire().into();
                parallel["fsdp"] = fsdp.wire().into();
                parallel["etp"] = etp.into();
                for (key, on) in [
                    ("overlap_grad_reduce", b[0]),
                    ("overlap_param_gather", b[1]),
                    ("tp_comm_overlap", b[2]),
                    ("swap_optimizer", b[3]),
                    ("uneven_layers", b[4]),
                    ("account_embedding_loss", b[5]),
                    ("fused_kernels", b[6]),
                ] {
                    parallel[key] = on.into();
                }
                file["moe"] = serde_json::json!({
                    "dispatcher": dispatcher.wire(), "grouped_gemm": b[7], "overlap_ep_comm": b[8],
                    "capacity_factor": capacity, "pad_to_capacity": b[9], "imbalance": imbalance,
                });
                let recompute = &mut file["recompute"];
                recompute["swap_attention"] = b[10].into();
                recompute["activation_function"] = b[11].into();
                recompute["activation_function_layers"] = act_layers.into();
                recompute["layers_ratio"] = ratio.into();
                recompute["cpu_offload_layers"] = offload.into();
                file["liger_kernel"] = b[12].into();
                file["pure_bf16"] = b[13].into();
                file["optimizer"] = if b[15] { "adamw_8bit" } else { "adamw" }.into();
                file["parallel"]["offload_policy"] = b[16].into();
                file["parallel"]["zero_hpz_partition_size"] = hpz.into();
                file["parallel"]["zero_quantized_weights"] = b[17].into();
                file["parallel"]["zero_quantized_gradients"] = b[18].into();
                file["lora"]["dora"] = b[14].into();
                file["lora"]["dropout"] = dropout.into();
                // Knobs the format refuses together stay as the permalink's plan had them.
                Plan::from_json(&file.to_string()).unwrap_or(plan)
            },
        )
}

/// The plan as its file's JSON, for a failure's message.
fn text(plan: &Plan) -> String {
    serde_json::to_string(&plan.to_file()).unwrap_or_default()
}

/// The error findings of a plan, by code and the field they name.
fn errors(plan: &Plan) -> Vec<(String, Option<String>)> {
    evaluate(plan)
        .findings
        .iter()
        .filter(|f| f.severity == Severity::Error)
        .map(|f| (f.code.to_string(), f.args.get("field").cloned()))
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    /// The rollout's TP and EP change a plan's memory in the rollout engine alone, as the search
    /// takes them to (`memory::set_rollout`, which it applies to a training layout's memory
    /// instead of working it out again for each rollout setting): any plan trained with GRPO,
    /// from one rollout setting to another, holds every figure the estimate of the other gives.
    #[test]
    fn the_rollout_settings_change_only_the_rollout_engines_memory(
        plan in any_plan(),
        ppo in any::<bool>(),
        (from, to) in ((1..=16_u32, 1..=16_u32), (1..=16_u32, 1..=16_u32)),
    ) {
        let mut plan = plan;
        plan.method = if ppo { Method::Ppo } else { Method::Grpo };
        let at = |(tp, ep): (u32, u32)| {
            let mut plan = plan.clone();
            plan.rl.rollout_tp = std::num::NonZeroU32::new(tp).expect("drawn from 1");
            plan.rl.rollout_ep = std::num::NonZeroU32::new(ep).expect("drawn from 1");
            plan
        };
        let (first, second) = (at(from), at(to));
        let facts = memory::ModelFacts::of(&second);
        let mut mem = memory::estimate_with(&effective(&first), &facts);
        memory::set_rollout(&mut mem, &second, &facts);
        let whole = memory::estimate_with(&effective(&second), &facts);
        prop_assert!(whole.rollout.is_some(), "{}", text(&second));
        prop_assert_eq!(mem, whole, "{}", text(&second));
    }

    /// The micro-batch changes no byte of a plan's memory that does not scale with it (its layout,
    /// parameters, their states, buffers, overhead), as the search takes it to
    /// (`memory::estimate_rebatched`, which it uses for a plan that differs from the last only in
    /// its micro-batch): any plan, from one micro-batch to another, has every figure the full
    /// estimate gives, RL and dynamic batching included.
    #[test]
    fn the_micro_batch_changes_only_what_scales_with_it(
        plan in any_plan(),
        (from, to) in (0..=6_u32, 0..=6_u32),
    ) {
        let at = |k: u32| {
            let mut plan = plan.clone();
            plan.batch.micro_batch = std::num::NonZeroU32::new(1 << k).expect("a power of two");
            plan
        };
        let (first, second) = (at(from), at(to));
        let facts = memory::ModelFacts::of(&second);
        let (first, second_plan) = (effective(&first), effective(&second));
        let rebatched = memory::estimate_rebatched(&second_plan, &facts, &memory::estimate_with(&first, &facts));
        prop_assert_eq!(rebatched, memory::estimate_with(&second_plan, &facts), "{} from micro-batch {}", text(&second), 1 << from);
    }

    #[test]
    fn every_plan_has_a_finite_timeline_and_exports(plan in any_plan()) {
        // Every pass and part of the timeline starts and ends at a finite time, in order.
        let timeline = step_timeline(&plan);
        let spans = timeline.events.iter().map(|e| (e.start_seconds, e.end_seconds));
        let parts = timeline.parts.iter().map(|p| (p.start_seconds, p.end_seconds));
        let bad = spans.chain(parts).find(|(start, end)| !(start.is_finite() && end.is_finite() && start <= end));
        prop_assert!(bad.is_none(), "{bad:?} in the timeline of {}", text(&plan));
        // The JSON export reads back as the report; the CSV holds the header, the 16 headline
        // figures and 9 figures per stage.
        let report = evaluate(&plan);
        let json = export::report_json(&report);
        let back: Result<serde_json::Value, _> = serde_json::from_str(&json);
        prop_assert_eq!(back.ok(), serde_json::to_value(&report).ok(), "{}", json);
        let csv = export::report_csv(&report);
        let records = csv.split("\r\n").filter(|r| !r.is_empty()).count();
        prop_assert_eq!(records, 1 + 17 + 9 * report.memory.stages.len(), "{}", csv);
    }

    #[test]
    fn every_fix_resolves_its_finding(plan in any_plan()) {
        let report = evaluate(&plan);
        let before = errors(&plan);
        for f in &report.findings {
            let Some(fix) = &f.fix else { continue };
            let fixed = rules::apply(&plan, fix);
            prop_assert!(fixed.is_ok(), "{}: {fix:?} gives an invalid plan on {}", f.code, text(&plan));
            let fixed = fixed.unwrap();
            let after = errors(&fixed);
            let new: Vec<_> = after.iter().filter(|e| !before.contains(e)).collect();
            prop_assert!(new.is_empty(), "{}: {fix:?} brings {new:?} on {}", f.code, text(&plan));
            let left = evaluate(&fixed)
                .findings
                .iter()
                .any(|g| g.code == f.code && g.args.get("field") == f.args.get("field"));
            prop_assert!(!left, "{}: {fix:?} leaves it on {}", f.code, text(&plan));
        }
    }

    #[test]
    fn every_advice_is_the_report_of_the_plan_it_leads_to(plan in any_plan()) {
        let report = evaluate(&plan);
        let errors = |p: &Plan| errors(p).into_iter().filter(|(code, _)| code != "memory.does_not_fit").count();
        for a in &advice::advise(&plan) {
            let mut changed = plan.clone();
            for fix in &a.changes {
                let next = rules::apply(&changed, fix);
                prop_assert!(next.is_ok(), "{}: {fix:?} gives an invalid plan on {}", a.code, text(&plan));
                changed = next.unwrap();
            }
            let after = evaluate(&changed);
            prop_assert_eq!(a.peak_bytes, after.memory.peak_bytes, "{} on {}", a.code, text(&plan));
            prop_assert_eq!(a.step_seconds, after.time.step_seconds, "{} on {}", a.code, text(&plan));
            prop_assert_eq!(a.fits, after.memory.fits, "{} on {}", a.code, text(&plan));
            let speed = after.time.tokens_per_second / report.time.tokens_per_second - 1.0;
            prop_assert!((a.speed_delta_frac - speed).abs() < 1e-12, "{} on {}", a.code, text(&plan));
            // Never trades one broken rule for another, and moves the way it says.
            prop_assert!(errors(&changed) <= errors(&plan), "{} breaks a rule on {}", a.code, text(&plan));
            let direction = match report.memory.fits {
                _ if a.code.for_quality() => a.fits,
                true => a.fits && 0.0 < a.speed_delta_frac,
                false => a.peak_delta_bytes < 0,
            };
            prop_assert!(direction, "{} moves the wrong way on {}", a.code, text(&plan));
        }
    }

    /// The sweep's "largest value that fits" is a binary search that holds memory monotone in the
    /// knob: it agrees with a linear scan of the micro-batches that divide the global batch ÷ DP,
    /// and a sequence length that fits never follows one that does not.
    #[test]
    fn the_sweep_finds_the_largest_value_that_fits(plan in any_plan(), lengths in prop::collection::vec(1..=sweep::VALUE_MAX, 24)) {
        let per_rank = sweep::upper(&plan, sweep::Knob::MicroBatch);
        let hi = per_rank.min(48);
        // Among the micro-batches that divide the global batch ÷ DP, the largest that fits.
        let linear = (1..=hi)
            .rev()
            .filter(|v| per_rank.is_multiple_of(*v))
            .find(|&v| sweep::fits(&plan, sweep::Knob::MicroBatch, v));
        prop_assert_eq!(sweep::largest(&plan, sweep::Knob::MicroBatch, hi), linear, "{}", text(&plan));
        let mut lengths = lengths;
        lengths.sort_unstable();
        let fits: Vec<bool> = lengths.iter().map(|&v| sweep::fits(&plan, sweep::Knob::SeqLen, v)).collect();
        let regain = (1..fits.len()).find(|&i| fits[i] && !fits[i - 1]);
        prop_assert!(regain.is_none(), "{:?} on {}", regain.map(|i| (lengths[i - 1], lengths[i])), text(&plan));
    }
}

/// Plans of every framework and method with a model of up to 30 B parameters (dense and MoE) on one
/// or two nodes of at most 8 devices at up to 8K tokens: spaces small enough to search with every
/// plan evaluated, and plans that fit, so both of the search's passes run.
fn small_plan() -> impl Strategy<Value = Plan> {
    let models =
        vec!["qwen2.5-0.5b", "llama-3.2-1b", "qwen3-4b", "qwen2.5-7b", "llama-3.1-8b", "qwen3-30b-a3b"];
    (
        (prop::sample::select(Framework::ALL.to_vec()), prop::sample::select(Method::ALL.to_vec())),
        prop::sample::select(models),
        (1..=2_u32, prop::sample::select(vec![1_u32, 2, 4, 8])),
        (prop::sample::select(vec![1024_u32, 2048, 4096, 8192]), 1..=32_u32),
    )
        .prop_filter_map(
            "the format refuses the plan",
            |((framework, method), model, (nodes, per_node), (seq_len, batch))| {
                let file = serde_json::json!({
                    "model": model, "framework": framework.wire(), "method": method.wire(),
                    "cluster": {"nodes": nodes, "devices_per_node": per_node},
                    "batch": {"seq_len": seq_len, "global_batch": batch * nodes * per_node},
                });
                Plan::from_json(&file.to_string()).ok()
            },
        )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 32, ..ProptestConfig::default() })]

    /// The search's prunings (a larger micro-batch after one that does not fit; the step-time
    /// bounds, worked out in its first pass) are exact: the pruned search returns what evaluating
    /// every plan returns.
    #[test]
    fn the_pruned_search_is_the_exhaustive_one(plan in small_plan()) {
        let (fast, slow) = (search::search(&plan), search::search_unpruned(&plan));
        prop_assert_eq!(&fast.best, &slow.best, "{}", text(&plan));
        prop_assert_eq!(&fast.pareto, &slow.pareto, "{}", text(&plan));
        prop_assert_eq!(&fast.blocked, &slow.blocked, "{}", text(&plan));
        prop_assert_eq!(
            (fast.considered, fast.fit, fast.feasible),
            (slow.considered, slow.fit, slow.feasible),
            "{}",
            text(&plan)
        );
        // On threads, parts sharing their tenth fastest step: the same plans found.
        let threaded = search::search_on_threads(&plan, 3);
        prop_assert_eq!(&threaded.best, &slow.best, "{}", text(&plan));
        prop_assert_eq!(&threaded.pareto, &slow.pareto, "{}", text(&plan));
        prop_assert_eq!((threaded.considered, threaded.fit), (slow.considered, slow.fit), "{}", text(&plan));
    }
}
