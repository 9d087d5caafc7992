// What both JavaScript consumers share: the SQS client (the SDK reads AWS_ENDPOINT_URL, the
// region and the test keys `sqsprobe audit` sets), the queue, and the business ledger, each
// commit appended and fsynced before anything else happens.
import { appendFileSync, existsSync, fsyncSync, openSync, closeSync, readFileSync } from "node:fs";
import { DeleteMessageCommand, ReceiveMessageCommand, SQSClient } from "@aws-sdk/client-sqs";

export const queueUrl = process.env.SQSPROBE_QUEUE_URL;
const ledger = process.env.SQSPROBE_LEDGER;
const sqs = new SQSClient({});

export async function receive() {
  const answer = await sqs.send(
    new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 1 }),
  );
  return answer.Messages ?? [];
}

export function businessKey(message) {
  return JSON.parse(message.Body).business_key;
}

export function committed() {
  if (!ledger || !existsSync(ledger)) return new Set();
  return new Set(readFileSync(ledger, "utf8").split("\n").filter((l) => l.trim() !== ""));
}

export function commit(key) {
  appendFileSync(ledger, key + "\n");
  const fd = openSync(ledger, "r+");
  fsyncSync(fd);
  closeSync(fd);
}

export async function remove(receiptHandle) {
  await sqs.send(new DeleteMessageCommand({ QueueUrl: queueUrl, ReceiptHandle: receiptHandle }));
}
