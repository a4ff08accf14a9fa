//! Invariants ARCHITECTURE.md states that the source itself must keep, checked on the text: the
//! core's library does no IO, internal types stay out of the serialized contract, every word a view
//! shows comes from the string table, and no function grows past what a reader holds in mind.
//! Each checker is first tried on snippets it must catch and snippets it must pass.

use std::path::PathBuf;

use crate::tidy::{repo_root, rust_files};

/// `text` with every comment blanked to spaces (line breaks kept), and with the contents of string
/// and char literals blanked too unless `keep_strings`: the same lines, so positions still count
/// lines. Raw strings (`r#"…"#`) and lifetimes (`'a`) are told apart from literals.
fn masked(text: &str, keep_strings: bool) -> String {
    let chars: Vec<char> = text.chars().collect();
    let at = |i: usize| chars.get(i).copied().unwrap_or('\0');
    let mut out = String::with_capacity(text.len());
    let blank = |out: &mut String, c: char| out.push(if c == '\n' { '\n' } else { ' ' });
    let mut idx = 0;
    while idx < chars.len() {
        let c = chars[idx];
        if c == '/' && at(idx + 1) == '/' {
            while idx < chars.len() && chars[idx] != '\n' {
                blank(&mut out, chars[idx]);
                idx += 1;
            }
        } else if c == '/' && at(idx + 1) == '*' {
            while idx < chars.len() && !(chars[idx] == '*' && at(idx + 1) == '/') {
                blank(&mut out, chars[idx]);
                idx += 1;
            }
            out.push_str("  ");
            idx += 2;
        } else if c == '"'
            || (c == 'r' && matches!(at(idx + 1), '"' | '#') && !at(idx.wrapping_sub(1)).is_alphanumeric())
        {
            let raw = c == 'r';
            let mut hashes = 0;
            if raw {
                out.push('r');
                idx += 1;
                while at(idx) == '#' {
                    out.push('#');
                    hashes += 1;
                    idx += 1;
                }
                if at(idx) != '"' {
                    continue; // `r#ident`
                }
            }
            out.push('"');
            idx += 1;
            while idx < chars.len() {
                let ch = chars[idx];
                if !raw && ch == '\\' {
                    for k in 0..2 {
                        let e = at(idx + k);
                        if keep_strings { out.push(e) } else { blank(&mut out, e) }
                    }
                    idx += 2;
                    continue;
                }
                if ch == '"' && (0..hashes).all(|h| at(idx + 1 + h) == '#') {
                    out.push('"');
                    out.extend(std::iter::repeat_n('#', hashes));
                    idx += 1 + hashes;
                    break;
                }
                if keep_strings {
                    out.push(ch)
                } else {
                    blank(&mut out, ch)
                }
                idx += 1;
            }
        } else if c == '\''
            && (at(idx + 2) == '\''
                || (at(idx + 1) == '\\' && chars[idx + 1..].iter().take(12).any(|&x| x == '\'')))
        {
            // A char literal (`'{'`, `'\n'`), not a lifetime: blanked whole, braces and quotes inside included.
            out.push('\'');
            idx += 1;
            if at(idx) == '\\' {
                out.push(' ');
                idx += 1;
            }
            out.push(' ');
            idx += 1;
            while idx < chars.len() && chars[idx] != '\'' {
                out.push(' ');
                idx += 1;
            }
            out.push('\'');
            idx += 1;
        } else {
            out.push(c);
            idx += 1;
        }
    }
    out
}

/// The index just past the brace that closes the one at `open` (in masked text, so braces in
/// strings and comments do not count).
fn closing(masked: &[u8], open: usize) -> usize {
    let mut depth = 0usize;
    for (idx, &b) in masked.iter().enumerate().skip(open) {
        match b {
            b'{' => depth += 1,
            b'}' => {
                depth -= 1;
                if depth == 0 {
                    return idx + 1;
                }
            }
            _ => {}
        }
    }
    masked.len()
}

fn line_of(text: &str, byte: usize) -> usize {
    text[..byte].matches('\n').count() + 1
}

fn source_files(dirs: &[&str]) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for dir in dirs {
        rust_files(&repo_root().join(dir), &mut files);
    }
    assert!(10 <= files.len(), "found only {files:?}");
    files
}

/// Functions of more than `max` lines, as (line, name, lines), unless the comments just above say
/// why with `Long:`.
fn long_functions(text: &str, max: usize) -> Vec<(usize, String, usize)> {
    let code = masked(text, false);
    let bytes = code.as_bytes();
    let lines: Vec<&str> = text.lines().collect();
    let mut res = Vec::new();
    let mut from = 0;
    while let Some(pos) = code[from..].find("fn ") {
        let start = from + pos;
        from = start + 3;
        let word_start =
            start == 0 || !(bytes[start - 1].is_ascii_alphanumeric() || bytes[start - 1] == b'_');
        let name: String =
            code[from..].chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect();
        if !word_start || name.is_empty() {
            continue;
        }
        // The body: the first `{` before any `;` (a declaration without one has no body).
        let Some(open) = code[from..].find(['{', ';']).map(|p| from + p) else { break };
        if bytes[open] == b';' {
            continue;
        }
        let end = closing(bytes, open);
        let (first, last) = (line_of(&code, start), line_of(&code, end - 1));
        let n = last - first + 1;
        if max < n {
            let above = lines[..first - 1]
                .iter()
                .rev()
                .take_while(|l| {
                    let l = l.trim_start();
                    l.starts_with("//") || l.starts_with("#[") || l.starts_with("pub") || l.is_empty()
                })
                .any(|l| l.contains("Long:"));
            if !above {
                res.push((first, name, n));
            }
        }
        from = open + 1;
    }
    res
}

/// Invariant: no function in core/src or src runs past ~120 lines unless its comment says why
/// (`Long:`), so each one fits on a screen or two.
#[test]
fn no_function_is_long_without_a_reason() {
    let body = |n: usize| (0..n).map(|i| format!("    let x{i} = {i};\n")).collect::<String>();
    let snippet = format!(
        "fn short() {{\n{}}}\n/// Doc.\nfn long() {{\n    let s = \"}}\";\n{}}}\n// Long: a table.\nfn table() {{\n{}}}\n",
        body(3),
        body(130),
        body(130)
    );
    assert_eq!(long_functions(&snippet, 120), [(7, "long".to_owned(), 133)]);
    let mut hits = Vec::new();
    for path in source_files(&["core/src", "src"]) {
        let text = std::fs::read_to_string(&path).unwrap();
        for (line, name, n) in long_functions(&text, 120) {
            hits.push(format!("{}:{line} {name}: {n} lines", path.display()));
        }
    }
    assert!(hits.is_empty(), "split these, or say why they are long (`// Long: …`):\n{}", hits.join("\n"));
}

/// IO in a library source: the file system, the clock, the environment, processes, the network,
/// the standard streams, printing (tests and the CLI's `bin/` aside; `std::io::Write` into memory
/// is no IO).
fn io_uses(text: &str) -> Vec<(usize, &'static str)> {
    const IO: [&str; 12] = [
        "std::fs",
        "io::stdin",
        "io::stdout",
        "io::stderr",
        "std::env",
        "std::process",
        "std::net",
        "Instant::now",
        "SystemTime",
        "println!",
        "eprintln!",
        "dbg!",
    ];
    let code = masked(text, false);
    let code = code.find("#[cfg(test)]").map_or(code.as_str(), |at| &code[..at]);
    let mut res = Vec::new();
    for (idx, line) in code.lines().enumerate() {
        res.extend(IO.iter().filter(|io| line.contains(*io)).map(|io| (idx + 1, *io)));
    }
    res
}

/// Invariant: the core's library does no IO: no files, no clock, no environment, no printing. The
/// CLI (`core/src/bin/`) does it all.
#[test]
fn the_core_library_does_no_io() {
    let snippet = "// std::fs in a comment\nlet t = std::time::Instant::now();\nlet s = \"println!\";\n";
    assert_eq!(io_uses(snippet), [(2, "Instant::now")]);
    let mut hits = Vec::new();
    for path in source_files(&["core/src"]) {
        if path.components().any(|c| c.as_os_str() == "bin") {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        hits.extend(io_uses(&text).into_iter().map(|(line, io)| format!("{}:{line} {io}", path.display())));
    }
    assert!(hits.is_empty(), "the core's library does no IO:\n{}", hits.join("\n"));
}

/// Whether the type `name` is declared in `text` with a serde derive.
fn derives_serde(text: &str, name: &str) -> Option<bool> {
    let code = masked(text, false);
    let decl = [format!("pub struct {name} "), format!("pub struct {name}<"), format!("pub enum {name} ")]
        .into_iter()
        .find_map(|d| code.find(&d))?;
    let attrs: Vec<&str> = code[..decl]
        .lines()
        .rev()
        .map(str::trim)
        .skip_while(|l| l.is_empty())
        .take_while(|l| l.starts_with("#[") || l.is_empty())
        .collect();
    Some(attrs.iter().any(|a| a.contains("Serialize") || a.contains("Deserialize")))
}

/// Boundary: `PlanFile` and `Report` are the serialized contract; the model's internal types
/// (`Architecture`, `ParamCounts`, the tensor list) derive no serde, so they can change freely.
#[test]
fn internal_types_stay_out_of_the_contract() {
    assert_eq!(derives_serde("#[derive(Clone, Serialize)]\npub struct A {}\n", "A"), Some(true));
    assert_eq!(derives_serde("/// Doc.\n#[derive(Clone)]\npub struct A {}\n", "A"), Some(false));
    let model = std::fs::read_to_string(repo_root().join("core/src/model.rs")).unwrap();
    for name in ["Architecture", "ParamCounts", "TensorGroup", "Summary", "LayerCounts", "Attention", "Moe"] {
        assert_eq!(derives_serde(&model, name), Some(false), "model::{name}");
    }
    let report = std::fs::read_to_string(repo_root().join("core/src/report.rs")).unwrap();
    assert_eq!(derives_serde(&report, "Report"), Some(true), "the report is the contract");
}

/// Units, written the same in English and Chinese.
const UNITS: [&str; 12] = ["GiB", "GB", "MiB", "TB", "s", "ms", "W", "kWh", "TFLOPS", "Gb", "B", "K"];

/// Whether `text` holds a word that is not a unit.
fn has_words(text: &str) -> bool {
    text.split(|c: char| !c.is_alphanumeric())
        .any(|w| w.chars().any(char::is_alphabetic) && !UNITS.contains(&w))
}

/// Words a `view!` writes itself, as (line, text): text between tags and the visible attributes
/// (`title`, `placeholder`, `aria-label`, `alt`) holding a word that is not a unit, outside `{…}`
/// Rust blocks.
fn view_words(text: &str) -> Vec<(usize, String)> {
    let code = masked(text, true);
    let bytes = code.as_bytes();
    let mut res = Vec::new();
    let mut from = 0;
    while let Some(pos) = code[from..].find("view! {") {
        let open = from + pos + "view! ".len();
        let end = closing(bytes, open);
        // The markup at the view's own level: nested `{…}` blocks are Rust, skipped.
        let (mut depth, mut in_string) = (0usize, false);
        let mut flat: Vec<(usize, char)> = Vec::new();
        for (off, ch) in code[open + 1..end - 1].char_indices() {
            let at = open + 1 + off;
            match ch {
                '"' if depth == 0 => in_string = !in_string,
                '{' if !in_string => depth += 1,
                '}' if !in_string => depth -= 1,
                _ => {}
            }
            if depth == 0 && ch != '}' {
                flat.push((at, ch));
            }
        }
        let s: String = flat.iter().map(|&(_, c)| c).collect();
        let pos_of = |i: usize| flat[i.min(flat.len() - 1)].0;
        // Text nodes: after a tag's `>` (not `=>`, `->`), up to the next `<`.
        let chars: Vec<char> = s.chars().collect();
        for (i, &c) in chars.iter().enumerate() {
            if c == '>' && 0 < i && !matches!(chars[i - 1], '=' | '-') {
                let rest: String = chars[i + 1..].iter().take_while(|&&c| c != '<').collect();
                if has_words(&rest) {
                    res.push((line_of(&code, pos_of(i)), rest.trim().to_owned()));
                }
            }
        }
        for attr in ["title=\"", "placeholder=\"", "aria-label=\"", "alt=\""] {
            let mut from = 0;
            while let Some(p) = s[from..].find(attr) {
                let start = from + p + attr.len();
                let value: String = s[start..].chars().take_while(|&c| c != '"').collect();
                if has_words(&value) {
                    let i = s[..start].chars().count();
                    res.push((line_of(&code, pos_of(i)), format!("{attr}{value}\"")));
                }
                from = start;
            }
        }
        from = end;
    }
    res
}

/// Invariant: no visible string is written in a `view!` but punctuation and units; words come
/// from `i18n::t`, so each exists in English and Chinese.
#[test]
fn views_write_no_words_of_their_own() {
    let snippet = "fn v() { view! {\n <p class=\"x\">{tr(Key::a)}</p>\n <p>\"Hello\"</p>\n // a comment\n <b title=\"Tip\">\" GiB\"</b>\n <i>{move || if a { \"x\" } else { \"y\" }}</i>\n } }";
    assert_eq!(view_words(snippet), [(3, "\"Hello\"".to_owned()), (5, "title=\"Tip\"".to_owned())]);
    // Syntax a reader types as it is, the same in both languages: Megatron's layout string.
    const ALLOWED: [&str; 1] = ["placeholder=\"Et|(tt|)*30mL\""];
    let mut hits = Vec::new();
    for path in source_files(&["src"]) {
        let text = std::fs::read_to_string(&path).unwrap();
        for (line, words) in view_words(&text) {
            if !ALLOWED.contains(&words.as_str()) {
                hits.push(format!("{}:{line} {words}", path.display()));
            }
        }
    }
    assert!(hits.is_empty(), "write these through i18n::t:\n{}", hits.join("\n"));
}

/// Numbers a component formats itself for reading, as (line, call): a `format!` with a precision
/// (`{:.2}`, `{x:.1}`). The charts draw on canvases, so no component writes coordinates as text.
fn own_number_formats(text: &str) -> Vec<(usize, String)> {
    let code = masked(text, true);
    let code = code.find("#[cfg(test)]").map_or(code.as_str(), |at| &code[..at]);
    let mut res = Vec::new();
    for (idx, line) in code.lines().enumerate() {
        let mut from = 0;
        while let Some(pos) = line[from..].find("format!(\"") {
            let start = from + pos;
            let literal: String =
                line[start + "format!(\"".len()..].chars().take_while(|&c| c != '"').collect();
            if literal.contains(":.") {
                res.push((idx + 1, format!("format!(\"{literal}\")")));
            }
            from = start + 1;
        }
    }
    res
}

/// Invariant: a number a component shows for reading is written by src/format.rs, so each kind of
/// figure reads the same everywhere; components format only SVG geometry themselves.
#[test]
fn components_format_numbers_through_format_rs() {
    let snippet = "let a = format!(\"{:.1}\", x);\n<rect x=format!(\"{:.1}\", x0) width=format!(\"{:.2}\", w)/>\nlet b = format!(\"{x:.2} s\");\nlet c = format!(\"{name}\");\n";
    let found: Vec<usize> = own_number_formats(snippet).iter().map(|(l, _)| *l).collect();
    assert_eq!(found, [1, 2, 2, 3]);
    let mut hits = Vec::new();
    for path in
        source_files(&["src"]).into_iter().filter(|p| p.components().any(|c| c.as_os_str() == "components"))
    {
        let text = std::fs::read_to_string(&path).unwrap();
        hits.extend(
            own_number_formats(&text)
                .into_iter()
                .map(|(line, call)| format!("{}:{line} {call}", path.display())),
        );
    }
    assert!(hits.is_empty(), "write these through src/format.rs:\n{}", hits.join("\n"));
}
