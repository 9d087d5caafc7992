//! The usual JSON request body, one flat object whose values are strings and non-negative
//! integers (`{"QueueUrl": "…", "MaxNumberOfMessages": 10}`), read in place without
//! `serde_json`'s machinery; anything else is left to `serde_json` ([`super::json::decode`]).
//!
//! Why: decoding a ReceiveMessage's four members into a `Value` map through `serde_json` was
//! the largest cost on every request of every operation, and building even a plain map of
//! them half of it (docs/performance.md): the members are borrowed from the body instead
//! ([`Flat`]). This reader gives up (`None`) at the first
//! thing it does not take in whole — an escape, a control character, a nested value,
//! `true`/`false`/`null`, a negative, fractional or long number, malformed text — so that what
//! it returns is always exactly what `serde_json` returns for the same bytes (a property test
//! holds it to that), and every error is still `serde_json`'s.
//!
//! [`needs_escape`] lives here too: the JSON writer (`json.rs`) asks it before copying a body
//! whole.

use crate::support::input::{Flat, Scalar};

/// `body`'s members, when it is a flat object of plain strings and small non-negative
/// integers; `None` when it is anything else.
pub(crate) fn object(body: &[u8]) -> Option<Flat<'_>> {
    // The whole body checked as UTF-8 once (a body that is not is malformed JSON, which
    // `serde_json` names): each string is then a slice of it, without a check of its own.
    let text = std::str::from_utf8(body).ok()?;
    let mut reader = Reader {
        text,
        bytes: body,
        at: 0,
    };
    reader.skip_whitespace();
    reader.expect(b'{')?;
    let mut members = Flat::with_capacity(6);
    reader.skip_whitespace();
    if reader.peek() == Some(b'}') {
        reader.at += 1;
    } else {
        loop {
            reader.skip_whitespace();
            let name = reader.string()?;
            reader.skip_whitespace();
            reader.expect(b':')?;
            reader.skip_whitespace();
            let value = match reader.peek()? {
                b'"' => Scalar::Text(reader.string()?),
                b'0'..=b'9' => Scalar::Integer(reader.integer()?),
                _ => return None,
            };
            members.push(name, value);
            reader.skip_whitespace();
            match reader.next()? {
                b',' => continue,
                b'}' => break,
                _ => return None,
            }
        }
    }
    reader.skip_whitespace();
    (reader.at == body.len()).then_some(members)
}

const ONES: u64 = u64::from_ne_bytes([0x01; 8]);
const HIGHS: u64 = u64::from_ne_bytes([0x80; 8]);

/// The bytes of the eight in `v` (little-endian) that `serde_json` escapes, each marked by its
/// high bit: a quote, a backslash or a control character below 0x20 (the SWAR tests for a
/// zero byte and for a byte below a bound). Whether any byte is marked is exact, and so is the
/// lowest marked byte: a borrow only runs upwards from a true match, so only bytes above one
/// can be marked falsely.
fn escaped_bytes(v: u64) -> u64 {
    let zero = |v: u64| v.wrapping_sub(ONES) & !v & HIGHS;
    (v.wrapping_sub(ONES * 0x20) & !v & HIGHS)
        | zero(v ^ (ONES * u64::from(b'"')))
        | zero(v ^ (ONES * u64::from(b'\\')))
}

/// Whether `serde_json` would escape any byte of `bytes`: a quote, a backslash or a control
/// character below 0x20 (it writes everything else, 0x7f and non-ASCII among it, as it is).
///
/// Eight bytes at a time ([`escaped_bytes`]), so a body that needs no escaping, the usual one,
/// is scanned in about a tenth of the work `serde_json`'s byte-by-byte table does and then
/// copied whole (docs/performance.md).
pub(super) fn needs_escape(bytes: &[u8]) -> bool {
    let mut words = bytes.chunks_exact(8);
    words.any(|word| escaped_bytes(u64::from_le_bytes(word.try_into().unwrap_or_default())) != 0)
        || words
            .remainder()
            .iter()
            .any(|&b| b < 0x20 || b == b'"' || b == b'\\')
}

/// The index of the first byte of `bytes` that a string cannot hold as it is in plain ASCII:
/// a quote, a backslash, a control character, or a byte of a non-ASCII character.
///
/// Eight bytes at a time, as [`needs_escape`], non-ASCII bytes marked too (their high bit is
/// exact); the lowest marked byte is the answer.
fn first_special(bytes: &[u8]) -> Option<usize> {
    let mut words = bytes.chunks_exact(8);
    let mut at = 0;
    for word in &mut words {
        let v = u64::from_le_bytes(word.try_into().unwrap_or_default());
        let marked = escaped_bytes(v) | (v & HIGHS);
        if marked != 0 {
            return Some(at + (marked.trailing_zeros() / 8) as usize);
        }
        at += 8;
    }
    words
        .remainder()
        .iter()
        .position(|&b| is_special(b))
        .map(|i| at + i)
}

/// Whether a string cannot hold `b` as it is in plain ASCII ([`first_special`]).
fn is_special(b: u8) -> bool {
    b < 0x20 || b == b'"' || b == b'\\' || b >= 0x80
}

/// A position in the body.
struct Reader<'a> {
    /// The body, valid UTF-8.
    text: &'a str,
    /// Its bytes.
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.at).copied()
    }

    fn next(&mut self) -> Option<u8> {
        let b = self.peek()?;
        self.at += 1;
        Some(b)
    }

    fn expect(&mut self, b: u8) -> Option<()> {
        (self.next()? == b).then_some(())
    }

    /// JSON's whitespace: space, tab, line feed, carriage return (nothing else).
    fn skip_whitespace(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.at += 1;
        }
    }

    /// A string without escapes or control characters.
    ///
    /// ASCII text is scanned eight bytes at a time for the first quote, backslash, control
    /// character or non-ASCII byte, in one pass (a `memchr2`, the escape scan and a UTF-8
    /// check were three passes over each of a request's names and values); text that is
    /// not ASCII is scanned on from the first such byte for its closing quote.
    fn string(&mut self) -> Option<&'a str> {
        self.expect(b'"')?;
        let start = self.at;
        let rest = &self.bytes[start..];
        let end = match first_special(rest) {
            Some(i) if rest[i] == b'"' => i,
            Some(i) if rest[i] >= 0x80 => {
                let quote = i + memchr::memchr2(b'"', b'\\', &rest[i..])?;
                if rest[quote] == b'\\' || needs_escape(&rest[i..quote]) {
                    return None;
                }
                quote
            }
            // A backslash or a control character, or no closing quote.
            _ => return None,
        };
        self.at = start + end + 1;
        // Between two quotes, which are whole characters of the valid text.
        self.text.get(start..start + end)
    }

    /// Digits without a leading zero (but `0` itself), not followed by a fraction or an
    /// exponent, at most 18 of them (so the value fits a `u64`, which is how `serde_json`
    /// holds a non-negative integer).
    fn integer(&mut self) -> Option<u64> {
        let start = self.at;
        let mut value = 0u64;
        while let Some(d @ b'0'..=b'9') = self.peek() {
            value = value * 10 + u64::from(d - b'0');
            self.at += 1;
            if self.at - start > 18 {
                return None;
            }
        }
        let digits = self.at - start;
        if digits == 0 || (digits > 1 && self.bytes[start] == b'0') {
            return None;
        }
        if matches!(self.peek(), Some(b'.' | b'e' | b'E')) {
            return None;
        }
        Some(value)
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;
    use serde_json::{Map, Value};

    use super::*;
    use crate::support::input::Input;

    /// `serde_json`'s reading of `body`, when it is an object.
    fn by_serde(body: &[u8]) -> Option<Map<String, Value>> {
        match serde_json::from_slice::<Value>(body) {
            Ok(Value::Object(map)) => Some(map),
            _ => None,
        }
    }

    #[test]
    fn the_usual_bodies_are_read_as_serde_json_reads_them() {
        for body in [
            r#"{}"#,
            r#" { } "#,
            r#"{"QueueUrl":"http://127.0.0.1:9324/000000000000/q","MaxNumberOfMessages":10,"WaitTimeSeconds":0}"#,
            "{\n  \"QueueUrl\" : \"q\" ,\r\n\t\"MessageBody\":\"héllo ✓ 𝄞\"\n}\n",
            r#"{"a":"1","a":"2"}"#,
            r#"{"n":0,"m":123456789012345678}"#,
        ] {
            let read = object(body.as_bytes()).map(|flat| flat.to_map());
            assert!(read.is_some(), "{body}");
            assert_eq!(read, by_serde(body.as_bytes()), "{body}");
        }
    }

    #[test]
    fn everything_else_is_left_to_serde_json() {
        for body in [
            r#"{"a":"x\"y"}"#,
            r#"{"a":"x\ny"}"#,
            "{\"a\":\"x\u{1}y\"}",
            r#"{"a":-1}"#,
            r#"{"a":01}"#,
            r#"{"a":1.5}"#,
            r#"{"a":1e3}"#,
            r#"{"a":1234567890123456789}"#,
            r#"{"a":true}"#,
            r#"{"a":null}"#,
            r#"{"a":[]}"#,
            r#"{"a":{}}"#,
            r#"{"a":"1",}"#,
            r#"{"a" "1"}"#,
            r#"{"a":"1"} x"#,
            r#"{"a":"1""#,
            r#"[]"#,
            "{\"a\":\"1\"}\u{c}",
            "",
        ] {
            assert_eq!(object(body.as_bytes()), None, "{body}");
        }
        assert_eq!(object(b"{\"a\":\"\xff\"}"), None, "not UTF-8");
    }

    proptest! {
        #![proptest_config(sqsprobe_testing::config(2048))]

        // Whatever the reader takes in, serde_json reads the same way.
        #[test]
        fn what_it_reads_serde_json_reads_the_same(
            text in r#"[{}\[\]":,0-9a-z\\ \t\n.e-]{0,40}"#,
        ) {
            if let Some(flat) = object(text.as_bytes()) {
                prop_assert_eq!(Some(flat.to_map()), by_serde(text.as_bytes()), "{}", text);
            }
        }

        // And it takes in every flat object of plain strings and small integers.
        #[test]
        fn it_reads_every_flat_object_of_strings_and_integers(
            members in proptest::collection::vec(
                ("[A-Za-z]{1,12}", prop_oneof![
                    "[ -!#-\\[\\]-~é✓]{0,20}".prop_map(Value::from),
                    (0u64..1_000_000_000_000_000_000).prop_map(Value::from),
                ]),
                0..6,
            ),
            pretty in any::<bool>(),
        ) {
            let map: Map<String, Value> = members.into_iter().collect();
            let value = Value::Object(map.clone());
            let body = if pretty {
                serde_json::to_vec_pretty(&value).unwrap()
            } else {
                serde_json::to_vec(&value).unwrap()
            };
            prop_assert_eq!(object(&body).map(|flat| flat.to_map()), Some(map));
        }

        // The one-pass scan finds the byte the byte-by-byte test finds, at any position.
        #[test]
        fn the_first_special_byte_is_found_as_byte_by_byte(
            bytes in proptest::collection::vec(
                prop_oneof![4 => 0x20u8..0x7f, 1 => any::<u8>()],
                0..40,
            ),
        ) {
            prop_assert_eq!(
                first_special(&bytes),
                bytes.iter().position(|&b| is_special(b))
            );
        }

        // Every accessor answers for a flat object read in place as for the same body read
        // by serde_json: the same value, or the same error.
        #[test]
        fn inputs_read_in_place_answer_as_serde_json_maps(
            members in proptest::collection::vec(
                (prop_oneof![
                    Just("QueueUrl"), Just("MaxNumberOfMessages"), Just("Attributes"),
                    Just("Entries"), Just("AttributeNames"), Just("x"),
                ], prop_oneof![
                    "[ -!#-\\[\\]-~é]{0,12}".prop_map(Value::from),
                    "[ 0-9]{1,4}".prop_map(Value::from),
                    (0u64..1_000_000_000_000_000_000).prop_map(Value::from),
                ]),
                0..6,
            ),
        ) {
            let mut body = b"{".to_vec();
            for (i, (name, value)) in members.iter().enumerate() {
                if i > 0 {
                    body.push(b',');
                }
                body.extend(serde_json::to_vec(name).unwrap());
                body.push(b':');
                body.extend(serde_json::to_vec(value).unwrap());
            }
            body.push(b'}');
            let flat = object(&body).expect("a flat object");
            let map = by_serde(&body).expect("an object");
            let (read, parsed) = (Input::from_flat(&flat), Input::new(&map));
            for name in ["QueueUrl", "MaxNumberOfMessages", "Attributes", "Entries", "AttributeNames", "x", "y"] {
                let same = |a: String, b: String| (a == b).then_some(()).ok_or(format!("{name}: {a} != {b}"));
                let both = |f: &dyn Fn(&Input<'_>) -> String| same(f(&read), f(&parsed));
                let checks = [
                    both(&|i| format!("{:?}", i.raw(name))),
                    both(&|i| format!("{:?}", i.string(name))),
                    both(&|i| format!("{:?}", i.required_string(name))),
                    both(&|i| format!("{:?}", i.integer(name))),
                    both(&|i| format!("{:?}", i.string_list(name))),
                    both(&|i| format!("{:?}", i.string_map(name))),
                    both(&|i| format!("{:?}", i.object_list(name).map(|l| l.len()))),
                ];
                for check in checks {
                    prop_assert!(check.is_ok(), "{} in {}", check.unwrap_err(), String::from_utf8_lossy(&body));
                }
            }
        }
    }
}
