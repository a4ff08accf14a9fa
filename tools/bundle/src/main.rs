//! `trainplan-bundle [DIR]`: splits the page's module at its split points (`split`), names the
//! launch-file reader in `index.html`, and writes `sw.js` and `trainplan.html` into a built `dist/`.
//!
//! Trunk runs it as a `post_build` hook (Trunk.toml) on its staging folder, `TRUNK_STAGING_DIR`,
//! before that folder becomes `dist/`; so every `trunk build` and `trunk serve` produces both.
//! `TRUNK_PUBLIC_URL` (default `/`) is the prefix of the references in `index.html`.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use trainplan_bundle::{
    Asset, BundleError, SERVICE_WORKER, SINGLE_FILE, page_files, reader_files, reader_names, service_worker,
    single_file, with_reader,
};

mod split;

fn main() -> ExitCode {
    match run() {
        Ok(summary) => {
            eprintln!("trainplan-bundle: {summary}");
            ExitCode::SUCCESS
        }
        Err(err) => {
            eprintln!("trainplan-bundle: error: {err}");
            ExitCode::FAILURE
        }
    }
}

fn run() -> Result<String, String> {
    let dir = match std::env::args_os().nth(1).or_else(|| std::env::var_os("TRUNK_STAGING_DIR")) {
        Some(dir) => PathBuf::from(dir),
        None => {
            return Err(
                "usage: trainplan-bundle DIR (or run by trunk, which sets TRUNK_STAGING_DIR)".to_owned()
            );
        }
    };
    let public_url = std::env::var("TRUNK_PUBLIC_URL").unwrap_or_else(|_| "/".to_owned());
    let io = |path: &Path, err: std::io::Error| format!("{}: {err}", path.display());

    let index_path = dir.join("index.html");
    let index = std::fs::read_to_string(&index_path).map_err(|err| io(&index_path, err))?;
    // The page's module split into the first module and the parts loaded after it.
    let (page_js, page_wasm) = page_files(&index).map_err(|err| err.to_string())?;
    let (index, split) = match split::split_page(&dir, &index, &page_js, &page_wasm)? {
        Some((index, split)) => {
            std::fs::write(&index_path, &index).map_err(|err| io(&index_path, err))?;
            let (bytes, count) = split.parts;
            (index, format!("the page's first module is {} bytes, its {count} parts {bytes}; ", split.first))
        }
        None => (index, String::new()),
    };
    // The launch-file reader: renamed with its hash, and named on the loader's tag for public/start.js
    // (already done when this runs again on a built `dist/`).
    let (js, wasm) = reader_files();
    let (js_path, wasm_path) = (dir.join(&js), dir.join(&wasm));
    let index = match (std::fs::read(&js_path), std::fs::read(&wasm_path)) {
        (Ok(glue), Ok(module)) => {
            let (js, wasm) = reader_names(&glue, &module);
            std::fs::rename(&js_path, dir.join(&js)).map_err(|err| io(&js_path, err))?;
            std::fs::rename(&wasm_path, dir.join(&wasm)).map_err(|err| io(&wasm_path, err))?;
            let index = with_reader(&index, &format!("{public_url}{js}"), &format!("{public_url}{wasm}"))
                .map_err(|err| err.to_string())?;
            std::fs::write(&index_path, &index).map_err(|err| io(&index_path, err))?;
            index
        }
        _ if index.contains("data-reader-js=") => index,
        _ => return Err(BundleError::NoReader.to_string()),
    };
    let read =
        |reference: &str| resolve(&dir, &public_url, reference).and_then(|path| std::fs::read(path).ok());
    let page = single_file(&index, &read).map_err(|err| err.to_string())?;

    // The precache list is the folder as built, less what this step writes.
    let mut assets = Vec::new();
    collect(&dir, &dir, &mut assets).map_err(|err| io(&dir, err))?;
    assets.retain(|asset| asset.path != SERVICE_WORKER && asset.path != SINGLE_FILE);
    let worker = service_worker(&assets);

    let page_path = dir.join(SINGLE_FILE);
    std::fs::write(&page_path, &page).map_err(|err| io(&page_path, err))?;
    let worker_path = dir.join(SERVICE_WORKER);
    std::fs::write(&worker_path, worker).map_err(|err| io(&worker_path, err))?;
    Ok(format!(
        "{split}{SERVICE_WORKER} precaches {} files; {SINGLE_FILE} is {} bytes",
        assets.len() + 1,
        page.len()
    ))
}

/// The file a reference of `index.html` names inside `dir`: `/main-….css` under public URL `/`.
/// `None` for anything that would leave the folder.
fn resolve(dir: &Path, public_url: &str, reference: &str) -> Option<PathBuf> {
    let rel = reference.strip_prefix(public_url).or_else(|| reference.strip_prefix('/')).unwrap_or(reference);
    let rel = rel.strip_prefix("./").unwrap_or(rel);
    match rel.contains(':') || rel.split('/').any(|part| part == "..") {
        true => None,
        false => Some(dir.join(rel)),
    }
}

/// Every file under `dir`, with its path relative to `root`; hidden ones are no part of the page
/// (trunk's staging folder is `dist/.stage`, should this run on `dist/` itself).
fn collect(root: &Path, dir: &Path, acc: &mut Vec<Asset>) -> std::io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        if entry.file_name().to_string_lossy().starts_with('.') {
            continue;
        }
        let path = entry.path();
        match path.is_dir() {
            true => collect(root, &path, acc)?,
            false => {
                let rel = path.strip_prefix(root).unwrap_or(&path);
                let parts: Vec<String> =
                    rel.components().map(|c| c.as_os_str().to_string_lossy().into_owned()).collect();
                acc.push(Asset { path: parts.join("/"), bytes: std::fs::read(&path)? });
            }
        }
    }
    Ok(())
}
