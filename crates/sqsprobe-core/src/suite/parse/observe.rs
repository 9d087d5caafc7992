//! The `observe` step: a bounded window of receives tracking the case's messages.

use std::time::Duration;

use super::input::StepInput;
use super::scope::{Scope, message_ref};
use super::sqs_values::{self, Carried};
use crate::suite::model::*;
use crate::suite::yaml::Reader;
use sqsprobe_facts::sqs::limits;

/// The keys of an `observe` body.
pub(super) const OBSERVE_KEYS: &[&str] = &[
    "queue",
    "window",
    "max_receives",
    "wait",
    "visibility_timeout",
    "messages",
    "delete",
];

/// `observe: {queue, window, max_receives?, wait?, visibility_timeout?, messages?, delete?}`.
pub(super) fn decode_observe_step(
    r: &mut Reader,
    scope: &mut Scope,
    s: &StepInput,
) -> Option<Action> {
    let (f, limits) = (&s.fields, s.limits);
    let window = r.duration(f.get("window")?, "`window`");
    if window == Some(Duration::ZERO) {
        r.error(f.get("window")?, "`window` must be longer than 0ms");
    }
    let max_receives = match f.get("max_receives") {
        None => Some(20),
        Some(n) => {
            let v = r
                .int(n, "`max_receives`", 1, i64::from(u32::MAX))
                .map(|v| v as u32);
            match v {
                Some(v) if v > limits.max_observe_receives => {
                    r.error_hint(
                        n,
                        format!("`max_receives` is {v}, over the limit of {}", limits.max_observe_receives),
                        "observe windows are bounded; lower `max_receives` (a longer `wait` per receive covers the same window)",
                    );
                    None
                }
                v => v,
            }
        }
    };
    let site = s.site();
    let wait = match f.get("wait") {
        None => Some(Duration::from_secs(1)),
        Some(n) => sqs_values::seconds(
            r,
            n,
            "`wait`",
            &limits::WAIT_TIME_SECONDS,
            site,
            Carried::Parameter,
        ),
    };
    let visibility_timeout = f.get("visibility_timeout").and_then(|n| {
        sqs_values::seconds(
            r,
            n,
            "`visibility_timeout`",
            &limits::VISIBILITY_TIMEOUT,
            site,
            Carried::Parameter,
        )
    });
    let mut messages = Vec::new();
    let mut named = 0;
    if let Some(n) = f.get("messages") {
        let items = r.seq(n, "message labels")?;
        named = items.len();
        for item in items {
            if let Some(m) = message_ref(r, scope, item) {
                messages.push(m);
            }
        }
    }
    // Silence about no message proves nothing: the judge would have nothing to classify.
    // (Labels that were named but never sent are reported one by one instead.)
    if named == 0 && scope.messages.is_empty() {
        r.error_hint(
            f.owner,
            "this `observe` has nothing to track: no earlier step of the case sends a message",
            "send the messages to watch in an earlier step (`send` or `send-batch`), or name them with `messages: [...]`",
        );
    }
    let delete_seen = f
        .get("delete")
        .and_then(|n| r.bool(n, "`delete`"))
        .unwrap_or(false);
    scope.observes += 1;
    scope.last_observe_tracks = messages.iter().map(|m| m.value.clone()).collect();
    Some(Action::Observe(Observe {
        queue: s.queue.clone()?,
        window: window?,
        max_receives: max_receives?,
        wait: wait?,
        visibility_timeout,
        messages,
        delete_seen,
    }))
}
