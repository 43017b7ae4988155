"""The run in a few lines: per level, the best server by req/s and by p99, and why.

Printed after the tables and at the top of the HTML report. Each best figure
carries its verdict, so a "winner" that was generator-bound says so.
"""

from __future__ import annotations

from collections.abc import Iterable

from grpcbench.report.figures import FIGURES
from grpcbench.report.figures import mean as _mean
from grpcbench.report.table import LevelGroup, group_levels
from grpcbench.results import LevelResult
from grpcbench.verdict import judge


def _best(group: LevelGroup, key: str) -> str:
    figure = FIGURES[key]
    scored = [
        (_mean(figure.value(level) for level in column), label, column)
        for label, column in zip(group.labels, group.columns, strict=True)
    ]
    value, label, column = (max if figure.higher_is_better else min)(scored)
    shown = f"{value:,.0f} req/s" if key == "rps" else figure.format(value)
    return f"{label} ({shown}, {judge(*column)})"


def summary_lines(levels: Iterable[LevelResult]) -> list[str]:
    """One line per level: "concurrency 50: most req/s X (...); lowest p99 Y (...)"."""
    groups = group_levels(levels)
    several_scenarios = len({group.scenario for group in groups}) > 1
    lines = []
    for group in groups:
        title = f"{group.scenario} - {group.level}" if several_scenarios else group.level
        if len(group.columns) == 1:
            lines.append(f"{title}: {_best(group, 'rps')}")
            continue
        lines.append(f"{title}: most req/s {_best(group, 'rps')}; lowest p99 {_best(group, 'p99')}")
    return lines
