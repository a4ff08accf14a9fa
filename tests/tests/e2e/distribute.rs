//! Full recomputation's checkpoints split over TP (`recompute.distribute_saved_activations`): the
//! switch where Megatron takes it, its saving in the verdict, its flag in the script and its place
//! in the link; sequence parallelism beside it refused and fixed with one click; hidden for
//! LLaMA-Factory; English and Chinese.

use thirtyfour::prelude::*;
use trainplan_core::{Plan, permalink};
use trainplan_e2e::{Chromedriver, Page};

use super::open;

/// The plan in the address once typing has paused.
async fn plan_of(page: &Page) -> WebDriverResult<Plan> {
    let url = page.settled_url().await?;
    let fragment = url.split_once('#').map(|(_, f)| f).unwrap_or_default();
    let link = permalink::decode_link(fragment).map_err(|e| WebDriverError::FatalError(e.to_string()))?;
    Ok(link.plan)
}

/// Megatron-LM pre-training Llama-3.1-8B at TP 4 with full recomputation and no sequence
/// parallelism: splitting the checkpoints lowers the peak the verdict names and writes
/// `--distribute-saved-activations`; turning SP on breaks Megatron's rule and the fix turns the
/// split off.
#[tokio::test(flavor = "multi_thread")]
async fn checkpoints_split_over_tp_from_the_form() -> WebDriverResult<()> {
    let chromedriver = Chromedriver::start();
    let page = open(&chromedriver, 1280, 1000).await?;
    page.wait_text("params-total", |t| !t.is_empty()).await?;
    // LLaMA-Factory has no such flag: the switch is hidden.
    assert!(!page.has("distribute-saved-check").await?, "shown for LLaMA-Factory");
    page.choose("framework-select", "megatron").await?;
    page.choose("method-select", "pretrain").await?;
    page.choose("model-select", "llama-3.1-8b").await?;
    page.type_into("tp-input", "4").await?;
    page.choose("recompute-select", "full").await?;
    let plan = plan_of(&page).await?;
    assert!(!plan.parallel.sequence_parallel && !plan.recompute.distribute_saved_activations);
    let kept = page.text("memory-fits").await?;

    page.click("distribute-saved-check").await?;
    let split = page.wait_text("memory-fits", |t| t != kept).await?;
    let plan = plan_of(&page).await?;
    assert!(plan.recompute.distribute_saved_activations);
    // The verdict's first figure is the peak: lower with the inputs split four ways.
    let peak = |text: &str| -> f64 {
        let digits: String = text
            .chars()
            .skip_while(|c| !c.is_ascii_digit())
            .take_while(|c| c.is_ascii_digit() || *c == '.')
            .collect();
        digits.parse().unwrap_or(f64::NAN)
    };
    assert!(peak(&split) < peak(&kept), "{kept} → {split}");
    page.scroll_to("launch-text").await?;
    page.wait_text("launch-text", |t| t.contains("--distribute-saved-activations")).await?;
    page.scroll_to("distribute-saved-check").await?;
    page.screenshot("en-distribute-saved").await?;

    // Sequence parallelism splits the checkpoints already; Megatron refuses both.
    page.click("sp-check").await?;
    let finding = page.wait_text("finding-recompute.distribute_sp", |t| !t.is_empty()).await?;
    assert!(finding.contains("sequence parallelism"), "{finding}");
    page.click("lang-switch").await?;
    let finding = page.wait_text("finding-recompute.distribute_sp", |t| t.contains("序列并行")).await?;
    assert!(finding.contains("--distribute-saved-activations"), "{finding}");
    page.scroll_to("finding-recompute.distribute_sp").await?;
    page.screenshot("zh-distribute-saved-refused").await?;
    page.click("fix-recompute.distribute_sp").await?;
    page.settled_url().await?;
    assert!(!page.has("finding-recompute.distribute_sp").await?, "the fix left it");
    let plan = plan_of(&page).await?;
    assert!(plan.parallel.sequence_parallel && !plan.recompute.distribute_saved_activations);
    Ok(())
}
