"""Faulty on a FIFO queue: reports only the failed record and goes on with the rest of its
message group, so the later records of the group are done (and deleted) before it.

    sqsprobe audit --lambda --fifo --report-batch-item-failures -- python -m awslambdaric fifo_only_failed.handler
"""

import _work


def handler(event, context):
    failures = []
    for record in event["Records"]:
        try:
            _work.work(record)
        except _work.RecordFailed:
            failures.append({"itemIdentifier": record["messageId"]})
    return {"batchItemFailures": failures}
