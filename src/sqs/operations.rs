//! The SQS API's operations, once: their names (in the order of the API reference's
//! families) and the facts other tables used to repeat about them — which single operation's
//! IAM action authorizes a batch one, and which are billed at the FIFO rate on a FIFO queue.
//!
//! The emulator's router, the fault grammar (`action:`), the IAM table ([`super::iam`]) and the
//! pricing ([`super::pricing`]) read this table; tests tie each of them to it (the router
//! answers every name, the IAM policy in docs/aws.md names every action, the pricing bills
//! exactly the message operations).

/// One SQS API operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Operation {
    /// The API name (`DeleteMessageBatch`).
    pub name: &'static str,
    /// For a batch operation, the single operation whose IAM action authorizes it: batches
    /// have no action of their own (SQS developer guide, sqs-api-permissions-reference).
    pub batch_of: Option<&'static str>,
    /// Billed at the FIFO rate when its queue is a FIFO queue (send, receive, delete and
    /// change-visibility; SQS pricing page, checked 2026-06).
    pub fifo_billed: bool,
}

const fn op(name: &'static str) -> Operation {
    Operation {
        name,
        batch_of: None,
        fifo_billed: false,
    }
}

const fn message_op(name: &'static str) -> Operation {
    Operation {
        name,
        batch_of: None,
        fifo_billed: true,
    }
}

const fn batch(name: &'static str, single: &'static str) -> Operation {
    Operation {
        name,
        batch_of: Some(single),
        fifo_billed: true,
    }
}

/// Every SQS API operation, in the order of the API reference's families.
pub const OPERATIONS: &[Operation] = &[
    op("CreateQueue"),
    op("GetQueueUrl"),
    op("ListQueues"),
    op("DeleteQueue"),
    op("GetQueueAttributes"),
    op("SetQueueAttributes"),
    op("TagQueue"),
    op("UntagQueue"),
    op("ListQueueTags"),
    op("PurgeQueue"),
    message_op("SendMessage"),
    batch("SendMessageBatch", "SendMessage"),
    message_op("ReceiveMessage"),
    message_op("DeleteMessage"),
    batch("DeleteMessageBatch", "DeleteMessage"),
    message_op("ChangeMessageVisibility"),
    batch("ChangeMessageVisibilityBatch", "ChangeMessageVisibility"),
    op("ListDeadLetterSourceQueues"),
    op("StartMessageMoveTask"),
    op("ListMessageMoveTasks"),
    op("CancelMessageMoveTask"),
    op("AddPermission"),
    op("RemovePermission"),
];

const fn names<const N: usize>() -> [&'static str; N] {
    let mut out = [""; N];
    let mut i = 0;
    while i < N {
        out[i] = OPERATIONS[i].name;
        i += 1;
    }
    out
}

/// The names of [`OPERATIONS`], in the same order.
pub const NAMES: [&str; OPERATIONS.len()] = names();

/// The operation of `name`, if SQS has one.
pub fn by_name(name: &str) -> Option<&'static Operation> {
    OPERATIONS.iter().find(|o| o.name == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_the_table_in_order_and_each_once() {
        assert_eq!(NAMES.len(), OPERATIONS.len());
        for (name, op) in NAMES.iter().zip(OPERATIONS) {
            assert_eq!(*name, op.name);
        }
        let mut sorted = NAMES.to_vec();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(sorted.len(), NAMES.len(), "a name twice");
        // A batch is authorized by an operation of the table, itself no batch.
        for op in OPERATIONS {
            if let Some(single) = op.batch_of {
                assert!(
                    by_name(single).is_some_and(|s| s.batch_of.is_none()),
                    "{}",
                    op.name
                );
            }
        }
    }
}
