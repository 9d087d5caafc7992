//! aws-sdk-sqs's HTTP client answered by the emulator in this process (feature `sdk`): each
//! request is handed to [`InProcess::answer`](crate::InProcess::answer), never sent through a
//! socket.
//!
//! With no socket in between, every wait is a tokio timer, so a paused runtime
//! (`#[tokio::test(start_paused = true)]`, or `sqsprobe run --clock virtual`) jumps to the next
//! deadline whenever all tasks wait, and a 30-second visibility timeout lapses at once, without a
//! request ever being caught in flight. Everything above the HTTP client is the same as over a
//! socket: the SDK serialises, signs, applies timeouts and retries, and parses the reply; a
//! client that wraps the SDK's HTTP client (sqsprobe's query-protocol and fault clients) wraps
//! this one as it wraps a real one.

use aws_smithy_runtime_api::client::http::{
    HttpClient, HttpConnector, HttpConnectorFuture, HttpConnectorSettings, SharedHttpConnector,
};
use aws_smithy_runtime_api::client::orchestrator::{HttpRequest, HttpResponse};
use aws_smithy_runtime_api::client::result::ConnectorError;
use aws_smithy_runtime_api::client::runtime_components::RuntimeComponents;
use aws_smithy_types::body::SdkBody;

/// An [`HttpClient`] that hands every request to the in-process emulator.
#[derive(Debug, Clone)]
pub struct InProcessClient {
    emulator: crate::InProcess,
}

impl InProcessClient {
    /// A client answered by `emulator`.
    pub fn new(emulator: crate::InProcess) -> InProcessClient {
        InProcessClient { emulator }
    }
}

impl HttpClient for InProcessClient {
    fn http_connector(
        &self,
        _settings: &HttpConnectorSettings,
        _components: &RuntimeComponents,
    ) -> SharedHttpConnector {
        SharedHttpConnector::new(self.clone())
    }
}

impl HttpConnector for InProcessClient {
    fn call(&self, request: HttpRequest) -> HttpConnectorFuture {
        let emulator = self.emulator.clone();
        HttpConnectorFuture::new(async move {
            let request = to_hyper(request).map_err(|e| ConnectorError::user(e.into()))?;
            let response = emulator.answer(request).await;
            from_hyper(response).map_err(|e| ConnectorError::other(e.into(), None))
        })
    }
}

/// Why a request or reply could not cross between the SDK's types and the emulator's.
#[derive(Debug, thiserror::Error)]
enum CrossError {
    #[error("in-process emulator: the request body is streamed; only in-memory bodies are sent")]
    StreamingBody,
    #[error("in-process emulator: {0}")]
    Http(String),
}

fn to_hyper(request: HttpRequest) -> Result<hyper::Request<bytes::Bytes>, CrossError> {
    let body = request
        .body()
        .bytes()
        .ok_or(CrossError::StreamingBody)?
        .to_vec();
    let mut builder = hyper::Request::builder()
        .method(request.method())
        .uri(request.uri());
    for (name, value) in request.headers().iter() {
        builder = builder.header(name, value);
    }
    builder
        .body(bytes::Bytes::from(body))
        .map_err(|e| CrossError::Http(e.to_string()))
}

fn from_hyper(response: hyper::Response<bytes::Bytes>) -> Result<HttpResponse, CrossError> {
    let (parts, body) = response.into_parts();
    let status = parts
        .status
        .as_u16()
        .try_into()
        .map_err(|_| CrossError::Http(format!("status {}", parts.status)))?;
    let mut out = HttpResponse::new(status, SdkBody::from(body));
    for (name, value) in &parts.headers {
        if let Ok(value) = value.to_str() {
            out.headers_mut()
                .append(name.as_str().to_owned(), value.to_owned());
        }
    }
    Ok(out)
}
