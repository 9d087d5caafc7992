//! Message sends: the body of a `send` step and of each `send-batch` entry.

use saphyr::YamlData;

use super::input::StepInput;
use super::scope::Scope;
use super::sqs_values::{self, Carried, Site};
use crate::suite::model::*;
use crate::suite::yaml::{Fields, Reader, pos};
use sqsprobe_facts::sqs::limits;

pub(super) const SEND_KEYS: &[&str] = &[
    "queue",
    "message",
    "body",
    "body_size",
    "delay",
    "group",
    "dedup_id",
    "attributes",
];

fn decode_send(
    r: &mut Reader,
    scope: &mut Scope,
    f: &Fields,
    queue: Spanned<String>,
    expects_error: bool,
    site: Site,
) -> Option<Send> {
    scope.sends += 1;
    let (message, label_node) = match f.get("message") {
        Some(n) => (r.nonempty(n, "`message` (a message label)")?, Some(n)),
        None => (format!("m{}", scope.sends), None),
    };
    if let Some(first) = scope.messages.get(&message) {
        let at = label_node.unwrap_or(f.owner);
        let why = if label_node.is_none() {
            " (the default label of this send)"
        } else {
            ""
        };
        let first_line = first.line;
        r.error_hint(
            at,
            format!("message label `{message}`{why} is already used at line {first_line}"),
            "give each send its own `message:` label",
        );
        return None;
    }
    scope
        .messages
        .insert(message.clone(), label_node.map_or(pos(f.owner), pos));
    let body = match (f.get("body"), f.get("body_size")) {
        (Some(_), Some(_)) => {
            r.error(
                f.key("body_size")?,
                "write either `body` or `body_size`, not both",
            );
            return None;
        }
        (Some(n), None) => Body::Text(r.string(n, "`body`")?),
        (None, Some(n)) => Body::Size(sqs_values::body_size(r, n, site)?),
        (None, None) if !f.missing("body") || !f.missing("body_size") => return None,
        (None, None) => {
            r.error_hint(
                f.owner,
                format!("{} needs `body` or `body_size`", f.what),
                "e.g. `body: hello`",
            );
            return None;
        }
    };
    let delay = f.get("delay").and_then(|n| {
        sqs_values::seconds(
            r,
            n,
            "`delay`",
            &limits::DELAY_SECONDS,
            site,
            Carried::Parameter,
        )
    });
    let group = f.get("group").and_then(|n| r.string(n, "`group`"));
    if group.is_none() && !expects_error && scope.queues.get(&queue.value) == Some(&QueueKind::Fifo)
    {
        r.error_hint(
            f.owner,
            format!(
                "a send to FIFO queue `{}` needs `group` (MessageGroupId)",
                queue.value
            ),
            "add `group: g1`, or `expect: {error: MissingParameter}` to test that SQS refuses it",
        );
    }
    let dedup_id = f.get("dedup_id").and_then(|n| r.string(n, "`dedup_id`"));
    let mut attributes = Vec::new();
    if let Some(n) = f.get("attributes") {
        for (name, _, v) in r.map_entries(n, "`attributes`").unwrap_or_default() {
            if let YamlData::Mapping(_) = &v.data {
                let Some(af) = r.fields(v, v, "a message attribute", &["type", "value"]) else {
                    continue;
                };
                if !r.require(&af, &["type", "value"]) {
                    continue;
                }
                let (Some(t), Some(val)) = (
                    r.string(af.get("type")?, "`type`"),
                    r.string(af.get("value")?, "`value`"),
                ) else {
                    continue;
                };
                attributes.push(MessageAttr {
                    name: name.to_string(),
                    data_type: t,
                    value: val,
                });
            } else if let Some(val) = r.string(v, "an attribute value") {
                attributes.push(MessageAttr {
                    name: name.to_string(),
                    data_type: "String".into(),
                    value: val,
                });
            }
        }
    }
    Some(Send {
        queue,
        message,
        body,
        delay,
        group,
        dedup_id,
        attributes,
    })
}

/// `send: {queue, message?, body | body_size, ...}`.
pub(super) fn decode_send_step(r: &mut Reader, scope: &mut Scope, s: &StepInput) -> Option<Action> {
    let send = decode_send(
        r,
        scope,
        &s.fields,
        s.queue.clone()?,
        s.expects_error,
        s.site(),
    )?;
    Some(Action::Send(send))
}

/// `send-batch: {queue, entries: [<send keys without queue>, id?]}`.
pub(super) fn decode_send_batch(
    r: &mut Reader,
    scope: &mut Scope,
    s: &StepInput,
) -> Option<Action> {
    let queue = s.queue.clone()?;
    let items = r.seq(s.fields.get("entries")?, "batch entries")?;
    let entry_keys = [&["id"], SEND_KEYS].concat();
    let mut entries = Vec::new();
    for item in items {
        let Some(ef) = r.fields(item, item, "a `send-batch` entry", &entry_keys) else {
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
        if let Some(send) = decode_send(r, scope, &ef, queue.clone(), s.expects_error, s.site()) {
            entries.push(BatchSend {
                id: id.unwrap_or_else(|| send.message.clone()),
                send,
            });
        }
    }
    Some(Action::SendBatch { queue, entries })
}
