//! The browser's side of the page's state: the plan in localStorage (the address: `history`), the
//! interface language, the clipboard. Every call tolerates a browser that refuses (private mode,
//! file://, no clipboard permission): the page loses a convenience, never the plan.

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

/// The last plan the user had, if one was saved and still reads.
pub fn saved_plan() -> Option<Plan> {
    let text = local_storage()?.get_item(PLAN_KEY).ok()??;
    Plan::from_json(&text).ok()
}

/// Saves a (valid) plan as the one to come back to.
pub fn save_plan(plan: &Plan) {
    if let Some(storage) = local_storage() {
        let _ = storage.set_item(PLAN_KEY, &permalink::compact_json(&plan.to_file()));
    }
}

/// Notes at once, for this tab, the link the address is about to get (the address itself is written
/// once typing pauses), and when: a reload in between opens the old address, and
/// [`take_pending_link`] then gives this link instead. In sessionStorage, which a reload keeps and
/// another tab does not see.
pub fn note_pending_link(fragment: &str) {
    if let Some(storage) = web_sys::window().and_then(|w| w.session_storage().ok().flatten()) {
        let note = serde_json::json!({ "at": js_sys::Date::now(), "link": fragment });
        let _ = storage.set_item(PENDING_KEY, &note.to_string());
    }
}

/// The link noted by [`note_pending_link`] when it was noted moments ago (a reload right after an
/// edit, before or while the address was written) and differs from the address; `None` otherwise.
/// Either way the note is gone.
pub fn take_pending_link() -> Option<String> {
    /// A note older than this is an edit the address had long caught up with.
    const FRESH_MS: f64 = 3000.0;
    let storage = web_sys::window()?.session_storage().ok()??;
    let text = storage.get_item(PENDING_KEY).ok()??;
    let _ = storage.remove_item(PENDING_KEY);
    let note: serde_json::Value = serde_json::from_str(&text).ok()?;
    let fresh = (js_sys::Date::now() - note["at"].as_f64()?).abs() < FRESH_MS;
    let link = note["link"].as_str()?;
    (fresh && link != crate::history::fragment()).then(|| link.to_owned())
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
    let text = local_storage().and_then(|s| s.get_item(key).ok().flatten());
    // A list that no longer reads (edited by hand, an older format) is skipped, not fatal.
    text.and_then(|t| serde_json::from_str(&t).ok()).unwrap_or_default()
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
    if let (Some(storage), Ok(text)) = (local_storage(), serde_json::to_string(&list)) {
        let _ = storage.set_item(key, &text);
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
    if let Some(storage) = local_storage() {
        let _ = storage.remove_item(PLAN_KEY);
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
    let file = input.files()?.get(0)?;
    let text = wasm_bindgen_futures::JsFuture::from(file.text()).await.ok()?;
    text.as_string()
}
