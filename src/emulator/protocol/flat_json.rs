//! The usual JSON request body, one flat object whose values are strings and non-negative
//! integers (`{"QueueUrl": "…", "MaxNumberOfMessages": 10}`), read without `serde_json`'s
//! machinery; anything else is left to `serde_json` ([`super::json::decode`]).
//!
//! Why: decoding a ReceiveMessage's four members into a `Value` map through `serde_json` was
//! ~4,400 instructions, on every request of every operation (callgrind, docs/performance.md,
//! "Fifth round"). This reader gives up (`None`) at the first thing it does not take in
//! whole — an escape, a control character, a nested value, `true`/`false`/`null`, a negative,
//! fractional or long number, malformed text — so that what it returns is always exactly what
//! `serde_json` returns for the same bytes (a property test holds it to that), and every error
//! is still `serde_json`'s.
//!
//! [`needs_escape`] lives here too: the JSON writer (`json.rs`) asks it before copying a body
//! whole, and this reader before taking a string in.

use serde_json::{Map, Number, Value};

/// `body` as `serde_json` reads it, when it is a flat object of plain strings and small
/// non-negative integers; `None` when it is anything else.
pub(crate) fn object(body: &[u8]) -> Option<Map<String, Value>> {
    let mut reader = Reader { bytes: body, at: 0 };
    reader.skip_whitespace();
    reader.expect(b'{')?;
    let mut map = Map::new();
    reader.skip_whitespace();
    if reader.peek() == Some(b'}') {
        reader.at += 1;
    } else {
        loop {
            reader.skip_whitespace();
            let key = reader.string()?;
            reader.skip_whitespace();
            reader.expect(b':')?;
            reader.skip_whitespace();
            let value = match reader.peek()? {
                b'"' => Value::String(reader.string()?.to_owned()),
                b'0'..=b'9' => Value::Number(reader.integer()?),
                _ => return None,
            };
            // A repeated key keeps its last value, as `serde_json`'s map does.
            map.insert(key.to_owned(), value);
            reader.skip_whitespace();
            match reader.next()? {
                b',' => continue,
                b'}' => break,
                _ => return None,
            }
        }
    }
    reader.skip_whitespace();
    (reader.at == body.len()).then_some(map)
}

/// Whether `serde_json` would escape any byte of `bytes`: a quote, a backslash or a control
/// character below 0x20 (it writes everything else, 0x7f and non-ASCII among it, as it is).
///
/// Eight bytes at a time (the SWAR tests for a zero byte and for a byte below a bound), so a
/// body that needs no escaping, the usual one, is scanned in about a tenth of the
/// instructions `serde_json`'s byte-by-byte table takes and then copied whole: the scan was
/// ~300 instructions of every 100-byte body a receive wrote (docs/performance.md, "Fifth
/// round"). Each test is exact about whether some byte of the word matches (its borrows can
/// only mark bytes above a true match), which is all this asks.
pub(super) fn needs_escape(bytes: &[u8]) -> bool {
    const ONES: u64 = u64::from_ne_bytes([0x01; 8]);
    const HIGHS: u64 = u64::from_ne_bytes([0x80; 8]);
    let has_zero = |v: u64| v.wrapping_sub(ONES) & !v & HIGHS != 0;
    let mut words = bytes.chunks_exact(8);
    for word in &mut words {
        let v = u64::from_le_bytes(word.try_into().unwrap_or_default());
        if v.wrapping_sub(ONES * 0x20) & !v & HIGHS != 0
            || has_zero(v ^ (ONES * u64::from(b'"')))
            || has_zero(v ^ (ONES * u64::from(b'\\')))
        {
            return true;
        }
    }
    words
        .remainder()
        .iter()
        .any(|&b| b < 0x20 || b == b'"' || b == b'\\')
}

/// A position in the body.
struct Reader<'a> {
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

    /// A string without escapes or control characters, valid UTF-8.
    fn string(&mut self) -> Option<&'a str> {
        self.expect(b'"')?;
        let rest = self.bytes.get(self.at..)?;
        let end = memchr::memchr2(b'"', b'\\', rest)?;
        if rest[end] == b'\\' {
            return None;
        }
        let text = &rest[..end];
        // No quote or backslash is left in `text`, so an escape found is a control character,
        // which JSON does not allow raw.
        if needs_escape(text) {
            return None;
        }
        self.at += end + 1;
        std::str::from_utf8(text).ok()
    }

    /// Digits without a leading zero (but `0` itself), not followed by a fraction or an
    /// exponent, at most 18 of them (so the value fits a `u64`, which is how `serde_json`
    /// holds a non-negative integer).
    fn integer(&mut self) -> Option<Number> {
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
        Some(Number::from(value))
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

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
            let read = object(body.as_bytes());
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
        #![proptest_config(crate::testing::config(2048))]

        // Whatever the reader takes in, serde_json reads the same way.
        #[test]
        fn what_it_reads_serde_json_reads_the_same(
            text in r#"[{}\[\]":,0-9a-z\\ \t\n.e-]{0,40}"#,
        ) {
            if let Some(map) = object(text.as_bytes()) {
                prop_assert_eq!(Some(map), by_serde(text.as_bytes()), "{}", text);
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
            prop_assert_eq!(object(&body), Some(map));
        }
    }
}
