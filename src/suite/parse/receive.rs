//! The `receive` step: one ReceiveMessage call, optionally named as an attempt.

use super::input::StepInput;
use super::scope::Scope;
use crate::suite::model::*;
use crate::suite::yaml::{Reader, pos};

/// The keys of a `receive` body.
pub(super) const RECEIVE_KEYS: &[&str] = &[
    "queue",
    "as",
    "max",
    "wait",
    "visibility_timeout",
    "attribute_names",
    "message_attribute_names",
    "request_attempt_id",
];

/// `receive: {queue, as?, max?, wait?, visibility_timeout?, attribute_names?, ...}`.
pub(super) fn decode_receive(r: &mut Reader, scope: &mut Scope, s: &StepInput) -> Option<Action> {
    let f = &s.fields;
    let attempt = match f.get("as") {
        Some(n) => {
            let a = r.nonempty(n, "`as` (an attempt name)")?;
            if scope.attempts.contains_key(&a) {
                r.error_hint(
                    n,
                    format!("attempt `{a}` is already defined in this case"),
                    "give every receive its own attempt name",
                );
                return None;
            }
            if let Some(q) = &s.queue {
                scope.attempts.insert(a.clone(), q.value.clone());
            }
            Some(Spanned {
                value: a,
                pos: pos(n),
            })
        }
        None => None,
    };
    let secs = |r: &mut Reader, k: &str| f.get(k).and_then(|n| r.seconds(n, &format!("`{k}`")));
    Some(Action::Receive(Receive {
        queue: s.queue.clone()?,
        attempt,
        max: f
            .get("max")
            .and_then(|n| r.int(n, "`max`", i32::MIN as i64, i32::MAX as i64))
            .map(|n| n as i32),
        wait: secs(r, "wait"),
        visibility_timeout: secs(r, "visibility_timeout"),
        attribute_names: f
            .get("attribute_names")
            .and_then(|n| r.strings(n, "attribute names", true))
            .unwrap_or_else(|| vec!["All".to_string()]),
        message_attribute_names: f
            .get("message_attribute_names")
            .and_then(|n| r.strings(n, "message attribute names", true)),
        request_attempt_id: f
            .get("request_attempt_id")
            .and_then(|n| r.string(n, "`request_attempt_id`")),
    }))
}
