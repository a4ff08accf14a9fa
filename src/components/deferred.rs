//! Parts of the page that load after the plan is drawn: their code sits in wasm modules of their own.
//!
//! A function marked `#[wasm_split(name, fallible, preload(load_name))]` (wasm_split_helpers) is a
//! split point: trainplan-bundle splits the page's module there (tools/bundle/src/split.rs), so the
//! code only that function reaches moves to a module of its own, which `load_name` fetches. The
//! page's first module then holds what draws the plan (the form, the summary with its verdicts, the
//! charts); each part below the first screen (the findings' words and fixes among them) follows as
//! soon as its module arrives. A module that
//! does not arrive (the connection dropped, the page was updated meanwhile) leaves a line that says
//! so where the part would be, and the rest of the page works on. On other targets (the native
//! tests) nothing is loaded and the function is called directly.
//!
//! The parts are first fetched once the plan's first frame is painted, so that compiling and drawing
//! them never holds it up; a part shown again later (the results hidden while a plan is refused)
//! finds its module there and is drawn at once.
//!
//! The part is built in the page's own reactive flow, once its module is there, rather than inside
//! the load's future: its signals and the effects that draw them then share one owner, and go
//! together when the part leaves the page (a `<Show>` hiding it while the plan is refused).

use std::future::Future;
use std::pin::{Pin, pin};
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use leptos::prelude::*;
use leptos::task::spawn_local;
use wasm_split_helpers::SplitLoaderError;

use crate::components::use_tr;
use crate::i18n::Key;

/// Whether the page has painted its first frame, after which parts load as soon as they are shown.
static PAINTED: AtomicBool = AtomicBool::new(false);

/// The part `build` gives, once `load` has fetched its module: nothing until then, and a line saying
/// it did not load if it failed. `build` is the split point; with its module there, it returns at
/// once.
pub fn deferred<L, B, F>(load: L, build: B) -> impl IntoView
where
    L: Future<Output = Result<(), SplitLoaderError>> + 'static,
    B: Fn() -> F + Send + Sync + 'static,
    F: Future<Output = Result<AnyView, SplitLoaderError>>,
{
    let tr = use_tr();
    // Whether the module is there: `None` while it loads, then whether it loaded.
    let arrived = RwSignal::new(None);
    let mut load = Box::pin(load);
    let wait = move |load: Pin<Box<L>>| {
        spawn_local(async move {
            let loaded = load.await.is_ok();
            // The part may have left the page meanwhile.
            let _ = arrived.try_set(Some(loaded));
        })
    };
    match PAINTED.load(Ordering::Relaxed) {
        // Later, most often the module is there already (the part shown again).
        true => match ready(load.as_mut()) {
            Some(loaded) => arrived.set(Some(loaded.is_ok())),
            None => wait(load),
        },
        // The first time, the parts are fetched once the plan is painted, so that compiling them
        // does not hold up the first frame.
        false => request_animation_frame(move || {
            set_timeout(
                move || {
                    PAINTED.store(true, Ordering::Relaxed);
                    wait(load);
                },
                Duration::ZERO,
            )
        }),
    }
    move || match arrived.get() {
        None => ().into_any(),
        Some(true) => match ready(build()) {
            Some(Ok(view)) => view,
            _ => not_loaded(tr),
        },
        Some(false) => not_loaded(tr),
    }
}

/// The line shown where a part did not load.
fn not_loaded(tr: impl Fn(Key) -> &'static str + Send + Sync + 'static) -> AnyView {
    view! { <p class="error" role="alert" data-testid="part-not-loaded">{move || tr(Key::part_not_loaded)}</p> }
        .into_any()
}

/// The future's output if it is ready at its first poll.
fn ready<F: Future>(future: F) -> Option<F::Output> {
    match pin!(future).poll(&mut Context::from_waker(Waker::noop())) {
        Poll::Ready(output) => Some(output),
        Poll::Pending => None,
    }
}
