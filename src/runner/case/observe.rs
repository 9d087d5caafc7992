//! Receives and the bounded observation: tracking receipts per attempt, counting deliveries,
//! verifying MD5s, and classifying what an `observe` window saw.

use super::*;

impl CaseRun {
    // ----- receive and observe -------------------------------------------------------------

    pub(super) async fn receive_step(
        &mut self,
        step: &Step,
        receive: &Receive,
    ) -> Result<Check, String> {
        let (url, name) = self.queue_url(&receive.queue.value)?;
        let attempt = receive.attempt.as_ref().map(|a| a.value.clone());
        let meta = self.meta(
            Phase::Step,
            Some(step),
            "ReceiveMessage",
            attempt.clone(),
            Some(name),
        );
        let started = std::time::Instant::now();
        let (mut rec, received, integrity) = self
            .receive_call(
                meta,
                &url,
                ReceiveParams {
                    max: receive.max,
                    wait: receive.wait,
                    visibility: receive.visibility_timeout,
                    attribute_names: receive.attribute_names.clone(),
                    message_attribute_names: receive.message_attribute_names.clone(),
                    request_attempt_id: receive.request_attempt_id.clone(),
                },
                attempt.as_deref(),
            )
            .await;
        Ok(self.judge(
            step,
            &mut rec,
            Observed {
                received,
                integrity,
                elapsed: Some(started.elapsed()),
                ..Observed::default()
            },
        ))
    }

    /// One ReceiveMessage: tracks receipts under `attempt`, counts deliveries, verifies MD5s.
    async fn receive_call(
        &mut self,
        meta: CallMeta,
        url: &str,
        p: ReceiveParams,
        attempt: Option<&str>,
    ) -> (
        Recorded<aws_sdk_sqs::operation::receive_message::ReceiveMessageOutput>,
        Option<Vec<ReceivedMsg>>,
        Vec<String>,
    ) {
        let client = self.ctx.client.clone();
        let req = {
            let mut req = client
                .receive_message()
                .queue_url(url)
                .set_max_number_of_messages(p.max)
                .set_wait_time_seconds(p.wait.map(|w| w.as_secs() as i32))
                .set_visibility_timeout(p.visibility.map(|v| v.as_secs() as i32))
                .set_receive_request_attempt_id(p.request_attempt_id.clone());
            for n in &p.attribute_names {
                req = req
                    .message_system_attribute_names(MessageSystemAttributeName::from(n.as_str()));
            }
            for n in &p.message_attribute_names {
                req = req.message_attribute_names(n);
            }
            req
        };
        let mut rec = call!(self, meta, req).await;
        self.receives += 1;
        let mut integrity = Vec::new();
        let Some(out) = rec.output.as_ref() else {
            return (rec, None, integrity);
        };
        let mut received = Vec::new();
        let mut evidence = Vec::new();
        let mut receipts = Vec::new();
        for m in out.messages() {
            let id = m.message_id().unwrap_or_default().to_string();
            let handle = m.receipt_handle().unwrap_or_default().to_string();
            let body = m.body().unwrap_or_default();
            self.masker.add_handle(&handle);
            self.masker.add_body(body);
            self.seq += 1;
            self.latest.insert(id.clone(), self.seq);
            let label = self.by_id.get(&id).cloned();
            *self
                .deliveries
                .entry(label.clone().unwrap_or_else(|| id.clone()))
                .or_default() += 1;
            let md5_ok = m.md5_of_body().map(|md5| md5 == md5_hex(body));
            if md5_ok == Some(false) {
                integrity.push(format!(
                    "{}: MD5OfBody does not match the body received",
                    label.as_deref().unwrap_or(&id)
                ));
            }
            let attributes: BTreeMap<String, String> = m
                .attributes()
                .map(|a| {
                    a.iter()
                        .map(|(k, v)| (k.as_str().to_string(), v.clone()))
                        .collect()
                })
                .unwrap_or_default();
            let bk = business_key(body);
            evidence.push(MessageEvidence {
                message_id: id.clone(),
                message: label.clone(),
                business_key: bk,
                handle_digest: Some(sha256_hex(&handle)),
                body_digest: Some(sha256_hex(body)),
                receive_count: attributes
                    .get("ApproximateReceiveCount")
                    .and_then(|c| c.parse().ok()),
                sequence_number: attributes.get("SequenceNumber").cloned(),
                md5_ok,
            });
            receipts.push(Receipt {
                handle,
                message_id: id,
                label: label.clone(),
                seq: self.seq,
            });
            received.push(ReceivedMsg { label, attributes });
        }
        if let Some(a) = attempt {
            self.attempts
                .entry(a.to_string())
                .or_default()
                .extend(receipts);
        }
        rec.last_row().messages = evidence;
        (rec, Some(received), integrity)
    }

    /// The bounded observation: polls until the window ends, the budget runs out, every
    /// tracked message was seen, or a receive cannot be trusted.
    pub(super) async fn observe(&mut self, step: &Step, o: &Observe) -> Result<Check, String> {
        let (url, name) = self.queue_url(&o.queue.value)?;
        let tracked: Vec<String> = if o.messages.is_empty() {
            self.sent.keys().cloned().collect()
        } else {
            o.messages.iter().map(|m| m.value.clone()).collect()
        };
        let mut sightings: BTreeMap<String, u32> = tracked.iter().map(|l| (l.clone(), 0)).collect();
        let start = Instant::now();
        let deadline = start + o.window;
        let mut used = 0u32;
        let mut integrity_failures: Vec<String> = Vec::new();
        let mut cancel = self.ctx.cancel.clone();
        let end = loop {
            if !tracked.is_empty() && sightings.values().all(|&n| n > 0) {
                break WindowEnd::AllSeen;
            }
            if self.interrupted() {
                break WindowEnd::Cut(CutReason::Interrupted);
            }
            let now = Instant::now();
            if now >= deadline {
                break WindowEnd::Completed;
            }
            if used >= o.max_receives {
                break WindowEnd::Cut(CutReason::BudgetExhausted { used });
            }
            let remaining = deadline - now;
            // WaitTimeSeconds is whole seconds; never wait past the window by more than the
            // rounding, and short-poll in the last partial second.
            let wait_secs = o.wait.as_secs().min(remaining.as_secs());
            let meta = self.meta(
                Phase::Observe,
                Some(step),
                "ReceiveMessage",
                None,
                Some(name.clone()),
            );
            let poll_started = Instant::now();
            let (mut rec, received, integrity) = self
                .receive_call(
                    meta,
                    &url,
                    ReceiveParams {
                        max: Some(10),
                        wait: Some(Duration::from_secs(wait_secs)),
                        visibility: o.visibility_timeout,
                        attribute_names: vec!["All".to_string()],
                        message_attribute_names: Vec::new(),
                        request_attempt_id: None,
                    },
                    None,
                )
                .await;
            used += 1;
            integrity_failures.extend(integrity);
            let error = rec.error.clone();
            let handles: Vec<(String, String)> = rec
                .output
                .as_ref()
                .map(|out| {
                    out.messages()
                        .iter()
                        .map(|m| {
                            (
                                m.message_id().unwrap_or_default().to_string(),
                                m.receipt_handle().unwrap_or_default().to_string(),
                            )
                        })
                        .collect()
                })
                .unwrap_or_default();
            self.emit_rows(&mut rec);
            if let Some(err) = error {
                break WindowEnd::Cut(cut_reason(&err));
            }
            let rec_was_empty = received.as_ref().is_none_or(|r| r.is_empty());
            for m in received.unwrap_or_default() {
                if let Some(label) = &m.label
                    && let Some(n) = sightings.get_mut(label)
                {
                    *n += 1;
                }
            }
            if o.delete_seen {
                for (id, handle) in handles {
                    self.observe_delete(step, &url, &name, &id, &handle).await;
                }
            }
            let came_back_early = poll_started.elapsed() + Duration::from_millis(100)
                < Duration::from_secs(wait_secs);
            if wait_secs == 0 || (came_back_early && rec_was_empty) {
                // A short poll returns at once, and so does a target that ignores
                // WaitTimeSeconds: pace the polls instead of spending the receive budget on an
                // empty queue in a few milliseconds.
                let pause = remaining.min(Duration::from_millis(200));
                tokio::select! {
                    _ = tokio::time::sleep(pause) => {}
                    _ = cancel.wait_for(|c| *c) => {}
                }
            }
        };

        let elapsed = start.elapsed();
        let window = Window {
            step: step.index,
            line: step.pos.line,
            planned_ms: o.window.as_millis() as u64,
            elapsed_ms: elapsed.as_millis() as u64,
            receives_used: used,
            receive_budget: o.max_receives,
            ended: end.label().to_string(),
        };
        let tracked_rec: Vec<(String, Option<String>, u32)> = tracked
            .iter()
            .map(|l| {
                (
                    l.clone(),
                    self.sent.get(l).and_then(|s| s.message_id.clone()),
                    sightings[l],
                )
            })
            .collect();
        self.observe = Some(ObserveRecord {
            window,
            end: end.clone(),
            tracked: tracked_rec,
        });

        if !integrity_failures.is_empty() {
            // A body that does not match its MD5 fails the case wherever it is received.
            return Ok(Check::Fail(integrity_failures));
        }
        if let WindowEnd::Cut(reason) = &end
            && sightings.values().any(|&n| n == 0)
        {
            // Silence we could not watch to the end proves nothing; sightings still count.
            return Ok(Check::Inconclusive(format!(
                "observation window not completed: {}",
                reason.describe()
            )));
        }
        let classes: BTreeMap<String, OutcomeClass> = sightings
            .iter()
            .map(|(l, &n)| (l.clone(), classify::classify(n, &end)))
            .collect();
        Ok(match &step.expect.outcome {
            Some(expect) => compare_outcomes(expect, &classes),
            None => Check::Pass,
        })
    }

    async fn observe_delete(&mut self, step: &Step, url: &str, name: &str, id: &str, handle: &str) {
        let client = self.ctx.client.clone();
        let meta = self.meta(
            Phase::Observe,
            Some(step),
            "DeleteMessage",
            None,
            Some(name.to_string()),
        );
        let mut rec = call!(
            self,
            meta,
            client
                .delete_message()
                .queue_url(url)
                .receipt_handle(handle)
        )
        .await;
        let label = self.by_id.get(id).cloned();
        for row in &mut rec.rows {
            row.handle_digest = Some(sha256_hex(handle));
            row.message_id = Some(id.to_string());
            row.message = label.clone();
        }
        self.emit_rows(&mut rec);
    }
}

/// Receive parameters shared by receive steps and observation polls.
struct ReceiveParams {
    max: Option<i32>,
    wait: Option<Duration>,
    visibility: Option<Duration>,
    attribute_names: Vec<String>,
    message_attribute_names: Vec<String>,
    request_attempt_id: Option<String>,
}

pub(super) fn cut_reason(err: &CallError) -> CutReason {
    let code = err
        .code
        .clone()
        .or_else(|| err.error_type.clone())
        .unwrap_or_default();
    match err.kind {
        FailureKind::Throttled => CutReason::Throttled(code),
        FailureKind::NoResponse => {
            CutReason::Transport(err.message.clone().unwrap_or_else(|| "no response".into()))
        }
        FailureKind::Response | FailureKind::ServerError => {
            CutReason::ReceiveFailed(err.describe())
        }
    }
}

/// Compares observed classes with an `outcome:` expectation.
pub(super) fn compare_outcomes(
    expect: &OutcomeExpect,
    got: &BTreeMap<String, OutcomeClass>,
) -> Check {
    let wanted: Vec<(String, OutcomeClass)> = match expect {
        OutcomeExpect::All(c) => got.keys().map(|l| (l.clone(), c.value)).collect(),
        OutcomeExpect::PerMessage(m) => m.iter().map(|(l, c)| (l.clone(), c.value)).collect(),
    };
    let mut failures = Vec::new();
    let mut unsure = Vec::new();
    for (label, want) in wanted {
        match got.get(&label) {
            None => failures.push(format!(
                "message {label} was not tracked by the observation"
            )),
            Some(OutcomeClass::Inconclusive) => unsure.push(label),
            Some(actual) if *actual != want => failures.push(format!(
                "expected {label}: {}, observed {}",
                want.as_str(),
                actual.as_str()
            )),
            Some(_) => {}
        }
    }
    if !failures.is_empty() {
        Check::Fail(failures)
    } else if !unsure.is_empty() {
        Check::Inconclusive(format!("outcome of {} is inconclusive", unsure.join(", ")))
    } else {
        Check::Pass
    }
}
