//! Evidence: the versioned JSON Lines format, receipt-handle digests and secret masking, the
//! one view every consumer reads a run through, and partitions of one run merged back.

pub mod business_key;
pub mod digest;
pub mod facts;
#[cfg(test)]
pub(crate) mod fixtures;
pub mod format;
pub mod merge;
pub mod read;
pub mod schema;
pub mod sdk_error;
pub mod view;
pub mod writer;

pub use business_key::business_key;
pub use digest::{Masker, sha256_hex};
pub use format::Record;
pub use read::{Evidence, ReadError, ReadWarning, read_evidence, read_run};
pub use view::{CaseState, CaseView, RunView, Totals};
pub use writer::EvidenceWriter;
