//! Trunk's post-build step over the staged `dist/`, as pure functions over text and bytes
//! (`main.rs` reads and writes the files):
//!
//! - [`service_worker`] fills `sw.js` with the list of every file of the build and a cache name
//!   derived from their bytes, so the list cannot go stale and a new build gets a new cache.
//! - [`single_file`] turns trunk's `index.html` into `trainplan.html`: the wasm-bindgen glue, the
//!   wasm, the CSS and the favicon inline, and a Content-Security-Policy that allows exactly them.
//!   It opens from a `file://` URL with no server.

#![deny(missing_docs)]

use std::fmt;

mod imports;
mod parts;

pub use imports::{ImportsError, SHORT_MODULE, short_imports, short_name};
pub use parts::{
    LOADER, LOADER_LINK, PART, glue_importing, integrity, loader_name, part_name, renamed, with_integrity,
    with_loaders_inlined,
};

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use sha2::{Digest, Sha256};

/// The service worker's file name at the root of `dist/` (the page's `start.js` registers it).
pub const SERVICE_WORKER: &str = "sw.js";
/// The single self-contained page's file name at the root of `dist/`.
pub const SINGLE_FILE: &str = "trainplan.html";

/// The service worker's source, with two placeholders [`service_worker`] fills.
const SERVICE_WORKER_TEMPLATE: &str = include_str!("sw.js");

/// Loads the inlined wasm in the single file; `{{INIT}}` is the glue's default export and `{{WASM}}`
/// the wasm as raw DEFLATE in base64. A block, so its names cannot clash with the glue's.
const SINGLE_FILE_LOADER: &str = r#"
// trainplan-bundle: the page's wasm as raw DEFLATE (RFC 1951) in base64. DecompressionStream("deflate-raw")
// inflates it in the page, with no request (https://developer.mozilla.org/en-US/docs/Web/API/DecompressionStream),
// and wasm-bindgen's init instantiates the bytes (WebAssembly.instantiate; CSP 'wasm-unsafe-eval').
{
  const packed = Uint8Array.from(atob("{{WASM}}"), (c) => c.charCodeAt(0));
  const inflated = new Blob([packed]).stream().pipeThrough(new DecompressionStream("deflate-raw"));
  await {{INIT}}({ module_or_path: await new Response(inflated).arrayBuffer() });
}
"#;

/// Defines the page's `trainplanReadLaunch` in the single file (public/start.js does in the served
/// page): inflates and instantiates the launch-file reader's inlined wasm the first time a file is
/// read (src/reader.rs). `{{INIT}}` is the reader glue's default export, `{{WASM}}` its wasm as
/// [`SINGLE_FILE_LOADER`] has the page's; `read_launch` is the glue's export.
const SINGLE_FILE_READER: &str = r#"
// trainplan-bundle: the launch-file reader's wasm as raw DEFLATE in base64, instantiated on first use.
{
  const packed = "{{WASM}}";
  let loaded = null;
  globalThis.trainplanReadLaunch = async (text, current) => {
    loaded ??= (async () => {
      const bytes = Uint8Array.from(atob(packed), (c) => c.charCodeAt(0));
      const inflated = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("deflate-raw"));
      await {{INIT}}({ module_or_path: await new Response(inflated).arrayBuffer() });
    })();
    await loaded;
    return read_launch(text, current);
  };
}
"#;

/// The name of the launch-file reader's module (`reader/`). Trunk writes a worker's files unhashed,
/// `trainplan-reader.js` and `trainplan-reader_bg.wasm`, for a worker script to name; this step
/// renames them as trunk names the page's files ([`reader_names`]).
pub const READER: &str = "trainplan-reader";

/// One file of the build.
pub struct Asset {
    /// Its path relative to `dist/`, with `/` between folders.
    pub path: String,
    /// Its contents.
    pub bytes: Vec<u8>,
}

/// Why the single file could not be built.
#[derive(Debug, PartialEq, Eq)]
pub enum BundleError {
    /// Occurs when `index.html` has no `<meta http-equiv="Content-Security-Policy">` to replace.
    NoCsp,
    /// Occurs when `index.html` has no `<script data-js=… data-wasm=…>` (Trunk.toml's `pattern_script`).
    NoLoader,
    /// Occurs when the build has no launch-file reader module to name on the loader's tag.
    NoReader,
    /// Occurs when the wasm-bindgen glue is not the self-contained ES module this step inlines.
    Glue(&'static str),
    /// Occurs when a reference would still leave the file: a link, script or CSS `url()` not inlined.
    External(String),
    /// Occurs when a file the page references cannot be read.
    Missing(String),
    /// Occurs when inlined text would end its element early (`</script`, `</style`, `<!--`).
    ClosesEarly(&'static str),
}

impl fmt::Display for BundleError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BundleError::NoCsp => write!(f, "index.html has no Content-Security-Policy meta element"),
            BundleError::NoLoader => {
                write!(f, "index.html has no script with data-js and data-wasm (Trunk.toml pattern_script)")
            }
            BundleError::NoReader => {
                write!(
                    f,
                    "the build has no launch-file reader ({READER}.js and {READER}_bg.wasm; index.html builds it)"
                )
            }
            BundleError::Glue(what) => write!(f, "the wasm-bindgen glue {what}"),
            BundleError::External(what) => write!(f, "{what} would stay a reference outside the file"),
            BundleError::Missing(what) => write!(f, "cannot read {what}"),
            BundleError::ClosesEarly(what) => write!(f, "inlined text contains {what}"),
        }
    }
}

impl std::error::Error for BundleError {}

/// The service worker for these files: `sw.js` with its precache list (`./` and every asset) and its
/// version, the first 16 hex digits of a SHA-256 over every asset's path and bytes.
///
/// A change to any file changes `sw.js` byte for byte, which is what makes the browser install the
/// new worker (Service Workers, "Update": https://w3c.github.io/ServiceWorker/#update-algorithm).
pub fn service_worker(assets: &[Asset]) -> String {
    let mut sorted: Vec<&Asset> = assets.iter().collect();
    sorted.sort_by(|a, b| a.path.cmp(&b.path));
    let mut hasher = Sha256::new();
    for asset in &sorted {
        hasher.update((asset.path.len() as u64).to_le_bytes());
        hasher.update(asset.path.as_bytes());
        hasher.update((asset.bytes.len() as u64).to_le_bytes());
        hasher.update(&asset.bytes);
    }
    let version = short_hash(hasher);
    let urls: Vec<String> = std::iter::once("./".to_owned())
        .chain(sorted.iter().map(|asset| asset.path.clone()))
        .map(|url| json_string(&url))
        .collect();
    let list = format!("[\n  {},\n]", urls.join(",\n  "));
    assert!(
        SERVICE_WORKER_TEMPLATE.contains("{{VERSION}}")
            && SERVICE_WORKER_TEMPLATE.contains("[/* {{PRECACHE}} */]")
    );
    SERVICE_WORKER_TEMPLATE.replace("{{VERSION}}", &version).replace("[/* {{PRECACHE}} */]", &list)
}

/// `index.html` with the launch-file reader's module named on the loader's tag, `data-reader-js` and
/// `data-reader-wasm` (references as the page makes them), which public/start.js loads on first use.
///
/// # Errors
///
/// [`BundleError::NoLoader`] when there is no loader tag to write them on.
pub fn with_reader(index_html: &str, js: &str, wasm: &str) -> Result<String, BundleError> {
    let script = elements(index_html, "script")
        .into_iter()
        .find(|s| s.attr("data-js").is_some() && s.attr("data-wasm").is_some())
        .ok_or(BundleError::NoLoader)?;
    if script.attr("data-reader-js").is_some() {
        return Ok(index_html.to_owned());
    }
    let at = script.start + "<script".len();
    let attrs = format!(r#" data-reader-js="{js}" data-reader-wasm="{wasm}""#);
    Ok(format!("{}{attrs}{}", &index_html[..at], &index_html[at..]))
}

/// The page's glue and wasm as `index.html` names them on the loader's tag (`data-js`, `data-wasm`).
///
/// # Errors
///
/// [`BundleError::NoLoader`] when there is no loader tag.
pub fn page_files(index_html: &str) -> Result<(String, String), BundleError> {
    elements(index_html, "script")
        .into_iter()
        .find_map(|s| Some((s.attr("data-js")?.to_owned(), s.attr("data-wasm")?.to_owned())))
        .ok_or(BundleError::NoLoader)
}

/// The first 8 bytes of a SHA-256 as 16 hex digits: the service worker's version, the reader's name.
fn short_hash(hasher: Sha256) -> String {
    hasher.finalize()[..8].iter().map(|b| format!("{b:02x}")).collect()
}

/// The reader's files as trunk writes them: its glue and its wasm.
pub fn reader_files() -> (String, String) {
    (format!("{READER}.js"), format!("{READER}_bg.wasm"))
}

/// The names the reader's glue and wasm are renamed to: with a hash of both (`trainplan-reader-
/// <16 hex>.js`, `…_bg.wasm`), so that a new build is never served an old reader from a cache, as
/// trunk's hashes do for the page's own files. The glue names no file itself: the loader hands it
/// the wasm's address.
pub fn reader_names(glue: &[u8], wasm: &[u8]) -> (String, String) {
    let mut hasher = Sha256::new();
    hasher.update((glue.len() as u64).to_le_bytes());
    hasher.update(glue);
    hasher.update(wasm);
    let hash = short_hash(hasher);
    (format!("{READER}-{hash}.js"), format!("{READER}-{hash}_bg.wasm"))
}

/// The single self-contained page from trunk's `index.html`. `read` gives the bytes of a file the page
/// references, by the reference as written (`/main-….css`), or `None`.
///
/// Links: the icon becomes a `data:` URL, the stylesheet a `<style>`, preloads and the manifest go
/// (nothing is fetched, and only a served page installs). The loader script becomes one inline module:
/// the glue, then the wasm. The CSP meta is replaced by one that allows those inline elements by hash.
///
/// # Errors
///
/// [`BundleError`] when `index.html`, the glue or the CSS is not what this step can inline, so that
/// the file never ships with a reference it would have to fetch.
pub fn single_file(index_html: &str, read: &dyn Fn(&str) -> Option<Vec<u8>>) -> Result<String, BundleError> {
    // index.html's comments describe the served page, not this one.
    let index_html = &without_comments(index_html);
    let read_ref =
        |reference: &str| read(reference).ok_or_else(|| BundleError::Missing(reference.to_owned()));
    let mut edits: Vec<(usize, usize, String)> = Vec::new();
    let mut script_hashes = Vec::new();
    let mut style_hashes = Vec::new();

    let csp = elements(index_html, "meta")
        .into_iter()
        .find(|meta| {
            meta.attr("http-equiv").is_some_and(|v| v.eq_ignore_ascii_case("content-security-policy"))
        })
        .ok_or(BundleError::NoCsp)?;

    for link in elements(index_html, "link") {
        let rel = link.attr("rel").unwrap_or_default().to_ascii_lowercase();
        let href = link.attr("href").unwrap_or_default();
        let rels: Vec<&str> = rel.split_whitespace().collect();
        let replacement = if rels.contains(&"icon") {
            let mime = match href.rsplit('.').next() {
                Some("svg") => "image/svg+xml",
                Some("png") => "image/png",
                Some("ico") => "image/x-icon",
                _ => return Err(BundleError::External(format!("icon {href}"))),
            };
            let data = STANDARD.encode(read_ref(href)?);
            format!(r#"<link rel="icon" href="data:{mime};base64,{data}" />"#)
        } else if rels.contains(&"stylesheet") {
            let css =
                String::from_utf8(read_ref(href)?).map_err(|_| BundleError::Missing(href.to_owned()))?;
            check_css(&css)?;
            style_hashes.push(hash_source(&css));
            format!("<style>{css}</style>")
        } else if rels.iter().any(|r| ["preload", "modulepreload", "manifest"].contains(r)) {
            String::new()
        } else {
            return Err(BundleError::External(format!("<link rel=\"{rel}\" href=\"{href}\">")));
        };
        edits.push((link.start, link.end, replacement));
    }

    let mut loaded = false;
    for script in elements(index_html, "script") {
        let (Some(js), Some(wasm)) = (script.attr("data-js"), script.attr("data-wasm")) else {
            if let Some(src) = script.attr("src") {
                return Err(BundleError::External(format!("<script src=\"{src}\">")));
            }
            // An inline script stays; the CSP allows it by its hash.
            script_hashes.push(hash_source(&index_html[script.body.clone()]));
            continue;
        };
        let glue = String::from_utf8(read_ref(js)?).map_err(|_| BundleError::Glue("is not UTF-8"))?;
        // The loader of the parts split off the page's module, and the parts, beside the glue.
        let dir = &js[..js.rfind('/').map_or(0, |at| at + 1)];
        let beside = |path: &str| read(&format!("{dir}{}", path.strip_prefix("./").unwrap_or(path)));
        let glue = with_loaders_inlined(&glue, &beside)?;
        let body = inline_module(&glue, &read_ref(wasm)?, SINGLE_FILE_LOADER)?;
        script_hashes.push(hash_source(&body));
        let mut scripts = format!(r#"<script type="module">{body}</script>"#);
        if let (Some(js), Some(wasm)) = (script.attr("data-reader-js"), script.attr("data-reader-wasm")) {
            let glue = String::from_utf8(read_ref(js)?).map_err(|_| BundleError::Glue("is not UTF-8"))?;
            let body = inline_module(&glue, &read_ref(wasm)?, SINGLE_FILE_READER)?;
            script_hashes.push(hash_source(&body));
            scripts.push_str(&format!(r#"<script type="module">{body}</script>"#));
        }
        edits.push((script.start, script.end, scripts));
        loaded = true;
    }
    if !loaded {
        return Err(BundleError::NoLoader);
    }
    for style in elements(index_html, "style") {
        style_hashes.push(hash_source(&index_html[style.body.clone()]));
    }

    let policy = single_file_csp(&script_hashes, &style_hashes);
    edits.push((
        csp.start,
        csp.end,
        format!(r#"<meta http-equiv="Content-Security-Policy" content="{policy}" />"#),
    ));
    edits.sort_by_key(|edit| edit.0);
    let mut out = String::with_capacity(index_html.len());
    let mut at = 0;
    for (start, end, text) in edits {
        out.push_str(&index_html[at..start]);
        out.push_str(&text);
        at = end;
    }
    out.push_str(&index_html[at..]);
    // Whatever else index.html may gain, the file ships only if it fetches nothing.
    for name in ["link", "script", "img", "iframe", "base", "object", "embed", "source"] {
        for element in elements(&out, name) {
            for (key, value) in &element.attrs {
                if ["src", "href", "data"].contains(&key.as_str()) && !value.starts_with("data:") {
                    return Err(BundleError::External(format!("<{name} {key}=\"{value}\">")));
                }
            }
        }
    }
    Ok(out)
}

/// The single file's policy: nothing from anywhere (`default-src 'none'`) but the inline elements
/// by hash, the wasm compiled from bytes, `data:` images (the favicon), and style attributes (Leptos
/// sets `style` on elements, which `style-src-attr` governs; CSP Level 3 §6.1.12).
fn single_file_csp(script_hashes: &[String], style_hashes: &[String]) -> String {
    let sources = |hashes: &[String]| match hashes.is_empty() {
        true => "'none'".to_owned(),
        false => hashes.join(" "),
    };
    format!(
        "default-src 'none'; script-src {} 'wasm-unsafe-eval'; style-src {}; style-src-attr 'unsafe-inline'; \
         img-src data:; base-uri 'none'; form-action 'none'",
        sources(script_hashes),
        sources(style_hashes)
    )
}

/// The inline module: the glue as it is (an inline module may keep its `export`s), then `loader`
/// ([`SINGLE_FILE_LOADER`] or [`SINGLE_FILE_READER`]) calling the glue's default export with the
/// wasm's bytes.
fn inline_module(glue: &str, wasm: &[u8], loader: &str) -> Result<String, BundleError> {
    let glue = glue.replace("\r\n", "\n");
    if glue.lines().any(|line| line.starts_with("import ") || line.starts_with("import{")) {
        return Err(BundleError::Glue(
            "imports another module (a snippet), which a single file cannot fetch",
        ));
    }
    let init = default_export(&glue).ok_or(BundleError::Glue("has no default export (its init function)"))?;
    check_closing(&glue, "</script")?;
    let packed = STANDARD.encode(miniz_oxide::deflate::compress_to_vec(wasm, 10));
    let loader = loader.replace("{{INIT}}", init).replace("{{WASM}}", &packed);
    Ok(format!("\n{glue}{loader}"))
}

/// The name the glue exports as default: `export { initSync, __wbg_init as default };` in
/// wasm-bindgen 0.2.130, `export default __wbg_init;` in older ones.
fn default_export(glue: &str) -> Option<&str> {
    if let Some(at) = glue.rfind("export default ") {
        let rest = &glue[at + "export default ".len()..];
        return rest
            .split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '$'))
            .next()
            .filter(|n| !n.is_empty());
    }
    let at = glue.rfind("export {")?;
    let clause = &glue[at + "export {".len()..];
    let clause = &clause[..clause.find('}')?];
    clause.split(',').find_map(|item| match item.split_whitespace().collect::<Vec<_>>()[..] {
        [name, "as", "default"] => Some(name),
        _ => None,
    })
}

/// Refuses CSS that would fetch: `@import`, or a `url()` that is not a `data:` URL.
fn check_css(css: &str) -> Result<(), BundleError> {
    check_closing(css, "</style")?;
    let lower = css.to_ascii_lowercase();
    if lower.contains("@import") {
        return Err(BundleError::External("a CSS @import".to_owned()));
    }
    for (at, _) in lower.match_indices("url(") {
        let target = lower[at + 4..].trim_start().trim_start_matches(['"', '\'']);
        if !target.starts_with("data:") {
            let end = (at + 40).min(css.len());
            return Err(BundleError::External(format!("CSS {}", &css[at..end])));
        }
    }
    Ok(())
}

/// Refuses text that would end its element early once inline (HTML, "script data" and "raw text" states).
fn check_closing(text: &str, closing: &'static str) -> Result<(), BundleError> {
    let lower = text.to_ascii_lowercase();
    match [closing, "<!--"].into_iter().find(|bad| lower.contains(bad)) {
        Some(bad) => Err(BundleError::ClosesEarly(bad)),
        None => Ok(()),
    }
}

/// `html` without its `<!-- … -->` comments.
fn without_comments(html: &str) -> String {
    let mut res = String::with_capacity(html.len());
    let mut rest = html;
    while let Some(start) = rest.find("<!--") {
        res.push_str(&rest[..start]);
        rest = rest[start..].find("-->").map_or("", |end| &rest[start + end + 3..]);
    }
    res.push_str(rest);
    res
}

/// A CSP hash source for an inline element's text: `'sha256-…'`, base64 of the SHA-256 of its UTF-8
/// bytes (CSP Level 3, "hash-source").
pub fn hash_source(text: &str) -> String {
    format!("'sha256-{}'", STANDARD.encode(Sha256::digest(text.as_bytes())))
}

/// `text` as a JSON string literal (also a JavaScript one).
fn json_string(text: &str) -> String {
    let mut out = String::from("\"");
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if c < ' ' => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// One element of trunk's output: where its start tag begins, where the element ends, its
/// attributes, and (for `script` and `style`) where its text lies.
struct Element {
    start: usize,
    end: usize,
    attrs: Vec<(String, String)>,
    body: std::ops::Range<usize>,
}

impl Element {
    fn attr(&self, name: &str) -> Option<&str> {
        self.attrs.iter().find(|(key, _)| key == name).map(|(_, value)| value.as_str())
    }
}

/// Every `name` element of `html`, in order. Enough HTML for trunk's output (quoted attributes, no
/// `>` inside them); `script` and `style` run to their end tag, others are void.
fn elements(html: &str, name: &str) -> Vec<Element> {
    let lower = html.to_ascii_lowercase();
    let open = format!("<{name}");
    let mut res = Vec::new();
    let mut from = 0;
    while let Some(found) = lower[from..].find(&open) {
        let start = from + found;
        let after = start + open.len();
        from = after;
        if !lower[after..].starts_with(|c: char| c.is_ascii_whitespace() || c == '>' || c == '/') {
            continue;
        }
        let Some(tag_end) = tag_end(html, after) else { break };
        let attrs = attributes(&html[after..tag_end - 1]);
        let (body, end) = match name {
            "script" | "style" => {
                let close = format!("</{name}");
                let Some(close_at) = lower[tag_end..].find(&close).map(|at| tag_end + at) else { break };
                let end = lower[close_at..].find('>').map_or(html.len(), |at| close_at + at + 1);
                (tag_end..close_at, end)
            }
            _ => (tag_end..tag_end, tag_end),
        };
        from = end;
        res.push(Element { start, end, attrs, body });
    }
    res
}

/// The index just past the `>` that ends the start tag whose attributes begin at `from`.
fn tag_end(html: &str, from: usize) -> Option<usize> {
    let mut quote = None;
    for (at, c) in html[from..].char_indices() {
        match (quote, c) {
            (None, '"' | '\'') => quote = Some(c),
            (Some(q), c) if c == q => quote = None,
            (None, '>') => return Some(from + at + 1),
            _ => {}
        }
    }
    None
}

/// The attributes of a start tag's inside, names lowercased, values as written (no entities decoded:
/// trunk writes paths and hashes, which have none).
fn attributes(inside: &str) -> Vec<(String, String)> {
    let mut res = Vec::new();
    let mut rest = inside;
    loop {
        rest = rest.trim_start_matches(|c: char| c.is_ascii_whitespace() || c == '/');
        if rest.is_empty() {
            return res;
        }
        let name_end =
            rest.find(|c: char| c.is_ascii_whitespace() || c == '=' || c == '/').unwrap_or(rest.len());
        let name = rest[..name_end].to_ascii_lowercase();
        rest = rest[name_end..].trim_start();
        let value = match rest.strip_prefix('=') {
            None => String::new(),
            Some(after) => {
                let after = after.trim_start();
                match after.chars().next() {
                    Some(q @ ('"' | '\'')) => {
                        let close = after[1..].find(q).map_or(after.len(), |at| at + 1);
                        rest = after.get(close + 1..).unwrap_or("");
                        after[1..close].to_owned()
                    }
                    _ => {
                        let end = after.find(|c: char| c.is_ascii_whitespace()).unwrap_or(after.len());
                        rest = &after[end..];
                        after[..end].to_owned()
                    }
                }
            }
        };
        res.push((name, value));
    }
}

#[cfg(test)]
mod tests;
