//! Plans side by side: the current one and up to four pinned ones all travel in the link (a link
//! with one pin made before there could be more still opens), and the comparison marks the best
//! plan per figure, memory per stage, the settings that differ and the findings not every plan has.

use trainplan_core::compare::{self, Change, MAX_PINS, Metric, PinRefused, compare};
use trainplan_core::permalink::{self, PermalinkError};
use trainplan_core::{Plan, Report, evaluate};

fn plan(text: &str) -> Plan {
    Plan::from_json(text).unwrap()
}

/// The comparison of `plans`, the first being the current one.
fn check(plans: &[&Plan]) -> (compare::Comparison, Vec<Report>) {
    let reports: Vec<Report> = plans.iter().map(|p| evaluate(p)).collect();
    let files: Vec<_> = plans.iter().map(|p| p.to_file()).collect();
    let pairs: Vec<_> = files.iter().zip(&reports).collect();
    (compare(&pairs), reports)
}

fn row(c: &compare::Comparison, metric: Metric) -> &compare::Row {
    c.rows.iter().find(|r| r.metric == metric).unwrap()
}

/// Llama-3-8B pretraining on Megatron, 8 × H100, global batch 64, with `parallel` as given.
fn megatron(parallel: &str) -> Plan {
    plan(&format!(
        r#"{{"model": "llama-3-8b", "framework": "megatron", "method": "pretrain", "batch": {{"global_batch": 64}}, "parallel": {parallel}}}"#
    ))
}

#[test]
fn every_pin_travels_in_the_link() {
    let current = megatron(r#"{"pp": 2}"#);
    let pins = [megatron("{}"), megatron(r#"{"tp": 2}"#), megatron(r#"{"tp": 4}"#), megatron(r#"{"tp": 8}"#)];
    let link = permalink::encode_link(&current, &pins);
    assert!(link.starts_with("v1="));
    assert_eq!(link.matches("&pin=").count(), 4);
    let back = permalink::decode_link(&format!("#{link}")).unwrap();
    assert_eq!((back.plan, back.pins), (current.clone(), pins.to_vec()));
    // A link without a pin reads as before, and the one-plan reader ignores the pins.
    assert_eq!(permalink::decode_link(&permalink::encode(&current)).unwrap().pins, []);
    assert_eq!(permalink::decode(&link).unwrap(), current);
    // A damaged pin refuses the whole link: nothing is half-applied.
    let damaged = format!("{link}!!");
    assert!(matches!(permalink::decode_link(&damaged), Err(PermalinkError::Corrupt(_))));
    // An edited link with a fifth pin is refused with the limit, not cut short.
    let five = format!("{link}&pin={}", &permalink::encode(&current)["v1=".len()..]);
    assert_eq!(permalink::decode_link(&five), Err(PermalinkError::TooManyPins(5)));
    assert_eq!(
        PermalinkError::TooManyPins(5).to_string(),
        "the link pins 5 plans; at most 4 can be compared"
    );
}

/// Links written by the page when it could pin one plan only (`encode_link(plan, Some(pinned))`,
/// run before pins became a list) open unchanged: the same plan, the same one pin.
#[test]
fn a_link_with_one_pin_made_before_four_opens_unchanged() {
    let old = "v1=ASwA0_97ImNsdXN0ZXIiOnsibm9kZXMiOjJ9LCJtb2RlbCI6ImxsYW1hLTMtOGIifQ\
               &pin=ASoA1f97Im1vZGVsIjoibGxhbWEtMy04YiIsInBhcmFsbGVsIjp7InRwIjoyfX0";
    let link = permalink::decode_link(old).unwrap();
    assert_eq!(link.plan, plan(r#"{"model": "llama-3-8b", "cluster": {"nodes": 2}}"#));
    assert_eq!(link.pins, [plan(r#"{"model": "llama-3-8b", "parallel": {"tp": 2}}"#)]);
    // Written again, it is the same text.
    assert_eq!(permalink::encode_link(&link.plan, &link.pins), old);
}

#[test]
fn each_column_is_its_plans_own_report() {
    // PP 1, 2 and 4 of the same run: one, two and four stages.
    let plans = [megatron("{}"), megatron(r#"{"pp": 2}"#), megatron(r#"{"pp": 4}"#)];
    let (c, reports) = check(&plans.iter().collect::<Vec<_>>());
    for metric in Metric::ALL {
        let r = row(&c, metric);
        let expected: Vec<f64> = reports.iter().map(|rep| metric.of(rep)).collect();
        assert_eq!(r.values, expected, "{metric:?}");
        assert_eq!(r.changes[0], Change::Same);
    }
    assert_eq!(row(&c, Metric::PeakBytes).values[2], reports[2].memory.peak_bytes as f64);
    assert_eq!(row(&c, Metric::StepSeconds).values[1], reports[1].time.step_seconds);
    // The step of PP 2 against PP 1's, as the ratio of the two reports.
    assert_eq!(
        row(&c, Metric::StepSeconds).changes[1],
        Change::Times(reports[1].time.step_seconds / reports[0].time.step_seconds)
    );
    // Four stages at most; the one-stage plan has none beyond its first.
    assert_eq!(c.stages.len(), 4);
    assert_eq!(
        c.stages[1].totals,
        [None, Some(reports[1].memory.stages[1].total), Some(reports[2].memory.stages[1].total)]
    );
    assert_eq!(c.stages[3].totals[..2], [None, None]);
    // Only PP differs, as typed.
    assert_eq!(c.differences.len(), 1);
    assert_eq!(c.differences[0].field, "parallel.pp");
    assert_eq!(c.differences[0].values, [1, 2, 4]);
    // The same cluster: no best size.
    assert_eq!(row(&c, Metric::Devices).best, [false; 3]);
}

#[test]
fn the_best_of_each_figure_is_marked() {
    // PP 1, 2 and 4: the peak per device falls as the stages hold fewer layers (each stage's weights
    // are its layers' share), so PP 4 has the lowest.
    let plans = [megatron("{}"), megatron(r#"{"pp": 2}"#), megatron(r#"{"pp": 4}"#)];
    let (c, reports) = check(&plans.iter().collect::<Vec<_>>());
    let peaks: Vec<u64> = reports.iter().map(|r| r.memory.peak_bytes).collect();
    assert!(peaks[2] < peaks[1] && peaks[1] < peaks[0], "{peaks:?}");
    assert_eq!(row(&c, Metric::PeakBytes).best, [false, false, true]);
    // PP 1 keeps all 32 layers' states on each device and does not fit (140 GiB > 80 GiB); with
    // no pipeline bubble it has the most tokens/s, but only a plan that runs can be the fastest:
    // of PP 2 and PP 4, PP 2 (the smaller pipeline bubble) is, and the best overall.
    assert_eq!(reports.iter().map(|r| r.memory.fits).collect::<Vec<_>>(), [false, true, true]);
    let tokens = row(&c, Metric::TokensPerSecond);
    assert!(
        tokens.values[1] < tokens.values[0] && tokens.values[2] < tokens.values[1],
        "{:?}",
        tokens.values
    );
    assert_eq!(tokens.best, [false, true, false]);
    assert_eq!(row(&c, Metric::Fits).best, [false, true, true]);
    assert_eq!(c.best, Some(1));
    // A plan compared with itself: no difference, nothing marked, no winner.
    let (same, _) = check(&[&plans[0], &plans[0]]);
    assert!(same.differences.is_empty() && same.distinct.iter().all(Vec::is_empty));
    assert!(same.rows.iter().all(|r| r.best.iter().all(|&b| !b)));
    assert_eq!(same.best, None);
    // One plan alone has nothing to be better than.
    let (alone, _) = check(&[&plans[0]]);
    assert!(alone.rows.iter().all(|r| r.best == [false]));
    assert_eq!(alone.best, None);
}

/// A plan that fits and keeps the rules ranks above one that does not, however fast the other
/// looks; a count that goes from 0 to 1 is shown as +1, not as "=".
#[test]
fn plans_that_run_rank_above_plans_that_do_not() {
    // Llama-3.1-70B on one node: full fine-tuning does not fit 8 × 80 GB, LoRA over ZeRO-3 does.
    let fits = plan(r#"{"model": "llama-3.1-70b", "method": "lora", "parallel": {"zero_stage": 3}}"#);
    let too_big = plan(r#"{"model": "llama-3.1-70b", "method": "sft-full"}"#);
    let (c, reports) = check(&[&too_big, &fits]);
    assert!(!reports[0].memory.fits && reports[1].memory.fits);
    assert_eq!(c.best, Some(1));
    assert_eq!(row(&c, Metric::Fits).values, [0.0, 1.0]);
    assert_eq!(row(&c, Metric::Fits).best, [false, true]);
    let errors = row(&c, Metric::Errors);
    assert_eq!(errors.best, [false, true]);
    assert!(matches!(errors.changes[1], Change::By(d) if d < 0.0), "{:?}", errors.changes);
    // Speeds are won only by the plan that runs.
    for metric in [Metric::StepSeconds, Metric::TokensPerSecond, Metric::Mfu] {
        assert!(!row(&c, metric).best[0], "{metric:?}");
    }
    // The finding that sets them apart is listed under the plan that has it.
    let codes = |i: usize| c.distinct[i].iter().map(|f| f.code.as_str()).collect::<Vec<_>>();
    assert!(codes(0).contains(&"memory.does_not_fit"), "{:?}", codes(0));
    assert!(!codes(1).contains(&"memory.does_not_fit"));
    let (back, _) = check(&[&fits, &too_big]);
    assert_eq!(back.best, Some(0));
    assert_eq!(row(&back, Metric::Errors).changes[1], Change::By(1.0));
}

#[test]
fn a_setting_left_at_its_default_compares_by_its_value() {
    // `cluster.nodes` is left out of a plan file at 1; the comparison still reads 1 → 2.
    let (a, b) =
        (plan(r#"{"model": "qwen2.5-7b"}"#), plan(r#"{"model": "qwen2.5-7b", "cluster": {"nodes": 2}}"#));
    let d = compare::differences(&[&a.to_file(), &b.to_file(), &a.to_file()]);
    assert_eq!(d.len(), 1);
    assert_eq!(
        (d[0].field.as_str(), d[0].values.clone()),
        ("cluster.nodes", vec![1.into(), 2.into(), 1.into()])
    );
}

#[test]
fn nearly_equal_figures_name_no_winner() {
    use trainplan_core::compare::SAME_WITHIN;
    // Two nodes instead of one at the same global batch: the same MFU within the estimate's grain,
    // twice the devices, half the step.
    let (a, b) =
        (plan(r#"{"model": "qwen2.5-7b"}"#), plan(r#"{"model": "qwen2.5-7b", "cluster": {"nodes": 2}}"#));
    let (c, _) = check(&[&a, &b]);
    let mfu = row(&c, Metric::Mfu);
    assert!((mfu.values[1] / mfu.values[0] - 1.0).abs() <= SAME_WITHIN, "{:?}", mfu.values);
    assert_eq!(mfu.best, [false, false]);
    assert_eq!(mfu.changes[1], Change::Same);
    assert_eq!(row(&c, Metric::StepSeconds).best, [false, true]);
    assert_eq!(row(&c, Metric::Devices).changes[1], Change::By(8.0));
}

#[test]
fn metric_names_are_their_serialized_names() {
    for m in Metric::ALL {
        assert_eq!(serde_json::to_value(m).unwrap(), serde_json::Value::from(m.name()));
    }
}

#[test]
fn at_most_four_plans_are_pinned_and_make_current_keeps_both() {
    let current = megatron("{}");
    let mut pins = Vec::new();
    for tp in [2, 4, 8] {
        compare::pin(&mut pins, &megatron(&format!(r#"{{"tp": {tp}}}"#))).unwrap();
    }
    assert_eq!(compare::pin(&mut pins, &megatron(r#"{"tp": 2}"#)), Err(PinRefused::AlreadyPinned));
    compare::pin(&mut pins, &current).unwrap();
    assert_eq!(pins.len(), MAX_PINS);
    let fifth = megatron(r#"{"pp": 2}"#);
    assert_eq!(compare::pin(&mut pins, &fifth), Err(PinRefused::Full));
    assert_eq!(pins.len(), 4, "a refused pin changes nothing");
    // Pin 1 (TP 4) becomes the plan to edit; the plan being edited takes its place.
    let now = compare::make_current(&mut pins, 1, &fifth).unwrap();
    assert_eq!(now, megatron(r#"{"tp": 4}"#));
    assert_eq!(pins[1], fifth);
    assert_eq!(compare::make_current(&mut pins, 4, &now), None);
}
