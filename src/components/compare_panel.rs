//! Pin the plan, keep editing, and see both side by side: the core's comparison of the pinned plan
//! with the current one, rendered. The pinned plan travels in the link (`&pin=`).

use leptos::prelude::*;
use trainplan_core::compare::{self, Better, Metric};
use trainplan_core::{Plan, Report};

use crate::components::{use_lang, use_tr};
use crate::form::{FormError, PlanForm};
use crate::i18n::Key;
use crate::{format, messages};

/// A figure as the page writes it.
fn figure(metric: Metric, x: f64) -> String {
    match metric {
        Metric::Devices | Metric::Errors | Metric::Warnings => format::count(x as u64),
        Metric::PeakBytes => format::gib(x as u64),
        Metric::StepSeconds => format::seconds(x),
        Metric::TokensPerSecond => format::count(x.round() as u64),
        Metric::Mfu => format::percent(x),
    }
}

fn metric_key(metric: Metric) -> Key {
    match metric {
        Metric::Devices => Key::cmp_devices,
        Metric::PeakBytes => Key::cmp_peak,
        Metric::StepSeconds => Key::cmp_step,
        Metric::TokensPerSecond => Key::cmp_tokens,
        Metric::Mfu => Key::cmp_mfu,
        Metric::Errors => Key::cmp_errors,
        Metric::Warnings => Key::cmp_warnings,
    }
}

/// The pin button, and the comparison while a plan is pinned.
#[component]
pub fn ComparePanel(
    /// The form: "swap" loads the pinned plan into it.
    form: RwSignal<PlanForm>,
    /// The pinned plan.
    pinned: RwSignal<Option<Plan>>,
    /// The current plan.
    #[prop(into)]
    plan: Signal<Result<Plan, FormError>>,
    /// The current plan's report.
    #[prop(into)]
    report: Signal<Option<Report>>,
) -> impl IntoView {
    let tr = use_tr();
    let lang = use_lang();
    let pinned_report = Memo::new(move |_| pinned.with(|p| p.as_ref().map(trainplan_core::evaluate)));
    let comparison = Memo::new(move |_| {
        let (Some(a), Some(ra)) = (pinned.get(), pinned_report.get()) else { return None };
        let (Ok(b), Some(rb)) = (plan.get(), report.get()) else { return None };
        Some(compare::compare((&a.to_file(), &ra), (&b.to_file(), &rb)))
    });
    let pin = move |_| {
        if let Ok(p) = plan.get_untracked() {
            pinned.set(Some(p));
        }
    };
    let swap = move |_| {
        let (Some(old), Ok(now)) = (pinned.get_untracked(), plan.get_untracked()) else { return };
        pinned.set(Some(now));
        form.set(PlanForm::from_plan(&old));
    };
    let rows = move || {
        let Some(c) = comparison.get() else { return Vec::new() };
        c.rows
            .into_iter()
            .map(|r| {
                let change = match r.change {
                    compare::Change::Same => "=".to_owned(),
                    compare::Change::Times(x) => format!("×{x:.2}"),
                    compare::Change::By(d) if r.metric == Metric::PeakBytes => {
                        format!("{}{}", if 0.0 < d { "+" } else { "−" }, format::gib(d.abs() as u64))
                    }
                    compare::Change::By(d) => format!("{}{}", if 0.0 < d { "+" } else { "−" }, d.abs()),
                };
                let (class_a, class_b) = match r.better {
                    Better::Pinned => ("num better", "num"),
                    Better::Current => ("num", "num better"),
                    Better::Neither => ("num", "num"),
                };
                view! {
                    <tr>
                        <th scope="row">{tr(metric_key(r.metric))}</th>
                        <td class=class_a>{figure(r.metric, r.pinned)}</td>
                        <td class=class_b data-testid=format!("compare-current-{}", r.metric.name())>
                            {figure(r.metric, r.current)}
                        </td>
                        <td class="num">{change}</td>
                    </tr>
                }
            })
            .collect::<Vec<_>>()
    };
    let stages = move || {
        let Some(c) = comparison.get() else { return Vec::new() };
        let cell = |b: Option<u64>| b.map(format::gib).unwrap_or_else(|| "–".to_owned());
        c.stages
            .into_iter()
            .map(|s| {
                view! {
                    <tr>
                        <th scope="row">{format!("{} {}", tr(Key::cmp_stage), s.stage)}</th>
                        <td class="num">{cell(s.pinned)}</td>
                        <td class="num">{cell(s.current)}</td>
                        <td></td>
                    </tr>
                }
            })
            .collect::<Vec<_>>()
    };
    let differences = move || {
        let Some(c) = comparison.get() else { return Vec::new() };
        c.differences
            .into_iter()
            .map(|d| {
                let show = |v: &serde_json::Value| match v {
                    serde_json::Value::Null => tr(Key::cmp_default).to_owned(),
                    serde_json::Value::Object(_) => tr(Key::cmp_custom).to_owned(),
                    v => v.to_string(),
                };
                view! { <li><code>{d.field.clone()}</code>": "{show(&d.pinned)}" → "{show(&d.current)}</li> }
            })
            .collect::<Vec<_>>()
    };
    let findings = move |only_pinned: bool| {
        let Some(c) = comparison.get() else { return String::new() };
        let found = if only_pinned { c.only_pinned } else { c.only_current };
        let lang = lang.get();
        found.iter().map(|f| messages::finding(lang, f)).collect::<Vec<_>>().join(" ")
    };

    view! {
        <div class="compare" data-testid="compare">
            <Show
                when=move || pinned.with(Option::is_some)
                fallback=move || view! {
                    <button class="secondary" data-testid="compare-pin" on:click=pin>{move || tr(Key::cmp_pin)}</button>
                }
            >
                <h2>{move || tr(Key::cmp_title)}</h2>
                <div class="launch-actions">
                    <button class="secondary" data-testid="compare-swap" on:click=swap>{move || tr(Key::cmp_swap)}</button>
                    <button class="secondary" data-testid="compare-repin" on:click=pin>{move || tr(Key::cmp_repin)}</button>
                    <button class="secondary" data-testid="compare-unpin" on:click=move |_| pinned.set(None)>{move || tr(Key::cmp_unpin)}</button>
                </div>
                <Show when=move || comparison.with(Option::is_some) fallback=move || view! { <p class="muted">{move || tr(Key::cmp_no_plan)}</p> }>
                    <p class="badge" data-testid="compare-better">
                        {move || comparison.with(|c| match c.as_ref().map(|c| c.better) {
                            Some(Better::Pinned) => tr(Key::cmp_better_pinned),
                            Some(Better::Current) => tr(Key::cmp_better_current),
                            _ => tr(Key::cmp_better_neither),
                        })}
                    </p>
                    <table class="compare-table" data-testid="compare-table">
                        <thead>
                            <tr>
                                <th></th>
                                <th scope="col">{move || tr(Key::cmp_pinned)}</th>
                                <th scope="col">{move || tr(Key::cmp_current)}</th>
                                <th scope="col">{move || tr(Key::cmp_change)}</th>
                            </tr>
                        </thead>
                        <tbody>{rows}{stages}</tbody>
                    </table>
                    <h3>{move || tr(Key::cmp_differences)}</h3>
                    <ul class="compare-diff" data-testid="compare-differences">{differences}</ul>
                    <Show when=move || !findings(true).is_empty()>
                        <p class="muted">{move || tr(Key::cmp_only_pinned)} ": " {move || findings(true)}</p>
                    </Show>
                    <Show when=move || !findings(false).is_empty()>
                        <p class="muted" data-testid="compare-only-current">{move || tr(Key::cmp_only_current)} ": " {move || findings(false)}</p>
                    </Show>
                </Show>
            </Show>
        </div>
    }
}
