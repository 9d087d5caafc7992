"""Deletes first, then does the work: a crash between the two loses the work (at-most-once).
`sqsprobe audit` reports ack_before_commit (REPAIR) for each message.
"""

import _adapter as q

while True:
    for message in q.receive():
        q.delete(message["ReceiptHandle"])
        q.commit(q.business_key(message))
