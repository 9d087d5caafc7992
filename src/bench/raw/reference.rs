//! The reference server of a raw run: a bare hyper HTTP/1.1 server that reads each request's
//! body and answers a fixed 200 the size of a SendMessage reply, on its own runtime with the
//! emulator's runtime settings (one worker thread per CPU, `TCP_NODELAY`, keep-alive). Nothing
//! in it is SQS: its request rate is what this machine's HTTP does with this driver, so every
//! row's fraction of it says how near the physical limit a target is — not how near its own
//! request path, which is what the no-op ceiling measures.
//!
//! Served alone (`bench --serve-reference`), its answer can be padded to a given size
//! (`--reference-answer-bytes`): a load generator that sends it a receive's or a batch's
//! request then measures what the machine's HTTP does with that request and an answer of that
//! size, so a target's rate can also be told apart from the bytes its answers must carry.

use std::convert::Infallible;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use tokio::sync::watch;

use super::server_thread::ServerThread;

/// The answer: a SendMessage reply's shape and size (an MD5 and a MessageId), in JSON.
const BODY: &str = r#"{"MD5OfMessageBody":"0123456789abcdef0123456789abcdef","MessageId":"00000000-0000-4000-8000-000000000000"}"#;

/// A running reference server; dropping it stops the server and joins its thread.
pub(crate) struct ReferenceServer(ServerThread);

impl ReferenceServer {
    /// Binds 127.0.0.1 on an ephemeral port and serves with one worker thread per CPU, on
    /// the CPUs `pin` names when given.
    pub(crate) fn start(pin: Option<&[usize]>) -> std::io::Result<Self> {
        let body = Bytes::from_static(BODY.as_bytes());
        ServerThread::start("reference", pin, |listener, stop| {
            serve(listener, stop, body)
        })
        .map(Self)
    }

    /// Serves on `listener` until the process ends (`bench --serve-reference`, for a load
    /// generator other than the bench's own client), answering `body` ([`answer_of`]).
    pub(crate) async fn serve_forever(listener: tokio::net::TcpListener, body: Bytes) {
        let (_stop, stopped) = watch::channel(false);
        serve(listener, stopped, body).await;
    }

    /// `http://127.0.0.1:PORT`.
    pub(crate) fn endpoint_url(&self) -> String {
        self.0.endpoint_url()
    }
}

/// The member [`answer_of`] pads with, before its value's characters and closing quote.
const PADDING: &str = r#","Padding":""#;

/// The reference's answer: [`BODY`], or with `bytes` given, the same object with a
/// `Padding` member that brings it to exactly that many bytes (at least [`BODY`]'s length
/// and the member's own).
pub(crate) fn answer_of(bytes: Option<usize>) -> Result<Bytes, String> {
    let Some(bytes) = bytes else {
        return Ok(Bytes::from_static(BODY.as_bytes()));
    };
    let open = &BODY[..BODY.len() - 1];
    let least = open.len() + PADDING.len() + 2;
    let pad = bytes.checked_sub(least).ok_or_else(|| {
        format!(
            "--reference-answer-bytes {bytes}: the reference's answer takes at least {least} bytes"
        )
    })?;
    let body = format!("{open}{PADDING}{}\"}}", "x".repeat(pad));
    debug_assert_eq!(body.len(), bytes);
    Ok(Bytes::from(body))
}

/// Accepts until `stop` turns true; each connection on a task of its own, cut when it does.
async fn serve(listener: tokio::net::TcpListener, mut stop: watch::Receiver<bool>, body: Bytes) {
    loop {
        let stream = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => stream,
                Err(_) => continue,
            },
            _ = stop.wait_for(|s| *s) => return,
        };
        let _ = stream.set_nodelay(true);
        let mut stop = stop.clone();
        let body = body.clone();
        tokio::spawn(async move {
            let service = service_fn(move |req| answer(req, body.clone()));
            let connection = http1::Builder::new()
                .keep_alive(true)
                .serve_connection(TokioIo::new(stream), service);
            tokio::select! {
                _ = connection => {}
                _ = stop.wait_for(|s| *s) => {}
            }
        });
    }
}

/// Reads the whole body, as a server that looks at it must, then answers `body`.
async fn answer(
    req: Request<hyper::body::Incoming>,
    body: Bytes,
) -> Result<Response<Full<Bytes>>, Infallible> {
    let _ = req.into_body().collect().await;
    let mut response = Response::new(Full::new(body));
    let headers = response.headers_mut();
    headers.insert(
        hyper::header::CONTENT_TYPE,
        hyper::header::HeaderValue::from_static("application/x-amz-json-1.0"),
    );
    headers.insert(
        "x-amzn-requestid",
        hyper::header::HeaderValue::from_static("00000000-0000-4000-8000-000000000000"),
    );
    Ok(response)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn answers_any_request_with_the_fixed_reply_and_stops_when_dropped() {
        let server = ReferenceServer::start(None).unwrap();
        let url = server.endpoint_url();
        let addr = url.trim_start_matches("http://").to_string();
        let mut stream = tokio::net::TcpStream::connect(&addr).await.unwrap();
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        stream
            .write_all(b"POST / HTTP/1.1\r\nhost: x\r\ncontent-length: 2\r\n\r\n{}")
            .await
            .unwrap();
        let mut buf = vec![0u8; 1024];
        let n = tokio::time::timeout(std::time::Duration::from_secs(5), stream.read(&mut buf))
            .await
            .unwrap()
            .unwrap();
        let text = String::from_utf8_lossy(&buf[..n]);
        assert!(text.starts_with("HTTP/1.1 200 OK"), "{text}");
        assert!(text.ends_with(BODY), "{text}");
        drop(stream);
        drop(server);
        assert!(tokio::net::TcpStream::connect(&addr).await.is_err());
    }

    #[test]
    fn a_padded_answer_is_the_fixed_one_grown_to_the_size_asked_as_json() {
        assert_eq!(answer_of(None).unwrap(), BODY.as_bytes());
        let least = BODY.len() + PADDING.len() + 1;
        for bytes in [least, least + 1, 2_400, 65_536] {
            let body = answer_of(Some(bytes)).unwrap();
            assert_eq!(body.len(), bytes);
            let value: serde_json::Value = serde_json::from_slice(&body).unwrap();
            assert_eq!(value["MessageId"], "00000000-0000-4000-8000-000000000000");
            assert_eq!(value["Padding"].as_str().unwrap().len(), bytes - least);
        }
        let err = answer_of(Some(least - 1)).unwrap_err();
        assert!(err.contains(&format!("at least {least} bytes")), "{err}");
        assert!(answer_of(Some(0)).is_err());
    }
}
