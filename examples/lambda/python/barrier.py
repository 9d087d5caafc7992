"""For the test of --concurrency: each invocation waits, at most 20 s, until LAMBDA_BARRIER
invocations (default 3) have started (a file each in LAMBDA_BARRIER_DIR), and fails if they
have not — which they can only do side by side, each in its own execution environment. Then it
does its records' work, reconciled through the ledger.
"""

import os
import time

import _work


def handler(event, context):
    folder = os.environ["LAMBDA_BARRIER_DIR"]
    want = int(os.environ.get("LAMBDA_BARRIER", "3"))
    open(os.path.join(folder, context.aws_request_id), "w").close()
    deadline = time.monotonic() + 20
    while len(os.listdir(folder)) < want:
        if time.monotonic() > deadline:
            raise TimeoutError(f"only {len(os.listdir(folder))} of {want} invocations started")
        time.sleep(0.02)
    for record in event["Records"]:
        k = _work.key(record)
        if not _work.committed(k):
            _work.commit(k)
    return None
