//! MD5 digests SQS returns: of the body and of the message attributes.
//!
//! The attribute digest follows the algorithm AWS documents for `MD5OfMessageAttributes`
//! (sqs-message-metadata, "Calculating the MD5 message digest for message attributes"): names
//! sorted; for each, 4-byte big-endian length + UTF-8 name, length + DataType, one transport byte
//! (1 = String/Number, 2 = Binary), length + value bytes.
//!
//! A batch's bodies and attribute sets are digested together ([`digest_each`],
//! `md5/lanes.rs`): one MD5 is a chain of dependent steps, and independent ones side by side
//! fill a core's vector registers.

mod lanes;

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

/// The MD5 of each of `bodies`, in order: as [`digest`] of each, several at a time (a
/// SendMessageBatch's bodies and attribute sets).
pub(crate) fn digest_each(bodies: &[&[u8]]) -> Vec<[u8; 16]> {
    let mut out = vec![[0u8; 16]; bodies.len()];
    for (bodies, out) in bodies
        .chunks(lanes::LANES)
        .zip(out.chunks_mut(lanes::LANES))
    {
        if bodies.len() < lanes::MIN_LANES {
            for (body, digest) in bodies.iter().zip(out) {
                *digest = self::digest(body);
            }
        } else {
            lanes::digest_lanes(bodies, out);
        }
    }
    out
}

fn push_len_prefixed(buf: &mut Vec<u8>, bytes: &[u8]) {
    buf.extend_from_slice(&(bytes.len() as u32).to_be_bytes());
    buf.extend_from_slice(bytes);
}

/// What `MD5OfMessageAttributes` is the MD5 of, for a set of message attributes given in
/// byte order of their names (the order AWS sorts by); `None` for an empty set (AWS omits the
/// field). Measured first, so the buffer is allocated once.
pub(crate) fn encode_attributes<'a>(
    attributes: impl IntoIterator<Item = DigestInput<'a>, IntoIter: Clone>,
) -> Option<Vec<u8>> {
    let attributes = attributes.into_iter();
    // Three 4-byte lengths and a transport byte around the three parts of each.
    let len: usize = attributes
        .clone()
        .map(|(name, data_type, _, value)| 13 + name.len() + data_type.len() + value.len())
        .sum();
    if len == 0 {
        return None;
    }
    let mut buf = Vec::with_capacity(len);
    for (name, data_type, transport, value) in attributes {
        push_len_prefixed(&mut buf, name.as_bytes());
        push_len_prefixed(&mut buf, data_type.as_bytes());
        buf.push(transport as u8);
        push_len_prefixed(&mut buf, value);
    }
    Some(buf)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn md5_of_attributes<'a>(
        attributes: impl IntoIterator<Item = DigestInput<'a>, IntoIter: Clone>,
    ) -> Option<String> {
        encode_attributes(attributes).map(|e| crate::support::hex::digest_string(&digest(&e)))
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

    /// A way of digesting up to [`lanes::LANES`] bodies at once.
    type Digester = dyn Fn(&[&[u8]], &mut [[u8; 16]]);

    /// Every way this CPU can digest several bodies at once: the dispatching entry point, the
    /// baseline variant, and each vector variant the CPU runs.
    fn every_variant(bodies: &[&[u8]]) -> Vec<(&'static str, Vec<[u8; 16]>)> {
        let run = |f: &Digester| {
            let mut out = vec![[0u8; 16]; bodies.len()];
            for (b, o) in bodies
                .chunks(lanes::LANES)
                .zip(out.chunks_mut(lanes::LANES))
            {
                f(b, o);
            }
            out
        };
        let mut all = vec![
            ("digest_each", digest_each(bodies)),
            ("baseline", run(&|b, o| lanes::lanes(b, o))),
        ];
        #[cfg(target_arch = "x86_64")]
        {
            if std::arch::is_x86_feature_detected!("avx2") {
                // SAFETY: the CPU has AVX2 (checked just above).
                all.push(("avx2", run(&|b, o| unsafe { lanes::x86::avx2(b, o) })));
            }
            if std::arch::is_x86_feature_detected!("avx512f") {
                // SAFETY: the CPU has AVX-512F (checked just above).
                all.push(("avx512", run(&|b, o| unsafe { lanes::x86::avx512(b, o) })));
            }
        }
        all
    }

    #[test]
    fn several_at_once_give_rfc_1321s_digests() {
        // RFC 1321, A.5, of mixed lengths: one block, two (56 and 64 bytes and more), none.
        let suite: [(&[u8], &str); 7] = [
            (b"", "d41d8cd98f00b204e9800998ecf8427e"),
            (b"a", "0cc175b9c0f1b6a831c399e269772661"),
            (b"abc", "900150983cd24fb0d6963f7d28e17f72"),
            (b"message digest", "f96b697d7cb7938d525a2f31aaf161d0"),
            (
                b"abcdefghijklmnopqrstuvwxyz",
                "c3fcd3d76192e4007dfb496cca67e13b",
            ),
            (
                b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789",
                "d174ab98d277d9f5a5611c2c9f419d9f",
            ),
            (
                b"12345678901234567890123456789012345678901234567890123456789012345678901234567890",
                "57edf4a22be3c955ac49da2e2107b67a",
            ),
        ];
        let bodies: Vec<&[u8]> = suite.iter().map(|(b, _)| *b).collect();
        for (variant, digests) in every_variant(&bodies) {
            let hex: Vec<String> = digests
                .iter()
                .map(crate::support::hex::digest_string)
                .collect();
            let want: Vec<&str> = suite.iter().map(|(_, h)| *h).collect();
            assert_eq!(hex, want, "{variant}");
        }
    }

    #[test]
    fn a_message_is_as_many_blocks_as_its_bytes_and_padding_need() {
        // The padding is a 0x80 byte and the 8-byte length: 55 bytes fit one block, 56 do not.
        for (len, blocks) in [(0, 1), (55, 1), (56, 2), (64, 2), (119, 2), (120, 3)] {
            assert_eq!(lanes::blocks(len), blocks, "{len}");
        }
    }

    proptest::proptest! {
        #![proptest_config(sqsprobe_testing::config(256))]

        /// Any number of bodies of any lengths, digested several at a time by every variant,
        /// give what `md-5` gives for each alone: lanes that end early, lanes finished one at
        /// a time, more bodies than lanes.
        #[test]
        fn several_at_once_are_each_alone(
            bodies in proptest::collection::vec(
                proptest::prop_oneof![
                    proptest::collection::vec(proptest::num::u8::ANY, 0..70),
                    proptest::collection::vec(proptest::num::u8::ANY, 0..400),
                ],
                0..40,
            )
        ) {
            let bodies: Vec<&[u8]> = bodies.iter().map(Vec::as_slice).collect();
            let alone: Vec<[u8; 16]> = bodies.iter().map(|b| Md5::digest(b).into()).collect();
            for (variant, digests) in every_variant(&bodies) {
                proptest::prop_assert_eq!(&digests, &alone, "{}", variant);
            }
        }
    }
}
