//! A case's queues from creation to teardown: the free-name check, ownership (a queue is ours
//! only if this run created it), ARNs for redrive policies, and the deadline sweep.

use super::*;

impl CaseRun {
    /// Creates the case's `queues:`, dead-letter targets first so their ARNs exist.
    pub(super) async fn setup(&mut self) -> Result<(), String> {
        self.queues.check_one_queue_per_name()?;
        let defs: Vec<QueueDef> = self
            .case
            .queues
            .iter()
            .filter(|d| d.create)
            .cloned()
            .collect();
        for def in creation_order(defs) {
            let rec = self.create_queue(&def, Phase::Setup, None).await?;
            if let Some(err) = rec.error {
                return Err(format!(
                    "failed to create queue `{}` ({}): {}",
                    def.label,
                    self.queues.name(&def.label),
                    err.describe()
                ));
            }
        }
        Ok(())
    }

    /// CreateQueue for `def`; records the URL and ARN and registers ownership on success.
    pub(super) async fn create_queue(
        &mut self,
        def: &QueueDef,
        phase: Phase,
        step: Option<&Step>,
    ) -> Result<Recorded<aws_sdk_sqs::operation::create_queue::CreateQueueOutput>, String> {
        // ARNs of other queues this one refers to.
        let mut needed: Vec<String> = Vec::new();
        if let Some(r) = &def.redrive {
            needed.push(r.dlq.value.clone());
        }
        if let Some(crate::suite::model::RedriveAllow::ByQueue(labels)) = &def.redrive_allow {
            needed.extend(labels.iter().map(|l| l.value.clone()));
        }
        // A queue not created yet (a redrive-allow list naming its own source, say) gets the
        // ARN its name will have, never an empty string.
        let mut arns: HashMap<String, String> = HashMap::new();
        for label in needed {
            let arn = self.arn_or_derived(&label).await;
            arns.insert(label, arn);
        }
        self.check_name_is_free(&def.label).await?;
        let attributes = create_attributes(def, &|l| arns.get(l).cloned());
        let attributes = self.resolve_arns(&attributes).await;
        let chaos = QueueChaos {
            case_spec: emulator_chaos(&self.case, self.sqs.ctx().target),
            run: self.sqs.ctx().emulator_chaos.as_ref(),
            run_seed: self.sqs.ctx().seed,
            case: &self.case.id,
            trial: self.sqs.trial().unwrap_or(1),
            label: &def.label,
        }
        .tag();
        let tags = create_tags(
            def,
            &self.sqs.ctx().run_id,
            &self.sqs.ctx().instance,
            &self.case.id,
            chaos.as_deref(),
        );
        let name = self.queues.name(&def.label);
        let client = self.sqs.client();
        let meta = self.sqs.meta(
            &self.queues,
            phase,
            step,
            "CreateQueue",
            None,
            Some(&def.label),
        );
        // Not abandoned on Ctrl-C (unlike other calls): a create whose answer we dropped could
        // leave a queue behind that no one knows about.
        let mut req = client.create_queue().queue_name(&name);
        for (k, v) in attributes {
            req = req.attributes(QueueAttributeName::from(k.as_str()), v);
        }
        for (k, v) in tags {
            req = req.tags(k, v);
        }
        let mut rec = call!(finish: self.sqs, meta, req).await;
        self.sqs.emit_rows(&mut rec);
        if let Some(url) = rec.output.as_ref().and_then(|o| o.queue_url()) {
            let url = url.to_string();
            // CreateQueue answers with an existing queue's URL when name and attributes match,
            // tags or not: another process with the same run id may have won the race since
            // the free-name check. Its instance tag says so.
            if let Ownership::Foreign(whose) = self.ownership_of(&def.label, &url, phase).await {
                return Err(format!(
                    "queue {name} belongs to {whose}; refusing to use it (nothing of it is deleted)"
                ));
            }
            self.adopt(&def.label, &url);
        }
        Ok(rec)
    }

    /// Whose the queue of `label` at `url` is, by its ownership tags (ListQueueTags, never
    /// abandoned). A target that refuses ListQueueTags cannot prove anything: `Untagged`.
    pub(super) async fn ownership_of(&mut self, label: &str, url: &str, phase: Phase) -> Ownership {
        let client = self.sqs.client();
        let meta = self.sqs.meta(
            &self.queues,
            phase,
            None,
            "ListQueueTags",
            None,
            Some(label),
        );
        let mut rec = call!(finish: self.sqs, meta, client.list_queue_tags().queue_url(url)).await;
        self.sqs.emit_rows(&mut rec);
        match rec.output.as_ref().and_then(|o| o.tags()) {
            Some(tags) => ownership(tags, &self.sqs.ctx().run_id, &self.sqs.ctx().instance),
            None => Ownership::Untagged,
        }
    }

    /// Refuses to create `label` when a queue of its name already exists that this run does
    /// not hold: CreateQueue would answer with that queue's URL (same name and attributes), and
    /// a queue is only ours if this run created it.
    pub(super) async fn check_name_is_free(&mut self, label: &str) -> Result<(), String> {
        let q = self.queues.queue(label)?;
        if q.alive {
            // Ours already (a create-queue step re-creating the same queue on purpose).
            return Ok(());
        }
        let name = q.name.clone();
        match self.lookup_url(label, Phase::Setup).await {
            Ok(None) => Ok(()),
            // The queue of another label of this case with the same name (`same_name_as`),
            // which this run created: on a target without regions the name is taken in every
            // region. Ours, so the create goes ahead; its answer is that queue, and the case's
            // checks say what that means.
            Ok(Some(url))
                if self
                    .queues
                    .shares_name_with_own(label, &url, &self.sqs.ctx().registry) =>
            {
                Ok(())
            }
            Ok(Some(_)) => Err(format!(
                "queue {name} already exists and this run did not create it; refusing to use it"
            )),
            // Fail closed: only QueueDoesNotExist proves the name free.
            Err(e) => Err(format!(
                "could not prove the name {name} free (GetQueueUrl answered {}); refusing to \
                 create it",
                e.describe()
            )),
        }
    }

    /// GetQueueUrl of `label`'s name in its region, recorded but never abandoned: `Some(url)`
    /// if the queue exists, `None` only when the target said `QueueDoesNotExist`; any other
    /// answer is an error.
    pub(super) async fn lookup_url(
        &mut self,
        label: &str,
        phase: Phase,
    ) -> Result<Option<String>, CallError> {
        let client = self.sqs.client();
        let name = self.queues.name(label);
        let meta = self
            .sqs
            .meta(&self.queues, phase, None, "GetQueueUrl", None, Some(label));
        let mut rec = call!(finish: self.sqs, meta, client.get_queue_url().queue_name(&name)).await;
        self.sqs.emit_rows(&mut rec);
        match (rec.output, rec.error) {
            (Some(out), _) => Ok(out.queue_url().map(str::to_string)),
            (None, Some(e)) if e.is("QueueDoesNotExist") => Ok(None),
            (None, Some(e)) => Err(e),
            (None, None) => Ok(None),
        }
    }

    /// Registers `url` as this case's queue `label`: teardown will delete it.
    pub(super) fn adopt(&mut self, label: &str, url: &str) {
        if let Some(owned) = self.queues.adopt(label, url, &self.case.id) {
            self.sqs.ctx().registry.add(owned);
        }
    }

    /// After a case was cut off mid-call (its deadline), a CreateQueue may have taken effect
    /// without our seeing the URL: look each unregistered queue up by name and adopt it only if
    /// it carries this run's tag and this process's instance, so teardown deletes it.
    pub(super) async fn sweep_unregistered(&mut self) {
        let labels = self.queues.without_url();
        for label in labels {
            if let Ok(Some(url)) = self.lookup_url(&label, Phase::Teardown).await {
                // Only proven ours: anything else is left alone, as everywhere else.
                if self.ownership_of(&label, &url, Phase::Teardown).await == Ownership::Ours {
                    self.adopt(&label, &url);
                }
            }
        }
    }

    /// `attributes` with each `${arn:<label>}` replaced: a created queue's own ARN, or for a
    /// queue never created (`create: false`) the ARN its name would have, in the account and
    /// region of the case's other queues.
    pub(super) async fn resolve_arns(
        &mut self,
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
            let arn = self.arn_or_derived(&l).await;
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
    pub(super) async fn arn_or_derived(&mut self, label: &str) -> String {
        self.ensure_arn(label).await;
        if let Ok(arn) = self.queues.arn(label) {
            return arn;
        }
        if self.queues.no_arns() {
            for l in self.queues.with_url() {
                self.ensure_arn(&l).await;
            }
        }
        self.queues.derived_arn(label)
    }

    /// Fetches the QueueArn of a created queue, once.
    pub(super) async fn ensure_arn(&mut self, label: &str) {
        let Some(q) = self.queues.get(label) else {
            return;
        };
        if q.arn.is_some() {
            return;
        }
        let Some(url) = q.url.clone() else { return };
        let client = self.sqs.client();
        let meta = self.sqs.meta(
            &self.queues,
            Phase::Setup,
            None,
            "GetQueueAttributes",
            None,
            Some(label),
        );
        let mut rec = call!(
            self.sqs,
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
            self.queues.set_arn(label, arn);
        }
        self.sqs.emit_rows(&mut rec);
    }

    /// Deletes every queue this case created and still owns, newest first, and ends with the
    /// account of every one: a queue counts as deleted only on a definite answer (DeleteQueue
    /// succeeded, or the target said it does not exist); any other is named in the case's
    /// teardown errors, so a queue left behind is never silent.
    pub(super) async fn teardown(&mut self) -> Vec<QueueCleanup> {
        deny::lift(&mut self.sqs, &self.queues, true).await;
        let mut cleanup = Vec::new();
        for label in self.queues.teardown_order() {
            let Some(q) = self.queues.get(&label).cloned() else {
                continue;
            };
            let Some(url) = q.url.clone() else { continue };
            let region = q.region_in(&self.sqs.ctx().region).to_string();
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
            if !self.sqs.ctx().registry.owns(&region, &url) {
                self.record.teardown_errors.push(format!(
                    "queue {} (in {region}) was not deleted: the run's registry does not hold it",
                    q.name
                ));
                cleanup.push(entry(false));
                continue;
            }
            let client = self.sqs.client();
            let meta = self.sqs.meta(
                &self.queues,
                Phase::Teardown,
                None,
                "DeleteQueue",
                None,
                Some(&label),
            );
            let mut rec = call!(finish: self.sqs, meta, client
                    .delete_queue()
                    .queue_url(&url))
            .await;
            // A queue that is already gone is cleaned up as far as we are concerned. Over the
            // query protocol only the legacy code arrives, not the JSON shape name.
            let gone = rec
                .error
                .as_ref()
                .is_some_and(|e| e.is("QueueDoesNotExist"));
            let deleted = rec.error.is_none() || gone;
            if deleted {
                self.sqs.ctx().registry.remove(&region, &url);
                self.queues.mark_deleted(&label);
            } else if let Some(err) = rec.error.clone() {
                let message = format!(
                    "failed to delete queue {} (in {region}): {}",
                    q.name,
                    err.describe()
                );
                self.record
                    .teardown_errors
                    .push(self.sqs.masker().mask(&message));
            }
            self.sqs.emit_rows(&mut rec);
            cleanup.push(entry(deleted));
        }
        cleanup
    }
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
    use crate::suite::model::{Pos, Spanned};

    #[test]
    fn dead_letter_queues_are_created_before_their_sources() {
        let def = |label: &str, dlq: Option<&str>| QueueDef {
            label: label.to_string(),
            create: true,
            redrive: dlq.map(|d| crate::suite::model::Redrive {
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
