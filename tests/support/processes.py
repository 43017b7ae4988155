"""Process checks shared by the lifecycle and fault tests."""

from __future__ import annotations

import time

import psutil

from tests.support.warm_cli import ZYGOTES


def own_children() -> list[psutil.Process]:
    """This test process's descendants, less the warm command-line zygote (a fixture of
    the whole session, tests/support/warm_cli.py): what a test may have leaked."""
    return [p for p in psutil.Process().children(recursive=True) if p.pid not in ZYGOTES]


def assert_all_gone(pids: set[int], timeout: float = 10) -> None:
    """Every pid in ``pids`` has exited (zombies count as gone) within ``timeout``."""
    deadline = time.monotonic() + timeout
    alive = set(pids)
    while alive and time.monotonic() < deadline:
        alive = {
            pid for pid in alive
            if psutil.pid_exists(pid) and psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
        }  # fmt: skip
        time.sleep(0.05)
    assert not alive, f"processes outlived the run: {alive}"


def runs_module(process: psutil.Process, module: str) -> bool:
    """Whether ``process`` runs ``module`` (``grpcbench.load.generator``,
    ``grpcbench.servers.child``); False for one already gone (a zombie has no cmdline)."""
    try:
        return module in " ".join(process.cmdline())
    except psutil.Error:
        return False


def descendants_running(pid: int, module: str) -> list[psutil.Process]:
    """The processes under ``pid`` that run ``module`` ([] once ``pid`` is gone)."""
    try:
        children = psutil.Process(pid).children(recursive=True)
    except psutil.NoSuchProcess:
        return []
    return [child for child in children if runs_module(child, module)]
