"""The ``LoadDriver`` interface and the driver registry."""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from grpcbench.errors import UsageError
from grpcbench.load.model import LoadResult, LoadSpec
from grpcbench.monitor import ProcessMonitor, ProcessUsage

# Called with the number of measured calls finished so far (for progress bars),
# and once with -1 when warm-up ends and measurement starts.
ProgressCallback = Callable[[int], None]
MEASUREMENT_STARTED = -1


class LoadDriver(Protocol):
    name: str

    async def run(self, spec: LoadSpec, progress: ProgressCallback) -> LoadResult:
        """Drive one level against ``spec.target`` and return what was measured."""
        ...


async def run_monitored(
    driver: LoadDriver,
    spec: LoadSpec,
    server_pid: int | None,
    on_progress: Callable[[int], None] = lambda done: None,
) -> tuple[LoadResult, ProcessUsage | None]:
    """Drive one level and measure the server over its measured phase only.

    The monitor starts when the driver reports MEASUREMENT_STARTED (warm-up
    excluded) and stops when the driver returns; without a pid there is no
    server to measure (``--target`` without ``--target-pid``).
    """
    monitor = ProcessMonitor(server_pid) if server_pid else None
    measuring = False

    def progress(done: int) -> None:
        nonlocal measuring
        if done == MEASUREMENT_STARTED:
            measuring = True
            if monitor:
                monitor.start()
        else:
            on_progress(done)

    load = await driver.run(spec, progress)
    return load, monitor.stop() if monitor and measuring else None


def make_driver(name: str, client_processes: int = 1, ghz: str | None = None) -> LoadDriver:
    if name == "builtin":
        from grpcbench.load.builtin import BuiltinDriver

        return BuiltinDriver(processes=client_processes)
    if name == "ghz":
        from grpcbench.load.ghz import GhzDriver

        return GhzDriver(ghz)
    if name == "fake":
        from grpcbench.load.fake import FakeDriver

        return FakeDriver()
    raise UsageError(f"unknown load driver {name!r} (known drivers: builtin, ghz, fake)")
