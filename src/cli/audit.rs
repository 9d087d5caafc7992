//! `sqsprobe audit [...] -- COMMAND [ARGS...]`: the I/O edge of the consumer audit. It starts
//! the embedded emulator on a loopback port with the audit's observer (`audit::Recorder`),
//! creates the plan's queues (`--plan`, else one queue from the flags), sends the messages due
//! before the consumer starts, starts the consumer in a process group of its own with the
//! emulator's address in its environment, sends the rest at the plan's rate, watches the queues
//! until every message is deleted and nothing has been in flight for `--idle` (or the consumer
//! ends, or `--max-duration` passes), stops the consumer (SIGTERM to its group, SIGKILL 5 s
//! later), and writes the audit folder. The judgement is `audit::judge`, the reports
//! `audit::report`, the evidence rows `audit::recorder` as they happen.

use std::io::Write;
use std::path::Path;
use std::process::Stdio;
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::args::AuditArgs;
use super::signals::Signals;
use crate::audit::calls::SETUP_ACCESS_KEY;
use crate::audit::judge::End;
use crate::audit::plan::{Plan, QueuePlan};
use crate::audit::recorder::read_ledger;
use crate::audit::report::{self, Ended};
use crate::audit::{Recorder, judge};
use crate::emulator::{Chaos, EmulatorConfig, RunningEmulator};
use crate::evidence::EvidenceWriter;
use crate::exit_code;
use crate::runner::target::sdk_error_line;

/// The queue of an audit without a plan: one emulator per audit, so a fixed name keeps a
/// seeded audit's dice (drawn per queue) the same from one audit to the next.
const QUEUE: &str = "sqsprobe-audit";

/// The region the consumer is told, and the emulator's.
const REGION: &str = "us-east-1";

/// A plan queue's visibility timeout when its attributes set none: the flag's default.
const DEFAULT_VISIBILITY_S: &str = "10";

/// How long a consumer has between SIGTERM and SIGKILL.
const GRACE: Duration = Duration::from_secs(5);

/// How often the queues are looked at.
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
    let plan = match load_plan(&args) {
        Ok(plan) => plan,
        Err(code) => return code,
    };
    if args.trials == 1 {
        return match audit_once(&args, &plan, &run_id, &dir, args.seed, &mut signals).await {
            Ok((audit, ended)) => exit(&[(audit, ended)]),
            Err(code) => code,
        };
    }
    // Trials: each a fresh emulator, queue and consumer, seeded seed, seed + 1, ...
    let base = args.seed.or(args.chaos.and_then(|c| c.seed)).unwrap_or(0);
    let mut done = Vec::new();
    for k in 0..args.trials {
        let seed = base + u64::from(k);
        let trial_dir = dir.join(format!("trial-{}", k + 1));
        match audit_once(&args, &plan, &run_id, &trial_dir, Some(seed), &mut signals).await {
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

/// The plan: `--plan`'s file (its problems printed at their lines, exit 1), else one queue
/// from the flags.
fn load_plan(args: &AuditArgs) -> Result<Plan, i32> {
    let Some(path) = &args.plan else {
        return Ok(Plan::single(
            QUEUE,
            args.messages,
            args.fifo,
            args.groups,
            args.visibility_timeout,
        ));
    };
    let shown = path.display().to_string();
    let bytes = std::fs::read(path).map_err(|e| {
        say(format_args!("failed to read the plan {shown}: {e}"));
        exit_code::BAD_COMMAND_LINE
    })?;
    let source = match crate::suite::utf8_text(&shown, &bytes) {
        Ok(s) => s.to_string(),
        Err(d) => {
            let _ = writeln!(std::io::stderr(), "{}", d.one_line());
            return Err(exit_code::BAD_COMMAND_LINE);
        }
    };
    crate::audit::parse_plan(&shown, &source).map_err(|diags| {
        let _ = write!(
            std::io::stderr(),
            "{}",
            crate::suite::render_all(&diags, &source)
        );
        exit_code::BAD_COMMAND_LINE
    })
}

/// The exit code of the audits: 4 when one found something definite (or ended judged with a
/// finding), else 5 when one could not conclude or could not see the work (no ledger), else 0:
/// never a clean exit without proof of work.
fn exit(done: &[(crate::audit::Audit, Ended)]) -> i32 {
    let definite = done.iter().any(|(audit, ended)| {
        audit
            .findings
            .iter()
            .any(|f| f.kind != crate::audit::FindingKind::NeverAcked)
            || (ended.concluded && !audit.findings.is_empty())
    });
    if definite {
        exit_code::EXPECTATION_FAILED
    } else if done
        .iter()
        .any(|(audit, ended)| !ended.concluded || !audit.clean)
    {
        exit_code::INCONCLUSIVE
    } else {
        exit_code::OK
    }
}

/// One audit into `dir`: the emulator, the queues, the messages, the consumer, the judgement,
/// the folder's reports. `Err` is the exit code of a failure that leaves nothing to judge.
async fn audit_once(
    args: &AuditArgs,
    plan: &Plan,
    run_id: &str,
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
    let recorder = Arc::new(Recorder::new(ledger.clone(), plan.key_map()));
    match EvidenceWriter::create(&dir.join("evidence.jsonl")) {
        Ok(writer) => recorder.write_to(run_id, writer),
        Err(e) => {
            say(format_args!("failed to create evidence.jsonl: {e}"));
            return Err(exit_code::RUNTIME_ERROR);
        }
    }
    let mut chaos = args.chaos.unwrap_or_default();
    // The seed used is always recorded: `--seed`, else the spec's, else 0.
    chaos.seed = Some(seed.or(chaos.seed).unwrap_or(0));
    recorder.write_row("audit_start", &start_row(args, plan, run_id, &chaos));
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
    let client = setup_client(&url);
    let queues = match prepare(&client, plan, args.plan.as_deref()).await {
        Ok(p) => p,
        Err(e) => {
            say(e);
            emu.shutdown().await;
            return Err(exit_code::RUNTIME_ERROR);
        }
    };
    if !chaos.is_off() {
        say(format_args!("chaos on: {chaos}"));
    }
    let mut sender = Sender::new(&client, plan, &queues);
    let ended = watch(
        args,
        plan,
        &queues,
        &emu,
        &url,
        &ledger,
        &dir,
        &recorder,
        &mut sender,
        signals,
    )
    .await;
    let sent = sender.stop().await;
    let ended = match ended {
        Ok(ended) => ended,
        Err(code) => {
            emu.shutdown().await;
            return Err(code);
        }
    };
    let (mut remaining, mut dead_lettered) = (Vec::new(), Vec::new());
    for q in plan.sources() {
        remaining.extend(emu.holding(&q.queue_name()).unwrap_or_default().0);
        if let Some(dlq) = q.dead_letter_name() {
            dead_lettered.extend(emu.holding(&dlq).unwrap_or_default().0);
        }
    }
    remaining.extend(dead_lettered.iter().cloned());
    let log = recorder.log();
    let audit = judge(
        &log,
        &End {
            sent,
            remaining,
            dead_lettered,
            ledger: read_ledger(&ledger),
        },
    );
    emu.shutdown().await;
    recorder.write_row("audit_end", &end_row(&audit, &ended));
    let evidence = recorder.finish().map(|_| ()).map_err(|e| {
        format!(
            "failed to write {}: {e}",
            dir.join("evidence.jsonl").display()
        )
    });
    let write = |name: &str, text: String| {
        std::fs::write(dir.join(name), text)
            .map_err(|e| format!("failed to write {}: {e}", dir.join(name).display()))
    };
    let written = evidence
        .and_then(|()| write("audit.json", report::json(&audit, &ended)))
        .and_then(|()| write("summary.md", report::summary(&audit, &ended)))
        .and_then(|()| write("junit.xml", report::junit(&audit, &ended)))
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

/// The `audit_start` row: what was audited and how (never the consumer's arguments, which may
/// hold secrets: only its program's file name).
fn start_row(args: &AuditArgs, plan: &Plan, run_id: &str, chaos: &Chaos) -> serde_json::Value {
    let program = args
        .command
        .first()
        .map(|p| {
            Path::new(p)
                .file_name()
                .map_or(p.clone(), |f| f.to_string_lossy().into_owned())
        })
        .unwrap_or_default();
    let queues: Vec<serde_json::Value> = plan
        .queues
        .iter()
        .map(|q| {
            serde_json::json!({
                "queue": q.queue_name(),
                "fifo": q.fifo,
                "messages": q.messages,
                "before_start": q.before,
                "rate_per_s": q.rate,
                "dead_letter": q.dead_letter_name(),
                "max_receive_count": q.dead_letter,
                "output": q.output,
                "body": q.body.shape(),
                "business_key_at": q.key.written(),
            })
        })
        .collect();
    serde_json::json!({
        "format": crate::evidence::format::FORMAT,
        "run_id": run_id,
        "started_at": chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
        "program": program,
        "chaos": (!chaos.is_off()).then(|| chaos.to_string()),
        "seed": chaos.seed,
        "queues": queues,
    })
}

/// The `audit_end` row: how the consumer's run ended and what the judge found.
fn end_row(audit: &crate::audit::Audit, ended: &Ended) -> serde_json::Value {
    serde_json::json!({
        "ended_at": chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
        "how": ended.how,
        "concluded": ended.concluded,
        "exit_status": ended.exit_status,
        "clean": audit.clean,
        "counts": audit.counts,
    })
}

/// The SDK client of the audit's own set-up, signed with its own access key so that its calls
/// are told from the consumer's in the evidence.
fn setup_client(url: &str) -> aws_sdk_sqs::Client {
    let conf = aws_sdk_sqs::Config::builder()
        .behavior_version(aws_sdk_sqs::config::BehaviorVersion::latest())
        .region(aws_sdk_sqs::config::Region::new(REGION))
        .endpoint_url(url)
        .credentials_provider(aws_sdk_sqs::config::Credentials::new(
            SETUP_ACCESS_KEY,
            SETUP_ACCESS_KEY,
            None,
            None,
            "sqsprobe-audit",
        ))
        .build();
    aws_sdk_sqs::Client::from_conf(conf)
}

/// A queue of the plan as created: its URL, its dead-letter queue's, and the MessageIds sent
/// before the consumer started.
struct Created {
    url: String,
    dead_letter_url: Option<String>,
    sent: Vec<String>,
}

/// Creates the plan's queues (each dead-letter queue first) and sends the messages that go
/// before the consumer starts.
async fn prepare(
    client: &aws_sdk_sqs::Client,
    plan: &Plan,
    path: Option<&Path>,
) -> Result<Vec<Created>, String> {
    use aws_sdk_sqs::types::QueueAttributeName as Name;
    let mut out = Vec::new();
    for q in &plan.queues {
        // Where the plan wrote the attributes, for the emulator's refusal of them.
        let at = match (path, q.attributes_at) {
            (Some(p), Some(pos)) => format!("{}:{}:{}: ", p.display(), pos.line, pos.col),
            _ => String::new(),
        };
        let refused =
            |e: String| format!("{at}the emulator refused queue `{}`: {e}", q.queue_name());
        let mut dead_letter_url = None;
        let mut redrive = None;
        if let (Some(name), Some(max)) = (q.dead_letter_name(), q.dead_letter) {
            let mut create = client.create_queue().queue_name(&name);
            if q.fifo {
                create = create.attributes(Name::FifoQueue, "true");
            }
            let dlq = create
                .send()
                .await
                .map_err(|e| refused(sdk_error_line(&e)))?;
            let dlq_url = dlq.queue_url().unwrap_or_default().to_string();
            let arn = client
                .get_queue_attributes()
                .queue_url(&dlq_url)
                .attribute_names(Name::QueueArn)
                .send()
                .await
                .map_err(|e| refused(sdk_error_line(&e)))?
                .attributes()
                .and_then(|a| a.get(&Name::QueueArn).cloned())
                .unwrap_or_default();
            redrive = Some(
                serde_json::json!({"deadLetterTargetArn": arn, "maxReceiveCount": max}).to_string(),
            );
            dead_letter_url = Some(dlq_url);
        }
        let mut create = client.create_queue().queue_name(q.queue_name());
        if !q.attributes.contains_key("VisibilityTimeout") {
            create = create.attributes(Name::VisibilityTimeout, DEFAULT_VISIBILITY_S);
        }
        for (k, v) in &q.attributes {
            create = create.attributes(Name::from(k.as_str()), v);
        }
        if q.fifo {
            create = create.attributes(Name::FifoQueue, "true");
        }
        if let Some(policy) = redrive {
            create = create.attributes(Name::RedrivePolicy, policy);
        }
        let url = create
            .send()
            .await
            .map_err(|e| refused(sdk_error_line(&e)))?
            .queue_url()
            .unwrap_or_default()
            .to_string();
        let mut sent = Vec::new();
        for i in 1..=q.before {
            sent.push(send(client, q, &url, i).await?);
        }
        out.push(Created {
            url,
            dead_letter_url,
            sent,
        });
    }
    Ok(out)
}

/// Sends message `i` of queue `q`: its MessageId.
async fn send(
    client: &aws_sdk_sqs::Client,
    q: &QueuePlan,
    url: &str,
    i: u32,
) -> Result<String, String> {
    use aws_sdk_sqs::primitives::Blob;
    use aws_sdk_sqs::types::MessageAttributeValue;
    let m = q.message(i);
    let mut send = client.send_message().queue_url(url).message_body(m.body);
    for (name, data_type, value) in m.attributes {
        let attribute = MessageAttributeValue::builder().data_type(data_type);
        let attribute = match value {
            crate::audit::plan::AttributeValue::Text(s) => attribute.string_value(s),
            crate::audit::plan::AttributeValue::Bytes(b) => attribute.binary_value(Blob::new(b)),
        };
        let attribute = attribute.build().map_err(|e| e.to_string())?;
        send = send.message_attributes(name, attribute);
    }
    send = send
        .set_message_group_id(m.group_id)
        .set_message_deduplication_id(m.deduplication_id);
    let out = send.send().await.map_err(|e| {
        format!(
            "the emulator refused message {i} of queue `{}`: {}",
            q.queue_name(),
            sdk_error_line(&e)
        )
    })?;
    Ok(out.message_id().unwrap_or_default().to_string())
}

/// The messages a plan sends while the consumer runs: one task per queue at its rate, begun
/// once the consumer has started.
struct Sender {
    /// Each queue with messages held back, with its URL; emptied by [`Sender::begin`].
    held: Vec<(QueuePlan, String)>,
    client: aws_sdk_sqs::Client,
    tasks: tokio::task::JoinSet<Result<(), String>>,
    sent: Arc<std::sync::Mutex<Vec<String>>>,
}

impl Sender {
    fn new(client: &aws_sdk_sqs::Client, plan: &Plan, queues: &[Created]) -> Sender {
        let before: Vec<String> = queues.iter().flat_map(|c| c.sent.clone()).collect();
        let held = plan
            .queues
            .iter()
            .zip(queues)
            .filter(|(q, _)| q.rate.is_some() && q.before < q.messages)
            .map(|(q, c)| (q.clone(), c.url.clone()))
            .collect();
        Sender {
            held,
            client: client.clone(),
            tasks: tokio::task::JoinSet::new(),
            sent: Arc::new(std::sync::Mutex::new(before)),
        }
    }

    /// Starts sending the held-back messages: the first one gap from now, then one a gap.
    fn begin(&mut self) {
        for (q, url) in std::mem::take(&mut self.held) {
            let Some(gap) = q.gap() else {
                continue;
            };
            let (client, sent) = (self.client.clone(), self.sent.clone());
            self.tasks.spawn(async move {
                let mut tick = tokio::time::interval_at(tokio::time::Instant::now() + gap, gap);
                for i in q.before + 1..=q.messages {
                    tick.tick().await;
                    let id = send(&client, &q, &url, i).await?;
                    sent.lock().unwrap_or_else(|e| e.into_inner()).push(id);
                }
                Ok(())
            });
        }
    }

    /// Whether every message has been sent; a send that failed is said once and ends its
    /// queue's sending.
    fn done(&mut self) -> bool {
        if !self.held.is_empty() {
            return false;
        }
        while let Some(joined) = self.tasks.try_join_next() {
            if let Ok(Err(e)) = joined {
                say(e);
            }
        }
        self.tasks.is_empty()
    }

    /// Stops what is still sending: every MessageId sent, in send order.
    async fn stop(mut self) -> Vec<String> {
        self.tasks.abort_all();
        while let Some(joined) = self.tasks.join_next().await {
            if let Ok(Err(e)) = joined {
                say(e);
            }
        }
        std::mem::take(&mut *self.sent.lock().unwrap_or_else(|e| e.into_inner()))
    }
}

/// Starts the consumer and watches the queues until the audit can end; stops the consumer.
#[allow(clippy::too_many_arguments)]
async fn watch(
    args: &AuditArgs,
    plan: &Plan,
    queues: &[Created],
    emu: &RunningEmulator,
    url: &str,
    ledger: &Path,
    dir: &Path,
    recorder: &Recorder,
    sender: &mut Sender,
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
        .env("AWS_REGION", REGION)
        .env("AWS_DEFAULT_REGION", REGION)
        .env("AWS_ACCESS_KEY_ID", "sqsprobe-audit")
        .env("AWS_SECRET_ACCESS_KEY", "sqsprobe-audit")
        .env_remove("AWS_SESSION_TOKEN")
        .env_remove("AWS_PROFILE")
        .env("SQSPROBE_QUEUE_URL", &queues[0].url)
        .env("SQSPROBE_LEDGER", ledger)
        .env(
            "SQSPROBE_LEDGER_URL",
            format!("{url}{}", crate::emulator::audit::LEDGER_PATH),
        )
        .stdin(Stdio::null())
        .stdout(Stdio::from(log.0))
        .stderr(Stdio::from(log.1))
        .process_group(0)
        .kill_on_drop(true);
    for (q, c) in plan.queues.iter().zip(queues) {
        command.env(q.env_name(), &c.url);
        if let Some(dlq) = &c.dead_letter_url {
            command.env(q.dead_letter_env_name(), dlq);
        }
    }
    let mut child = command.spawn().map_err(|e| {
        say(format_args!(
            "the consumer could not start ({program}): {e}"
        ));
        exit_code::RUNTIME_ERROR
    })?;
    // The held-back messages go from here on: after the consumer has started, never before.
    recorder.write_row(
        "consumer_start",
        &serde_json::json!({
            "started_at": chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
        }),
    );
    sender.begin();
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
        // Settled: everything sent, no source queue holds a message, and nothing is in flight
        // anywhere (a dead-letter queue may keep what it received).
        let (mut waiting, mut in_flight) = (0, 0);
        for q in plan.sources() {
            let (stored, (_, flying, _)) = emu.holding(&q.queue_name()).unwrap_or_default();
            waiting += stored.len();
            in_flight += flying;
            if let Some(dlq) = q.dead_letter_name() {
                in_flight += emu.holding(&dlq).unwrap_or_default().1.1;
            }
        }
        if waiting == 0 && in_flight == 0 && sender.done() {
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
                    "stopped at --max-duration {} with {waiting} message(s) still on the queue{}",
                    crate::duration::format(args.max_duration),
                    if plan.queues.len() > 1 { "s" } else { "" }
                ),
                concluded: false,
                exit_status: None,
            };
        }
    };
    stop(&mut child).await;
    Ok(ended)
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
