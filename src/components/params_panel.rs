//! The report: the charts first (`ResultsTop`), then what the plan should know, the advice, the
//! launch files, exact parameter counts by component and layer, what the method trains and the
//! weight bytes each device holds (`ParamsPanel`).

use leptos::prelude::*;
use trainplan_core::{Plan, Report};

use crate::components::advice_panel::AdvicePanel;
use crate::components::compare_panel::ComparePanel;
use crate::components::cost_panel::CostPanel;
use crate::components::findings_panel::FindingsPanel;
use crate::components::launch_panel::LaunchPanel;
use crate::components::memory_chart::MemoryPanel;
use crate::components::search_panel::SearchPanel;
use crate::components::summary_bar::FINDINGS_ID;
use crate::components::sweep_panel::SweepPanel;
use crate::components::time_panel::TimePanel;
use crate::components::{use_lang, use_tr};
use crate::form::{FormError, PlanForm};
use crate::i18n::{Key, fill};
use crate::{format, messages};

/// The results below the charts: the findings, advice, comparison, search, launch files and the
/// parameter counts.
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
    let lang = use_lang();
    let tr = use_tr();
    let value = move |pick: fn(&Report) -> u64| report.with(|r| r.as_ref().map(pick));
    let total = move || value(|r| r.params.total);
    let is_moe = move || report.with(|r| r.as_ref().is_some_and(|r| r.params.active != r.params.total));
    let method = move || plan.with(|p| p.as_ref().ok().map(|p| p.method));
    // The advice is about to follow the plan: shown dimmed and not clickable until it does, so no
    // advice about the plan before is applied. (The launch files follow it too; their own fields
    // stay usable meanwhile.)
    let updating = move || plan.with(|p| settled.with(|s| p != s));
    let rows = move || {
        let Some(r) = report.get() else { return Vec::new() };
        let p = &r.params;
        let share = |n: u64| format::percent(n as f64 / p.total as f64);
        [
            (Key::params_embedding, p.embedding, true),
            (Key::params_attention, p.attention, true),
            (Key::params_mlp, p.mlp, 0 < p.mlp),
            (Key::params_experts, p.experts, 0 < p.experts),
            (Key::params_shared_experts, p.shared_experts, 0 < p.shared_experts),
            (Key::params_router, p.router, 0 < p.router),
            (Key::params_norms, p.norms, true),
            (Key::params_head, p.head, true),
        ]
        .into_iter()
        .filter(|&(_, _, shown)| shown)
        .map(|(key, n, _)| {
            let (count, share) = match (key, n) {
                (Key::params_head, 0) => (tr(Key::params_head_tied).to_owned(), String::new()),
                _ => (format::count(n), share(n)),
            };
            view! {
                <tr>
                    <th scope="row">{tr(key)}</th>
                    <td class="num">{count}</td>
                    <td class="num">{share}</td>
                </tr>
            }
        })
        .collect::<Vec<_>>()
    };
    let layers = move || {
        let Some(r) = report.get() else { return Vec::new() };
        r.params
            .layers
            .iter()
            .map(|l| {
                let kind = if l.kind == "moe" { Key::params_moe_layer } else { Key::params_dense_layer };
                let each = fill(
                    tr(Key::params_each),
                    &[("n", &l.n_layers.to_string()), ("params", &format::count(l.params_per_layer))],
                );
                view! {
                    <tr>
                        <th scope="row">{tr(kind)}</th>
                        <td class="num" colspan="2">{each}</td>
                    </tr>
                }
            })
            .collect::<Vec<_>>()
    };
    let mtp = move || value(|r| r.params.mtp).filter(|&n| 0 < n);
    let weights = move || value(|r| r.memory.zero3_bf16_weight_bytes_per_device);
    let capacity_share = move || {
        report.with(|r| {
            r.as_ref().map(|r| {
                let frac =
                    r.memory.zero3_bf16_weight_bytes_per_device as f64 / r.hardware.memory_bytes as f64;
                let capacity = format::gib(r.hardware.memory_bytes);
                format!(
                    "{} {}",
                    format::percent(frac),
                    fill(tr(Key::weights_of_capacity), &[("capacity", &capacity)])
                )
            })
        })
    };

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
                <h2>{move || tr(Key::params_title)}</h2>
                <div class="headline">
                    <span class="label">{move || tr(Key::params_total)}</span>
                    <span class="big" data-testid="params-total">{move || total().map(format::count)}</span>
                    <span class="short" data-testid="params-total-short">
                        {move || total().map(|n| format::count_short(n, lang.get()))}
                    </span>
                </div>
                <dl class="facts">
                    <Show when=is_moe>
                        <div>
                            <dt>{move || tr(Key::params_active)}</dt>
                            <dd data-testid="params-active">
                                {move || value(|r| r.params.active).map(format::count)}
                                <span class="muted">
                                    " · " {move || value(|r| r.params.active).map(|n| format::count_short(n, lang.get()))}
                                </span>
                            </dd>
                        </div>
                    </Show>
                    <div>
                        <dt>
                            {move || tr(Key::params_trainable)} " · " {move || method().map(|m| tr(messages::method_key(m)))}
                        </dt>
                        <dd data-testid="params-trainable">
                            {move || value(|r| r.params.trainable).map(format::count)}
                            <span class="muted">
                                " · "
                                {move || report.with(|r| r.as_ref().map(|r| format::percent(r.params.trainable as f64 / r.params.total as f64)))}
                            </span>
                        </dd>
                    </div>
                </dl>
                <table class="breakdown" data-testid="params-breakdown">
                    <thead>
                        <tr>
                            <th scope="col">{move || tr(Key::params_component)}</th>
                            <th scope="col" class="num">{move || tr(Key::params_count)}</th>
                            <th scope="col" class="num">{move || tr(Key::params_share)}</th>
                        </tr>
                    </thead>
                    <tbody>{rows}</tbody>
                    <tbody class="layers">
                        <tr>
                            <th scope="rowgroup" colspan="3" class="group">{move || tr(Key::params_layers)}</th>
                        </tr>
                        {layers}
                    </tbody>
                    <Show when=move || mtp().is_some()>
                        <tfoot>
                            <tr>
                                <th scope="row">{move || tr(Key::params_mtp)}</th>
                                <td class="num" data-testid="params-mtp">{move || mtp().map(format::count)}</td>
                                <td></td>
                            </tr>
                        </tfoot>
                    </Show>
                </table>

                <h2>{move || tr(Key::weights_title)}</h2>
                <div class="headline">
                    <span class="label">{move || tr(Key::weights_zero3)}</span>
                    <span class="big" data-testid="weights-per-device">{move || weights().map(format::gib)}</span>
                    <span class="short" data-testid="weights-per-device-bytes">
                        {move || weights().map(format::count)} " " {move || tr(Key::weights_bytes)}
                    </span>
                    <span class="short">{capacity_share}</span>
                </div>
                <p class="explain">{move || tr(Key::weights_explain)}</p>
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
