//! Reading a launch file back into a plan, in the launch-file reader: a wasm module of its own
//! (`reader/`, package trainplan-reader) that the page fetches the first time a file is read, so
//! that the flag tables, the YAML parser and the readers are no part of the page's first download.
//!
//! `public/start.js` defines `trainplanReadLaunch(text, current)` (in `trainplan.html`, the bundle's
//! inline loader does): it loads the module once and gives back its JSON reply, which this module
//! decodes into the core's types.

use trainplan_core::emit::import::Reply;
use trainplan_core::plan::PlanFile;
use wasm_bindgen::{JsCast, JsValue};

/// The global the page's loader defines.
const READ_LAUNCH: &str = "trainplanReadLaunch";

/// Reads `text` against the current plan file in the launch-file reader.
///
/// # Errors
///
/// A message (in English, from the browser or the reader) when the reader could not be loaded or
/// gave no reply: offline before its first use, for instance.
pub async fn read_launch(text: &str, current: &PlanFile) -> Result<Reply, String> {
    // Through a `Value`, whose writer the page holds already: a plan file's own compact writer
    // was a second copy of its serializer in the page's first module (the reader reads either).
    let current = serde_json::to_value(current).map_err(|err| err.to_string())?.to_string();
    let read = js_sys::Reflect::get(&js_sys::global(), &JsValue::from_str(READ_LAUNCH))
        .ok()
        .and_then(|f| f.dyn_into::<js_sys::Function>().ok())
        .ok_or_else(|| format!("{READ_LAUNCH} is not defined"))?;
    let promise = read
        .call2(&JsValue::NULL, &JsValue::from_str(text), &JsValue::from_str(&current))
        .map_err(describe)?;
    let reply =
        wasm_bindgen_futures::JsFuture::from(js_sys::Promise::resolve(&promise)).await.map_err(describe)?;
    let reply = reply.as_string().ok_or_else(|| "the reader gave no text".to_owned())?;
    serde_json::from_str(&reply).map_err(|err| format!("the reader's reply: {err}"))
}

/// A thrown value as text.
fn describe(err: JsValue) -> String {
    err.dyn_ref::<js_sys::Error>()
        .map(|e| String::from(e.message()))
        .or_else(|| err.as_string())
        .unwrap_or_else(|| format!("{err:?}"))
}
