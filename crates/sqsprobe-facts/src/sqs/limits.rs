//! The ranges SQS accepts for the numbers a request carries, stated once, each with the AWS
//! page that states it. The suite parser refuses a value outside its range where a suite
//! writes it (unless the step tests SQS's refusal of it), and the emulator refuses one as SQS
//! does, both from this table.
//!
//! Every number of the SQS API is a Smithy `Integer`, a 32-bit signed whole number in every
//! SDK ([`WIRE_MAX`]): a value beyond it cannot be sent at all, whatever a step expects.

/// What a number counts, for messages (`43200 seconds`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    /// A duration in whole seconds.
    Seconds,
    /// A size in bytes.
    Bytes,
    /// Messages, receives, results: a plain count.
    Count,
}

/// One numeric parameter or attribute of the SQS API and the range SQS accepts for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Range {
    /// Its name in the API (`VisibilityTimeout`, `maxReceiveCount`).
    pub name: &'static str,
    /// The least value SQS accepts.
    pub min: i64,
    /// The greatest value SQS accepts.
    pub max: i64,
    /// What the number counts.
    pub unit: Unit,
    /// The error code SQS answers a value outside the range with.
    pub refused_with: &'static str,
    /// The AWS page that states the range.
    pub source: &'static str,
}

impl Range {
    /// Whether SQS accepts `value`.
    pub fn contains(&self, value: i64) -> bool {
        (self.min..=self.max).contains(&value)
    }

    /// The AWS page's name (`API_ReceiveMessage`), as messages cite it.
    pub fn page(&self) -> &'static str {
        let file = self.source.rsplit('/').next().unwrap_or(self.source);
        file.strip_suffix(".html").unwrap_or(file)
    }

    /// `VisibilityTimeout: 0 to 43200 seconds`.
    pub fn describe(&self) -> String {
        let unit = match self.unit {
            Unit::Seconds => " seconds",
            Unit::Bytes => " bytes",
            Unit::Count => "",
        };
        format!("{}: {} to {}{unit}", self.name, self.min, self.max)
    }
}

/// The largest number a request can carry: Smithy's `Integer`, 32-bit signed.
pub const WIRE_MAX: i64 = i32::MAX as i64;

/// ReceiveMessage's and ChangeMessageVisibility's `VisibilityTimeout`: "Values range: 0 to
/// 43200. Maximum: 12 hours" (API_ChangeMessageVisibility; API_ReceiveMessage).
pub const VISIBILITY_TIMEOUT: Range = Range {
    name: "VisibilityTimeout",
    min: 0,
    max: 43_200,
    unit: Unit::Seconds,
    refused_with: "InvalidParameterValue",
    source: "https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_ChangeMessageVisibility.html",
};

/// ReceiveMessage's `WaitTimeSeconds`: the long poll, 0 to 20 (API_ReceiveMessage).
pub const WAIT_TIME_SECONDS: Range = Range {
    name: "WaitTimeSeconds",
    min: 0,
    max: 20,
    unit: Unit::Seconds,
    refused_with: "InvalidParameterValue",
    source: "https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_ReceiveMessage.html",
};

/// ReceiveMessage's `MaxNumberOfMessages`: "Valid values: 1 to 10" (API_ReceiveMessage).
pub const MAX_NUMBER_OF_MESSAGES: Range = Range {
    name: "MaxNumberOfMessages",
    min: 1,
    max: 10,
    unit: Unit::Count,
    refused_with: "InvalidParameterValue",
    source: "https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_ReceiveMessage.html",
};

/// SendMessage's `DelaySeconds`: "Valid values: 0 to 900. Maximum: 15 minutes"
/// (API_SendMessage).
pub const DELAY_SECONDS: Range = Range {
    name: "DelaySeconds",
    min: 0,
    max: 900,
    unit: Unit::Seconds,
    refused_with: "InvalidParameterValue",
    source: "https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_SendMessage.html",
};

/// A message body: "The minimum size is one character. The maximum size is 1 MiB or
/// 1,048,576 bytes" (API_SendMessage, `MessageBody`).
pub const MESSAGE_BODY: Range = Range {
    name: "MessageBody",
    min: 1,
    max: 1_048_576,
    unit: Unit::Bytes,
    refused_with: "InvalidParameterValue",
    source: "https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_SendMessage.html",
};

/// ListQueues' `MaxResults`: "Value range is 1 to 1000" (API_ListQueues).
pub const LIST_QUEUES_MAX_RESULTS: Range = Range {
    name: "MaxResults",
    min: 1,
    max: 1000,
    unit: Unit::Count,
    refused_with: "InvalidParameterValue",
    source: "https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_ListQueues.html",
};

/// StartMessageMoveTask's `MaxNumberOfMessagesPerSecond`: "The maximum value for messages per
/// second is 500" (API_StartMessageMoveTask).
pub const MAX_MESSAGES_PER_SECOND: Range = Range {
    name: "MaxNumberOfMessagesPerSecond",
    min: 1,
    max: 500,
    unit: Unit::Count,
    refused_with: "InvalidParameterValue",
    source: "https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_StartMessageMoveTask.html",
};

/// The queue attribute `VisibilityTimeout`: "An integer from 0 to 43,200 (12 hours)"
/// (API_CreateQueue, API_SetQueueAttributes).
pub const QUEUE_VISIBILITY_TIMEOUT: Range = Range {
    name: "VisibilityTimeout",
    refused_with: "InvalidAttributeValue",
    source: "https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_CreateQueue.html",
    ..VISIBILITY_TIMEOUT
};

/// The queue attribute `DelaySeconds`: "An integer from 0 to 900 seconds (15 minutes)"
/// (API_CreateQueue).
pub const QUEUE_DELAY_SECONDS: Range = Range {
    name: "DelaySeconds",
    refused_with: "InvalidAttributeValue",
    source: "https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_CreateQueue.html",
    ..DELAY_SECONDS
};

/// The queue attribute `MessageRetentionPeriod`: "An integer from 60 seconds (1 minute) to
/// 1,209,600 seconds (14 days)" (API_CreateQueue).
pub const MESSAGE_RETENTION_PERIOD: Range = Range {
    name: "MessageRetentionPeriod",
    min: 60,
    max: 1_209_600,
    unit: Unit::Seconds,
    refused_with: "InvalidAttributeValue",
    source: "https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_CreateQueue.html",
};

/// The queue attribute `ReceiveMessageWaitTimeSeconds`: "An integer from 0 to 20 (seconds)"
/// (API_CreateQueue).
pub const RECEIVE_MESSAGE_WAIT_TIME_SECONDS: Range = Range {
    name: "ReceiveMessageWaitTimeSeconds",
    refused_with: "InvalidAttributeValue",
    source: "https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_CreateQueue.html",
    ..WAIT_TIME_SECONDS
};

/// The queue attribute `MaximumMessageSize`: "An integer from 1,024 bytes (1 KiB) up to
/// 1,048,576 bytes (1 MiB)" (API_CreateQueue; 1 MiB since August 2025).
pub const MAXIMUM_MESSAGE_SIZE: Range = Range {
    name: "MaximumMessageSize",
    min: 1024,
    max: 1_048_576,
    unit: Unit::Bytes,
    refused_with: "InvalidAttributeValue",
    source: "https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_CreateQueue.html",
};

/// A `RedrivePolicy`'s `maxReceiveCount`: "The number of times a message is delivered to the
/// source queue before being moved to the dead-letter queue. Default: 10. When the
/// ReceiveCount for a message exceeds the maxReceiveCount …"; SQS refuses values outside 1 to
/// 1000 (API_SetQueueAttributes; recorded in `suites/conformance/dead-letter.yaml`).
pub const MAX_RECEIVE_COUNT: Range = Range {
    name: "maxReceiveCount",
    min: 1,
    max: 1000,
    unit: Unit::Count,
    refused_with: "InvalidAttributeValue",
    source: "https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_SetQueueAttributes.html",
};

/// Every range, for the docs' table and the tests that tie readers to it.
pub const ALL: &[&Range] = &[
    &VISIBILITY_TIMEOUT,
    &WAIT_TIME_SECONDS,
    &MAX_NUMBER_OF_MESSAGES,
    &DELAY_SECONDS,
    &MESSAGE_BODY,
    &LIST_QUEUES_MAX_RESULTS,
    &MAX_MESSAGES_PER_SECOND,
    &QUEUE_VISIBILITY_TIMEOUT,
    &QUEUE_DELAY_SECONDS,
    &MESSAGE_RETENTION_PERIOD,
    &RECEIVE_MESSAGE_WAIT_TIME_SECONDS,
    &MAXIMUM_MESSAGE_SIZE,
    &MAX_RECEIVE_COUNT,
];

/// `d` in whole seconds as a request carries it. The suite parser refuses a value beyond
/// [`WIRE_MAX`] where it is written, so the saturation here never changes a value a suite
/// wrote; it only keeps a value computed at run time from wrapping around.
pub fn wire_seconds(d: std::time::Duration) -> i32 {
    i32::try_from(d.as_secs()).unwrap_or(i32::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// docs/suite-format.md's table of the numbers SQS takes names every range as stated here.
    #[test]
    fn the_suite_format_lists_every_range() {
        let page = include_str!("../../../../docs/suite-format.md");
        for r in ALL {
            let span = format!("{} to {}", r.min, r.max);
            assert!(
                page.lines().any(|l| l.starts_with('|')
                    && l.contains(&format!("`{}`", r.name))
                    && l.contains(&span)
                    && l.contains(r.page())),
                "docs/suite-format.md has no row for {} ({span}, {})",
                r.name,
                r.page()
            );
        }
    }
}
