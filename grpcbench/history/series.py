"""A run's figures as the store keeps them: one value per series and figure.

A series is what stays the same from run to run: the scenario, the level and the
column (server kind and driver), as the tables label them. Each value carries its
own uncertainty (``spread``), from the run itself: over repeats, the standard
deviation; for one run's latency percentile, the half-width of its 95% interval by
order statistics over the HDR histogram. A change smaller than that is the run's
own noise, whatever a test across runs says (``history.change_points``). And each
carries the level's verdict, so a change where the generator limited the figure is
not called the server's.
"""

from __future__ import annotations

import math
import statistics
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

from grpcbench.capacity.record import CapacityRecord
from grpcbench.model.results import LevelResult, RunRecord
from grpcbench.report.compare import CAPACITY, capacities
from grpcbench.report.figures import FIGURES, PERCENTILES
from grpcbench.report.table import group_levels

SEPARATOR = " · "
Z_95 = 1.96


@dataclass(frozen=True)
class FigureValue:
    series: str
    figure: str
    value: float
    spread: float
    verdict: str


def _server_cpu_per_call(level: LevelResult) -> float | None:
    return level.server_cpu_us_per_call


# Figures a history can follow: (key, label, higher is better). `compare`'s figures,
# the server's CPU per call (its efficiency, whoever limited the rate) and capacity.
HISTORY_FIGURES: dict[str, tuple[str, bool]] = {
    **{key: (figure.label, figure.higher_is_better) for key, figure in FIGURES.items()},
    "server_cpu_per_call": ("Server CPU µs per call", False),
    CAPACITY.key: (CAPACITY.label, True),
}


def percentile_half_width(level: LevelResult, percentile: float) -> float:
    """Half the 95% interval of a percentile of ``n`` calls: the values at the ranks
    n·q ± 1.96·√(n·q·(1-q)) of the level's histogram."""
    latency = level.measured.latency
    n, q = latency.count, percentile / 100
    if n < 2:
        return 0.0
    reach = Z_95 * math.sqrt(n * q * (1 - q)) / n * 100
    low = latency.percentile_us(max(percentile - reach, 0.0))
    high = latency.percentile_us(min(percentile + reach, 100.0))
    return (high - low) / 2


def _one_figure(
    column: Sequence[LevelResult],
    read: Callable[[LevelResult], float | None],
    own_spread: Callable[[LevelResult], float],
) -> tuple[float, float] | None:
    values = [v for v in map(read, column) if v is not None]
    if not values:
        return None
    if len(values) > 1:  # repeats: their spread, or the runs' own if larger
        within = statistics.fmean(own_spread(level) for level in column)
        return statistics.fmean(values), max(statistics.stdev(values), within)
    return values[0], own_spread(column[0])


def _readers() -> Iterator[tuple[str, Callable[[LevelResult], float | None],
                                 Callable[[LevelResult], float]]]:  # fmt: skip
    percentiles = dict(PERCENTILES)
    for key, figure in FIGURES.items():
        if key in percentiles:
            p = percentiles[key]
            yield key, figure.value, lambda level, p=p: percentile_half_width(level, p)  # type: ignore[misc]
        else:
            yield key, figure.value, lambda level: 0.0
    yield "server_cpu_per_call", _server_cpu_per_call, lambda level: 0.0


def level_figures(record: RunRecord) -> list[FigureValue]:
    """Every figure of every column of a `run`; a capacity run's capacities instead
    (its probes' levels are steps of a search, not figures to follow)."""
    if record.capacity is not None:
        return capacity_figures(record)
    found = []
    for group in group_levels(record.levels):
        for label, column in zip(group.labels, group.columns, strict=True):
            series = SEPARATOR.join((group.scenario, group.level, label))
            verdict = Counter(level.verdict for level in column).most_common(1)[0][0]
            for key, read, spread in _readers():
                one = _one_figure(column, read, spread)
                if one is not None:
                    found.append(FigureValue(series, key, one[0], one[1], verdict))
    return found


def capacity_figures(record: RunRecord) -> list[FigureValue]:
    """Per server kind and SLO, the capacity (the mean over confirmations that passed,
    their standard deviation its spread); a search the generator stopped is said."""
    capacity = CapacityRecord.of(record)
    by_key = capacities(record)
    found = []
    for one in capacity.found if capacity else ():
        spread = by_key.get((one.server, one.slo))
        if spread is None:
            continue
        verdict = "generator-bound" if one.generator_limited else "server-bound"
        series = SEPARATOR.join((record.options.scenario, one.slo, one.server))
        found.append(FigureValue(series, CAPACITY.key, spread.mean, spread.stdev, verdict))
    return found
