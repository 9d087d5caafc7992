//! Verdicts: combining what a case found into pass / fail / inconclusive / error.
//!
//! Jepsen's rule, extended by one value: a failed expectation beats a broken harness (it is a
//! finding that stands whatever happened later), which beats not knowing, which beats a pass.

use crate::evidence::format::Verdict;

use super::stop::StopReason;

/// What went wrong in a case, gathered while it ran.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct VerdictFacts {
    /// An expectation did not hold (a definite response that differs from the suite).
    pub failed: bool,
    /// The harness or target broke: setup failed, teardown failed, a required value is missing.
    pub errored: bool,
    /// Something could not be decided: throttling, no response, a cut observation window.
    pub inconclusive: bool,
}

/// The case verdict.
pub fn verdict(facts: &VerdictFacts) -> Verdict {
    if facts.failed {
        Verdict::Fail
    } else if facts.errored {
        Verdict::Error
    } else if facts.inconclusive {
        Verdict::Inconclusive
    } else {
        Verdict::Pass
    }
}

/// The run's exit code from its case verdicts (see `docs/exit-codes.md`).
pub fn exit_code<'a>(verdicts: impl IntoIterator<Item = &'a Verdict>) -> i32 {
    use sqsprobe_facts::exit_code::*;
    let worst = verdicts.into_iter().copied().max();
    match worst {
        Some(Verdict::Fail) => EXPECTATION_FAILED,
        Some(Verdict::Error) => RUNTIME_ERROR,
        Some(Verdict::Inconclusive) => INCONCLUSIVE,
        Some(Verdict::Pass | Verdict::Unsupported | Verdict::KnownDivergence) | None => OK,
    }
}

/// The exit code of a run that ended with `verdicts` after `stop`, the greatest reason it
/// stopped for (see `docs/exit-codes.md`). An interruption exits 130 and a spent budget 5
/// whatever the finished cases said: they are the ones the cut let finish (the early
/// finishers), a sample it chose, not the run's answer. A broken target leaves the answer to
/// the verdicts, where its cut cases are errors and a failure found before it still stands.
pub fn run_exit_code<'a>(
    stop: Option<&StopReason>,
    verdicts: impl IntoIterator<Item = &'a Verdict>,
) -> i32 {
    match stop {
        Some(StopReason::Interrupted) => sqsprobe_facts::exit_code::INTERRUPTED,
        Some(StopReason::Budget(_)) => sqsprobe_facts::exit_code::INCONCLUSIVE,
        Some(
            StopReason::Deadline(_) | StopReason::CredentialsRefused(_) | StopReason::TargetLost(_),
        )
        | None => exit_code(verdicts),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn facts(failed: bool, errored: bool, inconclusive: bool) -> VerdictFacts {
        VerdictFacts {
            failed,
            errored,
            inconclusive,
        }
    }

    #[test]
    fn fail_beats_error_beats_inconclusive_beats_pass() {
        assert_eq!(verdict(&facts(true, true, true)), Verdict::Fail);
        assert_eq!(verdict(&facts(false, true, true)), Verdict::Error);
        assert_eq!(verdict(&facts(false, false, true)), Verdict::Inconclusive);
        assert_eq!(verdict(&facts(false, false, false)), Verdict::Pass);
    }

    #[test]
    fn exit_codes_follow_the_worst_verdict() {
        use sqsprobe_facts::exit_code::*;
        assert_eq!(exit_code(&[]), OK);
        assert_eq!(exit_code(&[Verdict::Pass, Verdict::KnownDivergence]), OK);
        assert_eq!(exit_code(&[Verdict::Unsupported, Verdict::Pass]), OK);
        assert_eq!(
            exit_code(&[Verdict::Pass, Verdict::Inconclusive]),
            INCONCLUSIVE
        );
        assert_eq!(
            exit_code(&[Verdict::Inconclusive, Verdict::Error]),
            RUNTIME_ERROR
        );
        assert_eq!(
            exit_code(&[Verdict::Error, Verdict::Fail, Verdict::Pass]),
            EXPECTATION_FAILED
        );
    }

    #[test]
    fn a_run_exits_with_its_stop_when_the_stop_decides_and_else_with_its_verdicts() {
        use sqsprobe_facts::exit_code::*;
        let failed = [Verdict::Pass, Verdict::Fail];
        assert_eq!(
            run_exit_code(Some(&StopReason::Interrupted), &failed),
            INTERRUPTED
        );
        assert_eq!(
            run_exit_code(Some(&StopReason::Budget("b".into())), &failed),
            INCONCLUSIVE
        );
        assert_eq!(
            run_exit_code(Some(&StopReason::TargetLost("t".into())), &failed),
            EXPECTATION_FAILED
        );
        assert_eq!(
            run_exit_code(
                Some(&StopReason::CredentialsRefused("c".into())),
                &[Verdict::Error]
            ),
            RUNTIME_ERROR
        );
        assert_eq!(run_exit_code(None, &[Verdict::Pass]), OK);
    }
}
