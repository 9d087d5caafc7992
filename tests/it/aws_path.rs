//! `--target aws` driven offline (Safety): the binary runs with fake keys in its
//! environment and `AWS_ENDPOINT_URL[_SQS|_STS]` or a profile's `endpoint_url` pointing at a
//! `sqsprobe serve` process, which answers STS GetCallerIdentity with its `--account-id`.
//!
//! Checked: no region is one line and exit 1; the first line names region, masked account and
//! the redirection; a wrong account is refused with zero queues created (asked of the server
//! through the SDK); a listed one runs and records the endpoint in `run_start.endpoint`;
//! `baseline save` will not call such a run AWS; an emulator run cannot be redirected by the
//! AWS variables at all. Also: the IAM policy in docs/aws.md names exactly the SQS actions the
//! runner calls, and the CI examples in docs/examples/ parse and carry their safety steps.

use crate::common;

use common::serve::Serve;
use common::{Finished, bin, root, wait_bounded};
use sqsprobe_core::evidence::{Record, read_evidence};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

const ACCOUNT: &str = "123456789012";
const MASKED: &str = "1234********";
const SECRET: &str = "fake-secret-for-sqsprobe-tests";
const LIMIT: Duration = Duration::from_secs(120);
const SUITE: &str = "tests/fixtures/aws-path.yaml";

/// Runs the binary as a CI job would run it against AWS: fake keys in the environment, no
/// config files, no instance metadata, nothing of the developer's own AWS setup, plus `vars`.
fn aws_cmd(args: &[&str], vars: &[(&str, &str)]) -> Finished {
    let mut cmd = Command::new(bin());
    cmd.args(args)
        .current_dir(root())
        .env("NO_COLOR", "1")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for name in [
        "AWS_REGION",
        "AWS_DEFAULT_REGION",
        "AWS_PROFILE",
        "AWS_ENDPOINT_URL",
        "AWS_ENDPOINT_URL_SQS",
        "AWS_ENDPOINT_URL_STS",
        "AWS_IGNORE_CONFIGURED_ENDPOINT_URLS",
        "AWS_SESSION_TOKEN",
        "AWS_ROLE_ARN",
        "AWS_WEB_IDENTITY_TOKEN_FILE",
        "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
        "AWS_CONTAINER_CREDENTIALS_FULL_URI",
        "SQSPROBE_ENDPOINT_URL",
        "SQSPROBE_ALLOW_ACCOUNT",
    ] {
        cmd.env_remove(name);
    }
    cmd.env("AWS_ACCESS_KEY_ID", "AKIAFAKEFORSQSPROBE")
        .env("AWS_SECRET_ACCESS_KEY", SECRET)
        .env("AWS_CONFIG_FILE", "/nonexistent/sqsprobe-tests/config")
        .env(
            "AWS_SHARED_CREDENTIALS_FILE",
            "/nonexistent/sqsprobe-tests/credentials",
        )
        .env("AWS_EC2_METADATA_DISABLED", "true");
    for (k, v) in vars {
        cmd.env(k, v);
    }
    wait_bounded(cmd.spawn().expect("start sqsprobe"), LIMIT)
}

/// `run SUITE --target aws --out OUT EXTRA...` under [`aws_cmd`].
fn aws_run(out: &str, extra: &[&str], vars: &[(&str, &str)]) -> Finished {
    let mut args = vec!["run", SUITE, "--target", "aws", "--out", out];
    args.extend_from_slice(extra);
    aws_cmd(&args, vars)
}

fn serve() -> Serve {
    Serve::start_with(&["--account-id", ACCOUNT])
}

/// Every queue the server holds, whatever its name.
async fn all_queues(url: &str) -> Vec<String> {
    common::queues_with_prefix(url, "").await
}

fn first_line(text: &str) -> &str {
    text.lines().next().unwrap_or_default()
}

fn run_start(out: &Path) -> sqsprobe_core::evidence::format::RunStart {
    let dir = common::single_run_dir(out);
    read_evidence(&dir.join("evidence.jsonl"))
        .unwrap()
        .into_iter()
        .find_map(|r| match r {
            Record::RunStart(s) => Some(s),
            _ => None,
        })
        .expect("a run_start")
}

fn no_secrets(done: &Finished) {
    for text in [&done.stdout, &done.stderr] {
        assert!(
            !text.contains(ACCOUNT),
            "the account id was printed:\n{text}"
        );
        assert!(
            !text.contains(SECRET),
            "the secret key was printed:\n{text}"
        );
    }
}

/// A command refused before it did anything: exit 1, every `needle` on stderr, `dir` empty.
fn refused(done: &Finished, needles: &[&str], dir: &Path) {
    assert_eq!(done.code(), 1, "{}\n{}", done.stdout, done.stderr);
    for needle in needles {
        assert!(
            done.stderr.contains(needle),
            "no {needle:?} in:\n{}",
            done.stderr
        );
    }
    assert_eq!(
        std::fs::read_dir(dir).unwrap().count(),
        0,
        "{} is not empty",
        dir.display()
    );
}

#[test]
fn no_region_is_one_line_and_exit_1_before_anything() {
    let out = tempfile::tempdir().unwrap();
    let done = aws_run(out.path().to_str().unwrap(), &[], &[]);
    refused(
        &done,
        &["--target aws needs a region", "AWS_REGION"],
        out.path(),
    );
    assert_eq!(done.stderr.lines().count(), 1, "{}", done.stderr);
}

#[tokio::test]
async fn a_wrong_account_is_refused_and_nothing_is_created() {
    let serve = serve();
    let out = tempfile::tempdir().unwrap();
    let out_s = out.path().to_str().unwrap();
    // By flag, and by the environment variable a CI job would set once.
    let by_flag = aws_run(
        out_s,
        &["--allow-account", "111111111111,222222222222"],
        &[
            ("AWS_REGION", "eu-west-1"),
            ("AWS_ENDPOINT_URL", &serve.url),
        ],
    );
    let by_env = aws_run(
        out_s,
        &[],
        &[
            ("AWS_REGION", "eu-west-1"),
            ("AWS_ENDPOINT_URL", &serve.url),
            ("SQSPROBE_ALLOW_ACCOUNT", "111111111111"),
        ],
    );
    for done in [&by_flag, &by_env] {
        let first = first_line(&done.stderr);
        assert!(
            first.starts_with("sqsprobe: target aws · region eu-west-1 · account 1234******** (NOT in --allow-account)")
                && first.contains("REDIRECTED: AWS_ENDPOINT_URL"),
            "{first}"
        );
        refused(
            done,
            &[
                "refused: the credentials belong to account 1234********",
                "nothing was created",
            ],
            out.path(),
        );
        no_secrets(done);
    }
    // The refusal names where the list came from.
    assert!(
        by_flag
            .stderr
            .contains("not any of the 2 accounts --allow-account names"),
        "{}",
        by_flag.stderr
    );
    assert!(
        by_env
            .stderr
            .contains("not the account SQSPROBE_ALLOW_ACCOUNT names"),
        "{}",
        by_env.stderr
    );
    assert_eq!(all_queues(&serve.url).await, Vec::<String>::new());
}

#[tokio::test]
async fn an_unconfirmable_account_is_refused_when_guarded_and_said_when_not() {
    let serve = serve();
    let out = tempfile::tempdir().unwrap();
    let out_s = out.path().to_str().unwrap();
    // SQS at serve, STS at a port nobody listens on.
    let dead = format!("http://127.0.0.1:{}", common::free_port());
    let vars = [
        ("AWS_REGION", "eu-west-1"),
        ("AWS_ENDPOINT_URL_SQS", serve.url.as_str()),
        ("AWS_ENDPOINT_URL_STS", dead.as_str()),
    ];
    let guarded = aws_run(out_s, &["--allow-account", ACCOUNT], &vars);
    assert_eq!(guarded.code(), 3, "{}\n{}", guarded.stdout, guarded.stderr);
    assert!(
        first_line(&guarded.stderr)
            .contains("account unknown (STS GetCallerIdentity: no connection"),
        "{}",
        guarded.stderr
    );
    assert!(
        guarded
            .stderr
            .contains("the account could not be confirmed"),
        "{}",
        guarded.stderr
    );
    assert_eq!(all_queues(&serve.url).await, Vec::<String>::new());

    let unguarded = aws_run(out_s, &[], &vars);
    assert_eq!(
        unguarded.code(),
        0,
        "{}\n{}",
        unguarded.stdout,
        unguarded.stderr
    );
    assert!(
        first_line(&unguarded.stderr).contains("account unknown"),
        "{}",
        unguarded.stderr
    );
}

#[tokio::test]
async fn a_listed_account_runs_and_the_redirect_is_announced_and_recorded() {
    let serve = serve();
    let out = tempfile::tempdir().unwrap();
    let done = aws_run(
        out.path().to_str().unwrap(),
        &[
            "--region",
            "eu-west-1",
            "--allow-account",
            &format!("111111111111,{ACCOUNT}"),
        ],
        &[("AWS_ENDPOINT_URL", &serve.url)],
    );
    assert_eq!(done.code(), 0, "{}\n{}", done.stdout, done.stderr);
    assert_eq!(
        first_line(&done.stderr),
        format!(
            "sqsprobe: target aws · region eu-west-1 · account {MASKED} (allowed) · \
             REDIRECTED: AWS_ENDPOINT_URL sends SQS calls to {}, which is not AWS",
            serve.url
        )
    );
    no_secrets(&done);
    let start = run_start(out.path());
    assert_eq!(start.target, "aws");
    assert_eq!(start.endpoint.as_deref(), Some(serve.url.as_str()));
    assert_eq!(start.region, "eu-west-1");
    assert_eq!(all_queues(&serve.url).await, Vec::<String>::new());
    // Not only the terminal's first line says so: every report does.
    let dir = common::single_run_dir(out.path());
    let read = |f: &str| std::fs::read_to_string(dir.join(f)).unwrap();
    assert!(
        read("summary.md").contains("**REDIRECTED**"),
        "{}",
        read("summary.md")
    );
    assert!(read("report.html").contains("REDIRECTED: <code>--target aws</code>"));
    assert!(
        read("junit.xml").contains(&format!("name=\"redirected\" value=\"{}\"", serve.url)),
        "{}",
        read("junit.xml")
    );

    // Such a run is not evidence of what AWS does.
    let baselines = tempfile::tempdir().unwrap();
    let saved = aws_cmd(
        &[
            "baseline",
            "save",
            common::single_run_dir(out.path()).to_str().unwrap(),
            "--dir",
            baselines.path().to_str().unwrap(),
        ],
        &[],
    );
    refused(
        &saved,
        &["which is not AWS", "AWS baseline"],
        baselines.path(),
    );
}

#[tokio::test]
async fn a_profile_gives_the_region_and_its_endpoint_url_is_a_redirect_too() {
    let serve = serve();
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("config");
    std::fs::write(
        &config,
        format!(
            "[profile ci]\nregion = eu-north-1\nendpoint_url = {}\n",
            serve.url
        ),
    )
    .unwrap();
    let out = dir.path().join("out");
    let done = aws_run(
        out.to_str().unwrap(),
        &["--profile", "ci"],
        &[("AWS_CONFIG_FILE", config.to_str().unwrap())],
    );
    assert_eq!(done.code(), 0, "{}\n{}", done.stdout, done.stderr);
    assert_eq!(
        first_line(&done.stderr),
        format!(
            "sqsprobe: target aws · region eu-north-1 · account {MASKED} · REDIRECTED: \
             the profile's endpoint_url sends SQS calls to {}, which is not AWS",
            serve.url
        )
    );
    let start = run_start(&out);
    assert_eq!(start.region, "eu-north-1");
    assert_eq!(start.endpoint.as_deref(), Some(serve.url.as_str()));
}

/// An endpoint from the profile's `services` section is called that, not the
/// profile's own `endpoint_url`.
#[tokio::test]
async fn a_services_section_endpoint_is_called_that() {
    let serve = serve();
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("config");
    std::fs::write(
        &config,
        format!(
            "[profile ci]\nregion = eu-north-1\nservices = local\n\n[services local]\nsqs =\n  \
             endpoint_url = {url}\nsts =\n  endpoint_url = {url}\n",
            url = serve.url
        ),
    )
    .unwrap();
    let out = dir.path().join("out");
    let done = aws_run(
        out.to_str().unwrap(),
        &["--profile", "ci"],
        &[("AWS_CONFIG_FILE", config.to_str().unwrap())],
    );
    assert_eq!(done.code(), 0, "{}\n{}", done.stdout, done.stderr);
    assert!(
        first_line(&done.stderr).contains(&format!(
            "REDIRECTED: the sqs endpoint_url of the profile's services section sends SQS \
             calls to {}",
            serve.url
        )),
        "{}",
        done.stderr
    );
}

#[tokio::test]
async fn the_sqs_variable_wins_over_the_shared_one_as_in_the_sdk() {
    let serve = serve();
    let out = tempfile::tempdir().unwrap();
    // The shared variable names a dead port: the run passes only if SQS and STS both follow
    // their own variables, as the SDK's precedence says they must.
    let dead = format!("http://127.0.0.1:{}", common::free_port());
    let done = aws_run(
        out.path().to_str().unwrap(),
        &[],
        &[
            ("AWS_DEFAULT_REGION", "ap-southeast-2"),
            ("AWS_ENDPOINT_URL", &dead),
            ("AWS_ENDPOINT_URL_SQS", &serve.url),
            ("AWS_ENDPOINT_URL_STS", &serve.url),
        ],
    );
    assert_eq!(done.code(), 0, "{}\n{}", done.stdout, done.stderr);
    assert_eq!(
        first_line(&done.stderr),
        format!(
            "sqsprobe: target aws · region ap-southeast-2 · account {MASKED} · REDIRECTED: \
             AWS_ENDPOINT_URL_SQS sends SQS calls to {}, which is not AWS",
            serve.url
        )
    );
    assert_eq!(
        run_start(out.path()).endpoint.as_deref(),
        Some(serve.url.as_str())
    );
}

#[tokio::test]
async fn emulator_runs_cannot_be_redirected_by_the_aws_variables() {
    let serve = serve();
    let dead = format!("http://127.0.0.1:{}", common::free_port());
    let vars = [
        ("AWS_ENDPOINT_URL_SQS", dead.as_str()),
        ("AWS_ENDPOINT_URL", dead.as_str()),
    ];
    let out = tempfile::tempdir().unwrap();
    let embedded = aws_cmd(
        &["run", SUITE, "--out", out.path().to_str().unwrap()],
        &vars,
    );
    assert_eq!(
        embedded.code(),
        0,
        "{}\n{}",
        embedded.stdout,
        embedded.stderr
    );
    assert!(
        !embedded.stderr.contains("target aws"),
        "emulator runs print no AWS line: {}",
        embedded.stderr
    );

    let out = tempfile::tempdir().unwrap();
    let endpoint = aws_cmd(
        &[
            "run",
            SUITE,
            "--endpoint-url",
            &serve.url,
            "--out",
            out.path().to_str().unwrap(),
        ],
        &vars,
    );
    assert_eq!(
        endpoint.code(),
        0,
        "{}\n{}",
        endpoint.stdout,
        endpoint.stderr
    );
    assert_eq!(
        run_start(out.path()).endpoint.as_deref(),
        Some(serve.url.as_str())
    );
}

/// The `.snake_case()` name of an SQS operation, as the SDK's fluent builders spell it.
fn snake(op: &str) -> String {
    let mut s = String::new();
    for (i, c) in op.chars().enumerate() {
        if c.is_ascii_uppercase() && i > 0 {
            s.push('_');
        }
        s.push(c.to_ascii_lowercase());
    }
    s
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The IAM action of an SQS operation: a batch call is authorised by its single action.
fn iam_action(op: &str) -> String {
    format!("sqs:{}", op.strip_suffix("Batch").unwrap_or(op))
}

/// The actions of the IAM policy in docs/aws.md: the JSON block after `<!-- iam-policy -->`.
fn documented_actions() -> BTreeSet<String> {
    let doc = std::fs::read_to_string(root().join("docs/aws.md")).unwrap();
    let (_, after) = doc
        .split_once("<!-- iam-policy -->\n```json\n")
        .expect("docs/aws.md marks its IAM policy with <!-- iam-policy -->");
    let json = after.split("```").next().unwrap();
    let policy: serde_json::Value = serde_json::from_str(json).expect("a valid JSON policy");
    let mut actions = BTreeSet::new();
    for statement in policy["Statement"].as_array().expect("Statement") {
        for a in statement["Action"].as_array().expect("Action is a list") {
            actions.insert(a.as_str().unwrap().to_string());
        }
    }
    actions
}

#[test]
fn the_iam_policy_names_exactly_the_actions_the_harness_calls() {
    let mut files = Vec::new();
    rust_files(&root().join("src/runner"), &mut files);
    let source: String = files
        .iter()
        .map(|f| std::fs::read_to_string(f).unwrap())
        .collect();
    // Every SQS operation the runner (cases, teardown, preflight, sweep) sends through the SDK.
    let called: BTreeSet<String> = sqsprobe_emulator::OPERATIONS
        .iter()
        .filter(|op| source.contains(&format!(".{}()", snake(op))))
        .map(|op| iam_action(op))
        .chain(["sts:GetCallerIdentity".to_string()])
        .collect();
    assert!(called.contains("sqs:CreateQueue") && called.contains("sqs:ListQueueTags"));
    assert_eq!(
        documented_actions(),
        called,
        "docs/aws.md's IAM policy must name exactly what src/runner calls"
    );
    let doc = std::fs::read_to_string(root().join("docs/aws.md")).unwrap();
    assert!(doc.contains("\"arn:aws:sqs:*:*:sqsprobe-*\""));
}

/// docs/examples/*.yml parsed by PyYAML (in `.venv`, from moto), as JSON.
fn example(name: &str) -> serde_json::Value {
    let python = std::env::var_os("SQSPROBE_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|| root().join(".venv/bin/python"));
    let path = root().join("docs/examples").join(name);
    let out = Command::new(&python)
        .args([
            "-c",
            "import json, sys, yaml; print(json.dumps(yaml.safe_load(open(sys.argv[1]))))",
        ])
        .arg(&path)
        .output()
        .unwrap_or_else(|e| {
            panic!(
                "no Python at {} ({e}): run scripts/test or set SQSPROBE_PYTHON",
                python.display()
            )
        });
    assert!(
        out.status.success(),
        "{} does not parse: {}",
        path.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn the_github_workflow_parses_and_guards_every_step_that_matters() {
    let wf = example("github-nightly.yml");
    assert!(
        wf["concurrency"]["group"].is_string(),
        "a concurrency group"
    );
    assert_eq!(
        wf["permissions"]["id-token"], "write",
        "OIDC needs id-token: write"
    );
    let job = wf["jobs"].as_object().unwrap().values().next().unwrap();
    assert!(job["timeout-minutes"].is_u64());
    let steps = job["steps"].as_array().unwrap();
    let step = |needle: &str| {
        steps
            .iter()
            .find(|s| {
                s["uses"].as_str().is_some_and(|u| u.contains(needle))
                    || s["run"].as_str().is_some_and(|r| r.contains(needle))
            })
            .unwrap_or_else(|| panic!("no step with {needle}"))
    };
    assert!(step("aws-actions/configure-aws-credentials")["with"]["role-to-assume"].is_string());
    let run = step("sqsprobe run");
    let run_text = run["run"].as_str().unwrap();
    assert!(run_text.contains("--target aws") && run_text.contains("--run-id"));
    let sweeps: Vec<&str> = steps
        .iter()
        .filter_map(|s| s["run"].as_str())
        .filter(|r| r.contains("sqsprobe sweep"))
        .collect();
    assert_eq!(sweeps.len(), 2, "sweep before and after");
    assert!(sweeps[0].contains("--older-than") && sweeps[1].contains("--run-id"));
    // The guard as a flag: an unset variable is then `--allow-account ""`, refused, rather
    // than an environment variable that is silently absent.
    for command in [run_text, sweeps[0], sweeps[1]] {
        assert!(
            command.contains("--allow-account \"$AWS_ACCOUNT_ID\""),
            "{command}"
        );
    }
    assert!(job["env"]["AWS_REGION"].is_string());
    for needle in [sweeps[1], "GITHUB_STEP_SUMMARY", "upload-artifact", "junit"] {
        let s = step(needle);
        assert_eq!(
            s["if"].as_str().map(|c| c.contains("always()")),
            Some(true),
            "the step with {needle} must run when the run failed"
        );
    }
}

#[test]
fn the_gitlab_pipeline_parses_and_sweeps_after_whatever_happened() {
    let ci = example("gitlab-nightly.yml");
    let job = ci["sqsprobe-nightly"]
        .as_object()
        .expect("job sqsprobe-nightly");
    let script = job["script"].as_array().unwrap();
    let text: Vec<&str> = script.iter().filter_map(|l| l.as_str()).collect();
    assert!(
        text.iter()
            .any(|l| l.contains("sqsprobe sweep") && l.contains("--older-than"))
    );
    for line in text.iter().filter(|l| l.contains("sqsprobe ")) {
        assert!(
            line.contains("--allow-account \"$AWS_ACCOUNT_ID\""),
            "{line}"
        );
    }
    assert!(
        text.iter()
            .any(|l| l.contains("sqsprobe run") && l.contains("--target aws"))
    );
    let after: Vec<&str> = job["after_script"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|l| l.as_str())
        .collect();
    assert!(
        after
            .iter()
            .any(|l| l.contains("sqsprobe sweep") && l.contains("--run-id"))
    );
    assert!(job["id_tokens"].is_object(), "OIDC through id_tokens");
    assert_eq!(job["artifacts"]["when"], "always");
    assert!(job["artifacts"]["reports"]["junit"].is_string());
    assert!(job["timeout"].is_string());
    assert!(job["resource_group"].is_string());
}

/// `serve --reject-access-key` and `--expire-access-key` rehearse offline what a
/// nightly does when AWS refuses its credentials: the run stops before it creates anything,
/// in one clear error, and says which answer it got.
#[tokio::test]
async fn refused_and_expired_keys_can_be_rehearsed_offline() {
    for (flag, answer) in [
        ("--reject-access-key", "UnrecognizedClientException"),
        ("--expire-access-key", "ExpiredToken"),
    ] {
        let serve = Serve::start_with(&["--account-id", ACCOUNT, flag, "AKIAFAKEFORSQSPROBE"]);
        let out = tempfile::tempdir().unwrap();
        let done = aws_run(
            out.path().to_str().unwrap(),
            &["--region", "eu-west-1"],
            &[("AWS_ENDPOINT_URL", &serve.url)],
        );
        assert_ne!(done.code(), 0, "{flag}: {}\n{}", done.stdout, done.stderr);
        assert!(
            done.stderr.contains(answer),
            "{flag}: expected {answer} on stderr: {}",
            done.stderr
        );
        no_secrets(&done);
        assert_eq!(all_queues(&serve.url).await, Vec::<String>::new());
    }
}
