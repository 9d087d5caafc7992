//! The server over real loopback sockets: at the connection cap, pooled keep-alive connections
//! and silent ones give way to a new client; a body that is not valid HTTP gets a 400. The
//! tests count answers and closed connections; every wait is bounded far below the idle and
//! head timeouts they set, so a server that made a client wait for one of those fails instead
//! of passing late.

use std::net::SocketAddr;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::time::timeout;

use super::listen::{RunningEmulator, spawn};
use crate::support::config::EmulatorConfig;

/// Far longer than any test waits: a client left to either timeout is never answered here.
const NEVER: Duration = Duration::from_secs(3600);
/// The bound on every wait of these tests.
const BOUND: Duration = Duration::from_secs(20);
const LIST_QUEUES: &[u8] = b"POST / HTTP/1.1\r\nHost: x\r\n\
Content-Type: application/x-www-form-urlencoded\r\nContent-Length: 17\r\n\r\nAction=ListQueues";

async fn emulator(max_connections: usize) -> RunningEmulator {
    let config = EmulatorConfig {
        max_connections,
        idle_timeout: NEVER,
        header_read_timeout: NEVER,
        ..EmulatorConfig::default()
    };
    spawn(SocketAddr::from(([127, 0, 0, 1], 0)), config)
        .await
        .expect("bind loopback")
}

/// Sends one ListQueues on `stream` and reads its answer: the status, or `None` when the
/// server closed the connection instead of answering.
async fn list_queues(stream: &mut TcpStream) -> Option<u16> {
    exchange(stream, LIST_QUEUES)
        .await
        .map(|(status, _)| status)
}

/// Sends `request` on `stream` and reads the answer's status and body (`None`: the server
/// closed the connection instead of answering).
async fn exchange(stream: &mut TcpStream, request: &[u8]) -> Option<(u16, String)> {
    if stream.write_all(request).await.is_err() {
        return None;
    }
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        let n = match stream.read(&mut buf).await {
            Ok(0) | Err(_) => return None,
            Ok(n) => n,
        };
        got.extend_from_slice(&buf[..n]);
        let text = String::from_utf8_lossy(&got);
        let Some(end) = text.find("\r\n\r\n") else {
            continue;
        };
        let length: usize = text[..end]
            .lines()
            .find_map(|l| {
                let (name, value) = l.split_once(':')?;
                name.eq_ignore_ascii_case("content-length")
                    .then(|| value.trim().parse().ok())?
            })
            .unwrap_or(0);
        if got.len() >= end + 4 + length {
            let status = text.get(9..12).and_then(|s| s.parse().ok())?;
            return Some((status, text[end + 4..].to_string()));
        }
    }
}

/// Whether the server closed `stream` (end of file or reset), waiting for it at most `BOUND`.
async fn closed(stream: &mut TcpStream) -> bool {
    let mut buf = [0u8; 64];
    matches!(
        timeout(BOUND, stream.read(&mut buf)).await,
        Ok(Ok(0) | Err(_))
    )
}

/// Whether `stream` is still open with nothing to read, without waiting.
fn open(stream: &TcpStream) -> bool {
    let mut buf = [0u8; 64];
    matches!(stream.try_read(&mut buf), Err(e) if e.kind() == std::io::ErrorKind::WouldBlock)
}

#[tokio::test]
async fn a_new_client_is_answered_while_pooled_connections_hold_the_cap() {
    let emu = emulator(4).await;
    let mut pooled = Vec::new();
    for _ in 0..4 {
        let mut stream = TcpStream::connect(emu.local_addr()).await.unwrap();
        assert_eq!(list_queues(&mut stream).await, Some(200));
        pooled.push(stream);
    }
    // The cap is held by four idle keep-alive connections; a fifth client is answered.
    let mut fresh = TcpStream::connect(emu.local_addr()).await.unwrap();
    let answer = timeout(BOUND, list_queues(&mut fresh)).await;
    assert_eq!(
        answer,
        Ok(Some(200)),
        "a new client waited behind idle pooled connections"
    );
    // The one idle longest made room: the first pooled connection is closed, the others
    // (and the new one) are still served.
    assert!(
        closed(&mut pooled[0]).await,
        "the idlest connection is closed"
    );
    for stream in &mut pooled[1..] {
        assert_eq!(list_queues(stream).await, Some(200));
    }
    assert_eq!(list_queues(&mut fresh).await, Some(200));
    emu.shutdown().await;
}

#[tokio::test]
async fn a_flood_of_silent_connections_does_not_stop_answers_to_others() {
    let emu = emulator(4).await;
    let mut silent = Vec::new();
    for _ in 0..12 {
        silent.push(TcpStream::connect(emu.local_addr()).await.unwrap());
    }
    let mut client = TcpStream::connect(emu.local_addr()).await.unwrap();
    let answer = timeout(BOUND, list_queues(&mut client)).await;
    assert_eq!(
        answer,
        Ok(Some(200)),
        "silent connections kept a client out"
    );
    // Each connection accepted at the cap closed the oldest silent one (once it had been idle
    // for the pool's minimum): of the 12, the last three still hold a slot beside the client,
    // and every other one was closed.
    let (gone, kept) = silent.split_at_mut(9);
    for (i, stream) in gone.iter_mut().enumerate() {
        assert!(closed(stream).await, "silent connection {i} is still open");
    }
    for stream in kept.iter() {
        assert!(
            open(stream),
            "a silent connection within the cap was closed"
        );
    }
    assert_eq!(list_queues(&mut client).await, Some(200));
    emu.shutdown().await;
}

#[tokio::test]
async fn a_malformed_chunked_body_is_a_400_in_the_request_s_protocol() {
    let emu = emulator(4).await;
    for (headers, code) in [
        (
            "Content-Type: application/x-www-form-urlencoded\r\n",
            "<Code>InvalidParameterValue</Code>",
        ),
        (
            "Content-Type: application/x-amz-json-1.0\r\nX-Amz-Target: AmazonSQS.ListQueues\r\n",
            "SerializationException",
        ),
    ] {
        let request = format!(
            "POST / HTTP/1.1\r\nHost: x\r\n{headers}Transfer-Encoding: chunked\r\n\r\n\
             zz\r\nAction=ListQueues\r\n0\r\n\r\n"
        );
        let mut stream = TcpStream::connect(emu.local_addr()).await.unwrap();
        let answer = timeout(BOUND, exchange(&mut stream, request.as_bytes())).await;
        let (status, body) = answer.unwrap().expect("an answer");
        assert_eq!(status, 400, "{body}");
        assert!(body.contains(code), "{body}");
        assert!(body.contains("could not be read"), "{body}");
    }
    // A body over the limit is still a 413.
    let mut stream = TcpStream::connect(emu.local_addr()).await.unwrap();
    let big = b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 99999999\r\n\r\n";
    let (status, _) = timeout(BOUND, exchange(&mut stream, big))
        .await
        .unwrap()
        .expect("an answer");
    assert_eq!(status, 413);
    emu.shutdown().await;
}
