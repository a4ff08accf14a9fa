// A search worker: runs parts of the page's search off the page's thread (src/search_run.rs keeps
// one per core, started ahead of the first search, and merges their parts). It loads the page's own
// wasm-bindgen glue and wasm, so there is no second binary: the glue by its address, the wasm from
// the compiled module the page sends (else from its address). The wasm's start function finds no
// window here and mounts nothing (src/main.rs); the bin's `search_part` export does the work and
// hands back each message for the page as JSON text (src/search_parts.rs, `Reply`). The search's
// code is a part of the wasm of its own, which `search_part` fetches the first time (its promise
// fails if the part does not load, and the page then searches in itself). A module worker,
// so that it can import the glue, an ES module
// (https://developer.mozilla.org/en-US/docs/Web/API/Worker/Worker#type).
//
// Messages: the first carries the glue's and the wasm's addresses and the module, and loads them
// (a warm-up, if it has no plan); any with a plan runs that part once they are loaded. A warm-up may
// bring a plan to search once, the worker's part of it (`warmPart` of `warmParts`), its results
// unsent, so that the engine's code is compiled to speed before the first real search (the browser
// first runs wasm from a quick baseline compile). The
// page stops a part by terminating the worker, so a part runs in one go.
let loaded = null;
self.onmessage = async ({ data }) => {
  try {
    loaded ??= (async () => {
      const glue = await import(data.js);
      await glue.default({ module_or_path: data.module ?? data.wasm });
      if (data.warm !== undefined) {
        await glue.search_part(data.warm, data.warmPart ?? 0, data.warmParts ?? 1, () => {});
      }
      return glue;
    })();
    const glue = await loaded;
    if (data.plan !== undefined) {
      await glue.search_part(data.plan, data.part, data.parts, (text) => self.postMessage(text));
    }
  } catch (err) {
    // The page falls back to searching in itself.
    self.postMessage(JSON.stringify({ failed: { message: String(err) } }));
  }
};
