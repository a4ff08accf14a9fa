//! Files the page hands to the browser to save: the report and the search's findings, written by
//! the core's `export` module, under a name made from the plan. The download is a Blob behind an
//! object URL, clicked through a link that is never shown.

use std::time::Duration;

use trainplan_core::Plan;
use trainplan_core::emit::archive;
use wasm_bindgen::JsCast;

use crate::i18n::Key;

/// How long an object URL outlives its click: the browser has read the Blob long before.
const REVOKE_AFTER: Duration = Duration::from_secs(60);

/// What is exported, and how.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Export {
    /// The report as the core's JSON (what `trainplan eval` prints).
    ReportJson,
    /// The report's headline figures and memory per stage as CSV.
    ReportCsv,
    /// The search's plans as JSON.
    SearchJson,
    /// The search's plans as CSV.
    SearchCsv,
}

impl Export {
    /// The file's media type.
    pub fn mime(self) -> &'static str {
        match self {
            Export::ReportJson | Export::SearchJson => "application/json",
            // RFC 4180 §3 registers text/csv, with the optional `header` parameter.
            Export::ReportCsv | Export::SearchCsv => "text/csv;charset=utf-8;header=present",
        }
    }

    /// The file's name for a plan: its model and framework (as the launch files' folder), what it
    /// holds, and its kind: `qwen2.5-7b-llamafactory-report.csv`.
    pub fn file_name(self, plan: &Plan) -> String {
        let (what, ext) = match self {
            Export::ReportJson => ("report", "json"),
            Export::ReportCsv => ("report", "csv"),
            Export::SearchJson => ("search", "json"),
            Export::SearchCsv => ("search", "csv"),
        };
        format!("{}-{what}.{ext}", archive::folder(plan))
    }

    /// The `data-testid` of its download button.
    pub fn testid(self) -> &'static str {
        match self {
            Export::ReportJson => "export-report-json",
            Export::ReportCsv => "export-report-csv",
            Export::SearchJson => "search-export-json",
            Export::SearchCsv => "search-export-csv",
        }
    }

    /// The words on its download button.
    pub fn label(self) -> Key {
        match self {
            Export::ReportJson => Key::export_report_json,
            Export::ReportCsv => Key::export_report_csv,
            Export::SearchJson => Key::search_export_json,
            Export::SearchCsv => Key::search_export_csv,
        }
    }
}

/// Hands `text` to the browser as a download named `name`. Nothing happens where the page has no
/// document (a worker) or the browser refuses the Blob.
pub fn download(name: &str, mime: &str, text: &str) {
    let _ = try_download(name, mime, text);
}

fn try_download(name: &str, mime: &str, text: &str) -> Option<()> {
    let document = web_sys::window()?.document()?;
    let parts = js_sys::Array::of1(&wasm_bindgen::JsValue::from_str(text));
    let options = web_sys::BlobPropertyBag::new();
    options.set_type(mime);
    let blob = web_sys::Blob::new_with_str_sequence_and_options(&parts, &options).ok()?;
    let url = web_sys::Url::create_object_url_with_blob(&blob).ok()?;
    let link: web_sys::HtmlAnchorElement = document.create_element("a").ok()?.dyn_into().ok()?;
    link.set_href(&url);
    link.set_download(name);
    link.click();
    leptos::prelude::set_timeout(move || drop(web_sys::Url::revoke_object_url(&url)), REVOKE_AFTER);
    Some(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_are_named_after_the_plan_and_what_they_hold() {
        // The default plan: Qwen2.5-7B on LLaMA-Factory, as its launch files' folder is named.
        let plan = Plan::first_visit();
        assert_eq!(Export::ReportJson.file_name(&plan), "qwen2.5-7b-llamafactory-report.json");
        assert_eq!(Export::ReportCsv.file_name(&plan), "qwen2.5-7b-llamafactory-report.csv");
        assert_eq!(Export::SearchJson.file_name(&plan), "qwen2.5-7b-llamafactory-search.json");
        assert_eq!(Export::SearchCsv.file_name(&plan), "qwen2.5-7b-llamafactory-search.csv");
        assert!(Export::ReportCsv.mime().starts_with("text/csv"));
        assert_eq!(Export::SearchJson.mime(), "application/json");
    }
}
