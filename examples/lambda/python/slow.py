"""Slow on a record's first receive: sleeps LAMBDA_SLEEP seconds (default 1) before the work,
so an invocation outlives a shorter function timeout: its whole batch returns, the mapping ends
the execution environment (as Lambda resets it), and the retry, on a fresh runtime, does the
work.

    sqsprobe audit --lambda --function-timeout 500ms -- python -m awslambdaric slow.handler
"""

import os
import time

import _work


def handler(event, context):
    first = any(r["attributes"].get("ApproximateReceiveCount") == "1" for r in event["Records"])
    if first:
        time.sleep(float(os.environ.get("LAMBDA_SLEEP", "1")))
    for record in event["Records"]:
        k = _work.key(record)
        if not _work.committed(k):
            _work.commit(k)
    return None
