//! Writes the conformance corpus: for each plan, `OUT/<name>/plan.json`, its emitted files, and
//! `OUT/manifest.json` listing every plan with its framework, method, files and the ids of the
//! error findings it carries (a plan with errors is one the planner already says will not run).
//!
//! `cargo run -p trainplan-core --example corpus -- OUT`

#[path = "../tests/corpus/mod.rs"]
mod corpus;

use trainplan_core::Plan;
use trainplan_core::report::Severity;

fn main() {
    let out = std::env::args_os().nth(1).expect("usage: corpus OUT_DIR");
    let out = std::path::PathBuf::from(out);
    std::fs::create_dir_all(&out).unwrap();
    let mut manifest = Vec::new();
    for entry in corpus::all() {
        let plan = Plan::from_json(&entry.plan).unwrap_or_else(|e| panic!("{}: {e}", entry.name));
        let report = trainplan_core::evaluate(&plan);
        let errors: Vec<&str> = report
            .findings
            .iter()
            .filter(|f| f.severity == Severity::Error)
            .map(|f| f.code.as_str())
            .collect();
        let link = format!("#{}", trainplan_core::permalink::encode(&plan));
        let dir = out.join(&entry.name);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("plan.json"), &entry.plan).unwrap();
        let files = match trainplan_core::emit::emit(&plan, &link) {
            Ok(files) => files,
            Err(e) => panic!("{}: {e}", entry.name),
        };
        for f in &files {
            std::fs::write(dir.join(&f.name), &f.text).unwrap();
        }
        manifest.push(serde_json::json!({
            "name": entry.name,
            "framework": plan.framework.wire(),
            "method": plan.method.wire(),
            "hardware": plan.hardware.hw.id,
            "files": files.iter().map(|f| f.name.as_str()).collect::<Vec<_>>(),
            "errors": errors,
        }));
    }
    let text = serde_json::to_string_pretty(&manifest).unwrap();
    std::fs::write(out.join("manifest.json"), text + "\n").unwrap();
    eprintln!("corpus: {} plans written to {}", manifest.len(), out.display());
}
