//! Redrive rules on the store: whether a RedrivePolicy may name its target, and the move of
//! messages into a dead-letter queue (the receive that triggers it lives in `ops::receive`).

use crate::emulator::model::attributes::{QueueSettings, RedrivePermission};
use crate::emulator::model::queue::Taken;
use crate::emulator::model::store::State;
use crate::emulator::support::errors::{SqsError, SqsResult};

/// Checks a RedrivePolicy against the queues that exist: the target exists, has the same type
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
    let Some(target) = state.queues.get(&policy.dead_letter_target_arn) else {
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

/// Puts messages moved off `source_arn` into the dead-letter queue `target`.
///
/// Standard DLQs keep the original enqueue time for retention; FIFO DLQs reset it
/// (sqs-dead-letter-queues, "retention period").
pub(crate) fn deliver_to_dlq(
    state: &mut State,
    target: &str,
    source_arn: &str,
    moved: Vec<Taken>,
    now: u64,
) {
    for Taken { mut message, group } in moved {
        let seq = state.next_seq();
        let Some(queue) = state.queues.get_mut(target) else {
            return;
        };
        message.seq = seq;
        message.extra_mut().dead_letter_source_arn = Some(source_arn.into());
        if queue.is_fifo() {
            message.enqueued_ms = now;
        }
        queue.enqueue(message, group.as_deref(), 0, now);
    }
}
