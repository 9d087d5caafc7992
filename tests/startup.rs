//! Start-up cost (issue 12): how long `sqsprobe serve` takes from exec to answering its first
//! request, and how much `sqsprobe run` of a one-case suite adds to the case's own duration.
//!
//! A measurement, not a timed test: the cases are `#[ignore]`, assert nothing about time and
//! print one JSON line per figure; `docs/performance.md` ("Start-up") has the command and the
//! figures:
//!
//! ```sh
//! cargo test --test startup -- --ignored --nocapture --test-threads 1
//! ```
//!
//! `SQSPROBE_STARTUP_BIN` points it at another build (e.g. `target/release/sqsprobe`).

mod common;

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{free_port, root, single_run_dir};
use sqsprobe::evidence::format::Record;
use sqsprobe::evidence::read_evidence;

const SAMPLES: usize = 15;

fn binary() -> PathBuf {
    std::env::var_os("SQSPROBE_STARTUP_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(common::bin)
}

/// Median and largest of `samples`, in milliseconds.
fn summary(mut samples: Vec<f64>) -> (f64, f64) {
    samples.sort_by(f64::total_cmp);
    (samples[samples.len() / 2], samples[samples.len() - 1])
}

/// One request (ListQueues) on a fresh connection; whether a complete status line came back.
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

#[test]
#[ignore = "measurement: run with --ignored --nocapture"]
fn serve_answers_its_first_request() {
    let mut to_listen = Vec::new();
    for _ in 0..SAMPLES {
        let addr: SocketAddr = ([127, 0, 0, 1], free_port()).into();
        let started = Instant::now();
        let mut child = Command::new(binary())
            .args(["serve", "--listen", &addr.to_string()])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start serve");
        let deadline = started + Duration::from_secs(10);
        while !answers(addr) {
            assert!(
                Instant::now() < deadline,
                "serve did not answer within 10 s"
            );
            std::thread::sleep(Duration::from_micros(500));
        }
        to_listen.push(started.elapsed().as_secs_f64() * 1000.0);
        let _ = child.kill();
        let _ = child.wait();
    }
    let (p50, max) = summary(to_listen);
    println!(
        "{{\"figure\":\"serve_first_answer_ms\",\"samples\":{SAMPLES},\"p50\":{p50:.1},\"max\":{max:.1},\"bound\":50}}"
    );
}

#[test]
#[ignore = "measurement: run with --ignored --nocapture"]
fn run_adds_little_to_a_one_case_suite() {
    let mut overhead = Vec::new();
    let mut case_ms = Vec::new();
    for _ in 0..SAMPLES {
        let out = tempfile::tempdir().unwrap();
        let started = Instant::now();
        let status = Command::new(binary())
            .args([
                "run",
                "suites/stale-handle.yaml",
                "--case",
                "stale-handle-delete-after-lapse",
                "-q",
                "--out",
                out.path().to_str().unwrap(),
            ])
            .current_dir(root())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .expect("run sqsprobe");
        let wall = started.elapsed().as_secs_f64() * 1000.0;
        assert!(status.success());
        let records = read_evidence(&single_run_dir(out.path()).join("evidence.jsonl")).unwrap();
        let case = records
            .iter()
            .find_map(|r| match r {
                Record::CaseEnd(e) => Some(e.duration_ms as f64),
                _ => None,
            })
            .expect("a case_end");
        overhead.push(wall - case);
        case_ms.push(case);
    }
    let (p50, max) = summary(overhead);
    let (case_p50, _) = summary(case_ms);
    println!(
        "{{\"figure\":\"run_overhead_ms\",\"samples\":{SAMPLES},\"p50\":{p50:.1},\"max\":{max:.1},\"case_p50\":{case_p50:.1},\"bound\":200}}"
    );
}
