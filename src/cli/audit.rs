//! `sqsprobe audit [...] -- COMMAND [ARGS...]`: the I/O edge of the consumer audit. It starts
//! the embedded emulator on a loopback port with the audit's observer (`audit::Recorder`),
//! creates the queue, sends the messages, starts the consumer in a process group of its own
//! with the emulator's address in its environment, watches the queue until every message is
//! deleted and nothing has been in flight for `--idle` (or the consumer ends, or
//! `--max-duration` passes), stops the consumer (SIGTERM to its group, SIGKILL 5 s later), and
//! writes the audit folder. The judgement is `audit::judge`, the reports `audit::report`.

use std::io::Write;
use std::path::Path;
use std::process::Stdio;
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::args::AuditArgs;
use super::signals::Signals;
use crate::audit::judge::End;
use crate::audit::recorder::read_ledger;
use crate::audit::report::{self, Ended};
use crate::audit::{Recorder, judge};
use crate::emulator::{EmulatorConfig, RunningEmulator};
use crate::exit_code;
use crate::runner::target::{Protocol, TargetConfig, TargetKind, build_client};

/// The queue every audit uses: one emulator per audit, so a fixed name keeps a seeded audit's
/// dice (drawn per queue) the same from one audit to the next.
const QUEUE: &str = "sqsprobe-audit";

/// How long a consumer has between SIGTERM and SIGKILL.
const GRACE: Duration = Duration::from_secs(5);

/// How often the queue is looked at.
const TICK: Duration = Duration::from_millis(100);

fn say(line: impl std::fmt::Display) {
    let _ = writeln!(std::io::stderr(), "sqsprobe: {line}");
}

/// Runs the command and returns the process exit code.
pub async fn run(args: AuditArgs) -> i32 {
    let mut signals = Signals::new();
    let run_id = args
        .run_id
        .clone()
        .unwrap_or_else(crate::runner::new_run_id);
    let dir = args.out.join(&run_id);
    if dir.join("audit.json").exists() || dir.join("trials.json").exists() {
        say(format_args!(
            "{} already holds an audit; a run id is never reused",
            dir.display()
        ));
        return exit_code::BAD_COMMAND_LINE;
    }
    if args.trials == 1 {
        return match audit_once(&args, &dir, args.seed, &mut signals).await {
            Ok((audit, ended)) => exit(&[(audit, ended)]),
            Err(code) => code,
        };
    }
    // Trials: each a fresh emulator, queue and consumer, seeded seed, seed + 1, ...
    let base = args.seed.or(args.chaos.map(|c| c.seed)).unwrap_or(0);
    let mut done = Vec::new();
    for k in 0..args.trials {
        let seed = base + u64::from(k);
        let trial_dir = dir.join(format!("trial-{}", k + 1));
        match audit_once(&args, &trial_dir, Some(seed), &mut signals).await {
            Ok(result) => done.push(result),
            Err(code) => return code,
        }
    }
    let rates = crate::audit::report::rates(&done, args.trials);
    let _ = std::io::stdout().write_all(rates.terminal().as_bytes());
    if let Err(e) = std::fs::write(dir.join("trials.json"), rates.json()) {
        say(format_args!("failed to write trials.json: {e}"));
        return exit_code::RUNTIME_ERROR;
    }
    exit(&done)
}

/// The exit code of the audits: 4 when one found something definite (or ended judged and not
/// clean), else 5 when one could not conclude, else 0.
fn exit(done: &[(crate::audit::Audit, Ended)]) -> i32 {
    let definite = done.iter().any(|(audit, ended)| {
        audit
            .findings
            .iter()
            .any(|f| f.kind != crate::audit::FindingKind::NeverAcked)
            || (ended.concluded && !audit.clean)
    });
    if definite {
        exit_code::EXPECTATION_FAILED
    } else if done.iter().any(|(_, ended)| !ended.concluded) {
        exit_code::INCONCLUSIVE
    } else {
        exit_code::OK
    }
}

/// One audit into `dir`: the emulator, the queue, the messages, the consumer, the judgement,
/// the folder's reports. `Err` is the exit code of a failure that leaves nothing to judge.
async fn audit_once(
    args: &AuditArgs,
    dir: &Path,
    seed: Option<u64>,
    signals: &mut Signals,
) -> Result<(crate::audit::Audit, Ended), i32> {
    if let Err(e) = std::fs::create_dir_all(dir) {
        say(format_args!("failed to create {}: {e}", dir.display()));
        return Err(exit_code::RUNTIME_ERROR);
    }
    let dir = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
    let ledger = dir.join("ledger.txt");
    let recorder = Arc::new(Recorder::new(ledger.clone()));
    let mut chaos = args.chaos.unwrap_or_default();
    if let Some(seed) = seed {
        chaos.seed = seed;
    }
    let config = EmulatorConfig {
        chaos,
        audit: Some(recorder.clone()),
        strict_cooldowns: false,
        ..EmulatorConfig::default()
    };
    let emu = match crate::emulator::spawn(([127, 0, 0, 1], 0).into(), config).await {
        Ok(emu) => emu,
        Err(e) => {
            say(format_args!("the emulator failed to start: {e}"));
            return Err(exit_code::RUNTIME_ERROR);
        }
    };
    let url = emu.endpoint_url();
    let (queue_url, sent) = match prepare(&url, args).await {
        Ok(p) => p,
        Err(e) => {
            say(format_args!("the emulator failed: {e}"));
            emu.shutdown().await;
            return Err(exit_code::RUNTIME_ERROR);
        }
    };
    if !chaos.is_off() {
        say(format_args!("chaos on: {chaos}"));
    }
    let ended = match watch(args, &emu, &url, &queue_url, &ledger, &dir, signals).await {
        Ok(ended) => ended,
        Err(code) => {
            emu.shutdown().await;
            return Err(code);
        }
    };
    let (remaining, _) = emu.holding(queue_name(args)).unwrap_or_default();
    let log = recorder.log();
    let audit = judge(
        &log,
        &End {
            sent,
            remaining,
            ledger: read_ledger(&ledger),
        },
    );
    emu.shutdown().await;
    let write = |name: &str, text: String| {
        std::fs::write(dir.join(name), text)
            .map_err(|e| format!("failed to write {}: {e}", dir.join(name).display()))
    };
    let written = write("audit.json", report::json(&audit, &ended))
        .and_then(|()| write("summary.md", report::summary(&audit, &ended)))
        .and_then(|()| write("junit.xml", report::junit(&audit, &ended)))
        .and_then(|()| write("audit.jsonl", events(&log)))
        .and_then(|()| {
            write(
                "report.html",
                crate::audit::html::render(&audit, &log, &ended),
            )
        });
    let mut stdout = std::io::stdout();
    let _ =
        stdout.write_all(report::terminal(&audit, &ended, &dir.display().to_string()).as_bytes());
    let _ = stdout.flush();
    if let Err(e) = written {
        say(e);
        return Err(exit_code::RUNTIME_ERROR);
    }
    Ok((audit, ended))
}

/// Creates the queue and sends the messages: the queue's URL, and the MessageIds in send order.
async fn prepare(url: &str, args: &AuditArgs) -> Result<(String, Vec<String>), String> {
    let (client, _) = build_client(&TargetConfig {
        kind: TargetKind::Embedded,
        endpoint_url: Some(url.to_string()),
        region: Some("us-east-1".into()),
        profile: None,
        protocol: Protocol::Json,
    })
    .await;
    let name = if args.fifo {
        format!("{QUEUE}.fifo")
    } else {
        QUEUE.to_string()
    };
    let mut create = client.create_queue().queue_name(&name).attributes(
        aws_sdk_sqs::types::QueueAttributeName::VisibilityTimeout,
        args.visibility_timeout.as_secs().max(1).to_string(),
    );
    if args.fifo {
        create = create.attributes(aws_sdk_sqs::types::QueueAttributeName::FifoQueue, "true");
    }
    let queue_url = create
        .send()
        .await
        .map_err(|e| crate::runner::target::sdk_error_line(&e))?
        .queue_url()
        .unwrap_or_default()
        .to_string();
    let mut sent = Vec::new();
    for i in 1..=args.messages {
        let body = format!(r#"{{"business_key": "b-{i}", "seq": {i}}}"#);
        let mut send = client
            .send_message()
            .queue_url(&queue_url)
            .message_body(body);
        if args.fifo {
            send = send
                .message_group_id(format!("g-{}", i % args.groups))
                .message_deduplication_id(format!("b-{i}"));
        }
        let out = send
            .send()
            .await
            .map_err(|e| crate::runner::target::sdk_error_line(&e))?;
        sent.push(out.message_id().unwrap_or_default().to_string());
    }
    Ok((queue_url, sent))
}

/// Starts the consumer and watches the queue until the audit can end; stops the consumer.
async fn watch(
    args: &AuditArgs,
    emu: &RunningEmulator,
    url: &str,
    queue_url: &str,
    ledger: &Path,
    dir: &Path,
    signals: &mut Signals,
) -> Result<Ended, i32> {
    let log = std::fs::File::create(dir.join("consumer.log"))
        .and_then(|f| Ok((f.try_clone()?, f)))
        .map_err(|e| {
            say(format_args!("failed to create consumer.log: {e}"));
            exit_code::RUNTIME_ERROR
        })?;
    let (program, rest) = args
        .command
        .split_first()
        .ok_or(exit_code::BAD_COMMAND_LINE)?;
    let mut command = tokio::process::Command::new(program);
    command
        .args(rest)
        .env("AWS_ENDPOINT_URL", url)
        .env("AWS_ENDPOINT_URL_SQS", url)
        .env("AWS_REGION", "us-east-1")
        .env("AWS_DEFAULT_REGION", "us-east-1")
        .env("AWS_ACCESS_KEY_ID", "sqsprobe-audit")
        .env("AWS_SECRET_ACCESS_KEY", "sqsprobe-audit")
        .env_remove("AWS_SESSION_TOKEN")
        .env_remove("AWS_PROFILE")
        .env("SQSPROBE_QUEUE_URL", queue_url)
        .env("SQSPROBE_LEDGER", ledger)
        .stdin(Stdio::null())
        .stdout(Stdio::from(log.0))
        .stderr(Stdio::from(log.1))
        .process_group(0)
        .kill_on_drop(true);
    let mut child = command.spawn().map_err(|e| {
        say(format_args!(
            "the consumer could not start ({program}): {e}"
        ));
        exit_code::RUNTIME_ERROR
    })?;
    let started = Instant::now();
    let mut idle_since: Option<Instant> = None;
    let ended = loop {
        tokio::select! {
            name = signals.next() => {
                stop(&mut child).await;
                say(format_args!("{name}: interrupted; the consumer was stopped, nothing is judged"));
                return Err(exit_code::INTERRUPTED);
            }
            () = tokio::time::sleep(TICK) => {}
        }
        if let Ok(Some(status)) = child.try_wait() {
            let code = status.code();
            let how = match code {
                Some(0) => "exited 0".to_string(),
                Some(c) => format!("crashed: exit {c}"),
                None => "was killed by a signal".to_string(),
            };
            break Ended {
                how,
                concluded: true,
                exit_status: code,
            };
        }
        let (remaining, (_, in_flight, _)) = emu.holding(queue_name(args)).unwrap_or_default();
        if remaining.is_empty() && in_flight == 0 {
            let since = *idle_since.get_or_insert_with(Instant::now);
            if since.elapsed() >= args.idle {
                break Ended {
                    how: format!(
                        "stopped once every message was deleted and nothing was in flight for {}",
                        crate::duration::format(args.idle)
                    ),
                    concluded: true,
                    exit_status: None,
                };
            }
        } else {
            idle_since = None;
        }
        if started.elapsed() >= args.max_duration {
            break Ended {
                how: format!(
                    "stopped at --max-duration {} with {} message(s) still on the queue",
                    crate::duration::format(args.max_duration),
                    remaining.len()
                ),
                concluded: false,
                exit_status: None,
            };
        }
    };
    stop(&mut child).await;
    Ok(ended)
}

fn queue_name(args: &AuditArgs) -> &'static str {
    if args.fifo {
        "sqsprobe-audit.fifo"
    } else {
        QUEUE
    }
}

/// SIGTERM to the consumer's process group, SIGKILL after [`GRACE`].
async fn stop(child: &mut tokio::process::Child) {
    if matches!(child.try_wait(), Ok(Some(_))) {
        return;
    }
    let group = child
        .id()
        .and_then(|id| i32::try_from(id).ok())
        .and_then(rustix::process::Pid::from_raw);
    if let Some(group) = group {
        let _ = rustix::process::kill_process_group(group, rustix::process::Signal::TERM);
    }
    if tokio::time::timeout(GRACE, child.wait()).await.is_err() {
        if let Some(group) = group {
            let _ = rustix::process::kill_process_group(group, rustix::process::Signal::KILL);
        }
        let _ = child.kill().await;
    }
}

/// `audit.jsonl`: every delivery and acknowledgement, digest-only (no body, no handle).
fn events(log: &crate::audit::Log) -> String {
    let mut out = String::new();
    for d in &log.deliveries {
        let row = serde_json::json!({
            "type": "delivery",
            "data": {
                "message_id": d.message_id,
                "business_key": crate::evidence::business_key(&d.body),
                "attempt_nonce": d.nonce,
                "body_digest": crate::evidence::sha256_hex(&d.body),
                "at_ms": d.at_ms,
                "lease_until_ms": d.lease_until_ms,
            }
        });
        out.push_str(&row.to_string());
        out.push('\n');
    }
    for a in &log.acks {
        let (op, timeout) = match a.ack.op {
            crate::emulator::audit::AckOp::Delete => ("delete", None),
            crate::emulator::audit::AckOp::ChangeVisibility { timeout_s } => {
                ("change_visibility", Some(timeout_s))
            }
        };
        let row = serde_json::json!({
            "type": "ack",
            "data": {
                "op": op,
                "visibility_timeout": timeout,
                "attempt_nonce": a.ack.handle.map(|(_, n)| n),
                "handle_digest": a.ack.handle_digest,
                "business_key": a.business_key,
                "commits_at_ack": a.commits_at_ack,
                "at_ms": a.ack.at_ms,
            }
        });
        out.push_str(&row.to_string());
        out.push('\n');
    }
    out
}
