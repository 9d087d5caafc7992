//! Where a raw target lives: scheme, host, port and the `Host` header, parsed from its URL;
//! and the rule that AWS is never a raw target (pure).
//!
//! The raw driver sends unsigned, pre-built requests. Emulators ignore signatures, so that
//! measures their server; AWS would refuse every request (and a load test of a real account
//! is not what `bench` is for), so an AWS host is refused before anything is sent.

use std::fmt;

/// A parsed `http://host:port` endpoint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct RawEndpoint {
    /// Host name or IP address as written (IPv6 without brackets).
    pub host: String,
    pub port: u16,
    /// The `Host` header value: `host:port` as written in the URL.
    pub authority: String,
}

/// Why an endpoint cannot be a raw target.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum EndpointError {
    /// Only plain HTTP: the driver has no TLS on its hot path and emulators listen in clear.
    NotHttp(String),
    /// The URL has no host, a bad port, or a path, query or credentials.
    Malformed(String),
    /// An AWS endpoint: never a raw target.
    Aws(String),
}

impl fmt::Display for EndpointError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EndpointError::NotHttp(url) => write!(
                f,
                "`{url}` is not an http:// URL: the raw driver speaks plain HTTP to emulators (use --driver sdk for https)"
            ),
            EndpointError::Malformed(why) => f.write_str(why),
            EndpointError::Aws(host) => write!(
                f,
                "`{host}` is an AWS endpoint: the raw driver sends unsigned requests and never targets AWS (it is for emulators, which ignore signatures)"
            ),
        }
    }
}

/// Domains whose hosts are AWS service endpoints (commercial, China, the European Sovereign
/// Cloud, and the dual-stack `api.aws` names).
const AWS_DOMAINS: [&str; 4] = [
    "amazonaws.com",
    "amazonaws.com.cn",
    "amazonaws.eu",
    "api.aws",
];

/// True when `host` is an AWS service host (or one of the domains itself).
pub(crate) fn is_aws_host(host: &str) -> bool {
    let host = host.trim_end_matches('.').to_ascii_lowercase();
    AWS_DOMAINS
        .iter()
        .any(|d| host == *d || host.ends_with(&format!(".{d}")))
}

/// Parses `http://host[:port][/]`; refuses https, paths, AWS hosts and anything else.
pub(crate) fn parse_endpoint(url: &str) -> Result<RawEndpoint, EndpointError> {
    if let Some(rest) = url.strip_prefix("https://") {
        // An https AWS URL is refused as AWS, the reason that matters.
        let host = rest.split(['/', ':', '?', '#']).next().unwrap_or_default();
        if is_aws_host(host) {
            return Err(EndpointError::Aws(host.to_string()));
        }
    }
    let rest = url
        .strip_prefix("http://")
        .ok_or_else(|| EndpointError::NotHttp(url.to_string()))?;
    let authority = rest.strip_suffix('/').unwrap_or(rest);
    if authority.is_empty() || authority.contains(['/', '?', '#', '@']) {
        return Err(EndpointError::Malformed(format!(
            "`{url}` is not http://HOST[:PORT]: the raw driver addresses the server root"
        )));
    }
    let (host, port) = split_host_port(authority)
        .ok_or_else(|| EndpointError::Malformed(format!("`{url}` has no valid host and port")))?;
    if is_aws_host(host) {
        return Err(EndpointError::Aws(host.to_string()));
    }
    Ok(RawEndpoint {
        host: host.to_string(),
        port,
        authority: authority.to_string(),
    })
}

/// `host:port`, `host` (port 80), `[v6]:port` or `[v6]`.
fn split_host_port(authority: &str) -> Option<(&str, u16)> {
    if let Some(v6) = authority.strip_prefix('[') {
        let (host, after) = v6.split_once(']')?;
        let port = match after {
            "" => 80,
            p => p.strip_prefix(':')?.parse().ok()?,
        };
        return (!host.is_empty()).then_some((host, port));
    }
    let (host, port) = match authority.rsplit_once(':') {
        Some((h, p)) => (h, p.parse().ok()?),
        None => (authority, 80),
    };
    (!host.is_empty() && !host.contains(':') && port != 0).then_some((host, port))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_loopback_endpoints() {
        let e = parse_endpoint("http://127.0.0.1:9324").expect("valid");
        assert_eq!((e.host.as_str(), e.port), ("127.0.0.1", 9324));
        assert_eq!(e.authority, "127.0.0.1:9324");
        let e = parse_endpoint("http://localhost:4576/").expect("valid");
        assert_eq!(
            (e.host.as_str(), e.port, e.authority.as_str()),
            ("localhost", 4576, "localhost:4576")
        );
        let e = parse_endpoint("http://[::1]:5000").expect("valid");
        assert_eq!((e.host.as_str(), e.port), ("::1", 5000));
        assert_eq!(parse_endpoint("http://emulator").expect("valid").port, 80);
    }

    #[test]
    fn refuses_aws_hosts_in_every_partition() {
        for url in [
            "http://sqs.us-east-1.amazonaws.com",
            "http://SQS.eu-west-1.AmazonAWS.com:80/",
            "http://sqs.cn-north-1.amazonaws.com.cn",
            "http://sqs.eusc-de-east-1.amazonaws.eu",
            "http://sqs.us-east-1.api.aws",
            "http://amazonaws.com.",
            "https://sqs.us-east-1.amazonaws.com/",
        ] {
            assert!(
                matches!(parse_endpoint(url), Err(EndpointError::Aws(_))),
                "{url}"
            );
        }
        assert!(!is_aws_host("notamazonaws.com"));
        assert!(!is_aws_host("amazonaws.com.example"));
    }

    #[test]
    fn refuses_https_paths_and_bad_ports() {
        assert!(matches!(
            parse_endpoint("https://127.0.0.1:1"),
            Err(EndpointError::NotHttp(_))
        ));
        for url in [
            "http://",
            "http://127.0.0.1:9324/queue/x",
            "http://h:0",
            "http://h:99999",
            "http://user@h:1",
            "http://[::1",
            "http://h:1?x=1",
        ] {
            assert!(
                matches!(parse_endpoint(url), Err(EndpointError::Malformed(_))),
                "{url}"
            );
        }
    }

    #[test]
    fn aws_refusal_says_why() {
        let e = parse_endpoint("http://sqs.us-east-1.amazonaws.com").unwrap_err();
        assert!(e.to_string().contains("never targets AWS"), "{e}");
    }
}
