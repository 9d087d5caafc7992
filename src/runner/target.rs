//! Targets: where a run sends its calls, and the aws-sdk-sqs client that reaches it.
//!
//! Every target goes through the official SDK over real HTTP, the embedded emulator included,
//! so the harness measures what a real consumer would see.

use aws_config::{BehaviorVersion, Region, timeout::TimeoutConfig};
use aws_sdk_sqs::config::retry::RetryConfig;
use aws_sdk_sqs::config::{Credentials, SharedCredentialsProvider};
use std::time::Duration;

/// Which kind of target a run uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TargetKind {
    /// The in-process emulator on an ephemeral loopback port (the default).
    Embedded,
    /// Any SQS-compatible endpoint URL (LocalStack, moto, ElasticMQ, goaws, ...).
    Endpoint,
    /// Real AWS through the default credential chain.
    Aws,
}

impl TargetKind {
    pub fn as_str(self) -> &'static str {
        match self {
            TargetKind::Embedded => "embedded",
            TargetKind::Endpoint => "endpoint",
            TargetKind::Aws => "aws",
        }
    }
}

/// The wire protocol calls use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Protocol {
    /// AWS JSON 1.0, spoken by aws-sdk-sqs itself.
    #[default]
    Json,
    /// The query protocol, through [`super::query_protocol::QueryProtocolClient`].
    Query,
}

impl Protocol {
    /// The name recorded in `run_start.protocol`.
    pub fn as_str(self) -> &'static str {
        match self {
            Protocol::Json => "json",
            Protocol::Query => "query",
        }
    }
}

/// Why `--protocol query` cannot reach `endpoint`, if it cannot: the SDK signs the JSON body
/// before the query client rewrites it, so the signature would not match what AWS receives.
/// Emulators ignore signatures.
pub fn query_protocol_refusal(kind: TargetKind, endpoint: Option<&str>) -> Option<String> {
    let aws_host = endpoint.is_some_and(|url| {
        let host = url
            .split_once("://")
            .map_or(url, |(_, rest)| rest)
            .split(['/', ':', '?'])
            .next()
            .unwrap_or_default()
            .to_ascii_lowercase();
        host.ends_with(".amazonaws.com") || host.ends_with(".amazonaws.com.cn")
    });
    if kind == TargetKind::Aws || aws_host {
        Some(
            "--protocol query is for emulators: the SDK signs the JSON body before it is \
             translated, so AWS would reject the query request's signature \
             (see docs/query-protocol.md)"
                .to_string(),
        )
    } else {
        None
    }
}

/// How to reach the target.
#[derive(Debug, Clone)]
pub struct TargetConfig {
    pub kind: TargetKind,
    /// Required for `Endpoint`; set by the runner for `Embedded`.
    pub endpoint_url: Option<String>,
    pub region: Option<String>,
    pub profile: Option<String>,
    pub protocol: Protocol,
}

/// The region used when neither `--region` nor the environment names one and the target is
/// not real AWS: emulators accept any region, and us-east-1 is what they assume.
pub const DEFAULT_EMULATOR_REGION: &str = "us-east-1";

/// The longest a single attempt may take: a long poll waits up to 20 s, plus slack.
const ATTEMPT_TIMEOUT: Duration = Duration::from_secs(25);

/// Builds the SDK client for a target, with standard retries; steps override the retry policy
/// per call (see `runner::call`).
pub async fn build_client(target: &TargetConfig) -> (aws_sdk_sqs::Client, String) {
    let mut loader = aws_config::defaults(BehaviorVersion::latest())
        .retry_config(RetryConfig::standard())
        .timeout_config(
            TimeoutConfig::builder()
                .connect_timeout(Duration::from_secs(3))
                .operation_attempt_timeout(ATTEMPT_TIMEOUT)
                .build(),
        );
    if let Some(profile) = &target.profile {
        loader = loader.profile_name(profile);
    }
    if let Some(region) = &target.region {
        loader = loader.region(Region::new(region.clone()));
    }
    match target.kind {
        TargetKind::Embedded => {
            // The emulator ignores credentials; fixed ones keep the user's real keys out of it.
            loader = loader.credentials_provider(SharedCredentialsProvider::new(Credentials::new(
                "sqsprobe",
                "sqsprobe",
                None,
                None,
                "sqsprobe-embedded",
            )));
        }
        TargetKind::Endpoint => {
            // An emulator wants a signature, not particular keys, and the user's real keys
            // (access key id and signatures) have no business going to a non-AWS host. An
            // endpoint that needs real credentials is `--target aws --endpoint-url`, or a
            // `--profile` given explicitly.
            if target.profile.is_none() {
                loader = loader.credentials_provider(SharedCredentialsProvider::new(
                    Credentials::new("test", "test", None, None, "sqsprobe-endpoint"),
                ));
            }
        }
        TargetKind::Aws => {}
    }
    if let Some(url) = &target.endpoint_url {
        loader = loader.endpoint_url(url);
    }
    let sdk_config = loader.load().await;
    let region = sdk_config
        .region()
        .map(|r| r.to_string())
        .unwrap_or_else(|| DEFAULT_EMULATOR_REGION.to_string());
    let mut builder = aws_sdk_sqs::config::Builder::from(&sdk_config);
    if target.protocol == Protocol::Query {
        builder = builder.http_client(super::query_protocol::QueryProtocolClient::new());
    }
    if sdk_config.region().is_none() {
        builder = builder.region(Region::new(region.clone()));
    }
    (aws_sdk_sqs::Client::from_conf(builder.build()), region)
}

/// Retry settings for one call of a step, per the case's `retries:`.
pub fn retry_override(policy: crate::suite::model::RetryPolicy) -> aws_sdk_sqs::config::Builder {
    let retry = match policy {
        crate::suite::model::RetryPolicy::None => RetryConfig::disabled(),
        crate::suite::model::RetryPolicy::Standard => RetryConfig::standard(),
    };
    aws_sdk_sqs::config::Builder::default().retry_config(retry)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn query_protocol_is_refused_for_aws_only() {
        assert!(query_protocol_refusal(TargetKind::Aws, None).is_some());
        assert!(
            query_protocol_refusal(
                TargetKind::Endpoint,
                Some("https://sqs.eu-west-1.amazonaws.com")
            )
            .is_some()
        );
        assert!(
            query_protocol_refusal(
                TargetKind::Endpoint,
                Some("https://SQS.us-east-1.AmazonAWS.com:443/")
            )
            .is_some()
        );
        assert!(
            query_protocol_refusal(TargetKind::Endpoint, Some("http://127.0.0.1:4566")).is_none()
        );
        assert!(
            query_protocol_refusal(
                TargetKind::Endpoint,
                Some("http://amazonaws.com.example:9324")
            )
            .is_none()
        );
        assert!(query_protocol_refusal(TargetKind::Embedded, None).is_none());
    }
}
