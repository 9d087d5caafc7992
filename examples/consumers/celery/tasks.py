"""Celery (5.x, kombu's SQS transport, pinned in requirements.txt) as its documentation shows
it, under `sqsprobe audit` (docs/audit.md#your-framework):

    scripts/consumer-libs
    sqsprobe audit --plan examples/consumers/celery/plan.yaml -- \\
      .consumer-libs/celery/bin/celery --workdir examples/consumers/celery -A tasks \\
        worker --pool solo --without-gossip --without-mingle --without-heartbeat

The app reads the queue the audit made from SQSPROBE_QUEUE_URL as a predefined queue (kombu's
transport option for queues that already exist), and boto3 finds the endpoint and the test
credentials in the environment the audit sets. The task commits its order to the business
ledger (append, fsync) under a lock, and does nothing for an order the ledger already holds: a
redelivery.

The correct configuration is the one Celery's documentation gives for work that must not be
lost: `task_acks_late` (the message is deleted after the task returns, not when the worker
takes it) with `worker_prefetch_multiplier = 1` and a visibility timeout longer than the task
(the SQS transport has no heartbeat). Each misuse is one environment variable,
ORDERS_MISUSE, so the same command line runs it:

    ack-first   Celery's default `task_acks_late = False`: the delete comes before the task
                runs (ack_before_commit; lost_work under `--nemesis kill`)
    long-task   a task longer than the queue's visibility timeout, and a prefetch of 4: the
                lease lapses under the worker (lease_expired_mid_handler)
    naive       no ledger lookup: a redelivery runs the task again (duplicate_commit)
    fails       the task raises for every order: Celery acknowledges a failed task all the
                same (`task_acks_on_failure_or_timeout`, on by default), so each message is
                deleted with its work undone (ack_before_commit, lost_work)

The ledger is created when the worker starts, before any task: an audit then knows the
consumer's effect channel even when no task ever commits.
"""

import fcntl
import os
import time

from celery import Celery

MISUSE = os.environ.get("ORDERS_MISUSE", "")
LEDGER = os.environ["SQSPROBE_LEDGER"]

open(LEDGER, "a").close()

app = Celery("orders", broker="sqs://")
app.conf.broker_transport_options = {
    "region": os.environ.get("AWS_REGION", "us-east-1"),
    "predefined_queues": {"orders": {"url": os.environ["SQSPROBE_QUEUE_URL"]}},
    "wait_time_seconds": 1,
}
app.conf.task_default_queue = "orders"
app.conf.broker_connection_retry_on_startup = True
app.conf.task_acks_late = MISUSE != "ack-first"
app.conf.worker_prefetch_multiplier = 4 if MISUSE == "long-task" else 1


@app.task(name="orders.charge")
def charge(order_id):
    """Charges one order once: the ledger, locked, says whether it is done."""
    if MISUSE == "fails":
        raise RuntimeError("the payment service is down")
    with open(LEDGER, "a+") as ledger:
        fcntl.flock(ledger, fcntl.LOCK_EX)
        ledger.seek(0)
        if MISUSE != "naive" and order_id in {line.strip() for line in ledger}:
            return "already charged"
        time.sleep({"long-task": 2.5, "ack-first": 0.5}.get(MISUSE, 0.05))  # the work
        ledger.write(order_id + "\n")
        ledger.flush()
        os.fsync(ledger.fileno())
    return "charged"
