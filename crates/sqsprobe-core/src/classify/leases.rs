//! The one vocabulary of attempts and leases (pure), read by every judge and every report.
//!
//! An **attempt** is one delivery of one message: a receive returned it with a receipt
//! handle, and the queue leased it for the visibility timeout the receive asked for. The
//! **lease** starts when the queue handed the message out and ends one of four ways: the
//! attempt's own delete took (`deleted`), a visibility change to 0 with its handle took
//! (`released`), a newer attempt received the message after this lease was over
//! (`superseded`), or it ran out (`lapsed`); otherwise it is still `held` where the history
//! ends. A visibility change with the attempt's handle moves the lease's end (`extended`).
//!
//! Every use of a handle (a delete, a visibility change, a batch entry of either) is put in
//! exactly one [`AckClass`]:
//! - `in_lease`: sent and answered while the attempt's lease surely held;
//! - `late`: sent after the lease surely lapsed, no newer attempt before it: the
//!   acknowledgement raced the queue, and took only because nobody received the message in
//!   the gap (the queue had made it visible again: the Developer Guide's visibility timeout
//!   page);
//! - `superseded`: a newer attempt had received the message (after this lease was over)
//!   before the use was sent, and that attempt used its own handle too: the handle is no
//!   longer the most recent one ("If you use an old ReceiptHandle, the request will succeed,
//!   but the message might not be deleted": API_DeleteMessage), and it was this attempt's own,
//!   used late: the lease's story, as `late` is;
//! - `other_attempt`: as `superseded` or `after_end`, but a newer attempt that had received the
//!   message before the use never used its own handle anywhere in the history: the use stands
//!   in for that attempt's acknowledgement with another attempt's handle (the adapter that
//!   caches handles by MessageId), whatever ended the older lease (a lapse, a delete and a
//!   copy coming back, a duplicate copy);
//! - `after_end`: the lease had already ended by this handle's own delete or release, and no
//!   newer attempt exists: a repeat, harmless;
//! - `unknown_handle`: no attempt in the history issued the handle (a MessageId, a made-up
//!   string, a handle the suite wrote);
//! - `unsure`: the recorded times cannot place the use on either side of the lease's end or
//!   of the newer attempt: unknown, never counted as in the lease.
//!
//! A newer attempt that came while this lease surely still held is another copy of the
//! message (SQS's at-least-once duplicates): the queue cannot hand out a leased copy again,
//! so the older handle still names its own copy and is not superseded by it.
//!
//! Times are milliseconds on one clock, as [`Span`]s: the earliest and latest moment the
//! thing can have happened (a client sees a receive between its request and its answer; the
//! emulator's audit sees the instant). Nothing here reads a clock.

use serde::{Deserialize, Serialize};

use sqsprobe_facts::decision::Decision;

/// When something happened: no earlier than `from`, no later than `to` (milliseconds).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Span {
    pub from: f64,
    pub to: f64,
}

impl Span {
    /// An instant known exactly.
    pub fn at(ms: f64) -> Span {
        Span { from: ms, to: ms }
    }
}

/// One attempt: a delivery of `message` with `handle`, leased for `lease_ms`.
#[derive(Debug, Clone, PartialEq)]
pub struct Delivery<'a> {
    /// The MessageId.
    pub message: &'a str,
    /// The handle's identity (its digest, or the emulator's own name for it).
    pub handle: &'a str,
    /// When the queue handed it out.
    pub at: Span,
    /// The visibility timeout it was leased for; `None` when the history does not say
    /// (every use of its handle is then `unsure`, save a repeat or a supersession).
    pub lease_ms: Option<u64>,
}

/// What a use of a handle asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HandleOp {
    Delete,
    /// A visibility change to `timeout_ms` from the moment the queue took it (0 releases).
    ChangeVisibility {
        timeout_ms: u64,
    },
}

/// What the queue said to a use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UseAnswer {
    /// Took effect (or the queue says so).
    Took,
    /// A definite refusal.
    Refused,
    /// No definite answer: it may have taken effect.
    Unknown,
}

/// One use of a handle.
#[derive(Debug, Clone, PartialEq)]
pub struct HandleUse<'a> {
    /// The handle's identity; `None` when the call carried none the history can name.
    pub handle: Option<&'a str>,
    pub op: HandleOp,
    /// From when it was sent to when it was answered.
    pub at: Span,
    pub answer: UseAnswer,
}

/// The class of one use of a handle (see the module doc).
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Serialize,
    Deserialize,
    schemars::JsonSchema,
    strum::IntoStaticStr,
    strum::VariantArray,
)]
#[serde(rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
pub enum AckClass {
    InLease,
    Late,
    Superseded,
    OtherAttempt,
    AfterEnd,
    UnknownHandle,
    Unsure,
}

impl AckClass {
    /// The snake_case name evidence and reports use.
    pub fn as_str(self) -> &'static str {
        self.into()
    }

    /// What the playbook makes of an acknowledgement of this class, in `run` and in `audit`
    /// alike; `None` when the class itself asks for nothing (the answer and the queue's
    /// outcome still decide).
    ///
    /// - `other_attempt` → REPAIR: the acknowledgement is not bound to the attempt that holds
    ///   the message; the adapter must bind each delete to its own attempt's handle.
    /// - `late`, `superseded`, `unsure` → HOLD: the attempt's own handle, used once its lease
    ///   was over (or maybe over): whether the delete took is the queue's race, not the
    ///   consumer's claim to make; extend the lease while the handler runs.
    /// - `unknown_handle` → REPAIR: a handle no receive issued deletes nothing.
    pub fn decision(self) -> Option<Decision> {
        match self {
            AckClass::InLease | AckClass::AfterEnd => None,
            AckClass::Late | AckClass::Superseded | AckClass::Unsure => Some(Decision::Hold),
            AckClass::OtherAttempt | AckClass::UnknownHandle => Some(Decision::Repair),
        }
    }
}

/// How a lease ended (milliseconds: the latest moment it can have ended).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum LeaseEnd {
    Deleted(f64),
    Released(f64),
    Superseded(f64),
    Lapsed(f64),
    /// Still held where the history ends.
    Held,
}

impl LeaseEnd {
    /// `deleted`, `released`, `superseded`, `lapsed` or `held`.
    pub fn as_str(self) -> &'static str {
        match self {
            LeaseEnd::Deleted(_) => "deleted",
            LeaseEnd::Released(_) => "released",
            LeaseEnd::Superseded(_) => "superseded",
            LeaseEnd::Lapsed(_) => "lapsed",
            LeaseEnd::Held => "held",
        }
    }
}

/// A visibility change that took, moving the lease's end.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Extension {
    /// Index of the use in the uses given to [`read`].
    pub by: usize,
    /// When it took (latest).
    pub at: f64,
    /// The lease's end before it, and after it (latest).
    pub from: f64,
    pub to: f64,
}

/// One attempt's lease, as the history shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct Lease {
    /// Index of the delivery in the deliveries given to [`read`].
    pub delivery: usize,
    /// When it started (latest: the receive's answer).
    pub start: f64,
    /// Its end as last set, were it to run out (latest); `None` when the lease is unknown.
    pub expiry: Option<f64>,
    pub extensions: Vec<Extension>,
    pub end: LeaseEnd,
}

/// One use of a handle, judged.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct JudgedUse {
    /// The delivery whose handle it used, if any issued it.
    pub delivery: Option<usize>,
    pub class: AckClass,
    /// For `late`, `superseded` and `after_end`: when the lease had ended (latest).
    pub since: Option<f64>,
}

/// Every lease and every use of a handle, judged (one entry per delivery and per use, in the
/// order given).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Reading {
    pub leases: Vec<Lease>,
    pub uses: Vec<JudgedUse>,
}

/// Reads the history: each delivery's lease and each use's class. `horizon` is where the
/// history ends (a lease that outlives it is `held`).
pub fn read(deliveries: &[Delivery<'_>], uses: &[HandleUse<'_>], horizon: f64) -> Reading {
    let mut judged: Vec<JudgedUse> = uses
        .iter()
        .map(|_| JudgedUse {
            delivery: None,
            class: AckClass::UnknownHandle,
            since: None,
        })
        .collect();
    let mut leases = Vec::with_capacity(deliveries.len());
    for (i, d) in deliveries.iter().enumerate() {
        // The uses of this attempt's handle, in the order they were sent.
        let mut mine: Vec<usize> = (0..uses.len())
            .filter(|&u| uses[u].handle == Some(d.handle))
            .collect();
        mine.sort_by(|&a, &b| uses[a].at.from.total_cmp(&uses[b].at.from));
        // Newer attempts of the same message, in the order they came.
        let mut newer: Vec<&Delivery<'_>> = deliveries
            .iter()
            .enumerate()
            .filter(|&(j, n)| {
                j != i && n.message == d.message && n.handle != d.handle && n.at.from >= d.at.from
            })
            .filter(|&(j, n)| n.at.from > d.at.from || j > i)
            .map(|(_, n)| n)
            .collect();
        newer.sort_by(|a, b| a.at.from.total_cmp(&b.at.from));

        // The lease's end as [earliest, latest], when known.
        let mut end = d.lease_ms.map(|l| Span {
            from: d.at.from + l as f64,
            to: d.at.to + l as f64,
        });
        let mut extensions = Vec::new();
        let mut ended: Option<LeaseEnd> = None;
        // A newer attempt supersedes this one's handle unless it surely came while this lease
        // held (another copy: the queue cannot hand out a leased copy again); one that came
        // after the lease ended by a delete supersedes it too (a copy delivered after the
        // delete: the old handle is no longer the newest).
        let copy = |n: &Delivery<'_>, end: Option<Span>, ended: Option<LeaseEnd>| {
            ended.is_none() && end.is_some_and(|l| n.at.to < l.from)
        };
        for &u in &mine {
            let use_ = &uses[u];
            let mut verdict = JudgedUse {
                delivery: Some(i),
                class: AckClass::Unsure,
                since: None,
            };
            let before = newer
                .iter()
                .find(|n| !copy(n, end, ended) && n.at.to <= use_.at.from);
            if let Some(n) = before {
                verdict.class = AckClass::Superseded;
                verdict.since = Some(n.at.to);
                judged[u] = verdict;
                continue;
            }
            // A newer attempt that may have come before this use cannot be placed.
            let maybe_superseded = newer
                .iter()
                .any(|n| !copy(n, end, ended) && n.at.from < use_.at.to);
            if let Some(e) = ended {
                verdict.class = if maybe_superseded {
                    AckClass::Unsure
                } else {
                    AckClass::AfterEnd
                };
                verdict.since = end_time(e);
                judged[u] = verdict;
                continue;
            }
            let Some(lease) = end else {
                judged[u] = verdict;
                continue;
            };
            verdict.class = if maybe_superseded {
                AckClass::Unsure
            } else if use_.at.from >= lease.to {
                verdict.since = Some(lease.to);
                AckClass::Late
            } else if use_.at.to <= lease.from {
                AckClass::InLease
            } else {
                AckClass::Unsure
            };
            judged[u] = verdict;
            if verdict.class != AckClass::InLease {
                continue;
            }
            match (use_.op, use_.answer) {
                (HandleOp::Delete, UseAnswer::Took) => {
                    ended = Some(LeaseEnd::Deleted(use_.at.to));
                }
                (HandleOp::ChangeVisibility { timeout_ms: 0 }, UseAnswer::Took) => {
                    ended = Some(LeaseEnd::Released(use_.at.to));
                    end = Some(use_.at);
                }
                (HandleOp::ChangeVisibility { timeout_ms }, UseAnswer::Took) => {
                    let t = timeout_ms as f64;
                    extensions.push(Extension {
                        by: u,
                        at: use_.at.to,
                        from: lease.to,
                        to: use_.at.to + t,
                    });
                    end = Some(Span {
                        from: use_.at.from + t,
                        to: use_.at.to + t,
                    });
                }
                // A change whose answer is unknown may or may not have moved the end: the
                // lease ends somewhere between the two.
                (HandleOp::ChangeVisibility { timeout_ms }, UseAnswer::Unknown) => {
                    let t = timeout_ms as f64;
                    end = Some(Span {
                        from: lease.from.min(use_.at.from + t),
                        to: lease.to.max(use_.at.to + t),
                    });
                }
                _ => {}
            }
        }
        let superseded_at = newer.iter().find(|n| !copy(n, end, ended)).map(|n| n.at.to);
        let end_kind = match (ended, end, superseded_at) {
            (Some(e), _, _) => e,
            (None, Some(l), s) if l.to <= horizon && s.is_none_or(|s| l.to <= s) => {
                LeaseEnd::Lapsed(l.to)
            }
            (None, _, Some(s)) => LeaseEnd::Superseded(s),
            _ => LeaseEnd::Held,
        };
        leases.push(Lease {
            delivery: i,
            start: d.at.to,
            expiry: end.map(|l| l.to),
            extensions,
            end: end_kind,
        });
    }
    // A newer attempt whose own handle is never used, delivered before a use of an older
    // handle once that older lease was over: the use stands in for it.
    let used: Vec<bool> = deliveries
        .iter()
        .map(|d| uses.iter().any(|u| u.handle == Some(d.handle)))
        .collect();
    for (u, j) in judged.iter_mut().enumerate() {
        let Some(i) = j.delivery else { continue };
        if !matches!(j.class, AckClass::Superseded | AckClass::AfterEnd) {
            continue;
        }
        let d = &deliveries[i];
        let stands_in = deliveries.iter().enumerate().any(|(k, n)| {
            k != i
                && !used[k]
                && n.message == d.message
                && n.handle != d.handle
                && (n.at.from > d.at.from || k > i)
                && n.at.to <= uses[u].at.from
        });
        if stands_in {
            j.class = AckClass::OtherAttempt;
        }
    }
    Reading {
        leases,
        uses: judged,
    }
}

fn end_time(e: LeaseEnd) -> Option<f64> {
    match e {
        LeaseEnd::Deleted(t)
        | LeaseEnd::Released(t)
        | LeaseEnd::Superseded(t)
        | LeaseEnd::Lapsed(t) => Some(t),
        LeaseEnd::Held => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use strum::VariantArray;

    fn got(
        message: &'static str,
        handle: &'static str,
        at: f64,
        lease_ms: u64,
    ) -> Delivery<'static> {
        Delivery {
            message,
            handle,
            at: Span::at(at),
            lease_ms: Some(lease_ms),
        }
    }

    fn delete(handle: &'static str, at: f64) -> HandleUse<'static> {
        HandleUse {
            handle: Some(handle),
            op: HandleOp::Delete,
            at: Span::at(at),
            answer: UseAnswer::Took,
        }
    }

    fn change(handle: &'static str, at: f64, timeout_ms: u64) -> HandleUse<'static> {
        HandleUse {
            op: HandleOp::ChangeVisibility { timeout_ms },
            ..delete(handle, at)
        }
    }

    fn classes(r: &Reading) -> Vec<AckClass> {
        r.uses.iter().map(|u| u.class).collect()
    }

    #[test]
    fn a_delete_inside_the_lease_ends_it() {
        let r = read(&[got("m", "a", 0.0, 1000)], &[delete("a", 500.0)], 5000.0);
        assert_eq!(classes(&r), [AckClass::InLease]);
        assert_eq!(r.leases[0].end, LeaseEnd::Deleted(500.0));
    }

    /// The stale-handle suite's second case: A's own handle, after its lease lapsed, nobody
    /// received the message again. `late`, and HOLD in `run` and `audit` alike.
    #[test]
    fn a_delete_after_the_lease_lapsed_is_late() {
        let r = read(&[got("m", "a", 0.0, 1000)], &[delete("a", 1500.0)], 5000.0);
        assert_eq!(classes(&r), [AckClass::Late]);
        assert_eq!(r.uses[0].since, Some(1000.0));
        assert_eq!(r.leases[0].end, LeaseEnd::Lapsed(1000.0));
        assert_eq!(AckClass::Late.decision(), Some(Decision::Hold));
    }

    /// A second worker received the message once A's lease lapsed, and each deleted with its
    /// own handle: A's delete is its own, late — the lease's story (HOLD), not a handle cache.
    #[test]
    fn a_newer_attempt_after_the_lapse_supersedes_the_handle() {
        let d = [got("m", "a", 0.0, 1000), got("m", "b", 1500.0, 30_000)];
        let r = read(&d, &[delete("a", 1600.0), delete("b", 1700.0)], 5000.0);
        assert_eq!(classes(&r), [AckClass::Superseded, AckClass::InLease]);
        assert_eq!(r.uses[0].since, Some(1500.0));
        assert_eq!(r.leases[0].end, LeaseEnd::Lapsed(1000.0));
        assert_eq!(r.leases[1].end, LeaseEnd::Deleted(1700.0));
        assert_eq!(AckClass::Superseded.decision(), Some(Decision::Hold));
    }

    /// B never used its own handle: A's handle stood in for B's acknowledgement.
    #[test]
    fn a_handle_used_for_a_newer_attempt_that_never_used_its_own_is_another_attempts() {
        let d = [got("m", "a", 0.0, 1000), got("m", "b", 1500.0, 30_000)];
        let r = read(&d, &[delete("a", 1600.0)], 5000.0);
        assert_eq!(classes(&r), [AckClass::OtherAttempt]);
        assert_eq!(r.leases[1].end, LeaseEnd::Held);
        assert_eq!(AckClass::OtherAttempt.decision(), Some(Decision::Repair));
        // A duplicate copy delivered inside A's lease, acknowledged with A's handle again.
        let d = [got("m", "a", 0.0, 1000), got("m", "b", 300.0, 1000)];
        let r = read(&d, &[delete("a", 500.0), delete("a", 600.0)], 5000.0);
        assert_eq!(classes(&r), [AckClass::InLease, AckClass::OtherAttempt]);
    }

    /// A copy delivered while the lease surely held is SQS's duplicate, not a supersession.
    #[test]
    fn a_copy_delivered_inside_the_lease_supersedes_nothing() {
        let d = [got("m", "a", 0.0, 1000), got("m", "b", 300.0, 1000)];
        let r = read(&d, &[delete("a", 600.0), delete("b", 700.0)], 5000.0);
        assert_eq!(classes(&r), [AckClass::InLease, AckClass::InLease]);
    }

    /// The adapter that caches handles by MessageId: attempt 1 deleted, a copy came back,
    /// and its delete went out with attempt 1's handle.
    #[test]
    fn an_old_handle_used_after_a_delete_and_a_redelivery_is_superseded() {
        let d = [got("m", "a", 0.0, 1000), got("m", "b", 800.0, 1000)];
        let r = read(&d, &[delete("a", 500.0), delete("a", 900.0)], 5000.0);
        assert_eq!(classes(&r), [AckClass::InLease, AckClass::OtherAttempt]);
        assert_eq!(r.leases[0].end, LeaseEnd::Deleted(500.0));
    }

    #[test]
    fn a_repeat_after_the_own_delete_is_after_end() {
        let r = read(
            &[got("m", "a", 0.0, 1000)],
            &[delete("a", 500.0), delete("a", 2000.0)],
            5000.0,
        );
        assert_eq!(classes(&r), [AckClass::InLease, AckClass::AfterEnd]);
        assert_eq!(r.uses[1].since, Some(500.0));
    }

    #[test]
    fn a_handle_nobody_issued_is_unknown() {
        let r = read(&[got("m", "a", 0.0, 1000)], &[delete("zz", 10.0)], 5000.0);
        assert_eq!(classes(&r), [AckClass::UnknownHandle]);
        assert_eq!(r.uses[0].delivery, None);
        assert_eq!(AckClass::UnknownHandle.decision(), Some(Decision::Repair));
    }

    /// Times that straddle the lease's end prove nothing either way.
    #[test]
    fn a_use_the_times_cannot_place_is_unsure() {
        let d = [Delivery {
            at: Span {
                from: 0.0,
                to: 400.0,
            },
            ..got("m", "a", 0.0, 1000)
        }];
        let u = [HandleUse {
            at: Span {
                from: 1100.0,
                to: 1200.0,
            },
            ..delete("a", 0.0)
        }];
        let r = read(&d, &u, 5000.0);
        assert_eq!(classes(&r), [AckClass::Unsure]);
        assert_eq!(AckClass::Unsure.decision(), Some(Decision::Hold));
        // Without a recorded lease, nothing can be placed.
        let d = [Delivery {
            lease_ms: None,
            ..got("m", "a", 0.0, 1000)
        }];
        let r = read(&d, &[delete("a", 10.0)], 5000.0);
        assert_eq!(classes(&r), [AckClass::Unsure]);
    }

    #[test]
    fn a_visibility_change_extends_the_lease() {
        let u = [change("a", 800.0, 2000), delete("a", 2500.0)];
        let r = read(&[got("m", "a", 0.0, 1000)], &u, 5000.0);
        assert_eq!(classes(&r), [AckClass::InLease, AckClass::InLease]);
        let lease = &r.leases[0];
        assert_eq!(lease.extensions.len(), 1);
        assert_eq!(
            (lease.extensions[0].from, lease.extensions[0].to),
            (1000.0, 2800.0)
        );
        assert_eq!(lease.end, LeaseEnd::Deleted(2500.0));
    }

    #[test]
    fn a_refused_change_moves_nothing_and_an_unknown_one_leaves_the_end_in_doubt() {
        let refused = HandleUse {
            answer: UseAnswer::Refused,
            ..change("a", 800.0, 2000)
        };
        let r = read(
            &[got("m", "a", 0.0, 1000)],
            &[refused, delete("a", 1500.0)],
            5000.0,
        );
        assert_eq!(classes(&r), [AckClass::InLease, AckClass::Late]);
        let unknown = HandleUse {
            answer: UseAnswer::Unknown,
            ..change("a", 800.0, 2000)
        };
        let r = read(
            &[got("m", "a", 0.0, 1000)],
            &[unknown, delete("a", 1500.0)],
            5000.0,
        );
        assert_eq!(classes(&r), [AckClass::InLease, AckClass::Unsure]);
    }

    #[test]
    fn a_release_then_a_new_attempt_supersedes_the_old_handle() {
        let d = [got("m", "a", 0.0, 30_000), got("m", "b", 600.0, 30_000)];
        let r = read(
            &d,
            &[
                change("a", 500.0, 0),
                delete("a", 700.0),
                delete("b", 800.0),
            ],
            5000.0,
        );
        assert_eq!(
            classes(&r),
            [AckClass::InLease, AckClass::Superseded, AckClass::InLease]
        );
        assert_eq!(r.leases[0].end, LeaseEnd::Released(500.0));
    }

    #[test]
    fn a_lease_outliving_the_history_is_held() {
        let r = read(&[got("m", "a", 0.0, 30_000)], &[], 5000.0);
        assert_eq!(r.leases[0].end, LeaseEnd::Held);
        assert_eq!(r.leases[0].expiry, Some(30_000.0));
    }

    #[test]
    fn every_class_has_its_wire_name() {
        let names: Vec<&str> = AckClass::VARIANTS.iter().map(|c| c.as_str()).collect();
        assert_eq!(
            names,
            [
                "in_lease",
                "late",
                "superseded",
                "other_attempt",
                "after_end",
                "unknown_handle",
                "unsure"
            ]
        );
        for c in AckClass::VARIANTS {
            let json = serde_json::to_string(c).unwrap();
            assert_eq!(json, format!("\"{}\"", c.as_str()));
        }
    }
}
