//! The benchmark grid (benches/grid.rs) in the page's wasm build, in headless Chromium: the same
//! plans and levels as `cargo bench`, built with the page's release profile and timed with the
//! browser's clock. `scripts/test` runs it through wasm-bindgen-test-runner and prints the lines.
//!
//! The searches are timed in a module of their own (`wasm_search_bench.rs`): each test binary runs
//! in a page of its own, and in the page the plans are evaluated on the main thread while the
//! searches run in workers, each with its own wasm instance and heap. Timed in the same instance
//! after the searches (656,392 plans, the largest), the grid's median estimate read 2.20–2.36 µs
//! where alone it reads 1.82–1.90 µs (December 2026, alternated with the native grid's 0.98–0.99).
#![cfg(target_arch = "wasm32")]

use wasm_bindgen_test::{console_log, wasm_bindgen_test, wasm_bindgen_test_configure};

// The benchmark's searches are timed in wasm_search_bench.rs; this module takes the grid alone.
#[path = "../benches/grid.rs"]
#[allow(dead_code)]
mod grid;

wasm_bindgen_test_configure!(run_in_browser);

#[path = "wasm_clock.rs"]
mod wasm_clock;
use wasm_clock::now_seconds;

#[wasm_bindgen_test]
fn grid_in_the_browser() {
    // performance.now() is coarsened (to 0.1 ms or more) outside cross-origin isolation: each plan
    // runs for at least 20 ms, in five rounds of 4 ms, so the clock's step stays within 2.5 % of a
    // round, either way, and the median of five rounds within less. Longer, the test would hold
    // the page's thread past the test runner's 20 s.
    print(grid::run(&now_seconds, 0.02), grid::LEVELS.len());
    // What one read of the clock costs here: the grid reads it once per batch of evaluations.
    let reads = 10_000;
    let start = now_seconds();
    for _ in 0..reads {
        std::hint::black_box(now_seconds());
    }
    let per_read = (now_seconds() - start) * 1e6 / f64::from(reads);
    console_log!("wasm clock: one read of performance.now() takes {per_read:.2} µs");
}

/// Prints each of `lines`, which must be `expected` many, marked as the wasm build's.
fn print(lines: Vec<String>, expected: usize) {
    assert_eq!(lines.len(), expected);
    for line in lines {
        console_log!("wasm {line}");
    }
}
