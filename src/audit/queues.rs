//! The queues the consumer used that the audit did not make (pure).
//!
//! A consumer configured with a queue name of its own (a default left in its settings, a
//! prefix the audit's names do not carry) polls an empty queue, or one it created itself, while
//! the plan's messages wait: every message then reads as never acknowledged, and the cause is a
//! line of configuration nobody sees. The consumer's own `call` rows say which queues it named;
//! every one the audit did not make is named in the reports, with what the consumer did there.

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

/// What the consumer did on one queue the audit did not make.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub(crate) struct ForeignQueue {
    /// The queue's name as the consumer's requests named it.
    pub queue: String,
    /// The consumer created it (a `CreateQueue` answered with success).
    pub created: bool,
    /// Its receives (answered or refused).
    pub receives: u32,
    /// All its requests naming this queue, and how many of them were refused (a queue that
    /// does not exist answers `QueueDoesNotExist`).
    pub calls: u32,
    pub refused: u32,
}

impl ForeignQueue {
    /// One line: `orders-dev (created by the consumer; 12 receives, 14 requests, 0 refused)`.
    pub(crate) fn line(&self) -> String {
        format!(
            "{} ({}{} receive{}, {} request{}, {} refused)",
            self.queue,
            if self.created {
                "created by the consumer; "
            } else {
                ""
            },
            self.receives,
            if self.receives == 1 { "" } else { "s" },
            self.calls,
            if self.calls == 1 { "" } else { "s" },
            self.refused
        )
    }
}

/// The consumer's use of queues, request by request, as its `call` rows record it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct QueueUses {
    /// Per queue the consumer named: what it did there.
    pub used: BTreeMap<String, ForeignQueue>,
}

impl QueueUses {
    /// Counts one request of the consumer's: `action` on `queue`, refused or not.
    pub(crate) fn called(&mut self, action: &str, queue: &str, refused: bool) {
        let q = self
            .used
            .entry(queue.to_string())
            .or_insert_with(|| ForeignQueue {
                queue: queue.to_string(),
                ..ForeignQueue::default()
            });
        q.calls += 1;
        q.refused += u32::from(refused);
        match action {
            "ReceiveMessage" => q.receives += 1,
            "CreateQueue" if !refused => q.created = true,
            _ => {}
        }
    }

    /// The queues used that are not among `made` (the audit's), by name.
    pub(crate) fn foreign(&self, made: &[String]) -> Vec<ForeignQueue> {
        let made: BTreeSet<&str> = made.iter().map(String::as_str).collect();
        self.used
            .values()
            .filter(|q| !made.contains(q.queue.as_str()))
            .cloned()
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_queues_the_audit_did_not_make_are_named_with_what_was_done_there() {
        let made = ["orders".to_string(), "orders-dlq".to_string()];
        let mut uses = QueueUses::default();
        uses.called("ReceiveMessage", "orders", false);
        uses.called("GetQueueUrl", "orders-dev", true);
        uses.called("CreateQueue", "orders-dev", false);
        uses.called("ReceiveMessage", "orders-dev", false);
        uses.called("ReceiveMessage", "orders-dev", false);
        let foreign = uses.foreign(&made);
        assert_eq!(foreign.len(), 1);
        assert_eq!(
            foreign[0].line(),
            "orders-dev (created by the consumer; 2 receives, 4 requests, 1 refused)"
        );
        uses.called("GetQueueUrl", "typo", true);
        assert_eq!(
            uses.foreign(&made)[1].line(),
            "typo (0 receives, 1 request, 1 refused)"
        );
    }
}
