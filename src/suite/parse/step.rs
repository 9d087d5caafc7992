//! One step: its keyword, its body, and its sibling `expect:`.

use std::time::Duration;

use saphyr::YamlData;

use super::expect::{STEP_EXPECT_KEYS, decode_step_expect};
use super::handles::{batch_queue, handle_ref};
use super::observe::decode_observe;
use super::queue::{
    check_arn_refs, check_queue_label, check_queue_refs, decode_queue_fields, kind_name,
};
use super::scope::{Scope, queue_ref};
use super::send::{SEND_KEYS, decode_send};
use crate::suite::diagnostic::suggest;
use crate::suite::limits::Limits;
use crate::suite::model::*;
use crate::suite::yaml::{Node, Reader, pos};

pub(super) fn decode_step(
    r: &mut Reader,
    scope: &mut Scope,
    item: &Node,
    index: usize,
    limits: &Limits,
) -> Option<Step> {
    let YamlData::Mapping(map) = &item.data else {
        r.error_hint(
            item,
            "a step is a mapping like `- receive: {queue: q, as: A}`",
            format!("step keywords: {}", Action::KEYWORDS.join(", ")),
        );
        return None;
    };
    let mut keyword: Option<(&str, &Node, &Node)> = None;
    let mut expect: Option<(&Node, &Node)> = None;
    let mut all: Vec<&str> = Action::KEYWORDS.to_vec();
    all.push("expect");
    for (k, v) in map {
        let Some(name) = k.data.as_str() else {
            r.error(k, "expected a step keyword");
            continue;
        };
        if name == "expect" {
            expect = Some((k, v));
        } else if Action::KEYWORDS.contains(&name) {
            if let Some((first, _, _)) = keyword {
                r.error_hint(
                    k,
                    format!("a step has one keyword; this one already has `{first}`"),
                    "start a new list item with `- ` for the next step",
                );
            } else {
                keyword = Some((name, k, v));
            }
        } else {
            let what = if keyword.is_none() {
                "step"
            } else {
                "key beside the step keyword"
            };
            r.error_hint(k, format!("unknown {what} `{name}`"), suggest(name, &all));
        }
    }
    let Some((name, key, body)) = keyword else {
        if !map.is_empty() && r.diags.last().is_some_and(|d| d.pos.line == pos(item).line) {
            return None;
        }
        r.error_hint(
            item,
            "this step has no step keyword",
            format!("step keywords: {}", Action::KEYWORDS.join(", ")),
        );
        return None;
    };
    let what = format!("a `{name}` step");
    let mut expect_fields = None;
    if let Some((ek, ev)) = expect {
        expect_fields = r.fields(ek, ev, "a step `expect`", STEP_EXPECT_KEYS);
    }
    let expects_error = expect_fields
        .as_ref()
        .is_some_and(|f| f.has("error") || f.has("status"));
    let action = decode_action(r, scope, name, key, body, &what, expects_error, limits);
    let step_expect = match (&expect_fields, &action) {
        (Some(ef), Some(a)) => decode_step_expect(r, scope, ef, a, expect.map(|(k, _)| pos(k))),
        _ => StepExpect::default(),
    };
    Some(Step {
        index,
        pos: pos(key),
        action: action?,
        expect: step_expect,
    })
}

#[allow(clippy::too_many_arguments)]
fn decode_action(
    r: &mut Reader,
    scope: &mut Scope,
    name: &str,
    key: &Node,
    body: &Node,
    what: &str,
    expects_error: bool,
    limits: &Limits,
) -> Option<Action> {
    if name == "sleep" {
        return r.duration(body, "`sleep`").map(Action::Sleep);
    }
    if name == "create-queue" {
        let Some(label_node) = body.data.as_mapping_get("queue") else {
            if body.data.is_mapping() || body.data.is_null() {
                decode_queue_fields(r, key, body, "", what, &["queue"]);
            }
            r.error(key, format!("{what} needs `queue` (the new queue's label)"));
            return None;
        };
        let label = r.string(label_node, "a queue label")?;
        if !check_queue_label(r, label_node, &label) {
            return None;
        }
        // Only the definition keys are checked here; `queue` was read above.
        let mut def = decode_queue_fields(r, key, body, &label, what, &["queue", "name_suffix"])?;
        def.pos = pos(label_node);
        if let Some(n) = body.data.as_mapping_get("name_suffix") {
            let suffix = r.string(n, "`name_suffix`")?;
            if scope.queues.contains_key(&label) {
                r.error_hint(
                    n,
                    format!("`name_suffix` on queue `{label}`, which is already defined"),
                    "a re-created label keeps its first name; use a new label",
                );
                return None;
            }
            def.name_suffix = Some(suffix);
        }
        // A known label is created again under the same name (idempotent CreateQueue,
        // QueueAlreadyExists, QueueDeletedRecently); its name depends on its type, so the
        // type must stay.
        if let Some(kind) = scope.queues.get(&label)
            && *kind != def.kind
        {
            r.error_hint(
                label_node,
                format!(
                    "queue `{label}` is already defined as {}; a `create-queue` of a known label re-creates the same name",
                    kind_name(*kind)
                ),
                "keep its `type`, or use a new label for a different queue",
            );
            return None;
        }
        check_queue_refs(r, scope, &def);
        scope.queues.insert(label, def.kind);
        return Some(Action::CreateQueue(def));
    }
    let allowed: &[&str] = match name {
        "send" => SEND_KEYS,
        "send-batch" => &["queue", "entries"],
        "receive" => &[
            "queue",
            "as",
            "max",
            "wait",
            "visibility_timeout",
            "attribute_names",
            "message_attribute_names",
            "request_attempt_id",
        ],
        "delete" => &["queue", "attempt", "message", "handle"],
        "delete-batch" | "change-visibility-batch" => &["queue", "entries"],
        "change-visibility" => &["queue", "attempt", "message", "handle", "timeout"],
        "get-attributes" => &["queue", "names"],
        "set-attributes" => &["queue", "attributes"],
        "observe" => &[
            "queue",
            "window",
            "max_receives",
            "wait",
            "visibility_timeout",
            "messages",
            "delete",
        ],
        "list-queues" => &["max_results"],
        "tag-queue" => &["queue", "tags"],
        "untag-queue" => &["queue", "keys"],
        "start-move-task" => &["source", "destination", "max_per_second", "as"],
        "list-move-tasks" => &["source"],
        "cancel-move-task" => &["task"],
        _ => &["queue"],
    };
    let f = r.fields(key, body, what, allowed)?;
    let required: &[&str] = match name {
        "send-batch" | "delete-batch" | "change-visibility-batch" => &["entries"],
        "set-attributes" => &["queue", "attributes"],
        "tag-queue" => &["queue", "tags"],
        "untag-queue" => &["queue", "keys"],
        "observe" => &["queue", "window"],
        "change-visibility" => &["timeout"],
        "delete" | "list-queues" => &[],
        "start-move-task" | "list-move-tasks" => &["source"],
        "cancel-move-task" => &["task"],
        _ => &["queue"],
    };
    let mut ok = r.require(&f, required);
    if name == "send-batch" {
        ok &= r.require(&f, &["queue"]);
    }
    let queue = f.get("queue").and_then(|n| queue_ref(r, scope, n));
    let action = match name {
        "send" => Action::Send(decode_send(r, scope, &f, queue?, expects_error)?),
        "send-batch" => {
            let queue = queue?;
            let items = r.seq(f.get("entries")?, "batch entries")?;
            let mut entries = Vec::new();
            for item in items {
                let Some(ef) = r.fields(
                    item,
                    item,
                    "a `send-batch` entry",
                    &[&["id"], SEND_KEYS].concat(),
                ) else {
                    continue;
                };
                if let Some(k) = ef.key("queue") {
                    r.error(
                        k,
                        "a batch entry has no `queue`; the batch's `queue` applies to every entry",
                    );
                    continue;
                }
                let id = ef.get("id").and_then(|n| r.string(n, "an entry `id`"));
                if let Some(send) = decode_send(r, scope, &ef, queue.clone(), expects_error) {
                    entries.push(BatchSend {
                        id: id.unwrap_or_else(|| send.message.clone()),
                        send,
                    });
                }
            }
            Action::SendBatch { queue, entries }
        }
        "receive" => {
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
                    if let Some(q) = &queue {
                        scope.attempts.insert(a.clone(), q.value.clone());
                    }
                    Some(Spanned {
                        value: a,
                        pos: pos(n),
                    })
                }
                None => None,
            };
            let secs =
                |r: &mut Reader, k: &str| f.get(k).and_then(|n| r.seconds(n, &format!("`{k}`")));
            Action::Receive(Receive {
                queue: queue?,
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
                    .and_then(|n| r.strings(n, "message attribute names", true))
                    .unwrap_or_default(),
                request_attempt_id: f
                    .get("request_attempt_id")
                    .and_then(|n| r.string(n, "`request_attempt_id`")),
            })
        }
        "delete" => {
            let target = handle_ref(r, scope, &f)?;
            let queue = batch_queue(r, scope, &f, queue, std::slice::from_ref(&target))?;
            Action::Delete { queue, target }
        }
        "change-visibility" => {
            let target = handle_ref(r, scope, &f);
            let timeout = r.seconds(f.get("timeout")?, "`timeout`");
            let target = target?;
            let queue = batch_queue(r, scope, &f, queue, std::slice::from_ref(&target))?;
            Action::ChangeVisibility {
                queue,
                target,
                timeout: timeout?,
            }
        }
        "delete-batch" | "change-visibility-batch" => {
            let items = r.seq(f.get("entries")?, "batch entries")?;
            let mut handles = Vec::new();
            let mut timeouts = Vec::new();
            let entry_keys: &[&str] = if name == "delete-batch" {
                &["id", "attempt", "message", "handle"]
            } else {
                &["id", "attempt", "message", "handle", "timeout"]
            };
            let entry_what = format!("a `{name}` entry");
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
                let timeout = if name == "change-visibility-batch" {
                    if !r.require(&ef, &["timeout"]) {
                        good = false;
                        continue;
                    }
                    r.seconds(ef.get("timeout")?, "`timeout`")
                } else {
                    Some(Duration::ZERO)
                };
                match (target, timeout) {
                    (Some(t), Some(d)) => {
                        handles.push((id, t));
                        timeouts.push(d);
                    }
                    _ => good = false,
                }
            }
            if !good {
                return None;
            }
            let targets: Vec<HandleRef> = handles.iter().map(|(_, t)| t.clone()).collect();
            let queue = batch_queue(r, scope, &f, queue, &targets)?;
            if name == "delete-batch" {
                let entries = handles
                    .into_iter()
                    .map(|(id, target)| BatchHandle { id, target })
                    .collect();
                Action::DeleteBatch { queue, entries }
            } else {
                let entries = handles
                    .into_iter()
                    .zip(timeouts)
                    .map(|((id, target), timeout)| BatchVisibility {
                        id,
                        target,
                        timeout,
                    })
                    .collect();
                Action::ChangeVisibilityBatch { queue, entries }
            }
        }
        "get-attributes" => Action::GetAttributes {
            queue: queue?,
            names: f
                .get("names")
                .and_then(|n| r.strings(n, "attribute names", true))
                .unwrap_or_else(|| vec!["All".into()]),
        },
        "set-attributes" => {
            let attributes = r.string_map(f.get("attributes")?, "`attributes`")?;
            check_arn_refs(r, scope, pos(f.get("attributes")?), &attributes);
            Action::SetAttributes {
                queue: queue?,
                attributes,
            }
        }
        "purge" => Action::Purge { queue: queue? },
        "delete-queue" => Action::DeleteQueue { queue: queue? },
        "get-queue-url" => Action::GetQueueUrl { queue: queue? },
        "list-queue-tags" => Action::ListQueueTags { queue: queue? },
        "list-dead-letter-source-queues" => Action::ListDeadLetterSourceQueues { queue: queue? },
        "list-queues" => Action::ListQueues {
            max_results: f
                .get("max_results")
                .and_then(|n| r.int(n, "`max_results`", i32::MIN as i64, i32::MAX as i64))
                .map(|n| n as i32),
        },
        "tag-queue" => {
            let tags = r.string_map(f.get("tags")?, "`tags`")?;
            Action::TagQueue {
                queue: queue?,
                tags,
            }
        }
        "untag-queue" => {
            let keys = r.strings(f.get("keys")?, "tag keys", true)?;
            Action::UntagQueue {
                queue: queue?,
                keys,
            }
        }
        "observe" => Action::Observe(decode_observe(r, scope, &f, queue, limits)?),
        "start-move-task" => {
            let source = queue_ref(r, scope, f.get("source")?);
            let destination = f.get("destination").and_then(|n| queue_ref(r, scope, n));
            let max_per_second = f
                .get("max_per_second")
                .and_then(|n| r.int(n, "`max_per_second`", i32::MIN as i64, i32::MAX as i64))
                .map(|n| n as i32);
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
            Action::StartMoveTask {
                source: source?,
                destination,
                max_per_second,
                name: task,
            }
        }
        "list-move-tasks" => Action::ListMoveTasks {
            source: queue_ref(r, scope, f.get("source")?)?,
        },
        "cancel-move-task" => {
            let n = f.get("task")?;
            let t = r.string(n, "`task` (a move task name)")?;
            if !scope.tasks.contains_key(&t) {
                r.error_hint(
                    n,
                    format!("unknown move task `{t}`"),
                    "name a task with `start-move-task: {..., as: <name>}` in an earlier step",
                );
                return None;
            }
            Action::CancelMoveTask {
                task: Spanned {
                    value: t,
                    pos: pos(n),
                },
            }
        }
        other => unreachable!("step keyword `{other}` is in KEYWORDS but not decoded"),
    };
    ok.then_some(action)
}
