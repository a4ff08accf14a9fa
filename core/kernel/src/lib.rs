//! The pipeline simulation's inner loop (`trainplan_core::schedule`'s compiled programs run through
//! it): each pass ends at `max(its input's end + the send, its rank's previous end) + its cost`, run
//! by run, a run being consecutive passes whose slots and costs each advance by one.
//!
//! A crate of its own so that the page's release build compiles it for speed while the rest of
//! the page is built for size (`[profile.release.package.trainplan-kernel]` in the workspace's
//! Cargo.toml). Built for size, each slice and index in this loop was a call of its own, which
//! the browser inlined or not as its budget allowed: the benchmark grid's slowest plan took 23 or
//! 32 µs in Chromium with this loop unchanged, as code elsewhere in the engine grew (docs/DESIGN.md).

/// The top bit of [`Run::input`]: the input arrives over a send (between pipeline ranks).
pub const SENT: u32 = 1 << 31;

/// Consecutive passes whose inputs, previous passes and costs each advance evenly: the `t`-th
/// pass reads slots `input + t` and `prev + t` (written before the run starts) and the cost at
/// `cost + t`, and writes the next slot in order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Run {
    /// Passes in the run.
    pub len: u32,
    /// The first pass's input slot, with [`SENT`] set when it arrives over a send.
    pub input: u32,
    /// The first pass's rank's previous pass's slot.
    pub prev: u32,
    /// The first pass's position in the cost table.
    pub cost: u32,
}

/// Runs `runs` into `values`, their passes' ends written from slot 1 on, in order (slot 0 holds
/// the step's start; every slot a run reads is written before it); `p2p_seconds` is a send's time.
///
/// On x86-64 processors with AVX2, the same loop compiled for its four-wide vectors (chosen at run
/// time; the baseline that binaries are built for has two-wide ones): the same additions and
/// maxima, so the same ends to the bit. The benchmark grid's 90th percentile fell from 10.7 to
/// 9.2 µs and its plans over 10 µs from 20 to 2 (docs/DESIGN.md).
///
/// # Panics
///
/// When a run reads or writes past `values` or `costs`: a malformed program.
#[cfg_attr(target_arch = "x86_64", multiversion::multiversion(targets("x86_64+avx2")))]
pub fn run(values: &mut [f64], costs: &[f64], runs: &[Run], p2p_seconds: f64) {
    let hops = [0.0, p2p_seconds];
    let mut written = 1;
    for run in runs {
        let len = run.len as usize;
        let input = (run.input & !SENT) as usize;
        let hop = hops[(run.input >> 31) as usize];
        if len == 1 {
            values[written] =
                later(values[input] + hop, values[run.prev as usize]) + costs[run.cost as usize];
            written += 1;
            continue;
        }
        let (done, next) = values.split_at_mut(written);
        let inputs = &done[input..input + len];
        let prevs = &done[run.prev as usize..run.prev as usize + len];
        let cost = &costs[run.cost as usize..run.cost as usize + len];
        run_ends(&mut next[..len], inputs, prevs, cost, hop);
        written += len;
    }
}

/// The ends of a run's passes: each `max(input + hop, prev) + cost`.
#[cfg(not(all(target_arch = "wasm32", target_feature = "simd128")))]
#[inline(always)]
fn run_ends(out: &mut [f64], inputs: &[f64], prevs: &[f64], costs: &[f64], hop: f64) {
    let n = out.len();
    let (inputs, prevs, costs) = (&inputs[..n], &prevs[..n], &costs[..n]);
    for t in 0..n {
        out[t] = later(inputs[t] + hop, prevs[t]) + costs[t];
    }
}

/// The ends of a run's passes, two at a time in wasm's 128-bit vectors: the same additions, and
/// `f64x2_pmax(a, b)`, which is `b` where `a < b` and `a` otherwise, exactly [`later`] (WebAssembly
/// SIMD's pseudo-maximum), so the same ends to the bit.
#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
#[inline(always)]
fn run_ends(out: &mut [f64], inputs: &[f64], prevs: &[f64], costs: &[f64], hop: f64) {
    use core::arch::wasm32::{f64x2_add, f64x2_pmax, f64x2_splat, v128};
    let n = out.len();
    let (out2, odd) = out.as_chunks_mut::<2>();
    let m = out2.len();
    let (inputs2, prevs2, costs2) =
        (&inputs.as_chunks::<2>().0[..m], &prevs.as_chunks::<2>().0[..m], &costs.as_chunks::<2>().0[..m]);
    let v = |two: [f64; 2]| bytemuck::cast::<[f64; 2], v128>(two);
    let hops = f64x2_splat(hop);
    for i in 0..m {
        let end = f64x2_add(f64x2_pmax(f64x2_add(v(inputs2[i]), hops), v(prevs2[i])), v(costs2[i]));
        out2[i] = bytemuck::cast::<v128, [f64; 2]>(end);
    }
    if let [last] = odd {
        let t = n - 1;
        *last = later(inputs[t] + hop, prevs[t]) + costs[t];
    }
}

/// The later of two times. Times are never NaN, so this is `f64::max` without its NaN handling:
/// one instruction instead of five, on the run's critical path.
#[inline(always)]
pub fn later(a: f64, b: f64) -> f64 {
    if a < b { b } else { a }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two ranks, one pass each of two micro-batches: rank 0's forwards (1 s, 1 s), then rank 1's
    /// (2 s each) after a 0.5 s send; by hand, rank 1 ends its first at 1 + 0.5 + 2 = 3.5 and its
    /// second at max(2 + 0.5, 3.5) + 2 = 5.5.
    #[test]
    fn a_run_ends_each_pass_after_its_input_and_its_rank() {
        let mut values = vec![0.0; 5];
        let costs = [1.0, 1.0, 2.0, 2.0];
        // Rank 0: two passes from the start (slot 0, then its own first).
        let runs = [
            Run { len: 1, input: 0, prev: 0, cost: 0 },
            Run { len: 1, input: 0, prev: 1, cost: 1 },
            // Rank 1: inputs at slots 1 and 2 over a send; previous passes slot 0 then slot 3.
            Run { len: 1, input: 1 | SENT, prev: 0, cost: 2 },
            Run { len: 1, input: 2 | SENT, prev: 3, cost: 3 },
        ];
        run(&mut values, &costs, &runs, 0.5);
        assert_eq!(values, [0.0, 1.0, 2.0, 3.5, 5.5]);
        // A run of two reads its inputs and previous passes at consecutive slots written before
        // it: one pass (slot 1, ends at 1), then two over a send from slots 0 and 1, each after
        // the same slots as its rank's previous pass, costs 2 and 3: max(0.5, 0) + 2 = 2.5 and
        // max(1.5, 1) + 3 = 4.5, as the same passes one run each give.
        let costs = [1.0, 2.0, 3.0];
        let joined =
            [Run { len: 1, input: 0, prev: 0, cost: 0 }, Run { len: 2, input: SENT, prev: 0, cost: 1 }];
        let apart = [
            Run { len: 1, input: 0, prev: 0, cost: 0 },
            Run { len: 1, input: SENT, prev: 0, cost: 1 },
            Run { len: 1, input: 1 | SENT, prev: 1, cost: 2 },
        ];
        let (mut a, mut b) = (vec![0.0; 4], vec![0.0; 4]);
        run(&mut a, &costs, &joined, 0.5);
        run(&mut b, &costs, &apart, 0.5);
        assert_eq!(a, [0.0, 1.0, 2.5, 4.5]);
        assert_eq!(a, b);
    }
}
