//! Which hosts are AWS: what tells a `--target aws` run that really reached AWS from one an
//! environment redirected elsewhere (`AWS_ENDPOINT_URL`, a profile's `endpoint_url`).

/// Whether `url` names an AWS host (`*.amazonaws.com`, `*.amazonaws.com.cn`): the regional
/// endpoints, FIPS and dual-stack ones, VPC endpoints. Anything else is not AWS.
pub fn is_aws_endpoint(url: &str) -> bool {
    let rest = url.split_once("://").map_or(url, |(_, rest)| rest);
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    let host = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    let host = host
        .split(':')
        .next()
        .unwrap_or_default()
        .to_ascii_lowercase();
    host.ends_with(".amazonaws.com") || host.ends_with(".amazonaws.com.cn")
}

/// The endpoint a recorded run sent its calls to instead of AWS: `target` is `aws` but
/// `endpoint` is not an AWS host. `None` for a run that reached AWS, and for emulator targets.
pub fn redirected_to<'a>(target: &str, endpoint: Option<&'a str>) -> Option<&'a str> {
    endpoint.filter(|url| target == "aws" && !is_aws_endpoint(url))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_redirect_is_an_aws_run_sent_elsewhere() {
        assert_eq!(
            redirected_to("aws", Some("http://127.0.0.1:9324")),
            Some("http://127.0.0.1:9324")
        );
        assert_eq!(
            redirected_to("aws", Some("https://sqs.eu-west-1.amazonaws.com")),
            None
        );
        assert_eq!(redirected_to("aws", None), None);
        assert_eq!(
            redirected_to("endpoint", Some("http://127.0.0.1:9324")),
            None
        );
    }

    #[test]
    fn aws_hosts_are_told_from_lookalikes() {
        assert!(is_aws_endpoint("https://sqs.cn-north-1.amazonaws.com.cn"));
        assert!(is_aws_endpoint(
            "https://vpce-0a1b-xyz.sqs.us-east-1.vpce.amazonaws.com/"
        ));
        assert!(is_aws_endpoint(
            "https://user:pw@sqs.us-east-1.amazonaws.com"
        ));
        assert!(!is_aws_endpoint("http://127.0.0.1:9324"));
        assert!(!is_aws_endpoint("https://sqs.amazonaws.com.evil.example"));
        assert!(!is_aws_endpoint("https://amazonaws.com"));
        assert!(!is_aws_endpoint("http://x.amazonaws.com@127.0.0.1:9324"));
    }
}
