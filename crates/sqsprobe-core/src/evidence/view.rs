//! One way to read a run: evidence records grouped into the run and its cases.
//!
//! Every consumer of evidence (the reports, the conformance matrix, baselines, the CLI) reads
//! records through this view. Records are grouped by case id, cases come in plan order
//! (`run_start.cases`, whatever order they ran in), and every case gets a [`CaseState`]: finished with a verdict, started but
//! without a `case_end` (the run was interrupted while it ran), or selected in `run_start`
//! but never started. Nothing is inferred beyond that: a case without `case_end` has no
//! verdict, and consumers say so rather than guess one.

use super::format::{
    Call, CaseEnd, CaseFactsRecord, CaseStart, Completion, DenyEnd, Record, RunEnd, RunStart,
    StepEnd, Trials, Verdict,
};
use std::collections::HashMap;

/// Where a case got to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CaseState {
    /// A `case_end` was written: the case has a verdict.
    Finished(Verdict),
    /// A `case_start` (or calls) but no `case_end`: the run stopped while it ran.
    DidNotFinish,
    /// Listed in `run_start.cases` but never started.
    NotStarted,
}

impl CaseState {
    /// Upper-case label used by the terminal and as badge text.
    pub fn label(self) -> &'static str {
        match self {
            CaseState::Finished(Verdict::Pass) => "PASS",
            CaseState::Finished(Verdict::KnownDivergence) => "KNOWN-DIVERGENCE",
            CaseState::Finished(Verdict::Unsupported) => "UNSUPPORTED",
            CaseState::Finished(Verdict::Inconclusive) => "INCONCLUSIVE",
            CaseState::Finished(Verdict::Error) => "ERROR",
            CaseState::Finished(Verdict::Fail) => "FAIL",
            CaseState::DidNotFinish => "DID-NOT-FINISH",
            CaseState::NotStarted => "NOT-STARTED",
        }
    }

    /// Lower-case word for prose and tables.
    pub fn word(self) -> &'static str {
        match self {
            CaseState::Finished(v) => v.as_str(),
            CaseState::DidNotFinish => "did not finish",
            CaseState::NotStarted => "not started",
        }
    }

    /// States that get a details section: anything that is neither passing nor deliberately
    /// not run (never started, or unsupported on the target profile).
    pub fn needs_details(self) -> bool {
        !self.is_passing()
            && !matches!(
                self,
                CaseState::NotStarted | CaseState::Finished(Verdict::Unsupported)
            )
    }

    /// How bad a state is for a "did not pass" list, worst first (fail, error, did not
    /// finish, inconclusive, known divergence), or `None` when it is not listed there. The
    /// HTML report and the Markdown summary both open with that list.
    pub fn attention(self) -> Option<u8> {
        match self {
            CaseState::Finished(Verdict::Fail) => Some(0),
            CaseState::Finished(Verdict::Error) => Some(1),
            CaseState::DidNotFinish => Some(2),
            CaseState::Finished(Verdict::Inconclusive) => Some(3),
            CaseState::Finished(Verdict::KnownDivergence) => Some(4),
            _ => None,
        }
    }

    /// Passing states: `pass` and `known_divergence`.
    pub fn is_passing(self) -> bool {
        matches!(
            self,
            CaseState::Finished(Verdict::Pass | Verdict::KnownDivergence)
        )
    }
}

/// One case with everything recorded about it.
#[derive(Debug)]
pub struct CaseView<'a> {
    pub id: &'a str,
    /// Suite path; `None` only for a case that never started (`run_start` lists ids only).
    pub suite: Option<&'a str>,
    pub start: Option<&'a CaseStart>,
    pub calls: Vec<&'a Call>,
    /// Its finished steps, in order (files written before `step` records existed have none).
    pub steps: Vec<&'a StepEnd>,
    /// A multi-trial case's `trial_end`s, in the order they finished.
    pub trials: Vec<&'a CaseEnd>,
    /// Its `deny` steps' records, in the order they were lifted.
    pub denies: Vec<&'a DenyEnd>,
    /// The facts it was judged on: one `facts` record, or one a trial (absent in files
    /// written before they were recorded).
    pub facts: Vec<&'a CaseFactsRecord>,
    pub end: Option<&'a CaseEnd>,
    pub state: CaseState,
}

impl<'a> CaseView<'a> {
    /// Line of the case's `id:` in its suite, when it started.
    pub fn line(&self) -> Option<u32> {
        self.start.map(|s| s.line)
    }

    /// `suite.yaml:12` for the case's `id:` line, or the suite alone, or nothing.
    pub fn location(&self) -> String {
        match (self.suite, self.start) {
            (Some(suite), Some(start)) => format!("{suite}:{}", start.line),
            (Some(suite), None) => suite.to_string(),
            (None, _) => String::new(),
        }
    }

    /// Where to look first: the line of the first finding (the step that failed), else the
    /// case's `id:` line.
    pub fn first_finding_location(&self) -> String {
        match (self.suite, self.end.and_then(|e| e.findings.first())) {
            (Some(suite), Some(finding)) => format!("{suite}:{}", finding.line),
            _ => self.location(),
        }
    }

    /// The one-sentence reason: the verdict's, or what the interruption left.
    pub fn reason(&self) -> String {
        match (self.end, self.state) {
            (Some(end), _) => end.reason.clone(),
            // Interrupted, or stopped at its reachability check: either way, before this case.
            (None, CaseState::NotStarted) => "not started (the run stopped before it)".to_string(),
            (None, _) => "did not finish (run interrupted)".to_string(),
        }
    }

    /// Duration in ms: the recorded one, else case start to the end of the last call.
    pub fn duration_ms(&self) -> Option<u64> {
        if let Some(end) = self.end {
            return Some(end.duration_ms);
        }
        let start = parse_time(&self.start?.started_at)?;
        let last = self
            .calls
            .iter()
            .filter_map(|c| parse_time(&c.ended_at))
            .max()?;
        u64::try_from((last - start).num_milliseconds()).ok()
    }

    /// The case's time zero: a trial's own start (its `trial_end`), else the `case_start`,
    /// else its earliest call or step.
    pub fn origin(&self) -> Option<chrono::DateTime<chrono::FixedOffset>> {
        let trial_start = self
            .end
            .filter(|e| e.trial.is_some())
            .map(|e| &e.started_at);
        trial_start
            .or(self.start.map(|s| &s.started_at))
            .and_then(|t| parse_time(t))
            .or_else(|| {
                let calls = self.calls.iter().map(|c| c.started_at.as_str());
                let steps = self.steps.iter().map(|s| s.started_at.as_str());
                calls.chain(steps).filter_map(parse_time).min()
            })
    }

    /// A multi-trial case's trials pooled (`case_end.trials`), once it has ended.
    pub fn tally(&self) -> Option<&Trials> {
        self.end?.trials.as_ref()
    }

    /// One trial (1-based) of a multi-trial case, as a case of its own: the calls and steps
    /// tagged with it, and its `trial_end` as the end (`None` if it did not finish).
    pub fn trial(&self, trial: u32) -> CaseView<'a> {
        let end = self.trials.iter().copied().find(|e| e.trial == Some(trial));
        CaseView {
            id: self.id,
            suite: self.suite,
            start: self.start,
            calls: self
                .calls
                .iter()
                .copied()
                .filter(|c| c.trial == Some(trial))
                .collect(),
            steps: self
                .steps
                .iter()
                .copied()
                .filter(|s| s.trial == Some(trial))
                .collect(),
            facts: self
                .facts
                .iter()
                .copied()
                .filter(|f| f.trial == Some(trial))
                .collect(),
            trials: Vec::new(),
            denies: self
                .denies
                .iter()
                .copied()
                .filter(|d| d.trial == Some(trial))
                .collect(),
            end,
            state: match end {
                Some(e) => CaseState::Finished(e.verdict),
                None => CaseState::DidNotFinish,
            },
        }
    }

    /// The `step` record of the step with this 0-based index.
    pub fn step(&self, index: usize) -> Option<&StepEnd> {
        self.steps.iter().copied().find(|s| s.step == index)
    }

    /// Findings as `(suite:line, message)`.
    pub fn findings(&self) -> Vec<(String, &str)> {
        let Some(end) = self.end else {
            return Vec::new();
        };
        end.findings
            .iter()
            .map(|f| (format!("{}:{}", end.suite, f.line), f.message.as_str()))
            .collect()
    }
}

/// Case counts by state. `passed` counts `pass` only; known divergences are counted apart
/// (and also pass, in JUnit terms).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Totals {
    pub pass: usize,
    pub known_divergence: usize,
    /// Not run: the target profile says the target cannot run them.
    pub unsupported: usize,
    pub inconclusive: usize,
    pub error: usize,
    pub fail: usize,
    pub did_not_finish: usize,
    pub not_started: usize,
    /// 1 when the run stopped at its reachability check (see [`RunView::unreachable`]): an
    /// error of the run itself, counted with the errors.
    pub unreachable: usize,
}

impl Totals {
    /// The canonical totals line: `3 passed, 1 failed, 2 inconclusive, 0 errors`.
    ///
    /// Known divergences count as passed; cases that did not finish, and a failed
    /// reachability check, count as errors, as in JUnit. Each is spelled out by
    /// [`Totals::notes`].
    pub fn line(&self) -> String {
        let errors = self.errors();
        format!(
            "{} passed, {} failed, {} inconclusive, {errors} {}",
            self.pass + self.known_divergence,
            self.fail,
            self.inconclusive,
            if errors == 1 { "error" } else { "errors" }
        )
    }

    /// Errors as [`Totals::line`] counts them.
    pub fn errors(&self) -> usize {
        self.error + self.did_not_finish + self.unreachable
    }

    /// Clarifications of [`Totals::line`], empty when there is nothing to clarify.
    pub fn notes(&self) -> Vec<String> {
        let mut notes = Vec::new();
        if self.known_divergence > 0 {
            notes.push(format!(
                "{} of the passes {} a known divergence of the target profile",
                self.known_divergence,
                if self.known_divergence == 1 {
                    "is"
                } else {
                    "are"
                }
            ));
        }
        if self.unsupported > 0 {
            notes.push(format!(
                "{} {} not run: unsupported by the target profile or the protocol",
                self.unsupported,
                if self.unsupported == 1 {
                    "case was"
                } else {
                    "cases were"
                }
            ));
        }
        if self.unreachable > 0 {
            notes.push(
                "1 of the errors is the reachability check: the target could not be reached, \
                 so no case was run"
                    .to_string(),
            );
        }
        if self.did_not_finish > 0 {
            notes.push(format!(
                "{} of the errors did not finish: the run was interrupted",
                self.did_not_finish
            ));
        }
        if self.not_started > 0 {
            notes.push(format!(
                "{} selected {} not started",
                self.not_started,
                if self.not_started == 1 {
                    "case was"
                } else {
                    "cases were"
                }
            ));
        }
        notes
    }
}

/// A run: its header and footer records and its cases in plan order.
#[derive(Debug)]
pub struct RunView<'a> {
    pub start: Option<&'a RunStart>,
    pub end: Option<&'a RunEnd>,
    /// Calls made for the run rather than for a case (`case` empty): the reachability check.
    pub calls: Vec<&'a Call>,
    pub cases: Vec<CaseView<'a>>,
}

impl<'a> RunView<'a> {
    /// Groups `records` by case. Cases come in plan order (`run_start.cases`); cases the plan
    /// does not list (or every case, without a `run_start`) follow in the order they appear.
    pub fn new(records: &'a [Record]) -> Self {
        let mut run = RunView {
            start: None,
            end: None,
            calls: Vec::new(),
            cases: Vec::new(),
        };
        let mut index: HashMap<&'a str, usize> = HashMap::new();
        for record in records {
            match record {
                Record::RunStart(r) => run.start = Some(r),
                Record::RunEnd(r) => run.end = Some(r),
                Record::CaseStart(r) => {
                    let case = run.case_mut(&mut index, &r.case);
                    case.start = Some(r);
                    case.suite = Some(&r.suite);
                }
                Record::Call(r) if r.case.is_empty() => run.calls.push(r),
                Record::Call(r) => run.case_mut(&mut index, &r.case).calls.push(r),
                Record::Step(r) => run.case_mut(&mut index, &r.case).steps.push(r),
                Record::TrialEnd(r) => run.case_mut(&mut index, &r.case).trials.push(r),
                Record::Deny(r) => run.case_mut(&mut index, &r.case).denies.push(r),
                Record::Facts(r) => run.case_mut(&mut index, &r.case).facts.push(r),
                Record::CaseEnd(r) => {
                    let case = run.case_mut(&mut index, &r.case);
                    case.end = Some(r);
                    case.suite = case.suite.or(Some(&r.suite));
                }
            }
        }
        for case in &mut run.cases {
            case.state = match case.end {
                Some(end) => CaseState::Finished(end.verdict),
                None => CaseState::DidNotFinish,
            };
        }
        if let Some(start) = run.start {
            let mut plan: HashMap<&str, usize> = HashMap::new();
            for (at, id) in start.cases.iter().enumerate() {
                plan.entry(id).or_insert(at);
                if !index.contains_key(id.as_str()) {
                    index.insert(id, run.cases.len());
                    run.cases.push(CaseView {
                        id,
                        suite: None,
                        start: None,
                        calls: Vec::new(),
                        steps: Vec::new(),
                        trials: Vec::new(),
                        denies: Vec::new(),
                        facts: Vec::new(),
                        end: None,
                        state: CaseState::NotStarted,
                    });
                }
            }
            // Stable: cases the plan does not list keep their order, after the planned ones.
            run.cases
                .sort_by_key(|c| plan.get(c.id).copied().unwrap_or(usize::MAX));
        }
        run
    }

    fn case_mut(&mut self, index: &mut HashMap<&'a str, usize>, id: &'a str) -> &mut CaseView<'a> {
        let at = *index.entry(id).or_insert_with(|| {
            self.cases.push(CaseView {
                id,
                suite: None,
                start: None,
                calls: Vec::new(),
                steps: Vec::new(),
                trials: Vec::new(),
                denies: Vec::new(),
                facts: Vec::new(),
                end: None,
                state: CaseState::DidNotFinish,
            });
            self.cases.len() - 1
        });
        &mut self.cases[at]
    }

    /// The case with this id.
    pub fn case(&self, id: &str) -> Option<&CaseView<'a>> {
        self.cases.iter().find(|c| c.id == id)
    }

    /// Every `case_end`, in plan order.
    pub fn case_ends(&self) -> impl Iterator<Item = &'a CaseEnd> + '_ {
        self.cases.iter().filter_map(|c| c.end)
    }

    /// The run id, from whichever record has it.
    pub fn run_id(&self) -> &str {
        if let Some(start) = self.start {
            return &start.run_id;
        }
        if let Some(end) = self.end {
            return &end.run_id;
        }
        self.cases
            .iter()
            .find_map(|c| c.start.map(|s| s.run_id.as_str()))
            .unwrap_or("unknown")
    }

    /// Where a `--target aws` run sent its calls instead of AWS (`AWS_ENDPOINT_URL`, a
    /// profile's `endpoint_url`, `--endpoint-url`), or `None`: such a run is no evidence of
    /// what AWS does, and every report says so.
    pub fn redirected(&self) -> Option<&'a str> {
        let start = self.start?;
        sqsprobe_facts::sqs::endpoint::redirected_to(&start.target, start.endpoint.as_deref())
    }

    /// True when the run has no `run_end`, or its `run_end` says it was interrupted.
    pub fn interrupted(&self) -> bool {
        self.end.is_none_or(|e| e.interrupted)
    }

    /// The failed reachability check, when the run stopped at it: the last call made for the
    /// run rather than a case, if it did not complete `ok`. No case runs after it fails.
    pub fn unreachable(&self) -> Option<&'a Call> {
        self.calls
            .last()
            .copied()
            .filter(|c| c.completion != Completion::Ok)
    }

    /// Why the run stopped at its reachability check, in one sentence, when it did.
    pub fn unreachable_reason(&self) -> Option<String> {
        let call = self.unreachable()?;
        let what = sqsprobe_facts::sqs::errors::describe_failure(
            call.error_code.as_deref().or(call.error_type.as_deref()),
            call.http_status,
            call.error_message.as_deref(),
            call.completion == Completion::Info,
        );
        let refused = [&call.error_code, &call.error_type]
            .into_iter()
            .flatten()
            .any(|c| sqsprobe_facts::sqs::errors::is_auth(c));
        let verb = if refused {
            "the target refused the run's credentials or permissions"
        } else {
            "the target could not be reached"
        };
        Some(format!("{verb}: {} failed: {what}", call.action))
    }

    /// True when the run ended on its own (a `run_end`, not interrupted), got past its
    /// reachability check, and every case it selected has a `case_end`: a run complete enough
    /// to stand as a reference.
    pub fn finished(&self) -> bool {
        self.why_unfinished().is_none()
    }

    /// Why the run is not [`finished`](Self::finished), in a few words, or `None` when it is.
    pub fn why_unfinished(&self) -> Option<String> {
        let unfinished = self.cases.iter().filter(|c| c.end.is_none()).count();
        let why = match self.end {
            _ if self.unreachable().is_some() => "it stopped at its reachability check",
            None => "it has no run_end (killed, or its evidence was cut short)",
            Some(end) if end.interrupted => "it was interrupted",
            Some(_) if unfinished > 0 => "",
            Some(_) => return None,
        };
        Some(match (why, unfinished) {
            (why, 0) => why.to_string(),
            ("", n) => format!("{n} case(s) have no case_end"),
            (why, n) => format!("{why}; {n} case(s) have no case_end"),
        })
    }

    /// Counts by state.
    pub fn totals(&self) -> Totals {
        let mut t = Totals::default();
        for case in &self.cases {
            match case.state {
                CaseState::Finished(Verdict::Pass) => t.pass += 1,
                CaseState::Finished(Verdict::KnownDivergence) => t.known_divergence += 1,
                CaseState::Finished(Verdict::Unsupported) => t.unsupported += 1,
                CaseState::Finished(Verdict::Inconclusive) => t.inconclusive += 1,
                CaseState::Finished(Verdict::Error) => t.error += 1,
                CaseState::Finished(Verdict::Fail) => t.fail += 1,
                CaseState::DidNotFinish => t.did_not_finish += 1,
                CaseState::NotStarted => t.not_started += 1,
            }
        }
        t.unreachable = usize::from(self.unreachable().is_some());
        t
    }

    /// Suite paths in `run_start` order, then any others in the order their cases appear.
    pub fn suites(&self) -> Vec<&'a str> {
        let mut suites: Vec<&str> = self
            .start
            .map(|s| s.suites.iter().map(String::as_str).collect())
            .unwrap_or_default();
        for case in &self.cases {
            if let Some(suite) = case.suite
                && !suites.contains(&suite)
            {
                suites.push(suite);
            }
        }
        suites
    }
}

/// Parses an RFC 3339 timestamp from the evidence.
pub fn parse_time(text: &str) -> Option<chrono::DateTime<chrono::FixedOffset>> {
    chrono::DateTime::parse_from_rfc3339(text).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evidence::fixtures::*;
    use crate::evidence::format::Phase;

    #[test]
    fn interrupted_run_keeps_every_case_with_an_honest_state() {
        let records = interrupted_run();
        let run = RunView::new(&records);
        let states: Vec<_> = run.cases.iter().map(|c| (c.id, c.state)).collect();
        assert_eq!(
            states,
            [
                ("done", CaseState::Finished(Verdict::Pass)),
                ("cut", CaseState::DidNotFinish),
                ("never", CaseState::NotStarted),
            ]
        );
        assert!(run.interrupted());
        assert_eq!(run.cases[1].duration_ms(), Some(900));
        assert_eq!(
            run.totals().line(),
            "1 passed, 0 failed, 0 inconclusive, 1 error"
        );
    }

    #[test]
    fn cases_come_in_plan_order_whatever_order_they_ran_in() {
        let mut records = vec![run_start(&["first", "second", "third"])];
        records.push(case_start("third", 30));
        records.push(case_start("second", 20));
        records.push(Record::CaseEnd(case_end(
            "second",
            Verdict::Pass,
            "ok",
            &[],
        )));
        records.push(case_start("stray", 40));
        records.push(Record::CaseEnd(case_end("third", Verdict::Fail, "no", &[])));
        let run = RunView::new(&records);
        let order: Vec<_> = run.cases.iter().map(|c| (c.id, c.state)).collect();
        assert_eq!(
            order,
            [
                ("first", CaseState::NotStarted),
                ("second", CaseState::Finished(Verdict::Pass)),
                ("third", CaseState::Finished(Verdict::Fail)),
                ("stray", CaseState::DidNotFinish),
            ]
        );
        let without_start = RunView::new(&records[1..]);
        let order: Vec<_> = without_start.cases.iter().map(|c| c.id).collect();
        assert_eq!(order, ["third", "second", "stray"]);
    }

    #[test]
    fn a_failed_reachability_check_is_the_runs_one_error_and_not_a_case() {
        let records = unreachable_run(&["a", "b"]);
        let run = RunView::new(&records);
        assert_eq!(run.calls.len(), 1);
        assert!(run.cases.iter().all(|c| c.state == CaseState::NotStarted));
        assert_eq!(
            run.unreachable_reason().as_deref(),
            Some(
                "the target could not be reached: ListQueues failed: no response: connection refused"
            )
        );
        let totals = run.totals();
        assert_eq!(totals.line(), "0 passed, 0 failed, 0 inconclusive, 1 error");
        assert_eq!(
            totals.notes()[0],
            "1 of the errors is the reachability check: the target could not be reached, so no case was run"
        );
        assert!(!run.interrupted());
        assert_eq!(
            run.why_unfinished().as_deref(),
            Some("it stopped at its reachability check; 2 case(s) have no case_end")
        );
    }

    #[test]
    fn a_passed_reachability_check_changes_nothing() {
        let mut records = full_run();
        records.insert(1, Record::Call(call("", Phase::Setup, "ListQueues", 0, 20)));
        let run = RunView::new(&records);
        assert_eq!(run.unreachable(), None);
        assert_eq!(run.cases.len(), 5);
        assert_eq!(run.totals().unreachable, 0);
        assert!(run.finished());
        assert_eq!(
            RunView::new(&interrupted_run()).why_unfinished().as_deref(),
            Some(
                "it has no run_end (killed, or its evidence was cut short); 2 case(s) have no case_end"
            )
        );
        let mut interrupted = interrupted_run();
        let Record::RunEnd(mut end) = run_end(sqsprobe_facts::exit_code::INTERRUPTED) else {
            unreachable!()
        };
        end.interrupted = true;
        interrupted.push(Record::RunEnd(end));
        assert_eq!(
            RunView::new(&interrupted).why_unfinished().as_deref(),
            Some("it was interrupted; 2 case(s) have no case_end")
        );
        let mut lost_case_end = full_run();
        lost_case_end.retain(|r| !matches!(r, Record::CaseEnd(e) if e.case == "broken"));
        assert_eq!(
            RunView::new(&lost_case_end).why_unfinished().as_deref(),
            Some("1 case(s) have no case_end")
        );
    }
}
