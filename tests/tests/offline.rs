//! End-to-end: the page with no network, in headless Chromium. After one visit the service worker
//! serves it with the server gone; `dist/trainplan.html` runs from a `file://` URL with no server; and
//! a whole session asks nothing of any other origin, under a Content-Security-Policy that says so.
//!
//! Needs `dist/` from `trunk build --release` (whose post-build hook also writes `sw.js` and
//! `trainplan.html`) and Debian's chromium + chromium-driver; `scripts/test` provides both.

use std::path::PathBuf;

use thirtyfour::prelude::*;
use trainplan_e2e::{
    Chromedriver, Page, browser, browser_recording, console_problems, repo_root, requested_urls, serve_dir,
    serve_dir_stoppable, wait_for_service_worker,
};

/// The first visit's plan, Qwen2.5-7B: 7,615,616,512 parameters (the bf16 `model.safetensors.index.json`
/// of Qwen/Qwen2.5-7B-Instruct declares 15,231,233,024 bytes).
const FIRST_VISIT_PARAMS: &str = "7,615,616,512";

fn dist() -> PathBuf {
    std::env::var_os("TRAINPLAN_DIST").map(Into::into).unwrap_or_else(|| repo_root().join("dist"))
}

/// Runs `script` in the page and returns its value (a returned promise is awaited).
async fn eval(page: &Page, script: &str) -> WebDriverResult<serde_json::Value> {
    Ok(page.driver.execute(script, vec![]).await?.json().clone())
}

/// Reads a LLaMA-Factory YAML back into the plan, in the launch-file reader (a second wasm module,
/// loaded on first use): the plan becomes Qwen2.5-14B, matched from the model's directory.
async fn read_a_launch_file(page: &Page) -> WebDriverResult<()> {
    let summary = page.driver.find(By::Css(".launch-import summary")).await?;
    page.click_el(&summary).await?;
    let yaml = "model_name_or_path: /models/Qwen2.5-14B-Instruct\nstage: sft\nfinetuning_type: lora\n";
    page.type_into("launch-import-text", yaml).await?;
    page.click("launch-import-apply").await?;
    let model = page.wait_text("launch-import-model", |t| !t.is_empty()).await?;
    assert_eq!(model, "Model: Qwen2.5-14B, matched from the directory /models/Qwen2.5-14B-Instruct.");
    assert_eq!(page.el("model-select").await?.prop("value").await?.as_deref(), Some("qwen2.5-14b"));
    Ok(())
}

/// Whether the page's Content-Security-Policy is enforced: an inline script added now does not run
/// (no 'unsafe-inline'). Leaves a violation in the console, so it runs after the console is read.
async fn inline_script_runs(page: &Page) -> WebDriverResult<bool> {
    let script = "const s = document.createElement('script'); s.textContent = 'window.inlineRan = true;'; \
                  document.head.append(s); return new Promise((done) => setTimeout(() => done(!!window.inlineRan), 100));";
    Ok(eval(page, script).await?.as_bool() == Some(true))
}

/// The first visit installs the service worker; with the server gone, a reload still shows the
/// plan, and the page still computes.
#[tokio::test(flavor = "multi_thread")]
async fn the_page_works_offline_after_the_first_visit() -> WebDriverResult<()> {
    // The precache list names the search's worker script, which no page element references.
    let sw = std::fs::read_to_string(dist().join("sw.js")).expect("trunk build writes sw.js");
    assert!(sw.contains("\"search-worker.js\""), "sw.js does not precache the search worker");
    let chromedriver = Chromedriver::start();
    let server = serve_dir_stoppable(&dist());
    let page = Page { driver: browser(&chromedriver, 1280, 900).await? };
    page.driver.goto(&server.url).await?;
    assert_eq!(page.wait_text("params-total", |t| !t.is_empty()).await?, FIRST_VISIT_PARAMS);

    // Installable: the manifest names the page and its icon is served.
    let manifest = eval(
        &page,
        "const href = document.querySelector('link[rel=manifest]').href; \
         return fetch(href).then((r) => r.json()).then((m) => \
           fetch(new URL(m.icons[0].src, href)).then((icon) => [m.name, m.start_url, icon.status]));",
    )
    .await?;
    assert_eq!(manifest, serde_json::json!(["trainplan", "./", 200]));
    assert!(wait_for_service_worker(&page.driver).await?, "no service worker took control of the page");

    server.stop();
    // The server is really gone: what the worker did not cache cannot load.
    let control =
        eval(&page, "return fetch('/not-in-the-cache.txt').then(() => 'answered', (err) => err.name);")
            .await?;
    assert_eq!(control.as_str(), Some("TypeError"), "the server still answers");

    page.driver.refresh().await?;
    assert_eq!(page.wait_text("params-total", |t| !t.is_empty()).await?, FIRST_VISIT_PARAMS);
    page.type_into("nodes-input", "2").await?;
    assert_eq!(page.wait_text("n-devices", |t| t == "16").await?, "16");
    // The search's workers load their script, the glue and the wasm from the cache too.
    page.click("search-run").await?;
    let summary = page.wait_text("search-summary", |t| t.contains("plans tried")).await?;
    assert!(0 < page.search_workers().await?, "{summary}");
    // The launch-file reader, never loaded in this visit before, comes from the cache too.
    read_a_launch_file(&page).await?;
    page.screenshot("en-offline-reload").await?;
    page.driver.quit().await
}

/// `dist/trainplan.html` opened straight from disk: it renders the plan, reacts to edits, and loads
/// nothing but itself and `data:` URLs.
#[tokio::test(flavor = "multi_thread")]
async fn the_single_file_runs_from_a_file_url() -> WebDriverResult<()> {
    let file = dist().join("trainplan.html");
    let html = std::fs::read_to_string(&file)
        .unwrap_or_else(|e| panic!("{}: {e}; `trunk build --release` writes it", file.display()));
    for reference in ["src=\"/", "href=\"/", "src=\"http", "href=\"http", "rel=\"modulepreload\""] {
        assert!(!html.contains(reference), "trainplan.html still has {reference}");
    }
    assert!(html.contains(r#"<meta http-equiv="Content-Security-Policy" content="default-src 'none'; "#));

    let chromedriver = Chromedriver::start();
    let page = Page { driver: browser_recording(&chromedriver, 1280, 900).await? };
    let url = format!("file://{}", file.display());
    page.driver.goto(&url).await?;
    assert_eq!(page.wait_text("params-total", |t| !t.is_empty()).await?, FIRST_VISIT_PARAMS);
    page.type_into("nodes-input", "2").await?;
    assert_eq!(page.wait_text("n-devices", |t| t == "16").await?, "16");
    // Llama-3-8B: 8,030,261,248 parameters (HF transformers `num_parameters()`).
    page.choose("model-select", "llama-3-8b").await?;
    assert_eq!(page.wait_text("params-total", |t| t == "8,030,261,248").await?, "8,030,261,248");
    // No module worker starts from a file:// page: the search runs in the page itself, and finishes.
    page.click("search-run").await?;
    let summary = page.wait_text("search-summary", |t| t.contains("plans tried")).await?;
    assert!(summary.contains("in the page"), "{summary}");
    assert_eq!(page.search_workers().await?, 0);
    page.screenshot("en-single-file").await?;
    page.scroll_to("search-run").await?;
    page.screenshot("en-single-file-search").await?;
    // The launch-file reader is inlined too, instantiated on first use.
    read_a_launch_file(&page).await?;

    let urls = requested_urls(&page.driver).await?;
    assert!(urls.contains(&url), "the log has no request for the file itself: {urls:?}");
    let outside: Vec<&String> =
        urls.iter().filter(|u| !(**u == url || u.starts_with("data:") || u.starts_with("blob:"))).collect();
    assert!(outside.is_empty(), "requests beyond the file: {outside:?}");
    let problems = console_problems(&page.driver).await?;
    assert!(problems.is_empty(), "{problems:?}");
    assert!(!inline_script_runs(&page).await?, "the single file's CSP lets an unlisted inline script run");
    page.driver.quit().await
}

/// A whole session — edits, another model, a pasted config, the language switch, the search, the
/// launch files, a launch file read back, a reload — requests nothing outside the page's origin,
/// under the page's CSP, which blocks nothing the page does.
#[tokio::test(flavor = "multi_thread")]
async fn a_whole_session_asks_nothing_of_another_origin() -> WebDriverResult<()> {
    let chromedriver = Chromedriver::start();
    let url = serve_dir(&dist());
    let page = Page { driver: browser_recording(&chromedriver, 1280, 1000).await? };
    page.driver.goto(&url).await?;
    assert_eq!(page.wait_text("params-total", |t| !t.is_empty()).await?, FIRST_VISIT_PARAMS);

    let csp = eval(
        &page,
        "return document.querySelector('meta[http-equiv=\"Content-Security-Policy\"]')?.content ?? '';",
    )
    .await?;
    let csp = csp.as_str().unwrap_or_default();
    let directives: Vec<&str> = csp.split(';').map(str::trim).collect();
    for directive in [
        "default-src 'self'",
        "script-src 'self' 'wasm-unsafe-eval'",
        "worker-src 'self'",
        "object-src 'none'",
    ] {
        assert!(directives.contains(&directive), "the CSP lacks {directive}: {csp}");
    }

    page.type_into("nodes-input", "2").await?;
    assert_eq!(page.wait_text("n-devices", |t| t == "16").await?, "16");
    page.choose("model-select", "llama-3-8b").await?;
    assert_eq!(page.wait_text("params-total", |t| t == "8,030,261,248").await?, "8,030,261,248");
    // Mistral-7B-v0.1's config.json, pasted: 7,241,732,096 parameters (keras-hub mistral_7b_en).
    page.driver.find(By::Css("details.import summary")).await?.click().await?;
    let mistral = r#"{"_name_or_path": "mistralai/Mistral-7B-v0.1", "hidden_size": 4096, "intermediate_size": 14336,
      "model_type": "mistral", "num_attention_heads": 32, "num_hidden_layers": 32, "num_key_value_heads": 8,
      "tie_word_embeddings": false, "vocab_size": 32000}"#;
    page.type_into("config-paste", mistral).await?;
    page.click("config-apply").await?;
    assert_eq!(page.wait_text("params-total", |t| t == "7,241,732,096").await?, "7,241,732,096");
    let tagline = page.text("app-tagline").await?;
    page.click("lang-switch").await?;
    page.wait_text("app-tagline", |t| t != tagline).await?;
    page.click("lang-switch").await?;
    page.wait_text("app-tagline", |t| t == tagline).await?;
    page.click("search-run").await?;
    let summary = page.wait_text("search-summary", |t| t.contains("plans tried")).await?;
    assert!(0 < page.search_workers().await?, "the search ran in the page: {summary}");
    page.click("launch-tab-launch.sh").await?;
    let script = page.wait_text("launch-text", |t| t.contains("llamafactory-cli")).await?;
    assert!(script.contains("llamafactory-cli"), "{script}");
    // The launch-file reader is fetched only when a file is read (reading the log empties it).
    let reader =
        |urls: &[String]| urls.iter().any(|u| u.contains("trainplan-reader-") && u.ends_with("_bg.wasm"));
    let mut urls = requested_urls(&page.driver).await?;
    assert!(!reader(&urls), "the reader was fetched before any file was read");
    read_a_launch_file(&page).await?;
    page.driver.refresh().await?;
    // The imported plan was kept: Qwen2.5-14B.
    assert!(page.wait_text("params-total", |t| t.starts_with("14,")).await?.starts_with("14,"));

    let later = requested_urls(&page.driver).await?;
    assert!(reader(&later), "the reader was not fetched from the page's origin: {later:?}");
    urls.extend(later);
    assert!(urls.iter().any(|u| u.ends_with("_bg.wasm")), "the log missed the page's own requests: {urls:?}");
    let outside: Vec<&String> = urls
        .iter()
        .filter(|u| !(u.starts_with(&url) || u.starts_with("data:") || u.starts_with("blob:")))
        .collect();
    assert!(outside.is_empty(), "requests outside {url}: {outside:?}");
    let problems = console_problems(&page.driver).await?;
    assert!(problems.is_empty(), "{problems:?}");
    assert!(!inline_script_runs(&page).await?, "the CSP lets an inline script run");
    page.driver.quit().await
}
