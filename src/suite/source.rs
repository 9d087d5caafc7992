//! The text of a suite file: checked on the way in (size, UTF-8), and indexed once so that
//! finding a line or a column costs the same however many errors a file has.
//!
//! Lines end where YAML says they do (`\r\n`, `\r` or `\n`), so line numbers agree with
//! saphyr's markers. Columns are 1-based and count characters, as saphyr's do.

use super::diagnostic::Diagnostic;
use super::model::Pos;

/// A byte offset is remembered every this many characters, so a character index becomes a
/// byte offset by walking at most this many characters.
const CHECKPOINT: usize = 64;

/// Where every line starts, and how character indexes map to bytes.
#[derive(Debug, Clone)]
pub struct LineIndex<'s> {
    source: &'s str,
    /// Byte offset of each line's first character; `starts[0] == 0`.
    starts: Vec<usize>,
    /// Byte offset of each line's end (its line break, or the end of the text).
    ends: Vec<usize>,
    /// Character index of each line's first character.
    start_chars: Vec<usize>,
    /// How many characters each line has, without its line break.
    line_chars: Vec<usize>,
    /// `checkpoints[k]` is the byte offset of character `k * CHECKPOINT`.
    checkpoints: Vec<usize>,
}

impl<'s> LineIndex<'s> {
    /// Indexes `source` in one pass.
    pub fn new(source: &'s str) -> LineIndex<'s> {
        let mut index = LineIndex {
            source,
            starts: vec![0],
            ends: Vec::new(),
            start_chars: vec![0],
            line_chars: Vec::new(),
            checkpoints: Vec::with_capacity(source.len() / CHECKPOINT + 1),
        };
        let mut chars = source.char_indices().enumerate().peekable();
        while let Some((ci, (bi, c))) = chars.next() {
            if ci % CHECKPOINT == 0 {
                index.checkpoints.push(bi);
            }
            let next_line = match c {
                '\n' => Some((bi + 1, ci + 1)),
                '\r' if chars.peek().is_some_and(|(_, (_, n))| *n == '\n') => {
                    let (ci2, _) = chars.next().expect("peeked");
                    if ci2 % CHECKPOINT == 0 {
                        index.checkpoints.push(bi + 1);
                    }
                    Some((bi + 2, ci + 2))
                }
                '\r' => Some((bi + 1, ci + 1)),
                _ => None,
            };
            if let Some((byte, char_index)) = next_line {
                index.ends.push(bi);
                index
                    .line_chars
                    .push(ci - index.start_chars.last().expect("one per line"));
                index.starts.push(byte);
                index.start_chars.push(char_index);
            }
        }
        index.ends.push(source.len());
        let total = source.chars().count();
        index
            .line_chars
            .push(total - index.start_chars.last().expect("one per line"));
        index
    }

    /// The indexed text.
    pub fn source(&self) -> &'s str {
        self.source
    }

    /// How many lines the text has (a final line break starts an empty last line).
    pub fn line_count(&self) -> usize {
        self.starts.len()
    }

    /// The text of 1-based line `line`, without its line break; `None` past the end.
    pub fn line(&self, line: u32) -> Option<&'s str> {
        let i = (line as usize).checked_sub(1)?;
        Some(&self.source[*self.starts.get(i)?..self.ends[i]])
    }

    /// How many characters 1-based line `line` has (0 past the end).
    pub fn line_len(&self, line: u32) -> usize {
        (line as usize)
            .checked_sub(1)
            .and_then(|i| self.line_chars.get(i))
            .copied()
            .unwrap_or(0)
    }

    /// `pos` moved inside the text: a line past the last is the end of the last line, a
    /// column past the end of its line is just after its last character. (saphyr puts an
    /// error at the end of the input on the line after it when the file has no final break.)
    pub fn clamp(&self, pos: Pos) -> Pos {
        let last = self.line_count() as u32;
        if pos.line > last {
            return Pos {
                line: last,
                col: self.line_len(last) as u32 + 1,
            };
        }
        let line = pos.line.max(1);
        Pos {
            line,
            col: pos.col.clamp(1, self.line_len(line) as u32 + 1),
        }
    }

    /// The byte offset of character index `char_index` (the end of the text past it).
    pub fn byte_of_char(&self, char_index: usize) -> usize {
        let Some(&from) = self.checkpoints.get(char_index / CHECKPOINT) else {
            return self.source.len();
        };
        let skip = char_index % CHECKPOINT;
        self.source[from..]
            .char_indices()
            .nth(skip)
            .map_or(self.source.len(), |(b, _)| from + b)
    }

    /// The byte offset of `pos` (clamped to the end of its line), or `None` past the last line.
    pub fn byte_of(&self, pos: Pos) -> Option<usize> {
        let i = (pos.line as usize).checked_sub(1)?;
        let start_char = *self.start_chars.get(i)?;
        let byte = self.byte_of_char(start_char + (pos.col.max(1) as usize - 1));
        Some(byte.clamp(self.starts[i], self.ends[i]))
    }

    /// The 1-based position of byte offset `byte` (which need not be a character boundary:
    /// the column counts the characters that start before it).
    pub fn pos_of_byte(&self, byte: usize) -> Pos {
        let line = self.starts.partition_point(|&s| s <= byte).max(1);
        let start = self.starts[line - 1];
        let end = byte.min(self.source.len());
        let col = (start..end)
            .filter(|&b| self.source.is_char_boundary(b))
            .count();
        Pos {
            line: line as u32,
            col: col as u32 + 1,
        }
    }
}

/// The text of a file's `bytes`: an error with the byte offset (and line:column) of the
/// first byte that is not UTF-8.
pub fn utf8_text<'b>(path: &str, bytes: &'b [u8]) -> Result<&'b str, Diagnostic> {
    match std::str::from_utf8(bytes) {
        Ok(text) => Ok(text),
        Err(e) => {
            let at = e.valid_up_to();
            // Everything before the bad byte is valid, so it can be indexed.
            let valid = std::str::from_utf8(&bytes[..at]).unwrap_or_default();
            let pos = LineIndex::new(valid).pos_of_byte(at);
            let bad: Vec<String> = bytes[at..]
                .iter()
                .take(e.error_len().unwrap_or(bytes.len() - at).min(4))
                .map(|b| format!("{b:#04x}"))
                .collect();
            Err(Diagnostic::new(
                path,
                pos,
                1,
                format!(
                    "the file is not UTF-8: invalid {} {} at byte offset {at}",
                    if bad.len() == 1 { "byte" } else { "bytes" },
                    bad.join(" ")
                ),
            )
            .with_hint("suite files are UTF-8 text; re-save the file as UTF-8"))
        }
    }
}

/// The error for a file over [`Limits::max_suite_bytes`](super::Limits): `size` is its length
/// in bytes, as far as it is known.
pub fn too_large(path: &str, size: u64, limit: u64) -> Diagnostic {
    Diagnostic::new(
        path,
        Pos { line: 1, col: 1 },
        1,
        format!(
            "the file is {} ({size} bytes), over the limit of {} for a suite file",
            format_bytes(size),
            format_bytes(limit)
        ),
    )
    .with_hint("a suite is a few hundred lines; split a generated suite into several files")
}

/// `4 MiB`, `512 KiB`, `1.5 MiB`, `900 bytes`.
fn format_bytes(n: u64) -> String {
    const KIB: u64 = 1024;
    const MIB: u64 = 1024 * 1024;
    if n >= MIB {
        let tenths = (n * 10 + MIB / 2) / MIB;
        if tenths.is_multiple_of(10) {
            format!("{} MiB", tenths / 10)
        } else {
            format!("{}.{} MiB", tenths / 10, tenths % 10)
        }
    } else if n >= KIB {
        format!("{} KiB", (n + KIB / 2) / KIB)
    } else {
        format!("{n} bytes")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_end_at_every_yaml_line_break() {
        let ix = LineIndex::new("a\nbb\r\nc\rd");
        assert_eq!(ix.line_count(), 4);
        let lines: Vec<&str> = (1..=4).map(|n| ix.line(n).unwrap()).collect();
        assert_eq!(lines, ["a", "bb", "c", "d"]);
        assert_eq!(ix.line(5), None);
        assert_eq!(ix.line(0), None);
        assert_eq!(LineIndex::new("a\n").line(2), Some(""));
        assert_eq!(
            (1..=5).map(|n| ix.line_len(n)).collect::<Vec<_>>(),
            [1, 2, 1, 1, 0]
        );
    }

    #[test]
    fn positions_are_clamped_into_the_text() {
        let ix = LineIndex::new("%aA");
        assert_eq!(ix.clamp(Pos { line: 2, col: 1 }), Pos { line: 1, col: 4 });
        assert_eq!(ix.clamp(Pos { line: 1, col: 9 }), Pos { line: 1, col: 4 });
        assert_eq!(ix.clamp(Pos { line: 0, col: 0 }), Pos { line: 1, col: 1 });
        let ix = LineIndex::new("a\n");
        assert_eq!(ix.clamp(Pos { line: 2, col: 1 }), Pos { line: 2, col: 1 });
    }

    #[test]
    fn characters_map_to_bytes_past_checkpoints() {
        let text = "é".repeat(200) + "\nxé";
        let ix = LineIndex::new(&text);
        for ci in [0, 1, 63, 64, 65, 130, 199] {
            assert_eq!(ix.byte_of_char(ci), ci * 2, "char {ci}");
        }
        assert_eq!(ix.byte_of(Pos { line: 2, col: 2 }), Some(402));
        // Clamped to the end of its line, and none past the last line.
        assert_eq!(ix.byte_of(Pos { line: 2, col: 99 }), Some(text.len()));
        assert_eq!(ix.byte_of(Pos { line: 3, col: 1 }), None);
        assert_eq!(ix.pos_of_byte(402), Pos { line: 2, col: 2 });
        assert_eq!(ix.pos_of_byte(0), Pos { line: 1, col: 1 });
    }

    #[test]
    fn non_utf8_is_positioned_at_its_byte() {
        let bytes = b"cases:\n  - id: \xffx\n";
        let d = utf8_text("x.yaml", bytes).unwrap_err();
        assert_eq!(
            d.one_line(),
            "x.yaml:2:9: the file is not UTF-8: invalid byte 0xff at byte offset 15 (suite files are UTF-8 text; re-save the file as UTF-8)"
        );
        assert_eq!(utf8_text("x.yaml", b"a: 1\n"), Ok("a: 1\n"));
    }

    #[test]
    fn oversize_files_say_both_sizes() {
        assert_eq!(
            too_large("x.yaml", 5 * 1024 * 1024 + 1, 4 * 1024 * 1024).message,
            "the file is 5 MiB (5242881 bytes), over the limit of 4 MiB for a suite file"
        );
        assert_eq!(format_bytes(1536 * 1024), "1.5 MiB");
        assert_eq!(format_bytes(2048), "2 KiB");
        assert_eq!(format_bytes(12), "12 bytes");
    }
}
