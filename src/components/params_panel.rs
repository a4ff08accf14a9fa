//! The report: exact parameter counts by component and the weight bytes each device holds.

use leptos::prelude::*;
use trainplan_core::{Plan, Report};

use crate::components::{LangCtx, use_tr};
use crate::form::FormField;
use crate::format;
use crate::i18n::Key;

/// The results panel.
#[component]
pub fn ParamsPanel(
    /// The plan, or the fields that stop it.
    #[prop(into)]
    plan: Signal<Result<Plan, Vec<FormField>>>,
    /// The core's report for the plan, when there is a plan.
    #[prop(into)]
    report: Signal<Option<Report>>,
) -> impl IntoView {
    let LangCtx(lang) = expect_context::<LangCtx>();
    let tr = use_tr();
    let has_plan = move || plan.with(Result::is_ok);
    let value = move |pick: fn(&Report) -> u64| report.with(|r| r.as_ref().map(pick));
    let total = move || value(|r| r.params.total);
    let rows = move || {
        let Some(r) = report.get() else { return Vec::new() };
        let p = &r.params;
        let share = |n: u64| format::percent(n as f64 / p.total as f64);
        [
            (Key::params_embedding, p.embedding),
            (Key::params_attention, p.attention),
            (Key::params_mlp, p.mlp),
            (Key::params_norms, p.norms),
            (Key::params_head, p.head),
        ]
        .into_iter()
        .map(|(key, n)| {
            let count = match (key, n) {
                (Key::params_head, 0) => tr(Key::params_head_tied).to_owned(),
                _ => format::count(n),
            };
            view! {
                <tr>
                    <th scope="row">{tr(key)}</th>
                    <td class="num">{count}</td>
                    <td class="num">{share(n)}</td>
                </tr>
            }
        })
        .collect::<Vec<_>>()
    };
    let weights = move || value(|r| r.memory.zero3_bf16_weight_bytes_per_device);

    view! {
        <section class="panel results" aria-live="polite">
            <Show
                when=has_plan
                fallback=move || view! { <p class="error" data-testid="plan-error">{move || tr(Key::error_title)}</p> }
            >
                <h2>{move || tr(Key::params_title)}</h2>
                <div class="headline">
                    <span class="label">{move || tr(Key::params_total)}</span>
                    <span class="big" data-testid="params-total">{move || total().map(format::count)}</span>
                    <span class="short" data-testid="params-total-short">
                        {move || total().map(|n| format::count_short(n, lang.get()))}
                    </span>
                </div>
                <table class="breakdown" data-testid="params-breakdown">
                    <thead>
                        <tr>
                            <th scope="col">{move || tr(Key::params_component)}</th>
                            <th scope="col" class="num">{move || tr(Key::params_count)}</th>
                            <th scope="col" class="num">{move || tr(Key::params_share)}</th>
                        </tr>
                    </thead>
                    <tbody>{rows}</tbody>
                    <tfoot>
                        <tr>
                            <th scope="row">{move || tr(Key::params_per_layer)}</th>
                            <td class="num">{move || value(|r| r.params.per_layer).map(format::count)}</td>
                            <td></td>
                        </tr>
                    </tfoot>
                </table>

                <h2>{move || tr(Key::weights_title)}</h2>
                <div class="headline">
                    <span class="label">{move || tr(Key::weights_zero3)}</span>
                    <span class="big" data-testid="weights-per-device">{move || weights().map(format::gib)}</span>
                    <span class="short" data-testid="weights-per-device-bytes">
                        {move || weights().map(format::count)} " " {move || tr(Key::weights_bytes)}
                    </span>
                </div>
                <p class="explain">{move || tr(Key::weights_explain)}</p>
            </Show>
        </section>
    }
}
