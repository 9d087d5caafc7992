"""The work the example handlers do, shared: each record's business key, committed to the
audit's ledger (SQSPROBE_LEDGER: append, flush, fsync, as a database commit), and which
records fail.

A record fails on its first receive when its `seq` is 2 modulo 4 (a transient failure: the
retry succeeds), and on every receive when its `seq` is in LAMBDA_POISON_SEQS (a poison
record), so that every handler meets a failed batch under the same, repeatable conditions.
"""

import json
import os


class RecordFailed(Exception):
    """The work of one record failed."""


def key(record):
    """The record's business key (a dict record, as the event holds it, or Powertools')."""
    body = record["body"] if isinstance(record, dict) else record.body
    return json.loads(body)["business_key"]


def _seq(record):
    body = record["body"] if isinstance(record, dict) else record.body
    return int(json.loads(body)["seq"])


def _receive_count(record):
    attributes = record["attributes"] if isinstance(record, dict) else record.raw_event["attributes"]
    return int(attributes.get("ApproximateReceiveCount", "1"))


def fails(record):
    """Whether this delivery of the record fails."""
    poison = {int(s) for s in os.environ.get("LAMBDA_POISON_SEQS", "").split(",") if s}
    if _seq(record) in poison:
        return True
    return _seq(record) % 4 == 2 and _receive_count(record) == 1


def committed(k):
    """Whether the ledger already holds the key (a redelivery to reconcile)."""
    try:
        with open(os.environ["SQSPROBE_LEDGER"]) as f:
            return k in {line.strip() for line in f}
    except FileNotFoundError:
        return False


def commit(k):
    """Commits the key: one durable line in the ledger."""
    with open(os.environ["SQSPROBE_LEDGER"], "a") as f:
        f.write(k + "\n")
        f.flush()
        os.fsync(f.fileno())


def work(record):
    """The record's work, once: raises RecordFailed when this delivery fails."""
    k = key(record)
    if committed(k):
        return
    if fails(record):
        raise RecordFailed(k)
    commit(k)
