//! A raw run against a saved one (`bench --baseline FILE`): rows matched by target,
//! protocol, workload and connection count, compared by ratios only (pure).
//!
//! Absolute requests/s move with the machine and its load; the ceiling ratio (the row's rate
//! over the same server's no-op rate, measured minutes apart in the same run) mostly does
//! not. So the verdict rests on how the ceiling ratio changed; the raw throughput change is
//! shown beside it for the reader.
//!
//! Either side may hold several repeats of a row (`bench --repeat N`). One draw of a row
//! moves with the machine's load, so a side with several is summed up by its median (of the
//! ceiling ratio and of requests/s) with the lowest and highest, and the changes are of the
//! medians; a side with one run is that run's value, the median of one.

use std::fmt::Write;

use super::report::{RawReport, RawRow, RawWorkload};
use super::table::target_cell;
use sqsprobe_facts::text::escape::markdown_text;

/// A figure over one side's repeats of a row.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Summary {
    /// The median (the mean of the middle two for an even count).
    pub median: f64,
    pub lowest: f64,
    pub highest: f64,
}

/// The median, lowest and highest of `values`; `None` when there are none.
pub(crate) fn summarize(values: &[f64]) -> Option<Summary> {
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    let n = v.len();
    let median = match n {
        0 => return None,
        _ if n % 2 == 1 => v[n / 2],
        _ => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    };
    Some(Summary {
        median,
        lowest: v[0],
        highest: v[n - 1],
    })
}

/// One side's repeats of a row.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Side {
    /// Rows of this side with the key: one per repeat.
    pub runs: usize,
    /// Over the runs that had a ceiling ratio (a run whose no-op answered nothing has none).
    pub ceiling: Option<Summary>,
    /// Over every run.
    pub requests_per_second: Option<Summary>,
}

impl Side {
    fn of(rows: &[&RawRow]) -> Side {
        let ceilings: Vec<f64> = rows.iter().filter_map(|r| r.ceiling_ratio).collect();
        let rates: Vec<f64> = rows.iter().map(|r| r.requests_per_second).collect();
        Side {
            runs: rows.len(),
            ceiling: summarize(&ceilings),
            requests_per_second: summarize(&rates),
        }
    }
}

/// One row present in both runs.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ComparedRow {
    pub target: String,
    pub protocol: String,
    pub workload: RawWorkload,
    pub connections: usize,
    pub baseline: Side,
    pub current: Side,
    /// current ceiling ratio ÷ baseline ceiling ratio (each side's median over its runs).
    pub ceiling_change: Option<f64>,
    /// current req/s ÷ baseline req/s, medians likewise (machine-dependent; for information).
    pub throughput_change: Option<f64>,
}

impl ComparedRow {
    /// Whether either side had more than one run of the row.
    pub(crate) fn repeated(&self) -> bool {
        self.baseline.runs > 1 || self.current.runs > 1
    }

    /// What [`Self::ceiling_change`] compares, for the `--fail-below` message: the ceiling
    /// ratio, or with repeats the medians and how many runs each side had.
    pub(crate) fn change_subject(&self) -> String {
        if self.repeated() {
            format!(
                "median ceiling ratio ({} run(s) now, {} in the baseline)",
                self.current.runs, self.baseline.runs
            )
        } else {
            "ceiling ratio".to_string()
        }
    }
}

/// The comparison of two runs.
#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) struct Comparison {
    pub rows: Vec<ComparedRow>,
    /// Rows of the current run the baseline does not have, and the other way round (for
    /// targets both runs measured); each once, however many runs had it.
    pub only_current: Vec<String>,
    pub only_baseline: Vec<String>,
    /// Targets of the baseline this run did not measure at all.
    pub baseline_only_targets: Vec<String>,
}

impl Comparison {
    /// Rows whose ceiling ratio fell below `limit` × the baseline's (medians, with repeats).
    pub(crate) fn below(&self, limit: f64) -> Vec<&ComparedRow> {
        self.rows
            .iter()
            .filter(|r| r.ceiling_change.is_some_and(|c| c < limit))
            .collect()
    }
}

type Key<'a> = (&'a str, &'a str, RawWorkload, usize);

fn key(r: &RawRow) -> Key<'_> {
    (&r.target, &r.protocol, r.workload, r.connections)
}

fn label(r: &RawRow) -> String {
    format!(
        "{} {} {} × {}",
        r.target,
        r.protocol,
        r.workload.as_str(),
        r.connections
    )
}

fn quotient(a: Option<f64>, b: Option<f64>) -> Option<f64> {
    match (a, b) {
        (Some(a), Some(b)) if b > 0.0 => Some(a / b),
        _ => None,
    }
}

/// The rows of `rows` grouped by key (every repeat of a row together), in the order the keys
/// first appear.
fn groups(rows: &[RawRow]) -> Vec<(Key<'_>, Vec<&RawRow>)> {
    let mut out: Vec<(Key<'_>, Vec<&RawRow>)> = Vec::new();
    for r in rows {
        match out.iter_mut().find(|(k, _)| *k == key(r)) {
            Some((_, group)) => group.push(r),
            None => out.push((key(r), vec![r])),
        }
    }
    out
}

/// Matches the rows of `current` with those of `baseline`, in the current run's order; every
/// repeat of a row on either side counts ([`Side`]).
pub(crate) fn compare(baseline: &RawReport, current: &RawReport) -> Comparison {
    let mut out = Comparison::default();
    let base_groups = groups(&baseline.rows);
    let cur_groups = groups(&current.rows);
    for (k, cur) in &cur_groups {
        match base_groups.iter().find(|(b, _)| b == k) {
            Some((_, base)) => {
                let (baseline, current) = (Side::of(base), Side::of(cur));
                let median = |s: Option<Summary>| s.map(|s| s.median);
                out.rows.push(ComparedRow {
                    target: cur[0].target.clone(),
                    protocol: cur[0].protocol.clone(),
                    workload: cur[0].workload,
                    connections: cur[0].connections,
                    ceiling_change: quotient(median(current.ceiling), median(baseline.ceiling)),
                    throughput_change: quotient(
                        median(current.requests_per_second),
                        median(baseline.requests_per_second),
                    ),
                    baseline,
                    current,
                });
            }
            None => out.only_current.push(label(cur[0])),
        }
    }
    for (k, base) in &base_groups {
        let target = base[0].target.as_str();
        if !cur_groups.iter().any(|(c, _)| c.0 == target) {
            if !out.baseline_only_targets.iter().any(|t| t == target) {
                out.baseline_only_targets.push(target.to_string());
            }
        } else if !cur_groups.iter().any(|(c, _)| c == k) {
            out.only_baseline.push(label(base[0]));
        }
    }
    out
}

fn r2(v: Option<f64>) -> String {
    v.map_or_else(|| "–".to_string(), |v| format!("{v:.2}"))
}

/// A side's ceiling ratio: the value of its one run, or the median of several with the
/// lowest–highest.
fn ceiling_cell(side: &Side) -> String {
    match side.ceiling {
        Some(s) if side.runs > 1 => format!("{:.2} ({:.2}–{:.2})", s.median, s.lowest, s.highest),
        s => r2(s.map(|s| s.median)),
    }
}

fn change(v: Option<f64>) -> String {
    v.map_or_else(|| "–".to_string(), |v| format!("{v:.2}×"))
}

/// The comparison as Markdown. No-op rows are left out: their ceiling ratio is 1 by
/// definition. When a row has several runs on either side, the table says how many each side
/// had, and a side of several shows its median with the lowest–highest.
pub(crate) fn comparison_markdown(c: &Comparison, baseline_started_at: &str) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "Against the baseline of {}:\n",
        markdown_text(baseline_started_at)
    );
    let shown: Vec<&ComparedRow> = c
        .rows
        .iter()
        .filter(|r| r.workload != RawWorkload::Noop)
        .collect();
    let repeated = shown.iter().any(|r| r.repeated());
    if repeated {
        out.push_str("| target | workload | conns | runs then | ceiling then | runs now | ceiling now | ceiling change | req/s change |\n");
        out.push_str("|---|---|--:|--:|--:|--:|--:|--:|--:|\n");
    } else {
        out.push_str("| target | workload | conns | ceiling then | ceiling now | ceiling change | req/s change |\n");
        out.push_str("|---|---|--:|--:|--:|--:|--:|\n");
    }
    for r in &shown {
        let target = target_cell(&r.target, &r.protocol);
        let (then, now) = if repeated {
            (
                format!("{} | {}", r.baseline.runs, ceiling_cell(&r.baseline)),
                format!("{} | {}", r.current.runs, ceiling_cell(&r.current)),
            )
        } else {
            (ceiling_cell(&r.baseline), ceiling_cell(&r.current))
        };
        let _ = writeln!(
            out,
            "| {target} | {} | {} | {then} | {now} | {} | {} |",
            r.workload.as_str(),
            r.connections,
            change(r.ceiling_change),
            change(r.throughput_change),
        );
    }
    if repeated {
        out.push_str(
            "\nA side with several runs of a row gives the median of their ceiling ratios, and \
             the lowest–highest; both changes (and --fail-below) are of the medians, req/s \
             too. One draw moves with the machine's load: compare medians of --repeat 3 or \
             more.\n",
        );
    }
    crate::bench::table::unmatched_lines(
        &mut out,
        &[
            ("Rows not in the baseline", &c.only_current),
            ("Rows in the baseline only", &c.only_baseline),
            ("Targets in the baseline only", &c.baseline_only_targets),
        ],
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::raw::report::apply_ceilings;
    use crate::bench::raw::report::tests::{row, sample_report};

    fn report(rows: Vec<RawRow>) -> RawReport {
        let mut report = sample_report(rows);
        apply_ceilings(&mut report.rows);
        report
    }

    #[test]
    fn compares_ceiling_ratios_not_absolute_rates() {
        // The machine got twice as slow, the emulator's share of its ceiling did not move;
        // moto's share halved.
        let base = report(vec![
            row("embedded", RawWorkload::Noop, 1, 1000.0),
            row("embedded", RawWorkload::Send, 1, 800.0),
            row("moto", RawWorkload::Noop, 1, 100.0),
            row("moto", RawWorkload::Send, 1, 50.0),
            row("gone", RawWorkload::Send, 1, 5.0),
        ]);
        let cur = report(vec![
            row("embedded", RawWorkload::Noop, 1, 500.0),
            row("embedded", RawWorkload::Send, 1, 400.0),
            row("moto", RawWorkload::Noop, 1, 100.0),
            row("moto", RawWorkload::Send, 1, 25.0),
            row("new", RawWorkload::Send, 1, 5.0),
        ]);
        let c = compare(&base, &cur);
        let send: Vec<(&str, Option<f64>, Option<f64>)> = c
            .rows
            .iter()
            .filter(|r| r.workload == RawWorkload::Send)
            .map(|r| (r.target.as_str(), r.ceiling_change, r.throughput_change))
            .collect();
        assert_eq!(
            send,
            [
                ("embedded", Some(1.0), Some(0.5)),
                ("moto", Some(0.5), Some(0.5)),
            ]
        );
        assert_eq!(c.only_current, ["new json send × 1"]);
        assert!(c.only_baseline.is_empty(), "{c:?}");
        assert_eq!(c.baseline_only_targets, ["gone"]);
        let below: Vec<&str> = c.below(0.9).iter().map(|r| r.target.as_str()).collect();
        assert_eq!(below, ["moto"]);
        let md = comparison_markdown(&c, "2026-12-01T00:00:00Z");
        assert!(
            md.contains("| moto | send | 1 | 0.50 | 0.25 | 0.50× | 0.50× |"),
            "{md}"
        );
        assert!(!md.contains("| noop |"), "{md}");
        assert!(
            md.contains("Rows not in the baseline: new json send × 1"),
            "{md}"
        );
    }

    /// A report of several runs, each run's ceilings from its own no-op rows: each entry is
    /// one run's (no-op req/s, send req/s) for the `embedded` target at one connection.
    fn runs(runs: &[(f64, f64)]) -> RawReport {
        let mut rows = Vec::new();
        for (n, &(noop, send)) in runs.iter().enumerate() {
            let mut run = vec![
                row("embedded", RawWorkload::Noop, 1, noop),
                row("embedded", RawWorkload::Send, 1, send),
            ];
            apply_ceilings(&mut run);
            for r in &mut run {
                r.repeat = n as u32;
            }
            rows.extend(run);
        }
        let mut report = sample_report(rows);
        report.repeats = runs.len();
        report
    }

    fn send(c: &Comparison) -> &ComparedRow {
        c.rows
            .iter()
            .find(|r| r.workload == RawWorkload::Send)
            .expect("a send row")
    }

    #[test]
    fn summary_is_median_lowest_and_highest() {
        assert_eq!(summarize(&[]), None);
        let one = summarize(&[0.7]).expect("one");
        assert_eq!((one.median, one.lowest, one.highest), (0.7, 0.7, 0.7));
        let odd = summarize(&[0.9, 0.5, 0.8]).expect("odd");
        assert_eq!((odd.median, odd.lowest, odd.highest), (0.8, 0.5, 0.9));
        let even = summarize(&[4.0, 1.0, 2.0, 3.0]).expect("even");
        assert_eq!((even.median, even.lowest, even.highest), (2.5, 1.0, 4.0));
    }

    #[test]
    fn a_repeated_baseline_is_judged_by_its_median_not_its_first_run() {
        // The baseline's first run was a bad draw (0.5); its median is 0.8, as is this run.
        let base = runs(&[(1000.0, 500.0), (1000.0, 800.0), (1000.0, 900.0)]);
        let cur = runs(&[(1000.0, 800.0)]);
        let c = compare(&base, &cur);
        let r = send(&c);
        assert_eq!((r.baseline.runs, r.current.runs), (3, 1));
        assert_eq!(r.baseline.ceiling.map(|s| s.median), Some(0.8));
        assert_eq!(r.current.ceiling.map(|s| s.median), Some(0.8));
        assert_eq!(r.ceiling_change, Some(1.0));
        assert_eq!(r.throughput_change, Some(1.0));
        let md = comparison_markdown(&c, "then");
        assert!(
            md.contains(
                "| embedded | send | 1 | 3 | 0.80 (0.50–0.90) | 1 | 0.80 | 1.00× | 1.00× |"
            ),
            "{md}"
        );
        assert!(md.contains("median of their ceiling ratios"), "{md}");
        assert_eq!(
            r.change_subject(),
            "median ceiling ratio (1 run(s) now, 3 in the baseline)"
        );
    }

    #[test]
    fn a_repeated_run_fails_below_only_when_its_median_does() {
        // One bad draw of three (the first) does not fail the run; a low median does.
        let base = runs(&[(1000.0, 800.0)]);
        let one_bad = runs(&[(1000.0, 400.0), (1000.0, 800.0), (1000.0, 820.0)]);
        let c = compare(&base, &one_bad);
        assert!(c.below(0.9).is_empty(), "{c:?}");
        assert_eq!(send(&c).current.runs, 3);
        let ceiling = send(&c).current.ceiling.expect("ceilings");
        assert_eq!((ceiling.lowest, ceiling.highest), (0.4, 0.82));

        let mostly_bad = runs(&[(1000.0, 900.0), (1000.0, 400.0), (1000.0, 500.0)]);
        let c = compare(&base, &mostly_bad);
        let below: Vec<Option<f64>> = c.below(0.9).iter().map(|r| r.ceiling_change).collect();
        assert_eq!(below, [Some(0.625)]);
    }

    #[test]
    fn requests_per_second_change_is_of_the_medians() {
        // Both sides repeated; the machine's no-op rate moved, the share did not.
        let base = runs(&[(1000.0, 100.0), (1000.0, 800.0), (1000.0, 700.0)]);
        let cur = runs(&[(500.0, 350.0), (500.0, 400.0)]);
        let c = compare(&base, &cur);
        let r = send(&c);
        assert_eq!(
            r.baseline.requests_per_second.map(|s| s.median),
            Some(700.0)
        );
        assert_eq!(r.current.requests_per_second.map(|s| s.median), Some(375.0));
        assert_eq!(r.throughput_change, Some(375.0 / 700.0));
        assert_eq!(r.ceiling_change, Some(0.75 / 0.7));
    }

    #[test]
    fn unmatched_rows_are_listed_once_however_many_runs_had_them() {
        let mut base = runs(&[(1000.0, 800.0), (1000.0, 800.0)]);
        let mut cur = runs(&[(1000.0, 800.0), (1000.0, 800.0)]);
        for (n, report) in [&mut base, &mut cur].into_iter().enumerate() {
            for r in 0..2 {
                let mut extra = row("embedded", RawWorkload::Cycle, 1 + n, 10.0);
                extra.repeat = r;
                report.rows.push(extra);
            }
        }
        let c = compare(&base, &cur);
        assert_eq!(c.only_current, ["embedded json cycle × 2"]);
        assert_eq!(c.only_baseline, ["embedded json cycle × 1"]);
    }
}
