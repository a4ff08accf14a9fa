//! The plan at a glance, kept on screen while the page scrolls: what runs where, whether it fits,
//! whether the frameworks accept it, and how fast it goes. Every figure is the core's report (the
//! cluster's shape is the plan's own input), formatted by `format`.

use leptos::prelude::*;
use trainplan_core::report::Severity;

use crate::components::memory_chart::fits;
use crate::components::results::use_results;
use crate::i18n::{Key, fill};
use crate::{format, messages};

/// The id of the bar: the skip link moves focus here.
pub const RESULTS_ID: &str = "results";

/// The id of the findings section the bar's rule count leads to.
pub const FINDINGS_ID: &str = "findings-section";

/// The summary bar at the top of the results.
#[component]
pub fn SummaryBar() -> impl IntoView {
    let ctx = use_results();
    // What runs where: the model, the cluster, the framework and method.
    let context = Memo::new(move |_| {
        let (name, device) =
            ctx.report.with(|r| r.as_ref().map(|r| (r.model.name.clone(), r.hardware.name.clone())))?;
        ctx.plan.with(|plan| {
            let plan = plan.as_ref().ok()?;
            let devices = fill(
                ctx.tr(Key::summary_devices),
                &[
                    ("nodes", &format::count(u64::from(plan.cluster.nodes.get()))),
                    ("per_node", &format::count(u64::from(plan.cluster.devices_per_node.get()))),
                    ("device", &device),
                ],
            );
            let run = format!("{} · {}", plan.framework.name(), ctx.tr(messages::method_key(plan.method)));
            Some((name, devices, run))
        })
    });
    // Rebuilt only when what it says changes, not with every keystroke.
    let context = move || {
        context.get().map(|(name, devices, run)| {
            view! {
                // What runs before where: on a phone the line is cut at the screen's edge, and
                // the framework and method matter more there than the device's full name.
                <span class="summary-model" data-testid="summary-model">{name}</span>
                <span data-testid="summary-run">{run}</span>
                <span data-testid="summary-devices">{devices}</span>
            }
        })
    };
    let figures = move || {
        ctx.report.with(|r| {
            let r = r.as_ref()?;
            let (fits_class, fits_text) = fits(ctx.lang(), &r.memory);
            let count = |s: Severity| r.findings.iter().filter(|f| f.severity == s).count();
            let (errors, warnings) = (count(Severity::Error), count(Severity::Warning));
            let (rules, rules_class) = match (errors, warnings) {
                (0, 0) => (ctx.tr(Key::summary_valid).to_owned(), "badge ok"),
                (0, w) => (fill(ctx.tr(Key::summary_valid_warnings), &[("w", &w.to_string())]), "badge warn"),
                (e, w) => (
                    fill(ctx.tr(Key::summary_invalid), &[("n", &e.to_string()), ("w", &w.to_string())]),
                    "badge bad",
                ),
            };
            let t = &r.time;
            let figure = |key: Key, testid: &'static str, value: String| {
                view! {
                    <span class="summary-figure">
                        <span class="summary-label">{ctx.tr(key)}</span>
                        <strong data-testid=testid>{value}</strong>
                    </span>
                }
            };
            Some(view! {
                <span class=fits_class data-testid="summary-fits">{fits_text}</span>
                {figure(Key::summary_step, "summary-step", format::seconds(t.step_seconds))}
                {figure(
                    Key::summary_tokens,
                    "summary-tokens",
                    format::count_short(t.tokens_per_second as u64, ctx.lang()),
                )}
                {figure(Key::search_col_mfu, "summary-mfu", format::percent(t.mfu))}
                <button
                    class=format!("summary-rules {rules_class}")
                    data-testid="summary-rules"
                    title=ctx.tr(Key::summary_to_findings)
                    on:click=move |_| go_to_findings()
                >
                    {rules}
                </button>
            })
        })
    };
    view! {
        <section
            id=RESULTS_ID
            class="summary-bar"
            tabindex="-1"
            aria-label=move || ctx.tr(Key::summary_label)
            data-testid="summary"
        >
            <p class="summary-context">{context}</p>
            <div class="summary-figures" aria-live="polite">{figures}</div>
        </section>
    }
}

/// Scrolls the findings into view below the bar and moves focus there.
fn go_to_findings() {
    let target = web_sys::window().and_then(|w| w.document()).and_then(|d| d.get_element_by_id(FINDINGS_ID));
    if let Some(target) = target {
        target.scroll_into_view();
        if let Ok(target) = wasm_bindgen::JsCast::dyn_into::<web_sys::HtmlElement>(target) {
            let _ = target.focus();
        }
    }
}

/// Moves focus to the results (the summary bar), for the skip link.
pub fn go_to_results() {
    let target = web_sys::window().and_then(|w| w.document()).and_then(|d| d.get_element_by_id(RESULTS_ID));
    if let Some(target) = target.and_then(|t| wasm_bindgen::JsCast::dyn_into::<web_sys::HtmlElement>(t).ok())
    {
        let _ = target.focus();
    }
}
