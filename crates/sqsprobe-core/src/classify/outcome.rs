//! Outcome classes of a bounded observation, per tracked message.
//!
//! The rule is deliberately asymmetric, like Jepsen's checkers: one sighting of a message that
//! was delivered before is proof that it came back, while the absence of sightings is only
//! evidence if the whole window was watched. Anything that leaves a doubt — a receive whose
//! answer never arrived, a window cut short, a message that was never sent — makes the class
//! `inconclusive`, never a pass.
//!
//! A message seen for the first time is not a redelivery: it is `delivered`, a label of its
//! own, so a delay or dead-letter check can expect it without calling it a redelivery.

use crate::evidence::format::WindowEnded;
use crate::suite::model::OutcomeClass;

use super::stop::StopReason;

/// How an observation window ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WindowEnd {
    /// The full window elapsed.
    Completed,
    /// Every tracked message was seen, so the window was cut short on purpose.
    AllSeen,
    /// The window could not be completed.
    Cut(CutReason),
}

/// Why a window could not be completed: something of the window's own, or whatever stopped
/// the case.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CutReason {
    /// A receive got a definite error response the step did not expect (its code).
    ReceiveFailed(String),
    /// The receive budget ran out before the window ended.
    BudgetExhausted { used: u32 },
    /// The case was stopped in the middle of the window (its deadline, the run's stop).
    Stopped(StopReason),
}

impl CutReason {
    /// Its label in evidence (`budget_exhausted`, `deadline`, ...).
    pub fn label(&self) -> WindowEnded {
        match self {
            CutReason::ReceiveFailed(_) => WindowEnded::ReceiveFailed,
            CutReason::BudgetExhausted { .. } => WindowEnded::BudgetExhausted,
            CutReason::Stopped(stop) => stop.label(),
        }
    }

    /// A sentence for humans.
    pub fn describe(&self) -> String {
        match self {
            CutReason::ReceiveFailed(code) => format!("a receive failed ({code})"),
            CutReason::BudgetExhausted { used } => format!(
                "the receive budget ({used} call{}) ran out before the window ended",
                if *used == 1 { "" } else { "s" }
            ),
            CutReason::Stopped(stop) => stop.cut_short().to_string(),
        }
    }
}

impl WindowEnd {
    /// The `ended` field of the evidence window.
    pub fn label(&self) -> WindowEnded {
        match self {
            WindowEnd::Completed => WindowEnded::Completed,
            WindowEnd::AllSeen => WindowEnded::AllSeen,
            WindowEnd::Cut(reason) => reason.label(),
        }
    }
}

/// Whether a tracked message was ever put on the queue, as far as the case knows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SendState {
    /// The target accepted the send and gave a MessageId.
    Sent,
    /// The target refused the send (the error, described): the message is not on the queue.
    Refused(String),
    /// The send got no definite answer (no response, 5xx, throttled): it may or may not be.
    Unknown(String),
    /// No step of the case sent it before the observation.
    NotSent,
}

/// What the case knows about one tracked message when its window closes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TrackedMessage {
    /// The suite's label (`m1`).
    pub label: String,
    pub message_id: Option<String>,
    pub send: SendState,
    /// Deliveries of this message before the window: receive steps and earlier observations,
    /// on any queue of the case (a dead-letter move keeps the MessageId).
    pub deliveries_before: u32,
    /// Times the window's receives returned it.
    pub sightings: u32,
    /// Receives of the case, up to its first sighting (or to the end of the window when it was
    /// never seen), whose outcome is unknown: each could have delivered it unseen.
    pub unknown_receives_before: u32,
    /// An attempt of its send got no definite answer, and a retry then took it: the queue may
    /// hold more copies than the one whose MessageId the case knows.
    pub copies_unknown: bool,
    /// Messages the case received bearing its business key that could be a copy of it or of
    /// another of the case's sends whose answer was lost: nobody can say which was delivered.
    pub ambiguous_copies: u32,
    /// Its send's refusal or missing answer was the case's own doing: a fault it injected into
    /// the send's final attempt, or its `deny`.
    pub send_faulted: bool,
    /// Of `unknown_receives_before`, the receives whose answer a fault of the case took.
    pub faulted_receives_before: u32,
}

/// How well a window was watched: what could have hidden a message from it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Watch {
    /// The window's receive attempts (the ones a successful retry hid included) that got no
    /// definite answer: a delivery may hide in each.
    pub unknown_receives: u32,
    /// The window's short polls (WaitTimeSeconds 0): AWS samples only a subset of its servers
    /// on a short poll, which "might not" return a message that is there.
    pub short_polls: u32,
    /// Messages the window saw that are none of the case's (no MessageId, no business key it
    /// knows): one may be an unknown copy of a tracked message.
    pub untracked_sightings: u32,
    /// Of `unknown_receives`, the ones whose answer a fault of the case took.
    pub faulted_receives: u32,
}

/// Why a message's class is `inconclusive`, and whether the case's own fault made that doubt:
/// an expected `HOLD` is credited only to the fault that produced it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Doubt {
    pub why: String,
    /// The doubt needs nothing but what the case's faults did: a send or receive whose answer
    /// one of them took would leave it on its own.
    pub faulted: bool,
}

/// Classifies one tracked message; the reason is set for `inconclusive`.
///
/// Silence is evidence only when every poll of the window could have seen the message: any
/// receive of the case without a definite answer (the window's, `watch.unknown_receives`, or
/// an earlier one, `unknown_receives_before`) or any short poll of the window makes it
/// inconclusive.
pub fn classify(
    m: &TrackedMessage,
    end: &WindowEnd,
    watch: &Watch,
) -> (OutcomeClass, Option<String>) {
    let (class, doubt) = classify_doubt(m, end, watch);
    (class, doubt.map(|d| d.why))
}

/// [`classify`], with whether the case's own fault made the doubt.
pub fn classify_doubt(
    m: &TrackedMessage,
    end: &WindowEnd,
    watch: &Watch,
) -> (OutcomeClass, Option<Doubt>) {
    let window_unknown_receives = watch.unknown_receives;
    let faulted_receives = m.faulted_receives_before > 0 || watch.faulted_receives > 0;
    let label = &m.label;
    match &m.send {
        SendState::Sent => {}
        SendState::Refused(why) => {
            return doubt(
                m.send_faulted,
                format!(
                    "{label} was never sent (its send was refused: {why}), so silence about it proves nothing"
                ),
            );
        }
        SendState::Unknown(why) => {
            return doubt(
                m.send_faulted,
                format!(
                    "{label}'s send got no definite answer ({why}): it may not be on the queue"
                ),
            );
        }
        SendState::NotSent => {
            return inconclusive(format!("{label} was not sent before the observation"));
        }
    }
    if m.sightings > 0 && (m.deliveries_before > 0 || m.sightings > 1) {
        return (OutcomeClass::ObservedRedelivery, None);
    }
    if m.ambiguous_copies > 0 {
        return inconclusive(format!(
            "{} message{} bearing {label}'s business key {} received that could be a copy of \
             {label} or of another send of the case whose answer was lost: {label} may have been \
             delivered more often than seen",
            m.ambiguous_copies,
            plural(m.ambiguous_copies),
            if m.ambiguous_copies == 1 {
                "was"
            } else {
                "were"
            }
        ));
    }
    if m.sightings > 0 {
        if m.unknown_receives_before > 0 {
            return doubt(
                m.faulted_receives_before > 0,
                format!(
                    "{label} was first seen after {} receive{} whose answer was lost: it may have \
                 been delivered unseen, so this sighting may be a redelivery",
                    m.unknown_receives_before,
                    plural(m.unknown_receives_before)
                ),
            );
        }
        return (OutcomeClass::Delivered, None);
    }
    // Silence: worth something only over a whole window, and only if no receive of the case
    // could have taken the message unseen (a lost answer leases it to nobody) or missed it.
    let unknown = m.unknown_receives_before.max(window_unknown_receives);
    match end {
        WindowEnd::Completed
            if unknown == 0 && m.copies_unknown && watch.untracked_sightings > 0 =>
        {
            inconclusive(format!(
                "an attempt of {label}'s send got no definite answer, so the queue may hold copies \
                 of it under other MessageIds, and the window saw {} message{} it cannot place: \
                 one may be a copy of {label}, so silence proves nothing",
                watch.untracked_sightings,
                plural(watch.untracked_sightings)
            ))
        }
        WindowEnd::Completed if unknown == 0 && watch.short_polls > 0 => inconclusive(format!(
            "{} poll{} of the window {} short poll{} (WaitTimeSeconds 0): a short poll samples \
             a subset of the servers and may return nothing while {label} is there, so silence \
             proves nothing; long-poll the window (`wait: 1s` or more)",
            watch.short_polls,
            plural(watch.short_polls),
            if watch.short_polls == 1 {
                "was a"
            } else {
                "were"
            },
            plural(watch.short_polls)
        )),
        WindowEnd::Completed if unknown == 0 => (OutcomeClass::NoRedeliveryWithinWindow, None),
        WindowEnd::Completed => doubt(
            faulted_receives,
            format!(
                "{unknown} receive{} of the case got no definite answer ({window_unknown_receives} \
                 in the window): one may have leased {label} unseen or missed it, so silence \
                 proves nothing",
                plural(unknown)
            ),
        ),
        // AllSeen with zero sightings cannot happen for this message; treat it as not proven.
        WindowEnd::AllSeen => inconclusive("the window ended before it was watched".to_string()),
        WindowEnd::Cut(reason) => inconclusive(format!(
            "observation window not completed: {}",
            reason.describe()
        )),
    }
}

/// A doubt nothing the case's faults did would make on its own.
fn inconclusive(why: String) -> (OutcomeClass, Option<Doubt>) {
    doubt(false, why)
}

fn doubt(faulted: bool, why: String) -> (OutcomeClass, Option<Doubt>) {
    (OutcomeClass::Inconclusive, Some(Doubt { why, faulted }))
}

fn plural(n: u32) -> &'static str {
    if n == 1 { "" } else { "s" }
}

/// The class of a whole observation: the least certain over its messages —
/// inconclusive, then observed redelivery, then delivered, then no redelivery.
pub fn overall(classes: impl IntoIterator<Item = OutcomeClass>) -> Option<OutcomeClass> {
    classes.into_iter().max_by_key(|c| rank(*c))
}

fn rank(c: OutcomeClass) -> u8 {
    match c {
        OutcomeClass::NoRedeliveryWithinWindow => 0,
        OutcomeClass::Delivered => 1,
        OutcomeClass::ObservedRedelivery => 2,
        OutcomeClass::Inconclusive => 3,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use OutcomeClass::*;

    fn lost(unknown_receives: u32) -> Watch {
        Watch {
            unknown_receives,
            ..Watch::default()
        }
    }

    #[test]
    fn silence_with_unknown_copies_and_an_unplaced_sighting_proves_nothing() {
        let m = TrackedMessage {
            copies_unknown: true,
            ambiguous_copies: 0,
            ..msg(1, 0)
        };
        let seen = Watch {
            untracked_sightings: 1,
            ..Watch::default()
        };
        let (class, reason) = classify(&m, &WindowEnd::Completed, &seen);
        assert_eq!(class, Inconclusive);
        assert!(reason.unwrap().contains("may be a copy of m1"));
        // Nothing unplaced seen: every copy would have been placed, silence holds.
        assert_eq!(
            classify(&m, &WindowEnd::Completed, &lost(0)).0,
            NoRedeliveryWithinWindow
        );
    }

    /// A message bearing its key that could be its copy or another lost send's: whether it
    /// was delivered more often than seen is unknown, unless its own sightings prove it.
    #[test]
    fn an_ambiguous_copy_leaves_a_first_delivery_or_silence_inconclusive() {
        for m in [msg(1, 0), msg(0, 1)] {
            let m = TrackedMessage {
                ambiguous_copies: 1,
                ..m
            };
            let (class, reason) = classify(&m, &WindowEnd::Completed, &lost(0));
            assert_eq!(class, Inconclusive, "{m:?}");
            assert!(reason.unwrap().contains("could be a copy of m1"));
        }
        let twice = TrackedMessage {
            ambiguous_copies: 1,
            ..msg(1, 1)
        };
        assert_eq!(
            classify(&twice, &WindowEnd::Completed, &lost(0)).0,
            ObservedRedelivery
        );
    }

    #[test]
    fn silence_over_short_polls_proves_nothing() {
        let short = Watch {
            short_polls: 3,
            ..Watch::default()
        };
        let (class, reason) = classify(&msg(1, 0), &WindowEnd::Completed, &short);
        assert_eq!(class, Inconclusive);
        assert!(
            reason
                .unwrap()
                .contains("3 polls of the window were short polls")
        );
        // A sighting on a short poll still proves what it shows.
        assert_eq!(
            classify(&msg(1, 1), &WindowEnd::Completed, &short).0,
            ObservedRedelivery
        );
    }

    fn msg(deliveries_before: u32, sightings: u32) -> TrackedMessage {
        TrackedMessage {
            label: "m1".into(),
            message_id: Some("id-1".into()),
            send: SendState::Sent,
            deliveries_before,
            sightings,
            unknown_receives_before: 0,
            copies_unknown: false,
            ambiguous_copies: 0,
            send_faulted: false,
            faulted_receives_before: 0,
        }
    }

    #[test]
    fn a_sighting_of_a_message_delivered_before_is_a_redelivery_even_if_cut() {
        assert_eq!(
            classify(&msg(1, 1), &WindowEnd::Completed, &lost(0)).0,
            ObservedRedelivery
        );
        assert_eq!(
            classify(&msg(1, 2), &WindowEnd::AllSeen, &lost(0)).0,
            ObservedRedelivery
        );
        let cut = WindowEnd::Cut(CutReason::Stopped(StopReason::Deadline("1m".into())));
        assert_eq!(classify(&msg(2, 1), &cut, &lost(3)).0, ObservedRedelivery);
    }

    #[test]
    fn a_first_delivery_is_not_a_redelivery() {
        assert_eq!(
            classify(&msg(0, 1), &WindowEnd::AllSeen, &lost(0)),
            (Delivered, None)
        );
        // Seen twice in the window: the second sighting is a redelivery of the first.
        assert_eq!(
            classify(&msg(0, 2), &WindowEnd::Completed, &lost(0)).0,
            ObservedRedelivery
        );
    }

    #[test]
    fn a_first_sighting_after_a_lost_receive_is_inconclusive() {
        let m = TrackedMessage {
            unknown_receives_before: 1,
            ..msg(0, 1)
        };
        let (class, reason) = classify(&m, &WindowEnd::AllSeen, &lost(1));
        assert_eq!(class, Inconclusive);
        assert!(reason.unwrap().contains("may have been delivered unseen"));
    }

    #[test]
    fn silence_counts_only_over_a_completed_window_without_lost_answers() {
        assert_eq!(
            classify(&msg(1, 0), &WindowEnd::Completed, &lost(0)),
            (NoRedeliveryWithinWindow, None)
        );
        let (class, reason) = classify(&msg(1, 0), &WindowEnd::Completed, &lost(1));
        assert_eq!(class, Inconclusive);
        assert!(reason.unwrap().contains("1 receive of the case"));
        // A lost answer before the window (a receive step) leases the message to nobody:
        // silence afterwards proves nothing either.
        let earlier = TrackedMessage {
            unknown_receives_before: 2,
            ..msg(1, 0)
        };
        let (class, reason) = classify(&earlier, &WindowEnd::Completed, &lost(0));
        assert_eq!(class, Inconclusive);
        assert!(reason.unwrap().contains("2 receives of the case"));
    }

    #[test]
    fn every_cut_makes_silence_inconclusive() {
        for reason in [
            CutReason::ReceiveFailed("InternalError".into()),
            CutReason::BudgetExhausted { used: 20 },
            CutReason::Stopped(StopReason::Interrupted),
            CutReason::Stopped(StopReason::Deadline("1m 10s: its budget plus 10s".into())),
            CutReason::Stopped(StopReason::TargetLost("5 calls".into())),
            CutReason::Stopped(StopReason::CredentialsRefused("AccessDenied".into())),
            CutReason::Stopped(StopReason::Budget("the request budget".into())),
        ] {
            let (class, why) = classify(&msg(1, 0), &WindowEnd::Cut(reason.clone()), &lost(0));
            assert_eq!(class, Inconclusive, "{reason:?}");
            assert!(why.unwrap().contains(&reason.describe()));
        }
        assert_eq!(
            CutReason::Stopped(StopReason::Deadline("1m".into()))
                .label()
                .as_str(),
            "deadline"
        );
        assert_eq!(
            CutReason::Stopped(StopReason::Interrupted).label().as_str(),
            "interrupted"
        );
        assert_eq!(
            CutReason::BudgetExhausted { used: 3 }.label().as_str(),
            "budget_exhausted"
        );
    }

    #[test]
    fn no_evidence_no_verdict_for_messages_never_sent() {
        for (send, text) in [
            (
                SendState::Refused("InvalidMessageContents (400)".into()),
                "never sent",
            ),
            (SendState::Unknown("timed out".into()), "no definite answer"),
            (SendState::NotSent, "not sent before"),
        ] {
            let m = TrackedMessage {
                send,
                message_id: None,
                ..msg(0, 0)
            };
            let (class, why) = classify(&m, &WindowEnd::Completed, &lost(0));
            assert_eq!(class, Inconclusive);
            assert!(why.unwrap().contains(text));
        }
    }

    #[test]
    fn overall_takes_the_least_certain_class() {
        assert_eq!(overall([]), None);
        assert_eq!(
            overall([NoRedeliveryWithinWindow]),
            Some(NoRedeliveryWithinWindow)
        );
        assert_eq!(
            overall([NoRedeliveryWithinWindow, Delivered]),
            Some(Delivered)
        );
        assert_eq!(
            overall([Delivered, ObservedRedelivery]),
            Some(ObservedRedelivery)
        );
        assert_eq!(
            overall([ObservedRedelivery, Inconclusive, NoRedeliveryWithinWindow]),
            Some(Inconclusive)
        );
    }
}
