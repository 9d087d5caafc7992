//! Shared helpers for the integration tests: the built binary, a moto server on a loopback
//! port it reports, bounded waits on facts, and a direct SDK client for checking what is left
//! behind.

#![allow(dead_code)]

pub mod proxy;
pub mod serve;

use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

/// The sqsprobe binary cargo built for these tests.
pub fn bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_sqsprobe"))
}

/// The repository root (suites/ lives there).
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A port nobody listens on right now: for an endpoint that must refuse connections (a
/// server the tests start binds port 0 and says which port it got).
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("bind an ephemeral loopback port")
}

/// What a finished command printed, and how it exited.
pub struct Finished {
    pub status: ExitStatus,
    pub stdout: String,
    pub stderr: String,
}

impl Finished {
    pub fn code(&self) -> i32 {
        self.status.code().unwrap_or(-1)
    }
}

/// Sends `signal` (`TERM`, `HUP`, `INT`, ...) to `child` with kill(1).
pub fn send_signal(child: &Child, signal: &str) {
    let status = Command::new("kill")
        .args([&format!("-{signal}"), &child.id().to_string()])
        .status()
        .expect("run kill");
    assert!(status.success(), "kill -{signal} failed");
}

/// Runs the binary with `args` in `cwd`, killing it after `limit`.
pub fn run_bin(args: &[&str], cwd: &Path, limit: Duration) -> Finished {
    let child = Command::new(bin())
        .args(args)
        .current_dir(cwd)
        .env("NO_COLOR", "1")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start sqsprobe");
    let finished = wait_bounded(child, limit);
    match args.first() {
        Some(&"run") => recheck_out(args, cwd),
        Some(&"audit") => recheck_audits(args, cwd, finished.code()),
        _ => {}
    }
    finished
}

/// The audit folder an `audit` wrote (`--out`/`--run-id`), judged again by `sqsprobe check`
/// from its evidence alone: it must agree with the `audit.json` the audit wrote, and derive
/// the audit's own exit code again. Every audit the tests make goes through here (`run_bin`),
/// as every run does.
pub fn recheck_audits(args: &[&str], cwd: &Path, code: i32) {
    let (Some(out), Some(run_id)) = (
        out_folder(args, cwd),
        args.iter()
            .position(|a| *a == "--run-id")
            .and_then(|i| args.get(i + 1)),
    ) else {
        return;
    };
    let dir = out.join(run_id);
    // An audit refused before it started, or stopped, wrote no judgement to check.
    if dir.join("audit.json").is_file() || dir.join("trials.json").is_file() {
        let check = check(&dir);
        assert!(
            check.code() == code && !check.stdout.contains("DIFFERS"),
            "sqsprobe check {} disagrees with the audit (exit {}, the audit's {code}):\n{}\n{}",
            dir.display(),
            check.code(),
            check.stdout,
            check.stderr
        );
    }
}

/// The `--out` folder of a command's arguments, resolved against `cwd`.
fn out_folder(args: &[&str], cwd: &Path) -> Option<PathBuf> {
    let at = args.iter().position(|a| *a == "--out");
    let given = match at {
        Some(i) => args.get(i + 1).map(|s| s.to_string()),
        None => args
            .iter()
            .find_map(|a| a.strip_prefix("--out=").map(str::to_string)),
    }?;
    Some(cwd.join(given))
}

/// Every run folder under a `run`'s `--out`, re-judged by `sqsprobe check` from its evidence
/// alone: each must agree with what the run recorded (its verdicts and its exit code). Every
/// run the tests make goes through here (`run_bin`), so a verdict the evidence does not
/// support fails the test that made it.
pub fn recheck_out(args: &[&str], cwd: &Path) {
    if let Some(out) = out_folder(args, cwd) {
        recheck_dir(&out);
    }
}

/// Every run folder directly under `out`, re-judged (see [`recheck_out`]): for the tests that
/// start a run themselves (to signal it, to hang its target).
pub fn recheck_dir(out: &Path) {
    let Ok(entries) = std::fs::read_dir(out) else {
        return;
    };
    for dir in entries.filter_map(|e| e.ok().map(|e| e.path())) {
        if dir.join("evidence.jsonl").is_file() {
            assert_checks(&dir);
        }
    }
}

/// `sqsprobe check DIR`, finished.
fn check(dir: &Path) -> Finished {
    wait_bounded(
        Command::new(bin())
            .args(["check", dir.to_str().expect("a UTF-8 path")])
            .env("NO_COLOR", "1")
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start sqsprobe check"),
        Duration::from_secs(60),
    )
}

/// `sqsprobe check DIR` agrees with the run folder: it says the evidence supports every
/// verdict, and exits with the code the run recorded.
pub fn assert_checks(dir: &Path) {
    let check = check(dir);
    assert!(
        check
            .stdout
            .contains("check: the evidence supports every verdict the run recorded"),
        "sqsprobe check {} disagrees with the run (exit {}):\n{}\n{}",
        dir.display(),
        check.code(),
        check.stdout,
        check.stderr
    );
}

/// Waits for `child` at most `limit`; kills it and panics past that.
pub fn wait_bounded(mut child: Child, limit: Duration) -> Finished {
    let deadline = Instant::now() + limit;
    // Read output on threads so a chatty child cannot block on a full pipe.
    // A pipe the caller already reads (a server's stderr read from its start) is theirs.
    let out = child.stdout.take();
    let err = child.stderr.take();
    let out_t = std::thread::spawn(move || {
        let mut s = String::new();
        if let Some(mut out) = out {
            let _ = std::io::Read::read_to_string(&mut out, &mut s);
        }
        s
    });
    let err_t = std::thread::spawn(move || {
        let mut s = String::new();
        if let Some(mut err) = err {
            let _ = std::io::Read::read_to_string(&mut err, &mut s);
        }
        s
    });
    let status = loop {
        if let Some(status) = child.try_wait().expect("poll child") {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "command did not finish within {limit:?}; stderr:\n{}",
                err_t.join().unwrap_or_default()
            );
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    Finished {
        status,
        stdout: out_t.join().unwrap_or_default(),
        stderr: err_t.join().unwrap_or_default(),
    }
}

/// Where moto_server is: `SQSPROBE_MOTO_SERVER`, the repo's `.venv`, or PATH.
fn moto_server_path() -> PathBuf {
    if let Some(p) = std::env::var_os("SQSPROBE_MOTO_SERVER") {
        return PathBuf::from(p);
    }
    let venv = root().join(".venv/bin/moto_server");
    if venv.exists() {
        return venv;
    }
    PathBuf::from("moto_server")
}

/// A moto server on a loopback port the kernel chose, stopped on drop.
pub struct Moto {
    child: Child,
    pub url: String,
    pub addr: SocketAddr,
}

impl Moto {
    /// Starts moto. These tests need it: `scripts/test` installs it into `.venv`. It binds
    /// port 0 and the test reads the port from moto's own "Running on" line: no port is picked
    /// and then raced for.
    pub fn start() -> Moto {
        use std::io::BufRead;
        let path = moto_server_path();
        let mut child = Command::new(&path)
            .args(["-H", "127.0.0.1", "-p", "0"])
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| {
                panic!(
                    "failed to start {} ({e}); run scripts/test, which installs moto into .venv, \
                     or set SQSPROBE_MOTO_SERVER",
                    path.display()
                )
            });
        // werkzeug says ` * Running on http://127.0.0.1:PORT`, then logs a line per request
        // to stderr: the reader goes on draining it so moto never blocks on a full pipe.
        let pipe = child.stderr.take().expect("piped stderr");
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut tx = Some(tx);
            for line in std::io::BufReader::new(pipe).lines().map_while(Result::ok) {
                if let Some(addr) = line
                    .split("Running on http://")
                    .nth(1)
                    .and_then(|rest| rest.split_whitespace().next())
                    .and_then(|a| a.parse::<SocketAddr>().ok())
                    && let Some(tx) = tx.take()
                {
                    let _ = tx.send(addr);
                }
            }
        });
        let Ok(addr) = rx.recv_timeout(Duration::from_secs(60)) else {
            let _ = child.kill();
            let _ = child.wait();
            panic!("moto did not say where it listens within 60s");
        };
        let mut moto = Moto {
            child,
            url: format!("http://{addr}"),
            addr,
        };
        if !answers_http(addr, Duration::from_secs(30)) {
            let _ = moto.child.kill();
            panic!("moto did not start answering on {addr} within 30s");
        }
        moto
    }
}

/// Waits until `addr` answers an HTTP request with a status line: a listening socket is not
/// yet a server (a first start of moto in a fresh venv accepted connections before it could
/// answer them, and a test's first call was refused).
fn answers_http(addr: SocketAddr, limit: Duration) -> bool {
    use std::io::{Read, Write};
    let deadline = Instant::now() + limit;
    while Instant::now() < deadline {
        if let Ok(mut stream) = TcpStream::connect_timeout(&addr, Duration::from_millis(200)) {
            let _ = stream.set_read_timeout(Some(Duration::from_secs(2)));
            let mut head = [0u8; 5];
            if stream
                .write_all(b"GET / HTTP/1.0\r\nHost: localhost\r\n\r\n")
                .is_ok()
                && stream.read_exact(&mut head).is_ok()
                && &head == b"HTTP/"
            {
                return true;
            }
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    false
}

impl Drop for Moto {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// An SDK client for `endpoint` with test credentials (for checking state behind the binary).
pub async fn client(endpoint: &str) -> aws_sdk_sqs::Client {
    client_in(endpoint, "us-east-1").await
}

/// [`client`], signing for `region`.
pub async fn client_in(endpoint: &str, region: &str) -> aws_sdk_sqs::Client {
    let conf = aws_sdk_sqs::Config::builder()
        .behavior_version(aws_sdk_sqs::config::BehaviorVersion::latest())
        .region(aws_sdk_sqs::config::Region::new(region.to_string()))
        .endpoint_url(endpoint)
        .credentials_provider(aws_sdk_sqs::config::Credentials::new(
            "test", "test", None, None, "tests",
        ))
        .build();
    aws_sdk_sqs::Client::from_conf(conf)
}

/// Waits (at most `limit`, polling every 50 ms) until `endpoint` has a queue named `prefix…`:
/// the run under test has created its first queue. Panics with `what` past the limit.
pub fn wait_for_queue(
    rt: &tokio::runtime::Runtime,
    endpoint: &str,
    prefix: &str,
    limit: Duration,
    what: &str,
) {
    wait_until(what, limit, || {
        !rt.block_on(queues_with_prefix(endpoint, prefix)).is_empty()
    });
}

/// Waits until `done` holds, checking it every 50 ms; past `limit`, the test fails with `what`.
/// The one bounded wait of the tests: what is waited on is a fact (a queue, an evidence row, a
/// proxy's hold, a child process), and the limit is a hang guard, never a timing assertion.
pub fn wait_until(what: &str, limit: Duration, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + limit;
    while !done() {
        assert!(Instant::now() < deadline, "{what} (not within {limit:?})");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// A child's stderr, read line by line from its start on a thread of its own, so a test can
/// wait for a line the child prints (the phase it announces) and still see the whole of it at
/// the end.
pub struct Stderr {
    text: std::sync::Arc<std::sync::Mutex<String>>,
    reader: Option<std::thread::JoinHandle<()>>,
}

impl Stderr {
    /// Takes `child`'s piped stderr and starts reading it.
    pub fn watch(child: &mut Child) -> Stderr {
        use std::io::BufRead;
        let pipe = child.stderr.take().expect("a piped stderr");
        let text = std::sync::Arc::new(std::sync::Mutex::new(String::new()));
        let kept = text.clone();
        let reader = std::thread::spawn(move || {
            for line in std::io::BufReader::new(pipe).lines().map_while(Result::ok) {
                let mut all = kept.lock().unwrap();
                all.push_str(&line);
                all.push('\n');
            }
        });
        Stderr {
            text,
            reader: Some(reader),
        }
    }

    /// What the child has printed so far.
    pub fn so_far(&self) -> String {
        self.text.lock().unwrap().clone()
    }

    /// Waits (bounded by `limit`) until the child has printed a line holding `needle`.
    pub fn wait_for(&self, needle: &str, limit: Duration, what: &str) {
        wait_until(what, limit, || self.text.lock().unwrap().contains(needle));
    }

    /// Waits for `child` as [`wait_bounded`] does, with the whole of its stderr.
    pub fn finish(mut self, child: Child, limit: Duration) -> Finished {
        let mut done = wait_bounded(child, limit);
        if let Some(reader) = self.reader.take() {
            let _ = reader.join();
        }
        done.stderr = self.so_far();
        done
    }
}

/// Waits (bounded by `limit`) until a run folder under `out` has written an evidence row
/// holding `needle` (rows are flushed as written): a test reaches a phase of a run by what the
/// run recorded, never by sleeping.
pub fn wait_for_evidence(out: &Path, needle: &str, limit: Duration, what: &str) {
    wait_until(what, limit, || {
        std::fs::read_dir(out)
            .into_iter()
            .flatten()
            .flatten()
            .any(|e| {
                std::fs::read_to_string(e.path().join("evidence.jsonl"))
                    .is_ok_and(|text| text.lines().any(|l| l.contains(needle)))
            })
    });
}

/// Names of the queues on `endpoint` whose name starts with `prefix`.
pub async fn queues_with_prefix(endpoint: &str, prefix: &str) -> Vec<String> {
    queues_with_prefix_in(endpoint, "us-east-1", prefix).await
}

/// [`queues_with_prefix`] in `region`.
pub async fn queues_with_prefix_in(endpoint: &str, region: &str, prefix: &str) -> Vec<String> {
    let c = client_in(endpoint, region).await;
    let out = c
        .list_queues()
        .queue_name_prefix(prefix)
        .send()
        .await
        .expect("list queues");
    out.queue_urls()
        .iter()
        .map(|u| u.rsplit('/').next().unwrap_or(u).to_string())
        .collect()
}

/// A JSON file the binary wrote (a bench's `--json`, a matrix's `matrix.json`), parsed; a
/// missing or malformed file fails the test naming it.
pub fn read_json(path: &Path) -> serde_json::Value {
    let text = std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("{} was not written: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{} is not JSON: {e}", path.display()))
}

/// The only run folder under `out` (each test gives the binary its own `--out`).
pub fn single_run_dir(out: &Path) -> PathBuf {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(out)
        .expect("read out dir")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_dir())
        .collect();
    assert_eq!(
        dirs.len(),
        1,
        "expected exactly one run folder in {}",
        out.display()
    );
    dirs.pop().unwrap()
}

/// Every file of a run folder as text, for leak checks.
pub fn run_folder_text(dir: &Path) -> Vec<(String, String)> {
    std::fs::read_dir(dir)
        .expect("read run dir")
        .filter_map(|e| e.ok())
        .map(|e| {
            (
                e.file_name().to_string_lossy().to_string(),
                std::fs::read_to_string(e.path()).unwrap_or_default(),
            )
        })
        .collect()
}

/// Runs the binary in the repository root with `args` and `--out` a fresh folder, checks that it
/// exits `expect_code` (within `limit`), and returns its run folder's records, read strictly,
/// with what it printed.
pub fn run_records(
    args: &[&str],
    expect_code: i32,
    limit: Duration,
) -> (Vec<sqsprobe_core::evidence::Record>, Finished) {
    let out = tempfile::tempdir().expect("a temporary folder");
    let mut all = args.to_vec();
    all.extend_from_slice(&["--out", out.path().to_str().expect("a UTF-8 path")]);
    let run = run_bin(&all, &root(), limit);
    assert_eq!(run.code(), expect_code, "{}\n{}", run.stdout, run.stderr);
    let records =
        sqsprobe_core::evidence::read_evidence(&single_run_dir(out.path()).join("evidence.jsonl"))
            .expect("strict evidence");
    (records, run)
}

/// The `case_end` of `case` (panics when there is none).
pub fn case_end<'a>(
    records: &'a [sqsprobe_core::evidence::Record],
    case: &str,
) -> &'a sqsprobe_core::evidence::format::CaseEnd {
    records
        .iter()
        .find_map(|r| match r {
            sqsprobe_core::evidence::Record::CaseEnd(e) if e.case == case => Some(e),
            _ => None,
        })
        .unwrap_or_else(|| panic!("no case_end for {case}"))
}

/// The `call` rows of `case`'s steps (observations included), in order.
pub fn step_calls<'a>(
    records: &'a [sqsprobe_core::evidence::Record],
    case: &str,
) -> Vec<&'a sqsprobe_core::evidence::format::Call> {
    records
        .iter()
        .filter_map(|r| match r {
            sqsprobe_core::evidence::Record::Call(c) if c.case == case && c.step.is_some() => {
                Some(c)
            }
            _ => None,
        })
        .collect()
}
