//! The one digest every layer names a secret or a body by: the emulator's receipt-handle
//! records, the runner's body digests and the evidence's masks all use it, so a digest in one
//! place can be looked up in another.

use sha2::{Digest, Sha256};

/// Lowercase hex SHA-256 of `data`.
pub fn sha256_hex(data: impl AsRef<[u8]>) -> String {
    hex::encode(Sha256::digest(data.as_ref()))
}
