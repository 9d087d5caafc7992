//! One queue's messages and the indexes that keep every operation's cost independent of how
//! many messages the queue holds.
//!
//! Messages live in a slab (`model/slab.rs`: chunks of slots, freed slots reused) and are named by [`Id`], their
//! slot plus their store-wide seq, so a stale id never reaches a reused slot. Around the slab:
//! - `ready`: visible messages of a standard queue, by seq (delivery in send order,
//!   `model/ready.rs`);
//! - FIFO: the message groups (`model/groups.rs`): per group its visible and in-flight
//!   messages as a log of slots in seq order, and the groups that can deliver now, ordered by when their first
//!   deliverable message became available (AWS-recorded group order, `docs/emulator.md`);
//! - `timers` for delays and leases, `retention` for expiry (FIFO groups keep their own
//!   retention order), and the FIFO deduplication cache (`model/dedup.rs`, whose index names
//!   a sent message's slot while the message is stored), as in mini-redis's
//!   `db.rs`: deadlines in ordered sets drained lazily by [`Queue::tick`] at the start of every
//!   operation, so there is no background timer. Long polls sleep until the earliest deadline
//!   ([`Queue::next_deadline`]) or the queue's wake-up (`model/wakeup.rs`), whichever comes
//!   first.

use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};
use std::sync::Arc;

use crate::model::attributes::QueueSettings;
use crate::model::dedup::{
    DEDUP_WINDOW_MS, DedupCache, DedupKey, MAX_INDEXED_SLOT, Original, StoredSends,
};
use crate::model::groups::Groups;
pub(crate) use crate::model::message::Id;
use crate::model::message::{Message, MessageState, NO_GROUP, SequenceNumber};
use crate::model::ready::Ready;
use crate::model::receipt;
use crate::model::retention::Retention;
use crate::model::senders::Senders;
use crate::model::slab::Slab;
use crate::model::usage::{Admitted, Usage};
use crate::model::wakeup::Wakeup;
use crate::support::ids::MessageIds;

/// How long a ReceiveRequestAttemptId can be retried: 5 minutes (API_ReceiveMessage).
pub(crate) const ATTEMPT_WINDOW_MS: u64 = 5 * 60 * 1000;

/// A FIFO receive remembered by its ReceiveRequestAttemptId.
#[derive(Debug, Clone)]
pub(crate) struct ReceiveAttempt {
    /// (message, nonce) of each message returned, in order.
    pub leases: Vec<(Id, u64)>,
    pub expires_ms: u64,
}

/// A message taken out of its queue, with the names of its group and sender: the message's
/// indexes into those tables named entries of the queue it left.
#[derive(Debug)]
pub(crate) struct Taken {
    pub message: Message,
    pub group: Option<Arc<str>>,
    pub sender: Arc<str>,
}

/// A queue.
#[derive(Debug)]
pub(crate) struct Queue {
    pub name: String,
    pub arn: String,
    pub settings: QueueSettings,
    /// Whether deduplication is per message group: DeduplicationScope as it was at creation.
    /// AWS does not switch a queue's deduplication when the attribute is changed later
    /// (LocalStack `test_fifo_change_to_high_throughput_after_creation`, PRs #10324, #10887).
    pub dedup_per_group: bool,
    pub tags: BTreeMap<String, String>,
    pub created_ms: u64,
    pub modified_ms: u64,
    pub last_purge_ms: Option<u64>,
    /// Woken on anything that may make a message receivable.
    pub wakeup: Arc<Wakeup>,
    /// Writes the receipt handles of this queue's messages (its head encoded once).
    pub handles: receipt::Encoder,
    slots: Slab,
    /// Standard queues (and FIFO messages without a group): visible messages by seq
    /// (`model/ready.rs`).
    ready: Ready,
    /// Group names, and on FIFO queues the groups' messages and delivery order.
    groups: Groups,
    /// SenderIds, each stored once while a message of this queue holds it; messages hold an
    /// index.
    senders: Senders,
    next_stamp: u64,
    /// Visible messages (both kinds of queue).
    visible: usize,
    /// (deadline, id) for delayed and in-flight messages.
    timers: BTreeSet<(u64, Id)>,
    /// Every message not filed in a FIFO group (those expire in their group's seq order), in
    /// the order they expire (`model/retention.rs`): retention is evaluated against the
    /// *current* retention period, as AWS applies a changed MessageRetentionPeriod to messages
    /// already in the queue.
    retention: Retention,
    inflight: usize,
    delayed: usize,
    /// The last SequenceNumber handed out, as its offset above 2^64 (0: none yet).
    last_sequence_number: u64,
    dedup: DedupCache,
    /// The time of the last [`Queue::tick`]: every operation ticks first, so this is the time
    /// a removal happens at (whether a leaving message's dedup window is still open).
    now_ms: u64,
    attempts: HashMap<String, ReceiveAttempt>,
    attempts_order: VecDeque<(u64, String)>,
    /// Bytes of the messages held here; `usage` holds the store-wide sums.
    stored_bytes: u64,
    usage: Arc<Usage>,
}

impl Queue {
    /// A new empty queue.
    pub fn new(
        name: String,
        arn: String,
        settings: QueueSettings,
        now: u64,
        usage: Arc<Usage>,
    ) -> Self {
        Self {
            name,
            handles: receipt::Encoder::new(&arn),
            arn,
            dedup_per_group: settings.deduplication_scope == "messageGroup",
            settings,
            tags: BTreeMap::new(),
            created_ms: now,
            modified_ms: now,
            last_purge_ms: None,
            wakeup: Arc::default(),
            slots: Slab::default(),
            ready: Ready::default(),
            groups: Groups::default(),
            senders: Senders::default(),
            next_stamp: 0,
            visible: 0,
            timers: BTreeSet::new(),
            retention: Retention::default(),
            inflight: 0,
            delayed: 0,
            last_sequence_number: 0,
            dedup: DedupCache::new(),
            now_ms: now,
            attempts: HashMap::new(),
            attempts_order: VecDeque::new(),
            stored_bytes: 0,
            usage,
        }
    }

    /// Whether this is a FIFO queue.
    pub fn is_fifo(&self) -> bool {
        self.settings.fifo
    }

    /// The next FIFO SequenceNumber: strictly increasing and non-consecutive, derived from the
    /// clock like AWS's (API_SendMessage: "large, non-consecutive"), e.g. `18446746...`:
    /// 2^64 + (now << 20), or 256 past the last one if that is later. The offset above 2^64
    /// fits in 64 bits until the year 2527; past it the numbers stop growing.
    pub fn next_sequence_number(&mut self, now: u64) -> SequenceNumber {
        let from_clock = SequenceNumber::clock_base(now);
        self.last_sequence_number =
            from_clock.max(self.last_sequence_number.saturating_add(1 << 8));
        SequenceNumber::from_offset(self.last_sequence_number)
            .expect("a sequence number offset is at least 256")
    }

    /// The MessageGroupId a message was sent with, if any, shared: an answer is rendered after
    /// the queue's lock is released.
    pub fn group_name(&self, message: &Message) -> Option<Arc<str>> {
        (message.group != NO_GROUP)
            .then(|| self.groups.name(message.group).cloned())
            .flatten()
    }

    /// The SenderId of a message of this queue.
    pub fn sender_id(&self, message: &Message) -> &str {
        self.senders.name(message.sender).unwrap_or_default()
    }

    /// The group a message is filed under while visible or in flight: FIFO queues only.
    fn fifo_group(&self, message: &Message) -> Option<u32> {
        (self.is_fifo() && message.group != NO_GROUP).then_some(message.group)
    }

    /// Applies every deadline that has passed: leases and delays end, retention expires,
    /// dedup and receive-attempt windows close.
    pub fn tick(&mut self, now: u64) {
        self.now_ms = self.now_ms.max(now);
        let woke = self.drain_timers(now);
        let retention_ms = u64::from(self.settings.message_retention_period) * 1000;
        // A message enqueued at `enqueued` has expired once `enqueued + retention_ms <= now`.
        let expired_before = (now + 1).saturating_sub(retention_ms);
        while let Some((enqueued, id)) = self.retention.first_before(expired_before, &self.slots) {
            if self.remove(id).is_none() {
                // Cannot happen while `remove` takes out what it removes; never spin on it.
                debug_assert!(false, "retention names a message that is gone");
                self.retention.remove(enqueued, id);
            }
        }
        // FIFO groups expire by seq, which follows enqueue time on a monotonic clock (a wall
        // clock set back can only make a message outlive its retention by the jump).
        while let Some(id) = self.groups.oldest(&self.slots) {
            match self.slot(id) {
                Some(m) if m.enqueued_ms() + retention_ms > now => break,
                _ => {
                    // A group entry whose message is gone would be named again and again:
                    // stop rather than spin under the queue's lock (it cannot happen while
                    // `remove` unfiles what it removes; the assertion says so in tests).
                    if self.remove(id).is_none() {
                        debug_assert!(false, "a FIFO group names a message that is gone");
                        break;
                    }
                }
            }
        }
        let slots = &self.slots;
        self.dedup.expire(now, |slot| dedup_tag_at(slots, slot));
        while let Some((expires, key)) = self.attempts_order.front() {
            if *expires > now {
                break;
            }
            if self.attempts.get(key).is_some_and(|a| a.expires_ms <= now) {
                self.attempts.remove(key);
            }
            self.attempts_order.pop_front();
        }
        if woke {
            self.wakeup.wake();
        }
    }

    /// [`Queue::tick`] again at the `now` of the operation's first tick, when the operation
    /// has since only leased, re-leased or removed messages (a receive): then only its own
    /// leases of 0 s can have come due, since it added no message for retention to expire and
    /// a removal opens no deduplication record that is already closed (`DedupCache::release`).
    /// A tick's other steps are paid under the queue's lock, and a receive of ten looks again
    /// after every lease.
    pub fn tick_again(&mut self, now: u64) {
        debug_assert!(now <= self.now_ms, "tick_again before the operation's tick");
        if self.drain_timers(now) {
            self.wakeup.wake();
        }
    }

    /// Ends every lease and delay due at `now`; whether any did.
    fn drain_timers(&mut self, now: u64) -> bool {
        let mut woke = false;
        while let Some(&(at, id)) = self.timers.first() {
            if at > now {
                break;
            }
            self.timers.pop_first();
            self.make_ready(id);
            woke = true;
        }
        woke
    }

    /// The earliest time a delayed or leased message becomes visible.
    pub fn next_deadline(&self) -> Option<u64> {
        self.timers.first().map(|&(at, _)| at)
    }

    fn slot(&self, id: Id) -> Option<&Message> {
        self.slots.get(id.slot, id.seq)
    }

    fn slot_mut(&mut self, id: Id) -> Option<&mut Message> {
        self.slots.get_mut(id.slot, id.seq)
    }

    /// Marks a message visible and files it where receives look.
    fn file_visible(&mut self, id: Id) {
        let stamp = self.next_stamp;
        self.next_stamp += 1;
        let fifo = self.is_fifo();
        let Some(message) = self.slot_mut(id) else {
            return;
        };
        message.state = MessageState::Ready { stamp };
        let group = (fifo && message.group != NO_GROUP).then_some(message.group);
        self.visible += 1;
        match group {
            Some(group) => self.groups.refile(group, &self.slots),
            None => {
                self.ready.insert(id.slot, id.seq, &self.slots);
            }
        }
    }

    /// Takes a visible message out of the visible indexes (it is being leased or removed);
    /// a FIFO group is re-filed by the caller once the message's state has changed.
    fn unfile_visible(&mut self, id: Id, group: Option<u32>) {
        self.visible -= 1;
        if group.is_none() {
            self.ready.remove(id.slot, id.seq, &self.slots);
        }
    }

    fn make_ready(&mut self, id: Id) {
        let Some(message) = self.slot(id) else {
            return;
        };
        let group = self.fifo_group(message);
        let enqueued = message.enqueued_ms();
        match message.state {
            MessageState::Ready { .. } => return,
            MessageState::Delayed { .. } => {
                self.delayed -= 1;
                // A delayed FIFO message joins its group's messages now.
                if let Some(group) = group {
                    self.retention.remove(enqueued, id);
                    self.groups.file(group, id, &self.slots);
                }
            }
            MessageState::InFlight { .. } => self.inflight -= 1,
        }
        self.file_visible(id);
    }

    /// Adds a message sent by `sender` to `group`, visible after `delay_ms`, counted by
    /// [`Usage::admit`] already (a send); on a FIFO queue `dedup` is its deduplication key
    /// ([`Queue::dedup_key`]), remembered for 5 minutes from the send.
    pub fn enqueue_admitted(
        &mut self,
        message: Message,
        (group, sender): (Option<&str>, &str),
        (delay_ms, now): (u64, u64),
        dedup: Option<DedupKey>,
        _admitted: Admitted,
    ) -> Id {
        let id = self.insert(message, group, sender, delay_ms, now);
        if let Some(key) = dedup {
            self.remember_send(key, id);
        }
        id
    }

    /// Indexes the send of the message `id` under `key`: the message is the record while it
    /// is stored (`model/dedup.rs`).
    fn remember_send(&mut self, key: DedupKey, id: Id) {
        let Some(message) = self.slots.get_mut(id.slot, id.seq) else {
            return;
        };
        if id.slot <= MAX_INDEXED_SLOT {
            message.set_dedup_tag(key.tag());
            let slots = &self.slots;
            self.dedup
                .remember_stored(key, id.slot, |slot| dedup_tag_at(slots, slot));
        } else if let Some(sequence_number) = message.sequence_number() {
            let original = Original {
                origin: message.origin(),
                sequence_number,
            };
            let expires_ms = message.sent_ms() + DEDUP_WINDOW_MS;
            let slots = &self.slots;
            self.dedup
                .remember(key, original, expires_ms, |slot| dedup_tag_at(slots, slot));
        }
    }

    /// Adds a message that another queue gave up (a dead-letter move, a move task), visible
    /// now, counting it again in the store-wide usage.
    pub fn enqueue_moved(&mut self, taken: Taken, now: u64) -> Id {
        let size = taken.message.size() as u64;
        self.usage.add(1, size);
        self.insert(taken.message, taken.group.as_deref(), &taken.sender, 0, now)
    }

    fn insert(
        &mut self,
        mut message: Message,
        group: Option<&str>,
        sender: &str,
        delay_ms: u64,
        now: u64,
    ) -> Id {
        message.sender = self.senders.join(sender);
        let size = message.size() as u64;
        let enqueued = message.enqueued_ms();
        message.group = match group {
            Some(name) => {
                let index = self.groups.intern(name);
                self.groups.join(index);
                index
            }
            None => NO_GROUP,
        };
        let fifo_group = self.fifo_group(&message);
        let seq = message.seq;
        let slot = self.slots.insert(message);
        let id = Id { slot, seq };
        match fifo_group {
            Some(group) if delay_ms == 0 => self.groups.file(group, id, &self.slots),
            _ => self.retention.insert(enqueued, id),
        }
        if delay_ms > 0 {
            let until = now + delay_ms;
            if let Some(m) = self.slot_mut(id) {
                m.state = MessageState::Delayed { until };
            }
            self.timers.insert((until, id));
            self.delayed += 1;
        } else {
            self.file_visible(id);
        }
        self.stored_bytes += size;
        self.wakeup.wake();
        id
    }

    /// Removes a message from every index.
    pub fn remove(&mut self, id: Id) -> Option<Taken> {
        let message = self.slot(id)?;
        let group = self.fifo_group(message);
        let state = message.state;
        let enqueued = message.enqueued_ms();
        match state {
            MessageState::Ready { .. } => self.unfile_visible(id, group),
            MessageState::Delayed { until } => {
                self.timers.remove(&(until, id));
                self.delayed -= 1;
            }
            MessageState::InFlight { until, .. } => {
                self.timers.remove(&(until, id));
                self.inflight -= 1;
            }
        }
        match group {
            Some(group) if !matches!(state, MessageState::Delayed { .. }) => {
                self.groups.unfile(group, id, &self.slots);
            }
            _ => self.retention.remove(enqueued, id),
        }
        self.release_send(id);
        let mut message = self.slots.take(id.slot)?;
        let name = match message.group {
            NO_GROUP => None,
            index => {
                let name = self.groups.leave(index);
                if let Some(group) = group {
                    self.groups.refile(group, &self.slots);
                }
                name
            }
        };
        message.group = NO_GROUP;
        message.set_dedup_tag(0);
        let sender = self
            .senders
            .leave(message.sender)
            .unwrap_or_else(|| Arc::from(""));
        let size = message.size() as u64;
        self.stored_bytes -= size;
        self.usage.sub(1, size);
        Some(Taken {
            message,
            group: name,
            sender,
        })
    }

    /// The message `id` is leaving: its send, if the index names it, becomes a record of its
    /// own while its window lasts (`model/dedup.rs`).
    fn release_send(&mut self, id: Id) {
        let Some(message) = self.slot(id) else {
            return;
        };
        let tag = message.dedup_tag();
        if tag == 0 {
            return;
        }
        let expires_ms = message.sent_ms() + DEDUP_WINDOW_MS;
        let sends = FifoSends {
            slots: &self.slots,
            groups: &self.groups,
            per_group: self.dedup_per_group,
        };
        self.dedup
            .release((id.slot, tag), expires_ms, self.now_ms, |cache| {
                sends
                    .send(id.slot, cache)
                    .map(|(key, original, _)| (key, original))
            });
    }

    /// The message with this id.
    pub fn get(&self, id: Id) -> Option<&Message> {
        self.slot(id)
    }

    /// Visible messages that may be delivered now, in delivery order, at most `max`.
    ///
    /// Standard queues: send order. FIFO: group by group, each group's deliverable messages
    /// together (those before its first in-flight one), groups in the order their first
    /// deliverable message became available, so a group made visible again queues behind the
    /// groups already waiting (AWS-recorded `test_fifo_receive_message_group_id_ordering`,
    /// `test_fifo_receive_message_with_zero_visibility_timeout`,
    /// `test_fifo_message_group_visibility_after_delete`). Cost: O(max · log n).
    pub fn candidates(&self, max: usize) -> Vec<Id> {
        if !self.is_fifo() {
            return self
                .ready
                .iter()
                .take(max)
                .filter_map(|slot| self.slots.at(slot).map(|m| Id { slot, seq: m.seq }))
                .collect();
        }
        self.groups.deliverable(max, &self.slots)
    }

    /// Leases a visible message for `visibility_ms` under receipt `nonce`.
    ///
    /// A lease of 0 s ends as it starts: the message is counted as received and made visible
    /// again at once, with a new stamp, as [`Queue::tick_again`] would at the receive's next
    /// look, without its round trip through the visible indexes and the timers (a receive of
    /// ten with `VisibilityTimeout=0` made twenty tree updates for nothing).
    pub fn lease(&mut self, id: Id, visibility_ms: u64, nonce: u64, now: u64) -> Option<&Message> {
        let message = self.slot(id)?;
        if !message.state.is_ready() {
            return None;
        }
        let group = self.fifo_group(message);
        if visibility_ms == 0 {
            return self.lease_for_nothing(id, group, now);
        }
        self.unfile_visible(id, group);
        let until = now + visibility_ms;
        let message = self.slot_mut(id)?;
        message.state = MessageState::in_flight(until, nonce, now);
        message.receive_count += 1;
        message.received_first_at(now);
        self.timers.insert((until, id));
        self.inflight += 1;
        if let Some(group) = group {
            self.groups.refile(group, &self.slots);
        }
        self.slot(id)
    }

    /// [`Queue::lease`] of 0 s of the visible message `id` (of FIFO group `group`): the end
    /// state of leasing it and ending the lease at once. The visible counts and the standard
    /// queue's index are as before; a FIFO group is keyed by its first message's stamp, so
    /// re-filing it once under the new stamp is what re-filing it without, then with, it was.
    fn lease_for_nothing(&mut self, id: Id, group: Option<u32>, now: u64) -> Option<&Message> {
        let stamp = self.next_stamp;
        self.next_stamp += 1;
        let message = self.slot_mut(id)?;
        message.state = MessageState::Ready { stamp };
        message.receive_count += 1;
        message.received_first_at(now);
        if let Some(group) = group {
            self.groups.refile(group, &self.slots);
        }
        self.wakeup.wake();
        self.slot(id)
    }

    /// The messages leased right now, oldest first (what a chaos duplicate may copy): every
    /// leased message has a timer, so this costs O(leased + delayed), not O(stored).
    pub fn leased_ids(&self) -> Vec<Id> {
        let mut ids: Vec<Id> = self
            .timers
            .iter()
            .map(|&(_, id)| id)
            .filter(|&id| {
                self.slot(id)
                    .is_some_and(|m| matches!(m.state, MessageState::InFlight { .. }))
            })
            .collect();
        ids.sort_unstable_by_key(|id| id.seq);
        ids
    }

    /// Delivers a leased message once more under a new receipt `nonce` and a lease of
    /// `visibility_ms` from now, counting the receive (a chaos duplicate: at-least-once).
    pub fn lease_copy(&mut self, id: Id, visibility_ms: u64, nonce: u64, now: u64) -> bool {
        if !self.set_visibility(id, nonce, now + visibility_ms, now) {
            return false;
        }
        match self.slot_mut(id) {
            Some(message) => {
                message.receive_count += 1;
                true
            }
            None => false,
        }
    }

    /// Sets a new visibility deadline for a message, leasing it again if it was visible.
    ///
    /// The receive time is kept for in-flight messages so the 12-hour total cap counts from
    /// the receive. Returns false when the message does not exist or is delayed.
    pub fn set_visibility(&mut self, id: Id, nonce: u64, until: u64, now: u64) -> bool {
        let Some(message) = self.slot(id) else {
            return false;
        };
        let group = self.fifo_group(message);
        let (received_at, newly_leased) = match message.state {
            MessageState::Delayed { .. } => return false,
            MessageState::Ready { .. } => {
                self.unfile_visible(id, group);
                self.inflight += 1;
                (now, true)
            }
            state @ MessageState::InFlight { until: old, .. } => {
                self.timers.remove(&(old, id));
                (state.received_at().unwrap_or(now), false)
            }
        };
        if let Some(message) = self.slot_mut(id) {
            message.state = MessageState::in_flight(until, nonce, received_at);
        }
        if let Some(group) = group.filter(|_| newly_leased) {
            self.groups.refile(group, &self.slots);
        }
        self.timers.insert((until, id));
        if until <= now {
            self.tick(now);
        }
        true
    }

    /// Deletes every message, leased and delayed ones included, and the dedup cache
    /// (TEST-PY `test_purge_queue_clears_fifo_deduplication_cache`).
    pub fn purge(&mut self) {
        self.release_usage();
        self.slots.clear();
        self.ready.clear();
        self.groups.clear();
        self.senders.clear();
        self.visible = 0;
        self.timers.clear();
        self.retention.clear();
        self.inflight = 0;
        self.delayed = 0;
        self.dedup.clear();
        self.attempts.clear();
        self.attempts_order.clear();
    }

    /// Takes this queue's messages out of the store-wide counts.
    fn release_usage(&mut self) {
        let stored = self.slots.stored() as u64;
        self.usage.sub(stored, self.stored_bytes);
        self.stored_bytes = 0;
    }

    /// The MessageId of every message the queue still stores, in slot order.
    pub fn stored_message_ids(&self, ids: &MessageIds) -> Vec<String> {
        self.slots.iter().map(|m| m.id_string(ids)).collect()
    }

    /// (visible, in flight, delayed) counts.
    pub fn counts(&self) -> (usize, usize, usize) {
        (self.visible, self.inflight, self.delayed)
    }

    /// Visible messages in delivery order, ignoring FIFO group blocking (for move tasks).
    pub fn ready_ids(&self, max: usize) -> Vec<Id> {
        if !self.is_fifo() {
            return self.candidates(max);
        }
        self.groups.visible_in_send_order(max, &self.slots)
    }

    /// The deduplication key of `dedup_id` sent to `group`, in the scope the queue was
    /// created with (`dedup_per_group`).
    pub fn dedup_key(&self, group: &str, dedup_id: &str) -> DedupKey {
        self.dedup
            .key(self.dedup_per_group.then_some(group), dedup_id)
    }

    /// The send a duplicate of `key` is answered with, while its window lasts.
    pub fn dedup_lookup(&self, key: DedupKey, now: u64) -> Option<Original> {
        let sends = FifoSends {
            slots: &self.slots,
            groups: &self.groups,
            per_group: self.dedup_per_group,
        };
        self.dedup.lookup(key, now, &sends)
    }

    /// A live receive attempt.
    pub fn attempt(&self, id: &str, now: u64) -> Option<&ReceiveAttempt> {
        self.attempts.get(id).filter(|a| a.expires_ms > now)
    }

    /// Remembers a FIFO receive attempt.
    pub fn remember_attempt(&mut self, id: String, attempt: ReceiveAttempt) {
        self.attempts_order
            .push_back((attempt.expires_ms, id.clone()));
        self.attempts.insert(id, attempt);
    }
}

/// A FIFO queue's stored messages as the records of their sends (`model/dedup.rs`).
struct FifoSends<'a> {
    slots: &'a Slab,
    groups: &'a Groups,
    per_group: bool,
}

/// The dedup tag of the message in `slot` (0: no message there, or one not indexed): what the
/// dedup index hashes its entries by (`model/dedup.rs`).
fn dedup_tag_at(slots: &Slab, slot: u32) -> u32 {
    slots.at(slot).map_or(0, Message::dedup_tag)
}

impl StoredSends for FifoSends<'_> {
    fn tag(&self, slot: u32) -> u32 {
        dedup_tag_at(self.slots, slot)
    }

    fn send(&self, slot: u32, cache: &DedupCache) -> Option<(DedupKey, Original, u64)> {
        let message = self.slots.at(slot)?;
        let dedup_id = message.dedup_id()?;
        let group = match self.per_group {
            true => Some(self.groups.name(message.group)?),
            false => None,
        };
        let original = Original {
            origin: message.origin(),
            sequence_number: message.sequence_number()?,
        };
        let key = cache.key(group.map(|g| &**g), &dedup_id);
        Some((key, original, message.sent_ms() + DEDUP_WINDOW_MS))
    }
}

/// A deleted queue's messages leave the store with it, whichever path dropped it.
impl Drop for Queue {
    fn drop(&mut self) {
        self.release_usage();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::message::DedupId;

    fn fifo() -> Queue {
        let usage = Arc::new(Usage::default());
        Queue::new(
            "q.fifo".into(),
            "arn".into(),
            QueueSettings::new(true),
            0,
            usage,
        )
    }

    /// Stores a message as a send does, counted in the usage.
    fn store(queue: &mut Queue, message: Message, group: &str, delay_ms: u64, now: u64) -> Id {
        queue.usage.add(1, message.size() as u64);
        queue.insert(message, Some(group), "sender", delay_ms, now)
    }

    fn put(queue: &mut Queue, seq: u64, group: &str) -> Id {
        let message = Message::new(seq, "b", DedupId::None, 0, 0);
        store(queue, message, group, 0, 0)
    }

    #[test]
    fn groups_are_served_together_and_move_tasks_see_every_visible_message() {
        let mut queue = fifo();
        let a1 = put(&mut queue, 1, "a");
        let b1 = put(&mut queue, 2, "b");
        let a2 = put(&mut queue, 3, "a");
        assert_eq!(queue.candidates(10), [a1, a2, b1]);
        queue.lease(a1, 1000, 7, 0);
        assert_eq!(
            queue.candidates(10),
            [b1],
            "a is blocked behind its leased head"
        );
        assert_eq!(
            queue.ready_ids(10),
            [b1, a2],
            "a move task takes visible ones in send order"
        );
        queue.remove(a1);
        assert_eq!(
            queue.candidates(10),
            [b1, a2],
            "a2 keeps the place of its send, after b1"
        );
        assert_eq!(queue.counts(), (2, 0, 0));
        queue.purge();
        assert_eq!(queue.counts(), (0, 0, 0));
        assert!(queue.groups.is_empty());
    }

    // The shortcut a lease of 0 s takes ends where a lease ended by its timer does.
    #[test]
    fn a_lease_of_0_s_ends_as_a_lease_ended_by_its_timer_would() {
        for fifo_queue in [true, false] {
            let make = || {
                let mut queue = fifo();
                queue.settings.fifo = fifo_queue;
                let ids: Vec<Id> = [(1, "a"), (2, "a"), (3, "b"), (4, "c")]
                    .into_iter()
                    .map(|(seq, group)| put(&mut queue, seq, group))
                    .collect();
                (queue, ids)
            };
            let (mut shortcut, ids) = make();
            let (mut timed, _) = make();
            for (i, &id) in ids.iter().take(2).enumerate() {
                let nonce = i as u64 + 1;
                assert!(shortcut.lease(id, 0, nonce, 5).is_some());
                assert!(timed.lease(id, 1_000, nonce, 5).is_some());
                timed.tick(1_005);
            }
            for queue in [&shortcut, &timed] {
                assert_eq!(queue.next_deadline(), None);
            }
            assert_eq!(shortcut.counts(), timed.counts(), "fifo {fifo_queue}");
            assert_eq!(shortcut.candidates(10), timed.candidates(10));
            for &id in &ids {
                let (a, b) = (shortcut.get(id).unwrap(), timed.get(id).unwrap());
                assert_eq!(a.state, b.state);
                assert_eq!(a.receive_count, b.receive_count);
                assert_eq!(a.first_receive_ms(), b.first_receive_ms());
            }
        }
    }

    #[test]
    fn a_stale_id_never_reaches_a_reused_slot() {
        let mut queue = fifo();
        let first = put(&mut queue, 1, "a");
        queue.remove(first);
        let second = put(&mut queue, 2, "a");
        assert_eq!(first.slot, second.slot);
        assert!(queue.get(first).is_none());
        assert!(queue.remove(first).is_none());
        assert!(queue.get(second).is_some());
    }

    #[test]
    fn sequence_numbers_are_large_increasing_and_not_consecutive() {
        let mut queue = fifo();
        let a = queue.next_sequence_number(1_764_000_000_000);
        let b = queue.next_sequence_number(1_764_000_000_000);
        assert!(a.value() > u128::from(u64::MAX) && b.value() > a.value() + 1);
        assert_eq!(a.to_string().len(), 20);
    }

    #[test]
    fn fifo_retention_expires_oldest_first_across_groups_and_delays() {
        let mut queue = fifo();
        queue.settings.message_retention_period = 60;
        let a1 = put(&mut queue, 1, "a");
        let late = Message::new(2, "b", DedupId::None, 10_000, 0);
        let b1 = store(&mut queue, late, "b", 0, 10_000);
        // A delayed message waits outside its group, under the queue's retention set.
        let delayed = Message::new(3, "c", DedupId::None, 20_000, 0);
        let a2 = store(&mut queue, delayed, "a", 5_000, 20_000);
        assert_eq!(queue.counts(), (2, 0, 1));
        queue.tick(25_000);
        assert_eq!(queue.counts(), (3, 0, 0));
        assert_eq!(queue.candidates(10), [a1, a2, b1]);
        queue.tick(60_000);
        assert!(queue.get(a1).is_none() && queue.get(b1).is_some());
        queue.tick(70_000);
        assert!(queue.get(b1).is_none() && queue.get(a2).is_some());
        assert_eq!(queue.candidates(10), [a2]);
        queue.tick(80_000);
        assert_eq!(queue.counts(), (0, 0, 0));
        assert!(queue.groups.is_empty() && queue.retention.is_empty());
    }

    #[test]
    fn a_taken_message_carries_its_group_name_and_is_refiled_elsewhere() {
        let mut queue = fifo();
        let id = put(&mut queue, 1, "g-1");
        assert_eq!(
            queue.group_name(queue.get(id).unwrap()).as_deref(),
            Some("g-1")
        );
        let taken = queue.remove(id).unwrap();
        assert_eq!(taken.group.as_deref(), Some("g-1"));
        assert_eq!(&*taken.sender, "sender");
        assert!(
            queue.groups.is_empty(),
            "a group goes with its last message"
        );
        let mut other = fifo();
        put(&mut other, 2, "x");
        let moved = other.enqueue_moved(taken, 0);
        let message = other.get(moved).unwrap();
        assert_eq!(other.group_name(message).as_deref(), Some("g-1"));
        assert_eq!(other.sender_id(message), "sender");
        assert_eq!(other.candidates(10).len(), 2);
    }

    #[test]
    fn a_group_blocked_by_a_lease_reopens_behind_the_waiting_groups() {
        let mut queue = fifo();
        let a1 = put(&mut queue, 1, "a");
        let a2 = put(&mut queue, 2, "a");
        let b1 = put(&mut queue, 3, "b");
        queue.lease(a1, 1_000, 1, 0);
        assert_eq!(queue.candidates(10), [b1]);
        queue.tick(1_000);
        assert_eq!(queue.candidates(10), [b1, a1, a2]);
        assert!(
            queue.set_visibility(a1, 2, 5_000, 1_000),
            "a visible FIFO message leased"
        );
        assert_eq!(queue.candidates(10), [b1]);
        assert_eq!(queue.ready_ids(10), [a2, b1]);
    }

    /// Sends `dedup_id` to `group` as the send path does: looked up, and remembered with the
    /// message it stores unless it is a duplicate.
    fn send_dedup(queue: &mut Queue, seq: u64, group: &str, dedup_id: &str, now: u64) -> Id {
        let key = queue.dedup_key(group, dedup_id);
        let mut message = Message::new(seq, "b", DedupId::Explicit(dedup_id), now, 0);
        message.set_sequence_number(Some(queue.next_sequence_number(now)));
        let id = store(queue, message, group, 0, now);
        queue.remember_send(key, id);
        id
    }

    fn original_of(queue: &Queue, id: Id) -> Option<Original> {
        let message = queue.get(id)?;
        Some(Original {
            origin: message.origin(),
            sequence_number: message.sequence_number()?,
        })
    }

    #[test]
    fn deduplication_follows_the_scope_the_queue_was_created_with() {
        let mut queue = fifo();
        let id = send_dedup(&mut queue, 1, "g1", "d", 0);
        let original = original_of(&queue, id);
        assert!(original.is_some());
        assert_eq!(queue.dedup_lookup(queue.dedup_key("g2", "d"), 1), original);
        // SetQueueAttributes changing the scope later does not move it (AWS-recorded
        // `test_fifo_change_to_high_throughput_after_creation`): still queue-wide.
        queue.settings.deduplication_scope = "messageGroup".into();
        assert_eq!(queue.dedup_lookup(queue.dedup_key("g2", "d"), 1), original);
        // A queue created per group keys by group.
        queue.dedup_per_group = true;
        assert_eq!(queue.dedup_lookup(queue.dedup_key("g2", "d"), 1), None);
        queue.tick(DEDUP_WINDOW_MS);
        queue.dedup_per_group = false;
        assert_eq!(
            queue.dedup_lookup(queue.dedup_key("g1", "d"), DEDUP_WINDOW_MS),
            None
        );
    }

    #[test]
    fn a_stored_message_answers_for_its_send_and_a_record_takes_over_when_it_leaves() {
        let mut queue = fifo();
        queue.dedup_per_group = true;
        let id = send_dedup(&mut queue, 1, "g1", "d", 0);
        let original = original_of(&queue, id);
        let key = queue.dedup_key("g1", "d");
        assert_eq!(queue.dedup_lookup(key, 10), original);
        assert_eq!(
            (queue.dedup.len(), queue.get(id).unwrap().dedup_tag()),
            (0, key.tag())
        );
        // Deleted inside its window: the group is gone with it, the record answers.
        queue.tick(10);
        let taken = queue.remove(id).unwrap();
        assert_eq!(
            taken.message.dedup_tag(),
            0,
            "a moved message is not indexed elsewhere"
        );
        assert!(queue.groups.is_empty());
        assert_eq!(queue.dedup.len(), 1);
        assert_eq!(queue.dedup_lookup(key, 10), original);
        queue.tick(DEDUP_WINDOW_MS);
        assert_eq!(queue.dedup_lookup(key, DEDUP_WINDOW_MS), None);
        assert_eq!(queue.dedup.len(), 0);
        // One that leaves after its window leaves nothing behind; a purge forgets everything.
        let late = send_dedup(&mut queue, 2, "g1", "e", DEDUP_WINDOW_MS);
        queue.tick(3 * DEDUP_WINDOW_MS);
        queue.remove(late);
        assert_eq!(queue.dedup.len(), 0);
        send_dedup(&mut queue, 3, "g1", "f", 3 * DEDUP_WINDOW_MS);
        queue.purge();
        let key = queue.dedup_key("g1", "f");
        assert_eq!(queue.dedup_lookup(key, 3 * DEDUP_WINDOW_MS), None);
    }
}
