//! The whole step along its time axis (`trainplan_core::step_timeline`), on a canvas drawn by
//! plotters: with RL a lane each for rollout, log-prob and update, else a lane for the step's parts;
//! then a lane per pipeline stage with every pass of every micro-batch (forward, backward and
//! weight passes in their colours, each model chunk a shade; idle time, the bubble, left empty).
//! Zoom (buttons, Ctrl + wheel, pinch) and pan (drag, horizontal wheel) within the step; "whole
//! step" resets. The pass or part under the pointer is read out below; the window shown and the
//! step's parts are text too, for screen readers and tests.

use std::sync::Arc;

use leptos::prelude::*;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use trainplan_core::schedule::Pass;
use trainplan_core::step_timeline;
use trainplan_core::time::StepPart;

use crate::chart::{self, LaneLabel, PassStyle, TimelineChart, Window, palette};
use crate::components::chart_canvas::{
    AXIS, Frame, INK, LABEL_CSS_PX, MUTED, PlotBox, Raster, draw_on, on_screen, pointer_at, text_width_css,
};
use crate::components::chart_figure::ChartData;
use crate::components::results::use_results;
use crate::format;
use crate::i18n::{Key, Lang, fill, t};

/// A phase lane's height, CSS pixels.
const PHASE_LANE_CSS: f64 = 18.0;
/// The labels' column, CSS pixels.
const LABELS_CSS: f64 = 84.0;
/// The time axis below the lanes, CSS pixels.
const AXIS_CSS: f64 = 24.0;
/// The gap between the phase lanes and the stages' lanes, and above the lanes.
const GAP_CSS: f64 = 6.0;

/// A stage lane's height for `n` stages: 16 CSS pixels, less for deep pipelines (at least 3).
fn rank_lane_css(n: usize) -> f64 {
    (288.0 / n.max(1) as f64).clamp(3.0, 16.0)
}

/// Each lane's top and bottom, CSS pixels from the canvas's top.
fn lane_rows(labels: impl Iterator<Item = LaneLabel> + Clone) -> Vec<(f64, f64)> {
    let n_ranks = labels.clone().filter(|l| matches!(l, LaneLabel::Rank(_))).count();
    let rank_h = rank_lane_css(n_ranks);
    let mut y = GAP_CSS;
    let mut res = Vec::new();
    let mut after_phases = false;
    for label in labels {
        let h = match label {
            LaneLabel::Rank(_) => {
                if !after_phases {
                    y += GAP_CSS;
                    after_phases = true;
                }
                rank_h
            }
            _ => PHASE_LANE_CSS,
        };
        res.push((y, y + h));
        y += h;
    }
    res
}

/// The lanes of a chart.
fn labels(chart: &TimelineChart) -> impl Iterator<Item = LaneLabel> + Clone + '_ {
    chart.lanes.iter().map(|l| l.label)
}

/// The canvas's height for these lanes.
fn height_css(labels: impl Iterator<Item = LaneLabel> + Clone) -> f64 {
    lane_rows(labels).last().map_or(0.0, |r| r.1) + AXIS_CSS
}

/// The words for a lane.
fn lane_name(lang: Lang, label: LaneLabel) -> String {
    match label {
        LaneLabel::Rollout => t(lang, Key::tl_lane_rollout).to_owned(),
        LaneLabel::LogProb => t(lang, Key::tl_lane_log_prob).to_owned(),
        LaneLabel::Update => t(lang, Key::tl_lane_update).to_owned(),
        LaneLabel::Step => t(lang, Key::tl_lane_step).to_owned(),
        LaneLabel::Rank(n) => fill(t(lang, Key::mem_stage), &[("n", &n.to_string())]),
    }
}

/// A lane's key in the text table (`data-lane`).
fn lane_id(label: LaneLabel) -> &'static str {
    match label {
        LaneLabel::Rollout => "rollout",
        LaneLabel::LogProb => "log_prob",
        LaneLabel::Update => "update",
        LaneLabel::Step => "step",
        LaneLabel::Rank(_) => "stage",
    }
}

/// The words for a part of the step.
fn part_key(part: StepPart) -> Key {
    match part {
        StepPart::Rollout => Key::bd_rollout,
        StepPart::LogProb => Key::bd_log_prob,
        StepPart::Critic => Key::bd_critic,
        StepPart::Pipeline => Key::tl_part_pipeline,
        StepPart::GradientSync => Key::bd_dp,
        StepPart::Optimizer => Key::bd_optimizer,
        StepPart::Offload => Key::bd_offload,
        StepPart::WeightSync => Key::bd_weight_sync,
    }
}

/// A part's key in the text table (`data-part`).
fn part_id(part: StepPart) -> &'static str {
    match part {
        StepPart::Rollout => "rollout",
        StepPart::LogProb => "log_prob",
        StepPart::Critic => "critic",
        StepPart::Pipeline => "pipeline",
        StepPart::GradientSync => "gradient_sync",
        StepPart::Optimizer => "optimizer",
        StepPart::Offload => "offload",
        StepPart::WeightSync => "weight_sync",
    }
}

/// The words for a pass.
fn pass_key(pass: Pass) -> Key {
    match pass {
        Pass::F => Key::gantt_forward,
        Pass::B => Key::gantt_backward,
        Pass::W => Key::gantt_weight,
    }
}

/// The timeline chart: the canvas, the zoom bar above it, the readout, legend, notes and table below.
#[component]
pub fn StepTimelineChart() -> impl IntoView {
    let ctx = use_results();
    let canvas = NodeRef::<leptos::html::Canvas>::new();
    let shown = on_screen(canvas);
    // The whole step, simulated once per plan while the chart is on screen or near it (the pass by
    // pass simulation of a large plan costs more than the rest of a keystroke's redraw); off screen
    // it keeps the last, and catches up when it comes near.
    let whole = Memo::new(move |last: Option<&Option<Arc<TimelineChart>>>| match (shown.get(), last) {
        (false, Some(last)) => last.clone(),
        _ => ctx.plan.with(|p| p.as_ref().ok().map(|p| Arc::new(chart::timeline_chart(step_timeline(p))))),
    });
    let lanes = Memo::new(move |_| {
        ctx.report.with(|r| r.as_ref().map(|r| chart::report_lanes(r).collect::<Vec<_>>()))
    });
    let step = Step { whole, zoom: RwSignal::new(None), lang: ctx.lang };
    let pointer = Pointer {
        step,
        plot: StoredValue::new(PlotBox::default()),
        gesture: StoredValue::new(Gesture::default()),
        readout: RwSignal::new(None),
    };
    draw_on(
        canvas,
        shown,
        move || {
            whole.track();
            lanes.track();
            step.zoom.track();
            ctx.lang.track();
        },
        // The lanes of the plan now, drawn or not: off screen the chart keeps its place in the page.
        move |_| lanes.with_untracked(|l| l.as_ref().map_or(60.0, |l| height_css(l.iter().copied()))),
        move |frame| {
            let Some(c) = whole.get_untracked() else { return };
            if let Some(drawn) = draw(frame, &c, step.window_of(&c), ctx.lang.get_untracked()) {
                pointer.plot.set_value(drawn);
            }
        },
    );
    view! {
        <figure class="chart canvas-chart timeline" data-testid="gantt">
            <ZoomBar step=step />
            <canvas node_ref=canvas role="img" aria-label=move || ctx.tr(Key::gantt_title)
                on:pointerdown=move |ev| pointer.down(&ev) on:pointermove=move |ev| pointer.moved(&ev)
                on:pointerup=move |ev| pointer.up(&ev) on:pointercancel=move |ev| pointer.up(&ev)
                on:pointerleave=move |_| pointer.leave() on:wheel=move |ev| pointer.wheel(&ev)></canvas>
            <p class="chart-readout muted" data-testid="gantt-hover" aria-live="polite">
                {move || pointer.readout.get().unwrap_or_else(|| ctx.tr(Key::tl_hint).to_owned())}
            </p>
            <ul class="legend">{step.view(legend)}</ul>
            {step.view(notes)}
            <ChartData><div class="table-scroll">{step.view(table)}</div></ChartData>
        </figure>
    }
}

/// The whole step and the window of it shown.
#[derive(Clone, Copy)]
struct Step {
    /// The whole step's chart, once per plan.
    whole: Memo<Option<Arc<TimelineChart>>>,
    /// The window shown; `None` is the whole step, whatever its length.
    zoom: RwSignal<Option<Window>>,
    /// The language its words are in.
    lang: RwSignal<Lang>,
}

impl Step {
    /// The window of `c` shown, untracked.
    fn window_of(self, c: &TimelineChart) -> Window {
        let all = Window::whole(c.step_seconds);
        self.zoom.get_untracked().map_or(all, |w| w.inside(all))
    }

    /// The window shown, untracked; `None` without a plan.
    fn window_untracked(self) -> Option<Window> {
        self.whole.with_untracked(|c| c.as_ref().map(|c| self.window_of(c)))
    }

    /// Shows `from` zoomed by `factor` about `anchor_frac` of it (the whole step again when that
    /// covers it).
    fn zoom_from(self, from: Window, factor: f64, anchor_frac: f64) {
        let Some(all) = self.whole.with_untracked(|c| c.as_ref().map(|c| Window::whole(c.step_seconds)))
        else {
            return;
        };
        let next = from.zoom(factor, anchor_frac, all);
        self.zoom.set((next != all).then_some(next));
    }

    /// Zooms the window shown by `factor` about `anchor_frac` of it.
    fn zoom_by(self, factor: f64, anchor_frac: f64) {
        if let Some(from) = self.window_untracked() {
            self.zoom_from(from, factor, anchor_frac);
        }
    }

    /// Shows `from` moved by `delta_frac` of its span, within the step.
    fn pan_from(self, from: Window, delta_frac: f64) {
        let Some(all) = self.whole.with_untracked(|c| c.as_ref().map(|c| Window::whole(c.step_seconds)))
        else {
            return;
        };
        let next = from.pan(delta_frac, all);
        self.zoom.set((next != all).then_some(next));
    }

    /// A view of the whole step in the page's language, rebuilt when either changes (nothing
    /// without a plan).
    fn view<V>(
        self,
        part: impl Fn(&TimelineChart, Lang) -> Option<V> + Copy + Send + Sync + 'static,
    ) -> impl Fn() -> Option<V> + Copy + Send + Sync + 'static {
        move || self.whole.with(|c| part(c.as_ref()?, self.lang.get()))
    }
}

/// Pointers down on the chart (for drag and pinch): each pointer's id and x, and the window and
/// positions when the gesture began.
#[derive(Clone, Debug, Default)]
struct Gesture {
    pointers: Vec<(i32, f64)>,
    start: Option<(Window, Vec<(i32, f64)>)>,
    moved: bool,
}

/// What the canvas's pointer handlers share: the step and its zoom, the plot's box as last drawn,
/// the gesture under way (drag, pinch) and the readout of what lies under the pointer.
#[derive(Clone, Copy)]
struct Pointer {
    step: Step,
    plot: StoredValue<PlotBox>,
    gesture: StoredValue<Gesture>,
    readout: RwSignal<Option<String>>,
}

impl Pointer {
    /// Reads out what lies under a point: a pass, idle time, or a part of the step.
    fn read_out(self, x: f64, y: f64) {
        let text = self.step.whole.get_untracked().and_then(|c| {
            let window = self.step.window_of(&c);
            describe(&c, self.plot.get_value(), window, self.step.lang.get_untracked(), x, y)
        });
        self.readout.set(text);
    }

    /// A pointer down: held by the canvas until it is up, and a gesture starting from the window
    /// shown.
    fn down(self, ev: &leptos::ev::PointerEvent) {
        let Some((x, y)) = pointer_at(ev) else { return };
        if let Some(target) = ev.current_target() {
            use wasm_bindgen::JsCast;
            if let Ok(el) = target.dyn_into::<web_sys::Element>() {
                let _ = el.set_pointer_capture(ev.pointer_id());
            }
        }
        let current = self.step.window_untracked();
        self.gesture.update_value(|g| {
            g.pointers.retain(|p| p.0 != ev.pointer_id());
            g.pointers.push((ev.pointer_id(), x));
            g.start = current.map(|w| (w, g.pointers.clone()));
            g.moved = false;
        });
        self.read_out(x, y);
    }

    /// A pointer moved: two fingers down pinch, one drags, none reads out what is under it.
    fn moved(self, ev: &leptos::ev::PointerEvent) {
        let Some((x, y)) = pointer_at(ev) else { return };
        let mut g = self.gesture.get_value();
        let Some(p) = g.pointers.iter_mut().find(|p| p.0 == ev.pointer_id()) else {
            self.read_out(x, y);
            return;
        };
        p.1 = x;
        let plot = self.plot.get_value();
        let width = plot.width.max(1.0);
        if let Some((from, at_start)) = g.start.clone() {
            match (g.pointers.as_slice(), at_start.as_slice()) {
                // Two fingers: the window scales by how far apart they moved, about their middle.
                ([a, b], [a0, b0]) => {
                    let (now, then) = ((a.1 - b.1).abs(), (a0.1 - b0.1).abs());
                    if 8.0 < now && 8.0 < then {
                        let mid = ((a0.1 + b0.1) / 2.0 - plot.left) / width;
                        self.step.zoom_from(from, then / now, mid);
                        g.moved = true;
                    }
                }
                // One: the step moves with it.
                ([a], [a0]) => {
                    let dx = a.1 - a0.1;
                    if g.moved || 3.0 < dx.abs() {
                        g.moved = true;
                        self.step.pan_from(from, -dx / width);
                    }
                }
                _ => {}
            }
        }
        if !g.moved {
            self.read_out(x, y);
        }
        self.gesture.set_value(g);
    }

    /// A pointer up (or cancelled): the gesture goes on from here with the pointers left.
    fn up(self, ev: &leptos::ev::PointerEvent) {
        let current = self.step.window_untracked();
        self.gesture.update_value(|g| {
            g.pointers.retain(|p| p.0 != ev.pointer_id());
            g.start = current.map(|w| (w, g.pointers.clone()));
        });
    }

    /// The pointer left the canvas: the readout goes, unless a gesture holds it.
    fn leave(self) {
        if self.gesture.with_value(|g| g.pointers.is_empty()) {
            self.readout.set(None)
        }
    }

    /// Ctrl + wheel (a trackpad's pinch) zooms about the pointer; a sideways wheel pans; a plain
    /// wheel scrolls the page as everywhere else.
    fn wheel(self, ev: &leptos::ev::WheelEvent) {
        let Some((x, _)) = pointer_at(ev) else { return };
        let b = self.plot.get_value();
        let (dx, dy) = (ev.delta_x(), ev.delta_y());
        if ev.ctrl_key() || ev.meta_key() {
            ev.prevent_default();
            self.step.zoom_by((dy * 0.002).exp(), (x - b.left) / b.width.max(1.0));
        } else if dy.abs() < dx.abs() {
            ev.prevent_default();
            if let Some(from) = self.step.window_untracked() {
                self.step.pan_from(from, dx / b.width.max(1.0));
            }
        }
    }
}

/// The window shown, in words and as figures, and the zoom buttons.
#[component]
fn ZoomBar(
    /// The whole step and the window of it shown.
    step: Step,
) -> impl IntoView {
    let ctx = use_results();
    let title_window = move || {
        step.whole.with(|c| {
            let c = c.as_ref()?;
            let all = Window::whole(c.step_seconds);
            let w = step.zoom.get().map_or(all, |w| w.inside(all));
            Some((w, c.step_seconds))
        })
    };
    let window_text = move || {
        title_window().map(|(w, step)| {
            fill(
                ctx.tr(Key::tl_window),
                &[
                    ("start", &format::seconds(w.start_seconds)),
                    ("end", &format::seconds(w.end_seconds)),
                    ("step", &format::seconds(step)),
                ],
            )
        })
    };
    let whole_shown = move || step.zoom.get().is_none();
    view! {
        <div class="timeline-bar">
            <p class="muted" data-testid="timeline-window" aria-live="polite"
                data-start-seconds=move || title_window().map(|(w, _)| w.start_seconds.to_string())
                data-end-seconds=move || title_window().map(|(w, _)| w.end_seconds.to_string())
                data-step-seconds=move || title_window().map(|(_, s)| s.to_string())>
                {window_text}
            </p>
            <div class="timeline-buttons">
                <button class="secondary" data-testid="timeline-zoom-out" aria-label=move || ctx.tr(Key::tl_zoom_out)
                    title=move || ctx.tr(Key::tl_zoom_out) disabled=whole_shown
                    on:click=move |_| step.zoom_by(2.0, 0.5)>"−"</button>
                <button class="secondary" data-testid="timeline-zoom-in" aria-label=move || ctx.tr(Key::tl_zoom_in)
                    title=move || ctx.tr(Key::tl_zoom_in) on:click=move |_| step.zoom_by(0.25, 0.5)>"+"</button>
                <button class="secondary" data-testid="timeline-whole" disabled=whole_shown
                    on:click=move |_| step.zoom.set(None)>{move || ctx.tr(Key::tl_whole)}</button>
            </div>
        </div>
    }
}

/// The legend: the passes drawn, model chunks, and the step's parts.
fn legend(c: &TimelineChart, lang: Lang) -> Option<impl IntoView + use<>> {
    let passes: Vec<Pass> = [Pass::F, Pass::B, Pass::W]
        .into_iter()
        .filter(|p| c.timeline.events.iter().any(|e| e.pass == *p))
        .collect();
    let items = passes
        .into_iter()
        .map(|pass| swatch(PassStyle { pass, chunk: 0 }.rgb(), t(lang, pass_key(pass))))
        .collect_view();
    let parts = c
        .timeline
        .parts
        .iter()
        .map(|p| swatch(chart::part_rgb(p.part), t(lang, part_key(p.part))))
        .collect_view();
    let chunks = (1 < c.timeline.n_chunks).then(|| view! { <li>{t(lang, Key::tl_chunks)}</li> });
    Some(view! { {items} {chunks} {parts} })
}

/// A legend entry: a colour and its name.
fn swatch(rgb: chart::Rgb, label: &'static str) -> impl IntoView {
    view! { <li><span class="swatch" style=format!("background: {}", chart::css(rgb))></span>{label}</li> }
}

/// What the chart leaves out: stages beyond the lanes drawn, micro-batches beyond those simulated.
fn notes(c: &TimelineChart, lang: Lang) -> Option<impl IntoView + use<>> {
    let tl = &c.timeline;
    let deep = (chart::MAX_RANK_LANES < tl.n_ranks)
        .then(|| fill(t(lang, Key::tl_too_deep), &[("n", &tl.n_ranks.to_string())]));
    let partial = (tl.microbatches_drawn < tl.n_microbatches).then(|| {
        fill(
            t(lang, Key::tl_partial),
            &[
                ("shown", &format::count(tl.microbatches_drawn.into())),
                ("total", &format::count(tl.n_microbatches.into())),
            ],
        )
    });
    let text = [deep, partial].into_iter().flatten().collect::<Vec<_>>().join(" ");
    (!text.is_empty()).then(|| view! { <p class="note" data-testid="timeline-note">{text}</p> })
}

/// The step's parts as a table, lane by lane, and what the stages' lanes hold.
fn table(c: &TimelineChart, lang: Lang) -> Option<impl IntoView + use<>> {
    let rows = c
        .lanes
        .iter()
        .filter(|l| !matches!(l.label, LaneLabel::Rank(_)))
        .flat_map(|lane| lane.parts.iter().map(move |p| (lane.label, *p)))
        .map(|(label, p)| {
            view! {
                <tr data-lane=lane_id(label) data-part=part_id(p.part)
                    data-start-seconds=p.start_seconds.to_string() data-end-seconds=p.end_seconds.to_string()>
                    <th scope="row">{lane_name(lang, label)}</th>
                    <td>{t(lang, part_key(p.part))}</td>
                    <td class="num">{format::seconds(p.start_seconds)}</td>
                    <td class="num">{format::seconds(p.end_seconds)}</td>
                    <td class="num">{format::seconds(p.end_seconds - p.start_seconds)}</td>
                </tr>
            }
        })
        .collect_view();
    let tl = &c.timeline;
    let passes = fill(
        t(lang, Key::tl_passes),
        &[
            ("last", &tl.n_ranks.saturating_sub(1).to_string()),
            ("passes", &format::count(tl.events.len() as u64)),
            ("mbs", &format::count(tl.n_microbatches.into())),
        ],
    );
    Some(view! {
        <table class="breakdown" data-testid="timeline-lanes">
            <thead>
                <tr>
                    <th scope="col">{t(lang, Key::tl_col_lane)}</th>
                    <th scope="col">{t(lang, Key::tl_col_part)}</th>
                    <th scope="col" class="num">{t(lang, Key::tl_col_start)}</th>
                    <th scope="col" class="num">{t(lang, Key::tl_col_end)}</th>
                    <th scope="col" class="num">{t(lang, Key::tl_col_duration)}</th>
                </tr>
            </thead>
            <tbody>{rows}</tbody>
        </table>
        <p data-testid="timeline-passes" data-passes=tl.events.len().to_string()>{passes}</p>
    })
}

/// What lies under the point (`x`, `y`) of the chart drawn in `b` showing `window`: a pass, idle
/// time, or a part of the step, in words.
fn describe(c: &TimelineChart, b: PlotBox, window: Window, lang: Lang, x: f64, y: f64) -> Option<String> {
    let frac = (x - b.left) / b.width;
    if !(0.0..=1.0).contains(&frac) {
        return None;
    }
    let at = window.at(frac);
    let lane_idx = lane_rows(labels(c)).iter().position(|(top, bottom)| *top <= y && y < *bottom)?;
    let lane = &c.lanes[lane_idx];
    let span = |start: f64, end: f64| {
        [
            ("start", format::seconds(start)),
            ("end", format::seconds(end)),
            ("duration", format::seconds(end - start)),
        ]
    };
    match lane.label {
        LaneLabel::Rank(rank) => match chart::event_at(c, rank, at) {
            Some(idx) => {
                let e = c.timeline.events[idx];
                let [s, en, d] = span(e.start_seconds, e.end_seconds);
                Some(fill(
                    t(lang, Key::tl_pass_readout),
                    &[
                        ("stage", &rank.to_string()),
                        ("chunk", &e.chunk.to_string()),
                        ("mb", &e.microbatch.to_string()),
                        ("pass", t(lang, pass_key(e.pass))),
                        (s.0, &s.1),
                        (en.0, &en.1),
                        (d.0, &d.1),
                    ],
                ))
            }
            None => Some(fill(
                t(lang, Key::tl_idle_readout),
                &[("stage", &rank.to_string()), ("at", &format::seconds(at))],
            )),
        },
        _ => {
            let part = chart::part_at(lane, at)?;
            let [s, en, d] = span(part.start_seconds, part.end_seconds);
            Some(fill(
                t(lang, Key::tl_part_readout),
                &[("part", t(lang, part_key(part.part))), (s.0, &s.1), (en.0, &en.1), (d.0, &d.1)],
            ))
        }
    }
}

/// Draws the lanes in `window`; returns the plot's box.
fn draw(frame: &Frame, c: &TimelineChart, window: Window, lang: Lang) -> Option<PlotBox> {
    let rows = lane_rows(labels(c));
    let lanes_bottom_css = rows.last().map_or(0.0, |r| r.1);
    let (ticks, tick_step) = chart::time_ticks(window, frame.width_css - LABELS_CSS - 10.0);
    let plot = ChartBuilder::on(&frame.root)
        .margin_right(frame.px(10.0))
        .x_label_area_size(frame.px(AXIS_CSS))
        .y_label_area_size(frame.px(LABELS_CSS))
        .build_cartesian_2d(window.start_seconds..window.end_seconds, 0.0..lanes_bottom_css)
        .ok()?;
    let area = plot.plotting_area().clone();
    let pixels = area.strip_coord_spec();
    let (x_range, y_range) = area.get_pixel_range();
    let width_px = (x_range.end - x_range.start).max(1) as u32;
    let height_px = (y_range.end - y_range.start).max(1) as u32;
    // The plot starts at the canvas's top: a lane's CSS offset is its offset in the plot.
    let y_px = |css: f64| frame.px(css) - y_range.start;
    // Every rectangle goes into one picture put at once (thousands of passes cost the browser a
    // single image); the text is drawn over it afterwards.
    let mut raster = Raster::new(width_px, height_px, palette::WHITE);
    // Lane backgrounds (faint: the empty stretches are idle time).
    for (lane, (top, bottom)) in c.lanes.iter().zip(&rows) {
        let pad = if matches!(lane.label, LaneLabel::Rank(_)) && 6.0 <= bottom - top { 1.0 } else { 0.0 };
        let (y0, y1) = (y_px(top + pad), y_px(bottom - pad));
        raster.fill((0, y0), (width_px as i32, y1.max(y0 + 1)), palette::LANE);
    }
    // The time axis: a grid line and a label per tick, the axis line below the lanes.
    let label = frame.font(LABEL_CSS_PX, MUTED).pos(Pos::new(HPos::Center, VPos::Top));
    let mut tick_labels = Vec::new();
    for tick in ticks {
        let (x, _) = area.map_coordinate(&(tick, 0.0));
        let x = x - x_range.start;
        raster.fill((x, 0), (x + 1, height_px as i32), palette::TICK);
        tick_labels
            .push((format::seconds_tick(tick, tick_step), (x + x_range.start, y_range.end + frame.px(4.0))));
    }
    let scale = f64::from(width_px) / window.span_seconds();
    let x_px = |seconds: f64| {
        (((seconds - window.start_seconds) * scale).clamp(0.0, f64::from(width_px))).round() as i32
    };
    // The phase lanes: each part where it runs.
    for (lane, (top, bottom)) in c.lanes.iter().zip(&rows) {
        for part in &lane.parts {
            let (x0, x1) = (x_px(part.start_seconds), x_px(part.end_seconds));
            if x0 < x1 {
                raster.fill((x0, y_px(*top + 2.0)), (x1, y_px(*bottom - 2.0)), chart::part_rgb(part.part));
            }
        }
    }
    // The stages' lanes: a run of columns per colour.
    let rank_row = |rank: u32| c.lanes.iter().position(|l| l.label == LaneLabel::Rank(rank)).map(|i| rows[i]);
    let mut labels = Vec::new();
    for run in &chart::pass_runs(c, window, width_px) {
        let Some((top, bottom)) = rank_row(run.rank) else { continue };
        let pad = if 6.0 <= bottom - top { 1.0 } else { 0.0 };
        let (y0, y1) = (y_px(top + pad), y_px(bottom - pad).max(y_px(top + pad) + 1));
        // A pass of its own columns, wide enough, ends a pixel early: neighbours stay apart.
        let (x0, x1) = (run.x0 as i32, run.x1 as i32);
        let x1 = if run.event.is_some() && 4 <= x1 - x0 { x1 - frame.px(1.0).max(1) } else { x1 };
        raster.fill((x0, y0), (x1, y1), run.rgb);
        // A pass wide and tall enough carries its micro-batch's number.
        let fits = 11.0 <= bottom - top && 22.0 * frame.scale <= f64::from(x1 - x0) && labels.len() < 400;
        if let Some(idx) = run.event.filter(|_| fits) {
            labels.push((c.timeline.events[idx].microbatch, (x0 + x1) / 2, (y0 + y1) / 2));
        }
    }
    // Where the passes were not all drawn, the rest of the pipeline as one block per stage.
    let tl = &c.timeline;
    if tl.microbatches_drawn < tl.n_microbatches {
        let drawn_end = tl.events.iter().map(|e| e.end_seconds).fold(0.0, f64::max);
        let pipeline_end =
            tl.parts.iter().find(|p| p.part == StepPart::Pipeline).map_or(drawn_end, |p| p.end_seconds);
        let (x0, x1) = (x_px(drawn_end.max(window.start_seconds)), x_px(pipeline_end));
        for rank in 0..tl.n_ranks {
            if let (Some((top, bottom)), true) = (rank_row(rank), x0 < x1) {
                raster.fill((x0, y_px(top + 1.0)), (x1, y_px(bottom - 1.0)), palette::PALE);
            }
        }
    }
    frame.put(&raster, (x_range.start, y_range.start));
    // A label centred on a tick near the right edge would be cut there: it ends at the edge instead,
    // and is left out if it would then meet the label before it.
    let (right, gap) = (frame.px(frame.width_css), frame.px(4.0));
    let mut taken_to = i32::MIN;
    for (text, (x, y)) in tick_labels {
        let half = frame.px(text_width_css(&text, LABEL_CSS_PX) / 2.0);
        let x = x.min(right - half - frame.px(1.0));
        if taken_to.saturating_add(gap) <= x - half {
            taken_to = x + half;
            let _ = frame.root.draw(&Text::new(text, (x, y), label.clone()));
        }
    }
    let _ = frame
        .root
        .draw(&PathElement::new(vec![(x_range.start, y_range.end), (x_range.end, y_range.end)], AXIS));
    let white = frame.font(11.0, WHITE).pos(Pos::new(HPos::Center, VPos::Center));
    for (microbatch, x, y) in labels {
        let _ = pixels.draw(&Text::new(microbatch.to_string(), (x, y), white.clone()));
    }
    // The lanes' names, as many as fit (every k-th stage when lanes are thin).
    let every_rank = (13.0 / rank_lane_css(tl.n_ranks as usize)).ceil().max(1.0) as u32;
    for (lane, (top, bottom)) in c.lanes.iter().zip(&rows) {
        if let LaneLabel::Rank(r) = lane.label
            && r % every_rank != 0
        {
            continue;
        }
        let style = frame.font(LABEL_CSS_PX, INK).pos(Pos::new(HPos::Right, VPos::Center));
        let at = (x_range.start - frame.px(6.0), frame.px((top + bottom) / 2.0));
        let _ = frame.root.draw(&Text::new(lane_name(lang, lane.label), at, style));
    }
    Some(PlotBox::of(frame, (x_range, y_range)))
}
