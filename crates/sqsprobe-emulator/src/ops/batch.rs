//! Whole-request checks shared by the three batch operations, and their answer: each entry's
//! outcome ([`Batch`]), which the protocol modules write straight to bytes.
//!
//! Why not a `serde_json::Value`: a batch answer built as one is a `Map`, its keys and a
//! `String` per member for each of up to ten entries, then serialised — the cost SendMessage's
//! and a receive's answers shed when they went to bytes (docs/performance.md).
//! [`Batch::to_value`] still builds that form, for an audit's observer and the unit tests, and
//! `protocol/batch_tests.rs` checks that every protocol writes the same bytes from either.

use serde_json::{Map, Value};

use crate::ops::answer::Sent;
use crate::support::errors::{SqsError, SqsResult};
use crate::support::input::Input;

/// Most entries in one batch.
pub(crate) const MAX_BATCH_ENTRIES: usize = 10;

/// Validates entry count and Ids of `operation`'s batch; returns the entries. Order of checks
/// follows AWS: empty, too many, then each Id's syntax, then distinctness. An empty batch is
/// named by its entries' query name (`There should be at least one
/// SendMessageBatchRequestEntry in the request.`, [`sqsprobe_facts::sqs::query_members`]).
pub(crate) fn entries<'a>(
    input: &Input<'a>,
    operation: &str,
) -> SqsResult<Vec<(String, Input<'a>)>> {
    let entry_kind = sqsprobe_facts::sqs::query_members::request_by_json(operation, "Entries")
        .map_or("Entries", |m| m.query);
    let entries = input.object_list("Entries")?;
    if entries.is_empty() {
        return Err(SqsError::empty_batch_request_for(entry_kind));
    }
    if entries.len() > MAX_BATCH_ENTRIES {
        return Err(SqsError::too_many_entries(entries.len()));
    }
    let mut out = Vec::with_capacity(entries.len());
    for entry in entries {
        let id = entry.string("Id")?.unwrap_or_default();
        let valid = !id.is_empty()
            && id.len() <= 80
            && id
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
        if !valid {
            return Err(SqsError::invalid_batch_entry_id());
        }
        out.push((id.to_owned(), entry));
    }
    // At most ten Ids: comparing each with those before it is cheaper than hashing them.
    for (at, (id, _)) in out.iter().enumerate() {
        if out[..at].iter().any(|(earlier, _)| earlier == id) {
            return Err(SqsError::batch_entry_ids_not_distinct(id));
        }
    }
    Ok(out)
}

/// A batch operation's answer: its entries' outcomes, in the order of the request.
#[derive(Debug, Default)]
pub(crate) struct Batch {
    /// The entries that succeeded.
    pub successful: Vec<Succeeded>,
    /// The entries that failed, each with its error (a `BatchResultErrorEntry`).
    pub failed: Vec<(String, SqsError)>,
}

/// A successful entry: its `Id` and, for SendMessageBatch, the sent message's ids and digests
/// (DeleteMessageBatch and ChangeMessageVisibilityBatch answer the `Id` alone).
#[derive(Debug)]
pub(crate) struct Succeeded {
    /// The entry's `Id`.
    pub id: String,
    /// What SendMessage would have answered.
    pub sent: Option<Sent>,
}

impl Batch {
    /// An answer for `n` entries, none recorded yet.
    pub fn with_capacity(n: usize) -> Self {
        Self {
            successful: Vec::with_capacity(n),
            failed: Vec::new(),
        }
    }

    /// Records entry `id`'s outcome.
    pub fn record(&mut self, id: String, outcome: SqsResult<Option<Sent>>) {
        match outcome {
            Ok(sent) => self.successful.push(Succeeded { id, sent }),
            Err(error) => self.failed.push((id, error)),
        }
    }

    /// `{Successful, Failed}` in the JSON protocol's shape; an empty list is left out, as
    /// AWS's JSON protocol does today (SNAP-2025 batch recordings, facts B7).
    pub fn to_value(&self) -> Value {
        let mut out = Map::new();
        if !self.successful.is_empty() {
            let list = self
                .successful
                .iter()
                .map(|entry| {
                    let mut fields = entry.sent.as_ref().map(Sent::to_map).unwrap_or_default();
                    fields.insert("Id".into(), Value::String(entry.id.clone()));
                    Value::Object(fields)
                })
                .collect();
            out.insert("Successful".into(), Value::Array(list));
        }
        if !self.failed.is_empty() {
            let list = self
                .failed
                .iter()
                .map(|(id, error)| {
                    let mut fields = Map::new();
                    fields.insert("Id".into(), Value::String(id.clone()));
                    fields.insert("SenderFault".into(), Value::Bool(error.sender_fault()));
                    fields.insert("Code".into(), Value::String(error.code().to_owned()));
                    fields.insert("Message".into(), Value::String(error.message.clone()));
                    Value::Object(fields)
                })
                .collect();
            out.insert("Failed".into(), Value::Array(list));
        }
        Value::Object(out)
    }
}
