//! Expectations: a step's `expect:` and the `outcome:` it or the case may state.

use std::collections::BTreeMap;

use saphyr::YamlData;

use super::scope::{Scope, message_ref, queue_ref};
use super::steps::StepSpec;
use crate::suite::diagnostic::suggest;
use crate::suite::model::*;
use crate::suite::yaml::{Fields, Node, Reader, pos};

/// Every key a step's `expect:` may have; which of them apply to which step is the step
/// table's `expect` column ([`super::steps::STEPS`]).
pub(super) const EXPECT_KEYS: &[&str] = &[
    "error",
    "status",
    "messages",
    "received",
    "successful",
    "failed",
    "attributes",
    "outcome",
    "message_contains",
    "absent",
    "within",
];

/// The expectations of any step that makes one SQS call: what the response said.
pub(super) const CALL: &[&str] = &["error", "status", "message_contains"];
/// The expectations of batch steps: their `Successful` and `Failed` entries.
pub(super) const BATCH: &[&str] = &["successful", "failed"];

pub(super) fn decode_step_expect(
    r: &mut Reader,
    scope: &Scope,
    f: &Fields,
    spec: &StepSpec,
    action: &Action,
    at: Option<Pos>,
) -> StepExpect {
    let mut e = StepExpect {
        pos: at,
        ..StepExpect::default()
    };
    for (key, key_node, v) in &f.entries {
        if !spec.expects(key) {
            r.error(
                key_node,
                format!("`{key}` does not apply to a `{}` step", spec.keyword),
            );
            continue;
        }
        match *key {
            "error" => e.error = r.nonempty(v, "`error` (an error code)"),
            "status" => e.status = r.int(v, "`status`", 100, 599).map(|n| n as u16),
            "messages" => {
                e.messages = r
                    .int(v, "`messages`", 0, i64::from(u32::MAX))
                    .map(|n| n as u32)
            }
            "successful" => {
                e.successful = r
                    .int(v, "`successful`", 0, i64::from(u32::MAX))
                    .map(|n| n as u32)
            }
            "received" => {
                // ListDeadLetterSourceQueues answers queues, so its labels are queue labels.
                let queues = matches!(action, Action::ListDeadLetterSourceQueues { .. });
                if let Some(items) = r.seq(v, "message labels") {
                    e.received = items
                        .iter()
                        .filter_map(|i| {
                            if queues {
                                queue_ref(r, scope, i)
                            } else {
                                message_ref(r, scope, i)
                            }
                        })
                        .collect();
                }
            }
            "failed" => {
                if let Some(items) = r.seq(v, "failed entries") {
                    let mut out = Vec::new();
                    for item in items {
                        let Some(ff) = r.fields(
                            item,
                            item,
                            "a `failed` entry",
                            &["id", "code", "sender_fault"],
                        ) else {
                            continue;
                        };
                        if !r.require(&ff, &["code"]) {
                            continue;
                        }
                        let Some(code) = ff.get("code").and_then(|n| r.nonempty(n, "`code`"))
                        else {
                            continue;
                        };
                        out.push(FailedEntryExpect {
                            id: ff.get("id").and_then(|n| r.string(n, "`id`")),
                            code,
                            sender_fault: ff
                                .get("sender_fault")
                                .and_then(|n| r.bool(n, "`sender_fault`")),
                        });
                    }
                    e.failed = Some(out);
                }
            }
            "attributes" => e.attributes = r.string_map(v, "`attributes`").unwrap_or_default(),
            "message_contains" => {
                e.message_contains = r.nonempty(v, "`message_contains` (error message text)")
            }
            "absent" => e.absent = r.strings(v, "attribute names", true).unwrap_or_default(),
            "within" => e.within = r.duration(v, "`within`"),
            "outcome" => {
                let tracks: Vec<String> = match action {
                    Action::Observe(o) => o.messages.iter().map(|m| m.value.clone()).collect(),
                    _ => Vec::new(),
                };
                e.outcome = decode_outcome(r, scope, v, &tracks);
            }
            _ => {}
        }
    }
    e
}

fn outcome_class(r: &mut Reader, n: &Node) -> Option<Spanned<OutcomeClass>> {
    let s = r.string(n, "an outcome class")?;
    let class = match s.as_str() {
        "observed_redelivery" => OutcomeClass::ObservedRedelivery,
        "no_redelivery_within_window" => OutcomeClass::NoRedeliveryWithinWindow,
        "inconclusive" => {
            r.error_hint(
                n,
                "`inconclusive` is never an expectation",
                "expect `observed_redelivery` or `no_redelivery_within_window`; an inconclusive run is reported as such",
            );
            return None;
        }
        other => {
            r.error_hint(
                n,
                format!("unknown outcome class `{other}`"),
                suggest(other, OutcomeClass::EXPECTABLE),
            );
            return None;
        }
    };
    Some(Spanned {
        value: class,
        pos: pos(n),
    })
}

/// `outcome: <class>` or `outcome: {label: class}`; labels must be sent and, when the
/// observe step names its messages, tracked by it.
pub(super) fn decode_outcome(
    r: &mut Reader,
    scope: &Scope,
    v: &Node,
    tracks: &[String],
) -> Option<OutcomeExpect> {
    if !matches!(v.data, YamlData::Mapping(_)) {
        return outcome_class(r, v).map(OutcomeExpect::All);
    }
    let mut per = BTreeMap::new();
    for (label, key, class) in r.map_entries(v, "`outcome`")? {
        let known = message_ref(r, scope, key).is_some();
        if known && !tracks.is_empty() && !tracks.iter().any(|t| t == label) {
            r.error_hint(
                key,
                format!("message `{label}` is not tracked by the observe step"),
                format!("it tracks: {}", tracks.join(", ")),
            );
        }
        if let Some(c) = outcome_class(r, class) {
            per.insert(label.to_string(), c);
        }
    }
    if per.is_empty() && matches!(&v.data, YamlData::Mapping(m) if m.is_empty()) {
        r.error(v, "`outcome` is empty");
    }
    Some(OutcomeExpect::PerMessage(per))
}
