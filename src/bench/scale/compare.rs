//! A scale run against a saved one (`bench --baseline FILE`): figures matched by what they
//! measure and at which sizes, each compared as a change where above 1 is better (pure).
//!
//! Every compared figure is a cost, so its change is *then ÷ now*: 0.8 means the cost grew by
//! a quarter. The growth ratios (p50 at the largest size ÷ at the smallest) and the bytes per
//! message beyond the body are machine-independent; start-up milliseconds are absolute, so
//! their change also holds the two machines' difference (both files record `machine`).
//! `--fail-below R` flags every figure whose change is below R, the same rule as the raw
//! rows' ceiling ratios.

use super::report::{GrowthRatio, MemoryRow, ScaleReport};

/// What kind of number a figure is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Unit {
    /// p50 at the largest size ÷ p50 at the smallest.
    Ratio,
    /// Bytes of RSS per stored message beyond its body.
    Bytes,
    /// Milliseconds, absolute.
    Millis,
}

impl Unit {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Unit::Ratio => "ratio",
            Unit::Bytes => "bytes",
            Unit::Millis => "ms",
        }
    }
}

/// One figure present in both runs.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ComparedFigure {
    /// What it measures, e.g. `depth standard ReceiveMessage 1000 → 1000000`.
    pub figure: String,
    pub unit: Unit,
    pub baseline: f64,
    pub current: f64,
    /// baseline ÷ current (the figures are costs): below 1 is worse. `None` when either is
    /// not positive (a memory figure that measured no growth).
    pub change: Option<f64>,
}

/// The comparison of two scale sections.
#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) struct ScaleComparison {
    pub figures: Vec<ComparedFigure>,
    /// Figures of this run the baseline does not have (another size, a workload it skipped).
    pub only_current: Vec<String>,
    /// Figures of the baseline this run does not have.
    pub only_baseline: Vec<String>,
}

impl ScaleComparison {
    /// Figures whose change is below `limit`.
    pub(crate) fn below(&self, limit: f64) -> Vec<&ComparedFigure> {
        self.figures
            .iter()
            .filter(|f| f.change.is_some_and(|c| c < limit))
            .collect()
    }
}

fn ratio_label(r: &GrowthRatio) -> String {
    let queue = r
        .queue
        .map(|q| format!(" {}", q.as_str()))
        .unwrap_or_default();
    format!(
        "{}{queue} {} {} → {}",
        r.workload.as_str(),
        r.operation,
        r.from,
        r.to
    )
}

/// A memory figure's label names its pages: one read in 4 KiB pages is not compared with one
/// read in the allocator's 2 MiB pages (a report from before `small_pages` was recorded).
fn memory_label(m: &MemoryRow) -> String {
    let pages = if m.small_pages { " (4 KiB pages)" } else { "" };
    format!(
        "memory {} at {} messages{pages}",
        m.queue.as_str(),
        m.messages
    )
}

/// Every comparable figure of a scale section: (label, unit, value).
fn figures(report: &ScaleReport) -> Vec<(String, Unit, f64)> {
    let mut out = Vec::new();
    for r in &report.ratios {
        out.push((ratio_label(r), Unit::Ratio, r.ratio));
    }
    for m in &report.memory {
        out.push((memory_label(m), Unit::Bytes, m.overhead_per_message_bytes));
    }
    if let Some(s) = &report.startup {
        out.push((
            "startup serve first answer p50".to_string(),
            Unit::Millis,
            s.serve_first_answer.p50_ms,
        ));
        out.push((
            "startup run overhead p50".to_string(),
            Unit::Millis,
            s.run_overhead.p50_ms,
        ));
    }
    out
}

/// Matches the figures of `current` with those of `baseline`, in the current run's order.
pub(crate) fn compare_scale(baseline: &ScaleReport, current: &ScaleReport) -> ScaleComparison {
    let base = figures(baseline);
    let cur = figures(current);
    let mut out = ScaleComparison::default();
    for (label, unit, now) in &cur {
        match base.iter().find(|(l, _, _)| l == label) {
            Some((_, _, then)) => out.figures.push(ComparedFigure {
                figure: label.clone(),
                unit: *unit,
                baseline: *then,
                current: *now,
                change: (*then > 0.0 && *now > 0.0).then(|| then / now),
            }),
            None => out.only_current.push(label.clone()),
        }
    }
    for (label, _, _) in &base {
        if !cur.iter().any(|(l, _, _)| l == label) {
            out.only_baseline.push(label.clone());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::scale::report::tests::depth_row;
    use crate::bench::scale::report::{Millis, QueueKind, ScaleSizes, Startup, growth_ratios};

    fn report(large_receive: f64, overhead: f64, serve_ms: f64) -> ScaleReport {
        let depth = vec![
            depth_row(QueueKind::Standard, 1_000, 100.0, 100.0),
            depth_row(QueueKind::Standard, 1_000_000, large_receive, 100.0),
        ];
        let ms = |v: f64| Millis {
            p50_ms: v,
            min_ms: v,
            max_ms: v,
        };
        ScaleReport {
            workloads: Vec::new(),
            sizes: ScaleSizes {
                depths: vec![1_000, 1_000_000],
                memory_at: vec![1_000_000],
                groups: 10_000,
                cycles: 100,
                queues: Vec::new(),
                startup_samples: 1,
            },
            server_binary: "sqsprobe".into(),
            ratios: growth_ratios(&depth, &[]),
            depth,
            memory: vec![MemoryRow {
                queue: QueueKind::Standard,
                groups: None,
                messages: 1_000_000,
                body_bytes: 11,
                rss_before_bytes: 0,
                rss_after_bytes: 0,
                rss_per_message_bytes: overhead + 11.0,
                overhead_per_message_bytes: overhead,
                small_pages: true,
            }],
            queues: Vec::new(),
            startup: Some(Startup {
                samples: 1,
                serve_first_answer: ms(serve_ms),
                run_overhead: ms(90.0),
                run_case_p50_ms: 30.0,
                serve_bound_ms: 50.0,
                run_bound_ms: 200.0,
            }),
            errors: Vec::new(),
        }
    }

    #[test]
    fn a_cost_that_grew_is_a_change_below_one() {
        let base = report(100.0, 250.0, 10.0);
        // Receive at 1M now costs twice its 1k p50; memory and start-up unchanged.
        let cur = report(200.0, 250.0, 10.0);
        let c = compare_scale(&base, &cur);
        let got: Vec<(&str, Option<f64>)> = c
            .figures
            .iter()
            .map(|f| (f.figure.as_str(), f.change))
            .collect();
        assert_eq!(
            got,
            [
                ("depth standard ReceiveMessage 1000 → 1000000", Some(0.5)),
                ("depth standard DeleteMessage 1000 → 1000000", Some(1.0)),
                (
                    "memory standard at 1000000 messages (4 KiB pages)",
                    Some(1.0)
                ),
                ("startup serve first answer p50", Some(1.0)),
                ("startup run overhead p50", Some(1.0)),
            ]
        );
        let below: Vec<&str> = c.below(0.8).iter().map(|f| f.figure.as_str()).collect();
        assert_eq!(below, ["depth standard ReceiveMessage 1000 → 1000000"]);
        assert!(c.only_current.is_empty() && c.only_baseline.is_empty());
    }

    #[test]
    fn memory_read_in_other_pages_is_not_compared() {
        let mut base = report(100.0, 250.0, 10.0);
        base.memory[0].small_pages = false;
        let cur = report(100.0, 131.0, 10.0);
        let c = compare_scale(&base, &cur);
        assert_eq!(
            c.only_current,
            ["memory standard at 1000000 messages (4 KiB pages)"]
        );
        assert_eq!(c.only_baseline, ["memory standard at 1000000 messages"]);
        assert!(c.figures.iter().all(|f| !f.figure.starts_with("memory")));
    }

    #[test]
    fn other_sizes_are_not_compared_and_no_growth_is_no_change() {
        let base = report(100.0, 250.0, 10.0);
        let mut cur = report(100.0, -11.0, 20.0);
        cur.memory[0].messages = 200;
        let c = compare_scale(&base, &cur);
        assert_eq!(
            c.only_current,
            ["memory standard at 200 messages (4 KiB pages)"]
        );
        assert_eq!(
            c.only_baseline,
            ["memory standard at 1000000 messages (4 KiB pages)"]
        );
        let serve = c
            .figures
            .iter()
            .find(|f| f.figure == "startup serve first answer p50")
            .expect("compared");
        assert_eq!((serve.unit, serve.change), (Unit::Millis, Some(0.5)));
        let mut none = report(100.0, 0.0, 10.0);
        none.memory[0].overhead_per_message_bytes = -3.0;
        let c = compare_scale(&report(100.0, -1.0, 10.0), &none);
        let memory = c
            .figures
            .iter()
            .find(|f| f.unit == Unit::Bytes)
            .expect("memory compared");
        assert_eq!(memory.change, None);
    }
}
