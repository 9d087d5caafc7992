//! The `deny` step, a server-side fault on an owned queue: the queue's `Policy` gets an explicit
//! Deny of the step's actions, which the runner lifts once `for` has run out (at the next step,
//! sleep tick or observation poll) and always at teardown. The denies in force, and what the
//! calls saw of them, are in `denies.rs`; the `deny` record says when the calls first saw a
//! deny and how many got through.

use super::calls::Caller;
use super::denies::ActiveDeny;
use super::queue_table::QueueTable;
use aws_sdk_sqs::types::QueueAttributeName;
use chrono::Utc;
use sqsprobe_core::classify::{Check, Observed};
use sqsprobe_core::evidence::format::{Phase, Record};
use sqsprobe_core::suite::model::{Deny, QueueDef, Step};
use tokio::time::Instant;

/// The `deny` step: sets the queue's `Policy` to the denies in force on it and this one, and
/// counts this one in force once the target took it. A queue whose definition (`defs`) sets
/// its own `Policy` is refused: the deny would replace it, and lifting the deny would lose it.
pub(super) async fn set(
    sqs: &mut Caller,
    queues: &QueueTable,
    defs: &[QueueDef],
    step: &Step,
    deny: &Deny,
) -> Result<Check, String> {
    let label = &deny.queue.value;
    if let Some(def) = defs.iter().find(|d| &d.label == label)
        && def.attributes.contains_key("Policy")
    {
        return Err(format!(
            "queue `{label}` sets its own `Policy`: a `deny` would replace it, and lifting the deny would lose it"
        ));
    }
    let url = queues.url(label)?;
    let arn = queues.get(label).and_then(|q| q.arn.clone());
    let actions: Vec<String> = deny.actions.iter().map(|a| a.value.clone()).collect();
    let document = sqs
        .denies()
        .policy_with(label, step.index, &actions, arn.as_deref());
    let client = sqs.client();
    let meta = sqs.meta(
        queues,
        Phase::Step,
        Some(step),
        "SetQueueAttributes",
        None,
        Some(label),
    );
    let mut rec = call!(
        sqs,
        meta,
        client
            .set_queue_attributes()
            .queue_url(&url)
            .attributes(QueueAttributeName::Policy, document)
    )
    .await;
    if rec.error.is_none() {
        let set_at = Utc::now();
        let lasts = chrono::Duration::from_std(deny.duration).unwrap_or(chrono::TimeDelta::MAX);
        sqs.denies_mut().add(ActiveDeny {
            step: step.clone(),
            label: label.clone(),
            queue: queues.name(label),
            url,
            actions,
            set_at,
            due: Instant::now() + deny.duration,
            due_at: set_at + lasts,
            first_denied_at: None,
            last_allowed_at: None,
            denied: 0,
            allowed: 0,
            lifted: false,
        });
    }
    Ok(sqs.check(&step.expect, &mut rec, Observed::default()))
}

/// Lifts every deny whose `for` has run out, or, at teardown, every deny still in force;
/// emits each one's `deny` record.
pub(super) async fn lift(sqs: &mut Caller, queues: &QueueTable, teardown: bool) {
    while let Some(due) = sqs.denies().due(Instant::now(), teardown) {
        let d = &due.deny;
        let queue = queues.get(&d.label).map(|q| (q.alive, q.arn.clone()));
        let (lifted_at, lift_error) = match queue {
            Some((true, arn)) => {
                let client = sqs.client();
                let req = client
                    .set_queue_attributes()
                    .queue_url(&d.url)
                    .attributes(QueueAttributeName::Policy, due.document(arn.as_deref()));
                let mut rec = if teardown {
                    let meta = sqs.meta(
                        queues,
                        Phase::Teardown,
                        None,
                        "SetQueueAttributes",
                        None,
                        Some(&d.label),
                    );
                    call!(finish: sqs, meta, req).await
                } else {
                    let meta = sqs.meta(
                        queues,
                        Phase::Step,
                        Some(&d.step),
                        "SetQueueAttributes",
                        None,
                        Some(&d.label),
                    );
                    call!(sqs, meta, req).await
                };
                let error = rec.error.as_ref().map(|e| e.describe());
                sqs.emit_rows(&mut rec);
                match error {
                    None => (Some(Utc::now()), None),
                    Some(e) => (None, Some(sqs.masker().mask(&e))),
                }
            }
            _ => (
                None,
                Some("the queue was deleted before the deny was lifted".to_string()),
            ),
        };
        let Some(lifted) = sqs.denies_mut().mark_lifted(d.step.index, &d.label) else {
            return;
        };
        let record = lifted.end(
            &sqs.ctx().run_id,
            sqs.case(),
            sqs.trial(),
            lifted_at,
            lift_error,
            teardown,
        );
        sqs.emit(Record::Deny(record));
    }
}
