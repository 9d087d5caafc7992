//! The layout the architecture promises (docs/architecture.md), checked on the source tree:
//! every import goes down the floors that page draws, no source file imports a file that
//! imports it back, and no file's code outside its tests
//! grows past what one reader can hold (900 lines). And the tests' own layout: every file of
//! `tests/` is a module of one of the few test binaries (`tests/it/`, `tests/long/`), never a
//! binary of its own nor a file cargo silently leaves out.
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

/// Every module path `code` names, as segments after its root: `crate::a::b::C` and
/// `super::x::y` anywhere, `self::x`, chains of `super::super::`, and each leaf of a `use`
/// group (`use super::{page, trials::render}`, nested groups too), with the root kept
/// (`crate`, `super`, `self`).
fn paths(code: &str) -> Vec<(&'static str, Vec<String>)> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < code.len() {
        let rest = &code[i..];
        let Some(root) = ["crate::", "super::", "self::"]
            .into_iter()
            .find(|r| rest.starts_with(r))
        else {
            i += rest.chars().next().map_or(1, char::len_utf8);
            continue;
        };
        let before = code[..i].chars().next_back();
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':') {
            i += root.len();
            continue;
        }
        let (tree, used) = use_tree(&rest[root.len()..]);
        let name = match root {
            "crate::" => "crate",
            "super::" => "super",
            _ => "self",
        };
        for leaf in expand(&tree) {
            out.push((name, leaf));
        }
        i += root.len() + used.max(1);
    }
    out
}

/// The use tree that starts `text` (after its root): the text up to where the path or its
/// braced group ends, and how many bytes that was.
fn use_tree(text: &str) -> (String, usize) {
    let mut depth = 0usize;
    for (i, c) in text.char_indices() {
        match c {
            '{' => depth += 1,
            '}' if depth > 0 => {
                depth -= 1;
                if depth == 0 {
                    return (text[..=i].to_string(), i + 1);
                }
            }
            c if depth == 0 && !(c.is_alphanumeric() || c == '_' || c == ':' || c == '*') => {
                return (text[..i].to_string(), i);
            }
            _ => {}
        }
    }
    (text.to_string(), text.len())
}

/// The leaves of a use tree: `a::{b, c::{d, e}}` is `a::b`, `a::c::d`, `a::c::e`; a leaf is
/// its module segments (`*`, `self` and `as` names dropped).
fn expand(tree: &str) -> Vec<Vec<String>> {
    let tree = tree.trim();
    let Some(open) = tree.find('{') else {
        return vec![segments(tree)];
    };
    let prefix = segments(&tree[..open]);
    let inner = &tree[open + 1..tree.len().saturating_sub(1)];
    let mut parts = Vec::new();
    let (mut depth, mut start) = (0usize, 0usize);
    for (i, c) in inner.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                parts.push(&inner[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&inner[start..]);
    let mut leaves = Vec::new();
    for part in parts.into_iter().map(str::trim).filter(|p| !p.is_empty()) {
        for leaf in expand(part) {
            let mut full = prefix.clone();
            full.extend(leaf);
            leaves.push(full);
        }
    }
    if leaves.is_empty() {
        leaves.push(prefix);
    }
    leaves
}

fn segments(path: &str) -> Vec<String> {
    // `a::b as c`: the path is what comes before the rename.
    let path = path.split_whitespace().next().unwrap_or_default();
    path.split("::")
        .filter(|s| !s.is_empty() && *s != "*" && *s != "self")
        .map(str::to_string)
        .collect()
}

fn import_graph(src: &Path) -> BTreeMap<Vec<String>, BTreeSet<Vec<String>>> {
    let mods = modules(src);
    let mut graph = BTreeMap::new();
    for (module, file) in &mods {
        let text = std::fs::read_to_string(file).unwrap();
        let mut deps = BTreeSet::new();
        for (root, segs) in paths(&code(&text)) {
            // Where the path starts: the crate, this module (`self`), or its parent, one more
            // level up for each further leading `super`.
            let this: Vec<String> = module.clone();
            let mut target: Vec<String> = match root {
                "crate" => Vec::new(),
                "self" => this.clone(),
                _ => this[..this.len().saturating_sub(1)].to_vec(),
            };
            let mut segs = segs.as_slice();
            while let Some((first, rest)) = segs.split_first()
                && first == "super"
            {
                target.pop();
                segs = rest;
            }
            target.extend(segs.iter().cloned());
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

/// The forms the check once missed (issue 24): a `use` group, `super::super::`, `self::`.
#[test]
fn the_cycle_check_reads_groups_and_super_chains() {
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, text: &str| {
        let path = dir.path().join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap()
    };
    write("lib.rs", "mod html;\nmod words;\n");
    write("html/mod.rs", "mod page;\nmod trials;\nmod calls;\n");
    // page imports trials through a group, trials imports page back: a cycle.
    write(
        "html/page.rs",
        "use super::{calls, trials as t};\nuse super::super::words::{a, b};\n",
    );
    write(
        "html/trials.rs",
        "use super::page::{case_anchor, findings};\n",
    );
    write("html/calls.rs", "pub fn x() {}\n");
    // `self::` names the module itself (no edge, however deep the path).
    write("words.rs", "use self::inner::Thing;\npub fn a() {}\n");
    let graph = import_graph(dir.path());
    let page = vec!["html".to_string(), "page".to_string()];
    assert!(
        graph[&page].contains(&vec!["words".to_string()]),
        "{graph:?}"
    );
    assert!(graph[&page].contains(&vec!["html".to_string(), "calls".to_string()]));
    assert_eq!(
        cycles(&graph),
        vec![vec!["html::page".to_string(), "html::trials".to_string()]]
    );
}

/// The import floors docs/architecture.md draws: folder (or top-level file) → floor, read from
/// the fenced block after its `<!-- floors` marker, one floor per line (`4  runner  report`).
fn documented_floors(doc: &str) -> Result<BTreeMap<String, u32>, String> {
    let after = doc
        .split_once("<!-- floors")
        .ok_or("docs/architecture.md has no `<!-- floors` block")?
        .1;
    let block = after
        .split_once("```\n")
        .and_then(|(_, rest)| rest.split_once("```"))
        .ok_or("the floors block is not fenced")?
        .0;
    let mut floors = BTreeMap::new();
    for line in block.lines().filter(|l| !l.trim().is_empty()) {
        let mut words = line.split_whitespace();
        let floor: u32 = words
            .next()
            .and_then(|w| w.parse().ok())
            .ok_or_else(|| format!("a floors line must start with its number: {line:?}"))?;
        for name in words {
            if floors.insert(name.to_string(), floor).is_some() {
                return Err(format!("{name} is on two floors"));
            }
        }
    }
    Ok(floors)
}

/// Every import between top-level modules that does not go to a lower floor, and every
/// top-level module the floors leave out.
fn floor_breaches(
    graph: &BTreeMap<Vec<String>, BTreeSet<Vec<String>>>,
    floors: &BTreeMap<String, u32>,
) -> Vec<String> {
    let mut out = BTreeSet::new();
    for name in floors.keys() {
        if !graph.keys().any(|m| m.first() == Some(name)) {
            out.insert(format!("{name} is on a floor but not in src/"));
        }
    }
    for (module, deps) in graph {
        let Some(top) = module.first() else { continue };
        let Some(&own) = floors.get(top) else {
            out.insert(format!("{top} is on no floor"));
            continue;
        };
        for dep in deps {
            let Some(other) = dep.first().filter(|d| *d != top) else {
                continue;
            };
            match floors.get(other) {
                Some(&f) if f < own => {}
                Some(&f) => {
                    out.insert(format!(
                        "{} (floor {own}) imports {} (floor {f})",
                        module.join("::"),
                        dep.join("::")
                    ));
                }
                None => {
                    out.insert(format!("{other} is on no floor"));
                }
            }
        }
    }
    out.into_iter().collect()
}

#[test]
fn every_import_goes_down_the_documented_floors() {
    let doc =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/architecture.md"))
            .unwrap();
    let floors = documented_floors(&doc).unwrap();
    let breaches = floor_breaches(&import_graph(&src()), &floors);
    assert!(
        breaches.is_empty(),
        "imports that break the floors drawn in docs/architecture.md (move the item down, or \
         redraw the floors if the design changed): {breaches:#?}"
    );
}

#[test]
fn the_floor_check_finds_an_import_up_or_across() {
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, text: &str| {
        let path = dir.path().join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    };
    write(
        "lib.rs",
        "mod low;\nmod mid;\nmod top;\nmod side;\nmod lost;\n",
    );
    write("low.rs", "use crate::mid::x;\n");
    write("mid/mod.rs", "mod inner;\n");
    write("mid/inner.rs", "use crate::low::y;\nuse crate::side::z;\n");
    write("side.rs", "pub fn z() {}\n");
    write("top.rs", "use crate::{low::a, mid::b};\n");
    write("lost.rs", "\n");
    let floors =
        documented_floors("x\n<!-- floors -->\n```\n2  top  gone\n1  mid  side\n0  low\n```\n")
            .unwrap();
    let found = floor_breaches(&import_graph(dir.path()), &floors);
    assert_eq!(
        found,
        [
            "gone is on a floor but not in src/",
            "lost is on no floor",
            "low (floor 0) imports mid (floor 1)",
            "mid::inner (floor 1) imports side (floor 1)",
        ],
        "{found:#?}"
    );
    assert!(documented_floors("no block").is_err());
    assert!(documented_floors("<!-- floors\n```\nx cli\n```").is_err());
    assert!(documented_floors("<!-- floors\n```\n1 cli\n2 cli\n```").is_err());
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

/// What is wrong with the test files under `tests`: a file at the top (cargo would build it as
/// one more binary, linking the whole crate again: it belongs in `tests/it/`), or a file in a
/// binary's folder that its `main.rs` does not declare (cargo would not build it: its tests
/// would silently never run). Helpers (`tests/common/`, no `main.rs`) are neither.
fn misplaced_test_files(tests: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut entries: Vec<PathBuf> = std::fs::read_dir(tests)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for path in entries {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if path.is_file() && name.ends_with(".rs") {
            out.push(format!(
                "tests/{name} is a test binary of its own: move it to tests/it/ and declare it \
                 in tests/it/main.rs"
            ));
            continue;
        }
        let main = path.join("main.rs");
        if !main.is_file() {
            continue;
        }
        let declared = std::fs::read_to_string(&main).unwrap();
        let mut files: Vec<String> = std::fs::read_dir(&path)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|f| f.ends_with(".rs") && f != "main.rs")
            .collect();
        files.sort();
        for file in files {
            let module = file.trim_end_matches(".rs");
            if !declared
                .lines()
                .any(|l| l.trim() == format!("mod {module};"))
            {
                out.push(format!(
                    "tests/{name}/{file} is not declared: add `mod {module};` to tests/{name}/main.rs"
                ));
            }
        }
    }
    out
}

#[test]
fn every_test_file_is_a_module_of_a_test_binary() {
    let tests = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    let found = misplaced_test_files(&tests);
    assert!(found.is_empty(), "{found:#?}");
}

#[test]
fn the_test_file_check_finds_a_stray_and_an_undeclared_file() {
    // The check itself, on a tree made for it: `it/` declares `a` but not `b`, a file sits at
    // the top, and a helper folder without `main.rs` is left alone.
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, text: &str| {
        let path = dir.path().join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap()
    };
    write("it/main.rs", "mod a;\n// mod b;\n");
    write("it/a.rs", "");
    write("it/b.rs", "");
    write("stray.rs", "");
    write("common/mod.rs", "pub mod proxy;\n");
    write("common/proxy.rs", "");
    let found = misplaced_test_files(dir.path());
    assert_eq!(found.len(), 2, "{found:#?}");
    assert!(
        found[0].starts_with("tests/it/b.rs is not declared"),
        "{found:#?}"
    );
    assert!(
        found[1].starts_with("tests/stray.rs is a test binary"),
        "{found:#?}"
    );
}
