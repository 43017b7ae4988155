"""A level cut short when its server's process dies, or stays stopped (SIGSTOP).

Without it, the load ran on against a dead server until the level's end (6 to 39 s
measured), counting refused connections; the level failed only afterwards. The
runner then says why (``targets.base.death_of``: the exit code and stderr of a
server it started)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable
from typing import TypeVar

import psutil

from grpcbench.base.errors import DriverError

T = TypeVar("T")

WATCH_S = 0.2  # how often the server's process is looked at while the load runs
# A server stopped (SIGSTOP, Ctrl-Z) this long answers nothing: the level measures a
# stall, and would fail at its end anyway (targets.started), so it is cut here. A
# tracing stop (py-spy --native's samples) is not one.
STOPPED_S = 1.0


def _state(pid: int) -> str | None:
    """The process's state; None once it is gone."""
    try:
        return str(psutil.Process(pid).status())
    except psutil.Error:
        return None


async def unless_server_dies(load: Awaitable[T], server_pid: int | None) -> T:
    """``load``'s result; if the process ``server_pid`` dies first, the load is
    cancelled (its generators stop as on Ctrl-C) and the level is a ``DriverError``.
    Cancelled itself (Ctrl-C), it cancels the load and waits for it to stop."""
    task = asyncio.ensure_future(load)
    if server_pid is None:
        return await task
    stopped_for = 0.0
    try:
        while True:
            done, _ = await asyncio.wait({task}, timeout=WATCH_S)
            if done:
                return task.result()
            state = _state(server_pid)
            if state in (None, psutil.STATUS_ZOMBIE):  # gone (a zombie: dead, not reaped)
                break
            stopped_for = stopped_for + WATCH_S if state == psutil.STATUS_STOPPED else 0.0
            if stopped_for >= STOPPED_S:
                break
    except asyncio.CancelledError:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        raise
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task
    what = "was stopped (SIGSTOP)" if stopped_for >= STOPPED_S else "exited"
    raise DriverError(f"the server (pid {server_pid}) {what} during the level")
