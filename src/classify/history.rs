//! A case's trials pooled across runs (pure): what turns nightly runs into a measured rate.
//!
//! Each run folder's multi-trial cases (those whose `case_end` has `trials`) are samples. They
//! are grouped by case, target and region — a rate measured on the embedded emulator says
//! nothing about AWS, nor one region about another — and each group pools its runs' counts by
//! the rule of one run ([`super::trials`]): every started trial counted once, the unknown ones
//! (inconclusive, an error, cut while running) never dropped, and per class the two-sided 95%
//! interval over all the group's trials with the unknown ones counted both ways
//! ([`super::rate::Sample`]). The newest run is then tested against the pooled runs before it
//! with Fisher's exact test ([`super::fisher`]), two-sided, flagged when p < 0.01 whichever
//! way the unknown trials on either side fell: a change in the target (or in the suite) that
//! one night's interval alone would not show, and never one the unknown trials could explain.
//!
//! Each trial is pooled once: a folder is identified by the runs it is made of (the
//! partitions a merged `sqsprobe report` folder holds, each `run id` and `K/N`), and the
//! caller skips a folder whose runs were already read ([`CaseSample::parts`]).

use std::collections::BTreeMap;

use serde::Serialize;

use crate::evidence::format::RunStart;
use crate::evidence::view::RunView;

use super::fisher;
use super::rate::Sample;
use super::trials::UNKNOWN_KEYS;

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
    /// Trials started, those with a class, and those without (`n = conclusive + unknown`).
    pub n: u32,
    pub conclusive: u32,
    pub unknown: u32,
    /// Every started trial once, by class or as `inconclusive` / `error`, and every class the
    /// case's `rate:` bounds (at 0 when no trial had it).
    pub counts: BTreeMap<String, u32>,
    /// The case was cut: its run was interrupted, or stopped before every trial started.
    pub cut: bool,
}

/// The target a run measured: `aws`, `endpoint <url>`, or `embedded` — with the emulator's
/// `--chaos` settings when it had them, since chaos changes what is measured (its seed does
/// not: runs of other seeds are more trials of the same target, as runs of another `--seed`). A `--target aws` run
/// the environment redirected is `aws redirected to <url>`: never pooled with AWS.
pub fn target_label(start: &RunStart) -> String {
    if let Some(url) = crate::sqs::endpoint::redirected_to(&start.target, start.endpoint.as_deref())
    {
        return format!("aws redirected to {url}");
    }
    match (
        start.target.as_str(),
        &start.endpoint,
        &start.emulator_chaos,
    ) {
        ("endpoint", Some(url), _) => format!("endpoint {url}"),
        ("embedded", _, Some(chaos)) if !crate::chaos::settings_of(chaos).is_empty() => {
            format!("embedded --chaos {}", crate::chaos::settings_of(chaos))
        }
        (target, _, _) => target.to_string(),
    }
}

/// The runs a folder is made of, each `run id` or `run id K/N`: a merged folder's partitions,
/// else the run itself. Two folders that share one are two views of the same trials.
pub fn parts(start: &RunStart) -> Vec<String> {
    let one = |run: &str, partition: Option<&str>| match partition {
        Some(p) => format!("{run} {p}"),
        None => run.to_string(),
    };
    match &start.merged {
        Some(m) => m
            .partitions
            .iter()
            .map(|p| one(&p.run_id, Some(&p.partition)))
            .collect(),
        None => vec![one(&start.run_id, start.partition.as_deref())],
    }
}

/// The multi-trial cases of one run. A run without `run_start` (it is how runs are told apart)
/// gives none.
pub fn samples(view: &RunView<'_>, dir: &str) -> Vec<CaseSample> {
    let Some(start) = view.start else {
        return Vec::new();
    };
    let interrupted = view.interrupted();
    view.cases
        .iter()
        .filter_map(|c| {
            let trials = c.end?.trials.as_ref()?;
            // A class the case's rate bounds has an interval even at 0: keep it, at 0.
            let mut counts = trials.counts.clone();
            for class in trials.intervals.keys() {
                counts.entry(class.clone()).or_insert(0);
            }
            let planned = c.start.and_then(|s| s.trials).unwrap_or(trials.n);
            Some(CaseSample {
                run_id: start.run_id.clone(),
                started_at: start.started_at.clone(),
                dir: dir.to_string(),
                case: c.id.to_string(),
                target: target_label(start),
                region: start.region.clone(),
                n: trials.n,
                conclusive: trials.conclusive,
                // Files written before `unknown` existed: every trial not conclusive.
                unknown: trials.n.saturating_sub(trials.conclusive),
                counts,
                cut: interrupted || trials.n < planned,
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
    pub unknown: u32,
    pub counts: BTreeMap<String, u32>,
    /// The run was cut (interrupted, or stopped before every trial of the case started).
    pub cut: bool,
}

/// The newest run against the pooled runs before it, for one class.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Comparison {
    pub class: String,
    /// `[k, unknown, n]` of the newest run: trials in the class, trials without a class, all
    /// started trials.
    pub newest: [u32; 3],
    /// The same, pooled over every earlier run of the group.
    pub others: [u32; 3],
    /// Fisher's exact test, two-sided: the largest p over the ways the unknown trials could
    /// have fallen (each side's all in the class, or none).
    pub p: f64,
    /// `p` < 0.01: the newest run's rate is inconsistent with the others' whichever way the
    /// unknown trials fell.
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
    pub unknown: u32,
    pub counts: BTreeMap<String, u32>,
    /// Per class seen (the unknown keys aside): the 95% interval of its pooled rate over all n
    /// trials, the unknown ones counted both ways.
    pub intervals: BTreeMap<String, [f64; 2]>,
    /// The newest run tested against the others (empty with one run).
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

/// A pooled side of a comparison: counts, unknown trials, started trials.
struct Side {
    counts: BTreeMap<String, u32>,
    unknown: u32,
    n: u32,
}

impl Side {
    fn of<'s>(samples: impl IntoIterator<Item = &'s CaseSample>) -> Side {
        let mut side = Side {
            counts: BTreeMap::new(),
            unknown: 0,
            n: 0,
        };
        for s in samples {
            add(&mut side.counts, &s.counts);
            side.unknown += s.unknown;
            side.n += s.n;
        }
        side
    }

    fn sample(&self, class: &str) -> Sample {
        Sample {
            k: self.counts.get(class).copied().unwrap_or(0),
            unknown: self.unknown,
            n: self.n,
        }
    }
}

fn is_class(key: &str) -> bool {
    !UNKNOWN_KEYS.contains(&key)
}

fn group(case: String, target: String, region: String, samples: &[CaseSample]) -> Group {
    let all = Side::of(samples);
    let intervals = all
        .counts
        .keys()
        .filter(|c| is_class(c))
        .map(|c| {
            let (lo, hi) = all.sample(c).interval();
            (c.clone(), [lo, hi])
        })
        .collect();
    let comparisons = match samples.split_last() {
        Some((newest, others)) if !others.is_empty() => {
            compare(&Side::of([newest]), &Side::of(others), &all.counts)
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
                unknown: s.unknown,
                counts: s.counts.clone(),
                cut: s.cut,
            })
            .collect(),
        n: all.n,
        conclusive: all.n - all.unknown,
        unknown: all.unknown,
        counts: all.counts,
        intervals,
        comparisons,
    }
}

/// Tests the newest run against the others, class by class. With exactly two classes and no
/// unknown trial the two tables are one table read both ways (same p), so only the rarer class
/// is tested.
fn compare(newest: &Side, before: &Side, pooled: &BTreeMap<String, u32>) -> Vec<Comparison> {
    if newest.n == 0 || before.n == 0 {
        return Vec::new();
    }
    let mut classes: Vec<(&String, u32)> = pooled
        .iter()
        .filter(|(c, _)| is_class(c))
        .map(|(c, k)| (c, *k))
        .collect();
    if classes.len() == 2 && newest.unknown == 0 && before.unknown == 0 {
        classes.sort_by_key(|(c, k)| (*k, (*c).clone()));
        classes.truncate(1);
    }
    classes
        .into_iter()
        .map(|(class, _)| {
            let (a, b) = (newest.sample(class), before.sample(class));
            // Every extreme way the unknown trials could have fallen; the change is flagged
            // only when each of them shows it.
            let mut p: f64 = 0.0;
            for ka in [a.k, a.k + a.unknown] {
                for kb in [b.k, b.k + b.unknown] {
                    p = p.max(fisher::differs(ka, a.n, kb, b.n).1);
                }
            }
            Comparison {
                class: class.clone(),
                newest: [a.k, a.unknown, a.n],
                others: [b.k, b.unknown, b.n],
                p,
                inconsistent: p < fisher::ALPHA,
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
            unknown: inconclusive,
            counts,
            cut: false,
        }
    }

    /// Issue 20: a `--target aws` run the environment redirected is its own target, never
    /// pooled with AWS; an endpoint is grouped by its URL.
    #[test]
    fn a_redirected_run_is_never_pooled_with_aws() {
        let crate::evidence::Record::RunStart(mut start) =
            crate::evidence::fixtures::run_start(&["c"])
        else {
            panic!("not a run_start")
        };
        start.target = "aws".into();
        start.endpoint = None;
        assert_eq!(target_label(&start), "aws");
        start.endpoint = Some("https://sqs.eu-west-1.amazonaws.com".into());
        assert_eq!(target_label(&start), "aws");
        start.endpoint = Some("http://127.0.0.1:9324".into());
        assert_eq!(
            target_label(&start),
            "aws redirected to http://127.0.0.1:9324"
        );
        start.target = "endpoint".into();
        assert_eq!(target_label(&start), "endpoint http://127.0.0.1:9324");
    }

    /// Chaos settings make another target; their seed does not (nightly runs without a
    /// `seed=` each record their own), as `--seed` does not.
    #[test]
    fn embedded_runs_are_grouped_by_chaos_settings_not_seed() {
        let crate::evidence::Record::RunStart(mut start) =
            crate::evidence::fixtures::run_start(&["c"])
        else {
            panic!("not a run_start")
        };
        start.target = "embedded".into();
        start.endpoint = None;
        start.emulator_chaos = Some("reorder=0.5,seed=7".into());
        assert_eq!(target_label(&start), "embedded --chaos reorder=0.5");
        start.emulator_chaos = Some("reorder=0.5,seed=8".into());
        assert_eq!(target_label(&start), "embedded --chaos reorder=0.5");
        start.emulator_chaos = Some("seed=8".into());
        assert_eq!(target_label(&start), "embedded");
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
        assert_eq!((g.n, g.conclusive, g.unknown), (40, 38, 2));
        assert_eq!(g.counts["observed_redelivery"], 1);
        assert_eq!(g.counts["inconclusive"], 2);
        // The run's own rule: over all 40 trials, the 2 unknown counted both ways.
        let [lo, hi] = g.intervals["observed_redelivery"];
        let (elo, ehi) = Sample {
            k: 1,
            unknown: 2,
            n: 40,
        }
        .interval();
        assert_eq!((lo, hi), (elo, ehi));
        assert!(!g.intervals.contains_key("inconclusive"));
        // With unknown trials both classes are tested; neither is flagged.
        assert_eq!(g.comparisons.len(), 2);
        let c = &g.comparisons[1];
        assert_eq!(c.class, "observed_redelivery");
        assert_eq!((c.newest, c.others), ([1, 2, 20], [0, 0, 20]));
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
        assert_eq!((c.newest, c.others), ([12, 0, 20], [0, 0, 40]));
        assert!(c.p < 1e-6, "{}", c.p);
    }

    /// A change the unknown trials could explain is not flagged: 12 of 20 redelivered before,
    /// 3 of 20 now with 9 unknown (which may have been redeliveries, 12 of 20 again).
    #[test]
    fn a_change_the_unknown_trials_could_explain_is_not_flagged() {
        let h = pool(vec![
            sample("r1", "2026-12-01T03:00:00.000Z", 12, 20, 0),
            sample("r2", "2026-12-02T03:00:00.000Z", 12, 20, 0),
            sample("r3", "2026-12-03T03:00:00.000Z", 3, 20, 9),
        ]);
        let g = &h.groups[0];
        assert!(!g.flagged(), "{:?}", g.comparisons);
        // Dropping the unknown trials (3 of 11 against 24 of 40) would have flagged it? Not at
        // 0.01; 0 of 11 would: the same shape, fewer redeliveries.
        let h = pool(vec![
            sample("r1", "2026-12-01T03:00:00.000Z", 12, 20, 0),
            sample("r2", "2026-12-02T03:00:00.000Z", 12, 20, 0),
            sample("r3", "2026-12-03T03:00:00.000Z", 0, 20, 9),
        ]);
        assert!(!h.groups[0].flagged(), "{:?}", h.groups[0].comparisons);
        assert!(
            fisher::differs(0, 11, 24, 40).0,
            "the known trials alone would flag it"
        );
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
