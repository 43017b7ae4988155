"""Which side limited a measured figure: the server, the generator, both, or neither.

A figure is only as good as the sentence under it. Each side is judged by its
own CPU: a side is saturated when it used at least 90% of the CPU it could get
- the server: one core per process (each has one GIL), at most its CPUs; the
generator: one core per built-in process, ghz's CPUs for ghz - where what other
processes took from those CPUs meanwhile is not counted as available
(``cpu_share``), so a saturated side stays saturated when a noisy neighbour
shares its CPU. Then:

- **server-bound**: the server is saturated and the generator is not. The
  figure is the server's capacity at this load.
- **generator-bound**: the generator is saturated while the server has idle
  CPU. The figure is the generator's limit; the server may be faster.
- **both saturated**: both at their limit. The server's CPU was saturated, so
  the figure is close to its capacity, but the generator may have held it
  back a little: cross-check with a second client (``--load builtin,ghz``).
- **backing-bound**: a backing service grpcbench started (the embedded S3,
  MongoDB or PostgreSQL, measured like the server) is saturated while the server is not:
  the figure is that service's limit.
- **neither**: neither side is busy, so the figure is bound by latency (few
  calls in flight) or by a wait (a sleep, a remote backing service). An open loop
  whose generator fell behind its timetable is never *neither*: it is
  generator-bound, however little CPU it used (it may have been starved of it).
- **unknown**: the server's CPU was not measured (``--target`` without
  ``--target-pid``) and the generator was neither saturated nor behind.

Why not the generator's CPU share alone: a Python gRPC client spends more CPU
per call when replies trickle in from a slow server (57 µs vs 140 µs per call
in the same loop), so a busy generator does not mean a limiting one.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, Protocol

from grpcbench.model.level_parts import SATURATION_THRESHOLD
from grpcbench.model.load_result import LoadResult
from grpcbench.observe.monitor import ProcessUsage


class Measured(Protocol):
    """A measured level (``results.LevelResult``): what the generator and the server did."""

    @property
    def measured(self) -> LoadResult: ...

    @property
    def server_usage(self) -> ProcessUsage | None: ...

    @property
    def backing_usage(self) -> dict[str, ProcessUsage]: ...


Verdict = Literal[
    "server-bound", "generator-bound", "both saturated", "backing-bound", "neither", "unknown"
]


@dataclass(frozen=True)
class Sides:
    """How busy each side was: shares of the CPU each could use (means over repeats)."""

    server: float | None  # None: the server's CPU was not measured
    generator: float
    backing: dict[str, float]  # backing service -> its saturation
    generator_behind: bool = False  # an open loop that could not send on time

    @classmethod
    def of(cls, levels: Sequence[Measured]) -> Sides:
        usages = [lv.server_usage for lv in levels if lv.server_usage]
        server = statistics.fmean(u.cpu_saturation for u in usages) if usages else None
        names = dict.fromkeys(name for lv in levels for name in lv.backing_usage)
        backing = {
            name: statistics.fmean(
                lv.backing_usage[name].cpu_saturation for lv in levels if name in lv.backing_usage
            )
            for name in names
        }
        generator = statistics.fmean(lv.measured.client_saturation for lv in levels)
        behind = any(lv.measured.behind_schedule for lv in levels)
        return cls(server, generator, backing, behind)

    @property
    def saturated_backing(self) -> list[str]:
        return [name for name, share in self.backing.items() if share >= SATURATION_THRESHOLD]

    @property
    def verdict(self) -> Verdict:
        server = None if self.server is None else self.server >= SATURATION_THRESHOLD
        generator = self.generator >= SATURATION_THRESHOLD
        if not server and self.generator_behind:
            generator = True  # it could not keep its timetable: its limit, not the server's
        if server is None:
            return "generator-bound" if generator else "unknown"
        if server and generator:
            return "both saturated"
        if server:
            return "server-bound"
        if self.saturated_backing:
            return "backing-bound"
        return "generator-bound" if generator else "neither"


def judge(*levels: Measured) -> Verdict:
    """The verdict of one level, or of a column's repeats (judged on their means)."""
    return Sides.of(levels).verdict


# What each verdict means for the figures, in one short clause (for table notes).
MEANING: dict[Verdict, str] = {
    "generator-bound": "the server may be faster; add --client-cpus or --client-processes",
    "both saturated": "near the server's capacity; cross-check with --load builtin,ghz",
    "backing-bound": "the figures are the backing service's limit (its CPU row shows which)",
    "neither": "latency- or wait-bound",
    "unknown": "server not measured (give --target-pid)",
    "server-bound": "",
}


def note(verdict: Verdict, labels: Sequence[str]) -> str:
    """One short note for every column of a table that shares a verdict ("" if server-bound)."""
    if verdict == "server-bound" or not labels:
        return ""
    return f"{verdict}: {', '.join(labels)}: {MEANING[verdict]}."
