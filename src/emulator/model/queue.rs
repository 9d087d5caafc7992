//! One queue's messages and the indexes that make every operation O(log n).
//!
//! The shape is mini-redis's `db.rs`: deadlines live in ordered sets keyed by time, and they are
//! drained lazily by [`Queue::tick`] at the start of every operation on the queue, so there is no
//! background timer. Long polls sleep until the earliest deadline ([`Queue::next_deadline`]) or a
//! `Notify` wake, whichever comes first.

use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};
use std::sync::Arc;

use tokio::sync::Notify;

use crate::emulator::model::attributes::QueueSettings;
use crate::emulator::model::message::{Message, MessageState};
use crate::emulator::model::usage::Usage;

/// FIFO deduplication interval: 5 minutes (API_SendMessage, MessageDeduplicationId).
pub(crate) const DEDUP_WINDOW_MS: u64 = 5 * 60 * 1000;
/// How long a ReceiveRequestAttemptId can be retried: 5 minutes (API_ReceiveMessage).
pub(crate) const ATTEMPT_WINDOW_MS: u64 = 5 * 60 * 1000;

/// What the first send with a deduplication id produced; duplicates answer the same.
#[derive(Debug, Clone)]
pub(crate) struct DedupEntry {
    pub message_id: String,
    pub sequence_number: Option<String>,
    pub expires_ms: u64,
}

/// A FIFO receive remembered by its ReceiveRequestAttemptId.
#[derive(Debug, Clone)]
pub(crate) struct ReceiveAttempt {
    /// (seq, nonce) of each message returned, in order.
    pub leases: Vec<(u64, u64)>,
    pub expires_ms: u64,
}

/// A queue.
#[derive(Debug)]
pub(crate) struct Queue {
    pub name: String,
    pub arn: String,
    pub settings: QueueSettings,
    pub tags: BTreeMap<String, String>,
    pub created_ms: u64,
    pub modified_ms: u64,
    pub last_purge_ms: Option<u64>,
    /// Woken on anything that may make a message receivable.
    pub notify: Arc<Notify>,
    messages: HashMap<u64, Message>,
    ready: BTreeSet<u64>,
    /// (deadline, seq) for delayed and in-flight messages.
    timers: BTreeSet<(u64, u64)>,
    /// (enqueued_ms, seq): retention is evaluated against the *current* retention period, as AWS
    /// applies a changed MessageRetentionPeriod to messages already in the queue.
    retention: BTreeSet<(u64, u64)>,
    /// FIFO: in-flight seqs per message group.
    inflight_groups: HashMap<String, BTreeSet<u64>>,
    inflight: usize,
    delayed: usize,
    dedup: HashMap<String, DedupEntry>,
    dedup_order: VecDeque<(u64, String)>,
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
            arn,
            settings,
            tags: BTreeMap::new(),
            created_ms: now,
            modified_ms: now,
            last_purge_ms: None,
            notify: Arc::new(Notify::new()),
            messages: HashMap::new(),
            ready: BTreeSet::new(),
            timers: BTreeSet::new(),
            retention: BTreeSet::new(),
            inflight_groups: HashMap::new(),
            inflight: 0,
            delayed: 0,
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

    /// Applies every deadline that has passed: leases and delays end, retention expires,
    /// dedup and receive-attempt windows close.
    pub fn tick(&mut self, now: u64) {
        let mut woke = false;
        while let Some(&(at, seq)) = self.timers.first() {
            if at > now {
                break;
            }
            self.timers.pop_first();
            self.make_ready(seq);
            woke = true;
        }
        let retention_ms = u64::from(self.settings.message_retention_period) * 1000;
        while let Some(&(enqueued, seq)) = self.retention.first() {
            if enqueued + retention_ms > now {
                break;
            }
            self.remove(seq);
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

    fn make_ready(&mut self, seq: u64) {
        let Some(message) = self.messages.get_mut(&seq) else {
            return;
        };
        match message.state {
            MessageState::Ready => return,
            MessageState::Delayed { .. } => self.delayed -= 1,
            MessageState::InFlight { .. } => {
                self.inflight -= 1;
                if let Some(group) = &message.group_id {
                    remove_from_group(&mut self.inflight_groups, group, seq);
                }
            }
        }
        message.state = MessageState::Ready;
        self.ready.insert(seq);
    }

    /// Adds a message, visible after `delay_ms`.
    pub fn enqueue(&mut self, mut message: Message, delay_ms: u64, now: u64) {
        let seq = message.seq;
        if delay_ms > 0 {
            let until = now + delay_ms;
            message.state = MessageState::Delayed { until };
            self.timers.insert((until, seq));
            self.delayed += 1;
        } else {
            message.state = MessageState::Ready;
            self.ready.insert(seq);
        }
        self.retention.insert((message.enqueued_ms, seq));
        let size = message.size() as u64;
        self.stored_bytes += size;
        self.usage.add(1, size);
        self.messages.insert(seq, message);
        self.notify.notify_waiters();
    }

    /// Removes a message from every index.
    pub fn remove(&mut self, seq: u64) -> Option<Message> {
        let message = self.messages.remove(&seq)?;
        match message.state {
            MessageState::Ready => {
                self.ready.remove(&seq);
            }
            MessageState::Delayed { until } => {
                self.timers.remove(&(until, seq));
                self.delayed -= 1;
            }
            MessageState::InFlight { until, .. } => {
                self.timers.remove(&(until, seq));
                self.inflight -= 1;
                if let Some(group) = &message.group_id {
                    remove_from_group(&mut self.inflight_groups, group, seq);
                }
            }
        }
        self.retention.remove(&(message.enqueued_ms, seq));
        let size = message.size() as u64;
        self.stored_bytes -= size;
        self.usage.sub(1, size);
        Some(message)
    }

    /// The message with this seq.
    pub fn get(&self, seq: u64) -> Option<&Message> {
        self.messages.get(&seq)
    }

    /// Visible messages that may be delivered now, in order, at most `max`.
    ///
    /// FIFO: a message is deliverable only if no earlier message of its group is in flight.
    /// This matches the AWS recordings where extending one message of a group blocks it and every
    /// later message of that group, while earlier visible ones are delivered
    /// (SNAP-2025 `test_fifo_group_visibility_extends_with_change_message_visibility`).
    pub fn candidates(&self, max: usize) -> Vec<u64> {
        if !self.is_fifo() {
            return self.ready.iter().take(max).copied().collect();
        }
        let mut out = Vec::new();
        for &seq in &self.ready {
            if out.len() >= max {
                break;
            }
            let blocked = self
                .messages
                .get(&seq)
                .and_then(|m| m.group_id.as_ref())
                .and_then(|g| self.inflight_groups.get(g))
                .and_then(|set| set.first())
                .is_some_and(|&first| first < seq);
            if !blocked {
                out.push(seq);
            }
        }
        out
    }

    /// Leases a visible message for `visibility_ms` under receipt `nonce`.
    pub fn lease(
        &mut self,
        seq: u64,
        visibility_ms: u64,
        nonce: u64,
        now: u64,
    ) -> Option<&Message> {
        let message = self.messages.get_mut(&seq)?;
        if message.state != MessageState::Ready {
            return None;
        }
        self.ready.remove(&seq);
        let until = now + visibility_ms;
        message.state = MessageState::InFlight {
            until,
            nonce,
            received_at: now,
        };
        message.receive_count += 1;
        message.first_receive_ms.get_or_insert(now);
        self.timers.insert((until, seq));
        self.inflight += 1;
        if let Some(group) = &message.group_id {
            self.inflight_groups
                .entry(group.clone())
                .or_default()
                .insert(seq);
        }
        Some(message)
    }

    /// Sets a new visibility deadline for a message, leasing it again if it was visible.
    ///
    /// `received_at` is kept for in-flight messages so the 12-hour total cap counts from the
    /// receive. Returns false when the message does not exist or is delayed.
    pub fn set_visibility(&mut self, seq: u64, nonce: u64, until: u64, now: u64) -> bool {
        let Some(message) = self.messages.get_mut(&seq) else {
            return false;
        };
        let received_at = match message.state {
            MessageState::Delayed { .. } => return false,
            MessageState::Ready => {
                self.ready.remove(&seq);
                self.inflight += 1;
                if let Some(group) = &message.group_id {
                    self.inflight_groups
                        .entry(group.clone())
                        .or_default()
                        .insert(seq);
                }
                now
            }
            MessageState::InFlight {
                until: old,
                received_at,
                ..
            } => {
                self.timers.remove(&(old, seq));
                received_at
            }
        };
        message.state = MessageState::InFlight {
            until,
            nonce,
            received_at,
        };
        self.timers.insert((until, seq));
        if until <= now {
            self.tick(now);
        }
        true
    }

    /// Deletes every message, leased and delayed ones included, and the dedup cache
    /// (TEST-PY `test_purge_queue_clears_fifo_deduplication_cache`).
    pub fn purge(&mut self) {
        self.release_usage();
        self.messages.clear();
        self.ready.clear();
        self.timers.clear();
        self.retention.clear();
        self.inflight_groups.clear();
        self.inflight = 0;
        self.delayed = 0;
        self.dedup.clear();
        self.dedup_order.clear();
        self.attempts.clear();
        self.attempts_order.clear();
    }

    /// Takes this queue's messages out of the store-wide counts.
    fn release_usage(&mut self) {
        self.usage
            .sub(self.messages.len() as u64, self.stored_bytes);
        self.stored_bytes = 0;
    }

    /// (visible, in flight, delayed) counts.
    pub fn counts(&self) -> (usize, usize, usize) {
        (self.ready.len(), self.inflight, self.delayed)
    }

    /// Visible message seqs in order (for move tasks).
    pub fn ready_seqs(&self, max: usize) -> Vec<u64> {
        self.ready.iter().take(max).copied().collect()
    }

    /// A live dedup entry for `key`.
    pub fn dedup_lookup(&self, key: &str, now: u64) -> Option<&DedupEntry> {
        self.dedup.get(key).filter(|e| e.expires_ms > now)
    }

    /// Remembers a deduplication key for the 5-minute window.
    pub fn dedup_remember(&mut self, key: String, entry: DedupEntry) {
        self.dedup_order.push_back((entry.expires_ms, key.clone()));
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

fn remove_from_group(groups: &mut HashMap<String, BTreeSet<u64>>, group: &str, seq: u64) {
    if let Some(set) = groups.get_mut(group) {
        set.remove(&seq);
        if set.is_empty() {
            groups.remove(group);
        }
    }
}
