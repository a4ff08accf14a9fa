//! The browser's clock for the wasm benchmarks (`wasm_bench.rs`, `wasm_search_bench.rs`), each of
//! which includes this file.

/// Seconds since the page started, from `performance.now()`.
pub fn now_seconds() -> f64 {
    let performance =
        js_sys::Reflect::get(&js_sys::global(), &"performance".into()).expect("a browser has performance");
    let now: js_sys::Function =
        js_sys::Reflect::get(&performance, &"now".into()).expect("performance.now").into();
    now.call0(&performance).expect("performance.now runs").as_f64().expect("a number") / 1e3
}
