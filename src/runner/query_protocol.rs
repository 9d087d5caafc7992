//! `--protocol query`: an HTTP client that speaks the SQS query protocol under aws-sdk-sqs.
//!
//! aws-sdk-sqs only speaks AWS JSON 1.0. [`QueryProtocolClient`] sits where the SDK's HTTP
//! client goes and translates each request and reply: it reads the operation from
//! `X-Amz-Target: AmazonSQS.<Op>`, re-encodes the JSON body as the query form
//! `Action=<Op>&Version=2012-11-05&…` (`encode`), sends it through the SDK's default HTTPS
//! client, and turns the XML reply back into the JSON reply the SDK parses (`decode`).
//!
//! The SDK signs before the HTTP client sees the request, so the signature covers the JSON
//! body, not the form body that is sent. Emulators ignore signatures; real AWS does not, which
//! is why the CLI refuses `--protocol query` against AWS (see docs/query-protocol.md).
//!
//! A step's `wire:` (`wire.rs`) changes how one call goes out — GET, to a queue URL, with
//! `Accept`, without parameters — and replies in JSON (what AWS answers a query request that
//! accepts JSON) are decoded as well as XML ones. Every translated reply carries
//! [`REPLY_FORM_HEADER`], so the call's row can say which form came back.

mod decode;
mod encode;
mod wire;

pub(crate) use wire::{WireForm, WireInterceptor};

use aws_smithy_runtime_api::client::http::{
    HttpClient, HttpConnector, HttpConnectorFuture, HttpConnectorSettings, SharedHttpClient,
    SharedHttpConnector,
};
use aws_smithy_runtime_api::client::orchestrator::{HttpRequest, HttpResponse};
use aws_smithy_runtime_api::client::result::ConnectorError;
use aws_smithy_runtime_api::client::runtime_components::RuntimeComponents;
use aws_smithy_types::body::SdkBody;
use aws_smithy_types::byte_stream::ByteStream;

/// Content type of query protocol requests.
const FORM_CONTENT_TYPE: &str = "application/x-www-form-urlencoded";
/// Content type of the JSON replies handed to the SDK.
const JSON_CONTENT_TYPE: &str = "application/x-amz-json-1.0";
/// The response header (the harness's own, added after the reply arrived) saying which form a
/// query reply came in: `json`, `xml` or `other`.
pub(crate) const REPLY_FORM_HEADER: &str = "x-sqsprobe-reply";

/// An [`HttpClient`] that sends SQS calls over the query protocol (see the module docs).
#[derive(Debug, Clone)]
pub(crate) struct QueryProtocolClient {
    inner: SharedHttpClient,
}

impl QueryProtocolClient {
    /// Wraps the same hyper 1 / rustls (aws-lc) HTTPS client the SDK builds by default.
    pub(crate) fn new() -> Self {
        use aws_smithy_http_client::tls::{Provider, rustls_provider::CryptoMode};
        let inner = aws_smithy_http_client::Builder::new()
            .tls_provider(Provider::Rustls(CryptoMode::AwsLc))
            .build_https();
        Self { inner }
    }

    /// Wraps another client (tests use a recording one).
    pub(crate) fn wrapping(inner: SharedHttpClient) -> Self {
        Self { inner }
    }
}

impl Default for QueryProtocolClient {
    fn default() -> Self {
        Self::new()
    }
}

impl HttpClient for QueryProtocolClient {
    fn http_connector(
        &self,
        settings: &HttpConnectorSettings,
        components: &RuntimeComponents,
    ) -> SharedHttpConnector {
        // The inner client caches its connectors per settings; this wrapper holds no state.
        SharedHttpConnector::new(QueryConnector {
            inner: self.inner.http_connector(settings, components),
        })
    }
}

#[derive(Debug)]
struct QueryConnector {
    inner: SharedHttpConnector,
}

impl HttpConnector for QueryConnector {
    fn call(&self, request: HttpRequest) -> HttpConnectorFuture {
        let inner = self.inner.clone();
        HttpConnectorFuture::new(async move {
            let wire = WireForm::of(&request);
            let (request, operation) = match to_query(request) {
                Ok(pair) => pair,
                Err(e) => return Err(ConnectorError::user(e.into())),
            };
            let request = match wire {
                Some(form) => match form.apply(request) {
                    Ok(rewritten) => rewritten,
                    Err(e) => return Err(ConnectorError::user(e.into())),
                },
                None => request,
            };
            let response = inner.call(request).await?;
            match operation {
                Some(op) => from_query(&op, response).await,
                None => Ok(response),
            }
        })
    }
}

/// Why a request could not be translated.
#[derive(Debug, thiserror::Error)]
enum TranslateError {
    #[error("query protocol: the request body is streamed; only in-memory JSON bodies translate")]
    StreamingBody,
    #[error("query protocol: {0}")]
    Encode(#[from] encode::EncodeError),
}

/// The operation an AWS JSON request names, if it is an SQS one.
fn operation_of(request: &HttpRequest) -> Option<String> {
    let target = request.headers().get("x-amz-target")?;
    let op = target.strip_prefix("AmazonSQS.")?;
    (!op.is_empty()).then(|| op.to_owned())
}

/// Rewrites an AWS JSON request as a query request; requests that are not SQS JSON calls
/// pass unchanged (operation `None`).
fn to_query(mut request: HttpRequest) -> Result<(HttpRequest, Option<String>), TranslateError> {
    let Some(operation) = operation_of(&request) else {
        return Ok((request, None));
    };
    let json = request
        .body()
        .bytes()
        .ok_or(TranslateError::StreamingBody)?
        .to_vec();
    let form = encode::form_body(&operation, &json)?;
    let headers = request.headers_mut();
    headers.remove("x-amz-target");
    headers.remove("x-amzn-query-mode");
    headers.insert("content-type", FORM_CONTENT_TYPE);
    headers.insert("content-length", form.len().to_string());
    *request.body_mut() = SdkBody::from(form);
    Ok((request, Some(operation)))
}

/// Rewrites a query reply as the AWS JSON reply the SDK expects; a reply that is not a query
/// document (an HTML proxy error, say) passes with its body untouched.
async fn from_query(
    operation: &str,
    mut response: HttpResponse,
) -> Result<HttpResponse, ConnectorError> {
    let body = ByteStream::new(response.take_body())
        .collect()
        .await
        .map_err(|e| ConnectorError::io(e.into()))?
        .into_bytes();
    let status = response.status().as_u16();
    let form = reply_form(response.headers().get("content-type"), &body);
    let _ = response.headers_mut().try_insert(REPLY_FORM_HEADER, form);
    // Read by its form first, then the other way (a fallback that costs one failed parse).
    let decoded = match form {
        "json" => decode::json_reply(operation, status, &body)
            .or_else(|| decode::reply(operation, status, &body)),
        _ => decode::reply(operation, status, &body)
            .or_else(|| decode::json_reply(operation, status, &body)),
    };
    let Some(reply) = decoded else {
        *response.body_mut() = SdkBody::from(body);
        return Ok(response);
    };
    let json = serde_json::to_vec(&reply.body).unwrap_or_else(|_| b"{}".to_vec());
    let headers = response.headers_mut();
    headers.insert("content-type", JSON_CONTENT_TYPE);
    headers.insert("content-length", json.len().to_string());
    // The values come from the server's XML: `try_insert` refuses one that is not a valid
    // header value (a control character) instead of panicking like `insert`. A refused request
    // id is dropped; a refused error code is kept readable by replacing what HTTP cannot carry.
    if let Some(id) = reply.request_id.filter(|id| !id.is_empty())
        && !headers.contains_key("x-amzn-requestid")
    {
        let _ = headers.try_insert("x-amzn-RequestId", id);
    }
    if let Some(query_error) = reply.query_error {
        let printable: String = query_error
            .chars()
            .map(|c| {
                if c.is_ascii_graphic() || c == ' ' {
                    c
                } else {
                    '?'
                }
            })
            .collect();
        let _ = headers.try_insert("x-amzn-query-error", printable);
    }
    *response.body_mut() = SdkBody::from(json);
    Ok(response)
}

/// The form of a query reply: what its body is (a JSON document or an XML one), and by its
/// content type only when the body does not say (an empty body, a text page). The bytes are
/// what the reply came in, whatever a server labels them.
fn reply_form(content_type: Option<&str>, body: &[u8]) -> &'static str {
    match body.iter().find(|b| !b.is_ascii_whitespace()) {
        Some(b'{') | Some(b'[') => return "json",
        Some(b'<') => return "xml",
        _ => {}
    }
    let ct = content_type.unwrap_or_default().to_ascii_lowercase();
    if ct.contains("json") {
        "json"
    } else if ct.contains("xml") {
        "xml"
    } else {
        "other"
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use aws_smithy_runtime_api::http::StatusCode;

    fn json_request(target: &str, body: &str) -> HttpRequest {
        let mut r = HttpRequest::new(SdkBody::from(body.to_owned()));
        r.headers_mut().insert("x-amz-target", target.to_owned());
        r.headers_mut().insert("x-amzn-query-mode", "true");
        r.headers_mut()
            .insert("content-type", "application/x-amz-json-1.0");
        r
    }

    #[test]
    fn requests_become_form_posts_without_json_headers() {
        let (r, op) = to_query(json_request(
            "AmazonSQS.DeleteQueue",
            r#"{"QueueUrl":"http://h/1/q"}"#,
        ))
        .unwrap();
        assert_eq!(op.as_deref(), Some("DeleteQueue"));
        assert_eq!(r.headers().get("x-amz-target"), None);
        assert_eq!(r.headers().get("x-amzn-query-mode"), None);
        assert_eq!(r.headers().get("content-type"), Some(FORM_CONTENT_TYPE));
        let body = std::str::from_utf8(r.body().bytes().unwrap()).unwrap();
        assert_eq!(
            body,
            "Action=DeleteQueue&Version=2012-11-05&QueueUrl=http%3A%2F%2Fh%2F1%2Fq"
        );
        assert_eq!(r.headers().get("content-length"), Some("69"));
    }

    #[test]
    fn non_sqs_requests_pass_and_bad_bodies_fail() {
        let (r, op) = to_query(HttpRequest::new(SdkBody::from("x"))).unwrap();
        assert_eq!(op, None);
        assert_eq!(r.body().bytes(), Some(&b"x"[..]));
        assert!(matches!(
            to_query(json_request("AmazonSQS.ListQueues", "not json")),
            Err(TranslateError::Encode(_))
        ));
    }

    async fn translate(status: u16, xml: &str) -> HttpResponse {
        let r = HttpResponse::new(
            StatusCode::try_from(status).unwrap(),
            SdkBody::from(xml.to_owned()),
        );
        from_query("GetQueueUrl", r).await.unwrap()
    }

    #[tokio::test]
    async fn replies_become_json_with_request_id_and_query_error_headers() {
        let r = translate(
            400,
            "<ErrorResponse><Error><Type>Sender</Type><Code>AWS.SimpleQueueService.NonExistentQueue</Code><Message>gone</Message></Error><RequestId>rid</RequestId></ErrorResponse>",
        )
        .await;
        assert_eq!(r.status().as_u16(), 400);
        assert_eq!(r.headers().get("x-amzn-requestid"), Some("rid"));
        assert_eq!(
            r.headers().get("x-amzn-query-error"),
            Some("AWS.SimpleQueueService.NonExistentQueue;Sender")
        );
        assert_eq!(r.headers().get("content-type"), Some(JSON_CONTENT_TYPE));
        let body: serde_json::Value = serde_json::from_slice(r.body().bytes().unwrap()).unwrap();
        assert_eq!(body["message"], "gone");

        let r = translate(
            200,
            "<GetQueueUrlResponse><GetQueueUrlResult><QueueUrl>u</QueueUrl></GetQueueUrlResult><ResponseMetadata><RequestId>r2</RequestId></ResponseMetadata></GetQueueUrlResponse>",
        )
        .await;
        assert_eq!(r.headers().get("x-amzn-query-error"), None);
        assert_eq!(r.body().bytes(), Some(&br#"{"QueueUrl":"u"}"#[..]));

        let r = translate(502, "<html>bad gateway</html>").await;
        assert_eq!(r.body().bytes(), Some(&b"<html>bad gateway</html>"[..]));
    }

    #[tokio::test]
    async fn control_characters_in_reply_headers_do_not_panic() {
        let r = translate(
            400,
            "<ErrorResponse><Error><Type>Sender</Type><Code>Bad&#10;Code</Code><Message>m</Message></Error><RequestId>a&#10;b</RequestId></ErrorResponse>",
        )
        .await;
        assert_eq!(r.status().as_u16(), 400);
        assert_eq!(r.headers().get("x-amzn-requestid"), None);
        assert_eq!(
            r.headers().get("x-amzn-query-error"),
            Some("Bad?Code;Sender")
        );
    }

    #[tokio::test]
    async fn the_reply_form_is_noted_and_a_mislabelled_reply_still_decodes() {
        let mut r = HttpResponse::new(
            StatusCode::try_from(200).unwrap(),
            SdkBody::from(
                "<GetQueueUrlResponse><GetQueueUrlResult><QueueUrl>u</QueueUrl></GetQueueUrlResult></GetQueueUrlResponse>",
            ),
        );
        r.headers_mut().insert("content-type", "application/json");
        let r = from_query("GetQueueUrl", r).await.unwrap();
        assert_eq!(r.headers().get(REPLY_FORM_HEADER), Some("xml"));
        assert_eq!(r.body().bytes(), Some(&br#"{"QueueUrl":"u"}"#[..]));
        assert_eq!(reply_form(None, b"  {\"a\":1}"), "json");
        assert_eq!(reply_form(Some("text/plain"), b"<x/>"), "xml");
        assert_eq!(reply_form(Some("application/json"), b""), "json");
        assert_eq!(reply_form(None, b""), "other");
    }
}
