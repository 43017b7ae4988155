"""What every part of a comparison table shares: a column's type and the warning sign."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from grpcbench.model.results import LevelResult
from grpcbench.report.figures import Spread

WARNING = "⚠"
# Figures whose spread over repeats is checked (pyperf-style instability warning).
CHECKED_FOR_STABILITY = ("rps", "avg", "p50", "p99")

# One column: the repeats of one server (and driver) at one level.
Column = list[LevelResult]


def micros(value: float) -> str:
    return f"{value:.0f} µs" if value < 10_000 else f"{value / 1000:.1f} ms"


def count_cell(value: float) -> str:
    return f"{value:.0f}"


@dataclass(frozen=True)
class Row:
    """A table row: a number per level, how to print it, and an optional suffix."""

    name: str
    value: Callable[[LevelResult], float | None]
    format: Callable[[float], str]
    suffix: Callable[[Column], str] = lambda column: ""

    def cell(self, column: Column) -> str:
        values = [v for v in (self.value(level) for level in column) if v is not None]
        if not values:
            return "-"
        return Spread.of(values).format(self.format) + self.suffix(column)
