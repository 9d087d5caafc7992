//! Message move tasks: StartMessageMoveTask, ListMessageMoveTasks, CancelMessageMoveTask.
//!
//! A task redrives the messages visible in a dead-letter queue at start to an explicit
//! destination, or each back to the queue it was dead-lettered from. It runs on a tokio task,
//! moving at most `MaxNumberOfMessagesPerSecond` (1–500, default 500) per second
//! (API_StartMessageMoveTask). Moved messages start a fresh life: receive count reset.

use std::sync::Arc;
use std::time::Duration;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use serde_json::{Value, json};

use crate::model::store::{Emulator, State};
use crate::model::task::{MoveTask, TaskStatus};
use crate::support::errors::{SqsError, SqsResult};
use crate::support::input::Input;

/// Most messages per second a task moves (API_StartMessageMoveTask).
const MAX_RATE: u32 = sqsprobe_facts::sqs::limits::MAX_MESSAGES_PER_SECOND.max as u32;
/// Tasks kept per source queue: ListMessageMoveTasks "gets the most recent message movement
/// tasks (up to 10) under a specific source queue" (API_ListMessageMoveTasks), so an older
/// one is needed by nothing. Only one task per source is active at a time, and it is the
/// newest, so the ones forgotten have all ended.
const TASKS_KEPT: usize = 10;

fn is_dead_letter_queue(state: &mut State, arn: &str) -> bool {
    state.queues_mut().any(|q| {
        q.settings
            .redrive_policy
            .as_ref()
            .is_some_and(|p| p.dead_letter_target_arn == arn)
    })
}

pub(crate) fn start(emu: &Arc<Emulator>, input: Input<'_>) -> SqsResult<Value> {
    let source_arn = input.required_string("SourceArn")?.to_owned();
    let destination_arn = input.string("DestinationArn")?.map(str::to_owned);
    let max_rate = match input.integer("MaxNumberOfMessagesPerSecond")? {
        None => None,
        Some(r) if (1..=i64::from(MAX_RATE)).contains(&r) => Some(r as u32),
        Some(r) => {
            return Err(SqsError::invalid_value(
                r,
                "MaxNumberOfMessagesPerSecond",
                "Must be between 1 and 500.",
            ));
        }
    };
    // Reads every queue's RedrivePolicy and adds a task: under the write lock.
    let mut state = emu.write();
    let now = emu.now();
    let Some(source) = state.queue_key_by_arn(&source_arn) else {
        return Err(SqsError::resource_not_found(
            "The resource that you specified for the SourceArn parameter doesn't exist.",
        ));
    };
    if !is_dead_letter_queue(&mut state, &source_arn) {
        return Err(SqsError::invalid_parameter_value(
            "Source queue must be configured as a Dead Letter Queue.",
        ));
    }
    if let Some(d) = &destination_arn
        && state.queue_key_by_arn(d).is_none()
    {
        return Err(SqsError::resource_not_found(
            "The resource that you specified for the DestinationArn parameter doesn't exist.",
        ));
    }
    if state
        .move_tasks
        .iter()
        .any(|t| t.source_arn == source_arn && t.status.active())
    {
        return Err(SqsError::invalid_parameter_value(
            "There is already a task running. Only one active task is allowed for a source queue arn at a given time.",
        ));
    }
    let queue = state.queue_mut(&source, now)?;
    let to_move = queue.counts().0 as u64;
    let id = crate::support::ids::uuid_v4().to_string();
    let handle = BASE64.encode(json!({ "taskId": id, "sourceArn": source_arn }).to_string());
    let of_source = |t: &MoveTask| t.source_arn == source_arn;
    if state.move_tasks.iter().filter(|t| of_source(t)).count() >= TASKS_KEPT
        && let Some(oldest) = state.move_tasks.iter().position(of_source)
    {
        state.move_tasks.remove(oldest);
    }
    state.move_tasks.push(MoveTask {
        handle: handle.clone(),
        source_arn,
        destination_arn,
        max_rate,
        status: TaskStatus::Running,
        moved: 0,
        to_move,
        started_ms: now,
        failure_reason: None,
    });
    drop(state);
    let emu = Arc::clone(emu);
    let task_handle = handle.clone();
    tokio::spawn(async move { run(emu, task_handle).await });
    Ok(json!({ "TaskHandle": handle }))
}

/// Moves up to one second's worth of messages; returns false when the task has ended. Under the
/// write lock: each message leaves one queue and enters another with no operation in between.
fn step(emu: &Emulator, handle: &str) -> bool {
    let mut state = emu.write();
    let now = emu.now();
    let Some(index) = state.move_tasks.iter().position(|t| t.handle == handle) else {
        return false;
    };
    let task = state.move_tasks[index].clone();
    let finish = |state: &mut State, status: TaskStatus, reason: Option<String>| {
        let t = &mut state.move_tasks[index];
        t.status = status;
        t.failure_reason = reason;
        false
    };
    if task.status == TaskStatus::Cancelling {
        return finish(&mut state, TaskStatus::Cancelled, None);
    }
    let Some(source) = state.queue_key_by_arn(&task.source_arn) else {
        return finish(
            &mut state,
            TaskStatus::Failed,
            Some("AWS.SimpleQueueService.NonExistentQueue".into()),
        );
    };
    let remaining = task.to_move.saturating_sub(task.moved);
    let batch = remaining.min(u64::from(task.max_rate.unwrap_or(MAX_RATE))) as usize;
    let Ok(queue) = state.queue_mut(&source, now) else {
        return false;
    };
    let ids = queue.ready_ids(batch);
    let mut moved = 0;
    for id in ids {
        let Ok(queue) = state.queue_mut(&source, now) else {
            break;
        };
        let Some(mut taken) = queue.remove(id) else {
            continue;
        };
        let target_arn = task.destination_arn.clone().or_else(|| {
            taken
                .message
                .extra
                .as_ref()
                .and_then(|e| e.dead_letter_source_arn.as_deref())
                .map(str::to_owned)
        });
        let target = target_arn
            .as_deref()
            .and_then(|arn| state.queue_key_by_arn(arn));
        let Some(target) = target else {
            // Put it back and fail the task, as AWS does when a destination is gone.
            let Ok(queue) = state.queue_mut(&source, now) else {
                break;
            };
            queue.enqueue_moved(taken, now);
            state.move_tasks[index].moved += moved;
            return finish(
                &mut state,
                TaskStatus::Failed,
                Some("AWS.SimpleQueueService.NonExistentQueue".into()),
            );
        };
        let message = &mut taken.message;
        message.renumber(state.next_seq());
        message.receive_count = 0;
        message.clear_first_receive();
        if let Some(extra) = message.extra.as_mut() {
            extra.dead_letter_source_arn = None;
        }
        message.set_enqueued_ms(now);
        if let Ok(queue) = state.queue_mut(&target, now) {
            queue.enqueue_moved(taken, now);
            moved += 1;
        }
    }
    state.move_tasks[index].moved += moved;
    let t = &state.move_tasks[index];
    if t.moved >= t.to_move || moved == 0 {
        return finish(&mut state, TaskStatus::Completed, None);
    }
    true
}

async fn run(emu: Arc<Emulator>, handle: String) {
    while step(&emu, &handle) {
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
}

pub(crate) fn list(emu: &Emulator, input: Input<'_>) -> SqsResult<Value> {
    let source_arn = input.required_string("SourceArn")?;
    let max = match input.integer("MaxResults")? {
        None => 1,
        Some(n) if (1..=10).contains(&n) => n as usize,
        Some(n) => {
            return Err(SqsError::invalid_value(
                n,
                "MaxResults",
                "Must be between 1 and 10.",
            ));
        }
    };
    let state = emu.read();
    if state.queue_key_by_arn(source_arn).is_none() {
        return Err(SqsError::resource_not_found(
            "The resource that you specified for the SourceArn parameter doesn't exist.",
        ));
    }
    let results: Vec<Value> = state
        .move_tasks
        .iter()
        .rev()
        .filter(|t| t.source_arn == source_arn)
        .take(max)
        .map(MoveTask::to_json)
        .collect();
    Ok(json!({ "Results": results }))
}

/// The source ARN a task handle names: handles are base64 of `{"taskId", "sourceArn"}`, as
/// AWS's are. Anything else is `InvalidParameterValue` (moto
/// `test_cancel_message_move_task_with_invalid_task_handle`).
fn handle_source_arn(handle: &str) -> SqsResult<String> {
    let invalid =
        || SqsError::invalid_parameter_value("Value for parameter TaskHandle is invalid.");
    let bytes = BASE64
        .decode(handle.trim().as_bytes())
        .map_err(|_| invalid())?;
    let doc: Value = serde_json::from_slice(&bytes).map_err(|_| invalid())?;
    let field = |name: &str| {
        doc.get(name)
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
    };
    match (field("taskId"), field("sourceArn")) {
        (Some(_), Some(arn)) => Ok(arn.to_owned()),
        _ => Err(invalid()),
    }
}

pub(crate) fn cancel(emu: &Emulator, input: Input<'_>) -> SqsResult<Value> {
    let handle = input.required_string("TaskHandle")?;
    let source_arn = handle_source_arn(handle)?;
    let mut state = emu.write();
    // The source is checked before the task (moto `test_cancel_message_move_task_with_unknown_source_arn`).
    if state.queue_key_by_arn(&source_arn).is_none() {
        return Err(SqsError::resource_not_found(
            "The resource that you specified for the SourceArn parameter doesn't exist.",
        ));
    }
    let Some(task) = state.move_tasks.iter_mut().find(|t| t.handle == handle) else {
        return Err(SqsError::resource_not_found("Task does not exist."));
    };
    if task.status != TaskStatus::Running {
        return Err(SqsError::unsupported_operation(
            "Only active tasks can be cancelled.",
        ));
    }
    task.status = TaskStatus::Cancelling;
    Ok(json!({ "ApproximateNumberOfMessagesMoved": task.moved }))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use crate::test_support::{advance, call, create, emulator, receive, send};

    #[tokio::test(start_paused = true)]
    async fn redrives_back_to_the_source_and_completes() {
        let emu = emulator();
        let dlq = create(&emu, "dlq", json!({})).await;
        let policy = r#"{"deadLetterTargetArn":"arn:aws:sqs:us-east-1:000000000000:dlq","maxReceiveCount":1}"#;
        let src = create(&emu, "src", json!({"RedrivePolicy": policy})).await;
        for i in 0..3 {
            send(&emu, &src, &format!("m{i}")).await;
        }
        receive(&emu, &src, 10, json!({"VisibilityTimeout": 0})).await;
        assert!(receive(&emu, &src, 10, json!({})).await.is_empty());
        let _ = dlq;
        let dlq_arn = "arn:aws:sqs:us-east-1:000000000000:dlq";
        let started = call(
            &emu,
            "StartMessageMoveTask",
            json!({"SourceArn": dlq_arn, "MaxNumberOfMessagesPerSecond": 2}),
        )
        .await
        .unwrap();
        let err = call(&emu, "StartMessageMoveTask", json!({"SourceArn": dlq_arn}))
            .await
            .unwrap_err();
        assert_eq!(err.code(), "InvalidParameterValue");
        tokio::task::yield_now().await;
        advance(3).await;
        tokio::task::yield_now().await;
        let tasks = call(&emu, "ListMessageMoveTasks", json!({"SourceArn": dlq_arn}))
            .await
            .unwrap();
        assert_eq!(tasks["Results"][0]["Status"], "COMPLETED");
        assert_eq!(tasks["Results"][0]["ApproximateNumberOfMessagesMoved"], 3);
        let back = receive(
            &emu,
            &src,
            10,
            json!({"MessageSystemAttributeNames": ["ApproximateReceiveCount"]}),
        )
        .await;
        assert_eq!(back.len(), 3);
        assert_eq!(back[0]["Attributes"]["ApproximateReceiveCount"], "1");
        let err = call(
            &emu,
            "CancelMessageMoveTask",
            json!({"TaskHandle": started["TaskHandle"]}),
        )
        .await
        .unwrap_err();
        assert_eq!(err.code(), "AWS.SimpleQueueService.UnsupportedOperation");
    }

    #[tokio::test(start_paused = true)]
    async fn cancel_reads_the_handle_before_the_task() {
        let emu = emulator();
        for bad in ["foobared", "e30=", "bm90IGpzb24="] {
            let err = call(&emu, "CancelMessageMoveTask", json!({"TaskHandle": bad}))
                .await
                .unwrap_err();
            assert_eq!(err.code(), "InvalidParameterValue", "{bad}");
            assert_eq!(err.message, "Value for parameter TaskHandle is invalid.");
        }
        let handle = base64::Engine::encode(
            &base64::engine::general_purpose::STANDARD,
            r#"{"taskId":"t","sourceArn":"arn:aws:sqs:us-east-1:000000000000:gone"}"#,
        );
        let err = call(&emu, "CancelMessageMoveTask", json!({"TaskHandle": handle}))
            .await
            .unwrap_err();
        assert_eq!(err.code(), "ResourceNotFoundException");
        assert!(err.message.contains("SourceArn"), "{}", err.message);
    }

    #[tokio::test(start_paused = true)]
    async fn source_must_be_a_dead_letter_queue() {
        let emu = emulator();
        create(&emu, "plain", json!({})).await;
        let err = call(
            &emu,
            "StartMessageMoveTask",
            json!({"SourceArn": "arn:aws:sqs:us-east-1:000000000000:plain"}),
        )
        .await
        .unwrap_err();
        assert_eq!(err.code(), "InvalidParameterValue");
        let err = call(
            &emu,
            "StartMessageMoveTask",
            json!({"SourceArn": "arn:aws:sqs:us-east-1:000000000000:none"}),
        )
        .await
        .unwrap_err();
        assert_eq!(err.code(), "ResourceNotFoundException");
    }

    /// A source keeps its 10 most recent tasks (all ListMessageMoveTasks can show), and none
    /// once it is deleted.
    #[tokio::test(start_paused = true)]
    async fn a_source_keeps_its_ten_latest_tasks_and_none_once_deleted() {
        let emu = emulator();
        let dlq = create(&emu, "dlq", json!({})).await;
        let policy = r#"{"deadLetterTargetArn":"arn:aws:sqs:us-east-1:000000000000:dlq","maxReceiveCount":1}"#;
        create(&emu, "src", json!({"RedrivePolicy": policy})).await;
        let dlq_arn = "arn:aws:sqs:us-east-1:000000000000:dlq";
        for _ in 0..25 {
            call(&emu, "StartMessageMoveTask", json!({"SourceArn": dlq_arn}))
                .await
                .unwrap();
            // An empty source: the task completes at its first step.
            tokio::task::yield_now().await;
        }
        assert_eq!(emu.read().move_tasks.len(), 10);
        let listed = call(
            &emu,
            "ListMessageMoveTasks",
            json!({"SourceArn": dlq_arn, "MaxResults": 10}),
        )
        .await
        .unwrap();
        assert_eq!(listed["Results"].as_array().map(Vec::len), Some(10));
        call(&emu, "DeleteQueue", json!({"QueueUrl": dlq}))
            .await
            .unwrap();
        assert!(emu.read().move_tasks.is_empty());
    }
}
