//! What a step decoder is given: the shape of the step's body and its checked keys, and how
//! messages name a step. Shared by the step table ([`super::steps`]) and every decoder it names,
//! so neither imports the other back.

use super::scope::Scope;
use super::sqs_values::Site;
use crate::suite::limits::Limits;
use crate::suite::model::{Action, Spanned};
use crate::suite::yaml::{Fields, Node, Reader};

/// What follows a step keyword.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Body {
    /// A mapping of the row's keys; a `queue` key names a queue defined earlier.
    Mapping,
    /// A mapping whose `queue` is a new label (`create-queue`), so it is not a reference.
    NewQueue,
    /// A duration (`sleep: 1500ms`); the row has no keys.
    Duration,
}

/// What a decoder is given: the step's nodes, its checked keys, and its resolved `queue`.
pub(super) struct StepInput<'a, 'n> {
    /// The node after the keyword.
    pub body: &'a Node<'n>,
    /// The body's keys, already checked against the row's `keys` (empty for [`Body::Duration`]);
    /// its `owner` is the step keyword, where errors about the step as a whole point.
    pub fields: Fields<'a, 'n>,
    /// `queue` resolved against the queues in scope ([`Body::Mapping`] only).
    pub queue: Option<Spanned<String>>,
    /// The step's `expect:` has `error` or `status`, so a refused call is the point.
    pub expects_error: bool,
    /// The step's `expect:` expects SQS to refuse something: the call (`expects_error`) or a
    /// batch's entries (`failed`). A value outside SQS's range may then be what it tests.
    pub refusal_tested: bool,
    pub limits: &'a Limits,
}

impl StepInput<'_, '_> {
    /// Where the step's values are written, for [`super::sqs_values`].
    pub fn site(&self) -> Site {
        Site::Step {
            refusal_tested: self.refusal_tested,
        }
    }
}

/// Decodes a step whose keys were checked; reports its own errors and returns `None` on any.
pub(super) type Decode = fn(&mut Reader, &mut Scope, &StepInput) -> Option<Action>;

/// "a `send` step", "an `observe` step": how messages name a step of `keyword`.
pub(super) fn a_step(keyword: &str) -> String {
    let article = if keyword.starts_with(['a', 'e', 'i', 'o', 'u']) {
        "an"
    } else {
        "a"
    };
    format!("{article} `{keyword}` step")
}
