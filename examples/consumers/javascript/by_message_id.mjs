// The faulty adapter that caches receipt handles by MessageId: the first attempt fails (no
// delete, its lease lapses), the retry deletes with the handle cached on the first attempt,
// superseded by the redelivery. `sqsprobe audit` reports stale_handle_ack (REPAIR).
import { businessKey, commit, committed, receive, remove } from "./adapter.mjs";

const handles = new Map(); // MessageId -> the first receipt handle seen: the bug
const done = committed();
for (;;) {
  for (const message of await receive()) {
    if (!handles.has(message.MessageId)) {
      handles.set(message.MessageId, message.ReceiptHandle);
      continue;
    }
    const key = businessKey(message);
    if (!done.has(key)) {
      commit(key);
      done.add(key);
    }
    await remove(handles.get(message.MessageId));
  }
}
