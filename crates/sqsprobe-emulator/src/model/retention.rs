//! Retention order of a queue's messages that no FIFO group files: which one expires first.
//!
//! A queue takes its seqs in the order its messages arrive (`model/store.rs`), and nearly every
//! message arrives at a later enqueue time than the one before it, so seq order is expiry order.
//! Those messages sit in a log of (seq, slot) in seq order: an append on arrival, the front
//! the first to expire. A removal finds its entry by binary search and marks it; marked entries
//! leave from the front, and all at once when they outnumber the live ones (amortised O(1) per
//! removal), so the log stays within twice the messages it names. An entry is 16 bytes in
//! chunks that never move, against ~47 for an entry of the B-tree of (enqueued, id) this
//! replaces, whose nodes stay half full under appends (docs/emulator.md, "Memory").
//!
//! A message that arrives with an enqueue time before the newest logged one (a standard
//! dead-letter queue keeps a moved message's enqueue time; a wall clock set back) goes to a
//! B-tree by (enqueued, id) beside the log, and expiry takes the older of the two fronts.

use std::collections::{BTreeSet, VecDeque};

use crate::model::message::Id;
use crate::model::slab::Slab;

/// The slot of a log entry whose message has left retention.
const GONE: u32 = u32::MAX;

/// Entries per chunk of the log: 16 bytes each, so a chunk is 65,024 bytes, just under the
/// 64 KiB that one mimalloc page holds (an allocation of exactly 64 KiB goes to a larger size
/// class and costs a third more). Chunks never move, so the log grows without copying itself:
/// a `VecDeque` that doubles kept its old buffers in RSS (73 bytes an entry at 200,000).
const CHUNK: usize = 4064;

/// A queue's retention order.
#[derive(Debug, Default)]
pub(crate) struct Retention {
    /// (seq, slot) in seq order, enqueue times non-decreasing along it, in chunks of at most
    /// [`CHUNK`]; slot [`GONE`]: removed. Only the last chunk is ever appended to, and only the
    /// first grows as a `Vec` does (a queue of a few messages keeps a few entries).
    log: VecDeque<Vec<(u64, u32)>>,
    /// Entries of the first chunk already gone from the front.
    head: usize,
    /// Entries of the log after `head`, gone ones included.
    len: usize,
    /// Entries after `head` marked [`GONE`].
    gone: usize,
    /// The enqueue time of the last message appended to the log.
    newest: u64,
    /// Arrivals older than `newest`, by (enqueued, id).
    late: BTreeSet<(u64, Id)>,
    /// No message held was enqueued before this: the enqueue time of the first to expire when
    /// [`Retention::first_before`] last read it, lowered by every arrival since (removals can
    /// only raise the true first). A queue looks for expired messages at every operation, and
    /// reading the first one's time from its slot is a cache miss on a deep queue; below this
    /// floor there is nothing to read.
    floor: u64,
}

impl Retention {
    /// Adds message `id`, enqueued at `enqueued`.
    pub fn insert(&mut self, enqueued: u64, id: Id) {
        self.floor = self.floor.min(enqueued);
        let last_seq = self.log.back().and_then(|c| c.last()).map(|&(seq, _)| seq);
        let in_order = last_seq.is_none_or(|seq| seq < id.seq);
        if in_order && (self.len == 0 || enqueued >= self.newest) {
            self.push(id);
            self.newest = enqueued;
        } else {
            self.late.insert((enqueued, id));
        }
    }

    fn push(&mut self, id: Id) {
        match self.log.back_mut() {
            Some(last) if last.len() < CHUNK => {
                if last.len() == last.capacity() {
                    // Only the first chunk starts small: grow it as a `Vec` would, up to CHUNK.
                    last.reserve_exact(last.len().max(4).min(CHUNK - last.len()));
                }
                last.push((id.seq, id.slot));
            }
            _ => {
                let capacity = if self.log.is_empty() { 4 } else { CHUNK };
                let mut chunk = Vec::with_capacity(capacity);
                chunk.push((id.seq, id.slot));
                self.log.push_back(chunk);
            }
        }
        self.len += 1;
    }

    /// Takes message `id` (enqueued at `enqueued`) out of the order.
    pub fn remove(&mut self, enqueued: u64, id: Id) {
        if self.late.remove(&(enqueued, id)) {
            return;
        }
        let Some(entry) = self.find(id.seq) else {
            return;
        };
        if entry.1 == GONE {
            return;
        }
        entry.1 = GONE;
        self.gone += 1;
        self.trim_front();
        if self.gone > 32 && self.gone * 2 > self.len {
            self.compact();
        }
    }

    /// The live-or-gone entry of `seq` after `head`, by binary search.
    fn find(&mut self, seq: u64) -> Option<&mut (u64, u32)> {
        let chunk = self
            .log
            .partition_point(|c| c.last().is_some_and(|&(last, _)| last < seq));
        let from = if chunk == 0 { self.head } else { 0 };
        let entries = self.log.get_mut(chunk)?.get_mut(from..)?;
        let at = entries.binary_search_by_key(&seq, |&(s, _)| s).ok()?;
        Some(&mut entries[at])
    }

    /// Drops gone entries from the front, and the first chunk once it is used up.
    fn trim_front(&mut self) {
        while let Some(first) = self.log.front() {
            match first.get(self.head) {
                Some(&(_, GONE)) => {
                    self.head += 1;
                    self.len -= 1;
                    self.gone -= 1;
                }
                Some(_) => return,
                None => {
                    // Used up: a chunk still appended to (the last one) goes too; the next
                    // append opens a new one.
                    self.log.pop_front();
                    self.head = 0;
                }
            }
        }
    }

    /// Keeps only the live entries, in full chunks: O(entries), once gone ones are the majority,
    /// so amortised O(1) per removal, and the log stays within twice what it names.
    fn compact(&mut self) {
        let live: Vec<(u64, u32)> = self
            .log
            .iter()
            .enumerate()
            .flat_map(|(i, c)| c[if i == 0 { self.head } else { 0 }..].iter().copied())
            .filter(|&(_, slot)| slot != GONE)
            .collect();
        let (newest, floor) = (self.newest, self.floor);
        *self = Self {
            late: std::mem::take(&mut self.late),
            ..Self::default()
        };
        for (seq, slot) in live {
            self.push(Id { slot, seq });
        }
        self.newest = newest;
        self.floor = floor;
    }

    /// The message that expires first and its enqueue time, if it was enqueued before `before`
    /// (what a queue's tick asks: `before` is now less the retention period, plus 1 ms).
    pub fn first_before(&mut self, before: u64, slots: &Slab) -> Option<(u64, Id)> {
        if self.floor >= before {
            return None;
        }
        let first = self.first(slots);
        self.floor = first.map_or(u64::MAX, |(enqueued, _)| enqueued);
        first.filter(|&(enqueued, _)| enqueued < before)
    }

    /// The message that expires first and its enqueue time (read from `slots` for a logged one).
    pub fn first(&self, slots: &Slab) -> Option<(u64, Id)> {
        let logged = self
            .log
            .front()
            .and_then(|c| c.get(self.head))
            .and_then(|&(seq, slot)| {
                let message = slots.get(slot, seq);
                debug_assert!(message.is_some(), "retention names a message that is gone");
                Some((message?.enqueued_ms(), Id { slot, seq }))
            });
        match (logged, self.late.first().copied()) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Forgets every message.
    pub fn clear(&mut self) {
        *self = Self::default();
    }

    /// Whether no message is held.
    #[cfg(test)]
    pub fn is_empty(&self) -> bool {
        self.len == self.gone && self.late.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::message::{DedupId, Message};

    /// A slab of messages sent at the given times, seq = slot + 1.
    fn slots(sent: &[u64]) -> (Slab, Vec<Id>) {
        let mut slab = Slab::default();
        let ids = sent
            .iter()
            .enumerate()
            .map(|(i, &at)| {
                let seq = i as u64 + 1;
                let slot = slab.insert(Message::new(seq, "b", DedupId::None, at, 0));
                Id { slot, seq }
            })
            .collect();
        (slab, ids)
    }

    #[test]
    fn the_oldest_comes_first_late_arrivals_included() {
        let (slab, ids) = slots(&[10, 20, 5, 30]);
        let mut retention = Retention::default();
        for (&id, at) in ids.iter().zip([10, 20, 5, 30]) {
            retention.insert(at, id);
        }
        assert_eq!(retention.late.len(), 1, "sent at 5 after one at 20");
        assert_eq!(retention.first(&slab), Some((5, ids[2])));
        retention.remove(5, ids[2]);
        assert_eq!(retention.first(&slab), Some((10, ids[0])));
        retention.remove(10, ids[0]);
        retention.remove(30, ids[3]);
        assert_eq!(retention.first(&slab), Some((20, ids[1])));
        retention.remove(20, ids[1]);
        assert!(retention.is_empty());
        assert_eq!(retention.first(&slab), None);
    }

    #[test]
    fn removed_entries_leave_so_the_log_stays_within_twice_what_it_names() {
        let times: Vec<u64> = (0..10_000).collect();
        let (slab, ids) = slots(&times);
        let mut retention = Retention::default();
        for (&id, &at) in ids.iter().zip(&times) {
            retention.insert(at, id);
        }
        // Remove every message but each hundredth, from the back: nothing leaves the front.
        for (&id, &at) in ids.iter().zip(&times).rev() {
            if at % 100 != 0 {
                retention.remove(at, id);
                assert!(retention.len <= 2 * (retention.len - retention.gone) + 33);
            }
        }
        assert_eq!(retention.len - retention.gone, 100);
        assert!(retention.len <= 233, "{}", retention.len);
        assert_eq!(retention.log.len(), 1, "compacted into one chunk");
        for (&id, &at) in ids.iter().zip(&times).step_by(100) {
            assert_eq!(retention.first(&slab), Some((at, id)));
            retention.remove(at, id);
        }
        assert!(retention.is_empty());
        // Removing twice, or what was never there, changes nothing.
        retention.remove(0, ids[0]);
        assert!(retention.is_empty());
    }

    #[test]
    fn a_used_up_chunk_leaves_from_the_front() {
        let times: Vec<u64> = (0..(2 * CHUNK as u64 + 10)).collect();
        let (slab, ids) = slots(&times);
        let mut retention = Retention::default();
        for (&id, &at) in ids.iter().zip(&times) {
            retention.insert(at, id);
        }
        assert_eq!(retention.log.len(), 3);
        for (&id, &at) in ids.iter().zip(&times).take(CHUNK + 5) {
            assert_eq!(retention.first(&slab), Some((at, id)));
            retention.remove(at, id);
        }
        assert_eq!(retention.log.len(), 2, "the first chunk is freed");
        let next = CHUNK + 5;
        assert_eq!(retention.first(&slab), Some((times[next], ids[next])));
        // A message in the middle of the second chunk, then the rest.
        retention.remove(times[next + 100], ids[next + 100]);
        for (&id, &at) in ids.iter().zip(&times).skip(next) {
            retention.remove(at, id);
        }
        assert!(retention.is_empty());
        assert!(retention.log.is_empty());
    }

    /// What one op of the property test does: a message arrives this many ms after the last
    /// arrival (before it when negative), the n-th held message leaves, or a tick asks for the
    /// first message enqueued before the last arrival's time plus this many ms.
    #[derive(Debug, Clone)]
    enum Op {
        Arrive(i8),
        Leave(usize),
        Ask(i8),
    }

    fn op() -> impl proptest::strategy::Strategy<Value = Op> {
        use proptest::prelude::*;
        prop_oneof![
            4 => any::<i8>().prop_map(Op::Arrive),
            2 => any::<usize>().prop_map(Op::Leave),
            3 => any::<i8>().prop_map(Op::Ask),
        ]
    }

    /// `first_before`, which skips reading slots below its floor, answers as the (enqueued, id)
    /// B-tree the log replaced does, whatever order arrivals, removals and asks come in.
    #[test]
    fn first_before_answers_as_an_ordered_set_does() {
        use proptest::prelude::*;
        proptest!(sqsprobe_testing::config(256), |(ops in proptest::collection::vec(op(), 1..300))| {
            let mut slab = Slab::default();
            let mut retention = Retention::default();
            let mut model: BTreeSet<(u64, Id)> = BTreeSet::new();
            let (mut seq, mut last) = (0u64, 1_000u64);
            for op in ops {
                match op {
                    Op::Arrive(dt) => {
                        seq += 1;
                        last = last.saturating_add_signed(i64::from(dt));
                        let slot = slab.insert(Message::new(seq, "b", DedupId::None, last, 0));
                        let id = Id { slot, seq };
                        retention.insert(last, id);
                        model.insert((last, id));
                    }
                    Op::Leave(n) => {
                        if let Some(&(at, id)) = model.iter().nth(n % model.len().max(1)) {
                            model.remove(&(at, id));
                            retention.remove(at, id);
                            slab.take(id.slot);
                        }
                    }
                    Op::Ask(dt) => {
                        let before = last.saturating_add_signed(i64::from(dt));
                        let expected = model.first().copied().filter(|&(at, _)| at < before);
                        prop_assert_eq!(retention.first_before(before, &slab), expected);
                    }
                }
            }
        });
    }
}
