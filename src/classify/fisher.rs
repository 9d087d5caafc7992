//! Fisher's exact test on a 2×2 table: is one sample's rate consistent with another's?
//!
//! `sqsprobe history` asks whether the newest run's rate of a class (k₁ of n₁ trials)
//! is consistent with the pooled rate of the runs before it (k₀ of n₀). With the margins fixed,
//! the number of events in the newest run follows the hypergeometric distribution; the
//! two-sided p-value is the probability, under "both samples share one rate", of every table
//! at most as likely as the one observed (the rule R's `fisher.test` uses, with the same
//! relative tolerance of 10⁻⁷ for ties). Exact, so it holds for the small counts trials give,
//! where a χ² approximation does not.

use super::rate::ln_gamma;

/// The significance below which `history` flags a difference: p < 0.01.
pub const ALPHA: f64 = 0.01;

/// ln(n!).
fn ln_factorial(n: u32) -> f64 {
    ln_gamma(f64::from(n) + 1.0)
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
    let row1 = a + b;
    let row2 = c + d;
    let col1 = a + c;
    let n = row1 + row2;
    if row1 == 0 || row2 == 0 || col1 == 0 || col1 == n {
        return 1.0;
    }
    // ln P(X = x), X the events in row 1, hypergeometric with these margins.
    let fixed =
        ln_factorial(row1) + ln_factorial(row2) + ln_factorial(col1) + ln_factorial(n - col1)
            - ln_factorial(n);
    let ln_p = |x: u32| {
        fixed
            - ln_factorial(x)
            - ln_factorial(row1 - x)
            - ln_factorial(col1 - x)
            - ln_factorial(row2 + x - col1)
    };
    let low = col1.saturating_sub(row2);
    let high = row1.min(col1);
    let observed = ln_p(a);
    let tolerance = 1e-7_f64.ln_1p();
    let p: f64 = (low..=high)
        .map(ln_p)
        .filter(|lp| *lp <= observed + tolerance)
        .map(f64::exp)
        .sum();
    p.min(1.0)
}

/// Whether k₁ of n₁ is inconsistent with k₀ of n₀ at [`ALPHA`], and the p-value.
pub fn differs(k1: u32, n1: u32, k0: u32, n0: u32) -> (bool, f64) {
    let p = two_sided(k1, n1.saturating_sub(k1), k0, n0.saturating_sub(k0));
    (p < ALPHA, p)
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
        let (flag, p) = differs(9, 15, 0, 45);
        assert!(flag && close(p, 3.385_613e-7, 1e-5), "{p}");
        // 1 of 15 after 0 of 45: could happen by chance.
        let (flag, p) = differs(1, 15, 0, 45);
        assert!(!flag, "{p}");
        assert!(close(p, 0.25, 1e-9), "{p}");
    }
}
