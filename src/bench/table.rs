//! The Markdown results table and the throughput ratio against a baseline (pure).

use std::fmt::Write;

use super::result::{Operation, TargetResult};
use sqsprobe_facts::text::escape::markdown_text;

/// One line per non-empty list, `\n<what>: a, b`: what a baseline comparison could not match
/// (rows or figures on one side only), shared by the raw and the scale comparison.
pub(super) fn unmatched_lines(out: &mut String, lists: &[(&str, &[String])]) {
    for (what, list) in lists {
        if !list.is_empty() {
            let names: Vec<String> = list.iter().map(|l| markdown_text(l)).collect();
            let _ = writeln!(out, "\n{what}: {}", names.join(", "));
        }
    }
}

/// `result`'s throughput over the baseline's with the same client count; `None` when there
/// is no such baseline row or the baseline completed nothing.
pub(crate) fn throughput_ratio(
    result: &TargetResult,
    results: &[TargetResult],
    baseline: &str,
) -> Option<f64> {
    let base = results
        .iter()
        .find(|r| r.target == baseline && r.clients == result.clients)?;
    let base_rate = base.messages_per_second();
    (base_rate > 0.0).then(|| result.messages_per_second() / base_rate)
}

/// Microseconds as milliseconds with enough digits to tell sub-millisecond values apart.
fn ms(us: Option<u64>) -> String {
    match us {
        None => "–".to_string(),
        Some(us) if us < 10_000 => format!("{:.2}", us as f64 / 1000.0),
        Some(us) => format!("{:.1}", us as f64 / 1000.0),
    }
}

fn ratio(r: Option<f64>) -> String {
    match r {
        None => "–".to_string(),
        Some(r) if r >= 10.0 => format!("{r:.0}×"),
        Some(r) => format!("{r:.2}×"),
    }
}

/// One row per result, in the order given; latencies in milliseconds.
pub(crate) fn markdown_table(results: &[TargetResult], baseline: &str) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "| target | clients | msgs/s | vs {baseline} | Send p50 | Send p99 | Receive p50 | Receive p99 | Delete p50 | Delete p99 | errors |"
    );
    out.push_str("|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n");
    for r in results {
        let mut cells = vec![
            r.target.replace('|', "\\|"),
            r.clients.to_string(),
            format!("{:.0}", r.messages_per_second()),
            ratio(throughput_ratio(r, results, baseline)),
        ];
        for op in Operation::ALL {
            let stats = r.op(op);
            cells.push(ms(stats.and_then(|s| s.p50_us)));
            cells.push(ms(stats.and_then(|s| s.p99_us)));
        }
        cells.push(r.errors().to_string());
        let _ = writeln!(out, "| {} |", cells.join(" | "));
    }
    out.push_str("\nLatencies in milliseconds; msgs/s = completed send + receive + delete cycles per second.\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::result::OpStats;

    fn result(target: &str, clients: usize, cycles: u64, elapsed_s: f64) -> TargetResult {
        TargetResult {
            target: target.into(),
            endpoint_url: "http://127.0.0.1:1".into(),
            clients,
            elapsed_s,
            cycles,
            empty_receives: 0,
            operations: Operation::ALL
                .iter()
                .map(|&op| OpStats::from_samples(op, vec![100, 200, 300, 12_345], 1, None))
                .collect(),
            leaked_queues: Vec::new(),
        }
    }

    #[test]
    fn ratio_matches_client_count_and_baseline() {
        let rs = vec![
            result("moto", 1, 100, 10.0),
            result("moto", 8, 200, 10.0),
            result("embedded", 1, 1500, 10.0),
            result("embedded", 8, 1000, 10.0),
        ];
        assert_eq!(throughput_ratio(&rs[2], &rs, "moto"), Some(15.0));
        assert_eq!(throughput_ratio(&rs[3], &rs, "moto"), Some(5.0));
        assert_eq!(throughput_ratio(&rs[0], &rs, "moto"), Some(1.0));
        assert_eq!(throughput_ratio(&rs[2], &rs, "nobody"), None);
    }

    #[test]
    fn ratio_is_none_when_baseline_did_nothing() {
        let rs = vec![result("moto", 1, 0, 10.0), result("embedded", 1, 50, 10.0)];
        assert_eq!(throughput_ratio(&rs[1], &rs, "moto"), None);
    }

    #[test]
    fn table_renders_rows_ratios_and_latencies() {
        let rs = vec![
            result("moto", 1, 100, 10.0),
            result("emb|edded", 1, 1500, 10.0),
        ];
        let table = markdown_table(&rs, "moto");
        let lines: Vec<&str> = table.lines().collect();
        assert_eq!(
            lines[0],
            "| target | clients | msgs/s | vs moto | Send p50 | Send p99 | Receive p50 | Receive p99 | Delete p50 | Delete p99 | errors |"
        );
        assert_eq!(
            lines[2],
            "| moto | 1 | 10 | 1.00× | 0.20 | 12.3 | 0.20 | 12.3 | 0.20 | 12.3 | 3 |"
        );
        assert_eq!(
            lines[3],
            "| emb\\|edded | 1 | 150 | 15× | 0.20 | 12.3 | 0.20 | 12.3 | 0.20 | 12.3 | 3 |"
        );
    }

    #[test]
    fn missing_latencies_render_as_dash() {
        let mut r = result("x", 1, 0, 0.0);
        r.operations.clear();
        let table = markdown_table(&[r], "x");
        assert!(
            table.contains("| x | 1 | 0 | – | – | – | – | – | – | – | 0 |"),
            "{table}"
        );
    }
}
