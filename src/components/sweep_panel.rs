//! The sweep table: for 1, 2, 4 … nodes and the plan's own, the longest sequence and the largest
//! micro-batch that fit in memory, with their speed. Computed when asked (a button), never on a
//! keystroke.

use leptos::prelude::*;
use trainplan_core::Plan;
use trainplan_core::sweep::{self, Fit, Sweep, SweepRow};

use crate::components::results::use_results;
use crate::format;
use crate::i18n::{Key, fill};

/// The sweep panel.
#[component]
pub fn SweepPanel() -> impl IntoView {
    let ctx = use_results();
    // The last sweep and the plan it was computed for.
    let result: RwSignal<Option<(Plan, Sweep)>> = RwSignal::new(None);
    let run = move |_| {
        let Ok(p) = ctx.plan.get_untracked() else { return };
        let s = sweep::sweep(&p, sweep::DEFAULT_MAX_NODES);
        result.set(Some((p, s)));
    };
    let stale =
        move || result.with(|r| r.as_ref().is_some_and(|(p, _)| ctx.plan.with(|now| now.as_ref() != Ok(p))));
    let cell = move |fit: &Option<Fit>, row: &SweepRow| match (fit, row.layout_fits, row.batch_fits) {
        (_, false, _) => view! { <td class="muted">{ctx.tr(Key::sweep_layout)}</td> }.into_any(),
        (_, true, false) => view! { <td class="muted">{ctx.tr(Key::sweep_batch)}</td> }.into_any(),
        (None, true, true) => view! { <td class="muted">{ctx.tr(Key::sweep_none)}</td> }.into_any(),
        (Some(f), true, true) => {
            let value = match f.capped {
                true => format!("≥ {}", format::count(u64::from(f.value))),
                false => format::count(u64::from(f.value)),
            };
            let speed = fill(
                ctx.tr(Key::sweep_speed),
                &[
                    ("step", &format::seconds(f.step_seconds)),
                    ("tokens", &format::count_short(f.tokens_per_second as u64, ctx.lang())),
                ],
            );
            view! {
                <td class="num">
                    <strong>{value}</strong>
                    // A line per figure, each kept whole ("每步 4.97 s", not "每步 4.97 / s").
                    {speed.split(" · ").map(|part| view! { <span class="sweep-speed">{part.to_owned()}</span> }).collect_view()}
                    <span class="sweep-speed">{format::gib(f.peak_bytes)}</span>
                </td>
            }
            .into_any()
        }
    };
    let table = move || {
        result.with(|r| {
            let (_, s) = r.as_ref()?;
            let rows = s
                .rows
                .iter()
                .map(|row| {
                    // A row the layout or the batch rules out says so once, across both columns.
                    let cells = match (row.layout_fits, row.batch_fits, s.seq_len_applies) {
                        (false, _, _) => view! { <td class="muted" colspan="2">{ctx.tr(Key::sweep_layout)}</td> }.into_any(),
                        (true, false, _) => view! { <td class="muted" colspan="2">{ctx.tr(Key::sweep_batch)}</td> }.into_any(),
                        (true, true, true) => view! { {cell(&row.seq_len, row)} {cell(&row.micro_batch, row)} }.into_any(),
                        (true, true, false) => {
                            view! { <td class="muted">"–"</td> {cell(&row.micro_batch, row)} }.into_any()
                        }
                    };
                    view! {
                        <tr class:current=row.current>
                            <th scope="row" class="num">
                                {format::count(u64::from(row.nodes))}
                                {row.current.then(|| view! { <span class="sweep-speed">{ctx.tr(Key::sweep_current)}</span> })}
                            </th>
                            <td class="num">{format::count(row.n_devices)}</td>
                            {cells}
                        </tr>
                    }
                })
                .collect::<Vec<_>>();
            let rl_note = (!s.seq_len_applies).then(|| view! { <p class="explain">{ctx.tr(Key::sweep_rl)}</p> });
            Some(view! {
                <div class="sweep-scroll">
                    <table class="breakdown sweep" data-testid="sweep-table">
                        <thead>
                            <tr>
                                <th scope="col" class="num">{ctx.tr(Key::sweep_col_nodes)}</th>
                                <th scope="col" class="num">{ctx.tr(Key::sweep_col_devices)}</th>
                                <th scope="col" class="num">{ctx.tr(Key::sweep_col_seq)}</th>
                                <th scope="col" class="num">{ctx.tr(Key::sweep_col_mbs)}</th>
                            </tr>
                        </thead>
                        <tbody>{rows}</tbody>
                    </table>
                </div>
                {rl_note}
            })
        })
    };
    view! {
        <h2>{move || ctx.tr(Key::sweep_title)}</h2>
        <p class="explain">{move || ctx.tr(Key::sweep_hint)}</p>
        <div class="row">
            <button data-testid="sweep-run" disabled=move || ctx.plan.with(Result::is_err) on:click=run>
                {move || ctx.tr(Key::sweep_run)}
            </button>
        </div>
        <Show when=stale>
            <p class="muted" data-testid="sweep-stale">{move || ctx.tr(Key::sweep_stale)}</p>
        </Show>
        <div class:stale=stale>{table}</div>
    }
}
