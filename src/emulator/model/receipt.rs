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

    /// Parses a wire handle; `None` for anything this emulator never issued. The oracle of
    /// [`ReceiptHandle::decode_for`], which the emulator reads handles with.
    #[cfg(test)]
    pub fn decode(handle: &str) -> Option<Self> {
        let bytes = BASE64.decode(handle.trim().as_bytes()).ok()?;
        let (queue, id, nonce) = parts(std::str::from_utf8(&bytes).ok()?)?;
        Some(Self {
            queue: queue.to_owned(),
            id,
            nonce,
        })
    }

    /// The message and receive a wire handle names, if this emulator issued it for `queue`;
    /// `None` otherwise, as [`ReceiptHandle::decode`] filtered on the queue would say.
    ///
    /// Every DeleteMessage and ChangeMessageVisibility reads one: decoded on the stack and
    /// compared with the queue where it lies, with no allocation for the bytes or the queue.
    pub fn decode_for(handle: &str, queue: &str) -> Option<(Id, u64)> {
        let mut buf = [0u8; STACK_HANDLE];
        let input = handle.trim().as_bytes();
        let heap;
        let bytes = match BASE64.decode_slice(input, &mut buf) {
            Ok(len) => &buf[..len],
            // A key longer than any this emulator makes for itself (a long signing region):
            // decoded the ordinary way.
            Err(base64::DecodeSliceError::OutputSliceTooSmall) => {
                heap = BASE64.decode(input).ok()?;
                &heap[..]
            }
            Err(base64::DecodeSliceError::DecodeError(_)) => return None,
        };
        let (named, id, nonce) = parts(std::str::from_utf8(bytes).ok()?)?;
        (named == queue).then_some((id, nonce))
    }
}

/// Decoded bytes [`ReceiptHandle::decode_for`] keeps on the stack: a handle of a queue whose
/// name is 80 characters, in a 20-character region, with 20-digit seq and nonce, is about 190.
const STACK_HANDLE: usize = 256;

/// The queue, message and nonce of a decoded handle's text.
fn parts(text: &str) -> Option<(&str, Id, u64)> {
    let mut parts = text.split('\n');
    if parts.next()? != PREFIX {
        return None;
    }
    let queue = parts.next()?;
    let slot = parts.next()?.parse().ok()?;
    let seq = parts.next()?.parse().ok()?;
    let nonce = parts.next()?.parse().ok()?;
    if parts.next().is_some() {
        return None;
    }
    Some((queue, Id { slot, seq }, nonce))
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

    #[test]
    fn decoding_for_a_queue_agrees_with_decoding_and_filtering() {
        let long = format!("arn:aws:sqs:{}:000000000000:q", "r".repeat(400));
        let mut wire: Vec<String> = ["q", "other", long.as_str()]
            .iter()
            .map(|queue| {
                ReceiptHandle {
                    queue: (*queue).into(),
                    id: Id { slot: 3, seq: 7 },
                    nonce: 9,
                }
                .encode()
            })
            .collect();
        let tail = BASE64.encode(format!("{PREFIX}\nq\n1\n2\n3\nextra"));
        let short = BASE64.encode(format!("{PREFIX}\nq\n1\n2"));
        let other = BASE64.encode("not-sqsprobe\nq\n1\n2\n3");
        let not_utf8 = BASE64.encode([0xff, 0xfe, 0x0a]);
        let spaced = format!("  {}\n", wire[0]);
        wire.extend([tail, short, other, not_utf8, spaced]);
        wire.extend(["garbage", "", "%%%", "cQ=", "cQ"].map(str::to_owned));
        for raw in &wire {
            for queue in ["q", "other", long.as_str(), ""] {
                let filtered = ReceiptHandle::decode(raw)
                    .filter(|h| h.queue == queue)
                    .map(|h| (h.id, h.nonce));
                assert_eq!(
                    ReceiptHandle::decode_for(raw, queue),
                    filtered,
                    "{raw} {queue}"
                );
            }
        }
        assert_eq!(
            ReceiptHandle::decode_for(&wire[2], &long),
            Some((Id { slot: 3, seq: 7 }, 9)),
            "decoded off the stack"
        );
    }
}
