//! Faults injected under the SDK, on every target (real AWS included).
//!
//! A [`FaultClient`] sits where the SDK's HTTP client goes, for one call of a step: it wraps
//! the client the run uses (the default HTTPS client, or the query-protocol translator) and,
//! for each attempt the case's [`FaultPlan`] selects, does what the fault says — waits, times
//! out, answers locally with a throttle or an error, drops the connection before sending, or
//! sends the request and drops the response. The SDK's interceptors are synchronous and cannot
//! wait or lose a response; a connector can (see `shared/engineering-notes.md`).
//!
//! Which attempts a fault hits is decided here, deterministically from the run's seed: each
//! fault counts the attempts it selects (`action`), skips the first `after`, hits at most
//! `times`, each with `probability`, drawn from the case's own RNG seeded from the run seed
//! and the case (and trial), so the same seed and suite inject the same faults. What was
//! injected is written on the attempt's evidence row (`call.fault`).

use std::sync::{Arc, Mutex};

use aws_smithy_runtime_api::client::http::{
    HttpClient, HttpConnector, HttpConnectorFuture, HttpConnectorSettings, SharedHttpClient,
    SharedHttpConnector,
};
use aws_smithy_runtime_api::client::orchestrator::{HttpRequest, HttpResponse};
use aws_smithy_runtime_api::client::result::ConnectorError;
use aws_smithy_runtime_api::client::runtime_components::RuntimeComponents;
use aws_smithy_types::body::SdkBody;
use rand::{RngExt, SeedableRng, rngs::StdRng};

use sqsprobe_core::evidence::format::FaultEvidence;
use sqsprobe_core::suite::model::{Fault, FaultKind};

use super::call::AttemptRecorder;

/// The HTTP client `client` sends through (the query-protocol translator when it has one),
/// or the SDK's default HTTPS client, built once for the run: the fault client wraps it.
pub(crate) fn base_http_client(client: &aws_sdk_sqs::Client) -> SharedHttpClient {
    client.config().http_client().unwrap_or_else(|| {
        use aws_smithy_http_client::tls::{Provider, rustls_provider::CryptoMode};
        aws_smithy_http_client::Builder::new()
            .tls_provider(Provider::Rustls(CryptoMode::AwsLc))
            .build_https()
    })
}

/// One fault of a case with its counters.
#[derive(Debug)]
struct Armed {
    fault: Fault,
    /// Attempts it selected so far (for `after`).
    selected: u32,
    /// Attempts it hit so far (for `times`).
    hits: u32,
}

impl Armed {
    fn new(fault: Fault) -> Armed {
        Armed {
            fault,
            selected: 0,
            hits: 0,
        }
    }

    /// Counts an attempt of `action` if the fault selects it; whether it is eligible (past
    /// `after`, within `times`).
    fn select(&mut self, action: &str) -> bool {
        let f = &self.fault;
        if !f.actions.is_empty() && !f.actions.iter().any(|a| a.value == action) {
            return false;
        }
        self.selected += 1;
        self.selected > f.after && f.times.is_none_or(|t| self.hits < t)
    }

    /// Draws the fault's probability for an eligible attempt; counts the hit.
    fn fire(&mut self, rng: &mut StdRng) -> bool {
        // Drawn for every eligible attempt, so the sequence depends on the seed alone.
        let draw: f64 = rng.random();
        let hit = draw < self.fault.probability;
        if hit {
            self.hits += 1;
        }
        hit
    }
}

/// The faults of one case (one trial), shared by its calls.
#[derive(Debug)]
pub(crate) struct FaultPlan {
    case: Mutex<Vec<Armed>>,
    rng: Mutex<StdRng>,
}

impl FaultPlan {
    /// The plan for a case's `faults:`, its dice seeded from the run seed and the case (and
    /// trial) key.
    pub(crate) fn new(faults: &[Fault], seed: u64, key: &str) -> FaultPlan {
        FaultPlan {
            case: Mutex::new(faults.iter().cloned().map(Armed::new).collect()),
            rng: Mutex::new(StdRng::seed_from_u64(mix(seed, key))),
        }
    }

    /// The fault that hits the next attempt of `action`, and whose it is (`step` or `case`):
    /// the step's own fault first, then the case's in order.
    ///
    /// Every fault counts every attempt it selects, whether or not another fault took it, so
    /// `after: N` always means "the first N calls of that action".
    fn pick(&self, step: Option<&Mutex<Armed>>, action: &str) -> Option<(FaultKind, &'static str)> {
        let mut rng = self.rng.lock().ok()?;
        let mut case = self.case.lock().ok()?;
        let mut picked = None;
        if let Some(step) = step
            && let Ok(mut armed) = step.lock()
            && armed.select(action)
            && armed.fire(&mut rng)
        {
            picked = Some((armed.fault.kind.clone(), "step"));
        }
        for armed in case.iter_mut() {
            if armed.select(action) && picked.is_none() && armed.fire(&mut rng) {
                picked = Some((armed.fault.kind.clone(), "case"));
            }
        }
        picked
    }
}

/// A deterministic 64-bit mix of the run seed and a key (the case id and trial).
fn mix(seed: u64, key: &str) -> u64 {
    // FNV-1a over the key, folded into the seed with a splitmix64 step.
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in key.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    let mut z = seed ^ h;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The evidence of an injected fault (what `call.fault` says).
pub(crate) fn evidence(kind: &FaultKind, scope: &str) -> FaultEvidence {
    let (delay_ms, status, code) = match kind {
        FaultKind::Latency { delay } => (Some(delay.as_millis() as u64), None, None),
        FaultKind::Throttle => (None, Some(400), Some(THROTTLE_CODE.to_string())),
        FaultKind::Error { status, code } => (None, Some(*status), code.clone()),
        FaultKind::Timeout | FaultKind::Reset | FaultKind::LoseResponse => (None, None, None),
    };
    FaultEvidence {
        kind: kind.as_str().to_string(),
        scope: scope.to_string(),
        delay_ms,
        status,
        code,
    }
}

/// The code SQS answers a throttled request with (`RequestThrottled`, HTTP 400).
const THROTTLE_CODE: &str = "RequestThrottled";

/// The HTTP client of one step call: the run's client with the case's faults in front.
#[derive(Debug, Clone)]
pub(crate) struct FaultClient {
    inner: SharedHttpClient,
    plan: Arc<FaultPlan>,
    /// The step's own `fault:`, armed for this step.
    step: Option<Arc<Mutex<Armed>>>,
    recorder: AttemptRecorder,
}

impl FaultClient {
    /// The client for one call: `inner` behind the case's plan and the step's own fault, its
    /// injections noted on the call's `recorder`.
    pub(crate) fn new(
        inner: SharedHttpClient,
        plan: Arc<FaultPlan>,
        step: &StepFault,
        recorder: AttemptRecorder,
    ) -> FaultClient {
        FaultClient {
            inner,
            plan,
            step: step.0.clone(),
            recorder,
        }
    }
}

/// A step's own fault, armed once per run of the step (its counters span the step's calls:
/// an observe's many receives, a retried call's attempts).
#[derive(Debug, Default)]
pub(crate) struct StepFault(Option<Arc<Mutex<Armed>>>);

impl StepFault {
    pub(crate) fn new(fault: Option<&Fault>) -> StepFault {
        StepFault(fault.cloned().map(|f| Arc::new(Mutex::new(Armed::new(f)))))
    }

    /// Whether the step has a fault of its own.
    pub(crate) fn is_armed(&self) -> bool {
        self.0.is_some()
    }
}

impl HttpClient for FaultClient {
    fn http_connector(
        &self,
        settings: &HttpConnectorSettings,
        components: &RuntimeComponents,
    ) -> SharedHttpConnector {
        SharedHttpConnector::new(FaultConnector {
            inner: self.inner.http_connector(settings, components),
            plan: self.plan.clone(),
            step: self.step.clone(),
            recorder: self.recorder.clone(),
        })
    }
}

#[derive(Debug)]
struct FaultConnector {
    inner: SharedHttpConnector,
    plan: Arc<FaultPlan>,
    step: Option<Arc<Mutex<Armed>>>,
    recorder: AttemptRecorder,
}

/// The SQS operation an AWS JSON request names (`AmazonSQS.ReceiveMessage`).
fn action_of(request: &HttpRequest) -> Option<String> {
    let target = request.headers().get("x-amz-target")?;
    Some(
        target
            .strip_prefix("AmazonSQS.")
            .unwrap_or(target)
            .to_string(),
    )
}

impl HttpConnector for FaultConnector {
    fn call(&self, request: HttpRequest) -> HttpConnectorFuture {
        let action = action_of(&request).unwrap_or_default();
        let Some((kind, scope)) = self.plan.pick(self.step.as_deref(), &action) else {
            return self.inner.call(request);
        };
        self.recorder.note_fault(evidence(&kind, scope));
        let inner = self.inner.clone();
        HttpConnectorFuture::new(async move {
            match kind {
                FaultKind::Latency { delay } => {
                    tokio::time::sleep(delay).await;
                    inner.call(request).await
                }
                // Answered at once as a timeout rather than by waiting out the attempt
                // timeout: the request is never sent either way.
                FaultKind::Timeout => Err(ConnectorError::timeout(
                    "the attempt timed out (injected: the request was never sent)".into(),
                )),
                FaultKind::Reset => Err(ConnectorError::io(
                    "connection reset before the request was sent (injected)".into(),
                )),
                FaultKind::Throttle => Ok(local_error(
                    400,
                    THROTTLE_CODE,
                    "Request is throttled (injected).",
                )),
                FaultKind::Error { status, code } => Ok(local_error(
                    status,
                    code.as_deref().unwrap_or(if status >= 500 {
                        "InternalError"
                    } else {
                        "InvalidParameterValue"
                    }),
                    "Injected error.",
                )),
                FaultKind::LoseResponse => {
                    // The request reaches the target and takes effect; its answer is read and
                    // dropped, so the connection is reused as a real lost answer would not be.
                    let _answer = inner.call(request).await;
                    Err(ConnectorError::io(
                        "connection reset after the request was sent: the response was lost (injected)"
                            .into(),
                    ))
                }
            }
        })
    }
}

/// An AWS JSON error response made here, never sent to the target.
fn local_error(status: u16, code: &str, message: &str) -> HttpResponse {
    let body = serde_json::json!({
        "__type": format!("com.amazonaws.sqs#{code}"),
        "message": message,
    })
    .to_string();
    let fault = if status >= 500 { "Receiver" } else { "Sender" };
    let mut response = HttpResponse::new(
        status
            .try_into()
            .unwrap_or_else(|_| 500u16.try_into().expect("500 is a status")),
        SdkBody::from(body),
    );
    let headers = response.headers_mut();
    headers.insert("content-type", "application/x-amz-json-1.0");
    headers.insert("x-amzn-query-error", format!("{code};{fault}"));
    headers.insert("x-amzn-requestid", "injected-by-sqsprobe");
    response
}

#[cfg(test)]
mod tests {
    use super::*;
    use sqsprobe_core::suite::model::{Pos, Spanned};

    fn fault(
        kind: FaultKind,
        action: Option<&str>,
        after: u32,
        times: Option<u32>,
        p: f64,
    ) -> Fault {
        Fault {
            pos: Pos::default(),
            kind,
            actions: action
                .map(|a| {
                    vec![Spanned {
                        value: a.to_string(),
                        pos: Pos::default(),
                    }]
                })
                .unwrap_or_default(),
            probability: p,
            after,
            times,
        }
    }

    #[test]
    fn after_and_times_select_exactly_the_named_attempts() {
        let plan = FaultPlan::new(
            &[fault(
                FaultKind::LoseResponse,
                Some("ReceiveMessage"),
                1,
                Some(1),
                1.0,
            )],
            7,
            "case",
        );
        let picks: Vec<bool> = [
            "ReceiveMessage",
            "SendMessage",
            "ReceiveMessage",
            "ReceiveMessage",
        ]
        .iter()
        .map(|a| plan.pick(None, a).is_some())
        .collect();
        assert_eq!(picks, [false, false, true, false]);
    }

    #[test]
    fn the_step_fault_comes_first_and_the_seed_decides_the_dice() {
        let step = Mutex::new(Armed::new(fault(FaultKind::Reset, None, 0, Some(1), 1.0)));
        let plan = FaultPlan::new(&[fault(FaultKind::Throttle, None, 0, None, 1.0)], 1, "c");
        assert_eq!(
            plan.pick(Some(&step), "DeleteMessage"),
            Some((FaultKind::Reset, "step"))
        );
        assert_eq!(
            plan.pick(Some(&step), "DeleteMessage"),
            Some((FaultKind::Throttle, "case"))
        );

        let draws = |seed: u64, key: &str| -> Vec<bool> {
            let plan = FaultPlan::new(&[fault(FaultKind::Timeout, None, 0, None, 0.5)], seed, key);
            (0..64)
                .map(|_| plan.pick(None, "SendMessage").is_some())
                .collect()
        };
        assert_eq!(
            draws(42, "case#1"),
            draws(42, "case#1"),
            "same seed, same faults"
        );
        assert_ne!(draws(42, "case#1"), draws(43, "case#1"));
        assert_ne!(
            draws(42, "case#1"),
            draws(42, "case#2"),
            "each trial its own dice"
        );
        let hits = draws(42, "case#1").iter().filter(|h| **h).count();
        assert!((16..=48).contains(&hits), "p = 0.5 hit {hits} of 64");
    }

    #[test]
    fn local_answers_look_like_sqs_errors() {
        let r = local_error(400, THROTTLE_CODE, "x");
        assert_eq!(r.status().as_u16(), 400);
        assert_eq!(
            r.headers().get("x-amzn-query-error"),
            Some("RequestThrottled;Sender")
        );
        assert!(
            std::str::from_utf8(r.body().bytes().unwrap())
                .unwrap()
                .contains("com.amazonaws.sqs#RequestThrottled")
        );
        let e = evidence(
            &FaultKind::Error {
                status: 500,
                code: None,
            },
            "case",
        );
        assert_eq!((e.kind.as_str(), e.status), ("error", Some(500)));
    }
}
