//! The bundle step on a small page shaped like trunk's output.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;

use super::*;

/// trunk 0.21.14's output for this project's index.html, shortened (Trunk.toml `pattern_script`).
const INDEX: &str = r#"<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <meta http-equiv="Content-Security-Policy" content="default-src 'self'; script-src 'self' 'wasm-unsafe-eval'" />
    <title>trainplan</title>
    <!-- About the served page: <link rel="x" href="/y"> -->
    <link rel="manifest" href="manifest.webmanifest" />
    <link rel="icon" href="/favicon-4ba7e180715ce06.svg" integrity="sha384-aFAH"/>
    <link rel="stylesheet" href="/main-d957.css" integrity="sha384-evN0"/>
    <script type="module" src="/start.js" data-js="/trainplan-web-2881.js" data-wasm="/trainplan-web-2881_bg.wasm"></script>
  <link rel="modulepreload" href="/trainplan-web-2881.js" crossorigin="anonymous" integrity="sha384-SvNe"><link rel="preload" href="/trainplan-web-2881_bg.wasm" crossorigin="anonymous" integrity="sha384-BUgD" as="fetch" type="application/wasm"></head>
  <body></body>
</html>
"#;

const GLUE: &str = "export class A {}\nasync function __wbg_init(module_or_path) { return module_or_path; }\n\
                    export { initSync, __wbg_init as default };\n";
const CSS: &str = "body { margin: 0; }\n";
const SVG: &str = "<svg xmlns=\"http://www.w3.org/2000/svg\"/>";

fn wasm() -> Vec<u8> {
    (0..5000u32).flat_map(|i| (i % 251).to_le_bytes()).collect()
}

fn files(reference: &str) -> Option<Vec<u8>> {
    match reference {
        "/favicon-4ba7e180715ce06.svg" => Some(SVG.as_bytes().to_vec()),
        "/main-d957.css" => Some(CSS.as_bytes().to_vec()),
        "/trainplan-web-2881.js" => Some(GLUE.as_bytes().to_vec()),
        "/trainplan-web-2881_bg.wasm" => Some(wasm()),
        _ => None,
    }
}

fn between<'a>(text: &'a str, open: &str, close: &str) -> &'a str {
    let start = text.find(open).unwrap_or_else(|| panic!("no {open}")) + open.len();
    &text[start..start + text[start..].find(close).unwrap()]
}

#[test]
fn the_single_file_holds_everything_and_allows_only_it() {
    let page = single_file(INDEX, &files).unwrap();
    // Nothing is referenced but data: URLs.
    for element in ["link", "script"] {
        for el in elements(&page, element) {
            for key in ["href", "src"] {
                let value = el.attr(key).unwrap_or("data:");
                assert!(value.starts_with("data:"), "{element} {key}={value}");
            }
        }
    }
    assert!(!page.contains("modulepreload") && !page.contains("manifest"), "{page}");
    assert!(!page.contains("<!--") && page.starts_with("<!doctype html>"), "{page}");
    let icon = format!("data:image/svg+xml;base64,{}", STANDARD.encode(SVG));
    assert!(page.contains(&icon), "{page}");

    // The CSP allows the one script and the one style by hash, and nothing from any origin.
    let script = between(&page, "<script type=\"module\">", "</script>");
    let style = between(&page, "<style>", "</style>");
    assert_eq!(style, CSS);
    let csp = between(&page, "content=\"", "\"");
    assert_eq!(
        csp,
        format!(
            "default-src 'none'; script-src {} 'wasm-unsafe-eval'; style-src {}; style-src-attr 'unsafe-inline'; \
             img-src data:; base-uri 'none'; form-action 'none'",
            hash_source(script),
            hash_source(style)
        )
    );
    assert_eq!(page.matches("Content-Security-Policy").count(), 1);

    // The glue comes first, then its default export is called with the wasm, which inflates back.
    assert!(script.starts_with(&format!("\n{GLUE}")), "{script}");
    assert!(script.contains("await __wbg_init({ module_or_path:"), "{script}");
    let packed = between(script, "atob(\"", "\")");
    let deflated = STANDARD.decode(packed).unwrap();
    assert_eq!(miniz_oxide::inflate::decompress_to_vec(&deflated).unwrap(), wasm());
}

#[test]
fn the_single_file_refuses_what_it_cannot_inline() {
    let no_csp = INDEX.replace("http-equiv=\"Content-Security-Policy\"", "name=\"x\"");
    assert_eq!(single_file(&no_csp, &files), Err(BundleError::NoCsp));

    let no_loader = INDEX.replace("data-js=", "data-other=");
    assert!(matches!(single_file(&no_loader, &files), Err(BundleError::External(_))));

    let snippet = |reference: &str| match reference {
        "/trainplan-web-2881.js" => {
            Some(format!("import {{ x }} from './snippets/a.js';\n{GLUE}").into_bytes())
        }
        other => files(other),
    };
    assert!(matches!(single_file(INDEX, &snippet), Err(BundleError::Glue(_))));

    let font = |reference: &str| match reference {
        "/main-d957.css" => Some(b"@font-face { src: url(\"https://fonts.example/a.woff2\"); }".to_vec()),
        other => files(other),
    };
    assert!(matches!(single_file(INDEX, &font), Err(BundleError::External(_))));

    let closing = |reference: &str| match reference {
        "/trainplan-web-2881.js" => Some(format!("{GLUE}const s = '</script>';\n").into_bytes()),
        other => files(other),
    };
    assert_eq!(single_file(INDEX, &closing), Err(BundleError::ClosesEarly("</script")));

    let image = INDEX.replace("<body></body>", "<body><img src=\"/logo.png\"></body>");
    assert_eq!(single_file(&image, &files), Err(BundleError::External("<img src=\"/logo.png\">".to_owned())));

    let missing = |reference: &str| match reference {
        "/trainplan-web-2881_bg.wasm" => None,
        other => files(other),
    };
    assert_eq!(
        single_file(INDEX, &missing),
        Err(BundleError::Missing("/trainplan-web-2881_bg.wasm".to_owned()))
    );
}

#[test]
fn the_default_export_is_found_in_both_glue_styles() {
    assert_eq!(default_export(GLUE), Some("__wbg_init"));
    assert_eq!(default_export("function __wbg_init() {}\nexport default __wbg_init;\n"), Some("__wbg_init"));
    assert_eq!(default_export("export { initSync };\n"), None);
}

#[test]
fn the_service_worker_precaches_every_file_under_a_version_of_their_bytes() {
    let assets = |css: &str| {
        vec![
            Asset { path: "index.html".to_owned(), bytes: INDEX.as_bytes().to_vec() },
            Asset { path: "main-d957.css".to_owned(), bytes: css.as_bytes().to_vec() },
            Asset { path: "snippets/a b.js".to_owned(), bytes: b"x".to_vec() },
        ]
    };
    let worker = service_worker(&assets(CSS));
    assert!(!worker.contains("{{"), "{worker}");
    let list = between(&worker, "const PRECACHE = [", "];");
    assert_eq!(list, "\n  \"./\",\n  \"index.html\",\n  \"main-d957.css\",\n  \"snippets/a b.js\",\n");
    let version = between(&worker, "const VERSION = \"", "\"");
    assert_eq!(version.len(), 16);
    assert!(version.chars().all(|c| c.is_ascii_hexdigit()));

    // One byte more in one file: another version, hence another sw.js, cache and install.
    let changed = service_worker(&assets("body { margin: 1; }\n"));
    assert_ne!(between(&changed, "const VERSION = \"", "\""), version);
    assert_eq!(service_worker(&assets(CSS)), worker, "the same files give the same worker");
}

#[test]
fn attributes_are_read_as_trunk_writes_them() {
    let attrs = attributes(r#" rel="icon" href='/a.svg' crossorigin defer=x /"#);
    let pairs: Vec<(&str, &str)> = attrs.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    assert_eq!(pairs, [("rel", "icon"), ("href", "/a.svg"), ("crossorigin", ""), ("defer", "x")]);
}

/// The launch-file reader's glue, shaped as wasm-bindgen writes it (a `read_launch` export).
const READER_GLUE: &str = "export function read_launch(text, current) { return text; }\n\
                           async function __wbg_init(module_or_path) { return module_or_path; }\n\
                           export { initSync, __wbg_init as default };\n";

fn reader_wasm() -> Vec<u8> {
    (0..3000u32).flat_map(|i| (i % 97).to_le_bytes()).collect()
}

#[test]
fn the_reader_is_named_on_the_loader_under_a_hash_of_its_bytes() {
    let (js, wasm) = reader_names(READER_GLUE.as_bytes(), &reader_wasm());
    let hash = js.strip_prefix("trainplan-reader-").and_then(|r| r.strip_suffix(".js")).unwrap();
    assert!(hash.len() == 16 && hash.chars().all(|c| c.is_ascii_hexdigit()), "{js}");
    assert_eq!(wasm, format!("trainplan-reader-{hash}_bg.wasm"));
    // Another byte in either file: another name, so no cache serves an old reader to a new page.
    let (js2, _) = reader_names(READER_GLUE.as_bytes(), &[reader_wasm(), vec![0]].concat());
    let (js3, _) = reader_names(format!("{READER_GLUE} ").as_bytes(), &reader_wasm());
    assert!(js2 != js && js3 != js && js2 != js3);
    assert_eq!(reader_files(), ("trainplan-reader.js".to_owned(), "trainplan-reader_bg.wasm".to_owned()));

    let named = with_reader(INDEX, "/r-1.js", "/r-1_bg.wasm").unwrap();
    let loader = elements(&named, "script").into_iter().next().unwrap();
    assert_eq!(loader.attr("data-reader-js"), Some("/r-1.js"));
    assert_eq!(loader.attr("data-reader-wasm"), Some("/r-1_bg.wasm"));
    assert_eq!(loader.attr("data-js"), Some("/trainplan-web-2881.js"));
    assert_eq!(with_reader(&named, "/r-2.js", "/r-2_bg.wasm").unwrap(), named, "named once");
    assert_eq!(named.replace(r#" data-reader-js="/r-1.js" data-reader-wasm="/r-1_bg.wasm""#, ""), INDEX);
    let no_loader = INDEX.replace("data-js=", "data-other=");
    assert_eq!(with_reader(&no_loader, "/r.js", "/r_bg.wasm"), Err(BundleError::NoLoader));
}

#[test]
fn the_single_file_inlines_the_reader_for_its_first_use() {
    let index = with_reader(INDEX, "/trainplan-reader-77.js", "/trainplan-reader-77_bg.wasm").unwrap();
    let read = |reference: &str| match reference {
        "/trainplan-reader-77.js" => Some(READER_GLUE.as_bytes().to_vec()),
        "/trainplan-reader-77_bg.wasm" => Some(reader_wasm()),
        other => files(other),
    };
    let page = single_file(&index, &read).unwrap();
    let scripts: Vec<&str> = elements(&page, "script").into_iter().map(|s| &page[s.body.clone()]).collect();
    assert_eq!(scripts.len(), 2, "{page}");
    // The page's module as before; then the reader's glue with a loader that defines the function
    // the page calls, instantiating the inflated wasm only when it is first called.
    assert!(scripts[0].starts_with(&format!("\n{GLUE}")), "{}", scripts[0]);
    let reader = scripts[1];
    assert!(reader.starts_with(&format!("\n{READER_GLUE}")), "{reader}");
    let defined = reader.find("globalThis.trainplanReadLaunch = async").unwrap();
    assert!(defined < reader.find("await __wbg_init(").unwrap(), "{reader}");
    assert!(reader.contains("return read_launch(text, current);"), "{reader}");
    let packed = between(reader, "const packed = \"", "\"");
    let deflated = STANDARD.decode(packed).unwrap();
    assert_eq!(miniz_oxide::inflate::decompress_to_vec(&deflated).unwrap(), reader_wasm());
    // Both run under the CSP, by hash; nothing is left to fetch.
    let csp = between(&page, "content=\"", "\"");
    for script in &scripts {
        assert!(csp.contains(&hash_source(script)), "{csp}");
    }
    assert!(!page.contains("data-reader-js") && !page.contains("/trainplan-reader-77"), "{page}");

    let missing = |reference: &str| match reference {
        "/trainplan-reader-77_bg.wasm" => None,
        other => read(other),
    };
    assert_eq!(
        single_file(&index, &missing),
        Err(BundleError::Missing("/trainplan-reader-77_bg.wasm".to_owned()))
    );
}

/// A glue after the split: wasm-bindgen's imports of the loader, and the object of imports it hands
/// the first module, keyed by the module name the wasm asks for.
const SPLIT_GLUE: &str = "import * as import1 from \"./__wasm_split.js\"\n\
                          import * as import2 from \"./__wasm_split.js\"\n\
                          function initSync(module) { return module; }\n\
                          function __wbg_get_imports() { return { \"./__wasm_split.js\": import1, \"./x\": import2 }; }\n\
                          async function __wbg_init(module_or_path) { return module_or_path; }\n\
                          export { initSync, __wbg_init as default };\n";

/// The loader wasm_split_cli_support 0.2.4 writes, shortened: one part shared, one per split point.
const LOADER_JS: &str = r#"import { initSync } from "./trainplan-web-2881.js";

function makeLoad(fetcher, deps) { return () => fetcher(); }
/* results_below */
const __chunk_4 = makeLoad(() => {
    const src = fetch(new URL("./trainplan-part-chunk_4-aa.wasm", import.meta.url));
    return async (imports) => (WebAssembly.instantiateStreaming(src, imports));
}
, []);
export const __wasm_split_load_results_below = makeLoad(() => {
    const src = fetch(new URL("./trainplan-part-results_below-bb.wasm", import.meta.url));
    return async (imports) => (WebAssembly.instantiateStreaming(src, imports));
}
, [__chunk_4]);
"#;

#[test]
fn integrity_is_sha384_in_base64_as_the_sri_spec_writes_it() {
    // Subresource Integrity (W3C Recommendation), §3.1's example for `alert('Hello, world.');`.
    assert_eq!(
        integrity(b"alert('Hello, world.');"),
        "sha384-H8BRh8j48O9oYatfu5AZzq6A9RINhZO5H16dQZngK7T62em8MUt1FLm52t+eX6xO"
    );
    // Only the preload of the file named changes.
    let index = with_integrity(INDEX, "/trainplan-web-2881_bg.wasm", "sha384-NEW");
    assert!(
        index
            .contains(r#"href="/trainplan-web-2881_bg.wasm" crossorigin="anonymous" integrity="sha384-NEW""#)
    );
    assert!(
        index.contains(r#"href="/trainplan-web-2881.js" crossorigin="anonymous" integrity="sha384-SvNe""#)
    );
    assert_eq!(index.len(), INDEX.len() - "BUgD".len() + "NEW".len());
}

#[test]
fn parts_are_named_by_their_split_point_and_their_bytes() {
    let a = part_name("split_results_below", b"one");
    assert!(a.starts_with("trainplan-part-results_below-") && a.ends_with(".wasm"), "{a}");
    assert_ne!(a, part_name("split_results_below", b"two"), "new bytes, new name");
    assert_eq!(a, part_name("split_results_below", b"one"));
    // Leptos's `#[lazy]` appends a number to the split point's name; a shared part keeps its own.
    assert!(
        part_name("split_more_results_12721318074378115458", b"x")
            .starts_with("trainplan-part-more_results-")
    );
    assert!(part_name("chunk_4", b"x").starts_with("trainplan-part-chunk_4-"));
    assert!(loader_name(LOADER_JS).starts_with("trainplan-split-"));
}

#[test]
fn the_glue_imports_the_renamed_loader_and_hands_the_wasm_what_it_asks_for() {
    let glue = glue_importing(SPLIT_GLUE, "./trainplan-split-cc.js");
    assert_eq!(glue.matches("from \"./trainplan-split-cc.js\"").count(), 2, "{glue}");
    // The first module imports from the module name it was linked with.
    assert!(glue.contains("{ \"./__wasm_split.js\": import1,"), "{glue}");
    let loader = renamed(LOADER_JS, &[("trainplan-part-chunk_4-aa.wasm".to_owned(), "p-4.wasm".to_owned())]);
    assert!(loader.contains("new URL(\"./p-4.wasm\", import.meta.url)") && !loader.contains("chunk_4-aa"));
}

#[test]
fn the_single_file_inlines_the_loader_and_its_parts() {
    let part = |n: u8| (0..3000u32).map(|i| (i % 7) as u8 ^ n).collect::<Vec<u8>>();
    let read = |reference: &str| match reference {
        "/trainplan-web-2881.js" => Some(glue_importing(SPLIT_GLUE, "./trainplan-split-cc.js").into_bytes()),
        "/trainplan-split-cc.js" => Some(LOADER_JS.as_bytes().to_vec()),
        "/trainplan-part-chunk_4-aa.wasm" => Some(part(1)),
        "/trainplan-part-results_below-bb.wasm" => Some(part(2)),
        other => files(other),
    };
    let page = single_file(INDEX, &read).unwrap();
    let script = between(&page, "<script type=\"module\">", "</script>");
    // No import and no fetch are left; each import is the loader's exports, run once.
    assert!(!script.lines().any(|l| l.starts_with("import ")) && !script.contains("fetch("), "{script}");
    assert_eq!(script.matches("const __trainplanLoader0 = (() => {").count(), 1, "{script}");
    assert!(script.contains("const import1 = __trainplanLoader0;\nconst import2 = __trainplanLoader0;\n"));
    assert!(script.contains("return { __wasm_split_load_results_below };"), "{script}");
    assert!(!script.contains("export const"), "{script}");
    // Each part is inlined where it was fetched, and inflates back to its bytes.
    let packed: Vec<Vec<u8>> = script
        .split("__trainplanPart(\"")
        .skip(1)
        .map(|rest| {
            let deflated = STANDARD.decode(&rest[..rest.find('"').unwrap()]).unwrap();
            miniz_oxide::inflate::decompress_to_vec(&deflated).unwrap()
        })
        .collect();
    assert!(packed == [part(1), part(2)], "the parts inflate back to their bytes, in order");
    let csp = between(&page, "content=\"", "\"");
    assert!(csp.contains(&hash_source(script)), "{csp}");

    // A part the build lacks, or an import of anything else, is refused.
    let missing = |reference: &str| match reference {
        "/trainplan-part-results_below-bb.wasm" => None,
        other => read(other),
    };
    assert_eq!(
        single_file(INDEX, &missing),
        Err(BundleError::Missing("trainplan-part-results_below-bb.wasm".to_owned()))
    );
    let other = |reference: &str| match reference {
        "/trainplan-split-cc.js" => Some(LOADER_JS.replace("{ initSync }", "{ other }").into_bytes()),
        other => read(other),
    };
    assert!(matches!(single_file(INDEX, &other), Err(BundleError::Glue(_))));
}

/// A module importing two functions from its glue and one from the parts' loader, with a memory
/// import between them (its limits must survive the rewrite byte for byte), written by hand from
/// the binary format (WebAssembly Core Specification §5.5: type, import and export sections).
fn module_importing(glue_module: &str) -> Vec<u8> {
    let name = |text: &str| [vec![text.len() as u8], text.as_bytes().to_vec()].concat();
    // Lengths below 16,384: LEB128 in one or two bytes.
    let section = |id: u8, content: Vec<u8>| {
        let n = content.len();
        let len = if n < 128 { vec![n as u8] } else { vec![(n & 0x7f) as u8 | 0x80, (n >> 7) as u8] };
        [vec![id], len, content].concat()
    };
    let mut imports = vec![4u8];
    for (module, field, ty) in [
        (glue_module, "__wbg_now_463ac581d2fc7ea3", vec![0x00, 0x00]),
        ("./__wasm_split.js", "__wasm_split_load_results_below", vec![0x00, 0x00]),
        (glue_module, "memory", vec![0x02, 0x01, 0x11, 0x80, 0x01]),
        (glue_module, "__wbg_set_className_fcd90345b3a090af", vec![0x00, 0x00]),
    ] {
        imports.extend([name(module), name(field), ty].concat());
    }
    let exports = [vec![1u8], name("go"), vec![0x00, 0x01]].concat();
    [
        b"\0asm\x01\0\0\0".to_vec(),
        section(1, vec![1, 0x60, 0, 0]),
        section(2, imports),
        section(7, exports),
        section(0, [name("producers"), b"x".to_vec()].concat()),
    ]
    .concat()
}

#[test]
fn the_glues_imports_are_renamed_short_in_the_module_and_the_glue_alike() {
    let glue_module = "./trainplan-web-95c9e32548c7246a_bg.js";
    let glue = "function __wbg_get_imports() {\n    const import0 = {\n        __proto__: null,\n        \
                __wbg_now_463ac581d2fc7ea3: function() { return Date.now(); },\n        \
                memory: new WebAssembly.Memory({ initial: 17, maximum: 128 }),\n        \
                __wbg_set_className_fcd90345b3a090af: function(arg0, arg1) { arg0.className = arg1; },\n    };\n    \
                return { \"./trainplan-web-95c9e32548c7246a_bg.js\": import0, \"./__wasm_split.js\": import1 };\n}\n";
    let (wasm, new_glue) = short_imports(&module_importing(glue_module), glue, glue_module).unwrap();
    // The module reads back with the glue's imports renamed in order and the loader's kept; every
    // other section, the memory's limits and the export among them, as it was.
    let expected = [
        (SHORT_MODULE, "a"),
        ("./__wasm_split.js", "__wasm_split_load_results_below"),
        (SHORT_MODULE, "b"),
        (SHORT_MODULE, "c"),
    ];
    let mut imports = Vec::new();
    let mut exports = Vec::new();
    for payload in wasmparser::Parser::new(0).parse_all(&wasm) {
        match payload.unwrap() {
            wasmparser::Payload::ImportSection(reader) => {
                for group in reader {
                    let wasmparser::Imports::Single(_, import) = group.unwrap() else {
                        panic!("a compact group")
                    };
                    imports.push((import.module.to_owned(), import.name.to_owned(), import.ty));
                }
            }
            wasmparser::Payload::ExportSection(reader) => {
                exports.extend(reader.into_iter().map(|e| e.unwrap().name.to_owned()));
            }
            _ => {}
        }
    }
    let names: Vec<(&str, &str)> = imports.iter().map(|(m, n, _)| (m.as_str(), n.as_str())).collect();
    assert_eq!(names, expected);
    let memory = wasmparser::MemoryType {
        memory64: false,
        shared: false,
        initial: 17,
        maximum: Some(128),
        page_size_log2: None,
    };
    assert_eq!(imports[2].2, wasmparser::TypeRef::Memory(memory));
    assert_eq!(exports, ["go"]);
    assert!(wasm.ends_with(b"\x09producersx"), "the custom section kept");
    // The glue's keys renamed alike: the module's key too, the loader's kept.
    assert!(new_glue.contains("        a: function() { return Date.now(); },"), "{new_glue}");
    assert!(new_glue.contains("        b: new WebAssembly.Memory"), "{new_glue}");
    assert!(new_glue.contains("        c: function(arg0, arg1)"), "{new_glue}");
    assert!(new_glue.contains("{ \"w\": import0, \"./__wasm_split.js\": import1 }"), "{new_glue}");
    assert!(!new_glue.contains("__wbg_now_"), "{new_glue}");
    // A glue that lacks a key, or names one twice, stops the build.
    let lacking = glue.replace("__wbg_now_463ac581d2fc7ea3:", "__wbg_now_0000000000000000:");
    assert!(matches!(
        short_imports(&module_importing(glue_module), &lacking, glue_module),
        Err(ImportsError::Glue(_))
    ));
    let twice = glue.replace("memory:", "memory: 1, memory:");
    assert!(matches!(
        short_imports(&module_importing(glue_module), &twice, glue_module),
        Err(ImportsError::Glue(_))
    ));
    assert!(matches!(
        short_imports(b"\0asm\x01\0\0\0\x02\x05", glue, glue_module),
        Err(ImportsError::Wasm(_))
    ));
}

#[test]
fn short_names_are_distinct_identifiers() {
    let names: Vec<String> = (0..3000).map(short_name).collect();
    assert_eq!(&names[..3], ["a", "b", "c"]);
    assert_eq!(names[51], "Z");
    assert_eq!(names[52], "aa");
    let distinct: std::collections::HashSet<&String> = names.iter().collect();
    assert_eq!(distinct.len(), names.len());
    assert!(names.iter().all(|n| n.bytes().all(|b| b.is_ascii_alphabetic())));
}
