//! Targets: where a command sends its calls, and the aws-sdk-sqs client that reaches them.
//!
//! Every target goes through the official SDK over real HTTP, the embedded emulator included,
//! so the harness measures what a real consumer would see. [`resolve`] turns what a command
//! line asked for into a [`Target`]; [`build_client`] is the bare client for callers that
//! already know their endpoint (`bench`).
//!
//! `--target aws` is held to three rules (`docs/aws.md`), because the first user is a
//! CI job holding the keys of a real account:
//! - **A named region.** `--region`, `AWS_REGION` / `AWS_DEFAULT_REGION` or the profile's
//!   `region`; without one the command stops. No silent us-east-1, and no guess from instance
//!   metadata: a run's region is part of its evidence and must be what someone chose.
//! - **The endpoint the SDK will really use**, worked out before the first call the way the SDK
//!   does (an explicit URL, then `AWS_ENDPOINT_URL_SQS`, the profile's `sqs` services section,
//!   `AWS_ENDPOINT_URL`, the profile's `endpoint_url`). One that is not an AWS host redirects
//!   the run away from AWS: the first line says so and the run records it.
//! - **The account**, from STS GetCallerIdentity with the same credentials, region and endpoint
//!   resolution, before anything is created. It is printed masked; `--allow-account` refuses
//!   any other.
//!
//! For the other targets an explicit endpoint is set on the SQS client itself, so neither
//! `AWS_ENDPOINT_URL[_SQS]` nor a profile can send an emulator run somewhere else.

use aws_config::environment::region::EnvironmentVariableRegionProvider;
use aws_config::meta::region::RegionProviderChain;
use aws_config::profile::region::ProfileFileRegionProvider;
use aws_config::{BehaviorVersion, Region, SdkConfig, timeout::TimeoutConfig};
use aws_sdk_sqs::config::endpoint::{Params, ResolveEndpoint};
use aws_sdk_sqs::config::retry::RetryConfig;
use aws_sdk_sqs::config::{Credentials, SharedCredentialsProvider};
use aws_types::service_config::ServiceConfigKey;
use std::time::Duration;

pub(crate) use crate::runner::sdk_error::sdk_error_line;

/// The fixed access key (and secret) the embedded target signs with: public, not a secret.
pub(crate) const EMBEDDED_KEY: &str = "sqsprobe";

/// The fixed key an endpoint target signs with unless `--profile` is given: public too.
pub(crate) const ENDPOINT_KEY: &str = "test";

/// Whether `credential` is one of the fixed, public keys above. The masker registers the
/// run's credentials as secrets; registering these would turn every `sqsprobe-` queue name
/// into `<credential>-…`.
pub(crate) fn is_fixed_key(credential: &str) -> bool {
    credential == EMBEDDED_KEY || credential == ENDPOINT_KEY
}

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

/// The wire protocol calls use (the query protocol through
/// [`super::query_protocol::QueryProtocolClient`]).
pub(crate) use sqsprobe_facts::sqs::protocol::Protocol;

pub(crate) use sqsprobe_facts::sqs::endpoint::is_aws_endpoint;

/// Why `--protocol query` cannot reach `endpoint`, if it cannot: the SDK signs the JSON body
/// before the query client rewrites it, so the signature would not match what AWS receives.
/// Emulators ignore signatures.
pub(crate) fn query_protocol_refusal(kind: TargetKind, endpoint: Option<&str>) -> Option<String> {
    if kind == TargetKind::Aws || endpoint.is_some_and(is_aws_endpoint) {
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
pub(crate) struct TargetConfig {
    pub kind: TargetKind,
    /// Required for `Endpoint`; set by the runner for `Embedded`.
    pub endpoint_url: Option<String>,
    pub region: Option<String>,
    pub profile: Option<String>,
    pub protocol: Protocol,
}

/// The region used when neither `--region` nor the environment names one and the target is
/// not real AWS: emulators accept any region, and us-east-1 is what they assume.
pub(crate) const DEFAULT_EMULATOR_REGION: &str = "us-east-1";

/// The longest a single attempt may take: a long poll waits up to 20 s, plus slack.
const ATTEMPT_TIMEOUT: Duration = Duration::from_secs(25);

/// The whole STS GetCallerIdentity call, retries included: it answers in milliseconds when
/// STS is there, and a run should not wait long to learn that it is not.
const STS_TIMEOUT: Duration = Duration::from_secs(15);

/// Builds the SDK client for a target, with standard retries; steps override the retry policy
/// per call (see `runner::call`). Returns the client and its region. No account check and no
/// region rule: that is [`resolve`], for commands that may reach AWS.
pub(crate) async fn build_client(target: &TargetConfig) -> (aws_sdk_sqs::Client, String) {
    let region = named_region(target.region.as_deref(), target.profile.as_deref())
        .await
        .unwrap_or_else(|| DEFAULT_EMULATOR_REGION.to_string());
    let sdk_config = load_sdk_config(target, &region).await;
    (sqs_client(&sdk_config, target), region)
}

/// The region someone named: `--region`, `AWS_REGION` / `AWS_DEFAULT_REGION`, or the profile's
/// `region` (the `--profile` one, else `AWS_PROFILE`, else `default`). Instance metadata is
/// left out on purpose (see the module doc).
async fn named_region(flag: Option<&str>, profile: Option<&str>) -> Option<String> {
    if let Some(region) = flag.map(str::trim).filter(|r| !r.is_empty()) {
        return Some(region.to_string());
    }
    let from_profile = match profile {
        Some(name) => ProfileFileRegionProvider::builder()
            .profile_name(name)
            .build(),
        None => ProfileFileRegionProvider::new(),
    };
    RegionProviderChain::first_try(EnvironmentVariableRegionProvider::new())
        .or_else(from_profile)
        .region()
        .await
        .map(|r| r.to_string())
        .filter(|r| !r.trim().is_empty())
}

/// The shared SDK configuration: credentials, region, retries and timeouts. The endpoint is
/// deliberately not set here: an explicit one goes on the SQS client (see [`sqs_client`]).
async fn load_sdk_config(target: &TargetConfig, region: &str) -> SdkConfig {
    let mut loader = aws_config::defaults(BehaviorVersion::latest())
        .region(Region::new(region.to_string()))
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
    match target.kind {
        TargetKind::Embedded => {
            // The emulator ignores credentials; fixed ones keep the user's real keys out of it.
            loader = loader.credentials_provider(SharedCredentialsProvider::new(Credentials::new(
                EMBEDDED_KEY,
                EMBEDDED_KEY,
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
                    Credentials::new(ENDPOINT_KEY, ENDPOINT_KEY, None, None, "sqsprobe-endpoint"),
                ));
            }
        }
        TargetKind::Aws => {}
    }
    loader.load().await
}

/// The SQS client. An explicit endpoint is set as client configuration, the one level the
/// SDK ranks above `AWS_ENDPOINT_URL_SQS` and a profile's endpoint (set on the shared loader
/// instead, the SDK would still prefer the service-specific variable).
fn sqs_client(sdk_config: &SdkConfig, target: &TargetConfig) -> aws_sdk_sqs::Client {
    sqs_client_via(sdk_config, target, None)
}

/// The SQS client, answered by `in_process` instead of over HTTP when given (the embedded
/// emulator under a virtual clock).
fn sqs_client_via(
    sdk_config: &SdkConfig,
    target: &TargetConfig,
    in_process: Option<sqsprobe_emulator::InProcess>,
) -> aws_sdk_sqs::Client {
    use super::query_protocol::QueryProtocolClient;
    use aws_smithy_runtime_api::client::http::SharedHttpClient;
    use sqsprobe_emulator::InProcessClient;
    let mut builder = aws_sdk_sqs::config::Builder::from(sdk_config);
    if let Some(url) = &target.endpoint_url {
        builder = builder.endpoint_url(url);
    }
    match (in_process, target.protocol) {
        (Some(emu), Protocol::Json) => builder = builder.http_client(InProcessClient::new(emu)),
        (Some(emu), Protocol::Query) => {
            let inner = SharedHttpClient::new(InProcessClient::new(emu));
            builder = builder.http_client(QueryProtocolClient::wrapping(inner));
        }
        (None, Protocol::Query) => builder = builder.http_client(QueryProtocolClient::new()),
        (None, Protocol::Json) => {}
    }
    aws_sdk_sqs::Client::from_conf(builder.build())
}

/// Where an endpoint other than the SDK's own came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum EndpointSource {
    /// `--endpoint-url`.
    Flag,
    /// An environment variable: `SQSPROBE_ENDPOINT_URL`, `AWS_ENDPOINT_URL_SQS`, `AWS_ENDPOINT_URL`.
    Env(&'static str),
    /// The profile's own `endpoint_url`.
    Profile,
    /// The `sqs` entry of the `services` section the profile names (`services = NAME`).
    ProfileServices,
}

impl std::fmt::Display for EndpointSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            EndpointSource::Flag => f.write_str("--endpoint-url"),
            EndpointSource::Env(name) => f.write_str(name),
            EndpointSource::Profile => f.write_str("the profile's endpoint_url"),
            EndpointSource::ProfileServices => {
                f.write_str("the sqs endpoint_url of the profile's services section")
            }
        }
    }
}

/// The endpoint `aws_sdk_sqs::config::Builder::from(sdk_config)` takes from the environment
/// or the profile, and where it came from: the same lookup, in the same order (the
/// service-specific value first, then the shared one). `None`: the SDK's own AWS endpoint.
fn configured_endpoint(sdk_config: &SdkConfig) -> Option<(String, EndpointSource)> {
    let key = ServiceConfigKey::builder()
        .service_id("SQS")
        .env("AWS_ENDPOINT_URL")
        .profile("endpoint_url")
        .build()
        .ok()?;
    // The service lookup reads the environment, the profile's `services` section and then the
    // profile's own `endpoint_url`, which is also the config's shared endpoint: a URL that is
    // not that one came from the services section.
    let shared = sdk_config.endpoint_url().map(str::to_string);
    let url = sdk_config
        .service_config()
        .and_then(|c| c.load_config(key))
        .or_else(|| shared.clone())?;
    let from_services = shared.as_deref() != Some(url.as_str());
    let env_is = |name| std::env::var(name).is_ok_and(|v| v == url);
    let source = if env_is("AWS_ENDPOINT_URL_SQS") {
        EndpointSource::Env("AWS_ENDPOINT_URL_SQS")
    } else if env_is("AWS_ENDPOINT_URL") {
        EndpointSource::Env("AWS_ENDPOINT_URL")
    } else if from_services {
        EndpointSource::ProfileServices
    } else {
        EndpointSource::Profile
    };
    Some((url, source))
}

/// The endpoint the SDK computes for a region when nothing overrides it (FIPS and dual-stack
/// settings included), for the first line; `None` if the SDK cannot name one.
async fn sdk_endpoint(sdk_config: &SdkConfig, region: &str) -> Option<String> {
    let params = Params::builder()
        .region(region)
        .use_fips(sdk_config.use_fips().unwrap_or(false))
        .use_dual_stack(sdk_config.use_dual_stack().unwrap_or(false))
        .build()
        .ok()?;
    aws_sdk_sqs::config::endpoint::DefaultResolver::new()
        .resolve_endpoint(&params)
        .await
        .ok()
        .map(|e| e.url().to_string())
}

/// The account the credentials belong to, from STS GetCallerIdentity.
async fn caller_account(sdk_config: &SdkConfig) -> Result<String, String> {
    let conf = aws_sdk_sts::config::Builder::from(sdk_config)
        .timeout_config(
            TimeoutConfig::builder()
                .connect_timeout(Duration::from_secs(3))
                .operation_attempt_timeout(Duration::from_secs(5))
                .operation_timeout(STS_TIMEOUT)
                .build(),
        )
        .build();
    let out = aws_sdk_sts::Client::from_conf(conf)
        .get_caller_identity()
        .send()
        .await
        .map_err(|e| sdk_error_line(&e))?;
    match out.account() {
        Some(account) if !account.is_empty() => Ok(account.to_string()),
        _ => Err("STS answered without an account".to_string()),
    }
}

/// An account id as printed: its first four digits, the rest starred (`1234********`), enough
/// to tell a sandbox from production in a log without publishing the id.
pub(crate) fn mask_account(id: &str) -> String {
    id.chars()
        .enumerate()
        .map(|(i, c)| if i < 4 { c } else { '*' })
        .collect()
}

/// What STS said about the credentials.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Account {
    /// Not asked: the target is not AWS.
    NotChecked,
    /// The account id.
    Known(String),
    /// STS did not answer; why.
    Unknown(String),
}

/// Why a target could not be resolved; each maps to one exit code (`cli::error`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TargetError {
    /// The command line asks for something impossible (exit 1).
    #[error("{0}")]
    Usage(String),
    /// The account guard refused the credentials' account (exit 1).
    #[error("{0}")]
    Refused(String),
    /// Something needed could not be done: the emulator did not start, STS did not answer
    /// while the account guard needed it (exit 3).
    #[error("{0}")]
    Failed(String),
}

/// What a command line asks for.
#[derive(Debug, Clone, Default)]
pub struct TargetRequest {
    /// `--target`; `None` picks endpoint when a URL is given, else embedded.
    pub kind: Option<TargetKind>,
    /// `--endpoint-url` (or `SQSPROBE_ENDPOINT_URL`).
    pub endpoint_url: Option<String>,
    pub region: Option<String>,
    pub profile: Option<String>,
    pub protocol: Protocol,
    /// `--chaos`, for the embedded emulator only.
    pub chaos: Option<sqsprobe_emulator::Chaos>,
    /// The embedded emulator's [`chaos_name_prefix`](sqsprobe_emulator::EmulatorConfig): the
    /// run's queue-name prefix, so its chaos dice do not follow the random run id.
    pub chaos_name_prefix: Option<String>,
    /// `--allow-account`: the only accounts `--target aws` may touch (empty: any). Ignored by
    /// the other targets, whose credentials are fixed test keys.
    pub allow_accounts: Vec<String>,
    /// The run's clock. A virtual one is shared with the embedded emulator, which is then
    /// reached in-process; no other target can follow a virtual clock.
    pub clock: super::clock::RunClock,
}

/// The facts about a resolved target that get printed and recorded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TargetInfo {
    pub kind: TargetKind,
    pub region: String,
    /// The endpoint the SQS client uses, without any `user:password@`; `None` when it is the
    /// SDK's own AWS endpoint for the region. This is `run_start.endpoint`.
    pub endpoint: Option<String>,
    /// Where `endpoint` came from, for `--target aws`.
    pub endpoint_source: Option<EndpointSource>,
    /// The SDK's own endpoint, shown on the first line when nothing overrides it.
    pub sdk_endpoint: Option<String>,
    pub account: Account,
    pub allow_accounts: Vec<String>,
}

impl TargetInfo {
    /// Whether `--target aws` is sent somewhere that is not AWS.
    pub(crate) fn redirected(&self) -> bool {
        self.kind == TargetKind::Aws
            && self
                .endpoint
                .as_deref()
                .is_some_and(|u| !is_aws_endpoint(u))
    }

    /// The line a command prints first when it may touch AWS: region, masked account and
    /// endpoint, or the redirection. `None` for emulator targets.
    pub(crate) fn announcement(&self) -> Option<String> {
        if self.kind != TargetKind::Aws {
            return None;
        }
        let guard = |id: &str| {
            if self.allow_accounts.is_empty() {
                ""
            } else if self.allow_accounts.iter().any(|a| a == id) {
                " (allowed)"
            } else {
                " (NOT in --allow-account)"
            }
        };
        let account = match &self.account {
            Account::Known(id) => format!("account {}{}", mask_account(id), guard(id)),
            Account::Unknown(why) => format!("account unknown (STS GetCallerIdentity: {why})"),
            Account::NotChecked => "account not checked".to_string(),
        };
        let source = self
            .endpoint_source
            .map_or_else(|| "--endpoint-url".to_string(), |s| s.to_string());
        let endpoint = match (&self.endpoint, &self.sdk_endpoint) {
            (Some(url), _) if self.redirected() => {
                format!("REDIRECTED: {source} sends SQS calls to {url}, which is not AWS")
            }
            (Some(url), _) => format!("endpoint {url} (from {source})"),
            (None, Some(url)) => format!("endpoint {url}"),
            (None, None) => "the SDK's endpoint for the region".to_string(),
        };
        Some(format!(
            "target aws · region {} · {account} · {endpoint}",
            self.region
        ))
    }

    /// The account guard: with `--allow-account`, only a confirmed account on the list passes.
    pub(crate) fn check_account(&self) -> Result<(), TargetError> {
        if self.kind != TargetKind::Aws || self.allow_accounts.is_empty() {
            return Ok(());
        }
        // Where the list came from: a CI job usually sets the variable once, a person the flag.
        let from_env = std::env::var("SQSPROBE_ALLOW_ACCOUNT").is_ok_and(|v| {
            let listed: Vec<&str> = v.split(',').map(str::trim).collect();
            listed
                == self
                    .allow_accounts
                    .iter()
                    .map(String::as_str)
                    .collect::<Vec<_>>()
        });
        let source = if from_env {
            "SQSPROBE_ALLOW_ACCOUNT"
        } else {
            "--allow-account"
        };
        let names = match self.allow_accounts.len() {
            1 => format!("the account {source} names"),
            n => format!("any of the {n} accounts {source} names"),
        };
        match &self.account {
            Account::Known(id) if self.allow_accounts.contains(id) => Ok(()),
            Account::Known(id) => Err(TargetError::Refused(format!(
                "refused: the credentials belong to account {}, not {names}; nothing was created",
                mask_account(id)
            ))),
            Account::Unknown(why) => Err(TargetError::Failed(format!(
                "refused: --allow-account is set and the account could not be confirmed \
                 (STS GetCallerIdentity: {why}); nothing was created"
            ))),
            Account::NotChecked => Err(TargetError::Failed(
                "refused: --allow-account is set and the account was not checked; nothing was created"
                    .to_string(),
            )),
        }
    }
}

/// A target ready for calls.
pub(crate) struct Target {
    pub info: TargetInfo,
    pub client: aws_sdk_sqs::Client,
    /// The embedded emulator, which lives as long as the command: shut it down at the end.
    pub emulator: Option<sqsprobe_emulator::RunningEmulator>,
}

/// The kind of target a command line means; refuses the combinations that mean nothing.
pub(crate) fn choose_kind(
    asked: Option<TargetKind>,
    has_endpoint: bool,
) -> Result<TargetKind, TargetError> {
    match (asked, has_endpoint) {
        (Some(TargetKind::Endpoint), false) => Err(TargetError::Usage(
            "--target endpoint needs --endpoint-url URL".to_string(),
        )),
        (Some(TargetKind::Embedded), true) => Err(TargetError::Usage(
            "--target embedded starts its own endpoint; drop --endpoint-url".to_string(),
        )),
        (Some(TargetKind::Embedded), false) | (None, false) => Ok(TargetKind::Embedded),
        (Some(TargetKind::Endpoint), true) | (None, true) => Ok(TargetKind::Endpoint),
        (Some(TargetKind::Aws), _) => Ok(TargetKind::Aws),
    }
}

/// Resolves a target: checks the request, starts the embedded emulator if asked, builds the
/// client, and for `--target aws` names the region, the endpoint and the account. `announce`
/// gets the first line (see [`TargetInfo::announcement`]) before the account guard decides,
/// so a refused run still says which account it saw. Nothing here mutates the target: the
/// only calls are STS GetCallerIdentity and, for the first line, no SQS call at all.
pub(crate) async fn resolve(
    req: TargetRequest,
    announce: impl FnOnce(&str),
) -> Result<Target, TargetError> {
    let kind = choose_kind(req.kind, req.endpoint_url.is_some())?;
    // Chaos lives in our emulator; another target cannot be told to misbehave.
    if req.chaos.is_some() && kind != TargetKind::Embedded {
        return Err(TargetError::Usage(
            "--chaos applies only to the embedded emulator; drop --endpoint-url / --target aws, or drop --chaos"
                .to_string(),
        ));
    }
    // Another target's leases and windows run on its own clock: waiting less would be wrong.
    if req.clock.kind() == super::clock::ClockKind::Virtual && kind != TargetKind::Embedded {
        return Err(TargetError::Usage(
            "--clock virtual applies only to the embedded emulator, which shares the run's \
             clock; another target's leases and windows take real time (drop --endpoint-url / \
             --target aws, or drop --clock virtual)"
                .to_string(),
        ));
    }
    if req.protocol == Protocol::Query
        && let Some(why) = query_protocol_refusal(kind, req.endpoint_url.as_deref())
    {
        return Err(TargetError::Usage(why));
    }
    let named = named_region(req.region.as_deref(), req.profile.as_deref()).await;
    let region = match (named, kind) {
        (Some(region), _) => region,
        (None, TargetKind::Aws) => {
            return Err(TargetError::Usage(
                "--target aws needs a region: pass --region, set AWS_REGION or \
                 AWS_DEFAULT_REGION, or give the profile a region; nothing was run"
                    .to_string(),
            ));
        }
        (None, _) => DEFAULT_EMULATOR_REGION.to_string(),
    };

    let mut emulator = None;
    let virtual_clock = req.clock.kind() == super::clock::ClockKind::Virtual;
    let endpoint_url = match kind {
        TargetKind::Embedded => {
            let addr = std::net::SocketAddr::from(([127, 0, 0, 1], 0));
            let clock: Option<std::sync::Arc<dyn sqsprobe_emulator::Clock>> = match virtual_clock {
                true => Some(std::sync::Arc::new(req.clock)),
                false => None,
            };
            let config = sqsprobe_emulator::EmulatorConfig {
                chaos: req.chaos.unwrap_or_default(),
                chaos_name_prefix: req.chaos_name_prefix.clone(),
                clock,
                ..sqsprobe_emulator::EmulatorConfig::default()
            };
            let emu = sqsprobe_emulator::spawn(addr, config).await.map_err(|e| {
                TargetError::Failed(format!("failed to start the embedded emulator: {e}"))
            })?;
            let url = emu.endpoint_url();
            emulator = Some(emu);
            Some(url)
        }
        _ => req.endpoint_url.clone(),
    };
    let config = TargetConfig {
        kind,
        endpoint_url,
        region: Some(region.clone()),
        profile: req.profile.clone(),
        protocol: req.protocol,
    };
    let sdk_config = load_sdk_config(&config, &region).await;
    let in_process = emulator
        .as_ref()
        .filter(|_| virtual_clock)
        .map(sqsprobe_emulator::RunningEmulator::in_process);
    let client = sqs_client_via(&sdk_config, &config, in_process);

    let (endpoint, endpoint_source, sdk_endpoint, account) = match kind {
        TargetKind::Aws => {
            let explicit = config.endpoint_url.clone().map(|url| {
                let source = match std::env::var("SQSPROBE_ENDPOINT_URL").is_ok_and(|v| v == url) {
                    true => EndpointSource::Env("SQSPROBE_ENDPOINT_URL"),
                    false => EndpointSource::Flag,
                };
                (url, source)
            });
            let configured = explicit.or_else(|| configured_endpoint(&sdk_config));
            let sdk_endpoint = match configured {
                None => sdk_endpoint(&sdk_config, &region).await,
                Some(_) => None,
            };
            let account = match caller_account(&sdk_config).await {
                Ok(id) => Account::Known(id),
                Err(why) => Account::Unknown(why),
            };
            let (url, source) = configured.unzip();
            (url, source, sdk_endpoint, account)
        }
        _ => (config.endpoint_url.clone(), None, None, Account::NotChecked),
    };
    let info = TargetInfo {
        kind,
        region,
        // Recorded and printed without any `user:password@` the URL may carry.
        endpoint: endpoint
            .as_deref()
            .map(sqsprobe_core::evidence::digest::strip_userinfo),
        endpoint_source,
        sdk_endpoint,
        account,
        allow_accounts: req.allow_accounts,
    };
    if let Some(line) = info.announcement() {
        announce(&line);
    }
    info.check_account()?;
    Ok(Target {
        info,
        client,
        emulator,
    })
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

    #[test]
    fn accounts_are_masked_after_four_digits() {
        assert_eq!(mask_account("123456789012"), "1234********");
        assert_eq!(mask_account("12"), "12");
    }

    #[test]
    fn the_kind_follows_the_flags_and_refuses_what_means_nothing() {
        assert_eq!(choose_kind(None, false), Ok(TargetKind::Embedded));
        assert_eq!(choose_kind(None, true), Ok(TargetKind::Endpoint));
        assert_eq!(
            choose_kind(Some(TargetKind::Aws), true),
            Ok(TargetKind::Aws)
        );
        assert!(choose_kind(Some(TargetKind::Endpoint), false).is_err());
        assert!(choose_kind(Some(TargetKind::Embedded), true).is_err());
    }

    fn aws(endpoint: Option<&str>, account: Account, allow: &[&str]) -> TargetInfo {
        TargetInfo {
            kind: TargetKind::Aws,
            region: "eu-west-1".into(),
            endpoint: endpoint.map(str::to_string),
            endpoint_source: endpoint.map(|_| EndpointSource::Env("AWS_ENDPOINT_URL")),
            sdk_endpoint: Some("https://sqs.eu-west-1.amazonaws.com".into()),
            account,
            allow_accounts: allow.iter().map(|s| s.to_string()).collect(),
        }
    }

    #[test]
    fn the_first_line_names_region_masked_account_and_endpoint() {
        let info = aws(None, Account::Known("123456789012".into()), &[]);
        assert_eq!(
            info.announcement().unwrap(),
            "target aws · region eu-west-1 · account 1234******** · endpoint https://sqs.eu-west-1.amazonaws.com"
        );
        assert!(!info.redirected());
        assert_eq!(info.check_account(), Ok(()));
    }

    #[test]
    fn a_redirect_is_announced_and_a_vpc_endpoint_is_not_one() {
        let info = aws(
            Some("http://127.0.0.1:9324"),
            Account::Known("000000000000".into()),
            &[],
        );
        assert!(info.redirected());
        assert_eq!(
            info.announcement().unwrap(),
            "target aws · region eu-west-1 · account 0000******** · REDIRECTED: AWS_ENDPOINT_URL \
             sends SQS calls to http://127.0.0.1:9324, which is not AWS"
        );
        let vpce = aws(
            Some("https://vpce-1.sqs.eu-west-1.vpce.amazonaws.com"),
            Account::Known("000000000000".into()),
            &[],
        );
        assert!(!vpce.redirected());
        assert!(
            vpce.announcement()
                .unwrap()
                .contains("endpoint https://vpce-1.")
        );
    }

    #[test]
    fn the_guard_passes_only_a_confirmed_listed_account() {
        let ok = aws(
            None,
            Account::Known("111111111111".into()),
            &["111111111111"],
        );
        assert_eq!(ok.check_account(), Ok(()));
        assert!(
            ok.announcement()
                .unwrap()
                .contains("1111******** (allowed)")
        );

        let other = aws(
            None,
            Account::Known("222222222222".into()),
            &["111111111111", "333333333333"],
        );
        let refused = other.check_account().unwrap_err();
        assert!(matches!(refused, TargetError::Refused(_)), "{refused:?}");
        assert!(refused.to_string().contains("2222********"), "{refused}");
        assert!(!refused.to_string().contains("222222222222"), "{refused}");
        assert!(
            other
                .announcement()
                .unwrap()
                .contains("NOT in --allow-account")
        );

        let unknown = aws(
            None,
            Account::Unknown("timed out".into()),
            &["111111111111"],
        );
        assert!(matches!(
            unknown.check_account().unwrap_err(),
            TargetError::Failed(_)
        ));
        // Without a guard an unknown account is said, not refused.
        let unguarded = aws(None, Account::Unknown("timed out".into()), &[]);
        assert_eq!(unguarded.check_account(), Ok(()));
        assert!(
            unguarded
                .announcement()
                .unwrap()
                .contains("account unknown")
        );
    }

    #[test]
    fn emulator_targets_announce_nothing_and_ignore_the_guard() {
        let info = TargetInfo {
            kind: TargetKind::Endpoint,
            region: "us-east-1".into(),
            endpoint: Some("http://127.0.0.1:4566".into()),
            endpoint_source: None,
            sdk_endpoint: None,
            account: Account::NotChecked,
            allow_accounts: vec!["111111111111".into()],
        };
        assert_eq!(info.announcement(), None);
        assert_eq!(info.check_account(), Ok(()));
        assert!(!info.redirected());
    }
}
