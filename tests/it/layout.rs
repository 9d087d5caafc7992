//! The layout the architecture promises (docs/architecture.md), checked on the source tree:
//! every import goes down the floors that page draws, no source file imports a file that
//! imports it back, and no file's code outside its tests grows past what one reader can hold
//! (900 lines). And the tests' own layout: every file of `tests/` is a module of one of the few
//! test binaries (`tests/it/`, `tests/long/`), never a binary of its own nor a file cargo
//! silently leaves out.
//!
//! # What counts as an import
//!
//! The files are the ones the compiler reads: reached from `lib.rs` (the library) and
//! `main.rs` (the binary, a crate of its own whose `sqsprobe::` paths name the library) by
//! their `mod` lines. Code under `#[cfg(test)]` is no import, wherever the item sits (a
//! `mod tests` block, a test-only file, a test helper in the middle of a file); comments and
//! string literals are not code.
//!
//! Every path in the code is read where it is written ([`reader`]): a `use` tree's leaves
//! (groups, renames, globs), and paths written inline, whatever they start with: `crate::`,
//! `$crate::` (in a macro), `super::` and `self::` (inside an inline `mod x { }` too, relative
//! to it), a child module (`raw::run`, `pub use child::X`), or a name a `use` bound
//! (`use crate::report;` then `report::live::Progress`). Each is resolved to the file that
//! defines the item it names, following the `use` and `pub use` lines that bring the name
//! into each module on the way, as the compiler does; where reading cannot tell (an item made
//! by a macro), to the deepest module file the path names. That file is imported by the file
//! the path is written in.
//!
//! A re-export (`pub use child::X`) is an import like any `use`, of the file that defines
//! `X`; and a file that names `X` through the re-export imports that file too, never the
//! re-exporting one. So a `mod.rs` that only declares and re-exports, the house style, is in
//! no cycle: nothing is defined there for anyone to import (a path that names the module
//! itself, `use crate::runner;`, does import its `mod.rs`; name the items instead). A `mod.rs`
//! that also defines what its children import, while re-exporting from them, is a cycle: the
//! shared item goes into a file of its own below both (`runner/context.rs`).

mod reader;

use reader::{BIN, Edges, ModPath, read_tree};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Longest a source file may be outside its `#[cfg(test)]` items.
const MAX_LINES: usize = 900;

/// Every import between the module files under `src`, each with the paths that make it.
fn import_edges(src: &Path) -> Edges {
    read_tree(src).edges()
}

/// Module file → the module files it imports.
fn import_graph(src: &Path) -> BTreeMap<ModPath, BTreeSet<ModPath>> {
    import_edges(src)
        .into_iter()
        .map(|(module, to)| (module, to.into_keys().collect()))
        .collect()
}

/// How a module file is named in a message: its module path, `crate` for `lib.rs`.
fn shown(module: &[String]) -> String {
    if module.is_empty() {
        "crate".to_string()
    } else {
        module.join("::")
    }
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
                component.push(shown(w));
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

/// Writes a source tree of `files` (path under `src/`, text) into a fresh folder.
fn made_tree(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (name, text) in files {
        let path = dir.path().join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    dir
}

/// A module path from its text: `"runner::case"`, `""` for the crate root.
fn module(path: &str) -> ModPath {
    path.split("::")
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .collect()
}

#[test]
fn no_source_file_imports_a_file_that_imports_it() {
    let edges = import_edges(&src());
    let graph = edges
        .iter()
        .map(|(m, to)| (m.clone(), to.keys().cloned().collect()))
        .collect();
    let found = cycles(&graph);
    // Each cycle with the imports that close it, where they are written.
    let mut why = Vec::new();
    for component in &found {
        for (from, to) in &edges {
            for (target, at) in to {
                if component.contains(&shown(from)) && component.contains(&shown(target)) {
                    why.push(format!(
                        "{} -> {}: {}",
                        shown(from),
                        shown(target),
                        at.join("; ")
                    ));
                }
            }
        }
    }
    assert!(
        found.is_empty(),
        "import cycles between source files (move the shared item to a file both import): \
         {found:#?}\n{why:#?}"
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

/// The forms the check once missed: a `use` group, `super::super::`, `self::`.
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

/// A child module named by its own name, with no root: `raw::run()` in the parent, and the
/// parent's `pub use child::X` (the cycles of `cli/bench.rs` and `runner/mod.rs` the check
/// once missed).
#[test]
fn the_cycle_check_reads_paths_that_start_at_a_child_module() {
    let dir = made_tree(&[
        ("lib.rs", "mod bench;\nmod runner;\n"),
        (
            "bench.rs",
            "mod raw;\npub const MAX: usize = 1;\npub async fn run() { raw::run().await }\n",
        ),
        ("bench/raw.rs", "use super::MAX;\npub async fn run() {}\n"),
        (
            "runner/mod.rs",
            "mod run;\npub use run::run_plan;\npub struct Context;\n",
        ),
        (
            "runner/run.rs",
            "use crate::runner::Context;\npub fn run_plan() {}\n",
        ),
    ]);
    assert_eq!(
        cycles(&import_graph(dir.path())),
        [["bench", "bench::raw"], ["runner", "runner::run"]]
    );
}

/// A path through a name a `use` bound: `use crate::report;` then `report::live::Progress`
/// imports `report/live.rs`, not only `report/mod.rs`.
#[test]
fn the_cycle_check_reads_paths_through_a_use_bound_name() {
    let dir = made_tree(&[
        ("lib.rs", "mod report;\nmod run;\n"),
        ("report/mod.rs", "pub mod live;\n"),
        (
            "report/live.rs",
            "use crate::run::Outcome;\npub struct Progress;\n",
        ),
        (
            "run.rs",
            "use crate::report;\npub struct Outcome;\nfn f(_: report::live::Progress) {}\n",
        ),
    ]);
    let graph = import_graph(dir.path());
    assert!(
        graph[&module("run")].contains(&module("report::live")),
        "{graph:?}"
    );
    assert_eq!(cycles(&graph), [["report::live", "run"]]);
}

/// `super` and `self` inside an inline `mod x { }` are relative to it, not to the file
/// (`emulator/mod.rs`'s `pub mod audit { pub use super::support::audit::… }`).
#[test]
fn the_cycle_check_reads_super_and_self_inside_inline_modules() {
    let dir = made_tree(&[
        ("lib.rs", "mod emu;\n"),
        (
            "emu/mod.rs",
            "mod store;\nmod support;\npub struct Config;\n\
             pub mod audit {\n    pub use super::support::audit::Ledger;\n\
                 pub mod deep {\n        pub use self::super::super::store::Store;\n    }\n}\n",
        ),
        ("emu/support/mod.rs", "pub mod audit;\n"),
        ("emu/support/audit.rs", "pub struct Ledger;\n"),
        ("emu/store.rs", "use super::Config;\npub struct Store;\n"),
    ]);
    let graph = import_graph(dir.path());
    assert!(
        graph[&module("emu")].contains(&module("emu::support::audit")),
        "{graph:?}"
    );
    assert_eq!(cycles(&graph), [["emu", "emu::store"]]);
}

/// `$crate::` in a macro names the crate the macro is written in, from the file it is written
/// in. (The earlier reader read this one already, by accident: it skipped `crate::`
/// only after a letter, a digit, `_` or `:`, and `$` is none; the reader now tokenizes
/// `$crate` as one word, so this guards that it still does.)
#[test]
fn the_cycle_check_reads_crate_paths_in_macros() {
    let dir = made_tree(&[
        ("lib.rs", "mod calls;\nmod classify;\n"),
        (
            "calls.rs",
            "pub struct Caller;\nmacro_rules! observed {\n    () => {\n        \
             $crate::classify::Observed::default()\n    };\n}\n",
        ),
        (
            "classify.rs",
            "use crate::calls::Caller;\npub struct Observed;\n",
        ),
    ]);
    assert_eq!(cycles(&import_graph(dir.path())), [["calls", "classify"]]);
}

/// Test items are dropped wherever they sit, and only they: the code after a file's first
/// `#[cfg(test)]` is read (the check once stopped there), `#[cfg(test)]` in a
/// comment or a string cuts nothing, and a test-only file imports nothing.
#[test]
fn the_cycle_check_drops_every_test_item_and_only_those() {
    let dir = made_tree(&[
        (
            "lib.rs",
            "mod a;\nmod b;\nmod c;\n#[cfg(test)]\nmod testing;\n",
        ),
        (
            "a.rs",
            "//! Its tests sit mid-file (`#[cfg(test)]` in a doc comment cuts nothing).\n\
             const NOTE: &str = \"#[cfg(test)]\";\n\
             #[cfg(test)]\nmod tests {\n    use crate::c::Helper;\n}\n\
             #[cfg(all(test, unix))]\nfn probe() { crate::c::helper() }\n\
             use crate::b::Thing;\npub struct Other;\n",
        ),
        (
            "b.rs",
            "use crate::a::Other;\npub struct Thing;\n#[cfg(not(test))]\nuse crate::c::Live;\n",
        ),
        ("c.rs", "pub struct Live;\n"),
        ("testing.rs", "use crate::a::Other;\nuse crate::b::Thing;\n"),
    ]);
    let graph = import_graph(dir.path());
    assert_eq!(
        graph[&module("a")],
        BTreeSet::from([module("b")]),
        "{graph:?}"
    );
    assert!(graph[&module("b")].contains(&module("c")), "{graph:?}");
    assert!(graph[&module("testing")].is_empty(), "{graph:?}");
    assert!(read_tree(dir.path()).files[&module("testing")].test);
    assert_eq!(cycles(&graph), [["a", "b"]]);
}

/// An item named through a re-export is imported from the file that defines it: a child
/// naming what its `mod.rs` re-exports from a sibling imports the sibling, so a `mod.rs` that
/// only declares and re-exports is in no cycle; one that defines what a child imports while
/// re-exporting from that child is.
#[test]
fn a_path_through_a_re_export_imports_the_defining_file() {
    let dir = made_tree(&[
        ("lib.rs", "pub mod runner;\npub mod bench;\n"),
        (
            "runner/mod.rs",
            "mod context;\nmod run;\npub use context::Context;\npub use run::*;\n",
        ),
        ("runner/context.rs", "pub struct Context;\n"),
        (
            "runner/run.rs",
            "use crate::runner::Context;\npub fn run_plan(_: &Context) {}\n",
        ),
        (
            "bench/mod.rs",
            "mod stop;\nmod work;\npub use stop::Stop;\npub use work::Work;\n",
        ),
        ("bench/stop.rs", "pub struct Stop;\n"),
        (
            "bench/work.rs",
            "pub struct Work { pub stop: super::Stop }\n",
        ),
    ]);
    let graph = import_graph(dir.path());
    assert_eq!(
        graph[&module("runner::run")],
        BTreeSet::from([module("runner::context")])
    );
    assert_eq!(
        graph[&module("bench::work")],
        BTreeSet::from([module("bench::stop")])
    );
    assert!(
        graph[&module("runner")].contains(&module("runner::run")),
        "{graph:?}"
    );
    assert!(cycles(&graph).is_empty(), "{graph:?}");
}

/// `lib.rs` and `main.rs` are two crate roots: the binary's `crate::` is its own, its
/// `sqsprobe::` the library's; and a file no `mod` line reaches is found.
#[test]
fn lib_and_main_are_two_crate_roots() {
    let dir = made_tree(&[
        ("lib.rs", "pub mod cli;\npub struct Root;\n"),
        ("cli.rs", "pub fn main() -> i32 { 0 }\n"),
        (
            "main.rs",
            "mod alloc;\nfn main() { sqsprobe::cli::main(); crate::alloc::set(); }\n",
        ),
        ("alloc.rs", "pub fn set() {}\n"),
        ("stray.rs", "use crate::cli::main;\n"),
    ]);
    let tree = read_tree(dir.path());
    assert_eq!(tree.undeclared, [PathBuf::from("stray.rs")]);
    let graph = import_graph(dir.path());
    let bin = vec![BIN.to_string()];
    let mut bin_alloc = bin.clone();
    bin_alloc.push("alloc".into());
    assert_eq!(
        graph[&bin],
        BTreeSet::from([module("cli"), bin_alloc]),
        "{graph:?}"
    );
    assert!(graph[&module("")].is_empty(), "{graph:?}");
    assert_eq!(tree.files[&module("")].path, PathBuf::from("lib.rs"));
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
        // The library's root and the binary sit above every floor.
        let Some(top) = module.first().filter(|t| *t != BIN) else {
            continue;
        };
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
    let long: Vec<String> = read_tree(&src())
        .files
        .values()
        .filter(|f| f.code_lines > MAX_LINES)
        .map(|f| format!("src/{}: {} lines", f.path.display(), f.code_lines))
        .collect();
    assert!(
        long.is_empty(),
        "split these by responsibility (docs/architecture.md): {long:?}"
    );
}

/// Lines a test item holds are not counted, wherever the item sits; every other line is, also
/// after the first `#[cfg(test)]` (the check once stopped counting there).
#[test]
fn the_size_check_counts_every_line_outside_test_items() {
    let text = "\
//! A module; `#[cfg(test)]` in a comment cuts nothing.
pub fn a() {}

#[cfg(test)]
mod tests {
    #[test]
    fn t() {}
}

/// Code after the tests still counts.
pub struct After {
    pub x: u8,
    #[cfg(test)]
    pub probe: u8,
}
#[cfg(test)]
pub const ALL: [u8; 2] = [1, 2];
pub fn last() {}
";
    // 18 lines: the 5 of `mod tests`, the field's 2 and the const's 2 are test lines.
    assert_eq!(text.lines().count(), 18);
    assert_eq!(reader::code_lines(text), 9);
}

/// Every `.rs` file under `src/` is a module the compiler reads: one no `mod` line reaches is
/// code that is never built, nor checked here.
#[test]
fn every_source_file_is_declared() {
    let undeclared = read_tree(&src()).undeclared;
    assert!(
        undeclared.is_empty(),
        "declare these in their parent module, or remove them: {undeclared:?}"
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

/// Comments say why, in words a reader can follow: never "issue N" of a tracker the reader
/// cannot open. A reference to a public project's issue (`LocalStack issue #8234`) names
/// where to read it and is not matched.
#[test]
fn no_comment_points_at_an_issue_number() {
    let mut found = Vec::new();
    let mut stack = vec![
        crate::common::root().join("src"),
        crate::common::root().join("tests"),
    ];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            let Ok(text) = std::fs::read_to_string(&path) else {
                continue;
            };
            for (n, line) in text.lines().enumerate() {
                let lower = line.to_ascii_lowercase();
                let hit = lower
                    .match_indices("issue ")
                    .any(|(i, _)| lower[i + 6..].starts_with(|c: char| c.is_ascii_digit()));
                if hit {
                    found.push(format!("{}:{}: {}", path.display(), n + 1, line.trim()));
                }
            }
        }
    }
    assert!(found.is_empty(), "issue numbers in comments: {found:#?}");
}
