//! Queue administration, move-task and `sleep` steps: the steps whose bodies are a queue
//! reference and a value or two.

use super::input::StepInput;
use super::queue::check_arn_refs;
use super::scope::{Scope, queue_ref};
use super::sqs_values::{self, Carried};
use crate::suite::model::*;
use crate::suite::yaml::{Reader, pos};
use sqsprobe_facts::sqs::limits;

/// `sleep: 1500ms`.
pub(super) fn decode_sleep(r: &mut Reader, _: &mut Scope, s: &StepInput) -> Option<Action> {
    r.duration(s.body, "`sleep`").map(Action::Sleep)
}

/// `get-attributes: {queue, names?}`; `names` defaults to `[All]`.
pub(super) fn decode_get_attributes(
    r: &mut Reader,
    _: &mut Scope,
    s: &StepInput,
) -> Option<Action> {
    Some(Action::GetAttributes {
        queue: s.queue.clone()?,
        names: s
            .fields
            .get("names")
            .and_then(|n| r.strings(n, "attribute names", true))
            .unwrap_or_else(|| vec!["All".into()]),
    })
}

/// `set-attributes: {queue, attributes: {Name: value}}`.
pub(super) fn decode_set_attributes(
    r: &mut Reader,
    scope: &mut Scope,
    s: &StepInput,
) -> Option<Action> {
    let node = s.fields.get("attributes")?;
    let attributes = r.string_map(node, "`attributes`")?;
    check_arn_refs(r, scope, pos(node), &attributes);
    Some(Action::SetAttributes {
        queue: s.queue.clone()?,
        attributes,
    })
}

/// `purge: {queue}`.
pub(super) fn decode_purge(_: &mut Reader, _: &mut Scope, s: &StepInput) -> Option<Action> {
    Some(Action::Purge {
        queue: s.queue.clone()?,
    })
}

/// `delete-queue: {queue}`.
pub(super) fn decode_delete_queue(_: &mut Reader, _: &mut Scope, s: &StepInput) -> Option<Action> {
    Some(Action::DeleteQueue {
        queue: s.queue.clone()?,
    })
}

/// `get-queue-url: {queue}`.
pub(super) fn decode_get_queue_url(_: &mut Reader, _: &mut Scope, s: &StepInput) -> Option<Action> {
    Some(Action::GetQueueUrl {
        queue: s.queue.clone()?,
    })
}

/// `list-queue-tags: {queue}`.
pub(super) fn decode_list_queue_tags(
    _: &mut Reader,
    _: &mut Scope,
    s: &StepInput,
) -> Option<Action> {
    Some(Action::ListQueueTags {
        queue: s.queue.clone()?,
    })
}

/// `list-dead-letter-source-queues: {queue}`.
pub(super) fn decode_list_dead_letter_source_queues(
    _: &mut Reader,
    _: &mut Scope,
    s: &StepInput,
) -> Option<Action> {
    Some(Action::ListDeadLetterSourceQueues {
        queue: s.queue.clone()?,
    })
}

/// `list-queues: {max_results?}`.
pub(super) fn decode_list_queues(r: &mut Reader, _: &mut Scope, s: &StepInput) -> Option<Action> {
    Some(Action::ListQueues {
        max_results: s
            .fields
            .get("max_results")
            .and_then(|n| {
                sqs_values::number(
                    r,
                    n,
                    "`max_results`",
                    &limits::LIST_QUEUES_MAX_RESULTS,
                    s.site(),
                    Carried::Parameter,
                )
            })
            .and_then(|n| i32::try_from(n).ok()),
    })
}

/// `tag-queue: {queue, tags: {k: v}}`.
pub(super) fn decode_tag_queue(r: &mut Reader, _: &mut Scope, s: &StepInput) -> Option<Action> {
    let tags = r.string_map(s.fields.get("tags")?, "`tags`")?;
    Some(Action::TagQueue {
        queue: s.queue.clone()?,
        tags,
    })
}

/// `untag-queue: {queue, keys: [k]}`.
pub(super) fn decode_untag_queue(r: &mut Reader, _: &mut Scope, s: &StepInput) -> Option<Action> {
    let keys = r.strings(s.fields.get("keys")?, "tag keys", true)?;
    Some(Action::UntagQueue {
        queue: s.queue.clone()?,
        keys,
    })
}

/// `start-move-task: {source, destination?, max_per_second?, as?}`.
pub(super) fn decode_start_move_task(
    r: &mut Reader,
    scope: &mut Scope,
    s: &StepInput,
) -> Option<Action> {
    let f = &s.fields;
    let source = queue_ref(r, scope, f.get("source")?);
    let destination = f.get("destination").and_then(|n| queue_ref(r, scope, n));
    let max_per_second = f
        .get("max_per_second")
        .and_then(|n| {
            sqs_values::number(
                r,
                n,
                "`max_per_second`",
                &limits::MAX_MESSAGES_PER_SECOND,
                s.site(),
                Carried::Parameter,
            )
        })
        .and_then(|n| i32::try_from(n).ok());
    let task = match f.get("as") {
        Some(n) => {
            let t = r.nonempty(n, "`as` (a task name)")?;
            if let Some(first) = scope.tasks.get(&t) {
                r.error(
                    n,
                    format!("move task `{t}` is already defined at line {}", first.line),
                );
                return None;
            }
            scope.tasks.insert(t.clone(), pos(n));
            Some(t)
        }
        None => None,
    };
    Some(Action::StartMoveTask {
        source: source?,
        destination,
        max_per_second,
        name: task,
    })
}

/// `list-move-tasks: {source}`.
pub(super) fn decode_list_move_tasks(
    r: &mut Reader,
    scope: &mut Scope,
    s: &StepInput,
) -> Option<Action> {
    Some(Action::ListMoveTasks {
        source: queue_ref(r, scope, s.fields.get("source")?)?,
    })
}

/// `cancel-move-task: {task} | {handle}`: a name given by an earlier
/// `start-move-task: {as: ...}`, or a literal TaskHandle.
pub(super) fn decode_cancel_move_task(
    r: &mut Reader,
    scope: &mut Scope,
    s: &StepInput,
) -> Option<Action> {
    let f = &s.fields;
    let task = match (f.get("task"), f.get("handle")) {
        (Some(_), Some(_)) => {
            r.error(
                f.key("handle")?,
                "write either `task` or `handle`, not both",
            );
            return None;
        }
        (None, None) => {
            r.error_hint(
                f.owner,
                format!("{} needs `task` or `handle`", f.what),
                "`task: T` cancels the task a `start-move-task: {..., as: T}` started; `handle: <text>` sends that text as the TaskHandle",
            );
            return None;
        }
        (None, Some(h)) => TaskRef::Literal(r.string(h, "`handle` (a literal TaskHandle)")?),
        (Some(n), None) => {
            let t = r.string(n, "`task` (a move task name)")?;
            if !scope.tasks.contains_key(&t) {
                r.error_hint(
                    n,
                    format!("unknown move task `{t}`"),
                    "name a task with `start-move-task: {..., as: <name>}` in an earlier step",
                );
                return None;
            }
            TaskRef::Named(Spanned {
                value: t,
                pos: pos(n),
            })
        }
    };
    Some(Action::CancelMoveTask { task })
}
