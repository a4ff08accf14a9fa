//! Chart geometry computed from the report, with no drawing: what each bar holds and where its
//! segments sit, as fractions of the plot. The components only draw it; tests check it natively.

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

    /// The CSS class that colours the term.
    pub fn class(self) -> &'static str {
        match self {
            Term::Weights => "t-weights",
            Term::Gradients => "t-gradients",
            Term::Optimizer => "t-optimizer",
            Term::Activations => "t-activations",
            Term::Logits => "t-logits",
            Term::Buffers => "t-buffers",
            Term::Overhead => "t-overhead",
            Term::Reference => "t-reference",
            Term::Critic => "t-critic",
            Term::Engine => "t-engine",
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
        let rollout = &chart.bars[0];
        assert!(rollout.segments.iter().any(|s| s.term == Term::Engine));
        assert!(rollout.segments.iter().any(|s| s.term == Term::Reference));
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

/// One pass in the Gantt chart, placed as fractions of the chart's width.
#[derive(Clone, Debug, PartialEq)]
pub struct GanttBar {
    /// Pipeline rank (row).
    pub row: u32,
    /// Left edge.
    pub x_frac: f64,
    /// Width.
    pub width_frac: f64,
    /// `F`, `B` or `W`.
    pub pass: &'static str,
    /// Micro-batch.
    pub microbatch: u32,
    /// Model chunk.
    pub chunk: u32,
    /// Duration, seconds.
    pub seconds: f64,
}

/// The Gantt chart of a simulated schedule: a row per rank, a bar per pass.
#[derive(Clone, Debug, PartialEq)]
pub struct Gantt {
    /// Ranks.
    pub n_rows: u32,
    /// Every pass.
    pub bars: Vec<GanttBar>,
    /// The time the chart spans, seconds.
    pub span_seconds: f64,
    /// Micro-batches shown.
    pub n_microbatches_shown: u32,
}

/// The Gantt chart of a report's schedule.
pub fn gantt(schedule: &trainplan_core::report::ScheduleReport) -> Gantt {
    let span_seconds =
        schedule.timeline.iter().map(|e| e.end_seconds).fold(0.0, f64::max).max(f64::MIN_POSITIVE);
    let bars = schedule
        .timeline
        .iter()
        .map(|e| GanttBar {
            row: e.stage,
            x_frac: e.start_seconds / span_seconds,
            width_frac: (e.end_seconds - e.start_seconds) / span_seconds,
            pass: e.pass,
            microbatch: e.microbatch,
            chunk: e.chunk,
            seconds: e.end_seconds - e.start_seconds,
        })
        .collect();
    Gantt {
        n_rows: schedule.timeline.iter().map(|e| e.stage + 1).max().unwrap_or(0),
        bars,
        span_seconds,
        n_microbatches_shown: schedule.timeline.iter().map(|e| e.microbatch + 1).max().unwrap_or(0),
    }
}

/// The Gantt chart's bars drawn as one SVG path per pass kind (F, B, W), each bar a closed
/// rectangle `M x y h w v h h −w z`, in a plot `plot` wide starting at `left`, rows `row` high:
/// three elements however many passes (a 405B plan on 1,024 devices draws 4,000), so a keystroke's
/// redraw does not rebuild thousands of DOM nodes.
pub fn gantt_paths(g: &Gantt, left: f64, plot: f64, row: f64) -> [String; 3] {
    use std::fmt::Write;
    let mut paths = [String::new(), String::new(), String::new()];
    for bar in &g.bars {
        let path = match bar.pass {
            "F" => &mut paths[0],
            "B" => &mut paths[1],
            _ => &mut paths[2],
        };
        let x = left + plot * bar.x_frac;
        let w = (plot * bar.width_frac).max(0.5);
        let y = f64::from(bar.row) * row + 2.0;
        // Fixed point through integers: formatting 20,000 floats per redraw costs more than the
        // rest of the chart.
        let (x, y, w, h) = (fixed(x, 10), fixed(y, 10), fixed(w, 100), fixed(row - 4.0, 10));
        let _ = write!(path, "M{x} {y}h{w}v{h}h-{w}z");
    }
    paths
}

/// `v` ≥ 0 rounded to 1/`scale` (10 or 100), written as a decimal: 12.25 at 10 is `12.3`
/// (the rounding of `{:.1}`, but for ties), with no allocation.
fn fixed(v: f64, scale: u32) -> Fixed {
    Fixed((v.max(0.0) * f64::from(scale)).round() as u64, u64::from(scale))
}

/// A number in units of 1/scale.
struct Fixed(u64, u64);

impl std::fmt::Display for Fixed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (whole, part) = (self.0 / self.1, self.0 % self.1);
        match self.1 {
            100 => write!(f, "{whole}.{part:02}"),
            _ => write!(f, "{whole}.{part}"),
        }
    }
}

/// The bar under a point of the chart (`x_frac` across the plot, `row` the rank), if any: the
/// pointer's hit test that replaces a title per bar.
pub fn gantt_bar_at(g: &Gantt, row: u32, x_frac: f64) -> Option<usize> {
    g.bars.iter().position(|b| b.row == row && b.x_frac <= x_frac && x_frac <= b.x_frac + b.width_frac)
}

#[cfg(test)]
mod gantt_tests {
    use super::*;
    use trainplan_core::{Plan, evaluate};

    #[test]
    fn bars_fill_the_span_without_overlapping_in_a_row() {
        let text = r#"{"model": "llama-3-8b", "framework": "megatron", "method": "pretrain", "cluster": {"nodes": 2},
            "parallel": {"tp": 2, "pp": 4, "vpp": 2}, "batch": {"global_batch": 64}}"#;
        let report = evaluate(&Plan::from_json(text).unwrap());
        let g = gantt(&report.schedule);
        assert_eq!(g.n_rows, 4);
        assert!(!g.bars.is_empty());
        let right = g.bars.iter().map(|b| b.x_frac + b.width_frac).fold(0.0, f64::max);
        assert!((right - 1.0).abs() < 1e-9);
        // One rectangle per pass, each in its kind's path; the hit test finds the bar a point is on.
        assert_eq!(
            (fixed(12.34, 10).to_string(), fixed(0.5, 100).to_string(), fixed(3.0, 10).to_string()),
            ("12.3".to_owned(), "0.50".to_owned(), "3.0".to_owned())
        );
        let paths = gantt_paths(&g, 56.0, 580.0, 18.0);
        let rects: usize = paths.iter().map(|p| p.matches('M').count()).sum();
        assert_eq!(rects, g.bars.len());
        assert_eq!(paths[0].matches('M').count(), g.bars.iter().filter(|b| b.pass == "F").count());
        let first = &g.bars[0];
        assert_eq!(gantt_bar_at(&g, first.row, first.x_frac + first.width_frac / 2.0), Some(0));
        assert_eq!(gantt_bar_at(&g, g.n_rows, 0.5), None);
        for row in 0..g.n_rows {
            let mut mine: Vec<_> = g.bars.iter().filter(|b| b.row == row).collect();
            mine.sort_by(|a, b| a.x_frac.total_cmp(&b.x_frac));
            assert!(mine.windows(2).all(|w| w[0].x_frac + w[0].width_frac <= w[1].x_frac + 1e-9));
        }
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
