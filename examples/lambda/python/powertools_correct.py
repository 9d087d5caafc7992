"""Correct: AWS Lambda Powertools' batch processor reports each failed record's messageId
(run with ReportBatchItemFailures), and the work is reconciled through the ledger, so a
redelivered record is not done twice.

    sqsprobe audit --lambda --report-batch-item-failures -- python -m awslambdaric powertools_correct.handler
"""

from aws_lambda_powertools.utilities.batch import BatchProcessor, EventType, process_partial_response

import _work

processor = BatchProcessor(event_type=EventType.SQS)


def record_handler(record):
    _work.work(record)


def handler(event, context):
    return process_partial_response(event=event, record_handler=record_handler, processor=processor, context=context)
