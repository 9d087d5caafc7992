//! The reachability check before any case: one ListQueues that matches nothing yet, so a wrong
//! endpoint or refused credentials are one clear error rather than one per case.

use crate::runner::call::{CallMeta, FailureKind, record};
use crate::runner::clock::RunClock;
use crate::runner::policy::Usage;
use crate::runner::queues::run_prefix;
use crate::runner::target::is_fixed_key;
use sqsprobe_core::evidence::Masker;
use sqsprobe_core::evidence::format::{Phase, Record};
use tokio::sync::mpsc;

/// Why a run could not start.
#[derive(Debug, thiserror::Error)]
pub(crate) enum RunError {
    #[error("failed to reach the target: {0}")]
    Unreachable(String),
    #[error("the target refused this run's credentials or permissions: {0}; nothing was run")]
    CredentialsRefused(String),
}

/// Checks that the target answers (a ListQueues limited to this run's prefix, which matches
/// nothing yet) before any case creates a queue, so a wrong endpoint is one clear error rather
/// than one per case.
pub(crate) async fn preflight(
    client: &aws_sdk_sqs::Client,
    clock: RunClock,
    run_id: &str,
    usage: &Usage,
    events: &mpsc::UnboundedSender<Record>,
) -> Result<Masker, RunError> {
    let mut masker = Masker::new();
    let meta = CallMeta {
        run_id: run_id.to_string(),
        case: String::new(),
        phase: Phase::Setup,
        step: None,
        line: None,
        action: "ListQueues",
        attempt: None,
        queue: None,
        wait: None,
        trial: None,
        label: None,
        region: None,
        clock,
        wire: None,
    };
    let prefix = run_prefix(run_id);
    let mut rec = record(meta, &masker, |r| {
        client
            .list_queues()
            .queue_name_prefix(&prefix)
            .customize()
            .interceptor(r)
            .send()
    })
    .await;
    usage.add(&rec.rows);
    // The signed request names the run's credentials: from now on every output masks them.
    // The fixed, public keys of the embedded and endpoint targets are no secret.
    for credential in rec.credentials.iter().filter(|c| !is_fixed_key(c)) {
        masker.add_credential(credential);
    }
    for mut row in rec.rows.drain(..) {
        row.error_message = row.error_message.map(|m| masker.mask(&m));
        let _ = events.send(Record::Call(row));
    }
    match rec.error {
        None => Ok(masker),
        Some(err) if err.kind == FailureKind::Refused => {
            Err(RunError::CredentialsRefused(err.describe()))
        }
        Some(err) => Err(RunError::Unreachable(err.describe())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runner::target::{Protocol, TargetConfig, TargetKind, build_client};

    /// The embedded target's fixed key `sqsprobe` is public: the run's masker must
    /// not take it for a secret, or every queue name reads `<credential>-…`.
    #[tokio::test]
    async fn the_fixed_keys_are_not_masked_as_credentials() {
        let emu = sqsprobe_emulator::spawn(
            "127.0.0.1:0".parse().unwrap(),
            sqsprobe_emulator::EmulatorConfig::default(),
        )
        .await
        .unwrap();
        let (client, _) = build_client(&TargetConfig {
            kind: TargetKind::Embedded,
            endpoint_url: Some(format!("http://{}", emu.local_addr())),
            region: Some("us-east-1".into()),
            profile: None,
            protocol: Protocol::Json,
        })
        .await;
        let (events, _rx) = mpsc::unbounded_channel();
        let masker = preflight(&client, RunClock::real(), "r1", &Usage::new(None), &events)
            .await
            .expect("the emulator answers");
        let name = "sqsprobe-r1-case-q";
        assert_eq!(masker.mask(name), name);
        emu.shutdown().await;
    }
}
