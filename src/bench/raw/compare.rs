//! A raw run against a saved one (`bench --baseline FILE`): rows matched by target,
//! protocol, workload and connection count, compared by ratios only (pure).
//!
//! Absolute requests/s move with the machine and its load; the ceiling ratio (the row's rate
//! over the same server's no-op rate, measured minutes apart in the same run) mostly does
//! not. So the verdict rests on how the ceiling ratio changed; the raw throughput change is
//! shown beside it for the reader.

use std::fmt::Write;

use super::report::{RawReport, RawRow, RawWorkload};
use super::table::target_cell;
use sqsprobe_facts::text::escape::markdown_text;

/// One row present in both runs.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ComparedRow {
    pub target: String,
    pub protocol: String,
    pub workload: RawWorkload,
    pub connections: usize,
    pub baseline_ceiling: Option<f64>,
    pub current_ceiling: Option<f64>,
    /// current ceiling ratio ÷ baseline ceiling ratio.
    pub ceiling_change: Option<f64>,
    /// current req/s ÷ baseline req/s (machine-dependent; for information).
    pub throughput_change: Option<f64>,
}

/// The comparison of two runs.
#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) struct Comparison {
    pub rows: Vec<ComparedRow>,
    /// Rows of the current run the baseline does not have, and the other way round (for
    /// targets both runs measured).
    pub only_current: Vec<String>,
    pub only_baseline: Vec<String>,
    /// Targets of the baseline this run did not measure at all.
    pub baseline_only_targets: Vec<String>,
}

impl Comparison {
    /// Rows whose ceiling ratio fell below `limit` × the baseline's.
    pub(crate) fn below(&self, limit: f64) -> Vec<&ComparedRow> {
        self.rows
            .iter()
            .filter(|r| r.ceiling_change.is_some_and(|c| c < limit))
            .collect()
    }
}

fn key(r: &RawRow) -> (String, String, RawWorkload, usize) {
    (
        r.target.clone(),
        r.protocol.clone(),
        r.workload,
        r.connections,
    )
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

/// Matches the rows of `current` with those of `baseline`, in the current run's order.
pub(crate) fn compare(baseline: &RawReport, current: &RawReport) -> Comparison {
    let mut out = Comparison::default();
    for cur in &current.rows {
        match baseline.rows.iter().find(|b| key(b) == key(cur)) {
            Some(base) => out.rows.push(ComparedRow {
                target: cur.target.clone(),
                protocol: cur.protocol.clone(),
                workload: cur.workload,
                connections: cur.connections,
                baseline_ceiling: base.ceiling_ratio,
                current_ceiling: cur.ceiling_ratio,
                ceiling_change: quotient(cur.ceiling_ratio, base.ceiling_ratio),
                throughput_change: quotient(
                    Some(cur.requests_per_second),
                    Some(base.requests_per_second),
                ),
            }),
            None => out.only_current.push(label(cur)),
        }
    }
    for base in &baseline.rows {
        if !current.rows.iter().any(|c| c.target == base.target) {
            if !out.baseline_only_targets.contains(&base.target) {
                out.baseline_only_targets.push(base.target.clone());
            }
        } else if !current.rows.iter().any(|c| key(c) == key(base)) {
            out.only_baseline.push(label(base));
        }
    }
    out
}

fn r2(v: Option<f64>) -> String {
    v.map_or_else(|| "–".to_string(), |v| format!("{v:.2}"))
}

fn change(v: Option<f64>) -> String {
    v.map_or_else(|| "–".to_string(), |v| format!("{v:.2}×"))
}

/// The comparison as Markdown. No-op rows are left out: their ceiling ratio is 1 by
/// definition.
pub(crate) fn comparison_markdown(c: &Comparison, baseline_started_at: &str) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "Against the baseline of {}:\n",
        markdown_text(baseline_started_at)
    );
    out.push_str("| target | workload | conns | ceiling then | ceiling now | ceiling change | req/s change |\n");
    out.push_str("|---|---|--:|--:|--:|--:|--:|\n");
    for r in c.rows.iter().filter(|r| r.workload != RawWorkload::Noop) {
        let target = target_cell(&r.target, &r.protocol);
        let _ = writeln!(
            out,
            "| {target} | {} | {} | {} | {} | {} | {} |",
            r.workload.as_str(),
            r.connections,
            r2(r.baseline_ceiling),
            r2(r.current_ceiling),
            change(r.ceiling_change),
            change(r.throughput_change),
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
}
