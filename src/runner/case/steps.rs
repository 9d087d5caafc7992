//! Running one step: its keyword dispatched to the function of its kind, which is handed the
//! parts of the case it works on and no others. Every step gets the [`Caller`] it calls SQS
//! through; the [`QueueTable`] (read, or written by the steps that create, delete or learn
//! about queues), the [`Ledger`] (the steps that send, receive or acknowledge), the case's
//! definition (create-queue, deny) and the observation window (observe) only where its
//! signature says so.
//!
//! The functions live by kind: `messages.rs` (send), `acks.rs` (delete, visibility),
//! `admin.rs` (queue administration), `move_tasks.rs`, `permissions.rs`, `deny.rs`, and
//! `observe.rs` (receive and the bounded observation); a sleep is here.

use super::acks::{self, HandleBatch};
use super::admin;
use super::calls::Caller;
use super::deny;
use super::ledger::Ledger;
use super::messages;
use super::move_tasks;
use super::observe;
use super::permissions;
use super::queue_table::QueueTable;
use sqsprobe_core::classify::{Check, WindowFacts};
use sqsprobe_core::suite::model::{Action, Case, Step};
use std::time::Duration;
use tokio::time::Instant;

/// Runs `step` of `case` and checks it. A harness-side problem (a reference that could not be
/// resolved at run time) is the step's `Check::Error`.
pub(super) async fn run(
    sqs: &mut Caller,
    case: &Case,
    queues: &mut QueueTable,
    ledger: &mut Ledger,
    window: &mut Option<WindowFacts>,
    step: &Step,
) -> Check {
    let outcome = match &step.action {
        Action::Sleep(d) => return sleep(sqs, queues, *d).await,
        Action::Observe(o) => observe::observe(sqs, queues, ledger, window, step, o).await,
        other => match sqs.arm_wire(queues, step) {
            Ok(()) => sqs_step(sqs, case, queues, ledger, step, other).await,
            Err(e) => Err(e),
        },
    };
    outcome.unwrap_or_else(Check::Error)
}

/// A `sleep`: waits it out, lifting on time any deny that falls due in the middle of it; cut
/// short (inconclusive) when the case is stopped.
async fn sleep(sqs: &mut Caller, queues: &QueueTable, d: Duration) -> Check {
    let ends = Instant::now() + d;
    loop {
        let wake = sqs.denies().next_due().map_or(ends, |due| due.min(ends));
        tokio::select! {
            _ = tokio::time::sleep_until(wake) => {}
            _ = sqs.stops().until_requested() => {
                let why = sqs.stops().why_cut();
                return Check::Inconclusive(format!("sleep cut short: {why}"));
            }
        }
        if Instant::now() >= ends {
            return Check::Pass;
        }
        deny::lift(sqs, queues, false).await;
    }
}

/// The steps that make SQS calls, each handed what it touches. `Err` is a harness-side
/// problem (a reference that could not be resolved at run time).
async fn sqs_step(
    sqs: &mut Caller,
    case: &Case,
    queues: &mut QueueTable,
    ledger: &mut Ledger,
    step: &Step,
    action: &Action,
) -> Result<Check, String> {
    match action {
        Action::Receive(receive) => observe::receive(sqs, queues, ledger, step, receive).await,
        Action::Send(send) => messages::send(sqs, queues, ledger, step, send).await,
        Action::SendBatch { queue, entries } => {
            messages::send_batch(sqs, queues, ledger, step, queue, entries).await
        }
        Action::Delete { queue, target } => {
            acks::delete(sqs, queues, ledger, step, queue, target).await
        }
        Action::DeleteBatch { queue, entries } => {
            let batch = HandleBatch::Delete(entries);
            acks::handle_batch(sqs, queues, ledger, step, queue, batch).await
        }
        Action::ChangeVisibility {
            queue,
            target,
            timeout,
        } => acks::change_visibility(sqs, queues, ledger, step, queue, target, timeout).await,
        Action::ChangeVisibilityBatch { queue, entries } => {
            let batch = HandleBatch::ChangeVisibility(entries);
            acks::handle_batch(sqs, queues, ledger, step, queue, batch).await
        }
        Action::GetAttributes { queue, names } => {
            admin::get_attributes(sqs, queues, step, queue, names).await
        }
        Action::SetAttributes { queue, attributes } => {
            admin::set_attributes(sqs, queues, step, queue, attributes).await
        }
        Action::Purge { queue } => admin::purge(sqs, queues, step, queue).await,
        Action::CreateQueue(def) => admin::create_queue(sqs, queues, case, step, def).await,
        Action::DeleteQueue { queue } => admin::delete_queue(sqs, queues, step, queue).await,
        Action::GetQueueUrl { queue } => admin::get_queue_url(sqs, queues, step, queue).await,
        Action::ListQueues { max_results } => {
            admin::list_queues(sqs, queues, step, max_results).await
        }
        Action::TagQueue { queue, tags } => admin::tag_queue(sqs, queues, step, queue, tags).await,
        Action::UntagQueue { queue, keys } => {
            admin::untag_queue(sqs, queues, step, queue, keys).await
        }
        Action::ListQueueTags { queue } => admin::list_queue_tags(sqs, queues, step, queue).await,
        Action::ListDeadLetterSourceQueues { queue } => {
            admin::list_dead_letter_sources(sqs, queues, step, queue).await
        }
        Action::StartMoveTask {
            source,
            destination,
            max_per_second,
            name: task,
        } => {
            move_tasks::start_move_task(
                sqs,
                queues,
                step,
                source,
                destination,
                max_per_second,
                task,
            )
            .await
        }
        Action::ListMoveTasks { source } => {
            move_tasks::list_move_tasks(sqs, queues, step, source).await
        }
        Action::CancelMoveTask { task } => {
            move_tasks::cancel_move_task(sqs, queues, step, task).await
        }
        Action::Deny(d) => deny::set(sqs, queues, &case.queues, step, d).await,
        Action::AddPermission(p) => permissions::add_permission(sqs, queues, step, p).await,
        Action::RemovePermission { queue, label } => {
            permissions::remove_permission(sqs, queues, step, queue, label).await
        }
        Action::Sleep(_) | Action::Observe(_) => unreachable!("handled by the caller"),
    }
}
