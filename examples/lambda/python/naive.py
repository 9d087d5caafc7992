"""Faulty: raises on the first record that fails, and does not look in the ledger. The whole
batch returns to the queue, and the records it had already done are done again.

    sqsprobe audit --lambda -- python -m awslambdaric naive.handler   # batch_failure_redo
"""

import _work


def handler(event, context):
    for record in event["Records"]:
        if _work.fails(record):
            raise _work.RecordFailed(_work.key(record))
        _work.commit(_work.key(record))
    return None
