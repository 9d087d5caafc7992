//! How a call failed, as plain facts: the kind of failure (a definite refusal, a throttle, a
//! 5xx, no answer at all, the run's credentials refused, never sent) and the error the target
//! gave. The runner makes these from the SDK's answer (`runner/call.rs`); the step checks
//! (`answer.rs`) and the runner's bookkeeping read them without knowing the SDK.

use crate::evidence::format::FaultEvidence;

/// How a failed call failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FailureKind {
    /// A definite error response (4xx): the call did not take effect.
    Response,
    /// Throttled: the target asked us to slow down. Never a finding about semantics.
    Throttled,
    /// A 5xx: the target could not say whether the call took effect.
    ServerError,
    /// No response at all (refused, reset, timed out): outcome unknown.
    NoResponse,
    /// The target refused the run's credentials or permissions (`ExpiredToken`,
    /// `AccessDenied`, ...): a harness problem, never a finding about SQS.
    Refused,
    /// The request was never sent (an injected reset): a definite non-effect without an answer.
    NotSent,
}

/// A failed call, as the step checks see it.
#[derive(Debug, Clone)]
pub struct CallError {
    /// How it failed: whether the target's answer was definite, and whose fault.
    pub kind: FailureKind,
    /// The SDK's code (the legacy query code when the server sent one).
    pub code: Option<String>,
    /// The `__type` shape name (JSON protocol), without namespace.
    pub error_type: Option<String>,
    /// The HTTP status of the final attempt, when one came.
    pub status: Option<u16>,
    /// Whether the target blamed the sender (`SenderFault`), when it said.
    pub sender_fault: Option<bool>,
    /// Masked message.
    pub message: Option<String>,
    /// The kind of the fault sqsprobe injected into the final attempt, when it did: the
    /// answer (or its absence) is then the suite's own doing.
    pub injected: Option<FaultEvidence>,
    /// A `deny` of the case refused it (an `AccessDenied` to a denied action on its queue):
    /// the suite's own doing too.
    pub denied: bool,
}

impl CallError {
    /// Whether the case's own fault made this answer: a fault injected into the final attempt
    /// that changes answers (every kind but latency), or a `deny`.
    pub fn case_made(&self) -> bool {
        self.denied || self.injected.as_ref().is_some_and(|f| f.kind != "latency")
    }

    /// Notes the fault sqsprobe injected into the final attempt, if it did, and what it makes
    /// of the failure: a reset was never sent (a definite non-effect); an auth refusal is the
    /// case's own experiment, a definite refusal like any injected 4xx, never the run's
    /// credentials.
    pub fn inject(&mut self, fault: Option<FaultEvidence>) {
        match fault.as_ref().map(|f| f.kind.as_str()) {
            Some("reset") => self.kind = FailureKind::NotSent,
            Some("error") if self.kind == FailureKind::Refused => self.kind = FailureKind::Response,
            _ => {}
        }
        self.injected = fault;
    }

    /// `Code (400): message`, for findings.
    pub fn describe(&self) -> String {
        sqsprobe_facts::sqs::errors::describe_failure(
            self.code.as_deref().or(self.error_type.as_deref()),
            self.status,
            self.message.as_deref(),
            self.kind == FailureKind::NoResponse,
        )
    }

    /// Whether `expected` (as a suite writes it) names this error: the legacy code, the
    /// `__type`, or the last dotted part of the legacy code. Literal on purpose: a conformance
    /// case that expects the JSON shape name (`InvalidParameterValueException`) must fail on a
    /// target that sends the legacy code as `__type`.
    pub fn matches(&self, expected: &str) -> bool {
        let by_code = self
            .code
            .as_deref()
            .is_some_and(|c| c == expected || c.rsplit('.').next() == Some(expected));
        by_code || self.error_type.as_deref() == Some(expected)
    }

    /// Whether this is the SQS error `shape` under any of its names (the JSON shape name or the
    /// legacy query code, through the one error table): for the harness's own checks ("is the
    /// queue gone?"), which must hold over either protocol.
    pub fn is(&self, shape: &str) -> bool {
        let Some(want) = sqsprobe_facts::sqs::errors::by_shape(shape) else {
            return self.matches(shape);
        };
        [self.code.as_deref(), self.error_type.as_deref()]
            .into_iter()
            .flatten()
            .any(|c| {
                sqsprobe_facts::sqs::errors::by_code(c).is_some_and(|got| got.shape == want.shape)
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn error(code: Option<&str>, error_type: Option<&str>) -> CallError {
        CallError {
            kind: FailureKind::Response,
            code: code.map(str::to_string),
            error_type: error_type.map(str::to_string),
            status: Some(400),
            sender_fault: Some(true),
            message: Some("m".into()),
            injected: None,
            denied: false,
        }
    }

    #[test]
    fn expected_codes_match_legacy_code_type_or_its_last_part() {
        let e = error(
            Some("AWS.SimpleQueueService.NonExistentQueue"),
            Some("QueueDoesNotExist"),
        );
        assert!(e.matches("QueueDoesNotExist"));
        assert!(e.matches("AWS.SimpleQueueService.NonExistentQueue"));
        assert!(e.matches("NonExistentQueue"));
        assert!(!e.matches("ReceiptHandleIsInvalid"));
        assert!(error(Some("ReceiptHandleIsInvalid"), None).matches("ReceiptHandleIsInvalid"));
        // The harness's own checks know both names through the table; expectations do not.
        let query = error(Some("AWS.SimpleQueueService.NonExistentQueue"), None);
        assert!(query.is("QueueDoesNotExist"));
        assert!(!query.is("QueueDeletedRecently"));
        let moto = error(Some("InvalidParameterValue"), Some("InvalidParameterValue"));
        assert!(!moto.matches("InvalidParameterValueException"));
    }

    #[test]
    fn an_injected_fault_says_what_the_failure_was() {
        let fault = |kind: &str| {
            Some(FaultEvidence {
                kind: kind.into(),
                scope: "case".into(),
                delay_ms: None,
                status: Some(403),
                code: Some("AccessDenied".into()),
            })
        };
        let refused = || CallError {
            kind: FailureKind::Refused,
            ..error(Some("AccessDenied"), None)
        };
        // The case's own AccessDenied is its experiment's definite refusal.
        let mut e = refused();
        e.inject(fault("error"));
        assert_eq!(e.kind, FailureKind::Response);
        assert!(e.case_made());
        // A latency that held the request changes no answer: the refusal is the target's.
        let mut e = refused();
        e.inject(fault("latency"));
        assert_eq!(e.kind, FailureKind::Refused);
        assert!(!e.case_made());
        let mut e = error(None, None);
        e.kind = FailureKind::NoResponse;
        e.inject(fault("reset"));
        assert_eq!(e.kind, FailureKind::NotSent);
    }

    #[test]
    fn describe_reads_like_a_finding() {
        assert_eq!(
            error(Some("ReceiptHandleIsInvalid"), None).describe(),
            "ReceiptHandleIsInvalid (400): m"
        );
    }
}
