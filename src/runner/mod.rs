//! The runner: owned queues, step execution through aws-sdk-sqs, and the event stream.
