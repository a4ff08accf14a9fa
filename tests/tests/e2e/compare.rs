//! Comparing plans and exporting them: four pinned plans beside the current one, each column the
//! figures its plan showed while it was being edited; a fifth pin refused with the limit; the link
//! with four pins reopening all of them in a fresh browser; a link with one pin made before there
//! could be more; the report and the search's plans downloaded as JSON and CSV.

use std::path::{Path, PathBuf};
use std::time::Duration;

use thirtyfour::prelude::*;
use trainplan_e2e::{Chromedriver, Page, browser, browser_downloading_to, repo_root, serve_dir};

/// What a plan's report showed while it was the plan being edited.
#[derive(Debug, PartialEq)]
struct Shown {
    devices: String,
    /// The memory badge, which holds the peak ("peak 12.34 GiB of …").
    memory: String,
    step: String,
    tokens: String,
    mfu: String,
}

/// Reads the current plan's figures once the report shows a step time other than `before`.
async fn shown(page: &Page, before: &str) -> WebDriverResult<Shown> {
    let mut step = page.wait_text("step-time", |t| !t.is_empty() && t != before).await?;
    // Steady: two reads a moment apart agree (no keystroke's plan is still on its way).
    loop {
        tokio::time::sleep(Duration::from_millis(300)).await;
        let now = page.text("step-time").await?;
        if now == step {
            break;
        }
        step = now;
    }
    page.settled().await?;
    let tokens = page.text("tokens-per-second").await?;
    Ok(Shown {
        devices: page.text("n-devices").await?,
        memory: page.text("memory-fits").await?,
        step: page.text("step-time").await?,
        // "68.1 K · 8.51 K per device": the cluster's figure is the comparison's.
        tokens: tokens.split(" · ").next().unwrap_or_default().to_owned(),
        mfu: page.text("mfu").await?,
    })
}

/// Asserts that column `col` of the comparison shows `plan`'s figures.
async fn column_shows(page: &Page, col: usize, plan: &Shown) -> WebDriverResult<()> {
    let cell = |metric: &str| format!("compare-{metric}-{col}");
    assert_eq!(page.text(&cell("devices")).await?, plan.devices, "column {col}");
    let peak = page.text(&cell("peak_bytes")).await?;
    assert!(
        peak.ends_with(" GiB") && plan.memory.contains(&format!("peak {peak}")),
        "column {col}: {peak} in {plan:?}"
    );
    assert_eq!(page.text(&cell("step_seconds")).await?, plan.step, "column {col}");
    assert_eq!(page.text(&cell("tokens_per_second")).await?, plan.tokens, "column {col}");
    assert_eq!(page.text(&cell("mfu")).await?, plan.mfu, "column {col}");
    let fits = if plan.memory.starts_with("Memory fits") { "yes" } else { "no" };
    assert_eq!(page.text(&cell("fits")).await?, fits, "column {col}");
    Ok(())
}

/// Each plan's value of a setting that differs, from the comparison's table of them.
async fn setting(page: &Page, field: &str) -> WebDriverResult<Vec<String>> {
    for row in page.driver.find_all(By::Css("[data-testid='compare-differences'] tbody tr")).await? {
        if row.find(By::Css("th")).await?.attr("data-field").await?.as_deref() == Some(field) {
            let mut res = Vec::new();
            for cell in row.find_all(By::Css("td")).await? {
                res.push(cell.text().await?);
            }
            return Ok(res);
        }
    }
    panic!("{field} is not among the settings that differ");
}

/// How many plans the comparison shows.
async fn columns(page: &Page) -> WebDriverResult<usize> {
    Ok(page.driver.find_all(By::Css("[data-testid^='compare-col-']")).await?.len())
}

fn dist() -> PathBuf {
    std::env::var_os("TRAINPLAN_DIST").map(Into::into).unwrap_or_else(|| repo_root().join("dist"))
}

/// Qwen2.5-7B pretraining on Megatron-LM (8 × H100), pinned at TP 1, TP 2, PP 2 and PP 4, then
/// edited to TP 2 × PP 2: five columns, each its plan's own figures.
#[tokio::test(flavor = "multi_thread")]
async fn four_pinned_plans_are_compared_and_reopen_from_the_link() -> WebDriverResult<()> {
    let chromedriver = Chromedriver::start();
    let page = super::open(&chromedriver, 1280, 1100).await?;
    page.wait_text("params-total", |t| !t.is_empty()).await?;
    page.choose("framework-select", "megatron").await?;
    page.choose("method-select", "pretrain").await?;
    let mut plans = Vec::new();
    let mut before = String::new();
    for (tp, pp) in [("1", "1"), ("2", "1"), ("1", "2"), ("1", "4"), ("2", "2")] {
        page.type_into("tp-input", tp).await?;
        page.type_into("pp-input", pp).await?;
        let plan = shown(&page, &before).await?;
        before = plan.step.clone();
        plans.push(plan);
        if plans.len() <= 4 {
            page.click("compare-pin").await?;
            let n = plans.len();
            page.wait_text("compare-table", |_| true).await?;
            for _ in 0..100 {
                if columns(&page).await? == n + 1 {
                    break;
                }
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            assert_eq!(columns(&page).await?, n + 1);
        }
    }
    // The fifth pin is refused with the limit; the four stay.
    page.click("compare-pin").await?;
    let refused = page.wait_text("compare-refused", |t| !t.is_empty()).await?;
    assert_eq!(refused, "At most 4 plans can be pinned: unpin one first.");
    assert_eq!(columns(&page).await?, 5);
    // The current plan first, then each pin as it showed while it was being edited.
    assert_eq!(page.text("compare-col-0").await?, "This plan");
    column_shows(&page, 0, &plans[4]).await?;
    for (pin, plan) in plans[..4].iter().enumerate() {
        column_shows(&page, pin + 1, plan).await?;
    }
    // The settings that differ: TP and PP, one column per plan.
    assert_eq!(setting(&page, "parallel.tp").await?, ["2", "1", "2", "1", "1"]);
    assert_eq!(setting(&page, "parallel.pp").await?, ["2", "1", "1", "2", "4"]);
    // The chart: one group per stage of the deepest plan (PP 4), a bar per plan that has it, read
    // from its table; pin 1 (TP 1, PP 1) is above its usable memory, and says so.
    page.open_chart_data().await?;
    let groups = page.driver.find_all(By::Css("[data-testid='compare-stage']")).await?;
    assert_eq!(groups.len(), 4);
    assert_eq!(groups[0].find_all(By::Css("td[data-plan]")).await?.len(), 5);
    assert_eq!(groups[1].find_all(By::Css("td[data-plan]")).await?.len(), 3);
    assert_eq!(groups[3].find_all(By::Css("td[data-plan]")).await?.len(), 1);
    let pin1 = groups[0].find(By::Css("td[data-plan='1']")).await?.text().await?;
    assert!(pin1.ends_with("above usable"), "{pin1}");
    // The pointer over the chart's middle reads out a stage's bars, as its table row gives them.
    let canvas = page.el("compare-chart").await?.query(By::Css("canvas")).first().await?;
    page.driver.action_chain().move_to_element_center(&canvas).perform().await?;
    let readout = page.wait_text("compare-readout", |t| t.starts_with("Stage ")).await?;
    let stage: usize = readout["Stage ".len()..].split(':').next().and_then(|n| n.parse().ok()).unwrap_or(99);
    assert!(stage < 4, "{readout}");
    for cell in groups[stage].find_all(By::Css("td[data-plan]")).await? {
        let figure = cell.text().await?;
        assert!(readout.contains(&figure), "{readout} lacks {figure}");
    }
    page.scroll_to("compare").await?;
    page.screenshot("en-compare-four").await?;
    page.scroll_to("compare-chart").await?;
    page.screenshot("en-compare-four-settings").await?;
    page.click("lang-switch").await?;
    page.wait_text("compare", |t| t.contains("固定 4")).await?;
    assert_eq!(page.text("compare-refused").await?, "最多只能固定 4 个方案，请先取消固定一个。");
    page.scroll_to("compare").await?;
    page.screenshot("zh-compare-four").await?;
    page.scroll_to("compare-chart").await?;
    page.screenshot("zh-compare-four-chart").await?;

    // The link holds all four pins; a fresh browser opens every one of them.
    let url = page.settled_url().await?;
    assert_eq!(url.matches("&pin=").count(), 4, "{url}");
    let other = Page { driver: browser(&chromedriver, 1280, 1100).await? };
    other.driver.goto(&url).await?;
    other.wait_text("compare-col-4", |t| !t.is_empty()).await?;
    assert_eq!(columns(&other).await?, 5);
    for (col, plan) in [4, 0, 1, 2, 3].into_iter().enumerate() {
        column_shows(&other, col, &plans[plan]).await?;
    }
    // "Make current" on pin 1 (TP 1 × PP 1): it is edited now, and the plan edited before takes
    // its place; unpinning pin 4 leaves three pins, in the link too.
    other.click("compare-make-current-0").await?;
    other.wait_text("step-time", |t| t == plans[0].step).await?;
    assert_eq!(other.el("tp-input").await?.prop("value").await?.as_deref(), Some("1"));
    assert_eq!(other.el("pp-input").await?.prop("value").await?.as_deref(), Some("1"));
    column_shows(&other, 0, &plans[0]).await?;
    column_shows(&other, 1, &plans[4]).await?;
    other.click("compare-unpin-3").await?;
    other.wait_text("compare-table", |_| true).await?;
    assert_eq!(columns(&other).await?, 4);
    let url = other.settled_url().await?;
    assert_eq!(url.matches("&pin=").count(), 3, "{url}");
    other.driver.quit().await?;

    // At phone width the comparison scrolls sideways within its box; the page does not.
    let phone = Page { driver: browser(&chromedriver, 390, 844).await? };
    phone.driver.goto(&page.url().await?).await?;
    phone.wait_text("compare-col-4", |t| !t.is_empty()).await?;
    let page_width = phone.driver.execute("return document.documentElement.scrollWidth;", vec![]).await?;
    assert!(
        page_width.json().as_u64().is_some_and(|w| w <= 390),
        "the page scrolls sideways: {page_width:?}"
    );
    phone.scroll_to("compare").await?;
    phone.screenshot("en-compare-four-phone").await?;
    phone.scroll_to("compare-chart").await?;
    phone.screenshot("en-compare-four-phone-chart").await?;
    phone.click("lang-switch").await?;
    phone.wait_text("compare", |t| t.contains("固定 4")).await?;
    phone.scroll_to("compare").await?;
    phone.screenshot("zh-compare-four-phone").await?;
    phone.driver.quit().await?;
    page.driver.quit().await
}

/// A link written when one plan could be pinned (`encode_link(plan, Some(pinned))` before pins
/// were a list): the default plan on two nodes, the default plan pinned. It opens unchanged.
#[tokio::test(flavor = "multi_thread")]
async fn a_link_with_one_pin_made_before_four_still_opens() -> WebDriverResult<()> {
    const OLD: &str = "v1=ASwA0_97ImNsdXN0ZXIiOnsibm9kZXMiOjJ9LCJtb2RlbCI6InF3ZW4yLjUtN2IifQ&pin=q1bKzU9JzVGyUiosT80z0jPVNU9SqgUA";
    let chromedriver = Chromedriver::start();
    let url = serve_dir(&dist());
    let page = Page { driver: browser(&chromedriver, 1280, 1100).await? };
    page.driver.goto(&format!("{url}#{OLD}")).await?;
    page.wait_text("compare-col-1", |t| !t.is_empty()).await?;
    assert_eq!(columns(&page).await?, 2);
    assert_eq!(page.text("n-devices").await?, "16");
    assert_eq!(page.text("compare-devices-0").await?, "16");
    assert_eq!(page.text("compare-devices-1").await?, "8");
    assert_eq!(setting(&page, "cluster.nodes").await?, ["2", "1"]);
    assert!(!page.has("link-error").await?);
    // Written back as it was; unpinning the one pin drops it from the link.
    assert!(page.settled_url().await?.ends_with(&format!("#{OLD}")));
    page.click("compare-unpin-0").await?;
    for _ in 0..100 {
        if !page.has("compare-table").await? {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(!page.has("compare-table").await?);
    let url = page.settled_url().await?;
    assert!(!url.contains("&pin="), "{url}");
    page.driver.quit().await
}

/// Waits for the browser to save `name` in `dir` (written in full) and returns its text.
async fn saved(dir: &Path, name: &str) -> String {
    String::from_utf8(super::downloaded(&dir.join(name)).await).expect("UTF-8 text")
}

/// The records of a CSV text whose fields hold no comma or quote (what this test reads).
fn records(text: &str) -> Vec<Vec<&str>> {
    assert!(
        text.ends_with("\r\n") && !text.replace("\r\n", "").contains('\n'),
        "CRLF line ends (RFC 4180 §2.1)"
    );
    text.split_terminator("\r\n").map(|line| line.split(',').collect()).collect()
}

/// The report downloads as the core's JSON and as CSV, equal to what the page shows; the search's
/// plans download as CSV and JSON.
#[tokio::test(flavor = "multi_thread")]
async fn the_report_and_the_search_export() -> WebDriverResult<()> {
    let chromedriver = Chromedriver::start();
    let downloads = std::env::temp_dir().join(format!("trainplan-e2e-exports-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&downloads);
    std::fs::create_dir_all(&downloads).unwrap();
    let url = serve_dir(&dist());
    let page = Page { driver: browser_downloading_to(&chromedriver, 1280, 1100, Some(&downloads)).await? };
    page.driver.goto(&url).await?;
    page.wait_text("params-total", |t| !t.is_empty()).await?;
    page.type_into("nodes-input", "2").await?;
    page.wait_text("n-devices", |t| t == "16").await?;
    page.settled().await?;

    // The report's JSON: the figures the page shows, formatted as the page formats them.
    page.click("export-report-json").await?;
    let json: serde_json::Value =
        serde_json::from_str(&saved(&downloads, "qwen2.5-7b-llamafactory-report.json").await).unwrap();
    assert_eq!(json["n_devices"], 16);
    let params_total = page.text("params-total").await?;
    assert_eq!(params_total.replace(',', ""), json["params"]["total"].to_string());
    let peak = json["memory"]["peak_bytes"].as_u64().unwrap();
    let gib = format!("{:.2} GiB", peak as f64 / (1u64 << 30) as f64);
    assert!(page.text("memory-fits").await?.contains(&format!("peak {gib}")), "{gib}");
    let mfu = json["time"]["mfu"].as_f64().unwrap();
    assert_eq!(page.text("mfu").await?, format!("{:.1}%", mfu * 100.0));

    // The report's CSV: the header, the same figures as the JSON, each stage's memory.
    page.click("export-report-csv").await?;
    let csv = saved(&downloads, "qwen2.5-7b-llamafactory-report.csv").await;
    let rows = records(&csv);
    assert_eq!(rows[0], ["figure", "stage", "value"]);
    let value = |figure: &str| rows.iter().find(|r| r[0] == figure).map(|r| r[2].to_owned()).unwrap();
    assert_eq!(value("model.name"), "Qwen2.5-7B");
    assert_eq!(value("n_devices"), "16");
    assert_eq!(value("memory.peak_bytes"), peak.to_string());
    assert_eq!(value("time.mfu").parse::<f64>().unwrap(), mfu);
    assert_eq!(value("memory.fits"), json["memory"]["fits"].to_string());
    let stages = json["memory"]["stages"].as_array().unwrap();
    let totals: Vec<&str> = rows.iter().filter(|r| r[0] == "memory.stages.total").map(|r| r[2]).collect();
    let expected: Vec<String> = stages.iter().map(|s| s["total"].to_string()).collect();
    assert_eq!(totals, expected);

    // The search's plans.
    page.click("search-run").await?;
    page.wait_text("search-summary", |t| t.contains("plans tried")).await?;
    page.click("search-export-json").await?;
    let found: serde_json::Value =
        serde_json::from_str(&saved(&downloads, "qwen2.5-7b-llamafactory-search.json").await).unwrap();
    let best = found["best"].as_array().unwrap();
    let pareto = found["pareto"].as_array().unwrap();
    assert!(!best.is_empty());
    assert_eq!(found["from"]["cluster"]["nodes"], 2);
    // The page's first row is the JSON's fastest plan.
    let shown_peak = page.text("search-row-0").await?;
    let best_peak = best[0]["peak_bytes"].as_u64().unwrap();
    assert!(
        shown_peak.contains(&format!("{:.2} GiB", best_peak as f64 / (1u64 << 30) as f64)),
        "{shown_peak}"
    );
    page.click("search-export-csv").await?;
    let csv = saved(&downloads, "qwen2.5-7b-llamafactory-search.csv").await;
    let rows = records(&csv);
    assert_eq!(
        rows[0][..7],
        ["list", "rank", "tokens_per_second", "step_seconds", "mfu_frac", "peak_bytes", "headroom_bytes"]
    );
    assert_eq!(rows.len(), 1 + best.len() + pareto.len());
    assert_eq!(rows[1][..2], ["best", "1"]);
    assert_eq!(rows[1][2].parse::<f64>().unwrap(), best[0]["tokens_per_second"].as_f64().unwrap());
    assert_eq!(rows[1][5], best_peak.to_string());
    assert!(rows.iter().all(|r| r.len() == rows[0].len()), "every record has every column");
    page.scroll_to("search-run").await?;
    page.screenshot("en-search-export").await?;
    let _ = std::fs::remove_dir_all(&downloads);
    page.driver.quit().await
}
