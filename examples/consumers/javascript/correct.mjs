// The playbook's adapter: delete with this attempt's own handle, after the work is committed;
// a redelivery the ledger already holds is acknowledged without doing the work again.
import { businessKey, commit, committed, receive, remove } from "./adapter.mjs";

const done = committed();
for (;;) {
  for (const message of await receive()) {
    const key = businessKey(message);
    if (!done.has(key)) {
      commit(key);
      done.add(key);
    }
    await remove(message.ReceiptHandle);
  }
}
