//! The startup workload (I/O, blocking: run it on a thread of its own): how long `sqsprobe
//! serve` takes from exec to its first answer, and what `sqsprobe run` of a one-case suite
//! adds to the case's own duration.
//!
//! Blocking on purpose: the first answer is polled every 0.5 ms with a fresh connection, finer
//! than the async runtime's millisecond timers. The suite is built in ([`SUITE`]) and written
//! to a temporary folder, so the figure does not depend on the folder the bench runs in.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use super::report::{Millis, Startup};
use super::server::{START_TIMEOUT, ServeProcess, child_command};
use crate::bench::Stop;
use sqsprobe_core::evidence::format::Record;

/// Between two attempts at the first answer.
const POLL: Duration = Duration::from_micros(500);

/// The longest one `run` of the suite may take (its case takes well under a second).
const RUN_TIMEOUT: Duration = Duration::from_secs(60);

/// The documented bounds, recorded beside the figures.
const SERVE_BOUND_MS: f64 = 50.0;
const RUN_BOUND_MS: f64 = 200.0;

/// The one-case suite whose run overhead is measured: a send, a receive and a delete, no wait
/// beyond the message's arrival, so the case's duration is small and the overhead dominates.
pub(crate) const SUITE: &str = r#"# Written by `sqsprobe bench --workload startup`: one short case whose run is timed.
suite: bench-startup
description: >
  One short case: what `sqsprobe run` adds to a case's own duration.
cases:
  - id: bench-startup-send-receive-delete
    title: A sent message is received and deleted
    tags: [bench]
    behaviour: >
      A message sent to a standard queue is returned by the next receive and deleted with
      its handle.
    source:
      - https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_ReceiveMessage.html
    queues:
      q: {}
    steps:
      - send: {queue: q, body: startup}
      - receive: {queue: q, as: A, wait: 1s}
        expect: {received: [m1]}
      - delete: {attempt: A}
"#;

/// Whether one ListQueues on a fresh connection is answered 200.
fn answers(addr: SocketAddr) -> bool {
    let Ok(mut stream) = TcpStream::connect_timeout(&addr, Duration::from_millis(50)) else {
        return false;
    };
    let _ = stream.set_read_timeout(Some(Duration::from_secs(2)));
    let body = "{}";
    let request = format!(
        "POST / HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/x-amz-json-1.0\r\nX-Amz-Target: AmazonSQS.ListQueues\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    if stream.write_all(request.as_bytes()).is_err() {
        return false;
    }
    let mut head = [0u8; 12];
    stream.read_exact(&mut head).is_ok() && head.starts_with(b"HTTP/1.1 200")
}

/// One start of `serve`: exec to first answer, nanoseconds.
fn serve_sample(binary: &Path, stop: &Stop) -> Result<u64, String> {
    let started = Instant::now();
    let serve = ServeProcess::start_blocking(binary, &[], stop)?;
    while !answers(serve.addr) {
        if started.elapsed() > START_TIMEOUT {
            return Err(format!(
                "serve on {} did not answer within {START_TIMEOUT:?}",
                serve.addr
            ));
        }
        std::thread::sleep(POLL);
    }
    Ok(started.elapsed().as_nanos() as u64)
}

/// A child the sample owns: killed and reaped however the sample ends.
struct Owned<'a> {
    child: Child,
    stop: &'a Stop,
}

impl Drop for Owned<'_> {
    fn drop(&mut self) {
        self.stop.release(self.child.id());
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A temporary folder removed when dropped.
struct TempDir(PathBuf);

impl TempDir {
    fn new() -> Result<TempDir, String> {
        let path = std::env::temp_dir().join(format!(
            "sqsprobe-bench-startup-{}",
            uuid::Uuid::new_v4().simple()
        ));
        std::fs::create_dir_all(&path)
            .map_err(|e| format!("failed to create {}: {e}", path.display()))?;
        Ok(TempDir(path))
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The `duration_ms` of the only `case_end` in the one run folder under `out`.
fn case_duration_ms(out: &Path) -> Result<u64, String> {
    let run = std::fs::read_dir(out)
        .map_err(|e| format!("{}: {e}", out.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .find(|p| p.is_dir())
        .ok_or_else(|| format!("run wrote no run folder under {}", out.display()))?;
    let records = sqsprobe_core::evidence::read_evidence(&run.join("evidence.jsonl"))
        .map_err(|e| format!("the run's evidence: {e}"))?;
    records
        .iter()
        .find_map(|r| match r {
            Record::CaseEnd(end) => Some(end.duration_ms),
            _ => None,
        })
        .ok_or_else(|| "the run's evidence has no case_end".to_string())
}

/// One `run` of the suite: (wall − case duration, case duration), nanoseconds.
fn run_sample(binary: &Path, stop: &Stop) -> Result<(u64, u64), String> {
    let dir = TempDir::new()?;
    let suite = dir.0.join("bench-startup.yaml");
    let out = dir.0.join("out");
    std::fs::write(&suite, SUITE).map_err(|e| format!("{}: {e}", suite.display()))?;
    let log = dir.0.join("stderr.txt");
    let stderr = std::fs::File::create(&log).map_err(|e| format!("{}: {e}", log.display()))?;
    let started = Instant::now();
    let child = child_command(binary)
        .arg("run")
        .arg(&suite)
        .args(["-q", "--out"])
        .arg(&out)
        .current_dir(&dir.0)
        .stdout(Stdio::null())
        .stderr(Stdio::from(stderr))
        .spawn()
        .map_err(|e| format!("failed to start {} run: {e}", binary.display()))?;
    stop.adopt(child.id());
    let mut owned = Owned { child, stop };
    let status = loop {
        match owned.child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if started.elapsed() < RUN_TIMEOUT && !stop.requested() => {
                std::thread::sleep(POLL);
            }
            Ok(None) if stop.requested() => return Err("cut by a signal".into()),
            Ok(None) => return Err(format!("run did not finish within {RUN_TIMEOUT:?}")),
            Err(e) => return Err(format!("run: {e}")),
        }
    };
    let wall = started.elapsed().as_nanos() as u64;
    if !status.success() {
        let said = std::fs::read_to_string(&log).unwrap_or_default();
        let said: String = said.lines().take(5).collect::<Vec<_>>().join(" | ");
        return Err(format!("run of the one-case suite exited {status}: {said}"));
    }
    let case = case_duration_ms(&out)?.saturating_mul(1_000_000);
    Ok((wall.saturating_sub(case), case))
}

/// `samples` starts of `serve`, then `samples` runs of the suite.
pub(crate) fn measure_startup(
    binary: &Path,
    samples: u64,
    stop: &Stop,
    progress: &mut dyn FnMut(&str),
) -> Result<Startup, String> {
    let mut serve = Vec::new();
    for _ in 0..samples {
        if stop.requested() {
            return Err("cut by a signal".into());
        }
        serve.push(serve_sample(binary, stop)?);
    }
    let serve = Millis::from_nanos(serve).ok_or("no start-up sample")?;
    progress(&format!(
        "serve exec → first answer: p50 {:.1} ms, max {:.1} ms over {samples}",
        serve.p50_ms, serve.max_ms
    ));
    let mut overhead = Vec::new();
    let mut cases = Vec::new();
    for _ in 0..samples {
        if stop.requested() {
            return Err("cut by a signal".into());
        }
        let (o, c) = run_sample(binary, stop)?;
        overhead.push(o);
        cases.push(c);
    }
    let run = Millis::from_nanos(overhead).ok_or("no run sample")?;
    let case = Millis::from_nanos(cases).ok_or("no run sample")?;
    progress(&format!(
        "run of a one-case suite adds p50 {:.1} ms, max {:.1} ms to its case (p50 {:.0} ms)",
        run.p50_ms, run.max_ms, case.p50_ms
    ));
    Ok(Startup {
        samples,
        serve_first_answer: serve,
        run_overhead: run,
        run_case_p50_ms: case.p50_ms,
        serve_bound_ms: SERVE_BOUND_MS,
        run_bound_ms: RUN_BOUND_MS,
    })
}
