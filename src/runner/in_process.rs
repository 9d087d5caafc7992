//! The SDK's HTTP client for the embedded emulator under a virtual clock: each request is
//! answered by the emulator in this process ([`sqsprobe_emulator::InProcess`]), never sent
//! through a socket.
//!
//! With no socket in between, every wait of a run is a tokio timer, so a paused runtime can
//! jump to the next deadline whenever all tasks wait without a request ever being caught in
//! flight (see [`super::clock`]). Everything above the HTTP client is the same as over a
//! socket: the SDK serialises, signs, applies timeouts and parses the reply, the query
//! protocol client and the fault client wrap this one as they wrap a real one.

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
    emulator: sqsprobe_emulator::InProcess,
}

impl InProcessClient {
    /// A client answered by `emulator`.
    pub fn new(emulator: sqsprobe_emulator::InProcess) -> InProcessClient {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_sdk_reaches_the_emulator_without_a_socket() {
        let emu = sqsprobe_emulator::spawn(
            "127.0.0.1:0".parse().unwrap(),
            sqsprobe_emulator::EmulatorConfig::default(),
        )
        .await
        .unwrap();
        let conf = aws_sdk_sqs::Config::builder()
            .behavior_version(aws_sdk_sqs::config::BehaviorVersion::latest())
            .region(aws_sdk_sqs::config::Region::new("eu-west-1"))
            .endpoint_url(emu.endpoint_url())
            .credentials_provider(aws_sdk_sqs::config::Credentials::new(
                "k", "s", None, None, "test",
            ))
            .http_client(InProcessClient::new(emu.in_process()))
            .build();
        let sqs = aws_sdk_sqs::Client::from_conf(conf);
        let url = sqs
            .create_queue()
            .queue_name("inproc")
            .send()
            .await
            .unwrap()
            .queue_url
            .unwrap();
        assert!(
            url.starts_with(&emu.endpoint_url()) && url.ends_with("/inproc"),
            "queue URLs name the endpoint, as over a socket: {url}"
        );
        sqs.send_message()
            .queue_url(&url)
            .message_body("b")
            .send()
            .await
            .unwrap();
        let got = sqs.receive_message().queue_url(&url).send().await.unwrap();
        assert_eq!(got.messages.unwrap()[0].body.as_deref(), Some("b"));
        let err = sqs
            .get_queue_url()
            .queue_name("missing")
            .send()
            .await
            .unwrap_err();
        use aws_sdk_sqs::error::ProvideErrorMetadata;
        assert_eq!(err.code(), Some("AWS.SimpleQueueService.NonExistentQueue"));
        emu.shutdown().await;
    }
}
