//! Query protocol XML reply → the AWS JSON 1.0 reply aws-sdk-sqs parses.
//!
//! Success: `<OpResponse><OpResult>…</OpResult><ResponseMetadata><RequestId>` becomes the
//! JSON object of the result's members, with the query protocol's flattened elements turned
//! back into the JSON members (`Attribute` Name/Value pairs → `Attributes` map, repeated
//! `Message` → `Messages`, batch `…ResultEntry` → `Successful`, …) and numbers and booleans
//! where the JSON model has them. Errors: `<ErrorResponse><Error><Type/><Code/><Message/>`
//! becomes `{"__type": "com.amazonaws.sqs#<Code>", "message": …}` plus the
//! `x-amzn-query-error: <Code>;<Type>` header, so the SDK reports the code the server sent.
//! A bare `<SomethingException/>` root on an error status (AWS's answer to a GET of a queue
//! URL without `Action`) is an error with that code.
//!
//! [`json_reply`] reads the JSON form AWS answers a query request that accepts JSON:
//! `{"<Op>Response": {"<Op>Result": …, "ResponseMetadata": {"RequestId": …}}}`, with maps as
//! lists of `{"Name"/"Key", "Value"}` pairs, and errors as `{"Error": {"Type", "Code",
//! "Message"}, "RequestId"}` (AWS-validated in LocalStack's `TestSqsQueryApi` for
//! GetQueueAttributes and for errors; the other results are read by the same rules), its
//! renamed lists under AWS's names only (`ReceiveMessageResult.messages`:
//! [`sqsprobe_facts::sqs::query_json`]).

use quick_xml::Reader;
use quick_xml::events::Event;
use serde_json::{Map, Value, json};
use sqsprobe_facts::sqs::query_members::{self, Layout, Member};

/// One XML element: its local name, text, and child elements in order.
#[derive(Debug, Default, PartialEq)]
pub(crate) struct Element {
    pub name: String,
    pub text: String,
    pub children: Vec<Element>,
}

impl Element {
    fn child(&self, name: &str) -> Option<&Element> {
        self.children.iter().find(|c| c.name == name)
    }

    fn child_text(&self, name: &str) -> Option<&str> {
        self.child(name).map(|c| c.text.as_str())
    }

    /// The first element named `name` at any depth (this one included).
    fn find(&self, name: &str) -> Option<&Element> {
        if self.name == name {
            return Some(self);
        }
        self.children.iter().find_map(|c| c.find(name))
    }
}

fn predefined_entity(name: &str) -> Option<char> {
    Some(match name {
        "lt" => '<',
        "gt" => '>',
        "amp" => '&',
        "quot" => '"',
        "apos" => '\'',
        _ => return None,
    })
}

/// Parses a whole XML document into its root element; `None` if it is not well-formed XML.
pub(crate) fn parse(xml: &[u8]) -> Option<Element> {
    let mut reader = Reader::from_reader(xml);
    let mut stack: Vec<Element> = Vec::new();
    let mut root = None;
    let mut buf = Vec::new();
    loop {
        let event = reader.read_event_into(&mut buf).ok()?;
        match event {
            Event::Start(e) => stack.push(Element {
                name: String::from_utf8_lossy(e.local_name().as_ref()).into_owned(),
                ..Element::default()
            }),
            Event::Empty(e) => {
                let el = Element {
                    name: String::from_utf8_lossy(e.local_name().as_ref()).into_owned(),
                    ..Element::default()
                };
                match stack.last_mut() {
                    Some(parent) => parent.children.push(el),
                    None => root = Some(el),
                }
            }
            Event::End(_) => {
                let el = stack.pop()?;
                match stack.last_mut() {
                    Some(parent) => parent.children.push(el),
                    None => root = Some(el),
                }
            }
            Event::Text(t) => {
                if let Some(top) = stack.last_mut() {
                    top.text.push_str(&t.xml10_content().ok()?);
                }
            }
            Event::CData(t) => {
                if let Some(top) = stack.last_mut() {
                    top.text.push_str(&String::from_utf8_lossy(&t.into_inner()));
                }
            }
            Event::GeneralRef(r) => {
                let c = if r.is_char_ref() {
                    r.resolve_char_ref().ok()??
                } else {
                    predefined_entity(&r.decode().ok()?)?
                };
                if let Some(top) = stack.last_mut() {
                    top.text.push(c);
                }
            }
            Event::Eof => break,
            Event::Decl(_) | Event::PI(_) | Event::Comment(_) | Event::DocType(_) => {}
        }
        buf.clear();
    }
    if !stack.is_empty() {
        return None;
    }
    root
}

/// JSON members the SQS model types as numbers (all others in replies are strings).
const NUMBER_MEMBERS: &[&str] = &[
    "ApproximateNumberOfMessagesMoved",
    "ApproximateNumberOfMessagesToMove",
    "MaxNumberOfMessagesPerSecond",
    "StartedTimestamp",
];

/// JSON members the SQS model types as booleans.
const BOOLEAN_MEMBERS: &[&str] = &["SenderFault"];

/// A leaf's JSON value: a number or boolean where the model says so and the text is one,
/// else the text (the SDK then reports the malformed value rather than this layer hiding it).
fn leaf(name: &str, text: &str) -> Value {
    if NUMBER_MEMBERS.contains(&name)
        && let Ok(n) = text.trim().parse::<i64>()
    {
        return Value::from(n);
    }
    if BOOLEAN_MEMBERS.contains(&name) {
        match text.trim() {
            "true" => return Value::Bool(true),
            "false" => return Value::Bool(false),
            _ => {}
        }
    }
    Value::String(text.to_owned())
}

/// `<MessageAttribute>`'s `<Value>`: DataType, StringValue, BinaryValue and the list forms
/// (`StringListValue` elements into `StringListValues`, as [`query_members::REPLY`] names them).
fn attribute_value(operation: &str, el: &Element) -> Value {
    let mut out = Map::new();
    for c in &el.children {
        match query_members::reply_by_query(operation, &c.name) {
            Some(Member {
                json,
                layout: Layout::List,
                ..
            }) => {
                if let Value::Array(items) = out.entry(*json).or_insert_with(|| json!([])) {
                    items.push(Value::String(c.text.clone()));
                }
            }
            _ => {
                out.insert(c.name.clone(), Value::String(c.text.clone()));
            }
        }
    }
    Value::Object(out)
}

fn map_entry<'a>(el: &'a Element, key: &str) -> Option<(String, &'a Element)> {
    Some((el.child_text(key)?.to_owned(), el.child("Value")?))
}

/// The JSON object for a result (or a structure inside it).
fn object(operation: &str, el: &Element) -> Map<String, Value> {
    let mut out = Map::new();
    for c in &el.children {
        let member = query_members::reply_by_query(operation, &c.name);
        match member.map(|m| (m.json, m.layout)) {
            Some((member, Layout::Map { key, structured })) => {
                if let Some((k, v)) = map_entry(c, key) {
                    let value = if structured {
                        attribute_value(operation, v)
                    } else {
                        Value::String(v.text.clone())
                    };
                    if let Value::Object(m) = out.entry(member).or_insert_with(|| json!({})) {
                        m.insert(k, value);
                    }
                }
            }
            Some((member, Layout::List)) => {
                let item = if c.children.is_empty() {
                    Value::String(c.text.clone())
                } else {
                    Value::Object(object(operation, c))
                };
                if let Value::Array(items) = out.entry(member).or_insert_with(|| json!([])) {
                    items.push(item);
                }
            }
            None => {
                let value = if c.children.is_empty() {
                    leaf(&c.name, &c.text)
                } else {
                    Value::Object(object(operation, c))
                };
                out.insert(c.name.clone(), value);
            }
        }
    }
    out
}

fn is_batch(operation: &str) -> bool {
    sqsprobe_facts::sqs::operations::is_batch(operation)
}

/// A decoded reply: the JSON body, and the headers the JSON protocol carries.
#[derive(Debug, PartialEq)]
pub(crate) struct Reply {
    pub body: Value,
    pub request_id: Option<String>,
    /// `x-amzn-query-error` for errors: `<Code>;<Type>`.
    pub query_error: Option<String>,
}

/// Decodes a query reply for `operation`; `None` when the body is not a query reply (not XML,
/// or neither an `<…Response>` nor an error document), in which case it is passed on as is.
pub(crate) fn reply(operation: &str, status: u16, xml: &[u8]) -> Option<Reply> {
    let root = parse(xml)?;
    let request_id = root.find("RequestId").map(|r| r.text.trim().to_owned());
    // AWS answers `<ErrorResponse><Error>`; some emulators `<Response><Errors><Error>`.
    if let Some(error) = root.find("Error")
        && (root.name == "ErrorResponse"
            || root.name == "Response"
            || !(200..300).contains(&status))
    {
        let code = error
            .child_text("Code")
            .unwrap_or_default()
            .trim()
            .to_owned();
        let message = error.child_text("Message").unwrap_or_default();
        let fault = error.child_text("Type");
        return Some(error_reply(&code, message, fault, status, request_id));
    }
    if !(200..300).contains(&status) && root.children.is_empty() && root.name.ends_with("Exception")
    {
        return Some(error_reply(
            &root.name,
            root.text.trim(),
            None,
            status,
            request_id,
        ));
    }
    if root.name != format!("{operation}Response") {
        return None;
    }
    let result_name = format!("{operation}Result");
    let mut body = root
        .child(&result_name)
        .map(|r| object(operation, r))
        .unwrap_or_default();
    if is_batch(operation) {
        // Both lists are required members of the JSON batch results.
        body.entry("Successful").or_insert_with(|| json!([]));
        body.entry("Failed").or_insert_with(|| json!([]));
    }
    Some(Reply {
        body: Value::Object(body),
        request_id,
        query_error: None,
    })
}

/// An error reply in the JSON protocol's terms, whichever form it came in. A reply without a
/// fault side (`<Type>`) is attributed by its status, as SDKs for the query protocol do.
fn error_reply(
    code: &str,
    message: &str,
    fault: Option<&str>,
    status: u16,
    request_id: Option<String>,
) -> Reply {
    let fault = fault
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .unwrap_or(if status >= 500 { "Receiver" } else { "Sender" });
    Reply {
        body: json!({"__type": format!("com.amazonaws.sqs#{code}"), "message": message}),
        request_id,
        query_error: Some(format!("{code};{fault}")),
    }
}

/// A `{"Name" | "Key": …, "Value": …}` pair of the query JSON form.
fn pair(v: &Value) -> Option<(&str, &Value)> {
    let o = v.as_object().filter(|o| o.len() == 2)?;
    let key = o.get("Name").or_else(|| o.get("Key"))?.as_str()?;
    Some((key, o.get("Value")?))
}

/// One member of a query JSON result, as the JSON model has it.
fn json_member(name: &str, v: &Value) -> Value {
    match v {
        Value::Array(items)
            if query_members::reply_is_map(name)
                || (!items.is_empty() && items.iter().all(|i| pair(i).is_some())) =>
        {
            let mut map = Map::new();
            for (k, value) in items.iter().filter_map(pair) {
                let value = match value {
                    Value::Object(o) => Value::Object(json_object(o)),
                    other => other.clone(),
                };
                map.insert(k.to_owned(), value);
            }
            Value::Object(map)
        }
        Value::Array(items) => Value::Array(items.iter().map(|i| json_member(name, i)).collect()),
        Value::Object(o) => Value::Object(json_object(o)),
        Value::String(t) => leaf(name, t),
        other => other.clone(),
    }
}

fn json_object(o: &Map<String, Value>) -> Map<String, Value> {
    o.iter()
        .filter(|(_, v)| !v.is_null())
        .map(|(k, v)| (k.clone(), json_member(k, v)))
        .collect()
}

/// Decodes a query reply sent in JSON for `operation` (see the module docs); `None` when the
/// body is not one, in which case it is passed on as is.
pub(crate) fn json_reply(operation: &str, status: u16, body: &[u8]) -> Option<Reply> {
    let doc: Value = serde_json::from_slice(body).ok()?;
    let text = |v: Option<&Value>| v.and_then(Value::as_str).map(|t| t.trim().to_owned());
    let wrapped = doc.get("ErrorResponse");
    if let Some(error) = doc
        .get("Error")
        .or_else(|| wrapped.and_then(|w| w.get("Error")))
    {
        let code = text(error.get("Code")).unwrap_or_default();
        let message = text(error.get("Message")).unwrap_or_default();
        let request_id = text(
            doc.get("RequestId")
                .or_else(|| wrapped.and_then(|w| w.get("RequestId"))),
        );
        let fault = text(error.get("Type"));
        return Some(error_reply(
            &code,
            &message,
            fault.as_deref(),
            status,
            request_id,
        ));
    }
    let response = doc.get(format!("{operation}Response"))?;
    let mut body = match response.get(format!("{operation}Result")) {
        Some(Value::Object(result)) => json_object(result)
            .into_iter()
            .filter_map(|(k, v)| {
                sqsprobe_facts::sqs::query_json::member_from_json_form(operation, &k)
                    .map(|name| (name.to_owned(), v))
            })
            .collect(),
        _ => Map::new(),
    };
    if is_batch(operation) {
        body.entry("Successful").or_insert_with(|| json!([]));
        body.entry("Failed").or_insert_with(|| json!([]));
    }
    Some(Reply {
        body: Value::Object(body),
        request_id: text(response.pointer("/ResponseMetadata/RequestId")),
        query_error: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const NS: &str = "xmlns=\"http://queue.amazonaws.com/doc/2012-11-05/\"";

    fn ok(operation: &str, result: &str) -> Value {
        let xml = format!(
            "<?xml version=\"1.0\"?><{operation}Response {NS}>{result}<ResponseMetadata><RequestId>rid-1</RequestId></ResponseMetadata></{operation}Response>"
        );
        let r = reply(operation, 200, xml.as_bytes()).expect("a query reply");
        assert_eq!(r.request_id.as_deref(), Some("rid-1"));
        assert_eq!(r.query_error, None);
        r.body
    }

    #[test]
    fn queue_url_replies() {
        assert_eq!(
            ok(
                "CreateQueue",
                "<CreateQueueResult><QueueUrl>http://h/1/q</QueueUrl></CreateQueueResult>"
            ),
            json!({"QueueUrl": "http://h/1/q"})
        );
        assert_eq!(
            ok(
                "GetQueueUrl",
                "<GetQueueUrlResult><QueueUrl>u</QueueUrl></GetQueueUrlResult>"
            ),
            json!({"QueueUrl": "u"})
        );
        assert_eq!(
            ok(
                "ListQueues",
                "<ListQueuesResult><QueueUrl>a</QueueUrl><QueueUrl>b</QueueUrl><NextToken>t</NextToken></ListQueuesResult>"
            ),
            json!({"QueueUrls": ["a", "b"], "NextToken": "t"})
        );
        assert_eq!(ok("ListQueues", "<ListQueuesResult/>"), json!({}));
        assert_eq!(
            ok(
                "ListDeadLetterSourceQueues",
                "<ListDeadLetterSourceQueuesResult><QueueUrl>a</QueueUrl></ListDeadLetterSourceQueuesResult>"
            ),
            json!({"queueUrls": ["a"]})
        );
    }

    #[test]
    fn attribute_and_tag_maps() {
        assert_eq!(
            ok(
                "GetQueueAttributes",
                "<GetQueueAttributesResult><Attribute><Name>VisibilityTimeout</Name><Value>30</Value></Attribute><Attribute><Name>Policy</Name><Value>{&quot;a&quot;:1}</Value></Attribute></GetQueueAttributesResult>"
            ),
            json!({"Attributes": {"VisibilityTimeout": "30", "Policy": "{\"a\":1}"}})
        );
        assert_eq!(
            ok(
                "ListQueueTags",
                "<ListQueueTagsResult><Tag><Key>a</Key><Value>1</Value></Tag></ListQueueTagsResult>"
            ),
            json!({"Tags": {"a": "1"}})
        );
    }

    #[test]
    fn empty_results_and_no_result_ops() {
        for op in [
            "DeleteQueue",
            "SetQueueAttributes",
            "PurgeQueue",
            "DeleteMessage",
            "ChangeMessageVisibility",
            "TagQueue",
            "UntagQueue",
        ] {
            assert_eq!(ok(op, ""), json!({}), "{op}");
        }
        assert_eq!(ok("ReceiveMessage", "<ReceiveMessageResult/>"), json!({}));
    }

    #[test]
    fn send_message_reply() {
        assert_eq!(
            ok(
                "SendMessage",
                "<SendMessageResult><MD5OfMessageBody>6e2b</MD5OfMessageBody><MD5OfMessageAttributes>4c36</MD5OfMessageAttributes><MessageId>m-1</MessageId><SequenceNumber>1000</SequenceNumber></SendMessageResult>"
            ),
            json!({"MD5OfMessageBody": "6e2b", "MD5OfMessageAttributes": "4c36", "MessageId": "m-1", "SequenceNumber": "1000"})
        );
    }

    #[test]
    fn receive_with_system_and_message_attributes() {
        let body = ok(
            "ReceiveMessage",
            "<ReceiveMessageResult><Message><MessageId>m</MessageId><ReceiptHandle>h+/=</ReceiptHandle><MD5OfBody>x</MD5OfBody><Body>&lt;b&gt; &amp; &#xD;</Body>\
             <Attribute><Name>SenderId</Name><Value>AID</Value></Attribute><Attribute><Name>ApproximateReceiveCount</Name><Value>2</Value></Attribute>\
             <MD5OfMessageAttributes>y</MD5OfMessageAttributes>\
             <MessageAttribute><Name>s</Name><Value><StringValue>v</StringValue><DataType>String</DataType></Value></MessageAttribute>\
             <MessageAttribute><Name>b</Name><Value><BinaryValue>AAE=</BinaryValue><DataType>Binary</DataType></Value></MessageAttribute>\
             </Message><Message><MessageId>n</MessageId><Body/></Message></ReceiveMessageResult>",
        );
        assert_eq!(
            body,
            json!({"Messages": [
                {"MessageId": "m", "ReceiptHandle": "h+/=", "MD5OfBody": "x", "Body": "<b> & \r",
                 "Attributes": {"SenderId": "AID", "ApproximateReceiveCount": "2"},
                 "MD5OfMessageAttributes": "y",
                 "MessageAttributes": {
                     "s": {"StringValue": "v", "DataType": "String"},
                     "b": {"BinaryValue": "AAE=", "DataType": "Binary"}
                 }},
                {"MessageId": "n", "Body": ""}
            ]})
        );
    }

    #[test]
    fn batch_successful_and_failed_entries() {
        assert_eq!(
            ok(
                "SendMessageBatch",
                "<SendMessageBatchResult><SendMessageBatchResultEntry><Id>a</Id><MessageId>m</MessageId><MD5OfMessageBody>x</MD5OfMessageBody></SendMessageBatchResultEntry>\
                 <BatchResultErrorEntry><Id>b</Id><SenderFault>true</SenderFault><Code>InvalidParameterValue</Code><Message>bad</Message></BatchResultErrorEntry></SendMessageBatchResult>"
            ),
            json!({
                "Successful": [{"Id": "a", "MessageId": "m", "MD5OfMessageBody": "x"}],
                "Failed": [{"Id": "b", "SenderFault": true, "Code": "InvalidParameterValue", "Message": "bad"}]
            })
        );
        assert_eq!(
            ok(
                "DeleteMessageBatch",
                "<DeleteMessageBatchResult><DeleteMessageBatchResultEntry><Id>a</Id></DeleteMessageBatchResultEntry></DeleteMessageBatchResult>"
            ),
            json!({"Successful": [{"Id": "a"}], "Failed": []})
        );
        assert_eq!(
            ok(
                "ChangeMessageVisibilityBatch",
                "<ChangeMessageVisibilityBatchResult><BatchResultErrorEntry><Id>a</Id><SenderFault>false</SenderFault><Code>InternalError</Code></BatchResultErrorEntry></ChangeMessageVisibilityBatchResult>"
            ),
            json!({"Successful": [], "Failed": [{"Id": "a", "SenderFault": false, "Code": "InternalError"}]})
        );
    }

    #[test]
    fn move_task_replies_have_numbers() {
        assert_eq!(
            ok(
                "StartMessageMoveTask",
                "<StartMessageMoveTaskResult><TaskHandle>t</TaskHandle></StartMessageMoveTaskResult>"
            ),
            json!({"TaskHandle": "t"})
        );
        assert_eq!(
            ok(
                "CancelMessageMoveTask",
                "<CancelMessageMoveTaskResult><ApproximateNumberOfMessagesMoved>3</ApproximateNumberOfMessagesMoved></CancelMessageMoveTaskResult>"
            ),
            json!({"ApproximateNumberOfMessagesMoved": 3})
        );
        assert_eq!(
            ok(
                "ListMessageMoveTasks",
                "<ListMessageMoveTasksResult><ListMessageMoveTasksResultEntry><Status>COMPLETED</Status><SourceArn>s</SourceArn>\
                 <ApproximateNumberOfMessagesMoved>2</ApproximateNumberOfMessagesMoved><ApproximateNumberOfMessagesToMove>2</ApproximateNumberOfMessagesToMove>\
                 <MaxNumberOfMessagesPerSecond>5</MaxNumberOfMessagesPerSecond><StartedTimestamp>1700000000000</StartedTimestamp></ListMessageMoveTasksResultEntry></ListMessageMoveTasksResult>"
            ),
            json!({"Results": [{"Status": "COMPLETED", "SourceArn": "s", "ApproximateNumberOfMessagesMoved": 2,
                "ApproximateNumberOfMessagesToMove": 2, "MaxNumberOfMessagesPerSecond": 5, "StartedTimestamp": 1700000000000i64}]})
        );
    }

    #[test]
    fn error_reply_keeps_the_legacy_code_and_request_id() {
        let xml = format!(
            "<?xml version=\"1.0\"?><ErrorResponse {NS}><Error><Type>Sender</Type><Code>AWS.SimpleQueueService.NonExistentQueue</Code>\
             <Message>The specified queue does not exist for this wsdl version.</Message><Detail/></Error><RequestId>rid-2</RequestId></ErrorResponse>"
        );
        let r = reply("GetQueueUrl", 400, xml.as_bytes()).unwrap();
        assert_eq!(
            r,
            Reply {
                body: json!({"__type": "com.amazonaws.sqs#AWS.SimpleQueueService.NonExistentQueue",
                    "message": "The specified queue does not exist for this wsdl version."}),
                request_id: Some("rid-2".into()),
                query_error: Some("AWS.SimpleQueueService.NonExistentQueue;Sender".into()),
            }
        );
    }

    #[test]
    fn error_variants() {
        // The `<Response><Errors><Error>` shape, without a Type: attributed by status.
        let r = reply(
            "PurgeQueue",
            503,
            b"<Response><Errors><Error><Code>ServiceUnavailable</Code><Message>m</Message></Error></Errors><RequestID>x</RequestID></Response>",
        )
        .unwrap();
        assert_eq!(
            r.query_error.as_deref(),
            Some("ServiceUnavailable;Receiver")
        );
        assert_eq!(r.request_id, None);
        let r = reply(
            "PurgeQueue",
            403,
            b"<ErrorResponse><Error><Type>Sender</Type><Code>AWS.SimpleQueueService.PurgeQueueInProgress</Code><Message>Only one</Message></Error></ErrorResponse>",
        )
        .unwrap();
        assert_eq!(
            r.query_error.as_deref(),
            Some("AWS.SimpleQueueService.PurgeQueueInProgress;Sender")
        );
    }

    #[test]
    fn non_query_bodies_are_not_decoded() {
        assert_eq!(reply("ListQueues", 200, b"{\"QueueUrls\":[]}"), None);
        assert_eq!(reply("ListQueues", 502, b"<html><body>Bad gateway"), None);
        assert_eq!(reply("ListQueues", 200, b""), None);
        assert_eq!(reply("ListQueues", 200, b"<SendMessageResponse/>"), None);
        assert_eq!(reply("ListQueues", 200, b"<a><b></a>"), None);
    }

    #[test]
    fn a_bare_exception_root_is_an_error_with_that_code() {
        let r = reply("GetQueueUrl", 404, b"<UnknownOperationException/>").unwrap();
        assert_eq!(
            r.query_error.as_deref(),
            Some("UnknownOperationException;Sender")
        );
        assert_eq!(
            r.body["__type"],
            "com.amazonaws.sqs#UnknownOperationException"
        );
        // Only on an error status: a 200 with such a root is no reply of this operation.
        assert_eq!(
            reply("GetQueueUrl", 200, b"<UnknownOperationException/>"),
            None
        );
    }

    #[test]
    fn json_form_results_become_the_json_model() {
        let body = br#"{"GetQueueAttributesResponse": {"GetQueueAttributesResult": {"Attributes": [{"Name": "QueueArn", "Value": "arn:aws:sqs:us-east-1:1:q"}, {"Name": "DelaySeconds", "Value": "0"}]}, "ResponseMetadata": {"RequestId": "r-1"}}}"#;
        let r = json_reply("GetQueueAttributes", 200, body).unwrap();
        assert_eq!(r.request_id.as_deref(), Some("r-1"));
        assert_eq!(
            r.body,
            json!({"Attributes": {"QueueArn": "arn:aws:sqs:us-east-1:1:q", "DelaySeconds": "0"}})
        );
        let empty = br#"{"ListQueueTagsResponse": {"ListQueueTagsResult": {"Tags": []}, "ResponseMetadata": {"RequestId": "r"}}}"#;
        assert_eq!(
            json_reply("ListQueueTags", 200, empty).unwrap().body,
            json!({"Tags": {}})
        );
        let urls = br#"{"ListQueuesResponse": {"ListQueuesResult": {"queueUrls": ["u1", "u2"]}}}"#;
        assert_eq!(
            json_reply("ListQueues", 200, urls).unwrap().body,
            json!({"QueueUrls": ["u1", "u2"]})
        );
        // AWS's JSON form names ReceiveMessage's list `messages`; a reply that says `Messages`
        // is not one an AWS client reads, so the messages are not taken from it.
        let aws = br#"{"ReceiveMessageResponse": {"ReceiveMessageResult": {"messages": [{"MessageId": "m", "Body": "a\r\"&"}]}}}"#;
        assert_eq!(
            json_reply("ReceiveMessage", 200, aws).unwrap().body,
            json!({"Messages": [{"MessageId": "m", "Body": "a\r\"&"}]})
        );
        let other = br#"{"ReceiveMessageResponse": {"ReceiveMessageResult": {"Messages": [{"MessageId": "m"}]}}}"#;
        assert_eq!(
            json_reply("ReceiveMessage", 200, other).unwrap().body,
            json!({})
        );
        assert_eq!(json_reply("ListQueues", 200, b"{}"), None);
        assert_eq!(json_reply("ListQueues", 200, b"<xml/>"), None);
    }

    #[test]
    fn json_form_errors_carry_their_code_and_type() {
        let body = br#"{"Error": {"Type": "Sender", "Code": "InvalidAction", "Message": "The action ListQueues is not valid for this endpoint."}, "RequestId": "r-2"}"#;
        let r = json_reply("ListQueues", 400, body).unwrap();
        assert_eq!(r.query_error.as_deref(), Some("InvalidAction;Sender"));
        assert_eq!(r.request_id.as_deref(), Some("r-2"));
        assert_eq!(
            r.body["message"],
            "The action ListQueues is not valid for this endpoint."
        );
        let wrapped = br#"{"ErrorResponse": {"Error": {"Code": "X"}, "RequestId": "r-3"}}"#;
        let r = json_reply("ListQueues", 500, wrapped).unwrap();
        assert_eq!(r.query_error.as_deref(), Some("X;Receiver"));
    }
}
