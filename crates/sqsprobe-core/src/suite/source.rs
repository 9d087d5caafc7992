//! The text of a suite file, indexed once so that finding a line or a column costs the same
//! however many errors a file has.
//!
//! Lines end where YAML says they do (`\r\n`, `\r` or `\n`), so line numbers agree with
//! saphyr's markers. Columns are 1-based and count characters, as saphyr's do. [`Pos`] and
//! [`Spanned`], a place in such a text and a value written there, live here too.

/// A 1-based line and column in a suite file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default, Hash)]
pub struct Pos {
    pub line: u32,
    pub col: u32,
}

/// A value and where it was written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Spanned<T> {
    pub value: T,
    pub pos: Pos,
}

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
}
