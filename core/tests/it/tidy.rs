//! Repository hygiene checked as ordinary tests: the core's dependency boundary, the pinned
//! wasm-bindgen version, module docs and whitespace, and sources a reader can follow.

use std::path::{Path, PathBuf};
use std::process::Command;

pub(crate) fn repo_root() -> PathBuf {
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

/// The wasm-bindgen crate in Cargo.lock, the exact pins of both wasm modules (the page's Cargo.toml
/// and reader/Cargo.toml) and trunk's tool version must be one version, or trunk refuses to build
/// offline (scripts/setup installs the CLI of that version).
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
    for manifest in ["Cargo.toml", "reader/Cargo.toml"] {
        let text = std::fs::read_to_string(root.join(manifest)).unwrap();
        assert!(
            text.contains(&format!("wasm-bindgen = \"={locked}\"")),
            "{manifest} pins wasm-bindgen ={locked}"
        );
    }
    let trunk = std::fs::read_to_string(root.join("Trunk.toml")).unwrap();
    assert!(
        trunk.contains(&format!("wasm_bindgen = \"{locked}\"")),
        "Trunk.toml names wasm-bindgen {locked}"
    );
}

pub(crate) fn rust_files(dir: &Path, acc: &mut Vec<PathBuf>) {
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
    for dir in ["src", "tests", "core/src", "core/tests", "reader/src", "tools/bundle/src"] {
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

/// Pieces of source, each with the line it starts on.
type Pieces = Vec<(usize, String)>;

/// Rust source split into its code and its string literals, comments left out; each piece with the
/// line it starts on. A small lexer: string, raw string, byte string and char literals, line and
/// block comments, lifetimes.
fn code_and_strings(text: &str) -> (Pieces, Pieces) {
    let chars: Vec<char> = text.chars().collect();
    let (mut code, mut strings) = (Vec::new(), Vec::new());
    let (mut piece, mut line, mut idx) = (String::new(), 1, 0);
    let at = |i: usize| chars.get(i).copied().unwrap_or('\0');
    while idx < chars.len() {
        let c = chars[idx];
        if c == '/' && at(idx + 1) == '/' {
            while idx < chars.len() && chars[idx] != '\n' {
                idx += 1;
            }
        } else if c == '/' && at(idx + 1) == '*' {
            idx += 2;
            while idx < chars.len() && !(chars[idx] == '*' && at(idx + 1) == '/') {
                line += usize::from(chars[idx] == '\n');
                idx += 1;
            }
            idx += 2;
        } else if c == '"'
            || (c == 'r'
                && (at(idx + 1) == '"' || at(idx + 1) == '#')
                && !at(idx.wrapping_sub(1)).is_alphanumeric())
        {
            // A string: `"…"` with escapes, or raw `r#"…"#` with as many hashes.
            let raw = c == 'r';
            let mut hashes = 0;
            if raw {
                idx += 1;
                while at(idx) == '#' {
                    hashes += 1;
                    idx += 1;
                }
                if at(idx) != '"' {
                    // `r#ident`: a raw identifier, code.
                    piece.push('r');
                    continue;
                }
            }
            code.push((line, std::mem::take(&mut piece)));
            let start = line;
            let mut literal = String::new();
            idx += 1;
            while let Some(&ch) = chars.get(idx) {
                if !raw && ch == '\\' {
                    literal.push(at(idx + 1));
                    idx += 2;
                    continue;
                }
                if ch == '"' && (0..hashes).all(|h| at(idx + 1 + h) == '#') {
                    idx += 1 + hashes;
                    break;
                }
                line += usize::from(ch == '\n');
                literal.push(ch);
                idx += 1;
            }
            strings.push((start, literal));
        } else if c == '\''
            && (at(idx + 2) == '\''
                || (at(idx + 1) == '\\' && chars[idx + 1..].iter().take(12).any(|&x| x == '\'')))
        {
            // A char literal (`'"'`, `'\n'`, `'\u{a0}'`), not a lifetime.
            idx += 1;
            if at(idx) == '\\' {
                idx += 1;
            }
            idx += 1;
            while idx < chars.len() && chars[idx] != '\'' {
                idx += 1;
            }
            idx += 1;
            piece.push_str("' '");
        } else {
            if c == '\n' {
                code.push((line, std::mem::take(&mut piece)));
                line += 1;
            } else {
                piece.push(c);
            }
            idx += 1;
        }
    }
    code.push((line, piece));
    (code, strings)
}

/// A source's text before its `#[cfg(test)]` module: what ships.
fn shipped(text: &str) -> &str {
    text.find("#[cfg(test)]").map_or(text, |at| &text[..at])
}

/// Every unit conversion in Rust source (comments aside): a factor between units written as a
/// number (10^3 to 10^15 and their inverses, 1024, 2^20, 2^30, 2^40, 3600 s, 86,400 s, a percentage's
/// 100.0), a shift by 10, 20, 30 or 40 bits, a power of 2 or 10, or a byte unit's name in a string.
fn unit_conversions(text: &str) -> Vec<String> {
    let factors = [
        1e3,
        1e6,
        1e9,
        1e12,
        1e15,
        1e-3,
        1e-6,
        1e-9,
        1e-12,
        1024.0,
        1048576.0,
        1073741824.0,
        1099511627776.0,
        3600.0,
        86400.0,
    ];
    let (code, strings) = code_and_strings(shipped(text));
    let mut hits = Vec::new();
    for (line, piece) in &code {
        let chars: Vec<char> = piece.chars().collect();
        let mut idx = 0;
        while idx < chars.len() {
            let starts_number = chars[idx].is_ascii_digit()
                && !(0 < idx
                    && (chars[idx - 1].is_alphanumeric() || chars[idx - 1] == '_' || chars[idx - 1] == '.'));
            if !starts_number {
                idx += 1;
                continue;
            }
            // The literal: digits and `_`, a fraction, an exponent, then a type suffix.
            let start = idx;
            while idx < chars.len() && (chars[idx].is_ascii_digit() || chars[idx] == '_') {
                idx += 1;
            }
            if chars.get(idx) == Some(&'.') && chars.get(idx + 1).is_some_and(|c| c.is_ascii_digit()) {
                idx += 1;
                while idx < chars.len() && (chars[idx].is_ascii_digit() || chars[idx] == '_') {
                    idx += 1;
                }
            }
            if matches!(chars.get(idx), Some('e' | 'E'))
                && chars.get(idx + 1).is_some_and(|c| c.is_ascii_digit() || *c == '-' || *c == '+')
            {
                idx += 2;
                while idx < chars.len() && chars[idx].is_ascii_digit() {
                    idx += 1;
                }
            }
            let number: String = chars[start..idx].iter().filter(|&&c| c != '_').collect();
            let suffix_start = idx;
            while idx < chars.len() && (chars[idx].is_alphanumeric() || chars[idx] == '_') {
                idx += 1;
            }
            let suffix: String = chars[suffix_start..idx].iter().collect();
            let Ok(value) = number.parse::<f64>() else { continue };
            let float = number.contains(['.', 'e', 'E']) || suffix.contains('f');
            let before: String = chars[..start].iter().collect::<String>().trim_end().to_owned();
            let after: String = chars[idx..].iter().collect();
            let factor = factors.iter().any(|f| (value - f).abs() <= 1e-9 * f.abs());
            let percent = float && value == 100.0;
            let shift = (before.ends_with("<<") || before.ends_with(">>"))
                && [10.0, 20.0, 30.0, 40.0].contains(&value);
            let power = (value == 2.0 || value == 10.0) && after.starts_with(".pow");
            if factor || percent || shift || power {
                hits.push(format!("{line}: {}", piece.trim()));
            }
        }
    }
    for (line, literal) in &strings {
        if ["KiB", "MiB", "GiB", "TiB"].iter().any(|unit| literal.contains(unit)) {
            hits.push(format!("{line}: \"{literal}\""));
        }
    }
    hits
}

/// The page's `.rs` files under `dir` (relative to the root).
fn page_files(dir: &str) -> Vec<PathBuf> {
    let mut files = Vec::new();
    rust_files(&repo_root().join(dir), &mut files);
    files.sort();
    files
}

/// Invariant: no component converts units for display; src/format.rs does (ARCHITECTURE.md).
#[test]
fn components_convert_no_units() {
    // The checker finds each kind of conversion …
    for bad in [
        "let gib = bytes as f64 / (1u64 << 30) as f64;",
        "let gib = bytes >> 30;",
        "let offset = mib / 1024.0;",
        "let tflops = x / 1e12;",
        "let tflops = x / 1_000_000_000_000.0;",
        "let ms = seconds * 1e3;",
        "let ms = seconds * 1000.0;",
        "let hours = seconds / 3600.0;",
        "let text = format!(\"{:.0}%\", p * 100.0);",
        "let text = format!(\"{x:.2} GiB\");",
        "let scale = 2f64.powi(30);",
        "let scale = 10f64.powi(9);",
        "let label = r#\"(GiB)\"#;",
    ] {
        assert_eq!(unit_conversions(bad).len(), 1, "missed: {bad}");
    }
    // … and lets through what is not one: comments, counts, geometry, placeholders.
    let fine = "// 1024 bytes, 1e9 in a comment\nlet n = items.len() * 2;\nlet px = (width - 72.0) / 90.0;\n\
        let ok = \"Et|(tt|)*30mL\";\nlet lifetime: &'static str = \"1e9\";\nlet c = '\"'; let big = 10_000.0;\n\
        /* 1 << 30 */ let d = (dx * dx).powi(2);";
    assert_eq!(unit_conversions(fine), Vec::<String>::new());
    // format.rs, where the conversions belong, holds them: the checker sees real code.
    let format = std::fs::read_to_string(repo_root().join("src/format.rs")).unwrap();
    for helper in [
        "pub fn gib(",
        "pub fn in_gib(",
        "pub fn percent(",
        "pub fn seconds(",
        "pub fn share(",
        "pub fn whole_tflops(",
    ] {
        assert!(format.contains(helper), "src/format.rs has no {helper}");
    }
    assert!(5 <= unit_conversions(&format).len(), "{:?}", unit_conversions(&format));
    // The components hold none.
    let files = page_files("src/components");
    assert!(20 <= files.len(), "found only {files:?}");
    let mut hits = Vec::new();
    for path in &files {
        let text = std::fs::read_to_string(path).unwrap();
        let name = path.strip_prefix(repo_root()).unwrap().display().to_string();
        hits.extend(unit_conversions(&text).into_iter().map(|hit| format!("{name}:{hit}")));
    }
    assert!(hits.is_empty(), "convert units in src/format.rs, not in a component:\n{}", hits.join("\n"));
}

/// Each place a component names one framework or method (`Framework::Verl`, `Method::Grpo`):
/// listing them all (`::ALL`) and their functions (`Framework::name`) aside.
fn framework_or_method_variants(text: &str) -> Vec<String> {
    let (code, _) = code_and_strings(shipped(text));
    let mut hits = Vec::new();
    for (line, piece) in &code {
        for enum_name in ["Framework::", "Method::"] {
            for (at, _) in piece.match_indices(enum_name) {
                let before = piece[..at].chars().next_back();
                let name: String = piece[at + enum_name.len()..]
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                let whole_word = !before.is_some_and(|c| c.is_alphanumeric() || c == '_');
                if whole_word && name.starts_with(|c: char| c.is_ascii_uppercase()) && name != "ALL" {
                    hits.push(format!("{line}: {}", piece.trim()));
                }
            }
        }
    }
    hits
}

/// Invariant: no component decides what a framework or method brings or takes; it names no
/// framework or method variant and asks the core (`knobs::applies`, `choices`) (ARCHITECTURE.md).
#[test]
fn components_name_no_framework_or_method() {
    // The rule the form once held, VeRL forcing ZeRO-3, is caught; listing and naming are not.
    let verl =
        "if fw == Framework::Verl && f.file.parallel.zero_stage == 0 { f.file.parallel.zero_stage = 3; }";
    assert_eq!(framework_or_method_variants(verl).len(), 1);
    let rl = "let is_rl = matches!(f.file.method, Method::Grpo | Method::Ppo);";
    assert_eq!(framework_or_method_variants(rl).len(), 2);
    let fine = "// Framework::Verl in a comment\nlet all = Framework::ALL.iter().map(|&fw| Framework::name(fw));\n\
        let m = Method::ALL; let s = \"Method::Grpo\"; let k = TrainingMethod::Dpo;";
    assert_eq!(framework_or_method_variants(fine), Vec::<String>::new());
    // The core holds the rule, and the form asks it.
    let choices = std::fs::read_to_string(repo_root().join("core/src/choices.rs")).unwrap();
    assert!(choices.contains("pub fn choose_framework(") && choices.contains("Framework::Verl"));
    let files = page_files("src/components");
    assert!(20 <= files.len(), "found only {files:?}");
    let mut hits = Vec::new();
    let mut asks = false;
    for path in &files {
        let text = std::fs::read_to_string(path).unwrap();
        asks |= text.contains("choices::choose_framework");
        let name = path.strip_prefix(repo_root()).unwrap().display().to_string();
        hits.extend(framework_or_method_variants(&text).into_iter().map(|hit| format!("{name}:{hit}")));
    }
    assert!(asks, "no component calls choices::choose_framework");
    assert!(hits.is_empty(), "ask the core what a framework or method brings:\n{}", hits.join("\n"));
}

/// The plan-file fields docs/plan-format.md documents: the first cell of each row of its tables
/// (`parallel.tp`, `.pp` expanding to `parallel.pp`; custom hardware's `hardware.custom.*`).
fn documented_fields() -> std::collections::BTreeSet<String> {
    let doc = std::fs::read_to_string(repo_root().join("docs/plan-format.md")).unwrap();
    let ticked =
        |text: &str| -> Vec<String> { text.split('`').skip(1).step_by(2).map(str::to_owned).collect() };
    let mut res = std::collections::BTreeSet::new();
    for row in doc.lines().filter(|l| l.starts_with("| `")) {
        let mut prefix = String::new();
        for name in ticked(row.split('|').nth(1).unwrap_or("")) {
            match name.strip_prefix('.') {
                Some(rest) => res.insert(format!("{prefix}.{rest}")),
                None => {
                    prefix = name.rsplit_once('.').map_or(String::new(), |(p, _)| p.to_owned());
                    res.insert(name)
                }
            };
        }
    }
    res
}

/// The dotted plan-file fields a Rust source names in its strings that `documented` lacks, as
/// (line, field): strings made of a section, a dot and a key (`"parallel.tp"`), finding `codes`
/// aside (`parallel.layers_pp` looks alike).
fn undocumented_fields(
    text: &str,
    documented: &std::collections::BTreeSet<String>,
    codes: &std::collections::BTreeSet<&str>,
) -> Vec<(usize, String)> {
    const SECTIONS: [&str; 10] = [
        "parallel",
        "recompute",
        "batch",
        "lora",
        "moe",
        "rl",
        "cluster",
        "calibration",
        "budget",
        "overheads",
    ];
    let is_field = |piece: &str| {
        let chars_ok =
            piece.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == '.');
        let section = piece.split_once('.').filter(|(_, key)| !key.is_empty()).map(|(s, _)| s);
        chars_ok
            && (section.is_some_and(|s| SECTIONS.contains(&s)) || piece.starts_with("hardware.custom."))
            && !piece.ends_with('.')
    };
    code_and_strings(text)
        .1
        .into_iter()
        .filter(|(_, piece)| {
            is_field(piece) && !codes.contains(piece.as_str()) && !documented.contains(piece)
        })
        .collect()
}

/// Invariant: every plan-file field the code names (a fix's field, a knob's path, a range error's
/// field, a form field, a search change) is a field docs/plan-format.md documents.
#[test]
fn every_field_the_code_names_is_documented() {
    let documented = documented_fields();
    // The documentation is read as expected: a field of each kind of row.
    for field in ["parallel.tp", "parallel.etp", "rl.max_response_length", "hardware.custom.fp4_tflops"] {
        assert!(documented.contains(field), "{field} not read from docs/plan-format.md");
    }
    // Backticked words in a row's other cells are no fields.
    assert!(!documented.contains("ascend") && !documented.contains("hardware.custom.ascend"));
    let report = std::fs::read_to_string(repo_root().join("core/src/report.rs")).unwrap();
    let codes: std::collections::BTreeSet<&str> =
        report.split("= \"").skip(1).filter_map(|s| s.split_once("\" =>").map(|(code, _)| code)).collect();
    assert!(codes.contains("parallel.layers_pp") && codes.contains("memory.does_not_fit"));
    // The checker first, on a snippet it must catch (a misspelt field) and ones it must pass.
    let snippet =
        r#"fix("parallel.tpp", 2); fix("parallel.tp", 2); code("parallel.layers_pp"); starts("moe."); "a.b""#;
    assert_eq!(undocumented_fields(snippet, &documented, &codes), [(1, "parallel.tpp".to_owned())]);
    let mut files = Vec::new();
    rust_files(&repo_root().join("core/src"), &mut files);
    rust_files(&repo_root().join("src"), &mut files);
    let mut undocumented = Vec::new();
    for path in files {
        let text = std::fs::read_to_string(&path).unwrap();
        for (line, field) in undocumented_fields(&text, &documented, &codes) {
            undocumented.push(format!("{}:{line} {field}", path.display()));
        }
    }
    assert!(
        undocumented.is_empty(),
        "fields named in code but not in docs/plan-format.md:\n{}",
        undocumented.join("\n")
    );
}

/// Invariant: the field registry (`trainplan_core::field::Field`) is docs/plan-format.md's table of
/// fields, no more and no fewer, and each path reads back as its field.
#[test]
fn the_field_registry_is_the_documented_table() {
    use trainplan_core::field::Field;
    let documented = documented_fields();
    let registered: std::collections::BTreeSet<String> =
        Field::ALL.iter().map(|f| f.path().to_owned()).collect();
    assert_eq!(registered, documented);
    assert!(Field::ALL.iter().all(|&f| Field::from_path(f.path()) == Some(f)));
    assert_eq!(Field::from_path("parallel.tpp"), None);
    assert_eq!(serde_json::to_value(Field::ParallelTp).unwrap(), "parallel.tp");
}

/// The README gives the model and device catalogs' sizes in English and in Chinese: each is the
/// catalog's (the Chinese had stayed at 48 models as the catalog grew to 72).
#[test]
fn the_readme_counts_the_catalogs_in_both_languages() {
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../README.md")).unwrap();
    let n = trainplan_core::catalog::CONFIGS.len();
    assert!(readme.contains(&format!("any of {n} catalog models")), "the English README's count is not {n}");
    assert!(readme.contains(&format!("支持 {n} 个模型库中的模型")), "the Chinese README's count is not {n}");
    let d = trainplan_core::hardware::devices().len();
    assert!(
        readme.contains(&format!("each device of {d} NVIDIA and Ascend devices")),
        "English: not {d} devices"
    );
    assert!(readme.contains(&format!("以及 {d} 种 NVIDIA / 昇腾设备")), "Chinese: not {d} devices");
}
