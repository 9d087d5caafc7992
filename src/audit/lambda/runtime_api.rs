//! The Lambda Runtime API, served on a loopback port for the function's own runtime (the
//! process `AWS_LAMBDA_RUNTIME_API` points at): the documented paths of API version
//! `2018-06-01` — `GET /runtime/invocation/next` (held until an invocation is due, answered
//! with the event and the headers `Lambda-Runtime-Aws-Request-Id`,
//! `Lambda-Runtime-Deadline-Ms`, `Lambda-Runtime-Invoked-Function-Arn`,
//! `Lambda-Runtime-Trace-Id`), `POST /runtime/invocation/{id}/response`,
//! `POST /runtime/invocation/{id}/error` and `POST /runtime/init/error`.
//!
//! One API serves one execution environment. An invocation is handed to the runtime when it
//! asks for the next one; its function timeout runs from that moment, as Lambda's does from the
//! start of the invocation. An answer to an invocation that has timed out is accepted and
//! ignored (the mapping resets the environment then, so one rarely comes).

use std::collections::HashMap;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use tokio::sync::{mpsc, oneshot};

use super::event::Answer;

/// The path prefix of the API version every runtime speaks.
const PREFIX: &str = "/2018-06-01/runtime";

/// An invocation waiting for a runtime.
struct Pending {
    request_id: String,
    event: Vec<u8>,
    timeout: Duration,
    /// Told when a runtime took it: the function timeout starts then.
    taken: oneshot::Sender<()>,
    answer: oneshot::Sender<Answer>,
}

/// What the server and the mapping share.
struct State {
    queue: tokio::sync::Mutex<mpsc::UnboundedReceiver<Pending>>,
    in_flight: Mutex<HashMap<String, oneshot::Sender<Answer>>>,
    /// The `errorType` of each `/init/error`, in order.
    init_errors: Mutex<Vec<String>>,
    function_arn: String,
}

/// The running API.
pub(crate) struct RuntimeApi {
    addr: SocketAddr,
    send: mpsc::UnboundedSender<Pending>,
    state: Arc<State>,
    stop: tokio::sync::watch::Sender<bool>,
}

impl RuntimeApi {
    /// Serves the API on `127.0.0.1:0` for the function `function_arn`.
    pub(crate) async fn start(function_arn: &str) -> std::io::Result<RuntimeApi> {
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0)).await?;
        let addr = listener.local_addr()?;
        let (send, receive) = mpsc::unbounded_channel();
        let state = Arc::new(State {
            queue: tokio::sync::Mutex::new(receive),
            in_flight: Mutex::new(HashMap::new()),
            init_errors: Mutex::new(Vec::new()),
            function_arn: function_arn.to_string(),
        });
        let (stop, stopped) = tokio::sync::watch::channel(false);
        let served = state.clone();
        tokio::spawn(async move {
            loop {
                let mut stopping = stopped.clone();
                let accepted = tokio::select! {
                    a = listener.accept() => a,
                    _ = stopping.wait_for(|s| *s) => return,
                };
                let Ok((stream, _)) = accepted else { continue };
                let state = served.clone();
                let mut stopping = stopped.clone();
                tokio::spawn(async move {
                    let service = service_fn(move |req| {
                        let state = state.clone();
                        async move { Ok::<_, Infallible>(handle(&state, req).await) }
                    });
                    let connection = http1::Builder::new()
                        .keep_alive(true)
                        .serve_connection(TokioIo::new(stream), service);
                    tokio::select! {
                        _ = connection => {}
                        _ = stopping.wait_for(|s| *s) => {}
                    }
                });
            }
        });
        Ok(RuntimeApi {
            addr,
            send,
            state,
            stop,
        })
    }

    /// `host:port`, the value of `AWS_LAMBDA_RUNTIME_API`.
    pub(crate) fn address(&self) -> String {
        self.addr.to_string()
    }

    /// Invokes the function with `event` and waits for its answer: the runtime's response or
    /// error, or [`Answer::Timeout`] once `timeout` has passed since a runtime took it.
    /// `None` when the API stopped first.
    pub(crate) async fn invoke(
        &self,
        request_id: &str,
        event: Vec<u8>,
        timeout: Duration,
    ) -> Option<Answer> {
        let (taken, taken_rx) = oneshot::channel();
        let (answer, answer_rx) = oneshot::channel();
        self.send
            .send(Pending {
                request_id: request_id.to_string(),
                event,
                timeout,
                taken,
                answer,
            })
            .ok()?;
        taken_rx.await.ok()?;
        match tokio::time::timeout(timeout, answer_rx).await {
            Ok(answer) => answer.ok(),
            Err(_) => {
                self.state
                    .in_flight
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .remove(request_id);
                Some(Answer::Timeout)
            }
        }
    }

    /// The `errorType` of each `/init/error` so far.
    pub(crate) fn init_errors(&self) -> Vec<String> {
        self.state
            .init_errors
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Stops serving; a held `/next` is dropped.
    pub(crate) fn stop(&self) {
        let _ = self.stop.send(true);
    }
}

/// Answers one request of a runtime.
async fn handle(state: &State, req: Request<Incoming>) -> Response<Full<Bytes>> {
    let method = req.method().clone();
    let path = req.uri().path().to_string();
    let Some(rest) = path.strip_prefix(PREFIX) else {
        return reply(StatusCode::NOT_FOUND, r#"{"errorMessage":"unknown path"}"#);
    };
    if method == Method::GET && rest == "/invocation/next" {
        return next(state).await;
    }
    if method != Method::POST {
        return reply(
            StatusCode::METHOD_NOT_ALLOWED,
            r#"{"errorMessage":"method"}"#,
        );
    }
    let header_type = req
        .headers()
        .get("Lambda-Runtime-Function-Error-Type")
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    let body = match req.into_body().collect().await {
        Ok(b) => b.to_bytes().to_vec(),
        Err(_) => return reply(StatusCode::BAD_REQUEST, r#"{"errorMessage":"body"}"#),
    };
    if rest == "/init/error" {
        let error_type = error_type(&body, header_type);
        state
            .init_errors
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(error_type);
        return reply(StatusCode::ACCEPTED, r#"{"status":"OK"}"#);
    }
    let Some(tail) = rest.strip_prefix("/invocation/") else {
        return reply(StatusCode::NOT_FOUND, r#"{"errorMessage":"unknown path"}"#);
    };
    let (id, answer) = if let Some(id) = tail.strip_suffix("/response") {
        (id, Answer::Response(body))
    } else if let Some(id) = tail.strip_suffix("/error") {
        let error_type = error_type(&body, header_type);
        (id, Answer::Error { error_type })
    } else {
        return reply(StatusCode::NOT_FOUND, r#"{"errorMessage":"unknown path"}"#);
    };
    let waiting = state
        .in_flight
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .remove(id);
    // An answer after the timeout (or to an id never issued) changes nothing.
    if let Some(waiting) = waiting {
        let _ = waiting.send(answer);
    }
    reply(StatusCode::ACCEPTED, r#"{"status":"OK"}"#)
}

/// `GET /invocation/next`: the next invocation, once there is one.
async fn next(state: &State) -> Response<Full<Bytes>> {
    let pending = {
        let mut queue = state.queue.lock().await;
        queue.recv().await
    };
    let Some(p) = pending else {
        return reply(
            StatusCode::INTERNAL_SERVER_ERROR,
            r#"{"errorMessage":"stopped"}"#,
        );
    };
    let deadline = std::time::SystemTime::now() + p.timeout;
    let deadline_ms = deadline
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis());
    state
        .in_flight
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .insert(p.request_id.clone(), p.answer);
    let _ = p.taken.send(());
    // X-Ray's trace header shape: a root of the time and 96 random bits, a parent of 64.
    let hex = uuid::Uuid::new_v4().simple().to_string();
    let trace = format!(
        "Root=1-{:08x}-{};Parent={};Sampled=0",
        deadline_ms / 1000,
        &hex[..24],
        &hex[16..]
    );
    Response::builder()
        .status(StatusCode::OK)
        .header("Content-Type", "application/json")
        .header("Lambda-Runtime-Aws-Request-Id", &p.request_id)
        .header("Lambda-Runtime-Deadline-Ms", deadline_ms.to_string())
        .header("Lambda-Runtime-Invoked-Function-Arn", &state.function_arn)
        .header("Lambda-Runtime-Trace-Id", trace)
        .body(Full::new(Bytes::from(p.event)))
        .unwrap_or_else(|_| reply(StatusCode::INTERNAL_SERVER_ERROR, "{}"))
}

/// The `errorType` of an error body (`{"errorMessage", "errorType", ...}`), else the header's,
/// else `Unknown`.
fn error_type(body: &[u8], header: Option<String>) -> String {
    serde_json::from_slice::<serde_json::Value>(body)
        .ok()
        .and_then(|v| {
            v.get("errorType")
                .and_then(|t| t.as_str())
                .map(str::to_string)
        })
        .or(header)
        .unwrap_or_else(|| "Unknown".to_string())
}

fn reply(status: StatusCode, body: &'static str) -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(Bytes::from_static(body.as_bytes())));
    *response.status_mut() = status;
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A runtime's loop over plain HTTP: next, then respond or fail.
    async fn runtime_call(
        addr: &str,
        method: &str,
        path: &str,
        body: &str,
    ) -> (u16, Vec<(String, String)>, String) {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let mut s = tokio::net::TcpStream::connect(addr).await.unwrap();
        let req = format!(
            "{method} {PREFIX}{path} HTTP/1.1\r\nHost: x\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        );
        s.write_all(req.as_bytes()).await.unwrap();
        let mut out = String::new();
        s.read_to_string(&mut out).await.unwrap();
        let (head, body) = out.split_once("\r\n\r\n").unwrap();
        let mut lines = head.lines();
        let status = lines
            .next()
            .unwrap()
            .split(' ')
            .nth(1)
            .unwrap()
            .parse()
            .unwrap();
        let headers = lines
            .filter_map(|l| l.split_once(": "))
            .map(|(k, v)| (k.to_ascii_lowercase(), v.to_string()))
            .collect();
        (status, headers, body.to_string())
    }

    #[tokio::test]
    async fn an_invocation_goes_out_on_next_and_comes_back_on_response_or_error() {
        let api = RuntimeApi::start("arn:aws:lambda:us-east-1:000000000000:function:f")
            .await
            .unwrap();
        let addr = api.address();
        let api = Arc::new(api);
        for (tail, body, expected) in [
            ("response", "{}", Answer::Response(b"{}".to_vec())),
            (
                "error",
                r#"{"errorMessage":"boom","errorType":"ValueError"}"#,
                Answer::Error {
                    error_type: "ValueError".into(),
                },
            ),
        ] {
            let invoking = {
                let api = api.clone();
                tokio::spawn(async move {
                    api.invoke(
                        "req-1",
                        br#"{"Records":[]}"#.to_vec(),
                        Duration::from_secs(30),
                    )
                    .await
                })
            };
            let (status, headers, event) = runtime_call(&addr, "GET", "/invocation/next", "").await;
            assert_eq!(status, 200);
            assert_eq!(event, r#"{"Records":[]}"#);
            let header = |name: &str| {
                headers
                    .iter()
                    .find(|(k, _)| k == name)
                    .map(|(_, v)| v.clone())
            };
            assert_eq!(
                header("lambda-runtime-aws-request-id").as_deref(),
                Some("req-1")
            );
            assert!(
                header("lambda-runtime-deadline-ms")
                    .unwrap()
                    .parse::<u64>()
                    .is_ok()
            );
            assert!(
                header("lambda-runtime-invoked-function-arn")
                    .unwrap()
                    .ends_with(":function:f")
            );
            assert!(
                header("lambda-runtime-trace-id")
                    .unwrap()
                    .starts_with("Root=1-")
            );
            let (status, _, _) =
                runtime_call(&addr, "POST", &format!("/invocation/req-1/{tail}"), body).await;
            assert_eq!(status, 202);
            assert_eq!(invoking.await.unwrap(), Some(expected));
        }
        let (status, _, _) = runtime_call(
            &addr,
            "POST",
            "/init/error",
            r#"{"errorType":"ImportModuleError"}"#,
        )
        .await;
        assert_eq!(status, 202);
        assert_eq!(api.init_errors(), vec!["ImportModuleError".to_string()]);
        api.stop();
    }

    #[tokio::test(start_paused = true)]
    async fn no_answer_before_the_function_timeout_is_a_timeout() {
        let api = Arc::new(RuntimeApi::start("arn").await.unwrap());
        let addr = api.address();
        let invoking = {
            let api = api.clone();
            tokio::spawn(async move {
                api.invoke("r", b"{}".to_vec(), Duration::from_secs(3))
                    .await
            })
        };
        let (status, _, _) = runtime_call(&addr, "GET", "/invocation/next", "").await;
        assert_eq!(status, 200);
        assert_eq!(invoking.await.unwrap(), Some(Answer::Timeout));
        // The late answer is accepted and changes nothing.
        let (status, _, _) = runtime_call(&addr, "POST", "/invocation/r/response", "{}").await;
        assert_eq!(status, 202);
        api.stop();
    }
}
