//! SendMessage and SendMessageBatch, including FIFO grouping and deduplication.

use std::borrow::Cow;
use std::sync::Arc;

use crate::model::message::{
    DedupId, Extra, Message, MessageAttributes, content_dedup_id, parse_attribute_value,
    parse_message_attributes, valid_body_chars,
};
use crate::model::queue::Queue;
use crate::model::store::{Emulator, State};
use crate::ops::answer::Sent;
use crate::ops::batch::{self, Batch};
use crate::ops::context::RequestContext;
use crate::support::errors::{SqsError, SqsResult};
use crate::support::input::Input;
use crate::support::{hex, md5};

/// Total payload of one batch (API_SendMessageBatch, 1 MiB since August 2025).
const MAX_BATCH_BYTES: usize = 1_048_576;

/// Whether a group or deduplication id is 1–128 printable ASCII characters without spaces
/// (API_SendMessage: "alphanumeric and punctuation characters").
fn valid_token(s: &str) -> bool {
    !s.is_empty() && s.len() <= 128 && s.bytes().all(|b| (33..=126).contains(&b))
}

fn invalid_token(value: &str, parameter: &str) -> SqsError {
    SqsError::invalid_value(
        value,
        parameter,
        &format!(
            "{parameter} can only include alphanumeric and punctuation characters. 1 to 128 in length."
        ),
    )
}

/// An entry's body as far as it can be read: empty when it is missing or not a string (the
/// send refuses such an entry; what is measured or digested of it before is never answered).
fn body_of<'a>(entry: &Input<'a>) -> &'a str {
    entry
        .string("MessageBody")
        .ok()
        .flatten()
        .unwrap_or_default()
}

/// Bytes counted against MaximumMessageSize: body plus every attribute's name, type and value.
fn entry_size(entry: &Input<'_>) -> usize {
    let body = body_of(entry).len();
    let attributes = entry
        .node("MessageAttributes")
        .and_then(|node| node.members())
        .map_or(0, |members| {
            members
                .iter()
                .map(|(name, v)| {
                    let s = |k: &str| v.get(k).and_then(|n| n.as_str()).map_or(0, str::len);
                    let binary = v
                        .get("BinaryValue")
                        .and_then(|n| n.as_str())
                        .map_or(0, |b| b.len() / 4 * 3);
                    name.len() + s("DataType") + s("StringValue") + binary
                })
                .sum()
        });
    body + attributes
}

/// What every entry of one send request shares: the store (read-locked), the request, and
/// the SenderId its credentials give every message it sends.
struct Sending<'a> {
    emu: &'a Emulator,
    state: &'a State,
    ctx: &'a RequestContext,
    in_batch: bool,
    sender: String,
}

/// What a send can work out of an entry before it takes its queue's lock: pure functions of
/// the entry, so working them out early changes no answer (`send_one` returns the parse's
/// error where it would have parsed).
struct Prepared {
    /// The MD5 of the body ([`body_of`]'s: of nothing, for an entry without one, which is
    /// refused before this is read).
    md5_of_body: [u8; 16],
    /// The message attributes, parsed with their digest; or why they are refused.
    attributes: SqsResult<Option<Arc<MessageAttributes>>>,
}

impl Prepared {
    /// One entry's, its body and its attributes digested one after the other: a SendMessage,
    /// which has two digests at most (fewer than the lanes take) and no vectors to fill.
    fn of(entry: &Input<'_>) -> Self {
        Self {
            md5_of_body: md5::digest(body_of(entry).as_bytes()),
            attributes: parse_message_attributes(entry.node("MessageAttributes"))
                .map(MessageAttributes::of),
        }
    }
}

/// [`Prepared`] for each of a batch's `entries`. Every digest the entries need, of the bodies and of
/// the attributes, is taken in one call, which digests several side by side
/// (`support/md5/lanes.rs`).
fn prepare(entries: &[(String, Input<'_>)]) -> Vec<Prepared> {
    let mut inputs: Vec<&[u8]> = Vec::with_capacity(2 * entries.len());
    inputs.extend(entries.iter().map(|(_, e)| body_of(e).as_bytes()));
    let mut prepared: Vec<Prepared> = Vec::with_capacity(entries.len());
    // The entries with attributes: which, their attributes and what their digest is of.
    let mut attributed = Vec::new();
    for (i, (_, entry)) in entries.iter().enumerate() {
        let attributes = match parse_message_attributes(entry.node("MessageAttributes")) {
            Ok(map) => {
                if let Some(encoded) = MessageAttributes::encoded(&map) {
                    attributed.push((i, map, encoded));
                }
                Ok(None)
            }
            Err(e) => Err(e),
        };
        prepared.push(Prepared {
            md5_of_body: [0; 16],
            attributes,
        });
    }
    // The bodies, then the attribute sets, in entry order.
    inputs.extend(attributed.iter().map(|(_, _, encoded)| encoded.as_slice()));
    let digests = md5::digest_each(&inputs);
    let (bodies, sets) = digests.split_at(entries.len());
    for (entry, &digest) in prepared.iter_mut().zip(bodies) {
        entry.md5_of_body = digest;
    }
    for ((i, map, _), &digest) in attributed.into_iter().zip(sets) {
        prepared[i].attributes = Ok(Some(MessageAttributes::with_digest(map, digest)));
    }
    prepared
}

/// Sends one message (a SendMessage or one batch entry) into a locked queue ticked to `now`.
fn send_one(
    sending: &Sending<'_>,
    (queue, now): (&mut Queue, u64),
    (entry, prepared): (&Input<'_>, Prepared),
) -> SqsResult<Sent> {
    let Sending {
        emu,
        state,
        ctx,
        in_batch,
        ref sender,
    } = *sending;
    let fifo = queue.is_fifo();
    let body = entry.required_string("MessageBody")?;
    let md5_of_body = prepared.md5_of_body;
    let delay = entry.integer("DelaySeconds")?;
    let delay_seconds = match delay {
        // FIFO queues take only the queue's delay; 0 is tolerated (SNAP-2025 S8, S8b).
        Some(d) if fifo && d != 0 => {
            return Err(SqsError::invalid_value(
                d,
                "DelaySeconds",
                "The request include parameter that is not valid for this queue type.",
            ));
        }
        Some(d) if !fifo => {
            if !sqsprobe_facts::sqs::limits::DELAY_SECONDS.contains(d) {
                return Err(SqsError::invalid_value(
                    d,
                    "DelaySeconds",
                    "DelaySeconds must be >= 0 and <= 900.",
                ));
            }
            d as u64
        }
        _ => u64::from(queue.settings.delay_seconds),
    };
    let attributes = prepared.attributes?;
    let size = body.len()
        + attributes
            .iter()
            .flat_map(|a| a.map())
            .map(|(n, v)| v.size(n))
            .sum::<usize>();
    let max = queue.settings.maximum_message_size as usize;
    if size > max {
        let lead = if in_batch {
            "One or more parameters cannot be validated."
        } else {
            "One or more parameters are invalid."
        };
        return Err(SqsError::invalid_parameter_value(format!(
            "{lead} Reason: Message must be shorter than {max} bytes."
        )));
    }
    if !valid_body_chars(body) {
        return Err(SqsError::invalid_message_contents());
    }
    let mut trace_header = ctx.trace_header.clone();
    if let Some(system) = entry
        .node("MessageSystemAttributes")
        .and_then(|node| node.members())
    {
        for (attr, raw) in system {
            if attr != "AWSTraceHeader" {
                return Err(SqsError::invalid_parameter_value(format!(
                    "Message system attribute name '{attr}' is invalid."
                )));
            }
            let value = parse_attribute_value(attr, raw, "system")?;
            trace_header = value.string_value;
        }
    }
    let group_id = entry.string("MessageGroupId")?;
    let dedup_id = entry.string("MessageDeduplicationId")?;
    if let Some(g) = group_id
        && !valid_token(g)
    {
        return Err(invalid_token(g, "MessageGroupId"));
    }
    if let Some(d) = dedup_id {
        if !fifo {
            return Err(SqsError::invalid_value(
                d,
                "MessageDeduplicationId",
                "The request include parameter that is not valid for this queue type.",
            ));
        }
        if !valid_token(d) {
            return Err(invalid_token(d, "MessageDeduplicationId"));
        }
    }
    // Digested once: the send answers with it, and so does every receive of all of them.
    let md5_of_attributes = attributes.as_ref().map(|a| a.md5().to_owned());
    let md5_of_system_attributes = trace_header.as_ref().map(|t| {
        let mut system = std::collections::BTreeMap::new();
        system.insert(
            "AWSTraceHeader".to_owned(),
            crate::model::message::MessageAttributeValue {
                data_type: "String".into(),
                string_value: Some(t.clone()),
                binary_value: None,
            },
        );
        crate::model::message::md5_of_attributes(&system).unwrap_or_default()
    });
    let mut dedup_key = None;
    let mut stored_dedup_id = DedupId::None;
    if fifo {
        let Some(group) = group_id else {
            return Err(SqsError::missing_parameter("MessageGroupId"));
        };
        let dedup: Cow<'_, str> = match dedup_id {
            Some(d) => {
                stored_dedup_id = DedupId::Explicit(d);
                Cow::Borrowed(d)
            }
            None if queue.settings.content_based_deduplication => {
                stored_dedup_id = DedupId::ContentBased;
                Cow::Owned(content_dedup_id(body))
            }
            None => {
                return Err(SqsError::invalid_parameter_value(
                    "The queue should either have ContentBasedDeduplication enabled or MessageDeduplicationId provided explicitly",
                ));
            }
        };
        // The scope the queue was created with decides, not the attribute's current value
        // (LocalStack `test_fifo_change_to_high_throughput_after_creation`).
        let key = queue.dedup_key(group, &dedup);
        // A duplicate is accepted and answered like the original, but not enqueued (F2).
        if let Some(original) = queue.dedup_lookup(key, now) {
            return Ok(Sent {
                message_id: hex::uuid(emu.ids.of(original.origin).as_bytes()),
                md5_of_body: hex::digest(&md5_of_body),
                md5_of_message_attributes: md5_of_attributes,
                md5_of_message_system_attributes: md5_of_system_attributes,
                sequence_number: Some(original.sequence_number.to_string()),
            });
        }
        dedup_key = Some(key);
    }
    let admitted = state.usage.admit(size, &emu.config)?;
    // Taken under the queue's mutex: the queue's seqs grow in the order its messages arrive.
    let seq = state.next_seq();
    let mut message = Message::with_digest(seq, (body, md5_of_body), stored_dedup_id, now, 0);
    let sequence_number = fifo.then(|| queue.next_sequence_number(now));
    message.set_sequence_number(sequence_number);
    message.set_extra(Extra {
        attributes,
        trace_header: trace_header.map(Into::into),
        dead_letter_source_arn: None,
        ..Extra::default()
    });
    let message_id = hex::uuid(emu.ids.of(message.origin()).as_bytes());
    let md5_of_body = hex::digest(&md5_of_body);
    queue.enqueue_admitted(
        message,
        (group_id, sender),
        (delay_seconds * 1000, now),
        dedup_key,
        admitted,
    );
    Ok(Sent {
        message_id,
        md5_of_body,
        md5_of_message_attributes: md5_of_attributes,
        md5_of_message_system_attributes: md5_of_system_attributes,
        sequence_number: sequence_number.map(|n| n.to_string()),
    })
}

pub(crate) fn send_message(
    emu: &Emulator,
    input: Input<'_>,
    ctx: &RequestContext,
) -> SqsResult<Sent> {
    let key = ctx.queue_key(emu, &input)?;
    // Before the queue's lock: the digests and the SenderId.
    let prepared = Prepared::of(&input);
    let sender = ctx.sender_id(&emu.config.account_id);
    emu.with_queue(&key, |state, queue, now| {
        let sending = Sending {
            emu,
            state,
            ctx,
            in_batch: false,
            sender,
        };
        send_one(&sending, (queue, now), (&input, prepared))
    })
}

pub(crate) fn send_message_batch(
    emu: &Emulator,
    input: Input<'_>,
    ctx: &RequestContext,
) -> SqsResult<Batch> {
    let key = ctx.queue_key(emu, &input)?;
    let entries = batch::entries(&input, "SendMessageBatch")?;
    let total: usize = entries.iter().map(|(_, e)| entry_size(e)).sum();
    if total > MAX_BATCH_BYTES {
        return Err(SqsError::batch_request_too_long(MAX_BATCH_BYTES, total));
    }
    // Before the queue's lock: the digests, the larger part of an entry's cost, and the
    // SenderId.
    let prepared = prepare(&entries);
    let sender = ctx.sender_id(&emu.config.account_id);
    let state = emu.read();
    // One request, one instant: every entry is sent at the time the queue was ticked to, not
    // at a clock read and a tick of its own (docs/performance.md, "Seventh round"). Nothing
    // else holds the queue between its entries, so only their SentTimestamps, now equal,
    // tell the difference.
    let (mut queue, now) = emu.lock_queue(&state, &key)?;
    if queue.is_fifo() {
        // On FIFO batches a missing group or dedup id fails the whole request (facts B2f, B2g).
        let content_based = queue.settings.content_based_deduplication;
        for (_, entry) in &entries {
            if entry.string("MessageGroupId")?.is_none() {
                return Err(SqsError::invalid_parameter_value(
                    "The request must contain the parameter MessageGroupId.",
                ));
            }
            if !content_based && entry.string("MessageDeduplicationId")?.is_none() {
                return Err(SqsError::invalid_parameter_value(
                    "The queue should either have ContentBasedDeduplication enabled or MessageDeduplicationId provided explicitly",
                ));
            }
        }
    }
    let sending = Sending {
        emu,
        state: &state,
        ctx,
        in_batch: true,
        sender,
    };
    let mut answer = Batch::with_capacity(entries.len());
    for ((id, entry), prepared) in entries.into_iter().zip(prepared) {
        let sent = send_one(&sending, (&mut queue, now), (&entry, prepared));
        answer.record(id, sent.map(Some));
    }
    Ok(answer)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use crate::support::config::EmulatorConfig;
    use crate::test_support::{
        advance, attribute, call, create, create_fifo, emulator, emulator_with, receive, send,
    };

    fn usage(emu: &crate::model::store::Emulator) -> (u64, u64) {
        let state = emu.read();
        (state.usage.messages(), state.usage.bytes())
    }

    #[tokio::test(start_paused = true)]
    async fn stored_messages_and_bytes_are_capped_and_released() {
        let emu = emulator_with(EmulatorConfig {
            max_messages: 3,
            max_stored_bytes: 10,
            ..EmulatorConfig::default()
        });
        let url = create(&emu, "q", json!({})).await;
        send(&emu, &url, "aaaa").await;
        send(&emu, &url, "bbbb").await;
        assert_eq!(usage(&emu), (2, 8));
        let over = json!({"QueueUrl": url, "MessageBody": "ccc"});
        let err = call(&emu, "SendMessage", over).await.unwrap_err();
        assert_eq!((err.code(), err.status()), ("OverLimit", 403));
        assert!(err.message.contains("--max-stored-bytes"), "{err}");
        send(&emu, &url, "cc").await;
        let err = call(
            &emu,
            "SendMessage",
            json!({"QueueUrl": url, "MessageBody": "d"}),
        )
        .await
        .unwrap_err();
        assert!(err.message.contains("3 messages"), "{err}");
        // In a batch the cap fails the entry, not the request.
        let out = call(
            &emu,
            "SendMessageBatch",
            json!({"QueueUrl": url, "Entries": [{"Id": "a", "MessageBody": "x"}]}),
        )
        .await
        .unwrap();
        assert_eq!(out["Failed"][0]["Code"], "OverLimit");

        // Deletes, purges, retention and queue deletion all give the room back.
        let got = receive(&emu, &url, 1, json!({})).await;
        let handle = got[0]["ReceiptHandle"].as_str().unwrap();
        call(
            &emu,
            "DeleteMessage",
            json!({"QueueUrl": url, "ReceiptHandle": handle}),
        )
        .await
        .unwrap();
        assert_eq!(usage(&emu), (2, 6));
        call(&emu, "PurgeQueue", json!({"QueueUrl": url}))
            .await
            .unwrap();
        assert_eq!(usage(&emu), (0, 0));
        let short = create(&emu, "short", json!({"MessageRetentionPeriod": "60"})).await;
        send(&emu, &short, "aaaa").await;
        send(&emu, &url, "bbbb").await;
        assert_eq!(usage(&emu), (2, 8));
        advance(61).await;
        receive(&emu, &short, 1, json!({})).await;
        assert_eq!(usage(&emu), (1, 4));
        call(&emu, "DeleteQueue", json!({"QueueUrl": url}))
            .await
            .unwrap();
        assert_eq!(usage(&emu), (0, 0));
    }

    #[tokio::test(start_paused = true)]
    async fn a_dead_letter_move_keeps_the_count() {
        let emu = emulator();
        create(&emu, "dlq", json!({})).await;
        let policy = r#"{"deadLetterTargetArn":"arn:aws:sqs:us-east-1:000000000000:dlq","maxReceiveCount":1}"#;
        let src = create(&emu, "src", json!({"RedrivePolicy": policy})).await;
        send(&emu, &src, "poison").await;
        receive(&emu, &src, 1, json!({"VisibilityTimeout": 1})).await;
        advance(2).await;
        assert!(receive(&emu, &src, 1, json!({})).await.is_empty());
        assert_eq!(
            attribute(
                &emu,
                &src.replace("src", "dlq"),
                "ApproximateNumberOfMessages"
            )
            .await,
            "1"
        );
        assert_eq!(usage(&emu), (1, 6));
    }

    #[tokio::test(start_paused = true)]
    async fn queue_and_message_delays() {
        let emu = emulator();
        let url = create(&emu, "q", json!({"DelaySeconds": "5"})).await;
        send(&emu, &url, "a").await;
        call(
            &emu,
            "SendMessage",
            json!({"QueueUrl": url, "MessageBody": "b", "DelaySeconds": 0}),
        )
        .await
        .unwrap();
        assert_eq!(
            attribute(&emu, &url, "ApproximateNumberOfMessagesDelayed").await,
            "1"
        );
        let now = receive(&emu, &url, 10, json!({})).await;
        assert_eq!(now.len(), 1);
        assert_eq!(now[0]["Body"], "b");
        advance(5).await;
        assert_eq!(receive(&emu, &url, 10, json!({})).await[0]["Body"], "a");
        let err = call(
            &emu,
            "SendMessage",
            json!({"QueueUrl": url, "MessageBody": "c", "DelaySeconds": 901}),
        )
        .await
        .unwrap_err();
        assert_eq!(err.code(), "InvalidParameterValue");
    }

    #[tokio::test(start_paused = true)]
    async fn fifo_rejects_per_message_delay_but_takes_zero() {
        let emu = emulator();
        let url = create_fifo(&emu).await;
        let err = call(
            &emu,
            "SendMessage",
            json!({"QueueUrl": url, "MessageBody": "a", "MessageGroupId": "g", "DelaySeconds": 2}),
        )
        .await
        .unwrap_err();
        assert_eq!(
            err.message,
            "Value 2 for parameter DelaySeconds is invalid. Reason: The request include parameter that is not valid for this queue type."
        );
        call(
            &emu,
            "SendMessage",
            json!({"QueueUrl": url, "MessageBody": "a", "MessageGroupId": "g", "DelaySeconds": 0}),
        )
        .await
        .unwrap();
    }

    #[tokio::test(start_paused = true)]
    async fn retention_expires_messages_in_flight_too() {
        let emu = emulator();
        let url = create(&emu, "q", json!({"MessageRetentionPeriod": "60"})).await;
        send(&emu, &url, "a").await;
        send(&emu, &url, "b").await;
        let got = receive(&emu, &url, 1, json!({})).await;
        let handle = got[0]["ReceiptHandle"].as_str().unwrap();
        advance(60).await;
        assert!(receive(&emu, &url, 10, json!({})).await.is_empty());
        assert_eq!(
            attribute(&emu, &url, "ApproximateNumberOfMessagesNotVisible").await,
            "0"
        );
        call(
            &emu,
            "DeleteMessage",
            json!({"QueueUrl": url, "ReceiptHandle": handle}),
        )
        .await
        .unwrap();
    }

    #[tokio::test(start_paused = true)]
    async fn fifo_dedup_window_outlives_delete() {
        let emu = emulator();
        let url = create(&emu, "f.fifo", json!({"FifoQueue": "true"})).await;
        let msg = json!({"QueueUrl": url, "MessageBody": "a", "MessageGroupId": "g", "MessageDeduplicationId": "d"});
        let first = call(&emu, "SendMessage", msg.clone()).await.unwrap();
        let got = receive(&emu, &url, 1, json!({})).await;
        let handle = got[0]["ReceiptHandle"].as_str().unwrap();
        call(
            &emu,
            "DeleteMessage",
            json!({"QueueUrl": url, "ReceiptHandle": handle}),
        )
        .await
        .unwrap();
        let dup = call(&emu, "SendMessage", msg.clone()).await.unwrap();
        assert_eq!(dup["MessageId"], first["MessageId"]);
        assert!(receive(&emu, &url, 1, json!({})).await.is_empty());
        advance(300).await;
        call(&emu, "SendMessage", msg).await.unwrap();
        assert_eq!(receive(&emu, &url, 1, json!({})).await.len(), 1);
    }

    #[tokio::test(start_paused = true)]
    async fn fifo_requires_group_and_dedup() {
        let emu = emulator();
        let url = create(&emu, "f.fifo", json!({"FifoQueue": "true"})).await;
        let err = call(
            &emu,
            "SendMessage",
            json!({"QueueUrl": url, "MessageBody": "a"}),
        )
        .await
        .unwrap_err();
        assert_eq!(err.code(), "MissingParameter");
        assert_eq!(
            err.message,
            "The request must contain the parameter MessageGroupId."
        );
        let err = call(
            &emu,
            "SendMessage",
            json!({"QueueUrl": url, "MessageBody": "a", "MessageGroupId": "g"}),
        )
        .await
        .unwrap_err();
        assert_eq!(
            err.message,
            "The queue should either have ContentBasedDeduplication enabled or MessageDeduplicationId provided explicitly"
        );
        let batch = json!({"QueueUrl": url, "Entries": [{"Id": "a", "MessageBody": "a", "MessageDeduplicationId": "d"}]});
        let err = call(&emu, "SendMessageBatch", batch).await.unwrap_err();
        assert_eq!(err.code(), "InvalidParameterValue");
    }

    #[tokio::test(start_paused = true)]
    async fn body_validation() {
        let emu = emulator();
        let url = create(&emu, "q", json!({})).await;
        let err = call(
            &emu,
            "SendMessage",
            json!({"QueueUrl": url, "MessageBody": ""}),
        )
        .await
        .unwrap_err();
        assert_eq!(
            err.message,
            "The request must contain the parameter MessageBody."
        );
        let err = call(
            &emu,
            "SendMessage",
            json!({"QueueUrl": url, "MessageBody": "a\u{1}"}),
        )
        .await
        .unwrap_err();
        assert_eq!(err.code(), "InvalidMessageContents");
        let big = "x".repeat(1_048_576 - 8);
        let attrs = json!({"k": {"DataType": "String", "StringValue": "x"}});
        call(
            &emu,
            "SendMessage",
            json!({"QueueUrl": url, "MessageBody": big, "MessageAttributes": attrs}),
        )
        .await
        .unwrap();
        let too_big = format!("{big}x");
        let err = call(
            &emu,
            "SendMessage",
            json!({"QueueUrl": url, "MessageBody": too_big, "MessageAttributes": attrs}),
        )
        .await
        .unwrap_err();
        assert_eq!(
            err.message,
            "One or more parameters are invalid. Reason: Message must be shorter than 1048576 bytes."
        );
    }

    #[tokio::test(start_paused = true)]
    async fn whole_batch_errors() {
        let emu = emulator();
        let url = create(&emu, "q", json!({})).await;
        let entry = |id: &str| json!({"Id": id, "MessageBody": "x"});
        let cases = [
            (json!([]), "AWS.SimpleQueueService.EmptyBatchRequest"),
            (
                json!((0..11).map(|i| entry(&i.to_string())).collect::<Vec<_>>()),
                "AWS.SimpleQueueService.TooManyEntriesInBatchRequest",
            ),
            (
                json!([entry("a"), entry("a")]),
                "AWS.SimpleQueueService.BatchEntryIdsNotDistinct",
            ),
            (
                json!([entry("invalid:id")]),
                "AWS.SimpleQueueService.InvalidBatchEntryId",
            ),
            (
                json!([entry(&"a".repeat(81))]),
                "AWS.SimpleQueueService.InvalidBatchEntryId",
            ),
        ];
        for (entries, code) in cases {
            let err = call(
                &emu,
                "SendMessageBatch",
                json!({"QueueUrl": url, "Entries": entries}),
            )
            .await
            .unwrap_err();
            assert_eq!(err.code(), code);
        }
        let half = "x".repeat(524_289);
        let entries = json!([{"Id": "a", "MessageBody": half}, {"Id": "b", "MessageBody": half}]);
        let err = call(
            &emu,
            "SendMessageBatch",
            json!({"QueueUrl": url, "Entries": entries}),
        )
        .await
        .unwrap_err();
        assert_eq!(
            err.message,
            "Batch requests cannot be longer than 1048576 bytes. You have sent 1048578 bytes."
        );
        let err = call(&emu, "SendMessageBatch", json!({"QueueUrl": url, "Entries": (0..20).map(|i| entry(&i.to_string())).collect::<Vec<_>>()}))
            .await
            .unwrap_err();
        assert_eq!(
            err.message,
            "Maximum number of entries per request are 10. You have sent 20."
        );
    }

    /// Every entry of a batch answers with its own digests, however many of them have
    /// attributes, fail, or lack a body (the batch digests them all in one call, bodies then
    /// attribute sets), and a receive answers each message with the same.
    #[tokio::test(start_paused = true)]
    async fn each_entry_of_a_batch_gets_its_own_digests() {
        use crate::model::message::{MessageAttributeValue, md5_of_attributes};
        use crate::support::{hex, md5};
        let emu = emulator();
        let url = create(&emu, "q", json!({})).await;
        let tenant = |t: &str| json!({"tenant": {"DataType": "String", "StringValue": t}});
        let entries = json!([
            {"Id": "a", "MessageBody": "alpha", "MessageAttributes": tenant("one")},
            {"Id": "b", "MessageBody": "bravo"},
            {"Id": "c", "MessageBody": "charlie", "MessageAttributes": {"n": {"DataType": "Number", "StringValue": "x"}}},
            {"Id": "d"},
            {"Id": "e", "MessageBody": "echo", "MessageAttributes": tenant("two")},
            {"Id": "f", "MessageBody": "foxtrot", "MessageAttributes": {}},
            {"Id": "g", "MessageBody": "golf", "MessageAttributes": tenant("three")},
        ]);
        let out = call(
            &emu,
            "SendMessageBatch",
            json!({"QueueUrl": url, "Entries": entries}),
        )
        .await
        .unwrap();
        let failed: Vec<&str> = out["Failed"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["Id"].as_str().unwrap())
            .collect();
        assert_eq!(failed, ["c", "d"]);
        let attributes_md5 = |t: &str| {
            let value = MessageAttributeValue {
                data_type: "String".into(),
                string_value: Some(t.into()),
                binary_value: None,
            };
            md5_of_attributes(&[("tenant".to_owned(), value)].into()).unwrap()
        };
        let expected = [
            ("a", "alpha", Some(attributes_md5("one"))),
            ("b", "bravo", None),
            ("e", "echo", Some(attributes_md5("two"))),
            ("f", "foxtrot", None),
            ("g", "golf", Some(attributes_md5("three"))),
        ];
        let successful = out["Successful"].as_array().unwrap();
        assert_eq!(successful.len(), expected.len());
        for (entry, (id, body, attributes)) in successful.iter().zip(&expected) {
            assert_eq!(entry["Id"], *id);
            let body_md5 = hex::digest_string(&md5::digest(body.as_bytes()));
            assert_eq!(entry["MD5OfMessageBody"], body_md5, "{id}");
            assert_eq!(
                entry["MD5OfMessageAttributes"].as_str(),
                attributes.as_deref(),
                "{id}"
            );
        }
        let got = receive(&emu, &url, 10, json!({"MessageAttributeNames": ["All"]})).await;
        assert_eq!(got.len(), expected.len());
        for message in &got {
            let (_, _, attributes) = expected
                .iter()
                .find(|(_, body, _)| message["Body"] == *body)
                .unwrap();
            assert_eq!(
                message["MD5OfMessageAttributes"].as_str(),
                attributes.as_deref()
            );
        }
    }
}
