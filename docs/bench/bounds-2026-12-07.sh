#!/usr/bin/env bash
# How close the throughput goals can come on this machine: oha, pinned as bench-crosscheck
# pins it, drives in each round the no-op reference, the references answering as many bytes as
# the operations do, this build's `serve` (SendMessageBatch ×10, ReceiveMessage ×10 from a deep
# queue and from an empty one) and a build of the same code with bounds-2026-12-07.patch applied,
# started with BOUND_NOENTRY=1: its SendMessageBatch and DeleteMessageBatch parse the request
# and its entries, take the queue's lock and answer every entry as done, validating, digesting,
# storing and removing nothing. Whatever a batch's entries cost, a batch cannot beat that.
# The same patched build started with BOUND_NOSTORE=1 instead does all of a SendMessageBatch
# but counting and storing its messages (each entry validated, digested, its message built and
# dropped): what the store's part of a send costs.
# Each rate is printed with its fraction of the same round's no-op reference, which is measured
# first in every round. serve keeps what its SendMessageBatch rounds send (about 4 million
# messages, ~0.7 GB, a round on a machine like the one of docs/performance.md): mind the
# memory before asking for many rounds.
#
# usage: docs/bench/bounds-2026-12-07.sh BUILD BOUND_BUILD [ROUNDS]
#   BUILD: a release build of the code the patch applies to; BOUND_BUILD: the patched one.
# Needs oha at .tools/oha/bin/oha (scripts/bench-crosscheck installs it) and two CPUs or more.
set -euo pipefail
build=$(realpath "$1"); bound=$(realpath "$2"); rounds=${3:-5}
cd "$(dirname "$0")/../.."
oha=$PWD/.tools/oha/bin/oha
duration=${DURATION:-4}
tmp=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT
# `start NAME COMMAND...`: pinned to the first CPU, address (its "http://ADDR" line) to $tmp/NAME.
start() {
  local name=$1; shift
  taskset -c 0 "$@" 2>"$tmp/$name.log" >/dev/null &
  pids+=($!)
  for _ in $(seq 1 300); do
    if addr=$(grep -o 'http://[0-9.:]*' "$tmp/$name.log" 2>/dev/null | head -1) && [ -n "$addr" ]; then
      echo "$addr" >"$tmp/$name"; return
    fi
    sleep 0.1
  done
  echo "bounds: $name did not start: $(cat "$tmp/$name.log")" >&2; exit 1
}
auth='AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20260101/us-east-1/sqs/aws4_request, SignedHeaders=content-type;host;x-amz-date;x-amz-target, Signature=0000000000000000000000000000000000000000000000000000000000000000'
ctype='application/x-amz-json-1.0'
call() { curl -sS -X POST "$1/" -H "Authorization: $auth" -H "Content-Type: $ctype" -H "X-Amz-Target: AmazonSQS.$2" -d "$3"; }
queue() { call "$1" CreateQueue "{\"QueueName\":\"$2\"}" | python3 -c 'import json,sys; print(json.load(sys.stdin)["QueueUrl"])'; }
# `rate URL OPERATION BODY`: requests a second over the run; exits when any answer was not a
# 200 (oha counts error answers in its rate too).
rate() {
  taskset -c 1 "$oha" --no-tui -z "${duration}s" -c 16 -m POST -H "Authorization: $auth" -H "Content-Type: $ctype" \
    -H "X-Amz-Target: AmazonSQS.$2" -d "$3" "$1/" >"$tmp/oha.out"
  if grep -E '^ *\[[0-9]+\] [0-9]+ responses' "$tmp/oha.out" | grep -qv '\[200\]'; then
    echo "bounds: $2 at $1 did not always answer 200:" >&2
    cat "$tmp/oha.out" >&2
    exit 1
  fi
  awk '/Requests\/sec/ { printf "%.0f", $2 }' "$tmp/oha.out"
}
start serve "$build" serve --listen 127.0.0.1:0 --max-messages 100000000 --max-stored-bytes 64GiB
BOUND_NOENTRY=1 start bound "$bound" serve --listen 127.0.0.1:0
BOUND_NOSTORE=1 start nostore "$bound" serve --listen 127.0.0.1:0
start reference "$build" bench --serve-reference 127.0.0.1:0
serve=$(cat "$tmp/serve"); bound_url=$(cat "$tmp/bound")
entries=$(for i in 0 1 2 3 4 5 6 7 8 9; do printf '{"Id":"m%d","MessageBody":"hello world"}' "$i"; done | sed 's/}{/},{/g')
batch="{\"QueueUrl\":\"$(queue "$serve" bounds)\",\"Entries\":[$entries]}"
bound_batch="{\"QueueUrl\":\"$(queue "$bound_url" bounds)\",\"Entries\":[$entries]}"
nostore_url=$(cat "$tmp/nostore")
nostore_batch="{\"QueueUrl\":\"$(queue "$nostore_url" bounds)\",\"Entries\":[$entries]}"
deep=$(queue "$serve" bounds-deep); empty=$(queue "$serve" bounds-empty)
taskset -c 1 "$oha" --no-tui -n 10000 -c 16 -m POST -H "Authorization: $auth" -H "Content-Type: $ctype" \
  -H "X-Amz-Target: AmazonSQS.SendMessageBatch" -d "{\"QueueUrl\":\"$deep\",\"Entries\":[$entries]}" "$serve/" >/dev/null
receive="{\"QueueUrl\":\"$deep\",\"MaxNumberOfMessages\":10,\"VisibilityTimeout\":0}"
receive_empty="{\"QueueUrl\":\"$empty\",\"MaxNumberOfMessages\":10,\"VisibilityTimeout\":0}"
# Real handles, so that the bound's request is the size of a real one (it reads none of them).
handles=$(call "$serve" ReceiveMessage "$receive")
delete_batch=$(python3 -c 'import json,sys
m = json.loads(sys.argv[1])["Messages"]
print(json.dumps({"QueueUrl": sys.argv[2], "Entries": [{"Id": "m%d" % i, "ReceiptHandle": x["ReceiptHandle"]} for i, x in enumerate(m)]}, separators=(",", ":")))' "$handles" "$(queue "$bound_url" bounds-delete)")
receive_bytes=$(call "$serve" ReceiveMessage "$receive" | wc -c)
batch_bytes=$(call "$serve" SendMessageBatch "$batch" | wc -c)
delete_bytes=$(call "$bound_url" DeleteMessageBatch "$delete_batch" | wc -c)
start reference_receive "$build" bench --serve-reference 127.0.0.1:0 --reference-answer-bytes "$receive_bytes"
start reference_batch "$build" bench --serve-reference 127.0.0.1:0 --reference-answer-bytes "$batch_bytes"
start reference_delete "$build" bench --serve-reference 127.0.0.1:0 --reference-answer-bytes "$delete_bytes"
echo "answers: ReceiveMessage $receive_bytes bytes, SendMessageBatch $batch_bytes, DeleteMessageBatch $delete_bytes; oha ${duration} s a rate, 16 connections"
echo
echo "| round | no-op reference | SendMessageBatch: sized reference | serve | storing nothing | bound | DeleteMessageBatch: sized reference | bound | ReceiveMessage ×10: sized reference | serve | serve, empty queue |"
echo "|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|"
# The rates of a round, in turn; every other round in the reverse order, so that a drift of the
# machine's speed within a round does not favour one column.
targets=(
  "$(cat "$tmp/reference_batch")|SendMessageBatch|$batch"
  "$serve|SendMessageBatch|$batch"
  "$nostore_url|SendMessageBatch|$nostore_batch"
  "$bound_url|SendMessageBatch|$bound_batch"
  "$(cat "$tmp/reference_delete")|DeleteMessageBatch|$delete_batch"
  "$bound_url|DeleteMessageBatch|$delete_batch"
  "$(cat "$tmp/reference_receive")|ReceiveMessage|$receive"
  "$serve|ReceiveMessage|$receive"
  "$serve|ReceiveMessage|$receive_empty"
)
for round in $(seq 1 "$rounds"); do
  ref=$(rate "$(cat "$tmp/reference")" SqsprobeNoOperation '{}')
  order=$(seq 0 $((${#targets[@]} - 1)))
  if [ $((round % 2)) = 0 ]; then order=$(echo "$order" | tac); fi
  rates=()
  for i in $order; do
    IFS='|' read -r url operation body <<<"${targets[$i]}"
    rates[i]=$(rate "$url" "$operation" "$body")
  done
  row="| $round | $ref |"
  for r in "${rates[@]}"; do
    row="$row $(awk -v x="$r" -v a="$ref" 'BEGIN { printf "%d (%.2f)", x, x / a }') |"
  done
  echo "$row"
  echo "$row" >>"$tmp/rows"
done
echo
echo "Each column's fraction of its round's no-op reference, median (lowest–highest):"
python3 - "$tmp/rows" <<'PY'
import statistics, sys
cells = [[c.strip() for c in line.strip().strip("|").split("|")][1:] for line in open(sys.argv[1])]
# Each fraction from the rates themselves (the rows print them rounded).
rows = [[int(c.split()[0]) / int(r[0]) for c in r[1:]] for r in cells]
print("| all | – | " + " | ".join(
    "%.2f (%.2f–%.2f)" % (statistics.median(c), min(c), max(c))
    for c in ([r[i] for r in rows] for i in range(len(rows[0])))) + " |")
PY
