"""Doist's sqs-workers (pinned in requirements.txt) as its README shows it, under `sqsprobe
audit` (docs/audit.md#your-framework):

    scripts/consumer-libs
    sqsprobe audit --plan examples/consumers/sqs-workers/plan.yaml -- \\
      .consumer-libs/sqs-workers/bin/python examples/consumers/sqs-workers/worker.py

A processor is chosen by the message attribute `JobName` (what `queue.add_job("charge", ...)`
sets), the body decoded by the codec `ContentType` names (json here). sqs-workers receives up to
ten messages, runs their processors one after the other, and then deletes the successful ones
in one DeleteMessageBatch: the lease must outlast the whole batch (it has no heartbeat). The
processor commits its order to the business ledger (append, fsync) and does nothing for an
order the ledger already holds: a redelivery. Each misuse is a flag:

    --slow    a processor of 0.6 s: the batch outlasts the queue's 2 s lease before its delete
              (lease_expired_mid_handler)
    --naive   no ledger lookup: a redelivery is worked again (duplicate_commit)
"""

import os
import sys
import time

from sqs_workers import SQSEnv

SLOW = "--slow" in sys.argv
NAIVE = "--naive" in sys.argv
LEDGER = os.environ["SQSPROBE_LEDGER"]


def committed():
    """The orders the ledger holds: read at start, since a restart must know what is done."""
    if not os.path.exists(LEDGER):
        return set()
    with open(LEDGER) as f:
        return {line.strip() for line in f if line.strip()}


done = committed()
open(LEDGER, "a").close()  # created at start: the audit sees the channel before any commit
sqs = SQSEnv()
queue = sqs.queue("orders", queue_url=os.environ["SQSPROBE_QUEUE_URL"])


@queue.processor("charge")
def charge(order_id):
    if order_id in done and not NAIVE:
        return  # already charged: a redelivery
    time.sleep(0.6 if SLOW else 0.05)  # the work
    with open(LEDGER, "a") as f:
        f.write(order_id + "\n")
        f.flush()
        os.fsync(f.fileno())
    done.add(order_id)


queue.process_queue(wait_second=1)
