//! The results column: the charts first (`ResultsTop`), then the rest of the report laid out
//! (`ParamsPanel`): what the plan should know, the advice, comparison, search, sweep, cost, launch
//! files, the parameter counts and the weights per device.

use leptos::prelude::*;
use trainplan_core::{Plan, Report};

use crate::components::advice_panel::AdvicePanel;
use crate::components::compare_panel::ComparePanel;
use crate::components::cost_panel::CostPanel;
use crate::components::findings_panel::FindingsPanel;
use crate::components::launch_panel::LaunchPanel;
use crate::components::memory_chart::MemoryPanel;
use crate::components::param_counts::{DeviceWeights, ParamCounts};
use crate::components::search_panel::SearchPanel;
use crate::components::summary_bar::FINDINGS_ID;
use crate::components::sweep_panel::SweepPanel;
use crate::components::time_panel::TimePanel;
use crate::components::{use_lang, use_tr};
use crate::form::{FormError, PlanForm};
use crate::i18n::Key;
use crate::messages;

/// The results below the charts, laid out: the findings, advice, comparison, search, sweep, cost,
/// launch files, parameter counts and the weights per device; each section is its own component.
#[component]
pub fn ParamsPanel(
    /// The form, which a finding's fix rewrites.
    form: RwSignal<PlanForm>,
    /// The plan, or what stops it.
    #[prop(into)]
    plan: Signal<Result<Plan, FormError>>,
    /// The core's report for the plan, when there is a plan.
    #[prop(into)]
    report: Signal<Option<Report>>,
    /// The plans pinned for comparison.
    pinned: RwSignal<Vec<Plan>>,
    /// The plan once typing pauses, and its report: for the advice and the launch files, whose
    /// work (a changed plan evaluated per piece of advice; every file written out) need not hold up
    /// a keystroke's redraw.
    #[prop(into)]
    settled: Signal<Result<Plan, FormError>>,
    /// The settled plan's report.
    #[prop(into)]
    settled_report: Signal<Option<Report>>,
) -> impl IntoView {
    // The advice is about to follow the plan: shown dimmed and not clickable until it does, so no
    // advice about the plan before is applied. (The launch files follow it too; their own fields
    // stay usable meanwhile.)
    let updating = move || plan.with(|p| settled.with(|s| p != s));
    view! {
        <Show when=move || report.with(Option::is_some)>
            <section class="panel results results-more">
                <div id=FINDINGS_ID class="findings-section" tabindex="-1">
                    <FindingsPanel form=form plan=plan report=report />
                </div>
                <div class="deferred" class:updating=updating aria-busy=move || updating().to_string()>
                    <AdvicePanel form=form plan=settled />
                </div>
                <ComparePanel form=form pinned=pinned plan=plan report=report />
                <SearchPanel form=form plan=plan report=report />
                <SweepPanel plan=plan />
                <CostPanel form=form report=report />
                <LaunchPanel form=form plan=settled report=settled_report />
                <ParamCounts plan=plan report=report />
                <DeviceWeights report=report />
            </section>
        </Show>
    }
}

/// The results read most, right below the summary bar: the memory chart and the step's timeline,
/// or what stops the plan.
#[component]
pub fn ResultsTop(
    /// The plan, or what stops it.
    #[prop(into)]
    plan: Signal<Result<Plan, FormError>>,
    /// The core's report for the plan, when there is a plan.
    #[prop(into)]
    report: Signal<Option<Report>>,
) -> impl IntoView {
    let lang = use_lang();
    let tr = use_tr();
    let error_text = move || {
        plan.with(|p| match p {
            Err(FormError { plan: Some(err), .. }) => Some(messages::plan_error(lang.get(), err)),
            _ => None,
        })
    };
    view! {
        <section class="panel results results-top">
            <Show
                when=move || report.with(Option::is_some)
                fallback=move || {
                    view! {
                        <div class="error" data-testid="plan-error" role="alert">
                            <strong>{move || tr(Key::error_title)}</strong>
                            <p>{error_text}</p>
                        </div>
                    }
                }
            >
                <MemoryPanel report=report />
                <TimePanel report=report plan=plan />
            </Show>
        </section>
    }
}
