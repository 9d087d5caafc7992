//! The flags of `sqsprobe audit --lambda`: the event source mapping's settings
//! (docs/audit.md#lambda).

use super::values::{parse_duration, parse_positive_duration};
use clap::Args;

/// `--lambda` and the mapping's settings, flattened into `audit`'s flags.
#[derive(Debug, Args, Clone)]
pub struct LambdaArgs {
    /// Audit a Lambda function's SQS handler: COMMAND is its runtime (for example `python -m
    /// awslambdaric app.handler`), given AWS_LAMBDA_RUNTIME_API; sqsprobe serves the Runtime API
    /// and plays the event source mapping against the emulator (batches, deletes, partial batch
    /// responses, FIFO, redrive), judging the history with the audit's checks and the Lambda
    /// findings. Writes lambda.json beside audit.json.
    #[arg(long, conflicts_with = "nemesis", help_heading = "Lambda")]
    pub lambda: bool,

    /// The mapping's BatchSize: at most this many records per invocation (1 to 10000; at most
    /// 10 on a FIFO queue; above 10 only with --batching-window of at least 1s).
    #[arg(long, value_name = "N", default_value_t = 10, requires = "lambda", help_heading = "Lambda",
          value_parser = clap::builder::RangedU64ValueParser::<u32>::new().range(1..=10_000))]
    pub batch_size: u32,

    /// The mapping's MaximumBatchingWindowInSeconds: how long it keeps gathering records for a
    /// batch after the first (0 to 300s).
    #[arg(long, value_name = "DURATION", default_value = "0s", requires = "lambda", help_heading = "Lambda", value_parser = parse_duration)]
    pub batching_window: std::time::Duration,

    /// FunctionResponseTypes ReportBatchItemFailures: read the function's
    /// `{"batchItemFailures": [{"itemIdentifier": messageId}]}` and return only those records.
    #[arg(long, requires = "lambda", help_heading = "Lambda")]
    pub report_batch_item_failures: bool,

    /// The function's timeout; an invocation not answered by then fails its whole batch. At
    /// most the queue's visibility timeout (the mapping is refused otherwise, as AWS refuses
    /// it), and AWS advises a sixth of it.
    #[arg(long, value_name = "DURATION", default_value = "3s", requires = "lambda", help_heading = "Lambda", value_parser = parse_positive_duration)]
    pub function_timeout: std::time::Duration,

    /// Concurrent batches, each in an execution environment of its own (COMMAND started this
    /// many times).
    #[arg(long, value_name = "N", default_value_t = 1, requires = "lambda", help_heading = "Lambda",
          value_parser = clap::builder::RangedU64ValueParser::<u32>::new().range(1..=64))]
    pub concurrency: u32,
}

impl LambdaArgs {
    /// The mapping's settings, under `--lambda`.
    pub fn settings(&self) -> Option<crate::audit::lambda::Settings> {
        self.lambda.then_some(crate::audit::lambda::Settings {
            batch_size: self.batch_size,
            batching_window: self.batching_window,
            report_batch_item_failures: self.report_batch_item_failures,
            function_timeout: self.function_timeout,
            concurrency: self.concurrency,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::super::{Cli, Command};
    use clap::Parser;

    fn parse(args: &[&str]) -> Result<Cli, clap::Error> {
        Cli::try_parse_from(["sqsprobe", "audit"].iter().chain(args).chain(&["--", "f"]))
    }

    #[test]
    fn the_mapping_flags_need_lambda_and_lambda_refuses_the_nemesis() {
        assert!(parse(&["--batch-size", "3"]).is_err());
        assert!(parse(&["--report-batch-item-failures"]).is_err());
        assert!(parse(&["--lambda", "--nemesis", "kill"]).is_err());
        assert!(parse(&["--lambda", "--batch-size", "0"]).is_err());
        let Ok(Cli {
            command: Command::Audit(audit),
            ..
        }) = parse(&[
            "--lambda",
            "--batch-size",
            "3",
            "--function-timeout",
            "500ms",
        ])
        else {
            panic!("parses");
        };
        let s = audit.lambda.settings().expect("--lambda");
        assert_eq!((s.batch_size, s.concurrency), (3, 1));
        assert_eq!(s.function_timeout, std::time::Duration::from_millis(500));
        assert!(!s.report_batch_item_failures);
    }
}
