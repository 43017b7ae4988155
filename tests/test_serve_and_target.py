"""`grpcbench serve` for other clients, and `run --target` against such a server."""

from __future__ import annotations

import json
import re
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha.proto_reflection_descriptor_database import (
    ProtoReflectionDescriptorDatabase,
)

from tests.conftest import GRPCBENCH

pytestmark = pytest.mark.integration


@pytest.fixture
def served() -> Iterator[tuple[str, int]]:
    """A `grpcbench serve grpclib+uvloop` process: yields (address, server pid)."""
    process = subprocess.Popen(
        [*GRPCBENCH, "serve", "grpclib+uvloop"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert process.stdout is not None
    line = process.stdout.readline()
    match = re.search(r"on (127\.0\.0\.1:\d+) \(pid (\d+)\)", line)
    assert match, line + process.stderr.read() if process.stderr else line
    try:
        yield match.group(1), int(match.group(2))
    finally:
        process.send_signal(signal.SIGINT)
        _, stderr = process.communicate(timeout=30)
        assert process.returncode == 0, stderr
        assert "Traceback" not in stderr


def test_serve_answers_health_and_reflection(served: tuple[str, int]) -> None:
    address, _ = served
    with grpc.insecure_channel(address) as channel:
        reply = health_pb2_grpc.HealthStub(channel).Check(
            health_pb2.HealthCheckRequest(), timeout=5
        )
        assert reply.status == health_pb2.HealthCheckResponse.SERVING
        services = ProtoReflectionDescriptorDatabase(channel).get_services()
        assert "helloworld.Greeter" in services


def test_run_against_a_target_with_and_without_its_pid(
    served: tuple[str, int], tmp_path: Path
) -> None:
    address, pid = served
    out = tmp_path / "r.json"
    base = [*GRPCBENCH, "run", "--target", address, "-c", "2", "-n", "100", "--warmup", "10"]
    with_pid = subprocess.run(
        [*base, "--target-pid", str(pid), "--output", str(out)],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert with_pid.returncode == 0, with_pid.stderr
    level = json.loads(out.read_text())["levels"][0]
    assert level["server"] == address and level["load"]["statuses"] == {"OK": 100}
    assert level["server_usage"]["cpu_s"] >= 0 and level["server_usage"]["peak_rss_bytes"] > 0

    without_pid = subprocess.run(
        [*base, "--output", str(out)], capture_output=True, text=True, timeout=120, check=False
    )
    assert without_pid.returncode == 0, without_pid.stderr
    assert json.loads(out.read_text())["levels"][0]["server_usage"] is None
    assert re.search(r"Server CPU\s+│\s+-", without_pid.stdout)
