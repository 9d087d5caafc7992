//! The names of recently deleted queues, for AWS's rule that a deleted queue's name cannot be
//! used again for 60 seconds (API_DeleteQueue: "you must wait at least 60 seconds before
//! creating a queue with the same name"; `QueueDeletedRecently`).
//!
//! The rule needs a name for 60 seconds only, so the table forgets it then: entries are kept
//! in the order they were written beside the map, and every write pops the ones whose minute
//! is over. The table therefore holds at most the names deleted in the last minute, however
//! many queues come and go over the server's life.

use std::collections::{HashMap, VecDeque};

/// AWS's 60-second cooldowns: how long a deleted queue's name stays taken (API_DeleteQueue),
/// and how long after a PurgeQueue another is refused (API_PurgeQueue).
pub(crate) const COOLDOWN_MS: u64 = 60_000;

/// Deleted queue keys with the time each was deleted, forgotten after [`COOLDOWN_MS`].
#[derive(Debug, Default)]
pub(crate) struct RecentlyDeleted {
    /// Key → when it was last deleted.
    at: HashMap<String, u64>,
    /// (deleted at, key) in the order written: the expiry queue. A key deleted twice within
    /// the window has two entries; only the one matching `at` removes it.
    order: VecDeque<(u64, String)>,
}

impl RecentlyDeleted {
    /// Notes that `key` was deleted at `now`, forgetting every name whose minute is over.
    pub fn insert(&mut self, key: String, now: u64) {
        self.expire(now);
        self.at.insert(key.clone(), now);
        self.order.push_back((now, key));
    }

    /// Whether `key` was deleted less than [`COOLDOWN_MS`] before `now`.
    pub fn recently(&self, key: &str, now: u64) -> bool {
        self.at
            .get(key)
            .is_some_and(|&at| now.saturating_sub(at) < COOLDOWN_MS)
    }

    /// Forgets `key` (its name was taken again) and every name whose minute is over.
    pub fn remove(&mut self, key: &str, now: u64) {
        self.expire(now);
        self.at.remove(key);
    }

    /// Forgets the names deleted [`COOLDOWN_MS`] or more before `now`. A clock set back can
    /// only keep an entry longer, never forget one early: the front waits for its own time.
    pub fn expire(&mut self, now: u64) {
        while let Some((at, _)) = self.order.front() {
            if now.saturating_sub(*at) < COOLDOWN_MS {
                break;
            }
            if let Some((at, key)) = self.order.pop_front()
                && self.at.get(&key) == Some(&at)
            {
                self.at.remove(&key);
            }
        }
        if self.order.is_empty() {
            // A burst of deletes leaves its capacity behind: give it back once it is over.
            self.order.shrink_to(16);
            self.at.shrink_to(16);
        }
    }

    /// How many names the table holds (entries of the expiry queue included).
    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.at.len().max(self.order.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_is_taken_for_a_minute_then_forgotten() {
        let mut table = RecentlyDeleted::default();
        table.insert("a".into(), 1_000);
        assert!(table.recently("a", 1_000 + COOLDOWN_MS - 1));
        assert!(!table.recently("a", 1_000 + COOLDOWN_MS));
        assert_eq!(table.len(), 1, "nothing expires without a write");
        table.insert("b".into(), 1_000 + COOLDOWN_MS);
        assert_eq!(table.len(), 1, "a's minute is over: only b is left");
        assert!(table.recently("b", 1_000 + COOLDOWN_MS));
    }

    #[test]
    fn a_name_deleted_twice_keeps_its_latest_time() {
        let mut table = RecentlyDeleted::default();
        table.insert("a".into(), 0);
        table.remove("a", 10);
        table.insert("a".into(), 30_000);
        // The first entry's minute ends at 60 s; the second deletion's at 90 s.
        table.expire(60_000);
        assert!(table.recently("a", 60_000));
        table.expire(90_000);
        assert!(!table.recently("a", 90_000));
        assert_eq!(table.len(), 0);
    }

    #[test]
    fn many_unique_names_leave_only_the_last_minute() {
        let mut table = RecentlyDeleted::default();
        for i in 0..100_000u64 {
            // One delete every 10 ms: 6,000 a minute.
            table.insert(format!("q{i}"), i * 10);
        }
        assert!(table.len() <= 6_000, "{} names kept", table.len());
    }
}
