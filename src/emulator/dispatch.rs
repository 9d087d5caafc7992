//! Routes an operation name to its handler. Handlers take and return the JSON protocol's
//! shapes; the protocol modules translate at the edges.

use std::sync::Arc;

use serde_json::{Map, Value};

use super::errors::{SqsError, SqsResult};
use super::input::Input;
use super::store::Emulator;
use super::{dlq, lease_ops, move_task, queue_ops, receive, send};

/// What a handler needs to know about the request besides its parameters.
#[derive(Debug, Clone)]
pub(crate) struct RequestContext {
    /// Host (and port) the client addressed; queue URLs are built from it.
    pub host: String,
    /// Whether the request came over the query protocol.
    pub query: bool,
    /// `X-Amzn-Trace-Id` header, which becomes the AWSTraceHeader system attribute.
    pub trace_header: Option<String>,
}

/// Runs one operation.
pub(crate) async fn dispatch(
    emu: &Arc<Emulator>,
    operation: &str,
    params: &Map<String, Value>,
    ctx: &RequestContext,
) -> SqsResult<Value> {
    let input = Input::new(params);
    match operation {
        "CreateQueue" => queue_ops::create_queue(emu, input, ctx),
        "GetQueueUrl" => queue_ops::get_queue_url(emu, input, ctx),
        "ListQueues" => queue_ops::list_queues(emu, input, ctx),
        "DeleteQueue" => queue_ops::delete_queue(emu, input),
        "GetQueueAttributes" => queue_ops::get_queue_attributes(emu, input),
        "SetQueueAttributes" => queue_ops::set_queue_attributes(emu, input),
        "TagQueue" => queue_ops::tag_queue(emu, input),
        "UntagQueue" => queue_ops::untag_queue(emu, input),
        "ListQueueTags" => queue_ops::list_queue_tags(emu, input),
        "PurgeQueue" => queue_ops::purge_queue(emu, input),
        "SendMessage" => send::send_message(emu, input, ctx),
        "SendMessageBatch" => send::send_message_batch(emu, input, ctx),
        "ReceiveMessage" => receive::receive_message(emu, input, ctx).await,
        "DeleteMessage" => lease_ops::delete_message(emu, input),
        "DeleteMessageBatch" => lease_ops::delete_message_batch(emu, input),
        "ChangeMessageVisibility" => lease_ops::change_message_visibility(emu, input),
        "ChangeMessageVisibilityBatch" => lease_ops::change_message_visibility_batch(emu, input),
        "ListDeadLetterSourceQueues" => dlq::list_dead_letter_source_queues(emu, input, ctx),
        "StartMessageMoveTask" => move_task::start(emu, input),
        "ListMessageMoveTasks" => move_task::list(emu, input),
        "CancelMessageMoveTask" => move_task::cancel(emu, input),
        // Permissions need IAM, which the emulator does not model; say so clearly.
        "AddPermission" | "RemovePermission" => Err(SqsError::unsupported_operation(format!(
            "{operation} is not supported by the sqsprobe emulator: it does not model IAM permissions."
        ))),
        _ if ctx.query => Err(SqsError::invalid_action(operation)),
        _ => Err(SqsError::unknown_operation()),
    }
}
