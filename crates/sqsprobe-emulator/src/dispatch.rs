//! Routes an operation name to its handler. Handlers take and return the JSON protocol's
//! shapes (ReceiveMessage its messages as plain data: `ops/answer.rs`); the protocol modules
//! translate at the edges.

use std::sync::Arc;

use crate::model::store::Emulator;
use crate::ops::answer::Answer;
use crate::ops::context::RequestContext;
use crate::ops::{access, dlq, lease, move_task, permission, queue, receive, send};
use crate::support::errors::{SqsError, SqsResult};
use crate::support::input::Input;

/// Every SQS operation the emulator answers: all of them ([`sqsprobe_facts::sqs::operations`]), routed
/// by name below; a test checks that each name reaches a handler.
pub const OPERATIONS: &[&str] = &sqsprobe_facts::sqs::operations::NAMES;

/// Runs one operation.
pub(crate) async fn dispatch(
    emu: &Arc<Emulator>,
    operation: &str,
    input: Input<'_>,
    ctx: &RequestContext,
) -> SqsResult<Answer> {
    // Chaos (opt-in, server-wide): a slow server, and one that throttles; never to an audit's
    // own set-up, whose failure would leave nothing to judge.
    let spared = emu
        .config
        .audit
        .as_ref()
        .is_some_and(|a| a.spares(ctx.access_key.as_deref()));
    if let Some(delay) = emu.chaos.latency().filter(|_| !spared) {
        tokio::select! {
            () = tokio::time::sleep(delay) => {}
            () = emu.stopped() => {}
        }
    }
    if !spared && OPERATIONS.contains(&operation) && emu.chaos.throttles() {
        // The queue the request names, by URL or (CreateQueue, GetQueueUrl) by name, draws the
        // throttle from its own dice, so its outcomes do not depend on how other queues'
        // requests interleave with its own; a queue that does not exist (yet) draws from the
        // dice of its name, untagged.
        let key = RequestContext::queue_key(ctx, emu, &input)
            .ok()
            .or_else(|| {
                let name = input.string("QueueName").ok().flatten()?;
                Some(ctx.key_of(emu, name))
            });
        let tags = key.as_deref().map(|k| {
            emu.read()
                .lock_queue(k)
                .map(|q| q.tags.clone())
                .unwrap_or_default()
        });
        let queue = key.as_deref().zip(tags.as_ref());
        if emu.chaos.throttle(queue) {
            return Err(SqsError::request_throttled());
        }
    }
    access::check(emu, operation, &input, ctx)?;
    let value = match operation {
        "CreateQueue" => queue::create_queue(emu, input, ctx),
        "GetQueueUrl" => queue::get_queue_url(emu, input, ctx),
        "ListQueues" => queue::list_queues(emu, input, ctx),
        "DeleteQueue" => queue::delete_queue(emu, input, ctx),
        "GetQueueAttributes" => queue::get_queue_attributes(emu, input, ctx),
        "SetQueueAttributes" => queue::set_queue_attributes(emu, input, ctx),
        "TagQueue" => queue::tag_queue(emu, input, ctx),
        "UntagQueue" => queue::untag_queue(emu, input, ctx),
        "ListQueueTags" => queue::list_queue_tags(emu, input, ctx),
        "PurgeQueue" => queue::purge_queue(emu, input, ctx),
        "SendMessage" => return send::send_message(emu, input, ctx).map(Answer::Sent),
        "SendMessageBatch" => {
            return send::send_message_batch(emu, input, ctx).map(Answer::Batch);
        }
        "ReceiveMessage" => {
            return receive::receive_message(emu, input, ctx)
                .await
                .map(Answer::Received);
        }
        "DeleteMessage" => lease::delete_message(emu, input, ctx),
        "DeleteMessageBatch" => {
            return lease::delete_message_batch(emu, input, ctx).map(Answer::Batch);
        }
        "ChangeMessageVisibility" => lease::change_message_visibility(emu, input, ctx),
        "ChangeMessageVisibilityBatch" => {
            return lease::change_message_visibility_batch(emu, input, ctx).map(Answer::Batch);
        }
        "ListDeadLetterSourceQueues" => dlq::list_dead_letter_source_queues(emu, input, ctx),
        "StartMessageMoveTask" => move_task::start(emu, input),
        "ListMessageMoveTasks" => move_task::list(emu, input),
        "CancelMessageMoveTask" => move_task::cancel(emu, input),
        "AddPermission" => permission::add_permission(emu, input, ctx),
        "RemovePermission" => permission::remove_permission(emu, input, ctx),
        _ if ctx.query => Err(SqsError::invalid_action(operation)),
        _ => Err(SqsError::unknown_operation()),
    };
    value.map(Answer::Value)
}

#[cfg(test)]
mod tests {
    use serde_json::Map;

    use super::*;
    use crate::test_support::emulator;

    #[tokio::test(start_paused = true)]
    async fn every_listed_operation_is_routed_and_nothing_else() {
        let emu = emulator();
        let ctx = RequestContext {
            host: "h".into(),
            query: true,
            trace_header: None,
            region: "us-east-1".into(),
            access_key: None,
        };
        for op in OPERATIONS.iter().copied().chain(["Nope"]) {
            let routed = match dispatch(&emu, op, Input::new(&Map::new()), &ctx).await {
                Ok(_) => true,
                Err(e) => e.code() != "InvalidAction",
            };
            assert_eq!(routed, op != "Nope", "{op}");
        }
    }
}
