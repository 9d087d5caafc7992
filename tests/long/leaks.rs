//! One masking rule everywhere ("Secrets"): no receipt handle, body, account id,
//! credential or IAM principal that crossed the wire reaches the evidence, a report or the
//! terminal — over either wire protocol, across every shipped suite. A recording proxy in
//! front of a real moto server collects what actually crossed; moto's account id
//! (`123456789012`) is the canary for account ids.

use crate::common;

use common::proxy::{Mischief, Rigged};
use common::{Moto, root, run_bin, single_run_dir};
use std::time::Duration;

const LIMIT: Duration = Duration::from_secs(240);
const MOTO_ACCOUNT: &str = "123456789012";
/// The SenderId moto gives every message (`moto/sqs/models.py` `DEFAULT_SENDER_ID`), which
/// `msg-sender-id-shape` and the attribute cases receive.
const MOTO_SENDER_ID: &str = "AIDAIT2UOQQY3AUEKVGXU";

/// Every output of a run: its folder's files and what it printed.
fn outputs(out: &std::path::Path, run: &common::Finished) -> Vec<(String, String)> {
    let mut all = common::run_folder_text(&single_run_dir(out));
    all.push(("terminal".into(), format!("{}\n{}", run.stdout, run.stderr)));
    all
}

fn assert_absent(outputs: &[(String, String)], secret: &str, what: &str) {
    for (name, text) in outputs {
        assert!(
            !text.contains(secret),
            "{what} leaked into {name}: {secret}"
        );
    }
}

#[test]
fn nothing_secret_reaches_any_output_over_either_protocol_across_every_suite() {
    let moto = Moto::start();
    for protocol in ["json", "query"] {
        let rigged = Rigged::in_front_of(moto.addr, Mischief::default());
        let proxy = &rigged.proxy;
        let out = tempfile::tempdir().unwrap();
        let run = run_bin(
            &[
                "run",
                "--endpoint-url",
                &proxy.url,
                "--protocol",
                protocol,
                "--out",
                out.path().to_str().unwrap(),
            ],
            &root(),
            LIMIT,
        );
        // moto diverges from AWS in many cases (no profile here): failures are expected; what
        // matters is what was written.
        assert!(
            [0, 4, 5].contains(&run.code()),
            "{protocol}: {}",
            run.stderr
        );
        let seen = rigged.seen();
        assert!(
            seen.handles.len() >= 50,
            "{protocol}: the proxy saw too few handles: {}",
            seen.handles.len()
        );
        let outputs = outputs(out.path(), &run);
        // Text under 8 bytes is not masked in free text (docs/evidence-format.md): the
        // literal handles some cases write (`garbage`) and one-word bodies.
        let long = |s: &&String| s.len() >= sqsprobe_core::evidence::digest::MIN_SECRET;
        for handle in seen.handles.iter().filter(long) {
            assert_absent(&outputs, handle, "a receipt handle");
        }
        for body in seen.bodies.iter().filter(long) {
            assert_absent(&outputs, body, "a message body");
        }
        assert_absent(&outputs, MOTO_ACCOUNT, "the account id");
        assert_absent(&outputs, MOTO_SENDER_ID, "a SenderId");
    }
}

#[test]
fn the_runs_credentials_and_principal_never_reach_an_output_even_when_a_server_echoes_them() {
    let moto = Moto::start();
    let rigged = Rigged::in_front_of(
        moto.addr,
        Mischief {
            echo_credentials: Some("SendMessage".into()),
            ..Default::default()
        },
    );
    let proxy = &rigged.proxy;
    let key_id = "AKIAFAKEKEYFORTESTS42";
    let secret = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYFAKESECRET";
    let token = "IQoJb3JpZ2luX2VjEFAKE//////////wEaCXVzLWVhc3QtMSJHMEUCIQDfake";
    let out = tempfile::tempdir().unwrap();
    let child = std::process::Command::new(common::bin())
        .args([
            "run",
            "suites/stale-handle.yaml",
            "--target",
            "aws",
            "--out",
            out.path().to_str().unwrap(),
        ])
        .current_dir(root())
        .env("AWS_ENDPOINT_URL", &proxy.url)
        .env("AWS_REGION", "us-east-1")
        .env("AWS_ACCESS_KEY_ID", key_id)
        .env("AWS_SECRET_ACCESS_KEY", secret)
        .env("AWS_SESSION_TOKEN", token)
        .env_remove("AWS_PROFILE")
        .env("AWS_CONFIG_FILE", "/nonexistent")
        .env("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let run = common::wait_bounded(child, LIMIT);
    // Every send is refused with the echo: the cases fail, and say so without the secrets.
    assert_eq!(run.code(), 4, "{}\n{}", run.stdout, run.stderr);
    let outputs = outputs(out.path(), &run);
    let evidence = &outputs
        .iter()
        .find(|(n, _)| n == "evidence.jsonl")
        .unwrap()
        .1;
    assert!(
        evidence.contains("request signed by <credential> with token <credential>"),
        "the echo should be there, masked"
    );
    for (secret, what) in [
        (key_id, "the access key id"),
        (secret, "the secret key"),
        (token, "the session token"),
        ("deploy-role", "the role name"),
        ("ci-session-42", "the session name"),
        (MOTO_ACCOUNT, "the account id"),
    ] {
        assert_absent(&outputs, secret, what);
    }
}
