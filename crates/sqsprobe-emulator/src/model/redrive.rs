//! Redrive rules on the store: whether a RedrivePolicy may name its target, and the move of
//! messages into a dead-letter queue (the receive that triggers it lives in `ops::receive`).

use crate::model::attributes::{QueueSettings, RedrivePermission};
use crate::model::queue::{Queue, Taken};
use crate::model::store::State;
use crate::support::errors::{SqsError, SqsResult};

/// Checks a RedrivePolicy against the queues that exist, under the store's write lock (it reads
/// another queue than the one it is for): the target exists, has the same type
/// (API_CreateQueue: "The dead-letter queue of a FIFO queue must also be a FIFO queue") and its
/// RedriveAllowPolicy admits the source.
pub(crate) fn validate_redrive(
    state: &State,
    source_arn: &str,
    settings: &QueueSettings,
    raw: Option<&String>,
) -> SqsResult<()> {
    let Some(policy) = &settings.redrive_policy else {
        return Ok(());
    };
    let raw = raw.cloned().unwrap_or_default();
    let invalid = |reason: &str| SqsError::invalid_value(&raw, "RedrivePolicy", reason);
    // Called under the write lock, holding no queue: locking the target cannot wait.
    let Ok(target) = state.lock_queue(&policy.dead_letter_target_arn) else {
        return Err(invalid("Dead letter target does not exist."));
    };
    if target.is_fifo() != settings.fifo {
        return Err(invalid(
            "Dead-letter queue must be same type of queue as the source.",
        ));
    }
    match target
        .settings
        .redrive_allow_policy
        .as_ref()
        .map(|(_, p)| p)
    {
        Some(RedrivePermission::DenyAll) => Err(invalid(&format!(
            "Queue {source_arn} is not allowed to use {} as a dead-letter queue.",
            target.arn
        ))),
        Some(RedrivePermission::ByQueue(arns)) if !arns.iter().any(|a| a == source_arn) => {
            Err(invalid(&format!(
                "Queue {source_arn} is not allowed to use {} as a dead-letter queue.",
                target.arn
            )))
        }
        _ => Ok(()),
    }
}

/// Puts messages moved off `source_arn` into the dead-letter queue `target`, under the store's
/// write lock (the caller took them out of their queue in the same hold of it, so no other
/// operation sees them in neither queue or in both).
///
/// Standard DLQs keep the original enqueue time for retention; FIFO DLQs reset it
/// (sqs-dead-letter-queues, "retention period").
pub(crate) fn deliver_to_dlq(
    state: &State,
    target: &mut Queue,
    source_arn: &str,
    moved: Vec<Taken>,
    now: u64,
) {
    for mut taken in moved {
        let message = &mut taken.message;
        message.renumber(state.next_seq());
        message.extra_mut().dead_letter_source_arn = Some(source_arn.into());
        if target.is_fifo() {
            message.set_enqueued_ms(now);
        }
        target.enqueue_moved(taken, now);
    }
}
