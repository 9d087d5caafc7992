//! Checking a step's answer against its `expect:`, pure: the runner turns the SDK's answer
//! into the plain facts of [`Observed`] at its edge, and this decides.
//!
//! A response the target chose (a 4xx, a batch `Failed` entry, a message count) can fail an
//! expectation. A response the target did not really give (throttled, 5xx, nothing at all)
//! cannot: it makes the step inconclusive instead, unless the suite expected exactly that code.
//! A refusal of the run's credentials or permissions is neither: it is a harness error, so a
//! misconfigured nightly job reads as one clear line, not as dozens of SQS findings.

use super::failure::{CallError, FailureKind};
use super::judge::Check;
use crate::suite::model::{AttrShape, StepExpect};
use std::collections::BTreeMap;

/// A message in a receive response, as the checks need it.
#[derive(Debug, Clone, Default)]
pub struct ReceivedMsg {
    /// The suite label, when the message is one of the case's sends.
    pub label: Option<String>,
    /// System attributes as returned.
    pub attributes: BTreeMap<String, String>,
}

/// A batch response.
#[derive(Debug, Clone, Default)]
pub struct BatchOutcome {
    /// The Ids of the `Successful` entries.
    pub successful: Vec<String>,
    /// (Id, Code, SenderFault)
    pub failed: Vec<(String, String, bool)>,
}

/// What a step got back, as plain facts.
#[derive(Debug, Default)]
pub struct Observed<'a> {
    /// How the call failed, if it did.
    pub error: Option<&'a CallError>,
    /// The HTTP status of the final attempt.
    pub status: Option<u16>,
    /// The messages a receive returned (or what a listing step counts as received).
    pub received: Option<Vec<ReceivedMsg>>,
    /// A batch call's entries.
    pub batch: Option<BatchOutcome>,
    /// The queue attributes (or tags, or a move task's fields) the answer carried.
    pub queue_attributes: Option<BTreeMap<String, String>>,
    /// Integrity problems the harness found itself (an MD5 that does not match).
    pub integrity: Vec<String>,
    /// How long the call took, measured around it by the runner (receive steps).
    pub elapsed: Option<std::time::Duration>,
    /// The form the query-protocol reply came in (`json`, `xml`, `other`), when one came.
    pub reply: Option<&'a str>,
}

/// Checks `obs` against `expect`.
pub fn check_step(expect: &StepExpect, obs: &Observed<'_>) -> Check {
    let mut failures = Vec::new();
    // `status: 400` alone expects an error response with that status (see `expects_error`).
    let expects_error_status = expect.error.is_none() && expect.expects_error();
    if let Some(err) = obs.error {
        let expected_this = expect.error.as_deref().is_some_and(|e| err.matches(e))
            || (expect.error.is_none() && expects_error_status && err.status == expect.status);
        // The step's own `fault:` took this answer: the suite asked for it. Without an
        // expectation of the answer itself it passes; what else it expects cannot be checked.
        if !expected_this && err.injected.as_ref().is_some_and(|f| f.scope == "step") {
            let others = expect.expects_of_the_answer();
            return if expect.error.is_some() || expects_error_status {
                Check::Fail(vec![format!(
                    "expected error {}, got the step's injected fault ({}): {}",
                    expect
                        .error
                        .clone()
                        .unwrap_or_else(|| format!("status {}", expect.status.unwrap_or_default())),
                    err.injected
                        .as_ref()
                        .map(|f| f.kind.as_str())
                        .unwrap_or_default(),
                    err.describe()
                )])
            } else if others {
                Check::Inconclusive(format!(
                    "the step's own fault took its answer ({}); its other expectations cannot be checked",
                    err.describe()
                ))
            } else {
                Check::Pass
            };
        }
        if !expected_this && err.kind != FailureKind::Response {
            return match err.kind {
                FailureKind::Refused => Check::Error(format!(
                    "the target refused this run's credentials or permissions: {} — nothing \
                     about SQS was judged",
                    err.describe()
                )),
                FailureKind::Throttled => {
                    Check::Inconclusive(format!("throttled: {}", err.describe()))
                }
                FailureKind::ServerError => {
                    Check::Inconclusive(format!("server error: {}", err.describe()))
                }
                FailureKind::NotSent => {
                    Check::Inconclusive(format!("not sent: {}", err.describe()))
                }
                _ => Check::Inconclusive(format!("no response: {}", err.describe())),
            };
        }
        match &expect.error {
            Some(_) if expected_this => {}
            Some(expected) => {
                failures.push(format!("expected error {expected}, got {}", err.describe()))
            }
            None if expects_error_status => {}
            None => failures.push(format!("expected success, got {}", err.describe())),
        }
    } else if let Some(expected) = &expect.error {
        failures.push(format!("expected error {expected}, but the call succeeded"));
    } else if expects_error_status {
        failures.push(format!(
            "expected HTTP status {}, but the call succeeded",
            expect.status.unwrap_or_default()
        ));
    }

    if let Some(text) = &expect.message_contains {
        match obs.error {
            Some(err)
                if err
                    .message
                    .as_deref()
                    .is_some_and(|m| m.contains(text.as_str())) => {}
            Some(err) => failures.push(format!(
                "expected an error message containing {text:?}, got {}",
                err.describe()
            )),
            None => failures.push(format!(
                "expected an error message containing {text:?}, but the call succeeded"
            )),
        }
    }

    if let Some(text) = &expect.message {
        match obs.error {
            Some(err) if err.message.as_deref() == Some(text.as_str()) => {}
            Some(err) => failures.push(format!(
                "expected the error message {text:?}, got {}",
                err.describe()
            )),
            None => failures.push(format!(
                "expected the error message {text:?}, but the call succeeded"
            )),
        }
    }

    if let (Some(limit), Some(took)) = (expect.within, obs.elapsed)
        && took > limit
    {
        failures.push(format!(
            "expected the call to return within {} ms, it took {} ms",
            limit.as_millis(),
            took.as_millis()
        ));
    }

    if let (Some(want), Some(got)) = (expect.status, obs.status)
        && want != got
        && !(expects_error_status && obs.error.is_none())
    {
        failures.push(format!("expected HTTP status {want}, got {got}"));
    }

    if let Some(received) = &obs.received {
        if let Some(want) = expect.messages
            && !want.allows(received.len())
        {
            failures.push(format!(
                "expected {want} message(s), received {}",
                received.len()
            ));
        }
        for label in &expect.received {
            if !received
                .iter()
                .any(|m| m.label.as_deref() == Some(label.value.as_str()))
            {
                let got: Vec<&str> = received
                    .iter()
                    .map(|m| m.label.as_deref().unwrap_or("(untracked)"))
                    .collect();
                failures.push(format!(
                    "expected to receive {}, received [{}]",
                    label.value,
                    got.join(", ")
                ));
            }
        }
        for (i, m) in received.iter().enumerate() {
            let who = m
                .label
                .clone()
                .unwrap_or_else(|| format!("message {}", i + 1));
            check_attributes(&expect.attributes, &m.attributes, &who, &mut failures);
            check_shapes(&expect.attribute_shapes, &m.attributes, &who, &mut failures);
            check_absent(&expect.absent, &m.attributes, &who, &mut failures);
        }
    } else if obs.error.is_none() && (expect.messages.is_some() || !expect.received.is_empty()) {
        failures.push("expected messages, but this step does not receive".to_string());
    }

    if let Some(batch) = &obs.batch {
        if let Some(n) = expect.successful
            && batch.successful.len() != n as usize
        {
            failures.push(format!(
                "expected {n} Successful entr{}, got {} ({})",
                if n == 1 { "y" } else { "ies" },
                batch.successful.len(),
                batch.successful.join(", ")
            ));
        }
        match &expect.failed {
            Some(failed) => check_failed_entries(failed, &batch.failed, &mut failures),
            // Like a single call's default (success), a batch with no expectation must not
            // half-fail quietly: no `Failed` entries, unless `successful:` says how many pass.
            None if expect.successful.is_none() => {
                check_failed_entries(&[], &batch.failed, &mut failures)
            }
            None => {}
        }
    }

    if let Some(attrs) = &obs.queue_attributes {
        check_attributes(&expect.attributes, attrs, "queue", &mut failures);
        check_shapes(&expect.attribute_shapes, attrs, "queue", &mut failures);
        check_absent(&expect.absent, attrs, "queue", &mut failures);
        if let Some(sids) = &expect.policy_sids {
            check_policy_sids(sids, attrs, &mut failures);
        }
    }

    failures.extend(obs.integrity.iter().cloned());
    if let Some(want) = expect.reply.as_ref().map(|r| r.value) {
        match obs.reply {
            Some(got) if got == want.as_str() => {}
            Some(got) => failures.push(format!(
                "expected the reply in {}, it came in {got}",
                want.as_str()
            )),
            // An answer whose form nobody noted proves nothing either way.
            None if failures.is_empty() => {
                return Check::Inconclusive(format!(
                    "the reply's form was not recorded, so `reply: {}` cannot be checked",
                    want.as_str()
                ));
            }
            None => {}
        }
    }
    if failures.is_empty() {
        Check::Pass
    } else {
        Check::Fail(failures)
    }
}

fn check_attributes(
    want: &BTreeMap<String, String>,
    got: &BTreeMap<String, String>,
    who: &str,
    failures: &mut Vec<String>,
) {
    for (name, value) in want {
        match got.get(name) {
            None => failures.push(format!("{who}: attribute {name} missing")),
            Some(_) if value == "*" => {}
            Some(actual) if actual != value => {
                let shown = if PRINCIPAL_ATTRIBUTES.contains(&name.as_str()) {
                    shape(actual)
                } else {
                    actual.clone()
                };
                failures.push(format!("{who}: expected {name} = {value}, got {shown}"))
            }
            Some(_) => {}
        }
    }
}

/// Attributes whose values identify a principal (SenderId is an IAM unique id, and under an
/// assumed role carries the session name): a failure describes their shape, never the value.
const PRINCIPAL_ATTRIBUTES: &[&str] = &["SenderId"];

/// `{Name: {matches: <regex>, above: <integer>}}`: each attribute is present and has every
/// part of its shape. The suite parser compiled every pattern already; one that does not
/// compile here fails its check.
fn check_shapes(
    want: &BTreeMap<String, AttrShape>,
    got: &BTreeMap<String, String>,
    who: &str,
    failures: &mut Vec<String>,
) {
    for (name, shape_want) in want {
        let Some(value) = got.get(name) else {
            failures.push(format!("{who}: attribute {name} missing"));
            continue;
        };
        let shown = || {
            if PRINCIPAL_ATTRIBUTES.contains(&name.as_str()) {
                shape(value)
            } else {
                value.clone()
            }
        };
        if let Some(pattern) = &shape_want.matches
            && !pattern.is_match(value)
        {
            failures.push(format!(
                "{who}: expected {name} to match `{}`, got {}",
                pattern.as_str(),
                shown()
            ));
        }
        if let Some(bound) = &shape_want.above
            && !decimal_above(value, bound)
        {
            failures.push(format!(
                "{who}: expected {name} to be a decimal integer above {bound}, got {}",
                shown()
            ));
        }
    }
}

/// Whether `value` is a decimal integer (digits only) greater than `bound` (digits, no leading
/// zeros), at any size: the longer number is the larger, equal lengths compare digit by digit.
fn decimal_above(value: &str, bound: &str) -> bool {
    if value.is_empty() || !value.bytes().all(|b| b.is_ascii_digit()) {
        return false;
    }
    let value = value.trim_start_matches('0');
    let bound = bound.trim_start_matches('0');
    (value.len(), value) > (bound.len(), bound)
}

/// What a value looks like without saying what it is: its length and the kinds of
/// characters in it (`21 characters: upper-case letters, digits`).
fn shape(value: &str) -> String {
    let mut kinds = Vec::new();
    if value.chars().any(|c| c.is_ascii_uppercase()) {
        kinds.push("upper-case letters");
    }
    if value.chars().any(|c| c.is_ascii_lowercase()) {
        kinds.push("lower-case letters");
    }
    if value.chars().any(|c| c.is_ascii_digit()) {
        kinds.push("digits");
    }
    if value.chars().any(|c| !c.is_ascii_alphanumeric()) {
        kinds.push("other characters");
    }
    if kinds.is_empty() {
        return "an empty value".to_string();
    }
    format!(
        "a value of {} characters ({})",
        value.chars().count(),
        kinds.join(", ")
    )
}

fn check_absent(
    names: &[String],
    got: &BTreeMap<String, String>,
    who: &str,
    failures: &mut Vec<String>,
) {
    for name in names {
        if let Some(value) = got.get(name) {
            failures.push(format!(
                "{who}: expected no attribute {name}, got {name} = {value}"
            ));
        }
    }
}

/// The queue's `Policy` is a policy document whose statements' Sids are exactly `want`, in any
/// order (a statement may be one object or a list of them, as IAM allows).
fn check_policy_sids(
    want: &[String],
    attrs: &BTreeMap<String, String>,
    failures: &mut Vec<String>,
) {
    let Some(policy) = attrs.get("Policy") else {
        failures.push("queue: attribute Policy missing".to_string());
        return;
    };
    let Some(got) = policy_sids(policy) else {
        failures.push("queue: Policy is not a policy document with a Statement".to_string());
        return;
    };
    let mut want_sorted: Vec<&str> = want.iter().map(String::as_str).collect();
    want_sorted.sort_unstable();
    let mut got_sorted: Vec<&str> = got.iter().map(String::as_str).collect();
    got_sorted.sort_unstable();
    if want_sorted != got_sorted {
        failures.push(format!(
            "queue: expected Policy statements with Sids [{}], got [{}]",
            want.join(", "),
            got.join(", ")
        ));
    }
}

/// The Sids of a policy document's statements, in order (`(no Sid)` for one without); `None`
/// when it is not a JSON object with a `Statement`.
fn policy_sids(policy: &str) -> Option<Vec<String>> {
    let doc: serde_json::Value = serde_json::from_str(policy).ok()?;
    let statements = match doc.get("Statement")? {
        serde_json::Value::Array(items) => items.clone(),
        one @ serde_json::Value::Object(_) => vec![one.clone()],
        _ => return None,
    };
    Some(
        statements
            .iter()
            .map(|s| {
                s.get("Sid")
                    .and_then(|v| v.as_str())
                    .unwrap_or("(no Sid)")
                    .to_string()
            })
            .collect(),
    )
}

fn check_failed_entries(
    want: &[crate::suite::model::FailedEntryExpect],
    got: &[(String, String, bool)],
    failures: &mut Vec<String>,
) {
    let shown: Vec<String> = got
        .iter()
        .map(|(id, code, fault)| format!("{id}: {code} (sender_fault {fault})"))
        .collect();
    if want.len() != got.len() {
        failures.push(format!(
            "expected {} Failed entr{}, got {} [{}]",
            want.len(),
            if want.len() == 1 { "y" } else { "ies" },
            got.len(),
            shown.join("; ")
        ));
        return;
    }
    let mut unmatched: Vec<&(String, String, bool)> = got.iter().collect();
    for w in want {
        let code_ok = |c: &str| c == w.code || c.rsplit('.').next() == Some(w.code.as_str());
        let pos = unmatched.iter().position(|(id, code, fault)| {
            w.id.as_deref().is_none_or(|wid| wid == id)
                && code_ok(code)
                && w.sender_fault.is_none_or(|f| f == *fault)
        });
        match pos {
            Some(i) => {
                unmatched.remove(i);
            }
            None => failures.push(format!(
                "expected a Failed entry{} with code {}{}, got [{}]",
                w.id.as_ref().map(|i| format!(" {i}")).unwrap_or_default(),
                w.code,
                w.sender_fault
                    .map(|f| format!(" and sender_fault {f}"))
                    .unwrap_or_default(),
                shown.join("; ")
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::suite::model::{CountExpect, FailedEntryExpect, Pos, Spanned};

    fn err(kind: FailureKind, code: &str) -> CallError {
        CallError {
            kind,
            code: Some(code.into()),
            error_type: None,
            status: Some(400),
            sender_fault: Some(true),
            message: None,
            injected: None,
            denied: false,
        }
    }

    #[test]
    fn success_passes_the_default_expectation() {
        assert_eq!(
            check_step(&StepExpect::default(), &Observed::default()),
            Check::Pass
        );
    }

    #[test]
    fn an_unexpected_error_response_fails() {
        let e = err(FailureKind::Response, "ReceiptHandleIsInvalid");
        let obs = Observed {
            error: Some(&e),
            ..Observed::default()
        };
        match check_step(&StepExpect::default(), &obs) {
            Check::Fail(f) => {
                assert!(f[0].contains("expected success, got ReceiptHandleIsInvalid"))
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn throttling_is_inconclusive_unless_expected() {
        let e = err(FailureKind::Throttled, "RequestThrottled");
        let obs = Observed {
            error: Some(&e),
            ..Observed::default()
        };
        assert!(matches!(
            check_step(&StepExpect::default(), &obs),
            Check::Inconclusive(_)
        ));
        let expect = StepExpect {
            error: Some("RequestThrottled".into()),
            ..StepExpect::default()
        };
        assert_eq!(check_step(&expect, &obs), Check::Pass);
    }

    #[test]
    fn a_status_alone_expects_an_error_response_with_that_status() {
        let expect = StepExpect {
            status: Some(400),
            ..StepExpect::default()
        };
        match check_step(
            &expect,
            &Observed {
                status: Some(200),
                ..Observed::default()
            },
        ) {
            Check::Fail(f) => {
                assert_eq!(f, vec!["expected HTTP status 400, but the call succeeded"])
            }
            other => panic!("{other:?}"),
        }
        let e = err(FailureKind::Response, "InvalidParameterValue");
        let refused = Observed {
            error: Some(&e),
            status: Some(400),
            ..Observed::default()
        };
        assert_eq!(check_step(&expect, &refused), Check::Pass);
        let mut e403 = err(FailureKind::Response, "AccessDenied");
        e403.status = Some(403);
        let other = Observed {
            error: Some(&e403),
            status: Some(403),
            ..Observed::default()
        };
        match check_step(&expect, &other) {
            Check::Fail(f) => assert_eq!(f, vec!["expected HTTP status 400, got 403"]),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn refused_credentials_are_a_harness_error_unless_expected() {
        let e = err(FailureKind::Refused, "ExpiredToken");
        let obs = Observed {
            error: Some(&e),
            ..Observed::default()
        };
        match check_step(&StepExpect::default(), &obs) {
            Check::Error(why) => assert!(why.contains("credentials"), "{why}"),
            other => panic!("{other:?}"),
        }
        let expect = StepExpect {
            error: Some("ExpiredToken".into()),
            ..StepExpect::default()
        };
        assert_eq!(check_step(&expect, &obs), Check::Pass);
    }

    /// A refusal the case's own fault injected is the case's experiment: judged like any
    /// definite refusal, never "the target refused this run's credentials".
    #[test]
    fn an_injected_access_denied_is_judged_never_a_harness_error() {
        for scope in ["case", "step"] {
            let mut e = err(FailureKind::Refused, "AccessDenied");
            e.status = Some(403);
            e.inject(Some(crate::evidence::format::FaultEvidence {
                kind: "error".into(),
                scope: scope.into(),
                delay_ms: None,
                status: Some(403),
                code: Some("AccessDenied".into()),
            }));
            let obs = Observed {
                error: Some(&e),
                status: Some(403),
                ..Observed::default()
            };
            let expect = StepExpect {
                error: Some("AccessDenied".into()),
                ..StepExpect::default()
            };
            assert_eq!(check_step(&expect, &obs), Check::Pass, "{scope}");
            let unexpected = check_step(&StepExpect::default(), &obs);
            assert!(
                !matches!(unexpected, Check::Error(_)),
                "{scope}: {unexpected:?}"
            );
            if scope == "case" {
                match unexpected {
                    Check::Fail(f) => assert!(
                        f[0].contains("expected success, got AccessDenied (403)"),
                        "{f:?}"
                    ),
                    other => panic!("{other:?}"),
                }
            }
        }
    }

    #[test]
    fn an_expected_error_that_did_not_happen_fails() {
        let expect = StepExpect {
            error: Some("InvalidParameterValue".into()),
            ..StepExpect::default()
        };
        assert!(matches!(
            check_step(&expect, &Observed::default()),
            Check::Fail(_)
        ));
    }

    #[test]
    fn message_counts_labels_and_attributes_are_checked() {
        let expect = StepExpect {
            messages: Some(CountExpect::exactly(1)),
            received: vec![Spanned {
                value: "m1".into(),
                pos: Pos::default(),
            }],
            attributes: BTreeMap::from([
                ("ApproximateReceiveCount".to_string(), "2".to_string()),
                ("SentTimestamp".to_string(), "*".to_string()),
            ]),
            ..StepExpect::default()
        };
        let good = ReceivedMsg {
            label: Some("m1".into()),
            attributes: BTreeMap::from([
                ("ApproximateReceiveCount".to_string(), "2".to_string()),
                ("SentTimestamp".to_string(), "1".to_string()),
            ]),
        };
        let obs = Observed {
            received: Some(vec![good.clone()]),
            ..Observed::default()
        };
        assert_eq!(check_step(&expect, &obs), Check::Pass);
        let mut bad = good;
        bad.attributes
            .insert("ApproximateReceiveCount".into(), "1".into());
        let obs = Observed {
            received: Some(vec![bad]),
            ..Observed::default()
        };
        match check_step(&expect, &obs) {
            Check::Fail(f) => {
                assert_eq!(f, vec!["m1: expected ApproximateReceiveCount = 2, got 1"])
            }
            other => panic!("{other:?}"),
        }
        let obs = Observed {
            received: Some(vec![]),
            ..Observed::default()
        };
        match check_step(&expect, &obs) {
            Check::Fail(f) => assert_eq!(f.len(), 2),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn batch_failures_match_by_code_id_and_fault() {
        let expect = StepExpect {
            successful: Some(1),
            failed: Some(vec![FailedEntryExpect {
                id: None,
                code: "ReceiptHandleIsInvalid".into(),
                sender_fault: Some(true),
            }]),
            ..StepExpect::default()
        };
        let batch = BatchOutcome {
            successful: vec!["e1".into()],
            failed: vec![("e2".into(), "ReceiptHandleIsInvalid".into(), true)],
        };
        let obs = Observed {
            batch: Some(batch),
            ..Observed::default()
        };
        assert_eq!(check_step(&expect, &obs), Check::Pass);
        let batch = BatchOutcome {
            successful: vec!["e1".into()],
            failed: vec![("e2".into(), "ReceiptHandleIsInvalid".into(), false)],
        };
        let obs = Observed {
            batch: Some(batch),
            ..Observed::default()
        };
        assert!(matches!(check_step(&expect, &obs), Check::Fail(_)));
    }

    #[test]
    fn an_exact_error_message_must_be_the_whole_message() {
        let mut e = err(FailureKind::Response, "InvalidParameterValue");
        e.message =
            Some("Value l for parameter Label is invalid. Reason: can't find label.".into());
        let mut expect = StepExpect {
            error: Some("InvalidParameterValue".into()),
            message: Some(
                "Value l for parameter Label is invalid. Reason: can't find label.".into(),
            ),
            ..StepExpect::default()
        };
        let obs = Observed {
            error: Some(&e),
            ..Observed::default()
        };
        assert_eq!(check_step(&expect, &obs), Check::Pass);
        // A longer message (moto's "... can't find label on existing policy.") is not it.
        expect.message = Some("Value l for parameter Label is invalid. Reason: can't find".into());
        assert!(matches!(check_step(&expect, &obs), Check::Fail(_)));
        assert!(matches!(
            check_step(&expect, &Observed::default()),
            Check::Fail(_)
        ));
    }

    #[test]
    fn error_message_text_is_matched_as_a_substring() {
        let mut e = err(FailureKind::Response, "InvalidParameterValue");
        e.message = Some(
            "Value h for parameter ReceiptHandle is invalid. Reason: The receipt handle has expired."
                .into(),
        );
        let mut expect = StepExpect {
            error: Some("InvalidParameterValue".into()),
            message_contains: Some("The receipt handle has expired.".into()),
            ..StepExpect::default()
        };
        let obs = Observed {
            error: Some(&e),
            ..Observed::default()
        };
        assert_eq!(check_step(&expect, &obs), Check::Pass);
        expect.message_contains = Some("Message does not exist".into());
        assert!(matches!(check_step(&expect, &obs), Check::Fail(_)));
        assert!(matches!(
            check_step(&expect, &Observed::default()),
            Check::Fail(_)
        ));
    }

    #[test]
    fn absent_attributes_fail_when_present() {
        let expect = StepExpect {
            absent: vec!["SentTimestamp".into()],
            ..StepExpect::default()
        };
        let bare = ReceivedMsg {
            label: Some("m1".into()),
            attributes: BTreeMap::new(),
        };
        let obs = Observed {
            received: Some(vec![bare]),
            ..Observed::default()
        };
        assert_eq!(check_step(&expect, &obs), Check::Pass);
        let obs = Observed {
            queue_attributes: Some(BTreeMap::from([(
                "SentTimestamp".to_string(),
                "1".to_string(),
            )])),
            ..Observed::default()
        };
        match check_step(&expect, &obs) {
            Check::Fail(f) => assert_eq!(
                f,
                vec!["queue: expected no attribute SentTimestamp, got SentTimestamp = 1"]
            ),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_slow_call_fails_within() {
        let expect = StepExpect {
            within: Some(std::time::Duration::from_secs(3)),
            ..StepExpect::default()
        };
        let fast = Observed {
            elapsed: Some(std::time::Duration::from_millis(1200)),
            ..Observed::default()
        };
        assert_eq!(check_step(&expect, &fast), Check::Pass);
        let slow = Observed {
            elapsed: Some(std::time::Duration::from_millis(5000)),
            ..Observed::default()
        };
        assert!(matches!(check_step(&expect, &slow), Check::Fail(_)));
    }

    #[test]
    fn a_batch_without_expectations_must_not_half_fail() {
        let batch = BatchOutcome {
            successful: vec!["e1".into()],
            failed: vec![("e2".into(), "ReceiptHandleIsInvalid".into(), true)],
        };
        let obs = Observed {
            batch: Some(batch.clone()),
            ..Observed::default()
        };
        assert!(matches!(
            check_step(&StepExpect::default(), &obs),
            Check::Fail(_)
        ));
        let counted = StepExpect {
            successful: Some(1),
            ..StepExpect::default()
        };
        let obs = Observed {
            batch: Some(batch),
            ..Observed::default()
        };
        assert_eq!(check_step(&counted, &obs), Check::Pass);
    }

    #[test]
    fn policy_sids_are_the_policys_statement_sids_in_any_order() {
        let expect = StepExpect {
            policy_sids: Some(vec!["b".into(), "a".into()]),
            ..StepExpect::default()
        };
        let with = |policy: &str| Observed {
            queue_attributes: Some(BTreeMap::from([("Policy".to_string(), policy.to_string())])),
            ..Observed::default()
        };
        let two = r#"{"Version":"2012-10-17","Statement":[{"Sid":"a"},{"Sid":"b"}]}"#;
        assert_eq!(check_step(&expect, &with(two)), Check::Pass);
        let one = r#"{"Statement":{"Sid":"a","Effect":"Allow"}}"#;
        match check_step(&expect, &with(one)) {
            Check::Fail(f) => assert_eq!(
                f,
                vec!["queue: expected Policy statements with Sids [b, a], got [a]"]
            ),
            other => panic!("{other:?}"),
        }
        match check_step(&expect, &with("not json")) {
            Check::Fail(f) => assert!(f[0].contains("not a policy document"), "{f:?}"),
            other => panic!("{other:?}"),
        }
        let none = Observed {
            queue_attributes: Some(BTreeMap::new()),
            ..Observed::default()
        };
        match check_step(&expect, &none) {
            Check::Fail(f) => assert_eq!(f, vec!["queue: attribute Policy missing"]),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn shapes_match_patterns_and_bounds_and_never_quote_a_sender_id() {
        let expect = StepExpect {
            attribute_shapes: BTreeMap::from([
                (
                    "SequenceNumber".to_string(),
                    AttrShape {
                        matches: Some(
                            crate::suite::model::Pattern::new("^[1-9][0-9]{19,}$").unwrap(),
                        ),
                        above: Some("18446744073709551615".into()),
                    },
                ),
                (
                    "SenderId".to_string(),
                    AttrShape {
                        matches: Some(
                            crate::suite::model::Pattern::new("^A(IDA|ROA)[A-Z0-9]{17}(:.+)?$")
                                .unwrap(),
                        ),
                        above: None,
                    },
                ),
            ]),
            ..StepExpect::default()
        };
        let msg = |seq: &str, sender: &str| ReceivedMsg {
            label: Some("m1".into()),
            attributes: BTreeMap::from([
                ("SequenceNumber".to_string(), seq.to_string()),
                ("SenderId".to_string(), sender.to_string()),
            ]),
        };
        let obs = |m| Observed {
            received: Some(vec![m]),
            ..Observed::default()
        };
        let user = msg("18849496460467696128", "AIDAIT2UOQQY3AUEKVGXU");
        assert_eq!(check_step(&expect, &obs(user)), Check::Pass);
        let role = msg(
            "18849496460467696128",
            "AROAIT2UOQQY3AUEKVGXU:deploy@example.com",
        );
        assert_eq!(check_step(&expect, &obs(role)), Check::Pass);
        let counter = msg("10000000000000000001", "123456789012");
        match check_step(&expect, &obs(counter)) {
            Check::Fail(f) => assert_eq!(
                f,
                vec![
                    "m1: expected SenderId to match `^A(IDA|ROA)[A-Z0-9]{17}(:.+)?$`, got a value of 12 characters (digits)",
                    "m1: expected SequenceNumber to be a decimal integer above 18446744073709551615, got 10000000000000000001",
                ]
            ),
            other => panic!("{other:?}"),
        }
        let bare = ReceivedMsg {
            label: Some("m1".into()),
            attributes: BTreeMap::new(),
        };
        match check_step(&expect, &obs(bare)) {
            Check::Fail(f) => assert_eq!(f.len(), 2, "{f:?}"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn decimals_compare_at_any_size() {
        assert!(decimal_above(
            "18446744073709551616",
            "18446744073709551615"
        ));
        assert!(!decimal_above(
            "18446744073709551615",
            "18446744073709551615"
        ));
        assert!(decimal_above(
            "100000000000000000000",
            "99999999999999999999"
        ));
        assert!(!decimal_above("0099", "100"));
        assert!(decimal_above("101", "100"));
        assert!(!decimal_above("", "0"));
        assert!(!decimal_above("12a", "1"));
        assert!(decimal_above("1", "0"));
    }

    #[test]
    fn integrity_problems_always_fail() {
        let obs = Observed {
            integrity: vec!["MD5OfMessageBody does not match the body".into()],
            ..Observed::default()
        };
        assert!(matches!(
            check_step(&StepExpect::default(), &obs),
            Check::Fail(_)
        ));
    }

    #[test]
    fn a_reply_form_is_checked_and_an_unrecorded_one_is_inconclusive() {
        let expect = StepExpect {
            reply: Some(crate::suite::model::Spanned {
                value: crate::suite::model::ReplyFormat::Json,
                pos: Default::default(),
            }),
            ..StepExpect::default()
        };
        let seen = |reply| Observed {
            status: Some(200),
            reply,
            ..Observed::default()
        };
        assert_eq!(check_step(&expect, &seen(Some("json"))), Check::Pass);
        assert_eq!(
            check_step(&expect, &seen(Some("xml"))),
            Check::Fail(vec!["expected the reply in json, it came in xml".into()])
        );
        assert!(matches!(
            check_step(&expect, &seen(None)),
            Check::Inconclusive(_)
        ));
    }

    #[test]
    fn an_answer_the_steps_own_fault_took_leaves_every_answer_check_unchecked() {
        let injected = CallError {
            kind: FailureKind::Throttled,
            code: Some("ThrottlingException".into()),
            error_type: None,
            status: Some(400),
            sender_fault: Some(true),
            message: None,
            injected: Some(crate::evidence::format::FaultEvidence {
                kind: "throttle".into(),
                scope: "step".into(),
                delay_ms: None,
                status: Some(400),
                code: Some("ThrottlingException".into()),
            }),
            denied: false,
        };
        let obs = Observed {
            error: Some(&injected),
            status: Some(400),
            ..Observed::default()
        };
        assert_eq!(check_step(&StepExpect::default(), &obs), Check::Pass);
        for expect in [
            StepExpect {
                reply: Some(crate::suite::model::Spanned {
                    value: crate::suite::model::ReplyFormat::Xml,
                    pos: Default::default(),
                }),
                ..StepExpect::default()
            },
            StepExpect {
                absent: vec!["Policy".into()],
                ..StepExpect::default()
            },
            StepExpect {
                message_contains: Some("x".into()),
                ..StepExpect::default()
            },
        ] {
            assert!(
                matches!(check_step(&expect, &obs), Check::Inconclusive(_)),
                "{expect:?}"
            );
        }
    }
}
