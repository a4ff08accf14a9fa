// Starts the page: imports the wasm-bindgen glue and instantiates the wasm whose hashed names trunk
// wrote onto this script's tag (Trunk.toml `pattern_script`), then registers the service worker.
// A file rather than trunk's inline loader, so the page's Content-Security-Policy needs no hash
// that changes with every build (index.html).
const tag = document.querySelector("script[data-js][data-wasm]");
const { default: init } = await import(tag.dataset.js);
await init({ module_or_path: tag.dataset.wasm });

// Service workers run only in secure contexts over http(s) (http://127.0.0.1 counts as one), never
// from file:// (https://developer.mozilla.org/en-US/docs/Web/API/Service_Worker_API); trainplan.html
// is the copy for opening from disk. The worker precaches the build for offline use (tools/bundle/src/sw.js).
if ((location.protocol === "http:" || location.protocol === "https:") && "serviceWorker" in navigator) {
  navigator.serviceWorker.register(new URL("sw.js", import.meta.url)).catch((err) => {
    console.warn("trainplan: no offline copy:", err);
  });
}
