"""Several scenarios at once in the table (``model.level_scenarios``): a group of rows
per scenario (its executor, calls, failures, percentiles and rate), under the level's
rows, which are all of them together."""

from __future__ import annotations

from grpcbench.base.units import format_latency_us
from grpcbench.model.failures import part_failures
from grpcbench.model.load_result import ScenarioFigures
from grpcbench.model.results import LevelResult
from grpcbench.report.table_base import Column, Row, count_cell


def scenario_rows(columns: list[Column]) -> list[Row]:
    names: dict[str, str] = {}  # name -> executor, in the order first seen
    for column in columns:
        for lv in column:
            for scenario in lv.measured.scenarios:
                names.setdefault(scenario.name, scenario.executor)
    return [row for name, executor in names.items() for row in _rows_of(name, executor)]


def _rows_of(name: str, executor: str) -> list[Row]:
    """One scenario's rows: its calls, failures, percentiles and rate."""

    def figures(lv: LevelResult) -> ScenarioFigures | None:
        return next((s for s in lv.measured.scenarios if s.name == name), None)

    def calls(lv: LevelResult) -> float | None:
        found = figures(lv)
        return float(found.load.count) if found else None

    def failed(lv: LevelResult) -> float | None:
        """Its calls that ended other than expected (its own, else the level's)."""
        found = figures(lv)
        if found is None:
            return None
        return float(part_failures(found.load.statuses, found.expected, lv.expected))

    def p50(lv: LevelResult) -> float | None:
        return percentile(figures(lv), 50.0)

    def p99(lv: LevelResult) -> float | None:
        return percentile(figures(lv), 99.0)

    def rate(lv: LevelResult) -> float | None:
        found = figures(lv)
        return found.load.rps if found else None

    label = f"scenario {name} ({executor})"
    return [
        Row(f"{label} · calls", calls, count_cell),
        Row(f"{label} · failed", failed, count_cell),
        Row(f"{label} · p50", p50, format_latency_us),
        Row(f"{label} · p99", p99, format_latency_us),
        Row(f"{label} · req/s", rate, lambda v: f"{v:.2f}"),
    ]


def percentile(found: ScenarioFigures | None, at: float) -> float | None:
    if found is None or not found.load.latency.count:
        return None
    return float(found.load.latency.percentile_us(at))
