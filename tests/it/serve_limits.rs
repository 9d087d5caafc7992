//! `sqsprobe serve` (the real process) under hostile clients: requests built to crash a
//! decoder, clients that hoard queues, messages, connections or time, and a shutdown with a
//! long poll in flight. Each test checks the AWS-shaped answer and that serve keeps serving.

use crate::common;

use std::time::{Duration, Instant};

use aws_sdk_sqs::error::ProvideErrorMetadata;
use common::serve::{Serve, post};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::time::timeout;

const FORM: &str = "Content-Type: application/x-www-form-urlencoded\r\n";

async fn create_queue(sqs: &aws_sdk_sqs::Client, name: &str) -> String {
    let created = sqs.create_queue().queue_name(name).send().await;
    created
        .expect("CreateQueue")
        .queue_url()
        .unwrap_or_default()
        .to_owned()
}

async fn still_serving(serve: &mut Serve) {
    assert!(serve.running(), "serve exited");
    let (status, text) = post(serve.addr, FORM, b"Action=ListQueues&Version=2012-11-05").await;
    assert_eq!(status, 200, "{text}");
}

/// Reads until the server closes the connection; returns how long that took.
async fn time_until_closed(stream: &mut TcpStream, limit: Duration) -> Duration {
    let started = Instant::now();
    let mut buf = [0u8; 4096];
    timeout(limit, async {
        loop {
            match stream.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(_) => {}
            }
        }
    })
    .await
    .expect("the server closed the connection within the bound");
    started.elapsed()
}

// `Action=ListQueues&a.a.a…=1` with a few thousand segments overflowed the stack and
// aborted serve; a huge pair count was collected whole.
#[tokio::test]
async fn deep_keys_huge_pair_counts_and_deep_json_are_refused_and_serve_keeps_serving() {
    let mut serve = Serve::start();
    let deep = format!("Action=ListQueues&{}=1", vec!["a"; 5000].join("."));
    let (status, text) = post(serve.addr, FORM, deep.as_bytes()).await;
    assert_eq!(status, 400, "{text}");
    assert!(
        text.contains("<Code>InvalidParameterValue</Code>"),
        "{text}"
    );
    assert!(text.contains("more than 16 segments"), "{text}");
    still_serving(&mut serve).await;

    let many = format!("Action=ListQueues{}", "&a=1".repeat(1_000_000));
    let (status, text) = post(serve.addr, FORM, many.as_bytes()).await;
    assert_eq!(status, 400, "{text}");
    assert!(text.contains("more than 1000 parameters"), "{text}");
    still_serving(&mut serve).await;

    let json = "Content-Type: application/x-amz-json-1.0\r\nX-Amz-Target: AmazonSQS.ListQueues\r\n";
    let nested = format!("{{\"a\":{}{}}}", "[".repeat(100_000), "]".repeat(100_000));
    let (status, text) = post(serve.addr, json, nested.as_bytes()).await;
    assert_eq!(status, 400, "{text}");
    assert!(text.contains("SerializationException"), "{text}");
    assert!(text.contains("deeper than 32"), "{text}");
    still_serving(&mut serve).await;
}

#[tokio::test]
async fn queue_message_and_byte_caps_answer_over_limit() {
    let serve = Serve::start_with(&[
        "--max-queues",
        "2",
        "--max-messages",
        "3",
        "--max-stored-bytes",
        "1KiB",
    ]);
    let sqs = common::client(&serve.url).await;
    let a = sqs.create_queue().queue_name("a").send().await.unwrap();
    sqs.create_queue().queue_name("b").send().await.unwrap();
    let err = sqs
        .create_queue()
        .queue_name("c")
        .send()
        .await
        .expect_err("a third queue is over --max-queues");
    assert_eq!(err.code(), Some("OverLimit"), "{err:?}");
    assert_eq!(err.raw_response().map(|r| r.status().as_u16()), Some(403));

    let url = a.queue_url().unwrap();
    let send = |body: String| sqs.send_message().queue_url(url).message_body(body).send();
    let big = "x".repeat(600);
    send(big.clone()).await.expect("600 bytes fit");
    let err = send(big.clone())
        .await
        .expect_err("1,200 bytes are over --max-stored-bytes 1KiB");
    assert_eq!(err.code(), Some("OverLimit"), "{err:?}");
    let message = err.message().unwrap_or_default().to_owned();
    assert!(message.contains("--max-stored-bytes"), "{message}");
    for _ in 0..2 {
        send("s".into()).await.expect("small messages fit");
    }
    let err = send("s".into())
        .await
        .expect_err("a fourth message is over --max-messages");
    assert!(err.message().unwrap_or_default().contains("--max-messages"));
    // Purging gives the room back.
    sqs.purge_queue().queue_url(url).send().await.unwrap();
    send(big).await.expect("room again after a purge");
}

#[tokio::test]
async fn slow_heads_and_idle_connections_are_closed_after_their_bounds() {
    let mut serve = Serve::start_with(&["--header-read-timeout", "1s", "--idle-timeout", "2s"]);
    // A head that never completes (slowloris).
    let mut slow = TcpStream::connect(serve.addr).await.unwrap();
    slow.write_all(b"POST / HTTP/1.1\r\nHost: x\r\n")
        .await
        .unwrap();
    let took = time_until_closed(&mut slow, Duration::from_secs(10)).await;
    assert!(took >= Duration::from_millis(800), "closed after {took:?}");

    // A keep-alive connection: one request, then silence.
    let mut idle = TcpStream::connect(serve.addr).await.unwrap();
    let body = b"Action=ListQueues";
    let head = format!(
        "POST / HTTP/1.1\r\nHost: x\r\n{FORM}Content-Length: {}\r\n\r\n",
        body.len()
    );
    idle.write_all(head.as_bytes()).await.unwrap();
    idle.write_all(body).await.unwrap();
    let mut first = [0u8; 12];
    idle.read_exact(&mut first).await.unwrap();
    assert_eq!(&first, b"HTTP/1.1 200");
    let took = time_until_closed(&mut idle, Duration::from_secs(10)).await;
    // The idle bound (2 s), not the head bound (1 s), applies between requests.
    assert!(took >= Duration::from_millis(1500), "closed after {took:?}");
    still_serving(&mut serve).await;
}

#[tokio::test]
async fn connections_beyond_the_cap_wait_for_a_free_slot() {
    let serve = Serve::start_with(&["--max-connections", "2"]);
    let sqs = common::client(&serve.url).await;
    let url = create_queue(&sqs, "q").await;
    drop(sqs);
    // Two long polls hold both slots for 3 s.
    let json =
        "Content-Type: application/x-amz-json-1.0\r\nX-Amz-Target: AmazonSQS.ReceiveMessage\r\n";
    let poll = format!(r#"{{"QueueUrl":"{url}","WaitTimeSeconds":3}}"#);
    let started = Instant::now();
    let holders: Vec<_> = (0..2)
        .map(|_| {
            let poll = poll.clone();
            tokio::spawn(async move { post(serve.addr, json, poll.as_bytes()).await })
        })
        .collect();
    tokio::time::sleep(Duration::from_millis(500)).await;
    let (status, _) = post(serve.addr, FORM, b"Action=ListQueues").await;
    let waited = started.elapsed();
    assert_eq!(status, 200);
    assert!(
        waited >= Duration::from_millis(2500),
        "the third connection was served after {waited:?}, before a slot was free"
    );
    for holder in holders {
        assert_eq!(holder.await.unwrap().0, 200);
    }
}

#[tokio::test]
async fn sigterm_answers_the_long_poll_in_flight_then_exits_0() {
    let mut serve = Serve::start();
    let sqs = common::client(&serve.url).await;
    let url = create_queue(&sqs, "q").await;
    let poll = tokio::spawn(async move {
        let started = Instant::now();
        let out = sqs
            .receive_message()
            .queue_url(url)
            .wait_time_seconds(20)
            .send()
            .await;
        (out, started.elapsed())
    });
    tokio::time::sleep(Duration::from_millis(700)).await;
    let addr = serve.addr;
    let done = tokio::task::spawn_blocking(move || serve.signal("TERM", Duration::from_secs(15)))
        .await
        .unwrap();
    let (out, took) = poll.await.unwrap();
    let out = out.expect("the long poll got a normal answer, not a reset");
    assert!(out.messages().is_empty());
    assert!(
        took < Duration::from_secs(10),
        "the poll ended after {took:?}"
    );
    assert_eq!(done.code(), 0, "stderr:\n{}", done.stderr);
    assert_eq!(
        done.stderr.lines().last(),
        Some("sqsprobe: emulator stopped (SIGTERM)")
    );
    assert!(TcpStream::connect(addr).await.is_err(), "still accepting");
}

#[test]
fn serve_help_names_every_limit_with_its_default() {
    let help = common::run_bin(
        &["serve", "--help"],
        &common::root(),
        Duration::from_secs(10),
    );
    assert_eq!(help.code(), 0, "{}", help.stderr);
    // Each flag's entry: its line and the wrapped lines under it (indented far deeper than
    // the next flag's line).
    let lines: Vec<&str> = help.stdout.lines().collect();
    let starts = |l: &str| l.trim_start().starts_with('-') && l.len() - l.trim_start().len() < 10;
    let entry = |flag: &str| -> String {
        let at = lines
            .iter()
            .position(|l| starts(l) && l.trim_start().starts_with(flag))
            .unwrap_or_else(|| panic!("{flag} missing:\n{}", help.stdout));
        let end = lines[at + 1..]
            .iter()
            .position(|l| starts(l) || l.trim().is_empty())
            .map_or(lines.len(), |n| at + 1 + n);
        lines[at..end].join(" ")
    };
    for (flag, default) in [
        ("--max-connections", "[default: 512]"),
        ("--header-read-timeout", "[default: 10s]"),
        ("--idle-timeout", "[default: 120s]"),
        ("--max-request-bytes", "[default: 8MiB]"),
        ("--max-queues", "[default: 10000]"),
        ("--max-messages", "[default: 1000000]"),
        ("--max-stored-bytes", "[default: 1GiB]"),
        ("--shutdown-grace", "[default: 5s]"),
    ] {
        let text = entry(flag);
        assert!(
            text.contains(default),
            "{flag} does not say {default}: {text}"
        );
    }
    let cap = entry("--max-connections");
    assert!(cap.contains("idle longest"), "the cap's policy: {cap}");
}

#[tokio::test]
async fn max_request_bytes_bounds_the_body() {
    let mut serve = Serve::start_with(&["--max-request-bytes", "1KiB"]);
    let body = format!("Action=ListQueues&QueueNamePrefix={}", "a".repeat(2000));
    let (status, text) = post(serve.addr, FORM, body.as_bytes()).await;
    assert_eq!(status, 413, "{text}");
    assert!(text.contains("larger than 1024 bytes"), "{text}");
    still_serving(&mut serve).await;
}

#[test]
fn bad_limit_values_are_refused_on_the_command_line() {
    for args in [
        ["--max-stored-bytes", "12parsecs"],
        ["--max-connections", "0"],
        ["--max-request-bytes", "8 parsecs"],
        ["--idle-timeout", "0s"],
        ["--account-id", "12345"],
    ] {
        let mut cmd = vec!["serve", "--listen", "127.0.0.1:0"];
        cmd.extend(args);
        let done = common::run_bin(&cmd, &common::root(), Duration::from_secs(10));
        assert_eq!(done.code(), 1, "{args:?}: {}", done.stderr);
        assert!(done.stderr.contains(args[0]), "{args:?}: {}", done.stderr);
    }
}
