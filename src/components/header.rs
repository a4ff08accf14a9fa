//! The header: product name, what it is for, the link to the plan, and the language switch.

use leptos::prelude::*;
use leptos::task::spawn_local;

use crate::components::{use_lang, use_tr};
use crate::i18n::Key;
use crate::storage;

/// What the copy button last did.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Copied {
    Not,
    Yes,
    Refused,
}

/// The page header.
#[component]
pub fn Header(
    /// Puts the first visit's plan back.
    on_reset: impl Fn() + Copy + Send + Sync + 'static,
) -> impl IntoView {
    let lang = use_lang();
    let tr = use_tr();
    let copied = RwSignal::new(Copied::Not);
    let copy = move |_| {
        spawn_local(async move {
            let ok = storage::copy_text(&storage::page_url()).await;
            copied.set(if ok { Copied::Yes } else { Copied::Refused });
        });
    };
    let copy_label = move || match copied.get() {
        Copied::Not => tr(Key::header_copy_link),
        Copied::Yes => tr(Key::header_copied),
        Copied::Refused => tr(Key::header_copy_failed),
    };
    view! {
        <header class="header">
            <div class="brand">
                <h1 data-testid="app-title">{move || tr(Key::app_title)}</h1>
                <p class="tagline" data-testid="app-tagline">{move || tr(Key::app_tagline)}</p>
            </div>
            <div class="header-actions">
                <button class="header-button" data-testid="copy-link" on:click=copy aria-live="polite">
                    {copy_label}
                </button>
                <button
                    class="header-button"
                    data-testid="reset"
                    title=move || tr(Key::header_reset_title)
                    on:click=move |_| {
                        storage::forget_plan();
                        on_reset();
                    }
                >
                    {move || tr(Key::header_reset)}
                </button>
                <button
                    class="header-button"
                    data-testid="lang-switch"
                    aria-label=move || tr(Key::header_switch_label)
                    on:click=move |_| lang.update(|l| *l = l.other())
                >
                    {move || tr(Key::header_switch_to)}
                </button>
            </div>
        </header>
    }
}
