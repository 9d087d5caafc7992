//! AddPermission and RemovePermission: statements in the queue's `Policy` attribute.
//!
//! Each permission is one statement whose `Sid` is its label, in the policy document AWS
//! writes (`Version` 2008-10-17 — the older policy language version, not the 2012-10-17 a
//! hand-written policy carries —, `Id` `<queue arn>/SQSDefaultPolicy`, principals
//! `arn:aws:iam::<account>:root`, actions `SQS:<Action>`, the queue as `Resource`)
//! (LocalStack AWS-validated `test_sqs_permission_lifecycle`, recorded 2024-04-30). Policies are stored and read
//! back, never evaluated: the emulator does not model IAM.

use serde_json::{Map, Value, json};

use crate::model::store::Emulator;
use crate::ops::context::RequestContext;
use crate::support::errors::{SqsError, SqsResult};
use crate::support::input::Input;

/// Whether a permission may grant `action` (API_AddPermission, `ActionName`): `*`, or an
/// operation the table marks [`sqsprobe_facts::sqs::operations::Operation::grantable`].
fn grantable(action: &str) -> bool {
    action == "*" || sqsprobe_facts::sqs::operations::by_name(action).is_some_and(|o| o.grantable)
}
/// Most actions in one AddPermission (moto `test_add_permission_errors`: 8 is OverLimit).
const MAX_ACTIONS: usize = 7;

fn label(input: &Input<'_>) -> SqsResult<String> {
    let label = input.required_string("Label")?;
    if label.len() > 80
        || !label
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
    {
        return Err(SqsError::invalid_value(
            label,
            "Label",
            "Can only include alphanumeric characters, hyphens, or underscores. 1 to 80 in length",
        ));
    }
    Ok(label.to_owned())
}

/// One value, or a list of them when there are several, as AWS writes policy members.
fn one_or_many(values: Vec<String>) -> Value {
    match <[String; 1]>::try_from(values) {
        Ok([one]) => Value::String(one),
        Err(many) => Value::Array(many.into_iter().map(Value::String).collect()),
    }
}

/// The statements of a stored policy; a policy that is not such a document starts afresh.
fn statements(policy: Option<&str>) -> Vec<Value> {
    policy
        .and_then(|p| serde_json::from_str::<Value>(p).ok())
        .and_then(|doc| doc.get("Statement").and_then(Value::as_array).cloned())
        .unwrap_or_default()
}

fn document(arn: &str, statements: Vec<Value>) -> String {
    json!({
        "Version": "2008-10-17",
        "Id": format!("{arn}/SQSDefaultPolicy"),
        "Statement": statements,
    })
    .to_string()
}

fn has_label(statements: &[Value], label: &str) -> bool {
    statements
        .iter()
        .any(|s| s.get("Sid").and_then(Value::as_str) == Some(label))
}

pub(crate) fn add_permission(
    emu: &Emulator,
    input: Input<'_>,
    ctx: &RequestContext,
) -> SqsResult<Value> {
    let key = ctx.queue_key(emu, &input)?;
    let label = label(&input)?;
    let accounts = input.string_list("AWSAccountIds")?;
    if accounts.is_empty() {
        return Err(SqsError::missing_parameter("AWSAccountIds"));
    }
    let actions = input.string_list("Actions")?;
    if actions.is_empty() {
        return Err(SqsError::missing_parameter("Actions"));
    }
    if actions.len() > MAX_ACTIONS {
        return Err(SqsError::over_limit(format!(
            "{} Actions were found, maximum allowed is {MAX_ACTIONS}.",
            actions.len()
        )));
    }
    if let Some(bad) = actions.iter().find(|a| !grantable(a)) {
        return Err(SqsError::invalid_value(
            format!("SQS:{bad}"),
            "ActionName",
            "Only the queue owner is allowed to invoke this action.",
        ));
    }
    if let Some(bad) = accounts
        .iter()
        .find(|a| a.len() != 12 || !a.bytes().all(|b| b.is_ascii_digit()))
    {
        return Err(SqsError::invalid_value(
            bad,
            "AWSAccountIds",
            "An AWS account ID must be 12 digits.",
        ));
    }
    let state = emu.read();
    let (mut queue, now) = emu.lock_queue(&state, &key)?;
    let mut statements = statements(queue.settings.policy.as_deref());
    if has_label(&statements, &label) {
        return Err(SqsError::invalid_value(&label, "Label", "Already exists."));
    }
    let mut statement = Map::new();
    statement.insert("Sid".into(), Value::String(label));
    statement.insert("Effect".into(), json!("Allow"));
    let principals = accounts
        .iter()
        .map(|a| format!("arn:aws:iam::{a}:root"))
        .collect();
    statement.insert(
        "Principal".into(),
        json!({ "AWS": one_or_many(principals) }),
    );
    let actions = actions.iter().map(|a| format!("SQS:{a}")).collect();
    statement.insert("Action".into(), one_or_many(actions));
    statement.insert("Resource".into(), Value::String(queue.arn.clone()));
    statements.push(Value::Object(statement));
    queue.settings.policy = Some(document(&queue.arn, statements));
    queue.modified_ms = now;
    Ok(json!({}))
}

pub(crate) fn remove_permission(
    emu: &Emulator,
    input: Input<'_>,
    ctx: &RequestContext,
) -> SqsResult<Value> {
    let key = ctx.queue_key(emu, &input)?;
    let label = input.required_string("Label")?;
    let state = emu.read();
    let (mut queue, now) = emu.lock_queue(&state, &key)?;
    let mut statements = statements(queue.settings.policy.as_deref());
    if !has_label(&statements, label) {
        return Err(SqsError::invalid_value(
            label,
            "Label",
            // AWS's recorded text (test_sqs_permission_lifecycle); moto's adds "on existing
            // policy", which is not what AWS says.
            "can't find label.",
        ));
    }
    statements.retain(|s| s.get("Sid").and_then(Value::as_str) != Some(label));
    // Removing the last statement removes the attribute (sqslite's and moto's reading; the
    // AWS recording is not stored with its Policy text here: docs/emulator.md).
    queue.settings.policy = if statements.is_empty() {
        None
    } else {
        Some(document(&queue.arn, statements))
    };
    queue.modified_ms = now;
    Ok(json!({}))
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use crate::test_support::{call, create, emulator};

    async fn policy(
        emu: &std::sync::Arc<crate::model::store::Emulator>,
        url: &str,
    ) -> Option<Value> {
        let out = call(
            emu,
            "GetQueueAttributes",
            json!({"QueueUrl": url, "AttributeNames": ["Policy"]}),
        )
        .await
        .unwrap();
        out["Attributes"]["Policy"]
            .as_str()
            .map(|p| serde_json::from_str(p).unwrap())
    }

    #[tokio::test(start_paused = true)]
    async fn permission_lifecycle() {
        let emu = emulator();
        let url = create(&emu, "q", json!({})).await;
        let add = |label: &str, accounts: Value| json!({"QueueUrl": url, "Label": label, "AWSAccountIds": accounts, "Actions": ["ReceiveMessage"]});
        call(
            &emu,
            "AddPermission",
            add("p1", json!(["000000000000", "668614515564"])),
        )
        .await
        .unwrap();
        let doc = policy(&emu, &url).await.unwrap();
        assert_eq!(doc["Version"], "2008-10-17");
        assert_eq!(
            doc["Id"],
            "arn:aws:sqs:us-east-1:000000000000:q/SQSDefaultPolicy"
        );
        let statement = &doc["Statement"][0];
        assert_eq!(statement["Sid"], "p1");
        assert_eq!(
            statement["Principal"]["AWS"],
            json!([
                "arn:aws:iam::000000000000:root",
                "arn:aws:iam::668614515564:root"
            ])
        );
        assert_eq!(statement["Action"], "SQS:ReceiveMessage");
        assert_eq!(
            statement["Resource"],
            "arn:aws:sqs:us-east-1:000000000000:q"
        );
        let err = call(&emu, "AddPermission", add("p1", json!(["668614515564"])))
            .await
            .unwrap_err();
        assert_eq!(err.code(), "InvalidParameterValue");
        assert_eq!(
            err.message,
            "Value p1 for parameter Label is invalid. Reason: Already exists."
        );
        call(&emu, "AddPermission", add("p2", json!(["000000000000"])))
            .await
            .unwrap();
        assert_eq!(
            policy(&emu, &url).await.unwrap()["Statement"][1]["Principal"]["AWS"],
            "arn:aws:iam::000000000000:root"
        );
        let remove = |label: &str| json!({"QueueUrl": url, "Label": label});
        call(&emu, "RemovePermission", remove("p1")).await.unwrap();
        assert_eq!(
            policy(&emu, &url).await.unwrap()["Statement"]
                .as_array()
                .unwrap()
                .len(),
            1
        );
        call(&emu, "RemovePermission", remove("p2")).await.unwrap();
        assert_eq!(policy(&emu, &url).await, None);
        let err = call(&emu, "RemovePermission", remove("p2"))
            .await
            .unwrap_err();
        assert_eq!(
            err.message,
            "Value p2 for parameter Label is invalid. Reason: can't find label."
        );
    }
}
