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


def test_serve_your_own_servicer_with_its_params() -> None:
    """`serve --service module:ATTR --server-param`: your servicer on any kind it has,
    no scenario file; a kind it lacks or a param it does not declare is one line."""
    echo = Path(__file__).resolve().parents[1] / "examples" / "echo"
    process = subprocess.Popen(
        [*GRPCBENCH, "serve", "grpcio:workers=2", "--service", "echo_service:SERVICE",
         "--server-param", "token=s3cr3t"],
        cwd=echo, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert process.stdout is not None
    line = process.stdout.readline()
    match = re.search(r"serving echo \(scenario hello\) on (127\.0\.0\.1:\d+)", line)
    try:
        assert match, line
        call = ["--target", match.group(1), "--call", "echo.Echo/Say", "-d", '{"message": "x"}',
                "-n", "20", "-c", "2"]  # fmt: skip
        refused = subprocess.run([*GRPCBENCH, "run", *call], capture_output=True, text=True,
                                 timeout=60, check=False)  # fmt: skip
        assert refused.returncode == 5 and "Unauthenticated" in refused.stderr  # the token holds
        allowed = subprocess.run(
            [*GRPCBENCH, "run", *call, "-m", "authorization=Bearer s3cr3t"],
            capture_output=True, text=True, timeout=60, check=False,
        )  # fmt: skip
        assert allowed.returncode == 0, allowed.stderr
    finally:
        process.send_signal(signal.SIGINT)
        process.communicate(timeout=30)
    for args, fragment in (
        (["grpclib", "--service", "tests.support.services:REJECTING"], "no servicer for server"),
        (["grpcio", "--service", "echo_service:SERVICE", "--server-param", "nope=1"],
         "unknown server param 'nope'"),
    ):  # fmt: skip
        bad = subprocess.run([*GRPCBENCH, "serve", *args], cwd=echo.parents[1] if "tests" in
                             args[2] else echo, capture_output=True, text=True, timeout=60,
                             check=False)  # fmt: skip
        assert bad.returncode == 2 and fragment in bad.stderr, bad.stderr
