"""Service-level objectives: ``p99<=10ms``, ``p50<2ms,max<=1s`` and an error budget.
The grammar of one objective is ``stats.bounds``' (--threshold's too).

Each ``--slo`` is one SLO (its own search and table); commas inside one join
objectives that must all hold. Latencies are the open loop's, counted from
each call's intended send time, so a server that falls behind cannot hide it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from grpcbench.stats.bounds import LATENCY_STATISTICS, UPPER, latency_us, parse_bound, show_us
from grpcbench.stats.histogram import LatencySummary


@dataclass(frozen=True)
class Objective:
    """One bound: a latency statistic at most (or below) a limit."""

    statistic: str
    limit_us: int
    strict: bool = False  # "<" rather than "<="

    def value_us(self, latency: LatencySummary) -> int:
        return round(latency_us(self.statistic, latency))

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

    def implies(self, other: Slo) -> bool:
        """Whether every latency that meets this SLO meets ``other`` too (each of its
        objectives is bounded here as tightly or more): then ``other`` can never allow
        less than this one does."""
        return all(
            any(
                mine.statistic == theirs.statistic
                and (mine.limit_us < theirs.limit_us
                     or (mine.limit_us == theirs.limit_us and (mine.strict or not theirs.strict)))
                for mine in self.objectives
            )
            for theirs in other.objectives
        )  # fmt: skip

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
    """``"p99<=10ms"`` or ``"p50<=2ms,p99<=10ms"``: ``stats.bounds``' grammar, the latency
    statistics with an upper bound; a bad one is one clear line."""
    objectives = []
    for part in text.split(","):
        bound = parse_bound(part, "--slo", tuple(LATENCY_STATISTICS), UPPER)
        objectives.append(Objective(bound.statistic, int(bound.limit), bound.op == "<"))
    return Slo(tuple(objectives))


def _duration(us: int) -> str:
    return show_us(us)
