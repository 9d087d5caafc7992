"""Faulty: catches a record's failure, logs it and reports success: the mapping deletes a
record whose work was never committed.

    sqsprobe audit --lambda -- python -m awslambdaric swallow.handler   # swallowed_failure
"""

import _work


def handler(event, context):
    for record in event["Records"]:
        try:
            _work.work(record)
        except _work.RecordFailed as e:
            print(f"failed, ignored: {e}")
    return None
