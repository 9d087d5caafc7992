//! The `receive` step: one ReceiveMessage call, optionally named as an attempt.

use super::input::StepInput;
use super::scope::Scope;
use super::sqs_values::{self, Carried};
use crate::suite::model::*;
use crate::suite::yaml::{Reader, pos};
use sqsprobe_facts::sqs::limits;

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
    let site = s.site();
    let secs = |r: &mut Reader, k: &str, range| {
        f.get(k).and_then(|n| {
            sqs_values::seconds(r, n, &format!("`{k}`"), range, site, Carried::Parameter)
        })
    };
    Some(Action::Receive(Receive {
        queue: s.queue.clone()?,
        attempt,
        max: f
            .get("max")
            .and_then(|n| {
                sqs_values::number(
                    r,
                    n,
                    "`max`",
                    &limits::MAX_NUMBER_OF_MESSAGES,
                    site,
                    Carried::Parameter,
                )
            })
            .and_then(|n| i32::try_from(n).ok()),
        wait: secs(r, "wait", &limits::WAIT_TIME_SECONDS),
        visibility_timeout: secs(r, "visibility_timeout", &limits::VISIBILITY_TIMEOUT),
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
