//! Helpers for unit tests: an emulator on tokio's (pausable) clock, driven without HTTP.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};

use crate::dispatch::dispatch;
use crate::model::store::Emulator;
use crate::ops::context::RequestContext;
use crate::support::clock::TokioClock;
use crate::support::config::EmulatorConfig;
use crate::support::errors::SqsResult;

/// An emulator whose clock follows tokio time, so `tokio::time::advance` moves it.
pub(crate) fn emulator() -> Arc<Emulator> {
    emulator_with(EmulatorConfig::default())
}

/// Same, with a given configuration.
pub(crate) fn emulator_with(config: EmulatorConfig) -> Arc<Emulator> {
    Arc::new(Emulator::new(EmulatorConfig {
        clock: Some(Arc::new(TokioClock::new())),
        ..config
    }))
}

/// An emulator with these chaos settings, on tokio's clock.
pub(crate) fn emulator_with_chaos(chaos: crate::support::chaos::Chaos) -> Arc<Emulator> {
    emulator_with(EmulatorConfig {
        chaos,
        ..EmulatorConfig::default()
    })
}

/// Calls one operation with JSON-protocol parameters.
pub(crate) async fn call(emu: &Arc<Emulator>, operation: &str, params: Value) -> SqsResult<Value> {
    let ctx = RequestContext {
        host: "localhost:9324".into(),
        query: false,
        trace_header: None,
        region: "us-east-1".into(),
        access_key: None,
    };
    // Through the JSON protocol's reader, as a request's body is read: a flat object's
    // members in place, anything else as `serde_json` reads it.
    let body = match &params {
        Value::Object(_) => serde_json::to_vec(&params).unwrap_or_default(),
        _ => b"{}".to_vec(),
    };
    let params = crate::protocol::json::decode(&body)?;
    dispatch(emu, operation, params.input(), &ctx)
        .await
        .map(crate::ops::answer::Answer::into_value)
}

/// Creates a queue and returns its URL.
/// A FIFO queue `f.fifo` with content-based deduplication, the shape most FIFO tests want.
pub(crate) async fn create_fifo(emu: &Arc<Emulator>) -> String {
    create(
        emu,
        "f.fifo",
        json!({"FifoQueue": "true", "ContentBasedDeduplication": "true"}),
    )
    .await
}

pub(crate) async fn create(emu: &Arc<Emulator>, name: &str, attributes: Value) -> String {
    let out = call(
        emu,
        "CreateQueue",
        json!({ "QueueName": name, "Attributes": attributes }),
    )
    .await
    .unwrap();
    out["QueueUrl"].as_str().unwrap().to_owned()
}

/// Sends a body to a standard queue and returns the MessageId.
pub(crate) async fn send(emu: &Arc<Emulator>, url: &str, body: &str) -> String {
    let out = call(
        emu,
        "SendMessage",
        json!({ "QueueUrl": url, "MessageBody": body }),
    )
    .await
    .unwrap();
    out["MessageId"].as_str().unwrap().to_owned()
}

/// Short-polls up to `max` messages with extra parameters merged in.
pub(crate) async fn receive(emu: &Arc<Emulator>, url: &str, max: u32, extra: Value) -> Vec<Value> {
    let mut params = json!({ "QueueUrl": url, "MaxNumberOfMessages": max, "WaitTimeSeconds": 0 });
    if let (Some(p), Some(e)) = (params.as_object_mut(), extra.as_object()) {
        p.extend(e.clone());
    }
    let out = call(emu, "ReceiveMessage", params).await.unwrap();
    out.get("Messages")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default()
}

/// One queue attribute.
pub(crate) async fn attribute(emu: &Arc<Emulator>, url: &str, name: &str) -> String {
    let out = call(
        emu,
        "GetQueueAttributes",
        json!({ "QueueUrl": url, "AttributeNames": [name] }),
    )
    .await
    .unwrap();
    out["Attributes"][name]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

/// Advances paused tokio time.
pub(crate) async fn advance(seconds: u64) {
    tokio::time::advance(Duration::from_secs(seconds)).await;
}

/// Query-protocol form pairs from string pairs.
pub(crate) fn pairs(items: &[(&str, &str)]) -> Vec<(String, String)> {
    items
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}
