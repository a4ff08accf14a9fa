//! The browser's side of the page's state: the plan in localStorage (the address: `history`), the
//! interface language, the clipboard, a chosen file. Every call tolerates a browser that refuses
//! (private mode, file://, a sandboxed frame, no clipboard permission): the page loses a
//! convenience, never the plan.
//!
//! Storage goes through gloo-storage (JSON values by key) and file reading through gloo-file. gloo's
//! storage throws where the browser refuses storage altogether, so every use first asks
//! [`local`]/[`session`] whether it is there.

use gloo_storage::{LocalStorage, SessionStorage, Storage};
use wasm_bindgen::{JsCast, JsValue};

use trainplan_core::Plan;
use trainplan_core::permalink;

use crate::i18n::Lang;

const LANG_KEY: &str = "trainplan.lang";
const PLAN_KEY: &str = "trainplan.plan";
const MODELS_KEY: &str = "trainplan.models";
const DEVICES_KEY: &str = "trainplan.devices";
const PENDING_KEY: &str = "trainplan.pending-link";

/// How many of the user's own models and devices are kept, newest first.
pub const KEPT: usize = 12;

/// Whether localStorage is there to use: `window.localStorage` throws where the browser refuses it
/// (https://developer.mozilla.org/en-US/docs/Web/API/Window/localStorage#exceptions), and so would
/// gloo's [`LocalStorage`].
fn local() -> bool {
    web_sys::window().is_some_and(|w| matches!(w.local_storage(), Ok(Some(_))))
}

/// Whether sessionStorage is there to use (as [`local`]).
fn session() -> bool {
    web_sys::window().is_some_and(|w| matches!(w.session_storage(), Ok(Some(_))))
}

/// The text stored under `key` as it is (not JSON: the language and the plan predate gloo's
/// JSON values and stay readable as they were written).
fn raw_text(key: &str) -> Option<String> {
    local().then(|| LocalStorage::raw().get_item(key).ok().flatten()).flatten()
}

/// The language to start in: the one last chosen, else the browser's, else English.
pub fn initial_lang() -> Lang {
    let saved = raw_text(LANG_KEY);
    let browser = || web_sys::window().and_then(|w| w.navigator().language());
    match saved.or_else(browser) {
        Some(tag) => Lang::from_tag(&tag),
        None => Lang::En,
    }
}

/// Remembers the chosen language and tells the document, so screen readers and fonts follow it.
pub fn apply_lang(lang: Lang) {
    if local() {
        // A full storage only costs the preference, never the page.
        let _ = LocalStorage::raw().set_item(LANG_KEY, lang.tag());
    }
    let root = web_sys::window().and_then(|w| w.document()).and_then(|d| d.document_element());
    if let Some(root) = root {
        let _ = root.set_attribute("lang", lang.tag());
    }
}

/// The last plan the user had, if one was saved and still reads.
pub fn saved_plan() -> Option<Plan> {
    Plan::from_json(&raw_text(PLAN_KEY)?).ok()
}

/// Saves a (valid) plan as the one to come back to.
pub fn save_plan(plan: &Plan) {
    if local() {
        let _ = LocalStorage::raw().set_item(PLAN_KEY, &permalink::compact_json(&plan.to_file()));
    }
}

/// Notes, for this tab, the link the address was about to get when the page went away before
/// typing paused (the address itself is written then), and when: the reload opens the old address,
/// and [`take_pending_link`] then gives this link instead. In sessionStorage, which a reload keeps and
/// another tab does not see.
pub fn note_pending_link(fragment: &str) {
    if session() {
        let note = PendingLink { at: js_sys::Date::now(), link: fragment.to_owned() };
        let _ = SessionStorage::set(PENDING_KEY, note);
    }
}

/// The link noted by [`note_pending_link`] when it was noted moments ago (a reload right after an
/// edit, before or while the address was written) and differs from the address; `None` otherwise.
/// Either way the note is gone.
pub fn take_pending_link() -> Option<String> {
    /// A note older than this is an edit the address had long caught up with.
    const FRESH_MS: f64 = 3000.0;
    if !session() {
        return None;
    }
    let note = SessionStorage::get::<PendingLink>(PENDING_KEY);
    SessionStorage::delete(PENDING_KEY);
    let PendingLink { at, link } = note.ok()?;
    let fresh = (js_sys::Date::now() - at).abs() < FRESH_MS;
    (fresh && link != crate::history::fragment()).then_some(link)
}

/// The note [`note_pending_link`] leaves: when, in ms since the epoch, and the fragment.
#[derive(serde::Serialize, serde::Deserialize)]
struct PendingLink {
    at: f64,
    link: String,
}

/// A model the user imported: its name and config.json.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SavedModel {
    /// The name shown.
    pub name: String,
    /// The config.json as given.
    pub config: serde_json::Value,
}

fn load_list<T: serde::de::DeserializeOwned>(key: &str) -> Vec<T> {
    // A list that no longer reads (edited by hand, an older format) is skipped, not fatal.
    local().then(|| LocalStorage::get(key).ok()).flatten().unwrap_or_default()
}

/// Puts `item` first in the list under `key`, without repeats, keeping [`KEPT`].
fn remember<T: serde::Serialize + serde::de::DeserializeOwned + PartialEq>(key: &str, item: T) {
    let mut list: Vec<T> = load_list(key);
    if list.first() == Some(&item) {
        return;
    }
    list.retain(|x| x != &item);
    list.insert(0, item);
    list.truncate(KEPT);
    if local() {
        let _ = LocalStorage::set(key, &list);
    }
}

/// The models the user imported, newest first.
pub fn saved_models() -> Vec<SavedModel> {
    load_list(MODELS_KEY)
}

/// Keeps an imported model for later visits.
pub fn remember_model(model: SavedModel) {
    remember(MODELS_KEY, model);
}

/// The devices the user described, newest first.
pub fn saved_devices() -> Vec<trainplan_core::plan::CustomDevice> {
    load_list(DEVICES_KEY)
}

/// Keeps a custom device for later visits.
pub fn remember_device(device: trainplan_core::plan::CustomDevice) {
    remember(DEVICES_KEY, device);
}

/// Keeps the plan's device if it is a custom one.
pub fn remember_device_of(plan: &Plan) {
    if let trainplan_core::plan::HardwareSpec::Custom(device) = &plan.hardware.spec {
        remember_device(device.clone());
    }
}

/// Forgets the saved plan (the user's models and devices stay).
pub fn forget_plan() {
    if local() {
        LocalStorage::delete(PLAN_KEY);
    }
}

/// The page's full address.
pub fn page_url() -> String {
    web_sys::window().and_then(|w| w.location().href().ok()).unwrap_or_default()
}

/// Copies text to the clipboard; `false` when the browser refuses.
pub async fn copy_text(text: &str) -> bool {
    let Some(window) = web_sys::window() else { return false };
    let clipboard = js_sys::Reflect::get(&window.navigator(), &JsValue::from_str("clipboard")).ok();
    let Some(clipboard) = clipboard.filter(|c| !c.is_undefined()) else { return false };
    let write = js_sys::Reflect::get(&clipboard, &JsValue::from_str("writeText")).ok();
    let Some(write) = write.and_then(|f| f.dyn_into::<js_sys::Function>().ok()) else { return false };
    let Ok(promise) = write.call1(&clipboard, &JsValue::from_str(text)) else { return false };
    let Ok(promise) = promise.dyn_into::<js_sys::Promise>() else { return false };
    wasm_bindgen_futures::JsFuture::from(promise).await.is_ok()
}

/// The text of the first file chosen in a file input; `None` when none or unreadable.
pub async fn read_chosen_file(input: &web_sys::HtmlInputElement) -> Option<String> {
    let file = gloo_file::File::from(input.files()?.get(0)?);
    gloo_file::futures::read_as_text(&file).await.ok()
}
