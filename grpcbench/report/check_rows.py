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
            checks = [c for lv in column for c in lv.measured.checks if c.name == name]
            count = sum(c.count for c in checks)
            return f" ({sum(c.passed for c in checks) / count:.1%})" if count else ""

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
        checks = [c for lv in column for c in lv.measured.checks if c.name == name]
        failed, count = sum(c.failed for c in checks), sum(c.count for c in checks)
        if failed:
            notes.append(
                f"{WARNING} {label}: check {name} failed {failed} of {count} times"
                " (a failed check fails no call)."
            )
    return notes
