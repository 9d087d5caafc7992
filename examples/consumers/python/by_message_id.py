"""The playbook's faulty adapter: it caches receipt handles by MessageId. Its handler fails
the first time it sees a message (a transient error: no delete, so the lease runs out and SQS
delivers the message again); the retry does the work and deletes, but with the handle it
cached on the first attempt — superseded by the redelivery. `sqsprobe audit` reports
stale_handle_ack (REPAIR) for each message.
"""

import _adapter as q

handles = {}  # MessageId -> the first receipt handle seen: the bug
done = q.committed()
while True:
    for message in q.receive():
        mid = message["MessageId"]
        if mid not in handles:
            handles[mid] = message["ReceiptHandle"]
            continue  # the first attempt fails; the lease lapses
        key = q.business_key(message)
        if key not in done:
            q.commit(key)
            done.add(key)
        q.delete(handles[mid])  # the cached, stale handle
