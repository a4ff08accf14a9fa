//! The report to keep: the core's JSON (what `trainplan eval` prints) and a CSV of the headline
//! figures and memory per stage, downloaded as files named after the plan; and [`Downloads`], the
//! group of download buttons the search's plans use too.

use leptos::prelude::*;
use trainplan_core::{Plan, export};

use crate::components::results::use_results;
use crate::components::use_tr;
use crate::export::{Export, download};
use crate::i18n::Key;

/// The report's download buttons; shown while there is a report.
#[component]
pub fn ExportPanel() -> impl IntoView {
    let ctx = use_results();
    // Written on the click only: a keystroke never serializes the report.
    let write = move |kind: Export| {
        let plan = ctx.plan.get_untracked().ok()?;
        let text = ctx.report.with_untracked(|r| {
            let r = r.as_ref()?;
            Some(match kind {
                Export::ReportCsv => export::report_csv(r),
                _ => export::report_json(r),
            })
        })?;
        Some((plan, text))
    };
    view! {
        <Show when=move || ctx.report.with(Option::is_some)>
            <Downloads class="export" title=Key::export_title kinds=&[Export::ReportJson, Export::ReportCsv] write=write />
        </Show>
    }
}

/// A download button per kind of file, in a group named for what they save; each file is written
/// when its button is clicked, and named after the plan.
#[component]
pub fn Downloads(
    /// The group's class, for its layout where it sits.
    class: &'static str,
    /// What the files hold: the group's name and each button's title.
    title: Key,
    /// A button per kind, in order.
    kinds: &'static [Export],
    /// A kind's file: the plan it is named after and its text; `None` when there is nothing to save.
    write: impl Fn(Export) -> Option<(Plan, String)> + Copy + Send + Sync + 'static,
) -> impl IntoView {
    let tr = use_tr();
    let buttons = kinds
        .iter()
        .map(|&kind| {
            let save = move |_| {
                if let Some((plan, text)) = write(kind) {
                    download(&kind.file_name(&plan), kind.mime(), &text);
                }
            };
            view! {
                <button class="secondary" data-testid=kind.testid() title=move || tr(title) on:click=save>
                    {move || tr(kind.label())}
                </button>
            }
        })
        .collect_view();
    view! { <div class=class role="group" aria-label=move || tr(title)>{buttons}</div> }
}
