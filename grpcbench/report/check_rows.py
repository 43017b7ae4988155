"""A flow's checks in the table (``client.check``, k6's ``check()``): a pair of rows per
check, how often it held and how often not, with the share that held."""

from __future__ import annotations

from functools import partial

from grpcbench.model.results import LevelResult
from grpcbench.report.table_base import WARNING, Column, Row, count_cell


def check_rows(columns: list[Column]) -> list[Row]:
    names = dict.fromkeys(c.name for column in columns for lv in column for c in lv.measured.checks)
    rows: list[Row] = []
    for name in names:

        def counted(lv: LevelResult, passed: bool, name: str = name) -> float | None:
            check = next((c for c in lv.measured.checks if c.name == name), None)
            if check is None:
                return None
            return float(check.passed if passed else check.failed)

        def share(column: Column, name: str = name) -> str:
            passed, failed = _totals(column, name)
            return f" ({passed / (passed + failed):.1%})" if passed + failed else ""

        rows += [
            Row(f"check {name} · passed", partial(counted, passed=True), count_cell, share),
            Row(f"check {name} · failed", partial(counted, passed=False), count_cell),
        ]
    return rows


def check_notes(column: Column, label: str) -> list[str]:
    """A warning per check that failed at least once in the column."""
    names = dict.fromkeys(c.name for lv in column for c in lv.measured.checks)
    notes = []
    for name in names:
        passed, failed = _totals(column, name)
        if failed:
            notes.append(
                f"{WARNING} {label}: check {name} failed {failed} of {passed + failed} times"
                " (a failed check fails no call)."
            )
    return notes


def _totals(column: Column, name: str) -> tuple[int, int]:
    """A check's passes and failures over the column's levels (its repeats)."""
    checks = [c for lv in column for c in lv.measured.checks if c.name == name]
    return sum(c.passed for c in checks), sum(c.failed for c in checks)
