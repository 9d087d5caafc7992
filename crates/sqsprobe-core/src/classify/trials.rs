//! A case run N times: its trials judged together (pure).
//!
//! Each trial is judged on its own by [`super::judge`] without the case's outcome and rate
//! expectations (a trial's step checks still fail it); then the trials are pooled. Every
//! trial that started is counted once: under its class when it has one, else as unknown
//! (`inconclusive`, or `error` when its verdict was an error), so the counts add up to n.
//! Whether a trial ends unknown can depend on what it would have shown, so unknown trials are
//! never dropped from a denominator: each class's interval is the worst case both ways over
//! all n started trials (see [`super::rate::Sample`]), and the case's expectations are judged
//! on those: `outcome:` holds when every trial is known and allowed, fails on any known trial
//! that is not allowed, and is inconclusive otherwise; `rate:` bounds a class's share.
//! Trials that never started (the run stopped before them) are not in n.

use std::collections::BTreeMap;

use crate::evidence::format::{Finding, RateBound, TrialOutcome, Trials, Verdict};
use crate::suite::model::{OutcomeClass, OutcomeExpect, RateExpect};

use super::judge::Judgement;
use super::rate::{Bound, RateCheck, Sample, judge, percent};
use super::verdict::{VerdictFacts, verdict};

/// What the pooled trials came to.
#[derive(Debug, Clone, PartialEq)]
pub struct Pooled {
    pub verdict: Verdict,
    pub reason: String,
    pub findings: Vec<Finding>,
    pub trials: Trials,
}

/// A trial's class when it has one ([`OutcomeClass::Inconclusive`] is none).
fn known_class(j: &Judgement) -> Option<OutcomeClass> {
    j.class.filter(|c| *c != OutcomeClass::Inconclusive)
}

/// What an unknown trial is counted as: `error` when its verdict was one, else
/// `inconclusive`.
fn unknown_key(j: &Judgement) -> &'static str {
    if j.verdict == Verdict::Error {
        "error"
    } else {
        OutcomeClass::Inconclusive.as_str()
    }
}

/// The count keys that are not a class: the unknown trials.
pub const UNKNOWN_KEYS: [&str; 2] = ["inconclusive", "error"];

/// Pools the judgements of a case's started trials (in trial order) against its
/// expectations.
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
        teardown: false,
    };
    for (i, j) in judged.iter().enumerate() {
        let trial = i as u32 + 1;
        let key = known_class(j).map_or(unknown_key(j), OutcomeClass::as_str);
        *counts.entry(key.to_string()).or_default() += 1;
        per_trial.push(TrialOutcome {
            trial,
            verdict: j.verdict,
            class: j.class.map(super::recorded::class_name),
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
    let unknown = judged.iter().filter(|j| known_class(j).is_none()).count() as u32;
    let known = n - unknown;
    let sample = |class: &str| Sample {
        k: counts.get(class).copied().unwrap_or(0),
        unknown,
        n,
    };

    // Every class seen, and every class a rate bounds (seen or not: 0 of n has an interval).
    let mut intervals: BTreeMap<String, [f64; 2]> = BTreeMap::new();
    let bounded = rate
        .iter()
        .flat_map(|r| r.bounds.keys().map(|c| c.as_str().to_string()));
    for class in counts.keys().cloned().chain(bounded) {
        if !UNKNOWN_KEYS.contains(&class.as_str()) {
            let (lo, hi) = sample(&class).interval();
            intervals.insert(class, [lo, hi]);
        }
    }

    let expected = outcome.is_some() || rate.is_some();
    if let Some(expect) = outcome {
        let mut wrong = Vec::new();
        let mut unsure = 0u32;
        for (i, j) in judged.iter().enumerate() {
            let trial = i + 1;
            let (bad, doubt): (Vec<String>, bool) = match expect {
                OutcomeExpect::All(allowed) => match known_class(j) {
                    None => (Vec::new(), true),
                    Some(c) if !allowed.value.allows(c) => (
                        vec![format!(
                            "{} (expected {})",
                            c.as_str(),
                            allowed.value.describe()
                        )],
                        false,
                    ),
                    Some(_) => (Vec::new(), false),
                },
                OutcomeExpect::PerMessage(map) => {
                    let mut doubt = j.class.is_none();
                    let bad = j
                        .messages
                        .iter()
                        .filter_map(|m| {
                            let allowed = map.get(&m.label)?;
                            if m.class == OutcomeClass::Inconclusive {
                                doubt = true;
                                return None;
                            }
                            (!allowed.value.allows(m.class)).then(|| {
                                format!(
                                    "{} {} (expected {})",
                                    m.label,
                                    m.class.as_str(),
                                    allowed.value.describe()
                                )
                            })
                        })
                        .collect();
                    (bad, doubt)
                }
            };
            if !bad.is_empty() {
                wrong.push(format!("trial {trial}: {}", bad.join(", ")));
            } else if doubt {
                unsure += 1;
            }
        }
        if !wrong.is_empty() {
            v.failed = true;
            let shown: Vec<&String> = wrong.iter().take(5).collect();
            findings.push(finding(format!(
                "{} of {n} trials observed an outcome the case does not allow: {}{}",
                wrong.len(),
                shown
                    .iter()
                    .map(|s| s.as_str())
                    .collect::<Vec<_>>()
                    .join("; "),
                if wrong.len() > 5 { "; …" } else { "" }
            )));
        } else if unsure > 0 {
            v.inconclusive = true;
            findings.push(finding(format!(
                "{unsure} of {n} trials have no class for the expected outcome: each could have \
                 been one the case does not allow"
            )));
        }
    }
    if let Some(rate) = rate {
        for (class, bound) in &rate.bounds {
            let b = Bound {
                at_least: bound.value.at_least,
                at_most: bound.value.at_most,
            };
            if b.at_least.is_none() && b.at_most.is_none() {
                continue;
            }
            let (result, words) = judge(class.as_str(), sample(class.as_str()), b);
            match result {
                RateCheck::Holds => {}
                RateCheck::Violated => {
                    v.failed = true;
                    findings.push(finding(words));
                }
                RateCheck::TooFewTrials { .. } => {
                    v.inconclusive = true;
                    findings.push(finding(words));
                }
            }
        }
    }
    // Without an expectation to settle, an undecided trial leaves the case undecided (a trial
    // whose doubt its `decision: HOLD` expected is not undecided: it passed).
    let undecided = judged
        .iter()
        .filter(|j| j.verdict == Verdict::Inconclusive)
        .count() as u32;
    if !expected && undecided > 0 {
        v.inconclusive = true;
        findings.push(finding(format!(
            "{undecided} of {n} trials were inconclusive"
        )));
    }
    // The pooled expectations account for a trial's class, an unknown one both ways; nothing
    // accounts for the other expectations a trial could not check (a step's, its decision,
    // steps that never ran), each of which could have failed it.
    let unchecked: Vec<String> = judged
        .iter()
        .enumerate()
        .filter(|(_, j)| j.verdict == Verdict::Inconclusive && !j.unchecked.is_empty())
        .map(|(i, j)| format!("trial {}: {}", i + 1, j.unchecked.join("; ")))
        .collect();
    if expected && !unchecked.is_empty() {
        v.inconclusive = true;
        findings.push(finding(format!(
            "{} of {n} trials left an expectation unchecked, which no trial's class accounts \
             for and any could have failed: {}{}",
            unchecked.len(),
            unchecked
                .iter()
                .take(5)
                .map(String::as_str)
                .collect::<Vec<_>>()
                .join("; "),
            if unchecked.len() > 5 { "; …" } else { "" }
        )));
    }

    let verdict = verdict(&v);
    let summary = summary_line(&counts, n);
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
            conclusive: known,
            unknown,
            counts,
            intervals,
            per_trial,
            bounds: rate
                .iter()
                .flat_map(|r| &r.bounds)
                .map(|(class, b)| {
                    let bound = RateBound {
                        at_least: b.value.at_least,
                        at_most: b.value.at_most,
                    };
                    (class.as_str().to_string(), bound)
                })
                .collect(),
        },
    }
}

/// `observed_redelivery 3/20, no_redelivery_within_window 16/20, inconclusive 1/20`.
fn summary_line(counts: &BTreeMap<String, u32>, n: u32) -> String {
    let parts: Vec<String> = counts.iter().map(|(c, k)| format!("{c} {k}/{n}")).collect();
    if parts.is_empty() {
        "no observation".to_string()
    } else {
        parts.join(", ")
    }
}

/// The sample behind one class's interval in a recorded tally.
pub fn sample_of(trials: &Trials, class: &str) -> Sample {
    Sample {
        k: trials.counts.get(class).copied().unwrap_or(0),
        unknown: trials.unknown,
        n: trials.n,
    }
}

/// One line for terminals and summaries: every trial counted once (each class, and the
/// unknown trials as `inconclusive` or `error`), each class a rate bounds shown even when no
/// trial had it, and each class's 95% interval over all n trials, e.g.
/// `20 trials: observed_redelivery 3/20 [0.79%, 44.3%], no_redelivery_within_window 15/20
/// [50.9%, 96.8%], inconclusive 2/20`.
pub fn tally(trials: &Trials) -> String {
    let mut shown: BTreeMap<&String, u32> = trials.counts.iter().map(|(c, k)| (c, *k)).collect();
    for class in trials.intervals.keys() {
        shown.entry(class).or_insert(0);
    }
    let classes: Vec<String> = shown
        .into_iter()
        .map(|(class, k)| match trials.intervals.get(class) {
            Some([low, high]) => format!(
                "{class} {k}/{} [{}, {}]",
                trials.n,
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

/// Accounts for the trials of a case the run never started (it stopped before them): they are
/// named in a finding, and a pass with any of them is only inconclusive.
pub fn account_not_run(pooled: &mut Pooled, not_run: u32, planned: u32, line: u32) {
    if not_run == 0 {
        return;
    }
    let message =
        format!("{not_run} of {planned} trials did not run (the run stopped before them)");
    if pooled.verdict == Verdict::Pass {
        pooled.verdict = Verdict::Inconclusive;
        pooled.reason = message.clone();
    }
    pooled.findings.push(Finding {
        step: None,
        line,
        message,
        status: None,
        code: None,
        teardown: false,
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::classify::judge::Check;
    use crate::classify::test_facts;
    use crate::suite::model::{AllowedClasses, Pos, RateBound as Bound, Spanned};
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
            unchecked: Vec::new(),
        }
    }

    fn at_most(class: OutcomeClass, p: f64) -> RateExpect {
        RateExpect {
            bounds: BTreeMap::from([(
                class,
                Spanned {
                    value: Bound {
                        at_least: None,
                        at_most: Some(p),
                    },
                    pos: Pos::default(),
                },
            )]),
        }
    }

    #[test]
    fn unknown_trials_stay_in_the_denominator_and_the_counts_add_up_to_n() {
        let mut judged: Vec<Judgement> = (0..18)
            .map(|_| trial(Verdict::Pass, Some(NoRedeliveryWithinWindow)))
            .collect();
        judged.push(trial(Verdict::Inconclusive, Some(Inconclusive)));
        judged.push(trial(Verdict::Error, None));
        let p = pool(&judged, None, Some(&at_most(ObservedRedelivery, 0.5)), 3);
        assert_eq!(
            (p.trials.n, p.trials.conclusive, p.trials.unknown),
            (20, 18, 2)
        );
        assert_eq!(p.trials.counts["no_redelivery_within_window"], 18);
        assert_eq!(p.trials.counts["inconclusive"], 1);
        assert_eq!(p.trials.counts["error"], 1);
        assert_eq!(p.trials.counts.values().sum::<u32>(), 20);
        assert!(!p.trials.intervals.contains_key("inconclusive"));
        // The bounded class has its interval though no trial saw it: 0 of 20, and the two
        // unknown trials could each have been one: [0, CP_upper(2, 20)].
        let [lo, hi] = p.trials.intervals["observed_redelivery"];
        assert!(lo == 0.0 && (hi - 0.3170).abs() < 1e-3, "{hi}");
        // The upper end 31.7% is under 50%; the error trial errs the case all the same.
        assert_eq!(p.verdict, Verdict::Error, "{}", p.reason);
        assert_eq!(
            p.trials.per_trial[18].class.map(|c| c.as_str()),
            Some("inconclusive")
        );
    }

    /// A delete timeout stops exactly the trials that would redeliver. Dropping them
    /// turned a true 28% into 29/29 PASS at least 60%.
    #[test]
    fn trials_censored_by_their_outcome_do_not_make_a_pass() {
        let mut judged: Vec<Judgement> = (0..29)
            .map(|_| trial(Verdict::Pass, Some(ObservedRedelivery)))
            .collect();
        judged.extend((0..21).map(|_| trial(Verdict::Inconclusive, Some(Inconclusive))));
        let at_least = RateExpect {
            bounds: BTreeMap::from([(
                ObservedRedelivery,
                Spanned {
                    value: Bound {
                        at_least: Some(0.6),
                        at_most: None,
                    },
                    pos: Pos::default(),
                },
            )]),
        };
        let p = pool(&judged, None, Some(&at_least), 3);
        assert_eq!(p.verdict, Verdict::Inconclusive, "{}", p.reason);
        assert!(
            p.reason.contains("29 of 50 trials (21 unknown"),
            "{}",
            p.reason
        );
    }

    #[test]
    fn a_rate_straddling_its_bound_says_how_many_trials_would_settle_it() {
        let judged: Vec<Judgement> = (0..20)
            .map(|_| trial(Verdict::Pass, Some(NoRedeliveryWithinWindow)))
            .collect();
        let p = pool(&judged, None, Some(&at_most(ObservedRedelivery, 0.05)), 3);
        assert_eq!(p.verdict, Verdict::Inconclusive);
        assert!(p.reason.contains("too few trials"), "{}", p.reason);
        assert!(p.reason.contains("[0%, 16.8%]"), "{}", p.reason);
        assert!(
            p.reason.contains("72 trials with no observed_redelivery"),
            "{}",
            p.reason
        );
        // The bound is recorded with the tally, for reports to draw the interval against.
        assert_eq!(
            p.trials.bounds["observed_redelivery"],
            RateBound {
                at_least: None,
                at_most: Some(0.05)
            }
        );
        assert!(
            pool(&judged, None, None, 3).trials.bounds.is_empty(),
            "no rate:, no bounds"
        );
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
        assert!(
            p.reason.contains("no trial has a class yet"),
            "{}",
            p.reason
        );
        // An outcome over the trials is not met by an unknown one.
        let allowed = OutcomeExpect::All(Spanned {
            value: AllowedClasses::new([NoRedeliveryWithinWindow]).unwrap(),
            pos: Pos::default(),
        });
        let mut judged = vec![trial(Verdict::Pass, Some(NoRedeliveryWithinWindow)); 9];
        judged.push(trial(Verdict::Inconclusive, Some(Inconclusive)));
        let p = pool(&judged, Some(&allowed), None, 1);
        assert_eq!(p.verdict, Verdict::Inconclusive, "{}", p.reason);
        assert!(
            p.reason.contains("1 of 10 trials have no class"),
            "{}",
            p.reason
        );
        // Without an expectation, an inconclusive trial leaves the case inconclusive.
        let p = pool(&none, None, None, 1);
        assert_eq!(p.verdict, Verdict::Inconclusive);
    }

    fn all_of(class: OutcomeClass) -> OutcomeExpect {
        OutcomeExpect::All(Spanned {
            value: AllowedClasses::new([class]).unwrap(),
            pos: Pos::default(),
        })
    }

    /// Every trial's class is known and allowed, but a step after the window could not be
    /// checked in any trial (its answer lost): that expectation could be false in every one.
    /// A single run of it is inconclusive; over trials it was a pass.
    #[test]
    fn an_expectation_no_trial_could_check_leaves_the_case_inconclusive() {
        let lost = Check::Inconclusive("no response: the answer was lost".into());
        let facts = test_facts::acked_and_observed(false, Some(lost));
        let single = crate::classify::judge(&facts);
        assert_eq!(single.verdict, Verdict::Inconclusive);
        let judged = vec![single.clone(), single];
        let outcome = all_of(NoRedeliveryWithinWindow);
        let p = pool(&judged, Some(&outcome), None, 2);
        assert_eq!(p.verdict, Verdict::Inconclusive, "{}", p.reason);
        assert!(
            p.reason.contains(
                "2 of 2 trials left an expectation unchecked, which no trial's class accounts \
                 for and any could have failed: trial 1: step 5 (delete): no response"
            ),
            "{}",
            p.reason
        );
        let rate = at_most(ObservedRedelivery, 0.99);
        let p = pool(&judged, None, Some(&rate), 2);
        assert_eq!(p.verdict, Verdict::Inconclusive, "{}", p.reason);
        // Checked in every trial, the same case passes.
        let checked = crate::classify::judge(&test_facts::acked_and_observed(false, None));
        let p = pool(&[checked.clone(), checked], Some(&outcome), None, 2);
        assert_eq!(p.verdict, Verdict::Pass, "{}", p.reason);
    }

    /// A trial whose window is undecided is unknown for the pooled class, which the interval
    /// counts both ways; a step past the window never ran, an expectation nothing counts.
    #[test]
    fn steps_that_never_ran_and_unsettled_decisions_are_unchecked_expectations() {
        let mut doubtful = test_facts::acked_and_observed(false, None);
        if let Some(w) = doubtful.window.as_mut() {
            w.unknown_receives = 1;
            doubtful.steps[3].check = crate::classify::check_window(w, None);
        }
        let j = crate::classify::judge(&doubtful);
        assert_eq!(j.verdict, Verdict::Inconclusive);
        assert!(j.unchecked.is_empty(), "{:?}", j.unchecked);
        let mut judged = vec![j; 1];
        judged.extend(
            (0..29).map(|_| crate::classify::judge(&test_facts::acked_and_observed(false, None))),
        );
        let rate = at_most(ObservedRedelivery, 0.25);
        assert_eq!(pool(&judged, None, Some(&rate), 2).verdict, Verdict::Pass);

        let mut cut_short = doubtful.clone();
        cut_short.steps_planned = 6;
        let j = crate::classify::judge(&cut_short);
        assert_eq!(j.unchecked, ["steps 5 to 6 never ran"]);
        judged[0] = j;
        let p = pool(&judged, None, Some(&rate), 2);
        assert_eq!(p.verdict, Verdict::Inconclusive, "{}", p.reason);
        assert!(
            p.reason.contains("trial 1: steps 5 to 6 never ran"),
            "{}",
            p.reason
        );

        let mut decided = doubtful;
        decided.expect_decision = Some(vec![sqsprobe_facts::decision::Decision::Accept]);
        let j = crate::classify::judge(&decided);
        assert_eq!(
            j.unchecked,
            ["expected decision ACCEPT: not checked, the case is already undecided"]
        );
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
        // A bounded class is shown even when no trial had it: 0 of n has an interval too.
        let bounded = pool(
            &vec![trial(Verdict::Pass, Some(NoRedeliveryWithinWindow)); 20],
            None,
            Some(&at_most(ObservedRedelivery, 0.2)),
            3,
        );
        assert_eq!(
            tally(&bounded.trials),
            "20 trials: no_redelivery_within_window 20/20 [83.2%, 100%], \
             observed_redelivery 0/20 [0%, 16.8%]"
        );
    }
}

/// The whole procedure simulated: trials drawn at a known true rate, censored by their own
/// outcome (a trial that would have shown the class, or one that would not, ends unknown),
/// pooled, judged. A definite verdict that contradicts the true rate is a wrong one; the
/// interval's nominal error is 2.5% a side. The earlier rule (unknown trials dropped
/// from the denominator) is judged on the same draws for comparison.
#[cfg(test)]
mod simulation {
    use super::*;
    use crate::suite::model::{Pos, RateBound as Bound, Spanned};
    use OutcomeClass::*;

    /// splitmix64: a fixed seed, the same draws on every run.
    struct Dice(u64);

    impl Dice {
        fn next(&mut self) -> f64 {
            self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = self.0;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            ((z ^ (z >> 31)) >> 11) as f64 / (1u64 << 53) as f64
        }
    }

    fn judged(class: Option<OutcomeClass>) -> Judgement {
        Judgement {
            verdict: if class.is_some() {
                Verdict::Pass
            } else {
                Verdict::Inconclusive
            },
            class: Some(class.unwrap_or(Inconclusive)),
            window_end: None,
            messages: Vec::new(),
            decision: None,
            reason: String::new(),
            findings: Vec::new(),
            unchecked: Vec::new(),
        }
    }

    /// Which trials the censoring hides.
    #[derive(Clone, Copy, Debug)]
    enum Censor {
        /// Those that would have redelivered (a delete timeout that stops exactly them).
        Events,
        /// Those that would not (silence over lost polls).
        Silences,
    }

    #[test]
    fn wrong_definite_verdicts_stay_within_the_nominal_error_under_censoring() {
        let mut dice = Dice(0x1919_2026);
        let (mut cases, mut wrong_now, mut wrong_before) = (0u32, 0u32, 0u32);
        let mut worst: (f64, String) = (0.0, String::new());
        let mut worst_before: (f64, String) = (0.0, String::new());
        for bound in [0.1, 0.3, 0.6] {
            for offset in [-0.08, -0.03, 0.0, 0.03, 0.08] {
                let truth: f64 = bound + offset;
                for n in [30u32, 60] {
                    for censor in [Censor::Events, Censor::Silences] {
                        for share in [0.25, 0.5] {
                            let rate = RateExpect {
                                bounds: BTreeMap::from([(
                                    ObservedRedelivery,
                                    Spanned {
                                        value: Bound {
                                            at_least: None,
                                            at_most: Some(bound),
                                        },
                                        pos: Pos::default(),
                                    },
                                )]),
                            };
                            let (mut config_wrong, mut config_before) = (0u32, 0u32);
                            const REPS: u32 = 40;
                            for _ in 0..REPS {
                                let trials: Vec<Judgement> = (0..n)
                                    .map(|_| {
                                        let event = dice.next() < truth;
                                        let hidden = match censor {
                                            Censor::Events => event,
                                            Censor::Silences => !event,
                                        } && dice.next() < share;
                                        judged((!hidden).then_some(if event {
                                            ObservedRedelivery
                                        } else {
                                            NoRedeliveryWithinWindow
                                        }))
                                    })
                                    .collect();
                                let holds_in_truth = truth <= bound;
                                let p = pool(&trials, None, Some(&rate), 1);
                                let wrong = match p.verdict {
                                    Verdict::Pass => !holds_in_truth,
                                    Verdict::Fail => holds_in_truth,
                                    _ => false,
                                };
                                // The old rule: the unknown trials dropped, CP over the rest.
                                let t = &p.trials;
                                let k = t.counts.get("observed_redelivery").copied().unwrap_or(0);
                                let (lo, hi) = super::super::rate::clopper_pearson(k, t.conclusive);
                                let before = if t.conclusive == 0 {
                                    None
                                } else if hi <= bound {
                                    Some(true)
                                } else if lo > bound {
                                    Some(false)
                                } else {
                                    None
                                };
                                cases += 1;
                                config_wrong += u32::from(wrong);
                                wrong_now += u32::from(wrong);
                                let before_wrong = before.is_some_and(|h| h != holds_in_truth);
                                wrong_before += u32::from(before_wrong);
                                config_before += u32::from(before_wrong);
                            }
                            let config = format!(
                                "truth {truth:.2}, at most {bound}, n {n}, {censor:?} {share}"
                            );
                            let share_wrong = f64::from(config_wrong) / f64::from(REPS);
                            if share_wrong > worst.0 {
                                worst = (share_wrong, config.clone());
                            }
                            let share_before = f64::from(config_before) / f64::from(REPS);
                            if share_before > worst_before.0 {
                                worst_before = (share_before, config);
                            }
                        }
                    }
                }
            }
        }
        let now = f64::from(wrong_now) / f64::from(cases);
        let before = f64::from(wrong_before) / f64::from(cases);
        eprintln!(
            "simulation: {cases} cases; wrong definite verdicts {now:.4} (worst configuration \
             {worst:?}); the old rule {before:.4} (worst {worst_before:?})"
        );
        assert!(
            now <= 0.025,
            "wrong {now} of {cases} (worst config {worst:?})"
        );
        assert!(
            worst.0 <= 0.1,
            "one configuration is wrong too often: {worst:?}"
        );
        assert!(
            before >= 4.0 * now.max(0.01),
            "the old rule should be wrong far more often: {before} against {now}"
        );
        // Where the censoring hides what matters, the old rule was wrong most of the time.
        assert!(
            worst_before.0 >= 0.4,
            "the old rule's worst configuration: {worst_before:?}"
        );
    }

    /// One trial of the usual experiment (send, receive, delete, observe, then a step past the
    /// window), judged from its facts: `event` it came back, `hidden` its window was undecided
    /// (a lost poll: the trial stops there), `step_holds` whether the step past the window
    /// truly meets its expectation, `lost` whether that step's answer was lost.
    fn trial_of(event: bool, hidden: bool, step_holds: bool, lost: bool) -> Judgement {
        use crate::classify::judge::Check;
        let after = if lost {
            Check::Inconclusive("no response: the answer was lost".into())
        } else if step_holds {
            Check::Pass
        } else {
            Check::Fail(vec![
                "expected success, got ReceiptHandleIsInvalid (400)".into(),
            ])
        };
        let mut facts = crate::classify::test_facts::acked_and_observed(event, Some(after));
        if hidden {
            if let Some(w) = facts.window.as_mut() {
                w.unknown_receives = 1;
                w.end = Some(crate::classify::WindowEnd::Completed);
                w.tracked[0].sightings = 0;
                facts.steps[3].check = crate::classify::check_window(w, None);
            }
            // The runner stops a trial at its first step that did not pass.
            facts.steps.truncate(4);
        }
        crate::classify::judge(&facts)
    }

    /// The same procedure with a step past the window whose expectation is false in some
    /// trials and whose answer is lost in some: a pass must account for every expectation of
    /// every trial, so an unchecked one that could be false never lets a case pass. The rule
    /// before it (a trial's class pooled, its other doubts ignored once the case had an
    /// `outcome:` or `rate:`) is judged on the same trials for comparison.
    #[test]
    fn unchecked_expectations_never_let_a_wrong_case_pass() {
        let mut dice = Dice(0x3636_2026);
        let (mut cases, mut wrong_now, mut wrong_before) = (0u32, 0u32, 0u32);
        let mut hidden_false_passes_before = 0u32;
        let (mut definite_now, mut definite_before) = (0u32, 0u32);
        for bound in [0.3, 0.6] {
            for offset in [-0.2, 0.0, 0.08] {
                let truth: f64 = bound + offset;
                for censor in [Censor::Events, Censor::Silences] {
                    for false_share in [0.0, 0.01, 0.03] {
                        for lost_share in [0.1, 0.3] {
                            let rate = RateExpect {
                                bounds: BTreeMap::from([(
                                    ObservedRedelivery,
                                    Spanned {
                                        value: Bound {
                                            at_least: None,
                                            at_most: Some(bound),
                                        },
                                        pos: Pos::default(),
                                    },
                                )]),
                            };
                            for _ in 0..20 {
                                let mut every_step_holds = true;
                                let mut a_false_step_hid = false;
                                let trials: Vec<Judgement> = (0..60)
                                    .map(|_| {
                                        let event = dice.next() < truth;
                                        let hidden = match censor {
                                            Censor::Events => event,
                                            Censor::Silences => !event,
                                        } && dice.next() < 0.25;
                                        let holds = dice.next() >= false_share;
                                        let lost = dice.next() < lost_share;
                                        every_step_holds &= holds;
                                        a_false_step_hid |= !holds && (lost || hidden);
                                        trial_of(event, hidden, holds, lost)
                                    })
                                    .collect();
                                let holds_in_truth = truth <= bound && every_step_holds;
                                let wrong = |verdict: Verdict| match verdict {
                                    Verdict::Pass => !holds_in_truth,
                                    Verdict::Fail => holds_in_truth,
                                    _ => false,
                                };
                                let now = pool(&trials, None, Some(&rate), 1).verdict;
                                let blind: Vec<Judgement> = trials
                                    .iter()
                                    .cloned()
                                    .map(|j| Judgement {
                                        unchecked: Vec::new(),
                                        ..j
                                    })
                                    .collect();
                                let before = pool(&blind, None, Some(&rate), 1).verdict;
                                cases += 1;
                                wrong_now += u32::from(wrong(now));
                                wrong_before += u32::from(wrong(before));
                                let definite =
                                    |v: Verdict| matches!(v, Verdict::Pass | Verdict::Fail);
                                definite_now += u32::from(definite(now));
                                definite_before += u32::from(definite(before));
                                let hid_and_passed = a_false_step_hid
                                    && !trials.iter().any(|j| j.verdict == Verdict::Fail);
                                if hid_and_passed && before == Verdict::Pass {
                                    hidden_false_passes_before += 1;
                                }
                                assert!(
                                    !(hid_and_passed && now == Verdict::Pass),
                                    "a false expectation hid in an unchecked trial and the \
                                     case passed (truth {truth}, bound {bound}, {censor:?}, \
                                     false {false_share}, lost {lost_share})"
                                );
                            }
                        }
                    }
                }
            }
        }
        let now = f64::from(wrong_now) / f64::from(cases);
        let before = f64::from(wrong_before) / f64::from(cases);
        eprintln!(
            "simulation with unchecked expectations: {cases} cases; {definite_now} definite \
             verdicts, wrong in {now:.4} of the cases; the rule before {definite_before} \
             definite, wrong in {before:.4} ({hidden_false_passes_before} passes over a false \
             expectation no trial checked)"
        );
        assert!(now <= 0.025, "wrong {now} of {cases}");
        assert!(
            hidden_false_passes_before > 0 && before > now,
            "the rule before should pass over hidden false expectations: {before} against {now}"
        );
    }
}
