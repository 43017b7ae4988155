"""``grpcbench compare A.json B.json``: how B differs from A, and whether it matters.

For every scenario, level, server and driver present in both files, each figure
(Requests/sec, average, p50, p99, ...) is compared as the ratio B / A of the
means over repeats, with its uncertainty. A difference counts as significant
when Welch's t statistic exceeds 2 (about 95% confidence); with fewer than two
repeats on either side significance is unknown. ``--fail-on rps:-5%,p99:+10%``
turns regressions beyond those changes into a non-zero exit, for CI.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from grpcbench.errors import UsageError
from grpcbench.report.figures import FIGURES, Figure, Spread
from grpcbench.report.table import LevelKey, level_key
from grpcbench.results import LevelResult, RunRecord

SIGNIFICANT_T = 2.0
DEFAULT_FIGURES = ("rps", "avg", "p50", "p99")


@dataclass(frozen=True)
class Difference:
    where: str  # "hello - concurrency 50 - grpclib [builtin]"
    figure: Figure
    a: Spread
    b: Spread

    @property
    def ratio(self) -> float:
        return self.b.mean / self.a.mean if self.a.mean else math.inf

    @property
    def ratio_error(self) -> float:
        """One standard deviation of the ratio (relative errors added in quadrature)."""
        return abs(self.ratio) * math.hypot(self.a.relative, self.b.relative)

    @property
    def change(self) -> float:
        """Relative change B vs A: +0.10 is 10% higher."""
        return self.ratio - 1.0

    @property
    def significant(self) -> bool | None:
        if self.a.n < 2 or self.b.n < 2:
            return None
        error = math.sqrt(self.a.stdev**2 / self.a.n + self.b.stdev**2 / self.b.n)
        if error == 0:
            return self.a.mean != self.b.mean
        return abs(self.b.mean - self.a.mean) / error > SIGNIFICANT_T

    @property
    def better(self) -> bool:
        return (self.ratio > 1) == self.figure.higher_is_better

    def describe(self) -> str:
        spread = f" ± {self.ratio_error:.2f}" if self.ratio_error else ""
        verdict = {True: "significant", False: "not significant", None: "significance unknown"}[
            self.significant
        ]
        direction = "better" if self.better else "worse"
        if self.ratio == 1:
            direction = "same"
        return (
            f"{self.where}: {self.figure.label} {self.figure.format(self.a.mean)} ->"
            f" {self.figure.format(self.b.mean)} = {self.ratio:.2f}{spread}x ({direction},"
            f" {verdict})"
        )


def _columns(record: RunRecord) -> dict[tuple[LevelKey, str, str], list[LevelResult]]:
    """(level key, server, driver) -> the repeats of that column."""
    columns: dict[tuple[LevelKey, str, str], list[LevelResult]] = {}
    for level in record.levels:
        columns.setdefault((level_key(level), level.server, level.driver), []).append(level)
    return columns


def compare_runs(
    a: RunRecord, b: RunRecord, figures: tuple[str, ...] = DEFAULT_FIGURES
) -> list[Difference]:
    a_columns, b_columns = _columns(a), _columns(b)
    common = [key for key in a_columns if key in b_columns]
    if not common:
        raise UsageError("the two results files have no scenario, level and server in common")
    differences = []
    for key in common:
        first = a_columns[key][0]
        where = f"{first.scenario} - {first.describe()} - {first.server} [{first.driver}]"
        for name in figures:
            figure = FIGURES[name]
            differences.append(
                Difference(
                    where,
                    figure,
                    Spread.of([figure.value(level) for level in a_columns[key]]),
                    Spread.of([figure.value(level) for level in b_columns[key]]),
                )
            )
    return differences


@dataclass(frozen=True)
class Threshold:
    figure: Figure
    change: float  # -0.05 for "rps:-5%": fail when B is more than 5% lower


def parse_fail_on(text: str) -> list[Threshold]:
    """``rps:-5%,p99:+10%`` -> thresholds; the sign says which direction is a regression."""
    thresholds = []
    for item in text.split(","):
        name, _, value = item.strip().partition(":")
        figure = FIGURES.get(name.strip())
        number = value.strip().rstrip("%")
        try:
            change = float(number) / 100
        except ValueError:
            change = math.nan
        if figure is None or not value.strip().endswith("%") or math.isnan(change) or not change:
            known = ", ".join(FIGURES)
            raise UsageError(
                f"bad --fail-on {item.strip()!r}: expected FIGURE:+N% or FIGURE:-N%"
                f" (figures: {known}), e.g. rps:-5%,p99:+10%"
            )
        thresholds.append(Threshold(figure, change))
    return thresholds


def regressions(differences: list[Difference], thresholds: list[Threshold]) -> list[str]:
    failed = []
    for threshold in thresholds:
        for difference in differences:
            if difference.figure.key != threshold.figure.key:
                continue
            change = difference.change
            beyond = (
                change < threshold.change if threshold.change < 0 else change > threshold.change
            )
            if beyond:
                failed.append(
                    f"{difference.where}: {difference.figure.label} changed {change:+.1%}"
                    f" (limit {threshold.change:+.0%})"
                )
    return failed
