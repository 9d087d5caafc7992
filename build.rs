//! Build script: what the binary carries with it, so it works copied alone into any folder.
//!
//! - Every file under `suites/` and `targets/`, found by walking the folders (no list to keep):
//!   `$OUT_DIR/builtin.rs` holds one `(path, bytes)` row per file, in the order `sqsprobe run`
//!   finds the files of a checkout's `suites/` (each folder's entries sorted by name, a folder's
//!   files where its name sorts), so a run of the built-in suites is the run of the checkout's.
//! - The commit it was built from, for `sqsprobe --version`: `$SQSPROBE_BUILD_COMMIT` when set
//!   (the Dockerfile's build argument: its context has no `.git`), else `git rev-parse HEAD`
//!   when the crate is a git checkout (a clone, `cargo install --git`), else the `git.sha1`
//!   cargo writes into `.cargo_vcs_info.json` of a published crate, else `unknown`.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The folders built into the binary, relative to the crate root.
const EMBEDDED: [&str; 2] = ["suites", "targets"];

fn main() {
    let root = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("set by cargo"));
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("set by cargo"));
    println!("cargo:rerun-if-changed=build.rs");

    let mut code = String::new();
    for folder in EMBEDDED {
        // A folder is scanned as a whole by cargo: a file added, changed or removed anywhere
        // under it runs this script again.
        println!("cargo:rerun-if-changed={folder}");
        let mut files = Vec::new();
        walk(&root, Path::new(folder), &mut files);
        let constant = folder.to_uppercase();
        code.push_str(&format!(
            "/// Every file under `{folder}/` at build time: (path as in the checkout, bytes).\n\
             pub(crate) const {constant}: &[(&str, &[u8])] = &[\n"
        ));
        for rel in files {
            let shown = rel
                .iter()
                .map(|c| c.to_string_lossy().into_owned())
                .collect::<Vec<_>>()
                .join("/");
            let abs = root.join(&rel);
            code.push_str(&format!(
                "    ({shown:?}, include_bytes!({:?})),\n",
                abs.to_string_lossy()
            ));
        }
        code.push_str("];\n");
    }
    std::fs::write(out.join("builtin.rs"), code).expect("write builtin.rs");

    println!("cargo:rustc-env=SQSPROBE_COMMIT={}", commit(&root));
}

/// Appends the regular files under `rel` (relative to `root`) depth first, each folder's
/// entries sorted by file name, as `walkdir`'s `sort_by_file_name` orders them for `run`.
fn walk(root: &Path, rel: &Path, files: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(root.join(rel)) else {
        return;
    };
    let mut names: Vec<_> = entries.filter_map(|e| Some(e.ok()?.file_name())).collect();
    names.sort();
    for name in names {
        let child = rel.join(&name);
        let full = root.join(&child);
        if full.is_dir() {
            walk(root, &child, files);
        } else if full.is_file() {
            files.push(child);
        }
    }
}

/// The commit, shortened to 12 hex digits, or `unknown`. `SQSPROBE_BUILD_COMMIT` names it
/// where the build sees no repository (a container build without `.git` in its context).
fn commit(root: &Path) -> String {
    println!("cargo:rerun-if-env-changed=SQSPROBE_BUILD_COMMIT");
    if let Ok(sha) = std::env::var("SQSPROBE_BUILD_COMMIT")
        && !sha.is_empty()
        && sha.chars().all(|c| c.is_ascii_hexdigit())
    {
        return short(&sha);
    }
    // Only the crate's own repository: a crate unpacked inside some other repository (a
    // vendored tarball) must not report that repository's commit.
    if root.join(".git").exists()
        && let Some(sha) = git(root, &["rev-parse", "HEAD"])
    {
        watch_head(root);
        return short(&sha);
    }
    let vcs_info = root.join(".cargo_vcs_info.json");
    println!("cargo:rerun-if-changed=.cargo_vcs_info.json");
    if let Ok(text) = std::fs::read_to_string(&vcs_info)
        && let Some(sha) = sha1_field(&text)
    {
        return short(&sha);
    }
    "unknown".to_string()
}

/// Runs the script again when HEAD moves: HEAD itself, the branch it points at, packed refs.
fn watch_head(root: &Path) {
    let mut watched = vec![git(root, &["rev-parse", "--git-path", "HEAD"])];
    if let Some(branch) = git(root, &["symbolic-ref", "-q", "HEAD"]) {
        watched.push(git(root, &["rev-parse", "--git-path", &branch]));
    }
    watched.push(git(root, &["rev-parse", "--git-path", "packed-refs"]));
    for path in watched.into_iter().flatten() {
        let path = root.join(path);
        // A path that does not exist would run the script on every build.
        if path.exists() {
            println!("cargo:rerun-if-changed={}", path.display());
        }
    }
}

/// `git ARGS` in `root`, its trimmed output when it succeeds.
fn git(root: &Path, args: &[&str]) -> Option<String> {
    let out = Command::new("git")
        .args(args)
        .current_dir(root)
        .output()
        .ok()?;
    let text = String::from_utf8(out.stdout).ok()?.trim().to_string();
    (out.status.success() && !text.is_empty()).then_some(text)
}

/// The value of `"sha1": "…"` in `.cargo_vcs_info.json` (a fixed format cargo writes; no JSON
/// parser is built for the build script for one field).
fn sha1_field(text: &str) -> Option<String> {
    let after = &text[text.find("\"sha1\"")? + "\"sha1\"".len()..];
    let start = after.find('"')? + 1;
    let len = after[start..].find('"')?;
    let sha = &after[start..start + len];
    sha.chars()
        .all(|c| c.is_ascii_hexdigit())
        .then(|| sha.to_string())
}

/// The first 12 hex digits, as `git log --abbrev=12` shows a commit.
fn short(sha: &str) -> String {
    sha.chars().take(12).collect()
}
