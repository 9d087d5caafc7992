//! Evidence: the versioned JSON Lines format, receipt-handle digests and secret masking.

pub mod digest;
pub mod format;
pub mod writer;

pub use digest::{Masker, sha256_hex};
pub use format::Record;
pub use writer::{EvidenceWriter, read_evidence};
