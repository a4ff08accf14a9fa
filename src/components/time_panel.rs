//! Speed: step time, throughput, MFU and HFU, where the time goes, and the pipeline schedule as a
//! Gantt chart (ranks as rows, passes as bars, idle time visible between them).

use leptos::prelude::*;
use trainplan_core::Report;

use crate::chart;
use crate::components::{use_lang, use_tr};
use crate::format;
use crate::i18n::{Key, fill};

const WIDTH: f64 = 640.0;
const LEFT: f64 = 56.0;
const ROW: f64 = 18.0;

/// The speed panel.
#[component]
pub fn TimePanel(
    /// The report.
    #[prop(into)]
    report: Signal<Option<Report>>,
) -> impl IntoView {
    let tr = use_tr();
    let lang = use_lang();
    let time = move || report.with(|r| r.as_ref().map(|r| r.time.clone()));
    let facts = move || {
        time().map(|t| {
            let per_device = fill(
                tr(Key::time_per_device),
                &[("n", &format::count_short(t.tokens_per_second_per_device as u64, lang.get()))],
            );
            view! {
                <dl class="facts">
                    <div><dt>{tr(Key::time_step)}</dt><dd data-testid="step-time">{format::seconds(t.step_seconds)}</dd></div>
                    <div>
                        <dt>{tr(Key::time_tokens)}</dt>
                        <dd data-testid="tokens-per-second">
                            {format::count_short(t.tokens_per_second as u64, lang.get())}
                            <span class="muted">" · " {per_device}</span>
                        </dd>
                    </div>
                    <div><dt>{tr(Key::time_mfu)}</dt><dd data-testid="mfu">{format::percent(t.mfu)}</dd></div>
                    <div><dt>{tr(Key::time_hfu)}</dt><dd data-testid="hfu">{format::percent(t.hfu)}</dd></div>
                    <div><dt>{tr(Key::time_days)}</dt><dd>{format!("{:.1}", t.days_per_trillion_tokens)}</dd></div>
                </dl>
            }
        })
    };
    let breakdown = move || {
        time().map(|t| {
            let b = &t.breakdown;
            let items = [
                (Key::bd_compute, b.compute_seconds, "b-compute"),
                (Key::bd_recompute, b.recompute_seconds, "b-recompute"),
                (Key::bd_memory, b.memory_bound_seconds, "b-memory"),
                (Key::bd_tp, b.tp_comm_seconds, "b-comm"),
                (Key::bd_cp, b.cp_comm_seconds, "b-comm"),
                (Key::bd_ep, b.ep_comm_seconds, "b-comm"),
                (Key::bd_pp, b.pp_comm_seconds, "b-comm"),
                (Key::bd_bubble, b.bubble_seconds, "b-bubble"),
                (Key::bd_dp, b.dp_comm_seconds, "b-dp"),
                (Key::bd_optimizer, b.optimizer_seconds, "b-optimizer"),
                (Key::bd_offload, b.offload_seconds, "b-offload"),
                (Key::bd_rollout, b.rollout_seconds, "b-rollout"),
                (Key::bd_log_prob, b.log_prob_seconds, "b-recompute"),
            ];
            let total: f64 = items.iter().map(|(_, s, _)| s).sum::<f64>().max(f64::MIN_POSITIVE);
            items
                .into_iter()
                .filter(|(_, s, _)| 0.0 < *s)
                .map(|(key, s, class)| {
                    let width = format!("width: {:.1}%", 100.0 * s / total);
                    view! {
                        <li>
                            <span class="bd-label">{tr(key)}</span>
                            <span class="bd-track"><span class=format!("bd-bar {class}") style=width></span></span>
                            <span class="bd-value">{format::seconds(s)}</span>
                        </li>
                    }
                })
                .collect_view()
        })
    };
    // The bar under the pointer, described below the chart (one handler for the whole chart
    // instead of a title on each of up to 4,000 bars).
    let hovered: RwSignal<Option<String>> = RwSignal::new(None);
    let gantt = move || {
        report.with(|r| {
            r.as_ref().map(|r| {
                let g = chart::gantt(&r.schedule);
                let has_w = g.bars.iter().any(|b| b.pass == "W");
                let height = f64::from(g.n_rows) * ROW + 20.0;
                let plot = WIDTH - LEFT - 4.0;
                let [forward, backward, weight] = chart::gantt_paths(&g, LEFT, plot, ROW);
                // Micro-batch numbers on the bars wide enough to hold them.
                let labels = g
                    .bars
                    .iter()
                    .filter(|bar| 14.0 <= plot * bar.width_frac)
                    .map(|bar| {
                        let x = LEFT + plot * bar.x_frac + plot * bar.width_frac / 2.0;
                        let y = f64::from(bar.row) * ROW + 2.0 + ROW * 0.62;
                        view! {
                            <text class="g-label" x=format!("{x:.1}") y=format!("{y:.1}") text-anchor="middle">
                                {bar.microbatch.to_string()}
                            </text>
                        }
                    })
                    .collect_view();
                let rows = (0..g.n_rows)
                    .map(|row| {
                        let y = f64::from(row) * ROW + 2.0;
                        view! {
                            <rect class="g-row" x=LEFT y=format!("{y:.1}") width=plot height=format!("{:.1}", ROW - 4.0) />
                            <text class="axis" x=LEFT - 6.0 y=format!("{:.1}", y + ROW * 0.62) text-anchor="end">
                                {fill(tr(Key::mem_stage), &[("n", &row.to_string())])}
                            </text>
                        }
                    })
                    .collect_view();
                let span = format::seconds(g.span_seconds);
                let title = fill(
                    tr(Key::gantt_title),
                    &[("name", r.schedule.name), ("bubble", &format::percent(r.schedule.bubble_fraction))],
                );
                let note = (u64::from(g.n_microbatches_shown) < r.schedule.n_microbatches).then(|| {
                    fill(
                        tr(Key::gantt_note),
                        &[("shown", &g.n_microbatches_shown.to_string()), ("total", &r.schedule.n_microbatches.to_string())],
                    )
                });
                let on_move = move |ev: leptos::ev::MouseEvent| {
                    use wasm_bindgen::JsCast;
                    let Some(svg) = ev.current_target().and_then(|t| t.dyn_into::<web_sys::Element>().ok()) else {
                        return;
                    };
                    let rect = svg.get_bounding_client_rect();
                    if rect.width() <= 0.0 || rect.height() <= 0.0 {
                        return;
                    }
                    let x = (f64::from(ev.client_x()) - rect.left()) / rect.width() * WIDTH;
                    let y = (f64::from(ev.client_y()) - rect.top()) / rect.height() * height;
                    let row = ((y - 2.0) / ROW).floor();
                    let bar = (0.0 <= row)
                        .then(|| chart::gantt_bar_at(&g, row as u32, (x - LEFT) / plot))
                        .flatten()
                        .map(|i| &g.bars[i]);
                    hovered.set(bar.map(|bar| {
                        fill(
                            tr(Key::gantt_hover),
                            &[
                                ("stage", &bar.row.to_string()),
                                ("chunk", &bar.chunk.to_string()),
                                ("mb", &bar.microbatch.to_string()),
                                ("pass", bar.pass),
                                ("ms", &format!("{:.2}", bar.seconds * 1e3)),
                            ],
                        )
                    }));
                };
                view! {
                    <h3 data-testid="gantt-title">{title.clone()}</h3>
                    <figure class="chart gantt" data-testid="gantt">
                        <svg viewBox=format!("0 0 {WIDTH} {height:.0}") role="img" aria-label=title
                            on:mousemove=on_move on:mouseleave=move |_| hovered.set(None)>
                            {rows}
                            <path class="g-f" d=forward />
                            <path class="g-b" d=backward />
                            <path class="g-w" d=weight />
                            {labels}
                            <text class="axis" x=WIDTH - 4.0 y=format!("{:.1}", height - 4.0) text-anchor="end">{span}</text>
                        </svg>
                        <ul class="legend">
                            <li><span class="swatch g-f"></span>{tr(Key::gantt_forward)}</li>
                            <li><span class="swatch g-b"></span>{tr(Key::gantt_backward)}</li>
                            {has_w.then(|| view! { <li><span class="swatch g-w"></span>{tr(Key::gantt_weight)}</li> })}
                        </ul>
                        <p class="muted gantt-hover" data-testid="gantt-hover" aria-live="polite">{move || hovered.get()}</p>
                    </figure>
                    <p class="muted">{note}</p>
                }
            })
        })
    };

    view! {
        <h2>{move || tr(Key::time_title)}</h2>
        {facts}
        <ul class="breakdown-bars" data-testid="time-breakdown">{breakdown}</ul>
        {gantt}
    }
}
