//! The search's plans on a canvas drawn by plotters: peak memory per device against throughput,
//! the Pareto front as a line, the fastest plan dark; the point nearest the pointer read out, and
//! every point as a table.

use leptos::prelude::*;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use crate::chart::palette;
use crate::chart::{Scatter, ScatterPoint};
use crate::components::chart_canvas::{
    AXIS, Frame, GRID, LABEL_CSS_PX, MUTED, PlotBox, color, draw_on, on_screen, pointer_at,
};
use crate::components::chart_figure::{ChartData, Hover, HoverCanvas};
use crate::components::{use_lang, use_tr};
use crate::format;
use crate::i18n::{Key, Lang, fill, t};

/// How far from a point the pointer still picks it, CSS pixels.
const PICK_CSS: f64 = 16.0;
/// The axes reach a little past the largest point, so that no dot is cut by the plot's edge.
const ROOM_X: f64 = 1.03;
/// The speed axis's room above the fastest plan.
const ROOM_Y: f64 = 1.08;

/// A point in words: its peak, its speed, and whether it is on the front or among the fastest.
fn describe(lang: Lang, p: &ScatterPoint) -> String {
    let mut res = fill(
        t(lang, Key::search_point),
        &[
            ("peak", &format::gib(p.peak_bytes)),
            ("speed", &format::count_short(p.tokens_per_second as u64, lang)),
        ],
    );
    if let Some(rank) = p.rank {
        res.push_str(" · ");
        res.push_str(&fill(t(lang, Key::search_point_rank), &[("n", &(rank + 1).to_string())]));
    }
    if p.front {
        res.push_str(" · ");
        res.push_str(t(lang, Key::search_point_front));
    }
    res
}

/// The search's scatter chart.
#[component]
pub fn ParetoChart(
    /// The chart's points, or none before a search.
    #[prop(into)]
    scatter: Signal<Option<Scatter>>,
) -> impl IntoView {
    let tr = use_tr();
    let lang = use_lang();
    let hover = Hover::default();
    draw_on(
        hover.canvas,
        on_screen(hover.canvas),
        move || {
            scatter.track();
            lang.track();
        },
        |width| if width < 480.0 { 230.0 } else { 260.0 },
        move |frame| {
            let drawn =
                scatter.with_untracked(|s| s.as_ref().and_then(|s| draw(frame, s, lang.get_untracked())));
            if let Some(drawn) = drawn {
                hover.plot.set_value(drawn);
            }
        },
    );
    // The point nearest the pointer, if near enough.
    let on_move = move |ev: leptos::ev::PointerEvent| {
        let Some((x, y)) = pointer_at(&ev) else { return };
        let b = hover.plot.get_value();
        let nearest = scatter.with_untracked(|s| {
            let s = s.as_ref()?;
            let distance = |p: &ScatterPoint| {
                let (px, py) =
                    (b.left + p.x_frac / ROOM_X * b.width, b.top + (1.0 - p.y_frac / ROOM_Y) * b.height);
                ((px - x).powi(2) + (py - y).powi(2)).sqrt()
            };
            let (idx, d) = s.points.iter().map(distance).enumerate().min_by(|a, b| a.1.total_cmp(&b.1))?;
            (d <= PICK_CSS).then_some(idx)
        });
        hover.hovered.set(nearest);
    };
    let readout = move || {
        let idx = hover.hovered.get()?;
        scatter.with(|s| s.as_ref()?.points.get(idx).map(|p| describe(lang.get(), p)))
    };
    let rows = move || {
        scatter.with(|s| {
            s.as_ref().map(|s| {
                s.points
                    .iter()
                    .map(|p| {
                        let front = p.front.then_some("✓");
                        let rank = p.rank.map(|r| (r + 1).to_string());
                        view! {
                            <tr>
                                <td class="num">{format::gib(p.peak_bytes)}</td>
                                <td class="num">{format::count_short(p.tokens_per_second as u64, lang.get())}</td>
                                <td>{front}</td>
                                <td class="num">{rank}</td>
                            </tr>
                        }
                    })
                    .collect_view()
            })
        })
    };
    view! {
        <figure class="chart canvas-chart" data-testid="search-chart">
            <HoverCanvas hover=hover label=Key::search_chart on_move=on_move readout_testid="search-readout" readout=readout />
            <ChartData>
                <table class="breakdown" data-testid="search-chart-data">
                    <thead>
                        <tr>
                            <th scope="col" class="num">{move || tr(Key::search_axis_peak)}</th>
                            <th scope="col" class="num">{move || tr(Key::search_axis_speed)}</th>
                            <th scope="col">{move || tr(Key::search_point_front)}</th>
                            <th scope="col" class="num">"#"</th>
                        </tr>
                    </thead>
                    <tbody>{rows}</tbody>
                </table>
            </ChartData>
        </figure>
    }
}

/// Draws the axes, the front and the points; returns the plot's box.
fn draw(frame: &Frame, s: &Scatter, lang: Lang) -> Option<PlotBox> {
    // Peak memory in GiB along x.
    let (max_x, max_y) = (format::in_gib(s.max_bytes), s.max_tokens_per_second);
    let mut plot = ChartBuilder::on(&frame.root)
        .margin_top(frame.px(22.0))
        .margin_right(frame.px(14.0))
        .x_label_area_size(frame.px(40.0))
        .y_label_area_size(frame.px(58.0))
        .build_cartesian_2d(0.0..max_x * ROOM_X, 0.0..max_y * ROOM_Y)
        .ok()?;
    let font = frame.font(LABEL_CSS_PX, MUTED);
    let n_x = ((frame.width_css - 72.0) / 90.0).clamp(2.0, 8.0) as usize;
    plot.configure_mesh()
        .x_labels(n_x)
        .y_labels(5)
        .x_label_formatter(&|gib| format::tick(*gib))
        .y_label_formatter(&|tps| format::count_short(tps.max(0.0) as u64, lang))
        .x_label_style(font.clone())
        .y_label_style(font.clone())
        .x_desc(format!("{} ({})", t(lang, Key::search_axis_peak), format::GIB))
        .axis_desc_style(font.clone())
        .bold_line_style(GRID)
        .light_line_style(TRANSPARENT)
        .axis_style(AXIS)
        .draw()
        .ok()?;
    let area = plot.plotting_area();
    let point = |p: &ScatterPoint| (p.x_frac * max_x, p.y_frac * max_y);
    let blue = color(palette::FRONT);
    let front: Vec<(f64, f64)> = s.points.iter().filter(|p| p.front).map(point).collect();
    let _ = area.draw(&PathElement::new(front, blue.stroke_width(frame.px(1.5) as u32)));
    let radius = frame.px(5.0).max(2) as u32;
    for p in &s.points {
        let fill = match (p.rank == Some(0), p.front) {
            (true, _) => color(palette::DEEP),
            (false, true) => color(palette::LIGHT),
            (false, false) => color(palette::PALE),
        };
        let _ = area.draw(&Circle::new(point(p), radius, fill.filled()));
        let _ = area.draw(&Circle::new(point(p), radius, blue.stroke_width(frame.px(1.0) as u32)));
    }
    // The speed axis's name, above its labels.
    let style = font.pos(Pos::new(HPos::Left, VPos::Top));
    let _ =
        frame.root.draw(&Text::new(t(lang, Key::search_axis_speed), (frame.px(2.0), frame.px(0.0)), style));
    Some(PlotBox::of(frame, area.get_pixel_range()))
}
