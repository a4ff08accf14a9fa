//! Pipeline schedules against the closed forms for equal stages (Narayanan et al. 2021 §2.2;
//! Qi et al. 2023 §3), and the properties of any timeline.

use trainplan_core::schedule::{self, Costs, Pass, Schedule};

#[path = "../deep_pipelines.rs"]
mod deep_pipelines;
use deep_pipelines::Xorshift;

fn run(schedule: Schedule, pp: u32, vpp: u32, m: u32, costs: &Costs) -> schedule::Timeline {
    schedule::simulate(schedule, &schedule::orders(schedule, pp, vpp, m), costs).expect("no deadlock")
}

#[test]
fn one_f_one_b_and_gpipe_bubble_is_p_minus_one_over_m() {
    for (pp, m) in [(2, 4), (4, 8), (4, 16), (8, 8), (8, 64), (16, 48)] {
        let costs = Costs::uniform(pp, 1, 1.0, 2.0, 0.0, 0.0);
        for schedule in [Schedule::OneFOneB, Schedule::GPipe] {
            let t = run(schedule, pp, 1, m, &costs);
            let expected = f64::from(pp - 1) / f64::from(m);
            assert!(
                (t.bubble_ratio - expected).abs() < 1e-12,
                "{schedule:?} p={pp} m={m}: {}",
                t.bubble_ratio
            );
            // (m + p − 1)·(F + B) (Narayanan et al. 2021 §2.2.1).
            assert!((t.makespan_seconds - f64::from(m + pp - 1) * 3.0).abs() < 1e-9);
        }
    }
}

#[test]
fn interleaved_bubble_is_p_minus_one_over_v_m() {
    for (pp, vpp, m) in [(2, 2, 4), (4, 2, 8), (4, 4, 16), (8, 2, 16), (8, 3, 32)] {
        let costs = Costs::uniform(pp, vpp, 1.0 / f64::from(vpp), 2.0 / f64::from(vpp), 0.0, 0.0);
        let t = run(Schedule::Interleaved, pp, vpp, m, &costs);
        let expected = f64::from(pp - 1) / f64::from(vpp * m);
        assert!(
            (t.bubble_ratio - expected).abs() < 1e-9,
            "p={pp} v={vpp} m={m}: {} vs {expected}",
            t.bubble_ratio
        );
    }
}

#[test]
fn zb_h1_leaves_a_third_of_the_one_f_one_b_bubble() {
    // Qi et al. 2023 (the authors' schedule code asserts it): ZB-H1's bubble is (p − 1)(T_F + T_B − T_W)
    // with T_B the input-gradient pass; with T_F = T_B = T_W that is (p − 1)·T_F, a third of 1F1B's
    // (p − 1)(T_F + T_B + T_W).
    for (pp, m) in [(4, 8), (4, 16), (8, 24)] {
        let zb = run(Schedule::ZbH1, pp, 1, m, &Costs::uniform(pp, 1, 1.0, 1.0, 1.0, 0.0));
        let idle = zb.makespan_seconds - f64::from(m) * 3.0;
        assert!((idle - f64::from(pp - 1)).abs() < 1e-9, "p={pp} m={m}: idle {idle}");
    }
}

#[test]
fn uneven_stages_and_p2p_shift_the_bubble() {
    // The last stage also computes the head and loss: every micro-batch waits for it.
    let mut costs = Costs::uniform(4, 1, 1.0, 2.0, 0.0, 0.0);
    let (forward, backward, _) = costs.lists_mut();
    (forward[3], backward[3]) = (1.5, 3.0);
    let uneven = run(Schedule::OneFOneB, 4, 1, 16, &costs);
    let even = run(Schedule::OneFOneB, 4, 1, 16, &Costs::uniform(4, 1, 1.0, 2.0, 0.0, 0.0));
    assert!(even.makespan_seconds < uneven.makespan_seconds);
    // The slowest stage paces the steady state: at least m × its F + B.
    assert!(16.0 * 4.5 <= uneven.makespan_seconds);
    let slow_links = run(Schedule::OneFOneB, 4, 1, 16, &Costs::uniform(4, 1, 1.0, 2.0, 0.0, 0.25));
    assert!(even.makespan_seconds < slow_links.makespan_seconds);
}

#[test]
fn every_pass_runs_once_after_its_inputs() {
    for schedule in [Schedule::GPipe, Schedule::OneFOneB, Schedule::Interleaved, Schedule::ZbH1] {
        let (pp, vpp, m) = (4, if schedule == Schedule::Interleaved { 2 } else { 1 }, 8);
        let t = run(schedule, pp, vpp, m, &Costs::uniform(pp, vpp, 1.0, 2.0, 1.0, 0.1));
        let passes = if schedule == Schedule::ZbH1 { 3 } else { 2 };
        assert_eq!(t.events.len() as u32, pp * vpp * m * passes, "{schedule:?}");
        for e in &t.events {
            assert!(0.0 <= e.start_seconds && e.start_seconds < e.end_seconds, "{schedule:?}");
            if e.pass == Pass::B {
                let forward = t.events.iter().find(|f| {
                    f.pass == Pass::F
                        && f.stage == e.stage
                        && f.chunk == e.chunk
                        && f.microbatch == e.microbatch
                });
                assert!(forward.unwrap().end_seconds <= e.start_seconds, "{schedule:?}");
            }
        }
        // No rank runs two passes at once.
        for stage in 0..pp {
            let mut mine: Vec<_> = t.events.iter().filter(|e| e.stage == stage).collect();
            mine.sort_by(|a, b| a.start_seconds.total_cmp(&b.start_seconds));
            assert!(mine.windows(2).all(|w| w[0].end_seconds <= w[1].start_seconds + 1e-12), "{schedule:?}");
        }
        assert!(0.0 <= t.idle_frac && t.idle_frac < 1.0);
    }
}

#[test]
fn dual_pipe_v_bubble_matches_its_readme() {
    // deepseek-ai/DualPipe README: DualPipeV's bubble is (PP/2 − 1)(F&B + B − 3W) with PP counted in
    // stages, i.e. (p − 1)(F&B + B − 3W) for p ranks of two chunks each; with F = B_input = W = 1 a
    // full backward B is 2 and an overlapped F&B is 3, so every rank idles (p − 1)·2.
    for (pp, m) in [(2, 4), (4, 8), (4, 16), (8, 16), (8, 40)] {
        let t = run(Schedule::DualPipeV, pp, 2, m, &Costs::uniform(pp, 2, 1.0, 1.0, 1.0, 0.0));
        let idle = t.makespan_seconds - f64::from(m) * 6.0;
        assert!((idle - f64::from(pp - 1) * 2.0).abs() < 1e-9, "p={pp} m={m}: idle {idle}");
        // Every micro-batch ran forward, backward and weight gradients on both chunks of every rank.
        let passes = |pass| t.events.iter().filter(|e| e.pass == pass).count() as u32;
        assert_eq!(passes(Pass::F), 2 * pp * m);
        assert_eq!(passes(Pass::B), 2 * pp * m);
    }
}

/// The closed form the step time uses (`time::uniform_makespan`) equals the pass-by-pass
/// simulation wherever it answers, on random stage costs, sends, depths and micro-batch counts;
/// and it answers for every plan shaped like the common case (equal stages, a heavier last one).
#[test]
fn closed_form_makespan_equals_the_simulation() {
    use trainplan_core::time::uniform_makespan;
    let mut rng = Xorshift(0x9E37_79B9_7F4A_7C15);
    let (mut answered, mut declined) = (0, 0);
    for trial in 0..4000 {
        let schedule =
            [Schedule::GPipe, Schedule::OneFOneB, Schedule::Interleaved, Schedule::ZbH1][trial % 4];
        let pp = 1 + rng.below(12);
        let vpp = if schedule == Schedule::Interleaved { 2 + rng.below(3) } else { 1 };
        let m = 1 + rng.below(40);
        let m = if schedule == Schedule::Interleaved { m.div_ceil(pp) * pp } else { m };
        let (f, b, w) = (0.1 + rng.unit(), 0.1 + rng.unit(), if trial % 3 == 0 { 0.0 } else { rng.unit() });
        let mut costs = Costs::uniform(pp, vpp, f, b, w, rng.unit() * rng.unit() * 0.4);
        let last = (pp * vpp - 1) as usize;
        let (forward, backward, _) = costs.lists_mut();
        forward[last] += rng.unit() * 0.6;
        backward[last] += rng.unit() * 0.6;
        if trial % 7 == 0 {
            // An uneven stage: the closed form must decline.
            forward[rng.below(pp * vpp) as usize] += 0.25;
        }
        let simulated = run(schedule, pp, vpp, m, &costs).makespan_seconds;
        match uniform_makespan(schedule, m, &costs) {
            Some(closed) => {
                answered += 1;
                assert!(
                    (closed - simulated).abs() <= 1e-9 * simulated,
                    "{schedule:?} p{pp} v{vpp} m{m}: closed form {closed}, simulation {simulated}"
                );
            }
            None => declined += 1,
        }
    }
    assert!(1500 < answered && 500 < declined, "answered {answered}, declined {declined}");
    // The common case: even stages, the head on the last, a send well under a pass.
    for (schedule, pp, vpp) in
        [(Schedule::OneFOneB, 8, 1), (Schedule::Interleaved, 8, 4), (Schedule::GPipe, 4, 1)]
    {
        let mut costs = Costs::uniform(pp, vpp, 1.0, 2.0, 0.0, 0.01);
        let (forward, backward, _) = costs.lists_mut();
        forward[(pp * vpp - 1) as usize] += 0.1;
        backward[(pp * vpp - 1) as usize] += 0.2;
        assert!(uniform_makespan(schedule, 2 * pp, &costs).is_some(), "{schedule:?}");
    }
    // Interleaving runs whole groups of p micro-batches: another count has no closed form here.
    let costs = Costs::uniform(4, 2, 1.0, 2.0, 0.0, 0.0);
    assert!(uniform_makespan(Schedule::Interleaved, 8, &costs).is_some());
    assert!(uniform_makespan(Schedule::Interleaved, 6, &costs).is_none());
}

/// The bound a search prunes by before simulating (`time::makespan_bound`: each rank's fill, work
/// and drain) never exceeds the simulated makespan, for every schedule on uneven random costs,
/// sends (some longer than a pass), depths and micro-batch counts; it equals the closed form where
/// that answers for GPipe and 1F1B, and it is tighter than the busiest rank's work alone.
#[test]
fn the_makespan_bound_is_a_bound() {
    use trainplan_core::time::{makespan_bound, uniform_makespan};
    let mut rng = Xorshift(0x3C6E_F372_FE94_F82B);
    let schedules =
        [Schedule::GPipe, Schedule::OneFOneB, Schedule::Interleaved, Schedule::ZbH1, Schedule::DualPipeV];
    let mut tighter = 0;
    for trial in 0..3000 {
        let schedule = schedules[trial % schedules.len()];
        let pp = 1 + rng.below(12);
        let vpp = match schedule {
            Schedule::Interleaved => 2 + rng.below(3),
            Schedule::DualPipeV => 2,
            _ => 1,
        };
        let m = 1 + rng.below(40);
        let m = if schedule == Schedule::Interleaved { m.div_ceil(pp) * pp } else { m };
        let n = (pp * vpp) as usize;
        let mut draw =
            |zero: bool| (0..n).map(|_| if zero { 0.0 } else { 0.05 + rng.unit() }).collect::<Vec<f64>>();
        let (f, b) = (draw(false), draw(false));
        let w = draw(trial % 3 == 0);
        let p2p = if trial % 5 == 0 { 2.0 * rng.unit() } else { 0.1 * rng.unit() };
        let costs = Costs::new(pp, vpp, &f, &b, &w, p2p);
        let simulated = run(schedule, pp, vpp, m, &costs).makespan_seconds;
        let bound = makespan_bound(schedule, m, &costs);
        assert!(
            bound <= simulated * (1.0 + 1e-12),
            "{schedule:?} p{pp} v{vpp} m{m}: bound {bound} > {simulated}"
        );
        let busiest = f
            .chunks(vpp as usize)
            .zip(b.chunks(vpp as usize))
            .zip(w.chunks(vpp as usize))
            .map(|((f, b), w)| f.iter().chain(b).chain(w).sum::<f64>())
            .fold(0.0, f64::max);
        tighter += usize::from(f64::from(m) * busiest * (1.0 + 1e-9) < bound);
        if let (Schedule::GPipe | Schedule::OneFOneB, Some(form)) =
            (schedule, uniform_makespan(schedule, m, &costs))
        {
            assert!((form - bound).abs() <= 1e-9 * form, "{schedule:?} p{pp} m{m}: {form} vs {bound}");
        }
    }
    assert!(1000 < tighter, "tighter than the busiest rank in {tighter} trials");
    // Even stages with a heavier last one, where the closed form answers: the bound is it.
    for (schedule, pp) in [(Schedule::OneFOneB, 8), (Schedule::GPipe, 4)] {
        let mut costs = Costs::uniform(pp, 1, 1.0, 2.0, 0.0, 0.01);
        let (forward, backward, _) = costs.lists_mut();
        forward[(pp - 1) as usize] += 0.1;
        backward[(pp - 1) as usize] += 0.2;
        let form = uniform_makespan(schedule, 2 * pp, &costs).expect("even stages");
        assert!((form - makespan_bound(schedule, 2 * pp, &costs)).abs() <= 1e-12 * form);
    }
}

/// The makespan the step time takes from the simulation without keeping its passes is the drawn
/// timeline's, to the bit, for every schedule and uneven random costs.
#[test]
fn the_makespan_alone_is_the_timelines() {
    let mut rng = Xorshift(0x2545_F491_4F6C_DD1D);
    for trial in 0..600 {
        let schedule =
            [Schedule::GPipe, Schedule::OneFOneB, Schedule::Interleaved, Schedule::ZbH1, Schedule::DualPipeV]
                [trial % 5];
        let pp = 1 + rng.below(10);
        let vpp = match schedule {
            Schedule::Interleaved => 1 + rng.below(4),
            Schedule::DualPipeV => 2,
            _ => 1,
        };
        let m = 1 + rng.below(3 * pp);
        let n = (pp * vpp) as usize;
        let mut draw = |scale: f64| (0..n).map(|_| 0.05 + scale * rng.unit()).collect::<Vec<f64>>();
        let (forward, backward, weight) = (draw(1.0), draw(2.0), draw(1.0));
        let costs = Costs::new(pp, vpp, &forward, &backward, &weight, 0.1);
        let orders = schedule::orders(schedule, pp, vpp, m);
        let timeline = schedule::simulate(schedule, &orders, &costs).expect("no deadlock");
        assert_eq!(
            schedule::makespan(schedule, &orders, &costs),
            Some(timeline.makespan_seconds),
            "{schedule:?} p{pp} v{vpp} m{m}"
        );
    }
}

/// Deep pipelines, whose wavefronts the compiled program runs dozens of passes at a time (runs of
/// evenly spaced inputs and costs, in vector instructions): the makespan and the period it
/// measures are the timeline's, to the bit, on uneven random costs (`deep_pipelines::SHAPES`).
#[test]
fn deep_pipelines_run_to_the_timelines_bit() {
    let mut rng = Xorshift(0x9E37_79B9_7F4A_7C15);
    for (schedule, pp, vpp, m) in deep_pipelines::SHAPES {
        let costs = deep_pipelines::uneven_costs(&mut rng, pp, vpp);
        let timeline = run(schedule, pp, vpp, m, &costs);
        let program = schedule::cached(schedule, pp, vpp, m).expect("no deadlock");
        let (makespan, period) = program.makespan_and_period(&costs, pp);
        assert_eq!(makespan.to_bits(), timeline.makespan_seconds.to_bits(), "{schedule:?} p{pp} v{vpp} m{m}");
        // The period: what each of the last pp micro-batches added to the last virtual stage's backward.
        let last_stage_backward_end = |mb: u32| {
            let (stage, chunk) = (pp - 1, vpp - 1);
            timeline
                .events
                .iter()
                .filter(|e| e.stage == stage && e.chunk == chunk && e.microbatch == mb && e.pass == Pass::B)
                .map(|e| e.end_seconds)
                .next()
                .expect("every micro-batch runs a backward on the last stage")
        };
        let expected = (last_stage_backward_end(m - 1) - last_stage_backward_end(m - 1 - pp)) / f64::from(pp);
        assert_eq!(period.map(f64::to_bits), Some(expected.to_bits()), "{schedule:?} p{pp} v{vpp} m{m}");
    }
}

/// The compiled program runs every pass the moment it may: at the later of its rank's previous
/// pass's end and its inputs' arrival (the forward of the virtual stage before it, a send later
/// when that stage is on another rank; the backward of its own forward and of the stage after it;
/// a weight pass its own backward), to the bit, on random costs, sends, depths and micro-batch
/// counts. The inputs are looked up among the events themselves, apart from the program.
#[test]
fn every_pass_starts_as_soon_as_its_rank_and_inputs_allow() {
    use std::collections::HashMap;
    let mut rng = Xorshift(0x9E37_79B9_7F4A_7C15);
    for trial in 0..400 {
        let schedule =
            [Schedule::GPipe, Schedule::OneFOneB, Schedule::Interleaved, Schedule::ZbH1][trial % 4];
        let pp = 1 + rng.below(9);
        let vpp = if schedule == Schedule::Interleaved { 1 + rng.below(4) } else { 1 };
        let m = 1 + rng.below(3 * pp);
        let n = (pp * vpp) as usize;
        let mut draw = |scale: f64| (0..n).map(|_| 0.05 + scale * rng.unit()).collect::<Vec<f64>>();
        let (forward, backward, weight) = (draw(1.0), draw(2.0), draw(1.0));
        let costs = Costs::new(pp, vpp, &forward, &backward, &weight, 0.1 * rng.unit());
        let t = run(schedule, pp, vpp, m, &costs);
        // Megatron's placement: chunk c of rank r is virtual stage c·pp + r.
        let vs = |e: &schedule::Event| e.chunk * pp + e.stage;
        let end: HashMap<_, _> = t.events.iter().map(|e| ((e.pass, e.microbatch, vs(e)), e)).collect();
        let arrival = |pass, mb, at: u32, rank: u32| {
            let e = end[&(pass, mb, at)];
            e.end_seconds + if e.stage == rank { 0.0 } else { costs.p2p_seconds }
        };
        let mut previous_end = vec![0.0f64; pp as usize];
        for e in &t.events {
            let v = vs(e);
            let ready = match e.pass {
                Pass::F if v == 0 => 0.0,
                Pass::F => arrival(Pass::F, e.microbatch, v - 1, e.stage),
                Pass::B if v + 1 == pp * vpp => arrival(Pass::F, e.microbatch, v, e.stage),
                Pass::B => arrival(Pass::F, e.microbatch, v, e.stage).max(arrival(
                    Pass::B,
                    e.microbatch,
                    v + 1,
                    e.stage,
                )),
                Pass::W => arrival(Pass::B, e.microbatch, v, e.stage),
            };
            let expected = ready.max(previous_end[e.stage as usize]);
            assert_eq!(
                e.start_seconds.to_bits(),
                expected.to_bits(),
                "{schedule:?} p{pp} v{vpp} m{m}: {e:?} should start at {expected}"
            );
            previous_end[e.stage as usize] = e.end_seconds;
        }
        let last = t.events.iter().map(|e| e.end_seconds).fold(0.0, f64::max);
        assert_eq!(t.makespan_seconds, last, "{schedule:?} p{pp} v{vpp} m{m}");
    }
}

/// The period a run reports is what each further micro-batch adds to the whole schedule. With
/// equal stages and no send time the makespan grows by one micro-batch's passes on a rank per
/// micro-batch (1F1B: (m + p − 1)·(F + B), Narayanan et al. 2021 §2.2.1; per chunk for
/// interleaving, §2.2.2), so the period is F + B (× v chunks). With uneven stages the
/// period measured over the last pp micro-batches of a run of 3·pp is what the makespan gains from
/// each micro-batch beyond it, for every schedule the simulation runs.
#[test]
fn the_period_is_what_each_further_microbatch_adds() {
    for (schedule, pp, vpp) in [(Schedule::OneFOneB, 4, 1), (Schedule::Interleaved, 4, 2)] {
        let costs = Costs::uniform(pp, vpp, 1.0, 2.0, 0.0, 0.0);
        let program = schedule::cached(schedule, pp, vpp, 3 * pp).expect("no deadlock");
        let (_, period) = program.makespan_and_period(&costs, pp);
        let expected = 3.0 * f64::from(vpp);
        assert!(
            (period.expect("more than pp micro-batches") - expected).abs() < 1e-12,
            "{schedule:?}: {period:?}"
        );
    }
    // Uneven stages, the first of each rank's two chunks twice the second (Qwen3-235B's 94 layers
    // over 64 chunks: 2 and 1 layers), and a send: the makespan of 3·pp, 4·pp and 5·pp micro-batches.
    let (pp, vpp) = (8, 2);
    let mut costs = Costs::uniform(pp, vpp, 1.0, 2.0, 0.0, 0.05);
    let (forward, backward, _) = costs.lists_mut();
    for i in (0..(pp * vpp) as usize).step_by(2) {
        forward[i] *= 2.0;
        backward[i] *= 2.0;
    }
    for schedule in [Schedule::OneFOneB, Schedule::Interleaved, Schedule::ZbH1] {
        let vpp = if schedule == Schedule::Interleaved { vpp } else { 1 };
        let n = (pp * vpp) as usize;
        let costs = Costs::new(pp, vpp, &costs.forward()[..n], &costs.backward()[..n], &vec![0.5; n], 0.05);
        let makespan = |m: u32| schedule::cached(schedule, pp, vpp, m).expect("no deadlock").makespan(&costs);
        let (three, period) =
            schedule::cached(schedule, pp, vpp, 3 * pp).unwrap().makespan_and_period(&costs, pp);
        let period = period.expect("more than pp micro-batches");
        for groups in [4, 5] {
            let extended = three + f64::from((groups - 3) * pp) * period;
            let simulated = makespan(groups * pp);
            assert!(
                (extended - simulated).abs() <= 1e-9 * simulated,
                "{schedule:?} {groups}·pp: {extended} vs {simulated}"
            );
        }
    }
}
