//! The case's message ledger: what it sent, what each receive returned and to whom, how often
//! each message was delivered, and what its acknowledgements were answered.
//!
//! The ledger is where the facts about messages accumulate as the steps run; the judge reads
//! them at the end (the deliveries, the tracked messages of a window). It decides nothing and
//! makes no calls, so every rule of its bookkeeping (a duplicate placed by its business key)
//! is testable without a target. What the acknowledgements were is read from the case's
//! `call` rows (`classify::ack_history`), not kept here.

use sqsprobe_core::classify::{CallError, FailureKind, SendState, TrackedMessage};
use sqsprobe_core::evidence::{business_key, sha256_hex};
use std::collections::{BTreeMap, BTreeSet, HashMap};

/// One receive of one message by a named attempt.
#[derive(Debug, Clone)]
pub(super) struct Receipt {
    pub handle: String,
    pub message_id: String,
    pub label: Option<String>,
}

/// A message the case tried to send.
#[derive(Debug, Clone)]
pub(super) struct SentMessage {
    pub message_id: Option<String>,
    pub business_key: Option<String>,
    /// sha256 of the body the target took: a receive of this message must return it as sent.
    pub body_digest: Option<String>,
    /// Whether the target took it: the judge never calls silence about an unsent message a pass.
    pub state: SendState,
    /// Its step expected the send to be refused (an `error:` or `status:`, a batch's
    /// `failed:`): an observation does not track it by default.
    pub refusal_expected: bool,
    /// Attempts of its send that got no definite answer: each may have put a copy of it on
    /// the queue under a MessageId the case never saw (before a retry took it, or when no
    /// attempt was answered at all).
    pub lost_attempts: u32,
    /// The MessageIds of copies of it the case placed by its business key.
    pub copies_seen: BTreeSet<String>,
    /// Its refusal or missing answer was the case's own fault's doing (an injected fault, a
    /// `deny`).
    pub faulted: bool,
}

/// The message ledger of one case (see the module doc).
#[derive(Debug, Default)]
pub(super) struct Ledger {
    /// By label: every message the case tried to send.
    sent: BTreeMap<String, SentMessage>,
    /// MessageId → label of the first message sent with it, or of the message a copy was
    /// placed to.
    by_id: HashMap<String, String>,
    /// MessageId of a message bearing a business key that several of the case's messages
    /// could have left a copy under → those messages' labels.
    ambiguous: HashMap<String, Vec<String>>,
    /// By attempt name: what its receives returned, in order.
    attempts: HashMap<String, Vec<Receipt>>,
    /// By label (or MessageId for a message the case cannot place): deliveries so far.
    deliveries: BTreeMap<String, u32>,
    receives: u32,
    /// Receive attempts of the case so far without a definite answer (no response, 5xx,
    /// throttled), the ones a successful retry hid included: each may have delivered a message
    /// nobody saw.
    unknown_receives: u32,
}

impl Ledger {
    /// Notes a send the target took: its MessageId, business key and body digest, and how many
    /// of its attempts got no definite answer before the one that took it.
    pub(super) fn track_sent(
        &mut self,
        label: &str,
        message_id: &str,
        business_key: Option<String>,
        body: &str,
        lost_attempts: u32,
    ) {
        self.sent.insert(
            label.to_string(),
            SentMessage {
                message_id: Some(message_id.to_string()),
                business_key,
                body_digest: Some(sha256_hex(body)),
                state: SendState::Sent,
                refusal_expected: false,
                lost_attempts,
                copies_seen: BTreeSet::new(),
                faulted: false,
            },
        );
        // A FIFO duplicate is answered with the first message's MessageId; what is received
        // is that first message, so the id keeps the first label.
        self.by_id
            .entry(message_id.to_string())
            .or_insert_with(|| label.to_string());
    }

    /// Notes a send the target did not accept (or did not answer): the message has no
    /// MessageId, and an observation that tracks it can prove nothing about it. It keeps its
    /// business key and its lost attempts (`lost_before` the final one, and the final one when
    /// it got no definite answer either): a copy of it may still turn up.
    pub(super) fn track_unsent(
        &mut self,
        label: &str,
        error: &CallError,
        expected: bool,
        business_key: Option<String>,
        lost_before: u32,
    ) {
        let why = error.describe();
        let (state, lost_attempts) = match error.kind {
            FailureKind::Response
            | FailureKind::Refused
            | FailureKind::Throttled
            | FailureKind::NotSent => (SendState::Refused(why), lost_before),
            FailureKind::ServerError | FailureKind::NoResponse => {
                (SendState::Unknown(why), lost_before + 1)
            }
        };
        self.sent.insert(
            label.to_string(),
            SentMessage {
                message_id: None,
                business_key,
                body_digest: None,
                state,
                refusal_expected: expected,
                lost_attempts,
                copies_seen: BTreeSet::new(),
                faulted: error.case_made(),
            },
        );
    }

    /// The message sent as `label`, if the case tried to send one.
    pub(super) fn sent(&self, label: &str) -> Option<&SentMessage> {
        self.sent.get(label)
    }

    /// The label the message with `message_id` was sent as, by its MessageId only.
    pub(super) fn label_of(&self, message_id: &str) -> Option<String> {
        self.by_id.get(message_id).cloned()
    }

    /// The label of the case's message a received message is: by its MessageId, else by the
    /// business key its body carries, as a copy of the one message of the case that could
    /// still have left a copy with that key under a MessageId the case never saw (a send whose
    /// answer was lost, the batch's included, with fewer copies placed than lost attempts). A
    /// message whose every copy is accounted for (a send answered at once, a message deleted)
    /// is no candidate. `None` for a message the case cannot place: none could have left it,
    /// or several could, and each of those then has an ambiguous copy
    /// ([`Ledger::ambiguous_copies`]): its outcome is inconclusive.
    pub(super) fn place(&mut self, message_id: &str, body: &str) -> Option<String> {
        if let Some(label) = self.by_id.get(message_id) {
            return Some(label.clone());
        }
        if self.ambiguous.contains_key(message_id) {
            return None;
        }
        let key = business_key(body)?;
        let candidates: Vec<String> = self
            .sent
            .iter()
            .filter(|(_, m)| {
                m.business_key.as_deref() == Some(key.as_str())
                    && m.copies_seen.len() < m.lost_attempts as usize
            })
            .map(|(label, _)| label.clone())
            .collect();
        match candidates.as_slice() {
            [] => None,
            [label] => {
                if let Some(m) = self.sent.get_mut(label) {
                    m.copies_seen.insert(message_id.to_string());
                }
                self.by_id.insert(message_id.to_string(), label.clone());
                Some(label.clone())
            }
            _ => {
                self.ambiguous.insert(message_id.to_string(), candidates);
                None
            }
        }
    }

    /// Messages received that could be a copy of `label` or of another of the case's
    /// messages, so nobody can say which was delivered.
    pub(super) fn ambiguous_copies(&self, label: &str) -> u32 {
        self.ambiguous
            .values()
            .filter(|labels| labels.iter().any(|l| l == label))
            .count() as u32
    }

    /// Counts one ReceiveMessage call, with how many of its attempts got no definite answer.
    pub(super) fn count_receive(&mut self, unknown_attempts: u32) {
        self.receives += 1;
        self.unknown_receives += unknown_attempts;
    }

    /// Notes one delivery of the message `message_id` (placed as `label`, if it could be).
    pub(super) fn deliver(&mut self, message_id: &str, label: Option<&str>) {
        *self
            .deliveries
            .entry(label.unwrap_or(message_id).to_string())
            .or_default() += 1;
    }

    /// Keeps what a receive of `attempt` returned, so later steps can name its handles.
    pub(super) fn keep_receipts(&mut self, attempt: &str, receipts: Vec<Receipt>) {
        self.attempts
            .entry(attempt.to_string())
            .or_default()
            .extend(receipts);
    }

    /// The receipt `attempt` got for `message` (its first one when `message` is `None`).
    pub(super) fn receipt(&self, attempt: &str, message: Option<&str>) -> Result<&Receipt, String> {
        let receipts = self
            .attempts
            .get(attempt)
            .ok_or_else(|| format!("attempt {attempt} has not received anything"))?;
        match message {
            Some(m) => receipts
                .iter()
                .find(|r| r.label.as_deref() == Some(m))
                .ok_or_else(|| format!("attempt {attempt} did not receive message {m}")),
            None => receipts
                .first()
                .ok_or_else(|| format!("attempt {attempt} received no message")),
        }
    }

    /// The labels an observation tracks when it names none: every message the case tried to
    /// send, but those whose refusal the step expected (the refusal was the point). A
    /// throttled, reset or refused send stays tracked, and is inconclusive ("never sent"),
    /// never silently dropped from the window.
    pub(super) fn default_tracked(&self) -> Vec<String> {
        self.sent
            .iter()
            .filter(|(_, m)| !(m.refusal_expected && matches!(m.state, SendState::Refused(_))))
            .map(|(l, _)| l.clone())
            .collect()
    }

    /// The judge's view of message `label` as a window opens.
    pub(super) fn tracked(&self, label: &str) -> TrackedMessage {
        let sent = self.sent.get(label);
        TrackedMessage {
            label: label.to_string(),
            message_id: sent.and_then(|s| s.message_id.clone()),
            send: sent.map_or(SendState::NotSent, |s| s.state.clone()),
            deliveries_before: self.deliveries_of(label),
            sightings: 0,
            unknown_receives_before: 0,
            copies_unknown: sent.is_some_and(|s| s.lost_attempts > 0),
            ambiguous_copies: self.ambiguous_copies(label),
            send_faulted: sent.is_some_and(|s| s.faulted),
            faulted_receives_before: 0,
        }
    }

    /// Deliveries of `label` so far.
    pub(super) fn deliveries_of(&self, label: &str) -> u32 {
        self.deliveries.get(label).copied().unwrap_or(0)
    }

    /// Deliveries by label (or MessageId), for `case_end`.
    pub(super) fn deliveries(&self) -> &BTreeMap<String, u32> {
        &self.deliveries
    }

    /// ReceiveMessage calls made so far.
    pub(super) fn receives(&self) -> u32 {
        self.receives
    }

    /// Receive attempts so far without a definite answer.
    pub(super) fn unknown_receives(&self) -> u32 {
        self.unknown_receives
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refusal(kind: FailureKind) -> CallError {
        CallError {
            kind,
            code: Some("X".into()),
            error_type: None,
            status: None,
            sender_fault: None,
            message: None,
            injected: None,
            denied: false,
        }
    }

    #[test]
    fn a_copy_is_placed_by_its_business_key_only_to_the_one_send_that_could_have_left_it() {
        let mut l = Ledger::default();
        let body = r#"{"business_key":"k1"}"#;
        // Taken by a retry after an attempt without an answer: one copy may be out there.
        l.track_sent("m1", "id-1", business_key(body), body, 1);
        assert_eq!(l.place("id-1", "anything").as_deref(), Some("m1"));
        assert_eq!(l.place("id-copy", body).as_deref(), Some("m1"));
        assert_eq!(
            l.place("id-copy", body).as_deref(),
            Some("m1"),
            "placed once, by id"
        );
        // Its one lost attempt is accounted for: a third message with the key is nobody's.
        assert_eq!(l.place("id-other", body), None);
        // A send answered at once leaves no copy under another MessageId.
        let plain = r#"{"business_key":"k0"}"#;
        l.track_sent("m0", "id-0", business_key(plain), plain, 0);
        assert_eq!(l.place("id-x", plain), None);
        assert_eq!(l.ambiguous_copies("m0"), 0);
    }

    /// A later send whose answer was lost is never matched to an earlier message of the same
    /// key that was answered (and deleted): that one cannot come back under another id.
    #[test]
    fn a_later_lost_send_is_not_matched_to_an_earlier_message_of_its_key() {
        let mut l = Ledger::default();
        let body = r#"{"business_key":"order-77"}"#;
        l.track_sent("m1", "id-1", business_key(body), body, 0);
        l.track_unsent(
            "m2",
            &refusal(FailureKind::NoResponse),
            false,
            business_key(body),
            0,
        );
        assert_eq!(l.place("id-2", body).as_deref(), Some("m2"));
        assert_eq!(l.deliveries_of("m1"), 0);
    }

    /// Two sends that could each have left a message bearing the key: the match is not
    /// unique, so the message is nobody's and each of them has an ambiguous copy.
    #[test]
    fn a_copy_two_lost_sends_could_have_left_is_ambiguous_for_both() {
        let mut l = Ledger::default();
        let body = r#"{"business_key":"k"}"#;
        l.track_sent("m1", "id-1", business_key(body), body, 1);
        l.track_unsent(
            "m2",
            &refusal(FailureKind::NoResponse),
            false,
            business_key(body),
            0,
        );
        assert_eq!(l.place("id-y", body), None);
        assert_eq!(
            l.place("id-y", body),
            None,
            "the same message, the same answer"
        );
        assert_eq!((l.ambiguous_copies("m1"), l.ambiguous_copies("m2")), (1, 1));
        assert_eq!(l.tracked("m1").ambiguous_copies, 1);
        assert!(l.tracked("m1").copies_unknown);
    }

    #[test]
    fn an_expected_refusal_is_not_tracked_by_default_but_an_unknown_send_is() {
        let mut l = Ledger::default();
        l.track_unsent("refused", &refusal(FailureKind::Response), true, None, 0);
        l.track_unsent("lost", &refusal(FailureKind::NoResponse), true, None, 0);
        l.track_unsent("surprise", &refusal(FailureKind::Response), false, None, 0);
        assert_eq!(l.default_tracked(), ["lost", "surprise"]);
        assert!(matches!(l.tracked("lost").send, SendState::Unknown(_)));
        assert_eq!(l.tracked("never").send, SendState::NotSent);
    }

    #[test]
    fn a_receipt_is_named_by_attempt_and_message() {
        let mut l = Ledger::default();
        assert!(l.receipt("A", None).is_err());
        let r = |label: &str| Receipt {
            handle: format!("h-{label}"),
            message_id: format!("id-{label}"),
            label: Some(label.into()),
        };
        l.keep_receipts("A", vec![r("m1"), r("m2")]);
        assert_eq!(l.receipt("A", None).unwrap().handle, "h-m1");
        assert_eq!(l.receipt("A", Some("m2")).unwrap().handle, "h-m2");
        let err = l.receipt("A", Some("m3")).unwrap_err();
        assert_eq!(err, "attempt A did not receive message m3");
    }
}
