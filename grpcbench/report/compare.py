"""``grpcbench compare A.json B.json``: how B differs from A, and whether it matters.

For every scenario, level, server and driver present in both files, each figure
(Requests/sec, average, p50, p99, ...) is compared as the ratio B / A of the
means over repeats, with its uncertainty.

Significance is Welch's t-test with Welch-Satterthwaite degrees of freedom
(scipy's ``ttest_ind_from_stats(equal_var=False)``, the ``stats`` extra): the
repeats of each side are the samples, and a difference is significant when its
two-sided p-value is below ``--alpha`` (default 0.05). With 3 repeats a side
that asks for a t of about 2.8 to 4.3, not 2. With one run on either side there
is no run-to-run variance to test, and significance is unknown.

Two ``grpcbench capacity`` runs compare their capacities instead, per server kind
and SLO, the samples being each side's confirmation runs that passed
(``--fail-on capacity:-5%``).

``--fail-on rps:-5%,p99:+10%`` fails (exit 1) only on a change beyond its
threshold *and* significant; ``--no-significance`` gates on the threshold alone
(the only way to gate single runs).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from grpcbench.base.errors import UsageError
from grpcbench.capacity.probe import achieved_rate
from grpcbench.capacity.record import CapacityRecord
from grpcbench.model.results import LevelResult, RunRecord
from grpcbench.report.figures import FIGURES, Figure, Spread
from grpcbench.report.table import LevelKey, level_key

DEFAULT_ALPHA = 0.05
DEFAULT_FIGURES = ("rps", "avg", "p50", "p99")


def welch_p_value(a: Spread, b: Spread) -> float | None:
    """Two-sided p-value of Welch's t-test from the two sides' summaries; None with
    fewer than two samples on a side (no run-to-run variance to test)."""
    if a.n < 2 or b.n < 2:
        return None
    if a.stdev == 0 and b.stdev == 0:
        return 1.0 if a.mean == b.mean else 0.0
    try:
        from scipy.stats import ttest_ind_from_stats
    except ImportError:
        raise UsageError(
            "significance needs scipy: pip install 'grpcbench[stats]' (or --no-significance)"
        ) from None
    result = ttest_ind_from_stats(b.mean, b.stdev, b.n, a.mean, a.stdev, a.n, equal_var=False)
    return float(result.pvalue)


@dataclass(frozen=True)
class Difference:
    where: str  # "hello - concurrency 50 - grpclib [builtin]"
    figure: Figure
    a: Spread
    b: Spread
    alpha: float = DEFAULT_ALPHA

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
    def p_value(self) -> float | None:
        return welch_p_value(self.a, self.b)

    @property
    def significant(self) -> bool | None:
        p = self.p_value
        return None if p is None else p < self.alpha

    @property
    def better(self) -> bool:
        return (self.ratio > 1) == self.figure.higher_is_better

    def describe(self) -> str:
        spread = f" ± {self.ratio_error:.2f}" if self.ratio_error else ""
        p = self.p_value
        verdict = (
            "significance unknown: one run a side"
            if p is None
            else f"{'significant' if p < self.alpha else 'not significant'}, p={p:.3g}"
        )
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


# A capacity run's figure: the highest rate within the SLO (``grpcbench capacity``).
CAPACITY = Figure(
    "capacity", "Capacity", lambda lv: lv.measured.rps, lambda v: f"{v:,.0f} req/s", True
)


def capacities(record: RunRecord) -> dict[tuple[str, str], Spread]:
    """(server, SLO) -> its capacity over the confirmation runs that passed (their
    achieved rates are the samples; without confirmations, the search's one value)."""
    capacity = CapacityRecord.of(record)
    if capacity is None:
        return {}
    found: dict[tuple[str, str], Spread] = {}
    duration = capacity.settings.probe_duration_s
    for one in capacity.found:
        reported = one.reported
        if reported is None:
            continue
        runs = capacity.confirmations(record, one)
        passed = [achieved_rate(level, duration) for level, j in runs if j.outcome == "pass"]
        found[(one.server, one.slo)] = Spread.of(passed) if passed else Spread(reported, 0, 1)
    return found


def compare_capacities(a: RunRecord, b: RunRecord, alpha: float) -> list[Difference]:
    """Two capacity runs: per server kind and SLO in both, capacity B / A, with Welch's
    test over the confirmations."""
    a_found, b_found = capacities(a), capacities(b)
    common = [key for key in a_found if key in b_found]
    if not common:
        raise UsageError("the two capacity runs have no server kind and SLO in common")
    return [
        Difference(f"{a.options.scenario} - {slo} - {server}", CAPACITY,
                   a_found[(server, slo)], b_found[(server, slo)], alpha)
        for server, slo in common
    ]  # fmt: skip


def compare_runs(
    a: RunRecord,
    b: RunRecord,
    figures: tuple[str, ...] = DEFAULT_FIGURES,
    alpha: float = DEFAULT_ALPHA,
) -> list[Difference]:
    if a.capacity is not None or b.capacity is not None:
        if a.capacity is None or b.capacity is None:
            raise UsageError("compare a capacity run with another capacity run")
        return compare_capacities(a, b, alpha)
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
                    alpha,
                )
            )
    return differences


@dataclass(frozen=True)
class ChangeLimit:
    """A limit on a change between two runs (``--fail-on rps:-5%``); not a bound on a
    figure (``stats.bounds``, --threshold and --slo)."""

    figure: Figure
    change: float  # -0.05 for "rps:-5%": fail when B is more than 5% lower


def parse_fail_on(text: str) -> list[ChangeLimit]:
    """``rps:-5%,p99:+10%`` -> thresholds; the sign says which direction is a regression."""
    thresholds = []
    for item in text.split(","):
        name, _, value = item.strip().partition(":")
        figure = {**FIGURES, CAPACITY.key: CAPACITY}.get(name.strip())
        number = value.strip().rstrip("%")
        try:
            change = float(number) / 100
        except ValueError:
            change = math.nan
        if (
            figure is None
            or not value.strip().endswith("%")
            or not math.isfinite(change)
            or not change
        ):
            known = ", ".join([*FIGURES, CAPACITY.key])
            raise UsageError(
                f"bad --fail-on {item.strip()!r}: expected FIGURE:+N% or FIGURE:-N%"
                f" (figures: {known}), e.g. rps:-5%,p99:+10%"
            )
        thresholds.append(ChangeLimit(figure, change))
    return thresholds


@dataclass(frozen=True)
class Gate:
    """What ``--fail-on`` decided: the regressions, and changes it could not judge."""

    failed: list[str]
    untestable: list[str]  # beyond a threshold, but one run a side


def regressions(
    differences: list[Difference],
    thresholds: list[ChangeLimit],
    require_significance: bool = True,
) -> Gate:
    """Changes beyond their threshold (and, unless told otherwise, significant)."""
    failed: list[str] = []
    untestable: list[str] = []
    for threshold in thresholds:
        for difference in differences:
            if difference.figure.key != threshold.figure.key:
                continue
            change = difference.change
            beyond = (
                change < threshold.change if threshold.change < 0 else change > threshold.change
            )
            if not beyond:
                continue
            line = (
                f"{difference.where}: {difference.figure.label} changed {change:+.1%}"
                f" (limit {threshold.change:+.0%})"
            )
            significant = difference.significant
            if not require_significance:
                failed.append(line)
            elif significant is None:
                untestable.append(line)
            elif significant:
                failed.append(f"{line}, p={difference.p_value:.3g} < {difference.alpha:g}")
    return Gate(failed, untestable)


def to_json(differences: list[Difference]) -> list[dict[str, object]]:
    """For ``compare --format json`` (CI bots)."""
    return [
        {
            "where": d.where,
            "figure": d.figure.key,
            "a_mean": d.a.mean,
            "a_stdev": d.a.stdev,
            "a_n": d.a.n,
            "b_mean": d.b.mean,
            "b_stdev": d.b.stdev,
            "b_n": d.b.n,
            "ratio": d.ratio,
            "p_value": d.p_value,
            "significant": d.significant,
            "better": d.better,
        }  # fmt: skip
        for d in differences
    ]


def to_markdown(differences: list[Difference]) -> str:
    """For ``compare --format markdown`` (a CI comment)."""
    lines = ["| where | figure | A | B | B / A | p | verdict |", "|---|---|---|---|---|---|---|"]
    for d in differences:
        p = d.p_value
        verdict = (
            "unknown (1 run a side)"
            if p is None
            else ("**significant**" if p < d.alpha else "not significant")
        )
        direction = "same" if d.ratio == 1 else ("better" if d.better else "worse")
        lines.append(
            f"| {d.where} | {d.figure.label} | {d.figure.format(d.a.mean)} |"
            f" {d.figure.format(d.b.mean)} | {d.ratio:.2f}x {direction} |"
            f" {'-' if p is None else f'{p:.3g}'} | {verdict} |"
        )
    return "\n".join(lines) + "\n"
