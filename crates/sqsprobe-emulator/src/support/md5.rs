//! MD5 digests SQS returns: of the body and of the message attributes.
//!
//! The attribute digest follows the algorithm AWS documents for `MD5OfMessageAttributes`
//! (sqs-message-metadata, "Calculating the MD5 message digest for message attributes"): names
//! sorted; for each, 4-byte big-endian length + UTF-8 name, length + DataType, one transport byte
//! (1 = String/Number, 2 = Binary), length + value bytes.

use md5::{Digest, Md5};

/// How an attribute value travels in the digest encoding.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Transport {
    /// `String` and `Number` values (transport byte 1).
    String = 1,
    /// `Binary` values (transport byte 2).
    Binary = 2,
}

/// One attribute as the digest sees it: name, DataType, transport and value bytes.
pub(crate) type DigestInput<'a> = (&'a str, &'a str, Transport, &'a [u8]);

/// MD5 of `bytes`, as 16 bytes (messages store it so; rendered in hex on the way out).
pub(crate) fn digest(bytes: &[u8]) -> [u8; 16] {
    Md5::digest(bytes).into()
}

fn push_len_prefixed(buf: &mut Vec<u8>, bytes: &[u8]) {
    buf.extend_from_slice(&(bytes.len() as u32).to_be_bytes());
    buf.extend_from_slice(bytes);
}

/// MD5 of a set of message attributes given in byte order of their names (the order AWS
/// sorts by); `None` for an empty set (AWS omits the field).
pub(crate) fn digest_of_attributes<'a>(
    attributes: impl IntoIterator<Item = DigestInput<'a>>,
) -> Option<[u8; 16]> {
    let mut buf = Vec::new();
    let mut any = false;
    for (name, data_type, transport, value) in attributes {
        any = true;
        push_len_prefixed(&mut buf, name.as_bytes());
        push_len_prefixed(&mut buf, data_type.as_bytes());
        buf.push(transport as u8);
        push_len_prefixed(&mut buf, value);
    }
    any.then(|| digest(&buf))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn md5_of_attributes<'a>(
        attributes: impl IntoIterator<Item = DigestInput<'a>>,
    ) -> Option<String> {
        digest_of_attributes(attributes).map(|d| crate::support::hex::digest_string(&d))
    }

    fn md5_hex(bytes: &[u8]) -> String {
        crate::support::hex::digest_string(&digest(bytes))
    }

    fn strings<'a>(pairs: &[(&'a str, &'a str)]) -> Option<String> {
        md5_of_attributes(
            pairs
                .iter()
                .map(|(k, v)| (*k, "String", Transport::String, v.as_bytes())),
        )
    }

    // Vectors recorded against AWS (SNAP-2025, see docs/aws-facts.md A3).
    #[test]
    fn body_md5_matches_aws() {
        assert_eq!(md5_hex(b"msg"), "6e2baaf3b97dbeef01c0043275f9a0e7");
    }

    #[test]
    fn attribute_md5_matches_aws_recordings() {
        let all = [("General", "Kenobi"), ("Hello", "There"), ("Help.Me", "Me")];
        assert_eq!(strings(&all).unwrap(), "4c360f3fdafd970e05fae2f149d997f5");
        assert_eq!(
            strings(&[("Hello", "There")]).unwrap(),
            "a311262e065454b75da111d535b8dacd"
        );
        assert_eq!(
            strings(&[("Foo", "Bar")]).unwrap(),
            "ae7155c6026991b6d54b11589678bf9c"
        );
        assert_eq!(
            strings(&[("k", "x")]).unwrap(),
            "a45daa70926828a2f0a1db3418e6feb4"
        );
    }

    #[test]
    fn empty_set_has_no_digest() {
        assert_eq!(strings(&[]), None);
    }
}
