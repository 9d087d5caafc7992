//! Fisher's exact test on a 2×2 table: is one sample's rate consistent with another's?
//!
//! `sqsprobe history` asks whether the newest run's rate of a class (k₁ of n₁ trials)
//! is consistent with the pooled rate of the runs before it (k₀ of n₀). With the margins fixed,
//! the number of events in the newest run follows the hypergeometric distribution; the
//! two-sided p-value is the probability, under "both samples share one rate", of every table
//! at most as likely as the one observed (the rule R's `fisher.test` uses, with the same
//! relative tolerance of 10⁻⁷ for ties). Exact, so it holds for the small counts trials give,
//! where a χ² approximation does not.
//!
//! Trials whose outcome is unknown leave a range of tables, one for each way they could have
//! fallen: [`p_range`] gives the smallest and largest p over all of them, and a change is one
//! only when even the largest is small. A history makes many comparisons at once; [`holm`]
//! holds them to [`ALPHA`] together.

use std::sync::OnceLock;

use super::rate::{Sample, ln_gamma};

/// The significance below which `history` flags a difference: p < 0.01, for the whole set of
/// comparisons one history makes (see [`holm`]).
pub const ALPHA: f64 = 0.01;

/// ln k! for k below 2¹⁶, computed once (512 KiB): a search over many tables reads the same
/// small factorials millions of times. Each entry from ln Γ itself rather than a running sum of
/// logarithms, whose rounding would grow with k up to the size of the tie tolerance. Larger
/// counts are computed when asked.
fn ln_factorial(k: u64) -> f64 {
    static TABLE: OnceLock<Vec<f64>> = OnceLock::new();
    let table = TABLE.get_or_init(|| {
        (0..1u32 << 16)
            .map(|k| ln_gamma(f64::from(k) + 1.0))
            .collect()
    });
    match usize::try_from(k).ok().and_then(|i| table.get(i)) {
        Some(v) => *v,
        // Exact for any count a file can hold: u64 → f64 rounds only above 2⁵³.
        None => ln_gamma(k as f64 + 1.0),
    }
}

/// R's relative tolerance for "at most as likely": ties within it count as ties.
fn tie_tolerance() -> f64 {
    1e-7_f64.ln_1p()
}

/// Every 2×2 table with the same margins: `row1` and `row2` trials, `events` of them in the
/// class. The events in row 1 follow the hypergeometric distribution over `low..=high`, whose
/// probabilities rise to the mode and fall after it (it is log-concave), so the tables at most
/// as likely as a given one are a run at each end of the support.
struct Margins {
    row1: u64,
    row2: u64,
    events: u64,
    low: u64,
    high: u64,
    /// ln of the part of P(X = x) that does not depend on x.
    fixed: f64,
}

impl Margins {
    /// `None` when a margin is empty or every trial is on one side of the class: every table
    /// is then the observed one, nothing to compare (p = 1).
    fn new(row1: u64, row2: u64, events: u64) -> Option<Margins> {
        let n = row1.checked_add(row2)?;
        if row1 == 0 || row2 == 0 || events == 0 || events >= n {
            return None;
        }
        Some(Margins {
            row1,
            row2,
            events,
            low: events.saturating_sub(row2),
            high: row1.min(events),
            fixed: ln_factorial(row1)
                + ln_factorial(row2)
                + ln_factorial(events)
                + ln_factorial(n - events)
                - ln_factorial(n),
        })
    }

    /// ln P(X = x), x in the support.
    fn ln_p(&self, x: u64) -> f64 {
        self.fixed
            - ln_factorial(x)
            - ln_factorial(self.row1 - x)
            - ln_factorial(self.events - x)
            - ln_factorial(self.row2 + x - self.events)
    }

    /// A most likely x: ⌊(row1 + 1)(events + 1) / (n + 2)⌋.
    fn mode(&self) -> u64 {
        let n = u128::from(self.row1 + self.row2);
        let m = (u128::from(self.row1) + 1) * (u128::from(self.events) + 1) / (n + 2);
        u64::try_from(m)
            .unwrap_or(u64::MAX)
            .clamp(self.low, self.high)
    }

    /// The two-sided p-value of a table whose probability is `exp(ln_p)`: the probability of
    /// every table at most as likely, summed from each end of the support inwards until a
    /// likelier table is met.
    fn p_of(&self, ln_p: f64) -> f64 {
        let level = ln_p + tie_tolerance();
        if level >= self.ln_p(self.mode()) {
            // As likely as the likeliest table: every table counts, p = 1 exactly.
            return 1.0;
        }
        let mut sum = 0.0;
        let mut x = self.low;
        while x <= self.high {
            let l = self.ln_p(x);
            if l > level {
                break;
            }
            sum += l.exp();
            x += 1;
        }
        let mut y = self.high;
        while y >= x {
            let l = self.ln_p(y);
            if l > level {
                break;
            }
            sum += l.exp();
            match y.checked_sub(1) {
                Some(below) => y = below,
                None => break,
            }
        }
        sum.min(1.0)
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
    match Margins::new(a + b, c + d, a + c) {
        Some(m) => m.p_of(m.ln_p(a)),
        None => 1.0,
    }
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
/// The tables are walked by their total number of events. For a fixed total the margins are
/// fixed, and p is a nondecreasing function of the table's own probability (a likelier table
/// has more tables at most as likely as it), which rises to the mode and falls after it. So
/// along each total the largest p is at the allowed count nearest the mode (1 when the mode is
/// allowed) and the smallest at one end of the allowed counts: two tables per total, not every
/// table. A total is skipped when it cannot move either end: a table's p is at least its own
/// probability, and at most its probability times the number of tables. Exact, and held to the
/// table-by-table search of the definition by a seeded property test.
pub fn p_range(first: Sample, second: Sample) -> (f64, f64) {
    let span = |s: Sample| {
        let n = u64::from(s.n);
        let k = u64::from(s.k).min(n);
        (k, (k + u64::from(s.unknown)).min(n), n)
    };
    let (a_lo, a_hi, row1) = span(first);
    let (b_lo, b_hi, row2) = span(second);
    let (mut low, mut high) = (1.0_f64, 0.0_f64);
    // The corners first, where the ends usually are, so that most totals are skipped.
    let corners = [a_lo + b_hi, a_hi + b_lo, a_lo + b_lo, a_hi + b_hi];
    for events in corners.into_iter().chain((a_lo + b_lo)..=(a_hi + b_hi)) {
        let Some(m) = Margins::new(row1, row2, events) else {
            high = 1.0;
            continue;
        };
        // Sample 1's count on this total: within its own span and leaving sample 2's in its.
        let from = a_lo.max(events.saturating_sub(b_hi));
        let to = a_hi.min(events - b_lo);
        let (at_from, at_to) = (m.ln_p(from), m.ln_p(to));
        let least = at_from.min(at_to);
        if least.exp() < low {
            low = low.min(m.p_of(least));
        }
        if high < 1.0 {
            let mode = m.mode();
            if (from..=to).contains(&mode) {
                high = 1.0;
            } else {
                let likeliest = if mode < from { at_from } else { at_to };
                let tables = (m.high - m.low + 1) as f64;
                if tables * (likeliest + tie_tolerance()).exp() > high {
                    high = high.max(m.p_of(likeliest));
                }
            }
        }
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

    /// Fisher's p by its definition: every table of the support from the factorials, summed
    /// where it is at most as likely as the observed one (the test's oracle).
    fn by_definition(a: u32, b: u32, c: u32, d: u32) -> f64 {
        let ln_fact = |k: u32| ln_gamma(f64::from(k) + 1.0);
        let (row1, row2, col1) = (a + b, c + d, a + c);
        let n = row1 + row2;
        if row1 == 0 || row2 == 0 || col1 == 0 || col1 == n {
            return 1.0;
        }
        let ln_p = |x: u32| {
            ln_fact(row1) + ln_fact(row2) + ln_fact(col1) + ln_fact(n - col1)
                - ln_fact(n)
                - ln_fact(x)
                - ln_fact(row1 - x)
                - ln_fact(col1 - x)
                - ln_fact(row2 + x - col1)
        };
        let observed = ln_p(a) + 1e-7_f64.ln_1p();
        let p: f64 = (col1.saturating_sub(row2)..=row1.min(col1))
            .map(ln_p)
            .filter(|l| *l <= observed)
            .map(f64::exp)
            .sum();
        p.min(1.0)
    }

    /// The largest and smallest p, table by table: every count each sample's unknown trials
    /// allow, against every count the other's allow.
    fn by_every_table(first: Sample, second: Sample) -> (f64, f64) {
        let (mut low, mut high) = (1.0_f64, 0.0_f64);
        for a in first.k..=(first.k + first.unknown).min(first.n) {
            for b in second.k..=(second.k + second.unknown).min(second.n) {
                let p = by_definition(a, first.n - a, b, second.n - b);
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
        let (want_low, want_high) = by_every_table(sample(7, 31, 40), sample(34, 0, 80));
        assert!(close(low, want_low, 1e-9) && close(high, want_high, 1e-9));
        // No unknown trial: one table, one p.
        let p = two_sided(12, 8, 0, 40);
        assert_eq!(p_range(sample(12, 0, 20), sample(0, 0, 40)), (p, p));
        // Far apart whatever the unknown trials were.
        let (low, high) = p_range(sample(12, 2, 20), sample(0, 3, 40));
        assert!(high < ALPHA && low < high, "{low} {high}");
        // Empty samples compare to nothing.
        assert_eq!(p_range(sample(0, 0, 0), sample(3, 1, 9)), (1.0, 1.0));
        let (low, high) = p_range(sample(0, 5, 5), sample(0, 9, 9));
        let (want_low, want_high) = by_every_table(sample(0, 5, 5), sample(0, 9, 9));
        assert!(close(low, want_low, 1e-9) && close(high, want_high, 1e-9));
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

        fn samples(most: u32) -> impl Strategy<Value = Sample> {
            (0..=most)
                .prop_flat_map(|n| (0..=n).prop_flat_map(move |k| (Just(k), 0..=n - k, Just(n))))
                .prop_map(|(k, unknown, n)| Sample { k, unknown, n })
        }

        /// p at most as far from the oracle's as rounding allows: relatively, or absolutely
        /// for the tiny ones.
        fn near(p: f64, want: f64) -> bool {
            (p - want).abs() <= 1e-9 * want + 1e-15
        }

        proptest! {
            #![proptest_config(sqsprobe_testing::config(400))]

            /// The walk by total events finds the same smallest and largest p as trying every
            /// table by the definition.
            #[test]
            fn the_range_is_the_range_over_every_table(
                first in samples(30),
                second in samples(60),
            ) {
                let (low, high) = p_range(first, second);
                let (want_low, want_high) = by_every_table(first, second);
                prop_assert!(near(low, want_low), "low {} against {}", low, want_low);
                prop_assert!(near(high, want_high), "high {} against {}", high, want_high);
            }

            /// One table: the sums from each end agree with the definition's sum over all.
            #[test]
            fn one_table_agrees_with_the_definition(a in 0u32..300, b in 0u32..300, c in 0u32..300, d in 0u32..300) {
                let p = two_sided(a, b, c, d);
                let want = by_definition(a, b, c, d);
                prop_assert!(near(p, want), "{} against {}", p, want);
            }
        }
    }
}
