//! The usual JSON request body, one flat object whose values are strings and non-negative
//! integers (`{"QueueUrl": "…", "MaxNumberOfMessages": 10}`), read in place without
//! `serde_json`'s machinery; so is a batch's, whose one array member holds such flat objects
//! (`{"QueueUrl": "…", "Entries": [{"Id": "a", "MessageBody": "…"}]}`), and a member that is
//! an object of such members, two levels deep (`"MessageAttributes": {"a": {"DataType":
//! "String", "StringValue": "x"}}`, at the top or in an entry). Anything else is left to
//! `serde_json` ([`super::json::decode`]).
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

/// `body`'s members, when it is an object of plain strings and small non-negative integers,
/// with at most one member an array of such objects; `None` when it is anything else.
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
    let mut members = Flat::with_capacity(6);
    reader.members(&mut members, true, MAP_DEPTH)?;
    reader.skip_whitespace();
    (reader.at == body.len()).then_some(members)
}

/// How deep objects nest in a member: `MessageAttributes` holds an object per attribute,
/// which holds its `DataType` and value.
const MAP_DEPTH: u8 = 2;

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

    /// An object's members into `out`: plain strings and small integers, (when `nested`) at
    /// most one array of such objects (a batch's `Entries`), whose objects hold no array, and
    /// (when `maps` is above 0) objects of such members, `maps` levels deep.
    fn members(&mut self, out: &mut Flat<'a>, nested: bool, maps: u8) -> Option<()> {
        self.expect(b'{')?;
        self.skip_whitespace();
        if self.peek() == Some(b'}') {
            self.at += 1;
            return Some(());
        }
        let mut array = false;
        loop {
            self.skip_whitespace();
            let name = self.string()?;
            self.skip_whitespace();
            self.expect(b':')?;
            self.skip_whitespace();
            match self.peek()? {
                b'"' => out.push(name, Scalar::Text(self.string()?)),
                b'0'..=b'9' => out.push(name, Scalar::Integer(self.integer()?)),
                b'[' if nested && !array => {
                    array = true;
                    let objects = self.objects()?;
                    out.push_objects(name, objects);
                }
                b'{' if maps > 0 => {
                    let mut map = Flat::with_capacity(2);
                    self.members(&mut map, false, maps - 1)?;
                    out.push_map(name, map);
                }
                _ => return None,
            }
            self.skip_whitespace();
            match self.next()? {
                b',' => continue,
                b'}' => return Some(()),
                _ => return None,
            }
        }
    }

    /// An array of flat objects of plain strings and small integers.
    fn objects(&mut self) -> Option<Vec<Flat<'a>>> {
        self.expect(b'[')?;
        self.skip_whitespace();
        let mut objects = Vec::new();
        if self.peek() == Some(b']') {
            self.at += 1;
            return Some(objects);
        }
        loop {
            self.skip_whitespace();
            let mut object = Flat::with_capacity(4);
            self.members(&mut object, false, MAP_DEPTH)?;
            objects.push(object);
            self.skip_whitespace();
            match self.next()? {
                b',' => continue,
                b']' => return Some(objects),
                _ => return None,
            }
        }
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
    use crate::model::message::parse_message_attributes;
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
            r#"{"a":[]}"#,
            r#"{"QueueUrl":"q","Entries":[{"Id":"a","MessageBody":"x"},{"Id":"b","DelaySeconds":5}]}"#,
            "{ \"Entries\" : [ { } , {\"Id\":\"é\"} ]\n, \"Entries\":\"x\" }",
            r#"{"Entries":[{"Id":"a","Id":"b"}],"QueueUrl":"q"}"#,
            r#"{"a":{}}"#,
            r#"{"a":[{"b":{}}]}"#,
            r#"{"QueueUrl":"q","MessageAttributes":{"n":{"DataType":"Number","StringValue":"1"},"n":{}}}"#,
            r#"{"Entries":[{"Id":"a","MessageAttributes":{"b":{"DataType":"Binary","BinaryValue":"AA=="}}}],"MessageAttributes":{}}"#,
            "{ \"a\" : { \"b\" : { } , \"c\" : \"x\" } }",
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
            r#"{"a":{"b":{"c":{}}}}"#,
            r#"{"a":{"b":[]}}"#,
            r#"{"a":{"b":{"c":[]}}}"#,
            r#"{"a":[{"b":{"c":{"d":{}}}}]}"#,
            r#"{"a":{"b":null}}"#,
            r#"{"a":{"b":true}}"#,
            r#"{"a":{"b":"x\"y"}}"#,
            r#"{"a":{"b":"1",}}"#,
            r#"{"a":{"b":"1"}"#,
            r#"{"a":[1]}"#,
            r#"{"a":["x"]}"#,
            r#"{"a":[[]]}"#,
            r#"{"a":[{}],"b":[]}"#,
            r#"{"a":[{"b":[]}]}"#,
            r#"{"a":[{"b":"
"}]}"#,
            r#"{"a":[{"b":null}]}"#,
            r#"{"a":[{},]}"#,
            r#"{"a":[{}"#,
            r#"{"a":[{} {}]}"#,
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

    /// `map` as serde_json writes it, indented or compact.
    fn encoded(map: &Map<String, Value>, pretty: bool) -> Vec<u8> {
        let value = Value::Object(map.clone());
        if pretty {
            serde_json::to_vec_pretty(&value).unwrap()
        } else {
            serde_json::to_vec(&value).unwrap()
        }
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
            prop_assert_eq!(object(&encoded(&map, pretty)).map(|flat| flat.to_map()), Some(map));
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

        // And every send with message attributes, at the top or in a batch's entries.
        #[test]
        fn it_reads_every_body_with_attributes(
            members in proptest::collection::vec(("[A-Za-z]{1,12}", plain_value()), 0..3),
            top in attributes(),
            entries in proptest::collection::vec(attributes(), 0..4),
            pretty in any::<bool>(),
        ) {
            let mut map: Map<String, Value> =
                members.into_iter().collect();
            map.insert("MessageAttributes".into(), top);
            let entries: Vec<Value> = entries
                .into_iter()
                .enumerate()
                .map(|(i, attributes)| {
                    serde_json::json!({"Id": format!("m{i}"), "MessageAttributes": attributes})
                })
                .collect();
            map.insert("Entries".into(), Value::Array(entries));
            prop_assert_eq!(object(&encoded(&map, pretty)).map(|flat| flat.to_map()), Some(map));
        }

        // A send's message attributes parse the same from the body read in place as from
        // `serde_json`'s map: the same attributes, or the same error first, with attribute
        // names and their members repeated (the last one stands) and in any order.
        #[test]
        fn message_attributes_read_in_place_parse_as_serde_json_values(
            attributes in proptest::collection::vec(
                (
                    "[A-Ca-c.]{1,3}",
                    proptest::collection::vec((attribute_member(), attribute_text()), 0..4),
                ),
                0..12,
            ),
        ) {
            let mut body = br#"{"MessageBody":"b","MessageAttributes":{"#.to_vec();
            for (i, (name, members)) in attributes.iter().enumerate() {
                if i > 0 {
                    body.push(b',');
                }
                body.extend(serde_json::to_vec(name).unwrap());
                body.extend(b":{");
                for (j, (member, value)) in members.iter().enumerate() {
                    if j > 0 {
                        body.push(b',');
                    }
                    body.extend(serde_json::to_vec(member).unwrap());
                    body.push(b':');
                    body.extend(serde_json::to_vec(value).unwrap());
                }
                body.push(b'}');
            }
            body.extend(b"}}");
            let flat = object(&body).expect("an object read in place");
            let map = by_serde(&body).expect("an object");
            let parse = |input: Input<'_>| {
                format!("{:?}", parse_message_attributes(input.node("MessageAttributes")))
            };
            prop_assert_eq!(
                parse(Input::from_flat(&flat)),
                parse(Input::new(&map)),
                "{}",
                String::from_utf8_lossy(&body)
            );
        }

        // And every batch body: plain members and one array of flat objects.
        #[test]
        fn it_reads_every_batch_body(
            members in proptest::collection::vec(("[A-Za-z]{1,12}", plain_value()), 0..4),
            entries in proptest::collection::vec(
                proptest::collection::vec(("[A-Za-z]{1,12}", plain_value()), 0..5),
                0..5,
            ),
            at in 0usize..5,
            pretty in any::<bool>(),
        ) {
            let mut map = Map::new();
            for (i, (name, value)) in members.into_iter().enumerate() {
                if i == at {
                    map.insert("Entries".into(), entries_value(&entries));
                }
                map.insert(name, value);
            }
            if !map.contains_key("Entries") {
                map.insert("Entries".into(), entries_value(&entries));
            }
            prop_assert_eq!(object(&encoded(&map, pretty)).map(|flat| flat.to_map()), Some(map));
        }

        // Every accessor answers for an object read in place as for the same body read by
        // serde_json: the same value, or the same error; and so for each entry of its array,
        // and for the batch operations' reading of the entries (ids, counts and their errors).
        #[test]
        fn inputs_read_in_place_answer_as_serde_json_maps(
            members in proptest::collection::vec((member_name(), accessed_value()), 0..6),
            entries in proptest::option::of(proptest::collection::vec(
                proptest::collection::vec((member_name(), accessed_value()), 0..5),
                0..12,
            )),
            at in 0usize..6,
        ) {
            let mut body = b"{".to_vec();
            let mut first = true;
            let mut member = |body: &mut Vec<u8>, name: &str, value: &Value| {
                if !std::mem::take(&mut first) {
                    body.push(b',');
                }
                body.extend(serde_json::to_vec(name).unwrap());
                body.push(b':');
                body.extend(serde_json::to_vec(value).unwrap());
            };
            for (i, (name, value)) in members.iter().enumerate() {
                if i == at && let Some(entries) = &entries {
                    member(&mut body, "Entries", &entries_value(entries));
                }
                member(&mut body, name, value);
            }
            if at >= members.len() && let Some(entries) = &entries {
                member(&mut body, "Entries", &entries_value(entries));
            }
            body.push(b'}');
            let flat = object(&body).expect("an object read in place");
            let map = by_serde(&body).expect("an object");
            let (read, parsed) = (Input::from_flat(&flat), Input::new(&map));
            prop_assert_eq!(answers(&read), answers(&parsed), "{}", String::from_utf8_lossy(&body));
        }
    }

    /// The names the accessors are asked for.
    const NAMES: [&str; 9] = [
        "QueueUrl",
        "MaxNumberOfMessages",
        "Attributes",
        "Entries",
        "AttributeNames",
        "Id",
        "MessageBody",
        "x",
        "y",
    ];

    fn member_name() -> impl Strategy<Value = &'static str> {
        proptest::sample::select(&NAMES[..])
    }

    /// A string (plain, or digits a numeric accessor reads) or a small integer, or an object
    /// of those (as `Attributes` is), or an object of such objects (as `MessageAttributes`
    /// is), names repeated as often as not.
    fn accessed_value() -> impl Strategy<Value = Value> {
        let scalar = || {
            prop_oneof![
                "[ -!#-\\[\\]-~é]{0,12}".prop_map(Value::from),
                "[ 0-9]{1,4}".prop_map(Value::from),
                "[a-c]{1,2}".prop_map(Value::from),
                (0u64..1_000_000_000_000_000_000).prop_map(Value::from),
            ]
        };
        let object = |values: BoxedStrategy<Value>| {
            proptest::collection::vec((member_name(), values), 0..4).prop_map(|members| {
                Value::Object(
                    members
                        .into_iter()
                        .map(|(n, v)| (n.to_owned(), v))
                        .collect(),
                )
            })
        };
        prop_oneof![
            4 => scalar(),
            1 => object(scalar().boxed()),
            1 => object(object(scalar().boxed()).boxed()),
        ]
    }

    /// A `MessageAttributes` value: each attribute's name, then its `DataType` and value.
    fn attributes() -> impl Strategy<Value = Value> {
        proptest::collection::vec(
            (
                "[A-Za-z.]{1,8}",
                proptest::collection::vec(
                    (
                        prop_oneof![Just("DataType"), Just("StringValue"), Just("BinaryValue")],
                        plain_value(),
                    ),
                    0..3,
                ),
            ),
            0..4,
        )
        .prop_map(|attributes| {
            Value::Object(
                attributes
                    .into_iter()
                    .map(|(name, members)| {
                        let value = members
                            .into_iter()
                            .map(|(n, v)| (n.to_owned(), v))
                            .collect();
                        (name, Value::Object(value))
                    })
                    .collect(),
            )
        })
    }

    /// A member of an attribute's value, or another name.
    fn attribute_member() -> impl Strategy<Value = &'static str> {
        proptest::sample::select(&["DataType", "StringValue", "BinaryValue", "Other"][..])
    }

    /// What an attribute's member holds: a type, a number, base64 or not, plain text, empty,
    /// or an integer (which a member must not be).
    fn attribute_text() -> impl Strategy<Value = Value> {
        prop_oneof![
            proptest::sample::select(
                &[
                    "String", "Number", "Binary", "String.t", "Number.", "Custom", ""
                ][..]
            )
            .prop_map(Value::from),
            "-?[0-9]{1,4}(\\.[0-9]{1,2})?".prop_map(Value::from),
            "[A-Za-z0-9+/]{0,8}={0,2}".prop_map(Value::from),
            "[ -!#-\\[\\]-~é]{0,6}".prop_map(Value::from),
            (0u64..1000).prop_map(Value::from),
        ]
    }

    /// A plain string or a small integer.
    fn plain_value() -> impl Strategy<Value = Value> {
        prop_oneof![
            "[ -!#-\\[\\]-~é✓]{0,20}".prop_map(Value::from),
            (0u64..1_000_000_000_000_000_000).prop_map(Value::from),
        ]
    }

    /// An array of objects with `entries`' members.
    fn entries_value<N: AsRef<str>>(entries: &[Vec<(N, Value)>]) -> Value {
        Value::Array(
            entries
                .iter()
                .map(|members| {
                    Value::Object(
                        members
                            .iter()
                            .map(|(name, value)| (name.as_ref().to_owned(), value.clone()))
                            .collect(),
                    )
                })
                .collect(),
        )
    }

    /// What every accessor answers for every name, and for each object of `Entries` in turn;
    /// then what the batch operations read of the entries.
    fn answers(input: &Input<'_>) -> Vec<String> {
        let mut out = Vec::new();
        for name in NAMES {
            out.push(format!("{name} raw {:?}", input.raw(name)));
            out.push(format!("{name} string {:?}", input.string(name)));
            out.push(format!("{name} required {:?}", input.required_string(name)));
            out.push(format!("{name} integer {:?}", input.integer(name)));
            out.push(format!("{name} list {:?}", input.string_list(name)));
            out.push(format!("{name} map {:?}", input.string_map(name)));
            let attributes = parse_message_attributes(input.node(name));
            out.push(format!("{name} attributes {attributes:?}"));
            match input.object_list(name) {
                Ok(list) => {
                    for entry in list {
                        out.extend(answers(&entry).into_iter().map(|a| format!("{name}[] {a}")));
                    }
                }
                Err(e) => out.push(format!("{name} objects {e:?}")),
            }
        }
        for operation in ["SendMessageBatch", "DeleteMessageBatch"] {
            let ids = crate::ops::batch::entries(input, operation)
                .map(|entries| entries.into_iter().map(|(id, _)| id).collect::<Vec<_>>());
            out.push(format!("{operation} {ids:?}"));
        }
        out
    }
}
