//! The Lambda part of an audit's judgement and folder (pure): the Lambda findings added to the
//! audit ([`super::findings`]), and `lambda.json` — the mapping's settings, the queue as the
//! mapping read it, each invocation (its records by MessageId and business key, how it ended,
//! which records returned) and the runtime's init errors.

use super::findings::{self, Context};
use super::mapping::{Invocation, Source};
use super::settings::Settings;
use crate::audit::judge::Audit;

/// Adds the Lambda findings to `audit`; the text of `lambda.json`.
pub fn apply(
    audit: &mut Audit,
    invocations: &[Invocation],
    source: &Source,
    settings: Settings,
    init_errors: &[String],
) -> String {
    let ctx = Context {
        settings,
        fifo: source.fifo,
        dead_letter: source.dead_letter,
        visibility_timeout_s: source.visibility_timeout_s,
    };
    let found = findings::findings(invocations, audit, &ctx);
    findings::apply(audit, found);
    let outcomes = invocations.iter().fold(
        std::collections::BTreeMap::<&str, u32>::new(),
        |mut m, i| {
            *m.entry(i.outcome).or_default() += 1;
            m
        },
    );
    let value = serde_json::json!({
        "settings": {
            "batch_size": settings.batch_size,
            "batching_window_ms": settings.batching_window.as_millis() as u64,
            "report_batch_item_failures": settings.report_batch_item_failures,
            "function_timeout_ms": settings.function_timeout.as_millis() as u64,
            "concurrency": settings.concurrency,
        },
        "queue": {
            "fifo": source.fifo,
            "dead_letter": source.dead_letter,
            "visibility_timeout_s": source.visibility_timeout_s,
        },
        "outcomes": outcomes,
        "invocations": invocations,
        "init_errors": init_errors,
    });
    let mut text = serde_json::to_string_pretty(&value).unwrap_or_else(|_| "{}".into());
    text.push('\n');
    text
}
