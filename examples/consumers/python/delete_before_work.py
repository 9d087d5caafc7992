"""Deletes first, then does the work: a crash between the two loses the work (at-most-once).
`sqsprobe audit` reports ack_before_commit (REPAIR) for each message, and under
`--nemesis kill` lost_work (REPAIR) for the message whose delete the kill struck, however fast
or slow the work is (`--work-seconds S` makes it slower).
"""

import sys
import time

import _adapter as q

WORK_SECONDS = float(sys.argv[sys.argv.index("--work-seconds") + 1]) if "--work-seconds" in sys.argv else 0.0

while True:
    for message in q.receive():
        q.delete(message["ReceiptHandle"])
        time.sleep(WORK_SECONDS)  # the work
        q.commit(q.business_key(message))
