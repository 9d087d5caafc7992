//! The value parsers of the flags (run ids, URLs, partitions, durations, sizes, budgets):
//! each turns one flag's text into its value or says what is wrong with it. Named by the
//! `value_parser =` of the flags in `args.rs` and `args/bench.rs`, below both.

/// A run id: 1 to 24 letters, digits or `-`, since it goes into queue names.
pub(super) fn parse_run_id(s: &str) -> Result<String, String> {
    if !s.is_empty() && s.len() <= 24 && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '-') {
        Ok(s.to_string())
    } else {
        Err("a run id is 1 to 24 letters, digits or `-` (it goes into queue names)".to_string())
    }
}

/// An endpoint URL: `http://` or `https://` and a host. Without a scheme the SDK would fail
/// much later, once per call, with an error that does not say what was wrong.
pub(super) fn parse_endpoint_url(s: &str) -> Result<String, String> {
    let uri: hyper::Uri = s
        .parse()
        .map_err(|e| format!("not a URL ({e}); write it as http://HOST:PORT"))?;
    match (uri.scheme_str(), uri.authority()) {
        (Some("http" | "https"), Some(a)) if !a.host().is_empty() => Ok(s.to_string()),
        (None, _) => Err(format!(
            "`{s}` has no scheme; write it as http://{s} (or https://)"
        )),
        (Some(other), _) if other != "http" && other != "https" => Err(format!(
            "unsupported scheme `{other}`: SQS endpoints are http:// or https:// \
             (for a host and port, write http://{s})"
        )),
        _ => Err(format!("`{s}` names no host; write it as http://HOST:PORT")),
    }
}

/// `K/N` with 1 <= K <= N.
pub(super) fn parse_partition(s: &str) -> Result<(usize, usize), String> {
    let bad = || format!("`{s}` is not a partition: write K/N with 1 <= K <= N, e.g. 2/3");
    let (k, n) = s.split_once('/').ok_or_else(bad)?;
    let (k, n): (usize, usize) = (
        k.trim().parse().map_err(|_| bad())?,
        n.trim().parse().map_err(|_| bad())?,
    );
    if k == 0 || n == 0 || k > n {
        return Err(bad());
    }
    Ok((k, n))
}

/// The emulator's chaos spec (docs/chaos.md), as `--chaos` takes it.
pub(super) fn parse_chaos(s: &str) -> Result<sqsprobe_emulator::Chaos, String> {
    sqsprobe_emulator::Chaos::parse(s).map_err(|e| e.to_string())
}

/// An audit's `--nemesis` spec: `kill`, `pause`, `kill=N`, `pause=N`, comma-separated.
pub(super) fn parse_nemesis(s: &str) -> Result<crate::audit::nemesis::Nemesis, String> {
    crate::audit::nemesis::Nemesis::parse(s)
}

/// A duration as suites write one (`1500ms`, `90s`, `5m`).
pub(super) fn parse_duration(s: &str) -> Result<std::time::Duration, String> {
    sqsprobe_facts::duration::parse(s).map_err(|e| e.to_string())
}

/// An AWS account id: 12 digits.
pub(super) fn parse_account_id(s: &str) -> Result<String, String> {
    if s.len() == 12 && s.chars().all(|c| c.is_ascii_digit()) {
        Ok(s.to_string())
    } else {
        Err("an AWS account id is 12 digits".to_string())
    }
}

/// A request budget: 1 or more. 0 would stop a run before its first request, never what is
/// meant; no budget is no flag.
pub(super) fn parse_request_budget(s: &str) -> Result<u64, String> {
    match s.trim().parse::<u64>() {
        Ok(0) => Err("must be at least 1 (for no budget, leave the flag out)".to_string()),
        Ok(n) => Ok(n),
        Err(_) => Err(format!("`{s}` is not a whole number of requests")),
    }
}

/// A duration longer than 0: a bound of 0 would end what it bounds before it starts.
pub(super) fn parse_positive_duration(s: &str) -> Result<std::time::Duration, String> {
    match parse_duration(s)? {
        d if d.is_zero() => Err("must be longer than 0".to_string()),
        d => Ok(d),
    }
}

/// `1024`, `64KiB`, `512MiB`, `1GiB` (also `KB`/`MB`/`GB`, decimal).
pub(super) fn parse_size(s: &str) -> Result<u64, String> {
    let s = s.trim();
    let split = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
    let (digits, unit) = s.split_at(split);
    let n: u64 = digits
        .parse()
        .map_err(|_| format!("`{s}` is not a size; write e.g. `1048576`, `512MiB` or `1GiB`"))?;
    let factor: u64 = match unit.trim() {
        "" | "B" => 1,
        "KiB" => 1 << 10,
        "MiB" => 1 << 20,
        "GiB" => 1 << 30,
        "KB" => 1_000,
        "MB" => 1_000_000,
        "GB" => 1_000_000_000,
        other => {
            return Err(format!(
                "unknown size unit `{other}`; use B, KiB, MiB or GiB"
            ));
        }
    };
    n.checked_mul(factor)
        .ok_or_else(|| format!("`{s}` is too large"))
}

/// `NAME=URL`: a target named for the table (letters, digits, `-`, `_`, `.`) and its http(s)
/// URL.
pub(super) fn parse_named_endpoint(s: &str) -> Result<(String, String), String> {
    let (name, url) = s
        .split_once('=')
        .ok_or_else(|| format!("`{s}` is not NAME=URL, e.g. moto=http://127.0.0.1:5000"))?;
    let name = name.trim();
    if name.is_empty()
        || !name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
    {
        return Err(format!(
            "`{name}` is not a target name: use letters, digits, `-`, `_`, `.`"
        ));
    }
    if !(url.starts_with("http://") || url.starts_with("https://")) {
        return Err(format!("`{url}` is not an http(s) URL"));
    }
    Ok((name.to_string(), url.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoint_urls_need_a_scheme_and_a_host() {
        assert!(parse_endpoint_url("http://127.0.0.1:4566").is_ok());
        assert!(parse_endpoint_url("https://sqs.eu-west-1.amazonaws.com").is_ok());
        let no_scheme = parse_endpoint_url("127.0.0.1:4566").unwrap_err();
        assert!(no_scheme.contains("http://127.0.0.1:4566"), "{no_scheme}");
        assert!(parse_endpoint_url("localhost:4566").is_err());
        assert!(
            parse_endpoint_url("ftp://host")
                .unwrap_err()
                .contains("scheme")
        );
        assert!(parse_endpoint_url("").is_err());
    }

    #[test]
    fn partitions_are_k_of_n() {
        assert_eq!(parse_partition("2/3"), Ok((2, 3)));
        assert_eq!(parse_partition("1/1"), Ok((1, 1)));
        for bad in ["0/3", "4/3", "3", "a/b", "1/0"] {
            assert!(parse_partition(bad).is_err(), "{bad}");
        }
    }
}
