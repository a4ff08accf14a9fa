//! The benchmark's searches (benches/grid.rs) in the page's wasm build, in headless Chromium, on
//! one thread as a search worker runs its part: the native benchmark's `search:` lines, in wasm,
//! whole and in two parts merged (a two-core page's work, its workers' parts one after the other).
//! A module of its own, so that the grid (`wasm_bench.rs`) is timed in an instance the searches
//! have not grown, as the page's main thread is. `scripts/test` runs both.
#![cfg(target_arch = "wasm32")]

use wasm_bindgen_test::{console_log, wasm_bindgen_test, wasm_bindgen_test_configure};

// The grid's plans are timed in wasm_bench.rs; this module takes its searches alone.
#[path = "../benches/grid.rs"]
#[allow(dead_code)]
mod grid;

wasm_bindgen_test_configure!(run_in_browser);

#[path = "wasm_clock.rs"]
mod wasm_clock;
use wasm_clock::now_seconds;

#[wasm_bindgen_test]
fn searches_in_the_browser() {
    let lines = grid::run_searches(&now_seconds, 0.5);
    assert_eq!(lines.len(), 2 * grid::SEARCHES.len());
    for line in lines {
        console_log!("wasm {line}");
    }
}
