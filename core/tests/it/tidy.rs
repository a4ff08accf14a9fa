//! Repository hygiene checked as ordinary tests: the core's dependency boundary, the pinned
//! wasm-bindgen version, module docs and whitespace, and sources a reader can follow.

use std::path::{Path, PathBuf};
use std::process::Command;

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf()
}

/// Invariant: the core depends on no web, wasm or UI crate (ARCHITECTURE.md).
#[test]
fn core_depends_on_no_web_crate() {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let out = Command::new(cargo)
        .current_dir(repo_root())
        .args([
            "tree",
            "-p",
            "trainplan-core",
            "--edges",
            "normal,build",
            "--prefix",
            "none",
            "--all-features",
        ])
        .output()
        .expect("cargo tree runs");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let tree = String::from_utf8(out.stdout).unwrap();
    assert!(tree.contains("serde_json"), "cargo tree printed the core's dependencies:\n{tree}");
    let forbidden = ["leptos", "web-sys", "js-sys", "wasm-bindgen", "gloo", "tachys", "reactive_graph"];
    for line in tree.lines() {
        let name = line.split_whitespace().next().unwrap_or("");
        assert!(!forbidden.iter().any(|f| name.starts_with(f)), "trainplan-core depends on {line}");
    }
}

/// The wasm-bindgen crate in Cargo.lock, the exact pin in Cargo.toml and trunk's tool version must
/// be one version, or trunk refuses to build offline (scripts/setup installs the CLI of that version).
#[test]
fn wasm_bindgen_versions_agree() {
    let root = repo_root();
    let lock = std::fs::read_to_string(root.join("Cargo.lock")).unwrap();
    let locked = lock
        .split("[[package]]")
        .find(|block| block.contains("name = \"wasm-bindgen\"\n"))
        .and_then(|block| block.lines().find_map(|l| l.strip_prefix("version = \"")))
        .map(|v| v.trim_end_matches('"').to_owned())
        .expect("wasm-bindgen is in Cargo.lock");
    let manifest = std::fs::read_to_string(root.join("Cargo.toml")).unwrap();
    assert!(
        manifest.contains(&format!("wasm-bindgen = \"={locked}\"")),
        "Cargo.toml pins wasm-bindgen ={locked}"
    );
    let trunk = std::fs::read_to_string(root.join("Trunk.toml")).unwrap();
    assert!(
        trunk.contains(&format!("wasm_bindgen = \"{locked}\"")),
        "Trunk.toml names wasm-bindgen {locked}"
    );
}

fn rust_files(dir: &Path, acc: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, acc);
        } else if path.extension().is_some_and(|e| e == "rs") {
            acc.push(path);
        }
    }
}

#[test]
fn every_rust_file_has_a_module_doc_and_clean_lines() {
    let root = repo_root();
    let mut files = Vec::new();
    for dir in ["src", "tests", "core/src", "core/tests"] {
        rust_files(&root.join(dir), &mut files);
    }
    assert!(10 <= files.len(), "found only {files:?}");
    for path in files {
        let text = std::fs::read_to_string(&path).unwrap();
        let name = path.strip_prefix(&root).unwrap().display();
        assert!(text.starts_with("//!"), "{name} does not start with a `//!` module doc");
        for (idx, line) in text.lines().enumerate() {
            assert!(!line.ends_with([' ', '\t']), "{name}:{}: trailing whitespace", idx + 1);
        }
        let banned = ["#[should_panic", "#[ignore"];
        assert!(
            !banned.iter().any(|b| text.contains(b) && !name.to_string().ends_with("tidy.rs")),
            "{name}: {banned:?}"
        );
    }
}

/// docs/constants.md lists every public constant of the memory and time models with its value.
#[test]
fn constants_list_matches_the_code() {
    let root = repo_root();
    let doc = std::fs::read_to_string(root.join("docs/constants.md")).unwrap();
    let mut found = 0;
    for module in ["memory", "time"] {
        // A module is a file, or a directory whose `mod.rs` holds the constants.
        let file = root.join(format!("core/src/{module}.rs"));
        let file = if file.exists() { file } else { root.join(format!("core/src/{module}/mod.rs")) };
        let code = std::fs::read_to_string(file).unwrap();
        for line in code.lines().filter(|l| l.starts_with("pub const ")) {
            let name = line["pub const ".len()..].split(':').next().unwrap().trim();
            let row = doc
                .lines()
                .find(|l| l.starts_with(&format!("| `{module}::{name}` |")))
                .unwrap_or_else(|| panic!("docs/constants.md has no row for {module}::{name}"));
            // The documented value appears in the code line (after normalizing MiB shifts).
            let value = row.split('|').nth(2).unwrap().trim();
            let normalized = value.replace(" MiB", " << 20");
            assert!(line.contains(&normalized), "{module}::{name}: docs say {value}, code says {line}");
            found += 1;
        }
    }
    let rows = doc.lines().filter(|l| l.starts_with("| `")).count();
    assert_eq!(rows, found, "docs/constants.md lists constants the code no longer has");
}

/// Every file under `dir` except the `skip` paths (relative to the root) and build output.
fn all_files(root: &Path, dir: &Path, skip: &[&str], acc: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries {
        let path = entry.unwrap().path();
        let rel = path.strip_prefix(root).unwrap().to_string_lossy().replace('\\', "/");
        let name = path.file_name().unwrap_or_default().to_string_lossy().into_owned();
        if skip.contains(&rel.as_str()) || [".git", "target", "node_modules"].contains(&name.as_str()) {
            continue;
        }
        if path.is_dir() {
            all_files(root, &path, skip, acc);
        } else {
            acc.push(path);
        }
    }
}

/// Every source a comment, a doc or the page cites is public (a repository and path, a URL, a
/// paper), so a reader can follow it: no file names notes that only the authors have.
#[test]
fn cited_sources_are_public() {
    let root = repo_root();
    // Built from parts, so that this file does not match itself.
    let notes = ["frameworks", "landscape", "toolchain"];
    let mut banned: Vec<String> = notes.map(|n| format!("{n}.md")).to_vec();
    banned.push(["..", "shared"].join("/"));
    banned.extend([" ", "-", "_"].map(|sep| format!("seed{sep}0")));
    banned.push(["种子", "0"].join(" "));
    let skip = ["dist", "core/data/flags", "conformance/good", "conformance/broken"];
    let mut files = Vec::new();
    all_files(&root, &root, &skip, &mut files);
    assert!(100 <= files.len(), "found only {} files", files.len());
    let mut hits = Vec::new();
    for path in &files {
        // Binary files (images, fonts) are not read.
        let Ok(text) = std::fs::read_to_string(path) else { continue };
        let name = path.strip_prefix(&root).unwrap().display();
        for (idx, line) in text.lines().enumerate() {
            let lower = line.to_lowercase();
            if let Some(b) = banned.iter().find(|b| lower.contains(b.as_str())) {
                hits.push(format!("{name}:{}: {b}", idx + 1));
            }
        }
    }
    assert!(hits.is_empty(), "cite the public source instead of these notes:\n{}", hits.join("\n"));
}
