//! Typed access to a request's parameters, whichever protocol carried them.
//!
//! Both protocols are read into the JSON protocol's shape (a JSON object); the query protocol
//! delivers every scalar as a string, so numeric accessors accept numeric strings too. The
//! usual JSON body, a flat object of strings and small integers (a batch's with one array of
//! such objects), is not built into a map at all: its members are read in place ([`Flat`]), borrowed from the body, and every accessor
//! answers for them exactly as it answers for the same object read by `serde_json` (a property
//! test in `protocol/flat_json.rs` holds it to that).

use std::borrow::Cow;
use std::collections::BTreeMap;

use serde_json::{Map, Value};

use crate::support::errors::{SqsError, SqsResult};

/// A request's parameters as read from its body or query string.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Params<'a> {
    /// A JSON object (or the query protocol's parameters in that shape).
    Object(Map<String, Value>),
    /// A flat JSON object read in place.
    Flat(Flat<'a>),
}

impl Params<'_> {
    /// Typed access to the parameters.
    pub fn input(&self) -> Input<'_> {
        match self {
            Params::Object(map) => Input::new(map),
            Params::Flat(flat) => Input::from_flat(flat),
        }
    }

    /// The parameters as a JSON object, as `serde_json` reads the same body (for an audit,
    /// which records them in that shape; built only when one watches).
    pub fn to_map(&self) -> Cow<'_, Map<String, Value>> {
        match self {
            Params::Object(map) => Cow::Borrowed(map),
            Params::Flat(flat) => Cow::Owned(flat.to_map()),
        }
    }
}

/// A flat JSON object's members, each name with its string or non-negative integer value,
/// borrowed from the body they were read from (`protocol/flat_json.rs` reads them); at most
/// one member may be an array of such objects (a batch's `Entries`), and a member may be an
/// object of such members, two levels deep (`MessageAttributes`: each attribute's name, then
/// its `DataType` and value).
///
/// Why not a `serde_json::Map`: building one (a `String` per name and per string value, a
/// B-tree insert per member) and dropping it was a large part of a ReceiveMessage's cost
/// (docs/performance.md); a request has a handful of members, found by a look along them.
#[derive(Debug, Default, Clone, PartialEq)]
pub(crate) struct Flat<'a> {
    members: Vec<(&'a str, Scalar<'a>)>,
    /// The objects of the member whose value is [`Scalar::Objects`].
    objects: Vec<Flat<'a>>,
    /// The objects that members' values are ([`Scalar::Map`] is an index here).
    maps: Vec<Flat<'a>>,
}

/// A value of a [`Flat`] object.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Scalar<'a> {
    /// A string without escapes.
    Text(&'a str),
    /// A non-negative integer below 10^18 (so it fits an `i64`).
    Integer(u64),
    /// The object's one array: its objects are held beside the members.
    Objects,
    /// An object, held beside the members (its index among them).
    Map(usize),
}

impl<'a> Flat<'a> {
    /// An empty object with room for `n` members.
    pub fn with_capacity(n: usize) -> Self {
        Self {
            members: Vec::with_capacity(n),
            objects: Vec::new(),
            maps: Vec::new(),
        }
    }

    /// Adds a member of plain value, in the order the body has them.
    pub fn push(&mut self, name: &'a str, value: Scalar<'a>) {
        self.members.push((name, value));
    }

    /// Adds the member whose value is an array of flat objects (one per object: the reader
    /// gives up on a second).
    pub fn push_objects(&mut self, name: &'a str, objects: Vec<Flat<'a>>) {
        debug_assert!(!self.members.iter().any(|(_, v)| *v == Scalar::Objects));
        self.objects = objects;
        self.members.push((name, Scalar::Objects));
    }

    /// Adds a member whose value is an object.
    pub fn push_map(&mut self, name: &'a str, map: Flat<'a>) {
        self.members.push((name, Scalar::Map(self.maps.len())));
        self.maps.push(map);
    }

    /// The value of `name`: a repeated name's last, as `serde_json`'s map keeps it.
    fn get(&self, name: &str) -> Option<Scalar<'a>> {
        self.members
            .iter()
            .rev()
            .find(|(n, _)| *n == name)
            .map(|&(_, value)| value)
    }

    /// The object as `serde_json` reads the same body.
    pub fn to_map(&self) -> Map<String, Value> {
        self.members
            .iter()
            .map(|&(name, value)| (name.to_owned(), self.value_of(value)))
            .collect()
    }

    /// A member's value as `serde_json` reads it.
    fn value_of(&self, value: Scalar<'_>) -> Value {
        match value {
            Scalar::Text(text) => Value::String(text.to_owned()),
            Scalar::Integer(n) => Value::from(n),
            Scalar::Objects => Value::Array(
                self.objects
                    .iter()
                    .map(|o| Value::Object(o.to_map()))
                    .collect(),
            ),
            Scalar::Map(i) => Value::Object(self.maps.get(i).map(Flat::to_map).unwrap_or_default()),
        }
    }
}

/// A value inside a request's parameters, read where it lies: in a `serde_json` value, or in
/// a flat object (the object that holds it, and its value there). What the readers of nested
/// values (a send's message attributes) walk, so that a body read in place is not built into
/// a `Value` for them; it answers as the same body read by `serde_json` would (a property
/// test in `protocol/flat_json.rs`).
#[derive(Debug, Clone, Copy)]
pub(crate) enum Node<'a> {
    /// In a `serde_json` value.
    Value(&'a Value),
    /// In a flat object: the object, and the value one of its members has.
    Flat(&'a Flat<'a>, Scalar<'a>),
}

impl<'a> Node<'a> {
    /// The text, if the value is a string.
    pub fn as_str(&self) -> Option<&'a str> {
        match *self {
            Node::Value(value) => value.as_str(),
            Node::Flat(_, Scalar::Text(text)) => Some(text),
            Node::Flat(..) => None,
        }
    }

    /// Whether the value is JSON null (a flat object has none).
    pub fn is_null(&self) -> bool {
        matches!(self, Node::Value(Value::Null))
    }

    /// The member `key`, if the value is an object that has it (a repeated name's last).
    pub fn get(&self, key: &str) -> Option<Node<'a>> {
        match *self {
            Node::Value(value) => value.get(key).map(Node::Value),
            Node::Flat(owner, Scalar::Map(i)) => {
                let object = owner.maps.get(i)?;
                object.get(key).map(|value| Node::Flat(object, value))
            }
            Node::Flat(..) => None,
        }
    }

    /// The members, if the value is an object, in the order a `serde_json` map iterates them:
    /// by name, byte for byte, a repeated name once with its last value.
    pub fn members(&self) -> Option<Vec<(&'a str, Node<'a>)>> {
        match *self {
            Node::Value(value) => Some(
                value
                    .as_object()?
                    .iter()
                    .map(|(name, value)| (name.as_str(), Node::Value(value)))
                    .collect(),
            ),
            Node::Flat(owner, Scalar::Map(i)) => {
                let object = owner.maps.get(i)?;
                let mut members: Vec<(&'a str, Node<'a>)> = object
                    .members
                    .iter()
                    .map(|&(name, value)| (name, Node::Flat(object, value)))
                    .collect();
                // Stable: a repeated name's members stay in body order, and the last one
                // stands.
                members.sort_by(|a, b| a.0.cmp(b.0));
                let mut kept: Vec<(&'a str, Node<'a>)> = Vec::with_capacity(members.len());
                for member in members {
                    match kept.last_mut() {
                        Some(last) if last.0 == member.0 => *last = member,
                        _ => kept.push(member),
                    }
                }
                Some(kept)
            }
            Node::Flat(..) => None,
        }
    }
}

/// A request's parameters.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Input<'a> {
    source: Source<'a>,
}

/// Where an [`Input`] reads its members.
#[derive(Debug, Clone, Copy)]
enum Source<'a> {
    Object(&'a Map<String, Value>),
    Flat(&'a Flat<'a>),
}

/// A member's value as the accessors take it.
enum Member<'a> {
    Value(&'a Value),
    Text(&'a str),
    Integer(u64),
    /// A flat object's array of flat objects.
    Objects(&'a Flat<'a>),
    /// A flat object's member that is an object.
    Map(&'a Flat<'a>),
}

fn wrong_type(name: &str) -> SqsError {
    SqsError::serialization(format!("Unexpected value type for parameter {name}."))
}

impl<'a> Input<'a> {
    /// Wraps a parameter object.
    pub fn new(map: &'a Map<String, Value>) -> Self {
        Self {
            source: Source::Object(map),
        }
    }

    /// Reads a flat object's members.
    pub fn from_flat(flat: &'a Flat<'a>) -> Self {
        Self {
            source: Source::Flat(flat),
        }
    }

    /// The member `name`, treating JSON null as absent.
    fn member(&self, name: &str) -> Option<Member<'a>> {
        match self.source {
            Source::Object(map) => map.get(name).filter(|v| !v.is_null()).map(Member::Value),
            Source::Flat(flat) => match flat.get(name)? {
                Scalar::Text(text) => Some(Member::Text(text)),
                Scalar::Integer(n) => Some(Member::Integer(n)),
                Scalar::Objects => Some(Member::Objects(flat)),
                // The reader indexes only what it pushed.
                Scalar::Map(i) => flat.maps.get(i).map(Member::Map),
            },
        }
    }

    /// The raw value as `serde_json` reads it, treating JSON null as absent (built for a member
    /// of a flat object, as an audit's record of the parameters is). The tests' view: the
    /// operations read a member where it lies ([`Input::node`]).
    #[cfg(test)]
    pub fn raw(&self, name: &str) -> Option<Cow<'a, Value>> {
        Some(match self.member(name)? {
            Member::Value(value) => Cow::Borrowed(value),
            Member::Text(text) => Cow::Owned(Value::String(text.to_owned())),
            Member::Integer(n) => Cow::Owned(Value::from(n)),
            Member::Objects(flat) => Cow::Owned(flat.value_of(Scalar::Objects)),
            Member::Map(flat) => Cow::Owned(Value::Object(flat.to_map())),
        })
    }

    /// The member `name` as a [`Node`], read where it lies, treating JSON null as absent.
    pub fn node(&self, name: &str) -> Option<Node<'a>> {
        match self.source {
            Source::Object(map) => map.get(name).filter(|v| !v.is_null()).map(Node::Value),
            Source::Flat(flat) => flat.get(name).map(|value| Node::Flat(flat, value)),
        }
    }

    /// An optional string.
    pub fn string(&self, name: &str) -> SqsResult<Option<&'a str>> {
        match self.member(name) {
            None => Ok(None),
            Some(Member::Value(Value::String(s))) => Ok(Some(s.as_str())),
            Some(Member::Text(s)) => Ok(Some(s)),
            Some(_) => Err(wrong_type(name)),
        }
    }

    /// A required, non-empty string (`MissingParameter` otherwise).
    pub fn required_string(&self, name: &str) -> SqsResult<&'a str> {
        match self.string(name)? {
            Some(s) if !s.is_empty() => Ok(s),
            _ => Err(SqsError::missing_parameter(name)),
        }
    }

    /// An optional integer; strings holding integers are accepted (query protocol).
    ///
    /// A string that is not an integer is answered like AWS answers a bad value.
    pub fn integer(&self, name: &str) -> SqsResult<Option<i64>> {
        let parse = |s: &str| {
            s.trim()
                .parse::<i64>()
                .map(Some)
                .map_err(|_| SqsError::invalid_value(s, name, "Must be an integer."))
        };
        match self.member(name) {
            None => Ok(None),
            Some(Member::Value(Value::Number(n))) => {
                n.as_i64().map(Some).ok_or_else(|| wrong_type(name))
            }
            Some(Member::Integer(n)) => i64::try_from(n).map(Some).map_err(|_| wrong_type(name)),
            Some(Member::Value(Value::String(s))) => parse(s),
            Some(Member::Text(s)) => parse(s),
            Some(_) => Err(wrong_type(name)),
        }
    }

    /// An optional list of strings.
    pub fn string_list(&self, name: &str) -> SqsResult<Vec<String>> {
        match self.member(name) {
            None => Ok(Vec::new()),
            Some(Member::Value(Value::Array(items))) => items
                .iter()
                .map(|v| {
                    v.as_str()
                        .map(str::to_owned)
                        .ok_or_else(|| wrong_type(name))
                })
                .collect(),
            // No object is a string: only an empty array is a list of them.
            Some(Member::Objects(flat)) if flat.objects.is_empty() => Ok(Vec::new()),
            Some(_) => Err(wrong_type(name)),
        }
    }

    /// An optional string-to-string map. Numbers and booleans are stringified, because
    /// hand-written JSON clients send `"DelaySeconds": 5` and AWS's attributes are strings.
    pub fn string_map(&self, name: &str) -> SqsResult<BTreeMap<String, String>> {
        let owned;
        let map = match self.member(name) {
            None => return Ok(BTreeMap::new()),
            Some(Member::Value(Value::Object(map))) => map,
            // As serde_json's map of the same text (a repeated name's last value only).
            Some(Member::Map(flat)) => {
                owned = flat.to_map();
                &owned
            }
            Some(_) => return Err(wrong_type(name)),
        };
        map.iter()
            .map(|(k, v)| {
                let v = match v {
                    Value::String(s) => s.clone(),
                    Value::Number(n) => n.to_string(),
                    Value::Bool(b) => b.to_string(),
                    _ => return Err(wrong_type(name)),
                };
                Ok((k.clone(), v))
            })
            .collect()
    }

    /// An optional list of objects (batch entries).
    pub fn object_list(&self, name: &str) -> SqsResult<Vec<Input<'a>>> {
        match self.member(name) {
            None => Ok(Vec::new()),
            Some(Member::Value(Value::Array(items))) => items
                .iter()
                .map(|v| {
                    v.as_object()
                        .map(Input::new)
                        .ok_or_else(|| wrong_type(name))
                })
                .collect(),
            Some(Member::Objects(flat)) => Ok(flat.objects.iter().map(Input::from_flat).collect()),
            Some(_) => Err(wrong_type(name)),
        }
    }
}

/// The queue name in a QueueUrl: its last path segment. A bare name is accepted, as AWS does
/// (TEST-PY `test_posting_to_queue_via_queue_name`).
pub(crate) fn queue_name_from_url(url: &str) -> SqsResult<String> {
    queue_ref_from_url(url).map(|(_, name)| name.to_owned())
}

/// The (region, name) a queue URL names. A URL of the emulator's configured region is
/// `…/<account>/<name>`; one of another region is `…/queue/<region>/<account>/<name>`, whose
/// region is returned. A bare name is accepted, as AWS accepts it. Every request that names a
/// queue reads this, so it borrows and reads the path from its end without collecting it.
///
/// Bytes, not `str` patterns: `find("://")` sets up a substring searcher and the `split`s a
/// char matcher per call, a large part of a DeleteMessage's cost (docs/performance.md); the
/// URL's delimiters are ASCII, so byte positions are char boundaries.
pub(crate) fn queue_ref_from_url(url: &str) -> SqsResult<(Option<&str>, &str)> {
    let url = url.trim();
    let bytes = url.as_bytes();
    // The first `://`: memchr's search for each `:`, then a look at the two bytes after it
    // (not a window compared at every byte).
    let scheme_end = memchr::memchr_iter(b':', bytes).find(|&i| bytes[i + 1..].starts_with(b"//"));
    let path = match scheme_end {
        Some(i) => {
            let rest = &url[i + 3..];
            memchr::memchr(b'/', rest.as_bytes()).map_or("", |j| &rest[j..])
        }
        None => url,
    };
    let end = memchr::memchr2(b'?', b'#', path.as_bytes()).unwrap_or(path.len());
    let mut rest = &path[..end];
    // The path's non-empty segments, last first.
    let mut segments = std::iter::from_fn(|| {
        loop {
            if rest.is_empty() {
                return None;
            }
            let (head, segment) = match memchr::memrchr(b'/', rest.as_bytes()) {
                Some(i) => (&rest[..i], &rest[i + 1..]),
                None => ("", rest),
            };
            rest = head;
            if !segment.is_empty() {
                return Some(segment);
            }
        }
    });
    let Some(name) = segments.next() else {
        return Err(SqsError::non_existent_queue());
    };
    let (account, region, queue) = (segments.next(), segments.next(), segments.next());
    let region = match (queue, region, account) {
        (Some("queue"), Some(region), Some(_)) => Some(region),
        _ => None,
    };
    Ok((region, name))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The reading of a queue URL before it went to bytes, as the oracle of the one above.
    fn queue_ref_by_str_patterns(url: &str) -> Option<(Option<&str>, &str)> {
        let url = url.trim();
        let path = match url.find("://") {
            Some(i) => {
                let rest = &url[i + 3..];
                rest.find('/').map_or("", |j| &rest[j..])
            }
            None => url,
        };
        let path = path.split(['?', '#']).next().unwrap_or_default();
        let mut segments = path.rsplit('/').filter(|s| !s.is_empty());
        let name = segments.next()?;
        let (account, region, queue) = (segments.next(), segments.next(), segments.next());
        let region = match (queue, region, account) {
            (Some("queue"), Some(region), Some(_)) => Some(region),
            _ => None,
        };
        Some((region, name))
    }

    #[test]
    fn queue_urls_read_by_bytes_as_by_str_patterns() {
        let urls = [
            "http://h:1/queue/eu-central-1/000000000000/q",
            "http://h:1/000000000000/q",
            "  https://sqs.us-east-1.amazonaws.com/1/q.fifo\n",
            "http://h:1//000000000000//q//",
            "http://h:1/queue/r/a/q?x=1#f",
            "http://h:1/a/q#frag/more",
            "http://h:1?QueueUrl=/a/q",
            "http://host",
            "http://host/",
            "q2",
            "/queue/r/a/q",
            "queue/r/a/q",
            "",
            "://",
            ":///x",
            "ftp://é.example/ünï/cödé",
            "http:/h/a/q",
            "a://b://c/d/e",
        ];
        for url in urls {
            assert_eq!(
                queue_ref_from_url(url).ok(),
                queue_ref_by_str_patterns(url),
                "{url:?}"
            );
        }
    }

    proptest::proptest! {
        #![proptest_config(sqsprobe_testing::config(1024))]

        #[test]
        fn any_text_is_read_by_bytes_as_by_str_patterns(url in "[a-z:/?#. é]{0,24}") {
            proptest::prop_assert_eq!(
                queue_ref_from_url(&url).ok(),
                queue_ref_by_str_patterns(&url)
            );
        }
    }

    #[test]
    fn names_from_urls() {
        assert_eq!(
            queue_name_from_url("http://localhost:1/000000000000/q1").unwrap(),
            "q1"
        );
        assert_eq!(
            queue_name_from_url("https://sqs.us-east-1.amazonaws.com/1/q.fifo").unwrap(),
            "q.fifo"
        );
        assert_eq!(queue_name_from_url("q2").unwrap(), "q2");
        assert!(queue_name_from_url("http://host").is_err());
        assert_eq!(
            queue_ref_from_url("http://h:1/queue/eu-central-1/000000000000/q").unwrap(),
            (Some("eu-central-1"), "q")
        );
        assert_eq!(
            queue_ref_from_url("http://h:1/000000000000/q").unwrap(),
            (None, "q")
        );
    }
}
