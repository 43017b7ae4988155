"""Between probes on one server: wait until it is idle again.

A probe past the knee leaves a backlog behind: calls the server queued, whose
handlers still run after the generator gave up on them. The next probe on the
same server would measure that backlog too, and every rate after an overload
would look worse than it does on a fresh server (seen on grpcio:workers=1:
after a probe at twice its ceiling, rates it had passed failed at p50 0.4 s).
So before each search probe the server's process tree must *want* less than
``IDLE_SHARE`` of a core over a ``WINDOW_S`` window, waiting at most ``LIMIT_S``.
Wanting, not using: on a busy host a server still draining its backlog can get
little CPU from its neighbours, and its CPU seconds alone would call it idle. Its
time waiting on a run queue counts too (``tree_cpu_demand_seconds``).
"""

from __future__ import annotations

import asyncio
import time

import psutil

from grpcbench.observe.monitor import tree_cpu_demand_seconds

IDLE_SHARE = 0.05  # of one core: an idle server's pollers and timers stay below this
WINDOW_S = 0.2
LIMIT_S = 10.0


async def wait_until_idle(
    pid: int, *, idle_share: float = IDLE_SHARE, window_s: float = WINDOW_S,
    limit_s: float = LIMIT_S,
) -> tuple[float, bool]:  # fmt: skip
    """Wait until the tree under ``pid`` idles for a window: (seconds waited, idle)."""
    try:
        root = psutil.Process(pid)
    except psutil.Error:
        return 0.0, True  # gone: the probe itself will say so
    start = time.monotonic()
    while True:
        before = tree_cpu_demand_seconds(root)
        await asyncio.sleep(window_s)
        if tree_cpu_demand_seconds(root) - before < idle_share * window_s:
            return time.monotonic() - start, True
        if time.monotonic() - start >= limit_s:
            return time.monotonic() - start, False
