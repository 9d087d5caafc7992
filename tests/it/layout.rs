//! The layout the architecture promises (docs/architecture.md) where Cargo cannot hold it.
//!
//! The floors are crates (`crates/*` and the root package), so an import up a floor does not
//! compile; what is checked here is that the crates depend on each other as the page draws them,
//! so the page cannot go stale. Then what no compiler checks: no file's code outside its tests
//! grows past what one reader can hold (900 lines); every `.rs` file under a crate's `src/` is a
//! module some `mod` line declares (an undeclared file is code that is never built); the tests'
//! own layout: every file of `tests/` is a module of one of the few test binaries (`tests/it/`,
//! `tests/long/`), never a binary of its own nor a file cargo silently leaves out; and comments
//! that say why, never "issue N".
//!
//! Sources are read with `syn`, as the compiler reads them: a test item is one under
//! `#[cfg(test)]` (or `cfg(all(test, ...))`), wherever it sits (a `mod tests`, a helper in
//! the middle of a file, a struct's field), and its lines, attributes included, are not code.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use syn::spanned::Spanned;
use syn::visit::Visit;

/// Longest a source file may be outside its `#[cfg(test)]` items.
const MAX_LINES: usize = 900;

fn root() -> PathBuf {
    crate::common::root()
}

/// The source folder of every crate of the workspace: the root package's and each member's.
fn source_roots() -> Vec<PathBuf> {
    let mut roots = vec![root().join("src")];
    let mut members: Vec<PathBuf> = std::fs::read_dir(root().join("crates"))
        .unwrap()
        .map(|e| e.unwrap().path().join("src"))
        .filter(|p| p.is_dir())
        .collect();
    members.sort();
    roots.extend(members);
    roots
}

/// Whether an attribute list makes its item exist in test builds only.
fn is_test_only(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|a| {
        if !a.path().is_ident("cfg") {
            return false;
        }
        let Ok(meta) = a.parse_args::<syn::Meta>() else {
            return false;
        };
        match meta {
            syn::Meta::Path(p) => p.is_ident("test"),
            // `all(test, …)` needs test; `any(test, …)` and `not(test)` do not.
            syn::Meta::List(l) if l.path.is_ident("all") => l
                .parse_args_with(
                    syn::punctuated::Punctuated::<syn::Meta, syn::Token![,]>::parse_terminated,
                )
                .map(|args| args.iter().any(|m| m.path().is_ident("test")))
                .unwrap_or(false),
            _ => false,
        }
    })
}

/// The line ranges (1-based, inclusive) of every test-only node of a file, attributes included.
#[derive(Default)]
struct TestLines(Vec<(usize, usize)>);

impl TestLines {
    /// Records `node` if `attrs` make it test-only; says whether it did (then its inside is
    /// not walked: it is all test lines).
    fn take(&mut self, attrs: &[syn::Attribute], node: &impl Spanned) -> bool {
        if !is_test_only(attrs) {
            return false;
        }
        let span = node.span();
        self.0.push((span.start().line, span.end().line));
        true
    }
}

impl<'a> Visit<'a> for TestLines {
    fn visit_item(&mut self, item: &'a syn::Item) {
        let attrs: &[syn::Attribute] = match item {
            syn::Item::Const(i) => &i.attrs,
            syn::Item::Enum(i) => &i.attrs,
            syn::Item::ExternCrate(i) => &i.attrs,
            syn::Item::Fn(i) => &i.attrs,
            syn::Item::ForeignMod(i) => &i.attrs,
            syn::Item::Impl(i) => &i.attrs,
            syn::Item::Macro(i) => &i.attrs,
            syn::Item::Mod(i) => &i.attrs,
            syn::Item::Static(i) => &i.attrs,
            syn::Item::Struct(i) => &i.attrs,
            syn::Item::Trait(i) => &i.attrs,
            syn::Item::TraitAlias(i) => &i.attrs,
            syn::Item::Type(i) => &i.attrs,
            syn::Item::Union(i) => &i.attrs,
            syn::Item::Use(i) => &i.attrs,
            _ => &[],
        };
        if !self.take(attrs, item) {
            syn::visit::visit_item(self, item);
        }
    }

    fn visit_impl_item(&mut self, item: &'a syn::ImplItem) {
        let attrs: &[syn::Attribute] = match item {
            syn::ImplItem::Const(i) => &i.attrs,
            syn::ImplItem::Fn(i) => &i.attrs,
            syn::ImplItem::Type(i) => &i.attrs,
            syn::ImplItem::Macro(i) => &i.attrs,
            _ => &[],
        };
        if !self.take(attrs, item) {
            syn::visit::visit_impl_item(self, item);
        }
    }

    fn visit_trait_item(&mut self, item: &'a syn::TraitItem) {
        let attrs: &[syn::Attribute] = match item {
            syn::TraitItem::Const(i) => &i.attrs,
            syn::TraitItem::Fn(i) => &i.attrs,
            syn::TraitItem::Type(i) => &i.attrs,
            syn::TraitItem::Macro(i) => &i.attrs,
            _ => &[],
        };
        if !self.take(attrs, item) {
            syn::visit::visit_trait_item(self, item);
        }
    }

    fn visit_field(&mut self, field: &'a syn::Field) {
        if !self.take(&field.attrs, field) {
            syn::visit::visit_field(self, field);
        }
    }

    fn visit_variant(&mut self, variant: &'a syn::Variant) {
        if !self.take(&variant.attrs, variant) {
            syn::visit::visit_variant(self, variant);
        }
    }

    fn visit_arm(&mut self, arm: &'a syn::Arm) {
        if !self.take(&arm.attrs, arm) {
            syn::visit::visit_arm(self, arm);
        }
    }
}

/// Lines of `text` outside its test-only items (a file that does not parse counts whole: the
/// compiler fails it anyway).
fn code_lines(text: &str) -> usize {
    let total = text.lines().count();
    let Ok(file) = syn::parse_file(text) else {
        return total;
    };
    if is_test_only(&file.attrs) {
        return 0;
    }
    let mut lines = TestLines::default();
    lines.visit_file(&file);
    let test: BTreeSet<usize> = lines.0.iter().flat_map(|&(a, b)| a..=b).collect();
    total - test.len().min(total)
}

/// The files a module file declares with `mod name;` lines, at any depth of inline modules,
/// where the compiler looks for them (`dir/name.rs` or `dir/name/mod.rs`, `dir` being the
/// folder of a `mod.rs`, `lib.rs` or `main.rs`, else the file's own folder by its name).
fn declared_files(file: &Path) -> Vec<PathBuf> {
    let text = std::fs::read_to_string(file).unwrap();
    let parsed = syn::parse_file(&text)
        .unwrap_or_else(|e| panic!("{}: does not parse: {e}", file.display()));
    let name = file.file_stem().unwrap().to_string_lossy();
    let dir = if matches!(name.as_ref(), "mod" | "lib" | "main") {
        file.parent().unwrap().to_path_buf()
    } else {
        file.parent().unwrap().join(name.as_ref())
    };
    let mut out = Vec::new();
    fn walk(items: &[syn::Item], dir: &Path, out: &mut Vec<PathBuf>) {
        for item in items {
            let syn::Item::Mod(m) = item else { continue };
            let name = m.ident.to_string();
            match &m.content {
                Some((_, inner)) => walk(inner, &dir.join(&name), out),
                None => {
                    let flat = dir.join(format!("{name}.rs"));
                    out.push(if flat.is_file() {
                        flat
                    } else {
                        dir.join(&name).join("mod.rs")
                    });
                }
            }
        }
    }
    walk(&parsed.items, &dir, &mut out);
    out
}

/// Every `.rs` file under `src`, and the ones the crate's roots reach by `mod` lines.
fn reached_and_present(src: &Path) -> (BTreeSet<PathBuf>, BTreeSet<PathBuf>) {
    let mut reached = BTreeSet::new();
    let mut todo: Vec<PathBuf> = ["lib.rs", "main.rs"]
        .iter()
        .map(|r| src.join(r))
        .filter(|p| p.is_file())
        .collect();
    while let Some(file) = todo.pop() {
        if reached.insert(file.clone()) {
            todo.extend(declared_files(&file).into_iter().filter(|f| f.is_file()));
        }
    }
    let mut present = BTreeSet::new();
    let mut stack = vec![src.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                present.insert(path);
            }
        }
    }
    (reached, present)
}

fn shown(path: &Path) -> String {
    path.strip_prefix(root())
        .unwrap_or(path)
        .display()
        .to_string()
}

#[test]
fn no_source_file_is_longer_than_one_reader_holds() {
    let mut long = Vec::new();
    for src in source_roots() {
        for file in reached_and_present(&src).1 {
            let lines = code_lines(&std::fs::read_to_string(&file).unwrap());
            if lines > MAX_LINES {
                long.push(format!("{}: {lines} lines", shown(&file)));
            }
        }
    }
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
    assert_eq!(code_lines(text), 9);
}

/// Every `.rs` file under a crate's `src/` is a module the compiler reads: one no `mod` line
/// reaches is code that is never built, nor checked.
#[test]
fn every_source_file_is_declared() {
    let mut undeclared = Vec::new();
    for src in source_roots() {
        let (reached, present) = reached_and_present(&src);
        undeclared.extend(present.difference(&reached).map(|f| shown(f)));
    }
    assert!(
        undeclared.is_empty(),
        "declare these in their parent module, or remove them: {undeclared:?}"
    );
}

#[test]
fn the_declared_check_follows_inline_modules_and_both_file_forms() {
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, text: &str| {
        let path = dir.path().join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap()
    };
    write(
        "lib.rs",
        "mod a;\nmod b;\nmod outer { mod inner; }\n#[cfg(test)]\nmod t;\n",
    );
    write("a.rs", "mod child;\n");
    write("a/child.rs", "");
    write("b/mod.rs", "");
    write("outer/inner.rs", "");
    write("t.rs", "");
    write("stray.rs", "");
    write("a/lost.rs", "");
    let (reached, present) = reached_and_present(dir.path());
    let missing: Vec<String> = present
        .difference(&reached)
        .map(|f| f.strip_prefix(dir.path()).unwrap().display().to_string())
        .collect();
    assert_eq!(missing, ["a/lost.rs", "stray.rs"]);
}

/// The crate each crate may name, as the floors block of docs/architecture.md draws them:
/// `crate: dependency, dependency`.
fn documented_floors(doc: &str) -> BTreeMap<String, BTreeSet<String>> {
    let start = doc
        .find("<!-- crates: checked by tests/it/layout.rs -->")
        .expect("docs/architecture.md has the crates block");
    let block = &doc[start..];
    let body = block
        .split("```")
        .nth(1)
        .expect("the crates block is a fenced block");
    body.lines()
        .filter_map(|l| l.split_once(" -> "))
        .map(|(krate, deps)| {
            let deps = deps
                .split(',')
                .map(str::trim)
                .filter(|d| !d.is_empty() && *d != "(nothing)")
                .map(String::from)
                .collect();
            (krate.trim().to_string(), deps)
        })
        .collect()
}

/// The workspace crates a manifest's `[dependencies]` (normal ones: what the code may import)
/// names.
fn manifest_floors(manifest: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut in_deps = false;
    for line in manifest.lines() {
        let line = line.trim();
        if line.starts_with('[') {
            in_deps = line == "[dependencies]";
            continue;
        }
        if in_deps && line.starts_with("sqsprobe-") {
            out.insert(line.split([' ', '=', '.']).next().unwrap().to_string());
        }
    }
    out
}

#[test]
fn the_crates_depend_on_each_other_as_the_architecture_draws_them() {
    let doc = std::fs::read_to_string(root().join("docs/architecture.md")).unwrap();
    let documented = documented_floors(&doc);
    let mut found = BTreeMap::new();
    found.insert(
        "sqsprobe".to_string(),
        manifest_floors(&std::fs::read_to_string(root().join("Cargo.toml")).unwrap()),
    );
    for src in source_roots().into_iter().skip(1) {
        let dir = src.parent().unwrap();
        let name = dir.file_name().unwrap().to_string_lossy().into_owned();
        let manifest = std::fs::read_to_string(dir.join("Cargo.toml")).unwrap();
        found.insert(name, manifest_floors(&manifest));
    }
    assert_eq!(
        found, documented,
        "docs/architecture.md's crates block and the manifests disagree"
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
        crate::common::root().join("crates"),
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

/// Every module opens with its `//!` doc, saying what it holds: the architecture page points
/// at those docs rather than repeating them.
#[test]
fn every_source_file_opens_with_its_module_doc() {
    let mut bare = Vec::new();
    for src in source_roots() {
        for file in reached_and_present(&src).1 {
            let text = std::fs::read_to_string(&file).unwrap();
            if !text.starts_with("//!") {
                bare.push(shown(&file));
            }
        }
    }
    assert!(bare.is_empty(), "no `//!` module doc: {bare:?}");
}

/// The paths a page names in backticks, outside fenced blocks: `*.rs` files and folders
/// (`name/`); a placeholder (`cli/<command>.rs`) names no file.
fn named_paths(doc: &str) -> Vec<&str> {
    let mut fenced = false;
    let mut out = Vec::new();
    for line in doc.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if fenced {
            continue;
        }
        out.extend(line.split('`').skip(1).step_by(2).filter(|t| {
            (t.ends_with(".rs") || t.ends_with('/'))
                && !t.contains(|c: char| c.is_whitespace() || "<>:*".contains(c))
        }));
    }
    out
}

/// The paths `doc` names that do not exist under `root`. A path with a folder is relative to
/// the repository root, a crate's `src/` (`src/` or `crates/*/src/`) or a room of one (a
/// folder directly under it); a bare file name (`lifecycle.rs`) is a file at the root or
/// somewhere under a crate's `src/`.
fn missing_paths<'a>(doc: &'a str, root: &Path) -> Vec<&'a str> {
    let mut srcs = vec![root.join("src")];
    if let Ok(crates) = std::fs::read_dir(root.join("crates")) {
        srcs.extend(crates.map(|e| e.unwrap().path().join("src")));
    }
    srcs.retain(|s| s.is_dir());
    let mut bases = vec![root.to_path_buf()];
    let mut names: BTreeSet<String> = std::fs::read_dir(root)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    for src in &srcs {
        bases.push(src.clone());
        bases.extend(
            std::fs::read_dir(src)
                .unwrap()
                .map(|e| e.unwrap().path())
                .filter(|p| p.is_dir()),
        );
        for entry in walkdir::WalkDir::new(src) {
            names.insert(entry.unwrap().file_name().to_string_lossy().into_owned());
        }
    }
    named_paths(doc)
        .into_iter()
        .filter(|path| match path.contains('/') {
            true => !bases.iter().any(|b| b.join(path).exists()),
            false => !names.contains(*path),
        })
        .collect()
}

/// Every file and folder docs/architecture.md names exists: a path the page names is one a
/// reader can open, and a move that leaves the page behind fails here.
#[test]
fn every_path_the_architecture_names_exists() {
    let doc = std::fs::read_to_string(root().join("docs/architecture.md")).unwrap();
    assert!(named_paths(&doc).len() > 50, "the page names its files");
    let missing = missing_paths(&doc, &root());
    assert!(
        missing.is_empty(),
        "docs/architecture.md names paths that do not exist: {missing:?}"
    );
}

#[test]
fn the_path_check_finds_a_made_up_path() {
    let dir = tempfile::tempdir().unwrap();
    for file in [
        "build.rs",
        "src/cli/run.rs",
        "crates/x/src/suite/parse/steps.rs",
        "docs/a.md",
    ] {
        let path = dir.path().join(file);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, "").unwrap();
    }
    let doc = "\
Real: `cli/run.rs`, `src/cli/run.rs`, `suite/`, `parse/steps.rs`, `steps.rs`, `build.rs`, `docs/`.
Not paths: `cli/<command>.rs`, `a b/`, `crate::cli`, `docs/a.md`.
Made up: `cli/walk.rs`, `walk.rs`, `nowhere/`, `crates/x/src/parse/steps.rs`.
```
in/a_block.rs
```
";
    assert_eq!(
        missing_paths(doc, dir.path()),
        [
            "cli/walk.rs",
            "walk.rs",
            "nowhere/",
            "crates/x/src/parse/steps.rs"
        ]
    );
}
