//! The browser's history as the page's undo and redo: each settled edit is a new entry whose address
//! holds the plan (`history.pushState`), and Back or Forward brings the plan of that entry back
//! (`popstate`) without leaving the page. Straight `web_sys::History` calls: the page needs two of
//! them and one event, which gloo-history would wrap at a cost in wasm.

use wasm_bindgen::JsValue;

/// The address's fragment without `#`; empty when there is none.
pub fn fragment() -> String {
    let hash = web_sys::window().and_then(|w| w.location().hash().ok()).unwrap_or_default();
    hash.trim_start_matches('#').to_owned()
}

/// How a new fragment reaches the address.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Entry {
    /// The current entry's address changes (the page opening, a link noted before a reload).
    Replace,
    /// A new entry, so Back returns to the one before (an edit).
    Push,
}

/// What [`write`] does with `next` when the address holds `current`: nothing when they are the same
/// (a plan brought back by Back is already in the address), else `entry`.
pub fn action(current: &str, next: &str, entry: Entry) -> Option<Entry> {
    (current != next).then_some(entry)
}

/// Puts `fragment` in the address as `entry` says, without firing `hashchange`; nothing when the
/// address already holds it. A browser that refuses (a `file://` page in some browsers) keeps its
/// address: the page loses the undo, never the plan.
pub fn write(fragment: &str, entry: Entry) {
    let Some(window) = web_sys::window() else { return };
    let Ok(history) = window.history() else { return };
    let url = format!("#{fragment}");
    let _ = match action(&self::fragment(), fragment, entry) {
        None => return,
        Some(Entry::Replace) => history.replace_state_with_url(&JsValue::NULL, "", Some(&url)),
        Some(Entry::Push) => history.push_state_with_url(&JsValue::NULL, "", Some(&url)),
    };
}

/// Goes one entry forward (`history.forward()`), as the browser's Forward button does.
pub fn forward() {
    if let Some(history) = web_sys::window().and_then(|w| w.history().ok()) {
        let _ = history.forward();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_address_that_already_holds_the_plan_gets_no_entry() {
        assert_eq!(action("v1=abc", "v1=abc", Entry::Push), None);
        assert_eq!(action("v1=abc", "v1=abd", Entry::Push), Some(Entry::Push));
        assert_eq!(action("", "v1=abc", Entry::Replace), Some(Entry::Replace));
    }
}
