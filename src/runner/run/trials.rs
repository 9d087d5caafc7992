//! How many trials a case runs, and the trials of one multi-trial case while they run: which
//! finished with what, which will not run, and when the case can be closed.

use crate::runner::schedule::PlannedCase;
use chrono::{DateTime, Utc};
use sqsprobe_core::classify::Judgement;
use sqsprobe_core::evidence::format::CaseEnd;
use sqsprobe_core::suite::model::Case;

/// How many trials `case` runs: the larger of `--trials` and its own `trials:` (the flag is
/// a floor: it never lowers a case's own count, which its rate may need).
pub(crate) fn trials_of(case: &Case, cli: Option<u32>) -> u32 {
    cli.map_or(case.trials, |n| n.max(case.trials)).max(1)
}

/// What one trial came to: its `trial_end` and judgement, or why its task failed.
pub(super) type TrialResult = Result<(CaseEnd, Judgement), String>;

/// The trials of one multi-trial case while they run.
pub(super) struct TrialSet {
    pub n: u32,
    pub planned: PlannedCase,
    /// By trial (index k − 1): what it came to, once it finished.
    pub results: Vec<Option<TrialResult>>,
    /// Trials that will not run (the run stopped before them).
    pub not_run: u32,
    /// When the case's one `case_start` went out, before its first trial; `None` until then.
    pub started_at: Option<DateTime<Utc>>,
}

impl TrialSet {
    pub(super) fn new(n: u32, planned: PlannedCase) -> TrialSet {
        TrialSet {
            n,
            planned,
            results: (0..n).map(|_| None).collect(),
            not_run: 0,
            started_at: None,
        }
    }

    /// Notes that a trial starts at `now`: `true` for the first, whose start is the case's.
    pub(super) fn start(&mut self, now: DateTime<Utc>) -> bool {
        let first = self.started_at.is_none();
        if first {
            self.started_at = Some(now);
        }
        first
    }

    /// Trial `trial` (1-based) finished with `result`.
    pub(super) fn done(&mut self, trial: u32, result: TrialResult) {
        if let Some(slot) = self.results.get_mut((trial as usize).wrapping_sub(1)) {
            *slot = Some(result);
        }
    }

    /// One more trial will not run: the run stopped before it.
    pub(super) fn skip_one(&mut self) {
        self.not_run += 1;
    }

    /// No trial will start any more: every one not finished by now will not run. A case none
    /// of whose trials started stays unclosed, like any case that did not start.
    pub(super) fn none_left(&mut self) {
        if self.started_at.is_some() {
            self.not_run = self.n - self.finished();
        }
    }

    /// Whether every trial will not run and none started: the case was not run at all.
    pub(super) fn never_ran(&self) -> bool {
        self.started_at.is_none() && self.finished() == 0 && self.not_run >= self.n
    }

    pub(super) fn finished(&self) -> u32 {
        self.results.iter().filter(|r| r.is_some()).count() as u32
    }

    /// Whether its pooled `case_end` can be written: every trial finished or will not run,
    /// and at least one started.
    pub(super) fn is_complete(&self) -> bool {
        self.finished() + self.not_run >= self.n
            && (self.started_at.is_some() || self.finished() > 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn case(trials: u32) -> Case {
        let src = format!(
            "cases:\n  - id: c\n    behaviour: b\n    source: s\n    trials: {trials}\n    \
             steps:\n      - sleep: 1s\n"
        );
        let suite = sqsprobe_core::suite::parse_suite(
            "t.yaml",
            &src,
            &sqsprobe_core::suite::Limits::default(),
        )
        .expect("a valid suite");
        suite.cases.into_iter().next().expect("one case")
    }

    /// `--trials` is a floor: it never lowers a case's own larger `trials:`.
    #[test]
    fn the_trials_flag_never_lowers_a_cases_own_count() {
        assert_eq!(trials_of(&case(15), Some(5)), 15);
        assert_eq!(trials_of(&case(1), Some(5)), 5);
        assert_eq!(trials_of(&case(15), None), 15);
        assert_eq!(trials_of(&case(1), None), 1);
    }

    #[test]
    fn a_set_closes_once_every_trial_finished_or_will_not_run() {
        let planned = PlannedCase {
            suite: "t.yaml".into(),
            case: case(3),
        };
        let mut set = TrialSet::new(3, planned.clone());
        // Stopped before any trial started: nothing to pool, a case never run.
        set.skip_one();
        set.skip_one();
        assert!(!set.never_ran());
        set.skip_one();
        assert!(!set.is_complete());
        assert!(set.never_ran());

        let mut set = TrialSet::new(3, planned);
        assert!(set.start(Utc::now()));
        assert!(!set.start(Utc::now()));
        set.done(1, Err("a harness bug".into()));
        // A trial number out of range is ignored, never a panic.
        set.done(0, Err("none".into()));
        set.done(9, Err("none".into()));
        assert_eq!(set.finished(), 1);
        assert!(!set.is_complete());
        set.none_left();
        assert_eq!(set.not_run, 2);
        assert!(set.is_complete());
        assert!(!set.never_ran());
    }
}
