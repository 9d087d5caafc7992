//! A recording HTTP proxy for leak tests: it forwards every request to an upstream SQS
//! endpoint and keeps every receipt handle and message body that crossed it, so a test can
//! prove none of them reached an output file. It can also lose a response: forward a chosen
//! request (so it takes effect upstream) and drop the connection instead of answering — the
//! canonical ambiguous answer the honesty tests need.

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::service::service_fn;
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use std::collections::BTreeSet;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use tokio::net::{TcpListener, TcpStream};

/// Secrets seen on the wire.
#[derive(Debug, Default, Clone)]
pub struct Seen {
    pub handles: BTreeSet<String>,
    pub bodies: BTreeSet<String>,
    /// Every request's wire protocol: `X-Amz-Target` for AWS JSON, `Action=` for query.
    pub requests: Vec<WireRequest>,
}

/// How one request was sent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WireRequest {
    /// AWS JSON: the `X-Amz-Target` header.
    Json(String),
    /// Query protocol: the form's `Action` and the request's content type.
    Query {
        action: String,
        content_type: String,
    },
    /// Neither.
    Other,
}

fn wire_request(headers: &hyper::HeaderMap, body: &[u8]) -> WireRequest {
    if let Some(t) = headers.get("x-amz-target").and_then(|v| v.to_str().ok()) {
        return WireRequest::Json(t.to_string());
    }
    let action = form_urlencoded::parse(body).find(|(k, _)| k == "Action");
    match action {
        Some((_, a)) => WireRequest::Query {
            action: a.into_owned(),
            content_type: headers
                .get(hyper::header::CONTENT_TYPE)
                .and_then(|v| v.to_str().ok())
                .unwrap_or_default()
                .to_string(),
        },
        None => WireRequest::Other,
    }
}

/// Which response to lose: the `nth` (1-based) request whose `X-Amz-Target` is `target`.
#[derive(Debug, Clone)]
pub struct LoseResponse {
    pub target: String,
    pub nth: usize,
}

#[derive(Debug, Default)]
struct Losing {
    rule: Option<LoseResponse>,
    matched: usize,
}

/// A running proxy.
pub struct Proxy {
    pub url: String,
    pub seen: Arc<Mutex<Seen>>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.task.abort();
    }
}

fn collect(value: &serde_json::Value, seen: &mut Seen) {
    match value {
        serde_json::Value::Object(map) => {
            for (k, v) in map {
                match (k.as_str(), v) {
                    ("ReceiptHandle", serde_json::Value::String(s)) => {
                        seen.handles.insert(s.clone());
                    }
                    ("Body" | "MessageBody", serde_json::Value::String(s)) => {
                        seen.bodies.insert(s.clone());
                    }
                    _ => collect(v, seen),
                }
            }
        }
        serde_json::Value::Array(items) => items.iter().for_each(|v| collect(v, seen)),
        _ => {}
    }
}

async fn forward(
    req: Request<Incoming>,
    upstream: SocketAddr,
    seen: Arc<Mutex<Seen>>,
    losing: Arc<Mutex<Losing>>,
) -> Result<Response<Full<Bytes>>, Box<dyn std::error::Error + Send + Sync>> {
    let (parts, body) = req.into_parts();
    let body = body.collect().await?.to_bytes();
    let wire = wire_request(&parts.headers, &body);
    let lose = {
        let mut l = losing.lock().unwrap();
        let hit = matches!((&l.rule, &wire), (Some(r), WireRequest::Json(t)) if *t == r.target);
        if hit {
            l.matched += 1;
        }
        hit && l.rule.as_ref().is_some_and(|r| r.nth == l.matched)
    };
    seen.lock().unwrap().requests.push(wire);
    if let Ok(v) = serde_json::from_slice::<serde_json::Value>(&body) {
        collect(&v, &mut seen.lock().unwrap());
    }
    let stream = TcpStream::connect(upstream).await?;
    let (mut sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream)).await?;
    tokio::spawn(conn);
    let mut out = Request::from_parts(parts, Full::new(body));
    out.headers_mut().insert(
        hyper::header::HOST,
        upstream.to_string().parse().expect("host header"),
    );
    let resp = sender.send_request(out).await?;
    let (parts, body) = resp.into_parts();
    let body = body.collect().await?.to_bytes();
    if lose {
        // The request took effect upstream; the client never hears of it.
        return Err("response lost on purpose".into());
    }
    if let Ok(v) = serde_json::from_slice::<serde_json::Value>(&body) {
        collect(&v, &mut seen.lock().unwrap());
    }
    Ok(Response::from_parts(parts, Full::new(body)))
}

/// Starts a proxy on a free loopback port in front of `upstream`.
pub async fn start(upstream: SocketAddr) -> Proxy {
    start_losing(upstream, None).await
}

/// Starts a proxy that loses the response `lose` names (if any).
pub async fn start_losing(upstream: SocketAddr, lose: Option<LoseResponse>) -> Proxy {
    let losing = Arc::new(Mutex::new(Losing {
        rule: lose,
        matched: 0,
    }));
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind proxy");
    let addr = listener.local_addr().expect("proxy addr");
    let seen = Arc::new(Mutex::new(Seen::default()));
    let seen_task = seen.clone();
    let task = tokio::spawn(async move {
        loop {
            let Ok((stream, _)) = listener.accept().await else {
                return;
            };
            let seen = seen_task.clone();
            let losing = losing.clone();
            tokio::spawn(async move {
                let service =
                    service_fn(move |req| forward(req, upstream, seen.clone(), losing.clone()));
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), service)
                    .await;
            });
        }
    });
    Proxy {
        url: format!("http://{addr}"),
        seen,
        task,
    }
}
