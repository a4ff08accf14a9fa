//! The page's wasm build runs the pipeline's inner loop in WebAssembly SIMD (`trainplan_kernel::run`,
//! its `run_ends` under `simd128`): in headless Chromium, every deep pipeline's makespan is the event
//! simulation's, to the bit, as the native tests (`it/schedule.rs`) check of the plain loop.
//! `scripts/test` runs it beside the wasm benchmark.
#![cfg(target_arch = "wasm32")]

use trainplan_core::schedule;
use wasm_bindgen_test::{wasm_bindgen_test, wasm_bindgen_test_configure};

#[path = "deep_pipelines.rs"]
#[expect(dead_code, reason = "the native schedule tests draw schedules with `Xorshift::below`")]
mod deep_pipelines;
use deep_pipelines::Xorshift;

wasm_bindgen_test_configure!(run_in_browser);

#[wasm_bindgen_test]
fn the_vector_loop_runs_to_the_timelines_bit() {
    assert!(cfg!(target_feature = "simd128"), "the page's wasm is built with simd128 (.cargo/config.toml)");
    let mut rng = Xorshift(0x9E37_79B9_7F4A_7C15);
    for (schedule, pp, vpp, m) in deep_pipelines::SHAPES {
        let costs = deep_pipelines::uneven_costs(&mut rng, pp, vpp);
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
