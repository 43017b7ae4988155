"""Process checks shared by the lifecycle and fault tests."""

from __future__ import annotations

import time

import psutil


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
