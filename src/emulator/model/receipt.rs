//! Receipt handles: opaque to clients, decodable by the emulator.
//!
//! A handle names one receive of one message: the queue's key, the message's slot and
//! store-wide seq, and the receive's nonce. Handles are deterministic for that triple, so a FIFO receive retried with the
//! same ReceiveRequestAttemptId returns the same handles (API_ReceiveMessage).

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;

use crate::emulator::model::queue::Id;

const PREFIX: &str = "sqsprobe-rh";

/// The parts of a receipt handle.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ReceiptHandle {
    pub queue: String,
    pub id: Id,
    pub nonce: u64,
}

impl ReceiptHandle {
    /// The wire form.
    pub fn encode(&self) -> String {
        BASE64.encode(format!(
            "{PREFIX}\n{}\n{}\n{}\n{}",
            self.queue, self.id.slot, self.id.seq, self.nonce
        ))
    }

    /// Parses a wire handle; `None` for anything this emulator never issued.
    pub fn decode(handle: &str) -> Option<Self> {
        let bytes = BASE64.decode(handle.trim().as_bytes()).ok()?;
        let text = String::from_utf8(bytes).ok()?;
        let mut parts = text.split('\n');
        if parts.next()? != PREFIX {
            return None;
        }
        let queue = parts.next()?.to_owned();
        let slot = parts.next()?.parse().ok()?;
        let seq = parts.next()?.parse().ok()?;
        let nonce = parts.next()?.parse().ok()?;
        if parts.next().is_some() {
            return None;
        }
        Some(Self {
            queue,
            id: Id { slot, seq },
            nonce,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_garbage() {
        let h = ReceiptHandle {
            queue: "q".into(),
            id: Id { slot: 3, seq: 7 },
            nonce: 9,
        };
        assert_eq!(ReceiptHandle::decode(&h.encode()), Some(h));
        assert_eq!(ReceiptHandle::decode("garbage"), None);
        assert_eq!(ReceiptHandle::decode(""), None);
    }
}
