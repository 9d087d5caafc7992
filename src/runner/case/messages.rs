//! Steps that put messages on a queue (`send`, `send-batch`), and what the case remembers
//! about each message it sent (its MessageId, its business key) in its ledger.

use super::acks::failed_entry;
use super::calls::Caller;
use super::ledger::Ledger;
use super::queue_table::QueueTable;
use aws_sdk_sqs::types::{MessageAttributeValue, SendMessageBatchRequestEntry};
use aws_smithy_types::Blob;
use base64::Engine;
use md5::{Digest, Md5};
use sqsprobe_core::classify::{BatchOutcome, CallError, Check, FailureKind, Observed};
use sqsprobe_core::evidence::format::{Completion, EntryEvidence, MessageEvidence, Phase};
use sqsprobe_core::evidence::{business_key, sha256_hex};
use sqsprobe_core::suite::model::{BatchSend, Body, Send as SendStep, Spanned, Step};
use std::collections::HashMap;

/// The `send` step: one SendMessage, the message noted in the ledger as sent (or not), and
/// the MD5 the target answered checked against the body.
pub(super) async fn send(
    sqs: &mut Caller,
    queues: &QueueTable,
    ledger: &mut Ledger,
    step: &Step,
    send: &SendStep,
) -> Result<Check, String> {
    let client = sqs.client();
    let url = queues.url(&send.queue.value)?;
    let body = body_text(&send.body);
    sqs.masker_mut().add_body(&body);
    let meta = sqs.meta(
        queues,
        Phase::Step,
        Some(step),
        "SendMessage",
        None,
        Some(&send.queue.value),
    );
    let attrs = message_attributes(send)?;
    let mut rec = call!(
        sqs,
        meta,
        client
            .send_message()
            .queue_url(&url)
            .message_body(&body)
            .set_delay_seconds(send.delay.map(sqsprobe_facts::sqs::limits::wire_seconds))
            .set_message_group_id(send.group.clone())
            .set_message_deduplication_id(send.dedup_id.clone())
            .set_message_attributes(attrs)
    )
    .await;
    let mut integrity = Vec::new();
    if let Some(err) = &rec.error {
        ledger.track_unsent(
            &send.message,
            err,
            step.expect.expects_error(),
            business_key(&body),
            lost_before(&rec.rows),
        );
    }
    if let Some(out) = rec.output.take() {
        let id = out.message_id().unwrap_or_default().to_string();
        let bk = business_key(&body);
        let lost = lost_before(&rec.rows);
        ledger.track_sent(&send.message, &id, bk.clone(), &body, lost);
        if let Some(md5) = out.md5_of_message_body()
            && md5 != md5_hex(&body)
        {
            integrity.push(
                "MD5OfMessageBody in the SendMessage response does not match the body sent"
                    .to_string(),
            );
        }
        let row = rec.last_row();
        row.message_id = Some(id.clone());
        row.message = Some(send.message.clone());
        row.business_key = bk.clone();
        row.messages.push(MessageEvidence {
            message_id: id,
            message: Some(send.message.clone()),
            business_key: bk,
            handle_digest: None,
            body_digest: Some(sha256_hex(&body)),
            receive_count: None,
            sequence_number: out.sequence_number().map(str::to_string),
            md5_ok: out.md5_of_message_body().map(|m| m == md5_hex(&body)),
        });
    }
    Ok(sqs.check(
        &step.expect,
        &mut rec,
        Observed {
            integrity,
            ..Observed::default()
        },
    ))
}

/// The `send-batch` step: one SendMessageBatch, each entry noted in the ledger as sent (or
/// not) and its MD5 checked.
pub(super) async fn send_batch(
    sqs: &mut Caller,
    queues: &QueueTable,
    ledger: &mut Ledger,
    step: &Step,
    queue: &Spanned<String>,
    entries: &[BatchSend],
) -> Result<Check, String> {
    let client = sqs.client();
    let url = queues.url(&queue.value)?;
    let mut request_entries = Vec::new();
    let mut bodies = HashMap::new();
    for e in entries {
        let body = body_text(&e.send.body);
        sqs.masker_mut().add_body(&body);
        let entry = SendMessageBatchRequestEntry::builder()
            .id(&e.id)
            .message_body(&body)
            .set_delay_seconds(e.send.delay.map(sqsprobe_facts::sqs::limits::wire_seconds))
            .set_message_group_id(e.send.group.clone())
            .set_message_deduplication_id(e.send.dedup_id.clone())
            .set_message_attributes(message_attributes(&e.send)?)
            .build()
            .map_err(|err| format!("could not build batch entry {}: {err}", e.id))?;
        bodies.insert(e.id.clone(), (e.send.message.clone(), body));
        request_entries.push(entry);
    }
    let meta = sqs.meta(
        queues,
        Phase::Step,
        Some(step),
        "SendMessageBatch",
        None,
        Some(&queue.value),
    );
    let mut rec = call!(
        sqs,
        meta,
        client
            .send_message_batch()
            .queue_url(&url)
            .set_entries(Some(request_entries))
    )
    .await;
    let mut batch = None;
    let mut integrity = Vec::new();
    if let Some(err) = rec.error.clone() {
        // The whole batch was refused or unanswered: so was every entry of it.
        let lost = lost_before(&rec.rows);
        for (label, body) in bodies.values() {
            let expected = step.expect.expects_error();
            ledger.track_unsent(label, &err, expected, business_key(body), lost);
        }
    }
    // Like a single send's: every entry the retry took may have a copy from each attempt
    // before it that got no answer.
    let lost = lost_before(&rec.rows);
    if let Some(out) = rec.output.take() {
        let mut outcome = BatchOutcome::default();
        let mut entries_ev = Vec::new();
        for ok in out.successful() {
            let (label, body) = bodies.get(ok.id()).cloned().unwrap_or_default();
            let bk = business_key(&body);
            if !label.is_empty() {
                ledger.track_sent(&label, ok.message_id(), bk.clone(), &body, lost);
            }
            if ok.md5_of_message_body() != md5_hex(&body) {
                integrity.push(format!(
                    "entry {}: MD5OfMessageBody does not match the body sent",
                    ok.id()
                ));
            }
            outcome.successful.push(ok.id().to_string());
            entries_ev.push(EntryEvidence {
                id: ok.id().to_string(),
                message: Some(label).filter(|l| !l.is_empty()),
                message_id: Some(ok.message_id().to_string()),
                handle_digest: None,
                result: "successful".into(),
                code: None,
                sender_fault: None,
                error_message: None,
                lease_ms: None,
            });
        }
        for f in out.failed() {
            if let Some((label, _)) = bodies.get(f.id()) {
                let refusal = CallError {
                    kind: FailureKind::Response,
                    code: Some(f.code().to_string()),
                    error_type: None,
                    status: None,
                    sender_fault: Some(f.sender_fault()),
                    message: f.message().map(|m| sqs.masker().mask(m)),
                    injected: None,
                    denied: false,
                };
                ledger.track_unsent(label, &refusal, step.expect.failed.is_some(), None, 0);
            }
            outcome
                .failed
                .push((f.id().to_string(), f.code().to_string(), f.sender_fault()));
            entries_ev.push(failed_entry(
                sqs.masker(),
                f,
                bodies.get(f.id()).map(|b| b.0.clone()),
            ));
        }
        rec.last_row().entries = entries_ev;
        batch = Some(outcome);
    }
    Ok(sqs.check(
        &step.expect,
        &mut rec,
        Observed {
            batch,
            integrity,
            ..Observed::default()
        },
    ))
}

/// The attempts of a send call before its last that got no definite answer (`info`): each
/// may have put a copy on the queue under a MessageId nobody answered.
fn lost_before(rows: &[sqsprobe_core::evidence::format::Call]) -> u32 {
    let before = rows.len().saturating_sub(1);
    rows[..before]
        .iter()
        .filter(|r| r.completion == Completion::Info)
        .count() as u32
}

/// The body a `body:` sends: its text, or that many `x`s.
pub(super) fn body_text(body: &Body) -> String {
    match body {
        Body::Text(t) => t.clone(),
        Body::Size(n) => "x".repeat(*n),
    }
}

/// The message attributes a send writes, as the SDK takes them (a `Binary` value decoded
/// from its base64).
fn message_attributes(
    send: &SendStep,
) -> Result<Option<HashMap<String, MessageAttributeValue>>, String> {
    if send.attributes.is_empty() {
        return Ok(None);
    }
    let mut map = HashMap::new();
    for a in &send.attributes {
        let mut b = MessageAttributeValue::builder().data_type(&a.data_type);
        if a.data_type.starts_with("Binary") {
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(&a.value)
                .map_err(|e| format!("attribute {}: Binary value is not base64: {e}", a.name))?;
            b = b.binary_value(Blob::new(bytes));
        } else {
            b = b.string_value(&a.value);
        }
        let v = b
            .build()
            .map_err(|e| format!("attribute {}: {e}", a.name))?;
        map.insert(a.name.clone(), v);
    }
    Ok(Some(map))
}

/// MD5 hex of a body, as SQS computes MD5OfMessageBody (the SDK does not check it).
pub(super) fn md5_hex(text: &str) -> String {
    hex::encode(Md5::digest(text.as_bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(completion: Completion) -> sqsprobe_core::evidence::format::Call {
        sqsprobe_core::evidence::format::Call {
            completion,
            ..sqsprobe_core::evidence::fixtures::call(
                "c",
                sqsprobe_core::evidence::format::Phase::Step,
                "SendMessage",
                0,
                1,
            )
        }
    }

    /// A send (a batch's included) retried after an attempt without an answer may have been
    /// taken by that attempt too; the final attempt's own doubt is the state's to say.
    #[test]
    fn the_attempts_before_the_last_without_an_answer_may_each_have_left_a_copy() {
        use Completion::*;
        assert_eq!(lost_before(&[row(Ok)]), 0);
        assert_eq!(lost_before(&[row(Info), row(Ok)]), 1);
        assert_eq!(lost_before(&[row(Info), row(Fail), row(Info), row(Ok)]), 2);
        assert_eq!(lost_before(&[row(Info)]), 0);
        assert_eq!(lost_before(&[]), 0);
    }

    #[test]
    fn generated_bodies_have_the_exact_size() {
        assert_eq!(body_text(&Body::Size(1024)).len(), 1024);
        assert_eq!(md5_hex(""), "d41d8cd98f00b204e9800998ecf8427e");
    }
}
