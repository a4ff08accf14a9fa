//! A pinned plan beside the current one: both travel in the link, and the comparison names the
//! better plan per figure, memory per stage, the settings that differ and the findings of each.

use trainplan_core::compare::{Better, Metric, compare};
use trainplan_core::permalink::{self, PermalinkError};
use trainplan_core::{Plan, evaluate};

fn plan(text: &str) -> Plan {
    Plan::from_json(text).unwrap()
}

#[test]
fn both_plans_travel_in_the_link() {
    let current = plan(
        r#"{"model": "llama-3-8b", "framework": "megatron", "method": "pretrain", "parallel": {"pp": 2}}"#,
    );
    let pinned = plan(r#"{"model": "llama-3-8b", "framework": "megatron", "method": "pretrain"}"#);
    let link = permalink::encode_link(&current, Some(&pinned));
    assert!(link.starts_with("v1=") && link.contains("&pin="));
    let back = permalink::decode_link(&format!("#{link}")).unwrap();
    assert_eq!((back.plan, back.pinned), (current.clone(), Some(pinned)));
    // A link without a pin reads as before, and the one-plan reader ignores a pin.
    assert_eq!(permalink::decode_link(&permalink::encode(&current)).unwrap().pinned, None);
    assert_eq!(permalink::decode(&link).unwrap(), current);
    // A damaged pin refuses the whole link: nothing is half-applied.
    let damaged = format!("{}!!", link);
    assert!(matches!(permalink::decode_link(&damaged), Err(PermalinkError::Corrupt(_))));
}

#[test]
fn the_comparison_names_the_better_plan_and_what_differs() {
    // Llama-3-8B on 8 × H100: PP 2 halves each stage's weights, so its peak is lower.
    let pinned = plan(
        r#"{"model": "llama-3-8b", "framework": "megatron", "method": "pretrain", "batch": {"global_batch": 64}}"#,
    );
    let current = plan(
        r#"{"model": "llama-3-8b", "framework": "megatron", "method": "pretrain", "parallel": {"pp": 2}, "batch": {"global_batch": 64}}"#,
    );
    let (ra, rb) = (evaluate(&pinned), evaluate(&current));
    let c = compare((&pinned.to_file(), &ra), (&current.to_file(), &rb));
    let row = |m: Metric| c.rows.iter().find(|r| r.metric == m).unwrap();
    let peak = row(Metric::PeakBytes);
    assert_eq!((peak.pinned, peak.current), (ra.memory.peak_bytes as f64, rb.memory.peak_bytes as f64));
    assert_eq!(peak.better, if peak.current < peak.pinned { Better::Current } else { Better::Pinned });
    let step = row(Metric::StepSeconds);
    assert_eq!(step.ratio, Some(rb.time.step_seconds / ra.time.step_seconds));
    // The same cluster: neither is better on size.
    assert_eq!(row(Metric::Devices).better, Better::Neither);
    // One stage against two.
    assert_eq!(c.stages.len(), 2);
    assert_eq!(c.stages[1].pinned, None);
    assert_eq!(c.stages[1].current, Some(rb.memory.stages[1].total));
    // Only PP differs.
    let fields: Vec<&str> = c.differences.iter().map(|d| d.field.as_str()).collect();
    assert_eq!(fields, ["parallel.pp"]);
    assert_eq!((c.differences[0].pinned.clone(), c.differences[0].current.clone()), (1.into(), 2.into()));
    // A plan compared with itself: no difference, nothing better.
    let same = compare((&pinned.to_file(), &ra), (&pinned.to_file(), &ra));
    assert!(same.differences.is_empty() && same.only_pinned.is_empty() && same.only_current.is_empty());
    assert!(same.rows.iter().all(|r| r.better == Better::Neither));
}

#[test]
fn findings_only_one_plan_has_are_listed() {
    let pinned = plan(r#"{"model": "llama-3.1-70b", "method": "sft-full"}"#);
    let current = plan(r#"{"model": "llama-3.1-70b", "method": "lora", "parallel": {"zero_stage": 3}}"#);
    let (ra, rb) = (evaluate(&pinned), evaluate(&current));
    let c = compare((&pinned.to_file(), &ra), (&current.to_file(), &rb));
    let codes =
        |fs: &[trainplan_core::report::Finding]| fs.iter().map(|f| f.code.as_str()).collect::<Vec<_>>();
    assert!(codes(&c.only_pinned).contains(&"memory.does_not_fit"), "{:?}", codes(&c.only_pinned));
    assert!(!codes(&c.only_current).contains(&"memory.does_not_fit"));
    let errors = c.rows.iter().find(|r| r.metric == Metric::Errors).unwrap();
    assert_eq!(errors.better, Better::Current);
}

#[test]
fn a_setting_left_at_its_default_compares_by_its_value() {
    // `cluster.nodes` is left out of a plan file at 1; the comparison still reads 1 → 2.
    let (a, b) =
        (plan(r#"{"model": "qwen2.5-7b"}"#), plan(r#"{"model": "qwen2.5-7b", "cluster": {"nodes": 2}}"#));
    let d = trainplan_core::compare::differences(&a.to_file(), &b.to_file());
    assert_eq!(d.len(), 1);
    assert_eq!(
        (d[0].field.as_str(), d[0].pinned.clone(), d[0].current.clone()),
        ("cluster.nodes", 1.into(), 2.into())
    );
}

#[test]
fn nearly_equal_figures_name_no_winner() {
    use trainplan_core::compare::SAME_WITHIN;
    // Two nodes instead of one at the same global batch: the same MFU within the estimate's grain,
    // twice the devices, half the step.
    let (a, b) =
        (plan(r#"{"model": "qwen2.5-7b"}"#), plan(r#"{"model": "qwen2.5-7b", "cluster": {"nodes": 2}}"#));
    let (ra, rb) = (evaluate(&a), evaluate(&b));
    let c = compare((&a.to_file(), &ra), (&b.to_file(), &rb));
    let mfu = c.rows.iter().find(|r| r.metric == Metric::Mfu).unwrap();
    assert!((mfu.current / mfu.pinned - 1.0).abs() <= SAME_WITHIN, "{} {}", mfu.pinned, mfu.current);
    assert_eq!(mfu.better, Better::Neither);
    let step = c.rows.iter().find(|r| r.metric == Metric::StepSeconds).unwrap();
    assert_eq!(step.better, Better::Current);
}

#[test]
fn metric_names_are_their_serialized_names() {
    use trainplan_core::compare::Metric;
    for m in [
        Metric::Devices,
        Metric::PeakBytes,
        Metric::StepSeconds,
        Metric::TokensPerSecond,
        Metric::Mfu,
        Metric::Errors,
        Metric::Warnings,
    ] {
        assert_eq!(serde_json::to_value(m).unwrap(), serde_json::Value::from(m.name()));
    }
}

/// A plan that fits and keeps the rules ranks above one that does not, however fast the other
/// looks; a count that goes from 0 to 1 is shown as +1, not as "=".
#[test]
fn plans_that_run_rank_above_plans_that_do_not() {
    use trainplan_core::compare::Change;
    let fits =
        Plan::from_json(r#"{"model": "llama-3.1-70b", "method": "lora", "parallel": {"zero_stage": 3}}"#)
            .unwrap();
    let too_big = Plan::from_json(r#"{"model": "llama-3.1-70b", "method": "sft-full"}"#).unwrap();
    let (ra, rb) = (evaluate(&fits), evaluate(&too_big));
    assert!(ra.memory.fits && !rb.memory.fits);
    let c = compare((&fits.to_file(), &ra), (&too_big.to_file(), &rb));
    assert_eq!(c.better, Better::Pinned);
    let errors = c.rows.iter().find(|r| r.metric == Metric::Errors).unwrap();
    assert_eq!(errors.change, Change::By(1.0));
    assert_eq!(errors.better, Better::Pinned);
    let back = compare((&too_big.to_file(), &rb), (&fits.to_file(), &ra));
    assert_eq!(back.better, Better::Current);
}
