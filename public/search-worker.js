// A search worker: runs one part of the page's search off the page's thread (src/search_run.rs
// starts one per core and merges their parts). It loads the page's own wasm-bindgen glue and wasm,
// so there is no second binary: the glue by its address, the wasm from the compiled module the page
// sends (else from its address). The wasm's start function finds no window here and mounts nothing
// (src/main.rs); the bin's `search_part` export does the work and hands back each message for the
// page as JSON text (src/search_parts.rs, `Reply`). A module worker, so that it can import the glue,
// an ES module (https://developer.mozilla.org/en-US/docs/Web/API/Worker/Worker#type). The page stops a
// worker by terminating it, so a part runs in one go.
self.onmessage = async ({ data }) => {
  try {
    const glue = await import(data.js);
    await glue.default({ module_or_path: data.module ?? data.wasm });
    glue.search_part(data.plan, data.part, data.parts, (text) => self.postMessage(text));
  } catch (err) {
    // The page falls back to searching in itself.
    self.postMessage(JSON.stringify({ failed: { message: String(err) } }));
  }
};
