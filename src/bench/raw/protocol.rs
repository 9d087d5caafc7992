//! The raw driver's requests, built once per queue, and the few fields it reads back (pure).
//!
//! Both SQS wire protocols: AWS JSON 1.0 (`x-amz-target: AmazonSQS.<Op>`, what aws-sdk-sqs
//! speaks) and the query protocol (form body, XML answer) for servers that speak only that.
//! Requests carry a fixed, never-valid SigV4 `Authorization` header: emulators read the region
//! and access key from it and verify nothing, and computing a real signature per request
//! would put the client's cost into the server's figure.

use std::sync::LazyLock;

use bytes::Bytes;
use memchr::memmem::Finder;
use serde::Deserialize;
use serde_json::{Value, json};

pub(crate) use sqsprobe_facts::sqs::protocol::Protocol;

/// The operation name of the no-op: no SQS API has it, so a server answers it with its
/// unknown-operation error after parsing the request and before any queue work.
pub(crate) const NOOP_OPERATION: &str = "SqsprobeNoOperation";

/// Body text of every message the driver sends (small, so the figure is per request).
pub(crate) const MESSAGE_BODY: &str = "sqsprobe raw bench message";

/// Entries per batch request (the SQS maximum).
pub(crate) const BATCH_SIZE: usize = 10;

/// A static SigV4-shaped header that no service would accept: region us-east-1, AWS's
/// documented example access key, an all-zero signature.
const AUTHORIZATION: &str = "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20260101/us-east-1/sqs/aws4_request, SignedHeaders=content-type;host;x-amz-date;x-amz-target, Signature=0000000000000000000000000000000000000000000000000000000000000000";
const AMZ_DATE: &str = "20260101T000000Z";
const QUERY_VERSION: &str = "2012-11-05";

/// One request ready to send: everything but the `Host` header, which the connection adds.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Prepared {
    /// `x-amz-target` for JSON (validated once, here); `None` for query.
    pub target: Option<hyper::header::HeaderValue>,
    pub content_type: &'static str,
    pub body: Bytes,
    /// The operation, for per-operation latency.
    pub operation: &'static str,
}

impl Prepared {
    /// Builds the HTTP request (cheap: the body is shared, headers are static or short).
    pub(crate) fn to_request(
        &self,
        authority: &hyper::header::HeaderValue,
    ) -> hyper::Request<http_body_util::Full<Bytes>> {
        use hyper::header::{AUTHORIZATION as AUTH, CONTENT_TYPE, HOST, HeaderValue};
        let mut req = hyper::Request::new(http_body_util::Full::new(self.body.clone()));
        *req.method_mut() = hyper::Method::POST;
        *req.uri_mut() = hyper::Uri::from_static("/");
        let headers = req.headers_mut();
        headers.insert(HOST, authority.clone());
        headers.insert(CONTENT_TYPE, HeaderValue::from_static(self.content_type));
        headers.insert(AUTH, HeaderValue::from_static(AUTHORIZATION));
        headers.insert("x-amz-date", HeaderValue::from_static(AMZ_DATE));
        if let Some(target) = &self.target {
            headers.insert("x-amz-target", target.clone());
        }
        req
    }
}

/// Builds requests in one protocol.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Requests {
    pub protocol: Protocol,
}

/// Any operation in AWS JSON 1.0 with `body` as its members (the scale workloads build their
/// requests with it: FIFO sends, attributes, lookups).
pub(crate) fn json_request(operation: &'static str, body: &Value) -> Prepared {
    Prepared {
        // Operation names are ASCII identifiers, always a valid header value.
        target: hyper::header::HeaderValue::from_str(&format!("AmazonSQS.{operation}")).ok(),
        content_type: "application/x-amz-json-1.0",
        body: Bytes::from(body.to_string()),
        operation,
    }
}

impl Requests {
    fn json(&self, operation: &'static str, body: Value) -> Prepared {
        json_request(operation, &body)
    }

    fn query(&self, operation: &'static str, params: &[(String, String)]) -> Prepared {
        let mut form = form_urlencoded::Serializer::new(String::new());
        form.append_pair("Action", operation);
        form.append_pair("Version", QUERY_VERSION);
        for (k, v) in params {
            form.append_pair(k, v);
        }
        Prepared {
            target: None,
            content_type: "application/x-www-form-urlencoded",
            body: Bytes::from(form.finish()),
            operation,
        }
    }

    /// `operation` with JSON members `json_body`, or as query parameters `params`.
    fn build(
        &self,
        operation: &'static str,
        json_body: Value,
        params: &[(String, String)],
    ) -> Prepared {
        match self.protocol {
            Protocol::Json => self.json(operation, json_body),
            Protocol::Query => self.query(operation, params),
        }
    }

    /// The unknown-operation request that measures the server's pure HTTP cost.
    pub(crate) fn noop(&self) -> Prepared {
        self.build(NOOP_OPERATION, json!({}), &[])
    }

    pub(crate) fn create_queue(&self, name: &str) -> Prepared {
        self.build(
            "CreateQueue",
            json!({ "QueueName": name }),
            &[p("QueueName", name)],
        )
    }

    pub(crate) fn delete_queue(&self, queue_url: &str) -> Prepared {
        self.build(
            "DeleteQueue",
            json!({ "QueueUrl": queue_url }),
            &[p("QueueUrl", queue_url)],
        )
    }

    pub(crate) fn send(&self, queue_url: &str) -> Prepared {
        self.build(
            "SendMessage",
            json!({ "QueueUrl": queue_url, "MessageBody": MESSAGE_BODY }),
            &[p("QueueUrl", queue_url), p("MessageBody", MESSAGE_BODY)],
        )
    }

    pub(crate) fn send_batch(&self, queue_url: &str) -> Prepared {
        let entries: Vec<Value> = (0..BATCH_SIZE)
            .map(|i| json!({ "Id": format!("m{i}"), "MessageBody": MESSAGE_BODY }))
            .collect();
        let mut params = vec![p("QueueUrl", queue_url)];
        for i in 0..BATCH_SIZE {
            let n = i + 1;
            params.push(p(
                &format!("SendMessageBatchRequestEntry.{n}.Id"),
                &format!("m{i}"),
            ));
            params.push(p(
                &format!("SendMessageBatchRequestEntry.{n}.MessageBody"),
                MESSAGE_BODY,
            ));
        }
        self.build(
            "SendMessageBatch",
            json!({ "QueueUrl": queue_url, "Entries": entries }),
            &params,
        )
    }

    /// Up to `max` messages; `visibility_timeout` 0 leaves them visible for the next receive.
    pub(crate) fn receive(
        &self,
        queue_url: &str,
        max: usize,
        wait_seconds: u32,
        visibility_timeout: Option<u32>,
    ) -> Prepared {
        let mut body = json!({
            "QueueUrl": queue_url,
            "MaxNumberOfMessages": max,
            "WaitTimeSeconds": wait_seconds,
        });
        let mut params = vec![
            p("QueueUrl", queue_url),
            p("MaxNumberOfMessages", &max.to_string()),
            p("WaitTimeSeconds", &wait_seconds.to_string()),
        ];
        if let Some(v) = visibility_timeout {
            body["VisibilityTimeout"] = json!(v);
            params.push(p("VisibilityTimeout", &v.to_string()));
        }
        self.build("ReceiveMessage", body, &params)
    }

    pub(crate) fn delete(&self, queue_url: &str, handle: &str) -> Prepared {
        self.build(
            "DeleteMessage",
            json!({ "QueueUrl": queue_url, "ReceiptHandle": handle }),
            &[p("QueueUrl", queue_url), p("ReceiptHandle", handle)],
        )
    }

    pub(crate) fn delete_batch(&self, queue_url: &str, handles: &[String]) -> Prepared {
        let entries: Vec<Value> = handles
            .iter()
            .enumerate()
            .map(|(i, h)| json!({ "Id": format!("d{i}"), "ReceiptHandle": h }))
            .collect();
        let mut params = vec![p("QueueUrl", queue_url)];
        for (i, h) in handles.iter().enumerate() {
            let n = i + 1;
            params.push(p(
                &format!("DeleteMessageBatchRequestEntry.{n}.Id"),
                &format!("d{i}"),
            ));
            params.push(p(
                &format!("DeleteMessageBatchRequestEntry.{n}.ReceiptHandle"),
                h,
            ));
        }
        self.build(
            "DeleteMessageBatch",
            json!({ "QueueUrl": queue_url, "Entries": entries }),
            &params,
        )
    }

    /// The `QueueUrl` of a CreateQueue answer.
    pub(crate) fn queue_url(&self, body: &[u8]) -> Option<String> {
        match self.protocol {
            Protocol::Json => {
                #[derive(Deserialize)]
                struct Out {
                    #[serde(rename = "QueueUrl")]
                    queue_url: String,
                }
                serde_json::from_slice::<Out>(body)
                    .ok()
                    .map(|o| o.queue_url)
            }
            Protocol::Query => xml_elements(body, "QueueUrl").into_iter().next(),
        }
    }

    /// The receipt handles of a ReceiveMessage answer (none when it is not one).
    pub(crate) fn receipt_handles(&self, body: &[u8]) -> Vec<String> {
        match self.protocol {
            Protocol::Json => {
                #[derive(Deserialize)]
                struct Message {
                    #[serde(rename = "ReceiptHandle")]
                    receipt_handle: String,
                }
                #[derive(Deserialize)]
                struct Out {
                    #[serde(rename = "Messages", default)]
                    messages: Vec<Message>,
                }
                serde_json::from_slice::<Out>(body)
                    .map(|o| o.messages.into_iter().map(|m| m.receipt_handle).collect())
                    .unwrap_or_default()
            }
            Protocol::Query => xml_elements(body, "ReceiptHandle"),
        }
    }

    /// How many messages a receive's answer holds, counted by their handles without parsing
    /// the answer: the receive workload needs only the count, and parsing ten messages with
    /// `serde` for it took the bench client's share of a 2-core machine from the server it
    /// measures. Exact all the same: in JSON a `"ReceiptHandle"` whose quotes are not escaped,
    /// followed by a colon, can only be a key (a quote inside a string is written `\"`); in XML
    /// `<ReceiptHandle>` can only be an element (a `<` inside text is written `&lt;`).
    ///
    /// The search is memchr's (SIMD) over the bytes, with the finders built once: `str`'s
    /// substring search and the UTF-8 check before it showed in the machine's CPU profile under
    /// the receive workload (docs/performance.md).
    pub(crate) fn message_count(&self, body: &[u8]) -> usize {
        static JSON_KEY: LazyLock<Finder<'static>> =
            LazyLock::new(|| Finder::new(b"\"ReceiptHandle\""));
        static XML_ELEMENT: LazyLock<Finder<'static>> =
            LazyLock::new(|| Finder::new(b"<ReceiptHandle>"));
        match self.protocol {
            Protocol::Json => JSON_KEY
                .find_iter(body)
                .filter(|&at| {
                    body[at + JSON_KEY.needle().len()..]
                        .iter()
                        .find(|b| !b.is_ascii_whitespace())
                        == Some(&b':')
                })
                .count(),
            Protocol::Query => XML_ELEMENT.find_iter(body).count(),
        }
    }

    /// The entries a batch answer reports as done and as failed; `None` when the body is not a
    /// batch answer. SendMessageBatch and DeleteMessageBatch answer 200 with a `Successful` and a
    /// `Failed` list (in XML, `…BatchResultEntry` and `BatchResultErrorEntry` elements), so
    /// a 200 alone does not say how many messages the request moved (API_SendMessageBatch and
    /// API_DeleteMessageBatch, docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/).
    pub(crate) fn batch_outcome(&self, body: &[u8]) -> Option<BatchOutcome> {
        match self.protocol {
            Protocol::Json => {
                #[derive(Deserialize)]
                struct Out {
                    #[serde(rename = "Failed")]
                    failed: Option<Vec<serde::de::IgnoredAny>>,
                    #[serde(rename = "Successful")]
                    successful: Option<Vec<serde::de::IgnoredAny>>,
                }
                let out = serde_json::from_slice::<Out>(body).ok()?;
                if out.failed.is_none() && out.successful.is_none() {
                    return None;
                }
                Some(BatchOutcome {
                    successful: out.successful.map_or(0, |v| v.len()),
                    failed: out.failed.map_or(0, |v| v.len()),
                })
            }
            Protocol::Query => {
                let text = std::str::from_utf8(body).ok()?;
                if !(text.contains("BatchResult>") || text.contains("BatchResult/>")) {
                    return None;
                }
                let mut outcome = BatchOutcome::default();
                // Opening tags only: `<` then the name, up to `>`, `/` or a space.
                for tag in text.split('<').skip(1).filter(|t| !t.starts_with('/')) {
                    let name = tag
                        .split(|c: char| c == '>' || c == '/' || c.is_whitespace())
                        .next()
                        .unwrap_or("");
                    if name == "BatchResultErrorEntry" {
                        outcome.failed += 1;
                    } else if name.ends_with("BatchResultEntry") {
                        outcome.successful += 1;
                    }
                }
                Some(outcome)
            }
        }
    }
}

/// How many entries of a batch request its answer reports as done and as failed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct BatchOutcome {
    pub successful: usize,
    pub failed: usize,
}

fn p(k: &str, v: &str) -> (String, String) {
    (k.to_string(), v.to_string())
}

/// The unescaped text of every `<tag>…</tag>` in `body`, in order. SQS's XML has no
/// attributes or nesting on the elements read here, so a scan is exact.
fn xml_elements(body: &[u8], tag: &str) -> Vec<String> {
    let Ok(text) = std::str::from_utf8(body) else {
        return Vec::new();
    };
    let open = format!("<{tag}>");
    let close = format!("</{tag}>");
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find(&open) {
        let after = &rest[start + open.len()..];
        let Some(end) = after.find(&close) else { break };
        if let Ok(value) = quick_xml::escape::unescape(&after[..end]) {
            out.push(value.into_owned());
        }
        rest = &after[end + close.len()..];
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const JSON: Requests = Requests {
        protocol: Protocol::Json,
    };
    const QUERY: Requests = Requests {
        protocol: Protocol::Query,
    };

    #[test]
    fn json_requests_name_the_operation_in_the_target() {
        let r = JSON.send("http://h/000000000000/q");
        assert_eq!(
            r.target.as_ref().and_then(|v| v.to_str().ok()),
            Some("AmazonSQS.SendMessage")
        );
        assert_eq!(r.content_type, "application/x-amz-json-1.0");
        let body: Value = serde_json::from_slice(&r.body).expect("json");
        assert_eq!(body["QueueUrl"], "http://h/000000000000/q");
        assert_eq!(body["MessageBody"], MESSAGE_BODY);
        assert_eq!(
            JSON.noop().target.as_ref().and_then(|v| v.to_str().ok()),
            Some("AmazonSQS.SqsprobeNoOperation")
        );
        let batch: Value = serde_json::from_slice(&JSON.send_batch("u").body).expect("json");
        assert_eq!(batch["Entries"].as_array().map(Vec::len), Some(BATCH_SIZE));
    }

    #[test]
    fn query_requests_are_forms_with_action_and_entries() {
        let r = QUERY.delete_batch("http://h/q", &["a+b".into(), "c&d".into()]);
        assert_eq!(r.target, None);
        let form: Vec<(String, String)> = form_urlencoded::parse(&r.body).into_owned().collect();
        assert!(form.contains(&("Action".into(), "DeleteMessageBatch".into())));
        assert!(form.contains(&(
            "DeleteMessageBatchRequestEntry.2.ReceiptHandle".into(),
            "c&d".into()
        )));
        assert!(form.contains(&(
            "DeleteMessageBatchRequestEntry.1.ReceiptHandle".into(),
            "a+b".into()
        )));
        let r = QUERY.receive("u", 10, 0, Some(0));
        let form: Vec<(String, String)> = form_urlencoded::parse(&r.body).into_owned().collect();
        assert!(form.contains(&("VisibilityTimeout".into(), "0".into())));
    }

    #[test]
    fn request_has_host_and_static_signature() {
        let host = hyper::header::HeaderValue::from_static("127.0.0.1:9");
        let req = JSON.noop().to_request(&host);
        assert_eq!(req.headers()["host"], "127.0.0.1:9");
        assert!(
            req.headers()["authorization"]
                .to_str()
                .unwrap_or("")
                .starts_with("AWS4-HMAC-SHA256")
        );
        assert_eq!(
            req.headers()["x-amz-target"],
            "AmazonSQS.SqsprobeNoOperation"
        );
    }

    #[test]
    fn reads_handles_urls_and_failures_in_both_protocols() {
        let json = br#"{"Messages":[{"ReceiptHandle":"h1","Body":"x"},{"ReceiptHandle":"h2"}]}"#;
        assert_eq!(JSON.receipt_handles(json), ["h1", "h2"]);
        assert!(JSON.receipt_handles(b"{}").is_empty());
        assert!(JSON.receipt_handles(b"not json").is_empty());
        assert_eq!(
            JSON.queue_url(br#"{"QueueUrl":"http://h/q"}"#).as_deref(),
            Some("http://h/q")
        );

        let xml = b"<ReceiveMessageResponse><ReceiveMessageResult><Message><ReceiptHandle>a&amp;b</ReceiptHandle></Message><Message><ReceiptHandle>c</ReceiptHandle></Message></ReceiveMessageResult></ReceiveMessageResponse>";
        assert_eq!(QUERY.receipt_handles(xml), ["a&b", "c"]);
        assert_eq!(QUERY.message_count(xml), 2);
        assert_eq!(
            QUERY.queue_url(b"<CreateQueueResult><QueueUrl>http://localhost:1/queues/q</QueueUrl></CreateQueueResult>").as_deref(),
            Some("http://localhost:1/queues/q")
        );
    }

    #[test]
    fn batch_requests_carry_ten_entries_in_both_protocols() {
        let handles: Vec<String> = (0..BATCH_SIZE).map(|i| format!("h{i}")).collect();
        let send: Value = serde_json::from_slice(&JSON.send_batch("u").body).expect("json");
        let delete: Value =
            serde_json::from_slice(&JSON.delete_batch("u", &handles).body).expect("json");
        for (body, key, first) in [
            (&send, "MessageBody", MESSAGE_BODY),
            (&delete, "ReceiptHandle", "h0"),
        ] {
            let entries = body["Entries"].as_array().expect("entries");
            assert_eq!(entries.len(), BATCH_SIZE, "{body}");
            assert_eq!(entries[0][key], first, "{body}");
            let ids: std::collections::BTreeSet<&str> =
                entries.iter().filter_map(|e| e["Id"].as_str()).collect();
            assert_eq!(ids.len(), BATCH_SIZE, "ids are distinct: {body}");
        }
        for (r, entry) in [
            (QUERY.send_batch("u"), "SendMessageBatchRequestEntry"),
            (
                QUERY.delete_batch("u", &handles),
                "DeleteMessageBatchRequestEntry",
            ),
        ] {
            let form: Vec<(String, String)> =
                form_urlencoded::parse(&r.body).into_owned().collect();
            let ids = form
                .iter()
                .filter(|(k, _)| k.starts_with(entry) && k.ends_with(".Id"))
                .count();
            assert_eq!(ids, BATCH_SIZE, "{form:?}");
            assert!(
                form.iter().any(|(k, _)| *k == format!("{entry}.10.Id")),
                "{form:?}"
            );
        }
    }

    #[test]
    fn the_query_delete_batch_names_each_handle() {
        let handles: Vec<String> = (0..BATCH_SIZE).map(|i| format!("h{i}")).collect();
        let r = QUERY.delete_batch("u", &handles);
        let form: Vec<(String, String)> = form_urlencoded::parse(&r.body).into_owned().collect();
        assert!(form.contains(&(
            "DeleteMessageBatchRequestEntry.10.ReceiptHandle".into(),
            "h9".into()
        )));
    }

    #[test]
    fn batch_outcomes_count_done_and_failed_entries_in_both_protocols() {
        let outcome = |successful, failed| Some(BatchOutcome { successful, failed });
        let json = |s: &str| JSON.batch_outcome(s.as_bytes());
        assert_eq!(
            json(r#"{"Successful":[{"Id":"m0"},{"Id":"m1"}],"Failed":[]}"#),
            outcome(2, 0)
        );
        assert_eq!(
            json(
                r#"{"Successful":[{"Id":"d0"}],"Failed":[{"Id":"d1","Code":"ReceiptHandleIsInvalid","SenderFault":true}]}"#
            ),
            outcome(1, 1)
        );
        // A list a server leaves out is empty; an answer with neither is not a batch answer.
        assert_eq!(json(r#"{"Successful":[{"Id":"d0"}]}"#), outcome(1, 0));
        assert_eq!(json(r#"{"Failed":[{"Id":"d0"}]}"#), outcome(0, 1));
        assert_eq!(json(r#"{"__type":"x","message":"Failed"}"#), None);
        assert_eq!(json("not json"), None);

        let xml = |s: &str| QUERY.batch_outcome(s.as_bytes());
        let send = "<SendMessageBatchResponse><SendMessageBatchResult>\
            <SendMessageBatchResultEntry><Id>m0</Id><MessageId>a</MessageId></SendMessageBatchResultEntry>\
            <SendMessageBatchResultEntry><Id>m1</Id><MessageId>b</MessageId></SendMessageBatchResultEntry>\
            <BatchResultErrorEntry><Id>m2</Id><Code>x</Code><SenderFault>true</SenderFault></BatchResultErrorEntry>\
            </SendMessageBatchResult></SendMessageBatchResponse>";
        assert_eq!(xml(send), outcome(2, 1));
        let delete = "<DeleteMessageBatchResponse>\n  <DeleteMessageBatchResult>\n    \
            <DeleteMessageBatchResultEntry>\n      <Id>d0</Id>\n    </DeleteMessageBatchResultEntry>\n  \
            </DeleteMessageBatchResult>\n</DeleteMessageBatchResponse>";
        assert_eq!(xml(delete), outcome(1, 0));
        assert_eq!(
            xml(
                "<DeleteMessageBatchResponse><DeleteMessageBatchResult/></DeleteMessageBatchResponse>"
            ),
            outcome(0, 0)
        );
        assert_eq!(
            xml(
                "<ErrorResponse><Error><Code>AWS.SimpleQueueService.BatchEntryIdsNotDistinct</Code></Error></ErrorResponse>"
            ),
            None
        );
    }

    #[test]
    fn message_counts_agree_with_the_handles_parsed() {
        // Bodies that spell the key or the element, as the targets escape them.
        let bodies = [
            "x",
            "ReceiptHandle",
            "\"ReceiptHandle\": 1",
            "{\"ReceiptHandle\":\"h\"}",
            "<ReceiptHandle>h</ReceiptHandle>",
        ];
        for n in 0..4 {
            let messages: Vec<serde_json::Value> = bodies
                .iter()
                .cycle()
                .take(n)
                .enumerate()
                .map(
                    |(i, body)| serde_json::json!({"Body": body, "ReceiptHandle": format!("h{i}")}),
                )
                .collect();
            let mut answer = serde_json::json!({});
            if n > 0 {
                answer["Messages"] = serde_json::Value::Array(messages);
            }
            for json in [
                serde_json::to_vec(&answer).unwrap(),
                serde_json::to_vec_pretty(&answer).unwrap(),
            ] {
                assert_eq!(
                    JSON.message_count(&json),
                    n,
                    "{}",
                    String::from_utf8_lossy(&json)
                );
                assert_eq!(JSON.receipt_handles(&json).len(), n);
            }
            let xml: String = bodies
                .iter()
                .cycle()
                .take(n)
                .enumerate()
                .map(|(i, body)| {
                    let body = quick_xml::escape::escape(*body);
                    format!(
                        "<Message><Body>{body}</Body><ReceiptHandle>h{i}</ReceiptHandle></Message>"
                    )
                })
                .collect();
            let xml = format!(
                "<ReceiveMessageResponse><ReceiveMessageResult>{xml}</ReceiveMessageResult></ReceiveMessageResponse>"
            );
            assert_eq!(QUERY.message_count(xml.as_bytes()), n, "{xml}");
            assert_eq!(QUERY.receipt_handles(xml.as_bytes()).len(), n);
        }
        assert_eq!(JSON.message_count(b"not json"), 0);
        assert_eq!(JSON.message_count(&[0xff, 0xfe]), 0);
    }
}
