//! Splits the page's module at its split points (src/components/deferred.rs), in the staging folder:
//! the first module the page loads, and the parts it loads after the plan is drawn.
//!
//! Trunk has built the page's bin (linked with `--emit-relocs`, build.rs), run wasm-bindgen over it
//! and staged the glue and wasm (index.html: `data-wasm-opt="0"`, since the split comes first). This
//! step reads the bin's wasm as cargo linked it, splits it with wasm_split_cli_support (the parts,
//! their loader, and the first module), runs wasm-bindgen over the first module as trunk did, with
//! `--keep-lld-exports` (the parts link against its exports), renames the first module's imports
//! from its glue short in both ([`trainplan_bundle::short_imports`]), then `wasm-opt -Oz --low-memory-unused` over every module
//! in a release build, and puts the results in place of trunk's: the glue and the wasm under trunk's
//! names, the parts and the loader under names with their hash ([`trainplan_bundle::part_name`]).
//! The preloads' integrity in `index.html` follows the new bytes.
//!
//! The steps cargo-leptos takes for Leptos's own `#[lazy]` (src/compile/front.rs at
//! https://github.com/leptos-rs/cargo-leptos/commit/00fa55c), in trunk's post-build hook.

use std::path::{Path, PathBuf};
use std::process::Command;

use trainplan_bundle::{
    LOADER, LOADER_LINK, glue_importing, integrity, loader_name, part_name, renamed, short_imports,
    with_integrity,
};

/// The page's bin, whose wasm cargo links (Cargo.toml).
const BIN: &str = "trainplan-web";
/// The WebAssembly features the page is built with (rustc's defaults for wasm32-unknown-unknown, and
/// `+simd128` in .cargo/config.toml), which wasm-opt must accept in every module: a part carries no
/// target-features section of its own to read them from.
const FEATURES: [&str; 7] = [
    "--enable-bulk-memory",
    "--enable-multivalue",
    "--enable-mutable-globals",
    "--enable-nontrapping-float-to-int",
    "--enable-reference-types",
    "--enable-sign-ext",
    "--enable-simd",
];

/// What the split wrote, for the hook's summary line.
pub struct Split {
    /// The first module's bytes.
    pub first: usize,
    /// The parts' bytes, all together, and how many there are.
    pub parts: (usize, usize),
}

/// Splits the page staged in `dir`, whose glue and wasm `index_html` names (`js`, `wasm`, references
/// under `public_url`); returns `index_html` with the preloads' integrity updated. `None` when the
/// page is already split (the hook run again over a built `dist/`).
pub fn split_page(
    dir: &Path,
    index_html: &str,
    js: &str,
    wasm: &str,
) -> Result<Option<(String, Split)>, String> {
    let io = |path: &Path, err: std::io::Error| format!("{}: {err}", path.display());
    let file_of = |reference: &str| reference.rsplit('/').next().unwrap_or(reference).to_owned();
    let (js_file, wasm_file) = (file_of(js), file_of(wasm));
    let glue_path = dir.join(&js_file);
    let glue = std::fs::read_to_string(&glue_path).map_err(|err| io(&glue_path, err))?;
    let page = js_file.trim_end_matches(".js").to_owned();
    if glue.contains(&format!("from \"./{LOADER}-")) {
        return Ok(None);
    }

    let profile = std::env::var("TRUNK_PROFILE").unwrap_or_else(|_| "release".to_owned());
    let linked = target_dir().join("wasm32-unknown-unknown").join(&profile).join(format!("{BIN}.wasm"));
    let input = std::fs::read(&linked).map_err(|err| io(&linked, err))?;
    let work = target_dir().join("trainplan-split");
    let _ = std::fs::remove_dir_all(&work);
    std::fs::create_dir_all(&work).map_err(|err| io(&work, err))?;
    let first = work.join("first.wasm");
    let main_module = format!("./{js_file}");
    let mut options = wasm_split_cli_support::Options::new(&input);
    options.output_dir = &work;
    options.main_out_path = &first;
    options.main_module = &main_module;
    let split = wasm_split_cli_support::transform(options)
        .map_err(|err| format!("splitting {}: {err:#}", linked.display()))?;

    let bindgen = work.join("bindgen");
    check_tools()?;
    run(Command::new("wasm-bindgen")
        .args([
            "--target=web",
            &format!("--out-dir={}", bindgen.display()),
            &format!("--out-name={page}"),
            "--no-typescript",
            "--keep-lld-exports",
            "--no-demangle",
        ])
        .arg(&first))?;
    let release = profile == "release";
    let optimized = |from: &Path, to: &Path| -> Result<(), String> {
        match release {
            // `--low-memory-unused`: no access goes below address 1,024 but the stack's last KiB
            // (rustc links the stack first, from 1 MiB down to 0), so wasm-opt may fold a pointer's
            // added constant into the access's offset; 1.8 KB gzip off the first module (docs/DESIGN.md).
            true => run(Command::new("wasm-opt")
                .args(["-Oz", "--converge", "--low-memory-unused"])
                .args(FEATURES)
                .arg(from)
                .arg("-o")
                .arg(to)),
            false => std::fs::copy(from, to).map(|_| ()).map_err(|err| io(from, err)),
        }
    };

    // The parts, renamed with their hash; the loader names them so, and is named by its own hash.
    let mut renames = Vec::new();
    let mut parts = (0, 0);
    for part in &split.split_modules {
        let staged = dir.join("part.tmp");
        optimized(part, &staged)?;
        let bytes = std::fs::read(&staged).map_err(|err| io(&staged, err))?;
        let stem = part.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
        let name = part_name(&stem, &bytes);
        std::fs::rename(&staged, dir.join(&name)).map_err(|err| io(&staged, err))?;
        parts = (parts.0 + bytes.len(), parts.1 + 1);
        let file = part.file_name().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
        renames.push((file, name));
    }
    let loader_path = work.join(LOADER_LINK.trim_start_matches("./"));
    let loader = std::fs::read_to_string(&loader_path).map_err(|err| io(&loader_path, err))?;
    let loader = renamed(&loader, &renames);
    let loader_file = loader_name(&loader);
    std::fs::write(dir.join(&loader_file), &loader).map_err(|err| io(&dir.join(&loader_file), err))?;

    let new_glue_path = bindgen.join(format!("{page}.js"));
    let new_glue = std::fs::read_to_string(&new_glue_path).map_err(|err| io(&new_glue_path, err))?;
    // The glue's imports renamed short in the module and the glue alike (`imports.rs`).
    let bound = bindgen.join(format!("{page}_bg.wasm"));
    let bound_bytes = std::fs::read(&bound).map_err(|err| io(&bound, err))?;
    let (short, new_glue) = short_imports(&bound_bytes, &new_glue, &format!("./{page}_bg.js"))
        .map_err(|err| format!("{}: {err}", bound.display()))?;
    let shortened = work.join("first-short.wasm");
    std::fs::write(&shortened, &short).map_err(|err| io(&shortened, err))?;
    let new_glue = glue_importing(&new_glue, &format!("./{loader_file}"));
    std::fs::write(&glue_path, &new_glue).map_err(|err| io(&glue_path, err))?;
    let wasm_path = dir.join(&wasm_file);
    optimized(&shortened, &wasm_path)?;
    let first_bytes = std::fs::read(&wasm_path).map_err(|err| io(&wasm_path, err))?;

    let index = with_integrity(index_html, js, &integrity(new_glue.as_bytes()));
    let index = with_integrity(&index, wasm, &integrity(&first_bytes));
    Ok(Some((index, Split { first: first_bytes.len(), parts })))
}

/// Cargo's target folder: `CARGO_TARGET_DIR`, else `target/` beside the workspace's Cargo.toml
/// (trunk runs the hook from the folder of index.html, the workspace root).
fn target_dir() -> PathBuf {
    match std::env::var_os("CARGO_TARGET_DIR").or_else(|| std::env::var_os("CARGO_BUILD_TARGET_DIR")) {
        Some(dir) => PathBuf::from(dir),
        None => std::env::var_os("TRUNK_SOURCE_DIR")
            .map_or_else(|| PathBuf::from("."), PathBuf::from)
            .join("target"),
    }
}

/// Checks that the wasm-bindgen and wasm-opt on PATH are the versions Trunk.toml pins (`[tools]`):
/// trunk uses those for the launch-file reader, and may find them elsewhere (its own cache), while
/// this step runs what PATH holds. A glue of another wasm-bindgen would not fit the first module's
/// imports, and Debian's binaryen 108 builds a wasm that dies at load.
fn check_tools() -> Result<(), String> {
    let source = std::env::var_os("TRUNK_SOURCE_DIR").map_or_else(|| PathBuf::from("."), PathBuf::from);
    let trunk_toml =
        std::fs::read_to_string(source.join("Trunk.toml")).map_err(|err| format!("Trunk.toml: {err}"))?;
    for (tool, key) in [("wasm-bindgen", "wasm_bindgen"), ("wasm-opt", "wasm_opt")] {
        let pinned = trunk_toml
            .lines()
            .find_map(|line| {
                line.strip_prefix(key)?
                    .trim_start()
                    .strip_prefix('=')?
                    .trim()
                    .strip_prefix('"')?
                    .split('"')
                    .next()
            })
            .ok_or_else(|| format!("Trunk.toml pins no {key} under [tools]"))?;
        // wasm-opt prints `wasm-opt version 132 (version_132)`, wasm-bindgen `wasm-bindgen 0.2.130`.
        let output = Command::new(tool).arg("--version").output().map_err(|err| format!("{tool}: {err}"))?;
        let version = String::from_utf8_lossy(&output.stdout);
        let words: Vec<&str> = version.split(|c: char| c.is_whitespace() || c == '(' || c == ')').collect();
        if !words.contains(&pinned) {
            return Err(format!("{tool} on PATH is {}, not {pinned} as Trunk.toml pins it", version.trim()));
        }
    }
    Ok(())
}

/// Runs `command`, found on PATH as trunk finds its tools (scripts/setup puts them there).
fn run(command: &mut Command) -> Result<(), String> {
    let shown = format!("{command:?}");
    let output = command.output().map_err(|err| format!("{shown}: {err}"))?;
    match output.status.success() {
        true => Ok(()),
        false => Err(format!("{shown}: {}\n{}", output.status, String::from_utf8_lossy(&output.stderr))),
    }
}
