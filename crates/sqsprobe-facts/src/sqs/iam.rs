//! SQS's IAM actions: which action authorizes each API operation.
//!
//! Each operation is authorized by `sqs:<Operation>`, except the batch operations, which have no
//! action of their own: "the permission for DeleteMessageBatch, SendMessageBatch and
//! ChangeMessageVisibilityBatch is the same as for the single action" — `sqs:DeleteMessage`,
//! `sqs:SendMessage`, `sqs:ChangeMessageVisibility` (SQS developer guide,
//! sqs-api-permissions-reference; the Service Authorization Reference lists no batch action).
//! Queue policies (`deny:` steps, the emulator's policy check) go through these functions, which
//! read [`super::operations`].

/// The IAM action that authorizes `operation` (`DeleteMessageBatch` → `sqs:DeleteMessage`).
pub fn action_for(operation: &str) -> String {
    format!("sqs:{}", batch_of(operation).unwrap_or(operation))
}

/// The single operation whose action authorizes a batch operation, if `operation` is one.
pub fn batch_of(operation: &str) -> Option<&'static str> {
    super::operations::by_name(operation).and_then(|o| o.batch_of)
}

/// Every SQS IAM action, `sqs:<Operation>` of each operation that is not a batch.
pub fn actions(operations: &[&str]) -> Vec<String> {
    operations
        .iter()
        .filter(|op| batch_of(op).is_none())
        .map(|op| format!("sqs:{op}"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn batches_are_authorized_by_their_single_action() {
        assert_eq!(action_for("DeleteMessageBatch"), "sqs:DeleteMessage");
        assert_eq!(action_for("SendMessageBatch"), "sqs:SendMessage");
        assert_eq!(action_for("ReceiveMessage"), "sqs:ReceiveMessage");
        assert_eq!(batch_of("DeleteMessageBatch"), Some("DeleteMessage"));
        assert_eq!(batch_of("DeleteMessage"), None);
        let all = actions(&["DeleteMessage", "DeleteMessageBatch", "PurgeQueue"]);
        assert_eq!(all, ["sqs:DeleteMessage", "sqs:PurgeQueue"]);
    }
}
