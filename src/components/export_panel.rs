//! The report to keep: the core's JSON (what `trainplan eval` prints) and a CSV of the headline
//! figures and memory per stage, downloaded as files named after the plan.

use leptos::prelude::*;
use trainplan_core::export;

use crate::components::results::use_results;
use crate::export::{Export, download};
use crate::i18n::Key;

/// The report's download buttons; shown while there is a report.
#[component]
pub fn ExportPanel() -> impl IntoView {
    let ctx = use_results();
    // Written on the click only: a keystroke never serializes the report.
    let save = move |kind: Export| {
        let Ok(plan) = ctx.plan.get_untracked() else { return };
        ctx.report.with_untracked(|r| {
            let Some(r) = r else { return };
            let text = match kind {
                Export::ReportCsv => export::report_csv(r),
                _ => export::report_json(r),
            };
            download(&kind.file_name(&plan), kind.mime(), &text);
        });
    };
    view! {
        <Show when=move || ctx.report.with(Option::is_some)>
            <span class="export" role="group" aria-label=move || ctx.tr(Key::export_title)>
                <button class="secondary" data-testid="export-report-json" title=move || ctx.tr(Key::export_title)
                    on:click=move |_| save(Export::ReportJson)>
                    {move || ctx.tr(Key::export_report_json)}
                </button>
                <button class="secondary" data-testid="export-report-csv" title=move || ctx.tr(Key::export_title)
                    on:click=move |_| save(Export::ReportCsv)>
                    {move || ctx.tr(Key::export_report_csv)}
                </button>
            </span>
        </Show>
    }
}
