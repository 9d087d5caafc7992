//! One case: its metadata, its `queues:`, its steps in order, and its case-level `expect:`.

use super::expect::decode_outcome;
use super::queue::{check_queue_label, check_queue_refs, decode_queue_entry};
use super::scope::{Scope, is_label};
use super::step::decode_step;
use crate::duration;
use crate::suite::diagnostic::suggest;
use crate::suite::limits::{Limits, case_budget};
use crate::suite::model::*;
use crate::suite::yaml::{Node, Reader, pos};

const CASE_KEYS: &[&str] = &[
    "id",
    "title",
    "tags",
    "behaviour",
    "source",
    "retries",
    "protocols",
    "queues",
    "steps",
    "expect",
];

/// The wire protocols a case may be limited to (`protocols:`).
pub const PROTOCOLS: &[&str] = &["json", "query"];

pub(super) fn decode_case(r: &mut Reader, item: &Node, limits: &Limits) -> Option<Case> {
    let f = r.fields(item, item, "a case", CASE_KEYS)?;
    let errors_before = r.diags.len();
    let id_node = f.get("id");
    let id = match id_node {
        None if !f.missing("id") => None,
        None => {
            r.error(item, "a case needs `id`");
            None
        }
        Some(n) => r.string(n, "`id`").and_then(|id| {
            let ok = is_label(&id, 40) && !id.starts_with('-');
            if !ok {
                r.error_hint(
                    n,
                    format!("invalid case id `{id}`"),
                    "ids are 1 to 40 characters of `a-z`, `0-9` and `-`, starting with a letter or digit (they go into queue names)",
                );
                None
            } else {
                Some(id)
            }
        }),
    };
    let title = f.get("title").and_then(|n| r.string(n, "`title`"));
    let tags = f
        .get("tags")
        .and_then(|n| r.strings(n, "tags", false))
        .unwrap_or_default();
    let behaviour = match f.get("behaviour") {
        Some(n) => r.nonempty(n, "`behaviour`"),
        None if !f.missing("behaviour") => None,
        None => {
            r.error_hint(
                item,
                "a case needs `behaviour`",
                "say in a sentence what AWS does here",
            );
            None
        }
    };
    let sources = match f.get("source") {
        Some(n) => r.strings(n, "sources", true).and_then(|s| {
            if s.is_empty() {
                r.error(n, "`source` is empty");
                None
            } else {
                Some(s)
            }
        }),
        None if !f.missing("source") => None,
        None => {
            r.error_hint(
                item,
                "a case needs `source`",
                "cite the AWS doc page or AWS-recorded test the expectation comes from",
            );
            None
        }
    };
    let retries = match f.get("retries") {
        None => RetryPolicy::None,
        Some(n) => match r.string(n, "`retries`").as_deref() {
            Some("none") => RetryPolicy::None,
            Some("standard") => RetryPolicy::Standard,
            Some(other) => {
                r.error_hint(
                    n,
                    format!("unknown retry policy `{other}`"),
                    suggest(other, &["none", "standard"]),
                );
                RetryPolicy::None
            }
            None => RetryPolicy::None,
        },
    };

    let mut protocols = Vec::new();
    if let Some(n) = f.get("protocols") {
        for (i, p) in r
            .strings(n, "protocols", true)
            .unwrap_or_default()
            .into_iter()
            .enumerate()
        {
            if PROTOCOLS.contains(&p.as_str()) {
                protocols.push(p);
            } else {
                let at = match &n.data {
                    saphyr::YamlData::Sequence(items) => items.get(i).unwrap_or(n),
                    _ => n,
                };
                r.error_hint(
                    at,
                    format!("unknown protocol `{p}`"),
                    suggest(&p, PROTOCOLS),
                );
            }
        }
    }

    let mut scope = Scope::default();
    let mut queues = Vec::new();
    if let Some(qnode) = f.get("queues") {
        let entries = r.map_entries(qnode, "`queues`").unwrap_or_default();
        for (label, key, _) in &entries {
            if check_queue_label(r, key, label) {
                scope.queues.insert(label.to_string(), QueueKind::Standard);
            }
        }
        // Kinds first, so a redrive may point at a DLQ listed after its source.
        let mut decoded = Vec::new();
        for (label, key, value) in &entries {
            let def = decode_queue_entry(r, key, value, label);
            if let Some(def) = &def {
                scope.queues.insert(label.to_string(), def.kind);
            }
            decoded.push(def);
        }
        for def in decoded.into_iter().flatten() {
            check_queue_refs(r, &scope, &def);
            queues.push(def);
        }
    }

    let mut steps = Vec::new();
    match f.get("steps") {
        None if !f.missing("steps") => {}
        None => {
            r.error(item, "a case needs `steps`");
        }
        Some(list) => {
            if let Some(items) = r.seq(list, "steps") {
                if items.is_empty() {
                    r.error(list, "`steps` is empty");
                }
                for (index, step) in items.iter().enumerate() {
                    if let Some(step) = decode_step(r, &mut scope, step, index, limits) {
                        steps.push(step);
                    }
                }
            }
        }
    }

    let mut expect = CaseExpect::default();
    let case_expect = f.get("expect").and_then(|n| {
        r.fields(
            f.key("expect").unwrap_or(n),
            n,
            "a case `expect`",
            &["outcome"],
        )
    });
    if let Some(ef) = case_expect
        && let (Some(key), Some(v)) = (ef.key("outcome"), ef.get("outcome"))
    {
        if scope.observes == 0 {
            r.error_hint(
                key,
                "a case `outcome` needs an `observe` step",
                "add an `observe` step; the outcome applies to the last one",
            );
        }
        let tracks = scope.last_observe_tracks.clone();
        expect.outcome = decode_outcome(r, &scope, v, &tracks);
    }

    let case = Case {
        id: id?,
        pos: pos(id_node?),
        title,
        tags,
        behaviour: behaviour?,
        sources: sources?,
        retries,
        protocols,
        queues,
        steps,
        expect,
    };
    if r.diags.len() == errors_before {
        let budget = case_budget(&case);
        let max = limits.max_for(&case);
        if budget > max {
            r.error_hint(
                id_node?,
                format!(
                    "case `{}` may take up to {} (sleeps, receive waits, observe windows and 2s per SQS call), over the limit of {}",
                    case.id,
                    duration::format(budget),
                    duration::format(max)
                ),
                "shorten sleeps or observe windows, or split the case",
            );
        }
    }
    Some(case)
}
