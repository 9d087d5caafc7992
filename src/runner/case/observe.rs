//! Receives and the bounded observation: tracking receipts per attempt, counting deliveries,
//! verifying MD5s (all in the case's ledger), and the facts of what an `observe` window saw.

use super::calls::Caller;
use super::deny;
use super::ledger::{Ledger, Receipt};
use super::messages::md5_hex;
use super::queue_table::QueueTable;
use crate::runner::call::{CallMeta, Recorded};
use aws_sdk_sqs::operation::receive_message::ReceiveMessageOutput;
use aws_sdk_sqs::types::MessageSystemAttributeName;
use sqsprobe_core::classify::{
    Check, CutReason, FailureKind, Observed, ReceivedMsg, WindowEnd, WindowFacts, check_window,
};
use sqsprobe_core::evidence::format::{Completion, MessageEvidence, Phase};
use sqsprobe_core::evidence::{business_key, sha256_hex};
use sqsprobe_core::suite::model::{Observe, Receive, Step};
use std::collections::BTreeMap;
use std::time::Duration;
use tokio::time::Instant;

/// The `receive` step: one ReceiveMessage, its receipts kept in the ledger under the step's
/// attempt name (`as:`) for later steps to name.
pub(super) async fn receive(
    sqs: &mut Caller,
    queues: &QueueTable,
    ledger: &mut Ledger,
    step: &Step,
    receive: &Receive,
) -> Result<Check, String> {
    let url = queues.url(&receive.queue.value)?;
    let attempt = receive.attempt.as_ref().map(|a| a.value.clone());
    let meta = sqs.meta(
        queues,
        Phase::Step,
        Some(step),
        "ReceiveMessage",
        attempt.clone(),
        Some(&receive.queue.value),
    );
    let started = Instant::now();
    let (mut rec, received, integrity) = receive_call(
        sqs,
        ledger,
        meta,
        &url,
        ReceiveParams {
            max: receive.max,
            wait: receive.wait,
            visibility: receive.visibility_timeout,
            attribute_names: receive.attribute_names.clone(),
            message_attribute_names: receive.message_attribute_names.clone(),
            request_attempt_id: receive.request_attempt_id.clone(),
            lease: queues.lease_for(&receive.queue.value, receive.visibility_timeout),
        },
        attempt.as_deref(),
    )
    .await;
    Ok(sqs.check(
        &step.expect,
        &mut rec,
        Observed {
            received,
            integrity,
            elapsed: Some(started.elapsed()),
            ..Observed::default()
        },
    ))
}

/// One ReceiveMessage: tracks receipts under `attempt`, counts deliveries, verifies MD5s.
async fn receive_call(
    sqs: &mut Caller,
    ledger: &mut Ledger,
    meta: CallMeta,
    url: &str,
    p: ReceiveParams,
    attempt: Option<&str>,
) -> (
    Recorded<ReceiveMessageOutput>,
    Option<Vec<ReceivedMsg>>,
    Vec<String>,
) {
    let client = sqs.client();
    let req = {
        let mut req = client
            .receive_message()
            .queue_url(url)
            .set_max_number_of_messages(p.max)
            .set_wait_time_seconds(p.wait.map(sqsprobe_facts::sqs::limits::wire_seconds))
            .set_visibility_timeout(p.visibility.map(sqsprobe_facts::sqs::limits::wire_seconds))
            .set_receive_request_attempt_id(p.request_attempt_id.clone());
        for n in &p.attribute_names {
            req = req.message_system_attribute_names(MessageSystemAttributeName::from(n.as_str()));
        }
        // As written: `[]` is sent as an empty list (the query wire's
        // `MessageAttributeNames=`), an unwritten one not at all.
        req = req.set_message_attribute_names(p.message_attribute_names.clone());
        req
    };
    let mut rec = call!(sqs, meta, req).await;
    // Every attempt without a definite answer, a hidden one included, may have leased a
    // message to nobody: the judge must know (the honesty rule "a hidden attempt counts").
    let unknown = rec
        .rows
        .iter()
        .filter(|r| r.completion == Completion::Info)
        .count() as u32;
    ledger.count_receive(unknown);
    for row in &mut rec.rows {
        row.lease_ms = Some(p.lease.as_millis() as u64);
    }
    let mut integrity = Vec::new();
    let Some(out) = rec.output.as_ref() else {
        return (rec, None, integrity);
    };
    let mut received = Vec::new();
    let mut evidence = Vec::new();
    let mut receipts = Vec::new();
    for m in out.messages() {
        let id = m.message_id().unwrap_or_default().to_string();
        let handle = m.receipt_handle().unwrap_or_default().to_string();
        let body = m.body().unwrap_or_default();
        sqs.masker_mut().add_handle(&handle);
        sqs.masker_mut().add_body(body);
        let label = ledger.place(&id, body);
        ledger.deliver(&id, label.as_deref());
        let md5_ok = m.md5_of_body().map(|md5| md5 == md5_hex(body));
        if md5_ok == Some(false) {
            integrity.push(format!(
                "{}: MD5OfBody does not match the body received",
                label.as_deref().unwrap_or(&id)
            ));
        }
        // SQS returns a body byte for byte: one that differs from what was sent (a carriage
        // return or an entity an encoder rewrote) fails, whatever its MD5 says.
        let body_digest = sha256_hex(body);
        if let Some(sent) = label.as_ref().and_then(|l| ledger.sent(l))
            && sent.message_id.as_deref() == Some(id.as_str())
            && sent.body_digest.as_ref().is_some_and(|d| *d != body_digest)
        {
            integrity.push(format!(
                "{}: the body received is not the body sent",
                label.as_deref().unwrap_or(&id)
            ));
        }
        let attributes: BTreeMap<String, String> = m
            .attributes()
            .map(|a| {
                a.iter()
                    .map(|(k, v)| (k.as_str().to_string(), v.clone()))
                    .collect()
            })
            .unwrap_or_default();
        if let Some(sender) = attributes.get("SenderId") {
            // Who sent it: never in a finding, even quoted by a server's message.
            sqs.masker_mut().add_principal_id(sender);
        }
        let bk = business_key(body);
        evidence.push(MessageEvidence {
            message_id: id.clone(),
            message: label.clone(),
            business_key: bk,
            handle_digest: Some(sha256_hex(&handle)),
            body_digest: Some(body_digest.clone()),
            receive_count: attributes
                .get("ApproximateReceiveCount")
                .and_then(|c| c.parse().ok()),
            sequence_number: attributes.get("SequenceNumber").cloned(),
            md5_ok,
        });
        receipts.push(Receipt {
            handle,
            message_id: id,
            label: label.clone(),
        });
        received.push(ReceivedMsg { label, attributes });
    }
    if let Some(a) = attempt {
        ledger.keep_receipts(a, receipts);
    }
    rec.last_row().messages = evidence;
    (rec, Some(received), integrity)
}

/// The bounded observation: polls until the window ends, the budget runs out, every
/// tracked message was seen, a receive is refused, or the case is stopped. Receives without
/// a definite answer do not end it (a later sighting still proves a redelivery); they are
/// counted, and make silence inconclusive. The window's facts are kept in `window` (the
/// case's record) as they are gathered, so a case cut in the middle still hands its partial
/// evidence to the judge.
pub(super) async fn observe(
    sqs: &mut Caller,
    queues: &QueueTable,
    ledger: &mut Ledger,
    window: &mut Option<WindowFacts>,
    step: &Step,
    o: &Observe,
) -> Result<Check, String> {
    let url = queues.url(&o.queue.value)?;
    let labels: Vec<String> = if o.messages.is_empty() {
        ledger.default_tracked()
    } else {
        o.messages.iter().map(|m| m.value.clone()).collect()
    };
    let tracked = labels.iter().map(|l| ledger.tracked(l)).collect();
    let w = window.insert(WindowFacts {
        step: step.index,
        line: step.pos.line,
        planned_ms: o.window.as_millis() as u64,
        elapsed_ms: 0,
        receives_used: 0,
        receive_budget: o.max_receives,
        end: None,
        unknown_receives: 0,
        faulted_receives: 0,
        short_polls: 0,
        untracked_sightings: 0,
        tracked,
        integrity: Vec::new(),
        expects_outcome: step.expect.outcome.is_some(),
    });
    let start = Instant::now();
    let closes = start + o.window;
    let end = loop {
        let stop = sqs.stops().requested();
        w.elapsed_ms = start.elapsed().as_millis() as u64;
        if !w.tracked.is_empty() && w.tracked.iter().all(|m| m.sightings > 0) {
            break WindowEnd::AllSeen;
        }
        if let Some(stop) = stop {
            break WindowEnd::Cut(CutReason::Stopped(stop));
        }
        let now = Instant::now();
        if now >= closes {
            break WindowEnd::Completed;
        }
        if w.receives_used >= o.max_receives {
            break WindowEnd::Cut(CutReason::BudgetExhausted {
                used: w.receives_used,
            });
        }
        deny::lift(sqs, queues, false).await;
        let remaining = closes - now;
        // WaitTimeSeconds is whole seconds. The window's tail long-polls too (its last
        // partial second rounded up, so the watch may run past the window by less than a
        // second): a short poll samples a subset of servers and may miss a message, so
        // silence over one proves nothing. Only `wait: 0s` short-polls, and is counted.
        let wait_secs = o.wait.as_secs().min(remaining.as_secs_f64().ceil() as u64);
        let meta = sqs.meta(
            queues,
            Phase::Observe,
            Some(step),
            "ReceiveMessage",
            None,
            Some(&o.queue.value),
        );
        let poll_started = Instant::now();
        let unknown_before_poll = ledger.unknown_receives();
        let faulted_before_poll = sqs.faulted_receives();
        let (mut rec, received, integrity) = receive_call(
            sqs,
            ledger,
            meta,
            &url,
            ReceiveParams {
                max: Some(10),
                wait: Some(Duration::from_secs(wait_secs)),
                visibility: o.visibility_timeout,
                attribute_names: vec!["All".to_string()],
                message_attribute_names: None,
                request_attempt_id: None,
                lease: queues.lease_for(&o.queue.value, o.visibility_timeout),
            },
            None,
        )
        .await;
        let error = rec.error.clone();
        let handles: Vec<(String, String)> = rec
            .output
            .as_ref()
            .map(|out| {
                out.messages()
                    .iter()
                    .map(|m| {
                        (
                            m.message_id().unwrap_or_default().to_string(),
                            m.receipt_handle().unwrap_or_default().to_string(),
                        )
                    })
                    .collect()
            })
            .unwrap_or_default();
        sqs.emit_rows(&mut rec);
        let unknown_now = ledger.unknown_receives();
        let faulted_now = sqs.faulted_receives();
        w.receives_used += 1;
        if wait_secs == 0 {
            w.short_polls += 1;
        }
        w.unknown_receives += unknown_now - unknown_before_poll;
        w.faulted_receives += faulted_now - faulted_before_poll;
        w.integrity.extend(integrity);
        if let Some(err) = &error
            && err.kind == FailureKind::Response
        {
            // A definite refusal of a receive: the window cannot go on meaningfully.
            break WindowEnd::Cut(CutReason::ReceiveFailed(err.describe()));
        }
        let was_empty = received.as_ref().is_none_or(|r| r.is_empty());
        for m in received.unwrap_or_default() {
            if m.label.is_none() {
                w.untracked_sightings += 1;
            }
            if let Some(t) = w
                .tracked
                .iter_mut()
                .find(|t| Some(&t.label) == m.label.as_ref())
            {
                if t.sightings == 0 {
                    t.unknown_receives_before = unknown_now;
                    t.faulted_receives_before = faulted_now;
                }
                t.sightings += 1;
            }
        }
        if o.delete_seen {
            for (id, handle) in handles {
                let meta = sqs.meta(
                    queues,
                    Phase::Observe,
                    Some(step),
                    "DeleteMessage",
                    None,
                    Some(&o.queue.value),
                );
                observe_delete(sqs, ledger, meta, &url, &id, &handle).await;
            }
        }
        let came_back_early =
            poll_started.elapsed() + Duration::from_millis(100) < Duration::from_secs(wait_secs);
        if wait_secs == 0 || error.is_some() || (came_back_early && was_empty) {
            // A short poll returns at once, and so do a target that ignores
            // WaitTimeSeconds and a receive that got no answer: pace the polls instead of
            // spending the receive budget on an empty queue in a few milliseconds.
            let pause = remaining.min(Duration::from_millis(200));
            tokio::select! {
                _ = tokio::time::sleep(pause) => {}
                _ = sqs.stops().until_requested() => {}
            }
        }
    };
    let unknown = ledger.unknown_receives();
    let faulted = sqs.faulted_receives();
    w.elapsed_ms = start.elapsed().as_millis() as u64;
    w.end = Some(end);
    for t in w.tracked.iter_mut() {
        t.ambiguous_copies = ledger.ambiguous_copies(&t.label);
        if t.sightings == 0 {
            t.unknown_receives_before = unknown;
            t.faulted_receives_before = faulted;
        }
    }
    Ok(check_window(w, step.expect.outcome.as_ref()))
}

/// An observation's delete of a message it saw (`delete_seen`), made with `meta`; its rows
/// name the message the ledger knows by its id.
async fn observe_delete(
    sqs: &mut Caller,
    ledger: &Ledger,
    meta: CallMeta,
    url: &str,
    id: &str,
    handle: &str,
) {
    let client = sqs.client();
    let mut rec = call!(
        sqs,
        meta,
        client
            .delete_message()
            .queue_url(url)
            .receipt_handle(handle)
    )
    .await;
    let message = ledger.label_of(id);
    for row in &mut rec.rows {
        row.handle_digest = Some(sha256_hex(handle));
        row.message_id = Some(id.to_string());
        row.message = message.clone();
    }
    // An acknowledgement like a step's (the case's acknowledgements are read from every
    // delete row): the case's own fault may have made its answer.
    sqs.count_faulted_acks(rec.error.as_ref(), 1);
    sqs.emit_rows(&mut rec);
}

/// Receive parameters shared by receive steps and observation polls.
struct ReceiveParams {
    max: Option<i32>,
    wait: Option<Duration>,
    visibility: Option<Duration>,
    attribute_names: Vec<String>,
    message_attribute_names: Option<Vec<String>>,
    request_attempt_id: Option<String>,
    /// How long the returned messages are leased for (recorded on the row).
    lease: Duration,
}
