//! ReceiveMessage: leases, long polling, FIFO group rules, dead-letter moves.
//!
//! Long polling counts itself in on the queue's wake-up and registers *before* looking at the
//! queue (`model/wakeup.rs` says why no wake is lost), then sleeps until a wake or the earliest
//! of (poll deadline, next lease/delay expiry). Sends, releases and expiries all wake waiters,
//! so a waiting receive answers as soon as a message is receivable and nothing busy-polls.

use std::sync::Arc;
use std::time::Duration;

use crate::model::message::{Message, MessageState};
use crate::model::queue::{ATTEMPT_WINDOW_MS, Id, Queue, ReceiveAttempt, Taken};
use crate::model::receipt;
use crate::model::redrive;
use crate::model::store::{Emulator, State};
use crate::model::wakeup::Wakeup;
use crate::ops::answer::{Received, ReceivedMessage, SystemValue};
use crate::ops::context::RequestContext;
use crate::support::audit::Delivery;
use crate::support::chaos::On;
use crate::support::errors::{SqsError, SqsResult};
use crate::support::input::Input;
use sqsprobe_facts::sqs::limits::{self, Range};

/// Validated ReceiveMessage parameters.
#[derive(Debug)]
struct ReceiveParams {
    max: usize,
    wait_seconds: Option<u64>,
    visibility_seconds: Option<u64>,
    system_names: Vec<String>,
    attribute_filters: Vec<String>,
    attempt_id: Option<String>,
}

/// An optional integer parameter that must lie in `range`, refused with AWS's wording.
fn in_range(input: &Input<'_>, range: &Range, reason: &str) -> SqsResult<Option<i64>> {
    match input.integer(range.name)? {
        Some(n) if !range.contains(n) => Err(SqsError::invalid_value(n, range.name, reason)),
        other => Ok(other),
    }
}

fn params(input: &Input<'_>, ctx: &RequestContext) -> SqsResult<ReceiveParams> {
    let max = in_range(
        input,
        &limits::MAX_NUMBER_OF_MESSAGES,
        "Must be between 1 and 10, if provided.",
    )?
    .map_or(1, |n| n as usize);
    let wait_seconds = in_range(
        input,
        &limits::WAIT_TIME_SECONDS,
        "Must be >= 0 and <= 20, if provided.",
    )?
    .map(|n| n as u64);
    let visibility_seconds = in_range(
        input,
        &limits::VISIBILITY_TIMEOUT,
        "Must be >= 0 and <= 43200, if provided.",
    )?
    .map(|n| n as u64);
    let legacy = input.string_list("AttributeNames")?;
    let system = input.string_list("MessageSystemAttributeNames")?;
    // When both are given, the JSON protocol honours MessageSystemAttributeNames and the query
    // protocol AttributeNames (SNAP-2025 `test_message_system_attribute_names_with_attribute_names`).
    let system_names = match (ctx.query, legacy.is_empty(), system.is_empty()) {
        (true, false, _) | (false, false, true) => legacy,
        _ => system,
    };
    let attempt_id = input.string("ReceiveRequestAttemptId")?.map(str::to_owned);
    if let Some(id) = &attempt_id
        && (id.is_empty() || id.len() > 128 || !id.bytes().all(|b| (33..=126).contains(&b)))
    {
        return Err(SqsError::invalid_value(
            id,
            "ReceiveRequestAttemptId",
            "ReceiveRequestAttemptId can only include alphanumeric and punctuation characters. 1 to 128 in length.",
        ));
    }
    Ok(ReceiveParams {
        max,
        wait_seconds,
        visibility_seconds,
        system_names,
        attribute_filters: input.string_list("MessageAttributeNames")?,
        attempt_id,
    })
}

/// Message `id` of `queue` as the answer writes it under the lease `nonce`, with the attributes
/// the receive asked for; `None` if the message is gone.
///
/// Read under the lock, and only what the answer writes: the body, and the attributes when
/// asked for. The MessageId's and the handle's text, a content-based deduplication id's hash
/// and a selection of the message attributes with its digest ([`ReceivedMessage::unlocked`]),
/// and the answer's writing are done outside it, where they hold up no other request on the
/// queue.
fn take(
    emu: &Emulator,
    queue: &Queue,
    (id, nonce): (Id, u64),
    params: &ReceiveParams,
) -> Option<ReceivedMessage> {
    let message = queue.get(id)?;
    let held = Held {
        message,
        sender: params.wants("SenderId").then(|| queue.sender_id(message)),
        group: if params.wants("MessageGroupId") {
            queue.group_name(message)
        } else {
            None
        },
        fifo: queue.is_fifo(),
    };
    Some(answered(emu, &held, (id, nonce), params))
}

/// A stored message, and what of it only its queue knows.
struct Held<'a> {
    message: &'a Message,
    /// Its SenderId, when the receive asked for it.
    sender: Option<&'a str>,
    /// Its MessageGroupId, when the receive asked for it.
    group: Option<Arc<str>>,
    /// Whether its queue is FIFO.
    fifo: bool,
}

impl ReceiveParams {
    /// Whether the answer shows the system attribute `name`.
    fn wants(&self, name: &str) -> bool {
        self.system_names.iter().any(|n| n == "All" || n == name)
    }
}

/// `held` as the receive answers it under the lease `(id, nonce)`: its body and digest, the
/// system attributes named, and the message attributes selected with their digest (none of
/// either, the usual receive, when none was asked for).
fn answered(
    emu: &Emulator,
    held: &Held<'_>,
    lease: (Id, u64),
    params: &ReceiveParams,
) -> ReceivedMessage {
    let message = held.message;
    let mut received = ReceivedMessage::leased(message, lease, emu.ids.of(message.origin()));
    if params.system_names.is_empty() && params.attribute_filters.is_empty() {
        return received;
    }
    let mut system = Vec::new();
    // Each value is computed only when asked for: most receives ask for a few attributes or
    // none.
    if !params.system_names.is_empty() {
        let mut put = |name: &'static str, value: &dyn Fn() -> Option<SystemValue>| {
            if params.wants(name)
                && let Some(value) = value()
            {
                system.push((name, value));
            }
        };
        let extra = message.extra.as_deref();
        let text = |s: &str| SystemValue::Text(s.to_owned());
        put("SenderId", &|| held.sender.map(text));
        put("SentTimestamp", &|| {
            Some(SystemValue::Number(message.sent_ms().into()))
        });
        put("ApproximateReceiveCount", &|| {
            Some(SystemValue::Number(message.receive_count.into()))
        });
        put("ApproximateFirstReceiveTimestamp", &|| {
            message
                .first_receive_ms()
                .map(|at| SystemValue::Number(at.into()))
        });
        put("AWSTraceHeader", &|| {
            extra.and_then(|e| e.trace_header.as_deref().map(text))
        });
        put("DeadLetterQueueSourceArn", &|| {
            extra.and_then(|e| e.dead_letter_source_arn.as_deref().map(text))
        });
        put("MessageGroupId", &|| held.group.as_deref().map(text));
        if held.fifo {
            // A content-based id is a SHA-256 of the body: hashed once the lock is released.
            if message.dedup_id_is_content_based() {
                if params.wants("MessageDeduplicationId") {
                    received.show_content_dedup_id();
                }
            } else {
                put("MessageDeduplicationId", &|| {
                    message
                        .dedup_id()
                        .map(|d| SystemValue::Text(d.into_owned()))
                });
            }
            put("SequenceNumber", &|| {
                message
                    .sequence_number()
                    .map(|n| SystemValue::Number(n.value()))
            });
        }
    }
    // All of them, a reference: those selected are picked once the lock is released.
    let attributes = if params.attribute_filters.is_empty() {
        None
    } else {
        message.shared_attributes().cloned()
    };
    received.answer_with(system, attributes);
    received
}

/// The dead-letter queue of the queue a receive is on, as the receive can use it.
enum DeadLetters<'a> {
    /// No RedrivePolicy, or its target does not exist (or is the queue itself): nothing moves.
    Absent,
    /// It exists, but the receive holds only its own queue (the read lock): a receive that
    /// finds a message due to move stops before it changes anything and starts again under the
    /// write lock.
    Elsewhere,
    /// Locked beside the receive's queue, under the write lock.
    Held(&'a mut Queue),
}

/// The key of the dead-letter queue `queue` (key `key`) moves messages to, if that queue exists.
fn dead_letter_key(state: &State, queue: &Queue, key: &str) -> Option<String> {
    let policy = queue.settings.redrive_policy.as_ref()?;
    state
        .queue_key_by_arn(&policy.dead_letter_target_arn)
        .filter(|n| n != key)
}

/// One non-blocking receive attempt on the locked, ticked `queue` (key `name`): the messages
/// leased, or `None` when a message is due to move to a dead-letter queue the attempt does not
/// hold ([`DeadLetters::Elsewhere`]), in which case nothing but the queue's clock has changed.
///
/// The queue is ticked again ([`Queue::tick_again`]: its timers only, all that can come due
/// under the lock at the same `now`) wherever the single-lock emulator looked it up again
/// (every round, every lease, the end), so that a lease of 0 s ends at the same points and
/// FIFO groups become available again in the same order.
fn try_receive(
    emu: &Emulator,
    state: &State,
    (queue, name): (&mut Queue, &str),
    params: &ReceiveParams,
    now: u64,
    mut dead_letters: DeadLetters<'_>,
) -> SqsResult<Option<Vec<ReceivedMessage>>> {
    let visibility_ms = params
        .visibility_seconds
        .unwrap_or(u64::from(queue.settings.visibility_timeout))
        * 1000;
    // A FIFO retry with the same attempt id gets the same messages and handles, with the
    // visibility timeout reset, while they are still leased under that receive (API_ReceiveMessage).
    if queue.is_fifo()
        && let Some(id) = &params.attempt_id
        && let Some(attempt) = queue.attempt(id, now).cloned()
    {
        let still_leased = attempt.leases.iter().all(|&(id, nonce)| {
            matches!(queue.get(id).map(|m| m.state), Some(MessageState::InFlight { nonce: n, .. }) if n == nonce)
        });
        if still_leased {
            for &(id, nonce) in &attempt.leases {
                queue.set_visibility(id, nonce, now + visibility_ms, now);
            }
            return Ok(Some(taken(emu, queue, &attempt.leases, params)));
        }
    }
    let (_, inflight, _) = queue.counts();
    if inflight >= emu.config.max_in_flight {
        return Err(SqsError::over_limit(format!(
            "Too many messages in flight for queue {name}: the limit is {}.",
            emu.config.max_in_flight
        )));
    }
    // The receive count at which a message moves, when it can move.
    let max_receive_count = match dead_letters {
        DeadLetters::Absent => None,
        _ => queue
            .settings
            .redrive_policy
            .as_ref()
            .map(|policy| policy.max_receive_count),
    };
    let mut leased: Vec<(Id, u64)> = Vec::with_capacity(params.max);
    let mut moved: Vec<Taken> = Vec::new();
    loop {
        queue.tick_again(now);
        let wanted = params.max - leased.len();
        // A lease of 0 s ends at once and a later round could see the message again.
        let mut candidates: Vec<Id> = queue.candidates(wanted);
        candidates.retain(|id| !leased.iter().any(|(l, _)| l == id));
        if candidates.is_empty() {
            break;
        }
        let due = |queue: &Queue, id: Id| match (max_receive_count, queue.get(id)) {
            (Some(max), Some(m)) => m.receive_count >= max,
            _ => false,
        };
        if matches!(dead_letters, DeadLetters::Elsewhere)
            && candidates.iter().any(|&id| due(queue, id))
        {
            // Only the first round can get here: a round that moves nothing is the last.
            debug_assert!(leased.is_empty() && moved.is_empty());
            return Ok(None);
        }
        let mut moved_any = false;
        candidates.retain(|&seq| {
            if !due(queue, seq) {
                return true;
            }
            if let Some(taken) = queue.remove(seq) {
                moved.push(taken);
                moved_any = true;
            }
            false
        });
        for seq in candidates {
            let nonce = state.next_nonce();
            queue.tick_again(now);
            if queue.lease(seq, visibility_ms, nonce, now).is_some() {
                leased.push((seq, nonce));
            }
        }
        if !moved_any || leased.len() >= params.max {
            break;
        }
    }
    if let DeadLetters::Held(target) = &mut dead_letters
        && !moved.is_empty()
    {
        redrive::deliver_to_dlq(state, target, &queue.arn, moved, now);
    }
    queue.tick_again(now);
    if queue.is_fifo()
        && let Some(id) = &params.attempt_id
        && !leased.is_empty()
    {
        queue.remember_attempt(
            id.clone(),
            ReceiveAttempt {
                leases: leased.clone(),
                expires_ms: now + ATTEMPT_WINDOW_MS,
            },
        );
    }
    Ok(Some(taken(emu, queue, &leased, params)))
}

/// The messages of `leases` as the answer needs them (finished once the lock is released).
fn taken(
    emu: &Emulator,
    queue: &Queue,
    leases: &[(Id, u64)],
    params: &ReceiveParams,
) -> Vec<ReceivedMessage> {
    // Allocated at its final size: collected from a `filter_map`, the vector started small
    // and was reallocated twice for ten messages, each time copying the ones it held.
    let mut messages = Vec::with_capacity(leases.len());
    for &lease in leases {
        messages.extend(take(emu, queue, lease, params));
    }
    messages
}

/// What chaos decisions about `queue` read: its key, its tags (its own chaos), its type.
fn chaos_on(queue: &Queue) -> On<'_> {
    On {
        key: &queue.arn,
        tags: &queue.tags,
        fifo: queue.is_fifo(),
    }
}

/// Opt-in chaos on a receive's answer: copies of messages other receives hold (at-least-once
/// duplicates, each under a new handle) in the room left, then the order shuffled (best-effort
/// ordering). Without chaos, `messages` as they are.
fn chaos_copies(
    state: &State,
    emu: &Emulator,
    queue: &mut Queue,
    params: &ReceiveParams,
    now: u64,
    mut messages: Vec<ReceivedMessage>,
) -> Vec<ReceivedMessage> {
    queue.tick_again(now);
    let room = params.max.saturating_sub(messages.len());
    // Listing the held messages costs O(in flight): only when a copy may be made.
    if room == 0 || !emu.chaos.may_duplicate(chaos_on(queue)) {
        emu.chaos.reorder(chaos_on(queue), &mut messages);
        return messages;
    }
    let held: Vec<Id> = queue
        .leased_ids()
        .into_iter()
        .filter(|&id| !messages.iter().any(|d| d.id() == id))
        .collect();
    let refs: Vec<(u64, u32)> = held.iter().map(|id| (id.seq, id.slot)).collect();
    let stored = |(seq, slot)| queue.get(Id { slot, seq }).is_some();
    let copies: Vec<Id> = emu
        .chaos
        .duplicates(chaos_on(queue), &refs, room, &stored)
        .into_iter()
        .filter_map(|seq| held.iter().find(|id| id.seq == seq).copied())
        .collect();
    let visibility_ms = params
        .visibility_seconds
        .unwrap_or(u64::from(queue.settings.visibility_timeout))
        * 1000;
    for id in copies {
        let nonce = state.next_nonce();
        queue.tick_again(now);
        if !queue.lease_copy(id, visibility_ms, nonce, now) {
            continue;
        }
        messages.extend(take(emu, queue, (id, nonce), params));
    }
    queue.tick_again(now);
    emu.chaos.reorder(chaos_on(queue), &mut messages);
    messages
}

/// Tells an audit, if one watches, of each message a receive is about to answer with: its
/// attempt (the handle's nonce) and when that lease ends.
fn observe_deliveries(emu: &Emulator, queue: &Queue, messages: &[ReceivedMessage], now: u64) {
    let Some(audit) = &emu.config.audit else {
        return;
    };
    let key = &queue.arn;
    for d in messages {
        // Each was taken under this lock, so it is still stored.
        let message = queue.get(d.id());
        let lease_until_ms = match message.map(|m| m.state) {
            Some(MessageState::InFlight { until, .. }) => until,
            _ => now,
        };
        audit.delivered(Delivery {
            queue: key.to_owned(),
            message_id: d.message_id(),
            seq: d.id().seq,
            nonce: d.nonce(),
            body: d.body().to_owned(),
            attributes: message
                .map(|m| m.attributes().iter())
                .into_iter()
                .flatten()
                .map(|(name, value)| (name.clone(), value.to_json()))
                .collect(),
            at_ms: now,
            lease_until_ms,
        });
    }
}

pub(crate) async fn receive_message(
    emu: &Arc<Emulator>,
    input: Input<'_>,
    ctx: &RequestContext,
) -> SqsResult<Received> {
    let key = ctx.queue_key(emu, &input)?;
    let mut params = params(&input, ctx)?;
    // The first look reads the queue's wait time under the queue's lock; a short poll (no
    // wait) then looks for messages under that same lock rather than taking the store's and
    // the queue's locks again (docs/performance.md, "Seventh round").
    let (wakeup, wait_seconds, first) = {
        let state = emu.read();
        let (mut queue, now) = emu.lock_queue(&state, &key)?;
        let wait = params
            .wait_seconds
            .unwrap_or(u64::from(queue.settings.receive_message_wait_time_seconds));
        if wait == 0 {
            // Chaos (opt-in): a short poll samples a subset of the servers.
            let could = params.max.min(queue.counts().0);
            let take = emu.chaos.short_poll_take(chaos_on(&queue), could);
            if take < could {
                params.max = take;
            }
        }
        let wakeup = Arc::clone(&queue.wakeup);
        let first = if wait == 0 {
            let poll = Poll {
                emu,
                key: &key,
                wakeup: &wakeup,
                params: &params,
                deadline: now,
            };
            poll.look(&state, (&mut queue, now), false)?
        } else {
            None
        };
        (wakeup, wait, first)
    };
    // (Its deadline is the look's own time, so it answers; `None`: a dead-letter move needs
    // the write lock, which the loop's first look takes at once.)
    let mut looked_under_read_lock = wait_seconds == 0;
    if let Some(Ok(received)) = first.map(|outcome| answer(outcome, &key, &params)) {
        return Ok(received);
    }
    let deadline = emu.now() + wait_seconds * 1000;
    // Counted in before the first `enable` below: only then do the queue's changes wake.
    let _watching = (wait_seconds > 0).then(|| wakeup.watch());
    loop {
        let notified = wakeup.notified();
        tokio::pin!(notified);
        // Registered before looking, so that a wake between the look and the wait is not lost;
        // a short poll (no wait) never waits, so it does not register: registered, it was woken
        // by every message another request made receivable meanwhile (each of a 0-second
        // lease's ten), and its connection's task polled again for nothing, often on the other
        // worker thread (docs/performance.md, "Fifth round").
        if wait_seconds > 0 {
            notified.as_mut().enable();
        }
        let poll = Poll {
            emu,
            key: &key,
            wakeup: &wakeup,
            params: &params,
            deadline,
        };
        // Under the read lock first (a short poll has looked so already, above); under the
        // write lock when a message is due to move to a dead-letter queue (`model/store.rs`,
        // the locking rule).
        let read_look = if looked_under_read_lock {
            None
        } else {
            poll.once(false)?
        };
        looked_under_read_lock = false;
        let outcome = match read_look {
            Some(outcome) => outcome,
            // Holding its dead-letter queue, a receive never asks to start again.
            None => poll
                .once(true)?
                .unwrap_or_else(|| Outcome::Answer(Vec::new(), receipt::Encoder::new(&key))),
        };
        let next_deadline = match answer(outcome, &key, &params) {
            Ok(received) => return Ok(received),
            Err(next_deadline) => next_deadline,
        };
        let sleep_ms = next_deadline.saturating_sub(emu.now()).max(1);
        tokio::select! {
            () = &mut notified => {}
            () = tokio::time::sleep(Duration::from_millis(sleep_ms)) => {}
            () = emu.stopped() => {}
        }
    }
}

/// The answer a look ended with, or (`Err`) the time to look again by.
fn answer(outcome: Outcome, key: &str, params: &ReceiveParams) -> Result<Received, u64> {
    match outcome {
        Outcome::Gone => Ok(Received::empty(receipt::Encoder::new(key))),
        // None: AWS leaves `Messages` out of an empty receive (SNAP-2025
        // `test_receive_empty_queue`), which every protocol's writer of a `Received` does.
        Outcome::Answer(mut messages, handles) => {
            for message in &mut messages {
                message.unlocked(&params.attribute_filters);
            }
            Ok(Received { messages, handles })
        }
        Outcome::Wait(next_deadline) => Err(next_deadline),
    }
}

/// What one look at the queue of a (possibly long) poll needs.
struct Poll<'a> {
    emu: &'a Emulator,
    key: &'a str,
    /// The queue's [`Wakeup`] when the poll began: another one means the queue was deleted (and
    /// perhaps created again) meanwhile.
    wakeup: &'a Arc<Wakeup>,
    params: &'a ReceiveParams,
    deadline: u64,
}

/// How one look at the queue ends.
enum Outcome {
    /// The queue was deleted while the poll waited: it ends empty.
    Gone,
    /// Answer with these, their handles written by their queue's encoder.
    Answer(Vec<ReceivedMessage>, receipt::Encoder),
    /// Nothing to answer with yet: wait until this time or a wake-up.
    Wait(u64),
}

impl Poll<'_> {
    /// Looks once under the read lock (`exclusive` false: `None` when a dead-letter move needs
    /// the write lock) or under the write lock, with the dead-letter queue locked too.
    fn once(&self, exclusive: bool) -> SqsResult<Option<Outcome>> {
        let Poll { emu, key, .. } = *self;
        let write;
        let read;
        let state: &State = if exclusive {
            write = emu.write();
            &write
        } else {
            read = emu.read();
            &read
        };
        let Ok((mut queue, now)) = emu.lock_queue(state, key) else {
            return Ok(Some(Outcome::Gone));
        };
        if !Arc::ptr_eq(&queue.wakeup, self.wakeup) {
            return Ok(Some(Outcome::Gone));
        }
        self.look(state, (&mut queue, now), exclusive)
    }

    /// [`Poll::once`]'s look, under locks already taken: `queue` (this poll's) ticked to `now`.
    fn look(
        &self,
        state: &State,
        (queue, now): (&mut Queue, u64),
        exclusive: bool,
    ) -> SqsResult<Option<Outcome>> {
        let Poll {
            emu, key, params, ..
        } = *self;
        let dead_letter_key = dead_letter_key(state, queue, key);
        // Under the write lock no other thread holds a queue, so this cannot wait.
        let mut dead_letter_queue = match &dead_letter_key {
            Some(dlq) if exclusive => state.lock_queue(dlq).ok(),
            _ => None,
        };
        let dead_letters = match (&mut dead_letter_queue, &dead_letter_key) {
            (Some(dlq), _) => DeadLetters::Held(dlq),
            (None, Some(_)) if !exclusive => DeadLetters::Elsewhere,
            _ => DeadLetters::Absent,
        };
        let Some(messages) = try_receive(emu, state, (queue, key), params, now, dead_letters)?
        else {
            return Ok(None);
        };
        let messages = chaos_copies(state, emu, queue, params, now, messages);
        observe_deliveries(emu, queue, &messages, now);
        if !messages.is_empty() || now >= self.deadline || emu.is_stopping() {
            return Ok(Some(Outcome::Answer(messages, queue.handles.clone())));
        }
        let next = queue
            .next_deadline()
            .map_or(self.deadline, |d| d.min(self.deadline));
        Ok(Some(Outcome::Wait(next)))
    }
}

#[cfg(test)]
mod render_tests;

#[cfg(test)]
mod tests {
    use serde_json::json;

    use crate::test_support::{
        advance, attribute, call, create, create_fifo, emulator, receive, send,
    };

    /// What a receive finishes once the queue's lock is released — the message attributes it
    /// selects with their digest, a content-based deduplication id — is in its answer on every
    /// path: a first look, a retry under the same attempt id, a long poll that waited.
    #[tokio::test(start_paused = true)]
    async fn what_a_receive_finishes_outside_the_lock_is_in_every_answer() {
        use crate::model::message::{MessageAttributeValue, content_dedup_id, md5_of_attributes};
        let emu = emulator();
        let url = create_fifo(&emu).await;
        let sent = json!({
            "QueueUrl": url,
            "MessageBody": "body",
            "MessageGroupId": "g",
            "MessageAttributes": {
                "a": {"DataType": "String", "StringValue": "x"},
                "b": {"DataType": "Number", "StringValue": "1"},
            },
        });
        call(&emu, "SendMessage", sent).await.unwrap();
        let a_alone = md5_of_attributes(&std::collections::BTreeMap::from([(
            "a".to_owned(),
            MessageAttributeValue {
                data_type: "String".into(),
                string_value: Some("x".into()),
                binary_value: None,
            },
        )]));
        let asked = |attempt: &str, wait: u64| {
            json!({
                "MessageSystemAttributeNames": ["MessageDeduplicationId"],
                "MessageAttributeNames": ["a"],
                "ReceiveRequestAttemptId": attempt,
                "VisibilityTimeout": 5,
                "WaitTimeSeconds": wait,
            })
        };
        let check = |got: Vec<serde_json::Value>, path: &str| {
            assert_eq!(got.len(), 1, "{path}");
            let message = &got[0];
            assert_eq!(
                message["Attributes"]["MessageDeduplicationId"],
                content_dedup_id("body"),
                "{path}"
            );
            let names: Vec<&String> = message["MessageAttributes"]
                .as_object()
                .map(|m| m.keys().collect())
                .unwrap_or_default();
            assert_eq!(names, ["a"], "{path}");
            assert_eq!(
                message["MD5OfMessageAttributes"].as_str(),
                a_alone.as_deref(),
                "{path}"
            );
        };
        check(receive(&emu, &url, 1, asked("one", 0)).await, "first look");
        check(receive(&emu, &url, 1, asked("one", 0)).await, "retry");
        let poll = {
            let (emu, url) = (std::sync::Arc::clone(&emu), url.clone());
            tokio::spawn(async move { receive(&emu, &url, 1, asked("two", 20)).await })
        };
        advance(6).await;
        check(poll.await.unwrap(), "long poll");
    }

    #[tokio::test(start_paused = true)]
    async fn a_long_poll_answers_at_once_when_the_server_stops() {
        let emu = emulator();
        let url = create(&emu, "q", json!({})).await;
        let poll = {
            let emu = std::sync::Arc::clone(&emu);
            let url = url.clone();
            tokio::spawn(
                async move { receive(&emu, &url, 1, json!({"WaitTimeSeconds": 20})).await },
            )
        };
        advance(1).await;
        let started = tokio::time::Instant::now();
        emu.begin_stop();
        let got = poll.await.unwrap();
        assert!(got.is_empty());
        assert!(started.elapsed() < std::time::Duration::from_secs(1));
        // A poll that starts after the stop does not wait either.
        assert!(
            receive(&emu, &url, 1, json!({"WaitTimeSeconds": 20}))
                .await
                .is_empty()
        );
        assert!(started.elapsed() < std::time::Duration::from_secs(1));
    }

    #[tokio::test(start_paused = true)]
    async fn lease_expires_after_visibility_timeout() {
        let emu = emulator();
        let url = create(&emu, "q", json!({})).await;
        send(&emu, &url, "a").await;
        assert_eq!(receive(&emu, &url, 1, json!({})).await.len(), 1);
        assert_eq!(
            attribute(&emu, &url, "ApproximateNumberOfMessagesNotVisible").await,
            "1"
        );
        advance(29).await;
        assert!(receive(&emu, &url, 1, json!({})).await.is_empty());
        advance(1).await;
        let again = receive(
            &emu,
            &url,
            1,
            json!({"MessageSystemAttributeNames": ["All"]}),
        )
        .await;
        assert_eq!(again[0]["Attributes"]["ApproximateReceiveCount"], "2");
    }

    #[tokio::test(start_paused = true)]
    async fn per_receive_visibility_override() {
        let emu = emulator();
        let url = create(&emu, "q", json!({})).await;
        send(&emu, &url, "a").await;
        receive(&emu, &url, 1, json!({"VisibilityTimeout": 5})).await;
        advance(5).await;
        assert_eq!(receive(&emu, &url, 1, json!({})).await.len(), 1);
    }

    #[tokio::test(start_paused = true)]
    async fn long_poll_wakes_on_arrival() {
        let emu = emulator();
        let url = create(&emu, "q", json!({})).await;
        let started = emu.now();
        let poll = {
            let emu = emu.clone();
            let url = url.clone();
            tokio::spawn(async move {
                call(
                    &emu,
                    "ReceiveMessage",
                    json!({"QueueUrl": url, "WaitTimeSeconds": 20}),
                )
                .await
                .unwrap()
            })
        };
        tokio::task::yield_now().await;
        advance(3).await;
        send(&emu, &url, "hi").await;
        let out = poll.await.unwrap();
        assert_eq!(out["Messages"][0]["Body"], "hi");
        assert!(emu.now() - started < 4_000);
    }

    #[tokio::test(start_paused = true)]
    async fn long_poll_wakes_when_a_lease_expires() {
        let emu = emulator();
        let url = create(&emu, "q", json!({})).await;
        send(&emu, &url, "a").await;
        receive(&emu, &url, 1, json!({"VisibilityTimeout": 2})).await;
        let started = emu.now();
        let out = call(
            &emu,
            "ReceiveMessage",
            json!({"QueueUrl": url, "WaitTimeSeconds": 20}),
        )
        .await
        .unwrap();
        assert_eq!(out["Messages"][0]["Body"], "a");
        let waited = emu.now() - started;
        assert!((2_000..3_000).contains(&waited), "{waited}");
    }

    #[tokio::test(start_paused = true)]
    async fn long_poll_times_out_empty() {
        let emu = emulator();
        let url = create(&emu, "q", json!({"ReceiveMessageWaitTimeSeconds": "4"})).await;
        let started = emu.now();
        let out = call(&emu, "ReceiveMessage", json!({"QueueUrl": url}))
            .await
            .unwrap();
        assert_eq!(out, json!({}));
        assert!(emu.now() - started >= 4_000);
    }

    #[tokio::test(start_paused = true)]
    async fn parameter_ranges() {
        let emu = emulator();
        let url = create(&emu, "q", json!({})).await;
        let err = call(
            &emu,
            "ReceiveMessage",
            json!({"QueueUrl": url, "WaitTimeSeconds": 21}),
        )
        .await
        .unwrap_err();
        assert_eq!(
            err.message,
            "Value 21 for parameter WaitTimeSeconds is invalid. Reason: Must be >= 0 and <= 20, if provided."
        );
        let err = call(
            &emu,
            "ReceiveMessage",
            json!({"QueueUrl": url, "MaxNumberOfMessages": 0}),
        )
        .await
        .unwrap_err();
        assert_eq!(err.code(), "InvalidParameterValue");
    }

    #[tokio::test(start_paused = true)]
    async fn attribute_filters_and_md5_of_returned_subset() {
        let emu = emulator();
        let url = create(&emu, "q", json!({})).await;
        let attrs = json!({
            "General": {"DataType": "String", "StringValue": "Kenobi"},
            "Hello": {"DataType": "String", "StringValue": "There"},
            "Help.Me": {"DataType": "String", "StringValue": "Me"},
        });
        call(
            &emu,
            "SendMessage",
            json!({"QueueUrl": url, "MessageBody": "msg", "MessageAttributes": attrs}),
        )
        .await
        .unwrap();
        let got = receive(
            &emu,
            &url,
            1,
            json!({"MessageAttributeNames": ["Hello"], "VisibilityTimeout": 0}),
        )
        .await;
        assert_eq!(
            got[0]["MD5OfMessageAttributes"],
            "a311262e065454b75da111d535b8dacd"
        );
        let got = receive(
            &emu,
            &url,
            1,
            json!({"MessageAttributeNames": ["Hel.*"], "VisibilityTimeout": 0}),
        )
        .await;
        assert_eq!(
            got[0]["MD5OfMessageAttributes"],
            "83fee93c1bcd8b9a5a923ffacdc636c7"
        );
        let got = receive(&emu, &url, 1, json!({"VisibilityTimeout": 0})).await;
        assert!(got[0].get("MessageAttributes").is_none());
        assert!(got[0].get("Attributes").is_none());
    }

    #[tokio::test(start_paused = true)]
    async fn fifo_group_blocks_while_in_flight() {
        let emu = emulator();
        let url = create_fifo(&emu).await;
        for (body, group) in [("g1-1", "g1"), ("g1-2", "g1"), ("g2-1", "g2")] {
            call(
                &emu,
                "SendMessage",
                json!({"QueueUrl": url, "MessageBody": body, "MessageGroupId": group}),
            )
            .await
            .unwrap();
        }
        let first = receive(&emu, &url, 1, json!({})).await;
        assert_eq!(first[0]["Body"], "g1-1");
        let next = receive(&emu, &url, 10, json!({})).await;
        let bodies: Vec<_> = next.iter().map(|m| m["Body"].as_str().unwrap()).collect();
        assert_eq!(bodies, ["g2-1"]);
        let handle = first[0]["ReceiptHandle"].as_str().unwrap();
        call(
            &emu,
            "DeleteMessage",
            json!({"QueueUrl": url, "ReceiptHandle": handle}),
        )
        .await
        .unwrap();
        let last = receive(&emu, &url, 10, json!({})).await;
        assert_eq!(last[0]["Body"], "g1-2");
    }

    #[tokio::test(start_paused = true)]
    async fn fifo_receive_attempt_id_returns_same_messages() {
        let emu = emulator();
        let url = create_fifo(&emu).await;
        for body in ["a", "b"] {
            call(
                &emu,
                "SendMessage",
                json!({"QueueUrl": url, "MessageBody": body, "MessageGroupId": "g"}),
            )
            .await
            .unwrap();
        }
        let first = receive(&emu, &url, 1, json!({"ReceiveRequestAttemptId": "try-1"})).await;
        let retry = receive(&emu, &url, 1, json!({"ReceiveRequestAttemptId": "try-1"})).await;
        assert_eq!(first, retry);
    }

    async fn send_group(
        emu: &std::sync::Arc<crate::model::store::Emulator>,
        url: &str,
        body: &str,
    ) {
        let group = body.split('-').next().unwrap();
        call(
            emu,
            "SendMessage",
            json!({"QueueUrl": url, "MessageBody": body, "MessageGroupId": group}),
        )
        .await
        .unwrap();
    }

    fn bodies(messages: &[serde_json::Value]) -> Vec<String> {
        messages
            .iter()
            .map(|m| m["Body"].as_str().unwrap().to_owned())
            .collect()
    }

    // AWS-validated test_fifo_receive_message_visibility_timeout_shared_in_group: groups whose
    // leases lapsed come back in the order they became visible, behind a group never received.
    #[tokio::test(start_paused = true)]
    async fn fifo_groups_return_in_the_order_they_became_available() {
        let emu = emulator();
        let url = create(
            &emu,
            "o.fifo",
            json!({"FifoQueue": "true", "ContentBasedDeduplication": "true", "VisibilityTimeout": "1"}),
        )
        .await;
        for body in ["g1-m1", "g1-m2", "g1-m3", "g1-m4", "g2-m1", "g3-m1"] {
            send_group(&emu, &url, body).await;
        }
        assert_eq!(
            bodies(&receive(&emu, &url, 2, json!({})).await),
            ["g1-m1", "g1-m2"]
        );
        assert_eq!(bodies(&receive(&emu, &url, 1, json!({})).await), ["g2-m1"]);
        advance(2).await;
        let all = receive(&emu, &url, 10, json!({"VisibilityTimeout": 0})).await;
        assert_eq!(
            bodies(&all),
            ["g3-m1", "g1-m1", "g1-m2", "g1-m3", "g1-m4", "g2-m1"]
        );
    }

    // AWS-validated test_fifo_message_group_visibility_after_delete (AWS's order, which
    // LocalStack does not reproduce) and ..._after_partial_delete.
    #[tokio::test(start_paused = true)]
    async fn fifo_group_after_delete_keeps_its_next_message_place() {
        for partial in [false, true] {
            let emu = emulator();
            let url = create_fifo(&emu).await;
            for body in [
                "g1-m1", "g2-m1", "g1-m2", "g2-m2", "g1-m2", "g1-m3", "g1-m4", "g3-m1",
            ] {
                send_group(&emu, &url, body).await;
            }
            let got = receive(&emu, &url, 2, json!({})).await;
            assert_eq!(bodies(&got), ["g1-m1", "g1-m2"]);
            let deleted = if partial { &got[..1] } else { &got[..] };
            for m in deleted {
                call(
                    &emu,
                    "DeleteMessage",
                    json!({"QueueUrl": url, "ReceiptHandle": m["ReceiptHandle"]}),
                )
                .await
                .unwrap();
            }
            let rest = bodies(&receive(&emu, &url, 10, json!({})).await);
            if partial {
                assert_eq!(rest, ["g2-m1", "g2-m2", "g3-m1"]);
            } else {
                assert_eq!(rest, ["g2-m1", "g2-m2", "g1-m3", "g1-m4", "g3-m1"]);
            }
        }
    }

    // The dedup scope a FIFO queue was created with stays (LocalStack
    // test_fifo_change_to_high_throughput_after_creation); one created per-group dedups per group.
    #[tokio::test(start_paused = true)]
    async fn dedup_scope_is_the_one_the_queue_was_created_with() {
        let emu = emulator();
        for (name, created, later) in [
            ("a.fifo", "queue", "messageGroup"),
            ("b.fifo", "messageGroup", "queue"),
        ] {
            let url = create(
                &emu,
                name,
                json!({"FifoQueue": "true", "DeduplicationScope": created}),
            )
            .await;
            call(
                &emu,
                "SetQueueAttributes",
                json!({"QueueUrl": url, "Attributes": {"DeduplicationScope": later}}),
            )
            .await
            .unwrap();
            for group in ["g1", "g2"] {
                call(
                    &emu,
                    "SendMessage",
                    json!({"QueueUrl": url, "MessageBody": "x", "MessageGroupId": group, "MessageDeduplicationId": "same"}),
                )
                .await
                .unwrap();
            }
            let expected = if created == "queue" { 1 } else { 2 };
            assert_eq!(
                receive(&emu, &url, 10, json!({})).await.len(),
                expected,
                "{name}"
            );
        }
    }
}
