//! The fastest plan that fits: the core's search over the parallel layout, memory knobs and
//! micro-batch, run on request, with each plan found one click away.

use leptos::prelude::*;
use trainplan_core::search::{SearchResult, search};
use trainplan_core::{Plan, rules};

use crate::components::{use_lang, use_tr};
use crate::form::{FormError, PlanForm};
use crate::format;
use crate::i18n::{Key, fill};

/// Rows of the fastest plans shown.
const SHOWN: usize = 5;

/// The search panel.
#[component]
pub fn SearchPanel(
    /// The form, which applying a plan found rewrites.
    form: RwSignal<PlanForm>,
    /// The plan to search from.
    #[prop(into)]
    plan: Signal<Result<Plan, FormError>>,
) -> impl IntoView {
    let tr = use_tr();
    let lang = use_lang();
    // The result with the plan it was searched from: shown only while that is still the plan.
    let found: RwSignal<Option<(Plan, SearchResult)>> = RwSignal::new(None);
    let run = move |_| {
        if let Ok(p) = plan.get_untracked() {
            let result = search(&p);
            found.set(Some((p, result)));
        }
    };
    let current = move || {
        let (from, result) = found.get()?;
        plan.with(|p| p.as_ref().ok().is_some_and(|p| *p == from)).then_some((from, result))
    };
    let summary = move || {
        current().map(|(_, r)| {
            fill(
                tr(Key::search_summary),
                &[
                    ("considered", &format::count(r.considered)),
                    ("fit", &format::count(r.fit)),
                    ("feasible", &format::count(r.feasible)),
                ],
            )
        })
    };
    let rows = move || {
        let Some((from, result)) = current() else { return Vec::new() };
        result
            .best
            .into_iter()
            .take(SHOWN)
            .enumerate()
            .map(|(i, c)| {
                let changes = match c.changes.is_empty() {
                    true => tr(Key::search_unchanged).to_owned(),
                    false => c.changes.iter().map(|f| format!("{} = {}", f.field, f.value)).collect::<Vec<_>>().join(", "),
                };
                let from = from.clone();
                let apply = move |_| {
                    let mut next = from.clone();
                    for fix in &c.changes {
                        match rules::apply(&next, fix) {
                            Ok(p) => next = p,
                            Err(_) => return,
                        }
                    }
                    form.set(PlanForm::from_plan(&next));
                };
                view! {
                    <tr data-testid=format!("search-row-{i}")>
                        <td class="num">{format::count_short(c.tokens_per_second as u64, lang.get())}</td>
                        <td class="num">{format::percent(c.mfu_frac)}</td>
                        <td class="num">{format::gib(c.peak_bytes)}</td>
                        <td><code class="changes">{changes}</code></td>
                        <td>
                            <button class="secondary fix" data-testid=format!("search-apply-{i}") on:click=apply>
                                {tr(Key::advice_apply)}
                            </button>
                        </td>
                    </tr>
                }
            })
            .collect::<Vec<_>>()
    };
    let none_found = move || current().is_some_and(|(_, r)| r.best.is_empty());
    view! {
        <h2>{move || tr(Key::search_title)}</h2>
        <p class="muted">{move || tr(Key::search_hint)}</p>
        <button data-testid="search-run" on:click=run>{move || tr(Key::search_run)}</button>
        <p class="muted" data-testid="search-summary">{summary}</p>
        <Show when=none_found>
            <p class="badge bad" data-testid="search-none">{move || tr(Key::search_none)}</p>
        </Show>
        <Show when=move || current().is_some_and(|(_, r)| !r.best.is_empty())>
            <table class="search-table" data-testid="search-results">
                <thead>
                    <tr>
                        <th class="num">{move || tr(Key::search_col_speed)}</th>
                        <th class="num">{move || tr(Key::search_col_mfu)}</th>
                        <th class="num">{move || tr(Key::search_col_peak)}</th>
                        <th>{move || tr(Key::search_col_changes)}</th>
                        <th></th>
                    </tr>
                </thead>
                <tbody>{rows}</tbody>
            </table>
        </Show>
    }
}
