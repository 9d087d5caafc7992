//! Rates with honest intervals: what `k` of `n` trials say about how often something happens.
//!
//! AWS says a stale-handle delete "might not" delete and that a message "might" come back after
//! a correct delete: those are rates, and one run cannot measure a rate. A bound on a rate is
//! judged on the two-sided 95% **Clopper–Pearson** interval of `k/n` (exact: built from the
//! binomial distribution itself, never narrower than the truth warrants, so it errs towards
//! "inconclusive", never towards a pass). Trials whose outcome is unknown stay in the count and
//! widen the interval the way they could have fallen ([`Sample`]). The bound holds when the
//! whole interval is inside it, fails when the whole interval is outside, and is inconclusive
//! when the interval straddles it — too few trials, said as such, with how many trials would
//! settle it and which way.

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

/// What a case's trials say about one class: `k` trials had it, `unknown` started trials
/// ended with no class (inconclusive, an error, cut while running), `n` trials started.
/// Trials never started are not in `n`.
///
/// Whether a trial ends unknown can depend on its class (a delete timeout stops exactly the
/// trials that would redeliver; a cut run keeps its early finishers), so the unknown trials
/// are never dropped: each could have been of the class or not. The rate is only known to lie
/// in `[k/n, (k+u)/n]` (Manski's worst-case bounds, which need no assumption about why a
/// trial is unknown), and the interval is the exact one on each end:
/// `[CP_lower(k, n), CP_upper(k + u, n)]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sample {
    pub k: u32,
    pub unknown: u32,
    pub n: u32,
}

impl Sample {
    /// The two-sided 95% interval of the rate under the worst case both ways.
    pub fn interval(self) -> (f64, f64) {
        let low = clopper_pearson(self.k.min(self.n), self.n).0;
        let high = clopper_pearson((self.k + self.unknown).min(self.n), self.n).1;
        (low, high)
    }

    /// The trials with a class (the ones that are not unknown).
    pub fn known(self) -> u32 {
        self.n.saturating_sub(self.unknown)
    }
}

/// A bound on a rate (fractions): `at_least`, `at_most`, or both.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Bound {
    pub at_least: Option<f64>,
    pub at_most: Option<f64>,
}

impl Bound {
    /// `at most 5%`, `between 10% and 20%`.
    pub fn describe(self) -> String {
        match (self.at_least, self.at_most) {
            (Some(l), Some(h)) => format!("between {} and {}", percent(l), percent(h)),
            (Some(l), None) => format!("at least {}", percent(l)),
            (None, Some(h)) => format!("at most {}", percent(h)),
            (None, None) => "no bound".to_string(),
        }
    }
}

/// How a bound on a rate came out.
#[derive(Debug, Clone, PartialEq)]
pub enum RateCheck {
    /// The whole interval is inside the bound.
    Holds,
    /// The whole interval is outside the bound.
    Violated,
    /// The interval straddles the bound; `settle` says how many trials in all would decide
    /// it if the rate the known trials show held (`None` when no number would: no trial is
    /// known yet, or the observed rate sits on the bound).
    TooFewTrials { settle: Option<Settle> },
}

/// How many trials in all would decide a straddling bound, and which way.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Settle {
    pub trials: u32,
    /// The observed rate is outside the bound: those trials would settle it as a failure.
    pub as_failure: bool,
}

/// Judges a sample against a bound: `at_most p` holds only when the interval's upper end is
/// ≤ p and fails only when its lower end is > p; `at_least p` holds only when the lower end is
/// ≥ p and fails only when the upper end is < p; anything else is too few trials.
pub fn check(s: Sample, b: Bound) -> RateCheck {
    match decide(s, b) {
        Some(true) => RateCheck::Holds,
        Some(false) => RateCheck::Violated,
        None => RateCheck::TooFewTrials {
            settle: trials_to_settle(s, b),
        },
    }
}

/// `Some(true)` holds, `Some(false)` violated, `None` straddles.
///
/// Read off the binomial tail at the bound itself rather than by inverting it (the settle
/// search asks this dozens of times): the exact interval's upper end is at most `p` exactly
/// when I_p(k + 1, n − k) ≥ 1 − α/2, and its lower end is at least `p` exactly when
/// I_p(k, n − k + 1) ≤ α/2, I being the regularized incomplete beta function that
/// [`clopper_pearson`] inverts.
fn decide(s: Sample, b: Bound) -> Option<bool> {
    let half = (1.0 - CONFIDENCE) / 2.0;
    let n = f64::from(s.n);
    let (k_low, k_high) = (s.k.min(s.n), (s.k + s.unknown).min(s.n));
    // The interval's lower end (of k) is at least / above `p`.
    let low_at_least = |p: f64, strict: bool| {
        if p <= 0.0 {
            return !strict || k_low > 0;
        }
        if p >= 1.0 || k_low == 0 || s.n == 0 {
            return false;
        }
        let tail = regularized_beta(p, f64::from(k_low), n - f64::from(k_low) + 1.0);
        if strict { tail < half } else { tail <= half }
    };
    // The interval's upper end (of k + unknown) is at most / below `p`.
    let high_at_most = |p: f64, strict: bool| {
        if p >= 1.0 {
            return !strict || k_high < s.n;
        }
        if p <= 0.0 || k_high == s.n {
            return false;
        }
        let tail = regularized_beta(p, f64::from(k_high) + 1.0, n - f64::from(k_high));
        if strict {
            tail > 1.0 - half
        } else {
            tail >= 1.0 - half
        }
    };
    let inside = b.at_least.is_none_or(|min| low_at_least(min, false))
        && b.at_most.is_none_or(|max| high_at_most(max, false));
    let outside = b.at_least.is_some_and(|min| high_at_most(min, true))
        || b.at_most.is_some_and(|max| low_at_least(max, true));
    if inside {
        Some(true)
    } else if outside {
        Some(false)
    } else {
        None
    }
}

/// The most trials the settle search considers.
const SETTLE_LIMIT: u32 = 100_000;

/// How many trials in all would settle the bound. With no event and no unknown trial against
/// `at_most p`, exactly: 0 of m has upper end 1 − 0.025^(1/m), which is ≤ p once
/// m ≥ ln 0.025 / ln(1 − p) (72 trials for 5%, 13 for 25%). Otherwise the smallest m (found by
/// doubling, then halving) at which trials beyond these `n`, all known and at the rate the
/// known trials show, give a definite answer; the unknown trials stay unknown.
pub fn trials_to_settle(s: Sample, b: Bound) -> Option<Settle> {
    let known = s.known();
    if known == 0 {
        return None;
    }
    let rate = f64::from(s.k) / f64::from(known);
    let at = |m: u32| {
        let extra = f64::from(m - s.n);
        let k = s.k + (rate * extra).round() as u32;
        decide(
            Sample {
                k,
                unknown: s.unknown,
                n: m,
            },
            b,
        )
    };
    if s.k == 0
        && s.unknown == 0
        && let Some(max) = b.at_most.filter(|m| *m > 0.0 && *m < 1.0)
        && b.at_least.is_none_or(|min| min <= 0.0)
    {
        let m = ((0.025f64).ln() / (1.0 - max).ln()).ceil().max(1.0) as u32;
        // The closed form, checked against the interval itself (floating point at the edge).
        let m = (m.saturating_sub(1)..=m + 1)
            .find(|&m| m > s.n && at(m) == Some(true))
            .unwrap_or(m);
        return Some(Settle {
            trials: m.max(s.n + 1),
            as_failure: false,
        });
    }
    let mut high = s.n.max(1);
    let answer = loop {
        high = high.saturating_mul(2);
        if high > SETTLE_LIMIT {
            return None;
        }
        if let Some(holds) = at(high) {
            break holds;
        }
    };
    let mut low = (high / 2).max(s.n);
    while high - low > 1 {
        let mid = low + (high - low) / 2;
        if at(mid) == Some(answer) {
            high = mid;
        } else {
            low = mid;
        }
    }
    Some(Settle {
        trials: high,
        as_failure: !answer,
    })
}

/// The judge's words for one bounded class, used by the case's findings and the report:
/// `(check, what was seen, what would settle it)`.
pub fn judge(class: &str, s: Sample, b: Bound) -> (RateCheck, String) {
    let (low, high) = s.interval();
    let unknown = if s.unknown > 0 {
        format!(" ({} unknown, counted both ways)", s.unknown)
    } else {
        String::new()
    };
    let seen = format!(
        "{class} in {} of {} trials{unknown}, 95% interval [{}, {}]",
        s.k,
        s.n,
        percent(low),
        percent(high)
    );
    let wanted = b.describe();
    let result = check(s, b);
    let words = match &result {
        RateCheck::Holds => format!("rate of {seen}: inside the expected {wanted}"),
        RateCheck::Violated => format!("rate of {seen}: outside the expected {wanted}"),
        RateCheck::TooFewTrials { settle } => {
            let more = match settle {
                Some(Settle {
                    trials,
                    as_failure: false,
                }) if s.k == 0 && s.unknown == 0 => format!(
                    "{trials} trials with no {class} would settle it (0 of n settles at most p \
                     when n ≥ ln 0.025 / ln(1 − p))"
                ),
                Some(Settle {
                    trials,
                    as_failure: false,
                }) => format!(
                    "about {trials} trials in all would settle it if the known trials' rate \
                     holds and no more are unknown"
                ),
                Some(Settle {
                    trials,
                    as_failure: true,
                }) => format!(
                    "about {trials} trials in all would settle it as a failure if the known \
                     trials' rate holds"
                ),
                None if s.known() == 0 => "no trial has a class yet".to_string(),
                None => "the known trials' rate sits on the bound".to_string(),
            };
            format!("too few trials: rate of {seen} straddles the expected {wanted}; {more}")
        }
    };
    (result, words)
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

    fn sample(k: u32, unknown: u32, n: u32) -> Sample {
        Sample { k, unknown, n }
    }

    const AT_MOST_5: Bound = Bound {
        at_least: None,
        at_most: Some(0.05),
    };

    #[test]
    fn bounds_hold_fail_or_ask_for_more_trials() {
        // 0 of 100 is below 5%; 0 of 20 cannot say (upper 16.8%): 72 trials would, exactly.
        assert_eq!(check(sample(0, 0, 100), AT_MOST_5), RateCheck::Holds);
        assert_eq!(
            check(sample(0, 0, 20), AT_MOST_5),
            RateCheck::TooFewTrials {
                settle: Some(Settle {
                    trials: 72,
                    as_failure: false
                })
            }
        );
        assert_eq!(check(sample(0, 0, 72), AT_MOST_5), RateCheck::Holds);
        assert!(matches!(
            check(sample(0, 0, 71), AT_MOST_5),
            RateCheck::TooFewTrials { .. }
        ));
        let quarter = Bound {
            at_least: None,
            at_most: Some(0.25),
        };
        assert_eq!(
            trials_to_settle(sample(0, 0, 5), quarter).map(|s| s.trials),
            Some(13)
        );
        // 18 of 20 is certainly above 5%.
        assert_eq!(check(sample(18, 0, 20), AT_MOST_5), RateCheck::Violated);
        let at_least = |p| Bound {
            at_least: Some(p),
            at_most: None,
        };
        assert_eq!(check(sample(20, 0, 20), at_least(0.8)), RateCheck::Holds);
        assert_eq!(check(sample(2, 0, 20), at_least(0.5)), RateCheck::Violated);
        match check(sample(5, 0, 10), at_least(0.3)) {
            RateCheck::TooFewTrials {
                settle: Some(Settle { trials, as_failure }),
            } => assert!(trials > 10 && !as_failure, "{trials}"),
            other => panic!("{other:?}"),
        }
    }

    /// The unknown trials count both ways: against the bound they could break, and for it.
    #[test]
    fn unknown_trials_widen_the_interval_on_the_side_they_could_fall() {
        // 29 of 50 at least 60%, 21 unknown: the rate is somewhere in [58%, 100%].
        let s = sample(29, 21, 50);
        let (low, high) = s.interval();
        assert!((low - clopper_pearson(29, 50).0).abs() < 1e-12);
        assert_eq!(high, 1.0);
        let at_least_60 = Bound {
            at_least: Some(0.6),
            at_most: None,
        };
        assert!(matches!(
            check(s, at_least_60),
            RateCheck::TooFewTrials { .. }
        ));
        // Dropping the unknown trials (29 of 29) would have called it a pass.
        assert_eq!(check(sample(29, 0, 29), at_least_60), RateCheck::Holds);
        // 0 of 100 with 2 unknown is still below 10%: CP_upper(2, 100) = 7.0%.
        let at_most_10 = Bound {
            at_least: None,
            at_most: Some(0.1),
        };
        assert_eq!(check(sample(0, 2, 100), at_most_10), RateCheck::Holds);
        // A failure needs the lower end past the bound whatever the unknown trials were.
        assert_eq!(check(sample(30, 20, 50), AT_MOST_5), RateCheck::Violated);
        // Every trial unknown: nothing to settle on.
        assert_eq!(
            check(sample(0, 10, 10), AT_MOST_5),
            RateCheck::TooFewTrials { settle: None }
        );
    }

    #[test]
    fn settle_advice_points_the_way_the_known_trials_lean() {
        // 4 of 20 against at most 5% is violated already: CP_lower(4, 20) = 5.7%.
        assert_eq!(check(sample(4, 0, 20), AT_MOST_5), RateCheck::Violated);
        // 2 of 20 (10%) against at most 5%: more trials at 10% would settle it as a failure.
        let RateCheck::TooFewTrials {
            settle: Some(settle),
        } = check(sample(2, 0, 20), AT_MOST_5)
        else {
            panic!("2 of 20 against 5% should straddle")
        };
        assert!(settle.as_failure, "{settle:?}");
        let m = settle.trials;
        let k = 2 + ((f64::from(m - 20)) * 0.1).round() as u32;
        assert_eq!(check(sample(k, 0, m), AT_MOST_5), RateCheck::Violated);
        let (_, words) = judge("observed_redelivery", sample(2, 0, 20), AT_MOST_5);
        assert!(words.contains("as a failure"), "{words}");
        assert!(!words.contains("clean"), "{words}");
        // With unknowns, the advice counts them as still unknown.
        let RateCheck::TooFewTrials {
            settle: Some(settle),
        } = check(sample(0, 3, 40), AT_MOST_5)
        else {
            panic!("0 of 40 with 3 unknown against 5% should straddle")
        };
        assert!(!settle.as_failure);
        assert_eq!(
            check(sample(0, 3, settle.trials), AT_MOST_5),
            RateCheck::Holds
        );
        assert!(matches!(
            check(sample(0, 3, settle.trials - 1), AT_MOST_5),
            RateCheck::TooFewTrials { .. }
        ));
    }

    /// The tail reading of [`decide`] agrees with the inverted interval everywhere off its
    /// edge.
    #[test]
    fn decisions_agree_with_the_interval() {
        for n in [1u32, 5, 20, 72, 150] {
            for k in 0..=n {
                for unknown in [0, 1, 3] {
                    let s = sample(k, unknown.min(n - k), n);
                    let (low, high) = s.interval();
                    for p in [0.0, 0.01, 0.05, 0.1, 0.25, 0.5, 0.75, 0.95, 1.0] {
                        for b in [
                            Bound {
                                at_least: None,
                                at_most: Some(p),
                            },
                            Bound {
                                at_least: Some(p),
                                at_most: None,
                            },
                        ] {
                            let near = (low - p).abs() < 1e-9 || (high - p).abs() < 1e-9;
                            let inside = b.at_least.is_none_or(|m| low >= m)
                                && b.at_most.is_none_or(|m| high <= m);
                            let outside = b.at_least.is_some_and(|m| high < m)
                                || b.at_most.is_some_and(|m| low > m);
                            let want = if inside {
                                Some(true)
                            } else if outside {
                                Some(false)
                            } else {
                                None
                            };
                            if !near {
                                assert_eq!(decide(s, b), want, "{s:?} {b:?} [{low}, {high}]");
                            }
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn percentages_read_well() {
        assert_eq!(percent(0.16843), "16.8%");
        assert_eq!(percent(0.0052), "0.52%");
        assert_eq!(percent(0.0), "0%");
    }
}
