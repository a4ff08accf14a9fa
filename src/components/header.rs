//! The header: product name, what it is for, and the language switch.

use leptos::prelude::*;

use crate::components::{LangCtx, use_tr};
use crate::i18n::Key;

/// The page header.
#[component]
pub fn Header() -> impl IntoView {
    let LangCtx(lang) = expect_context::<LangCtx>();
    let tr = use_tr();
    view! {
        <header class="header">
            <div class="brand">
                <h1 data-testid="app-title">{move || tr(Key::app_title)}</h1>
                <p class="tagline" data-testid="app-tagline">{move || tr(Key::app_tagline)}</p>
            </div>
            <button
                class="lang-switch"
                data-testid="lang-switch"
                aria-label=move || tr(Key::header_switch_label)
                on:click=move |_| lang.update(|l| *l = l.other())
            >
                {move || tr(Key::header_switch_to)}
            </button>
        </header>
    }
}
