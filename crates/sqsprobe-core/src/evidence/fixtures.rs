//! Test helpers: small constructors for evidence records, and whole runs that the view's
//! consumers are tested on: a complete one with every verdict, an interrupted one, one that
//! stopped at its reachability check, and one multi-trial case.

use crate::evidence::Record;
use crate::evidence::facts::ClassName;
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
        target_profile_source: None,
        protocol: sqsprobe_facts::sqs::protocol::Protocol::Json,
        started_at: "2025-01-01T00:00:00Z".to_string(),
        suites: vec!["suites/ack.yaml".to_string()],
        cases: cases.iter().map(|c| c.to_string()).collect(),
        emulator_chaos: None,
        partition: None,
        seed: Some(7),
        merged: None,
        clock: None,
        regions: Vec::new(),
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
        trials: None,
        emulator_chaos: None,
        area: None,
        aspect: None,
        expect: None,
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
        lease_ms: None,
        fault: None,
        wire: None,
        trial: None,
        region: None,
    }
}

/// The class a fixture names by its wire name.
pub fn class_named(name: &str) -> ClassName {
    serde_json::from_value(serde_json::Value::String(name.to_string()))
        .unwrap_or_else(|_| panic!("{name} is not a class"))
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

pub fn case_end(case: &str, verdict: Verdict, reason: &str, findings: &[(u32, &str)]) -> CaseEnd {
    CaseEnd {
        findings: findings
            .iter()
            .map(|(line, message)| Finding {
                step: Some(1),
                line: *line,
                message: message.to_string(),
                status: None,
                code: None,
                teardown: false,
            })
            .collect(),
        queues: vec![QueueCleanup {
            queue: "sqsprobe-q".to_string(),
            deleted: true,
            region: None,
        }],
        ended_at: at(1500),
        duration_ms: 1500,
        ..CaseEnd::unrun(
            RUN,
            "suites/ack.yaml",
            case,
            &at(0),
            verdict,
            reason.to_string(),
            None,
        )
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
        requests: Some(12),
        fifo_requests: Some(0),
        cost_usd: Some(0.0000048),
        left_queues: Vec::new(),
        halted: None,
        stop: None,
    })
}

/// A finished step `start_ms`..`end_ms`, its check passed.
pub fn step(case: &str, index: usize, keyword: &str, start_ms: u64, end_ms: u64) -> StepEnd {
    StepEnd {
        run_id: RUN.to_string(),
        case: case.to_string(),
        step: index,
        line: 20 + index as u32,
        keyword: keyword.to_string(),
        started_at: at(start_ms),
        ended_at: at(end_ms),
        check: crate::evidence::facts::CheckKind::Pass,
        trial: None,
    }
}

/// The multi-trial case of [`trials_run`].
pub const TRIALS_CASE: &str = "stale-rate";

/// A run of one multi-trial case, [`TRIALS_CASE`], three trials started 10 ms apart, each:
/// send; receive as A (1 s lease); sleep 1.2 s; receive as B (2 s lease); delete with A's
/// lapsed handle; observe for 3 s. Trial 2 sees the message again. Pooled against
/// `rate: {observed_redelivery: {at_most: 5%}}`: 1 of 3 straddles the bound, inconclusive.
pub fn trials_run() -> Vec<Record> {
    let case = TRIALS_CASE;
    let mut records = vec![run_start(&[case])];
    if let Record::CaseStart(mut start) = case_start(case, 10) {
        start.trials = Some(3);
        records.push(Record::CaseStart(start));
    }
    let classes = [
        "no_redelivery_within_window",
        "observed_redelivery",
        "no_redelivery_within_window",
    ];
    let mut trial_ends = Vec::new();
    for (i, class) in classes.iter().enumerate() {
        let trial = i as u32 + 1;
        let t0 = i as u64 * 10;
        let (a, b, c) = (
            format!("a{trial}").repeat(32),
            format!("b{trial}").repeat(32),
            format!("c{trial}").repeat(32),
        );
        let mut calls = Vec::new();
        let mut create = call(case, Phase::Setup, "CreateQueue", t0, t0 + 20);
        create.step = None;
        create.line = None;
        calls.push(create);
        calls.push(call(case, Phase::Step, "SendMessage", t0 + 30, t0 + 40));
        let mut recv_a = call(case, Phase::Step, "ReceiveMessage", t0 + 50, t0 + 60);
        recv_a.step = Some(1);
        recv_a.attempt = Some("A".to_string());
        recv_a.lease_ms = Some(1000);
        recv_a.messages = vec![received("m1", &a, 1)];
        calls.push(recv_a);
        let mut recv_b = call(case, Phase::Step, "ReceiveMessage", t0 + 1270, t0 + 1280);
        recv_b.step = Some(3);
        recv_b.attempt = Some("B".to_string());
        recv_b.lease_ms = Some(2000);
        recv_b.messages = vec![received("m1", &b, 2)];
        calls.push(recv_b);
        let mut delete = call(case, Phase::Step, "DeleteMessage", t0 + 1290, t0 + 1300);
        delete.step = Some(4);
        delete.attempt = Some("A".to_string());
        delete.message = Some("m1".to_string());
        delete.handle_digest = Some(a.clone());
        calls.push(delete);
        let mut first = call(case, Phase::Observe, "ReceiveMessage", t0 + 1310, t0 + 2310);
        first.step = Some(5);
        calls.push(first);
        let mut second = call(case, Phase::Observe, "ReceiveMessage", t0 + 2320, t0 + 3320);
        second.step = Some(5);
        if *class == "observed_redelivery" {
            second.messages = vec![received("m1", &c, 3)];
        }
        calls.push(second);
        let mut teardown = call(case, Phase::Teardown, "DeleteQueue", t0 + 4320, t0 + 4340);
        teardown.step = None;
        teardown.line = None;
        calls.push(teardown);
        for mut c in calls {
            c.trial = Some(trial);
            records.push(Record::Call(c));
        }
        let steps = [
            step(case, 0, "send", t0 + 30, t0 + 40),
            step(case, 1, "receive", t0 + 50, t0 + 60),
            step(case, 2, "sleep", t0 + 60, t0 + 1260),
            step(case, 3, "receive", t0 + 1270, t0 + 1280),
            step(case, 4, "delete", t0 + 1290, t0 + 1300),
            step(case, 5, "observe", t0 + 1310, t0 + 4310),
        ];
        for mut s in steps {
            s.trial = Some(trial);
            records.push(Record::Step(s));
        }
        let mut end = case_end(
            case,
            Verdict::Pass,
            &format!("every expectation held; observation: {class}"),
            &[],
        );
        end.trial = Some(trial);
        end.classification = Some(class_named(class));
        end.outcomes = vec![MessageOutcome {
            message: "m1".to_string(),
            message_id: Some("id-m1".to_string()),
            class: class_named(class),
            reason: None,
            sightings: u32::from(*class == "observed_redelivery"),
            deliveries: if *class == "observed_redelivery" {
                3
            } else {
                2
            },
        }];
        end.window = Some(Window {
            step: 5,
            line: 25,
            planned_ms: 3000,
            elapsed_ms: 3000,
            receives_used: 2,
            receive_budget: 20,
            ended: crate::evidence::format::WindowEnded::Completed,
            unknown_receives: 0,
        });
        end.started_at = at(t0);
        end.ended_at = at(t0 + 4340);
        end.duration_ms = 4340;
        trial_ends.push(Record::TrialEnd(end));
    }
    records.extend(trial_ends);
    let finding = "too few trials: rate of observed_redelivery in 1 of 3 trials, 95% interval \
                   [0.84%, 90.6%] straddles the expected at most 5.0%; about 8 trials in all \
                   would settle it as a failure if the known trials' rate holds";
    let mut end = case_end(case, Verdict::Inconclusive, finding, &[(10, finding)]);
    end.findings[0].step = None;
    end.ended_at = at(4360);
    end.duration_ms = 4360;
    end.trials = Some(Trials {
        n: 3,
        conclusive: 3,
        unknown: 0,
        counts: BTreeMap::from([
            ("no_redelivery_within_window".to_string(), 2),
            ("observed_redelivery".to_string(), 1),
        ]),
        intervals: BTreeMap::from([
            ("no_redelivery_within_window".to_string(), [0.0943, 0.9916]),
            ("observed_redelivery".to_string(), [0.0084, 0.9057]),
        ]),
        per_trial: classes
            .iter()
            .enumerate()
            .map(|(i, class)| TrialOutcome {
                trial: i as u32 + 1,
                verdict: Verdict::Pass,
                class: Some(class_named(class)),
            })
            .collect(),
        bounds: BTreeMap::from([(
            "observed_redelivery".to_string(),
            RateBound {
                at_least: None,
                at_most: Some(0.05),
            },
        )]),
    });
    records.push(Record::CaseEnd(end));
    records.push(run_end(sqsprobe_facts::exit_code::INCONCLUSIVE));
    records
}

/// A finished run of one target: `run_start` with `profile` and `protocol`, then each case
/// with its verdict (reason `why`; an unsupported one never started, with a profile note).
pub fn verdicts_run(
    profile: Option<&str>,
    protocol: &str,
    ends: &[(&str, Verdict)],
) -> Vec<Record> {
    let ids: Vec<&str> = ends.iter().map(|(c, _)| *c).collect();
    let mut start = run_start(&ids);
    if let Record::RunStart(s) = &mut start {
        s.target_profile = profile.map(str::to_string);
        s.protocol =
            sqsprobe_facts::sqs::protocol::Protocol::from_name(protocol).expect("a protocol name");
    }
    let mut records = vec![start];
    for (case, verdict) in ends {
        if *verdict == Verdict::Unsupported {
            let mut end = case_end(case, *verdict, "not run", &[]);
            end.profile_note = Some("no move tasks (moto#1)".to_string());
            records.push(Record::CaseEnd(end));
        } else {
            records.push(case_start(case, 10));
            records.push(Record::CaseEnd(case_end(case, *verdict, "why", &[])));
        }
    }
    records.push(run_end(0));
    records
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
    end.classification = Some(ClassName::ObservedRedelivery);
    end.decision = Some(Decision::Reconcile);
    end.outcomes = vec![MessageOutcome {
        message: "m1".to_string(),
        message_id: Some("id-m1".to_string()),
        class: ClassName::ObservedRedelivery,
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
        ended: crate::evidence::format::WindowEnded::AllSeen,
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
    end.classification = Some(ClassName::ObservedRedelivery);
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

    records.push(run_end(sqsprobe_facts::exit_code::EXPECTATION_FAILED));
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

/// A run that stopped at its reachability check: `run_start` selecting `cases`, one failed
/// `ListQueues` (no response: connection refused) made for the run, `run_end` with exit 3.
pub fn unreachable_run(cases: &[&str]) -> Vec<Record> {
    let mut check = call("", Phase::Setup, "ListQueues", 0, 20);
    check.completion = Completion::Info;
    check.http_status = None;
    check.error_message = Some("connection refused".to_string());
    vec![
        run_start(cases),
        Record::Call(check),
        run_end(sqsprobe_facts::exit_code::RUNTIME_ERROR),
    ]
}
