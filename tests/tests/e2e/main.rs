//! End-to-end: the release build of the page in headless Chromium, one test per user flow.
//!
//! Needs `dist/` from `trunk build --release` and Debian's chromium + chromium-driver; `scripts/test`
//! provides both. Screenshots land in `target/screenshots/`. A flow that grows its own helpers gets a
//! module file beside this one.

mod compare;
mod cp_algo;
mod distribute;
mod extras;
mod ux;

use thirtyfour::prelude::*;
use trainplan_e2e::{Chromedriver, Page, browser, browser_downloading_to, repo_root, serve_dir};

mod charts;

/// The built page the tests open: `TRAINPLAN_DIST`, else `dist/`.
fn dist_dir() -> std::path::PathBuf {
    std::env::var_os("TRAINPLAN_DIST").map(Into::into).unwrap_or_else(|| repo_root().join("dist"))
}

async fn open(driver: &Chromedriver, width: u32, height: u32) -> WebDriverResult<Page> {
    open_at(driver, &dist_dir(), width, height).await
}

/// The page built into `dir`, served and opened in a window `width` × `height`.
async fn open_at(
    driver: &Chromedriver,
    dir: &std::path::Path,
    width: u32,
    height: u32,
) -> WebDriverResult<Page> {
    let url = serve_dir(dir);
    let page = Page { driver: browser(driver, width, height).await? };
    page.driver.goto(&url).await?;
    Ok(page)
}

/// Types the heaviest plan the tests time and draw: Llama 3.1 405B pre-trained with Megatron-LM on
/// 128 × 8 H100 at TP 8, PP 16, VPP 4, sequence 8,192, global batch 1,024.
pub(crate) async fn heaviest_plan(page: &Page) -> WebDriverResult<()> {
    page.wait_text("params-total", |t| !t.is_empty()).await?;
    page.choose("framework-select", "megatron").await?;
    page.choose("method-select", "pretrain").await?;
    page.choose("model-select", "llama-3.1-405b").await?;
    page.wait_text("params-total", |t| t.starts_with("405,")).await?;
    for (testid, value) in [
        ("nodes-input", "128"),
        ("tp-input", "8"),
        ("pp-input", "16"),
        ("vpp-input", "4"),
        ("seq-len-input", "8192"),
        ("global-batch-input", "1024"),
    ] {
        page.type_into(testid, value).await?;
    }
    page.wait_text("n-devices", |t| t == "1,024").await?;
    Ok(())
}

/// First visit: a complete plan at once; then editing the cluster and the model changes what the core computed.
#[tokio::test(flavor = "multi_thread")]
async fn editing_the_plan_updates_the_report() -> WebDriverResult<()> {
    let chromedriver = Chromedriver::start();
    let page = open(&chromedriver, 1280, 900).await?;

    // The first visit shows Qwen2.5-7B on 1 × 8 devices. 7,615,616,512 parameters: the bf16
    // `model.safetensors.index.json` of Qwen/Qwen2.5-7B-Instruct declares 15,231,233,024 bytes.
    assert_eq!(page.wait_text("params-total", |t| !t.is_empty()).await?, "7,615,616,512");
    assert_eq!(page.text("n-devices").await?, "8");
    // Time to first paint from the local server: the body is empty until the wasm renders the plan,
    // so the first contentful paint is the plan itself (Paint Timing API).
    let paint = "const p = performance.getEntriesByName('first-contentful-paint')[0]; \
                 const n = performance.getEntriesByType('navigation')[0]; \
                 return [p ? p.startTime : -1, n ? n.responseEnd : -1];";
    let times = page.driver.execute(paint, vec![]).await?.json().clone();
    let fcp = times[0].as_f64().unwrap_or(-1.0);
    assert!(0.0 < fcp, "no first contentful paint: {times}");
    record_figure(&format!(
        "first contentful paint (the plan), local server, cold: {fcp:.0} ms; html received at {:.0} ms",
        times[1].as_f64().unwrap_or(-1.0)
    ));
    // The plan at a glance, above the details: it fits, its speed, no broken rule.
    let summary = page.text("summary").await?;
    assert!(
        summary.contains("Memory fits") && summary.contains("MFU") && summary.contains("no rule broken"),
        "{summary}"
    );
    let weights_on_8 = page.text("weights-per-device-bytes").await?;
    page.screenshot("en-first-visit").await?;

    // Two nodes: the same model sharded over 16 devices holds about half the bytes on each.
    page.type_into("nodes-input", "2").await?;
    assert_eq!(page.wait_text("n-devices", |t| t == "16").await?, "16");
    let weights_on_16 = page.wait_text("weights-per-device-bytes", |t| t != weights_on_8).await?;
    assert_ne!(weights_on_16, weights_on_8, "the weights per device did not follow the device count");
    let bytes =
        |text: &str| -> u64 { text.split_whitespace().next().unwrap().replace(',', "").parse().unwrap() };
    let (on_8, on_16) = (bytes(&weights_on_8), bytes(&weights_on_16));
    // ZeRO-3 pads each tensor to the device count, so 16 shards are at least half of 8 shards.
    assert!(on_8 / 2 <= on_16 && on_16 < on_8, "{on_8} B on 8 devices, {on_16} B on 16");

    // Another model: Llama-3-8B has 8,030,261,248 parameters (HF transformers `num_parameters()`).
    let select = page.el("model-select").await?;
    select.send_keys("Llama-3-8B").await?;
    select.send_keys(Key::Enter).await?;
    let total = page.wait_text("params-total", |t| t == "8,030,261,248").await?;
    assert_eq!(total, "8,030,261,248");
    assert!(page.text("model-source").await?.contains("Meta-Llama-3-8B/blob/main/config.json"));

    // A count the plan cannot use is named, and no number is shown for it.
    page.type_into("devices-input", "0").await?;
    let error = page.wait_text("plan-error", |t| !t.is_empty()).await?;
    assert!(!error.is_empty());
    page.type_into("devices-input", "8").await?;
    assert_eq!(page.wait_text("params-total", |t| t == "8,030,261,248").await?, "8,030,261,248");
    page.screenshot("en-edited").await?;

    // A rule broken, and fixed with one click: 16 devices × micro-batch 1 need a global batch that
    // is a multiple of 16 (Megatron's num_microbatches_calculator, DeepSpeed's batch identity).
    page.type_into("global-batch-input", "60").await?;
    let finding = page.wait_text("finding-batch.divisible", |t| t.contains("60")).await?;
    assert!(finding.contains("not a multiple of 16"), "{finding}");
    page.click("fix-batch.divisible").await?;
    assert_eq!(page.wait_text("findings-none", |t| !t.is_empty()).await?, "No framework rule is broken.");
    assert_eq!(page.el("global-batch-input").await?.prop("value").await?.as_deref(), Some("64"));
    // LLaMA-Factory without DeepSpeed is plain PyTorch: the memory panel says at which moment of
    // the step its terms are taken (a LoRA step peaks in the loss's backward).
    let moment = page.text("memory-moment").await?;
    assert!(moment.contains("loss's backward"), "{moment}");
    // Liger's fused loss keeps no logits: the step then peaks in the last layer's backward.
    page.click("liger-check").await?;
    let moment = page.wait_text("memory-moment", |t| t.contains("last layer's backward")).await?;
    assert!(moment.contains("Liger"), "{moment}");
    page.click("liger-check").await?;
    let moment = page.wait_text("memory-moment", |t| t.contains("loss's backward")).await?;
    assert!(moment.contains("loss's backward"), "{moment}");

    // Memory: a full fine-tune of Llama-3.1-70B on one 8 × H100 node does not fit unsharded (16 bytes
    // × 70.6B per device, ZeRO paper); ZeRO-3 with the optimizer on the host leaves 4 bytes × 70.6B ÷ 8.
    page.choose("model-select", "llama-3.1-70b").await?;
    page.choose("method-select", "sft-full").await?;
    page.type_into("nodes-input", "1").await?;
    let verdict = page.wait_text("memory-fits", |t| t.starts_with("Memory does not fit")).await?;
    assert!(verdict.starts_with("Memory does not fit"), "{verdict}");
    // The advice that makes it fit comes first and applies with one click.
    page.settled().await?;
    let first = page.el("advice").await?.find(By::Css("li")).await?;
    assert_eq!(first.attr("data-testid").await?.as_deref(), Some("advice-offload_optimizer"));
    assert!(first.text().await?.contains("fits"));
    // Each piece of advice opens to its reason.
    page.click_el(&first.find(By::Css("summary")).await?).await?;
    let why = first.find(By::Css(".why")).await?.text().await?;
    assert!(why.contains("host memory"), "{why}");
    page.click("advice-apply-offload_optimizer").await?;
    assert_eq!(page.el("zero-select").await?.prop("value").await?.as_deref(), Some("3"));
    assert_eq!(page.el("offload-opt-check").await?.prop("checked").await?.as_deref(), Some("true"));
    let verdict = page.wait_text("memory-fits", |t| t.starts_with("Memory fits")).await?;
    assert!(verdict.starts_with("Memory fits"), "{verdict}");
    assert!(page.text("memory-host").await?.contains("GiB"));
    // With DeepSpeed each term is counted at its own peak: no moment is named.
    assert!(!page.has("memory-moment").await?);
    assert!(page.has("memory-chart").await?);
    page.screenshot("en-memory").await?;

    // Megatron with 8-way TP and a 4-stage interleaved pipeline over 4 nodes: the Gantt chart shows
    // the interleaved schedule, and the speed panel its throughput.
    page.choose("framework-select", "megatron").await?;
    page.choose("method-select", "pretrain").await?;
    page.type_into("nodes-input", "4").await?;
    page.type_into("tp-input", "8").await?;
    page.type_into("pp-input", "4").await?;
    page.type_into("vpp-input", "2").await?;
    page.click("dist-opt-check").await?;
    page.click("sp-check").await?;
    page.choose("recompute-select", "selective").await?;
    let title = page.wait_text("gantt-title", |t| t.contains("interleaved")).await?;
    assert!(title.contains("interleaved"), "{title}");
    let mfu = page.text("mfu").await?;
    assert!(mfu.ends_with('%') && mfu != "0.0%", "{mfu}");
    assert!(page.text("step-time").await?.ends_with(" s"));
    page.scroll_to("gantt-title").await?;
    page.screenshot("en-pipeline").await?;

    // Calibration: a run measured twice as slow fits the efficiency; the estimate then follows it,
    // and the factor survives a reload (it is in the permalink).
    let seconds = |text: &str| -> f64 { text.trim_end_matches(" s").parse().unwrap() };
    let before = seconds(&page.text("step-time").await?);
    page.type_into("calibration-step", &format!("{}", 2.0 * before)).await?;
    page.click("calibration-fit").await?;
    let current = page.wait_text("calibration-current", |t| t.contains('×')).await?;
    assert!(current.contains("efficiency ×"), "{current}");
    let after = seconds(&page.wait_text("step-time", |t| (seconds(t) / before - 2.0).abs() < 0.02).await?);
    assert!((after / before - 2.0).abs() < 0.02, "{before} s → {after} s");
    page.settled_url().await?;
    page.driver.refresh().await?;
    assert_eq!(seconds(&page.wait_text("step-time", |t| !t.is_empty()).await?), after);

    // The search finds faster plans that fit; applying the fastest makes it the plan, whose step
    // time is then the one the search reported (no faster plan than it exists in the space).
    // Below the summary bar, which stays at the top of the window (WebDriver scrolls a clicked
    // element only to the window's edge).
    scroll_to_middle(&page, "search-run").await?;
    page.click("search-run").await?;
    let summary = page.wait_text("search-summary", |t| t.contains("plans tried")).await?;
    assert!(summary.contains("keep every rule"), "{summary}");
    // The wasm search's own timing, kept for the record beside the screenshots.
    record_figure(&format!("search in this browser, 70B on 32 H100: {summary}"));
    assert!(page.has("search-chart").await?);
    page.scroll_to("search-summary").await?;
    page.screenshot("en-search").await?;
    page.click("search-apply-0").await?;
    let applied = seconds(&page.wait_text("step-time", |t| seconds(t) != after).await?);
    assert!(applied < after, "{after} s → {applied} s");
    // The search ran from the old plan: its table is gone now that the plan changed.
    assert!(!page.has("search-results").await?);
    // The applied plan settled before the next search starts from it (as below).
    page.settled_url().await?;
    scroll_to_middle(&page, "search-run").await?;
    page.click("search-run").await?;
    page.wait_text("search-summary", |t| t.contains("plans tried")).await?;
    let best_again = page.el("search-row-0").await?.text().await?;
    assert!(best_again.contains("the current plan"), "{best_again}");

    // The issue's benchmark case in the page: a 70B model on 1,024 devices (128 nodes of 8).
    page.type_into("nodes-input", "128").await?;
    page.type_into("global-batch-input", "1024").await?;
    page.wait_text("n-devices", |t| t == "1,024").await?;
    // The global batch's last keystroke settled too: a search started before it would be of the
    // plan one digit short, and its result hidden as soon as the plan moved on.
    page.settled_url().await?;
    scroll_to_middle(&page, "search-run").await?;
    page.click("search-run").await?;
    let summary = page.wait_text("search-summary", |t| t.contains("plans tried")).await?;
    record_figure(&format!("search in this browser, 70B on 1,024 H100: {summary}"));

    page.driver.quit().await
}

/// The search runs in Web Workers, one per core, off the page's thread: on the benchmark plan (a 70B
/// model pretrained with Megatron-LM on 1,024 H100) it finishes through workers; a search cancelled
/// mid-way leaves the page idle with no result, and the next one completes. The workers are kept
/// between searches: only a cancelled search's are replaced.
#[tokio::test(flavor = "multi_thread")]
async fn the_search_runs_in_workers_and_cancels() -> WebDriverResult<()> {
    let chromedriver = Chromedriver::start();
    let page = Page { driver: browser(&chromedriver, 1280, 1100).await? };
    // Every worker the page makes, counted from before its first script runs.
    let count = "const made = window.Worker; window.workersMade = 0;
        window.Worker = function (...args) { window.workersMade += 1; return new made(...args); };";
    page.driver
        .cdp()
        .send_raw("Page.addScriptToEvaluateOnNewDocument", serde_json::json!({"source": count}))
        .await?;
    page.driver.goto(&serve_dir(&dist_dir())).await?;
    let made = || async {
        page.driver.execute("return window.workersMade;", vec![]).await.map(|v| v.json().as_u64())
    };
    page.wait_text("params-total", |t| !t.is_empty()).await?;
    page.choose("model-select", "llama-3.1-70b").await?;
    page.choose("framework-select", "megatron").await?;
    page.choose("method-select", "pretrain").await?;
    // The benchmark's full space (cargo bench: 73,128 plans): 8K tokens, global batch 1,024.
    page.type_into("nodes-input", "128").await?;
    page.type_into("seq-len-input", "8192").await?;
    page.type_into("global-batch-input", "1024").await?;
    page.wait_text("n-devices", |t| t == "1,024").await?;
    let cores = page.driver.execute("return navigator.hardwareConcurrency;", vec![]).await?.json().as_u64();
    // An engineer reads the plan before searching: the workers load once it has stood unedited
    // for 1.5 s (the search panel's WARM_UP_MS), so the search finds them ready.
    tokio::time::sleep(std::time::Duration::from_millis(2500)).await;

    page.click("search-run").await?;
    let summary = page.wait_text("search-summary", |t| t.contains("plans tried")).await?;
    assert!(summary.contains("keep every rule") && summary.contains("73,128 plans"), "{summary}");
    let workers = page.search_workers().await?;
    assert!(0 < workers, "the search ran in the page: {summary}");
    assert_eq!(Some(u64::from(workers)), cores.map(|c| c.clamp(1, 16)), "one worker per core, at most 16");
    assert!(summary.contains(&format!("{workers} workers in parallel")) || workers == 1, "{summary}");
    assert!(page.has("search-chart").await? && page.has("search-row-0").await?);
    let millis = summary.split(" ms").next().and_then(|s| s.rsplit('(').next()).unwrap_or("?");
    record_figure(&format!(
        "search in workers, Llama 3.1 70B pretrain (Megatron-LM) on 1,024 H100: {millis} ms, {workers} workers; {summary}"
    ));
    page.scroll_to("search-run").await?;
    page.screenshot("en-search-workers").await?;
    assert_eq!(made().await?, Some(u64::from(workers)), "one worker per part, started once");
    // The same search again, as an engineer reruns it after trying another cluster: the browser has
    // compiled the engine's code to speed by now (a wasm function runs from a quick baseline compile
    // until it is hot), and the kept workers are reused.
    let mut again = Vec::new();
    for _ in 0..3 {
        page.type_into("nodes-input", "64").await?;
        page.wait_text("n-devices", |t| t == "512").await?;
        page.type_into("nodes-input", "128").await?;
        page.wait_text("n-devices", |t| t == "1,024").await?;
        // The last search's result went with the edit: this one is searched anew.
        assert_eq!(page.text("search-summary").await?, "");
        page.click("search-run").await?;
        let summary = page.wait_text("search-summary", |t| t.contains("plans tried")).await?;
        assert!(summary.contains("73,128 plans"), "{summary}");
        again.push(summary.split(" ms").next().and_then(|s| s.rsplit('(').next()).unwrap_or("?").to_owned());
    }
    record_figure(&format!(
        "search in workers, the same again three times: {} ms, {workers} workers",
        again.join(", ")
    ));
    assert_eq!(made().await?, Some(u64::from(workers)), "the kept workers ran the searches again");

    // Another plan, then a search cancelled as soon as it shows its progress: the search takes
    // about a hundred milliseconds, so it is still running when the cancel button is clicked.
    page.type_into("global-batch-input", "512").await?;
    page.wait_text("search-summary", |t| t.is_empty()).await?;
    let cancel = "const q = (id) => document.querySelector(`[data-testid='${id}']`); \
                  q('search-run').click(); \
                  return new Promise((done) => setTimeout(() => { \
                    const running = !!q('search-progress') && !!q('search-cancel'); \
                    q('search-cancel')?.click(); done(running); }, 0));";
    let was_running = page.driver.execute(cancel, vec![]).await?.json().as_bool();
    assert_eq!(was_running, Some(true), "the search was not running when cancelled");
    assert_eq!(page.wait_text("search-cancelled", |t| !t.is_empty()).await?, "Search cancelled.");
    assert!(!page.has("search-progress").await? && !page.has("search-cancel").await?);
    assert_eq!(page.el("search-run").await?.prop("disabled").await?.as_deref(), Some("false"));
    // Well past the time the whole search takes (under a second alone, about 1.2 s on a machine
    // busy with the other tests): no result arrives from the stopped workers.
    tokio::time::sleep(std::time::Duration::from_secs(3)).await;
    assert_eq!(page.text("search-summary").await?, "", "a cancelled search delivered a result");
    // The page is still usable, and the next search completes in workers.
    page.type_into("nodes-input", "64").await?;
    page.wait_text("n-devices", |t| t == "512").await?;
    page.click("search-run").await?;
    let summary = page.wait_text("search-summary", |t| t.contains("plans tried")).await?;
    assert!(0 < page.search_workers().await?, "{summary}");
    assert!(!page.has("search-cancelled").await?);
    // The cancelled search's workers were terminated and replaced once; this search used those.
    assert_eq!(made().await?, Some(2 * u64::from(workers)));

    // The Chinese panel: the summary says how many workers ran, and a cancelled search says so.
    page.click("lang-switch").await?;
    let summary = page.wait_text("search-summary", |t| t.contains("个方案")).await?;
    assert!(summary.contains("Worker"), "{summary}");
    page.scroll_to("search-run").await?;
    page.screenshot("zh-search-workers").await?;
    page.type_into("nodes-input", "32").await?;
    page.wait_text("search-summary", |t| t.is_empty()).await?;
    assert_eq!(page.driver.execute(cancel, vec![]).await?.json().as_bool(), Some(true));
    assert_eq!(page.wait_text("search-cancelled", |t| !t.is_empty()).await?, "搜索已取消。");
    page.scroll_to("search-run").await?;
    page.screenshot("zh-search-cancelled").await?;
    page.driver.quit().await
}

/// The language switch turns every visible string into Chinese and back, and the choice survives a reload.
#[tokio::test(flavor = "multi_thread")]
async fn the_language_switch_translates_the_page() -> WebDriverResult<()> {
    let chromedriver = Chromedriver::start();
    let page = open(&chromedriver, 1280, 900).await?;

    let tagline_en = page.wait_text("app-tagline", |t| !t.is_empty()).await?;
    assert_eq!(tagline_en, "Plan a large-model training run before you queue it");
    page.click("lang-switch").await?;
    let tagline_zh = page.wait_text("app-tagline", |t| t != tagline_en).await?;
    assert_eq!(tagline_zh, "在排队之前，先把大模型训练规划清楚");
    assert_eq!(page.text("params-total-short").await?, "76.2 亿");
    let html_lang = page.driver.find(By::Css("html")).await?.attr("lang").await?;
    assert_eq!(html_lang.as_deref(), Some("zh-CN"));
    page.screenshot("zh-first-visit").await?;
    page.choose("model-select", "qwen3-30b-a3b").await?;
    // Qwen3-30B-A3B: 30,532,122,624 parameters (keras-hub qwen3_moe_30b_a3b_en; index 61,064,245,248 B bf16).
    assert_eq!(page.wait_text("params-total", |t| t == "30,532,122,624").await?, "30,532,122,624");
    assert_eq!(page.text("params-total-short").await?, "305 亿");
    page.screenshot("zh-moe").await?;
    page.choose("model-select", "qwen2.5-7b").await?;

    page.driver.refresh().await?;
    assert_eq!(page.wait_text("app-tagline", |t| !t.is_empty()).await?, tagline_zh);
    page.click("lang-switch").await?;
    assert_eq!(page.wait_text("app-tagline", |t| t == tagline_en).await?, tagline_en);
    assert_eq!(page.text("params-total-short").await?, "7.62 B");

    page.driver.quit().await
}

/// The page at a phone's width: everything still there, nothing computed differently.
#[tokio::test(flavor = "multi_thread")]
async fn the_page_works_at_phone_width() -> WebDriverResult<()> {
    let chromedriver = Chromedriver::start();
    let page = open(&chromedriver, 390, 844).await?;
    assert_eq!(page.wait_text("params-total", |t| !t.is_empty()).await?, "7,615,616,512");
    // Nothing wider than the screen at 390 px, in either language: no panel reaches past the right
    // edge (the page's own scroll width can hide that when the body clips).
    let overflow = "const w = document.documentElement.clientWidth; \
                    const over = [...document.querySelectorAll('.panel, .header, .layout')] \
                      .map(e => Math.ceil(e.getBoundingClientRect().right - w)).filter(d => d > 0); \
                    return Math.max(0, document.documentElement.scrollWidth - w, ...over);";
    assert_eq!(page.driver.execute(overflow, vec![]).await?.json().as_i64(), Some(0));
    page.screenshot("en-phone").await?;
    page.scroll_to("launch-text").await?;
    page.screenshot("en-phone-results").await?;
    page.click("lang-switch").await?;
    page.wait_text("app-tagline", |t| t.chars().any(|c| ('\u{4e00}'..='\u{9fff}').contains(&c))).await?;
    assert_eq!(page.driver.execute(overflow, vec![]).await?.json().as_i64(), Some(0));
    page.screenshot("zh-phone").await?;
    page.driver.quit().await
}

/// Every control has a name a screen reader can say, the keyboard reaches the inputs in order, and
/// the results print without the controls.
#[tokio::test(flavor = "multi_thread")]
async fn controls_are_labelled_keyboard_reachable_and_the_results_print() -> WebDriverResult<()> {
    let chromedriver = Chromedriver::start();
    let page = open(&chromedriver, 1280, 1000).await?;
    page.wait_text("params-total", |t| !t.is_empty()).await?;
    // Show the optional panels too: an RL method opens the RL inputs.
    page.choose("framework-select", "verl").await?;
    page.choose("method-select", "grpo").await?;
    page.el("rl-panel").await?;
    let unnamed = r#"
        const bad = [];
        for (const el of document.querySelectorAll('input, select, textarea, button, a[href]')) {
            if (el.type === 'hidden' || el.getClientRects().length === 0) continue;
            const labels = el.labels ? [...el.labels].map(l => l.textContent).join(' ') : '';
            const own = ['BUTTON', 'A'].includes(el.tagName) ? el.textContent : '';
            const name = labels + own + (el.getAttribute('aria-label') || '') + (el.getAttribute('title') || '');
            if (!name.trim() || el.tabIndex < 0) bad.push(el.outerHTML.slice(0, 120));
        }
        return bad;"#;
    let bad = page.driver.execute(unnamed, vec![]).await?.json().clone();
    assert_eq!(bad, serde_json::json!([]), "controls without a name or out of the tab order");
    // Tab from the top reaches the node count, then the devices per node right after it.
    // From the first control of the page (Chromium starts Tab where focus last was, not at the top).
    page.driver.execute("document.querySelector('[data-testid=copy-link]').focus();", vec![]).await?;
    let focused = "return document.activeElement.getAttribute('data-testid');";
    let mut path = Vec::new();
    for _ in 0..60 {
        page.driver.action_chain().send_keys(Key::Tab).perform().await?;
        let now = page.driver.execute(focused, vec![]).await?.json().as_str().unwrap_or_default().to_owned();
        path.push(now);
        if path.last().is_some_and(|p| p == "nodes-input") {
            break;
        }
    }
    assert_eq!(path.last().map(String::as_str), Some("nodes-input"), "Tab order: {path:?}");
    page.driver.action_chain().send_keys(Key::Tab).perform().await?;
    assert_eq!(page.driver.execute(focused, vec![]).await?.json().as_str(), Some("devices-input"));
    // A custom device is kept for later visits: described once, listed after a reload.
    page.choose("hardware-select", "custom").await?;
    page.type_into("custom-name", "lab-npu-64g").await?;
    page.type_into("custom-memory", "64").await?;
    page.wait_text("params-total", |t| !t.is_empty()).await?;
    page.choose("hardware-select", "h100-sxm-80g").await?;
    page.settled_url().await?;
    page.driver.refresh().await?;
    page.wait_text("params-total", |t| !t.is_empty()).await?;
    page.choose("hardware-select", "saved:0").await?;
    let name = page.el("custom-name").await?.prop("value").await?;
    assert_eq!(name.as_deref(), Some("lab-npu-64g"));
    assert_eq!(page.el("custom-memory").await?.prop("value").await?.as_deref(), Some("64"));
    // Print: the controls go, the results stay.
    page.driver.cdp().send_raw("Emulation.setEmulatedMedia", serde_json::json!({"media": "print"})).await?;
    let shown = |testid: &str| {
        format!("return getComputedStyle(document.querySelector('[data-testid=\"{testid}\"]')).display;")
    };
    assert_eq!(page.driver.execute(&shown("copy-link"), vec![]).await?.json().as_str(), Some("none"));
    assert_ne!(page.driver.execute(&shown("params-total"), vec![]).await?.json().as_str(), Some("none"));
    // On paper the results column is wider than on screen: each chart scales as a whole, its box
    // keeping its picture's proportions (it stretched sideways by half when its height stayed).
    let shapes = "return [...document.querySelectorAll('canvas')].filter((c) => c.clientWidth > 0)
        .map((c) => [c.clientWidth / c.clientHeight, c.width / c.height]);";
    let shapes = page.driver.execute(shapes, vec![]).await?.json().clone();
    let shapes = shapes.as_array().cloned().unwrap_or_default();
    assert!(!shapes.is_empty());
    for shape in &shapes {
        let (shown, drawn) = (shape[0].as_f64().unwrap_or(0.0), shape[1].as_f64().unwrap_or(1.0));
        assert!((shown / drawn - 1.0).abs() < 0.02, "a chart prints stretched: {shapes:?}");
    }
    page.screenshot("en-print").await?;
    page.driver.quit().await
}

/// Pasting a config.json counts the model it describes; a bad one is refused with the key named,
/// and the plan on screen stays as it was.
#[tokio::test(flavor = "multi_thread")]
async fn importing_a_config_counts_its_model() -> WebDriverResult<()> {
    let chromedriver = Chromedriver::start();
    let page = open(&chromedriver, 1280, 1000).await?;
    assert_eq!(page.wait_text("params-total", |t| !t.is_empty()).await?, "7,615,616,512");

    page.driver.find(By::Css("details.import summary")).await?.click().await?;
    // An unknown model_type must give its shape: transformers defaults nothing for it.
    page.type_into("config-paste", r#"{"model_type": "my_decoder", "hidden_size": 4096}"#).await?;
    page.click("config-apply").await?;
    let error = page.wait_text("config-error", |t| t.contains("num_hidden_layers")).await?;
    assert!(error.contains("config.json has no \"num_hidden_layers\""), "{error}");
    assert_eq!(page.text("params-total").await?, "7,615,616,512", "a refused config changes nothing");

    // Mistral-7B-v0.1's config.json: 7,241,732,096 parameters (keras-hub mistral_7b_en).
    let mistral = r#"{"_name_or_path": "mistralai/Mistral-7B-v0.1", "architectures": ["MistralForCausalLM"],
      "hidden_size": 4096, "intermediate_size": 14336, "max_position_embeddings": 32768, "model_type": "mistral",
      "num_attention_heads": 32, "num_hidden_layers": 32, "num_key_value_heads": 8, "rms_norm_eps": 1e-05,
      "rope_theta": 10000.0, "sliding_window": 4096, "tie_word_embeddings": false, "vocab_size": 32000}"#;
    page.type_into("config-paste", mistral).await?;
    page.click("config-apply").await?;
    assert_eq!(page.wait_text("params-total", |t| t == "7,241,732,096").await?, "7,241,732,096");
    assert!(page.text("model-imported").await?.contains("mistralai/Mistral-7B-v0.1"));
    assert!(!page.has("config-error").await?);
    page.screenshot("en-imported").await?;

    // The imported model survives a reload (the address carries the whole config, written once
    // the page has settled).
    page.settled_url().await?;
    page.driver.refresh().await?;
    assert_eq!(page.wait_text("params-total", |t| !t.is_empty()).await?, "7,241,732,096");

    // A config.json chosen as a file: Qwen2.5-0.5B, 494,032,768 parameters (keras-hub qwen2.5_0.5b_en;
    // its safetensors hold 290 tensors with that many elements).
    let file = std::env::temp_dir().join(format!("trainplan-e2e-{}-config.json", std::process::id()));
    std::fs::write(
        &file,
        r#"{"_name_or_path": "Qwen/Qwen2.5-0.5B", "model_type": "qwen2", "vocab_size": 151936, "hidden_size": 896,
          "intermediate_size": 4864, "num_hidden_layers": 24, "num_attention_heads": 14, "num_key_value_heads": 2,
          "tie_word_embeddings": true}"#,
    )
    .unwrap();
    page.driver.find(By::Css("details.import summary")).await?.click().await?;
    page.el("config-file").await?.send_keys(file.to_string_lossy().as_ref()).await?;
    assert_eq!(page.wait_text("params-total", |t| t == "494,032,768").await?, "494,032,768");
    assert!(page.text("model-imported").await?.contains("Qwen/Qwen2.5-0.5B"));

    // Back to the catalog and a reload: the imported models stay listed (localStorage), newest first.
    page.click("model-back-to-catalog").await?;
    page.wait_text("params-total", |t| t == "7,615,616,512").await?;
    page.settled_url().await?;
    page.driver.refresh().await?;
    page.wait_text("params-total", |t| t == "7,615,616,512").await?;
    let listed = page.text("saved-model-select").await?;
    assert!(listed.contains("Qwen/Qwen2.5-0.5B") && listed.contains("mistralai/Mistral-7B-v0.1"), "{listed}");
    page.choose("saved-model-select", "1").await?;
    assert_eq!(page.wait_text("params-total", |t| t == "7,241,732,096").await?, "7,241,732,096");

    // Reset: the first visit's plan again, and it stays after a reload; the saved models stay too.
    page.type_into("nodes-input", "3").await?;
    page.wait_text("n-devices", |t| t == "24").await?;
    page.click("reset").await?;
    assert_eq!(page.wait_text("params-total", |t| t == "7,615,616,512").await?, "7,615,616,512");
    // The model was the first visit's already: its count is there before the cluster's redraw.
    assert_eq!(page.wait_text("n-devices", |t| t == "8").await?, "8");
    page.settled_url().await?;
    page.driver.refresh().await?;
    assert_eq!(page.wait_text("n-devices", |t| !t.is_empty()).await?, "8");
    assert!(page.has("saved-model-select").await?);

    // A model_type the planner does not know, with routed experts: openai/gpt-oss-20b's config.json
    // (huggingface.co/openai/gpt-oss-20b, its layer_types and quantization left out) under another
    // type. Its experts are counted, 20.91 B parameters (20,914,757,184 by hand from transformers'
    // modeling_gpt_oss.py, less the 6,637,824 of its attention sinks and its router's and experts'
    // biases, which no known family's keys say), not a dense 2.39 B, and the findings say how it was read.
    let config = |model_type: &str| {
        format!(
            r#"{{"_name_or_path": "openai/gpt-oss-20b", "attention_bias": true, "experts_per_token": 4,
      "head_dim": 64, "hidden_size": 2880, "intermediate_size": 2880, "max_position_embeddings": 131072,
      "model_type": "{model_type}", "num_attention_heads": 64, "num_experts_per_tok": 4, "num_hidden_layers": 24,
      "num_key_value_heads": 8, "num_local_experts": 32, "rms_norm_eps": 1e-05, "rope_theta": 150000,
      "sliding_window": 128, "tie_word_embeddings": false, "vocab_size": 201088}}"#
        )
    };
    page.driver.find(By::Css("details.import summary")).await?.click().await?;
    page.type_into("config-paste", &config("my_oss")).await?;
    page.click("config-apply").await?;
    assert_eq!(page.wait_text("params-total", |t| t == "20,908,119,360").await?, "20,908,119,360");
    let experts = page.wait_text("finding-model.experts_read", |t| !t.is_empty()).await?;
    assert!(experts.contains("32 routed experts, 4 per token"), "{experts}");
    assert!(page.has("finding-model.unknown_type").await?);
    // Once the plan settles the advice is the new plan's: Liger patches no model of an unknown type.
    page.settled().await?;
    assert!(!page.has("advice-liger_kernel").await?, "no Liger advice for an unknown model_type");
    page.scroll_to("finding-model.experts_read").await?;
    page.screenshot("en-imported-moe").await?;
    page.el("lang-switch").await?.click().await?;
    let experts = page.wait_text("finding-model.experts_read", |t| t.contains("路由专家")).await?;
    assert!(experts.contains("读到 32 个路由专家，每个 token 选 4 个"), "{experts}");
    page.scroll_to("finding-model.experts_read").await?;
    page.screenshot("zh-imported-moe").await?;
    page.el("lang-switch").await?.click().await?;
    // The same config as gpt-oss itself (the import still open): every tensor counted, nothing to warn of.
    page.type_into("config-paste", &config("gpt_oss")).await?;
    page.click("config-apply").await?;
    assert_eq!(page.wait_text("params-total", |t| t == "20,914,757,184").await?, "20,914,757,184");
    page.settled().await?;
    assert!(!page.has("finding-model.unknown_type").await?);
    assert!(!page.has("finding-model.experts_read").await?);
    page.driver.quit().await
}

/// The address carries every setting: a fresh browser opening the copied link sees the same plan;
/// a damaged link says so and leaves the saved plan as it was.
#[tokio::test(flavor = "multi_thread")]
async fn the_permalink_survives_a_real_reload() -> WebDriverResult<()> {
    let chromedriver = Chromedriver::start();
    let page = open(&chromedriver, 1280, 1000).await?;
    page.wait_text("params-total", |t| !t.is_empty()).await?;

    page.type_into("model-search", "deepseek v3").await?;
    assert_eq!(page.wait_text("model-count", |t| t.starts_with("1 of")).await?.split(' ').next(), Some("1"));
    page.choose("model-select", "deepseek-v3").await?;
    page.choose("hardware-select", "h200-sxm-141g").await?;
    page.choose("method-select", "pretrain").await?;
    page.type_into("nodes-input", "32").await?;
    // DeepSeek-V3: 671,026,404,352 parameters in transformers (DeepSeek's remote code, 671,026,419,200,
    // also counts the 58 × 256 routing-bias buffers).
    assert_eq!(page.wait_text("params-total", |t| t == "671,026,404,352").await?, "671,026,404,352");
    assert_eq!(page.wait_text("n-devices", |t| t == "256").await?, "256");
    let url = page.settled_url().await?;
    assert!(url.contains("#v1="), "{url}");
    let trainable = page.text("params-trainable").await?;
    page.screenshot("en-moe").await?;
    page.driver.quit().await?;

    // A second browser with its own empty profile: only the address can carry the plan.
    let other = Page { driver: browser(&chromedriver, 1280, 1000).await? };
    other.driver.goto(&url).await?;
    assert_eq!(other.wait_text("params-total", |t| !t.is_empty()).await?, "671,026,404,352");
    assert_eq!(other.text("n-devices").await?, "256");
    assert_eq!(other.text("params-trainable").await?, trainable);
    assert!(other.text("hardware-summary").await?.contains("141 GB"));

    // A damaged link: a message, and the plan this browser saved is still the one shown.
    let base = url.split('#').next().unwrap().to_owned();
    other.driver.goto(&format!("{base}#v1=broken!")).await?;
    other.driver.refresh().await?;
    let banner = other.wait_text("link-error", |t| !t.is_empty()).await?;
    assert!(banner.contains("could not be opened") && banner.contains("last plan"), "{banner}");
    assert_eq!(other.wait_text("params-total", |t| !t.is_empty()).await?, "671,026,404,352");
    other.screenshot("en-bad-link").await?;
    other.driver.quit().await?;

    // A browser that never saved a plan, given a damaged link: it is told the default is shown.
    let fresh = Page { driver: browser(&chromedriver, 1280, 1000).await? };
    fresh.driver.goto(&format!("{base}#v1=broken!")).await?;
    let banner = fresh.wait_text("link-error", |t| !t.is_empty()).await?;
    assert!(banner.contains("default plan") && !banner.contains("last plan"), "{banner}");
    fresh.driver.quit().await
}

/// The launch files follow the plan, keep typed text quoted, and download as shown.
#[tokio::test(flavor = "multi_thread")]
async fn launch_files_follow_the_plan_and_download() -> WebDriverResult<()> {
    let chromedriver = Chromedriver::start();
    let downloads = std::env::temp_dir().join(format!("trainplan-e2e-downloads-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&downloads);
    std::fs::create_dir_all(&downloads).unwrap();
    let dist = dist_dir();
    let url = serve_dir(&dist);
    let page = Page { driver: browser_downloading_to(&chromedriver, 1280, 900, Some(&downloads)).await? };
    page.driver.goto(&url).await?;

    // The default plan is a LLaMA-Factory LoRA run: its YAML first.
    let yaml = page.wait_text("launch-text", |t| t.contains("finetuning_type: lora")).await?;
    assert!(yaml.contains("model_name_or_path: \"Qwen/Qwen2.5-7B\""), "{yaml}");
    // Hostile text typed by a user lands in the YAML as one double-quoted scalar.
    page.type_into("launch-dataset", "x; rm -rf ~ $(id) `id`").await?;
    let yaml = page.wait_text("launch-text", |t| t.contains("dataset: \"x; rm")).await?;
    assert!(yaml.contains("dataset: \"x; rm -rf ~ $(id) `id`\""), "{yaml}");
    page.type_into("launch-master-addr", "10.0.0.1'; id").await?;

    // The launch script, and its download: the link holds exactly the text shown.
    page.click("launch-tab-launch.sh").await?;
    // The files follow typing once it pauses: wait for the address typed, not just the script.
    let script = page
        .wait_text("launch-text", |t| t.contains("llamafactory-cli train") && t.contains("10.0.0.1"))
        .await?;
    assert!(script.contains("MASTER_ADDR=${MASTER_ADDR:-'10.0.0.1'\\''; id'}"), "{script}");
    let link = page.el("launch-download").await?;
    assert_eq!(link.attr("download").await?.as_deref(), Some("launch.sh"));
    let href = link.attr("href").await?.unwrap_or_default();
    let body = href.strip_prefix("data:text/plain;charset=utf-8,").expect("a data address");
    let shown = page.el("launch-text").await?.prop("textContent").await?.unwrap_or_default();
    assert_eq!(percent_decode(body), shown);
    // A real download through the browser: the saved file is the text shown.
    page.click_el(&link).await?;
    let saved = String::from_utf8(downloaded(&downloads.join("launch.sh")).await).unwrap();
    assert_eq!(saved, shown);
    // Download all: one zip named after the model and framework, its entries stored as shown.
    let all = page.el("launch-download-all").await?;
    assert_eq!(all.attr("download").await?.as_deref(), Some("qwen2.5-7b-llamafactory.zip"));
    page.click_el(&all).await?;
    let zip = downloaded(&downloads.join("qwen2.5-7b-llamafactory.zip")).await;
    assert!(zip.starts_with(b"PK\x03\x04"), "a zip's local file header");
    let holds = |needle: &[u8]| zip.windows(needle.len()).any(|w| w == needle);
    assert!(holds(shown.as_bytes()), "the zip stores launch.sh as shown");
    assert!(holds(b"qwen2.5-7b-llamafactory/train.yaml"));
    page.scroll_to("launch-text").await?;
    page.screenshot("en-launch").await?;

    // The reverse: a LLaMA-Factory YAML pasted in becomes the plan, and what it does not know is named.
    // The launch panel comes with the results, after the summary.
    page.wait_text("launch-text", |t| !t.is_empty()).await?;
    let summary = page.driver.find(By::Css(".launch-import summary")).await?;
    page.click_el(&summary).await?;
    let yaml = "model_name_or_path: Qwen/Qwen2.5-14B-Instruct\nstage: sft\nfinetuning_type: full\n\
                deepspeed: examples/deepspeed/ds_z3_config.json\nper_device_train_batch_size: 2\n\
                gradient_accumulation_steps: 4\ncutoff_len: 2048\nbf16: true\nuse_badam: true\n";
    page.type_into("launch-import-text", yaml).await?;
    page.click("launch-import-apply").await?;
    let note = page.wait_text("launch-import-note", |t| !t.is_empty()).await?;
    assert!(note.contains("use_badam"), "{note}");
    assert_eq!(page.el("zero-select").await?.prop("value").await?.as_deref(), Some("3"));
    // 2 per device × 4 steps × 8 devices = 64 sequences; Qwen2.5-14B by its Hugging Face id.
    assert_eq!(page.el("global-batch-input").await?.prop("value").await?.as_deref(), Some("64"));
    assert_eq!(page.el("micro-batch-input").await?.prop("value").await?.as_deref(), Some("2"));
    assert!(page.text("params-total").await?.starts_with("14,"));
    // The import started from the defaults: the dataset typed before it is gone. Type it again.
    assert_eq!(page.el("launch-dataset").await?.prop("value").await?.as_deref(), Some(""));
    page.type_into("launch-dataset", "x\"; rm -rf ~ $(id) `id`").await?;

    // Megatron writes its script.
    page.choose("framework-select", "megatron").await?;
    page.choose("method-select", "pretrain").await?;
    let script = page.wait_text("launch-text", |t| t.contains("pretrain_gpt.py")).await?;
    assert!(script.contains("--tokenizer-model \"$TOKENIZER_MODEL\""), "{script}");
    // VeRL's Hydra overrides refuse the dataset name typed above, whose double quote no quoting
    // keeps text for Hydra, and say why, naming the field by its label in the form.
    page.choose("framework-select", "verl").await?;
    page.choose("method-select", "grpo").await?;
    let note = page.wait_text("launch-refused", |t| !t.is_empty()).await?;
    assert!(note.starts_with("Dataset cannot hold a double quote") && note.contains("VeRL"), "{note}");
    // A Chinese path with a comma is written in Hydra's quotes, inside the shell's.
    page.type_into("launch-dataset", "/数据/gsm8k/train,v2.parquet").await?;
    let typed = "data.train_files='\"/数据/gsm8k/train,v2.parquet\"'";
    page.wait_text("launch-text", |t| t.contains(typed)).await?;
    // Clearing the field shows the default path first: wait for the typed one (the files follow
    // the settled plan).
    page.type_into("launch-dataset", "/data/gsm8k/train.parquet").await?;
    let typed = "data.train_files='/data/gsm8k/train.parquet'";
    let script = page.wait_text("launch-text", |t| t.contains(typed)).await?;
    assert!(script.contains("verl.trainer.main_ppo"), "{script}");
    // The RL knobs of the form reach VeRL's overrides.
    page.type_into("mini-batch-input", "32").await?;
    page.click("dynamic-batch-check").await?;
    let script = page.wait_text("launch-text", |t| t.contains("use_dynamic_bsz=True")).await?;
    assert!(script.contains("actor_rollout_ref.actor.ppo_mini_batch_size=32 "), "{script}");
    page.scroll_to("rl-panel").await?;
    page.screenshot("en-rl").await?;
    page.driver.quit().await
}

/// The first-visit page with the launch panel's import unfolded.
async fn open_launch_import(chromedriver: &Chromedriver) -> WebDriverResult<Page> {
    let page = open(chromedriver, 1280, 1000).await?;
    assert_eq!(page.wait_text("params-total", |t| !t.is_empty()).await?, "7,615,616,512");
    // The launch panel comes with the results, after the summary.
    page.wait_text("launch-text", |t| !t.is_empty()).await?;
    let summary = page.driver.find(By::Css(".launch-import summary")).await?;
    page.click_el(&summary).await?;
    Ok(page)
}

/// A LLaMA-Factory YAML of an air-gapped cluster names its model by a local directory: the import
/// finds the catalog model, says how, and the files written afterwards keep the file's paths. A
/// file that names no model says the plan's model was kept.
#[tokio::test(flavor = "multi_thread")]
async fn an_imported_launch_file_finds_a_local_model_and_keeps_its_paths() -> WebDriverResult<()> {
    let chromedriver = Chromedriver::start();
    let page = open_launch_import(&chromedriver).await?;
    let yaml = "model_name_or_path: /models/Qwen2.5-14B-Instruct\nstage: sft\nfinetuning_type: lora\n\
                dataset: my_sft_data\ntemplate: qwen\noutput_dir: /output/qwen14b-lora\nbf16: true\n";
    page.type_into("launch-import-text", yaml).await?;
    page.click("launch-import-apply").await?;
    let model = page.wait_text("launch-import-model", |t| !t.is_empty()).await?;
    assert_eq!(model, "Model: Qwen2.5-14B, matched from the directory /models/Qwen2.5-14B-Instruct.");
    assert_eq!(page.text("launch-import-note").await?, "Read: every key understood.");
    assert_eq!(page.el("model-select").await?.prop("value").await?.as_deref(), Some("qwen2.5-14b"));
    assert!(page.wait_text("params-total", |t| t.starts_with("14,")).await?.starts_with("14,"));
    assert_eq!(page.el("launch-dataset").await?.prop("value").await?.as_deref(), Some("my_sft_data"));
    let written = page.wait_text("launch-text", |t| t.contains("my_sft_data")).await?;
    for line in [
        "model_name_or_path: \"/models/Qwen2.5-14B-Instruct\"",
        "dataset: \"my_sft_data\"",
        "output_dir: \"/output/qwen14b-lora\"",
    ] {
        assert!(written.contains(line), "{line}\n{written}");
    }
    page.scroll_to("launch-import-text").await?;
    page.screenshot("en-launch-import").await?;

    // A DeepSpeed JSON names no model: the plan keeps Qwen2.5-14B, and the note asks for a pick.
    page.type_into("launch-import-text", r#"{"train_batch_size": 64, "zero_optimization": {"stage": 3}}"#)
        .await?;
    page.click("launch-import-apply").await?;
    let model = page.wait_text("launch-import-model", |t| t.contains("not identified")).await?;
    assert_eq!(model, "Model not identified: kept Qwen2.5-14B — pick the model.");
    assert_eq!(page.el("model-select").await?.prop("value").await?.as_deref(), Some("qwen2.5-14b"));
    assert_eq!(page.el("zero-select").await?.prop("value").await?.as_deref(), Some("3"));
    page.driver.quit().await
}

/// MindSpeed-LLM's own example scripts (`core/tests/data/mindspeed-llm/`), pasted as a user would:
/// PLM's squared-ReLU MLP is no family's here, so the plan keeps its model and the note names the
/// flag, in both languages; Gemma 2's script is Gemma-2-9B by its flags (9,241,705,984
/// parameters, tied embeddings, four norms a layer), and its layer spec breaks no rule.
#[tokio::test(flavor = "multi_thread")]
async fn mindspeed_llms_own_scripts_build_their_model_or_say_why_not() -> WebDriverResult<()> {
    let chromedriver = Chromedriver::start();
    let page = open_launch_import(&chromedriver).await?;
    let plm = include_str!("../../../core/tests/data/mindspeed-llm/pretrain_plm_1point8b_ptd.sh");
    page.type_into("launch-import-text", plm).await?;
    page.click("launch-import-apply").await?;
    let model = page.wait_text("launch-import-model", |t| t.contains("--squared-relu")).await?;
    assert_eq!(
        model,
        "Model not identified: no family here builds the model the architecture flags describe (--squared-relu); kept Qwen2.5-7B — pick the model, or import its config.json."
    );
    assert_eq!(page.text("params-total").await?, "7,615,616,512");
    page.click("lang-switch").await?;
    let zh = page.wait_text("launch-import-model", |t| t.starts_with("未能识别模型")).await?;
    assert_eq!(
        zh,
        "未能识别模型：架构参数描述的模型（--squared-relu）没有可构建的模型族；保留了 Qwen2.5-7B——请选择模型，或导入其 config.json。"
    );
    page.scroll_to("launch-import-text").await?;
    page.screenshot("zh-launch-import-unbuilt").await?;
    page.click("lang-switch").await?;
    page.wait_text("launch-import-model", |t| t.starts_with("Model not identified")).await?;

    let gemma = include_str!("../../../core/tests/data/mindspeed-llm/pretrain_gemma2_9b_ptd.sh");
    page.type_into("launch-import-text", gemma).await?;
    page.click("launch-import-apply").await?;
    let model = page.wait_text("launch-import-model", |t| t.contains("Gemma")).await?;
    assert_eq!(model, "Model: Gemma-2-9B, recognised from the architecture flags.");
    assert_eq!(page.wait_text("params-total", |t| t.starts_with("9,")).await?, "9,241,705,984");
    let written = page.wait_text("launch-text", |t| t.contains("gemma2_spec")).await?;
    assert!(written.contains("--interleave-sliding-window 4096"), "{written}");
    let findings = if page.has("findings").await? { page.text("findings").await? } else { String::new() };
    assert!(!findings.contains("Gemma's"), "{findings}");
    page.scroll_to("launch-import-text").await?;
    page.screenshot("en-launch-import-gemma2").await?;
    page.driver.quit().await
}

/// In the Chinese interface an import error reads in Chinese, and the plan stays as it was; so does a
/// launch-file reader that cannot be loaded, which the next read loads.
#[tokio::test(flavor = "multi_thread")]
async fn an_import_error_reads_in_chinese() -> WebDriverResult<()> {
    let chromedriver = Chromedriver::start();
    let page = open(&chromedriver, 1280, 1000).await?;
    let tagline = page.wait_text("app-tagline", |t| !t.is_empty()).await?;
    page.click("lang-switch").await?;
    page.wait_text("app-tagline", |t| t != tagline).await?;
    // The launch panel comes with the results, after the summary.
    page.wait_text("launch-text", |t| !t.is_empty()).await?;
    let summary = page.driver.find(By::Css(".launch-import summary")).await?;
    page.click_el(&summary).await?;
    // The reader (a module of its own, loaded on the first read) cannot be fetched: the note says
    // so and the plan is kept; the next read loads it.
    let wasm = page
        .driver
        .execute(
            "const tag = document.querySelector('script[data-reader-wasm]'); const was = tag.dataset.readerWasm; \
             tag.dataset.readerWasm = '/no-such-reader_bg.wasm'; return was;",
            vec![],
        )
        .await?
        .json()
        .clone();
    page.type_into("launch-import-text", "stage: sft\nfinetuning_type: full\n").await?;
    page.click("launch-import-apply").await?;
    let note = page.wait_text("launch-import-note", |t| !t.is_empty()).await?;
    assert!(note.starts_with("无法加载启动文件读取模块"), "{note}");
    assert_eq!(page.text("params-total").await?, "7,615,616,512", "an unread file changes nothing");
    page.scroll_to("launch-import-apply").await?;
    page.screenshot("zh-launch-import-no-reader").await?;
    assert!(page.driver.find(By::Css("[data-testid=launch-import-reading]")).await.is_err());
    // Restored, and held back until released: the note says the file is being read meanwhile.
    page.driver
        .execute(
            "document.querySelector('script[data-reader-wasm]').dataset.readerWasm = arguments[0]; \
             const read = globalThis.trainplanReadLaunch; \
             globalThis.trainplanReadLaunch = (text, current) => new Promise((done) => { \
               globalThis.releaseRead = () => { globalThis.trainplanReadLaunch = read; done(read(text, current)); }; \
             });",
            vec![wasm],
        )
        .await?;
    page.type_into("launch-import-text", "hello: world\n").await?;
    page.click("launch-import-apply").await?;
    assert_eq!(page.wait_text("launch-import-reading", |t| !t.is_empty()).await?, "正在读取…");
    page.driver.execute("globalThis.releaseRead();", vec![]).await?;
    let note = page.wait_text("launch-import-note", |t| t.starts_with("不是")).await?;
    assert!(note.starts_with("不是 trainplan 能读取的启动文件"), "{note}");
    assert!(page.driver.find(By::Css("[data-testid=launch-import-reading]")).await.is_err());
    page.type_into("launch-import-text", "stage: sft\ncutoff_len: -3\n").await?;
    page.click("launch-import-apply").await?;
    let note = page.wait_text("launch-import-note", |t| t.contains("cutoff_len")).await?;
    assert_eq!(note, "cutoff_len 必须为正整数。");
    assert_eq!(page.text("params-total").await?, "7,615,616,512", "a refused import changes nothing");
    page.screenshot("zh-launch-import-error").await?;
    page.driver.quit().await
}

/// Decodes `%XX` escapes (what `encodeURIComponent` writes) into UTF-8 text.
fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).unwrap();
            out.push(u8::from_str_radix(hex, 16).unwrap());
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).unwrap()
}

/// Scrolls the element with this test id to the middle of the window, clear of the summary bar.
async fn scroll_to_middle(page: &Page, testid: &str) -> WebDriverResult<()> {
    let el = page.el(testid).await?;
    page.driver.execute("arguments[0].scrollIntoView({block: 'center'});", vec![el.to_json()?]).await?;
    Ok(())
}

/// A file the browser downloads to `path`, once written: it exists, is not empty, and has kept its
/// size for a poll (the browser may create the file before writing it). Waits up to 10 s.
async fn downloaded(path: &std::path::Path) -> Vec<u8> {
    let mut last = None;
    for _ in 0..100 {
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        let size = std::fs::metadata(path).ok().map(|m| m.len()).filter(|&n| 0 < n);
        if size.is_some() && size == last {
            break;
        }
        last = size;
    }
    std::fs::read(path).unwrap_or_else(|e| panic!("the browser saved {}: {e}", path.display()))
}

/// Appends a measured figure to target/screenshots/figures.txt (test output is captured).
fn record_figure(line: &str) {
    use std::io::Write;
    let dir = repo_root().join("target/screenshots");
    let _ = std::fs::create_dir_all(&dir);
    if let Ok(mut f) = std::fs::OpenOptions::new().create(true).append(true).open(dir.join("figures.txt")) {
        let _ = writeln!(f, "{line}");
    }
}

/// An RL plan: the memory chart draws its three phases with the peak one marked, the summary's
/// memory badge and the chart's peak agree, the launch panel says the plan does not run as
/// written, and a download asks first (dismissed, nothing is saved).
#[tokio::test(flavor = "multi_thread")]
async fn an_rl_plan_charts_its_phases_and_downloads_carry_the_verdict() -> WebDriverResult<()> {
    let chromedriver = Chromedriver::start();
    let page = open(&chromedriver, 1280, 1100).await?;
    page.wait_text("params-total", |t| !t.is_empty()).await?;
    page.choose("framework-select", "verl").await?;
    page.choose("method-select", "grpo").await?;
    page.wait_text("memory-phases", |t| !t.is_empty()).await?;
    page.open_chart_data().await?;
    let bars = page.driver.find_all(By::Css("[data-testid='memory-bar']")).await?;
    assert_eq!(bars.len(), 3, "rollout, log-prob and update");
    let peaks = page.driver.find_all(By::Css("[data-testid='memory-bar'].peak")).await?;
    assert_eq!(peaks.len(), 1);
    // The chart's rows are its text alternative, under "Chart data".
    let peak = peaks[0].prop("textContent").await?.unwrap_or_default();
    assert!(peak.contains("(peak)"), "{peak}");
    // The sequence length plays no part in RL: the field is gone, prompt and response lengths stay.
    assert!(!page.has("seq-len-input").await?);
    // The token budget is labelled as each framework reads it, with the key its files set; VeRL's
    // FSDP engine has the switch to reduce once an update, MindSpeed-RL none.
    let budget_label =
        "return document.querySelector('[data-testid=token-budget-input]').labels[0].textContent";
    let label =
        page.driver.execute(budget_label, vec![]).await?.json().as_str().unwrap_or_default().to_owned();
    assert!(label.contains("per device") && label.contains("ppo_max_token_len_per_gpu"), "{label}");
    assert!(page.has("no-sync-check").await?);
    // VeRL scores the log-probabilities in a micro-batch of their own: more sequences at once, more
    // logits in the log-prob phase (its bar, the second), the update's unchanged.
    let bar_text = |k: usize| {
        let page = &page;
        async move {
            let bars = page.driver.find_all(By::Css("[data-testid='memory-bar']")).await?;
            WebDriverResult::Ok(bars[k].prop("textContent").await?.unwrap_or_default())
        }
    };
    let (log_prob, update) = (bar_text(1).await?, bar_text(2).await?);
    // Its budget packed by tokens, beside.
    assert!(page.has("log-prob-tokens-input").await?);
    page.type_into("log-prob-micro-input", "64").await?;
    let mut grown = log_prob.clone();
    for _ in 0..100 {
        grown = bar_text(1).await?;
        if grown != log_prob {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert_ne!(grown, log_prob, "the log-prob phase kept its bytes");
    assert_eq!(bar_text(2).await?, update);
    // 64 sequences' logits at once no longer fit, which no sharding or recomputation helps: the
    // memory finding's fix scores as the update trains (its micro-batch), named as every
    // framework's form has it.
    let fix = page.wait_text("fix-memory.does_not_fit", |t| t.contains("Log-prob micro-batch")).await?;
    assert!(!fix.contains("64") && !fix.contains("per_gpu"), "{fix}");
    page.choose("framework-select", "mindspeed-rl").await?;
    let mut label = String::new();
    for _ in 0..100 {
        label =
            page.driver.execute(budget_label, vec![]).await?.json().as_str().unwrap_or_default().to_owned();
        if label.contains("per packed row") {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert!(label.contains("per packed row") && label.contains("max_packing_token_size"), "{label}");
    assert!(!page.has("no-sync-check").await?);
    // MindSpeed-RL scores them in micro-batches of their own too, labelled with its keys (a role's
    // each); the 64 typed under VeRL is the plan's and stays.
    let micro_label =
        "return document.querySelector('[data-testid=log-prob-micro-input]').labels[0].textContent";
    let label =
        page.driver.execute(micro_label, vec![]).await?.json().as_str().unwrap_or_default().to_owned();
    assert!(label.contains("actor_/ref_forward_micro_batch_size"), "{label}");
    assert_eq!(page.el("log-prob-micro-input").await?.prop("value").await?.as_deref(), Some("64"));
    assert!(page.has("log-prob-tokens-input").await?);
    page.choose("framework-select", "verl").await?;
    assert!(page.has("prompt-len-input").await?);
    // A long response that does not fit (98,304 tokens: the actor's bf16 logits alone, 2 bytes a token
    // and vocabulary entry, take 28 GiB): the verdict shows above the files and a download asks.
    page.type_into("response-len-input", "98304").await?;
    page.wait_text("memory-fits", |t| t.starts_with("Memory does not fit")).await?;
    let verdict = page.wait_text("launch-verdict", |t| !t.is_empty()).await?;
    assert!(verdict.contains("does not run as written"), "{verdict}");
    let text = page.text("launch-text").await?;
    assert!(text.contains("WARNING: this plan does not run as written"), "{text}");
    page.click("launch-download").await?;
    let asked = page.driver.get_alert_text().await?;
    assert!(asked.contains("Download anyway"), "{asked}");
    page.driver.dismiss_alert().await?;
    page.screenshot("en-rl-phases").await?;
    page.driver.quit().await
}

/// A keystroke's redraw, the heaviest plan included: Llama 3.1 405B pretraining on 1,024 H100
/// (TP 8, PP 16, VPP 4, uneven stages, so the schedule is simulated). Typing 2048 into the global
/// batch, each edit is timed in the page from its input event to (1) the end of the work it set off
/// (the report, the charts' data, the DOM updates: a task queued after them) and (2) the next painted
/// frame (a task queued after the next animation frame). (2) waits for the screen's next refresh,
/// so the main thread's own time is also given: (1) plus the frame's own work, from the frame's
/// start (or the end of (1), whichever is later) to the task after it — the figure that must stay
/// within a 60 Hz frame. Timed by the page's own clock rather than through WebDriver, whose
/// commands cost more than the redraw. The 11 edits run twice, and each pass has its figures: the
/// first takes every path for the first time (the browser compiles a wasm function when it is
/// first called; each new micro-batch count compiles its pipeline programs), the second is an
/// engineer's edits once the page has been used. A third pass probes how long the main thread is
/// busy per edit, whatever it is busy with (the page's update, the charts it paints in the next
/// animation frame, the browser's style, layout and paint): a chain of `MessageChannel` tasks
/// runs beside the edits, each posting the next, and every gap between two of them over a quarter
/// of a millisecond is time the thread spent elsewhere. Unlike (2), no wait for the screen's next
/// refresh counts, and unlike (1), the charts' painting does. (On an empty page, an input handler
/// that works 4 ms reads 5–6 ms busy this way: the browser's own frame adds about one.) A fourth
/// pass makes each edit after a pause in which the plan settles and its link is written, as an
/// engineer edits one setting, looks, and edits the next: the first change after a pause also opens
/// a history entry (`app::keep_outside`).
#[tokio::test(flavor = "multi_thread")]
async fn a_keystroke_redraws_the_heaviest_plan_quickly() -> WebDriverResult<()> {
    let chromedriver = Chromedriver::start();
    let page = open(&chromedriver, 1280, 1000).await?;
    heaviest_plan(&page).await?;
    let script = "const done = arguments[arguments.length - 1];
        (async () => {
          const el = document.querySelector('[data-testid=global-batch-input]');
          const out = [];
          // The second pass's changes to the page: attributes set or removed, nodes added or removed.
          const changed = { attributes: 0, nodes: 0 };
          const observer = new MutationObserver((all) => {
            for (const m of all) {
              if (m.type === 'attributes') changed.attributes += 1;
              else if (m.type === 'childList') changed.nodes += m.addedNodes.length + m.removedNodes.length;
            }
          });
          const busy = [];
          // One edit: when it began, its work (to a task queued after it), the time to the next
          // painted frame, and the frame's own work (from its start, or the work's end if later).
          const edit = async (v) => {
            const t0 = performance.now();
            el.value = v;
            el.dispatchEvent(new Event('input', { bubbles: true }));
            await new Promise((r) => setTimeout(r, 0));
            const worked = performance.now() - t0;
            const frame = await new Promise((r) => requestAnimationFrame((at) => setTimeout(() => r(at), 0)));
            const painted = performance.now() - t0;
            return [t0, worked, painted, painted - Math.max(frame - t0, worked)];
          };
          for (let pass = 0; pass < 3; pass++)
          for (const [i, v] of ['2', '20', '204', '2048', '204', '2048', '20', '2', '20', '204', '2048'].entries()) {
            if (pass === 1 && i === 0) observer.observe(document.body, { subtree: true, childList: true, attributes: true });
            if (pass === 2 && i === 0) observer.disconnect();
            // The third pass: the probe's chain of tasks, started before the edit.
            const ticks = [];
            let probing = pass === 2;
            const probe = new MessageChannel();
            probe.port1.onmessage = () => {
              ticks.push(performance.now());
              if (probing) probe.port2.postMessage(0);
            };
            if (probing) {
              probe.port2.postMessage(0);
              await new Promise((r) => setTimeout(r, 5));
            }
            const [t0, worked, painted, framed] = await edit(v);
            if (pass === 2) {
              probing = false;
              let elsewhere = 0;
              for (let k = 1; k < ticks.length; k++) {
                const gap = ticks[k] - ticks[k - 1];
                if (0.25 < gap && t0 < ticks[k]) elsewhere += gap;
              }
              busy.push(elsewhere);
            } else {
              out.push([worked, painted, worked + framed]);
            }
            probe.port1.close();
            await new Promise((r) => setTimeout(r, 40));
          }
          // A fourth pass: each edit after a pause long enough for the plan to settle and its link
          // to be written (the first change after a pause opens a history entry), as an engineer
          // edits one setting, looks, and edits the next.
          const paused = [];
          for (const v of ['2', '20', '204', '1024', '2048']) {
            await new Promise((r) => setTimeout(r, 500));
            const [, worked, painted, framed] = await edit(v);
            paused.push([worked, painted, worked + framed]);
          }
          done({ out, changed, busy, paused });
        })();";
    let got = page.driver.execute_async(script, vec![]).await?.json().clone();
    // Each edit's (work, painted, main thread with the frame) of a list the script returned.
    let triples = |key: &str| -> Vec<[f64; 3]> {
        got[key]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|p| Some([p[0].as_f64()?, p[1].as_f64()?, p[2].as_f64()?]))
            .collect()
    };
    let rows = triples("out");
    assert_eq!(rows.len(), 22, "{got}");
    // What an edit changes in the page, the second pass's 11 edits: each rebuilt element sets its
    // attributes again, so a table rebuilt out of sight shows here. The charts' tables, folded,
    // are not built (717 attributes a keystroke when they were, 155 since).
    let per_edit = |what: &str| got["changed"][what].as_f64().unwrap_or(f64::NAN) / 11.0;
    let (attributes, nodes) = (per_edit("attributes"), per_edit("nodes"));
    record_figure(&format!(
        "a keystroke's changes to the page, Llama 3.1 405B (PP 16, VPP 4), second pass: {attributes:.0} attributes \
         set or removed, {nodes:.0} nodes added or removed"
    ));
    assert!(attributes < 300.0, "a keystroke sets {attributes:.0} attributes: a hidden table rebuilt?");
    // The plan shown is the last one typed: 2,048 sequences a step.
    assert_eq!(page.el("global-batch-input").await?.prop("value").await?.as_deref(), Some("2048"));
    // Median and worst of figure `k` over one pass's edits.
    let stats = |edits: &[[f64; 3]], k: usize| {
        let mut v: Vec<f64> = edits.iter().map(|r| r[k]).collect();
        v.sort_by(f64::total_cmp);
        (v[v.len() / 2], v[v.len() - 1])
    };
    // A pass's figures, recorded as `what` names its edits.
    let record_pass = |what: &str, edits: &[[f64; 3]]| {
        let ((work_median, work_worst), (paint_median, paint_worst)) = (stats(edits, 0), stats(edits, 1));
        let (busy_median, busy_worst) = stats(edits, 2);
        record_figure(&format!(
            "keystroke → redraw, Llama 3.1 405B on 1,024 H100 (PP 16, VPP 4), {what}: work median \
             {work_median:.1} ms, worst {work_worst:.1} ms; main thread with the frame median {busy_median:.1} ms, \
             worst {busy_worst:.1} ms; to the painted frame median {paint_median:.1} ms, worst {paint_worst:.1} ms"
        ));
    };
    for (pass, edits) in ["first time through", "again"].into_iter().zip(rows.chunks(11)) {
        record_pass(&format!("11 edits of the global batch, {pass}"), edits);
    }
    let paused = triples("paused");
    assert_eq!(paused.len(), 5, "{got}");
    record_pass(
        "5 edits of the global batch, each after 0.5 s (the plan settled and its link written)",
        &paused,
    );
    let mut busy: Vec<f64> =
        got["busy"].as_array().into_iter().flatten().filter_map(|b| b.as_f64()).collect();
    assert_eq!(busy.len(), 11, "{got}");
    busy.sort_by(f64::total_cmp);
    record_figure(&format!(
        "keystroke → redraw, Llama 3.1 405B on 1,024 H100 (PP 16, VPP 4), 11 edits, third pass probed: the main \
         thread busy median {:.1} ms, worst {:.1} ms per edit (the page's update, the charts painted and the \
         browser's frame)",
        busy[5], busy[10]
    ));
    // The probe saw the edits' work: each edit evaluates the plan and redraws the page.
    assert!(0.5 < busy[0], "the probe saw no work: {busy:?}");
    // A regression guard well above today's figures, loose enough for a machine busy with the
    // other tests (the same edits took 250–550 ms each before the report stopped rebuilding a node
    // per pass and writing the address per keystroke).
    let (paint_median, _) = stats(&rows, 1);
    assert!(paint_median < 120.0, "keystrokes took {paint_median:.0} ms (median) to paint: {rows:?}");
    page.driver.quit().await
}

/// A copy of the built page without the file whose name starts with `prefix` (a part of the
/// wasm), in a folder of its own named after `what`; the build has exactly one such file.
fn dist_without(prefix: &str, what: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("trainplan-e2e-{}-{what}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let mut removed = 0;
    for entry in std::fs::read_dir(dist_dir()).unwrap() {
        let entry = entry.unwrap();
        let name = entry.file_name().to_string_lossy().into_owned();
        match name.starts_with(prefix) {
            true => removed += 1,
            false if entry.path().is_file() => {
                std::fs::copy(entry.path(), dir.join(&name)).unwrap();
            }
            false => {}
        }
    }
    assert_eq!(removed, 1, "the build has one {prefix}… module");
    dir
}

/// The search workers fetch the search's code, a part of the wasm of its own, on their first
/// search. Where it does not load, the workers say so and the page searches in itself: the answer
/// comes, from the page's own thread.
#[tokio::test(flavor = "multi_thread")]
async fn a_search_whose_workers_part_does_not_load_runs_in_the_page() -> WebDriverResult<()> {
    let dir = dist_without("trainplan-part-search_worker-", "no-search-part");
    let chromedriver = Chromedriver::start();
    let page = open_at(&chromedriver, &dir, 1280, 1000).await?;
    page.wait_text("params-total", |t| !t.is_empty()).await?;
    // The workers load (and fail to load their part) once the plan has stood unedited for 1.5 s.
    tokio::time::sleep(std::time::Duration::from_millis(2500)).await;
    page.click("search-run").await?;
    let summary = page.wait_text("search-summary", |t| t.contains("plans tried")).await?;
    assert!(summary.contains("keep every rule"), "{summary}");
    assert_eq!(page.search_workers().await?, 0, "the search ran in the page: {summary}");
    assert!(page.has("search-row-0").await?, "the page's own search found plans: {summary}");
    assert!(!page.has("crashed").await?, "the page goes on");
    let _ = std::fs::remove_dir_all(&dir);
    page.driver.quit().await
}

/// The results below the findings are a module of their own, fetched once the plan is drawn. A build
/// whose module is missing (the connection dropped, or a new build replaced the files meanwhile) says
/// so where they would be, in the page's language, and the plan above, the form and the other parts
/// work on.
#[tokio::test(flavor = "multi_thread")]
async fn a_part_that_does_not_load_says_so_and_the_plan_stays() -> WebDriverResult<()> {
    let dir = dist_without("trainplan-part-results_below-", "no-part");
    let chromedriver = Chromedriver::start();
    let page = open_at(&chromedriver, &dir, 1280, 1000).await?;

    let said = page.wait_text("part-not-loaded", |t| !t.is_empty()).await?;
    assert!(said.starts_with("This part of the page did not load"), "{said}");
    assert!(!page.has("params-total").await?, "the missing part's panels are not there");
    // The plan, the form and the parts that did load work on.
    let devices = page.wait_text("summary-devices", |t| !t.is_empty()).await?;
    assert!(devices.starts_with('1'), "{devices}");
    page.type_into("nodes-input", "2").await?;
    page.wait_text("n-devices", |t| t == "16").await?;
    page.wait_text("summary-devices", |t| t.starts_with('2')).await?;
    assert!(page.has("logcal-text").await?, "the calibration's own module loaded");
    assert!(!page.has("crashed").await?, "the page goes on");
    page.click("lang-switch").await?;
    let said = page.wait_text("part-not-loaded", |t| t.starts_with("页面")).await?;
    assert!(said.contains("请刷新页面"), "{said}");
    let said = page.el("part-not-loaded").await?;
    page.driver.execute("arguments[0].scrollIntoView({block: 'center'});", vec![said.to_json()?]).await?;
    page.screenshot("zh-part-not-loaded").await?;
    let _ = std::fs::remove_dir_all(&dir);
    page.driver.quit().await
}
