//! Chaos: `faults:` on a case, `fault:` beside a step, and the `deny` step.

use saphyr::YamlData;

use super::input::StepInput;
use super::scope::Scope;
use crate::suite::model::*;
use crate::suite::yaml::{Node, Reader, pos};
use sqsprobe_facts::text::suggest::suggest;

const FAULT_KEYS: &[&str] = &[
    "kind",
    "delay",
    "status",
    "code",
    "action",
    "probability",
    "after",
    "times",
];

/// The `kind:` names, in the order the docs list them.
const KINDS: &[&str] = &[
    "latency",
    "timeout",
    "throttle",
    "error",
    "reset",
    "lose-response",
];

/// Keys that belong to one kind only.
const KIND_KEYS: &[(&str, &str)] = &[("delay", "latency"), ("status", "error"), ("code", "error")];

/// IAM actions a `deny` may never list: the harness needs them to lift the deny and to
/// delete the queue at teardown.
const TEARDOWN_ACTIONS: &[&str] = &["sqs:SetQueueAttributes", "sqs:DeleteQueue"];

/// Where a fault is written, which decides what its `action` may be.
#[derive(Debug, Clone, Copy)]
pub(super) enum FaultSite {
    /// Under `faults:`: `action` is required and names any SQS operation.
    Case,
    /// Beside a step: `action` defaults to the step's own calls and must be one of them.
    Step {
        keyword: &'static str,
        calls: &'static [&'static str],
    },
}

/// One fault mapping; `owner` is where errors about the fault as a whole point.
pub(super) fn decode_fault(
    r: &mut Reader,
    owner: &Node,
    node: &Node,
    site: FaultSite,
) -> Option<Fault> {
    let f = r.fields(owner, node, "a fault", FAULT_KEYS)?;
    if let FaultSite::Step { keyword, calls: [] } = site {
        r.error_hint(
            owner,
            format!(
                "{} makes no SQS call for a fault to hit",
                super::input::a_step(keyword)
            ),
            "put the fault on a step that calls SQS",
        );
        return None;
    }
    let kind_node = match f.get("kind") {
        Some(n) => n,
        None => {
            if f.missing("kind") {
                r.error_hint(
                    owner,
                    "a fault needs `kind`",
                    format!("kinds: {}", KINDS.join(", ")),
                );
            }
            return None;
        }
    };
    let name = r.string(kind_node, "`kind` (a fault kind)")?;
    if !KINDS.contains(&name.as_str()) {
        r.error_hint(
            kind_node,
            format!("unknown fault kind `{name}`"),
            suggest(&name, KINDS),
        );
        return None;
    }
    let mut ok = true;
    for (key, only) in KIND_KEYS {
        if name != *only
            && let Some(k) = f.key(key)
        {
            r.error_hint(
                k,
                format!("`{key}` does not apply to a `{name}` fault"),
                format!("`{key}` belongs to `{only}` faults"),
            );
            ok = false;
        }
    }
    let kind = match name.as_str() {
        "latency" => {
            let Some(n) = f.get("delay") else {
                if f.missing("delay") {
                    r.error_hint(
                        owner,
                        "a `latency` fault needs `delay`",
                        "e.g. `{kind: latency, delay: 2s}`",
                    );
                }
                return None;
            };
            let delay = r.duration(n, "`delay`")?;
            if delay.is_zero() {
                r.error(n, "`delay` must be longer than 0ms");
                return None;
            }
            FaultKind::Latency { delay }
        }
        "error" => {
            let Some(n) = f.get("status") else {
                if f.missing("status") {
                    r.error_hint(
                        owner,
                        "an `error` fault needs `status`",
                        "e.g. `{kind: error, status: 500, code: InternalError}`",
                    );
                }
                return None;
            };
            let status = r.int(n, "`status`", 400, 599)? as u16;
            let code = match f.get("code") {
                Some(n) => Some(r.nonempty(n, "`code` (an error code)")?),
                None => None,
            };
            FaultKind::Error { status, code }
        }
        "timeout" => FaultKind::Timeout,
        "throttle" => FaultKind::Throttle,
        "reset" => FaultKind::Reset,
        _ => FaultKind::LoseResponse,
    };
    let actions = match (f.get("action"), site) {
        (Some(n), _) => fault_actions(r, n, site),
        (None, FaultSite::Step { calls, .. }) => Some(
            calls
                .iter()
                .map(|c| Spanned {
                    value: c.to_string(),
                    pos: pos(owner),
                })
                .collect(),
        ),
        (None, FaultSite::Case) => {
            r.error_hint(
                owner,
                "a case-level fault needs `action`: the SQS operation whose calls it hits",
                "e.g. `action: ReceiveMessage`; a `fault:` beside a step hits that step's calls",
            );
            None
        }
    };
    let probability = match f.get("probability") {
        Some(n) => r.share(n, "`probability`"),
        None => Some(1.0),
    };
    let after = match f.get("after") {
        Some(n) => r
            .int(n, "`after`", 0, i64::from(u32::MAX))
            .map(|v| v as u32),
        None => Some(0),
    };
    let times = match f.get("times") {
        Some(n) => Some(r.int(n, "`times`", 1, i64::from(u32::MAX))? as u32),
        None => None,
    };
    let fault = Fault {
        pos: pos(owner),
        kind,
        actions: actions?,
        probability: probability?,
        after: after?,
        times,
    };
    ok.then_some(fault)
}

/// `action: ReceiveMessage` or a list of operations, checked against the site.
fn fault_actions(r: &mut Reader, n: &Node, site: FaultSite) -> Option<Vec<Spanned<String>>> {
    let items: Vec<&Node> = match &n.data {
        YamlData::Sequence(items) => items.iter().collect(),
        _ => vec![n],
    };
    if items.is_empty() {
        r.error(n, "`action` is empty");
        return None;
    }
    let mut out = Vec::new();
    let mut ok = true;
    for item in items {
        let Some(op) = r.string(item, "`action` (an SQS operation)") else {
            ok = false;
            continue;
        };
        if let Some(bare) = op.strip_prefix("sqs:")
            && SQS_OPERATIONS.contains(&bare)
        {
            r.error_hint(
                item,
                format!("`{op}` is an IAM action; `action` takes the operation name"),
                format!("write `{bare}`"),
            );
            ok = false;
            continue;
        }
        if !SQS_OPERATIONS.contains(&op.as_str()) {
            r.error_hint(
                item,
                format!("unknown SQS operation `{op}`"),
                suggest(&op, SQS_OPERATIONS),
            );
            ok = false;
            continue;
        }
        if let FaultSite::Step { keyword, calls } = site
            && !calls.contains(&op.as_str())
        {
            r.error_hint(
                item,
                format!("{} makes no `{op}` call", super::input::a_step(keyword)),
                format!(
                    "it calls {}; a case-level `faults:` entry selects the calls of other steps",
                    calls.join(", ")
                ),
            );
            ok = false;
            continue;
        }
        out.push(Spanned {
            value: op,
            pos: pos(item),
        });
    }
    ok.then_some(out)
}

/// `deny: {queue, actions: [sqs:<Operation>, ...], for: <duration>}`.
pub(super) fn decode_deny(r: &mut Reader, scope: &mut Scope, s: &StepInput) -> Option<Action> {
    let f = &s.fields;
    let list = f.get("actions")?;
    let items = r.seq(list, "IAM actions")?;
    if items.is_empty() {
        r.error_hint(
            list,
            "`actions` is empty",
            "e.g. `actions: [sqs:DeleteMessage]`",
        );
        return None;
    }
    let iam = sqsprobe_facts::sqs::iam::actions(SQS_OPERATIONS);
    let iam: Vec<&str> = iam.iter().map(String::as_str).collect();
    let mut actions = Vec::new();
    let mut ok = true;
    for item in items {
        let Some(a) = r.string(item, "an IAM action") else {
            ok = false;
            continue;
        };
        if SQS_OPERATIONS.contains(&a.as_str()) {
            r.error_hint(
                item,
                format!("`{a}` needs the `sqs:` prefix of an IAM action"),
                format!("write `sqs:{a}`"),
            );
            ok = false;
        } else if let Some(single) = a
            .strip_prefix("sqs:")
            .and_then(sqsprobe_facts::sqs::iam::batch_of)
        {
            r.error_hint(
                item,
                format!("`{a}` is not an IAM action: SQS authorizes the batch with `sqs:{single}`"),
                format!("write `sqs:{single}`; it denies both forms"),
            );
            ok = false;
        } else if !iam.contains(&a.as_str()) {
            r.error_hint(item, format!("unknown IAM action `{a}`"), suggest(&a, &iam));
            ok = false;
        } else if TEARDOWN_ACTIONS.contains(&a.as_str()) {
            r.error_hint(
                item,
                format!("`deny` cannot deny `{a}`: the harness needs it to lift the deny and tear the queue down"),
                "deny the operations under test, such as `sqs:DeleteMessage` or `sqs:ReceiveMessage`",
            );
            ok = false;
        } else {
            actions.push(Spanned {
                value: a,
                pos: pos(item),
            });
        }
    }
    let for_node = f.get("for")?;
    let duration = r.duration(for_node, "`for`");
    if duration.is_some_and(|d| d.is_zero()) {
        r.error(for_node, "`for` must be longer than 0ms");
        return None;
    }
    let queue = s.queue.clone()?;
    if !super::permission::policy_is_free(r, scope, &queue, true) {
        return None;
    }
    super::permission::note_deny(scope, &queue);
    let deny = Deny {
        queue,
        actions,
        duration: duration?,
    };
    ok.then_some(Action::Deny(deny))
}
