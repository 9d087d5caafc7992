//! A row's fraction of the reference over the repeats of a run (`bench --repeat N`): the
//! median, the lowest and the highest, and how often the reference was client-bound (pure).
//!
//! On a shared machine one run's fraction moves by ±10–15 % with the machine's load, so a
//! figure is claimed from the median of several runs with its spread, never from one.

use std::fmt::Write;

use super::compare::summarize;
use super::report::{RawRow, RawWorkload, is_reference};
use super::table::target_cell;

/// One row's fractions over the repeats.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Spread {
    pub target: String,
    pub protocol: String,
    pub workload: RawWorkload,
    pub connections: usize,
    /// The row's `reference_ratio` in each repeat that had one, in run order.
    pub fractions: Vec<f64>,
    /// Repeats whose reference at this connection count the client held back (either end).
    pub reference_client_bound: usize,
}

impl Spread {
    /// The median (the mean of the middle two for an even count).
    pub(crate) fn median(&self) -> Option<f64> {
        summarize(&self.fractions).map(|s| s.median)
    }

    /// The lowest and the highest.
    pub(crate) fn range(&self) -> Option<(f64, f64)> {
        summarize(&self.fractions).map(|s| (s.lowest, s.highest))
    }
}

/// The spreads of every target row (the reference's own rows left out), in the order the
/// rows first appear; `rows` holds every repeat's rows, each with its `repeat` index.
pub(crate) fn spreads(rows: &[RawRow]) -> Vec<Spread> {
    let mut out: Vec<Spread> = Vec::new();
    for r in rows.iter().filter(|r| !is_reference(&r.target)) {
        let bound = rows
            .iter()
            .filter(|b| {
                is_reference(&b.target)
                    && b.repeat == r.repeat
                    && b.connections == r.connections
                    && b.cpu.as_ref().and_then(|c| c.client_bound) == Some(true)
            })
            .count()
            .min(1);
        let same = |s: &Spread| {
            s.target == r.target
                && s.protocol == r.protocol
                && s.workload == r.workload
                && s.connections == r.connections
        };
        let spread = match out.iter_mut().find(|s| same(s)) {
            Some(s) => s,
            None => {
                out.push(Spread {
                    target: r.target.clone(),
                    protocol: r.protocol.clone(),
                    workload: r.workload,
                    connections: r.connections,
                    fractions: Vec::new(),
                    reference_client_bound: 0,
                });
                out.last_mut().expect("just pushed")
            }
        };
        if let Some(f) = r.reference_ratio {
            spread.fractions.push(f);
            spread.reference_client_bound += bound;
        }
    }
    out.retain(|s| !s.fractions.is_empty());
    out
}

/// The spreads as Markdown, with what may be claimed from them; empty without a reference.
pub(crate) fn spread_markdown(spreads: &[Spread], repeats: usize) -> String {
    if spreads.is_empty() {
        return String::new();
    }
    let mut out = String::new();
    let _ = writeln!(
        out,
        "\n| target | workload | conns | runs | vs reference, median | lowest–highest | reference client-bound |"
    );
    out.push_str("|---|---|--:|--:|--:|--:|--:|\n");
    for s in spreads {
        let median = s.median().map_or("–".into(), |m| format!("{m:.2}"));
        let range = s
            .range()
            .map_or("–".into(), |(lo, hi)| format!("{lo:.2}–{hi:.2}"));
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {median} | {range} | {} of {} |",
            target_cell(&s.target, &s.protocol),
            s.workload.as_str(),
            s.connections,
            s.fractions.len(),
            s.reference_client_bound,
            s.fractions.len(),
        );
    }
    if repeats < 2 {
        out.push_str(
            "\nOne run: each fraction above is a single measurement, which on a shared machine \
             moves by ±10–15 % with its load; claim none from it (--repeat 3 or more gives \
             the median and the spread).\n",
        );
    } else {
        let _ = writeln!(
            out,
            "\nFractions over {repeats} runs: the median, and the lowest and highest run. A \
             reference the client held back makes every fraction of that run lean towards 1."
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::raw::cpu::RowCpu;
    use crate::bench::raw::report::tests::row;
    use crate::bench::raw::{REFERENCE, apply_ceilings};

    fn repeat(n: u32, reference: f64, send: f64, bound: bool) -> Vec<RawRow> {
        let mut rows = vec![
            row(REFERENCE, RawWorkload::Noop, 4, reference),
            row("embedded", RawWorkload::Send, 4, send),
        ];
        rows[0].cpu = Some(RowCpu {
            wall_s: 1.0,
            client_cpu_s: 1.0,
            server_cpu_s: Some(0.9),
            machine_busy_s: Some(2.0),
            client_cores_busy_s: None,
            cpus: 2,
            client_cores: 2,
            pinned: false,
            client_bound: Some(bound),
        });
        apply_ceilings(&mut rows);
        for r in &mut rows {
            r.repeat = n;
        }
        rows
    }

    #[test]
    fn three_runs_give_the_median_and_the_range() {
        let mut rows = repeat(0, 100.0, 80.0, true);
        rows.extend(repeat(1, 100.0, 90.0, false));
        rows.extend(repeat(2, 100.0, 70.0, true));
        let s = spreads(&rows);
        assert_eq!(s.len(), 1);
        assert_eq!(s[0].fractions, [0.8, 0.9, 0.7]);
        assert_eq!(s[0].median(), Some(0.8));
        assert_eq!(s[0].range(), Some((0.7, 0.9)));
        assert_eq!(s[0].reference_client_bound, 2);
        let text = spread_markdown(&s, 3);
        assert!(
            text.contains("| embedded | send | 4 | 3 | 0.80 | 0.70–0.90 | 2 of 3 |"),
            "{text}"
        );
        assert!(text.contains("over 3 runs"), "{text}");
        assert!(!text.contains("One run"), "{text}");
    }

    #[test]
    fn one_run_is_printed_with_no_claim() {
        let s = spreads(&repeat(0, 100.0, 80.0, false));
        let text = spread_markdown(&s, 1);
        assert!(text.contains("| embedded | send | 4 | 1 | 0.80 | 0.80–0.80 | 0 of 1 |"));
        assert!(
            text.contains("One run") && text.contains("claim none"),
            "{text}"
        );
    }

    #[test]
    fn an_even_count_takes_the_middle_two_and_no_reference_prints_nothing() {
        let mut rows = repeat(0, 100.0, 80.0, false);
        rows.extend(repeat(1, 100.0, 90.0, false));
        let s = spreads(&rows);
        assert!((s[0].median().unwrap() - 0.85).abs() < 1e-9);
        let alone = vec![row("embedded", RawWorkload::Send, 4, 5.0)];
        assert!(spreads(&alone).is_empty());
        assert_eq!(spread_markdown(&[], 3), "");
    }
}
