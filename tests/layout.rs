//! The layout the architecture promises (docs/architecture.md), checked on the source tree:
//! no source file imports a file that imports it back, and no file's code outside its tests
//! grows past what one reader can hold (900 lines).
//!
//! Imports are read the way a reader follows them: every `crate::a::b` and `super::x` path
//! outside comments and the file's `#[cfg(test)]` part, resolved to the deepest module file
//! that exists. That over-approximates (a path to an item counts as a path to its file), which
//! is the safe side for a check that forbids cycles.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Longest a source file may be before its `#[cfg(test)]` part.
const MAX_LINES: usize = 900;

/// Module path (`["runner", "case", "acks"]`) → file, for every `.rs` under `src/`.
fn modules(src: &Path) -> BTreeMap<Vec<String>, PathBuf> {
    let mut out = BTreeMap::new();
    let mut stack = vec![src.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            if path.extension().is_none_or(|e| e != "rs") {
                continue;
            }
            let rel = path.strip_prefix(src).unwrap().with_extension("");
            let mut parts: Vec<String> = rel
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect();
            if matches!(
                parts.last().map(String::as_str),
                Some("mod" | "lib" | "main")
            ) {
                parts.pop();
            }
            out.insert(parts, path);
        }
    }
    out
}

/// The code of a file a reader sees outside its tests, comments dropped.
fn code(text: &str) -> String {
    let before_tests = text.split("#[cfg(test)]").next().unwrap_or("");
    before_tests
        .lines()
        .filter(|l| !l.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Paths like `crate::a::b::C` or `super::x::y` in `code`: (root, segments).
fn paths(code: &str) -> Vec<(&str, Vec<&str>)> {
    let mut out = Vec::new();
    for root in ["crate", "super"] {
        let needle = format!("{root}::");
        let mut rest = code;
        while let Some(i) = rest.find(&needle) {
            let before = rest[..i].chars().next_back();
            let after = &rest[i + needle.len()..];
            rest = after;
            if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
                continue;
            }
            let segs: Vec<&str> = after
                .split("::")
                .map(|s| {
                    let end = s
                        .find(|c: char| !(c.is_alphanumeric() || c == '_'))
                        .unwrap_or(s.len());
                    &s[..end]
                })
                .take_while(|s| !s.is_empty())
                .collect();
            out.push((root, segs));
        }
    }
    out
}

fn import_graph(src: &Path) -> BTreeMap<Vec<String>, BTreeSet<Vec<String>>> {
    let mods = modules(src);
    let mut graph = BTreeMap::new();
    for (module, file) in &mods {
        let text = std::fs::read_to_string(file).unwrap();
        let mut deps = BTreeSet::new();
        for (root, segs) in paths(&code(&text)) {
            let mut target: Vec<String> = if root == "crate" {
                Vec::new()
            } else {
                module[..module.len().saturating_sub(1)].to_vec()
            };
            target.extend(segs.iter().map(|s| s.to_string()));
            while !target.is_empty() && !mods.contains_key(&target) {
                target.pop();
            }
            if mods.contains_key(&target) && &target != module {
                deps.insert(target);
            }
        }
        graph.insert(module.clone(), deps);
    }
    graph
}

/// Strongly connected components of more than one module (Tarjan).
fn cycles(graph: &BTreeMap<Vec<String>, BTreeSet<Vec<String>>>) -> Vec<Vec<String>> {
    struct State<'g> {
        graph: &'g BTreeMap<Vec<String>, BTreeSet<Vec<String>>>,
        index: BTreeMap<&'g Vec<String>, usize>,
        low: BTreeMap<&'g Vec<String>, usize>,
        stack: Vec<&'g Vec<String>>,
        on_stack: BTreeSet<&'g Vec<String>>,
        found: Vec<Vec<String>>,
    }
    fn visit<'g>(s: &mut State<'g>, v: &'g Vec<String>) {
        let n = s.index.len();
        s.index.insert(v, n);
        s.low.insert(v, n);
        s.stack.push(v);
        s.on_stack.insert(v);
        for w in &s.graph[v] {
            if !s.index.contains_key(w) {
                visit(s, w);
                let lw = s.low[w];
                let lv = s.low.get_mut(v).unwrap();
                *lv = (*lv).min(lw);
            } else if s.on_stack.contains(w) {
                let iw = s.index[w];
                let lv = s.low.get_mut(v).unwrap();
                *lv = (*lv).min(iw);
            }
        }
        if s.low[v] == s.index[v] {
            let mut component = Vec::new();
            while let Some(w) = s.stack.pop() {
                s.on_stack.remove(w);
                component.push(w.join("::"));
                if w == v {
                    break;
                }
            }
            if component.len() > 1 {
                component.sort();
                s.found.push(component);
            }
        }
    }
    let mut s = State {
        graph,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        found: Vec::new(),
    };
    for v in graph.keys() {
        if !s.index.contains_key(v) {
            visit(&mut s, v);
        }
    }
    s.found
}

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

#[test]
fn no_source_file_imports_a_file_that_imports_it() {
    let found = cycles(&import_graph(&src()));
    assert!(
        found.is_empty(),
        "import cycles between source files (move the shared item to a file both import): {found:#?}"
    );
}

#[test]
fn the_cycle_check_finds_a_cycle() {
    // The check itself, on a tree made for it: a imports b, b imports a; c imports a only.
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, text: &str| std::fs::write(dir.path().join(name), text).unwrap();
    write("lib.rs", "mod a;\nmod b;\nmod c;\n");
    write("a.rs", "use crate::b::Thing;\n");
    write(
        "b.rs",
        "// crate::c::Nothing in a comment does not count\nuse super::a::Other;\n",
    );
    write("c.rs", "use crate::a::Other;\n");
    assert_eq!(
        cycles(&import_graph(dir.path())),
        vec![vec!["a".to_string(), "b".to_string()]]
    );
}

#[test]
fn no_source_file_is_longer_than_one_reader_holds() {
    let long: Vec<String> = modules(&src())
        .values()
        .filter_map(|file| {
            let text = std::fs::read_to_string(file).unwrap();
            let lines = text.split("#[cfg(test)]").next().unwrap().lines().count();
            (lines > MAX_LINES).then(|| format!("{}: {lines} lines", file.display()))
        })
        .collect();
    assert!(
        long.is_empty(),
        "split these by responsibility (docs/architecture.md): {long:?}"
    );
}
