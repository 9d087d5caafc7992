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

/// What the proxy does wrong on purpose.
#[derive(Debug, Clone, Default)]
pub struct Mischief {
    /// Lose one response (the request still takes effect upstream).
    pub lose: Option<LoseResponse>,
    /// Lose every response to this `X-Amz-Target` (each request still takes effect upstream),
    /// as a server that acts on a request and never answers it.
    pub lose_every: Option<String>,
    /// From the `nth` (1-based) request to this `X-Amz-Target` on, answer every request
    /// itself with 400 `UnrecognizedClientException`, as AWS does to credentials it no longer
    /// accepts.
    pub refuse_from: Option<(String, usize)>,
    /// Answer every request to this `X-Amz-Target` itself: (target, status, `__type`).
    pub fail: Option<(String, u16, String)>,
    /// Hold every request to this `X-Amz-Target` this long before forwarding it.
    pub delay: Option<(String, std::time::Duration)>,
    /// Answer every request to this `X-Amz-Target` (or query `Action`) itself with a 400 whose
    /// message quotes the request's signing key id and session token, as a careless server
    /// might: the leak tests prove no output repeats them.
    pub echo_credentials: Option<String>,
}

#[derive(Debug, Default)]
struct Losing {
    rule: Mischief,
    matched: usize,
    refuse_matched: usize,
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

/// Handles and bodies of the query protocol: form fields in requests (`ReceiptHandle=`,
/// `...ReceiptHandle=`, `MessageBody=`), XML elements in responses (`<ReceiptHandle>`,
/// `<Body>`), unescaped as a client would see them.
fn collect_query(body: &[u8], seen: &mut Seen) {
    for (k, v) in form_urlencoded::parse(body) {
        if k.ends_with("ReceiptHandle") {
            seen.handles.insert(v.into_owned());
        } else if k.ends_with("MessageBody") {
            seen.bodies.insert(v.into_owned());
        }
    }
    let text = String::from_utf8_lossy(body);
    for (tag, into_handles) in [("ReceiptHandle", true), ("Body", false)] {
        let (open, close) = (format!("<{tag}>"), format!("</{tag}>"));
        let mut rest = text.as_ref();
        while let Some(start) = rest.find(&open) {
            let after = &rest[start + open.len()..];
            let Some(end) = after.find(&close) else { break };
            let value = after[..end]
                .replace("&lt;", "<")
                .replace("&gt;", ">")
                .replace("&quot;", "\"")
                .replace("&apos;", "'")
                .replace("&#xD;", "\r")
                .replace("&amp;", "&");
            if into_handles {
                seen.handles.insert(value);
            } else {
                seen.bodies.insert(value);
            }
            rest = &after[end..];
        }
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
    let (lose, refuse) = {
        let mut l = losing.lock().unwrap();
        if matches!((&l.rule.refuse_from, &wire), (Some((target, _)), WireRequest::Json(t)) if t == target)
        {
            l.refuse_matched += 1;
        }
        let refuse = l
            .rule
            .refuse_from
            .as_ref()
            .is_some_and(|(_, nth)| l.refuse_matched >= *nth);
        let hit =
            matches!((&l.rule.lose, &wire), (Some(r), WireRequest::Json(t)) if *t == r.target);
        if hit {
            l.matched += 1;
        }
        let lose = hit && l.rule.lose.as_ref().is_some_and(|r| r.nth == l.matched)
            || matches!((&l.rule.lose_every, &wire), (Some(target), WireRequest::Json(t)) if t == target);
        (lose, refuse)
    };
    let fail = {
        let l = losing.lock().unwrap();
        l.rule
            .fail
            .clone()
            .filter(|(target, _, _)| matches!(&wire, WireRequest::Json(t) if t == target))
    };
    let delay = {
        let l = losing.lock().unwrap();
        l.rule
            .delay
            .clone()
            .filter(|(target, _)| matches!(&wire, WireRequest::Json(t) if t == target))
    };
    let echo = {
        let l = losing.lock().unwrap();
        l.rule
            .echo_credentials
            .as_ref()
            .is_some_and(|target| match &wire {
                WireRequest::Json(t) => t == target || t.ends_with(&format!(".{target}")),
                WireRequest::Query { action, .. } => action == target,
                WireRequest::Other => false,
            })
    };
    seen.lock().unwrap().requests.push(wire);
    if echo {
        let header = |name: &str| {
            parts
                .headers
                .get(name)
                .and_then(|v| v.to_str().ok())
                .unwrap_or_default()
                .to_string()
        };
        let key = header("authorization")
            .split("Credential=")
            .nth(1)
            .and_then(|c| c.split('/').next())
            .unwrap_or_default()
            .to_string();
        let message = format!(
            "request signed by {key} with token {} for {} is not valid here",
            header("x-amz-security-token"),
            "arn:aws:sts::123456789012:assumed-role/deploy-role/ci-session-42"
        );
        let body = serde_json::json!({
            "__type": "com.amazonaws.sqs#InvalidParameterValue",
            "message": message,
        });
        return Ok(Response::builder()
            .status(400)
            .header("content-type", "application/x-amz-json-1.0")
            .header("x-amzn-query-error", "InvalidParameterValue;Sender")
            .body(Full::new(Bytes::from(body.to_string())))?);
    }
    if let Some((_, pause)) = delay {
        tokio::time::sleep(pause).await;
    }
    if let Some((_, status, code)) = fail {
        let body = format!(
            r#"{{"__type":"com.amazonaws.sqs#{code}","message":"failed by the test proxy"}}"#
        );
        return Ok(Response::builder()
            .status(status)
            .header("content-type", "application/x-amz-json-1.0")
            .header("x-amzn-query-error", format!("{code};Receiver"))
            .body(Full::new(Bytes::from(body)))?);
    }
    if refuse {
        let body = r#"{"__type":"com.amazon.coral.service#UnrecognizedClientException","message":"The security token included in the request is invalid."}"#;
        let resp = Response::builder()
            .status(400)
            .header("content-type", "application/x-amz-json-1.0")
            .header("x-amzn-requestid", "refused-by-proxy")
            .body(Full::new(Bytes::from_static(body.as_bytes())))?;
        return Ok(resp);
    }
    match serde_json::from_slice::<serde_json::Value>(&body) {
        Ok(v) => collect(&v, &mut seen.lock().unwrap()),
        Err(_) => collect_query(&body, &mut seen.lock().unwrap()),
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
    match serde_json::from_slice::<serde_json::Value>(&body) {
        Ok(v) => collect(&v, &mut seen.lock().unwrap()),
        Err(_) => collect_query(&body, &mut seen.lock().unwrap()),
    }
    if lose {
        // The request took effect upstream; the client never hears of it.
        return Err("response lost on purpose".into());
    }
    Ok(Response::from_parts(parts, Full::new(body)))
}

/// Starts a proxy on a free loopback port in front of `upstream`, doing `mischief` (tests get
/// one through [`Rigged`], which gives it a runtime).
async fn start_with(upstream: SocketAddr, mischief: Mischief) -> Proxy {
    let losing = Arc::new(Mutex::new(Losing {
        rule: mischief,
        ..Losing::default()
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

/// A recording proxy that misbehaves as told, on a runtime of its own, in front of the
/// embedded emulator in this process ([`Rigged::start`]) or of another server such as moto
/// ([`Rigged::in_front_of`]): the fixture of every test that watches or spoils what crosses the
/// wire. The proxy, and the emulator it started, stop on drop.
pub struct Rigged {
    pub rt: tokio::runtime::Runtime,
    emu: Option<sqsprobe_emulator::RunningEmulator>,
    upstream: SocketAddr,
    /// The proxy: give its `url` to the binary under test.
    pub proxy: Proxy,
}

/// The runtime a [`Rigged`] serves on: multi-threaded, so the proxy and the emulator answer
/// while a test blocks on a child process or on `rt.block_on` of its own.
fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("a runtime")
}

impl Rigged {
    /// A fresh embedded emulator on a free loopback port, behind a proxy doing `mischief`.
    pub fn start(mischief: Mischief) -> Rigged {
        let rt = runtime();
        let emu = rt
            .block_on(sqsprobe_emulator::spawn(
                "127.0.0.1:0".parse().expect("an address"),
                sqsprobe_emulator::EmulatorConfig::default(),
            ))
            .expect("the emulator starts");
        let upstream = emu.local_addr();
        let proxy = rt.block_on(start_with(upstream, mischief));
        Rigged {
            rt,
            emu: Some(emu),
            upstream,
            proxy,
        }
    }

    /// A proxy doing `mischief` in front of `upstream`, a server the test started (moto).
    pub fn in_front_of(upstream: SocketAddr, mischief: Mischief) -> Rigged {
        let rt = runtime();
        let proxy = rt.block_on(start_with(upstream, mischief));
        Rigged {
            rt,
            emu: None,
            upstream,
            proxy,
        }
    }

    /// The upstream's own URL, past the proxy: to see what is really on it.
    pub fn direct_url(&self) -> String {
        format!("http://{}", self.upstream)
    }

    /// Everything that has crossed the proxy so far.
    pub fn seen(&self) -> Seen {
        self.proxy.seen.lock().unwrap().clone()
    }
}

impl Drop for Rigged {
    fn drop(&mut self) {
        self.proxy.task.abort();
        if let Some(emu) = self.emu.take() {
            self.rt.block_on(emu.shutdown());
        }
    }
}
