"""Correct on a FIFO queue: Powertools' SqsFifoPartialProcessor stops at the first failure and
reports it and every record after it, so a message group keeps its order.

    sqsprobe audit --lambda --fifo --report-batch-item-failures -- python -m awslambdaric powertools_fifo.handler
"""

from aws_lambda_powertools.utilities.batch import SqsFifoPartialProcessor, process_partial_response

import _work

processor = SqsFifoPartialProcessor()


def record_handler(record):
    _work.work(record)


def handler(event, context):
    return process_partial_response(event=event, record_handler=record_handler, processor=processor, context=context)
