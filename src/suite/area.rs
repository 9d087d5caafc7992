//! What a case is about, for the conformance matrix's scores (pure).
//!
//! An **area** is one of a fixed list ([`AREAS`]), so that every target's per-area scores line
//! up whichever suite files a run was made from: a suite names its area (`area:` at the top),
//! a case may name another. The list is in order of weight — what a consumer loses first when
//! a target gets it wrong — and the matrix's "what will surprise you" list reads it that way.
//!
//! An **aspect** says whether a case checks *semantics* (what a consumer can observe: leases,
//! redelivery, ordering, deduplication, redrive, defaults) or *validation* (the error code and
//! message a bad input gets). A case may say (`aspect:`); otherwise it is derived from its
//! steps ([`derive_aspect`]): validation when it expects an error and checks nothing of the
//! messages themselves. A target that gets leases right but error strings wrong then reads
//! as it is.

use super::model::{Action, Case};

/// One area of SQS behaviour.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AreaSpec {
    /// The key written in suites (`area: leases`) and evidence.
    pub key: &'static str,
    /// The heading the matrix shows.
    pub title: &'static str,
}

/// Every area, heaviest first (see the module docs).
pub const AREAS: &[AreaSpec] = &[
    AreaSpec {
        key: "leases",
        title: "Leases and visibility",
    },
    AreaSpec {
        key: "handles",
        title: "Receipt handles and acknowledgements",
    },
    AreaSpec {
        key: "fifo",
        title: "FIFO ordering and deduplication",
    },
    AreaSpec {
        key: "dead-letter",
        title: "Dead-letter queues and redrive",
    },
    AreaSpec {
        key: "move-tasks",
        title: "Message move tasks",
    },
    AreaSpec {
        key: "batches",
        title: "Batches",
    },
    AreaSpec {
        key: "polling-delays",
        title: "Delays and polling",
    },
    AreaSpec {
        key: "messages",
        title: "Message bodies and attributes",
    },
    AreaSpec {
        key: "attributes",
        title: "Queue attributes, tags and permissions",
    },
    AreaSpec {
        key: "queues",
        title: "Queue lifecycle",
    },
    AreaSpec {
        key: "errors",
        title: "Errors and validation",
    },
    AreaSpec {
        key: "query-protocol",
        title: "Query protocol",
    },
];

/// The area with this key.
pub fn area(key: &str) -> Option<&'static AreaSpec> {
    AREAS.iter().find(|a| a.key == key)
}

/// Every area key, for did-you-mean.
pub fn area_keys() -> Vec<&'static str> {
    AREAS.iter().map(|a| a.key).collect()
}

/// What a case checks (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Aspect {
    /// What a consumer can observe of its messages and queues.
    Semantics,
    /// The error code and message a bad input gets.
    Validation,
}

impl Aspect {
    /// The word in suites and evidence.
    pub fn key(self) -> &'static str {
        match self {
            Aspect::Semantics => "semantics",
            Aspect::Validation => "validation",
        }
    }

    /// The aspect a suite word names.
    pub fn parse(word: &str) -> Option<Aspect> {
        match word {
            "semantics" => Some(Aspect::Semantics),
            "validation" => Some(Aspect::Validation),
            _ => None,
        }
    }

    /// Every word, for did-you-mean.
    pub const KEYS: &'static [&'static str] = &["semantics", "validation"];
}

/// The aspect of a case that does not say: validation when some step expects an error (a
/// refused call, or a batch entry refused with a code) and no step checks messages — none
/// observes, none expects what a receive returned or what became of a message, and the case
/// states no outcome. Everything else is semantics: a refusal followed by a check of what the
/// messages did (a stale handle's delete, then the redelivery) is about what a consumer sees.
pub fn derive_aspect(case: &Case) -> Aspect {
    let refuses = case.steps.iter().any(|s| {
        s.expect.expects_error()
            || s.expect.message_contains.is_some()
            || s.expect.message.is_some()
            || s.expect.failed.as_ref().is_some_and(|f| !f.is_empty())
    });
    let checks_messages = case.expect.outcome.is_some()
        || case.expect.rate.is_some()
        || case.steps.iter().any(|s| {
            matches!(s.action, Action::Observe(_))
                || s.expect.messages.is_some()
                || !s.expect.received.is_empty()
                || s.expect.outcome.is_some()
                || s.expect.rate.is_some()
        });
    if refuses && !checks_messages {
        Aspect::Validation
    } else {
        Aspect::Semantics
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::suite::{Limits, parse_suite};

    fn case(steps: &str) -> Case {
        let src = format!(
            "cases:\n  - id: c\n    behaviour: b\n    source: s\n    queues: {{q: {{}}}}\n    steps:\n{steps}"
        );
        let mut suite = parse_suite("t.yaml", &src, &Limits::default()).unwrap();
        suite.cases.remove(0)
    }

    #[test]
    fn area_keys_are_unique_and_found() {
        let keys = area_keys();
        for (i, k) in keys.iter().enumerate() {
            assert!(!keys[..i].contains(k), "{k} twice");
            assert_eq!(area(k).unwrap().key, *k);
        }
        assert!(area("lease").is_none());
    }

    #[test]
    fn a_refusal_alone_is_validation() {
        let c = case(
            "      - send: {queue: q, body: ''}\n        expect: {error: InvalidParameterValue}\n",
        );
        assert_eq!(derive_aspect(&c), Aspect::Validation);
        let c = case(
            "      - remove-permission: {queue: q, label: x}\n        expect: {message: \"no.\"}\n",
        );
        assert_eq!(derive_aspect(&c), Aspect::Validation);
    }

    #[test]
    fn a_refusal_then_a_look_at_the_messages_is_semantics() {
        let c = case(
            "      - send: {queue: q, body: x}\n      - receive: {queue: q, as: A, wait: 1s}\n      - delete: {attempt: A}\n        expect: {error: ReceiptHandleIsInvalid}\n      - receive: {queue: q, wait: 1s}\n        expect: {received: [m1]}\n",
        );
        assert_eq!(derive_aspect(&c), Aspect::Semantics);
    }

    #[test]
    fn no_refusal_is_semantics() {
        let c = case(
            "      - get-attributes: {queue: q, names: [VisibilityTimeout]}\n        expect: {attributes: {VisibilityTimeout: \"30\"}}\n",
        );
        assert_eq!(derive_aspect(&c), Aspect::Semantics);
    }
}
