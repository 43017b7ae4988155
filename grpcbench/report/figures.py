"""Named figures of a level (Requests/sec, p99, ...): how to read and print each.

Shared by the tables (mean ± standard deviation over repeats) and by
``grpcbench compare`` (ratios between two runs), so both speak of the same thing.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from grpcbench.base.units import format_latency_us
from grpcbench.model.results import LevelResult

# pyperf's rule: a spread over 10% of the mean makes a figure unstable.
UNSTABLE_SPREAD = 0.10
# The latency percentiles every exporter shows: (name, percentile).
PERCENTILES = (("p50", 50.0), ("p90", 90.0), ("p99", 99.0), ("p99.9", 99.9))


def mean(values: Iterable[float]) -> float:
    """Mean of possibly no values (0.0), for figures averaged over repeats."""
    items = list(values)
    return sum(items) / len(items) if items else 0.0


@dataclass(frozen=True)
class Figure:
    key: str  # as used on the command line: rps, p50, p99, avg
    label: str  # as shown in tables
    value: Callable[[LevelResult], float]
    format: Callable[[float], str]
    higher_is_better: bool


def _percentile(percentile: float) -> Callable[[LevelResult], float]:
    return lambda level: float(level.measured.latency.percentile_us(percentile))


FIGURES: dict[str, Figure] = {
    figure.key: figure
    for figure in (
        Figure("rps", "Requests/sec", lambda lv: lv.measured.rps, lambda v: f"{v:.2f}", True),
        Figure("avg", "Average", lambda lv: lv.measured.latency.mean_us, format_latency_us, False),
        *(Figure(key, key, _percentile(p), format_latency_us, False) for key, p in PERCENTILES),
    )
}


@dataclass(frozen=True)
class Spread:
    """Mean and sample standard deviation of one figure over repeats."""

    mean: float
    stdev: float
    n: int

    @classmethod
    def of(cls, values: Sequence[float]) -> Spread:
        mean = statistics.fmean(values)
        stdev = statistics.stdev(values) if len(values) > 1 else 0.0
        return cls(mean, stdev, len(values))

    @property
    def relative(self) -> float:
        return self.stdev / abs(self.mean) if self.mean else 0.0

    @property
    def unstable(self) -> bool:
        return self.n > 1 and self.relative > UNSTABLE_SPREAD

    def format(self, fmt: Callable[[float], str]) -> str:
        if self.n == 1 or self.stdev == 0:
            return fmt(self.mean)
        return f"{fmt(self.mean)} ± {fmt(self.stdev)}"
