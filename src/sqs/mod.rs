//! Facts about Amazon SQS itself, shared by the emulator (which answers like SQS) and the runner
//! (which reads SQS's answers): today the table of SQS errors.

pub mod errors;

pub use errors::{
    AUTH_CODES, ERRORS, ErrorSpec, THROTTLING_CODES, by_code, by_query_code, by_shape, is_auth,
    is_throttling,
};
