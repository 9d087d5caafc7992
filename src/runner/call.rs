//! One SQS call, recorded: every SDK attempt becomes an evidence row.
//!
//! An interceptor attached to the single operation notes when each attempt started and what
//! came back (status, request id, legacy error code), because a retried attempt is otherwise
//! invisible: the SDK reports only the last one. Per-call retry settings are applied here too,
//! so an experiment chooses whether a throttle is retried or recorded.

use aws_sdk_sqs::config::interceptors::{
    BeforeTransmitInterceptorContextRef, FinalizerInterceptorContextRef,
};
use aws_sdk_sqs::config::{ConfigBag, Intercept, RuntimeComponents};
use aws_sdk_sqs::error::{ProvideErrorMetadata, SdkError};
use aws_sdk_sqs::operation::RequestId;
use aws_smithy_runtime_api::box_error::BoxError;
use aws_smithy_runtime_api::http::Response as HttpResponse;
use chrono::{DateTime, SecondsFormat, Utc};
/// The failure facts a call's answer becomes here; defined below the runner, in `classify`,
/// whose step checks read them.
pub(crate) use sqsprobe_core::classify::{CallError, FailureKind};
use sqsprobe_core::evidence::Masker;
use sqsprobe_core::evidence::format::{Call, Completion, Phase};
use std::sync::{Arc, Mutex};
use tokio::time::Instant;

/// Formats a timestamp the way evidence does: RFC 3339, UTC, milliseconds.
pub(crate) fn rfc3339(t: DateTime<Utc>) -> String {
    t.to_rfc3339_opts(SecondsFormat::Millis, true)
}

/// What one SDK attempt looked like on the wire.
#[derive(Debug, Clone, Default)]
struct AttemptNote {
    started_at: Option<DateTime<Utc>>,
    started: Option<Instant>,
    ended_at: Option<DateTime<Utc>>,
    latency_ms: f64,
    status: Option<u16>,
    request_id: Option<String>,
    /// From `x-amzn-query-error`: (legacy code, sender fault).
    query_error: Option<(String, bool)>,
    transport_error: Option<String>,
    /// The fault injected into this attempt, if any.
    fault: Option<sqsprobe_core::evidence::format::FaultEvidence>,
    /// The form of a query-protocol reply (`json`, `xml`, `other`), as the query client saw
    /// it before translating it for the SDK.
    reply: Option<String>,
}

/// The interceptor that fills [`AttemptNote`]s; one per call.
#[derive(Debug, Clone, Default)]
pub(crate) struct AttemptRecorder {
    /// The run's clock: attempts are timed on it.
    clock: crate::runner::clock::RunClock,
    notes: Arc<Mutex<Vec<AttemptNote>>>,
    /// The credentials the signed request carried (access key id, session token), so that the
    /// run can mask any echo of them; never written anywhere.
    credentials: Arc<Mutex<Vec<String>>>,
}

impl AttemptRecorder {
    /// A recorder timing attempts on `clock`.
    pub(crate) fn new(clock: crate::runner::clock::RunClock) -> AttemptRecorder {
        AttemptRecorder {
            clock,
            ..AttemptRecorder::default()
        }
    }

    fn notes(&self) -> Vec<AttemptNote> {
        self.notes.lock().map(|n| n.clone()).unwrap_or_default()
    }

    /// Notes that the attempt in progress got an injected fault (the fault connector calls
    /// this between the attempt's start and its end).
    pub(crate) fn note_fault(&self, fault: sqsprobe_core::evidence::format::FaultEvidence) {
        if let Ok(mut notes) = self.notes.lock()
            && let Some(note) = notes.last_mut()
        {
            note.fault = Some(fault);
        }
    }
}

/// The access key id of a SigV4 `Authorization` header (`... Credential=AKIA.../20261201/...`).
fn signing_key_id(authorization: &str) -> Option<&str> {
    let after = authorization.split("Credential=").nth(1)?;
    after.split('/').next().filter(|id| !id.is_empty())
}

fn header(resp: &HttpResponse, name: &str) -> Option<String> {
    resp.headers().get(name).map(str::to_string)
}

/// Splits `AWS.SimpleQueueService.NonExistentQueue;Sender` into the code and the fault side.
fn parse_query_error(value: &str) -> (String, bool) {
    match value.split_once(';') {
        Some((code, side)) => (code.to_string(), side.eq_ignore_ascii_case("Sender")),
        None => (value.to_string(), true),
    }
}

impl Intercept for AttemptRecorder {
    fn name(&self) -> &'static str {
        "sqsprobe-attempt-recorder"
    }

    fn read_before_attempt(
        &self,
        _context: &BeforeTransmitInterceptorContextRef<'_>,
        _rc: &RuntimeComponents,
        _cfg: &mut ConfigBag,
    ) -> Result<(), BoxError> {
        if let Ok(mut notes) = self.notes.lock() {
            notes.push(AttemptNote {
                started_at: Some(self.clock.now()),
                started: Some(Instant::now()),
                ..AttemptNote::default()
            });
        }
        Ok(())
    }

    fn read_before_transmit(
        &self,
        context: &BeforeTransmitInterceptorContextRef<'_>,
        _rc: &RuntimeComponents,
        _cfg: &mut ConfigBag,
    ) -> Result<(), BoxError> {
        let headers = context.request().headers();
        let found = [
            headers
                .get("authorization")
                .and_then(signing_key_id)
                .map(str::to_string),
            headers.get("x-amz-security-token").map(str::to_string),
        ];
        if let Ok(mut creds) = self.credentials.lock() {
            for c in found.into_iter().flatten() {
                if !creds.contains(&c) {
                    creds.push(c);
                }
            }
        }
        Ok(())
    }

    fn read_after_attempt(
        &self,
        context: &FinalizerInterceptorContextRef<'_>,
        _rc: &RuntimeComponents,
        _cfg: &mut ConfigBag,
    ) -> Result<(), BoxError> {
        let Ok(mut notes) = self.notes.lock() else {
            return Ok(());
        };
        let Some(note) = notes.last_mut() else {
            return Ok(());
        };
        note.ended_at = Some(self.clock.now());
        note.latency_ms = note
            .started
            .map(|s| s.elapsed().as_secs_f64() * 1000.0)
            .unwrap_or_default();
        if let Some(resp) = context.response() {
            note.status = Some(resp.status().as_u16());
            note.request_id =
                header(resp, "x-amzn-requestid").or_else(|| header(resp, "x-amz-request-id"));
            note.query_error = header(resp, "x-amzn-query-error").map(|v| parse_query_error(&v));
            note.reply = header(resp, crate::runner::query_protocol::REPLY_FORM_HEADER);
        } else if let Some(Err(err)) = context.output_or_error() {
            note.transport_error = Some(if err.is_timeout_error() {
                "timeout".to_string()
            } else {
                err.to_string()
            });
        }
        Ok(())
    }
}

/// Everything known about a call once it returned.
#[derive(Debug)]
pub(crate) struct Recorded<O> {
    pub output: Option<O>,
    pub error: Option<CallError>,
    /// One row per attempt, in order; the caller completes the last one with message details.
    pub rows: Vec<Call>,
    /// The credentials the requests were signed with (for the masker only).
    pub credentials: Vec<String>,
    /// The HTTP status of the final attempt, kept here because the rows may already have been
    /// emitted (drained) when a step checks its answer.
    pub final_status: Option<u16>,
    /// The form of the final attempt's query-protocol reply (`json`, `xml`, `other`).
    pub reply: Option<String>,
}

impl<O> Recorded<O> {
    /// The last row (the attempt whose response the SDK returned).
    pub(crate) fn last_row(&mut self) -> &mut Call {
        self.rows
            .last_mut()
            .expect("a recorded call has at least one row")
    }

    /// The HTTP status of the final attempt.
    pub(crate) fn status(&self) -> Option<u16> {
        self.final_status
    }
}

/// Fields every row of a call shares, filled in by the step that makes it.
#[derive(Debug, Clone)]
pub(crate) struct CallMeta {
    pub run_id: String,
    pub case: String,
    pub phase: Phase,
    pub step: Option<usize>,
    pub line: Option<u32>,
    pub action: &'static str,
    pub attempt: Option<String>,
    pub queue: Option<String>,
    /// A receive's long-poll wait: its attempts may take that long plus the call timeout.
    pub wait: Option<std::time::Duration>,
    /// The trial of a multi-trial case the call belongs to.
    pub trial: Option<u32>,
    /// The suite's label of the queue the call concerns (never written: `queue` is its name,
    /// which two labels share when one is `same_name_as` the other in another region).
    pub label: Option<String>,
    /// The region the call is signed for when it is not the run's (a queue's `region:`).
    pub region: Option<String>,
    /// The run's clock, which times the call's attempts.
    pub clock: crate::runner::clock::RunClock,
    /// The query-protocol form a step's `wire:` gives the call (its `reply` is filled per
    /// attempt).
    pub wire: Option<sqsprobe_core::evidence::format::WireEvidence>,
}

impl CallMeta {
    /// A row for this call with nothing observed yet: one attempt, no response (`info`).
    pub(crate) fn row(&self, started_at: DateTime<Utc>, ended_at: DateTime<Utc>) -> Call {
        Call {
            run_id: self.run_id.clone(),
            case: self.case.clone(),
            phase: self.phase,
            step: self.step,
            line: self.line,
            action: self.action.to_string(),
            attempt_number: 1,
            retried: false,
            attempt: self.attempt.clone(),
            queue: self.queue.clone(),
            message_id: None,
            message: None,
            business_key: None,
            handle_digest: None,
            messages: Vec::new(),
            entries: Vec::new(),
            request_id: None,
            http_status: None,
            error_code: None,
            error_type: None,
            sender_fault: None,
            error_message: None,
            completion: Completion::Info,
            started_at: rfc3339(started_at),
            ended_at: rfc3339(ended_at),
            latency_ms: (ended_at - started_at).num_microseconds().unwrap_or(0) as f64 / 1000.0,
            lease_ms: None,
            fault: None,
            trial: self.trial,
            region: self.region.clone(),
            wire: self.wire.clone().map(Box::new),
        }
    }
}

/// Reads `__type` from a JSON error body: `com.amazonaws.sqs#QueueDoesNotExist` → `QueueDoesNotExist`.
fn error_type_from_body(body: &[u8]) -> Option<String> {
    let value: serde_json::Value = serde_json::from_slice(body).ok()?;
    let t = value.get("__type")?.as_str()?;
    Some(t.rsplit('#').next().unwrap_or(t).to_string())
}

/// Runs `send(recorder)` and turns what happened into [`Recorded`].
///
/// `send` must attach the recorder to the operation (`.customize().interceptor(rec)`), so that
/// each attempt is noted.
pub(crate) async fn record<O, E, F, Fut>(meta: CallMeta, masker: &Masker, send: F) -> Recorded<O>
where
    F: FnOnce(AttemptRecorder) -> Fut,
    Fut: std::future::Future<Output = Result<O, SdkError<E, HttpResponse>>>,
    E: ProvideErrorMetadata + std::error::Error + Send + Sync + 'static,
    O: RequestId,
{
    let recorder = AttemptRecorder::new(meta.clock);
    let call_started_at = meta.clock.now();
    let call_started = Instant::now();
    let result = send(recorder.clone()).await;
    let call_ended_at = meta.clock.now();
    let mut notes = recorder.notes();
    let credentials = recorder
        .credentials
        .lock()
        .map(|c| c.clone())
        .unwrap_or_default();
    if notes.is_empty() {
        // The SDK failed before any attempt (e.g. it could not build the request).
        notes.push(AttemptNote {
            started_at: Some(call_started_at),
            ended_at: Some(call_ended_at),
            latency_ms: call_started.elapsed().as_secs_f64() * 1000.0,
            ..AttemptNote::default()
        });
    }

    let last = notes.len() - 1;
    let mut rows: Vec<Call> = notes
        .iter()
        .enumerate()
        .map(|(i, note)| {
            let (code, sender_fault) = match &note.query_error {
                Some((c, s)) => (Some(c.clone()), Some(*s)),
                None => (None, None),
            };
            let never_sent = note.fault.as_ref().is_some_and(|f| f.kind == "reset");
            let completion = match (note.status, &note.transport_error) {
                (Some(s), _) if s < 300 => Completion::Ok,
                (Some(s), _) if s < 500 => Completion::Fail,
                // A connection dropped before sending is a definite non-effect.
                _ if never_sent => Completion::Fail,
                _ => Completion::Info,
            };
            Call {
                attempt_number: (i + 1) as u32,
                retried: i < last,
                request_id: note.request_id.clone(),
                http_status: note.status,
                error_code: code,
                sender_fault,
                error_message: note.transport_error.as_ref().map(|e| masker.mask(e)),
                completion,
                fault: note.fault.clone(),
                wire: meta.wire.clone().map(|w| {
                    Box::new(sqsprobe_core::evidence::format::WireEvidence {
                        reply: note.reply.clone(),
                        ..w
                    })
                }),
                latency_ms: (note.latency_ms * 1000.0).round() / 1000.0,
                ..meta.row(
                    note.started_at.unwrap_or(call_started_at),
                    note.ended_at.unwrap_or(call_ended_at),
                )
            }
        })
        .collect();

    match result {
        Ok(output) => {
            let row = &mut rows[last];
            if row.request_id.is_none() {
                row.request_id = output.request_id().map(str::to_string);
            }
            row.completion = Completion::Ok;
            Recorded {
                output: Some(output),
                error: None,
                final_status: rows.last().and_then(|r| r.http_status),
                reply: notes[last].reply.clone(),
                rows,
                credentials,
            }
        }
        Err(err) => {
            let mut error = describe_error(&err, masker);
            error.inject(notes[last].fault.clone());
            let row = &mut rows[last];
            row.completion = match error.kind {
                FailureKind::Response | FailureKind::Refused | FailureKind::NotSent => {
                    Completion::Fail
                }
                _ => Completion::Info,
            };
            // Throttled requests are definite refusals, but for an experiment they mean
            // "could not tell", so the row says info too.
            row.error_code = error.code.clone();
            row.error_type = error.error_type.clone();
            row.sender_fault = error.sender_fault.or(row.sender_fault);
            row.error_message = error.message.clone();
            if row.http_status.is_none() {
                row.http_status = error.status;
            }
            Recorded {
                output: None,
                error: Some(error),
                final_status: rows.last().and_then(|r| r.http_status),
                reply: notes[last].reply.clone(),
                rows,
                credentials,
            }
        }
    }
}

fn describe_error<E>(err: &SdkError<E, HttpResponse>, masker: &Masker) -> CallError
where
    E: ProvideErrorMetadata + std::error::Error + Send + Sync + 'static,
{
    let raw = err.raw_response();
    let status = raw.map(|r| r.status().as_u16());
    let error_type = raw
        .and_then(|r| r.body().bytes())
        .and_then(error_type_from_body);
    let sender_fault = raw
        .and_then(|r| header(r, "x-amzn-query-error"))
        .map(|v| parse_query_error(&v).1);
    match err {
        SdkError::ServiceError(_) => {
            let code = err.code().map(str::to_string);
            let named = |is: fn(&str) -> bool| {
                code.as_deref().is_some_and(is) || error_type.as_deref().is_some_and(is)
            };
            let kind = if named(sqsprobe_facts::sqs::errors::is_auth) {
                FailureKind::Refused
            } else if named(sqsprobe_facts::sqs::errors::is_throttling) {
                FailureKind::Throttled
            } else if status.is_some_and(|s| s >= 500) {
                FailureKind::ServerError
            } else {
                FailureKind::Response
            };
            CallError {
                kind,
                code,
                error_type,
                status,
                sender_fault,
                message: err.message().map(|m| masker.mask(m)),
                injected: None,
                denied: false,
            }
        }
        SdkError::ResponseError(_) => CallError {
            // A response we could not parse: a malformed reply is a target defect, but we
            // cannot say whether the call took effect.
            kind: FailureKind::ServerError,
            code: Some("UnparseableResponse".to_string()),
            error_type,
            status,
            sender_fault,
            message: Some(masker.mask(&source_chain(err))),
            injected: None,
            denied: false,
        },
        SdkError::TimeoutError(_) => CallError {
            kind: FailureKind::NoResponse,
            code: None,
            error_type: None,
            status: None,
            sender_fault: None,
            message: Some("timed out".to_string()),
            injected: None,
            denied: false,
        },
        _ => CallError {
            kind: FailureKind::NoResponse,
            code: None,
            error_type: None,
            status,
            sender_fault: None,
            message: Some(masker.mask(&source_chain(err))),
            injected: None,
            denied: false,
        },
    }
}

/// The error and its sources on one line: the SDK's top-level messages ("dispatch failure")
/// say little; the cause ("Connection refused") is what a user needs.
pub(crate) fn source_chain(err: &dyn std::error::Error) -> String {
    let mut parts = vec![err.to_string()];
    let mut source = err.source();
    while let Some(s) = source {
        let text = s.to_string();
        if !parts.iter().any(|p| p.contains(&text)) {
            parts.push(text);
        }
        source = s.source();
    }
    parts.join(": ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_signing_key_id_is_read_from_the_authorization_header() {
        let h = "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20261201/us-east-1/sqs/aws4_request, SignedHeaders=host, Signature=abc";
        assert_eq!(signing_key_id(h), Some("AKIAIOSFODNN7EXAMPLE"));
        assert_eq!(signing_key_id("Bearer x"), None);
    }

    #[test]
    fn query_error_header_splits_code_and_fault() {
        assert_eq!(
            parse_query_error("AWS.SimpleQueueService.NonExistentQueue;Sender"),
            ("AWS.SimpleQueueService.NonExistentQueue".to_string(), true)
        );
        assert_eq!(
            parse_query_error("InternalError;Receiver"),
            ("InternalError".to_string(), false)
        );
    }

    #[test]
    fn error_type_comes_from_the_json_body() {
        assert_eq!(
            error_type_from_body(
                br#"{"__type":"com.amazonaws.sqs#QueueDoesNotExist","message":"x"}"#
            ),
            Some("QueueDoesNotExist".to_string())
        );
        assert_eq!(error_type_from_body(b"<xml/>"), None);
    }
}
