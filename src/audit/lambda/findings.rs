//! The Lambda findings (pure): what the mapping's invocations, read beside the audit's
//! judgement of the same history, say of the function's handler and its configuration.
//!
//! - `batch_failure_redo` (RECONCILE): a record whose work an invocation committed, in a batch
//!   that failed as a whole (an exception, a timeout, a response AWS treats as a complete
//!   failure), committed again by a later invocation: the batch's records that had succeeded
//!   came back (as AWS says they do by default) and were not reconciled;
//! - `wrong_item_identifier` (REPAIR): a partial batch response whose `itemIdentifier` is not a
//!   record's `messageId` (a receipt handle, an index, empty): AWS treats it as a complete
//!   failure, so the whole batch returns instead of the failed records;
//! - `fifo_order_broken` (REPAIR): on a FIFO queue, a record deleted while an earlier record of
//!   its message group in the same batch returned: it was processed before the one ahead of
//!   it, which AWS's advice (stop at the first failure, report it and every record after it)
//!   prevents;
//! - `poison_without_dlq` (REPAIR): a record that failed in every invocation it was in, at least
//!   twice, and was never deleted, on a queue without a redrive policy: it is retried until the
//!   retention period ends;
//! - `swallowed_failure` (REPAIR): a record the function reported as done (the mapping deleted
//!   it) whose business key the ledger never held by the invocation's end: an error swallowed
//!   and reported as success;
//! - `function_timeout_near_visibility` (HOLD): the queue's visibility timeout below six times
//!   the function's timeout, which AWS advises against (a timeout above it the mapping refuses
//!   to start, as CreateEventSourceMapping does).

use std::collections::BTreeSet;

use super::invocation::Invocation;
use super::settings::{ADVISED_RATIO, Settings};
use crate::audit::judge::{Audit, Finding, FindingKind, worst};

/// What the findings read besides the invocations.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Context {
    pub settings: Settings,
    pub fifo: bool,
    pub dead_letter: bool,
    pub visibility_timeout_s: u64,
}

fn finding(kind: FindingKind, key: Option<&str>, message: Option<&str>, detail: String) -> Finding {
    Finding {
        kind,
        decision: kind.decision(),
        business_key: key.map(str::to_string),
        message: message.map(str::to_string),
        attempt: None,
        detail,
    }
}

/// The Lambda findings of `invocations` (in the order they started) beside `audit`.
pub(crate) fn findings(invocations: &[Invocation], audit: &Audit, ctx: &Context) -> Vec<Finding> {
    let mut out = Vec::new();
    if ctx.settings.near_visibility(ctx.visibility_timeout_s) {
        out.push(finding(
            FindingKind::FunctionTimeoutNearVisibility,
            None,
            None,
            format!(
                "the queue's visibility timeout ({}s) is less than {ADVISED_RATIO} times the function \
                 timeout ({}): AWS advises at least six, so that a batch retried after throttling \
                 does not outlive its lease",
                ctx.visibility_timeout_s,
                sqsprobe_facts::duration::format(ctx.settings.function_timeout)
            ),
        ));
    }
    for inv in invocations {
        if let Some(wrong) = inv.wrong_identifier {
            let done = inv.records.iter().filter(|r| r.done()).count();
            out.push(finding(
                FindingKind::WrongItemIdentifier,
                None,
                None,
                format!(
                    "invocation {} reported {} as an itemIdentifier: Lambda treats that as a \
                     complete failure, so all {} records of the batch returned to the queue, {done} \
                     of them already done (report each failed record's messageId)",
                    inv.request_id,
                    wrong.words(),
                    inv.records.len()
                ),
            ));
        }
    }
    let mut redone = BTreeSet::new();
    for (at, inv) in invocations.iter().enumerate() {
        if inv.outcome.answered() {
            continue;
        }
        for r in inv.records.iter().filter(|r| r.committed()) {
            let again = invocations[at + 1..].iter().find_map(|later| {
                later
                    .records
                    .iter()
                    .find(|l| l.message_id == r.message_id && l.committed())
                    .map(|l| (later, l))
            });
            if let Some((later, l)) = again
                && redone.insert(r.message_id.clone())
            {
                out.push(finding(
                    FindingKind::BatchFailureRedo,
                    r.business_key.as_deref(),
                    Some(&r.message_id),
                    format!(
                        "committed in invocation {}, whose batch failed as a whole ({}); the \
                         batch returned to the queue and invocation {} committed it again (the \
                         ledger held it {} times): reconcile a redelivery through the ledger, or \
                         report partial batch failures",
                        inv.request_id,
                        inv.error_type.as_deref().map_or(
                            inv.outcome.as_str().to_string(),
                            |t| format!("{}: {t}", inv.outcome.as_str())
                        ),
                        later.request_id,
                        l.commits_after.unwrap_or(0)
                    ),
                ));
            }
        }
    }
    if ctx.fifo {
        for inv in invocations
            .iter()
            .filter(|i| i.outcome == super::invocation::Outcome::Partial)
        {
            for (j, r) in inv.records.iter().enumerate() {
                if inv.returned.contains(&j) {
                    continue;
                }
                let ahead = inv.records[..j]
                    .iter()
                    .enumerate()
                    .find(|(i, e)| e.group == r.group && inv.returned.contains(i));
                if let Some((_, e)) = ahead {
                    out.push(finding(
                        FindingKind::FifoOrderBroken,
                        r.business_key.as_deref(),
                        Some(&r.message_id),
                        format!(
                            "invocation {} reported the failure of {} but not of this later record \
                             of group {}: it was deleted while the record ahead of it returned to \
                             the queue, so the group is processed out of order (on a FIFO queue, \
                             stop at the first failure and report it and every record after it)",
                            inv.request_id,
                            e.business_key.as_deref().unwrap_or(&e.message_id),
                            r.group.as_deref().unwrap_or("?")
                        ),
                    ));
                }
            }
        }
    }
    if !ctx.dead_letter {
        for m in audit.per_message.iter().filter(|m| !m.deleted) {
            let tries: Vec<&Invocation> = invocations
                .iter()
                .filter(|i| i.records.iter().any(|r| r.message_id == m.message))
                .collect();
            let failed_every_time = tries.iter().all(|i| {
                i.records
                    .iter()
                    .position(|r| r.message_id == m.message)
                    .is_some_and(|p| i.returned.contains(&p))
            });
            if tries.len() >= 2 && failed_every_time {
                out.push(finding(
                    FindingKind::PoisonWithoutDlq,
                    m.business_key.as_deref(),
                    Some(&m.message),
                    format!(
                        "failed in all {} invocations it was in and the queue has no redrive \
                         policy: it is retried until its retention period ends (give the queue a \
                         dead-letter queue with a maxReceiveCount)",
                        tries.len()
                    ),
                ));
            }
        }
    }
    if audit.ledger {
        let mut swallowed = BTreeSet::new();
        for inv in invocations {
            for (p, r) in inv.records.iter().enumerate() {
                if inv.returned.contains(&p) || r.done() || r.business_key.is_none() {
                    continue;
                }
                if swallowed.insert(r.message_id.clone()) {
                    out.push(finding(
                        FindingKind::SwallowedFailure,
                        r.business_key.as_deref(),
                        Some(&r.message_id),
                        format!(
                            "invocation {} reported it done ({}), so the mapping deleted it, but \
                             the ledger did not hold its key when the invocation ended: an error \
                             swallowed and reported as success",
                            inv.request_id,
                            inv.outcome.as_str()
                        ),
                    ));
                }
            }
        }
    }
    out
}

/// Adds `found` to `audit`: its findings, the messages' findings and decisions, the counts of
/// the Lambda kinds (those that need the ledger unchecked without one), and whether it is clean.
pub(crate) fn apply(audit: &mut Audit, found: Vec<Finding>) {
    for kind in FindingKind::LAMBDA {
        if !audit.ledger && kind.needs_ledger() {
            if !audit.unchecked.contains(&kind) {
                audit.unchecked.push(kind);
            }
        } else {
            audit.counts.entry(kind.as_str().to_string()).or_insert(0);
        }
    }
    for f in found {
        *audit.counts.entry(f.kind.as_str().to_string()).or_default() += 1;
        if let Some(m) = audit
            .per_message
            .iter_mut()
            .find(|m| f.message.as_ref() == Some(&m.message))
        {
            m.findings.push(f.kind);
            m.decision = worst(&m.findings).unwrap_or(m.decision);
        }
        audit.clean = false;
        audit.findings.push(f);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::audit::lambda::event::WrongId;
    use crate::audit::lambda::invocation::Invoked;
    use std::time::Duration;

    fn ctx() -> Context {
        Context {
            settings: Settings {
                batch_size: 10,
                batching_window: Duration::ZERO,
                report_batch_item_failures: true,
                function_timeout: Duration::from_millis(500),
                concurrency: 1,
            },
            fifo: false,
            dead_letter: true,
            visibility_timeout_s: 3,
        }
    }

    fn rec(id: &str, before: u32, after: u32) -> Invoked {
        Invoked {
            message_id: id.into(),
            business_key: Some(format!("b-{id}")),
            group: None,
            receive_count: 1,
            commits_before: Some(before),
            commits_after: Some(after),
        }
    }

    fn inv(
        id: &str,
        outcome: &'static str,
        records: Vec<Invoked>,
        returned: Vec<usize>,
    ) -> Invocation {
        Invocation {
            request_id: id.into(),
            started_ms: 0,
            ended_ms: 1,
            records,
            outcome: serde_json::from_value(serde_json::Value::String(outcome.into())).unwrap(),
            error_type: None,
            wrong_identifier: None,
            returned,
            reset: false,
        }
    }

    fn audit() -> Audit {
        crate::audit::judge::judge(&Default::default(), &Default::default())
    }

    fn kinds(found: &[Finding]) -> Vec<FindingKind> {
        found.iter().map(|f| f.kind).collect()
    }

    #[test]
    fn a_clean_history_has_no_lambda_finding() {
        let invocations = [
            inv(
                "a",
                "partial",
                vec![rec("1", 0, 1), rec("2", 0, 0)],
                vec![1],
            ),
            inv("b", "success", vec![rec("2", 0, 1)], vec![]),
        ];
        let mut a = audit();
        a.ledger = true;
        assert!(findings(&invocations, &a, &ctx()).is_empty());
    }

    #[test]
    fn work_committed_in_a_failed_batch_and_committed_again_is_redone() {
        let invocations = [
            inv(
                "a",
                "function_error",
                vec![rec("1", 0, 1), rec("2", 0, 0)],
                vec![0, 1],
            ),
            inv("b", "success", vec![rec("1", 1, 2), rec("2", 0, 1)], vec![]),
        ];
        let found = findings(&invocations, &audit(), &ctx());
        assert_eq!(kinds(&found), [FindingKind::BatchFailureRedo]);
        assert_eq!(found[0].message.as_deref(), Some("1"));
        // Reconciled: the second invocation skipped the work it found in the ledger.
        let reconciled = [
            invocations[0].clone(),
            inv("b", "success", vec![rec("1", 1, 1), rec("2", 0, 1)], vec![]),
        ];
        assert!(findings(&reconciled, &audit(), &ctx()).is_empty());
    }

    #[test]
    fn a_wrong_identifier_is_named() {
        let mut i = inv("a", "wrong_item_identifier", vec![rec("1", 0, 1)], vec![0]);
        i.wrong_identifier = Some(WrongId::ReceiptHandle);
        let found = findings(&[i], &audit(), &ctx());
        assert_eq!(kinds(&found), [FindingKind::WrongItemIdentifier]);
        assert!(
            found[0].detail.contains("a receipt handle"),
            "{}",
            found[0].detail
        );
    }

    #[test]
    fn a_fifo_record_deleted_behind_a_returned_one_of_its_group_breaks_the_order() {
        let g = |mut r: Invoked, g: &str| {
            r.group = Some(g.into());
            r
        };
        let invocations = [inv(
            "a",
            "partial",
            vec![
                g(rec("1", 0, 0), "x"),
                g(rec("2", 0, 1), "y"),
                g(rec("3", 0, 1), "x"),
            ],
            vec![0],
        )];
        let fifo = Context {
            fifo: true,
            ..ctx()
        };
        let found = findings(&invocations, &audit(), &fifo);
        assert_eq!(kinds(&found), [FindingKind::FifoOrderBroken]);
        assert_eq!(found[0].message.as_deref(), Some("3"));
        // Reporting the rest of the group keeps the order.
        let kept = [inv(
            "a",
            "partial",
            invocations[0].records.clone(),
            vec![0, 2],
        )];
        assert!(findings(&kept, &audit(), &fifo).is_empty());
    }

    #[test]
    fn success_without_the_work_is_a_swallowed_failure_when_the_ledger_shows_work() {
        let invocations = [inv(
            "a",
            "success",
            vec![rec("1", 0, 1), rec("2", 0, 0)],
            vec![],
        )];
        let mut a = audit();
        assert!(
            findings(&invocations, &a, &ctx()).is_empty(),
            "no ledger: unchecked"
        );
        a.ledger = true;
        let found = findings(&invocations, &a, &ctx());
        assert_eq!(kinds(&found), [FindingKind::SwallowedFailure]);
        assert_eq!(found[0].message.as_deref(), Some("2"));
    }

    #[test]
    fn the_advised_visibility_timeout_is_six_function_timeouts() {
        let near = Context {
            visibility_timeout_s: 2,
            ..ctx()
        };
        assert_eq!(
            kinds(&findings(&[], &audit(), &near)),
            [FindingKind::FunctionTimeoutNearVisibility]
        );
        assert!(findings(&[], &audit(), &ctx()).is_empty());
    }
}
