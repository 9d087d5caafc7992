//! What a handler knows about a request besides its parameters (set by the server), and how
//! it names the queue a request addresses.

use sha2::{Digest, Sha256};

use crate::model::store::Emulator;
use crate::support::errors::SqsResult;
use crate::support::input::{Input, queue_ref_from_url};

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
        Ok(emu.arn(region.unwrap_or(&self.region), name))
    }

    /// The SenderId of messages this request sends: an IAM unique id of AWS's shape (`AIDA` and
    /// 17 characters of `[A-Z2-7]`), derived from the access key so one credential is always one
    /// sender; unsigned requests count as the account. AWS shows such ids, not the account id
    /// (LocalStack `test_receive_message_attribute_names_filters` notes the difference).
    ///
    /// Every send asks, and a client sends with one credential: each thread remembers the last
    /// credential and its id, so the SHA-256 runs once per credential, not once per message
    /// (it was the largest part of a SendMessage's cost: docs/performance.md).
    pub fn sender_id(&self, account_id: &str) -> String {
        thread_local! {
            static LAST: std::cell::RefCell<(String, String)> =
                const { std::cell::RefCell::new((String::new(), String::new())) };
        }
        let seed = self.access_key.as_deref().unwrap_or(account_id);
        LAST.with_borrow_mut(|(last_seed, last_id)| {
            if last_id.is_empty() || last_seed != seed {
                *last_id = derive_sender_id(seed);
                seed.clone_into(last_seed);
            }
            last_id.clone()
        })
    }

    /// The store key of queue `name` in the request's region.
    pub fn key_of(&self, emu: &Emulator, name: &str) -> String {
        emu.arn(&self.region, name)
    }
}

/// The SenderId of credential `seed` (see [`RequestContext::sender_id`]).
fn derive_sender_id(seed: &str) -> String {
    const ALPHABET: &[u8; 32] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
    let digest = Sha256::digest(seed.as_bytes());
    let mut id = String::with_capacity(21);
    id.push_str("AIDA");
    id.extend(
        digest
            .iter()
            .take(17)
            .map(|b| ALPHABET[usize::from(b % 32)] as char),
    );
    id
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ctx(access_key: Option<&str>) -> RequestContext {
        RequestContext {
            host: "h".into(),
            query: false,
            trace_header: None,
            region: "us-east-1".into(),
            access_key: access_key.map(str::to_owned),
        }
    }

    #[test]
    fn a_sender_id_is_the_credential_s_whichever_came_before() {
        let a = ctx(Some("AKIDA")).sender_id("000000000000");
        let b = ctx(Some("AKIDB")).sender_id("000000000000");
        let account = ctx(None).sender_id("000000000000");
        assert_ne!(a, b);
        assert_ne!(a, account);
        assert_eq!(ctx(Some("AKIDA")).sender_id("000000000000"), a);
        assert_eq!(a, derive_sender_id("AKIDA"));
        assert_eq!(account, derive_sender_id("000000000000"));
        assert!(a.starts_with("AIDA") && a.len() == 21, "{a}");
    }
}
