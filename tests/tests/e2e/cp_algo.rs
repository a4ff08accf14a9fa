//! The context-parallel algorithm in the form: offered where the framework takes it and the plan
//! splits the sequence, its choice reaching the step time, the launch script and the link; a choice
//! the framework refuses fixed with one click; English and Chinese, desktop and phone.

use thirtyfour::prelude::*;
use trainplan_core::plan::CpAlgo;
use trainplan_core::{Plan, evaluate, permalink};
use trainplan_e2e::{Chromedriver, Page};

use super::open;

/// The plan the page shows, read back from its address once typing has paused.
async fn plan_of(page: &Page) -> WebDriverResult<Plan> {
    let url = page.settled_url().await?;
    let fragment = url.split_once('#').map(|(_, f)| f).unwrap_or_default();
    let link = permalink::decode_link(fragment).map_err(|e| WebDriverError::FatalError(e.to_string()))?;
    Ok(link.plan)
}

/// Whether the test id is on the page once the plan has settled (the form redraws as it changes).
async fn shown_once_settled(page: &Page, testid: &str) -> WebDriverResult<bool> {
    page.settled_url().await?;
    page.has(testid).await
}

/// Megatron-LM pre-training Llama-3.1-8B at 32,768 tokens: no choice at CP 1, the ring and
/// all-to-all at CP 2, the choice in the link, the script and the step the core computes; Llama
/// 3.1 70B's 8 key/value heads at TP 8 × CP 2 refuse all-to-all until the fix puts the ring back;
/// VeRL has no choice.
#[tokio::test(flavor = "multi_thread")]
async fn the_context_parallel_algorithm_is_chosen_in_the_form() -> WebDriverResult<()> {
    let chromedriver = Chromedriver::start();
    let page = open(&chromedriver, 1280, 1000).await?;
    page.wait_text("params-total", |t| !t.is_empty()).await?;
    page.choose("framework-select", "megatron").await?;
    page.choose("method-select", "pretrain").await?;
    page.choose("model-select", "llama-3.1-8b").await?;
    page.type_into("seq-len-input", "32768").await?;
    // At CP 1 there is nothing to choose.
    assert!(!shown_once_settled(&page, "cp-algo-select").await?, "offered at CP 1");
    page.type_into("cp-input", "2").await?;
    assert!(shown_once_settled(&page, "cp-algo-select").await?, "not offered at CP 2");
    let select = page.el("cp-algo-select").await?;
    assert_eq!(select.prop("value").await?.as_deref(), Some("ring"));
    assert!(select.text().await?.contains("all-to-all (Ulysses"), "{}", select.text().await?);
    let ring_step = page.text("step-time").await?;
    let plan = plan_of(&page).await?;
    assert_eq!((plan.parallel.cp.get(), plan.parallel.cp_algo), (2, CpAlgo::Ring));

    page.choose("cp-algo-select", "alltoall").await?;
    let step = page.wait_text("step-time", |t| t != ring_step).await?;
    let plan = plan_of(&page).await?;
    assert_eq!(plan.parallel.cp_algo, CpAlgo::AllToAll);
    // The step shown is the core's for the plan in the address (three significant digits).
    let core = evaluate(&plan).time.step_seconds;
    let shown: f64 = step.split_whitespace().next().unwrap_or_default().parse().unwrap_or(f64::NAN);
    assert!((shown / core - 1.0).abs() < 0.006, "page {step}, core {core} s");
    page.scroll_to("launch-text").await?;
    let script = page.wait_text("launch-text", |t| t.contains("--cp-comm-type a2a")).await?;
    assert!(script.contains("CP 2 (all-to-all)"), "{script}");
    page.scroll_to("cp-algo-select").await?;
    page.screenshot("en-cp-algo").await?;

    // Llama 3.1 70B at TP 8 × CP 2 on two nodes: one key/value head per TP rank cannot split
    // (Transformer Engine's a2a assertion); the fix is the ring.
    page.choose("model-select", "llama-3.1-70b").await?;
    page.type_into("nodes-input", "2").await?;
    page.type_into("tp-input", "8").await?;
    let finding = page.wait_text("finding-parallel.cp_a2a_kv_heads", |t| t.contains("TP 8 × CP 2")).await?;
    assert!(finding.contains("8 do not divide"), "{finding}");
    page.scroll_to("finding-parallel.cp_a2a_kv_heads").await?;
    page.screenshot("en-cp-algo-refused").await?;
    page.click("fix-parallel.cp_a2a_kv_heads").await?;
    assert!(!shown_once_settled(&page, "finding-parallel.cp_a2a_kv_heads").await?, "the fix left it");
    assert_eq!(page.el("cp-algo-select").await?.prop("value").await?.as_deref(), Some("ring"));

    // Chinese.
    page.click("lang-switch").await?;
    let select = page.el("cp-algo-select").await?;
    page.wait_text("cp-algo-select", |t| t.contains("环形")).await?;
    assert!(select.text().await?.contains("按注意力头切分"), "{}", select.text().await?);
    page.scroll_to("cp-algo-select").await?;
    page.screenshot("zh-cp-algo").await?;
    page.click("lang-switch").await?;

    // VeRL's Ulysses is all-to-all, no choice: the form offers none.
    page.choose("framework-select", "verl").await?;
    page.choose("method-select", "grpo").await?;
    assert!(!shown_once_settled(&page, "cp-algo-select").await?, "offered on VeRL");
    // VeRL's Megatron engine takes megatron-core's choice, written as its override.
    page.choose("framework-select", "verl-megatron").await?;
    assert!(shown_once_settled(&page, "cp-algo-select").await?, "not offered on VeRL's Megatron engine");
    page.choose("cp-algo-select", "alltoall").await?;
    page.wait_text("launch-text", |t| {
        t.contains("+actor_rollout_ref.actor.megatron.override_transformer_config.cp_comm_type=a2a")
    })
    .await?;
    page.driver.quit().await
}

/// At a phone's width the choice fits the column, in English and Chinese.
#[tokio::test(flavor = "multi_thread")]
async fn the_context_parallel_algorithm_fits_a_phone() -> WebDriverResult<()> {
    let chromedriver = Chromedriver::start();
    let page = open(&chromedriver, 390, 844).await?;
    page.wait_text("params-total", |t| !t.is_empty()).await?;
    page.choose("framework-select", "mindspeed-llm").await?;
    page.choose("method-select", "pretrain").await?;
    page.type_into("cp-input", "4").await?;
    assert!(shown_once_settled(&page, "cp-algo-select").await?);
    page.choose("cp-algo-select", "alltoall").await?;
    page.scroll_to("launch-text").await?;
    page.wait_text("launch-text", |t| t.contains("--context-parallel-algo ulysses_cp_algo")).await?;
    let fits = "const e = document.querySelector(\"[data-testid='cp-algo-select']\"); \
                return e.getBoundingClientRect().right <= document.documentElement.clientWidth;";
    assert_eq!(page.driver.execute(fits, vec![]).await?.json().as_bool(), Some(true));
    page.scroll_to("cp-input").await?;
    page.screenshot("en-phone-cp-algo").await?;
    page.click("lang-switch").await?;
    page.wait_text("cp-algo-select", |t| t.contains("按注意力头切分")).await?;
    page.scroll_to("cp-input").await?;
    page.screenshot("zh-phone-cp-algo").await?;
    page.driver.quit().await
}
