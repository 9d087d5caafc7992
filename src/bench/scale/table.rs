//! The scale run and its comparison as Markdown (pure).

use std::fmt::Write;

use super::compare::{ScaleComparison, Unit};
use super::report::ScaleReport;
use sqsprobe_facts::text::escape::markdown_text;

fn us(v: Option<f64>) -> String {
    v.map_or_else(|| "–".to_string(), |v| format!("{v:.0}"))
}

fn mib(bytes: u64) -> String {
    format!("{:.1} MiB", bytes as f64 / (1024.0 * 1024.0))
}

fn opt(v: Option<u64>) -> String {
    v.map_or_else(|| "–".to_string(), |v| v.to_string())
}

/// Every table of the scale run that has rows, each under a heading line.
pub(crate) fn scale_markdown(r: &ScaleReport) -> String {
    let mut out = String::new();
    if !r.memory.is_empty() {
        out.push_str("\nMemory (RSS growth per stored message of `sqsprobe serve`");
        if r.memory.iter().all(|m| m.small_pages) {
            out.push_str(", transparent huge pages off for it: RSS in 4 KiB pages");
        }
        out.push_str("):\n\n");
        out.push_str("| queue | messages | groups | RSS before | RSS after | bytes per message | beyond the body |\n");
        out.push_str("|---|--:|--:|--:|--:|--:|--:|\n");
        for m in &r.memory {
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} | {} | {:.0} | {:.0} |",
                m.queue.as_str(),
                m.messages,
                opt(m.groups),
                mib(m.rss_before_bytes),
                mib(m.rss_after_bytes),
                m.rss_per_message_bytes,
                m.overhead_per_message_bytes
            );
        }
    }
    if !r.depth.is_empty() {
        out.push_str("\nDepth (one keep-alive connection, client-side µs");
        // A queue kind's rows are consecutive (one fill pass each).
        let mut small: Vec<&str> = r
            .depth
            .iter()
            .filter(|d| d.small_pages)
            .map(|d| d.queue.as_str())
            .collect();
        small.dedup();
        if !small.is_empty() {
            let _ = write!(
                out,
                "; {} on the memory workload's server, transparent huge pages off",
                small.join(", ")
            );
        }
        out.push_str("):\n\n");
        out.push_str("| queue | depth | groups | held | cycles | receive p50 | receive p99 | delete p50 | delete p99 |\n");
        out.push_str("|---|--:|--:|--:|--:|--:|--:|--:|--:|\n");
        for d in &r.depth {
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} | {} | {} | {} | {} | {} |",
                d.queue.as_str(),
                d.depth,
                opt(d.groups),
                opt(d.groups_held),
                d.cycles,
                us(d.receive.p50_us),
                us(d.receive.p99_us),
                us(d.delete.p50_us),
                us(d.delete.p99_us)
            );
        }
    }
    if !r.queues.is_empty() {
        out.push_str(
            "\nQueues (ListQueues with a prefix matching one queue, GetQueueUrl; µs):\n\n",
        );
        out.push_str("| queues | lookups | ListQueues p50 | ListQueues p99 | GetQueueUrl p50 | GetQueueUrl p99 |\n");
        out.push_str("|--:|--:|--:|--:|--:|--:|\n");
        for q in &r.queues {
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} | {} | {} |",
                q.queues,
                q.lookups,
                us(q.list_queues.p50_us),
                us(q.list_queues.p99_us),
                us(q.get_queue_url.p50_us),
                us(q.get_queue_url.p99_us)
            );
        }
    }
    if !r.ratios.is_empty() {
        out.push_str("\nGrowth (p50 at the largest size ÷ p50 at the smallest; 1.00 is flat):\n\n");
        out.push_str(
            "| workload | queue | operation | sizes | p50 µs | p50 µs at largest | ratio |\n",
        );
        out.push_str("|---|---|---|--:|--:|--:|--:|\n");
        for g in &r.ratios {
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} → {} | {:.0} | {:.0} | {:.2} |",
                g.workload.as_str(),
                g.queue.map_or("–", |q| q.as_str()),
                g.operation,
                g.from,
                g.to,
                g.from_p50_us,
                g.to_p50_us,
                g.ratio
            );
        }
    }
    if let Some(s) = &r.startup {
        let _ = writeln!(out, "\nStart-up ({} samples each, ms):\n", s.samples);
        out.push_str("| figure | p50 | min | max | bound |\n|---|--:|--:|--:|--:|\n");
        let _ = writeln!(
            out,
            "| `serve`: exec → first answer | {:.1} | {:.1} | {:.1} | {:.0} |",
            s.serve_first_answer.p50_ms,
            s.serve_first_answer.min_ms,
            s.serve_first_answer.max_ms,
            s.serve_bound_ms
        );
        let _ = writeln!(
            out,
            "| `run` of a one-case suite − the case ({:.0} ms) | {:.1} | {:.1} | {:.1} | {:.0} |",
            s.run_case_p50_ms,
            s.run_overhead.p50_ms,
            s.run_overhead.min_ms,
            s.run_overhead.max_ms,
            s.run_bound_ms
        );
    }
    for e in &r.errors {
        let _ = writeln!(out, "\nNot measured: {}", markdown_text(e));
    }
    out
}

/// A figure as its unit shows it: ratios to 2 places, bytes whole, milliseconds to 0.1.
pub(crate) fn scale_value(unit: Unit, v: f64) -> String {
    match unit {
        Unit::Ratio => format!("{v:.2}"),
        Unit::Bytes => format!("{v:.0}"),
        Unit::Millis => format!("{v:.1}"),
    }
}

/// The scale comparison as Markdown.
pub(crate) fn scale_comparison_markdown(c: &ScaleComparison) -> String {
    let mut out = String::new();
    if !c.figures.is_empty() {
        out.push_str("\n| scale figure | unit | then | now | change (then ÷ now) |\n");
        out.push_str("|---|---|--:|--:|--:|\n");
        for f in &c.figures {
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} | {} |",
                markdown_text(&f.figure),
                f.unit.as_str(),
                scale_value(f.unit, f.baseline),
                scale_value(f.unit, f.current),
                f.change
                    .map_or_else(|| "–".to_string(), |c| format!("{c:.2}×"))
            );
        }
    }
    crate::bench::table::unmatched_lines(
        &mut out,
        &[
            ("Scale figures not in the baseline", &c.only_current),
            ("Scale figures in the baseline only", &c.only_baseline),
        ],
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::scale::compare::ComparedFigure;

    #[test]
    fn comparison_shows_change_as_then_over_now() {
        let c = ScaleComparison {
            figures: vec![ComparedFigure {
                figure: "depth fifo ReceiveMessage 1000 → 1000000".into(),
                unit: Unit::Ratio,
                baseline: 1.1,
                current: 2.2,
                change: Some(0.5),
            }],
            only_current: vec!["memory fifo at 200 messages".into()],
            only_baseline: Vec::new(),
        };
        let md = scale_comparison_markdown(&c);
        assert!(
            md.contains(
                "| depth fifo ReceiveMessage 1000 → 1000000 | ratio | 1.10 | 2.20 | 0.50× |"
            ),
            "{md}"
        );
        assert!(
            md.contains("Scale figures not in the baseline: memory fifo at 200 messages"),
            "{md}"
        );
    }
}
