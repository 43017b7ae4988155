"""A level cut short when its server's process dies.

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


def alive(pid: int) -> bool:
    """The process runs (a zombie, dead but not yet reaped, does not)."""
    try:
        state: str = psutil.Process(pid).status()
    except psutil.Error:
        return False
    return bool(state != psutil.STATUS_ZOMBIE)


async def unless_server_dies(load: Awaitable[T], server_pid: int | None) -> T:
    """``load``'s result; if the process ``server_pid`` dies first, the load is
    cancelled (its generators stop as on Ctrl-C) and the level is a ``DriverError``.
    Cancelled itself (Ctrl-C), it cancels the load and waits for it to stop."""
    task = asyncio.ensure_future(load)
    if server_pid is None:
        return await task
    try:
        while True:
            done, _ = await asyncio.wait({task}, timeout=WATCH_S)
            if done:
                return task.result()
            if not alive(server_pid):
                break
    except asyncio.CancelledError:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        raise
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task
    raise DriverError(f"the server (pid {server_pid}) exited during the level")
