//! What a request's SigV4 credential scope says: the access key, region and service
//! (`Credential=AKID/20240101/eu-central-1/sqs/aws4_request`, in the `Authorization` header or
//! a presigned `X-Amz-Credential`). Signatures are never checked; the scope only picks the
//! region namespace a request works in, the service (SQS or STS), and the sender's identity.

/// A parsed credential scope. Fields are `None` when missing or not of AWS's shape.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Scope {
    pub access_key: Option<String>,
    pub region: Option<String>,
    pub service: Option<String>,
}

/// The credential of a SigV4 `Authorization` header, if it has one.
fn header_credential(authorization: &str) -> Option<&str> {
    let start = authorization.find("Credential=")? + "Credential=".len();
    let rest = &authorization[start..];
    let end = rest
        .find(|c: char| c == ',' || c.is_whitespace())
        .unwrap_or(rest.len());
    Some(&rest[..end])
}

/// A token of `[A-Za-z0-9-]`, 1–`max` long: what access keys, regions and services look like.
/// Anything else is dropped, so header text never reaches an ARN or a URL.
fn token(part: Option<&str>, max: usize) -> Option<String> {
    part.filter(|p| {
        !p.is_empty() && p.len() <= max && p.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
    })
    .map(str::to_owned)
}

/// The scope of a request: the `Authorization` header's, else a presigned `X-Amz-Credential`.
pub(crate) fn scope(authorization: Option<&str>, presigned: Option<&str>) -> Scope {
    let Some(credential) = authorization.and_then(header_credential).or(presigned) else {
        return Scope::default();
    };
    let mut parts = credential.split('/');
    let access_key = token(parts.next(), 128);
    let _date = parts.next();
    let region = token(parts.next(), 32).map(|r| r.to_ascii_lowercase());
    let service = token(parts.next(), 32).map(|s| s.to_ascii_lowercase());
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
        assert_eq!(s.access_key.as_deref(), Some("AKIDEXAMPLE"));
        assert_eq!(s.region.as_deref(), Some("eu-central-1"));
        assert_eq!(s.service.as_deref(), Some("sqs"));
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
}
