//! The wasm entry point: mounts the page, and says so on screen if the page ever stops. The same
//! module runs in the page's search workers (public/search-worker.js), which call [`search_part`]
//! and mount nothing.

use wasm_bindgen::prelude::{JsValue, wasm_bindgen};
use wasm_split_helpers::{SplitLoaderError, wasm_split};

fn main() {
    // A search worker has no window (its global is a DedicatedWorkerGlobalScope): nothing to mount,
    // and no page to tell of a panic; the console still hears of it.
    if web_sys::window().is_none() {
        console_error_panic_hook::set_once();
        return;
    }
    std::panic::set_hook(Box::new(|info| {
        console_error_panic_hook::hook(info);
        say_the_page_stopped();
    }));
    leptos::mount::mount_to_body(trainplan::App);
}

/// A search worker's whole job: runs part `part` of `parts` of the search from `plan` (its JSON text)
/// and hands `post` each message for the page as JSON text: progress as it goes, then the part's
/// result (`trainplan::search_parts::Reply`). Exported from this bin, so the worker loads the page's
/// own wasm rather than a second one; the search itself is a part of that wasm of its own
/// ([`search_in_part`]), fetched by the workers alone, so the page's first module does not carry
/// it. The promise fails when that part does not load, and the page then searches in itself.
#[wasm_bindgen]
pub async fn search_part(plan: String, part: u32, parts: u32, post: js_sys::Function) -> Result<(), JsValue> {
    search_in_part(&plan, part, parts, &post).await.map_err(|err| JsValue::from_str(&err.to_string()))
}

/// [`search_part`]'s work, in the module of its own that a worker loads on its first search (a
/// split point: docs/DESIGN.md, "The search workers' part").
#[wasm_split(search_worker, fallible)]
fn search_in_part(
    plan: &str,
    part: u32,
    parts: u32,
    post: &js_sys::Function,
) -> Result<(), SplitLoaderError> {
    trainplan::search_parts::run_part(plan, part, parts, js_sys::Date::now, |text| {
        // The worker relays it with postMessage; a page gone away is nothing to report.
        let _ = post.call1(&JsValue::NULL, &JsValue::from_str(&text));
    });
    Ok(())
}

/// After a panic the wasm module is gone and the page no longer reacts: tell the user, in the page's
/// language, that the last valid plan is safe (it is saved only when valid) and a reload brings it back.
fn say_the_page_stopped() {
    let Some(document) = web_sys::window().and_then(|w| w.document()) else { return };
    let zh = document
        .document_element()
        .and_then(|e| e.get_attribute("lang"))
        .is_some_and(|l| l.starts_with("zh"));
    let text = match zh {
        true => "页面出错停止了。最后一个有效方案已保存：刷新页面即可继续。",
        false => "The page hit an error and stopped. Your last valid plan is saved: reload to continue.",
    };
    let Ok(banner) = document.create_element("div") else { return };
    banner.set_class_name("banner crashed");
    let _ = banner.set_attribute("role", "alert");
    let _ = banner.set_attribute("data-testid", "crashed");
    banner.set_text_content(Some(text));
    if let Some(body) = document.body() {
        let _ = body.prepend_with_node_1(&banner);
    }
}
