//! The audit's runner: one audit (or `--trials N` of them) from start to folder. It starts
//! the embedded emulator on a loopback port with the audit's observer ([`Recorder`]), creates
//! the plan's queues and sends the messages due before the consumer starts ([`setup`]),
//! starts the consumer in a process group of its own with the emulator's address in its
//! environment ([`consumer`]), sends the rest at the plan's rate ([`sender`]), watches the
//! queues until every message is deleted and nothing has been in flight for `idle` (or the
//! consumer ends, or `max_duration` passes), stops the consumer, judges ([`judge`]) and writes
//! the audit folder ([`report`], [`html`]).
//!
//! Under `--nemesis` ([`nemesis`]) the observer strikes the consumer at the points drawn from
//! the audit's seed; the watch starts the same command again after a kill (`SQSPROBE_START`
//! counts the starts) and continues a paused one once its attempt's lease has ended, and the
//! audit does not end while the consumer is down or paused.
//!
//! [`setup`]: super::setup
//! [`consumer`]: super::consumer
//! [`sender`]: super::sender
//! [`report`]: super::report
//! [`html`]: super::html
//! [`nemesis`]: super::nemesis

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::console::say;
use super::consumer::{Consumer, Launch};
use super::error::{AuditEnd, AuditError};
use super::history;
use super::judge::{Audit, judge};
use super::lambda::{Mapping, NotStarted};
use super::log::End;
use super::nemesis::{Act, ActKind, Live, Nemesis, Record};
use super::plan::Plan;
use super::recorder::{Recorder, read_ledger};
use super::report::{self, Ended};
use super::sender::Sender;
use super::setup::{self, Created, REGION};
use sqsprobe_core::evidence::EvidenceWriter;
use sqsprobe_emulator::{Chaos, EmulatorConfig, RunningEmulator};

/// How often the queues are looked at.
const TICK: Duration = Duration::from_millis(100);

/// What an audit is asked to do: the command's settings, parsed.
#[derive(Debug, Clone)]
pub(crate) struct Options {
    /// The consumer: a program and its arguments.
    pub command: Vec<String>,
    /// The plan's file, when it came from one (a refusal names its line).
    pub plan_path: Option<PathBuf>,
    pub chaos: Option<Chaos>,
    pub seed: Option<u64>,
    /// `--nemesis`: kills and pauses of the consumer.
    pub nemesis: Option<Nemesis>,
    pub trials: u32,
    /// The audit ends once every message is deleted and nothing has been in flight this long.
    pub idle: Duration,
    pub max_duration: Duration,
    /// The audit folder: `<out>/<run id>`.
    pub out: PathBuf,
    pub run_id: String,
    /// `--lambda`: the consumer is a Lambda function's runtime, fed by an event source mapping.
    pub lambda: Option<super::lambda::Settings>,
}

/// What stops an audit from outside (the command's signals): each `next` is the name of the
/// next one to arrive.
pub(crate) trait Interrupts {
    /// Waits for the next interruption and names it (`SIGTERM`).
    fn next(&mut self) -> impl std::future::Future<Output = &'static str>;
}

/// An audit that ended without a judgement: a signal, or a failure.
enum Stop {
    Interrupted,
    Failed(AuditError),
}

impl From<AuditError> for Stop {
    fn from(e: AuditError) -> Self {
        Stop::Failed(e)
    }
}

/// Runs the audit (each trial of it): judged, interrupted, or what kept it from a judgement.
pub(crate) async fn run(
    options: &Options,
    plan: &Plan,
    interrupts: &mut impl Interrupts,
) -> Result<AuditEnd, AuditError> {
    let dir = options.out.join(&options.run_id);
    if dir.join("audit.json").exists() || dir.join("trials.json").exists() {
        return Err(AuditError::RunIdReused { dir });
    }
    if options.trials == 1 {
        return match audit_once(options, plan, &dir, options.seed, interrupts).await {
            Ok((audit, ended)) => Ok(exit(&[(audit, ended)])),
            Err(Stop::Interrupted) => Ok(AuditEnd::Interrupted),
            Err(Stop::Failed(e)) => Err(e),
        };
    }
    // Trials: each a fresh emulator, queue and consumer, seeded seed, seed + 1, ...
    let base = options
        .seed
        .or(options.chaos.and_then(|c| c.seed))
        .unwrap_or(0);
    let mut done = Vec::new();
    for k in 0..options.trials {
        let seed = base + u64::from(k);
        let trial_dir = dir.join(format!("trial-{}", k + 1));
        match audit_once(options, plan, &trial_dir, Some(seed), interrupts).await {
            Ok(result) => done.push(result),
            Err(Stop::Interrupted) => return Ok(AuditEnd::Interrupted),
            Err(Stop::Failed(e)) => return Err(e),
        }
    }
    let rates = report::rates(&done, options.trials);
    let _ = std::io::stdout().write_all(rates.terminal().as_bytes());
    std::fs::write(dir.join("trials.json"), rates.json())
        .map_err(|e| AuditError::Files(format!("failed to write trials.json: {e}")))?;
    Ok(exit(&done))
}

/// The audits' judgement (see [`report::exit_code`]).
fn exit(done: &[(Audit, Ended)]) -> AuditEnd {
    let outcomes: Vec<(&Audit, bool, bool)> = done
        .iter()
        .map(|(audit, ended)| (audit, ended.concluded, ended.crashed))
        .collect();
    AuditEnd::Judged(report::exit_code(&outcomes))
}

/// One audit into `dir`: the emulator, the queues, the messages, the consumer, the judgement,
/// the folder's reports. `Err`: a signal or a failure left nothing to judge.
async fn audit_once(
    options: &Options,
    plan: &Plan,
    dir: &Path,
    seed: Option<u64>,
    interrupts: &mut impl Interrupts,
) -> Result<(Audit, Ended), Stop> {
    std::fs::create_dir_all(dir).map_err(|source| AuditError::CreateFolder {
        path: dir.to_path_buf(),
        source,
    })?;
    let dir = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
    let ledger = dir.join("ledger.txt");
    let keys = plan.key_map();
    let mut chaos = options.chaos.unwrap_or_default();
    // The seed used is always recorded: `--seed`, else the spec's, else 0.
    chaos.seed = Some(seed.or(chaos.seed).unwrap_or(0));
    let messages = plan.queues.iter().map(|q| q.messages).sum();
    let nemesis = options.nemesis.map(|n| {
        let points = n.draw(chaos.seed.unwrap_or(0), messages);
        let record = Record {
            spec: n.to_string(),
            points: points.clone(),
            acts: Vec::new(),
        };
        (Arc::new(Live::new(points)), record)
    });
    let mut recorder = Recorder::new(ledger.clone(), keys);
    if let Some((live, _)) = &nemesis {
        recorder = recorder.with_nemesis(live.clone());
    }
    let recorder = Arc::new(recorder);
    match EvidenceWriter::create(&dir.join("evidence.jsonl")) {
        Ok(writer) => recorder.write_to(&options.run_id, writer),
        Err(source) => {
            return Err(AuditError::CreateFile {
                name: "evidence.jsonl",
                source,
            }
            .into());
        }
    }
    let record = nemesis.as_ref().map(|(_, r)| r);
    recorder.write_row("audit_start", &start_row(options, plan, &chaos, record));
    let config = EmulatorConfig {
        chaos,
        audit: Some(recorder.clone()),
        strict_cooldowns: false,
        ..EmulatorConfig::default()
    };
    let emu = sqsprobe_emulator::spawn(([127, 0, 0, 1], 0).into(), config)
        .await
        .map_err(AuditError::Emulator)?;
    let url = emu.endpoint_url();
    let client = setup::client(&url);
    let queues = match setup::prepare(&client, plan, options.plan_path.as_deref()).await {
        Ok(p) => p,
        Err(e) => {
            emu.shutdown().await;
            return Err(AuditError::Setup(e).into());
        }
    };
    if !chaos.is_off() {
        say(format_args!("chaos on: {chaos}"));
    }
    if let Some((_, record)) = &nemesis {
        say(format_args!("nemesis on: {}", record.spec));
    }
    let mapping = match options.lambda {
        Some(settings) => {
            match Mapping::start(settings, &url, &queues[0].url, recorder.clone()).await {
                Ok(m) => Some(m),
                Err(e) => {
                    emu.shutdown().await;
                    return Err(match e {
                        NotStarted::Refused(m) => AuditError::LambdaRefused(m),
                        NotStarted::Failed(m) => AuditError::LambdaFailed(m),
                    }
                    .into());
                }
            }
        }
        None => None,
    };
    let mut sender = Sender::new(&client, plan, &queues);
    let mut launch = launch(options, plan, &queues, &url, &ledger, &dir)?;
    if let (Some(m), Some(settings)) = (&mapping, options.lambda) {
        launch.env.extend(m.env(&settings));
        // The function's other execution environments, one per concurrent batch beyond the
        // first (the audit's consumer, started by the watch).
        if let Err(source) = m.start_environments(&launch) {
            emu.shutdown().await;
            return Err(AuditError::Start {
                what: "function",
                program: launch.program.clone(),
                source,
            }
            .into());
        }
    }
    let watched = Watched {
        options,
        plan,
        emu: &emu,
        recorder: &recorder,
        nemesis: nemesis.as_ref().map(|(live, _)| &**live),
        lambda: mapping.as_ref(),
    };
    let ended = watched.watch(&launch, &mut sender, interrupts).await;
    let sent = sender.stop().await;
    // The mapping stopped, its facts are the last Lambda row: the invocations are in the
    // evidence already, one row each as they ended.
    if let (Some(m), Some(settings)) = (mapping, options.lambda) {
        let init_errors = m.init_errors();
        let source = m.source.clone();
        m.stop().await;
        let facts = super::lambda::report::facts(settings, &source, init_errors);
        recorder.write_row("lambda_facts", &facts);
    }
    let mut ended = match ended {
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
    emu.shutdown().await;
    recorder.write_facts(&End {
        sent,
        remaining,
        dead_lettered,
        ledger: read_ledger(&ledger),
        queues: plan
            .queues
            .iter()
            .flat_map(|q| std::iter::once(q.queue_name()).chain(q.dead_letter_name()))
            .collect(),
    });
    // The verdict is judged from the history as the file holds it, not from memory: what
    // `sqsprobe check` reads later is what was judged now.
    let evidence_path = dir.join("evidence.jsonl");
    let history = match recorder.write_failure() {
        Some(e) => Err(format!("failed to write {}: {e}", evidence_path.display())),
        None => std::fs::read_to_string(&evidence_path)
            .map_err(|e| format!("failed to read {} back: {e}", evidence_path.display()))
            .and_then(|text| {
                history::read(&text)
                    .map_err(|e| format!("{} does not read back: {e}", evidence_path.display()))
            }),
    };
    let history::History {
        log,
        end,
        consumer_calls,
        lambda: lambda_history,
    } = match history {
        Ok(read) => read,
        Err(e) => {
            let _ = recorder.finish();
            return Err(AuditError::Files(e).into());
        }
    };
    if let Some((_, record)) = nemesis {
        let record = Record {
            acts: log.nemesis.clone(),
            ..record
        };
        // A nemesis that never struck tried nothing: the audit cannot say the consumer
        // stood up to it.
        if record.strikes() == 0 {
            ended.concluded = false;
            ended.how = format!("{}; the nemesis never struck", ended.how);
        }
        ended.nemesis = Some(record);
    }
    let mut audit = judge(&log, &end);
    let lambda_json = match &lambda_history {
        Some((invocations, facts)) => {
            if !facts.init_errors.is_empty() {
                ended.concluded = false;
                ended.how = format!(
                    "{}; the function's runtime reported an init error ({})",
                    ended.how,
                    facts.init_errors.join(", ")
                );
            }
            Some(super::lambda::report::apply(&mut audit, invocations, facts))
        }
        None => None,
    };
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
            let mut page = super::html::render(&audit, &log, &ended, &consumer_calls);
            if let Some((invocations, _)) = &lambda_history {
                let lanes = super::lambda::html::section(invocations);
                page = page.replacen("</body></html>", &format!("{lanes}</body></html>"), 1);
            }
            write("report.html", page)
        })
        .and_then(|()| match lambda_json {
            Some(text) => write("lambda.json", text),
            None => Ok(()),
        });
    let mut stdout = std::io::stdout();
    let _ =
        stdout.write_all(report::terminal(&audit, &ended, &dir.display().to_string()).as_bytes());
    let _ = stdout.flush();
    written.map_err(AuditError::Files)?;
    Ok((audit, ended))
}

/// How the consumer is started: the command, with the emulator's address, the test
/// credentials, the queues and the ledger in its environment.
fn launch(
    options: &Options,
    plan: &Plan,
    queues: &[Created],
    url: &str,
    ledger: &Path,
    dir: &Path,
) -> Result<Launch, AuditError> {
    let (program, rest) = options.command.split_first().ok_or(AuditError::NoCommand)?;
    let mut env: Vec<(String, String)> = [
        ("AWS_ENDPOINT_URL", url),
        ("AWS_ENDPOINT_URL_SQS", url),
        ("AWS_REGION", REGION),
        ("AWS_DEFAULT_REGION", REGION),
        ("AWS_ACCESS_KEY_ID", "sqsprobe-audit"),
        ("AWS_SECRET_ACCESS_KEY", "sqsprobe-audit"),
        ("SQSPROBE_QUEUE_URL", &queues[0].url),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    env.push(("SQSPROBE_LEDGER".into(), ledger.display().to_string()));
    env.push((
        "SQSPROBE_LEDGER_URL".into(),
        format!("{url}{}", sqsprobe_emulator::audit::LEDGER_PATH),
    ));
    for (q, c) in plan.queues.iter().zip(queues) {
        env.push((q.env_name(), c.url.clone()));
        if let Some(dlq) = &c.dead_letter_url {
            env.push((q.dead_letter_env_name(), dlq.clone()));
        }
    }
    let log = dir.join("consumer.log");
    std::fs::File::create(&log).map_err(|source| AuditError::CreateFile {
        name: "consumer.log",
        source,
    })?;
    Ok(Launch {
        program: program.clone(),
        args: rest.to_vec(),
        env,
        env_remove: vec!["AWS_SESSION_TOKEN", "AWS_PROFILE"],
        log,
    })
}

/// What the watch over a running consumer reads.
struct Watched<'a> {
    options: &'a Options,
    plan: &'a Plan,
    emu: &'a RunningEmulator,
    recorder: &'a Recorder,
    nemesis: Option<&'a Live>,
    /// Under `--lambda`: the mapping, which resets the consumer (the first execution
    /// environment) after a timeout.
    lambda: Option<&'a Mapping>,
}

impl Watched<'_> {
    /// Starts the consumer and watches the queues until the audit can end, starting it again
    /// after each nemesis kill; stops the consumer.
    async fn watch(
        &self,
        launch: &Launch,
        sender: &mut Sender,
        interrupts: &mut impl Interrupts,
    ) -> Result<Ended, Stop> {
        let mut consumer = self.start(launch)?;
        // The held-back messages go from here on: after the consumer has started, never before.
        sender.begin();
        let started = Instant::now();
        let mut idle_since: Option<Instant> = None;
        let ended = loop {
            tokio::select! {
                name = interrupts.next() => {
                    self.stand_down();
                    consumer.stop().await;
                    say(format_args!("{name}: interrupted; the consumer was stopped, nothing is judged"));
                    return Err(Stop::Interrupted);
                }
                () = tokio::time::sleep(TICK) => {}
            }
            if let Some(status) = consumer.exited() {
                // Killed by the nemesis, or reset by the mapping after a timeout: started again.
                if self.nemesis.is_some_and(Live::killed)
                    || self.lambda.is_some_and(Mapping::take_reset)
                {
                    consumer = self.start(launch)?;
                    idle_since = None;
                    continue;
                }
                let code = status.code();
                let how = match code {
                    Some(0) => "exited 0".to_string(),
                    Some(c) => format!("crashed: exit {c}"),
                    None => "was killed by a signal".to_string(),
                };
                let crashed = code != Some(0);
                let log_tail = if crashed {
                    tail(&launch.log, TAIL_LINES)
                        .iter()
                        .map(|l| self.recorder.mask(l))
                        .collect()
                } else {
                    Vec::new()
                };
                break Ended {
                    how,
                    concluded: true,
                    exit_status: code,
                    nemesis: None,
                    crashed,
                    log_tail,
                };
            }
            let mut striking = false;
            if let Some(nemesis) = self.nemesis {
                if let Some(act) = nemesis.resume_due(self.emu.now_ms()) {
                    self.recorder.act(act);
                }
                striking = nemesis.paused() || nemesis.killed();
            }
            let (waiting, in_flight) = self.holding();
            if waiting == 0 && in_flight == 0 && !striking && sender.done() {
                let since = *idle_since.get_or_insert_with(Instant::now);
                if since.elapsed() >= self.options.idle {
                    break Ended {
                        how: format!(
                            "stopped once every message was deleted and nothing was in flight for {}",
                            sqsprobe_facts::duration::format(self.options.idle)
                        ),
                        concluded: true,
                        ..Ended::default()
                    };
                }
            } else {
                idle_since = None;
            }
            if started.elapsed() >= self.options.max_duration {
                break Ended {
                    how: format!(
                        "stopped at --max-duration {} with {waiting} message(s) still on the queue{}",
                        sqsprobe_facts::duration::format(self.options.max_duration),
                        if self.plan.queues.len() > 1 { "s" } else { "" }
                    ),
                    concluded: false,
                    ..Ended::default()
                };
            }
        };
        self.stand_down();
        consumer.stop().await;
        Ok(ended)
    }

    /// No more strikes: the consumer is being stopped.
    fn stand_down(&self) {
        if let Some(nemesis) = self.nemesis {
            nemesis.stand_down();
        }
    }

    /// Starts the consumer and records it (`consumer_start`; after a kill, the nemesis's
    /// `restart` too).
    fn start(&self, launch: &Launch) -> Result<Consumer, AuditError> {
        let restart = self.nemesis.is_some_and(Live::killed);
        let start = self.nemesis.map_or(0, Live::starts) + 1;
        let consumer = launch.start(start).map_err(|source| AuditError::Start {
            what: "consumer",
            program: launch.program.clone(),
            source,
        })?;
        if let Some(nemesis) = self.nemesis {
            nemesis.started(consumer.group());
        }
        if let Some(mapping) = self.lambda {
            mapping.first_started(consumer.group());
        }
        self.recorder.write_row(
            "consumer_start",
            &serde_json::json!({
                "started_at": chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
                "start": start,
            }),
        );
        if restart {
            self.recorder.act(Act {
                act: ActKind::Restart,
                at_ms: self.emu.now_ms(),
                on: None,
                count: None,
                message_id: None,
                business_key: None,
                start: Some(start),
            });
        }
        Ok(consumer)
    }

    /// The messages the plan's source queues store, and those in flight anywhere (a
    /// dead-letter queue may keep what it received): settled is none of either.
    fn holding(&self) -> (usize, usize) {
        let (mut waiting, mut in_flight) = (0, 0);
        for q in self.plan.sources() {
            let (stored, (_, flying, _)) = self.emu.holding(&q.queue_name()).unwrap_or_default();
            waiting += stored.len();
            in_flight += flying;
            if let Some(dlq) = q.dead_letter_name() {
                in_flight += self.emu.holding(&dlq).unwrap_or_default().1.1;
            }
        }
        (waiting, in_flight)
    }
}

/// How many of the last lines of `consumer.log` a crash carries into the reports.
const TAIL_LINES: usize = 20;

/// The last `n` non-empty lines of the file at `path` (each cut at 500 characters: a line is
/// for a reader, not a dump), or none when it cannot be read.
fn tail(path: &Path, n: usize) -> Vec<String> {
    let Ok(bytes) = std::fs::read(path) else {
        return Vec::new();
    };
    let text = String::from_utf8_lossy(&bytes);
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    lines[lines.len().saturating_sub(n)..]
        .iter()
        .map(|l| l.chars().take(500).collect())
        .collect()
}

/// The `audit_start` row: what was audited and how (never the consumer's arguments, which may
/// hold secrets: only its program's file name).
fn start_row(
    options: &Options,
    plan: &Plan,
    chaos: &Chaos,
    nemesis: Option<&Record>,
) -> serde_json::Value {
    let program = options
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
        "format": sqsprobe_core::evidence::format::FORMAT,
        "run_id": options.run_id,
        "started_at": chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
        "program": program,
        "chaos": (!chaos.is_off()).then(|| chaos.to_string()),
        "seed": chaos.seed,
        "nemesis": nemesis.map(|n| serde_json::json!({"spec": n.spec, "points": n.points})),
        "queues": queues,
    })
}

/// The `audit_end` row: how the consumer's run ended and what the judge found.
fn end_row(audit: &Audit, ended: &Ended) -> serde_json::Value {
    serde_json::json!({
        "ended_at": chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
        "how": ended.how,
        "concluded": ended.concluded,
        "exit_status": ended.exit_status,
        "crashed": ended.crashed,
        "foreign_queues": audit.foreign_queues,
        "clean": audit.clean,
        "counts": audit.counts,
        "nemesis": ended.nemesis.as_ref().map(Record::line),
    })
}
