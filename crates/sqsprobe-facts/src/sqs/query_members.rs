//! The query protocol's names for the JSON protocol's members, once, both ways.
//!
//! SQS's two wire protocols carry the same parameters under different names: AWS JSON 1.0 has
//! `Attributes: {name: value}` and `Entries: [..]` where the query protocol has
//! `Attribute.N.Name` / `Attribute.N.Value` and `SendMessageBatchRequestEntry.N.*` in a
//! request, and flattened `<Attribute><Name/><Value/></Attribute>` and
//! `<SendMessageBatchResultEntry>` elements in a reply (the `locationName`s of SQS's query
//! model, as the API reference's query examples spell them). Four readers translate between
//! them: the runner's query client encodes requests (`runner/query_protocol/encode.rs`) and
//! decodes replies (`decode.rs`), the emulator decodes requests and encodes replies
//! (`emulator/protocol/query.rs`). They all read [`REQUEST`] and [`REPLY`]; the tests below
//! check that every row reads the same both ways. A few request rows are only read, never
//! written ([`Member::read_only`]): names a server takes that a client does not send.
//!
//! A member not in the tables has the same name in both protocols (`QueueUrl`,
//! `MessageBody`, `ReceiptHandle`, …).

/// How a member's items are laid out in the query protocol.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layout {
    /// A JSON map written as numbered pairs: `Name.N.<key>` and `Name.N.Value` in a request,
    /// repeated `<Name><key/><Value/></Name>` elements in a reply.
    Map {
        /// The pair's key member (`Name` for attributes, `Key` for tags).
        key: &'static str,
        /// The values are structures (message attribute values: `DataType`, `StringValue`,
        /// …), not strings.
        structured: bool,
    },
    /// A JSON list written as numbered items (`Name.N`) or repeated elements.
    List,
}

/// One member the two protocols name differently.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Member {
    /// The JSON protocol's name (`Attributes`).
    pub json: &'static str,
    /// The query protocol's name (`Attribute`).
    pub query: &'static str,
    /// How the query protocol lays the member out (flattened, entries, a map).
    pub layout: Layout,
    /// The one operation whose input or output has this member under these names; `None`
    /// for every operation that has it.
    pub operation: Option<&'static str>,
    /// Read by a server, never written by a client: the runner's query client does not send
    /// it (see the row's comment).
    pub read_only: bool,
}

const fn map(json: &'static str, query: &'static str, key: &'static str) -> Member {
    Member {
        json,
        query,
        layout: Layout::Map {
            key,
            structured: false,
        },
        operation: None,
        read_only: false,
    }
}

const fn structured_map(json: &'static str, query: &'static str) -> Member {
    Member {
        json,
        query,
        layout: Layout::Map {
            key: "Name",
            structured: true,
        },
        operation: None,
        read_only: false,
    }
}

const fn list(json: &'static str, query: &'static str) -> Member {
    Member {
        json,
        query,
        layout: Layout::List,
        operation: None,
        read_only: false,
    }
}

impl Member {
    /// The same member, in `operation`'s input or output only.
    const fn of(self, operation: &'static str) -> Member {
        Member {
            operation: Some(operation),
            ..self
        }
    }

    /// The same member, read by a server but never written by a client.
    const fn read_only(self) -> Member {
        Member {
            read_only: true,
            ..self
        }
    }

    fn applies_to(&self, operation: &str) -> bool {
        self.operation.is_none_or(|o| o == operation)
    }
}

/// A request's members (API reference, each action's "Request Parameters"; botocore's query
/// serializer numbers lists and maps from 1).
pub const REQUEST: &[Member] = &[
    map("Attributes", "Attribute", "Name"),
    structured_map("MessageAttributes", "MessageAttribute"),
    structured_map("MessageSystemAttributes", "MessageSystemAttribute"),
    map("Tags", "Tag", "Key"),
    // CreateQueue's JSON member is `tags`, lower case; TagQueue's is `Tags`. Both are `Tag.N`.
    map("tags", "Tag", "Key").of("CreateQueue"),
    // `Tags.N.Key` is taken for `Tag.N.Key`, as lenient servers do.
    map("Tags", "Tags", "Key").read_only(),
    list("AttributeNames", "AttributeName"),
    list("MessageAttributeNames", "MessageAttributeName"),
    // Newer than the query protocol, so it has no modelled query name: the runner's client
    // sends it as `AttributeName.N` (see `runner/query_protocol/encode.rs`); a server that
    // receives this form reads it.
    list("MessageSystemAttributeNames", "MessageSystemAttributeName").read_only(),
    list("TagKeys", "TagKey"),
    list("AWSAccountIds", "AWSAccountId"),
    list("Actions", "ActionName"),
    list("StringListValues", "StringListValue"),
    list("BinaryListValues", "BinaryListValue"),
    list("Entries", "SendMessageBatchRequestEntry").of("SendMessageBatch"),
    list("Entries", "DeleteMessageBatchRequestEntry").of("DeleteMessageBatch"),
    list("Entries", "ChangeMessageVisibilityBatchRequestEntry").of("ChangeMessageVisibilityBatch"),
];

/// A reply's members (API reference, each action's "Response Elements"; the query protocol
/// flattens lists and maps into repeated elements).
pub const REPLY: &[Member] = &[
    map("Attributes", "Attribute", "Name"),
    structured_map("MessageAttributes", "MessageAttribute"),
    map("Tags", "Tag", "Key"),
    // `Message` elsewhere (a batch error entry) is an error's text, not a list.
    list("Messages", "Message").of("ReceiveMessage"),
    list("QueueUrls", "QueueUrl").of("ListQueues"),
    // The JSON model spells this one member in lower camel case.
    list("queueUrls", "QueueUrl").of("ListDeadLetterSourceQueues"),
    list("Successful", "SendMessageBatchResultEntry").of("SendMessageBatch"),
    list("Successful", "DeleteMessageBatchResultEntry").of("DeleteMessageBatch"),
    list("Successful", "ChangeMessageVisibilityBatchResultEntry")
        .of("ChangeMessageVisibilityBatch"),
    list("Failed", "BatchResultErrorEntry"),
    list("Results", "ListMessageMoveTasksResultEntry").of("ListMessageMoveTasks"),
    list("StringListValues", "StringListValue"),
    list("BinaryListValues", "BinaryListValue"),
];

/// The row of `operation`'s request member named `json` in the JSON protocol, if the query
/// protocol names it otherwise.
pub fn request_by_json(operation: &str, json: &str) -> Option<&'static Member> {
    REQUEST
        .iter()
        .find(|m| m.json == json && m.applies_to(operation) && !m.read_only)
}

/// The row of a request parameter named `query` in the query protocol, whatever the
/// operation: a server reads the parameters before it knows whether the action takes them.
pub fn request_by_query(query: &str) -> Option<&'static Member> {
    REQUEST.iter().find(|m| m.query == query)
}

/// Whether a request member, by its JSON name, is a list (an empty one is sent as `Name=`).
pub fn request_is_list(json: &str) -> bool {
    REQUEST
        .iter()
        .any(|m| m.json == json && m.layout == Layout::List)
}

/// The row of `operation`'s reply member named `json` in the JSON protocol.
pub fn reply_by_json(operation: &str, json: &str) -> Option<&'static Member> {
    REPLY
        .iter()
        .find(|m| m.json == json && m.applies_to(operation))
}

/// The row of `operation`'s reply element named `query`.
pub fn reply_by_query(operation: &str, query: &str) -> Option<&'static Member> {
    REPLY
        .iter()
        .find(|m| m.query == query && m.applies_to(operation))
}

/// Whether a reply member, by its JSON name, is a map (a list of pairs in the query
/// protocol's JSON form).
pub fn reply_is_map(json: &str) -> bool {
    REPLY
        .iter()
        .any(|m| m.json == json && matches!(m.layout, Layout::Map { .. }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sqs::operations::by_name;

    /// Every row is found again from either name: what one side writes, the other reads as
    /// the same member.
    #[test]
    fn every_row_reads_the_same_both_ways() {
        for m in REQUEST {
            let op = m.operation.unwrap_or("SendMessage");
            if m.read_only {
                // Never written, always read as itself.
                assert_ne!(request_by_json(op, m.json), Some(m), "{}", m.query);
                assert_eq!(request_by_query(m.query), Some(m), "{}", m.query);
                continue;
            }
            let written = request_by_json(op, m.json).expect(m.json);
            let read = request_by_query(written.query).expect(written.query);
            // CreateQueue's `tags` is read back as TagQueue's `Tags`: the server takes both.
            assert!(
                read.json.eq_ignore_ascii_case(m.json),
                "{} read as {}",
                m.json,
                read.json
            );
            assert_eq!(read.layout, written.layout, "{}", m.json);
        }
        for m in REPLY {
            let op = m.operation.unwrap_or("SendMessageBatch");
            let written = reply_by_json(op, m.json).expect(m.json);
            assert_eq!(written, m, "{} in {op}", m.json);
            let read = reply_by_query(op, written.query).expect(written.query);
            assert_eq!(read, m, "{} in {op}", m.query);
        }
    }

    #[test]
    fn every_scoped_row_names_an_operation_of_the_table() {
        for m in REQUEST.iter().chain(REPLY) {
            if let Some(op) = m.operation {
                assert!(by_name(op).is_some(), "{op}");
            }
        }
        // Every batch has its entries both ways.
        for op in crate::sqs::operations::OPERATIONS {
            if op.batch_of.is_some() {
                assert!(request_by_json(op.name, "Entries").is_some(), "{}", op.name);
                assert!(
                    reply_by_json(op.name, "Successful").is_some(),
                    "{}",
                    op.name
                );
                assert!(reply_by_json(op.name, "Failed").is_some(), "{}", op.name);
            }
        }
    }

    #[test]
    fn scoped_names_stay_in_their_operation() {
        assert_eq!(
            reply_by_query("ReceiveMessage", "Message").map(|m| m.json),
            Some("Messages")
        );
        assert_eq!(reply_by_query("SendMessageBatch", "Message"), None);
        assert_eq!(
            reply_by_query("ListDeadLetterSourceQueues", "QueueUrl").map(|m| m.json),
            Some("queueUrls")
        );
        assert_eq!(reply_by_query("GetQueueUrl", "QueueUrl"), None);
        assert_eq!(
            request_by_json("TagQueue", "Tags").map(|m| m.query),
            Some("Tag")
        );
        assert_eq!(request_by_json("TagQueue", "tags"), None);
        assert!(request_is_list("Entries") && !request_is_list("QueueUrl"));
        assert!(reply_is_map("Tags") && !reply_is_map("Messages"));
    }
}
