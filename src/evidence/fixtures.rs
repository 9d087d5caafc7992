//! Test helpers: small constructors for evidence records, and two whole runs (a complete one
//! with every verdict, and an interrupted one) that the view's consumers are tested on.

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
        partition: None,
        seed: Some(7),
        clock: None,
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
        trial: None,
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

pub fn case_end(case: &str, verdict: Verdict, reason: &str, findings: &[(u32, &str)]) -> CaseEnd {
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
                status: None,
                code: None,
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
        trial: None,
        trials: None,
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
        run_end(crate::exit_code::RUNTIME_ERROR),
    ]
}
