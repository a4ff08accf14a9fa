//! A plan's layout, computed once: the parallel sizes that take effect on its framework, and which
//! decoder layers, embedding, loss and multi-token-prediction (MTP) layers each virtual pipeline
//! stage holds, and which rank runs it. Memory, time, rules and the emitters read it from here, so
//! they never disagree about where a layer lives.
//!
//! The split, in order of precedence:
//! 1. Megatron's `--pipeline-model-parallel-layout` string (`parallel.pipeline_layout`), parsed as
//!    Megatron parses it (megatron/core/transformer/pipeline_parallel_layer_layout.py,
//!    `parse_str_to_list`, core_v0.19.0);
//! 2. the embedding and the loss counted as layers (`--account-for-embedding-in-pipeline-split
//!    --account-for-loss-in-pipeline-split`, [`split_layers`]);
//! 3. uneven first and last stages (`--decoder-first/last-pipeline-num-layers`), each rank's layers
//!    split evenly over its virtual chunks as Megatron does (megatron/core/transformer/
//!    transformer_block.py `get_num_layers_to_build`: the rank's count ÷ vpp);
//! 4. an even split, or the nearest uneven one ([`stage_layers`]).
//!
//! Without a layout string the embedding sits on the first virtual stage, and the loss and the MTP
//! layers on the last (Megatron's post-process stage; `mtp_standalone` only with a layout).

use std::ops::Range;

use crate::plan::{Framework, Plan};
use crate::schedule::{self, Schedule};

/// Whether a framework trains with Megatron's model parallelism (TP, PP, CP, EP): Megatron-LM and
/// the MindSpeed frameworks built on it. The others (DeepSpeed, LLaMA-Factory, VeRL's FSDP actor)
/// shard data-parallel only.
pub fn model_parallel(framework: Framework) -> bool {
    matches!(framework, Framework::Megatron | Framework::MindSpeedLlm | Framework::MindSpeedRl)
}

/// The sizes that take effect and where every layer runs.
#[derive(Clone, Debug, PartialEq)]
pub struct Layout {
    /// [`model_parallel`] of the plan's framework.
    pub model_parallel: bool,
    /// Tensor parallel size (1 off the Megatron path).
    pub tp: u64,
    /// Pipeline stages (at most one per layer).
    pub pp: u64,
    /// Virtual chunks per rank the plan runs: the layout string's, else the plan's capped at one
    /// layer per chunk (DualPipeV's two chunks are counted in [`Layout::chunks`], not here).
    pub vpp: u64,
    /// Context parallel size (VeRL: Ulysses sequence parallel).
    pub cp: u64,
    /// Expert parallel size.
    pub ep: u64,
    /// Expert tensor parallel size.
    pub etp: u64,
    /// Data parallel size: devices ÷ (tp · pp · cp), at least 1.
    pub dp: u64,
    /// Expert data parallel size: devices ÷ (pp · ep · etp) (Megatron `parallel_state.py`).
    pub edp: u64,
    /// The schedule the pipeline runs.
    pub schedule: Schedule,
    /// Model chunks per rank: `vpp`, or 2 under DualPipeV.
    pub chunks: u64,
    /// The virtual stages in model order: `pp · chunks` of them.
    pub stages: Vec<VirtualStage>,
}

/// What one virtual pipeline stage holds.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct VirtualStage {
    /// Its decoder layers (indices into the model's layers).
    pub layers: Range<u64>,
    /// Whether it holds the input embedding.
    pub embedding: bool,
    /// Whether it holds the output layer and the loss.
    pub loss: bool,
    /// Its MTP layers.
    pub mtp: u64,
}

impl Layout {
    /// The plan's layout.
    pub fn of(plan: &Plan) -> Layout {
        let arch = &plan.model.arch;
        let p = &plan.parallel;
        let n_layers = arch.n_layers.max(1);
        let mp = model_parallel(plan.framework);
        let parsed = match mp {
            true => plan.parallel.pipeline_layout.as_deref().map(parse),
            false => None,
        };
        let (tp, pp, vpp, cp, ep, etp) = match mp {
            true => {
                let pp = u64::from(p.pp.get()).min(n_layers);
                let vpp = match &parsed {
                    Some(Ok(stages)) if (stages.len() as u64).is_multiple_of(pp) => stages.len() as u64 / pp,
                    // Chunks beyond the layer count would hold no layer: at most n_layers ÷ pp per
                    // rank, the embedding and the loss counted when the split counts them.
                    _ => {
                        let slots = n_layers + if p.account_embedding_loss { 2 } else { 0 };
                        u64::from(p.vpp.get()).min((slots / pp).max(1))
                    }
                };
                (
                    u64::from(p.tp.get()),
                    pp,
                    vpp,
                    u64::from(p.cp.get()),
                    u64::from(p.ep.get()),
                    u64::from(p.etp.get()),
                )
            }
            // VeRL's FSDP actor splits sequences with Ulysses (`ulysses_sequence_parallel_size`), which
            // the plan calls cp; the other HF frameworks have no such split.
            false if plan.framework == Framework::Verl => (1, 1, 1, u64::from(p.cp.get()), 1, 1),
            false => (1, 1, 1, 1, 1, 1),
        };
        let n_devices = plan.cluster.n_devices();
        let dp = (n_devices / (tp * pp * cp).max(1)).max(1);
        let edp = (n_devices / (pp * ep * etp).max(1)).max(1);
        let schedule = crate::time::schedule_of(plan, vpp);
        // GPipe's and ZB-H1's orders run one chunk a rank (`schedule::orders`): virtual chunks would
        // wait for passes no rank runs.
        let vpp = match schedule {
            Schedule::GPipe | Schedule::ZbH1 => 1,
            _ => vpp,
        };
        let chunks = if schedule == Schedule::DualPipeV { 2 } else { vpp };
        let mtp = match mp {
            true => u64::from(plan.mtp_layers),
            false => 0,
        };
        let stages = match parsed {
            Some(Ok(stages)) if stages.len() as u64 == pp * chunks => stages,
            _ => split(plan, arch.n_layers, pp, chunks, schedule, mtp),
        };
        Layout { model_parallel: mp, tp, pp, vpp, cp, ep, etp, dp, edp, schedule, chunks, stages }
    }

    /// The virtual stage of `rank`'s chunk `chunk`.
    pub fn stage(&self, rank: u64, chunk: u64) -> &VirtualStage {
        // Every layout puts a rank's first chunk at the rank's own position.
        let vs = match chunk {
            0 => rank,
            _ => u64::from(schedule::position(self.schedule, self.pp as u32, rank as u32, chunk as u32)),
        };
        &self.stages[vs as usize]
    }

    /// The virtual stages of `rank`, chunk 0 first.
    pub fn rank_stages(&self, rank: u64) -> impl Iterator<Item = &VirtualStage> + Clone {
        (0..self.chunks).map(move |chunk| self.stage(rank, chunk))
    }

    /// The decoder layers `rank` holds, chunk by chunk.
    pub fn rank_layers(&self, rank: u64) -> impl Iterator<Item = u64> + Clone + '_ {
        self.rank_stages(rank).flat_map(|s| s.layers.clone())
    }

    /// How many decoder layers `rank` holds.
    pub fn rank_n_layers(&self, rank: u64) -> u64 {
        self.rank_stages(rank).map(|s| s.layers.end - s.layers.start).sum()
    }

    /// Whether `rank` holds the input embedding.
    pub fn holds_embedding(&self, rank: u64) -> bool {
        self.rank_stages(rank).any(|s| s.embedding)
    }

    /// Whether `rank` holds the output layer and the loss.
    pub fn holds_loss(&self, rank: u64) -> bool {
        self.rank_stages(rank).any(|s| s.loss)
    }

    /// The MTP layers `rank` holds.
    pub fn rank_mtp(&self, rank: u64) -> u64 {
        self.rank_stages(rank).map(|s| s.mtp).sum()
    }
}

/// The split without a layout string (cases 2–4 of the module's list), in model order.
fn split(
    plan: &Plan,
    n_layers: u64,
    pp: u64,
    chunks: u64,
    schedule: Schedule,
    mtp: u64,
) -> Vec<VirtualStage> {
    let p = &plan.parallel;
    let n = pp * chunks;
    let interleaved_uneven = match uneven_ends(n_layers, pp) {
        // Megatron splits each uneven rank's layers evenly over its chunks; rank r's chunk c is
        // virtual stage c · pp + r.
        Some(ends) if p.uneven_layers && 1 < chunks && schedule == Schedule::Interleaved => {
            let (first, middle, last) = ends;
            [first, middle, last].iter().all(|s| s.is_multiple_of(chunks) && chunks <= *s).then_some(ends)
        }
        _ => None,
    };
    let (sizes, count) = match interleaved_uneven {
        // Stage idx holds what its rank's share gives stage idx mod pp.
        Some((first, middle, last)) => {
            (Sizes::Ends { n: pp, first: first / chunks, middle: middle / chunks, last: last / chunks }, n)
        }
        None => split_sizes(n_layers, n, p.account_embedding_loss),
    };
    // More stages than layers (DualPipeV's 2·pp over a shallow model): the rest hold none.
    let last = n.saturating_sub(1);
    sizes
        .ranges(count, n)
        .zip(0..)
        .map(|(layers, idx)| VirtualStage {
            layers,
            embedding: idx == 0,
            loss: idx == last,
            mtp: if idx == last { mtp } else { 0 },
        })
        .collect()
}

/// How many layers each of a run of stages holds, worked out per stage rather than listed.
#[derive(Clone, Copy)]
enum Sizes {
    /// `first`, then `middle` each, and `last` for the last of `n`; past `n`, again from the first.
    Ends { n: u64, first: u64, middle: u64, last: u64 },
    /// `base` each, one more for the first `extra`.
    Spread { base: u64, extra: u64 },
}

impl Sizes {
    fn at(&self, idx: u64) -> u64 {
        match self {
            // Past `n` only when cycling (interleaved chunks): no division for the others.
            Sizes::Ends { n, first, middle, last } => match if idx < *n { idx } else { idx % n } {
                0 => *first,
                i if i + 1 == *n => *last,
                _ => *middle,
            },
            Sizes::Spread { base, extra } => base + u64::from(idx < *extra),
        }
    }

    /// The ranges of `n` stages in order from layer 0, of which the first `count` hold layers.
    fn ranges(self, count: u64, n: u64) -> impl Iterator<Item = std::ops::Range<u64>> {
        let mut start = 0;
        (0..n).map(move |idx| {
            let len = if idx < count { self.at(idx) } else { 0 };
            start += len;
            start - len..start
        })
    }
}

/// The decoder layers of each stage. When they divide, every stage takes n ÷ pp. When not, the
/// layout Megatron can express (`--decoder-first-pipeline-num-layers F --decoder-last-pipeline-num-layers L`,
/// `arguments.py`: the middle pp − 2 stages split the rest evenly) and MindSpeed's `--num-layer-list`
/// can list: the middle stages take ⌈n ÷ pp⌉ each and the first and last share the rest, the
/// first the smaller half (it also holds the embedding). DeepSeek-V3's 61 layers on 8 stages:
/// 6, 8 × 6, 7. Where no such layout exists (the rest would leave a stage empty), the first stages
/// take one layer more than the others.
pub fn stage_layers(n_layers: u64, pp: u64) -> Vec<std::ops::Range<u64>> {
    let (sizes, count) = stage_sizes(n_layers, pp);
    sizes.ranges(count, count).collect()
}

/// [`stage_layers`]' sizes, and how many stages have them (pp, at most one per layer).
fn stage_sizes(n_layers: u64, pp: u64) -> (Sizes, u64) {
    let pp = pp.clamp(1, n_layers.max(1));
    let sizes = match uneven_ends(n_layers, pp) {
        Some((first, middle, last)) => Sizes::Ends { n: pp, first, middle, last },
        None => Sizes::Spread { base: n_layers / pp, extra: n_layers % pp },
    };
    (sizes, pp)
}

/// The decoder layers of each of `chunks` pipeline stages (or virtual chunks), as Megatron splits
/// them. With `account_embedding_loss` (`--account-for-embedding-in-pipeline-split
/// --account-for-loss-in-pipeline-split`, megatron/training/arguments.py) the embedding and the
/// loss count as a layer each: n + 2 divide evenly, and the first and last chunks hold one
/// transformer layer fewer. Otherwise, or when n + 2 does not divide, [`stage_layers`].
pub fn split_layers(n_layers: u64, chunks: u64, account_embedding_loss: bool) -> Vec<std::ops::Range<u64>> {
    let (sizes, count) = split_sizes(n_layers, chunks, account_embedding_loss);
    sizes.ranges(count, count).collect()
}

/// [`split_layers`]' sizes, and how many stages have them.
fn split_sizes(n_layers: u64, chunks: u64, account_embedding_loss: bool) -> (Sizes, u64) {
    let accounted = n_layers + 2;
    if !(account_embedding_loss && 2 <= chunks && accounted.is_multiple_of(chunks) && 1 <= accounted / chunks)
    {
        return stage_sizes(n_layers, chunks);
    }
    let per = accounted / chunks;
    (Sizes::Ends { n: chunks, first: per - 1, middle: per, last: per - 1 }, chunks)
}

/// The first/last-stage layout of [`stage_layers`] for layers that do not divide by `pp` (≥ 2), or
/// `None` when they divide or no stage could keep a layer.
pub fn uneven_sizes(n_layers: u64, pp: u64) -> Option<Vec<u64>> {
    let (first, middle, last) = uneven_ends(n_layers, pp)?;
    let mut sizes = vec![middle; pp as usize];
    sizes[0] = first;
    sizes[pp as usize - 1] = last;
    Some(sizes)
}

/// [`uneven_sizes`] as (first, each middle stage, last).
fn uneven_ends(n_layers: u64, pp: u64) -> Option<(u64, u64, u64)> {
    if pp < 2 || n_layers.is_multiple_of(pp) {
        return None;
    }
    let middle = n_layers.div_ceil(pp);
    let rest = n_layers.checked_sub((pp - 2) * middle)?;
    let first = rest / 2;
    let last = rest - first;
    (1 <= first).then_some((first, middle, last))
}

/// Why a layout string is not one Megatron accepts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LayoutError {
    /// A character other than `E`, `L`, `t`, `m`, `|`, `,` or a `(…)*n` / `x*n` repetition.
    Character(char),
    /// Unrolled, the layout is longer than any model needs.
    TooLong,
}

/// The most layer symbols an unrolled layout may hold: far beyond any model (the largest published
/// have a few hundred layers), small enough that a typo like `t*99999999` costs nothing.
const UNROLLED_MAX: usize = 1 << 16;

/// Megatron's `PipelineParallelLayerLayout.parse_str_to_list`: commas are cosmetic; `(…)*n` repeats
/// what the parentheses hold and `x*n` one symbol, each applied once from left to right as Python's
/// `re.sub` does; `|` separates virtual stages in model order; `E` embedding, `t` decoder layer,
/// `m` MTP layer, `L` loss. Decoder layers are numbered in order.
pub fn parse(layout: &str) -> Result<Vec<VirtualStage>, LayoutError> {
    let text: Vec<char> = layout.chars().filter(|c| *c != ',').collect();
    let text = unroll_groups(&text)?;
    let text = unroll_symbols(&text)?;
    let mut stages = vec![VirtualStage::default()];
    let mut next_layer = 0;
    for c in text {
        let stage = stages.last_mut().expect("starts with one stage");
        match c {
            '|' => {
                stages.push(VirtualStage { layers: next_layer..next_layer, ..VirtualStage::default() });
            }
            'E' => stage.embedding = true,
            'L' => stage.loss = true,
            'm' => stage.mtp += 1,
            't' => {
                next_layer += 1;
                stage.layers.end = next_layer;
            }
            other => return Err(LayoutError::Character(other)),
        }
    }
    Ok(stages)
}

/// The layout's symbols per virtual stage as Megatron validates them: (embeddings, losses,
/// decoders, MTP) counted over every stage, for the rules.
pub fn counts(stages: &[VirtualStage]) -> (u64, u64, u64, u64) {
    stages.iter().fold((0, 0, 0, 0), |(e, l, t, m), s| {
        (e + u64::from(s.embedding), l + u64::from(s.loss), t + (s.layers.end - s.layers.start), m + s.mtp)
    })
}

/// `(…)*n` → the group n times (the regex `\(([^)]+)\)\*(\d+)`: the group runs to the first `)`).
fn unroll_groups(text: &[char]) -> Result<Vec<char>, LayoutError> {
    let mut res = Vec::with_capacity(text.len());
    let mut i = 0;
    while i < text.len() {
        let group = match text[i] {
            '(' => {
                text[i + 1..].iter().position(|c| *c == ')').map(|k| i + 1 + k).filter(|close| 1 < close - i)
            }
            _ => None,
        };
        if let Some(close) = group
            && let Some((times, end)) = repeat_count(text, close + 1)
        {
            push_times(&mut res, &text[i + 1..close], times)?;
            i = end;
            continue;
        }
        res.push(text[i]);
        i += 1;
    }
    Ok(res)
}

/// `x*n` → x n times (the regex `(.)\*(\d+)`).
fn unroll_symbols(text: &[char]) -> Result<Vec<char>, LayoutError> {
    let mut res = Vec::with_capacity(text.len());
    let mut i = 0;
    while i < text.len() {
        if let Some((times, end)) = repeat_count(text, i + 1) {
            push_times(&mut res, &text[i..i + 1], times)?;
            i = end;
            continue;
        }
        res.push(text[i]);
        i += 1;
    }
    Ok(res)
}

/// `*digits` at `at`: the count and where it ends.
fn repeat_count(text: &[char], at: usize) -> Option<(u64, usize)> {
    if text.get(at) != Some(&'*') {
        return None;
    }
    let digits = text[at + 1..].iter().take_while(|c| c.is_ascii_digit()).count();
    if digits == 0 {
        return None;
    }
    let count = text[at + 1..at + 1 + digits]
        .iter()
        .try_fold(0u64, |acc, c| acc.checked_mul(10)?.checked_add(u64::from(c.to_digit(10)?)))
        .unwrap_or(u64::MAX);
    Some((count, at + 1 + digits))
}

fn push_times(res: &mut Vec<char>, what: &[char], times: u64) -> Result<(), LayoutError> {
    let total = (what.len() as u64).saturating_mul(times).saturating_add(res.len() as u64);
    if UNROLLED_MAX as u64 <= total {
        return Err(LayoutError::TooLong);
    }
    for _ in 0..times {
        res.extend_from_slice(what);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Megatron's own docstring example: "Ettt|(tt|)*29,m|L" is
    /// `[["E","t","t","t"]] + [["t","t"]] * 29 + [["m"], ["L"]]`.
    #[test]
    fn parses_megatrons_docstring_example() {
        let stages = parse("Ettt|(tt|)*29,m|L").unwrap();
        assert_eq!(stages.len(), 32);
        assert!(stages[0].embedding && stages[0].layers == (0..3));
        assert!(stages[1..30].iter().all(|s| s.layers.end - s.layers.start == 2));
        assert_eq!(stages[30].mtp, 1);
        assert!(stages[31].loss && stages[31].layers.is_empty());
        assert_eq!(counts(&stages), (1, 1, 61, 1));
    }

    /// The regex comments in `parse_str_to_list`: `xy(ab|cd|ef)*2,pq -> xyab|cd|efab|cd|efpq`,
    /// `(ab)*3 -> ababab`, `ab,(cd|)*2 -> abcd|cd|`, `(|ab)*2,cd -> |ab|abcd` (with layer symbols).
    #[test]
    fn unrolls_as_the_regexes_do() {
        let unroll = |s: &str| {
            let t: Vec<char> = s.chars().filter(|c| *c != ',').collect();
            unroll_symbols(&unroll_groups(&t).unwrap()).unwrap().into_iter().collect::<String>()
        };
        assert_eq!(unroll("Et(tm|tL|tt)*2,mL"), "Ettm|tL|tttm|tL|ttmL");
        assert_eq!(unroll("(tm)*3"), "tmtmtm");
        assert_eq!(unroll("Et,(tt|)*2"), "Ettt|tt|");
        assert_eq!(unroll("(|Et)*2,tL"), "|Et|EttL");
        assert_eq!(unroll("t*3|L"), "ttt|L");
        assert_eq!(parse("Ex|L"), Err(LayoutError::Character('x')));
        assert_eq!(parse("Et*99999999999999999999|L"), Err(LayoutError::TooLong));
    }

    /// The split worked out stage by stage is the one the docs of [`stage_layers`] and
    /// [`split_layers`] describe, for every layer count up to 130 over up to 40 stages: contiguous
    /// from layer 0, every layer once; Megatron's first/last layout where [`uneven_sizes`] gives
    /// one, else sizes within one of each other, the larger first; with the embedding and the loss
    /// accounted, the first and last one layer short of the rest.
    #[test]
    fn splits_stage_by_stage_as_documented() {
        for n_layers in 1..=130u64 {
            for pp in 1..=40u64 {
                let lens = |ranges: &[Range<u64>]| -> Vec<u64> {
                    let mut end = 0;
                    for r in ranges {
                        assert_eq!(r.start, end, "{n_layers} layers, {pp} stages: contiguous");
                        end = r.end;
                    }
                    assert_eq!(end, n_layers, "{n_layers} layers, {pp} stages: every layer");
                    ranges.iter().map(|r| r.end - r.start).collect()
                };
                let sizes = lens(&stage_layers(n_layers, pp));
                assert_eq!(sizes.len() as u64, pp.min(n_layers));
                match uneven_sizes(n_layers, pp) {
                    Some(listed) => assert_eq!(sizes, listed),
                    None => assert!(
                        sizes.windows(2).all(|w| w[0] == w[1] || w[0] == w[1] + 1),
                        "{n_layers} layers, {pp} stages: {sizes:?}"
                    ),
                }
                let accounted = lens(&split_layers(n_layers, pp, true));
                if 2 <= pp && (n_layers + 2).is_multiple_of(pp) {
                    let per = (n_layers + 2) / pp;
                    assert_eq!(accounted[0], per - 1);
                    assert_eq!(accounted[pp as usize - 1], per - 1);
                    assert!(accounted[1..pp as usize - 1].iter().all(|&l| l == per));
                } else {
                    assert_eq!(accounted, sizes);
                }
            }
        }
    }
}
