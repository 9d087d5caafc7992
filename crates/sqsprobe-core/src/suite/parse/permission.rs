//! The `add-permission` and `remove-permission` steps: AddPermission and RemovePermission on an
//! owned queue, with the run's own account written `self`.

use super::input::StepInput;
use super::scope::Scope;
use crate::suite::model::*;
use crate::suite::yaml::Reader;

/// The word that stands for the run's own account in `accounts:`.
pub(super) const CALLER: &str = "self";

/// `add-permission: {queue, label, actions: [...], accounts: [self, ...]}`.
///
/// Labels, actions and accounts are sent as written, so a case can send what AWS should
/// refuse; only `self` is resolved (by the runner, to the account of the queue's ARN).
pub(super) fn decode_add_permission(
    r: &mut Reader,
    scope: &mut Scope,
    s: &StepInput,
) -> Option<Action> {
    let f = &s.fields;
    let label = r.string(f.get("label")?, "`label` (the statement's Sid)");
    let actions = r.strings(f.get("actions")?, "action names", true);
    let accounts = r
        .strings(f.get("accounts")?, "account ids or `self`", true)
        .map(|list| {
            list.into_iter()
                .map(|a| match a.as_str() {
                    CALLER => Account::Caller,
                    _ => Account::Literal(a),
                })
                .collect()
        });
    let queue = s.queue.clone()?;
    if !policy_is_free(r, scope, &queue, false) {
        return None;
    }
    scope
        .permissions
        .entry(queue.value.clone())
        .or_insert(queue.pos);
    Some(Action::AddPermission(AddPermission {
        queue,
        label: label?,
        actions: actions?,
        accounts: accounts?,
    }))
}

/// `remove-permission: {queue, label}`.
pub(super) fn decode_remove_permission(
    r: &mut Reader,
    _: &mut Scope,
    s: &StepInput,
) -> Option<Action> {
    let label = r.string(s.fields.get("label")?, "`label` (the statement's Sid)")?;
    Some(Action::RemovePermission {
        queue: s.queue.clone()?,
        label,
    })
}

/// Whether `queue` is free of the other writer of its `Policy`: a `deny` sets the queue's whole
/// Policy and lifting it clears it, which would drop AddPermission's statements. Reports the
/// clash at `queue` when it is not. `deny` says which of the two steps this is.
pub(super) fn policy_is_free(
    r: &mut Reader,
    scope: &Scope,
    queue: &Spanned<String>,
    deny: bool,
) -> bool {
    let (this, other, at) = if deny {
        (
            "a `deny`",
            "an `add-permission`",
            scope.permissions.get(&queue.value),
        )
    } else {
        (
            "an `add-permission`",
            "a `deny`",
            scope.denied.get(&queue.value),
        )
    };
    let Some(at) = at else { return true };
    super::scope::push_at(
        r,
        queue.pos,
        &queue.value,
        format!(
            "queue `{}` already has {other} (line {}); {this} cannot share its Policy",
            queue.value, at.line
        ),
        Some("a `deny` sets and then clears the queue's whole Policy, which would drop AddPermission's statements; use another queue".into()),
    );
    false
}

/// Notes that a `deny` writes `queue`'s Policy (for [`policy_is_free`]).
pub(super) fn note_deny(scope: &mut Scope, queue: &Spanned<String>) {
    scope.denied.entry(queue.value.clone()).or_insert(queue.pos);
}
