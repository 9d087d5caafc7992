//! AWS JSON 1.0: `X-Amz-Target: AmazonSQS.<Op>`, JSON body in and out.
//!
//! Errors carry `__type` in the body and the legacy code in `x-amzn-query-error`
//! (`<Code>;Sender`), which is where SDKs read `err.code()` from.

use serde_json::{Map, Value, json};

use crate::emulator::support::errors::SqsError;

/// Content type of JSON protocol replies.
pub(crate) const CONTENT_TYPE: &str = "application/x-amz-json-1.0";

/// The operation named by an `X-Amz-Target` header.
pub(crate) fn operation(target: &str) -> Option<&str> {
    target
        .strip_prefix("AmazonSQS.")
        .filter(|op| !op.is_empty())
}

/// Parses a request body; an empty body is an empty parameter set.
pub(crate) fn decode(body: &[u8]) -> Result<Map<String, Value>, SqsError> {
    if body.iter().all(u8::is_ascii_whitespace) {
        return Ok(Map::new());
    }
    match serde_json::from_slice::<Value>(body) {
        Ok(Value::Object(map)) => Ok(map),
        Ok(_) => Err(SqsError::serialization(
            "Request body must be a JSON object.",
        )),
        Err(e) => Err(SqsError::serialization(format!("Malformed JSON: {e}"))),
    }
}

/// Body of a successful reply.
pub(crate) fn encode(value: &Value) -> Vec<u8> {
    serde_json::to_vec(value).unwrap_or_else(|_| b"{}".to_vec())
}

/// Body and `x-amzn-query-error` header value of an error reply.
pub(crate) fn encode_error(error: &SqsError) -> (Vec<u8>, String) {
    let body = json!({ "__type": error.json_type(), "message": error.message });
    let fault = error.spec.fault();
    (encode(&body), format!("{};{}", error.code(), fault))
}
