//! Parser tests: positions of every kind of error, rendered output, and the shipped suites.

use std::time::Duration;

use super::*;

fn parse(src: &str) -> Result<Suite, Vec<Diagnostic>> {
    parse_suite("suites/x.yaml", src, &Limits::default())
}

fn errors(src: &str) -> Vec<Diagnostic> {
    parse(src).expect_err("expected errors")
}

/// The only error of `src`, as its one-line form.
fn only_error(src: &str) -> String {
    let errs = errors(src);
    assert_eq!(errs.len(), 1, "{errs:#?}");
    errs[0].one_line()
}

const CASE_HEAD: &str = "\
cases:
  - id: c1
    behaviour: b
    source: s
    queues:
      q: {}
    steps:
";

fn with_steps(steps: &str) -> String {
    format!("{CASE_HEAD}{steps}")
}

#[test]
fn shipped_suites_parse_cleanly() {
    let files = [
        (
            "suites/stale-handle.yaml",
            include_str!("../../../../suites/stale-handle.yaml"),
        ),
        (
            "suites/lease-expiry.yaml",
            include_str!("../../../../suites/lease-expiry.yaml"),
        ),
        (
            "suites/partial-batch.yaml",
            include_str!("../../../../suites/partial-batch.yaml"),
        ),
        (
            "suites/conformance/leases.yaml",
            include_str!("../../../../suites/conformance/leases.yaml"),
        ),
        (
            "suites/conformance/handles.yaml",
            include_str!("../../../../suites/conformance/handles.yaml"),
        ),
        (
            "suites/conformance/batches.yaml",
            include_str!("../../../../suites/conformance/batches.yaml"),
        ),
        (
            "suites/conformance/messages.yaml",
            include_str!("../../../../suites/conformance/messages.yaml"),
        ),
        (
            "suites/conformance/polling-delays.yaml",
            include_str!("../../../../suites/conformance/polling-delays.yaml"),
        ),
        (
            "suites/conformance/errors.yaml",
            include_str!("../../../../suites/conformance/errors.yaml"),
        ),
    ];
    let mut suites = Vec::new();
    for (path, src) in files {
        match parse_suite(path, src, &Limits::default()) {
            Ok(s) => suites.push(s),
            Err(errs) => panic!(
                "{}",
                errs.iter()
                    .map(|d| d.render(src))
                    .collect::<Vec<_>>()
                    .join("\n\n")
            ),
        }
    }
    assert!(check_run(&suites).is_empty());
    for case in suites.iter().flat_map(|s| &s.cases) {
        assert!(
            case_budget(case) < Duration::from_secs(60),
            "{} is slow",
            case.id
        );
        assert!(!case.sources.is_empty());
    }
}

#[test]
fn docs_examples_parse_cleanly() {
    // Every complete example (a block that starts a file); fragments are left out.
    let doc = include_str!("../../../../docs/suite-format.md");
    let mut checked = 0;
    for block in doc.split("```yaml\n").skip(1) {
        let src = &block[..block.find("```").expect("closed")];
        if !(src.starts_with("cases:") || src.starts_with("suite:") || src.starts_with('#')) {
            continue;
        }
        checked += 1;
        if let Err(errs) = parse_suite("docs/example.yaml", src, &Limits::default()) {
            panic!(
                "{}",
                errs.iter()
                    .map(|d| d.render(src))
                    .collect::<Vec<_>>()
                    .join("\n\n")
            );
        }
    }
    assert!(checked >= 3, "{checked} examples");
}

#[test]
fn syntax_error_is_positioned() {
    assert_eq!(
        only_error("cases: [1, 2\nsuite: x\n"),
        "suites/x.yaml:2:6: invalid YAML: illegal placement of ':' indicator"
    );
    let e = only_error("a: 1\na: 2\n");
    assert!(
        e.starts_with("suites/x.yaml:2:1: invalid YAML: duplicated key"),
        "{e}"
    );
}

#[test]
fn empty_file() {
    assert!(only_error("").starts_with("suites/x.yaml:1:1: the suite file is empty"));
}

#[test]
fn unknown_queue_key_with_did_you_mean() {
    let src = "cases:\n  - id: c1\n    behaviour: b\n    source: s\n    queues:\n      q:\n        visiblity_timeout: 1s\n    steps:\n      - purge: {queue: q}\n";
    assert_eq!(
        only_error(src),
        "suites/x.yaml:7:9: unknown key `visiblity_timeout` in a queue definition (did you mean `visibility_timeout`?)"
    );
}

#[test]
fn render_snapshot() {
    let src = "cases:\n  - id: c1\n    behaviour: b\n    source: s\n    queues:\n      q:\n        visiblity_timeout: 1s\n    steps:\n      - purge: {queue: q}\n";
    let expected = "\
error: unknown key `visiblity_timeout` in a queue definition
 --> suites/x.yaml:7:9
  |
7 |         visiblity_timeout: 1s
  |         ^^^^^^^^^^^^^^^^^ unknown key `visiblity_timeout` in a queue definition
  = help: did you mean `visibility_timeout`?";
    assert_eq!(errors(src)[0].render(src), expected);
}

#[test]
fn render_snapshot_unknown_attempt() {
    let src = with_steps("      - send: {queue: q, body: x}\n      - delete: {attempt: C}\n");
    let expected = "\
error: unknown attempt `C`: no earlier receive has `as: C`
  --> suites/x.yaml:9:27
   |
 9 |       - delete: {attempt: C}
   |                           ^ unknown attempt `C`: no earlier receive has `as: C`
   = help: name a receive with `as:` in an earlier step, e.g. `receive: {queue: q, as: A}`";
    assert_eq!(
        errors(&src)[0].render(&src),
        expected
            .replace("\n 9 |", "\n9 |")
            .replace("  -->", " -->")
            .replace("\n   |", "\n  |")
            .replace("\n   =", "\n  =")
    );
}

#[test]
fn misspelled_step_keyword() {
    let src = with_steps("      - recieve: {queue: q}\n");
    assert_eq!(
        only_error(&src),
        "suites/x.yaml:8:9: unknown step `recieve` (did you mean `receive`?)"
    );
}

#[test]
fn unknown_attempt_reference_at_its_value() {
    let src = with_steps(
        "      - send: {queue: q, body: x}\n      - receive: {queue: q, as: A}\n      - delete: {attempt: C}\n",
    );
    assert_eq!(
        only_error(&src),
        "suites/x.yaml:10:27: unknown attempt `C`: no earlier receive has `as: C` (attempts defined so far: A)"
    );
    // Defined later is not defined: the reference must come after the receive.
    let src = with_steps("      - delete: {attempt: A}\n      - receive: {queue: q, as: A}\n");
    assert!(only_error(&src).starts_with("suites/x.yaml:8:27: unknown attempt `A`"));
}

#[test]
fn bad_durations() {
    let src = with_steps("      - sleep: 30\n");
    assert_eq!(
        only_error(&src),
        "suites/x.yaml:8:16: `sleep` needs a unit: `30` could mean seconds or milliseconds (write `30s` or `30ms`)"
    );
    let src = with_steps("      - sleep: 3 weeks\n");
    assert!(
        only_error(&src)
            .starts_with("suites/x.yaml:8:16: invalid duration for `sleep`: unknown unit")
    );
    let src = with_steps("      - receive: {queue: q, wait: 1500ms}\n");
    assert!(
        only_error(&src)
            .starts_with("suites/x.yaml:8:35: `wait` must be a whole number of seconds")
    );
}

#[test]
fn unbounded_case_is_refused_at_its_id() {
    let src = with_steps(
        "      - send: {queue: q, body: x}\n      - sleep: 5m\n      - observe: {queue: q, window: 1m}\n",
    );
    assert_eq!(
        only_error(&src),
        "suites/x.yaml:2:9: case `c1` may take up to 368s (sleeps, receive waits, observe windows and 2s per SQS call), over the limit of 5m (shorten sleeps or observe windows, or split the case)"
    );
}

#[test]
fn protocols_limit_a_case_and_unknown_ones_are_positioned() {
    let src = CASE_HEAD.replace(
        "    behaviour: b\n",
        "    protocols: [json]\n    behaviour: b\n",
    );
    let suite = parse_suite(
        "suites/x.yaml",
        &with_steps_in(&src, "      - purge: {queue: q}\n"),
        &Limits::default(),
    )
    .unwrap();
    assert_eq!(suite.cases[0].protocols, vec!["json".to_string()]);
    let bad = CASE_HEAD.replace(
        "    behaviour: b\n",
        "    protocols: [jsno]\n    behaviour: b\n",
    );
    let err = only_error(&with_steps_in(&bad, "      - purge: {queue: q}\n"));
    assert!(
        err.starts_with("suites/x.yaml:3:17: unknown protocol `jsno`"),
        "{err}"
    );
    assert!(err.contains("did you mean `json`?"), "{err}");
}

fn with_steps_in(head: &str, steps: &str) -> String {
    format!("{head}{steps}")
}

#[test]
fn slow_cases_have_their_own_larger_bound() {
    let limits = Limits::default();
    let slow = "suite: s\ncases:\n  - id: c1\n    tags: [slow]\n    behaviour: b\n    source: s\n    queues:\n      q: {}\n    steps:\n      - send: {queue: q, body: x}\n      - sleep: 5m\n      - observe: {queue: q, window: 1m}\n";
    assert!(parse_suite("suites/x.yaml", slow, &limits).is_ok());
    let too_slow = slow.replace("sleep: 5m", "sleep: 15m");
    assert!(parse_suite("suites/x.yaml", &too_slow, &limits).is_err());
}

#[test]
fn duplicate_case_id_across_files() {
    let a = parse_suite(
        "suites/a.yaml",
        &with_steps("      - purge: {queue: q}\n"),
        &Limits::default(),
    )
    .unwrap();
    let src_b = format!("suite: b\n{}", with_steps("      - purge: {queue: q}\n"));
    let b = parse_suite("suites/b.yaml", &src_b, &Limits::default()).unwrap();
    let diags = check_run(&[a, b]);
    assert_eq!(diags.len(), 1);
    assert_eq!(
        diags[0].one_line(),
        "suites/b.yaml:3:9: duplicate case id `c1`, first used at suites/a.yaml:2 (case ids are unique across every suite of a run)"
    );
    assert!(
        diags[0]
            .render(&src_b)
            .contains("3 |   - id: c1\n  |         ^^ duplicate")
    );
}

#[test]
fn duplicate_case_id_in_one_file() {
    let one = "  - id: c1\n    behaviour: b\n    source: s\n    queues: {q: {}}\n    steps: [{purge: {queue: q}}]\n";
    let src = format!("cases:\n{one}{one}");
    assert_eq!(
        only_error(&src),
        "suites/x.yaml:7:9: duplicate case id `c1`; first used at line 2"
    );
}

#[test]
fn collects_every_error() {
    let src =
        with_steps("      - recieve: {queue: q}\n      - sleep: 5\n      - purge: {queue: nope}\n");
    let lines: Vec<u32> = errors(&src).iter().map(|d| d.pos.line).collect();
    assert_eq!(lines, vec![8, 9, 10]);
}

#[test]
fn reference_checks() {
    let cases = [
        (
            "      - purge: {queue: qq}\n",
            "8:24: unknown queue `qq` (defined queues: q)",
        ),
        (
            "      - receive: {queue: q, as: A}\n      - receive: {queue: q, as: A}\n",
            "9:33: attempt `A` is already defined",
        ),
        (
            "      - send: {queue: q, body: x}\n      - send: {queue: q, body: y, message: m1}\n",
            "9:44: message label `m1` is already used at line 8",
        ),
        (
            "      - receive: {queue: q}\n        expect: {received: [m1]}\n",
            "9:29: unknown message `m1`",
        ),
        (
            "      - cancel-move-task: {task: t}\n",
            "8:34: unknown move task `t`",
        ),
        (
            "      - cancel-move-task: {task: t, handle: h}\n",
            "8:37: write either `task` or `handle`, not both",
        ),
        (
            "      - deny: {queue: q, actions: [sqs:SendMessage], for: 1s}\n      - add-permission: {queue: q, label: p, actions: [SendMessage], accounts: [self]}\n",
            "9:33: queue `q` already has a `deny` (line 8); an `add-permission` cannot share its Policy",
        ),
        (
            "      - add-permission: {queue: q, label: p, actions: [SendMessage], accounts: [self]}\n      - deny: {queue: q, actions: [sqs:SendMessage], for: 1s}\n",
            "9:23: queue `q` already has an `add-permission` (line 8); a `deny` cannot share its Policy",
        ),
        (
            "      - add-permission: {queue: q, label: p, actions: [SendMessage]}\n",
            "8:9: an `add-permission` step needs `accounts`",
        ),
        (
            "      - get-attributes: {queue: q}\n        expect: {policy_sids: []}\n",
            "9:31: `policy_sids` is empty",
        ),
        (
            "      - send: {queue: q, body: x}\n        expect: {policy_sids: [a]}\n",
            "9:18: `policy_sids` does not apply to a `send` step",
        ),
        (
            "      - receive: {queue: q}\n        expect: {attributes: {SenderId: {matches: '^A(ID'}}}\n",
            "9:51: `matches` is not a regular expression: found open group without closing ')'",
        ),
        (
            "      - receive: {queue: q}\n        expect: {attributes: {SequenceNumber: {above: '007'}}}\n",
            "9:55: `above` is `007`, not a decimal integer",
        ),
        (
            "      - receive: {queue: q}\n        expect: {attributes: {SenderId: {}}}\n",
            "9:41: the shape of `SenderId` is empty",
        ),
        (
            "      - receive: {queue: q}\n        expect: {attributes: {SenderId: {match: x}}}\n",
            "9:42: unknown key `match` in the shape of `SenderId` (did you mean `matches`?)",
        ),
        (
            "      - cancel-move-task: {}\n",
            "8:9: a `cancel-move-task` step needs `task` or `handle`",
        ),
        (
            "      - send: {queue: q, body: x}\n      - observe: {queue: q, window: 1s}\n        expect: {outcome: inconclusive}\n",
            "10:27: `inconclusive` is never an expectation",
        ),
        (
            "      - send: {queue: q, body: x}\n      - observe: {queue: q, window: 1s}\n        expect: {outcome: observed_redelivry}\n",
            "10:27: unknown outcome class `observed_redelivry` (did you mean `observed_redelivery`?)",
        ),
        (
            "      - send: {queue: q, body: x}\n      - observe: {queue: q, window: 1s, max_receives: 101}\n",
            "9:55: `max_receives` is 101, over the limit of 100",
        ),
        (
            "      - sleep: 1s\n        expect: {error: X}\n",
            "9:18: `error` does not apply to a `sleep` step",
        ),
        (
            "      - create-queue: {queue: f, type: fifo}\n      - send: {queue: f, body: x}\n",
            "9:9: a send to FIFO queue `f` needs `group`",
        ),
        (
            "      - create-queue: {queue: d, type: fifo}\n      - create-queue: {queue: s, redrive: {dlq: d, max_receive_count: 3}}\n",
            "9:49: dead-letter queue `d` is a FIFO queue",
        ),
        (
            "      - create-queue: {queue: s, redrive: {dlq: z, max_receive_count: 3}}\n",
            "8:49: unknown dead-letter queue `z`",
        ),
        (
            "      - delete: {handle: h}\n",
            "8:9: a `delete` step needs `queue`",
        ),
        (
            "      - send: {queue: q}\n",
            "8:9: a `send` step needs `body` or `body_size`",
        ),
        (
            "      - purge: {queue: q}\n        expect: {erorr: X}\n",
            "9:18: unknown key `erorr` in a step `expect` (did you mean `error`?)",
        ),
    ];
    let mut wrong = Vec::new();
    for (steps, want) in cases {
        let got = errors(&with_steps(steps))
            .iter()
            .map(Diagnostic::one_line)
            .collect::<Vec<_>>()
            .join("\n");
        if !got.starts_with(&format!("suites/x.yaml:{want}")) || got.contains('\n') {
            wrong.push(format!("want {want}\n got {got}"));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn case_outcome_needs_an_observe_step() {
    let src = format!(
        "{}    expect: {{outcome: observed_redelivery}}\n",
        with_steps("      - purge: {queue: q}\n")
    );
    assert!(
        only_error(&src)
            .starts_with("suites/x.yaml:9:14: a case `outcome` needs an `observe` step")
    );
}

#[test]
fn create_queue_of_a_known_label_re_creates_it_with_the_same_type() {
    let src = with_steps(
        "      - create-queue: {queue: q, delay: 2s}\n        expect: {error: QueueAlreadyExists}\n      - delete-queue: {queue: q}\n      - create-queue: {queue: q}\n",
    );
    let suite = parse(&src).unwrap();
    let steps = &suite.cases[0].steps;
    assert!(
        matches!(&steps[0].action, Action::CreateQueue(d) if d.label == "q" && d.delay == Some(Duration::from_secs(2)))
    );
    assert!(matches!(&steps[2].action, Action::CreateQueue(d) if d.label == "q"));
    let err = only_error(&with_steps(
        "      - create-queue: {queue: q, type: fifo}\n",
    ));
    assert!(
        err.starts_with("suites/x.yaml:8:31: queue `q` is already defined as a standard queue"),
        "{err}"
    );
}

#[test]
fn name_suffix_is_for_new_create_queue_labels_only() {
    let src = with_steps(
        "      - create-queue: {queue: bad, name_suffix: \"!x\"}\n        expect: {error: InvalidParameterValue}\n",
    );
    let suite = parse(&src).unwrap();
    assert!(
        matches!(&suite.cases[0].steps[0].action, Action::CreateQueue(d) if d.name_suffix.as_deref() == Some("!x"))
    );
    let err = only_error(&with_steps(
        "      - create-queue: {queue: q, name_suffix: x}\n",
    ));
    assert!(
        err.starts_with("suites/x.yaml:8:47: `name_suffix` on queue `q`, which is already defined"),
        "{err}"
    );
    let err = only_error(&format!(
        "{}      - purge: {{queue: q}}\n",
        CASE_HEAD.replace("q: {}", "q: {name_suffix: x}")
    ));
    assert!(err.contains("unknown key `name_suffix`"), "{err}");
}

#[test]
fn arn_references_in_raw_attributes_must_name_a_queue() {
    let ok = with_steps(
        "      - create-queue: {queue: d, attributes: {RedrivePolicy: '{\"deadLetterTargetArn\":\"${arn:q}\",\"maxReceiveCount\":0}'}}\n        expect: {error: InvalidParameterValue}\n      - set-attributes: {queue: q, attributes: {RedrivePolicy: '${arn:d}'}}\n",
    );
    parse(&ok).unwrap();
    let err = only_error(&with_steps(
        "      - set-attributes: {queue: q, attributes: {RedrivePolicy: '${arn:zz}'}}\n",
    ));
    assert!(
        err.starts_with("suites/x.yaml:8:48: `${arn:zz}` in attribute `RedrivePolicy` names no queue of this case"),
        "{err}"
    );
}

#[test]
fn listing_steps_take_the_expectations_the_runner_checks() {
    let src = with_steps(
        "      - list-dead-letter-source-queues: {queue: q}\n        expect: {received: [q], messages: 1}\n      - list-queues: {max_results: 1}\n        expect: {messages: 1}\n      - list-queue-tags: {queue: q}\n        expect: {attributes: {team: a}}\n      - list-move-tasks: {source: q}\n        expect: {attributes: {Count: \"0\"}}\n",
    );
    let suite = parse(&src).unwrap();
    assert_eq!(suite.cases[0].steps[0].expect.received[0].value, "q");
    let err = only_error(&with_steps(
        "      - list-dead-letter-source-queues: {queue: q}\n        expect: {received: [m1]}\n",
    ));
    assert!(
        err.starts_with("suites/x.yaml:9:29: unknown queue `m1`"),
        "{err}"
    );
    let err = only_error(&with_steps(
        "      - list-queues: {}\n        expect: {received: [q]}\n",
    ));
    assert!(
        err.contains("`received` does not apply to a `list-queues` step"),
        "{err}"
    );
}

#[test]
fn fifo_send_without_group_is_allowed_when_the_step_expects_an_error() {
    let src = with_steps(
        "      - create-queue: {queue: f, type: fifo}\n      - send: {queue: f, body: x}\n        expect: {error: MissingParameter}\n",
    );
    parse(&src).unwrap();
}

#[test]
fn defaults() {
    let src = with_steps(
        "      - send: {queue: q, body: a}\n      - send-batch: {queue: q, entries: [{body: b}, {body: c, id: x}]}\n      - receive: {queue: q, as: A}\n      - delete-batch: {entries: [{attempt: A}, {handle: h}]}\n      - observe: {queue: q, window: 2s}\n",
    );
    let suite = parse(&src).unwrap();
    assert_eq!(suite.name, "x");
    let case = &suite.cases[0];
    assert_eq!(case.retries, RetryPolicy::None);
    assert!(case.queues[0].create);
    let Action::SendBatch { entries, .. } = &case.steps[1].action else {
        panic!()
    };
    assert_eq!(
        (entries[0].id.as_str(), entries[0].send.message.as_str()),
        ("m2", "m2")
    );
    assert_eq!(
        (entries[1].id.as_str(), entries[1].send.message.as_str()),
        ("x", "m3")
    );
    let Action::Receive(r) = &case.steps[2].action else {
        panic!()
    };
    assert_eq!(r.attribute_names, vec!["All"]);
    let Action::DeleteBatch { queue, entries } = &case.steps[3].action else {
        panic!()
    };
    assert!(queue.is_none());
    assert_eq!(entries[1].id, "e2");
    let Action::Observe(o) = &case.steps[4].action else {
        panic!()
    };
    assert_eq!((o.max_receives, o.wait), (20, Duration::from_secs(1)));
    // 1 queue × 2 calls + 4 calls + receive wait 0 + observe (2s + 1 call)
    assert_eq!(
        case_budget(case),
        Duration::from_secs(2 * 2 + 4 * 2 + 2 + 2)
    );
}

#[test]
fn step_with_sibling_expect_and_positions() {
    let src = with_steps(
        "      - delete: {queue: q, handle: bogus}\n        expect: {error: ReceiptHandleIsInvalid}\n",
    );
    let suite = parse(&src).unwrap();
    let step = &suite.cases[0].steps[0];
    assert_eq!(step.pos, Pos { line: 8, col: 9 });
    assert_eq!(step.expect.pos, Some(Pos { line: 9, col: 9 }));
    assert_eq!(step.expect.error.as_deref(), Some("ReceiptHandleIsInvalid"));
    assert_eq!(suite.cases[0].pos, Pos { line: 2, col: 9 });
}

#[test]
fn a_misspelled_required_key_is_reported_once() {
    let src = "cases:\n  - id: c1\n    behavior: b\n    source: s\n    queues: {q: {}}\n    steps: [{purge: {queue: q}}]\n";
    assert_eq!(
        only_error(src),
        "suites/x.yaml:3:5: unknown key `behavior` in a case (did you mean `behaviour`?)"
    );
    let src = with_steps("      - send: {queue: q, bdy: x}\n");
    assert_eq!(
        only_error(&src),
        "suites/x.yaml:8:26: unknown key `bdy` in a `send` step (did you mean `body`?)"
    );
}

#[test]
fn message_text_absent_attributes_and_within_are_parsed() {
    let src = with_steps(
        "      - delete: {queue: q, handle: h}\n        expect: {error: InvalidParameterValue, message_contains: has expired.}\n      - receive: {queue: q, wait: 5s}\n        expect: {absent: [SentTimestamp], within: 3s}\n",
    );
    let suite = parse(&src).unwrap();
    let steps = &suite.cases[0].steps;
    assert_eq!(
        steps[0].expect.message_contains.as_deref(),
        Some("has expired.")
    );
    assert_eq!(steps[1].expect.absent, vec!["SentTimestamp".to_string()]);
    assert_eq!(steps[1].expect.within, Some(Duration::from_secs(3)));
    let src = with_steps("      - purge: {queue: q}\n        expect: {within: 1s}\n");
    assert_eq!(
        only_error(&src),
        "suites/x.yaml:9:18: `within` does not apply to a `purge` step"
    );
    let src = with_steps("      - purge: {queue: q}\n        expect: {absnt: [X]}\n");
    assert_eq!(
        only_error(&src),
        "suites/x.yaml:9:18: unknown key `absnt` in a step `expect` (did you mean `absent`?)"
    );
}

#[test]
fn an_observe_with_nothing_to_track_is_an_error_at_its_keyword() {
    let err = only_error(&with_steps(
        "      - purge: {queue: q}\n      - observe: {queue: q, window: 1s}\n",
    ));
    assert_eq!(
        err,
        "suites/x.yaml:9:9: this `observe` has nothing to track: no earlier step of the case sends a message (send the messages to watch in an earlier step (`send` or `send-batch`), or name them with `messages: [...]`)"
    );
    // `messages: []` tracks every message sent: still nothing.
    let err = only_error(&with_steps(
        "      - observe: {queue: q, window: 1s, messages: []}\n",
    ));
    assert!(
        err.starts_with("suites/x.yaml:8:9: this `observe` has nothing to track"),
        "{err}"
    );
    // A label that was never sent is reported as such, once.
    let err = only_error(&with_steps(
        "      - observe: {queue: q, window: 1s, messages: [m1]}\n",
    ));
    assert!(err.contains("unknown message `m1`"), "{err}");
    // A send after the observe does not count; a batch entry before it does.
    let err = only_error(&with_steps(
        "      - observe: {queue: q, window: 1s}\n      - send: {queue: q, body: x}\n",
    ));
    assert!(err.contains("nothing to track"), "{err}");
    parse(&with_steps(
        "      - send-batch: {queue: q, entries: [{body: x}]}\n      - observe: {queue: q, window: 1s}\n",
    ))
    .unwrap();
}

#[test]
fn the_budget_counts_the_queue_receive_wait_for_receives_without_wait() {
    let budget = |queues: &str, steps: &str| {
        let src = format!(
            "cases:\n  - id: c1\n    behaviour: b\n    source: s\n    queues: {queues}\n    steps:\n{steps}"
        );
        case_budget(&parse(&src).unwrap().cases[0])
    };
    let call = CALL_ALLOWANCE;
    let receive = "      - receive: {queue: q}\n";
    // 2 calls for the queue, 1 for the receive, plus the queue's 20 s long poll.
    assert_eq!(
        budget("{q: {receive_wait: 20s}}", receive),
        Duration::from_secs(20) + call * 3
    );
    // The raw attribute counts too; a step's own `wait` wins; AWS's 20 s cap applies.
    assert_eq!(
        budget(
            "{q: {attributes: {ReceiveMessageWaitTimeSeconds: '7'}}}",
            receive
        ),
        Duration::from_secs(7) + call * 3
    );
    assert_eq!(
        budget(
            "{q: {receive_wait: 20s}}",
            "      - receive: {queue: q, wait: 1s}\n"
        ),
        Duration::from_secs(1) + call * 3
    );
    assert_eq!(
        budget(
            "{q: {attributes: {ReceiveMessageWaitTimeSeconds: '3600'}}}",
            receive
        ),
        Duration::from_secs(20) + call * 3
    );
    // Set by a step: counted from that step on, and a lower value later keeps the higher
    // one (the set may have been refused).
    let steps = "      - receive: {queue: q}\n      - set-attributes: {queue: q, attributes: {ReceiveMessageWaitTimeSeconds: '5'}}\n      - receive: {queue: q}\n      - set-attributes: {queue: q, attributes: {ReceiveMessageWaitTimeSeconds: '1'}}\n      - receive: {queue: q}\n";
    assert_eq!(budget("{q: {}}", steps), Duration::from_secs(10) + call * 7);
    let steps = "      - create-queue: {queue: n, receive_wait: 3s}\n      - receive: {queue: n}\n";
    assert_eq!(budget("{}", steps), Duration::from_secs(3) + call * 2);
}

#[test]
fn a_syntax_error_at_the_end_of_a_file_without_a_final_break_points_inside_it() {
    // saphyr puts it on line 2, which this file does not have (found by proptests.rs).
    assert_eq!(
        only_error("%aA"),
        "suites/x.yaml:1:4: invalid YAML: did not find expected <document start>"
    );
}

#[test]
fn regions_and_shared_names_are_checked_where_written() {
    let case = |queues: &str, steps: &str| {
        format!(
            "cases:\n  - id: c1\n    behaviour: b\n    source: s\n    queues:\n{queues}    steps:\n{steps}"
        )
    };
    let get = "      - get-queue-url: {queue: a}\n";
    let ok = case(
        "      a: {region: us-east-1}\n      b: {region: us-west-2, same_name_as: a}\n      c: {region: eu-central-1, same_name_as: b}\n",
        get,
    );
    let suite = parse(&ok).unwrap();
    let b = &suite.cases[0].queues[1];
    assert_eq!(b.region.as_ref().unwrap().value, "us-west-2");
    assert_eq!(b.same_name_as.as_ref().unwrap().value, "a");
    let wrong = [
        (
            case("      a: {region: us_west_2}\n", get),
            "suites/x.yaml:6:19: `us_west_2` is not a region name",
        ),
        (
            case("      a: {}\n      b: {same_name_as: zz}\n", get),
            "suites/x.yaml:7:25: unknown queue `zz` in `same_name_as`",
        ),
        (
            case("      a: {}\n      b: {same_name_as: a}\n", get),
            "suites/x.yaml:7:25: `b` and `a` would be one queue: the same name in the run's region",
        ),
        (
            case(
                "      a: {region: us-west-2}\n      b: {region: us-west-2, same_name_as: a}\n",
                get,
            ),
            "suites/x.yaml:7:44: `b` and `a` would be one queue: the same name in region us-west-2",
        ),
        (
            case(
                "      a: {}\n      b: {type: fifo, region: us-west-2, same_name_as: a}\n",
                get,
            ),
            "suites/x.yaml:7:56: `a` is a standard queue, but `b` is a FIFO queue: they cannot share a name",
        ),
        (
            case(
                "      a: {region: us-west-2, same_name_as: b}\n      b: {region: us-east-1, same_name_as: a}\n",
                get,
            ),
            "suites/x.yaml:6:44: `same_name_as` of `a` leads back to itself",
        ),
        (
            case(
                "      a: {}\n",
                "      - create-queue: {queue: b, region: us-west-2, same_name_as: a, name_suffix: x}\n",
            ),
            "suites/x.yaml:8:83: `name_suffix` beside `same_name_as`",
        ),
        (
            case(
                "      a: {region: us-west-2}\n",
                "      - create-queue: {queue: a}\n",
            ),
            "suites/x.yaml:8:31: queue `a` is already defined in another region or under another name",
        ),
    ];
    let mut bad = Vec::new();
    for (src, want) in wrong {
        let got = errors(&src)
            .iter()
            .map(Diagnostic::one_line)
            .collect::<Vec<_>>();
        if !got.first().is_some_and(|g| g.starts_with(want)) {
            bad.push(format!("want {want}\n got {got:?}"));
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

/// A window that short-polls cannot prove silence, so an expectation only silence
/// meets over it is refused where the outcome is written; allowing a sighting too is fine.
#[test]
fn silence_over_a_short_poll_window_is_refused() {
    let step = with_steps(
        "      - send: {queue: q, body: x}
      - observe: {queue: q, window: 2s, wait: 0s}
        expect: {outcome: no_redelivery_within_window}
",
    );
    let e = only_error(&step);
    assert!(e.starts_with("suites/x.yaml:10:27:"), "{e}");
    assert!(e.contains("this window short-polls"), "{e}");
    let case_level = format!(
        "{}    expect:\n      outcome: {{m1: no_redelivery_within_window}}\n",
        with_steps(
            "      - send: {queue: q, body: x}\n      - observe: {queue: q, window: 2s, wait: 0s}\n"
        )
    );
    assert!(only_error(&case_level).contains("short-polls"));
    let either = with_steps(
        "      - send: {queue: q, body: x}
      - observe: {queue: q, window: 2s, wait: 0s}
        expect: {outcome: [observed_redelivery, no_redelivery_within_window]}
",
    );
    assert!(parse(&either).is_ok());
    let long = step.replace("wait: 0s", "wait: 1s");
    assert!(parse(&long).is_ok());
}

#[test]
fn a_message_count_is_a_number_or_a_range_with_positioned_errors() {
    let src = with_steps(
        "      - receive: {queue: q, wait: 0s}\n        expect: {messages: {at_most: 1}}\n",
    );
    let suite = parse(&src).unwrap();
    let want = suite.cases[0].steps[0].expect.messages.unwrap();
    assert_eq!(
        want,
        CountExpect {
            at_least: 0,
            at_most: Some(1)
        }
    );
    assert!(want.allows(0) && want.allows(1) && !want.allows(2));
    assert_eq!(want.to_string(), "at most 1");
    let src = with_steps(
        "      - receive: {queue: q}\n        expect: {messages: {at_least: 3, at_most: 1}}\n",
    );
    assert_eq!(
        only_error(&src),
        "suites/x.yaml:9:29: `at_least` (3) is above `at_most` (1): no count meets both"
    );
    let src = with_steps("      - receive: {queue: q}\n        expect: {messages: {at_mots: 1}}\n");
    assert!(
        only_error(&src)
            .starts_with("suites/x.yaml:9:29: unknown key `at_mots` in a message count"),
        "{}",
        only_error(&src)
    );
}
