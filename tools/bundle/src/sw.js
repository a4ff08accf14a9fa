// trainplan's service worker: after the first visit the page opens with no network.
// Written into dist/ by trainplan-bundle (Trunk.toml post_build hook) from tools/bundle/src/sw.js,
// which fills VERSION and PRECACHE from the files of the build; dist/sw.js is never edited by hand.
//
// Every file of the build is cached at install and served from the cache first. The file names
// carry trunk's content hashes, and VERSION hashes every file, so a new build is a new sw.js, which
// the browser installs as a new worker with a new cache (https://w3c.github.io/ServiceWorker/#update-algorithm);
// the old cache is deleted when the new worker activates. trainplan.html is not cached: it is the
// copy for opening from disk, where no service worker runs.

const VERSION = "{{VERSION}}";
const CACHE = `trainplan-${VERSION}`;
// Relative to this script, so the page works under any base path. "./" is the page itself.
const PRECACHE = [/* {{PRECACHE}} */];

self.addEventListener("install", (event) => {
  event.waitUntil(
    caches
      .open(CACHE)
      // "reload" skips the HTTP cache, so a stale copy of index.html never lands in a new cache
      // (https://developer.mozilla.org/en-US/docs/Web/API/Request/cache).
      .then((cache) => cache.addAll(PRECACHE.map((url) => new Request(url, { cache: "reload" }))))
      // The new worker takes over at once instead of waiting for every tab to close.
      .then(() => self.skipWaiting()),
  );
});

self.addEventListener("activate", (event) => {
  event.waitUntil(
    caches
      .keys()
      .then((keys) => Promise.all(keys.filter((key) => key.startsWith("trainplan-") && key !== CACHE).map((key) => caches.delete(key))))
      // Controls the page that registered it, so the first visit is already offline-ready
      // (https://developer.mozilla.org/en-US/docs/Web/API/Clients/claim).
      .then(() => self.clients.claim()),
  );
});

self.addEventListener("fetch", (event) => {
  const request = event.request;
  if (request.method !== "GET" || new URL(request.url).origin !== self.location.origin) {
    return;
  }
  event.respondWith(
    caches.open(CACHE).then(async (cache) => {
      // A navigation may carry a query; the permalink is in the fragment, which is never sent.
      const hit = await cache.match(request, { ignoreSearch: request.mode === "navigate" });
      return hit ?? fetch(request);
    }),
  );
});
