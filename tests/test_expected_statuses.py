"""An error path benchmarked on purpose: --expect-status, --no-preflight, errors by message."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import GRPCBENCH, module_server

pytestmark = pytest.mark.integration

REJECTING = "tests.support.services:REJECTING"
QUICK = ["-c", "2", "-n", "60", "--warmup", "0"]


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*GRPCBENCH, "run", *args], capture_output=True, text=True, timeout=120, check=False
    )


@pytest.fixture(scope="module")
def rejecting() -> Iterator[str]:
    """A grpc.aio server whose every call ends Unavailable, "rejected by the test service"."""
    with module_server("grpcio-aio", REJECTING) as address:
        yield address


def test_an_all_unavailable_endpoint_fails_without_and_is_measured_with_expect_status(
    rejecting: str, tmp_path: Path
) -> None:
    call = ["--call", "helloworld.Greeter/SayHello", "-d", '{"name": "x"}']
    refused = run("--target", rejecting, *call, *QUICK)
    assert refused.returncode == 5, refused.stderr  # the pre-flight call says why, at once
    assert "Unavailable: rejected by the test service" in refused.stderr

    measured = run("--target", rejecting, *call, *QUICK, "--expect-status", "UNAVAILABLE",
                   "--output", str(tmp_path / "r.json"))  # fmt: skip
    assert measured.returncode == 0, measured.stderr
    assert "Unavailable (expected)" in measured.stdout
    (level,) = json.loads((tmp_path / "r.json").read_text())["levels"]
    assert level["load"]["statuses"] == {"Unavailable": 60}
    assert level["load"]["errors"] == {"Unavailable: rejected by the test service": 60}
    assert level["expected_statuses"] == ["Unavailable"]

    # Without the pre-flight call, the level runs and fails as a level (exit 4), with
    # the message counted under the table.
    unchecked = run("--target", rejecting, *call, *QUICK, "--no-preflight")
    assert unchecked.returncode == 4, unchecked.stderr
    assert "most common: Unavailable: rejected by the test service (60)" in unchecked.stdout
    assert "every call failed on" in unchecked.stdout  # the summary says so

    # A server grpcbench starts: the same rules.
    started = run("--service", REJECTING, "-s", "grpcio-aio", *QUICK, "--expect-status", "14")
    assert started.returncode == 0, started.stderr


def test_an_expected_error_that_does_not_come_is_a_preflight_failure(rejecting: str) -> None:
    ok_server = run(
        "--service", "hello", "-s", "grpclib", *QUICK, "--expect-status", "NotFound",
        "--call", "helloworld.Greeter/SayHello",
    )  # fmt: skip
    assert ok_server.returncode == 5, ok_server.stderr
    assert "ended OK, not NotFound (--expect-status" in ok_server.stderr
