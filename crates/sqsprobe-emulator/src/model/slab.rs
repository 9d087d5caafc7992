//! A queue's message slots: chunks of [`CHUNK`] slots that never move, freed slots reused.
//!
//! One growing `Vec` of slots was reallocated and copied whole each time it doubled (4.8 % of
//! SendMessage's time in docs/performance.md's profile, on a queue the bench grows without
//! bound), and the copy briefly held the old and the new array at once. Here only the first
//! chunk grows (so a queue of a few messages stays a few slots); every later chunk is allocated
//! at its full size once, so growing a deep queue copies nothing.

use crate::model::message::Message;

/// Slots per chunk: a chunk of 104-byte slots is then 520,208 bytes, 4.0 KiB short of 512 KiB.
/// mimalloc needs some room beside an allocation this large, so one of exactly 512 KiB (4,096
/// slots of 128 bytes) took ~27 % more RSS than it asked for, and one just short of it ~1 %
/// (measured with mimalloc 0.1.52 on Linux, 1,000,000 slots: 162 against 131 bytes a 128-byte
/// slot; 121 a 120-byte slot at 4,336 slots, 131 at 4,064). Not a power of two: a slot's
/// chunk and place are a division by a constant, a multiply and a shift.
pub(crate) const CHUNK: usize = 5002;

/// The slots of one queue, addressed by a `u32` slot number (part of a message's `Id`).
#[derive(Debug, Default)]
pub(crate) struct Slab {
    chunks: Vec<Vec<Option<Message>>>,
    /// Slots whose message was taken, reused before a new slot is opened.
    free: Vec<u32>,
}

impl Slab {
    /// Stores `message` and returns its slot.
    pub fn insert(&mut self, message: Message) -> u32 {
        if let Some(slot) = self.free.pop() {
            let (chunk, place) = split(slot);
            self.chunks[chunk][place] = Some(message);
            return slot;
        }
        if self.chunks.last().is_none_or(|c| c.len() == CHUNK) {
            // The first chunk grows as a `Vec` does; a queue that filled it is a deep one.
            let capacity = if self.chunks.is_empty() { 0 } else { CHUNK };
            self.chunks.push(Vec::with_capacity(capacity));
        }
        let chunk = self.chunks.len() - 1;
        let last = &mut self.chunks[chunk];
        if last.len() == last.capacity() {
            // Doubling, but never past CHUNK (a `Vec` would go to 4,096).
            last.reserve_exact(last.len().max(4).min(CHUNK - last.len()));
        }
        last.push(Some(message));
        (chunk * CHUNK + last.len() - 1) as u32
    }

    /// The message in `slot` if it still is the message `seq` (a reused slot holds another).
    pub fn get(&self, slot: u32, seq: u64) -> Option<&Message> {
        let (chunk, place) = split(slot);
        self.chunks
            .get(chunk)?
            .get(place)?
            .as_ref()
            .filter(|m| m.seq == seq)
    }

    /// The message in `slot`, whichever it is (for indexes that are kept exact, so that the
    /// slot alone names the message).
    pub fn at(&self, slot: u32) -> Option<&Message> {
        let (chunk, place) = split(slot);
        self.chunks.get(chunk)?.get(place)?.as_ref()
    }

    /// [`Slab::get`], for changing the message.
    pub fn get_mut(&mut self, slot: u32, seq: u64) -> Option<&mut Message> {
        let (chunk, place) = split(slot);
        self.chunks
            .get_mut(chunk)?
            .get_mut(place)?
            .as_mut()
            .filter(|m| m.seq == seq)
    }

    /// Takes the message out of `slot`, freeing the slot; `None` if it held none.
    pub fn take(&mut self, slot: u32) -> Option<Message> {
        let (chunk, place) = split(slot);
        let message = self.chunks.get_mut(chunk)?.get_mut(place)?.take()?;
        self.free.push(slot);
        Some(message)
    }

    /// How many messages the slots hold.
    pub fn stored(&self) -> usize {
        self.chunks.iter().map(Vec::len).sum::<usize>() - self.free.len()
    }

    /// Every stored message, in slot order.
    pub fn iter(&self) -> impl Iterator<Item = &Message> {
        self.chunks.iter().flatten().flatten()
    }

    /// Drops every message and slot.
    pub fn clear(&mut self) {
        self.chunks = Vec::new();
        self.free = Vec::new();
    }
}

/// (chunk, place in it) of a slot.
fn split(slot: u32) -> (usize, usize) {
    let slot = slot as usize;
    (slot / CHUNK, slot % CHUNK)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::message::DedupId;

    fn message(seq: u64) -> Message {
        Message::new(seq, "b", DedupId::None, 0, 0)
    }

    #[test]
    fn slots_span_chunks_and_freed_ones_are_reused() {
        let mut slab = Slab::default();
        let n = 2 * CHUNK + 3;
        for seq in 0..n as u64 {
            assert_eq!(slab.insert(message(seq)), seq as u32);
        }
        assert_eq!(slab.stored(), n);
        let last = (n - 1) as u32;
        assert_eq!(
            slab.get(last, n as u64 - 1).map(|m| m.seq),
            Some(n as u64 - 1)
        );
        assert!(slab.get(last, 0).is_none(), "another message's seq");
        assert!(
            slab.get(n as u32, n as u64).is_none(),
            "beyond the last slot"
        );
        let middle = CHUNK as u32;
        assert_eq!(slab.take(middle).map(|m| m.seq), Some(u64::from(middle)));
        assert!(slab.take(middle).is_none(), "taken already");
        assert!(slab.get(middle, u64::from(middle)).is_none());
        assert_eq!(slab.stored(), n - 1);
        assert_eq!(slab.insert(message(99_999)), middle, "the freed slot first");
        assert_eq!(slab.get_mut(middle, 99_999).map(|m| m.seq), Some(99_999));
        let seqs: Vec<u64> = slab.iter().map(|m| m.seq).take(CHUNK + 2).collect();
        assert_eq!(seqs[CHUNK], 99_999, "slot order");
        assert_eq!(seqs[CHUNK + 1], CHUNK as u64 + 1);
        slab.clear();
        assert_eq!(slab.stored(), 0);
        assert!(slab.get(0, 0).is_none());
        assert_eq!(slab.insert(message(1)), 0);
    }

    #[test]
    fn a_chunk_of_messages_is_just_short_of_512_kib() {
        let bytes = CHUNK * std::mem::size_of::<Option<Message>>();
        assert!((508 * 1024..512 * 1024).contains(&bytes), "{bytes}");
    }

    #[test]
    fn later_chunks_are_allocated_whole_so_growing_copies_nothing() {
        let mut slab = Slab::default();
        for seq in 0..=CHUNK as u64 {
            slab.insert(message(seq));
        }
        assert_eq!(slab.chunks.len(), 2);
        assert_eq!(
            slab.chunks[0].capacity(),
            CHUNK,
            "the first grew up to CHUNK"
        );
        assert_eq!(slab.chunks[1].capacity(), CHUNK);
        let second = slab.chunks[1].as_ptr();
        for seq in 0..CHUNK as u64 - 1 {
            slab.insert(message(seq));
        }
        assert_eq!(slab.chunks[1].as_ptr(), second, "the chunk did not move");
        assert_eq!(slab.chunks.len(), 2);
    }
}
