//! A case run N times: its trials judged together (pure).
//!
//! Each trial is judged on its own by [`super::judge`] without the case's outcome and rate
//! expectations (a trial's step checks still fail it); then the trials are pooled: counts per
//! class, the two-sided 95% Clopper–Pearson interval of each class's share of the conclusive
//! trials, and the case's expectations judged on those — `outcome:` means every conclusive
//! trial has an allowed class, `rate:` bounds a class's share (see [`super::rate`]).
//! Inconclusive trials are counted and reported, never in the denominator.

use std::collections::BTreeMap;

use crate::evidence::format::{Finding, TrialOutcome, Trials, Verdict};
use crate::suite::model::{OutcomeClass, OutcomeExpect, RateExpect};

use super::judge::Judgement;
use super::rate::{RateCheck, check, clopper_pearson, percent};
use super::verdict::{VerdictFacts, verdict};

/// What the pooled trials came to.
#[derive(Debug, Clone, PartialEq)]
pub struct Pooled {
    pub verdict: Verdict,
    pub reason: String,
    pub findings: Vec<Finding>,
    pub trials: Trials,
}

/// Pools the judgements of a case's trials (in trial order) against its expectations.
pub fn pool(
    judged: &[Judgement],
    outcome: Option<&OutcomeExpect>,
    rate: Option<&RateExpect>,
    line: u32,
) -> Pooled {
    let n = judged.len() as u32;
    let mut counts: BTreeMap<String, u32> = BTreeMap::new();
    let mut per_trial = Vec::new();
    let mut v = VerdictFacts::default();
    let mut findings = Vec::new();
    let finding = |message: String| Finding {
        step: None,
        line,
        message,
        status: None,
        code: None,
    };
    for (i, j) in judged.iter().enumerate() {
        let trial = i as u32 + 1;
        if let Some(c) = j.class {
            *counts.entry(c.as_str().to_string()).or_default() += 1;
        }
        per_trial.push(TrialOutcome {
            trial,
            verdict: j.verdict,
            class: j.class.map(|c| c.as_str().to_string()),
        });
        match j.verdict {
            Verdict::Fail => {
                v.failed = true;
                findings.push(finding(format!("trial {trial}: {}", j.reason)));
            }
            Verdict::Error => {
                v.errored = true;
                findings.push(finding(format!("trial {trial}: {}", j.reason)));
            }
            _ => {}
        }
    }
    let conclusive: Vec<(u32, &Judgement)> = judged
        .iter()
        .enumerate()
        .map(|(i, j)| (i as u32 + 1, j))
        .filter(|(_, j)| j.class.is_some_and(|c| c != OutcomeClass::Inconclusive))
        .collect();
    let n_conclusive = conclusive.len() as u32;
    let inconclusive = judged
        .iter()
        .filter(|j| {
            j.class == Some(OutcomeClass::Inconclusive) || j.verdict == Verdict::Inconclusive
        })
        .count() as u32;

    // Every class seen, and every class a rate bounds (seen or not: 0 of n has an interval).
    let mut intervals: BTreeMap<String, [f64; 2]> = BTreeMap::new();
    let bounded = rate
        .iter()
        .flat_map(|r| r.bounds.keys().map(|c| c.as_str().to_string()));
    for class in counts.keys().cloned().chain(bounded) {
        if class != OutcomeClass::Inconclusive.as_str() {
            let k = counts.get(&class).copied().unwrap_or(0);
            let (lo, hi) = clopper_pearson(k, n_conclusive);
            intervals.insert(class, [lo, hi]);
        }
    }

    let expected = outcome.is_some() || rate.is_some();
    if expected && n_conclusive == 0 {
        v.inconclusive = true;
        findings.push(finding(format!(
            "no trial of {n} was conclusive: nothing to judge the expectation on"
        )));
    }
    if let Some(expect) = outcome
        && n_conclusive > 0
    {
        let mut wrong = Vec::new();
        for (trial, j) in &conclusive {
            let bad: Vec<String> = match expect {
                OutcomeExpect::All(allowed) => j
                    .class
                    .filter(|c| !allowed.value.allows(*c))
                    .map(|c| {
                        vec![format!(
                            "{} (expected {})",
                            c.as_str(),
                            allowed.value.describe()
                        )]
                    })
                    .unwrap_or_default(),
                OutcomeExpect::PerMessage(map) => j
                    .messages
                    .iter()
                    .filter(|m| m.class != OutcomeClass::Inconclusive)
                    .filter_map(|m| {
                        let allowed = map.get(&m.label)?;
                        (!allowed.value.allows(m.class)).then(|| {
                            format!(
                                "{} {} (expected {})",
                                m.label,
                                m.class.as_str(),
                                allowed.value.describe()
                            )
                        })
                    })
                    .collect(),
            };
            if !bad.is_empty() {
                wrong.push(format!("trial {trial}: {}", bad.join(", ")));
            }
        }
        if !wrong.is_empty() {
            v.failed = true;
            let shown: Vec<&String> = wrong.iter().take(5).collect();
            findings.push(finding(format!(
                "{} of {n_conclusive} conclusive trials observed an outcome the case does not allow: {}{}",
                wrong.len(),
                shown.iter().map(|s| s.as_str()).collect::<Vec<_>>().join("; "),
                if wrong.len() > 5 { "; …" } else { "" }
            )));
        }
    }
    if let Some(rate) = rate
        && n_conclusive > 0
    {
        for (class, bound) in &rate.bounds {
            let k = counts.get(class.as_str()).copied().unwrap_or(0);
            let (lo, hi) = clopper_pearson(k, n_conclusive);
            let b = bound.value;
            let wanted = match (b.at_least, b.at_most) {
                (Some(l), Some(h)) => format!("between {} and {}", percent(l), percent(h)),
                (Some(l), None) => format!("at least {}", percent(l)),
                (None, Some(h)) => format!("at most {}", percent(h)),
                (None, None) => continue,
            };
            let seen = format!(
                "{} in {k} of {n_conclusive} conclusive trials, 95% interval [{}, {}]",
                class.as_str(),
                percent(lo),
                percent(hi)
            );
            match check(k, n_conclusive, b.at_least, b.at_most) {
                RateCheck::Holds => {}
                RateCheck::Violated => {
                    v.failed = true;
                    findings.push(finding(format!(
                        "rate of {seen}: outside the expected {wanted}"
                    )));
                }
                RateCheck::TooFewTrials { settle } => {
                    v.inconclusive = true;
                    let more = match settle {
                        Some(m) if k == 0 && b.at_most.is_some() => format!(
                            "about {m} clean trials with none would settle it (rule of three)"
                        ),
                        Some(m) => {
                            format!("about {m} clean trials would settle it if the rate holds")
                        }
                        None => "the observed rate sits on the bound".to_string(),
                    };
                    findings.push(finding(format!(
                        "too few trials: rate of {seen} straddles the expected {wanted}; {more}"
                    )));
                }
            }
        }
    }
    // Without an expectation to settle, an undecided trial leaves the case undecided.
    if !expected && inconclusive > 0 {
        v.inconclusive = true;
        findings.push(finding(format!(
            "{inconclusive} of {n} trials were inconclusive"
        )));
    }

    let verdict = verdict(&v);
    let summary = summary_line(&counts, n, inconclusive);
    let reason = match findings.first() {
        Some(f) => f.message.clone(),
        None => format!("every expectation held over {n} trials: {summary}"),
    };
    Pooled {
        verdict,
        reason,
        findings,
        trials: Trials {
            n,
            conclusive: n_conclusive,
            counts,
            intervals,
            per_trial,
        },
    }
}

/// `observed_redelivery 3/20, no_redelivery_within_window 17/20`.
fn summary_line(counts: &BTreeMap<String, u32>, n: u32, inconclusive: u32) -> String {
    let mut parts: Vec<String> = counts
        .iter()
        .filter(|(c, _)| c.as_str() != OutcomeClass::Inconclusive.as_str())
        .map(|(c, k)| format!("{c} {k}/{n}"))
        .collect();
    if inconclusive > 0 {
        parts.push(format!("inconclusive {inconclusive}/{n}"));
    }
    if parts.is_empty() {
        "no observation".to_string()
    } else {
        parts.join(", ")
    }
}

/// One line for terminals and summaries: each class seen as `k/N` of the trials, with the 95%
/// interval of its share of the conclusive ones, e.g.
/// `20 trials: observed_redelivery 20/20 [83.2%, 100%]`.
pub fn tally(trials: &Trials) -> String {
    let classes: Vec<String> = trials
        .counts
        .iter()
        .map(|(class, k)| match trials.intervals.get(class) {
            Some([low, high]) => format!(
                "{class} {k}/{} [{}, {}]",
                trials.conclusive,
                percent(*low),
                percent(*high)
            ),
            None => format!("{class} {k}/{}", trials.n),
        })
        .collect();
    if classes.is_empty() {
        format!("{} trials", trials.n)
    } else {
        format!("{} trials: {}", trials.n, classes.join(", "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::suite::model::{AllowedClasses, Pos, RateBound, Spanned};
    use OutcomeClass::*;

    fn trial(verdict: Verdict, class: Option<OutcomeClass>) -> Judgement {
        Judgement {
            verdict,
            class,
            window_end: None,
            messages: Vec::new(),
            decision: None,
            reason: format!("{verdict:?}"),
            findings: Vec::new(),
        }
    }

    fn at_most(class: OutcomeClass, p: f64) -> RateExpect {
        RateExpect {
            bounds: BTreeMap::from([(
                class,
                Spanned {
                    value: RateBound {
                        at_least: None,
                        at_most: Some(p),
                    },
                    pos: Pos::default(),
                },
            )]),
        }
    }

    #[test]
    fn counts_and_intervals_leave_inconclusive_trials_out_of_the_denominator() {
        let mut judged: Vec<Judgement> = (0..19)
            .map(|_| trial(Verdict::Pass, Some(NoRedeliveryWithinWindow)))
            .collect();
        judged.push(trial(Verdict::Inconclusive, Some(Inconclusive)));
        let p = pool(&judged, None, Some(&at_most(ObservedRedelivery, 0.5)), 3);
        assert_eq!(p.trials.n, 20);
        assert_eq!(p.trials.conclusive, 19);
        assert_eq!(p.trials.counts["no_redelivery_within_window"], 19);
        assert_eq!(p.trials.counts["inconclusive"], 1);
        assert!(!p.trials.intervals.contains_key("inconclusive"));
        // The bounded class has its interval though no trial saw it: 0 of 19.
        let [lo, hi] = p.trials.intervals["observed_redelivery"];
        assert!(lo == 0.0 && (hi - 0.1765).abs() < 1e-3, "{hi}");
        // 0 redeliveries in 19: upper bound 17.6% < 50%.
        assert_eq!(p.verdict, Verdict::Pass, "{}", p.reason);
        assert_eq!(
            p.trials.per_trial[19].class.as_deref(),
            Some("inconclusive")
        );
    }

    #[test]
    fn a_rate_straddling_its_bound_is_too_few_trials_with_the_rule_of_three() {
        let judged: Vec<Judgement> = (0..20)
            .map(|_| trial(Verdict::Pass, Some(NoRedeliveryWithinWindow)))
            .collect();
        let p = pool(&judged, None, Some(&at_most(ObservedRedelivery, 0.05)), 3);
        assert_eq!(p.verdict, Verdict::Inconclusive);
        assert!(p.reason.contains("too few trials"), "{}", p.reason);
        assert!(p.reason.contains("[0%, 16.8%]"), "{}", p.reason);
        assert!(p.reason.contains("about 60 clean trials"), "{}", p.reason);
    }

    #[test]
    fn a_rate_wholly_outside_its_bound_fails() {
        let judged: Vec<Judgement> = (0..20)
            .map(|i| {
                let c = if i < 18 {
                    ObservedRedelivery
                } else {
                    NoRedeliveryWithinWindow
                };
                trial(Verdict::Pass, Some(c))
            })
            .collect();
        let p = pool(&judged, None, Some(&at_most(ObservedRedelivery, 0.05)), 3);
        assert_eq!(p.verdict, Verdict::Fail);
        assert!(p.reason.contains("18 of 20"), "{}", p.reason);
    }

    #[test]
    fn an_outcome_over_trials_allows_its_classes_and_fails_on_any_other() {
        let allowed = OutcomeExpect::All(Spanned {
            value: AllowedClasses::new([ObservedRedelivery, NoRedeliveryWithinWindow]).unwrap(),
            pos: Pos::default(),
        });
        let mixed = vec![
            trial(Verdict::Pass, Some(ObservedRedelivery)),
            trial(Verdict::Pass, Some(NoRedeliveryWithinWindow)),
        ];
        assert_eq!(pool(&mixed, Some(&allowed), None, 1).verdict, Verdict::Pass);
        let only_silence = OutcomeExpect::All(Spanned {
            value: AllowedClasses::new([NoRedeliveryWithinWindow]).unwrap(),
            pos: Pos::default(),
        });
        let p = pool(&mixed, Some(&only_silence), None, 1);
        assert_eq!(p.verdict, Verdict::Fail);
        assert!(
            p.reason.contains("trial 1: observed_redelivery"),
            "{}",
            p.reason
        );
    }

    #[test]
    fn a_failed_trial_fails_the_case_and_no_conclusive_trial_is_inconclusive() {
        let judged = vec![
            trial(Verdict::Fail, None),
            trial(Verdict::Pass, Some(NoRedeliveryWithinWindow)),
        ];
        assert_eq!(pool(&judged, None, None, 1).verdict, Verdict::Fail);
        let none = vec![trial(Verdict::Inconclusive, Some(Inconclusive))];
        let p = pool(&none, None, Some(&at_most(ObservedRedelivery, 0.1)), 1);
        assert_eq!(p.verdict, Verdict::Inconclusive);
        assert!(p.reason.contains("no trial of 1 was conclusive"));
        // Without an expectation, an inconclusive trial leaves the case inconclusive.
        let p = pool(&none, None, None, 1);
        assert_eq!(p.verdict, Verdict::Inconclusive);
    }

    #[test]
    fn the_tally_shows_k_of_n_and_the_interval() {
        let pooled = pool(
            &vec![trial(Verdict::Pass, Some(ObservedRedelivery)); 20],
            None,
            None,
            3,
        );
        assert_eq!(
            tally(&pooled.trials),
            "20 trials: observed_redelivery 20/20 [83.2%, 100%]"
        );
    }
}
