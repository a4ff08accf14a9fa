//! What the results column shares: the form, the plan and its report, the plan once typing pauses,
//! the pinned plans, the last search and the language. [`super::app::App`] provides one
//! [`ResultsCtx`]; each panel of the results (and the log calibration under the form, which fits
//! the plan) reads it with [`use_results`] instead of taking the same props.

use leptos::prelude::*;
use trainplan_core::search::SearchResult;
use trainplan_core::{Plan, Report};

use crate::form::{FormError, PlanForm};
use crate::i18n::{self, Key, Lang};

/// What every part of the results shares; signals only, so it is `Copy` into any closure.
///
/// A panel that shows one section of the report memos that section itself (the memory chart, the
/// parameter counts, the findings, the summary): reading `report` in a closure subscribes to the
/// whole report, so only what is cheap to redraw per keystroke does that.
#[derive(Clone, Copy)]
pub struct ResultsCtx {
    /// The form, which a fix, a piece of advice, a plan found or a pin made current rewrites.
    pub form: RwSignal<PlanForm>,
    /// The plan the form describes, or what stops it.
    pub plan: Signal<Result<Plan, FormError>>,
    /// The core's report for the plan, when there is a plan.
    pub report: Signal<Option<Report>>,
    /// The plan once typing pauses: the advice and the launch files follow it, whose work (a
    /// changed plan evaluated per piece of advice; every file written out) need not hold up a
    /// keystroke's redraw.
    pub settled: Signal<Result<Plan, FormError>>,
    /// The settled plan's report.
    pub settled_report: Signal<Option<Report>>,
    /// The plans pinned for comparison, in the order they were pinned; they travel in the link.
    pub pinned: RwSignal<Vec<Plan>>,
    /// The last finished search: the plan it started from and what it found. The search panel
    /// writes it; the advice panel offers its fastest plan while the plan is still that one.
    pub searched: RwSignal<Option<(Plan, SearchResult)>>,
    /// The interface language.
    pub lang: RwSignal<Lang>,
}

impl ResultsCtx {
    /// `key` in the current language: a view that reads it re-renders when the language changes.
    pub fn tr(self, key: Key) -> &'static str {
        i18n::t(self.lang.get(), key)
    }

    /// The current language, tracked.
    pub fn lang(self) -> Lang {
        self.lang.get()
    }

    /// Whether the plan has moved on from the settled one, tracked: what follows the settled plan
    /// (the advice, the launch files) then still shows the plan before, until typing pauses. A
    /// panel keeps it in a `Memo`, so that only its turning over redraws.
    pub fn settling(self) -> bool {
        self.plan.with(|p| self.settled.with(|s| p.as_ref().ok() != s.as_ref().ok()))
    }
}

/// The results' shared state, as [`super::app::App`] provided it.
pub fn use_results() -> ResultsCtx {
    expect_context::<ResultsCtx>()
}
