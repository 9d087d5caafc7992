//! The raw run as Markdown: one row per target × workload × connection count (pure).

use std::fmt::Write;

use super::report::{RawRow, RawWorkload};
use sqsprobe_facts::text::escape::markdown_text;

/// Microseconds with enough digits for loopback latencies (tens of µs) and slow peers alike.
fn us(v: Option<f64>) -> String {
    match v {
        None => "–".to_string(),
        Some(v) if v < 100.0 => format!("{v:.1}"),
        Some(v) => format!("{v:.0}"),
    }
}

fn ratio(r: Option<f64>) -> String {
    r.map_or_else(|| "–".to_string(), |r| format!("{r:.2}"))
}

fn rate(r: f64) -> String {
    if r < 100.0 {
        format!("{r:.1}")
    } else {
        format!("{r:.0}")
    }
}

/// A target's name for a table cell, with its protocol when it is not the default JSON.
pub fn target_cell(target: &str, protocol: &str) -> String {
    if protocol == "json" {
        markdown_text(target)
    } else {
        format!("{} ({protocol})", markdown_text(target))
    }
}

/// The results table, rows in the order given, and a legend. With a reference server in the
/// run, each row's fraction of it is a column of its own.
pub fn raw_markdown_table(rows: &[RawRow]) -> String {
    let referenced = rows.iter().any(|r| r.reference_ratio.is_some());
    let mut out = String::new();
    out.push_str("| target | workload | conns | req/s | msgs/s | ceiling |");
    out.push_str(if referenced { " vs reference |" } else { "" });
    out.push_str(" vs best no-op | p50 µs | p99 µs | p999 µs | errors | reconnects |\n");
    out.push_str("|---|---|--:|--:|--:|--:|");
    out.push_str(if referenced { "--:|" } else { "" });
    out.push_str("--:|--:|--:|--:|--:|--:|\n");
    for r in rows {
        let target = target_cell(&r.target, &r.protocol);
        let _ = write!(
            out,
            "| {target} | {} | {} | {} | {} | {} |",
            r.workload.as_str(),
            r.connections,
            rate(r.requests_per_second),
            rate(r.messages_per_second),
            match r.ceiling_drift {
                Some(d) if r.workload == RawWorkload::Noop => format!("drift {d:.2}"),
                _ => ratio(r.ceiling_ratio),
            },
        );
        if referenced {
            let _ = write!(out, " {} |", ratio(r.reference_ratio));
        }
        let _ = writeln!(
            out,
            " {} | {} | {} | {} | {} | {} |",
            ratio(r.run_ceiling_ratio),
            us(r.latency.p50_us),
            us(r.latency.p99_us),
            us(r.latency.p999_us),
            r.errors,
            r.reconnects,
        );
    }
    out.push_str(
        "\nceiling = req/s ÷ the same target's no-op req/s at the same connection count (1.00: the \
         SQS work costs nothing beyond HTTP); the no-op runs before and after the workloads, and \
         its drift is the second phase's rate ÷ the first's; vs best no-op = req/s ÷ the fastest no-op of the \
         run at that count. Latency per request, nearest rank.\n",
    );
    if referenced {
        out.push_str(
            "vs reference = req/s ÷ the reference server's req/s at that count: a bare hyper server \
             in the same run, on the emulator's runtime settings, reading each request and \
             answering a fixed 200 the size of a SendMessage reply (this machine's HTTP limit \
             for this driver), measured before every target and again after them (`reference \
             (end)`); its req/s is the mean of the two.\n",
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::raw::report::apply_ceilings;
    use crate::bench::raw::report::tests::row;
    use crate::bench::raw::{REFERENCE, REFERENCE_END};

    #[test]
    fn a_reference_in_the_run_adds_its_column() {
        let mut rows = vec![
            row(REFERENCE, RawWorkload::Noop, 4, 100_000.0),
            row("embedded", RawWorkload::Noop, 4, 80_000.0),
            row("embedded", RawWorkload::Send, 4, 60_000.0),
        ];
        apply_ceilings(&mut rows);
        let table = raw_markdown_table(&rows);
        let lines: Vec<&str> = table.lines().collect();
        assert!(lines[0].contains("| ceiling | vs reference | vs best no-op |"));
        assert_eq!(
            lines[2],
            "| reference | noop | 4 | 100000 | 100000 | 1.00 | 1.00 | – | 30.0 | 1000 | 1000 | 0 | 0 |"
        );
        assert_eq!(
            lines[4],
            "| embedded | send | 4 | 60000 | 60000 | 0.75 | 0.60 | 0.75 | 30.0 | 1000 | 1000 | 0 | 0 |"
        );
        assert!(table.contains("vs reference = req/s"));
    }

    #[test]
    fn fractions_are_of_the_reference_at_both_ends_of_the_run() {
        let mut rows = vec![
            row(REFERENCE, RawWorkload::Noop, 4, 110_000.0),
            row("embedded", RawWorkload::Noop, 4, 80_000.0),
            row("embedded", RawWorkload::Send, 4, 60_000.0),
            row(REFERENCE, RawWorkload::Noop, 16, 100_000.0),
            row(REFERENCE_END, RawWorkload::Noop, 4, 90_000.0),
        ];
        apply_ceilings(&mut rows);
        let fraction = |i: usize| rows[i].reference_ratio.unwrap();
        // At 4 connections the reference ran at 110k first and 90k last: the mean, 100k.
        assert!((fraction(0) - 1.1).abs() < 1e-9 && (fraction(4) - 0.9).abs() < 1e-9);
        assert!((fraction(2) - 0.6).abs() < 1e-9);
        // Measured at one end only (16 connections): that measurement.
        assert!((fraction(3) - 1.0).abs() < 1e-9);
        // Neither end of the reference is the fastest SQS server of the run.
        assert!((rows[2].run_ceiling_ratio.unwrap() - 0.75).abs() < 1e-9);
        assert_eq!(rows[4].run_ceiling_ratio, None);
        let table = raw_markdown_table(&rows);
        assert!(
            table.contains("| reference (end) | noop | 4 | 90000 |"),
            "{table}"
        );
    }

    #[test]
    fn renders_ratios_latencies_and_protocol() {
        let mut rows = vec![
            row("embedded", RawWorkload::Noop, 4, 50_000.0),
            row("embedded", RawWorkload::Cycle, 4, 40_000.0),
            row("sq|lite", RawWorkload::Send, 4, 55.5),
        ];
        rows[2].protocol = "query".into();
        rows[0].ceiling_drift = Some(0.9);
        apply_ceilings(&mut rows);
        let table = raw_markdown_table(&rows);
        let lines: Vec<&str> = table.lines().collect();
        assert_eq!(
            lines[2],
            "| embedded | noop | 4 | 50000 | 50000 | drift 0.90 | 1.00 | 30.0 | 1000 | 1000 | 0 | 0 |"
        );
        assert_eq!(
            lines[3],
            "| embedded | cycle | 4 | 40000 | 40000 | 0.80 | 0.80 | 30.0 | 1000 | 1000 | 0 | 0 |"
        );
        assert_eq!(
            lines[4],
            "| sq\\|lite (query) | send | 4 | 55.5 | 55.5 | – | 0.00 | 30.0 | 1000 | 1000 | 0 | 0 |"
        );
    }
}
