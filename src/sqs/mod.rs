//! Facts about Amazon SQS itself, shared by the emulator (which answers like SQS) and the runner
//! (which reads SQS's answers): the table of SQS errors, the IAM action of each operation, what
//! requests cost, how a queue ARN reads, and which hosts are AWS.

pub mod arn;
pub mod endpoint;
pub mod errors;
pub mod iam;
pub mod pricing;

pub use errors::{
    AUTH_CODES, ERRORS, ErrorSpec, THROTTLING_CODES, by_code, by_query_code, by_shape, is_auth,
    is_throttling,
};
