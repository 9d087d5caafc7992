//! STS `GetCallerIdentity` on the emulator's port, so that tools which first ask STS for the
//! account (aws-sdk-sts, boto3, `sqsprobe run --target aws` pointed at `serve` through
//! `AWS_ENDPOINT_URL`) can be driven offline.
//!
//! STS speaks the query protocol (`Action=GetCallerIdentity&Version=2011-06-15`, XML out; the
//! aws-sdk-sts crate serialises it with `QueryWriter`). A request is STS's when its SigV4
//! credential scope names the `sts` service (`Credential=AKID/date/region/sts/aws4_request`, in
//! the `Authorization` header or a presigned `X-Amz-Credential`), or, unsigned, when its
//! Action is `GetCallerIdentity`, which SQS does not have. The caller is the account's root, as
//! AWS answers for root credentials: `UserId` is the account id and `Arn` is
//! `arn:aws:iam::<account>:root`.

use crate::support::errors::SqsError;
use crate::support::sigv4;
use sqsprobe_facts::text::escape::xml_text;

/// Content type of STS replies.
pub(crate) const CONTENT_TYPE: &str = "text/xml";
const XMLNS: &str = "https://sts.amazonaws.com/doc/2011-06-15/";

/// Whether a query-protocol request is for STS rather than SQS.
pub(crate) fn is_sts(authorization: Option<&str>, pairs: &[(String, String)]) -> bool {
    let presigned = pairs
        .iter()
        .find(|(k, _)| k == "X-Amz-Credential")
        .map(|(_, v)| v.as_str());
    match sigv4::scope(authorization, presigned).service {
        Some(service) => service == "sts",
        None => pairs
            .iter()
            .any(|(k, v)| k == "Action" && v == "GetCallerIdentity"),
    }
}

/// Answers an STS request: (status, body).
pub(crate) fn answer(
    account_id: &str,
    pairs: &[(String, String)],
    request_id: &str,
) -> (u16, String) {
    let action = pairs
        .iter()
        .find(|(k, _)| k == "Action")
        .map(|(_, v)| v.as_str());
    let error = match action {
        Some("GetCallerIdentity") => {
            let account = xml_text(account_id);
            let body = format!(
                "<GetCallerIdentityResponse xmlns=\"{XMLNS}\"><GetCallerIdentityResult><Arn>arn:aws:iam::{account}:root</Arn><UserId>{account}</UserId><Account>{account}</Account></GetCallerIdentityResult><ResponseMetadata><RequestId>{}</RequestId></ResponseMetadata></GetCallerIdentityResponse>",
                xml_text(request_id)
            );
            return (200, body);
        }
        Some(other) if !other.is_empty() => SqsError::invalid_action(other),
        _ => SqsError::missing_parameter("Action"),
    };
    (error.status(), encode_error(&error, request_id))
}

/// An STS error reply body.
pub(crate) fn encode_error(error: &SqsError, request_id: &str) -> String {
    format!(
        "<ErrorResponse xmlns=\"{XMLNS}\"><Error><Type>{}</Type><Code>{}</Code><Message>{}</Message></Error><RequestId>{}</RequestId></ErrorResponse>",
        error.spec.fault(),
        xml_text(error.code()),
        xml_text(&error.message),
        xml_text(request_id)
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::pairs;

    const SIGNED_STS: &str = "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20260101/us-east-1/sts/aws4_request, SignedHeaders=host;x-amz-date, Signature=abc";
    const SIGNED_SQS: &str = "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20260101/us-east-1/sqs/aws4_request, SignedHeaders=host, Signature=abc";

    #[test]
    fn routes_by_credential_scope_then_by_action() {
        let gci = pairs(&[("Action", "GetCallerIdentity"), ("Version", "2011-06-15")]);
        let list = pairs(&[("Action", "ListQueues")]);
        assert!(is_sts(Some(SIGNED_STS), &gci));
        assert!(is_sts(Some(SIGNED_STS), &list), "the scope decides");
        assert!(!is_sts(Some(SIGNED_SQS), &gci), "the scope decides");
        assert!(is_sts(None, &gci));
        assert!(!is_sts(None, &list));
        assert!(!is_sts(Some("Bearer x"), &list));
        let presigned = pairs(&[
            ("Action", "ListQueues"),
            (
                "X-Amz-Credential",
                "AKID/20260101/us-east-1/sts/aws4_request",
            ),
        ]);
        assert!(is_sts(None, &presigned));
    }

    #[test]
    fn answers_get_caller_identity_as_aws_does() {
        let gci = pairs(&[("Action", "GetCallerIdentity"), ("Version", "2011-06-15")]);
        let (status, body) = answer("123456789012", &gci, "rid-1");
        assert_eq!(status, 200);
        assert_eq!(
            body,
            "<GetCallerIdentityResponse xmlns=\"https://sts.amazonaws.com/doc/2011-06-15/\"><GetCallerIdentityResult><Arn>arn:aws:iam::123456789012:root</Arn><UserId>123456789012</UserId><Account>123456789012</Account></GetCallerIdentityResult><ResponseMetadata><RequestId>rid-1</RequestId></ResponseMetadata></GetCallerIdentityResponse>"
        );
        let (status, body) = answer("1", &pairs(&[("Action", "AssumeRole")]), "r");
        assert_eq!(status, 400);
        assert!(body.contains("<Code>InvalidAction</Code>"), "{body}");
        let (status, body) = answer("1", &[], "r");
        assert_eq!(status, 400);
        assert!(body.contains("<Code>MissingParameter</Code>"), "{body}");
    }
}
