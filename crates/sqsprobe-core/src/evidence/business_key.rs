//! A message's business key: the name of the work it asks for, as the consumer's ledger
//! records it, so the same work delivered twice is recognisable. Evidence rows carry it; the
//! runner places a copy of a message by it; `sqsprobe audit` checks a ledger against it.

/// The business key of a JSON body: its `business_key` (or `business_id`) string field; `None`
/// for any other body.
pub fn business_key(body: &str) -> Option<String> {
    let v: serde_json::Value = serde_json::from_str(body).ok()?;
    let obj = v.as_object()?;
    ["business_key", "business_id"]
        .iter()
        .find_map(|k| obj.get(*k).and_then(|v| v.as_str()).map(str::to_string))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn business_keys_come_only_from_json_bodies() {
        assert_eq!(
            business_key(r#"{"business_key":"b-1","x":1}"#),
            Some("b-1".into())
        );
        assert_eq!(business_key(r#"{"business_id":"b-2"}"#), Some("b-2".into()));
        assert_eq!(business_key("business_key=b-1"), None);
        assert_eq!(business_key(r#"{"business_key":7}"#), None);
    }
}
