//! Evidence: the versioned JSON Lines format, receipt-handle digests and secret masking, the
//! one view every consumer reads a run through, and partitions of one run merged back.

pub mod business_key;
pub mod digest;
pub mod facts;
// Records for tests, of this crate and of the crates above it (whose unit tests cannot see a
// `cfg(test)` item of this one): plain constructors, compiled always and hidden from the docs
// rather than put behind a feature that the test build and the binary would resolve apart.
#[doc(hidden)]
pub mod fixtures;
pub mod format;
pub mod merge;
pub mod read;
pub mod schema;
pub mod view;
pub mod writer;

pub use business_key::business_key;
pub use digest::{Masker, sha256_hex};
pub use format::Record;
pub use read::{Evidence, ReadError, ReadWarning, read_evidence, read_run};
pub use view::{CaseState, CaseView, RunView, Totals};
pub use writer::EvidenceWriter;
