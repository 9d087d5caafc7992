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
    #[cfg(test)]
    pub fn encode(&self) -> String {
        encode(&self.queue, self.id, self.nonce)
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

/// The wire form of the handle of lease `nonce` of message `id` in queue `queue`, without an
/// owned [`ReceiptHandle`] (a receive writes ten of them per answer).
pub(crate) fn encode(queue: &str, id: Id, nonce: u64) -> String {
    // The numbers take at most 10 + 20 + 20 digits.
    let mut plain = Vec::with_capacity(PREFIX.len() + queue.len() + 4 + 50);
    plain.extend_from_slice(PREFIX.as_bytes());
    plain.push(b'\n');
    plain.extend_from_slice(queue.as_bytes());
    for n in [u64::from(id.slot), id.seq, nonce] {
        plain.push(b'\n');
        push_decimal(&mut plain, n);
    }
    BASE64.encode(plain)
}

/// Appends `n` in decimal: `format!`'s machinery was two thirds of a handle's cost, and a
/// receive writes ten handles.
fn push_decimal(out: &mut Vec<u8>, mut n: u64) {
    let mut digits = [0u8; 20];
    let mut start = digits.len();
    loop {
        start -= 1;
        digits[start] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    out.extend_from_slice(&digits[start..]);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_wire_form_is_base64_of_the_four_lines() {
        let h = ReceiptHandle {
            queue: "000000000000/q".into(),
            id: Id {
                slot: u32::MAX,
                seq: 0,
            },
            nonce: u64::MAX,
        };
        let plain = format!("{PREFIX}\n000000000000/q\n{}\n0\n{}", u32::MAX, u64::MAX);
        assert_eq!(h.encode(), BASE64.encode(plain));
        assert_eq!(ReceiptHandle::decode(&h.encode()), Some(h));
    }

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
