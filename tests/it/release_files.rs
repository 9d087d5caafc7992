//! The files of the release that cannot run on this machine, held to GitHub's schemas as the
//! CI examples are (`ci_examples.rs`, whose validate.py and vendored schemas this reuses): the
//! release workflow (`.github/workflows/*.yml`) against the workflow schema, the composite
//! action (`action.yml`) against the action schema. A broken action must be rejected and
//! placed, so a validator that accepts everything cannot pass. The archive names they use are
//! held to what scripts/package writes and Cargo.toml's binstall metadata reads.

use crate::ci_examples::validate;
use crate::common::root;

#[test]
fn the_release_workflow_is_a_valid_workflow() {
    let dir = root().join(".github/workflows");
    let mut files: Vec<String> = std::fs::read_dir(&dir)
        .expect(".github/workflows")
        .map(|e| {
            e.expect("an entry")
                .file_name()
                .to_string_lossy()
                .into_owned()
        })
        .filter(|n| n.ends_with(".yml") || n.ends_with(".yaml"))
        .map(|n| format!(".github/workflows/{n}"))
        .collect();
    files.sort();
    assert!(
        files.contains(&".github/workflows/release.yml".to_string()),
        "{files:?}"
    );
    let (code, out) = validate("github", &files, "");
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains(&format!("{} file(s) valid", files.len())),
        "{out}"
    );
}

#[test]
fn the_action_is_a_valid_composite_action() {
    let (code, out) = validate("action", &["action.yml".to_string()], "");
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("1 file(s) valid"), "{out}");
}

/// A composite step with `run:` but no `shell:` (GitHub refuses it), and an input without a
/// description.
const BROKEN_ACTION: &str = "\
name: x
description: y
inputs:
  version:
    required: true
runs:
  using: composite
  steps:
    - run: echo hi
";

#[test]
fn a_broken_action_is_rejected_and_placed() {
    let (code, out) = validate("action", &["-".to_string()], BROKEN_ACTION);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("$.inputs.version"), "{out}");
    assert!(out.contains("$.runs"), "{out}");
    let repaired = BROKEN_ACTION
        .replace(
            "    required: true\n",
            "    description: v\n    required: true\n",
        )
        .replace(
            "    - run: echo hi\n",
            "    - run: echo hi\n      shell: bash\n",
        );
    let (code, out) = validate("action", &["-".to_string()], &repaired);
    assert_eq!(code, 0, "{out}");
}

/// One name for the archives everywhere: scripts/package writes `sqsprobe-<version>-<target>`
/// (.tar.gz, a folder of that name inside), binstall's metadata, the install script and the
/// action look for exactly that.
#[test]
fn every_reader_of_the_archives_names_them_as_scripts_package_does() {
    let read = |p: &str| std::fs::read_to_string(root().join(p)).expect(p);
    let package = read("scripts/package");
    assert!(
        package.contains(r#"name="sqsprobe-$version-$name_target""#),
        "scripts/package no longer names archives sqsprobe-<version>-<target>"
    );
    let cargo = read("Cargo.toml");
    assert!(cargo.contains(
        r#"pkg-url = "{ repo }/releases/download/v{ version }/{ name }-{ version }-{ target }{ archive-suffix }""#
    ));
    assert!(cargo.contains(r#"bin-dir = "{ name }-{ version }-{ target }/{ bin }{ binary-ext }""#));
    let install = read("scripts/install.sh");
    assert!(install.contains(r#"sqsprobe-[^ ]+-$target\.tar\.gz"#));
    let workflow = read(".github/workflows/release.yml");
    for target in [
        "x86_64-unknown-linux-musl",
        "aarch64-unknown-linux-musl",
        "x86_64-apple-darwin",
        "aarch64-apple-darwin",
    ] {
        assert!(workflow.contains(&format!("target: {target}")), "{target}");
        assert!(read("action.yml").contains(target), "{target}");
        assert!(
            install.contains(target.split_once('-').unwrap().1),
            "{target}"
        );
    }
    assert!(workflow.contains("scripts/package --target"));
}
