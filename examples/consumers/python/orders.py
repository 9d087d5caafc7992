"""The playbook's adapter on a team's own message shape: orders whose business key sits at
`order.id`, read from the queue the plan names (`SQSPROBE_QUEUE_URL_ORDERS`). Each delete
uses the handle of the attempt that received it, after the commit; a redelivery already in
the ledger is acknowledged without the work.

`--poison KEY` makes the handler fail on that order every time (it raises before the commit
and the delete), so the queue's redrive policy moves it to the dead-letter queue: the audit
reports it as never acknowledged.
"""

import json
import os
import sys

import _adapter as q

QUEUE_URL = os.environ["SQSPROBE_QUEUE_URL_ORDERS"]
poison = sys.argv[sys.argv.index("--poison") + 1] if "--poison" in sys.argv else None


def handle(message, done):
    key = json.loads(message["Body"])["order"]["id"]
    if key == poison:
        raise ValueError(f"cannot price order {key}")
    if key not in done:
        q.commit(key)
        done.add(key)
    q.sqs.delete_message(QueueUrl=QUEUE_URL, ReceiptHandle=message["ReceiptHandle"])


done = q.committed()
while True:
    answer = q.sqs.receive_message(QueueUrl=QUEUE_URL, MaxNumberOfMessages=10, WaitTimeSeconds=1)
    for message in answer.get("Messages", []):
        try:
            handle(message, done)
        except ValueError as e:
            print(f"handler failed: {e}", file=sys.stderr, flush=True)
