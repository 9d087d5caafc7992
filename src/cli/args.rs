//! Command-line arguments (clap derive; the doc comments are the help text). The flags of
//! `bench` are in [`bench`], and the value parsers every flag names in [`values`].

mod bench;
mod lambda;
mod suites;
mod values;

pub(super) use bench::{
    BenchArgs, BenchDriverArg, BenchTargetArg, BenchWorkloadArg, bench_defaults,
};
pub(super) use lambda::LambdaArgs;
pub(super) use suites::{SuitesCommand, SuitesExportArgs};

use clap::{Args, Parser, Subcommand, ValueEnum};
use sqsprobe_facts::sqs::protocol::Protocol;
use std::net::SocketAddr;
use std::path::PathBuf;
use values::{
    parse_account_id, parse_chaos, parse_duration, parse_endpoint_url, parse_nemesis,
    parse_partition, parse_positive_duration, parse_request_budget, parse_run_id, parse_size,
};

/// Chaos and conformance experiments for Amazon SQS, with an embedded SQS emulator.
///
/// Exit codes: 0 all passed, 1 bad command line, 2 invalid suite, 3 runtime error,
/// 4 an expectation failed, 5 inconclusive (no failure), 130 interrupted.
#[derive(Debug, Parser)]
#[command(name = "sqsprobe", version = super::builtin::VERSION, max_term_width = 100)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run suites against a target and write a run folder (evidence, JUnit, summary, HTML).
    Run(Box<RunArgs>),
    /// Check suite files and report every error with file:line:column.
    Validate(ValidateArgs),
    /// List the cases of suites: file, id, tags, cited source.
    List(ListArgs),
    /// Serve the embedded SQS-compatible emulator (and STS GetCallerIdentity) until Ctrl-C,
    /// SIGTERM or SIGHUP.
    Serve(ServeArgs),
    /// Re-render the reports of a run folder from its evidence.jsonl.
    Report(ReportArgs),
    /// Build the conformance matrix (cases × targets) from several run folders.
    Matrix(MatrixArgs),
    /// Pool the multi-trial cases of several run folders (nightly runs) per case, target and
    /// region: counts, 95% intervals, and a flag when the newest run's rate changed from the
    /// runs before it whatever its unknown trials were (Fisher's exact test, two-sided, over
    /// every way the unknown trials could have fallen; p < 0.01 over all comparisons, Holm).
    /// Runs sharing a seed on the same target are one draw, pooled once.
    History(HistoryArgs),
    /// Re-judge a run folder from its evidence.jsonl alone: every case's verdict, decision and
    /// intervals, and the run's exit code, derived again from the recorded facts and compared
    /// with what the run recorded. An audit folder (audit.json, or trials.json) is judged
    /// again from its evidence and compared with its audit.json, trial by trial. Exits with
    /// the run's (or audit's) code when the evidence supports it, 3 when it does not or cannot
    /// be re-judged.
    Check(CheckArgs),
    /// Save a run as a baseline, or compare a run against one.
    #[command(subcommand)]
    Baseline(BaselineCommand),
    /// Measure throughput and latency of targets with a send → receive → delete loop.
    Bench(Box<BenchArgs>),
    /// Delete queues that runs left behind: only `sqsprobe-` queues carrying sqsprobe's
    /// ownership tags, only runs older than --older-than (or the one --run-id names).
    Sweep(SweepArgs),
    /// Run your own consumer against the embedded emulator, with SQS's legal-but-rare
    /// behaviour switched on, and judge every acknowledgement it makes (superseded handles,
    /// deletes before the commit, lapsed leases, duplicate commits); with --nemesis, kill it
    /// (and start it again) or pause it at seeded points and find work lost or done twice.
    Audit(Box<AuditArgs>),
    /// The suites built into the binary, which `run`, `list` and `validate` read when no path
    /// is given and the working folder has no `suites/`.
    #[command(subcommand)]
    Suites(SuitesCommand),
}

/// Where suites come from and which limits apply.
#[derive(Debug, Args, Clone)]
pub struct SuiteArgs {
    /// Suite files or folders (searched for *.yaml / *.yml). Defaults to `suites/`, or, when
    /// the working folder has none, the suites built into the binary (`sqsprobe suites export`
    /// writes them out).
    #[arg(value_name = "PATH")]
    pub paths: Vec<PathBuf>,

    /// Refuse cases whose sleeps, waits and windows can exceed this (e.g. 90s, 5m).
    #[arg(long, value_name = "DURATION", default_value = "5m", value_parser = parse_duration)]
    pub max_case_duration: std::time::Duration,

    /// The same bound for cases tagged `slow` (they wait out SQS's own long intervals).
    #[arg(long, value_name = "DURATION", default_value = "15m", value_parser = parse_duration)]
    pub max_slow_case_duration: std::time::Duration,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum TargetArg {
    /// The in-process emulator on an ephemeral loopback port.
    Embedded,
    /// The endpoint given by --endpoint-url.
    Endpoint,
    /// Real AWS, through the default credential chain.
    Aws,
}

impl TargetArg {
    /// The runner's name for it.
    pub fn kind(self) -> crate::runner::TargetKind {
        match self {
            TargetArg::Embedded => crate::runner::TargetKind::Embedded,
            TargetArg::Endpoint => crate::runner::TargetKind::Endpoint,
            TargetArg::Aws => crate::runner::TargetKind::Aws,
        }
    }
}

/// The wire protocol of `sqsprobe run` (`--protocol`): the one enum of `sqs/protocol.rs`, with
/// each value's help. A parser of its own, because `Protocol` lives on the facts floor, which
/// knows nothing of clap.
#[derive(Clone, Copy)]
pub(super) struct ProtocolParser;

impl clap::builder::TypedValueParser for ProtocolParser {
    type Value = Protocol;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<Protocol, clap::Error> {
        let names =
            clap::builder::PossibleValuesParser::new(self.possible_values().into_iter().flatten());
        let name = names.parse_ref(cmd, arg, value)?;
        Protocol::from_name(&name)
            .ok_or_else(|| clap::Error::new(clap::error::ErrorKind::InvalidValue).with_cmd(cmd))
    }

    fn possible_values(
        &self,
    ) -> Option<Box<dyn Iterator<Item = clap::builder::PossibleValue> + '_>> {
        Some(Box::new(Protocol::ALL.into_iter().map(|p| {
            let help = match p {
                Protocol::Json => "AWS JSON 1.0, what aws-sdk-sqs speaks",
                Protocol::Query => {
                    "The form-encoded / XML query protocol, translated under the SDK (emulators \
                     only; see docs/query-protocol.md)"
                }
            };
            clap::builder::PossibleValue::new(p.as_str()).help(help)
        })))
    }
}

/// The clock of `sqsprobe run`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ClockArg {
    /// The system clock: every wait takes real time.
    Real,
    /// A simulated clock shared with the embedded emulator (docs/emulator.md).
    Virtual,
}

impl ClockArg {
    /// The runner's name for it.
    pub fn kind(self) -> crate::runner::ClockKind {
        match self {
            ClockArg::Real => crate::runner::ClockKind::Real,
            ClockArg::Virtual => crate::runner::ClockKind::Virtual,
        }
    }
}

/// How to reach a target, shared by `run` and `sweep` (which add their own `--target`).
#[derive(Debug, Args, Clone)]
pub struct ReachArgs {
    /// An SQS-compatible endpoint (LocalStack, moto, ElasticMQ, ...). Requests to it are signed
    /// with fixed test keys, never your own, unless --profile is given; for an AWS endpoint that
    /// needs real credentials use --target aws with it.
    #[arg(
        long,
        env = "SQSPROBE_ENDPOINT_URL",
        value_name = "URL",
        value_parser = parse_endpoint_url,
        help_heading = "Target"
    )]
    pub endpoint_url: Option<String>,

    /// AWS region (else AWS_REGION / AWS_DEFAULT_REGION / the profile's; us-east-1 for
    /// emulators). --target aws refuses to run without one. `sweep` takes it more than once.
    #[arg(long, value_name = "REGION", action = clap::ArgAction::Append, help_heading = "Target")]
    pub region: Vec<String>,

    /// Named AWS profile for credentials and region.
    #[arg(long, value_name = "NAME", help_heading = "Target")]
    pub profile: Option<String>,

    /// With --target aws: the only account(s) the credentials may belong to (STS
    /// GetCallerIdentity, asked before anything is created or deleted); any other is refused,
    /// exit 1.
    #[arg(
        long,
        env = "SQSPROBE_ALLOW_ACCOUNT",
        value_name = "ID[,ID]",
        value_delimiter = ',',
        value_parser = parse_account_id,
        help_heading = "Target"
    )]
    pub allow_account: Vec<String>,
}

impl ReachArgs {
    /// What the runner is asked for, with `kind` from the command's `--target`.
    pub fn request(
        &self,
        kind: Option<crate::runner::TargetKind>,
    ) -> crate::runner::target::TargetRequest {
        crate::runner::target::TargetRequest {
            kind,
            endpoint_url: self.endpoint_url.clone(),
            region: self.region.first().cloned(),
            profile: self.profile.clone(),
            allow_accounts: self.allow_account.clone(),
            ..crate::runner::target::TargetRequest::default()
        }
    }
}

#[derive(Debug, Args)]
pub struct RunArgs {
    #[command(flatten)]
    pub suites: SuiteArgs,

    /// Run only cases whose id contains PATTERN (repeatable). With `*` the pattern is a glob
    /// matched against the whole id (`stale*`, `*-fifo-*`).
    #[arg(long = "case", value_name = "PATTERN", help_heading = "Selection")]
    pub cases: Vec<String>,

    /// Also run cases tagged `slow` (long waits: dedup windows, 60-second rules, retention).
    #[arg(long, help_heading = "Selection")]
    pub include_slow: bool,

    /// Also run cases tagged `team-policy`: bounds the team sets that AWS does not publish (the
    /// stale-delete rate's 25%); left out by default so they never fail a default run.
    #[arg(long, help_heading = "Selection")]
    pub include_team_policy: bool,

    /// Print what each selected case would create, how long it waits, the SQS requests it makes
    /// and what they cost at AWS list prices, and which cases are contested or a team policy;
    /// then exit 0 without resolving the target: no credentials, no network, nothing created.
    #[arg(long, help_heading = "Selection")]
    pub dry_run: bool,

    /// Where to send calls. Defaults to `endpoint` when --endpoint-url is given, else `embedded`.
    #[arg(long, value_enum, help_heading = "Target")]
    pub target: Option<TargetArg>,

    #[command(flatten)]
    pub reach: ReachArgs,

    /// Target profile: `NAME` (`targets/NAME.yaml` in the working folder, else the shipped one
    /// built into the binary) or a path. Known divergences it
    /// lists are reported as `known_divergence` (not failures); unsupported cases are not run.
    #[arg(long, value_name = "NAME|PATH", help_heading = "Target")]
    pub target_profile: Option<String>,

    /// Chaos for the embedded emulator only, e.g. `stale-delete-keeps=1,seed=7`: opt-in
    /// legal-but-rare behaviours AWS documents (stale-delete-keeps, redeliver-after-delete,
    /// short-poll-miss, reorder, duplicate, latency, throttle, seed; docs/chaos.md). Recorded
    /// in run_start with the seed it drew from: its own `seed=`, which is then also the run's
    /// seed unless `--seed` is given (the spec alone repeats the run), else the run's seed.
    #[arg(long, value_name = "SPEC", value_parser = parse_chaos, help_heading = "Target")]
    pub chaos: Option<sqsprobe_emulator::Chaos>,

    /// Wire protocol: `json` (AWS JSON 1.0) or `query` (form requests, XML replies).
    #[arg(
        long,
        value_parser = ProtocolParser,
        default_value = "json",
        value_name = "PROTOCOL",
        help_heading = "Target"
    )]
    pub protocol: Protocol,

    /// Cases run at once. Cases mostly wait on leases, so more than cores is fine: the default
    /// is 64 on the embedded emulator (in-process, never the bottleneck) and 8 on an endpoint or
    /// AWS (a single-process emulator, or AWS's request rates). Cases start longest first.
    #[arg(
        long,
        short = 'j',
        value_name = "N",
        value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..),
        help_heading = "Execution"
    )]
    pub jobs: Option<usize>,

    /// Run only partition K of N (`--partition 2/3`): cases are split deterministically
    /// (longest first, dealt round-robin), so N CI jobs together run every selected case
    /// exactly once. `sqsprobe report` and `matrix` merge the partial run folders.
    #[arg(long, value_name = "K/N", value_parser = parse_partition, help_heading = "Execution")]
    pub partition: Option<(usize, usize)>,

    /// Run every case at least N times (each trial on fresh queues, trials concurrently like
    /// cases): a case whose own `trials:` is larger keeps it, so a rate a case needs many
    /// trials for is never cut short. The case_end pools them: per-class counts and 95%
    /// intervals, judged against `outcome:` / `rate:`.
    #[arg(long, value_name = "N", value_parser = clap::builder::RangedU64ValueParser::<u32>::new().range(1..=1000), help_heading = "Execution")]
    pub trials: Option<u32>,

    /// Seed for everything random in the run (which calls a `probability:` fault hits, the
    /// emulator's chaos dice): the same seed and suite inject the same faults. Default: the
    /// `--chaos` spec's `seed=`, else drawn at random; always recorded in `run_start.seed` so a
    /// run can be repeated.
    #[arg(
        long,
        env = "SQSPROBE_SEED",
        value_name = "N",
        help_heading = "Execution"
    )]
    pub seed: Option<u64>,

    /// `virtual`: the run and the embedded emulator share a simulated clock that jumps to the
    /// next deadline whenever every case waits, so sleeps, windows, leases, delays, the 5-minute
    /// dedup window and the 60 s purge rules take no real time (the conformance suite, slow
    /// cases included, in seconds). Embedded target only; recorded in `run_start.clock`.
    #[arg(
        long,
        value_enum,
        default_value = "real",
        value_name = "CLOCK",
        help_heading = "Execution"
    )]
    pub clock: ClockArg,

    /// How long one attempt of a call may take (a receive: its long-poll wait plus this).
    #[arg(long, value_name = "DURATION", default_value = "6s", value_parser = parse_positive_duration, help_heading = "Execution")]
    pub call_timeout: std::time::Duration,

    /// After this many calls in a row without any response the target counts as lost: no new
    /// case starts, the rest are marked not run, teardown still tries every queue once.
    #[arg(long, value_name = "N", default_value_t = crate::runner::policy::DEFAULT_LOST_AFTER, value_parser = clap::builder::RangedU64ValueParser::<u32>::new().range(1..), help_heading = "Execution")]
    pub lost_after: u32,

    /// Stop the run cleanly once it has made this many SQS requests (every attempt counts):
    /// unfinished cases are inconclusive, teardown is still done (its requests are allowed).
    #[arg(
        long,
        env = "SQSPROBE_MAX_REQUESTS",
        value_name = "N",
        value_parser = parse_request_budget,
        help_heading = "Budgets"
    )]
    pub max_requests: Option<u64>,

    /// Stop the run cleanly once it has run this long (cases cut, teardown done).
    #[arg(long, env = "SQSPROBE_MAX_DURATION", value_name = "DURATION", value_parser = parse_positive_duration, help_heading = "Budgets")]
    pub max_duration: Option<std::time::Duration>,

    /// The only regions the run may touch, e.g. `--regions eu-west-1,us-east-1` (what an SCP
    /// allows): a case whose queues are in another region is not run (`unsupported`, naming
    /// it). The run's own region must be one of them.
    #[arg(
        long,
        value_name = "R,...",
        value_delimiter = ',',
        help_heading = "Selection"
    )]
    pub regions: Vec<String>,

    /// Use this run id instead of a fresh one (letters, digits and `-`, at most 24): it names
    /// the run folder and every queue, so CI can know both in advance. Never reuse one.
    #[arg(long, value_name = "ID", value_parser = parse_run_id, help_heading = "Output")]
    pub run_id: Option<String>,

    /// Parent folder of run folders; each run writes `<out>/<run-id>/`.
    #[arg(
        long,
        default_value = "evidence",
        value_name = "DIR",
        help_heading = "Output"
    )]
    pub out: PathBuf,

    /// Do not print per-case progress lines.
    #[arg(long, short = 'q', help_heading = "Output")]
    pub quiet: bool,

    /// Plain progress: one line per finished case, without the live lines of running cases
    /// that a terminal gets (CI logs and pipes get plain lines anyway).
    #[arg(long, help_heading = "Output")]
    pub no_progress: bool,
}

#[derive(Debug, Args)]
pub struct ValidateArgs {
    #[command(flatten)]
    pub suites: SuiteArgs,
}

#[derive(Debug, Args)]
pub struct ListArgs {
    #[command(flatten)]
    pub suites: SuiteArgs,
}

#[derive(Debug, Args)]
pub struct ServeArgs {
    /// Address to listen on. Binds loopback unless told otherwise.
    #[arg(long, default_value = "127.0.0.1:9324", value_name = "ADDR")]
    pub listen: SocketAddr,

    /// Region used in queue ARNs and URLs.
    #[arg(long, default_value = "us-east-1")]
    pub region: String,

    /// Account id used in queue URLs and ARNs, and answered by STS GetCallerIdentity.
    #[arg(long, default_value = "000000000000", value_parser = parse_account_id)]
    pub account_id: String,

    /// Turn off AWS's 60-second rules (PurgeQueueInProgress, QueueDeletedRecently).
    #[arg(long)]
    pub no_cooldowns: bool,

    /// The queue URLs it answers with: `regional` (AWS's: one name in two regions has two
    /// URLs) or `region-less` (moto's `/<account>/<name>` in every region; each request's
    /// signing region says which queue), to test clients against targets of that form.
    #[arg(long, value_enum, default_value = "regional", value_name = "FORM")]
    pub queue_urls: QueueUrlsArg,

    /// Refuse every request signed with this access key id as AWS refuses a key it does not
    /// know (`InvalidClientTokenId`; `UnrecognizedClientException` over JSON), STS's
    /// GetCallerIdentity included: rehearse offline what a run does with refused credentials.
    /// Repeatable.
    #[arg(long, value_name = "KEY", action = clap::ArgAction::Append)]
    pub reject_access_key: Vec<String>,

    /// Refuse every request signed with this access key id as `ExpiredToken`, as AWS does once
    /// a session's credentials run out (a role session shorter than the job). Repeatable.
    #[arg(long, value_name = "KEY", action = clap::ArgAction::Append)]
    pub expire_access_key: Vec<String>,

    /// Opt-in chaos, e.g. `stale-delete-keeps=1,redeliver-after-delete=0.1,seed=7` or
    /// `latency=200ms,throttle=0.01` (stale-delete-keeps, redeliver-after-delete,
    /// short-poll-miss, reorder, duplicate, latency, throttle, seed; docs/chaos.md). Off by
    /// default.
    #[arg(long, value_name = "SPEC", value_parser = parse_chaos)]
    pub chaos: Option<sqsprobe_emulator::Chaos>,

    /// Most queues held; CreateQueue beyond it answers 403 OverLimit.
    #[arg(
        long,
        value_name = "N",
        default_value_t = 10_000,
        help_heading = "Limits"
    )]
    pub max_queues: usize,

    /// Most messages stored across all queues; a send beyond it answers 403 OverLimit.
    #[arg(
        long,
        value_name = "N",
        default_value_t = 1_000_000,
        help_heading = "Limits"
    )]
    pub max_messages: u64,

    /// Most message bytes stored across all queues (body plus attributes, as SQS counts a
    /// message's size), e.g. `512MiB`; a send beyond it answers 403 OverLimit.
    #[arg(long, value_name = "SIZE", default_value = "1GiB", value_parser = parse_size, help_heading = "Limits")]
    pub max_stored_bytes: u64,

    /// Largest request body accepted, e.g. `16MiB`; a larger one answers 413
    /// RequestEntityTooLarge. SQS's own 1 MiB limits are checked on the decoded message, so
    /// the default leaves room for a 1 MiB batch of binary attributes after base64 and JSON
    /// escaping.
    #[arg(long, value_name = "SIZE", default_value = "8MiB", value_parser = parse_size, help_heading = "Limits")]
    pub max_request_bytes: u64,

    /// Most client connections open at once. At the cap, the connection idle longest (a
    /// pooled keep-alive connection between requests, or one that has sent nothing) is closed
    /// to make room; a connection in a request never is, and when all are in one, new clients
    /// wait in the listen backlog. About 15 KB of memory each.
    #[arg(long, value_name = "N", default_value_t = 512, value_parser = clap::value_parser!(u32).range(1..), help_heading = "Limits")]
    pub max_connections: u32,

    /// A client must send a request's head, and then its body, within this time: the longest
    /// a slow client holds a connection slot before it is cut (twice this, head and body).
    #[arg(long, value_name = "DURATION", default_value = "10s", value_parser = parse_positive_duration, help_heading = "Limits")]
    pub header_read_timeout: std::time::Duration,

    /// A keep-alive connection without a request for this long is closed (sooner when a new
    /// client needs its slot at --max-connections).
    #[arg(long, value_name = "DURATION", default_value = "120s", value_parser = parse_positive_duration, help_heading = "Limits")]
    pub idle_timeout: std::time::Duration,

    /// On Ctrl-C, SIGTERM or SIGHUP: how long requests in flight may take to finish (long polls
    /// answer at once with what they have).
    #[arg(long, value_name = "DURATION", default_value = "5s", value_parser = parse_duration, help_heading = "Limits")]
    pub shutdown_grace: std::time::Duration,
}

#[derive(Debug, Args)]
pub struct ReportArgs {
    /// Run folders holding evidence.jsonl. Each gets its reports rendered again; the folders
    /// of a `--partition` run are merged into one run; with two runs or more, a page setting
    /// them side by side (targets as columns) is written too.
    #[arg(value_name = "RUN_DIR", required = true)]
    pub run_dirs: Vec<PathBuf>,

    /// Where a merged run and the side-by-side report.html go (only written when there is a
    /// merge or more than one run).
    #[arg(long, default_value = "evidence/report", value_name = "DIR")]
    pub out: PathBuf,

    /// A merge that lacks partitions still exits 0 (it is named on stderr and in every report
    /// all the same). Without it such a merge exits 5: its "every case passed" covers only
    /// the partitions given.
    #[arg(long)]
    pub allow_partial: bool,
}

#[derive(Debug, Args)]
pub struct MatrixArgs {
    /// Run folders holding evidence.jsonl, one column each, in this order.
    #[arg(value_name = "RUN_DIR", required = true)]
    pub run_dirs: Vec<PathBuf>,

    /// Where to write matrix.md, matrix.json and matrix.html.
    #[arg(long, default_value = "evidence/matrix", value_name = "DIR")]
    pub out: PathBuf,

    /// The targets' practical facts, as `scripts/target-facts` writes them (sqsprobe-facts/1):
    /// shown as a table beside the scores, and in matrix.html as conformance against
    /// throughput and start-up, one point per target.
    #[arg(long, value_name = "FILE")]
    pub facts: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct CheckArgs {
    /// A run folder holding evidence.jsonl (or the evidence file itself), or an audit folder.
    #[arg(value_name = "RUN_DIR")]
    pub run_dir: PathBuf,

    /// The target profile to map the cases through, when the one the run recorded cannot be
    /// found again (a built-in name or a file).
    #[arg(long, value_name = "NAME|PATH")]
    pub target_profile: Option<String>,
}

#[derive(Debug, Args)]
pub struct HistoryArgs {
    /// Run folders holding evidence.jsonl, or folders to search for them (e.g. the --out
    /// folder of nightly runs).
    #[arg(value_name = "PATH", required = true)]
    pub paths: Vec<PathBuf>,

    /// Only this case (repeat for more).
    #[arg(long = "case", value_name = "ID")]
    pub cases: Vec<String>,

    /// Print the pooled history as JSON instead of text.
    #[arg(long)]
    pub json: bool,

    /// Exit 4 when a newest run's rate changed from the runs before it: Fisher's exact test
    /// below 0.01 for every way the unknown trials could have fallen, α held over every
    /// comparison of the history (Holm). A change the unknown trials can explain is not one.
    #[arg(long)]
    pub fail_on_change: bool,
}

#[derive(Debug, Subcommand)]
pub enum BaselineCommand {
    /// Save a run folder as a baseline: its evidence plus a normalized baseline.json.
    Save(BaselineSaveArgs),
    /// Compare a run with a baseline case by case; exit 4 when anything differs.
    Compare(BaselineCompareArgs),
}

#[derive(Debug, Args)]
pub struct BaselineSaveArgs {
    /// A run folder holding evidence.jsonl.
    #[arg(value_name = "RUN_DIR")]
    pub run_dir: PathBuf,

    /// Baseline name (default `<target>-<region>-<date>`, e.g. `aws-us-east-1-2026-11-29`).
    #[arg(long, value_name = "NAME")]
    pub name: Option<String>,

    /// Parent folder of baselines.
    #[arg(long, default_value = "evidence/baselines", value_name = "DIR")]
    pub dir: PathBuf,
}

#[derive(Debug, Args)]
pub struct BaselineCompareArgs {
    /// A baseline folder (holding baseline.json) or a run folder (holding evidence.jsonl).
    #[arg(value_name = "BASELINE_DIR")]
    pub baseline: PathBuf,

    /// The run folder to compare with it.
    #[arg(value_name = "RUN_DIR")]
    pub run_dir: PathBuf,

    /// Where to write comparison.md (default: the run folder).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
}

/// Where `sweep` looks: an endpoint, or AWS.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SweepTargetArg {
    /// The endpoint given by --endpoint-url.
    Endpoint,
    /// Real AWS, through the default credential chain (needs a region).
    Aws,
}

/// `serve --queue-urls`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum QueueUrlsArg {
    Regional,
    RegionLess,
}

#[derive(Debug, Args)]
pub struct SweepArgs {
    /// Where to sweep. Defaults to `endpoint` when --endpoint-url is given; there is no default
    /// beyond that: sweeping is never implied.
    #[arg(long, value_enum, help_heading = "Target")]
    pub target: Option<SweepTargetArg>,

    #[command(flatten)]
    pub reach: ReachArgs,

    /// Delete only runs older than this (from the run id's timestamp, else the queue's
    /// CreatedTimestamp). Default 2h; with --run-id, no age limit unless given.
    #[arg(long, value_name = "DURATION", value_parser = parse_duration, help_heading = "Selection")]
    pub older_than: Option<std::time::Duration>,

    /// Only the queues of this run (its `sqsprobe:run` tag).
    #[arg(long, value_name = "ID", value_parser = parse_run_id, help_heading = "Selection")]
    pub run_id: Option<String>,

    /// Sweep every region this run folder's `run_start.regions` lists (with any --region):
    /// everything the run may have left, wherever it was.
    #[arg(long, value_name = "RUN_DIR", help_heading = "Target")]
    pub regions_of: Option<PathBuf>,

    /// Print what would be deleted; delete nothing.
    #[arg(long, help_heading = "Selection")]
    pub dry_run: bool,
}

/// `sqsprobe audit ... -- COMMAND [ARGS...]`.
#[derive(Debug, Args)]
#[command(
    after_help = "The consumer gets AWS_ENDPOINT_URL and AWS_ENDPOINT_URL_SQS, AWS_REGION, test \
                  credentials, SQSPROBE_QUEUE_URL (and SQSPROBE_QUEUE_URL_<NAME> for each queue \
                  of a plan), SQSPROBE_LEDGER (a file to append one line per business key it \
                  commits) and SQSPROBE_LEDGER_URL (the same ledger over HTTP on the emulator's \
                  port: POST the key as the body). A plan's output queues are a third effect \
                  channel: a message the consumer sends there is the commit of the key it \
                  carries. Without any of them the work is not checked and the audit is never \
                  clean. SQSPROBE_START is 1; under --nemesis kill the same command is started \
                  again after each kill with 2, 3, ...: read back what must survive a crash, as \
                  the ledger, when starting. A consumer that crashes is never clean: its last \
                  lines of output are in the reports and a JUnit error; queues it used that the \
                  audit did not make are named. The verdict is judged from evidence.jsonl, and \
                  `sqsprobe check AUDIT_DIR` judges it again. Exit codes: 0 clean (no finding, \
                  the work checked, no crash), 4 findings, 5 could not conclude, could not check \
                  the work or crashed, 3 the consumer could not start or the emulator failed, 1 \
                  bad command line. docs/audit.md walks through it. Under --lambda the command is a Lambda \
                  function's runtime, given AWS_LAMBDA_RUNTIME_API (docs/audit.md#lambda)."
)]
pub struct AuditArgs {
    /// An audit plan (docs/audit.md#plans): queues, attributes, dead-letter queues, output
    /// queues, message shapes (bodies, base64 and SNS layers, message attributes, FIFO group
    /// and deduplication ids), each queue's keys and where they are read, a send rate while
    /// the consumer runs. Replaces --messages, --fifo, --groups and --visibility-timeout.
    #[arg(long, value_name = "PLAN.yaml", conflicts_with_all = ["messages", "fifo", "groups", "visibility_timeout"])]
    pub plan: Option<PathBuf>,

    /// How many messages to send before the consumer starts; each body is
    /// `{"business_key": "b-<i>", "seq": <i>}`.
    #[arg(long, value_name = "N", default_value_t = 20, value_parser = clap::builder::RangedU64ValueParser::<u32>::new().range(1..=10_000))]
    pub messages: u32,

    /// A FIFO queue (with --groups message groups) instead of a standard one.
    #[arg(long)]
    pub fifo: bool,

    /// Message groups of a --fifo queue; the messages are dealt round-robin.
    #[arg(long, value_name = "N", default_value_t = 4, value_parser = clap::builder::RangedU64ValueParser::<u32>::new().range(1..=1000))]
    pub groups: u32,

    /// The queue's visibility timeout: how long each delivery's lease lasts unless the consumer
    /// extends it (whole seconds).
    #[arg(long, value_name = "DURATION", default_value = "10s", value_parser = parse_positive_duration)]
    pub visibility_timeout: std::time::Duration,

    /// The emulator's chaos (docs/chaos.md): duplicate, redeliver-after-delete,
    /// stale-delete-keeps, short-poll-miss, reorder, latency, throttle, seed.
    #[arg(long, value_name = "SPEC", value_parser = parse_chaos)]
    pub chaos: Option<sqsprobe_emulator::Chaos>,

    /// The chaos seed (overrides the spec's `seed=`): the same seed repeats the audit.
    #[arg(long, value_name = "N")]
    pub seed: Option<u64>,

    /// Strike the consumer at points of its history drawn from the seed (docs/audit.md#nemesis):
    /// `kill` (SIGKILL its process group at a delete, before the answer, and at a delivery,
    /// then start the same command again; `kill=N` for N kills, default 2), `pause`
    /// (SIGSTOP at a delivery, SIGCONT once that lease has ended; `pause=N`, default 1), or
    /// both (`kill,pause`). Combines with --chaos.
    #[arg(long, value_name = "SPEC", value_parser = parse_nemesis)]
    pub nemesis: Option<crate::audit::nemesis::Nemesis>,

    /// Repeat the audit N times, each on a fresh emulator with the next seed (`--seed`,
    /// `--seed` + 1, ...), into `trial-<k>/`, and report each finding kind as a rate over the
    /// trials with its 95% interval (`trials.json`).
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::builder::RangedU64ValueParser::<u32>::new().range(1..=1000))]
    pub trials: u32,

    /// The audit ends once every message is deleted and nothing has been in flight this long.
    #[arg(long, value_name = "DURATION", default_value = "3s", value_parser = parse_positive_duration)]
    pub idle: std::time::Duration,

    /// The longest the audit runs; with messages still on the queue then, it cannot conclude.
    #[arg(long, value_name = "DURATION", default_value = "2m", value_parser = parse_positive_duration)]
    pub max_duration: std::time::Duration,

    /// Parent folder of audit folders; each audit writes `<out>/<run-id>/`.
    #[arg(long, default_value = "evidence", value_name = "DIR")]
    pub out: PathBuf,

    /// Use this run id instead of a fresh one (letters, digits and `-`, at most 24).
    #[arg(long, value_name = "ID", value_parser = parse_run_id)]
    pub run_id: Option<String>,

    #[command(flatten)]
    pub lambda: LambdaArgs,

    /// The consumer to audit, after `--`: a command and its arguments (under --lambda, the
    /// function's runtime).
    #[arg(last = true, required = true, value_name = "COMMAND")]
    pub command: Vec<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jobs_zero_is_refused() {
        let err = Cli::try_parse_from(["sqsprobe", "run", "--jobs", "0"]).unwrap_err();
        assert!(err.to_string().contains("0"), "{err}");
        assert!(Cli::try_parse_from(["sqsprobe", "run", "--jobs", "1"]).is_ok());
    }
}
