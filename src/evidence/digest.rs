//! Digests and masking: how secrets become safe to write.
//!
//! Receipt handles are bearer tokens for a lease, bodies are customer data, and account ids
//! identify the customer. None of them may reach evidence, reports, the terminal or logs, so
//! every free-text field a server sends back (error messages quote handles and ARNs) passes
//! through a [`Masker`] before it is stored.

use sha2::{Digest, Sha256};
use std::collections::BTreeSet;

/// Lowercase hex SHA-256 of `data`.
pub fn sha256_hex(data: impl AsRef<[u8]>) -> String {
    hex::encode(Sha256::digest(data.as_ref()))
}

/// The short form shown in place of a masked secret: the first 12 hex digits of its digest.
fn short(digest: &str) -> &str {
    &digest[..12.min(digest.len())]
}

/// Secrets shorter than this are not masked (see [`Masker::add_body`]).
pub const MIN_SECRET: usize = 8;

/// Replaces known secrets (handles, bodies) and anything that looks like an AWS account id.
#[derive(Debug, Default, Clone)]
pub struct Masker {
    /// (secret, replacement), longest first so a secret that contains another is replaced whole.
    secrets: Vec<(String, String)>,
    seen: BTreeSet<String>,
}

impl Masker {
    pub fn new() -> Self {
        Self::default()
    }

    /// Remembers a receipt handle; it will be shown as `<handle sha256:…>`.
    pub fn add_handle(&mut self, handle: &str) {
        self.add(handle, "handle");
    }

    /// Remembers a message body; it will be shown as `<body sha256:…>`.
    pub fn add_body(&mut self, body: &str) {
        self.add(body, "body");
    }

    fn add(&mut self, secret: &str, kind: &str) {
        // Very short strings ("x", "ok") would mask ordinary words in messages; they carry no
        // secret worth mangling text for, and a real receipt handle is hundreds of characters.
        if secret.len() < MIN_SECRET || !self.seen.insert(secret.to_string()) {
            return;
        }
        let replacement = format!("<{kind} sha256:{}…>", short(&sha256_hex(secret)));
        let at = self
            .secrets
            .partition_point(|(s, _)| s.len() >= secret.len());
        self.secrets.insert(at, (secret.to_string(), replacement));
    }

    /// Masks every known secret and every account id in `text`.
    pub fn mask(&self, text: &str) -> String {
        let mut out = text.to_string();
        for (secret, replacement) in &self.secrets {
            if out.contains(secret.as_str()) {
                out = out.replace(secret.as_str(), replacement);
            }
        }
        mask_account_ids(&out)
    }
}

/// A URL without its `user:password@` part, for anything that records or prints an endpoint.
pub fn strip_userinfo(url: &str) -> String {
    match url.split_once("://") {
        Some((scheme, rest)) => {
            let host_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
            let (authority, tail) = rest.split_at(host_end);
            let host = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
            format!("{scheme}://{host}{tail}")
        }
        None => url.to_string(),
    }
}

/// Replaces every run of exactly 12 ASCII digits (an AWS account id: in ARNs, queue URLs,
/// error messages) with `************`. Longer runs (millisecond timestamps, sequence numbers)
/// are left alone.
pub fn mask_account_ids(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i].is_ascii_digit() {
            let start = i;
            while i < bytes.len() && bytes[i].is_ascii_digit() {
                i += 1;
            }
            if i - start == 12 {
                out.push_str("************");
            } else {
                out.push_str(&text[start..i]);
            }
        } else {
            let ch_len = text[i..].chars().next().map_or(1, char::len_utf8);
            out.push_str(&text[i..i + ch_len]);
            i += ch_len;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digest_is_lowercase_hex_sha256() {
        assert_eq!(
            sha256_hex(""),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
        assert_eq!(
            sha256_hex("abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }

    #[test]
    fn masks_account_ids_in_arns_and_urls_only_when_exactly_twelve_digits() {
        assert_eq!(
            mask_account_ids("arn:aws:sqs:us-east-1:123456789012:q"),
            "arn:aws:sqs:us-east-1:************:q"
        );
        assert_eq!(
            mask_account_ids("https://sqs.eu-west-1.amazonaws.com/123456789012/q"),
            "https://sqs.eu-west-1.amazonaws.com/************/q"
        );
        assert_eq!(
            mask_account_ids("ts 1732912345678 ok"),
            "ts 1732912345678 ok"
        );
        assert_eq!(mask_account_ids("ünïcode 12"), "ünïcode 12");
    }

    #[test]
    fn userinfo_is_stripped_from_urls() {
        assert_eq!(
            strip_userinfo("http://u:p@127.0.0.1:5000/x?a=b@c"),
            "http://127.0.0.1:5000/x?a=b@c"
        );
        assert_eq!(
            strip_userinfo("http://127.0.0.1:5000"),
            "http://127.0.0.1:5000"
        );
        assert_eq!(strip_userinfo("not a url"), "not a url");
    }

    #[test]
    fn masks_known_handles_and_bodies_by_digest() {
        let mut m = Masker::new();
        let handle = "AQEBwJnKyrHigUMZj6rYigCgxlaS3SLy0a";
        m.add_handle(handle);
        m.add_body("{\"business_key\":\"b-1\"}");
        let text = format!(
            "The receipt handle \"{handle}\" is not valid for body {{\"business_key\":\"b-1\"}}"
        );
        let masked = m.mask(&text);
        assert!(!masked.contains(handle));
        assert!(!masked.contains("b-1"));
        assert!(masked.contains(&format!("<handle sha256:{}…>", &sha256_hex(handle)[..12])));
        assert!(masked.contains("<body sha256:"));
    }

    #[test]
    fn a_secret_containing_another_is_masked_whole() {
        let mut m = Masker::new();
        m.add_handle("abcdefgh");
        m.add_handle("abcdefgh-longer-handle");
        let masked = m.mask("x abcdefgh-longer-handle y");
        assert!(!masked.contains("longer"), "{masked}");
    }
}
