//! The numbers a suite sends to SQS — a receive's `visibility_timeout`, a send's `delay`, a
//! queue's `retention` — read against the range SQS accepts for them ([`sqsprobe_facts::sqs::limits`])
//! and against what a request can carry.
//!
//! A value outside SQS's range is refused where it is written, unless the step tests SQS's
//! refusal of it (its `expect:` names an error, a status of 400 or more, or failed batch
//! entries): the conformance suites send `visibility_timeout: 43201s` on purpose. A queue under
//! `queues:` is created by the harness before the steps, so its values are always checked. A
//! value beyond what a request can carry at all — more than a 32-bit number
//! ([`WIRE_MAX`]), a body larger than [`MAX_BUILT_BODY`] — is refused always: the runner could
//! only send some other value.

use std::time::Duration;

use crate::suite::yaml::{Node, Reader};
use sqsprobe_facts::duration;
use sqsprobe_facts::sqs::limits::{self, Range, Unit, WIRE_MAX};

/// The largest body the runner builds for `body_size` (twice the largest SQS accepts: enough
/// to test the refusal of one byte too many, and small enough to build in memory).
pub(super) const MAX_BUILT_BODY: i64 = 2 * limits::MESSAGE_BODY.max;

/// Where a value is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Site {
    /// In a step; `refusal_tested` when the step's `expect:` expects SQS to refuse it.
    Step { refusal_tested: bool },
    /// In a queue definition under `queues:`, which the harness creates before the steps.
    Queues,
}

/// How the value travels.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Carried {
    /// As a request parameter: a 32-bit number.
    Parameter,
    /// As a queue attribute: text, whatever its size.
    Attribute,
}

/// A whole number of seconds SQS takes as `range` (`1500ms` is refused: the wire has no
/// milliseconds here).
pub(super) fn seconds(
    r: &mut Reader,
    node: &Node,
    what: &str,
    range: &Range,
    site: Site,
    carried: Carried,
) -> Option<Duration> {
    let d = r.seconds(node, what)?;
    let secs = i64::try_from(d.as_secs()).unwrap_or(i64::MAX);
    check(r, node, what, range, site, carried, secs).then_some(d)
}

/// A whole number SQS takes as `range`.
pub(super) fn number(
    r: &mut Reader,
    node: &Node,
    what: &str,
    range: &Range,
    site: Site,
    carried: Carried,
) -> Option<i64> {
    let n = r.int(node, what, i64::MIN, i64::MAX)?;
    check(r, node, what, range, site, carried, n).then_some(n)
}

/// A `body_size`: a body of that many bytes, within SQS's range unless the step tests the
/// refusal, and never larger than [`MAX_BUILT_BODY`].
pub(super) fn body_size(r: &mut Reader, node: &Node, site: Site) -> Option<usize> {
    let n = r.int(node, "`body_size`", 0, i64::MAX)?;
    if n > MAX_BUILT_BODY {
        r.error_hint(
            node,
            format!("`body_size` is {n} bytes, more than the {MAX_BUILT_BODY} the runner builds"),
            one_past(&limits::MESSAGE_BODY),
        );
        return None;
    }
    check(
        r,
        node,
        "`body_size`",
        &limits::MESSAGE_BODY,
        site,
        Carried::Attribute,
        n,
    )
    .then(|| usize::try_from(n).ok())
    .flatten()
}

/// Reports `value` of `what` when the wire cannot carry it, or when SQS would refuse it and
/// the step does not test that; true when it is fine.
fn check(
    r: &mut Reader,
    node: &Node,
    what: &str,
    range: &Range,
    site: Site,
    carried: Carried,
    value: i64,
) -> bool {
    let shown = show(value, range.unit);
    if carried == Carried::Parameter && !(-WIRE_MAX - 1..=WIRE_MAX).contains(&value) {
        r.error_hint(
            node,
            format!(
                "{what} is {shown}, which no request can carry: {} is a 32-bit number (at most {})",
                range.name,
                show(WIRE_MAX, range.unit)
            ),
            one_past(range),
        );
        return false;
    }
    if range.contains(value) {
        return true;
    }
    let hint = match site {
        Site::Step {
            refusal_tested: true,
        } => return true,
        Site::Step {
            refusal_tested: false,
        } => format!(
            "to test that SQS refuses it, expect the refusal: `expect: {{error: {}}}`",
            range.refused_with
        ),
        Site::Queues => format!(
            "the harness creates the queues under `queues:` before the steps; to test that SQS \
             refuses it, create the queue in a `create-queue` step with `expect: {{error: {}}}`",
            range.refused_with
        ),
    };
    r.error_hint(
        node,
        format!(
            "{what} is {shown}, outside what SQS accepts ({}, {})",
            range.describe(),
            range.page()
        ),
        hint,
    );
    false
}

/// `43201s`, `1048577 bytes`, `11`.
fn show(value: i64, unit: Unit) -> String {
    match (unit, u64::try_from(value)) {
        (Unit::Seconds, Ok(s)) => duration::format(Duration::from_secs(s)),
        (Unit::Bytes, _) => format!("{value} bytes"),
        _ => value.to_string(),
    }
}

/// The hint for a value no request can carry: SQS's range, and the value one past its end,
/// which is enough to test the refusal.
fn one_past(range: &Range) -> String {
    let past = show(range.max + 1, range.unit);
    format!(
        "SQS accepts {}; one past the end ({past}) is enough to test its refusal",
        range.describe()
    )
}
