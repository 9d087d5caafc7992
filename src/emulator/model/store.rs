//! The emulator's shared state: every queue, behind one lock.
//!
//! One `std::sync::Mutex` over all queues keeps multi-queue steps (a dead-letter move, a move
//! task) atomic, so concurrent clients can never lose or duplicate a message. The lock is never
//! held across an `.await`; every operation under it is O(log n) per message touched.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};

use crate::emulator::model::queue::Queue;
use crate::emulator::model::task::MoveTask;
use crate::emulator::support::chaos::ChaosDice;
use crate::emulator::support::clock::{Clock, TokioClock};
use crate::emulator::support::config::EmulatorConfig;
use crate::emulator::support::errors::{SqsError, SqsResult};

/// Global counters and queues.
#[derive(Debug)]
pub(crate) struct State {
    pub queues: HashMap<String, Queue>,
    /// Deleted queue name → deletion time, for `QueueDeletedRecently`.
    pub deleted: HashMap<String, u64>,
    pub move_tasks: Vec<MoveTask>,
    next_seq: u64,
    next_nonce: u64,
    next_sequence_number: u128,
}

impl State {
    fn new() -> Self {
        Self {
            queues: HashMap::new(),
            deleted: HashMap::new(),
            move_tasks: Vec::new(),
            next_seq: 1,
            next_nonce: 1,
            // FIFO sequence numbers are 20-digit decimals on AWS.
            next_sequence_number: 10_000_000_000_000_000_000,
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

    /// The next FIFO SequenceNumber (monotonic across the store, like AWS's per-queue ones).
    pub fn next_sequence_number(&mut self) -> String {
        self.next_sequence_number += 1;
        self.next_sequence_number.to_string()
    }

    /// A queue by name, ticked to `now`.
    pub fn queue_mut(&mut self, name: &str, now: u64) -> SqsResult<&mut Queue> {
        let queue = self
            .queues
            .get_mut(name)
            .ok_or_else(SqsError::non_existent_queue)?;
        queue.tick(now);
        Ok(queue)
    }

    /// The name of the queue with this ARN, if it exists.
    pub fn queue_name_by_arn(&self, arn: &str) -> Option<String> {
        self.queues
            .values()
            .find(|q| q.arn == arn)
            .map(|q| q.name.clone())
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
        }
    }

    /// Locks the state. A panic elsewhere cannot leave the state half-updated in a way that
    /// matters more than refusing all further requests, so poisoning is ignored.
    pub fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Now, in epoch milliseconds.
    pub fn now(&self) -> u64 {
        self.clock.now_millis()
    }

    /// `arn:aws:sqs:<region>:<account>:<name>`.
    pub fn arn(&self, name: &str) -> String {
        format!(
            "arn:aws:sqs:{}:{}:{}",
            self.config.region, self.config.account_id, name
        )
    }

    /// The queue URL clients should use, built from the request's Host.
    pub fn queue_url(&self, host: &str, name: &str) -> String {
        format!("http://{}/{}/{}", host, self.config.account_id, name)
    }
}
