//! Typed access to a request's parameters, whichever protocol carried them.
//!
//! Both protocols are decoded into the JSON protocol's shape (a JSON object); the query protocol
//! delivers every scalar as a string, so numeric accessors accept numeric strings too.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use crate::emulator::support::errors::{SqsError, SqsResult};

/// A request's parameters.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Input<'a> {
    map: &'a Map<String, Value>,
}

fn wrong_type(name: &str) -> SqsError {
    SqsError::serialization(format!("Unexpected value type for parameter {name}."))
}

impl<'a> Input<'a> {
    /// Wraps a parameter object.
    pub fn new(map: &'a Map<String, Value>) -> Self {
        Self { map }
    }

    /// The raw value, treating JSON null as absent.
    pub fn raw(&self, name: &str) -> Option<&'a Value> {
        self.map.get(name).filter(|v| !v.is_null())
    }

    /// An optional string.
    pub fn string(&self, name: &str) -> SqsResult<Option<&'a str>> {
        match self.raw(name) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.as_str())),
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
        match self.raw(name) {
            None => Ok(None),
            Some(Value::Number(n)) => n.as_i64().map(Some).ok_or_else(|| wrong_type(name)),
            Some(Value::String(s)) => s
                .trim()
                .parse::<i64>()
                .map(Some)
                .map_err(|_| SqsError::invalid_value(s, name, "Must be an integer.")),
            Some(_) => Err(wrong_type(name)),
        }
    }

    /// An optional list of strings.
    pub fn string_list(&self, name: &str) -> SqsResult<Vec<String>> {
        match self.raw(name) {
            None => Ok(Vec::new()),
            Some(Value::Array(items)) => items
                .iter()
                .map(|v| {
                    v.as_str()
                        .map(str::to_owned)
                        .ok_or_else(|| wrong_type(name))
                })
                .collect(),
            Some(_) => Err(wrong_type(name)),
        }
    }

    /// An optional string-to-string map. Numbers and booleans are stringified, because
    /// hand-written JSON clients send `"DelaySeconds": 5` and AWS's attributes are strings.
    pub fn string_map(&self, name: &str) -> SqsResult<BTreeMap<String, String>> {
        match self.raw(name) {
            None => Ok(BTreeMap::new()),
            Some(Value::Object(map)) => map
                .iter()
                .map(|(k, v)| {
                    let v = match v {
                        Value::String(s) => s.clone(),
                        Value::Number(n) => n.to_string(),
                        Value::Bool(b) => b.to_string(),
                        _ => return Err(wrong_type(name)),
                    };
                    Ok((k.clone(), v))
                })
                .collect(),
            Some(_) => Err(wrong_type(name)),
        }
    }

    /// An optional list of objects (batch entries).
    pub fn object_list(&self, name: &str) -> SqsResult<Vec<Input<'a>>> {
        match self.raw(name) {
            None => Ok(Vec::new()),
            Some(Value::Array(items)) => items
                .iter()
                .map(|v| {
                    v.as_object()
                        .map(Input::new)
                        .ok_or_else(|| wrong_type(name))
                })
                .collect(),
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
/// char matcher per call, 2,100 of a DeleteMessage's instructions (`callgrind`,
/// docs/performance.md); the URL's delimiters are ASCII, so byte positions are char
/// boundaries.
pub(crate) fn queue_ref_from_url(url: &str) -> SqsResult<(Option<&str>, &str)> {
    let url = url.trim();
    let bytes = url.as_bytes();
    // The first `://`: memchr's search for each `:`, then a look at the two bytes after it
    // (a window compared at every byte was ~500 of a request's instructions).
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
        #![proptest_config(crate::testing::config(1024))]

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
