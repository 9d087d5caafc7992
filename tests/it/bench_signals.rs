//! `sqsprobe bench` stops on SIGTERM, SIGINT and SIGHUP like every command: the phase
//! in flight is cut, its queues deleted, what was measured printed, exit 130; both drivers,
//! against a separate `sqsprobe serve` whose queues are then listed; and the scale workloads'
//! own `sqsprobe serve`, which neither a signal nor a SIGKILL of the bench leaves running.

use crate::common;

use common::serve::Serve;
use common::{Stderr, bin, send_signal, wait_bounded, wait_until};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// The queue URLs `serve` holds, from one unsigned ListQueues.
fn queues(serve: &Serve) -> String {
    let mut stream = TcpStream::connect(serve.addr).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(5)))
        .unwrap();
    let body = "{}";
    write!(
        stream,
        "POST / HTTP/1.1\r\nHost: {}\r\nContent-Type: application/x-amz-json-1.0\r\nX-Amz-Target: AmazonSQS.ListQueues\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        serve.addr,
        body.len()
    )
    .unwrap();
    let mut answer = String::new();
    let _ = stream.read_to_string(&mut answer);
    answer
}

fn start_bench(args: &[&str]) -> Child {
    Command::new(bin())
        .arg("bench")
        .args(args)
        .env("NO_COLOR", "1")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start sqsprobe bench")
}

#[test]
fn a_signal_cuts_a_bench_and_deletes_its_queues() {
    for (driver, signal) in [("raw", "TERM"), ("sdk", "HUP"), ("raw", "INT")] {
        let serve = Serve::start();
        let target = format!("serve={}", serve.url);
        let mut args = vec![
            "--driver",
            driver,
            "--endpoint",
            &target,
            "--duration",
            if driver == "raw" { "4s" } else { "60s" },
            "--warmup",
            "0s",
        ];
        if driver == "raw" {
            args.extend(["--connections", "2", "--workload", "cycle"]);
        } else {
            args.extend(["--clients", "2"]);
        }
        let child = start_bench(&args);
        // Signalled inside a phase with queues (the raw driver measures its no-op first): its
        // queue is on the server.
        wait_until(
            &format!("{driver}: the bench made no queue"),
            Duration::from_secs(30),
            || queues(&serve).contains("sqsprobe-bench"),
        );
        send_signal(&child, signal);
        let done = wait_bounded(child, Duration::from_secs(20));
        assert_eq!(
            done.code(),
            130,
            "{driver} {signal}: {}\n{}",
            done.stdout,
            done.stderr
        );
        assert!(
            done.stderr
                .contains(&format!("SIG{signal}: stopping the bench")),
            "{}",
            done.stderr
        );
        assert!(
            done.stdout.contains('|'),
            "the table is printed: {}",
            done.stdout
        );
        assert!(
            !queues(&serve).contains("sqsprobe-bench"),
            "{driver} {signal}: no queue left behind"
        );
    }
}

/// Ids of the processes whose parent is `parent` (Linux `/proc/<pid>/stat`).
fn children_of(parent: u32) -> Vec<u32> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir("/proc").expect("read /proc").flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        // `pid (comm) state ppid ...`: comm may hold spaces, so read after the last ')'.
        let after = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
        if after.split_whitespace().nth(1).and_then(|p| p.parse().ok()) == Some(parent) {
            out.push(pid);
        }
    }
    out
}

/// Whether `pid` is gone (or a zombie nobody has reaped yet).
fn gone(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => stat
            .rsplit_once(')')
            .is_some_and(|(_, rest)| rest.trim_start().starts_with('Z')),
    }
}

/// A server the test found: killed on drop if the test fails with it still running.
struct Server(u32);

impl Drop for Server {
    fn drop(&mut self) {
        if !gone(self.0) {
            let _ = Command::new("kill")
                .args(["-KILL", &self.0.to_string()])
                .status();
        }
    }
}

/// A scale bench in the middle of a long fill, the `sqsprobe serve` it started, and what the
/// bench has printed.
fn scale_bench_with_its_server(json: &std::path::Path) -> (Child, Server, Stderr) {
    let mut child = start_bench(&[
        "--workload",
        "memory",
        "--memory-at",
        "10000000",
        "--json",
        json.to_str().expect("utf-8 path"),
    ]);
    let mut server = None;
    wait_until(
        "the bench starts its server",
        Duration::from_secs(30),
        || {
            server = children_of(child.id()).into_iter().next();
            server.is_some()
        },
    );
    // Inside the fill: the bench says it has begun it (ten million messages take minutes).
    let stderr = Stderr::watch(&mut child);
    stderr.wait_for(
        "filling to 10000000 messages",
        Duration::from_secs(60),
        "the bench never began its fill",
    );
    (child, Server(server.expect("a server")), stderr)
}

#[test]
fn a_signal_stops_a_scale_bench_and_its_server() {
    let dir = tempfile::tempdir().expect("temp dir");
    let json = dir.path().join("scale.json");
    let (child, server, stderr) = scale_bench_with_its_server(&json);
    send_signal(&child, "TERM");
    let done = stderr.finish(child, Duration::from_secs(30));
    assert_eq!(done.code(), 130, "{}\n{}", done.stdout, done.stderr);
    assert!(
        done.stderr.contains("SIGTERM: stopping the bench"),
        "{}",
        done.stderr
    );
    wait_until("the server is gone", Duration::from_secs(10), || {
        gone(server.0)
    });
    // What was measured is saved: here nothing, and why.
    let report: serde_json::Value = common::read_json(&json);
    let errors = report["scale"]["errors"].to_string();
    assert!(errors.contains("cut by a signal"), "{report}");
}

#[test]
fn a_killed_scale_bench_takes_its_server_along() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (mut child, server, _stderr) = scale_bench_with_its_server(&dir.path().join("scale.json"));
    // SIGKILL: no handler, no unwinding; the kernel's parent-death signal ends the server.
    child.kill().expect("kill the bench");
    let _ = child.wait();
    wait_until("the server is gone", Duration::from_secs(10), || {
        gone(server.0)
    });
}
