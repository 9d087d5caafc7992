//! Queue ARNs, `arn:<partition>:sqs:<region>:<account>:<name>`, read in one place: the
//! emulator checks a redrive target and splits its store keys with it, the runner reads a
//! queue's partition and account from it.

/// The parts of a queue ARN.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QueueArn<'a> {
    /// `aws`, `aws-cn`, `aws-us-gov`.
    pub partition: &'a str,
    /// The queue's region (`eu-west-1`).
    pub region: &'a str,
    /// Empty when the ARN has none (as a malformed one may).
    pub account: &'a str,
    /// The queue's name.
    pub name: &'a str,
}

/// Splits a queue ARN; `None` unless it is `arn:…:sqs:…` with six fields and a name.
pub fn parse(arn: &str) -> Option<QueueArn<'_>> {
    let mut parts = arn.splitn(6, ':');
    let (Some("arn"), Some(partition), Some("sqs"), Some(region), Some(account), Some(name)) = (
        parts.next(),
        parts.next(),
        parts.next(),
        parts.next(),
        parts.next(),
        parts.next(),
    ) else {
        return None;
    };
    (!name.is_empty()).then_some(QueueArn {
        partition,
        region,
        account,
        name,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_queue_arn_splits_into_its_fields() {
        let arn = parse("arn:aws-cn:sqs:cn-north-1:000000000000:q:with:colons").unwrap();
        assert_eq!(arn.partition, "aws-cn");
        assert_eq!(arn.region, "cn-north-1");
        assert_eq!(arn.account, "000000000000");
        assert_eq!(arn.name, "q:with:colons");
        assert_eq!(parse("arn:aws:sqs:us-east-1::q").unwrap().account, "");
        for bad in [
            "not-an-arn",
            "arn:aws:sns:us-east-1:1:t",
            "arn:aws:sqs:us-east-1:1:",
        ] {
            assert_eq!(parse(bad), None, "{bad}");
        }
    }
}
