from __future__ import annotations

import contextlib
import ctypes
import faulthandler
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psutil
import pytest
from hypothesis import settings

from tests.support.processes import own_children
from tests.support.warm_cli import Zygote

# Property tests assert what the code does, never how fast: on a busy machine one
# example can take longer than Hypothesis's default 200 ms deadline.
settings.register_profile("grpcbench", deadline=None)
settings.load_profile("grpcbench")

REPO = Path(__file__).resolve().parents[1]
_PR_SET_CHILD_SUBREAPER = 36


@pytest.fixture(autouse=True)
def _children_can_import_tests(monkeypatch: pytest.MonkeyPatch) -> None:
    """Server and generator subprocesses load tests.support services too.

    With the checkout on their path they import grpcbench from it, so they may
    write its bytecode: under PYTHONDONTWRITEBYTECODE every one of the hundreds
    of child processes would compile the package from source again."""
    path = os.environ.get("PYTHONPATH", "")
    monkeypatch.setenv("PYTHONPATH", f"{REPO}{os.pathsep}{path}" if path else str(REPO))
    monkeypatch.delenv("PYTHONDONTWRITEBYTECODE", raising=False)


def pytest_configure(config: pytest.Config) -> None:
    """Become a child subreaper: orphaned grandchildren (a server whose grpcbench
    parent died without stopping it) are re-parented to the test process instead
    of init, so ``no_leaked_children`` sees them."""
    if sys.platform.startswith("linux"):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)


# No test may hang the suite (CI stops it after 90 minutes, with nothing to say why).
# faulthandler's watchdog is C: it fires even when the GIL itself is deadlocked,
# as CPython can between an exiting thread and PyGILState_Ensure (cpython#72998).
HANG_S = 600


@pytest.fixture(autouse=True)
def _no_test_hangs() -> Iterator[None]:
    """Past HANG_S, print every thread's stack and exit this (xdist worker) process."""
    faulthandler.dump_traceback_later(HANG_S, exit=True)
    try:
        yield
    finally:
        faulthandler.cancel_dump_traceback_later()


# Children that a wider-scoped fixture owns on purpose (e.g. embedded S3 and
# MongoDB for a whole module); the leak check leaves them alone.
_LONG_LIVED: set[int] = set()


@contextlib.contextmanager
def long_lived_children() -> Iterator[None]:
    """Mark the current children as owned by the enclosing (module) fixture."""
    owned = {p.pid for p in own_children()}
    _LONG_LIVED.update(owned)
    try:
        yield
    finally:
        _LONG_LIVED.difference_update(owned)


def _is_resource_tracker(process: psutil.Process) -> bool:
    """multiprocessing's resource tracker: one per test process by design (a Dask
    LocalCluster with worker processes starts it), living as long as that process."""
    with contextlib.suppress(psutil.Error):
        return "multiprocessing.resource_tracker" in " ".join(process.cmdline())
    return False


@pytest.fixture(autouse=True)
def no_leaked_children() -> Iterator[None]:
    """Every test must leave no child process of the test runner behind."""
    yield
    leftovers = [
        p for p in own_children()
        if p.is_running() and p.pid not in _LONG_LIVED and not _is_resource_tracker(p)
    ]  # fmt: skip
    gone, alive = psutil.wait_procs(leftovers, timeout=5)
    assert not [p for p in alive if p.status() != psutil.STATUS_ZOMBIE], (
        f"leaked child processes: {[p.cmdline() for p in alive]}"
    )


def write_scenario(tmp_path: Path, service: str, server: str = "", name: str = "custom") -> Path:
    """A scenario file for a test service (``[server]`` params given as TOML lines)."""
    path = tmp_path / f"{name}.toml"
    path.write_text(
        f'name = "{name}"\nservice = "{service}"\n'
        '[defaults]\nservers = ["grpcio:workers=2"]\nconcurrency = [2]\n'
        'requests = 20\nwarmup = "0"\n'
        f"[server]\n{server}\n"
    )
    return path


GRPCBENCH = [sys.executable, "-m", "grpcbench"]
_WARM = Zygote()


def run_grpcbench(
    *args: str, timeout: float = 120, **kwargs: Any
) -> subprocess.CompletedProcess[str]:
    """``subprocess.run([*GRPCBENCH, *args], capture_output=True, text=True)``: forked from
    a warm zygote (tests/support/warm_cli.py) when nothing asks for a colder process."""
    cwd = kwargs.pop("cwd", None)
    env = kwargs.get("env")
    if kwargs or not _WARM.can_run(dict(os.environ) if env is None else env):
        return subprocess.run(
            [*GRPCBENCH, *args], capture_output=True, text=True, timeout=timeout, check=False,
            cwd=cwd, **kwargs,
        )  # fmt: skip
    return _WARM.run(list(args), timeout, None if cwd is None else str(cwd))


def one_level_load(tmp_path: Path, *args: str) -> dict[str, Any]:
    """``grpcbench run ARGS -o FILE`` that must succeed with one level: its ``load``."""
    out = tmp_path / "one-level.json"
    done = run_grpcbench("run", *args, "-o", str(out))
    assert done.returncode == 0, done.stderr
    (level,) = json.loads(out.read_text())["levels"]
    load: dict[str, Any] = level["load"]
    return load


def pytest_unconfigure(config: pytest.Config) -> None:
    _WARM.close()


@contextlib.contextmanager
def module_server(spec: str, service: str) -> Iterator[str]:
    """A server grpcbench starts for a whole test module (its address); its process is
    the module's, not a leak of each test."""
    import asyncio

    from grpcbench.servers.launcher import start_server
    from grpcbench.servers.spec import parse_server_spec

    loop = asyncio.new_event_loop()
    server = loop.run_until_complete(start_server(parse_server_spec(spec), service, {}))
    try:
        with long_lived_children():
            yield server.address
    finally:
        loop.run_until_complete(server.stop())
        loop.close()
