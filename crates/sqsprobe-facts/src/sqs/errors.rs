//! The SQS error table: every error SQS (or the AWS front end before it) answers, with the
//! three names and the status it carries on the wire.
//!
//! An SQS error has two names. The **shape** is what the SDK's model and the AWS JSON protocol's
//! `__type` call it (`QueueDoesNotExist`); the **legacy query code** is what the query protocol's
//! `<Code>` and the JSON protocol's `x-amzn-query-error` header carry
//! (`AWS.SimpleQueueService.NonExistentQueue`), and what `err.code()` of aws-sdk-sqs reports
//! when that header is present. [`by_code`] finds a row by either.
//!
//! Sources: the SQS API reference's per-operation error lists and "Common errors", the
//! `awsQueryError` traits of the SQS Smithy model (shape → legacy code, status), and the
//! AWS-recorded responses summarised in `docs/aws-facts.md`. The throttling list is the one the
//! AWS SDK's retry classifier uses (aws-runtime `retries::classifiers::THROTTLING_ERRORS`),
//! plus SQS's KMS throttle.

/// `__type` namespace of SQS's modelled errors.
pub const SQS_NAMESPACE: &str = "com.amazonaws.sqs";
/// `__type` namespace of errors raised by the AWS service framework before SQS sees the request
/// (unknown operation, unparseable body).
pub const CORAL_NAMESPACE: &str = "com.amazon.coral.service";

/// One row of the table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ErrorSpec {
    /// The SDK / JSON protocol name (`__type` without namespace), e.g. `QueueDoesNotExist`.
    pub shape: &'static str,
    /// The legacy query code, e.g. `AWS.SimpleQueueService.NonExistentQueue`.
    pub query_code: &'static str,
    /// HTTP status code.
    pub status: u16,
    /// Whether the client is at fault (`Sender`) rather than the service (`Receiver`).
    pub sender_fault: bool,
    /// `__type` namespace: [`SQS_NAMESPACE`] or [`CORAL_NAMESPACE`].
    pub namespace: &'static str,
}

impl ErrorSpec {
    /// The full JSON `__type` value, e.g. `com.amazonaws.sqs#QueueDoesNotExist`.
    pub fn json_type(&self) -> String {
        format!("{}#{}", self.namespace, self.shape)
    }

    /// `Sender` or `Receiver`, as the query protocol's `<Type>` and `x-amzn-query-error` say.
    pub fn fault(&self) -> &'static str {
        if self.sender_fault {
            "Sender"
        } else {
            "Receiver"
        }
    }

    /// Whether this is a throttling answer (retry later).
    pub fn is_throttling(&self) -> bool {
        is_throttling(self.shape) || is_throttling(self.query_code)
    }

    /// Whether this is an authentication or authorisation answer.
    pub fn is_auth(&self) -> bool {
        is_auth(self.shape) || is_auth(self.query_code)
    }
}

/// Declares each row once as a named constant and collects them, in order, into [`ERRORS`].
macro_rules! table {
    ($($(#[$doc:meta])* $name:ident = $shape:literal, $code:literal, $status:literal, $ns:ident;)*) => {
        $(
            $(#[$doc])*
            pub const $name: ErrorSpec = ErrorSpec {
                shape: $shape,
                query_code: $code,
                status: $status,
                sender_fault: $status < 500,
                namespace: $ns,
            };
        )*
        /// Every row of the table, in declaration order.
        pub const ERRORS: &[ErrorSpec] = &[$($name),*];
    };
}

table! {
    // Queues.
    /// The queue named by QueueUrl / QueueName does not exist.
    QUEUE_DOES_NOT_EXIST = "QueueDoesNotExist", "AWS.SimpleQueueService.NonExistentQueue", 400, SQS_NAMESPACE;
    /// A deleted queue's name was reused within 60 seconds.
    QUEUE_DELETED_RECENTLY = "QueueDeletedRecently", "AWS.SimpleQueueService.QueueDeletedRecently", 400, SQS_NAMESPACE;
    /// CreateQueue on an existing name with different attributes.
    QUEUE_NAME_EXISTS = "QueueNameExists", "QueueAlreadyExists", 400, SQS_NAMESPACE;
    /// A second PurgeQueue within 60 seconds.
    PURGE_QUEUE_IN_PROGRESS = "PurgeQueueInProgress", "AWS.SimpleQueueService.PurgeQueueInProgress", 403, SQS_NAMESPACE;
    /// An attribute name the operation does not know.
    INVALID_ATTRIBUTE_NAME = "InvalidAttributeName", "InvalidAttributeName", 400, SQS_NAMESPACE;
    /// An attribute value out of range or malformed.
    INVALID_ATTRIBUTE_VALUE = "InvalidAttributeValue", "InvalidAttributeValue", 400, SQS_NAMESPACE;
    /// The queue URL's host is not a valid SQS address.
    INVALID_ADDRESS = "InvalidAddress", "InvalidAddress", 404, SQS_NAMESPACE;
    /// The request was not made over HTTPS or not signed with SigV4.
    INVALID_SECURITY = "InvalidSecurity", "InvalidSecurity", 403, SQS_NAMESPACE;
    /// A quota was reached (in-flight messages, or a cap of the emulator).
    OVER_LIMIT = "OverLimit", "OverLimit", 403, SQS_NAMESPACE;
    /// The operation is not supported (or, for move tasks, not in this state).
    UNSUPPORTED_OPERATION = "UnsupportedOperation", "AWS.SimpleQueueService.UnsupportedOperation", 400, SQS_NAMESPACE;
    /// A move task's source, destination or handle does not exist.
    RESOURCE_NOT_FOUND = "ResourceNotFoundException", "ResourceNotFoundException", 404, SQS_NAMESPACE;

    // Parameters.
    /// A parameter value is invalid.
    INVALID_PARAMETER_VALUE = "InvalidParameterValueException", "InvalidParameterValue", 400, SQS_NAMESPACE;
    /// A required parameter is missing.
    MISSING_PARAMETER = "MissingRequiredParameterException", "MissingParameter", 400, SQS_NAMESPACE;
    /// A parameter combination is not allowed.
    INVALID_PARAMETER_COMBINATION = "InvalidParameterCombination", "InvalidParameterCombination", 400, SQS_NAMESPACE;
    /// Query protocol: an Action the service does not have.
    INVALID_ACTION = "InvalidAction", "InvalidAction", 400, SQS_NAMESPACE;
    /// Query protocol: a parameter the action does not take.
    INVALID_QUERY_PARAMETER = "InvalidQueryParameter", "InvalidQueryParameter", 400, SQS_NAMESPACE;
    /// The body or an attribute holds characters outside the allowed set.
    INVALID_MESSAGE_CONTENTS = "InvalidMessageContents", "InvalidMessageContents", 400, SQS_NAMESPACE;
    /// The request body is larger than the service accepts.
    REQUEST_ENTITY_TOO_LARGE = "RequestEntityTooLarge", "RequestEntityTooLarge", 413, SQS_NAMESPACE;
    /// The request did not arrive in time (the SDKs retry it as transient).
    REQUEST_TIMEOUT = "RequestTimeout", "RequestTimeout", 408, SQS_NAMESPACE;

    // Messages and handles.
    /// A receipt handle this queue never issued.
    RECEIPT_HANDLE_IS_INVALID = "ReceiptHandleIsInvalid", "ReceiptHandleIsInvalid", 400, SQS_NAMESPACE;
    /// A receipt handle in an invalid format (deprecated by SQS, still modelled).
    INVALID_ID_FORMAT = "InvalidIdFormat", "InvalidIdFormat", 400, SQS_NAMESPACE;
    /// ChangeMessageVisibility on a message that is not in flight.
    MESSAGE_NOT_INFLIGHT = "MessageNotInflight", "AWS.SimpleQueueService.MessageNotInflight", 400, SQS_NAMESPACE;

    // Batches.
    /// A batch with no entries.
    EMPTY_BATCH_REQUEST = "EmptyBatchRequest", "AWS.SimpleQueueService.EmptyBatchRequest", 400, SQS_NAMESPACE;
    /// A batch with more than ten entries.
    TOO_MANY_ENTRIES_IN_BATCH_REQUEST = "TooManyEntriesInBatchRequest", "AWS.SimpleQueueService.TooManyEntriesInBatchRequest", 400, SQS_NAMESPACE;
    /// Two batch entries with the same Id.
    BATCH_ENTRY_IDS_NOT_DISTINCT = "BatchEntryIdsNotDistinct", "AWS.SimpleQueueService.BatchEntryIdsNotDistinct", 400, SQS_NAMESPACE;
    /// A batch entry Id with characters outside `[A-Za-z0-9_-]` or longer than 80.
    INVALID_BATCH_ENTRY_ID = "InvalidBatchEntryId", "AWS.SimpleQueueService.InvalidBatchEntryId", 400, SQS_NAMESPACE;
    /// A batch whose messages add up to more than the maximum size.
    BATCH_REQUEST_TOO_LONG = "BatchRequestTooLong", "AWS.SimpleQueueService.BatchRequestTooLong", 400, SQS_NAMESPACE;

    // KMS (server-side encryption with a customer key).
    /// SQS may not use the queue's KMS key.
    KMS_ACCESS_DENIED = "KmsAccessDenied", "KMS.AccessDeniedException", 400, SQS_NAMESPACE;
    /// The KMS key is disabled.
    KMS_DISABLED = "KmsDisabled", "KMS.DisabledException", 400, SQS_NAMESPACE;
    /// The KMS key cannot be used this way.
    KMS_INVALID_KEY_USAGE = "KmsInvalidKeyUsage", "KMS.InvalidKeyUsageException", 400, SQS_NAMESPACE;
    /// The KMS key is in a state that does not allow the operation.
    KMS_INVALID_STATE = "KmsInvalidState", "KMS.InvalidStateException", 400, SQS_NAMESPACE;
    /// The KMS key does not exist.
    KMS_NOT_FOUND = "KmsNotFound", "KMS.NotFoundException", 400, SQS_NAMESPACE;
    /// The account is not subscribed to KMS.
    KMS_OPT_IN_REQUIRED = "KmsOptInRequired", "KMS.OptInRequired", 400, SQS_NAMESPACE;
    /// KMS throttled SQS's request.
    KMS_THROTTLED = "KmsThrottled", "KMS.ThrottlingException", 400, SQS_NAMESPACE;

    // Throttling and service faults.
    /// SQS throttled the request (the modelled throttle).
    REQUEST_THROTTLED = "RequestThrottled", "RequestThrottled", 400, SQS_NAMESPACE;
    /// The AWS front end throttled the request.
    THROTTLING_EXCEPTION = "ThrottlingException", "ThrottlingException", 400, SQS_NAMESPACE;
    /// An internal error of the service.
    INTERNAL_ERROR = "InternalError", "InternalError", 500, SQS_NAMESPACE;
    /// An internal failure of the AWS front end.
    INTERNAL_FAILURE = "InternalFailure", "InternalFailure", 500, SQS_NAMESPACE;
    /// The service is unavailable.
    SERVICE_UNAVAILABLE = "ServiceUnavailable", "ServiceUnavailable", 503, SQS_NAMESPACE;

    // Authentication and authorisation (AWS common errors).
    /// The caller may not perform the action (an IAM or queue policy denies it). HTTP 403, as
    /// SQS answers it ("Access to the resource https://sqs.… is denied.", `Status Code: 403;
    /// Error Code: AccessDenied` in public SDK reports such as aws/aws-sdk-php#188 and
    /// aws/aws-sdk-net#1059), although "Common errors" lists AccessDeniedException as 400.
    ACCESS_DENIED = "AccessDeniedException", "AccessDenied", 403, SQS_NAMESPACE;
    /// The access key id is unknown (query protocol wording).
    INVALID_CLIENT_TOKEN_ID = "InvalidClientTokenId", "InvalidClientTokenId", 403, SQS_NAMESPACE;
    /// The access key id is unknown (JSON protocol wording).
    UNRECOGNIZED_CLIENT = "UnrecognizedClientException", "UnrecognizedClientException", 400, SQS_NAMESPACE;
    /// The signature does not match (query protocol wording).
    SIGNATURE_DOES_NOT_MATCH = "SignatureDoesNotMatch", "SignatureDoesNotMatch", 403, SQS_NAMESPACE;
    /// The signature does not match (JSON protocol wording).
    INVALID_SIGNATURE = "InvalidSignatureException", "InvalidSignatureException", 400, SQS_NAMESPACE;
    /// The signature is incomplete.
    INCOMPLETE_SIGNATURE = "IncompleteSignature", "IncompleteSignature", 400, SQS_NAMESPACE;
    /// No credentials came with the request.
    MISSING_AUTHENTICATION_TOKEN = "MissingAuthenticationToken", "MissingAuthenticationToken", 403, SQS_NAMESPACE;
    /// The session token has expired.
    EXPIRED_TOKEN = "ExpiredToken", "ExpiredToken", 403, SQS_NAMESPACE;
    /// The request's timestamp is too old or too far ahead.
    REQUEST_EXPIRED = "RequestExpired", "RequestExpired", 400, SQS_NAMESPACE;
    /// The account is not subscribed to SQS.
    OPT_IN_REQUIRED = "OptInRequired", "OptInRequired", 403, SQS_NAMESPACE;

    // Framework errors of the JSON protocol, raised before SQS sees the request.
    /// `X-Amz-Target` names no SQS operation.
    UNKNOWN_OPERATION = "UnknownOperationException", "UnknownOperationException", 400, CORAL_NAMESPACE;
    /// The body is not a JSON object of the operation's shape.
    SERIALIZATION = "SerializationException", "SerializationException", 400, CORAL_NAMESPACE;
}

/// Codes (shape or legacy) that mean "throttled: retry later". The SDK's list, plus SQS's own.
pub const THROTTLING_CODES: &[&str] = &[
    "Throttling",
    "ThrottlingException",
    "ThrottledException",
    "RequestThrottledException",
    "TooManyRequestsException",
    "ProvisionedThroughputExceededException",
    "TransactionInProgressException",
    "RequestLimitExceeded",
    "BandwidthLimitExceeded",
    "LimitExceededException",
    "RequestThrottled",
    "SlowDown",
    "PriorRequestNotComplete",
    "EC2ThrottledException",
    "KmsThrottled",
    "KMS.ThrottlingException",
];

/// Codes (shape or legacy) that mean the credentials are missing, wrong, expired, or not allowed
/// to do this: a problem of the caller's setup, not of the queue.
pub const AUTH_CODES: &[&str] = &[
    "AccessDenied",
    "AccessDeniedException",
    "ExpiredToken",
    "ExpiredTokenException",
    "IncompleteSignature",
    "InvalidClientTokenId",
    "InvalidSecurity",
    "InvalidSignatureException",
    "MissingAuthenticationToken",
    "NotAuthorized",
    "OptInRequired",
    "RequestExpired",
    "SignatureDoesNotMatch",
    "UnrecognizedClientException",
];

/// The row with this shape name (`QueueDoesNotExist`).
pub fn by_shape(shape: &str) -> Option<&'static ErrorSpec> {
    ERRORS.iter().find(|e| e.shape == shape)
}

/// The row with this legacy query code (`AWS.SimpleQueueService.NonExistentQueue`).
pub fn by_query_code(code: &str) -> Option<&'static ErrorSpec> {
    ERRORS.iter().find(|e| e.query_code == code)
}

/// The row named by either name: what an SDK's `err.code()` gives, whichever protocol and
/// header it came from. A JSON `__type` with its namespace (`com.amazonaws.sqs#X`) is accepted.
pub fn by_code(code: &str) -> Option<&'static ErrorSpec> {
    let bare = code.rsplit('#').next().unwrap_or(code);
    by_query_code(bare).or_else(|| by_shape(bare))
}

/// Whether `code` (shape or legacy) is a throttling answer.
pub fn is_throttling(code: &str) -> bool {
    THROTTLING_CODES.contains(&code)
}

/// Whether `code` (shape or legacy) is an authentication or authorisation answer.
pub fn is_auth(code: &str) -> bool {
    AUTH_CODES.contains(&code)
}

/// The one line for the SDK's "no credentials found in chain" error (a dump of every provider
/// it tried, repeated per call): where the default chain looked, and what to set.
pub const NO_CREDENTIALS: &str = "no credentials: the SDK's default chain found none (it looked \
     at AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY, the profile in ~/.aws/config and \
     ~/.aws/credentials (AWS_PROFILE), web identity (AWS_WEB_IDENTITY_TOKEN_FILE), ECS container \
     credentials and EC2 instance metadata); set one of them, or pass --profile";

/// [`NO_CREDENTIALS`] when `text` is the SDK's missing-credentials error, else `None`.
pub fn missing_credentials(text: &str) -> Option<&'static str> {
    text.contains("no credentials found in chain")
        .then_some(NO_CREDENTIALS)
}

/// Statuses a server answers a request it has no route or method for: from one that is not
/// an SQS endpoint at all, when no SQS error came with it.
const NOT_SQS_STATUSES: [u16; 3] = [404, 405, 501];

/// A failed call in one line, as every report and message says it: the error code and
/// status (`QueueDoesNotExist (400)`), an answer with no SQS error in it (`answered 501: not an
/// SQS endpoint`), or what is known of a call nobody answered; then the message, unless it
/// only repeats that. The SDK's missing-credentials dump becomes [`NO_CREDENTIALS`].
pub fn describe_failure(
    code: Option<&str>,
    status: Option<u16>,
    message: Option<&str>,
    no_response: bool,
) -> String {
    if let Some(line) = message.and_then(missing_credentials) {
        return line.to_string();
    }
    let mut s = match (code, status) {
        (Some(code), Some(status)) => format!("{code} ({status})"),
        (Some(code), None) => code.to_string(),
        (None, Some(status)) if NOT_SQS_STATUSES.contains(&status) => {
            format!("answered {status}: not an SQS endpoint")
        }
        (None, Some(status)) => format!("answered {status} without an SQS error"),
        (None, None) if no_response => "no response".to_string(),
        (None, None) => "unknown error".to_string(),
    };
    if let Some(msg) = message.filter(|m| !m.is_empty() && !s.ends_with(m)) {
        s.push_str(": ");
        s.push_str(msg);
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One line per failure, in words that say what answered.
    #[test]
    fn failures_read_as_one_line_that_says_what_answered() {
        assert_eq!(
            describe_failure(None, Some(501), None, false),
            "answered 501: not an SQS endpoint"
        );
        assert_eq!(
            describe_failure(None, Some(502), Some("bad gateway"), false),
            "answered 502 without an SQS error: bad gateway"
        );
        assert_eq!(
            describe_failure(Some("QueueDoesNotExist"), Some(400), Some("gone"), false),
            "QueueDoesNotExist (400): gone"
        );
        assert_eq!(
            describe_failure(None, None, Some("no response"), true),
            "no response"
        );
        assert_eq!(
            describe_failure(None, None, Some("timed out"), true),
            "no response: timed out"
        );
        let dump = "dispatch failure: other: the credential provider was not enabled: no \
                    credentials found in chain. Attempted: Environment: ...";
        assert_eq!(
            describe_failure(None, None, Some(dump), true),
            NO_CREDENTIALS
        );
        assert!(!NO_CREDENTIALS.contains('\n'));
    }
    use std::collections::HashSet;

    #[test]
    fn names_are_unique_in_each_column() {
        let shapes: HashSet<_> = ERRORS.iter().map(|e| e.shape).collect();
        let codes: HashSet<_> = ERRORS.iter().map(|e| e.query_code).collect();
        assert_eq!(shapes.len(), ERRORS.len(), "a shape appears twice");
        assert_eq!(codes.len(), ERRORS.len(), "a legacy code appears twice");
        // A shape that is another row's legacy code would make `by_code` ambiguous.
        for e in ERRORS {
            if let Some(other) = by_query_code(e.shape) {
                assert_eq!(
                    other, e,
                    "{} is also the legacy code of {}",
                    e.shape, other.shape
                );
            }
        }
    }

    #[test]
    fn lookups_by_either_name() {
        let q = by_shape("QueueDoesNotExist").unwrap();
        assert_eq!(q.query_code, "AWS.SimpleQueueService.NonExistentQueue");
        assert_eq!(q.status, 400);
        assert!(q.sender_fault);
        assert_eq!(
            by_query_code("AWS.SimpleQueueService.NonExistentQueue"),
            Some(q)
        );
        assert_eq!(by_code("AWS.SimpleQueueService.NonExistentQueue"), Some(q));
        assert_eq!(by_code("QueueDoesNotExist"), Some(q));
        assert_eq!(by_code("com.amazonaws.sqs#QueueDoesNotExist"), Some(q));
        assert_eq!(by_code("NoSuchThing"), None);
        assert_eq!(
            by_code("InvalidParameterValue").unwrap().shape,
            "InvalidParameterValueException"
        );
        assert_eq!(by_shape("PurgeQueueInProgress").unwrap().status, 403);
        assert_eq!(q.json_type(), "com.amazonaws.sqs#QueueDoesNotExist");
        assert_eq!(
            UNKNOWN_OPERATION.json_type(),
            "com.amazon.coral.service#UnknownOperationException"
        );
    }

    #[test]
    fn faults_follow_status() {
        assert_eq!(INTERNAL_ERROR.fault(), "Receiver");
        assert_eq!(SERVICE_UNAVAILABLE.fault(), "Receiver");
        assert_eq!(OVER_LIMIT.fault(), "Sender");
    }

    #[test]
    fn throttling_and_auth_lists() {
        assert!(REQUEST_THROTTLED.is_throttling());
        assert!(KMS_THROTTLED.is_throttling());
        assert!(THROTTLING_EXCEPTION.is_throttling());
        assert!(!QUEUE_DOES_NOT_EXIST.is_throttling());
        for code in [
            "ExpiredToken",
            "InvalidClientTokenId",
            "SignatureDoesNotMatch",
            "AccessDenied",
            "UnrecognizedClientException",
            "RequestExpired",
        ] {
            assert!(is_auth(code), "{code}");
            let row = by_code(code).unwrap_or_else(|| panic!("{code} has a row"));
            assert!(row.is_auth(), "{code}");
        }
        assert!(ACCESS_DENIED.is_auth());
        assert!(!OVER_LIMIT.is_auth());
        // Every auth or throttling row of the table is in its list.
        for e in ERRORS {
            let auth = AUTH_CODES.contains(&e.shape) || AUTH_CODES.contains(&e.query_code);
            assert_eq!(auth, e.is_auth(), "{}", e.shape);
        }
    }
}
