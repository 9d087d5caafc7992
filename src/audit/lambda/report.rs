//! The Lambda part of an audit's judgement and folder (pure): the Lambda findings added to the
//! audit ([`super::findings`]), and `lambda.json` — the mapping's settings, the queue as the
//! mapping read it, each invocation (its records by MessageId and business key, how it ended,
//! which records returned) and the runtime's init errors.

use super::findings::{self, Context};
use super::invocation::{Invocation, LambdaFacts};
use crate::audit::judge::Audit;

/// Adds the Lambda findings to `audit`, judged from the invocations and the mapping's facts
/// as the evidence holds them; the text of `lambda.json`.
pub(crate) fn apply(audit: &mut Audit, invocations: &[Invocation], facts: &LambdaFacts) -> String {
    let settings = facts.settings();
    let ctx = Context {
        settings,
        fifo: facts.fifo,
        dead_letter: facts.dead_letter,
        visibility_timeout_s: facts.visibility_timeout_s,
    };
    let found = findings::findings(invocations, audit, &ctx);
    findings::apply(audit, found);
    let outcomes = invocations.iter().fold(
        std::collections::BTreeMap::<&str, u32>::new(),
        |mut m, i| {
            *m.entry(i.outcome.as_str()).or_default() += 1;
            m
        },
    );
    let value = serde_json::json!({
        "settings": {
            "batch_size": facts.batch_size,
            "batching_window_ms": facts.batching_window_ms,
            "report_batch_item_failures": facts.report_batch_item_failures,
            "function_timeout_ms": facts.function_timeout_ms,
            "concurrency": facts.concurrency,
        },
        "queue": {
            "fifo": facts.fifo,
            "dead_letter": facts.dead_letter,
            "visibility_timeout_s": facts.visibility_timeout_s,
        },
        "outcomes": outcomes,
        "invocations": invocations,
        "init_errors": facts.init_errors,
    });
    let mut text = serde_json::to_string_pretty(&value).unwrap_or_else(|_| "{}".into());
    text.push('\n');
    text
}

/// The `lambda_facts` row of a mapping that ran with `settings` on `source`.
pub(crate) fn facts(
    settings: super::Settings,
    source: &super::mapping::Source,
    init_errors: Vec<String>,
) -> LambdaFacts {
    LambdaFacts {
        batch_size: settings.batch_size,
        batching_window_ms: settings.batching_window.as_millis() as u64,
        report_batch_item_failures: settings.report_batch_item_failures,
        function_timeout_ms: settings.function_timeout.as_millis() as u64,
        concurrency: settings.concurrency,
        fifo: source.fifo,
        dead_letter: source.dead_letter,
        visibility_timeout_s: source.visibility_timeout_s,
        init_errors,
    }
}
