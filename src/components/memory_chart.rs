//! Memory per device: a stacked bar per pipeline stage (or per RL phase) against the capacity and
//! usable lines, drawn on a canvas by plotters; a legend, the figures under the pointer, the same
//! figures as a table, whether it fits, host memory for offload, and RL phases.

use leptos::prelude::*;
use trainplan_core::report::MemoryReport;

use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use crate::chart::{self, BarLabel, Term, palette};
use crate::components::chart_canvas::{
    Frame, INK, LABEL_CSS_PX, PlotBox, color, draw_on, gib_chart_height, gib_plot, on_screen, pointer_at,
    text_width_css,
};
use crate::components::chart_figure::{ChartData, Hover, HoverCanvas};
use crate::components::results::use_results;
use crate::format;
use crate::i18n::{Key, Lang, fill, t};

/// Whether the plan fits, in words, and the badge class that colours it (the chart's badge and the
/// results' summary line say it the same way).
pub fn fits(lang: Lang, m: &MemoryReport) -> (&'static str, String) {
    let (peak, usable) = (format::gib(m.peak_bytes), format::gib(m.usable_bytes));
    let args = [("peak", peak.as_str()), ("usable", usable.as_str())];
    match m.fits {
        true => ("badge ok", fill(t(lang, Key::mem_fits), &args)),
        false => ("badge bad", fill(t(lang, Key::mem_does_not_fit), &args)),
    }
}

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
pub fn MemoryPanel() -> impl IntoView {
    let ctx = use_results();
    // The memory section alone: a plan that changes only the step time (or only the micro-batch
    // count, which this panel does not show) redraws nothing here.
    let memory = Memo::new_with_compare(
        move |_| ctx.report.with(|r| r.as_ref().map(|r| r.memory.clone())),
        |old, new| !matches!((old, new), (Some(old), Some(new)) if same_shown(old, new)),
    );
    let hover = Hover::default();
    draw_on(
        hover.canvas,
        on_screen(hover.canvas),
        move || {
            memory.track();
            ctx.lang.track();
        },
        gib_chart_height,
        move |frame| {
            let drawn = memory.with_untracked(|m| {
                let m = m.as_ref()?;
                draw(frame, &chart::memory_chart(m), m, ctx.lang.get_untracked())
            });
            if let Some(drawn) = drawn {
                hover.plot.set_value(drawn);
            }
        },
    );
    let on_move = move |ev: leptos::ev::PointerEvent| {
        let Some((x, _)) = pointer_at(&ev) else { return };
        let n = memory.with_untracked(|m| m.as_ref().map(|m| chart::memory_chart(m).bars.len()));
        let b = hover.plot.get_value();
        hover.hovered.set(chart::slot_at(x, b.left, b.width, n.unwrap_or(0)));
    };
    let readout = move || {
        let idx = hover.hovered.get()?;
        let m = memory.get()?;
        let c = chart::memory_chart(&m);
        let bar = c.bars.get(idx)?;
        let parts: Vec<String> = bar
            .segments
            .iter()
            .map(|s| format!("{} {}", ctx.tr(term_key(s.term)), format::gib(s.bytes)))
            .collect();
        Some(fill(
            ctx.tr(Key::mem_chart_readout),
            &[
                ("what", &bar_label(ctx.lang.get_untracked(), bar, c.bars.len())),
                ("parts", &parts.join(" · ")),
                ("total", &format::gib(bar.total)),
            ],
        ))
    };
    // A memo, so that the legend is built again only when its terms change, not on every edit.
    let shown_terms = Memo::new(move |_| memory.with(|m| m.as_ref().map_or(&Term::ALL[..], terms)));
    let legend = move || {
        shown_terms
            .get()
            .iter()
            .map(|&term| {
                view! {
                    <li>
                        <span class="swatch" style=format!("background: {}", chart::css(term.rgb()))></span>
                        {move || ctx.tr(term_key(term))}
                    </li>
                }
            })
            .collect_view()
    };
    let badge = move || {
        memory.with(|m| {
            m.as_ref().map(|m| {
                let (class, text) = fits(ctx.lang(), m);
                view! { <p class=class data-testid="memory-fits">{text}</p> }
            })
        })
    };

    view! {
        <h2>{move || ctx.tr(Key::mem_title)}</h2>
        {badge}
        <figure class="chart canvas-chart" data-testid="memory-chart">
            <HoverCanvas hover=hover label=Key::mem_title on_move=on_move readout_testid="memory-readout" readout=readout />
            <ul class="legend">{legend}</ul>
            <ChartData><div class="table-scroll"><BarTable memory=memory /></div></ChartData>
        </figure>
        <MemoryNotes memory=memory />
        <StageTable memory=memory />
    }
}

/// Whether two memory sections show alike here: equal but for the micro-batch count.
fn same_shown(a: &Option<MemoryReport>, b: &Option<MemoryReport>) -> bool {
    match (a, b) {
        (Some(a), Some(b)) if a.n_microbatches == b.n_microbatches => a == b,
        (Some(a), Some(b)) => MemoryReport { n_microbatches: b.n_microbatches, ..a.clone() } == *b,
        (None, None) => true,
        _ => false,
    }
}

/// What the bars hold, in words: with RL phases, the reference, critic and engine too.
fn terms(m: &MemoryReport) -> &'static [Term] {
    match m.phases.is_empty() {
        true => &Term::ALL,
        false => &Term::PHASE,
    }
}

/// A bar's name as the readout and the table give it: the peak's marked where there are several.
fn bar_label(lang: Lang, bar: &chart::Bar, n_bars: usize) -> String {
    let label = bar_name(lang, bar.label);
    match bar.peak && 1 < n_bars {
        true => fill(t(lang, Key::mem_peak_label), &[("what", &label)]),
        false => label,
    }
}

/// The chart's figures as a table: a row per bar, each term's bytes, the total, and whether it is
/// over.
#[component]
fn BarTable(
    /// The report's memory section.
    memory: Memo<Option<MemoryReport>>,
) -> impl IntoView {
    let ctx = use_results();
    move || {
        let m = memory.get()?;
        let c = chart::memory_chart(&m);
        let terms = terms(&m);
        let heads = terms
            .iter()
            .map(|t| view! { <th scope="col" class="num">{ctx.tr(term_key(*t))}</th> })
            .collect_view();
        let n = c.bars.len();
        let rows = c
            .bars
            .iter()
            .map(|bar| {
                let cells = terms
                    .iter()
                    .map(|term| {
                        let bytes = bar.segments.iter().find(|s| s.term == *term).map_or(0, |s| s.bytes);
                        view! { <td class="num">{format::gib(bytes)}</td> }
                    })
                    .collect_view();
                let over = bar.over.then(|| ctx.tr(Key::mem_chart_over));
                view! {
                    <tr data-testid="memory-bar" class:peak=bar.peak data-total-bytes=bar.total.to_string()>
                        <th scope="row">{bar_label(ctx.lang(), bar, n)}</th>
                        {cells}
                        <td class="num"><strong>{format::gib(bar.total)}</strong></td>
                        <td>{over}</td>
                    </tr>
                }
            })
            .collect_view();
        let caption = fill(
            ctx.tr(Key::mem_chart_caption),
            &[("capacity", &format::gib(m.capacity_bytes)), ("usable", &format::gib(m.usable_bytes))],
        );
        Some(view! {
            <table class="breakdown stages" data-testid="memory-chart-data">
                <caption data-testid="memory-chart-lines">{caption}</caption>
                <thead><tr><th scope="col">{ctx.tr(Key::mem_chart_col)}</th>{heads}<th scope="col" class="num">{ctx.tr(Key::mem_total)}</th><th></th></tr></thead>
                <tbody>{rows}</tbody>
            </table>
        })
    }
}

/// Below the chart: host memory and NVMe for offload, the RL phases' peaks and the rollout engine's share.
#[component]
fn MemoryNotes(
    /// The report's memory section.
    memory: Memo<Option<MemoryReport>>,
) -> impl IntoView {
    let ctx = use_results();
    let memory = move || memory.get();
    // What a node keeps off the devices: host memory, and NVMe where DeepSpeed swaps to it.
    let node_bytes = move |key: Key, testid: &'static str, bytes: fn(&MemoryReport) -> u64| {
        move || {
            memory().map(|m| bytes(&m)).filter(|&b| 0 < b).map(|b| {
                view! { <p class="muted" data-testid=testid>{fill(ctx.tr(key), &[("bytes", &format::gib(b))])}</p> }
            })
        }
    };
    let host = node_bytes(Key::mem_host, "memory-host", |m| m.host_bytes_per_node);
    let nvme = node_bytes(Key::mem_nvme, "memory-nvme", |m| m.nvme_bytes_per_node);
    let phases = move || {
        memory().filter(|m| !m.phases.is_empty()).map(|m| {
            let items = m
                .phases
                .iter()
                .map(|p| {
                    let key = phase_key(p.phase);
                    let peak = p.peak.then(|| ctx.tr(Key::mem_peak_phase));
                    view! { <li class:peak=p.peak>{ctx.tr(key)} ": " <strong>{format::gib(p.total)}</strong> " " {peak}</li> }
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
                <p class="muted" data-testid="memory-rollout">{fill(ctx.tr(Key::mem_rollout), &args)}</p>
                <Show when=move || short>
                    <p class="note">{move || ctx.tr(Key::mem_rollout_short)}</p>
                </Show>
            }
        })
    };
    // Where the terms were taken, when the step's allocations are known moment by moment: the
    // gradients and logits shown are that moment's.
    let moment = move || {
        let key = memory().and_then(|m| m.peak_moment).and_then(|moment| match moment {
            "forward" => Some(Key::mem_moment_forward),
            "loss_backward" => Some(Key::mem_moment_loss_backward),
            "backward_end" => Some(Key::mem_moment_backward_end),
            "layer_backward" => Some(Key::mem_moment_layer_backward),
            _ => None,
        });
        key.map(|key| {
            view! { <p class="muted" data-testid="memory-moment">{ctx.tr(key)}</p> }
        })
    };
    view! {
        {moment}
        {host}
        {nvme}
        {phases}
        {rollout}
    }
}

/// Memory per stage by term, as a table: figures in GiB, the unit in its caption, so that every
/// term and the total fit beside the chart at 1,280 px.
#[component]
fn StageTable(
    /// The report's memory section.
    memory: Memo<Option<MemoryReport>>,
) -> impl IntoView {
    let ctx = use_results();
    let memory = move || memory.get();
    let table = move || {
        memory().map(|m| {
            let rows = m
                .stages
                .iter()
                .map(|s| {
                    // No attribute on the cells (the table's class aligns them): a rebuilt
                    // element sets every attribute again, and this table is rebuilt on every edit.
                    let cells = Term::ALL.into_iter().map(|t| view! { <td>{format::gib_figure(t.of(s))}</td> }).collect_view();
                    view! {
                        <tr>
                            <th scope="row">{fill(ctx.tr(Key::mem_stage), &[("n", &s.stage.to_string())])}</th>
                            {cells}
                            <td><strong>{format::gib_figure(s.total)}</strong></td>
                        </tr>
                    }
                })
                .collect_view();
            let heads = Term::ALL.into_iter().map(|t| view! { <th scope="col">{ctx.tr(term_key(t))}</th> }).collect_view();
            view! {
                <table class="breakdown stages figures" data-testid="memory-stages">
                    <caption>{ctx.tr(Key::mem_stages_caption)}</caption>
                    <thead><tr><th></th>{heads}<th scope="col">{ctx.tr(Key::mem_total)}</th></tr></thead>
                    <tbody>{rows}</tbody>
                </table>
            }
        })
    };
    view! { <div class="table-scroll">{table}</div> }
}

/// A bar's name: its stage, or its RL phase.
fn bar_name(lang: Lang, label: BarLabel) -> String {
    match label {
        BarLabel::Stage(n) => fill(t(lang, Key::mem_stage), &[("n", &n.to_string())]),
        BarLabel::Phase(phase) => t(lang, phase_key(phase)).to_owned(),
    }
}

/// A bar's name under the axis, short: its stage, or its RL phase as the timeline's lanes name it.
fn axis_name(lang: Lang, label: BarLabel) -> String {
    let key = match label {
        BarLabel::Stage(_) => return bar_name(lang, label),
        BarLabel::Phase("rollout") => Key::tl_lane_rollout,
        BarLabel::Phase("log_prob") => Key::tl_lane_log_prob,
        BarLabel::Phase(_) => Key::tl_lane_update,
    };
    t(lang, key).to_owned()
}

/// Draws the chart; returns the plot's box for the pointer.
fn draw(frame: &Frame, c: &chart::MemoryChart, m: &MemoryReport, lang: Lang) -> Option<PlotBox> {
    let n = c.bars.len().max(1);
    // The axis counts GiB; the bars' fractions scale to its top.
    let top = format::in_gib(c.scale_bytes);
    let plot = gib_plot(frame, -0.5..n as f64 - 0.5, top, 36.0)?;
    let area = plot.plotting_area();
    let (x_range, _) = area.get_pixel_range();
    let slot_px = f64::from(x_range.end - x_range.start) / n as f64;
    // Bars 70 % of their slot, at most 90 CSS pixels wide.
    let half = (0.35_f64).min(45.0 * frame.scale / slot_px.max(1.0));
    for (idx, bar) in c.bars.iter().enumerate() {
        let x = idx as f64;
        for s in &bar.segments {
            let (bottom, height) = (s.bottom_frac * top, s.height_frac * top);
            let rect = Rectangle::new(
                [(x - half, bottom), (x + half, bottom + height)],
                color(s.term.rgb()).filled(),
            );
            let _ = area.draw(&rect);
        }
        let total = format::in_gib(bar.total);
        if bar.over || bar.peak {
            let edge = color(if bar.over { palette::RED } else { palette::INK });
            let outline =
                Rectangle::new([(x - half, 0.0), (x + half, total)], edge.stroke_width(frame.px(1.5) as u32));
            let _ = area.draw(&outline);
        }
    }
    // Capacity (dashed, red) above its line, usable (dotted, amber) below its own: never overlapping.
    let lines = [
        (c.capacity_frac, m.capacity_bytes, Key::mem_capacity_line, color(palette::RED), true),
        (c.usable_frac, m.usable_bytes, Key::mem_usable_line, color(palette::AMBER), false),
    ];
    for (frac, bytes, key, line_color, above) in lines {
        let y = frac * top;
        let (dash, gap) = if above { (0.12, 0.06) } else { (0.05, 0.05) };
        let mut x = -0.5;
        while x < n as f64 - 0.5 {
            let end = (x + dash * n as f64 / 4.0).min(n as f64 - 0.5);
            let _ = area.draw(&PathElement::new(
                vec![(x, y), (end, y)],
                line_color.stroke_width(frame.px(1.5) as u32),
            ));
            x = end + gap * n as f64 / 4.0;
        }
        let (px, py) = area.map_coordinate(&(n as f64 - 0.5, y));
        let anchor = if above { VPos::Bottom } else { VPos::Top };
        let style = frame.font(LABEL_CSS_PX, line_color).pos(Pos::new(HPos::Right, anchor));
        let text = fill(t(lang, key), &[("bytes", &format::gib(bytes))]);
        let dy = if above { -frame.px(2.0) } else { frame.px(2.0) };
        // On a white ground, so that bars behind it do not cross it.
        let (w, h) = (frame.px(text_width_css(&text, LABEL_CSS_PX)), frame.px(LABEL_CSS_PX + 3.0));
        let (x1, y0) = (px - frame.px(1.0), if above { py + dy - h } else { py + dy });
        let ground = RGBAColor(255, 255, 255, 0.85).filled();
        let _ = frame.root.draw(&Rectangle::new([(x1 - w - frame.px(3.0), y0), (x1, y0 + h)], ground));
        let _ = frame.root.draw(&Text::new(text, (px - frame.px(2.0), py + dy), style));
    }
    // A name under each bar, the peak marked on a second line; as many names as fit side by side
    // (every k-th when the stages are many).
    let (_, bottom) = area.map_coordinate(&(0.0, 0.0));
    let names: Vec<String> = c.bars.iter().map(|bar| axis_name(lang, bar.label)).collect();
    let widest = names.iter().map(|n| text_width_css(n, LABEL_CSS_PX)).fold(0.0, f64::max);
    let every = ((widest + 4.0) * frame.scale / slot_px.max(1.0)).ceil().max(1.0) as usize;
    for (idx, (bar, name)) in c.bars.iter().zip(names).enumerate() {
        let (px, _) = area.map_coordinate(&(idx as f64, 0.0));
        let style = frame.font(LABEL_CSS_PX, INK).pos(Pos::new(HPos::Center, VPos::Top));
        if idx % every == 0 {
            let _ = frame.root.draw(&Text::new(name, (px, bottom + frame.px(5.0)), style.clone()));
        }
        if bar.peak && 1 < c.bars.len() {
            let at = (px, bottom + frame.px(6.0 + LABEL_CSS_PX));
            let _ = frame.root.draw(&Text::new(t(lang, Key::mem_chart_peak), at, style));
        }
    }
    Some(PlotBox::of(frame, area.get_pixel_range()))
}
