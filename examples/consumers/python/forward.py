"""A consume-and-forward stage: each order is priced and forwarded to the `shipments` queue
(`SQSPROBE_QUEUE_URL_SHIPMENTS`), then deleted. It writes no ledger: the forward is its work,
and the plan names `shipments` as an output queue, so `sqsprobe audit` counts each forward as
the commit of the key it carries, at the moment it is sent (docs/audit.md#effect-channels).

`--retry KEY` makes the first delivery of that order fail and publish the work again as a new
message to the same queue before deleting the original, as Celery's `self.retry()` and
dramatiq's retries do: a hand-off, not an acknowledgement before the work.
"""

import json
import os
import sys

import _adapter as q

SHIPMENTS = os.environ["SQSPROBE_QUEUE_URL_SHIPMENTS"]
retry = sys.argv[sys.argv.index("--retry") + 1] if "--retry" in sys.argv else None
forwarded = set()

while True:
    for message in q.receive():
        order = json.loads(message["Body"])
        key = order["business_key"]
        if key == retry and not order.get("retry"):
            again = dict(order, retry=1)
            q.sqs.send_message(QueueUrl=q.QUEUE_URL, MessageBody=json.dumps(again))
        elif key not in forwarded:
            shipment = {"shipment": {"order": key, "carrier": "post"}}
            q.sqs.send_message(QueueUrl=SHIPMENTS, MessageBody=json.dumps(shipment))
            forwarded.add(key)
        q.delete(message["ReceiptHandle"])
