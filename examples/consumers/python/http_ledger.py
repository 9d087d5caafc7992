"""The playbook's adapter with its ledger over HTTP: a consumer in a container or on another
host cannot append to the audit's ledger file, so it POSTs each business key it commits to
`SQSPROBE_LEDGER_URL` (the emulator's own port), and the emulator hears it before answering,
ordered exactly as the file's lines are (docs/audit.md#effect-channels).

`--delete-first` acknowledges before the commit: at-most-once, and the audit says so.
"""

import os
import sys
import urllib.request

import _adapter as q

LEDGER_URL = os.environ["SQSPROBE_LEDGER_URL"]
delete_first = "--delete-first" in sys.argv


def commit(key):
    request = urllib.request.Request(LEDGER_URL, data=key.encode(), method="POST")
    with urllib.request.urlopen(request, timeout=10) as answer:
        assert answer.status == 204, answer.status


done = set()
while True:
    for message in q.receive():
        key = q.business_key(message)
        if delete_first:
            q.delete(message["ReceiptHandle"])
        if key not in done:
            commit(key)
            done.add(key)
        if not delete_first:
            q.delete(message["ReceiptHandle"])
