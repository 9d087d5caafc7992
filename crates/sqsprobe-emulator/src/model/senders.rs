//! The SenderIds of one queue's messages, each stored once: a message holds an index.
//!
//! A SenderId is needed only while a message sent by it is stored, so each name counts the
//! messages that hold it and is forgotten with the last of them; its index is then reused. The
//! table therefore holds at most one name per stored message, however many credentials have
//! sent to the queue over its life (a client signing every request with a new key included).
//! Per queue, not per store, so that a send needs no lock but its queue's.

use std::collections::HashMap;
use std::sync::Arc;

/// One queue's SenderIds.
#[derive(Debug, Default)]
pub(crate) struct Senders {
    /// Index → (name, messages holding it); `None`: free, listed in `free`.
    names: Vec<Option<(Arc<str>, u32)>>,
    index: HashMap<Arc<str>, u32>,
    free: Vec<u32>,
    /// The index [`Senders::join`] last gave: a queue's messages mostly come from one sender
    /// (every entry of a batch does), so that name is compared before the map is hashed.
    /// Possibly freed or reused by another name since: the comparison tells.
    last: u32,
}

impl Senders {
    /// The index of `sender` for one more message, adding the name on first use.
    pub fn join(&mut self, sender: &str) -> u32 {
        if let Some(Some((name, held))) = self.names.get_mut(self.last as usize)
            && **name == *sender
        {
            *held += 1;
            return self.last;
        }
        let i = self.join_by_name(sender);
        self.last = i;
        i
    }

    /// [`Senders::join`] through the map.
    fn join_by_name(&mut self, sender: &str) -> u32 {
        if let Some(&i) = self.index.get(sender) {
            if let Some((_, held)) = self.names.get_mut(i as usize).and_then(Option::as_mut) {
                *held += 1;
            }
            return i;
        }
        let name: Arc<str> = Arc::from(sender);
        let i = match self.free.pop() {
            Some(i) => {
                self.names[i as usize] = Some((Arc::clone(&name), 1));
                i
            }
            None => {
                self.names.push(Some((Arc::clone(&name), 1)));
                (self.names.len() - 1) as u32
            }
        };
        self.index.insert(name, i);
        i
    }

    /// The name at `index` for a message that leaves: forgotten once no message holds it.
    pub fn leave(&mut self, index: u32) -> Option<Arc<str>> {
        let slot = self.names.get_mut(index as usize)?;
        let (name, held) = slot.as_mut()?;
        let name = Arc::clone(name);
        *held -= 1;
        if *held == 0 {
            *slot = None;
            self.index.remove(&name);
            self.free.push(index);
        }
        Some(name)
    }

    /// The name at `index`, if a message holds it.
    pub fn name(&self, index: u32) -> Option<&str> {
        self.names
            .get(index as usize)
            .and_then(Option::as_ref)
            .map(|(name, _)| &**name)
    }

    /// Forgets every name (the queue was purged).
    pub fn clear(&mut self) {
        *self = Self::default();
    }

    /// How many names are held.
    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.index.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_lives_as_long_as_a_message_holds_it_and_its_index_is_reused() {
        let mut senders = Senders::default();
        let a = senders.join("AKIDA");
        assert_eq!(senders.join("AKIDA"), a);
        let b = senders.join("AKIDB");
        assert_eq!(senders.name(b), Some("AKIDB"));
        assert_eq!(senders.leave(a).as_deref(), Some("AKIDA"));
        assert_eq!(senders.name(a), Some("AKIDA"), "one message still holds it");
        assert_eq!(senders.leave(a).as_deref(), Some("AKIDA"));
        assert_eq!(senders.name(a), None);
        assert_eq!(senders.join("AKIDC"), a, "a free index is reused");
        assert_eq!(senders.len(), 2);
    }

    #[test]
    fn the_last_name_joined_is_only_taken_while_it_is_still_there() {
        let mut senders = Senders::default();
        let a = senders.join("AKIDA");
        assert_eq!(senders.join("AKIDA"), a, "the last one again");
        senders.leave(a);
        senders.leave(a);
        // The last index is free, then another name's.
        let b = senders.join("AKIDB");
        assert_eq!(b, a, "reused");
        let again = senders.join("AKIDA");
        assert_ne!(again, b);
        assert_eq!(senders.name(again), Some("AKIDA"));
        assert_eq!(senders.name(b), Some("AKIDB"));
        // Held counts stay right whichever way a join went.
        assert_eq!(senders.join("AKIDA"), again);
        senders.leave(again);
        assert_eq!(senders.name(again), Some("AKIDA"), "one still holds it");
        senders.leave(again);
        assert_eq!(senders.name(again), None);
    }

    #[test]
    fn many_one_time_senders_leave_nothing_behind() {
        let mut senders = Senders::default();
        for i in 0..10_000 {
            let index = senders.join(&format!("AKID{i}"));
            senders.leave(index);
        }
        assert_eq!(senders.len(), 0);
        assert!(senders.names.len() <= 1);
    }
}
