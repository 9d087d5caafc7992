//! FIFO deduplication: what every send of the last five minutes produced, so that a duplicate
//! is answered like the original (API_SendMessage, MessageDeduplicationId; facts F2).
//!
//! A send is remembered by a 128-bit digest of its scope and id (the first 16 bytes of
//! SHA-256 over a per-cache random salt, the group when deduplication is per message group,
//! and the id), never by the strings: a digest is all a later send needs to be recognised,
//! and the original's MessageId (as the seq it derives from) and SequenceNumber are all a
//! duplicate is answered with.
//! Records sit in a log in send order, which is also expiry order (every window is the same
//! five minutes), so expiry pops the front; a hash table of `u32` log positions, hashed by the
//! digest itself, finds a record by key. One record is 40 bytes, one index slot 5, and there
//! is no per-record allocation (docs/emulator.md, "Memory").

use std::collections::VecDeque;

use hashbrown::HashTable;
use sha2::{Digest, Sha256};

use crate::emulator::model::message::SequenceNumber;

/// FIFO deduplication interval: 5 minutes (API_SendMessage, MessageDeduplicationId).
pub(crate) const DEDUP_WINDOW_MS: u64 = 5 * 60 * 1000;

/// A send's deduplication scope and id, digested: 128 bits as two words, so that a record is
/// 8-byte aligned (a `u128` would pad it to 48 bytes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct DedupKey([u64; 2]);

impl DedupKey {
    /// The table hash: the digest's first 64 bits, already uniform and salted.
    fn hash(self) -> u64 {
        self.0[0]
    }
}

/// What the first send with a deduplication key produced; duplicates answer the same.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Original {
    /// The seq the original was sent with: its MessageId derives from it (`support::ids`).
    pub origin: u64,
    pub sequence_number: SequenceNumber,
}

/// 40 bytes.
#[derive(Debug)]
struct Record {
    key: DedupKey,
    origin: u64,
    sequence_number: SequenceNumber,
    expires_ms: u64,
}

/// The deduplication entries of one FIFO queue.
#[derive(Debug)]
pub(crate) struct DedupCache {
    salt: [u8; 16],
    /// Records in send order; `log[0]` is at absolute position `head`.
    log: VecDeque<Record>,
    head: u64,
    /// Absolute log positions (mod 2^32) of the live records, hashed by their key.
    index: HashTable<u32>,
}

impl Default for DedupCache {
    fn default() -> Self {
        Self::new()
    }
}

impl DedupCache {
    /// An empty cache with a fresh salt.
    pub fn new() -> Self {
        Self {
            salt: rand::random(),
            log: VecDeque::new(),
            head: 0,
            index: HashTable::new(),
        }
    }

    /// The key of `dedup_id`, within `group` when deduplication is per message group.
    ///
    /// Group and deduplication ids are printable ASCII (checked on send), so the NUL between
    /// them cannot be forged by either; the salt keeps keys unpredictable, so nobody can
    /// choose ids that crowd one corner of the table.
    pub fn key(&self, group: Option<&str>, dedup_id: &str) -> DedupKey {
        let mut hasher = Sha256::new();
        hasher.update(self.salt);
        if let Some(group) = group {
            hasher.update(group.as_bytes());
            hasher.update([0]);
        }
        hasher.update(dedup_id.as_bytes());
        let digest = hasher.finalize();
        let word = |i: usize| {
            let mut bytes = [0u8; 8];
            bytes.copy_from_slice(&digest[i * 8..i * 8 + 8]);
            u64::from_le_bytes(bytes)
        };
        DedupKey([word(0), word(1)])
    }

    fn record(&self, position: u32) -> &Record {
        &self.log[position.wrapping_sub(self.head as u32) as usize]
    }

    /// The original of a send with `key` still inside its window at `now`.
    pub fn lookup(&self, key: DedupKey, now: u64) -> Option<Original> {
        let &position = self
            .index
            .find(key.hash(), |&p| self.record(p).key == key)?;
        let record = self.record(position);
        (record.expires_ms > now).then_some(Original {
            origin: record.origin,
            sequence_number: record.sequence_number,
        })
    }

    /// Remembers a send until `expires_ms`; a key already present (its window over but not yet
    /// expired by [`DedupCache::expire`]) now names the new record.
    pub fn remember(&mut self, key: DedupKey, original: Original, expires_ms: u64) {
        // Positions are u32: more than 4 billion sends inside one window cannot happen, and if
        // they did the oldest would be forgotten a little early rather than misread.
        if self.log.len() >= u32::MAX as usize {
            self.pop_front();
        }
        let position = (self.head + self.log.len() as u64) as u32;
        self.log.push_back(Record {
            key,
            origin: original.origin,
            sequence_number: original.sequence_number,
            expires_ms,
        });
        let Self {
            log, head, index, ..
        } = self;
        let at = |p: u32| &log[p.wrapping_sub(*head as u32) as usize];
        match index.find_mut(key.hash(), |&p| at(p).key == key) {
            Some(slot) => *slot = position,
            None => {
                index.insert_unique(key.hash(), position, |&p| at(p).key.hash());
            }
        }
    }

    /// Forgets every record whose window closed at or before `now`, oldest first, and gives
    /// memory back once the cache is a quarter full (amortised: one rebuild per shrink).
    pub fn expire(&mut self, now: u64) {
        let mut popped = false;
        while self.log.front().is_some_and(|r| r.expires_ms <= now) {
            self.pop_front();
            popped = true;
        }
        if popped && self.log.capacity() > 1024 && self.log.len() < self.log.capacity() / 4 {
            self.log.shrink_to(self.log.len() * 2);
            let Self {
                log, head, index, ..
            } = self;
            index.shrink_to(log.len() * 2, |&p| {
                log[p.wrapping_sub(*head as u32) as usize].key.hash()
            });
        }
    }

    fn pop_front(&mut self) {
        let Some(record) = self.log.pop_front() else {
            return;
        };
        let position = self.head as u32;
        self.head += 1;
        // The index may already name a newer record of the same key (see `remember`).
        if let Ok(entry) = self.index.find_entry(record.key.hash(), |&p| p == position) {
            entry.remove();
        }
    }

    /// Forgets everything (PurgeQueue, TEST-PY `test_purge_queue_clears_fifo_deduplication_cache`).
    pub fn clear(&mut self) {
        self.head += self.log.len() as u64;
        self.log = VecDeque::new();
        self.index = HashTable::new();
    }

    /// Records held, live or not yet expired.
    #[cfg(test)]
    fn len(&self) -> usize {
        self.log.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn original(n: u64) -> Original {
        Original {
            origin: n,
            sequence_number: SequenceNumber::from_offset(n).unwrap(),
        }
    }

    #[test]
    fn a_record_is_40_bytes() {
        // docs/emulator.md ("Memory") does its arithmetic with this figure.
        assert_eq!(std::mem::size_of::<Record>(), 40);
    }

    #[test]
    fn a_duplicate_is_answered_with_the_original_until_the_window_closes() {
        let mut cache = DedupCache::new();
        let key = cache.key(None, "d1");
        assert_eq!(cache.lookup(key, 0), None);
        cache.remember(key, original(1), DEDUP_WINDOW_MS);
        assert_eq!(cache.lookup(key, DEDUP_WINDOW_MS - 1), Some(original(1)));
        assert_eq!(
            cache.lookup(key, DEDUP_WINDOW_MS),
            None,
            "the window is 5 minutes"
        );
        cache.expire(DEDUP_WINDOW_MS);
        assert_eq!(cache.len(), 0);
        cache.remember(key, original(2), 2 * DEDUP_WINDOW_MS);
        assert_eq!(cache.lookup(key, DEDUP_WINDOW_MS), Some(original(2)));
    }

    #[test]
    fn scopes_are_distinct_keys() {
        let cache = DedupCache::new();
        assert_ne!(cache.key(None, "d1"), cache.key(None, "d2"));
        assert_ne!(cache.key(Some("g1"), "d1"), cache.key(Some("g2"), "d1"));
        assert_ne!(cache.key(Some("g"), "d1"), cache.key(None, "d1"));
        assert_ne!(cache.key(Some("a"), "bc"), cache.key(Some("ab"), "c"));
        assert_eq!(cache.key(Some("g1"), "d1"), cache.key(Some("g1"), "d1"));
        assert_ne!(
            DedupCache::new().key(None, "d1"),
            cache.key(None, "d1"),
            "salted per cache"
        );
    }

    #[test]
    fn a_key_remembered_again_before_expiry_runs_keeps_the_newer_record() {
        let mut cache = DedupCache::new();
        let key = cache.key(None, "d");
        cache.remember(key, original(1), 10);
        // Its window closed at 10, but nothing expired it yet.
        cache.remember(key, original(2), 20);
        cache.expire(10);
        assert_eq!(cache.lookup(key, 15), Some(original(2)));
        cache.expire(20);
        assert_eq!((cache.lookup(key, 15), cache.len()), (None, 0));
    }

    #[test]
    fn expiry_keeps_every_live_record_findable_through_growth_and_shrinking() {
        let mut cache = DedupCache::new();
        let keys: Vec<DedupKey> = (0..10_000)
            .map(|i| cache.key(None, &format!("d{i}")))
            .collect();
        for (i, &key) in keys.iter().enumerate() {
            cache.remember(key, original(i as u64 + 1), i as u64 + 1);
        }
        cache.expire(9_000);
        assert_eq!(cache.len(), 1_000);
        for (i, &key) in keys.iter().enumerate() {
            let expected = (i >= 9_000).then(|| original(i as u64 + 1));
            assert_eq!(cache.lookup(key, 9_000), expected, "d{i}");
        }
        cache.clear();
        assert_eq!(cache.lookup(keys[9_999], 0), None);
        cache.remember(keys[0], original(7), 1);
        assert_eq!(cache.lookup(keys[0], 0), Some(original(7)));
    }
}
