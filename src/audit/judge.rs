//! The audit's judge (pure): a consumer's deliveries and acknowledgements, what the queue
//! still held at the end, and its ledger, become findings and one playbook decision per
//! message.
//!
//! For every acknowledgement, from the emulator's own knowledge of which attempt its handle
//! names, its class in the one lease vocabulary (`classify::leases`, the same reading `run`
//! makes of a suite's calls, on the emulator's exact clock) gives its finding and decision:
//! - `invalid_handle` (`unknown_handle`, REPAIR): a handle the emulator never issued (a
//!   MessageId, a made-up string) or no attempt of it;
//! - `stale_handle_ack` (`other_attempt`, REPAIR): an older attempt's handle standing in for a
//!   newer attempt that never used its own — whatever ended the older lease (a lapse, a delete
//!   and a copy coming back, a duplicate copy): the adapter that caches handles by MessageId;
//! - `lease_expired_mid_handler` (`late` or `superseded`, HOLD): the attempt's acknowledgement,
//!   with its own handle, came after its lease had lapsed (heartbeats with its own handle
//!   extend it), whether or not another attempt had received the message since: the delete
//!   may not take, and the advice is the lease's (heartbeat, a longer visibility timeout, a
//!   smaller prefetch), not a handle cache's;
//! - `unplaced_ack` (`unsure`, HOLD): the times cannot place it (never on the emulator's
//!   own clock; kept so that no class falls through as fine);
//! - `ack_before_commit` (REPAIR): a delete before the ledger held the message's business key
//!   (at-most-once: a crash in between loses the work) — unless the consumer had by then
//!   handed the work on as a new message to a source queue of the plan (a retry that
//!   publishes again, then deletes): the new message carries it and is judged in turn.
//!
//! The ledger is every effect channel the audit sees ([`super::effects`]): the file, the
//! HTTP ledger, forwards to output queues; a key's commits are the most one channel holds.
//!
//! For every message:
//! - `duplicate_commit` (RECONCILE): its business key committed more than once;
//! - `lost_work` (REPAIR): deleted, and its key never reached the ledger by the end: the work
//!   is lost (the at-most-once window that `ack_before_commit` names was hit — a crash, a kill
//!   of `--nemesis kill` — or the work was never done). `ack_before_commit` is the
//!   acknowledgement that opened the window, `lost_work` the message that fell through it;
//! - `never_acked` (HOLD): still on the queue at the end, or moved to its dead-letter queue.
//!
//! - `gone_without_delete` (HOLD): no longer on the queue, but no delete of it took (a purge,
//!   the queue's deletion, its retention ending): gone is not deleted;
//! - `unreadable_key` (HOLD): a message delivered (or a forward sent) whose business key
//!   cannot be read where the plan says: its work cannot be judged, never counted as undone.
//!
//! For the ledger: `unmatched_commit` (HOLD), a line of a channel that is no message's
//! business key (a ledger of MessageIds, a forward carrying another key), named.
//!
//! The messages judged are those the audit sent and those the consumer handed off.
//!
//! Under `--nemesis` the log holds what the nemesis did, and the findings it explains say so:
//! `lost_work` of a message whose delete was the kill point, a lease finding of an attempt
//! held across a pause.
//!
//! A message with no finding is ACCEPT when it was delivered once, RECONCILE (done right) when
//! it was delivered again and the consumer recognised it — both only with proof of work.
//! Without a ledger (the consumer never wrote `SQSPROBE_LEDGER`) the work checks are not
//! made: every message without a finding is HOLD, and the audit is never clean (it cannot
//! conclude), whatever else it found.

use std::collections::BTreeMap;

use serde::Serialize;

use super::effects::Channel;
use super::log::{End, Log};
use super::nemesis::{Act, ActKind, On};
use sqsprobe_core::classify::leases::{self, AckClass, HandleOp, HandleUse, Span, UseAnswer};
use sqsprobe_core::evidence::format::Decision;
use sqsprobe_emulator::audit::{AckOp, Delivery};

/// What a finding is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum FindingKind {
    StaleHandleAck,
    AckBeforeCommit,
    LeaseExpiredMidHandler,
    DuplicateCommit,
    LostWork,
    NeverAcked,
    GoneWithoutDelete,
    InvalidHandle,
    UnplacedAck,
    UnreadableKey,
    UnmatchedCommit,
    // The Lambda findings (`audit --lambda`, made by `super::lambda::findings`).
    BatchFailureRedo,
    WrongItemIdentifier,
    FifoOrderBroken,
    PoisonWithoutDlq,
    SwallowedFailure,
    FunctionTimeoutNearVisibility,
}

impl FindingKind {
    /// Every kind, in the order reports list them.
    pub(crate) const ALL: [FindingKind; 11] = [
        FindingKind::StaleHandleAck,
        FindingKind::AckBeforeCommit,
        FindingKind::LeaseExpiredMidHandler,
        FindingKind::DuplicateCommit,
        FindingKind::LostWork,
        FindingKind::NeverAcked,
        FindingKind::GoneWithoutDelete,
        FindingKind::InvalidHandle,
        FindingKind::UnplacedAck,
        FindingKind::UnreadableKey,
        FindingKind::UnmatchedCommit,
    ];

    /// The snake_case name reports and `audit.json` use.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            FindingKind::StaleHandleAck => "stale_handle_ack",
            FindingKind::AckBeforeCommit => "ack_before_commit",
            FindingKind::LeaseExpiredMidHandler => "lease_expired_mid_handler",
            FindingKind::DuplicateCommit => "duplicate_commit",
            FindingKind::LostWork => "lost_work",
            FindingKind::NeverAcked => "never_acked",
            FindingKind::GoneWithoutDelete => "gone_without_delete",
            FindingKind::InvalidHandle => "invalid_handle",
            FindingKind::UnplacedAck => "unplaced_ack",
            FindingKind::UnreadableKey => "unreadable_key",
            FindingKind::UnmatchedCommit => "unmatched_commit",
            FindingKind::BatchFailureRedo => "batch_failure_redo",
            FindingKind::WrongItemIdentifier => "wrong_item_identifier",
            FindingKind::FifoOrderBroken => "fifo_order_broken",
            FindingKind::PoisonWithoutDlq => "poison_without_dlq",
            FindingKind::SwallowedFailure => "swallowed_failure",
            FindingKind::FunctionTimeoutNearVisibility => "function_timeout_near_visibility",
        }
    }

    /// The playbook's decision for it: for the kinds about one acknowledgement's place in
    /// its lease, the class's own (`classify::leases::AckClass::decision`), as `run` decides.
    pub(crate) fn decision(self) -> Decision {
        let class = match self {
            FindingKind::StaleHandleAck => Some(AckClass::OtherAttempt),
            // `late` and `superseded` alike: the attempt's own handle after its lease.
            FindingKind::LeaseExpiredMidHandler => Some(AckClass::Late),
            FindingKind::UnplacedAck => Some(AckClass::Unsure),
            FindingKind::InvalidHandle => Some(AckClass::UnknownHandle),
            _ => None,
        };
        if let Some(d) = class.and_then(AckClass::decision) {
            return d;
        }
        match self {
            FindingKind::AckBeforeCommit
            | FindingKind::LostWork
            | FindingKind::WrongItemIdentifier
            | FindingKind::FifoOrderBroken
            | FindingKind::PoisonWithoutDlq
            | FindingKind::SwallowedFailure => Decision::Repair,
            FindingKind::FunctionTimeoutNearVisibility => Decision::Hold,
            FindingKind::BatchFailureRedo => Decision::Reconcile,
            FindingKind::NeverAcked
            | FindingKind::GoneWithoutDelete
            | FindingKind::UnreadableKey
            | FindingKind::UnmatchedCommit => Decision::Hold,
            FindingKind::DuplicateCommit => Decision::Reconcile,
            // Each has its class above.
            FindingKind::StaleHandleAck
            | FindingKind::InvalidHandle
            | FindingKind::LeaseExpiredMidHandler
            | FindingKind::UnplacedAck => Decision::Hold,
        }
    }

    /// The Lambda findings, in the order reports list them (only an `audit --lambda` counts
    /// them).
    pub(crate) const LAMBDA: [FindingKind; 6] = [
        FindingKind::BatchFailureRedo,
        FindingKind::WrongItemIdentifier,
        FindingKind::FifoOrderBroken,
        FindingKind::PoisonWithoutDlq,
        FindingKind::SwallowedFailure,
        FindingKind::FunctionTimeoutNearVisibility,
    ];

    /// Whether it needs the ledger to be judged.
    pub(crate) fn needs_ledger(self) -> bool {
        matches!(
            self,
            FindingKind::AckBeforeCommit
                | FindingKind::DuplicateCommit
                | FindingKind::LostWork
                | FindingKind::UnmatchedCommit
                | FindingKind::BatchFailureRedo
                | FindingKind::SwallowedFailure
        )
    }
}

/// One finding.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct Finding {
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
pub(crate) struct MessageJudgement {
    pub message: String,
    pub business_key: Option<String>,
    pub deliveries: u32,
    /// Deletes and visibility changes that named an attempt of it.
    pub acks: u32,
    pub commits: Option<u32>,
    pub deleted: bool,
    /// `audit` (the plan's) or `consumer` (a hand-off the consumer sent to a source queue).
    pub sent_by: &'static str,
    pub decision: Decision,
    pub findings: Vec<FindingKind>,
}

/// One acknowledgement, judged: which message and attempt it named, and its finding.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct AckJudgement {
    /// `delete` or `change_visibility`.
    pub op: &'static str,
    pub message: Option<String>,
    pub attempt: Option<u32>,
    pub at_ms: u64,
    /// Its class in the lease vocabulary (`classify::leases`), the one `run` uses.
    pub class: AckClass,
    pub finding: Option<FindingKind>,
}

/// The whole audit.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct Audit {
    pub messages: u32,
    /// No finding, and the work was checked (a ledger): never clean without proof of work.
    pub clean: bool,
    /// Whether the consumer wrote a ledger: without one, the ledger findings are not checked,
    /// no message is ACCEPT, and the audit cannot be clean.
    pub ledger: bool,
    /// The kinds the audit could not check (without a ledger: the work's), in report order.
    pub unchecked: Vec<FindingKind>,
    /// Every kind, with its count (0 included; the ledger kinds absent without a ledger).
    pub counts: BTreeMap<String, u32>,
    pub findings: Vec<Finding>,
    pub per_message: Vec<MessageJudgement>,
    /// Every acknowledgement in the order it came, judged.
    pub acknowledgements: Vec<AckJudgement>,
    /// The queues the consumer used that the audit did not make (a queue name of its own
    /// configuration leaves the plan's messages unread), with what it did there.
    pub foreign_queues: Vec<super::queues::ForeignQueue>,
}

/// Judges the log.
pub(crate) fn judge(log: &Log, end: &End) -> Audit {
    let mut findings = Vec::new();
    // Every channel's commits per key; `None`: nothing could show the work.
    let commits_of = log.effects.combined(end.ledger.as_ref());
    let ledger = commits_of.is_some();
    // The deliveries of each message (by seq), in order: attempt k is index k − 1.
    let mut by_seq: BTreeMap<u64, Vec<&Delivery>> = BTreeMap::new();
    for d in &log.deliveries {
        by_seq.entry(d.seq).or_default().push(d);
    }
    // The log in the lease vocabulary (`classify::leases`), on the emulator's exact clock: a
    // handle is named by the attempt the emulator knows it names.
    let names: Vec<String> = log
        .deliveries
        .iter()
        .map(|d| handle_name(d.seq, d.nonce))
        .collect();
    let deliveries: Vec<leases::Delivery<'_>> = log
        .deliveries
        .iter()
        .zip(&names)
        .map(|(d, name)| leases::Delivery {
            message: &d.message_id,
            handle: name,
            at: Span::at(d.at_ms as f64),
            lease_ms: Some(d.lease_until_ms.saturating_sub(d.at_ms)),
        })
        .collect();
    let use_names: Vec<Option<String>> = log
        .acks
        .iter()
        .map(|f| f.ack.handle.map(|(s, n)| handle_name(s, n)))
        .collect();
    let uses: Vec<HandleUse<'_>> = log
        .acks
        .iter()
        .zip(&use_names)
        .map(|(f, name)| HandleUse {
            handle: name.as_deref(),
            op: match f.ack.op {
                AckOp::Delete => HandleOp::Delete,
                AckOp::ChangeVisibility { timeout_s } => HandleOp::ChangeVisibility {
                    timeout_ms: u64::try_from(timeout_s.max(0)).unwrap_or(0) * 1000,
                },
            },
            at: Span::at(f.ack.at_ms as f64),
            // The observer hears a request before it is answered; the emulator takes every
            // acknowledgement it can name.
            answer: UseAnswer::Took,
        })
        .collect();
    let reading = leases::read(&deliveries, &uses, f64::INFINITY);
    let mut acks_of: BTreeMap<u64, u32> = BTreeMap::new();
    let mut acknowledgements = Vec::new();
    for (fact, judged) in log.acks.iter().zip(&reading.uses) {
        let ack = &fact.ack;
        let before = findings.len();
        let mut named: (Option<String>, Option<u32>) = (None, None);
        let attempt = judged.delivery.map(|i| &log.deliveries[i]);
        match attempt {
            None => findings.push(Finding {
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
            }),
            Some(attempt) => {
                *acks_of.entry(attempt.seq).or_default() += 1;
                let attempts = &by_seq[&attempt.seq];
                let number = attempts
                    .iter()
                    .position(|d| d.nonce == attempt.nonce)
                    .unwrap_or(0) as u32
                    + 1;
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
                let since = judged.since.unwrap_or(0.0) as u64;
                match judged.class {
                    AckClass::OtherAttempt => {
                        // The newer attempt this acknowledgement stood in for: delivered
                        // before it, and never acknowledged with its own handle.
                        let acked = |nonce: u64| {
                            log.acks
                                .iter()
                                .any(|f| f.ack.handle == Some((attempt.seq, nonce)))
                        };
                        let newer = attempts
                            .iter()
                            .enumerate()
                            .skip(number as usize)
                            .find(|(_, d)| d.at_ms <= ack.at_ms && !acked(d.nonce))
                            .map_or(number + 1, |(i, _)| i as u32 + 1);
                        findings.push(finding(
                            FindingKind::StaleHandleAck,
                            format!(
                                "a {} with attempt {number}'s handle after attempt {newer} had \
                                 received the message, and attempt {newer}'s own handle was never \
                                 used: the acknowledgement stood in for attempt {newer} with \
                                 another attempt's handle (bind each acknowledgement to the \
                                 attempt that received, not to the MessageId)",
                                op_name(ack.op)
                            ),
                        ));
                    }
                    AckClass::Superseded => findings.push(finding(
                        FindingKind::LeaseExpiredMidHandler,
                        format!(
                            "attempt {number}'s {} came after its lease ended and another attempt \
                             had received the message ({} ms before): its own handle, no longer \
                             the newest, and the acknowledgement may not take (extend the lease \
                             while the handler runs: heartbeat, a longer visibility timeout or a \
                             smaller prefetch){}",
                            op_name(ack.op),
                            ack.at_ms.saturating_sub(since),
                            paused_while(log, attempt.at_ms, ack.at_ms)
                        ),
                    )),
                    AckClass::Late => findings.push(finding(
                        FindingKind::LeaseExpiredMidHandler,
                        format!(
                            "attempt {number}'s {} came {} ms after its lease ended: the message was \
                             visible again, another consumer may hold it, and the acknowledgement may \
                             not take (extend the lease while the handler runs: heartbeat, a longer \
                             visibility timeout or a smaller prefetch){}",
                            op_name(ack.op),
                            ack.at_ms.saturating_sub(since),
                            paused_while(log, attempt.at_ms, ack.at_ms)
                        ),
                    )),
                    AckClass::Unsure => findings.push(finding(
                        FindingKind::UnplacedAck,
                        format!(
                            "attempt {number}'s {} cannot be placed inside or outside its lease",
                            op_name(ack.op)
                        ),
                    )),
                    AckClass::InLease | AckClass::AfterEnd | AckClass::UnknownHandle => {
                        if ack.op == AckOp::Delete
                            && ledger
                            && key.is_some()
                            && !fact.handed_off
                            && fact.commits_at_ack.unwrap_or(0) == 0
                        {
                            findings.push(finding(
                                FindingKind::AckBeforeCommit,
                                format!(
                                    "attempt {number} deleted the message before the ledger held \
                                     {}: a crash between the delete and the commit loses the work \
                                     (commit, then delete)",
                                    key.as_deref().unwrap_or("its business key")
                                ),
                            ));
                        }
                    }
                }
            }
        }
        acknowledgements.push(AckJudgement {
            op: op_key(ack.op),
            message: named.0,
            attempt: named.1,
            at_ms: ack.at_ms,
            class: judged.class,
            finding: findings[before..].first().map(|f| f.kind),
        });
    }

    let mut per_message = Vec::new();
    // The plan's messages, then the hand-offs the consumer sent to its source queues: each
    // carries work of its own to judge.
    let judged: Vec<(&String, Option<&super::effects::Handoff>)> = end
        .sent
        .iter()
        .map(|m| (m, None))
        .chain(
            log.handoffs
                .iter()
                .filter(|h| !end.sent.contains(&h.message_id))
                .map(|h| (&h.message_id, Some(h))),
        )
        .collect();
    let mut duplicates_said = std::collections::BTreeSet::new();
    for (message, handoff) in judged {
        let deliveries: Vec<&Delivery> = log
            .deliveries
            .iter()
            .filter(|d| &d.message_id == message)
            .collect();
        let seq = deliveries.first().map(|d| d.seq);
        let key = deliveries
            .first()
            .and_then(|d| log.key(d.seq))
            .or_else(|| handoff.and_then(|h| h.key.clone()));
        // Read where the plan says, and nothing there: the audit cannot judge its work.
        let unreadable = key.is_none() && (!deliveries.is_empty() || handoff.is_some());
        let commits = commits_of
            .as_ref()
            .and_then(|l| key.as_ref().map(|k| l.get(k).copied().unwrap_or(0)));
        // Deleted means a delete of it took, not that it is gone: a purge, the queue's
        // deletion or retention expiry also empty a queue, and none of them is the consumer's
        // acknowledgement.
        let gone = !end.remaining.contains(message);
        let deletes: Vec<&crate::audit::log::AckFact> = log
            .acks
            .iter()
            .zip(&reading.uses)
            .filter(|(f, j)| {
                f.ack.op == AckOp::Delete
                    && j.delivery
                        .is_some_and(|i| &log.deliveries[i].message_id == message)
            })
            .map(|(f, _)| f)
            .collect();
        let deleted = gone && !deletes.is_empty();
        // Its work went on in a message of the consumer's before it was deleted.
        let handed_on = deletes.iter().any(|f| f.handed_off);
        let here = |kind: FindingKind, detail: String| Finding {
            kind,
            decision: kind.decision(),
            business_key: key.clone(),
            message: Some(message.clone()),
            attempt: None,
            detail,
        };
        if unreadable {
            let at = handoff.map_or_else(
                || "where the plan's `key:` says".to_string(),
                |h| format!("at `{}` (queue `{}`)", h.key_at, h.queue),
            );
            findings.push(here(
                FindingKind::UnreadableKey,
                format!(
                    "its business key cannot be read {at}{}: the audit cannot tell whether its \
                     work was done, so it is held, never counted as done or undone",
                    if handoff.is_some() {
                        ", in a message the consumer sent to the queue"
                    } else {
                        ""
                    }
                ),
            ));
        }
        if let Some(n) = commits.filter(|n| *n > 1)
            && duplicates_said.insert(key.clone())
        {
            findings.push(here(
                FindingKind::DuplicateCommit,
                format!(
                    "its business key was committed {n} times over {} deliveries: the redelivery \
                     was not reconciled through the ledger",
                    deliveries.len()
                ),
            ));
        }
        if deleted && commits == Some(0) && !handed_on {
            let killed = killed_at_delete(log, message).map_or(String::new(), |kill| {
                format!(
                    " (the nemesis killed the consumer at delete {} as this delete was answered, \
                     before any commit: acknowledging before the work loses the work of a crash \
                     there; commit, then delete)",
                    kill.count.unwrap_or(0)
                )
            });
            findings.push(here(
                FindingKind::LostWork,
                format!(
                    "it was deleted, and its business key never reached the ledger: the work is \
                     lost{killed}"
                ),
            ));
        }
        if gone && !deleted {
            findings.push(here(
                FindingKind::GoneWithoutDelete,
                format!(
                    "it left the queue after {} deliver{} without a delete that took: a purge, \
                     the queue's deletion or its retention period ending is not an \
                     acknowledgement, and nothing shows the work was done",
                    deliveries.len(),
                    if deliveries.len() == 1 { "y" } else { "ies" }
                ),
            ));
        }
        if !gone {
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
        // Without a ledger the work is unproven: an acknowledgement whose work nobody can
        // see is held, never accepted.
        let decision = worst(&kinds).unwrap_or(if !ledger {
            Decision::Hold
        } else if deliveries.len() > 1 {
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
            sent_by: if handoff.is_some() {
                "consumer"
            } else {
                "audit"
            },
            decision,
            findings: kinds,
        });
    }
    for f in effect_findings(log, end, &per_message) {
        if let Some(m) = per_message
            .iter_mut()
            .find(|m| f.message.as_ref() == Some(&m.message))
        {
            m.findings.push(f.kind);
            m.decision = worst(&m.findings).unwrap_or(m.decision);
        }
        findings.push(f);
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
    let unchecked = FindingKind::ALL
        .into_iter()
        .filter(|k| !ledger && k.needs_ledger())
        .collect();
    Audit {
        messages: end.sent.len() as u32,
        clean: findings.is_empty() && ledger,
        ledger,
        unchecked,
        counts,
        findings,
        per_message,
        acknowledgements,
        foreign_queues: log.queues.foreign(&end.queues),
    }
}

/// What the channels hold that the messages cannot account for: a forward whose key cannot be
/// read, and each distinct line (or forwarded key) that is no message's business key — named,
/// and said to be a MessageId when it is one (a ledger of MessageIds instead of keys).
fn effect_findings(log: &Log, end: &End, messages: &[MessageJudgement]) -> Vec<Finding> {
    let mut out = Vec::new();
    for c in &log.commits {
        if c.channel == Channel::Forward && c.key.is_none() {
            out.push(Finding {
                kind: FindingKind::UnreadableKey,
                decision: FindingKind::UnreadableKey.decision(),
                business_key: None,
                message: c.message_id.clone(),
                attempt: None,
                detail: format!(
                    "a forward to `{}` whose business key cannot be read at `{}`: the audit \
                     cannot tell whose work it commits",
                    c.queue.as_deref().unwrap_or("?"),
                    c.key_at.as_deref().unwrap_or("business_key")
                ),
            });
        }
    }
    let known: std::collections::BTreeSet<&str> = messages
        .iter()
        .filter_map(|m| m.business_key.as_deref())
        .chain(log.keys.values().map(String::as_str))
        .collect();
    let mut said = std::collections::BTreeSet::new();
    for (channel, line) in log.effects.lines(end.ledger.as_ref()) {
        if known.contains(line) || !said.insert((channel, line)) {
            continue;
        }
        let shown: String = line.chars().take(80).collect();
        let shown = if shown.len() < line.len() {
            format!("{shown}…")
        } else {
            shown
        };
        let whose = messages.iter().find(|m| m.message == line);
        let what = match channel {
            Channel::File => format!("the ledger (SQSPROBE_LEDGER) holds `{shown}`"),
            Channel::Http => format!("the HTTP ledger (SQSPROBE_LEDGER_URL) was sent `{shown}`"),
            Channel::Forward => format!("a forward carries the key `{shown}`"),
        };
        let detail = match whose {
            Some(m) => format!(
                "{what}, the MessageId of the message with business key `{}`: a ledger holds \
                 business keys, not MessageIds (each delivery of a message may be another \
                 attempt; the key is what stays the same)",
                m.business_key.as_deref().unwrap_or("?")
            ),
            None => format!("{what}, which is no message's business key"),
        };
        out.push(Finding {
            kind: FindingKind::UnmatchedCommit,
            decision: FindingKind::UnmatchedCommit.decision(),
            business_key: None,
            message: whose.map(|m| m.message.clone()),
            attempt: None,
            detail,
        });
    }
    out
}

/// The most urgent decision among a message's findings: REPAIR, then HOLD, then RECONCILE.
pub(crate) fn worst(kinds: &[FindingKind]) -> Option<Decision> {
    let rank = |d: Decision| match d {
        Decision::Repair => 0,
        Decision::Hold => 1,
        Decision::Reconcile => 2,
        Decision::Accept => 3,
    };
    kinds.iter().map(|k| k.decision()).min_by_key(|d| rank(*d))
}

/// The nemesis's kill at a delete of `message`, when one struck there.
fn killed_at_delete<'a>(log: &'a Log, message: &str) -> Option<&'a Act> {
    log.nemesis.iter().find(|a| {
        a.act == ActKind::Kill
            && a.on == Some(On::Delete)
            && a.message_id.as_deref() == Some(message)
    })
}

/// Words for a nemesis pause between `from` and `to` (an attempt's delivery and its late
/// acknowledgement): the lease lapsed while the consumer was stopped. Empty without one.
fn paused_while(log: &Log, from: u64, to: u64) -> String {
    let acts = &log.nemesis;
    acts.iter()
        .enumerate()
        .filter(|(_, a)| a.act == ActKind::Pause && a.at_ms <= to)
        .find_map(|(i, pause)| {
            let resumed = acts[i + 1..]
                .iter()
                .find(|a| matches!(a.act, ActKind::Resume | ActKind::Kill))
                .map_or(u64::MAX, |a| a.at_ms);
            (resumed >= from).then(|| {
                format!(
                    "; the nemesis had paused the consumer (SIGSTOP) for {} ms meanwhile, past the \
                     lease: no heartbeat runs in a pause, so what counts is that the work was done \
                     once",
                    resumed.min(to).saturating_sub(pause.at_ms)
                )
            })
        })
        .unwrap_or_default()
}

/// The name a handle goes by in the lease vocabulary: the attempt the emulator knows it names.
fn handle_name(seq: u64, nonce: u64) -> String {
    format!("{seq}:{nonce}")
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
    use crate::audit::effects::{Channel, Commit, Handoff};
    use crate::audit::log::AckFact;
    use sqsprobe_core::evidence::business_key;
    use sqsprobe_emulator::audit::Ack;

    fn delivery(seq: u64, nonce: u64, at: u64, lease: u64) -> Delivery {
        Delivery {
            queue: "q".into(),
            message_id: format!("m{seq}"),
            seq,
            nonce,
            body: format!(r#"{{"business_key": "b-{seq}", "seq": {seq}}}"#),
            attributes: Default::default(),
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
            handed_off: false,
        }
    }

    fn end(sent: &[u64], remaining: &[u64], ledger: Option<&[(&str, u32)]>) -> End {
        End {
            sent: sent.iter().map(|s| format!("m{s}")).collect(),
            remaining: remaining.iter().map(|s| format!("m{s}")).collect(),
            ledger: ledger.map(|l| l.iter().map(|(k, n)| (k.to_string(), *n)).collect()),
            dead_lettered: Vec::new(),
            queues: vec!["orders".into()],
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
        assert_eq!(a.counts.len(), FindingKind::ALL.len());
    }

    /// Each worker deletes with its own delivery's handle; the first worker's lease lapsed
    /// under a long handler and a second worker took the message: the lease's finding (HOLD),
    /// never the handle cache's REPAIR.
    #[test]
    fn an_own_handle_after_a_lapse_and_a_second_worker_is_a_lease_finding() {
        let log = keyed(Log {
            deliveries: vec![delivery(1, 1, 0, 1_000), delivery(1, 2, 1_500, 10_000)],
            acks: vec![
                ack(AckOp::Delete, Some((1, 1)), 2_000, Some(1)),
                ack(AckOp::Delete, Some((1, 2)), 2_100, Some(1)),
            ],
            ..Log::default()
        });
        let a = judge(&log, &end(&[1], &[], Some(&[("b-1", 1)])));
        assert_eq!(kinds(&a), [FindingKind::LeaseExpiredMidHandler]);
        assert_eq!(a.acknowledgements[0].class, AckClass::Superseded);
        assert_eq!(a.per_message[0].decision, Decision::Hold);
    }

    /// The playbook's adapter after a delete and a redelivery: the copy's delete goes out with
    /// the first attempt's cached handle.
    #[test]
    fn a_cached_handle_after_a_delete_and_a_redelivery_is_a_stale_handle_ack() {
        let log = keyed(Log {
            deliveries: vec![delivery(1, 1, 0, 10_000), delivery(1, 2, 1_000, 10_000)],
            acks: vec![
                ack(AckOp::Delete, Some((1, 1)), 500, Some(1)),
                ack(AckOp::Delete, Some((1, 1)), 1_500, Some(1)),
            ],
            ..Log::default()
        });
        let a = judge(&log, &end(&[1], &[1], Some(&[("b-1", 1)])));
        assert!(
            kinds(&a).contains(&FindingKind::StaleHandleAck),
            "{:?}",
            a.findings
        );
        assert_eq!(a.acknowledgements[1].class, AckClass::OtherAttempt);
        assert_eq!(a.per_message[0].decision, Decision::Repair);
    }

    #[test]
    fn a_handle_cached_by_message_id_is_a_stale_handle_ack() {
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
                FindingKind::LostWork,
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
        // No finding, and yet not clean: nothing shows the work was done.
        assert!(a.findings.is_empty() && !a.clean && !a.ledger);
        assert_eq!(
            a.unchecked,
            [
                FindingKind::AckBeforeCommit,
                FindingKind::DuplicateCommit,
                FindingKind::LostWork,
                FindingKind::UnmatchedCommit
            ]
        );
        assert!(!a.counts.contains_key("ack_before_commit"));
        assert_eq!(a.per_message[0].commits, None);
        assert_eq!(a.per_message[0].decision, Decision::Hold);
    }

    /// A purge, the queue's deletion or retention ending empties the queue; none of them is
    /// a delete, and the message is not ACCEPT.
    #[test]
    fn a_message_gone_without_a_delete_is_not_accepted() {
        let log = keyed(Log {
            deliveries: vec![delivery(1, 1, 0, 10_000)],
            ..Log::default()
        });
        let a = judge(&log, &end(&[1, 2], &[], Some(&[("b-1", 1)])));
        assert_eq!(
            kinds(&a),
            [
                FindingKind::GoneWithoutDelete,
                FindingKind::GoneWithoutDelete
            ]
        );
        assert!(a.per_message.iter().all(|m| !m.deleted));
        assert!(a.per_message.iter().all(|m| m.decision == Decision::Hold));
        assert!(!a.clean);
    }

    fn act(act: ActKind, at_ms: u64, on: Option<On>, message: Option<&str>) -> Act {
        Act {
            act,
            at_ms,
            on,
            count: on.map(|_| 1),
            message_id: message.map(str::to_string),
            business_key: None,
            start: None,
        }
    }

    /// An acknowledge-first consumer killed at its delete: the delete took, the commit never
    /// came; the finding says the nemesis struck there.
    #[test]
    fn a_kill_between_the_delete_and_the_commit_is_lost_work() {
        let log = keyed(Log {
            deliveries: vec![delivery(1, 1, 0, 10_000), delivery(2, 2, 0, 10_000)],
            acks: vec![
                ack(AckOp::Delete, Some((1, 1)), 100, Some(0)),
                ack(AckOp::Delete, Some((2, 2)), 900, Some(0)),
            ],
            nemesis: vec![
                act(ActKind::Kill, 100, Some(On::Delete), Some("m1")),
                act(ActKind::Restart, 200, None, None),
            ],
            ..Log::default()
        });
        let a = judge(&log, &end(&[1, 2], &[], Some(&[("b-2", 1)])));
        let mut got = kinds(&a);
        got.sort();
        assert_eq!(
            got,
            [
                FindingKind::AckBeforeCommit,
                FindingKind::AckBeforeCommit,
                FindingKind::LostWork
            ]
        );
        let lost = a
            .findings
            .iter()
            .find(|f| f.kind == FindingKind::LostWork)
            .unwrap();
        assert_eq!(lost.message.as_deref(), Some("m1"));
        assert_eq!(lost.decision, Decision::Repair);
        assert!(
            lost.detail.contains("the nemesis killed"),
            "{}",
            lost.detail
        );
        // Without a kill there, the same loss is said without the nemesis.
        let plain = judge(
            &Log {
                nemesis: Vec::new(),
                ..log
            },
            &end(&[1, 2], &[], Some(&[("b-2", 1)])),
        );
        let lost = plain
            .findings
            .iter()
            .find(|f| f.kind == FindingKind::LostWork)
            .unwrap();
        assert!(!lost.detail.contains("nemesis"), "{}", lost.detail);
    }

    /// A pause across the lease's end: the late delete is the lease's finding, and says the
    /// consumer was stopped meanwhile.
    #[test]
    fn a_late_delete_after_a_pause_says_the_nemesis_paused() {
        let log = keyed(Log {
            deliveries: vec![delivery(1, 1, 0, 1_000)],
            acks: vec![ack(AckOp::Delete, Some((1, 1)), 1_600, Some(1))],
            nemesis: vec![
                act(ActKind::Pause, 0, Some(On::Delivery), Some("m1")),
                act(ActKind::Resume, 1_500, None, None),
            ],
            ..Log::default()
        });
        let a = judge(&log, &end(&[1], &[], Some(&[("b-1", 1)])));
        assert_eq!(kinds(&a), [FindingKind::LeaseExpiredMidHandler]);
        assert!(
            a.findings[0]
                .detail
                .contains("paused the consumer (SIGSTOP) for 1500 ms"),
            "{}",
            a.findings[0].detail
        );
    }

    /// One history, both commands: the same attempt and acknowledgement, as a suite's call
    /// rows read by `run` (through `classify::ack_history`) and as the emulator's log read by
    /// `audit`, get the same class and the same decision.
    #[test]
    fn run_and_audit_decide_the_same_acknowledgement_alike() {
        use sqsprobe_core::classify::{ack_history, decide};
        use sqsprobe_core::evidence::fixtures::{call, received};
        use sqsprobe_core::evidence::format::Phase;
        use sqsprobe_core::suite::model::OutcomeClass;
        // (lease, delete at, a newer attempt at, whether it deletes with its own handle).
        for (lease, delete_at, newer_at, newer_acks, class) in [
            (1_000, 1_500, None, false, AckClass::Late),
            (10_000, 1_500, None, false, AckClass::InLease),
            (1_000, 2_000, Some(1_500), true, AckClass::Superseded),
            (1_000, 2_000, Some(1_500), false, AckClass::OtherAttempt),
        ] {
            let mut receive = call("c", Phase::Step, "ReceiveMessage", 100, 100);
            receive.lease_ms = Some(lease);
            receive.messages = vec![received("m1", "h1", 1)];
            let mut rows = vec![receive];
            if let Some(at) = newer_at {
                let mut again = call("c", Phase::Step, "ReceiveMessage", 100 + at, 100 + at);
                again.lease_ms = Some(30_000);
                again.messages = vec![received("m1", "h2", 2)];
                rows.push(again);
            }
            let mut delete = call(
                "c",
                Phase::Step,
                "DeleteMessage",
                100 + delete_at,
                100 + delete_at,
            );
            delete.handle_digest = Some("h1".into());
            rows.push(delete);
            if newer_acks {
                let at = 100 + delete_at + 100;
                let mut own = call("c", Phase::Step, "DeleteMessage", at, at);
                own.handle_digest = Some("h2".into());
                rows.push(own);
            }
            let refs: Vec<_> = rows.iter().collect();
            let run = decide(
                Some(OutcomeClass::NoRedeliveryWithinWindow),
                ack_history::ack_facts(&refs),
            );

            let mut deliveries = vec![delivery(1, 1, 0, lease)];
            if let Some(at) = newer_at {
                deliveries.push(delivery(1, 2, at, 30_000));
            }
            let mut acks = vec![ack(AckOp::Delete, Some((1, 1)), delete_at, Some(1))];
            if newer_acks {
                acks.push(ack(AckOp::Delete, Some((1, 2)), delete_at + 100, Some(1)));
            }
            let log = keyed(Log {
                deliveries,
                acks,
                ..Log::default()
            });
            let audit = judge(&log, &end(&[1], &[], Some(&[("b-1", 1)])));
            assert_eq!(audit.acknowledgements[0].class, class);
            let audited = match audit.per_message[0].findings.as_slice() {
                [] => Decision::Accept,
                _ => audit.per_message[0].decision,
            };
            assert_eq!(run, Some(audited), "{class:?}");
            assert_eq!(
                run,
                class.decision().or(Some(Decision::Accept)),
                "{class:?}"
            );
        }
    }
    fn forward(key: Option<&str>, id: &str) -> Commit {
        Commit {
            channel: Channel::Forward,
            key: key.map(str::to_string),
            message_id: Some(id.into()),
            queue: Some("out".into()),
            key_at: Some("order.id".into()),
            at_ms: 0,
        }
    }

    /// A consume-and-forward pipeline writes no ledger file: each forward to the output queue
    /// is its commit, so the audit checks the work (clean) and a delete before the forward is
    /// still `ack_before_commit`.
    #[test]
    fn forwards_to_an_output_queue_are_the_commits() {
        let mut log = keyed(Log {
            deliveries: vec![delivery(1, 1, 0, 10_000), delivery(2, 2, 0, 10_000)],
            acks: vec![
                ack(AckOp::Delete, Some((1, 1)), 500, Some(1)),
                ack(AckOp::Delete, Some((2, 2)), 600, Some(0)),
            ],
            commits: vec![forward(Some("b-1"), "f-1"), forward(Some("b-2"), "f-2")],
            ..Log::default()
        });
        log.effects.outputs = true;
        log.effects.commit(Channel::Forward, "b-1");
        log.effects.commit(Channel::Forward, "b-2");
        let a = judge(&log, &end(&[1, 2], &[], None));
        assert!(a.ledger, "an output queue shows the work");
        assert_eq!(kinds(&a), [FindingKind::AckBeforeCommit]);
        assert_eq!(a.findings[0].business_key.as_deref(), Some("b-2"));
        // A forward sent twice is a duplicate commit, said once for its key.
        log.effects.commit(Channel::Forward, "b-1");
        log.acks[1].commits_at_ack = Some(1);
        let a = judge(&log, &end(&[1, 2], &[], None));
        assert_eq!(kinds(&a), [FindingKind::DuplicateCommit]);
    }

    /// A retry that publishes the work again as a new message to the same queue, then deletes
    /// the original: a hand-off, not `ack_before_commit`; the new message is judged in its
    /// place, and its own delete before a commit is.
    #[test]
    fn a_hand_off_before_the_delete_is_not_an_ack_before_commit() {
        let mut original = ack(AckOp::Delete, Some((1, 1)), 500, Some(0));
        original.handed_off = true;
        let log = keyed(Log {
            deliveries: vec![delivery(1, 1, 0, 10_000), {
                let mut d = delivery(2, 2, 600, 10_000);
                d.message_id = "h-1".into();
                d.body = r#"{"business_key": "b-1", "retry": 1}"#.into();
                d
            }],
            acks: vec![original, {
                let mut a = ack(AckOp::Delete, Some((2, 2)), 700, Some(1));
                a.business_key = Some("b-1".into());
                a
            }],
            handoffs: vec![Handoff {
                message_id: "h-1".into(),
                key: Some("b-1".into()),
                queue: "q".into(),
                key_at: "business_key".into(),
                at_ms: 450,
                after_deliveries: 1,
            }],
            ..Log::default()
        });
        let a = judge(&log, &end(&[1], &[], Some(&[("b-1", 1)])));
        assert!(a.clean, "{:?}", a.findings);
        assert_eq!(a.per_message.len(), 2);
        assert_eq!(a.per_message[1].sent_by, "consumer");
        assert_eq!(a.per_message[1].business_key.as_deref(), Some("b-1"));
        assert_eq!(a.messages, 1, "the plan's messages");
        // The same delete without the hand-off: at-most-once.
        let mut bare = log.clone();
        bare.acks[0].handed_off = false;
        let a = judge(&bare, &end(&[1], &[], Some(&[("b-1", 1)])));
        assert_eq!(kinds(&a), [FindingKind::AckBeforeCommit]);
    }

    /// A message whose key cannot be read is its own finding naming its MessageId, never
    /// counted as deleted without its work (nor a forward whose key cannot be read).
    #[test]
    fn a_message_whose_key_cannot_be_read_is_named() {
        let mut unreadable = delivery(2, 2, 0, 10_000);
        unreadable.body = "no key here".into();
        let mut log = keyed(Log {
            deliveries: vec![delivery(1, 1, 0, 10_000), unreadable],
            acks: vec![
                ack(AckOp::Delete, Some((1, 1)), 500, Some(1)),
                AckFact {
                    business_key: None,
                    commits_at_ack: None,
                    ..ack(AckOp::Delete, Some((2, 2)), 600, None)
                },
            ],
            ..Log::default()
        });
        let a = judge(&log, &end(&[1, 2], &[], Some(&[("b-1", 1)])));
        assert_eq!(kinds(&a), [FindingKind::UnreadableKey]);
        assert_eq!(a.findings[0].message.as_deref(), Some("m2"));
        assert_eq!(a.per_message[1].commits, None);
        assert_eq!(a.per_message[1].decision, Decision::Hold);
        log.commits.push(forward(None, "f-9"));
        let a = judge(&log, &end(&[1, 2], &[], Some(&[("b-1", 1)])));
        let last = a.findings.last().unwrap();
        assert_eq!(
            (last.kind, last.message.as_deref()),
            (FindingKind::UnreadableKey, Some("f-9"))
        );
        assert!(last.detail.contains("`out`"), "{}", last.detail);
    }

    /// A ledger of MessageIds: every line matches no key, each is named, and one that is a
    /// MessageId says so on its message.
    #[test]
    fn a_ledger_line_that_matches_no_key_is_pointed_out() {
        let log = keyed(Log {
            deliveries: vec![delivery(1, 1, 0, 10_000), delivery(2, 2, 0, 10_000)],
            acks: vec![
                ack(AckOp::Delete, Some((1, 1)), 500, Some(0)),
                ack(AckOp::Delete, Some((2, 2)), 600, Some(1)),
            ],
            ..Log::default()
        });
        let a = judge(
            &log,
            &end(&[1, 2], &[], Some(&[("m1", 1), ("b-2", 1), ("stray", 1)])),
        );
        let unmatched: Vec<&Finding> = a
            .findings
            .iter()
            .filter(|f| f.kind == FindingKind::UnmatchedCommit)
            .collect();
        assert_eq!(unmatched.len(), 2, "{:?}", a.findings);
        assert_eq!(unmatched[0].message.as_deref(), Some("m1"));
        assert!(
            unmatched[0]
                .detail
                .contains("the MessageId of the message with business key `b-1`"),
            "{}",
            unmatched[0].detail
        );
        assert!(
            unmatched[1]
                .detail
                .contains("`stray`, which is no message's business key")
        );
        let m1 = &a.per_message[0];
        assert!(m1.findings.contains(&FindingKind::UnmatchedCommit));
        assert_eq!(m1.decision, Decision::Repair);
    }

    /// Every finding is a row of docs/audit.md's tables, with the decision the judge gives it:
    /// a new finding is not done until a reader can look it up.
    #[test]
    fn every_finding_is_documented_with_its_decision() {
        let doc = include_str!("../../docs/audit.md");
        for kind in FindingKind::ALL.into_iter().chain(FindingKind::LAMBDA) {
            let head = format!("| `{}` |", kind.as_str());
            let row = doc
                .lines()
                .find(|l| l.starts_with(&head))
                .unwrap_or_else(|| panic!("docs/audit.md has no row for `{}`", kind.as_str()));
            let decision = kind.decision().as_str();
            assert!(
                row.split('|').nth(2).is_some_and(|c| c.contains(decision))
                    || row.split('|').nth(3).is_some_and(|c| c.contains(decision)),
                "docs/audit.md gives `{}` another decision than {decision}",
                kind.as_str()
            );
        }
    }
}
