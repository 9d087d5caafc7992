//! SQS error values and the constructors for every error the emulator answers.
//!
//! Each error is a row of the SQS error table ([`sqsprobe_facts::sqs::errors`]: legacy query code, JSON
//! shape name, HTTP status, fault) and a message. Messages follow the AWS-recorded responses
//! collected in `docs/aws-facts.md` (LocalStack's `test_sqs.snapshot.json` recordings).

use sqsprobe_facts::sqs::errors::{self as table, ErrorSpec};

/// One error answer, protocol-neutral: a row of the SQS error table and a message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SqsError {
    /// Codes, status and fault, from [`sqsprobe_facts::sqs::errors`].
    pub spec: &'static ErrorSpec,
    /// Human-readable message.
    pub message: String,
}

impl std::fmt::Display for SqsError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.code(), self.message)
    }
}

impl SqsError {
    fn new(spec: &'static ErrorSpec, message: impl Into<String>) -> Self {
        Self {
            spec,
            message: message.into(),
        }
    }

    /// Legacy query code, e.g. `AWS.SimpleQueueService.NonExistentQueue`.
    pub fn code(&self) -> &'static str {
        self.spec.query_code
    }

    /// HTTP status code.
    pub fn status(&self) -> u16 {
        self.spec.status
    }

    /// The full JSON `__type` value.
    pub fn json_type(&self) -> String {
        self.spec.json_type()
    }

    pub fn non_existent_queue() -> Self {
        Self::new(
            &table::QUEUE_DOES_NOT_EXIST,
            "The specified queue does not exist.",
        )
    }

    pub fn invalid_parameter_value(message: impl Into<String>) -> Self {
        Self::new(&table::INVALID_PARAMETER_VALUE, message)
    }

    /// `Value <v> for parameter <p> is invalid. Reason: <r>` — AWS's template for bad values.
    pub fn invalid_value(value: impl std::fmt::Display, parameter: &str, reason: &str) -> Self {
        Self::invalid_parameter_value(format!(
            "Value {value} for parameter {parameter} is invalid. Reason: {reason}"
        ))
    }

    pub fn missing_parameter(name: &str) -> Self {
        Self::new(
            &table::MISSING_PARAMETER,
            format!("The request must contain the parameter {name}."),
        )
    }

    pub fn invalid_attribute_name(message: impl Into<String>) -> Self {
        Self::new(&table::INVALID_ATTRIBUTE_NAME, message)
    }

    pub fn unknown_attribute(name: &str) -> Self {
        Self::invalid_attribute_name(format!("Unknown Attribute {name}."))
    }

    pub fn invalid_attribute_value(message: impl Into<String>) -> Self {
        Self::new(&table::INVALID_ATTRIBUTE_VALUE, message)
    }

    /// `Invalid value for the parameter <name>.` with an optional reason, as AWS phrases it.
    pub fn invalid_attribute_value_for(name: &str, reason: Option<&str>) -> Self {
        match reason {
            Some(reason) => Self::invalid_attribute_value(format!(
                "Invalid value for the parameter {name}. Reason: {reason}"
            )),
            None => {
                Self::invalid_attribute_value(format!("Invalid value for the parameter {name}."))
            }
        }
    }

    pub fn queue_already_exists(attribute: &str) -> Self {
        Self::new(
            &table::QUEUE_NAME_EXISTS,
            format!(
                "A queue already exists with the same name and a different value for attribute {attribute}"
            ),
        )
    }

    pub fn queue_deleted_recently() -> Self {
        Self::new(
            &table::QUEUE_DELETED_RECENTLY,
            "You must wait 60 seconds after deleting a queue before you can create another with the same name.",
        )
    }

    pub fn purge_queue_in_progress(queue_name: &str) -> Self {
        Self::new(
            &table::PURGE_QUEUE_IN_PROGRESS,
            format!("Only one PurgeQueue operation on {queue_name} is allowed every 60 seconds."),
        )
    }

    pub fn receipt_handle_is_invalid(handle: &str) -> Self {
        Self::new(
            &table::RECEIPT_HANDLE_IS_INVALID,
            format!("The input receipt handle \"{handle}\" is not a valid receipt handle."),
        )
    }

    pub fn receipt_handle_expired(handle: &str) -> Self {
        Self::invalid_value(handle, "ReceiptHandle", "The receipt handle has expired.")
    }

    pub fn invalid_message_contents() -> Self {
        Self::new(
            &table::INVALID_MESSAGE_CONTENTS,
            "Invalid characters found. Valid unicode characters are #x9 | #xA | #xD | #x20 to #xD7FF | #xE000 to #xFFFD | #x10000 to #x10FFFF",
        )
    }

    pub fn too_many_entries(sent: usize) -> Self {
        Self::new(
            &table::TOO_MANY_ENTRIES_IN_BATCH_REQUEST,
            format!("Maximum number of entries per request are 10. You have sent {sent}."),
        )
    }

    pub fn empty_batch_request() -> Self {
        Self::new(
            &table::EMPTY_BATCH_REQUEST,
            "There should be at least one SendMessageBatchRequestEntry in the request.",
        )
    }

    /// `entry_kind` names the entry type, e.g. `SendMessageBatchRequestEntry`.
    pub fn empty_batch_request_for(entry_kind: &str) -> Self {
        let mut error = Self::empty_batch_request();
        error.message = format!("There should be at least one {entry_kind} in the request.");
        error
    }

    pub fn batch_entry_ids_not_distinct(id: &str) -> Self {
        Self::new(
            &table::BATCH_ENTRY_IDS_NOT_DISTINCT,
            format!("Id {id} repeated."),
        )
    }

    pub fn invalid_batch_entry_id() -> Self {
        Self::new(
            &table::INVALID_BATCH_ENTRY_ID,
            "A batch entry id can only contain alphanumeric characters, hyphens and underscores. It can be at most 80 letters long.",
        )
    }

    pub fn batch_request_too_long(limit: usize, sent: usize) -> Self {
        Self::new(
            &table::BATCH_REQUEST_TOO_LONG,
            format!(
                "Batch requests cannot be longer than {limit} bytes. You have sent {sent} bytes."
            ),
        )
    }

    pub fn unsupported_operation(message: impl Into<String>) -> Self {
        Self::new(&table::UNSUPPORTED_OPERATION, message)
    }

    pub fn over_limit(message: impl Into<String>) -> Self {
        Self::new(&table::OVER_LIMIT, message)
    }

    /// An explicit Deny of the queue's `Policy` (see `ops::access`), worded as SQS words it.
    pub fn access_denied(queue_url: &str) -> Self {
        Self::new(
            &table::ACCESS_DENIED,
            format!("Access to the resource {queue_url} is denied."),
        )
    }

    /// A request signed with an access key the server was told to reject (`serve
    /// --reject-access-key`): AWS's answer to a key it does not know, in the protocol's words
    /// (JSON `UnrecognizedClientException`, query and STS `InvalidClientTokenId`).
    pub fn unknown_access_key(json: bool) -> Self {
        Self::new(
            if json {
                &table::UNRECOGNIZED_CLIENT
            } else {
                &table::INVALID_CLIENT_TOKEN_ID
            },
            "The security token included in the request is invalid.",
        )
    }

    /// A request signed with a key the server was told is expired (`serve
    /// --expire-access-key`): what AWS answers once a session's credentials run out.
    pub fn expired_token() -> Self {
        Self::new(
            &table::EXPIRED_TOKEN,
            "The security token included in the request is expired",
        )
    }

    /// Chaos `throttle` (opt-in): the answer SQS gives a request it throttles.
    pub fn request_throttled() -> Self {
        Self::new(
            &table::REQUEST_THROTTLED,
            "Request is throttled (emulator chaos: throttle).",
        )
    }

    pub fn resource_not_found(message: impl Into<String>) -> Self {
        Self::new(&table::RESOURCE_NOT_FOUND, message)
    }

    /// Query protocol: an `Action` the service does not have.
    pub fn invalid_action(action: &str) -> Self {
        Self::new(
            &table::INVALID_ACTION,
            format!("The action {action} is not valid for this endpoint."),
        )
    }

    /// JSON protocol: an `X-Amz-Target` naming no SQS operation (a coral framework error).
    pub fn unknown_operation() -> Self {
        Self::new(&table::UNKNOWN_OPERATION, "")
    }

    /// JSON protocol: a body that is not a JSON object of the right shape.
    pub fn serialization(message: impl Into<String>) -> Self {
        Self::new(&table::SERIALIZATION, message)
    }

    /// A request body over the configured cap.
    pub fn request_too_large(limit: usize) -> Self {
        Self::new(
            &table::REQUEST_ENTITY_TOO_LARGE,
            format!("Request body is larger than {limit} bytes."),
        )
    }

    /// A request body that did not arrive within the read timeout.
    pub fn request_timeout(timeout: std::time::Duration) -> Self {
        Self::new(
            &table::REQUEST_TIMEOUT,
            format!(
                "The request body did not arrive within {} ms.",
                timeout.as_millis()
            ),
        )
    }

    /// Whether the client is at fault (every error but internal ones).
    pub fn sender_fault(&self) -> bool {
        self.spec.sender_fault
    }
}

/// Result alias for handlers.
pub(crate) type SqsResult<T> = Result<T, SqsError>;
