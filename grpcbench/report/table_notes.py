"""The notes under a comparison table: what a column's figures mean (a saturated
generator, failed calls, a truncated level), its workers, its spread over repeats,
the verdicts, and how two drivers' columns compare."""

from __future__ import annotations

from grpcbench.base.units import (
    format_latency_us,
)
from grpcbench.load.catalogue import DRIVERS
from grpcbench.model.level_parts import WorkerFigures
from grpcbench.model.verdict import Verdict, judge, note
from grpcbench.report.check_rows import check_notes
from grpcbench.report.figures import FIGURES, Spread
from grpcbench.report.figures import mean as _mean
from grpcbench.report.table_base import CHECKED_FOR_STABILITY, WARNING, Column
from grpcbench.report.table_rows import top_errors


def _column_notes(column: Column, label: str) -> list[str]:
    """Warnings about one cell, once however many repeats it holds."""
    notes: list[str] = []
    behind = [lv.measured.schedule_lag for lv in column if lv.measured.behind_schedule]
    if behind:
        p99 = max(lag.percentile_us(99) for lag in behind if lag)
        worst = max(lag.max_us for lag in behind if lag)
        notes.append(
            f"{WARNING} {label}: the generator fell behind its pacer (send lag"
            f" p99 {format_latency_us(p99)}, max {format_latency_us(worst)});"
            " latencies still count from the intended send times, but the offered load was"
            " lower than the target rate."
        )
    latency_notes = [lv.measured.latency_note for lv in column if lv.measured.latency_note]
    for text in dict.fromkeys(latency_notes):
        notes.append(f"{WARNING} {label}: {text}.")
    if any(lv.measured.truncated for lv in column):
        notes.append(
            f"{WARNING} {label}: the level hit its time limit (--max-level) and stopped early."
        )
    count = sum(lv.measured.count for lv in column)
    failed = sum(lv.unexpected for lv in column)
    if failed:
        expected = column[0].expected
        what = (
            "failed"
            if expected == ("OK",)
            else f"ended other than {', '.join(expected)} (--expect-status)"
        )
        notes.append(f"{WARNING} {label}: {failed} of {count} calls {what}{top_errors(column)}.")
    notes += check_notes(column, label)
    notes += _worker_notes(column, label)
    for worker in (w for lv in column for w in lv.measured.workers if w.saturated):
        notes.append(
            f"{WARNING} {label}: cluster worker {worker.address} was saturated"
            f" (saturation {worker.saturation:.0%}: its CPU budget used or lost to"
            f" neighbours; CPU {_cpu_per_wall(worker)} of wall time; {worker.calls} calls,"
            f" {worker.calls / worker.wall_s if worker.wall_s else 0:,.0f} req/s)."
        )
    return notes


SHOWN_WORKERS = 8


def _cpu_per_wall(worker: WorkerFigures) -> str:
    """The worker's CPU time over its wall time (one core = 100%), beside saturation,
    which also counts the CPU that neighbours took from it."""
    return f"{worker.cpu_s / worker.wall_s:.0%}" if worker.wall_s else "-"


def _worker_notes(column: Column, label: str) -> list[str]:
    """--cluster: each worker's share of the level (all of them in the JSON)."""
    workers = [w for lv in column for w in lv.measured.workers]
    if not workers:
        return []
    shown = [
        f"{w.address} {w.calls:,} calls"
        + (f", p99 {format_latency_us(w.p99_us)}" if w.p99_us else "")
        + f", CPU {_cpu_per_wall(w)} of wall time, saturation {w.saturation:.0%}"
        for w in workers[:SHOWN_WORKERS]
    ]
    more = len(workers) - SHOWN_WORKERS
    tail = f"; and {more} more (in the JSON)" if more > 0 else ""
    return [f"{label}: cluster workers: {'; '.join(shown)}{tail}."]


def _stability_notes(column: Column, label: str) -> list[str]:
    unstable = []
    for key in CHECKED_FOR_STABILITY:
        figure = FIGURES[key]
        spread = Spread.of([figure.value(level) for level in column])
        if spread.unstable:
            unstable.append(f"{figure.label} {spread.relative:.0%}")
    if not unstable:
        return []
    return [
        f"{WARNING} {label}: unstable over {len(column)} repeats (standard deviation / mean):"
        f" {', '.join(unstable)}."
    ]


def table_notes(columns: list[Column], labels: list[str]) -> list[str]:
    notes: list[str] = []
    by_verdict: dict[Verdict, list[str]] = {}
    for column, label in zip(columns, labels, strict=True):
        by_verdict.setdefault(judge(*column), []).append(label)
    for verdict, sharing in by_verdict.items():
        if note(verdict, sharing):
            notes.append(f"{WARNING} {note(verdict, sharing)}")
    for column, label in zip(columns, labels, strict=True):
        notes += _column_notes(column, label)
        notes += _stability_notes(column, label)
    notes += _driver_comparisons(columns)
    for driver in dict.fromkeys(column[0].driver for column in columns):
        if driver in DRIVERS and DRIVERS[driver].note:
            notes.append(DRIVERS[driver].note)
    return notes


def _ratio(value: float, reference: float) -> str:
    return f"{value / reference:.2f}x" if reference else "n/a"


def _driver_comparisons(columns: list[Column]) -> list[str]:
    """Per server measured by several drivers: each driver against the first one."""
    by_server: dict[str, list[Column]] = {}
    for column in columns:
        by_server.setdefault(column[0].server, []).append(column)
    notes = []
    for server, measured in by_server.items():
        reference = measured[0]
        for other in measured[1:]:
            ratios = ", ".join(
                f"{FIGURES[key].label} "
                + _ratio(
                    _mean(FIGURES[key].value(lv) for lv in other),
                    _mean(FIGURES[key].value(lv) for lv in reference),
                )
                for key in ("rps", "p50", "p99")
            )
            notes.append(f"{server}: {other[0].driver} / {reference[0].driver} = {ratios}")
    return notes
