//! The query protocol's JSON form: the reply AWS sends a query request that accepts
//! `application/json` (`{"<Op>Response": {"<Op>Result": …}}`). It keeps the XML form's
//! structure, and names some lists otherwise than the JSON protocol does: AWS's
//! `ReceiveMessage` answers `ReceiveMessageResult.messages`, lower case (LocalStack's
//! AWS-validated `test_marker_serialization_json_protocol`). The emulator writes these names
//! and the runner's query client reads them back; docs/aws-facts.md §13 says what is known.

/// A list member the JSON form names in lower camel case.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct JsonFormList {
    /// The operation whose answer has the list (`ReceiveMessage`).
    pub operation: &'static str,
    /// The JSON protocol's member (`Messages`).
    pub member: &'static str,
    /// The JSON form's name for it (`messages`).
    pub json_form: &'static str,
}

/// Every list the JSON form renames. `ReceiveMessage`'s is AWS-validated; `ListQueues`'s
/// `queueUrls` is what independent clients of AWS's JSON form read (docs/aws-facts.md §13).
/// Other lists (batch `Successful`/`Failed`, `Attributes`, `Tags`, move-task `Results`) have
/// no known JSON-form name and keep the JSON protocol's.
pub const JSON_FORM_LISTS: &[JsonFormList] = &[
    JsonFormList {
        operation: "ReceiveMessage",
        member: "Messages",
        json_form: "messages",
    },
    JsonFormList {
        operation: "ListQueues",
        member: "QueueUrls",
        json_form: "queueUrls",
    },
];

/// The JSON form's name of `operation`'s result member `member`.
pub fn json_form_name<'a>(operation: &str, member: &'a str) -> &'a str {
    JSON_FORM_LISTS
        .iter()
        .find(|l| l.operation == operation && l.member == member)
        .map_or(member, |l| l.json_form)
}

/// How a member of `operation`'s JSON-form result reads in the JSON protocol: renamed when
/// the JSON form renames it, `None` when it is the JSON protocol's own name for a list the
/// JSON form renames (AWS never sends that; a reader that took it would accept a reply AWS's
/// own clients cannot read).
pub fn member_from_json_form<'a>(operation: &str, name: &'a str) -> Option<&'a str> {
    let lists = || JSON_FORM_LISTS.iter().filter(|l| l.operation == operation);
    if let Some(l) = lists().find(|l| l.json_form == name) {
        return Some(l.member);
    }
    if lists().any(|l| l.member == name) {
        return None;
    }
    Some(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_go_there_and_back() {
        for l in JSON_FORM_LISTS {
            let there = json_form_name(l.operation, l.member);
            assert_eq!(there, l.json_form);
            assert_eq!(member_from_json_form(l.operation, there), Some(l.member));
            assert_eq!(member_from_json_form(l.operation, l.member), None);
            assert!(
                super::super::operations::OPERATIONS
                    .iter()
                    .any(|o| o.name == l.operation)
            );
        }
        assert_eq!(json_form_name("ListQueueTags", "Tags"), "Tags");
        assert_eq!(
            member_from_json_form("ReceiveMessage", "NextToken"),
            Some("NextToken")
        );
    }
}
