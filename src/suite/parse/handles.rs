//! Receipt-handle references of delete and change-visibility steps, and the queue they imply.

use super::scope::{Scope, message_ref};
use crate::suite::model::*;
use crate::suite::yaml::{Fields, Reader, pos};

/// `attempt` (+ `message`) or `handle`.
pub(super) fn handle_ref(r: &mut Reader, scope: &Scope, f: &Fields) -> Option<HandleRef> {
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
                let hint = match crate::suite::diagnostic::closest(&name, names.iter().copied()) {
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
pub(super) fn batch_queue(
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
