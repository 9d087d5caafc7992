//! The HTTP server: accepts connections, decodes either protocol, dispatches, encodes.
//!
//! Shaped like mini-redis's `server::run`: a library function serving a listener until a
//! shutdown future resolves. Every answer, including malformed requests, is AWS-shaped.

use std::convert::Infallible;
use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;

use bytes::Bytes;
use http_body_util::{BodyExt, Full, Limited};
use hyper::body::Incoming;
use hyper::header::{CONTENT_TYPE, HOST, HeaderValue};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use serde_json::Value;
use tokio::net::TcpListener;
use tokio::sync::oneshot;
use tokio::task::{JoinHandle, JoinSet};

use crate::emulator::dispatch::dispatch;
use crate::emulator::model::store::Emulator;
use crate::emulator::ops::context::RequestContext;
use crate::emulator::protocol::{json, query};
use crate::emulator::support::config::EmulatorConfig;
use crate::emulator::support::errors::SqsError;
use crate::emulator::support::input::queue_name_from_url;

/// Serves SQS on `listener` until `shutdown` resolves; then stops accepting, closes open
/// connections and returns.
pub async fn serve(
    listener: TcpListener,
    config: EmulatorConfig,
    shutdown: impl Future<Output = ()> + Send,
) -> std::io::Result<()> {
    let local = listener.local_addr()?;
    let emu = Arc::new(Emulator::new(config));
    let mut connections = JoinSet::new();
    tokio::pin!(shutdown);
    loop {
        tokio::select! {
            () = &mut shutdown => break,
            accepted = listener.accept() => {
                let (stream, _) = match accepted {
                    Ok(pair) => pair,
                    // Transient accept errors (EMFILE, aborted handshakes) must not stop the server.
                    Err(_) => {
                        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
                        continue;
                    }
                };
                let _ = stream.set_nodelay(true);
                let emu = Arc::clone(&emu);
                connections.spawn(async move {
                    let service = service_fn(move |req| {
                        let emu = Arc::clone(&emu);
                        async move { Ok::<_, Infallible>(handle(emu, req, local).await) }
                    });
                    let _ = http1::Builder::new()
                        .keep_alive(true)
                        .serve_connection(TokioIo::new(stream), service)
                        .await;
                });
            }
            Some(_) = connections.join_next(), if !connections.is_empty() => {}
        }
    }
    connections.shutdown().await;
    Ok(())
}

/// An emulator running on a background task.
#[derive(Debug)]
pub struct RunningEmulator {
    addr: SocketAddr,
    shutdown: Option<oneshot::Sender<()>>,
    task: JoinHandle<std::io::Result<()>>,
}

impl RunningEmulator {
    /// `http://127.0.0.1:PORT`, ready for an SDK's `endpoint_url`.
    pub fn endpoint_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The bound address.
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// Stops the emulator and waits for it to finish.
    pub async fn shutdown(mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        let _ = (&mut self.task).await;
    }
}

impl Drop for RunningEmulator {
    fn drop(&mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
    }
}

/// Starts the emulator on a background task bound to `addr` (`127.0.0.1:0` for an ephemeral
/// port).
pub async fn spawn(addr: SocketAddr, config: EmulatorConfig) -> std::io::Result<RunningEmulator> {
    let listener = TcpListener::bind(addr).await?;
    let addr = listener.local_addr()?;
    let (tx, rx) = oneshot::channel::<()>();
    let task = tokio::spawn(serve(listener, config, async move {
        let _ = rx.await;
    }));
    Ok(RunningEmulator {
        addr,
        shutdown: Some(tx),
        task,
    })
}

fn response(
    status: u16,
    content_type: &str,
    body: Vec<u8>,
    request_id: &str,
) -> Response<Full<Bytes>> {
    let mut resp = Response::new(Full::new(Bytes::from(body)));
    *resp.status_mut() = StatusCode::from_u16(status).unwrap_or(StatusCode::BAD_REQUEST);
    let headers = resp.headers_mut();
    headers.insert(
        CONTENT_TYPE,
        HeaderValue::from_str(content_type).unwrap_or(HeaderValue::from_static("text/plain")),
    );
    if let Ok(id) = HeaderValue::from_str(request_id) {
        headers.insert("x-amzn-RequestId", id);
    }
    resp
}

fn json_error(error: &SqsError, request_id: &str) -> Response<Full<Bytes>> {
    let (body, query_error) = json::encode_error(error);
    let mut resp = response(error.status(), json::CONTENT_TYPE, body, request_id);
    if let Ok(v) = HeaderValue::from_str(&query_error) {
        resp.headers_mut().insert("x-amzn-query-error", v);
    }
    resp
}

fn query_error(error: &SqsError, request_id: &str) -> Response<Full<Bytes>> {
    response(
        error.status(),
        query::CONTENT_TYPE,
        query::encode_error(error, request_id).into_bytes(),
        request_id,
    )
}

async fn handle(
    emu: Arc<Emulator>,
    req: Request<Incoming>,
    local: SocketAddr,
) -> Response<Full<Bytes>> {
    let request_id = uuid::Uuid::new_v4().to_string();
    let headers = req.headers();
    let host = headers
        .get(HOST)
        .and_then(|v| v.to_str().ok())
        .filter(|h| !h.is_empty() && h.chars().all(|c| c.is_ascii_graphic()))
        .map_or_else(|| local.to_string(), str::to_owned);
    let target = headers
        .get("x-amz-target")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let trace_header = headers
        .get("x-amzn-trace-id")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let method = req.method().clone();
    let uri_query = req.uri().query().unwrap_or_default().to_owned();
    let path = req.uri().path().to_owned();
    let limit = emu.config.max_request_bytes;
    let body = match Limited::new(req.into_body(), limit).collect().await {
        Ok(collected) => collected.to_bytes(),
        Err(_) => {
            let error = SqsError::request_too_large(limit);
            return if target.is_some() {
                json_error(&error, &request_id)
            } else {
                query_error(&error, &request_id)
            };
        }
    };
    let is_json = target.is_some();
    let ctx = RequestContext {
        host,
        query: !is_json,
        trace_header,
    };
    if let Some(target) = target {
        let Some(operation) = json::operation(&target) else {
            return json_error(&SqsError::unknown_operation(), &request_id);
        };
        let params = match json::decode(&body) {
            Ok(p) => p,
            Err(e) => return json_error(&e, &request_id),
        };
        return match dispatch(&emu, operation, &params, &ctx).await {
            Ok(value) => response(200, json::CONTENT_TYPE, json::encode(&value), &request_id),
            Err(e) => json_error(&e, &request_id),
        };
    }
    let mut pairs: Vec<(String, String)> = form_urlencoded::parse(uri_query.as_bytes())
        .into_owned()
        .collect();
    if method == Method::POST {
        pairs.extend(form_urlencoded::parse(&body).into_owned());
    }
    let (action, mut params) = query::decode(pairs);
    let Some(action) = action.filter(|a| !a.is_empty()) else {
        return query_error(&SqsError::missing_parameter("Action"), &request_id);
    };
    // A query request may address the queue by POSTing to its URL.
    if !params.contains_key("QueueUrl")
        && path.trim_matches('/').contains('/')
        && let Ok(name) = queue_name_from_url(&path)
    {
        params.insert(
            "QueueUrl".into(),
            Value::String(emu.queue_url(&ctx.host, &name)),
        );
    }
    match dispatch(&emu, &action, &params, &ctx).await {
        Ok(value) => response(
            200,
            query::CONTENT_TYPE,
            query::encode(&action, &value, &request_id).into_bytes(),
            &request_id,
        ),
        Err(e) => query_error(&e, &request_id),
    }
}
