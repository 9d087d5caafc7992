//! Fisher's exact test on a 2×2 table: is one sample's rate consistent with another's?
//!
//! `sqsprobe history` asks whether the newest run's rate of a class (k₁ of n₁ trials)
//! is consistent with the pooled rate of the runs before it (k₀ of n₀). With the margins fixed,
//! the number of events in the newest run follows the hypergeometric distribution; the
//! two-sided p-value is the probability, under "both samples share one rate", of every table
//! at most as likely as the one observed (the rule R's `fisher.test` uses, with the same
//! relative tolerance of 10⁻⁷ for ties). Exact, so it holds for the small counts trials give,
//! where a χ² approximation does not.

use super::rate::{Sample, ln_gamma};

/// The significance below which `history` flags a difference: p < 0.01, for the whole set of
/// comparisons one history makes (see [`holm`]).
pub const ALPHA: f64 = 0.01;

/// ln(n!).
fn ln_factorial(n: u64) -> f64 {
    // Exact for any count a file can hold: u64 → f64 rounds only above 2⁵³.
    ln_gamma(n as f64 + 1.0)
}

/// R's relative tolerance for "at most as likely": ties within it count as ties.
fn tie_tolerance() -> f64 {
    1e-7_f64.ln_1p()
}

/// Every 2×2 table with the same margins: `row1` and `row2` trials, `events` of them in the
/// class. The events in row 1 follow the hypergeometric distribution over `low..=high`.
///
/// ln P(X = x) is computed at `low` from factorials and walked up by the ratio of successive
/// terms, so a whole support costs one pass, and nothing proportional to the counts is
/// allocated (a damaged file's counts cannot exhaust memory).
struct Margins {
    row1: u64,
    row2: u64,
    events: u64,
    low: u64,
    high: u64,
    ln_p_low: f64,
}

impl Margins {
    /// `None` when a margin is empty or every trial is on one side of the class: every table
    /// is then the observed one, nothing to compare (p = 1).
    fn new(row1: u64, row2: u64, events: u64) -> Option<Margins> {
        let n = row1 + row2;
        if row1 == 0 || row2 == 0 || events == 0 || events >= n {
            return None;
        }
        let low = events.saturating_sub(row2);
        let high = row1.min(events);
        let ln_p_low = ln_factorial(row1)
            + ln_factorial(row2)
            + ln_factorial(events)
            + ln_factorial(n - events)
            - ln_factorial(n)
            - ln_factorial(low)
            - ln_factorial(row1 - low)
            - ln_factorial(events - low)
            - ln_factorial(row2 + low - events);
        Some(Margins {
            row1,
            row2,
            events,
            low,
            high,
            ln_p_low,
        })
    }

    /// `(x, ln P(X = x))` for every x of the support, in order.
    fn ln_pmf(&self) -> impl Iterator<Item = (u64, f64)> + '_ {
        let mut ln_p = self.ln_p_low;
        (self.low..=self.high).map(move |x| {
            let here = ln_p;
            if x < self.high {
                // P(x + 1) / P(x) = (row1 − x)(events − x) / ((x + 1)(row2 − events + x + 1)).
                let up = ((self.row1 - x) as f64).ln() + ((self.events - x) as f64).ln();
                let down = ((x + 1) as f64).ln() + ((self.row2 + x + 1 - self.events) as f64).ln();
                ln_p += up - down;
            }
            (x, here)
        })
    }

    /// The two-sided p-value of a table whose probability is `exp(ln_p)`: the probability of
    /// every table at most as likely.
    fn p_of(&self, ln_p: f64) -> f64 {
        let level = ln_p + tie_tolerance();
        let p: f64 = self
            .ln_pmf()
            .filter(|(_, l)| *l <= level)
            .map(|(_, l)| l.exp())
            .sum();
        p.min(1.0)
    }

    /// The smallest and largest ln P(X = x) for x in `from..=to` (inside the support).
    fn ln_p_extremes(&self, from: u64, to: u64) -> (f64, f64) {
        self.ln_pmf()
            .skip_while(|(x, _)| *x < from)
            .take_while(|(x, _)| *x <= to)
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), (_, l)| {
                (lo.min(l), hi.max(l))
            })
    }
}

/// The two-sided p-value of Fisher's exact test for the table
///
/// ```text
///             events   others
///   sample 1     a        b
///   sample 2     c        d
/// ```
///
/// 1 for an empty table, or when a margin is zero (nothing to compare).
pub fn two_sided(a: u32, b: u32, c: u32, d: u32) -> f64 {
    let (a, b, c, d) = (u64::from(a), u64::from(b), u64::from(c), u64::from(d));
    let Some(m) = Margins::new(a + b, c + d, a + c) else {
        return 1.0;
    };
    let observed = m
        .ln_pmf()
        .find(|(x, _)| *x == a)
        .map_or(f64::NEG_INFINITY, |(_, l)| l);
    m.p_of(observed)
}

/// The smallest and largest two-sided p-value of Fisher's exact test over **every** way the
/// unknown trials of both samples could have fallen: sample 1 had between `k` and `k + unknown`
/// of its `n` trials in the class, sample 2 likewise, each count independently.
///
/// The true table is one of those tables, so under "both samples share one rate" the chance
/// that even the largest p is below α is at most α, however the unknown trials came to be
/// unknown (a timeout that stops exactly the trials that would have shown the class included).
/// The two extremes alone are not enough: when both extremes of one sample lie on either side
/// of the other's rate, a middle count matches it (p near 1) while each extreme is far off.
///
/// The tables are walked by their total number of events: for a fixed total the margins are
/// fixed, and p is a nondecreasing function of the table's own probability (a likelier table
/// has more tables at most as likely as it). So along each total the largest p is at the
/// likeliest table the unknown trials allow and the smallest at the least likely one, one pass
/// over the support each: exact, and held to the table-by-table search by a seeded property
/// test.
pub fn p_range(first: Sample, second: Sample) -> (f64, f64) {
    let span = |s: Sample| {
        let n = u64::from(s.n);
        let k = u64::from(s.k).min(n);
        (k, (k + u64::from(s.unknown)).min(n), n)
    };
    let (a_lo, a_hi, row1) = span(first);
    let (b_lo, b_hi, row2) = span(second);
    let (mut low, mut high) = (1.0_f64, 0.0_f64);
    for events in (a_lo + b_lo)..=(a_hi + b_hi) {
        let Some(m) = Margins::new(row1, row2, events) else {
            high = 1.0;
            continue;
        };
        // Sample 1's count on this total: within its own span and leaving sample 2's in its.
        let from = a_lo.max(events.saturating_sub(b_hi));
        let to = a_hi.min(events - b_lo);
        let (least, likeliest) = m.ln_p_extremes(from, to);
        low = low.min(m.p_of(least));
        high = high.max(m.p_of(likeliest));
    }
    (low, high)
}

/// Holm's step-down adjustment of `p` (one p-value per comparison): the adjusted values, in
/// the same order. A comparison is significant at α for the whole family when its adjusted
/// value is below α; the chance that any comparison is, when none of them differs, is then at
/// most α whatever the dependence between them (Holm 1979). Uniformly more powerful than
/// Bonferroni's α / m, and the same as it for a single comparison.
pub fn holm(p: &[f64]) -> Vec<f64> {
    let m = p.len();
    let mut order: Vec<usize> = (0..m).collect();
    order.sort_by(|&i, &j| p[i].total_cmp(&p[j]).then(i.cmp(&j)));
    let mut adjusted = vec![1.0; m];
    let mut running: f64 = 0.0;
    for (rank, &i) in order.iter().enumerate() {
        running = running.max(((m - rank) as f64 * p[i]).min(1.0));
        adjusted[i] = running;
    }
    adjusted
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, rel: f64) -> bool {
        (a - b).abs() <= rel * b.abs().max(1e-300)
    }

    #[test]
    fn p_values_match_published_ones() {
        // Values from R 4.x `fisher.test(matrix(c(a, c, b, d), 2))$p.value`.
        // Fisher's tea tasting: 3 of 4 cups right each way.
        assert!(close(two_sided(3, 1, 1, 3), 0.485_714_3, 1e-6));
        // The textbook 2×2 (studying: 1 of 10 men, 11 of 14 women).
        let p = two_sided(1, 9, 11, 3);
        assert!(close(p, 0.002_759_456, 1e-5), "{p}");
        // All events in one sample: 2 / C(20, 10).
        let p = two_sided(10, 0, 0, 10);
        assert!(close(p, 2.0 / 184_756.0, 1e-6), "{p}");
        // 0 of 20 against 5 of 20.
        let p = two_sided(0, 20, 5, 15);
        assert!(close(p, 0.047_124_047, 1e-6), "{p}");
    }

    #[test]
    fn equal_rates_are_consistent_and_the_test_is_symmetric() {
        assert!(close(two_sided(5, 5, 5, 5), 1.0, 1e-9));
        let p = two_sided(2, 8, 7, 3);
        assert!(close(p, 0.069_778_52, 1e-6), "{p}");
        assert!(close(two_sided(7, 3, 2, 8), p, 1e-12));
        assert!(close(two_sided(8, 2, 3, 7), p, 1e-12));
        assert_eq!(two_sided(0, 0, 3, 4), 1.0);
        assert_eq!(two_sided(0, 5, 0, 9), 1.0, "no event anywhere");
    }

    #[test]
    fn a_newest_run_far_from_the_pool_is_flagged() {
        // 9 of 15 tonight after 0 of 45 before: p = 3.39e-7.
        let p = two_sided(9, 6, 0, 45);
        assert!(p < ALPHA && close(p, 3.385_613e-7, 1e-5), "{p}");
        // 1 of 15 after 0 of 45: could happen by chance.
        let p = two_sided(1, 14, 0, 45);
        assert!(close(p, 0.25, 1e-9), "{p}");
    }

    fn sample(k: u32, unknown: u32, n: u32) -> Sample {
        Sample { k, unknown, n }
    }

    /// The largest and smallest p, table by table: every count each sample's unknown trials
    /// allow, against every count the other's allow.
    fn by_every_table(first: Sample, second: Sample) -> (f64, f64) {
        let (mut low, mut high) = (1.0_f64, 0.0_f64);
        for a in first.k..=(first.k + first.unknown).min(first.n) {
            for b in second.k..=(second.k + second.unknown).min(second.n) {
                let p = two_sided(a, first.n - a, b, second.n - b);
                low = low.min(p);
                high = high.max(p);
            }
        }
        (low, high)
    }

    #[test]
    fn the_range_covers_every_way_the_unknown_trials_could_have_fallen() {
        // 7 of 40 with 31 unknown against 34 of 80: both extremes (7 and 38 of 40) are far from
        // 34 of 80, but 17 of 40 is the same rate.
        let (low, high) = p_range(sample(7, 31, 40), sample(34, 0, 80));
        assert!(two_sided(7, 33, 34, 46) < ALPHA && two_sided(38, 2, 34, 46) < ALPHA);
        assert!(close(high, 1.0, 1e-9), "{high}");
        assert!(close(low, two_sided(38, 2, 34, 46), 1e-12), "{low}");
        assert_eq!(
            (low, high),
            by_every_table(sample(7, 31, 40), sample(34, 0, 80))
        );
        // No unknown trial: one table, one p.
        let p = two_sided(12, 8, 0, 40);
        assert_eq!(p_range(sample(12, 0, 20), sample(0, 0, 40)), (p, p));
        // Far apart whatever the unknown trials were.
        let (low, high) = p_range(sample(12, 2, 20), sample(0, 3, 40));
        assert!(high < ALPHA && low < high, "{low} {high}");
        // Empty samples compare to nothing.
        assert_eq!(p_range(sample(0, 0, 0), sample(3, 1, 9)), (1.0, 1.0));
        assert_eq!(
            p_range(sample(0, 5, 5), sample(0, 9, 9)),
            by_every_table(sample(0, 5, 5), sample(0, 9, 9))
        );
    }

    #[test]
    fn holm_steps_down_and_keeps_the_order() {
        assert_eq!(holm(&[]), Vec::<f64>::new());
        assert_eq!(holm(&[0.004]), [0.004]);
        // Sorted 0.001, 0.004, 0.03: ×3, ×2, ×1, never below the one before.
        let adjusted = holm(&[0.03, 0.001, 0.004]);
        assert!(close(adjusted[1], 0.003, 1e-12));
        assert!(close(adjusted[2], 0.008, 1e-12));
        assert!(close(adjusted[0], 0.03, 1e-12));
        // Monotone in rank, and capped at 1.
        assert_eq!(holm(&[0.6, 0.5]), [1.0, 1.0]);
        let adjusted = holm(&[0.004, 0.0045]);
        assert!(close(adjusted[0], 0.008, 1e-12) && close(adjusted[1], 0.008, 1e-12));
    }

    mod properties {
        use super::*;
        use proptest::prelude::*;

        fn samples() -> impl Strategy<Value = Sample> {
            (0u32..45)
                .prop_flat_map(|n| (0..=n).prop_flat_map(move |k| (Just(k), 0..=n - k, Just(n))))
                .prop_map(|(k, unknown, n)| Sample { k, unknown, n })
        }

        proptest! {
            #![proptest_config(crate::testing::config(400))]

            /// The walk by total events finds the same smallest and largest p as trying every
            /// table.
            #[test]
            fn the_range_is_the_range_over_every_table(first in samples(), second in samples()) {
                let (low, high) = p_range(first, second);
                let (want_low, want_high) = by_every_table(first, second);
                prop_assert!(close(low, want_low, 1e-9), "low {} against {}", low, want_low);
                prop_assert!(close(high, want_high, 1e-9), "high {} against {}", high, want_high);
            }
        }
    }
}
