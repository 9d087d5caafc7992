"""Faulty: reports each failed record by its receipt handle instead of its messageId. Lambda
treats an itemIdentifier that is no messageId of the batch as a complete failure, so the whole
batch returns, not just the failed record.

    sqsprobe audit --lambda --report-batch-item-failures -- python -m awslambdaric receipt_handle_ids.handler
"""

import _work


def handler(event, context):
    failures = []
    for record in event["Records"]:
        try:
            _work.work(record)
        except _work.RecordFailed:
            failures.append({"itemIdentifier": record["receiptHandle"]})
    return {"batchItemFailures": failures}
