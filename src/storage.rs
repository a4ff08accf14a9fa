//! The browser's side of the page's state: the interface language in localStorage and `<html lang>`.
//! Every call tolerates a browser that refuses storage (private mode, file://, disabled).

use crate::i18n::Lang;

const LANG_KEY: &str = "trainplan.lang";

fn local_storage() -> Option<web_sys::Storage> {
    web_sys::window()?.local_storage().ok().flatten()
}

/// The language to start in: the one last chosen, else the browser's, else English.
pub fn initial_lang() -> Lang {
    let saved = local_storage().and_then(|s| s.get_item(LANG_KEY).ok().flatten());
    let browser = || web_sys::window().and_then(|w| w.navigator().language());
    match saved.or_else(browser) {
        Some(tag) => Lang::from_tag(&tag),
        None => Lang::En,
    }
}

/// Remembers the chosen language and tells the document, so screen readers and fonts follow it.
pub fn apply_lang(lang: Lang) {
    if let Some(storage) = local_storage() {
        // A full or refused storage only costs the preference, never the page.
        let _ = storage.set_item(LANG_KEY, lang.tag());
    }
    let root = web_sys::window().and_then(|w| w.document()).and_then(|d| d.document_element());
    if let Some(root) = root {
        let _ = root.set_attribute("lang", lang.tag());
    }
}
