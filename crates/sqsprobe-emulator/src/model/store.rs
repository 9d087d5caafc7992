//! The emulator's shared state: the map of queues under a read-write lock, each queue under a
//! mutex of its own.
//!
//! The locking rule (no global lock on the hot path):
//! - **One queue**: an operation on a single queue (send, receive, delete, change visibility,
//!   their batches, queue attributes, tags, permissions, purge) takes the store's *read* lock,
//!   then that queue's mutex ([`Emulator::with_queue`], [`Emulator::lock_queue`]), and holds
//!   both until it is done. Read locks do not exclude one another, so operations on different
//!   queues run in parallel; operations on one queue are serialised by its mutex, exactly as
//!   every operation was under the single mutex this replaces.
//! - **More than one queue, or the map itself**: CreateQueue, DeleteQueue, a receive that
//!   moves messages to its dead-letter queue, a move task's step, StartMessageMoveTask and
//!   CancelMessageMoveTask, ListDeadLetterSourceQueues and a RedrivePolicy's check take the
//!   *write* lock, which excludes every other operation: they see and change the store as one,
//!   as before. A receive learns that it must move a message only once it holds its queue, so
//!   it looks first under the read lock without changing anything but the queue's clock
//!   ([`crate::model::queue::Queue::tick`]) and, when a message is due to move, starts
//!   again under the write lock (`ops::receive`).
//! - **Store-wide counters** are atomics: the message seq and the receipt nonce are unique
//!   whichever queue takes them, and a queue's seqs still grow in its own send order because it
//!   takes them under its mutex; the caps of [`EmulatorConfig`] are checked and counted in one
//!   step ([`Usage::admit`]), so two queues filling at once cannot pass them.
//!
//! Why this is safe:
//! - A queue's mutex is only ever taken under the read or the write lock, and under the read
//!   lock at most one at a time. So a thread holding a queue waits for nothing else, no two
//!   threads can each hold a queue the other wants, and the write lock, which waits until no
//!   reader is left, finds every queue's mutex free: under it, locking two queues (the source
//!   and its dead-letter queue) cannot block.
//! - A thread never takes the store's lock while it holds it (the read lock included: std's
//!   `RwLock` lets a waiting writer go first, so a second read on the same thread would wait
//!   for a writer that waits for the first): an operation that needs the write lock after a
//!   look under the read lock lets the read lock go first.
//! - A message is never lost or duplicated by concurrency: it lives in exactly one queue's
//!   slab and moves between queues only under the write lock, where its removal from one and
//!   its insertion in the other happen with no other operation in between; within a queue,
//!   every change happens under its mutex. The dead-letter move and a move task's step are
//!   atomic for the same reason.
//! - No lock is held across an `.await`: the guards are `std::sync` guards, which are not
//!   `Send`, so a future that held one over an await point could not be spawned on the
//!   multi-threaded runtime. Every operation under a lock is O(log n) per message touched
//!   (amortised: the retention log's compaction, `model/retention.rs`), except the rare
//!   store-wide reads under the write lock (ListDeadLetterSourceQueues, StartMessageMoveTask's
//!   check that its source is a dead-letter queue), O(queues) as they were before.
//! - What else a request touches: the clock is read after the queue is locked, so a queue's
//!   operations see its time move forward only; a long poll's wake-up is the queue's own
//!   `Notify`; chaos dice are per queue and rolled under the queue's mutex
//!   (`support::chaos`), so a queue's outcomes follow its own request order; audit hooks are
//!   called under the queue's mutex, so a queue's deliveries and acknowledgements reach the
//!   observer in the order they happened.
//!
//! The read lock is one shared word that every request writes (readers count themselves in
//! it): a cache line every core touches, but no request waits there on another's work, only
//! on an operation that holds the write lock.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, RwLock, RwLockReadGuard, RwLockWriteGuard};

use tokio::sync::Notify;

use crate::model::attributes::QueueSettings;
use crate::model::deleted::RecentlyDeleted;
use crate::model::queue::Queue;
use crate::model::task::MoveTask;
use crate::model::usage::Usage;
use crate::support::chaos::ChaosDice;
use crate::support::clock::{Clock, TokioClock};
use crate::support::config::{EmulatorConfig, QueueUrls};
use crate::support::errors::{SqsError, SqsResult};
use crate::support::ids::MessageIds;

/// Global counters and queues.
///
/// Queues are keyed by their ARN (`arn:aws:sqs:<region>:<account>:<name>`): each region is its
/// own namespace, as on AWS, a redrive or move-task ARN is a direct lookup, and a name prefix
/// within a region is a range of the ordered map (ListQueues).
#[derive(Debug)]
pub(crate) struct State {
    /// Each queue behind its own mutex: lock it with [`State::lock_queue`] under the read lock,
    /// or reach it with [`State::queue_mut`] under the write lock.
    pub queues: BTreeMap<String, Mutex<Queue>>,
    /// Queues deleted in the last minute, for `QueueDeletedRecently` (changed under the write
    /// lock only).
    pub deleted: RecentlyDeleted,
    /// Changed under the write lock only.
    pub move_tasks: Vec<MoveTask>,
    /// Messages and bytes stored across all queues (each queue keeps it current).
    pub usage: Arc<Usage>,
    next_seq: AtomicU64,
    next_nonce: AtomicU64,
}

impl State {
    fn new() -> Self {
        Self {
            queues: BTreeMap::new(),
            deleted: RecentlyDeleted::default(),
            move_tasks: Vec::new(),
            usage: Arc::new(Usage::default()),
            next_seq: AtomicU64::new(1),
            next_nonce: AtomicU64::new(1),
        }
    }

    /// A fresh store-wide message seq. Take it under the queue's mutex the message goes into:
    /// a queue's seqs then grow in the order its messages arrive.
    pub fn next_seq(&self) -> u64 {
        self.next_seq.fetch_add(1, Ordering::Relaxed)
    }

    /// A fresh receive nonce.
    pub fn next_nonce(&self) -> u64 {
        self.next_nonce.fetch_add(1, Ordering::Relaxed)
    }

    /// Locks queue `key` (not ticked: see [`Emulator::lock_queue`]). Only under the read or
    /// write lock, and under the read lock never while holding another queue.
    pub fn lock_queue(&self, key: &str) -> SqsResult<MutexGuard<'_, Queue>> {
        let cell = self
            .queues
            .get(key)
            .ok_or_else(SqsError::non_existent_queue)?;
        Ok(lock(cell))
    }

    /// A queue by key (its ARN), ticked to `now`, under the write lock.
    pub fn queue_mut(&mut self, key: &str, now: u64) -> SqsResult<&mut Queue> {
        let queue = self
            .queues
            .get_mut(key)
            .ok_or_else(SqsError::non_existent_queue)?
            .get_mut()
            .unwrap_or_else(|e| e.into_inner());
        queue.tick(now);
        Ok(queue)
    }

    /// Every queue, under the write lock.
    pub fn queues_mut(&mut self) -> impl Iterator<Item = &mut Queue> {
        self.queues
            .values_mut()
            .map(|cell| cell.get_mut().unwrap_or_else(|e| e.into_inner()))
    }

    /// Refuses a new queue beyond `max_queues` (`OverLimit`).
    pub fn admit_queue(&self, config: &EmulatorConfig) -> SqsResult<()> {
        if self.queues.len() >= config.max_queues {
            return Err(SqsError::over_limit(format!(
                "The emulator holds its maximum of {} queues (serve --max-queues).",
                config.max_queues
            )));
        }
        Ok(())
    }

    /// The key of the queue with this ARN, if it exists (queues are keyed by ARN).
    pub fn queue_key_by_arn(&self, arn: &str) -> Option<String> {
        self.queues.contains_key(arn).then(|| arn.to_owned())
    }

    /// Keys of the queues whose key starts with `prefix`, in order: a range, not a scan.
    pub fn keys_with_prefix(&self, prefix: &str) -> Vec<String> {
        self.queues
            .range::<str, _>((
                std::ops::Bound::Included(prefix),
                std::ops::Bound::Unbounded,
            ))
            .take_while(|(k, _)| k.starts_with(prefix))
            .map(|(k, _)| k.clone())
            .collect()
    }
}

/// Locks a queue's mutex. A panic elsewhere cannot leave a queue half-updated in a way that
/// matters more than refusing all further requests, so poisoning is ignored.
fn lock(cell: &Mutex<Queue>) -> MutexGuard<'_, Queue> {
    cell.lock().unwrap_or_else(|e| e.into_inner())
}

/// The emulator: configuration, clock and state.
#[derive(Debug)]
pub(crate) struct Emulator {
    pub config: EmulatorConfig,
    pub clock: Arc<dyn Clock>,
    /// Chaos dice, one set per queue, each rolled under its queue's mutex.
    pub chaos: ChaosDice,
    /// The keys MessageIds are derived with.
    pub ids: MessageIds,
    state: RwLock<State>,
    /// Set once the server shuts down; long polls then answer with what they have.
    stopping: AtomicBool,
    stop: Notify,
    /// Set once a queue's settings took a `Policy` attribute ([`Emulator::note_policy`]), and
    /// never cleared: until then no policy can deny anything (AddPermission only adds Allow
    /// statements), and the access check skips its lookup of the queue.
    policy_seen: AtomicBool,
}

impl Emulator {
    /// A new empty emulator.
    pub fn new(config: EmulatorConfig) -> Self {
        let clock = config
            .clock
            .clone()
            .unwrap_or_else(|| Arc::new(TokioClock::new()));
        Self {
            chaos: ChaosDice::new(config.chaos, config.chaos_name_prefix.clone()),
            ids: MessageIds::default(),
            config,
            clock,
            state: RwLock::new(State::new()),
            stopping: AtomicBool::new(false),
            stop: Notify::new(),
            policy_seen: AtomicBool::new(false),
        }
    }

    /// The read lock: the map of queues as it stands, for operations on one queue (which then
    /// lock it) and for reading the map. Poisoning is ignored, as in [`lock`].
    pub fn read(&self) -> RwLockReadGuard<'_, State> {
        self.state.read().unwrap_or_else(|e| e.into_inner())
    }

    /// The write lock: the whole store, for operations on more than one queue or on the map.
    pub fn write(&self) -> RwLockWriteGuard<'_, State> {
        self.state.write().unwrap_or_else(|e| e.into_inner())
    }

    /// Queue `key` of `state` locked and ticked, with the time it was ticked to: read after the
    /// queue is locked, so that one queue's operations never see its clock go back.
    pub fn lock_queue<'a>(
        &self,
        state: &'a State,
        key: &str,
    ) -> SqsResult<(MutexGuard<'a, Queue>, u64)> {
        let mut queue = state.lock_queue(key)?;
        let now = self.now();
        queue.tick(now);
        Ok((queue, now))
    }

    /// Runs `f` on queue `key` under the read lock and the queue's mutex, the queue ticked to
    /// the `now` it is given: the shape of every operation on one queue.
    pub fn with_queue<T>(
        &self,
        key: &str,
        f: impl FnOnce(&State, &mut Queue, u64) -> SqsResult<T>,
    ) -> SqsResult<T> {
        let state = self.read();
        let (mut queue, now) = self.lock_queue(&state, key)?;
        f(&state, &mut queue, now)
    }

    /// Records that `settings` hold a policy, once a queue is about to take them: from then
    /// on every request's access check looks the queue's policy up.
    pub fn note_policy(&self, settings: &QueueSettings) {
        if settings.policy.is_some() {
            self.policy_seen.store(true, Ordering::SeqCst);
        }
    }

    /// Whether any queue may hold a policy ([`Emulator::note_policy`]).
    pub fn policy_seen(&self) -> bool {
        self.policy_seen.load(Ordering::SeqCst)
    }

    /// Tells every long poll to answer now: the server is shutting down.
    pub fn begin_stop(&self) {
        self.stopping.store(true, Ordering::SeqCst);
        self.stop.notify_waiters();
    }

    /// Whether [`Emulator::begin_stop`] was called.
    pub fn is_stopping(&self) -> bool {
        self.stopping.load(Ordering::SeqCst)
    }

    /// Resolves once the server shuts down.
    pub async fn stopped(&self) {
        // A `Notified` sees `notify_waiters` from its creation on, so the check cannot race.
        let notified = self.stop.notified();
        if self.is_stopping() {
            return;
        }
        notified.await;
    }

    /// Now, in epoch milliseconds.
    pub fn now(&self) -> u64 {
        self.clock.now_millis()
    }

    /// `arn:aws:sqs:<region>:<account>:<name>`: a queue's ARN, and its key in the store.
    pub fn arn(&self, region: &str, name: &str) -> String {
        // Every request that names a queue builds its key: pushed, not `format!`ted.
        let account = &self.config.account_id;
        let mut arn = String::with_capacity(14 + region.len() + account.len() + name.len());
        for part in ["arn:aws:sqs:", region, ":", account, ":", name] {
            arn.push_str(part);
        }
        arn
    }

    /// The queue URL clients should use, built from the request's Host: `/<account>/<name>`
    /// in the configured region, `/queue/<region>/<account>/<name>` in any other, so the
    /// same name in two regions has two URLs ([`QueueUrls::RegionLess`]: `/<account>/<name>`
    /// in every region).
    pub fn queue_url(&self, host: &str, key: &str) -> String {
        let (region, name) = split_key(key);
        if region == self.config.region || self.config.queue_urls == QueueUrls::RegionLess {
            format!("http://{host}/{}/{name}", self.config.account_id)
        } else {
            format!(
                "http://{host}/queue/{region}/{}/{name}",
                self.config.account_id
            )
        }
    }
}

/// (region, name) of a store key (`arn:aws:sqs:<region>:<account>:<name>`).
pub(crate) fn split_key(key: &str) -> (&str, &str) {
    sqsprobe_facts::sqs::arn::parse(key).map_or(("", ""), |arn| (arn.region, arn.name))
}
