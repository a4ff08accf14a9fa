//! The wasm entry point: mounts the page, and says so on screen if the page ever stops.

fn main() {
    std::panic::set_hook(Box::new(|info| {
        console_error_panic_hook::hook(info);
        say_the_page_stopped();
    }));
    leptos::mount::mount_to_body(trainplan::App);
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
