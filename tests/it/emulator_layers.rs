//! The emulator's layout holds: imports run one way (server → protocol → dispatch → ops →
//! model → support), no source file imports a file that imports it, every module has a `//!`
//! doc, and no file is above 900 lines outside its tests.
//!
//! Test code (`#[cfg(test)] mod tests` blocks, `test_support.rs`, and test-only module files
//! named `*_tests.rs`) is left out: test helpers sit on top and may reach every layer.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Layers from the top; a file may import files of its own layer or of a layer below.
const LAYERS: &[&str] = &["server", "protocol", "dispatch", "ops", "model", "support"];
const MAX_LINES: usize = 900;

fn emulator_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src/emulator")
}

/// Every `.rs` file under src/emulator, as a path relative to it (`ops/queue.rs`).
fn files() -> Vec<String> {
    fn walk(dir: &Path, base: &Path, out: &mut Vec<String>) {
        for entry in std::fs::read_dir(dir).expect("read src/emulator") {
            let path = entry.expect("dir entry").path();
            if path.is_dir() {
                walk(&path, base, out);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let rel = path.strip_prefix(base).expect("under base");
                out.push(rel.to_string_lossy().replace('\\', "/"));
            }
        }
    }
    let mut out = Vec::new();
    walk(&emulator_dir(), &emulator_dir(), &mut out);
    out.sort();
    out
}

/// The file's text without its unit-test module.
fn production_code(text: &str) -> &str {
    match text.find("#[cfg(test)]\nmod tests") {
        Some(i) => &text[..i],
        None => text,
    }
}

/// The layer a file belongs to; `None` for the root `mod.rs` (declarations and re-exports).
fn layer(file: &str) -> Option<usize> {
    let head = file
        .split('/')
        .next()
        .unwrap_or(file)
        .trim_end_matches(".rs");
    LAYERS.iter().position(|l| *l == head)
}

/// Splits `a, b::{c, d}` at top-level commas.
fn split_top(items: &str) -> Vec<String> {
    let (mut out, mut depth, mut cur) = (Vec::new(), 0, String::new());
    for c in items.chars() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                out.push(std::mem::take(&mut cur));
                continue;
            }
            _ => {}
        }
        cur.push(c);
    }
    out.push(cur);
    out.into_iter()
        .map(|s| s.trim().to_owned())
        .filter(|s| !s.is_empty())
        .collect()
}

/// Module paths (`ops::context`, …) named after `crate::emulator::` in `code`.
fn referenced_paths(code: &str) -> Vec<String> {
    let mut out = Vec::new();
    for line in code.lines() {
        let line = line.trim_start();
        if line.starts_with("//") {
            continue;
        }
        let mut rest = line;
        while let Some(i) = rest.find("crate::emulator::") {
            rest = &rest[i + "crate::emulator::".len()..];
            let end = rest
                .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
                .unwrap_or(rest.len());
            let path = rest[..end].trim_end_matches(':').to_owned();
            if rest[end..].starts_with('{') && rest[..end].ends_with("::") {
                let close = rest[end..].find('}').map_or(rest.len(), |j| end + j);
                for item in split_top(&rest[end + 1..close]) {
                    out.push(format!("{path}::{item}"));
                }
            } else {
                out.push(path);
            }
            rest = &rest[end..];
        }
    }
    out
}

/// The file a module path lives in: the longest prefix that is a file.
fn resolve(path: &str, known: &BTreeSet<String>) -> Option<String> {
    let segments: Vec<&str> = path.split("::").map(str::trim).collect();
    (1..=segments.len()).rev().find_map(|n| {
        let base = segments[..n].join("/");
        [format!("{base}.rs"), format!("{base}/mod.rs")]
            .into_iter()
            .find(|f| known.contains(f))
    })
}

fn graph() -> BTreeMap<String, BTreeSet<String>> {
    let all: BTreeSet<String> = files().into_iter().collect();
    let mut edges = BTreeMap::new();
    for file in all
        .iter()
        .filter(|f| f.as_str() != "test_support.rs" && !f.ends_with("_tests.rs"))
    {
        let text = std::fs::read_to_string(emulator_dir().join(file)).expect("read source");
        let targets: BTreeSet<String> = referenced_paths(production_code(&text))
            .iter()
            .filter_map(|p| resolve(p, &all))
            .filter(|t| t != file && !t.ends_with("mod.rs"))
            .collect();
        edges.insert(file.clone(), targets);
    }
    edges
}

#[test]
fn imports_run_down_the_layers() {
    let mut wrong = Vec::new();
    for (file, targets) in graph() {
        let Some(own) = layer(&file) else { continue };
        for target in targets {
            let theirs = layer(&target).expect("a target is in a layer");
            if theirs < own {
                wrong.push(format!(
                    "{file} ({}) imports {target} ({})",
                    LAYERS[own], LAYERS[theirs]
                ));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "imports against the layers:\n{}",
        wrong.join("\n")
    );
}

#[test]
fn no_source_file_imports_a_file_that_imports_it() {
    let edges = graph();
    // Depth-first search for a cycle; reports the first one found with its path.
    fn visit(
        node: &str,
        edges: &BTreeMap<String, BTreeSet<String>>,
        stack: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(i) = stack.iter().position(|n| n == node) {
            let mut cycle = stack[i..].to_vec();
            cycle.push(node.to_owned());
            return Some(cycle);
        }
        if done.contains(node) {
            return None;
        }
        stack.push(node.to_owned());
        for next in edges.get(node).into_iter().flatten() {
            if let Some(cycle) = visit(next, edges, stack, done) {
                return Some(cycle);
            }
        }
        stack.pop();
        done.insert(node.to_owned());
        None
    }
    let mut done = BTreeSet::new();
    for file in edges.keys() {
        if let Some(cycle) = visit(file, &edges, &mut Vec::new(), &mut done) {
            panic!("import cycle: {}", cycle.join(" → "));
        }
    }
    // The checker sees real edges (a parser that found none would pass vacuously).
    assert!(edges["dispatch.rs"].contains("ops/queue.rs"), "{edges:?}");
    assert!(
        edges["ops/queue.rs"].contains("model/store.rs"),
        "{edges:?}"
    );
}

#[test]
fn every_module_is_documented_and_small() {
    let files = files();
    assert!(files.len() > 20, "found only {files:?}");
    for file in files {
        let text = std::fs::read_to_string(emulator_dir().join(&file)).expect("read source");
        assert!(
            text.trim_start().starts_with("//!"),
            "{file} has no module doc (`//!`)"
        );
        let lines = production_code(&text).lines().count();
        assert!(
            lines <= MAX_LINES,
            "{file} has {lines} lines outside its tests (at most {MAX_LINES})"
        );
    }
}

#[test]
fn the_path_parser_reads_groups_and_nested_paths() {
    let code = "use crate::emulator::ops::{dlq, lease::x, queue};\nlet e = crate::emulator::model::store::Emulator::new();\n// crate::emulator::server in a comment\n";
    assert_eq!(
        referenced_paths(code),
        [
            "ops::dlq",
            "ops::lease::x",
            "ops::queue",
            "model::store::Emulator::new"
        ]
    );
}
