//! The report and the search's findings as files to keep: JSON (the report exactly as `trainplan
//! eval` prints it) and CSV for spreadsheets. CSV follows RFC 4180 (<https://www.rfc-editor.org/rfc/rfc4180>):
//! a header row, records ended by CRLF (§2.1), a field holding a comma, a double quote or a line break
//! enclosed in double quotes (§2.6) with its double quotes doubled (§2.7).
//!
//! The page downloads these texts and the CLI prints them (`eval --csv`, `search --csv`); both get
//! the same bytes from here.

use std::borrow::Cow;

use serde_json::Value;

use crate::plan::Plan;
use crate::report::{Report, Severity, StageReport};
use crate::search::{Candidate, SearchResult};

/// The header of [`report_csv`]: a figure (its path in the report's JSON), the pipeline stage it
/// belongs to (empty for the plan's headline figures) and its value.
pub const REPORT_CSV_HEADER: [&str; 3] = ["figure", "stage", "value"];

/// The columns of [`search_csv`] before the settings: which list the plan is in (`best`: the fastest
/// first; `pareto`: the memory/speed front, least memory first), its rank there, and its figures
/// (the names of [`Candidate`]'s fields).
pub const SEARCH_CSV_FIGURES: [&str; 7] =
    ["list", "rank", "tokens_per_second", "step_seconds", "mfu_frac", "peak_bytes", "headroom_bytes"];

/// A field as RFC 4180 writes it: enclosed in double quotes, inner ones doubled, when it holds a
/// comma, a double quote, CR or LF; else as it is.
///
/// ```
/// use trainplan_core::export::csv_field;
/// assert_eq!(csv_field("plain"), "plain");
/// assert_eq!(csv_field("a,b"), "\"a,b\"");
/// assert_eq!(csv_field("say \"hi\""), "\"say \"\"hi\"\"\"");
/// ```
pub fn csv_field(text: &str) -> Cow<'_, str> {
    match text.contains([',', '"', '\r', '\n']) {
        true => Cow::Owned(format!("\"{}\"", text.replace('"', "\"\""))),
        false => Cow::Borrowed(text),
    }
}

/// Text a user typed (a model's or device's name), as a CSV field that a spreadsheet shows and
/// never runs: a leading `=`, `+`, `-`, `@`, tab or CR would start a formula, so it gets a `'`
/// first (OWASP, "CSV Injection", <https://owasp.org/www-community/attacks/CSV_Injection>).
pub fn csv_text(text: &str) -> String {
    let inert = match text.starts_with(['=', '+', '-', '@', '\t', '\r']) {
        true => format!("'{text}"),
        false => text.to_owned(),
    };
    csv_field(&inert).into_owned()
}

/// One CSV record of already-escaped fields, with its CRLF.
fn record<S: AsRef<str>>(fields: &[S]) -> String {
    let mut line = fields.iter().map(AsRef::as_ref).collect::<Vec<_>>().join(",");
    line.push_str("\r\n");
    line
}

/// A number as CSV writes it: exact for integers, Rust's shortest round-trip form for the rest,
/// empty where there is none (a report never holds NaN or ∞, but a CSV must not say "NaN" either).
fn number(x: f64) -> String {
    match x.is_finite() {
        true => x.to_string(),
        false => String::new(),
    }
}

/// The report as JSON, exactly what `trainplan eval` prints: serde_json's pretty layout (the
/// report's own key order, two spaces per level), with a final newline.
pub fn report_json(report: &Report) -> String {
    // Written compact and laid out here: the page's wasm already holds serde_json's compact writer
    // (the search workers' messages), and a second, pretty one for the whole report would add more
    // than this layout does. core/tests/it/export.rs holds it to `to_string_pretty` over the corpus.
    let compact = serde_json::to_string(report).expect("a report is always JSON");
    let mut text = pretty(&compact);
    text.push('\n');
    text
}

/// Compact JSON (no whitespace outside strings, as serde_json writes it) laid out as serde_json's
/// `to_string_pretty` lays it out: a line per member and element, two spaces per level, `": "`
/// after a key, `{}` and `[]` for empty ones.
fn pretty(compact: &str) -> String {
    fn newline(out: &mut String, depth: usize) {
        out.push('\n');
        for _ in 0..depth {
            out.push_str("  ");
        }
    }
    let mut out = String::with_capacity(compact.len() * 2);
    let (mut depth, mut in_string, mut escaped) = (0usize, false, false);
    let mut chars = compact.chars().peekable();
    while let Some(ch) = chars.next() {
        if in_string {
            out.push(ch);
            match (escaped, ch) {
                (true, _) => escaped = false,
                (false, '\\') => escaped = true,
                (false, '"') => in_string = false,
                _ => {}
            }
            continue;
        }
        match ch {
            '"' => {
                in_string = true;
                out.push(ch);
            }
            '{' | '[' => {
                let close = if ch == '{' { '}' } else { ']' };
                out.push(ch);
                match chars.peek() == Some(&close) {
                    true => out.push(chars.next().unwrap_or(close)),
                    false => {
                        depth += 1;
                        newline(&mut out, depth);
                    }
                }
            }
            '}' | ']' => {
                depth = depth.saturating_sub(1);
                newline(&mut out, depth);
                out.push(ch);
            }
            ',' => {
                out.push(',');
                newline(&mut out, depth);
            }
            ':' => out.push_str(": "),
            ch => out.push(ch),
        }
    }
    out
}

/// One of a stage's figures.
type StageFigure = fn(&StageReport) -> u64;

/// The report as CSV ([`REPORT_CSV_HEADER`]): the headline figures, then each pipeline stage's
/// memory by component, bytes. Figures are named by their path in [`report_json`]'s JSON.
///
/// ```
/// use trainplan_core::{Plan, evaluate, export};
/// let text = r#"{"model": "llama-3-8b", "framework": "megatron", "method": "pretrain", "parallel": {"pp": 2}}"#;
/// let report = evaluate(&Plan::from_json(text)?);
/// let csv = export::report_csv(&report);
/// assert!(csv.starts_with("figure,stage,value\r\n"));
/// assert!(csv.contains(&format!("\r\nmemory.peak_bytes,,{}\r\n", report.memory.peak_bytes)));
/// assert!(csv.contains(&format!("\r\nmemory.stages.total,1,{}\r\n", report.memory.stages[1].total)));
/// # Ok::<(), trainplan_core::plan::PlanFileError>(())
/// ```
pub fn report_csv(report: &Report) -> String {
    let count = |s: Severity| report.findings.iter().filter(|f| f.severity == s).count().to_string();
    let (m, t) = (&report.memory, &report.time);
    let headline: [(&str, String); 17] = [
        ("model.name", csv_text(&report.model.name)),
        ("hardware.name", csv_text(&report.hardware.name)),
        ("n_devices", report.n_devices.to_string()),
        ("memory.peak_bytes", m.peak_bytes.to_string()),
        ("memory.peak_stage", m.peak_stage.to_string()),
        ("memory.usable_bytes", m.usable_bytes.to_string()),
        ("memory.capacity_bytes", m.capacity_bytes.to_string()),
        ("memory.fits", m.fits.to_string()),
        ("memory.host_bytes_per_node", m.host_bytes_per_node.to_string()),
        ("memory.nvme_bytes_per_node", m.nvme_bytes_per_node.to_string()),
        ("time.step_seconds", number(t.step_seconds)),
        ("time.tokens_per_second", number(t.tokens_per_second)),
        ("time.tokens_per_second_per_device", number(t.tokens_per_second_per_device)),
        ("time.mfu", number(t.mfu)),
        ("time.hfu", number(t.hfu)),
        ("findings.errors", count(Severity::Error)),
        ("findings.warnings", count(Severity::Warning)),
    ];
    let stage_figures: [(&str, StageFigure); 9] = [
        ("memory.stages.n_layers", |s| s.n_layers),
        ("memory.stages.weights", |s| s.weights),
        ("memory.stages.gradients", |s| s.gradients),
        ("memory.stages.optimizer", |s| s.optimizer),
        ("memory.stages.activations", |s| s.activations),
        ("memory.stages.logits", |s| s.logits),
        ("memory.stages.buffers", |s| s.buffers),
        ("memory.stages.overhead", |s| s.overhead),
        ("memory.stages.total", |s| s.total),
    ];
    let mut out = record(&REPORT_CSV_HEADER);
    for (figure, value) in headline {
        out.push_str(&record(&[figure, "", &value]));
    }
    for stage in &m.stages {
        let idx = stage.stage.to_string();
        for (figure, of) in stage_figures {
            out.push_str(&record(&[figure, &idx, &of(stage).to_string()]));
        }
    }
    out
}

/// The plan a candidate makes from the plan searched from (`None` only if its changes were refused,
/// which the search never produces).
fn found_plan(from: &Plan, candidate: &Candidate) -> Option<Plan> {
    crate::rules::apply_all(from, &candidate.changes).ok()
}

/// The search's findings as JSON: the plan searched from (`from`), the counts, and each plan found
/// (`best`: the fastest first; `pareto`: the memory/speed front) with its changes, its figures and
/// its whole plan file (`plan`). Keys in alphabetical order.
pub fn search_json(from: &Plan, result: &SearchResult) -> String {
    // Built as a JSON value: the page already has the plan file's and the value's serializers, so
    // this adds little to the wasm (a serializer of its own would add a second plan-file one).
    let file = |p: &Plan| serde_json::to_value(p.to_file()).expect("a plan file is always JSON");
    let found = |list: &[Candidate]| -> Value {
        list.iter()
            .map(|c| {
                let mut entry = serde_json::to_value(c).expect("a candidate is always JSON");
                if let Value::Object(map) = &mut entry {
                    let plan = found_plan(from, c).map_or(Value::Null, |p| file(&p));
                    map.insert("plan".to_owned(), plan);
                }
                entry
            })
            .collect()
    };
    let mut export = serde_json::Map::new();
    export.insert("from".to_owned(), file(from));
    for (key, n) in [
        ("considered", result.considered),
        ("pruned", result.pruned),
        ("fit", result.fit),
        ("feasible", result.feasible),
        ("simulated", result.simulated),
    ] {
        export.insert(key.to_owned(), Value::from(n));
    }
    export.insert("best".to_owned(), found(&result.best));
    export.insert("pareto".to_owned(), found(&result.pareto));
    format!("{:#}\n", Value::Object(export))
}

/// The search's findings as CSV: one record per plan found, the fastest list first, then the
/// memory/speed front; [`SEARCH_CSV_FIGURES`], then one column per setting any plan found changes
/// (its plan-file path, e.g. `parallel.tp`) holding that plan's value of it.
pub fn search_csv(from: &Plan, result: &SearchResult) -> String {
    let lists = [("best", &result.best), ("pareto", &result.pareto)];
    let mut settings: Vec<&'static str> = lists
        .iter()
        .flat_map(|(_, l)| l.iter())
        .flat_map(|c| c.changes.iter().map(|f| f.field.path()))
        .collect();
    crate::sort::sort(&mut settings);
    settings.dedup();
    let mut header: Vec<Cow<'_, str>> = SEARCH_CSV_FIGURES.iter().map(|&f| Cow::Borrowed(f)).collect();
    header.extend(settings.iter().map(|s| csv_field(s)));
    let mut out = record(&header);
    for (list, candidates) in lists {
        for (rank, c) in candidates.iter().enumerate() {
            let leaves =
                found_plan(from, c).map(|p| crate::compare::leaves(&p.to_file())).unwrap_or_default();
            let mut fields = vec![
                list.to_owned(),
                (rank + 1).to_string(),
                number(c.tokens_per_second),
                number(c.step_seconds),
                number(c.mfu_frac),
                c.peak_bytes.to_string(),
                c.headroom_bytes.to_string(),
            ];
            fields.extend(settings.iter().map(|field| {
                let changed = c.changes.iter().find(|f| f.field == *field).map(|f| &f.value);
                setting(changed.or_else(|| leaves.get(*field)))
            }));
            out.push_str(&record(&fields));
        }
    }
    out
}

/// A plan-file value as a CSV field: text without JSON's quotes, numbers and booleans as JSON
/// writes them, empty for none.
fn setting(value: Option<&Value>) -> String {
    match value {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(s)) => csv_text(s),
        Some(v) => csv_field(&v.to_string()).into_owned(),
    }
}
