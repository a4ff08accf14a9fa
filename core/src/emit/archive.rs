//! All of a plan's launch files as one zip, for the page's "download all" and the CLI's `--zip`.
//! Entries are stored (the files are a few kilobytes of text), dated 1980-01-01 so the same plan
//! always gives the same bytes, inside one folder, scripts executable (`unix_permissions` 0755).

use std::io::{Cursor, Write};

use zip::ZipWriter;
use zip::write::SimpleFileOptions;

use super::{EmittedFile, FileKind, model_slug};
use crate::Plan;

/// The folder (and zip name) for a plan's files: the model and the framework, e.g.
/// `qwen2.5-7b-llamafactory`.
pub fn folder(plan: &Plan) -> String {
    format!("{}-{}", model_slug(plan), plan.framework.wire())
}

/// The zip of `files` under the folder `folder` (a file-name-safe slug).
pub fn zip(folder: &str, files: &[EmittedFile]) -> Vec<u8> {
    let mut writer = ZipWriter::new(Cursor::new(Vec::new()));
    for f in files {
        let mode = match f.kind {
            FileKind::Shell => 0o755,
            FileKind::Yaml | FileKind::Json => 0o644,
        };
        let options = SimpleFileOptions::default()
            .compression_method(zip::CompressionMethod::Stored)
            .unix_permissions(mode);
        // Writing to memory cannot fail; names are the emitters' own, without a directory.
        writer.start_file(format!("{folder}/{}", f.name), options).expect("an in-memory zip takes any entry");
        writer.write_all(f.text.as_bytes()).expect("an in-memory zip takes any bytes");
    }
    writer.finish().expect("an in-memory zip always finishes").into_inner()
}
