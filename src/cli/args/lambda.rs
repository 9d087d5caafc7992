//! The flags of `sqsprobe audit --lambda`: the event source mapping's settings
//! (docs/audit.md#lambda).

use super::values::{parse_duration, parse_positive_duration};
use clap::Args;

/// `--lambda` and the mapping's settings, flattened into `audit`'s flags.
#[derive(Debug, Args, Clone)]
#[command(next_help_heading = "Lambda")]
pub struct LambdaArgs {
    /// Audit a Lambda function's SQS handler: COMMAND is its runtime (for example `python -m
    /// awslambdaric app.handler`), given AWS_LAMBDA_RUNTIME_API; sqsprobe serves the Runtime API
    /// and plays the event source mapping against the emulator (batches, deletes, partial batch
    /// responses, FIFO, redrive), judging the history with the audit's checks and the Lambda
    /// findings. Writes lambda.json beside audit.json.
    #[arg(long, conflicts_with = "nemesis")]
    pub lambda: bool,

    /// The mapping's BatchSize: at most this many records per invocation (1 to 10000; at most
    /// 10 on a FIFO queue; above 10 only with --batching-window of at least 1s).
    #[arg(long, value_name = "N", default_value_t = 10, requires = "lambda",
          value_parser = clap::builder::RangedU64ValueParser::<u32>::new().range(1..=10_000))]
    pub batch_size: u32,

    /// The mapping's MaximumBatchingWindowInSeconds: how long it keeps gathering records for a
    /// batch after the first (0 to 300s).
    #[arg(long, value_name = "DURATION", default_value = "0s", requires = "lambda", value_parser = parse_duration)]
    pub batching_window: std::time::Duration,

    /// FunctionResponseTypes ReportBatchItemFailures: read the function's
    /// `{"batchItemFailures": [{"itemIdentifier": messageId}]}` and return only those records.
    #[arg(long, requires = "lambda")]
    pub report_batch_item_failures: bool,

    /// The function's timeout; an invocation not answered by then fails its whole batch. At
    /// most the queue's visibility timeout (the mapping is refused otherwise, as AWS refuses
    /// it), and AWS advises a sixth of it.
    #[arg(long, value_name = "DURATION", default_value = "3s", requires = "lambda", value_parser = parse_positive_duration)]
    pub function_timeout: std::time::Duration,

    /// Concurrent batches, each in an execution environment of its own (COMMAND started this
    /// many times).
    #[arg(long, value_name = "N", default_value_t = 1, requires = "lambda",
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
