//! Message groups of one queue: names interned once, and on FIFO queues the order in which
//! groups deliver.
//!
//! A message holds its group as a `u32` index into this table, so every message of a group
//! shares one copy of the name. On a FIFO queue each group also keeps its visible and in-flight
//! messages by seq: one B-tree entry per message, which also serves retention, since a FIFO
//! queue's seqs follow its enqueue times and its oldest such message is the first of some
//! group (`oldest`). A group can deliver while its first message is visible; the groups that
//! can sit in `ready`, ordered by when that message became visible (AWS-recorded group order,
//! `docs/emulator.md`). Standard queues (MessageGroupId on "fair" queues) only count their
//! messages here.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BTreeSet, BinaryHeap, HashMap};
use std::sync::Arc;

use crate::emulator::model::message::{Id, MessageState};
use crate::emulator::model::slab::Slab;

#[derive(Debug)]
struct Group {
    name: Arc<str>,
    /// FIFO: the group's visible and in-flight messages, seq → slot (delayed ones join when
    /// they become visible).
    messages: BTreeMap<u64, u32>,
    /// Messages of the group stored in any state; the group is dropped at zero.
    count: u32,
    /// The key this group holds in `ready`, while it can deliver.
    key: Option<u64>,
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
            messages: BTreeMap::new(),
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
            let first = group.messages.first_key_value().map(|(&seq, _)| seq);
            if let Some(key) = group.key {
                self.ready.remove(&(key, index));
            }
            if let Some(first) = first {
                self.oldest.remove(&(first, index));
            }
            self.by_name.remove(&name);
            self.table[index as usize] = None;
            self.free.push(index);
        }
        Some(name)
    }

    /// Files a FIFO message that has become visible for the first time.
    pub fn file(&mut self, index: u32, id: Id) {
        let Some(group) = self.group_mut(index) else {
            return;
        };
        let first = group.messages.first_key_value().map(|(&seq, _)| seq);
        group.messages.insert(id.seq, id.slot);
        if first.is_none_or(|first| id.seq < first) {
            if let Some(first) = first {
                self.oldest.remove(&(first, index));
            }
            self.oldest.insert((id.seq, index));
        }
    }

    /// Takes a FIFO message out of its group's messages (it is being removed).
    pub fn unfile(&mut self, index: u32, id: Id) {
        let Some(group) = self.group_mut(index) else {
            return;
        };
        let first = group.messages.first_key_value().map(|(&seq, _)| seq);
        group.messages.remove(&id.seq);
        let after = group.messages.first_key_value().map(|(&seq, _)| seq);
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
        let key = group.messages.first_key_value().and_then(|(&seq, &slot)| {
            match slots.get(slot, seq)?.state {
                MessageState::Ready { stamp } => Some(stamp),
                _ => None,
            }
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
            for (&seq, &slot) in &group.messages {
                if !slots.get(slot, seq).is_some_and(|m| m.state.is_ready()) {
                    break;
                }
                if out.len() >= max {
                    return out;
                }
                out.push(Id { slot, seq });
            }
        }
        out
    }

    /// FIFO: up to `max` visible messages in send order, ignoring group blocking (move tasks).
    /// A merge of the groups' seq-ordered messages: O(groups + max · log groups), plus the
    /// in-flight messages it steps over.
    pub fn visible_in_send_order(&self, max: usize, slots: &Slab) -> Vec<Id> {
        let visible = |group: &Group, from: u64| {
            group
                .messages
                .range(from..)
                .find(|&(&seq, &slot)| slots.get(slot, seq).is_some_and(|m| m.state.is_ready()))
                .map(|(&seq, &slot)| Id { slot, seq })
        };
        let mut heads: BinaryHeap<Reverse<(u64, u32, u32)>> = self
            .table
            .iter()
            .enumerate()
            .filter_map(|(index, group)| {
                let id = visible(group.as_ref()?, 0)?;
                Some(Reverse((id.seq, id.slot, index as u32)))
            })
            .collect();
        let mut out = Vec::new();
        while out.len() < max
            && let Some(Reverse((seq, slot, index))) = heads.pop()
        {
            out.push(Id { slot, seq });
            if let Some(next) = self.group(index).and_then(|g| visible(g, seq + 1)) {
                heads.push(Reverse((next.seq, next.slot, index)));
            }
        }
        out
    }

    /// FIFO: the filed message with the lowest seq, the first retention may expire.
    pub fn oldest(&self) -> Option<Id> {
        let &(seq, index) = self.oldest.first()?;
        let &slot = self.group(index)?.messages.get(&seq)?;
        Some(Id { slot, seq })
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
    use crate::emulator::model::message::{DedupId, Message};

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
            groups.file(group, id(slot));
            groups.refile(group, &slots);
        }
        assert_eq!(groups.deliverable(10, &slots), [id(0), id(3)]);
        assert_eq!(groups.deliverable(1, &slots), [id(0)]);
        assert_eq!(
            groups.visible_in_send_order(10, &slots),
            [id(0), id(2), id(3)]
        );
        assert_eq!(groups.oldest(), Some(id(0)));
        groups.unfile(a, id(0));
        groups.leave(a);
        groups.refile(a, &slots);
        assert_eq!(
            groups.deliverable(10, &slots),
            [id(3)],
            "a's head is leased"
        );
        assert_eq!(groups.oldest(), Some(id(1)));
        groups.clear();
        assert!(groups.is_empty());
    }
}
