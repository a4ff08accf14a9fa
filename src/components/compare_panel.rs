//! Pin up to four plans, keep editing, and see them all beside the current one: the core's
//! comparison rendered as a table of the deciding figures with the best marked, memory per stage as
//! grouped bars against device memory, the settings that differ and the findings not every plan
//! has. The pins travel in the link (`&pin=` each); the report's export buttons sit beside "pin".

use leptos::prelude::*;
use trainplan_core::Plan;
use trainplan_core::compare::{self, Change, Comparison, MAX_PINS, Metric, PinRefused};
use trainplan_core::field::Field;

use crate::components::export_panel::ExportPanel;
use crate::components::results::use_results;
use crate::components::stage_bars_chart::StageBarsChart;
use crate::form::PlanForm;
use crate::i18n::{self, Key, Lang, fill};
use crate::{format, messages};

/// The comparison on screen: the core's comparison, whether its first column is the current plan
/// (else the current plan has an error and only the pins are compared), and each column's device
/// and usable memory for the chart.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct Table {
    pub(super) comparison: Comparison,
    has_current: bool,
    pub(super) capacity_bytes: Vec<u64>,
    pub(super) usable_bytes: Vec<u64>,
}

impl Table {
    /// The pin a column shows, if it is one.
    pub(super) fn pin_of(&self, col: usize) -> Option<usize> {
        match self.has_current {
            true => col.checked_sub(1),
            false => Some(col),
        }
    }

    /// The colour of a column's plan: the current plan's own, each pin its own, whether or not the
    /// current plan is shown.
    pub(super) fn tone(&self, col: usize) -> String {
        format!("tone-{}", self.tone_index(col))
    }

    /// A column's tone by number: 0 the current plan, n pin n.
    pub(super) fn tone_index(&self, col: usize) -> usize {
        self.pin_of(col).map_or(0, |pin| pin + 1)
    }

    pub(super) fn columns(&self) -> usize {
        self.capacity_bytes.len()
    }

    /// A column's name: the current plan, or pin n.
    pub(super) fn label(&self, lang: Lang, col: usize) -> String {
        match self.pin_of(col) {
            None => i18n::t(lang, Key::cmp_current).to_owned(),
            Some(pin) => fill(i18n::t(lang, Key::cmp_pin_n), &[("n", &(pin + 1).to_string())]),
        }
    }
}

/// A figure as the page writes it (throughput as the time panel and the search write it).
fn figure(lang: Lang, metric: Metric, x: f64) -> String {
    match metric {
        Metric::Devices | Metric::Errors | Metric::Warnings => format::count(x as u64),
        Metric::Fits if x == 1.0 => i18n::t(lang, Key::cmp_yes).to_owned(),
        Metric::Fits => i18n::t(lang, Key::cmp_no).to_owned(),
        Metric::PeakBytes => format::gib(x as u64),
        Metric::StepSeconds => format::seconds(x),
        Metric::TokensPerSecond => format::count_short(x as u64, lang),
        Metric::Mfu => format::percent(x),
    }
}

/// How a pin's figure differs from the current plan's, as the page writes it (`None`: not shown).
fn change(metric: Metric, change: Change) -> Option<String> {
    let sign = |d: f64| if 0.0 < d { "+" } else { "−" };
    match (metric, change) {
        (Metric::Fits, _) | (_, Change::Same) => None,
        (_, Change::Times(x)) => Some(format::factor(x)),
        (Metric::PeakBytes, Change::By(d)) => Some(format!("{}{}", sign(d), format::gib(d.abs() as u64))),
        (_, Change::By(d)) => Some(format!("{}{}", sign(d), format::count(d.abs() as u64))),
    }
}

fn metric_key(metric: Metric) -> Key {
    match metric {
        Metric::Devices => Key::cmp_devices,
        Metric::PeakBytes => Key::cmp_peak,
        Metric::Fits => Key::cmp_fits,
        Metric::StepSeconds => Key::cmp_step,
        Metric::TokensPerSecond => Key::cmp_tokens,
        Metric::Mfu => Key::cmp_mfu,
        Metric::Errors => Key::cmp_errors,
        Metric::Warnings => Key::cmp_warnings,
    }
}

/// The pin button and the report's export, and the comparison while plans are pinned.
#[component]
pub fn ComparePanel() -> impl IntoView {
    let ctx = use_results();
    // Why the last pin was refused, until the pins change.
    let refused: RwSignal<Option<PinRefused>> = RwSignal::new(None);
    // Each pin evaluated once, when the pins change (not per keystroke).
    let pin_reports = Memo::new(move |_| {
        ctx.pinned.with(|pins| pins.iter().map(trainplan_core::evaluate).collect::<Vec<_>>())
    });
    let table = Memo::new(move |_| {
        if ctx.pinned.with(Vec::is_empty) {
            return None;
        }
        let current = ctx.plan.with(|p| p.as_ref().ok().cloned()).zip(ctx.report.get());
        let mut files = Vec::new();
        let mut reports = Vec::new();
        if let Some((p, r)) = &current {
            files.push(p.to_file());
            reports.push(r.clone());
        }
        ctx.pinned.with(|pins| files.extend(pins.iter().map(Plan::to_file)));
        reports.extend(pin_reports.get());
        let pairs: Vec<_> = files.iter().zip(&reports).collect();
        Some(Table {
            comparison: compare::compare(&pairs),
            has_current: current.is_some(),
            capacity_bytes: reports.iter().map(|r| r.memory.capacity_bytes).collect(),
            usable_bytes: reports.iter().map(|r| r.memory.usable_bytes).collect(),
        })
    });

    let pin = move |_| {
        let Ok(p) = ctx.plan.get_untracked() else { return };
        let mut pins = ctx.pinned.get_untracked();
        match compare::pin(&mut pins, &p) {
            Ok(()) => {
                refused.set(None);
                ctx.pinned.set(pins);
            }
            Err(why) => refused.set(Some(why)),
        }
    };
    let unpin = move |idx: usize| {
        refused.set(None);
        ctx.pinned.update(|pins| {
            if idx < pins.len() {
                pins.remove(idx);
            }
        });
    };
    // The current plan takes the pin's place; with an error it is no plan, and the pin stays.
    let make_current = move |idx: usize| {
        refused.set(None);
        let mut pins = ctx.pinned.get_untracked();
        let next = match ctx.plan.get_untracked() {
            Ok(current) => compare::make_current(&mut pins, idx, &current),
            Err(_) => pins.get(idx).cloned(),
        };
        if let Some(next) = next {
            ctx.pinned.set(pins);
            ctx.form.set(PlanForm::from_plan(&next));
        }
    };
    let refusal = move || {
        refused.get().map(|why| match why {
            PinRefused::Full => fill(ctx.tr(Key::cmp_full), &[("n", &MAX_PINS.to_string())]),
            PinRefused::AlreadyPinned => ctx.tr(Key::cmp_already).to_owned(),
        })
    };

    let best = move || {
        let t = table.get()?;
        Some(match t.comparison.best {
            Some(col) => fill(ctx.tr(Key::cmp_best), &[("plan", &t.label(ctx.lang(), col))]),
            None => ctx.tr(Key::cmp_best_none).to_owned(),
        })
    };

    view! {
        <div class="compare" data-testid="compare">
            <div class="launch-actions">
                <button class="secondary" data-testid="compare-pin" on:click=pin disabled=move || ctx.plan.with(Result::is_err)>
                    {move || ctx.tr(Key::cmp_pin)}
                </button>
                <ExportPanel />
            </div>
            <Show when=move || refused.with(Option::is_some)>
                <p class="badge warn" role="status" data-testid="compare-refused">{refusal}</p>
            </Show>
            <Show when=move || table.with(Option::is_some)>
                <h2>{move || ctx.tr(Key::cmp_title)}</h2>
                <Show when=move || ctx.plan.with(Result::is_err)>
                    <p class="muted">{move || ctx.tr(Key::cmp_no_plan)}</p>
                </Show>
                <p class="badge" data-testid="compare-best">{best}</p>
                <FiguresTable table=table make_current=Callback::new(make_current) unpin=Callback::new(unpin) />
                <p class="legend muted">{move || ctx.tr(Key::cmp_best_mark)}</p>
                <h3>{move || ctx.tr(Key::cmp_memory)}</h3>
                <StageBarsChart table=table />
                <Differences table=table />
                <Distinct table=table />
            </Show>
        </div>
    }
}

/// The deciding figures, a column per plan with the best marked and each pin's change from the
/// current plan; each pin's column makes it current or unpins it.
#[component]
fn FiguresTable(
    /// The comparison shown.
    table: Memo<Option<Table>>,
    /// Makes pin n the current plan.
    make_current: Callback<usize>,
    /// Unpins pin n.
    unpin: Callback<usize>,
) -> impl IntoView {
    let ctx = use_results();
    let head = move || {
        let t = table.get()?;
        let cells = (0..t.columns())
            .map(|col| {
                let actions = t.pin_of(col).map(|idx| {
                    view! {
                        <span class="col-actions">
                            <button class="secondary small" data-testid=format!("compare-make-current-{idx}")
                                title=move || ctx.tr(Key::cmp_make_current_title) on:click=move |_| make_current.run(idx)>
                                {move || ctx.tr(Key::cmp_make_current)}
                            </button>
                            <button class="secondary small" data-testid=format!("compare-unpin-{idx}")
                                on:click=move |_| unpin.run(idx)>
                                {move || ctx.tr(Key::cmp_unpin)}
                            </button>
                        </span>
                    }
                });
                view! {
                    <th scope="col" class="num" data-testid=format!("compare-col-{col}")>
                        <span class=format!("swatch {}", t.tone(col))></span>
                        {t.label(ctx.lang(), col)}
                        {actions}
                    </th>
                }
            })
            .collect_view();
        Some(view! { <tr><th></th>{cells}</tr> })
    };
    let rows = move || {
        let Some(t) = table.get() else { return Vec::new() };
        let lang = ctx.lang();
        t.comparison
            .rows
            .iter()
            .map(|r| {
                let cells = (0..t.columns())
                    .map(|col| {
                        let best = r.best[col];
                        let text = figure(lang, r.metric, r.values[col]);
                        let delta = (t.has_current && 0 < col)
                            .then(|| change(r.metric, r.changes[col]))
                            .flatten()
                            .unwrap_or_default();
                        let star = if best { "★ " } else { "" };
                        view! {
                            <td class="num" class:best=best>
                                {star}
                                <span data-testid=format!("compare-{}-{col}", r.metric.name())>{text}</span>
                                <span class="muted delta">{delta}</span>
                            </td>
                        }
                    })
                    .collect_view();
                view! { <tr><th scope="row">{ctx.tr(metric_key(r.metric))}</th>{cells}</tr> }
            })
            .collect::<Vec<_>>()
    };
    view! {
        <div class="table-scroll">
            <table class="compare-table" data-testid="compare-table">
                <thead>{head}</thead>
                <tbody>{rows}</tbody>
            </table>
        </div>
    }
}

/// The settings that differ between the plans, a row each.
#[component]
fn Differences(
    /// The comparison shown.
    table: Memo<Option<Table>>,
) -> impl IntoView {
    let ctx = use_results();
    let differences = move || {
        let Some(t) = table.get() else { return Vec::new() };
        let lang = ctx.lang();
        t.comparison
            .differences
            .iter()
            .map(|d| {
                // A setting by the form's label with its plan-file name, its values in the form's words.
                let field = Field::from_path(&d.field);
                let show = |v: &serde_json::Value| match v {
                    serde_json::Value::Null => ctx.tr(Key::cmp_default).to_owned(),
                    serde_json::Value::Object(_) => ctx.tr(Key::cmp_custom).to_owned(),
                    v => messages::value_text(lang, field, v),
                };
                let cells = d.values.iter().map(|v| view! { <td>{show(v)}</td> }).collect_view();
                let label = field
                    .map(|f| messages::field_label(lang, f))
                    .filter(|label| *label != d.field)
                    .map(|label| view! { {label}<br /> });
                view! {
                    <tr>
                        <th scope="row" data-field=d.field.clone()>{label}<code>{d.field.clone()}</code></th>
                        {cells}
                    </tr>
                }
            })
            .collect::<Vec<_>>()
    };
    let diff_head = move || {
        let t = table.get()?;
        let cells = (0..t.columns())
            .map(|col| view! { <th scope="col">{t.label(ctx.lang(), col)}</th> })
            .collect_view();
        Some(view! { <tr><th scope="col">{ctx.tr(Key::cmp_setting)}</th>{cells}</tr> })
    };
    view! {
        <Show when=move || table.with(|t| t.as_ref().is_some_and(|t| !t.comparison.differences.is_empty()))>
            <h3>{move || ctx.tr(Key::cmp_differences)}</h3>
            <div class="table-scroll">
                <table class="compare-table compare-diff" data-testid="compare-differences">
                    <thead>{diff_head}</thead>
                    <tbody>{differences}</tbody>
                </table>
            </div>
        </Show>
    }
}

/// The findings not every plan has, a line per plan.
#[component]
fn Distinct(
    /// The comparison shown.
    table: Memo<Option<Table>>,
) -> impl IntoView {
    let ctx = use_results();
    let distinct = move || {
        let Some(t) = table.get() else { return Vec::new() };
        let lang = ctx.lang();
        t.comparison
            .distinct
            .iter()
            .enumerate()
            .filter(|(_, found)| !found.is_empty())
            .map(|(col, found)| {
                let text = found.iter().map(|f| messages::finding(lang, f)).collect::<Vec<_>>().join(" ");
                view! {
                    <p class="muted" data-testid=format!("compare-distinct-{col}")>
                        <strong>{t.label(ctx.lang(), col)}</strong>": "{text}
                    </p>
                }
            })
            .collect::<Vec<_>>()
    };
    view! {
        <Show when=move || table.with(|t| t.as_ref().is_some_and(|t| t.comparison.distinct.iter().any(|d| !d.is_empty())))>
            <h3>{move || ctx.tr(Key::cmp_distinct)}</h3>
            {distinct}
        </Show>
    }
}
