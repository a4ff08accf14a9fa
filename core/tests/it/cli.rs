//! The `trainplan` binary: JSON out, messages and exit codes for bad input.

use std::io::Write;
use std::process::{Command, Output, Stdio};

fn trainplan(args: &[&str], stdin: &str) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_trainplan"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the trainplan binary runs");
    child.stdin.take().unwrap().write_all(stdin.as_bytes()).unwrap();
    child.wait_with_output().unwrap()
}

#[test]
fn eval_prints_the_report_as_json() {
    let out = trainplan(
        &["eval", "-"],
        r#"{"model": "llama-2-7b", "cluster": {"nodes": 1, "devices_per_node": 8}}"#,
    );
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["params"]["total"], 6_738_415_616_u64);
    // 6,738,415,616 parameters × 2 bytes / 8 devices, every tensor dividing evenly.
    assert_eq!(report["memory"]["zero3_bf16_weight_bytes_per_device"], 1_684_603_904_u64);
}

#[test]
fn models_lists_the_catalog() {
    let out = trainplan(&["models"], "");
    assert!(out.status.success());
    let rows: Vec<serde_json::Value> = serde_json::from_slice(&out.stdout).unwrap();
    let llama3 = rows.iter().find(|r| r["id"] == "llama-3-8b").expect("llama-3-8b listed");
    assert_eq!(llama3["params_total"], 8_030_261_248_u64);
}

#[test]
fn bad_input_gives_a_message_and_a_nonzero_exit() {
    for (args, stdin, needle) in [
        (&["eval", "-"][..], "not json", "invalid plan file"),
        (&["eval", "-"][..], r#"{"model": "nope"}"#, "unknown model"),
        (&["eval", "/nonexistent/plan.json"][..], "", "/nonexistent/plan.json"),
        (&["eval"][..], "", "needs a plan file"),
        (&["frobnicate"][..], "", "unknown command"),
    ] {
        let out = trainplan(args, stdin);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(out.stdout.is_empty(), "{args:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains(needle), "{args:?}: {stderr}");
    }
}

#[test]
fn the_documented_report_is_what_eval_prints() {
    // docs/plan-format.md shows the report of `{"model": "llama-2-7b"}`; keep the doc true.
    let doc =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/plan-format.md")).unwrap();
    let blocks: Vec<&str> =
        doc.split("```json\n").skip(1).map(|rest| rest.split("```").next().unwrap()).collect();
    let [plan, report] = blocks[..] else { panic!("docs/plan-format.md has {} json blocks", blocks.len()) };
    let documented: serde_json::Value = serde_json::from_str(report).unwrap();
    let out = trainplan(&["eval", "-"], r#"{"model": "llama-2-7b"}"#);
    assert_eq!(serde_json::from_slice::<serde_json::Value>(&out.stdout).unwrap(), documented);
    // The documented plan file reads as a plan too.
    let out = trainplan(&["eval", "-"], plan);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
}
