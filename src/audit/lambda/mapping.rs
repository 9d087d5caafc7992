//! The event source mapping, played against the audit's emulator as AWS documents it ("Using
//! Lambda with Amazon SQS", "Handling errors for an SQS event source in Lambda"): each of
//! `--concurrency` pollers long-polls the queue, gathers records up to the batch size or until
//! the batching window closes, invokes the function through the Runtime API
//! ([`super::runtime_api`]) with the SQS event ([`super::event`]), and then:
//! - on success deletes the batch (DeleteMessageBatch);
//! - on a function error or timeout deletes nothing: every record returns when its visibility
//!   timeout ends, and is received again (its receive count up), until the queue's redrive
//!   policy moves it to the dead-letter queue after `maxReceiveCount` receives (the emulator's
//!   redrive, as SQS's); after a timeout it also resets the execution environment (kills the
//!   runtime's process group and starts it again), as Lambda does;
//! - with `ReportBatchItemFailures` deletes all but the reported records, or nothing when the
//!   response is one AWS treats as a complete failure.
//!
//! Its SQS calls are signed with a key of its own and go through the emulator like any
//! consumer's, so the recorder sees every delivery and delete and the audit's judge reads
//! them as it reads a polling consumer's. The ledger is read at the start and the end of each
//! invocation (the same reading an acknowledgement gets), which is what the Lambda findings
//! ([`super::findings`]) are made of.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use aws_sdk_sqs::types::{DeleteMessageBatchRequestEntry, MessageSystemAttributeName};
use base64::Engine;
use tokio::sync::watch;

use super::event::{self, Disposition, Failure, Record};
use super::invocation::{Invocation, Invoked, Outcome};
use super::runtime_api::RuntimeApi;
use super::settings::Settings;
use crate::audit::consumer::{Consumer, Launch, signal_group};
use crate::audit::recorder::Recorder;
use crate::audit::setup::REGION;

/// The access key the mapping signs its calls with: its calls are a consumer's.
pub(crate) const MAPPING_ACCESS_KEY: &str = "sqsprobe-lambda-esm";

/// The function's name, in its ARN and environment.
pub(crate) const FUNCTION: &str = "sqsprobe-audit-function";

/// The longest long poll SQS allows, which the mapping uses while its batch is empty.
const LONG_POLL_S: i32 = 20;

/// The queue the mapping reads, as GetQueueAttributes tells it.
#[derive(Debug, Clone)]
pub(crate) struct Source {
    pub url: String,
    pub arn: String,
    pub fifo: bool,
    pub visibility_timeout_s: u64,
    pub dead_letter: bool,
}

/// The running mapping.
pub(crate) struct Mapping {
    /// One Runtime API per execution environment: environment `i` takes poller `i`'s batches.
    apis: Vec<Arc<RuntimeApi>>,
    environments: Arc<Environments>,
    stop: watch::Sender<bool>,
    pollers: Vec<tokio::task::JoinHandle<()>>,
    invocations: Arc<Mutex<Vec<Invocation>>>,
    pub source: Source,
}

/// The function's execution environments: the first is the audit's consumer (the runner starts
/// it, and starts it again after a reset), the others the mapping's own.
#[derive(Default)]
struct Environments {
    /// The first environment's process group, once started.
    first: Mutex<Option<i32>>,
    /// Set when the mapping reset the first environment: its exit is not a crash.
    first_reset: std::sync::atomic::AtomicBool,
    /// Environment `i`'s launch and process at `i - 1`.
    others: Mutex<Vec<(Launch, Option<Consumer>)>>,
}

impl Environments {
    /// Ends environment `i` at once (SIGKILL to its process group), as Lambda resets an
    /// execution environment after a timeout, and starts it again (the first: the runner does,
    /// on seeing it exit). Whether there was one to reset.
    fn reset(&self, i: usize) -> bool {
        if i == 0 {
            let group = *self.first.lock().unwrap_or_else(|e| e.into_inner());
            let Some(group) = group else { return false };
            self.first_reset
                .store(true, std::sync::atomic::Ordering::SeqCst);
            return signal_group(group, rustix::process::Signal::KILL);
        }
        let mut others = self.others.lock().unwrap_or_else(|e| e.into_inner());
        let Some((launch, process)) = others.get_mut(i - 1) else {
            return false;
        };
        if let Some(group) = process.as_ref().and_then(Consumer::group) {
            signal_group(group, rustix::process::Signal::KILL);
        }
        *process = launch.start(1).ok();
        true
    }
}

/// Why the mapping did not start.
#[derive(Debug)]
pub(crate) enum NotStarted {
    /// What CreateEventSourceMapping would refuse: a bad command line.
    Refused(String),
    /// The emulator or the API failed.
    Failed(String),
}

/// The SDK client of the mapping at `url`.
fn client(url: &str) -> aws_sdk_sqs::Client {
    let conf = aws_sdk_sqs::Config::builder()
        .behavior_version(aws_sdk_sqs::config::BehaviorVersion::latest())
        .region(aws_sdk_sqs::config::Region::new(REGION))
        .endpoint_url(url)
        .credentials_provider(aws_sdk_sqs::config::Credentials::new(
            MAPPING_ACCESS_KEY,
            MAPPING_ACCESS_KEY,
            None,
            None,
            "sqsprobe-lambda",
        ))
        .build();
    aws_sdk_sqs::Client::from_conf(conf)
}

impl Mapping {
    /// Reads the queue at `queue_url`, checks the settings against it as
    /// CreateEventSourceMapping does, serves the Runtime API and starts the pollers.
    pub(crate) async fn start(
        settings: Settings,
        url: &str,
        queue_url: &str,
        recorder: Arc<Recorder>,
    ) -> Result<Mapping, NotStarted> {
        let client = client(url);
        let source = source(&client, queue_url)
            .await
            .map_err(NotStarted::Failed)?;
        settings.check(source.fifo).map_err(NotStarted::Refused)?;
        settings
            .check_queue(source.visibility_timeout_s)
            .map_err(NotStarted::Refused)?;
        let arn = format!("arn:aws:lambda:{REGION}:000000000000:function:{FUNCTION}");
        let mut apis = Vec::new();
        for _ in 0..settings.concurrency {
            let api = RuntimeApi::start(&arn)
                .await
                .map_err(|e| NotStarted::Failed(format!("the Runtime API failed to start: {e}")))?;
            apis.push(Arc::new(api));
        }
        let (stop, stopped) = watch::channel(false);
        let invocations = Arc::new(Mutex::new(Vec::new()));
        let environments = Arc::new(Environments::default());
        let pollers = apis
            .iter()
            .enumerate()
            .map(|(environment, api)| {
                let poller = Poller {
                    client: client.clone(),
                    source: source.clone(),
                    settings,
                    api: api.clone(),
                    environment,
                    environments: environments.clone(),
                    recorder: recorder.clone(),
                    invocations: invocations.clone(),
                };
                let stopped = stopped.clone();
                tokio::spawn(poller.run(stopped))
            })
            .collect();
        Ok(Mapping {
            apis,
            environments,
            stop,
            pollers,
            invocations,
            source,
        })
    }

    /// The variables of the first execution environment (the audit's consumer): its Runtime
    /// API's address and what a Lambda runtime reads.
    pub(crate) fn env(&self, settings: &Settings) -> Vec<(String, String)> {
        self.env_of(0, settings)
    }

    /// The variables of execution environment `i`.
    fn env_of(&self, i: usize, settings: &Settings) -> Vec<(String, String)> {
        let timeout_s = settings.function_timeout.as_secs().max(1);
        [
            ("AWS_LAMBDA_RUNTIME_API", self.apis[i].address()),
            ("AWS_LAMBDA_FUNCTION_NAME", FUNCTION.to_string()),
            ("AWS_LAMBDA_FUNCTION_VERSION", "$LATEST".to_string()),
            ("AWS_LAMBDA_FUNCTION_MEMORY_SIZE", "128".to_string()),
            ("AWS_LAMBDA_FUNCTION_TIMEOUT", timeout_s.to_string()),
            (
                "AWS_LAMBDA_LOG_GROUP_NAME",
                format!("/aws/lambda/{FUNCTION}"),
            ),
            ("AWS_LAMBDA_LOG_STREAM_NAME", "sqsprobe".to_string()),
            ("AWS_EXECUTION_ENV", "sqsprobe-audit".to_string()),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect()
    }

    /// Starts the execution environments beyond the first: `launch` (the first's, with the
    /// audit's variables), each with its own Runtime API.
    pub(crate) fn start_environments(&self, launch: &Launch) -> std::io::Result<()> {
        for i in 1..self.apis.len() {
            let mut own = launch.clone();
            for (k, v) in &mut own.env {
                if k == "AWS_LAMBDA_RUNTIME_API" {
                    *v = self.apis[i].address();
                }
            }
            let process = own.start(1)?;
            self.environments
                .others
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .push((own, Some(process)));
        }
        Ok(())
    }

    /// The first execution environment (the audit's consumer) started, as process group
    /// `group`.
    pub(crate) fn first_started(&self, group: Option<i32>) {
        *self
            .environments
            .first
            .lock()
            .unwrap_or_else(|e| e.into_inner()) = group;
    }

    /// Whether the first environment's exit was the mapping's reset (once per reset).
    pub(crate) fn take_reset(&self) -> bool {
        self.environments
            .first_reset
            .swap(false, std::sync::atomic::Ordering::SeqCst)
    }

    /// Stops the pollers (an invocation in flight is left: its records return after their
    /// visibility timeout), the environments beyond the first, and the APIs; every
    /// invocation that ended, in order.
    pub(crate) async fn stop(self) -> Vec<Invocation> {
        let _ = self.stop.send(true);
        for p in self.pollers {
            let _ = p.await;
        }
        let others = std::mem::take(
            &mut *self
                .environments
                .others
                .lock()
                .unwrap_or_else(|e| e.into_inner()),
        );
        for (_, process) in others {
            if let Some(mut process) = process {
                process.stop().await;
            }
        }
        for api in &self.apis {
            api.stop();
        }
        let mut all = self
            .invocations
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone();
        all.sort_by_key(|i| i.started_ms);
        all
    }

    /// The `errorType` of each `/init/error` the runtimes posted.
    pub(crate) fn init_errors(&self) -> Vec<String> {
        self.apis.iter().flat_map(|a| a.init_errors()).collect()
    }
}

/// The queue's ARN, FIFO-ness, visibility timeout and redrive policy.
async fn source(client: &aws_sdk_sqs::Client, queue_url: &str) -> Result<Source, String> {
    use aws_sdk_sqs::types::QueueAttributeName as Name;
    let answer = client
        .get_queue_attributes()
        .queue_url(queue_url)
        .attribute_names(Name::All)
        .send()
        .await
        .map_err(|e| {
            format!(
                "the mapping could not read the queue: {}",
                crate::runner::sdk_error::sdk_error_line(&e)
            )
        })?;
    let attributes = answer.attributes().cloned().unwrap_or_default();
    let get = |n: Name| attributes.get(&n).cloned();
    Ok(Source {
        url: queue_url.to_string(),
        arn: get(Name::QueueArn).unwrap_or_default(),
        fifo: get(Name::FifoQueue).as_deref() == Some("true"),
        visibility_timeout_s: get(Name::VisibilityTimeout)
            .and_then(|v| v.parse().ok())
            .unwrap_or(30),
        dead_letter: get(Name::RedrivePolicy).is_some_and(|p| !p.is_empty()),
    })
}

/// One poller: gather, invoke, delete, over and over.
struct Poller {
    client: aws_sdk_sqs::Client,
    source: Source,
    settings: Settings,
    api: Arc<RuntimeApi>,
    /// Which execution environment takes this poller's batches (through `api`).
    environment: usize,
    environments: Arc<Environments>,
    recorder: Arc<Recorder>,
    invocations: Arc<Mutex<Vec<Invocation>>>,
}

impl Poller {
    async fn run(self, mut stopped: watch::Receiver<bool>) {
        loop {
            if *stopped.borrow() {
                return;
            }
            let batch = tokio::select! {
                b = self.gather() => b,
                _ = stopped.wait_for(|s| *s) => return,
            };
            if batch.is_empty() {
                continue;
            }
            let invoked = tokio::select! {
                i = self.invoke(batch) => i,
                _ = stopped.wait_for(|s| *s) => return,
            };
            if let Some(invocation) = invoked {
                self.recorder.write_row("lambda_invocation", &invocation);
                self.invocations
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .push(invocation);
            }
        }
    }

    /// Records up to the batch size: one receive without a batching window, else receives
    /// until the batch is full or the window, opened by the first record, closes.
    async fn gather(&self) -> Vec<Record> {
        let want = self.settings.batch_size as usize;
        let mut batch: Vec<Record> = Vec::new();
        let mut opened: Option<Instant> = None;
        loop {
            let wait_s = match opened {
                None => LONG_POLL_S,
                Some(at) => {
                    let left = self.settings.batching_window.saturating_sub(at.elapsed());
                    if left.is_zero() {
                        return batch;
                    }
                    i32::try_from(left.as_secs_f64().ceil() as u64)
                        .unwrap_or(LONG_POLL_S)
                        .min(LONG_POLL_S)
                }
            };
            let max = (want - batch.len()).min(10) as i32;
            let received = self
                .client
                .receive_message()
                .queue_url(&self.source.url)
                .max_number_of_messages(max)
                .wait_time_seconds(wait_s)
                .message_system_attribute_names(MessageSystemAttributeName::All)
                .message_attribute_names("All")
                .send()
                .await;
            let messages = match received {
                Ok(r) => r.messages.unwrap_or_default(),
                // A failed receive is retried, as the mapping's pollers retry.
                Err(_) => {
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    if opened.is_some() && self.settings.batching_window.is_zero() {
                        return batch;
                    }
                    continue;
                }
            };
            batch.extend(messages.into_iter().map(record));
            if !batch.is_empty() && opened.is_none() {
                opened = Some(Instant::now());
            }
            if batch.len() >= want || (!batch.is_empty() && self.settings.batching_window.is_zero())
            {
                return batch;
            }
        }
    }

    /// Invokes the function with `batch`, then deletes what the answer says is done.
    async fn invoke(&self, batch: Vec<Record>) -> Option<Invocation> {
        let request_id = uuid::Uuid::new_v4().to_string();
        let mut records: Vec<Invoked> = batch
            .iter()
            .map(|r| {
                let business_key = self.recorder.key_of_message(&r.message_id);
                let commits_before = business_key
                    .as_deref()
                    .and_then(|k| self.recorder.commits_now(k));
                Invoked {
                    message_id: r.message_id.clone(),
                    business_key,
                    group: r.group().map(str::to_string),
                    receive_count: r
                        .attributes
                        .get("ApproximateReceiveCount")
                        .and_then(|v| v.as_str())
                        .and_then(|v| v.parse().ok())
                        .unwrap_or(0),
                    commits_before,
                    commits_after: None,
                }
            })
            .collect();
        let started_ms = now_ms();
        let body = event::event(&batch, &self.source.arn, REGION).to_string();
        let answer = self
            .api
            .invoke(
                &request_id,
                body.into_bytes(),
                self.settings.function_timeout,
            )
            .await?;
        let ended_ms = now_ms();
        // Lambda ends an execution environment whose invocation timed out: nothing it was
        // still doing goes on, and the next invocation meets a fresh runtime.
        let reset = answer == event::Answer::Timeout && self.environments.reset(self.environment);
        for r in &mut records {
            r.commits_after = r
                .business_key
                .as_deref()
                .and_then(|k| self.recorder.commits_now(k));
        }
        let disposition = event::dispose(&batch, &answer, self.settings.report_batch_item_failures);
        let (outcome, error_type, wrong_identifier, returned) = match &disposition {
            Disposition::Success => (Outcome::Success, None, None, Vec::new()),
            Disposition::Partial(failed) => (Outcome::Partial, None, None, failed.clone()),
            Disposition::Failure(why) => {
                let error_type = match why {
                    Failure::FunctionError(t) => Some(t.clone()),
                    _ => None,
                };
                let wrong = match why {
                    Failure::WrongIdentifier(w) => Some(*w),
                    _ => None,
                };
                (
                    outcome_of(why),
                    error_type,
                    wrong,
                    (0..batch.len()).collect(),
                )
            }
        };
        let done: Vec<&Record> = batch
            .iter()
            .enumerate()
            .filter(|(i, _)| !returned.contains(i))
            .map(|(_, r)| r)
            .collect();
        self.delete(&done).await;
        Some(Invocation {
            request_id,
            started_ms,
            ended_ms,
            records,
            outcome,
            error_type,
            wrong_identifier,
            returned,
            reset,
        })
    }

    /// Deletes `done` in batches of ten. A failed delete is not retried: its record comes
    /// back after its visibility timeout, as one does on AWS.
    async fn delete(&self, done: &[&Record]) {
        for chunk in done.chunks(10) {
            let entries: Vec<DeleteMessageBatchRequestEntry> = chunk
                .iter()
                .enumerate()
                .filter_map(|(i, r)| {
                    DeleteMessageBatchRequestEntry::builder()
                        .id(i.to_string())
                        .receipt_handle(&r.receipt_handle)
                        .build()
                        .ok()
                })
                .collect();
            let _ = self
                .client
                .delete_message_batch()
                .queue_url(&self.source.url)
                .set_entries(Some(entries))
                .send()
                .await;
        }
    }
}

/// A received message as an event record.
fn record(m: aws_sdk_sqs::types::Message) -> Record {
    let attributes = m
        .attributes
        .unwrap_or_default()
        .into_iter()
        .map(|(k, v)| (k.as_str().to_string(), serde_json::Value::String(v)))
        .collect();
    let message_attributes = m
        .message_attributes
        .unwrap_or_default()
        .into_iter()
        .map(|(name, v)| {
            let binary = v
                .binary_value
                .as_ref()
                .map(|b| base64::engine::general_purpose::STANDARD.encode(b.as_ref()));
            let value = event::message_attribute(
                &v.data_type,
                v.string_value.as_deref(),
                binary.as_deref(),
            );
            (name, value)
        })
        .collect();
    Record {
        message_id: m.message_id.unwrap_or_default(),
        receipt_handle: m.receipt_handle.unwrap_or_default(),
        body: m.body.unwrap_or_default(),
        md5_of_body: m.md5_of_body.unwrap_or_default(),
        attributes,
        message_attributes,
    }
}

/// Milliseconds since the Unix epoch, the emulator's clock.
fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

/// The invocation's outcome a whole-batch failure makes.
fn outcome_of(failure: &Failure) -> Outcome {
    match failure {
        Failure::FunctionError(_) => Outcome::FunctionError,
        Failure::Timeout => Outcome::Timeout,
        Failure::InvalidResponse => Outcome::InvalidResponse,
        Failure::WrongIdentifier(_) => Outcome::WrongItemIdentifier,
    }
}
