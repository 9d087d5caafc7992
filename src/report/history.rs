//! `sqsprobe history` as text: each case on each target and region, its runs pooled, and the
//! newest run against the others (pure: a [`History`] in, lines out).

use crate::classify::fisher::ALPHA;
use crate::classify::history::{Comparison, Group, History};
use crate::classify::rate::percent;
use crate::text::escape::terminal;

/// The whole history, one block per group.
pub fn render(history: &History) -> String {
    let mut out = String::new();
    let (first, last) = match (history.runs.first(), history.runs.last()) {
        (Some(f), Some(l)) => (f, l),
        _ => return "no multi-trial case in the runs read\n".to_string(),
    };
    out.push_str(&format!(
        "{} run{} with multi-trial cases, from {} to {}; {} case{} by target and region\n",
        history.runs.len(),
        plural(history.runs.len()),
        terminal(&first.1),
        terminal(&last.1),
        history.groups.len(),
        plural(history.groups.len()),
    ));
    for g in &history.groups {
        out.push('\n');
        out.push_str(&group(g));
    }
    if history.groups.iter().any(Group::flagged) {
        let n = history.groups.iter().filter(|g| g.flagged()).count();
        out.push_str(&format!(
            "\n{n} case{} changed: the newest run's rate is inconsistent with the runs before it\n",
            plural(n)
        ));
    }
    out
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

fn group(g: &Group) -> String {
    let mut out = format!(
        "{}  {}  {}\n",
        terminal(&g.case),
        terminal(&g.target),
        terminal(&g.region)
    );
    if let (Some(first), Some(last)) = (g.runs.first(), g.runs.last()) {
        out.push_str(&format!(
            "  {} run{}, {} trials ({} unknown); first {} ({}), last {} ({})\n",
            g.runs.len(),
            plural(g.runs.len()),
            g.n,
            g.unknown,
            terminal(&first.started_at),
            terminal(&first.run_id),
            terminal(&last.started_at),
            terminal(&last.run_id),
        ));
    }
    let cut: Vec<String> = g
        .runs
        .iter()
        .filter(|r| r.cut)
        .map(|r| terminal(&r.run_id))
        .collect();
    if !cut.is_empty() {
        out.push_str(&format!(
            "  cut: {} (interrupted or stopped before every trial started; the trials they \
             started are pooled, the rest are not in n)\n",
            cut.join(", ")
        ));
    }
    let width = g
        .counts
        .keys()
        .map(|c| c.chars().count())
        .max()
        .unwrap_or(0);
    for (class, k) in &g.counts {
        let share = match g.intervals.get(class) {
            Some([lo, hi]) => format!("{k}/{} [{}, {}]", g.n, percent(*lo), percent(*hi)),
            None => format!("{k}/{} (unknown: counted both ways in each rate)", g.n),
        };
        out.push_str(&format!("  {:<width$}  {share}\n", terminal(class)));
    }
    for c in &g.comparisons {
        out.push_str(&format!("  {}\n", comparison(c)));
    }
    out
}

/// `newest run: observed_redelivery 12/20 against 0/40 before — INCONSISTENT (…p = 3.4e-9 < 0.01)`;
/// with unknown trials, each side says how many and p is the largest over the ways they
/// could have fallen.
pub fn comparison(c: &Comparison) -> String {
    let side = |[k, unknown, n]: [u32; 3]| {
        if unknown > 0 {
            format!("{k}/{n} ({unknown} unknown)")
        } else {
            format!("{k}/{n}")
        }
    };
    let p = if c.newest[1] + c.others[1] > 0 {
        format!(
            "the largest p over the ways the unknown trials could have fallen = {}",
            p_value(c.p)
        )
    } else {
        format!("p = {}", p_value(c.p))
    };
    let verdict = if c.inconsistent {
        format!("INCONSISTENT (Fisher's exact test, two-sided {p} < {ALPHA})")
    } else {
        format!("consistent (Fisher's exact test, two-sided {p} ≥ {ALPHA})")
    };
    format!(
        "newest run: {} {} against {} before — {verdict}",
        terminal(&c.class),
        side(c.newest),
        side(c.others)
    )
}

/// A p-value to three significant digits: `0.0471`, `1`, `3.39e-7`.
fn p_value(p: f64) -> String {
    if p >= 0.9995 {
        return "1".to_string();
    }
    if p < 0.001 {
        return format!("{p:.2e}");
    }
    let decimals = (2 - p.log10().floor() as i32).max(0) as usize;
    let s = format!("{p:.decimals$}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::classify::history::{CaseSample, pool};
    use std::collections::BTreeMap;

    fn sample(run: &str, day: u32, redelivered: u32) -> CaseSample {
        CaseSample {
            run_id: run.to_string(),
            started_at: format!("2026-12-0{day}T03:00:00.000Z"),
            dir: run.to_string(),
            case: "chaos-stale-delete-rate".to_string(),
            target: "aws".to_string(),
            region: "us-east-1".to_string(),
            n: 20,
            conclusive: 20,
            unknown: 0,
            cut: false,
            counts: BTreeMap::from([
                ("observed_redelivery".to_string(), redelivered),
                ("no_redelivery_within_window".to_string(), 20 - redelivered),
            ])
            .into_iter()
            .filter(|(_, k)| *k > 0)
            .collect(),
        }
    }

    #[test]
    fn the_text_names_runs_pooled_counts_intervals_and_the_flag() {
        let text = render(&pool(vec![
            sample("r1", 1, 0),
            sample("r2", 2, 0),
            sample("r3", 3, 12),
        ]));
        assert_eq!(
            text,
            "3 runs with multi-trial cases, from 2026-12-01T03:00:00.000Z to \
             2026-12-03T03:00:00.000Z; 1 case by target and region\n\
             \n\
             chaos-stale-delete-rate  aws  us-east-1\n  \
             3 runs, 60 trials (0 unknown); first 2026-12-01T03:00:00.000Z (r1), last 2026-12-03T03:00:00.000Z (r3)\n  \
             no_redelivery_within_window  48/60 [67.7%, 89.2%]\n  \
             observed_redelivery          12/60 [10.8%, 32.3%]\n  \
             newest run: observed_redelivery 12/20 against 0/40 before — INCONSISTENT (Fisher's exact test, two-sided p = 9.00e-8 < 0.01)\n\
             \n\
             1 case changed: the newest run's rate is inconsistent with the runs before it\n"
        );
        let quiet = render(&pool(vec![sample("r1", 1, 0), sample("r2", 2, 1)]));
        assert!(
            quiet.contains("observed_redelivery 1/20 against 0/20 before — consistent (Fisher's exact test, two-sided p = 1 ≥ 0.01)"),
            "{quiet}"
        );
        assert_eq!(
            render(&pool(Vec::new())),
            "no multi-trial case in the runs read\n"
        );
    }

    #[test]
    fn p_values_read_well() {
        assert_eq!(p_value(1.0), "1");
        assert_eq!(p_value(0.047_124), "0.0471");
        assert_eq!(p_value(0.25), "0.25");
        assert_eq!(p_value(3.385_613e-7), "3.39e-7");
    }
}
