//! The case's queue table: each queue of the case by label (its name, region, URL once
//! created, ARN once fetched, whether this case holds it), the order they were created in (for
//! teardown in reverse), each queue's default visibility timeout, the queue each named attempt
//! receives from, and the move tasks started.
//!
//! The table makes no calls: the lifecycle steps (`lifecycle.rs`) call SQS and tell the table
//! what the answers were. Everything here is a lookup or a rule over what it holds.

use crate::runner::queues::{OwnedQueue, Registry, queue_name, run_prefix};
use sqsprobe_core::suite::model::{Action, Case, QueueDef};
use std::collections::{BTreeMap, HashMap};
use std::time::Duration;

/// SQS's default visibility timeout, for a queue created without one.
const SQS_DEFAULT_VISIBILITY: Duration = Duration::from_secs(30);

/// A queue of the case, by label.
#[derive(Debug, Clone)]
pub(super) struct CaseQueue {
    pub name: String,
    /// The region its calls are signed for when it is not the run's (`region:`).
    pub region: Option<String>,
    pub url: Option<String>,
    pub arn: Option<String>,
    /// Created by this case and not yet deleted (by teardown or a delete-queue step).
    pub alive: bool,
    pub created: bool,
}

impl CaseQueue {
    /// The region the queue lives in: its own `region:`, else the run's.
    pub(super) fn region_in<'a>(&'a self, run_region: &'a str) -> &'a str {
        self.region.as_deref().unwrap_or(run_region)
    }
}

/// The queue table of one case (see the module doc).
#[derive(Debug)]
pub(super) struct QueueTable {
    queues: BTreeMap<String, CaseQueue>,
    /// Creation order, for teardown in reverse.
    created_order: Vec<String>,
    /// Each queue's default visibility timeout as the case set it (SQS's 30 s otherwise), so
    /// every receive row can say how long its lease is.
    visibility: HashMap<String, Duration>,
    /// The handles of the move tasks started, by the name the suite gave them.
    move_tasks: HashMap<String, String>,
    /// By attempt name (unique in a case): the label of the queue its receive step receives
    /// from.
    attempts: HashMap<String, String>,
    /// The run's region, the one a queue without `region:` is in.
    run_region: String,
    /// The run's prefix and the case's (the trial's) name key: what a listing is held to.
    own_prefix: String,
}

impl QueueTable {
    /// The table of `case`'s queues (its `queues:` and those its create-queue steps define),
    /// named for run `run_id` and `name_key` (the case id, `-t<k>` for a trial).
    pub(super) fn new(case: &Case, run_id: &str, name_key: &str, run_region: &str) -> Self {
        let mut queues = BTreeMap::new();
        let mut shared = Vec::new();
        let mut visibility = HashMap::new();
        let defs = case
            .queues
            .iter()
            .chain(case.steps.iter().filter_map(|s| match &s.action {
                Action::CreateQueue(def) => Some(def),
                _ => None,
            }));
        for def in defs {
            // The last definition of a label sets its visibility, the first its name.
            visibility.insert(def.label.clone(), default_visibility(def));
            if queues.contains_key(&def.label) {
                continue;
            }
            queues.insert(
                def.label.clone(),
                queue_entry(run_id, name_key, run_region, def),
            );
            if let Some(other) = &def.same_name_as {
                shared.push((def.label.clone(), other.value.clone()));
            }
        }
        // `same_name_as`: the other queue's name (a chain ends at a queue with its own name;
        // the parser refused cycles).
        for (label, mut other) in shared.clone() {
            while let Some((_, next)) = shared.iter().find(|(l, _)| *l == other) {
                other = next.clone();
            }
            if let Some(name) = queues.get(&other).map(|q: &CaseQueue| q.name.clone())
                && let Some(q) = queues.get_mut(&label)
            {
                q.name = name;
            }
        }
        let mut attempts = HashMap::new();
        for step in &case.steps {
            if let Action::Receive(r) = &step.action
                && let Some(attempt) = &r.attempt
            {
                attempts.insert(attempt.value.clone(), r.queue.value.clone());
            }
        }
        QueueTable {
            queues,
            created_order: Vec::new(),
            visibility,
            move_tasks: HashMap::new(),
            attempts,
            run_region: run_region.to_string(),
            own_prefix: format!("{}{name_key}-", run_prefix(run_id)),
        }
    }

    /// The prefix a listing is held to: the run's, then the case's (the trial's) name key, so
    /// a listing never reaches other people's queues.
    pub(super) fn own_prefix(&self) -> &str {
        &self.own_prefix
    }

    /// The queue labelled `label`, if the case defines one.
    pub(super) fn get(&self, label: &str) -> Option<&CaseQueue> {
        self.queues.get(label)
    }

    /// The queue labelled `label`, or why the case has none.
    pub(super) fn queue(&self, label: &str) -> Result<&CaseQueue, String> {
        self.queues
            .get(label)
            .ok_or_else(|| format!("queue `{label}` is not defined in this case"))
    }

    /// The name of queue `label` (empty for a label the case does not define).
    pub(super) fn name(&self, label: &str) -> String {
        self.queues
            .get(label)
            .map(|q| q.name.clone())
            .unwrap_or_default()
    }

    /// The region queue `label` is in: its own, else the run's.
    pub(super) fn region_of(&self, label: &str) -> &str {
        self.queues
            .get(label)
            .map_or(self.run_region.as_str(), |q| q.region_in(&self.run_region))
    }

    /// The URL of queue `label`, once created.
    pub(super) fn url(&self, label: &str) -> Result<String, String> {
        self.queue(label)?.url.clone().ok_or_else(|| {
            format!(
                "queue `{label}` was never created (create: false, or its create-queue step failed)"
            )
        })
    }

    /// The ARN of queue `label`, once fetched.
    pub(super) fn arn(&self, label: &str) -> Result<String, String> {
        self.queues
            .get(label)
            .and_then(|q| q.arn.clone())
            .ok_or_else(|| format!("queue `{label}` has no ARN (was it created?)"))
    }

    /// Notes the ARN the target gave queue `label`.
    pub(super) fn set_arn(&mut self, label: &str, arn: Option<String>) {
        if let Some(q) = self.queues.get_mut(label) {
            q.arn = arn;
        }
    }

    /// Whether no queue of the case has an ARN yet.
    pub(super) fn no_arns(&self) -> bool {
        self.queues.values().all(|q| q.arn.is_none())
    }

    /// The labels of the queues with a URL (created, by this case or found).
    pub(super) fn with_url(&self) -> Vec<String> {
        self.labels(|q| q.url.is_some())
    }

    /// The labels of the queues without a URL (never created, or created unseen).
    pub(super) fn without_url(&self) -> Vec<String> {
        self.labels(|q| q.url.is_none())
    }

    fn labels(&self, keep: impl Fn(&CaseQueue) -> bool) -> Vec<String> {
        self.queues
            .iter()
            .filter(|(_, q)| keep(q))
            .map(|(l, _)| l.clone())
            .collect()
    }

    /// The ARN queue `label`'s name would have in the account of the case's other queues
    /// (`aws` / `000000000000` when none has an ARN) and its own region; empty for a label the
    /// case does not define.
    pub(super) fn derived_arn(&self, label: &str) -> String {
        let Some(q) = self.queues.get(label) else {
            return String::new();
        };
        let region = q.region_in(&self.run_region);
        // `arn:<partition>:sqs:<region>:<account>:<name>` of another queue, with this one's
        // region and name.
        let (partition, account) = self
            .queues
            .values()
            .find_map(|q| {
                let arn = sqsprobe_facts::sqs::arn::parse(q.arn.as_deref()?)?;
                Some((arn.partition.to_string(), arn.account.to_string()))
            })
            .unwrap_or_else(|| ("aws".to_string(), "000000000000".to_string()));
        format!("arn:{partition}:sqs:{region}:{account}:{}", q.name)
    }

    /// Refuses a case whose labels that share a name (`same_name_as`) land in one region: the
    /// parser checks the regions written, but a queue without `region:` is in the run's
    /// (`--region`), which may be the other's.
    pub(super) fn check_one_queue_per_name(&self) -> Result<(), String> {
        let mut seen: HashMap<(&str, &str), &str> = HashMap::new();
        for (label, q) in &self.queues {
            let region = q.region_in(&self.run_region);
            if let Some(first) = seen.insert((&q.name, region), label) {
                return Err(format!(
                    "queues `{first}` and `{label}` share a name and would both be in {region} \
                     (the run's region is {}): one region holds one queue per name; give them \
                     different `region:`s",
                    self.run_region
                ));
            }
        }
        Ok(())
    }

    /// Whether `url` is the queue of another label of this case that shares `label`'s name and
    /// that this run created.
    pub(super) fn shares_name_with_own(&self, label: &str, url: &str, registry: &Registry) -> bool {
        let Some(name) = self.queues.get(label).map(|q| &q.name) else {
            return false;
        };
        self.queues.iter().any(|(l, q)| {
            l != label
                && &q.name == name
                && q.url.as_deref() == Some(url)
                && registry.owns(q.region_in(&self.run_region), url)
        })
    }

    /// Registers `url` as this case's queue `label` (teardown will delete it) and returns the
    /// queue for the run's registry; `None` for a label the case does not define.
    pub(super) fn adopt(&mut self, label: &str, url: &str, case: &str) -> Option<OwnedQueue> {
        let q = self.queues.get_mut(label)?;
        q.url = Some(url.to_string());
        q.alive = true;
        q.created = true;
        let owned = OwnedQueue {
            name: q.name.clone(),
            url: url.to_string(),
            case: case.to_string(),
            region: q.region_in(&self.run_region).to_string(),
        };
        if !self.created_order.iter().any(|l| l == label) {
            self.created_order.push(label.to_string());
        }
        Some(owned)
    }

    /// Notes that queue `label` was deleted: the case no longer holds it.
    pub(super) fn mark_deleted(&mut self, label: &str) {
        if let Some(q) = self.queues.get_mut(label) {
            q.alive = false;
        }
    }

    /// The queues the case created, newest first: the order teardown deletes them in.
    pub(super) fn teardown_order(&self) -> Vec<String> {
        self.created_order.iter().rev().cloned().collect()
    }

    /// The labels of the queues in `label`'s region, by URL (one URL may name a queue in each
    /// of two regions, as moto's do).
    pub(super) fn labels_by_url_in_region_of(&self, label: &str) -> HashMap<String, String> {
        let region = self.region_of(label);
        self.queues
            .iter()
            .filter(|(_, q)| q.region_in(&self.run_region) == region)
            .filter_map(|(l, q)| q.url.clone().map(|u| (u, l.clone())))
            .collect()
    }

    /// The lease a receive on `queue` gives: the request's VisibilityTimeout, else the queue's.
    pub(super) fn lease_for(&self, queue: &str, requested: Option<Duration>) -> Duration {
        requested.unwrap_or_else(|| {
            self.visibility
                .get(queue)
                .copied()
                .unwrap_or(SQS_DEFAULT_VISIBILITY)
        })
    }

    /// Notes queue `label`'s new default visibility timeout (a SetQueueAttributes took it).
    pub(super) fn set_visibility(&mut self, label: &str, timeout: Duration) {
        self.visibility.insert(label.to_string(), timeout);
    }

    /// The label of the queue attempt `attempt` receives from (so `delete: {attempt: A}` needs
    /// no `queue:`).
    pub(super) fn attempt_queue(&self, attempt: &str) -> Option<String> {
        self.attempts.get(attempt).cloned()
    }

    /// Remembers the handle of the move task the suite named `name`.
    pub(super) fn remember_task(&mut self, name: &str, handle: &str) {
        self.move_tasks.insert(name.to_string(), handle.to_string());
    }

    /// The handle of the move task named `name`, if it was started.
    pub(super) fn task(&self, name: &str) -> Option<String> {
        self.move_tasks.get(name).cloned()
    }
}

fn queue_entry(run_id: &str, case: &str, run_region: &str, def: &QueueDef) -> CaseQueue {
    CaseQueue {
        name: format!(
            "{}{}",
            queue_name(run_id, case, &def.label, def.kind),
            def.name_suffix.as_deref().unwrap_or_default()
        ),
        region: def
            .region
            .as_ref()
            .map(|r| r.value.clone())
            .filter(|r| r != run_region),
        url: None,
        arn: None,
        alive: false,
        created: false,
    }
}

/// The visibility timeout a queue definition creates its queue with.
fn default_visibility(def: &QueueDef) -> Duration {
    def.visibility_timeout
        .or_else(|| {
            def.attributes
                .get("VisibilityTimeout")
                .and_then(|v| v.parse().ok())
                .map(Duration::from_secs)
        })
        .unwrap_or(SQS_DEFAULT_VISIBILITY)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn case(yaml: &str) -> Case {
        let suite = sqsprobe_core::suite::parse_suite(
            "t.yaml",
            yaml,
            &sqsprobe_core::suite::Limits::default(),
        )
        .expect("a valid suite");
        suite.cases.into_iter().next().expect("one case")
    }

    #[test]
    fn an_attempt_receives_from_the_queue_of_its_receive_step() {
        let c = case(
            "cases:\n  - id: c\n    behaviour: b\n    source: s\n    queues: {a: {}, b: {}}\n    \
             steps:\n      - receive: {queue: a, as: A}\n      - receive: {queue: b, as: B}\n      \
             - receive: {queue: b}\n",
        );
        let table = QueueTable::new(&c, "r1", "c", "us-east-1");
        assert_eq!(table.attempt_queue("A").as_deref(), Some("a"));
        assert_eq!(table.attempt_queue("B").as_deref(), Some("b"));
        assert_eq!(table.attempt_queue("C"), None);
    }
}
