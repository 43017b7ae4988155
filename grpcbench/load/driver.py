"""The ``LoadDriver`` interface: a plain ``GeneratorJob`` in, a mergeable ``LoadResult`` out.

Only the interface lives here (no driver is imported), so drivers can import it
without a cycle; ``load.catalogue`` lists the drivers and builds them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from grpcbench.model.load_result import GeneratorJob, LoadResult

# Called with the measured calls finished so far and how many of them failed (for
# progress bars), and once with (-1, 0) when warm-up ends and measurement starts.
ProgressCallback = Callable[[int, int], None]
MEASUREMENT_STARTED = -1


@dataclass(frozen=True)
class DriverSettings:
    """What a driver needs besides the level itself, chosen once per run."""

    client_processes: int = 1  # built-in generator processes per level
    ghz: str | None = None  # path to the ghz binary; None = from PATH
    cluster: str | None = None  # --cluster: local:N or a Dask scheduler address
    cluster_workers: int | None = None  # use this many of the cluster's workers (None: all)
    # Keep generator processes from level to level: only for an owner that closes the
    # driver at its end (``close_driver``), as the runner does.
    keep_generators: bool = False


class LoadDriver(Protocol):
    name: str

    async def run(self, spec: GeneratorJob, progress: ProgressCallback) -> LoadResult:
        """Drive one level against ``spec.target`` and return what was measured."""
        ...


# A driver may also have, and the runner then uses: ``notes`` (warnings shown as the
# run starts), ``check_reach(host)`` (refuse a target its generators cannot dial),
# ``check_site`` (where target checks run), ``warm()`` (start its generators as the
# run begins, while servers start) and ``close()`` (the run is over).


def close_driver(driver: LoadDriver) -> None:
    """Release what a driver holds for the run (a cluster's client and processes)."""
    close = getattr(driver, "close", None)
    if close is not None:
        close()
