"""The ``LoadDriver`` interface and the driver registry."""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from grpcbench.errors import UsageError
from grpcbench.load.model import LoadResult, LoadSpec

# Called with the number of measured calls finished so far (for progress bars),
# and once with -1 when warm-up ends and measurement starts.
ProgressCallback = Callable[[int], None]
MEASUREMENT_STARTED = -1


class LoadDriver(Protocol):
    name: str

    async def run(self, spec: LoadSpec, progress: ProgressCallback) -> LoadResult:
        """Drive one level against ``spec.target`` and return what was measured."""
        ...


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
