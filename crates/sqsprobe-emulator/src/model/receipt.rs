//! Receipt handles: opaque to clients, read back by the emulator.
//!
//! A handle names one receive of one message: the queue's key, the message's slot and
//! store-wide seq, and the receive's nonce. Handles are deterministic for that triple, so a FIFO
//! receive retried with the same ReceiveRequestAttemptId returns the same handles
//! (API_ReceiveMessage).
//!
//! The wire form is two parts, both in base64's alphabet (so that the protocol writers copy a
//! handle whole, [`is_plain`](crate::ops::answer::is_plain)):
//!
//! - the **head**: base64 of `sqsprobe-rh\n<queue>\n`, followed by one or two more newlines
//!   where needed to make a whole number of 3-byte groups (so it never ends in `=`): readable
//!   by anyone who decodes it, and the same for every handle of a queue;
//! - the **numbers**: the slot, the seq and the nonce as 6, 11 and 11 digits of base64's
//!   alphabet, 6 bits each, most significant first.
//!
//! Only the numbers differ from handle to handle, so a queue encodes its head once, when it is
//! created ([`Encoder`], kept in the queue), and the writers of an answer copy that head and
//! then each handle's [`numbers`], written two digits a table lookup: base64 of the whole text
//! was most of the cost of rendering a received message, and so was a `String` of its own for
//! each handle (docs/performance.md has the measurements).

use std::sync::Arc;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;

use crate::model::message::Id;
use crate::support::hex;

const PREFIX: &str = "sqsprobe-rh";

/// Base64's alphabet, in which the numbers are written.
const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// Digits of the slot (36 bits hold its 32).
const SLOT_DIGITS: usize = 6;
/// Digits of the seq and of the nonce (66 bits hold their 64).
const U64_DIGITS: usize = 11;
/// Characters of a handle's numbers.
pub(crate) const NUMBERS: usize = SLOT_DIGITS + 2 * U64_DIGITS;

/// The parts of a receipt handle, as the tests spell them: the emulator reads handles with
/// [`Encoder::read`] and writes them with an [`Encoder`], and never holds the parts together.
#[cfg(test)]
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ReceiptHandle {
    pub queue: String,
    pub id: Id,
    pub nonce: u64,
}

#[cfg(test)]
impl ReceiptHandle {
    /// The wire form.
    pub fn encode(&self) -> String {
        Encoder::new(&self.queue).encode(self.id, self.nonce)
    }

    /// Parses a wire handle; `None` for anything this emulator never issued. The oracle of
    /// [`Encoder::read`], which the emulator reads handles with.
    pub fn decode(handle: &str) -> Option<Self> {
        let (head, id, nonce) = split(handle)?;
        let bytes = BASE64.decode(head).ok()?;
        let queue = queue_of(std::str::from_utf8(&bytes).ok()?)?;
        Some(Self {
            queue: queue.to_owned(),
            id,
            nonce,
        })
    }
}

/// A wire handle's head (still base64) and its numbers; `None` if the numbers are not
/// well-formed or the head cannot be a whole number of 3-byte groups.
fn split(handle: &str) -> Option<(&[u8], Id, u64)> {
    let bytes = handle.trim().as_bytes();
    let head_len = bytes.len().checked_sub(NUMBERS)?;
    let (head, numbers) = bytes.split_at(head_len);
    if head.is_empty() || head.len() % 4 != 0 {
        return None;
    }
    let (slot, rest) = numbers.split_at(SLOT_DIGITS);
    let (seq, nonce) = rest.split_at(U64_DIGITS);
    let id = Id {
        slot: u32::try_from(read_digits(slot)?).ok()?,
        seq: u64::try_from(read_digits(seq)?).ok()?,
    };
    Some((head, id, u64::try_from(read_digits(nonce)?).ok()?))
}

/// The queue a decoded head names: `None` unless it is exactly what [`Encoder::new`] writes
/// for that queue (the prefix, the queue, its newline and the padding newlines, no more).
#[cfg(test)]
fn queue_of(head: &str) -> Option<&str> {
    let rest = head.strip_prefix(PREFIX)?.strip_prefix('\n')?;
    let queue = rest.trim_end_matches('\n');
    (head.len() == shared_len(queue).next_multiple_of(3) && rest.len() > queue.len())
        .then_some(queue)
}

/// Bytes of `sqsprobe-rh\n<queue>\n` before padding.
fn shared_len(queue: &str) -> usize {
    PREFIX.len() + 1 + queue.len() + 1
}

/// The number written in `digits` (base64's alphabet, most significant first); `None` for a
/// character outside the alphabet.
fn read_digits(digits: &[u8]) -> Option<u128> {
    digits
        .iter()
        .try_fold(0u128, |n, &c| match VALUES[usize::from(c)] {
            NOT_A_DIGIT => None,
            value => Some(n << 6 | u128::from(value)),
        })
}

/// What [`VALUES`] holds for a byte outside base64's alphabet.
const NOT_A_DIGIT: u8 = u8::MAX;

/// The value of each byte as a digit of base64's alphabet, by a table: a handle's 28 digits
/// are read at every delete and visibility change.
static VALUES: [u8; 256] = {
    let mut values = [NOT_A_DIGIT; 256];
    let mut i = 0;
    while i < ALPHABET.len() {
        values[ALPHABET[i] as usize] = i as u8;
        i += 1;
    }
    values
};

/// Every pair of digits of base64's alphabet, by the 12 bits they write.
static PAIRS: [[u8; 2]; 4096] = hex::digit_pairs(ALPHABET);

/// Writes `n` as `out.len()` digits of base64's alphabet, most significant first.
fn write_digits(out: &mut [u8], mut n: u64) {
    // From the least significant digits up, two at a time through a table (one at a time was
    // a measurable part of each handle answered: docs/performance.md), in 64-bit
    // arithmetic (11 digits hold 66 bits: the top one takes the last 4); a digit above the
    // number's bits reads 0.
    let mut pairs = out.rchunks_exact_mut(2);
    for pair in &mut pairs {
        pair.copy_from_slice(&PAIRS[(n & 4095) as usize]);
        n >>= 12;
    }
    if let [digit] = pairs.into_remainder() {
        *digit = ALPHABET[(n & 63) as usize];
    }
}

/// The numbers of the handle of lease `nonce` of message `id`, digits of base64's alphabet
/// (what follows its queue's head).
pub(crate) fn numbers(id: Id, nonce: u64) -> [u8; NUMBERS] {
    let mut numbers = [0u8; NUMBERS];
    let (slot, rest) = numbers.split_at_mut(SLOT_DIGITS);
    let (seq, lease) = rest.split_at_mut(U64_DIGITS);
    write_digits(slot, u64::from(id.slot));
    write_digits(seq, id.seq);
    write_digits(lease, nonce);
    numbers
}

/// Writes the handles of one queue's messages: the queue's head, encoded once (a queue keeps
/// its encoder from its creation on), then each handle's numbers (see the module doc).
#[derive(Debug, Clone)]
pub(crate) struct Encoder {
    /// Base64 of the prefix, the queue and the padding newlines.
    head: Arc<str>,
}

impl Encoder {
    /// The encoder of the handles of queue `queue` (its key).
    pub fn new(queue: &str) -> Self {
        let len = shared_len(queue).next_multiple_of(3);
        let mut shared = Vec::with_capacity(len);
        shared.extend_from_slice(PREFIX.as_bytes());
        shared.push(b'\n');
        shared.extend_from_slice(queue.as_bytes());
        shared.resize(len, b'\n');
        Self {
            head: BASE64.encode(shared).into(),
        }
    }

    /// The message and receive a wire handle names, if this encoder wrote it (for this
    /// queue); `None` otherwise, as the tests' `ReceiptHandle::decode` filtered on the queue
    /// would say.
    ///
    /// Every DeleteMessage and ChangeMessageVisibility reads one. Only one head decodes to
    /// what [`Encoder::new`] writes for a queue (base64 of whole 3-byte groups is one-to-one),
    /// so the handle's head is compared with this encoder's as it stands, not decoded.
    pub fn read(&self, handle: &str) -> Option<(Id, u64)> {
        let (head, id, nonce) = split(handle)?;
        (head == self.head.as_bytes()).then_some((id, nonce))
    }

    /// The head of every handle this encoder writes, base64 (the writers copy it, then a
    /// handle's [`numbers`]).
    pub fn head(&self) -> &str {
        &self.head
    }

    /// The wire form of the handle of lease `nonce` of message `id` (the `Value` form of an
    /// answer holds it so; the writers copy its two parts instead).
    pub fn encode(&self, id: Id, nonce: u64) -> String {
        let mut handle = String::with_capacity(self.head.len() + NUMBERS);
        handle.push_str(&self.head);
        handle.push_str(numbers_text(&numbers(id, nonce)));
        handle
    }
}

/// A handle's [`numbers`] as text: digits of base64's alphabet, so always ASCII (the fallback
/// is unreachable).
pub(crate) fn numbers_text(numbers: &[u8; NUMBERS]) -> &str {
    std::str::from_utf8(numbers).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_wire_form_is_the_heads_base64_and_the_numbers_digits() {
        let h = ReceiptHandle {
            queue: "000000000000/q".into(),
            id: Id {
                slot: u32::MAX,
                seq: 0,
            },
            nonce: u64::MAX,
        };
        // 27 bytes of head: no padding newline. u32::MAX in 36 bits is 0b000011 then 30 ones;
        // u64::MAX in 66 bits is 0b001111 then 60 ones.
        let head = BASE64.encode(format!("{PREFIX}\n000000000000/q\n"));
        let numbers = "D/////AAAAAAAAAAAP//////////";
        let wire = h.encode();
        assert_eq!(wire, format!("{head}{numbers}"));
        assert!(wire.starts_with("c3FzcHJvYmUtcmg"), "base64 of the prefix");
        assert_eq!(ReceiptHandle::decode(&wire), Some(h));
    }

    #[test]
    fn every_queue_length_and_number_width_round_trips() {
        let numbers = [0, 9, 63, 64, 12345, u64::from(u32::MAX), u64::MAX];
        for queue_len in 0..9 {
            let queue = "q".repeat(queue_len);
            let encoder = Encoder::new(&queue);
            for &slot in &[0u32, 7, u32::MAX] {
                for &seq in &numbers {
                    for &nonce in &numbers {
                        let id = Id { slot, seq };
                        let wire = encoder.encode(id, nonce);
                        assert!(!wire.contains('='), "{wire}");
                        let parts = ReceiptHandle {
                            queue: queue.clone(),
                            id,
                            nonce,
                        };
                        assert_eq!(ReceiptHandle::decode(&wire), Some(parts), "{wire}");
                        assert_eq!(encoder.read(&wire), Some((id, nonce)));
                    }
                }
            }
        }
    }

    #[test]
    fn decoding_for_a_queue_agrees_with_decoding_and_filtering() {
        let long = format!("arn:aws:sqs:{}:000000000000:q", "r".repeat(400));
        let id = Id { slot: 3, seq: 7 };
        let good = Encoder::new("q").encode(id, 9);
        let (head, numbers) = good.split_at(good.len() - NUMBERS);
        let with_head = |text: &[u8]| format!("{}{numbers}", BASE64.encode(text));
        // What this emulator writes, and the queue each names.
        let valid = [
            (good.clone(), "q"),
            (Encoder::new("other").encode(id, 9), "other"),
            (Encoder::new(&long).encode(id, 9), long.as_str()),
            (Encoder::new("").encode(id, 9), ""),
            (format!("  {good}\n"), "q"),
        ];
        // What it never writes.
        let invalid = [
            // Heads: no newline after the queue, padding newlines one too many, none where
            // one is due, a line too many, another prefix, bytes that are not text.
            with_head(format!("{PREFIX}\nq").as_bytes()),
            with_head(format!("{PREFIX}\nqq\n\n\n\n").as_bytes()),
            with_head(format!("{PREFIX}\nq\n").as_bytes()),
            with_head(format!("{PREFIX}\nq\n1\n2\n3").as_bytes()),
            with_head(b"not-sqsprobe\nqq\n"),
            with_head(&[0xff, 0xfe, 0x0a]),
            // Numbers: too wide for the slot, the seq, the nonce; outside the alphabet; one
            // digit short.
            format!("{head}E/////AAAAAAAAAAAAAAAAAAAAAA"),
            format!("{head}AAAAAAQ//////////AAAAAAAAAAA"),
            format!("{head}AAAAAAAAAAAAAAAAAQ//////////"),
            format!("{head}AAAAAA-AAAAAAAAAAAAAAAAAAAAA"),
            format!("{head}AAAAAAAAAAAAAAAAAAAAAAAAAAA"),
            "garbage".into(),
            String::new(),
            "%%%".into(),
            "cQ=".into(),
        ];
        for (wire, queue) in &valid {
            assert_eq!(
                ReceiptHandle::decode(wire).map(|h| h.queue).as_deref(),
                Some(*queue),
                "{wire}"
            );
        }
        for wire in &invalid {
            assert_eq!(ReceiptHandle::decode(wire), None, "{wire}");
        }
        let every = valid.iter().map(|(w, _)| w).chain(&invalid);
        for raw in every {
            for queue in ["q", "qq", "other", long.as_str(), ""] {
                let filtered = ReceiptHandle::decode(raw)
                    .filter(|h| h.queue == queue)
                    .map(|h| (h.id, h.nonce));
                assert_eq!(Encoder::new(queue).read(raw), filtered, "{raw} {queue}");
            }
        }
    }
}
