"""Service-level objectives: ``p99<=10ms``, ``p50<2ms,max<=1s`` and an error budget.

Each ``--slo`` is one SLO (its own search and table); commas inside one join
objectives that must all hold. Latencies are the open loop's, counted from
each call's intended send time, so a server that falls behind cannot hide it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from grpcbench.base.errors import UsageError
from grpcbench.base.parsing import parse_duration
from grpcbench.stats.histogram import LatencySummary

# The statistics an objective may bound, and the percentile each reads (max: 100).
STATISTICS: dict[str, float] = {"p50": 50.0, "p90": 90.0, "p99": 99.0, "p99.9": 99.9, "max": 100.0}
_OBJECTIVE = re.compile(r"^\s*(p50|p90|p99\.9|p99|max)\s*(<=|<)\s*(\S+)\s*$")


@dataclass(frozen=True)
class Objective:
    """One bound: a latency statistic at most (or below) a limit."""

    statistic: str
    limit_us: int
    strict: bool = False  # "<" rather than "<="

    def value_us(self, latency: LatencySummary) -> int:
        if self.statistic == "max":
            return latency.max_us
        return latency.percentile_us(STATISTICS[self.statistic])

    def holds(self, latency: LatencySummary) -> bool:
        value = self.value_us(latency)
        return value < self.limit_us if self.strict else value <= self.limit_us

    def describe(self) -> str:
        return f"{self.statistic}{'<' if self.strict else '<='}{_duration(self.limit_us)}"


@dataclass(frozen=True)
class Slo:
    """Objectives that must all hold, as typed (``text``)."""

    objectives: tuple[Objective, ...]

    @property
    def text(self) -> str:
        return ",".join(objective.describe() for objective in self.objectives)

    @property
    def tightest_us(self) -> int:
        return min(objective.limit_us for objective in self.objectives)

    def breaches(self, latency: LatencySummary) -> list[str]:
        """Each objective that does not hold, with the measured value."""
        return [
            f"{o.statistic} {_duration(o.value_us(latency))} > {_duration(o.limit_us)}"
            for o in self.objectives
            if not o.holds(latency)
        ]

    def to_json(self) -> dict[str, Any]:
        return {"text": self.text}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Slo:
        return parse_slo(str(data["text"]))


def parse_slo(text: str) -> Slo:
    """``"p99<=10ms"`` or ``"p50<=2ms,p99<=10ms"``; a bad one is one clear line."""
    objectives = []
    for part in text.split(","):
        match = _OBJECTIVE.match(part)
        if not match:
            raise UsageError(
                f"bad --slo {text!r}: expected e.g. p99<=10ms (p50, p90, p99, p99.9 or max;"
                " <= or <; several joined by commas)"
            )
        statistic, operator, limit = match.groups()
        seconds = parse_duration(limit, "--slo limit")
        objectives.append(Objective(statistic, max(1, round(seconds * 1e6)), operator == "<"))
    return Slo(tuple(objectives))


def _duration(us: int) -> str:
    if us >= 1_000_000:
        return f"{us / 1e6:.4g}s"
    if us >= 1000:
        return f"{us / 1000:.4g}ms"
    return f"{us}us"
