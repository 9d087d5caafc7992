//! The checks a suite file passes before it is parsed: its size and its encoding, each
//! failure a positioned [`Diagnostic`] like any other suite error.

use super::diagnostic::Diagnostic;
use super::model::Pos;
use super::source::LineIndex;

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
