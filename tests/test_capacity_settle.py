"""run.settle: the next search probe waits for the server to drain its backlog."""

from __future__ import annotations

import asyncio
import contextlib
import subprocess
import sys
import time
from collections.abc import Iterator

from grpcbench.run.settle import wait_until_idle

# Busy for a while (a backlog draining), then idle until killed.
BUSY_THEN_IDLE = (
    "import time\nend = time.time() + {busy}\nwhile time.time() < end: pass\ntime.sleep(60)"
)


@contextlib.contextmanager
def _child(busy_s: float) -> Iterator[subprocess.Popen[bytes]]:
    child = subprocess.Popen([sys.executable, "-P", "-c", BUSY_THEN_IDLE.format(busy=busy_s)])
    try:
        yield child
    finally:
        child.kill()
        child.wait()


def test_the_wait_ends_once_the_backlog_is_drained() -> None:
    with _child(1.0) as child:
        started = time.monotonic()
        waited, idle = asyncio.run(wait_until_idle(child.pid, limit_s=20))
        assert idle and 0.5 <= waited <= 15
        assert time.monotonic() - started >= 0.5  # it did wait for the busy second


def test_a_server_that_stays_busy_is_probed_after_the_limit() -> None:
    with _child(60) as child:
        waited, idle = asyncio.run(wait_until_idle(child.pid, limit_s=0.6))
        assert not idle and 0.6 <= waited < 5


def test_an_idle_server_is_probed_at_once() -> None:
    with _child(0) as child:
        time.sleep(0.3)  # past the interpreter's start-up
        waited, idle = asyncio.run(wait_until_idle(child.pid))
        assert idle and waited < 1.0


def test_a_starved_busy_server_is_not_taken_for_idle() -> None:
    """A busy process sharing its one CPU with hogs gets a small share of it, yet it
    wants the whole window: its demand (run plus run-queue wait) says so, where its
    CPU seconds alone would fall under the idle share on a crowded enough core."""
    import os

    import psutil

    from grpcbench.observe.monitor import tree_cpu_demand_seconds, tree_cpu_seconds

    if not os.path.exists("/proc/self/task"):
        return  # not Linux: CPU seconds stand in, nothing more to show
    cpu = sorted(os.sched_getaffinity(0))[0]
    spin = f"import os\nos.sched_setaffinity(0, {{{cpu}}})\nwhile True: pass"
    hogs = [subprocess.Popen([sys.executable, "-P", "-c", spin]) for _ in range(4)]
    try:
        with _child(60) as child:
            os.sched_setaffinity(child.pid, {cpu})
            time.sleep(0.3)  # past the interpreter's start-up
            root = psutil.Process(child.pid)
            demand, used = tree_cpu_demand_seconds(root), tree_cpu_seconds(root)
            time.sleep(1.0)
            demand = tree_cpu_demand_seconds(root) - demand
            used = tree_cpu_seconds(root) - used
        assert demand >= 0.8, (demand, used)  # it wanted the CPU all along
        assert used < 0.6 * demand, (demand, used)  # while it got a fifth of it
    finally:
        for hog in hogs:
            hog.kill()
            hog.wait()
