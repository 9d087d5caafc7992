//! Parser tests of the numbers a suite sends to SQS (`parse/sqs_values.rs`): every one outside
//! the range SQS accepts (`sqs/limits.rs`) is refused at its own position, unless its step
//! expects SQS's refusal; one no request can carry is refused always; and a property test
//! holds that whatever the parser accepts reaches the wire as written.

use std::time::Duration;

use proptest::prelude::*;

use super::*;
use sqsprobe_facts::sqs::limits;

fn parse(src: &str) -> Result<Suite, Vec<Diagnostic>> {
    parse_suite("suites/x.yaml", src, &Limits::default())
}

/// A case with queue `q` (defined by `queue`), a send (m1) and a receive as `A`, then `steps`
/// from line 10.
fn case(queue: &str, steps: &str) -> String {
    format!(
        "cases:\n  - id: c1\n    behaviour: b\n    source: s\n    queues:\n      q: {queue}\n    \
         steps:\n      - send: {{queue: q, body: x}}\n      - receive: {{queue: q, as: A}}\n\
         {steps}"
    )
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

/// Each step value one past SQS's range: the step, the column of the value on line 10, the
/// range's name, and the error SQS answers it with.
const ONE_PAST: &[(&str, u32, &str, &str)] = &[
    (
        "receive: {queue: q, visibility_timeout: 43201s}",
        49,
        "VisibilityTimeout: 0 to 43200 seconds",
        "InvalidParameterValue",
    ),
    (
        "receive: {queue: q, wait: 21s}",
        35,
        "WaitTimeSeconds: 0 to 20 seconds",
        "InvalidParameterValue",
    ),
    (
        "receive: {queue: q, max: 11}",
        34,
        "MaxNumberOfMessages: 1 to 10",
        "InvalidParameterValue",
    ),
    (
        "receive: {queue: q, max: 0}",
        34,
        "MaxNumberOfMessages: 1 to 10",
        "InvalidParameterValue",
    ),
    (
        "send: {queue: q, body: y, delay: 901s}",
        42,
        "DelaySeconds: 0 to 900 seconds",
        "InvalidParameterValue",
    ),
    (
        "send: {queue: q, body_size: 1048577}",
        37,
        "MessageBody: 1 to 1048576 bytes",
        "InvalidParameterValue",
    ),
    (
        "send: {queue: q, body_size: 0}",
        37,
        "MessageBody: 1 to 1048576 bytes",
        "InvalidParameterValue",
    ),
    (
        "change-visibility: {attempt: A, timeout: 43201s}",
        50,
        "VisibilityTimeout: 0 to 43200 seconds",
        "InvalidParameterValue",
    ),
    (
        "list-queues: {max_results: 1001}",
        36,
        "MaxResults: 1 to 1000",
        "InvalidParameterValue",
    ),
    (
        "create-queue: {queue: n, retention: 59s}",
        45,
        "MessageRetentionPeriod: 60 to 1209600 seconds",
        "InvalidAttributeValue",
    ),
    (
        "create-queue: {queue: n, max_message_size: 1023}",
        52,
        "MaximumMessageSize: 1024 to 1048576 bytes",
        "InvalidAttributeValue",
    ),
    (
        "create-queue: {queue: n, receive_wait: 21s}",
        48,
        "ReceiveMessageWaitTimeSeconds: 0 to 20 seconds",
        "InvalidAttributeValue",
    ),
];

#[test]
fn a_value_outside_sqs_range_is_refused_at_its_position() {
    for (step, col, range, code) in ONE_PAST {
        let err = only_error(&case("{}", &format!("      - {step}\n")));
        assert!(
            err.starts_with(&format!("10:{col}: ")),
            "{step}: at 10:{col}: {err}"
        );
        assert!(
            err.contains(&format!("outside what SQS accepts ({range}, API_")),
            "{step}: {err}"
        );
        assert!(
            err.contains(&format!("expect: {{error: {code}}}")),
            "{step}: the hint says how to test the refusal: {err}"
        );
    }
    // The message shows the value as written, and where AWS states the range.
    assert_eq!(
        only_error(&case(
            "{}",
            "      - receive: {queue: q, visibility_timeout: 43201s}\n"
        )),
        "10:49: `visibility_timeout` is 43201s, outside what SQS accepts (VisibilityTimeout: 0 \
         to 43200 seconds, API_ChangeMessageVisibility) (to test that SQS refuses it, expect the \
         refusal: `expect: {error: InvalidParameterValue}`)"
    );
}

#[test]
fn a_step_that_expects_the_refusal_may_send_it() {
    for (step, _, _, code) in ONE_PAST {
        let src = case(
            "{}",
            &format!("      - {step}\n        expect: {{error: {code}, status: 400}}\n"),
        );
        parse(&src).unwrap_or_else(|e| panic!("{step}: {e:#?}"));
        // A status of 400 alone says the same.
        let src = case(
            "{}",
            &format!("      - {step}\n        expect: {{status: 400}}\n"),
        );
        parse(&src).unwrap_or_else(|e| panic!("{step}: {e:#?}"));
    }
    // The value reaches the model as written.
    let suite = parse(&case(
        "{}",
        "      - receive: {queue: q, visibility_timeout: 43201s, max: 11}\n        \
         expect: {error: InvalidParameterValue}\n",
    ))
    .unwrap();
    let Action::Receive(r) = &suite.cases[0].steps[2].action else {
        panic!()
    };
    assert_eq!(r.visibility_timeout, Some(Duration::from_secs(43_201)));
    assert_eq!(r.max, Some(11));
    // A batch entry SQS refuses is expected with `failed:`.
    parse(&case(
        "{}",
        "      - send-batch: {queue: q, entries: [{id: a, body: y, delay: 901s}]}\n        \
         expect: {failed: [{id: a, code: InvalidParameterValue}]}\n",
    ))
    .unwrap();
    // A 200 expects no refusal.
    let err = only_error(&case(
        "{}",
        "      - receive: {queue: q, wait: 21s}\n        expect: {status: 200}\n",
    ));
    assert!(err.starts_with("10:35: "), "{err}");
}

#[test]
fn a_value_no_request_can_carry_is_refused_even_when_the_refusal_is_expected() {
    let expect = "        expect: {error: InvalidParameterValue}\n";
    // 2^32 seconds: sent as a 32-bit number it would wrap to 0, a valid timeout.
    let err = only_error(&case(
        "{}",
        &format!("      - receive: {{queue: q, visibility_timeout: 4294967296s}}\n{expect}"),
    ));
    assert_eq!(
        err,
        "10:49: `visibility_timeout` is 4294967296s, which no request can carry: \
         VisibilityTimeout is a 32-bit number (at most 2147483647s) (SQS accepts \
         VisibilityTimeout: 0 to 43200 seconds; one past the end (43201s) is enough to test its \
         refusal)"
    );
    for (step, col) in [
        ("receive: {queue: q, max: 2147483648}", 34),
        ("receive: {queue: q, max: -2147483649}", 34),
        ("send: {queue: q, body: y, delay: 2147483648s}", 42),
        ("change-visibility: {attempt: A, timeout: 2147483648s}", 50),
        ("send: {queue: q, body_size: 2097153}", 37),
        ("create-queue: {queue: n, max_message_size: 2147483648}", 52),
    ] {
        let err = only_error(&case("{}", &format!("      - {step}\n{expect}")));
        assert!(err.starts_with(&format!("10:{col}: ")), "{step}: {err}");
    }
    // The largest 32-bit value itself can be sent, and the largest body the runner builds.
    for step in [
        "receive: {queue: q, visibility_timeout: 2147483647s}",
        "send: {queue: q, body_size: 2097152}",
    ] {
        parse(&case("{}", &format!("      - {step}\n{expect}"))).unwrap();
    }
}

#[test]
fn a_queue_the_harness_creates_is_always_in_range() {
    for (queue, col, range) in [
        (
            "{visibility_timeout: 43201s}",
            31,
            "VisibilityTimeout: 0 to 43200 seconds",
        ),
        ("{delay: 16m}", 18, "DelaySeconds: 0 to 900 seconds"),
        (
            "{retention: 15d}",
            22,
            "MessageRetentionPeriod: 60 to 1209600 seconds",
        ),
        (
            "{receive_wait: 1h}",
            25,
            "ReceiveMessageWaitTimeSeconds: 0 to 20 seconds",
        ),
        (
            "{max_message_size: 1048577}",
            29,
            "MaximumMessageSize: 1024 to 1048576 bytes",
        ),
    ] {
        let err = only_error(&case(queue, ""));
        assert!(err.starts_with(&format!("6:{col}: ")), "{queue}: {err}");
        assert!(err.contains(range), "{queue}: {err}");
        assert!(
            err.contains("create the queue in a `create-queue` step"),
            "{queue}: {err}"
        );
    }
    let err = only_error(
        "cases:\n  - id: c1\n    behaviour: b\n    source: s\n    queues:\n      d: {}\n      \
         q: {redrive: {dlq: d, max_receive_count: 1001}}\n    steps:\n      - send: {queue: q, body: x}\n",
    );
    assert!(
        err.starts_with("7:48: ") && err.contains("maxReceiveCount: 1 to 1000"),
        "{err}"
    );
    // The edges themselves are fine.
    parse(&case(
        "{visibility_timeout: 12h, delay: 15m, retention: 14d, receive_wait: 20s, \
         max_message_size: 1024}",
        "",
    ))
    .unwrap();
    parse(&case("{retention: 1m, max_message_size: 1048576}", "")).unwrap();
}

#[test]
fn the_ranges_read_as_aws_states_them() {
    for r in limits::ALL {
        assert!(r.min <= r.max, "{}", r.name);
        assert!(r.page().starts_with("API_"), "{}", r.source);
        assert!(r.max <= limits::WIRE_MAX, "{}", r.name);
        assert!(
            r.source
                .starts_with("https://docs.aws.amazon.com/AWSSimpleQueueService/"),
            "{}",
            r.source
        );
        assert!(
            ["InvalidParameterValue", "InvalidAttributeValue"].contains(&r.refused_with),
            "{}",
            r.name
        );
    }
    assert_eq!(
        limits::wire_seconds(Duration::from_secs(1 << 32)),
        i32::MAX,
        "saturates, never wraps"
    );
}

proptest! {
    #![proptest_config(sqsprobe_testing::config(256))]

    /// Whatever whole number of seconds the parser accepts on a step that expects SQS's
    /// refusal reaches the wire as written: the runner's 32-bit conversion never changes it.
    #[test]
    fn an_accepted_timeout_reaches_the_wire_as_written(secs in any::<u64>().prop_map(|s| s >> (s % 64))) {
        let src = case(
            "{}",
            &format!(
                "      - change-visibility: {{attempt: A, timeout: {secs}s}}\n        \
                 expect: {{error: InvalidParameterValue}}\n"
            ),
        );
        if let Ok(suite) = parse(&src) {
            let Action::ChangeVisibility { timeout, .. } = &suite.cases[0].steps[2].action else {
                panic!()
            };
            prop_assert_eq!(timeout.as_secs(), secs);
            prop_assert_eq!(i64::from(limits::wire_seconds(*timeout)), secs as i64);
        } else {
            prop_assert!(secs > limits::WIRE_MAX as u64, "{} refused", secs);
        }
    }
}
