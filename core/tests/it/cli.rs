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
    assert!(30 <= rows.len());
}

#[test]
fn hardware_lists_the_catalog() {
    let out = trainplan(&["hardware"], "");
    assert!(out.status.success());
    let rows: Vec<serde_json::Value> = serde_json::from_slice(&out.stdout).unwrap();
    let h100 = rows.iter().find(|r| r["id"] == "h100-sxm-80g").expect("h100 listed");
    // NVIDIA H100 datasheet: 80 GB (80 GiB of HBM3), 989 TFLOPS dense bf16.
    assert_eq!(h100["memory_bytes"], 80_u64 << 30);
    assert_eq!(h100["bf16_flops_per_second"], 989e12);
    assert!(rows.iter().any(|r| r["id"] == "ascend-910c" && r["devices_per_node"] == 16));
}

#[test]
fn link_and_eval_link_agree_with_eval() {
    let plan = r#"{"model": "mixtral-8x7b", "cluster": {"nodes": 2}, "method": "sft-full"}"#;
    let out = trainplan(&["link", "-"], plan);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let link = String::from_utf8(out.stdout).unwrap();
    assert!(link.starts_with("v1="));
    let via_link = trainplan(&["eval", "--link", link.trim()], "");
    assert!(via_link.status.success(), "{}", String::from_utf8_lossy(&via_link.stderr));
    let direct = trainplan(&["eval", "-"], plan);
    assert_eq!(via_link.stdout, direct.stdout);
    let report: serde_json::Value = serde_json::from_slice(&direct.stdout).unwrap();
    // keras-hub mixtral_8_7b_en: 46,702,792,704 parameters.
    assert_eq!(report["params"]["total"], 46_702_792_704_u64);
}

#[test]
fn import_reads_a_config_and_warns_on_an_unknown_type() {
    let config = r#"{"model_type": "newarch", "vocab_size": 32000, "hidden_size": 4096, "intermediate_size": 11008,
      "num_hidden_layers": 32, "num_attention_heads": 32}"#;
    let out = trainplan(&["import", "-"], config);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let res: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(res["params"]["total"], 6_738_415_616_u64);
    assert_eq!(res["model"]["model_type"], "llama");
    assert!(String::from_utf8_lossy(&out.stderr).to_lowercase().contains("unknown model_type \"newarch\""));
}

#[test]
fn bad_input_gives_a_message_and_a_nonzero_exit() {
    for (args, stdin, needle) in [
        (&["eval", "-"][..], "not json", "invalid plan"),
        (&["eval", "--link", "v1=!!"][..], "", "damaged"),
        (&["eval", "--link", "v7=abc"][..], "", "newer version"),
        (&["import", "-"][..], "{\"model_type\": \"my_decoder\"}", "hidden_size"),
        (&["import", "-"][..], "nope", "not valid JSON"),
        (&["eval", "-"][..], r#"{"model": "nope"}"#, "unknown model"),
        (&["eval", "/nonexistent/plan.json"][..], "", "/nonexistent/plan.json"),
        (&["eval"][..], "", "needs a plan file"),
        (&["link"][..], "", "needs a plan file"),
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
fn the_documented_report_and_link_are_what_the_cli_prints() {
    // docs/plan-format.md shows the report of its first example and a permalink; keep the doc true.
    let doc =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/plan-format.md")).unwrap();
    let block_after = |heading: &str, fence: &str| -> String {
        let section = &doc[doc.find(heading).unwrap_or_else(|| panic!("no {heading}"))..];
        let body = &section[section.find(fence).unwrap() + fence.len()..];
        body[..body.find("```").unwrap()].to_owned()
    };
    let plan = block_after("# Plan file format", "```json\n");
    let documented: serde_json::Value = serde_json::from_str(&block_after("## Report", "```json\n")).unwrap();
    let out = trainplan(&["eval", "-"], &plan);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(serde_json::from_slice::<serde_json::Value>(&out.stdout).unwrap(), documented);
    let custom = block_after("### Custom hardware", "```json\n");
    let with_custom = format!(r#"{{"model": "gpt2", "hardware": {custom}}}"#);
    assert!(trainplan(&["eval", "-"], &with_custom).status.success(), "the custom hardware example reads");
    let link = block_after("## Permalink", "```text\n");
    let out = trainplan(&["eval", "--link", link.trim()], "");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
}

#[test]
fn emit_writes_the_files_or_one_zip() {
    let dir = std::env::temp_dir().join(format!("trainplan-cli-emit-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let plan = r#"{"model": "qwen2.5-7b"}"#;
    let out = trainplan(&["emit", "-", "--out", dir.to_str().unwrap()], plan);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    // LLaMA-Factory at ZeRO 0: the training YAML and the launch script, no DeepSpeed file.
    let listed: Vec<&str> = std::str::from_utf8(&out.stdout).unwrap().lines().collect();
    assert_eq!(listed.len(), 2, "{listed:?}");
    let out = trainplan(&["emit", "-", "--out", dir.to_str().unwrap(), "--zip"], plan);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let zip = dir.join("qwen2.5-7b-llamafactory.zip");
    assert_eq!(std::str::from_utf8(&out.stdout).unwrap().trim(), zip.display().to_string());
    let archive = zip::ZipArchive::new(std::fs::File::open(&zip).unwrap()).unwrap();
    assert_eq!(archive.len(), 2);
    let _ = std::fs::remove_dir_all(&dir);
}

/// `--csv` prints what the page's CSV downloads hold: the same bytes as the core's export.
#[test]
fn eval_and_search_print_csv_on_request() {
    let plan = r#"{"model": "qwen2.5-7b"}"#;
    let out = trainplan(&["eval", "-", "--csv"], plan);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let report = trainplan_core::evaluate(&trainplan_core::Plan::from_json(plan).unwrap());
    assert_eq!(String::from_utf8(out.stdout).unwrap(), trainplan_core::export::report_csv(&report));
    let out = trainplan(&["search", "--csv", "-"], plan);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.starts_with("list,rank,tokens_per_second,step_seconds,mfu_frac,peak_bytes,headroom_bytes,"),
        "{text}"
    );
    assert!(text.contains("\r\nbest,1,"), "{text}");
    // On any number of threads, the same plans (the CSV lists what was found, not the counts).
    let two = trainplan(&["search", "--csv", "--threads", "2", "-"], plan);
    assert_eq!(String::from_utf8(two.stdout).unwrap(), text);
    for bad in ["0", "65", "many"] {
        // Refused before standard input is read: none is written, so none meets a closed pipe.
        let out = trainplan(&["search", "--threads", bad, "-"], "");
        assert_eq!(out.status.code(), Some(2), "--threads {bad}");
        assert!(String::from_utf8_lossy(&out.stderr).contains("--threads takes a count of 1 to 64"), "{bad}");
    }
    // Without a plan, as before.
    let out = trainplan(&["eval", "--csv"], "");
    assert!(String::from_utf8_lossy(&out.stderr).contains("needs a plan file"));
}

/// `trainplan calibrate` prints the fitted calibration and says on standard error what it read,
/// for a VeRL log each RL phase it timed beside the plan's as modelled.
#[test]
fn calibrate_fits_a_log_and_names_its_phases() {
    let plan = std::env::temp_dir().join(format!("trainplan-calibrate-{}.json", std::process::id()));
    std::fs::write(&plan, r#"{"model": "qwen2.5-7b", "framework": "verl", "method": "grpo"}"#).unwrap();
    let log = "step:1 - timing_s/gen:30 - timing_s/update_weights:1.5 - timing_s/step:60\n\
               step:2 - timing_s/gen:31 - timing_s/update_weights:1.4 - timing_s/step:61\n";
    let out = trainplan(&["calibrate", plan.to_str().unwrap(), "-"], log);
    std::fs::remove_file(&plan).ok();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let fitted: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(fitted["efficiency_scale"].as_f64().is_some_and(|s| 0.0 < s), "{fitted}");
    assert!(stderr.contains("Generation logged 31.000 s"), "{stderr}");
    assert!(stderr.contains("WeightSync logged 1.400 s"), "{stderr}");
}
