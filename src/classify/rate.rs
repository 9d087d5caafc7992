//! Rates with honest intervals: what `k` of `n` trials say about how often something happens.
//!
//! AWS says a stale-handle delete "might not" delete and that a message "might" come back after
//! a correct delete: those are rates, and one run cannot measure a rate. A bound on a rate is
//! judged on the two-sided 95% **Clopper–Pearson** interval of `k/n` (exact: built from the
//! binomial distribution itself, never narrower than the truth warrants, so it errs towards
//! "inconclusive", never towards a pass). The bound holds when the whole interval is inside it,
//! fails when the whole interval is outside, and is inconclusive when the interval straddles it
//! — too few trials, said as such, with how many clean trials would settle it.

/// The confidence level of every interval: two-sided 95%.
pub const CONFIDENCE: f64 = 0.95;

/// The two-sided 95% Clopper–Pearson interval of `k` successes in `n` trials, `[low, high]`.
/// `n == 0` says nothing: `[0, 1]`.
pub fn clopper_pearson(k: u32, n: u32) -> (f64, f64) {
    if n == 0 {
        return (0.0, 1.0);
    }
    let alpha = 1.0 - CONFIDENCE;
    let (k, n) = (f64::from(k.min(n)), f64::from(n));
    let low = if k == 0.0 {
        0.0
    } else {
        inverse_beta(alpha / 2.0, k, n - k + 1.0)
    };
    let high = if k == n {
        1.0
    } else {
        inverse_beta(1.0 - alpha / 2.0, k + 1.0, n - k)
    };
    (low, high)
}

/// The `p` quantile of the Beta(a, b) distribution, by bisection on the regularized
/// incomplete beta function (monotone in x, so bisection cannot fail to converge).
fn inverse_beta(p: f64, a: f64, b: f64) -> f64 {
    let (mut lo, mut hi) = (0.0_f64, 1.0_f64);
    for _ in 0..200 {
        let mid = (lo + hi) / 2.0;
        if regularized_beta(mid, a, b) < p {
            lo = mid;
        } else {
            hi = mid;
        }
        if hi - lo < 1e-12 {
            break;
        }
    }
    (lo + hi) / 2.0
}

/// The regularized incomplete beta function I_x(a, b), by its continued fraction (Lentz's
/// method), using the symmetry I_x(a, b) = 1 − I_{1−x}(b, a) where that converges faster.
fn regularized_beta(x: f64, a: f64, b: f64) -> f64 {
    if x <= 0.0 {
        return 0.0;
    }
    if x >= 1.0 {
        return 1.0;
    }
    let front =
        (ln_gamma(a + b) - ln_gamma(a) - ln_gamma(b) + a * x.ln() + b * (1.0 - x).ln()).exp();
    if x < (a + 1.0) / (a + b + 2.0) {
        front * beta_fraction(x, a, b) / a
    } else {
        1.0 - front * beta_fraction(1.0 - x, b, a) / b
    }
}

/// The continued fraction of the incomplete beta function, by the modified Lentz method: each
/// term `aa` updates the pair (c, d), kept away from zero, and multiplies `h` by their product.
fn beta_fraction(x: f64, a: f64, b: f64) -> f64 {
    const TINY: f64 = 1e-300;
    let away_from_zero = |v: f64| if v.abs() < TINY { TINY } else { v };
    let (qab, qap, qam) = (a + b, a + 1.0, a - 1.0);
    let mut c = 1.0;
    let mut d = 1.0 / away_from_zero(1.0 - qab * x / qap);
    let mut h = d;
    // One Lentz step: the factor that term `aa` contributes to `h`.
    let mut step = |aa: f64| {
        d = 1.0 / away_from_zero(1.0 + aa * d);
        c = away_from_zero(1.0 + aa / c);
        d * c
    };
    for m in 1..=300 {
        let m = f64::from(m);
        let m2 = 2.0 * m;
        h *= step(m * (b - m) * x / ((qam + m2) * (a + m2)));
        let delta = step(-(a + m) * (qab + m) * x / ((a + m2) * (qap + m2)));
        h *= delta;
        if (delta - 1.0).abs() < 1e-15 {
            break;
        }
    }
    h
}

/// ln Γ(x) for x > 0 (Lanczos, g = 7, nine coefficients: about 15 significant digits).
pub(crate) fn ln_gamma(x: f64) -> f64 {
    const G: f64 = 7.0;
    const C: [f64; 9] = [
        0.999_999_999_999_809_9,
        676.520_368_121_885_1,
        -1_259.139_216_722_402_8,
        771.323_428_777_653_1,
        -176.615_029_162_140_6,
        12.507_343_278_686_905,
        -0.138_571_095_265_720_12,
        9.984_369_578_019_572e-6,
        1.505_632_735_149_311_6e-7,
    ];
    if x < 0.5 {
        // Reflection: Γ(x) Γ(1 − x) = π / sin(πx).
        return (std::f64::consts::PI / (std::f64::consts::PI * x).sin()).ln() - ln_gamma(1.0 - x);
    }
    let x = x - 1.0;
    let mut sum = C[0];
    for (i, c) in C.iter().enumerate().skip(1) {
        sum += c / (x + i as f64);
    }
    let t = x + G + 0.5;
    0.5 * (2.0 * std::f64::consts::PI).ln() + (x + 0.5) * t.ln() - t + sum.ln()
}

/// How a bound on a rate came out.
#[derive(Debug, Clone, PartialEq)]
pub enum RateCheck {
    /// The whole interval is inside the bound.
    Holds,
    /// The whole interval is outside the bound.
    Violated,
    /// The interval straddles the bound; `settle` is about how many clean trials in all would
    /// decide it if the rate stays as observed (`None` when no number of trials would: the
    /// observed rate sits on the bound).
    TooFewTrials { settle: Option<u32> },
}

/// Judges `k` of `n` against `at_least` / `at_most` (fractions).
pub fn check(k: u32, n: u32, at_least: Option<f64>, at_most: Option<f64>) -> RateCheck {
    let (low, high) = clopper_pearson(k, n);
    let inside = at_least.is_none_or(|min| low >= min) && at_most.is_none_or(|max| high <= max);
    let outside = at_least.is_some_and(|min| high < min) || at_most.is_some_and(|max| low > max);
    if inside {
        RateCheck::Holds
    } else if outside {
        RateCheck::Violated
    } else {
        RateCheck::TooFewTrials {
            settle: trials_to_settle(k, n, at_least, at_most),
        }
    }
}

/// How many clean trials in all would settle the bound if the observed rate held: for zero
/// events against `at_most: p`, the rule of three (3/p: with no event in 3/p trials the rate
/// is below p with about 95% confidence); otherwise the smallest n' (up to 100,000) whose
/// interval at the observed rate lies wholly on one side.
pub fn trials_to_settle(
    k: u32,
    n: u32,
    at_least: Option<f64>,
    at_most: Option<f64>,
) -> Option<u32> {
    if k == 0
        && let Some(max) = at_most.filter(|m| *m > 0.0)
    {
        return Some((3.0 / max).ceil() as u32);
    }
    if n == 0 {
        return None;
    }
    let p = f64::from(k) / f64::from(n);
    let mut m = n;
    while m <= 100_000 {
        m = (m + 1).max(m + m / 8);
        let km = (p * f64::from(m)).round() as u32;
        if !matches!(
            check_plain(km, m, at_least, at_most),
            RateCheck::TooFewTrials { .. }
        ) {
            return Some(m);
        }
    }
    None
}

/// [`check`] without the settle search (no recursion).
fn check_plain(k: u32, n: u32, at_least: Option<f64>, at_most: Option<f64>) -> RateCheck {
    let (low, high) = clopper_pearson(k, n);
    if at_least.is_none_or(|min| low >= min) && at_most.is_none_or(|max| high <= max) {
        RateCheck::Holds
    } else if at_least.is_some_and(|min| high < min) || at_most.is_some_and(|max| low > max) {
        RateCheck::Violated
    } else {
        RateCheck::TooFewTrials { settle: None }
    }
}

/// A percentage for findings: `16.8%`, `0.52%`.
pub fn percent(x: f64) -> String {
    let p = x * 100.0;
    if p == 0.0 || p == 100.0 {
        format!("{p:.0}%")
    } else if p < 1.0 {
        format!("{p:.2}%")
    } else {
        format!("{p:.1}%")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() < tol
    }

    #[test]
    fn zero_of_twenty_has_the_known_upper_bound() {
        let (low, high) = clopper_pearson(0, 20);
        assert_eq!(low, 0.0);
        assert!(close(high, 0.1684, 5e-5), "{high}");
        // Closed form for k = 0: 1 − (α/2)^(1/n).
        assert!(close(high, 1.0 - 0.025f64.powf(1.0 / 20.0), 1e-9));
    }

    #[test]
    fn intervals_match_published_values() {
        // Reference values of the exact interval (e.g. R's binom.test).
        let (l, h) = clopper_pearson(5, 10);
        assert!(
            close(l, 0.187_086_1, 1e-6) && close(h, 0.812_913_9, 1e-6),
            "{l} {h}"
        );
        let (l, h) = clopper_pearson(1, 10);
        assert!(
            close(l, 0.002_528_7, 1e-6) && close(h, 0.445_016_1, 1e-6),
            "{l} {h}"
        );
        let (l, h) = clopper_pearson(20, 20);
        assert!(close(l, 0.831_566_1, 1e-6) && h == 1.0, "{l} {h}");
        let (l, h) = clopper_pearson(3, 100);
        assert!(
            close(l, 0.006_229_972, 1e-6) && close(h, 0.085_176_74, 1e-6),
            "{l} {h}"
        );
        assert_eq!(clopper_pearson(0, 0), (0.0, 1.0));
    }

    #[test]
    fn bounds_hold_fail_or_ask_for_more_trials() {
        // 0 of 100 is below 5%; 0 of 20 cannot say (upper 16.8%); rule of three: 60 trials.
        assert_eq!(check(0, 100, None, Some(0.05)), RateCheck::Holds);
        assert_eq!(
            check(0, 20, None, Some(0.05)),
            RateCheck::TooFewTrials { settle: Some(60) }
        );
        // 18 of 20 is certainly above 5%.
        assert_eq!(check(18, 20, None, Some(0.05)), RateCheck::Violated);
        assert_eq!(check(20, 20, Some(0.8), None), RateCheck::Holds);
        assert_eq!(check(2, 20, Some(0.5), None), RateCheck::Violated);
        match check(5, 10, Some(0.3), None) {
            RateCheck::TooFewTrials { settle: Some(n) } => assert!(n > 10, "{n}"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn percentages_read_well() {
        assert_eq!(percent(0.16843), "16.8%");
        assert_eq!(percent(0.0052), "0.52%");
        assert_eq!(percent(0.0), "0%");
    }
}
