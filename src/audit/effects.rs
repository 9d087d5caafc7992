//! The effect channels through which an audit sees a consumer's work (pure), besides the
//! ledger file `SQSPROBE_LEDGER` (docs/audit.md#effect-channels):
//! - the ledger over HTTP: each line a consumer POSTs to the emulator's
//!   `/sqsprobe/ledger` (`SQSPROBE_LEDGER_URL`), heard before the POST is answered;
//! - forwards: a message the consumer sends to one of the plan's output queues is the commit
//!   of the business key it carries, at that moment (a consume-and-forward pipeline's work is
//!   the forward);
//! - hand-offs: a message the consumer sends to one of the plan's own source queues (a retry
//!   that publishes the work again, then deletes the original) carries the work on; it is no
//!   commit, but a delete after it, of an attempt received before it, is not an
//!   acknowledgement before the commit either: the new message is judged in its place.
//!
//! A key's commits are the most any one channel holds of it, so a consumer that both writes
//! its ledger and forwards commits each key once, not twice; a channel that holds a key twice
//! committed it twice.

use std::collections::BTreeMap;

use serde::Serialize;

/// Where a commit was seen.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Channel {
    /// A line of `SQSPROBE_LEDGER`.
    File,
    /// A line POSTed to the emulator's ledger.
    Http,
    /// A message sent to an output queue.
    Forward,
}

/// A commit seen on the HTTP ledger or as a forward.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Commit {
    pub channel: Channel,
    /// The business key: the ledger's line, or what the forward carries where the output
    /// queue's `key:` reads it (`None`: it cannot be read there).
    pub key: Option<String>,
    /// A forward's MessageId and output queue.
    pub message_id: Option<String>,
    pub queue: Option<String>,
    /// Where the output queue's key is read (`key:` as written), for a forward.
    pub key_at: Option<String>,
    pub at_ms: u64,
}

/// A message the consumer sent to a source queue of the plan: the work handed on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Handoff {
    pub message_id: String,
    pub key: Option<String>,
    pub queue: String,
    pub key_at: String,
    pub at_ms: u64,
    /// How many deliveries the audit had heard of when it was sent: it hands on the work of
    /// an attempt among them, never of one delivered after it (its own, for one).
    pub after_deliveries: usize,
}

/// What the channels besides the file held so far: per key, per channel.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Effects {
    pub http: BTreeMap<String, u32>,
    pub forwards: BTreeMap<String, u32>,
    /// Whether the plan names an output queue: its forwards are a channel from the start, so
    /// an output queue left empty shows work not done.
    pub outputs: bool,
}

impl Effects {
    /// Counts a commit of `key` on `channel` (the file is read, not counted here).
    pub(crate) fn commit(&mut self, channel: Channel, key: &str) {
        let tally = match channel {
            Channel::Http => &mut self.http,
            Channel::Forward => &mut self.forwards,
            Channel::File => return,
        };
        *tally.entry(key.to_string()).or_default() += 1;
    }

    /// Whether some channel can show the work: the file exists (`file`), a line was POSTed,
    /// or the plan names an output queue.
    pub(crate) fn any(&self, file: bool) -> bool {
        file || !self.http.is_empty() || self.outputs
    }

    /// `key`'s commits: the most any one channel holds; `None` when no channel can show them.
    pub(crate) fn count(&self, file: Option<&BTreeMap<String, u32>>, key: &str) -> Option<u32> {
        if !self.any(file.is_some()) {
            return None;
        }
        let of = |m: Option<&BTreeMap<String, u32>>| m.and_then(|m| m.get(key)).copied();
        Some(
            [of(file), of(Some(&self.http)), of(Some(&self.forwards))]
                .into_iter()
                .flatten()
                .max()
                .unwrap_or(0),
        )
    }

    /// Every key's commits over the channels (the file's as `file`); `None` when no channel
    /// can show the work.
    pub(crate) fn combined(
        &self,
        file: Option<&BTreeMap<String, u32>>,
    ) -> Option<BTreeMap<String, u32>> {
        if !self.any(file.is_some()) {
            return None;
        }
        let mut out: BTreeMap<String, u32> = BTreeMap::new();
        for m in [file, Some(&self.http), Some(&self.forwards)]
            .into_iter()
            .flatten()
        {
            for (k, n) in m {
                let at = out.entry(k.clone()).or_default();
                *at = (*at).max(*n);
            }
        }
        Some(out)
    }

    /// Each channel's distinct lines (keys), for pointing out those that match no message.
    pub(crate) fn lines<'a>(
        &'a self,
        file: Option<&'a BTreeMap<String, u32>>,
    ) -> Vec<(Channel, &'a str)> {
        let mut out = Vec::new();
        for (channel, m) in [
            (Channel::File, file),
            (Channel::Http, Some(&self.http)),
            (Channel::Forward, Some(&self.forwards)),
        ] {
            for k in m.into_iter().flat_map(|m| m.keys()) {
                out.push((channel, k.as_str()));
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(lines: &[(&str, u32)]) -> BTreeMap<String, u32> {
        lines.iter().map(|(k, n)| (k.to_string(), *n)).collect()
    }

    #[test]
    fn no_channel_shows_nothing_and_an_output_queue_is_a_channel_from_the_start() {
        let mut e = Effects::default();
        assert_eq!(e.count(None, "b-1"), None);
        assert_eq!(e.combined(None), None);
        e.outputs = true;
        assert_eq!(e.count(None, "b-1"), Some(0));
        assert_eq!(e.combined(None), Some(BTreeMap::new()));
    }

    #[test]
    fn a_key_counts_the_most_any_one_channel_holds() {
        let mut e = Effects::default();
        e.commit(Channel::Http, "b-1");
        e.commit(Channel::Forward, "b-1");
        e.commit(Channel::Forward, "b-2");
        e.commit(Channel::Forward, "b-2");
        let f = file(&[("b-1", 1)]);
        // Written to the file, posted and forwarded: one commit, not three.
        assert_eq!(e.count(Some(&f), "b-1"), Some(1));
        // Forwarded twice: twice.
        assert_eq!(e.count(Some(&f), "b-2"), Some(2));
        assert_eq!(e.count(None, "b-3"), Some(0));
        let all = e.combined(Some(&f)).unwrap();
        assert_eq!(all, file(&[("b-1", 1), ("b-2", 2)]));
        assert_eq!(
            e.lines(Some(&f)),
            [
                (Channel::File, "b-1"),
                (Channel::Http, "b-1"),
                (Channel::Forward, "b-1"),
                (Channel::Forward, "b-2")
            ]
        );
    }
}
