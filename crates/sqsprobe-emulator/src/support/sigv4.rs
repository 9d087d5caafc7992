//! What a request's SigV4 credential scope says: the access key, region and service
//! (`Credential=AKID/20240101/eu-central-1/sqs/aws4_request`, in the `Authorization` header or
//! a presigned `X-Amz-Credential`). Signatures are never checked; the scope only picks the
//! region namespace a request works in, the service (SQS or STS), and the sender's identity.

use std::borrow::Cow;

/// A parsed credential scope. Fields are `None` when missing or not of AWS's shape.
///
/// Borrowed from the header (every request has one, so allocating here was a third of the
/// scope's cost); a region or service is copied only when it has to be lower-cased.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Scope<'a> {
    pub access_key: Option<&'a str>,
    pub region: Option<Cow<'a, str>>,
    pub service: Option<Cow<'a, str>>,
}

/// The credential of a SigV4 `Authorization` header, if it has one.
///
/// Every request carries one, so the usual shape (`AWS4-HMAC-SHA256 Credential=…`) is a
/// prefix check and the end a byte scan; a substring search and a `char` scan were a large
/// part of every request's cost (docs/performance.md). Header values reach here as
/// visible ASCII (`HeaderValue::to_str`), so ASCII whitespace is all the whitespace there is.
fn header_credential(authorization: &str) -> Option<&str> {
    const KEY: &str = "Credential=";
    let rest = match authorization.strip_prefix("AWS4-HMAC-SHA256 Credential=") {
        Some(rest) => rest,
        None => &authorization[authorization.find(KEY)? + KEY.len()..],
    };
    let end = rest
        .bytes()
        .position(|b| b == b',' || b.is_ascii_whitespace())
        .unwrap_or(rest.len());
    Some(&rest[..end])
}

/// The first four `/`-separated fields of a credential (access key, date, region, service), as
/// `split('/')` gives them, in one pass over the bytes rather than four `Split::next` calls on
/// every request.
fn fields(credential: &str) -> [Option<&str>; 4] {
    let mut out = [None; 4];
    let mut start = 0;
    let mut n = 0;
    for (i, b) in credential.bytes().enumerate() {
        if b == b'/' {
            out[n] = Some(&credential[start..i]);
            n += 1;
            if n == out.len() {
                return out;
            }
            start = i + 1;
        }
    }
    out[n] = Some(&credential[start..]);
    out
}

/// A token of `[A-Za-z0-9-]`, 1–`max` long: what access keys, regions and services look like.
/// Anything else is dropped, so header text never reaches an ARN or a URL.
fn token(part: Option<&str>, max: usize) -> Option<&str> {
    part.filter(|p| {
        !p.is_empty() && p.len() <= max && p.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
    })
}

/// `token`, lower-cased: allocated only when it has an upper-case letter (the usual lower-case
/// one is borrowed as it is).
fn lower_token(part: Option<&str>, max: usize) -> Option<Cow<'_, str>> {
    token(part, max).map(|t| {
        if t.bytes().any(|b| b.is_ascii_uppercase()) {
            Cow::Owned(t.to_ascii_lowercase())
        } else {
            Cow::Borrowed(t)
        }
    })
}

/// The scope of a request: the `Authorization` header's, else a presigned `X-Amz-Credential`.
pub(crate) fn scope<'a>(authorization: Option<&'a str>, presigned: Option<&'a str>) -> Scope<'a> {
    let Some(credential) = authorization.and_then(header_credential).or(presigned) else {
        return Scope::default();
    };
    let [access_key, _date, region, service] = fields(credential);
    let access_key = token(access_key, 128);
    let region = lower_token(region, 32);
    let service = lower_token(service, 32);
    Scope {
        access_key,
        region,
        service,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_credential_scope() {
        let header = "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20260101/eu-central-1/sqs/aws4_request, SignedHeaders=host, Signature=abc";
        let s = scope(Some(header), None);
        assert_eq!(s.access_key, Some("AKIDEXAMPLE"));
        assert_eq!(s.region.as_deref(), Some("eu-central-1"));
        assert_eq!(s.service.as_deref(), Some("sqs"));
        let spaced = scope(
            Some("AWS4-HMAC-SHA256  Credential=AK/1/EU-West-1/SQS/aws4_request SignedHeaders=x"),
            None,
        );
        assert_eq!(spaced.access_key, Some("AK"));
        assert_eq!(spaced.region.as_deref(), Some("eu-west-1"), "lower-cased");
        assert_eq!(spaced.service.as_deref(), Some("sqs"));
        let presigned = scope(None, Some("AKID/20260101/us-west-2/sts/aws4_request"));
        assert_eq!(presigned.service.as_deref(), Some("sts"));
        assert_eq!(scope(Some("Bearer x"), None), Scope::default());
        let hostile = scope(
            Some("Credential=AK/1/us-east-1\"<x>/sqs/aws4_request"),
            None,
        );
        assert_eq!(
            hostile.region, None,
            "a region that is not a token is dropped"
        );
    }

    #[test]
    fn fields_are_the_first_four_of_split() {
        for credential in [
            "",
            "a",
            "a/b",
            "a/b/c/d",
            "a/b/c/d/e/f",
            "//",
            "a//c/",
            "/x/y/z/",
        ] {
            let mut split = credential.split('/');
            let expected = [split.next(), split.next(), split.next(), split.next()];
            assert_eq!(fields(credential), expected, "{credential:?}");
        }
    }
}
