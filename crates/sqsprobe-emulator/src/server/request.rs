//! One request: read its head and (bounded) body, pick the protocol and service, dispatch,
//! encode. Every answer, malformed requests included, is AWS-shaped.
//!
//! [`answer`] is the pure part (head and body in, response out) so that tests can throw
//! arbitrary input at it without sockets.

use std::borrow::Cow;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full, LengthLimitError, Limited};
use hyper::body::{Body as _, Incoming};
use hyper::header::{AUTHORIZATION, CONTENT_TYPE, HOST, HeaderName, HeaderValue};
use hyper::http::request::Parts;
use hyper::{Method, Request, Response, StatusCode};
use serde_json::Value;

use crate::dispatch::dispatch;
use crate::model::store::Emulator;
use crate::ops::answer::Answer;
use crate::ops::context::RequestContext;
use crate::protocol::{json, query, sts};
use crate::support::audit::{AuditObserver, Called, LEDGER_PATH, Refusal};
use crate::support::errors::{SqsError, SqsResult};
use crate::support::input::{Params, queue_name_from_url};
use crate::support::{ids, sigv4};

/// What the answer depends on besides the body.
///
/// Borrowed from the request's parts: copying the head into owned strings was a measurable
/// part of every request (docs/performance.md), and the answer only reads it.
/// `Cow` so that tests can build heads of their own.
#[derive(Debug, Clone)]
pub(crate) struct Head<'a> {
    pub method: Method,
    /// Path of the request URI (a query request may POST to a queue URL).
    pub path: Cow<'a, str>,
    /// Query string of the request URI.
    pub uri_query: Cow<'a, str>,
    /// Host the client addressed (queue URLs are built from it).
    pub host: Cow<'a, str>,
    /// `X-Amz-Target` (present: AWS JSON 1.0).
    pub target: Option<Cow<'a, str>>,
    /// `Authorization` (its SigV4 credential scope names the service).
    pub authorization: Option<Cow<'a, str>>,
    /// `X-Amzn-Trace-Id`.
    pub trace_header: Option<Cow<'a, str>>,
    /// `Accept`: a query request accepting `application/json` is answered in JSON.
    pub accept: Option<Cow<'a, str>>,
    /// `amz-sdk-request` (`attempt=2; max=3`), read only when an audit watches.
    pub sdk_request: Option<Cow<'a, str>>,
}

impl<'a> Head<'a> {
    /// The head of a request as it arrived: `local` names the host when the request has no
    /// usable `Host` header (queue URLs are built from it); `audited` reads what only an audit
    /// keeps.
    fn of(parts: &'a Parts, local: std::net::SocketAddr, audited: bool) -> Head<'a> {
        // Header names as constants: a `&str` name is parsed and hashed again on every lookup.
        let header = |name: &HeaderName| {
            parts
                .headers
                .get(name)
                .and_then(|v| v.to_str().ok())
                .map(Cow::Borrowed)
        };
        let host = header(&HOST)
            .or_else(|| parts.uri.authority().map(|a| Cow::Borrowed(a.as_str())))
            .filter(|h| !h.is_empty() && h.bytes().all(|b| b.is_ascii_graphic()))
            .unwrap_or_else(|| Cow::Owned(local.to_string()));
        Head {
            method: parts.method.clone(),
            path: Cow::Borrowed(parts.uri.path()),
            uri_query: Cow::Borrowed(parts.uri.query().unwrap_or_default()),
            host,
            target: header(&X_AMZ_TARGET),
            authorization: header(&AUTHORIZATION),
            trace_header: header(&X_AMZN_TRACE_ID),
            accept: header(&hyper::header::ACCEPT),
            sdk_request: audited.then(|| header(&AMZ_SDK_REQUEST)).flatten(),
        }
    }
}

const X_AMZ_TARGET: HeaderName = HeaderName::from_static("x-amz-target");
const X_AMZN_TRACE_ID: HeaderName = HeaderName::from_static("x-amzn-trace-id");
const AMZ_SDK_REQUEST: HeaderName = HeaderName::from_static("amz-sdk-request");
/// Sent as `x-amzn-requestid` (HTTP/1 header names are case-insensitive; hyper writes them
/// lower-case, as AWS's own answers over HTTP/2 do).
const X_AMZN_REQUEST_ID: HeaderName = HeaderName::from_static("x-amzn-requestid");
/// The query protocol's error code in a JSON error, for SDKs that speak both: a constant, since
/// an insert by string name parses the name on every error (the no-op is one).
const X_AMZN_QUERY_ERROR: HeaderName = HeaderName::from_static("x-amzn-query-error");

/// Serves one HTTP request; the body must arrive within `read_timeout`.
pub(super) async fn handle(
    emu: Arc<Emulator>,
    req: Request<Incoming>,
    local: std::net::SocketAddr,
    read_timeout: Duration,
) -> Response<Full<Bytes>> {
    let request_id = ids::hyphenated(ids::uuid_v4());
    let (parts, body) = req.into_parts();
    let head = Head::of(&parts, local, emu.config.audit.is_some());
    let limit = emu.config.max_request_bytes;
    // A Content-Length over the cap is refused before a byte of the body is waited for.
    if body.size_hint().lower() > limit as u64 {
        return error(&head, &SqsError::request_too_large(limit), &request_id);
    }
    let read = tokio::time::timeout(read_timeout, Limited::new(body, limit).collect());
    let body = match read.await {
        Ok(Ok(collected)) => collected.to_bytes(),
        Ok(Err(e)) if e.is::<LengthLimitError>() => {
            return error(&head, &SqsError::request_too_large(limit), &request_id);
        }
        // Anything else is a body that is not valid HTTP: a malformed chunk, or one cut short.
        Ok(Err(e)) => return error(&head, &unreadable_body(&head, &*e), &request_id),
        Err(_) => {
            let timeout = SqsError::request_timeout(read_timeout);
            return error(&head, &timeout, &request_id);
        }
    };
    answer(&emu, &head, &body, &request_id).await
}

/// The 400 for a body that could not be read as HTTP (a chunk size that is not hexadecimal, a
/// body that ended early): a JSON request's body is not a document of the operation's shape
/// (`SerializationException`), a query request's parameters are not well formed
/// (`InvalidParameterValue`). What AWS answers is not recorded (`docs/aws-facts.md`, §13).
fn unreadable_body(head: &Head<'_>, cause: &(dyn std::error::Error + '_)) -> SqsError {
    let mut message = format!("The request body could not be read: {cause}");
    let mut source = cause.source();
    while let Some(inner) = source {
        message.push_str(&format!(": {inner}"));
        source = inner.source();
    }
    message.push('.');
    if head.target.is_some() {
        SqsError::serialization(message)
    } else {
        SqsError::invalid_parameter_value(message)
    }
}

/// Answers a whole request in-process, as [`handle`] does over a connection, with the same
/// body limit (a body over it gets the same `413`-shaped SQS error).
pub(super) async fn answer_whole(
    emu: &Arc<Emulator>,
    req: Request<Bytes>,
    local: std::net::SocketAddr,
) -> Response<Bytes> {
    let request_id = ids::hyphenated(ids::uuid_v4());
    let (parts, body) = req.into_parts();
    let head = Head::of(&parts, local, emu.config.audit.is_some());
    let limit = emu.config.max_request_bytes;
    let response = if body.len() > limit {
        error(&head, &SqsError::request_too_large(limit), &request_id)
    } else {
        answer(emu, &head, &body, &request_id).await
    };
    let (parts, body) = response.into_parts();
    // A `Full` body is one chunk that is already there.
    let bytes = body
        .collect()
        .await
        .map(|c| c.to_bytes())
        .unwrap_or_default();
    Response::from_parts(parts, bytes)
}

/// The refusal a request signed with one of the keys `serve --reject-access-key` or
/// `--expire-access-key` names gets, before anything else is read of it.
fn refused_credentials(emu: &Emulator, ctx: &RequestContext, json: bool) -> Option<SqsError> {
    let key = ctx.access_key.as_deref()?;
    if emu.config.expire_access_keys.iter().any(|k| k == key) {
        return Some(SqsError::expired_token());
    }
    emu.config
        .reject_access_keys
        .iter()
        .any(|k| k == key)
        .then(|| SqsError::unknown_access_key(json))
}

/// The answer to a request whose body has been read.
pub(crate) async fn answer(
    emu: &Arc<Emulator>,
    head: &Head<'_>,
    body: &[u8],
    request_id: &str,
) -> Response<Full<Bytes>> {
    if let Some(audit) = &emu.config.audit
        && head.path == LEDGER_PATH
    {
        return ledger(audit.as_ref(), head, body, request_id);
    }
    let scope = sigv4::scope(head.authorization.as_deref(), None);
    let mut ctx = RequestContext {
        host: head.host.clone().into_owned(),
        query: head.target.is_none(),
        trace_header: head.trace_header.as_deref().map(str::to_owned),
        region: scope
            .region
            .map_or_else(|| emu.config.region.clone(), Cow::into_owned),
        access_key: scope.access_key.map(str::to_owned),
    };
    if let Some(target) = &head.target {
        if let Some(e) = refused_credentials(emu, &ctx, true) {
            return json_error(&e, request_id);
        }
        let Some(operation) = json::operation(target) else {
            return json_error(&SqsError::unknown_operation(), request_id);
        };
        let params = match json::decode(body) {
            Ok(p) => p,
            Err(e) => return json_error(&e, request_id),
        };
        return match dispatch_seen(emu, head, operation, &params, &ctx, request_id).await {
            Ok(answer) => response(
                200,
                json::CONTENT_TYPE,
                json::encode_answer(&answer),
                request_id,
            ),
            Err(e) => json_error(&e, request_id),
        };
    }
    let form = (head.method == Method::POST).then_some(body);
    let pairs = match query::parse_pairs(&head.uri_query, form) {
        Ok(pairs) => pairs,
        Err(e) => return error(head, &e, request_id),
    };
    if let Some(e) = refused_credentials(emu, &ctx, false) {
        return error(head, &e, request_id);
    }
    if sts::is_sts(head.authorization.as_deref(), &pairs) {
        let (status, body) = sts::answer(&emu.config.account_id, &pairs, request_id);
        return response(status, sts::CONTENT_TYPE, body.into_bytes(), request_id);
    }
    let presigned = pairs
        .iter()
        .find(|(k, _)| k == "X-Amz-Credential")
        .map(|(_, v)| sigv4::scope(None, Some(v)));
    if let Some(scope) = presigned.filter(|_| head.authorization.is_none()) {
        if let Some(region) = scope.region {
            ctx.region = region.into_owned();
        }
        ctx.access_key = scope.access_key.map(str::to_owned);
    }
    let wants_json = head
        .accept
        .as_deref()
        .is_some_and(|a| a.contains("application/json"));
    let query_error = |e: &SqsError| query_error(e, wants_json, request_id);
    let (action, mut params) = match query::decode(pairs) {
        Ok(decoded) => decoded,
        Err(e) => return query_error(&e),
    };
    let at_queue = head.path.trim_matches('/').contains('/');
    let Some(action) = action.filter(|a| !a.is_empty()) else {
        if head.method == Method::GET && at_queue {
            let body = query::unknown_operation_body().as_bytes().to_vec();
            return response(404, query::CONTENT_TYPE, body, request_id);
        }
        return query_error(&SqsError::missing_parameter("Action"));
    };
    // Service-level actions are not valid at a queue's URL (LocalStack AWS-validated
    // `test_get_create_queue_fails`, `test_get_list_queues_fails`).
    if at_queue && matches!(action.as_str(), "CreateQueue" | "ListQueues") {
        return query_error(&SqsError::invalid_action(&action));
    }
    // A query request may address the queue by POSTing to its URL.
    if !params.contains_key("QueueUrl") && at_queue && queue_name_from_url(&head.path).is_ok() {
        params.insert(
            "QueueUrl".into(),
            Value::String(format!("http://{}{}", ctx.host, head.path)),
        );
    }
    let params = Params::Object(params);
    match dispatch_seen(emu, head, &action, &params, &ctx, request_id).await {
        Ok(answer) if wants_json => response(
            200,
            query::JSON_CONTENT_TYPE,
            query::encode_json_answer(&action, &answer, request_id),
            request_id,
        ),
        Ok(answer) => response(
            200,
            query::CONTENT_TYPE,
            query::encode_answer(&action, &answer, request_id),
            request_id,
        ),
        Err(e) => query_error(&e),
    }
}

/// A POST to the audit's ledger: its lines told to the audit before the answer (204), so a
/// commit posted before an acknowledgement is always heard before it. Anything else there is
/// refused in plain text: this path is the audit's, not SQS's.
fn ledger(
    audit: &dyn AuditObserver,
    head: &Head<'_>,
    body: &[u8],
    request_id: &str,
) -> Response<Full<Bytes>> {
    const TEXT: &str = "text/plain; charset=utf-8";
    if head.method != Method::POST {
        let said = format!("{LEDGER_PATH} takes a POST of business keys, one a line\n");
        let mut resp = response(405, TEXT, said.into_bytes(), request_id);
        resp.headers_mut()
            .insert(hyper::header::ALLOW, HeaderValue::from_static("POST"));
        return resp;
    }
    let Ok(text) = std::str::from_utf8(body) else {
        let said = b"the ledger's body must be UTF-8 text\n".to_vec();
        return response(400, TEXT, said, request_id);
    };
    if text.lines().all(|l| l.trim().is_empty()) {
        let said = b"the ledger's body holds no business key\n".to_vec();
        return response(400, TEXT, said, request_id);
    }
    audit.ledger(text);
    response(204, TEXT, Vec::new(), request_id)
}

/// [`dispatch`], and an audit (when one watches) told of the request and its answer.
async fn dispatch_seen(
    emu: &Arc<Emulator>,
    head: &Head<'_>,
    operation: &str,
    params: &Params<'_>,
    ctx: &RequestContext,
    request_id: &str,
) -> SqsResult<Answer> {
    let Some(audit) = &emu.config.audit else {
        return dispatch(emu, operation, params.input(), ctx).await;
    };
    let started = std::time::SystemTime::now();
    let clock = std::time::Instant::now();
    let result = dispatch(emu, operation, params.input(), ctx).await;
    let sdk_attempt = head.sdk_request.as_deref().and_then(|h| {
        h.split(';')
            .find_map(|part| part.trim().strip_prefix("attempt="))
            .and_then(|n| n.trim().parse().ok())
    });
    // An audit reads answers in the JSON protocol's shape, built here only for it.
    let value = result.as_ref().map(Answer::to_value);
    audit.called(&Called {
        operation,
        params: &params.to_map(),
        answer: match &value {
            Ok(value) => Ok(value.as_ref()),
            Err(e) => Err(Refusal {
                status: e.status(),
                code: e.code(),
                shape: e.spec.shape.to_string(),
                sender_fault: e.spec.sender_fault,
                message: e.message.clone(),
            }),
        },
        protocol: if ctx.query { "query" } else { "json" },
        request_id,
        sdk_attempt,
        access_key: ctx.access_key.as_deref(),
        started,
        latency: clock.elapsed(),
    });
    result
}

/// An error in the protocol the request speaks (STS-shaped for STS requests).
fn error(head: &Head<'_>, error: &SqsError, request_id: &str) -> Response<Full<Bytes>> {
    if head.target.is_some() {
        json_error(error, request_id)
    } else if sts::is_sts(head.authorization.as_deref(), &[]) {
        let body = sts::encode_error(error, request_id).into_bytes();
        response(error.status(), sts::CONTENT_TYPE, body, request_id)
    } else {
        query_error(error, false, request_id)
    }
}

fn response(
    status: u16,
    content_type: &'static str,
    body: Vec<u8>,
    request_id: &str,
) -> Response<Full<Bytes>> {
    let mut resp = Response::new(Full::new(Bytes::from(body)));
    *resp.status_mut() = StatusCode::from_u16(status).unwrap_or(StatusCode::BAD_REQUEST);
    let headers = resp.headers_mut();
    headers.insert(CONTENT_TYPE, HeaderValue::from_static(content_type));
    if let Ok(id) = HeaderValue::from_str(request_id) {
        headers.insert(X_AMZN_REQUEST_ID, id);
    }
    resp
}

fn json_error(error: &SqsError, request_id: &str) -> Response<Full<Bytes>> {
    let (body, query_error) = json::encode_error(error);
    let mut resp = response(error.status(), json::CONTENT_TYPE, body, request_id);
    if let Ok(v) = HeaderValue::from_str(&query_error) {
        resp.headers_mut().insert(X_AMZN_QUERY_ERROR, v);
    }
    resp
}

fn query_error(error: &SqsError, json: bool, request_id: &str) -> Response<Full<Bytes>> {
    if json {
        let body = query::encode_json_error(error, request_id);
        return response(error.status(), query::JSON_CONTENT_TYPE, body, request_id);
    }
    response(
        error.status(),
        query::CONTENT_TYPE,
        query::encode_error(error, request_id).into_bytes(),
        request_id,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::support::audit::{Ack, Delivery};
    use crate::support::config::EmulatorConfig;
    use std::sync::Mutex;

    /// An audit that keeps what its ledger was told.
    #[derive(Debug, Default)]
    struct Heard(Mutex<Vec<String>>);

    impl AuditObserver for Heard {
        fn delivered(&self, _: Delivery) {}
        fn acknowledged(&self, _: Ack) {}
        fn ledger(&self, lines: &str) {
            self.0.lock().unwrap().push(lines.to_string());
        }
    }

    fn head(method: Method) -> Head<'static> {
        Head {
            method,
            path: LEDGER_PATH.into(),
            uri_query: "".into(),
            host: "localhost:9324".into(),
            target: None,
            authorization: None,
            trace_header: None,
            accept: None,
            sdk_request: None,
        }
    }

    /// While an audit watches, a POST to its ledger is told to it before the 204; anything else
    /// there is refused in plain words. Without an audit the path is an ordinary (bad) SQS
    /// request.
    #[tokio::test]
    async fn the_audit_ledger_hears_a_post_before_answering_it() {
        let heard = Arc::new(Heard::default());
        let emu = Arc::new(Emulator::new(EmulatorConfig {
            audit: Some(heard.clone()),
            ..EmulatorConfig::default()
        }));
        let posted = answer(&emu, &head(Method::POST), b"b-1\nb-2\n", "r1").await;
        assert_eq!(posted.status(), 204);
        assert_eq!(*heard.0.lock().unwrap(), ["b-1\nb-2\n"]);
        let got = answer(&emu, &head(Method::GET), b"", "r2").await;
        assert_eq!(got.status(), 405);
        assert_eq!(got.headers()[hyper::header::ALLOW], "POST");
        for body in [&b"  \n"[..], &[0xff, 0xfe][..]] {
            let refused = answer(&emu, &head(Method::POST), body, "r3").await;
            assert_eq!(refused.status(), 400);
        }
        assert_eq!(heard.0.lock().unwrap().len(), 1);

        let plain = Arc::new(Emulator::new(EmulatorConfig::default()));
        let sqs = answer(&plain, &head(Method::POST), b"b-1", "r4").await;
        assert_eq!(sqs.status(), 400);
        let body = sqs.into_body().collect().await.unwrap().to_bytes();
        assert!(
            String::from_utf8_lossy(&body).contains("<ErrorResponse"),
            "{body:?}"
        );
    }
}
