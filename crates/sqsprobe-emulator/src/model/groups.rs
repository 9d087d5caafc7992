//! Message groups of one queue: names interned once, and on FIFO queues the order in which
//! groups deliver.
//!
//! A message holds its group as a `u32` index into this table, so every message of a group
//! shares one copy of the name. On a FIFO queue each group also keeps its visible and in-flight
//! messages as a log of their slots in seq order (a `VecDeque<u32>`, 4 bytes a message plus
//! its growth's slack, where a B-tree entry cost 28–37): the slab gives each slot's seq and
//! state. A group delivers from its front and its messages leave from near the front (a
//! receive leases the leading ones, retention takes the oldest), so removing one costs the
//! few entries before it; a message that joins behind a later one (a delayed message, once
//! the queue's delay was shortened) is placed by binary search. The log also serves
//! retention, since a FIFO queue's seqs follow its enqueue times and its oldest such message
//! is the first of some group (`oldest`). A group can deliver while its first message is
//! visible; the groups that can sit in `ready`, ordered by when that message became visible
//! (AWS-recorded group order, `docs/emulator.md`). Standard queues (MessageGroupId on "fair"
//! queues) only count their messages here.

use std::cmp::Reverse;
use std::collections::{BTreeSet, BinaryHeap, HashMap, VecDeque};
use std::sync::Arc;

use crate::model::message::{Id, MessageState};
use crate::model::slab::Slab;

#[derive(Debug)]
struct Group {
    name: Arc<str>,
    /// FIFO: the slots of the group's visible and in-flight messages, in seq order (delayed
    /// ones join when they become visible). Every entry names a stored message of the group:
    /// a message is unfiled before its slot is freed.
    messages: VecDeque<u32>,
    /// Messages of the group stored in any state; the group is dropped at zero.
    count: u32,
    /// The key this group holds in `ready`, while it can deliver.
    key: Option<u64>,
}

/// The seq of the message in `slot`; every slot a group names is stored.
fn seq_at(slots: &Slab, slot: u32) -> u64 {
    slots.at(slot).map_or(u64::MAX, |m| m.seq)
}

impl Group {
    fn first(&self, slots: &Slab) -> Option<Id> {
        let &slot = self.messages.front()?;
        Some(Id {
            slot,
            seq: seq_at(slots, slot),
        })
    }

    /// Where `id` sits in the log.
    fn position(&self, id: Id, slots: &Slab) -> Option<usize> {
        if self.messages.front() == Some(&id.slot) {
            return Some(0);
        }
        let at = self
            .messages
            .partition_point(|&slot| seq_at(slots, slot) < id.seq);
        (self.messages.get(at) == Some(&id.slot)).then_some(at)
    }

    /// The first position at or after `from` holding a visible message.
    fn visible_from(&self, from: usize, slots: &Slab) -> Option<(usize, Id)> {
        self.messages
            .range(from..)
            .enumerate()
            .find_map(|(i, &slot)| {
                let message = slots.at(slot).filter(|m| m.state.is_ready())?;
                Some((
                    from + i,
                    Id {
                        slot,
                        seq: message.seq,
                    },
                ))
            })
    }
}

/// The groups of one queue.
#[derive(Debug, Default)]
pub(crate) struct Groups {
    table: Vec<Option<Group>>,
    free: Vec<u32>,
    by_name: HashMap<Arc<str>, u32>,
    /// FIFO: groups that can deliver now, by the ready stamp of their head.
    ready: BTreeSet<(u64, u32)>,
    /// FIFO: groups by the seq of their first filed message (retention order).
    oldest: BTreeSet<(u64, u32)>,
}

impl Groups {
    /// The index of `name`, adding the group on first use.
    pub fn intern(&mut self, name: &str) -> u32 {
        if let Some(&index) = self.by_name.get(name) {
            return index;
        }
        let name: Arc<str> = Arc::from(name);
        let group = Group {
            name: Arc::clone(&name),
            messages: VecDeque::new(),
            count: 0,
            key: None,
        };
        let index = match self.free.pop() {
            Some(index) => {
                self.table[index as usize] = Some(group);
                index
            }
            None => {
                self.table.push(Some(group));
                (self.table.len() - 1) as u32
            }
        };
        self.by_name.insert(name, index);
        index
    }

    /// The name of group `index`.
    pub fn name(&self, index: u32) -> Option<&Arc<str>> {
        self.group(index).map(|g| &g.name)
    }

    fn group(&self, index: u32) -> Option<&Group> {
        self.table.get(index as usize).and_then(Option::as_ref)
    }

    fn group_mut(&mut self, index: u32) -> Option<&mut Group> {
        self.table.get_mut(index as usize).and_then(Option::as_mut)
    }

    /// Counts a new message of group `index`.
    pub fn join(&mut self, index: u32) {
        if let Some(group) = self.group_mut(index) {
            group.count += 1;
        }
    }

    /// Uncounts a message of group `index`, dropping the group with its last message (its
    /// messages must be unfiled first); returns the group's name.
    pub fn leave(&mut self, index: u32) -> Option<Arc<str>> {
        let group = self.group_mut(index)?;
        group.count = group.count.saturating_sub(1);
        let name = Arc::clone(&group.name);
        if group.count == 0 {
            let filed = !group.messages.is_empty();
            if let Some(key) = group.key {
                self.ready.remove(&(key, index));
            }
            if filed {
                // Cannot happen while `Queue::remove` unfiles first; the slot of the first
                // message may be gone, so its seq is not read.
                debug_assert!(false, "a group left with messages filed");
                self.oldest.retain(|&(_, i)| i != index);
            }
            self.by_name.remove(&name);
            self.table[index as usize] = None;
            self.free.push(index);
        }
        Some(name)
    }

    /// Files a FIFO message that has become visible for the first time (stored in `slots`).
    pub fn file(&mut self, index: u32, id: Id, slots: &Slab) {
        let Some(group) = self.group_mut(index) else {
            return;
        };
        let first = group.first(slots).map(|f| f.seq);
        match group.messages.back() {
            Some(&last) if seq_at(slots, last) > id.seq => {
                let at = group
                    .messages
                    .partition_point(|&slot| seq_at(slots, slot) < id.seq);
                group.messages.insert(at, id.slot);
            }
            _ => group.messages.push_back(id.slot),
        }
        if first.is_none_or(|first| id.seq < first) {
            if let Some(first) = first {
                self.oldest.remove(&(first, index));
            }
            self.oldest.insert((id.seq, index));
        }
    }

    /// Takes a FIFO message out of its group's messages (it is being removed, and is still
    /// in `slots`).
    pub fn unfile(&mut self, index: u32, id: Id, slots: &Slab) {
        let Some(group) = self.group_mut(index) else {
            return;
        };
        let Some(at) = group.position(id, slots) else {
            return;
        };
        let first = group.first(slots).map(|f| f.seq);
        group.messages.remove(at);
        // A group that drained keeps no more than twice what it holds (amortised: the log
        // halves at most once per three quarters of it removed).
        if group.messages.capacity() > 16 && group.messages.len() < group.messages.capacity() / 4 {
            group.messages.shrink_to(group.messages.len() * 2);
        }
        let after = group.first(slots).map(|f| f.seq);
        if first != after {
            if let Some(first) = first {
                self.oldest.remove(&(first, index));
            }
            if let Some(after) = after {
                self.oldest.insert((after, index));
            }
        }
    }

    /// Re-files FIFO group `index` in `ready` after one of its messages changed state: it can
    /// deliver while its first message is visible (a visible message is deliverable only
    /// while no earlier message of its group is in flight, AWS-recorded
    /// `test_fifo_message_group_visibility_after_*`).
    pub fn refile(&mut self, index: u32, slots: &Slab) {
        let Some(group) = self.group_mut(index) else {
            return;
        };
        let key = group
            .messages
            .front()
            .and_then(|&slot| match slots.at(slot)?.state {
                MessageState::Ready { stamp } => Some(stamp),
                _ => None,
            });
        let old = std::mem::replace(&mut group.key, key);
        if old != key {
            if let Some(old) = old {
                self.ready.remove(&(old, index));
            }
            if let Some(new) = key {
                self.ready.insert((new, index));
            }
        }
    }

    /// FIFO: up to `max` messages that may be delivered now, group by group (each group's
    /// visible messages before its first in-flight one), groups in `ready` order.
    /// Cost: O(max · log n).
    pub fn deliverable(&self, max: usize, slots: &Slab) -> Vec<Id> {
        let mut out = Vec::new();
        for &(_, index) in &self.ready {
            let Some(group) = self.group(index) else {
                continue;
            };
            for &slot in &group.messages {
                let Some(message) = slots.at(slot).filter(|m| m.state.is_ready()) else {
                    break;
                };
                if out.len() >= max {
                    return out;
                }
                out.push(Id {
                    slot,
                    seq: message.seq,
                });
            }
        }
        out
    }

    /// FIFO: up to `max` visible messages in send order, ignoring group blocking (move tasks).
    /// A merge of the groups' seq-ordered messages: O(groups + max · log groups), plus the
    /// in-flight messages it steps over.
    pub fn visible_in_send_order(&self, max: usize, slots: &Slab) -> Vec<Id> {
        let mut heads: BinaryHeap<Reverse<(u64, u32, u32, usize)>> = self
            .table
            .iter()
            .enumerate()
            .filter_map(|(index, group)| {
                let (at, id) = group.as_ref()?.visible_from(0, slots)?;
                Some(Reverse((id.seq, id.slot, index as u32, at)))
            })
            .collect();
        let mut out = Vec::new();
        while out.len() < max
            && let Some(Reverse((seq, slot, index, at))) = heads.pop()
        {
            out.push(Id { slot, seq });
            if let Some((at, next)) = self
                .group(index)
                .and_then(|g| g.visible_from(at + 1, slots))
            {
                heads.push(Reverse((next.seq, next.slot, index, at)));
            }
        }
        out
    }

    /// FIFO: the filed message with the lowest seq, the first retention may expire.
    pub fn oldest(&self, slots: &Slab) -> Option<Id> {
        let &(seq, index) = self.oldest.first()?;
        self.group(index)?
            .first(slots)
            .filter(|first| first.seq == seq)
    }

    /// Forgets every group.
    pub fn clear(&mut self) {
        *self = Self::default();
    }

    /// Whether no group is held.
    #[cfg(test)]
    pub fn is_empty(&self) -> bool {
        self.by_name.is_empty() && self.ready.is_empty() && self.oldest.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::message::{DedupId, Message};

    fn slots(states: &[MessageState]) -> Slab {
        let mut slab = Slab::default();
        for (i, &state) in states.iter().enumerate() {
            let mut m = Message::new(i as u64 + 1, "b", DedupId::None, 0, 0);
            m.state = state;
            assert_eq!(slab.insert(m), i as u32);
        }
        slab
    }

    fn id(slot: u32) -> Id {
        Id {
            slot,
            seq: u64::from(slot) + 1,
        }
    }

    #[test]
    fn names_are_interned_and_indexes_reused_after_the_last_message_leaves() {
        let mut groups = Groups::default();
        let a = groups.intern("a");
        assert_eq!(groups.intern("a"), a);
        let b = groups.intern("b");
        assert_ne!(a, b);
        groups.join(a);
        groups.join(a);
        assert_eq!(groups.leave(a).as_deref(), Some("a"));
        assert_eq!(groups.name(a).map(|n| &**n), Some("a"), "one message left");
        groups.leave(a);
        assert!(groups.name(a).is_none());
        assert_eq!(groups.intern("c"), a, "the slot is reused");
        assert_eq!(groups.name(a).map(|n| &**n), Some("c"));
    }

    #[test]
    fn a_group_delivers_its_leading_visible_messages_and_tracks_its_oldest() {
        let ready = |stamp| MessageState::Ready { stamp };
        let leased = MessageState::in_flight(9, 1, 0);
        // Group a: slots 0 (visible), 1 (leased), 2 (visible); group b: slot 3 (visible).
        let slots = slots(&[ready(0), leased, ready(2), ready(1)]);
        let mut groups = Groups::default();
        let (a, b) = (groups.intern("a"), groups.intern("b"));
        for (group, slot) in [(a, 0), (a, 1), (a, 2), (b, 3)] {
            groups.join(group);
            groups.file(group, id(slot), &slots);
            groups.refile(group, &slots);
        }
        assert_eq!(groups.deliverable(10, &slots), [id(0), id(3)]);
        assert_eq!(groups.deliverable(1, &slots), [id(0)]);
        assert_eq!(
            groups.visible_in_send_order(10, &slots),
            [id(0), id(2), id(3)]
        );
        assert_eq!(groups.oldest(&slots), Some(id(0)));
        groups.unfile(a, id(0), &slots);
        groups.leave(a);
        groups.refile(a, &slots);
        assert_eq!(
            groups.deliverable(10, &slots),
            [id(3)],
            "a's head is leased"
        );
        assert_eq!(groups.oldest(&slots), Some(id(1)));
        groups.clear();
        assert!(groups.is_empty());
    }

    #[test]
    fn a_message_filed_behind_later_ones_takes_its_seq_place() {
        let ready = |stamp| MessageState::Ready { stamp };
        let slots = slots(&[ready(0), ready(1), ready(2), ready(3)]);
        let mut groups = Groups::default();
        let a = groups.intern("a");
        // Slots 2 and 3 were visible first; 0 and 1 were delayed and join later.
        for slot in [2, 3, 1, 0] {
            groups.join(a);
            groups.file(a, id(slot), &slots);
        }
        groups.refile(a, &slots);
        assert_eq!(groups.deliverable(10, &slots), [id(0), id(1), id(2), id(3)]);
        assert_eq!(groups.oldest(&slots), Some(id(0)));
        groups.unfile(a, id(2), &slots);
        assert_eq!(groups.deliverable(10, &slots), [id(0), id(1), id(3)]);
    }

    /// What one op of the property test does: send to a group (filed now or held back as a
    /// delayed message), file a held-back one, lease, release or remove the n-th stored one.
    #[derive(Debug, Clone)]
    enum Op {
        Send { group: u8, delayed: bool },
        Join(usize),
        Lease(usize),
        Release(usize),
        Remove(usize),
    }

    fn op() -> impl proptest::strategy::Strategy<Value = Op> {
        use proptest::prelude::*;
        prop_oneof![
            3 => (0u8..5, proptest::bool::weighted(0.2))
                .prop_map(|(group, delayed)| Op::Send { group, delayed }),
            1 => any::<usize>().prop_map(Op::Join),
            2 => any::<usize>().prop_map(Op::Lease),
            1 => any::<usize>().prop_map(Op::Release),
            2 => any::<usize>().prop_map(Op::Remove),
        ]
    }

    /// The groups' log against a model that keeps each group's filed messages in a
    /// `BTreeMap` by seq and answers every query by brute force.
    #[test]
    fn the_group_logs_answer_as_a_seq_ordered_model_does() {
        use std::collections::BTreeMap;

        use proptest::prelude::*;

        proptest!(sqsprobe_testing::config(256), |(ops in proptest::collection::vec(op(), 1..160))| {
            let mut slab = Slab::default();
            let mut groups = Groups::default();
            // Model: group name → seq → slot of the filed messages; held-back (delayed) ids.
            let mut model: BTreeMap<u8, BTreeMap<u64, u32>> = BTreeMap::new();
            let mut held: Vec<(u8, Id)> = Vec::new();
            let (mut next_seq, mut next_stamp) = (1u64, 0u64);
            let filed = |model: &BTreeMap<u8, BTreeMap<u64, u32>>| -> Vec<(u8, Id)> {
                model
                    .iter()
                    .flat_map(|(&g, m)| m.iter().map(move |(&seq, &slot)| (g, Id { slot, seq })))
                    .collect()
            };
            for op in ops {
                match op {
                    Op::Send { group, delayed } => {
                        let seq = next_seq;
                        next_seq += 1;
                        let mut m = Message::new(seq, "b", DedupId::None, 0, 0);
                        m.state = if delayed {
                            MessageState::Delayed { until: 1 }
                        } else {
                            next_stamp += 1;
                            MessageState::Ready { stamp: next_stamp }
                        };
                        let id = Id { slot: slab.insert(m), seq };
                        let index = groups.intern(&format!("g{group}"));
                        groups.join(index);
                        if delayed {
                            held.push((group, id));
                        } else {
                            groups.file(index, id, &slab);
                            groups.refile(index, &slab);
                            model.entry(group).or_default().insert(seq, id.slot);
                        }
                    }
                    Op::Join(n) if !held.is_empty() => {
                        let (group, id) = held.remove(n % held.len());
                        next_stamp += 1;
                        slab.get_mut(id.slot, id.seq).unwrap().state =
                            MessageState::Ready { stamp: next_stamp };
                        let index = groups.intern(&format!("g{group}"));
                        groups.file(index, id, &slab);
                        groups.refile(index, &slab);
                        model.entry(group).or_default().insert(id.seq, id.slot);
                    }
                    Op::Lease(n) | Op::Release(n) | Op::Remove(n) => {
                        let all = filed(&model);
                        if all.is_empty() {
                            continue;
                        }
                        let (group, id) = all[n % all.len()];
                        let index = groups.intern(&format!("g{group}"));
                        let state = slab.get(id.slot, id.seq).unwrap().state;
                        match op {
                            Op::Lease(_) if state.is_ready() => {
                                slab.get_mut(id.slot, id.seq).unwrap().state =
                                    MessageState::in_flight(10, 1, 0);
                            }
                            Op::Release(_) if !state.is_ready() => {
                                next_stamp += 1;
                                slab.get_mut(id.slot, id.seq).unwrap().state =
                                    MessageState::Ready { stamp: next_stamp };
                            }
                            Op::Remove(_) => {
                                groups.unfile(index, id, &slab);
                                slab.take(id.slot);
                                groups.leave(index);
                                model.get_mut(&group).unwrap().remove(&id.seq);
                            }
                            _ => {}
                        }
                        groups.refile(index, &slab);
                    }
                    _ => {}
                }
                // Deliverable: groups whose first message is visible, by its stamp, each with
                // its leading visible messages.
                let stamp = |id: &Id| match slab.get(id.slot, id.seq).unwrap().state {
                    MessageState::Ready { stamp } => Some(stamp),
                    _ => None,
                };
                let mut heads: Vec<(u64, Vec<Id>)> = model
                    .values()
                    .filter_map(|m| {
                        let ids: Vec<Id> = m.iter().map(|(&seq, &slot)| Id { slot, seq }).collect();
                        let first = stamp(ids.first()?)?;
                        Some((first, ids.into_iter().take_while(|id| stamp(id).is_some()).collect()))
                    })
                    .collect();
                heads.sort();
                let expected: Vec<Id> = heads.into_iter().flat_map(|(_, ids)| ids).collect();
                for max in [1, 3, 10, usize::MAX] {
                    let want: Vec<Id> = expected.iter().copied().take(max).collect();
                    prop_assert_eq!(groups.deliverable(max, &slab), want);
                }
                let mut visible: Vec<Id> = filed(&model)
                    .into_iter()
                    .map(|(_, id)| id)
                    .filter(|id| stamp(id).is_some())
                    .collect();
                visible.sort_by_key(|id| id.seq);
                for max in [1, 4, usize::MAX] {
                    let want: Vec<Id> = visible.iter().copied().take(max).collect();
                    prop_assert_eq!(groups.visible_in_send_order(max, &slab), want);
                }
                let oldest = filed(&model).into_iter().map(|(_, id)| id).min_by_key(|id| id.seq);
                prop_assert_eq!(groups.oldest(&slab), oldest);
            }
        });
    }
}
