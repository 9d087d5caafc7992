//! One request: read its head and body, pick the protocol, dispatch, encode. Every answer,
//! malformed requests included, is AWS-shaped.

use std::net::SocketAddr;
use std::sync::Arc;

use bytes::Bytes;
use http_body_util::{BodyExt, Full, Limited};
use hyper::body::Incoming;
use hyper::header::{CONTENT_TYPE, HOST, HeaderValue};
use hyper::{Method, Request, Response, StatusCode};
use serde_json::Value;

use crate::emulator::dispatch::dispatch;
use crate::emulator::model::store::Emulator;
use crate::emulator::ops::context::RequestContext;
use crate::emulator::protocol::{json, query};
use crate::emulator::support::errors::SqsError;
use crate::emulator::support::input::queue_name_from_url;

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

pub(super) async fn handle(
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
