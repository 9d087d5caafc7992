"""dramatiq with dramatiq_sqs (pinned in requirements.txt) as its README shows it, under
`sqsprobe audit` (docs/audit.md#your-framework):

    scripts/consumer-libs
    sqsprobe audit --plan examples/consumers/dramatiq/plan.yaml -- \\
      .consumer-libs/dramatiq/bin/dramatiq --path examples/consumers/dramatiq \\
        --processes 1 --threads 2 tasks

The broker finds the queue the audit made by name (dramatiq_sqs's `get_queue_by_name`: the
actor's queue, `default`), and boto3 the endpoint and the test credentials in the environment
the audit sets. The actor commits its order to the business ledger (append, fsync) under a lock,
and does nothing for an order the ledger already holds: a redelivery. dramatiq acknowledges (the
SQS delete) after the actor returns.

dramatiq_sqs passes its broker's `visibility_timeout` on every ReceiveMessage (12 hours unless
set), overriding the queue's, and has no heartbeat: the lease must outlast the actor and the
time a prefetched message waits for a thread. Each misuse is one environment variable,
ORDERS_MISUSE, so the same command line runs it:

    long-actor  an actor longer than the broker's visibility timeout (lease_expired_mid_handler)
    naive       no ledger lookup: a redelivery runs the actor again (duplicate_commit)
"""

import fcntl
import os
import time

import dramatiq
from dramatiq_sqs import SQSBroker

MISUSE = os.environ.get("ORDERS_MISUSE", "")
LEDGER = os.environ["SQSPROBE_LEDGER"]

open(LEDGER, "a").close()  # created at start: the audit sees the channel before any commit

broker = SQSBroker(visibility_timeout=2)
dramatiq.set_broker(broker)


@dramatiq.actor(max_retries=0)
def charge(order_id):
    """Charges one order once: the ledger, locked, says whether it is done."""
    with open(LEDGER, "a+") as ledger:
        fcntl.flock(ledger, fcntl.LOCK_EX)
        ledger.seek(0)
        if MISUSE != "naive" and order_id in {line.strip() for line in ledger}:
            return
        time.sleep(2.5 if MISUSE == "long-actor" else 0.05)  # the work
        ledger.write(order_id + "\n")
        ledger.flush()
        os.fsync(ledger.fileno())
