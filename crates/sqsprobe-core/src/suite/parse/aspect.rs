//! A case's aspect when it does not say (`aspect:`): derived from its steps (see
//! [`crate::suite::area`] for what the aspects mean).

use crate::suite::area::Aspect;
use crate::suite::model::{Action, Case};

/// The aspect of a case that does not say: validation when some step expects an error (a
/// refused call, or a batch entry refused with a code) and no step checks messages — none
/// observes, none expects what a receive returned or what became of a message, and the case
/// states no outcome. Everything else is semantics: a refusal followed by a check of what the
/// messages did (a stale handle's delete, then the redelivery) is about what a consumer sees.
pub(super) fn derive_aspect(case: &Case) -> Aspect {
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
