//! End-to-end: the release build of the page in headless Chromium, one test per user flow.
//!
//! Needs `dist/` from `trunk build --release` and Debian's chromium + chromium-driver; `scripts/test`
//! provides both. Screenshots land in `target/screenshots/`.

use thirtyfour::prelude::*;
use trainplan_e2e::{Chromedriver, Page, browser, repo_root, serve_dir};

async fn open(driver: &Chromedriver, width: u32, height: u32) -> WebDriverResult<Page> {
    let dist = std::env::var_os("TRAINPLAN_DIST").map(Into::into).unwrap_or_else(|| repo_root().join("dist"));
    let url = serve_dir(&dist);
    let page = Page { driver: browser(driver, width, height).await? };
    page.driver.goto(&url).await?;
    Ok(page)
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

    page.driver.quit().await
}

/// The language switch turns every visible string into Chinese and back, and the choice survives a reload.
#[tokio::test(flavor = "multi_thread")]
async fn the_language_switch_translates_the_page() -> WebDriverResult<()> {
    let chromedriver = Chromedriver::start();
    let page = open(&chromedriver, 1280, 900).await?;

    let tagline_en = page.wait_text("app-tagline", |t| !t.is_empty()).await?;
    assert_eq!(tagline_en, "Plan a large-model training run before you queue it");
    page.el("lang-switch").await?.click().await?;
    let tagline_zh = page.wait_text("app-tagline", |t| t != tagline_en).await?;
    assert_eq!(tagline_zh, "在排队之前，先把大模型训练规划清楚");
    assert_eq!(page.text("params-total-short").await?, "76.2 亿");
    let html_lang = page.driver.find(By::Css("html")).await?.attr("lang").await?;
    assert_eq!(html_lang.as_deref(), Some("zh-CN"));
    page.screenshot("zh-first-visit").await?;

    page.driver.refresh().await?;
    assert_eq!(page.wait_text("app-tagline", |t| !t.is_empty()).await?, tagline_zh);
    page.el("lang-switch").await?.click().await?;
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
    page.screenshot("en-phone").await?;
    page.driver.quit().await
}
