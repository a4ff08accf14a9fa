//! The page's components, one file each, and the context they share.

pub mod app;
mod header;
mod params_panel;
mod plan_form;

use leptos::prelude::*;

use crate::i18n::{self, Key, Lang};

/// The interface language, provided by [`app::App`] to every component.
#[derive(Clone, Copy)]
pub struct LangCtx(pub RwSignal<Lang>);

/// A translator bound to the current language: `tr(Key::params_title)` re-renders when it changes.
pub fn use_tr() -> impl Fn(Key) -> &'static str + Copy + Send + Sync + 'static {
    let LangCtx(lang) = expect_context::<LangCtx>();
    move |key| i18n::t(lang.get(), key)
}
