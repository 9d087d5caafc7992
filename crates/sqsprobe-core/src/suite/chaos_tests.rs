//! Parser tests of the honesty and chaos grammar: `delivered`, lists of allowed outcomes,
//! `rate:`, `trials:`, `faults:` and `fault:`, the `deny` step, and `status:` alone. Each new
//! rule and each new error message, with its position.

use std::time::Duration;

use super::*;

fn parse(src: &str) -> Result<Suite, Vec<Diagnostic>> {
    parse_suite("suites/x.yaml", src, &Limits::default())
}

/// The only error of `src`, as its one-line form without the path.
fn only_error(src: &str) -> String {
    let errs = parse(src).expect_err("expected errors");
    assert_eq!(errs.len(), 1, "{errs:#?}");
    errs[0]
        .one_line()
        .strip_prefix("suites/x.yaml:")
        .unwrap()
        .to_string()
}

/// A case with queue `q`, one send (m1) and the given steps (from line 9), and `tail`
/// appended at case level.
fn case(steps: &str, tail: &str) -> String {
    format!(
        "cases:\n  - id: c1\n    behaviour: b\n    source: s\n    queues:\n      q: {{}}\n    steps:\n      - send: {{queue: q, body: x}}\n{steps}{tail}"
    )
}

const OBSERVE: &str = "      - observe: {queue: q, window: 1s}\n";

fn observe_expect(expect: &str) -> String {
    case(&format!("{OBSERVE}        expect: {expect}\n"), "")
}

fn step_outcome(src: &str) -> OutcomeExpect {
    let suite = parse(src).unwrap();
    suite.cases[0].steps[1].expect.outcome.clone().unwrap()
}

#[test]
fn delivered_is_expectable_and_outcomes_may_list_allowed_classes() {
    let OutcomeExpect::All(c) = step_outcome(&observe_expect("{outcome: delivered}")) else {
        panic!()
    };
    assert_eq!(c.value.classes(), [OutcomeClass::Delivered]);
    let OutcomeExpect::All(c) = step_outcome(&observe_expect(
        "{outcome: [no_redelivery_within_window, observed_redelivery, observed_redelivery]}",
    )) else {
        panic!()
    };
    assert_eq!(
        c.value.classes(),
        [
            OutcomeClass::ObservedRedelivery,
            OutcomeClass::NoRedeliveryWithinWindow
        ]
    );
    assert!(c.value.allows(OutcomeClass::NoRedeliveryWithinWindow));
    assert!(!c.value.allows(OutcomeClass::Delivered));
    assert!(!c.value.allows(OutcomeClass::Inconclusive));
    assert_eq!(
        c.value.describe(),
        "observed_redelivery or no_redelivery_within_window"
    );
    let OutcomeExpect::PerMessage(m) = step_outcome(&observe_expect(
        "{outcome: {m1: [delivered, observed_redelivery]}}",
    )) else {
        panic!()
    };
    assert_eq!(m["m1"].value.classes().len(), 2);
    // At case level too.
    let suite = parse(&case(OBSERVE, "    expect: {outcome: [delivered]}\n")).unwrap();
    assert!(matches!(
        &suite.cases[0].expect.outcome,
        Some(OutcomeExpect::All(c)) if c.value.classes() == [OutcomeClass::Delivered]
    ));
}

#[test]
fn bad_outcome_lists_are_positioned() {
    assert_eq!(
        only_error(&observe_expect("{outcome: []}")),
        "10:27: the list of allowed outcome classes is empty (allow one or more of: observed_redelivery, no_redelivery_within_window, delivered)"
    );
    assert!(
        only_error(&observe_expect("{outcome: [delivered, inconclusive]}"))
            .starts_with("10:39: `inconclusive` is never an expectation")
    );
    assert_eq!(
        only_error(&observe_expect("{outcome: {m1: [delivred]}}")),
        "10:33: unknown outcome class `delivred` (did you mean `delivered`?)"
    );
}

#[test]
fn rates_take_percentages_and_fractions_at_both_levels() {
    let suite = parse(&observe_expect(
        "{rate: {observed_redelivery: {at_most: 5%}, no_redelivery_within_window: {at_least: 0.9, at_most: 1}}}",
    ))
    .unwrap();
    let rate = suite.cases[0].steps[1].expect.rate.clone().unwrap();
    let b = rate.bounds[&OutcomeClass::ObservedRedelivery].value;
    assert_eq!((b.at_least, b.at_most), (None, Some(0.05)));
    let b = rate.bounds[&OutcomeClass::NoRedeliveryWithinWindow].value;
    assert_eq!((b.at_least, b.at_most), (Some(0.9), Some(1.0)));
    let suite = parse(&case(
        OBSERVE,
        "    trials: 20\n    expect: {rate: {delivered: {at_least: 12.5%}}}\n",
    ))
    .unwrap();
    let rate = suite.cases[0].expect.rate.clone().unwrap();
    assert_eq!(
        rate.bounds[&OutcomeClass::Delivered].value.at_least,
        Some(0.125)
    );
}

#[test]
fn bad_rates_are_positioned() {
    let cases = [
        (
            "{rate: {observed_redelivery: {at_most: 105%}}}",
            "10:56: `at_most` must be between 0% and 100%, found 105% (write a percentage such as `5%` or a fraction such as `0.05`)",
        ),
        (
            "{rate: {observed_redelivery: {at_least: 1.5}}}",
            "10:57: `at_least` must be a fraction between 0 and 1, found 1.5",
        ),
        (
            "{rate: {observed_redelivery: {at_least: 5}}}",
            "10:57: `at_least` must be a fraction between 0 and 1, found 5",
        ),
        (
            "{rate: {observed_redelivery: {at_least: lots}}}",
            "10:57: expected `at_least` (a share), found `lots`",
        ),
        (
            "{rate: {observed_redelivery: {at_least: 50%, at_most: 10%}}}",
            "10:47: `at_least` (50%) is above `at_most` (10%): no rate meets both",
        ),
        (
            "{rate: {observed_redelivry: {at_most: 5%}}}",
            "10:25: unknown outcome class `observed_redelivry` (did you mean `observed_redelivery`?)",
        ),
        (
            "{rate: {inconclusive: {at_most: 5%}}}",
            "10:25: `inconclusive` is never a rate (an inconclusive trial has no class: it counts both ways in every class's rate)",
        ),
        (
            "{rate: {delivered: {}}}",
            "10:25: the rate of `delivered` has no bound (give `at_least`, `at_most`, or both)",
        ),
        (
            "{rate: {delivered: {at_mots: 5%}}}",
            "10:37: unknown key `at_mots` in a rate bound (did you mean `at_most`?)",
        ),
        ("{rate: {}}", "10:24: `rate` is empty"),
    ];
    let mut wrong = Vec::new();
    for (expect, want) in cases {
        let got = only_error(&observe_expect(expect));
        if !got.starts_with(want) {
            wrong.push(format!("want {want}\n got {got}"));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    assert_eq!(
        only_error(&case(
            "      - purge: {queue: q}\n        expect: {rate: {delivered: {at_most: 1%}}}\n",
            ""
        )),
        "10:18: `rate` does not apply to a `purge` step"
    );
    assert!(
        only_error(&case(
            "      - purge: {queue: q}\n",
            "    expect: {rate: {delivered: {at_most: 1%}}}\n"
        ))
        .starts_with("10:14: a case `rate` needs an `observe` step")
    );
}

#[test]
fn trials_default_to_one_and_are_bounded() {
    let trials = |tail: &str| parse(&case(OBSERVE, tail)).map(|s| s.cases[0].trials);
    assert_eq!(trials("").unwrap(), 1);
    assert_eq!(trials("    trials: 1000\n").unwrap(), 1000);
    assert_eq!(
        only_error(&case(OBSERVE, "    trials: 0\n")),
        "10:13: `trials` must be between 1 and 1000, found 0"
    );
    assert!(only_error(&case(OBSERVE, "    trials: 1001\n")).starts_with("10:13:"));
    assert!(
        only_error(&case(OBSERVE, "    trials: many\n"))
            .starts_with("10:13: expected `trials` (a whole number), found a string")
    );
}

#[test]
fn case_faults_decode_every_kind_and_selection() {
    let src = case(
        "      - receive: {queue: q, as: A}\n      - delete: {attempt: A}\n",
        "    faults:\n      - {kind: lose-response, action: ReceiveMessage, after: 1, times: 1}\n      - {kind: latency, delay: 2s, action: [SendMessage, DeleteMessage], probability: 50%}\n      - {kind: error, status: 500, code: InternalError, action: DeleteMessage, probability: 0.25}\n      - {kind: timeout, action: ReceiveMessage}\n      - {kind: throttle, action: ReceiveMessage}\n      - {kind: reset, action: DeleteMessage}\n",
    );
    let suite = parse(&src).unwrap();
    let faults = &suite.cases[0].faults;
    assert_eq!(faults.len(), 6);
    assert_eq!(faults[0].kind, FaultKind::LoseResponse);
    assert_eq!((faults[0].after, faults[0].times), (1, Some(1)));
    assert_eq!(faults[0].actions[0].value, "ReceiveMessage");
    assert_eq!(faults[0].pos, Pos { line: 12, col: 9 });
    assert_eq!(
        faults[1].kind,
        FaultKind::Latency {
            delay: Duration::from_secs(2)
        }
    );
    assert_eq!(faults[1].actions.len(), 2);
    assert_eq!(
        (faults[1].probability, faults[1].after, faults[1].times),
        (0.5, 0, None)
    );
    assert_eq!(
        faults[2].kind,
        FaultKind::Error {
            status: 500,
            code: Some("InternalError".into())
        }
    );
    assert_eq!(faults[2].probability, 0.25);
    assert_eq!(faults[3].kind.as_str(), "timeout");
    assert_eq!(faults[4].kind.as_str(), "throttle");
    assert_eq!(faults[5].kind.as_str(), "reset");
}

#[test]
fn bad_faults_are_positioned() {
    let faults = |spec: &str| {
        only_error(&case(
            "      - receive: {queue: q}\n",
            &format!("    faults:\n      - {spec}\n"),
        ))
    };
    let cases = [
        (
            "{kind: lose-response}",
            "11:9: a case-level fault needs `action`: the SQS operation whose calls it hits",
        ),
        (
            "{kind: reset, action: RecieveMessage}",
            "11:31: unknown SQS operation `RecieveMessage` (did you mean `ReceiveMessage`?)",
        ),
        (
            "{kind: reset, action: sqs:ReceiveMessage}",
            "11:31: `sqs:ReceiveMessage` is an IAM action; `action` takes the operation name (write `ReceiveMessage`)",
        ),
        (
            "{kind: reset, action: DeleteMessage}",
            "11:31: no step of this case calls `DeleteMessage`: the fault would never fire (the steps call ReceiveMessage, SendMessage)",
        ),
        (
            "{kind: lose-reponse, action: ReceiveMessage}",
            "11:16: unknown fault kind `lose-reponse` (did you mean `lose-response`?)",
        ),
        (
            "{kind: reset, delay: 2s, action: ReceiveMessage}",
            "11:23: `delay` does not apply to a `reset` fault (`delay` belongs to `latency` faults)",
        ),
        (
            "{kind: latency, action: ReceiveMessage}",
            "11:9: a `latency` fault needs `delay` (e.g. `{kind: latency, delay: 2s}`)",
        ),
        (
            "{kind: latency, delay: 0s, action: ReceiveMessage}",
            "11:32: `delay` must be longer than 0ms",
        ),
        (
            "{kind: error, action: ReceiveMessage}",
            "11:9: an `error` fault needs `status`",
        ),
        (
            "{kind: error, status: 200, action: ReceiveMessage}",
            "11:31: `status` must be between 400 and 599, found 200",
        ),
        (
            "{kind: throttle, code: X, action: ReceiveMessage}",
            "11:26: `code` does not apply to a `throttle` fault",
        ),
        (
            "{kind: reset, action: ReceiveMessage, probability: 1.5}",
            "11:60: `probability` must be a fraction between 0 and 1, found 1.5",
        ),
        (
            "{kind: reset, action: ReceiveMessage, times: 0}",
            "11:54: `times` must be between 1 and 4294967295, found 0",
        ),
        (
            "{kind: reset, action: ReceiveMessage, afte: 1}",
            "11:47: unknown key `afte` in a fault (did you mean `after`?)",
        ),
        ("{action: ReceiveMessage}", "11:9: a fault needs `kind`"),
    ];
    let mut wrong = Vec::new();
    for (spec, want) in cases {
        let got = faults(spec);
        if !got.starts_with(want) {
            wrong.push(format!("want {want}\n got {got}"));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn a_step_fault_defaults_to_the_step_calls_and_must_name_one_of_them() {
    let src = case(
        "      - receive: {queue: q, as: A}\n        fault: {kind: lose-response}\n      - observe: {queue: q, window: 1s, delete: true}\n        fault: {kind: throttle, times: 2}\n",
        "",
    );
    let suite = parse(&src).unwrap();
    let steps = &suite.cases[0].steps;
    let f = steps[1].fault.as_ref().unwrap();
    assert_eq!(f.kind, FaultKind::LoseResponse);
    assert_eq!(f.actions[0].value, "ReceiveMessage");
    assert_eq!(f.pos, Pos { line: 10, col: 9 });
    let names: Vec<&str> = steps[2]
        .fault
        .as_ref()
        .unwrap()
        .actions
        .iter()
        .map(|a| a.value.as_str())
        .collect();
    assert_eq!(names, ["ReceiveMessage", "DeleteMessage"]);
    assert!(steps[0].fault.is_none());
    assert_eq!(
        only_error(&case(
            "      - receive: {queue: q}\n        fault: {kind: reset, action: DeleteMessage}\n",
            ""
        )),
        "10:38: a `receive` step makes no `DeleteMessage` call (it calls ReceiveMessage; a case-level `faults:` entry selects the calls of other steps)"
    );
    // An observe that does not delete makes no DeleteMessage call.
    assert!(
        only_error(&case(
            "      - observe: {queue: q, window: 1s}\n        fault: {kind: reset, action: DeleteMessage}\n",
            ""
        ))
        .starts_with("10:38: an `observe` step makes no `DeleteMessage` call")
    );
    assert_eq!(
        only_error(&case(
            "      - sleep: 1s\n        fault: {kind: reset}\n",
            ""
        )),
        "10:9: a `sleep` step makes no SQS call for a fault to hit (put the fault on a step that calls SQS)"
    );
    assert!(
        only_error(&case(
            "      - receive: {queue: q}\n        falt: {kind: reset}\n",
            ""
        ))
        .starts_with("10:9: unknown key beside the step keyword `falt` (did you mean `fault`?)")
    );
}

#[test]
fn latency_faults_count_in_the_budget_for_every_call_they_can_hit() {
    let budget =
        |steps: &str, tail: &str| case_budget(&parse(&case(steps, tail)).unwrap().cases[0]);
    let observe = "      - observe: {queue: q, window: 1s, max_receives: 5}\n";
    let base = budget(observe, "");
    let with = |tail: &str| budget(observe, tail) - base;
    let latency = "    faults:\n      - {kind: latency, delay: 2s, action: ReceiveMessage";
    // Five receives of the observe.
    assert_eq!(with(&format!("{latency}}}\n")), Duration::from_secs(10));
    assert_eq!(
        with(&format!("{latency}, times: 2}}\n")),
        Duration::from_secs(4)
    );
    assert_eq!(
        with(&format!("{latency}, after: 4}}\n")),
        Duration::from_secs(2)
    );
    // A fault that adds no time costs nothing.
    assert_eq!(
        with("    faults:\n      - {kind: reset, action: ReceiveMessage}\n"),
        Duration::ZERO
    );
    // Standard retries: three attempts a call.
    let send = "    faults:\n      - {kind: latency, delay: 2s, action: SendMessage}\n";
    assert_eq!(with(send), Duration::from_secs(2));
    assert_eq!(
        budget(observe, &format!("    retries: standard\n{send}"))
            - budget(observe, "    retries: standard\n"),
        Duration::from_secs(6)
    );
    // A step-level fault hits its own step only.
    let one = budget(
        &format!(
            "{observe}      - receive: {{queue: q}}\n        fault: {{kind: latency, delay: 3s}}\n"
        ),
        "",
    ) - budget(&format!("{observe}      - receive: {{queue: q}}\n"), "");
    assert_eq!(one, Duration::from_secs(3));
    // Unbounded latency is refused like any over-long case.
    assert!(
        only_error(&case(
            "      - observe: {queue: q, window: 1s, max_receives: 100}\n",
            "    faults:\n      - {kind: latency, delay: 5s, action: ReceiveMessage}\n"
        ))
        .starts_with("2:9: case `c1` may take up to")
    );
}

#[test]
fn deny_steps_name_iam_actions_of_sqs_and_count_two_calls() {
    let src = case(
        "      - deny: {queue: q, actions: [sqs:DeleteMessage, sqs:ReceiveMessage], for: 5s}\n",
        "",
    );
    let suite = parse(&src).unwrap();
    let c = &suite.cases[0];
    let Action::Deny(d) = &c.steps[1].action else {
        panic!()
    };
    assert_eq!(d.queue.value, "q");
    assert_eq!(d.actions[1].value, "sqs:ReceiveMessage");
    assert_eq!(d.duration, Duration::from_secs(5));
    // queue create + delete, the send, and the deny's two: `for` is not a wait.
    assert_eq!(case_budget(c), CALL_ALLOWANCE * 5);
    let deny = |body: &str| only_error(&case(&format!("      - deny: {body}\n"), ""));
    assert_eq!(
        deny("{queue: q, actions: [DeleteMessage], for: 5s}"),
        "9:36: `DeleteMessage` needs the `sqs:` prefix of an IAM action (write `sqs:DeleteMessage`)"
    );
    assert_eq!(
        deny("{queue: q, actions: [sqs:DeleteMesage], for: 5s}"),
        "9:36: unknown IAM action `sqs:DeleteMesage` (did you mean `sqs:DeleteMessage`?)"
    );
    assert!(
        deny("{queue: q, actions: [sqs:SetQueueAttributes], for: 5s}")
            .starts_with("9:36: `deny` cannot deny `sqs:SetQueueAttributes`: the harness needs it")
    );
    assert_eq!(
        deny("{queue: q, actions: [sqs:DeleteMessageBatch], for: 5s}"),
        "9:36: `sqs:DeleteMessageBatch` is not an IAM action: SQS authorizes the batch with \
         `sqs:DeleteMessage` (write `sqs:DeleteMessage`; it denies both forms)"
    );
    assert_eq!(
        deny("{queue: q, actions: [sqs:DeleteMessage], for: 0s}"),
        "9:61: `for` must be longer than 0ms"
    );
    assert_eq!(
        deny("{queue: q, actions: [sqs:DeleteMessage]}"),
        "9:9: a `deny` step needs `for`"
    );
    let err = deny("{queue: z, actions: [sqs:DeleteMessage], for: 1s}");
    assert!(err.starts_with("9:23: unknown queue `z`"), "{err}");
}

#[test]
fn a_status_alone_of_400_or_more_expects_an_error_response() {
    let expect = |e: &str| {
        let src = case(
            &format!("      - purge: {{queue: q}}\n        expect: {e}\n"),
            "",
        );
        parse(&src).unwrap().cases[0].steps[1].expect.clone()
    };
    assert!(expect("{status: 400}").expects_error());
    assert!(expect("{error: QueueDoesNotExist}").expects_error());
    assert!(!expect("{status: 200}").expects_error());
    assert!(!StepExpect::default().expects_error());
    // A FIFO send without a group is allowed when the step expects the refusal by status.
    let fifo = |e: &str| {
        format!(
            "cases:\n  - id: c1\n    behaviour: b\n    source: s\n    queues:\n      f: {{type: fifo}}\n    steps:\n      - send: {{queue: f, body: x}}\n        expect: {e}\n"
        )
    };
    parse(&fifo("{status: 400}")).unwrap();
    assert!(
        parse(&fifo("{status: 200}")).unwrap_err()[0]
            .message
            .contains("needs `group`")
    );
}

#[test]
fn decisions_are_expected_by_name_and_hold_only_of_an_injected_fault() {
    let faulty = format!("{OBSERVE}        fault: {{kind: throttle}}\n");
    let decision = |steps: &str, d: &str| {
        parse(&case(steps, &format!("    expect:\n      decision: {d}\n")))
            .map(|s| s.cases[0].expect.decision.clone().unwrap().value)
    };
    assert_eq!(decision(&faulty, "HOLD").unwrap(), [Decision::Hold]);
    assert_eq!(
        decision(OBSERVE, "[ACCEPT, RECONCILE, ACCEPT]").unwrap(),
        [Decision::Accept, Decision::Reconcile]
    );
    let err = |steps: &str, d: &str| {
        only_error(&case(steps, &format!("    expect:\n      decision: {d}\n")))
    };
    assert_eq!(
        err(&faulty, "hold"),
        "12:17: unknown decision `hold` (decisions are written in capitals: `HOLD`)"
    );
    assert_eq!(
        err(&faulty, "HODL"),
        "12:17: unknown decision `HODL` (did you mean `HOLD`?)"
    );
    assert_eq!(
        err(OBSERVE, "HOLD"),
        "11:17: a case expects `HOLD` only of a fault it injects or of an acknowledgement after \
         its lease: HOLD is what not knowing decides (add the fault (`faults:`, a step's \
         `fault:`, a `deny` step) or the `sleep` that lets the lease lapse, or expect an outcome)"
    );
    assert!(err(&faulty, "[]").contains("the list of allowed decisions is empty"));
}

#[test]
fn emulator_chaos_takes_one_queues_chaos_in_canonical_form() {
    let chaos = |spec: &str| {
        parse(&case(OBSERVE, &format!("    emulator_chaos: {spec}\n")))
            .map(|s| s.cases[0].emulator_chaos.clone().unwrap())
    };
    assert_eq!(
        chaos("redeliver-after-delete=1").unwrap(),
        "redeliver-after-delete=1"
    );
    assert_eq!(
        chaos("'duplicate=0.5, seed=3'").unwrap(),
        "duplicate=0.5,seed=3"
    );
    let err = |spec: &str| only_error(&case(OBSERVE, &format!("    emulator_chaos: {spec}\n")));
    assert_eq!(
        err("redeliver-after-delet=1"),
        "10:21: `emulator_chaos` column 1: unknown chaos setting `redeliver-after-delet`; did you \
         mean `redeliver-after-delete`? (e.g. `emulator_chaos: redeliver-after-delete=1` (docs/chaos.md))"
    );
    assert!(
        err("latency=1s").contains("applies to the whole server"),
        "{}",
        err("latency=1s")
    );
}
