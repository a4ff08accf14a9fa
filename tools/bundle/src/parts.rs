//! The page's module split at its split points, as text and bytes: the names its parts and their
//! loader get, the references between them, the integrity trunk wrote for the files this step
//! replaces, and the loader inlined into the single file.
//!
//! wasm_split_cli_support writes the first module (which wasm-bindgen then wraps as trunk would),
//! one wasm file per split point and per part shared between them, and a JavaScript loader that the
//! glue imports as [`LOADER_LINK`]: it fetches a part the first time the page calls into it
//! (`fetch(new URL("./part.wasm", import.meta.url))`) and instantiates it against the first
//! module's memory and table, which it reaches through the glue's `initSync`.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use sha2::{Digest, Sha256, Sha384};

use crate::{BundleError, check_closing, elements, short_hash};

/// How the first module and the glue name the loader, as wasm_split_cli_support writes it; this step
/// renames it ([`loader_name`]).
pub const LOADER_LINK: &str = "./__wasm_split.js";
/// The start of the loader's name in the build.
pub const LOADER: &str = "trainplan-split";
/// The start of each part's name in the build.
pub const PART: &str = "trainplan-part";

/// Subresource integrity for `bytes` as trunk writes it: `sha384-` and the base64 of their SHA-384
/// (Subresource Integrity, https://www.w3.org/TR/SRI/#the-integrity-attribute).
pub fn integrity(bytes: &[u8]) -> String {
    format!("sha384-{}", STANDARD.encode(Sha384::digest(bytes)))
}

/// `index_html` with the `integrity` of each `<link>` whose `href` is `href` set to `value`: trunk
/// wrote the preloads' integrity for the files before they were split, and a browser refuses a
/// preload whose bytes do not match it.
pub fn with_integrity(index_html: &str, href: &str, value: &str) -> String {
    let mut out = String::with_capacity(index_html.len());
    let mut at = 0;
    for link in elements(index_html, "link") {
        if link.attr("href") != Some(href) || link.attr("integrity").is_none() {
            continue;
        }
        let tag = &index_html[link.start..link.end];
        let Some(start) = tag.find("integrity=\"").map(|i| i + "integrity=\"".len()) else { continue };
        let Some(len) = tag[start..].find('"') else { continue };
        out.push_str(&index_html[at..link.start + start]);
        out.push_str(value);
        at = link.start + start + len;
    }
    out.push_str(&index_html[at..]);
    out
}

/// The name a part of the split module is served under: `trainplan-part-`, the part's own name
/// (`results_below` for a split point's part, `chunk_4` for code shared between split points; the
/// `split_` wasm_split_cli_support puts before a split point's name dropped, and the number Leptos's
/// `#[lazy]` puts after it), and 16
/// hex digits of its bytes' SHA-256, so that a new build is never served an old part from a cache.
pub fn part_name(file_stem: &str, bytes: &[u8]) -> String {
    let short = match file_stem.strip_prefix("split_") {
        Some(split) => match split.rsplit_once('_') {
            Some((head, tail)) if tail.bytes().all(|b| b.is_ascii_digit()) => head,
            _ => split,
        },
        None => file_stem,
    };
    format!("{PART}-{short}-{}.wasm", short_hash(Sha256::new_with_prefix(bytes)))
}

/// The loader's name: [`LOADER`], and 16 hex digits of its text's SHA-256.
pub fn loader_name(loader: &str) -> String {
    format!("{LOADER}-{}.js", short_hash(Sha256::new_with_prefix(loader.as_bytes())))
}

/// `text` with each quoted relative reference `"./old"` of `renames` made `"./new"`.
pub fn renamed(text: &str, renames: &[(String, String)]) -> String {
    renames.iter().fold(text.to_owned(), |text, (old, new)| {
        text.replace(&format!("\"./{old}\""), &format!("\"./{new}\""))
    })
}

/// The glue importing the loader as `loader` (`./name.js`). Only its `import` statements change: the
/// object of imports it hands the first module keeps the module name the wasm asks for
/// ([`LOADER_LINK`]).
pub fn glue_importing(glue: &str, loader: &str) -> String {
    glue.split_inclusive('\n')
        .map(|line| match line.starts_with("import ") {
            true => line.replace(&format!("\"{LOADER_LINK}\""), &format!("\"{loader}\"")),
            false => line.to_owned(),
        })
        .collect()
}

/// Inflates an inlined part in the single file and hands it on as a response that
/// `WebAssembly.instantiateStreaming` takes (it asks for the wasm media type).
const INLINED_PART: &str = r#"
// trainplan-bundle: the page's parts that load after it, as raw DEFLATE in base64 (trainplan.html has
// nothing to fetch); the loader instantiates each the first time the page calls into it.
const __trainplanPart = async (packed) => {
  const bytes = Uint8Array.from(atob(packed), (c) => c.charCodeAt(0));
  const inflated = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("deflate-raw"));
  return new Response(inflated, { headers: { "Content-Type": "application/wasm" } });
};
"#;

/// The glue with the loaders it imports inlined, for the single file: each
/// `import * as NAME from "./loader.js"` becomes a constant holding what that loader exports, the
/// loader's text run in a function of its own (its names cannot clash with the glue's; its import of
/// the glue's `initSync` is the glue's own function), each part it fetches inlined.
/// `read(path)` gives the bytes of a file the glue or a loader names (`./name`).
///
/// # Errors
///
/// [`BundleError::Glue`] for an import this step does not know, [`BundleError::Missing`] for a file
/// it cannot read, [`BundleError::ClosesEarly`] for text that would end the script.
pub fn with_loaders_inlined(
    glue: &str,
    read: &dyn Fn(&str) -> Option<Vec<u8>>,
) -> Result<String, BundleError> {
    let mut prelude = String::new();
    let mut body = String::with_capacity(glue.len());
    let mut loaders: Vec<String> = Vec::new();
    for line in glue.split_inclusive('\n') {
        let Some(import) = line.strip_prefix("import ") else {
            body.push_str(line);
            continue;
        };
        let parsed = import
            .trim_end()
            .trim_end_matches(';')
            .strip_prefix("* as ")
            .and_then(|rest| rest.split_once(" from "))
            .map(|(name, path)| (name.trim(), path.trim().trim_matches('"')));
        let Some((name, path)) = parsed.filter(|(_, path)| path.starts_with("./") && path.ends_with(".js"))
        else {
            return Err(BundleError::Glue(
                "imports another module (a snippet), which a single file cannot fetch",
            ));
        };
        let index = match loaders.iter().position(|p| p == path) {
            Some(index) => index,
            None => {
                let text = read(path).ok_or_else(|| BundleError::Missing(path.to_owned()))?;
                let text = String::from_utf8(text).map_err(|_| BundleError::Missing(path.to_owned()))?;
                prelude.push_str(&format!(
                    "const __trainplanLoader{} = {};\n",
                    loaders.len(),
                    loader_inlined(&text, read)?
                ));
                loaders.push(path.to_owned());
                loaders.len() - 1
            }
        };
        body.push_str(&format!("const {name} = __trainplanLoader{index};\n"));
    }
    if loaders.is_empty() {
        return Ok(glue.to_owned());
    }
    check_closing(&prelude, "</script")?;
    Ok(format!("{INLINED_PART}{prelude}{body}"))
}

/// One loader as an expression: its text in a function that returns what it exports, its import of
/// the glue dropped and each `fetch(new URL("./part.wasm", import.meta.url))` the part inlined.
fn loader_inlined(loader: &str, read: &dyn Fn(&str) -> Option<Vec<u8>>) -> Result<String, BundleError> {
    let mut text = String::with_capacity(loader.len());
    let mut exports = Vec::new();
    for line in loader.split_inclusive('\n') {
        if line.starts_with("import ") {
            // `import { initSync } from "./<glue>.js"`: the glue's own function in the single file.
            if !line.contains("{ initSync }") {
                return Err(BundleError::Glue("split loader imports something other than initSync"));
            }
            continue;
        }
        match line.strip_prefix("export const ") {
            Some(rest) => {
                let name =
                    rest.split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '$')).next().unwrap_or("");
                exports.push(name.to_owned());
                text.push_str("const ");
                text.push_str(rest);
            }
            None if line.starts_with("export ") => {
                return Err(BundleError::Glue("split loader exports something other than constants"));
            }
            None => text.push_str(line),
        }
    }
    const FETCH: &str = "fetch(new URL(\"./";
    let mut out = String::with_capacity(text.len());
    let mut rest = text.as_str();
    while let Some(at) = rest.find(FETCH) {
        out.push_str(&rest[..at]);
        let after = &rest[at + FETCH.len()..];
        let end = after
            .find("\", import.meta.url))")
            .ok_or(BundleError::Glue("split loader fetches in an unknown way"))?;
        let file = &after[..end];
        let bytes = read(&format!("./{file}")).ok_or_else(|| BundleError::Missing(file.to_owned()))?;
        let packed = STANDARD.encode(miniz_oxide::deflate::compress_to_vec(&bytes, 10));
        out.push_str(&format!("__trainplanPart(\"{packed}\")"));
        rest = &after[end + "\", import.meta.url))".len()..];
    }
    out.push_str(rest);
    Ok(format!("(() => {{\n{out}\nreturn {{ {} }};\n}})()", exports.join(", ")))
}
