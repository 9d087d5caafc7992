//! Steps for message move tasks (DLQ redrive): start, list, cancel.

use super::calls::Caller;
use super::lifecycle;
use super::queue_table::QueueTable;
use sqsprobe_core::classify::{Check, Observed};
use sqsprobe_core::suite::model::{Spanned, Step, TaskRef};
use std::collections::BTreeMap;

/// `start-move-task`: StartMessageMoveTask from the source's ARN; the task's handle is kept
/// in the queue table under the name the suite gave it.
pub(super) async fn start_move_task(
    sqs: &mut Caller,
    queues: &mut QueueTable,
    step: &Step,
    source: &Spanned<String>,
    destination: &Option<Spanned<String>>,
    max_per_second: &Option<i32>,
    task: &Option<String>,
) -> Result<Check, String> {
    let client = sqs.client();
    lifecycle::ensure_arn(sqs, queues, &source.value).await;
    let source_arn = queues.arn(&source.value)?;
    // An uncreated destination gets the ARN its name would have, so a case can
    // ask for ResourceNotFoundException.
    let dest_arn = match destination {
        Some(d) => Some(lifecycle::arn_or_derived(sqs, queues, &d.value).await),
        None => None,
    };
    let rate = *max_per_second;
    one_call!(sqs, queues, step, "StartMessageMoveTask", Some(&source.value), client
        .start_message_move_task()
        .source_arn(&source_arn)
        .set_destination_arn(dest_arn)
        .set_max_number_of_messages_per_second(rate), then: |rec| {
        if let (Some(out), Some(task)) = (&rec.output, task)
            && let Some(h) = out.task_handle()
        {
            queues.remember_task(task, h);
        }
    })
}

/// `list-move-tasks`: ListMessageMoveTasks of the source's ARN.
pub(super) async fn list_move_tasks(
    sqs: &mut Caller,
    queues: &mut QueueTable,
    step: &Step,
    source: &Spanned<String>,
) -> Result<Check, String> {
    let client = sqs.client();
    lifecycle::ensure_arn(sqs, queues, &source.value).await;
    let source_arn = queues.arn(&source.value)?;
    one_call!(sqs, queues, step, "ListMessageMoveTasks", Some(&source.value), client.list_message_move_tasks().source_arn(&source_arn), view: |rec| {
        // The newest task's fields are checkable as `attributes:` (Status, ...).
        let attrs = rec.output.as_ref().map(|o| {
            let mut m = BTreeMap::new();
            if let Some(t) = o.results().first() {
                if let Some(s) = t.status() {
                    m.insert("Status".to_string(), s.to_string());
                }
                m.insert(
                    "ApproximateNumberOfMessagesMoved".to_string(),
                    t.approximate_number_of_messages_moved().to_string(),
                );
                if let Some(n) = t.approximate_number_of_messages_to_move() {
                    m.insert(
                        "ApproximateNumberOfMessagesToMove".to_string(),
                        n.to_string(),
                    );
                }
            }
            m.insert("Count".to_string(), o.results().len().to_string());
            m
        });
        Observed {
            queue_attributes: attrs,
            ..Observed::default()
        }
    })
}

/// `cancel-move-task`: CancelMessageMoveTask of a task the case started, or of a handle the
/// suite wrote.
pub(super) async fn cancel_move_task(
    sqs: &mut Caller,
    queues: &QueueTable,
    step: &Step,
    task: &TaskRef,
) -> Result<Check, String> {
    let client = sqs.client();
    let handle = match task {
        TaskRef::Named(task) => queues.task(&task.value).ok_or_else(|| {
            format!(
                "move task `{}` was not started (its start step failed?)",
                task.value
            )
        })?,
        // Written in the suite, so not a secret; SQS never issued it.
        TaskRef::Literal(handle) => handle.clone(),
    };
    one_call!(
        sqs,
        queues,
        step,
        "CancelMessageMoveTask",
        None,
        client.cancel_message_move_task().task_handle(&handle)
    )
}
