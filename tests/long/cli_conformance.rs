//! Conformance machinery end to end: target profiles, the matrix and baselines, with the
//! embedded emulator and a real moto server as the two targets.

use crate::common;

use common::{Moto, root, run_bin, single_run_dir};
use sqsprobe_core::evidence::{Record, format::Verdict, read_evidence};
use std::path::{Path, PathBuf};
use std::time::Duration;

const LIMIT: Duration = Duration::from_secs(180);
const FIXTURE: &str = "tests/fixtures/moto-diverges.yaml";

/// Runs `sqsprobe run` with `args` into a fresh folder under `out`; returns the run folder.
fn run_into(out: &Path, args: &[&str], expected_code: i32) -> PathBuf {
    run_into_with_stdout(out, args, expected_code).0
}

/// [`run_into`], also returning what the run printed.
fn run_into_with_stdout(out: &Path, args: &[&str], expected_code: i32) -> (PathBuf, String) {
    std::fs::create_dir_all(out).unwrap();
    let mut all = vec!["run", "--out", out.to_str().unwrap(), "-q"];
    all.extend_from_slice(args);
    let run = run_bin(&all, &root(), LIMIT);
    assert_eq!(
        run.code(),
        expected_code,
        "{all:?}\nstdout:\n{}\nstderr:\n{}",
        run.stdout,
        run.stderr
    );
    (single_run_dir(out), run.stdout)
}

fn verdicts(dir: &Path) -> Vec<(String, Verdict, Option<String>)> {
    read_evidence(&dir.join("evidence.jsonl"))
        .unwrap()
        .into_iter()
        .filter_map(|r| match r {
            Record::CaseEnd(e) => Some((e.case, e.verdict, e.profile_note)),
            _ => None,
        })
        .collect()
}

/// The README's worked example shows the summary of this very command (`run --endpoint-url
/// <moto> --target-profile moto` over `suites/`): every count line of it must be what the run
/// printed, so the README cannot go stale when a case or a profile entry is added.
fn readme_shows_this_run(printed: &str) {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let counts: Vec<&str> = printed
        .lines()
        .map(str::trim_end)
        .filter(|l| {
            l.contains(" passed, ")
                || l.contains("known divergence of the target profile")
                || l.contains("cases were not run")
                || l.starts_with("target profile `moto`:")
        })
        .collect();
    assert_eq!(counts.len(), 4, "the summary changed shape:\n{printed}");
    // The example before it runs the top-level suites (`run suites/*.yaml`), all passing on moto.
    let mut playbook = 0;
    for entry in std::fs::read_dir(root().join("suites")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "yaml") {
            let text = std::fs::read_to_string(&path).unwrap();
            playbook += sqsprobe_core::suite::parse_suite(
                &path.display().to_string(),
                &text,
                &sqsprobe_core::suite::Limits::default(),
            )
            .unwrap()
            .cases
            .len();
        }
    }
    let line = format!("{playbook} passed, 0 failed, 0 inconclusive, 0 errors");
    assert!(
        readme.lines().any(|r| r == line) && readme.contains(&format!("(1/{playbook})")),
        "README.md's first moto example should show {line:?}"
    );
    for line in counts {
        assert!(
            readme.lines().any(|r| r.trim_end() == line),
            "README.md's moto example does not show this run's line\n  {line}\n(update the block after `--target-profile moto` in README.md)"
        );
    }
}

#[test]
fn matrix_of_embedded_and_moto_over_the_shipped_suites() {
    let moto = Moto::start();
    let tmp = tempfile::tempdir().unwrap();
    // The embedded emulator in virtual time: the same verdicts, none of them waited for.
    let embedded = run_into(
        &tmp.path().join("e"),
        &["--target-profile", "embedded", "--clock", "virtual"],
        0,
    );
    // All of suites/, conformance included: moto's real divergences are in its profile, so the
    // run must exit 0 with every failure accounted for.
    let (on_moto, printed) = run_into_with_stdout(
        &tmp.path().join("m"),
        &["--endpoint-url", &moto.url, "--target-profile", "moto"],
        0,
    );
    readme_shows_this_run(&printed);
    let out = tmp.path().join("matrix");
    let m = run_bin(
        &[
            "matrix",
            embedded.to_str().unwrap(),
            on_moto.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ],
        &root(),
        LIMIT,
    );
    assert_eq!(m.code(), 0, "{}\n{}", m.stdout, m.stderr);

    let json: serde_json::Value = common::read_json(&out.join("matrix.json"));
    let names: Vec<&str> = json["columns"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, vec!["embedded (virtual clock)", "moto"]);
    let areas: Vec<&str> = json["areas"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["area"].as_str().unwrap())
        .collect();
    // Every area of the fixed list, in its order: the shipped suites cover them all.
    let all: Vec<&str> = sqsprobe_core::suite::area::AREAS
        .iter()
        .map(|a| a.key)
        .collect();
    assert_eq!(areas, all);
    // README.md: "the conformance suite (over 170 cases in the matrix's twelve areas)".
    let mut conformance_cases = 0;
    for entry in std::fs::read_dir(root().join("suites/conformance")).unwrap() {
        let path = entry.unwrap().path();
        let text = std::fs::read_to_string(&path).unwrap();
        let suite = sqsprobe_core::suite::parse_suite(
            &path.display().to_string(),
            &text,
            &sqsprobe_core::suite::Limits::default(),
        )
        .unwrap();
        conformance_cases += suite.cases.len();
    }
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    assert!(
        conformance_cases > 170
            && all.len() == 12
            && readme.contains("over 170 cases in the matrix's twelve areas"),
        "{conformance_cases} conformance cases, {} areas: update README.md",
        all.len()
    );
    let rows: usize = json["areas"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["rows"].as_array().unwrap().len())
        .sum();
    let cases = verdicts(&embedded).len();
    assert_eq!(rows, cases);
    // The embedded emulator runs every case but those limited to the other wire protocol
    // (`protocols: [query]`: this run is json).
    let other_protocol: Vec<_> = verdicts(&embedded)
        .into_iter()
        .filter(|(_, v, _)| *v == Verdict::Unsupported)
        .collect();
    // The suite has query-only cases (its wire details), so this is never vacuously true.
    assert!(!other_protocol.is_empty(), "no query-only case was skipped");
    assert!(
        other_protocol
            .iter()
            .all(|(_, _, note)| note.as_deref() == Some("protocols: [query]")),
        "{other_protocol:?}"
    );
    let embedded_score = &json["columns"][0]["score"];
    assert_eq!(embedded_score["run"], cases - other_protocol.len());
    assert_eq!(embedded_score["conformance"], 1.0);
    // moto: its unsupported cases are not run, its known divergences are not conforming, and
    // everything else passes (the profile accepts the rest).
    let moto_score = &json["columns"][1]["score"];
    let unsupported = moto_score["unsupported"].as_u64().unwrap() as usize;
    let known = moto_score["known_divergence"].as_u64().unwrap();
    assert!(unsupported > 0 && known > 0, "{moto_score}");
    assert_eq!(moto_score["run"], cases - unsupported);
    assert_eq!(moto_score["fail"], 0);
    // Nothing fails outside the profile: passes and known divergences are every case run.
    assert_eq!(
        moto_score["pass"].as_u64().unwrap() + known,
        moto_score["run"].as_u64().unwrap()
    );
    assert!(moto_score["conformance"].as_f64().unwrap() < 1.0);
    // Every shipped case names its area and aspect, so the semantics and validation scores
    // together count every case, and every area is one of the fixed list.
    for col in json["columns"].as_array().unwrap() {
        assert_eq!(
            col["semantics"]["run"].as_u64().unwrap() + col["validation"]["run"].as_u64().unwrap(),
            col["score"]["run"].as_u64().unwrap(),
            "{col}"
        );
    }
    for area in json["areas"].as_array().unwrap() {
        let key = area["area"].as_str().unwrap();
        assert!(sqsprobe_core::suite::area::area(key).is_some(), "{key}");
    }
    // moto diverges in semantics somewhere (move tasks it does not implement are unsupported,
    // but its lapsed FIFO handle deletes): the surprises list is not empty, and cites cases.
    assert!(
        !json["columns"][1]["surprises"]
            .as_array()
            .unwrap()
            .is_empty(),
        "{}",
        json["columns"][1]
    );
    let md = std::fs::read_to_string(out.join("matrix.md")).unwrap();
    assert!(
        md.contains("| `partial-batch-delete-one-invalid-handle` | semantics | pass | pass |"),
        "{md}"
    );
    assert!(
        md.contains("| `batch-delete-too-many-entries` | validation | pass | known divergence ["),
        "{md}"
    );
}

#[test]
fn profile_maps_known_divergences_and_skips_unsupported_cases_on_moto() {
    let moto = Moto::start();
    let tmp = tempfile::tempdir().unwrap();
    // Without the profile both fixture cases fail on moto...
    let plain = run_into(
        &tmp.path().join("plain"),
        &[FIXTURE, "--endpoint-url", &moto.url],
        4,
    );
    assert!(verdicts(&plain).iter().all(|(_, v, _)| *v == Verdict::Fail));
    // ...with it, the run passes: one known divergence, one not run.
    let profiled = run_into(
        &tmp.path().join("profiled"),
        &[
            FIXTURE,
            "--endpoint-url",
            &moto.url,
            "--target-profile",
            "tests/fixtures/profile-moto-diverges.yaml",
        ],
        0,
    );
    let v = verdicts(&profiled);
    assert_eq!(v.len(), 2);
    let known = v
        .iter()
        .find(|(c, _, _)| c == "change-visibility-after-delete")
        .unwrap();
    assert_eq!(known.1, Verdict::KnownDivergence);
    assert!(known.2.as_deref().unwrap().contains("moto/sqs/models.py"));
    let skipped = v
        .iter()
        .find(|(c, _, _)| c == "fifo-delete-after-lease-lapsed")
        .unwrap();
    assert_eq!(skipped.1, Verdict::Unsupported);
    let records = read_evidence(&profiled.join("evidence.jsonl")).unwrap();
    assert!(records.iter().all(|r| match r {
        Record::Call(c) => c.case != "fifo-delete-after-lease-lapsed",
        Record::CaseStart(s) => s.case != "fifo-delete-after-lease-lapsed",
        Record::RunStart(s) => s.target_profile.as_deref() == Some("moto-fixture"),
        _ => true,
    }));
    let junit = std::fs::read_to_string(profiled.join("junit.xml")).unwrap();
    assert!(junit.contains("type=\"unsupported\""), "{junit}");

    // The same profile on the embedded emulator: the known divergence does not show.
    let embedded = run_bin(
        &[
            "run",
            FIXTURE,
            "-q",
            "--out",
            tmp.path().join("emb").to_str().unwrap(),
            "--target-profile",
            "tests/fixtures/profile-moto-diverges.yaml",
        ],
        &root(),
        LIMIT,
    );
    assert_eq!(embedded.code(), 0, "{}", embedded.stderr);
    assert!(
        embedded
            .stdout
            .contains("known divergence no longer observed")
            && embedded
                .stdout
                .contains("    change-visibility-after-delete\n"),
        "{}",
        embedded.stdout
    );
}

#[test]
fn a_bad_profile_is_refused_with_its_line_before_anything_runs() {
    let tmp = tempfile::tempdir().unwrap();
    let profile = tmp.path().join("bad.yaml");
    std::fs::write(
        &profile,
        "target: x\nknown_divergences:\n  - case: change-visibility-after-delete\n    reasn: typo\n    reference: r\n",
    )
    .unwrap();
    let out = tmp.path().join("out");
    let run = run_bin(
        &[
            "run",
            FIXTURE,
            "--target-profile",
            profile.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ],
        &root(),
        LIMIT,
    );
    assert_eq!(run.code(), 2, "{}", run.stderr);
    assert!(run.stderr.contains("bad.yaml:4:5"), "{}", run.stderr);
    assert!(
        run.stderr.contains("did you mean `reason`?"),
        "{}",
        run.stderr
    );
    assert!(!out.exists());

    let missing = run_bin(
        &["run", "--target-profile", "no-such-target"],
        &root(),
        LIMIT,
    );
    assert_eq!(missing.code(), 1);
    assert!(
        missing.stderr.contains("targets/no-such-target.yaml"),
        "{}",
        missing.stderr
    );
}

#[test]
fn baselines_compare_identical_for_embedded_and_report_moto_differences() {
    let moto = Moto::start();
    let tmp = tempfile::tempdir().unwrap();
    let first = run_into(&tmp.path().join("1"), &[FIXTURE], 0);
    let second = run_into(&tmp.path().join("2"), &[FIXTURE], 0);
    let baselines = tmp.path().join("baselines");
    let save = run_bin(
        &[
            "baseline",
            "save",
            first.to_str().unwrap(),
            "--dir",
            baselines.to_str().unwrap(),
        ],
        &root(),
        LIMIT,
    );
    assert_eq!(save.code(), 0, "{}", save.stderr);
    let saved: Vec<PathBuf> = std::fs::read_dir(&baselines)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(saved.len(), 1);
    let base = &saved[0];
    let name = base.file_name().unwrap().to_str().unwrap();
    assert!(name.starts_with("embedded-us-east-1-20"), "{name}");
    assert!(base.join("evidence.jsonl").is_file() && base.join("baseline.json").is_file());
    let json = std::fs::read_to_string(base.join("baseline.json")).unwrap();
    assert!(
        !json.contains("handle_digest") && !json.contains("AQEB"),
        "{json}"
    );

    let same = run_bin(
        &[
            "baseline",
            "compare",
            base.to_str().unwrap(),
            second.to_str().unwrap(),
        ],
        &root(),
        LIMIT,
    );
    assert_eq!(same.code(), 0, "{}\n{}", same.stdout, same.stderr);
    assert!(
        same.stdout.contains("identical to baseline"),
        "{}",
        same.stdout
    );
    assert!(second.join("comparison.md").is_file());

    let on_moto = run_into(
        &tmp.path().join("m"),
        &[FIXTURE, "--endpoint-url", &moto.url],
        4,
    );
    let differ = run_bin(
        &[
            "baseline",
            "compare",
            base.to_str().unwrap(),
            on_moto.to_str().unwrap(),
        ],
        &root(),
        LIMIT,
    );
    assert_eq!(differ.code(), 4, "{}\n{}", differ.stdout, differ.stderr);
    assert!(
        differ.stdout.contains(
            "tests/fixtures/moto-diverges.yaml:22: case `change-visibility-after-delete`: step 4 ChangeMessageVisibility: error code: InvalidParameterValue → ReceiptHandleIsInvalid"
        ),
        "{}",
        differ.stdout
    );
    assert!(
        differ.stdout.contains("verdict: pass → fail"),
        "{}",
        differ.stdout
    );
    let md = std::fs::read_to_string(on_moto.join("comparison.md")).unwrap();
    assert!(md.contains("difference(s) in 2 case(s)"), "{md}");
}

#[test]
fn matrix_shows_the_facts_it_is_given_and_refuses_a_bad_document() {
    let tmp = tempfile::tempdir().unwrap();
    let run = run_into(&tmp.path().join("r"), &[FIXTURE], 0);
    let facts = tmp.path().join("facts.json");
    std::fs::write(
        &facts,
        r#"{"format": "sqsprobe-facts/1", "measured_at": "2026-12-02T04:00:00Z", "cpus": 2,
            "targets": [{"target": "embedded", "version": "sqsprobe test", "protocols": ["json"],
              "protocol_measured": "json", "startup_ms": 40, "idle_rss_kib": 20480,
              "bench": {"send_per_second": 50000, "noop_per_second": 70000, "ceiling_ratio": 0.71}}]}"#,
    )
    .unwrap();
    let out = tmp.path().join("m");
    let args = |f: &Path| {
        vec![
            "matrix".to_string(),
            run.display().to_string(),
            "--facts".to_string(),
            f.display().to_string(),
            "--out".to_string(),
            out.display().to_string(),
        ]
    };
    let a = args(&facts);
    let m = run_bin(
        &a.iter().map(String::as_str).collect::<Vec<_>>(),
        &root(),
        LIMIT,
    );
    assert_eq!(m.code(), 0, "{}\n{}", m.stdout, m.stderr);
    let md = std::fs::read_to_string(out.join("matrix.md")).unwrap();
    assert!(md.contains("## Practical facts"), "{md}");
    assert!(md.contains("| embedded | sqsprobe test |"), "{md}");
    assert!(md.contains("50000/s (0.71 of its no-op 70000/s)"), "{md}");
    let html = std::fs::read_to_string(out.join("matrix.html")).unwrap();
    assert_eq!(html.matches("<circle").count(), 2, "{html}");
    let json: serde_json::Value = common::read_json(&out.join("matrix.json"));
    assert_eq!(json["facts"]["targets"][0]["startup_ms"], 40);

    let bad = tmp.path().join("bad.json");
    std::fs::write(&bad, r#"{"format": "other"}"#).unwrap();
    let a = args(&bad);
    let m = run_bin(
        &a.iter().map(String::as_str).collect::<Vec<_>>(),
        &root(),
        LIMIT,
    );
    assert_eq!(m.code(), 1, "{}\n{}", m.stdout, m.stderr);
    assert!(
        m.stderr.contains("bad.json: not a facts document"),
        "{}",
        m.stderr
    );
}
