//! Store-wide counts of stored messages and their bytes, kept by every queue as messages come
//! and go, so the caps of `EmulatorConfig` are checked in O(1) on each send.
//!
//! Counters are atomics shared by the queues (`Arc<Usage>`): each queue has its own lock
//! (`model/store.rs`), so two queues change them at once. A send is checked against the caps
//! and counted in one step ([`Usage::admit`]: compare-and-swap, never above a cap), so two
//! sends to two queues cannot both pass the last free place; a message moved between queues
//! is taken out of the counts by one and put back by the other under the store's write lock.

use std::sync::atomic::{AtomicU64, Ordering};

use crate::support::config::EmulatorConfig;
use crate::support::errors::{SqsError, SqsResult};

/// Messages and message bytes held across all queues.
#[derive(Debug, Default)]
pub(crate) struct Usage {
    messages: AtomicU64,
    bytes: AtomicU64,
}

/// A message already counted by [`Usage::admit`]: its queue stores it without counting it
/// again.
#[derive(Debug)]
#[must_use = "an admitted message is counted until it is stored"]
pub(crate) struct Admitted(());

impl Usage {
    /// Counts one more message of `size` bytes if that keeps the store within `max_messages`
    /// and `max_stored_bytes`; refuses it (`OverLimit`) otherwise, counting nothing.
    ///
    /// Two sends racing for the last place: one wins. A send refused on bytes gives back the
    /// place it took among the messages, so for that instant another send may be refused that
    /// would have fit: at the cap, never beyond it.
    pub fn admit(&self, size: usize, config: &EmulatorConfig) -> SqsResult<Admitted> {
        let size = size as u64;
        let over_messages = self
            .messages
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| {
                (n < config.max_messages).then_some(n + 1)
            })
            .is_err();
        if over_messages {
            return Err(SqsError::over_limit(format!(
                "The emulator stores its maximum of {} messages (serve --max-messages).",
                config.max_messages
            )));
        }
        let over_bytes = self
            .bytes
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |b| {
                let after = b.saturating_add(size);
                (after <= config.max_stored_bytes).then_some(after)
            })
            .is_err();
        if over_bytes {
            self.messages.fetch_sub(1, Ordering::Relaxed);
            return Err(SqsError::over_limit(format!(
                "The emulator stores its maximum of {} message bytes (serve --max-stored-bytes).",
                config.max_stored_bytes
            )));
        }
        Ok(Admitted(()))
    }

    /// Counts `messages` more messages of `bytes` bytes in total (a message moved in).
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
    #[cfg(test)]
    pub fn messages(&self) -> u64 {
        self.messages.load(Ordering::Relaxed)
    }

    /// Message bytes stored now.
    #[cfg(test)]
    pub fn bytes(&self) -> u64 {
        self.bytes.load(Ordering::Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn admission_stops_at_either_cap_and_counts_nothing_it_refuses() {
        let config = EmulatorConfig {
            max_messages: 2,
            max_stored_bytes: 10,
            ..EmulatorConfig::default()
        };
        let usage = Usage::default();
        let _ = usage.admit(4, &config).unwrap();
        let err = usage.admit(7, &config).unwrap_err();
        assert!(err.message.contains("--max-stored-bytes"), "{err}");
        assert_eq!((usage.messages(), usage.bytes()), (1, 4));
        let _ = usage.admit(6, &config).unwrap();
        let err = usage.admit(0, &config).unwrap_err();
        assert!(err.message.contains("--max-messages"), "{err}");
        assert_eq!((usage.messages(), usage.bytes()), (2, 10));
    }

    #[test]
    fn racing_admissions_never_pass_the_cap() {
        let config = EmulatorConfig {
            max_messages: 1_000,
            ..EmulatorConfig::default()
        };
        let usage = Usage::default();
        let admitted: usize = std::thread::scope(|s| {
            let workers: Vec<_> = (0..8)
                .map(|_| s.spawn(|| (0..500).filter(|_| usage.admit(1, &config).is_ok()).count()))
                .collect();
            workers.into_iter().map(|w| w.join().unwrap()).sum()
        });
        assert_eq!(admitted, 1_000);
        assert_eq!((usage.messages(), usage.bytes()), (1_000, 1_000));
    }
}
