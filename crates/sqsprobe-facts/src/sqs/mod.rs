//! Facts about Amazon SQS itself, shared by the emulator (which answers like SQS) and the runner
//! (which reads SQS's answers): the table of SQS errors, the IAM action of each operation, what
//! requests cost, how a queue ARN reads, which hosts are AWS, and the operations themselves
//! (`operations.rs`: the one list of them), the ranges SQS accepts for the numbers of a request
//! (`limits.rs`), the two wire protocols (`protocol.rs`), the query protocol's names for the
//! JSON protocol's members (`query_members.rs`), and how the query protocol's JSON form names
//! its lists (`query_json.rs`).

pub mod arn;
pub mod endpoint;
pub mod errors;
pub mod iam;
pub mod limits;
pub mod operations;
pub mod pricing;
pub mod protocol;
pub mod query_json;
pub mod query_members;

pub use errors::{
    AUTH_CODES, ERRORS, ErrorSpec, THROTTLING_CODES, by_code, by_query_code, by_shape, is_auth,
    is_throttling,
};
