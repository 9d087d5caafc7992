//! A batch's answer written straight to bytes is the answer the `Value` path wrote: the
//! reference below builds the `Value` as the batch operations built it before, kept verbatim,
//! and a seeded property test writes random answers (successes with and without a sent
//! message's optional digests, failures of every error in the table, ids and messages with
//! quotes, `&`, `<`, control characters, unicode) both ways, for each batch operation, in the
//! JSON protocol and the query protocol's XML. Each must match byte for byte.

use proptest::prelude::*;
use serde_json::{Map, Value, json};

use crate::ops::answer::{Answer, Sent};
use crate::ops::batch::{Batch, Succeeded};
use crate::protocol::{json, query};
use crate::support::errors::SqsError;
use crate::support::hex;

/// A `BatchResultErrorEntry`, as the batch operations built it.
fn failure(id: &str, error: &SqsError) -> Value {
    json!({
        "Id": id,
        "SenderFault": error.sender_fault(),
        "Code": error.code(),
        "Message": error.message,
    })
}

/// `{Successful, Failed}`, as the batch operations built it.
fn result(successful: Vec<Value>, failed: Vec<Value>) -> Value {
    let mut out = Map::new();
    if !successful.is_empty() {
        out.insert("Successful".into(), Value::Array(successful));
    }
    if !failed.is_empty() {
        out.insert("Failed".into(), Value::Array(failed));
    }
    Value::Object(out)
}

/// The `Value` the batch operations answered `batch` with before.
fn reference(batch: &Batch) -> Value {
    let successful = batch
        .successful
        .iter()
        .map(|entry| match &entry.sent {
            Some(sent) => {
                let mut fields = sent.to_map();
                fields.insert("Id".into(), Value::String(entry.id.clone()));
                Value::Object(fields)
            }
            None => json!({ "Id": entry.id }),
        })
        .collect();
    let failed = batch
        .failed
        .iter()
        .map(|(id, error)| failure(id, error))
        .collect();
    result(successful, failed)
}

fn sent() -> impl Strategy<Value = Sent> {
    (
        any::<[u8; 16]>(),
        any::<[u8; 16]>(),
        proptest::option::of("[0-9a-f]{32}"),
        proptest::option::of("[0-9a-f]{32}"),
        proptest::option::of("[0-9]{20}"),
    )
        .prop_map(|(id, md5, attributes, system, sequence)| Sent {
            message_id: hex::uuid(&id),
            md5_of_body: hex::digest(&md5),
            md5_of_message_attributes: attributes,
            md5_of_message_system_attributes: system,
            sequence_number: sequence,
        })
}

/// Ids as a batch's are (letters, digits, `-`, `_`), and some no valid request has.
const ID: &str = "[a-zA-Z0-9_<&>\"'\\\\é-]{1,8}";

fn error() -> impl Strategy<Value = SqsError> {
    (
        0..sqsprobe_facts::sqs::errors::ERRORS.len(),
        "[a-z .<>&'\"\\\\\n\r\t\u{1}\u{7f}é✓]{0,24}",
    )
        .prop_map(|(i, message)| SqsError {
            spec: &sqsprobe_facts::sqs::errors::ERRORS[i],
            message,
        })
}

fn batch() -> impl Strategy<Value = Batch> {
    (
        proptest::collection::vec((ID, proptest::option::of(sent())), 0..5),
        proptest::collection::vec((ID, error()), 0..5),
    )
        .prop_map(|(successful, failed)| Batch {
            successful: successful
                .into_iter()
                .map(|(id, sent)| Succeeded { id, sent })
                .collect(),
            failed,
        })
}

proptest! {
    #![proptest_config(sqsprobe_testing::config(512))]

    #[test]
    fn a_batch_answer_is_written_as_its_value_path_wrote_it(
        batch in batch(),
        operation in proptest::sample::select(
            &["SendMessageBatch", "DeleteMessageBatch", "ChangeMessageVisibilityBatch"][..],
        ),
    ) {
        let value = reference(&batch);
        let answer = Answer::Batch(batch);
        prop_assert_eq!(&*answer.to_value(), &value);
        prop_assert_eq!(
            String::from_utf8(json::encode_answer(&answer)),
            String::from_utf8(json::encode(&value))
        );
        prop_assert_eq!(
            String::from_utf8(query::encode_answer(operation, &answer, "rid")),
            Ok(query::encode(operation, &value, "rid"))
        );
        prop_assert_eq!(
            String::from_utf8(query::encode_json_answer(operation, &answer, "rid")),
            String::from_utf8(query::encode_json(operation, &value, "rid"))
        );
    }
}

/// The usual answers, each kind written out: a send's successes with their digests beside a
/// failure, and a delete's bare ids (so that a writer that drifts is caught with a diff).
#[test]
fn the_usual_batch_answers_are_written_as_their_value_path_wrote_them() {
    let sent = Sent {
        message_id: hex::uuid(&[7; 16]),
        md5_of_body: hex::digest(&[9; 16]),
        md5_of_message_attributes: Some("0".repeat(32)),
        md5_of_message_system_attributes: None,
        sequence_number: Some("1".repeat(20)),
    };
    let failed = SqsError::invalid_parameter_value("One or more parameters cannot be validated.");
    let batches = [
        Batch {
            successful: vec![
                Succeeded {
                    id: "a".into(),
                    sent: Some(sent.clone()),
                },
                Succeeded {
                    id: "b-2_".into(),
                    sent: Some(sent),
                },
            ],
            failed: vec![("c".into(), failed.clone())],
        },
        Batch {
            successful: vec![Succeeded {
                id: "a".into(),
                sent: None,
            }],
            failed: vec![("b".into(), failed)],
        },
    ];
    for (operation, batch) in ["SendMessageBatch", "DeleteMessageBatch"]
        .into_iter()
        .zip(batches)
    {
        let value = reference(&batch);
        let answer = Answer::Batch(batch);
        assert_eq!(
            json::encode_answer(&answer),
            json::encode(&value),
            "{operation}"
        );
        assert_eq!(
            String::from_utf8(query::encode_answer(operation, &answer, "rid")).unwrap(),
            query::encode(operation, &value, "rid"),
        );
    }
}
