//! A search in parts and back: which plans each part runs ([`Share`]), the fastest and the Pareto
//! front of what the parts found, and the parts [`merge`]d into the whole search's result.

use super::settings::Knobs;
use super::space::{Plans, walk_space};
use super::{Blocking, Candidate, Found, Partial, SearchResult, TOP};
use crate::plan::Plan;
use crate::report::Code;
use crate::{memory, rules};

/// The space of the search from `plan`, walked once, and the places in it that each of `parts`
/// parts runs, ascending ([`Share`]): a part's share found in that one walk rather than by another
/// walk per part, which on two threads had cost the 70B search on 1,024 H100 a fifth of its time.
pub(super) fn space_in_parts(plan: &Plan, parts: u32) -> (Plans, Vec<Vec<u32>>) {
    let (mut all, mut shares) = (Plans::default(), vec![Vec::new(); parts.max(1) as usize]);
    let mut run: Option<u64> = None;
    walk_space(plan, &mut |knobs, starts| {
        // As [`Share::place_of`] counts: the first plan is run 0's, whatever the walk marks.
        let this = run.map_or(0, |r| r + u64::from(starts));
        run = Some(this);
        let n = shares.len();
        shares[part_of(this, n)].push(all.len() as u32);
        all.push(knobs);
    });
    (all, shares)
}

/// Which plans of the space, met in order, part `part` of `parts` runs: the space cut into runs of
/// plans that differ only in the micro-batch and the rollout's settings (one training layout's,
/// whose memory [`memorize`](super::memorize) then reuses; were those spread over the parts too, a layout's
/// rollout settings would meet in one part in eight on two threads), and the runs spread over the
/// parts ([`part_of`]). Cut into contiguous shares instead, the shares of larger TP held more plans
/// that fit and took longer (70B on 1,024 H100 in halves: 28.5 and 39.5 ms, against 35.0 and 34.4
/// spread; medians of 15 alternated rounds).
pub(super) struct Share {
    part: usize,
    parts: usize,
    /// The last plan met: its place and its run.
    last: Option<(u32, u64)>,
}

impl Share {
    pub(super) fn new(part: u32, parts: u32) -> Share {
        Share { part: part as usize, parts: parts.max(1) as usize, last: None }
    }

    /// The place of the next plan of the space, if this part runs it; `starts_run` says whether
    /// that plan starts a run (as `walk_space` marks it).
    pub(super) fn place_of(&mut self, starts_run: bool) -> Option<u32> {
        let (place, run) = match self.last {
            None => (0, 0),
            Some((place, run)) => (place + 1, run + u64::from(starts_run)),
        };
        self.last = Some((place, run));
        (part_of(run, self.parts) == self.part).then_some(place)
    }
}

/// The part that run `run` of the space goes to, of `parts`: spread by a multiplicative hash
/// (Knuth's, the golden ratio's 64-bit fraction), since taking every n-th run would follow the
/// space's own periods (runs cycle through the settings of the knobs walked inside a layout, so a
/// part could hold one setting's runs: 70B on 32 H100 in two parts, 920 and 1,425 plans that fit;
/// by the hash 1,176 and 1,169).
fn part_of(run: u64, parts: usize) -> usize {
    ((run.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 32) % parts as u64) as usize
}

/// Sorts found plans by their place in the space (each place holds one plan, so no order is left
/// to ties). One sort for both callers: a search may find plans by the hundred thousand.
pub(super) fn in_space_order(found: &mut [Found]) {
    found.sort_unstable_by_key(|f| f.index);
}

/// Indices of the fastest [`TOP`] of `found`, fastest first, less memory breaking ties and then the
/// order of `found` (space order): the first [`TOP`] of `found` stably sorted so, kept in one pass
/// (a search may find plans by the hundred thousand, and only ten are wanted).
pub(super) fn fastest(found: &[Found]) -> Vec<u64> {
    let before = |a: &Found, b: &Found| {
        b.tokens_per_second.total_cmp(&a.tokens_per_second).then(a.peak_bytes.cmp(&b.peak_bytes)).is_lt()
    };
    let mut best: Vec<&Found> = Vec::with_capacity(TOP + 1);
    for f in found {
        // After every kept plan it does not come before: equals keep their order.
        let at = best.iter().position(|kept| before(f, kept)).unwrap_or(best.len());
        if at < TOP {
            best.insert(at, f);
            best.truncate(TOP);
        }
    }
    best.iter().map(|f| f.index).collect()
}

/// Indices of the Pareto front of `found`, least memory first: sorted by peak, a plan stays if it
/// is faster than every plan with less memory.
pub(super) fn pareto(found: &[Found]) -> Vec<u64> {
    let mut by_peak: Vec<&Found> = found.iter().collect();
    crate::sort::sort_by(&mut by_peak, |a, b| {
        a.peak_bytes.cmp(&b.peak_bytes).then(b.tokens_per_second.total_cmp(&a.tokens_per_second))
    });
    let mut res = Vec::new();
    let mut fastest = 0.0;
    for f in by_peak {
        if fastest < f.tokens_per_second {
            fastest = f.tokens_per_second;
            res.push(f.index);
        }
    }
    res
}

/// Merges the parts of a search from `plan` ([`Search::part`](super::Search::part), all of them, in any order) into the
/// whole search's result. Parts that are not together one whole search (too few, of searches of
/// different sizes, or naming plans outside it or without their settings) are refused; that they
/// are `plan`'s is the caller's to know (the page checks the plan each worker read).
pub fn merge(plan: &Plan, parts: &[Partial]) -> Result<SearchResult, String> {
    let Some(size) = parts.first().map(|p| p.space) else { return Err("no part to merge".into()) };
    if let Some(p) = parts.iter().find(|p| p.space != size) {
        return Err(format!("the parts are of searches of {size} and {} plans", p.space));
    }
    let considered: u64 = parts.iter().map(|p| p.considered).sum();
    if considered != size {
        return Err(format!("the parts hold {considered} plans, the search {size}"));
    }
    if let Some(f) = parts.iter().flat_map(|p| &p.found).find(|f| size <= f.index) {
        return Err(format!("plan {} is outside the search's {size} plans", f.index));
    }
    if let Some(b) = parts.iter().flat_map(|p| &p.blocked).find(|b| size <= b.first) {
        return Err(format!("plan {} is outside the search's {size} plans", b.first));
    }
    let mut settings: Vec<(u64, Knobs)> = parts.iter().flat_map(|p| p.settings.iter().copied()).collect();
    crate::sort::sort_by(&mut settings, |a, b| a.0.cmp(&b.0));
    if let Some(index) =
        parts.iter().flat_map(Partial::named).find(|i| settings.binary_search_by_key(i, |s| s.0).is_err())
    {
        return Err(format!("plan {index} comes without its settings"));
    }
    Ok(assemble(plan, parts, |index| {
        let at = settings.binary_search_by_key(&index, |s| s.0).expect("checked above");
        settings[at].1
    }))
}

/// The rules the parts' plans that fit broke, merged: plans added up, the first place the least;
/// most often broken first, then the one broken earliest in the space, then in the order the rules
/// list them on that plan (the method before the batch: a plan alone in the space breaks both).
fn blocking(plan: &Plan, parts: &[Partial], knobs: &impl Fn(u64) -> Knobs) -> Vec<Blocking> {
    let base = Knobs::of(plan);
    let mut merged: Vec<(Code, u64, u64)> = Vec::new();
    for b in parts.iter().flat_map(|p| &p.blocked) {
        match merged.iter_mut().find(|m| m.0 == b.code) {
            Some(m) => (m.1, m.2) = (m.1 + b.plans, m.2.min(b.first)),
            None => merged.push((b.code, b.plans, b.first)),
        }
    }
    let mut work = plan.clone();
    let mut listed = |code: Code, first: u64| {
        knobs(first).set(&mut work);
        let errors = rules::errors(&work, &memory::estimate(&work));
        errors.iter().position(|f| f.code == code).unwrap_or(usize::MAX)
    };
    let mut keyed: Vec<_> =
        merged.into_iter().map(|(code, plans, first)| (code, plans, first, listed(code, first))).collect();
    crate::sort::sort_by(&mut keyed, |a, b| b.1.cmp(&a.1).then(a.2.cmp(&b.2)).then(a.3.cmp(&b.3)));
    keyed
        .into_iter()
        .map(|(code, plans, first, _)| Blocking { code, plans, changes: knobs(first).changes(base) })
        .collect()
}

/// The result from the parts' counts and found plans, each plan's knobs given by `knobs` from its
/// place in the space.
pub(super) fn assemble(plan: &Plan, parts: &[Partial], knobs: impl Fn(u64) -> Knobs) -> SearchResult {
    let base = Knobs::of(plan);
    // In space order, whatever share each part held: ties between equally fast plans go by place.
    let mut found: Vec<Found> = parts.iter().flat_map(|p| p.found.iter().copied()).collect();
    in_space_order(&mut found);
    let candidate = |index: u64| {
        let f = found.iter().find(|f| f.index == index).expect("an index from the list");
        Candidate {
            changes: knobs(f.index).changes(base),
            peak_bytes: f.peak_bytes,
            headroom_bytes: f.headroom_bytes,
            step_seconds: f.step_seconds,
            tokens_per_second: f.tokens_per_second,
            mfu_frac: f.mfu_frac,
        }
    };
    SearchResult {
        considered: parts.iter().map(|p| p.considered).sum(),
        pruned: parts.iter().map(|p| p.pruned).sum(),
        fit: parts.iter().map(|p| p.fit).sum(),
        feasible: parts.iter().map(|p| p.feasible).sum(),
        simulated: parts.iter().map(|p| p.simulated).sum(),
        best: fastest(&found).into_iter().map(candidate).collect(),
        pareto: pareto(&found).into_iter().map(candidate).collect(),
        blocked: blocking(plan, parts, &knobs),
    }
}

#[cfg(test)]
mod tests {
    use super::super::Search;
    use super::super::space::space;
    use super::*;

    /// Whether `knobs`, the plan after `before` in the space (if any), starts a run: differs from it in
    /// more than the micro-batch and the rollout's settings ([`Share`]).
    fn starts_run(before: Option<&Knobs>, knobs: &Knobs) -> bool {
        before.is_none_or(|b| {
            Knobs {
                micro_batch: knobs.micro_batch,
                rollout_tp: knobs.rollout_tp,
                rollout_ep: knobs.rollout_ep,
                ..*b
            } != *knobs
        })
    }

    /// The runs the walk marks are the runs comparing each plan with the one before finds, so a
    /// part in a Web Worker (marks) holds the plans a part on a thread (comparisons) does: over
    /// both families, MindSpeed-LLM's DualPipeV and swaps, and the rollout's settings of RL.
    #[test]
    fn the_walk_marks_the_runs_the_settings_show() {
        for text in [
            r#"{"model": "llama-3.1-70b", "framework": "megatron", "method": "pretrain", "cluster": {"nodes": 4}}"#,
            r#"{"model": "qwen2.5-7b", "framework": "mindspeed-llm", "method": "sft-full", "cluster": {"nodes": 2}}"#,
            r#"{"model": "qwen3-30b-a3b", "framework": "mindspeed-rl", "method": "grpo"}"#,
            r#"{"model": "qwen2.5-7b", "framework": "verl", "method": "grpo", "batch": {"seq_len": 8192}}"#,
            r#"{"model": "qwen2.5-7b", "framework": "deepspeed", "method": "sft-full"}"#,
            r#"{"model": "qwen2.5-7b", "framework": "mindspeed-llm", "method": "ppo"}"#,
        ] {
            let plan = Plan::from_json(text).expect("the plan reads");
            let (mut marked, mut compared, mut before) = (Vec::new(), Vec::new(), None);
            walk_space(&plan, &mut |knobs, starts| {
                marked.push(starts);
                compared.push(starts_run(before.as_ref(), &knobs));
                before = Some(knobs);
            });
            let runs = marked.iter().filter(|&&s| s).count();
            assert!(
                runs < marked.len() || marked.len() == 1,
                "{text}: {runs} runs of {} plans",
                marked.len()
            );
            assert_eq!(marked, compared, "{text}");
            let all = space(&plan);
            let (walked, shares) = space_in_parts(&plan, 3);
            assert!(walked.iter().eq(all.iter()), "{text}");
            // Every plan in one part, in order.
            let mut places: Vec<u32> = shares.iter().flatten().copied().collect();
            places.sort_unstable();
            assert!(places.iter().copied().eq(0..all.len() as u32), "{text}");
            for part in 0..3 {
                assert_eq!(Search::part(&plan, part, 3).places, shares[part as usize], "{text}: part {part}");
                // A thread's part holds the runs a comparison of each plan with the one before finds.
                let mut share = Share::new(part, 3);
                let mut before = None;
                let compared: Vec<u32> = all
                    .iter()
                    .filter_map(|knobs| share.place_of(starts_run(before.replace(knobs), knobs)))
                    .collect();
                assert_eq!(compared, shares[part as usize], "{text}: part {part}");
            }
        }
    }

    /// The one-pass selection keeps what a stable sort's first [`TOP`] would: over lists full of
    /// ties in speed and in memory, of every length around [`TOP`].
    #[test]
    fn the_fastest_are_the_first_of_the_stable_sort() {
        let mut seed = 0x2545_f491_4f6c_dd1d_u64;
        let mut next = |n: u64| {
            seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
            (seed >> 33) % n
        };
        for len in [0, 1, 9, 10, 11, 37, 300] {
            for _ in 0..20 {
                let found: Vec<Found> = (0..len)
                    .map(|index| Found {
                        index,
                        peak_bytes: next(4),
                        headroom_bytes: 0,
                        step_seconds: 1.0,
                        tokens_per_second: next(5) as f64,
                        mfu_frac: 0.5,
                    })
                    .collect();
                let mut sorted = found.clone();
                sorted.sort_by(|a, b| {
                    b.tokens_per_second.total_cmp(&a.tokens_per_second).then(a.peak_bytes.cmp(&b.peak_bytes))
                });
                let expected: Vec<u64> = sorted.iter().take(TOP).map(|f| f.index).collect();
                assert_eq!(fastest(&found), expected, "{found:?}");
            }
        }
    }
}
