//! MD5 digests SQS returns: of the body and of the message attributes.
//!
//! The attribute digest follows the algorithm AWS documents for `MD5OfMessageAttributes`
//! (sqs-message-metadata, "Calculating the MD5 message digest for message attributes"): names
//! sorted; for each, 4-byte big-endian length + UTF-8 name, length + DataType, one transport byte
//! (1 = String/Number, 2 = Binary), length + value bytes.

use std::collections::BTreeMap;

use md5::{Digest, Md5};

use crate::emulator::model::message::MessageAttributeValue;

/// Hex MD5 of raw bytes.
pub(crate) fn md5_hex(bytes: &[u8]) -> String {
    hex::encode(Md5::digest(bytes))
}

fn push_len_prefixed(buf: &mut Vec<u8>, bytes: &[u8]) {
    buf.extend_from_slice(&(bytes.len() as u32).to_be_bytes());
    buf.extend_from_slice(bytes);
}

/// Hex MD5 of a set of message attributes; `None` for an empty set (AWS omits the field).
pub(crate) fn md5_of_attributes(
    attributes: &BTreeMap<String, MessageAttributeValue>,
) -> Option<String> {
    if attributes.is_empty() {
        return None;
    }
    let mut buf = Vec::new();
    // BTreeMap iterates in byte order of the names, which is the order AWS sorts by.
    for (name, value) in attributes {
        push_len_prefixed(&mut buf, name.as_bytes());
        push_len_prefixed(&mut buf, value.data_type.as_bytes());
        if value.is_binary() {
            buf.push(2);
            push_len_prefixed(&mut buf, value.binary_value.as_deref().unwrap_or_default());
        } else {
            buf.push(1);
            push_len_prefixed(
                &mut buf,
                value.string_value.as_deref().unwrap_or_default().as_bytes(),
            );
        }
    }
    Some(md5_hex(&buf))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn string(value: &str) -> MessageAttributeValue {
        MessageAttributeValue {
            data_type: "String".into(),
            string_value: Some(value.into()),
            binary_value: None,
        }
    }

    fn attrs(pairs: &[(&str, MessageAttributeValue)]) -> BTreeMap<String, MessageAttributeValue> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.clone()))
            .collect()
    }

    // Vectors recorded against AWS (SNAP-2025, see docs/aws-facts.md A3).
    #[test]
    fn body_md5_matches_aws() {
        assert_eq!(md5_hex(b"msg"), "6e2baaf3b97dbeef01c0043275f9a0e7");
    }

    #[test]
    fn attribute_md5_matches_aws_recordings() {
        let all = attrs(&[
            ("General", string("Kenobi")),
            ("Hello", string("There")),
            ("Help.Me", string("Me")),
        ]);
        assert_eq!(
            md5_of_attributes(&all).unwrap(),
            "4c360f3fdafd970e05fae2f149d997f5"
        );
        let hello = attrs(&[("Hello", string("There"))]);
        assert_eq!(
            md5_of_attributes(&hello).unwrap(),
            "a311262e065454b75da111d535b8dacd"
        );
        let foo = attrs(&[("Foo", string("Bar"))]);
        assert_eq!(
            md5_of_attributes(&foo).unwrap(),
            "ae7155c6026991b6d54b11589678bf9c"
        );
        let k = attrs(&[("k", string("x"))]);
        assert_eq!(
            md5_of_attributes(&k).unwrap(),
            "a45daa70926828a2f0a1db3418e6feb4"
        );
    }

    #[test]
    fn binary_attribute_md5_matches_aws_recording() {
        let value = MessageAttributeValue {
            data_type: "Binary".into(),
            string_value: None,
            binary_value: Some(
                b"traceparent\x1e00-774062d6c37081a5a0b9b5b88e30627c-2d2482211f6489da-01".to_vec(),
            ),
        };
        let set = attrs(&[("attr1", value)]);
        assert_eq!(
            md5_of_attributes(&set).unwrap(),
            "8cbe4db156db8a94db8b801b7addb984"
        );
    }

    #[test]
    fn empty_set_has_no_digest() {
        assert_eq!(md5_of_attributes(&BTreeMap::new()), None);
    }
}
