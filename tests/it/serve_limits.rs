//! `sqsprobe serve` (the real process) under hostile clients: requests built to crash a
//! decoder, clients that hoard queues, messages, connections or time, and a shutdown with a
//! long poll in flight. Each test checks the AWS-shaped answer and that serve keeps serving.

use crate::common;

use std::time::Duration;

use aws_sdk_sqs::error::ProvideErrorMetadata;
use common::serve::{Serve, post};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::time::timeout;

const FORM: &str = "Content-Type: application/x-www-form-urlencoded\r\n";

async fn still_serving(serve: &mut Serve) {
    assert!(serve.running(), "serve exited");
    let (status, text) = post(serve.addr, FORM, b"Action=ListQueues&Version=2012-11-05").await;
    assert_eq!(status, 200, "{text}");
}

/// Reads until the server closes the connection (a hang guard of 30 s, never a timing bound).
async fn until_closed(stream: &mut TcpStream, what: &str) {
    let mut buf = [0u8; 4096];
    timeout(Duration::from_secs(30), async {
        loop {
            match stream.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(_) => {}
            }
        }
    })
    .await
    .unwrap_or_else(|_| panic!("{what}: the server never closed the connection"));
}

/// What the server has sent on `stream` so far, read without waiting, and whether it has left
/// the connection open (no end of file after it).
fn read_now(stream: &TcpStream) -> (String, bool) {
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    let open = loop {
        match stream.try_read(&mut buf) {
            Ok(0) => break false,
            Ok(n) => got.extend_from_slice(&buf[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break true,
            Err(_) => break false,
        }
    };
    (String::from_utf8_lossy(&got).to_string(), open)
}

/// Whether the server has left `stream` open ([`read_now`]).
fn still_open(stream: &TcpStream) -> bool {
    read_now(stream).1
}

/// The `QueueUrl` of queue `name`, created with one JSON request on a connection of its own.
async fn create_queue_json(addr: std::net::SocketAddr, name: &str) -> String {
    let body = format!(r#"{{"QueueName":"{name}"}}"#);
    let (status, text) = post(addr, &json_headers("CreateQueue"), body.as_bytes()).await;
    assert_eq!(status, 200, "{text}");
    let at = text.find("\r\n\r\n").expect("a body") + 4;
    let created: serde_json::Value = serde_json::from_str(&text[at..]).expect("JSON");
    created["QueueUrl"].as_str().expect("a QueueUrl").to_owned()
}

/// The headers of an AWS JSON request for `operation`.
fn json_headers(operation: &str) -> String {
    format!("Content-Type: application/x-amz-json-1.0\r\nX-Amz-Target: AmazonSQS.{operation}\r\n")
}

/// One request on a keep-alive connection, its whole answer read: the connection is then
/// idle between requests.
async fn answered_keep_alive(addr: std::net::SocketAddr) -> TcpStream {
    let mut stream = TcpStream::connect(addr).await.unwrap();
    let body = b"Action=ListQueues";
    let head = format!(
        "POST / HTTP/1.1\r\nHost: x\r\n{FORM}Content-Length: {}\r\n\r\n",
        body.len()
    );
    stream.write_all(head.as_bytes()).await.unwrap();
    stream.write_all(body).await.unwrap();
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    while !answer_complete(&got) {
        let n = timeout(Duration::from_secs(30), stream.read(&mut buf))
            .await
            .expect("an answer")
            .unwrap();
        assert!(n > 0, "closed before answering");
        got.extend_from_slice(&buf[..n]);
    }
    assert!(
        got.starts_with(b"HTTP/1.1 200"),
        "{}",
        String::from_utf8_lossy(&got)
    );
    stream
}

/// Whether `got` holds a whole HTTP answer (head and Content-Length body).
fn answer_complete(got: &[u8]) -> bool {
    let text = String::from_utf8_lossy(got);
    let Some(end) = text.find("\r\n\r\n") else {
        return false;
    };
    let length: usize = text[..end]
        .lines()
        .find_map(|l| {
            let (name, value) = l.split_once(':')?;
            name.eq_ignore_ascii_case("content-length")
                .then(|| value.trim().parse().ok())?
        })
        .unwrap_or(0);
    got.len() >= end + 4 + length
}

/// A request in flight that holds its connection's slot as long as the test wants: its head
/// asks `Expect: 100-continue`, and the server's `100 Continue` says the server read the head
/// and is serving the request (the body is read inside the service). The body (`body_len`
/// bytes) is the caller's to send.
async fn in_a_request(addr: std::net::SocketAddr, headers: &str, body_len: usize) -> TcpStream {
    let mut stream = TcpStream::connect(addr).await.unwrap();
    let head = format!(
        "POST / HTTP/1.1\r\nHost: {addr}\r\n{headers}Content-Length: {body_len}\r\n\
         Expect: 100-continue\r\nConnection: close\r\n\r\n"
    );
    stream.write_all(head.as_bytes()).await.unwrap();
    let continue_line = b"HTTP/1.1 100 Continue\r\n\r\n";
    let mut got = vec![0u8; continue_line.len()];
    timeout(Duration::from_secs(30), stream.read_exact(&mut got))
        .await
        .expect("the server asks for the body")
        .expect("a 100 Continue");
    assert_eq!(got, continue_line, "{}", String::from_utf8_lossy(&got));
    stream
}

/// The rest of an answer on `stream`, to its end (`Connection: close`): (status, text).
async fn answer(stream: &mut TcpStream) -> (u16, String) {
    let mut out = Vec::new();
    timeout(Duration::from_secs(30), stream.read_to_end(&mut out))
        .await
        .expect("an answer")
        .expect("read the answer");
    let text = String::from_utf8_lossy(&out).to_string();
    let status = text
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no HTTP answer: {text:?}"));
    (status, text)
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

/// Which bound applies to which phase, told apart by which connection the server closes first:
/// each server has one short bound and one of an hour. A connection that is left open while
/// the other, silent since later, is closed cannot be under the short bound.
#[tokio::test]
async fn slow_heads_and_idle_connections_are_closed_after_their_bounds() {
    // The head bound: a head that never completes (slowloris) is closed, and a keep-alive
    // connection silent since before that head began is not (the head bound does not apply
    // between requests).
    let mut serve = Serve::start_with(&["--header-read-timeout", "1s", "--idle-timeout", "1h"]);
    let idle = answered_keep_alive(serve.addr).await;
    let mut slow = TcpStream::connect(serve.addr).await.unwrap();
    slow.write_all(b"POST / HTTP/1.1\r\nHost: x\r\n")
        .await
        .unwrap();
    until_closed(&mut slow, "a head that never completes").await;
    assert!(
        still_open(&idle),
        "the head bound closed a keep-alive connection between requests"
    );
    still_serving(&mut serve).await;

    // The idle bound: a keep-alive connection silent after its answer is closed, and a head
    // begun before that silence is not (the idle bound does not apply to a head).
    let mut serve = Serve::start_with(&["--header-read-timeout", "1h", "--idle-timeout", "1s"]);
    let mut slow = TcpStream::connect(serve.addr).await.unwrap();
    slow.write_all(b"POST / HTTP/1.1\r\nHost: x\r\n")
        .await
        .unwrap();
    let mut idle = answered_keep_alive(serve.addr).await;
    until_closed(
        &mut idle,
        "a keep-alive connection idle past --idle-timeout",
    )
    .await;
    assert!(
        still_open(&slow),
        "the idle bound closed a connection in the middle of its head"
    );
    still_serving(&mut serve).await;
}

/// At the cap, with every connection in a request, a new client waits for a slot: it is
/// served once one frees, and not before. The first request holds its slot until its body
/// bound (`--header-read-timeout`) cuts it; the second is a long poll; the third sends the
/// message the long poll is waiting for. Served at once, the third would be answered while the
/// first still holds its connection; served when the slot frees, after the first is closed.
#[tokio::test]
async fn connections_beyond_the_cap_wait_for_a_free_slot() {
    let serve = Serve::start_with(&["--max-connections", "2", "--header-read-timeout", "3s"]);
    let url = create_queue_json(serve.addr, "q").await;
    // Both slots are taken by requests being served: the server has asked for their bodies.
    let poll = format!(r#"{{"QueueUrl":"{url}","WaitTimeSeconds":20}}"#);
    let first = in_a_request(serve.addr, &json_headers("ReceiveMessage"), poll.len()).await;
    let mut second = in_a_request(serve.addr, &json_headers("ReceiveMessage"), poll.len()).await;
    second.write_all(poll.as_bytes()).await.unwrap();
    // The third client sends a message.
    let send = format!(r#"{{"QueueUrl":"{url}","MessageBody":"third"}}"#);
    let addr = serve.addr;
    let third =
        tokio::spawn(
            async move { post(addr, &json_headers("SendMessage"), send.as_bytes()).await },
        );
    let (status, text) = third.await.unwrap();
    assert_eq!(
        status, 200,
        "the third connection is served once a slot frees: {text}"
    );
    // It was served after the first request ended (its body never came: a 408, then the
    // connection closed), not while both slots were taken.
    let (first_answer, first_open) = read_now(&first);
    assert!(
        !first_open,
        "the third connection was served while both slots were taken"
    );
    assert!(first_answer.starts_with("HTTP/1.1 4"), "{first_answer}");
    let (status, text) = answer(&mut second).await;
    assert_eq!(status, 200, "{text}");
    assert!(
        text.contains("\"Body\":\"third\""),
        "the long poll got the message: {text}"
    );
}

/// A long poll in flight when SIGTERM comes answers (with no message) and serve exits 0. Its
/// wait (20 s) is far beyond the shutdown grace (5 s) that cuts a request still running: the
/// answer itself says the poll ended on the signal.
#[tokio::test]
async fn sigterm_answers_the_long_poll_in_flight_then_exits_0() {
    let mut serve = Serve::start_with(&["--shutdown-grace", "5s"]);
    let url = create_queue_json(serve.addr, "q").await;
    let poll = format!(r#"{{"QueueUrl":"{url}","WaitTimeSeconds":20}}"#);
    // In flight: the server read its head and asked for its body.
    let mut in_flight = in_a_request(serve.addr, &json_headers("ReceiveMessage"), poll.len()).await;
    in_flight.write_all(poll.as_bytes()).await.unwrap();
    let addr = serve.addr;
    let done = tokio::task::spawn_blocking(move || serve.signal("TERM", Duration::from_secs(15)))
        .await
        .unwrap();
    let (status, text) = answer(&mut in_flight).await;
    assert_eq!(
        status, 200,
        "the long poll got a normal answer, not a reset: {text}"
    );
    assert!(!text.contains("\"Messages\""), "{text}");
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
