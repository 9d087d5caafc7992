//! A case's trials pooled across runs (pure): what turns nightly runs into a measured rate.
//!
//! Each run folder's multi-trial cases (those whose `case_end` has `trials`) are samples. They
//! are grouped by case, target and region — a rate measured on the embedded emulator says
//! nothing about AWS, nor one region about another — and each group pools its runs' counts:
//! per class, the trials that ended in it, and the two-sided 95% Clopper–Pearson interval of
//! its share of the conclusive trials (inconclusive trials are counted, never in a rate). The
//! newest run is then tested against the pooled runs before it with Fisher's exact test
//! ([`super::fisher`]), two-sided, flagged when p < 0.01: a change in the target (or in the
//! suite) that one night's interval alone would not show.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::evidence::format::RunStart;
use crate::evidence::view::RunView;
use crate::suite::model::OutcomeClass;

use super::fisher;
use super::rate::clopper_pearson;

/// One multi-trial case of one run.
#[derive(Debug, Clone, PartialEq)]
pub struct CaseSample {
    pub run_id: String,
    /// `run_start.started_at` (RFC 3339, UTC): the order of the runs.
    pub started_at: String,
    /// The run folder, as given.
    pub dir: String,
    pub case: String,
    /// What the run talked to (see [`target_label`]).
    pub target: String,
    pub region: String,
    /// Trials run, and the conclusive ones.
    pub n: u32,
    pub conclusive: u32,
    /// Trials per class, `inconclusive` included, and every class the case's `rate:` bounds
    /// (at 0 when no trial had it).
    pub counts: BTreeMap<String, u32>,
}

/// The target a run measured: `aws`, `endpoint <url>`, or `embedded` — with the emulator's
/// `--chaos` spec when it had one, since chaos changes what is measured.
pub fn target_label(start: &RunStart) -> String {
    match (
        start.target.as_str(),
        &start.endpoint,
        &start.emulator_chaos,
    ) {
        ("endpoint", Some(url), _) => format!("endpoint {url}"),
        ("embedded", _, Some(chaos)) => format!("embedded --chaos {chaos}"),
        (target, _, _) => target.to_string(),
    }
}

/// The multi-trial cases of one run. A run without `run_start` (it is how runs are told apart)
/// gives none.
pub fn samples(view: &RunView<'_>, dir: &str) -> Vec<CaseSample> {
    let Some(start) = view.start else {
        return Vec::new();
    };
    view.cases
        .iter()
        .filter_map(|c| {
            let trials = c.end?.trials.as_ref()?;
            // A class the case's rate bounds has an interval even at 0: keep it, at 0.
            let mut counts = trials.counts.clone();
            for class in trials.intervals.keys() {
                counts.entry(class.clone()).or_insert(0);
            }
            Some(CaseSample {
                run_id: start.run_id.clone(),
                started_at: start.started_at.clone(),
                dir: dir.to_string(),
                case: c.id.to_string(),
                target: target_label(start),
                region: start.region.clone(),
                n: trials.n,
                conclusive: trials.conclusive,
                counts,
            })
        })
        .collect()
}

/// One run's share of a group.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunPoint {
    pub run_id: String,
    pub started_at: String,
    pub dir: String,
    pub n: u32,
    pub conclusive: u32,
    pub counts: BTreeMap<String, u32>,
}

/// The newest run against the pooled runs before it, for one class.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Comparison {
    pub class: String,
    /// `[k, n]`: trials in the class, of the conclusive ones, in the newest run.
    pub newest: [u32; 2],
    /// The same, pooled over every earlier run of the group.
    pub others: [u32; 2],
    /// Fisher's exact test, two-sided.
    pub p: f64,
    /// `p` < 0.01: the newest run's rate is inconsistent with the others'.
    pub inconsistent: bool,
}

/// One case on one target and region, pooled over its runs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Group {
    pub case: String,
    pub target: String,
    pub region: String,
    /// Oldest first.
    pub runs: Vec<RunPoint>,
    pub n: u32,
    pub conclusive: u32,
    pub counts: BTreeMap<String, u32>,
    /// Per class seen (but `inconclusive`): the 95% Clopper–Pearson interval of its pooled share
    /// of the conclusive trials.
    pub intervals: BTreeMap<String, [f64; 2]>,
    /// The newest run tested against the others (empty with one run, or nothing conclusive on
    /// either side).
    pub comparisons: Vec<Comparison>,
}

impl Group {
    /// Whether the newest run differs from the others for some class.
    pub fn flagged(&self) -> bool {
        self.comparisons.iter().any(|c| c.inconsistent)
    }
}

/// Everything `sqsprobe history` says.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct History {
    /// The runs read, oldest first: (run id, started at).
    pub runs: Vec<(String, String)>,
    /// By case, target, region.
    pub groups: Vec<Group>,
}

/// Pools `samples` (a run's cases each at most once) into groups.
pub fn pool(samples: Vec<CaseSample>) -> History {
    let mut runs: Vec<(String, String)> = samples
        .iter()
        .map(|s| (s.run_id.clone(), s.started_at.clone()))
        .collect();
    runs.sort_by(|a, b| (&a.1, &a.0).cmp(&(&b.1, &b.0)));
    runs.dedup();
    let mut by_key: BTreeMap<(String, String, String), Vec<CaseSample>> = BTreeMap::new();
    for s in samples {
        by_key
            .entry((s.case.clone(), s.target.clone(), s.region.clone()))
            .or_default()
            .push(s);
    }
    let groups = by_key
        .into_iter()
        .map(|((case, target, region), mut samples)| {
            samples.sort_by(|a, b| (&a.started_at, &a.run_id).cmp(&(&b.started_at, &b.run_id)));
            group(case, target, region, &samples)
        })
        .collect();
    History { runs, groups }
}

fn add(into: &mut BTreeMap<String, u32>, from: &BTreeMap<String, u32>) {
    for (class, k) in from {
        *into.entry(class.clone()).or_default() += k;
    }
}

fn group(case: String, target: String, region: String, samples: &[CaseSample]) -> Group {
    let mut counts = BTreeMap::new();
    for s in samples {
        add(&mut counts, &s.counts);
    }
    let n = samples.iter().map(|s| s.n).sum();
    let conclusive = samples.iter().map(|s| s.conclusive).sum();
    let inconclusive = OutcomeClass::Inconclusive.as_str();
    let intervals = counts
        .iter()
        .filter(|(c, _)| c.as_str() != inconclusive)
        .map(|(c, k)| {
            let (lo, hi) = clopper_pearson(*k, conclusive);
            (c.clone(), [lo, hi])
        })
        .collect();
    let comparisons = match samples.split_last() {
        Some((newest, others)) if !others.is_empty() => {
            let mut before = BTreeMap::new();
            for s in others {
                add(&mut before, &s.counts);
            }
            let before_n: u32 = others.iter().map(|s| s.conclusive).sum();
            compare(newest, &before, before_n, &counts)
        }
        _ => Vec::new(),
    };
    Group {
        case,
        target,
        region,
        runs: samples
            .iter()
            .map(|s| RunPoint {
                run_id: s.run_id.clone(),
                started_at: s.started_at.clone(),
                dir: s.dir.clone(),
                n: s.n,
                conclusive: s.conclusive,
                counts: s.counts.clone(),
            })
            .collect(),
        n,
        conclusive,
        counts,
        intervals,
        comparisons,
    }
}

/// Tests the newest run against the others, class by class. With exactly two classes the two
/// tables are one table read both ways (same p), so only the rarer class is tested.
fn compare(
    newest: &CaseSample,
    before: &BTreeMap<String, u32>,
    before_n: u32,
    pooled: &BTreeMap<String, u32>,
) -> Vec<Comparison> {
    if newest.conclusive == 0 || before_n == 0 {
        return Vec::new();
    }
    let inconclusive = OutcomeClass::Inconclusive.as_str();
    let mut classes: Vec<(&String, u32)> = pooled
        .iter()
        .filter(|(c, _)| c.as_str() != inconclusive)
        .map(|(c, k)| (c, *k))
        .collect();
    if classes.len() == 2 {
        classes.sort_by_key(|(c, k)| (*k, (*c).clone()));
        classes.truncate(1);
    }
    classes
        .into_iter()
        .map(|(class, _)| {
            let k1 = newest.counts.get(class).copied().unwrap_or(0);
            let k0 = before.get(class).copied().unwrap_or(0);
            let (inconsistent, p) = fisher::differs(k1, newest.conclusive, k0, before_n);
            Comparison {
                class: class.clone(),
                newest: [k1, newest.conclusive],
                others: [k0, before_n],
                p,
                inconsistent,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(run: &str, at: &str, redelivered: u32, n: u32, inconclusive: u32) -> CaseSample {
        let mut counts = BTreeMap::new();
        if redelivered > 0 {
            counts.insert("observed_redelivery".to_string(), redelivered);
        }
        let quiet = n - redelivered - inconclusive;
        if quiet > 0 {
            counts.insert("no_redelivery_within_window".to_string(), quiet);
        }
        if inconclusive > 0 {
            counts.insert("inconclusive".to_string(), inconclusive);
        }
        CaseSample {
            run_id: run.to_string(),
            started_at: at.to_string(),
            dir: format!("runs/{run}"),
            case: "stale".to_string(),
            target: "aws".to_string(),
            region: "us-east-1".to_string(),
            n,
            conclusive: n - inconclusive,
            counts,
        }
    }

    #[test]
    fn runs_pool_per_case_target_and_region_in_time_order() {
        let mut other_region = sample("r3", "2026-12-03T03:00:00.000Z", 0, 20, 0);
        other_region.region = "eu-west-1".to_string();
        let h = pool(vec![
            sample("r2", "2026-12-02T03:00:00.000Z", 1, 20, 2),
            sample("r1", "2026-12-01T03:00:00.000Z", 0, 20, 0),
            other_region,
        ]);
        assert_eq!(h.runs.len(), 3);
        assert_eq!(h.runs[0].0, "r1");
        assert_eq!(h.groups.len(), 2);
        let g = &h.groups[1];
        assert_eq!((g.region.as_str(), g.runs.len()), ("us-east-1", 2));
        assert_eq!(g.runs[0].run_id, "r1", "oldest first");
        assert_eq!((g.n, g.conclusive), (40, 38));
        assert_eq!(g.counts["observed_redelivery"], 1);
        assert_eq!(g.counts["inconclusive"], 2);
        let [lo, hi] = g.intervals["observed_redelivery"];
        let (elo, ehi) = clopper_pearson(1, 38);
        assert_eq!((lo, hi), (elo, ehi));
        assert!(!g.intervals.contains_key("inconclusive"));
        // One class tested (the rarer of two), not flagged: 1 of 18 after 0 of 20.
        assert_eq!(g.comparisons.len(), 1);
        let c = &g.comparisons[0];
        assert_eq!(c.class, "observed_redelivery");
        assert_eq!((c.newest, c.others), ([1, 18], [0, 20]));
        assert!(!g.flagged());
        // A single run is not compared with anything.
        assert!(h.groups[0].comparisons.is_empty());
    }

    #[test]
    fn a_newest_run_unlike_the_pool_is_flagged() {
        let h = pool(vec![
            sample("r1", "2026-12-01T03:00:00.000Z", 0, 20, 0),
            sample("r2", "2026-12-02T03:00:00.000Z", 0, 20, 0),
            sample("r3", "2026-12-03T03:00:00.000Z", 12, 20, 0),
        ]);
        let g = &h.groups[0];
        assert!(g.flagged());
        let c = &g.comparisons[0];
        assert_eq!((c.newest, c.others), ([12, 20], [0, 40]));
        assert!(c.p < 1e-6, "{}", c.p);
    }

    #[test]
    fn more_than_two_classes_are_each_tested() {
        let mut a = sample("r1", "2026-12-01T03:00:00.000Z", 2, 20, 0);
        a.counts.insert("delivered".to_string(), 3);
        *a.counts.get_mut("no_redelivery_within_window").unwrap() -= 3;
        let b = sample("r2", "2026-12-02T03:00:00.000Z", 2, 20, 0);
        let g = &pool(vec![a, b]).groups[0];
        let tested: Vec<&str> = g.comparisons.iter().map(|c| c.class.as_str()).collect();
        assert_eq!(
            tested,
            [
                "delivered",
                "no_redelivery_within_window",
                "observed_redelivery"
            ]
        );
    }
}
