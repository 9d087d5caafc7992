//! Opt-in: the shipped suites against real AWS, in a disposable account.
//!
//! Ignored by default (it needs credentials and costs a few requests). Run it with
//! `SQSPROBE_AWS_TESTS=1 cargo test --test it -- --ignored aws::`; the default credential chain
//! applies (`AWS_PROFILE`, ...) and a region must be named (`AWS_REGION`, the profile's): a run
//! refuses `--target aws` without one. Set `SQSPROBE_ALLOW_ACCOUNT` to guard the account.
//! The same path offline, at `sqsprobe serve`, is `tests/it/aws_path.rs`.

use crate::common;

use common::{root, run_bin, single_run_dir};
use sqsprobe_core::evidence::{Record, read_evidence};
use std::time::Duration;

#[test]
#[ignore = "needs AWS credentials: SQSPROBE_AWS_TESTS=1 cargo test --test it -- --ignored aws::"]
fn shipped_suites_pass_against_real_aws_and_leave_nothing_behind() {
    assert_eq!(
        std::env::var("SQSPROBE_AWS_TESTS").as_deref(),
        Ok("1"),
        "set SQSPROBE_AWS_TESTS=1 to confirm this may create queues in the current AWS account"
    );
    let out_dir = tempfile::tempdir().unwrap();
    let out = out_dir.path().to_str().unwrap();
    let run = run_bin(
        &["run", "--target", "aws", "--out", out],
        &root(),
        Duration::from_secs(600),
    );
    assert_eq!(
        run.code(),
        0,
        "stdout:\n{}\nstderr:\n{}",
        run.stdout,
        run.stderr
    );
    // The first line: region, masked account, and AWS's own endpoint (no redirection).
    let first = run.stderr.lines().next().unwrap_or_default();
    assert!(
        first.starts_with("sqsprobe: target aws · region ")
            && first.contains(" · account ")
            && !first.contains("REDIRECTED"),
        "{first}"
    );
    let records = read_evidence(&single_run_dir(out_dir.path()).join("evidence.jsonl")).unwrap();
    for r in &records {
        if let Record::CaseEnd(e) = r {
            assert!(e.queues.iter().all(|q| q.deleted), "{} left queues", e.case);
        }
    }
    // Account ids never appear, even though real queue URLs and ARNs carry them.
    let text =
        std::fs::read_to_string(single_run_dir(out_dir.path()).join("evidence.jsonl")).unwrap();
    assert_eq!(
        sqsprobe_core::evidence::digest::mask_account_ids(&text),
        text,
        "an account id reached the evidence"
    );
}
