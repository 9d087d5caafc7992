//! The denies a case has set (its `deny` steps' policies) and what its calls saw of them.
//!
//! A deny is an explicit Deny of some actions in an owned queue's `Policy`, for every principal
//! (`"Principal": "*"`: on a queue only this run uses, that is the run's own principal, named
//! without asking STS who the run is). AWS may take up to a minute to apply a policy change, so
//! whether a call was denied is what its answer says: an `AccessDenied` to a denied action on
//! the queue, from the moment the policy is set to the end of the case, is the deny's doing (a
//! definite refusal the step may expect), never the run's credentials.
//!
//! This table makes no calls: the `deny` step and the lifting (`deny.rs`) set and lift the
//! policies, every call of the case tells the table its answer ([`Denies::see`]), and each deny
//! lifted becomes its `deny` record ([`ActiveDeny::end`]).

use crate::runner::call::rfc3339;
use chrono::{DateTime, Utc};
use sqsprobe_core::classify::{CallError, FailureKind};
use sqsprobe_core::evidence::format::DenyEnd;
use sqsprobe_core::suite::model::Step;
use tokio::time::Instant;

/// A deny the case set, with what the calls saw of it.
#[derive(Debug, Clone)]
pub(super) struct ActiveDeny {
    /// The `deny` step that set it.
    pub step: Step,
    /// The queue's label (its name may be another label's too, in another region).
    pub label: String,
    /// The queue's name, for the `deny` record.
    pub queue: String,
    pub url: String,
    /// The IAM actions as written.
    pub actions: Vec<String>,
    pub set_at: DateTime<Utc>,
    /// When its `for` runs out.
    pub due: Instant,
    pub due_at: DateTime<Utc>,
    pub first_denied_at: Option<DateTime<Utc>>,
    pub last_allowed_at: Option<DateTime<Utc>>,
    pub denied: u32,
    pub allowed: u32,
    pub lifted: bool,
}

impl ActiveDeny {
    /// Whether it denies a call of `operation` on the queue labelled `label` (batches go by
    /// their single action, as SQS authorizes them).
    fn covers(&self, operation: &str, label: &str) -> bool {
        let action = sqsprobe_facts::sqs::iam::action_for(operation);
        self.label == label && self.actions.contains(&action)
    }

    /// Its `deny` record once lifted (`lifted_at`) or not (`lift_error`), by the timer or at
    /// teardown.
    pub(super) fn end(
        &self,
        run_id: &str,
        case: &str,
        trial: Option<u32>,
        lifted_at: Option<DateTime<Utc>>,
        lift_error: Option<String>,
        teardown: bool,
    ) -> DenyEnd {
        DenyEnd {
            run_id: run_id.to_string(),
            case: case.to_string(),
            step: self.step.index,
            line: self.step.pos.line,
            queue: self.queue.clone(),
            actions: self.actions.clone(),
            set_at: rfc3339(self.set_at),
            due_at: rfc3339(self.due_at),
            first_denied_at: self.first_denied_at.map(rfc3339),
            took_effect_ms: self
                .first_denied_at
                .map(|t| (t - self.set_at).num_milliseconds().max(0) as u64),
            denied_calls: self.denied,
            allowed_calls: self.allowed,
            last_allowed_at: self.last_allowed_at.map(rfc3339),
            lifted_at: lifted_at.map(rfc3339),
            lifted_by: if teardown { "teardown" } else { "timer" }.to_string(),
            lift_error,
            trial,
        }
    }
}

/// A deny due to be lifted, and the policy its queue keeps without it.
#[derive(Debug)]
pub(super) struct Lift {
    pub deny: ActiveDeny,
    /// The other denies still in force on its queue: per deny step, its index and actions.
    rest: Vec<(usize, Vec<String>)>,
}

impl Lift {
    /// The queue's `Policy` once the deny is lifted: the denies left, or none at all (an empty
    /// `Policy` removes it).
    pub(super) fn document(&self, arn: Option<&str>) -> String {
        if self.rest.is_empty() {
            return String::new();
        }
        let rest: Vec<(usize, &[String])> =
            self.rest.iter().map(|(i, a)| (*i, a.as_slice())).collect();
        policy(&rest, arn)
    }
}

/// The denies of one case (see the module doc).
#[derive(Debug, Default)]
pub(super) struct Denies(Vec<ActiveDeny>);

impl Denies {
    /// The queue's `Policy` with a new deny of `actions` by step `step`, beside the denies
    /// already in force on the queue labelled `label`.
    pub(super) fn policy_with(
        &self,
        label: &str,
        step: usize,
        actions: &[String],
        arn: Option<&str>,
    ) -> String {
        let mut statements = in_force(&self.0, label, None);
        statements.push((step, actions));
        policy(&statements, arn)
    }

    /// Notes a deny the target took.
    pub(super) fn add(&mut self, deny: ActiveDeny) {
        self.0.push(deny);
    }

    /// When the next deny in force is due to be lifted, if one is.
    pub(super) fn next_due(&self) -> Option<Instant> {
        self.0.iter().filter(|d| !d.lifted).map(|d| d.due).min()
    }

    /// Calls a `deny` of the case denied while it was in force.
    pub(super) fn denied_calls(&self) -> u32 {
        self.0.iter().map(|d| d.denied).sum()
    }

    /// Notes what a call of `operation` on the queue labelled `queue` says about the denies
    /// set on it: an `AccessDenied` is the deny's refusal (a definite one, not the run's
    /// credentials: its kind becomes a plain response), a success while the deny is set is a
    /// call that got through.
    pub(super) fn see(
        &mut self,
        operation: &str,
        queue: Option<&str>,
        error: &mut Option<CallError>,
    ) {
        let Some(queue) = queue else { return };
        let now = Utc::now();
        for d in self.0.iter_mut().filter(|d| d.covers(operation, queue)) {
            match error {
                Some(err) if err.is("AccessDeniedException") => {
                    err.kind = FailureKind::Response;
                    err.denied = true;
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

    /// The first deny in force whose `for` has run out by `now`, or at teardown the first
    /// still in force at all.
    pub(super) fn due(&self, now: Instant, teardown: bool) -> Option<Lift> {
        let d = self
            .0
            .iter()
            .find(|d| !d.lifted && (teardown || d.due <= now))?;
        let rest = in_force(&self.0, &d.label, Some(d.step.index))
            .into_iter()
            .map(|(i, a)| (i, a.to_vec()))
            .collect();
        Some(Lift {
            deny: d.clone(),
            rest,
        })
    }

    /// Marks the deny step `step` set on `label` lifted (or given up) and returns it as it
    /// ends, unless it was already.
    pub(super) fn mark_lifted(&mut self, step: usize, label: &str) -> Option<ActiveDeny> {
        let d = self
            .0
            .iter_mut()
            .find(|d| !d.lifted && d.step.index == step && d.label == label)?;
        d.lifted = true;
        Some(d.clone())
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

#[cfg(test)]
mod tests {
    use super::*;
    use sqsprobe_core::suite::model::{Action, Pos, StepExpect};
    use std::time::Duration;

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
        assert!(sqsprobe_emulator::policy_denies(
            &text,
            "DeleteMessageBatch",
            "arn:aws:sqs:r:1:q",
            "1"
        ));
        assert!(!sqsprobe_emulator::policy_denies(
            &text,
            "ReceiveMessage",
            "arn:aws:sqs:r:1:q",
            "1"
        ));
    }
}
