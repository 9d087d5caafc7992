//! Whole-request checks shared by the three batch operations, and the per-entry result shape.

use std::collections::HashSet;

use serde_json::{Map, Value, json};

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
    let mut seen = HashSet::new();
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
    for (id, _) in &out {
        if !seen.insert(id.as_str()) {
            return Err(SqsError::batch_entry_ids_not_distinct(id));
        }
    }
    Ok(out)
}

/// A `BatchResultErrorEntry`.
pub(crate) fn failure(id: &str, error: &SqsError) -> Value {
    json!({
        "Id": id,
        "SenderFault": error.sender_fault(),
        "Code": error.code(),
        "Message": error.message,
    })
}

/// `{Successful, Failed}`; an empty list is left out, as AWS's JSON protocol does today
/// (SNAP-2025 batch recordings, facts B7).
pub(crate) fn result(successful: Vec<Value>, failed: Vec<Value>) -> Value {
    let mut out = Map::new();
    if !successful.is_empty() {
        out.insert("Successful".into(), Value::Array(successful));
    }
    if !failed.is_empty() {
        out.insert("Failed".into(), Value::Array(failed));
    }
    Value::Object(out)
}
