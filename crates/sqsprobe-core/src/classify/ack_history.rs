//! A case's `call` rows read as the lease vocabulary's history (pure): each message a
//! receive returned is a [`Delivery`], each delete and visibility change (and each entry of
//! their batches) a [`HandleUse`]; and the acknowledgement facts the judge decides on,
//! counted from them ([`ack_facts`]), so `run` and `sqsprobe check` count them one way, from
//! the evidence.
//!
//! A row's times are the client's: the queue handled the request somewhere between the
//! request's start and its answer, so each is a [`Span`] from `started_at` to `ended_at` (one
//! millisecond wider, as the rows are written to the millisecond), its start moved past any
//! hold the case's own latency fault put on the request before sending it, and past the answer
//! of the row before it: a case (or one trial) calls SQS one call at a time, so the order of
//! its rows is the order of its calls.

use std::collections::{HashMap, HashSet};

use super::decision::AckFacts;
use super::leases::{self, AckClass, Delivery, HandleOp, HandleUse, Reading, Span, UseAnswer};
use crate::evidence::format::{Call, Completion, Phase};
use sqsprobe_facts::sqs::operations::single;

/// The history of a case's calls in the lease vocabulary, with where each part came from.
#[derive(Debug, Default)]
pub struct CallHistory<'a> {
    pub deliveries: Vec<Delivery<'a>>,
    /// For each delivery: the receive row, and the index of the message in it.
    pub delivery_rows: Vec<(&'a Call, usize)>,
    pub uses: Vec<HandleUse<'a>>,
    /// For each use: the row, the batch entry's index when it is one, and the call it is
    /// part of (by its order among the rows' calls: a retried call's attempts share it).
    pub use_rows: Vec<(&'a Call, Option<usize>, usize)>,
}

impl<'a> CallHistory<'a> {
    /// Reads the rows (in the order they were written); `at` turns a row's timestamp into
    /// milliseconds on one clock (`None`: the row is left out, its time unknown).
    pub fn of(calls: &[&'a Call], at: &impl Fn(&str) -> Option<f64>) -> CallHistory<'a> {
        let mut h = CallHistory::default();
        let mut call_no = 0;
        // A case (or a trial) makes its calls one after another: a row began after the row
        // before it in the same trial was answered, whatever the clocks' milliseconds say.
        let mut answered: HashMap<Option<u32>, f64> = HashMap::new();
        for &call in calls {
            if call.attempt_number <= 1 {
                call_no += 1;
            }
            let (Some(from), Some(to)) = (at(&call.started_at), at(&call.ended_at)) else {
                continue;
            };
            // A request the case's own latency fault held was sent no earlier than the hold's
            // end (`fault.delay_ms`: held before it was sent).
            let held = call
                .fault
                .as_ref()
                .filter(|f| f.kind == "latency")
                .and_then(|f| f.delay_ms)
                .unwrap_or(0) as f64;
            let after = answered
                .get(&call.trial)
                .copied()
                .unwrap_or(f64::NEG_INFINITY);
            let span = Span {
                from: (from + held).min(to).max(after),
                to: to + 1.0,
            };
            answered.insert(call.trial, span.to);
            if call.action == "ReceiveMessage" && call.completion == Completion::Ok {
                for (i, m) in call.messages.iter().enumerate() {
                    let Some(handle) = m.handle_digest.as_deref() else {
                        continue;
                    };
                    h.deliveries.push(Delivery {
                        message: &m.message_id,
                        handle,
                        at: span,
                        lease_ms: call.lease_ms,
                    });
                    h.delivery_rows.push((call, i));
                }
                continue;
            }
            let delete = match single(&call.action) {
                "DeleteMessage" => true,
                "ChangeMessageVisibility" => false,
                _ => continue,
            };
            // A visibility change whose new timeout the row does not say (older files) is
            // left out: what it did to the lease cannot be read.
            let op = |lease_ms: Option<u64>| match delete {
                true => Some(HandleOp::Delete),
                false => lease_ms.map(|timeout_ms| HandleOp::ChangeVisibility { timeout_ms }),
            };
            if call.entries.is_empty() {
                if let Some(op) = op(call.lease_ms) {
                    h.uses.push(HandleUse {
                        handle: call.handle_digest.as_deref(),
                        op,
                        at: span,
                        answer: answer_of(call.completion),
                    });
                    h.use_rows.push((call, None, call_no));
                }
                continue;
            }
            for (i, e) in call.entries.iter().enumerate() {
                let Some(op) = op(e.lease_ms) else { continue };
                let answer = match (call.completion, e.result.as_str()) {
                    (Completion::Ok, "successful") => UseAnswer::Took,
                    (Completion::Ok, "failed") => UseAnswer::Refused,
                    (Completion::Ok, _) => UseAnswer::Unknown,
                    (other, _) => answer_of(other),
                };
                h.uses.push(HandleUse {
                    handle: e.handle_digest.as_deref(),
                    op,
                    at: span,
                    answer,
                });
                h.use_rows.push((call, Some(i), call_no));
            }
        }
        h
    }

    /// The reading of this history; `horizon` is where it ends.
    pub fn read(&self, horizon: f64) -> Reading {
        leases::read(&self.deliveries, &self.uses, horizon)
    }
}

fn answer_of(completion: Completion) -> UseAnswer {
    match completion {
        Completion::Ok => UseAnswer::Took,
        Completion::Fail => UseAnswer::Refused,
        Completion::Info => UseAnswer::Unknown,
    }
}

/// Milliseconds since the epoch of an RFC 3339 timestamp, as the rows write them.
pub fn epoch_ms(t: &str) -> Option<f64> {
    crate::evidence::view::parse_time(t).map(|d| d.timestamp_millis() as f64)
}

/// The acknowledgement facts of a case, from its rows (a multi-trial case's: one trial's).
///
/// An acknowledgement is a delete call, or an entry of a delete batch, as its final SDK
/// attempt sent it (a retry that took settles what an earlier attempt left unknown): bound
/// to its attempt when a receive of the case issued its handle, else unbound (a handle the
/// suite wrote). Its answer counts it refused or unknown; its class (of the same final
/// attempt) counts it as another attempt's, superseded, late or unsure.
pub fn ack_facts(calls: &[&Call]) -> AckFacts {
    let history = CallHistory::of(calls, &epoch_ms);
    let reading = history.read(f64::INFINITY);
    // The final attempt of each acknowledgement: a later row of the same call replaces an
    // earlier one.
    let mut last_of: HashMap<(usize, Option<&str>), usize> = HashMap::new();
    for (u, (row, entry, call)) in history.use_rows.iter().enumerate() {
        if single(&row.action) == "DeleteMessage" {
            last_of.insert((*call, entry.map(|i| row.entries[i].id.as_str())), u);
        }
    }
    let mut facts = AckFacts::default();
    let mut finals: Vec<usize> = last_of.into_values().collect();
    finals.sort_unstable();
    for u in finals {
        let judged = reading.uses[u];
        match judged.class {
            AckClass::UnknownHandle => facts.unbound_acks += 1,
            class => {
                facts.acks += 1;
                match class {
                    AckClass::Superseded => facts.superseded_acks += 1,
                    AckClass::OtherAttempt => facts.other_attempt_acks += 1,
                    AckClass::Late => facts.late_acks += 1,
                    AckClass::Unsure => facts.unsure_acks += 1,
                    _ => {}
                }
            }
        }
        match history.uses[u].answer {
            UseAnswer::Took => {}
            UseAnswer::Refused => facts.failed_acks += 1,
            UseAnswer::Unknown => facts.unknown_acks += 1,
        }
    }
    facts
}

/// The messages a receive step of the case returned (the consumer's receives, not the
/// observation's) that no acknowledgement took: no delete call, nor delete batch entry, with a
/// handle of any receive of that MessageId was answered as done. By label (the row's
/// `message`), or MessageId for a message the case could not place; sorted, each once.
/// ACCEPT needs each to be explained (`super::judge`).
pub fn unacknowledged(calls: &[&Call]) -> Vec<String> {
    let mut message_of: HashMap<&str, &str> = HashMap::new();
    let mut taken: Vec<(&str, Option<&str>)> = Vec::new();
    for call in calls {
        if call.action != "ReceiveMessage" || call.completion != Completion::Ok {
            continue;
        }
        for m in &call.messages {
            if let Some(handle) = m.handle_digest.as_deref() {
                message_of.insert(handle, &m.message_id);
            }
            if call.phase == Phase::Step {
                taken.push((&m.message_id, m.message.as_deref()));
            }
        }
    }
    let mut deleted: HashSet<&str> = HashSet::new();
    for call in calls {
        if single(&call.action) != "DeleteMessage" || call.completion != Completion::Ok {
            continue;
        }
        let handles: Vec<&str> = if call.entries.is_empty() {
            call.handle_digest.as_deref().into_iter().collect()
        } else {
            call.entries
                .iter()
                .filter(|e| e.result == "successful")
                .filter_map(|e| e.handle_digest.as_deref())
                .collect()
        };
        deleted.extend(
            handles
                .into_iter()
                .filter_map(|h| message_of.get(h).copied()),
        );
    }
    let mut left: Vec<String> = taken
        .into_iter()
        .filter(|(id, _)| !deleted.contains(id))
        .map(|(id, label)| label.unwrap_or(id).to_string())
        .collect();
    left.sort();
    left.dedup();
    left
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evidence::fixtures::{call, received};
    use crate::evidence::format::{EntryEvidence, FaultEvidence, Phase};

    fn receive(at: u64, handle: &str, lease: u64) -> Call {
        let mut c = call("c", Phase::Step, "ReceiveMessage", at, at);
        c.lease_ms = Some(lease);
        c.messages = vec![received("m1", handle, 1)];
        c
    }

    fn delete(at: u64, handle: &str) -> Call {
        let mut c = call("c", Phase::Step, "DeleteMessage", at, at + 5);
        c.handle_digest = Some(handle.to_string());
        c
    }

    fn facts(rows: &[Call]) -> AckFacts {
        let refs: Vec<&Call> = rows.iter().collect();
        ack_facts(&refs)
    }

    /// A message the consumer took is acknowledged by a delete that took with a handle of any
    /// of its receives; the observation's receives take nothing.
    #[test]
    fn a_taken_message_is_unacknowledged_until_a_delete_of_one_of_its_handles_takes() {
        let mut two = receive(0, "h1", 1000);
        two.messages.push(received("m2", "h2", 1));
        let mut copy = received("m1", "h3", 1);
        copy.message = None;
        copy.message_id = "id-copy".into();
        two.messages.push(copy);
        let mut seen = receive(50, "h4", 1000);
        seen.phase = Phase::Observe;
        seen.messages[0].message_id = "id-seen".into();
        let left = |rows: &[Call]| {
            let refs: Vec<&Call> = rows.iter().collect();
            unacknowledged(&refs)
        };
        assert_eq!(left(&[two.clone(), seen.clone()]), ["id-copy", "m1", "m2"]);
        let mut lost = delete(100, "h2");
        lost.completion = Completion::Info;
        let rows = [two.clone(), seen, delete(90, "h1"), lost];
        assert_eq!(left(&rows), ["id-copy", "m2"]);
        // A redelivery's handle acknowledges the same message.
        let mut again = receive(200, "h5", 1000);
        again.messages[0] = received("m2", "h5", 2);
        let rows = [two, again, delete(300, "h5")];
        assert_eq!(left(&rows), ["id-copy", "m1"]);
    }

    #[test]
    fn a_retried_delete_counts_once_by_its_final_attempt() {
        let mut first = delete(100, "h1");
        first.completion = Completion::Info;
        first.retried = true;
        let mut second = delete(200, "h1");
        second.attempt_number = 2;
        let f = facts(&[receive(0, "h1", 1000), first.clone(), second]);
        assert_eq!((f.acks, f.unknown_acks, f.late_acks), (1, 0, 0));
        // Had the retry come after the lease, the acknowledgement would be late.
        let mut late = delete(1500, "h1");
        late.attempt_number = 2;
        let f = facts(&[receive(0, "h1", 1000), first, late]);
        assert_eq!((f.acks, f.late_acks), (1, 1));
    }

    #[test]
    fn every_batch_entry_is_an_acknowledgement_answered_or_not() {
        let entry = |id: &str, handle: &str, result: &str| EntryEvidence {
            id: id.into(),
            message: None,
            message_id: None,
            handle_digest: Some(handle.into()),
            result: result.into(),
            code: None,
            sender_fault: None,
            error_message: None,
            lease_ms: None,
        };
        let mut batch = call("c", Phase::Step, "DeleteMessageBatch", 100, 110);
        batch.entries = vec![
            entry("a", "h1", "successful"),
            entry("b", "zz", "failed"),
            entry("c", "h1", "unanswered"),
        ];
        let f = facts(&[receive(0, "h1", 1000), batch.clone()]);
        assert_eq!(
            (f.acks, f.unbound_acks, f.failed_acks, f.unknown_acks),
            (2, 1, 1, 1)
        );
        // A batch with no answer at all: every entry unknown.
        batch.completion = Completion::Info;
        let f = facts(&[receive(0, "h1", 1000), batch]);
        assert_eq!(f.unknown_acks, 3);
    }

    /// A latency fault holds the request before it is sent: it reached the queue no earlier
    /// than the hold's end, so a 2 s hold on a 1 s lease is late, not unsure.
    #[test]
    fn a_held_request_is_placed_after_its_hold() {
        let mut held = call("c", Phase::Step, "DeleteMessage", 10, 2100);
        held.handle_digest = Some("h1".into());
        held.fault = Some(FaultEvidence {
            kind: "latency".into(),
            scope: "step".into(),
            delay_ms: Some(2000),
            status: None,
            code: None,
        });
        let f = facts(&[receive(0, "h1", 1000), held.clone()]);
        assert_eq!((f.late_acks, f.unsure_acks), (1, 0));
        held.fault = None;
        let f = facts(&[receive(0, "h1", 1000), held]);
        assert_eq!((f.late_acks, f.unsure_acks), (0, 1));
    }

    #[test]
    fn a_superseded_delete_and_a_suite_written_handle() {
        let rows = [
            receive(0, "h1", 1000),
            receive(1500, "h2", 30_000),
            delete(1600, "h1"),
            delete(1700, "literal"),
        ];
        let f = facts(&rows);
        assert_eq!((f.acks, f.other_attempt_acks, f.unbound_acks), (1, 1, 1));
    }
}
