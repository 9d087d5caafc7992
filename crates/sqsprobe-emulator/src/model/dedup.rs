//! FIFO deduplication: what every send of the last five minutes produced, so that a duplicate
//! is answered like the original (API_SendMessage, MessageDeduplicationId; facts F2).
//!
//! A send is remembered by a 128-bit digest of its scope and id (the first 16 bytes of
//! SHA-256 over a per-cache random salt, the group when deduplication is per message group,
//! and the id), never by the strings: a digest is all a later send needs to be recognised,
//! and the original's MessageId (as the seq it derives from) and SequenceNumber are all a
//! duplicate is answered with.
//!
//! While the message a send stored is still in its queue, that message *is* the record: it
//! holds its origin, SequenceNumber, send time (its window ends five minutes later), its id
//! and group, and 24 bits of its key (the tag, [`DedupKey::tag`]), so the index names its slot
//! ([`Entry::Stored`]) and nothing else is kept. Only a message that leaves inside its window
//! (deleted, expired, dead-lettered, moved) leaves a 40-byte [`Record`] behind, in a log in
//! the order they were written ([`DedupCache::release`]). Records' windows end at most five
//! minutes after they are written, so expiry pops the front; a front record that lives longer
//! than one behind it keeps that one (already answered as expired by [`DedupCache::lookup`])
//! for at most those five minutes. One hash table of `u32` entries, each a slot or a log
//! position, hashed by the tag, finds both (docs/emulator.md, "Memory").

use std::collections::VecDeque;

use hashbrown::HashTable;
use sha2::{Digest, Sha256};

use crate::model::message::SequenceNumber;

/// FIFO deduplication interval: 5 minutes (API_SendMessage, MessageDeduplicationId).
pub(crate) const DEDUP_WINDOW_MS: u64 = 5 * 60 * 1000;

/// A send's deduplication scope and id, digested: 128 bits as two words, so that a record is
/// 8-byte aligned (a `u128` would pad it to 48 bytes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct DedupKey([u64; 2]);

impl DedupKey {
    /// 24 bits of the digest, never 0 (a message's tag 0 means it is not indexed): what a
    /// stored message keeps of its key, and what the table is hashed by.
    pub fn tag(self) -> u32 {
        match (self.0[0] & TAG_MASK) as u32 {
            0 => 1,
            tag => tag,
        }
    }
}

const TAG_MASK: u64 = 0xFF_FFFF;

/// The table hash of a tag: a multiply by an odd constant spreads the tag's 24 bits over the
/// top 7 (hashbrown's control byte) while keeping its low bits (the bucket) uniform.
fn table_hash(tag: u32) -> u64 {
    u64::from(tag).wrapping_mul(0x9E37_79B9_7F4A_7C15)
}

/// What the first send with a deduplication key produced; duplicates answer the same.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Original {
    /// The seq the original was sent with: its MessageId derives from it (`support::ids`).
    pub origin: u64,
    pub sequence_number: SequenceNumber,
}

/// A send whose message is still stored, as its queue reads it back from the message's slot.
pub(crate) trait StoredSends {
    /// The tag of the message in `slot` (0 if there is none).
    fn tag(&self, slot: u32) -> u32;
    /// The key, original and window end of the message in `slot`; dearer than the tag (the key
    /// is a SHA-256), so asked only once the tag matched.
    fn send(&self, slot: u32, cache: &DedupCache) -> Option<(DedupKey, Original, u64)>;
}

/// 40 bytes.
#[derive(Debug)]
struct Record {
    key: DedupKey,
    origin: u64,
    sequence_number: SequenceNumber,
    expires_ms: u64,
}

/// An index entry: the high bit says which.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Entry {
    /// The message in this slot of the queue's slab is the record.
    Stored(u32),
    /// A record in the log, at this absolute position (mod 2^31).
    Logged(u32),
}

const LOGGED: u32 = 1 << 31;

/// Slots at or above this are not indexed (their sends are logged at once); 2^31 messages in
/// one queue would take ~260 GB of slots first.
pub(crate) const MAX_INDEXED_SLOT: u32 = LOGGED - 1;

impl Entry {
    fn unpack(raw: u32) -> Self {
        if raw & LOGGED == 0 {
            Entry::Stored(raw)
        } else {
            Entry::Logged(raw & !LOGGED)
        }
    }

    fn pack(self) -> u32 {
        match self {
            Entry::Stored(slot) => slot,
            Entry::Logged(position) => position | LOGGED,
        }
    }
}

/// The deduplication entries of one FIFO queue.
#[derive(Debug)]
pub(crate) struct DedupCache {
    salt: [u8; 16],
    /// Records of messages that left inside their window, in the order they left; `log[0]` is
    /// at absolute position `head`.
    log: VecDeque<Record>,
    head: u64,
    /// Packed [`Entry`]s of the live sends, hashed by their tag. A key sent again after its
    /// window closed may be named by several entries until the older ones go: a lookup takes
    /// the one whose window is open, and there is at most one.
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
        record_at(&self.log, self.head, position)
    }

    /// The original of a send with `key` still inside its window at `now`.
    pub fn lookup(&self, key: DedupKey, now: u64, stored: &impl StoredSends) -> Option<Original> {
        let tag = key.tag();
        self.index
            .iter_hash(table_hash(tag))
            .find_map(|&raw| match Entry::unpack(raw) {
                Entry::Logged(position) => {
                    let record = self.record(position);
                    (record.key == key && record.expires_ms > now).then_some(Original {
                        origin: record.origin,
                        sequence_number: record.sequence_number,
                    })
                }
                Entry::Stored(slot) if stored.tag(slot) == tag => {
                    let (stored_key, original, expires_ms) = stored.send(slot, self)?;
                    (stored_key == key && expires_ms > now).then_some(original)
                }
                Entry::Stored(_) => None,
            })
    }

    /// Remembers a send whose message is stored in `slot` and holds `key`'s tag: the message
    /// is the record until [`DedupCache::release`]. `tags` reads a stored message's tag (the
    /// table may grow and hash its entries again).
    pub fn remember_stored(&mut self, key: DedupKey, slot: u32, tags: impl Fn(u32) -> u32) {
        debug_assert!(slot <= MAX_INDEXED_SLOT);
        let Self {
            log, head, index, ..
        } = self;
        index.insert_unique(table_hash(key.tag()), Entry::Stored(slot).pack(), |&raw| {
            hash_of(raw, log, *head, &tags)
        });
    }

    /// Remembers a send until `expires_ms` as a record of its own (a message that left, or
    /// one whose slot cannot be indexed).
    pub fn remember(
        &mut self,
        key: DedupKey,
        original: Original,
        expires_ms: u64,
        tags: impl Fn(u32) -> u32,
    ) {
        let position = self.push(key, original, expires_ms);
        let Self {
            log, head, index, ..
        } = self;
        index.insert_unique(table_hash(key.tag()), position, |&raw| {
            hash_of(raw, log, *head, &tags)
        });
    }

    /// Appends a record; returns its packed entry.
    fn push(&mut self, key: DedupKey, original: Original, expires_ms: u64) -> u32 {
        // Positions are 31 bits: more than 2 billion records inside one window cannot happen,
        // and if they did the oldest would be forgotten a little early rather than misread.
        if self.log.len() >= MAX_INDEXED_SLOT as usize {
            self.pop_front();
        }
        let position = (self.head + self.log.len() as u64) as u32 & !LOGGED;
        self.log.push_back(Record {
            key,
            origin: original.origin,
            sequence_number: original.sequence_number,
            expires_ms,
        });
        Entry::Logged(position).pack()
    }

    /// The message in `slot`, which held the tag `tag` and whose window ends at `expires_ms`,
    /// is leaving its queue: if the index still names it and its window is open at `now`, its
    /// send becomes a logged record (`send` gives its key and original, computed only then),
    /// else its entry goes.
    pub fn release(
        &mut self,
        (slot, tag): (u32, u32),
        expires_ms: u64,
        now: u64,
        send: impl FnOnce(&DedupCache) -> Option<(DedupKey, Original)>,
    ) {
        let stored = Entry::Stored(slot).pack();
        let hash = table_hash(tag);
        if self.index.find(hash, |&raw| raw == stored).is_none() {
            return;
        }
        match (expires_ms > now).then(|| send(self)).flatten() {
            Some((key, original)) => {
                debug_assert_eq!(key.tag(), tag);
                // Overwritten in place: the bucket's hash (the tag) stays the same.
                let position = self.push(key, original, expires_ms);
                if let Some(raw) = self.index.find_mut(hash, |&raw| raw == stored) {
                    *raw = position;
                }
            }
            None => {
                if let Ok(entry) = self.index.find_entry(hash, |&raw| raw == stored) {
                    entry.remove();
                }
            }
        }
    }

    /// Forgets every record whose window closed at or before `now` from the front of the log,
    /// and gives memory back once the log is a quarter full (amortised: one rebuild per
    /// shrink).
    pub fn expire(&mut self, now: u64, tags: impl Fn(u32) -> u32) {
        let mut popped = false;
        while self.log.front().is_some_and(|r| r.expires_ms <= now) {
            self.pop_front();
            popped = true;
        }
        if popped && self.log.capacity() > 1024 && self.log.len() < self.log.capacity() / 4 {
            self.log.shrink_to(self.log.len() * 2);
        }
        // Entries also go when stored messages leave outside their window, so the index is
        // checked whether or not the log moved.
        if self.index.capacity() > 1024 && self.index.len() < self.index.capacity() / 4 {
            let Self {
                log, head, index, ..
            } = self;
            index.shrink_to(index.len() * 2, |&raw| hash_of(raw, log, *head, &tags));
        }
    }

    fn pop_front(&mut self) {
        let Some(record) = self.log.pop_front() else {
            return;
        };
        let position = Entry::Logged(self.head as u32 & !LOGGED).pack();
        self.head += 1;
        if let Ok(entry) = self
            .index
            .find_entry(table_hash(record.key.tag()), |&raw| raw == position)
        {
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
    pub fn len(&self) -> usize {
        self.log.len()
    }

    /// Index entries held.
    #[cfg(test)]
    fn entries(&self) -> usize {
        self.index.len()
    }
}

fn record_at(log: &VecDeque<Record>, head: u64, position: u32) -> &Record {
    &log[(position.wrapping_sub(head as u32) & !LOGGED) as usize]
}

/// The table hash of a packed entry.
fn hash_of(raw: u32, log: &VecDeque<Record>, head: u64, tags: &impl Fn(u32) -> u32) -> u64 {
    match Entry::unpack(raw) {
        Entry::Logged(position) => table_hash(record_at(log, head, position).key.tag()),
        Entry::Stored(slot) => table_hash(tags(slot)),
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

    /// Stored messages by slot: key, original, window end.
    #[derive(Default)]
    struct Slots(Vec<Option<(DedupKey, Original, u64)>>);

    impl Slots {
        fn put(&mut self, slot: u32, send: (DedupKey, Original, u64)) {
            let slot = slot as usize;
            if self.0.len() <= slot {
                self.0.resize(slot + 1, None);
            }
            self.0[slot] = Some(send);
        }

        fn tags(&self) -> impl Fn(u32) -> u32 + '_ {
            |slot| self.tag(slot)
        }
    }

    impl StoredSends for Slots {
        fn tag(&self, slot: u32) -> u32 {
            self.0
                .get(slot as usize)
                .copied()
                .flatten()
                .map_or(0, |(key, _, _)| key.tag())
        }

        fn send(&self, slot: u32, _: &DedupCache) -> Option<(DedupKey, Original, u64)> {
            self.0.get(slot as usize).copied().flatten()
        }
    }

    /// Stores a send in `slot` as a queue does.
    fn store(cache: &mut DedupCache, slots: &mut Slots, slot: u32, key: DedupKey, n: u64) {
        slots.put(slot, (key, original(n), DEDUP_WINDOW_MS));
        cache.remember_stored(key, slot, slots.tags());
    }

    /// Takes the message out of `slot` at `now`, as a queue does.
    fn take(cache: &mut DedupCache, slots: &mut Slots, slot: u32, now: u64) {
        let (key, original, expires_ms) = slots.0[slot as usize].take().unwrap();
        cache.release((slot, key.tag()), expires_ms, now, |_| {
            Some((key, original))
        });
    }

    #[test]
    fn a_record_is_40_bytes() {
        // docs/emulator.md ("Memory") does its arithmetic with this figure.
        assert_eq!(std::mem::size_of::<Record>(), 40);
    }

    #[test]
    fn a_duplicate_is_answered_with_the_original_until_the_window_closes() {
        let mut cache = DedupCache::new();
        let slots = Slots::default();
        let key = cache.key(None, "d1");
        assert_eq!(cache.lookup(key, 0, &slots), None);
        cache.remember(key, original(1), DEDUP_WINDOW_MS, slots.tags());
        assert_eq!(
            cache.lookup(key, DEDUP_WINDOW_MS - 1, &slots),
            Some(original(1))
        );
        assert_eq!(
            cache.lookup(key, DEDUP_WINDOW_MS, &slots),
            None,
            "the window is 5 minutes"
        );
        cache.expire(DEDUP_WINDOW_MS, slots.tags());
        assert_eq!((cache.len(), cache.entries()), (0, 0));
        cache.remember(key, original(2), 2 * DEDUP_WINDOW_MS, slots.tags());
        assert_eq!(
            cache.lookup(key, DEDUP_WINDOW_MS, &slots),
            Some(original(2))
        );
    }

    #[test]
    fn a_stored_message_is_its_own_record_until_it_leaves_inside_its_window() {
        let mut cache = DedupCache::new();
        let mut slots = Slots::default();
        let (k1, k2) = (cache.key(None, "d1"), cache.key(None, "d2"));
        store(&mut cache, &mut slots, 0, k1, 1);
        store(&mut cache, &mut slots, 1, k2, 2);
        assert_eq!((cache.len(), cache.entries()), (0, 2), "no record yet");
        assert_eq!(cache.lookup(k1, 10, &slots), Some(original(1)));
        assert_eq!(cache.lookup(k2, 10, &slots), Some(original(2)));
        // d1 leaves inside its window: a record keeps answering for it.
        take(&mut cache, &mut slots, 0, 10);
        assert_eq!((cache.len(), cache.entries()), (1, 2));
        assert_eq!(cache.lookup(k1, 10, &slots), Some(original(1)));
        // d2 leaves after its window: nothing is kept.
        take(&mut cache, &mut slots, 1, DEDUP_WINDOW_MS);
        assert_eq!((cache.len(), cache.entries()), (1, 1));
        assert_eq!(cache.lookup(k2, 10, &slots), None);
        cache.expire(DEDUP_WINDOW_MS, slots.tags());
        assert_eq!((cache.len(), cache.entries()), (0, 0));
    }

    #[test]
    fn a_key_sent_again_after_its_window_is_answered_by_the_newer_send() {
        let mut cache = DedupCache::new();
        let mut slots = Slots::default();
        let key = cache.key(None, "d");
        store(&mut cache, &mut slots, 0, key, 1);
        // Its window closed, the message is still stored, and the key is sent again.
        let later = DEDUP_WINDOW_MS + 5;
        assert_eq!(cache.lookup(key, later, &slots), None);
        slots.put(1, (key, original(2), later + DEDUP_WINDOW_MS));
        cache.remember_stored(key, 1, slots.tags());
        assert_eq!(cache.lookup(key, later, &slots), Some(original(2)));
        // The old one leaving takes only its own entry.
        take(&mut cache, &mut slots, 0, later);
        assert_eq!(cache.lookup(key, later, &slots), Some(original(2)));
        assert_eq!((cache.len(), cache.entries()), (0, 1));
        // A slot reused by another key is not mistaken for the old one.
        let other = cache.key(None, "e");
        store(&mut cache, &mut slots, 0, other, 3);
        assert_eq!(cache.lookup(key, later, &slots), Some(original(2)));
        assert_eq!(cache.lookup(other, 10, &slots), Some(original(3)));
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
        let slots = Slots::default();
        let key = cache.key(None, "d");
        cache.remember(key, original(1), 10, slots.tags());
        // Its window closed at 10, but nothing expired it yet.
        cache.remember(key, original(2), 20, slots.tags());
        cache.expire(10, slots.tags());
        assert_eq!(cache.lookup(key, 15, &slots), Some(original(2)));
        cache.expire(20, slots.tags());
        assert_eq!((cache.lookup(key, 15, &slots), cache.len()), (None, 0));
    }

    #[test]
    fn every_live_send_stays_findable_through_growth_and_shrinking() {
        let mut cache = DedupCache::new();
        let mut slots = Slots::default();
        let keys: Vec<DedupKey> = (0..10_000)
            .map(|i| cache.key(None, &format!("d{i}")))
            .collect();
        // Even sends are stored messages, odd ones records; half the stored ones leave.
        for (i, &key) in keys.iter().enumerate() {
            let n = i as u64 + 1;
            if i % 2 == 0 {
                slots.put(i as u32, (key, original(n), n));
                cache.remember_stored(key, i as u32, slots.tags());
            } else {
                cache.remember(key, original(n), n, slots.tags());
            }
        }
        for i in (0..10_000).step_by(4) {
            take(&mut cache, &mut slots, i, 0);
        }
        cache.expire(9_000, slots.tags());
        for (i, &key) in keys.iter().enumerate() {
            let expected = (i >= 9_000).then(|| original(i as u64 + 1));
            assert_eq!(cache.lookup(key, 9_000, &slots), expected, "d{i}");
        }
        cache.clear();
        assert_eq!(cache.lookup(keys[9_999], 0, &Slots::default()), None);
        cache.remember(keys[0], original(7), 1, slots.tags());
        assert_eq!(cache.lookup(keys[0], 0, &slots), Some(original(7)));
    }
}
