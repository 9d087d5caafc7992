//! The audit's judge (pure): a consumer's deliveries and acknowledgements, what the queue
//! still held at the end, and its ledger, become findings and one playbook decision per
//! message.
//!
//! For every acknowledgement, from the emulator's own knowledge of which attempt its handle
//! names:
//! - `invalid_handle` (REPAIR): a handle the emulator never issued (a MessageId, a made-up
//!   string) or no attempt of it;
//! - `stale_handle_ack` (REPAIR): the handle of an attempt that a redelivery after its lease
//!   lapsed had superseded — the adapter that caches handles by MessageId (a duplicate copy
//!   delivered while the lease held is not one: the original handle still names its copy);
//! - `lease_expired_mid_handler` (HOLD): the attempt's acknowledgement came after its lease
//!   had lapsed (heartbeats with its own handle extend it): another consumer may hold it, the
//!   delete may not take;
//! - `ack_before_commit` (REPAIR): a delete before the ledger held the message's business key
//!   (at-most-once: a crash in between loses the work).
//!
//! For every message:
//! - `duplicate_commit` (RECONCILE): its business key committed more than once;
//! - `deleted_not_committed` (REPAIR): deleted, and its key never reached the ledger;
//! - `never_acked` (HOLD): still on the queue at the end, or moved to its dead-letter queue.
//!
//! A message with no finding is ACCEPT when it was delivered once, RECONCILE (done right) when
//! it was delivered again and the consumer recognised it. Without a ledger (the consumer never
//! wrote `SQSPROBE_LEDGER`) the ledger findings are not checked, and the audit says so.

use std::collections::BTreeMap;

use serde::Serialize;

use super::recorder::Log;
use crate::emulator::audit::{AckOp, Delivery};
use crate::evidence::format::Decision;

/// What a finding is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FindingKind {
    StaleHandleAck,
    AckBeforeCommit,
    LeaseExpiredMidHandler,
    DuplicateCommit,
    DeletedNotCommitted,
    NeverAcked,
    InvalidHandle,
}

impl FindingKind {
    /// Every kind, in the order reports list them.
    pub const ALL: [FindingKind; 7] = [
        FindingKind::StaleHandleAck,
        FindingKind::AckBeforeCommit,
        FindingKind::LeaseExpiredMidHandler,
        FindingKind::DuplicateCommit,
        FindingKind::DeletedNotCommitted,
        FindingKind::NeverAcked,
        FindingKind::InvalidHandle,
    ];

    /// The snake_case name reports and `audit.json` use.
    pub fn as_str(self) -> &'static str {
        match self {
            FindingKind::StaleHandleAck => "stale_handle_ack",
            FindingKind::AckBeforeCommit => "ack_before_commit",
            FindingKind::LeaseExpiredMidHandler => "lease_expired_mid_handler",
            FindingKind::DuplicateCommit => "duplicate_commit",
            FindingKind::DeletedNotCommitted => "deleted_not_committed",
            FindingKind::NeverAcked => "never_acked",
            FindingKind::InvalidHandle => "invalid_handle",
        }
    }

    /// The playbook's decision for it.
    pub fn decision(self) -> Decision {
        match self {
            FindingKind::StaleHandleAck
            | FindingKind::AckBeforeCommit
            | FindingKind::DeletedNotCommitted
            | FindingKind::InvalidHandle => Decision::Repair,
            FindingKind::LeaseExpiredMidHandler | FindingKind::NeverAcked => Decision::Hold,
            FindingKind::DuplicateCommit => Decision::Reconcile,
        }
    }

    /// Whether it needs the ledger to be judged.
    fn needs_ledger(self) -> bool {
        matches!(
            self,
            FindingKind::AckBeforeCommit
                | FindingKind::DuplicateCommit
                | FindingKind::DeletedNotCommitted
        )
    }
}

/// One finding.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Finding {
    pub kind: FindingKind,
    pub decision: Decision,
    pub business_key: Option<String>,
    /// The MessageId concerned, when known.
    pub message: Option<String>,
    /// The attempt (1-based delivery of the message) whose handle it is about, when known.
    pub attempt: Option<u32>,
    pub detail: String,
}

/// One message, judged.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct MessageJudgement {
    pub message: String,
    pub business_key: Option<String>,
    pub deliveries: u32,
    /// Deletes and visibility changes that named an attempt of it.
    pub acks: u32,
    pub commits: Option<u32>,
    pub deleted: bool,
    pub decision: Decision,
    pub findings: Vec<FindingKind>,
}

/// One acknowledgement, judged: which message and attempt it named, and its finding.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AckJudgement {
    /// `delete` or `change_visibility`.
    pub op: &'static str,
    pub message: Option<String>,
    pub attempt: Option<u32>,
    pub at_ms: u64,
    pub finding: Option<FindingKind>,
}

/// The whole audit.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Audit {
    pub messages: u32,
    pub clean: bool,
    /// Whether the consumer wrote a ledger: without one, the ledger findings are not checked.
    pub ledger: bool,
    /// Every kind, with its count (0 included; the ledger kinds absent without a ledger).
    pub counts: BTreeMap<String, u32>,
    pub findings: Vec<Finding>,
    pub per_message: Vec<MessageJudgement>,
    /// Every acknowledgement in the order it came, judged.
    pub acknowledgements: Vec<AckJudgement>,
}

/// What the audit knows at the end, besides the log.
#[derive(Debug, Clone, Default)]
pub struct End {
    /// The MessageIds the audit sent, in send order.
    pub sent: Vec<String>,
    /// The MessageIds the queues still store (their dead-letter queues included).
    pub remaining: Vec<String>,
    /// Those of them a dead-letter queue holds.
    pub dead_lettered: Vec<String>,
    /// The ledger, per business key, or `None` when the consumer never wrote one.
    pub ledger: Option<BTreeMap<String, u32>>,
}

/// Judges the log.
pub fn judge(log: &Log, end: &End) -> Audit {
    let mut findings = Vec::new();
    let ledger = end.ledger.is_some();
    // The deliveries of each message (by seq), in order: attempt k is index k − 1.
    let mut by_seq: BTreeMap<u64, Vec<&Delivery>> = BTreeMap::new();
    for d in &log.deliveries {
        by_seq.entry(d.seq).or_default().push(d);
    }
    // The lease end of each attempt, as heartbeats with its own handle moved it.
    let mut lease: BTreeMap<(u64, u64), u64> = log
        .deliveries
        .iter()
        .map(|d| ((d.seq, d.nonce), d.lease_until_ms))
        .collect();
    let mut acks_of: BTreeMap<u64, u32> = BTreeMap::new();
    let mut acknowledgements = Vec::new();
    for fact in &log.acks {
        let ack = &fact.ack;
        let before = findings.len();
        let mut named: (Option<String>, Option<u32>) = (None, None);
        'judged: {
            let found = ack.handle.and_then(|(seq, nonce)| {
                let attempts = by_seq.get(&seq)?;
                let index = attempts.iter().position(|d| d.nonce == nonce)?;
                Some((seq, nonce, index, attempts))
            });
            let Some((seq, nonce, index, attempts)) = found else {
                findings.push(Finding {
                    kind: FindingKind::InvalidHandle,
                    decision: FindingKind::InvalidHandle.decision(),
                    business_key: None,
                    message: None,
                    attempt: None,
                    detail: format!(
                        "a {} with a receipt handle the queue never issued (handle sha256 {}): a \
                         MessageId or a made-up string is not a receipt handle",
                        op_name(ack.op),
                        &ack.handle_digest[..12.min(ack.handle_digest.len())]
                    ),
                });
                break 'judged;
            };
            *acks_of.entry(seq).or_default() += 1;
            let attempt = attempts[index];
            let number = index as u32 + 1;
            named = (Some(attempt.message_id.clone()), Some(number));
            let key = log.key(attempt.seq);
            let finding = |kind: FindingKind, detail: String| Finding {
                kind,
                decision: kind.decision(),
                business_key: key.clone(),
                message: Some(attempt.message_id.clone()),
                attempt: Some(number),
                detail,
            };
            // A redelivery after this attempt's lease lapsed, before this acknowledgement,
            // supersedes its handle. A copy delivered while the lease held (at-least-once
            // duplicates) is SQS's doing: the original handle still names its own copy.
            let until = lease
                .get(&(seq, nonce))
                .copied()
                .unwrap_or(attempt.lease_until_ms);
            if let Some(newer) = attempts[index + 1..]
                .iter()
                .position(|d| d.at_ms <= ack.at_ms && d.at_ms >= until)
            {
                let newer = index + 1 + newer + 1;
                findings.push(finding(
                    FindingKind::StaleHandleAck,
                    format!(
                        "a {} with attempt {number}'s handle after attempt {newer} had received the \
                         message: the handle was superseded (bind each acknowledgement to the attempt \
                         that received, not to the MessageId)",
                        op_name(ack.op)
                    ),
                ));
                break 'judged;
            }
            if ack.at_ms > until {
                findings.push(finding(
                    FindingKind::LeaseExpiredMidHandler,
                    format!(
                        "attempt {number}'s {} came {} ms after its lease ended: the message was \
                         visible again, another consumer may hold it, and the acknowledgement may not \
                         take (extend the lease while the handler runs)",
                        op_name(ack.op),
                        ack.at_ms - until
                    ),
                ));
                break 'judged;
            }
            match ack.op {
                AckOp::ChangeVisibility { timeout_s } => {
                    let timeout = u64::try_from(timeout_s.max(0)).unwrap_or(0);
                    lease.insert((seq, nonce), ack.at_ms + timeout * 1000);
                }
                AckOp::Delete if ledger && fact.commits_at_ack.unwrap_or(0) == 0 => {
                    findings.push(finding(
                        FindingKind::AckBeforeCommit,
                        format!(
                            "attempt {number} deleted the message before the ledger held {}: a crash \
                             between the delete and the commit loses the work (commit, then delete)",
                            key.as_deref().unwrap_or("its business key")
                        ),
                    ));
                }
                AckOp::Delete => {}
            }
        }
        acknowledgements.push(AckJudgement {
            op: op_key(ack.op),
            message: named.0,
            attempt: named.1,
            at_ms: ack.at_ms,
            finding: findings[before..].first().map(|f| f.kind),
        });
    }

    let mut per_message = Vec::new();
    for message in &end.sent {
        let deliveries: Vec<&Delivery> = log
            .deliveries
            .iter()
            .filter(|d| &d.message_id == message)
            .collect();
        let seq = deliveries.first().map(|d| d.seq);
        let key = deliveries.first().and_then(|d| log.key(d.seq));
        let commits = end
            .ledger
            .as_ref()
            .map(|l| key.as_ref().and_then(|k| l.get(k).copied()).unwrap_or(0));
        let deleted = !end.remaining.contains(message);
        let here = |kind: FindingKind, detail: String| Finding {
            kind,
            decision: kind.decision(),
            business_key: key.clone(),
            message: Some(message.clone()),
            attempt: None,
            detail,
        };
        if let Some(n) = commits.filter(|n| *n > 1) {
            findings.push(here(
                FindingKind::DuplicateCommit,
                format!(
                    "its business key was committed {n} times over {} deliveries: the redelivery \
                     was not reconciled through the ledger",
                    deliveries.len()
                ),
            ));
        }
        if deleted && commits == Some(0) {
            findings.push(here(
                FindingKind::DeletedNotCommitted,
                "it was deleted, and its business key never reached the ledger".to_string(),
            ));
        }
        if !deleted {
            let after = format!(
                "after {} deliver{}",
                deliveries.len(),
                if deliveries.len() == 1 { "y" } else { "ies" }
            );
            let detail = if end.dead_lettered.contains(message) {
                format!(
                    "moved to the dead-letter queue {after}, never acknowledged: each delivery's \
                     handler ended without a delete"
                )
            } else {
                format!("still on the queue at the end, {after}")
            };
            findings.push(here(FindingKind::NeverAcked, detail));
        }
        let kinds: Vec<FindingKind> = findings
            .iter()
            .filter(|f| f.message.as_ref() == Some(message))
            .map(|f| f.kind)
            .collect();
        let decision = worst(&kinds).unwrap_or(if deliveries.len() > 1 {
            Decision::Reconcile
        } else {
            Decision::Accept
        });
        per_message.push(MessageJudgement {
            message: message.clone(),
            business_key: key,
            deliveries: deliveries.len() as u32,
            acks: seq.and_then(|s| acks_of.get(&s).copied()).unwrap_or(0),
            commits,
            deleted,
            decision,
            findings: kinds,
        });
    }
    let mut counts = BTreeMap::new();
    for kind in FindingKind::ALL {
        if ledger || !kind.needs_ledger() {
            counts.insert(kind.as_str().to_string(), 0);
        }
    }
    for f in &findings {
        *counts.entry(f.kind.as_str().to_string()).or_default() += 1;
    }
    Audit {
        messages: end.sent.len() as u32,
        clean: findings.is_empty(),
        ledger,
        counts,
        findings,
        per_message,
        acknowledgements,
    }
}

/// The most urgent decision among a message's findings: REPAIR, then HOLD, then RECONCILE.
fn worst(kinds: &[FindingKind]) -> Option<Decision> {
    let rank = |d: Decision| match d {
        Decision::Repair => 0,
        Decision::Hold => 1,
        Decision::Reconcile => 2,
        Decision::Accept => 3,
    };
    kinds.iter().map(|k| k.decision()).min_by_key(|d| rank(*d))
}

fn op_key(op: AckOp) -> &'static str {
    match op {
        AckOp::Delete => "delete",
        AckOp::ChangeVisibility { .. } => "change_visibility",
    }
}

fn op_name(op: AckOp) -> &'static str {
    match op {
        AckOp::Delete => "delete",
        AckOp::ChangeVisibility { .. } => "visibility change",
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::audit::recorder::AckFact;
    use crate::emulator::audit::Ack;
    use crate::evidence::business_key;

    fn delivery(seq: u64, nonce: u64, at: u64, lease: u64) -> Delivery {
        Delivery {
            queue: "q".into(),
            message_id: format!("m{seq}"),
            seq,
            nonce,
            body: format!(r#"{{"business_key": "b-{seq}", "seq": {seq}}}"#),
            at_ms: at,
            lease_until_ms: at + lease,
        }
    }

    fn ack(op: AckOp, handle: Option<(u64, u64)>, at: u64, commits: Option<u32>) -> AckFact {
        AckFact {
            ack: Ack {
                queue: "q".into(),
                op,
                handle,
                handle_digest: "0123456789abcdef".into(),
                at_ms: at,
            },
            business_key: handle.map(|(s, _)| format!("b-{s}")),
            commits_at_ack: commits,
        }
    }

    fn end(sent: &[u64], remaining: &[u64], ledger: Option<&[(&str, u32)]>) -> End {
        End {
            sent: sent.iter().map(|s| format!("m{s}")).collect(),
            remaining: remaining.iter().map(|s| format!("m{s}")).collect(),
            ledger: ledger.map(|l| l.iter().map(|(k, n)| (k.to_string(), *n)).collect()),
            dead_lettered: Vec::new(),
        }
    }

    /// The log with each message's key read from its body, as the recorder does.
    pub(crate) fn keyed(mut log: Log) -> Log {
        for d in &log.deliveries {
            if let Some(k) = business_key(&d.body) {
                log.keys.entry(d.seq).or_insert(k);
            }
        }
        log
    }

    fn kinds(a: &Audit) -> Vec<FindingKind> {
        a.findings.iter().map(|f| f.kind).collect()
    }

    #[test]
    fn a_correct_consumer_is_clean_and_each_message_accepted() {
        let log = keyed(Log {
            deliveries: vec![delivery(1, 1, 0, 10_000), delivery(2, 2, 0, 10_000)],
            acks: vec![
                ack(AckOp::Delete, Some((1, 1)), 500, Some(1)),
                ack(AckOp::Delete, Some((2, 2)), 600, Some(1)),
            ],
            ..Log::default()
        });
        let a = judge(&log, &end(&[1, 2], &[], Some(&[("b-1", 1), ("b-2", 1)])));
        assert!(a.clean, "{:?}", a.findings);
        assert!(a.per_message.iter().all(|m| m.decision == Decision::Accept));
        assert_eq!(a.counts["stale_handle_ack"], 0);
        assert_eq!(a.counts.len(), 7);
    }

    #[test]
    fn a_handle_cached_by_message_id_is_a_stale_ack() {
        // Attempt 1's lease lapses, attempt 2 receives, the consumer deletes with attempt 1's.
        let log = keyed(Log {
            deliveries: vec![delivery(1, 1, 0, 1_000), delivery(1, 2, 1_500, 10_000)],
            acks: vec![ack(AckOp::Delete, Some((1, 1)), 2_000, Some(1))],
            ..Log::default()
        });
        let a = judge(&log, &end(&[1], &[], Some(&[("b-1", 1)])));
        assert_eq!(kinds(&a), [FindingKind::StaleHandleAck]);
        assert_eq!(a.findings[0].attempt, Some(1));
        assert!(
            a.findings[0].detail.contains("after attempt 2"),
            "{}",
            a.findings[0].detail
        );
        assert_eq!(a.per_message[0].decision, Decision::Repair);
    }

    #[test]
    fn a_duplicate_copy_during_the_lease_leaves_the_original_handle_good() {
        let log = keyed(Log {
            deliveries: vec![delivery(1, 1, 0, 10_000), delivery(1, 2, 500, 10_000)],
            acks: vec![ack(AckOp::Delete, Some((1, 1)), 1_000, Some(1))],
            ..Log::default()
        });
        let a = judge(&log, &end(&[1], &[], Some(&[("b-1", 1)])));
        assert!(a.clean, "{:?}", a.findings);
        assert_eq!(a.per_message[0].decision, Decision::Reconcile);
    }

    #[test]
    fn a_late_ack_a_delete_before_commit_and_the_ledger_kinds() {
        let log = keyed(Log {
            deliveries: vec![
                delivery(1, 1, 0, 1_000),
                delivery(2, 2, 0, 10_000),
                delivery(3, 3, 0, 10_000),
                delivery(3, 4, 500, 10_000),
            ],
            acks: vec![
                // Past its lease, nobody else received: lease expired mid-handler.
                ack(AckOp::Delete, Some((1, 1)), 1_500, Some(1)),
                // Deleted before the commit.
                ack(AckOp::Delete, Some((2, 2)), 100, Some(0)),
                // A heartbeat then a late-looking delete that the heartbeat covers.
                ack(
                    AckOp::ChangeVisibility { timeout_s: 30 },
                    Some((3, 4)),
                    9_000,
                    Some(1),
                ),
                ack(AckOp::Delete, Some((3, 4)), 12_000, Some(2)),
                // Not a handle at all.
                ack(AckOp::Delete, None, 12_500, None),
            ],
            ..Log::default()
        });
        let a = judge(
            &log,
            &end(
                &[1, 2, 3, 4],
                &[4],
                Some(&[("b-1", 1), ("b-2", 0), ("b-3", 2)]),
            ),
        );
        let mut got = kinds(&a);
        got.sort();
        assert_eq!(
            got,
            [
                FindingKind::AckBeforeCommit,
                FindingKind::LeaseExpiredMidHandler,
                FindingKind::DuplicateCommit,
                FindingKind::DeletedNotCommitted,
                FindingKind::NeverAcked,
                FindingKind::InvalidHandle,
            ]
        );
        let m3 = a.per_message.iter().find(|m| m.message == "m3").unwrap();
        assert_eq!((m3.deliveries, m3.decision), (2, Decision::Reconcile));
    }

    #[test]
    fn without_a_ledger_the_ledger_kinds_are_not_checked() {
        let log = keyed(Log {
            deliveries: vec![delivery(1, 1, 0, 10_000)],
            acks: vec![ack(AckOp::Delete, Some((1, 1)), 100, None)],
            ..Log::default()
        });
        let a = judge(&log, &end(&[1], &[], None));
        assert!(a.clean && !a.ledger);
        assert!(!a.counts.contains_key("ack_before_commit"));
        assert_eq!(a.per_message[0].commits, None);
    }
}
