//! The search, run off the page's thread: one Web Worker per core (`public/search-worker.js`), each
//! running a part of the space (`Search::part`) with this same wasm module (the bin's
//! `search_part` export, [`crate::search_parts::run_part`]), while the page sums their progress
//! and merges their parts ([`Gather`]). So the page never blocks, and editing the plan never waits for a search.
//! The workers are started ahead of the first search ([`warm_up`]) and kept between searches, so a
//! search does not wait for each to load the glue and the module (35–65 ms on a 2-core machine, a
//! quarter of a 70B search on 1,024 devices) nor for the browser to compile the engine to speed (a
//! warm-up search); a search stopped mid-way terminates its workers, and the next warm-up replaces
//! them.
//!
//! Where no worker can start, the search runs in the page, a slice of about 12 ms per timer tick,
//! as one part through the same [`Gather`] and merge: in `trainplan.html`, opened from disk, whose
//! `file://` origin cannot load a module worker and whose policy allows none (it has no loader tag
//! to take the glue's address from, so no worker is tried); and wherever a worker fails (the
//! constructor throws, an error event arrives, or the worker says it failed).
//!
//! Why a copied module script rather than gloo-worker: gloo-worker builds each worker from a bin of
//! its own, a second wasm the page would download and the service worker cache; the module worker
//! imports the page's own glue and instantiates the module the page already compiled
//! (`wasm_bindgen::module()`), so there is one wasm. gloo does the rest of the browser glue: its
//! event listeners (gloo-events) hear the workers and stop hearing them when dropped, its timers
//! (gloo-timers) tick the in-page search.

use std::cell::{Cell, RefCell};
use std::rc::{Rc, Weak};

use gloo_events::EventListener;
use gloo_timers::callback::Timeout;
use wasm_bindgen::JsCast;
use wasm_bindgen::prelude::JsValue;
use web_sys::{MessageEvent, Worker, WorkerOptions, WorkerType};

use trainplan_core::Plan;
use trainplan_core::search::{Search, SearchResult};

use crate::search_parts::{Gather, Reply, SLICE, plan_text, worker_count};

/// The worker's script, beside `start.js` in the build (index.html copies it).
const WORKER_SCRIPT: &str = "search-worker.js";
/// Milliseconds of work per timer tick of the in-page search before the page gets the thread back
/// to paint.
const TICK_MS: f64 = 12.0;

/// A finished search.
pub struct Outcome {
    /// What it found.
    pub result: SearchResult,
    /// How many workers ran it; 0 when it ran in the page.
    pub workers: u32,
}

/// What the page hears of a search: its progress (0 to 1) while it runs, then its outcome, once.
pub struct Hooks {
    /// The share of the search done.
    pub progress: Box<dyn Fn(f64)>,
    /// The search's result.
    pub done: Box<dyn Fn(Outcome)>,
}

/// A search under way. Dropping it stops the search at once: the workers are terminated, the
/// in-page slices stop, and the hooks hear nothing more.
pub struct Running {
    _state: Rc<RefCell<State>>,
}

/// Starts the search from `plan` in workers, or in the page where none can start.
pub fn start(plan: &Plan, hooks: Hooks) -> Running {
    let state = Rc::new(RefCell::new(State {
        plan: plan.clone(),
        gather: Gather::new(1),
        engine: Engine::Idle,
        hooks: Rc::new(hooks),
    }));
    if let Err(why) = spawn_workers(&state) {
        // The single file takes this path on purpose, so only a real failure is worth a word.
        if !why.is_empty() {
            leptos::logging::warn!("trainplan: the search runs in the page: {why}");
        }
        run_in_page(&state);
    }
    Running { _state: state }
}

/// Everything a search holds. Workers and timer ticks hold it weakly, so it goes with [`Running`].
struct State {
    plan: Plan,
    gather: Gather,
    engine: Engine,
    hooks: Rc<Hooks>,
}

/// Where the search runs now.
enum Engine {
    /// Nowhere: not started, finished, or cancelled.
    Idle,
    /// In these workers, part k in the k-th.
    Workers(Vec<Spawned>),
    /// In the page, one slice per timer tick.
    InPage(Box<Search>),
}

/// A worker that is terminated when dropped, unless taken out first: a search's and an idle one
/// go with what holds them.
struct Held(Option<Worker>);

impl Drop for Held {
    fn drop(&mut self) {
        // Stops it mid-part, at once (https://developer.mozilla.org/en-US/docs/Web/API/Worker/terminate).
        if let Some(worker) = &self.0 {
            worker.terminate();
        }
    }
}

/// A worker running a part, and its listeners. Dropped, it stops the worker, removes its
/// listeners (gloo's [`EventListener`] does on drop), so a message already on its way finds
/// nothing to call, and no longer counts as busy.
struct Spawned {
    worker: Held,
    _listeners: [EventListener; 2],
}

impl Spawned {
    /// The worker, its part done, back among the idle ones; its listeners go.
    fn idle(mut self) {
        if let Some(worker) = self.worker.0.take() {
            keep_idle(worker);
        }
    }
}

impl Drop for Spawned {
    fn drop(&mut self) {
        BUSY.with(|busy| busy.set(busy.get().saturating_sub(1)));
    }
}

/// A worker waiting for a part, its glue and module loaded or loading. An error event (its script
/// did not load) marks it dead, so that no search waits on it.
struct Idle {
    worker: Held,
    dead: Rc<Cell<bool>>,
    _on_error: EventListener,
}

thread_local! {
    /// The idle workers, at most one per part.
    static IDLE: RefCell<Vec<Idle>> = const { RefCell::new(Vec::new()) };
    /// Workers running a part now ([`Spawned`]).
    static BUSY: Cell<u32> = const { Cell::new(0) };
    /// Whether workers have been sent [`WARM_UP_PLAN`]: once a page, since the code the browser
    /// compiled to speed stays with the page's module for the workers that replace them.
    static WARMED: Cell<bool> = const { Cell::new(false) };
}

/// Keeps `worker` among the idle ones, or terminates it if enough wait already.
fn keep_idle(worker: Worker) {
    let dead = Rc::new(Cell::new(false));
    let marked = Rc::clone(&dead);
    let on_error = EventListener::new(&worker, "error", move |_| marked.set(true));
    let idle = Idle { worker: Held(Some(worker)), dead, _on_error: on_error };
    IDLE.with(|all| {
        let mut all = all.borrow_mut();
        all.retain(|w| !w.dead.get());
        if (all.len() as u32) < parts() {
            all.push(idle);
        }
    });
}

/// An idle worker, if one is alive.
fn take_idle() -> Option<Worker> {
    IDLE.with(|all| {
        let mut all = all.borrow_mut();
        while let Some(mut idle) = all.pop() {
            if !idle.dead.get() {
                return idle.worker.0.take();
            }
        }
        None
    })
}

/// Starts the workers a search will use, one per part, and has each load the glue and the module,
/// so that the first search finds them ready; tops up after a stopped search. Started together,
/// they also search [`WARM_UP_PLAN`] once, each its part of it: the workers share the module the
/// page compiled, and with it the code the browser compiles to speed, so the warm-up need not be
/// run whole in each (the first 70B search on 1,024 devices took 81–98 ms after one worker's
/// warm-up, 85–95 ms after each worker's, alternated runs in headless Chromium), and split it
/// takes each core a share of the time. Workers added beside running ones, or replacing a stopped
/// search's, find that code compiled already: the warm-up runs once a page. Does nothing where no
/// worker can start (`trainplan.html` from disk) or when enough are idle or busy (they come back
/// when their search is done).
pub fn warm_up() {
    let Some(urls) = urls() else { return };
    let idle = IDLE.with(|all| {
        let mut all = all.borrow_mut();
        all.retain(|w| !w.dead.get());
        all.len() as u32
    });
    let have = idle + BUSY.with(Cell::get);
    let parts = parts();
    let warm = have == 0 && !WARMED.with(Cell::get);
    for n in have..parts {
        let Ok(worker) = new_worker(&urls) else { return };
        let message = load(&urls).and_then(|m| {
            if warm {
                js_sys::Reflect::set(&m, &JsValue::from_str("warm"), &JsValue::from_str(WARM_UP_PLAN))?;
                js_sys::Reflect::set(&m, &JsValue::from_str("warmPart"), &JsValue::from(n))?;
                js_sys::Reflect::set(&m, &JsValue::from_str("warmParts"), &JsValue::from(parts))?;
            }
            Ok(m)
        });
        if message.and_then(|m| worker.post_message(&m)).is_err() {
            worker.terminate();
            return;
        }
        if warm {
            WARMED.with(|warmed| warmed.set(true));
        }
        keep_idle(worker);
    }
}

/// The plan the workers search once when they load, each its part, the results unsent: a Megatron
/// pretraining search over 256 devices (50,003 plans; memory, rules, pipeline schedules up to PP
/// 32, CP to 16, Megatron FSDP beside pipelines), so that the engine's code is compiled to speed
/// before the first real search, which otherwise runs about twice as slow (measured in Chromium:
/// 317–391 ms for the first 70B search on 1,024 devices, 125–184 ms for the next ones, with no
/// warm-up). A browser compiles a wasm function to speed once it has run enough, and a search of a
/// large cluster runs paths a small one barely does: warmed up on 70B over 32 devices (7,800
/// plans), the first 70B search on 1,024 devices took 85–103 ms where the next took 47–59 ms; on
/// this plan, another model and shape, 60–69 ms (headless Chromium, 2 workers, the end-to-end test
/// alone; and 64–68 ms split over the workers as now). It costs some 33 ms of a core natively, once
/// a page, 1.5 s after the plan has stood unedited.
const WARM_UP_PLAN: &str = r#"{"model": "llama-3.1-8b", "framework": "megatron", "method": "pretrain",
    "cluster": {"nodes": 32}, "batch": {"global_batch": 512, "seq_len": 8192}}"#;

/// How many parts a search is split into: one per core the browser reports.
fn parts() -> u32 {
    worker_count(web_sys::window().map_or(1.0, |w| w.navigator().hardware_concurrency()))
}

/// What to do once the state is no longer borrowed (a hook may start or stop searches).
enum Next {
    Nothing,
    Progress(f64),
    Done(Outcome),
    FallBack,
}

impl State {
    /// A worker's message for part `part`.
    fn on_reply(&mut self, part: u32, reply: Reply) -> Next {
        if !matches!(self.engine, Engine::Workers(_)) {
            return Next::Nothing;
        }
        match reply {
            Reply::Progress { done, total } => {
                self.gather.progress(part, done, total);
                Next::Progress(self.gather.fraction())
            }
            Reply::Part { plan, partial } => match self.gather.receive(part, &plan, partial, &self.plan) {
                Ok(false) => Next::Progress(self.gather.fraction()),
                Ok(true) => self.finish(),
                Err(why) => self.fall_back(&why),
            },
            Reply::Failed { message } => self.fall_back(&message),
        }
    }

    /// Every part is in: merges them, and lets the workers go.
    fn finish(&mut self) -> Next {
        let workers = match std::mem::replace(&mut self.engine, Engine::Idle) {
            Engine::Workers(spawned) => {
                let n = spawned.len() as u32;
                spawned.into_iter().for_each(Spawned::idle);
                n
            }
            _ => 0,
        };
        match self.gather.merge(&self.plan) {
            Ok(result) => Next::Done(Outcome { result, workers }),
            Err(why) => self.fall_back(&why),
        }
    }

    /// A worker failed: stops them all, so the search can start again in the page.
    fn fall_back(&mut self, why: &str) -> Next {
        leptos::logging::warn!("trainplan: a search worker failed ({why}); the search runs in the page");
        self.engine = Engine::Idle;
        Next::FallBack
    }

    /// One slice of the in-page search, about [`TICK_MS`] long.
    fn slice(&mut self) -> Next {
        let Engine::InPage(search) = &mut self.engine else { return Next::Nothing };
        let started = js_sys::Date::now();
        let done = loop {
            let done = search.step(SLICE);
            if done || TICK_MS < js_sys::Date::now() - started {
                break done;
            }
        };
        if !done {
            let (done, total) = search.progress();
            self.gather.progress(0, done, total);
            return Next::Progress(self.gather.fraction());
        }
        let Engine::InPage(search) = std::mem::replace(&mut self.engine, Engine::Idle) else {
            return Next::Nothing;
        };
        let finished = self.gather.finish(0, search.finish_part());
        // One part that is the plan's own whole search: the merge cannot refuse it.
        match finished.and_then(|_| self.gather.merge(&self.plan)) {
            Ok(result) => Next::Done(Outcome { result, workers: 0 }),
            Err(why) => panic!("the in-page search did not merge: {why}"),
        }
    }
}

/// Acts on `next` with no borrow of the state held.
fn follow(state: &Rc<RefCell<State>>, next: Next) {
    let hooks = Rc::clone(&state.borrow().hooks);
    match next {
        Next::Nothing => {}
        Next::Progress(fraction) => (hooks.progress)(fraction),
        Next::Done(outcome) => (hooks.done)(outcome),
        Next::FallBack => run_in_page(state),
    }
}

/// Starts the search in the page, as one part.
fn run_in_page(state: &Rc<RefCell<State>>) {
    {
        let mut s = state.borrow_mut();
        let search = Search::part(&s.plan, 0, 1);
        s.gather = Gather::new(1);
        s.engine = Engine::InPage(Box::new(search));
    }
    follow(state, Next::Progress(0.0));
    let weak = Rc::downgrade(state);
    Timeout::new(0, move || tick(weak)).forget();
}

/// Runs a slice of the in-page search, then schedules the next one unless it is done or stopped.
fn tick(state: Weak<RefCell<State>>) {
    let Some(strong) = state.upgrade() else { return };
    let next = strong.borrow_mut().slice();
    let more = matches!(next, Next::Progress(_));
    follow(&strong, next);
    if more {
        // Forgotten: the tick holds the state weakly and ends when the search is gone.
        Timeout::new(0, move || tick(state)).forget();
    }
}

/// The addresses a worker needs, all absolute (a worker resolves relative ones against its own script).
struct Urls {
    worker: String,
    glue: String,
    wasm: String,
}

/// The addresses from the loader's tag that trunk writes (Trunk.toml `pattern_script`:
/// `start.js`, `data-js`, `data-wasm`); `None` in `trainplan.html`, whose glue and wasm are inline.
fn urls() -> Option<Urls> {
    let document = web_sys::window()?.document()?;
    let tag = document.query_selector("script[data-js][data-wasm]").ok()??;
    let base = document.base_uri().ok()??;
    let resolve =
        |reference: &str, against: &str| Some(web_sys::Url::new_with_base(reference, against).ok()?.href());
    let start = resolve(&tag.get_attribute("src")?, &base)?;
    Some(Urls {
        worker: resolve(WORKER_SCRIPT, &start)?,
        glue: resolve(&tag.get_attribute("data-js")?, &base)?,
        wasm: resolve(&tag.get_attribute("data-wasm")?, &base)?,
    })
}

/// Starts one worker per core, each on its part. `Err("")` where the page has no worker to start.
fn spawn_workers(state: &Rc<RefCell<State>>) -> Result<(), String> {
    let urls = urls().ok_or_else(String::new)?;
    let parts = parts();
    let plan = plan_text(&state.borrow().plan);
    let mut spawned = Vec::new();
    for part in 0..parts {
        // A worker that does not start drops the ones started before it, which stops them.
        let worker = spawn(&urls, Rc::downgrade(state), &plan, part, parts)
            .map_err(|err| format!("worker {part} did not start: {err:?}"))?;
        spawned.push(worker);
    }
    let mut s = state.borrow_mut();
    s.gather = Gather::new(parts);
    s.engine = Engine::Workers(spawned);
    Ok(())
}

/// A new worker, its script loading.
fn new_worker(urls: &Urls) -> Result<Worker, JsValue> {
    let options = WorkerOptions::new();
    // A module worker, so that it can import the glue, an ES module
    // (https://developer.mozilla.org/en-US/docs/Web/API/Worker/Worker#type).
    options.set_type(WorkerType::Module);
    Worker::new_with_options(&urls.worker, &options)
}

/// Sends part `part` of `parts` to an idle worker, or to a new one, and hears its replies.
fn spawn(
    urls: &Urls,
    state: Weak<RefCell<State>>,
    plan: &str,
    part: u32,
    parts: u32,
) -> Result<Spawned, JsValue> {
    let worker = match take_idle() {
        Some(worker) => worker,
        None => new_worker(urls)?,
    };
    let on_reply = move |state: &Weak<RefCell<State>>, reply: Reply| {
        let Some(strong) = state.upgrade() else { return };
        let next = strong.borrow_mut().on_reply(part, reply);
        follow(&strong, next);
    };
    let weak = state.clone();
    let on_message = EventListener::new(&worker, "message", move |event| {
        let text = event.dyn_ref::<MessageEvent>().and_then(|m| m.data().as_string()).unwrap_or_default();
        let reply =
            serde_json::from_str(&text).unwrap_or_else(|err| Reply::Failed { message: err.to_string() });
        on_reply(&weak, reply);
    });
    // An error event: the script or the glue did not load, or something in the worker threw.
    let on_error = EventListener::new(&worker, "error", move |event| {
        on_reply(&state, Reply::Failed { message: format!("{} event", event.type_()) });
    });
    // Held before its work is posted, so that an error terminates the worker (on drop).
    let held = Held(Some(worker.clone()));
    let message = load(urls)?;
    for (key, value) in [("plan", plan.into()), ("part", part.into()), ("parts", parts.into())] {
        js_sys::Reflect::set(&message, &JsValue::from_str(key), &value)?;
    }
    worker.post_message(&message)?;
    BUSY.with(|busy| busy.set(busy.get() + 1));
    Ok(Spawned { worker: held, _listeners: [on_message, on_error] })
}

/// The message that has a worker load the glue and the module (public/search-worker.js reads it;
/// a worker that has them already ignores it): the glue's address, the wasm's compiled module (a
/// `WebAssembly.Module` is cloned to a worker without compiling it again:
/// https://developer.mozilla.org/en-US/docs/Web/API/Web_Workers_API/Structured_clone_algorithm)
/// and its address should the module be missing. A part's message adds the plan and the part.
fn load(urls: &Urls) -> Result<JsValue, JsValue> {
    let message = js_sys::Object::new();
    let fields: [(&str, JsValue); 3] = [
        ("js", urls.glue.as_str().into()),
        ("wasm", urls.wasm.as_str().into()),
        ("module", wasm_bindgen::module()),
    ];
    for (key, value) in fields {
        js_sys::Reflect::set(&message, &key.into(), &value)?;
    }
    Ok(message.into())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The warm-up plan reads (a worker would search nothing, silently, if it did not) and is a
    /// search of thousands of plans that reaches the schedule simulation, as a real one does.
    #[test]
    fn the_warm_up_plan_is_a_real_search() {
        let plan = Plan::from_json(WARM_UP_PLAN).expect("the warm-up plan reads");
        let result = trainplan_core::search::search(&plan);
        assert!(
            5_000 <= result.considered && 100 <= result.simulated,
            "{} / {}",
            result.considered,
            result.simulated
        );
    }
}
