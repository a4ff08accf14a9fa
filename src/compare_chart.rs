//! The comparison's memory chart as geometry, with no drawing: for each pipeline stage a group of
//! bars, one per plan, and a line for each device memory the plans run on. Positions are fractions
//! of the plot; the compare panel draws them and tests check them natively.

use trainplan_core::compare::Comparison;

/// Stages whose label is drawn: every one up to this many, else every k-th so labels never overlap.
const MAX_LABELS: usize = 16;

/// One plan's bar in a stage's group.
#[derive(Clone, Debug, PartialEq)]
pub struct Bar {
    /// Which plan (its column in the comparison).
    pub plan: usize,
    /// The stage's total, bytes.
    pub bytes: u64,
    /// Left edge, 0 = the plot's left.
    pub x_frac: f64,
    /// Width.
    pub width_frac: f64,
    /// Height, 0 = the axis.
    pub height_frac: f64,
    /// Whether the stage is above its plan's usable memory (the plan does not fit there).
    pub over: bool,
}

/// A stage's bars.
#[derive(Clone, Debug, PartialEq)]
pub struct Group {
    /// Stage index.
    pub stage: u64,
    /// The group's centre, for its label.
    pub centre_frac: f64,
    /// Whether its label is drawn.
    pub labelled: bool,
    /// One bar per plan that has this stage, in plan order; a plan with fewer stages leaves a gap.
    pub bars: Vec<Bar>,
}

/// A device memory some plans run on.
#[derive(Clone, Debug, PartialEq)]
pub struct Line {
    /// Device memory, bytes.
    pub bytes: u64,
    /// Height, 0 = the axis.
    pub y_frac: f64,
    /// The plans on a device with this much memory.
    pub plans: Vec<usize>,
}

/// The whole chart.
#[derive(Clone, Debug, PartialEq)]
pub struct StageBars {
    /// One group per stage, first to last.
    pub groups: Vec<Group>,
    /// One line per distinct device memory, lowest first.
    pub lines: Vec<Line>,
    /// The top of the plot, bytes: 5 % above the largest stage or device memory.
    pub scale_bytes: u64,
}

/// The chart for a comparison whose plans have these device and usable memories (bytes, in the
/// comparison's column order).
pub fn stage_bars(comparison: &Comparison, capacity_bytes: &[u64], usable_bytes: &[u64]) -> StageBars {
    let n_plans = capacity_bytes.len().max(1);
    let highest_stage = comparison.stages.iter().flat_map(|s| s.totals.iter().flatten()).copied().max();
    let highest = highest_stage.unwrap_or(0).max(capacity_bytes.iter().copied().max().unwrap_or(0));
    let scale_bytes = ((highest as f64) * 1.05).max(1.0) as u64;
    let frac = |bytes: u64| bytes as f64 / scale_bytes as f64;
    let n_groups = comparison.stages.len().max(1);
    let slot = 1.0 / n_groups as f64;
    // A group fills 80 % of its slot, so groups stand apart.
    let bar_w = slot * 0.8 / n_plans as f64;
    let every = n_groups.div_ceil(MAX_LABELS);
    let groups = comparison
        .stages
        .iter()
        .enumerate()
        .map(|(idx, row)| {
            let left = slot * idx as f64 + slot * 0.1;
            let bars = row
                .totals
                .iter()
                .enumerate()
                .filter_map(|(plan, total)| {
                    let bytes = (*total)?;
                    Some(Bar {
                        plan,
                        bytes,
                        x_frac: left + bar_w * plan as f64,
                        width_frac: bar_w,
                        height_frac: frac(bytes),
                        over: usable_bytes.get(plan).is_some_and(|&usable| usable < bytes),
                    })
                })
                .collect();
            Group {
                stage: row.stage,
                centre_frac: slot * (idx as f64 + 0.5),
                labelled: idx.is_multiple_of(every),
                bars,
            }
        })
        .collect();
    let mut lines: Vec<Line> = Vec::new();
    for (plan, &bytes) in capacity_bytes.iter().enumerate() {
        match lines.iter_mut().find(|l| l.bytes == bytes) {
            Some(line) => line.plans.push(plan),
            None => lines.push(Line { bytes, y_frac: frac(bytes), plans: vec![plan] }),
        }
    }
    trainplan_core::sort::sort_by_key(&mut lines, |l| l.bytes);
    StageBars { groups, lines, scale_bytes }
}

#[cfg(test)]
mod tests {
    use trainplan_core::{Plan, compare, evaluate};

    use super::*;

    fn plan(text: &str) -> Plan {
        Plan::from_json(text).unwrap()
    }

    /// Llama-3-8B pretraining on Megatron with PP 1, 2 and 4 (one, two and four stages), and PP 2
    /// on 8 × A100 40 GB.
    fn chart() -> (StageBars, Vec<trainplan_core::Report>) {
        let base = r#""model": "llama-3-8b", "framework": "megatron", "method": "pretrain", "batch": {"global_batch": 64}"#;
        let plans = [
            plan(&format!(r#"{{{base}}}"#)),
            plan(&format!(r#"{{{base}, "parallel": {{"pp": 2}}}}"#)),
            plan(&format!(r#"{{{base}, "parallel": {{"pp": 4}}}}"#)),
            plan(&format!(r#"{{{base}, "parallel": {{"pp": 2}}, "hardware": "a100-sxm-40g"}}"#)),
        ];
        let reports: Vec<_> = plans.iter().map(evaluate).collect();
        let files: Vec<_> = plans.iter().map(Plan::to_file).collect();
        let pairs: Vec<_> = files.iter().zip(&reports).collect();
        let c = compare::compare(&pairs);
        let capacity: Vec<u64> = reports.iter().map(|r| r.memory.capacity_bytes).collect();
        let usable: Vec<u64> = reports.iter().map(|r| r.memory.usable_bytes).collect();
        (stage_bars(&c, &capacity, &usable), reports)
    }

    #[test]
    fn each_stage_has_a_bar_per_plan_that_has_it() {
        let (chart, reports) = chart();
        assert_eq!(chart.groups.len(), 4);
        let plans = |g: &Group| g.bars.iter().map(|b| b.plan).collect::<Vec<_>>();
        assert_eq!(plans(&chart.groups[0]), [0, 1, 2, 3]);
        assert_eq!(plans(&chart.groups[1]), [1, 2, 3]);
        assert_eq!(plans(&chart.groups[3]), [2]);
        // Each bar is its stage's total, as the report has it, and its height is that share of the
        // plot.
        for g in &chart.groups {
            for b in &g.bars {
                assert_eq!(b.bytes, reports[b.plan].memory.stages[g.stage as usize].total);
                assert_eq!(b.height_frac, b.bytes as f64 / chart.scale_bytes as f64);
                assert_eq!(b.over, reports[b.plan].memory.usable_bytes < b.bytes);
            }
        }
        // PP 1 holds every layer on one stage: 140 GiB, above the H100's 80 GiB (the search's
        // space and compare tests say so too); the highest bar sets the plot, 5 % above it.
        let highest = chart.groups.iter().flat_map(|g| &g.bars).map(|b| b.bytes).max().unwrap();
        assert_eq!(highest, reports[0].memory.peak_bytes);
        assert_eq!(chart.scale_bytes, (highest as f64 * 1.05) as u64);
        assert!(chart.groups[0].bars[0].over);
    }

    #[test]
    fn bars_sit_side_by_side_inside_their_stage() {
        let (chart, _) = chart();
        for (idx, g) in chart.groups.iter().enumerate() {
            let (slot_left, slot_right) = (idx as f64 / 4.0, (idx + 1) as f64 / 4.0);
            assert!((g.centre_frac - (slot_left + slot_right) / 2.0).abs() < 1e-12);
            for pair in g.bars.windows(2) {
                assert!(pair[0].x_frac + pair[0].width_frac <= pair[1].x_frac + 1e-12, "{pair:?}");
            }
            for b in &g.bars {
                assert!(slot_left < b.x_frac && b.x_frac + b.width_frac < slot_right, "{b:?}");
                // A plan keeps its place in every group, so its colour lines up.
                assert!((b.x_frac - (slot_left + 0.025 + b.plan as f64 * 0.05)).abs() < 1e-12, "{b:?}");
            }
        }
    }

    #[test]
    fn one_line_per_device_memory() {
        let (chart, reports) = chart();
        // H100 SXM 80 GB and A100 SXM 40 GB (datasheets: 80 and 40 GiB of HBM).
        assert_eq!(chart.lines.len(), 2);
        assert_eq!((chart.lines[0].bytes, chart.lines[0].plans.clone()), (40 << 30, vec![3]));
        assert_eq!((chart.lines[1].bytes, chart.lines[1].plans.clone()), (80 << 30, vec![0, 1, 2]));
        assert_eq!(chart.lines[1].bytes, reports[0].memory.capacity_bytes);
        assert_eq!(chart.lines[1].y_frac, (80u64 << 30) as f64 / chart.scale_bytes as f64);
    }

    #[test]
    fn many_stages_label_every_kth() {
        let c = compare::Comparison {
            rows: Vec::new(),
            stages: (0..64).map(|s| compare::StageRow { stage: s, totals: vec![Some(1 << 30)] }).collect(),
            differences: Vec::new(),
            distinct: vec![Vec::new()],
            best: None,
        };
        let chart = stage_bars(&c, &[80 << 30], &[76 << 30]);
        let labelled: Vec<u64> = chart.groups.iter().filter(|g| g.labelled).map(|g| g.stage).collect();
        assert_eq!(labelled, (0..64).step_by(4).collect::<Vec<_>>());
        // No stage and no plan: an empty chart, no division by zero.
        let empty = compare::Comparison { stages: Vec::new(), ..c };
        let chart = stage_bars(&empty, &[], &[]);
        assert!(chart.groups.is_empty() && chart.lines.is_empty() && 0 < chart.scale_bytes);
    }
}
