//! Operations on received messages by receipt handle: DeleteMessage, ChangeMessageVisibility
//! and their batch forms.
//!
//! Handle rules, as AWS was recorded (facts §2):
//! - a handle this emulator never issued → `ReceiptHandleIsInvalid` (R5);
//! - the message is gone (deleted, purged, expired): delete → 200 (R6, R8); change visibility →
//!   `InvalidParameterValue` "Message does not exist or is not available …" (V4);
//! - standard queue, any handle ever issued for the message works, including after its lease
//!   expired (R3, V3) and while a newer receive holds the message (V2b). A delete with an older
//!   handle therefore deletes the message: AWS documents "might not be deleted", and this
//!   emulator picks the deterministic branch that the V2b recording shows for visibility changes;
//! - FIFO queue: only the current, unexpired lease's handle works, otherwise
//!   `InvalidParameterValue` "The receipt handle has expired." (R4, R4b).
//!
//! Opt-in chaos (`EmulatorConfig::chaos`, `docs/chaos.md`) can make a standard-queue delete
//! answer 200 without deleting: the stale-handle branch above, or an at-least-once redelivery.

use serde_json::{Value, json};

use crate::model::attributes::MAX_VISIBILITY_TIMEOUT;
use crate::model::message::{Id, MessageState};
use crate::model::queue::Queue;
use crate::model::receipt;
use crate::model::store::Emulator;
use crate::ops::batch::{self, Batch};
use crate::ops::context::RequestContext;
use crate::support::audit::{Ack, AckOp};
use crate::support::chaos::On;
use crate::support::errors::{SqsError, SqsResult};
use crate::support::input::Input;

/// The message and receive `raw` names, if it is a handle of the queue whose handles
/// `handles` writes.
fn decode(handles: &receipt::Encoder, raw: &str) -> SqsResult<Handle> {
    handles
        .read(raw)
        .map(|(id, nonce)| Handle { id, nonce })
        .ok_or_else(|| SqsError::receipt_handle_is_invalid(raw))
}

/// A decoded handle of the queue an operation works on.
struct Handle {
    id: Id,
    nonce: u64,
}

/// Tells an audit, if one watches, of an acknowledgement before it is answered, at `now`: the
/// time the queue was ticked to and the acknowledgement judged at (in a batch, every entry's).
fn observe(emu: &Emulator, (name, queue): (&str, &Queue), raw: &str, op: AckOp, now: u64) {
    if let Some(audit) = &emu.config.audit {
        let handle = decode(&queue.handles, raw)
            .ok()
            .map(|h| (h.id.seq, h.nonce));
        audit.acknowledged(Ack {
            queue: name.to_owned(),
            op,
            handle,
            handle_digest: sqsprobe_facts::digest::sha256_hex(raw),
            at_ms: now,
        });
    }
}

/// Deletes by handle `raw` from the locked `queue` (key `name`), ticked to `now` first: each
/// entry of a batch sees the queue as the entry before it left it.
fn delete_one(
    emu: &Emulator,
    (queue, now): (&mut Queue, u64),
    name: &str,
    raw: &str,
) -> SqsResult<()> {
    queue.tick(now);
    observe(emu, (name, queue), raw, AckOp::Delete, now);
    let handle = decode(&queue.handles, raw)?;
    let Some(message) = queue.get(handle.id) else {
        return Ok(());
    };
    let held_by_other =
        matches!(message.state, MessageState::InFlight { nonce, .. } if nonce != handle.nonce);
    let on = On {
        key: &queue.arn,
        tags: &queue.tags,
        fifo: queue.is_fifo(),
    };
    if queue.is_fifo() {
        let current =
            matches!(message.state, MessageState::InFlight { nonce, .. } if nonce == handle.nonce);
        if !current {
            return Err(SqsError::receipt_handle_expired(raw));
        }
    } else if held_by_other {
        // Chaos (opt-in): a newer receive holds the message and AWS says a delete with an
        // older handle "might not" delete it; answer 200 and leave the newer lease alone.
        if emu.chaos.stale_delete_keeps(on) {
            return Ok(());
        }
    } else if emu
        .chaos
        .redeliver_after_delete(on, (handle.id.seq, handle.id.slot), &|(seq, slot)| {
            queue.get(Id { slot, seq }).is_some()
        })
    {
        // Chaos (opt-in): at-least-once delivery; the delete is acknowledged but the message
        // stays as it is (leased or visible) and is delivered again when its lease ends.
        return Ok(());
    }
    queue.remove(handle.id);
    // Deleting a FIFO message may unblock the rest of its group; deleting a standard one
    // makes nothing visible, so no long poll has anything to wake for.
    if queue.is_fifo() {
        queue.wakeup.wake();
    }
    Ok(())
}

fn change_one(
    emu: &Emulator,
    (queue, now): (&mut Queue, u64),
    name: &str,
    raw: &str,
    timeout: Option<i64>,
) -> SqsResult<()> {
    queue.tick(now);
    let Some(timeout) = timeout else {
        return Err(SqsError::missing_parameter("VisibilityTimeout"));
    };
    if !(0..=i64::from(MAX_VISIBILITY_TIMEOUT)).contains(&timeout) {
        return Err(SqsError::invalid_value(
            timeout,
            "VisibilityTimeout",
            "Must be between 0 and 43200, if provided.",
        ));
    }
    observe(
        emu,
        (name, queue),
        raw,
        AckOp::ChangeVisibility { timeout_s: timeout },
        now,
    );
    let handle = decode(&queue.handles, raw)?;
    let gone = || {
        SqsError::invalid_value(
            raw,
            "ReceiptHandle",
            "Message does not exist or is not available for visibility timeout change.",
        )
    };
    let Some(message) = queue.get(handle.id) else {
        return Err(gone());
    };
    let timeout_ms = timeout as u64 * 1000;
    let nonce = match message.state {
        MessageState::Delayed { .. } => return Err(gone()),
        MessageState::InFlight { nonce, .. } => {
            let received_at = message.state.received_at().unwrap_or(now);
            if queue.is_fifo() && nonce != handle.nonce {
                return Err(SqsError::receipt_handle_expired(raw));
            }
            // The 12-hour cap counts from the receive (API_ChangeMessageVisibility).
            if now.saturating_sub(received_at) + timeout_ms
                > u64::from(MAX_VISIBILITY_TIMEOUT) * 1000
            {
                return Err(SqsError::invalid_value(
                    timeout,
                    "VisibilityTimeout",
                    "Total VisibilityTimeout for the message is beyond the limit [43200 seconds].",
                ));
            }
            nonce
        }
        MessageState::Ready { .. } => {
            if queue.is_fifo() {
                return Err(SqsError::receipt_handle_expired(raw));
            }
            // Standard queue, lease already over: AWS answers 200 (V3); the change applies.
            handle.nonce
        }
    };
    queue.set_visibility(handle.id, nonce, now + timeout_ms, now);
    Ok(())
}

pub(crate) fn delete_message(
    emu: &Emulator,
    input: Input<'_>,
    ctx: &RequestContext,
) -> SqsResult<Value> {
    let key = ctx.queue_key(emu, &input)?;
    let handle = input.required_string("ReceiptHandle")?;
    // The queue is looked up before the handle is read: a missing queue is NonExistentQueue
    // whatever the handle (moto `test_delete_message_from_unknown_url`).
    emu.with_queue(&key, |_, queue, now| {
        delete_one(emu, (queue, now), &key, handle)
    })?;
    Ok(json!({}))
}

pub(crate) fn change_message_visibility(
    emu: &Emulator,
    input: Input<'_>,
    ctx: &RequestContext,
) -> SqsResult<Value> {
    let key = ctx.queue_key(emu, &input)?;
    let handle = input.required_string("ReceiptHandle")?;
    let timeout = input.integer("VisibilityTimeout")?;
    emu.with_queue(&key, |_, queue, now| {
        change_one(emu, (queue, now), &key, handle, timeout)
    })?;
    Ok(json!({}))
}

pub(crate) fn delete_message_batch(
    emu: &Emulator,
    input: Input<'_>,
    ctx: &RequestContext,
) -> SqsResult<Batch> {
    let key = ctx.queue_key(emu, &input)?;
    let entries = batch::entries(&input, "DeleteMessageBatch")?;
    let state = emu.read();
    // One request, one instant: every entry at the time the queue was ticked to.
    let (mut queue, now) = emu.lock_queue(&state, &key)?;
    let mut answer = Batch::with_capacity(entries.len());
    for (id, entry) in entries {
        let outcome = entry
            .required_string("ReceiptHandle")
            .and_then(|handle| delete_one(emu, (&mut queue, now), &key, handle));
        answer.record(id, outcome.map(|()| None));
    }
    Ok(answer)
}

pub(crate) fn change_message_visibility_batch(
    emu: &Emulator,
    input: Input<'_>,
    ctx: &RequestContext,
) -> SqsResult<Batch> {
    let key = ctx.queue_key(emu, &input)?;
    let entries = batch::entries(&input, "ChangeMessageVisibilityBatch")?;
    let state = emu.read();
    // One request, one instant: every entry at the time the queue was ticked to.
    let (mut queue, now) = emu.lock_queue(&state, &key)?;
    let mut answer = Batch::with_capacity(entries.len());
    for (id, entry) in entries {
        let outcome = entry.required_string("ReceiptHandle").and_then(|handle| {
            let timeout = entry.integer("VisibilityTimeout")?;
            change_one(emu, (&mut queue, now), &key, handle, timeout)
        });
        answer.record(id, outcome.map(|()| None));
    }
    Ok(answer)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use crate::support::chaos::Chaos;
    use crate::test_support::{
        advance, attribute, call, create, create_fifo, emulator, emulator_with_chaos, receive, send,
    };

    #[tokio::test(start_paused = true)]
    async fn change_visibility_zero_releases_and_is_not_remembered() {
        let emu = emulator();
        let url = create(&emu, "q", json!({})).await;
        send(&emu, &url, "a").await;
        let got = receive(&emu, &url, 1, json!({})).await;
        let handle = got[0]["ReceiptHandle"].as_str().unwrap();
        call(
            &emu,
            "ChangeMessageVisibility",
            json!({"QueueUrl": url, "ReceiptHandle": handle, "VisibilityTimeout": 0}),
        )
        .await
        .unwrap();
        assert_eq!(receive(&emu, &url, 1, json!({})).await.len(), 1);
        assert!(receive(&emu, &url, 1, json!({})).await.is_empty());
    }

    #[tokio::test(start_paused = true)]
    async fn twelve_hour_cap_counts_from_receive() {
        let emu = emulator();
        let url = create(&emu, "q", json!({})).await;
        send(&emu, &url, "a").await;
        let got = receive(&emu, &url, 1, json!({"VisibilityTimeout": 43_200})).await;
        let handle = got[0]["ReceiptHandle"].as_str().unwrap();
        advance(100).await;
        let ok = json!({"QueueUrl": url, "ReceiptHandle": handle, "VisibilityTimeout": 43_100});
        call(&emu, "ChangeMessageVisibility", ok).await.unwrap();
        let over = json!({"QueueUrl": url, "ReceiptHandle": handle, "VisibilityTimeout": 43_101});
        let err = call(&emu, "ChangeMessageVisibility", over)
            .await
            .unwrap_err();
        assert_eq!(err.code(), "InvalidParameterValue");
        assert!(err.message.contains(
            "Total VisibilityTimeout for the message is beyond the limit [43200 seconds]."
        ));
    }

    #[tokio::test(start_paused = true)]
    async fn handles_after_delete_and_garbage() {
        let emu = emulator();
        let url = create(&emu, "q", json!({})).await;
        send(&emu, &url, "a").await;
        let got = receive(&emu, &url, 1, json!({})).await;
        let handle = got[0]["ReceiptHandle"].as_str().unwrap();
        for _ in 0..3 {
            call(
                &emu,
                "DeleteMessage",
                json!({"QueueUrl": url, "ReceiptHandle": handle}),
            )
            .await
            .unwrap();
        }
        let err = call(
            &emu,
            "ChangeMessageVisibility",
            json!({"QueueUrl": url, "ReceiptHandle": handle, "VisibilityTimeout": 42}),
        )
        .await
        .unwrap_err();
        assert_eq!(
            err.message,
            format!(
                "Value {handle} for parameter ReceiptHandle is invalid. Reason: Message does not exist or is not available for visibility timeout change."
            )
        );
        let err = call(
            &emu,
            "DeleteMessage",
            json!({"QueueUrl": url, "ReceiptHandle": "garbage"}),
        )
        .await
        .unwrap_err();
        assert_eq!(err.code(), "ReceiptHandleIsInvalid");
        assert_eq!(
            err.message,
            "The input receipt handle \"garbage\" is not a valid receipt handle."
        );
    }

    #[tokio::test(start_paused = true)]
    async fn standard_expired_handle_still_deletes_and_changes() {
        let emu = emulator();
        let url = create(&emu, "q", json!({})).await;
        send(&emu, &url, "a").await;
        let got = receive(&emu, &url, 1, json!({"VisibilityTimeout": 1})).await;
        let handle = got[0]["ReceiptHandle"].as_str().unwrap();
        advance(2).await;
        call(
            &emu,
            "ChangeMessageVisibility",
            json!({"QueueUrl": url, "ReceiptHandle": handle, "VisibilityTimeout": 2}),
        )
        .await
        .unwrap();
        call(
            &emu,
            "DeleteMessage",
            json!({"QueueUrl": url, "ReceiptHandle": handle}),
        )
        .await
        .unwrap();
        assert_eq!(
            attribute(&emu, &url, "ApproximateNumberOfMessages").await,
            "0"
        );
        assert_eq!(
            attribute(&emu, &url, "ApproximateNumberOfMessagesNotVisible").await,
            "0"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn fifo_extended_lease_handle_deletes() {
        let emu = emulator();
        let url = create_fifo(&emu).await;
        call(
            &emu,
            "SendMessage",
            json!({"QueueUrl": url, "MessageBody": "a", "MessageGroupId": "g"}),
        )
        .await
        .unwrap();
        let got = receive(&emu, &url, 1, json!({"VisibilityTimeout": 1})).await;
        let handle = got[0]["ReceiptHandle"].as_str().unwrap();
        call(
            &emu,
            "ChangeMessageVisibility",
            json!({"QueueUrl": url, "ReceiptHandle": handle, "VisibilityTimeout": 5}),
        )
        .await
        .unwrap();
        advance(2).await;
        call(
            &emu,
            "DeleteMessage",
            json!({"QueueUrl": url, "ReceiptHandle": handle}),
        )
        .await
        .unwrap();
        assert!(receive(&emu, &url, 1, json!({})).await.is_empty());
    }

    #[tokio::test(start_paused = true)]
    async fn batch_entries_fail_individually() {
        let emu = emulator();
        let url = create(&emu, "q", json!({})).await;
        send(&emu, &url, "a").await;
        let got = receive(&emu, &url, 1, json!({})).await;
        let handle = got[0]["ReceiptHandle"].as_str().unwrap();
        let out = call(
            &emu,
            "DeleteMessageBatch",
            json!({"QueueUrl": url, "Entries": [{"Id": "ok", "ReceiptHandle": handle}, {"Id": "bad", "ReceiptHandle": "x"}]}),
        )
        .await
        .unwrap();
        assert_eq!(out["Successful"], json!([{"Id": "ok"}]));
        assert_eq!(out["Failed"][0]["Code"], "ReceiptHandleIsInvalid");
        assert_eq!(out["Failed"][0]["SenderFault"], true);
    }

    // Opt-in chaos on DeleteMessage (support::chaos rolls the dice; this module applies them).

    async fn delete(emu: &std::sync::Arc<crate::model::store::Emulator>, url: &str, handle: &str) {
        call(
            emu,
            "DeleteMessage",
            json!({"QueueUrl": url, "ReceiptHandle": handle}),
        )
        .await
        .unwrap();
    }

    /// The stale-handle playbook: A receives for 1 s, its lease lapses, B receives for 2 s,
    /// A deletes with its old handle. Returns how many messages a receive sees after B's lease.
    async fn stale_delete_playbook(chaos: Chaos) -> usize {
        let emu = emulator_with_chaos(chaos);
        let url = create(&emu, "q", json!({})).await;
        send(&emu, &url, "a").await;
        let a = receive(&emu, &url, 1, json!({"VisibilityTimeout": 1})).await;
        let stale = a[0]["ReceiptHandle"].as_str().unwrap().to_owned();
        advance(2).await;
        let b = receive(&emu, &url, 1, json!({"VisibilityTimeout": 2})).await;
        assert_eq!(b.len(), 1);
        delete(&emu, &url, &stale).await;
        // Still leased to B either way: nothing visible yet.
        assert!(receive(&emu, &url, 1, json!({})).await.is_empty());
        advance(3).await;
        receive(&emu, &url, 1, json!({})).await.len()
    }

    #[tokio::test(start_paused = true)]
    async fn stale_delete_keeps_message_until_newer_lease_lapses() {
        let keeps = Chaos {
            stale_delete_keeps: 1.0,
            ..Chaos::default()
        };
        assert_eq!(stale_delete_playbook(keeps).await, 1);
        assert_eq!(stale_delete_playbook(Chaos::default()).await, 0);
        // Only stale handles are affected: the other setting does not touch this playbook.
        let other = Chaos {
            seed: Some(99),
            ..Chaos::default()
        };
        assert_eq!(stale_delete_playbook(other).await, 0);
    }

    #[tokio::test(start_paused = true)]
    async fn stale_delete_keeps_does_not_apply_to_current_handle_or_fifo() {
        let emu = emulator_with_chaos(Chaos {
            stale_delete_keeps: 1.0,
            ..Chaos::default()
        });
        let url = create(&emu, "q", json!({})).await;
        send(&emu, &url, "a").await;
        let got = receive(&emu, &url, 1, json!({"VisibilityTimeout": 1})).await;
        delete(&emu, &url, got[0]["ReceiptHandle"].as_str().unwrap()).await;
        advance(2).await;
        assert!(receive(&emu, &url, 1, json!({})).await.is_empty());

        let fifo = create_fifo(&emu).await;
        call(
            &emu,
            "SendMessage",
            json!({"QueueUrl": fifo, "MessageBody": "a", "MessageGroupId": "g"}),
        )
        .await
        .unwrap();
        let a = receive(&emu, &fifo, 1, json!({"VisibilityTimeout": 1})).await;
        advance(2).await;
        assert_eq!(
            receive(&emu, &fifo, 1, json!({"VisibilityTimeout": 2}))
                .await
                .len(),
            1
        );
        let err = call(
            &emu,
            "DeleteMessage",
            json!({"QueueUrl": fifo, "ReceiptHandle": a[0]["ReceiptHandle"]}),
        )
        .await
        .unwrap_err();
        assert_eq!(err.code(), "InvalidParameterValue");
    }

    #[tokio::test(start_paused = true)]
    async fn redeliver_after_delete_brings_message_back_once() {
        let emu = emulator_with_chaos(Chaos {
            redeliver_after_delete: 1.0,
            ..Chaos::default()
        });
        let url = create(&emu, "q", json!({})).await;
        let id = send(&emu, &url, "a").await;
        let first = receive(&emu, &url, 1, json!({"VisibilityTimeout": 3})).await;
        delete(&emu, &url, first[0]["ReceiptHandle"].as_str().unwrap()).await;
        // Acknowledged, yet still leased: not visible before the lease ends.
        advance(2).await;
        assert!(receive(&emu, &url, 1, json!({})).await.is_empty());
        advance(2).await;
        let again = receive(&emu, &url, 1, json!({"VisibilityTimeout": 3})).await;
        assert_eq!(again.len(), 1);
        assert_eq!(again[0]["MessageId"], id.as_str());
        // Once per message: the second delete takes.
        delete(&emu, &url, again[0]["ReceiptHandle"].as_str().unwrap()).await;
        advance(5).await;
        assert!(receive(&emu, &url, 1, json!({})).await.is_empty());
        assert_eq!(
            attribute(&emu, &url, "ApproximateNumberOfMessagesNotVisible").await,
            "0"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn default_chaos_deletes_for_good() {
        let emu = emulator_with_chaos(Chaos::default());
        let url = create(&emu, "q", json!({})).await;
        send(&emu, &url, "a").await;
        let got = receive(&emu, &url, 1, json!({"VisibilityTimeout": 1})).await;
        delete(&emu, &url, got[0]["ReceiptHandle"].as_str().unwrap()).await;
        advance(3).await;
        assert!(receive(&emu, &url, 1, json!({})).await.is_empty());
        assert_eq!(
            attribute(&emu, &url, "ApproximateNumberOfMessages").await,
            "0"
        );
    }
}
