//! What a case has defined so far, and the reference checks against it.

use std::collections::BTreeMap;

use crate::suite::diagnostic::Diagnostic;
use crate::suite::model::*;
use crate::suite::yaml::{Node, Reader, pos};

/// What a case has defined so far, for reference checks.
#[derive(Default)]
pub(super) struct Scope {
    pub queues: BTreeMap<String, QueueKind>,
    /// Queue label → its `region:` and `same_name_as:`, for the checks that two labels sharing
    /// a name are in different regions.
    pub placement: BTreeMap<String, Placement>,
    /// attempt name → queue label of its receive.
    pub attempts: BTreeMap<String, String>,
    pub messages: BTreeMap<String, Pos>,
    pub sends: usize,
    pub tasks: BTreeMap<String, Pos>,
    /// Queue label → where its first `add-permission` names it.
    pub permissions: BTreeMap<String, Pos>,
    /// Queue label → where its first `deny` names it.
    pub denied: BTreeMap<String, Pos>,
    pub observes: usize,
    /// Labels tracked by the last observe step (empty: every message).
    pub last_observe_tracks: Vec<String>,
}

/// Where a queue of the case lives: its `region:` (`None`: the run's) and whose owned name it
/// takes (`same_name_as:`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct Placement {
    pub region: Option<String>,
    pub same_name_as: Option<String>,
}

impl Placement {
    pub fn of(def: &QueueDef) -> Placement {
        Placement {
            region: def.region.as_ref().map(|r| r.value.clone()),
            same_name_as: def.same_name_as.as_ref().map(|l| l.value.clone()),
        }
    }
}

pub(super) fn is_label(s: &str, max: usize) -> bool {
    !s.is_empty()
        && s.len() <= max
        && s.bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
}

pub(super) fn known_queues(scope: &Scope) -> String {
    if scope.queues.is_empty() {
        "no queues are defined yet; add one under `queues:` or with a `create-queue` step".into()
    } else {
        let names: Vec<&str> = scope.queues.keys().map(String::as_str).collect();
        format!("defined queues: {}", names.join(", "))
    }
}

/// Records an error at a stored position, underlining `text`'s length.
pub(super) fn push_at(r: &mut Reader, at: Pos, text: &str, message: String, hint: Option<String>) {
    let mut d = Diagnostic::new(r.path, at, text.chars().count() as u32, message);
    d.hint = hint;
    r.diags.push(d);
}

/// A queue label that must already be defined.
pub(super) fn queue_ref(r: &mut Reader, scope: &Scope, n: &Node) -> Option<Spanned<String>> {
    let label = r.string(n, "a queue label")?;
    if !scope.queues.contains_key(&label) {
        let names: Vec<&str> = scope.queues.keys().map(String::as_str).collect();
        let hint = match sqsprobe_facts::text::suggest::closest(&label, names.iter().copied()) {
            Some(c) => format!("did you mean `{c}`?"),
            None => known_queues(scope),
        };
        r.error_hint(n, format!("unknown queue `{label}`"), hint);
        return None;
    }
    Some(Spanned {
        value: label,
        pos: pos(n),
    })
}

/// A message label that must have been sent earlier in the case.
pub(super) fn message_ref(r: &mut Reader, scope: &Scope, n: &Node) -> Option<Spanned<String>> {
    let label = r.string(n, "a message label")?;
    if !scope.messages.contains_key(&label) {
        let names: Vec<&str> = scope.messages.keys().map(String::as_str).collect();
        let hint = match sqsprobe_facts::text::suggest::closest(&label, names.iter().copied()) {
            Some(c) => format!("did you mean `{c}`?"),
            None if names.is_empty() => "no message was sent before this step".to_string(),
            None => format!("messages sent so far: {}", names.join(", ")),
        };
        r.error_hint(
            n,
            format!("unknown message `{label}`: no earlier send has this label"),
            hint,
        );
        return None;
    }
    Some(Spanned {
        value: label,
        pos: pos(n),
    })
}
