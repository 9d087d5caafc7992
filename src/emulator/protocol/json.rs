//! AWS JSON 1.0: `X-Amz-Target: AmazonSQS.<Op>`, JSON body in and out.
//!
//! Errors carry `__type` in the body and the legacy code in `x-amzn-query-error`
//! (`<Code>;Sender`), which is where SDKs read `err.code()` from.
//!
//! Bodies nested deeper than [`MAX_DEPTH`] are refused (`SerializationException`) before they
//! are parsed: the deepest SQS request (a batch entry's message attribute's list value) nests 5.

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

/// Deepest nesting of arrays and objects accepted in a request body.
pub(crate) const MAX_DEPTH: usize = 32;

/// The deepest nesting of `[` / `{` in a JSON text, outside strings; stops counting past
/// `limit`. Malformed text is measured as far as it goes (the parser reports the rest).
fn nesting_depth(body: &[u8], limit: usize) -> usize {
    let (mut depth, mut deepest, mut in_string, mut escaped) = (0usize, 0usize, false, false);
    for &b in body {
        if in_string {
            match (escaped, b) {
                (true, _) => escaped = false,
                (false, b'\\') => escaped = true,
                (false, b'"') => in_string = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                deepest = deepest.max(depth);
                if deepest > limit {
                    break;
                }
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    deepest
}

/// Parses a request body; an empty body is an empty parameter set.
pub(crate) fn decode(body: &[u8]) -> Result<Map<String, Value>, SqsError> {
    if body.iter().all(u8::is_ascii_whitespace) {
        return Ok(Map::new());
    }
    if nesting_depth(body, MAX_DEPTH) > MAX_DEPTH {
        return Err(SqsError::serialization(format!(
            "Request body nests deeper than {MAX_DEPTH} levels."
        )));
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn depth_is_counted_outside_strings() {
        assert_eq!(nesting_depth(br#"{"a": [1, {"b": "[[[{{{"}]}"#, 99), 3);
        assert_eq!(nesting_depth(br#"{"a": "\"[[[["}"#, 99), 1);
        assert_eq!(nesting_depth(b"[[[[", 2), 3);
    }

    #[test]
    fn deep_bodies_are_refused_shallow_ones_parsed() {
        let deep = format!(
            "{{\"a\":{}{}}}",
            "[".repeat(MAX_DEPTH),
            "]".repeat(MAX_DEPTH)
        );
        let err = decode(deep.as_bytes()).unwrap_err();
        assert_eq!(err.code(), "SerializationException");
        assert!(err.message.contains("deeper than 32"), "{err}");
        let ok = format!(
            "{{\"a\":{}{}}}",
            "[".repeat(MAX_DEPTH - 1),
            "]".repeat(MAX_DEPTH - 1)
        );
        assert!(decode(ok.as_bytes()).is_ok());
        let huge = "[".repeat(1_000_000);
        assert!(decode(huge.as_bytes()).is_err());
    }
}
