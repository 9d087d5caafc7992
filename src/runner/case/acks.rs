//! Steps that act on a receipt handle: `delete`, `delete-batch` (the acknowledgements whose
//! facts the decision reads), `change-visibility`, `change-visibility-batch`; and how handle
//! references resolve, through the ledger, to the receive that issued them.

use super::calls::Caller;
use super::ledger::{Ledger, Receipt};
use super::queue_table::QueueTable;
use crate::runner::call::Recorded;
use aws_sdk_sqs::operation::change_message_visibility_batch::ChangeMessageVisibilityBatchOutput;
use aws_sdk_sqs::operation::delete_message_batch::DeleteMessageBatchOutput;
use aws_sdk_sqs::types::{
    BatchResultErrorEntry, ChangeMessageVisibilityBatchRequestEntry, DeleteMessageBatchRequestEntry,
};
use sqsprobe_core::classify::{BatchOutcome, Check, Observed};
use sqsprobe_core::evidence::format::{EntryEvidence, Phase};
use sqsprobe_core::evidence::{Masker, sha256_hex};
use sqsprobe_core::suite::model::{BatchHandle, BatchVisibility, HandleRef, Spanned, Step};
use std::collections::HashMap;
use std::time::Duration;

/// A resolved handle reference: the handle, and (attempt name, receipt) when it came from a
/// receive of the suite rather than a literal.
type ResolvedHandle = (String, Option<(String, Receipt)>);

/// A single-handle step's handle resolved: the handle, where it came from, the queue's URL and
/// its label.
struct Single {
    handle: String,
    origin: Option<(String, Receipt)>,
    url: String,
    label: String,
}

/// The `delete` step: one DeleteMessage, an acknowledgement (its row carries the handle's
/// digest: `classify::ack_history` reads which attempt it names and in which class).
pub(super) async fn delete(
    sqs: &mut Caller,
    queues: &QueueTable,
    ledger: &mut Ledger,
    step: &Step,
    queue: &Option<Spanned<String>>,
    target: &HandleRef,
) -> Result<Check, String> {
    let client = sqs.client();
    let one = resolve_single(sqs.masker_mut(), ledger, queues, queue, target, "delete")?;
    let attempt = one.origin.as_ref().map(|i| i.0.clone());
    let meta = sqs.meta(
        queues,
        Phase::Step,
        Some(step),
        "DeleteMessage",
        attempt,
        Some(&one.label),
    );
    let mut rec = call!(
        sqs,
        meta,
        client
            .delete_message()
            .queue_url(&one.url)
            .receipt_handle(&one.handle)
    )
    .await;
    note_handle_row(ledger, &mut rec, &one.handle, one.origin.as_ref());
    sqs.count_faulted_acks(rec.error.as_ref(), 1);
    Ok(sqs.check(&step.expect, &mut rec, Observed::default()))
}

/// The `change-visibility` step: one ChangeMessageVisibility, its new lease on the rows.
pub(super) async fn change_visibility(
    sqs: &mut Caller,
    queues: &QueueTable,
    ledger: &Ledger,
    step: &Step,
    queue: &Option<Spanned<String>>,
    target: &HandleRef,
    timeout: &Duration,
) -> Result<Check, String> {
    let client = sqs.client();
    let one = resolve_single(
        sqs.masker_mut(),
        ledger,
        queues,
        queue,
        target,
        "change-visibility",
    )?;
    let attempt = one.origin.as_ref().map(|i| i.0.clone());
    let meta = sqs.meta(
        queues,
        Phase::Step,
        Some(step),
        "ChangeMessageVisibility",
        attempt,
        Some(&one.label),
    );
    let secs = sqsprobe_facts::sqs::limits::wire_seconds(*timeout);
    let mut rec = call!(
        sqs,
        meta,
        client
            .change_message_visibility()
            .queue_url(&one.url)
            .receipt_handle(&one.handle)
            .visibility_timeout(secs)
    )
    .await;
    note_handle_row(ledger, &mut rec, &one.handle, one.origin.as_ref());
    for row in &mut rec.rows {
        row.lease_ms = Some(timeout.as_millis() as u64);
    }
    Ok(sqs.check(&step.expect, &mut rec, Observed::default()))
}

/// `delete-batch` and `change-visibility-batch`: one shape for both. Every entry's handle
/// is resolved (and the queue, given or the attempts'), the batch call made, each entry's
/// result recorded (a delete's as an acknowledgement), and the step checked.
pub(super) async fn handle_batch(
    sqs: &mut Caller,
    queues: &QueueTable,
    ledger: &mut Ledger,
    step: &Step,
    queue: &Option<Spanned<String>>,
    batch: HandleBatch<'_>,
) -> Result<Check, String> {
    let client = sqs.client();
    let entries = batch.entries();
    let targets: Vec<&HandleRef> = entries.iter().map(|e| e.target).collect();
    let (resolved, url, label) = resolve_batch(
        sqs.masker_mut(),
        ledger,
        queues,
        queue,
        &targets,
        batch.keyword(),
    )?;
    let built = |err: aws_sdk_sqs::error::BuildError, id: &str| {
        format!("could not build batch entry {id}: {err}")
    };
    let meta = sqs.meta(
        queues,
        Phase::Step,
        Some(step),
        batch.action(),
        None,
        Some(&label),
    );
    // Evidence and ack accounting go by entry id (the last entry wins on duplicates).
    let by_id: HashMap<String, ResolvedHandle> = entries
        .iter()
        .map(|e| e.id.to_string())
        .zip(resolved.iter().cloned())
        .collect();
    let check = match batch {
        HandleBatch::Delete(_) => {
            let request_entries = entries
                .iter()
                .zip(&resolved)
                .map(|(e, (handle, _))| {
                    DeleteMessageBatchRequestEntry::builder()
                        .id(e.id)
                        .receipt_handle(handle)
                        .build()
                        .map_err(|err| built(err, e.id))
                })
                .collect::<Result<Vec<_>, _>>()?;
            let mut rec = call!(
                sqs,
                meta,
                client
                    .delete_message_batch()
                    .queue_url(&url)
                    .set_entries(Some(request_entries))
            )
            .await;
            let outcome = handle_batch_result(
                sqs.masker(),
                &mut rec,
                &by_id,
                |o: &DeleteMessageBatchOutput| {
                    (
                        o.successful().iter().map(|s| s.id().to_string()).collect(),
                        o.failed().to_vec(),
                    )
                },
            );
            if outcome.is_none() {
                // The whole call failed: every entry's acknowledgement has its answer.
                sqs.count_faulted_acks(rec.error.as_ref(), entries.len());
            }
            check_batch(sqs, step, &mut rec, outcome, &entries)
        }
        HandleBatch::ChangeVisibility(_) => {
            let request_entries = entries
                .iter()
                .zip(&resolved)
                .map(|(e, (handle, _))| {
                    ChangeMessageVisibilityBatchRequestEntry::builder()
                        .id(e.id)
                        .receipt_handle(handle)
                        .set_visibility_timeout(
                            e.timeout.map(sqsprobe_facts::sqs::limits::wire_seconds),
                        )
                        .build()
                        .map_err(|err| built(err, e.id))
                })
                .collect::<Result<Vec<_>, _>>()?;
            let mut rec = call!(
                sqs,
                meta,
                client
                    .change_message_visibility_batch()
                    .queue_url(&url)
                    .set_entries(Some(request_entries))
            )
            .await;
            let outcome = handle_batch_result(
                sqs.masker(),
                &mut rec,
                &by_id,
                |o: &ChangeMessageVisibilityBatchOutput| {
                    (
                        o.successful().iter().map(|s| s.id().to_string()).collect(),
                        o.failed().to_vec(),
                    )
                },
            );
            check_batch(sqs, step, &mut rec, outcome, &entries)
        }
    };
    Ok(check)
}

/// Notes each entry's new lease (a visibility change's, for the report's lease bars) and
/// checks a handle batch step.
fn check_batch<O>(
    sqs: &mut Caller,
    step: &Step,
    rec: &mut Recorded<O>,
    batch: Option<BatchOutcome>,
    entries: &[HandleEntry<'_>],
) -> Check {
    let leases: HashMap<&str, u64> = entries
        .iter()
        .filter_map(|e| Some((e.id, e.timeout?.as_millis() as u64)))
        .collect();
    if !leases.is_empty()
        && let Some(row) = rec.rows.last_mut()
    {
        for entry in &mut row.entries {
            entry.lease_ms = leases.get(entry.id.as_str()).copied();
        }
    }
    sqs.check(
        &step.expect,
        rec,
        Observed {
            batch,
            ..Observed::default()
        },
    )
}

/// Shared by delete-batch and change-visibility-batch: each entry's evidence (an entry the
/// answer does not list, or every entry of a call that got no answer, as `unanswered`).
fn handle_batch_result<O>(
    masker: &Masker,
    rec: &mut Recorded<O>,
    resolved: &HashMap<String, ResolvedHandle>,
    split: impl Fn(&O) -> (Vec<String>, Vec<BatchResultErrorEntry>),
) -> Option<BatchOutcome> {
    let evidence_for = |id: &str| {
        resolved.get(id).map(|(h, info)| {
            (
                sha256_hex(h),
                info.as_ref().and_then(|(_, r)| r.label.clone()),
                info.as_ref().map(|(_, r)| r.message_id.clone()),
            )
        })
    };
    // Every entry sent is on the row, answered or not: the history must show each handle
    // used, whatever became of the call.
    let unanswered = |id: &str| {
        let (digest, label, mid) = evidence_for(id).unwrap_or_default();
        EntryEvidence {
            id: id.to_string(),
            message: label,
            message_id: mid,
            handle_digest: Some(digest).filter(|d| !d.is_empty()),
            result: "unanswered".into(),
            code: None,
            sender_fault: None,
            error_message: None,
            lease_ms: None,
        }
    };
    let mut ids: Vec<&String> = resolved.keys().collect();
    ids.sort();
    let Some(out) = rec.output.as_ref() else {
        rec.last_row().entries = ids.into_iter().map(|id| unanswered(id)).collect();
        return None;
    };
    let (successful, failed) = split(out);
    let mut outcome = BatchOutcome::default();
    let mut entries_ev = Vec::new();
    for id in &successful {
        let (digest, label, mid) = evidence_for(id).unwrap_or_default();
        entries_ev.push(EntryEvidence {
            id: id.clone(),
            message: label,
            message_id: mid,
            handle_digest: Some(digest).filter(|d| !d.is_empty()),
            result: "successful".into(),
            code: None,
            sender_fault: None,
            error_message: None,
            lease_ms: None,
        });
        outcome.successful.push(id.clone());
    }
    for f in &failed {
        let mut ev = failed_entry(masker, f, None);
        if let Some((digest, label, mid)) = evidence_for(f.id()) {
            ev.handle_digest = Some(digest);
            ev.message = label;
            ev.message_id = mid;
        }
        entries_ev.push(ev);
        outcome
            .failed
            .push((f.id().to_string(), f.code().to_string(), f.sender_fault()));
    }
    // An entry the answer lists in neither `Successful` nor `Failed` is one nobody
    // answered: it may or may not have taken effect.
    for id in ids {
        if !successful.contains(id) && !failed.iter().any(|f| f.id() == id) {
            entries_ev.push(unanswered(id));
        }
    }
    rec.last_row().entries = entries_ev;
    Some(outcome)
}

/// The handle a reference names: a literal as written (taught to the masker), or the receipt
/// the ledger kept for the attempt (and message) it names.
fn resolve_handle(
    masker: &mut Masker,
    ledger: &Ledger,
    target: &HandleRef,
) -> Result<ResolvedHandle, String> {
    match target {
        HandleRef::Literal(h) => {
            // Not a secret (the suite wrote it), but masked like any handle so outputs
            // follow one rule: no handle text, only digests.
            masker.add_handle(h);
            Ok((h.clone(), None))
        }
        HandleRef::Attempt { attempt, message } => {
            let receipt =
                ledger.receipt(&attempt.value, message.as_ref().map(|m| m.value.as_str()))?;
            Ok((
                receipt.handle.clone(),
                Some((attempt.value.clone(), receipt.clone())),
            ))
        }
    }
}

/// Resolves a single-handle step: the handle, where it came from, and the queue (given,
/// or the one the attempt received from).
fn resolve_single(
    masker: &mut Masker,
    ledger: &Ledger,
    queues: &QueueTable,
    queue: &Option<Spanned<String>>,
    target: &HandleRef,
    step: &str,
) -> Result<Single, String> {
    let (handle, origin) = resolve_handle(masker, ledger, target)?;
    let label = queue
        .as_ref()
        .map(|q| q.value.clone())
        .or_else(|| attempt_queue(queues, target))
        .ok_or_else(|| format!("{step} needs `queue:` when it uses a literal handle"))?;
    let url = queues.url(&label)?;
    Ok(Single {
        handle,
        origin,
        url,
        label,
    })
}

/// Resolves every entry of a batch step by entry id, and the queue (given, or the one the
/// first attempt-entry received from): the handles, the queue's URL and its label.
fn resolve_batch(
    masker: &mut Masker,
    ledger: &Ledger,
    queues: &QueueTable,
    queue: &Option<Spanned<String>>,
    entries: &[&HandleRef],
    step: &str,
) -> Result<(Vec<ResolvedHandle>, String, String), String> {
    // In entry order, not keyed by id: conformance cases send duplicate ids on purpose.
    let mut resolved = Vec::new();
    let mut label = queue.as_ref().map(|q| q.value.clone());
    let mut from: Option<String> = None;
    for target in entries {
        resolved.push(resolve_handle(masker, ledger, target)?);
        if let Some(q) = attempt_queue(queues, target) {
            match &from {
                // One batch goes to one queue: handles from several need `queue:` to say
                // which (a conformance case may want exactly that mix).
                Some(first) if *first != q && queue.is_none() => {
                    return Err(format!(
                        "{step} mixes handles from queues `{first}` and `{q}`; \
                         say which queue it goes to with `queue:`"
                    ));
                }
                Some(_) => {}
                None => from = Some(q),
            }
        }
    }
    if label.is_none() {
        label = from;
    }
    let label =
        label.ok_or_else(|| format!("{step} needs `queue:` when no entry names an attempt"))?;
    let url = queues.url(&label)?;
    Ok((resolved, url, label))
}

/// The queue an attempt received from (so `delete: {attempt: A}` needs no `queue:`).
fn attempt_queue(queues: &QueueTable, target: &HandleRef) -> Option<String> {
    match target {
        HandleRef::Attempt { attempt, .. } => queues.attempt_queue(&attempt.value),
        HandleRef::Literal(_) => None,
    }
}

/// Puts the handle's digest on every row of a call, and the message it was for when the
/// handle came from a receive.
fn note_handle_row<O>(
    ledger: &Ledger,
    rec: &mut Recorded<O>,
    handle: &str,
    info: Option<&(String, Receipt)>,
) {
    let digest = sha256_hex(handle);
    let bk = info
        .and_then(|(_, r)| r.label.as_ref())
        .and_then(|l| ledger.sent(l))
        .and_then(|s| s.business_key.clone());
    for row in &mut rec.rows {
        row.handle_digest = Some(digest.clone());
        if let Some((_, r)) = info {
            row.message_id = Some(r.message_id.clone());
            row.message = r.label.clone();
            row.business_key = bk.clone();
        }
    }
}

/// A `Failed` entry of a batch answer, as evidence (its message masked).
pub(super) fn failed_entry(
    masker: &Masker,
    f: &BatchResultErrorEntry,
    label: Option<String>,
) -> EntryEvidence {
    EntryEvidence {
        id: f.id().to_string(),
        message: label.filter(|l| !l.is_empty()),
        message_id: None,
        handle_digest: None,
        result: "failed".into(),
        code: Some(f.code().to_string()),
        sender_fault: Some(f.sender_fault()),
        error_message: f.message().map(|m| masker.mask(m)),
        lease_ms: None,
    }
}

/// A batch step over receipt handles, with its entries as written.
#[derive(Debug, Clone, Copy)]
pub(super) enum HandleBatch<'a> {
    /// `delete-batch`: each entry an acknowledgement.
    Delete(&'a [BatchHandle]),
    /// `change-visibility-batch`: each entry a new lease.
    ChangeVisibility(&'a [BatchVisibility]),
}

/// One entry of a [`HandleBatch`]: its id, its handle, and its new visibility timeout (a
/// visibility change's only).
#[derive(Debug, Clone, Copy)]
pub(super) struct HandleEntry<'a> {
    id: &'a str,
    target: &'a HandleRef,
    timeout: Option<Duration>,
}

impl<'a> HandleBatch<'a> {
    /// The step's keyword, for its errors.
    fn keyword(self) -> &'static str {
        match self {
            HandleBatch::Delete(_) => "delete-batch",
            HandleBatch::ChangeVisibility(_) => "change-visibility-batch",
        }
    }

    /// The SQS operation it calls.
    fn action(self) -> &'static str {
        match self {
            HandleBatch::Delete(_) => "DeleteMessageBatch",
            HandleBatch::ChangeVisibility(_) => "ChangeMessageVisibilityBatch",
        }
    }

    fn entries(self) -> Vec<HandleEntry<'a>> {
        match self {
            HandleBatch::Delete(entries) => entries
                .iter()
                .map(|e| HandleEntry {
                    id: &e.id,
                    target: &e.target,
                    timeout: None,
                })
                .collect(),
            HandleBatch::ChangeVisibility(entries) => entries
                .iter()
                .map(|e| HandleEntry {
                    id: &e.id,
                    target: &e.target,
                    timeout: Some(e.timeout),
                })
                .collect(),
        }
    }
}
