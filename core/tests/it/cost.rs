//! Time and cost to train a token budget (docs/cost.md): the steps count exactly, the rest follows
//! the step time by the published method (Patterson et al. 2021; Llama 2 §2.2.1), and the board
//! power of each device is its datasheet's.

use trainplan_core::plan::PlanFileError;
use trainplan_core::{Plan, cost, evaluate, hardware, permalink};

fn plan(text: &str) -> Plan {
    Plan::from_json(text).unwrap_or_else(|e| panic!("{e}: {text}"))
}

#[track_caller]
fn check(text: &str, budget_tokens: f64, tokens_per_step: u64, watts: Option<f64>, pue: f64, price: f64) {
    let p = plan(text);
    let r = evaluate(&p);
    let c = &r.cost;
    assert_eq!(c.budget_tokens, budget_tokens, "{text}");
    assert_eq!(c.tokens_per_step, tokens_per_step as f64, "{text}");
    // Whole steps: the budget's last partial step still runs.
    let steps = (budget_tokens / tokens_per_step as f64).ceil() as u64;
    assert_eq!(c.steps, steps, "{text}");
    let wall = steps as f64 * r.time.step_seconds;
    assert!((c.wall_seconds / wall - 1.0).abs() < 1e-12, "{text}");
    let hours = wall * r.n_devices as f64 / 3600.0;
    assert!((c.device_hours / hours - 1.0).abs() < 1e-12, "{text}");
    match watts {
        Some(w) => {
            let kwh = c.energy_kwh.expect("a known board power gives an energy");
            assert!((kwh / (hours * w / 1000.0 * pue) - 1.0).abs() < 1e-12, "{text}");
        }
        None => assert_eq!(c.energy_kwh, None, "{text}"),
    }
    match price {
        0.0 => assert_eq!(c.price, None, "{text}"),
        p => assert!((c.price.unwrap() / (hours * p) - 1.0).abs() < 1e-12, "{text}"),
    }
}

#[test]
fn pretraining_a_token_budget() {
    // 1T tokens (the default) of Llama-3-8B pretraining on 4 × 8 H100 (700 W, the H100 datasheet):
    // 512 sequences of 8,192 tokens per step = 4,194,304 tokens; 10^12 / 4,194,304 = 238,418.6 →
    // 238,419 steps.
    check(
        r#"{"model": "llama-3-8b", "framework": "megatron", "method": "pretrain", "cluster": {"nodes": 4},
            "parallel": {"tp": 2, "distributed_optimizer": true},
            "batch": {"global_batch": 512, "seq_len": 8192}, "budget": {"price_per_device_hour": 2.49}}"#,
        1e12,
        512 * 8192,
        Some(700.0),
        1.0,
        2.49,
    );
    let r = evaluate(&plan(
        r#"{"model": "llama-3-8b", "cluster": {"nodes": 4}, "batch": {"global_batch": 512, "seq_len": 8192}}"#,
    ));
    assert_eq!(r.cost.steps, 238_419);
}

#[test]
fn fine_tuning_is_epochs_times_the_dataset() {
    // 3 epochs over 40M tokens; 64 × 4,096 = 262,144 tokens per step: ⌈1.2 × 10^8 / 262,144⌉ = 458.
    let text = r#"{"model": "qwen2.5-7b", "hardware": "a100-sxm-80g",
        "budget": {"dataset_tokens": 40000000, "epochs": 3, "pue": 1.2, "price_per_device_hour": 1.5}}"#;
    check(text, 1.2e8, 262_144, Some(400.0), 1.2, 1.5);
    assert_eq!(evaluate(&plan(text)).cost.steps, 458);
    // The dataset size replaces `tokens`: the same plan with another `tokens` costs the same.
    let other = text.replace(r#""epochs": 3"#, r#""epochs": 3, "tokens": 5"#);
    assert_eq!(evaluate(&plan(text)).cost, evaluate(&plan(&other)).cost);
}

#[test]
fn energy_needs_a_board_power_and_cost_a_price() {
    let custom = |power: &str| {
        format!(
            r#"{{"model": "llama-2-7b", "budget": {{"tokens": 1000000000}}, "hardware": {{"custom": {{"memory_gb": 80,
            "bf16_tflops": 989, "memory_tb_per_s": 3.35, "intra_node_gb_per_s": 900, "inter_node_gbit_per_s": 400{power}}}}}}}"#
        )
    };
    check(&custom(""), 1e9, 262_144, None, 1.0, 0.0);
    check(&custom(r#", "board_power_w": 550"#), 1e9, 262_144, Some(550.0), 1.0, 0.0);
    let r = evaluate(&plan(&custom(r#", "board_power_w": 550"#)));
    assert!(r.cost.board_power_reported, "a typed figure is the user's, not a datasheet's");
}

#[test]
fn energy_follows_the_published_method() {
    // Patterson et al. 2021 (arXiv 2104.10350) Table 4: GPT-3 on 10,000 V100 for 14.8 days at
    // 330 W average, PUE 1.10: 1,287 MWh.
    let kwh = cost::energy_kwh(cost::device_hours(10_000, 14.8 * 86_400.0), 330.0, 1.1);
    assert!((kwh / 1_287_000.0 - 1.0).abs() < 0.005, "{kwh}");
    // Llama 2 (Touvron et al. 2023) Table 2: 3,311,616 A100-80GB GPU-hours at 350–400 W; at 400 W
    // that is 1,324,646 kWh (the paper's 539 tCO2eq at its carbon intensity, not modelled here).
    let kwh = cost::energy_kwh(3_311_616.0, 400.0, 1.0);
    assert_eq!(kwh.round(), 1_324_646.0);
}

#[test]
fn board_power_is_the_datasheet_figure() {
    // NVIDIA datasheets (max TDP): A100 SXM 400 W, A100 PCIe 80GB 300 W, H100 SXM 700 W, H200 SXM
    // 700 W, V100 SXM2 300 W, L40S 350 W; B200 at 1000 W in HGX is a reported configuration.
    for (id, watts, reported) in [
        ("a100-sxm-80g", 400.0, false),
        ("a100-pcie-80g", 300.0, false),
        ("h100-sxm-80g", 700.0, false),
        ("h200-sxm-141g", 700.0, false),
        ("v100-sxm-32g", 300.0, false),
        ("l40s-48g", 350.0, false),
        ("b200-180g", 1000.0, true),
    ] {
        let hw = hardware::device(id).unwrap();
        assert_eq!((hw.board_power_watts, hw.board_power_reported), (watts, reported), "{id}");
    }
    // Every catalog device has a figure and a source; Ascend figures are all reports or estimates
    // (Huawei publishes no datasheet power for 910B/910C).
    for hw in hardware::devices() {
        assert!(0.0 < hw.board_power_watts && !hw.board_power_source.is_empty(), "{}", hw.id);
        if hw.id.starts_with("ascend-") {
            assert!(hw.board_power_reported, "{}", hw.id);
        }
    }
}

#[test]
fn the_budget_travels_in_the_file_and_the_link_and_is_checked() {
    let text = r#"{"model": "llama-2-7b", "budget": {"tokens": 2000000000000, "price_per_device_hour": 1.85, "pue": 1.3}}"#;
    let p = plan(text);
    assert_eq!(Plan::from_file(&p.to_file()).unwrap(), p);
    assert_eq!(permalink::decode(&permalink::encode(&p)).unwrap(), p);
    // The default budget is left out of a link, as every default is.
    let default = plan(r#"{"model": "llama-2-7b"}"#);
    assert!(!permalink::compact_json(&default.to_file()).contains("budget"));
    for (bad, field) in [
        (r#"{"tokens": 0}"#, "budget.tokens"),
        (r#"{"tokens": 10000000000000001}"#, "budget.tokens"),
        (r#"{"epochs": 0}"#, "budget.epochs"),
        (r#"{"price_per_device_hour": -1}"#, "budget.price_per_device_hour"),
        (r#"{"pue": 0.9}"#, "budget.pue"),
    ] {
        let err = Plan::from_json(&format!(r#"{{"model": "llama-2-7b", "budget": {bad}}}"#)).unwrap_err();
        assert!(
            matches!(err, PlanFileError::OutOfRange { field: f, .. } if f.path() == field),
            "{bad}: {err}"
        );
    }
}

#[test]
fn the_extremes_stay_finite() {
    // The largest budget, price, PUE and power on the largest cluster, and the smallest budget.
    for (budget, nodes, power) in
        [(r#""tokens": 10000000000000000"#, 65536, 100000), (r#""tokens": 1"#, 1, 0)]
    {
        let text = format!(
            r#"{{"model": "gpt2", "cluster": {{"nodes": {nodes}}}, "budget": {{{budget}, "price_per_device_hour": 1000000, "pue": 5}},
                "hardware": {{"custom": {{"memory_gb": 80, "bf16_tflops": 1000000, "memory_tb_per_s": 1000,
                "intra_node_gb_per_s": 1000000, "inter_node_gbit_per_s": 10000000, "board_power_w": {power}}}}}}}"#
        );
        let c = evaluate(&plan(&text)).cost;
        assert!(1 <= c.steps, "{text}");
        for x in
            [c.tokens_per_step, c.wall_seconds, c.device_hours, c.price.unwrap(), c.energy_kwh.unwrap_or(0.0)]
        {
            assert!(x.is_finite() && 0.0 <= x, "{x}: {text}");
        }
    }
}

#[test]
fn fine_tuning_on_the_default_budget_says_so() {
    // The plan file's default budget is a pretraining corpus (10^12 tokens, docs/plan-format.md);
    // a fine-tuning plan that keeps it is flagged, one that names its data or budget is not.
    let flagged = |text: &str| evaluate(&plan(text)).cost.default_budget_for_fine_tuning;
    assert!(flagged(r#"{"model": "qwen2.5-7b", "method": "lora"}"#));
    assert!(flagged(r#"{"model": "qwen2.5-7b", "method": "sft-full", "budget": {"epochs": 3}}"#));
    assert!(!flagged(r#"{"model": "qwen2.5-7b", "method": "lora", "budget": {"dataset_tokens": 50000000}}"#));
    assert!(!flagged(r#"{"model": "qwen2.5-7b", "method": "lora", "budget": {"tokens": 2000000000}}"#));
    assert!(!flagged(r#"{"model": "qwen2.5-7b", "framework": "megatron", "method": "pretrain"}"#));
}
