// Starts the page: imports the wasm-bindgen glue and instantiates the wasm whose hashed names trunk
// wrote onto this script's tag (Trunk.toml `pattern_script`), then registers the service worker.
// A file rather than trunk's inline loader, so the page's Content-Security-Policy needs no hash
// that changes with every build (index.html).
const tag = document.querySelector("script[data-js][data-wasm]");

// The launch-file reader (reader/, src/reader.rs): a second wasm module, loaded the first time a file
// is read; trainplan-bundle writes its hashed names onto the tag (data-reader-js, data-reader-wasm).
// A failed load is forgotten, so the next read tries again.
let reader = null;
globalThis.trainplanReadLaunch = async (text, current) => {
  reader ??= (async () => {
    const glue = await import(tag.dataset.readerJs);
    await glue.default({ module_or_path: tag.dataset.readerWasm });
    return glue;
  })().catch((err) => {
    reader = null;
    throw err;
  });
  return (await reader).read_launch(text, current);
};

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
