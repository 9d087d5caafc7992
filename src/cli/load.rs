//! Reading suite files from disk and selecting cases (the I/O edge of `suite`).

use sqsprobe_core::suite::{self, Case, Diagnostic, Limits, Suite};
use std::path::{Path, PathBuf};

/// The folder used when no path is given.
pub(super) const DEFAULT_SUITES: &str = "suites";

/// Parsed suites, or everything that is wrong with them, rendered for a terminal.
pub(super) enum Loaded {
    Ok(Vec<Suite>),
    /// Rendered diagnostics (hurl style) and how many there were.
    Invalid {
        rendered: String,
        count: usize,
    },
    /// A path that could not be read (not a suite problem: exit 1).
    Unreadable(String),
}

/// Finds suite files under `paths`: files as given; folders searched recursively for
/// `*.yaml` / `*.yml`, sorted by name so runs are reproducible. Symbolic links are followed,
/// except one that leads back to a folder being walked (a loop: its files are found through
/// the folder itself). A file reached twice (`a.yaml a.yaml`, `./a.yaml`, a folder and a file
/// in it, a link) is one file, kept under the first spelling it was reached by.
pub(super) fn discover(paths: &[PathBuf]) -> Result<Vec<PathBuf>, String> {
    let paths: Vec<PathBuf> = if paths.is_empty() {
        vec![PathBuf::from(DEFAULT_SUITES)]
    } else {
        paths.to_vec()
    };
    let mut files = Vec::new();
    let mut seen = std::collections::HashSet::new();
    let mut add = |path: PathBuf| {
        let canonical = std::fs::canonicalize(&path).unwrap_or_else(|_| path.clone());
        if seen.insert(canonical) {
            files.push(path);
        }
    };
    for p in &paths {
        if p.is_dir() {
            let walk = walkdir::WalkDir::new(p)
                .follow_links(true)
                .sort_by_file_name();
            for entry in walk {
                let entry = match entry {
                    Ok(e) => e,
                    Err(e) if e.loop_ancestor().is_some() => continue,
                    Err(e) => {
                        let at = e.path().unwrap_or(p).display().to_string();
                        return Err(format!("failed to read {at}: {e}"));
                    }
                };
                let yaml = matches!(
                    entry.path().extension().and_then(|e| e.to_str()),
                    Some("yaml" | "yml")
                );
                if entry.file_type().is_file() && yaml {
                    add(entry.into_path());
                }
            }
        } else if p.is_file() {
            add(p.clone());
        } else {
            return Err(format!("{}: no such file or folder", p.display()));
        }
    }
    Ok(files)
}

/// One suite file to read: on disk, or built into the binary (its checkout path and bytes).
enum Input {
    File(PathBuf),
    BuiltIn(&'static str, &'static [u8]),
}

/// Whether the run reads the suites built into the binary: no path was named and the working
/// folder has no `suites/` (nothing at all by that name, so a broken link or a file named
/// `suites` is still reported, not silently replaced).
pub(super) fn uses_built_in(paths: &[PathBuf]) -> bool {
    paths.is_empty() && Path::new(DEFAULT_SUITES).symlink_metadata().is_err()
}

/// The files to read: the built-in suites when [`uses_built_in`], else what [`discover`] finds.
fn inputs(paths: &[PathBuf]) -> Result<Vec<Input>, String> {
    if uses_built_in(paths) {
        return Ok(super::builtin::suite_files()
            .map(|(path, bytes)| Input::BuiltIn(path, bytes))
            .collect());
    }
    Ok(discover(paths)?.into_iter().map(Input::File).collect())
}

/// Reads and parses every suite, then runs the cross-file checks. With no path and no
/// `suites/` in the working folder, the suites built into the binary, under the paths they
/// have in the checkout (`suites/stale-handle.yaml`), so their cases, reports and diagnostics
/// read as a run in the checkout does.
pub(super) fn load(paths: &[PathBuf], limits: &Limits) -> Loaded {
    let files = match inputs(paths) {
        Ok(f) => f,
        Err(e) => return Loaded::Unreadable(e),
    };
    if files.is_empty() {
        let looked: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
        let looked = if looked.is_empty() {
            "suites/".to_string()
        } else {
            looked.join(", ")
        };
        return Loaded::Unreadable(format!("no suite files (*.yaml, *.yml) found in {looked}"));
    }
    let mut suites = Vec::new();
    let mut sources = Vec::new();
    let mut rendered = String::new();
    let mut count = 0;
    for input in &files {
        let (shown, bytes) = match input {
            Input::BuiltIn(path, bytes) => (path.to_string(), bytes.to_vec()),
            Input::File(file) => {
                let shown = file.display().to_string();
                match read_capped(file, limits.max_suite_bytes) {
                    Ok(b) => (shown, b),
                    Err(e) => return Loaded::Unreadable(format!("failed to read {shown}: {e}")),
                }
            }
        };
        // Shown under a file-level error: the bytes as read, with U+FFFD for what is not
        // UTF-8 (one character per bad sequence, so columns still match).
        let lossy = || String::from_utf8_lossy(&bytes).into_owned();
        if bytes.len() as u64 > limits.max_suite_bytes {
            let size = match input {
                Input::File(file) => {
                    std::fs::metadata(file).map_or(bytes.len() as u64, |m| m.len())
                }
                Input::BuiltIn(_, b) => b.len() as u64,
            };
            let d = suite::too_large(&shown, size, limits.max_suite_bytes);
            rendered.push_str(&suite::render_all(&[d], &lossy()));
            count += 1;
            continue;
        }
        let source = match suite::utf8_text(&shown, &bytes) {
            Ok(s) => s.to_string(),
            Err(d) => {
                rendered.push_str(&suite::render_all(&[d], &lossy()));
                count += 1;
                continue;
            }
        };
        match suite::parse_suite(&shown, &source, limits) {
            Ok(s) => suites.push(s),
            Err(diags) => {
                count += diags.len();
                rendered.push_str(&suite::render_all(&diags, &source));
            }
        }
        sources.push((shown, source));
    }
    let cross = suite::check_run(&suites);
    // Grouped by file, so each file is indexed once however many of its cases clash.
    let mut by_file: std::collections::BTreeMap<&str, Vec<Diagnostic>> = Default::default();
    for d in &cross {
        by_file.entry(d.path.as_str()).or_default().push(d.clone());
    }
    for (path, source) in &sources {
        if let Some(here) = by_file.get(path.as_str()) {
            rendered.push_str(&suite::render_all(here, source));
        }
    }
    count += cross.len();
    if count > 0 {
        Loaded::Invalid { rendered, count }
    } else {
        Loaded::Ok(suites)
    }
}

/// The file's bytes, but never more than `limit + 1` of them (enough to tell it is too large).
fn read_capped(path: &Path, limit: u64) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    let mut bytes = Vec::new();
    std::fs::File::open(path)?
        .take(limit.saturating_add(1))
        .read_to_end(&mut bytes)?;
    Ok(bytes)
}

/// Whether `id` matches a `--case` pattern: a substring, where `*` matches any run.
pub(super) fn case_matches(pattern: &str, id: &str) -> bool {
    if !pattern.contains('*') {
        return id.contains(pattern);
    }
    let parts: Vec<&str> = pattern.split('*').collect();
    let mut rest = id;
    for (i, part) in parts.iter().enumerate() {
        if part.is_empty() {
            continue;
        }
        match rest.find(part) {
            // The first part must start the id when the pattern does not begin with `*`.
            Some(at) if i == 0 && at != 0 => return false,
            Some(at) => rest = &rest[at + part.len()..],
            None => return false,
        }
    }
    // The last part must end the id when the pattern does not end with `*`.
    parts
        .last()
        .is_none_or(|last| last.is_empty() || id.ends_with(last))
}

/// Which tagged cases a run takes besides the rest: `slow` ones and team policies are left
/// out unless asked for.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Include {
    /// `--include-slow`.
    pub slow: bool,
    /// `--include-team-policy`.
    pub team_policy: bool,
}

/// The cases to run: matching `--case` (any pattern), and not tagged `slow` or
/// [`sqsprobe_core::suite::TEAM_POLICY_TAG`] unless asked.
pub(super) fn select<'a>(
    suites: &'a [Suite],
    patterns: &[String],
    include: Include,
) -> Vec<(&'a Suite, &'a Case)> {
    let tagged = |c: &Case, tag: &str| c.tags.iter().any(|t| t == tag);
    suites
        .iter()
        .flat_map(|s| s.cases.iter().map(move |c| (s, c)))
        .filter(|(_, c)| patterns.is_empty() || patterns.iter().any(|p| case_matches(p, &c.id)))
        .filter(|(_, c)| include.slow || !tagged(c, "slow"))
        .filter(|(_, c)| include.team_policy || !tagged(c, sqsprobe_core::suite::TEAM_POLICY_TAG))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns_are_substrings_or_globs() {
        assert!(case_matches("stale", "stale-handle-delete"));
        assert!(case_matches("handle", "stale-handle-delete"));
        assert!(!case_matches("fifo", "stale-handle-delete"));
        assert!(case_matches("stale*delete", "stale-handle-delete"));
        assert!(case_matches("*delete", "stale-handle-delete"));
        assert!(!case_matches("handle*", "stale-handle-delete"));
        assert!(case_matches("stale*", "stale-handle-delete"));
        assert!(case_matches("*", "anything"));
    }

    fn names(files: &[PathBuf], base: &Path) -> Vec<String> {
        files
            .iter()
            .map(|f| f.strip_prefix(base).unwrap_or(f).display().to_string())
            .collect()
    }

    #[test]
    fn a_suite_path_given_twice_is_one_file_under_its_first_spelling() {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path();
        std::fs::create_dir(base.join("sub")).unwrap();
        for f in ["a.yaml", "sub/b.yml", "sub/c.txt"] {
            std::fs::write(base.join(f), "x: 1\n").unwrap();
        }
        let a = base.join("a.yaml");
        let dotted = base.join(".").join("a.yaml");
        let got = discover(&[a.clone(), a.clone(), dotted, base.to_path_buf()]).unwrap();
        assert_eq!(names(&got, base), ["a.yaml", "sub/b.yml"]);
        // A file first reached through its folder keeps the folder's spelling.
        let got = discover(&[base.join("sub"), base.join("sub/../sub/b.yml")]).unwrap();
        assert_eq!(names(&got, base), ["sub/b.yml"]);
    }

    #[cfg(unix)]
    #[test]
    fn symlink_loops_are_not_followed_and_links_to_files_are_one_file() {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path();
        std::fs::create_dir(base.join("sub")).unwrap();
        std::fs::write(base.join("sub/a.yaml"), "x: 1\n").unwrap();
        std::os::unix::fs::symlink(base, base.join("sub/loop")).unwrap();
        std::os::unix::fs::symlink(base.join("sub/a.yaml"), base.join("sub/link.yaml")).unwrap();
        let got = discover(&[base.to_path_buf()]).unwrap();
        assert_eq!(names(&got, base), ["sub/a.yaml"]);
    }

    #[test]
    fn missing_paths_are_reported() {
        let err = discover(&[PathBuf::from("/definitely/not/here.yaml")]).unwrap_err();
        assert!(err.contains("no such file"), "{err}");
    }
}
