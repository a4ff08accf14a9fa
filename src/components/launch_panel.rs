//! The files to launch the plan: what the core's emitters write for the plan's framework, one tab
//! per file, with copy and download; and the paths and address only the user knows.

use leptos::prelude::*;
use trainplan_core::emit::import::{ImportError, Imported, ModelOrigin};
use trainplan_core::emit::{self, EmittedFile};
use trainplan_core::plan::{LaunchFile, PlanFileError};
use trainplan_core::{Plan, permalink};

use crate::components::results::use_results;
use crate::form::PlanForm;
use crate::i18n::{Key, fill, t};
use crate::{highlight, messages, reader, storage};

/// A `data:` address holding `text`, for a download link (no object URL to revoke).
fn data_url(text: &str) -> String {
    format!("data:text/plain;charset=utf-8,{}", js_sys::encode_uri_component(text))
}

/// A `data:` address holding a zip of every file, and the zip's name.
fn zip_url(plan: &Plan, files: &[EmittedFile]) -> (String, String) {
    use base64::Engine;
    let folder = emit::archive::folder(plan);
    let bytes = emit::archive::zip(&folder, files);
    let url =
        format!("data:application/zip;base64,{}", base64::engine::general_purpose::STANDARD.encode(bytes));
    (url, format!("{folder}.zip"))
}

/// What the last import said.
#[derive(Clone, Debug)]
enum ImportNote {
    /// The text was not read.
    Unread(ImportError),
    /// It was read into a plan file that is not a valid plan; nothing changed.
    Invalid(PlanFileError),
    /// It became the plan: the import, and the name of the model the plan had before.
    Read(Box<Imported>, String),
    /// The launch-file reader could not be loaded or did not answer: why.
    NoReader(String),
    /// The text is being read (the reader may still be loading).
    Reading,
}

/// The launch panel: files for the settled plan (the plan once typing pauses), whose report the
/// files' headers quote.
#[component]
pub fn LaunchPanel() -> impl IntoView {
    let ctx = use_results();
    let (plan, report) = (ctx.settled, ctx.settled_report);
    let files = Memo::new(move |_| {
        plan.with(|p| {
            let p = p.as_ref().ok()?;
            let base = storage::page_url();
            let base = base.split('#').next().unwrap_or_default().to_owned();
            let link = format!("{base}#{}", permalink::encode(p));
            report.with(|r| r.as_ref().map(|r| emit::emit_with(p, r, &link)))
        })
    });
    // Built only when the link is shown, from the same files as the tabs.
    let zip = Memo::new(move |_| {
        let files = files.get()?.ok()?;
        plan.with(|p| p.as_ref().ok().map(|p| zip_url(p, &files)))
    });
    // The core's verdict on the plan, which every file's header carries too: empty when it runs.
    let verdict = Memo::new(move |_| report.with(|r| r.as_ref().map(emit::verdict_of).unwrap_or_default()));
    // Until the plan settles the files are the plan before's: dimmed and deferred as the advice is
    // (`.deferred.updating`), and refused to the keyboard too.
    let settling = Memo::new(move |_| ctx.settling());
    let confirm_download = move |ev: leptos::ev::MouseEvent| {
        let runs = verdict.with_untracked(Vec::is_empty);
        confirm_download(&ev, settling.get_untracked(), runs, ctx.tr(Key::launch_confirm_download));
    };
    let selected = RwSignal::new(0usize);
    let copied = RwSignal::new(false);
    let current = move || -> Option<EmittedFile> {
        let files = files.get()?.ok()?;
        files.get(selected.get().min(files.len().saturating_sub(1))).cloned()
    };
    let tabs = move || {
        let Some(Ok(files)) = files.get() else { return Vec::new() };
        files
            .into_iter()
            .enumerate()
            .map(|(i, f)| {
                let class = move || if selected.get() == i { "tab active" } else { "tab" };
                view! {
                    <button class=class data-testid=format!("launch-tab-{}", f.name)
                        on:click=move |_| { selected.set(i); copied.set(false); }>
                        {f.name.clone()}
                    </button>
                }
            })
            .collect::<Vec<_>>()
    };
    let copy = move |_| {
        let Some(f) = current() else { return };
        leptos::task::spawn_local(async move {
            copied.set(storage::copy_text(&f.text).await);
        });
    };
    let refused = move || match files.get() {
        Some(Err(error)) => {
            let (key, field, framework) = match error {
                emit::EmitError::Unsafe { field, framework } => (Key::launch_unsafe, field, framework),
                emit::EmitError::Interpolation { field, framework } => {
                    (Key::launch_unsafe_interpolation, field, framework)
                }
            };
            let field = messages::field_label(ctx.lang(), field);
            Some(fill(ctx.tr(key), &[("field", &field), ("framework", framework.name())]))
        }
        _ => None,
    };
    let target = move || {
        plan.with(|p| {
            p.as_ref()
                .ok()
                .map(|p| fill(ctx.tr(Key::launch_target), &[("target", &emit::target(p.framework))]))
        })
    };
    view! {
        <h2>{move || ctx.tr(Key::launch_title)}</h2>
        <p class="muted" data-testid="launch-target">{target}</p>
        <LaunchFields />
        <Show when=move || refused().is_some()>
            <p class="badge bad" data-testid="launch-refused">{refused}</p>
        </Show>
        <Show when=move || current().is_some() && verdict.with(|v| !v.is_empty())>
            <p class="badge bad" data-testid="launch-verdict">{move || ctx.tr(Key::launch_not_ready)}</p>
        </Show>
        <Show when=move || current().is_some()>
            <div class="tabs" role="tablist">{tabs}</div>
            <div class="launch-actions deferred" class:updating=settling aria-busy=move || settling.get().to_string()>
                <button class="secondary" data-testid="launch-copy" on:click=copy disabled=settling>
                    {move || if copied.get() { ctx.tr(Key::launch_copied) } else { ctx.tr(Key::launch_copy) }}
                </button>
                <a class="button secondary" data-testid="launch-download" on:click=confirm_download
                    download=move || current().map(|f| f.name)
                    href=move || current().map(|f| data_url(&f.text))>
                    {move || ctx.tr(Key::launch_download)}
                </a>
                <a class="button secondary" data-testid="launch-download-all" on:click=confirm_download
                    download=move || zip.get().map(|(_, name)| name)
                    href=move || zip.get().map(|(url, _)| url)>
                    {move || ctx.tr(Key::launch_download_all)}
                </a>
            </div>
            <pre class="launch-text deferred" class:updating=settling data-testid="launch-text">
                {move || {
                    current()
                        .map(|f| {
                            highlight::spans(f.kind, &f.text)
                                .into_iter()
                                .map(|(class, piece)| view! { <span class=class.css()>{piece.to_owned()}</span> })
                                .collect::<Vec<_>>()
                        })
                }}
            </pre>
        </Show>
        <LaunchImport />
    }
}

/// A download's click: refused while the files are the plan before's (typing has not paused); for a
/// plan that does not run, asked first (`question`), cancelling keeps the page as it is.
fn confirm_download(ev: &leptos::ev::MouseEvent, settling: bool, runs: bool, question: &str) {
    let ok = !settling
        && (runs || web_sys::window().and_then(|w| w.confirm_with_message(question).ok()).unwrap_or(true));
    if !ok {
        ev.prevent_default();
    }
}

/// The launch settings only the user knows (model path, dataset, output folder, master address),
/// each a text field bound to the plan file's `launch` section.
#[component]
fn LaunchFields() -> impl IntoView {
    let ctx = use_results();
    // A text field bound to one launch setting of the plan file.
    let field = move |label: Key,
                      hint: Key,
                      testid: &'static str,
                      get: fn(&LaunchFile) -> String,
                      set: fn(&mut LaunchFile, String)| {
        view! {
            <label class="field wide">
                <span>{move || ctx.tr(label)}</span>
                <input
                    type="text"
                    data-testid=testid
                    placeholder=move || ctx.tr(hint)
                    prop:value=move || ctx.form.with(|f| get(&f.file.launch))
                    on:input=move |ev| {
                        let text = event_target_value(&ev);
                        ctx.form.update(|f: &mut PlanForm| set(&mut f.file.launch, text));
                    }
                />
            </label>
        }
    };
    view! {
        <div class="launch-fields">
            {field(Key::launch_model_path, Key::launch_model_path_hint, "launch-model-path", |l| l.model_path.clone(), |l, v| l.model_path = v)}
            {field(Key::launch_dataset, Key::launch_dataset_hint, "launch-dataset", |l| l.dataset.clone(), |l, v| l.dataset = v)}
            {field(Key::launch_output_dir, Key::launch_output_dir_hint, "launch-output-dir", |l| l.output_dir.clone(), |l, v| l.output_dir = v)}
            {field(Key::launch_master_addr, Key::launch_master_addr_hint, "launch-master-addr", |l| l.master_addr.clone(), |l, v| l.master_addr = v)}
        </div>
    }
}

/// The reverse: a launch file the user has, pasted and read into the plan.
#[component]
fn LaunchImport() -> impl IntoView {
    let ctx = use_results();
    // The reverse: a launch file the user has, read into a plan from the defaults; the current
    // plan gives only its hardware, its cluster where the file gives none, and its model where the
    // file tells none (which the note then says).
    let pasted = RwSignal::new(String::new());
    let import_note: RwSignal<Option<ImportNote>> = RwSignal::new(None);
    // The reader is a module of its own, fetched on the first read (crate::reader): the note says
    // the file is being read until the answer comes.
    let import = move |_| {
        let current = ctx.form.with_untracked(|f| f.file.clone());
        let text = pasted.get_untracked();
        import_note.set(Some(ImportNote::Reading));
        leptos::task::spawn_local(async move {
            let note = match reader::read_launch(&text, &current).await {
                Err(why) => ImportNote::NoReader(why),
                Ok(Err(err)) => ImportNote::Unread(err),
                Ok(Ok(got)) => match Plan::from_file(&got.file) {
                    Err(err) => ImportNote::Invalid(err),
                    Ok(plan) => {
                        ctx.form.set(PlanForm::from_plan(&plan));
                        ImportNote::Read(Box::new(got), plan.model.name.clone())
                    }
                },
            };
            import_note.set(Some(note));
        });
    };
    // The note's lines in the page's language: (look, test id, text).
    let import_lines = move || -> Vec<(&'static str, &'static str, String)> {
        let lang = ctx.lang();
        match import_note.get() {
            None => Vec::new(),
            Some(ImportNote::Unread(err)) => {
                vec![("badge bad", "launch-import-note", messages::import_error(lang, &err))]
            }
            Some(ImportNote::Invalid(err)) => {
                vec![("badge bad", "launch-import-note", messages::plan_error(lang, &err))]
            }
            Some(ImportNote::Reading) => {
                vec![("muted", "launch-import-reading", t(lang, Key::launch_import_reading).to_owned())]
            }
            Some(ImportNote::NoReader(why)) => {
                vec![(
                    "badge bad",
                    "launch-import-note",
                    fill(t(lang, Key::launch_import_no_reader), &[("why", &why)]),
                )]
            }
            Some(ImportNote::Read(got, kept)) => {
                let unknown = matches!(got.model, ModelOrigin::Unknown | ModelOrigin::Unbuilt(_));
                let mut lines = Vec::new();
                if !got.unknown.is_empty() {
                    let keys = got.unknown.join(", ");
                    lines.push((
                        "muted",
                        "launch-import-note",
                        fill(t(lang, Key::launch_import_unknown), &[("keys", &keys)]),
                    ));
                } else if got.refused.is_empty() && !unknown {
                    lines.push(("muted", "launch-import-note", t(lang, Key::launch_import_ok).to_owned()));
                }
                let model = messages::model_origin(lang, &got.model, &kept);
                lines.push((if unknown { "badge warn" } else { "muted" }, "launch-import-model", model));
                if !got.refused.is_empty() {
                    let flags: Vec<String> =
                        got.refused.iter().map(|e| messages::flag_error(lang, e)).collect();
                    let text = fill(t(lang, Key::launch_import_refused), &[("flags", &flags.join("; "))]);
                    lines.push(("badge warn", "launch-import-refused", text));
                }
                for caveat in &got.caveats {
                    lines.push(("badge warn", "launch-import-caveat", messages::caveat_text(lang, caveat)));
                }
                lines
            }
        }
    };
    view! {
        <details class="launch-import">
            <summary>{move || ctx.tr(Key::launch_import_title)}</summary>
            <p class="muted">{move || ctx.tr(Key::launch_import_hint)}</p>
            <textarea rows="6" data-testid="launch-import-text" aria-label=move || ctx.tr(Key::launch_import_title)
                prop:value=move || pasted.get()
                on:input=move |ev| pasted.set(event_target_value(&ev))></textarea>
            <button data-testid="launch-import-apply" on:click=import>{move || ctx.tr(Key::launch_import_apply)}</button>
            {move || import_lines().into_iter().map(|(class, testid, text)| {
                view! { <p class=class data-testid=testid>{text}</p> }
            }).collect::<Vec<_>>()}
        </details>
    }
}
