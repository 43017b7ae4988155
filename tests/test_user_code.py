"""User code that blocks, forks or keeps what it allocates ends its level in one line
that names it, and leaves no process behind (issue 55).

The watchdog's own logic is tested here in this process (a loop held, memory past a
small limit); the integration tests run flows of the echo example that misbehave, in
the pre-flight call (grpcbench's own process) and in a level (a generator)."""

from __future__ import annotations

import asyncio
import mmap
import os
import shutil
import subprocess
import time
from pathlib import Path

import psutil
import pytest

from grpcbench.load.loop_watchdog import LoopWatchdog, user_frame
from tests.conftest import GRPCBENCH, REPO

FLOWS = """
import os, time

async def block(client):
    await client.unary("echo.Echo/Say", {"message": "x"})
    time.sleep(3600)

async def fork(client):
    await client.unary("echo.Echo/Say", {"message": "x"})
    if os.fork() == 0:
        time.sleep(3600)
        os._exit(0)

async def daemon(client):  # a daemon's double fork: its own session, its parent gone
    await client.unary("echo.Echo/Say", {"message": "x"})
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            time.sleep(3600)
        os._exit(0)
"""


def _held(blocked_s: float, memory_bytes: int, step: object) -> str:
    """Run ``step`` on a loop watched with these limits; what the watchdog reported."""
    said: list[str] = []

    async def main() -> None:
        dog = LoopWatchdog(asyncio.get_running_loop(), said.append, blocked_s, memory_bytes,
                           end=lambda: None)  # fmt: skip
        dog.start()
        await asyncio.sleep(0.3)
        step()  # type: ignore[operator]
        await asyncio.sleep(0.6)
        dog.stop()

    asyncio.run(main())
    return " ".join(said)


def test_a_loop_held_by_user_code_is_named_by_its_frame() -> None:
    def users_sleep() -> None:
        time.sleep(1.2)

    said = _held(0.5, 1 << 62, users_sleep)
    assert "test_user_code.py" in said and "in users_sleep" in said
    assert "held the generator's event loop" in said


def test_memory_past_the_limit_is_said_once() -> None:
    said = _held(60.0, 1, lambda: None)  # any process is past one byte
    assert said.count("the generator's memory passed") == 1


def test_the_user_frame_skips_grpcbench_and_the_standard_library() -> None:
    import sys

    assert user_frame(sys._getframe()).startswith("test_user_code.py:")
    assert user_frame(None) == "code that is not grpcbench's"


def _run(tmp_path: Path, flow: str, *more: str) -> subprocess.CompletedProcess[str]:
    for source in (REPO / "examples" / "echo").iterdir():
        if source.is_file():
            shutil.copy(source, tmp_path / source.name)
    (tmp_path / "flows.py").write_text(FLOWS)
    # Another run's directory left in the environment (CI's pytest workers ran grpcbench
    # in-process before): its flows.py must not be the one this run's generators load.
    stale = tmp_path / "stale"
    stale.mkdir()
    (stale / "flows.py").write_text("async def other(client):\n    pass\n")
    environment = {**os.environ, "GRPCBENCH_USER_PATH": str(stale)}
    return subprocess.run(
        [*GRPCBENCH, "run", "--service", "echo_service:SERVICE", "-s", "grpclib",
         "--workload", f"flows:{flow}", "--proto", "echo.proto", "-c", "2", "-n", "20",
         "--no-pin", "-t", "1s", *more],
        capture_output=True, text=True, cwd=tmp_path, timeout=120, check=False,
        env=environment,
    )  # fmt: skip


def _no_process_left(tmp_path: Path) -> None:
    time.sleep(0.5)
    left = [
        p for p in psutil.process_iter(["cmdline", "cwd"])
        if p.info["cwd"] == str(tmp_path) and p.pid != os.getpid()
    ]  # fmt: skip
    assert not left, [p.info["cmdline"] for p in left]


@pytest.mark.integration
@pytest.mark.parametrize(
    ("flow", "where", "code", "said"),
    [
        ("block", "level", 4, "flows.py:6 in block held the generator's event loop for 2 s"
         " (--stall-limit)"),
        ("fork", "level", 4, "the flow flows:fork forked the generator"),
        ("daemon", "level", 4, "the flow flows:daemon forked the generator"),
        ("fork", "pre-flight", 5, "the pre-flight call of the workload flows:fork forked"),
        ("block", "pre-flight", 5, "the pre-flight call of the workload flows:block did not end"),
    ],
)  # fmt: skip
def test_a_flow_that_blocks_or_forks_ends_in_one_line(
    tmp_path: Path, flow: str, where: str, code: int, said: str
) -> None:
    limits = ["--stall-limit", "2s"]  # a loop held 2 s is held: the level ends sooner
    done = _run(tmp_path, flow, *limits, *(["--no-preflight"] if where == "level" else []))
    assert done.returncode == code, done.stderr
    assert "Traceback" not in done.stderr
    errors = [line for line in done.stderr.splitlines() if line.startswith("grpcbench: error:")]
    assert len(errors) == 1 and said in errors[0], done.stderr
    _no_process_left(tmp_path)


@pytest.mark.integration
def test_a_flow_that_blocks_a_dask_worker_ends_in_one_line(tmp_path: Path) -> None:
    """On a Dask worker too (``--cluster local:1``): the worker's watchdog names the
    user's frame, the level ends in that one line (exit 4, not the level's time limit
    with "a worker left"), and nothing is left running."""
    pytest.importorskip("distributed")
    started = time.monotonic()
    done = _run(tmp_path, "block", "--no-preflight", "--cluster", "local:1", "--stall-limit", "3s")
    took = time.monotonic() - started
    assert done.returncode == 4, done.stderr
    assert "Traceback" not in done.stderr
    errors = [line for line in done.stderr.splitlines() if line.startswith("grpcbench: error:")]
    assert len(errors) == 1, done.stderr
    assert "cluster worker tcp://127.0.0.1:" in errors[0], errors[0]
    assert "flows.py:6 in block held the generator's event loop for 3 s" in errors[0], errors[0]
    assert took < 60, f"the level ended after {took:.0f} s"
    _no_process_left(tmp_path)


FORKING_SERVICE = """import os, sys, time
if sys.argv[0].endswith("child.py") and os.fork() == 0:  # the server's process forks
    time.sleep(3600)
    os._exit(0)
from grpcbench.services.hello import SERVICE  # noqa: E402
"""
# A daemon's double fork: its own session, and its parent gone at once.
DAEMONIZING_SERVICE = """import os, sys, time
if sys.argv[0].endswith("child.py") and os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        time.sleep(3600)
    os._exit(0)
from grpcbench.services.hello import SERVICE  # noqa: E402
"""


@pytest.mark.integration
@pytest.mark.parametrize("service", [FORKING_SERVICE, DAEMONIZING_SERVICE], ids=["fork", "daemon"])
def test_what_a_servicer_forked_stops_with_its_server(tmp_path: Path, service: str) -> None:
    (tmp_path / "forking.py").write_text(service)
    done = subprocess.run(
        [*GRPCBENCH, "run", "--service", "forking:SERVICE", "-s", "grpclib", "-c", "2",
         "-n", "20", "--no-pin"],
        capture_output=True, text=True, cwd=tmp_path, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    _no_process_left(tmp_path)


def test_the_pre_flight_call_is_bounded_in_time_and_memory(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """It runs user code in grpcbench's own process: a check held past its limit, or
    one that grows the process past the memory limit, is one line (exit 5)."""
    from grpcbench.base.errors import PreflightError
    from grpcbench.run import preflight_call

    async def held() -> None:
        await asyncio.sleep(5)

    async def hoarding() -> None:
        # Fresh pages, each written: a heap that earlier tests in this process freed (and
        # the allocator kept) could take a list of bytes without the process growing.
        hoard = mmap.mmap(-1, 64 << 20)
        for page in range(0, 64 << 20, mmap.PAGESIZE):
            hoard[page] = 1
        await asyncio.sleep(5)
        hoard.close()

    with pytest.raises(PreflightError, match="did not end within 0.5 s"):
        asyncio.run(preflight_call.bounded(held(), "the workload f:held", 0.5, 1 << 30))
    with pytest.raises(PreflightError, match="grew grpcbench's memory by more than"):
        asyncio.run(preflight_call.bounded(hoarding(), "the workload f:hoarding", 30, 16 << 20))
    assert asyncio.run(preflight_call.bounded(asyncio.sleep(0, "done"), "w", 1, 1 << 30)) == "done"
