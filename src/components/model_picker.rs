//! The model: search the catalog, pick one, or import a config.json (pasted or from a file).

use leptos::prelude::*;
use leptos::task::spawn_local;
use trainplan_core::catalog;
use trainplan_core::hf;
use trainplan_core::plan::ModelField;
use wasm_bindgen::JsCast;
use wasm_split_helpers::{SplitLoaderError, wasm_split};

use crate::components::deferred::deferred;
use crate::components::{use_lang, use_tr};
use crate::form::PlanForm;
use crate::i18n::{Key, fill};
use crate::{format, messages, storage};

/// Whether a catalog model matches every word of a search, ASCII letters in either case. Model
/// names and ids are ASCII; `str::to_lowercase` would also link Unicode's case tables into the page.
pub fn matches_search(id: &str, name: &str, query: &str) -> bool {
    let haystack = format!("{} {}", id.to_ascii_lowercase(), name.to_ascii_lowercase());
    query.split_whitespace().all(|word| haystack.contains(&word.to_ascii_lowercase()))
}

/// The model panel.
#[component]
pub fn ModelPicker(
    /// The form state.
    form: RwSignal<PlanForm>,
) -> impl IntoView {
    let tr = use_tr();
    let lang = use_lang();
    let query = RwSignal::new(String::new());
    let shown = Memo::new(move |_| {
        query.with(|q| {
            catalog::models().iter().filter(|m| matches_search(m.id, m.name, q)).collect::<Vec<_>>()
        })
    });
    let count = move || {
        let total = catalog::models().len().to_string();
        let n = shown.with(Vec::len).to_string();
        fill(tr(Key::model_count), &[("shown", &n), ("total", &total)])
    };
    // The chosen model, memoised: each option's `selected` follows it, not every keystroke's form.
    let chosen = Memo::new(move |_| form.with(|f| f.model_id().map(str::to_owned)));
    let options = move || {
        shown
            .get()
            .into_iter()
            .map(|m| {
                let id = m.id;
                let total = trainplan_core::model::count_params(&m.arch).total();
                let label = format!("{} · {}", m.name, format::count_short(total, lang.get()));
                view! {
                    <option value=id selected=move || chosen.with(|c| c.as_deref() == Some(id))>
                        {label}
                    </option>
                }
            })
            .collect_view()
    };
    let source = move || form.with(|f| f.model_id().and_then(catalog::model).map(|m| m.source));
    // Models imported on earlier visits (localStorage), newest first.
    let saved = RwSignal::new(storage::saved_models());
    let saved_options = move || {
        saved
            .get()
            .into_iter()
            .enumerate()
            .map(|(i, m)| view! { <option value=i.to_string()>{m.name}</option> })
            .collect_view()
    };
    let on_saved = move |ev: leptos::ev::Event| {
        let Ok(i) = event_target_value(&ev).parse::<usize>() else { return };
        if let Some(m) = saved.with_untracked(|s| s.get(i).cloned()) {
            form.update(|f| f.file.model = ModelField::Config { hf_config: m.config, name: Some(m.name) });
        }
    };

    let imported_name = move || {
        form.with(|f| match &f.file.model {
            ModelField::Config { name, .. } => Some(name.clone().unwrap_or_else(|| "config.json".to_owned())),
            ModelField::Id(_) => None,
        })
    };

    view! {
        <section class="panel" aria-labelledby="model-title">
            <h2 id="model-title">{move || tr(Key::model_title)}</h2>
            <Show when=move || imported_name().is_some()>
                <p class="imported" data-testid="model-imported">
                    {move || fill(tr(Key::model_imported), &[("name", &imported_name().unwrap_or_default())])}
                    " "
                    <button
                        class="link-button"
                        data-testid="model-back-to-catalog"
                        on:click=move |_| form.update(|f| *f = f.clone().with_catalog_model("qwen2.5-7b"))
                    >
                        {move || tr(Key::model_back_to_catalog)}
                    </button>
                </p>
            </Show>
            <label class="field">
                <span>{move || tr(Key::model_search)}</span>
                <input
                    type="search"
                    data-testid="model-search"
                    placeholder=move || tr(Key::model_search_placeholder)
                    prop:value=move || query.get()
                    on:input=move |ev| query.set(event_target_value(&ev))
                />
            </label>
            <label class="field">
                <span class="muted" data-testid="model-count">{count}</span>
                <select
                    data-testid="model-select"
                    size="6"
                    on:change=move |ev| {
                        let id = event_target_value(&ev);
                        form.update(|f| *f = f.clone().with_catalog_model(&id));
                    }
                >
                    {options}
                </select>
            </label>
            <Show when=move || saved.with(|s| !s.is_empty())>
                <label class="field">
                    <span>{move || tr(Key::model_saved)}</span>
                    <select data-testid="saved-model-select" on:change=on_saved>
                        <option value="" selected=true>"—"</option>
                        {saved_options}
                    </select>
                </label>
            </Show>
            <Show when=move || source().is_some()>
                <p class="source" data-testid="model-source">
                    {move || tr(Key::model_source)} ": " {source}
                </p>
            </Show>
            <details class="import">
                <summary>{move || tr(Key::model_import)}</summary>
                {deferred(load_config_import(), move || config_import(form, saved))}
            </details>
        </section>
    }
}

/// [`ConfigImport`] in a module of its own (`deferred`): it is needed only to import a model. The
/// `<details>` that holds it, and its summary line, are the model panel's, drawn at once, so that the
/// form below does not move when the import's module arrives.
#[wasm_split(config_import, fallible, preload(load_config_import))]
fn config_import(
    form: RwSignal<PlanForm>,
    saved: RwSignal<Vec<storage::SavedModel>>,
) -> Result<AnyView, SplitLoaderError> {
    Ok(view! { <ConfigImport form=form saved=saved /> }.into_any())
}

/// Import a model from its config.json, pasted or from a file (the inside of the model panel's
/// folded import); a model read is remembered with the models imported before.
#[component]
fn ConfigImport(
    /// The form state, whose model a config read becomes.
    form: RwSignal<PlanForm>,
    /// The models imported on earlier visits, which a config read joins.
    saved: RwSignal<Vec<storage::SavedModel>>,
) -> impl IntoView {
    let tr = use_tr();
    let lang = use_lang();
    // Import: the pasted text, and why it was refused.
    let pasted = RwSignal::new(String::new());
    let import_error = RwSignal::new(None::<hf::ConfigError>);
    let apply_config = move |text: String| match serde_json::from_str::<serde_json::Value>(&text)
        .map_err(|e| hf::ConfigError::NotJson(e.to_string()))
        .and_then(|value| hf::import_value(&value).map(|_| value))
    {
        Ok(value) => {
            import_error.set(None);
            let name = value.get("_name_or_path").and_then(|v| v.as_str()).map(str::to_owned);
            form.update(|f| {
                f.file.model = ModelField::Config { hf_config: value.clone(), name: name.clone() }
            });
            let name = name.unwrap_or_else(|| "config.json".to_owned());
            storage::remember_model(storage::SavedModel { name, config: value });
            saved.set(storage::saved_models());
        }
        Err(err) => import_error.set(Some(err)),
    };
    let on_file = move |ev: leptos::ev::Event| {
        let Some(input) = ev.target().and_then(|t| t.dyn_into::<web_sys::HtmlInputElement>().ok()) else {
            return;
        };
        spawn_local(async move {
            if let Some(text) = storage::read_chosen_file(&input).await {
                pasted.set(text.clone());
                apply_config(text);
            }
        });
    };
    view! {
            <p class="muted">{move || tr(Key::model_import_hint)}</p>
            <textarea
                data-testid="config-paste"
                aria-label=move || tr(Key::model_import)
                rows="5"
                spellcheck="false"
                prop:value=move || pasted.get()
                on:input=move |ev| pasted.set(event_target_value(&ev))
            ></textarea>
            <div class="row">
                <button data-testid="config-apply" on:click=move |_| apply_config(pasted.get_untracked())>
                    {move || tr(Key::model_import_apply)}
                </button>
                <label class="file">
                    <span class="visually-hidden">{move || tr(Key::model_import_file)}</span>
                    <input type="file" accept=".json,application/json" data-testid="config-file" on:change=on_file />
                </label>
            </div>
            <Show when=move || import_error.with(Option::is_some)>
                <p class="error" role="alert" data-testid="config-error">
                    <strong>{move || tr(Key::model_import_error)}</strong>
                    ": "
                    {move || import_error.with(|e| e.as_ref().map(|e| messages::config_error(lang.get(), e)))}
                </p>
            </Show>
    }
}

#[cfg(test)]
mod tests {
    use super::matches_search;

    #[test]
    fn search_matches_every_word_in_id_or_name() {
        assert!(matches_search("qwen2.5-7b", "Qwen2.5-7B", "qwen 7b"));
        assert!(matches_search("deepseek-v3", "DeepSeek-V3", "DEEPSEEK"));
        assert!(matches_search("llama-3-8b", "Llama-3-8B", ""));
        assert!(!matches_search("llama-3-8b", "Llama-3-8B", "qwen"));
        assert!(!matches_search("qwen2.5-7b", "Qwen2.5-7B", "qwen 70b"));
        // The search folds ASCII case alone: every catalog model is found by its name and its id
        // typed in either case.
        for m in trainplan_core::catalog::models() {
            assert!(m.id.is_ascii() && m.name.is_ascii(), "{}: {}", m.id, m.name);
            for typed in [m.name.to_ascii_uppercase(), m.id.to_ascii_uppercase(), m.name.to_ascii_lowercase()]
            {
                assert!(matches_search(m.id, m.name, &typed), "{typed}");
            }
        }
    }
}
