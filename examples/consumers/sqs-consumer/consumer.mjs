// bbc/sqs-consumer (npm, pinned in package-lock.json) used as its README shows, under
// `sqsprobe audit` (docs/audit.md#your-framework):
//
//   scripts/consumer-libs
//   sqsprobe audit --plan examples/consumers/sqs-consumer/plan.yaml \
//     -- node examples/consumers/sqs-consumer/consumer.mjs
//
// The handler does the order's work and commits it to the business ledger (append, fsync)
// before it resolves: sqs-consumer deletes a message once its handler has resolved with it.
// A key the ledger already holds is a redelivery: acknowledged without doing the work again.
// The heartbeat (`heartbeatInterval` under `visibilityTimeout`) keeps the lease while the
// handler runs.
//
// The misuses the README warns of, one flag each:
//   --no-await      the work is started but not awaited: the handler resolves, the message is
//                   deleted, and the work commits later (ack_before_commit; lost_work under
//                   `--nemesis kill`)
//   --no-heartbeat  a handler longer than the queue's lease and no heartbeat
//                   (lease_expired_mid_handler)
//   --naive         no ledger lookup: a redelivery is worked again (duplicate_commit)
import { closeSync, existsSync, fsyncSync, openSync, readFileSync, writeSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";
import { Consumer } from "sqs-consumer";

const flags = new Set(process.argv.slice(2));
const LEDGER = process.env.SQSPROBE_LEDGER;

// The ledger: the business keys whose work is committed, read back at start (a restart after a
// crash must know what is done).
const done = new Set(
  LEDGER && existsSync(LEDGER)
    ? readFileSync(LEDGER, "utf8").split("\n").map((l) => l.trim()).filter(Boolean)
    : [],
);

// Created at start: the audit sees the channel before any commit.
closeSync(openSync(LEDGER, "a"));

function commit(key) {
  const fd = openSync(LEDGER, "a");
  try {
    writeSync(fd, `${key}\n`);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  done.add(key);
}

// The order's work: some time, then its commit.
async function charge(key, ms) {
  await sleep(ms);
  commit(key);
}

const app = Consumer.create({
  queueUrl: process.env.SQSPROBE_QUEUE_URL,
  waitTimeSeconds: 1,
  ...(flags.has("--no-heartbeat") ? {} : { visibilityTimeout: 2, heartbeatInterval: 1 }),
  handleMessage: async (message) => {
    const key = JSON.parse(message.Body).order.id;
    if (done.has(key) && !flags.has("--naive")) {
      return message; // already committed: a redelivery, acknowledged
    }
    if (flags.has("--no-await")) {
      charge(key, 200); // not awaited: the delete comes first
    } else {
      await charge(key, flags.has("--no-heartbeat") ? 3500 : 100);
    }
    return message;
  },
});

app.on("error", (err) => {
  console.error(err.message);
});
app.on("processing_error", (err) => {
  console.error(err.message);
});

app.start();
