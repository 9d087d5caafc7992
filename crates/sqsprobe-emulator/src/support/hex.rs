//! Lower-case hex of the fixed-size values the emulator writes on every message: a 16-byte MD5
//! digest (32 digits) and a UUID (36 characters, hyphenated), into arrays on the stack.
//!
//! Why not the `hex` and `uuid` crates' own writers: `hex::encode` collects `char`s into a
//! `String` (on every send) and `encode_to_slice` and uuid's hyphenated writer take a nibble
//! at a time (ten of each per receive of ten); a table of the 256 byte pairs writes a byte's
//! two digits at once (docs/performance.md). Both crates stay the oracles of the tests below.

/// The two lower-case hex digits of every byte value, in byte order.
const PAIRS: [[u8; 2]; 256] = digit_pairs(b"0123456789abcdef");

/// Every pair of digits of `alphabet` (of 2^k digits, with `N` = 2^2k), by the value the
/// pair writes, most significant digit first: the table the writers of hex and of receipt
/// handles (`model/receipt.rs`) write two digits a lookup with.
pub(crate) const fn digit_pairs<const N: usize>(alphabet: &[u8]) -> [[u8; 2]; N] {
    let base = alphabet.len();
    assert!(
        base * base == N,
        "N must be the square of the alphabet's size"
    );
    let mut table = [[0u8; 2]; N];
    let mut v = 0;
    while v < N {
        table[v] = [alphabet[v / base], alphabet[v % base]];
        v += 1;
    }
    table
}

/// `bytes` as 32 lower-case hex digits.
pub(crate) fn digest(bytes: &[u8; 16]) -> [u8; 32] {
    let mut out = [0u8; 32];
    for (pair, &b) in out.chunks_exact_mut(2).zip(bytes) {
        pair.copy_from_slice(&PAIRS[usize::from(b)]);
    }
    out
}

/// `digest` as a `String` (the form a `Value` answer holds).
pub(crate) fn digest_string(bytes: &[u8; 16]) -> String {
    text(&digest(bytes))
}

/// `bytes` as a hyphenated UUID, `8-4-4-4-12` lower-case hex digits.
pub(crate) fn uuid(bytes: &[u8; 16]) -> [u8; 36] {
    let mut out = [b'-'; 36];
    // Where each byte's two digits go: the groups of 4, 2, 2, 2 and 6 bytes, a hyphen between.
    const AT: [usize; 16] = [0, 2, 4, 6, 9, 11, 14, 16, 19, 21, 24, 26, 28, 30, 32, 34];
    for (&at, &b) in AT.iter().zip(bytes) {
        out[at..at + 2].copy_from_slice(&PAIRS[usize::from(b)]);
    }
    out
}

/// ASCII this module wrote, as a `String`.
pub(crate) fn text(ascii: &[u8]) -> String {
    // Hex digits and hyphens only, so the conversion cannot fail; the fallback is unreachable.
    String::from_utf8(ascii.to_vec()).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    proptest! {
        #![proptest_config(sqsprobe_testing::config(512))]

        #[test]
        fn digests_and_uuids_are_written_as_the_crates_write_them(bytes in any::<[u8; 16]>()) {
            prop_assert_eq!(digest_string(&bytes), hex::encode(bytes));
            let id = uuid::Uuid::from_bytes(bytes);
            prop_assert_eq!(text(&uuid(&bytes)), id.hyphenated().to_string());
        }
    }

    #[test]
    fn the_extremes() {
        assert_eq!(digest_string(&[0; 16]), "0".repeat(32));
        assert_eq!(digest_string(&[0xff; 16]), "f".repeat(32));
        assert_eq!(
            text(&uuid(&[0xab; 16])),
            "abababab-abab-abab-abab-abababababab"
        );
    }
}
