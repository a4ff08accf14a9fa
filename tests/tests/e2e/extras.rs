//! The cost panel, the sweep table, calibration from a pasted log, a search blocked by a rule and a
//! MoE rollout's expert parallelism, each checked against the core's own figures for the plan the
//! page's address holds.

use thirtyfour::prelude::*;
use trainplan_core::sweep::{self, Knob};
use trainplan_core::{Plan, evaluate, permalink};
use trainplan_e2e::{Chromedriver, Page};

use super::open;

/// The plan the page shows, read back from its address once typing has paused.
pub(super) async fn plan_of(page: &Page) -> WebDriverResult<Plan> {
    let url = page.settled_url().await?;
    let fragment = url.split_once('#').map(|(_, f)| f).unwrap_or_default();
    let link = permalink::decode_link(fragment).map_err(|e| WebDriverError::FatalError(e.to_string()))?;
    Ok(link.plan)
}

/// A number as the page prints it (`1,234`, `19.9`), without its unit.
fn number(text: &str) -> f64 {
    let first = text
        .trim_start_matches(|c: char| c == '≥' || c.is_whitespace())
        .split_whitespace()
        .next()
        .unwrap_or_default()
        .replace(',', "");
    first.parse().unwrap_or_else(|_| panic!("not a number: {text:?}"))
}

/// kWh from the page's `14 kWh`, `52.4 MWh`, `1.29 GWh`.
fn kwh(text: &str) -> f64 {
    let scale = match text.split_whitespace().nth(1) {
        Some("kWh") => 1.0,
        Some("MWh") => 1e3,
        Some("GWh") => 1e6,
        other => panic!("no energy unit in {text:?}: {other:?}"),
    };
    number(text) * scale
}

#[track_caller]
fn close(shown: f64, core: f64, what: &str) {
    // The page prints three significant digits (or whole numbers above 1,000).
    assert!((shown / core - 1.0).abs() < 0.006, "{what}: page {shown}, core {core}");
}

/// Puts text into a textarea at once (a long paste), as the browser's paste would.
async fn paste(page: &Page, testid: &str, text: &str) -> WebDriverResult<()> {
    let el = page.el(testid).await?;
    page.driver
        .execute(
            "arguments[0].value = arguments[1]; arguments[0].dispatchEvent(new Event('input', {bubbles: true}));",
            vec![el.to_json()?, serde_json::Value::String(text.to_owned())],
        )
        .await?;
    Ok(())
}

/// Megatron-LM `training_log` lines (its format strings: `' iteration {:8d}/{:8d} |'`,
/// `' elapsed time per iteration (ms): {:.1f} |'`) and a `report_memory` line.
fn megatron_log(step_ms: f64) -> String {
    let mut log = String::new();
    for (i, ms) in [3.0 * step_ms, step_ms * 1.01, step_ms, step_ms * 0.99, step_ms].into_iter().enumerate() {
        log += &format!(
            " [2025-06-01 12:00:00.000000] iteration {:8}/{:8} | consumed samples: {:12} | elapsed time per iteration (ms): {ms:.1} | throughput per GPU (TFLOP/s/GPU): 301.5 | learning rate: 1.000000E-04 | global batch size:    64 | lm loss: 1.234567E+00 | loss scale: 1.0 | grad norm: 0.500 |\n",
            10 * (i + 1),
            1000,
            640 * (i + 1)
        );
        // `--timing-log-level 1`: `Timers.log`'s block, each name padded with dots to 48.
        log += &format!(
            "(min, max) time across ranks (ms):\n    forward-backward {}: ({:.2}, {:.2})\n    optimizer {}: ({:.2}, {:.2})\n",
            ".".repeat(31),
            0.95 * ms,
            0.97 * ms,
            ".".repeat(38),
            0.02 * ms,
            0.03 * ms
        );
    }
    log + "[Rank 0] (after 10 iterations) memory (MB) | allocated: 30000.00 | max allocated: 52345.67 | reserved: 54000.00 | max reserved: 56000.00\n"
}

/// A token budget and a price: the cost panel shows the core's steps, device-hours, energy and
/// cost for the plan in the address; a refused budget keeps the last good one.
#[tokio::test(flavor = "multi_thread")]
async fn the_cost_panel_shows_the_cores_figures() -> WebDriverResult<()> {
    let chromedriver = Chromedriver::start();
    let page = open(&chromedriver, 1280, 900).await?;
    page.wait_text("params-total", |t| !t.is_empty()).await?;
    // The first visit's plan fine-tunes on the default budget of 10^12 tokens: the panel says so,
    // and stops saying so once the plan has a budget of its own.
    assert!(page.text("cost-default-budget").await?.contains("1T"));
    page.type_into("cost-tokens", "2B").await?;
    for _ in 0..50 {
        if !page.has("cost-default-budget").await? {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert!(!page.has("cost-default-budget").await?, "a budget of its own is not the default");
    page.type_into("cost-price-input", "2.5").await?;
    page.type_into("cost-pue", "1.2").await?;
    page.wait_text("cost-price", |t| t.chars().next().is_some_and(|c| c.is_ascii_digit())).await?;
    let plan = plan_of(&page).await?;
    assert_eq!(
        (plan.budget.tokens, plan.budget.price_per_device_hour, plan.budget.pue),
        (2_000_000_000, 2.5, 1.2)
    );
    let c = evaluate(&plan).cost;
    assert_eq!(page.text("cost-budget").await?, "2 B");
    assert_eq!(number(&page.text("cost-steps").await?), c.steps as f64);
    close(number(&page.text("cost-device-hours").await?), c.device_hours, "device-hours");
    close(kwh(&page.text("cost-energy").await?), c.energy_kwh.unwrap(), "energy");
    close(number(&page.text("cost-price").await?), c.price.unwrap(), "cost");
    // H100 SXM: 700 W on its datasheet.
    assert!(page.text("cost-power").await?.contains("700 W per device (datasheet)"));

    // A budget the plan cannot take is named, and the figures stay those of the last good one.
    page.type_into("cost-tokens", "lots").await?;
    let error = page.wait_text("cost-panel", |_| true).await?;
    assert!(page.driver.find(By::Css(".cost-inputs .field-error")).await?.text().await?.contains("10^16"));
    assert_eq!(page.text("cost-budget").await?, "2 B", "{error}");
    page.type_into("cost-tokens", "1T").await?;
    page.wait_text("cost-budget", |t| t == "1 T").await?;
    page.scroll_to("cost-title").await?;
    page.screenshot("en-cost").await?;
    page.click("lang-switch").await?;
    page.wait_text("cost-budget", |t| t == "1 万亿").await?;
    page.scroll_to("cost-title").await?;
    page.screenshot("zh-cost").await?;
    page.driver.quit().await
}

/// The sweep table is computed on the button, its first row fits by the core's own memory check
/// and one more does not, and it says when the plan has moved on.
#[tokio::test(flavor = "multi_thread")]
async fn the_sweep_table_finds_what_fits() -> WebDriverResult<()> {
    let chromedriver = Chromedriver::start();
    let page = open(&chromedriver, 1280, 900).await?;
    page.wait_text("params-total", |t| !t.is_empty()).await?;
    assert!(!page.has("sweep-table").await?, "computed before it was asked for");
    page.click("sweep-run").await?;
    let table = page.el("sweep-table").await?;
    let first = table.find(By::Css("tbody tr")).await?;
    let cells = first.find_all(By::Css("th, td")).await?;
    assert_eq!(number(&cells[0].text().await?), 1.0);
    assert_eq!(number(&cells[1].text().await?), 8.0);
    let seq = number(&cells[2].find(By::Css("strong")).await?.text().await?) as u32;
    let mbs = number(&cells[3].find(By::Css("strong")).await?.text().await?) as u32;
    let plan = plan_of(&page).await?;
    assert_eq!(plan.cluster.nodes.get(), 1);
    assert!(sweep::fits(&plan, Knob::SeqLen, seq) && !sweep::fits(&plan, Knob::SeqLen, seq + 1), "{seq}");
    assert!(sweep::fits(&plan, Knob::MicroBatch, mbs), "{mbs}");
    assert_eq!(sweep::largest(&plan, Knob::MicroBatch, sweep::upper(&plan, Knob::MicroBatch)), Some(mbs));
    // 1, 2, 4 … 64 nodes; from 16 nodes on, 128 data-parallel ranks outnumber the 64 sequences a step.
    let rows = table.find_all(By::Css("tbody tr")).await?;
    assert_eq!(rows.len(), 7);
    assert!(rows[4].text().await?.contains("fewer sequences a step than data-parallel ranks"));
    page.scroll_to("sweep-run").await?;
    page.screenshot("en-sweep").await?;
    page.click("lang-switch").await?;
    page.wait_text("sweep-run", |t| t == "计算").await?;
    page.scroll_to("sweep-run").await?;
    page.screenshot("zh-sweep").await?;
    // Two nodes, typed over the selection (clearing the field first would leave no plan, and no
    // results column, for a moment).
    let nodes = page.el("nodes-input").await?;
    nodes.send_keys(Key::Control + "a").await?;
    nodes.send_keys("2").await?;
    assert!(page.wait_text("sweep-stale", |t| !t.is_empty()).await?.contains("重新计算"));
    page.driver.quit().await
}

/// A pasted Megatron log calibrates the plan: the step time shown moves to the log's; text that
/// is no log is refused with what the box takes. The plan runs LLaMA-Factory, which prints no
/// Megatron iteration lines: the page asks whether it is this plan's log.
#[tokio::test(flavor = "multi_thread")]
async fn a_pasted_megatron_log_calibrates_the_plan() -> WebDriverResult<()> {
    let chromedriver = Chromedriver::start();
    let page = open(&chromedriver, 1280, 900).await?;
    page.wait_text("params-total", |t| !t.is_empty()).await?;
    let before = evaluate(&plan_of(&page).await?).time.step_seconds;
    // A run 1.5 × slower than predicted.
    let measured = 1.5 * before;
    paste(&page, "logcal-text", "just some words\nand numbers 1 2 3").await?;
    page.click("logcal-fit").await?;
    let refused = page.wait_text("logcal-result", |t| !t.is_empty()).await?;
    assert!(refused.contains("No training log lines recognized"), "{refused}");
    paste(&page, "logcal-text", &megatron_log(measured * 1000.0)).await?;
    page.click("logcal-fit").await?;
    let read = page.wait_text("logcal-result", |t| t.contains("Fitted")).await?;
    assert!(read.contains("Megatron iteration lines: 5") && read.contains("memory reports: 1"), "{read}");
    assert!(read.contains("after 1 of warm-up"), "{read}");
    assert!(
        read.contains("reads as a Megatron-LM or MindSpeed run, and this plan runs LLaMA-Factory"),
        "{read}"
    );
    let seconds = |t: &str| number(t);
    let shown = seconds(&page.wait_text("step-time", |t| (seconds(t) / measured - 1.0).abs() < 0.01).await?);
    assert!((shown / measured - 1.0).abs() < 0.01, "step {shown} s, the log's {measured} s");
    let after = evaluate(&plan_of(&page).await?);
    assert!((after.time.step_seconds / measured - 1.0).abs() < 1e-3);
    // Megatron's own timers, the slowest rank's, beside the plan's phases.
    let rows = phase_rows(&page).await?;
    let phases: Vec<&str> = rows.iter().map(|r| r.0.as_str()).collect();
    assert_eq!(phases, ["forward-backward", "optimizer"], "{rows:?}");
    assert!(rows[1].1.starts_with("Optimizer step"), "{rows:?}");
    page.scroll_to("logcal-title").await?;
    page.screenshot("en-log-calibration").await?;
    page.click("lang-switch").await?;
    let read = page.wait_text("logcal-result", |t| t.contains("已拟合")).await?;
    assert!(read.contains("这份日志看起来来自 Megatron-LM 或 MindSpeed 的运行"), "{read}");
    page.scroll_to("logcal-title").await?;
    page.screenshot("zh-log-calibration").await?;
    page.driver.quit().await
}

/// The log panel's phase rows: each one's `data-phase` and its text.
async fn phase_rows(page: &Page) -> WebDriverResult<Vec<(String, String)>> {
    let script = "return [...document.querySelectorAll(\"[data-testid='logcal-phases'] tbody tr\")]
        .map(r => [r.dataset.phase, r.textContent.trim()]);";
    let got = page.driver.execute(script, vec![]).await?;
    let rows = got.json().as_array().cloned().unwrap_or_default();
    let cell = |r: &serde_json::Value, i: usize| r[i].as_str().unwrap_or_default().to_owned();
    Ok(rows.iter().map(|r| (cell(r, 0), cell(r, 1))).collect())
}

/// A pasted VeRL log of a GRPO plan: its `prompt_length/mean` and `response_length/mean` become
/// the plan's mean prompt and response, shown in the RL form, and the step is fitted with them to
/// the log's; the phases its timers measured stand beside the plan's as modelled, in both
/// languages.
#[tokio::test(flavor = "multi_thread")]
async fn a_pasted_verl_log_sets_the_mean_response() -> WebDriverResult<()> {
    let chromedriver = Chromedriver::start();
    let page = open(&chromedriver, 1280, 900).await?;
    page.wait_text("params-total", |t| !t.is_empty()).await?;
    page.choose("framework-select", "verl").await?;
    page.choose("method-select", "grpo").await?;
    page.wait_text("summary-run", |t| t.contains("VeRL")).await?;
    assert_eq!(page.el("mean-response-len-input").await?.prop("value").await?.as_deref(), Some(""));
    // A run 1.3 × slower than the plan predicts with prompts of 103 tokens and responses of 299 on
    // average; VeRL `concat_dict_to_str` lines: its steps after a first 1.5 × as long.
    let mut logged = plan_of(&page).await?;
    (logged.rl.mean_prompt_length, logged.rl.mean_response_length) = (103, 299);
    let measured = 1.3 * evaluate(&logged).time.step_seconds;
    let log = [(1, 1.5, 301.2), (2, 1.0, 288.5), (3, 1.02, 296.0), (4, 0.99, 310.4)]
        .map(|(step, t, mean)| (step, t * measured, mean))
        .map(|(step, t, mean)| {
            format!(
                "step:{step} - response_length/mean:{mean} - prompt_length/mean:{} - timing_s/gen:{} - timing_s/old_log_prob:{} - timing_s/ref:{} - timing_s/update_actor:{} - timing_s/update_weights:1.2 - timing_s/step:{t}",
                100 + step,
                0.4 * t,
                0.1 * t,
                0.1 * t,
                0.35 * t
            )
        })
        .join("\n");
    let before = plan_of(&page).await?;
    paste(&page, "logcal-text", &log).await?;
    page.click("logcal-fit").await?;
    let read = page.wait_text("logcal-result", |t| t.contains("Fitted")).await?;
    // Each phase the log timed beside the plan's as modelled, the core's comparison.
    let checks =
        trainplan_core::logparse::phase_check(&before, &trainplan_core::logparse::parse(&log).unwrap());
    assert_eq!(checks.len(), 4);
    let rows = phase_rows(&page).await?;
    let phases: Vec<&str> = rows.iter().map(|r| r.0.as_str()).collect();
    assert_eq!(phases, ["gen", "old_log_prob", "update_actor", "update_weights"], "{rows:?}");
    let rows: Vec<String> = rows.into_iter().map(|r| r.1).collect();
    for (row, check) in rows.iter().zip(&checks) {
        let ratio = format!("× {:.2}", check.ratio().unwrap());
        assert!(row.ends_with(&ratio), "{row} against {ratio}");
    }
    assert!(rows[3].starts_with("Weights to the rollout engine"), "{rows:?}");
    assert!(read.contains("Responses of 299 tokens on average"), "{read}");
    assert!(read.contains("Prompts of 103 tokens on average"), "{read}");
    // VeRL's own metrics for a VeRL plan: nothing to ask.
    assert!(!read.contains("This log reads as"), "{read}");
    let plan = plan_of(&page).await?;
    assert_eq!((plan.rl.mean_prompt_length, plan.rl.mean_response_length), (103, 299));
    let fitted = evaluate(&plan).time;
    assert!((fitted.step_seconds / measured - 1.0).abs() < 1e-3);
    // The generation timed apart (0.4 of each step, the median 0.4 × the step) has its own factor.
    assert!(read.contains("Generation fitted apart to the log's timing_s/gen"), "{read}");
    assert!(plan.calibration.rollout_scale.is_some());
    assert!((fitted.breakdown.rollout_seconds / (0.4 * measured) - 1.0).abs() < 1e-3);
    assert_eq!(page.el("mean-response-len-input").await?.prop("value").await?.as_deref(), Some("299"));
    assert_eq!(page.el("mean-prompt-len-input").await?.prop("value").await?.as_deref(), Some("103"));
    page.scroll_to("logcal-phases").await?;
    page.screenshot("en-log-phases").await?;
    page.click("lang-switch").await?;
    let read = page.wait_text("logcal-result", |t| t.contains("已拟合")).await?;
    assert!(read.contains("回答平均 299 个 token") && read.contains("prompt 平均 103 个 token"), "{read}");
    assert!(read.contains("生成阶段按日志的 timing_s/gen 单独拟合"), "{read}");
    let rows = phase_rows(&page).await?;
    assert!(rows[3].1.starts_with("权重同步到推理引擎"), "{rows:?}");
    page.scroll_to("logcal-phases").await?;
    page.screenshot("zh-log-phases").await?;
    page.scroll_to("rl-panel").await?;
    page.screenshot("zh-rl-means").await?;
    page.driver.quit().await
}

/// LLaMA-Factory's own `trainer_log.jsonl` (`LogCallback.on_log`: `json.dumps` a line, the elapsed
/// time as `str(timedelta(seconds=int(elapsed)))`) calibrates the default plan, a LLaMA-Factory
/// one: the step from the whole seconds over the steps after the first interval.
#[tokio::test]
async fn a_pasted_trainer_log_calibrates_a_llamafactory_plan() -> WebDriverResult<()> {
    let chromedriver = Chromedriver::start();
    let page = open(&chromedriver, 1280, 900).await?;
    page.wait_text("summary-run", |t| t.contains("LLaMA-Factory")).await?;
    let plan = plan_of(&page).await?;
    let measured = 1.25 * evaluate(&plan).time.step_seconds;
    // Every 10 steps, the first ten 3 × as long; the seconds cut to whole ones as the file keeps them.
    let ends: Vec<u64> = (1..=5u32).map(|k| ((f64::from(k) + 2.0) * 10.0 * measured) as u64).collect();
    let log = ends
        .iter()
        .zip(1u32..)
        .map(|(&t, k)| {
            let (h, m, s) = (t / 3600, t / 60 % 60, t % 60);
            format!(
                r#"{{"current_steps": {}, "total_steps": 300, "loss": 1.5, "lr": 9e-05, "epoch": 0.1, "percentage": {:.2}, "elapsed_time": "{h}:{m:02}:{s:02}", "remaining_time": "0:30:00"}}"#,
                10 * k,
                f64::from(10 * k) / 3.0
            )
        })
        .collect::<Vec<_>>()
        .join("\n");
    paste(&page, "logcal-text", &log).await?;
    page.click("logcal-fit").await?;
    let read = page.wait_text("logcal-result", |t| t.contains("Fitted")).await?;
    assert!(read.contains("LLaMA-Factory trainer_log.jsonl lines: 5"), "{read}");
    assert!(read.contains("from 40 steps after 10 of warm-up"), "{read}");
    // The four intervals after the first: their whole seconds over their 40 steps.
    let expected = (ends[4] - ends[0]) as f64 / 40.0;
    let fitted = evaluate(&plan_of(&page).await?).time.step_seconds;
    assert!((fitted / expected - 1.0).abs() < 1e-3, "{fitted} against {expected}");
    assert!(!read.contains("This log reads as"), "{read}");
    page.click("lang-switch").await?;
    let read = page.wait_text("logcal-result", |t| t.contains("已拟合")).await?;
    assert!(read.contains("LLaMA-Factory trainer_log.jsonl 5 行"), "{read}");
    assert!(read.contains("取自预热 10 步之后的 40 步"), "{read}");
    page.driver.quit().await
}

/// The default plan (LLaMA-Factory LoRA SFT) with samples of 512 tokens on average: the step the
/// page shows is the core's for the plan in the address, shorter than at the cutoff length, and a
/// micro-batch of 2 brings the padding note; the field reads in Chinese too. On MindSpeed-LLM the
/// launch script then asks not to pad to the sequence length, and leaves that out without a mean.
#[tokio::test(flavor = "multi_thread")]
async fn the_samples_mean_length_sets_the_step() -> WebDriverResult<()> {
    let chromedriver = Chromedriver::start();
    let page = open(&chromedriver, 1280, 900).await?;
    page.wait_text("params-total", |t| !t.is_empty()).await?;
    let full = evaluate(&plan_of(&page).await?).time.step_seconds;
    page.type_into("mean-seq-len-input", "512").await?;
    let plan = plan_of(&page).await?;
    assert_eq!(plan.batch.mean_seq_len, 512);
    let step = evaluate(&plan).time.step_seconds;
    assert!(step < full / 2.0, "{step} s against {full} s");
    // The page prints a step under a second in milliseconds.
    let seconds = |t: &str| if t.ends_with(" ms") { number(t) / 1e3 } else { number(t) };
    let shown = page.wait_text("step-time", |t| (seconds(t) / step - 1.0).abs() < 0.01).await?;
    assert!((seconds(&shown) / step - 1.0).abs() < 0.01, "{shown} against {step} s");
    page.type_into("micro-batch-input", "2").await?;
    let note = page.wait_text("finding-llamafactory.mean_seq_padded", |t| !t.is_empty()).await?;
    assert!(note.contains("pads each micro-batch of 2 samples"), "{note}");
    page.click("lang-switch").await?;
    page.wait_text("finding-llamafactory.mean_seq_padded", |t| t.contains("补齐")).await?;
    page.scroll_to("mean-seq-len-input").await?;
    page.screenshot("zh-mean-seq-len").await?;

    // MindSpeed-LLM pads to the sequence length unless its script says not to, which it then does.
    page.choose("hardware-select", "ascend-910b2").await?;
    page.choose("framework-select", "mindspeed-llm").await?;
    page.type_into("micro-batch-input", "1").await?;
    let script = page.wait_text("launch-text", |t| t.contains("posttrain_gpt.py")).await?;
    assert!(script.contains("--no-pad-to-seq-lengths"), "{script}");
    let plan = plan_of(&page).await?;
    assert_eq!(plan.batch.mean_seq_len, 512);
    let step = evaluate(&plan).time.step_seconds;
    page.type_into("mean-seq-len-input", "").await?;
    let script = page.wait_text("launch-text", |t| !t.contains("--no-pad-to-seq-lengths")).await?;
    assert!(script.contains("posttrain_gpt.py"), "{script}");
    let padded = evaluate(&plan_of(&page).await?).time.step_seconds;
    assert!(step < padded / 2.0, "{step} s against {padded} s padded to the sequence length");
    page.driver.quit().await
}

/// The three panels at a phone's width, in both languages: nothing wider than the screen.
#[tokio::test(flavor = "multi_thread")]
async fn the_extras_fit_a_phone() -> WebDriverResult<()> {
    let chromedriver = Chromedriver::start();
    let page = open(&chromedriver, 390, 844).await?;
    page.wait_text("params-total", |t| !t.is_empty()).await?;
    page.type_into("cost-price-input", "2.5").await?;
    paste(&page, "logcal-text", &megatron_log(5000.0)).await?;
    page.click("logcal-fit").await?;
    page.wait_text("logcal-result", |t| t.contains("Fitted")).await?;
    page.click("sweep-run").await?;
    page.el("sweep-table").await?;
    let overflow = "const w = document.documentElement.clientWidth; \
                    const over = [...document.querySelectorAll('.panel, .header, .layout')] \
                      .map(e => Math.ceil(e.getBoundingClientRect().right - w)).filter(d => d > 0); \
                    return Math.max(0, document.documentElement.scrollWidth - w, ...over);";
    for lang in ["en", "zh"] {
        if lang == "zh" {
            page.click("lang-switch").await?;
            page.wait_text("sweep-run", |t| t == "计算").await?;
        }
        assert_eq!(page.driver.execute(overflow, vec![]).await?.json().as_i64(), Some(0), "{lang}");
        // The sweep's figures fit without scrolling the table sideways.
        let sideways =
            "const s = document.querySelector('.sweep-scroll'); return s.scrollWidth - s.clientWidth;";
        assert_eq!(page.driver.execute(sideways, vec![]).await?.json().as_i64(), Some(0), "{lang}");
        for (testid, name) in [("logcal-title", "log"), ("cost-title", "cost"), ("sweep-run", "sweep")] {
            page.scroll_to(testid).await?;
            page.screenshot(&format!("{lang}-phone-{name}")).await?;
        }
    }
    page.driver.quit().await
}

/// A search whose plans fit but each break a rule says which rule, with the values of the first plan
/// that broke it, not that nothing fits: Llama 3.1 405B GRPO on VeRL, 16 nodes of 8 H100, 128
/// prompts a step, where no rollout engine within a node holds the weights (core/tests/it/search.rs
/// has the arithmetic).
#[tokio::test(flavor = "multi_thread")]
async fn a_search_that_finds_no_valid_plan_names_the_rule() -> WebDriverResult<()> {
    let chromedriver = Chromedriver::start();
    let page = open(&chromedriver, 1280, 900).await?;
    page.wait_text("params-total", |t| !t.is_empty()).await?;
    page.choose("framework-select", "verl").await?;
    page.choose("method-select", "grpo").await?;
    page.choose("model-select", "llama-3.1-405b").await?;
    page.wait_text("params-total", |t| t.starts_with("405,")).await?;
    page.type_into("nodes-input", "16").await?;
    page.wait_text("n-devices", |t| t == "128").await?;
    page.type_into("global-batch-input", "128").await?;
    page.scroll_to("search-run").await?;
    page.click("search-run").await?;
    let summary = page.wait_text("search-summary", |t| t.contains("plans tried")).await?;
    assert!(summary.contains(", 0 keep every rule"), "{summary}");
    let blocked = page.wait_text("search-blocked", |t| !t.is_empty()).await?;
    assert!(blocked.contains("plans fit, but each breaks a rule"), "{blocked}");
    assert!(blocked.contains("does not even hold its weights"), "{blocked}");
    assert!(!page.has("search-none").await?, "the page said nothing fits");
    // The plan shown is the core's: its fit count and rule.
    let plan = plan_of(&page).await?;
    let result = trainplan_core::search::search(&plan);
    assert!(blocked.starts_with(&format!("{} plans fit", result.fit)), "{blocked}");
    page.scroll_to("search-summary").await?;
    page.screenshot("en-search-blocked").await?;
    page.click("lang-switch").await?;
    let zh = page.wait_text("search-blocked", |t| t.contains("放得下")).await?;
    assert!(zh.contains("违反框架规则"), "{zh}");
    page.scroll_to("search-summary").await?;
    // The panels below the fold are painted when they come into view: a frame or two after.
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    page.screenshot("zh-search-blocked").await?;
    page.driver.quit().await
}

/// A MoE model whose weights overflow the rollout engine at any TP within a node: Qwen3-235B-A22B
/// GRPO on VeRL, 64 H100, rollout TP 8 (58.8 GB of weights a device against a 48 GB engine). The
/// rule's fix spreads the experts over the rollout's EP, the launch script carries it as VeRL's
/// EP = TP × DP, and an EP that is no multiple of the TP is refused, in English and Chinese.
#[tokio::test(flavor = "multi_thread")]
async fn a_moe_rollout_too_large_for_its_engine_spreads_its_experts() -> WebDriverResult<()> {
    let chromedriver = Chromedriver::start();
    let page = open(&chromedriver, 1280, 900).await?;
    page.wait_text("params-total", |t| !t.is_empty()).await?;
    page.choose("framework-select", "verl").await?;
    page.choose("method-select", "grpo").await?;
    page.choose("model-select", "qwen3-235b-a22b").await?;
    page.wait_text("params-total", |t| t.starts_with("235,")).await?;
    page.type_into("nodes-input", "8").await?;
    page.type_into("rollout-tp-input", "8").await?;
    let finding = page.wait_text("finding-rl.engine_too_small", |t| !t.is_empty()).await?;
    assert!(finding.contains("does not even hold its weights"), "{finding}");
    page.scroll_to("finding-rl.engine_too_small").await?;
    page.click("fix-rl.engine_too_small").await?;
    page.wait_text("n-devices", |t| t == "64").await?;
    assert_eq!(page.el("rollout-ep-input").await?.prop("value").await?.as_deref(), Some("16"));
    let plan = plan_of(&page).await?;
    assert_eq!((plan.rl.rollout_tp.get(), plan.rl.rollout_ep.get()), (8, 16));
    assert!(!page.has("finding-rl.engine_too_small").await?, "the fix left it");
    page.scroll_to("launch-text").await?;
    let script = page.wait_text("launch-text", |t| t.contains("expert_parallel_size=16")).await?;
    assert!(script.contains("actor_rollout_ref.rollout.data_parallel_size=2"), "{script}");
    // EP 12 is no multiple of TP 8.
    page.type_into("rollout-ep-input", "12").await?;
    let refused = page.wait_text("finding-rl.rollout_ep", |t| !t.is_empty()).await?;
    assert!(refused.contains("Rollout EP 12 must be a multiple of rollout TP 8"), "{refused}");
    page.scroll_to("finding-rl.rollout_ep").await?;
    page.screenshot("en-rollout-ep").await?;
    page.click("lang-switch").await?;
    let zh = page.wait_text("finding-rl.rollout_ep", |t| t.contains("推理 EP 12")).await?;
    assert!(zh.contains("推理 TP 8 的倍数"), "{zh}");
    page.scroll_to("finding-rl.rollout_ep").await?;
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    page.screenshot("zh-rollout-ep").await?;
    page.driver.quit().await
}

/// Qwen/Qwen2.5-7B-Instruct-GPTQ-Int4's config.json: the keys that shape the model and its
/// `quantization_config` as Qwen publishes it.
const QWEN_GPTQ: &str = r#"{"_name_or_path": "Qwen/Qwen2.5-7B-Instruct-GPTQ-Int4", "architectures": ["Qwen2ForCausalLM"],
  "hidden_size": 3584, "intermediate_size": 18944, "max_position_embeddings": 32768, "model_type": "qwen2",
  "num_attention_heads": 28, "num_hidden_layers": 28, "num_key_value_heads": 4, "rms_norm_eps": 1e-06,
  "rope_theta": 1000000.0, "tie_word_embeddings": false, "torch_dtype": "float16", "vocab_size": 152064,
  "quantization_config": {"batch_size": 1, "bits": 4, "block_name_to_quantize": null, "cache_block_outputs": true,
    "damp_percent": 0.01, "dataset": null, "desc_act": false, "exllama_config": {"version": 1}, "group_size": 128,
    "max_input_length": null, "model_seqlen": null, "module_name_preceding_first_block": null,
    "modules_in_block_to_quantize": null, "pad_token_id": null, "quant_method": "gptq", "sym": true,
    "tokenizer": null, "true_sequential": true, "use_cuda_fp16": false, "use_exllama": true}}"#;

/// A GPTQ checkpoint pasted as its config.json: LLaMA-Factory's LoRA counts its packed base, the
/// peak the core gives for the plan in the address, and says so; full SFT over it is refused, in
/// both languages, and the fix goes back to LoRA.
#[tokio::test(flavor = "multi_thread")]
async fn a_gptq_checkpoint_trains_lora_over_its_packed_base() -> WebDriverResult<()> {
    let chromedriver = Chromedriver::start();
    let page = open(&chromedriver, 1280, 1000).await?;
    page.wait_text("params-total", |t| !t.is_empty()).await?;
    let sixteen_bit = evaluate(&plan_of(&page).await?).memory.peak_bytes;
    page.driver.find(By::Css("details.import summary")).await?.click().await?;
    paste(&page, "config-paste", QWEN_GPTQ).await?;
    page.click("config-apply").await?;
    let note = page.wait_text("finding-llamafactory.ptq_base", |t| !t.is_empty()).await?;
    assert!(note.contains("GPTQ 4-bit") && note.contains("0.520 bytes"), "{note}");
    // Its layers' 6,525,417,472 linear weights (Qwen2.5-7B's, as the core's QLoRA test counts
    // them) take 0.5 + 2.5/128 bytes instead of 2: the peak drops by that much.
    let report = evaluate(&plan_of(&page).await?);
    let saved = 6_525_417_472.0 * (2.0 - (0.5 + 2.5 / 128.0));
    let dropped = sixteen_bit as f64 - report.memory.peak_bytes as f64;
    assert!((dropped - saved).abs() < 1e6, "the peak dropped {dropped} B, not {saved}");
    let gib = format!("{:.2} GiB", report.memory.peak_bytes as f64 / (1u64 << 30) as f64);
    assert!(page.text("memory-fits").await?.contains(&gib), "{gib}");

    page.choose("method-select", "sft-full").await?;
    let refused = page.wait_text("finding-llamafactory.ptq_lora_only", |t| !t.is_empty()).await?;
    assert!(refused.contains("LoRA only"), "{refused}");
    page.click("lang-switch").await?;
    let refused = page.wait_text("finding-llamafactory.ptq_lora_only", |t| t.contains("只能用 LoRA")).await?;
    assert!(refused.contains("GPTQ"), "{refused}");
    page.scroll_to("finding-llamafactory.ptq_lora_only").await?;
    page.screenshot("zh-gptq-refused").await?;
    page.click("fix-llamafactory.ptq_lora_only").await?;
    page.wait_text("finding-llamafactory.ptq_base", |t| t.contains("GPTQ 4 位")).await?;
    assert!(!page.has("finding-llamafactory.ptq_lora_only").await?, "the fix left it");
    assert_eq!(plan_of(&page).await?.method, trainplan_core::plan::Method::Lora);
    page.scroll_to("finding-llamafactory.ptq_base").await?;
    page.screenshot("zh-gptq").await?;
    page.driver.quit().await
}

/// DeepSpeed's own throughput lines calibrate a DeepSpeed plan: the step is its global batch over
/// the logged samples a second (`CurrSamplesPerSec`), the peak `MaxMemAllocated`.
#[tokio::test]
async fn a_pasted_deepspeed_log_calibrates_a_deepspeed_plan() -> WebDriverResult<()> {
    let chromedriver = Chromedriver::start();
    let page = open(&chromedriver, 1280, 900).await?;
    page.wait_text("params-total", |t| !t.is_empty()).await?;
    page.choose("framework-select", "deepspeed").await?;
    page.choose("method-select", "sft-full").await?;
    page.wait_text("summary-run", |t| t.contains("DeepSpeed")).await?;
    let plan = plan_of(&page).await?;
    let measured = 1.2 * evaluate(&plan).time.step_seconds;
    let rate = f64::from(plan.batch.global_batch.get()) / measured;
    let log = [(10, 0.6), (20, 1.0), (30, 1.0)]
        .map(|(step, f)| {
            format!(
                "[2026-11-30 10:00:00,000] [INFO] [timer.py:264:stop] epoch=0/micro_step={}/global_step={step}, RunningAvgSamplesPerSec={}, CurrSamplesPerSec={}, MemAllocated=12.5GB, MaxMemAllocated=30.25GB",
                step * 4,
                0.9 * rate,
                f * rate
            )
        })
        .join("\n");
    paste(&page, "logcal-text", &log).await?;
    page.click("logcal-fit").await?;
    let read = page.wait_text("logcal-result", |t| t.contains("Fitted")).await?;
    assert!(read.contains("DeepSpeed throughput lines: 3"), "{read}");
    assert!(!read.contains("This log reads as"), "{read}");
    let fitted = evaluate(&plan_of(&page).await?).time.step_seconds;
    assert!((fitted / measured - 1.0).abs() < 1e-3, "{fitted} against {measured}");
    page.click("lang-switch").await?;
    let read = page.wait_text("logcal-result", |t| t.contains("已拟合")).await?;
    assert!(read.contains("DeepSpeed 吞吐日志 3 行"), "{read}");
    page.driver.quit().await
}

/// LoRA dropout, read from a LLaMA-Factory YAML pasted into the import: the page shows the core's
/// peak with each adapter's mask counted, and writes the key back into its own YAML.
#[tokio::test]
async fn an_imported_lora_dropout_counts_its_masks() -> WebDriverResult<()> {
    let chromedriver = Chromedriver::start();
    let page = open(&chromedriver, 1280, 900).await?;
    page.wait_text("summary-run", |t| t.contains("LLaMA-Factory")).await?;
    // The launch panel comes with the results, after the summary.
    page.wait_text("launch-text", |t| !t.is_empty()).await?;
    let summary = page.driver.find(By::Css(".launch-import summary")).await?;
    page.click_el(&summary).await?;
    // No gradient checkpointing: every layer keeps its masks to the loss, the step's peak.
    let yaml = "model_name_or_path: Qwen/Qwen2.5-7B-Instruct\nstage: sft\nfinetuning_type: lora\n\
                lora_rank: 8\nlora_target: all\nlora_dropout: 0.05\nper_device_train_batch_size: 1\n\
                gradient_accumulation_steps: 8\ncutoff_len: 2048\nbf16: true\n\
                disable_gradient_checkpointing: true\n";
    page.type_into("launch-import-text", yaml).await?;
    page.click("launch-import-apply").await?;
    page.wait_text("launch-import-note", |t| !t.is_empty()).await?;
    let plan = plan_of(&page).await?;
    assert_eq!(plan.lora.dropout, 0.05);
    let mut without = plan.clone();
    without.lora.dropout = 0.0;
    let (with, without) = (evaluate(&plan).memory.peak_bytes, evaluate(&without).memory.peak_bytes);
    assert!(without < with, "{without} against {with}");
    let peak = format!("{:.2} GiB", with as f64 / (1u64 << 30) as f64);
    page.wait_text("summary-fits", |t| t.contains(&peak)).await?;
    page.wait_text("launch-text", |t| t.contains("lora_dropout: 0.05")).await?;
    // The form shows it beside the rank, takes a new one, and marks one past 0.9 as refused.
    let field = page.el("lora-dropout-input").await?;
    assert_eq!(field.prop("value").await?.as_deref(), Some("0.05"));
    page.type_into("lora-dropout-input", "0.1").await?;
    page.wait_text("launch-text", |t| t.contains("lora_dropout: 0.1")).await?;
    page.type_into("lora-dropout-input", "0.95").await?;
    let invalid = page.el("lora-dropout-input").await?.attr("aria-invalid").await?;
    assert_eq!(invalid.as_deref(), Some("true"));
    page.type_into("lora-dropout-input", "0.1").await?;
    assert_eq!(plan_of(&page).await?.lora.dropout, 0.1);
    page.click("lang-switch").await?;
    page.wait_text("summary-run", |t| t.contains("LLaMA-Factory")).await?;
    page.scroll_to("lora-dropout-input").await?;
    page.screenshot("zh-lora-dropout").await?;
    // MindSpeed-LLM's LoRA runs no dropout: the field leaves the form, the rank stays.
    page.choose("framework-select", "mindspeed-llm").await?;
    page.wait_text("summary-run", |t| t.contains("MindSpeed-LLM")).await?;
    assert!(!page.has("lora-dropout-input").await?, "lora-dropout-input is shown for MindSpeed-LLM");
    assert!(page.has("lora-rank-input").await?);
    page.driver.quit().await
}

/// DoRA, a box beside the LoRA rank for LLaMA-Factory: ticked, the plan trains it, the page shows
/// the core's peak and writes `use_dora` into its YAML; a DoRA YAML pasted into the import ticks it;
/// on a GPTQ checkpoint LLaMA-Factory's refusal shows with its fix; MindSpeed-LLM has no DoRA.
#[tokio::test]
async fn dora_is_a_box_beside_the_lora_rank() -> WebDriverResult<()> {
    let chromedriver = Chromedriver::start();
    let page = open(&chromedriver, 1280, 900).await?;
    page.wait_text("summary-run", |t| t.contains("LLaMA-Factory")).await?;
    assert_eq!(page.el("dora-check").await?.prop("checked").await?.as_deref(), Some("false"));
    page.click("dora-check").await?;
    page.wait_text("launch-text", |t| t.contains("use_dora: true")).await?;
    let plan = plan_of(&page).await?;
    assert!(plan.lora.dora);
    let mut without = plan.clone();
    without.lora.dora = false;
    let (with, without) = (evaluate(&plan), evaluate(&without));
    assert!(without.time.step_seconds < with.time.step_seconds);
    let peak = format!("{:.2} GiB", with.memory.peak_bytes as f64 / (1u64 << 30) as f64);
    page.wait_text("summary-fits", |t| t.contains(&peak)).await?;
    page.click("lang-switch").await?;
    page.wait_text("summary-run", |t| t.contains("LLaMA-Factory")).await?;
    page.scroll_to("dora-check").await?;
    page.screenshot("zh-dora").await?;
    page.click("lang-switch").await?;
    // Off again, then read from a pasted YAML.
    page.click("dora-check").await?;
    page.wait_text("launch-text", |t| !t.contains("use_dora")).await?;
    // The launch panel comes with the results, after the summary.
    page.wait_text("launch-text", |t| !t.is_empty()).await?;
    let summary = page.driver.find(By::Css(".launch-import summary")).await?;
    page.click_el(&summary).await?;
    let yaml = "model_name_or_path: Qwen/Qwen2.5-7B-Instruct-GPTQ-Int4\nstage: sft\nfinetuning_type: lora\n\
                lora_rank: 8\nlora_target: all\nuse_dora: true\nper_device_train_batch_size: 1\n\
                gradient_accumulation_steps: 8\ncutoff_len: 2048\nbf16: true\n";
    page.type_into("launch-import-text", yaml).await?;
    page.click("launch-import-apply").await?;
    page.wait_text("launch-import-note", |t| !t.is_empty()).await?;
    assert!(plan_of(&page).await?.lora.dora);
    assert_eq!(page.el("dora-check").await?.prop("checked").await?.as_deref(), Some("true"));
    // The GPTQ checkpoint: LLaMA-Factory refuses DoRA on it, and the fix turns DoRA off.
    let finding = page.wait_text("finding-llamafactory.ptq_dora", |t| !t.is_empty()).await?;
    assert!(finding.contains("DoRA"), "{finding}");
    page.click("fix-llamafactory.ptq_dora").await?;
    page.wait_text("launch-text", |t| !t.contains("use_dora")).await?;
    assert!(!plan_of(&page).await?.lora.dora);
    // MindSpeed-LLM's LoRA has no DoRA: the box leaves the form.
    page.choose("framework-select", "mindspeed-llm").await?;
    page.wait_text("summary-run", |t| t.contains("MindSpeed-LLM")).await?;
    assert!(!page.has("dora-check").await?, "dora-check is shown for MindSpeed-LLM");
    page.driver.quit().await
}

/// LLaMA-Factory's `pure_bf16`, a box under the precision while it is bf16: Qwen2.5-7B full SFT on
/// one H100 does not fit with fp32 trainable parameters and fits with bf16 ones, as the core says;
/// the advice offers it; the YAML carries the key; ZeRO-3 is refused with a fix; 8-bit AdamW stays
/// under DeepSpeed and is warned of with the optimizer offloaded; fp16 hides the box.
#[tokio::test]
async fn pure_bf16_fits_a_full_fine_tune_on_one_device() -> WebDriverResult<()> {
    let chromedriver = Chromedriver::start();
    let page = open(&chromedriver, 1280, 900).await?;
    page.wait_text("summary-run", |t| t.contains("LLaMA-Factory")).await?;
    page.choose("method-select", "sft-full").await?;
    page.type_into("devices-input", "1").await?;
    page.wait_text("summary-fits", |t| !t.is_empty()).await?;
    let plan = plan_of(&page).await?;
    assert!(!evaluate(&plan).memory.fits, "the fp32 trainables fit");
    // The advice offers it, and applies it with one click: the box is ticked.
    page.settled().await?;
    page.scroll_to("advice-pure_bf16").await?;
    page.screenshot("en-pure-bf16-advice").await?;
    page.click("advice-apply-pure_bf16").await?;
    page.wait_text("launch-text", |t| t.contains("pure_bf16: true")).await?;
    assert_eq!(page.el("pure-bf16-check").await?.prop("checked").await?.as_deref(), Some("true"));
    let plan = plan_of(&page).await?;
    assert!(plan.pure_bf16);
    let report = evaluate(&plan);
    assert!(report.memory.fits);
    let peak = format!("{:.2} GiB", report.memory.peak_bytes as f64 / (1u64 << 30) as f64);
    page.wait_text("summary-fits", |t| t.contains(&peak)).await?;
    // bitsandbytes' 8-bit AdamW beside it: a byte a moment, written as the HF Trainer's `optim`.
    page.click("adam-8bit-check").await?;
    page.wait_text("launch-text", |t| t.contains("optim: adamw_8bit")).await?;
    let plan = plan_of(&page).await?;
    assert_eq!(plan.optimizer, trainplan_core::plan::Optimizer::AdamW8bit);
    let eight_bit = evaluate(&plan);
    assert!(eight_bit.memory.peak_bytes < report.memory.peak_bytes);
    let peak = format!("{:.2} GiB", eight_bit.memory.peak_bytes as f64 / (1u64 << 30) as f64);
    page.wait_text("summary-fits", |t| t.contains(&peak)).await?;
    page.click("lang-switch").await?;
    page.wait_text("summary-run", |t| t.contains("LLaMA-Factory")).await?;
    page.scroll_to("pure-bf16-check").await?;
    page.screenshot("zh-pure-bf16").await?;
    page.click("lang-switch").await?;
    page.choose("zero-select", "3").await?;
    page.wait_text("finding-llamafactory.pure_bf16_zero3", |t| t.contains("ZeRO-3")).await?;
    page.click("fix-llamafactory.pure_bf16_zero3").await?;
    page.wait_text("launch-text", |t| !t.contains("pure_bf16")).await?;
    assert!(!plan_of(&page).await?.pure_bf16);
    // Under DeepSpeed the 8-bit AdamW is the engine's client optimizer: the box stays, the key too;
    // with the optimizer offloaded accelerate swaps it for DeepSpeed's CPU Adam, which a warning says
    // and whose fix puts AdamW back.
    assert!(page.has("adam-8bit-check").await?, "adam-8bit-check is hidden under ZeRO-3");
    page.wait_text("launch-text", |t| t.contains("optim: adamw_8bit")).await?;
    page.click("offload-opt-check").await?;
    page.wait_text("finding-llamafactory.adam_8bit_offload", |t| t.contains("CPU Adam")).await?;
    page.settled().await?;
    page.scroll_to("finding-llamafactory.adam_8bit_offload").await?;
    page.screenshot("en-adam-8bit-offload").await?;
    page.click("fix-llamafactory.adam_8bit_offload").await?;
    page.wait_text("launch-text", |t| !t.contains("optim: adamw_8bit")).await?;
    assert_eq!(plan_of(&page).await?.optimizer, trainplan_core::plan::Optimizer::AdamW);
    page.choose("precision-select", "fp16").await?;
    page.wait_text("launch-text", |t| t.contains("fp16: true")).await?;
    assert!(!page.has("pure-bf16-check").await?, "pure-bf16-check is shown with fp16");
    page.driver.quit().await
}

/// A plan that fits without its host offloads is told to keep its states on the device: Qwen2.5-7B
/// full SFT on 8 H100 at ZeRO-3 with the optimizer and the parameters offloaded. The advice says so
/// in both languages with the core's figures, and applying it unticks both boxes; the parameters
/// alone are offered too.
#[tokio::test]
async fn offloads_a_plan_does_not_need_are_advised_off() -> WebDriverResult<()> {
    let chromedriver = Chromedriver::start();
    let page = open(&chromedriver, 1280, 900).await?;
    page.wait_text("summary-run", |t| t.contains("LLaMA-Factory")).await?;
    page.choose("method-select", "sft-full").await?;
    page.choose("zero-select", "3").await?;
    page.click("offload-opt-check").await?;
    page.click("offload-params-check").await?;
    page.wait_text("launch-text", |t| t.contains("offload")).await?;
    let plan = plan_of(&page).await?;
    assert!(plan.parallel.offload_optimizer && plan.parallel.offload_params);
    let advice = trainplan_core::advice::advise(&plan);
    let onload = advice.iter().find(|a| a.code == trainplan_core::advice::Move::Onload).expect("offered");
    assert!(advice.iter().any(|a| a.code == trainplan_core::advice::Move::OnloadParams));
    page.settled().await?;
    page.wait_text("advice-onload", |t| t.contains("device")).await?;
    assert!(page.has("advice-onload_params").await?);
    page.click("lang-switch").await?;
    let zh = page.wait_text("advice-onload", |t| t.contains("设备")).await?;
    let speed = format!("+{:.1}%", onload.speed_delta_frac * 100.0);
    assert!(zh.contains(&speed), "{zh} does not show {speed}");
    page.scroll_to("advice-onload").await?;
    page.screenshot("zh-onload-advice").await?;
    page.click("advice-apply-onload").await?;
    page.wait_text("launch-text", |t| !t.contains("offload")).await?;
    let plan = plan_of(&page).await?;
    assert!(!plan.parallel.offload_optimizer && !plan.parallel.offload_params);
    assert_eq!(page.el("offload-opt-check").await?.prop("checked").await?.as_deref(), Some("false"));
    assert!(evaluate(&plan).memory.fits);
    page.driver.quit().await
}

/// LLaMA-Factory's freeze-tuning, a method of its own: choosing it asks how many of the last layers
/// train, the YAML says `finetuning_type: freeze` with that count, the peak is the core's and sits
/// between LoRA's and a full fine-tune's; on Megatron-LM it is refused with a fix back to
/// LLaMA-Factory, and the trained-layers box leaves with the framework.
#[tokio::test]
async fn freeze_tuning_trains_the_last_layers() -> WebDriverResult<()> {
    let chromedriver = Chromedriver::start();
    let page = open(&chromedriver, 1280, 900).await?;
    page.wait_text("summary-run", |t| t.contains("LLaMA-Factory")).await?;
    let lora = evaluate(&plan_of(&page).await?).memory.peak_bytes;
    page.choose("method-select", "freeze").await?;
    page.wait_text("launch-text", |t| t.contains("finetuning_type: freeze")).await?;
    page.type_into("freeze-layers-input", "4").await?;
    page.wait_text("launch-text", |t| t.contains("freeze_trainable_layers: 4")).await?;
    let plan = plan_of(&page).await?;
    assert_eq!((plan.method, plan.freeze_layers.get()), (trainplan_core::plan::Method::Freeze, 4));
    let report = evaluate(&plan);
    let peak = format!("{:.2} GiB", report.memory.peak_bytes as f64 / (1u64 << 30) as f64);
    page.wait_text("summary-fits", |t| t.contains(&peak)).await?;
    let mut full = plan.clone();
    full.method = trainplan_core::plan::Method::SftFull;
    assert!(lora < report.memory.peak_bytes && report.memory.peak_bytes < evaluate(&full).memory.peak_bytes);
    page.scroll_to("freeze-layers-input").await?;
    page.screenshot("en-freeze").await?;
    page.click("lang-switch").await?;
    page.wait_text("summary-run", |t| t.contains("LLaMA-Factory")).await?;
    page.screenshot("zh-freeze").await?;
    page.click("lang-switch").await?;
    page.choose("framework-select", "megatron").await?;
    page.wait_text("finding-method.freeze_framework", |t| t.contains("freeze")).await?;
    assert!(!page.has("freeze-layers-input").await?, "the trained layers are asked on Megatron-LM");
    page.click("fix-method.freeze_framework").await?;
    page.wait_text("summary-run", |t| t.contains("LLaMA-Factory")).await?;
    assert_eq!(plan_of(&page).await?.method, trainplan_core::plan::Method::Freeze);
    page.driver.quit().await
}

/// DeepSpeed's offload to NVMe (ZeRO-Infinity): once a LLaMA-Factory plan at ZeRO-3 offloads its
/// optimizer, the form asks where to, and NVMe asks the node's read and write bandwidths; the
/// DeepSpeed file is named for it and the memory notes what the drive holds, as the core counts
/// it; the advice offers host memory instead. On Megatron-LM, which offloads to host memory alone, a warning says so and its fix puts
/// the host back.
#[tokio::test]
async fn nvme_offload_swaps_the_states_through_the_drive() -> WebDriverResult<()> {
    let chromedriver = Chromedriver::start();
    let page = open(&chromedriver, 1280, 900).await?;
    page.wait_text("summary-run", |t| t.contains("LLaMA-Factory")).await?;
    page.choose("method-select", "sft-full").await?;
    page.choose("zero-select", "3").await?;
    assert!(!page.has("offload-device-select").await?, "asked where to offload with nothing offloaded");
    page.click("offload-opt-check").await?;
    page.choose("offload-device-select", "nvme").await?;
    page.wait_text("launch-text", |t| t.contains("ds_z3_offload_nvme_config.json")).await?;
    // A bandwidth of 0 is refused and changes nothing; an empty box means the default.
    page.type_into("nvme-read-input", "0").await?;
    let invalid = page.el("nvme-read-input").await?.attr("aria-invalid").await?;
    assert_eq!(invalid.as_deref(), Some("true"));
    assert_eq!(
        plan_of(&page).await?.cluster.nvme_read_gb_per_s,
        trainplan_core::plan::NVME_READ_GB_PER_S_DEFAULT
    );
    page.type_into("nvme-read-input", "48").await?;
    page.type_into("nvme-write-input", "26").await?;
    let plan = plan_of(&page).await?;
    assert_eq!(plan.parallel.offload_device, trainplan_core::plan::OffloadDevice::Nvme);
    assert_eq!((plan.cluster.nvme_read_gb_per_s, plan.cluster.nvme_write_gb_per_s), (48.0, 26.0));
    let report = evaluate(&plan);
    assert!(0 < report.memory.nvme_bytes_per_node);
    let on_drive = format!("{:.2} GiB", report.memory.nvme_bytes_per_node as f64 / (1u64 << 30) as f64);
    page.wait_text("memory-nvme", |t| t.contains(&on_drive)).await?;
    page.settled().await?;
    page.scroll_to("offload-device-select").await?;
    page.screenshot("en-nvme").await?;
    page.click("lang-switch").await?;
    page.wait_text("memory-nvme", |t| t.contains("NVMe")).await?;
    page.scroll_to("offload-device-select").await?;
    page.screenshot("zh-nvme").await?;
    page.click("lang-switch").await?;
    // The advice keeps the states in host memory instead, as fast as the core says.
    page.wait_text("advice-offload_to_host", |t| t.contains("host memory")).await?;
    page.click("advice-apply-offload_to_host").await?;
    page.wait_text("launch-text", |t| t.contains("ds_z3_offload_config.json")).await?;
    assert_eq!(plan_of(&page).await?.parallel.offload_device, trainplan_core::plan::OffloadDevice::Cpu);
    assert!(!page.has("memory-nvme").await?, "the drive's share outlived the move");
    page.choose("offload-device-select", "nvme").await?;
    page.wait_text("launch-text", |t| t.contains("ds_z3_offload_nvme_config.json")).await?;
    page.choose("framework-select", "megatron").await?;
    page.wait_text("finding-zero.nvme_framework", |t| t.contains("NVMe")).await?;
    assert!(!page.has("nvme-read-input").await?, "NVMe bandwidths asked on Megatron-LM");
    page.click("fix-zero.nvme_framework").await?;
    page.wait_text("summary-run", |t| t.contains("Megatron")).await?;
    assert_eq!(plan_of(&page).await?.parallel.offload_device, trainplan_core::plan::OffloadDevice::Cpu);
    page.driver.quit().await
}

/// LLaMA-Factory's GaLore on one device: the box offers it for a full fine-tune, asks its rank and
/// whether to step layer by layer; the YAML carries `use_galore` with both (APOLLO's box, then,
/// `use_apollo` with the same), the launch runs in
/// LLaMA-Factory's own process (layer-wise GaLore refuses torchrun), the peak is the core's and
/// below AdamW's; a global batch of several micro-batches is refused layer-wise with a fix.
#[tokio::test]
async fn galore_trains_full_parameters_in_low_rank_states() -> WebDriverResult<()> {
    let chromedriver = Chromedriver::start();
    let page = open(&chromedriver, 1280, 900).await?;
    page.wait_text("summary-run", |t| t.contains("LLaMA-Factory")).await?;
    page.choose("method-select", "sft-full").await?;
    page.type_into("devices-input", "1").await?;
    page.click("pure-bf16-check").await?;
    page.wait_text("launch-text", |t| t.contains("pure_bf16: true")).await?;
    let adamw = evaluate(&plan_of(&page).await?).memory.peak_bytes;
    assert!(!page.has("low-rank-input").await?, "GaLore's rank asked without GaLore");
    page.click("galore-check").await?;
    page.type_into("low-rank-input", "64").await?;
    page.wait_text("launch-text", |t| t.contains("galore_rank: 64")).await?;
    page.click("low-rank-layerwise-check").await?;
    page.wait_text("finding-llamafactory.low_rank_layerwise_accumulation", |t| !t.is_empty()).await?;
    page.type_into("global-batch-input", "1").await?;
    page.wait_text("launch-text", |t| t.contains("galore_layerwise: true")).await?;
    // The launch script runs the one device in LLaMA-Factory's own process, not under torchrun.
    page.click("launch-tab-launch.sh").await?;
    let script = page.wait_text("launch-text", |t| t.contains("llamafactory-cli train")).await?;
    assert!(script.contains("CUDA_VISIBLE_DEVICES") && !script.contains("FORCE_TORCHRUN"), "{script}");
    page.click("launch-tab-train.yaml").await?;
    let plan = plan_of(&page).await?;
    assert_eq!(plan.optimizer, trainplan_core::plan::Optimizer::Galore);
    assert_eq!((plan.low_rank.rank.get(), plan.low_rank.layerwise), (64, true));
    let report = evaluate(&plan);
    assert!(report.findings.is_empty(), "{:?}", report.findings);
    assert!(report.memory.peak_bytes < adamw);
    let peak = format!("{:.2} GiB", report.memory.peak_bytes as f64 / (1u64 << 30) as f64);
    page.wait_text("summary-fits", |t| t.contains(&peak)).await?;
    // APOLLO in its place: the same rank and stepping under its own keys, the same states.
    page.click("apollo-check").await?;
    page.wait_text("launch-text", |t| t.contains("use_apollo: true") && t.contains("apollo_rank: 64"))
        .await?;
    let apollo = plan_of(&page).await?;
    assert_eq!((apollo.optimizer, apollo.low_rank), (trainplan_core::plan::Optimizer::Apollo, plan.low_rank));
    assert_eq!(evaluate(&apollo).memory.peak_bytes, report.memory.peak_bytes);
    page.scroll_to("galore-check").await?;
    page.screenshot("en-galore").await?;
    page.click("lang-switch").await?;
    page.wait_text("summary-run", |t| t.contains("LLaMA-Factory")).await?;
    page.scroll_to("galore-check").await?;
    page.screenshot("zh-galore").await?;
    page.driver.quit().await
}

/// gpt-oss: the catalog's count is every tensor of transformers' model (116.83 B, the model card's),
/// LLaMA-Factory trains it on its own template and says which attention kernel it loads; on
/// Megatron-LM its learned attention sinks cannot run in FlashAttention (Transformer Engine's backend
/// filter), so the page refuses that plan and its fix moves to cuDNN's fused attention, with the
/// model built as Megatron-Bridge builds it.
#[tokio::test]
async fn gpt_oss_runs_its_attention_sinks_where_the_kernels_take_them() -> WebDriverResult<()> {
    let chromedriver = Chromedriver::start();
    let page = open(&chromedriver, 1280, 900).await?;
    page.wait_text("summary-run", |t| t.contains("LLaMA-Factory")).await?;
    page.choose("model-select", "gpt-oss-120b").await?;
    // 116,829,156,672: embedding and head 2 × 201,088 × 2,880, 36 layers of 3,213,080,192, the final norm.
    assert_eq!(page.wait_text("params-total", |t| t == "116,829,156,672").await?, "116,829,156,672");
    page.wait_text("launch-text", |t| t.contains("template: gpt_oss")).await?;
    page.wait_text("finding-llamafactory.gpt_oss_kernel", |t| t.contains("vllm-flash-attn3")).await?;
    page.choose("framework-select", "megatron").await?;
    page.choose("method-select", "sft-full").await?;
    page.choose("attention-select", "flash").await?;
    page.wait_text("finding-parallel.sinks_flash", |t| t.contains("FlashAttention")).await?;
    assert!(!page.has("finding-llamafactory.gpt_oss_kernel").await?, "LLaMA-Factory's note on Megatron-LM");
    page.settled().await?;
    page.scroll_to("finding-parallel.sinks_flash").await?;
    page.screenshot("en-gpt-oss").await?;
    page.click("lang-switch").await?;
    page.wait_text("finding-parallel.sinks_flash", |t| t.contains("注意力 sink")).await?;
    page.scroll_to("finding-parallel.sinks_flash").await?;
    page.screenshot("zh-gpt-oss").await?;
    page.click("lang-switch").await?;
    page.click("fix-parallel.sinks_flash").await?;
    let script = page
        .wait_text("launch-text", |t| {
            t.contains("--attention-backend fused") && t.contains("--softmax-type learnable")
        })
        .await?;
    assert!(script.contains("--window-size 127,0 --window-attn-skip-freq 2"), "{script}");
    assert!(!page.has("finding-parallel.sinks_flash").await?, "the fix left the finding");
    assert_eq!(plan_of(&page).await?.attention, trainplan_core::plan::AttentionImpl::Sdpa);
    page.driver.quit().await
}

/// DeepSpeed ZeRO++ on LLaMA-Factory: asked once the plan is at ZeRO-3; an hpZ group that does not
/// divide the 16 devices is refused with DeepSpeed's reason, and the fix makes it a node's 8; the
/// secondary shard raises the peak by the core's count (Qwen2.5-7B's 7,615,616,512 parameters in
/// bf16 over 8: 1,903,904,128 bytes), and the DeepSpeed file the plan writes names all three; in
/// both languages.
#[tokio::test(flavor = "multi_thread")]
async fn zero_plus_plus_is_asked_at_zero3_and_written_for_deepspeed() -> WebDriverResult<()> {
    let chromedriver = Chromedriver::start();
    let page = open(&chromedriver, 1280, 1000).await?;
    page.wait_text("summary-run", |t| t.contains("LLaMA-Factory")).await?;
    page.choose("method-select", "sft-full").await?;
    page.type_into("nodes-input", "2").await?;
    page.wait_text("n-devices", |t| t == "16").await?;
    assert!(!page.has("zero-hpz-input").await?, "ZeRO++ is asked below ZeRO-3");
    page.choose("zero-select", "3").await?;
    let before = evaluate(&plan_of(&page).await?).memory.peak_bytes;
    page.type_into("zero-hpz-input", "6").await?;
    let refused = page.wait_text("finding-zero.hpz_world", |t| !t.is_empty()).await?;
    assert!(refused.contains('6') && refused.contains("16"), "{refused}");
    page.click("fix-zero.hpz_world").await?;
    assert_eq!(page.el("zero-hpz-input").await?.prop("value").await?.as_deref(), Some("8"));
    assert!(!page.has("finding-zero.hpz_world").await?, "the fix left it");
    page.click("zero-qw-check").await?;
    page.click("zero-qg-check").await?;
    let plan = plan_of(&page).await?;
    let p = &plan.parallel;
    assert_eq!((p.zero_hpz.get(), p.zero_quantized_weights, p.zero_quantized_gradients), (8, true, true));
    let report = evaluate(&plan);
    assert_eq!(report.memory.peak_bytes - before, 7_615_616_512 * 2 / 8);
    let gib = format!("{:.2} GiB", report.memory.peak_bytes as f64 / (1u64 << 30) as f64);
    page.wait_text("memory-fits", |t| t.contains(&gib)).await?;
    let files = trainplan_core::emit::emit(&plan, "#x").unwrap();
    let json = &files.iter().find(|f| f.name.ends_with(".json")).unwrap().text;
    for key in [
        "\"zero_hpz_partition_size\": 8",
        "\"zero_quantized_weights\": true",
        "\"zero_quantized_gradients\": true",
    ] {
        assert!(json.contains(key), "{key}:\n{json}");
    }
    page.scroll_to("zero-hpz-input").await?;
    page.screenshot("en-zeropp").await?;
    page.click("lang-switch").await?;
    page.wait_text("summary", |t| t.contains("有效")).await?;
    page.scroll_to("zero-hpz-input").await?;
    page.screenshot("zh-zeropp").await?;
    page.driver.quit().await
}

/// Qwen3-Next: the catalog's count is every tensor of transformers' model (79,674,391,296, counted
/// by hand from its modeling code in the engine's tests), its Gated DeltaNet layers listed apart
/// from its attention layers in both languages; LLaMA-Factory trains it on `qwen3_nothink`;
/// MindSpeed-LLM's DeltaNet module runs at TP 1 only, and the fix's TP 1 writes its Qwen3-Next
/// layer spec and its layers' pattern.
#[tokio::test]
async fn qwen3_next_lists_its_gated_deltanet_layers_and_runs_them_where_mindspeed_does() -> WebDriverResult<()>
{
    let chromedriver = Chromedriver::start();
    let page = open(&chromedriver, 1280, 900).await?;
    page.wait_text("summary-run", |t| t.contains("LLaMA-Factory")).await?;
    page.choose("model-select", "qwen3-next-80b-a3b").await?;
    assert_eq!(page.wait_text("params-total", |t| t == "79,674,391,296").await?, "79,674,391,296");
    page.wait_text("params-breakdown", |t| t.contains("MoE layer, Gated DeltaNet")).await?;
    page.wait_text("launch-text", |t| t.contains("template: qwen3_nothink")).await?;
    page.click("lang-switch").await?;
    page.wait_text("params-breakdown", |t| t.contains("MoE 层（Gated DeltaNet）")).await?;
    page.settled().await?;
    page.scroll_to("params-breakdown").await?;
    page.screenshot("zh-qwen3-next").await?;
    page.click("lang-switch").await?;
    page.choose("framework-select", "mindspeed-llm").await?;
    page.choose("method-select", "pretrain").await?;
    page.type_into("tp-input", "2").await?;
    page.wait_text("finding-parallel.linear_attention_mindspeed", |t| t.contains("TP 1")).await?;
    page.settled().await?;
    page.scroll_to("finding-parallel.linear_attention_mindspeed").await?;
    page.screenshot("en-qwen3-next").await?;
    page.click("fix-parallel.linear_attention_mindspeed").await?;
    page.wait_text("launch-text", |t| {
        t.contains("--full-attention-interval 4") && t.contains("qwen3_next_spec")
    })
    .await?;
    assert!(!page.has("finding-parallel.linear_attention_mindspeed").await?, "the fix left the finding");
    page.driver.quit().await
}

/// A MindSpeed-RL YAML that sizes its packed rows by `max_packing_token_size` alone is read as it
/// means, and the page says how MindSpeed-RL runs it as given (every role packed to 4096), in
/// either language: its configs/grpo_deepseek_r1_671b_A2.yaml sets 10,240 so.
#[tokio::test]
async fn a_mindspeed_rl_file_that_runs_otherwise_says_so() -> WebDriverResult<()> {
    let chromedriver = Chromedriver::start();
    let page = super::open_launch_import(&chromedriver).await?;
    let yaml = "defaults:\n  - model:\n      - qwen25_7b\nmegatron_training:\n  model: qwen25_7b\nactor_config:\n  \
                micro_batch_size: 1\nrl_config:\n  use_dynamic_bsz: true\n  max_packing_token_size: 10240\n";
    page.type_into("launch-import-text", yaml).await?;
    page.click("launch-import-apply").await?;
    let said = page.wait_text("launch-import-caveat", |t| !t.is_empty()).await?;
    assert!(said.starts_with("As given, it runs otherwise: max_packing_token_size 10240"), "{said}");
    assert!(said.contains("4096 tokens each"), "{said}");
    assert_eq!(plan_of(&page).await?.rl.max_tokens_per_device, 10240);
    let model = page.wait_text("launch-import-model", |t| !t.is_empty()).await?;
    assert!(model.contains("Qwen2.5-7B") && !model.contains("not identified"), "{model}");
    // The plan's own file sets every role's size.
    page.wait_text("launch-text", |t| t.contains("update_max_packing_token_size: 10240")).await?;
    page.scroll_to("launch-import-caveat").await?;
    page.screenshot("en-import-caveat").await?;
    page.click("lang-switch").await?;
    let said = page.wait_text("launch-import-caveat", |t| t.starts_with("按原样运行会不同")).await?;
    assert!(said.contains("4096 个 token"), "{said}");
    page.scroll_to("launch-import-caveat").await?;
    page.screenshot("zh-import-caveat").await?;
    page.driver.quit().await
}

/// A multimodal config.json (Qwen2.5-VL-7B-Instruct's as released): the language model is counted
/// as Qwen2.5-7B (7,615,616,512), the vision encoder and projector apart (676,550,144, counted by
/// hand from transformers' modules in `core/src/vision.rs`'s tests: with the language model, the
/// model card's 8,292,166,656), and the findings say how the plan holds it: LLaMA-Factory frozen,
/// its weights counted; in Chinese too.
#[tokio::test(flavor = "multi_thread")]
async fn an_imported_multimodal_config_shows_its_vision_encoder() -> WebDriverResult<()> {
    let chromedriver = Chromedriver::start();
    let page = open(&chromedriver, 1280, 1000).await?;
    assert_eq!(page.wait_text("params-total", |t| !t.is_empty()).await?, "7,615,616,512");
    page.driver.find(By::Css("details.import summary")).await?.click().await?;
    let config = r#"{"architectures": ["Qwen2_5_VLForConditionalGeneration"], "_name_or_path": "Qwen/Qwen2.5-VL-7B-Instruct",
      "hidden_act": "silu", "hidden_size": 3584, "intermediate_size": 18944, "max_position_embeddings": 128000,
      "model_type": "qwen2_5_vl", "num_attention_heads": 28, "num_hidden_layers": 28, "num_key_value_heads": 4,
      "rms_norm_eps": 1e-06, "rope_theta": 1000000.0, "tie_word_embeddings": false, "vocab_size": 152064,
      "vision_config": {"depth": 32, "hidden_act": "silu", "hidden_size": 1280, "intermediate_size": 3420,
        "num_heads": 16, "in_chans": 3, "out_hidden_size": 3584, "patch_size": 14, "spatial_merge_size": 2,
        "spatial_patch_size": 14, "window_size": 112, "fullatt_block_indexes": [7, 15, 23, 31],
        "tokens_per_second": 2, "temporal_patch_size": 2}}"#;
    paste(&page, "config-paste", config).await?;
    page.click("config-apply").await?;
    page.wait_text("model-imported", |t| t.contains("Qwen2.5-VL-7B-Instruct")).await?;
    assert_eq!(page.wait_text("params-vision", |t| !t.is_empty()).await?, "676,550,144");
    assert_eq!(page.text("params-total").await?, "7,615,616,512");
    let finding = page.wait_text("finding-model.vision_encoder_frozen", |t| !t.is_empty()).await?;
    assert!(
        finding.contains("0.68 B") && finding.contains("LLaMA-Factory") && finding.contains("1.26 GiB"),
        "{finding}"
    );
    // The page's peak is the core's for the plan on screen, the encoder's frozen weights in it.
    let plan = plan_of(&page).await?;
    assert_eq!(plan.model.arch.vision_params(), 676_550_144);
    let mut alone = plan.clone();
    alone.model.arch.vision = None;
    let (with, without) = (evaluate(&plan).memory.peak_bytes, evaluate(&alone).memory.peak_bytes);
    assert!(without < with, "{without} against {with}");
    let peak = format!("{:.2} GiB", with as f64 / (1u64 << 30) as f64);
    page.wait_text("summary-fits", |t| t.contains(&peak)).await?;
    // The images' tokens: the encoder's forward over them joins the step, the memory as it was.
    let text_only = page.text("summary-step").await?;
    page.type_into("image-tokens-input", "1024").await?;
    page.wait_text("finding-model.vision_encoder_frozen", |t| t.contains("1024")).await?;
    let images = plan_of(&page).await?;
    assert_eq!(images.batch.image_tokens, 1024);
    let (a, b) = (evaluate(&plan), evaluate(&images));
    assert!(
        a.time.step_seconds < b.time.step_seconds,
        "{} against {}",
        a.time.step_seconds,
        b.time.step_seconds
    );
    assert_eq!(a.memory.peak_bytes, b.memory.peak_bytes);
    page.wait_text("summary-step", |t| t != text_only).await?;
    page.scroll_to("image-tokens-input").await?;
    page.screenshot("en-image-tokens").await?;
    page.scroll_to("params-vision").await?;
    page.screenshot("en-imported-vision").await?;
    page.click("lang-switch").await?;
    let zh = page.wait_text("finding-model.vision_encoder_frozen", |t| t.contains("视觉编码器")).await?;
    assert!(zh.contains("冻结") && zh.contains("LLaMA-Factory") && zh.contains("1024"), "{zh}");
    assert_eq!(page.wait_text("params-vision", |t| !t.is_empty()).await?, "676,550,144");
    page.scroll_to("finding-model.vision_encoder_frozen").await?;
    page.screenshot("zh-imported-vision").await?;
    page.driver.quit().await
}
