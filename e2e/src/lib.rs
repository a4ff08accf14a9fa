//! Helpers for the end-to-end tests: a static server for `dist/`, a chromedriver process, and a
//! page object that reads and drives the page only through `data-testid` selectors.

use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

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
    assert!(
        dir.join("index.html").is_file(),
        "{} has no index.html: build the page first (`scripts/test` runs `trunk build --release`)",
        dir.display()
    );
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let dir = dir.to_path_buf();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let dir = dir.clone();
            std::thread::spawn(move || {
                // A client that hangs up mid-request costs only its own thread.
                let _ = respond(&dir, stream);
            });
        }
    });
    format!("http://{addr}/")
}

fn respond(dir: &Path, mut stream: TcpStream) -> std::io::Result<()> {
    let mut request_line = String::new();
    let mut reader = BufReader::new(stream.try_clone()?);
    reader.read_line(&mut request_line)?;
    loop {
        let mut header = String::new();
        if reader.read_line(&mut header)? <= 2 {
            break;
        }
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
            let mut child = Command::new(&program)
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
    fn drop(&mut self) {
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
    let mut caps = DesiredCapabilities::chrome();
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

    /// Whether an element with this test id is on the page now (no waiting).
    pub async fn has(&self, testid: &str) -> WebDriverResult<bool> {
        Ok(!self.driver.find_all(By::Css(format!("[data-testid='{testid}']"))).await?.is_empty())
    }

    /// Waits until the text of `testid` satisfies `pred` (the page updates asynchronously), and returns it.
    pub async fn wait_text(&self, testid: &str, pred: impl Fn(&str) -> bool) -> WebDriverResult<String> {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let text = self.text(testid).await?;
            if pred(&text) || deadline <= Instant::now() {
                return Ok(text);
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

    /// Saves a PNG screenshot as `target/screenshots/{name}.png` and returns its path.
    pub async fn screenshot(&self, name: &str) -> WebDriverResult<PathBuf> {
        let path = screenshot_dir().join(format!("{name}.png"));
        self.driver.screenshot(&path).await?;
        Ok(path)
    }
}
