//! Digests and masking: how secrets become safe to write.
//!
//! Receipt handles are bearer tokens for a lease, bodies are customer data, account ids and
//! IAM principals identify the customer, and the run's own access key id and session token are
//! credentials. None of them may reach evidence, reports, the terminal or logs, so every
//! free-text field a server sends back (error messages quote handles, ARNs, principals)
//! passes through a [`Masker`] before it is stored. One rule everywhere: the masker knows each
//! secret in every form a server may echo it (as sent, JSON-escaped, URL-encoded,
//! XML-escaped), and masks by shape what it was never told (account ids, IAM unique ids,
//! access key ids, principal names in ARNs).
//!
//! Digests serve correlation, not secrecy: an unsalted SHA-256 of a short or guessable body
//! can be reversed by trying candidates.

use std::collections::BTreeSet;

pub use sqsprobe_facts::digest::sha256_hex;

/// The short form shown in place of a masked secret: the first 12 hex digits of its digest.
fn short(digest: &str) -> &str {
    &digest[..12.min(digest.len())]
}

/// Secrets shorter than this are not masked (see [`Masker::add_body`]).
pub const MIN_SECRET: usize = 8;

/// One form of a known secret and what stands in its place.
#[derive(Debug, Clone)]
struct Secret {
    text: String,
    replacement: String,
    /// Masked only where it stands as a whole token (no ASCII letter or digit on either side):
    /// an id such as a `SenderId` of `000000000000` is not that id inside a 20-digit
    /// SequenceNumber, while a body or handle is masked wherever it is echoed.
    whole_token: bool,
}

/// Replaces known secrets (handles, bodies) and anything that looks like an AWS account id.
#[derive(Debug, Default, Clone)]
pub struct Masker {
    /// Secrets with their replacements, longest first so a secret that contains another is
    /// replaced whole.
    secrets: Vec<Secret>,
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

    /// Remembers a credential of the run (its access key id, its session token); it will be
    /// shown as `<credential>`, without even a digest.
    pub fn add_credential(&mut self, credential: &str) {
        if credential.len() < MIN_SECRET || !self.seen.insert(credential.to_string()) {
            return;
        }
        self.insert_forms(credential, "<credential>".to_string(), false);
    }

    /// Remembers a principal's id as a server reported it (a message's `SenderId`: an IAM
    /// unique id, `AROA…:<session name>` under an assumed role); it will be shown as
    /// `<principal-id>`. The shape rules catch the id part alone, not the session name.
    pub fn add_principal_id(&mut self, id: &str) {
        if id.len() < MIN_SECRET || !self.seen.insert(id.to_string()) {
            return;
        }
        self.insert_forms(id, "<principal-id>".to_string(), true);
    }

    fn add(&mut self, secret: &str, kind: &str) {
        // Very short strings ("x", "ok") would mask ordinary words in messages; they carry no
        // secret worth mangling text for, and a real receipt handle is hundreds of characters.
        if secret.len() < MIN_SECRET || !self.seen.insert(secret.to_string()) {
            return;
        }
        let replacement = format!("<{kind} sha256:{}…>", short(&sha256_hex(secret)));
        self.insert_forms(secret, replacement, false);
    }

    /// The secret and each encoding a server may echo it in, all with one replacement.
    fn insert_forms(&mut self, secret: &str, replacement: String, whole_token: bool) {
        let json = serde_json::to_string(secret)
            .map(|q| q[1..q.len() - 1].to_string())
            .unwrap_or_default();
        let url: String = form_urlencoded::byte_serialize(secret.as_bytes()).collect();
        let xml = sqsprobe_facts::text::escape::xml_text(secret);
        let mut forms = vec![secret.to_string(), json, url, xml];
        forms.sort();
        forms.dedup();
        for form in forms.into_iter().filter(|f| f.len() >= MIN_SECRET) {
            let at = self.secrets.partition_point(|s| s.text.len() >= form.len());
            let secret = Secret {
                text: form,
                replacement: replacement.clone(),
                whole_token,
            };
            self.secrets.insert(at, secret);
        }
    }

    /// Masks every known secret, and everything shaped like an account id, an IAM unique id
    /// or access key id, or the name part of an IAM principal ARN, in `text`.
    pub fn mask(&self, text: &str) -> String {
        let mut out = text.to_string();
        for secret in &self.secrets {
            if !out.contains(secret.text.as_str()) {
                continue;
            }
            out = if secret.whole_token {
                replace_tokens(&out, &secret.text, &secret.replacement)
            } else {
                out.replace(secret.text.as_str(), &secret.replacement)
            };
        }
        mask_identities(&out)
    }
}

/// `text` with each occurrence of `needle` that is a whole token (no ASCII letter or digit
/// just before or after it) replaced by `replacement`.
fn replace_tokens(text: &str, needle: &str, replacement: &str) -> String {
    let alnum_at = |i: usize| {
        text.as_bytes()
            .get(i)
            .is_some_and(u8::is_ascii_alphanumeric)
    };
    let mut out = String::with_capacity(text.len());
    let mut copied = 0;
    for (at, _) in text.match_indices(needle) {
        let end = at + needle.len();
        if (at > 0 && alnum_at(at - 1)) || alnum_at(end) {
            continue;
        }
        out.push_str(&text[copied..at]);
        out.push_str(replacement);
        copied = end;
    }
    out.push_str(&text[copied..]);
    out
}

/// Masks what identifies an account or a principal in any text, without knowing the run's
/// secrets: account ids, IAM unique ids and access key ids, and principal ARN names. For text
/// that is shown or saved outside the evidence (bench errors), where no [`Masker`] exists.
pub fn mask_identities(text: &str) -> String {
    mask_account_ids(&mask_principals(&mask_iam_ids(text)))
}

/// IAM unique-id and access-key prefixes (`AIDA…` a user, `AROA…` a role, `AKIA…`/`ASIA…` an
/// access key id, ...): 4 capitals then at least 12 more upper-case letters or digits.
const IAM_ID_PREFIXES: &[&str] = &[
    "AKIA", "ASIA", "AIDA", "AROA", "AIPA", "ANPA", "ANVA", "AGPA", "APKA", "ABIA", "ACCA",
];

/// Replaces IAM unique ids and access key ids (`AIDAJQABLZS4A3QDU576Q`) with `<iam-id>`: they
/// appear in `SenderId` attributes and in authorisation errors, and identify a principal.
pub fn mask_iam_ids(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    let mut copied = 0;
    while i + 4 <= bytes.len() {
        let boundary = i == 0 || !bytes[i - 1].is_ascii_alphanumeric();
        if boundary
            && IAM_ID_PREFIXES
                .iter()
                .any(|p| bytes[i..].starts_with(p.as_bytes()))
        {
            let mut end = i + 4;
            while end < bytes.len()
                && (bytes[end].is_ascii_uppercase() || bytes[end].is_ascii_digit())
            {
                end += 1;
            }
            let tail_ok = end == bytes.len() || !bytes[end].is_ascii_alphanumeric();
            if end - i >= 16 && tail_ok {
                out.push_str(&text[copied..i]);
                out.push_str("<iam-id>");
                copied = end;
                i = end;
                continue;
            }
        }
        i += 1;
    }
    out.push_str(&text[copied..]);
    out
}

/// Principal kinds whose name follows in an IAM ARN (`arn:aws:iam::123456789012:user/alice`,
/// `arn:aws:sts::123456789012:assumed-role/deploy/session-7`).
const PRINCIPAL_KINDS: &[&str] = &[
    ":user/",
    ":role/",
    ":assumed-role/",
    ":federated-user/",
    ":group/",
];

/// Replaces the name part of IAM principal ARNs with `<principal>`: a user, role or session
/// name says who ran the harness. The path runs to the next space, quote or delimiter.
pub fn mask_principals(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    loop {
        let next = PRINCIPAL_KINDS
            .iter()
            .filter_map(|k| rest.find(k).map(|at| (at, *k)))
            .min_by_key(|(at, _)| *at);
        let Some((at, kind)) = next else {
            out.push_str(rest);
            return out;
        };
        let name_start = at + kind.len();
        let name_len = rest[name_start..]
            .find(|c: char| c.is_whitespace() || "\"'`,;)]}>".contains(c))
            .unwrap_or(rest.len() - name_start);
        out.push_str(&rest[..name_start]);
        if name_len > 0 {
            out.push_str("<principal>");
        }
        rest = &rest[name_start + name_len..];
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
    fn a_principal_id_is_masked_as_a_token_not_inside_a_longer_one() {
        // ministack's SenderId is the account id; its SequenceNumbers are zero-padded.
        let mut m = Masker::new();
        m.add_principal_id("000000000000");
        assert_eq!(
            m.mask("SenderId 000000000000, SequenceNumber 00000000000000000001"),
            "SenderId <principal-id>, SequenceNumber 00000000000000000001"
        );
        assert_eq!(m.mask("(000000000000)"), "(<principal-id>)");
        assert_eq!(m.mask("000000000000"), "<principal-id>");
    }

    #[test]
    fn a_sender_id_is_masked_whole_session_name_included() {
        let mut m = Masker::new();
        let sender = "AROAIT2UOQQY3AUEKVGXU:deploy@example.com";
        m.add_principal_id(sender);
        let masked = m.mask(&format!("SenderId {sender} is not allowed"));
        assert_eq!(masked, "SenderId <principal-id> is not allowed");
        // The shape rule alone would keep the session name.
        assert!(Masker::new().mask(sender).contains("deploy@example.com"));
    }

    #[test]
    fn secrets_are_masked_in_every_form_a_server_may_echo() {
        let mut m = Masker::new();
        let body = r#"{"card": "4111 1111 & <x>"}"#;
        m.add_body(body);
        let json = serde_json::to_string(body).unwrap();
        let url: String = form_urlencoded::byte_serialize(body.as_bytes()).collect();
        let xml = sqsprobe_facts::text::escape::xml_text(body);
        for form in [body.to_string(), json, url, xml] {
            let masked = m.mask(&format!("server said: {form}."));
            assert!(!masked.contains("4111"), "{masked}");
            assert!(masked.contains("<body sha256:"), "{masked}");
        }
    }

    #[test]
    fn the_runs_credentials_are_masked_without_a_digest() {
        let mut m = Masker::new();
        m.add_credential("wJalrXUtnFEMI/K7MDENG+bPxRfiCYzEXAMPLEKEY");
        m.add_credential("IQoJb3JpZ2luX2VjEJr//////////wEaCXVzLWVhc3QtMSJH");
        let masked = m.mask(
            "token IQoJb3JpZ2luX2VjEJr//////////wEaCXVzLWVhc3QtMSJH and secret \
             wJalrXUtnFEMI%2FK7MDENG%2BbPxRfiCYzEXAMPLEKEY",
        );
        assert_eq!(masked, "token <credential> and secret <credential>");
    }

    #[test]
    fn iam_ids_access_keys_and_principals_are_masked_by_shape() {
        let m = Masker::new();
        assert_eq!(
            m.mask("SenderId = AIDAJQABLZS4A3QDU576Q, key AKIAIOSFODNN7EXAMPLE"),
            "SenderId = <iam-id>, key <iam-id>"
        );
        assert_eq!(
            m.mask("SenderId AROAEXAMPLEROLEID1234:session-7"),
            "SenderId <iam-id>:session-7"
        );
        // Words that merely start like an id are left alone.
        assert_eq!(
            m.mask("AKIA is a prefix; ASIAN food"),
            "AKIA is a prefix; ASIAN food"
        );
        assert_eq!(
            m.mask("User: arn:aws:sts::123456789012:assumed-role/deploy/ci-42 is not authorized"),
            "User: arn:aws:sts::************:assumed-role/<principal> is not authorized"
        );
        assert_eq!(
            m.mask("\"arn:aws:iam::123456789012:user/alice\""),
            "\"arn:aws:iam::************:user/<principal>\""
        );
    }

    #[test]
    fn a_secret_containing_another_is_masked_whole() {
        let mut m = Masker::new();
        m.add_handle("abcdefgh");
        m.add_handle("abcdefgh-longer-handle");
        let masked = m.mask("x abcdefgh-longer-handle y");
        assert!(!masked.contains("longer"), "{masked}");
    }

    mod props {
        use super::*;
        use proptest::prelude::*;

        proptest! {
            #![proptest_config(sqsprobe_testing::config(256))]

            /// A known secret never survives masking, in any form and any surrounding text,
            /// and masking never panics on arbitrary Unicode.
            #[test]
            fn known_secrets_never_survive(
                secret in "[A-Za-z0-9+/=&<>\"% -]{8,64}",
                before in "\\PC{0,40}",
                after in "\\PC{0,40}",
                form in 0usize..4,
            ) {
                let mut m = Masker::new();
                m.add_handle(&secret);
                let shown = match form {
                    0 => secret.clone(),
                    1 => serde_json::to_string(&secret).unwrap(),
                    2 => form_urlencoded::byte_serialize(secret.as_bytes()).collect(),
                    _ => sqsprobe_facts::text::escape::xml_text(&secret),
                };
                let masked = m.mask(&format!("{before}{shown}{after}"));
                prop_assert!(!masked.contains(&shown), "{}", masked);
            }

            #[test]
            fn masking_arbitrary_text_never_panics_and_is_stable(text in "\\PC{0,200}") {
                let m = Masker::new();
                let once = m.mask(&text);
                prop_assert_eq!(m.mask(&once), once);
            }
        }
    }

    #[test]
    fn identities_are_masked_without_a_masker() {
        let text = "User: arn:aws:iam::123456789012:user/alice (AIDAJQABLZS4A3QDU576Q) is not \
                    authorized on https://sqs.us-east-1.amazonaws.com/123456789012/q";
        let masked = mask_identities(text);
        for secret in ["123456789012", "alice", "AIDAJQABLZS4A3QDU576Q"] {
            assert!(!masked.contains(secret), "{secret} in {masked}");
        }
        assert!(masked.contains("is not authorized on"), "{masked}");
    }
}
