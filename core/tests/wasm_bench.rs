//! The benchmark grid (benches/grid.rs) in the page's wasm build, in headless Chromium: the same
//! plans and levels as `cargo bench`, built with the page's release profile and timed with the
//! browser's clock, and the same searches on one thread. `scripts/test` runs it through
//! wasm-bindgen-test-runner and prints the lines.
#![cfg(target_arch = "wasm32")]

use wasm_bindgen_test::{console_log, wasm_bindgen_test, wasm_bindgen_test_configure};

#[path = "../benches/grid.rs"]
mod grid;

wasm_bindgen_test_configure!(run_in_browser);

/// Milliseconds since the page started, from `performance.now()`.
fn now_seconds() -> f64 {
    let performance =
        js_sys::Reflect::get(&js_sys::global(), &"performance".into()).expect("a browser has performance");
    let now: js_sys::Function =
        js_sys::Reflect::get(&performance, &"now".into()).expect("performance.now").into();
    now.call0(&performance).expect("performance.now runs").as_f64().expect("a number") / 1e3
}

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

/// The benchmark's searches (benches/grid.rs) on the page's one thread, as a search worker runs
/// its part: the native benchmark's `search:` lines, in wasm, whole and in two parts merged (a
/// two-core page's work, its workers' parts one after the other).
#[wasm_bindgen_test]
fn searches_in_the_browser() {
    print(grid::run_searches(&now_seconds, 0.5), 2 * grid::SEARCHES.len());
}

/// Prints each of `lines`, which must be `expected` many, marked as the wasm build's.
fn print(lines: Vec<String>, expected: usize) {
    assert_eq!(lines.len(), expected);
    for line in lines {
        console_log!("wasm {line}");
    }
}
