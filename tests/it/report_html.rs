//! The HTML report, checked as a reader gets it.
//!
//! - Snapshots (insta, `tests/it/snapshots/`): the report rendered from fixed evidence files
//!   (real runs, checked in under `tests/fixtures/evidence/`). A change is reviewed with
//!   `cargo insta review` (or `INSTA_UPDATE=always` and `git diff tests/it/snapshots`), and by
//!   opening the page in a browser. The summaries of the same files are in `rendered`.
//! - Self-contained: nothing in the page loads anything (no script, stylesheet, font, image,
//!   frame), statically; and in headless Chromium, served from a loopback server that every
//!   host name resolves to, the page makes no request but its own.
//! - In Chromium, the stale-handle experiment shows two lease bars, the window and the stale
//!   delete, and the failing case its finding, each laid out with a size (a probe script is
//!   added to a copy of the page to measure them; the page itself has no script).
//! - A whole-suite report (the shipped suites, 150 cases and more) stays under 5 MB; how long
//!   it takes to render and to load in Chromium is printed as a measurement.
//!
//! Chromium is Debian's `chromium` (or `SQSPROBE_CHROMIUM`). Without it the browser checks are
//! skipped with a message, unless `SQSPROBE_REQUIRE_CHROMIUM` is set (as `.ci/run` sets it).

use crate::common;

use common::{root, run_bin, single_run_dir, wait_bounded};
use sqsprobe_core::evidence::format::Record;
use sqsprobe_core::evidence::read_evidence;
use std::io::{Read, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const STALE: &str = "stale-handle-delete-while-b-holds-lease";
const FAILING: &str = "wrong-expectation";

fn evidence(name: &str) -> Vec<Record> {
    let path = root().join("tests/fixtures/evidence").join(name);
    read_evidence(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn the_playbook_report_matches_its_snapshot() {
    let records = evidence("playbook.jsonl");
    insta::assert_snapshot!("playbook_html", sqsprobe::report::html::render(&records));
}

#[test]
fn the_trials_report_matches_its_snapshot() {
    let records = evidence("trials.jsonl");
    insta::assert_snapshot!("trials_html", sqsprobe::report::html::render(&records));
}

/// What in a page would make a browser fetch something.
fn loads(html: &str) -> Vec<String> {
    let lower = html.to_ascii_lowercase();
    let mut found: Vec<String> = [
        "<script",
        "<link",
        "<iframe",
        "<object",
        "<embed",
        "<img",
        "<audio",
        "<video",
        "<source",
        "@import",
        "@font-face",
        " src=",
        "srcset=",
        "<base",
        "http-equiv",
    ]
    .iter()
    .filter(|needle| lower.contains(*needle))
    .map(|needle| needle.to_string())
    .collect();
    // url() in CSS or SVG may only point inside the page (the sleep hatching, url(#...)).
    for (i, _) in lower.match_indices("url(") {
        if !lower[i + 4..].starts_with('#') {
            found.push(lower[i..(i + 40).min(lower.len())].to_string());
        }
    }
    // xlink:href / href on anything but a link the reader follows is a load.
    for (i, _) in lower.match_indices("href=") {
        let before = &lower[..i];
        let tag = &before[before.rfind('<').unwrap_or(0)..];
        if !tag.starts_with("<a ") {
            found
                .push(lower[before.rfind('<').unwrap_or(0)..(i + 40).min(lower.len())].to_string());
        }
    }
    found
}

#[test]
fn the_page_loads_nothing_from_anywhere() {
    for name in ["playbook.jsonl", "trials.jsonl"] {
        let html = sqsprobe::report::html::render(&evidence(name));
        assert_eq!(loads(&html), Vec::<String>::new(), "{name}");
    }
    assert!(!loads("<img src=x>").is_empty(), "the check can fail");
    assert!(!loads("<style>a{background:url(http://x)}</style>").is_empty());
    assert!(!loads("<svg><use href=\"http://x#a\"/></svg>").is_empty());
}

/// Headless Chromium, or `None` (with a message) when it is not installed and not required.
fn chromium() -> Option<PathBuf> {
    let candidates = std::env::var_os("SQSPROBE_CHROMIUM")
        .map(PathBuf::from)
        .into_iter()
        .chain(["chromium", "chromium-browser", "google-chrome"].map(PathBuf::from));
    for c in candidates {
        let works = Command::new(&c)
            .arg("--version")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        if works {
            return Some(c);
        }
    }
    assert!(
        std::env::var_os("SQSPROBE_REQUIRE_CHROMIUM").is_none(),
        "SQSPROBE_REQUIRE_CHROMIUM is set but no chromium was found (apt-get install chromium)"
    );
    eprintln!(
        "skipped: headless Chromium not found (install Debian's `chromium`, or set \
         SQSPROBE_CHROMIUM); .ci/run installs it"
    );
    None
}

/// Runs Chromium headless on `url` with `--dump-dom`, every host name resolved to `port`.
fn dump_dom(browser: &Path, url: &str, port: u16) -> String {
    let profile = tempfile::tempdir().unwrap();
    let child = Command::new(browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-dev-shm-usage",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-default-apps",
            "--disable-extensions",
            "--disable-sync",
            "--no-first-run",
            "--no-default-browser-check",
            "--window-size=1100,900",
            &format!("--host-resolver-rules=MAP * 127.0.0.1:{port}"),
            &format!("--user-data-dir={}", profile.path().display()),
            "--dump-dom",
            url,
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start chromium");
    let done = wait_bounded(child, Duration::from_secs(120));
    assert!(done.status.success(), "chromium failed: {}", done.stderr);
    done.stdout
}

/// Hosts Chromium itself talks to whatever the page (component updates, sign-in, network
/// time): contacted for a blank page too, so not the page's doing.
const BROWSER_SERVICES: [&str; 6] = [
    "update.googleapis.com",
    "accounts.google.com",
    "clients2.google.com",
    "clientservices.googleapis.com",
    "optimizationguide-pa.googleapis.com",
    "redirector.gvt1.com",
];

/// One connection the browser made: the host it meant (`Host:` or the TLS server name) and
/// its first line.
#[derive(Debug, Clone)]
struct Seen {
    host: String,
    line: String,
}

/// A loopback server that every host name resolves to (`dump_dom`'s resolver rule): serves
/// its pages and records every connection that says something.
struct PageServer {
    port: u16,
    seen: Arc<Mutex<Vec<Seen>>>,
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

/// The server name of a TLS ClientHello (its SNI extension), if it has one.
fn tls_server_name(hello: &[u8]) -> Option<String> {
    // Record header 5, handshake header 4, version 2, random 32; then session id, cipher
    // suites, compression methods, and the extensions' length.
    let mut i = 43;
    i += 1 + usize::from(*hello.get(i)?);
    i += 2 + usize::from(u16::from_be_bytes([*hello.get(i)?, *hello.get(i + 1)?]));
    i += 1 + usize::from(*hello.get(i)?);
    i += 2;
    while i + 4 <= hello.len() {
        let kind = u16::from_be_bytes([hello[i], hello[i + 1]]);
        let len = usize::from(u16::from_be_bytes([hello[i + 2], hello[i + 3]]));
        if kind == 0 {
            let name = hello.get(i + 9..i + 4 + len)?;
            return Some(String::from_utf8_lossy(name).to_string());
        }
        i += 4 + len;
    }
    None
}

impl PageServer {
    fn start(pages: Vec<(&'static str, String)>) -> PageServer {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let (log, halt) = (seen.clone(), stop.clone());
        let thread = std::thread::spawn(move || {
            // Blocking accepts; `finish` wakes the last one with a connection of its own.
            for conn in listener.incoming() {
                if halt.load(Ordering::SeqCst) {
                    break;
                }
                let Ok(mut conn) = conn else { continue };
                conn.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
                let mut buf = [0u8; 4096];
                // A connection opened speculatively and never used says nothing.
                let Ok(n) = conn.read(&mut buf) else { continue };
                if n == 0 {
                    continue;
                }
                let data = &buf[..n];
                if data[0] == 0x16 {
                    let host = tls_server_name(data).unwrap_or_else(|| "(no server name)".into());
                    let line = format!("TLS to {host}");
                    log.lock().unwrap().push(Seen { host, line });
                    continue;
                }
                let head = String::from_utf8_lossy(data);
                let line = head.lines().next().unwrap_or("").to_string();
                let host = head
                    .lines()
                    .find_map(|l| l.strip_prefix("Host: ").or(l.strip_prefix("host: ")))
                    .unwrap_or("")
                    .to_string();
                let page = pages
                    .iter()
                    .find(|(name, _)| line.starts_with(&format!("GET /{name} ")));
                let _ = match page {
                    Some((_, body)) => write!(
                        conn,
                        "HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\n\
                         Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
                        body.len()
                    ),
                    None => conn.write_all(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n"),
                };
                log.lock().unwrap().push(Seen { host, line });
            }
        });
        PageServer {
            port,
            seen,
            stop,
            thread: Some(thread),
        }
    }

    fn url(&self, name: &str) -> String {
        format!("http://127.0.0.1:{}/{name}", self.port)
    }

    fn take(&self) -> Vec<Seen> {
        std::mem::take(&mut *self.seen.lock().unwrap())
    }

    fn finish(mut self) -> Vec<Seen> {
        self.stop.store(true, Ordering::SeqCst);
        let _ = std::net::TcpStream::connect(("127.0.0.1", self.port));
        if let Some(t) = self.thread.take() {
            t.join().unwrap();
        }
        self.take()
    }
}

/// Loads `page` in Chromium from the loopback server and returns the dumped DOM and every
/// request the page made of its own: any request to its own origin but the page and the tab
/// icon, and any connection to a host Chromium does not also contact for a blank page.
fn load(browser: &Path, page: &str) -> (String, Vec<String>) {
    let server = PageServer::start(vec![
        (
            "blank.html",
            "<!DOCTYPE html><title>blank</title>".to_string(),
        ),
        ("report.html", page.to_string()),
    ]);
    let _ = dump_dom(browser, &server.url("blank.html"), server.port);
    let baseline: Vec<String> = server.take().into_iter().map(|s| s.host).collect();
    let dom = dump_dom(browser, &server.url("report.html"), server.port);
    let own = format!("127.0.0.1:{}", server.port);
    let requests = server
        .finish()
        .into_iter()
        .filter(|s| {
            if s.host == own {
                !(s.line.starts_with("GET /report.html ")
                    || s.line.starts_with("GET /favicon.ico "))
            } else {
                !baseline.contains(&s.host) && !BROWSER_SERVICES.contains(&s.host.as_str())
            }
        })
        .map(|s| format!("{} ({:.80})", s.host, s.line))
        .collect();
    (dom, requests)
}

/// Measures, in the browser, the marks of the two cases the issue names, and writes them as
/// JSON into `<pre id="probe">`.
const PROBE: &str = r#"<script>
(function () {
  var out = {};
  ["STALE", "FAILING"].forEach(function (id) {
    var body = document.getElementById("case-" + id);
    if (!body) { out[id] = null; return; }
    body.closest("details").open = true;
    var marks = {};
    body.querySelectorAll("svg.timeline [data-kind]").forEach(function (g) {
      var r = g.getBoundingClientRect();
      var k = g.getAttribute("data-kind");
      (marks[k] = marks[k] || []).push({
        w: r.width, h: r.height, cls: g.getAttribute("class") || "",
        action: g.getAttribute("data-action") || "", ack: g.getAttribute("data-ack") || "",
        ended: g.getAttribute("data-ended") || ""
      });
    });
    out[id] = marks;
  });
  var pre = document.createElement("pre");
  pre.id = "probe";
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
})();
</script>"#;

fn probe_result(dom: &str) -> serde_json::Value {
    let start = dom.find("<pre id=\"probe\">").expect("the probe ran") + "<pre id=\"probe\">".len();
    let end = start + dom[start..].find("</pre>").unwrap();
    let text = dom[start..end]
        .replace("&quot;", "\"")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&");
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text}"))
}

fn laid_out(marks: &serde_json::Value, kind: &str) -> Vec<serde_json::Value> {
    marks[kind]
        .as_array()
        .cloned()
        .unwrap_or_default()
        .into_iter()
        .filter(|m| m["w"].as_f64().unwrap_or(0.0) > 0.0 && m["h"].as_f64().unwrap_or(0.0) > 0.0)
        .collect()
}

#[test]
fn in_chromium_the_stale_handle_case_shows_both_leases_the_window_and_the_stale_delete() {
    let Some(browser) = chromium() else { return };
    let page = sqsprobe::report::html::render(&evidence("playbook.jsonl"));
    let probe = PROBE.replace("STALE", STALE).replace("FAILING", FAILING);
    let probed = page.replacen("</body>", &format!("{probe}</body>"), 1);
    let (dom, requests) = load(&browser, &probed);
    assert_eq!(
        requests,
        Vec::<String>::new(),
        "the page made requests of its own"
    );

    let result = probe_result(&dom);
    let stale = &result[STALE];
    let leases = laid_out(stale, "lease");
    assert_eq!(leases.len(), 2, "A's lapsed lease and B's: {stale}");
    let ended: Vec<&str> = leases
        .iter()
        .map(|l| l["ended"].as_str().unwrap())
        .collect();
    assert!(ended.contains(&"lapsed"), "A's lease lapsed: {leases:?}");
    assert_eq!(laid_out(stale, "window").len(), 1, "{stale}");
    let stale_delete: Vec<_> = laid_out(stale, "call")
        .into_iter()
        .filter(|c| {
            c["action"] == "DeleteMessage" && c["cls"].as_str().unwrap().contains("outside")
        })
        .collect();
    assert_eq!(
        stale_delete.len(),
        1,
        "A's delete after B received, marked as used outside its lease: {stale}"
    );
    assert_eq!(stale_delete[0]["ack"], "other_attempt");
    assert!(
        stale_delete[0]["w"].as_f64().unwrap() >= 5.0,
        "never a sliver"
    );

    // The check can fail: a page that loads a stylesheet from a font host is caught.
    let (_, requests) = load(
        &browser,
        "<!DOCTYPE html><link rel=\"stylesheet\" href=\"https://fonts.googleapis.com/css?family=Roboto\">",
    );
    assert!(
        !requests.is_empty()
            && requests
                .iter()
                .all(|r| r.starts_with("fonts.googleapis.com")),
        "{requests:?}"
    );

    let failing = &result[FAILING];
    assert_eq!(
        laid_out(failing, "finding").len(),
        1,
        "the finding is marked: {failing}"
    );
}

#[test]
fn a_whole_suite_report_stays_under_5_mb() {
    let tmp = tempfile::tempdir().unwrap();
    let run = run_bin(
        &["run", "--out", tmp.path().to_str().unwrap()],
        &root(),
        Duration::from_secs(300),
    );
    assert!(
        matches!(run.code(), 0 | 4 | 5),
        "{}\n{}",
        run.stdout,
        run.stderr
    );
    let dir = single_run_dir(tmp.path());
    let records = read_evidence(&dir.join("evidence.jsonl")).unwrap();
    let cases = records
        .iter()
        .filter(|r| matches!(r, Record::CaseEnd(_)))
        .count();
    assert!(cases >= 150, "{cases} cases");
    let started = Instant::now();
    let html = sqsprobe::report::html::render(&records);
    let render = started.elapsed();
    let size = html.len();
    assert!(size < 5 * 1024 * 1024, "{size} bytes for {cases} cases");
    assert_eq!(
        std::fs::metadata(dir.join("report.html")).unwrap().len() as usize,
        size,
        "the run wrote the same page"
    );
    let mut measured = format!(
        "measured: {cases}-case report, {:.2} MB, rendered in {} ms (this build's profile)",
        size as f64 / 1e6,
        render.as_millis()
    );
    if let Some(browser) = chromium() {
        // The page's own clock: parsed, styled and laid out (forced), as the browser saw it.
        let timing = "<script>document.body.getBoundingClientRect();\
            var t=document.createElement(\"pre\");t.id=\"timing\";\
            t.textContent=String(Math.round(performance.now()));document.body.appendChild(t);\
            </script></body>";
        let timed = html.replacen("</body>", timing, 1);
        let server = PageServer::start(vec![("report.html", timed)]);
        let dom = dump_dom(&browser, &server.url("report.html"), server.port);
        server.finish();
        assert_eq!(dom.matches("<details class=\"case\"").count(), cases);
        let at = dom.find("<pre id=\"timing\">").expect("the timing ran") + 17;
        let ms = &dom[at..at + dom[at..].find('<').unwrap()];
        measured.push_str(&format!(
            "; in headless Chromium, navigation to parsed and laid out: {ms} ms"
        ));
    }
    eprintln!("{measured}");
}
