//! Chart geometry computed from the report, with no drawing: what each bar holds and where its
//! segments sit, as fractions of the plot; the whole step's timeline as runs of device pixels per
//! lane, its zoom window and what lies under a point; the step-time breakdown; the search's
//! scatter; and the colours, one table for the canvas and the legends. The components only draw
//! it; tests check it natively.

/// A colour, red, green and blue.
pub type Rgb = (u8, u8, u8);

/// A colour as CSS writes it, for a legend's swatch: `(31, 78, 121)` → `#1f4e79`.
pub fn css(rgb: Rgb) -> String {
    format!("#{:02x}{:02x}{:02x}", rgb.0, rgb.1, rgb.2)
}

/// Every colour the charts draw with, by name. A colour means alike across charts: the memory
/// terms and the step's time causes share the blues of the model's own work (weights and compute,
/// gradients and recomputation, optimizer states and memory-bound kernels), the orange of
/// activations and communication, and the RL phases' teal and purple.
pub mod palette {
    use super::Rgb;

    /// Weights; compute.
    pub const NAVY: Rgb = (0x1f, 0x4e, 0x79);
    /// Gradients; recomputation.
    pub const BLUE: Rgb = (0x4f, 0x86, 0xc6);
    /// Optimizer states; memory-bound kernels.
    pub const SKY: Rgb = (0x9e, 0xcb, 0xf0);
    /// Activations; communication within a step.
    pub const ORANGE: Rgb = (0xe0, 0x8a, 0x2e);
    /// Logits; gradient synchronisation.
    pub const GOLD: Rgb = (0xf2, 0xc1, 0x4e);
    /// Buffers; the optimizer step.
    pub const SLATE: Rgb = (0x7a, 0x8c, 0x99);
    /// Runtime overhead; host transfers.
    pub const SILVER: Rgb = (0xc5, 0xce, 0xd6);
    /// The reference model; RL scoring (log-probabilities).
    pub const PURPLE: Rgb = (0x8e, 0x6b, 0xb8);
    /// The critic; its values and update.
    pub const BRICK: Rgb = (0xc0, 0x50, 0x4d);
    /// The rollout engine; RL generation.
    pub const TEAL: Rgb = (0x3a, 0x9e, 0x9a);
    /// The trained weights handed to the rollout engine.
    pub const PINE: Rgb = (0x1f, 0x6b, 0x5f);
    /// The pipeline bubble.
    pub const HAZE: Rgb = (0xb4, 0xbc, 0xc7);
    /// The pipeline as one part of the step.
    pub const STEEL: Rgb = (0x55, 0x62, 0x7a);
    /// An empty lane: idle time.
    pub const LANE: Rgb = (0xee, 0xf1, 0xf5);
    /// A time tick's grid line across the lanes.
    pub const TICK: Rgb = (0xd9, 0xde, 0xe5);
    /// Passes not drawn one by one; plans neither fastest nor on the Pareto front.
    pub const PALE: Rgb = (0xb8, 0xc7, 0xdd);
    /// The search's front and the outline of its points.
    pub const FRONT: Rgb = (0x3f, 0x6f, 0xb5);
    /// The fastest plan found.
    pub const DEEP: Rgb = (0x1d, 0x3f, 0x73);
    /// The other plans on the front.
    pub const LIGHT: Rgb = (0x7f, 0xa2, 0xd6);
    /// Names and the peak's outline (`--ink` in style/main.css).
    pub const INK: Rgb = (0x1b, 0x24, 0x30);
    /// Muted text and figures (`--muted` in style/main.css).
    pub const MUTED: Rgb = (0x5b, 0x66, 0x75);
    /// Grid lines behind every chart.
    pub const GRID: Rgb = (0xe4, 0xe8, 0xee);
    /// Axes of every chart.
    pub const AXIS: Rgb = (0x9a, 0xa5, 0xb1);
    /// Device memory, and what goes over it.
    pub const RED: Rgb = (0xb4, 0x23, 0x18);
    /// Usable memory.
    pub const AMBER: Rgb = (0x8a, 0x5a, 0x00);
    /// The ground.
    pub const WHITE: Rgb = (0xff, 0xff, 0xff);
}

use trainplan_core::report::{MemoryReport, StageReport};

/// The terms a stage's memory is made of, bottom to top.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Term {
    /// Model weights.
    Weights,
    /// Gradients.
    Gradients,
    /// Optimizer states.
    Optimizer,
    /// Activations.
    Activations,
    /// Logits and loss.
    Logits,
    /// Communication buffers.
    Buffers,
    /// Runtime context.
    Overhead,
    /// RL: the frozen reference model.
    Reference,
    /// RL (PPO): the critic's weights, gradients and optimizer states.
    Critic,
    /// RL: the rollout engine's reservation (weights at rollout TP and KV cache).
    Engine,
}

impl Term {
    /// Every term, in stacking order.
    pub const ALL: [Term; 7] = [
        Term::Weights,
        Term::Gradients,
        Term::Optimizer,
        Term::Activations,
        Term::Logits,
        Term::Buffers,
        Term::Overhead,
    ];

    /// Every term of an RL phase, in stacking order.
    pub const PHASE: [Term; 10] = [
        Term::Weights,
        Term::Gradients,
        Term::Optimizer,
        Term::Activations,
        Term::Logits,
        Term::Buffers,
        Term::Overhead,
        Term::Reference,
        Term::Critic,
        Term::Engine,
    ];

    /// This term's bytes in a stage (the RL-only terms are never part of one).
    pub fn of(self, stage: &StageReport) -> u64 {
        match self {
            Term::Weights => stage.weights,
            Term::Gradients => stage.gradients,
            Term::Optimizer => stage.optimizer,
            Term::Activations => stage.activations,
            Term::Logits => stage.logits,
            Term::Buffers => stage.buffers,
            Term::Overhead => stage.overhead,
            Term::Reference | Term::Critic | Term::Engine => 0,
        }
    }

    /// The term a phase part names (`PhaseReport::parts`).
    pub fn of_part(part: &str) -> Option<Term> {
        Some(match part {
            "weights" => Term::Weights,
            "gradients" => Term::Gradients,
            "optimizer" => Term::Optimizer,
            "activations" => Term::Activations,
            "logits" => Term::Logits,
            "buffers" => Term::Buffers,
            "overhead" => Term::Overhead,
            "reference" => Term::Reference,
            "critic" => Term::Critic,
            "engine" => Term::Engine,
            _ => return None,
        })
    }

    /// The term's colour.
    pub fn rgb(self) -> Rgb {
        match self {
            Term::Weights => palette::NAVY,
            Term::Gradients => palette::BLUE,
            Term::Optimizer => palette::SKY,
            Term::Activations => palette::ORANGE,
            Term::Logits => palette::GOLD,
            Term::Buffers => palette::SLATE,
            Term::Overhead => palette::SILVER,
            Term::Reference => palette::PURPLE,
            Term::Critic => palette::BRICK,
            Term::Engine => palette::TEAL,
        }
    }
}

/// One segment of a bar: its term, bytes, and bottom and height as fractions of the plot.
#[derive(Clone, Debug, PartialEq)]
pub struct Segment {
    /// What it is.
    pub term: Term,
    /// Its bytes.
    pub bytes: u64,
    /// Bottom edge, 0 = the axis.
    pub bottom_frac: f64,
    /// Height.
    pub height_frac: f64,
}

/// What a bar stands for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BarLabel {
    /// A pipeline stage, by index.
    Stage(u64),
    /// An RL phase (`rollout`, `log_prob`, `update`) on the most loaded stage.
    Phase(&'static str),
}

/// One bar: a stage, or an RL phase.
#[derive(Clone, Debug, PartialEq)]
pub struct Bar {
    /// What it stands for.
    pub label: BarLabel,
    /// Whether it is the plan's peak (the highest bar; with RL, the peak phase).
    pub peak: bool,
    /// Non-empty segments, bottom to top.
    pub segments: Vec<Segment>,
    /// The stage's total bytes.
    pub total: u64,
    /// Whether the total is above the usable memory.
    pub over: bool,
}

/// The memory chart: a bar per stage, or with RL a bar per phase (each holds everything resident
/// then: the rollout engine, the reference, a PPO critic), against the device's capacity.
#[derive(Clone, Debug, PartialEq)]
pub struct MemoryChart {
    /// One bar per stage.
    pub bars: Vec<Bar>,
    /// The top of the plot, bytes.
    pub scale_bytes: u64,
    /// The capacity line, as a fraction of the plot height.
    pub capacity_frac: f64,
    /// The usable-memory line.
    pub usable_frac: f64,
}

/// The chart for a report's memory. The plot reaches 5 % above the larger of capacity and peak.
/// A plan with RL phases shows the phases, since a stage's training states are only the update
/// phase and the peak may be the rollout; other plans show the stages.
pub fn memory_chart(memory: &MemoryReport) -> MemoryChart {
    let scale_bytes = ((memory.capacity_bytes.max(memory.peak_bytes) as f64) * 1.05).max(1.0) as u64;
    let frac = |bytes: u64| bytes as f64 / scale_bytes as f64;
    let stack = |parts: &mut dyn Iterator<Item = (Term, u64)>| {
        let mut bottom = 0;
        parts
            .filter_map(|(term, bytes)| {
                let segment = Segment { term, bytes, bottom_frac: frac(bottom), height_frac: frac(bytes) };
                bottom += bytes;
                (0 < bytes).then_some(segment)
            })
            .collect()
    };
    let bars = match memory.phases.is_empty() {
        true => memory
            .stages
            .iter()
            .map(|stage| Bar {
                label: BarLabel::Stage(stage.stage),
                peak: stage.stage == memory.peak_stage && stage.total == memory.peak_bytes,
                segments: stack(&mut Term::ALL.into_iter().map(|t| (t, t.of(stage)))),
                total: stage.total,
                over: memory.usable_bytes < stage.total,
            })
            .collect(),
        false => memory
            .phases
            .iter()
            .map(|phase| Bar {
                label: BarLabel::Phase(phase.phase),
                peak: phase.peak,
                segments: stack(
                    &mut phase.parts.iter().filter_map(|p| Term::of_part(p.part).map(|t| (t, p.bytes))),
                ),
                total: phase.total,
                over: memory.usable_bytes < phase.total,
            })
            .collect(),
    };
    MemoryChart {
        bars,
        scale_bytes,
        capacity_frac: frac(memory.capacity_bytes),
        usable_frac: frac(memory.usable_bytes),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use trainplan_core::{Plan, evaluate};

    fn chart(text: &str) -> (MemoryChart, MemoryReport) {
        let memory = evaluate(&Plan::from_json(text).unwrap()).memory;
        (memory_chart(&memory), memory)
    }

    #[test]
    fn segments_stack_to_the_stage_total() {
        let (chart, memory) = chart(
            r#"{"model": "llama-3-8b", "framework": "megatron", "method": "pretrain", "parallel": {"pp": 4}}"#,
        );
        assert_eq!(chart.bars.len(), 4);
        for (bar, stage) in chart.bars.iter().zip(&memory.stages) {
            let top = bar.segments.last().map(|s| s.bottom_frac + s.height_frac).unwrap();
            assert!((top - stage.total as f64 / chart.scale_bytes as f64).abs() < 1e-9);
            assert_eq!(bar.segments.iter().map(|s| s.bytes).sum::<u64>(), stage.total);
            assert!(bar.segments.iter().all(|s| 0 < s.bytes));
        }
        assert!(chart.usable_frac < chart.capacity_frac && chart.capacity_frac < 1.0);
    }

    /// A GRPO plan's chart is its phases, each stacked from the core's parts, with the peak
    /// phase marked and reaching the report's peak (the verdict's figure).
    #[test]
    fn rl_plans_chart_every_phase_with_the_peak_marked() {
        let (chart, memory) = chart(
            r#"{"model": "qwen2.5-7b", "framework": "verl", "method": "grpo", "parallel": {"zero_stage": 3}}"#,
        );
        let labels: Vec<BarLabel> = chart.bars.iter().map(|b| b.label).collect();
        assert_eq!(
            labels,
            [BarLabel::Phase("rollout"), BarLabel::Phase("log_prob"), BarLabel::Phase("update")]
        );
        let peak: Vec<&Bar> = chart.bars.iter().filter(|b| b.peak).collect();
        assert_eq!(peak.len(), 1);
        assert_eq!(peak[0].total, memory.peak_bytes);
        for (bar, phase) in chart.bars.iter().zip(&memory.phases) {
            assert_eq!(bar.segments.iter().map(|s| s.bytes).sum::<u64>(), phase.total);
        }
        let (rollout, log_prob) = (&chart.bars[0], &chart.bars[1]);
        assert!(rollout.segments.iter().any(|s| s.term == Term::Engine));
        // VeRL's reference is on the device for its log-probabilities alone (docs/memory.md).
        assert!(log_prob.segments.iter().any(|s| s.term == Term::Reference));
        assert!(!rollout.segments.iter().any(|s| s.term == Term::Reference));
    }

    #[test]
    fn a_plan_that_does_not_fit_reaches_above_the_capacity() {
        let (chart, memory) = chart(r#"{"model": "llama-3.1-70b", "method": "sft-full"}"#);
        assert!(!memory.fits);
        assert!(chart.bars[0].over);
        let top = chart.bars[0].total as f64 / chart.scale_bytes as f64;
        assert!(chart.capacity_frac < top && top < 1.0);
    }
}

/// One point of the search's scatter chart, as fractions of the plot (y up).
#[derive(Clone, Debug, PartialEq)]
pub struct ScatterPoint {
    /// Peak memory, fraction of the x axis.
    pub x_frac: f64,
    /// Throughput, fraction of the y axis.
    pub y_frac: f64,
    /// Peak bytes and tokens per second, for the point's title.
    pub peak_bytes: u64,
    /// Tokens per second.
    pub tokens_per_second: f64,
    /// Whether the point is on the Pareto front.
    pub front: bool,
    /// The point's rank among the fastest plans (0 is the fastest), if it is one.
    pub rank: Option<usize>,
}

/// The search's memory-versus-throughput chart: the fastest plans and the Pareto front, on axes
/// from zero to the device's usable memory and to the fastest throughput found.
#[derive(Clone, Debug, PartialEq)]
pub struct Scatter {
    /// Every point, front first.
    pub points: Vec<ScatterPoint>,
    /// The x axis's end, bytes.
    pub max_bytes: u64,
    /// The y axis's end, tokens per second.
    pub max_tokens_per_second: f64,
}

/// The scatter chart of a search result; `usable_bytes` ends the x axis (every plan found fits).
pub fn scatter(result: &trainplan_core::search::SearchResult, usable_bytes: u64) -> Scatter {
    let max_bytes =
        result.pareto.iter().chain(&result.best).map(|c| c.peak_bytes).fold(usable_bytes, u64::max).max(1);
    let max_tps = result
        .pareto
        .iter()
        .chain(&result.best)
        .map(|c| c.tokens_per_second)
        .fold(0.0, f64::max)
        .max(f64::MIN_POSITIVE);
    let point = |c: &trainplan_core::search::Candidate, front: bool| ScatterPoint {
        x_frac: c.peak_bytes as f64 / max_bytes as f64,
        y_frac: c.tokens_per_second / max_tps,
        peak_bytes: c.peak_bytes,
        tokens_per_second: c.tokens_per_second,
        front,
        rank: result.best.iter().position(|b| b == c),
    };
    let mut points: Vec<ScatterPoint> = result.pareto.iter().map(|c| point(c, true)).collect();
    points.extend(result.best.iter().filter(|c| !result.pareto.contains(c)).map(|c| point(c, false)));
    Scatter { points, max_bytes, max_tokens_per_second: max_tps }
}

#[cfg(test)]
mod scatter_tests {
    use super::*;
    use trainplan_core::{Plan, evaluate, search};

    #[test]
    fn the_front_rises_to_the_right_and_the_fastest_tops_the_chart() {
        let text = r#"{"model": "llama-3.1-70b", "framework": "megatron", "method": "pretrain", "cluster": {"nodes": 4},
            "batch": {"global_batch": 64, "seq_len": 4096}}"#;
        let plan = Plan::from_json(text).unwrap();
        let result = search::search(&plan);
        let s = scatter(&result, evaluate(&plan).memory.usable_bytes);
        let front: Vec<_> = s.points.iter().filter(|p| p.front).collect();
        assert_eq!(front.len(), result.pareto.len());
        assert!(front.windows(2).all(|w| w[0].x_frac <= w[1].x_frac && w[0].y_frac < w[1].y_frac));
        assert!(s.points.iter().all(|p| (0.0..=1.0).contains(&p.x_frac) && (0.0..=1.0).contains(&p.y_frac)));
        let fastest = s.points.iter().find(|p| p.rank == Some(0)).unwrap();
        assert_eq!(fastest.y_frac, 1.0);
    }
}

/// The part of the timeline shown, seconds from the step's start.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Window {
    /// The left edge.
    pub start_seconds: f64,
    /// The right edge.
    pub end_seconds: f64,
}

/// The narrowest window, as a share of the whole step: a millionth (a 100 s step zooms to 0.1 ms,
/// below the shortest pass of a real plan).
const MIN_WINDOW_FRAC: f64 = 1e-6;

impl Window {
    /// The whole step.
    pub fn whole(step_seconds: f64) -> Window {
        let end = match step_seconds.is_finite() && 0.0 < step_seconds {
            true => step_seconds,
            false => 1.0,
        };
        Window { start_seconds: 0.0, end_seconds: end }
    }

    /// Its length, seconds.
    pub fn span_seconds(self) -> f64 {
        self.end_seconds - self.start_seconds
    }

    /// The time at `frac` of the way across.
    pub fn at(self, frac: f64) -> f64 {
        self.start_seconds + frac * self.span_seconds()
    }

    /// This window moved and cut to lie inside `whole`, no narrower than its smallest share.
    pub fn inside(self, whole: Window) -> Window {
        let min = whole.span_seconds() * MIN_WINDOW_FRAC;
        let span = match self.span_seconds() {
            s if !s.is_finite() || whole.span_seconds() <= s => return whole,
            s => s.max(min),
        };
        let start = match self.start_seconds {
            s if !s.is_finite() => whole.start_seconds,
            s => s.clamp(whole.start_seconds, whole.end_seconds - span),
        };
        Window { start_seconds: start, end_seconds: start + span }
    }

    /// Zoomed by `factor` (below 1 zooms in) about the point `anchor_frac` of the way across, which
    /// stays where it is; kept inside `whole`.
    pub fn zoom(self, factor: f64, anchor_frac: f64, whole: Window) -> Window {
        let factor = if factor.is_finite() && 0.0 < factor { factor } else { 1.0 };
        let anchor_frac = if anchor_frac.is_finite() { anchor_frac.clamp(0.0, 1.0) } else { 0.5 };
        let anchor = self.at(anchor_frac);
        let span = (self.span_seconds() * factor).max(whole.span_seconds() * MIN_WINDOW_FRAC);
        let start = anchor - anchor_frac * span;
        Window { start_seconds: start, end_seconds: start + span }.inside(whole)
    }

    /// Moved by `delta_frac` of its own width (positive: later in the step); kept inside `whole`.
    pub fn pan(self, delta_frac: f64, whole: Window) -> Window {
        let delta = if delta_frac.is_finite() { delta_frac * self.span_seconds() } else { 0.0 };
        Window { start_seconds: self.start_seconds + delta, end_seconds: self.end_seconds + delta }
            .inside(whole)
    }
}

/// What a lane of the timeline shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LaneLabel {
    /// RL: generating the responses.
    Rollout,
    /// RL: scoring them (log-probabilities).
    LogProb,
    /// RL: the actor's update (the pipeline and the step's tail).
    Update,
    /// Without RL: the step's parts (the pipeline and its tail).
    Step,
    /// A pipeline rank's passes.
    Rank(u32),
}

/// A lane: its label and, for a phase lane, the step's parts it holds.
#[derive(Clone, Debug, PartialEq)]
pub struct Lane {
    /// What it shows.
    pub label: LaneLabel,
    /// The parts drawn in it (none in a rank's lane, whose passes are drawn instead).
    pub parts: Vec<PartSpan>,
}

use trainplan_core::Report;
use trainplan_core::schedule::Pass;
use trainplan_core::time::{PartSpan, StepPart, StepTimeline};

/// Ranks drawn one lane each; a deeper pipeline shows its phase lanes only (its lanes would be
/// under a pixel tall).
pub const MAX_RANK_LANES: u32 = 128;

/// A whole step's lanes, top to bottom: with RL a lane each for rollout, log-prob and update, with
/// DPO (log-prob passes alone: its reference's) for log-prob and update, else one for the step; then
/// one per pipeline rank, up to [`MAX_RANK_LANES`].
pub fn lane_labels(rollout: bool, log_prob: bool, n_ranks: u32) -> impl Iterator<Item = LaneLabel> + Clone {
    let phases: &[LaneLabel] = match (rollout, log_prob) {
        (true, _) => &[LaneLabel::Rollout, LaneLabel::LogProb, LaneLabel::Update],
        (false, true) => &[LaneLabel::LogProb, LaneLabel::Update],
        (false, false) => &[LaneLabel::Step],
    };
    let ranks = if n_ranks <= MAX_RANK_LANES { n_ranks } else { 0 };
    phases.iter().copied().chain((0..ranks).map(LaneLabel::Rank))
}

/// The lanes a report's whole step has ([`lane_labels`]), known without simulating it: the chart
/// takes its height from them while it waits off screen.
pub fn report_lanes(report: &Report) -> impl Iterator<Item = LaneLabel> + Clone {
    let b = &report.time.breakdown;
    lane_labels(0.0 < b.rollout_seconds, 0.0 < b.log_prob_seconds, report.schedule.n_ranks)
}

/// A whole step prepared for drawing: the lanes, top to bottom, and where each rank's passes start
/// in the timeline's events (they come rank by rank, each in time order).
#[derive(Clone, Debug, PartialEq)]
pub struct TimelineChart {
    /// The step, as the core simulated it.
    pub timeline: StepTimeline,
    /// The lanes: the step's phases first (with RL: rollout, log-prob, update; else the step), then a
    /// lane per rank.
    pub lanes: Vec<Lane>,
    /// The first event of each rank, and the end: `events[rank_start[r]..rank_start[r + 1]]`.
    pub rank_start: Vec<usize>,
    /// The step, seconds: the end of its last part.
    pub step_seconds: f64,
}

/// The lanes and the index of a step's timeline.
pub fn timeline_chart(timeline: StepTimeline) -> TimelineChart {
    let step_seconds = timeline.parts.last().map_or(0.0, |p| p.end_seconds);
    let of = |wanted: &[StepPart]| -> Vec<PartSpan> {
        timeline.parts.iter().filter(|p| wanted.contains(&p.part)).copied().collect()
    };
    // PPO's critic trains before the actor, on the same devices: the update's lane holds both. The
    // rollout's lane holds the trained weights' hand-over to its engine, at the step's end.
    let tail = [
        StepPart::Critic,
        StepPart::Pipeline,
        StepPart::GradientSync,
        StepPart::Optimizer,
        StepPart::Offload,
    ];
    let has = |part: StepPart| timeline.parts.iter().any(|p| p.part == part);
    let lanes = lane_labels(has(StepPart::Rollout), has(StepPart::LogProb), timeline.n_ranks)
        .map(|label| {
            let parts = match label {
                LaneLabel::Rollout => of(&[StepPart::Rollout, StepPart::WeightSync]),
                LaneLabel::LogProb => of(&[StepPart::LogProb]),
                LaneLabel::Update | LaneLabel::Step => of(&tail),
                LaneLabel::Rank(_) => Vec::new(),
            };
            Lane { label, parts }
        })
        .collect();
    let mut rank_start = Vec::with_capacity(timeline.n_ranks as usize + 1);
    for rank in 0..=timeline.n_ranks {
        rank_start.push(timeline.events.partition_point(|e| e.stage < rank));
    }
    TimelineChart { timeline, lanes, rank_start, step_seconds }
}

/// How a run of passes is coloured: the pass and the model chunk.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct PassStyle {
    /// Forward, backward or weight gradients.
    pub pass: Pass,
    /// The model chunk on its rank (VPP's, DualPipeV's).
    pub chunk: u32,
}

impl PassStyle {
    /// Blue forwards, orange backwards, green weight passes; each chunk a lighter shade than the one
    /// before, so interleaved chunks tell apart.
    pub fn rgb(self) -> Rgb {
        const F: [Rgb; 4] = [(0x2b, 0x62, 0xa3), palette::BLUE, (0x7c, 0xa7, 0xda), (0xa9, 0xc7, 0xea)];
        const B: [Rgb; 4] = [(0xb8, 0x5f, 0x0e), palette::ORANGE, (0xec, 0xaa, 0x62), (0xf4, 0xc9, 0x98)];
        const W: [Rgb; 4] = [(0x35, 0x80, 0x46), (0x5a, 0xa4, 0x69), (0x85, 0xc1, 0x91), (0xb0, 0xd9, 0xb8)];
        let shades = match self.pass {
            Pass::F => &F,
            Pass::B => &B,
            Pass::W => &W,
        };
        shades[self.chunk as usize % shades.len()]
    }
}

/// A part's colour in the phase lanes.
pub fn part_rgb(part: StepPart) -> Rgb {
    match part {
        StepPart::Rollout => palette::TEAL,
        StepPart::LogProb => palette::PURPLE,
        StepPart::Critic => palette::BRICK,
        StepPart::Pipeline => palette::STEEL,
        StepPart::GradientSync => palette::GOLD,
        StepPart::Optimizer => palette::SLATE,
        StepPart::Offload => palette::SILVER,
        StepPart::WeightSync => palette::PINE,
    }
}

/// A run of device pixels in a rank's lane drawn in one colour.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PassRun {
    /// The rank.
    pub rank: u32,
    /// First pixel column, from the plot's left edge.
    pub x0: u32,
    /// One past the last column.
    pub x1: u32,
    /// Its colour: a pass's own where one pass fills the columns, else the passes' colours mixed
    /// by how much of the column each covers, over the empty lane's (so a column half idle is
    /// half as strong: the bubble shows at any zoom).
    pub rgb: Rgb,
    /// How much of its columns passes cover, in [0, 1].
    pub cover: f64,
    /// The event, when the run is one pass's whole columns (for its micro-batch label).
    pub event: Option<usize>,
}

/// The passes in `window` as runs of pixel columns, `width_px` columns across, drawn as an
/// antialiased picture would be: a column one pass fills takes its colour; a column shared by
/// several passes, or partly idle, mixes their colours and the empty lane's by the time each
/// covers. Neighbouring columns of one colour make one run (a pass's own columns stay its run), so
/// a zoomed-out step of 10^5 passes draws as fast as a few: at most a run per column and rank.
pub fn pass_runs(chart: &TimelineChart, window: Window, width_px: u32) -> Vec<PassRun> {
    let events = &chart.timeline.events;
    let span = window.span_seconds();
    let mut runs: Vec<PassRun> = Vec::new();
    if !(span.is_finite() && 0.0 < span) || width_px == 0 || MAX_RANK_LANES < chart.timeline.n_ranks {
        return runs;
    }
    let scale = f64::from(width_px) / span;
    let width = f64::from(width_px);
    let push = |runs: &mut Vec<PassRun>, run: PassRun| match runs.last_mut() {
        Some(last)
            if last.rank == run.rank
                && last.x1 == run.x0
                && last.rgb == run.rgb
                && last.event == run.event =>
        {
            let (a, b) = (f64::from(last.x1 - last.x0), f64::from(run.x1 - run.x0));
            last.cover = (last.cover * a + run.cover * b) / (a + b);
            last.x1 = run.x1;
        }
        _ => runs.push(run),
    };
    // A shared column: its colour mixed from what covers it (quantized a little, so that the
    // steady state's alike columns join into runs).
    let flush = |runs: &mut Vec<PassRun>, rank: u32, col: u32, cover: &mut Vec<(Rgb, f64)>| {
        let total = cover.iter().map(|c| c.1).sum::<f64>().min(1.0);
        if 0.0 < total {
            let mix = |channel: fn(Rgb) -> u8| {
                let busy: f64 = cover.iter().map(|(rgb, c)| c * f64::from(channel(*rgb))).sum();
                let value = busy + (1.0 - total) * f64::from(channel(palette::LANE));
                ((value / 4.0).round() * 4.0).clamp(0.0, 255.0) as u8
            };
            let rgb = (mix(|c| c.0), mix(|c| c.1), mix(|c| c.2));
            push(runs, PassRun { rank, x0: col, x1: col + 1, rgb, cover: total, event: None });
        }
        cover.clear();
    };
    for rank in 0..chart.timeline.n_ranks {
        let offset = chart.rank_start[rank as usize];
        let mine = &events[offset..chart.rank_start[rank as usize + 1]];
        let first = mine.partition_point(|e| e.end_seconds <= window.start_seconds);
        // The column being filled, and each colour's cover of it.
        let mut column: Option<u32> = None;
        let mut cover: Vec<(Rgb, f64)> = Vec::new();
        let add = |cover: &mut Vec<(Rgb, f64)>, rgb: Rgb, amount: f64| match cover
            .iter_mut()
            .find(|c| c.0 == rgb)
        {
            Some(c) => c.1 += amount,
            None => cover.push((rgb, amount)),
        };
        for (idx, e) in mine.iter().enumerate().skip(first) {
            if window.end_seconds <= e.start_seconds {
                break;
            }
            let rgb = PassStyle { pass: e.pass, chunk: e.chunk }.rgb();
            let x0 = ((e.start_seconds - window.start_seconds) * scale).clamp(0.0, width);
            let x1 = ((e.end_seconds - window.start_seconds) * scale).clamp(0.0, width);
            if x1 <= x0 {
                continue;
            }
            let (c0, c1) = (x0.floor() as u32, (x1.ceil() as u32).clamp(1, width_px));
            // The pass's first column may be the one being filled.
            if let Some(col) = column.filter(|c| *c != c0) {
                flush(&mut runs, rank, col, &mut cover);
            }
            column = Some(c0);
            if c1 <= c0 + 1 {
                add(&mut cover, rgb, x1 - x0);
                continue;
            }
            add(&mut cover, rgb, f64::from(c0 + 1) - x0);
            flush(&mut runs, rank, c0, &mut cover);
            // The columns it fills, then its last column, which the next pass may share.
            let last = c1 - 1;
            if c0 + 1 < last {
                let run = PassRun { rank, x0: c0 + 1, x1: last, rgb, cover: 1.0, event: Some(offset + idx) };
                push(&mut runs, run);
            }
            column = Some(last);
            add(&mut cover, rgb, x1 - f64::from(last));
        }
        if let Some(col) = column {
            flush(&mut runs, rank, col, &mut cover);
        }
    }
    runs
}

/// The pass of `rank` running at `seconds`, if any: the pointer's hit test.
pub fn event_at(chart: &TimelineChart, rank: u32, seconds: f64) -> Option<usize> {
    let (from, to) = (*chart.rank_start.get(rank as usize)?, *chart.rank_start.get(rank as usize + 1)?);
    let mine = &chart.timeline.events[from..to];
    let idx = mine.partition_point(|e| e.end_seconds <= seconds);
    mine.get(idx).filter(|e| e.start_seconds <= seconds).map(|_| from + idx)
}

/// The part of a phase lane at `seconds`, if any.
pub fn part_at(lane: &Lane, seconds: f64) -> Option<PartSpan> {
    lane.parts.iter().find(|p| p.start_seconds <= seconds && seconds < p.end_seconds).copied()
}

/// What a cause of the step's time is, in the breakdown chart.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Cause {
    /// GEMMs and attention.
    Compute,
    /// Recomputation's extra forward.
    Recompute,
    /// Memory-bound kernels.
    Memory,
    /// TP collectives.
    Tp,
    /// CP exchanges.
    Cp,
    /// EP all-to-alls.
    Ep,
    /// PP sends.
    Pp,
    /// The pipeline bubble.
    Bubble,
    /// DP gradient reduction.
    Dp,
    /// The optimizer step.
    Optimizer,
    /// Host transfers.
    Offload,
    /// RL generation.
    Rollout,
    /// RL scoring.
    LogProb,
    /// PPO's critic: its values and its update.
    Critic,
    /// RL: the trained weights handed to the rollout engine.
    WeightSync,
}

impl Cause {
    /// The cause's colour.
    pub fn rgb(self) -> Rgb {
        match self {
            Cause::Compute => palette::NAVY,
            Cause::Recompute => palette::BLUE,
            Cause::Memory => palette::SKY,
            Cause::Tp | Cause::Cp | Cause::Ep | Cause::Pp => palette::ORANGE,
            Cause::Bubble => palette::HAZE,
            Cause::Dp => palette::GOLD,
            Cause::Optimizer => palette::SLATE,
            Cause::Offload => palette::SILVER,
            Cause::Rollout => palette::TEAL,
            Cause::LogProb => palette::PURPLE,
            Cause::Critic => palette::BRICK,
            Cause::WeightSync => palette::PINE,
        }
    }
}

/// One bar of the breakdown: a cause, its seconds and its share of the bars' sum.
#[derive(Clone, Debug, PartialEq)]
pub struct CauseBar {
    /// The cause.
    pub cause: Cause,
    /// Seconds per step.
    pub seconds: f64,
    /// Its share of the sum of all causes, in [0, 1].
    pub frac: f64,
}

/// The step's causes that take time, in the report's order, with their shares; causes of no time
/// are left out.
pub fn breakdown(b: &trainplan_core::report::BreakdownReport) -> Vec<CauseBar> {
    let all = [
        (Cause::Compute, b.compute_seconds),
        (Cause::Recompute, b.recompute_seconds),
        (Cause::Memory, b.memory_bound_seconds),
        (Cause::Tp, b.tp_comm_seconds),
        (Cause::Cp, b.cp_comm_seconds),
        (Cause::Ep, b.ep_comm_seconds),
        (Cause::Pp, b.pp_comm_seconds),
        (Cause::Bubble, b.bubble_seconds),
        (Cause::Dp, b.dp_comm_seconds),
        (Cause::Optimizer, b.optimizer_seconds),
        (Cause::Offload, b.offload_seconds),
        (Cause::Rollout, b.rollout_seconds),
        (Cause::LogProb, b.log_prob_seconds),
        (Cause::Critic, b.critic_seconds),
        (Cause::WeightSync, b.weight_sync_seconds),
    ];
    let shown = |s: f64| s.is_finite() && 0.0 < s;
    let total: f64 = all.iter().map(|a| a.1).filter(|s| shown(*s)).sum();
    all.into_iter()
        .filter(|a| shown(a.1))
        .map(|(cause, seconds)| CauseBar { cause, seconds, frac: seconds / total })
        .collect()
}

/// The slot under `x` when `n` equal slots share `[left, left + width)`: a bar chart's hit test.
pub fn slot_at(x: f64, left: f64, width: f64, n: usize) -> Option<usize> {
    let frac = (x - left) / width;
    ((0.0..1.0).contains(&frac) && 0 < n).then(|| ((frac * n as f64) as usize).min(n - 1))
}

/// The time axis's ticks over `window` in a plot `plot_width_css` wide: the finest step of 1, 2 or
/// 5 × 10^k whose labels (as [`crate::format::seconds_tick`] writes them, 12 CSS pixels, some 0.55 em a
/// character) fit side by side with room between; the ticks and the step.
pub fn time_ticks(window: Window, plot_width_css: f64) -> (Vec<f64>, f64) {
    let span = window.span_seconds();
    if !(span.is_finite() && 0.0 < span && 0.0 < plot_width_css) {
        return (Vec::new(), 1.0);
    }
    // Steps 1, 2, 5 × 10^k from a fiftieth of the window up.
    let mut exponent = (span / 50.0).log10().floor() as i32;
    let mut mantissa = 0;
    let mut step = 1.0;
    for _ in 0..64 {
        step = [1.0, 2.0, 5.0][mantissa] * 10f64.powi(exponent);
        // A tick on the window's edge counts, whatever the rounding.
        let first = (window.start_seconds / step - 1e-9).ceil() as i64;
        let last = (window.end_seconds / step + 1e-9).floor() as i64;
        let widest = [first, last]
            .iter()
            .map(|k| crate::format::seconds_tick(*k as f64 * step, step).chars().count())
            .max()
            .unwrap_or(0) as f64;
        let slot_css = widest * 0.55 * 12.0 + 10.0;
        if (span / step) * slot_css <= plot_width_css {
            return ((first..=last).map(|k| k as f64 * step).collect(), step);
        }
        mantissa = (mantissa + 1) % 3;
        if mantissa == 0 {
            exponent += 1;
        }
    }
    (Vec::new(), step)
}

#[cfg(test)]
mod timeline_tests {
    use super::*;
    use trainplan_core::{Plan, evaluate, step_timeline};

    const PLAN_405B: &str = r#"{"model": "llama-3.1-405b", "framework": "megatron", "method": "pretrain",
        "cluster": {"nodes": 128}, "parallel": {"tp": 8, "pp": 16, "vpp": 4},
        "batch": {"global_batch": 1024, "seq_len": 8192}}"#;

    fn chart(text: &str) -> (TimelineChart, trainplan_core::Report) {
        let plan = Plan::from_json(text).unwrap();
        (timeline_chart(step_timeline(&plan)), evaluate(&plan))
    }

    /// The lanes: the step first, then one per rank of the 16; the chart's end is the report's step.
    #[test]
    fn lanes_are_the_step_then_each_rank() {
        let (c, report) = chart(PLAN_405B);
        assert_eq!(c.lanes.len(), 1 + 16);
        assert_eq!(c.lanes[0].label, LaneLabel::Step);
        assert_eq!(c.lanes[16].label, LaneLabel::Rank(15));
        assert!((c.step_seconds - report.time.step_seconds).abs() <= 1e-12 * c.step_seconds);
        // Each rank's slice of the events holds its 4 chunks × 128 micro-batches × 2 passes.
        assert!(c.rank_start.windows(2).all(|w| w[1] - w[0] == 1024));
    }

    /// The lanes the report alone gives (the chart's height while it waits off screen) are the
    /// simulated chart's, for a plain, an interleaved, a DualPipeV, an RL plan (VeRL's, MindSpeed-RL's
    /// with a pipeline) and one too deep for a lane per rank (256 one-layer stages).
    #[test]
    fn the_report_knows_the_lanes_before_the_simulation() {
        let plans = [
            r#"{"model": "qwen2.5-7b"}"#,
            PLAN_405B,
            r#"{"model": "deepseek-v3", "framework": "megatron", "method": "pretrain", "cluster": {"nodes": 64},
                "parallel": {"tp": 1, "pp": 8, "ep": 64, "schedule": "dualpipev"}, "batch": {"global_batch": 512}}"#,
            r#"{"model": "qwen2.5-7b", "framework": "verl", "method": "grpo"}"#,
            r#"{"model": "qwen2.5-32b", "framework": "mindspeed-rl", "method": "grpo", "hardware": "ascend-910b2",
                "cluster": {"nodes": 4}, "parallel": {"tp": 4, "pp": 2}}"#,
            r#"{"model": {"name": "deep", "hf_config": {"model_type": "llama", "hidden_size": 1024,
                "intermediate_size": 4096, "num_hidden_layers": 256, "num_attention_heads": 16, "vocab_size": 32000}},
                "framework": "megatron", "method": "pretrain", "cluster": {"nodes": 32},
                "parallel": {"tp": 1, "pp": 256}, "batch": {"global_batch": 256}}"#,
        ];
        let mut too_deep = 0;
        for text in plans {
            let (c, report) = chart(text);
            if MAX_RANK_LANES < report.schedule.n_ranks {
                too_deep += 1;
                assert_eq!(c.lanes.len(), 1, "{text}");
            }
            let simulated: Vec<LaneLabel> = c.lanes.iter().map(|l| l.label).collect();
            assert_eq!(report_lanes(&report).collect::<Vec<_>>(), simulated, "{text}");
        }
        assert_eq!(too_deep, 1);
    }

    #[test]
    fn rl_plans_get_a_lane_per_phase() {
        let (c, _) = chart(r#"{"model": "qwen2.5-7b", "framework": "verl", "method": "grpo"}"#);
        let labels: Vec<LaneLabel> = c.lanes.iter().take(3).map(|l| l.label).collect();
        assert_eq!(labels, [LaneLabel::Rollout, LaneLabel::LogProb, LaneLabel::Update]);
        assert_eq!(c.lanes[2].parts[0].part, StepPart::Pipeline);
        // The phases follow each other along the step.
        assert_eq!(c.lanes[0].parts[0].end_seconds, c.lanes[1].parts[0].start_seconds);
        assert_eq!(c.lanes[1].parts[0].end_seconds, c.lanes[2].parts[0].start_seconds);
        // DPO scores with its reference and generates nothing: no rollout lane.
        let (c, report) = chart(r#"{"model": "qwen2.5-7b", "method": "dpo-lora"}"#);
        let labels: Vec<LaneLabel> = c.lanes.iter().take(2).map(|l| l.label).collect();
        assert_eq!(labels, [LaneLabel::LogProb, LaneLabel::Update]);
        assert!(c.lanes.iter().all(|l| l.label != LaneLabel::Rollout));
        assert_eq!(
            report_lanes(&report).collect::<Vec<_>>(),
            c.lanes.iter().map(|l| l.label).collect::<Vec<_>>()
        );
    }

    /// Zoomed out, every rank's runs stay inside the plot, never overlap, and fill the busy time:
    /// 405B's bubble (the report's idle share) is the empty columns, within a column per pass edge.
    #[test]
    fn runs_cover_the_busy_columns_and_leave_the_bubble_empty() {
        let (c, report) = chart(PLAN_405B);
        let width = 1000;
        let runs = pass_runs(&c, Window::whole(c.step_seconds), width);
        // At most one run per column and rank, however many passes.
        assert!(runs.len() <= 16 * width as usize);
        for rank in 0..16 {
            let mine: Vec<&PassRun> = runs.iter().filter(|r| r.rank == rank).collect();
            assert!(mine.iter().all(|r| r.x0 < r.x1 && r.x1 <= width));
            assert!(mine.windows(2).all(|w| w[0].x1 <= w[1].x0));
        }
        let pipeline = c.lanes[0].parts[0];
        let pipeline_px = (pipeline.end_seconds - pipeline.start_seconds) / c.step_seconds * f64::from(width);
        let busy: f64 = runs.iter().map(|r| f64::from(r.x1 - r.x0) * r.cover).sum();
        let busy_frac = busy / (16.0 * pipeline_px);
        let expected = 1.0 - report.schedule.bubble_fraction;
        assert!((busy_frac - expected).abs() < 1e-3, "{busy_frac} vs {expected}");
        // The warm-up's first column of the last stage is idle but for a sliver: nearly the lane's.
        assert!(runs.iter().filter(|r| r.cover < 0.5).all(|r| r.event.is_none()));
    }

    /// Zoomed in on one pass, it is one run labelled with its event; the hit test finds it.
    #[test]
    fn zoomed_in_a_pass_is_one_run() {
        let (c, _) = chart(PLAN_405B);
        let e = c.timeline.events[c.rank_start[3] + 100];
        let pad = (e.end_seconds - e.start_seconds) * 0.25;
        let window = Window { start_seconds: e.start_seconds - pad, end_seconds: e.end_seconds + pad };
        let runs = pass_runs(&c, window, 600);
        let run = runs.iter().find(|r| r.rank == 3 && r.event == Some(c.rank_start[3] + 100)).unwrap();
        assert_eq!((run.rgb, run.cover), (PassStyle { pass: e.pass, chunk: e.chunk }.rgb(), 1.0));
        // 0.25 : 1 : 0.25 of 600 columns.
        assert!((f64::from(run.x1 - run.x0) - 400.0).abs() <= 2.0, "{run:?}");
        let mid = (e.start_seconds + e.end_seconds) / 2.0;
        assert_eq!(event_at(&c, 3, mid), Some(c.rank_start[3] + 100));
        assert_eq!(event_at(&c, 3, -1.0), None);
        assert_eq!(event_at(&c, 99, mid), None);
        assert_eq!(part_at(&c.lanes[0], mid).map(|p| p.part), Some(StepPart::Pipeline));
    }

    #[test]
    fn the_window_zooms_about_its_anchor_and_stays_inside_the_step() {
        let whole = Window::whole(10.0);
        let w = whole.zoom(0.5, 0.25, whole);
        assert_eq!((w.start_seconds, w.end_seconds), (1.25, 6.25));
        // Zooming out past the whole gives the whole; panning stops at the ends.
        assert_eq!(w.zoom(10.0, 0.5, whole), whole);
        assert_eq!(w.pan(-5.0, whole).start_seconds, 0.0);
        assert_eq!(w.pan(5.0, whole).end_seconds, 10.0);
        // No narrower than a millionth of the step, and no NaN from bad input.
        let tiny = whole.zoom(1e-12, 0.5, whole);
        assert!((tiny.span_seconds() - 1e-5).abs() < 1e-12);
        assert_eq!(whole.zoom(f64::NAN, f64::NAN, whole), whole);
        assert_eq!(Window::whole(f64::NAN), Window::whole(1.0));
    }

    #[test]
    fn the_breakdown_keeps_the_causes_that_take_time() {
        let (_, report) = chart(PLAN_405B);
        let bars = breakdown(&report.time.breakdown);
        assert_eq!(bars[0].cause, Cause::Compute);
        assert!(bars.iter().all(|b| 0.0 < b.seconds && b.frac <= 1.0));
        assert!((bars.iter().map(|b| b.frac).sum::<f64>() - 1.0).abs() < 1e-12);
        assert!(!bars.iter().any(|b| b.cause == Cause::Rollout));
        assert_eq!(slot_at(55.0, 10.0, 100.0, 4), Some(1));
        // A phone's 230 CSS pixels over 0.8 s: five ticks 0.2 s apart; a desktop's 620 over 54 s:
        // every 5 s.
        let phone = time_ticks(Window { start_seconds: 26.6, end_seconds: 27.4 }, 230.0);
        assert_eq!(phone.0.len(), 5);
        assert!((phone.1 - 0.2).abs() < 1e-12 && (phone.0[0] - 26.6).abs() < 1e-9);
        let desktop = time_ticks(Window::whole(54.0), 620.0);
        assert_eq!((desktop.0.len(), desktop.1), (11, 5.0));
        assert_eq!(time_ticks(Window::whole(1.0), 0.0).0, Vec::<f64>::new());
        assert_eq!(slot_at(5.0, 10.0, 100.0, 4), None);
        assert_eq!(css(Term::Weights.rgb()), "#1f4e79");
    }
}
