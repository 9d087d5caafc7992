//! The values a `Number` message attribute may hold, as the SQS developer guide documents them
//! (sqs-message-metadata, "Message attribute data types"): "A number can have up to 38 digits
//! of precision, and it can be between 10^-128 and 10^+126. Leading and trailing zeroes are
//! trimmed." The API reference's `MessageAttributeValue` adds that a Number is sent as its
//! `StringValue`.
//!
//! So a value is a decimal numeral: an optional sign, digits with at most one point (at least
//! one digit), and an optional exponent (`e` or `E`, an optional sign, digits). Nothing else:
//! no spaces around it, no `NaN` or `Infinity`, no hexadecimal. Its significant digits (the
//! digits without leading and trailing zeroes) number at most 38, and its magnitude is 0 or
//! lies between 10^-128 and 10^+126, both included. Whether AWS accepts an exponent is not
//! documented; it is accepted here (`docs/aws-facts.md`, S13).

/// Why a string is not a valid Number.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum NumberFault {
    /// Not a decimal numeral at all.
    NotANumber,
    /// More than 38 significant digits.
    TooPrecise,
    /// A magnitude outside 10^-128 ..= 10^+126.
    OutOfRange,
}

/// Most significant digits of a Number.
const MAX_DIGITS: usize = 38;
/// Exponents beyond this cannot bring a numeral of at most `MAX_DIGITS` digits into range, so
/// larger ones are clamped to it while parsing (an exponent of a million digits costs nothing).
const EXPONENT_CLAMP: i64 = 1_000_000_000;

/// Checks `value` as a Number message attribute.
pub(crate) fn check(value: &str) -> Result<(), NumberFault> {
    let unsigned = value.strip_prefix(['+', '-']).unwrap_or(value).as_bytes();
    let (mantissa, exponent) = match unsigned.iter().position(|&b| b == b'e' || b == b'E') {
        Some(at) => (&unsigned[..at], Some(&unsigned[at + 1..])),
        None => (unsigned, None),
    };
    let (whole, fraction) = match mantissa.iter().position(|&b| b == b'.') {
        Some(at) => (&mantissa[..at], &mantissa[at + 1..]),
        None => (mantissa, &[][..]),
    };
    let digits = |s: &[u8]| s.iter().all(u8::is_ascii_digit);
    if !digits(whole) || !digits(fraction) || whole.len() + fraction.len() == 0 {
        return Err(NumberFault::NotANumber);
    }
    let exponent = match exponent {
        None => 0,
        Some(e) => {
            let (negative, e) = match e.split_first() {
                Some((b'-', rest)) => (true, rest),
                Some((b'+', rest)) => (false, rest),
                _ => (false, e),
            };
            if e.is_empty() || !digits(e) {
                return Err(NumberFault::NotANumber);
            }
            let magnitude = e.iter().fold(0i64, |n, &d| {
                (n * 10 + i64::from(d - b'0')).min(EXPONENT_CLAMP)
            });
            if negative { -magnitude } else { magnitude }
        }
    };
    let all = || whole.iter().chain(fraction);
    let leading = all().take_while(|&&d| d == b'0').count();
    let total = whole.len() + fraction.len();
    if leading == total {
        // Zero, however it is written.
        return Ok(());
    }
    let trailing = all().rev().take_while(|&&d| d == b'0').count();
    let significant = total - leading - trailing;
    if significant > MAX_DIGITS {
        return Err(NumberFault::TooPrecise);
    }
    // The value is 0.d₁d₂…dₙ × 10^scale with d₁ ≠ 0, so 10^(scale-1) <= |value| < 10^scale.
    let scale = whole.len() as i64 - leading as i64 + exponent;
    let in_range = match scale {
        ..=-128 => false,
        -127..=126 => true,
        // 10^+126 itself (0.1 × 10^127) is the largest value.
        127 => significant == 1 && all().nth(leading) == Some(&b'1'),
        _ => false,
    };
    if in_range {
        Ok(())
    } else {
        Err(NumberFault::OutOfRange)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn numerals_within_the_documented_bounds_are_accepted() {
        for ok in [
            "0",
            "-0",
            "0.000",
            "00012",
            "+7",
            "-3.25",
            ".5",
            "5.",
            "1e5",
            "1E+5",
            "2.5e-3",
            "1e-128",
            "0.0001e-124",
            "1e126",
            "1000000000000000000000000000000000000000000000000000000000000",
            "12345678901234567890123456789012345678",
            "1234567890123456789012345678901234567.8",
            "0.00012345678901234567890123456789012345678",
            "-99999999999999999999999999999999999999e88",
        ] {
            assert_eq!(check(ok), Ok(()), "{ok}");
        }
    }

    #[test]
    fn what_aws_documents_as_invalid_is_refused() {
        use NumberFault::*;
        for (bad, fault) in [
            ("", NotANumber),
            ("NaN", NotANumber),
            ("Infinity", NotANumber),
            ("-Infinity", NotANumber),
            (" 1", NotANumber),
            ("1 ", NotANumber),
            ("0x10", NotANumber),
            ("1_000", NotANumber),
            ("1e", NotANumber),
            ("e5", NotANumber),
            (".", NotANumber),
            ("+-1", NotANumber),
            ("1.2.3", NotANumber),
            ("1e5.5", NotANumber),
            ("١", NotANumber),
            ("123456789012345678901234567890123456789", TooPrecise),
            ("1.23456789012345678901234567890123456789", TooPrecise),
            ("1e999", OutOfRange),
            ("1e-129", OutOfRange),
            ("0.9e-128", OutOfRange),
            ("1.1e126", OutOfRange),
            ("2e126", OutOfRange),
            ("-1e127", OutOfRange),
            ("1e99999999999999999999999999", OutOfRange),
            ("1e-99999999999999999999999999", OutOfRange),
        ] {
            assert_eq!(check(bad), Err(fault), "{bad:?}");
        }
    }

    proptest! {
        #![proptest_config(sqsprobe_testing::config(512))]

        /// Against f64 where f64 is exact enough to decide: every numeral f64 reads as a finite
        /// value well inside the range, with few digits, is accepted; and `check` never panics.
        #[test]
        fn agrees_with_f64_well_inside_the_range(
            mantissa in -1_000_000_000i64..1_000_000_000,
            point in 0u32..9,
            exponent in -100i32..100,
        ) {
            let text = format!("{}e{exponent}", mantissa as f64 / 10f64.powi(point as i32));
            prop_assert_eq!(check(&text), Ok(()), "{}", text);
        }

        #[test]
        fn arbitrary_text_never_panics(text in "\\PC{0,64}") {
            let _ = check(&text);
        }
    }
}
