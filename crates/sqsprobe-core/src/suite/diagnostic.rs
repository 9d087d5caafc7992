//! Positioned errors in suite files, rendered the way hurl renders a bad `.hurl` file.

use super::model::Pos;
use super::source::LineIndex;

/// The most characters of a source line a rendered diagnostic shows; a longer line is
/// clipped around the column.
pub const SNIPPET_CHARS: usize = 100;
/// How many characters before the column a clipped snippet keeps.
const CONTEXT_BEFORE: usize = 40;

/// Every diagnostic of one file, rendered and separated by blank lines. The file is indexed
/// once, so the cost grows with the number of diagnostics, not with its square.
pub fn render_all(diags: &[Diagnostic], source: &str) -> String {
    let index = LineIndex::new(source);
    let mut out = String::new();
    for d in diags {
        out.push_str(&d.render_in(&index));
        out.push_str("\n\n");
    }
    out
}

/// The part of a source line a diagnostic shows, and what goes under it.
struct Snippet {
    text: String,
    /// Whitespace up to the column, with the line's tabs kept so carets line up.
    indent: String,
    /// How many carets (at least 1, never past a clipped end).
    width: usize,
}

impl Snippet {
    fn new(index: &LineIndex, pos: Pos, width: u32) -> Snippet {
        let width = width.max(1) as usize;
        let col0 = pos.col.max(1) as usize - 1;
        let Some(line) = index.line(pos.line.max(1)) else {
            return Snippet {
                text: String::new(),
                indent: " ".repeat(col0),
                width,
            };
        };
        let line_start = index
            .byte_of(Pos {
                line: pos.line.max(1),
                col: 1,
            })
            .unwrap_or(0);
        let at = index.byte_of(pos).unwrap_or(line_start) - line_start;
        // Columns past the end of the line (an error after its last character).
        let beyond = col0.saturating_sub(index.line_len(pos.line.max(1)));
        // Walk back at most CONTEXT_BEFORE characters, forward at most the rest.
        let mut start = at;
        for (n, (b, _)) in line[..at].char_indices().rev().enumerate() {
            if n == CONTEXT_BEFORE {
                break;
            }
            start = b;
        }
        let before = line[start..at].chars().count();
        let room = SNIPPET_CHARS.saturating_sub(before);
        let end = line[at..]
            .char_indices()
            .nth(room)
            .map_or(line.len(), |(b, _)| at + b);
        let (head, tail) = (start > 0, end < line.len());
        let mut text = String::new();
        let mut indent = String::new();
        if head {
            text.push('…');
            indent.push(' ');
        }
        text.push_str(&line[start..end]);
        if tail {
            text.push('…');
        }
        indent.extend(
            line[start..at]
                .chars()
                .map(|c| if c == '\t' { '\t' } else { ' ' }),
        );
        indent.extend(std::iter::repeat_n(' ', beyond));
        let shown_after = if tail {
            line[at..end].chars().count()
        } else {
            usize::MAX
        };
        Snippet {
            text,
            indent,
            width: width.min(shown_after).max(1),
        }
    }
}

/// One problem in a suite file: where it is, what is wrong, and how to fix it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    /// The suite path as given (the same string the user typed).
    pub path: String,
    /// 1-based line and column of the offending key or value.
    pub pos: Pos,
    /// How many characters to underline from `pos` (at least 1).
    pub width: u32,
    /// What is wrong, in a few words.
    pub message: String,
    /// How to fix it, e.g. "did you mean `visibility_timeout`?".
    pub hint: Option<String>,
}

impl Diagnostic {
    /// A diagnostic underlining `width` characters at `pos`.
    pub fn new(path: &str, pos: Pos, width: u32, message: impl Into<String>) -> Diagnostic {
        Diagnostic {
            path: path.to_string(),
            pos,
            width: width.max(1),
            message: message.into(),
            hint: None,
        }
    }

    /// The same diagnostic with a hint.
    pub fn with_hint(mut self, hint: impl Into<String>) -> Diagnostic {
        self.hint = Some(hint.into());
        self
    }

    /// The hurl-style form, for terminals:
    ///
    /// ```text
    /// error: unknown key `visiblity_timeout` in a queue definition
    ///   --> suites/x.yaml:12:7
    ///    |
    /// 12 |       visiblity_timeout: 1s
    ///    |       ^^^^^^^^^^^^^^^^^ unknown key `visiblity_timeout` in a queue definition
    ///    = help: did you mean `visibility_timeout`?
    /// ```
    ///
    /// `source` is the text of the file at `path`; a position past its end shows an empty line.
    /// It indexes the whole text: to render many diagnostics of one file, use [`render_all`].
    pub fn render(&self, source: &str) -> String {
        self.render_in(&LineIndex::new(source))
    }

    /// [`Diagnostic::render`] against an index of the file, in time proportional to the
    /// snippet shown rather than to the file. A line longer than [`SNIPPET_CHARS`] is clipped
    /// around the column, with `…` where text was cut.
    pub fn render_in(&self, index: &LineIndex) -> String {
        let line_no = self.pos.line.max(1);
        let gutter = line_no.to_string().len();
        let pad = " ".repeat(gutter);
        let snippet = Snippet::new(index, self.pos, self.width);
        let carets = "^".repeat(snippet.width);
        let mut out = format!(
            "error: {msg}\n{pad}--> {path}:{line}:{col}\n{pad} |\n{line} | {text}\n{pad} | {indent}{carets} {msg}",
            msg = self.message,
            path = self.path,
            line = line_no,
            col = self.pos.col,
            text = snippet.text,
            indent = snippet.indent,
        );
        if let Some(hint) = &self.hint {
            out.push_str(&format!("\n{pad} = help: {hint}"));
        }
        out
    }

    /// The one-line form, for logs and editors: `suites/x.yaml:12:7: message (hint)`.
    pub fn one_line(&self) -> String {
        let mut out = format!(
            "{}:{}:{}: {}",
            self.path, self.pos.line, self.pos.col, self.message
        );
        if let Some(hint) = &self.hint {
            out.push_str(&format!(" ({hint})"));
        }
        out
    }
}

impl std::fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.one_line())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn diag(line: u32, col: u32, width: u32) -> Diagnostic {
        Diagnostic::new(
            "suites/x.yaml",
            Pos { line, col },
            width,
            "unknown key `visiblity_timeout` in a queue definition",
        )
        .with_hint("did you mean `visibility_timeout`?")
    }

    #[test]
    fn renders_like_hurl() {
        let mut source = String::new();
        for _ in 0..11 {
            source.push_str("#\n");
        }
        source.push_str("      visiblity_timeout: 1s\n");
        let expected = "\
error: unknown key `visiblity_timeout` in a queue definition
  --> suites/x.yaml:12:7
   |
12 |       visiblity_timeout: 1s
   |       ^^^^^^^^^^^^^^^^^ unknown key `visiblity_timeout` in a queue definition
   = help: did you mean `visibility_timeout`?";
        assert_eq!(diag(12, 7, 17).render(&source), expected);
    }

    #[test]
    fn renders_single_digit_lines_tabs_and_positions_past_the_end() {
        let d = Diagnostic::new("a.yaml", Pos { line: 1, col: 4 }, 1, "bad");
        assert_eq!(
            d.render("a:\t[x\n"),
            "error: bad\n --> a.yaml:1:4\n  |\n1 | a:\t[x\n  |   \t^ bad"
        );
        let d = Diagnostic::new("a.yaml", Pos { line: 3, col: 1 }, 1, "end");
        assert_eq!(
            d.render("a: 1\n"),
            "error: end\n --> a.yaml:3:1\n  |\n3 | \n  | ^ end"
        );
    }

    #[test]
    fn one_line_form() {
        assert_eq!(
            diag(12, 7, 17).one_line(),
            "suites/x.yaml:12:7: unknown key `visiblity_timeout` in a queue definition (did you mean `visibility_timeout`?)"
        );
    }

    /// The column of the first caret in a rendered diagnostic, counted in characters after
    /// the gutter, and the snippet line above it.
    fn caret_under(rendered: &str) -> (String, usize, usize) {
        let lines: Vec<&str> = rendered.lines().collect();
        let snippet = lines[3].split_once(" | ").unwrap().1.to_string();
        let marks = lines[4].split_once(" | ").unwrap().1;
        let at = marks.chars().position(|c| c == '^').unwrap();
        let n = marks.chars().skip(at).take_while(|&c| c == '^').count();
        (snippet, at, n)
    }

    #[test]
    fn long_lines_are_clipped_around_the_column_with_carets_on_the_token() {
        let line = format!("{}bad_key: 1{}", "a".repeat(500), "z".repeat(500));
        let d = Diagnostic::new("x.yaml", Pos { line: 1, col: 501 }, 7, "unknown key");
        let (snippet, at, n) = caret_under(&d.render(&line));
        assert!(
            snippet.starts_with('…') && snippet.ends_with('…'),
            "{snippet}"
        );
        assert!(snippet.chars().count() <= SNIPPET_CHARS + 2);
        let under: String = snippet.chars().skip(at).take(n).collect();
        assert_eq!(under, "bad_key");
        // Near the start nothing is cut before; the carets are where they always were.
        let d = Diagnostic::new("x.yaml", Pos { line: 1, col: 3 }, 2, "x");
        let (snippet, at, n) = caret_under(&d.render(&line));
        assert!(!snippet.starts_with('…') && snippet.ends_with('…'));
        assert_eq!((at, n), (2, 2));
        // Near the end nothing is cut after, and carets never run past the shown text.
        let d = Diagnostic::new("x.yaml", Pos { line: 1, col: 1008 }, 50, "x");
        let (snippet, at, n) = caret_under(&d.render(&line));
        assert!(snippet.starts_with('…') && !snippet.ends_with('…'));
        assert_eq!(snippet.chars().skip(at).collect::<String>(), "zzz");
        assert_eq!(n, 50, "an unclipped end keeps the width");
    }

    #[test]
    fn clipped_lines_keep_tabs_and_multibyte_characters_aligned() {
        let line = format!(
            "{}\t\té{}X{}",
            "é".repeat(300),
            "ü".repeat(10),
            "ö".repeat(300)
        );
        let col = 300 + 2 + 1 + 10 + 1;
        let d = Diagnostic::new("x.yaml", Pos { line: 1, col }, 1, "here");
        let rendered = d.render(&line);
        let (snippet, at, _) = caret_under(&rendered);
        assert_eq!(snippet.chars().nth(at), Some('X'), "{rendered}");
        let marks = rendered.lines().nth(4).unwrap();
        assert_eq!(marks.matches('\t').count(), 2, "{marks}");
    }

    #[test]
    fn render_all_renders_every_diagnostic_of_a_large_file_at_its_own_line() {
        let n = 20_000;
        let source: String = (1..=n).map(|i| format!("key{i}: {i}\n")).collect();
        let diags: Vec<Diagnostic> = (1..=n)
            .map(|i| Diagnostic::new("big.yaml", Pos { line: i, col: 1 }, 3, format!("bad {i}")))
            .collect();
        let out = render_all(&diags, &source);
        let blocks: Vec<&str> = out.split("\n\n").filter(|b| !b.is_empty()).collect();
        assert_eq!(blocks.len(), n as usize);
        for (i, block) in blocks.iter().enumerate() {
            let line = i + 1;
            assert!(
                block.starts_with(&format!("error: bad {line}\n")),
                "{block}"
            );
            assert!(
                block.contains(&format!("\n{line} | key{line}: {line}\n")),
                "{block}"
            );
        }
        // The same text as rendering each on its own.
        assert_eq!(blocks[9_999], diags[9_999].render(&source));
    }
}
