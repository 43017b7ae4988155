"""The Universal Scalability Law fitted to each server's concurrency sweep (stats.usl).

Only for closed-loop sweeps of at least ``usl.MIN_LEVELS`` levels including
concurrency 1; one fit per server (and driver and variant), on the mean
req/s over repeats. Shown as a summary line and as a dashed curve over the
throughput chart's points.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable

from grpcbench.base.errors import OneLineError
from grpcbench.model.results import LevelResult
from grpcbench.stats.usl import MIN_LEVELS, UslFit, fit_usl


def _series(levels: Iterable[LevelResult]) -> dict[str, dict[int, list[float]]]:
    """Series label (as the charts name it) -> concurrency -> req/s of each repeat."""
    found: dict[str, dict[int, list[float]]] = {}
    several_drivers = len({lv.driver for lv in levels}) > 1
    for level in levels:
        if level.rate or level.channels:
            continue
        label = level.server + (f" [{level.driver}]" if several_drivers else "")
        label += f" {level.variant}" if level.variant else ""
        found.setdefault(label, {}).setdefault(level.concurrency, []).append(level.measured.rps)
    return found


def usl_fits(levels: Iterable[LevelResult]) -> dict[str, UslFit]:
    """Series label -> its fit, for every series the law can be fitted to (needs scipy)."""
    levels = list(levels)
    fits = {}
    for label, points in _series(levels).items():
        if len(points) < MIN_LEVELS or 1 not in points:
            continue
        fit = fit_usl([(n, statistics.fmean(rps)) for n, rps in points.items()])
        if fit is not None:
            fits[label] = fit
    return fits


def usl_lines(levels: Iterable[LevelResult]) -> list[str]:
    """One summary line per fitted series; one line saying why when scipy is missing."""
    try:
        return [f"{label}: {fit.describe()}" for label, fit in usl_fits(levels).items()]
    except OneLineError as missing:
        return [f"no scalability fit: {missing}"]
