//! The first module's imports from its wasm-bindgen glue, renamed short.
//!
//! wasm-bindgen names each function the glue hands the module after what it wraps and a hash of
//! its signature (`__wbg_set_className_fcd90345b3a090af`), from a module named after the page's
//! hashed file (`./trainplan-web-95c9e32548c7246a_bg.js`): over 200 imports, 15 KB of names in
//! the first module whose hashes no compressor shrinks. The names mean nothing at run time: the
//! glue's `__wbg_get_imports` hands the module an object whose keys are exactly these names, and
//! nothing else reads them. So each is renamed to a short one in the module and in that object
//! alike, as wasm-opt's `--minify-imports` does for Emscripten's `env` imports (it leaves other
//! modules' alone, hence this step). Imports from any other module (`./__wasm_split.js`, the
//! parts' loader) keep their names.

use std::fmt;
use std::ops::Range;

/// Why the imports could not be renamed; the build stops rather than ship a module and glue that
/// disagree.
#[derive(Debug, PartialEq, Eq)]
pub enum ImportsError {
    /// The module does not parse.
    Wasm(String),
    /// An import of the glue's is not named exactly once in the glue, or the glue's module is not
    /// named exactly once: a wasm-bindgen whose glue this step does not know.
    Glue(String),
}

impl fmt::Display for ImportsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ImportsError::Wasm(why) => write!(f, "reading the first module's imports: {why}"),
            ImportsError::Glue(why) => write!(f, "renaming the glue's imports: {why}"),
        }
    }
}

impl std::error::Error for ImportsError {}

/// The short name of the `i`-th import renamed: `a`…`z`, `A`…`Z`, then two letters and more, every
/// one a JavaScript identifier.
pub fn short_name(mut i: usize) -> String {
    const LETTERS: &[u8; 52] = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
    let mut name = vec![LETTERS[i % 52]];
    i /= 52;
    while 0 < i {
        i -= 1;
        name.push(LETTERS[i % 52]);
        i /= 52;
    }
    String::from_utf8(name).unwrap_or_default()
}

/// Imports renamed: the old name, then the new.
type Renames = Vec<(String, String)>;

/// The module name the glue's imports are renamed to, and its key in the glue's imports object.
pub const SHORT_MODULE: &str = "w";

/// `wasm` with every import from `module` (the glue, as the module names it) renamed short
/// ([`short_name`], the module to [`SHORT_MODULE`]), and `glue` with its imports object's keys
/// renamed alike. Every other byte of the module is kept.
///
/// # Errors
///
/// [`ImportsError`] when the module does not parse, or the glue does not name each import (and
/// the module) exactly once as a key.
pub fn short_imports(wasm: &[u8], glue: &str, module: &str) -> Result<(Vec<u8>, String), ImportsError> {
    let bad = |e: wasmparser::BinaryReaderError| ImportsError::Wasm(e.to_string());
    let mut out =
        wasm.get(..8).ok_or_else(|| ImportsError::Wasm("shorter than its header".to_owned()))?.to_vec();
    let mut renames: Renames = Vec::new();
    for payload in wasmparser::Parser::new(0).parse_all(wasm) {
        let payload = payload.map_err(bad)?;
        let Some((id, range)) = payload.as_section() else { continue };
        let range = usize::try_from(range.start).unwrap_or(0)..usize::try_from(range.end).unwrap_or(0);
        let content = match payload {
            wasmparser::Payload::ImportSection(reader) => {
                let (content, names) = renamed_imports(wasm, reader, range, module)?;
                renames = names;
                content
            }
            _ => wasm[range].to_vec(),
        };
        out.push(id);
        leb128(&mut out, content.len() as u64);
        out.extend_from_slice(&content);
    }
    let mut glue = glue.to_owned();
    let quoted = format!("\"{module}\":");
    let keys = renames.iter().map(|(old, new)| (format!("{old}:"), format!("{new}:")));
    for (old, new) in keys.chain([(quoted, format!("\"{SHORT_MODULE}\":"))]) {
        if glue.matches(&old).count() != 1 {
            return Err(ImportsError::Glue(format!("{old} is not a key of the glue's imports object once")));
        }
        glue = glue.replacen(&old, &new, 1);
    }
    Ok((out, glue))
}

/// The import section's contents (`range` of `wasm`) with `module`'s imports renamed, and the
/// renames, old name then new.
fn renamed_imports(
    wasm: &[u8],
    reader: wasmparser::ImportSectionReader,
    range: Range<usize>,
    module: &str,
) -> Result<(Vec<u8>, Renames), ImportsError> {
    let bad = |e: wasmparser::BinaryReaderError| ImportsError::Wasm(e.to_string());
    let mut entries: Vec<(usize, wasmparser::Import)> = Vec::new();
    for entry in reader.clone().into_iter_with_offsets() {
        match entry.map_err(bad)? {
            (at, wasmparser::Imports::Single(_, import)) => {
                entries.push((usize::try_from(at).unwrap_or(usize::MAX), import))
            }
            _ => {
                return Err(ImportsError::Wasm(
                    "a compact import group, which this step does not rename".to_owned(),
                ));
            }
        }
    }
    let mut content = Vec::with_capacity(range.len());
    leb128(&mut content, u64::from(reader.count()));
    let mut renames = Vec::new();
    for (k, &(at, import)) in entries.iter().enumerate() {
        // The entry's type follows its two names; it ends where the next entry starts.
        let names = name_len(import.module) + name_len(import.name);
        let end = entries.get(k + 1).map_or(range.end, |&(next, _)| next);
        let ty = wasm
            .get(at + names..end)
            .ok_or_else(|| ImportsError::Wasm("an import past its section".to_owned()))?;
        let (module_name, name) = match import.module == module {
            true => {
                let short = short_name(renames.len());
                renames.push((import.name.to_owned(), short.clone()));
                (SHORT_MODULE, short)
            }
            false => (import.module, import.name.to_owned()),
        };
        for text in [module_name, &name] {
            leb128(&mut content, text.len() as u64);
            content.extend_from_slice(text.as_bytes());
        }
        content.extend_from_slice(ty);
    }
    Ok((content, renames))
}

/// Bytes a name takes in the binary: its length as LEB128, then its UTF-8.
fn name_len(text: &str) -> usize {
    let mut len = Vec::new();
    leb128(&mut len, text.len() as u64);
    len.len() + text.len()
}

/// Appends `n` as unsigned LEB128.
fn leb128(out: &mut Vec<u8>, mut n: u64) {
    loop {
        let byte = (n & 0x7f) as u8;
        n >>= 7;
        if n == 0 {
            out.push(byte);
            return;
        }
        out.push(byte | 0x80);
    }
}
