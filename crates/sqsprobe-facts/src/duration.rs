//! Human durations as written in suites: `1500ms`, `2s`, `5m`, `1h`, `4d`.
//!
//! A bare number is refused on purpose: `visibility_timeout: 30` reads as seconds to one person
//! and milliseconds to another, and the suites are evidence people read in design reviews.

use std::fmt;
use std::time::Duration;

/// Why a duration string was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DurationError(pub String);

impl fmt::Display for DurationError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for DurationError {}

/// Parses `<integer><unit>` where unit is one of `ms`, `s`, `m`, `h`, `d`.
pub fn parse(text: &str) -> Result<Duration, DurationError> {
    let text = text.trim();
    let split = text.find(|c: char| !c.is_ascii_digit()).ok_or_else(|| {
        DurationError(format!(
            "`{text}` has no unit; write e.g. `{text}s` or `{text}ms`"
        ))
    })?;
    let (digits, unit) = text.split_at(split);
    if digits.is_empty() {
        return Err(DurationError(format!(
            "`{text}` is not a duration; write a whole number and a unit, e.g. `1500ms`, `2s`, `5m`"
        )));
    }
    let n: u64 = digits
        .parse()
        .map_err(|_| DurationError(format!("`{digits}` is too large")))?;
    let millis_per_unit: u64 = match unit {
        "ms" => 1,
        "s" => 1_000,
        "m" => 60_000,
        "h" => 3_600_000,
        "d" => 86_400_000,
        other => {
            return Err(DurationError(format!(
                "unknown unit `{other}` in `{text}`; use ms, s, m, h or d"
            )));
        }
    };
    n.checked_mul(millis_per_unit)
        .map(Duration::from_millis)
        .ok_or_else(|| DurationError(format!("`{text}` is too large")))
}

/// Formats a duration the way suites write it, choosing the largest exact unit.
pub fn format(d: Duration) -> String {
    let ms = d.as_millis();
    for (unit, size) in [
        ("d", 86_400_000u128),
        ("h", 3_600_000),
        ("m", 60_000),
        ("s", 1_000),
    ] {
        if ms != 0 && ms.is_multiple_of(size) {
            return format!("{}{unit}", ms / size);
        }
    }
    format!("{ms}ms")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_every_unit() {
        assert_eq!(parse("1500ms").unwrap(), Duration::from_millis(1500));
        assert_eq!(parse("2s").unwrap(), Duration::from_secs(2));
        assert_eq!(parse("5m").unwrap(), Duration::from_secs(300));
        assert_eq!(parse("1h").unwrap(), Duration::from_secs(3600));
        assert_eq!(parse("4d").unwrap(), Duration::from_secs(4 * 86_400));
        assert_eq!(parse("0s").unwrap(), Duration::ZERO);
    }

    #[test]
    fn refuses_missing_or_unknown_units() {
        assert!(parse("30").unwrap_err().0.contains("no unit"));
        assert!(parse("3 weeks").unwrap_err().0.contains("unknown unit"));
        assert!(parse("ms").unwrap_err().0.contains("not a duration"));
        assert!(parse("-1s").is_err());
        assert!(
            parse("99999999999999999999s")
                .unwrap_err()
                .0
                .contains("too large")
        );
    }

    #[test]
    fn formats_with_the_largest_exact_unit() {
        assert_eq!(format(Duration::from_millis(1500)), "1500ms");
        assert_eq!(format(Duration::from_secs(120)), "2m");
        assert_eq!(format(Duration::ZERO), "0ms");
        assert_eq!(format(Duration::from_secs(86_400)), "1d");
    }
}
