"""The run in a few lines: per level, the best server by req/s and by p99, and why.

A column whose every call failed is never "best": it is named as failed instead.

Printed after the tables and at the top of the HTML report. Each best figure
carries its verdict, so a "winner" that was generator-bound says so.
"""

from __future__ import annotations

from collections.abc import Iterable

from grpcbench.base.text import printable
from grpcbench.model.results import LevelResult
from grpcbench.model.verdict import judge
from grpcbench.report.figures import FIGURES
from grpcbench.report.figures import mean as _mean
from grpcbench.report.scalability import usl_lines
from grpcbench.report.table import LevelGroup, group_levels


def _all_failed(column: list[LevelResult]) -> bool:
    """Every call of every repeat ended with an unexpected status: no figure to rank."""
    return all(level.unexpected == level.measured.count for level in column)


def _served_rps(level: LevelResult) -> float:
    """Calls per second that ended as expected: the headline rate. A target that died
    answers Unavailable in microseconds, and counting those made a dead server the
    fastest (178,084 req/s); failures get their own rate beside it."""
    wall = level.measured.wall_s
    return (level.measured.count - level.unexpected) / wall if wall > 0 else 0.0


def _failed_rps(level: LevelResult) -> float:
    wall = level.measured.wall_s
    return level.unexpected / wall if wall > 0 else 0.0


def _rate(value: float) -> str:
    return f"{value:,.0f}" if value >= 100 else f"{value:.2f}"


def _best(group: LevelGroup, key: str) -> str:
    figure = FIGURES[key]
    value_of = _served_rps if key == "rps" else figure.value
    scored = [
        (_mean(value_of(level) for level in column), label, column)
        for label, column in zip(group.labels, group.columns, strict=True)
        if not _all_failed(column)
    ]
    if not scored:
        return "none: every call failed"
    value, label, column = (max if figure.higher_is_better else min)(scored)
    if key != "rps":
        return f"{label} ({figure.format(value)}, {judge(*column)})"
    failed = _mean(_failed_rps(level) for level in column)
    beside = f", and {_rate(failed)} failed calls/s" if failed else ""
    return f"{label} ({_rate(value)} req/s served{beside}, {judge(*column)})"


def variant_ratios(levels: Iterable[LevelResult]) -> list[str]:
    """Seed 000's conclusion: per server, how many times longer a call of the
    ``paginate`` variant took than each ``stream-*`` variant (mean latency).
    Levels with failed calls are left out: a deadline is not a fetch-all's time."""
    by_variant: dict[tuple[str, str, str], list[float]] = {}
    for level in levels:
        if level.variant and level.unexpected == 0:
            key = (level.scenario, f"{level.server} [{level.driver}]", level.variant)
            by_variant.setdefault(key, []).append(level.measured.latency.mean_us)
    lines = []
    for (scenario, column, variant), values in by_variant.items():
        if variant != "paginate":
            continue
        base = _mean(values)
        ratios = [
            f"{other} {base / _mean(others):.2f}x"
            for (s, c, other), others in by_variant.items()
            if s == scenario and c == column and other.startswith("stream") and _mean(others)
        ]
        if ratios:
            lines.append(f"{column}: paginate / {', '.join(ratios)} (mean time per call)")
    return lines


def summary_lines(levels: Iterable[LevelResult]) -> list[str]:
    """One line per level: "concurrency 50: most req/s X (...); lowest p99 Y (...)"."""
    levels = list(levels)
    groups = group_levels(levels)
    several_scenarios = len({group.scenario for group in groups}) > 1
    lines = []
    for group in groups:
        title = f"{group.scenario} - {group.level}" if several_scenarios else group.level
        failed = [
            label for label, column in zip(group.labels, group.columns, strict=True)
            if _all_failed(column)
        ]  # fmt: skip
        flagged = f"; every call failed on {', '.join(failed)}" if failed else ""
        if len(group.columns) == 1:
            lines.append(f"{title}: {_best(group, 'rps')}{flagged}")
            continue
        lines.append(
            f"{title}: most req/s {_best(group, 'rps')}; lowest p99 {_best(group, 'p99')}{flagged}"
        )
    return [printable(line) for line in lines + variant_ratios(levels) + usl_lines(levels)]
