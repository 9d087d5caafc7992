//! Escaping text for where it is shown: one function per output context.
//!
//! Everything a report shows that came from a suite (ids, titles, behaviour, sources) or from
//! a server (error codes and messages, request ids) is untrusted: it must not become markup,
//! break a table, or reach a terminal as an escape sequence. Each function here makes text
//! inert in one context, and only that one; pick the function for the context, never reuse
//! one context's escaping in another.
//!
//! | context | function |
//! |---|---|
//! | HTML element content | [`html_text`] |
//! | HTML quoted attribute value | [`html_attr`] |
//! | XML element content or attribute value | [`xml_text`] |
//! | Markdown prose | [`markdown_text`] |
//! | Markdown identifier (code span) | [`markdown_code`] |
//! | Markdown table cell that may keep inline Markdown | [`markdown_cell`] |
//! | terminal | [`terminal`] |

/// Escapes text for HTML element content: `&`, `<` and `>` become entities, so no tag or
/// entity can start inside it.
pub fn html_text(raw: &str) -> String {
    replace_chars(raw, html_text_entity)
}

/// Escapes text for an HTML attribute value in double or single quotes: [`html_text`] plus
/// `"` and `'`, so the value cannot close its quotes and add attributes.
///
/// It does not make a URL safe: a `javascript:` URL stays one. Callers building `href`s
/// decide which schemes to link.
pub fn html_attr(raw: &str) -> String {
    replace_chars(raw, |c| match c {
        '"' => Some("&quot;"),
        '\'' => Some("&#39;"),
        c => html_text_entity(c),
    })
}

fn html_text_entity(c: char) -> Option<&'static str> {
    match c {
        '&' => Some("&amp;"),
        '<' => Some("&lt;"),
        '>' => Some("&gt;"),
        _ => None,
    }
}

/// `raw` with each character `entity` names replaced by what it returns.
fn replace_chars(raw: &str, entity: impl Fn(char) -> Option<&'static str>) -> String {
    let mut out = String::with_capacity(raw.len());
    for c in raw.chars() {
        match entity(c) {
            Some(e) => out.push_str(e),
            None => out.push(c),
        }
    }
    out
}

/// Escapes text for XML content or a quoted attribute value, dropping characters XML 1.0
/// cannot carry at all (C0 controls other than tab and line breaks, U+FFFE and U+FFFF);
/// `\r` is written as a character reference so parsers do not normalise it away.
pub fn xml_text(raw: &str) -> String {
    let mut out = String::with_capacity(raw.len());
    push_xml_text(&mut out, raw);
    out
}

/// Appends `raw` to `out` escaped as [`xml_text`] escapes it, for writers that build a whole
/// document in one buffer.
pub fn push_xml_text(out: &mut String, raw: &str) {
    // Most text (ids, digests, handles, plain bodies) has nothing to escape: copied whole.
    if !raw
        .bytes()
        .any(|b| matches!(b, b'&' | b'<' | b'>' | b'"' | b'\'' | 0..0x20 | 0xEF))
    {
        out.push_str(raw);
        return;
    }
    for c in raw.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\r' => out.push_str("&#xD;"),
            c if xml_char(c) => out.push(c),
            _ => {}
        }
    }
}

/// Whether XML 1.0 can carry `c` (its `Char` production).
fn xml_char(c: char) -> bool {
    matches!(
        c,
        '\u{9}' | '\u{A}' | '\u{D}' | '\u{20}'..='\u{D7FF}' | '\u{E000}'..='\u{FFFD}' | '\u{10000}'..='\u{10FFFF}'
    )
}

/// Escapes prose for Markdown: Markdown punctuation is backslash-escaped, `<` `>` `&` become
/// entities (no HTML, no autolinks), and control characters (line breaks included) become
/// spaces, so the text stays on its line, in its table cell, and means nothing but itself.
pub fn markdown_text(raw: &str) -> String {
    let mut out = String::with_capacity(raw.len());
    for c in raw.chars() {
        match c {
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            '\\' | '`' | '*' | '_' | '[' | ']' | '|' | '#' | '!' | '~' => {
                out.push('\\');
                out.push(c);
            }
            c if c.is_control() => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

/// Wraps an identifier in a Markdown code span that survives any content: fenced with more
/// backticks than its longest run of them, padded when it starts or ends with one, `|`
/// escaped (GitHub tables split on it even inside code) and control characters as spaces.
pub fn markdown_code(raw: &str) -> String {
    let flat = terminal(raw).replace('|', "\\|");
    let longest = flat.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest + 1);
    let pad = if flat.starts_with('`') || flat.ends_with('`') {
        " "
    } else {
        ""
    };
    format!("{fence}{pad}{flat}{pad}{fence}")
}

/// Escapes text for a Markdown table cell while keeping its inline Markdown (profile notes
/// write code in backticks): `|` is escaped, line breaks become spaces, and `<` `>` `&`
/// become entities so no HTML gets through.
///
/// For text nobody in the project wrote (server messages), use [`markdown_text`].
pub fn markdown_cell(raw: &str) -> String {
    raw.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('|', "\\|")
        .replace(['\n', '\r'], " ")
}

/// Makes text safe to print on a terminal: every control character (escape sequences, line
/// breaks, tabs) becomes a space, so a server cannot move the cursor, recolour or clear the
/// user's screen, or forge extra output lines.
pub fn terminal(raw: &str) -> String {
    raw.chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const HOSTILE: &str = "<script>alert('x')</script>\"><img src=x onerror=alert(1)>&amp;";

    #[test]
    fn html_text_leaves_no_tag_or_entity() {
        let out = html_text(HOSTILE);
        assert!(!out.contains('<') && !out.contains('>'), "{out}");
        assert_eq!(
            html_text("a & b < c > d \"e\" 'f'"),
            "a &amp; b &lt; c &gt; d \"e\" 'f'"
        );
    }

    #[test]
    fn html_attr_cannot_close_its_quotes() {
        let out = html_attr(HOSTILE);
        assert!(!out.contains(['<', '>', '"', '\'']), "{out}");
        assert_eq!(html_attr("\"x' &"), "&quot;x&#39; &amp;");
    }

    #[test]
    fn xml_text_escapes_markup_and_drops_what_xml_cannot_carry() {
        assert_eq!(
            xml_text("<a b=\"c\">'&'</a>"),
            "&lt;a b=&quot;c&quot;&gt;&apos;&amp;&apos;&lt;/a&gt;"
        );
        assert_eq!(xml_text("a\u{1b}[2J\u{0}b\u{FFFE}"), "a[2Jb");
        assert_eq!(xml_text("tab\tline\ncr\r"), "tab\tline\ncr&#xD;");
    }

    #[test]
    fn markdown_text_escapes_links_images_html_and_line_breaks() {
        assert_eq!(
            markdown_text("<img src=x onerror=alert(1)> [a](javascript:x) *b*"),
            "&lt;img src=x onerror=alert(1)&gt; \\[a\\](javascript:x) \\*b\\*"
        );
        assert_eq!(markdown_text("line\nbreak | cell"), "line break \\| cell");
        assert_eq!(
            markdown_text("![i](u) `c` #h ~s~ _e_ \\"),
            "\\!\\[i\\](u) \\`c\\` \\#h \\~s\\~ \\_e\\_ \\\\"
        );
    }

    #[test]
    fn markdown_code_survives_backticks_pipes_and_newlines() {
        assert_eq!(markdown_code("a|b"), "`a\\|b`");
        assert_eq!(markdown_code("x `y` z"), "``x `y` z``");
        assert_eq!(markdown_code("`"), "`` ` ``");
        assert_eq!(markdown_code("a\nb"), "`a b`");
    }

    #[test]
    fn markdown_cell_keeps_code_but_not_html_or_cell_breaks() {
        assert_eq!(
            markdown_cell("`x` <b>|</b>\nnext & more"),
            "`x` &lt;b&gt;\\|&lt;/b&gt; next &amp; more"
        );
    }

    #[test]
    fn terminal_text_has_no_control_characters() {
        assert_eq!(terminal("\u{1b}[2Jwiped\r\nnext\u{7}"), " [2Jwiped  next ");
        assert_eq!(terminal("plain – ünïcode"), "plain – ünïcode");
    }
}
