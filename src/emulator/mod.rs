//! The embedded SQS-compatible emulator.
