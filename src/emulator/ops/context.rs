//! What a handler knows about a request besides its parameters (set by the server), and how
//! it names the queue a request addresses.

use sha2::{Digest, Sha256};

use crate::emulator::model::store::Emulator;
use crate::emulator::support::errors::SqsResult;
use crate::emulator::support::input::{Input, queue_ref_from_url};

/// What a handler needs to know about the request besides its parameters.
#[derive(Debug, Clone)]
pub(crate) struct RequestContext {
    /// Host (and port) the client addressed; queue URLs are built from it.
    pub host: String,
    /// Whether the request came over the query protocol.
    pub query: bool,
    /// `X-Amzn-Trace-Id` header, which becomes the AWSTraceHeader system attribute.
    pub trace_header: Option<String>,
    /// The region the request works in: its SigV4 signing region, else the configured one.
    /// Each region is its own namespace of queues, as on AWS.
    pub region: String,
    /// The SigV4 access key, from which the sender's id (`SenderId`) is derived.
    pub access_key: Option<String>,
}

impl RequestContext {
    /// The store key of the queue named by `QueueUrl`: the region a URL of another region
    /// carries (`/queue/<region>/<account>/<name>`), else the request's own.
    pub fn queue_key(&self, emu: &Emulator, input: &Input<'_>) -> SqsResult<String> {
        let (region, name) = queue_ref_from_url(input.required_string("QueueUrl")?)?;
        Ok(emu.arn(region.as_deref().unwrap_or(&self.region), &name))
    }

    /// The SenderId of messages this request sends: an IAM unique id of AWS's shape (`AIDA` and
    /// 17 characters of `[A-Z2-7]`), derived from the access key so one credential is always one
    /// sender; unsigned requests count as the account. AWS shows such ids, not the account id
    /// (LocalStack `test_receive_message_attribute_names_filters` notes the difference).
    pub fn sender_id(&self, account_id: &str) -> String {
        const ALPHABET: &[u8; 32] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
        let seed = self.access_key.as_deref().unwrap_or(account_id);
        let digest = Sha256::digest(seed.as_bytes());
        let tail: String = digest
            .iter()
            .take(17)
            .map(|b| ALPHABET[usize::from(b % 32)] as char)
            .collect();
        format!("AIDA{tail}")
    }

    /// The store key of queue `name` in the request's region.
    pub fn key_of(&self, emu: &Emulator, name: &str) -> String {
        emu.arn(&self.region, name)
    }
}
