"""Checks the SQS event and the context it is invoked with against the shape AWS documents
("Using Lambda with Amazon SQS", the example event), and fails the invocation on the first
difference; commits each record's key otherwise. For the test of the event's shape.
"""

import base64
import hashlib
import os

import _work

FIELDS = {
    "messageId", "receiptHandle", "body", "attributes", "messageAttributes", "md5OfBody",
    "eventSource", "eventSourceARN", "awsRegion",
}
SYSTEM = {"ApproximateReceiveCount", "SentTimestamp", "SenderId", "ApproximateFirstReceiveTimestamp"}
FIFO = {"MessageGroupId", "SequenceNumber", "MessageDeduplicationId"}


def check(record):
    assert set(record) == FIELDS, sorted(record)
    assert record["eventSource"] == "aws:sqs", record["eventSource"]
    assert record["awsRegion"] == os.environ["AWS_REGION"], record["awsRegion"]
    assert record["eventSourceARN"].startswith("arn:aws:sqs:"), record["eventSourceARN"]
    assert record["md5OfBody"] == hashlib.md5(record["body"].encode()).hexdigest()
    attributes = record["attributes"]
    want = SYSTEM | (FIFO if record["eventSourceARN"].endswith(".fifo") else set())
    assert want <= set(attributes), sorted(attributes)
    assert all(isinstance(v, str) for v in attributes.values()), attributes
    for name, value in record["messageAttributes"].items():
        assert {"dataType", "stringListValues", "binaryListValues"} <= set(value), (name, value)
        if value["dataType"].startswith("Binary"):
            base64.b64decode(value["binaryValue"], validate=True)
        else:
            assert isinstance(value["stringValue"], str), (name, value)
    assert record["messageAttributes"]["OrderId"]["stringValue"] == _work.key(record)


def handler(event, context):
    assert set(event) == {"Records"}, sorted(event)
    assert context.aws_request_id, "a request id"
    assert context.invoked_function_arn.startswith("arn:aws:lambda:"), context.invoked_function_arn
    assert context.get_remaining_time_in_millis() > 0
    for record in event["Records"]:
        check(record)
    for record in event["Records"]:
        k = _work.key(record)
        if not _work.committed(k):
            _work.commit(k)
    return None
