//! The search: its space is the documented one (an exact count), every plan it returns is what its
//! changes produce and is feasible, the fastest comes first, and the Pareto front is a front.

use trainplan_core::plan::Plan;
use trainplan_core::report::Severity;
use trainplan_core::search::{SearchResult, search, search_unpruned};
use trainplan_core::{evaluate, rules};

fn plan(text: &str) -> Plan {
    Plan::from_json(text).unwrap_or_else(|e| panic!("{text}: {e}"))
}

const MEGATRON_70B: &str = r#"{"model": "llama-3.1-70b", "hardware": "h100-sxm-80g",
    "cluster": {"nodes": 4, "devices_per_node": 8}, "framework": "megatron", "method": "pretrain",
    "parallel": {"tp": 8, "pp": 2}, "batch": {"micro_batch": 1, "global_batch": 64, "seq_len": 4096}}"#;
const HF_70B: &str = r#"{"model": "llama-3.1-70b", "hardware": "h100-sxm-80g", "framework": "llamafactory",
    "method": "sft-full", "parallel": {"zero_stage": 2}, "batch": {"micro_batch": 2, "global_batch": 64, "seq_len": 4096}}"#;

/// Llama 3.1 405B GRPO on VeRL, 16 nodes of 8 H100: plans fit, but none runs (below).
const VERL_405B: &str = r#"{"model": "llama-3.1-405b", "framework": "verl", "method": "grpo", "cluster": {"nodes": 16},
        "batch": {"global_batch": 128}}"#;

#[test]
fn the_megatron_space_is_the_documented_one() {
    // Llama-3-8B (32 layers, 32 heads), one node of 8, 4K tokens (no CP), global batch 64: (TP, PP)
    // with TP | 8 and | 32 heads, PP | 32 and TP · PP | 8 are (1,1) (1,2) (1,4) (1,8) (2,1) (2,2)
    // (2,4) (4,1) (4,2) (8,1). VPP over the divisors of the n = 32/PP layers of a stage (PP 2: 5,
    // PP 4: 4, PP 8: 3); six recomputations (none, selective, full uniform, full block of ⌈n/4⌉,
    // ⌈n/2⌉, ⌈3n/4⌉ layers, all below n here); where DP > 1 the distributed optimizer or Megatron
    // FSDP, each with the optimizer's states on the device or offloaded (4 ways, else 1);
    // micro-batch b a power of two with b · DP ≤ 64 (DP 8: 4, 4: 5, 2: 6, 1: 7). Counted by hand as
    // ways · VPP · 6 · micro-batches: (1,1) 4·1·6·4 = 96, (1,2) 4·5·6·5 = 600, (1,4) 4·4·6·6 = 576,
    // (1,8) 1·3·6·7 = 126, (2,1) 4·1·6·5 = 120, (2,2) 4·5·6·6 = 720, (2,4) 1·4·6·7 = 168,
    // (4,1) 4·1·6·6 = 144, (4,2) 1·5·6·7 = 210, (8,1) 1·1·6·7 = 42: 2,802.
    let p = plan(
        r#"{"model": "llama-3-8b", "framework": "megatron", "method": "pretrain",
            "batch": {"micro_batch": 1, "global_batch": 64, "seq_len": 4096}}"#,
    );
    assert_eq!(search(&p).considered, 2802);
}

#[test]
fn pipelines_that_do_not_divide_the_layers_are_searched_uneven() {
    // Qwen2.5-7B has 28 layers and 28 heads (TP 8 stays out): PP 8 does not divide the layers, but
    // 2 + 6 × 4 + 2 is Megatron's first/last layout (layout::uneven_sizes), and each stage's layers
    // divide by VPP 2 (not 4), which Megatron-LM then takes (transformer_block.py
    // `get_num_layers_to_build`). VPP: PP 2 over 14 layers 4 (1, 2, 7, 14), PP 4 over 7 layers 2,
    // PP 8 uneven 2; six recomputations each (blocks of ⌈n/4⌉, ⌈n/2⌉, ⌈3n/4⌉ < n); 4 ways of
    // sharding and placing the optimizer's states where DP > 1, else 1. By hand:
    // (1,1) 4·1·6·4 = 96, (1,2) 4·4·6·5 = 480, (1,4) 4·2·6·6 = 288, (1,8) 1·2·6·7 = 84,
    // (2,1) 4·1·6·5 = 120, (2,2) 4·4·6·6 = 576, (2,4) 1·2·6·7 = 84, (4,1) 4·1·6·6 = 144,
    // (4,2) 1·4·6·7 = 168: 2,040; without uneven stages it would lose (1,8): 1,956.
    let p = plan(
        r#"{"model": "qwen2.5-7b", "framework": "megatron", "method": "pretrain",
            "batch": {"micro_batch": 1, "global_batch": 64, "seq_len": 4096}}"#,
    );
    assert_eq!(search(&p).considered, 2040);
}

#[test]
fn every_plan_found_is_what_its_changes_make_and_is_feasible() {
    // DeepSeek-V2-Lite's 27 layers: its plans with PP 2, 4 or 8 need uneven stages.
    let lite = r#"{"model": "deepseek-v2-lite", "framework": "megatron", "method": "pretrain", "cluster": {"nodes": 2},
        "batch": {"micro_batch": 1, "global_batch": 256, "seq_len": 4096}}"#;
    for text in [MEGATRON_70B, HF_70B, r#"{"model": "qwen2.5-7b"}"#, lite] {
        let p = plan(text);
        let result = search(&p);
        assert!(!result.best.is_empty(), "{text}");
        assert!(result.feasible <= result.fit && result.fit <= result.considered);
        for c in result.best.iter().chain(&result.pareto) {
            let mut changed = p.clone();
            for fix in &c.changes {
                changed = rules::apply(&changed, fix).unwrap_or_else(|e| panic!("{fix:?}: {e}"));
            }
            let report = evaluate(&changed);
            assert!(report.memory.fits);
            assert_eq!(report.memory.peak_bytes, c.peak_bytes);
            assert_eq!(report.time.step_seconds, c.step_seconds);
            assert!(report.findings.iter().all(|f| f.severity != Severity::Error), "{:?}", report.findings);
        }
        assert!(result.best.windows(2).all(|w| w[1].tokens_per_second <= w[0].tokens_per_second));
    }
}

#[test]
fn the_fastest_plan_beats_the_users_own_when_it_is_in_the_space() {
    // The default plan (LLaMA-Factory LoRA, ZeRO 0, full recomputation, micro-batch 1) is a point
    // of the HF space but for the gradient-reduction overlap the search turns on.
    let p = plan(r#"{"model": "qwen2.5-7b"}"#);
    let own = evaluate(&p).time.tokens_per_second;
    let best = &search(&p).best[0];
    assert!(own <= best.tokens_per_second, "{own} > {}", best.tokens_per_second);
}

#[test]
fn a_70b_that_does_not_fit_gets_plans_that_do() {
    let p = plan(MEGATRON_70B);
    assert!(!evaluate(&p).memory.fits);
    let result = search(&p);
    assert!(result.best[0].peak_bytes <= evaluate(&p).memory.usable_bytes);
    // Full SFT of 70.6B on 8 × 80 GB: only ZeRO-3 with offloading fits (ZeRO paper's 16 B/param).
    let result = search(&plan(HF_70B));
    for c in &result.best {
        let zero3 = c.changes.iter().any(|f| f.field == "parallel.zero_stage" && f.value == 3);
        let offload = c.changes.iter().any(|f| f.field == "parallel.offload_optimizer" && f.value == true);
        assert!(zero3 && offload, "{:?}", c.changes);
    }
}

#[test]
fn the_pareto_front_is_a_front() {
    let result = search(&plan(MEGATRON_70B));
    let front = &result.pareto;
    assert!(2 <= front.len());
    // Least memory first, each step buys speed with memory.
    assert!(
        front
            .windows(2)
            .all(|w| w[0].peak_bytes <= w[1].peak_bytes && w[0].tokens_per_second < w[1].tokens_per_second)
    );
    // No plan among the fastest dominates a front plan.
    for f in front {
        assert!(
            !result
                .best
                .iter()
                .any(|b| b.peak_bytes < f.peak_bytes && f.tokens_per_second < b.tokens_per_second)
        );
    }
    // The fastest plan is on the front.
    assert_eq!(front.last().map(|c| c.tokens_per_second), Some(result.best[0].tokens_per_second));
}

#[test]
fn a_plan_nothing_can_fit_returns_nothing_and_says_how_much_it_tried() {
    // Llama-3.1-405B pretraining with Megatron on one node of 8 RTX 4090: TP · PP ≤ 8 and DP = 1, so
    // each device holds at least 18 B × 405B ÷ 8 ≈ 911 GB of model states (Megatron dist-opt table).
    let p = plan(
        r#"{"model": "llama-3.1-405b", "hardware": "rtx-4090-24g", "framework": "megatron", "method": "pretrain"}"#,
    );
    let result = search(&p);
    assert!(0 < result.considered);
    assert_eq!(result.fit, 0);
    assert!(result.best.is_empty() && result.pareto.is_empty());
}

#[test]
fn pruning_changes_nothing_but_the_work() {
    // The pruned search must return exactly what evaluating every plan returns.
    let plans = [
        MEGATRON_70B,
        HF_70B,
        r#"{"model": "qwen2.5-7b"}"#,
        r#"{"model": "mixtral-8x7b", "framework": "megatron", "method": "pretrain", "cluster": {"nodes": 2},
            "batch": {"global_batch": 128, "seq_len": 8192}}"#,
        r#"{"model": "qwen2.5-72b", "hardware": "ascend-910b2", "framework": "mindspeed-llm", "method": "sft-full",
            "cluster": {"nodes": 4}, "batch": {"global_batch": 64, "seq_len": 4096}}"#,
        r#"{"model": "qwen2.5-7b", "framework": "verl", "method": "grpo"}"#,
        // Across nodes, where ZeRO's and FSDP's traffic every micro-batch bounds the step (time/sharded.rs).
        r#"{"model": "qwen2.5-7b", "framework": "verl", "method": "grpo", "cluster": {"nodes": 2},
            "batch": {"global_batch": 64}}"#,
        r#"{"model": "llama-3-8b", "framework": "deepspeed", "method": "sft-full", "cluster": {"nodes": 2},
            "batch": {"global_batch": 64, "seq_len": 2048}}"#,
        r#"{"model": "llama-3.1-8b", "framework": "megatron", "method": "pretrain", "cluster": {"nodes": 4},
            "batch": {"global_batch": 128, "seq_len": 1024}}"#,
        // Freeze-tuning: its frozen layers' forwards alone in the bound, its trained layers' states.
        r#"{"model": "qwen2.5-14b", "method": "freeze", "freeze_layers": 8, "cluster": {"nodes": 2},
            "batch": {"global_batch": 64, "seq_len": 4096}}"#,
    ];
    let mut pruned = 0;
    for text in plans {
        let p = plan(text);
        let (fast, slow) = (search(&p), search_unpruned(&p));
        assert_eq!(fast.best, slow.best, "{text}");
        assert_eq!(fast.pareto, slow.pareto, "{text}");
        assert_eq!(
            (fast.considered, fast.fit, fast.feasible),
            (slow.considered, slow.fit, slow.feasible),
            "{text}"
        );
        assert_eq!(slow.pruned, 0);
        pruned += fast.pruned;
    }
    assert!(0 < pruned, "pruning never happened");
}

#[test]
fn a_search_in_slices_is_the_search_at_once() {
    // The page runs the search a slice at a time; slices of any size give the same result.
    let p = plan(MEGATRON_70B);
    let whole = search(&p);
    for budget in [1, 7, 100] {
        let mut s = trainplan_core::search::Search::new(&p);
        let mut last = 0;
        let mut steps = 0;
        while !s.step(budget) {
            let (done, total) = s.progress();
            assert!(last < done && done <= total, "{done}/{total}");
            last = done;
            steps += 1;
        }
        let (done, total) = s.progress();
        assert_eq!(done, total);
        assert!(budget != 1 || 100 < steps);
        assert_eq!(s.finish(), whole, "budget {budget}");
    }
}

/// The plans the split searches (parts, threads) are checked on: Megatron, HF, RL, and RL where every
/// plan that fits breaks a rule.
const SPLIT: [&str; 6] = [
    MEGATRON_70B,
    HF_70B,
    r#"{"model": "qwen2.5-7b", "framework": "verl", "method": "grpo"}"#,
    // VeRL's Megatron engine: the Megatron space, no schedule or uneven stage it does not take.
    r#"{"model": "qwen2.5-7b", "framework": "verl-megatron", "method": "grpo"}"#,
    VERL_405B,
    // MoE RL: the rollout's TP and EP walked over each training layout, whose memory a part works
    // out once for all of them (84,120 plans).
    r#"{"model": "qwen3-30b-a3b", "framework": "mindspeed-rl", "method": "grpo"}"#,
];

/// VeRL's Megatron engine offloads the optimizer states or the parameters between its passes at
/// any DP (`optimizer_offload`, `param_offload`), and the search walks both: Qwen2.5-32B GRPO on 8
/// H100 fits its rollout only with the optimizer states offloaded (12 bytes a parameter over at
/// most 8 devices, 49 GB, beside the engine's 48 GB of an 80 GB device), which megatron-core's own
/// CPU optimizer could not do without the distributed optimizer (DP 1 with the model over all 8).
#[test]
fn verl_megatron_searches_its_offload() {
    let p = plan(
        r#"{"model": "qwen2.5-32b", "framework": "verl-megatron", "method": "grpo", "rl": {"rollout_tp": 4}}"#,
    );
    let result = search(&p);
    let best = result.best.first().expect("a plan runs");
    let set =
        |field: &str| best.changes.iter().find(|f| f.field.path() == field).and_then(|f| f.value.as_bool());
    assert_eq!(set("parallel.offload_optimizer"), Some(true), "{:?}", best.changes);
    let report = evaluate(&rules::apply_all(&p, &best.changes).expect("the changes apply"));
    assert!(report.memory.fits && !report.findings.iter().any(|f| f.severity == Severity::Error));
    assert!(!report.memory.stages.is_empty() && report.memory.dp == 1, "{}", report.memory.dp);
}

/// A plan found names only settings its framework takes (`knobs::applies`): VeRL's Megatron engine
/// has no `overlap_grad_reduce` to set, its FSDP actor no distributed optimizer.
#[test]
fn found_plans_change_only_what_the_framework_takes() {
    use trainplan_core::knobs::{Knob, applies};
    let mut checked = 0;
    for text in SPLIT {
        let p = plan(text);
        let result = search(&p);
        for change in result.best.iter().chain(&result.pareto).flat_map(|c| &c.changes) {
            let knob = Knob::ALL.iter().find(|k| k.field() == Some(change.field));
            if let Some(&knob) = knob {
                assert!(applies(p.framework, p.method, knob).yes(), "{text}: {change:?}");
                checked += 1;
            }
        }
    }
    assert!(100 < checked, "{checked} changes");
}

/// Whether `got` found `found`'s fastest plans and front, having considered, pruned, fitted and kept
/// as many plans as `counted` and seen the same rules broken (the plans simulated may differ).
fn assert_finds(got: &SearchResult, found: &SearchResult, counted: &SearchResult, what: &str) {
    assert_eq!(got.best, found.best, "{what}");
    assert_eq!(got.pareto, found.pareto, "{what}");
    assert_eq!(got.blocked, counted.blocked, "{what}");
    assert_eq!(
        (got.considered, got.pruned, got.fit, got.feasible),
        (counted.considered, counted.pruned, counted.fit, counted.feasible),
        "{what}"
    );
}

#[test]
fn a_search_split_in_parts_merges_into_the_exhaustive_search() {
    // The page splits the space between Web Workers, one per core; merged, the parts must return
    // exactly what evaluating every plan in one piece returns, whatever the number of parts.
    use trainplan_core::search::{Partial, Search, merge};
    for text in SPLIT {
        let p = plan(text);
        let exhaustive = search_unpruned(&p);
        let whole = search(&p);
        for parts in [1, 2, 3, 8, 16] {
            let partials: Vec<_> = (0..parts)
                .map(|part| {
                    let mut s = Search::part(&p, part, parts);
                    while !s.step(50) {}
                    // Through JSON, as a worker sends it.
                    let json = serde_json::to_string(&s.finish_part()).unwrap();
                    serde_json::from_str(&json).unwrap()
                })
                .collect();
            let merged = merge(&p, &partials).unwrap();
            assert_finds(&merged, &exhaustive, &whole, &format!("{text}: {parts} parts"));
        }
        // Too few parts, none, or parts that name plans without their settings are refused, not
        // merged.
        let halves: Vec<_> = (0..2)
            .map(|part| {
                let mut s = Search::part(&p, part, 2);
                while !s.step(usize::MAX) {}
                s.finish_part()
            })
            .collect();
        assert!(merge(&p, &halves[..1]).is_err());
        assert!(merge(&p, &[]).is_err());
        let mut bare = serde_json::to_value(&halves[0]).unwrap();
        bare["settings"] = serde_json::json!([]);
        let bare: Partial = serde_json::from_value(bare).unwrap();
        assert!(merge(&p, &[bare, halves[1].clone()]).is_err(), "{text}: a part without its settings");
    }
    // Halves of two searches of different sizes do not make one.
    let (a, b) = (plan(SPLIT[0]), plan(SPLIT[1]));
    let halves = [Search::part(&a, 0, 2).finish_part(), Search::part(&b, 1, 2).finish_part()];
    assert_ne!(halves[0].space, halves[1].space);
    assert!(merge(&a, &halves).is_err());
}

#[test]
fn a_search_on_threads_finds_what_the_search_on_one_does() {
    // The command line runs the parts on every core; only the count of schedules simulated may
    // differ (each part prunes by its own fastest plans).
    use trainplan_core::search::search_on_threads;
    for text in SPLIT {
        let p = plan(text);
        let one = search(&p);
        for threads in [1, 2, 3, 8] {
            let many = search_on_threads(&p, threads);
            assert_finds(&many, &one, &one, &format!("{text}: {threads} threads"));

            if threads == 1 {
                assert_eq!(many, one, "{text}: one thread is the search itself");
            }
        }
    }
}

#[test]
fn context_parallelism_is_searched_by_ring_and_by_all_to_all() {
    // Llama-3-8B (32 layers, 32 heads, 8 key/value heads) on one node of 2 at 8K tokens (CP worth
    // trying), global batch 64: TP · PP · CP divides 2, so (1,1,1), (2,1,1), (1,2,1) and (1,1,2).
    // Counted by hand as ways of sharding and placing the optimizer's states (DDP or FSDP, each on
    // the device or offloaded, where DP > 1) · VPP · 6 recomputations · micro-batches (· CP
    // algorithms): (1,1,1) DP 2: 4·1·6·6 = 144; (2,1,1): 1·1·6·7 = 42; (1,2,1): VPP over the 16
    // layers of a stage (1, 2, 4, 8, 16): 1·5·6·7 = 210; (1,1,2): 1·1·6·7 = 42 by ring and 42 more
    // by all-to-all (32 heads and 8 key/value heads split over TP 1 × CP 2): 438 + 42 = 480.
    let p = plan(
        r#"{"model": "llama-3-8b", "framework": "megatron", "method": "pretrain", "cluster": {"devices_per_node": 2},
            "batch": {"micro_batch": 1, "global_batch": 64, "seq_len": 8192}}"#,
    );
    let result = search(&p);
    assert_eq!(result.considered, 480);
    // The plans found carry the algorithm they were evaluated with.
    for found in result.best.iter().chain(&result.pareto) {
        let fixed = rules::apply_all(&p, &found.changes).unwrap();
        assert_eq!(evaluate(&fixed).time.step_seconds, found.step_seconds);
    }
    // VeRL has no choice: its space is the same whatever the plan says.
    let verl = |algo: &str| {
        let text = format!(
            r#"{{"model": "qwen2.5-7b", "framework": "verl", "method": "grpo", "parallel": {{"cp_algo": "{algo}"}},
                "rl": {{"max_prompt_length": 1024, "max_response_length": 8192}}}}"#
        );
        search(&plan(&text)).considered
    };
    assert_eq!(verl("ring"), verl("alltoall"));
}

#[test]
fn rl_searches_the_rollout_engines_tp() {
    // Qwen2.5-32B GRPO on VeRL, one node of 8 H100: its bf16 weights (32.8 B parameters × 2 B =
    // 65.5 GB) overflow the engine's share of a device at rollout TP 1 (gpu_memory_utilization 0.6 ×
    // 80 GB = 48 GB), so every plan that kept TP 1 would break rl.engine_too_small.
    let p = plan(r#"{"model": "qwen2.5-32b", "framework": "verl", "method": "grpo"}"#);
    let codes: Vec<String> = evaluate(&p).findings.iter().map(|f| f.code.to_string()).collect();
    assert!(codes.iter().any(|c| c == "rl.engine_too_small"), "{codes:?}");
    let result = search(&p);
    // The VeRL space on 8 devices, global batch 64, 4K tokens (no Ulysses): ZeRO 0, 2 and 3 (its
    // engine has no ZeRO-1: `choices::zero_offered`), each with nothing offloaded, the optimizer
    // states, the parameters or both (VeRL's FSDP engine offloads either at any sharding), and where
    // the gradients are sharded (ZeRO 2 and 3) reduced every micro-batch or once an update
    // (`use_no_sync_for_gradient_accumulation`): 4 + 2 · 4 · 2 = 20 ways; Liger's kernels off and on (`use_liger`: Liger patches `qwen2`); checkpointing on or
    // off; rollout TP over the divisors of 8 that divide the 40 heads (1, 2, 4, 8); micro-batch over
    // powers of two to 32, b · DP ≤ the step's 64 prompts × 5 responses (320):
    // 20 · 2 · 2 · 4 · 6 = 1,920.
    assert_eq!(result.considered, 1920);
    for c in result.best.iter().chain(&result.pareto) {
        let tp = c.changes.iter().find(|f| f.field == "rl.rollout_tp").and_then(|f| f.value.as_u64());
        assert!(tp.is_some_and(|tp| 2 <= tp), "{:?}", c.changes);
        let changed = rules::apply_all(&p, &c.changes).expect("the changes apply");
        let report = evaluate(&changed);
        assert!(report.findings.iter().all(|f| f.severity != Severity::Error), "{:?}", report.findings);
        assert_eq!(report.time.step_seconds, c.step_seconds);
    }
    assert!(!result.best.is_empty());
    // On FSDP2 (`strategy: fsdp2`) each sharding also runs FSDP2's own CPU offload alone
    // (`offload_policy`): 5 ways where there were 4, (1 + 2 · 2) · 5 = 25 of them, 2,400 plans; the
    // ones that keep it run it, as the search found them, and the pruning keeps what evaluating every
    // plan finds: here the Pareto front's least memory (54.7 GB against the fastest plan's 77.6).
    let fsdp2 = plan(
        r#"{"model": "qwen2.5-32b", "framework": "verl", "method": "grpo", "parallel": {"fsdp": "torch_fsdp2"}}"#,
    );
    let result = search(&fsdp2);
    assert_eq!(result.considered, 2400);
    let every = trainplan_core::search::search_unpruned(&fsdp2);
    assert_eq!(
        (&result.best, &result.pareto, result.fit, result.feasible),
        (&every.best, &every.pareto, every.fit, every.feasible)
    );
    let offloaded = |c: &trainplan_core::search::Candidate| {
        c.changes.iter().any(|f| f.field == "parallel.offload_policy")
    };
    assert!(result.pareto.iter().any(offloaded), "{:?}", result.pareto);
    for c in result.best.iter().chain(&result.pareto) {
        let changed = rules::apply_all(&fsdp2, &c.changes).expect("the changes apply");
        assert_eq!(evaluate(&changed).time.step_seconds, c.step_seconds);
    }
}

#[test]
fn moe_rl_searches_the_rollout_engines_ep() {
    // Qwen3-235B-A22B GRPO on VeRL, 8 nodes of 8 H100: its bf16 weights (470 GB) are 58.8 GB a
    // device even at rollout TP 8, over the engine's 0.6 × 80 GB = 48 GB, so without the rollout's
    // expert parallelism every plan breaks rl.engine_too_small.
    let p = plan(
        r#"{"model": "qwen3-235b-a22b", "framework": "verl", "method": "grpo", "cluster": {"nodes": 8}}"#,
    );
    let tp8 = plan(
        r#"{"model": "qwen3-235b-a22b", "framework": "verl", "method": "grpo", "cluster": {"nodes": 8}, "rl": {"rollout_tp": 8}}"#,
    );
    let report = evaluate(&tp8);
    let too_small =
        report.findings.iter().find(|f| f.code == "rl.engine_too_small").expect("too small at TP 8");
    // The fix the rule offers spreads the experts: the smallest EP (a multiple of the 8 devices of a
    // node, rule verl.rollout_ep_nodes, and above TP 8) whose weights fit.
    let fix = too_small.fix.as_ref().expect("a fix");
    assert_eq!((fix.field.to_string(), fix.value.as_u64()), ("rl.rollout_ep".to_owned(), Some(16)));
    let result = search(&p);
    // ZeRO, offload and the reduction's timing (20 ways, above) × Liger off and on (2: Liger patches `qwen3_moe`) ×
    // checkpointing (2) × micro-batches 1, 2, 4 (b · DP 64 ≤ 64 prompts × 5 responses) × the
    // rollout's (TP, EP): TP 1, 2, 4, 8 (dividing the 64 heads) each alone and with EP 8, 16, 32, 64
    // above it (multiples of the node's 8 that divide the 64 devices, at most the 128 experts):
    // 4 + 4 + 4 + 4 + 3 = 19 pairs: 20 · 2 · 2 · 3 · 19 = 4,560.
    assert_eq!(result.considered, 4560);
    assert!(!result.best.is_empty(), "{:?}", result.blocked);
    for c in result.best.iter().chain(&result.pareto) {
        let ep = c.changes.iter().find(|f| f.field == "rl.rollout_ep").and_then(|f| f.value.as_u64());
        assert!(ep.is_some_and(|ep| 16 <= ep), "{:?}", c.changes);
        let report = evaluate(&rules::apply_all(&p, &c.changes).expect("the changes apply"));
        assert!(report.findings.iter().all(|f| f.severity != Severity::Error), "{:?}", report.findings);
        assert_eq!(report.time.step_seconds, c.step_seconds);
    }
}

#[test]
fn a_search_whose_plans_fit_but_break_rules_says_which() {
    // 405B's bf16 weights are 811 GB: 101 GB per device even at the largest rollout TP within a
    // node (8), against the engine's 0.6 × 80 GB = 48 GB, so every plan that fits breaks
    // rl.engine_too_small. (On 128 devices: on 64, the update's states alone, 16 bytes a parameter
    // over 64 devices, are 101 GB, and no plan fits.)
    let p = plan(VERL_405B);
    let result = search(&p);
    assert!(0 < result.fit && result.feasible == 0 && result.best.is_empty(), "{result:?}");
    let first = &result.blocked[0];
    assert_eq!((first.code.as_str(), first.plans), ("rl.engine_too_small", result.fit));
    assert!(result.blocked.windows(2).all(|w| w[1].plans <= w[0].plans));
    // Its example is a plan that fits and breaks it.
    let report = evaluate(&rules::apply_all(&p, &first.changes).expect("the changes apply"));
    assert!(report.memory.fits);
    assert!(report.findings.iter().any(|f| f.code == first.code && f.severity == Severity::Error));
    // A part names its rules by their dotted names, as a worker sends them; a name no rule has is
    // refused when read back.
    let mut part = trainplan_core::search::Search::part(&p, 0, 1);
    while !part.step(usize::MAX) {}
    let json = serde_json::to_string(&part.finish_part()).unwrap();
    assert!(json.contains("\"rl.engine_too_small\""), "{json}");
    let renamed = json.replace("rl.engine_too_small", "rl.no_such_rule");
    assert!(serde_json::from_str::<trainplan_core::search::Partial>(&renamed).is_err());
    // A search that finds plans also says what the others broke (each of them at least one rule),
    // and nothing when every plan that fits keeps every rule.
    let megatron = search(&plan(MEGATRON_70B));
    assert!(megatron.feasible < megatron.fit);
    assert!(megatron.blocked.iter().map(|b| b.plans).sum::<u64>() >= megatron.fit - megatron.feasible);
    let lora = search(&plan(r#"{"model": "qwen2.5-7b"}"#));
    assert_eq!((lora.fit, lora.blocked.len()), (lora.feasible, 0));
}

#[test]
fn a_method_the_framework_cannot_train_is_searched_no_further_than_the_plan() {
    // PPO on MindSpeed-LLM: no layout or memory knob makes MindSpeed-LLM an RL framework, so the
    // space is the plan alone (1), and the rule it breaks comes first, with its fix, before the
    // other rules that plan breaks (here the batch: 1,001 prompts × 6 responses = 6,006 samples,
    // not a multiple of DP 16 × micro-batch 1).
    let p = plan(
        r#"{"model": "qwen2.5-0.5b", "cluster": {"nodes": 2}, "framework": "mindspeed-llm",
            "method": "ppo", "rl": {"n_samples_per_prompt": 6},
            "batch": {"micro_batch": 1, "global_batch": 1001, "seq_len": 1024}}"#,
    );
    let result = search(&p);
    assert_eq!((result.considered, result.fit, result.feasible), (1, 1, 0), "{result:?}");
    let codes: Vec<&str> = result.blocked.iter().map(|b| b.code.as_str()).collect();
    assert_eq!(codes.first(), Some(&"method.needs_rl_framework"), "{codes:?}");
    assert!(codes.contains(&"batch.divisible"), "{codes:?}");
    let finding = evaluate(&p).findings.into_iter().find(|f| f.code.as_str() == "method.needs_rl_framework");
    let fix = finding.and_then(|f| f.fix).expect("the rule's fix");
    // On the framework the fix names, the search walks the whole space again.
    let fixed = rules::apply(&p, &fix).expect("the fix applies");
    assert!(1 < search(&fixed).considered);
}

/// VeRL packing its micro-batches by tokens reads no `micro_batch` (`memory::packs_microbatches`):
/// the search keeps the plan's rather than walking copies of each plan that differ in it alone, so
/// its space is the one without dynamic batching less every other micro-batch, and no plan found
/// changes it.
#[test]
fn verls_packed_micro_batches_are_not_walked() {
    let text = |dynamic: bool| {
        format!(
            r#"{{"model": "qwen2.5-7b", "framework": "verl", "method": "grpo", "batch": {{"global_batch": 64}},
                "rl": {{"dynamic_batch": {dynamic}, "max_tokens_per_device": 16384}}}}"#
        )
    };
    let (packed, walked) = (search(&plan(&text(true))), search(&plan(&text(false))));
    assert!(
        0 < packed.considered && packed.considered < walked.considered,
        "{} {}",
        packed.considered,
        walked.considered
    );
    assert!(!packed.best.is_empty());
    let changes_micro_batch = |r: &SearchResult| {
        r.best
            .iter()
            .chain(&r.pareto)
            .any(|c| c.changes.iter().any(|f| f.field.path() == "batch.micro_batch"))
    };
    assert!(!changes_micro_batch(&packed));
    assert!(changes_micro_batch(&walked));
}

/// DeepSpeed ZeRO-3 across nodes walks ZeRO++'s hpZ over a node (`search::space::hpz_options`), and
/// where the nodes' devices share one slow NIC the fastest plan keeps the backward's gathers in the
/// node with it. Llama-3-8B full SFT on 4 nodes of 8 (DP 32, 256 sequences a step): DeepSpeed's
/// offloads as its `zero/config.py` takes them (ZeRO 0: none; 1 and 2: none or the optimizer; 3:
/// none, the optimizer, or both) are 1 + 2 + 2 + 3 = 8, ZeRO-3's 3 again with hpZ 8: 11; gradient
/// checkpointing off or on, 2; micro-batches 1, 2, 4, 8 (b · 32 ≤ 256), 4. By hand 11 · 2 · 4 = 88
/// (64 without hpZ). On one node hpZ gathers over the same links either way and is not walked:
/// 8 · 2 · 6 (b · 8 ≤ 256 to 32) = 96.
#[test]
fn zero3_across_nodes_searches_hpz_over_a_node() {
    let text = |hardware: &str, nodes: u32| {
        format!(
            r#"{{"model": "llama-3-8b", "hardware": {hardware}, "framework": "deepspeed", "method": "sft-full",
                "cluster": {{"nodes": {nodes}}}, "parallel": {{"zero_stage": 3}},
                "batch": {{"micro_batch": 1, "global_batch": 256, "seq_len": 4096}}}}"#
        )
    };
    let shared_nic = r#"{"custom": {"name": "shared NIC", "vendor": "nvidia", "memory_gb": 80, "bf16_tflops": 312,
        "memory_tb_per_s": 2.0, "intra_node_gb_per_s": 600, "inter_node_gbit_per_s": 25, "devices_per_node": 8}}"#;
    let p = plan(&text(shared_nic, 4));
    let result = search(&p);
    assert_eq!(result.considered, 88);
    assert_eq!(search(&plan(&text(shared_nic, 1))).considered, 96);
    let best = result.best.first().expect("plans run");
    let set = |field: &str| best.changes.iter().find(|f| f.field.path() == field).map(|f| f.value.clone());
    assert_eq!(set("parallel.zero_hpz_partition_size"), Some(8.into()), "{:?}", best.changes);
    // The plan found is what its changes make, runs, and beats the same plan without hpZ.
    let found = rules::apply_all(&p, &best.changes).expect("the changes apply");
    let report = evaluate(&found);
    assert!(report.memory.fits && !report.findings.iter().any(|f| f.severity == Severity::Error));
    let mut without = found.clone();
    without.parallel.zero_hpz = std::num::NonZeroU32::MIN;
    assert!(report.time.step_seconds < evaluate(&without).time.step_seconds);
    // The quantized weights and gradients change the numbers trained on: never set by the search.
    for c in result.best.iter().chain(&result.pareto) {
        assert!(c.changes.iter().all(|f| !f.field.path().starts_with("parallel.zero_quantized")), "{c:?}");
    }
}
