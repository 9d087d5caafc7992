//! The playbook's four decisions about an acknowledgement (ACCEPT / REPAIR / HOLD / RECONCILE).
//!
//! The order of the rules is the argument: what the queue did (a redelivery, or silence we
//! could not vouch for) outranks what the consumer did, because a consumer's bug is only
//! worth repairing once we know the message is not coming back anyway.

use super::leases::AckClass;
use crate::suite::model::OutcomeClass;
use sqsprobe_facts::decision::Decision;

/// What the case's acknowledgements (DeleteMessage / DeleteMessageBatch entries) looked like.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct AckFacts {
    /// Deletes sent with a handle from a receive of the suite: acknowledgements bound to the
    /// attempt that received the message.
    pub acks: u32,
    /// Deletes sent with a handle the suite wrote (`handle:`): acknowledgements all the same
    /// (their refusals and unknown answers count), but bound to no attempt.
    pub unbound_acks: u32,
    /// Deletes standing in for a newer attempt with an older attempt's handle
    /// (`other_attempt` in `classify::leases`): the newer attempt never used its own.
    pub other_attempt_acks: u32,
    /// Deletes with the attempt's own handle after a newer attempt had received the message
    /// once the lease was over (`superseded`).
    pub superseded_acks: u32,
    /// Deletes with the attempt's own handle sent after its lease surely lapsed, no newer
    /// attempt before them (`late`).
    pub late_acks: u32,
    /// Deletes the recorded times cannot place inside or outside their lease (`unsure`).
    pub unsure_acks: u32,
    /// Deletes the target refused (an error response or a `Failed` batch entry).
    pub failed_acks: u32,
    /// Deletes whose outcome is unknown: no response, a 5xx, a lost or injected-lost answer.
    /// A retry that later succeeded settles it (deleting twice is harmless), so only a final
    /// attempt without a definite answer counts.
    pub unknown_acks: u32,
}

/// Decides, or `None` when the case neither acknowledged nor observed anything.
///
/// 1. The observation was inconclusive → HOLD: we cannot say whether the work is done.
/// 2. A message came back → RECONCILE: the work will run again; the business ledger decides.
/// 3. An ack used another attempt's handle → REPAIR: the adapter must bind deletes to
///    attempts.
/// 4. An ack was refused → HOLD: the delete did not take effect as claimed.
/// 5. An ack got no definite answer → HOLD: nobody can say whether it took effect.
/// 6. An ack came after its lease lapsed (a newer attempt may have received the message
///    since), or when the times cannot say → HOLD: it raced the queue (the class's own decision, `classify::leases::AckClass::decision`, the same one
///    `audit` gives it).
/// 7. Otherwise → ACCEPT, only when an acknowledgement bound to its attempt (a delete with
///    the handle of a receive of the case) took effect. Without one — a message nobody
///    received, silence over a window nobody acknowledged, a delete with a handle the suite
///    wrote — there is nothing to accept: no decision (`null`), never a vacuous ACCEPT.
///    And only when every message the case's receives returned is acknowledged or explained
///    ([`decide_case`]).
pub fn decide(class: Option<OutcomeClass>, acks: AckFacts) -> Option<Decision> {
    match class {
        Some(OutcomeClass::Inconclusive) => return Some(Decision::Hold),
        Some(OutcomeClass::ObservedRedelivery) => return Some(Decision::Reconcile),
        _ => {}
    }
    if acks.other_attempt_acks > 0 {
        return AckClass::OtherAttempt.decision();
    }
    if acks.failed_acks > 0 || acks.unknown_acks > 0 {
        return Some(Decision::Hold);
    }
    if acks.late_acks > 0 || acks.superseded_acks > 0 {
        return AckClass::Late.decision();
    }
    if acks.unsure_acks > 0 {
        return AckClass::Unsure.decision();
    }
    if acks.acks > 0 {
        return Some(Decision::Accept);
    }
    None
}

/// [`decide`] for a case that also knows how many messages its receives returned that are
/// neither acknowledged nor explained (seen again by the observation, so rules 1 and 2 weighed
/// them): ACCEPT needs none, since their work nobody can say is done (a duplicate left leased,
/// a second message never deleted) → HOLD.
pub fn decide_case(
    class: Option<OutcomeClass>,
    acks: AckFacts,
    unexplained: u32,
) -> Option<Decision> {
    match decide(class, acks) {
        Some(Decision::Accept) if unexplained > 0 => Some(Decision::Hold),
        decided => decided,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use OutcomeClass::*;

    fn acks(acks: u32, other_attempt_acks: u32, failed_acks: u32) -> AckFacts {
        AckFacts {
            acks,
            other_attempt_acks,
            failed_acks,
            ..AckFacts::default()
        }
    }

    #[test]
    fn an_ack_without_a_definite_answer_holds() {
        let lost = AckFacts {
            acks: 1,
            unknown_acks: 1,
            ..AckFacts::default()
        };
        assert_eq!(
            decide(Some(NoRedeliveryWithinWindow), lost),
            Some(Decision::Hold)
        );
        assert_eq!(decide(None, lost), Some(Decision::Hold));
        // A redelivery still says what to do: the work runs again.
        assert_eq!(
            decide(Some(ObservedRedelivery), lost),
            Some(Decision::Reconcile)
        );
    }

    #[test]
    fn a_first_delivery_with_nothing_acknowledged_decides_nothing() {
        assert_eq!(decide(Some(Delivered), acks(0, 0, 0)), None);
        assert_eq!(
            decide(Some(Delivered), acks(1, 0, 0)),
            Some(Decision::Accept)
        );
    }

    /// Silence about a message nobody received and nobody acknowledged is not an
    /// ACCEPT; nor is a delete bound to no attempt. A refused one still holds.
    #[test]
    fn accept_needs_an_acknowledgement_bound_to_its_attempt() {
        assert_eq!(decide(Some(NoRedeliveryWithinWindow), acks(0, 0, 0)), None);
        let literal = AckFacts {
            unbound_acks: 1,
            ..AckFacts::default()
        };
        assert_eq!(decide(Some(NoRedeliveryWithinWindow), literal), None);
        let refused_literal = AckFacts {
            unbound_acks: 1,
            failed_acks: 1,
            ..AckFacts::default()
        };
        assert_eq!(decide(None, refused_literal), Some(Decision::Hold));
        assert_eq!(
            decide(Some(NoRedeliveryWithinWindow), acks(1, 0, 0)),
            Some(Decision::Accept)
        );
    }

    /// ACCEPT needs every received message acknowledged or explained: one a receive of the
    /// case returned that nobody acknowledged and the observation never saw again holds.
    #[test]
    fn an_unacknowledged_received_message_blocks_accept() {
        assert_eq!(
            decide_case(Some(NoRedeliveryWithinWindow), acks(1, 0, 0), 1),
            Some(Decision::Hold)
        );
        assert_eq!(decide_case(None, acks(1, 0, 0), 1), Some(Decision::Hold));
        // Nothing acknowledged decides nothing still; a redelivery still reconciles.
        assert_eq!(
            decide_case(Some(NoRedeliveryWithinWindow), acks(0, 0, 0), 1),
            None
        );
        assert_eq!(
            decide_case(Some(ObservedRedelivery), acks(1, 0, 0), 1),
            Some(Decision::Reconcile)
        );
    }

    #[test]
    fn inconclusive_holds_whatever_the_acks() {
        assert_eq!(
            decide(Some(Inconclusive), acks(1, 0, 0)),
            Some(Decision::Hold)
        );
        assert_eq!(
            decide(Some(Inconclusive), acks(1, 1, 0)),
            Some(Decision::Hold)
        );
    }

    #[test]
    fn redelivery_reconciles_even_after_an_ack_with_another_attempts_handle() {
        assert_eq!(
            decide(Some(ObservedRedelivery), acks(1, 1, 0)),
            Some(Decision::Reconcile)
        );
    }

    #[test]
    fn an_ack_with_another_attempts_handle_without_redelivery_asks_for_repair() {
        assert_eq!(
            decide(Some(NoRedeliveryWithinWindow), acks(1, 1, 0)),
            Some(Decision::Repair)
        );
    }

    /// The same facts get the same decision as `audit` gives them: a delete with the
    /// attempt's own handle after its lease lapsed holds, whatever the window saw.
    #[test]
    fn a_late_or_unplaceable_ack_holds() {
        let late = AckFacts {
            acks: 1,
            late_acks: 1,
            ..AckFacts::default()
        };
        assert_eq!(
            decide(Some(NoRedeliveryWithinWindow), late),
            Some(Decision::Hold)
        );
        let unsure = AckFacts {
            acks: 1,
            unsure_acks: 1,
            ..AckFacts::default()
        };
        assert_eq!(decide(None, unsure), Some(Decision::Hold));
        assert_eq!(
            decide(Some(ObservedRedelivery), late),
            Some(Decision::Reconcile)
        );
        let superseded = AckFacts {
            acks: 1,
            superseded_acks: 1,
            ..AckFacts::default()
        };
        assert_eq!(
            decide(Some(NoRedeliveryWithinWindow), superseded),
            Some(Decision::Hold)
        );
    }

    #[test]
    fn a_refused_ack_holds() {
        assert_eq!(
            decide(Some(NoRedeliveryWithinWindow), acks(2, 0, 1)),
            Some(Decision::Hold)
        );
        assert_eq!(decide(None, acks(1, 0, 1)), Some(Decision::Hold));
    }

    #[test]
    fn clean_acks_are_accepted_and_nothing_decides_nothing() {
        assert_eq!(
            decide(Some(NoRedeliveryWithinWindow), acks(1, 0, 0)),
            Some(Decision::Accept)
        );
        assert_eq!(decide(None, acks(1, 0, 0)), Some(Decision::Accept));
        assert_eq!(decide(None, acks(0, 0, 0)), None);
    }
}
