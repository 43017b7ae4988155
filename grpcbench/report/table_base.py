"""What every part of a comparison table shares: a column's type and the warning sign."""

from __future__ import annotations

from grpcbench.model.results import LevelResult

WARNING = "⚠"
# Figures whose spread over repeats is checked (pyperf-style instability warning).
CHECKED_FOR_STABILITY = ("rps", "avg", "p50", "p99")

# One column: the repeats of one server (and driver) at one level.
Column = list[LevelResult]


def micros(value: float) -> str:
    return f"{value:.0f} µs" if value < 10_000 else f"{value / 1000:.1f} ms"
