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

    /// Entries a batch answer reports as failed; `None` when the body is not a batch answer.
    pub(crate) fn batch_failures(&self, body: &[u8]) -> Option<usize> {
        match self.protocol {
            Protocol::Json => {
                #[derive(Deserialize)]
                struct Out {
                    #[serde(rename = "Failed", default)]
                    failed: Vec<serde::de::IgnoredAny>,
                    #[serde(rename = "Successful", default)]
                    successful: Vec<serde::de::IgnoredAny>,
                }
                let out = serde_json::from_slice::<Out>(body).ok()?;
                (!(out.failed.is_empty() && out.successful.is_empty())).then_some(out.failed.len())
            }
            Protocol::Query => {
                let text = std::str::from_utf8(body).ok()?;
                text.contains("BatchResult")
                    .then(|| text.matches("<BatchResultErrorEntry>").count())
            }
        }
    }
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
        assert_eq!(
            JSON.batch_failures(br#"{"Successful":[{}],"Failed":[{},{}]}"#),
            Some(2)
        );
        assert_eq!(JSON.batch_failures(br#"{"__type":"x"}"#), None);

        let xml = b"<ReceiveMessageResponse><ReceiveMessageResult><Message><ReceiptHandle>a&amp;b</ReceiptHandle></Message><Message><ReceiptHandle>c</ReceiptHandle></Message></ReceiveMessageResult></ReceiveMessageResponse>";
        assert_eq!(QUERY.receipt_handles(xml), ["a&b", "c"]);
        assert_eq!(QUERY.message_count(xml), 2);
        assert_eq!(
            QUERY.queue_url(b"<CreateQueueResult><QueueUrl>http://localhost:1/queues/q</QueueUrl></CreateQueueResult>").as_deref(),
            Some("http://localhost:1/queues/q")
        );
        assert_eq!(
            QUERY.batch_failures(b"<DeleteMessageBatchResult><BatchResultErrorEntry><Id>1</Id></BatchResultErrorEntry></DeleteMessageBatchResult>"),
            Some(1)
        );
        assert_eq!(QUERY.batch_failures(b"<ErrorResponse/>"), None);
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
