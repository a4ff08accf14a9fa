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

use std::cell::RefCell;
use std::ops::Range;
use std::rc::Rc;

use crate::plan::{Framework, Plan};
use crate::schedule::{self, Schedule};

/// Whether a framework trains with Megatron's model parallelism (TP, PP, CP, EP): Megatron-LM and
/// the MindSpeed frameworks built on it. The others (DeepSpeed, LLaMA-Factory, VeRL's FSDP actor)
/// shard data-parallel only.
pub fn model_parallel(framework: Framework) -> bool {
    matches!(
        framework,
        Framework::Megatron | Framework::MindSpeedLlm | Framework::MindSpeedRl | Framework::VerlMegatron
    )
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
    /// The virtual stages in model order: `pp · chunks` of them. Shared: plans that split their
    /// layers alike share one list (`split_shared`), counted without atomics (`Rc`): a layout stays
    /// on the thread that made it (each part of a search runs on its own), and a search takes and
    /// drops these lists once or twice a plan.
    pub stages: Rc<[VirtualStage]>,
    /// What each rank holds over its chunks, summed once per split ([`Layout::rank`]).
    ranks: Rc<[RankHolds]>,
}

/// What one rank holds over its chunks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RankHolds {
    /// Its decoder layers.
    pub n_layers: u64,
    /// Whether it holds the input embedding.
    pub embedding: bool,
    /// Whether it holds the output layer and the loss.
    pub loss: bool,
    /// Its MTP layers.
    pub mtp: u64,
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
                let (tp, ep) = (u64::from(p.tp.get()), u64::from(p.ep.get()));
                // MindSpeed-RL's launch file trains EP with `moe_tp_extend_ep` (its resharding needs
                // it): each device holds experts ÷ (TP × EP) whole (MindSpeed
                // `mindspeed/features_manager/moe/tp_extend_ep.py`), the bytes of experts ÷ EP split
                // over TP, over expert-data-parallel groups of devices ÷ (PP × TP × EP).
                let etp = match plan.framework == Framework::MindSpeedRl && 1 < ep {
                    true => tp,
                    false => u64::from(p.etp.get()),
                };
                (tp, pp, vpp, u64::from(p.cp.get()), ep, etp)
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
        let (stages, ranks) = match parsed {
            Some(Ok(stages)) if stages.len() as u64 == pp * chunks => {
                let ranks = rank_holds(&stages, pp, chunks, schedule).into();
                (stages.into(), ranks)
            }
            _ => split_shared(plan, arch.n_layers, pp, chunks, schedule, mtp),
        };
        Layout { model_parallel: mp, tp, pp, vpp, cp, ep, etp, dp, edp, schedule, chunks, stages, ranks }
    }

    /// The virtual stage of `rank`'s chunk `chunk`.
    pub fn stage(&self, rank: u64, chunk: u64) -> &VirtualStage {
        &self.stages[stage_index(self.schedule, self.pp, rank, chunk)]
    }

    /// What `rank` holds over its chunks (nothing past the last rank).
    pub fn rank(&self, rank: u64) -> RankHolds {
        self.ranks.get(rank as usize).copied().unwrap_or_default()
    }

    /// The end of the run of ranks from `rank` on that hold alike ([`RankHolds`]: as many layers,
    /// the same embedding, loss and MTP layers): `rank + 1` at least.
    pub fn alike_until(&self, rank: u64) -> u64 {
        let from = rank as usize;
        let Some(first) = self.ranks.get(from) else { return rank + 1 };
        let alike = self.ranks[from + 1..].iter().take_while(|holds| *holds == first).count();
        rank + 1 + alike as u64
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
        self.rank(rank).n_layers
    }

    /// Whether `rank` holds the input embedding.
    pub fn holds_embedding(&self, rank: u64) -> bool {
        self.rank(rank).embedding
    }

    /// Whether `rank` holds the output layer and the loss.
    pub fn holds_loss(&self, rank: u64) -> bool {
        self.rank(rank).loss
    }

    /// The MTP layers `rank` holds.
    pub fn rank_mtp(&self, rank: u64) -> u64 {
        self.rank(rank).mtp
    }
}

/// The index in model order of `rank`'s chunk `chunk`: every layout puts a rank's first chunk at
/// the rank's own position.
fn stage_index(schedule: Schedule, pp: u64, rank: u64, chunk: u64) -> usize {
    match chunk {
        0 => rank as usize,
        _ => schedule::position(schedule, pp as u32, rank as u32, chunk as u32) as usize,
    }
}

/// What each of the `pp` ranks holds over its `chunks` chunks of `stages`.
fn rank_holds(stages: &[VirtualStage], pp: u64, chunks: u64, schedule: Schedule) -> Vec<RankHolds> {
    (0..pp)
        .map(|rank| {
            let mut holds = RankHolds::default();
            for chunk in 0..chunks {
                let Some(stage) = stages.get(stage_index(schedule, pp, rank, chunk)) else { continue };
                holds.n_layers += stage.layers.end.saturating_sub(stage.layers.start);
                holds.embedding |= stage.embedding;
                holds.loss |= stage.loss;
                holds.mtp += stage.mtp;
            }
            holds
        })
        .collect()
}

/// What [`split`] reads of a plan besides the counts it is given.
type SplitKey = (u64, u64, u64, Schedule, u64, bool, bool);

/// A split's stages and what each rank holds of them.
type Split = (Rc<[VirtualStage]>, Rc<[RankHolds]>);

/// [`split`], the last list kept per thread and shared with the next plan that splits alike: a
/// search walks micro-batches, recomputation and host-memory choices within each split (Llama 3.1
/// 70B on 1,024 H100: 2,416 lists made for the 18,610 layouts its memory estimates make), and
/// listing a deep pipeline's 80 virtual stages anew had been an eighth of the search's instructions.
fn split_shared(plan: &Plan, n_layers: u64, pp: u64, chunks: u64, schedule: Schedule, mtp: u64) -> Split {
    thread_local! {
        static LAST: RefCell<Option<(SplitKey, Split)>> = const { RefCell::new(None) };
    }
    let p = &plan.parallel;
    let key = (n_layers, pp, chunks, schedule, mtp, p.uneven_layers, p.account_embedding_loss);
    LAST.with(|last| {
        let mut last = last.borrow_mut();
        match &*last {
            Some((k, (stages, ranks))) if *k == key => (Rc::clone(stages), Rc::clone(ranks)),
            _ => {
                let stages = split(plan, n_layers, pp, chunks, schedule, mtp);
                let ranks: Rc<[RankHolds]> = rank_holds(&stages, pp, chunks, schedule).into();
                let stages: Rc<[VirtualStage]> = stages.into();
                *last = Some((key, (Rc::clone(&stages), Rc::clone(&ranks))));
                (stages, ranks)
            }
        }
    })
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

/// The layout string of one stage per rank holding `sizes` decoder layers in turn, the embedding
/// on the first, `mtp` MTP layers and the loss on the last (`Et*17|t*20|t*22|t*21L`): what
/// MindSpeed-LLM's `--num-layer-list 17,20,22,21` (with `--mtp-num-layers`, whose layers follow the
/// last stage's) lays out.
pub fn of_stage_sizes(sizes: &[u64], mtp: u64) -> String {
    let last = sizes.len().saturating_sub(1);
    let mtp = match mtp {
        0 => String::new(),
        1 => "m".to_owned(),
        n => format!("m*{n}"),
    };
    let stage = |(i, n): (usize, &u64)| {
        let end = if i == last { format!("{mtp}L") } else { String::new() };
        let layers = if *n == 0 { String::new() } else { format!("t*{n}") };
        format!("{}{layers}{end}", if i == 0 { "E" } else { "" })
    };
    sizes.iter().enumerate().map(stage).collect::<Vec<_>>().join("|")
}

/// The decoder layers each of `stages` virtual stages holds (in model order) when `padded` layer
/// slots split evenly over them and the slots `noop` name hold no layer: MindSpeed's
/// `--noop-layers` (mindspeed/core/transformer/transformer_block.py `NoopTransformerLayer`, which
/// returns its input and has no parameters), which pads a model's layers to a count the pipeline
/// divides (MindSpeed-RL's `configs/grpo_qwen3_235b_a22b_A2.yaml`: Qwen3-235B's 94 layers as 96,
/// slots 5 and 95 empty, over 16 stages). The last stage may hold none, the output head and loss
/// alone (GLM-5's MindSpeed-LLM script, `examples/mcore/glm5/pretrain_glm5_744b_4k_A3_ptd.sh`:
/// 78 layers as 80 over 8 × 5 stages of 2, slots 78 and 79 empty; Megatron's layouts take a stage
/// of the loss alone, `pipeline_parallel_layer_layout.py`). `None` when the slots do not split
/// evenly, a slot is out of range or named twice, or another stage would hold no layer.
pub fn noop_stage_sizes(padded: u64, stages: u64, noop: &[u64]) -> Option<Vec<u64>> {
    // A stage holds at least one slot, and no model has more layers than a plan file takes.
    let fits = 0 < stages && stages <= padded && padded <= MAX_LAYER_SLOTS && padded.is_multiple_of(stages);
    if !fits || noop.iter().any(|&i| padded <= i) {
        return None;
    }
    let mut sorted = noop.to_vec();
    sorted.sort_unstable();
    sorted.dedup();
    if sorted.len() != noop.len() {
        return None;
    }
    let per = padded / stages;
    let mut sizes = vec![per; stages as usize];
    for i in sorted {
        sizes[(i / per) as usize] -= 1;
    }
    let (_, before_last) = sizes.split_last()?;
    before_last.iter().all(|&n| 0 < n).then_some(sizes)
}

/// The most layer slots [`noop_stage_sizes`] lays out: far above any model (DeepSeek-V3 has 61),
/// and a bound on the work an imported file can ask for.
const MAX_LAYER_SLOTS: u64 = 1 << 16;

/// The decoder layers per stage of a layout [`of_stage_sizes`] could have written (one stage per
/// rank, the embedding on the first alone, the loss and any MTP layers on the last alone); `None`
/// for any other layout, and for one that does not parse.
pub fn listed_stage_sizes(layout: &str, pp: u64) -> Option<Vec<u64>> {
    let stages = parse(layout).ok()?;
    let last = stages.len().checked_sub(1)?;
    let plain = stages.len() as u64 == pp
        && stages
            .iter()
            .enumerate()
            .all(|(i, s)| s.embedding == (i == 0) && s.loss == (i == last) && (s.mtp == 0 || i == last));
    plain.then(|| stages.iter().map(|s| s.layers.end - s.layers.start).collect())
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
        // MindSpeed-LLM's list of layers per stage as a layout and back; MTP layers follow the
        // last stage's (`--mtp-num-layers`); a layout with VPP, MTP elsewhere or the embedding
        // elsewhere is no such list.
        assert_eq!(of_stage_sizes(&[17, 20, 22, 21], 0), "Et*17|t*20|t*22|t*21L");
        assert_eq!(listed_stage_sizes("Et*17|t*20|t*22|t*21L", 4), Some(vec![17, 20, 22, 21]));
        assert_eq!(listed_stage_sizes("Et*17|t*20|t*22|t*21L", 2), None);
        assert_eq!(of_stage_sizes(&[3, 3, 3, 1], 1), "Et*3|t*3|t*3|t*1mL");
        assert_eq!(listed_stage_sizes("Et*3|t*3|t*3|tmL", 4), Some(vec![3, 3, 3, 1]));
        assert_eq!(listed_stage_sizes("Et*3|t*3|tm|t*3L", 4), None);
        assert_eq!(listed_stage_sizes("t*3|Et*3|t*3|t*3L", 4), None);
        assert_eq!(of_stage_sizes(&[5], 2), "Et*5m*2L");
        assert_eq!(parse("Ex|L"), Err(LayoutError::Character('x')));
        assert_eq!(parse("Et*99999999999999999999|L"), Err(LayoutError::TooLong));
    }

    /// MindSpeed's empty slots: MindSpeed-RL's Qwen3-235B config (94 layers as 96, slots 5 and 95
    /// empty, PP 16) and MindSpeed-LLM's DeepSeek-V3 scripts (61 as 64, slots 61–63, PP 8).
    #[test]
    fn empty_slots_leave_their_stages_a_layer_fewer() {
        let mut qwen = vec![6; 16];
        (qwen[0], qwen[15]) = (5, 5);
        assert_eq!(noop_stage_sizes(96, 16, &[5, 95]), Some(qwen));
        assert_eq!(noop_stage_sizes(64, 8, &[61, 62, 63]), Some(vec![8, 8, 8, 8, 8, 8, 8, 5]));
        assert_eq!(noop_stage_sizes(64, 8, &[64]), None);
        assert_eq!(noop_stage_sizes(64, 8, &[1, 1]), None);
        assert_eq!(noop_stage_sizes(65, 8, &[]), None);
        assert_eq!(noop_stage_sizes(16, 8, &[0, 1]), None);
        // GLM-5's MindSpeed-LLM script: 78 layers as 80 over PP 8 × VPP 5, slots 78 and 79 empty,
        // the last virtual stage the head and loss alone.
        let mut glm5 = vec![2; 40];
        glm5[39] = 0;
        assert_eq!(noop_stage_sizes(80, 40, &[78, 79]), Some(glm5));
        // A middle stage of none is still refused.
        assert_eq!(noop_stage_sizes(80, 40, &[76, 77]), None);
        let layout = of_stage_sizes(&[2, 2, 0], 1);
        assert_eq!(layout, "Et*2|t*2|mL");
        assert_eq!(parse(&layout).map(|stages| stages.len()), Ok(3));
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

    /// A layout made right after another plan's (which the last split kept per thread may be) is the
    /// one made from scratch: the same stages as `split` lists, and each rank's sums those of a walk
    /// over its chunks. The plans change every input of the split in turn, and each comes back.
    #[test]
    fn a_shared_split_is_the_fresh_one() {
        // Qwen2.5-7B has 28 layers, Llama 3.1 8B 32. Each pair differs in one input of the split:
        // the model's layers (0, 1), uneven first and last stages over interleaved chunks (1, 2),
        // the embedding and loss counted as layers (3, 4), the schedule's placement of chunks (5,
        // 6), the MTP layers (7, 8); then a layout string (9).
        let plans: Vec<Plan> = [
            ("qwen2.5-7b", r#""pp": 6, "vpp": 2"#, 0),
            ("llama-3.1-8b", r#""pp": 6, "vpp": 2"#, 0),
            ("llama-3.1-8b", r#""pp": 6, "vpp": 2, "uneven_layers": true"#, 0),
            ("qwen2.5-7b", r#""pp": 3"#, 0),
            ("qwen2.5-7b", r#""pp": 3, "account_embedding_loss": true"#, 0),
            ("qwen2.5-7b", r#""pp": 4, "vpp": 2"#, 0),
            ("qwen2.5-7b", r#""pp": 4, "schedule": "dualpipev""#, 0),
            ("llama-3.1-8b", r#""pp": 4"#, 0),
            ("llama-3.1-8b", r#""pp": 4"#, 1),
            ("qwen2.5-7b", r#""pp": 2, "vpp": 2, "pipeline_layout": "Et*6|t*7|t*7|t*8L""#, 0),
        ]
        .iter()
        .map(|(model, parallel, mtp)| {
            let text = format!(
                r#"{{"model": "{model}", "framework": "megatron", "method": "pretrain", "cluster": {{"nodes": 8}}, "parallel": {{{parallel}}}, "mtp_layers": {mtp}}}"#
            );
            Plan::from_json(&text).unwrap_or_else(|e| panic!("{parallel}: {e}"))
        })
        .collect();
        for order in
            [vec![0, 1, 0, 1, 2, 1, 3, 4, 3, 5, 6, 5, 7, 8, 7, 9, 0], (0..plans.len()).rev().collect()]
        {
            for i in order {
                let plan = &plans[i];
                let layout = Layout::of(plan);
                let fresh = match plan.parallel.pipeline_layout.as_deref().map(parse) {
                    Some(Ok(stages)) => stages,
                    _ => split(
                        plan,
                        plan.model.arch.n_layers,
                        layout.pp,
                        layout.chunks,
                        layout.schedule,
                        u64::from(plan.mtp_layers),
                    ),
                };
                assert_eq!(&*layout.stages, &fresh[..], "plan {i}");
                for rank in 0..layout.pp {
                    let walked = layout.rank_stages(rank).fold(RankHolds::default(), |h, s| RankHolds {
                        n_layers: h.n_layers + (s.layers.end - s.layers.start),
                        embedding: h.embedding || s.embedding,
                        loss: h.loss || s.loss,
                        mtp: h.mtp + s.mtp,
                    });
                    assert_eq!(layout.rank(rank), walked, "plan {i}, rank {rank}");
                }
            }
        }
    }
}
