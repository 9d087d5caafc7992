//! The view every renderer reads: evidence records grouped into a run and its cases.
//!
//! Records are grouped by case id, cases keep the order in which they started, and every
//! case gets a [`CaseState`]: finished with a verdict, started but without a `case_end`
//! (the run was interrupted while it ran), or selected in `run_start` but never started.
//! Nothing is inferred beyond that: a case without `case_end` has no verdict, and the
//! renderers say so rather than guess one.

use crate::evidence::Record;
use crate::evidence::format::{Call, CaseEnd, CaseStart, Decision, RunEnd, RunStart, Verdict};
use crate::exit_code;

/// Where a case got to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum CaseState {
    /// A `case_end` was written: the case has a verdict.
    Finished(Verdict),
    /// A `case_start` (or calls) but no `case_end`: the run stopped while it ran.
    DidNotFinish,
    /// Listed in `run_start.cases` but never started.
    NotStarted,
}

impl CaseState {
    /// Upper-case label used by the terminal and as badge text.
    pub(crate) fn label(self) -> &'static str {
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
    pub(crate) fn word(self) -> &'static str {
        match self {
            CaseState::Finished(v) => v.as_str(),
            CaseState::DidNotFinish => "did not finish",
            CaseState::NotStarted => "not started",
        }
    }

    /// States that get a details section: anything that is neither passing nor deliberately
    /// not run (never started, or unsupported on the target profile).
    pub(crate) fn needs_details(self) -> bool {
        !self.is_passing()
            && !matches!(
                self,
                CaseState::NotStarted | CaseState::Finished(Verdict::Unsupported)
            )
    }

    /// Passing states: `pass` and `known_divergence`.
    pub(crate) fn is_passing(self) -> bool {
        matches!(
            self,
            CaseState::Finished(Verdict::Pass | Verdict::KnownDivergence)
        )
    }
}

/// One case with everything recorded about it.
#[derive(Debug)]
pub(crate) struct CaseView<'a> {
    pub id: &'a str,
    /// Suite path; `None` only for a case that never started (`run_start` lists ids only).
    pub suite: Option<&'a str>,
    pub start: Option<&'a CaseStart>,
    pub calls: Vec<&'a Call>,
    pub end: Option<&'a CaseEnd>,
    pub state: CaseState,
}

impl CaseView<'_> {
    /// `suite.yaml:12` for the case's `id:` line, or the suite alone, or nothing.
    pub(crate) fn location(&self) -> String {
        match (self.suite, self.start) {
            (Some(suite), Some(start)) => format!("{suite}:{}", start.line),
            (Some(suite), None) => suite.to_string(),
            (None, _) => String::new(),
        }
    }

    /// Where to look first: the line of the first finding (the step that failed), else the
    /// case's `id:` line.
    pub(crate) fn first_finding_location(&self) -> String {
        match (self.suite, self.end.and_then(|e| e.findings.first())) {
            (Some(suite), Some(finding)) => format!("{suite}:{}", finding.line),
            _ => self.location(),
        }
    }

    /// The one-sentence reason: the verdict's, or what the interruption left.
    pub(crate) fn reason(&self) -> String {
        match (self.end, self.state) {
            (Some(end), _) => end.reason.clone(),
            (None, CaseState::NotStarted) => "not started (run interrupted)".to_string(),
            (None, _) => "did not finish (run interrupted)".to_string(),
        }
    }

    /// Duration in ms: the recorded one, else case start to the end of the last call.
    pub(crate) fn duration_ms(&self) -> Option<u64> {
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

    /// Findings as `(suite:line, message)`.
    pub(crate) fn findings(&self) -> Vec<(String, &str)> {
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
pub(crate) struct Totals {
    pub pass: usize,
    pub known_divergence: usize,
    /// Not run: the target profile says the target cannot run them.
    pub unsupported: usize,
    pub inconclusive: usize,
    pub error: usize,
    pub fail: usize,
    pub did_not_finish: usize,
    pub not_started: usize,
}

impl Totals {
    /// The canonical totals line: `3 passed, 1 failed, 2 inconclusive, 0 errors`.
    ///
    /// Known divergences count as passed; cases that did not finish count as errors, as in
    /// JUnit. Both are spelled out by [`Totals::notes`].
    pub(crate) fn line(&self) -> String {
        format!(
            "{} passed, {} failed, {} inconclusive, {} {}",
            self.pass + self.known_divergence,
            self.fail,
            self.inconclusive,
            self.error + self.did_not_finish,
            if self.error + self.did_not_finish == 1 {
                "error"
            } else {
                "errors"
            }
        )
    }

    /// Clarifications of [`Totals::line`], empty when there is nothing to clarify.
    pub(crate) fn notes(&self) -> Vec<String> {
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

/// A run: its header and footer records and its cases in run order.
#[derive(Debug)]
pub(crate) struct RunView<'a> {
    pub start: Option<&'a RunStart>,
    pub end: Option<&'a RunEnd>,
    pub cases: Vec<CaseView<'a>>,
}

impl<'a> RunView<'a> {
    /// Groups `records` by case.
    pub(crate) fn new(records: &'a [Record]) -> Self {
        let mut run = RunView {
            start: None,
            end: None,
            cases: Vec::new(),
        };
        for record in records {
            match record {
                Record::RunStart(r) => run.start = Some(r),
                Record::RunEnd(r) => run.end = Some(r),
                Record::CaseStart(r) => {
                    let case = run.case_mut(&r.case);
                    case.start = Some(r);
                    case.suite = Some(&r.suite);
                }
                Record::Call(r) => run.case_mut(&r.case).calls.push(r),
                Record::CaseEnd(r) => {
                    let case = run.case_mut(&r.case);
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
            for id in &start.cases {
                if !run.cases.iter().any(|c| c.id == id) {
                    run.cases.push(CaseView {
                        id,
                        suite: None,
                        start: None,
                        calls: Vec::new(),
                        end: None,
                        state: CaseState::NotStarted,
                    });
                }
            }
        }
        run
    }

    fn case_mut(&mut self, id: &'a str) -> &mut CaseView<'a> {
        let at = match self.cases.iter().position(|c| c.id == id) {
            Some(at) => at,
            None => {
                self.cases.push(CaseView {
                    id,
                    suite: None,
                    start: None,
                    calls: Vec::new(),
                    end: None,
                    state: CaseState::DidNotFinish,
                });
                self.cases.len() - 1
            }
        };
        &mut self.cases[at]
    }

    /// The run id, from whichever record has it.
    pub(crate) fn run_id(&self) -> &str {
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

    /// True when the run has no `run_end`, or its `run_end` says it was interrupted.
    pub(crate) fn interrupted(&self) -> bool {
        self.end.is_none_or(|e| e.interrupted)
    }

    /// Counts by state.
    pub(crate) fn totals(&self) -> Totals {
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
        t
    }

    /// Suite paths in `run_start` order, then any others in the order their cases appear.
    pub(crate) fn suites(&self) -> Vec<&'a str> {
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

    /// What the exit code means, or that none was recorded.
    pub(crate) fn exit_meaning(&self) -> String {
        match self.end {
            Some(end) => format!("exit {}: {}", end.exit_code, exit_meaning(end.exit_code)),
            None => "no exit code recorded: the run was interrupted before run_end".to_string(),
        }
    }
}

/// The documented meaning of an exit code (see `crate::exit_code`).
pub(crate) fn exit_meaning(code: i32) -> &'static str {
    match code {
        exit_code::OK => "every case passed",
        exit_code::BAD_COMMAND_LINE => "the command line could not be understood",
        exit_code::INVALID_SUITE => "a suite file is invalid",
        exit_code::RUNTIME_ERROR => "the harness or the target broke",
        exit_code::EXPECTATION_FAILED => "at least one expectation did not hold",
        exit_code::INCONCLUSIVE => "nothing failed, but at least one case was inconclusive",
        _ => "not a documented sqsprobe exit code",
    }
}

/// `ACCEPT`, as the playbook writes decisions.
pub(crate) fn decision_name(d: Decision) -> &'static str {
    match d {
        Decision::Accept => "ACCEPT",
        Decision::Repair => "REPAIR",
        Decision::Hold => "HOLD",
        Decision::Reconcile => "RECONCILE",
    }
}

/// Parses an RFC 3339 timestamp from the evidence.
pub(crate) fn parse_time(text: &str) -> Option<chrono::DateTime<chrono::FixedOffset>> {
    chrono::DateTime::parse_from_rfc3339(text).ok()
}

/// `850 ms`, `12.3 s`.
pub(crate) fn format_ms(ms: u64) -> String {
    if ms < 1000 {
        format!("{ms} ms")
    } else {
        format!("{:.1} s", ms as f64 / 1000.0)
    }
}

/// Test helpers: small constructors for evidence records.
#[cfg(test)]
pub(crate) mod fixtures {
    use crate::evidence::Record;
    use crate::evidence::format::*;
    use std::collections::BTreeMap;

    pub const RUN: &str = "run-1";

    pub fn run_start(cases: &[&str]) -> Record {
        Record::RunStart(RunStart {
            format: FORMAT.to_string(),
            run_id: RUN.to_string(),
            sqsprobe_version: "0.1.0".to_string(),
            target: "embedded".to_string(),
            endpoint: Some("http://127.0.0.1:4566".to_string()),
            region: "us-east-1".to_string(),
            target_profile: Some("emulator".to_string()),
            protocol: "json".to_string(),
            started_at: "2025-01-01T00:00:00Z".to_string(),
            suites: vec!["suites/ack.yaml".to_string()],
            cases: cases.iter().map(|c| c.to_string()).collect(),
            emulator_chaos: None,
        })
    }

    pub fn case_start(case: &str, line: u32) -> Record {
        Record::CaseStart(CaseStart {
            run_id: RUN.to_string(),
            case: case.to_string(),
            suite: "suites/ack.yaml".to_string(),
            line,
            title: Some(format!("title of {case}")),
            tags: vec!["ack".to_string()],
            behaviour: "DeleteMessage with an old handle may succeed".to_string(),
            sources: vec![
                "https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_DeleteMessage.html".to_string(),
                "sqs-behaviours.md R2".to_string(),
            ],
            started_at: "2025-01-01T00:00:00Z".to_string(),
        })
    }

    /// A call `start_ms`..`end_ms` after 2025-01-01T00:00:00Z.
    pub fn call(case: &str, phase: Phase, action: &str, start_ms: u64, end_ms: u64) -> Call {
        Call {
            run_id: RUN.to_string(),
            case: case.to_string(),
            phase,
            step: Some(0),
            line: Some(20),
            action: action.to_string(),
            attempt_number: 1,
            retried: false,
            attempt: None,
            queue: Some("sqsprobe-q".to_string()),
            message_id: None,
            message: None,
            business_key: None,
            handle_digest: None,
            messages: Vec::new(),
            entries: Vec::new(),
            request_id: Some(format!("req-{start_ms}")),
            http_status: Some(200),
            error_code: None,
            error_type: None,
            sender_fault: None,
            error_message: None,
            completion: Completion::Ok,
            started_at: at(start_ms),
            ended_at: at(end_ms),
            latency_ms: (end_ms - start_ms) as f64,
        }
    }

    pub fn at(ms: u64) -> String {
        format!("2025-01-01T00:00:{:02}.{:03}Z", ms / 1000, ms % 1000)
    }

    pub fn received(label: &str, digest: &str, count: u32) -> MessageEvidence {
        MessageEvidence {
            message_id: format!("id-{label}"),
            message: Some(label.to_string()),
            business_key: Some("b-1".to_string()),
            handle_digest: Some(digest.to_string()),
            body_digest: Some("bd".repeat(32)),
            receive_count: Some(count),
            sequence_number: None,
            md5_ok: Some(true),
        }
    }

    pub fn case_end(
        case: &str,
        verdict: Verdict,
        reason: &str,
        findings: &[(u32, &str)],
    ) -> CaseEnd {
        CaseEnd {
            run_id: RUN.to_string(),
            case: case.to_string(),
            suite: "suites/ack.yaml".to_string(),
            verdict,
            reason: reason.to_string(),
            findings: findings
                .iter()
                .map(|(line, message)| Finding {
                    step: Some(1),
                    line: *line,
                    message: message.to_string(),
                })
                .collect(),
            classification: None,
            outcomes: Vec::new(),
            decision: None,
            window: None,
            receives: 0,
            deliveries: BTreeMap::new(),
            queues: vec![QueueCleanup {
                queue: "sqsprobe-q".to_string(),
                deleted: true,
            }],
            profile_note: None,
            started_at: at(0),
            ended_at: at(1500),
            duration_ms: 1500,
        }
    }

    pub fn run_end(exit_code: i32) -> Record {
        Record::RunEnd(RunEnd {
            run_id: RUN.to_string(),
            ended_at: at(5000),
            duration_ms: 5000,
            interrupted: false,
            totals: BTreeMap::new(),
            exit_code,
        })
    }

    /// A complete run: one pass with an observation, one fail, one inconclusive,
    /// one known divergence, one error.
    pub fn full_run() -> Vec<Record> {
        let ids = ["stale-ack", "old-handle", "no-window", "fifo-div", "broken"];
        let mut records = vec![run_start(&ids)];

        records.push(case_start("stale-ack", 10));
        let mut recv_a = call("stale-ack", Phase::Step, "ReceiveMessage", 100, 140);
        recv_a.attempt = Some("A".to_string());
        recv_a.messages = vec![received("m1", &"a1".repeat(32), 1)];
        let mut recv_b = call("stale-ack", Phase::Step, "ReceiveMessage", 1200, 1230);
        recv_b.attempt = Some("B".to_string());
        recv_b.messages = vec![received("m1", &"b2".repeat(32), 2)];
        let mut del = call("stale-ack", Phase::Step, "DeleteMessage", 1300, 1320);
        del.attempt = Some("B".to_string());
        del.message = Some("m1".to_string());
        del.handle_digest = Some("b2".repeat(32));
        let mut obs = call("stale-ack", Phase::Observe, "ReceiveMessage", 1400, 2400);
        obs.step = Some(3);
        obs.messages = vec![received("m1", &"c3".repeat(32), 3)];
        records.push(Record::Call(call(
            "stale-ack",
            Phase::Setup,
            "CreateQueue",
            0,
            50,
        )));
        records.extend([recv_a, recv_b, del, obs].map(Record::Call));
        records.push(Record::Call(call(
            "stale-ack",
            Phase::Teardown,
            "DeleteQueue",
            2450,
            2500,
        )));
        let mut end = case_end("stale-ack", Verdict::Pass, "every expectation held", &[]);
        end.classification = Some("observed_redelivery".to_string());
        end.decision = Some(Decision::Reconcile);
        end.outcomes = vec![MessageOutcome {
            message: "m1".to_string(),
            message_id: Some("id-m1".to_string()),
            class: "observed_redelivery".to_string(),
            reason: None,
            sightings: 1,
            deliveries: 3,
        }];
        end.window = Some(Window {
            step: 3,
            line: 40,
            planned_ms: 1000,
            elapsed_ms: 1000,
            receives_used: 1,
            receive_budget: 10,
            ended: "all_seen".to_string(),
            unknown_receives: 0,
        });
        end.receives = 3;
        end.deliveries = BTreeMap::from([("m1".to_string(), 3)]);
        end.duration_ms = 2500;
        records.push(Record::CaseEnd(end));

        records.push(case_start("old-handle", 50));
        let mut end = case_end(
            "old-handle",
            Verdict::Fail,
            "1 expectation did not hold",
            &[(61, "expected redelivery of m1, none within 2 s")],
        );
        end.classification = Some("observed_redelivery".to_string());
        end.decision = Some(Decision::Hold);
        records.push(Record::CaseEnd(end));

        records.push(case_start("no-window", 80));
        let end = case_end(
            "no-window",
            Verdict::Inconclusive,
            "observation throttled",
            &[(90, "receive budget exhausted")],
        );
        records.push(Record::CaseEnd(end));

        records.push(case_start("fifo-div", 100));
        let mut end = case_end(
            "fifo-div",
            Verdict::KnownDivergence,
            "differs as profiled",
            &[],
        );
        end.profile_note = Some("emulator: FIFO expiry not modelled".to_string());
        records.push(Record::CaseEnd(end));

        records.push(case_start("broken", 120));
        let end = case_end(
            "broken",
            Verdict::Error,
            "queue setup failed",
            &[(121, "CreateQueue returned 500")],
        );
        records.push(Record::CaseEnd(end));

        records.push(run_end(crate::exit_code::EXPECTATION_FAILED));
        records
    }

    /// An interrupted run: one finished case, one without `case_end`, one never started.
    pub fn interrupted_run() -> Vec<Record> {
        let mut records = vec![run_start(&["done", "cut", "never"])];
        records.push(case_start("done", 10));
        records.push(Record::CaseEnd(case_end("done", Verdict::Pass, "ok", &[])));
        records.push(case_start("cut", 30));
        records.push(Record::Call(call(
            "cut",
            Phase::Setup,
            "CreateQueue",
            0,
            40,
        )));
        records.push(Record::Call(call(
            "cut",
            Phase::Step,
            "SendMessage",
            100,
            900,
        )));
        records
    }
}

#[cfg(test)]
mod tests {
    use super::fixtures::*;
    use super::*;

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
}
