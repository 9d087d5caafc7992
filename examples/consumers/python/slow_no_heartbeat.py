"""A handler slower than the lease, without a heartbeat (ChangeMessageVisibility): by the time
it deletes, its lease has lapsed and the message is visible again. `sqsprobe audit` reports
lease_expired_mid_handler (HOLD). Run it with a lease shorter than HANDLER_SECONDS.
"""

import time

import _adapter as q

HANDLER_SECONDS = 1.5

done = q.committed()
while True:
    for message in q.receive(max_messages=1):
        key = q.business_key(message)
        time.sleep(HANDLER_SECONDS)  # the work, longer than the lease
        if key not in done:
            q.commit(key)
            done.add(key)
        q.delete(message["ReceiptHandle"])
