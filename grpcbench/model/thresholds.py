"""Pass/fail thresholds on every level of a run (k6's convention): ``--threshold``.

``p99<20ms``, ``p50<=5ms``, ``avg<10ms``, ``max<1s``, ``rps>=5000``,
``errors<0.1%``. Each is checked on every measured level of every server; a
breach is named under the level's table and in the summary, and the run exits
``EXIT_BREACHED`` (99) after printing and saving everything. Latencies are the
table's: for an open loop, from the intended send time.
"""

from __future__ import annotations

import operator
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from grpcbench.base.errors import UsageError
from grpcbench.base.parsing import parse_duration
from grpcbench.base.units import format_latency_us
from grpcbench.model.results import LevelResult

EXIT_BREACHED = 99
_LATENCIES = {"p50": 50.0, "p90": 90.0, "p95": 95.0, "p99": 99.0, "p99.9": 99.9}
_OPERATORS: dict[str, Callable[[float, float], bool]] = {
    "<=": operator.le, "<": operator.lt, ">=": operator.ge, ">": operator.gt,
}  # fmt: skip
_THRESHOLD = re.compile(
    r"^\s*(p50|p90|p95|p99\.9|p99|avg|max|rps|errors)\s*(<=|<|>=|>)\s*(\S+)\s*$"
)


@dataclass(frozen=True)
class Threshold:
    text: str
    metric: str
    op: str
    limit: float  # µs for latencies, calls/s for rps, a share for errors

    def measured(self, level: LevelResult) -> float:
        load = level.load
        if self.metric == "rps":
            return load.rps
        if self.metric == "errors":
            return level.unexpected / load.count if load.count else 1.0
        if self.metric == "avg":
            return load.latency.mean_us
        if self.metric == "max":
            return float(load.latency.max_us)
        return float(load.latency.percentile_us(_LATENCIES[self.metric]))

    def holds(self, level: LevelResult) -> bool:
        return _OPERATORS[self.op](self.measured(level), self.limit)

    def show(self, value: float) -> str:
        if self.metric == "rps":
            return f"{value:,.0f} req/s"
        if self.metric == "errors":
            return f"{value:.2%}"
        return format_latency_us(value)


@dataclass(frozen=True)
class Breach:
    threshold: Threshold
    level: LevelResult

    def describe(self) -> str:
        value = self.threshold.show(self.threshold.measured(self.level))
        return (
            f"threshold {self.threshold.text} breached: {self.level.server} at"
            f" {self.level.describe()} ({value})"
        )


def parse_threshold(text: str) -> Threshold:
    match = _THRESHOLD.match(text)
    if not match:
        raise UsageError(
            f"bad --threshold {text!r}: e.g. p99<20ms, avg<=5ms, rps>=5000 or errors<0.1%"
            " (p50, p90, p95, p99, p99.9, avg, max, rps, errors; <, <=, >, >=)"
        )
    metric, op, value = match.groups()
    if metric == "rps":
        try:
            limit = float(value.removesuffix("/s"))
        except ValueError:
            raise UsageError(f"bad --threshold {text!r}: rps takes a number") from None
    elif metric == "errors":
        try:
            limit = float(value[:-1]) / 100 if value.endswith("%") else float(value)
        except ValueError:
            raise UsageError(f"bad --threshold {text!r}: errors take 0.1% or 0.001") from None
    else:
        limit = parse_duration(value, f"--threshold {text!r}: its limit") * 1e6
    return Threshold(text.strip(), metric, op, limit)


def breaches(levels: Iterable[LevelResult], thresholds: Iterable[Threshold]) -> list[Breach]:
    checked = list(thresholds)
    return [Breach(t, level) for level in levels for t in checked if not t.holds(level)]
