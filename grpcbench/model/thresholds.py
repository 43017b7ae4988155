"""Pass/fail thresholds on every level of a run (k6's convention): ``--threshold``.

``p99<20ms``, ``p50<=5ms``, ``avg<10ms``, ``max<1s``, ``rps>=5000``,
``errors<0.1%``, ``checks>=99%``, ``checks{NAME}>=99%``, ``p99{scenario:NAME}<10ms``
(one of several scenarios at once; the grammar is
``stats.bounds``', --slo's too). A checks threshold on a level where no such check
ran is breached: a gate that no check reached would otherwise always pass. Each is checked
on every measured level of every server; a breach is named under the level's
table and in the summary, and the run exits ``EXIT_BREACHED`` (99) after
printing and saving everything. Latencies are the
table's: for an open loop, from the intended send time.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from grpcbench.base.units import format_latency_us
from grpcbench.model.failures import part_failures
from grpcbench.stats.bounds import SHARES, Bound, latency_us, parse_bound

if TYPE_CHECKING:  # thresholds are parsed with the options, before any result exists
    from grpcbench.model.results import LevelResult

EXIT_BREACHED = 99


@dataclass(frozen=True)
class Threshold:
    """A bound (``stats.bounds``' grammar) on every measured level."""

    bound: Bound

    @property
    def text(self) -> str:
        return self.bound.text

    def measured(self, level: LevelResult) -> float:
        load, statistic = level.measured, self.bound.statistic
        if self.bound.scenario is not None:
            return _of_scenario(level, self.bound.scenario, statistic)
        if statistic == "rps":
            return load.rps
        if statistic == "errors":
            return level.unexpected / load.count if load.count else 1.0
        if statistic == "checks":
            name = self.bound.name
            checks = [c for c in load.checks if name is None or c.name == name]
            count = sum(c.count for c in checks)
            return sum(c.passed for c in checks) / count if count else math.nan
        return latency_us(statistic, load.latency)

    def holds(self, level: LevelResult) -> bool:
        return self.bound.holds(self.measured(level))  # nan (no check ran) holds nothing

    def show(self, value: float) -> str:
        if self.bound.statistic == "rps":
            return f"{value:,.0f} req/s"
        if math.isnan(value) and self.bound.scenario is not None:
            return "no such scenario ran"
        if math.isnan(value):
            return "no such check ran" if self.bound.name is not None else "no check ran"
        if self.bound.statistic in SHARES:
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


def _of_scenario(level: LevelResult, name: str, statistic: str) -> float:
    """One of several scenarios' figure (nan where it did not run: breached)."""
    found = next((s for s in level.measured.scenarios if s.name == name), None)
    if found is None:
        return math.nan
    load = found.load
    if statistic == "rps":
        return load.rps
    if statistic == "errors":
        failed = part_failures(load.statuses, found.expected, level.expected)
        return failed / load.count if load.count else 1.0
    return latency_us(statistic, load.latency)


def parse_threshold(text: str) -> Threshold:
    return Threshold(parse_bound(text, "--threshold", scenario_tags=True))


def breaches(levels: Iterable[LevelResult], thresholds: Iterable[Threshold]) -> list[Breach]:
    checked = list(thresholds)
    return [Breach(t, level) for level in levels for t in checked if not t.holds(level)]
