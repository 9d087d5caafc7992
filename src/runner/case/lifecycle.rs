//! A case's queues from creation to teardown: the free-name check, ownership (a queue is ours
//! only if this run created it), ARNs for redrive policies, and the deadline sweep.
//!
//! Each is a function of the case's [`Caller`] and its [`QueueTable`]: it calls SQS through the
//! one and tells the other what the answers were.

use super::calls::Caller;
use super::deny;
use super::queue_table::QueueTable;
use crate::runner::call::Recorded;
use crate::runner::queues::{Ownership, QueueChaos, create_attributes, create_tags, ownership};
use crate::runner::target::TargetKind;
use aws_sdk_sqs::operation::create_queue::CreateQueueOutput;
use aws_sdk_sqs::types::QueueAttributeName;
use sqsprobe_core::classify::FailureKind;
use sqsprobe_core::evidence::format::{Phase, QueueCleanup};
use sqsprobe_core::suite::model::{Case, QueueDef, RedriveAllow, Step, arn_refs, substitute_arns};
use std::collections::{BTreeMap, HashMap};

/// Creates the case's `queues:`, dead-letter targets first so their ARNs exist.
pub(super) async fn setup(
    sqs: &mut Caller,
    queues: &mut QueueTable,
    case: &Case,
) -> Result<(), String> {
    queues.check_one_queue_per_name()?;
    let defs: Vec<QueueDef> = case.queues.iter().filter(|d| d.create).cloned().collect();
    for def in creation_order(defs) {
        let rec = create_queue(sqs, queues, case, &def, Phase::Setup, None).await?;
        if let Some(err) = rec.error {
            return Err(format!(
                "failed to create queue `{}` ({}): {}",
                def.label,
                queues.name(&def.label),
                err.describe()
            ));
        }
    }
    Ok(())
}

/// CreateQueue for `def` of `case`; records the URL and ARN and registers ownership on
/// success.
pub(super) async fn create_queue(
    sqs: &mut Caller,
    queues: &mut QueueTable,
    case: &Case,
    def: &QueueDef,
    phase: Phase,
    step: Option<&Step>,
) -> Result<Recorded<CreateQueueOutput>, String> {
    // ARNs of other queues this one refers to.
    let mut needed: Vec<String> = Vec::new();
    if let Some(r) = &def.redrive {
        needed.push(r.dlq.value.clone());
    }
    if let Some(RedriveAllow::ByQueue(labels)) = &def.redrive_allow {
        needed.extend(labels.iter().map(|l| l.value.clone()));
    }
    // A queue not created yet (a redrive-allow list naming its own source, say) gets the
    // ARN its name will have, never an empty string.
    let mut arns: HashMap<String, String> = HashMap::new();
    for label in needed {
        let arn = arn_or_derived(sqs, queues, &label).await;
        arns.insert(label, arn);
    }
    check_name_is_free(sqs, queues, &def.label).await?;
    let attributes = create_attributes(def, &|l| arns.get(l).cloned());
    let attributes = resolve_arns(sqs, queues, &attributes).await;
    let ctx = sqs.ctx();
    let chaos = QueueChaos {
        case_spec: emulator_chaos(case, ctx.target),
        run: ctx.emulator_chaos.as_ref(),
        run_seed: ctx.seed,
        case: &case.id,
        trial: sqs.trial().unwrap_or(1),
        label: &def.label,
    }
    .tag();
    let tags = create_tags(def, &ctx.run_id, &ctx.instance, &case.id, chaos.as_deref());
    let name = queues.name(&def.label);
    let client = sqs.client();
    let meta = sqs.meta(queues, phase, step, "CreateQueue", None, Some(&def.label));
    // Not abandoned on Ctrl-C (unlike other calls): a create whose answer we dropped could
    // leave a queue behind that no one knows about.
    let mut req = client.create_queue().queue_name(&name);
    for (k, v) in attributes {
        req = req.attributes(QueueAttributeName::from(k.as_str()), v);
    }
    for (k, v) in tags {
        req = req.tags(k, v);
    }
    let mut rec = call!(finish: sqs, meta, req).await;
    sqs.emit_rows(&mut rec);
    if let Some(url) = rec.output.as_ref().and_then(|o| o.queue_url()) {
        let url = url.to_string();
        // CreateQueue answers with an existing queue's URL when name and attributes match,
        // tags or not: another process with the same run id may have won the race since
        // the free-name check. Its instance tag says so.
        if let Ownership::Foreign(whose) = ownership_of(sqs, queues, &def.label, &url, phase).await
        {
            return Err(format!(
                "queue {name} belongs to {whose}; refusing to use it (nothing of it is deleted)"
            ));
        }
        adopt(sqs, queues, &def.label, &url);
    }
    Ok(rec)
}

/// The emulator chaos a case's queues get: its `emulator_chaos:`, on the embedded emulator
/// only (no other target can be told to misbehave).
pub(super) fn emulator_chaos(case: &Case, target: TargetKind) -> Option<&str> {
    case.emulator_chaos
        .as_deref()
        .filter(|_| target == TargetKind::Embedded)
}

/// Whose the queue of `label` at `url` is, by its ownership tags (ListQueueTags, never
/// abandoned). A target that refuses ListQueueTags cannot prove anything: `Untagged`.
async fn ownership_of(
    sqs: &mut Caller,
    queues: &QueueTable,
    label: &str,
    url: &str,
    phase: Phase,
) -> Ownership {
    let client = sqs.client();
    let meta = sqs.meta(queues, phase, None, "ListQueueTags", None, Some(label));
    let mut rec = call!(finish: sqs, meta, client.list_queue_tags().queue_url(url)).await;
    sqs.emit_rows(&mut rec);
    match rec.output.as_ref().and_then(|o| o.tags()) {
        Some(tags) => ownership(tags, &sqs.ctx().run_id, &sqs.ctx().instance),
        None => Ownership::Untagged,
    }
}

/// Refuses to create `label` when a queue of its name already exists that this run does
/// not hold: CreateQueue would answer with that queue's URL (same name and attributes), and
/// a queue is only ours if this run created it.
async fn check_name_is_free(
    sqs: &mut Caller,
    queues: &QueueTable,
    label: &str,
) -> Result<(), String> {
    let q = queues.queue(label)?;
    if q.alive {
        // Ours already (a create-queue step re-creating the same queue on purpose).
        return Ok(());
    }
    let name = q.name.clone();
    match lookup_url(sqs, queues, label, Phase::Setup).await {
        Lookup::DoesNotExist => Ok(()),
        // The queue of another label of this case with the same name (`same_name_as`),
        // which this run created: on a target without regions the name is taken in every
        // region. Ours, so the create goes ahead; its answer is that queue, and the case's
        // checks say what that means.
        Lookup::Exists(url) if queues.shares_name_with_own(label, &url, &sqs.ctx().registry) => {
            Ok(())
        }
        Lookup::Exists(_) => Err(format!(
            "queue {name} already exists and this run did not create it; refusing to use it"
        )),
        // Fail closed: only QueueDoesNotExist proves the name free.
        Lookup::Unknown(why) => Err(format!(
            "could not prove the name {name} free (GetQueueUrl answered {why}); refusing to \
             create it"
        )),
    }
}

/// What a GetQueueUrl of a queue's name proved.
enum Lookup {
    /// It answered the queue's URL.
    Exists(String),
    /// It answered `QueueDoesNotExist`: the only proof that a queue is not there.
    DoesNotExist,
    /// Anything else (an error, no answer, a success without a URL), described.
    Unknown(String),
}

/// GetQueueUrl of `label`'s name in its region, recorded but never abandoned.
async fn lookup_url(sqs: &mut Caller, queues: &QueueTable, label: &str, phase: Phase) -> Lookup {
    let client = sqs.client();
    let name = queues.name(label);
    let meta = sqs.meta(queues, phase, None, "GetQueueUrl", None, Some(label));
    let mut rec = call!(finish: sqs, meta, client.get_queue_url().queue_name(&name)).await;
    sqs.emit_rows(&mut rec);
    match (rec.output, rec.error) {
        (Some(out), _) => match out.queue_url() {
            Some(url) => Lookup::Exists(url.to_string()),
            None => Lookup::Unknown("a success without a QueueUrl".to_string()),
        },
        (None, Some(e)) if e.is("QueueDoesNotExist") => Lookup::DoesNotExist,
        (None, Some(e)) => Lookup::Unknown(e.describe()),
        (None, None) => Lookup::Unknown("nothing".to_string()),
    }
}

/// Registers `url` as this case's queue `label`: teardown will delete it.
fn adopt(sqs: &Caller, queues: &mut QueueTable, label: &str, url: &str) {
    if let Some(owned) = queues.adopt(label, url, sqs.case()) {
        sqs.ctx().registry.add(owned);
    }
}

/// After a case was cut off mid-call (its deadline), a CreateQueue may have taken effect
/// without our seeing the URL: look each unregistered queue up by name and adopt it only if
/// it carries this run's tag and this process's instance, so teardown deletes it.
pub(super) async fn sweep_unregistered(sqs: &mut Caller, queues: &mut QueueTable) {
    let labels = queues.without_url();
    for label in labels {
        if let Lookup::Exists(url) = lookup_url(sqs, queues, &label, Phase::Teardown).await {
            // Only proven ours: anything else is left alone, as everywhere else.
            if ownership_of(sqs, queues, &label, &url, Phase::Teardown).await == Ownership::Ours {
                adopt(sqs, queues, &label, &url);
            }
        }
    }
}

/// `attributes` with each `${arn:<label>}` replaced: a created queue's own ARN, or for a
/// queue never created (`create: false`) the ARN its name would have, in the account and
/// region of the case's other queues.
pub(super) async fn resolve_arns(
    sqs: &mut Caller,
    queues: &mut QueueTable,
    attributes: &BTreeMap<String, String>,
) -> BTreeMap<String, String> {
    let labels: Vec<String> = attributes
        .values()
        .flat_map(|v| arn_refs(v))
        .map(str::to_string)
        .collect();
    if labels.is_empty() {
        return attributes.clone();
    }
    let mut arns = HashMap::new();
    for l in labels {
        let arn = arn_or_derived(sqs, queues, &l).await;
        arns.insert(l, arn);
    }
    attributes
        .iter()
        .map(|(k, v)| {
            let value = substitute_arns(v, &|l| arns.get(l).cloned().unwrap_or_default());
            (k.clone(), value)
        })
        .collect()
}

/// The ARN of a queue of the case: its own once created, else the ARN its name would have
/// in the account of the case's other queues and its own region (for not-found cases).
pub(super) async fn arn_or_derived(
    sqs: &mut Caller,
    queues: &mut QueueTable,
    label: &str,
) -> String {
    ensure_arn(sqs, queues, label).await;
    if let Ok(arn) = queues.arn(label) {
        return arn;
    }
    if queues.no_arns() {
        for l in queues.with_url() {
            ensure_arn(sqs, queues, &l).await;
        }
    }
    queues.derived_arn(label)
}

/// Fetches the QueueArn of a created queue, once.
pub(super) async fn ensure_arn(sqs: &mut Caller, queues: &mut QueueTable, label: &str) {
    let Some(q) = queues.get(label) else {
        return;
    };
    if q.arn.is_some() {
        return;
    }
    let Some(url) = q.url.clone() else { return };
    let client = sqs.client();
    let meta = sqs.meta(
        queues,
        Phase::Setup,
        None,
        "GetQueueAttributes",
        None,
        Some(label),
    );
    let mut rec = call!(
        sqs,
        meta,
        client
            .get_queue_attributes()
            .queue_url(&url)
            .attribute_names(QueueAttributeName::QueueArn)
    )
    .await;
    if let Some(out) = &rec.output {
        let arn = out
            .attributes()
            .and_then(|a| a.get(&QueueAttributeName::QueueArn))
            .cloned();
        queues.set_arn(label, arn);
    }
    sqs.emit_rows(&mut rec);
}

/// Lifts the denies still in force, deletes every queue this case created and still owns,
/// newest first, and ends with the account of every one: a queue counts as deleted only on a
/// definite answer (DeleteQueue succeeded, or the target said it does not exist); any other
/// is named in `errors`, so a queue left behind is never silent.
pub(super) async fn teardown(
    sqs: &mut Caller,
    queues: &mut QueueTable,
    errors: &mut Vec<String>,
) -> Vec<QueueCleanup> {
    deny::lift(sqs, queues, true).await;
    let mut cleanup = Vec::new();
    for label in queues.teardown_order() {
        let Some(q) = queues.get(&label).cloned() else {
            continue;
        };
        let Some(url) = q.url.clone() else { continue };
        let region = q.region_in(&sqs.ctx().region).to_string();
        let entry = |deleted| QueueCleanup {
            queue: q.name.clone(),
            deleted,
            region: q.region.clone(),
        };
        if !q.alive {
            cleanup.push(entry(true));
            continue;
        }
        // Ownership is checked against the run registry, not inferred from the name. A
        // live queue of the case that the registry does not hold is a bug of ours; it is
        // reported, never deleted on a guess.
        if !sqs.ctx().registry.owns(&region, &url) {
            errors.push(format!(
                "queue {} (in {region}) was not deleted: the run's registry does not hold it",
                q.name
            ));
            cleanup.push(entry(false));
            continue;
        }
        let client = sqs.client();
        let meta = sqs.meta(
            queues,
            Phase::Teardown,
            None,
            "DeleteQueue",
            None,
            Some(&label),
        );
        let mut rec = call!(finish: sqs, meta, client.delete_queue().queue_url(&url)).await;
        // A queue that is already gone is cleaned up as far as we are concerned. Over the
        // query protocol only the legacy code arrives, not the JSON shape name.
        let gone = rec
            .error
            .as_ref()
            .is_some_and(|e| e.is("QueueDoesNotExist"));
        let mut deleted = rec.error.is_none() || gone;
        sqs.emit_rows(&mut rec);
        if let Some(err) = rec.error.clone().filter(|_| !deleted) {
            let mut message = format!(
                "failed to delete queue {} (in {region}): {}",
                q.name,
                err.describe()
            );
            // No definite answer (none at all, a 5xx, a throttle): the delete may have taken.
            // Ask whether the queue is still there, unless the run is stopping (every call
            // then gets one attempt, and a lost target would not answer this one either); a
            // case past its own deadline still asks.
            let unsure = matches!(
                err.kind,
                FailureKind::NoResponse | FailureKind::ServerError | FailureKind::Throttled
            );
            if unsure && sqs.ctx().halt.stop_reason().is_none() {
                match lookup_url(sqs, queues, &label, Phase::Teardown).await {
                    Lookup::DoesNotExist => {
                        deleted = true;
                        message = format!(
                            "queue {} (in {region}): DeleteQueue got no definite answer ({}); \
                             GetQueueUrl then answered QueueDoesNotExist, so it is gone",
                            q.name,
                            err.describe()
                        );
                    }
                    Lookup::Exists(_) => message.push_str("; GetQueueUrl still finds it"),
                    Lookup::Unknown(why) => {
                        message.push_str(&format!("; GetQueueUrl answered {why}"))
                    }
                }
            }
            errors.push(sqs.masker().mask(&message));
        }
        if deleted {
            sqs.ctx().registry.remove(&region, &url);
            queues.mark_deleted(&label);
        }
        cleanup.push(entry(deleted));
    }
    cleanup
}

/// The order to create a case's queues in: a dead-letter queue before every queue whose
/// redrive points at it (transitively); otherwise as written. A redrive cycle, which SQS could
/// not create either, keeps the written order for what is left.
fn creation_order(mut pending: Vec<QueueDef>) -> Vec<QueueDef> {
    let mut ordered: Vec<QueueDef> = Vec::with_capacity(pending.len());
    while !pending.is_empty() {
        let ready = pending.iter().position(|d| {
            d.redrive.as_ref().is_none_or(|r| {
                !pending
                    .iter()
                    .any(|p| p.label == r.dlq.value && p.label != d.label)
            })
        });
        ordered.push(pending.remove(ready.unwrap_or(0)));
    }
    ordered
}

#[cfg(test)]
mod tests {
    use super::*;
    use sqsprobe_core::suite::model::{Pos, Spanned};

    #[test]
    fn dead_letter_queues_are_created_before_their_sources() {
        let def = |label: &str, dlq: Option<&str>| QueueDef {
            label: label.to_string(),
            create: true,
            redrive: dlq.map(|d| sqsprobe_core::suite::model::Redrive {
                dlq: Spanned {
                    value: d.to_string(),
                    pos: Pos::default(),
                },
                max_receive_count: 1,
            }),
            ..QueueDef::default()
        };
        // a → b → c, written in that order: c first, then b, then a.
        let order: Vec<String> = creation_order(vec![
            def("a", Some("b")),
            def("b", Some("c")),
            def("c", None),
        ])
        .into_iter()
        .map(|d| d.label)
        .collect();
        assert_eq!(order, ["c", "b", "a"]);
        // A cycle still yields every queue once.
        let order = creation_order(vec![def("x", Some("y")), def("y", Some("x"))]);
        assert_eq!(order.len(), 2);
    }
}
