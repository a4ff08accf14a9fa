//! Where the step's time goes (`Report.time.breakdown`): a horizontal bar per cause on a canvas
//! drawn by plotters, each with its time and share; the cause under the pointer, and the same
//! figures as a table.

use leptos::prelude::*;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use crate::chart::{self, Cause, CauseBar};
use crate::components::chart_canvas::{
    Frame, INK, LABEL_CSS_PX, MUTED, PlotBox, color, draw_on, on_screen, pointer_at,
};
use crate::components::chart_figure::{ChartData, Hover, HoverCanvas};
use crate::components::results::use_results;
use crate::format;
use crate::i18n::{Key, Lang, fill, t};

/// A row's height, CSS pixels.
const ROW_CSS: f64 = 22.0;

/// The words for a cause.
fn cause_key(cause: Cause) -> Key {
    match cause {
        Cause::Compute => Key::bd_compute,
        Cause::Recompute => Key::bd_recompute,
        Cause::Memory => Key::bd_memory,
        Cause::Tp => Key::bd_tp,
        Cause::Cp => Key::bd_cp,
        Cause::Ep => Key::bd_ep,
        Cause::Pp => Key::bd_pp,
        Cause::Bubble => Key::bd_bubble,
        Cause::Dp => Key::bd_dp,
        Cause::Optimizer => Key::bd_optimizer,
        Cause::Offload => Key::bd_offload,
        Cause::Rollout => Key::bd_rollout,
        Cause::LogProb => Key::bd_log_prob,
        Cause::Critic => Key::bd_critic,
        Cause::WeightSync => Key::bd_weight_sync,
    }
}

/// A bar's figures: its time and its share.
fn figures(bar: &CauseBar) -> String {
    format!("{} · {}", format::seconds(bar.seconds), format::percent(bar.frac))
}

/// The breakdown chart.
#[component]
pub fn BreakdownChart() -> impl IntoView {
    let ctx = use_results();
    let bars = move || {
        ctx.report.with(|r| r.as_ref().map(|r| chart::breakdown(&r.time.breakdown)).unwrap_or_default())
    };
    let hover = Hover::default();
    draw_on(
        hover.canvas,
        on_screen(hover.canvas),
        move || {
            ctx.report.track();
            ctx.lang.track();
        },
        move |_| {
            let n = ctx
                .report
                .with_untracked(|r| r.as_ref().map_or(0, |r| chart::breakdown(&r.time.breakdown).len()));
            n as f64 * ROW_CSS + 8.0
        },
        move |frame| {
            let bars = ctx.report.with_untracked(|r| r.as_ref().map(|r| chart::breakdown(&r.time.breakdown)));
            if let Some(drawn) = bars.and_then(|bars| draw(frame, &bars, ctx.lang.get_untracked())) {
                hover.plot.set_value(drawn);
            }
        },
    );
    let on_move = move |ev: leptos::ev::PointerEvent| {
        let Some((_, y)) = pointer_at(&ev) else { return };
        let b = hover.plot.get_value();
        let n = ctx
            .report
            .with_untracked(|r| r.as_ref().map_or(0, |r| chart::breakdown(&r.time.breakdown).len()));
        hover.hovered.set(chart::slot_at(y, b.top, b.height, n));
    };
    let readout = move || {
        let bars = bars();
        let bar = bars.get(hover.hovered.get()?)?;
        Some(fill(
            ctx.tr(Key::bd_readout),
            &[
                ("cause", ctx.tr(cause_key(bar.cause))),
                ("time", &format::seconds(bar.seconds)),
                ("share", &format::percent(bar.frac)),
            ],
        ))
    };
    let rows = move || {
        bars()
            .into_iter()
            .map(|bar| {
                view! {
                    <tr>
                        <th scope="row">{ctx.tr(cause_key(bar.cause))}</th>
                        <td class="num">{format::seconds(bar.seconds)}</td>
                        <td class="num">{format::percent(bar.frac)}</td>
                    </tr>
                }
            })
            .collect_view()
    };
    // Where the pipeline has a bubble: whose view the causes are, as the timeline's title averages
    // the stages' idle time instead.
    let piped = move || bars().iter().any(|b| b.cause == Cause::Bubble);
    view! {
        <h3>{move || ctx.tr(Key::bd_title)}</h3>
        <figure class="chart canvas-chart" data-testid="breakdown-chart">
            <HoverCanvas hover=hover label=Key::bd_title on_move=on_move readout_testid="breakdown-readout" readout=readout />
            <Show when=piped>
                <p class="muted" data-testid="breakdown-note">{move || ctx.tr(Key::bd_busiest_note)}</p>
            </Show>
            <ChartData>
                <table class="breakdown" data-testid="time-breakdown">
                    <thead>
                        <tr>
                            <th scope="col">{move || ctx.tr(Key::bd_col_cause)}</th>
                            <th scope="col" class="num">{move || ctx.tr(Key::tl_col_duration)}</th>
                            <th scope="col" class="num">{move || ctx.tr(Key::bd_col_share)}</th>
                        </tr>
                    </thead>
                    <tbody>{rows}</tbody>
                </table>
            </ChartData>
        </figure>
    }
}

/// Draws the bars: names on the left, figures on the right; returns the plot's box.
fn draw(frame: &Frame, bars: &[CauseBar], lang: Lang) -> Option<PlotBox> {
    let n = bars.len().max(1);
    let max = bars.iter().map(|b| b.seconds).fold(0.0, f64::max).max(f64::MIN_POSITIVE);
    // Names take up to 40 % of a narrow chart, 170 CSS pixels of a wide one.
    let names_css = (frame.width_css * 0.4).clamp(90.0, 170.0);
    let plot = ChartBuilder::on(&frame.root)
        .margin_top(frame.px(4.0))
        .margin_bottom(frame.px(4.0))
        .margin_right(frame.px(96.0))
        .y_label_area_size(frame.px(names_css))
        .build_cartesian_2d(0.0..max, 0.0..n as f64)
        .ok()?;
    let area = plot.plotting_area();
    for (idx, bar) in bars.iter().enumerate() {
        // Row 0 at the top.
        let y = (n - 1 - idx) as f64;
        let _ = area
            .draw(&Rectangle::new([(0.0, y + 0.2), (bar.seconds, y + 0.8)], color(bar.cause.rgb()).filled()));
        let (x_end, y_mid) = area.map_coordinate(&(bar.seconds, y + 0.5));
        let (x0, _) = area.map_coordinate(&(0.0, y + 0.5));
        let name = frame.font(LABEL_CSS_PX, INK).pos(Pos::new(HPos::Right, VPos::Center));
        let _ = frame.root.draw(&Text::new(t(lang, cause_key(bar.cause)), (x0 - frame.px(6.0), y_mid), name));
        let value = frame.font(LABEL_CSS_PX, MUTED).pos(Pos::new(HPos::Left, VPos::Center));
        let _ = frame.root.draw(&Text::new(figures(bar), (x_end + frame.px(5.0), y_mid), value));
    }
    Some(PlotBox::of(frame, area.get_pixel_range()))
}
