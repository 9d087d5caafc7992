"""What every example consumer shares: the SQS client (boto3 reads AWS_ENDPOINT_URL and the
test credentials `sqsprobe audit` sets), the queue, and the business ledger.

The ledger is the consumer's durable record of the work it has done, one business key a line.
A commit is written and flushed (and fsynced) before anything else happens, as a database
commit would be: `sqsprobe audit` reads it at every acknowledgement, before answering it.
"""

import json
import os

import boto3

QUEUE_URL = os.environ["SQSPROBE_QUEUE_URL"]
LEDGER = os.environ.get("SQSPROBE_LEDGER")
sqs = boto3.client("sqs")


def receive(max_messages=10, wait=1):
    """One long poll: the messages it returned (possibly none)."""
    answer = sqs.receive_message(
        QueueUrl=QUEUE_URL, MaxNumberOfMessages=max_messages, WaitTimeSeconds=wait
    )
    return answer.get("Messages", [])


def business_key(message):
    return json.loads(message["Body"])["business_key"]


def committed():
    """The business keys the ledger holds."""
    if not LEDGER or not os.path.exists(LEDGER):
        return set()
    with open(LEDGER) as f:
        return {line.strip() for line in f if line.strip()}


def commit(key):
    """Appends `key` to the ledger, durably."""
    with open(LEDGER, "a") as f:
        f.write(key + "\n")
        f.flush()
        os.fsync(f.fileno())


def delete(receipt_handle):
    sqs.delete_message(QueueUrl=QUEUE_URL, ReceiptHandle=receipt_handle)
