//! The steps that make one SQS call each: sends, deletes, visibility changes, queue
//! administration, move tasks; and how they resolve handles and record batch results.

use super::*;

impl CaseRun {
    /// Steps that make exactly one SQS call. `Err` is a harness-side problem (a reference that
    /// could not be resolved at run time).
    pub(super) async fn sqs_step(&mut self, step: &Step, action: &Action) -> Result<Check, String> {
        let client = self.ctx.client.clone();
        let retry = self.retry_for(Phase::Step);
        match action {
            Action::Send(send) => {
                let (url, name) = self.queue_url(&send.queue.value)?;
                let body = body_text(&send.body);
                self.masker.add_body(&body);
                let meta = self.meta(Phase::Step, Some(step), "SendMessage", None, Some(name));
                let attrs = message_attributes(send)?;
                let mut rec = send!(
                    self,
                    meta,
                    retry,
                    client
                        .send_message()
                        .queue_url(&url)
                        .message_body(&body)
                        .set_delay_seconds(send.delay.map(|d| d.as_secs() as i32))
                        .set_message_group_id(send.group.clone())
                        .set_message_deduplication_id(send.dedup_id.clone())
                        .set_message_attributes(attrs)
                )
                .await;
                let mut integrity = Vec::new();
                if let Some(out) = rec.output.take() {
                    let id = out.message_id().unwrap_or_default().to_string();
                    let bk = business_key(&body);
                    self.track_sent(&send.message, &id, bk.clone());
                    if let Some(md5) = out.md5_of_message_body()
                        && md5 != md5_hex(&body)
                    {
                        integrity.push("MD5OfMessageBody in the SendMessage response does not match the body sent".to_string());
                    }
                    let row = rec.last_row();
                    row.message_id = Some(id.clone());
                    row.message = Some(send.message.clone());
                    row.business_key = bk.clone();
                    row.messages.push(MessageEvidence {
                        message_id: id,
                        message: Some(send.message.clone()),
                        business_key: bk,
                        handle_digest: None,
                        body_digest: Some(sha256_hex(&body)),
                        receive_count: None,
                        sequence_number: out.sequence_number().map(str::to_string),
                        md5_ok: out.md5_of_message_body().map(|m| m == md5_hex(&body)),
                    });
                }
                Ok(self.judge(
                    step,
                    &mut rec,
                    Observed {
                        integrity,
                        ..Observed::default()
                    },
                ))
            }
            Action::SendBatch { queue, entries } => {
                let (url, name) = self.queue_url(&queue.value)?;
                let mut request_entries = Vec::new();
                let mut bodies = HashMap::new();
                for e in entries {
                    let body = body_text(&e.send.body);
                    self.masker.add_body(&body);
                    let entry = SendMessageBatchRequestEntry::builder()
                        .id(&e.id)
                        .message_body(&body)
                        .set_delay_seconds(e.send.delay.map(|d| d.as_secs() as i32))
                        .set_message_group_id(e.send.group.clone())
                        .set_message_deduplication_id(e.send.dedup_id.clone())
                        .set_message_attributes(message_attributes(&e.send)?)
                        .build()
                        .map_err(|err| format!("could not build batch entry {}: {err}", e.id))?;
                    bodies.insert(e.id.clone(), (e.send.message.clone(), body));
                    request_entries.push(entry);
                }
                let meta = self.meta(
                    Phase::Step,
                    Some(step),
                    "SendMessageBatch",
                    None,
                    Some(name),
                );
                let mut rec = send!(
                    self,
                    meta,
                    retry,
                    client
                        .send_message_batch()
                        .queue_url(&url)
                        .set_entries(Some(request_entries))
                )
                .await;
                let mut batch = None;
                let mut integrity = Vec::new();
                if let Some(out) = rec.output.take() {
                    let mut outcome = BatchOutcome::default();
                    let mut entries_ev = Vec::new();
                    for ok in out.successful() {
                        let (label, body) = bodies.get(ok.id()).cloned().unwrap_or_default();
                        let bk = business_key(&body);
                        if !label.is_empty() {
                            self.track_sent(&label, ok.message_id(), bk.clone());
                        }
                        if ok.md5_of_message_body() != md5_hex(&body) {
                            integrity.push(format!(
                                "entry {}: MD5OfMessageBody does not match the body sent",
                                ok.id()
                            ));
                        }
                        outcome.successful.push(ok.id().to_string());
                        entries_ev.push(EntryEvidence {
                            id: ok.id().to_string(),
                            message: Some(label).filter(|l| !l.is_empty()),
                            message_id: Some(ok.message_id().to_string()),
                            handle_digest: None,
                            result: "successful".into(),
                            code: None,
                            sender_fault: None,
                            error_message: None,
                        });
                    }
                    for f in out.failed() {
                        outcome.failed.push((
                            f.id().to_string(),
                            f.code().to_string(),
                            f.sender_fault(),
                        ));
                        entries_ev
                            .push(self.failed_entry(f, bodies.get(f.id()).map(|b| b.0.clone())));
                    }
                    rec.last_row().entries = entries_ev;
                    batch = Some(outcome);
                }
                Ok(self.judge(
                    step,
                    &mut rec,
                    Observed {
                        batch,
                        integrity,
                        ..Observed::default()
                    },
                ))
            }
            Action::Receive(receive) => self.receive_step(step, receive).await,
            Action::Delete { queue, target } => {
                let (handle, info, url, name) = self.resolve_single(queue, target, "delete")?;
                let attempt = info.as_ref().map(|i| i.0.clone());
                let meta = self.meta(
                    Phase::Step,
                    Some(step),
                    "DeleteMessage",
                    attempt,
                    Some(name),
                );
                let mut rec = send!(
                    self,
                    meta,
                    retry,
                    client
                        .delete_message()
                        .queue_url(&url)
                        .receipt_handle(&handle)
                )
                .await;
                self.note_handle_row(&mut rec, &handle, info.as_ref());
                if let Some((_, receipt)) = &info {
                    self.count_ack(receipt, rec.error.is_some());
                }
                Ok(self.judge(step, &mut rec, Observed::default()))
            }
            Action::DeleteBatch { queue, entries } => {
                let targets: Vec<&HandleRef> = entries.iter().map(|e| &e.target).collect();
                let (resolved, url, name) = self.resolve_batch(queue, &targets, "delete-batch")?;
                let request_entries = entries
                    .iter()
                    .zip(&resolved)
                    .map(|(e, (handle, _))| {
                        DeleteMessageBatchRequestEntry::builder()
                            .id(&e.id)
                            .receipt_handle(handle)
                            .build()
                            .map_err(|err| format!("could not build batch entry {}: {err}", e.id))
                    })
                    .collect::<Result<Vec<_>, _>>()?;
                let meta = self.meta(
                    Phase::Step,
                    Some(step),
                    "DeleteMessageBatch",
                    None,
                    Some(name),
                );
                let mut rec = send!(
                    self,
                    meta,
                    retry,
                    client
                        .delete_message_batch()
                        .queue_url(&url)
                        .set_entries(Some(request_entries))
                )
                .await;
                // Evidence and ack accounting go by entry id (the last entry wins on duplicates).
                let by_id: HashMap<String, ResolvedHandle> =
                    entries.iter().map(|e| e.id.clone()).zip(resolved).collect();
                let batch = self.handle_batch_result(
                    &mut rec,
                    &by_id,
                    |o: &aws_sdk_sqs::operation::delete_message_batch::DeleteMessageBatchOutput| {
                        (
                            o.successful().iter().map(|s| s.id().to_string()).collect(),
                            o.failed().to_vec(),
                        )
                    },
                    true,
                );
                Ok(self.judge(
                    step,
                    &mut rec,
                    Observed {
                        batch,
                        ..Observed::default()
                    },
                ))
            }
            Action::ChangeVisibility {
                queue,
                target,
                timeout,
            } => {
                let (handle, info, url, name) =
                    self.resolve_single(queue, target, "change-visibility")?;
                let attempt = info.as_ref().map(|i| i.0.clone());
                let meta = self.meta(
                    Phase::Step,
                    Some(step),
                    "ChangeMessageVisibility",
                    attempt,
                    Some(name),
                );
                let secs = timeout.as_secs() as i32;
                let mut rec = send!(
                    self,
                    meta,
                    retry,
                    client
                        .change_message_visibility()
                        .queue_url(&url)
                        .receipt_handle(&handle)
                        .visibility_timeout(secs)
                )
                .await;
                self.note_handle_row(&mut rec, &handle, info.as_ref());
                Ok(self.judge(step, &mut rec, Observed::default()))
            }
            Action::ChangeVisibilityBatch { queue, entries } => {
                let targets: Vec<&HandleRef> = entries.iter().map(|e| &e.target).collect();
                let (resolved, url, name) =
                    self.resolve_batch(queue, &targets, "change-visibility-batch")?;
                let request_entries = entries
                    .iter()
                    .zip(&resolved)
                    .map(|(e, (handle, _))| {
                        ChangeMessageVisibilityBatchRequestEntry::builder()
                            .id(&e.id)
                            .receipt_handle(handle)
                            .visibility_timeout(e.timeout.as_secs() as i32)
                            .build()
                            .map_err(|err| format!("could not build batch entry {}: {err}", e.id))
                    })
                    .collect::<Result<Vec<_>, _>>()?;
                let meta = self.meta(
                    Phase::Step,
                    Some(step),
                    "ChangeMessageVisibilityBatch",
                    None,
                    Some(name),
                );
                let mut rec = send!(
                    self,
                    meta,
                    retry,
                    client
                        .change_message_visibility_batch()
                        .queue_url(&url)
                        .set_entries(Some(request_entries))
                )
                .await;
                // Evidence and ack accounting go by entry id (the last entry wins on duplicates).
                let by_id: HashMap<String, ResolvedHandle> =
                    entries.iter().map(|e| e.id.clone()).zip(resolved).collect();
                let batch = self.handle_batch_result(
                    &mut rec,
                    &by_id,
                    |o: &aws_sdk_sqs::operation::change_message_visibility_batch::ChangeMessageVisibilityBatchOutput| {
                        (
                            o.successful().iter().map(|s| s.id().to_string()).collect(),
                            o.failed().to_vec(),
                        )
                    },
                    false,
                );
                Ok(self.judge(
                    step,
                    &mut rec,
                    Observed {
                        batch,
                        ..Observed::default()
                    },
                ))
            }
            Action::GetAttributes { queue, names } => {
                let (url, name) = self.queue_url(&queue.value)?;
                let meta = self.meta(
                    Phase::Step,
                    Some(step),
                    "GetQueueAttributes",
                    None,
                    Some(name),
                );
                let names = names.clone();
                let mut rec = self
                    .call(meta, |r| {
                        let mut req = client.get_queue_attributes().queue_url(&url);
                        for n in &names {
                            req = req.attribute_names(QueueAttributeName::from(n.as_str()));
                        }
                        req.customize().interceptor(r).config_override(retry).send()
                    })
                    .await;
                let attrs = rec.output.as_ref().map(|o| {
                    o.attributes()
                        .map(|a| {
                            a.iter()
                                .map(|(k, v)| (k.as_str().to_string(), v.clone()))
                                .collect::<BTreeMap<_, _>>()
                        })
                        .unwrap_or_default()
                });
                Ok(self.judge(
                    step,
                    &mut rec,
                    Observed {
                        queue_attributes: attrs,
                        ..Observed::default()
                    },
                ))
            }
            Action::SetAttributes { queue, attributes } => {
                let (url, name) = self.queue_url(&queue.value)?;
                let meta = self.meta(
                    Phase::Step,
                    Some(step),
                    "SetQueueAttributes",
                    None,
                    Some(name),
                );
                let attributes = self.resolve_arns(attributes).await;
                let mut rec = self
                    .call(meta, |r| {
                        let mut req = client.set_queue_attributes().queue_url(&url);
                        for (k, v) in attributes {
                            req = req.attributes(QueueAttributeName::from(k.as_str()), v);
                        }
                        req.customize().interceptor(r).config_override(retry).send()
                    })
                    .await;
                Ok(self.judge(step, &mut rec, Observed::default()))
            }
            Action::Purge { queue } => {
                let (url, name) = self.queue_url(&queue.value)?;
                let meta = self.meta(Phase::Step, Some(step), "PurgeQueue", None, Some(name));
                let mut rec = send!(self, meta, retry, client.purge_queue().queue_url(&url)).await;
                Ok(self.judge(step, &mut rec, Observed::default()))
            }
            Action::CreateQueue(def) => {
                let mut rec = self.create_queue(def, Phase::Step, Some(step)).await?;
                Ok(self.judge(step, &mut rec, Observed::default()))
            }
            Action::DeleteQueue { queue } => {
                let (url, name) = self.queue_url(&queue.value)?;
                if !self.ctx.registry.owns(&url) && self.queues[&queue.value].alive {
                    return Err(format!(
                        "refusing to delete {name}: not created by this run"
                    ));
                }
                let meta = self.meta(Phase::Step, Some(step), "DeleteQueue", None, Some(name));
                let mut rec = send!(self, meta, retry, client.delete_queue().queue_url(&url)).await;
                if rec.error.is_none() {
                    self.ctx.registry.remove(&url);
                    if let Some(q) = self.queues.get_mut(&queue.value) {
                        q.alive = false;
                    }
                }
                Ok(self.judge(step, &mut rec, Observed::default()))
            }
            Action::GetQueueUrl { queue } => {
                let name = self
                    .queues
                    .get(&queue.value)
                    .map(|q| q.name.clone())
                    .ok_or_else(|| {
                        format!("queue `{}` is not defined in this case", queue.value)
                    })?;
                let meta = self.meta(
                    Phase::Step,
                    Some(step),
                    "GetQueueUrl",
                    None,
                    Some(name.clone()),
                );
                let mut rec =
                    send!(self, meta, retry, client.get_queue_url().queue_name(&name)).await;
                Ok(self.judge(step, &mut rec, Observed::default()))
            }
            Action::ListQueues { max_results } => {
                // Always this case's own prefix: a listing never reaches other people's queues.
                let prefix = format!("{}{}-", run_prefix(&self.ctx.run_id), self.case.id);
                let meta = self.meta(Phase::Step, Some(step), "ListQueues", None, None);
                let max = *max_results;
                let mut rec = send!(
                    self,
                    meta,
                    retry,
                    client
                        .list_queues()
                        .queue_name_prefix(&prefix)
                        .set_max_results(max)
                )
                .await;
                let received = rec.output.as_ref().map(|o| {
                    o.queue_urls()
                        .iter()
                        .map(|_| ReceivedMsg::default())
                        .collect::<Vec<_>>()
                });
                let mut expect_view = step.expect.clone();
                expect_view.received.clear();
                let obs = Observed {
                    received: received.filter(|_| step.expect.messages.is_some()),
                    ..Observed::default()
                };
                Ok(self.judge_with(step, &expect_view, &mut rec, obs))
            }
            Action::TagQueue { queue, tags } => {
                let (url, name) = self.queue_url(&queue.value)?;
                let meta = self.meta(Phase::Step, Some(step), "TagQueue", None, Some(name));
                let tags = tags.clone();
                let mut rec = self
                    .call(meta, |r| {
                        let mut req = client.tag_queue().queue_url(&url);
                        for (k, v) in tags {
                            req = req.tags(k, v);
                        }
                        req.customize().interceptor(r).config_override(retry).send()
                    })
                    .await;
                Ok(self.judge(step, &mut rec, Observed::default()))
            }
            Action::UntagQueue { queue, keys } => {
                let (url, name) = self.queue_url(&queue.value)?;
                let meta = self.meta(Phase::Step, Some(step), "UntagQueue", None, Some(name));
                let keys = keys.clone();
                let mut rec = send!(
                    self,
                    meta,
                    retry,
                    client
                        .untag_queue()
                        .queue_url(&url)
                        .set_tag_keys(Some(keys))
                )
                .await;
                Ok(self.judge(step, &mut rec, Observed::default()))
            }
            Action::ListQueueTags { queue } => {
                let (url, name) = self.queue_url(&queue.value)?;
                let meta = self.meta(Phase::Step, Some(step), "ListQueueTags", None, Some(name));
                let mut rec =
                    send!(self, meta, retry, client.list_queue_tags().queue_url(&url)).await;
                let tags = rec.output.as_ref().map(|o| {
                    o.tags()
                        .map(|t| t.iter().map(|(k, v)| (k.clone(), v.clone())).collect())
                        .unwrap_or_default()
                });
                Ok(self.judge(
                    step,
                    &mut rec,
                    Observed {
                        queue_attributes: tags,
                        ..Observed::default()
                    },
                ))
            }
            Action::ListDeadLetterSourceQueues { queue } => {
                let (url, name) = self.queue_url(&queue.value)?;
                let meta = self.meta(
                    Phase::Step,
                    Some(step),
                    "ListDeadLetterSourceQueues",
                    None,
                    Some(name),
                );
                let mut rec = send!(
                    self,
                    meta,
                    retry,
                    client.list_dead_letter_source_queues().queue_url(&url)
                )
                .await;
                // Each source URL becomes a "received" entry labelled with its queue label, so
                // `received: [main]` and `messages: 1` work here too.
                let by_url: HashMap<String, String> = self
                    .queues
                    .iter()
                    .filter_map(|(l, q)| q.url.clone().map(|u| (u, l.clone())))
                    .collect();
                let received = rec.output.as_ref().map(|o| {
                    o.queue_urls()
                        .iter()
                        .map(|u| ReceivedMsg {
                            label: by_url.get(u).cloned(),
                            ..ReceivedMsg::default()
                        })
                        .collect()
                });
                Ok(self.judge(
                    step,
                    &mut rec,
                    Observed {
                        received,
                        ..Observed::default()
                    },
                ))
            }
            Action::StartMoveTask {
                source,
                destination,
                max_per_second,
                name: task,
            } => {
                self.ensure_arn(&source.value).await;
                let source_arn = self.arn(&source.value)?;
                // An uncreated destination gets the ARN its name would have, so a case can
                // ask for ResourceNotFoundException.
                let dest_arn = match destination {
                    Some(d) => Some(self.arn_or_derived(&d.value).await),
                    None => None,
                };
                let qname = self.queues.get(&source.value).map(|q| q.name.clone());
                let meta = self.meta(Phase::Step, Some(step), "StartMessageMoveTask", None, qname);
                let rate = *max_per_second;
                let mut rec = send!(
                    self,
                    meta,
                    retry,
                    client
                        .start_message_move_task()
                        .source_arn(&source_arn)
                        .set_destination_arn(dest_arn)
                        .set_max_number_of_messages_per_second(rate)
                )
                .await;
                if let (Some(out), Some(task)) = (&rec.output, task)
                    && let Some(h) = out.task_handle()
                {
                    self.move_tasks.insert(task.clone(), h.to_string());
                }
                Ok(self.judge(step, &mut rec, Observed::default()))
            }
            Action::ListMoveTasks { source } => {
                self.ensure_arn(&source.value).await;
                let source_arn = self.arn(&source.value)?;
                let qname = self.queues.get(&source.value).map(|q| q.name.clone());
                let meta = self.meta(Phase::Step, Some(step), "ListMessageMoveTasks", None, qname);
                let mut rec = send!(
                    self,
                    meta,
                    retry,
                    client.list_message_move_tasks().source_arn(&source_arn)
                )
                .await;
                // The newest task's fields are checkable as `attributes:` (Status, ...).
                let attrs = rec.output.as_ref().map(|o| {
                    let mut m = BTreeMap::new();
                    if let Some(t) = o.results().first() {
                        if let Some(s) = t.status() {
                            m.insert("Status".to_string(), s.to_string());
                        }
                        m.insert(
                            "ApproximateNumberOfMessagesMoved".to_string(),
                            t.approximate_number_of_messages_moved().to_string(),
                        );
                        if let Some(n) = t.approximate_number_of_messages_to_move() {
                            m.insert(
                                "ApproximateNumberOfMessagesToMove".to_string(),
                                n.to_string(),
                            );
                        }
                    }
                    m.insert("Count".to_string(), o.results().len().to_string());
                    m
                });
                Ok(self.judge(
                    step,
                    &mut rec,
                    Observed {
                        queue_attributes: attrs,
                        ..Observed::default()
                    },
                ))
            }
            Action::CancelMoveTask { task } => {
                let handle = self.move_tasks.get(&task.value).cloned().ok_or_else(|| {
                    format!(
                        "move task `{}` was not started (its start step failed?)",
                        task.value
                    )
                })?;
                let meta = self.meta(Phase::Step, Some(step), "CancelMessageMoveTask", None, None);
                let mut rec = send!(
                    self,
                    meta,
                    retry,
                    client.cancel_message_move_task().task_handle(&handle)
                )
                .await;
                Ok(self.judge(step, &mut rec, Observed::default()))
            }
            Action::Deny(_) => Err("`deny` steps are not run by this version of the runner".into()),
            Action::Sleep(_) | Action::Observe(_) => unreachable!("handled by the caller"),
        }
    }

    pub(super) fn arn(&self, label: &str) -> Result<String, String> {
        self.queues
            .get(label)
            .and_then(|q| q.arn.clone())
            .ok_or_else(|| format!("queue `{label}` has no ARN (was it created?)"))
    }

    /// Checks the step's expectations, emits the call's rows, and returns the check.
    pub(super) fn judge<O>(
        &mut self,
        step: &Step,
        rec: &mut Recorded<O>,
        obs: Observed<'_>,
    ) -> Check {
        let expect = step.expect.clone();
        self.judge_with(step, &expect, rec, obs)
    }

    pub(super) fn judge_with<O>(
        &mut self,
        _step: &Step,
        expect: &StepExpect,
        rec: &mut Recorded<O>,
        obs: Observed<'_>,
    ) -> Check {
        let error = rec.error.clone();
        let obs = Observed {
            error: error.as_ref(),
            status: rec.status(),
            ..obs
        };
        let check = check_step(expect, &obs);
        self.emit_rows(rec);
        check
    }

    pub(super) fn failed_entry(
        &self,
        f: &aws_sdk_sqs::types::BatchResultErrorEntry,
        label: Option<String>,
    ) -> EntryEvidence {
        EntryEvidence {
            id: f.id().to_string(),
            message: label.filter(|l| !l.is_empty()),
            message_id: None,
            handle_digest: None,
            result: "failed".into(),
            code: Some(f.code().to_string()),
            sender_fault: Some(f.sender_fault()),
            error_message: f.message().map(|m| self.masker.mask(m)),
        }
    }

    /// Shared by delete-batch and change-visibility-batch: entry evidence, ack accounting.
    pub(super) fn handle_batch_result<O>(
        &mut self,
        rec: &mut Recorded<O>,
        resolved: &HashMap<String, ResolvedHandle>,
        split: impl Fn(&O) -> (Vec<String>, Vec<aws_sdk_sqs::types::BatchResultErrorEntry>),
        is_ack: bool,
    ) -> Option<BatchOutcome> {
        let Some(out) = rec.output.as_ref() else {
            // The whole request failed: every ack in it was refused (or may not have landed).
            if is_ack {
                for (_, info) in resolved.values() {
                    if let Some((_, receipt)) = info {
                        self.count_ack(receipt, true);
                    }
                }
            }
            return None;
        };
        let (successful, failed) = split(out);
        let mut outcome = BatchOutcome::default();
        let mut entries_ev = Vec::new();
        let evidence_for = |id: &str| {
            resolved.get(id).map(|(h, info)| {
                (
                    sha256_hex(h),
                    info.as_ref().and_then(|(_, r)| r.label.clone()),
                    info.as_ref().map(|(_, r)| r.message_id.clone()),
                )
            })
        };
        for id in &successful {
            let (digest, label, mid) = evidence_for(id).unwrap_or_default();
            entries_ev.push(EntryEvidence {
                id: id.clone(),
                message: label,
                message_id: mid,
                handle_digest: Some(digest).filter(|d| !d.is_empty()),
                result: "successful".into(),
                code: None,
                sender_fault: None,
                error_message: None,
            });
            outcome.successful.push(id.clone());
        }
        for f in &failed {
            let mut ev = self.failed_entry(f, None);
            if let Some((digest, label, mid)) = evidence_for(f.id()) {
                ev.handle_digest = Some(digest);
                ev.message = label;
                ev.message_id = mid;
            }
            entries_ev.push(ev);
            outcome
                .failed
                .push((f.id().to_string(), f.code().to_string(), f.sender_fault()));
        }
        if is_ack {
            for (id, (_, info)) in resolved {
                if let Some((_, receipt)) = info {
                    let refused = failed.iter().any(|f| f.id() == id);
                    self.count_ack(receipt, refused);
                }
            }
        }
        rec.last_row().entries = entries_ev;
        Some(outcome)
    }

    // ----- handles and messages ------------------------------------------------------------

    pub(super) fn track_sent(
        &mut self,
        label: &str,
        message_id: &str,
        business_key: Option<String>,
    ) {
        self.sent.insert(
            label.to_string(),
            SentMessage {
                message_id: Some(message_id.to_string()),
                business_key,
            },
        );
        // A FIFO duplicate is answered with the first message's MessageId; what is received
        // is that first message, so the id keeps the first label.
        self.by_id
            .entry(message_id.to_string())
            .or_insert_with(|| label.to_string());
    }

    /// The handle a reference names, plus (attempt name, receipt) when it came from a receive.
    pub(super) fn resolve_handle(&mut self, target: &HandleRef) -> Result<ResolvedHandle, String> {
        match target {
            HandleRef::Literal(h) => {
                // Not a secret (the suite wrote it), but masked like any handle so outputs
                // follow one rule: no handle text, only digests.
                self.masker.add_handle(h);
                Ok((h.clone(), None))
            }
            HandleRef::Attempt { attempt, message } => {
                let receipts = self.attempts.get(&attempt.value).ok_or_else(|| {
                    format!("attempt {} has not received anything", attempt.value)
                })?;
                let receipt = match message {
                    Some(m) => receipts
                        .iter()
                        .find(|r| r.label.as_deref() == Some(m.value.as_str()))
                        .ok_or_else(|| {
                            format!(
                                "attempt {} did not receive message {}",
                                attempt.value, m.value
                            )
                        })?,
                    None => receipts
                        .first()
                        .ok_or_else(|| format!("attempt {} received no message", attempt.value))?,
                };
                Ok((
                    receipt.handle.clone(),
                    Some((attempt.value.clone(), receipt.clone())),
                ))
            }
        }
    }

    /// Resolves a single-handle step: the handle, where it came from, and the queue (given,
    /// or the one the attempt received from).
    #[allow(clippy::type_complexity)]
    pub(super) fn resolve_single(
        &mut self,
        queue: &Option<crate::suite::model::Spanned<String>>,
        target: &HandleRef,
        step: &str,
    ) -> Result<(String, Option<(String, Receipt)>, String, String), String> {
        // (handle, origin, queue url, queue name)
        let (handle, info) = self.resolve_handle(target)?;
        let label = queue
            .as_ref()
            .map(|q| q.value.clone())
            .or_else(|| self.attempt_queue(target))
            .ok_or_else(|| format!("{step} needs `queue:` when it uses a literal handle"))?;
        let (url, name) = self.queue_url(&label)?;
        Ok((handle, info, url, name))
    }

    /// Resolves every entry of a batch step by entry id, and the queue (given, or the one the
    /// first attempt-entry received from).
    pub(super) fn resolve_batch(
        &mut self,
        queue: &Option<crate::suite::model::Spanned<String>>,
        entries: &[&HandleRef],
        step: &str,
    ) -> Result<(Vec<ResolvedHandle>, String, String), String> {
        // In entry order, not keyed by id: conformance cases send duplicate ids on purpose.
        let mut resolved = Vec::new();
        let mut label = queue.as_ref().map(|q| q.value.clone());
        let mut from: Option<String> = None;
        for target in entries {
            resolved.push(self.resolve_handle(target)?);
            if let Some(q) = self.attempt_queue(target) {
                match &from {
                    // One batch goes to one queue: handles from several need `queue:` to say
                    // which (a conformance case may want exactly that mix).
                    Some(first) if *first != q && queue.is_none() => {
                        return Err(format!(
                            "{step} mixes handles from queues `{first}` and `{q}`; \
                             say which queue it goes to with `queue:`"
                        ));
                    }
                    Some(_) => {}
                    None => from = Some(q),
                }
            }
        }
        if label.is_none() {
            label = from;
        }
        let label =
            label.ok_or_else(|| format!("{step} needs `queue:` when no entry names an attempt"))?;
        let (url, name) = self.queue_url(&label)?;
        Ok((resolved, url, name))
    }

    /// The queue an attempt received from (so `delete: {attempt: A}` needs no `queue:`).
    pub(super) fn attempt_queue(&self, target: &HandleRef) -> Option<String> {
        let HandleRef::Attempt { attempt, .. } = target else {
            return None;
        };
        self.case.steps.iter().find_map(|s| match &s.action {
            Action::Receive(r) if r.attempt.as_ref().map(|a| &a.value) == Some(&attempt.value) => {
                Some(r.queue.value.clone())
            }
            _ => None,
        })
    }

    pub(super) fn note_handle_row<O>(
        &self,
        rec: &mut Recorded<O>,
        handle: &str,
        info: Option<&(String, Receipt)>,
    ) {
        let digest = sha256_hex(handle);
        let bk = info
            .and_then(|(_, r)| r.label.as_ref())
            .and_then(|l| self.sent.get(l))
            .and_then(|s| s.business_key.clone());
        for row in &mut rec.rows {
            row.handle_digest = Some(digest.clone());
            if let Some((_, r)) = info {
                row.message_id = Some(r.message_id.clone());
                row.message = r.label.clone();
                row.business_key = bk.clone();
            }
        }
    }

    pub(super) fn count_ack(&mut self, receipt: &Receipt, refused: bool) {
        self.acks.acks += 1;
        if self
            .latest
            .get(&receipt.message_id)
            .is_some_and(|&s| s > receipt.seq)
        {
            self.acks.stale_acks += 1;
        }
        if refused {
            self.acks.failed_acks += 1;
        }
    }
}

pub(super) fn body_text(body: &Body) -> String {
    match body {
        Body::Text(t) => t.clone(),
        Body::Size(n) => "x".repeat(*n),
    }
}

/// `business_key` (or `business_id`) of a JSON object body: a key the suite author put there
/// to be seen, unlike the rest of the body.
pub(super) fn business_key(body: &str) -> Option<String> {
    let v: serde_json::Value = serde_json::from_str(body).ok()?;
    let obj = v.as_object()?;
    ["business_key", "business_id"]
        .iter()
        .find_map(|k| obj.get(*k).and_then(|v| v.as_str()).map(str::to_string))
}

pub(super) fn message_attributes(
    send: &SendStep,
) -> Result<Option<HashMap<String, MessageAttributeValue>>, String> {
    if send.attributes.is_empty() {
        return Ok(None);
    }
    let mut map = HashMap::new();
    for a in &send.attributes {
        let mut b = MessageAttributeValue::builder().data_type(&a.data_type);
        if a.data_type.starts_with("Binary") {
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(&a.value)
                .map_err(|e| format!("attribute {}: Binary value is not base64: {e}", a.name))?;
            b = b.binary_value(Blob::new(bytes));
        } else {
            b = b.string_value(&a.value);
        }
        let v = b
            .build()
            .map_err(|e| format!("attribute {}: {e}", a.name))?;
        map.insert(a.name.clone(), v);
    }
    Ok(Some(map))
}
