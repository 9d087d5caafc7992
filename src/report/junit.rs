//! JUnit XML report, written with `quick-junit` (nextest's writer).
//!
//! The mapping:
//! - the run is one `<testsuites>`, named `sqsprobe <run id>`;
//! - each suite file is one `<testsuite>` (name = suite path), carrying the run's properties:
//!   `run_id`, `target`, `endpoint`, `region`, `target_profile` (the last three only when
//!   recorded), `redirected` (the endpoint a `--target aws` run was sent to instead of AWS), `sqsprobe_version`, `partitions` (for a partition of a split run, or
//!   partitions merged) and `interrupted`;
//! - each case is one `<testcase>`: name = case id, classname = suite path, time = case
//!   duration, properties `verdict`, `classification` and `decision` when recorded;
//! - a multi-trial case also has a `trials` property and a `<system-out>` line with its
//!   tally: `k/N` per class with the 95% interval over every started trial (unknown ones
//!   counted both ways);
//! - verdict `fail` → `<failure>` (message = reason, text = one `suite:line: finding` per line);
//! - verdict `error` → `<error>` (same message and text);
//! - verdict `inconclusive` → `<skipped>` with the reason: never a pass;
//! - verdict `known_divergence` → passes, with a `known_divergence` property and a
//!   `<system-out>` naming the divergence;
//! - verdict `pass` → a plain `<testcase>`;
//! - verdict `unsupported` (the target profile says the target cannot run the case; it was
//!   not run) → `<skipped>` of type `unsupported` with the profile's reason;
//! - a case with no `case_end` → `<error>` "did not finish (run interrupted)";
//! - a case selected in `run_start` but never started → `<skipped>` "not started (the run
//!   stopped before it)", in a `<testsuite>` named `(not started)` since only its id is known;
//! - a failed reachability check (the run stopped before any case) → one `<testcase>` named
//!   `reachability check` in a `<testsuite>` named `(run)`, with an `<error>` of type
//!   `unreachable` whose message says what the target answered, or that it did not;
//! - what is wrong with the run as a whole, each one `<testcase>` in `(run)` with an `<error>`,
//!   so a CI dashboard that counts failures never shows such a run green: `interrupted` (a
//!   signal, or no `run_end`), `stopped` (a budget, a lost target, refused credentials:
//!   `run_end.halted`), `partial` (a merge that lacks partitions), `left_queues` (owned
//!   queues that may still be on the target);
//! - each case's `<testcase>` carries `file` (its suite file) and `line` (its `id:` line), so
//!   CI annotates the suite; within a suite, unsupported cases come last.

use super::wording::decision_name;
use quick_junit::{NonSuccessKind, Property, Report, TestCase, TestCaseStatus, TestSuite};
use sqsprobe_core::evidence::Record;
use sqsprobe_core::evidence::format::Verdict;
use sqsprobe_core::evidence::view::{CaseState, CaseView, RunView, parse_time};
use std::time::Duration;

/// Name of the `<testsuite>` holding cases that never started.
const NOT_STARTED_SUITE: &str = "(not started)";

/// Name of the `<testsuite>` holding the run's own failed reachability check.
const RUN_SUITE: &str = "(run)";

/// Renders the run as JUnit XML.
pub fn render(records: &[Record]) -> String {
    let run = RunView::new(records);
    let mut report = Report::new(format!("sqsprobe {}", run.run_id()));
    if let Some(start) = run.start
        && let Some(ts) = parse_time(&start.started_at)
    {
        report.set_timestamp(ts);
    }
    if let Some(end) = run.end {
        report.set_time(Duration::from_millis(end.duration_ms));
    }
    let properties = run_properties(&run);
    if let Some(reason) = run.unreachable_reason() {
        let mut status = TestCaseStatus::non_success(NonSuccessKind::Error);
        status.set_type("unreachable").set_message(reason);
        let mut check = TestCase::new("reachability check", status);
        check.set_classname(RUN_SUITE);
        if let Some(call) = run.unreachable() {
            if let Some(ts) = parse_time(&call.started_at) {
                check.set_timestamp(ts);
            }
            check.set_time(Duration::from_secs_f64(call.latency_ms.max(0.0) / 1000.0));
        }
        let mut suite = TestSuite::new(RUN_SUITE);
        suite.add_properties(properties.iter().cloned());
        suite.add_test_case(check);
        report.add_test_suite(suite);
    }

    let problems = run_problems(&run);
    if !problems.is_empty() {
        let mut suite = TestSuite::new(RUN_SUITE);
        suite.add_properties(properties.iter().cloned());
        for (ty, name, message) in problems {
            let mut status = TestCaseStatus::non_success(NonSuccessKind::Error);
            status.set_type(ty).set_message(message);
            let mut case = TestCase::new(name, status);
            case.set_classname(RUN_SUITE);
            suite.add_test_case(case);
        }
        report.add_test_suite(suite);
    }

    let mut groups: Vec<(&str, Vec<&CaseView>)> =
        run.suites().into_iter().map(|s| (s, Vec::new())).collect();
    let mut not_started = Vec::new();
    for case in &run.cases {
        match case.suite {
            Some(suite) => {
                if let Some((_, cases)) = groups.iter_mut().find(|(s, _)| *s == suite) {
                    cases.push(case);
                }
            }
            None => not_started.push(case),
        }
    }
    if !not_started.is_empty() {
        groups.push((NOT_STARTED_SUITE, not_started));
    }

    for (name, mut cases) in groups {
        // What did not run does not lead the log (a stable sort keeps the rest in order).
        cases.sort_by_key(|c| c.state == CaseState::Finished(Verdict::Unsupported));
        let mut suite = TestSuite::new(name);
        suite.add_properties(properties.iter().cloned());
        let mut time = Duration::ZERO;
        for case in cases {
            let test_case = test_case(case);
            time += test_case.time.unwrap_or_default();
            suite.add_test_case(test_case);
        }
        suite.set_time(time);
        report.add_test_suite(suite);
    }

    report
        .to_string()
        .expect("quick-junit serialises into memory, which cannot fail")
}

/// What is wrong with the run as a whole: `(type, test case name, message)` each.
fn run_problems(run: &RunView) -> Vec<(&'static str, &'static str, String)> {
    let mut problems = Vec::new();
    let count = |state: CaseState| run.cases.iter().filter(|c| c.state == state).count();
    let (unfinished, not_started) = (count(CaseState::DidNotFinish), count(CaseState::NotStarted));
    if run.start.is_some() && run.unreachable_reason().is_none() && run.interrupted() {
        let how = match run.end {
            Some(_) => "the run was interrupted (Ctrl-C, SIGTERM or SIGHUP)",
            None => "the run has no run_end (killed, or its evidence was cut short)",
        };
        problems.push((
            "interrupted",
            "run interrupted",
            format!(
                "{how}: {unfinished} case(s) did not finish, {not_started} never started; the \
                 results are partial"
            ),
        ));
    }
    if let Some(why) = run.end.and_then(|e| e.halted.as_deref()) {
        let not_run = run
            .cases
            .iter()
            .filter(|c| c.reason().starts_with("not run: the run stopped"))
            .count();
        problems.push((
            "stopped",
            "run stopped",
            format!(
                "the run stopped itself: {why}; {not_run} case(s) were not run and the cases it \
                 cut are inconclusive"
            ),
        ));
    }
    if let Some(start) = run.start
        && let Some((_, Some(warning))) = super::wording::partition_words(start)
        && start.merged.is_some()
    {
        problems.push(("partial", "partitions missing", warning));
    }
    if let Some(left) = super::wording::left_words(run) {
        let mut message = format!("{}: {}", left.headline, left.queues.join(", "));
        for sweep in &left.sweeps {
            message.push_str(&format!("; remove with: {sweep}"));
        }
        problems.push(("left_queues", "queues left behind", message));
    }
    problems
}

fn run_properties(run: &RunView) -> Vec<Property> {
    let mut properties = vec![Property::new("run_id", run.run_id())];
    if let Some(start) = run.start {
        properties.push(Property::new("target", &start.target));
        if let Some(endpoint) = &start.endpoint {
            properties.push(Property::new("endpoint", endpoint));
        }
        properties.push(Property::new("region", &start.region));
        if let Some(url) = run.redirected() {
            properties.push(Property::new("redirected", url));
        }
        if let Some(profile) = &start.target_profile {
            properties.push(Property::new("target_profile", profile));
        }
        properties.push(Property::new("sqsprobe_version", &start.sqsprobe_version));
        if let Some((what, _)) = super::wording::partition_words(start) {
            properties.push(Property::new("partitions", what));
        }
    }
    properties.push(Property::new(
        "interrupted",
        if run.interrupted() { "true" } else { "false" },
    ));
    properties
}

fn test_case(case: &CaseView) -> TestCase {
    let findings = case
        .findings()
        .iter()
        .map(|(at, message)| format!("{at}: {message}"))
        .collect::<Vec<_>>()
        .join("\n");
    let status = match case.state {
        CaseState::Finished(Verdict::Pass | Verdict::KnownDivergence) => TestCaseStatus::success(),
        CaseState::Finished(Verdict::Fail) => {
            non_success(NonSuccessKind::Failure, "fail", case, &findings)
        }
        CaseState::Finished(Verdict::Error) => {
            non_success(NonSuccessKind::Error, "error", case, &findings)
        }
        CaseState::Finished(Verdict::Inconclusive) => {
            let mut status = TestCaseStatus::skipped();
            status
                .set_type("inconclusive")
                .set_message(format!("inconclusive: {}", case.reason()));
            if !findings.is_empty() {
                status.set_description(findings);
            }
            status
        }
        CaseState::DidNotFinish => {
            let mut status = TestCaseStatus::non_success(NonSuccessKind::Error);
            status
                .set_type("did_not_finish")
                .set_message(case.reason())
                .set_description(unfinished_description(case));
            status
        }
        CaseState::Finished(Verdict::Unsupported) => {
            let mut status = TestCaseStatus::skipped();
            status
                .set_type("unsupported")
                .set_message(format!("unsupported: {}", case.reason()));
            status
        }
        CaseState::NotStarted => {
            let mut status = TestCaseStatus::skipped();
            status.set_type("not_started").set_message(case.reason());
            status
        }
    };

    let mut test_case = TestCase::new(case.id, status);
    if let Some(suite) = case.suite {
        test_case.set_classname(suite);
        test_case.extra.insert("file".into(), suite.into());
        if let Some(line) = case.start.map(|s| s.line).filter(|l| *l > 0) {
            test_case
                .extra
                .insert("line".into(), line.to_string().into());
        }
    }
    if let Some(ms) = case.duration_ms() {
        test_case.set_time(Duration::from_millis(ms));
    }
    if let Some(ts) = case.start.and_then(|s| parse_time(&s.started_at)) {
        test_case.set_timestamp(ts);
    }
    test_case.add_property(Property::new("verdict", case.state.word()));
    if let Some(end) = case.end {
        if let Some(class) = &end.classification {
            test_case.add_property(Property::new("classification", class.as_str()));
        }
        if let Some(decision) = end.decision {
            test_case.add_property(Property::new("decision", decision_name(decision)));
        }
        let mut system_out = String::new();
        if end.verdict == Verdict::KnownDivergence {
            let note = end.profile_note.as_deref().unwrap_or(&end.reason);
            test_case.add_property(Property::new("known_divergence", note));
            system_out.push_str(&format!("known divergence: {note}\n"));
        }
        if let Some(trials) = &end.trials {
            let tally = sqsprobe_core::classify::trials::tally(trials);
            test_case.add_property(Property::new("trials", &tally));
            system_out.push_str(&tally);
            system_out.push('\n');
        }
        if !system_out.is_empty() {
            test_case.set_system_out(system_out);
        }
    }
    test_case
}

fn non_success(kind: NonSuccessKind, ty: &str, case: &CaseView, findings: &str) -> TestCaseStatus {
    let mut status = TestCaseStatus::non_success(kind);
    status.set_type(ty).set_message(case.reason());
    if !findings.is_empty() {
        status.set_description(findings);
    }
    status
}

fn unfinished_description(case: &CaseView) -> String {
    let mut text = format!(
        "{} call attempt(s) recorded before the run stopped",
        case.calls.len()
    );
    if let Some(last) = case.calls.last() {
        text.push_str(&format!("; last: {} ({:?})", last.action, last.phase));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use sqsprobe_core::evidence::fixtures::*;

    fn status_of<'a>(report: &'a Report, name: &str) -> &'a TestCase {
        report
            .test_suites
            .iter()
            .flat_map(|s| &s.test_cases)
            .find(|c| c.name.as_str() == name)
            .unwrap_or_else(|| panic!("no testcase {name}"))
    }

    fn message(case: &TestCase) -> (&'static str, String, String) {
        match &case.status {
            TestCaseStatus::Success { .. } => ("success", String::new(), String::new()),
            TestCaseStatus::NonSuccess {
                kind,
                message,
                description,
                ..
            } => (
                match kind {
                    NonSuccessKind::Failure => "failure",
                    NonSuccessKind::Error => "error",
                },
                message
                    .as_ref()
                    .map(|m| m.as_str().to_string())
                    .unwrap_or_default(),
                description
                    .as_ref()
                    .map(|m| m.as_str().to_string())
                    .unwrap_or_default(),
            ),
            TestCaseStatus::Skipped {
                message,
                description,
                ..
            } => (
                "skipped",
                message
                    .as_ref()
                    .map(|m| m.as_str().to_string())
                    .unwrap_or_default(),
                description
                    .as_ref()
                    .map(|m| m.as_str().to_string())
                    .unwrap_or_default(),
            ),
        }
    }

    #[test]
    fn verdicts_map_to_junit_elements_and_read_back() {
        let xml = render(&full_run());
        let report = Report::deserialize_from_str(&xml).expect("our JUnit parses back");
        assert_eq!(report.name.as_ref().unwrap().as_str(), "sqsprobe run-1");
        assert_eq!(
            (report.tests, report.failures, report.errors, report.skipped),
            (5, 1, 1, 1)
        );
        assert_eq!(report.test_suites.len(), 1);
        let suite = &report.test_suites[0];
        assert_eq!(suite.name.as_str(), "suites/ack.yaml");
        let props: Vec<_> = suite
            .properties
            .iter()
            .map(|p| (p.name.as_str(), p.value.as_str()))
            .collect();
        for expected in [
            ("run_id", "run-1"),
            ("target", "embedded"),
            ("endpoint", "http://127.0.0.1:4566"),
            ("region", "us-east-1"),
            ("target_profile", "emulator"),
            ("interrupted", "false"),
        ] {
            assert!(
                props.contains(&expected),
                "missing {expected:?} in {props:?}"
            );
        }

        let pass = status_of(&report, "stale-ack");
        assert_eq!(message(pass).0, "success");
        assert_eq!(pass.classname.as_ref().unwrap().as_str(), "suites/ack.yaml");
        assert_eq!(pass.time, Some(Duration::from_millis(2500)));
        assert!(
            pass.properties
                .iter()
                .any(|p| p.name.as_str() == "decision" && p.value.as_str() == "RECONCILE")
        );

        let fail = message(status_of(&report, "old-handle"));
        assert_eq!(fail.0, "failure");
        assert_eq!(fail.1, "1 expectation did not hold");
        assert_eq!(
            fail.2,
            "suites/ack.yaml:61: expected redelivery of m1, none within 2 s"
        );

        let inconclusive = message(status_of(&report, "no-window"));
        assert_eq!(inconclusive.0, "skipped");
        assert_eq!(inconclusive.1, "inconclusive: observation throttled");

        let error = message(status_of(&report, "broken"));
        assert_eq!(error.0, "error");
        assert_eq!(error.1, "queue setup failed");

        let div = status_of(&report, "fifo-div");
        assert_eq!(message(div).0, "success");
        assert!(
            div.properties
                .iter()
                .any(|p| p.name.as_str() == "known_divergence"
                    && p.value.as_str() == "emulator: FIFO expiry not modelled")
        );
        assert!(
            div.system_out
                .as_ref()
                .unwrap()
                .as_str()
                .contains("FIFO expiry")
        );
    }

    #[test]
    fn a_multi_trial_case_carries_its_tally() {
        let report = Report::deserialize_from_str(&render(&trials_run())).expect("parses back");
        let case = status_of(&report, TRIALS_CASE);
        let (kind, text, _) = message(case);
        assert_eq!(kind, "skipped", "inconclusive is never a pass");
        assert!(text.starts_with("inconclusive: too few trials"), "{text}");
        let tally = "3 trials: no_redelivery_within_window 2/3 [9.4%, 99.2%], \
                     observed_redelivery 1/3 [0.84%, 90.6%]";
        assert!(
            case.properties
                .iter()
                .any(|p| p.name.as_str() == "trials" && p.value.as_str() == tally),
            "{:?}",
            case.properties
        );
        assert_eq!(case.system_out.as_ref().unwrap().as_str().trim_end(), tally);
    }

    #[test]
    fn unsupported_cases_are_skipped_with_the_profile_reason() {
        let mut records = vec![run_start(&["move-task"])];
        records.push(Record::CaseEnd(case_end(
            "move-task",
            Verdict::Unsupported,
            "unsupported on target profile moto: no message move tasks",
            &[],
        )));
        records.push(run_end(sqsprobe_facts::exit_code::OK));
        let report = Report::deserialize_from_str(&render(&records)).expect("parses back");
        assert_eq!((report.tests, report.skipped, report.errors), (1, 1, 0));
        let (kind, text, _) = message(status_of(&report, "move-task"));
        assert_eq!(kind, "skipped");
        assert_eq!(
            text,
            "unsupported: unsupported on target profile moto: no message move tasks"
        );
        let totals = RunView::new(&records).totals();
        assert_eq!(totals.unsupported, 1);
        assert_eq!(
            totals.notes(),
            vec!["1 case was not run: unsupported by the target profile or the protocol"]
        );
    }

    #[test]
    fn a_failed_reachability_check_is_one_error_and_the_cases_are_not_started() {
        let records = unreachable_run(&["a", "b"]);
        let report = Report::deserialize_from_str(&render(&records)).expect("parses back");
        assert_eq!(
            (report.tests, report.errors, report.failures, report.skipped),
            (3, 1, 0, 2)
        );
        let (kind, text, _) = message(status_of(&report, "reachability check"));
        assert_eq!(kind, "error");
        assert_eq!(
            text,
            "the target could not be reached: ListQueues failed: no response: connection refused"
        );
        assert_eq!(report.test_suites[0].name.as_str(), RUN_SUITE);
        let (kind, text, _) = message(status_of(&report, "a"));
        assert_eq!(
            (kind, text.as_str()),
            ("skipped", "not started (the run stopped before it)")
        );
    }

    #[test]
    fn interrupted_run_reports_unfinished_case_as_error() {
        let xml = render(&interrupted_run());
        let report = Report::deserialize_from_str(&xml).expect("our JUnit parses back");
        // The interruption itself is an error too, so CI never shows the run green.
        assert_eq!(
            (report.tests, report.failures, report.errors, report.skipped),
            (4, 0, 2, 1)
        );
        let run = message(status_of(&report, "run interrupted"));
        assert_eq!(run.0, "error");
        assert!(
            run.1.contains("1 case(s) did not finish, 1 never started"),
            "{}",
            run.1
        );
        let cut = message(status_of(&report, "cut"));
        assert_eq!(cut.0, "error");
        assert_eq!(cut.1, "did not finish (run interrupted)");
        assert!(cut.2.contains("2 call attempt(s)"), "{}", cut.2);
        assert_eq!(message(status_of(&report, "never")).0, "skipped");
        assert!(
            report
                .test_suites
                .iter()
                .any(|s| s.name.as_str() == NOT_STARTED_SUITE)
        );
        assert!(
            report.test_suites[0]
                .properties
                .iter()
                .any(|p| p.name.as_str() == "interrupted" && p.value.as_str() == "true")
        );
    }
}
