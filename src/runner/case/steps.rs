//! The steps that make SQS calls, dispatched to one method each; the methods live by kind in
//! `messages.rs` (send), `acks.rs` (delete, visibility), `admin.rs` (queue administration),
//! `move_tasks.rs`, `permissions.rs`, and `observe.rs` (receive and the bounded observation).

use super::acks::HandleBatch;
use super::*;

impl CaseRun {
    /// Steps that make exactly one SQS call. `Err` is a harness-side problem (a reference that
    /// could not be resolved at run time).
    pub(super) async fn sqs_step(&mut self, step: &Step, action: &Action) -> Result<Check, String> {
        match action {
            Action::Receive(receive) => {
                observe::receive(&mut self.sqs, &self.queues, &mut self.ledger, step, receive).await
            }
            Action::Send(send) => {
                messages::send(&mut self.sqs, &self.queues, &mut self.ledger, step, send).await
            }
            Action::SendBatch { queue, entries } => {
                messages::send_batch(
                    &mut self.sqs,
                    &self.queues,
                    &mut self.ledger,
                    step,
                    queue,
                    entries,
                )
                .await
            }
            Action::Delete { queue, target } => {
                acks::delete(
                    &mut self.sqs,
                    &self.queues,
                    &mut self.ledger,
                    step,
                    queue,
                    target,
                )
                .await
            }
            Action::DeleteBatch { queue, entries } => {
                acks::handle_batch(
                    &mut self.sqs,
                    &self.queues,
                    &mut self.ledger,
                    step,
                    queue,
                    HandleBatch::Delete(entries),
                )
                .await
            }
            Action::ChangeVisibility {
                queue,
                target,
                timeout,
            } => {
                acks::change_visibility(
                    &mut self.sqs,
                    &self.queues,
                    &self.ledger,
                    step,
                    queue,
                    target,
                    timeout,
                )
                .await
            }
            Action::ChangeVisibilityBatch { queue, entries } => {
                acks::handle_batch(
                    &mut self.sqs,
                    &self.queues,
                    &mut self.ledger,
                    step,
                    queue,
                    HandleBatch::ChangeVisibility(entries),
                )
                .await
            }
            Action::GetAttributes { queue, names } => {
                self.get_attributes_step(step, queue, names).await
            }
            Action::SetAttributes { queue, attributes } => {
                self.set_attributes_step(step, queue, attributes).await
            }
            Action::Purge { queue } => self.purge_step(step, queue).await,
            Action::CreateQueue(def) => self.create_queue_step(step, def).await,
            Action::DeleteQueue { queue } => self.delete_queue_step(step, queue).await,
            Action::GetQueueUrl { queue } => self.get_queue_url_step(step, queue).await,
            Action::ListQueues { max_results } => self.list_queues_step(step, max_results).await,
            Action::TagQueue { queue, tags } => self.tag_queue_step(step, queue, tags).await,
            Action::UntagQueue { queue, keys } => self.untag_queue_step(step, queue, keys).await,
            Action::ListQueueTags { queue } => self.list_queue_tags_step(step, queue).await,
            Action::ListDeadLetterSourceQueues { queue } => {
                self.list_dead_letter_sources_step(step, queue).await
            }
            Action::StartMoveTask {
                source,
                destination,
                max_per_second,
                name: task,
            } => {
                self.start_move_task_step(step, source, destination, max_per_second, task)
                    .await
            }
            Action::ListMoveTasks { source } => self.list_move_tasks_step(step, source).await,
            Action::CancelMoveTask { task } => self.cancel_move_task_step(step, task).await,
            Action::Deny(d) => {
                deny::deny(&mut self.sqs, &self.queues, &self.case.queues, step, d).await
            }
            Action::AddPermission(p) => self.add_permission_step(step, p).await,
            Action::RemovePermission { queue, label } => {
                self.remove_permission_step(step, queue, label).await
            }
            Action::Sleep(_) | Action::Observe(_) => unreachable!("handled by the caller"),
        }
    }
}
