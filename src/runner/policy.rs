//! How long a call may take and how often it is retried, and when the target counts as lost.
//!
//! A hung target must not stretch a run much past its cases' deadlines, so no call waits a flat
//! 25 s: each attempt's timeout follows from the call (a receive may take its long-poll wait
//! plus the call timeout, anything else the call timeout), the harness's own calls (creates,
//! ownership checks, teardown) retry a few times with a short backoff, and once enough calls
//! in a row got no response at all the run declares the target lost: it starts no new case,
//! and teardown tries each delete once.

use aws_sdk_sqs::config::retry::RetryConfig;
use aws_sdk_sqs::config::timeout::TimeoutConfig;
use sqsprobe_core::evidence::format::{Call, Completion, Phase};
use sqsprobe_core::suite::model::RetryPolicy;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// How many calls in a row may get no response before the target counts as lost
/// (`--lost-after`).
pub(crate) const DEFAULT_LOST_AFTER: u32 = 5;

/// Connecting is part of every attempt; a target that does not accept a connection in this
/// long is not there.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(3);

/// Attempts of the harness's own calls (setup, teardown) while the target answers.
const HARNESS_ATTEMPTS: u32 = 3;

/// The per-call configuration override for a call of `phase`: `single_attempt` once the run
/// is ending (a lost target, a signal), so every call, teardown's included, is one attempt
/// bounded by the attempt timeout.
pub(crate) fn call_config(
    phase: Phase,
    case_retries: RetryPolicy,
    wait: Option<Duration>,
    call_timeout: Duration,
    single_attempt: bool,
) -> aws_sdk_sqs::config::Builder {
    let retry = match phase {
        _ if single_attempt => RetryConfig::disabled(),
        // The runner never makes a consumer's calls; like a step's, they follow the case.
        Phase::Step | Phase::Observe | Phase::Consumer => match case_retries {
            RetryPolicy::None => RetryConfig::disabled(),
            RetryPolicy::Standard => RetryConfig::standard(),
        },
        Phase::Setup | Phase::Teardown => RetryConfig::standard()
            .with_max_attempts(HARNESS_ATTEMPTS)
            .with_initial_backoff(Duration::from_millis(200))
            .with_max_backoff(Duration::from_secs(1)),
    };
    aws_sdk_sqs::config::Builder::default()
        .retry_config(retry)
        .timeout_config(
            TimeoutConfig::builder()
                .connect_timeout(CONNECT_TIMEOUT)
                .operation_attempt_timeout(attempt_timeout(wait, call_timeout))
                .build(),
        )
}

/// The longest one attempt may take: a receive's long-poll wait plus the call timeout, or
/// the call timeout.
pub(crate) fn attempt_timeout(wait: Option<Duration>, call_timeout: Duration) -> Duration {
    wait.unwrap_or_default() + call_timeout
}

/// Counts calls in a row that got no response, to tell a lost target from a slow one.
#[derive(Debug)]
pub(crate) struct Health {
    lost_after: u32,
    /// (calls in a row without a response, the last one's description)
    silent: Mutex<(u32, String)>,
}

impl Health {
    pub(crate) fn new(lost_after: u32) -> Health {
        Health {
            lost_after: lost_after.max(1),
            silent: Mutex::new((0, String::new())),
        }
    }

    /// Notes one call: `Some(description)` when it got no response at all. Returns why the
    /// target is lost, the first time the calls in a row without a response reach the limit.
    pub(crate) fn note(&self, no_response: Option<&str>) -> Option<String> {
        let mut silent = self.silent.lock().ok()?;
        match no_response {
            None => {
                silent.0 = 0;
                None
            }
            Some(what) => {
                silent.0 += 1;
                silent.1 = what.to_string();
                (silent.0 == self.lost_after).then(|| {
                    format!(
                        "{} calls in a row got no response (the last: {})",
                        silent.0, silent.1
                    )
                })
            }
        }
    }
}

/// The run's SQS requests (every attempt that reached the target is one: see
/// [`sqsprobe_facts::sqs::pricing::billed`]), split by the rate they are billed at, and the request
/// budget (`--max-requests`).
#[derive(Debug, Default)]
pub(crate) struct Usage {
    standard: AtomicU64,
    fifo: AtomicU64,
    max: Option<u64>,
}

impl Usage {
    pub(crate) fn new(max: Option<u64>) -> Usage {
        Usage {
            max,
            ..Usage::default()
        }
    }

    /// Counts a call's attempts. Returns true when this call spent the budget (once).
    pub(crate) fn add(&self, rows: &[Call]) -> bool {
        let before = self.total();
        for row in rows.iter().filter(|r| {
            sqsprobe_facts::sqs::pricing::billed(
                r.fault.as_ref().map(|f| f.kind.as_str()),
                r.http_status,
                r.completion == Completion::Fail,
            )
        }) {
            let counter =
                if sqsprobe_facts::sqs::pricing::fifo_billed(&row.action, row.queue.as_deref()) {
                    &self.fifo
                } else {
                    &self.standard
                };
            counter.fetch_add(1, Ordering::Relaxed);
        }
        let after = self.total();
        self.max.is_some_and(|max| before < max && after >= max)
    }

    /// (standard, FIFO) requests so far.
    pub(crate) fn counts(&self) -> (u64, u64) {
        (
            self.standard.load(Ordering::Relaxed),
            self.fifo.load(Ordering::Relaxed),
        )
    }

    fn total(&self) -> u64 {
        let (s, f) = self.counts();
        s + f
    }

    /// The budget, if any.
    pub(crate) fn max(&self) -> Option<u64> {
        self.max
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn attempts_wait_their_long_poll_plus_the_call_timeout() {
        let t = Duration::from_secs(6);
        assert_eq!(attempt_timeout(None, t), t);
        assert_eq!(
            attempt_timeout(Some(Duration::from_secs(20)), t),
            Duration::from_secs(26)
        );
    }

    #[test]
    fn the_target_is_lost_after_enough_silent_calls_in_a_row_once() {
        let h = Health::new(3);
        assert_eq!(h.note(Some("timeout")), None);
        assert_eq!(h.note(Some("timeout")), None);
        // An answer in between starts the count again.
        assert_eq!(h.note(None), None);
        assert_eq!(h.note(Some("timeout")), None);
        assert_eq!(h.note(Some("refused")), None);
        let lost = h.note(Some("reset")).expect("lost on the third");
        assert!(
            lost.contains("3 calls in a row") && lost.contains("reset"),
            "{lost}"
        );
        assert_eq!(h.note(Some("reset")), None, "said once");
    }

    #[test]
    fn usage_counts_attempts_by_rate_and_says_once_when_the_budget_is_spent() {
        let row = |action: &str, queue: &str| {
            let mut c = sqsprobe_core::evidence::fixtures::call("c", Phase::Step, action, 0, 1);
            c.queue = Some(queue.to_string());
            c
        };
        let u = Usage::new(Some(3));
        assert!(!u.add(&[row("SendMessage", "q.fifo"), row("GetQueueUrl", "q.fifo")]));
        assert!(u.add(&[row("ReceiveMessage", "q")]));
        assert!(!u.add(&[row("DeleteMessage", "q")]), "said once");
        assert_eq!(u.counts(), (3, 1));
        assert!(!Usage::new(None).add(&[row("SendMessage", "q")]));
    }

    /// What never reached the target is not billed (nor counted to the budget).
    #[test]
    fn attempts_that_never_reached_the_target_are_not_counted() {
        use sqsprobe_core::evidence::format::{Completion, FaultEvidence};
        let row = |status: Option<u16>, completion: Completion, fault: Option<&str>| {
            let mut c =
                sqsprobe_core::evidence::fixtures::call("c", Phase::Step, "SendMessage", 0, 1);
            c.http_status = status;
            c.completion = completion;
            c.fault = fault.map(|kind| FaultEvidence {
                kind: kind.to_string(),
                scope: "step".to_string(),
                delay_ms: None,
                status: None,
                code: None,
            });
            c
        };
        let u = Usage::new(None);
        u.add(&[
            // A refused connection, an injected reset, throttle and error: never sent.
            row(None, Completion::Fail, None),
            row(None, Completion::Fail, Some("reset")),
            row(Some(400), Completion::Fail, Some("throttle")),
            row(Some(500), Completion::Info, Some("error")),
        ]);
        assert_eq!(u.counts(), (0, 0));
        u.add(&[
            // Answered; an answer lost on the way back; a timeout: each may have been billed.
            row(Some(200), Completion::Ok, None),
            row(Some(200), Completion::Info, Some("lose-response")),
            row(None, Completion::Info, Some("timeout")),
            row(Some(400), Completion::Fail, None),
        ]);
        assert_eq!(u.counts(), (4, 0));
    }

    #[test]
    fn harness_calls_stop_retrying_once_the_target_is_lost() {
        let cfg = call_config(
            Phase::Teardown,
            RetryPolicy::None,
            None,
            Duration::from_secs(6),
            true,
        )
        .build();
        assert_eq!(cfg.retry_config().map(|r| r.max_attempts()), Some(1));
        let cfg = call_config(
            Phase::Teardown,
            RetryPolicy::None,
            None,
            Duration::from_secs(6),
            false,
        )
        .build();
        assert_eq!(cfg.retry_config().map(|r| r.max_attempts()), Some(3));
    }
}
