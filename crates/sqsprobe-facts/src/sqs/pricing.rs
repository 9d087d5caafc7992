//! What SQS requests cost, to print next to a run's request count.
//!
//! SQS bills per request: $0.40 per million for standard queues and $0.50 per million for FIFO
//! queues (send, receive, delete and change-visibility on a FIFO queue; every other action at
//! the standard rate), in us-east-1, as published on the SQS pricing page and checked
//! 2026-06. The first million requests of every month are free per account; a run does not
//! know how much of that allowance is left, so the estimate assumes none. Each 64 KiB chunk
//! of a payload is billed as one request: a run counts API requests, so for the suites'
//! large-message cases (up to 1 MiB, 16 chunks) the estimate is a lower bound.

/// US dollars per million requests on standard queues.
pub const STANDARD_PER_MILLION: f64 = 0.40;
/// US dollars per million FIFO requests.
pub const FIFO_PER_MILLION: f64 = 0.50;
/// The region whose prices these are, and when they were read.
pub const PRICES_REGION: &str = "us-east-1";
/// When the prices were read from AWS's pricing page.
pub const PRICES_AS_OF: &str = "as published 2026-06";

/// Whether a request of `action` on `queue` (a queue name) is billed at the FIFO rate.
pub fn fifo_billed(action: &str, queue: Option<&str>) -> bool {
    queue.is_some_and(|q| q.ends_with(".fifo"))
        && super::operations::by_name(action).is_some_and(|o| o.fifo_billed)
}

/// What `standard` and `fifo` requests would cost, in US dollars, with no free allowance left.
pub fn cost_usd(standard: u64, fifo: u64) -> f64 {
    (standard as f64 * STANDARD_PER_MILLION + fifo as f64 * FIFO_PER_MILLION) / 1_000_000.0
}

/// Whether a recorded attempt reached the target, and so is billed: not one that never left
/// (a refused connection, an injected reset) nor one sqsprobe answered itself (an injected
/// throttle or error). One whose answer was lost or timed out may have reached it: counted.
///
/// Takes the attempt's facts rather than its evidence row, so that this leaf imports nothing
/// above it: `injected` is the kind of fault sqsprobe injected (`throttle`, `reset`, ...),
/// `http_status` the status that came back, `failed` whether its completion is `fail`.
pub fn billed(injected: Option<&str>, http_status: Option<u16>, failed: bool) -> bool {
    let answered_locally = injected.is_some_and(|k| matches!(k, "throttle" | "error" | "reset"));
    let never_sent = http_status.is_none() && failed;
    !answered_locally && !never_sent
}

/// The cost line of a run in `region`: `1,234 SQS requests (12 FIFO) ≈ $0.000494 at AWS list
/// prices (...)`. Only us-east-1's prices are known here: a run in another region says its
/// estimate is at us-east-1's.
pub fn cost_line(standard: u64, fifo: u64, region: &str) -> String {
    let total = standard + fifo;
    let fifo_part = if fifo > 0 {
        format!(" ({} FIFO)", thousands(fifo))
    } else {
        String::new()
    };
    let prices = if region == PRICES_REGION {
        format!("{PRICES_REGION}, {PRICES_AS_OF}")
    } else {
        format!("{PRICES_REGION}'s, {PRICES_AS_OF}; {region}'s may differ")
    };
    format!(
        "{} SQS request{}{fifo_part} ≈ ${:.6} at AWS list prices (${STANDARD_PER_MILLION:.2}/million standard, ${FIFO_PER_MILLION:.2}/million FIFO, {prices}; the monthly free million not assumed)",
        thousands(total),
        if total == 1 { "" } else { "s" },
        cost_usd(standard, fifo)
    )
}

fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fifo_rates_apply_to_message_actions_on_fifo_queues_only() {
        assert!(fifo_billed("SendMessage", Some("sqsprobe-r-c-q.fifo")));
        assert!(!fifo_billed(
            "GetQueueAttributes",
            Some("sqsprobe-r-c-q.fifo")
        ));
        assert!(!fifo_billed("SendMessage", Some("sqsprobe-r-c-q")));
        assert!(!fifo_billed("ListQueues", None));
    }

    /// Tied to the operations table: exactly the send, receive, delete and change-visibility
    /// operations (batches included) are billed at the FIFO rate on a FIFO queue.
    #[test]
    fn the_fifo_rate_applies_to_exactly_the_message_operations() {
        let billed: Vec<&str> = crate::sqs::operations::NAMES
            .iter()
            .copied()
            .filter(|op| fifo_billed(op, Some("q.fifo")))
            .collect();
        assert_eq!(
            billed,
            [
                "SendMessage",
                "SendMessageBatch",
                "ReceiveMessage",
                "DeleteMessage",
                "DeleteMessageBatch",
                "ChangeMessageVisibility",
                "ChangeMessageVisibilityBatch"
            ]
        );
    }

    #[test]
    fn attempts_that_reached_the_target_are_billed() {
        assert!(billed(None, Some(200), false));
        assert!(billed(None, Some(500), true));
        // Lost answer or timeout: may have reached it.
        assert!(billed(None, None, false));
        assert!(billed(Some("latency"), Some(200), false));
        assert!(billed(Some("lose-response"), None, false));
        // Never left, or answered by sqsprobe itself.
        assert!(!billed(None, None, true));
        assert!(!billed(Some("throttle"), Some(400), true));
        assert!(!billed(Some("error"), Some(500), true));
        assert!(!billed(Some("reset"), None, true));
    }

    #[test]
    fn costs_are_per_million_at_list_price() {
        assert_eq!(cost_usd(1_000_000, 0), 0.40);
        assert!((cost_usd(1_000_000, 1_000_000) - 0.90).abs() < 1e-12);
        let line = cost_line(1233, 1, "us-east-1");
        assert!(
            line.starts_with("1,234 SQS requests (1 FIFO) ≈ $0.000494"),
            "{line}"
        );
        assert!(line.contains("FIFO, us-east-1, as published"), "{line}");
        let elsewhere = cost_line(10, 0, "eu-west-1");
        assert!(
            elsewhere.contains("us-east-1's, as published 2026-06; eu-west-1's may differ"),
            "{elsewhere}"
        );
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1_000_000), "1,000,000");
    }
}
