//! The report to keep: the core's JSON (what `trainplan eval` prints) and a CSV of the headline
//! figures and memory per stage, downloaded as files named after the plan.

use leptos::prelude::*;
use trainplan_core::{Plan, Report, export};

use crate::components::use_tr;
use crate::export::{Export, download};
use crate::form::FormError;
use crate::i18n::Key;

/// The report's download buttons; shown while there is a report.
#[component]
pub fn ExportPanel(
    /// The plan, for the files' names.
    #[prop(into)]
    plan: Signal<Result<Plan, FormError>>,
    /// The plan's report, exported as it is shown.
    #[prop(into)]
    report: Signal<Option<Report>>,
) -> impl IntoView {
    let tr = use_tr();
    // Written on the click only: a keystroke never serializes the report.
    let save = move |kind: Export| {
        let Ok(plan) = plan.get_untracked() else { return };
        report.with_untracked(|r| {
            let Some(r) = r else { return };
            let text = match kind {
                Export::ReportCsv => export::report_csv(r),
                _ => export::report_json(r),
            };
            download(&kind.file_name(&plan), kind.mime(), &text);
        });
    };
    view! {
        <Show when=move || report.with(Option::is_some)>
            <span class="export" role="group" aria-label=move || tr(Key::export_title)>
                <button class="secondary" data-testid="export-report-json" title=move || tr(Key::export_title)
                    on:click=move |_| save(Export::ReportJson)>
                    {move || tr(Key::export_report_json)}
                </button>
                <button class="secondary" data-testid="export-report-csv" title=move || tr(Key::export_title)
                    on:click=move |_| save(Export::ReportCsv)>
                    {move || tr(Key::export_report_csv)}
                </button>
            </span>
        </Show>
    }
}
