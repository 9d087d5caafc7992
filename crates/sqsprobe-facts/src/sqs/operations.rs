//! The SQS API's operations, once: their names (in the order of the API reference's
//! families) and the facts other tables used to repeat about them — which single operation's
//! IAM action authorizes a batch one, which are billed at the FIFO rate on a FIFO queue, which
//! answer nothing, which act on a receipt handle, which AddPermission may grant.
//!
//! The emulator's router, its query-protocol replies and AddPermission, the fault grammar
//! (`action:`), the IAM table ([`super::iam`]), the pricing ([`super::pricing`]) and the
//! matrix's contested cells read this table; tests tie each of them to it (the router answers
//! every name, the IAM policy in docs/aws.md names every action, the pricing bills exactly the
//! message operations, a reply without members renders no `<…Result>`).

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
    /// Its answer has members: `false` for the operations whose output shape is empty
    /// (DeleteQueue, DeleteMessage, …), whose query-protocol reply has no `<…Result>` element
    /// (API reference, each action's "Response Elements": "… does not return any data").
    pub has_output: bool,
    /// It acts on a receipt handle (delete or change visibility, single or batch): what a
    /// consumer does with a delivery, the answers the matrix shows for contested cases.
    pub acknowledges: bool,
    /// An `ActionName` AddPermission may grant (API_AddPermission: `*`, SendMessage,
    /// ReceiveMessage, DeleteMessage, ChangeMessageVisibility, GetQueueAttributes,
    /// GetQueueUrl; a batch is granted with its single operation).
    pub grantable: bool,
}

impl Operation {
    /// An operation with an answer, no batch, billed at the standard rate.
    const fn named(name: &'static str) -> Operation {
        Operation {
            name,
            batch_of: None,
            fifo_billed: false,
            has_output: true,
            acknowledges: false,
            grantable: false,
        }
    }

    /// A message operation: billed at the FIFO rate on a FIFO queue.
    const fn message(self) -> Operation {
        Operation {
            fifo_billed: true,
            ..self
        }
    }

    /// A batch of `single`: a message operation authorized by `single`'s action.
    const fn batch_of(self, single: &'static str) -> Operation {
        Operation {
            batch_of: Some(single),
            ..self.message()
        }
    }

    /// Its answer has no members.
    const fn no_output(self) -> Operation {
        Operation {
            has_output: false,
            ..self
        }
    }

    /// It acts on a receipt handle.
    const fn acknowledges(self) -> Operation {
        Operation {
            acknowledges: true,
            ..self
        }
    }

    /// AddPermission may grant it.
    const fn grantable(self) -> Operation {
        Operation {
            grantable: true,
            ..self
        }
    }
}

const fn op(name: &'static str) -> Operation {
    Operation::named(name)
}

/// Every SQS API operation, in the order of the API reference's families.
pub const OPERATIONS: &[Operation] = &[
    op("CreateQueue"),
    op("GetQueueUrl").grantable(),
    op("ListQueues"),
    op("DeleteQueue").no_output(),
    op("GetQueueAttributes").grantable(),
    op("SetQueueAttributes").no_output(),
    op("TagQueue").no_output(),
    op("UntagQueue").no_output(),
    op("ListQueueTags"),
    op("PurgeQueue").no_output(),
    op("SendMessage").message().grantable(),
    op("SendMessageBatch").batch_of("SendMessage"),
    op("ReceiveMessage").message().grantable(),
    op("DeleteMessage")
        .message()
        .no_output()
        .acknowledges()
        .grantable(),
    op("DeleteMessageBatch")
        .batch_of("DeleteMessage")
        .acknowledges(),
    op("ChangeMessageVisibility")
        .message()
        .no_output()
        .acknowledges()
        .grantable(),
    op("ChangeMessageVisibilityBatch")
        .batch_of("ChangeMessageVisibility")
        .acknowledges(),
    op("ListDeadLetterSourceQueues"),
    op("StartMessageMoveTask"),
    op("ListMessageMoveTasks"),
    op("CancelMessageMoveTask"),
    op("AddPermission").no_output(),
    op("RemovePermission").no_output(),
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

/// Whether `name` is an SQS operation that acts on a receipt handle (see
/// [`Operation::acknowledges`]).
pub fn acknowledges(name: &str) -> bool {
    by_name(name).is_some_and(|o| o.acknowledges)
}

/// The single operation `name` is a batch of, or `name` itself: what one entry of it does
/// (`DeleteMessageBatch` → `DeleteMessage`).
pub fn single(name: &str) -> &str {
    by_name(name).and_then(|o| o.batch_of).unwrap_or(name)
}

/// Whether `name` is an SQS batch operation.
pub fn is_batch(name: &str) -> bool {
    by_name(name).is_some_and(|o| o.batch_of.is_some())
}

/// Whether `name` is an SQS operation with an empty answer (see [`Operation::has_output`]).
pub fn has_no_output(name: &str) -> bool {
    by_name(name).is_some_and(|o| !o.has_output)
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
        assert_eq!(single("DeleteMessageBatch"), "DeleteMessage");
        assert_eq!(single("DeleteMessage"), "DeleteMessage");
        assert_eq!(single("Nope"), "Nope");
        assert!(is_batch("SendMessageBatch") && !is_batch("SendMessage") && !is_batch("Batch"));
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
