//! The charts, drawn on canvases: each read through its text alternative (the figures as a table,
//! the window shown), which must say what the report says; the canvases sized by the device's
//! pixel ratio; the timeline's zoom, pan and readout; screenshots at desktop and phone widths, in
//! English and Chinese.

use thirtyfour::prelude::*;
use trainplan_e2e::{Chromedriver, Page};

use super::{heaviest_plan, open};

/// The text of every element matching `css`, rendered or not (the tables sit in closed `<details>`).
async fn texts(page: &Page, css: &str) -> WebDriverResult<Vec<String>> {
    let script = "return [...document.querySelectorAll(arguments[0])].map(e => e.textContent.trim());";
    let got = page.driver.execute(script, vec![serde_json::json!(css)]).await?;
    Ok(got.json().as_array().into_iter().flatten().filter_map(|v| v.as_str().map(str::to_owned)).collect())
}

/// An attribute of a test id, as a number.
async fn number(page: &Page, testid: &str, attr: &str) -> WebDriverResult<f64> {
    let value = page.el(testid).await?.attr(attr).await?;
    Ok(value.and_then(|v| v.parse().ok()).unwrap_or(f64::NAN))
}

/// Each canvas's backing store against its CSS box: `[width, height, css width, css height, ratio]`,
/// each read once it has been scrolled into view (a chart off screen is drawn when it comes near)
/// and has matched its box, or after a second of frames.
async fn canvas_sizes(page: &Page) -> WebDriverResult<Vec<Vec<f64>>> {
    let script = "const done = arguments[arguments.length - 1];
        const frames = (n) => new Promise((r) => { const f = (k) => k ? requestAnimationFrame(() => f(k - 1)) : r(); f(n); });
        (async () => {
          const res = [];
          for (const c of document.querySelectorAll('.canvas-chart canvas')) {
            c.scrollIntoView({ block: 'center' });
            const fits = () => c.width === Math.round(c.clientWidth * devicePixelRatio)
              && c.height === Math.round(c.clientHeight * devicePixelRatio);
            for (let k = 0; k < 60 && !fits(); k++) await frames(1);
            await frames(1);
            res.push([c.width, c.height, c.clientWidth, c.clientHeight, window.devicePixelRatio]);
          }
          done(res);
        })();";
    let got = page.driver.execute_async(script, vec![]).await?;
    let rows = got.json().as_array().cloned().unwrap_or_default();
    Ok(rows.iter().map(|r| r.as_array().into_iter().flatten().filter_map(|v| v.as_f64()).collect()).collect())
}

/// Every canvas on the page is its CSS box times the device's pixel ratio (crisp), and drawn.
#[track_caller]
fn assert_crisp(sizes: &[Vec<f64>], ratio: f64) {
    assert!(!sizes.is_empty());
    for s in sizes {
        let [w, h, cw, ch, r] = s[..] else { panic!("{s:?}") };
        assert_eq!(r, ratio, "{s:?}");
        assert!(0.0 < cw && 0.0 < ch, "{s:?}");
        assert!((w - (cw * r).round()).abs() <= 1.0 && (h - (ch * r).round()).abs() <= 1.0, "{s:?}");
    }
}

/// Emulates a phone: 390 × 844 CSS pixels at three device pixels each.
async fn phone(page: &Page) -> WebDriverResult<()> {
    let metrics = serde_json::json!({ "width": 390, "height": 844, "deviceScaleFactor": 3, "mobile": true });
    page.driver.cdp().send_raw("Emulation.setDeviceMetricsOverride", metrics).await?;
    // The charts redraw on the resize it causes.
    tokio::time::sleep(std::time::Duration::from_millis(400)).await;
    Ok(())
}

/// A Megatron plan with 4 pipeline stages: the memory chart's table has a row per stage whose
/// total is the stage table's (the report's bytes), the peak row's total is the verdict's peak,
/// and its caption the device's usable memory as the verdict says it. The pointer over a bar
/// reads it out.
#[tokio::test(flavor = "multi_thread")]
async fn the_memory_chart_reads_as_the_report() -> WebDriverResult<()> {
    let chromedriver = Chromedriver::start();
    let page = open(&chromedriver, 1280, 1000).await?;
    page.wait_text("params-total", |t| !t.is_empty()).await?;
    page.choose("framework-select", "megatron").await?;
    page.choose("method-select", "pretrain").await?;
    page.type_into("nodes-input", "2").await?;
    page.type_into("tp-input", "4").await?;
    page.type_into("pp-input", "4").await?;
    page.wait_text("n-devices", |t| t == "16").await?;
    page.open_chart_data().await?;
    let mut rows = Vec::new();
    for _ in 0..100 {
        rows = texts(&page, "[data-testid='memory-chart-data'] tbody tr td:nth-last-child(2)").await?;
        if rows.len() == 4 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    // The stage table gives the same totals, its unit in its caption.
    let stages = texts(&page, "[data-testid='memory-stages'] tbody tr td:last-child").await?;
    assert_eq!(rows.len(), 4, "{rows:?}");
    assert_eq!(rows, stages.iter().map(|s| format!("{s} GiB")).collect::<Vec<_>>());
    let caption = texts(&page, "[data-testid='memory-stages'] caption").await?.concat();
    assert!(caption.ends_with("GiB"), "{caption}");
    let peak = texts(&page, "[data-testid='memory-bar'].peak td:nth-last-child(2)").await?;
    let verdict = page.text("memory-fits").await?;
    // The verdict's figures, in its order: the peak, then the usable memory.
    let words: Vec<&str> = verdict.split([' ', ',']).collect();
    let gib: Vec<String> =
        words.windows(2).filter(|w| w[1] == "GiB").map(|w| format!("{} GiB", w[0])).collect();
    assert_eq!(gib.len(), 2, "{verdict}");
    assert_eq!(peak, [gib[0].clone()], "{verdict}");
    let caption = texts(&page, "[data-testid='memory-chart-lines']").await?.concat();
    assert!(caption.ends_with(&format!("usable {}", gib[1])), "{caption} vs {verdict}");
    assert_crisp(&canvas_sizes(&page).await?, 1.0);
    // The pointer over the chart's middle: a bar read out, with the total its table row gives.
    let canvas = page.el("memory-chart").await?.query(By::Css("canvas")).first().await?;
    page.driver.action_chain().move_to_element_center(&canvas).perform().await?;
    let readout = page.wait_text("memory-readout", |t| t.starts_with("Stage ")).await?;
    let stage: usize = readout["Stage ".len()..].split(':').next().and_then(|n| n.parse().ok()).unwrap_or(99);
    assert!(
        readout.ends_with(&format!("; total {}", rows[stage.min(3)])) && stage < 4,
        "{readout} vs {rows:?}"
    );
    page.scroll_to("memory-chart").await?;
    page.screenshot("en-chart-memory").await?;
    page.scroll_to("breakdown-chart").await?;
    page.screenshot("en-chart-breakdown").await?;
    page.el("lang-switch").await?.click().await?;
    page.wait_text("memory-readout", |t| t.contains("悬停") || t.starts_with("阶段")).await?;
    page.screenshot("zh-chart-memory").await?;
    phone(&page).await?;
    assert_crisp(&canvas_sizes(&page).await?, 3.0);
    page.scroll_to("memory-chart").await?;
    page.screenshot("zh-phone-chart-memory").await?;
    page.scroll_to("breakdown-chart").await?;
    page.screenshot("zh-phone-chart-breakdown").await?;
    page.driver.quit().await
}

/// Llama 3.1 405B on 1,024 H100 (TP 8, PP 16, VPP 4, 1,024 sequences: 128 micro-batches): zoomed out
/// the timeline shows the whole step, from 0 to the step time the speed panel shows, with all
/// 16 · 4 · 128 · 2 = 16,384 passes (Megatron's interleaved 1F1B: a forward and a backward of every
/// micro-batch on every chunk of every stage); zooming in narrows the window, a drag moves it, the
/// pointer reads a pass out, and "whole step" comes back to the whole.
#[tokio::test(flavor = "multi_thread")]
async fn the_timeline_spans_the_whole_step_and_zooms() -> WebDriverResult<()> {
    let chromedriver = Chromedriver::start();
    let page = open(&chromedriver, 1280, 1100).await?;
    heaviest_plan(&page).await?;
    page.wait_text("gantt-title", |t| t.contains("interleaved")).await?;
    let step = page.text("step-time").await?;
    let shown = page.wait_text("timeline-window", |t| t.ends_with(&format!("of a {step} step"))).await?;
    assert_eq!(shown, format!("Shown: 0 s – {step} of a {step} step"));
    let (start, end, whole) = (
        number(&page, "timeline-window", "data-start-seconds").await?,
        number(&page, "timeline-window", "data-end-seconds").await?,
        number(&page, "timeline-window", "data-step-seconds").await?,
    );
    assert_eq!((start, end), (0.0, whole));
    page.open_chart_data().await?;
    assert_eq!(number(&page, "timeline-passes", "data-passes").await?, 16_384.0);
    // The step's parts: the pipeline from 0, then the gradients' sync and the optimizer, to the end.
    let lanes = texts(&page, "[data-testid='timeline-lanes'] tbody tr td:first-of-type").await?;
    assert_eq!(lanes, ["Forward and backward passes", "DP communication", "Optimizer step"]);
    assert_crisp(&canvas_sizes(&page).await?, 1.0);
    page.scroll_to("gantt-title").await?;
    page.screenshot("en-timeline-whole").await?;

    // Zoom in twice about the middle: a sixteenth of the step, centred.
    page.el("timeline-zoom-in").await?.click().await?;
    page.el("timeline-zoom-in").await?.click().await?;
    page.wait_text("timeline-window", |t| !t.starts_with("Shown: 0 s")).await?;
    let (start, end) = (
        number(&page, "timeline-window", "data-start-seconds").await?,
        number(&page, "timeline-window", "data-end-seconds").await?,
    );
    assert!(((end - start) - whole / 16.0).abs() < 1e-9 * whole, "{start}–{end} of {whole}");
    assert!(((start + end) / 2.0 - whole / 2.0).abs() < 1e-9 * whole);
    // The pointer on a stage's lane in the steady state reads a pass out.
    let canvas = page.el("gantt").await?.query(By::Css("canvas")).first().await?;
    page.driver.action_chain().move_to_element_center(&canvas).perform().await?;
    let readout = page.wait_text("gantt-hover", |t| t.starts_with("Stage ")).await?;
    assert!(readout.contains("micro-batch") || readout.contains("idle"), "{readout}");
    page.screenshot("en-timeline-zoomed").await?;
    // A drag to the left moves the window later in the step.
    page.driver
        .action_chain()
        .move_to_element_center(&canvas)
        .click_and_hold()
        .move_by_offset(-200, 0)
        .release()
        .perform()
        .await?;
    let moved = number(&page, "timeline-window", "data-start-seconds").await?;
    assert!(start < moved, "{start} → {moved}");
    page.el("timeline-whole").await?.click().await?;
    page.wait_text("timeline-window", |t| t.starts_with("Shown: 0 s")).await?;
    assert_eq!(number(&page, "timeline-window", "data-end-seconds").await?, whole);

    page.el("lang-switch").await?.click().await?;
    page.wait_text("timeline-window", |t| t.starts_with("当前显示")).await?;
    page.scroll_to("gantt-title").await?;
    page.screenshot("zh-timeline-whole").await?;
    phone(&page).await?;
    assert_crisp(&canvas_sizes(&page).await?, 3.0);
    page.scroll_to("gantt-title").await?;
    page.screenshot("zh-phone-timeline-whole").await?;
    page.el("timeline-zoom-in").await?.click().await?;
    page.el("timeline-zoom-in").await?.click().await?;
    page.el("timeline-zoom-in").await?.click().await?;
    page.wait_text("timeline-window", |t| !t.starts_with("当前显示 0 s")).await?;
    page.scroll_to("gantt-title").await?;
    page.screenshot("zh-phone-timeline-zoomed").await?;
    page.el("lang-switch").await?.click().await?;
    page.wait_text("timeline-window", |t| t.starts_with("Shown")).await?;
    page.scroll_to("gantt-title").await?;
    page.screenshot("en-phone-timeline-zoomed").await?;
    page.el("timeline-whole").await?.click().await?;
    page.wait_text("timeline-window", |t| t.starts_with("Shown: 0 s")).await?;
    page.screenshot("en-phone-timeline-whole").await?;
    page.driver.quit().await
}

/// A VeRL plan trained by `method`, its timeline's table rows (lane, part, start, end seconds) once
/// `ready` holds of them (the timeline is drawn a frame after the plan), or after 5 s.
async fn rl_timeline_rows(
    page: &Page,
    method: &str,
    ready: fn(&[serde_json::Value]) -> bool,
) -> WebDriverResult<Vec<serde_json::Value>> {
    page.wait_text("params-total", |t| !t.is_empty()).await?;
    page.choose("framework-select", "verl").await?;
    page.choose("method-select", method).await?;
    page.wait_text("memory-phases", |t| !t.is_empty()).await?;
    page.open_chart_data().await?;
    let script = "return [...document.querySelectorAll(\"[data-testid='timeline-lanes'] tbody tr\")]
        .map(r => [r.dataset.lane, r.dataset.part, +r.dataset.startSeconds, +r.dataset.endSeconds]);";
    let mut rows = Vec::new();
    for _ in 0..100 {
        rows = page.driver.execute(script, vec![]).await?.json().as_array().cloned().unwrap_or_default();
        if ready(&rows) {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    Ok(rows)
}

/// GRPO on VeRL: the timeline's first lanes are rollout, log-prob and update, one after the other
/// from 0; the rollout's lane ends the step with the trained weights handed to its engine, after
/// the update.
#[tokio::test(flavor = "multi_thread")]
async fn an_rl_plan_shows_rollout_log_prob_and_update_lanes() -> WebDriverResult<()> {
    let chromedriver = Chromedriver::start();
    let page = open(&chromedriver, 1280, 1100).await?;
    let rows = rl_timeline_rows(&page, "grpo", |rows| {
        rows.get(1).and_then(|r| r[1].as_str()) == Some("weight_sync")
    })
    .await?;
    let lanes: Vec<&str> = rows.iter().filter_map(|r| r[0].as_str()).collect();
    assert_eq!(&lanes[..4], ["rollout", "rollout", "log_prob", "update"], "{rows:?}");
    assert!(lanes[4..].iter().all(|l| *l == "update"), "{rows:?}");
    assert_eq!(rows[1][1].as_str(), Some("weight_sync"));
    assert_eq!(rows[3][1].as_str(), Some("pipeline"));
    let at = |i: usize, j: usize| rows[i][j].as_f64().unwrap_or(f64::NAN);
    assert_eq!(at(0, 2), 0.0);
    assert_eq!(at(0, 3), at(2, 2));
    assert_eq!(at(2, 3), at(3, 2));
    assert_eq!(at(rows.len() - 1, 3), at(1, 2), "the hand-over follows the update: {rows:?}");
    let whole = number(&page, "timeline-window", "data-step-seconds").await?;
    assert!(at(1, 2) < at(1, 3) && (at(1, 3) - whole).abs() <= 1e-9 * whole, "{rows:?}");
    assert!(page.text("time-breakdown").await?.contains("Weights to the rollout engine"));
    // The step the speed panel shows is the timeline's.
    let step = page.text("step-time").await?;
    assert!(page.text("timeline-window").await?.ends_with(&format!("of a {step} step")));
    page.scroll_to("gantt-title").await?;
    page.screenshot("en-timeline-rl").await?;
    page.el("lang-switch").await?.click().await?;
    page.wait_text("timeline-window", |t| t.starts_with("当前显示")).await?;
    assert!(page.text("time-breakdown").await?.contains("权重同步到推理引擎"));
    page.scroll_to("gantt-title").await?;
    page.screenshot("zh-timeline-rl").await?;
    phone(&page).await?;
    page.scroll_to("gantt-title").await?;
    page.screenshot("zh-phone-timeline-rl").await?;
    page.el("lang-switch").await?.click().await?;
    page.wait_text("timeline-window", |t| t.starts_with("Shown")).await?;
    page.scroll_to("memory-chart").await?;
    page.screenshot("en-phone-chart-memory-rl").await?;
    page.driver.quit().await
}

/// PPO on VeRL trains a critic before the actor, on the same devices: the timeline's update lane
/// starts with the critic's part, then the actor's pipeline, one after the other, the last ending at
/// the step time; the breakdown has the critic's bar, in both languages.
#[tokio::test(flavor = "multi_thread")]
async fn a_ppo_plan_shows_its_critic_before_the_actors_update() -> WebDriverResult<()> {
    let chromedriver = Chromedriver::start();
    let page = open(&chromedriver, 1280, 1100).await?;
    let rows =
        rl_timeline_rows(&page, "ppo", |rows| rows.get(3).and_then(|r| r[1].as_str()) == Some("critic"))
            .await?;
    // In time order (the table lists them lane by lane).
    let mut rows = rows;
    rows.sort_by(|a, b| a[2].as_f64().unwrap_or(f64::NAN).total_cmp(&b[2].as_f64().unwrap_or(f64::NAN)));
    let parts: Vec<(&str, &str)> =
        rows.iter().filter_map(|r| Some((r[0].as_str()?, r[1].as_str()?))).collect();
    assert_eq!(
        &parts[..4],
        [("rollout", "rollout"), ("log_prob", "log_prob"), ("update", "critic"), ("update", "pipeline")],
        "{rows:?}"
    );
    assert_eq!(parts.last(), Some(&("rollout", "weight_sync")), "{rows:?}");
    let at = |i: usize, j: usize| rows[i][j].as_f64().unwrap_or(f64::NAN);
    for i in 1..rows.len() {
        assert_eq!(at(i - 1, 3), at(i, 2), "{rows:?}");
    }
    let whole = number(&page, "timeline-window", "data-step-seconds").await?;
    assert!((at(rows.len() - 1, 3) - whole).abs() <= 1e-9 * whole);
    assert!(page.text("time-breakdown").await?.contains("PPO critic"));
    page.scroll_to("gantt-title").await?;
    page.screenshot("en-timeline-ppo").await?;
    page.scroll_to("breakdown-chart").await?;
    page.screenshot("en-chart-breakdown-ppo").await?;
    page.el("lang-switch").await?.click().await?;
    page.wait_text("timeline-window", |t| t.starts_with("当前显示")).await?;
    assert!(page.text("time-breakdown").await?.contains("PPO critic（估值与更新）"));
    page.scroll_to("gantt-title").await?;
    page.screenshot("zh-timeline-ppo").await?;
    page.driver.quit().await
}

/// A timeline off screen is not redrawn per edit, and catches up when it comes into view: on a
/// phone, where it lies far above the global batch, an edit there leaves it showing the old step
/// until it is scrolled to, and then it shows the new one, the speed panel's.
#[tokio::test(flavor = "multi_thread")]
async fn an_off_screen_timeline_catches_up_when_shown() -> WebDriverResult<()> {
    let chromedriver = Chromedriver::start();
    let page = open(&chromedriver, 390, 844).await?;
    page.wait_text("params-total", |t| !t.is_empty()).await?;
    page.scroll_to("gantt-title").await?;
    let step = page.text("step-time").await?;
    page.wait_text("timeline-window", |t| t.ends_with(&format!("of a {step} step"))).await?;
    // Four times the batch: a longer step, typed with the timeline out of view.
    edit_out_of_view(&page, "global-batch-input", "256").await?;
    let longer = page.wait_text("step-time", |t| *t != step).await?;
    let window = page.text("timeline-window").await?;
    assert!(window.ends_with(&format!("of a {step} step")), "redrawn off screen: {window}");
    page.scroll_to("gantt-title").await?;
    let shown = page.wait_text("timeline-window", |t| t.ends_with(&format!("of a {longer} step"))).await?;
    assert!(shown.starts_with("Shown: 0 s"), "{shown}");
    page.driver.quit().await
}

/// A chart off screen keeps its place in the page: on a phone, a 4-stage pipeline typed with the
/// timeline out of view gives its canvas the 4 stages' height at once, before it is drawn, so
/// scrolling to it moves nothing above the reader; drawn, it keeps that height.
#[tokio::test(flavor = "multi_thread")]
async fn an_off_screen_chart_takes_its_new_height_at_once() -> WebDriverResult<()> {
    let chromedriver = Chromedriver::start();
    let page = open(&chromedriver, 390, 844).await?;
    page.wait_text("params-total", |t| !t.is_empty()).await?;
    page.choose("framework-select", "megatron").await?;
    page.choose("method-select", "pretrain").await?;
    let height =
        "return document.querySelector('[data-testid=gantt] canvas').getBoundingClientRect().height;";
    let canvas_height =
        || async { page.driver.execute(height, vec![]).await.map(|r| r.json().as_f64().unwrap()) };
    page.scroll_to("gantt-title").await?;
    let step = page.text("step-time").await?;
    page.wait_text("timeline-window", |t| t.ends_with(&format!("of a {step} step"))).await?;
    let one_stage = canvas_height().await?;
    edit_out_of_view(&page, "pp-input", "4").await?;
    let piped = page.wait_text("step-time", |t| *t != step).await?;
    // A frame for the sizing, then: not drawn (the old step), but already the new height.
    page.driver
        .execute_async("requestAnimationFrame(() => requestAnimationFrame(arguments[0]));", vec![])
        .await?;
    let window = page.text("timeline-window").await?;
    assert!(window.ends_with(&format!("of a {step} step")), "redrawn off screen: {window}");
    let four_stages = canvas_height().await?;
    assert!(one_stage < four_stages, "{one_stage} px → {four_stages} px off screen");
    page.scroll_to("gantt-title").await?;
    page.wait_text("timeline-window", |t| t.ends_with(&format!("of a {piped} step"))).await?;
    assert_eq!(canvas_height().await?, four_stages);
    page.driver.quit().await
}

/// Scrolls to a field and, a few frames later (so an observer has reported what left the screen),
/// sets its value in one edit (clearing it first would take the results away and mount them again).
async fn edit_out_of_view(page: &Page, testid: &str, value: &str) -> WebDriverResult<()> {
    page.scroll_to(testid).await?;
    let edit = "const [testid, value, done] = arguments; let k = 5;
        const f = () => { if (k--) return requestAnimationFrame(f);
          const el = document.querySelector(`[data-testid=${testid}]`);
          el.value = value; el.dispatchEvent(new Event('input', { bubbles: true })); done(); };
        f();";
    page.driver.execute_async(edit, vec![testid.into(), value.into()]).await?;
    Ok(())
}
