//! A standard queue's visible messages in seq order (its delivery order), kept as slots.
//!
//! A `BTreeMap` of seq → slot cost ~25–30 bytes a visible message: a queue fills by appends,
//! which leave a B-tree's nodes about half full. Here a visible message costs its 4-byte slot,
//! in runs of at most [`RUN`] slots in seq order. The seq of a slot is read from the slab: a slot
//! is filed here only while it holds a visible message, and the queue unfiles it before the
//! message leaves, so the slot alone names the message (as in `model/groups.rs`).
//!
//! Most changes happen at the ends: sends append, receives lease from the front. A message that
//! becomes visible again (a lapsed lease, an ended delay) or is leased from the middle is placed
//! by binary search, over the runs' first seqs and then inside one run: O(log n) slab reads and
//! a shift of at most [`RUN`] slots. A run that fills splits in two; one that shrinks to a
//! quarter joins a neighbour that has room, so runs stay at least a quarter full between
//! the two ends.

use std::collections::VecDeque;

use crate::model::slab::Slab;

/// Slots a run holds at most: 4 KiB of slots, one allocation of a size mimalloc serves exactly.
const RUN: usize = 1024;

/// The visible messages of a standard queue, by seq.
#[derive(Debug)]
pub(crate) struct Ready {
    /// Never an empty run; each run and the runs in order hold ascending seqs.
    runs: VecDeque<VecDeque<u32>>,
    len: usize,
    /// [`RUN`], smaller in tests so that splits and joins happen within a few operations.
    run: usize,
}

impl Default for Ready {
    fn default() -> Self {
        Self::with_run(RUN)
    }
}

/// The seq of the message in `slot`. Every filed slot holds a message; if one did not, the
/// highest seq sorts it last rather than panicking in the middle of an operation.
fn seq_of(slots: &Slab, slot: u32) -> u64 {
    let seq = slots.at(slot).map(|m| m.seq);
    debug_assert!(seq.is_some(), "a slot filed as ready holds no message");
    seq.unwrap_or(u64::MAX)
}

impl Ready {
    fn with_run(run: usize) -> Self {
        Self {
            runs: VecDeque::new(),
            len: 0,
            run,
        }
    }

    /// Visible messages filed.
    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.len
    }

    /// Files the message `seq` held in `slot`.
    pub fn insert(&mut self, slot: u32, seq: u64, slots: &Slab) {
        self.len += 1;
        let run = self.run;
        let Some(last) = self.runs.back_mut() else {
            self.runs.push_back(Self::new_run(run, slot));
            return;
        };
        if last.back().is_some_and(|&s| seq_of(slots, s) < seq) {
            // A send: the usual case, and the only one a deep queue's fill makes.
            if last.len() < run {
                last.push_back(slot);
            } else {
                self.runs.push_back(Self::new_run(run, slot));
            }
            return;
        }
        // The last run whose first seq is below `seq` (or the first run).
        let index = self
            .runs
            .partition_point(|r| seq_of(slots, r[0]) < seq)
            .saturating_sub(1);
        let target = &mut self.runs[index];
        let at = target.partition_point(|&s| seq_of(slots, s) < seq);
        target.insert(at, slot);
        if target.len() > run {
            let tail = target.split_off(target.len() / 2);
            self.runs.insert(index + 1, tail);
        }
    }

    /// Unfiles the message `seq` held in `slot`; whether it was filed.
    pub fn remove(&mut self, slot: u32, seq: u64, slots: &Slab) -> bool {
        let Some(first) = self.runs.front_mut() else {
            return false;
        };
        if first.front() == Some(&slot) {
            // A receive of the oldest visible message: the usual case.
            first.pop_front();
            if first.is_empty() {
                self.runs.pop_front();
            }
            self.len -= 1;
            return true;
        }
        let index = self.runs.partition_point(|r| seq_of(slots, r[0]) <= seq);
        let Some(index) = index.checked_sub(1) else {
            return false;
        };
        let target = &mut self.runs[index];
        let at = target.partition_point(|&s| seq_of(slots, s) < seq);
        if target.get(at) != Some(&slot) {
            return false;
        }
        target.remove(at);
        self.len -= 1;
        if target.is_empty() {
            self.runs.remove(index);
        } else if target.len() < self.run / 4 {
            self.join_around(index);
        }
        true
    }

    /// Joins the run at `index` with a neighbour when both fit in one run.
    fn join_around(&mut self, index: usize) {
        let len = self.runs[index].len();
        let fits = |other: &VecDeque<u32>| len + other.len() <= self.run;
        let left = if index > 0 && fits(&self.runs[index - 1]) {
            index - 1
        } else if self.runs.get(index + 1).is_some_and(fits) {
            index
        } else {
            return;
        };
        if let Some(mut right) = self.runs.remove(left + 1) {
            self.runs[left].append(&mut right);
        }
    }

    /// The filed slots in seq order.
    pub fn iter(&self) -> impl Iterator<Item = u32> + '_ {
        self.runs.iter().flatten().copied()
    }

    /// Unfiles everything.
    pub fn clear(&mut self) {
        self.runs.clear();
        self.len = 0;
    }

    /// A run holding `slot`, allocated at its full size once: only the last run grows by
    /// appends, and a run grown by doubling would sit on a larger allocation than it fills.
    fn new_run(run: usize, slot: u32) -> VecDeque<u32> {
        let mut new = VecDeque::with_capacity(run);
        new.push_back(slot);
        new
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use proptest::prelude::*;

    use super::*;
    use crate::model::message::{DedupId, Message};

    /// What one op of the property test does: send a new message (the next seq), make one
    /// visible again with an older seq, or lease the n-th visible one.
    #[derive(Debug, Clone)]
    enum Op {
        Send,
        Return(usize),
        Lease(usize),
        LeaseFirst,
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            4 => Just(Op::Send),
            2 => any::<usize>().prop_map(Op::Return),
            2 => any::<usize>().prop_map(Op::Lease),
            2 => Just(Op::LeaseFirst),
        ]
    }

    /// Runs of 4 split and join within a few operations; the model is the `BTreeMap` the
    /// runs replaced.
    #[test]
    fn the_runs_answer_as_a_seq_ordered_map_does() {
        proptest!(sqsprobe_testing::config(256), |(ops in proptest::collection::vec(op(), 1..300))| {
            let mut slab = Slab::default();
            let mut ready = Ready::with_run(4);
            let mut model: BTreeMap<u64, u32> = BTreeMap::new();
            // Leased messages, which `Return` files again.
            let mut leased: Vec<(u64, u32)> = Vec::new();
            let mut next_seq = 1u64;
            for op in ops {
                match op {
                    Op::Send => {
                        let seq = next_seq;
                        next_seq += 1;
                        let slot = slab.insert(Message::new(seq, "b", DedupId::None, 0, 0));
                        ready.insert(slot, seq, &slab);
                        model.insert(seq, slot);
                    }
                    Op::Return(n) if !leased.is_empty() => {
                        let (seq, slot) = leased.swap_remove(n % leased.len());
                        ready.insert(slot, seq, &slab);
                        model.insert(seq, slot);
                    }
                    Op::Lease(n) if !model.is_empty() => {
                        let (&seq, &slot) = model.iter().nth(n % model.len()).unwrap();
                        prop_assert!(ready.remove(slot, seq, &slab));
                        model.remove(&seq);
                        leased.push((seq, slot));
                        // A message removed twice, or never filed, is not found.
                        prop_assert!(!ready.remove(slot, seq, &slab));
                    }
                    Op::LeaseFirst if !model.is_empty() => {
                        let (seq, slot) = model.pop_first().unwrap();
                        prop_assert!(ready.remove(slot, seq, &slab));
                        leased.push((seq, slot));
                    }
                    _ => {}
                }
                let want: Vec<u32> = model.values().copied().collect();
                prop_assert_eq!(ready.iter().collect::<Vec<_>>(), want);
                prop_assert_eq!(ready.len(), model.len());
                for run in &ready.runs {
                    prop_assert!(!run.is_empty() && run.len() <= 4);
                }
            }
        });
    }

    #[test]
    fn a_run_emptied_from_the_middle_joins_a_neighbour_with_room() {
        let mut slab = Slab::default();
        let mut ready = Ready::with_run(8);
        let slots: Vec<u32> = (1..=24)
            .map(|seq| {
                let slot = slab.insert(Message::new(seq, "b", DedupId::None, 0, 0));
                ready.insert(slot, seq, &slab);
                slot
            })
            .collect();
        assert_eq!(ready.runs.len(), 3);
        // The middle run keeps one message: both neighbours are full, so it stays alone.
        for seq in 9..=15 {
            assert!(ready.remove(slots[seq as usize - 1], seq, &slab));
        }
        assert_eq!(ready.runs.len(), 3);
        // The first run loses seqs 2–7 from its middle (leasing its front would take the
        // fast path, which joins nothing), down to a quarter, then below it.
        for seq in 2..=7 {
            assert!(ready.remove(slots[seq as usize - 1], seq, &slab));
        }
        assert_eq!(
            ready.runs.len(),
            3,
            "two of eight is a quarter: no join yet"
        );
        assert!(ready.remove(slots[7], 8, &slab));
        assert_eq!(
            ready.runs.len(),
            2,
            "below a quarter, it joins the run after it"
        );
        let left: Vec<u32> = [1, 16]
            .into_iter()
            .chain(17..=24)
            .map(|s| slots[s - 1])
            .collect();
        assert_eq!(ready.iter().collect::<Vec<_>>(), left);
    }

    #[test]
    fn a_message_made_visible_again_takes_its_seq_place() {
        let mut slab = Slab::default();
        let mut ready = Ready::with_run(2);
        let slots: Vec<u32> = (1..=5)
            .map(|seq| slab.insert(Message::new(seq, "b", DedupId::None, 0, 0)))
            .collect();
        for (seq, &slot) in (1..=5).zip(&slots) {
            if seq != 2 {
                ready.insert(slot, seq, &slab);
            }
        }
        ready.insert(slots[1], 2, &slab);
        assert_eq!(ready.iter().collect::<Vec<_>>(), slots);
        assert!(ready.remove(slots[3], 4, &slab));
        assert!(ready.remove(slots[0], 1, &slab));
        assert_eq!(
            ready.iter().collect::<Vec<_>>(),
            [slots[1], slots[2], slots[4]]
        );
        ready.clear();
        assert_eq!(ready.iter().count(), 0);
        assert!(!ready.remove(slots[2], 3, &slab));
    }
}
