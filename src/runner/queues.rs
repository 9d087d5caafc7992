//! Owned, disposable queues: naming, creation with ownership tags, and the registry that
//! guarantees teardown.
//!
//! The runner only ever sends a mutating call to a queue URL that a CreateQueue of this run
//! returned. The [`Registry`] is that list; teardown and Ctrl-C handling read it, and nothing
//! else (no listing, no name matching) can make a queue "ours".

use sqsprobe_core::evidence::sha256_hex;
use sqsprobe_core::suite::model::{QueueDef, QueueKind, RedriveAllow};
use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};

/// SQS's limit on queue names, `.fifo` included.
pub(crate) const MAX_QUEUE_NAME: usize = 80;

/// Tag keys written on every owned queue.
pub(crate) const OWNER_TAG: &str = "sqsprobe:owner";
pub(crate) const RUN_TAG: &str = "sqsprobe:run";
pub(crate) const CASE_TAG: &str = "sqsprobe:case";
/// A random id per sqsprobe process: two processes given the same `--run-id` share queue
/// names, never this tag, so neither adopts (or deletes) the other's queues.
pub(crate) const INSTANCE_TAG: &str = "sqsprobe:instance";

/// A fresh instance id for this process (64 random bits, hex).
pub(crate) fn new_instance() -> String {
    format!("{:016x}", rand::random::<u64>())
}

/// What a queue's tags say about whose it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Ownership {
    /// This run's tag and this process's instance.
    Ours,
    /// Tagged for another run or another process (the text says which).
    Foreign(String),
    /// No ownership tags to read (a target that drops tags, or has not applied them yet).
    Untagged,
}

/// Reads the ownership tags of a queue against this run and process.
pub(crate) fn ownership(tags: &HashMap<String, String>, run_id: &str, instance: &str) -> Ownership {
    match (tags.get(RUN_TAG), tags.get(INSTANCE_TAG)) {
        (None, None) => Ownership::Untagged,
        (Some(run), _) if run != run_id => Ownership::Foreign(format!("run {run}")),
        (_, Some(other)) if other != instance => Ownership::Foreign(format!(
            "another sqsprobe process with the same run id (instance {other})"
        )),
        (Some(_), Some(_)) => Ownership::Ours,
        // This run's tag without an instance: written by a process that did not know about
        // instances, or half-applied. It cannot be proven ours.
        (Some(_), None) | (None, Some(_)) => {
            Ownership::Foreign("ownership tags without this process's instance".to_string())
        }
    }
}

/// The name prefix every queue of a run shares: `sqsprobe-<run-id>-`.
pub(crate) fn run_prefix(run_id: &str) -> String {
    format!("sqsprobe-{run_id}-")
}

/// `sqsprobe-<run-id>-<case>-<label>`, trimmed to 80 characters with `.fifo` kept.
///
/// When trimming is needed, the cut name ends in 8 hex digits of the digest of what follows the
/// run's prefix, so two long case ids that share a prefix still get distinct queues, and the
/// name after the prefix is the same in every run (the emulator's chaos dice key on it).
pub(crate) fn queue_name(run_id: &str, case: &str, label: &str, kind: QueueKind) -> String {
    let suffix = if kind == QueueKind::Fifo { ".fifo" } else { "" };
    let tail = format!("{case}-{label}");
    let full = format!("{}{tail}", run_prefix(run_id));
    let room = MAX_QUEUE_NAME - suffix.len();
    if full.len() <= room {
        return format!("{full}{suffix}");
    }
    let hash = &sha256_hex(&tail)[..8];
    let keep = room - hash.len() - 1;
    // Names are ASCII by construction (ids and labels are validated), so byte cuts are safe.
    format!("{}-{hash}{suffix}", &full[..keep])
}

/// A queue this run created.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct OwnedQueue {
    pub name: String,
    pub url: String,
    pub case: String,
    /// The region it lives in (the run's, or its `region:`). A queue is its region and its URL
    /// together: a target may answer the same URL for one name in two regions (moto's
    /// `/<account>/<name>` has no region in it), and those are still two queues.
    pub region: String,
}

/// Every queue the run created and has not yet deleted, by region and URL. Shared by all
/// cases and by the Ctrl-C path.
#[derive(Debug, Clone, Default)]
pub(crate) struct Registry {
    inner: Arc<Mutex<HashMap<(String, String), OwnedQueue>>>,
}

impl Registry {
    pub(crate) fn add(&self, queue: OwnedQueue) {
        if let Ok(mut map) = self.inner.lock() {
            map.insert((queue.region.clone(), queue.url.clone()), queue);
        }
    }

    /// Forgets the queue at `url` in `region`: it was deleted (or proven gone).
    pub(crate) fn remove(&self, region: &str, url: &str) {
        if let Ok(mut map) = self.inner.lock() {
            map.remove(&(region.to_string(), url.to_string()));
        }
    }

    /// Whether the queue at `url` in `region` was created by this run and not yet deleted.
    pub(crate) fn owns(&self, region: &str, url: &str) -> bool {
        self.inner
            .lock()
            .map(|m| m.contains_key(&(region.to_string(), url.to_string())))
            .unwrap_or(false)
    }

    /// What is still alive, sorted by region and name.
    pub(crate) fn remaining(&self) -> Vec<OwnedQueue> {
        let mut v: Vec<OwnedQueue> = self
            .inner
            .lock()
            .map(|m| m.values().cloned().collect())
            .unwrap_or_default();
        v.sort_by(|a, b| (&a.region, &a.name).cmp(&(&b.region, &b.name)));
        v
    }
}

/// Seconds as the string SQS attributes take.
fn secs(d: std::time::Duration) -> String {
    d.as_secs().to_string()
}

/// The CreateQueue attributes for a queue definition. `arn_of` resolves a label of the same
/// case to the ARN of its (already created) queue.
pub(crate) fn create_attributes(
    def: &QueueDef,
    arn_of: &dyn Fn(&str) -> Option<String>,
) -> BTreeMap<String, String> {
    let mut a = BTreeMap::new();
    if def.kind == QueueKind::Fifo {
        a.insert("FifoQueue".to_string(), "true".to_string());
    }
    if let Some(d) = def.visibility_timeout {
        a.insert("VisibilityTimeout".into(), secs(d));
    }
    if let Some(d) = def.delay {
        a.insert("DelaySeconds".into(), secs(d));
    }
    if let Some(d) = def.retention {
        a.insert("MessageRetentionPeriod".into(), secs(d));
    }
    if let Some(d) = def.receive_wait {
        a.insert("ReceiveMessageWaitTimeSeconds".into(), secs(d));
    }
    if let Some(n) = def.max_message_size {
        a.insert("MaximumMessageSize".into(), n.to_string());
    }
    if let Some(b) = def.content_based_dedup {
        a.insert("ContentBasedDeduplication".into(), b.to_string());
    }
    if let Some(s) = &def.dedup_scope {
        a.insert("DeduplicationScope".into(), s.clone());
    }
    if let Some(s) = &def.throughput_limit {
        a.insert("FifoThroughputLimit".into(), s.clone());
    }
    if let Some(r) = &def.redrive {
        let arn = arn_of(&r.dlq.value).unwrap_or_default();
        a.insert(
            "RedrivePolicy".into(),
            serde_json::json!({"deadLetterTargetArn": arn, "maxReceiveCount": r.max_receive_count})
                .to_string(),
        );
    }
    if let Some(allow) = &def.redrive_allow {
        let policy = match allow {
            RedriveAllow::AllowAll => serde_json::json!({"redrivePermission": "allowAll"}),
            RedriveAllow::DenyAll => serde_json::json!({"redrivePermission": "denyAll"}),
            RedriveAllow::ByQueue(labels) => {
                let arns: Vec<String> = labels
                    .iter()
                    .map(|l| arn_of(&l.value).unwrap_or_default())
                    .collect();
                serde_json::json!({"redrivePermission": "byQueue", "sourceQueueArns": arns})
            }
        };
        a.insert("RedriveAllowPolicy".into(), policy.to_string());
    }
    for (k, v) in &def.attributes {
        a.insert(k.clone(), v.clone());
    }
    a
}

/// What one owned queue's emulator chaos is drawn from (the embedded emulator only).
#[derive(Debug, Clone, Copy)]
pub(crate) struct QueueChaos<'a> {
    /// The case's `emulator_chaos:` spec, if it has one.
    pub case_spec: Option<&'a str>,
    /// The run's `--chaos`, whose queue settings every other queue gets.
    pub run: Option<&'a sqsprobe_emulator::Chaos>,
    /// The run's seed (`run_start.seed`).
    pub run_seed: u64,
    pub case: &'a str,
    /// 1-based; 1 for a single-trial case.
    pub trial: u32,
    pub label: &'a str,
}

impl QueueChaos<'_> {
    /// The queue's chaos tag: the case's spec, else the run's queue settings (not its
    /// server-wide latency and throttle), with the seed mixed from the spec's seed (0 when it
    /// names none), the run's seed, the case, the trial and the queue label — never the run id,
    /// so the seeds in `run_start` repeat it. Every trial's queue thus rolls its own dice
    /// (independent draws, where one seed for all would make every trial roll the same first
    /// die), and the same seeds give the same per-trial outcomes. `None` when no queue
    /// behaviour is on.
    pub(crate) fn tag(&self) -> Option<String> {
        let mut chaos = match (self.case_spec, self.run) {
            (Some(spec), _) => sqsprobe_emulator::Chaos::parse_queue(spec).ok()?,
            (None, Some(run)) => sqsprobe_emulator::Chaos {
                latency: std::time::Duration::ZERO,
                throttle: 0.0,
                ..*run
            },
            (None, None) => return None,
        };
        if chaos.is_off() {
            return None;
        }
        let key = format!(
            "{}\u{1f}{}\u{1f}{}\u{1f}{}",
            self.run_seed, self.case, self.trial, self.label
        );
        chaos.seed = Some(sqsprobe_emulator::mix_seed(chaos.seed.unwrap_or(0), &key));
        Some(chaos.to_string())
    }
}

/// The tags of an owned queue: the suite's own, then ownership (which a suite cannot override).
pub(crate) fn create_tags(
    def: &QueueDef,
    run_id: &str,
    instance: &str,
    case: &str,
    emulator_chaos: Option<&str>,
) -> BTreeMap<String, String> {
    let mut t = def.tags.clone();
    if let Some(spec) = emulator_chaos {
        t.insert(sqsprobe_emulator::CHAOS_TAG.into(), spec.into());
    }
    t.insert(OWNER_TAG.into(), "sqsprobe".into());
    t.insert(RUN_TAG.into(), run_id.into());
    t.insert(INSTANCE_TAG.into(), instance.into());
    t.insert(CASE_TAG.into(), case.into());
    t
}

#[cfg(test)]
mod tests {
    use super::*;
    use sqsprobe_core::suite::model::{Pos, Redrive, Spanned};

    #[test]
    fn only_this_run_and_this_process_make_a_queue_ours() {
        let tags = |run: Option<&str>, inst: Option<&str>| {
            let mut t = HashMap::new();
            if let Some(r) = run {
                t.insert(RUN_TAG.to_string(), r.to_string());
            }
            if let Some(i) = inst {
                t.insert(INSTANCE_TAG.to_string(), i.to_string());
            }
            t
        };
        assert_eq!(
            ownership(&tags(Some("r1"), Some("a")), "r1", "a"),
            Ownership::Ours
        );
        assert_eq!(ownership(&tags(None, None), "r1", "a"), Ownership::Untagged);
        assert!(matches!(
            ownership(&tags(Some("r2"), Some("a")), "r1", "a"),
            Ownership::Foreign(w) if w.contains("run r2")
        ));
        assert!(matches!(
            ownership(&tags(Some("r1"), Some("b")), "r1", "a"),
            Ownership::Foreign(w) if w.contains("same run id")
        ));
        assert!(matches!(
            ownership(&tags(Some("r1"), None), "r1", "a"),
            Ownership::Foreign(_)
        ));
        assert_eq!(new_instance().len(), 16);
        assert_ne!(new_instance(), new_instance());
    }

    #[test]
    fn short_names_are_kept_whole() {
        assert_eq!(
            queue_name("20261129-204100-ab12", "stale", "main", QueueKind::Standard),
            "sqsprobe-20261129-204100-ab12-stale-main"
        );
        assert_eq!(
            queue_name("r", "c", "q", QueueKind::Fifo),
            "sqsprobe-r-c-q.fifo"
        );
    }

    #[test]
    fn long_names_are_trimmed_to_80_with_fifo_kept_and_stay_distinct() {
        let case_a = "a-very-long-case-identifier-that-goes-on-and-on-x";
        let case_b = "a-very-long-case-identifier-that-goes-on-and-on-y";
        let a = queue_name(
            "20261129-204100-ab12",
            case_a,
            "dead-letter",
            QueueKind::Fifo,
        );
        let b = queue_name(
            "20261129-204100-ab12",
            case_b,
            "dead-letter",
            QueueKind::Fifo,
        );
        assert_eq!(a.len(), 80);
        assert!(a.ends_with(".fifo"));
        assert!(a.starts_with("sqsprobe-20261129-204100-ab12-"));
        assert_ne!(a, b);
        let s = queue_name(
            "20261129-204100-ab12",
            case_a,
            "dead-letter",
            QueueKind::Standard,
        );
        assert_eq!(s.len(), 80);
    }

    #[test]
    fn attributes_map_typed_keys_and_raw_overrides_win() {
        let def = QueueDef {
            label: "main".into(),
            kind: QueueKind::Fifo,
            create: true,
            visibility_timeout: Some(std::time::Duration::from_millis(2000)),
            redrive: Some(Redrive {
                dlq: Spanned {
                    value: "dlq".into(),
                    pos: Pos::default(),
                },
                max_receive_count: 2,
            }),
            attributes: BTreeMap::from([("VisibilityTimeout".to_string(), "-1".to_string())]),
            ..QueueDef::default()
        };
        let a = create_attributes(&def, &|l| {
            Some(format!("arn:aws:sqs:us-east-1:000000000000:{l}"))
        });
        assert_eq!(a["FifoQueue"], "true");
        assert_eq!(a["VisibilityTimeout"], "-1");
        let policy: serde_json::Value = serde_json::from_str(&a["RedrivePolicy"]).unwrap();
        assert_eq!(policy["maxReceiveCount"], 2);
        assert!(
            policy["deadLetterTargetArn"]
                .as_str()
                .unwrap()
                .ends_with(":dlq")
        );
    }

    #[test]
    fn ownership_tags_cannot_be_overridden() {
        let def = QueueDef {
            tags: BTreeMap::from([
                (OWNER_TAG.to_string(), "someone-else".to_string()),
                (INSTANCE_TAG.to_string(), "forged".to_string()),
            ]),
            ..QueueDef::default()
        };
        let t = create_tags(&def, "run1", "inst1", "case1", None);
        assert_eq!(t[OWNER_TAG], "sqsprobe");
        assert_eq!(t[RUN_TAG], "run1");
        assert_eq!(t[INSTANCE_TAG], "inst1");
    }

    #[test]
    fn the_registry_only_owns_what_was_added() {
        let r = Registry::default();
        r.add(OwnedQueue {
            name: "n".into(),
            url: "http://x/1/n".into(),
            case: "c".into(),
            region: "us-east-1".into(),
        });
        assert!(r.owns("us-east-1", "http://x/1/n"));
        assert!(!r.owns("us-east-1", "http://x/1/other"));
        assert!(!r.owns("us-west-2", "http://x/1/n"));
        r.remove("us-east-1", "http://x/1/n");
        assert!(r.remaining().is_empty());
    }

    /// Every trial's queue gets a seed of its own, the same for the same inputs.
    #[test]
    fn each_trial_queue_gets_its_own_reproducible_chaos_seed() {
        let run = sqsprobe_emulator::Chaos::parse("redeliver-after-delete=0.5,latency=5ms,seed=3")
            .unwrap();
        let tag = |case_spec, trial, label, run_seed| {
            QueueChaos {
                case_spec,
                run: Some(&run),
                run_seed,
                case: "c",
                trial,
                label,
            }
            .tag()
        };
        let one = tag(Some("stale-delete-keeps=1,seed=9"), 1, "q", 5).unwrap();
        assert_eq!(
            tag(Some("stale-delete-keeps=1,seed=9"), 1, "q", 5).unwrap(),
            one
        );
        assert!(one.starts_with("stale-delete-keeps=1,seed="), "{one}");
        for other in [
            tag(Some("stale-delete-keeps=1,seed=9"), 2, "q", 5),
            tag(Some("stale-delete-keeps=1,seed=9"), 1, "dlq", 5),
            tag(Some("stale-delete-keeps=1,seed=9"), 1, "q", 6),
            tag(Some("stale-delete-keeps=1,seed=10"), 1, "q", 5),
        ] {
            assert_ne!(other.unwrap(), one);
        }
        // The run's --chaos goes on every other queue, without its server-wide settings.
        let from_run = tag(None, 1, "q", 5).unwrap();
        assert!(
            from_run.starts_with("redeliver-after-delete=0.5,seed="),
            "{from_run}"
        );
        assert!(!from_run.contains("latency"), "{from_run}");
        let quiet = sqsprobe_emulator::Chaos::parse("latency=5ms").unwrap();
        let none = QueueChaos {
            case_spec: None,
            run: Some(&quiet),
            run_seed: 5,
            case: "c",
            trial: 1,
            label: "q",
        };
        assert_eq!(none.tag(), None, "no queue behaviour on: no tag");
    }

    /// moto answers `/<account>/<name>` for one name in two regions: two queues all the same,
    /// and deleting one leaves the other owned.
    #[test]
    fn one_url_in_two_regions_is_two_queues() {
        let r = Registry::default();
        for region in ["us-east-1", "us-west-2"] {
            r.add(OwnedQueue {
                name: "n".into(),
                url: "http://x/1/n".into(),
                case: "c".into(),
                region: region.into(),
            });
        }
        assert_eq!(r.remaining().len(), 2);
        r.remove("us-west-2", "http://x/1/n");
        assert!(r.owns("us-east-1", "http://x/1/n"));
        assert_eq!(r.remaining().len(), 1);
    }
}
