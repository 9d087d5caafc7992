//! A finished case through a profile: a known divergence explained (at its step, in its
//! teardown), a pass that was expected to diverge, a case not run; and how a run's verdicts
//! compare with what the profile expected.

use super::model::{Profile, ProfileEntry, StepPin};
use crate::evidence::format::{CaseEnd, Verdict};

/// The note a passing case gets when the profile expected it to diverge.
pub const NO_LONGER_OBSERVED: &str = "known divergence no longer observed — fixed upstream?";
/// Maps a finished case through the profile.
///
/// A listed known divergence that failed becomes `known_divergence` with the profile's reason
/// and reference; one that passed stays a pass with a note asking whether it was fixed
/// upstream. Errors and inconclusive results are left alone: they show nothing about the
/// divergence either way — except an error of the teardown an entry pins (`teardown:`),
/// which is the divergence.
pub fn apply(profile: &Profile, mut end: CaseEnd) -> CaseEnd {
    let Some(entry) = profile.known_divergence(&end.case) else {
        return end;
    };
    match end.verdict {
        // A teardown error is a divergence only where the entry pins one.
        Verdict::Fail | Verdict::Error
            if end.verdict == Verdict::Fail || entry.teardown.is_some() =>
        {
            match explains(entry, &end) {
                Ok(()) => {
                    end.verdict = Verdict::KnownDivergence;
                    end.profile_note = Some(entry.note());
                }
                Err(why) => end.profile_note = Some(why),
            }
        }
        Verdict::Pass => end.profile_note = Some(NO_LONGER_OBSERVED.to_string()),
        _ => {}
    }
    end
}

/// Whether a failed case's findings are exactly the divergence the entry describes: all at
/// its step, and saying what it says the target answers there, and any teardown finding
/// saying what its `teardown:` says. `Err` says what differs.
fn explains(entry: &ProfileEntry, end: &CaseEnd) -> Result<(), String> {
    use crate::evidence::format::Finding;
    // A case that errs was cut by something outside it (a lost target, refused credentials)
    // or by its teardown: the case-level findings then say what stopped it, which no
    // `step: case` pin (a rate, a trial) explains.
    let errored = end.verdict == Verdict::Error;
    let at = |f: &&Finding| {
        !f.teardown
            && match entry.step {
                Some(StepPin::Case) => f.step.is_none() && !errored,
                Some(StepPin::At(n)) => f.step.map(|s| s as u32 + 1) == Some(n),
                // A teardown-only entry explains no step's finding.
                None => false,
            }
    };
    let pinned_at = match (entry.step, &entry.teardown) {
        (Some(StepPin::Case), _) => "case level".to_string(),
        (Some(StepPin::At(n)), _) => format!("step {n}"),
        (None, Some(_)) => "its teardown".to_string(),
        (None, None) => "no step".to_string(),
    };
    let elsewhere: Vec<&str> = end
        .findings
        .iter()
        // A teardown finding is the `teardown:` pin's to explain, if the entry has one.
        .filter(|f| !(at(f) || f.teardown && entry.teardown.is_some()))
        .map(|f| f.message.as_str())
        .collect();
    if !elsewhere.is_empty() {
        return Err(format!(
            "listed as a known divergence at {pinned_at}, but it failed elsewhere: {}",
            elsewhere.join("; ")
        ));
    }
    if let Some(text) = &entry.teardown {
        let other: Vec<&str> = end
            .findings
            .iter()
            .filter(|f| f.teardown && !f.message.contains(text.as_str()))
            .map(|f| f.message.as_str())
            .collect();
        if !other.is_empty() {
            return Err(format!(
                "listed as a known divergence whose teardown says {text:?}, but its teardown \
                 failed differently: {}",
                other.join("; ")
            ));
        }
    }
    if entry.step.is_none() {
        return Ok(());
    }
    let here: Vec<&Finding> = end.findings.iter().filter(at).collect();
    let said = entry
        .finding
        .as_deref()
        .is_none_or(|text| here.iter().any(|f| f.message.contains(text)));
    let answered = entry
        .answer
        .as_ref()
        .is_none_or(|a| here.iter().any(|f| a.matches(f.status, f.code.as_deref())));
    if said && answered {
        return Ok(());
    }
    let expected = match (&entry.finding, &entry.answer) {
        (Some(t), _) if !said => format!("a finding saying {t:?}"),
        (_, Some(a)) => format!(
            "the answer {}{}",
            a.status
                .map(|s| s.to_string())
                .unwrap_or_else(|| "any status".into()),
            a.code
                .as_deref()
                .map(|c| format!(" {c}"))
                .unwrap_or_default()
        ),
        _ => "what the profile pins".to_string(),
    };
    Err(format!(
        "listed as a known divergence at {pinned_at}, but it failed differently there (the \
         profile expects {expected}): {}",
        here.iter()
            .map(|f| f.message.as_str())
            .collect::<Vec<_>>()
            .join("; ")
    ))
}

/// The `case_end` for a case the profile marks unsupported: it is written instead of running
/// the case (no `case_start`, no calls).
pub fn unsupported_end(
    profile: &Profile,
    run_id: &str,
    suite: &str,
    case: &str,
    at: &str,
) -> Option<CaseEnd> {
    let entry = profile.unsupported(case)?;
    Some(CaseEnd::unrun(
        run_id,
        suite,
        case,
        at,
        Verdict::Unsupported,
        format!(
            "not run: unsupported on target profile `{}`: {}",
            profile.target, entry.reason
        ),
        Some(entry.note()),
    ))
}

/// How a run's verdicts compare with what the profile expected.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct ProfileChanges {
    /// Known divergences that showed as expected.
    pub confirmed: Vec<String>,
    /// Known divergences that passed: fixed upstream, or the case changed.
    pub no_longer_observed: Vec<String>,
    /// Failures and errors the profile does not list.
    pub newly_failing: Vec<String>,
    /// Cases not run because the profile marks them unsupported.
    pub unsupported: Vec<String>,
}

/// Sorts the run's finished cases against the profile.
pub fn changes<'a>(ends: impl IntoIterator<Item = &'a CaseEnd>) -> ProfileChanges {
    let mut c = ProfileChanges::default();
    for end in ends {
        let id = end.case.clone();
        match end.verdict {
            Verdict::KnownDivergence => c.confirmed.push(id),
            Verdict::Unsupported => c.unsupported.push(id),
            Verdict::Pass if end.profile_note.as_deref() == Some(NO_LONGER_OBSERVED) => {
                c.no_longer_observed.push(id)
            }
            Verdict::Fail | Verdict::Error => c.newly_failing.push(id),
            _ => {}
        }
    }
    c
}

impl ProfileChanges {
    /// Lines for the terminal, headed by the profile name; empty sections are left out.
    pub fn render(&self, profile: &str) -> String {
        let mut out = format!(
            "target profile `{profile}`: {} known divergence(s) observed, {} no longer observed, {} failing outside the profile, {} unsupported\n",
            self.confirmed.len(),
            self.no_longer_observed.len(),
            self.newly_failing.len(),
            self.unsupported.len()
        );
        for (title, ids) in [
            (
                "known divergence no longer observed (fixed upstream? remove it from the profile)",
                &self.no_longer_observed,
            ),
            ("failing, not in the profile", &self.newly_failing),
        ] {
            if !ids.is_empty() {
                out.push_str(&format!("  {title}:\n"));
                for id in ids {
                    out.push_str(&format!("    {id}\n"));
                }
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::super::fixtures::*;
    use super::super::parse::parse_profile;
    use super::*;
    use crate::evidence::format::Finding;

    #[test]
    fn a_case_level_pin_explains_only_findings_without_a_step() {
        let text = GOOD.replace("    step: 3\n", "    step: case\n").replace(
            "    answer: {status: 400, code: ReceiptHandleIsInvalid}",
            "    finding: \"rate of observed_redelivery\"",
        );
        let p = parse_profile("p.yaml", &text).unwrap();
        assert_eq!(p.known_divergences[0].step, Some(StepPin::Case));
        let rate = Finding {
            step: None,
            line: 5,
            message: "rate of observed_redelivery in 15 of 15 trials".into(),
            status: None,
            code: None,
            teardown: false,
        };
        assert_eq!(
            apply(&p, failed_with(vec![rate.clone()])).verdict,
            Verdict::KnownDivergence
        );
        // The same words at a step are another failure, and so is a stepless finding that
        // says something else.
        let mut at_step = rate.clone();
        at_step.step = Some(2);
        assert_eq!(apply(&p, failed_with(vec![at_step])).verdict, Verdict::Fail);
        let mut other = rate;
        other.message = "trial 1: step 5 (delete): expected success".into();
        let kept = apply(&p, failed_with(vec![other]));
        assert_eq!(kept.verdict, Verdict::Fail);
        assert!(kept.profile_note.unwrap().contains("at case level"));
        let bad = GOOD.replace("    step: 3\n", "    step: somewhere\n");
        assert!(parse_profile("p.yaml", &bad).is_err());
    }

    /// sqslite never answers a DeleteQueue of a queue already gone: the case's teardown
    /// fails on it, and only a `teardown:` pin explains that.
    #[test]
    fn a_teardown_pin_explains_the_teardown_finding_and_nothing_else() {
        let moto = finding(2, "expected success", 400, Some("ReceiptHandleIsInvalid"));
        let hung = teardown_finding("failed to delete queue q-2 (in us-west-2): no answer");
        // Without the pin, a teardown finding is a failure elsewhere (and an error stays one).
        let p = parse_profile("p.yaml", GOOD).unwrap();
        let kept = apply(&p, failed_with(vec![moto.clone(), hung.clone()]));
        assert_eq!(kept.verdict, Verdict::Fail);
        assert!(kept.profile_note.unwrap().contains("failed elsewhere"));
        let mut errored = end("stale-handle-delete-after-lapse", Verdict::Error);
        errored.findings = vec![hung.clone()];
        assert_eq!(apply(&p, errored.clone()).verdict, Verdict::Error);

        // Pinned with the step: both are the divergence.
        let both = GOOD.replace(
            "    reason: moto answers",
            "    teardown: \"no answer\"\n    reason: moto answers",
        );
        let p = parse_profile("p.yaml", &both).unwrap();
        assert_eq!(
            p.known_divergences[0].teardown.as_deref(),
            Some("no answer")
        );
        assert_eq!(
            apply(&p, failed_with(vec![moto.clone(), hung.clone()])).verdict,
            Verdict::KnownDivergence
        );
        // A teardown that fails otherwise is not it.
        let refused =
            teardown_finding("failed to delete queue q-2 (in us-west-2): 403 AccessDenied");
        let kept = apply(&p, failed_with(vec![moto.clone(), refused]));
        assert_eq!(kept.verdict, Verdict::Fail);
        assert!(
            kept.profile_note
                .unwrap()
                .contains("teardown failed differently")
        );

        // A teardown-only pin: the error is the divergence; a step's failure is not.
        let only = GOOD.replace("    step: 3\n", "").replace(
            "    answer: {status: 400, code: ReceiptHandleIsInvalid}",
            "    teardown: \"no answer\"",
        );
        let p = parse_profile("p.yaml", &only).unwrap();
        assert_eq!(apply(&p, errored).verdict, Verdict::KnownDivergence);
        let kept = apply(&p, failed_with(vec![moto, hung]));
        assert_eq!(kept.verdict, Verdict::Fail);
        assert!(kept.profile_note.unwrap().contains("at its teardown"));

        // Unsupported entries take no teardown pin.
        let bad = GOOD.replace(
            "    reason: moto has no message move tasks",
            "    teardown: x\n    reason: moto has no message move tasks",
        );
        assert!(parse_profile("p.yaml", &bad).is_err());
    }

    #[test]
    fn a_pinned_divergence_explains_failures_at_its_step_only() {
        let p = parse_profile("p.yaml", GOOD).unwrap();
        let moto = finding(
            2,
            "expected success, got ReceiptHandleIsInvalid",
            400,
            Some("ReceiptHandleIsInvalid"),
        );
        assert_eq!(
            apply(&p, failed_with(vec![moto.clone()])).verdict,
            Verdict::KnownDivergence
        );
        let kept = apply(
            &p,
            failed_with(vec![moto, finding(4, "expected 1 message(s)", 200, None)]),
        );
        assert_eq!(kept.verdict, Verdict::Fail);
        assert!(
            kept.profile_note
                .unwrap()
                .contains("failed elsewhere: step 5")
        );
        let bad = GOOD.replace("    step: 3\n", "    step: 0\n");
        assert!(parse_profile("p.yaml", &bad).is_err());
    }

    #[test]
    fn a_different_answer_at_the_pinned_step_is_still_a_failure() {
        let p = parse_profile("p.yaml", GOOD).unwrap();
        let other = finding(
            2,
            "expected success, got InvalidParameterValue",
            400,
            Some("InvalidParameterValue"),
        );
        let kept = apply(&p, failed_with(vec![other]));
        assert_eq!(kept.verdict, Verdict::Fail);
        let note = kept.profile_note.unwrap();
        assert!(note.contains("failed differently there"), "{note}");
        assert!(note.contains("400 ReceiptHandleIsInvalid"), "{note}");
        // A success where the profile pins a refusal is different too.
        let ok = finding(2, "expected error X, but the call succeeded", 200, None);
        assert_eq!(apply(&p, failed_with(vec![ok])).verdict, Verdict::Fail);
    }

    #[test]
    fn answers_match_either_name_of_an_error_and_findings_by_text() {
        let by_shape = GOOD.replace(
            "answer: {status: 400, code: ReceiptHandleIsInvalid}",
            "answer: {code: QueueDoesNotExist}\n    finding: could not find",
        );
        let p = parse_profile("p.yaml", &by_shape).unwrap();
        let legacy = finding(
            2,
            "expected error X, got it: could not find DLQ",
            400,
            Some("AWS.SimpleQueueService.NonExistentQueue"),
        );
        assert_eq!(
            apply(&p, failed_with(vec![legacy.clone()])).verdict,
            Verdict::KnownDivergence
        );
        let mut unsaid = legacy;
        unsaid.message = "step 3 (delete): something else".into();
        assert_eq!(apply(&p, failed_with(vec![unsaid])).verdict, Verdict::Fail);
    }

    #[test]
    fn apply_maps_known_divergences() {
        let p = parse_profile("p.yaml", GOOD).unwrap();
        let failed = apply(
            &p,
            failed_with(vec![finding(2, "x", 400, Some("ReceiptHandleIsInvalid"))]),
        );
        assert_eq!(failed.verdict, Verdict::KnownDivergence);
        assert_eq!(
            failed.profile_note.as_deref(),
            Some(
                "moto answers ReceiptHandleIsInvalid with a different message (https://github.com/getmoto/moto/blob/master/moto/sqs/exceptions.py)"
            )
        );
        let passed = apply(&p, end("stale-handle-delete-after-lapse", Verdict::Pass));
        assert_eq!(passed.verdict, Verdict::Pass);
        assert_eq!(passed.profile_note.as_deref(), Some(NO_LONGER_OBSERVED));
        let errored = apply(&p, end("stale-handle-delete-after-lapse", Verdict::Error));
        assert_eq!(
            (errored.verdict, errored.profile_note),
            (Verdict::Error, None)
        );
        let other = apply(&p, end("something-else", Verdict::Fail));
        assert_eq!((other.verdict, other.profile_note), (Verdict::Fail, None));
    }

    /// A case-level pin (a rate) with a teardown pin does not explain a case the run's stop
    /// errored: the stop's finding names no step, as a rate's does.
    #[test]
    fn a_case_level_pin_does_not_explain_a_stop() {
        let text = GOOD.replace("    step: 3\n", "    step: case\n").replace(
            "    answer: {status: 400, code: ReceiptHandleIsInvalid}",
            "    finding: \"rate of\"\n    teardown: \"no response\"",
        );
        let p = parse_profile("p.yaml", &text).unwrap();
        let stepless = |message: &str, teardown: bool| Finding {
            step: None,
            line: 5,
            message: message.into(),
            status: None,
            code: None,
            teardown,
        };
        let mut errored = end("stale-handle-delete-after-lapse", Verdict::Error);
        errored.findings = vec![
            stepless("rate of observed_redelivery in 3 of 3 trials", false),
            stepless(
                "the target was lost before the case finished: no response",
                false,
            ),
            stepless("failed to delete queue q (in us-east-1): no response", true),
        ];
        let kept = apply(&p, errored.clone());
        assert_eq!(kept.verdict, Verdict::Error);
        assert!(kept.profile_note.unwrap().contains("failed elsewhere"));
        // The same findings on a failed case (no stop) are the divergence.
        errored.verdict = Verdict::Fail;
        errored.findings.remove(1);
        assert_eq!(apply(&p, errored).verdict, Verdict::KnownDivergence);
    }

    #[test]
    fn unsupported_cases_get_an_unsupported_end() {
        let p = parse_profile("p.yaml", GOOD).unwrap();
        let e = unsupported_end(&p, "r", "s.yaml", "move-task-start", "t").unwrap();
        assert_eq!(e.verdict, Verdict::Unsupported);
        assert_eq!(
            e.reason,
            "not run: unsupported on target profile `moto`: moto has no message move tasks"
        );
        assert!(unsupported_end(&p, "r", "s.yaml", "other", "t").is_none());
    }

    #[test]
    fn changes_sort_cases_against_the_profile() {
        let p = parse_profile("p.yaml", GOOD).unwrap();
        let ends = vec![
            apply(&p, end("stale-handle-delete-after-lapse", Verdict::Pass)),
            apply(&p, end("new-bug", Verdict::Fail)),
            end("fine", Verdict::Pass),
            unsupported_end(&p, "r", "s", "move-task-start", "t").unwrap(),
        ];
        let c = changes(&ends);
        assert_eq!(
            c.no_longer_observed,
            vec!["stale-handle-delete-after-lapse"]
        );
        assert_eq!(c.newly_failing, vec!["new-bug"]);
        assert_eq!(c.unsupported, vec!["move-task-start"]);
        assert!(c.confirmed.is_empty());
        let text = c.render("moto");
        assert!(text.starts_with("target profile `moto`: 0 known divergence(s) observed, 1 no longer observed, 1 failing outside the profile, 1 unsupported\n"), "{text}");
        assert!(text.contains("    new-bug\n"), "{text}");
    }
}
