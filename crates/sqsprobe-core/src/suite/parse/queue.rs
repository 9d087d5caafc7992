//! Queue definitions (`queues:` entries and `create-queue` bodies) and their references.

use std::collections::BTreeMap;

use saphyr::YamlData;

use super::input::StepInput;
use super::scope::{Placement, Scope, is_label, known_queues, push_at};
use super::sqs_values::{self, Carried, Site};
use crate::suite::model::*;
use crate::suite::yaml::{Fields, Node, Reader, pos};
use sqsprobe_facts::sqs::limits;
use sqsprobe_facts::text::suggest::suggest;

pub(super) const QUEUE_KEYS: &[&str] = &[
    "type",
    "create",
    "visibility_timeout",
    "delay",
    "retention",
    "receive_wait",
    "max_message_size",
    "content_based_dedup",
    "dedup_scope",
    "throughput_limit",
    "redrive",
    "redrive_allow",
    "attributes",
    "tags",
    "region",
    "same_name_as",
];

pub(super) fn check_queue_label(r: &mut Reader, node: &Node, label: &str) -> bool {
    if is_label(label, 20) {
        return true;
    }
    r.error_hint(
        node,
        format!("invalid queue label `{label}`"),
        "queue labels are 1 to 20 characters of `a-z`, `0-9` and `-`",
    );
    false
}

/// Reference checks of a queue definition against the queues in scope.
pub(super) fn check_queue_refs(r: &mut Reader, scope: &Scope, def: &QueueDef) {
    check_arn_refs(r, scope, def.pos, &def.attributes);
    if let Some(other) = &def.same_name_as {
        check_same_name(r, scope, def, other);
    }
    if let Some(redrive) = &def.redrive {
        match scope.queues.get(&redrive.dlq.value) {
            None => push_at(r, redrive.dlq.pos, &redrive.dlq.value, format!("unknown dead-letter queue `{}`", redrive.dlq.value), Some(known_queues(scope))),
            Some(kind) if *kind != def.kind => push_at(
                r,
                redrive.dlq.pos,
                &redrive.dlq.value,
                format!("dead-letter queue `{}` is {}, but `{}` is {}", redrive.dlq.value, kind_name(*kind), def.label, kind_name(def.kind)),
                Some("a DLQ must be the same type as its source queue (API_CreateQueue, RedrivePolicy)".into()),
            ),
            Some(_) => {}
        }
    }
    if let Some(RedriveAllow::ByQueue(labels)) = &def.redrive_allow {
        for l in labels {
            if !scope.queues.contains_key(&l.value) {
                push_at(
                    r,
                    l.pos,
                    &l.value,
                    format!("unknown queue `{}` in `by_queue`", l.value),
                    Some(known_queues(scope)),
                );
            }
        }
    }
}

/// `same_name_as: <label>`: a queue of the case, of the same type, in another region than every
/// other queue of that name (one region holds one queue per name), not a chain back to itself.
fn check_same_name(r: &mut Reader, scope: &Scope, def: &QueueDef, other: &Spanned<String>) {
    let at = |r: &mut Reader, message: String, hint: &str| {
        push_at(r, other.pos, &other.value, message, Some(hint.to_string()))
    };
    let Some(kind) = scope.queues.get(&other.value) else {
        at(
            r,
            format!("unknown queue `{}` in `same_name_as`", other.value),
            &known_queues(scope),
        );
        return;
    };
    if *kind != def.kind {
        at(
            r,
            format!(
                "`{}` is {}, but `{}` is {}: they cannot share a name",
                other.value,
                kind_name(*kind),
                def.label,
                kind_name(def.kind)
            ),
            "a FIFO queue's name ends in `.fifo`; give both the same `type`",
        );
        return;
    }
    let Some(root) = name_root(scope, &def.label, &other.value) else {
        at(
            r,
            format!("`same_name_as` of `{}` leads back to itself", def.label),
            "name a queue that has its own name (no `same_name_as`)",
        );
        return;
    };
    let region = def.region.as_ref().map(|r| r.value.as_str());
    let clash = scope.placement.iter().find(|(label, p)| {
        label.as_str() != def.label
            && p.region.as_deref() == region
            && (*label == root
                || p.same_name_as
                    .as_deref()
                    .and_then(|o| name_root(scope, label, o))
                    == Some(root))
    });
    if let Some((label, _)) = clash {
        at(
            r,
            format!(
                "`{}` and `{label}` would be one queue: the same name in {}",
                def.label,
                region.map_or("the run's region".to_string(), |r| format!("region {r}"))
            ),
            "give the queue another `region:` (one region holds one queue per name)",
        );
    }
}

/// The label whose owned name `label` takes through `same_name_as: other` (following chains),
/// or `None` when the chain leads back to `label`.
fn name_root<'s>(scope: &'s Scope, label: &'s str, other: &'s str) -> Option<&'s str> {
    let mut root = other;
    let mut hops = 0;
    while let Some(next) = scope
        .placement
        .get(root)
        .and_then(|p| p.same_name_as.as_deref())
    {
        if root == label || hops > scope.placement.len() {
            return None;
        }
        root = next;
        hops += 1;
    }
    (root != label).then_some(root)
}

/// A region name: `us-west-2`, `eu-central-1`, `us-gov-west-1`, `cn-north-1`.
fn is_region(s: &str) -> bool {
    let parts: Vec<&str> = s.split('-').collect();
    parts.len() >= 3
        && parts[0].len() == 2
        && parts[0].bytes().all(|b| b.is_ascii_lowercase())
        && parts[1..parts.len() - 1]
            .iter()
            .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_lowercase()))
        && parts
            .last()
            .is_some_and(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
}

/// Every `${arn:<label>}` in raw attribute values must name a queue of the case.
pub(super) fn check_arn_refs(
    r: &mut Reader,
    scope: &Scope,
    at: Pos,
    attributes: &BTreeMap<String, String>,
) {
    for (name, value) in attributes {
        for label in crate::suite::model::arn_refs(value) {
            if !scope.queues.contains_key(label) {
                push_at(
                    r,
                    at,
                    name,
                    format!("`${{arn:{label}}}` in attribute `{name}` names no queue of this case"),
                    Some(known_queues(scope)),
                );
            }
        }
    }
}

pub(super) fn kind_name(k: QueueKind) -> &'static str {
    match k {
        QueueKind::Standard => "a standard queue",
        QueueKind::Fifo => "a FIFO queue",
    }
}

/// A `queues:` entry: a mapping of queue-definition keys under its label.
pub(super) fn decode_queue_entry(
    r: &mut Reader,
    key: &Node,
    value: &Node,
    label: &str,
) -> Option<QueueDef> {
    let f = r.fields(key, value, "a queue definition", QUEUE_KEYS)?;
    Some(decode_queue_def(r, &f, label, Site::Queues))
}

/// The queue-definition keys of checked fields (shared by `queues:` entries and
/// `create-queue` steps, whose other keys are left to the caller); `site` says which.
pub(super) fn decode_queue_def(r: &mut Reader, f: &Fields, label: &str, site: Site) -> QueueDef {
    let kind = match f.get("type") {
        None => QueueKind::Standard,
        Some(n) => match r.string(n, "`type`").as_deref() {
            Some("standard") => QueueKind::Standard,
            Some("fifo") => QueueKind::Fifo,
            Some(other) => {
                r.error_hint(
                    n,
                    format!("unknown queue type `{other}`"),
                    suggest(other, &["standard", "fifo"]),
                );
                QueueKind::Standard
            }
            None => QueueKind::Standard,
        },
    };
    let secs = |r: &mut Reader, key: &str, range| {
        f.get(key).and_then(|n| {
            sqs_values::seconds(r, n, &format!("`{key}`"), range, site, Carried::Attribute)
        })
    };
    let visibility_timeout = secs(r, "visibility_timeout", &limits::QUEUE_VISIBILITY_TIMEOUT);
    let delay = secs(r, "delay", &limits::QUEUE_DELAY_SECONDS);
    let retention = secs(r, "retention", &limits::MESSAGE_RETENTION_PERIOD);
    let receive_wait = secs(
        r,
        "receive_wait",
        &limits::RECEIVE_MESSAGE_WAIT_TIME_SECONDS,
    );
    let max_message_size = f
        .get("max_message_size")
        .and_then(|n| {
            sqs_values::number(
                r,
                n,
                "`max_message_size`",
                &limits::MAXIMUM_MESSAGE_SIZE,
                site,
                Carried::Parameter,
            )
        })
        .and_then(|n| i32::try_from(n).ok());
    let content_based_dedup = f
        .get("content_based_dedup")
        .and_then(|n| r.bool(n, "`content_based_dedup`"));
    let dedup_scope = f
        .get("dedup_scope")
        .and_then(|n| one_of(r, n, "`dedup_scope`", &["queue", "messageGroup"]));
    let throughput_limit = f.get("throughput_limit").and_then(|n| {
        one_of(
            r,
            n,
            "`throughput_limit`",
            &["perQueue", "perMessageGroupId"],
        )
    });
    let redrive = f.get("redrive").and_then(|n| {
        let rf = r.fields(
            f.key("redrive").unwrap_or(n),
            n,
            "`redrive`",
            &["dlq", "max_receive_count"],
        )?;
        if !r.require(&rf, &["dlq", "max_receive_count"]) {
            return None;
        }
        let dlq_node = rf.get("dlq")?;
        let dlq = r.string(dlq_node, "`dlq` (a queue label)")?;
        let max = sqs_values::number(
            r,
            rf.get("max_receive_count")?,
            "`max_receive_count`",
            &limits::MAX_RECEIVE_COUNT,
            site,
            Carried::Parameter,
        )?;
        Some(Redrive {
            dlq: Spanned {
                value: dlq,
                pos: pos(dlq_node),
            },
            max_receive_count: i32::try_from(max).ok()?,
        })
    });
    let redrive_allow = f.get("redrive_allow").and_then(|n| match &n.data {
        YamlData::Mapping(_) => {
            let af = r.fields(
                f.key("redrive_allow").unwrap_or(n),
                n,
                "`redrive_allow`",
                &["by_queue"],
            )?;
            if !r.require(&af, &["by_queue"]) {
                return None;
            }
            let list = af.get("by_queue")?;
            let items = r.seq(list, "queue labels")?;
            let mut labels = Vec::new();
            for i in items {
                labels.push(Spanned {
                    value: r.string(i, "a queue label")?,
                    pos: pos(i),
                });
            }
            Some(RedriveAllow::ByQueue(labels))
        }
        _ => match r.string(n, "`redrive_allow`").as_deref() {
            Some("allowAll") => Some(RedriveAllow::AllowAll),
            Some("denyAll") => Some(RedriveAllow::DenyAll),
            Some(other) => {
                r.error_hint(
                    n,
                    format!("unknown `redrive_allow` value `{other}`"),
                    "write `allowAll`, `denyAll` or `{by_queue: [<label>, ...]}`",
                );
                None
            }
            None => None,
        },
    });
    let attributes = f
        .get("attributes")
        .and_then(|n| r.string_map(n, "`attributes`"))
        .unwrap_or_default();
    let tags = f
        .get("tags")
        .and_then(|n| r.string_map(n, "`tags`"))
        .unwrap_or_default();
    let create = f
        .get("create")
        .and_then(|n| r.bool(n, "`create`"))
        .unwrap_or(true);
    let region = f.get("region").and_then(|n| {
        let region = r.string(n, "`region`")?;
        if !is_region(&region) {
            r.error_hint(
                n,
                format!("`{region}` is not a region name"),
                "e.g. `region: us-west-2` (lower case, as AWS names regions)",
            );
            return None;
        }
        Some(Spanned {
            value: region,
            pos: pos(n),
        })
    });
    let same_name_as = f.get("same_name_as").and_then(|n| {
        Some(Spanned {
            value: r.string(n, "`same_name_as` (a queue label)")?,
            pos: pos(n),
        })
    });
    QueueDef {
        label: label.to_string(),
        pos: pos(f.owner),
        kind,
        create,
        visibility_timeout,
        delay,
        retention,
        receive_wait,
        max_message_size,
        content_based_dedup,
        dedup_scope,
        throughput_limit,
        redrive,
        redrive_allow,
        attributes,
        tags,
        name_suffix: None,
        region,
        same_name_as,
    }
}

fn one_of(r: &mut Reader, n: &Node, what: &str, allowed: &[&str]) -> Option<String> {
    let s = r.string(n, what)?;
    if allowed.contains(&s.as_str()) {
        Some(s)
    } else {
        r.error_hint(
            n,
            format!("unknown {what} value `{s}`"),
            suggest(&s, allowed),
        );
        None
    }
}

/// `create-queue: {queue: <label>, name_suffix?, <queue-definition keys>}`.
pub(super) fn decode_create_queue(
    r: &mut Reader,
    scope: &mut Scope,
    s: &StepInput,
) -> Option<Action> {
    let label_node = s.fields.get("queue")?;
    let label = r.string(label_node, "a queue label")?;
    if !check_queue_label(r, label_node, &label) {
        return None;
    }
    let mut def = decode_queue_def(r, &s.fields, &label, s.site());
    def.pos = pos(label_node);
    if let Some(n) = s.fields.get("name_suffix") {
        let suffix = r.string(n, "`name_suffix`")?;
        if def.same_name_as.is_some() {
            r.error_hint(
                n,
                "`name_suffix` beside `same_name_as`",
                "a queue that shares another's name takes it whole",
            );
            return None;
        }
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
    // Its region and shared name stay too: the runner knows one queue per label.
    if let Some(before) = scope.placement.get(&label)
        && *before != Placement::of(&def)
    {
        r.error_hint(
            label_node,
            format!("queue `{label}` is already defined in another region or under another name"),
            "keep its `region` and `same_name_as`, or use a new label for a different queue",
        );
        return None;
    }
    check_queue_refs(r, scope, &def);
    scope.placement.insert(label.clone(), Placement::of(&def));
    scope.queues.insert(label, def.kind);
    Some(Action::CreateQueue(def))
}
