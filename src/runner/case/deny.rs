//! The `deny` step, a server-side fault on an owned queue: the queue's `Policy` gets an explicit
//! Deny of the step's actions, which the runner lifts once `for` has run out (at the next step,
//! sleep tick or observation poll) and always at teardown.
//!
//! The statement denies every principal (`"Principal": "*"`): on a queue that only this run
//! uses, that is the run's own principal, named without asking STS who the run is. An explicit
//! Deny overrides any Allow, so it works whatever the run's IAM policy grants. AWS may take up to
//! a minute to apply a policy change, so whether a call was denied is what its answer says: an
//! `AccessDenied` to a denied action on the queue, from the moment the policy is set to the end of
//! the case, is the deny's doing (a definite refusal the step may expect), never the run's
//! credentials; the `deny` record says when the calls first saw it and how many got through.

use super::*;
use crate::evidence::format::DenyEnd;
use crate::suite::model::Deny;

/// A deny the case set, with what the calls saw of it.
#[derive(Debug, Clone)]
pub(super) struct ActiveDeny {
    step: Step,
    /// The queue's label (its name may be another label's too, in another region).
    label: String,
    /// The queue's name, for the `deny` record.
    queue: String,
    url: String,
    /// The IAM actions as written.
    actions: Vec<String>,
    set_at: chrono::DateTime<Utc>,
    due: Instant,
    due_at: chrono::DateTime<Utc>,
    first_denied_at: Option<chrono::DateTime<Utc>>,
    last_allowed_at: Option<chrono::DateTime<Utc>>,
    denied: u32,
    allowed: u32,
    lifted: bool,
}

impl ActiveDeny {
    /// Whether it denies a call of `operation` on the queue labelled `label` (batches go by
    /// their single action, as SQS authorizes them).
    fn covers(&self, operation: &str, label: &str) -> bool {
        let action = crate::sqs::iam::action_for(operation);
        self.label == label && self.actions.contains(&action)
    }
}

/// The policy document of the denies in force on one queue: per deny step, its index and its
/// actions.
fn policy(denies: &[(usize, &[String])], arn: Option<&str>) -> String {
    let statements: Vec<serde_json::Value> = denies
        .iter()
        .enumerate()
        .map(|(i, (step, actions))| {
            let mut s = serde_json::json!({
                "Sid": format!("sqsprobe-deny-{}-{i}", step + 1),
                "Effect": "Deny",
                "Principal": "*",
                "Action": actions,
            });
            if let Some(arn) = arn {
                s["Resource"] = serde_json::Value::String(arn.to_string());
            }
            s
        })
        .collect();
    serde_json::json!({
        "Version": "2012-10-17",
        "Id": "sqsprobe-deny",
        "Statement": statements,
    })
    .to_string()
}

/// The denies in force on the queue labelled `label` but `except` (a step index), as
/// [`policy`] takes them.
fn in_force<'a>(
    denies: &'a [ActiveDeny],
    label: &str,
    except: Option<usize>,
) -> Vec<(usize, &'a [String])> {
    denies
        .iter()
        .filter(|d| !d.lifted && d.label == label && Some(d.step.index) != except)
        .map(|d| (d.step.index, d.actions.as_slice()))
        .collect()
}

impl CaseRun {
    pub(super) async fn deny_step(&mut self, step: &Step, deny: &Deny) -> Result<Check, String> {
        let label = &deny.queue.value;
        if let Some(def) = self.case.queues.iter().find(|d| &d.label == label)
            && def.attributes.contains_key("Policy")
        {
            return Err(format!(
                "queue `{label}` sets its own `Policy`: a `deny` would replace it, and lifting the deny would lose it"
            ));
        }
        let url = self.queues.url(label)?;
        let arn = self.queues.get(label).and_then(|q| q.arn.clone());
        let actions: Vec<String> = deny.actions.iter().map(|a| a.value.clone()).collect();
        let document = {
            let denies = self.lock_denies();
            let mut statements = in_force(&denies, label, None);
            statements.push((step.index, &actions));
            policy(&statements, arn.as_deref())
        };
        let client = self.ctx.client.clone();
        let meta = self.meta(
            Phase::Step,
            Some(step),
            "SetQueueAttributes",
            None,
            Some(label),
        );
        let mut rec = call!(
            self,
            meta,
            client
                .set_queue_attributes()
                .queue_url(&url)
                .attributes(QueueAttributeName::Policy, document)
        )
        .await;
        if rec.error.is_none() {
            let set_at = Utc::now();
            let lasts = chrono::Duration::from_std(deny.duration).unwrap_or(chrono::TimeDelta::MAX);
            let name = self.queues.name(label);
            self.lock_denies().push(ActiveDeny {
                step: step.clone(),
                label: label.clone(),
                queue: name,
                url,
                actions,
                set_at,
                due: Instant::now() + deny.duration,
                due_at: set_at + lasts,
                first_denied_at: None,
                last_allowed_at: None,
                denied: 0,
                allowed: 0,
                lifted: false,
            });
        }
        Ok(self.judge(step, &mut rec, Observed::default()))
    }

    fn lock_denies(&self) -> std::sync::MutexGuard<'_, Vec<ActiveDeny>> {
        self.denies.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// When the next deny in force is due to be lifted, if one is.
    pub(super) fn next_deny_due(&self) -> Option<Instant> {
        self.lock_denies()
            .iter()
            .filter(|d| !d.lifted)
            .map(|d| d.due)
            .min()
    }

    /// Notes what a call of `operation` on `queue` says about the denies set on it: an
    /// `AccessDenied` is the deny's refusal (a definite one, not the run's credentials), a
    /// success while the deny is set is a call that got through.
    /// Calls a `deny` of the case denied while it was in force.
    pub(super) fn denied_calls(&self) -> u32 {
        self.lock_denies().iter().map(|d| d.denied).sum()
    }

    pub(super) fn see_denies<O>(
        &self,
        operation: &str,
        queue: Option<&str>,
        rec: &mut Recorded<O>,
    ) {
        let Some(queue) = queue else { return };
        let mut denies = self.lock_denies();
        let now = Utc::now();
        for d in denies.iter_mut().filter(|d| d.covers(operation, queue)) {
            match &mut rec.error {
                Some(err) if err.is("AccessDeniedException") => {
                    err.kind = FailureKind::Response;
                    if !d.lifted {
                        d.denied += 1;
                        d.first_denied_at.get_or_insert(now);
                    }
                }
                None if !d.lifted => {
                    d.allowed += 1;
                    d.last_allowed_at = Some(now);
                }
                _ => {}
            }
        }
    }

    /// Lifts every deny whose `for` has run out, or, at teardown, every deny still in force;
    /// emits each one's `deny` record.
    pub(super) async fn lift_denies(&mut self, teardown: bool) {
        loop {
            let now = Instant::now();
            let (due, rest) = {
                let denies = self.lock_denies();
                let Some(d) = denies
                    .iter()
                    .find(|d| !d.lifted && (teardown || d.due <= now))
                else {
                    return;
                };
                let rest: Vec<(usize, Vec<String>)> =
                    in_force(&denies, &d.label, Some(d.step.index))
                        .into_iter()
                        .map(|(i, a)| (i, a.to_vec()))
                        .collect();
                (d.clone(), rest)
            };
            let queue = self
                .queues
                .get(&due.label)
                .map(|q| (q.alive, q.arn.clone()));
            let (lifted_at, lift_error) = match queue {
                Some((true, arn)) => {
                    let document = if rest.is_empty() {
                        String::new()
                    } else {
                        let rest: Vec<(usize, &[String])> =
                            rest.iter().map(|(i, a)| (*i, a.as_slice())).collect();
                        policy(&rest, arn.as_deref())
                    };
                    let client = self.ctx.client.clone();
                    let req = client
                        .set_queue_attributes()
                        .queue_url(&due.url)
                        .attributes(QueueAttributeName::Policy, document);
                    let mut rec = if teardown {
                        let meta = self.meta(
                            Phase::Teardown,
                            None,
                            "SetQueueAttributes",
                            None,
                            Some(&due.label),
                        );
                        call!(finish: self, meta, req).await
                    } else {
                        let meta = self.meta(
                            Phase::Step,
                            Some(&due.step),
                            "SetQueueAttributes",
                            None,
                            Some(&due.label),
                        );
                        call!(self, meta, req).await
                    };
                    let error = rec.error.as_ref().map(|e| e.describe());
                    self.emit_rows(&mut rec);
                    match error {
                        None => (Some(Utc::now()), None),
                        Some(e) => (None, Some(self.masker.mask(&e))),
                    }
                }
                _ => (
                    None,
                    Some("the queue was deleted before the deny was lifted".to_string()),
                ),
            };
            let record = {
                let mut denies = self.lock_denies();
                let Some(d) = denies
                    .iter_mut()
                    .find(|d| !d.lifted && d.step.index == due.step.index && d.label == due.label)
                else {
                    return;
                };
                d.lifted = true;
                DenyEnd {
                    run_id: self.ctx.run_id.clone(),
                    case: self.case.id.clone(),
                    step: d.step.index,
                    line: d.step.pos.line,
                    queue: d.queue.clone(),
                    actions: d.actions.clone(),
                    set_at: rfc3339(d.set_at),
                    due_at: rfc3339(d.due_at),
                    first_denied_at: d.first_denied_at.map(rfc3339),
                    took_effect_ms: d
                        .first_denied_at
                        .map(|t| (t - d.set_at).num_milliseconds().max(0) as u64),
                    denied_calls: d.denied,
                    allowed_calls: d.allowed,
                    last_allowed_at: d.last_allowed_at.map(rfc3339),
                    lifted_at: lifted_at.map(rfc3339),
                    lifted_by: if teardown { "teardown" } else { "timer" }.to_string(),
                    lift_error,
                    trial: self.trial,
                }
            };
            self.emit(Record::Deny(record));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::suite::model::Pos;

    fn deny(index: usize, actions: &[&str]) -> ActiveDeny {
        let now = Utc::now();
        ActiveDeny {
            step: Step {
                index,
                pos: Pos::default(),
                action: Action::Sleep(Duration::ZERO),
                expect: StepExpect::default(),
                fault: None,
                wire: None,
            },
            label: "q".into(),
            queue: "sqsprobe-r-c-q".into(),
            url: "u".into(),
            actions: actions.iter().map(|a| a.to_string()).collect(),
            set_at: now,
            due: Instant::now(),
            due_at: now,
            first_denied_at: None,
            last_allowed_at: None,
            denied: 0,
            allowed: 0,
            lifted: false,
        }
    }

    #[test]
    fn a_deny_covers_its_actions_and_their_batches_on_its_queue() {
        let d = deny(0, &["sqs:DeleteMessage"]);
        assert!(d.covers("DeleteMessage", "q"));
        assert!(d.covers("DeleteMessageBatch", "q"));
        assert!(!d.covers("ReceiveMessage", "q"));
        assert!(!d.covers("DeleteMessage", "other"));
    }

    #[test]
    fn the_policy_denies_every_principal_each_step_its_statement() {
        let mut a = deny(1, &["sqs:DeleteMessage"]);
        let b = deny(3, &["sqs:ReceiveMessage", "sqs:SendMessage"]);
        let pair = [a.clone(), b];
        let both = in_force(&pair, "q", None);
        assert_eq!(in_force(&pair, "q", Some(1)).len(), 1);
        assert!(in_force(&[a.clone()], "other", None).is_empty());
        let doc: serde_json::Value =
            serde_json::from_str(&policy(&both, Some("arn:aws:sqs:r:1:q"))).unwrap();
        let s = doc["Statement"].as_array().unwrap();
        assert_eq!(s.len(), 2);
        assert_eq!(s[0]["Effect"], "Deny");
        assert_eq!(s[0]["Principal"], "*");
        assert_eq!(s[0]["Action"], serde_json::json!(["sqs:DeleteMessage"]));
        assert_eq!(s[1]["Resource"], "arn:aws:sqs:r:1:q");
        assert_eq!(s[1]["Sid"], "sqsprobe-deny-4-1");
        // What the emulator enforces is what the runner writes.
        let text = policy(
            &in_force(std::slice::from_ref(&a), "q", None),
            Some("arn:aws:sqs:r:1:q"),
        );
        a.lifted = true;
        assert!(
            in_force(&[a], "q", None).is_empty(),
            "a lifted deny is no longer in force"
        );
        assert!(crate::emulator::policy_denies(
            &text,
            "DeleteMessageBatch",
            "arn:aws:sqs:r:1:q",
            "1"
        ));
        assert!(!crate::emulator::policy_denies(
            &text,
            "ReceiveMessage",
            "arn:aws:sqs:r:1:q",
            "1"
        ));
    }
}
