//! SQS's two wire protocols, once: what `run --protocol`, the runner's client, the raw bench
//! and the evidence (`run_start.protocol`) name.

/// An SQS wire protocol.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Default,
    serde::Serialize,
    serde::Deserialize,
    schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum Protocol {
    /// AWS JSON 1.0 (`x-amz-target: AmazonSQS.<Op>`), what aws-sdk-sqs speaks.
    #[default]
    Json,
    /// The query protocol: a form-encoded request, an XML reply (or its JSON form).
    Query,
}

impl Protocol {
    /// Both, in the order a run or a matrix lists them.
    pub const ALL: [Protocol; 2] = [Protocol::Json, Protocol::Query];

    /// The name recorded in `run_start.protocol` and shown as a matrix column's suffix.
    pub const fn as_str(self) -> &'static str {
        match self {
            Protocol::Json => "json",
            Protocol::Query => "query",
        }
    }

    /// Every protocol's name, in [`Protocol::ALL`]'s order.
    pub const NAMES: [&'static str; 2] = [Protocol::Json.as_str(), Protocol::Query.as_str()];

    /// The protocol of a recorded name.
    pub fn from_name(name: &str) -> Option<Protocol> {
        Protocol::ALL.into_iter().find(|p| p.as_str() == name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_go_there_and_back() {
        for p in Protocol::ALL {
            assert_eq!(Protocol::from_name(p.as_str()), Some(p));
            assert_eq!(
                serde_json::to_value(p).unwrap(),
                serde_json::Value::String(p.as_str().to_owned())
            );
        }
        assert_eq!(Protocol::from_name("xml"), None);
    }
}
