//! The comparison's memory per pipeline stage on a canvas drawn by plotters: a group of bars per
//! stage, one per plan in its colour, a bar above its plan's usable memory outlined red, and a
//! dashed line per device memory the plans run on; the stage under the pointer read out, and the
//! figures as a table. The geometry is `crate::compare_chart`'s.

use leptos::prelude::*;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use crate::chart::{Rgb, palette};
use crate::compare_chart::{StageBars, stage_bars};
use crate::components::chart_canvas::{
    Frame, INK, LABEL_CSS_PX, PlotBox, color, draw_on, gib_chart_height, gib_plot, on_screen, pointer_at,
    text_width_css,
};
use crate::components::chart_figure::{ChartData, Hover, HoverCanvas};
use crate::components::compare_panel::Table;
use crate::components::results::use_results;
use crate::format;
use crate::i18n::{Key, Lang, fill, t};

/// Each column's colour, by its tone (the current plan 0, pin n n): the `.tone-n` swatches of
/// style/main.css.
const TONES: [Rgb; 5] = [palette::NAVY, palette::ORANGE, palette::TEAL, palette::PURPLE, palette::BRICK];

/// The chart's bars and the comparison they come from.
#[derive(Clone, Debug, PartialEq)]
struct Shown {
    table: Table,
    bars: StageBars,
}

/// The comparison's memory per stage.
#[component]
pub fn StageBarsChart(
    /// The comparison shown.
    table: Memo<Option<Table>>,
) -> impl IntoView {
    let ctx = use_results();
    let shown = Memo::new(move |_| {
        table.with(|t| {
            let table = t.clone()?;
            let bars = stage_bars(&table.comparison, &table.capacity_bytes, &table.usable_bytes);
            Some(Shown { table, bars })
        })
    });
    let hover = Hover::default();
    draw_on(
        hover.canvas,
        on_screen(hover.canvas),
        move || {
            shown.track();
            ctx.lang.track();
        },
        gib_chart_height,
        move |frame| {
            let drawn = shown.with_untracked(|s| draw(frame, s.as_ref()?, ctx.lang.get_untracked()));
            if let Some(drawn) = drawn {
                hover.plot.set_value(drawn);
            }
        },
    );
    let on_move = move |ev: leptos::ev::PointerEvent| {
        let Some((x, _)) = pointer_at(&ev) else { return };
        let n = shown.with_untracked(|s| s.as_ref().map_or(0, |s| s.bars.groups.len()));
        let b = hover.plot.get_value();
        hover.hovered.set(crate::chart::slot_at(x, b.left, b.width, n));
    };
    let readout = move || {
        let idx = hover.hovered.get()?;
        shown.with(|s| {
            let s = s.as_ref()?;
            let group = s.bars.groups.get(idx)?;
            let lang = ctx.lang();
            let bars: Vec<String> = group
                .bars
                .iter()
                .map(|b| format!("{} {}", s.table.label(lang, b.plan), bar_figure(lang, b)))
                .collect();
            Some(fill(
                t(lang, Key::cmp_stage_readout),
                &[("n", &group.stage.to_string()), ("bars", &bars.join(" · "))],
            ))
        })
    };
    let legend = move || {
        shown.with(|s| {
            let s = s.as_ref()?;
            let items = (0..s.table.columns())
                .map(|col| {
                    view! { <li><span class=format!("swatch {}", s.table.tone(col))></span>{s.table.label(ctx.lang(), col)}</li> }
                })
                .collect_view();
            Some(items)
        })
    };
    view! {
        <figure class="chart canvas-chart" data-testid="compare-chart">
            <HoverCanvas hover=hover label=Key::cmp_chart_label on_move=on_move readout_testid="compare-readout" readout=readout />
            <ul class="legend">
                {legend}
                <li class="muted">{move || ctx.tr(Key::cmp_stage_axis)}</li>
            </ul>
            <ChartData><div class="table-scroll"><StageTable shown=shown /></div></ChartData>
        </figure>
    }
}

/// A bar's figure in words: its bytes, and whether they are above its plan's usable memory.
fn bar_figure(lang: Lang, bar: &crate::compare_chart::Bar) -> String {
    match bar.over {
        true => fill(t(lang, Key::cmp_over_usable), &[("bytes", &format::gib(bar.bytes))]),
        false => format::gib(bar.bytes),
    }
}

/// The chart's figures: a row per stage, a column per plan (a dash where the plan has no such
/// stage).
#[component]
fn StageTable(shown: Memo<Option<Shown>>) -> impl IntoView {
    let ctx = use_results();
    move || {
        shown.with(|s| {
            let s = s.as_ref()?;
            let lang = ctx.lang();
            let heads = (0..s.table.columns())
                .map(|col| view! { <th scope="col" class="num">{s.table.label(lang, col)}</th> })
                .collect_view();
            let rows =
                s.bars
                    .groups
                    .iter()
                    .map(|g| {
                        let cells = (0..s.table.columns())
                            .map(|col| match g.bars.iter().find(|b| b.plan == col) {
                                Some(b) => view! { <td class="num" data-plan=col>{bar_figure(lang, b)}</td> }
                                    .into_any(),
                                None => view! { <td class="num">"—"</td> }.into_any(),
                            })
                            .collect_view();
                        let stage = fill(t(lang, Key::cmp_stage_n), &[("n", &g.stage.to_string())]);
                        view! { <tr data-testid="compare-stage"><th scope="row">{stage}</th>{cells}</tr> }
                    })
                    .collect_view();
            Some(view! {
                <table class="breakdown stages" data-testid="compare-chart-data">
                    <thead><tr><th scope="col">{t(lang, Key::cmp_stage)}</th>{heads}</tr></thead>
                    <tbody>{rows}</tbody>
                </table>
            })
        })
    }
}

/// Draws the bars, the device memories and the stages' names; the plot's box, for the pointer.
fn draw(frame: &Frame, s: &Shown, lang: Lang) -> Option<PlotBox> {
    let b = &s.bars;
    // The axis counts GiB; the bars' fractions scale to its top.
    let top = format::in_gib(b.scale_bytes);
    let plot = gib_plot(frame, 0.0..1.0, top, 24.0)?;
    let area = plot.plotting_area();
    for g in &b.groups {
        for bar in &g.bars {
            let tone = s.table.tone_index(bar.plan);
            let corners = [(bar.x_frac, 0.0), (bar.x_frac + bar.width_frac, bar.height_frac * top)];
            let _ = area.draw(&Rectangle::new(corners, color(TONES[tone % TONES.len()]).filled()));
            if bar.over {
                let edge = color(palette::RED).stroke_width(frame.px(1.5) as u32);
                let _ = area.draw(&Rectangle::new(corners, edge));
            }
        }
    }
    // Each device memory, dashed, its name above the line on a white ground (bars behind it do not
    // cross it); highest first, and a name that would meet the one above it goes below its line.
    let line_color = color(palette::RED);
    let h = frame.px(LABEL_CSS_PX + 3.0);
    let mut taken_to: Option<i32> = None;
    for line in b.lines.iter().rev() {
        let y = line.y_frac * top;
        let mut x = 0.0;
        while x < 1.0 {
            let end = (x + 0.02_f64).min(1.0);
            let _ = area.draw(&PathElement::new(
                vec![(x, y), (end, y)],
                line_color.stroke_width(frame.px(1.5) as u32),
            ));
            x = end + 0.012;
        }
        let (px, py) = area.map_coordinate(&(1.0, y));
        let gap = frame.px(2.0);
        let above = taken_to.is_none_or(|taken| taken <= py - gap - h);
        let (anchor, text_y, y0) = match above {
            true => (VPos::Bottom, py - gap, py - gap - h),
            false => (VPos::Top, py + gap, py + gap),
        };
        let text = fill(t(lang, Key::cmp_capacity), &[("bytes", &format::gib(line.bytes))]);
        let w = frame.px(text_width_css(&text, LABEL_CSS_PX));
        let x1 = px - frame.px(1.0);
        let ground = RGBAColor(255, 255, 255, 0.85).filled();
        let _ = frame.root.draw(&Rectangle::new([(x1 - w - frame.px(3.0), y0), (x1, y0 + h)], ground));
        let style = frame.font(LABEL_CSS_PX, line_color).pos(Pos::new(HPos::Right, anchor));
        let _ = frame.root.draw(&Text::new(text, (px - gap, text_y), style));
        taken_to = Some(py.max(y0 + h));
    }
    // The stages' names under their groups, every k-th where they are many.
    let (_, bottom) = area.map_coordinate(&(0.0, 0.0));
    let style = frame.font(LABEL_CSS_PX, INK).pos(Pos::new(HPos::Center, VPos::Top));
    for g in b.groups.iter().filter(|g| g.labelled) {
        let (px, _) = area.map_coordinate(&(g.centre_frac, 0.0));
        let _ = frame.root.draw(&Text::new(g.stage.to_string(), (px, bottom + frame.px(5.0)), style.clone()));
    }
    Some(PlotBox::of(frame, area.get_pixel_range()))
}

#[cfg(test)]
mod tests {
    use super::TONES;

    /// The legend's swatches (style/main.css `.tone-n`) are the bars' colours.
    #[test]
    fn the_legends_swatches_are_the_bars_colours() {
        let css = include_str!("../../style/main.css");
        for (n, (r, g, b)) in TONES.iter().enumerate() {
            let rule = format!(".tone-{n} {{ background: #{r:02x}{g:02x}{b:02x}; }}");
            assert!(css.contains(&rule), "style/main.css lacks `{rule}`");
        }
    }
}
