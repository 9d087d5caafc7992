//! `sqsprobe history` as text: each case on each target and region, its runs pooled (and the
//! runs set aside as the same draw as another), and the newest run against the others, with
//! the reading of each comparison (pure: a [`History`] in, lines out).

use sqsprobe_core::classify::history::{Comparison, Group, History, Reading};
use sqsprobe_core::classify::rate::percent;
use sqsprobe_facts::text::escape::terminal;

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
        out.push_str(&group(g, history));
    }
    if history.groups.iter().any(Group::flagged) {
        let n = history.groups.iter().filter(|g| g.flagged()).count();
        out.push_str(&format!(
            "\n{n} case{} changed: the newest run's rate differs from the runs before it whatever \
             its unknown trials were (α = {} over {} comparison{}, Holm)\n",
            plural(n),
            history.alpha,
            history.family,
            plural(history.family),
        ));
    }
    out
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

fn group(g: &Group, history: &History) -> String {
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
    for s in &g.set_aside {
        out.push_str(&format!(
            "  set aside: {} (seed {} again in {}: the same dice, one draw, pooled once as {})\n",
            terminal(&s.run_id),
            s.seed,
            terminal(&s.pooled_as),
            terminal(&s.pooled_as),
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
        out.push_str(&format!(
            "  {}\n",
            comparison(c, history.family, history.alpha)
        ));
    }
    out
}

/// `newest run: observed_redelivery 12/20 against 0/40 before — CHANGED (Fisher's exact test,
/// two-sided p = 9.00e-8 < 0.01)`: the counts, the reading, and what it rests on. With unknown
/// trials each side says how many and p is the range over the ways they could have fallen;
/// with more than one comparison in the history, the largest p after Holm's adjustment.
pub fn comparison(c: &Comparison, family: usize, alpha: f64) -> String {
    let side = |[k, unknown, n]: [u32; 3]| {
        if unknown > 0 {
            format!("{k}/{n} ({unknown} unknown)")
        } else {
            format!("{k}/{n}")
        }
    };
    let unknown = c.newest[1] + c.others[1] > 0;
    let reading = match (c.reading, unknown) {
        (Reading::Changed, true) => "CHANGED whatever the unknown trials were".to_string(),
        (Reading::Changed, false) => "CHANGED".to_string(),
        (Reading::CouldBeChance, _) => {
            format!("could be chance: this far off is expected among {family} comparisons")
        }
        (Reading::UnknownTrialsCanExplainIt, _) => {
            "could be noise: the unknown trials can explain it".to_string()
        }
        (Reading::NoChange, true) => "no change whatever the unknown trials were".to_string(),
        (Reading::NoChange, false) => "no change".to_string(),
    };
    let [low, high] = c.p_range;
    let p = if !unknown {
        format!("p = {}", p_value(high))
    } else {
        format!(
            "p from {} to {} over every way the unknown trials could have fallen",
            p_value(low),
            p_value(high)
        )
    };
    let below = if c.changed { "<" } else { "≥" };
    let held = match (family > 1, !unknown) {
        (true, true) => format!(
            "; after Holm over {family} comparisons {} {below} {alpha}",
            p_value(c.p_adjusted)
        ),
        (true, false) => format!(
            "; the largest after Holm over {family} comparisons {} {below} {alpha}",
            p_value(c.p_adjusted)
        ),
        (false, true) => format!(" {below} {alpha}"),
        (false, false) => format!("; the largest {below} {alpha}"),
    };
    format!(
        "newest run: {} {} against {} before — {reading} (Fisher's exact test, two-sided {p}{held})",
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
    use sqsprobe_core::classify::history::{CaseSample, pool};
    use std::collections::BTreeMap;

    fn sample(run: &str, day: u32, redelivered: u32) -> CaseSample {
        CaseSample {
            run_id: run.to_string(),
            started_at: format!("2026-12-0{day}T03:00:00.000Z"),
            dir: run.to_string(),
            case: "chaos-stale-delete-rate".to_string(),
            target: "aws".to_string(),
            region: "us-east-1".to_string(),
            seed: None,
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
             newest run: observed_redelivery 12/20 against 0/40 before — CHANGED (Fisher's exact test, two-sided p = 9.00e-8 < 0.01)\n\
             \n\
             1 case changed: the newest run's rate differs from the runs before it whatever its \
             unknown trials were (α = 0.01 over 1 comparison, Holm)\n"
        );
        let quiet = render(&pool(vec![sample("r1", 1, 0), sample("r2", 2, 1)]));
        assert!(
            quiet.contains("observed_redelivery 1/20 against 0/20 before — no change (Fisher's exact test, two-sided p = 1 ≥ 0.01)"),
            "{quiet}"
        );
        assert_eq!(
            render(&pool(Vec::new())),
            "no multi-trial case in the runs read\n"
        );
    }

    fn with(mut s: CaseSample, redelivered: u32, unknown: u32, seed: Option<u64>) -> CaseSample {
        s.counts = BTreeMap::from([
            ("observed_redelivery".to_string(), redelivered),
            (
                "no_redelivery_within_window".to_string(),
                s.n - redelivered - unknown,
            ),
            ("inconclusive".to_string(), unknown),
        ]);
        s.conclusive = s.n - unknown;
        s.unknown = unknown;
        s.seed = seed;
        s
    }

    /// Each reading says why, and a run set aside for its seed is named with the run pooled
    /// in its place.
    #[test]
    fn each_comparison_says_why_it_reads_as_it_does() {
        let text = render(&pool(vec![
            with(sample("r1", 1, 0), 8, 0, Some(7)),
            with(sample("r2", 2, 0), 8, 0, None),
            with(sample("r3", 3, 0), 2, 17, Some(7)),
        ]));
        assert!(
            text.contains(
                "  set aside: r1 (seed 7 again in r3: the same dice, one draw, pooled once as r3)\n"
            ),
            "{text}"
        );
        assert!(
            text.contains(
                "newest run: observed_redelivery 2/20 (17 unknown) against 8/20 before — could \
                 be noise: the unknown trials can explain it (Fisher's exact test, two-sided p \
                 from 4.32e-4 to 1 over every way the unknown trials could have fallen; the \
                 largest ≥ 0.01)"
            ),
            "{text}"
        );
        let changed = render(&pool(vec![
            with(sample("r1", 1, 0), 0, 1, None),
            with(sample("r2", 2, 0), 0, 2, None),
            with(sample("r3", 3, 0), 15, 2, None),
        ]));
        assert!(
            changed.contains("0/40 (3 unknown) before — CHANGED whatever the unknown trials were"),
            "{changed}"
        );
        let mut samples = vec![
            with(sample("r1", 1, 0), 1, 0, None),
            with(sample("r2", 2, 0), 1, 0, None),
            with(sample("r3", 3, 0), 7, 0, None),
        ];
        for case in ["another", "a third"] {
            for day in [1, 2] {
                let mut calm = sample(&format!("r{day}"), day, 1);
                calm.case = case.into();
                samples.push(calm);
            }
        }
        let text = render(&pool(samples));
        assert!(
            text.contains(
                "observed_redelivery 7/20 against 2/40 before — could be chance: this far off is \
                 expected among 3 comparisons (Fisher's exact test, two-sided p = 0.00444; \
                 after Holm over 3 comparisons 0.0133 ≥ 0.01)"
            ),
            "{text}"
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
