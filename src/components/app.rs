//! The whole page: header, the plan's inputs, the report, and the plan's life outside the page
//! (the address, localStorage).

use std::time::Duration;

use leptos::prelude::*;
use trainplan_core::{Plan, permalink};

use crate::components::header::Header;
use crate::components::params_panel::{ParamsPanel, ResultsTop};
use crate::components::plan_form::PlanFormPanel;
use crate::components::results::ResultsCtx;
use crate::components::summary_bar::{self, SummaryBar};
use crate::components::{LangCtx, use_tr};
use crate::form::{FormError, PlanForm};
use crate::history::{self, Entry};
use crate::i18n::Key;
use crate::{messages, storage};

/// How long typing must pause before the plan goes to the address and to localStorage.
const WRITE_DELAY: Duration = Duration::from_millis(250);

/// How long typing must pause before the advice and the launch files follow the plan.
const SETTLE_DELAY: Duration = Duration::from_millis(120);

/// The trainplan page. Opened with nothing, it already shows a complete plan.
#[component]
pub fn App() -> impl IntoView {
    let lang = RwSignal::new(storage::initial_lang());
    provide_context(LangCtx(lang));
    let tr = use_tr();
    Effect::new(move |_| storage::apply_lang(lang.get()));

    // The plan to start from: the link, else the last plan, else the default. A bad link is
    // reported and leaves the saved plan as it was.
    // A link noted just before a reload that came too soon for the address to hold it stands in
    // for the address (storage::note_pending_link: this tab, the last few seconds).
    let address = storage::take_pending_link().inspect(|link| history::write(link, Entry::Replace));
    let (start, start_pinned, link_error) = match address.unwrap_or_else(history::fragment) {
        hash if hash.is_empty() => (storage::saved_plan(), Vec::new(), None),
        hash => match permalink::decode_link(&hash) {
            Ok(link) => (Some(link.plan), link.pins, None),
            Err(err) => (storage::saved_plan(), Vec::new(), Some(err)),
        },
    };
    // What the banner says the page shows instead: the saved plan, or the default on a first visit.
    let had_saved = start.is_some();
    let form = RwSignal::new(start.as_ref().map(PlanForm::from_plan).unwrap_or_else(PlanForm::first_visit));
    let link_error = RwSignal::new(link_error);
    // The plans pinned for comparison; they travel in the link after the current one.
    let pinned = RwSignal::new(start_pinned);

    let plan = Memo::new(move |_| form.with(PlanForm::to_plan));
    let report = Memo::new(move |_| plan.with(|plan| plan.as_ref().ok().map(trainplan_core::evaluate)));
    let (settled, settled_report) = settle(plan, report);
    keep_outside(Outside { form, plan, pinned, link_error });
    provide_context(ResultsCtx {
        form,
        plan: plan.into(),
        report: report.into(),
        settled: settled.into(),
        settled_report: settled_report.into(),
        pinned,
        searched: RwSignal::new(None),
        lang,
    });

    view! {
        // The first Tab stop: past the header and the form, to the plan's results (it moves focus
        // itself, so the address keeps the plan).
        <a
            class="skip-link"
            href=format!("#{}", summary_bar::RESULTS_ID)
            data-testid="skip-to-results"
            on:click=move |ev| {
                ev.prevent_default();
                summary_bar::go_to_results();
            }
        >
            {move || tr(Key::skip_to_results)}
        </a>
        <Header on_reset=move || {
            // Back to the first visit's plan; the user's models and devices stay listed.
            pinned.set(Vec::new());
            link_error.set(None);
            form.set(PlanForm::first_visit());
        } />
        <LinkBanner error=link_error had_saved=had_saved />
        // Results first: the summary bar (it stays on screen) and the charts, then the inputs, then
        // the rest of the results. Two columns on a wide screen (inputs left), one on a phone.
        <main class="layout">
            <SummaryBar />
            <ResultsTop />
            <PlanFormPanel form=form plan=plan />
            <ParamsPanel />
        </main>
    }
}

/// The plan once typing pauses (the advice and the launch files follow it), and its report: the
/// report made for the keystroke's redraw when the plan has not moved on since.
fn settle(
    plan: Memo<Result<Plan, FormError>>,
    report: Memo<Option<trainplan_core::Report>>,
) -> (RwSignal<Result<Plan, FormError>>, Memo<Option<trainplan_core::Report>>) {
    let settled = RwSignal::new(plan.get_untracked());
    let settle = Debounce::new();
    Effect::new(move |first: Option<()>| {
        plan.track();
        settle.cancel();
        if first.is_some() {
            settle.after(SETTLE_DELAY, move || settled.set(plan.get_untracked()));
        }
    });
    let settled_report = Memo::new(move |_| {
        settled.with(|s| {
            let s = s.as_ref().ok()?;
            match plan.with_untracked(|p| p.as_ref().ok() == Some(s)) {
                true => report.get_untracked(),
                false => Some(trainplan_core::evaluate(s)),
            }
        })
    });
    (settled, settled_report)
}

/// What the plan's life outside the page touches: the form, its plan, the pins and the link's
/// error.
#[derive(Clone, Copy)]
struct Outside {
    form: RwSignal<PlanForm>,
    plan: Memo<Result<Plan, FormError>>,
    pinned: RwSignal<Vec<Plan>>,
    link_error: RwSignal<Option<permalink::PermalinkError>>,
}

/// Keeps the plan outside the page: in the address and its history entries, in localStorage, and
/// back from the address when Back, Forward or a pasted link change it.
fn keep_outside(Outside { form, plan, pinned, link_error }: Outside) {
    // Every valid plan goes to the address and to localStorage: at once when the page opens (in
    // place: opening the page adds no history entry); once typing pauses, as a new history entry
    // for the edits since the last pause (`opening`), so Back undoes them, and Back before the
    // pause undoes them too (below); and whatever is pending when the page goes away.
    // `history.pushState` with a long address costs Chromium milliseconds per call, with the
    // localStorage write more than the edit's own work, so no keystroke pays for it: it had been
    // paid by the first keystroke after each pause. The first run leaves a bad link in the
    // address, so the user can still see and copy what failed.
    let pending = Debounce::new();
    // Whether the edits since the last pause have no history entry yet.
    let opening = StoredValue::new(false);
    let link = move |plan: &Plan| pinned.with_untracked(|pins| permalink::encode_link(plan, pins));
    let write = move |plan: &Plan, entry: Entry| {
        history::write(&link(plan), entry);
        storage::save_plan(plan);
        // The user's own model outlives the plan that used it (devices: see `remember_device_of`).
        if let trainplan_core::plan::ModelSpec::HfConfig(config) = &plan.model.spec {
            storage::remember_model(storage::SavedModel {
                name: plan.model.name.clone(),
                config: config.clone(),
            });
        }
    };
    Effect::new(move |first: Option<()>| {
        let Ok(current) = plan.get() else { return };
        pinned.track();
        let typing = pending.cancel();
        match first {
            None if link_error.get_untracked().is_some() => {}
            None => write(&current, Entry::Replace),
            Some(()) => {
                if !typing {
                    opening.set_value(true);
                }
                pending.after(WRITE_DELAY, move || {
                    plan.with_untracked(|p| {
                        if let Ok(p) = p {
                            let entry = match opening.try_update_value(std::mem::take) {
                                Some(true) => Entry::Push,
                                _ => Entry::Replace,
                            };
                            write(p, entry);
                        }
                    })
                });
            }
        }
    });
    // When the page goes away with a write still waiting for typing to pause, the plan is saved
    // and its link noted for this tab (the address is the old one still: a reload opens the noted
    // link instead, storage::note_pending_link; noted here rather than per keystroke, where
    // writing the link cost more than a keystroke's redraw of the charts); a custom device is kept
    // then too (not per keystroke, which would keep every half-typed name; the hardware picker
    // keeps it too when the user switches to another device).
    let _ = window_event_listener(leptos::ev::pagehide, move |_| {
        let waiting = pending.cancel();
        plan.with_untracked(|p| {
            if let Ok(p) = p {
                if waiting {
                    storage::save_plan(p);
                    storage::note_pending_link(&link(p));
                }
                storage::remember_device_of(p);
            }
        })
    });
    // The address changed under the page: Back or Forward to another of its entries (`popstate`), or
    // a link pasted into the address bar (`hashchange`; Back and Forward fire it too). The plan of
    // that address comes back; it is already in the address, so writing it adds no entry. A
    // damaged address says so and changes nothing.
    let open_address = move || match permalink::decode_link(&history::fragment()) {
        Ok(link) => {
            if pinned.with_untracked(|pins| pins != &link.pins) {
                pinned.set(link.pins);
            }
            if plan.with_untracked(|p| p.as_ref() != Ok(&link.plan)) {
                link_error.set(None);
                form.set(PlanForm::from_plan(&link.plan));
            }
        }
        Err(err) => link_error.set(Some(err)),
    };
    // Back while typing, before the edits' entry was opened, left the entry that holds the plan
    // before them for the one before it: Forward returns there, which undoes the edits as Back
    // would have with their entry open; the Back's own address is not opened meanwhile.
    let returning = StoredValue::new(false);
    let moved = move || {
        if opening.try_update_value(std::mem::take) == Some(true) {
            let _ = pending.cancel();
            returning.set_value(true);
            history::forward();
        } else if !returning.get_value() {
            open_address();
        }
    };
    let _ = window_event_listener(leptos::ev::popstate, move |_| match returning.get_value() {
        // The Forward's own arrival, after the Back above.
        true => {
            returning.set_value(false);
            open_address();
        }
        false => moved(),
    });
    let _ = window_event_listener(leptos::ev::hashchange, move |_| {
        if !returning.get_value() {
            open_address();
        }
    });
}

/// Says why a link could not be opened, and that nothing was lost.
#[component]
fn LinkBanner(
    /// The link's error, until dismissed.
    error: RwSignal<Option<permalink::PermalinkError>>,
    /// Whether the page fell back to a plan this browser had saved (else the default plan).
    had_saved: bool,
) -> impl IntoView {
    let tr = use_tr();
    let lang = crate::components::use_lang();
    view! {
        <Show when=move || error.with(Option::is_some)>
            <div class="banner" role="alert" data-testid="link-error">
                <p>
                    <strong>{move || tr(Key::link_error_title)}</strong>
                    " "
                    {move || error.with(|e| e.as_ref().map(|e| messages::link_error(lang.get(), e)))}
                    " "
                    {move || tr(if had_saved { Key::link_error_fallback } else { Key::link_error_default })}
                </p>
                <button class="secondary" on:click=move |_| error.set(None)>
                    {move || tr(Key::banner_dismiss)}
                </button>
            </div>
        </Show>
    }
}

/// One piece of work put off until things have been quiet for a while: scheduling it again
/// replaces what was waiting.
#[derive(Clone, Copy)]
struct Debounce(StoredValue<Option<TimeoutHandle>>);

impl Debounce {
    fn new() -> Debounce {
        Debounce(StoredValue::new(None))
    }

    /// Runs `work` after `delay`, unless cancelled or scheduled again first.
    fn after(self, delay: Duration, work: impl FnOnce() + 'static) {
        self.cancel();
        let handle = set_timeout_with_handle(
            move || {
                self.0.set_value(None);
                work();
            },
            delay,
        );
        self.0.set_value(handle.ok());
    }

    /// Drops the waiting work; whether there was any.
    fn cancel(self) -> bool {
        let waiting = self.0.try_update_value(Option::take).flatten();
        if let Some(handle) = waiting {
            handle.clear();
        }
        waiting.is_some()
    }
}
