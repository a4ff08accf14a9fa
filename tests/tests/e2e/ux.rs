//! The page as a tool: results first with a summary bar that stays on screen, undo and redo through
//! the browser's Back and Forward, the keyboard's way to the results, only the knobs the
//! framework takes, and the search's plans readable on a phone.

use thirtyfour::prelude::*;
use trainplan_e2e::Page;

use super::extras::plan_of;
use super::{open, record_figure};
use trainplan_core::evaluate;

/// The page's own history length (`history.length`).
async fn history_length(page: &Page) -> WebDriverResult<u64> {
    Ok(page.driver.execute("return history.length;", vec![]).await?.json().as_u64().unwrap_or(0))
}

/// The `data-testid` (else the id) of the focused element.
async fn focused(page: &Page) -> WebDriverResult<String> {
    let script =
        "const e = document.activeElement; return e.getAttribute('data-testid') || e.id || e.tagName;";
    Ok(page.driver.execute(script, vec![]).await?.json().as_str().unwrap_or_default().to_owned())
}

/// The top of an element relative to the window, in CSS pixels.
async fn top_in_window(page: &Page, testid: &str) -> WebDriverResult<f64> {
    let script =
        format!("return document.querySelector(\"[data-testid='{testid}']\").getBoundingClientRect().top;");
    Ok(page.driver.execute(&script, vec![]).await?.json().as_f64().unwrap_or(f64::NAN))
}

/// The top of an element in the document (from the page's top), in CSS pixels.
async fn top_in_page(page: &Page, testid: &str) -> WebDriverResult<f64> {
    let script = format!(
        "return document.querySelector(\"[data-testid='{testid}']\").getBoundingClientRect().top + window.scrollY;"
    );
    Ok(page.driver.execute(&script, vec![]).await?.json().as_f64().unwrap_or(f64::NAN))
}

/// Edit twice, then Back restores the first edit, Back again the plan the page opened with, and
/// Forward the first edit again, each without leaving the page; opening the page and coming back to
/// a plan add no entry; a damaged address changes neither the plan nor the saved one.
#[tokio::test(flavor = "multi_thread")]
async fn back_and_forward_undo_and_redo_edits() -> WebDriverResult<()> {
    let chromedriver = trainplan_e2e::Chromedriver::start();
    let page = open(&chromedriver, 1280, 900).await?;
    page.wait_text("params-total", |t| !t.is_empty()).await?;
    let opened = page.settled_url().await?;
    assert!(opened.contains("#v1="), "the page writes its plan in place: {opened}");
    let entries = history_length(&page).await?;
    // The app's `performance` origin: the same document throughout (Back never reloads it).
    page.driver.execute("window.__sameDocument = true;", vec![]).await?;

    page.type_into("nodes-input", "2").await?;
    assert_eq!(page.wait_text("n-devices", |t| t == "16").await?, "16");
    let first_edit = page.settled_url().await?;
    assert_eq!(history_length(&page).await?, entries + 1, "one entry per settled edit");
    page.type_into("nodes-input", "3").await?;
    assert_eq!(page.wait_text("n-devices", |t| t == "24").await?, "24");
    page.settled_url().await?;
    assert_eq!(history_length(&page).await?, entries + 2);

    // Back: the first edit again, in the form and in the report.
    page.driver.back().await?;
    assert_eq!(page.wait_text("n-devices", |t| t == "16").await?, "16");
    assert_eq!(page.el("nodes-input").await?.prop("value").await?.as_deref(), Some("2"));
    assert_eq!(page.settled_url().await?, first_edit);
    // Back again: the plan the page opened with.
    page.driver.back().await?;
    assert_eq!(page.wait_text("n-devices", |t| t == "8").await?, "8");
    assert_eq!(page.el("nodes-input").await?.prop("value").await?.as_deref(), Some("1"));
    assert_eq!(page.settled_url().await?, opened);
    // Forward: the first edit is redone. Coming back to a plan added no entry.
    page.driver.forward().await?;
    assert_eq!(page.wait_text("n-devices", |t| t == "16").await?, "16");
    page.settled_url().await?;
    assert_eq!(history_length(&page).await?, entries + 2, "Back and Forward add no entry");
    let same = page.driver.execute("return window.__sameDocument === true;", vec![]).await?;
    assert_eq!(same.json().as_bool(), Some(true), "Back or Forward reloaded the page");
    // The plan shown after Back and Forward is the saved one.
    let saved = "return localStorage.getItem('trainplan.plan');";
    let saved_plan = page.driver.execute(saved, vec![]).await?.json().as_str().unwrap_or_default().to_owned();
    assert!(saved_plan.contains("\"nodes\":2"), "{saved_plan}");

    // A damaged address typed over the link: a message; the plan and the saved plan stay.
    page.driver.execute("location.hash = 'v1=broken!';", vec![]).await?;
    let banner = page.wait_text("link-error", |t| !t.is_empty()).await?;
    assert!(banner.contains("could not be opened"), "{banner}");
    assert_eq!(page.text("n-devices").await?, "16");
    tokio::time::sleep(std::time::Duration::from_millis(600)).await;
    let still = page.driver.execute(saved, vec![]).await?.json().as_str().unwrap_or_default().to_owned();
    assert_eq!(still, saved_plan, "a damaged link overwrote the saved plan");
    // Back from it: the last good plan's address again.
    page.driver.back().await?;
    page.wait_text("n-devices", |t| t == "16").await?;
    assert!(page.settled_url().await?.contains("#v1="));

    // Back at once after an edit, before typing pauses (the entry opens with the edit's first
    // change): that edit is undone, not the one before it.
    page.type_into("nodes-input", "5").await?;
    page.driver.back().await?;
    assert_eq!(page.wait_text("n-devices", |t| t == "16").await?, "16");
    assert_eq!(page.el("nodes-input").await?.prop("value").await?.as_deref(), Some("2"));
    page.driver.quit().await
}

/// From the top of the page the first Tab stop is the skip link; Enter puts focus on the results
/// (the summary bar), and the focused controls show a visible outline, the header's buttons too.
#[tokio::test(flavor = "multi_thread")]
async fn the_keyboard_reaches_the_results_first() -> WebDriverResult<()> {
    let chromedriver = trainplan_e2e::Chromedriver::start();
    let page = open(&chromedriver, 1280, 900).await?;
    page.wait_text("params-total", |t| !t.is_empty()).await?;
    let tab = || async { page.driver.action_chain().send_keys(Key::Tab).perform().await };
    let outline = "const s = getComputedStyle(document.activeElement); \
                   return [s.outlineStyle, parseFloat(s.outlineWidth)];";

    // Tab presses from the top to the first result without the skip link, for the record.
    let mut presses = 0;
    let inside = "return !!document.activeElement.closest('.summary-bar, .results');";
    while presses < 200 {
        tab().await?;
        presses += 1;
        if page.driver.execute(inside, vec![]).await?.json().as_bool() == Some(true) {
            break;
        }
    }
    record_figure(&format!(
        "Tab presses from the top of the page to the first result: {presses} (with the skip link: 1 and Enter)"
    ));
    assert!(presses <= 5, "{presses} Tab presses to the first result");

    page.driver.refresh().await?;
    page.wait_text("params-total", |t| !t.is_empty()).await?;
    tab().await?;
    assert_eq!(focused(&page).await?, "skip-to-results");
    // Visible when focused: inside the window.
    let top = top_in_window(&page, "skip-to-results").await?;
    assert!((0.0..100.0).contains(&top), "the skip link is off screen when focused: {top}");
    page.screenshot("en-skip-link").await?;
    // The header's buttons show where focus is (white on the blue header).
    tab().await?;
    assert_eq!(focused(&page).await?, "copy-link");
    let style = page.driver.execute(outline, vec![]).await?.json().clone();
    assert!(style[0] != "none" && 2.0 <= style[1].as_f64().unwrap_or(0.0), "copy link: {style}");
    page.driver.action_chain().key_down(Key::Shift).send_keys(Key::Tab).key_up(Key::Shift).perform().await?;
    assert_eq!(focused(&page).await?, "skip-to-results");
    // Enter: focus on the results, the address still the plan's.
    let url = page.url().await?;
    page.driver.action_chain().send_keys(Key::Enter).perform().await?;
    assert_eq!(focused(&page).await?, "summary");
    assert_eq!(page.url().await?, url, "the skip link changed the address");
    // The next Tab reaches the rule count, which has a visible outline and leads to the findings.
    tab().await?;
    assert_eq!(focused(&page).await?, "summary-rules");
    let style = page.driver.execute(outline, vec![]).await?.json().clone();
    assert!(style[0] != "none" && 2.0 <= style[1].as_f64().unwrap_or(0.0), "rule count: {style}");
    page.screenshot("en-focus-rules").await?;
    page.driver.action_chain().send_keys(Key::Enter).perform().await?;
    assert_eq!(focused(&page).await?, "findings-section");
    page.driver.quit().await
}

/// The default plan (LLaMA-Factory, LoRA) shows no Megatron-only knob until "show every knob" is
/// on; then they are there, disabled, each saying who takes it. Megatron-LM shows them enabled.
#[tokio::test(flavor = "multi_thread")]
async fn a_llamafactory_plan_shows_only_its_knobs() -> WebDriverResult<()> {
    let chromedriver = trainplan_e2e::Chromedriver::start();
    let page = open(&chromedriver, 1280, 1000).await?;
    page.wait_text("params-total", |t| !t.is_empty()).await?;
    assert_eq!(page.el("framework-select").await?.prop("value").await?.as_deref(), Some("llamafactory"));
    // Megatron's parallel state and distributed optimizer, MindSpeed's swap: not LLaMA-Factory's
    // (it takes a DeepSpeed config: ZeRO stage and offload).
    for testid in
        ["tp-input", "pp-input", "vpp-input", "dist-opt-check", "sp-check", "swap-opt-check", "fsdp-select"]
    {
        assert!(!page.has(testid).await?, "{testid} is shown for LLaMA-Factory");
    }
    for testid in ["zero-select", "offload-opt-check", "offload-params-check"] {
        assert!(page.has(testid).await?, "{testid} is missing for LLaMA-Factory");
    }
    // The recomputed layers' ratio is read by Ascend's packaged LLaMA-Factory alone: not on an H100.
    assert!(!page.has("layers-ratio-input").await?, "layers-ratio-input is shown on an H100");
    let hidden = page.text("knobs-hidden").await?;
    assert!(hidden.contains("LLaMA-Factory does not take are hidden"), "{hidden}");
    page.scroll_to("show-all-knobs").await?;
    page.screenshot("en-llamafactory-form").await?;

    page.click("show-all-knobs").await?;
    let disabled = "return document.querySelector(\"[data-testid='vpp-input']\").matches(':disabled');";
    assert_eq!(page.driver.execute(disabled, vec![]).await?.json().as_bool(), Some(true));
    let why = page.text("knob-why-parallel.vpp").await?;
    assert!(why.starts_with("LLaMA-Factory has no such setting; only Megatron-LM"), "{why}");
    let why = page.text("knob-why-recompute.layers_ratio").await?;
    assert!(why.starts_with("Read on Ascend devices only"), "{why}");
    assert!(page.has("dist-opt-check").await?);
    page.scroll_to("show-all-knobs").await?;
    page.screenshot("en-llamafactory-every-knob").await?;
    page.click("lang-switch").await?;
    page.wait_text("knob-why-parallel.vpp", |t| t.contains("没有此设置")).await?;
    page.scroll_to("show-all-knobs").await?;
    page.screenshot("zh-llamafactory-every-knob").await?;
    page.click("show-all-knobs").await?;
    assert!(page.wait_text("knobs-hidden", |t| t.contains("已隐藏")).await?.contains("LLaMA-Factory"));
    page.screenshot("zh-llamafactory-form").await?;

    // On an Ascend 910B the ratio is LLaMA-Factory's again.
    page.choose("hardware-select", "ascend-910b2").await?;
    page.wait_text("summary-devices", |t| t.contains("910B")).await?;
    assert!(page.has("layers-ratio-input").await?, "layers-ratio-input is missing on a 910B");
    page.choose("hardware-select", "h100-sxm-80g").await?;

    // Megatron-LM takes them: shown and enabled without the switch.
    page.choose("framework-select", "megatron").await?;
    page.choose("method-select", "pretrain").await?;
    let vpp = page.el("vpp-input").await?;
    assert_eq!(vpp.prop("disabled").await?.as_deref(), Some("false"));
    let enabled = "return !document.querySelector(\"[data-testid='vpp-input']\").matches(':disabled');";
    assert_eq!(page.driver.execute(enabled, vec![]).await?.json().as_bool(), Some(true));
    assert!(!page.has("zero-select").await?, "ZeRO is DeepSpeed's, not Megatron-LM's");
    page.driver.quit().await
}

/// VeRL's FSDP engine offers its FSDP1 (`none`) or FSDP2, not Megatron FSDP's shardings, and ZeRO
/// 0, 2 or 3, not 1; its launch file names the FSDP chosen (`strategy`, actor and reference).
#[tokio::test(flavor = "multi_thread")]
async fn verl_runs_fsdp2_when_asked() -> WebDriverResult<()> {
    let chromedriver = trainplan_e2e::Chromedriver::start();
    let page = open(&chromedriver, 1280, 1000).await?;
    page.wait_text("params-total", |t| !t.is_empty()).await?;
    page.choose("framework-select", "verl").await?;
    page.choose("method-select", "grpo").await?;
    page.wait_text("launch-text", |t| t.contains("actor_rollout_ref.actor.strategy=fsdp ")).await?;
    let offered = "return [...document.querySelectorAll(\"[data-testid='fsdp-select'] option\")]
        .filter((o) => !o.hidden).map((o) => o.value);";
    let shown = page.driver.execute(offered, vec![]).await?.json().clone();
    assert_eq!(shown, serde_json::json!(["none", "torch_fsdp2"]));
    // Nor ZeRO-1, which its engine has no sharding for (rule verl.zero_stage).
    let stages = "return [...document.querySelectorAll(\"[data-testid='zero-select'] option\")]
        .filter((o) => !o.hidden).map((o) => o.value);";
    let shown = page.driver.execute(stages, vec![]).await?.json().clone();
    assert_eq!(shown, serde_json::json!(["0", "2", "3"]));
    page.choose("fsdp-select", "torch_fsdp2").await?;
    page.wait_text("launch-text", |t| t.contains("actor_rollout_ref.actor.strategy=fsdp2 ")).await?;
    page.scroll_to("fsdp-select").await?;
    page.screenshot("en-verl-fsdp2").await?;
    // FSDP2's CPU offload: a box of its own, written for the actor's engine; the states leave the
    // device for the host, as the core says.
    let before = plan_of(&page).await?;
    page.click("offload-policy-check").await?;
    page.wait_text("launch-text", |t| t.contains("actor_rollout_ref.actor.fsdp_config.offload_policy=True"))
        .await?;
    let after = plan_of(&page).await?;
    assert!(after.parallel.offload_policy);
    let (was, is) = (evaluate(&before).memory, evaluate(&after).memory);
    assert!(is.peak_bytes < was.peak_bytes && was.host_bytes_per_node < is.host_bytes_per_node);
    page.settled().await?;
    page.scroll_to("offload-policy-check").await?;
    page.screenshot("en-verl-offload-policy").await?;
    // Without the KL loss the launch file builds no reference (`use_kl_loss=False`).
    page.click("kl-loss-check").await?;
    page.wait_text("launch-text", |t| t.contains("actor_rollout_ref.actor.use_kl_loss=False")).await?;
    page.scroll_to("kl-loss-check").await?;
    page.screenshot("en-verl-kl-loss").await?;
    page.click("lang-switch").await?;
    page.wait_text("lang-switch", |t| t == "English").await?;
    page.scroll_to("fsdp-select").await?;
    // The results scrolled into view are laid out and painted in the next frames (`content-visibility`).
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    page.screenshot("zh-verl-fsdp2").await?;
    page.scroll_to("offload-policy-check").await?;
    page.screenshot("zh-verl-offload-policy").await?;
    page.scroll_to("kl-loss-check").await?;
    page.screenshot("zh-verl-kl-loss").await?;
    // Megatron-LM offers all of them; DeepSpeed every ZeRO stage.
    page.choose("framework-select", "megatron").await?;
    let shown = page.driver.execute(offered, vec![]).await?.json().clone();
    assert_eq!(shown.as_array().map(Vec::len), Some(5), "{shown}");
    page.choose("method-select", "sft-full").await?;
    page.choose("framework-select", "deepspeed").await?;
    let shown = page.driver.execute(stages, vec![]).await?.json().clone();
    assert_eq!(shown, serde_json::json!(["0", "1", "2", "3"]));
    page.driver.quit().await
}

/// VeRL's Megatron engine takes Megatron's sizes and VeRL's offload, not DeepSpeed's ZeRO, and its
/// launch file is the Megatron engine's config with those sizes.
#[tokio::test(flavor = "multi_thread")]
async fn verl_with_the_megatron_engine_takes_megatron_sizes() -> WebDriverResult<()> {
    let chromedriver = trainplan_e2e::Chromedriver::start();
    let page = open(&chromedriver, 1280, 1000).await?;
    page.wait_text("params-total", |t| !t.is_empty()).await?;
    page.choose("framework-select", "verl-megatron").await?;
    page.choose("method-select", "grpo").await?;
    let takes = [
        "tp-input",
        "pp-input",
        "vpp-input",
        "dist-opt-check",
        "sp-check",
        "offload-params-check",
        "overlap-grad-check",
    ];
    for testid in takes {
        assert!(page.has(testid).await?, "{testid} is missing for VeRL's Megatron engine");
    }
    for testid in ["zero-select", "fsdp-select", "swap-opt-check", "overlap-param-check"] {
        assert!(!page.has(testid).await?, "{testid} is shown for VeRL's Megatron engine");
    }
    page.type_into("tp-input", "2").await?;
    page.type_into("pp-input", "2").await?;
    let text = page
        .wait_text("launch-text", |t| {
            t.contains("actor_rollout_ref.actor.megatron.pipeline_model_parallel_size=2")
        })
        .await?;
    assert!(text.contains("--config-name=ppo_megatron_trainer"), "{text}");
    assert!(text.contains("actor_rollout_ref.actor.megatron.tensor_model_parallel_size=2"), "{text}");
    assert!(!text.contains("fsdp_config"), "{text}");
    // The overlapped gradient reduction through the engine's DDP config.
    page.click("overlap-grad-check").await?;
    page.wait_text("launch-text", |t| {
        t.contains("+actor_rollout_ref.actor.megatron.override_ddp_config.overlap_grad_reduce=True")
    })
    .await?;
    let bar = page.text("summary").await?;
    assert!(bar.contains("VeRL (Megatron)"), "{bar}");
    // A label quoting a key name wraps between its words, not inside one: a soft break after each
    // `_`, the text unchanged.
    let label = "const l = document.querySelector(\"[data-testid='gpu-mem-input']\").closest('label').querySelector('span');
        return [l.textContent, l.querySelectorAll('wbr').length];";
    let got = page.driver.execute(label, vec![]).await?.json().clone();
    assert!(got[0].as_str().is_some_and(|t| t.contains("(gpu_memory_utilization)")), "{got}");
    assert_eq!(got[1].as_u64(), Some(2), "{got}");
    page.screenshot("en-verl-megatron").await?;
    page.click("lang-switch").await?;
    page.wait_text("summary", |t| t.contains("显存")).await?;
    page.screenshot("zh-verl-megatron").await?;
    page.driver.quit().await
}

/// The summary bar stays at the top of the window while the page scrolls, on a desktop and on a
/// phone, in English and Chinese; the memory chart is near the top of the page.
#[tokio::test(flavor = "multi_thread")]
async fn the_summary_bar_stays_on_screen() -> WebDriverResult<()> {
    let chromedriver = trainplan_e2e::Chromedriver::start();
    for (width, height, name) in [(1280, 900, "desktop"), (390, 844, "phone")] {
        let page = open(&chromedriver, width, height).await?;
        page.wait_text("params-total", |t| !t.is_empty()).await?;
        let bar = page.text("summary").await?;
        for part in [
            "Qwen2.5-7B",
            "1 × 8 NVIDIA H100",
            "LLaMA-Factory",
            "LoRA",
            "Memory fits",
            "Step",
            "Tokens/s",
            "MFU",
            "Valid",
        ] {
            assert!(bar.contains(part), "{name}: {part} missing from the bar: {bar}");
        }
        let chart = top_in_page(&page, "memory-chart").await?;
        record_figure(&format!(
            "{name} {width} px: the memory chart starts {chart:.0} px from the top of the page"
        ));
        let limit = if width < 500 { 1_000.0 } else { 700.0 };
        assert!(chart < limit, "{name}: the memory chart is {chart} px down");
        page.screenshot(&format!("en-{name}-top")).await?;

        // Scrolled far down (to the launch files, then the form on the phone): the bar is still
        // at the top of the window.
        for target in ["launch-text", "nodes-input"] {
            page.scroll_to(target).await?;
            tokio::time::sleep(std::time::Duration::from_millis(200)).await;
            let top = top_in_window(&page, "summary").await?;
            assert!(top.abs() < 2.0, "{name}, scrolled to {target}: the bar is at {top} px");
        }
        page.screenshot(&format!("en-{name}-scrolled")).await?;
        page.click("lang-switch").await?;
        page.wait_text("summary", |t| t.contains("有效")).await?;
        page.scroll_to("launch-text").await?;
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
        assert!(top_in_window(&page, "summary").await?.abs() < 2.0);
        page.screenshot(&format!("zh-{name}-scrolled")).await?;
        page.scroll_to("show-all-knobs").await?;
        page.screenshot(&format!("zh-{name}-form")).await?;
        page.click("lang-switch").await?;
        page.wait_text("summary", |t| t.contains("Valid")).await?;
        page.scroll_to("show-all-knobs").await?;
        page.screenshot(&format!("en-{name}-form")).await?;
        page.driver.quit().await?;
    }
    Ok(())
}

/// The search's plans on a phone (390 px): each a card, its figures on one line with its Apply
/// button in view and its changes below at the card's full width (in a column of their own they
/// broke inside every word, and the button sat off screen); in both languages.
#[tokio::test(flavor = "multi_thread")]
async fn the_searchs_plans_read_on_a_phone() -> WebDriverResult<()> {
    let chromedriver = trainplan_e2e::Chromedriver::start();
    let page = open(&chromedriver, 390, 844).await?;
    page.wait_text("params-total", |t| !t.is_empty()).await?;
    page.click("search-run").await?;
    page.wait_text("search-summary", |t| t.contains("plans tried")).await?;
    let geometry = "const box = (css) => document.querySelector(css).getBoundingClientRect();
        const row = box('[data-testid=search-row-0]');
        const changes = box('[data-testid=search-row-0] .changes');
        const apply = box('[data-testid=search-apply-0]');
        return [row.width, changes.width, apply.right, document.documentElement.clientWidth];";
    for (lang, shot) in [("en", "en-phone-search"), ("zh", "zh-phone-search")] {
        if lang == "zh" {
            page.click("lang-switch").await?;
            page.wait_text("search-summary", |t| t.contains("方案")).await?;
        }
        page.scroll_to("search-row-0").await?;
        let got = page.driver.execute(geometry, vec![]).await?.json().clone();
        let [row, changes, apply_right, viewport] = [0, 1, 2, 3].map(|i| got[i].as_f64().unwrap_or(f64::NAN));
        assert!(apply_right <= viewport, "{lang}: Apply ends at {apply_right} px of {viewport}");
        assert!(0.8 * row < changes, "{lang}: the changes take {changes} of the card's {row} px");
        page.screenshot(shot).await?;
    }
    page.driver.quit().await
}
