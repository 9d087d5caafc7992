//! Positioned errors in suite files, rendered the way hurl renders a bad `.hurl` file.

use super::model::Pos;

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
    pub fn render(&self, source: &str) -> String {
        let line_no = self.pos.line.max(1);
        let gutter = line_no.to_string().len();
        let pad = " ".repeat(gutter);
        let text = source.lines().nth(line_no as usize - 1).unwrap_or("");
        let text = text.strip_suffix('\r').unwrap_or(text);
        // Copy tabs from the source line so the carets stay under the token.
        let indent: String = text
            .chars()
            .chain(std::iter::repeat(' '))
            .take(self.pos.col.max(1) as usize - 1)
            .map(|c| if c == '\t' { '\t' } else { ' ' })
            .collect();
        let carets = "^".repeat(self.width.max(1) as usize);
        let mut out = format!(
            "error: {msg}\n{pad}--> {path}:{line}:{col}\n{pad} |\n{line} | {text}\n{pad} | {indent}{carets} {msg}",
            msg = self.message,
            path = self.path,
            line = line_no,
            col = self.pos.col,
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

/// The candidate closest to `word`, if it is close enough to be a plausible typo.
pub(crate) fn closest<'a>(
    word: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> Option<&'a str> {
    candidates
        .into_iter()
        .map(|c| (strsim::normalized_damerau_levenshtein(word, c), c))
        .filter(|(score, _)| *score >= 0.6)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, c)| c)
}

/// "did you mean `x`?" when a candidate is close, otherwise the list of what is accepted.
pub(crate) fn suggest(word: &str, candidates: &[&str]) -> String {
    match closest(word, candidates.iter().copied()) {
        Some(c) => format!("did you mean `{c}`?"),
        None => format!("expected one of: {}", candidates.join(", ")),
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

    #[test]
    fn suggestions() {
        assert_eq!(closest("recieve", ["receive", "send"]), Some("receive"));
        assert_eq!(closest("zzz", ["receive", "send"]), None);
        assert_eq!(suggest("zzz", &["a", "b"]), "expected one of: a, b");
    }
}
