//! The page's wasm build runs the pipeline's inner loop in WebAssembly SIMD (`schedule/program.rs`,
//! `run_ends` under `simd128`): in headless Chromium, every deep pipeline's makespan is the event
//! simulation's, to the bit, as the native tests (`it/schedule.rs`) check of the plain loop.
//! `scripts/test` runs it beside the wasm benchmark.
#![cfg(target_arch = "wasm32")]

use trainplan_core::schedule::{self, Costs, Schedule};
use wasm_bindgen_test::{wasm_bindgen_test, wasm_bindgen_test_configure};

wasm_bindgen_test_configure!(run_in_browser);

/// Marsaglia's xorshift64, as the native schedule tests draw their costs.
struct Xorshift(u64);

impl Xorshift {
    fn unit(&mut self) -> f64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 >> 11) as f64 / (1u64 << 53) as f64
    }
}

#[wasm_bindgen_test]
fn the_vector_loop_runs_to_the_timelines_bit() {
    assert!(cfg!(target_feature = "simd128"), "the page's wasm is built with simd128 (.cargo/config.toml)");
    let mut rng = Xorshift(0x9E37_79B9_7F4A_7C15);
    // Odd and even run lengths, so the loop's last single pass is taken too.
    for (schedule, pp, vpp, m) in [
        (Schedule::OneFOneB, 64, 1, 192),
        (Schedule::OneFOneB, 37, 1, 50),
        (Schedule::Interleaved, 32, 3, 96),
        (Schedule::Interleaved, 16, 4, 32),
        (Schedule::Interleaved, 7, 2, 21),
        (Schedule::ZbH1, 32, 1, 96),
        (Schedule::GPipe, 24, 1, 72),
    ] {
        let n = (pp * vpp) as usize;
        let mut draw = |scale: f64| {
            (0..n)
                .map(|i| scale * (1.0 + f64::from(u8::from(i % 3 == 0)) + 0.1 * rng.unit()))
                .collect::<Vec<f64>>()
        };
        let (forward, backward, weight) = (draw(1.0), draw(1.5), draw(0.5));
        let costs = Costs::new(pp, vpp, &forward, &backward, &weight, 0.07);
        let orders = schedule::orders(schedule, pp, vpp, m);
        let timeline = schedule::simulate(schedule, &orders, &costs).expect("no deadlock");
        let program = schedule::cached(schedule, pp, vpp, m).expect("no deadlock");
        assert_eq!(
            program.makespan(&costs).to_bits(),
            timeline.makespan_seconds.to_bits(),
            "{schedule:?} p{pp} v{vpp} m{m}"
        );
    }
}
