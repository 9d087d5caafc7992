//! `sqsprobe bench` stops on SIGTERM, SIGINT and SIGHUP like every command (issue 8): the phase
//! in flight is cut, its queues deleted, what was measured printed, exit 130; both drivers,
//! against a separate `sqsprobe serve` whose queues are then listed.

mod common;

use common::serve::Serve;
use common::{bin, send_signal, wait_bounded};
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
        // Signalled inside a phase with queues (the raw driver measures its no-op first).
        let deadline = std::time::Instant::now() + Duration::from_secs(30);
        while !queues(&serve).contains("sqsprobe-bench") {
            assert!(
                std::time::Instant::now() < deadline,
                "{driver}: the bench made no queue within 30 s"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
        std::thread::sleep(Duration::from_millis(300));
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
