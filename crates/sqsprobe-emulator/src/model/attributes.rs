//! Queue attributes: the settable ones, their AWS ranges and error messages, and how they read.
//!
//! Ranges from API_CreateQueue / API_SetQueueAttributes, as `sqs/limits.rs` states them; error
//! codes and texts from the AWS-recorded snapshots summarised in `docs/aws-facts.md` §6.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::support::errors::{SqsError, SqsResult};
use sqsprobe_facts::sqs::limits::{self, Range};

/// Default queue visibility timeout, seconds.
pub(crate) const DEFAULT_VISIBILITY_TIMEOUT: u32 = 30;
/// Largest visibility timeout and largest total lease since receive (12 h).
pub(crate) const MAX_VISIBILITY_TIMEOUT: u32 = limits::VISIBILITY_TIMEOUT.max as u32;
/// Default and largest message size since August 2025 (1 MiB).
pub(crate) const MAX_MESSAGE_SIZE: u32 = limits::MAXIMUM_MESSAGE_SIZE.max as u32;
/// Default retention: 4 days.
pub(crate) const DEFAULT_RETENTION: u32 = 345_600;

/// `KmsDataKeyReusePeriodSeconds`: 60 to 86,400 (API_CreateQueue). Not in `sqs/limits.rs`:
/// no suite key sends it.
const KMS_DATA_KEY_REUSE_PERIOD: Range = Range {
    name: "KmsDataKeyReusePeriodSeconds",
    min: 60,
    max: 86_400,
    unit: limits::Unit::Seconds,
    refused_with: "InvalidAttributeValue",
    source: "https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_CreateQueue.html",
};

/// Attributes computed by the queue, readable but not settable.
pub(crate) const COMPUTED_ATTRIBUTES: &[&str] = &[
    "ApproximateNumberOfMessages",
    "ApproximateNumberOfMessagesNotVisible",
    "ApproximateNumberOfMessagesDelayed",
    "CreatedTimestamp",
    "LastModifiedTimestamp",
    "QueueArn",
];

/// Every attribute name GetQueueAttributes accepts besides `All`.
pub(crate) const READABLE_ATTRIBUTES: &[&str] = &[
    "ApproximateNumberOfMessages",
    "ApproximateNumberOfMessagesNotVisible",
    "ApproximateNumberOfMessagesDelayed",
    "CreatedTimestamp",
    "LastModifiedTimestamp",
    "QueueArn",
    "DelaySeconds",
    "MaximumMessageSize",
    "MessageRetentionPeriod",
    "ReceiveMessageWaitTimeSeconds",
    "VisibilityTimeout",
    "Policy",
    "RedrivePolicy",
    "RedriveAllowPolicy",
    "KmsMasterKeyId",
    "KmsDataKeyReusePeriodSeconds",
    "SqsManagedSseEnabled",
    "FifoQueue",
    "ContentBasedDeduplication",
    "DeduplicationScope",
    "FifoThroughputLimit",
];

/// A parsed `RedrivePolicy`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct RedrivePolicy {
    pub dead_letter_target_arn: String,
    pub max_receive_count: u32,
}

/// `RedriveAllowPolicy.redrivePermission`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum RedrivePermission {
    AllowAll,
    DenyAll,
    ByQueue(Vec<String>),
}

/// The settable attributes of one queue.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct QueueSettings {
    pub delay_seconds: u32,
    pub maximum_message_size: u32,
    pub message_retention_period: u32,
    pub receive_message_wait_time_seconds: u32,
    pub visibility_timeout: u32,
    pub policy: Option<String>,
    pub redrive_policy: Option<RedrivePolicy>,
    /// Stored as sent (normalised JSON) plus the parsed permission.
    pub redrive_allow_policy: Option<(String, RedrivePermission)>,
    pub kms_master_key_id: Option<String>,
    pub kms_data_key_reuse_period_seconds: u32,
    pub sqs_managed_sse_enabled: bool,
    pub fifo: bool,
    pub content_based_deduplication: bool,
    /// `queue` or `messageGroup`.
    pub deduplication_scope: String,
    /// `perQueue` or `perMessageGroupId`.
    pub fifo_throughput_limit: String,
}

impl QueueSettings {
    /// AWS defaults for a new queue (SNAP-2025 `test_set_queue_attributes_default_values`).
    pub fn new(fifo: bool) -> Self {
        Self {
            delay_seconds: 0,
            maximum_message_size: MAX_MESSAGE_SIZE,
            message_retention_period: DEFAULT_RETENTION,
            receive_message_wait_time_seconds: 0,
            visibility_timeout: DEFAULT_VISIBILITY_TIMEOUT,
            policy: None,
            redrive_policy: None,
            redrive_allow_policy: None,
            kms_master_key_id: None,
            kms_data_key_reuse_period_seconds: 300,
            sqs_managed_sse_enabled: true,
            fifo,
            content_based_deduplication: false,
            deduplication_scope: "queue".into(),
            fifo_throughput_limit: "perQueue".into(),
        }
    }

    /// Applies attributes from CreateQueue or SetQueueAttributes, validating each.
    ///
    /// The target queue of a RedrivePolicy is checked by the caller, which sees all queues.
    pub fn apply(&mut self, attributes: &BTreeMap<String, String>) -> SqsResult<()> {
        if attributes
            .get("SqsManagedSseEnabled")
            .is_some_and(|v| v.eq_ignore_ascii_case("true"))
            && attributes
                .get("KmsMasterKeyId")
                .is_some_and(|v| !v.is_empty())
        {
            return Err(SqsError::invalid_attribute_name(
                "You can use one type of server-side encryption (SSE) at one time. You can either enable KMS SSE or SQS SSE.",
            ));
        }
        for (name, value) in attributes {
            self.apply_one(name, value)?;
        }
        if self.fifo
            && self.fifo_throughput_limit == "perMessageGroupId"
            && self.deduplication_scope != "messageGroup"
        {
            return Err(SqsError::invalid_attribute_value_for(
                "FifoThroughputLimit",
                Some(
                    "The perMessageGroupId value is allowed only when the value for DeduplicationScope is messageGroup.",
                ),
            ));
        }
        Ok(())
    }

    fn apply_one(&mut self, name: &str, value: &str) -> SqsResult<()> {
        let range = |range: &Range| -> SqsResult<u32> {
            value
                .trim()
                .parse::<i64>()
                .ok()
                .filter(|v| range.contains(*v))
                .and_then(|v| u32::try_from(v).ok())
                .ok_or_else(|| SqsError::invalid_attribute_value_for(name, None))
        };
        let boolean = || -> SqsResult<bool> {
            match value.to_ascii_lowercase().as_str() {
                "true" => Ok(true),
                "false" => Ok(false),
                _ => Err(SqsError::invalid_attribute_value_for(name, None)),
            }
        };
        match name {
            "DelaySeconds" => self.delay_seconds = range(&limits::QUEUE_DELAY_SECONDS)?,
            "MaximumMessageSize" => {
                self.maximum_message_size = range(&limits::MAXIMUM_MESSAGE_SIZE)?
            }
            "MessageRetentionPeriod" => {
                self.message_retention_period = range(&limits::MESSAGE_RETENTION_PERIOD)?
            }
            "ReceiveMessageWaitTimeSeconds" => {
                self.receive_message_wait_time_seconds =
                    range(&limits::RECEIVE_MESSAGE_WAIT_TIME_SECONDS)?
            }
            "VisibilityTimeout" => {
                self.visibility_timeout = range(&limits::QUEUE_VISIBILITY_TIMEOUT)?
            }
            "KmsDataKeyReusePeriodSeconds" => {
                self.kms_data_key_reuse_period_seconds = range(&KMS_DATA_KEY_REUSE_PERIOD)?
            }
            "Policy" => {
                if value.is_empty() {
                    self.policy = None;
                } else {
                    let parsed: Value = serde_json::from_str(value)
                        .map_err(|_| SqsError::invalid_attribute_value_for(name, None))?;
                    if !parsed.is_object() {
                        return Err(SqsError::invalid_attribute_value_for(name, None));
                    }
                    self.policy = Some(value.to_owned());
                }
            }
            "RedrivePolicy" => {
                self.redrive_policy = if value.is_empty() {
                    None
                } else {
                    Some(parse_redrive_policy(value)?)
                };
            }
            "RedriveAllowPolicy" => {
                self.redrive_allow_policy = if value.is_empty() {
                    None
                } else {
                    Some(parse_redrive_allow_policy(value)?)
                };
            }
            "KmsMasterKeyId" => {
                if value.is_empty() {
                    self.kms_master_key_id = None;
                } else {
                    self.kms_master_key_id = Some(value.to_owned());
                    self.sqs_managed_sse_enabled = false;
                }
            }
            "SqsManagedSseEnabled" => {
                self.sqs_managed_sse_enabled = boolean()?;
                if self.sqs_managed_sse_enabled {
                    self.kms_master_key_id = None;
                }
            }
            "FifoQueue" => {
                if !self.fifo {
                    return Err(SqsError::unknown_attribute(name));
                }
                if !boolean()? {
                    return Err(SqsError::invalid_attribute_value_for(
                        name,
                        Some("Modifying queue type is not supported."),
                    ));
                }
            }
            "ContentBasedDeduplication" => {
                if !self.fifo {
                    return Err(SqsError::unknown_attribute(name));
                }
                self.content_based_deduplication = boolean()?;
            }
            "DeduplicationScope" | "FifoThroughputLimit" => {
                if !self.fifo {
                    return Err(SqsError::invalid_attribute_name(format!(
                        "You can specify the {name} only when FifoQueue is set to true."
                    )));
                }
                let allowed: &[&str] = if name == "DeduplicationScope" {
                    &["queue", "messageGroup"]
                } else {
                    &["perQueue", "perMessageGroupId"]
                };
                if !allowed.contains(&value) {
                    return Err(SqsError::invalid_attribute_value_for(name, None));
                }
                if name == "DeduplicationScope" {
                    self.deduplication_scope = value.to_owned();
                } else {
                    self.fifo_throughput_limit = value.to_owned();
                }
            }
            _ => return Err(SqsError::unknown_attribute(name)),
        }
        Ok(())
    }

    /// The string value of a settable attribute, `None` when AWS leaves it out.
    pub fn get(&self, name: &str) -> Option<String> {
        let fifo_only = |v: String| if self.fifo { Some(v) } else { None };
        match name {
            "DelaySeconds" => Some(self.delay_seconds.to_string()),
            "MaximumMessageSize" => Some(self.maximum_message_size.to_string()),
            "MessageRetentionPeriod" => Some(self.message_retention_period.to_string()),
            "ReceiveMessageWaitTimeSeconds" => {
                Some(self.receive_message_wait_time_seconds.to_string())
            }
            "VisibilityTimeout" => Some(self.visibility_timeout.to_string()),
            "Policy" => self.policy.clone(),
            "RedrivePolicy" => self.redrive_policy.as_ref().map(|p| {
                serde_json::json!({
                    "deadLetterTargetArn": p.dead_letter_target_arn,
                    "maxReceiveCount": p.max_receive_count,
                })
                .to_string()
            }),
            "RedriveAllowPolicy" => self
                .redrive_allow_policy
                .as_ref()
                .map(|(raw, _)| raw.clone()),
            "KmsMasterKeyId" => self.kms_master_key_id.clone(),
            // AWS shows the reuse period only alongside a KMS key (SNAP-2025 defaults test).
            "KmsDataKeyReusePeriodSeconds" => self
                .kms_master_key_id
                .as_ref()
                .map(|_| self.kms_data_key_reuse_period_seconds.to_string()),
            "SqsManagedSseEnabled" => Some(self.sqs_managed_sse_enabled.to_string()),
            "FifoQueue" => fifo_only("true".into()),
            "ContentBasedDeduplication" => fifo_only(self.content_based_deduplication.to_string()),
            "DeduplicationScope" => fifo_only(self.deduplication_scope.clone()),
            "FifoThroughputLimit" => fifo_only(self.fifo_throughput_limit.clone()),
            _ => None,
        }
    }
}

fn parse_redrive_policy(raw: &str) -> SqsResult<RedrivePolicy> {
    let invalid = |reason: &str| SqsError::invalid_value(raw, "RedrivePolicy", reason);
    let parsed: Value = serde_json::from_str(raw)
        .map_err(|_| invalid("Redrive policy is not a valid JSON map."))?;
    let Value::Object(map) = parsed else {
        return Err(invalid("Redrive policy is not a valid JSON map."));
    };
    let arn = match map.get("deadLetterTargetArn") {
        Some(Value::String(s)) => s.clone(),
        None => {
            return Err(invalid(
                "Redrive policy does not contain mandatory attribute: deadLetterTargetArn.",
            ));
        }
        Some(_) => return Err(invalid("Invalid value for deadLetterTargetArn.")),
    };
    if sqsprobe_facts::sqs::arn::parse(&arn).is_none() {
        return Err(invalid("Invalid value for deadLetterTargetArn."));
    }
    let count = match map.get("maxReceiveCount") {
        Some(Value::Number(n)) => n.as_i64(),
        Some(Value::String(s)) => s.trim().parse::<i64>().ok(),
        None => {
            return Err(invalid(
                "Redrive policy does not contain mandatory attribute: maxReceiveCount.",
            ));
        }
        Some(_) => None,
    };
    let max_receive_count = count
        .filter(|c| limits::MAX_RECEIVE_COUNT.contains(*c))
        .ok_or_else(|| {
        invalid(
            "Invalid value for maxReceiveCount. Valid values are from 1 to 1000 both inclusive.",
        )
    })?;
    if let Some(extra) = map
        .keys()
        .find(|k| *k != "deadLetterTargetArn" && *k != "maxReceiveCount")
    {
        return Err(invalid(&format!(
            "Only following attributes are supported: [deadLetterTargetArn, maxReceiveCount]; found {extra}."
        )));
    }
    Ok(RedrivePolicy {
        dead_letter_target_arn: arn,
        max_receive_count: max_receive_count as u32,
    })
}

fn parse_redrive_allow_policy(raw: &str) -> SqsResult<(String, RedrivePermission)> {
    let invalid =
        |reason: &str| SqsError::invalid_attribute_value_for("RedriveAllowPolicy", Some(reason));
    let parsed: Value = serde_json::from_str(raw).map_err(|_| invalid("Invalid JSON."))?;
    let Value::Object(map) = &parsed else {
        return Err(invalid("Invalid JSON."));
    };
    let arns: Vec<String> = match map.get("sourceQueueArns") {
        None => Vec::new(),
        Some(Value::Array(items)) => items
            .iter()
            .map(|v| {
                v.as_str()
                    .map(str::to_owned)
                    .ok_or_else(|| invalid("Invalid sourceQueueArns."))
            })
            .collect::<SqsResult<_>>()?,
        Some(_) => return Err(invalid("Invalid sourceQueueArns.")),
    };
    let permission = match map.get("redrivePermission").and_then(Value::as_str) {
        Some("allowAll") if arns.is_empty() => RedrivePermission::AllowAll,
        Some("denyAll") if arns.is_empty() => RedrivePermission::DenyAll,
        Some("allowAll") | Some("denyAll") => {
            return Err(invalid(
                "Only byQueue redrivePermission can have sourceQueueArns.",
            ));
        }
        Some("byQueue") => {
            if arns.is_empty() || arns.len() > 10 {
                return Err(invalid(
                    "byQueue redrivePermission requires between 1 and 10 sourceQueueArns.",
                ));
            }
            RedrivePermission::ByQueue(arns)
        }
        _ => return Err(invalid("Invalid redrivePermission.")),
    };
    Ok((raw.to_owned(), permission))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn attrs(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn ranges_are_enforced() {
        let mut s = QueueSettings::new(false);
        assert!(s.apply(&attrs(&[("VisibilityTimeout", "43200")])).is_ok());
        let err = s
            .apply(&attrs(&[("VisibilityTimeout", "43201")]))
            .unwrap_err();
        assert_eq!(err.code(), "InvalidAttributeValue");
        assert_eq!(
            err.message,
            "Invalid value for the parameter VisibilityTimeout."
        );
        assert!(
            s.apply(&attrs(&[("MessageRetentionPeriod", "59")]))
                .is_err()
        );
        assert!(s.apply(&attrs(&[("DelaySeconds", "901")])).is_err());
    }

    #[test]
    fn fifo_attributes_on_standard_are_unknown() {
        let mut s = QueueSettings::new(false);
        let err = s.apply(&attrs(&[("FifoQueue", "false")])).unwrap_err();
        assert_eq!(err.message, "Unknown Attribute FifoQueue.");
        let err = s
            .apply(&attrs(&[("DeduplicationScope", "queue")]))
            .unwrap_err();
        assert_eq!(
            err.message,
            "You can specify the DeduplicationScope only when FifoQueue is set to true."
        );
    }

    #[test]
    fn throughput_needs_group_scope() {
        let mut s = QueueSettings::new(true);
        assert!(
            s.apply(&attrs(&[("FifoThroughputLimit", "perMessageGroupId")]))
                .is_err()
        );
        let mut s = QueueSettings::new(true);
        let ok = attrs(&[
            ("FifoThroughputLimit", "perMessageGroupId"),
            ("DeduplicationScope", "messageGroup"),
        ]);
        assert!(s.apply(&ok).is_ok());
    }

    #[test]
    fn redrive_policy_reads_back_with_numeric_count() {
        let mut s = QueueSettings::new(false);
        let raw = r#"{"deadLetterTargetArn":"arn:aws:sqs:us-east-1:000000000000:dlq","maxReceiveCount":"10"}"#;
        s.apply(&attrs(&[("RedrivePolicy", raw)])).unwrap();
        let back: Value = serde_json::from_str(&s.get("RedrivePolicy").unwrap()).unwrap();
        assert_eq!(back["maxReceiveCount"], 10);
        let bad = r#"{"deadLetterTargetArn": "dummy", "maxReceiveCount": 42}"#;
        let err = s.apply(&attrs(&[("RedrivePolicy", bad)])).unwrap_err();
        assert_eq!(
            err.message,
            format!(
                "Value {bad} for parameter RedrivePolicy is invalid. Reason: Invalid value for deadLetterTargetArn."
            )
        );
    }

    #[test]
    fn kms_and_sse_exclusive() {
        let mut s = QueueSettings::new(false);
        let err = s
            .apply(&attrs(&[
                ("KmsMasterKeyId", "k"),
                ("SqsManagedSseEnabled", "true"),
            ]))
            .unwrap_err();
        assert_eq!(err.code(), "InvalidAttributeName");
        s.apply(&attrs(&[("KmsMasterKeyId", "k")])).unwrap();
        assert_eq!(s.get("SqsManagedSseEnabled").unwrap(), "false");
        assert_eq!(s.get("KmsDataKeyReusePeriodSeconds").unwrap(), "300");
    }
}
