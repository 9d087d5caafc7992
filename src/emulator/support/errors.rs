//! SQS error values and the constructors for every error the emulator answers.
//!
//! Each error carries the three names AWS puts on the wire: the legacy query code (XML `<Code>`
//! and the first half of the JSON `x-amzn-query-error` header), the JSON shape name (`__type`)
//! and the HTTP status. Codes, shapes and messages follow the AWS-recorded responses collected in
//! `docs/aws-facts.md` (LocalStack's `test_sqs.snapshot.json` recordings).

use std::borrow::Cow;

/// Namespace of SQS's modelled errors in the JSON protocol `__type`.
const SQS_NAMESPACE: &str = "com.amazonaws.sqs";

/// One error answer, protocol-neutral.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SqsError {
    /// HTTP status code.
    pub status: u16,
    /// Legacy query code, e.g. `AWS.SimpleQueueService.NonExistentQueue`.
    pub code: Cow<'static, str>,
    /// JSON `__type` without namespace, e.g. `QueueDoesNotExist`.
    pub shape: Cow<'static, str>,
    /// Namespace for `__type`; coral errors (unknown operation, bad JSON) are not SQS's.
    pub namespace: &'static str,
    /// Human-readable message.
    pub message: String,
}

impl std::fmt::Display for SqsError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.code, self.message)
    }
}

impl SqsError {
    fn new(
        status: u16,
        code: &'static str,
        shape: &'static str,
        message: impl Into<String>,
    ) -> Self {
        Self {
            status,
            code: Cow::Borrowed(code),
            shape: Cow::Borrowed(shape),
            namespace: SQS_NAMESPACE,
            message: message.into(),
        }
    }

    /// The full JSON `__type` value.
    pub fn json_type(&self) -> String {
        format!("{}#{}", self.namespace, self.shape)
    }

    pub fn non_existent_queue() -> Self {
        Self::new(
            400,
            "AWS.SimpleQueueService.NonExistentQueue",
            "QueueDoesNotExist",
            "The specified queue does not exist.",
        )
    }

    pub fn invalid_parameter_value(message: impl Into<String>) -> Self {
        Self::new(
            400,
            "InvalidParameterValue",
            "InvalidParameterValueException",
            message,
        )
    }

    /// `Value <v> for parameter <p> is invalid. Reason: <r>` — AWS's template for bad values.
    pub fn invalid_value(value: impl std::fmt::Display, parameter: &str, reason: &str) -> Self {
        Self::invalid_parameter_value(format!(
            "Value {value} for parameter {parameter} is invalid. Reason: {reason}"
        ))
    }

    pub fn missing_parameter(name: &str) -> Self {
        Self::new(
            400,
            "MissingParameter",
            "MissingRequiredParameterException",
            format!("The request must contain the parameter {name}."),
        )
    }

    pub fn invalid_attribute_name(message: impl Into<String>) -> Self {
        Self::new(400, "InvalidAttributeName", "InvalidAttributeName", message)
    }

    pub fn unknown_attribute(name: &str) -> Self {
        Self::invalid_attribute_name(format!("Unknown Attribute {name}."))
    }

    pub fn invalid_attribute_value(message: impl Into<String>) -> Self {
        Self::new(
            400,
            "InvalidAttributeValue",
            "InvalidAttributeValue",
            message,
        )
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
            400,
            "QueueAlreadyExists",
            "QueueNameExists",
            format!(
                "A queue already exists with the same name and a different value for attribute {attribute}"
            ),
        )
    }

    pub fn queue_deleted_recently() -> Self {
        Self::new(
            400,
            "AWS.SimpleQueueService.QueueDeletedRecently",
            "QueueDeletedRecently",
            "You must wait 60 seconds after deleting a queue before you can create another with the same name.",
        )
    }

    pub fn purge_queue_in_progress(queue_name: &str) -> Self {
        Self::new(
            403,
            "AWS.SimpleQueueService.PurgeQueueInProgress",
            "PurgeQueueInProgress",
            format!("Only one PurgeQueue operation on {queue_name} is allowed every 60 seconds."),
        )
    }

    pub fn receipt_handle_is_invalid(handle: &str) -> Self {
        Self::new(
            400,
            "ReceiptHandleIsInvalid",
            "ReceiptHandleIsInvalid",
            format!("The input receipt handle \"{handle}\" is not a valid receipt handle."),
        )
    }

    pub fn receipt_handle_expired(handle: &str) -> Self {
        Self::invalid_value(handle, "ReceiptHandle", "The receipt handle has expired.")
    }

    pub fn invalid_message_contents() -> Self {
        Self::new(
            400,
            "InvalidMessageContents",
            "InvalidMessageContents",
            "Invalid characters found. Valid unicode characters are #x9 | #xA | #xD | #x20 to #xD7FF | #xE000 to #xFFFD | #x10000 to #x10FFFF",
        )
    }

    pub fn too_many_entries(sent: usize) -> Self {
        Self::new(
            400,
            "AWS.SimpleQueueService.TooManyEntriesInBatchRequest",
            "TooManyEntriesInBatchRequest",
            format!("Maximum number of entries per request are 10. You have sent {sent}."),
        )
    }

    pub fn empty_batch_request() -> Self {
        Self::new(
            400,
            "AWS.SimpleQueueService.EmptyBatchRequest",
            "EmptyBatchRequest",
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
            400,
            "AWS.SimpleQueueService.BatchEntryIdsNotDistinct",
            "BatchEntryIdsNotDistinct",
            format!("Id {id} repeated."),
        )
    }

    pub fn invalid_batch_entry_id() -> Self {
        Self::new(
            400,
            "AWS.SimpleQueueService.InvalidBatchEntryId",
            "InvalidBatchEntryId",
            "A batch entry id can only contain alphanumeric characters, hyphens and underscores. It can be at most 80 letters long.",
        )
    }

    pub fn batch_request_too_long(limit: usize, sent: usize) -> Self {
        Self::new(
            400,
            "AWS.SimpleQueueService.BatchRequestTooLong",
            "BatchRequestTooLong",
            format!(
                "Batch requests cannot be longer than {limit} bytes. You have sent {sent} bytes."
            ),
        )
    }

    pub fn unsupported_operation(message: impl Into<String>) -> Self {
        Self::new(
            400,
            "AWS.SimpleQueueService.UnsupportedOperation",
            "UnsupportedOperation",
            message,
        )
    }

    pub fn over_limit(message: impl Into<String>) -> Self {
        Self::new(403, "OverLimit", "OverLimit", message)
    }

    pub fn resource_not_found(message: impl Into<String>) -> Self {
        Self::new(
            404,
            "ResourceNotFoundException",
            "ResourceNotFoundException",
            message,
        )
    }

    /// Query protocol: an `Action` the service does not have.
    pub fn invalid_action(action: &str) -> Self {
        Self::new(
            400,
            "InvalidAction",
            "InvalidAction",
            format!("The action {action} is not valid for this endpoint."),
        )
    }

    /// JSON protocol: an `X-Amz-Target` naming no SQS operation (a coral framework error).
    pub fn unknown_operation() -> Self {
        let mut error = Self::new(
            400,
            "UnknownOperationException",
            "UnknownOperationException",
            "",
        );
        error.namespace = "com.amazon.coral.service";
        error
    }

    /// JSON protocol: a body that is not a JSON object of the right shape.
    pub fn serialization(message: impl Into<String>) -> Self {
        let mut error = Self::new(
            400,
            "SerializationException",
            "SerializationException",
            message,
        );
        error.namespace = "com.amazon.coral.service";
        error
    }

    /// A request body over the configured cap.
    pub fn request_too_large(limit: usize) -> Self {
        Self::new(
            413,
            "RequestEntityTooLarge",
            "RequestEntityTooLarge",
            format!("Request body is larger than {limit} bytes."),
        )
    }

    /// Whether the client is at fault (every error but internal ones).
    pub fn sender_fault(&self) -> bool {
        self.status < 500
    }
}

/// Result alias for handlers.
pub(crate) type SqsResult<T> = Result<T, SqsError>;
