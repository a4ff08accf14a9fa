//! Helpers for the end-to-end tests: a static server for `dist/`, a chromedriver process, and a
//! page object that reads and drives the page only through `data-testid` selectors.

use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use thirtyfour::LoggingPrefsLogLevel;
use thirtyfour::error::WebDriverErrorInner;
use thirtyfour::prelude::*;

/// The workspace root (the parent of this crate).
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf()
}

/// Where screenshots go: `target/screenshots/`.
pub fn screenshot_dir() -> PathBuf {
    let target =
        std::env::var_os("CARGO_TARGET_DIR").map(PathBuf::from).unwrap_or_else(|| repo_root().join("target"));
    let dir = target.join("screenshots");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Serves `dir` on a free port of 127.0.0.1 from a background thread, for as long as the test runs.
/// Returns the base URL.
pub fn serve_dir(dir: &Path) -> String {
    serve_dir_stoppable(dir).url
}

/// A static server that [`Server::stop`] takes down, as a network gone away would.
pub struct Server {
    /// Its base URL, `http://127.0.0.1:{port}/`.
    pub url: String,
    addr: std::net::SocketAddr,
    stopped: Arc<AtomicBool>,
}

impl Server {
    /// From now on the server answers nothing: the port refuses connections, and a connection the
    /// browser opened before (a preconnect) is closed without an answer.
    pub fn stop(&self) {
        self.stopped.store(true, Ordering::SeqCst);
        // Wakes the accept loop, which then drops the listener.
        let _ = TcpStream::connect(self.addr);
    }
}

/// [`serve_dir`], with a handle that can stop serving.
pub fn serve_dir_stoppable(dir: &Path) -> Server {
    assert!(
        dir.join("index.html").is_file(),
        "{} has no index.html: build the page first (`scripts/test` runs `trunk build --release`)",
        dir.display()
    );
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let dir = dir.to_path_buf();
    let stopped = Arc::new(AtomicBool::new(false));
    let stopped_here = Arc::clone(&stopped);
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            if stopped_here.load(Ordering::SeqCst) {
                break;
            }
            let dir = dir.clone();
            let stopped = Arc::clone(&stopped_here);
            std::thread::spawn(move || {
                // A client that hangs up mid-request costs only its own thread.
                let _ = respond(&dir, stream, &stopped);
            });
        }
    });
    Server { url: format!("http://{addr}/"), addr, stopped }
}

fn respond(dir: &Path, mut stream: TcpStream, stopped: &AtomicBool) -> std::io::Result<()> {
    let mut request_line = String::new();
    let mut reader = BufReader::new(stream.try_clone()?);
    reader.read_line(&mut request_line)?;
    loop {
        let mut header = String::new();
        if reader.read_line(&mut header)? <= 2 {
            break;
        }
    }
    if stopped.load(Ordering::SeqCst) {
        return Ok(());
    }
    let path = request_line.split_whitespace().nth(1).unwrap_or("/");
    let path = path.split(['?', '#']).next().unwrap_or("/");
    let rel = match path.trim_start_matches('/') {
        "" => "index.html",
        rel => rel,
    };
    let file = dir.join(rel);
    let body = match rel.split('/').any(|part| part == "..") {
        true => None,
        false => std::fs::read(&file).ok(),
    };
    let Some(body) = body else {
        return stream.write_all(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
    };
    let content_type = match file.extension().and_then(|e| e.to_str()) {
        Some("html") => "text/html; charset=utf-8",
        Some("js") => "text/javascript",
        Some("wasm") => "application/wasm",
        Some("css") => "text/css",
        Some("json") => "application/json",
        Some("webmanifest") => "application/manifest+json",
        Some("png") => "image/png",
        Some("svg") => "image/svg+xml",
        _ => "application/octet-stream",
    };
    let head = format!(
        "HTTP/1.1 200 OK\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    stream.write_all(head.as_bytes())?;
    stream.write_all(&body)
}

/// A running chromedriver, killed when dropped.
pub struct Chromedriver {
    child: Child,
    /// Its WebDriver URL.
    pub url: String,
}

impl Chromedriver {
    /// Starts `$CHROMEDRIVER` (default: `chromedriver` on PATH) on a free port and waits until it
    /// answers `/status` as ready. A port taken in the meantime (tests run in parallel and each serves
    /// pages on a port of its own) makes chromedriver exit; it is then started again on another port.
    pub fn start() -> Chromedriver {
        let program = std::env::var("CHROMEDRIVER").unwrap_or_else(|_| "chromedriver".to_owned());
        for _ in 0..5 {
            let port = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
            // A process group of its own, which the browsers it starts join: a test that panics
            // before quitting its browser leaves nothing running once this is dropped.
            let mut child = Command::new(&program)
                .process_group(0)
                .arg(format!("--port={port}"))
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .unwrap_or_else(|e| {
                    panic!("cannot start {program} ({e}): `scripts/setup` installs chromium-driver")
                });
            let deadline = Instant::now() + Duration::from_secs(20);
            while Instant::now() < deadline {
                if child.try_wait().ok().flatten().is_some() {
                    break;
                }
                if status_ready(port) {
                    return Chromedriver { child, url: format!("http://127.0.0.1:{port}") };
                }
                std::thread::sleep(Duration::from_millis(50));
            }
            let _ = child.kill();
            let _ = child.wait();
        }
        panic!("{program} did not become ready on any of 5 ports");
    }
}

/// Whether a WebDriver server on `port` answers `GET /status` with `"ready": true`.
fn status_ready(port: u16) -> bool {
    let Ok(mut stream) = TcpStream::connect(("127.0.0.1", port)) else { return false };
    let _ = stream.set_read_timeout(Some(Duration::from_secs(2)));
    let request = format!("GET /status HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n");
    if stream.write_all(request.as_bytes()).is_err() {
        return false;
    }
    let mut response = String::new();
    let _ = std::io::Read::read_to_string(&mut stream, &mut response);
    response.contains("\"ready\":true") || response.contains("\"ready\": true")
}

impl Drop for Chromedriver {
    /// Kills chromedriver and every browser process it started (its process group): a browser left
    /// behind by a failed test would take CPU from the timings of every test after it.
    fn drop(&mut self) {
        let group = format!("-{}", self.child.id());
        let _ = Command::new("kill").args(["-KILL", "--", &group]).status();
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Headless Chromium as root on a machine with no network: no sandbox, no GPU, no background traffic.
pub async fn browser(driver: &Chromedriver, width: u32, height: u32) -> WebDriverResult<WebDriver> {
    browser_downloading_to(driver, width, height, None).await
}

/// [`browser`], saving downloads into `downloads` without asking.
pub async fn browser_downloading_to(
    driver: &Chromedriver,
    width: u32,
    height: u32,
    downloads: Option<&std::path::Path>,
) -> WebDriverResult<WebDriver> {
    let browser = start_browser(driver, width, height, downloads, false).await?;
    if let Some(dir) = downloads {
        // Headless Chromium saves downloads only when told where (DevTools `Browser.setDownloadBehavior`).
        browser
            .cdp()
            .send_raw(
                "Browser.setDownloadBehavior",
                serde_json::json!({"behavior": "allow", "downloadPath": dir.display().to_string()}),
            )
            .await?;
    }
    Ok(browser)
}

/// [`browser`], keeping chromedriver's `performance` log (every request the page makes) and
/// `browser` log (the console) for [`requested_urls`] and [`console_problems`].
pub async fn browser_recording(driver: &Chromedriver, width: u32, height: u32) -> WebDriverResult<WebDriver> {
    start_browser(driver, width, height, None, true).await
}

async fn start_browser(
    driver: &Chromedriver,
    width: u32,
    height: u32,
    downloads: Option<&std::path::Path>,
    recording: bool,
) -> WebDriverResult<WebDriver> {
    let mut caps = DesiredCapabilities::chrome();
    if recording {
        // chromedriver's performance log carries the DevTools Network events of the page
        // (https://developer.chrome.com/docs/chromedriver/logging/performance-log).
        caps.set_logging_prefs("performance", LoggingPrefsLogLevel::All)?;
        caps.set_logging_prefs("browser", LoggingPrefsLogLevel::All)?;
    }
    if let Some(dir) = downloads {
        let prefs = serde_json::json!({
            "download.default_directory": dir.display().to_string(),
            "download.prompt_for_download": false,
            "download.directory_upgrade": true,
        });
        caps.add_experimental_option("prefs", prefs)?;
    }
    // A fresh profile per browser: tests run in parallel and must not share localStorage.
    static N_BROWSERS: AtomicUsize = AtomicUsize::new(0);
    let n = N_BROWSERS.fetch_add(1, Ordering::Relaxed);
    let profile = std::env::temp_dir().join(format!("trainplan-e2e-{}-{n}", std::process::id()));
    let _ = std::fs::remove_dir_all(&profile);
    for arg in [
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--disable-quic",
        "--no-first-run",
        "--lang=en-US",
        &format!("--window-size={width},{height}"),
        &format!("--user-data-dir={}", profile.display()),
    ] {
        caps.add_arg(arg)?;
    }
    // Headless Chromium keeps windows at least 500 px wide; narrower screens are emulated as a phone.
    if width < 500 {
        let metrics =
            serde_json::json!({ "deviceMetrics": { "width": width, "height": height, "pixelRatio": 1.0 } });
        caps.add_experimental_option("mobileEmulation", metrics)?;
    }
    WebDriver::new(&driver.url, caps).await
}

/// The trainplan page, read and driven through its `data-testid`s.
pub struct Page {
    /// The browser session.
    pub driver: WebDriver,
}

impl Page {
    /// The element with `data-testid="{testid}"`, waiting for the wasm to render it.
    pub async fn el(&self, testid: &str) -> WebDriverResult<WebElement> {
        self.driver.query(By::Css(format!("[data-testid='{testid}']"))).first().await
    }

    /// Clicks the element with this test id as a user would: scrolled to the middle of the window
    /// first, clear of the summary bar that stays at its top (chromedriver clicks an element in
    /// view where it is, even under that bar).
    pub async fn click(&self, testid: &str) -> WebDriverResult<()> {
        self.click_el(&self.el(testid).await?).await
    }

    /// Clicks an element, scrolled to the middle of the window first (see [`Page::click`]) and held
    /// there until it has kept its place for two frames: sections below the fold render
    /// (`content-visibility: auto`) as they come into view, and can move the element back under
    /// the summary bar. A click the bar still takes (the page moved
    /// between the check and the click) is tried again, at most three times.
    pub async fn click_el(&self, el: &WebElement) -> WebDriverResult<()> {
        let settle = "const [el, done] = arguments; let last = null, still = 0, frames = 0; \
                      const tick = () => { \
                        const top = el.getBoundingClientRect().top; \
                        still = top === last ? still + 1 : 0; last = top; \
                        if (2 <= still || 60 <= ++frames) { done(); return; } \
                        if (still === 0) el.scrollIntoView({block: 'center'}); \
                        requestAnimationFrame(tick); }; \
                      el.scrollIntoView({block: 'center'}); requestAnimationFrame(tick);";
        let mut tries = 0;
        loop {
            self.driver.execute_async(settle, vec![el.to_json()?]).await?;
            match el.click().await {
                Err(e)
                    if tries < 3
                        && matches!(e.as_inner(), WebDriverErrorInner::ElementClickIntercepted(_)) =>
                {
                    tries += 1;
                }
                done => return done,
            }
        }
    }

    /// The visible text of a test id.
    pub async fn text(&self, testid: &str) -> WebDriverResult<String> {
        self.el(testid).await?.text().await
    }

    /// Replaces the text of an input, as a user selecting it all and typing would.
    pub async fn type_into(&self, testid: &str, text: &str) -> WebDriverResult<()> {
        let input = self.el(testid).await?;
        input.send_keys(Key::Control + "a").await?;
        input.send_keys(Key::Backspace).await?;
        input.send_keys(text).await
    }

    /// Chooses an option of a `<select>` by its value, as a user's click would.
    pub async fn choose(&self, testid: &str, value: &str) -> WebDriverResult<()> {
        let select = self.el(testid).await?;
        let option = select.query(By::Css(format!("option[value='{value}']"))).first().await?;
        option.click().await
    }

    /// The page's address.
    pub async fn url(&self) -> WebDriverResult<String> {
        Ok(self.driver.current_url().await?.to_string())
    }

    /// Waits until the advice has caught up with the plan (it follows a moment after typing pauses,
    /// dimmed and not clickable meanwhile).
    pub async fn settled(&self) -> WebDriverResult<()> {
        for _ in 0..100 {
            if self.driver.find_all(By::Css(".deferred.updating")).await?.is_empty() {
                return Ok(());
            }
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
        Err(WebDriverError::FatalError("the advice never caught up with the plan".to_owned()))
    }

    /// The page's address once it has settled: the page writes the plan there when typing pauses
    /// (a quarter of a second), so this waits until two reads half a second apart agree.
    pub async fn settled_url(&self) -> WebDriverResult<String> {
        let mut last = self.url().await?;
        loop {
            tokio::time::sleep(std::time::Duration::from_millis(500)).await;
            let now = self.url().await?;
            if now == last {
                return Ok(now);
            }
            last = now;
        }
    }

    /// Unfolds every chart's figures ("Chart data"), which the page builds only while unfolded, and
    /// waits until each holds its table.
    pub async fn open_chart_data(&self) -> WebDriverResult<()> {
        let script = "const all = [...document.querySelectorAll('details.chart-data')];
            all.forEach((d) => { d.open = true; });
            return all.length;";
        let n = self.driver.execute(script, vec![]).await?.json().as_u64().unwrap_or(0);
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let built =
                self.driver.find_all(By::Css("details.chart-data[open] > :not(summary)")).await?.len();
            if n as usize <= built || deadline <= Instant::now() {
                return Ok(());
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// Whether an element with this test id is on the page now (no waiting).
    pub async fn has(&self, testid: &str) -> WebDriverResult<bool> {
        Ok(!self.driver.find_all(By::Css(format!("[data-testid='{testid}']"))).await?.is_empty())
    }

    /// Waits until the text of `testid` satisfies `pred` (the page updates asynchronously), and
    /// returns it; an error naming the last text when it never does within 10 s, so a test whose
    /// premise no longer holds fails there rather than at a later assertion.
    pub async fn wait_text(&self, testid: &str, pred: impl Fn(&str) -> bool) -> WebDriverResult<String> {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let text = self.text(testid).await?;
            if pred(&text) {
                return Ok(text);
            }
            if deadline <= Instant::now() {
                return Err(WebDriverError::FatalError(format!(
                    "{testid} never showed the text waited for; it shows {text:?}"
                )));
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// Scrolls the element with this test id to the top of the window.
    pub async fn scroll_to(&self, testid: &str) -> WebDriverResult<()> {
        let el = self.el(testid).await?;
        self.driver.execute("arguments[0].scrollIntoView({block: 'start'});", vec![el.to_json()?]).await?;
        Ok(())
    }

    /// How many workers ran the search the summary shows (its `data-workers`; 0: it ran in the page
    /// itself). Panics if no finished search is shown.
    pub async fn search_workers(&self) -> WebDriverResult<u32> {
        let workers = self.el("search-summary").await?.attr("data-workers").await?;
        Ok(workers.and_then(|w| w.parse().ok()).expect("a finished search says where it ran"))
    }

    /// Saves a PNG screenshot as `target/screenshots/{name}.png` and returns its path.
    /// Taken three animation frames after the call, so that a chart just scrolled near is drawn
    /// as the reader sees it: it is drawn in the frame after the browser reports it near
    /// (`chart_canvas::on_screen`), and until then keeps its last picture (the page's language
    /// before a switch, say).
    pub async fn screenshot(&self, name: &str) -> WebDriverResult<PathBuf> {
        let frames = "const done = arguments[arguments.length - 1]; let n = 0; \
                      const tick = () => (++n < 3 ? requestAnimationFrame(tick) : done()); \
                      requestAnimationFrame(tick);";
        self.driver.execute_async(frames, vec![]).await?;
        let path = screenshot_dir().join(format!("{name}.png"));
        self.driver.screenshot(&path).await?;
        Ok(path)
    }
}

/// The URL of every request the page made since the last call (chromedriver's `performance` log,
/// which [`browser_recording`] keeps): DevTools `Network.requestWillBeSent` and `Network.webSocketCreated`
/// events (https://chromedevtools.github.io/devtools-protocol/tot/Network/). Reading drains the log.
/// Left out: requests of the browser's own `chrome://` new-tab page, open before the test navigates.
pub async fn requested_urls(driver: &WebDriver) -> WebDriverResult<Vec<String>> {
    let mut res = Vec::new();
    for entry in driver.get_log("performance").await? {
        let Ok(event) = serde_json::from_str::<serde_json::Value>(&entry.message) else { continue };
        let message = &event["message"];
        let params = &message["params"];
        if params["documentURL"].as_str().is_some_and(|doc| doc.starts_with("chrome://")) {
            continue;
        }
        let url = match message["method"].as_str() {
            Some("Network.requestWillBeSent") => &params["request"]["url"],
            Some("Network.webSocketCreated") => &params["url"],
            _ => continue,
        };
        if let Some(url) = url.as_str() {
            res.push(url.to_owned());
        }
    }
    Ok(res)
}

/// Console entries since the last call (chromedriver's `browser` log, which [`browser_recording`]
/// keeps) that are errors or that name the Content-Security-Policy. Reading drains the log.
pub async fn console_problems(driver: &WebDriver) -> WebDriverResult<Vec<String>> {
    Ok(driver
        .get_log("browser")
        .await?
        .into_iter()
        .filter(|entry| entry.level == "SEVERE" || entry.message.contains("Content Security Policy"))
        .map(|entry| format!("{} {}", entry.level, entry.message))
        .collect())
}

/// Waits until a service worker controls the page (`navigator.serviceWorker.controller`), for at most 30 s.
pub async fn wait_for_service_worker(driver: &WebDriver) -> WebDriverResult<bool> {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let script = "return !!(navigator.serviceWorker && navigator.serviceWorker.controller);";
        if driver.execute(script, vec![]).await?.json().as_bool() == Some(true) {
            return Ok(true);
        }
        if deadline <= Instant::now() {
            return Ok(false);
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}
