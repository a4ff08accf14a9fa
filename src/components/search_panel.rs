//! The fastest plan that fits: the core's search over the parallel layout, memory knobs and
//! micro-batch, run on request in Web Workers, one per core, or in the page where none can start
//! (`crate::search_run`), with progress and a cancel button; the top plans in a table, the
//! memory/throughput Pareto front in a chart, and each plan found one click away; every plan found
//! downloads as CSV or JSON.

use gloo_timers::callback::Timeout;
use leptos::prelude::*;
use trainplan_core::search::SearchResult;
use trainplan_core::{Plan, rules};

use crate::chart;
use crate::components::export_panel::Downloads;
use crate::components::pareto_chart::ParetoChart;
use crate::components::results::use_results;
use crate::export::Export;
use crate::form::PlanForm;
use crate::format;
use crate::i18n::{Key, Lang, fill, t};
use crate::search_run::{self, Hooks, Outcome, Running};

/// Rows of the fastest plans shown.
const SHOWN: usize = 5;
/// Milliseconds the plan stays unedited before the search's workers start loading: the first paint
/// and the user's edits come first. Loading them and their warm-up search take the machine's cores
/// for a few hundred milliseconds; begun under a run of edits (1.5 s after the panel appeared, at
/// first), they made an edit's redraw miss its frame: the keystroke benchmark's first pass, worst edit
/// 11–41 ms (median 22) against 11–17 ms (median 16) over five alternated runs, headless
/// Chromium, 2 cores.
const WARM_UP_MS: u32 = 1500;

/// A finished search: the plan it started from, its result, how long it took in this browser, and
/// how many workers ran it (0: the page itself).
#[derive(Clone)]
struct Found {
    from: Plan,
    result: SearchResult,
    millis: f64,
    workers: u32,
}

/// Where the search ran, for the summary line.
fn ran_on(lang: Lang, workers: u32) -> String {
    match workers {
        0 => t(lang, Key::search_ran_in_page).to_owned(),
        1 => t(lang, Key::search_ran_one_worker).to_owned(),
        n => fill(t(lang, Key::search_ran_workers), &[("workers", &n.to_string())]),
    }
}

/// The search panel.
#[component]
pub fn SearchPanel() -> impl IntoView {
    let ctx = use_results();
    let found: RwSignal<Option<Found>> = RwSignal::new(None);
    let progress: RwSignal<Option<f64>> = RwSignal::new(None);
    let cancelled = RwSignal::new(false);
    // The search under way; replacing or dropping it stops it (workers terminated). Owned by this
    // panel, so it goes with the panel.
    let running: StoredValue<Option<Running>, LocalStorage> = StoredValue::new_local(None);
    let run = move |_| {
        if progress.get_untracked().is_some() {
            return;
        }
        let Ok(p) = ctx.plan.get_untracked() else { return };
        progress.set(Some(0.0));
        cancelled.set(false);
        let started = js_sys::Date::now();
        let from = p.clone();
        let hooks = Hooks {
            // A late message of a stopped search cannot reach here (`Running` forgets its hooks),
            // so any progress is this search's.
            progress: Box::new(move |fraction| progress.set(Some(fraction))),
            done: Box::new(move |Outcome { result, workers }| {
                progress.set(None);
                ctx.searched.set(Some((from.clone(), result.clone())));
                let millis = js_sys::Date::now() - started;
                found.set(Some(Found { from: from.clone(), result, millis, workers }));
            }),
        };
        running.set_value(Some(search_run::start(&p, hooks)));
    };
    let cancel = move |_| {
        running.set_value(None);
        progress.set(None);
        cancelled.set(true);
        // Its workers were terminated: new ones load for the next search.
        search_run::warm_up();
    };
    // The workers load once the plan has settled, ahead of the first search: each edit starts the
    // wait again (the timer replaced is cancelled). A search started before then loads its own.
    let settle: StoredValue<Option<Timeout>, LocalStorage> = StoredValue::new_local(None);
    Effect::new(move |_| {
        ctx.plan.track();
        settle.set_value(Some(Timeout::new(WARM_UP_MS, search_run::warm_up)));
    });
    // Shown only while the plan is still the one searched from.
    let shown = Signal::derive(move || {
        let f = found.get()?;
        ctx.plan.with(|p| p.as_ref().ok().is_some_and(|p| *p == f.from)).then_some(f)
    });
    let current = move || shown.get();
    let summary = move || {
        current().map(|f| {
            fill(
                ctx.tr(Key::search_summary),
                &[
                    ("considered", &format::count(f.result.considered)),
                    ("fit", &format::count(f.result.fit)),
                    ("feasible", &format::count(f.result.feasible)),
                    ("millis", &format::amount(f.millis)),
                    ("ran", &ran_on(ctx.lang(), f.workers)),
                ],
            )
        })
    };
    // Nothing fits, or plans fit and each breaks a rule: then the rule most of them broke, as its
    // first plan's finding says it (with that plan's values).
    let none_fit = move || current().is_some_and(|f| f.result.best.is_empty() && f.result.fit == 0);
    let blocked = move || {
        let f = current().filter(|f| f.result.best.is_empty())?;
        let b = f.result.blocked.first()?;
        let plan = rules::apply_all(&f.from, &b.changes).ok()?;
        let report = trainplan_core::evaluate(&plan);
        let finding = report.findings.iter().find(|x| x.code == b.code)?;
        Some(fill(
            ctx.tr(Key::search_blocked),
            &[
                ("fit", &format::count(f.result.fit)),
                ("plans", &format::count(b.plans)),
                ("finding", &crate::messages::finding(ctx.lang(), finding)),
            ],
        ))
    };
    let percent = move || progress.get().map(format::whole_percent);
    view! {
        <h2>{move || ctx.tr(Key::search_title)}</h2>
        <p class="muted">{move || ctx.tr(Key::search_hint)}</p>
        <div class="search-bar">
            <button data-testid="search-run" on:click=run disabled=move || progress.get().is_some()>
                {move || ctx.tr(Key::search_run)}
            </button>
            <Show when=move || progress.get().is_some()>
                <progress data-testid="search-progress" max="1" value=move || progress.get().unwrap_or(0.0)
                    aria-label=move || ctx.tr(Key::search_progress)></progress>
                <span class="muted">{percent}</span>
                <button class="secondary" data-testid="search-cancel" on:click=cancel>
                    {move || ctx.tr(Key::search_cancel)}
                </button>
            </Show>
        </div>
        <Show when=move || cancelled.get()>
            <p class="muted" data-testid="search-cancelled">{move || ctx.tr(Key::search_cancelled)}</p>
        </Show>
        <p class="muted" data-testid="search-summary" data-workers=move || current().map(|f| f.workers)>
            {summary}
        </p>
        <Show when=none_fit>
            <p class="badge bad" data-testid="search-none">{move || ctx.tr(Key::search_none)}</p>
        </Show>
        {move || blocked().map(|text| view! { <p class="badge bad" data-testid="search-blocked">{text}</p> })}
        <SearchResults found=shown />
    }
}

/// The plans a search found, while the plan is still the one searched from: the Pareto chart, the
/// fastest plans with a button each that applies one, and the downloads of every plan found.
#[component]
fn SearchResults(
    /// The search shown.
    found: Signal<Option<Found>>,
) -> impl IntoView {
    let ctx = use_results();
    let current = move || found.get();
    let apply_changes = move |from: &Plan, changes: &[trainplan_core::report::Fix]| {
        if let Ok(next) = rules::apply_all(from, changes) {
            ctx.form.set(PlanForm::from_plan(&next));
        }
    };
    let rows = move || {
        let Some(f) = current() else { return Vec::new() };
        f.result
            .best
            .into_iter()
            .take(SHOWN)
            .enumerate()
            .map(|(i, c)| {
                let changes = match c.changes.is_empty() {
                    true => ctx.tr(Key::search_unchanged).to_owned(),
                    false => crate::messages::changes(ctx.lang(), &c.changes),
                };
                let from = f.from.clone();
                let (tps, mfu, peak) = (c.tokens_per_second, c.mfu_frac, c.peak_bytes);
                let headroom = fill(ctx.tr(Key::search_headroom), &[("free", &format::gib(c.headroom_bytes))]);
                let apply = move |_| apply_changes(&from, &c.changes);
                view! {
                    <tr data-testid=format!("search-row-{i}")>
                        <td class="num">{format::count_short(tps as u64, ctx.lang())}</td>
                        <td class="num">{format::percent(mfu)}</td>
                        <td class="num">{format::gib(peak)}<br /><span class="muted">{headroom}</span></td>
                        <td><code class="changes">{changes}</code></td>
                        <td>
                            <button class="secondary fix" data-testid=format!("search-apply-{i}") on:click=apply>
                                {ctx.tr(Key::advice_apply)}
                            </button>
                        </td>
                    </tr>
                }
            })
            .collect::<Vec<_>>()
    };
    let scatter = Signal::derive(move || {
        let f = current()?;
        let usable = ctx.report.with(|r| r.as_ref().map(|r| r.memory.usable_bytes))?;
        Some(chart::scatter(&f.result, usable))
    });
    // Written on the click only, from the search shown.
    let write = move |kind: Export| {
        let f = current()?;
        let text = match kind {
            Export::SearchCsv => trainplan_core::export::search_csv(&f.from, &f.result),
            _ => trainplan_core::export::search_json(&f.from, &f.result),
        };
        Some((f.from, text))
    };
    view! {
        <Show when=move || current().is_some_and(|f| !f.result.best.is_empty())>
            <ParetoChart scatter=scatter />
            <p class="legend muted">{move || ctx.tr(Key::search_chart_legend)}</p>
            <table class="search-table" data-testid="search-results">
                <thead>
                    <tr>
                        <th class="num">{move || ctx.tr(Key::search_col_speed)}</th>
                        <th class="num">{move || ctx.tr(Key::search_col_mfu)}</th>
                        <th class="num">{move || ctx.tr(Key::search_col_peak)}</th>
                        <th>{move || ctx.tr(Key::search_col_changes)}</th>
                        <th></th>
                    </tr>
                </thead>
                <tbody>{rows}</tbody>
            </table>
            <Downloads class="launch-actions" title=Key::search_export_title
                kinds=&[Export::SearchCsv, Export::SearchJson] write=write />
        </Show>
    }
}
