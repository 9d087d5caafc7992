//! The step table: every step keyword's grammar, stated once.
//!
//! One [`StepSpec`] row per keyword says what its body is, which keys it takes, which of them
//! are required, which `expect:` keys apply to it, and which function decodes it. The step
//! reader ([`super::step`]) derives everything else from this table: the did-you-mean list
//! of keywords, the unknown-key and missing-key errors, and "`within` does not apply to a
//! `purge` step".
//!
//! To add a step keyword: add its [`Action`] variant (and its name in [`Action::keyword`]) in
//! `model.rs`, write its decoder beside its kin (`send.rs`, `receive.rs`, `handles.rs`,
//! `observe.rs`, `queue.rs`, `admin.rs`, `permission.rs`), add one row to [`STEPS`], document
//! it in `docs/suite-format.md`, and teach the runner to execute it. The table's tests check that
//! every row decodes to an action of its own keyword.

use super::admin;
use super::fault;
use super::handles;
use super::input::{Body, Decode};
use super::observe;
use super::permission;
use super::queue::{QUEUE_KEYS, decode_create_queue};
use super::receive;
use super::send::{self, SEND_KEYS};
use crate::suite::model::Action;

/// One step keyword's grammar.
pub(super) struct StepSpec {
    pub keyword: &'static str,
    pub body: Body,
    /// The keys the body may have, in groups (a group is shared with other rows).
    pub keys: &'static [&'static [&'static str]],
    /// Keys that must be present; a missing one is an error at the keyword.
    pub required: &'static [&'static str],
    /// The `expect:` keys that apply to this step, in groups.
    pub expect: &'static [&'static [&'static str]],
    /// The SQS operations the step calls: what a `fault:` beside it may select.
    pub calls: &'static [&'static str],
    pub decode: Decode,
}

impl StepSpec {
    /// Every key of the body, flattened.
    pub fn keys(&self) -> Vec<&'static str> {
        self.keys.iter().flat_map(|g| g.iter().copied()).collect()
    }

    /// Whether the `expect:` key `key` applies to this step.
    pub fn expects(&self, key: &str) -> bool {
        self.expect.iter().any(|g| g.contains(&key))
    }
}

/// The expectations of any step that makes one SQS call: what the response said (`reply`:
/// its query-protocol form, for query-protocol cases).
pub(super) const CALL: &[&str] = &["error", "status", "message_contains", "message", "reply"];
/// The expectations of batch steps: their `Successful` and `Failed` entries.
pub(super) const BATCH: &[&str] = &["successful", "failed"];

const QUEUE: &[&str] = &["queue"];
const ENTRIES: &[&str] = &["queue", "entries"];

/// Every step keyword, in the order the docs list them.
pub(super) const STEPS: &[StepSpec] = &[
    StepSpec {
        keyword: "send",
        body: Body::Mapping,
        keys: &[SEND_KEYS],
        required: &["queue"],
        expect: &[CALL],
        calls: &["SendMessage"],
        decode: send::decode_send_step,
    },
    StepSpec {
        keyword: "send-batch",
        body: Body::Mapping,
        keys: &[ENTRIES],
        required: &["entries", "queue"],
        expect: &[CALL, BATCH],
        calls: &["SendMessageBatch"],
        decode: send::decode_send_batch,
    },
    StepSpec {
        keyword: "receive",
        body: Body::Mapping,
        keys: &[receive::RECEIVE_KEYS],
        required: &["queue"],
        expect: &[
            CALL,
            &["messages", "received", "attributes", "absent", "within"],
        ],
        calls: &["ReceiveMessage"],
        decode: receive::decode_receive,
    },
    StepSpec {
        keyword: "delete",
        body: Body::Mapping,
        keys: &[QUEUE, handles::HANDLE_KEYS],
        required: &[],
        expect: &[CALL],
        calls: &["DeleteMessage"],
        decode: handles::decode_delete,
    },
    StepSpec {
        keyword: "delete-batch",
        body: Body::Mapping,
        keys: &[ENTRIES],
        required: &["entries"],
        expect: &[CALL, BATCH],
        calls: &["DeleteMessageBatch"],
        decode: handles::decode_delete_batch,
    },
    StepSpec {
        keyword: "change-visibility",
        body: Body::Mapping,
        keys: &[QUEUE, handles::HANDLE_KEYS, &["timeout"]],
        required: &["timeout"],
        expect: &[CALL],
        calls: &["ChangeMessageVisibility"],
        decode: handles::decode_change_visibility,
    },
    StepSpec {
        keyword: "change-visibility-batch",
        body: Body::Mapping,
        keys: &[ENTRIES],
        required: &["entries"],
        expect: &[CALL, BATCH],
        calls: &["ChangeMessageVisibilityBatch"],
        decode: handles::decode_change_visibility_batch,
    },
    StepSpec {
        keyword: "get-attributes",
        body: Body::Mapping,
        keys: &[QUEUE, &["names"]],
        required: &["queue"],
        expect: &[CALL, &["attributes", "absent", "policy_sids"]],
        calls: &["GetQueueAttributes"],
        decode: admin::decode_get_attributes,
    },
    StepSpec {
        keyword: "set-attributes",
        body: Body::Mapping,
        keys: &[QUEUE, &["attributes"]],
        required: &["queue", "attributes"],
        expect: &[CALL],
        calls: &["SetQueueAttributes"],
        decode: admin::decode_set_attributes,
    },
    StepSpec {
        keyword: "purge",
        body: Body::Mapping,
        keys: &[QUEUE],
        required: &["queue"],
        expect: &[CALL],
        calls: &["PurgeQueue"],
        decode: admin::decode_purge,
    },
    StepSpec {
        keyword: "sleep",
        body: Body::Duration,
        keys: &[],
        required: &[],
        expect: &[],
        calls: &[],
        decode: admin::decode_sleep,
    },
    StepSpec {
        keyword: "observe",
        body: Body::Mapping,
        keys: &[observe::OBSERVE_KEYS],
        required: &["queue", "window"],
        expect: &[&["outcome", "rate", "received"]],
        calls: &["ReceiveMessage", "DeleteMessage"],
        decode: observe::decode_observe_step,
    },
    StepSpec {
        keyword: "create-queue",
        body: Body::NewQueue,
        keys: &[QUEUE_KEYS, &["queue", "name_suffix"]],
        required: &["queue"],
        expect: &[CALL],
        calls: &["CreateQueue"],
        decode: decode_create_queue,
    },
    StepSpec {
        keyword: "delete-queue",
        body: Body::Mapping,
        keys: &[QUEUE],
        required: &["queue"],
        expect: &[CALL],
        calls: &["DeleteQueue"],
        decode: admin::decode_delete_queue,
    },
    StepSpec {
        keyword: "get-queue-url",
        body: Body::Mapping,
        keys: &[QUEUE],
        required: &["queue"],
        expect: &[CALL],
        calls: &["GetQueueUrl"],
        decode: admin::decode_get_queue_url,
    },
    StepSpec {
        keyword: "list-queues",
        body: Body::Mapping,
        keys: &[&["max_results"]],
        required: &[],
        // The runner counts queue URLs for the two listing calls.
        expect: &[CALL, &["messages"]],
        calls: &["ListQueues"],
        decode: admin::decode_list_queues,
    },
    StepSpec {
        keyword: "tag-queue",
        body: Body::Mapping,
        keys: &[QUEUE, &["tags"]],
        required: &["queue", "tags"],
        expect: &[CALL],
        calls: &["TagQueue"],
        decode: admin::decode_tag_queue,
    },
    StepSpec {
        keyword: "untag-queue",
        body: Body::Mapping,
        keys: &[QUEUE, &["keys"]],
        required: &["queue", "keys"],
        expect: &[CALL],
        calls: &["UntagQueue"],
        decode: admin::decode_untag_queue,
    },
    StepSpec {
        keyword: "list-queue-tags",
        body: Body::Mapping,
        keys: &[QUEUE],
        required: &["queue"],
        // Tags are checked like queue attributes.
        expect: &[CALL, &["attributes"]],
        calls: &["ListQueueTags"],
        decode: admin::decode_list_queue_tags,
    },
    StepSpec {
        keyword: "list-dead-letter-source-queues",
        body: Body::Mapping,
        keys: &[QUEUE],
        required: &["queue"],
        // `received` names queue labels here: the call answers queue URLs.
        expect: &[CALL, &["messages", "received"]],
        calls: &["ListDeadLetterSourceQueues"],
        decode: admin::decode_list_dead_letter_source_queues,
    },
    StepSpec {
        keyword: "start-move-task",
        body: Body::Mapping,
        keys: &[&["source", "destination", "max_per_second", "as"]],
        required: &["source"],
        expect: &[CALL],
        calls: &["StartMessageMoveTask"],
        decode: admin::decode_start_move_task,
    },
    StepSpec {
        keyword: "list-move-tasks",
        body: Body::Mapping,
        keys: &[&["source"]],
        required: &["source"],
        // The newest task's fields are checked like queue attributes.
        expect: &[CALL, &["attributes"]],
        calls: &["ListMessageMoveTasks"],
        decode: admin::decode_list_move_tasks,
    },
    StepSpec {
        keyword: "cancel-move-task",
        body: Body::Mapping,
        // One of the two, checked by the decoder.
        keys: &[&["task", "handle"]],
        required: &[],
        expect: &[CALL],
        calls: &["CancelMessageMoveTask"],
        decode: admin::decode_cancel_move_task,
    },
    StepSpec {
        keyword: "deny",
        body: Body::Mapping,
        keys: &[QUEUE, &["actions", "for"]],
        required: &["queue", "actions", "for"],
        expect: &[CALL],
        // Setting the deny policy, and removing it.
        calls: &["SetQueueAttributes"],
        decode: fault::decode_deny,
    },
    StepSpec {
        keyword: "add-permission",
        body: Body::Mapping,
        keys: &[QUEUE, &["label", "actions", "accounts"]],
        required: &["queue", "label", "actions", "accounts"],
        expect: &[CALL],
        calls: &["AddPermission"],
        decode: permission::decode_add_permission,
    },
    StepSpec {
        keyword: "remove-permission",
        body: Body::Mapping,
        keys: &[QUEUE, &["label"]],
        required: &["queue", "label"],
        expect: &[CALL],
        calls: &["RemovePermission"],
        decode: permission::decode_remove_permission,
    },
];

/// The row of `keyword`, if it is a step keyword.
pub(super) fn spec(keyword: &str) -> Option<&'static StepSpec> {
    STEPS.iter().find(|s| s.keyword == keyword)
}

/// The operations `action` makes: its row's `calls`, less the DeleteMessage of an observe
/// that does not delete what it sees.
pub(super) fn calls_of(spec: &StepSpec, action: Option<&Action>) -> &'static [&'static str] {
    match action {
        Some(Action::Observe(o)) if !o.delete_seen => &["ReceiveMessage"],
        _ => spec.calls,
    }
}

/// The operations a decoded step calls (see [`calls_of`]).
pub fn step_calls(action: &Action) -> &'static [&'static str] {
    spec(action.keyword()).map_or(&[], |s| calls_of(s, Some(action)))
}

/// Every step keyword, for did-you-mean suggestions and hints.
pub(super) fn keywords() -> Vec<&'static str> {
    STEPS.iter().map(|s| s.keyword).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::suite::parse::expect::EXPECT_KEYS;
    use crate::suite::{Limits, SQS_OPERATIONS, parse_suite};

    /// A body that decodes for each row, written after a case that defines what it refers to.
    fn example(keyword: &str) -> &'static str {
        match keyword {
            "send" => "{queue: q, body: x}",
            "send-batch" => "{queue: q, entries: [{body: y}]}",
            "receive" => "{queue: q, as: B}",
            "delete" => "{attempt: A}",
            "change-visibility" => "{attempt: A, timeout: 0s}",
            "delete-batch" => "{entries: [{attempt: A}]}",
            "change-visibility-batch" => "{entries: [{attempt: A, timeout: 0s}]}",
            "set-attributes" => "{queue: q, attributes: {DelaySeconds: '0'}}",
            "sleep" => "1ms",
            "observe" => "{queue: q, window: 1s}",
            "create-queue" => "{queue: new}",
            "list-queues" => "{}",
            "tag-queue" => "{queue: q, tags: {a: b}}",
            "untag-queue" => "{queue: q, keys: [a]}",
            "start-move-task" => "{source: q}",
            "list-move-tasks" => "{source: q}",
            "cancel-move-task" => "{task: t}",
            "deny" => "{queue: q, actions: [sqs:DeleteMessage], for: 5s}",
            "add-permission" => "{queue: q, label: p, actions: [SendMessage], accounts: [self]}",
            "remove-permission" => "{queue: q, label: p}",
            _ => "{queue: q}",
        }
    }

    #[test]
    fn every_row_decodes_to_an_action_of_its_keyword() {
        for spec in STEPS {
            let src = format!(
                "cases:\n  - id: c1\n    behaviour: b\n    source: s\n    queues: {{q: {{}}}}\n    steps:\n      - send: {{queue: q, body: a}}\n      - receive: {{queue: q, as: A}}\n      - start-move-task: {{source: q, as: t}}\n      - {}: {}\n",
                spec.keyword,
                example(spec.keyword)
            );
            let suite = parse_suite("x.yaml", &src, &Limits::default())
                .unwrap_or_else(|e| panic!("{}: {e:?}", spec.keyword));
            let last = suite.cases[0].steps.last().unwrap();
            assert_eq!(last.action.keyword(), spec.keyword);
            for key in spec.required {
                assert!(spec.keys().contains(key), "{}: {key}", spec.keyword);
            }
            for call in spec.calls {
                assert!(SQS_OPERATIONS.contains(call), "{}: {call}", spec.keyword);
            }
        }
    }

    #[test]
    fn keywords_are_unique_and_expect_keys_known() {
        let mut seen = std::collections::BTreeSet::new();
        for spec in STEPS {
            assert!(seen.insert(spec.keyword), "{} twice", spec.keyword);
            for key in spec.expect.iter().flat_map(|g| g.iter()) {
                assert!(EXPECT_KEYS.contains(key), "{}: {key}", spec.keyword);
            }
        }
        for key in EXPECT_KEYS {
            assert!(
                STEPS.iter().any(|s| s.expects(key)),
                "`{key}` applies to no step"
            );
        }
    }
}
