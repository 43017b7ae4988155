"""The comparison table model shared by the console, markdown and HTML exporters.

One table per scenario and level, servers (and drivers) side by side, rows in
the seed's order plus percentiles and resource use. A column holds every
repeat of its level (``--repeat``); a figure measured more than once shows as
mean ± standard deviation and is flagged when its spread exceeds 10%.
Building the model once keeps every format showing the same figures, and every
text from outside (a server's error message, a results file's names) printable. Its rows
are ``table_rows``'s, its notes ``table_notes``'s.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from grpcbench.base.text import printable
from grpcbench.model.plan import LevelPlan
from grpcbench.model.results import LevelError, LevelResult
from grpcbench.model.thresholds import Threshold, breaches
from grpcbench.report.table_base import WARNING, Column
from grpcbench.report.table_notes import table_notes
from grpcbench.report.table_rows import column_label, table_rows


@dataclass(frozen=True)
class ComparisonTable:
    scenario: str
    level: str  # "concurrency 10", "rate 500/s", "concurrency 10, channels 4"
    columns: tuple[str, ...]
    rows: tuple[tuple[str, tuple[str, ...]], ...]
    notes: tuple[str, ...]

    @property
    def title(self) -> str:
        return f"{self.scenario} - {self.level}"


LevelKey = tuple[str, float, int, int, str]


def plan_key(plan: LevelPlan) -> tuple[float, int, int, str]:
    """What makes two plans the same level: rate, concurrency, channels, variant."""
    return (plan.rate, plan.concurrency, plan.channels, plan.variant)


def level_key(level: LevelResult) -> LevelKey:
    """Levels with the same key share a table: their scenario and their plan's key."""
    return (level.scenario, *plan_key(level.plan))


@dataclass(frozen=True)
class LevelGroup:
    """The columns measured at one level, labelled as the tables label them."""

    scenario: str
    level: str
    labels: tuple[str, ...]
    columns: tuple[Column, ...]


def group_levels(levels: Iterable[LevelResult]) -> list[LevelGroup]:
    """Results grouped by level (tables) and by server and driver (columns), in order:
    by rate, concurrency and channels; variants in the scenario's order."""
    groups: dict[LevelKey, dict[tuple[str, str], Column]] = {}
    for level in levels:
        group = groups.setdefault(level_key(level), {})
        group.setdefault((level.server, level.driver), []).append(level)
    found = []
    for (scenario, *_), by_column in sorted(groups.items(), key=lambda kv: kv[0][1:4]):
        columns = tuple(by_column.values())
        several_drivers = len({driver for _, driver in by_column}) > 1
        labels = tuple(column_label(column[0], several_drivers) for column in columns)
        found.append(LevelGroup(scenario, columns[0][0].describe(), labels, columns))
    return found


def build_tables(
    levels: Iterable[LevelResult],
    unavailable: Iterable[LevelError] = (),
    thresholds: Sequence[Threshold] = (),
) -> list[ComparisonTable]:
    """One table per level, servers (and drivers) side by side; a server kind that
    cannot run the level gets a note instead of a column, a breached ``--threshold``
    a note of its own."""
    skipped = list(unavailable)
    tables = []
    for group in group_levels(levels):
        columns = list(group.columns)
        rows = tuple((row.name, tuple(row.cell(c) for c in columns)) for row in table_rows(columns))
        key = plan_key(columns[0][0].plan)
        missing = [
            f"{WARNING} {entry.server}: not available on this kind ({entry.message})."
            for entry in skipped
            if entry.plan is not None and plan_key(entry.plan) == key
        ]
        notes = (
            missing
            + [
                f"{WARNING} {breach.describe()}"
                for column in columns
                for breach in breaches(column, thresholds)
            ]
            + table_notes(columns, list(group.labels))
        )
        tables.append(
            ComparisonTable(
                printable(group.scenario),
                printable(group.level),
                tuple(map(printable, group.labels)),
                tuple((printable(name), tuple(map(printable, cells))) for name, cells in rows),
                tuple(map(printable, notes)),
            )
        )
    return tables
