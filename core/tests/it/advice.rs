//! Advice is computed, never canned: each piece's figures are the report of the plan it leads to,
//! it keeps every framework rule the plan keeps, and it moves the plan the right way (memory when
//! the plan does not fit, speed when it does). Two savings are checked against published tables.

use trainplan_core::plan::Plan;
use trainplan_core::{advice, evaluate, rules};

/// Plans across frameworks, fitting and not.
const PLANS: &[&str] = &[
    // The page's default: Qwen2.5-7B LoRA SFT, LLaMA-Factory, 8 × H100.
    r#"{"model": "qwen2.5-7b"}"#,
    r#"{"model": "llama-3.1-70b", "hardware": "h100-sxm-80g", "cluster": {"nodes": 4, "devices_per_node": 8},
        "framework": "megatron", "method": "pretrain", "parallel": {"tp": 8, "pp": 2},
        "batch": {"micro_batch": 1, "global_batch": 64, "seq_len": 4096}}"#,
    r#"{"model": "llama-3.1-70b", "hardware": "h100-sxm-80g", "framework": "llamafactory", "method": "sft-full",
        "parallel": {"zero_stage": 2}, "batch": {"micro_batch": 2, "global_batch": 64, "seq_len": 4096}}"#,
    r#"{"model": "qwen2.5-72b", "hardware": "ascend-910b2", "cluster": {"nodes": 8, "devices_per_node": 8},
        "framework": "mindspeed-llm", "method": "pretrain", "parallel": {"tp": 8, "pp": 4},
        "recompute": {"granularity": "none"}, "batch": {"micro_batch": 1, "global_batch": 64, "seq_len": 8192}}"#,
    r#"{"model": "llama-3-8b", "hardware": "a100-sxm-80g", "framework": "deepspeed", "method": "sft-full",
        "attention": "eager", "parallel": {"zero_stage": 3}, "batch": {"micro_batch": 1, "global_batch": 8, "seq_len": 2048}}"#,
    r#"{"model": "qwen2.5-7b", "framework": "verl", "method": "grpo"}"#,
    // VeRL GRPO with 16K-token responses under FSDP full sharding (ZeRO-3).
    r#"{"model": "qwen2.5-7b", "framework": "verl", "method": "grpo", "parallel": {"zero_stage": 3},
        "rl": {"rollout_tp": 2, "max_response_length": 16384}, "batch": {"global_batch": 32}}"#,
    // The same with 32K-token responses and four sequences per micro-batch: it does not fit.
    r#"{"model": "qwen2.5-7b", "framework": "verl", "method": "grpo", "parallel": {"zero_stage": 3},
        "rl": {"rollout_tp": 2, "max_response_length": 32768}, "batch": {"global_batch": 32, "micro_batch": 4}}"#,
    // LoRA on q and v only.
    r#"{"model": "llama-3-8b", "lora": {"targets": ["q_proj", "v_proj"]}}"#,
    // Megatron bf16 on H100: fp8 is on offer.
    r#"{"model": "llama-3-8b", "framework": "megatron", "method": "pretrain", "parallel": {"tp": 2},
        "batch": {"global_batch": 64, "seq_len": 4096}}"#,
    // Megatron-LM and MindSpeed-LLM, 70B-class pre-training on two nodes: neither fits.
    MEGATRON_SHORT,
    MINDSPEED_SHORT,
    // DeepSpeed ZeRO-3 with everything on the host, where 8 H100 hold it all.
    OFFLOADED,
    // The same swapped to NVMe (ZeRO-Infinity).
    NVME,
    // LLaMA-Factory full SFT on one H100 without DeepSpeed: fp32 trained parameters do not fit.
    r#"{"model": "qwen2.5-7b", "method": "sft-full", "cluster": {"devices_per_node": 1}}"#,
];

/// Llama-3.1-70B on two H100 nodes at TP 8, PP 2 (DP 1, so the distributed optimizer shards
/// nothing): 70.6B × 18 bytes ÷ 16 devices is 79 GB of model states alone, over an 80 GB device.
const MEGATRON_SHORT: &str = r#"{"model": "llama-3.1-70b", "framework": "megatron", "method": "pretrain",
    "cluster": {"nodes": 2}, "parallel": {"tp": 8, "pp": 2}, "recompute": {"granularity": "selective"},
    "batch": {"micro_batch": 1, "global_batch": 64, "seq_len": 4096}}"#;

/// Qwen2.5-72B the same way on two 910B nodes under MindSpeed-LLM.
const MINDSPEED_SHORT: &str = r#"{"model": "qwen2.5-72b", "hardware": "ascend-910b2", "cluster": {"nodes": 2},
    "framework": "mindspeed-llm", "method": "pretrain", "parallel": {"tp": 8, "pp": 2},
    "batch": {"micro_batch": 1, "global_batch": 64, "seq_len": 4096}}"#;

/// A 7B full SFT on 8 H100 at ZeRO-3 with the optimizer's states and the parameters offloaded: 16
/// bytes a parameter over 8 devices is 15 GB, it fits on the device.
const OFFLOADED: &str = r#"{"model": "qwen2.5-7b", "framework": "deepspeed", "method": "sft-full",
    "parallel": {"zero_stage": 3, "offload_optimizer": true, "offload_params": true}}"#;

fn plan(text: &str) -> Plan {
    Plan::from_json(text).unwrap_or_else(|e| panic!("{text}: {e}"))
}

fn errors(plan: &Plan) -> usize {
    let report = evaluate(plan);
    let errors = report.findings.iter().filter(|f| f.severity == trainplan_core::report::Severity::Error);
    errors.filter(|f| f.code != "memory.does_not_fit").count()
}

#[test]
fn every_advice_is_the_report_of_the_plan_it_leads_to() {
    let mut n = 0;
    for text in PLANS {
        let plan = plan(text);
        let report = evaluate(&plan);
        for a in &advice::advise(&plan) {
            assert!(advice::Move::ALL.contains(&a.code), "{} is not listed in CODES", a.code);
            let mut changed = plan.clone();
            for fix in &a.changes {
                changed = rules::apply(&changed, fix).unwrap();
            }
            let after = evaluate(&changed);
            assert_eq!(a.peak_bytes, after.memory.peak_bytes, "{text}: {}", a.code);
            assert_eq!(a.step_seconds, after.time.step_seconds, "{text}: {}", a.code);
            assert_eq!(a.fits, after.memory.fits, "{text}: {}", a.code);
            assert_eq!(a.peak_delta_bytes, after.memory.peak_bytes as i64 - report.memory.peak_bytes as i64);
            let speed = after.time.tokens_per_second / report.time.tokens_per_second - 1.0;
            assert!((a.speed_delta_frac - speed).abs() < 1e-12);
            // Never trades one broken rule for another.
            assert!(errors(&changed) <= errors(&plan), "{text}: {} breaks a rule", a.code);
            // The right direction.
            match report.memory.fits {
                _ if a.code.for_quality() => assert!(a.fits, "{text}: {}", a.code),
                true => assert!(a.fits && 0.0 < a.speed_delta_frac, "{text}: {}", a.code),
                false => assert!(a.peak_delta_bytes < 0, "{text}: {}", a.code),
            }
            n += 1;
        }
    }
    assert!(16 <= n, "only {n} pieces of advice over {} plans", PLANS.len());
}

#[test]
fn advice_is_ranked() {
    for text in PLANS {
        let report = evaluate(&plan(text));
        let plan = plan(text);
        let advice = &advice::advise(&plan);
        match report.memory.fits {
            // Fastest first.
            true => assert!(advice.windows(2).all(|w| w[1].tokens_per_second <= w[0].tokens_per_second)),
            // Whatever makes it fit first.
            false => assert!(advice.windows(2).all(|w| w[0].fits || !w[1].fits), "{text}"),
        }
    }
}

#[test]
fn the_default_plan_is_told_to_recompute_less() {
    // Qwen2.5-7B LoRA on 8 × H100 uses a fraction of 80 GB with full recomputation on (LLaMA-Factory's
    // default): turning it off is the first move, and it still fits.
    let plan = plan(PLANS[0]);
    assert!(evaluate(&plan).memory.fits);
    assert_eq!(advice::advise(&plan).first().map(|a| a.code), Some(advice::Move::RecomputeLess));
}

#[test]
fn the_distributed_optimizer_saves_what_megatrons_table_says() {
    // Megatron-LM docs/source/api-guide/dist_optimizer.md: bf16 parameters with fp32 gradients and
    // Adam take 18 bytes per parameter, 6 + 12/d with the distributed optimizer over d replicas.
    // Plan 1 has d = 32 / (8 · 2) = 2, so each parameter on the peak stage saves 12 · (1 − 1/2) = 6 bytes.
    let plan = plan(PLANS[1]);
    let report = evaluate(&plan);
    assert_eq!(report.memory.dp, 2);
    let advice = advice::advise(&plan);
    let a = advice.iter().find(|a| a.code == advice::Move::DistributedOptimizer).expect("offered");
    let stage = &report.memory.stages[report.memory.peak_stage as usize];
    let params = stage.weights / 2;
    assert_eq!(a.peak_delta_bytes, -(6 * params as i64));
}

#[test]
fn a_70b_full_sft_on_one_node_is_told_to_offload() {
    // ZeRO paper Fig. 1 arithmetic: 70.6B parameters need 16 B each under ZeRO-3 = 141 GB per 8
    // devices, 2 · 70.6 + 14 · 70.6 / 8 = 265 GB under ZeRO-2: neither fits an 80 GB H100, so the
    // move that fits is ZeRO-3 with the optimizer on the host (12 of the 16 bytes leave the device).
    let plan = plan(PLANS[2]);
    assert!(!evaluate(&plan).memory.fits);
    let advice = advice::advise(&plan);
    let first = &advice[0];
    assert!(first.fits);
    assert_eq!(first.code, advice::Move::OffloadOptimizer);
    // ZeRO-3 alone does not fit, and a move that fits exists: only moves that fit are offered.
    assert!(advice.iter().all(|a| a.fits));
    assert!(!advice.iter().any(|a| a.code == advice::Move::ZeroStage));
}

/// [`OFFLOADED`] with the states swapped to the node's NVMe.
const NVME: &str = r#"{"model": "qwen2.5-7b", "framework": "deepspeed", "method": "sft-full",
    "parallel": {"zero_stage": 3, "offload_optimizer": true, "offload_params": true, "offload_device": "nvme"}}"#;

/// States swapped to NVMe are offered host memory instead: the device holds the same, the step
/// loses the drive's reads and writes, and the node's host memory takes the states.
#[test]
fn nvme_swaps_are_offered_host_memory() {
    let nvme = plan(NVME);
    let advice = advice::advise(&nvme);
    let host = advice.iter().find(|a| a.code == advice::Move::OffloadToHost).expect("offered");
    assert_eq!(host.peak_delta_bytes, 0);
    assert!(0.0 < host.speed_delta_frac, "{}", host.speed_delta_frac);
    let moved = evaluate(&rules::apply_all(&nvme, &host.changes).unwrap());
    assert_eq!(moved.memory.nvme_bytes_per_node, 0);
    assert!(evaluate(&nvme).memory.host_bytes_per_node < moved.memory.host_bytes_per_node);
    assert!(!advice::advise(&plan(OFFLOADED)).iter().any(|a| a.code == advice::Move::OffloadToHost));
}

/// A full fine-tune that does not fit without DeepSpeed is offered GaLore, which fits: Qwen2.5-7B on
/// one H100, whose AdamW moments alone are 61 GB in fp32; a LoRA plan or one under ZeRO is not.
#[test]
fn a_full_fine_tune_short_of_memory_is_offered_galore() {
    let short = r#"{"model": "qwen2.5-7b", "method": "sft-full", "cluster": {"devices_per_node": 1}}"#;
    let advice = advice::advise(&plan(short));
    let galore = advice.iter().find(|a| a.code == advice::Move::Galore).expect("offered");
    assert!(galore.fits && galore.peak_delta_bytes < -50_000_000_000, "{}", galore.peak_delta_bytes);
    for other in [
        r#"{"model": "qwen2.5-7b", "method": "lora", "cluster": {"devices_per_node": 1}}"#,
        r#"{"model": "qwen2.5-72b", "method": "sft-full", "parallel": {"zero_stage": 3}}"#,
    ] {
        assert!(!advice::advise(&plan(other)).iter().any(|a| a.code == advice::Move::Galore), "{other}");
    }
}

#[test]
fn most_codes_are_reached_by_these_plans() {
    // A code no plan can reach is dead: these plans reach at least half of them.
    let mut seen = std::collections::BTreeSet::new();
    for text in PLANS {
        seen.extend(advice::advise(&plan(text)).iter().map(|a| a.code));
    }
    assert!(advice::Move::ALL.len() / 2 <= seen.len(), "only {seen:?} offered");
}

#[test]
fn long_verl_sequences_are_told_to_use_ulysses() {
    // Ulysses SP 2 splits each sequence's activations over two devices (VeRL
    // `ulysses_sequence_parallel_size`, docs/perf/perf_tuning.rst): the activation share of the peak
    // roughly halves.
    let plan = plan(PLANS[7]);
    assert!(!evaluate(&plan).memory.fits);
    let advice = advice::advise(&plan);
    let ulysses = advice.iter().find(|a| a.code == advice::Move::VerlUlysses).expect("offered");
    assert!(ulysses.peak_delta_bytes < 0);
    assert_eq!(ulysses.changes[0].field, "parallel.cp");
}

/// VeRL's FSDP engine has no ZeRO-1 (rule verl.zero_stage; `choices::zero_offered`), so its ZeRO
/// ladder climbs 0 → 2 → 3. Qwen2.5-7B GRPO on 8 H200 at ZeRO-0 does not fit (each device holds the
/// whole model's fp32 weights, gradients and moments); the lowest stage that fits was ZeRO-1, which
/// the engine refuses, so the move was dropped and only the offloading moves stayed, slower than
/// ZeRO-2 without them. Now the move is ZeRO-2, it fits and runs, and no move names ZeRO-1.
#[test]
fn verl_climbs_only_the_zero_stages_its_engine_has() {
    let plan = Plan::from_json(
        r#"{"model": "qwen2.5-7b", "framework": "verl", "method": "grpo", "parallel": {"zero_stage": 0},
            "hardware": "h200-sxm-141g"}"#,
    )
    .unwrap();
    let report = evaluate(&plan);
    assert!(!report.memory.fits);
    // The memory rule's fix climbs the same ladder.
    let unfit = report.findings.iter().find(|f| f.code == "memory.does_not_fit").expect("does not fit");
    let fix = unfit.fix.as_ref().expect("a fix");
    assert_eq!((fix.field.path(), fix.value.as_u64()), ("parallel.zero_stage", Some(2)));
    let advice = advice::advise(&plan);
    let zero = advice.iter().find(|a| a.code == advice::Move::ZeroStage).expect("offered");
    assert_eq!(
        (zero.changes[0].field.path(), zero.changes[0].value.as_u64()),
        ("parallel.zero_stage", Some(2))
    );
    assert!(zero.fits);
    let offload = advice.iter().find(|a| a.code == advice::Move::OffloadOptimizer).expect("offered");
    assert!(offload.step_seconds > zero.step_seconds);
    let names_zero_1 = |a: &advice::Advice| {
        a.changes.iter().any(|c| c.field.path() == "parallel.zero_stage" && c.value.as_u64() == Some(1))
    };
    assert!(!advice.iter().any(names_zero_1));
}

/// VeRL's FSDP engine on FSDP1, short of memory by less than its embeddings' bf16 copies, is offered
/// FSDP2, which frees them after their forward (memory/states.rs): Qwen2.5-7B GRPO on 8 H100 at
/// micro-batch 20 over 1,024 + 2,560 tokens peaks as it computes log-probabilities, holding the
/// actor's and the reference's root units, each with the 152,064 × 3,584 embedding (config.json).
#[test]
fn verl_short_of_memory_is_offered_fsdp2() {
    let plan = Plan::from_json(
        r#"{"model": "qwen2.5-7b", "framework": "verl", "method": "grpo", "parallel": {"zero_stage": 3},
            "rl": {"max_prompt_length": 1024, "max_response_length": 2560}, "batch": {"micro_batch": 20}}"#,
    )
    .unwrap();
    assert!(!evaluate(&plan).memory.fits);
    let advice = advice::advise(&plan);
    let fsdp2 = advice.iter().find(|a| a.code == advice::Move::VerlFsdp2).expect("offered");
    assert!(fsdp2.fits);
    assert_eq!(fsdp2.peak_delta_bytes, -2 * 152_064 * 3_584 * 2);
    assert_eq!(fsdp2.changes[0].field, "parallel.fsdp");
    assert_eq!(fsdp2.changes[0].value, "torch_fsdp2");
}

/// Log-probabilities scored in larger micro-batches than the update's can be an RL plan's peak
/// (their logits), which no sharding or recomputation lowers: VeRL's `run_deepseek7b_llm.sh`
/// scores 160 sequences at a time where it updates 80. Qwen2.5-7B GRPO on 8 H100 scoring 64 where
/// it updates 4 does not fit; the memory finding's fix, and a move of the advice, score fewer at a
/// time: the plan's figure halved until it fits (the largest that fits, never below the update's:
/// twice it does not fit). Packed by tokens (MindSpeed-RL's DAPO configs score rows twice the
/// update's; here 64 times, 262,144 tokens, whose logits alone take 55.7 GiB of a 910B's 64 GB
/// at TP 4) the log-probabilities' budget is halved alike.
#[test]
fn log_probabilities_scored_in_larger_micro_batches_are_offered_smaller_ones() {
    // The memory finding's fix (the advice's move the same) as (field, value), after checking that
    // it fits and that twice it, where still below the plan's, does not.
    let offered = |text: &str, now: u64, update: u64| {
        let plan = Plan::from_json(text).unwrap();
        let report = evaluate(&plan);
        assert!(!report.memory.fits, "{text}");
        let unfit = report.findings.iter().find(|f| f.code == "memory.does_not_fit").expect("does not fit");
        let fix = unfit.fix.clone().expect("a fix");
        let advice = advice::advise(&plan);
        let moved = advice.iter().find(|a| a.code == advice::Move::LogProbSmaller).expect("offered");
        assert_eq!((moved.changes[0].field, &moved.changes[0].value), (fix.field, &fix.value));
        assert!(moved.fits);
        let value = fix.value.as_u64().expect("a count");
        let fits_at = |v: u64| {
            let change = trainplan_core::report::Fix { field: fix.field, value: v.into() };
            evaluate(&trainplan_core::rules::apply(&plan, &change).unwrap()).memory.fits
        };
        assert!(fits_at(value) && update <= value && value < now, "{value}");
        assert!(value == update || (value.is_power_of_two() && !fits_at(2 * value)), "{value}");
        (fix.field.path(), value)
    };
    let verl = r#"{"model": "qwen2.5-7b", "framework": "verl", "method": "grpo", "parallel": {"zero_stage": 3},
        "batch": {"micro_batch": 4}, "rl": {"log_prob_micro_batch": 64}}"#;
    assert_eq!(offered(verl, 64, 4).0, "rl.log_prob_micro_batch");
    let packed = r#"{"model": "qwen2.5-7b", "hardware": "ascend-910b2", "cluster": {"nodes": 2},
        "framework": "mindspeed-rl", "method": "grpo", "parallel": {"tp": 4},
        "rl": {"dynamic_batch": true, "max_tokens_per_device": 4096, "log_prob_max_tokens_per_device": 262144}}"#;
    assert_eq!(offered(packed, 262_144, 4096).0, "rl.log_prob_max_tokens_per_device");
    // Scored as the update trains, nothing is offered.
    let plan = Plan::from_json(&verl.replace("64", "4")).unwrap();
    assert_eq!(trainplan_core::memory::log_prob_smaller(&plan), None);
}

/// A plan that does not fit is offered the moves that make it fit, and the ZeRO move goes straight
/// to the lowest stage that fits (Llama-3.1-8B full SFT at ZeRO 1 on 8 × A100 40 GB: ZeRO 2 still
/// does not fit, ZeRO 3 does).
#[test]
fn a_plan_that_does_not_fit_is_offered_moves_that_fit() {
    let plan = Plan::from_json(
        r#"{"model": "llama-3.1-8b", "hardware": "a100-sxm-40g", "method": "sft-full",
            "parallel": {"zero_stage": 1}, "recompute": {"granularity": "full"}, "batch": {"micro_batch": 1, "seq_len": 2048}}"#,
    )
    .unwrap();
    assert!(!evaluate(&plan).memory.fits);
    let advice = advice::advise(&plan);
    assert!(!advice.is_empty());
    assert!(
        advice.iter().all(|a| a.fits),
        "{:?}",
        advice.iter().map(|a| (a.code, a.fits)).collect::<Vec<_>>()
    );
    if let Some(zero) = advice.iter().find(|a| a.code == advice::Move::ZeroStage) {
        let stage = zero.changes[0].value.as_u64().unwrap();
        let at = |z: u64| {
            let mut file = plan.to_file();
            file.parallel.zero_stage = z as u8;
            evaluate(&Plan::from_file(&file).unwrap()).memory.fits
        };
        assert!(at(stage) && (2..stage).all(|z| !at(z)), "ZeRO {stage}");
    }
}

/// Words and figures agree: a move whose words promise speed is faster by more than 1 %, on every
/// plan of a spread (fitting and not).
#[test]
fn moves_that_promise_speed_are_faster() {
    for text in [
        r#"{"model": "llama-3.1-70b", "method": "sft-full", "cluster": {"nodes": 4}}"#,
        r#"{"model": "llama-3.1-70b", "framework": "megatron", "method": "pretrain", "cluster": {"nodes": 4}, "parallel": {"tp": 8}}"#,
        r#"{"model": "qwen2.5-7b", "framework": "deepspeed", "method": "sft-full", "parallel": {"zero_stage": 3}}"#,
        r#"{"model": "qwen2.5-7b", "framework": "verl", "method": "grpo", "parallel": {"zero_stage": 3}}"#,
        r#"{"model": "mixtral-8x7b", "framework": "megatron", "method": "pretrain", "cluster": {"nodes": 2}, "parallel": {"tp": 2, "pp": 2, "ep": 4}}"#,
        r#"{"model": "qwen2.5-72b", "hardware": "ascend-910b2", "framework": "mindspeed-llm", "method": "sft-full", "cluster": {"nodes": 4}, "parallel": {"tp": 8, "pp": 4}}"#,
    ] {
        let plan = Plan::from_json(text).unwrap();
        for a in advice::advise(&plan) {
            if a.code.promises_speed() {
                assert!(
                    0.01 < a.speed_delta_frac,
                    "{} promises speed at {:+.3} on {text}",
                    a.code,
                    a.speed_delta_frac
                );
            }
        }
    }
}

/// The search's fastest plan becomes advice when it beats the plan, so advice never says no single
/// change helps while the search has one.
#[test]
fn the_searched_plan_is_advice() {
    let plan = Plan::from_json(
        r#"{"model": "llama-3-8b", "framework": "megatron", "method": "pretrain", "parallel": {"tp": 8}}"#,
    )
    .unwrap();
    let result = trainplan_core::search::search(&plan);
    let best =
        trainplan_core::advice::from_search(&plan, &result).expect("TP 8 for an 8B model is not the fastest");
    assert_eq!(best.changes, result.best[0].changes);
    assert!(0.01 < best.speed_delta_frac && best.fits);
    let applied = trainplan_core::rules::apply_all(&plan, &best.changes).unwrap();
    let r = evaluate(&applied);
    assert!((r.time.tokens_per_second - best.tokens_per_second).abs() < 1e-6 * best.tokens_per_second);
    // From the searched plan itself, nothing is faster.
    let again = trainplan_core::search::search(&applied);
    assert!(trainplan_core::advice::from_search(&applied, &again).is_none_or(|a| a.speed_delta_frac < 0.05));
}

/// Context parallelism's other exchange is offered where it is faster, in either direction. On
/// Llama-2-7B (32 heads, 32 key/value heads: multi-head) at 4,096 tokens over CP 8, the ring's K/V
/// passes outlast the short attention core they hide behind, and all-to-all moves each device's
/// share once (time.rs `all_to_all_context_parallelism_beats_an_exposed_ring`); at 65,536 tokens
/// the attention core is long enough to hide the ring, which all-to-all cannot match. Each move
/// is offered only with a computed speed-up and with the other algorithm as its one change.
#[test]
fn the_other_context_parallel_exchange_is_offered_where_it_is_faster() {
    let cp_plan = |algo: &str, seq_len: u32| {
        plan(&format!(
            r#"{{"model": "llama-2-7b", "framework": "megatron", "method": "pretrain", "cluster": {{"nodes": 4}},
                "parallel": {{"cp": 8, "cp_algo": "{algo}", "distributed_optimizer": true}},
                "batch": {{"micro_batch": 1, "global_batch": 32, "seq_len": {seq_len}}}}}"#
        ))
    };
    for (from, to, seq_len) in [("ring", "alltoall", 4096), ("alltoall", "ring", 65536)] {
        let p = cp_plan(from, seq_len);
        let offered = advice::advise(&p).into_iter().find(|a| a.code == advice::Move::CpAlgo);
        let offered = offered.unwrap_or_else(|| panic!("{from} at {seq_len} tokens: no cp_algo advice"));
        assert_eq!(offered.changes.len(), 1);
        assert_eq!(
            (offered.changes[0].field.path(), offered.changes[0].value.as_str()),
            ("parallel.cp_algo", Some(to))
        );
        assert!(0.01 < offered.speed_delta_frac, "{from} → {to}: {}", offered.speed_delta_frac);
        let other = evaluate(&cp_plan(to, seq_len)).time.step_seconds;
        assert!(other < evaluate(&p).time.step_seconds, "{from} → {to} at {seq_len}");
    }
}

/// Megatron-LM's own Llama 3 8B fp8 example runs with bf16 gradients and fp8 parameters
/// (`examples/llama/train_llama3_8b_h100_fp8.sh`); without them the plan does not fit, neither
/// alone makes it fit, and the two together are offered with their exact saving: 2 bytes for each
/// of Llama 3.1 8B's 8,030,261,248 parameters (gradients) and for each of its 6,979,321,856 linear
/// weights (the bf16 copy).
#[test]
fn megatron_fp8_is_told_its_low_precision_states() {
    let plan = plan(
        r#"{"model": "llama-3.1-8b", "framework": "megatron", "method": "pretrain", "precision": "fp8",
            "parallel": {"distributed_optimizer": true}, "recompute": {"granularity": "none"},
            "batch": {"global_batch": 128, "seq_len": 8192}}"#,
    );
    assert!(!evaluate(&plan).memory.fits);
    let advice = advice::advise(&plan);
    let together = advice.iter().find(|a| a.code == advice::Move::CheapTogether).expect("offered");
    assert!(together.fits);
    let fields: Vec<&str> = together.changes.iter().map(|c| c.field.path()).collect();
    assert_eq!(fields, ["parallel.grad_reduce_bf16", "parallel.fp8_param_gather"]);
    assert_eq!(together.peak_delta_bytes, -2 * (8_030_261_248 + 6_979_321_856));
}

/// TP communication overlapped with the GEMMs (Transformer Engine's userbuffers, Ascend's CoC)
/// needs sequence parallelism; a TP plan without it is offered both at once, a plan the framework's
/// rules take, rather than nothing: Qwen2.5-72B full SFT on 32 910B with TP 8 and PP 4.
#[test]
fn a_tp_plan_without_sequence_parallelism_is_offered_the_overlap_with_it() {
    let plan = plan(
        r#"{"model": "qwen2.5-72b", "hardware": "ascend-910b2", "framework": "mindspeed-llm", "method": "sft-full",
            "cluster": {"nodes": 4}, "parallel": {"tp": 8, "pp": 4}}"#,
    );
    assert!(!plan.parallel.sequence_parallel);
    let advice = advice::advise(&plan);
    let a = advice.iter().find(|a| a.code == advice::Move::AscendCoc).expect("offered");
    let fields: Vec<&str> = a.changes.iter().map(|c| c.field.path()).collect();
    assert_eq!(fields, ["parallel.sequence_parallel", "parallel.tp_comm_overlap"]);
    let after = trainplan_core::rules::apply_all(&plan, &a.changes).unwrap();
    assert_eq!(errors(&after), 0);
    assert!(a.fits && 0.0 < a.speed_delta_frac, "{a:?}");
    // With sequence parallelism already on, the overlap alone.
    let sp = trainplan_core::rules::apply(&plan, &a.changes[0]).unwrap();
    let b = advice::advise(&sp).into_iter().find(|a| a.code == advice::Move::AscendCoc).expect("offered");
    assert_eq!(b.changes, a.changes[1..]);
}

/// VeRL's Megatron engine is offered the overlapped gradient reduction it takes
/// (`override_ddp_config`), not the parameter gather it has no key for, and the move is faster.
#[test]
fn verl_megatron_is_offered_the_gradient_overlap_it_takes() {
    let plan = plan(
        r#"{"model": "qwen2.5-7b", "framework": "verl-megatron", "method": "grpo", "cluster": {"nodes": 4},
            "parallel": {"tp": 2, "distributed_optimizer": true}, "batch": {"global_batch": 64},
            "rl": {"max_prompt_length": 512, "max_response_length": 512, "mini_batch": 8}}"#,
    );
    // Eight updates a step (64 prompts in mini-batches of 8), each reducing the gradients: the
    // reduction is worth hiding.
    let advice = advice::advise(&plan);
    let a = advice.iter().find(|a| a.code == advice::Move::OverlapGradReduce).expect("offered");
    let fields: Vec<&str> = a.changes.iter().map(|c| c.field.path()).collect();
    assert_eq!(fields, ["parallel.overlap_grad_reduce"]);
    assert!(0.0 < a.speed_delta_frac, "{a:?}");
}

/// DeepSpeed reduces ZeRO-2's partitioned gradients after every micro-batch (time/sharded.rs);
/// without `overlap_comm` each reduction follows its backward, so the overlap is offered, and is
/// faster. VeRL's FSDP engine, which always overlaps and has no such key, is not offered it.
#[test]
fn deepspeed_is_offered_the_overlap_of_its_partitioned_reductions() {
    let deepspeed = plan(
        r#"{"model": "llama-3-8b", "framework": "deepspeed", "method": "sft-full", "cluster": {"nodes": 2},
            "parallel": {"zero_stage": 2, "overlap_grad_reduce": false},
            "batch": {"micro_batch": 1, "global_batch": 64, "seq_len": 2048}}"#,
    );
    let advice = advice::advise(&deepspeed);
    let a = advice.iter().find(|a| a.code == advice::Move::OverlapGradReduce).expect("offered");
    let fields: Vec<&str> = a.changes.iter().map(|c| c.field.path()).collect();
    assert_eq!(fields, ["parallel.overlap_grad_reduce"]);
    assert!(0.0 < a.speed_delta_frac, "{a:?}");

    let verl = plan(
        r#"{"model": "qwen2.5-7b", "framework": "verl", "method": "grpo", "cluster": {"nodes": 2},
            "batch": {"global_batch": 64}}"#,
    );
    assert!(advice::advise(&verl).iter().all(|a| a.code != advice::Move::OverlapGradReduce));
}

/// Qwen2.5-7B full SFT on one H100 under LLaMA-Factory without DeepSpeed: fp32 trained parameters
/// (16 bytes each with their gradients and AdamW's moments) do not fit; `pure_bf16` is offered and
/// fits, 8 bytes a parameter less: 8 × 7,615,616,512 bytes, the model states alone (the activations
/// shrink too, autocast casting nothing). Offered neither where the plan fits nor under DeepSpeed.
#[test]
fn a_full_fine_tune_that_does_not_fit_is_offered_pure_bf16() {
    let advice = |text: &str| advice::advise(&plan(text));
    let offered = advice(PLANS[PLANS.len() - 1]);
    let pure = offered.iter().find(|a| a.code == advice::Move::PureBf16).expect("pure_bf16 offered");
    assert!(pure.fits);
    assert!(-pure.peak_delta_bytes >= 8 * 7_615_616_512, "{}", pure.peak_delta_bytes);
    let fitting = r#"{"model": "qwen2.5-0.5b", "method": "sft-full", "cluster": {"devices_per_node": 1}}"#;
    assert!(advice(fitting).iter().all(|a| a.code != advice::Move::PureBf16));
    let deepspeed = r#"{"model": "qwen2.5-7b", "method": "sft-full", "parallel": {"zero_stage": 2}}"#;
    assert!(advice(deepspeed).iter().all(|a| a.code != advice::Move::PureBf16));
}

/// The same plan is offered bitsandbytes' 8-bit AdamW: its moments a byte each and a scale per
/// block of 2,048 instead of fp32's 8 bytes a parameter, 7,615,616,512 × (8 − 2 − 8/2048) bytes
/// less at least (the optimizer states alone); not where the plan fits, nor where it already runs it.
#[test]
fn a_full_fine_tune_that_does_not_fit_is_offered_8_bit_adamw() {
    let offered = advice::advise(&plan(PLANS[PLANS.len() - 1]));
    let eight_bit = offered.iter().find(|a| a.code == advice::Move::Adam8bit).expect("8-bit AdamW offered");
    let saved = (7_615_616_512.0 * (6.0 - 8.0 / 2048.0)) as i64;
    assert!(-eight_bit.peak_delta_bytes >= saved, "{}", eight_bit.peak_delta_bytes);
    let fitting = r#"{"model": "qwen2.5-0.5b", "method": "sft-full", "cluster": {"devices_per_node": 1}}"#;
    assert!(advice::advise(&plan(fitting)).iter().all(|a| a.code != advice::Move::Adam8bit));
    let already = r#"{"model": "qwen2.5-7b", "method": "sft-full", "cluster": {"devices_per_node": 1}, "optimizer": "adamw_8bit"}"#;
    assert!(advice::advise(&plan(already)).iter().all(|a| a.code != advice::Move::Adam8bit));
}

/// A plan that fits without its host offloads is told to keep its states on the device: the
/// parameters first (they cross the host link every micro-batch), then everything; each still
/// fits and is faster, and bringing everything back costs more memory than the parameters alone.
/// Not offered where the plan needs the offload: the 70B full SFT on one node fits only with its
/// optimizer on the host (ZeRO paper arithmetic above).
#[test]
fn a_plan_that_fits_without_offloading_is_told_to_keep_its_states_on_the_device() {
    let offered = advice::advise(&plan(OFFLOADED));
    let find = |code| offered.iter().find(|a| a.code == code).unwrap_or_else(|| panic!("{code} offered"));
    let (params, all) = (find(advice::Move::OnloadParams), find(advice::Move::Onload));
    assert!(params.fits && all.fits);
    assert!(0.01 < params.speed_delta_frac && params.speed_delta_frac < all.speed_delta_frac);
    assert!(0 < params.peak_delta_bytes && params.peak_delta_bytes < all.peak_delta_bytes);
    let off: Vec<String> = all.changes.iter().map(|f| format!("{}={}", f.field, f.value)).collect();
    assert_eq!(off, ["parallel.offload_params=false", "parallel.offload_optimizer=false"]);
    // The move the 70B needed, made: its offload stays.
    let mut needed = plan(PLANS[2]);
    let offload = advice::advise(&needed).into_iter().find(|a| a.code == advice::Move::OffloadOptimizer);
    for fix in &offload.expect("offered").changes {
        needed = rules::apply(&needed, fix).unwrap();
    }
    assert!(evaluate(&needed).memory.fits);
    assert!(advice::advise(&needed).iter().all(|a| a.code != advice::Move::Onload));
}

/// A Megatron-family plan short of memory is offered its framework's way of keeping the optimizer's
/// fp32 states on the host, with the distributed optimizer each needs: Megatron-LM's CPU optimizer
/// (`--optimizer-cpu-offload`), MindSpeed's swap (`--swap-optimizer`). Both plans then fit, at a cost
/// in time. Not to a LoRA plan on MindSpeed, whose adapters' states are small and which the swap
/// does not take (`memory::swaps_optimizer`).
#[test]
fn the_megatron_family_short_of_memory_is_offered_the_host_optimizer() {
    let offered = |text: &str| {
        let p = plan(text);
        assert!(!evaluate(&p).memory.fits, "{text}");
        advice::advise(&p).into_iter().find(|a| a.code == advice::Move::HostOptimizer)
    };
    let changes =
        |a: &advice::Advice| a.changes.iter().map(|f| format!("{}={}", f.field, f.value)).collect::<Vec<_>>();
    let megatron = offered(MEGATRON_SHORT).expect("offered to Megatron-LM");
    assert_eq!(
        changes(&megatron),
        ["parallel.distributed_optimizer=true", "parallel.offload_optimizer=true"]
    );
    let mindspeed = offered(MINDSPEED_SHORT).expect("offered to MindSpeed-LLM");
    assert_eq!(changes(&mindspeed), ["parallel.distributed_optimizer=true", "parallel.swap_optimizer=true"]);
    for a in [&megatron, &mindspeed] {
        assert!(a.fits && a.speed_delta_frac < 0.0, "{a:?}");
    }
    let lora = r#"{"model": "qwen2.5-72b", "hardware": "ascend-910b2", "cluster": {"nodes": 1, "devices_per_node": 2},
        "framework": "mindspeed-llm", "method": "lora", "parallel": {"tp": 2},
        "batch": {"micro_batch": 1, "global_batch": 64, "seq_len": 4096}}"#;
    let p = plan(lora);
    assert!(p.trains_lora() && !evaluate(&p).memory.fits);
    assert!(advice::advise(&p).iter().all(|a| a.code != advice::Move::HostOptimizer));
}

/// A plan with selective recomputation that fits with everything kept is offered to keep it all
/// when that runs faster (Qwen2.5-7B full SFT on MindSpeed-LLM, TP 4 PP 2 over eight 910B); the
/// move is the same one that takes full recomputation down. With flash attention the attention
/// core keeps no score matrix, so rerunning it saves no memory here and only costs time.
#[test]
fn selective_recomputation_is_dropped_where_keeping_everything_fits() {
    let p = plan(
        r#"{"model": "qwen2.5-7b", "hardware": "ascend-910b2", "framework": "mindspeed-llm", "method": "sft-full",
            "parallel": {"tp": 4, "pp": 2}, "recompute": {"granularity": "selective"}}"#,
    );
    assert!(evaluate(&p).memory.fits);
    let less =
        advice::advise(&p).into_iter().find(|a| a.code == advice::Move::RecomputeLess).expect("offered");
    let changes: Vec<String> = less.changes.iter().map(|f| format!("{}={}", f.field, f.value)).collect();
    assert_eq!(changes, ["recompute.granularity=\"none\""]);
    assert!(less.fits && 0.01 < less.speed_delta_frac && 0 <= less.peak_delta_bytes, "{less:?}");
}

/// Every piece of advice over the plans above changes only settings its plan's framework takes
/// (`knobs::applies`), but where it moves the plan to another framework (`stack_megatron`), whose
/// own settings it then writes: a move that set an inert knob would read as a change and do nothing.
#[test]
fn advice_changes_only_what_the_framework_takes() {
    use trainplan_core::knobs::{Knob, applies};
    let mut checked = 0;
    for text in PLANS {
        let p = plan(text);
        for a in advice::advise(&p).iter().filter(|a| a.code != advice::Move::StackMegatron) {
            for change in &a.changes {
                if let Some(&knob) = Knob::ALL.iter().find(|k| k.field() == Some(change.field)) {
                    assert!(applies(p.framework, p.method, knob).yes(), "{text}: {} sets {change:?}", a.code);
                    checked += 1;
                }
            }
        }
    }
    assert!(30 < checked, "{checked} changes");
}

/// ZeRO++ is offered where ZeRO-3's traffic across nodes outlasts the compute (four nodes whose
/// eight devices share a 200 Gb/s NIC), with the figures of the plan it leads to: faster, and the
/// secondary shard's memory more (Llama-3-8B's 8,030,261,248 bf16 parameters over a node's 8:
/// 2,007,565,312 bytes); not where the same traffic hides behind the compute (A100 nodes with a
/// NIC a device), nor on one node.
#[test]
fn zero_plus_plus_is_offered_where_the_network_is_the_bottleneck() {
    let text = |hardware: &str, nodes: u32| {
        format!(
            r#"{{"model": "llama-3-8b", "hardware": {hardware}, "framework": "deepspeed", "method": "sft-full",
                "cluster": {{"nodes": {nodes}}}, "parallel": {{"zero_stage": 3, "overlap_grad_reduce": true}},
                "batch": {{"micro_batch": 1, "global_batch": 256, "seq_len": 4096}}}}"#
        )
    };
    let shared_nic = r#"{"custom": {"name": "shared NIC", "vendor": "nvidia", "memory_gb": 80, "bf16_tflops": 312,
        "memory_tb_per_s": 2.0, "intra_node_gb_per_s": 600, "inter_node_gbit_per_s": 25, "devices_per_node": 8}}"#;
    let offered =
        |text: &str| advice::advise(&plan(text)).into_iter().find(|a| a.code == advice::Move::ZeroPlusPlus);
    let a = offered(&text(shared_nic, 4)).expect("offered");
    assert!(0.0 < a.speed_delta_frac, "{a:?}");
    assert_eq!(a.peak_delta_bytes, 2_007_565_312);
    assert!(a.changes.iter().any(|c| c.value == 8), "{a:?}");
    assert!(offered(&text(r#""a100-sxm-80g""#, 4)).is_none());
    assert!(offered(&text(shared_nic, 1)).is_none());
}
