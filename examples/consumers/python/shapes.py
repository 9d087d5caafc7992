"""The playbook's adapter on real message shapes, one queue of `plans/shapes.yaml` each:

- `actors`: dramatiq-style bodies, base64 of a JSON message whose `args[0]` is the key;
- `tasks`: a body that is not JSON at all; the key travels in the `OrderId` attribute, as
  sqs-workers and many teams dispatch on attributes;
- `events`: SNS notifications (no raw message delivery), the order inside the `Message` string.

Any other queue it is given (`SQSPROBE_QUEUE_URL_<NAME>`) carries sqsprobe's default body,
`{"business_key": ...}`. Each delete uses the attempt's own handle, after the commit; a key the
ledger already holds is acknowledged without the work.
"""

import base64
import json
import os

import _adapter as q


def key_of(queue, message):
    body = message["Body"]
    if queue == "ACTORS":
        return json.loads(base64.b64decode(body))["args"][0]
    if queue == "TASKS":
        return message["MessageAttributes"]["OrderId"]["StringValue"]
    if queue == "EVENTS":
        return json.loads(json.loads(body)["Message"])["order"]["id"]
    return json.loads(body)["business_key"]


queues = {
    name[len("SQSPROBE_QUEUE_URL_"):]: url
    for name, url in os.environ.items()
    if name.startswith("SQSPROBE_QUEUE_URL_")
}
done = q.committed()
while True:
    for name, url in sorted(queues.items()):
        answer = q.sqs.receive_message(
            QueueUrl=url,
            MaxNumberOfMessages=10,
            WaitTimeSeconds=1,
            MessageAttributeNames=["All"],
        )
        for message in answer.get("Messages", []):
            key = key_of(name, message)
            if key not in done:
                q.commit(key)
                done.add(key)
            q.sqs.delete_message(QueueUrl=url, ReceiptHandle=message["ReceiptHandle"])
