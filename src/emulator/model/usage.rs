//! Store-wide counts of stored messages and their bytes, kept by every queue as messages come
//! and go, so the caps of `EmulatorConfig` are checked in O(1) on each send.
//!
//! Counters are atomics shared by the queues (`Arc<Usage>`) because a queue changes them from
//! deep inside its own methods; they are only ever changed under the store's lock, so the
//! check-then-enqueue of a send is atomic.

use std::sync::atomic::{AtomicU64, Ordering};

/// Messages and message bytes held across all queues.
#[derive(Debug, Default)]
pub(crate) struct Usage {
    messages: AtomicU64,
    bytes: AtomicU64,
}

impl Usage {
    /// Counts `messages` more messages of `bytes` bytes in total.
    pub fn add(&self, messages: u64, bytes: u64) {
        self.messages.fetch_add(messages, Ordering::Relaxed);
        self.bytes.fetch_add(bytes, Ordering::Relaxed);
    }

    /// Counts `messages` fewer messages of `bytes` bytes in total.
    pub fn sub(&self, messages: u64, bytes: u64) {
        self.messages.fetch_sub(messages, Ordering::Relaxed);
        self.bytes.fetch_sub(bytes, Ordering::Relaxed);
    }

    /// Messages stored now.
    pub fn messages(&self) -> u64 {
        self.messages.load(Ordering::Relaxed)
    }

    /// Message bytes stored now.
    pub fn bytes(&self) -> u64 {
        self.bytes.load(Ordering::Relaxed)
    }
}
