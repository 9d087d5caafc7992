//! docs/examples/*.yml against the CI services' schemas: every GitHub Actions
//! workflow there (`github-*.yml`) is valid against SchemaStore's schema of workflows, every
//! GitLab pipeline (`gitlab-*.yml`) against GitLab's own schema of `.gitlab-ci.yml`, both
//! vendored in tests/fixtures/ci-schemas/ (its README says where from). A reader copies these files into a repository and the
//! schedule fires at night: a misspelt key or a value of the wrong type is found then, by a
//! job that does not start, unless it is found here.
//!
//! The check is tests/fixtures/ci-schemas/validate.py, run by the project's Python
//! (`SQSPROBE_PYTHON`, which scripts/test points at .venv, where scripts/venv installs the
//! pinned jsonschema and PyYAML). A small broken workflow and pipeline, embedded below, must be
//! rejected with the place of each error, and their repaired versions accepted, so a validator
//! that accepts everything (or refuses everything) cannot make these tests pass.

use crate::common;

use common::{root, wait_bounded};
use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::Duration;

const LIMIT: Duration = Duration::from_secs(60);

/// The examples this issue promised; a rename must not quietly drop one from the check.
const EXPECTED: [&str; 5] = [
    "github-nightly.yml",
    "github-partitioned.yml",
    "github-history.yml",
    "gitlab-nightly.yml",
    "gitlab-history.yml",
];

/// The Python with jsonschema and PyYAML. No fallback: a Python without them would fail with
/// an import error that says nothing about how to get them.
fn python() -> PathBuf {
    std::env::var_os("SQSPROBE_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            panic!(
                "SQSPROBE_PYTHON is not set: run scripts/test (it installs jsonschema and PyYAML \
                 into .venv and sets SQSPROBE_PYTHON to .venv/bin/python)"
            )
        })
}

/// Runs validate.py for `kind` (`github`, `gitlab` or `action`) over `files`, `-` reading `stdin`;
/// returns its exit code and what it printed.
pub fn validate(kind: &str, files: &[String], stdin: &str) -> (i32, String) {
    let python = python();
    let mut child = Command::new(&python)
        .arg(root().join("tests/fixtures/ci-schemas/validate.py"))
        .arg(kind)
        .args(files)
        .current_dir(root())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| {
            panic!(
                "cannot start {} ({e}): run scripts/test, or set SQSPROBE_PYTHON",
                python.display()
            )
        });
    child
        .stdin
        .take()
        .expect("piped stdin")
        .write_all(stdin.as_bytes())
        .expect("write the document to validate.py");
    let done = wait_bounded(child, LIMIT);
    (done.code(), format!("{}{}", done.stdout, done.stderr))
}

/// The examples, by the schema that holds them: (github files, gitlab files).
fn examples() -> (Vec<String>, Vec<String>) {
    let dir = root().join("docs/examples");
    let mut github = Vec::new();
    let mut gitlab = Vec::new();
    for entry in std::fs::read_dir(&dir).expect("docs/examples") {
        let path = entry.expect("a directory entry").path();
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        if !(name.ends_with(".yml") || name.ends_with(".yaml")) {
            continue;
        }
        let shown = format!("docs/examples/{name}");
        if name.starts_with("github-") {
            github.push(shown);
        } else if name.starts_with("gitlab-") {
            gitlab.push(shown);
        } else {
            panic!(
                "{shown}: name it github-… or gitlab-… so this test knows which schema it must \
                 be valid against"
            );
        }
    }
    github.sort();
    gitlab.sort();
    (github, gitlab)
}

#[test]
fn every_example_is_valid_against_its_services_schema() {
    let (github, gitlab) = examples();
    for name in EXPECTED {
        let shown = format!("docs/examples/{name}");
        assert!(
            github.contains(&shown) || gitlab.contains(&shown),
            "{shown} is missing"
        );
    }
    // Both kinds are checked before failing, so one run names every error in every file.
    let mut invalid = Vec::new();
    for (kind, files) in [("github", &github), ("gitlab", &gitlab)] {
        let (code, out) = validate(kind, files, "");
        if code != 0 || !out.contains(&format!("{} file(s) valid", files.len())) {
            invalid.push(format!("{kind} examples (exit {code}):\n{out}"));
        }
    }
    assert!(
        invalid.is_empty(),
        "examples not valid against their schema:\n{}",
        invalid.join("\n")
    );
}

/// A job without `runs-on` and with a timeout that is not a number: GitHub refuses to start it.
const BROKEN_WORKFLOW: &str = "\
on:
  schedule:
    - cron: \"17 3 * * *\"
jobs:
  nightly:
    timeout-minutes: \"soon\"
    steps:
      - run: echo night
";

#[test]
fn a_broken_workflow_is_rejected_and_each_error_placed() {
    let (code, out) = validate("github", &["-".to_string()], BROKEN_WORKFLOW);
    assert_eq!(code, 1, "the broken workflow was not rejected:\n{out}");
    assert!(
        out.contains("$.jobs.nightly['timeout-minutes']: 'soon' is not of type 'number'"),
        "{out}"
    );
    assert!(
        out.contains("$.jobs.nightly: 'runs-on' is a required property"),
        "{out}"
    );

    // Repaired, the same workflow passes: the errors were the two breaks, not the reading. (It
    // also shows `on:` read as the key "on", as GitHub reads it, not YAML 1.1's boolean true.)
    let repaired = BROKEN_WORKFLOW.replace(
        "    timeout-minutes: \"soon\"\n",
        "    runs-on: ubuntu-latest\n    timeout-minutes: 55\n",
    );
    let (code, out) = validate("github", &["-".to_string()], &repaired);
    assert_eq!(code, 0, "the repaired workflow was rejected:\n{out}");
}

/// An artefact rule GitLab does not know; then a job key given twice (GitLab keeps the last
/// value, so the first is a setting that silently does nothing).
const BROKEN_PIPELINE: &str = "\
nightly:
  script:
    - echo night
  timeout: 55 minutes
  artifacts:
    when: sometimes
    paths: [evidence/]
";

#[test]
fn a_broken_pipeline_is_rejected_and_each_error_placed() {
    let (code, out) = validate("gitlab", &["-".to_string()], BROKEN_PIPELINE);
    assert_eq!(code, 1, "the broken pipeline was not rejected:\n{out}");
    assert!(
        out.contains("$.nightly.artifacts.when: 'sometimes' is not one of"),
        "{out}"
    );

    let twice = BROKEN_PIPELINE.replace("    when: sometimes\n", "    when: always\n")
        + "  timeout: 5 minutes\n";
    let (code, out) = validate("gitlab", &["-".to_string()], &twice);
    assert_eq!(code, 1, "a key given twice was not rejected:\n{out}");
    assert!(out.contains("the key 'timeout' is given twice"), "{out}");

    let repaired = BROKEN_PIPELINE.replace("    when: sometimes\n", "    when: always\n");
    let (code, out) = validate("gitlab", &["-".to_string()], &repaired);
    assert_eq!(code, 0, "the repaired pipeline was rejected:\n{out}");
}
