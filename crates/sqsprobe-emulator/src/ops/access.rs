//! Queue policies: the explicit Deny statements of a queue's `Policy` attribute, enforced.
//!
//! The emulator models no IAM: every caller is the account itself, and everything is allowed
//! unless the queue's policy explicitly denies it. "An explicit deny overrides any allow"
//! (SQS developer guide, sqs-creating-custom-policies-evaluation-logic), so that is the one
//! rule worth enforcing offline: it is what `deny:` steps set (`docs/chaos.md`). A statement is
//! enforced when its `Effect` is `Deny`, its `Principal` names everyone (`*`) or this account
//! (its id, or an ARN in it), its `Action` matches the operation's IAM action
//! ([`sqsprobe_facts::sqs::iam`]: `sqs:DeleteMessage` also for DeleteMessageBatch; case-insensitive, `*`
//! wildcards) and its `Resource` matches the queue's ARN (or is absent). Statements with a
//! `Condition`, `NotPrincipal`, `NotAction` or `NotResource` are not evaluated — the emulator
//! cannot judge them — and deny nothing. A denied request is answered 403 `AccessDenied`.

use serde_json::Value;

use crate::model::store::Emulator;
use crate::ops::context::RequestContext;
use crate::support::errors::{SqsError, SqsResult};
use crate::support::input::Input;

/// Refuses `operation` when the policy of the queue it addresses explicitly denies it. The
/// queue is found as its operation would find it: by `QueueUrl` in the URL's region (else the
/// request's), or by `QueueName` in the request's region for GetQueueUrl.
pub(crate) fn check(
    emu: &Emulator,
    operation: &str,
    input: &Input<'_>,
    ctx: &RequestContext,
) -> SqsResult<()> {
    if !emu.policy_seen() {
        // No queue has ever taken a policy: nothing can deny this request.
        return Ok(());
    }
    // A QueueUrl or QueueName of another type is the operation's to refuse.
    let url = input.string("QueueUrl");
    let key = match (&url, input.string("QueueName")) {
        (Ok(Some(_)), _) => match ctx.queue_key(emu, input) {
            Ok(key) => key,
            Err(_) => return Ok(()),
        },
        (Ok(None), Ok(Some(name))) if operation == "GetQueueUrl" => emu.arn(&ctx.region, name),
        _ => return Ok(()),
    };
    let state = emu.read();
    let Ok(queue) = state.lock_queue(&key) else {
        // The operation itself answers for a queue that does not exist.
        return Ok(());
    };
    let Some(policy) = &queue.settings.policy else {
        return Ok(());
    };
    if denies(policy, operation, &queue.arn, &emu.config.account_id) {
        let url = match url {
            Ok(Some(url)) => url.to_owned(),
            _ => queue.arn.clone(),
        };
        return Err(SqsError::access_denied(&url));
    }
    Ok(())
}

/// Whether `policy` (a JSON policy document) explicitly denies `sqs:<operation>` on `arn` to a
/// caller of `account`, by the rules of this module. A document that does not parse denies
/// nothing.
pub fn denies(policy: &str, operation: &str, arn: &str, account: &str) -> bool {
    let Ok(doc) = serde_json::from_str::<Value>(policy) else {
        return false;
    };
    let statements: Vec<&Value> = match doc.get("Statement") {
        Some(Value::Array(items)) => items.iter().collect(),
        Some(one @ Value::Object(_)) => vec![one],
        _ => return false,
    };
    let action = sqsprobe_facts::sqs::iam::action_for(operation);
    statements.into_iter().any(|s| {
        let evaluable = ["Condition", "NotPrincipal", "NotAction", "NotResource"]
            .iter()
            .all(|k| s.get(k).is_none());
        evaluable
            && s.get("Effect").and_then(Value::as_str) == Some("Deny")
            && s.get("Principal").is_some_and(|p| names_caller(p, account))
            && strings(s.get("Action"))
                .iter()
                .any(|a| glob(a, &action, true))
            && s.get("Resource")
                .is_none_or(|r| strings(Some(r)).iter().any(|x| glob(x, arn, false)))
    })
}

/// Whether a `Principal` names every caller, or this account.
fn names_caller(principal: &Value, account: &str) -> bool {
    let aws = match principal {
        Value::String(s) => return s == "*",
        Value::Object(map) => map.get("AWS"),
        _ => None,
    };
    strings(aws)
        .iter()
        .any(|p| p == "*" || p == account || p.starts_with(&format!("arn:aws:iam::{account}:")))
}

/// A string or a list of strings (anything else: none).
fn strings(v: Option<&Value>) -> Vec<String> {
    match v {
        Some(Value::String(s)) => vec![s.clone()],
        Some(Value::Array(items)) => items
            .iter()
            .filter_map(|i| i.as_str().map(str::to_owned))
            .collect(),
        _ => Vec::new(),
    }
}

/// IAM's wildcard match: `*` any run of characters, `?` one; actions ignore case.
fn glob(pattern: &str, text: &str, ignore_case: bool) -> bool {
    let (p, t): (Vec<char>, Vec<char>) = if ignore_case {
        (
            pattern.to_ascii_lowercase().chars().collect(),
            text.to_ascii_lowercase().chars().collect(),
        )
    } else {
        (pattern.chars().collect(), text.chars().collect())
    };
    // Iterative matching with one backtrack point: linear enough for policy-sized strings.
    let (mut pi, mut ti) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while ti < t.len() {
        if pi < p.len() && (p[pi] == '?' || p[pi] == t[ti]) {
            pi += 1;
            ti += 1;
        } else if pi < p.len() && p[pi] == '*' {
            star = Some((pi, ti));
            pi += 1;
        } else if let Some((sp, st)) = star {
            pi = sp + 1;
            ti = st + 1;
            star = Some((sp, st + 1));
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|c| *c == '*')
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::{call, create, emulator, receive, send};
    use serde_json::json;

    const ARN: &str = "arn:aws:sqs:us-east-1:000000000000:q";
    const ACCOUNT: &str = "000000000000";

    fn deny(statement: Value) -> String {
        json!({"Version": "2012-10-17", "Statement": [statement]}).to_string()
    }

    #[test]
    fn explicit_denies_match_action_principal_and_resource() {
        let base = json!({"Effect": "Deny", "Principal": "*", "Action": "sqs:DeleteMessage", "Resource": ARN});
        assert!(denies(&deny(base.clone()), "DeleteMessage", ARN, ACCOUNT));
        assert!(!denies(&deny(base.clone()), "ReceiveMessage", ARN, ACCOUNT));
        assert!(!denies(
            &deny(base),
            "DeleteMessage",
            "arn:aws:sqs:us-east-1:000000000000:other",
            ACCOUNT
        ));
        for action in [
            json!("sqs:*"),
            json!("*"),
            json!(["sqs:Send*", "SQS:deletemessage"]),
        ] {
            let s = json!({"Effect": "Deny", "Principal": {"AWS": "*"}, "Action": action});
            assert!(denies(&deny(s), "DeleteMessage", ARN, ACCOUNT), "{action}");
        }
        for principal in [
            json!({"AWS": ACCOUNT}),
            json!({"AWS": ["arn:aws:iam::000000000000:root"]}),
        ] {
            let s =
                json!({"Effect": "Deny", "Principal": principal, "Action": "sqs:DeleteMessage"});
            assert!(denies(&deny(s), "DeleteMessage", ARN, ACCOUNT));
        }
        let other =
            json!({"Effect": "Deny", "Principal": {"AWS": "123456789012"}, "Action": "sqs:*"});
        assert!(!denies(&deny(other), "DeleteMessage", ARN, ACCOUNT));
    }

    #[test]
    fn allows_conditions_and_junk_deny_nothing() {
        let allow = json!({"Effect": "Allow", "Principal": "*", "Action": "sqs:*"});
        assert!(!denies(&deny(allow), "DeleteMessage", ARN, ACCOUNT));
        let conditional = json!({"Effect": "Deny", "Principal": "*", "Action": "sqs:*",
            "Condition": {"IpAddress": {"aws:SourceIp": "10.0.0.0/8"}}});
        assert!(!denies(&deny(conditional), "DeleteMessage", ARN, ACCOUNT));
        assert!(!denies("not json", "DeleteMessage", ARN, ACCOUNT));
        assert!(!denies("{}", "DeleteMessage", ARN, ACCOUNT));
        let single = json!({"Statement": {"Effect": "Deny", "Principal": "*", "Action": "sqs:DeleteMessage"}});
        assert!(denies(&single.to_string(), "DeleteMessage", ARN, ACCOUNT));
    }

    #[test]
    fn globs_match_like_iam() {
        assert!(glob("sqs:Delete*", "sqs:DeleteMessageBatch", false));
        assert!(glob("a?c", "abc", false));
        assert!(glob("*", "", false));
        assert!(!glob("sqs:Delete", "sqs:DeleteMessage", false));
        assert!(glob("arn:aws:sqs:*:000000000000:*", ARN, false));
    }

    #[tokio::test(start_paused = true)]
    async fn a_denied_queue_answers_access_denied_until_the_policy_is_removed() {
        let emu = emulator();
        let url = create(&emu, "q", json!({})).await;
        send(&emu, &url, "a").await;
        let got = receive(&emu, &url, 1, json!({})).await;
        let policy = deny(
            json!({"Effect": "Deny", "Principal": "*", "Action": ["sqs:DeleteMessage"], "Resource": ARN}),
        );
        call(
            &emu,
            "SetQueueAttributes",
            json!({"QueueUrl": url, "Attributes": {"Policy": policy}}),
        )
        .await
        .unwrap();
        let delete = json!({"QueueUrl": url, "ReceiptHandle": got[0]["ReceiptHandle"]});
        let err = call(&emu, "DeleteMessage", delete.clone())
            .await
            .unwrap_err();
        assert_eq!((err.code(), err.status()), ("AccessDenied", 403));
        assert!(err.message.contains("is denied"), "{}", err.message);
        // The batch form is authorized by the same action.
        let batch = json!({"QueueUrl": url, "Entries": [{"Id": "a", "ReceiptHandle": got[0]["ReceiptHandle"]}]});
        let err = call(&emu, "DeleteMessageBatch", batch).await.unwrap_err();
        assert_eq!(err.code(), "AccessDenied");
        // Other operations go on; the harness can always lift the deny.
        send(&emu, &url, "b").await;
        call(
            &emu,
            "SetQueueAttributes",
            json!({"QueueUrl": url, "Attributes": {"Policy": ""}}),
        )
        .await
        .unwrap();
        call(&emu, "DeleteMessage", delete).await.unwrap();
    }
}
