//! Memory per device: a stacked bar per pipeline stage against the capacity line, a legend, exact
//! figures on hover, whether it fits, host memory for offload, and RL phases.

use leptos::prelude::*;
use trainplan_core::Report;

use crate::chart::{self, Term};
use crate::components::use_tr;
use crate::format;
use crate::i18n::{Key, fill};

/// Whether the plan fits, in words, and the badge class that colours it (the chart's badge and the
/// results' summary line say it the same way).
pub fn fits(
    tr: impl Fn(Key) -> &'static str,
    m: &trainplan_core::report::MemoryReport,
) -> (&'static str, String) {
    let (peak, usable) = (format::gib(m.peak_bytes), format::gib(m.usable_bytes));
    let args = [("peak", peak.as_str()), ("usable", usable.as_str())];
    match m.fits {
        true => ("badge ok", fill(tr(Key::mem_fits), &args)),
        false => ("badge bad", fill(tr(Key::mem_does_not_fit), &args)),
    }
}

const WIDTH: f64 = 640.0;
const HEIGHT: f64 = 240.0;
const LEFT: f64 = 56.0;
const BOTTOM: f64 = 22.0;
const TOP: f64 = 8.0;

/// The words for a term.
fn term_key(term: Term) -> Key {
    match term {
        Term::Weights => Key::mem_weights,
        Term::Gradients => Key::mem_gradients,
        Term::Optimizer => Key::mem_optimizer,
        Term::Activations => Key::mem_activations,
        Term::Logits => Key::mem_logits,
        Term::Buffers => Key::mem_buffers,
        Term::Overhead => Key::mem_overhead,
        Term::Reference => Key::mem_reference,
        Term::Critic => Key::mem_critic,
        Term::Engine => Key::mem_engine,
    }
}

/// The words for an RL phase.
fn phase_key(phase: &str) -> Key {
    match phase {
        "rollout" => Key::mem_phase_rollout,
        "log_prob" => Key::mem_phase_log_prob,
        _ => Key::mem_phase_update,
    }
}

/// The memory panel.
#[component]
pub fn MemoryPanel(
    /// The report.
    #[prop(into)]
    report: Signal<Option<Report>>,
) -> impl IntoView {
    let tr = use_tr();
    let memory = move || report.with(|r| r.as_ref().map(|r| r.memory.clone()));
    let chart = move || memory().map(|m| chart::memory_chart(&m));
    let plot_h = HEIGHT - BOTTOM - TOP;
    let y = move |frac: f64| TOP + plot_h * (1.0 - frac);
    let bars = move || {
        let Some(chart) = chart() else { return Vec::new() };
        let n = chart.bars.len().max(1) as f64;
        let slot = (WIDTH - LEFT - 8.0) / n;
        let bar_w = (slot * 0.7).min(90.0);
        chart
            .bars
            .into_iter()
            .enumerate()
            .map(|(idx, bar)| {
                let x = LEFT + slot * idx as f64 + (slot - bar_w) / 2.0;
                let segments = bar
                    .segments
                    .into_iter()
                    .map(|s| {
                        let title = format!("{}: {}", tr(term_key(s.term)), format::gib(s.bytes));
                        view! {
                            <rect
                                class=s.term.class()
                                x=format!("{x:.1}")
                                y=format!("{:.1}", y(s.bottom_frac + s.height_frac))
                                width=format!("{bar_w:.1}")
                                height=format!("{:.2}", plot_h * s.height_frac)
                            >
                                <title>{title}</title>
                            </rect>
                        }
                    })
                    .collect_view();
                let mut label = match bar.label {
                    chart::BarLabel::Stage(n) => fill(tr(Key::mem_stage), &[("n", &n.to_string())]),
                    chart::BarLabel::Phase(phase) => tr(phase_key(phase)).to_owned(),
                };
                if bar.peak && 1 < n as usize {
                    label = fill(tr(Key::mem_peak_label), &[("what", &label)]);
                }
                view! {
                    <g class:over=bar.over class:peak=bar.peak data-testid="memory-bar">
                        {segments}
                        <text class="axis" x=format!("{:.1}", x + bar_w / 2.0) y=format!("{:.1}", HEIGHT - 6.0) text-anchor="middle">
                            {label}
                        </text>
                    </g>
                }
            })
            .collect::<Vec<_>>()
    };
    // The capacity label sits above its line, the usable label below its own, so they never overlap.
    let line = move |frac: f64, class: &'static str, label: String, above: bool| {
        let label_y = if above { y(frac) - 4.0 } else { y(frac) + 12.0 };
        view! {
            <g class=class>
                <line x1=LEFT x2=WIDTH - 4.0 y1=format!("{:.1}", y(frac)) y2=format!("{:.1}", y(frac)) />
                <text x=WIDTH - 6.0 y=format!("{label_y:.1}") text-anchor="end">{label}</text>
            </g>
        }
    };
    let lines = move || {
        let (Some(chart), Some(m)) = (chart(), memory()) else { return None };
        Some(view! {
            {line(chart.capacity_frac, "capacity", fill(tr(Key::mem_capacity_line), &[("bytes", &format::gib(m.capacity_bytes))]), true)}
            {line(chart.usable_frac, "usable", fill(tr(Key::mem_usable_line), &[("bytes", &format::gib(m.usable_bytes))]), false)}
        })
    };
    let axis = move || {
        chart().map(|c| {
            (0..=4)
                .map(|i| {
                    let frac = i as f64 / 4.0;
                    let bytes = (c.scale_bytes as f64 * frac) as u64;
                    view! {
                        <text class="axis" x=LEFT - 6.0 y=format!("{:.1}", y(frac) + 4.0) text-anchor="end">
                            {format!("{:.0}", bytes as f64 / (1u64 << 30) as f64)}
                        </text>
                    }
                })
                .collect_view()
        })
    };
    // The legend names what the bars hold: with RL phases, the reference, critic and engine too.
    let legend = move || {
        let terms: Vec<Term> = match memory().is_some_and(|m| !m.phases.is_empty()) {
            true => Term::PHASE.to_vec(),
            false => Term::ALL.to_vec(),
        };
        terms
            .into_iter()
            .map(|term| {
                view! {
                    <li>
                        <span class=format!("swatch {}", term.class())></span>
                        {move || tr(term_key(term))}
                    </li>
                }
            })
            .collect_view()
    };
    let badge = move || {
        memory().map(|m| {
            let (class, text) = fits(tr, &m);
            view! { <p class=class data-testid="memory-fits">{text}</p> }
        })
    };
    let host = move || {
        memory().filter(|m| 0 < m.host_bytes_per_node).map(|m| {
            view! {
                <p class="muted" data-testid="memory-host">
                    {fill(tr(Key::mem_host), &[("bytes", &format::gib(m.host_bytes_per_node))])}
                </p>
            }
        })
    };
    let phases = move || {
        memory().filter(|m| !m.phases.is_empty()).map(|m| {
            let items = m
                .phases
                .iter()
                .map(|p| {
                    let key = phase_key(p.phase);
                    let peak = p.peak.then(|| tr(Key::mem_peak_phase));
                    view! { <li class:peak=p.peak>{tr(key)} ": " <strong>{format::gib(p.total)}</strong> " " {peak}</li> }
                })
                .collect_view();
            view! { <ul class="phases" data-testid="memory-phases">{items}</ul> }
        })
    };
    let rollout = move || {
        memory().and_then(|m| m.rollout).map(|r| {
            let args = [
                ("engine", format::gib(r.engine_bytes)),
                ("weights", format::gib(r.weights_bytes)),
                ("kv", format::gib(r.kv_cache_bytes)),
                ("needed", format::gib(r.kv_cache_needed_bytes)),
            ];
            let args: Vec<(&str, &str)> = args.iter().map(|(k, v)| (*k, v.as_str())).collect();
            let short = r.kv_cache_bytes < r.kv_cache_needed_bytes;
            view! {
                <p class="muted" data-testid="memory-rollout">{fill(tr(Key::mem_rollout), &args)}</p>
                <Show when=move || short>
                    <p class="note">{move || tr(Key::mem_rollout_short)}</p>
                </Show>
            }
        })
    };
    let table = move || {
        memory().map(|m| {
            let rows = m
                .stages
                .iter()
                .map(|s| {
                    let cells = Term::ALL.into_iter().map(|t| view! { <td class="num">{format::gib(t.of(s))}</td> }).collect_view();
                    view! {
                        <tr>
                            <th scope="row">{fill(tr(Key::mem_stage), &[("n", &s.stage.to_string())])}</th>
                            {cells}
                            <td class="num"><strong>{format::gib(s.total)}</strong></td>
                        </tr>
                    }
                })
                .collect_view();
            let heads = Term::ALL.into_iter().map(|t| view! { <th scope="col" class="num">{tr(term_key(t))}</th> }).collect_view();
            view! {
                <table class="breakdown stages" data-testid="memory-stages">
                    <thead><tr><th></th>{heads}<th scope="col" class="num">{tr(Key::mem_total)}</th></tr></thead>
                    <tbody>{rows}</tbody>
                </table>
            }
        })
    };

    view! {
        <h2>{move || tr(Key::mem_title)}</h2>
        {badge}
        <figure class="chart" data-testid="memory-chart">
            <svg viewBox=format!("0 0 {WIDTH} {HEIGHT}") role="img" aria-label=move || tr(Key::mem_title)>
                <text class="axis" x="4" y="12">"GiB"</text>
                {axis}
                {bars}
                {lines}
            </svg>
            <ul class="legend">{legend}</ul>
        </figure>
        {host}
        {phases}
        {rollout}
        <div class="table-scroll">{table}</div>
    }
}
