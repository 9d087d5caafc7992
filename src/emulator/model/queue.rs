//! One queue's messages and the indexes that keep every operation's cost independent of how
//! many messages the queue holds.
//!
//! Messages live in a slab (`Vec` of slots, freed slots reused) and are named by [`Id`], their
//! slot plus their store-wide seq, so a stale id never reaches a reused slot. Around the slab:
//! - `ready`: visible messages of a standard queue, by seq (delivery in send order);
//! - FIFO: per message group, its visible messages by seq and its in-flight seqs, and
//!   `ready_groups`, the groups that can deliver now, ordered by when their first deliverable
//!   message became available (AWS-recorded group order, `docs/emulator.md`);
//! - `timers` for delays and leases, `retention` for expiry, as in mini-redis's `db.rs`:
//!   deadlines in ordered sets drained lazily by [`Queue::tick`] at the start of every
//!   operation, so there is no background timer. Long polls sleep until the earliest deadline
//!   ([`Queue::next_deadline`]) or a `Notify` wake, whichever comes first.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BTreeSet, BinaryHeap, HashMap, VecDeque};
use std::sync::Arc;

use tokio::sync::Notify;

use crate::emulator::model::attributes::QueueSettings;
use crate::emulator::model::message::{Message, MessageState};
use crate::emulator::model::usage::Usage;

/// FIFO deduplication interval: 5 minutes (API_SendMessage, MessageDeduplicationId).
pub(crate) const DEDUP_WINDOW_MS: u64 = 5 * 60 * 1000;
/// How long a ReceiveRequestAttemptId can be retried: 5 minutes (API_ReceiveMessage).
pub(crate) const ATTEMPT_WINDOW_MS: u64 = 5 * 60 * 1000;

/// A stored message's name: its slot in the queue's slab and its store-wide seq.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) struct Id {
    pub slot: u32,
    pub seq: u64,
}

/// What the first send with a deduplication id produced; duplicates answer the same.
#[derive(Debug, Clone)]
pub(crate) struct DedupEntry {
    pub message_id: u128,
    pub sequence_number: Option<u128>,
    pub expires_ms: u64,
}

/// A FIFO receive remembered by its ReceiveRequestAttemptId.
#[derive(Debug, Clone)]
pub(crate) struct ReceiveAttempt {
    /// (message, nonce) of each message returned, in order.
    pub leases: Vec<(Id, u64)>,
    pub expires_ms: u64,
}

/// A FIFO message group's state.
#[derive(Debug, Default)]
struct Group {
    /// Visible messages: seq → slot.
    visible: BTreeMap<u64, u32>,
    /// Seqs in flight. A visible message is deliverable only while no earlier message of its
    /// group is in flight (AWS-recorded, `test_fifo_message_group_visibility_after_*`).
    inflight: BTreeSet<u64>,
    /// The key this group holds in `ready_groups`, while it can deliver.
    key: Option<u64>,
    /// Messages of the group stored in any state; the group is dropped at zero.
    stored: u32,
}

impl Group {
    /// Whether the group can deliver now: its first visible message is before its first
    /// in-flight one.
    fn head(&self) -> Option<(u64, u32)> {
        let (&seq, &slot) = self.visible.first_key_value()?;
        match self.inflight.first() {
            Some(&first) if first < seq => None,
            _ => Some((seq, slot)),
        }
    }
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
    pub notify: Arc<Notify>,
    slots: Vec<Option<Message>>,
    free: Vec<u32>,
    /// Standard queues: visible messages, seq → slot.
    ready: BTreeMap<u64, u32>,
    /// FIFO: groups by id, and the deliverable ones by key (head's ready stamp).
    groups: HashMap<Arc<str>, Group>,
    ready_groups: BTreeSet<(u64, Arc<str>)>,
    next_stamp: u64,
    /// Visible messages (both kinds of queue).
    visible: usize,
    /// (deadline, id) for delayed and in-flight messages.
    timers: BTreeSet<(u64, Id)>,
    /// (enqueued_ms, id): retention is evaluated against the *current* retention period, as AWS
    /// applies a changed MessageRetentionPeriod to messages already in the queue.
    retention: BTreeSet<(u64, Id)>,
    inflight: usize,
    delayed: usize,
    last_sequence_number: u128,
    dedup: HashMap<Arc<str>, DedupEntry>,
    dedup_order: VecDeque<(u64, Arc<str>)>,
    attempts: HashMap<String, ReceiveAttempt>,
    attempts_order: VecDeque<(u64, String)>,
    /// Bytes of the messages held here; `usage` holds the store-wide sums.
    stored_bytes: u64,
    usage: Arc<Usage>,
}

/// 2^64: AWS's FIFO sequence numbers are 128-bit, 20-digit decimals above u64's range.
const SEQUENCE_BASE: u128 = 1 << 64;

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
            arn,
            dedup_per_group: settings.deduplication_scope == "messageGroup",
            settings,
            tags: BTreeMap::new(),
            created_ms: now,
            modified_ms: now,
            last_purge_ms: None,
            notify: Arc::new(Notify::new()),
            slots: Vec::new(),
            free: Vec::new(),
            ready: BTreeMap::new(),
            groups: HashMap::new(),
            ready_groups: BTreeSet::new(),
            next_stamp: 0,
            visible: 0,
            timers: BTreeSet::new(),
            retention: BTreeSet::new(),
            inflight: 0,
            delayed: 0,
            last_sequence_number: 0,
            dedup: HashMap::new(),
            dedup_order: VecDeque::new(),
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
    /// clock like AWS's (API_SendMessage: "large, non-consecutive"), e.g. `18446746...`.
    pub fn next_sequence_number(&mut self, now: u64) -> u128 {
        let from_clock = SEQUENCE_BASE + (u128::from(now) << 20);
        self.last_sequence_number = from_clock.max(self.last_sequence_number + (1 << 8));
        self.last_sequence_number
    }

    /// The group of a FIFO message, shared with the group table so every message of a group
    /// holds the same allocation.
    pub fn intern_group(&self, group: &str) -> Arc<str> {
        match self.groups.get_key_value(group) {
            Some((key, _)) => Arc::clone(key),
            None => Arc::from(group),
        }
    }

    /// Applies every deadline that has passed: leases and delays end, retention expires,
    /// dedup and receive-attempt windows close.
    pub fn tick(&mut self, now: u64) {
        let mut woke = false;
        while let Some(&(at, id)) = self.timers.first() {
            if at > now {
                break;
            }
            self.timers.pop_first();
            self.make_ready(id);
            woke = true;
        }
        let retention_ms = u64::from(self.settings.message_retention_period) * 1000;
        while let Some(&(enqueued, id)) = self.retention.first() {
            if enqueued + retention_ms > now {
                break;
            }
            self.remove(id);
        }
        while let Some((expires, key)) = self.dedup_order.front() {
            if *expires > now {
                break;
            }
            if self.dedup.get(key).is_some_and(|e| e.expires_ms <= now) {
                self.dedup.remove(key);
            }
            self.dedup_order.pop_front();
        }
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
            self.notify.notify_waiters();
        }
    }

    /// The earliest time a delayed or leased message becomes visible.
    pub fn next_deadline(&self) -> Option<u64> {
        self.timers.first().map(|&(at, _)| at)
    }

    fn slot(&self, id: Id) -> Option<&Message> {
        self.slots
            .get(id.slot as usize)
            .and_then(Option::as_ref)
            .filter(|m| m.seq == id.seq)
    }

    fn slot_mut(&mut self, id: Id) -> Option<&mut Message> {
        self.slots
            .get_mut(id.slot as usize)
            .and_then(Option::as_mut)
            .filter(|m| m.seq == id.seq)
    }

    /// Re-files a FIFO group in `ready_groups` after its visible or in-flight set changed.
    fn refile_group(&mut self, group: &Arc<str>) {
        let Some(state) = self.groups.get_mut(group) else {
            return;
        };
        let key = state
            .head()
            .and_then(|(_, slot)| self.slots[slot as usize].as_ref().map(|m| m.ready_stamp));
        if state.key != key {
            if let Some(old) = state.key.take() {
                self.ready_groups.remove(&(old, Arc::clone(group)));
            }
            if let Some(new) = key {
                self.ready_groups.insert((new, Arc::clone(group)));
            }
            state.key = key;
        }
        if state.stored == 0 {
            self.groups.remove(group);
        }
    }

    /// Files a message that has just become visible.
    fn file_visible(&mut self, id: Id) {
        let stamp = self.next_stamp;
        self.next_stamp += 1;
        let fifo = self.is_fifo();
        let Some(message) = self.slot_mut(id) else {
            return;
        };
        message.state = MessageState::Ready;
        message.ready_stamp = stamp;
        let group = message.group_id().cloned();
        self.visible += 1;
        match group.filter(|_| fifo) {
            Some(group) => {
                self.groups
                    .entry(Arc::clone(&group))
                    .or_default()
                    .visible
                    .insert(id.seq, id.slot);
                self.refile_group(&group);
            }
            None => {
                self.ready.insert(id.seq, id.slot);
            }
        }
    }

    /// Takes a visible message out of the visible indexes (it is being leased or removed).
    fn unfile_visible(&mut self, id: Id, group: Option<&Arc<str>>) {
        self.visible -= 1;
        match group.filter(|_| self.is_fifo()) {
            Some(group) => {
                if let Some(state) = self.groups.get_mut(group) {
                    state.visible.remove(&id.seq);
                }
            }
            None => {
                self.ready.remove(&id.seq);
            }
        }
    }

    fn make_ready(&mut self, id: Id) {
        let Some(message) = self.slot(id) else {
            return;
        };
        let group = message.group_id().cloned();
        match message.state {
            MessageState::Ready => return,
            MessageState::Delayed { .. } => self.delayed -= 1,
            MessageState::InFlight { .. } => {
                self.inflight -= 1;
                if let Some(state) = group.as_ref().and_then(|g| self.groups.get_mut(g)) {
                    state.inflight.remove(&id.seq);
                }
            }
        }
        self.file_visible(id);
    }

    /// Adds a message, visible after `delay_ms`.
    pub fn enqueue(&mut self, mut message: Message, delay_ms: u64, now: u64) -> Id {
        let size = message.size() as u64;
        let enqueued = message.enqueued_ms;
        if let Some(group) = message.group_id().cloned() {
            let shared = self.intern_group(&group);
            message.extra_mut().group_id = Some(Arc::clone(&shared));
            self.groups.entry(shared).or_default().stored += 1;
        }
        message.state = MessageState::Ready;
        let seq = message.seq;
        let slot = match self.free.pop() {
            Some(slot) => {
                self.slots[slot as usize] = Some(message);
                slot
            }
            None => {
                self.slots.push(Some(message));
                (self.slots.len() - 1) as u32
            }
        };
        let id = Id { slot, seq };
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
        self.retention.insert((enqueued, id));
        self.stored_bytes += size;
        self.usage.add(1, size);
        self.notify.notify_waiters();
        id
    }

    /// Removes a message from every index.
    pub fn remove(&mut self, id: Id) -> Option<Message> {
        let message = self.slot(id)?;
        let group = message.group_id().cloned();
        let state = message.state;
        match state {
            MessageState::Ready => self.unfile_visible(id, group.as_ref()),
            MessageState::Delayed { until } => {
                self.timers.remove(&(until, id));
                self.delayed -= 1;
            }
            MessageState::InFlight { until, .. } => {
                self.timers.remove(&(until, id));
                self.inflight -= 1;
                if let Some(state) = group.as_ref().and_then(|g| self.groups.get_mut(g)) {
                    state.inflight.remove(&id.seq);
                }
            }
        }
        let message = self.slots[id.slot as usize].take()?;
        self.free.push(id.slot);
        if let Some(group) = &group
            && let Some(state) = self.groups.get_mut(group)
        {
            state.stored -= 1;
            self.refile_group(group);
        }
        self.retention.remove(&(message.enqueued_ms, id));
        let size = message.size() as u64;
        self.stored_bytes -= size;
        self.usage.sub(1, size);
        Some(message)
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
                .map(|(&seq, &slot)| Id { slot, seq })
                .collect();
        }
        let mut out = Vec::new();
        for (_, group) in &self.ready_groups {
            let Some(state) = self.groups.get(group) else {
                continue;
            };
            let limit = state.inflight.first().copied().unwrap_or(u64::MAX);
            for (&seq, &slot) in state.visible.range(..limit) {
                if out.len() >= max {
                    return out;
                }
                out.push(Id { slot, seq });
            }
        }
        out
    }

    /// Leases a visible message for `visibility_ms` under receipt `nonce`.
    pub fn lease(&mut self, id: Id, visibility_ms: u64, nonce: u64, now: u64) -> Option<&Message> {
        let message = self.slot(id)?;
        if message.state != MessageState::Ready {
            return None;
        }
        let group = message.group_id().cloned();
        self.unfile_visible(id, group.as_ref());
        let until = now + visibility_ms;
        let message = self.slot_mut(id)?;
        message.state = MessageState::InFlight {
            until,
            nonce,
            received_at: now,
        };
        message.receive_count += 1;
        if message.first_receive_ms == 0 {
            message.first_receive_ms = now;
        }
        self.timers.insert((until, id));
        self.inflight += 1;
        if let Some(group) = group.filter(|_| self.is_fifo()) {
            if let Some(state) = self.groups.get_mut(&group) {
                state.inflight.insert(id.seq);
            }
            self.refile_group(&group);
        }
        self.slot(id)
    }

    /// The messages leased right now, oldest first (what a chaos duplicate may copy).
    pub fn leased_ids(&self) -> Vec<Id> {
        let mut ids: Vec<Id> = self
            .slots
            .iter()
            .enumerate()
            .filter_map(|(slot, m)| {
                let m = m.as_ref()?;
                matches!(m.state, MessageState::InFlight { .. }).then_some(Id {
                    slot: slot as u32,
                    seq: m.seq,
                })
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
    /// `received_at` is kept for in-flight messages so the 12-hour total cap counts from the
    /// receive. Returns false when the message does not exist or is delayed.
    pub fn set_visibility(&mut self, id: Id, nonce: u64, until: u64, now: u64) -> bool {
        let Some(message) = self.slot(id) else {
            return false;
        };
        let group = message.group_id().cloned();
        let received_at = match message.state {
            MessageState::Delayed { .. } => return false,
            MessageState::Ready => {
                self.unfile_visible(id, group.as_ref());
                self.inflight += 1;
                if let Some(group) = group.as_ref().filter(|_| self.is_fifo()) {
                    if let Some(state) = self.groups.get_mut(group) {
                        state.inflight.insert(id.seq);
                    }
                    self.refile_group(group);
                }
                now
            }
            MessageState::InFlight {
                until: old,
                received_at,
                ..
            } => {
                self.timers.remove(&(old, id));
                received_at
            }
        };
        if let Some(message) = self.slot_mut(id) {
            message.state = MessageState::InFlight {
                until,
                nonce,
                received_at,
            };
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
        self.free.clear();
        self.ready.clear();
        self.groups.clear();
        self.ready_groups.clear();
        self.visible = 0;
        self.timers.clear();
        self.retention.clear();
        self.inflight = 0;
        self.delayed = 0;
        self.dedup.clear();
        self.dedup_order.clear();
        self.attempts.clear();
        self.attempts_order.clear();
    }

    /// Takes this queue's messages out of the store-wide counts.
    fn release_usage(&mut self) {
        let stored = (self.slots.len() - self.free.len()) as u64;
        self.usage.sub(stored, self.stored_bytes);
        self.stored_bytes = 0;
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
        // A merge of the groups' seq-ordered visible sets: O(groups + max · log groups).
        let mut heads: BinaryHeap<Reverse<(u64, u32, &Arc<str>)>> = self
            .groups
            .iter()
            .filter_map(|(name, g)| {
                let (&seq, &slot) = g.visible.first_key_value()?;
                Some(Reverse((seq, slot, name)))
            })
            .collect();
        let mut out = Vec::new();
        while out.len() < max
            && let Some(Reverse((seq, slot, name))) = heads.pop()
        {
            out.push(Id { slot, seq });
            let next = self.groups[name].visible.range(seq + 1..).next();
            if let Some((&seq, &slot)) = next {
                heads.push(Reverse((seq, slot, name)));
            }
        }
        out
    }

    /// A live dedup entry for `key`.
    pub fn dedup_lookup(&self, key: &str, now: u64) -> Option<&DedupEntry> {
        self.dedup.get(key).filter(|e| e.expires_ms > now)
    }

    /// Remembers a deduplication key for the 5-minute window.
    pub fn dedup_remember(&mut self, key: &str, entry: DedupEntry) {
        let key: Arc<str> = Arc::from(key);
        self.dedup_order
            .push_back((entry.expires_ms, Arc::clone(&key)));
        self.dedup.insert(key, entry);
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

/// A deleted queue's messages leave the store with it, whichever path dropped it.
impl Drop for Queue {
    fn drop(&mut self) {
        self.release_usage();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::emulator::model::message::Extra;

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

    fn put(queue: &mut Queue, seq: u64, group: &str) -> Id {
        let mut message = Message::new(seq, "b", 0, 0);
        message.set_extra(Extra {
            group_id: Some(queue.intern_group(group)),
            ..Extra::default()
        });
        queue.enqueue(message, 0, 0)
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
        assert!(queue.groups.is_empty() && queue.ready_groups.is_empty());
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
        assert!(a > u128::from(u64::MAX) && b > a + 1);
        assert_eq!(a.to_string().len(), 20);
    }
}
