"""Does the work for every delivery, never asking the ledger whether it was done: a redelivery
(at-least-once delivery, `--chaos duplicate=1` or `redeliver-after-delete=1`) does it twice.
`sqsprobe audit` reports duplicate_commit (RECONCILE).
"""

import _adapter as q

while True:
    for message in q.receive():
        q.commit(q.business_key(message))
        q.delete(message["ReceiptHandle"])
