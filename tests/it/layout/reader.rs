//! Reading `src/` the way a reader follows its imports, for the layout checks of `layout.rs`
//! (whose module doc states the rule): the files the crates are made of, found by following
//! `mod` lines from `lib.rs` and `main.rs`; each file's code as tokens (comments and literals
//! gone, so a path in a doc comment or a string is no import); its `#[cfg(test)]` items dropped
//! wherever they sit; and every path left resolved to the file that defines what it names.
//!
//! Text is not enough: a path is read in its module (a child's name, a name a `use` bound, a
//! `super` inside an inline `mod x { }`), and an item is followed through the `use` and
//! `pub use` that re-export it, as the compiler follows them.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// A module's path from its crate root (`["runner", "case", "acks"]`): the library's root is
/// `[]`, the binary's is `[BIN]`.
pub type ModPath = Vec<String>;

/// The first segment of the binary's module paths: `main.rs` is `[BIN]`. Not a name Rust
/// allows, so the binary's modules never meet the library's (`lib.rs` and `main.rs` are two
/// crate roots, not one).
pub const BIN: &str = "(bin)";

/// The library's name, as the binary's code writes it (`sqsprobe::cli::main()`).
const LIB: &str = env!("CARGO_PKG_NAME");

/// File → file imports, each with where it is written (`cli/bench.rs:116 raw::run`).
pub type Edges = BTreeMap<ModPath, BTreeMap<ModPath, Vec<String>>>;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Ident,
    Punct,
    /// A string, character or number literal, or a lifetime: never part of a path.
    Literal,
}

#[derive(Debug, Clone)]
struct Token {
    kind: Kind,
    text: String,
    line: usize,
}

/// The tokens of a file, comments dropped (`//`, `/* */` nested, doc comments), literals kept
/// as opaque tokens, `::` one token, `$name` one identifier (so `$crate` is a path root).
fn tokenize(text: &str) -> Vec<Token> {
    let chars: Vec<char> = text.chars().collect();
    let at = |j: usize| chars.get(j).copied().unwrap_or('\0');
    let ident_start = |c: char| c.is_alphabetic() || c == '_';
    let ident_char = |c: char| c.is_alphanumeric() || c == '_';
    let mut out = Vec::new();
    let (mut i, mut line) = (0usize, 1usize);
    // Moves `i` to `end`, counting the lines passed.
    let advance = |i: &mut usize, line: &mut usize, end: usize| {
        *line += chars[*i..end.min(chars.len())]
            .iter()
            .filter(|&&c| c == '\n')
            .count();
        *i = end.min(chars.len());
    };
    let push = |out: &mut Vec<Token>, kind: Kind, text: String, line: usize| {
        out.push(Token { kind, text, line });
    };
    while i < chars.len() {
        let c = chars[i];
        let start_line = line;
        if c.is_whitespace() {
            let end = i + 1;
            advance(&mut i, &mut line, end);
        } else if c == '/' && at(i + 1) == '/' {
            let end = (i..chars.len())
                .find(|&j| chars[j] == '\n')
                .unwrap_or(chars.len());
            advance(&mut i, &mut line, end);
        } else if c == '/' && at(i + 1) == '*' {
            let (mut j, mut depth) = (i, 0usize);
            while j < chars.len() {
                if chars[j] == '/' && at(j + 1) == '*' {
                    depth += 1;
                    j += 2;
                } else if chars[j] == '*' && at(j + 1) == '/' {
                    depth -= 1;
                    j += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    j += 1;
                }
            }
            advance(&mut i, &mut line, j);
        } else if let Some(end) = raw_string_end(&chars, i) {
            advance(&mut i, &mut line, end);
            push(&mut out, Kind::Literal, String::new(), start_line);
        } else if c == '"' || ((c == 'b' || c == 'c') && at(i + 1) == '"') {
            let mut j = if c == '"' { i + 1 } else { i + 2 };
            while j < chars.len() && chars[j] != '"' {
                j += if chars[j] == '\\' { 2 } else { 1 };
            }
            advance(&mut i, &mut line, j + 1);
            push(&mut out, Kind::Literal, String::new(), start_line);
        } else if c == '\'' || (c == 'b' && at(i + 1) == '\'') {
            let j = if c == '\'' { i + 1 } else { i + 2 };
            let end = if at(j) == '\\' {
                // An escaped character: `'\''`, `'\n'`, `'\u{1F600}'`.
                (j + 2..chars.len())
                    .find(|&k| chars[k] == '\'')
                    .map_or(chars.len(), |k| k + 1)
            } else if at(j + 1) == '\'' {
                j + 2
            } else {
                // A lifetime or a label: `'a`, `'static`.
                (j..chars.len())
                    .find(|&k| !ident_char(chars[k]))
                    .unwrap_or(chars.len())
            };
            advance(&mut i, &mut line, end);
            push(&mut out, Kind::Literal, String::new(), start_line);
        } else if ident_start(c) || (c == '$' && ident_start(at(i + 1))) {
            let mut start = i;
            if c == 'r' && at(i + 1) == '#' && ident_start(at(i + 2)) {
                start = i + 2;
            }
            let end = (start + 1..chars.len())
                .find(|&k| !ident_char(chars[k]))
                .unwrap_or(chars.len());
            let word: String = chars[start..end].iter().collect();
            advance(&mut i, &mut line, end);
            push(&mut out, Kind::Ident, word, start_line);
        } else if c.is_ascii_digit() {
            let mut j = i + 1;
            while j < chars.len()
                && (ident_char(chars[j]) || (chars[j] == '.' && at(j + 1).is_ascii_digit()))
            {
                j += 1;
            }
            advance(&mut i, &mut line, j);
            push(&mut out, Kind::Literal, String::new(), start_line);
        } else if c == ':' && at(i + 1) == ':' {
            let end = i + 2;
            advance(&mut i, &mut line, end);
            push(&mut out, Kind::Punct, "::".into(), start_line);
        } else {
            let end = i + 1;
            advance(&mut i, &mut line, end);
            push(&mut out, Kind::Punct, c.to_string(), start_line);
        }
    }
    out
}

/// Where a raw string (`r"…"`, `r#"…"#`, `br"…"`, `cr"…"`) starting at `i` ends, if one does.
fn raw_string_end(chars: &[char], i: usize) -> Option<usize> {
    let r = match chars.get(i)? {
        'r' => i,
        'b' | 'c' if chars.get(i + 1) == Some(&'r') => i + 1,
        _ => return None,
    };
    let hashes = chars[r + 1..].iter().take_while(|&&c| c == '#').count();
    if chars.get(r + 1 + hashes) != Some(&'"') {
        return None;
    }
    let body = r + 2 + hashes;
    let closing: Vec<char> = std::iter::once('"')
        .chain(std::iter::repeat_n('#', hashes))
        .collect();
    let end = (body..chars.len())
        .find(|&k| chars[k..].starts_with(&closing))
        .map_or(chars.len(), |k| k + closing.len());
    Some(end)
}

/// One leaf of a `use` tree: its path as written (a trailing `self` dropped), the name it
/// binds (none for a glob or `as _`), and whether it is a glob.
#[derive(Debug, Clone)]
struct Use {
    segs: Vec<String>,
    bound: Option<String>,
    glob: bool,
    line: usize,
}

/// What one module's code holds: its child modules, the items it defines, its `use` leaves
/// and the paths written in its code.
#[derive(Debug, Default, Clone)]
struct Scope {
    /// The module file this module is written in (an inline module's is its parent's).
    file: ModPath,
    children: BTreeSet<String>,
    defs: BTreeSet<String>,
    uses: Vec<Use>,
    paths: Vec<(Vec<String>, usize)>,
}

/// A `mod name;` line: the module it is written in (an inline module, for a file nested under
/// it), and whether it is test-only.
struct ModLine {
    parent: ModPath,
    name: String,
    test: bool,
}

/// What reading one file gives.
#[derive(Default)]
struct FileScan {
    scopes: BTreeMap<ModPath, Scope>,
    mod_lines: Vec<ModLine>,
    /// The lines of `#[cfg(test)]` items, from the attribute to the item's end.
    test_lines: BTreeSet<usize>,
    /// `#![cfg(test)]` at the top: the whole file is test code.
    test_file: bool,
}

/// Words that start an item which ends at its `}` (or at `;` when it has no body).
const BRACE_ITEMS: &[&str] = &[
    "fn",
    "struct",
    "enum",
    "union",
    "trait",
    "impl",
    "mod",
    "macro_rules",
];
/// Words that start an item which ends only at its `;` (a `const` may hold a block).
const SEMI_ITEMS: &[&str] = &["static", "type", "use", "let", "extern"];
/// Words after which an identifier is a name this module defines.
const DEF_WORDS: &[&str] = &[
    "fn", "struct", "enum", "union", "trait", "type", "const", "static",
];
/// Words that may follow a defining word without being the name it defines (`const fn`,
/// `static mut`, `const _`).
const KEYWORDS: &[&str] = &[
    "fn", "unsafe", "async", "extern", "const", "static", "mut", "_", "impl", "for", "dyn", "where",
];

/// The text of token `i`, or `""` past the end (so a look-ahead never panics).
fn text(toks: &[Token], i: usize) -> &str {
    toks.get(i).map_or("", |t| t.text.as_str())
}

/// The index after the bracket group opening at `i` (`(`, `[` or `{`, nested).
fn group_end(toks: &[Token], i: usize) -> usize {
    let mut depth = 0usize;
    for (j, t) in toks.iter().enumerate().skip(i) {
        if t.kind != Kind::Punct {
            continue;
        }
        match t.text.as_str() {
            "(" | "[" | "{" => depth += 1,
            ")" | "]" | "}" => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    return j + 1;
                }
            }
            _ => {}
        }
    }
    toks.len()
}

/// Whether a `cfg` predicate holds only under test: `test`, or `all(…)` with such a member, or
/// `any(…)` whose members all are. `not(test)` and everything else holds outside tests too.
fn test_only(pred: &[Token]) -> bool {
    let args = || {
        let inner = &pred[2..pred.len().saturating_sub(1)];
        let mut parts = Vec::new();
        let (mut depth, mut start) = (0usize, 0usize);
        for (j, t) in inner.iter().enumerate() {
            match t.text.as_str() {
                "(" => depth += 1,
                ")" => depth = depth.saturating_sub(1),
                "," if depth == 0 => {
                    parts.push(&inner[start..j]);
                    start = j + 1;
                }
                _ => {}
            }
        }
        parts.push(&inner[start..]);
        parts.retain(|p| !p.is_empty());
        parts
    };
    match pred.first().map(|t| t.text.as_str()) {
        Some("test") => pred.len() == 1,
        Some("all") => args().into_iter().any(test_only),
        Some("any") => {
            let parts = args();
            !parts.is_empty() && parts.into_iter().all(test_only)
        }
        _ => false,
    }
}

/// Whether the attribute whose tokens are `attr` (inside its brackets) is `cfg(…)` of a
/// test-only predicate.
fn is_cfg_test(attr: &[Token]) -> bool {
    attr.len() >= 3
        && text(attr, 0) == "cfg"
        && text(attr, 1) == "("
        && test_only(&attr[2..attr.len() - 1])
}

/// Where the item starting at `i` ends (the index after it), and the module it declares if it
/// is `mod name;`. An item is read by its kind: one with a body ends at its `}`, a `const` or
/// `static` at its `;`, and anything else (a field, a variant, a match arm, a statement) at
/// the `,` or `;` after it, or before the bracket that closes what holds it.
fn item_end(toks: &[Token], mut i: usize) -> (usize, Option<String>) {
    while text(toks, i) == "#" {
        let open = if text(toks, i + 1) == "!" {
            i + 2
        } else {
            i + 1
        };
        i = group_end(toks, open);
    }
    let mut j = i;
    if text(toks, j) == "pub" {
        j += 1;
        if text(toks, j) == "(" {
            j = group_end(toks, j);
        }
    }
    let declared =
        (text(toks, j) == "mod" && text(toks, j + 2) == ";").then(|| text(toks, j + 1).to_string());
    // The item's kind: its first word that says one (`const fn` is a function).
    let (mut braced, mut semi) = (false, false);
    while let Some(t) = toks.get(j).filter(|t| t.kind != Kind::Punct) {
        let word = t.text.as_str();
        if BRACE_ITEMS.contains(&word) || text(toks, j + 1) == "!" {
            braced = true;
            break;
        }
        if SEMI_ITEMS.contains(&word) && !(word == "extern" && text(toks, j + 2) == "fn") {
            semi = true;
            break;
        }
        if word == "const" && !["fn", "unsafe", "async", "extern"].contains(&text(toks, j + 1)) {
            semi = true;
            break;
        }
        j += 1;
    }
    let mut depth = 0usize;
    let mut k = i;
    while k < toks.len() {
        let t = &toks[k];
        if t.kind == Kind::Punct {
            match t.text.as_str() {
                "(" | "[" | "{" => depth += 1,
                ")" | "]" | "}" => {
                    if depth == 0 {
                        return (k, declared);
                    }
                    depth -= 1;
                    if depth == 0 && t.text == "}" && !semi {
                        return (k + 1, declared);
                    }
                }
                ";" if depth == 0 => return (k + 1, declared),
                "," if depth == 0 && !braced && !semi => return (k + 1, declared),
                _ => {}
            }
        }
        k += 1;
    }
    (toks.len(), declared)
}

/// Reads the `use` tree starting at `i` (after `use`) into `out`; returns the index after it.
fn use_tree(toks: &[Token], mut i: usize, mut segs: Vec<String>, out: &mut Vec<Use>) -> usize {
    let line = toks.get(i).map_or(0, |t| t.line);
    loop {
        match text(toks, i) {
            "::" => {
                if segs.is_empty() {
                    // `use ::name`: an external crate.
                    segs.push("::".into());
                }
                i += 1;
            }
            "{" => {
                i += 1;
                while !matches!(text(toks, i), "}" | "") {
                    i = use_tree(toks, i, segs.clone(), out);
                    if text(toks, i) == "," {
                        i += 1;
                    }
                }
                return i + 1;
            }
            "*" => {
                out.push(Use {
                    segs,
                    bound: None,
                    glob: true,
                    line,
                });
                return i + 1;
            }
            word if toks.get(i).is_some_and(|t| t.kind == Kind::Ident) => {
                segs.push(word.to_string());
                i += 1;
                if text(toks, i) == "::" {
                    i += 1;
                    continue;
                }
                let mut alias = None;
                if text(toks, i) == "as" {
                    alias = Some(text(toks, i + 1).to_string());
                    i += 2;
                }
                if segs.last().is_some_and(|s| s == "self") {
                    segs.pop();
                }
                let bound = match alias {
                    Some(a) if a == "_" => None,
                    Some(a) => Some(a),
                    None => segs.last().cloned(),
                };
                out.push(Use {
                    segs,
                    bound,
                    glob: false,
                    line,
                });
                return i;
            }
            _ => return i,
        }
    }
}

/// Reads one file whose module path is `root`: its modules (inline ones too), what each
/// holds, its `mod` lines and its test lines.
fn scan(toks: &[Token], root: &ModPath) -> FileScan {
    let mut out = FileScan::default();
    out.scopes.insert(root.clone(), Scope::default());
    // Each open module and the brace depth its items sit at.
    let mut stack: Vec<(ModPath, usize)> = vec![(root.clone(), 0)];
    let mut depth = 0usize;
    let mut i = 0;
    while i < toks.len() {
        let (here, item_depth) = stack.last().cloned().unwrap();
        let at_items = depth == item_depth;
        let t = &toks[i];
        let prev = if i > 0 { text(toks, i - 1) } else { "" };
        let scope = out.scopes.get_mut(&here).unwrap();
        match (t.kind, t.text.as_str()) {
            (Kind::Punct, "#") if matches!(text(toks, i + 1), "[" | "!") => {
                let inner = text(toks, i + 1) == "!";
                let open = if inner { i + 2 } else { i + 1 };
                let close = group_end(toks, open);
                if !is_cfg_test(&toks[open + 1..close.saturating_sub(1).max(open + 1)]) {
                    // Not a test attribute: its paths are read like any others.
                    i += 1;
                    continue;
                }
                if inner {
                    if stack.len() == 1 {
                        out.test_file = true;
                        return out;
                    }
                    // `#![cfg(test)]` inside an inline module: the module is test code.
                    out.scopes.remove(&here);
                    stack.pop();
                    let parent = &stack.last().unwrap().0;
                    if let Some(p) = out.scopes.get_mut(parent) {
                        p.children.remove(here.last().unwrap());
                    }
                    let mut k = close;
                    let mut d = depth;
                    while k < toks.len() && d >= item_depth {
                        match text(toks, k) {
                            "{" => d += 1,
                            "}" => d -= 1,
                            _ => {}
                        }
                        k += 1;
                    }
                    depth = d;
                    i = k;
                    continue;
                }
                let (end, declared) = item_end(toks, close);
                let last = toks[end.saturating_sub(1).max(i)].line;
                out.test_lines.extend(t.line..=last);
                if let Some(name) = declared {
                    out.mod_lines.push(ModLine {
                        parent: here,
                        name,
                        test: true,
                    });
                }
                i = end;
                continue;
            }
            (Kind::Punct, "{") => depth += 1,
            (Kind::Punct, "}") => {
                if stack.len() > 1 && depth == item_depth {
                    stack.pop();
                }
                depth = depth.saturating_sub(1);
            }
            (Kind::Ident, "mod") if toks.get(i + 1).is_some_and(|n| n.kind == Kind::Ident) => {
                let name = text(toks, i + 1).to_string();
                scope.children.insert(name.clone());
                match text(toks, i + 2) {
                    ";" => out.mod_lines.push(ModLine {
                        parent: here,
                        name,
                        test: false,
                    }),
                    "{" => {
                        let mut path = here;
                        path.push(name);
                        out.scopes.insert(path.clone(), Scope::default());
                        depth += 1;
                        stack.push((path, depth));
                    }
                    _ => {}
                }
                i += 3;
                continue;
            }
            (Kind::Ident, "use") if prev != "::" => {
                let mut leaves = Vec::new();
                i = use_tree(toks, i + 1, Vec::new(), &mut leaves);
                scope.uses.extend(leaves);
                continue;
            }
            (Kind::Ident, "macro_rules") if text(toks, i + 1) == "!" && at_items => {
                scope.defs.insert(text(toks, i + 2).to_string());
            }
            (Kind::Ident, word)
                if DEF_WORDS.contains(&word)
                    && at_items
                    && prev != "::"
                    && toks.get(i + 1).is_some_and(|n| n.kind == Kind::Ident)
                    && !KEYWORDS.contains(&text(toks, i + 1)) =>
            {
                scope.defs.insert(text(toks, i + 1).to_string());
            }
            (Kind::Ident, first) if text(toks, i + 1) == "::" && !matches!(prev, "::" | ".") => {
                let mut segs = vec![first.to_string()];
                let mut j = i + 1;
                while text(toks, j) == "::"
                    && toks.get(j + 1).is_some_and(|n| n.kind == Kind::Ident)
                {
                    segs.push(text(toks, j + 1).to_string());
                    j += 2;
                }
                scope.paths.push((segs, t.line));
                i = j;
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    out
}

/// A module file of the crates.
#[derive(Debug, Clone)]
pub struct ModFile {
    /// Its path under `src/`.
    pub path: PathBuf,
    /// Declared under `#[cfg(test)]` (or inside such a module): its code is test code.
    pub test: bool,
    /// Its lines outside `#[cfg(test)]` items, wherever they sit (0 for a test file).
    pub code_lines: usize,
}

/// The crates under a `src/` folder, as read.
#[derive(Debug, Default)]
pub struct Tree {
    /// Every module file reached from `lib.rs` and `main.rs` by `mod` lines, by module path.
    pub files: BTreeMap<ModPath, ModFile>,
    /// The `.rs` files under `src/` no `mod` line reaches (the compiler never reads them).
    pub undeclared: Vec<PathBuf>,
    /// Every module outside test code, inline ones too, with what its code holds.
    scopes: BTreeMap<ModPath, Scope>,
}

/// The folder the files of `mod` lines in `file` are in: beside `lib.rs`, `main.rs` and
/// `mod.rs`; under `name/` for `name.rs`.
fn child_dir(file: &Path) -> PathBuf {
    let dir = file.parent().unwrap().to_path_buf();
    match file.file_stem().and_then(|s| s.to_str()) {
        Some("lib" | "main" | "mod") => dir,
        Some(stem) => dir.join(stem),
        None => dir,
    }
}

/// Reads the crates under `src`.
pub fn read_tree(src: &Path) -> Tree {
    let mut tree = Tree::default();
    let mut todo: Vec<(ModPath, PathBuf, bool)> = Vec::new();
    for (root, name) in [(vec![], "lib.rs"), (vec![BIN.to_string()], "main.rs")] {
        if src.join(name).is_file() {
            todo.push((root, src.join(name), false));
        }
    }
    while let Some((module, file, test)) = todo.pop() {
        let text = std::fs::read_to_string(&file).unwrap();
        let scan = scan(&tokenize(&text), &module);
        let test = test || scan.test_file;
        let lines = text.lines().count();
        let code_lines = if test {
            0
        } else {
            lines - scan.test_lines.iter().filter(|&&l| l <= lines).count()
        };
        for decl in scan.mod_lines {
            let mut dir = child_dir(&file);
            dir.extend(&decl.parent[module.len()..]);
            let found = [
                dir.join(format!("{}.rs", decl.name)),
                dir.join(&decl.name).join("mod.rs"),
            ]
            .into_iter()
            .find(|p| p.is_file());
            if let Some(path) = found {
                let mut child = decl.parent;
                child.push(decl.name);
                todo.push((child, path, test || decl.test));
            }
        }
        if !test {
            for (path, mut scope) in scan.scopes {
                scope.file = module.clone();
                tree.scopes.insert(path, scope);
            }
        }
        let path = file.strip_prefix(src).unwrap().to_path_buf();
        tree.files.insert(
            module,
            ModFile {
                path,
                test,
                code_lines,
            },
        );
    }
    let known: BTreeSet<&PathBuf> = tree.files.values().map(|f| &f.path).collect();
    let mut stack = vec![src.to_path_buf()];
    let mut undeclared = Vec::new();
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let rel = path.strip_prefix(src).unwrap().to_path_buf();
                if !known.contains(&rel) {
                    undeclared.push(rel);
                }
            }
        }
    }
    undeclared.sort();
    tree.undeclared = undeclared;
    tree
}

impl Tree {
    /// The absolute path a path written in module `m` names, or `None` for one outside the
    /// crates (`std::…`, a dependency, a prelude name, `Self::…`).
    fn resolve(&self, m: &ModPath, segs: &[String], hops: usize) -> Option<ModPath> {
        let (first, mut rest) = segs.split_first()?;
        let mut base = match first.as_str() {
            "::" | "Self" => return None,
            // `$crate` is the crate the macro is written in, as `crate` is the path's own.
            "crate" | "$crate" if m.first().is_some_and(|s| s == BIN) => vec![BIN.to_string()],
            "crate" | "$crate" => Vec::new(),
            "self" => m.clone(),
            "super" => m[..m.len().saturating_sub(1)].to_vec(),
            name => match self.lookup(m, name, hops) {
                Some(p) => p,
                None if name == LIB && m.first().is_some_and(|s| s == BIN) => Vec::new(),
                None => return None,
            },
        };
        // `super::super::x`, `self::super::x`: each further `super` one module up.
        while let Some((s, after)) = rest.split_first()
            && s == "super"
        {
            base.pop();
            rest = after;
        }
        base.extend(rest.iter().cloned());
        Some(base)
    }

    /// What `name` means in module `m`: a child module, an item defined there, a name a `use`
    /// bound, or a name a glob brings in (in that order, as the compiler prefers).
    fn lookup(&self, m: &ModPath, name: &str, hops: usize) -> Option<ModPath> {
        if hops > 32 {
            return None;
        }
        let scope = self.scopes.get(m)?;
        if scope.children.contains(name) || scope.defs.contains(name) {
            let mut p = m.clone();
            p.push(name.to_string());
            return Some(p);
        }
        if let Some(u) = scope.uses.iter().find(|u| u.bound.as_deref() == Some(name)) {
            return self.resolve(m, &u.segs, hops + 1);
        }
        scope.uses.iter().filter(|u| u.glob).find_map(|u| {
            let target = self.resolve(m, &u.segs, hops + 1)?;
            self.lookup(&target, name, hops + 1)
        })
    }

    /// The module file that defines what `path` names: its deepest module, then through each
    /// `use` or `pub use` that brings the name there, to the module that defines it. Where
    /// reading cannot tell (a name no item, `use` or glob of the module gives, or a re-export
    /// from outside the crates), the deepest module's file.
    fn defining_file(&self, mut path: ModPath) -> Option<ModPath> {
        let mut seen = BTreeSet::new();
        loop {
            let depth = (0..=path.len())
                .rev()
                .find(|&n| self.scopes.contains_key(&path[..n]))?;
            let module = path[..depth].to_vec();
            let scope = &self.scopes[&module];
            let Some(name) = path.get(depth) else {
                return Some(scope.file.clone());
            };
            if scope.defs.contains(name) || !seen.insert(path.clone()) {
                return Some(scope.file.clone());
            }
            let via = match scope.uses.iter().find(|u| u.bound.as_deref() == Some(name)) {
                Some(u) => self.resolve(&module, &u.segs, 0),
                None => scope.uses.iter().filter(|u| u.glob).find_map(|u| {
                    let target = self.resolve(&module, &u.segs, 0)?;
                    self.lookup(&target, name, 0)
                }),
            };
            let Some(mut next) = via else {
                return Some(scope.file.clone());
            };
            next.extend(path[depth + 1..].iter().cloned());
            path = next;
        }
    }

    /// Every import between module files: from the file a `use` leaf or a path is written in,
    /// to the file that defines what it names. Every module file is a node, test files too
    /// (with no imports: their code is test code).
    pub fn edges(&self) -> Edges {
        let mut edges: Edges = self
            .files
            .keys()
            .map(|m| (m.clone(), BTreeMap::new()))
            .collect();
        for (module, scope) in &self.scopes {
            let written = scope
                .uses
                .iter()
                .map(|u| {
                    let shown = if u.glob {
                        format!("use {}::*", u.segs.join("::"))
                    } else {
                        format!("use {}", u.segs.join("::"))
                    };
                    (&u.segs, u.line, shown)
                })
                .chain(
                    scope
                        .paths
                        .iter()
                        .map(|(segs, line)| (segs, *line, segs.join("::"))),
                );
            for (segs, line, shown) in written {
                let Some(to) = self
                    .resolve(module, segs, 0)
                    .and_then(|p| self.defining_file(p))
                else {
                    continue;
                };
                if to != scope.file {
                    let file = self.files[&scope.file].path.display();
                    edges
                        .get_mut(&scope.file)
                        .unwrap()
                        .entry(to)
                        .or_default()
                        .push(format!("{file}:{line} {shown}"));
                }
            }
        }
        edges
    }
}

/// The lines of `text` outside its `#[cfg(test)]` items, wherever they sit.
pub fn code_lines(text: &str) -> usize {
    let lines = text.lines().count();
    let test = scan(&tokenize(text), &Vec::new()).test_lines;
    lines - test.iter().filter(|&&l| l <= lines).count()
}
