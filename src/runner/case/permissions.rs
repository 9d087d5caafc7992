//! AddPermission and RemovePermission steps. `self` in `accounts:` is the account of the queue's
//! own ARN: the caller's account, learnt without STS and never written to a suite or evidence
//! (call rows carry no request parameters; error messages pass the masker).

use super::calls::Caller;
use super::lifecycle;
use super::queue_table::QueueTable;
use sqsprobe_core::classify::Check;
use sqsprobe_core::suite::model::{Account, AddPermission, Spanned, Step};

/// `add-permission`: AddPermission, `self` in `accounts:` read from the queue's ARN.
pub(super) async fn add_permission(
    sqs: &mut Caller,
    queues: &mut QueueTable,
    step: &Step,
    p: &AddPermission,
) -> Result<Check, String> {
    let url = queues.url(&p.queue.value)?;
    let mut accounts = Vec::with_capacity(p.accounts.len());
    for a in &p.accounts {
        accounts.push(match a {
            Account::Caller => own_account(sqs, queues, &p.queue.value).await?,
            Account::Literal(id) => id.clone(),
        });
    }
    let client = sqs.client();
    one_call!(
        sqs,
        queues,
        step,
        "AddPermission",
        Some(&p.queue.value),
        client
            .add_permission()
            .queue_url(&url)
            .label(&p.label)
            .set_aws_account_ids(Some(accounts))
            .set_actions(Some(p.actions.clone()))
    )
}

/// `remove-permission`: RemovePermission.
pub(super) async fn remove_permission(
    sqs: &mut Caller,
    queues: &QueueTable,
    step: &Step,
    queue: &Spanned<String>,
    label: &str,
) -> Result<Check, String> {
    let url = queues.url(&queue.value)?;
    let client = sqs.client();
    one_call!(
        sqs,
        queues,
        step,
        "RemovePermission",
        Some(&queue.value),
        client.remove_permission().queue_url(&url).label(label)
    )
}

/// The account that owns queue `label`: the fifth field of its ARN
/// (`arn:aws:sqs:<region>:<account>:<name>`), which is the caller's for an owned queue.
async fn own_account(
    sqs: &mut Caller,
    queues: &mut QueueTable,
    label: &str,
) -> Result<String, String> {
    lifecycle::ensure_arn(sqs, queues, label).await;
    let arn = queues.arn(label)?;
    sqsprobe_facts::sqs::arn::parse(&arn)
        .map(|a| a.account)
        .filter(|a| !a.is_empty())
        .map(str::to_string)
        .ok_or_else(|| format!("queue `{label}` has an ARN without an account"))
}
