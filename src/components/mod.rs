//! The page's components, one file each, and what they share: the language context and a labelled
//! number field (the results column's shared state is `results`).

mod advice_panel;
pub mod app;
mod breakdown_chart;
mod chart_canvas;
mod chart_figure;
mod compare_panel;
mod cost_panel;
mod deferred;
mod export_panel;
mod findings_panel;
mod hardware_picker;
mod header;
mod launch_panel;
mod log_calibration;
mod memory_chart;
mod model_picker;
mod param_counts;
mod params_panel;
mod pareto_chart;
mod plan_form;
mod results;
mod search_panel;
mod stage_bars_chart;
mod summary_bar;
mod sweep_panel;
mod time_panel;
mod timeline_chart;

use leptos::prelude::*;

use crate::i18n::{self, Key, Lang};

/// The interface language, provided by [`app::App`] to every component.
#[derive(Clone, Copy)]
pub struct LangCtx(pub RwSignal<Lang>);

/// The current language signal.
pub fn use_lang() -> RwSignal<Lang> {
    expect_context::<LangCtx>().0
}

/// A translator bound to the current language: `tr(Key::params_title)` re-renders when it changes.
pub fn use_tr() -> impl Fn(Key) -> &'static str + Copy + Send + Sync + 'static {
    let lang = use_lang();
    move |key| i18n::t(lang.get(), key)
}

/// A label's text with a soft break after each `_` and `/`, so a key name it quotes
/// (`gpu_memory_utilization`, `prompt_length/mean`) wraps between its words in a narrow column
/// rather than inside one; the text itself (what a screen reader or a copy gets) is unchanged.
pub fn wrappable(text: &str) -> Vec<AnyView> {
    text.split_inclusive(['_', '/'])
        .map(|piece| match piece.ends_with(['_', '/']) {
            true => view! { {piece.to_owned()}<wbr /> }.into_any(),
            false => piece.to_owned().into_any(),
        })
        .collect()
}

/// A labelled text input that shows why its text is refused.
#[component]
pub fn TextField(
    /// The label.
    #[prop(into)]
    label: Signal<String>,
    /// The `data-testid` of the input.
    testid: &'static str,
    /// The text as typed.
    #[prop(into)]
    value: Signal<String>,
    /// Whether the text is refused.
    #[prop(into)]
    invalid: Signal<bool>,
    /// The message shown when refused.
    #[prop(into)]
    message: Signal<String>,
    /// Called with the new text on every keystroke.
    on_input: impl Fn(String) + 'static,
    /// Numeric keyboard on phones.
    #[prop(optional)]
    numeric: bool,
    /// Shown while empty.
    #[prop(optional, into)]
    placeholder: Signal<String>,
) -> impl IntoView {
    view! {
        <label class="field">
            <span>{move || label.with(|l| wrappable(l))}</span>
            <input
                type="text"
                inputmode=if numeric { "decimal" } else { "text" }
                autocomplete="off"
                spellcheck="false"
                data-testid=testid
                placeholder=move || placeholder.get()
                class:invalid=move || invalid.get()
                aria-invalid=move || invalid.get().to_string()
                prop:value=move || value.get()
                on:input=move |ev| on_input(event_target_value(&ev))
            />
            <Show when=move || invalid.get()>
                <span class="field-error" role="alert">{move || message.get()}</span>
            </Show>
        </label>
    }
}
