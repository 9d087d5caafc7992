//! The run folders of one `--partition` run, merged back into one run (pure).
//!
//! `--partition K/N` deals a selection's cases out to N machines; each writes a run folder of
//! its own, with `run_start.partition = "K/N"`. Folders are partitions of the same run when
//! they have the same N and the same selection and target: suite files, target kind, target
//! profile, protocol, chaos spec and sqsprobe version (not the endpoint: each machine's
//! embedded emulator listens on a port of its own; not the run id or seed, drawn per machine
//! unless given).
//!
//! The merged run is an evidence file like any other, so every report renders it:
//! - `run_start`: the first partition's, with the run ids joined by `+` (one id when every
//!   partition was given the same `--run-id`), the earliest start, every partition's cases in
//!   partition order, the seed and endpoint only when every partition had the same, no
//!   `partition`, and `merged` saying which partitions it holds and which of N it lacks;
//! - every partition's records after it, in partition order;
//! - `run_end` only when every partition has one: the latest end, the wall-clock span from the
//!   earliest start, totals and requests summed, interrupted if any was, and the worst exit
//!   code ([`sqsprobe_facts::exit_code::worst`]). A partition without `run_end` (killed) leaves the
//!   merged run without one: it reads as interrupted, as that partition was.

use super::format::{Merged, MergedPartition, Record, RunEnd, RunStart};
use super::view::parse_time;
use std::collections::BTreeMap;

/// A run folder: a label (its path, for messages) and its records.
pub type Run = (String, Vec<Record>);

/// Why folders could not be merged.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MergeError {
    #[error("{first} and {second} both hold partition {partition}")]
    Duplicate {
        partition: String,
        first: String,
        second: String,
    },
    #[error("{0}: run_start.partition {1:?} is not K/N")]
    BadPartition(String, String),
}

/// What a run is for grouping: its partition (K, N) and the key partitions of one run share.
fn partition_of(start: &RunStart) -> Option<(u32, u32)> {
    let (k, n) = start.partition.as_deref()?.split_once('/')?;
    Some((k.trim().parse().ok()?, n.trim().parse().ok()?))
}

/// What partitions of one run have in common.
type Key<'a> = (
    u32,
    &'a [String],
    &'a str,
    Option<&'a str>,
    &'a str,
    Option<&'a str>,
    &'a str,
);

fn key(start: &RunStart, n: u32) -> Key<'_> {
    (
        n,
        &start.suites,
        &start.target,
        start.target_profile.as_deref(),
        start.protocol.as_str(),
        start.emulator_chaos.as_deref(),
        &start.sqsprobe_version,
    )
}

fn start_of(records: &[Record]) -> Option<&RunStart> {
    records.iter().find_map(|r| match r {
        Record::RunStart(s) => Some(s),
        _ => None,
    })
}

/// Groups runs: indices into `runs`, in the order given, partitions of one run together
/// (sorted by K), every other run alone. A partitioned run of one folder stays alone too, so
/// only a real merge changes what a folder says.
pub fn group(runs: &[Run]) -> Result<Vec<Vec<usize>>, MergeError> {
    let mut groups: Vec<Vec<usize>> = Vec::new();
    let mut keyed: Vec<(Key, usize)> = Vec::new();
    for (i, (label, records)) in runs.iter().enumerate() {
        let Some(start) = start_of(records) else {
            groups.push(vec![i]);
            continue;
        };
        let Some(raw) = &start.partition else {
            groups.push(vec![i]);
            continue;
        };
        let Some((k, n)) = partition_of(start) else {
            return Err(MergeError::BadPartition(label.clone(), raw.clone()));
        };
        let key = key(start, n);
        match keyed.iter().find(|(kk, _)| *kk == key) {
            Some(&(_, g)) => {
                if let Some(&j) = groups[g]
                    .iter()
                    .find(|&&j| start_of(&runs[j].1).and_then(partition_of).map(|p| p.0) == Some(k))
                {
                    return Err(MergeError::Duplicate {
                        partition: raw.clone(),
                        first: runs[j].0.clone(),
                        second: label.clone(),
                    });
                }
                groups[g].push(i);
            }
            None => {
                keyed.push((key, groups.len()));
                groups.push(vec![i]);
            }
        }
    }
    for g in &mut groups {
        g.sort_by_key(|&i| start_of(&runs[i].1).and_then(partition_of).map(|p| p.0));
    }
    Ok(groups)
}

/// Merges the partitions of one run (as [`group`] found them, in partition order) into one.
pub fn merge(parts: &[&[Record]]) -> Vec<Record> {
    let starts: Vec<&RunStart> = parts.iter().filter_map(|r| start_of(r)).collect();
    let ends: Vec<Option<&RunEnd>> = parts
        .iter()
        .map(|r| {
            r.iter().find_map(|r| match r {
                Record::RunEnd(e) => Some(e),
                _ => None,
            })
        })
        .collect();
    let Some(first) = starts.first() else {
        return parts.concat();
    };
    let n = partition_of(first).map_or(1, |p| p.1);
    let mut ids: Vec<&str> = Vec::new();
    for s in &starts {
        if !ids.contains(&s.run_id.as_str()) {
            ids.push(&s.run_id);
        }
    }
    let run_id = ids.join("+");
    let held: Vec<u32> = starts
        .iter()
        .filter_map(|s| partition_of(s).map(|p| p.0))
        .collect();
    let earliest = starts
        .iter()
        .map(|s| s.started_at.as_str())
        .min_by_key(|t| parse_time(t))
        .unwrap_or(&first.started_at)
        .to_string();
    let start = RunStart {
        run_id: run_id.clone(),
        endpoint: same(&starts, |s| s.endpoint.clone()),
        started_at: earliest.clone(),
        cases: starts.iter().flat_map(|s| s.cases.clone()).collect(),
        partition: None,
        seed: same(&starts, |s| s.seed),
        regions: {
            let mut regions: Vec<String> = starts.iter().flat_map(|s| s.regions.clone()).collect();
            regions.sort();
            regions.dedup();
            regions
        },
        merged: Some(Merged {
            of: n,
            partitions: starts
                .iter()
                .zip(&ends)
                .map(|(s, e)| MergedPartition {
                    partition: s.partition.clone().unwrap_or_default(),
                    run_id: s.run_id.clone(),
                    seed: s.seed,
                    started_at: s.started_at.clone(),
                    complete: e.is_some_and(|e| !e.interrupted),
                })
                .collect(),
            missing: (1..=n).filter(|k| !held.contains(k)).collect(),
        }),
        ..(*first).clone()
    };
    let mut out = vec![Record::RunStart(start)];
    for part in parts {
        out.extend(
            part.iter()
                .filter(|r| !matches!(r, Record::RunStart(_) | Record::RunEnd(_)))
                .cloned(),
        );
    }
    if let Some(ends) = ends.into_iter().collect::<Option<Vec<&RunEnd>>>()
        && let Some(last) = ends.iter().max_by_key(|e| parse_time(&e.ended_at)).copied()
    {
        let mut totals: BTreeMap<String, u32> = BTreeMap::new();
        for e in &ends {
            for (k, v) in &e.totals {
                *totals.entry(k.clone()).or_default() += v;
            }
        }
        let span = parse_time(&earliest)
            .zip(parse_time(&last.ended_at))
            .and_then(|(a, b)| u64::try_from((b - a).num_milliseconds()).ok());
        let sum = |f: &dyn Fn(&RunEnd) -> Option<u64>| -> Option<u64> {
            ends.iter().map(|e| f(e)).sum::<Option<u64>>()
        };
        out.push(Record::RunEnd(RunEnd {
            run_id,
            ended_at: last.ended_at.clone(),
            duration_ms: span.unwrap_or(last.duration_ms),
            interrupted: ends.iter().any(|e| e.interrupted),
            totals,
            exit_code: ends.iter().map(|e| e.exit_code).fold(
                sqsprobe_facts::exit_code::OK,
                sqsprobe_facts::exit_code::worst,
            ),
            requests: sum(&|e| e.requests),
            fifo_requests: sum(&|e| e.fifo_requests),
            cost_usd: ends.iter().map(|e| e.cost_usd).sum::<Option<f64>>(),
            left_queues: {
                let mut left: Vec<_> = ends.iter().flat_map(|e| e.left_queues.clone()).collect();
                left.sort();
                left.dedup();
                left
            },
            halted: {
                let why: Vec<String> = ends.iter().filter_map(|e| e.halted.clone()).collect();
                (!why.is_empty()).then(|| why.join("; "))
            },
            // The greatest of the partitions' stops (the kinds are in the stops' order).
            stop: ends
                .iter()
                .filter_map(|e| e.stop.clone())
                .max_by_key(|s| s.reason),
        }));
    }
    out
}

/// What every run start says alike, or `None` when they differ.
fn same<T: PartialEq>(starts: &[&RunStart], f: impl Fn(&RunStart) -> Option<T>) -> Option<T> {
    let mut values = starts.iter().map(|s| f(s));
    let first = values.next()??;
    values.all(|v| v.as_ref() == Some(&first)).then_some(first)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evidence::fixtures::*;
    use crate::evidence::format::Verdict;
    use crate::evidence::view::RunView;

    /// Partition `k` of `n` of one run: its own run id, seed and port, `cases` passing but
    /// the `failing` one.
    fn part(k: u32, n: u32, cases: &[&str], failing: Option<&str>) -> Run {
        let mut records = vec![run_start(cases)];
        if let Record::RunStart(s) = &mut records[0] {
            s.run_id = format!("run-p{k}");
            s.partition = Some(format!("{k}/{n}"));
            s.seed = Some(u64::from(k));
            s.endpoint = Some(format!("http://127.0.0.1:{}", 4000 + k));
            s.started_at = at(u64::from(k) * 100);
        }
        for case in cases {
            records.push(case_start(case, 10));
            let verdict = if Some(*case) == failing {
                Verdict::Fail
            } else {
                Verdict::Pass
            };
            records.push(Record::CaseEnd(case_end(case, verdict, "why", &[])));
        }
        let code = if failing.is_some() {
            sqsprobe_facts::exit_code::EXPECTATION_FAILED
        } else {
            sqsprobe_facts::exit_code::OK
        };
        let mut end = run_end(code);
        if let Record::RunEnd(e) = &mut end {
            e.run_id = format!("run-p{k}");
            e.ended_at = at(5000 + u64::from(k) * 1000);
            e.totals = BTreeMap::from([("pass".to_string(), cases.len() as u32)]);
        }
        records.push(end);
        (format!("dir{k}"), records)
    }

    #[test]
    fn partitions_of_one_run_merge_into_one() {
        let runs = vec![
            part(2, 3, &["b"], Some("b")),
            (
                "lone".to_string(),
                verdicts_run(None, "json", &[("other", Verdict::Pass)]),
            ),
            part(1, 3, &["a", "c"], None),
        ];
        let groups = group(&runs).unwrap();
        assert_eq!(
            groups,
            vec![vec![2, 0], vec![1]],
            "partition order, the lone run apart"
        );

        let parts: Vec<&[Record]> = groups[0].iter().map(|&i| runs[i].1.as_slice()).collect();
        let merged = merge(&parts);
        let view = RunView::new(&merged);
        let start = view.start.unwrap();
        assert_eq!(start.run_id, "run-p1+run-p2");
        assert_eq!(start.cases, vec!["a", "c", "b"]);
        assert_eq!(start.started_at, at(100), "the earliest start");
        assert_eq!(
            (start.seed, start.endpoint.as_deref()),
            (None, None),
            "they differed"
        );
        let m = start.merged.as_ref().unwrap();
        assert_eq!((m.of, m.missing.clone()), (3, vec![3]));
        assert_eq!(m.partitions[1].partition, "2/3");
        assert!(m.partitions.iter().all(|p| p.complete));
        assert_eq!(view.cases.len(), 3);
        let end = view.end.unwrap();
        assert_eq!(end.exit_code, sqsprobe_facts::exit_code::EXPECTATION_FAILED);
        assert_eq!(end.totals["pass"], 3);
        assert_eq!(end.ended_at, at(7000));
        assert_eq!(end.duration_ms, 6900, "earliest start to latest end");
        assert_eq!(end.requests, Some(24));
    }

    #[test]
    fn a_killed_partition_leaves_the_merged_run_interrupted() {
        let (_, mut killed) = part(2, 2, &["b"], None);
        killed.pop();
        let (_, whole) = part(1, 2, &["a"], None);
        let merged = merge(&[&whole, &killed]);
        let view = RunView::new(&merged);
        assert!(view.end.is_none());
        assert!(view.interrupted());
        let m = view.start.unwrap().merged.as_ref().unwrap();
        assert_eq!(
            m.partitions.iter().map(|p| p.complete).collect::<Vec<_>>(),
            vec![true, false]
        );
    }

    #[test]
    fn two_folders_of_one_partition_are_refused() {
        let runs = vec![part(1, 2, &["a"], None), part(1, 2, &["a"], None)];
        assert_eq!(
            group(&runs).unwrap_err().to_string(),
            "dir1 and dir1 both hold partition 1/2"
        );
        let mut other_n = part(1, 3, &["a"], None);
        other_n.0 = "elsewhere".to_string();
        let runs = vec![part(1, 2, &["a"], None), other_n];
        assert_eq!(
            group(&runs).unwrap(),
            vec![vec![0], vec![1]],
            "another N is another run"
        );
        let mut bad = part(1, 2, &["a"], None);
        if let Record::RunStart(s) = &mut bad.1[0] {
            s.partition = Some("first".to_string());
        }
        assert_eq!(
            group(&[bad]).unwrap_err().to_string(),
            "dir1: run_start.partition \"first\" is not K/N"
        );
    }
}
