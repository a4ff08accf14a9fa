//! The results column: the charts first (`ResultsTop`), then the rest of the report laid out
//! (`ParamsPanel`): what the plan should know, the advice, comparison, search, sweep, cost, launch
//! files, the parameter counts and the weights per device.

use leptos::prelude::*;
use wasm_split_helpers::{SplitLoaderError, wasm_split};

use crate::components::advice_panel::AdvicePanel;
use crate::components::compare_panel::ComparePanel;
use crate::components::cost_panel::CostPanel;
use crate::components::deferred::deferred;
use crate::components::findings_panel::FindingsPanel;
use crate::components::launch_panel::LaunchPanel;
use crate::components::memory_chart::MemoryPanel;
use crate::components::param_counts::{DeviceWeights, ParamCounts};
use crate::components::results::use_results;
use crate::components::search_panel::SearchPanel;
use crate::components::summary_bar::FINDINGS_ID;
use crate::components::sweep_panel::SweepPanel;
use crate::components::time_panel::TimePanel;
use crate::form::FormError;
use crate::i18n::Key;
use crate::messages;

/// The results below the charts, laid out: the findings, advice, comparison, search, sweep, cost,
/// launch files, parameter counts and the weights per device; each section is its own component.
#[component]
pub fn ParamsPanel() -> impl IntoView {
    let ctx = use_results();
    // The advice is about to follow the plan: shown dimmed and not clickable until it does, so no
    // advice about the plan before is applied. (The launch files follow it too: their actions and
    // text are deferred alike, their own fields stay usable meanwhile.)
    let updating = Memo::new(move |_| ctx.settling());
    view! {
        <Show when=move || ctx.report.with(Option::is_some)>
            <section class="panel results results-more">
                <div id=FINDINGS_ID class="findings-section" tabindex="-1">
                    {deferred(load_findings(), findings)}
                </div>
                {deferred(load_results_below(), move || results_below(updating))}
            </section>
        </Show>
    }
}

/// The findings, in the module of the results below them (`deferred`): below the first screen, with
/// every rule's words in both languages.
#[wasm_split(results_below, fallible, preload(load_findings))]
fn findings() -> Result<AnyView, SplitLoaderError> {
    Ok(view! { <FindingsPanel /> }.into_any())
}

/// The results below the findings, in a module of their own (`deferred`): the advice, comparison,
/// search, sweep, cost, launch files, parameter counts and the weights per device. `updating` dims
/// the advice while it is about to follow the plan.
#[wasm_split(results_below, fallible, preload(load_results_below))]
fn results_below(updating: Memo<bool>) -> Result<AnyView, SplitLoaderError> {
    Ok(view! {
        <div class="deferred" class:updating=updating aria-busy=move || updating.get().to_string()>
            <AdvicePanel />
        </div>
        <ComparePanel />
        <SearchPanel />
        <SweepPanel />
        <CostPanel />
        <LaunchPanel />
        <ParamCounts />
        <DeviceWeights />
    }
    .into_any())
}

/// The results read most, right below the summary bar: the memory chart and the step's timeline,
/// or what stops the plan.
#[component]
pub fn ResultsTop() -> impl IntoView {
    let ctx = use_results();
    let error_text = move || {
        ctx.plan.with(|p| match p {
            Err(FormError { plan: Some(err), .. }) => Some(messages::plan_error(ctx.lang(), err)),
            _ => None,
        })
    };
    view! {
        <section class="panel results results-top">
            <Show
                when=move || ctx.report.with(Option::is_some)
                fallback=move || {
                    view! {
                        <div class="error" data-testid="plan-error" role="alert">
                            <strong>{move || ctx.tr(Key::error_title)}</strong>
                            <p>{error_text}</p>
                        </div>
                    }
                }
            >
                <MemoryPanel />
                <TimePanel />
            </Show>
        </section>
    }
}
