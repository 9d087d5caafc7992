//! Receipt-handle references of delete and change-visibility steps, and the queue they imply.

use std::time::Duration;

use super::input::StepInput;
use super::scope::{Scope, message_ref};
use super::sqs_values::{self, Carried, Site};
use crate::suite::model::*;
use crate::suite::yaml::{Fields, Reader, pos};
use sqsprobe_facts::sqs::limits;

/// The keys that pick a receipt handle: `attempt` (+ `message`) or a literal `handle`.
pub(super) const HANDLE_KEYS: &[&str] = &["attempt", "message", "handle"];

/// `delete: {queue?, attempt (+ message) | handle}`.
pub(super) fn decode_delete(r: &mut Reader, scope: &mut Scope, s: &StepInput) -> Option<Action> {
    let target = handle_ref(r, scope, &s.fields)?;
    let queue = batch_queue(
        r,
        scope,
        &s.fields,
        s.queue.clone(),
        std::slice::from_ref(&target),
    )?;
    Some(Action::Delete { queue, target })
}

/// `change-visibility: {queue?, attempt (+ message) | handle, timeout}`.
pub(super) fn decode_change_visibility(
    r: &mut Reader,
    scope: &mut Scope,
    s: &StepInput,
) -> Option<Action> {
    let target = handle_ref(r, scope, &s.fields);
    let timeout = timeout(r, s.fields.get("timeout")?, s.site());
    let target = target?;
    let queue = batch_queue(
        r,
        scope,
        &s.fields,
        s.queue.clone(),
        std::slice::from_ref(&target),
    )?;
    Some(Action::ChangeVisibility {
        queue,
        target,
        timeout: timeout?,
    })
}

/// A change-visibility `timeout`: SQS's `VisibilityTimeout`.
fn timeout(r: &mut Reader, n: &crate::suite::yaml::Node, site: Site) -> Option<Duration> {
    sqs_values::seconds(
        r,
        n,
        "`timeout`",
        &limits::VISIBILITY_TIMEOUT,
        site,
        Carried::Parameter,
    )
}

/// `delete-batch: {queue?, entries: [{id?, attempt (+ message) | handle}]}`.
pub(super) fn decode_delete_batch(
    r: &mut Reader,
    scope: &mut Scope,
    s: &StepInput,
) -> Option<Action> {
    let (queue, entries) = decode_handle_batch(r, scope, s, "delete-batch", false)?;
    let entries = entries
        .into_iter()
        .map(|(id, target, _)| BatchHandle { id, target })
        .collect();
    Some(Action::DeleteBatch { queue, entries })
}

/// `change-visibility-batch: {queue?, entries: [{id?, attempt (+ message) | handle, timeout}]}`.
pub(super) fn decode_change_visibility_batch(
    r: &mut Reader,
    scope: &mut Scope,
    s: &StepInput,
) -> Option<Action> {
    let (queue, entries) = decode_handle_batch(r, scope, s, "change-visibility-batch", true)?;
    let entries = entries
        .into_iter()
        .map(|(id, target, timeout)| BatchVisibility {
            id,
            target,
            timeout,
        })
        .collect();
    Some(Action::ChangeVisibilityBatch { queue, entries })
}

/// The entries of a handle batch (id, handle, timeout) and the queue they imply. Entry ids
/// default to `e1`, `e2`, ...; `timeout` is required when `with_timeout`, else zero.
#[allow(clippy::type_complexity)]
fn decode_handle_batch(
    r: &mut Reader,
    scope: &mut Scope,
    s: &StepInput,
    keyword: &str,
    with_timeout: bool,
) -> Option<(Option<Spanned<String>>, Vec<(String, HandleRef, Duration)>)> {
    let items = r.seq(s.fields.get("entries")?, "batch entries")?;
    let entry_keys: &[&str] = if with_timeout {
        &["id", "attempt", "message", "handle", "timeout"]
    } else {
        &["id", "attempt", "message", "handle"]
    };
    let entry_what = format!("a `{keyword}` entry");
    let mut entries = Vec::new();
    let mut good = true;
    for (i, item) in items.iter().enumerate() {
        let Some(ef) = r.fields(item, item, &entry_what, entry_keys) else {
            good = false;
            continue;
        };
        let id = ef
            .get("id")
            .and_then(|n| r.string(n, "an entry `id`"))
            .unwrap_or_else(|| format!("e{}", i + 1));
        let target = handle_ref(r, scope, &ef);
        let timeout = if with_timeout {
            if !r.require(&ef, &["timeout"]) {
                good = false;
                continue;
            }
            timeout(r, ef.get("timeout")?, s.site())
        } else {
            Some(Duration::ZERO)
        };
        match (target, timeout) {
            (Some(t), Some(d)) => entries.push((id, t, d)),
            _ => good = false,
        }
    }
    if !good {
        return None;
    }
    let targets: Vec<HandleRef> = entries.iter().map(|(_, t, _)| t.clone()).collect();
    let queue = batch_queue(r, scope, &s.fields, s.queue.clone(), &targets)?;
    Some((queue, entries))
}

/// `attempt` (+ `message`) or `handle`.
fn handle_ref(r: &mut Reader, scope: &Scope, f: &Fields) -> Option<HandleRef> {
    match (f.get("attempt"), f.get("handle")) {
        (Some(_), Some(_)) => {
            r.error(
                f.key("handle")?,
                "write either `attempt` or `handle`, not both",
            );
            None
        }
        (None, None) => {
            r.error_hint(
                f.owner,
                format!("{} needs `attempt` or `handle`", f.what),
                "e.g. `attempt: A` (a receive's `as:`)",
            );
            None
        }
        (None, Some(h)) => {
            if let Some(m) = f.key("message") {
                r.error(m, "`message` picks a message of an attempt; it does not apply to a literal `handle`");
                return None;
            }
            Some(HandleRef::Literal(r.string(h, "`handle`")?))
        }
        (Some(a), None) => {
            let name = r.string(a, "`attempt`")?;
            let message = match f.get("message") {
                Some(m) => Some(message_ref(r, scope, m)?),
                None => None,
            };
            if !scope.attempts.contains_key(&name) {
                let names: Vec<&str> = scope.attempts.keys().map(String::as_str).collect();
                let hint = match sqsprobe_facts::text::suggest::closest(&name, names.iter().copied()) {
                    Some(c) => format!("did you mean `{c}`?"),
                    None if names.is_empty() => "name a receive with `as:` in an earlier step, e.g. `receive: {queue: q, as: A}`".into(),
                    None => format!("attempts defined so far: {}", names.join(", ")),
                };
                r.error_hint(
                    a,
                    format!("unknown attempt `{name}`: no earlier receive has `as: {name}`"),
                    hint,
                );
                return None;
            }
            Some(HandleRef::Attempt {
                attempt: Spanned {
                    value: name,
                    pos: pos(a),
                },
                message,
            })
        }
    }
}

/// The `queue` of a handle step: given, or implied by the attempts it uses.
fn batch_queue(
    r: &mut Reader,
    scope: &Scope,
    f: &Fields,
    queue: Option<Spanned<String>>,
    targets: &[HandleRef],
) -> Option<Option<Spanned<String>>> {
    if f.has("queue") {
        return queue.map(Some);
    }
    let mut implied: Vec<&str> = targets
        .iter()
        .filter_map(|t| match t {
            HandleRef::Attempt { attempt, .. } => {
                scope.attempts.get(&attempt.value).map(String::as_str)
            }
            HandleRef::Literal(_) => None,
        })
        .collect();
    implied.dedup();
    implied.sort_unstable();
    implied.dedup();
    match implied.len() {
        1 => Some(None),
        0 => {
            r.error_hint(
                f.owner,
                format!("{} needs `queue`: no attempt implies one", f.what),
                "add `queue: <label>`",
            );
            None
        }
        _ => {
            r.error_hint(
                f.owner,
                format!(
                    "{} uses attempts from queues {}; say which with `queue`",
                    f.what,
                    implied.join(", ")
                ),
                "add `queue: <label>`",
            );
            None
        }
    }
}
