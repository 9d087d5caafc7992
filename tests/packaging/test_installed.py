"""An installed sqsprobe, as a Python project's tests use it: `sqsprobe serve` under a pytest
fixture, driven with boto3; and the container image's entrypoint and command (read from the
Dockerfile) as a plain process listening on 0.0.0.0.

Run by scripts/test-install with SQSPROBE_BIN set to the binary under test (the one pip put
into a fresh virtual environment from the wheel). Every wait is bounded; no test sleeps to
reach a phase: it polls the port or the process it waits for, with a deadline.
"""

import json
import os
import pathlib
import re
import signal
import subprocess
import urllib.request

import boto3
import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
LIMIT = 30.0


def binary():
    path = os.environ.get("SQSPROBE_BIN")
    if not path:
        pytest.fail("SQSPROBE_BIN is not set: run scripts/test-install")
    return path


def listening_port(proc):
    """The port `sqsprobe serve` bound, read from its own `listening on http://ADDR` line:
    the server binds port 0 and says which port the kernel gave it, so no port is picked and
    then raced for, and nothing is polled."""
    for line in proc.stderr:
        found = re.search(r"listening on http://[^ ]*:(\d+)", line)
        if found:
            return int(found.group(1)), line
    pytest.fail(f"sqsprobe exited {proc.wait()} without saying where it listens")


def stop(proc):
    """SIGTERM, as `docker stop` sends: the server must stop by itself and exit 0."""
    proc.send_signal(signal.SIGTERM)
    try:
        code = proc.wait(timeout=LIMIT)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        pytest.fail("sqsprobe did not stop on SIGTERM")
    return code


def start(args, cwd):
    return subprocess.Popen(
        [binary(), *args],
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


@pytest.fixture
def sqs_endpoint(tmp_path):
    """A `sqsprobe serve` on a free loopback port, stopped after the test."""
    proc = start(["serve", "--listen", "127.0.0.1:0"], tmp_path)
    port, _ = listening_port(proc)
    yield f"http://127.0.0.1:{port}"
    assert stop(proc) == 0


def client(endpoint):
    return boto3.client(
        "sqs",
        endpoint_url=endpoint,
        region_name="us-east-1",
        aws_access_key_id="test",
        aws_secret_access_key="test",
    )


def test_serve_under_a_fixture_with_boto3(sqs_endpoint):
    sqs = client(sqs_endpoint)
    url = sqs.create_queue(QueueName="orders")["QueueUrl"]
    sqs.send_message(QueueUrl=url, MessageBody="hello")
    got = sqs.receive_message(QueueUrl=url, WaitTimeSeconds=1)["Messages"]
    assert [m["Body"] for m in got] == ["hello"]
    sqs.delete_message(QueueUrl=url, ReceiptHandle=got[0]["ReceiptHandle"])
    attrs = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["All"])["Attributes"]
    assert attrs["ApproximateNumberOfMessages"] == "0"


def dockerfile_instructions():
    """ENTRYPOINT, CMD and HEALTHCHECK of the Dockerfile, continuation lines joined."""
    text = (ROOT / "Dockerfile").read_text()
    text = re.sub(r"\\\n\s*", " ", text)
    found = {}
    for line in text.splitlines():
        word, _, rest = line.strip().partition(" ")
        if word in ("ENTRYPOINT", "CMD", "HEALTHCHECK", "USER", "EXPOSE"):
            found[word] = rest.strip()
    return found


def test_the_image_command_serves_on_all_interfaces_and_its_health_check_passes(tmp_path):
    found = dockerfile_instructions()
    entrypoint = json.loads(found["ENTRYPOINT"])
    command = json.loads(found["CMD"])
    assert entrypoint == ["sqsprobe"]
    assert command == ["serve", "--listen", "0.0.0.0:9324"]
    assert found["EXPOSE"] == "9324"
    assert found["USER"].split(":")[0] != "0" and found["USER"] != "root"
    # The image's command as a process: the same arguments, on port 0 instead of 9324 (other
    # programs on this machine may hold 9324), all interfaces still.
    args = [a.replace(":9324", ":0") for a in command]
    proc = start(args, tmp_path)
    port, listened = listening_port(proc)
    try:
        # Reached through loopback, which an all-interfaces listener also serves.
        sqs = client(f"http://127.0.0.1:{port}")
        assert sqs.list_queues().get("QueueUrls", []) == []
        # The health check's request, as its wget sends it.
        health = json.loads(found["HEALTHCHECK"].split("CMD", 1)[1])
        url = next(a for a in health if a.startswith("http://")).replace(":9324", f":{port}")
        with urllib.request.urlopen(url, timeout=5) as answer:
            assert answer.status == 200
    finally:
        code = stop(proc)
    assert code == 0
    assert f"0.0.0.0:{port}" in listened
