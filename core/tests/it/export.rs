//! The report and the search's findings as files: JSON as the CLI prints it, CSV by RFC 4180. The
//! CSV is read back by a reader written here from the RFC's grammar (§2), and every value is checked
//! against the report's own JSON.

use serde_json::Value;
use trainplan_core::export::{self, REPORT_CSV_HEADER, SEARCH_CSV_FIGURES, csv_field, csv_text};
use trainplan_core::search::search;
use trainplan_core::{Plan, evaluate, rules};

fn plan(text: &str) -> Plan {
    Plan::from_json(text).unwrap_or_else(|e| panic!("{text}: {e}"))
}

/// Records of a CSV text, read by RFC 4180's grammar: records end with CRLF, fields are split by
/// commas, a field in double quotes may hold commas, CRLF and doubled double quotes. Panics on text
/// the grammar does not allow (a bare quote inside an unquoted field, a line ending without CR).
fn read_csv(text: &str) -> Vec<Vec<String>> {
    let mut records = Vec::new();
    let (mut record, mut field) = (Vec::new(), String::new());
    let mut chars = text.chars().peekable();
    let mut quoted = false;
    while let Some(ch) = chars.next() {
        match (quoted, ch) {
            (true, '"') if chars.peek() == Some(&'"') => {
                chars.next();
                field.push('"');
            }
            (true, '"') => quoted = false,
            (true, ch) => field.push(ch),
            (false, '"') if field.is_empty() => quoted = true,
            (false, '"') => panic!("a bare double quote in {field:?}"),
            (false, ',') => record.push(std::mem::take(&mut field)),
            (false, '\r') => {
                assert_eq!(chars.next(), Some('\n'), "CR without LF");
                record.push(std::mem::take(&mut field));
                records.push(std::mem::take(&mut record));
            }
            (false, '\n') => panic!("LF without CR"),
            (false, ch) => field.push(ch),
        }
    }
    assert!(!quoted && field.is_empty() && record.is_empty(), "the last record ends with CRLF");
    records
}

#[test]
fn fields_are_escaped_as_rfc_4180_says() {
    // RFC 4180 §2.6 and §2.7, the RFC's own examples: `"b""bb"`, a field with a line break.
    assert_eq!(csv_field("aaa"), "aaa");
    assert_eq!(csv_field("b\"bb"), "\"b\"\"bb\"");
    assert_eq!(csv_field("b\r\nbb"), "\"b\r\nbb\"");
    assert_eq!(csv_field("a,b"), "\"a,b\"");
    assert_eq!(csv_field(""), "");
    // Text that would start a spreadsheet formula is kept inert, and still escaped.
    assert_eq!(csv_text("=HYPERLINK(\"x\")"), "\"'=HYPERLINK(\"\"x\"\")\"");
    assert_eq!(csv_text("-1"), "'-1");
    assert_eq!(csv_text("Qwen2.5-7B"), "Qwen2.5-7B");
    let text = format!("{},{}\r\n", csv_field("a,\"b\"\r\nc"), csv_field("d"));
    assert_eq!(read_csv(&text), [["a,\"b\"\r\nc", "d"]]);
}

/// The report's JSON is serde_json's own pretty text of it, byte for byte, over the whole
/// conformance corpus (every framework, method, dense and MoE, RL phases, findings with fixes), and
/// for a model name that needs escaping.
#[test]
fn the_report_json_is_what_the_cli_prints() {
    let config = r#"{"model_type": "llama", "vocab_size": 32000, "hidden_size": 1024, "intermediate_size": 4096,
        "num_hidden_layers": 8, "num_attention_heads": 16, "num_key_value_heads": 16}"#;
    let odd = format!(r#"{{"model": {{"hf_config": {config}, "name": "a \"b\" {{c}}: [d], \\e"}}}}"#);
    let plans = crate::corpus::all().into_iter().map(|e| e.plan).chain([odd]);
    for text in plans {
        let report = evaluate(&plan(&text));
        let expected = format!("{}\n", serde_json::to_string_pretty(&report).unwrap());
        assert_eq!(export::report_json(&report), expected, "{text}");
    }
}

/// Every value of the report's CSV is the value at its figure's path in the report's JSON.
#[test]
fn the_report_csv_holds_the_reports_figures() {
    // A model name with a comma, a double quote and a leading `=`: the CSV keeps it whole.
    let config = r#"{"model_type": "llama", "vocab_size": 32000, "hidden_size": 1024, "intermediate_size": 4096,
        "num_hidden_layers": 8, "num_attention_heads": 16, "num_key_value_heads": 16}"#;
    let p = plan(&format!(
        r#"{{"model": {{"hf_config": {config}, "name": "=my \"tiny\", model"}}, "framework": "megatron",
            "method": "pretrain", "parallel": {{"pp": 4}}}}"#
    ));
    let report = evaluate(&p);
    let json: Value = serde_json::from_str(&export::report_json(&report)).unwrap();
    let records = read_csv(&export::report_csv(&report));
    assert_eq!(records[0], REPORT_CSV_HEADER);
    assert!(records[1..].iter().all(|r| r.len() == 3), "every record has three fields");
    // 17 headline figures, then 9 per stage over 4 stages.
    assert_eq!(records.len(), 1 + 17 + 9 * 4);
    let at = |path: &str, stage: Option<usize>| -> Value {
        let mut v = &json;
        for key in path.split('.') {
            v = &v[key];
            if key == "stages" {
                v = &v[stage.unwrap()];
            }
        }
        v.clone()
    };
    for r in &records[1..] {
        let (figure, stage, value) = (&r[0], &r[1], &r[2]);
        match figure.as_str() {
            "model.name" => assert_eq!(value, "'=my \"tiny\", model"),
            "hardware.name" => assert_eq!(Value::from(value.as_str()), at(figure, None)),
            "findings.errors" | "findings.warnings" => {
                let severity = if figure.ends_with("errors") { "error" } else { "warning" };
                let n =
                    json["findings"].as_array().unwrap().iter().filter(|f| f["severity"] == severity).count();
                assert_eq!(value, &n.to_string());
            }
            _ => {
                let stage = (!stage.is_empty()).then(|| stage.parse::<usize>().unwrap());
                let expected = at(figure, stage);
                assert!(!expected.is_null(), "{figure} is a path of the report");
                let read: Value = serde_json::from_str(value).unwrap();
                match (read.as_f64(), expected.as_f64()) {
                    // `2` and `2.0` are the same number; JSON keeps which it was, CSV need not.
                    (Some(a), Some(b)) => assert_eq!(a, b, "{figure} stage {stage:?}"),
                    _ => assert_eq!(read, expected, "{figure} stage {stage:?}"),
                }
            }
        }
    }
    // The stages as the report has them: 8 layers over PP 4.
    let layers: Vec<&str> =
        records.iter().filter(|r| r[0] == "memory.stages.n_layers").map(|r| r[2].as_str()).collect();
    assert_eq!(layers, ["2", "2", "2", "2"]);
}

#[test]
fn the_search_exports_every_plan_found_with_its_settings() {
    // The default plan's search (LLaMA-Factory LoRA on 8 × H100): ZeRO, offload, recomputation and
    // micro-batch are what it varies.
    let p = plan(r#"{"model": "qwen2.5-7b"}"#);
    let result = search(&p);
    assert!(!result.best.is_empty());
    let records = read_csv(&export::search_csv(&p, &result));
    let header = &records[0];
    assert_eq!(header[..SEARCH_CSV_FIGURES.len()], SEARCH_CSV_FIGURES);
    let settings = &header[SEARCH_CSV_FIGURES.len()..];
    assert!(settings.iter().any(|s| s == "batch.micro_batch"), "{settings:?}");
    assert_eq!(records.len(), 1 + result.best.len() + result.pareto.len());
    let lists = result.best.iter().map(|c| ("best", c)).chain(result.pareto.iter().map(|c| ("pareto", c)));
    let mut ranks = std::collections::HashMap::new();
    for (record, (list, c)) in records[1..].iter().zip(lists) {
        let rank = ranks.entry(list).and_modify(|r| *r += 1).or_insert(1);
        assert_eq!((record[0].as_str(), record[1].as_str()), (list, rank.to_string().as_str()));
        assert_eq!(record[2].parse::<f64>().unwrap(), c.tokens_per_second);
        assert_eq!(record[3].parse::<f64>().unwrap(), c.step_seconds);
        assert_eq!(record[4].parse::<f64>().unwrap(), c.mfu_frac);
        assert_eq!(record[5], c.peak_bytes.to_string());
        assert_eq!(record[6], c.headroom_bytes.to_string());
        // Each setting column holds the value of the plan the candidate makes.
        let found = serde_json::to_value(rules::apply_all(&p, &c.changes).unwrap().to_file()).unwrap();
        for (field, cell) in settings.iter().zip(&record[SEARCH_CSV_FIGURES.len()..]) {
            let mut v = &found;
            for key in field.split('.') {
                v = &v[key];
            }
            let shown = match v {
                Value::String(s) => s.clone(),
                Value::Null => String::new(),
                v => v.to_string(),
            };
            assert_eq!(cell, &shown, "{field}");
        }
    }
    // The JSON: the plan searched from, the counts, each plan with its figures and plan file.
    let json: Value = serde_json::from_str(&export::search_json(&p, &result)).unwrap();
    assert_eq!(json["from"], serde_json::to_value(p.to_file()).unwrap());
    assert_eq!(json["considered"], result.considered);
    assert_eq!(json["best"].as_array().unwrap().len(), result.best.len());
    let first = &json["best"][0];
    assert_eq!(first["tokens_per_second"], result.best[0].tokens_per_second);
    assert_eq!(first["peak_bytes"], result.best[0].peak_bytes);
    let made = Plan::from_file(&serde_json::from_value(first["plan"].clone()).unwrap()).unwrap();
    assert_eq!(evaluate(&made).memory.peak_bytes, result.best[0].peak_bytes);
}
