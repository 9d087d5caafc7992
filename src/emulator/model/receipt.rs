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
/// owned [`ReceiptHandle`].
#[cfg(test)]
pub(crate) fn encode(queue: &str, id: Id, nonce: u64) -> String {
    Encoder::new(queue).encode(id, nonce)
}

/// Writes the handles of one queue's messages, as a receive does ten at a time.
///
/// Every handle of a queue starts with the same bytes (the prefix and the queue's key), and
/// base64 of a concatenation whose first part is a whole number of 3-byte groups is the two
/// parts' encodings side by side. So the shared part, up to its last whole group, is encoded
/// once per receive, and each handle encodes only the one or two bytes left over and its three
/// numbers, on the stack: a handle cost ~1,550 instructions when each was encoded whole
/// (base64 of ~50 bytes, two allocations), most of a receive's rendering.
pub(crate) struct Encoder {
    /// Base64 of the shared part's whole 3-byte groups.
    head: String,
    /// The shared part's last `carry_len` bytes (0–2), encoded with each handle's numbers.
    carry: [u8; 2],
    carry_len: usize,
}

/// Plain bytes of a handle after the encoder's head: at most 2 carried bytes and three
/// numbers of at most 20 digits, each after a newline.
const TAIL: usize = 2 + 3 * 21;

impl Encoder {
    /// The encoder of the handles of queue `queue` (its key).
    pub fn new(queue: &str) -> Self {
        let shared_len = PREFIX.len() + 1 + queue.len() + 1;
        let whole = shared_len - shared_len % 3;
        let mut shared = Vec::with_capacity(shared_len);
        shared.extend_from_slice(PREFIX.as_bytes());
        shared.push(b'\n');
        shared.extend_from_slice(queue.as_bytes());
        shared.push(b'\n');
        let mut carry = [0u8; 2];
        let carry_len = shared_len - whole;
        carry[..carry_len].copy_from_slice(&shared[whole..]);
        Self {
            head: BASE64.encode(&shared[..whole]),
            carry,
            carry_len,
        }
    }

    /// The wire form of the handle of lease `nonce` of message `id`.
    pub fn encode(&self, id: Id, nonce: u64) -> String {
        let mut plain = [0u8; TAIL];
        plain[..self.carry_len].copy_from_slice(&self.carry[..self.carry_len]);
        let mut len = self.carry_len;
        len = put_decimal(&mut plain, len, u64::from(id.slot));
        plain[len] = b'\n';
        len = put_decimal(&mut plain, len + 1, id.seq);
        plain[len] = b'\n';
        len = put_decimal(&mut plain, len + 1, nonce);
        let mut wire = [0u8; TAIL.div_ceil(3) * 4];
        let written = BASE64
            .encode_slice(&plain[..len], &mut wire)
            .expect("the buffer holds the base64 of the longest tail");
        let mut handle = String::with_capacity(self.head.len() + written);
        handle.push_str(&self.head);
        handle.push_str(std::str::from_utf8(&wire[..written]).expect("base64 is ASCII"));
        handle
    }
}

/// Writes `n` in decimal into `out` at `at`, returning the end: `format!`'s machinery was two
/// thirds of a handle's cost when handles were first measured.
fn put_decimal(out: &mut [u8], at: usize, mut n: u64) -> usize {
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
    let end = at + digits.len() - start;
    out[at..end].copy_from_slice(&digits[start..]);
    end
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

    #[test]
    fn the_encoder_writes_what_base64_of_the_whole_handle_is() {
        // Every length of the shared part modulo 3, and numbers of every width.
        let numbers = [0, 9, 10, 12345, u64::from(u32::MAX), u64::MAX];
        for queue_len in 0..9 {
            let queue = "q".repeat(queue_len);
            let encoder = Encoder::new(&queue);
            for &slot in &[0u32, 7, u32::MAX] {
                for &seq in &numbers {
                    for &nonce in &numbers {
                        let plain = format!("{PREFIX}\n{queue}\n{slot}\n{seq}\n{nonce}");
                        let id = Id { slot, seq };
                        let wire = encoder.encode(id, nonce);
                        assert_eq!(wire, BASE64.encode(&plain), "{plain:?}");
                        assert_eq!(ReceiptHandle::decode_for(&wire, &queue), Some((id, nonce)));
                    }
                }
            }
        }
    }
}
