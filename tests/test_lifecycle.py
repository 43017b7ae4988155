"""No child process outlives a run: finished, failed, interrupted, or killed."""

from __future__ import annotations

import json
import signal
import subprocess
import time
from pathlib import Path

import psutil
import pytest

from tests.conftest import GRPCBENCH, write_scenario
from tests.support.processes import assert_all_gone as _assert_all_gone

pytestmark = pytest.mark.integration


def _start(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [*GRPCBENCH, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


def _watch_descendants(process: subprocess.Popen[str], until, timeout: float = 60):  # type: ignore[no-untyped-def]
    """Poll the process tree until ``until()`` is true; return every pid seen."""
    seen: set[int] = set()
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and process.poll() is None:
        try:
            seen.update(p.pid for p in psutil.Process(process.pid).children(recursive=True))
        except psutil.NoSuchProcess:
            break
        if until():
            return seen
        time.sleep(0.05)
    assert until(), "condition not reached"
    return seen


def _levels_written(path: Path) -> int:
    try:
        return len(json.loads(path.read_text())["levels"])
    except (OSError, ValueError, KeyError):
        return 0


def test_finished_run_leaves_no_process(tmp_path: Path) -> None:
    process = _start("run", "-s", "grpclib", "-c", "2,4", "-n", "300")
    seen = _watch_descendants(process, lambda: process.poll() is not None)
    assert process.wait(60) == 0
    assert seen, "the run should have started a server and generators"
    _assert_all_gone(seen)


def test_failed_run_leaves_no_process(tmp_path: Path) -> None:
    scenario = write_scenario(tmp_path, "tests.support.services:CRASHING")
    process = _start("run", "--scenario", str(scenario))
    seen = _watch_descendants(process, lambda: process.poll() is not None)
    assert process.wait(60) == 3
    _assert_all_gone(seen)


def test_ctrl_c_stops_children_and_keeps_partial_results(tmp_path: Path) -> None:
    out = tmp_path / "r.json"
    process = _start(
        "run", "-s", "grpcio:workers=2 grpclib", "-c", "2,3,4,5,6", "-n", "3000",
        "--output", str(out),
    )  # fmt: skip
    seen = _watch_descendants(process, lambda: _levels_written(out) >= 1)
    process.send_signal(signal.SIGINT)
    stdout, stderr = process.communicate(timeout=30)
    assert process.returncode == 130, stderr
    assert "Traceback" not in stderr
    assert "interrupted" in stderr
    data = json.loads(out.read_text())
    assert data["status"] == "interrupted"
    assert len(data["levels"]) >= 1
    assert "hello - concurrency 2" in stdout  # the partial tables are printed
    _assert_all_gone(seen)


def test_killed_runner_takes_its_children_along(tmp_path: Path) -> None:
    """SIGKILL gives the runner no chance to clean up: PR_SET_PDEATHSIG must."""
    out = tmp_path / "r.json"
    process = _start("run", "-s", "grpclib", "-c", "2,3,4", "-n", "3000", "--output", str(out))
    seen = _watch_descendants(process, lambda: _levels_written(out) >= 1)
    process.kill()
    process.communicate(timeout=30)
    _assert_all_gone(seen)
