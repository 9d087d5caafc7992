//! The emulator's shared state: every queue, behind one lock.
//!
//! One `std::sync::Mutex` over all queues keeps multi-queue steps (a dead-letter move, a move
//! task) atomic, so concurrent clients can never lose or duplicate a message. The lock is never
//! held across an `.await`; every operation under it is O(log n) per message touched.

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use tokio::sync::Notify;

use crate::emulator::model::attributes::QueueSettings;
use crate::emulator::model::queue::Queue;
use crate::emulator::model::task::MoveTask;
use crate::emulator::model::usage::Usage;
use crate::emulator::support::chaos::ChaosDice;
use crate::emulator::support::clock::{Clock, TokioClock};
use crate::emulator::support::config::{EmulatorConfig, QueueUrls};
use crate::emulator::support::errors::{SqsError, SqsResult};

/// Global counters and queues.
///
/// Queues are keyed by their ARN (`arn:aws:sqs:<region>:<account>:<name>`): each region is its
/// own namespace, as on AWS, a redrive or move-task ARN is a direct lookup, and a name prefix
/// within a region is a range of the ordered map (ListQueues).
#[derive(Debug)]
pub(crate) struct State {
    pub queues: BTreeMap<String, Queue>,
    /// Deleted queue key → deletion time, for `QueueDeletedRecently`.
    pub deleted: HashMap<String, u64>,
    pub move_tasks: Vec<MoveTask>,
    /// Messages and bytes stored across all queues (each queue keeps it current).
    pub usage: Arc<Usage>,
    next_seq: u64,
    next_nonce: u64,
    /// SenderIds, each stored once; messages hold an index.
    senders: Vec<String>,
    sender_index: HashMap<String, u32>,
}

impl State {
    fn new() -> Self {
        Self {
            queues: BTreeMap::new(),
            deleted: HashMap::new(),
            move_tasks: Vec::new(),
            usage: Arc::new(Usage::default()),
            next_seq: 1,
            next_nonce: 1,
            senders: Vec::new(),
            sender_index: HashMap::new(),
        }
    }

    /// A fresh store-wide message seq.
    pub fn next_seq(&mut self) -> u64 {
        let seq = self.next_seq;
        self.next_seq += 1;
        seq
    }

    /// A fresh receive nonce.
    pub fn next_nonce(&mut self) -> u64 {
        let nonce = self.next_nonce;
        self.next_nonce += 1;
        nonce
    }

    /// The index of a SenderId in the sender table, adding it on first use.
    pub fn sender_index(&mut self, sender_id: &str) -> u32 {
        if let Some(&i) = self.sender_index.get(sender_id) {
            return i;
        }
        let i = self.senders.len() as u32;
        self.senders.push(sender_id.to_owned());
        self.sender_index.insert(sender_id.to_owned(), i);
        i
    }

    /// The SenderId stored at `index`.
    pub fn sender_id(&self, index: u32) -> &str {
        self.senders.get(index as usize).map_or("", String::as_str)
    }

    /// A queue by key (its ARN), ticked to `now`.
    pub fn queue_mut(&mut self, key: &str, now: u64) -> SqsResult<&mut Queue> {
        let queue = self
            .queues
            .get_mut(key)
            .ok_or_else(SqsError::non_existent_queue)?;
        queue.tick(now);
        Ok(queue)
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

    /// Refuses to store a message of `size` bytes beyond `max_messages` or `max_stored_bytes`
    /// (`OverLimit`).
    pub fn admit_message(&self, size: usize, config: &EmulatorConfig) -> SqsResult<()> {
        if self.usage.messages() >= config.max_messages {
            return Err(SqsError::over_limit(format!(
                "The emulator stores its maximum of {} messages (serve --max-messages).",
                config.max_messages
            )));
        }
        if self.usage.bytes().saturating_add(size as u64) > config.max_stored_bytes {
            return Err(SqsError::over_limit(format!(
                "The emulator stores its maximum of {} message bytes (serve --max-stored-bytes).",
                config.max_stored_bytes
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

/// The emulator: configuration, clock and state.
#[derive(Debug)]
pub(crate) struct Emulator {
    pub config: EmulatorConfig,
    pub clock: Arc<dyn Clock>,
    /// Chaos dice; their own locks are only ever taken inside the state lock.
    pub chaos: ChaosDice,
    state: Mutex<State>,
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
            chaos: ChaosDice::new(config.chaos),
            config,
            clock,
            state: Mutex::new(State::new()),
            stopping: AtomicBool::new(false),
            stop: Notify::new(),
            policy_seen: AtomicBool::new(false),
        }
    }

    /// Locks the state. A panic elsewhere cannot leave the state half-updated in a way that
    /// matters more than refusing all further requests, so poisoning is ignored.
    pub fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
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
        format!("arn:aws:sqs:{region}:{}:{name}", self.config.account_id)
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
    crate::sqs::arn::parse(key).map_or(("", ""), |arn| (arn.region, arn.name))
}
