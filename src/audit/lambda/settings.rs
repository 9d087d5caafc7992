//! The event source mapping's settings (`--batch-size`, `--batching-window`,
//! `--report-batch-item-failures`, `--function-timeout`, `--concurrency`) and the checks
//! CreateEventSourceMapping makes of them (pure).
//!
//! What AWS validates, as documented:
//! - `BatchSize` 1 to 10,000 for a standard queue, at most 10 for a FIFO queue, and above 10
//!   only with `MaximumBatchingWindowInSeconds` of at least 1 (CreateEventSourceMapping);
//! - `MaximumBatchingWindowInSeconds` 0 to 300 (the same page);
//! - the function's timeout at most the queue's visibility timeout: "Lambda validates this
//!   requirement when you create or update an event source mapping and will return an error if
//!   the function timeout exceeds the queue's visibility timeout" ("Creating and configuring an
//!   Amazon SQS event source mapping"), which is checked against the queue once it exists.
//!
//! The emulation takes a function timeout in any unit (Lambda takes whole seconds, 1 to 900) so
//! that an audit with short leases stays fast; `--concurrency` is the number of execution
//! environments and concurrent batches (Lambda's own scaling, five pollers and up, is not
//! modelled: AWS documents its shape, not its timing).

use std::time::Duration;

/// How the mapping is set up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Settings {
    pub batch_size: u32,
    pub batching_window: Duration,
    pub report_batch_item_failures: bool,
    pub function_timeout: Duration,
    pub concurrency: u32,
}

/// The largest batching window CreateEventSourceMapping accepts.
pub(crate) const MAX_WINDOW: Duration = Duration::from_secs(300);

/// The longest function timeout Lambda accepts.
pub(crate) const MAX_FUNCTION_TIMEOUT: Duration = Duration::from_secs(900);

/// AWS's advice: the queue's visibility timeout at least six times the function's timeout.
pub(crate) const ADVISED_RATIO: u32 = 6;

impl Settings {
    /// The checks CreateEventSourceMapping makes before it looks at the queue: `Err` is the
    /// refusal, one line.
    pub fn check(&self, fifo: bool) -> Result<(), String> {
        if fifo && self.batch_size > 10 {
            return Err(format!(
                "--batch-size {} is refused for a FIFO queue: CreateEventSourceMapping takes at most 10",
                self.batch_size
            ));
        }
        if self.batch_size > 10 && self.batching_window < Duration::from_secs(1) {
            return Err(format!(
                "--batch-size {} needs --batching-window of at least 1s: CreateEventSourceMapping \
                 refuses a batch size above 10 without a batching window",
                self.batch_size
            ));
        }
        if self.batching_window > MAX_WINDOW {
            return Err("--batching-window is at most 300s (CreateEventSourceMapping)".into());
        }
        if self.function_timeout.is_zero() || self.function_timeout > MAX_FUNCTION_TIMEOUT {
            return Err("--function-timeout is more than 0 and at most 900s (Lambda)".into());
        }
        Ok(())
    }

    /// The check against the queue: the function's timeout may not exceed the visibility
    /// timeout. `Err` is AWS's refusal, worded as Lambda words it.
    pub fn check_queue(&self, visibility_timeout_s: u64) -> Result<(), String> {
        if self.function_timeout > Duration::from_secs(visibility_timeout_s) {
            // Lambda's words take whole seconds; a timeout with a fraction is shown as it was given.
            let timeout = if self.function_timeout.subsec_nanos() == 0 {
                format!("{} seconds", self.function_timeout.as_secs())
            } else {
                sqsprobe_facts::duration::format(self.function_timeout)
            };
            return Err(format!(
                "the event source mapping is refused, as CreateEventSourceMapping refuses it: \
                 Queue visibility timeout: {visibility_timeout_s} seconds is less than Function \
                 timeout: {timeout}"
            ));
        }
        Ok(())
    }

    /// Whether the visibility timeout is below AWS's advice of six function timeouts.
    pub fn near_visibility(&self, visibility_timeout_s: u64) -> bool {
        Duration::from_secs(visibility_timeout_s) < self.function_timeout * ADVISED_RATIO
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings() -> Settings {
        Settings {
            batch_size: 10,
            batching_window: Duration::ZERO,
            report_batch_item_failures: true,
            function_timeout: Duration::from_secs(3),
            concurrency: 1,
        }
    }

    #[test]
    fn create_event_source_mapping_refuses_what_aws_refuses() {
        assert!(settings().check(false).is_ok());
        assert!(settings().check(true).is_ok());
        let big = Settings {
            batch_size: 11,
            ..settings()
        };
        assert!(big.check(true).unwrap_err().contains("FIFO"));
        assert!(big.check(false).unwrap_err().contains("batching-window"));
        let windowed = Settings {
            batching_window: Duration::from_secs(1),
            ..big
        };
        assert!(windowed.check(false).is_ok());
        let long = Settings {
            batching_window: Duration::from_secs(301),
            ..settings()
        };
        assert!(long.check(false).is_err());
    }

    #[test]
    fn the_function_timeout_may_not_exceed_the_visibility_timeout() {
        let s = settings();
        assert!(s.check_queue(3).is_ok());
        let refused = s.check_queue(2).unwrap_err();
        assert!(
            refused.contains(
                "Queue visibility timeout: 2 seconds is less than Function timeout: 3 seconds"
            ),
            "{refused}"
        );
        assert!(s.near_visibility(17));
        assert!(!s.near_visibility(18));
    }
}
