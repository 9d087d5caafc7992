//! Sweeping: deleting the queues that runs left behind (a killed CI job, a second Ctrl-C),
//! and nothing else.
//!
//! A queue is deleted only when all of these hold, checked in this order:
//! 1. its name starts with `sqsprobe-` (the listing asks for that prefix);
//! 2. it carries `sqsprobe:owner=sqsprobe` and a non-empty `sqsprobe:run` tag, as every queue a
//!    run creates does (`queues::create_tags`), and its name starts with that run's prefix
//!    `sqsprobe-<run>-` (a queue tagged by hand for some other name is not a run's);
//! 3. with `--run-id`, the tag names that run;
//! 4. with an age limit, the run is older than it: the run started at the timestamp its id
//!    begins with (`YYYYMMDD-HHMMSS-…`, UTC, as `new_run_id` writes it), or, for an id without
//!    one, at the queue's `CreatedTimestamp`. A run whose age cannot be known is kept.
//!
//! The per-process `sqsprobe:instance` tag is not asked for: a sweep is by definition another
//! process, cleaning up after one that is gone (queues tagged before instances existed
//! included). That is also why a sweep must not overlap a live run of the same id: the age
//! limit keeps it off runs still going, and `--run-id` is for a run known to have ended.
//!
//! Everything else is kept and said so, one line per queue. [`decide`] is the rule over plain
//! facts; [`sweep`] does the calls (ListQueues paged past 1,000, ListQueueTags, GetQueueAttributes
//! only when the age needs it, DeleteQueue) one queue at a time, so a stop request takes effect
//! after the queue in flight.

use super::queues::{OWNER_TAG, RUN_TAG, run_prefix};
use super::target::sdk_error_line as describe;
use aws_sdk_sqs::error::ProvideErrorMetadata;
use aws_sdk_sqs::types::QueueAttributeName;
use chrono::{DateTime, NaiveDateTime, Utc};
use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// Every queue a run creates starts with this.
pub(crate) const QUEUE_PREFIX: &str = "sqsprobe-";

/// The age a run must reach before a sweep without `--run-id` deletes its queues: longer than
/// any run's deadline, so a sweep never pulls queues from under a run still going.
pub(crate) const DEFAULT_OLDER_THAN: Duration = Duration::from_secs(2 * 3600);

/// Which queues a sweep may delete.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SweepFilter {
    /// Only runs older than this; `None`: any age.
    pub older_than: Option<Duration>,
    /// Only this run.
    pub run_id: Option<String>,
}

impl SweepFilter {
    /// The filter a command line means: `--older-than` as given; without it 2h, or no limit
    /// when `--run-id` names the run (sweeping a named, finished run is the point).
    pub(crate) fn new(older_than: Option<Duration>, run_id: Option<String>) -> SweepFilter {
        let older_than = match (older_than, &run_id) {
            (Some(d), _) => Some(d),
            (None, Some(_)) => None,
            (None, None) => Some(DEFAULT_OLDER_THAN),
        };
        SweepFilter { older_than, run_id }
    }

    /// The ListQueues prefix: the run's own when one is named.
    pub(crate) fn prefix(&self) -> String {
        match &self.run_id {
            Some(run) => run_prefix(run),
            None => QUEUE_PREFIX.to_string(),
        }
    }
}

/// The start of a run, from the timestamp its id begins with (`20261129-204100-…`), if any.
pub(crate) fn run_started_at(run_id: &str) -> Option<DateTime<Utc>> {
    let stamp = run_id.get(..15)?;
    if !matches!(run_id.as_bytes().get(15), None | Some(b'-')) {
        return None;
    }
    NaiveDateTime::parse_from_str(stamp, "%Y%m%d-%H%M%S")
        .ok()
        .map(|t| t.and_utc())
}

/// What a sweep knows about one queue.
#[derive(Debug, Clone, Default)]
pub(crate) struct QueueFacts {
    pub name: String,
    pub tags: HashMap<String, String>,
    /// `CreatedTimestamp`, read only when [`needs_created`] says so.
    pub created: Option<DateTime<Utc>>,
}

/// Why a queue is kept.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Keep {
    /// No `sqsprobe:owner=sqsprobe` tag: not sqsprobe's, whatever its name.
    NotOwned,
    /// Owned, but no `sqsprobe:run` tag to say which run.
    NoRun,
    /// Tagged for `run`, but not named like that run's queues.
    NameMismatch { run: String },
    /// Another run than `--run-id`.
    OtherRun { run: String },
    /// The run is younger than the limit.
    Young {
        run: String,
        age: Duration,
        limit: Duration,
    },
    /// Neither the run id nor the queue says when the run started.
    AgeUnknown { run: String },
}

impl fmt::Display for Keep {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Keep::NotOwned => write!(f, "no {OWNER_TAG}=sqsprobe tag: not sqsprobe's"),
            Keep::NoRun => write!(f, "no {RUN_TAG} tag: no run to age"),
            Keep::NameMismatch { run } => {
                write!(f, "tagged for run {run} but not named {}…", run_prefix(run))
            }
            Keep::OtherRun { run } => write!(f, "run {run}, not the --run-id asked for"),
            Keep::Young { run, age, limit } => write!(
                f,
                "run {run} is {} old, younger than {}",
                human(*age),
                human(*limit)
            ),
            Keep::AgeUnknown { run } => write!(f, "run {run}: its age is unknown"),
        }
    }
}

/// What to do with one queue.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Decision {
    /// Delete it; the run and its age, when known.
    Delete {
        run: String,
        age: Option<Duration>,
    },
    Keep(Keep),
}

/// The run a queue belongs to, if it is one of sqsprobe's and passes the `--run-id` filter.
fn owned_run(facts: &QueueFacts, filter: &SweepFilter) -> Result<String, Keep> {
    if facts.tags.get(OWNER_TAG).map(String::as_str) != Some("sqsprobe") {
        return Err(Keep::NotOwned);
    }
    let run = match facts.tags.get(RUN_TAG) {
        Some(run) if !run.is_empty() => run.clone(),
        _ => return Err(Keep::NoRun),
    };
    if !facts.name.starts_with(&run_prefix(&run)) {
        return Err(Keep::NameMismatch { run });
    }
    if filter.run_id.as_ref().is_some_and(|wanted| *wanted != run) {
        return Err(Keep::OtherRun { run });
    }
    Ok(run)
}

/// Whether deciding this queue needs its `CreatedTimestamp`: owned, selected, an age limit
/// applies and the run id carries no timestamp.
pub(crate) fn needs_created(facts: &QueueFacts, filter: &SweepFilter) -> bool {
    filter.older_than.is_some()
        && owned_run(facts, filter).is_ok_and(|run| run_started_at(&run).is_none())
}

/// The rule (see the module doc), over plain facts.
pub(crate) fn decide(facts: &QueueFacts, now: DateTime<Utc>, filter: &SweepFilter) -> Decision {
    let run = match owned_run(facts, filter) {
        Ok(run) => run,
        Err(keep) => return Decision::Keep(keep),
    };
    let started = run_started_at(&run).or(facts.created);
    // A start in the future (a skewed clock) is age zero: young, kept.
    let age = started.map(|t| (now - t).to_std().unwrap_or(Duration::ZERO));
    match (filter.older_than, age) {
        (None, age) => Decision::Delete { run, age },
        (Some(_), None) => Decision::Keep(Keep::AgeUnknown { run }),
        (Some(limit), Some(age)) if age <= limit => Decision::Keep(Keep::Young { run, age, limit }),
        (Some(_), Some(age)) => Decision::Delete {
            run,
            age: Some(age),
        },
    }
}

/// A duration the way a person reads it: `45s`, `12m`, `3h12m`, `2d4h`.
pub(crate) fn human(d: Duration) -> String {
    let s = d.as_secs();
    match s {
        0..60 => format!("{s}s"),
        60..3600 => format!("{}m", s / 60),
        3600..86400 => match (s % 3600) / 60 {
            0 => format!("{}h", s / 3600),
            m => format!("{}h{m}m", s / 3600),
        },
        _ => match (s % 86400) / 3600 {
            0 => format!("{}d", s / 86400),
            h => format!("{}d{h}h", s / 86400),
        },
    }
}

/// What happened to one queue.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Outcome {
    Deleted {
        run: String,
        age: Option<Duration>,
    },
    /// `--dry-run`: would have been deleted.
    WouldDelete {
        run: String,
        age: Option<Duration>,
    },
    /// Deleted by someone else between the listing and our call.
    Gone,
    Kept(Keep),
    /// A call failed; the queue is left as it was.
    Failed(String),
}

/// One decided queue: what a sweep prints.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SweepLine {
    pub name: String,
    pub outcome: Outcome,
}

impl fmt::Display for SweepLine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let run_age = |run: &str, age: &Option<Duration>| match age {
            Some(age) => format!("run {run}, {} old", human(*age)),
            None => format!("run {run}"),
        };
        let (word, why) = match &self.outcome {
            Outcome::Deleted { run, age } => ("deleted", run_age(run, age)),
            Outcome::WouldDelete { run, age } => ("would delete", run_age(run, age)),
            Outcome::Gone => ("gone", "already deleted by someone else".to_string()),
            Outcome::Kept(keep) => ("kept", keep.to_string()),
            Outcome::Failed(e) => ("FAILED", e.clone()),
        };
        write!(f, "{word:<12}  {}  {why}", self.name)
    }
}

/// Counts of a finished (or stopped) sweep.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct SweepTotals {
    pub listed: usize,
    pub deleted: usize,
    pub would_delete: usize,
    pub gone: usize,
    pub kept: usize,
    pub failed: usize,
    /// Listed but not looked at because a stop was asked for.
    pub not_reached: usize,
    pub dry_run: bool,
}

impl SweepTotals {
    /// Adds another region's totals to these.
    pub(crate) fn add(&mut self, other: &SweepTotals) {
        self.listed += other.listed;
        self.deleted += other.deleted;
        self.would_delete += other.would_delete;
        self.gone += other.gone;
        self.kept += other.kept;
        self.failed += other.failed;
        self.not_reached += other.not_reached;
        self.dry_run |= other.dry_run;
    }

    fn count(&mut self, outcome: &Outcome) {
        match outcome {
            Outcome::Deleted { .. } => self.deleted += 1,
            Outcome::WouldDelete { .. } => self.would_delete += 1,
            Outcome::Gone => self.gone += 1,
            Outcome::Kept(_) => self.kept += 1,
            Outcome::Failed(_) => self.failed += 1,
        }
    }
}

impl fmt::Display for SweepTotals {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {QUEUE_PREFIX} queue(s) listed: ", self.listed)?;
        match self.dry_run {
            true => write!(f, "{} would be deleted (dry run), ", self.would_delete)?,
            false => write!(f, "{} deleted, ", self.deleted)?,
        }
        if self.gone > 0 {
            write!(f, "{} already gone, ", self.gone)?;
        }
        write!(f, "{} kept, {} failed", self.kept, self.failed)?;
        if self.not_reached > 0 {
            write!(f, ", {} not looked at (stopped)", self.not_reached)?;
        }
        Ok(())
    }
}

/// Why a sweep could not even list.
#[derive(Debug, thiserror::Error)]
#[error("failed to list queues: {0}")]
pub(crate) struct ListError(pub String);

/// Whether an SDK error says the queue does not exist.
fn is_missing(code: Option<&str>) -> bool {
    code.and_then(sqsprobe_facts::sqs::errors::by_code)
        .is_some_and(|spec| *spec == sqsprobe_facts::sqs::errors::QUEUE_DOES_NOT_EXIST)
}

/// Every queue URL under `prefix`, following NextToken past each page of 1,000. Stops early
/// (with what it has) when `stop` is set.
pub(crate) async fn list(
    client: &aws_sdk_sqs::Client,
    prefix: &str,
    stop: &AtomicBool,
) -> Result<Vec<String>, ListError> {
    let mut pages = client
        .list_queues()
        .queue_name_prefix(prefix)
        .max_results(1000)
        .into_paginator()
        .send();
    let mut urls = Vec::new();
    while !stop.load(Ordering::SeqCst) {
        match pages.next().await {
            None => break,
            Some(Ok(page)) => urls.extend(page.queue_urls().iter().cloned()),
            Some(Err(e)) => return Err(ListError(describe(&e))),
        }
    }
    Ok(urls)
}

/// The name at the end of a queue URL.
fn name_of(url: &str) -> &str {
    url.rsplit('/').next().unwrap_or(url)
}

/// Decides and, unless `dry_run`, deletes one queue.
async fn one(
    client: &aws_sdk_sqs::Client,
    url: &str,
    filter: &SweepFilter,
    dry_run: bool,
) -> Outcome {
    let mut facts = QueueFacts {
        name: name_of(url).to_string(),
        ..QueueFacts::default()
    };
    match client.list_queue_tags().queue_url(url).send().await {
        Ok(out) => facts.tags = out.tags().cloned().unwrap_or_default(),
        Err(e) if is_missing(e.code()) => return Outcome::Gone,
        Err(e) => return Outcome::Failed(format!("ListQueueTags: {}", describe(&e))),
    }
    if needs_created(&facts, filter) {
        let got = client
            .get_queue_attributes()
            .queue_url(url)
            .attribute_names(QueueAttributeName::CreatedTimestamp)
            .send()
            .await;
        match got {
            Ok(out) => {
                facts.created = out
                    .attributes()
                    .and_then(|a| a.get(&QueueAttributeName::CreatedTimestamp))
                    .and_then(|s| s.parse::<i64>().ok())
                    .and_then(|secs| DateTime::from_timestamp(secs, 0));
            }
            Err(e) if is_missing(e.code()) => return Outcome::Gone,
            Err(e) => return Outcome::Failed(format!("GetQueueAttributes: {}", describe(&e))),
        }
    }
    let (run, age) = match decide(&facts, Utc::now(), filter) {
        Decision::Keep(keep) => return Outcome::Kept(keep),
        Decision::Delete { run, age } => (run, age),
    };
    if dry_run {
        return Outcome::WouldDelete { run, age };
    }
    match client.delete_queue().queue_url(url).send().await {
        Ok(_) => Outcome::Deleted { run, age },
        Err(e) if is_missing(e.code()) => Outcome::Gone,
        Err(e) => Outcome::Failed(format!("DeleteQueue: {}", describe(&e))),
    }
}

/// Sweeps: lists, then decides each queue in name order, handing every line to `on_line` as
/// it is decided. Once `stop` is set no further queue is started.
pub(crate) async fn sweep(
    client: &aws_sdk_sqs::Client,
    filter: &SweepFilter,
    dry_run: bool,
    stop: Arc<AtomicBool>,
    mut on_line: impl FnMut(&SweepLine),
) -> Result<SweepTotals, ListError> {
    let mut urls = list(client, &filter.prefix(), &stop).await?;
    urls.sort_by(|a, b| name_of(a).cmp(name_of(b)));
    urls.dedup();
    let mut totals = SweepTotals {
        listed: urls.len(),
        dry_run,
        ..SweepTotals::default()
    };
    for (i, url) in urls.iter().enumerate() {
        if stop.load(Ordering::SeqCst) {
            totals.not_reached = urls.len() - i;
            break;
        }
        let line = SweepLine {
            name: name_of(url).to_string(),
            outcome: one(client, url, filter, dry_run).await,
        };
        totals.count(&line.outcome);
        on_line(&line);
    }
    Ok(totals)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn owned(name: &str, run: &str) -> QueueFacts {
        QueueFacts {
            name: name.into(),
            tags: HashMap::from([
                (OWNER_TAG.to_string(), "sqsprobe".to_string()),
                (RUN_TAG.to_string(), run.to_string()),
            ]),
            created: None,
        }
    }

    fn at(s: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(s).unwrap().with_timezone(&Utc)
    }

    #[test]
    fn run_ids_carry_their_start() {
        assert_eq!(
            run_started_at("20261129-204100-ab12cd34"),
            Some(at("2026-11-29T20:41:00Z"))
        );
        assert_eq!(
            run_started_at("20261129-204100"),
            Some(at("2026-11-29T20:41:00Z"))
        );
        assert_eq!(run_started_at("20261129-204100x"), None);
        assert_eq!(run_started_at("nightly-42"), None);
        assert_eq!(run_started_at("20261399-204100-a"), None);
        assert_eq!(run_started_at(""), None);
    }

    #[test]
    fn only_tagged_consistently_named_queues_are_owned() {
        let now = at("2026-11-30T00:00:00Z");
        let f = SweepFilter::new(None, None);
        let mut untagged = owned("sqsprobe-20261129-000000-a-c-q", "20261129-000000-a");
        untagged.tags.clear();
        assert_eq!(decide(&untagged, now, &f), Decision::Keep(Keep::NotOwned));

        let mut foreign = owned("sqsprobe-20261129-000000-a-c-q", "20261129-000000-a");
        foreign.tags.insert(OWNER_TAG.into(), "someone".into());
        assert_eq!(decide(&foreign, now, &f), Decision::Keep(Keep::NotOwned));

        let mut no_run = owned("sqsprobe-20261129-000000-a-c-q", "");
        assert_eq!(decide(&no_run, now, &f), Decision::Keep(Keep::NoRun));
        no_run.tags.remove(RUN_TAG);
        assert_eq!(decide(&no_run, now, &f), Decision::Keep(Keep::NoRun));

        let misnamed = owned("sqsprobe-prod-orders", "20261129-000000-a");
        assert!(matches!(
            decide(&misnamed, now, &f),
            Decision::Keep(Keep::NameMismatch { .. })
        ));
    }

    #[test]
    fn age_comes_from_the_run_id_else_the_queue() {
        let now = at("2026-11-30T00:00:00Z");
        let f = SweepFilter::new(None, None);
        let old = owned("sqsprobe-20261129-000000-a-c-q", "20261129-000000-a");
        assert_eq!(
            decide(&old, now, &f),
            Decision::Delete {
                run: "20261129-000000-a".into(),
                age: Some(Duration::from_secs(24 * 3600))
            }
        );
        let young = owned("sqsprobe-20261129-230000-a-c-q", "20261129-230000-a");
        assert!(matches!(
            decide(&young, now, &f),
            Decision::Keep(Keep::Young { .. })
        ));
        // A run id without a timestamp is aged by the queue's CreatedTimestamp.
        let mut plain = owned("sqsprobe-nightly-42-c-q", "nightly-42");
        assert!(needs_created(&plain, &f));
        assert_eq!(
            decide(&plain, now, &f),
            Decision::Keep(Keep::AgeUnknown {
                run: "nightly-42".into()
            })
        );
        plain.created = Some(at("2026-11-29T12:00:00Z"));
        assert!(matches!(decide(&plain, now, &f), Decision::Delete { .. }));
        plain.created = Some(at("2026-11-29T23:30:00Z"));
        assert!(matches!(
            decide(&plain, now, &f),
            Decision::Keep(Keep::Young { .. })
        ));
        // A start in the future is young, never old.
        let future = owned("sqsprobe-20271129-000000-a-c-q", "20271129-000000-a");
        assert!(matches!(
            decide(&future, now, &f),
            Decision::Keep(Keep::Young { .. })
        ));
    }

    #[test]
    fn a_named_run_is_swept_whatever_its_age_unless_an_age_is_given() {
        let now = at("2026-11-30T00:00:00Z");
        let f = SweepFilter::new(None, Some("nightly-42".into()));
        assert_eq!(f.older_than, None);
        assert_eq!(f.prefix(), "sqsprobe-nightly-42-");
        let mine = owned("sqsprobe-nightly-42-c-q", "nightly-42");
        assert!(!needs_created(&mine, &f));
        assert!(matches!(decide(&mine, now, &f), Decision::Delete { .. }));
        let other = owned("sqsprobe-nightly-43-c-q", "nightly-43");
        assert!(matches!(
            decide(&other, now, &f),
            Decision::Keep(Keep::OtherRun { .. })
        ));
        let aged = SweepFilter::new(Some(Duration::from_secs(60)), Some("nightly-42".into()));
        assert_eq!(aged.older_than, Some(Duration::from_secs(60)));
        assert_eq!(
            SweepFilter::new(None, None).older_than,
            Some(DEFAULT_OLDER_THAN)
        );
    }

    #[test]
    fn lines_and_totals_read_plainly() {
        let line = SweepLine {
            name: "sqsprobe-r-c-q".into(),
            outcome: Outcome::Kept(Keep::Young {
                run: "r".into(),
                age: Duration::from_secs(754),
                limit: DEFAULT_OLDER_THAN,
            }),
        };
        assert_eq!(
            line.to_string(),
            "kept          sqsprobe-r-c-q  run r is 12m old, younger than 2h"
        );
        assert_eq!(human(Duration::from_secs(3 * 3600 + 720)), "3h12m");
        assert_eq!(human(Duration::from_secs(2 * 86400 + 3600)), "2d1h");
        let totals = SweepTotals {
            listed: 5,
            deleted: 3,
            kept: 2,
            ..SweepTotals::default()
        };
        assert_eq!(
            totals.to_string(),
            "5 sqsprobe- queue(s) listed: 3 deleted, 2 kept, 0 failed"
        );
        let dry = SweepTotals {
            listed: 5,
            would_delete: 3,
            kept: 2,
            dry_run: true,
            ..SweepTotals::default()
        };
        assert_eq!(
            dry.to_string(),
            "5 sqsprobe- queue(s) listed: 3 would be deleted (dry run), 2 kept, 0 failed"
        );
    }
}
