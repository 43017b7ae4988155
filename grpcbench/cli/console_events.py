"""Run events shown on a terminal: where the run is, how the level goes, when it ends.

One progress line per level, as pip and pytest users expect: the position in
the run ("server 2/6 · level 3/4"), done/total, the live rate and the errors so
far, and an estimate of the whole run's remaining time from the levels done.
"""

from __future__ import annotations

import time

from rich.console import Console
from rich.markup import escape
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    SpinnerColumn,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
)

from grpcbench.base.secrets import redact
from grpcbench.base.text import printable
from grpcbench.base.units import format_latency_us
from grpcbench.model.intervals import IntervalFigures, LiveUsage
from grpcbench.model.results import LevelResult


def _duration(seconds: float) -> str:
    minutes, rest = divmod(int(seconds + 0.5), 60)
    return f"{minutes}m{rest:02d}s" if minutes else f"{rest}s"


# Off a terminal, how often a level in progress prints a line.
PLAIN_EVERY_S = 10.0


class ConsoleEvents:
    wants_usage = False
    # Why the run's --debug log could not be written (a full disk); None when it could,
    # or when there is none (cli.debug_log sets it).
    unwritten: str | None = None

    def __init__(self, console: Console, columns: int = 0, levels_per_column: int = 0) -> None:
        """``columns`` x ``levels_per_column`` levels in all (0: unknown, no ETA)."""
        self.console = console
        self.progress = Progress(
            SpinnerColumn(),
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[live]}"),
            TimeElapsedColumn(),
            TextColumn("{task.fields[eta]}"),
            console=console,
            transient=True,
        )
        self._task: TaskID | None = None
        self.columns = columns
        self.levels_per_column = levels_per_column
        self._column = 0
        self._level = 0
        self._run_started = time.monotonic()
        self._levels_done = 0
        self._measuring_since = 0.0
        # Off a terminal (CI logs, `2> log`) the progress bar draws nothing: a plain
        # line every PLAIN_EVERY_S says the level is alive and how it goes.
        self._plain = not console.is_terminal
        self._plain_at = 0.0

    def __enter__(self) -> ConsoleEvents:
        self._run_started = time.monotonic()
        self.progress.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.progress.stop()

    def _eta(self) -> str:
        total = self.columns * self.levels_per_column
        if not total or not self._levels_done:
            return ""
        per_level = (time.monotonic() - self._run_started) / self._levels_done
        left = max(0, total - self._levels_done) * per_level
        return f"run ETA {_duration(left)}"

    def server_starting(self, label: str, starts: bool = True) -> None:
        if self._level == 0 or self._level >= self.levels_per_column:
            self._column += 1
            self._level = 0
        # A running target is reached, not started (nothing is pinned or launched).
        self.console.print(f"[bold]{escape(label)}[/]: {'starting' if starts else 'connecting'}")

    def server_ready(self, label: str, address: str, pid: int | None) -> None:
        suffix = f" (pid {pid})" if pid else ""
        self.console.print(f"[bold]{escape(label)}[/]: ready on {address}{suffix}")

    def level_started(self, label: str, driver: str, level: str, total: int) -> None:
        if self._task is not None:
            self.progress.remove_task(self._task)
        self._level += 1
        where = ""
        if self.columns:
            column = min(self._column, self.columns)
            where = (
                f"server {column}/{self.columns} · level {self._level}/{self.levels_per_column} · "
            )
        self._measuring_since = 0.0
        self._plain_at = time.monotonic()
        self._task = self.progress.add_task(
            escape(f"{where}{label} [{driver}] {level}"),
            total=total or None,
            live="warm-up",
            eta=self._eta(),
        )

    def level_progress(self, done: int, errors: int) -> None:
        if self._task is None:
            return
        now = time.monotonic()
        if not self._measuring_since:
            self._measuring_since = now
        elapsed = now - self._measuring_since
        rate = f"{done / elapsed:,.0f} req/s" if elapsed > 0.2 and done else "measuring"
        failed = f", [red]{errors} errors[/]" if errors else ""
        self.progress.update(self._task, completed=done, live=rate + failed, eta=self._eta())
        if self._plain and now - self._plain_at >= PLAIN_EVERY_S:
            self._plain_at = now
            self.console.print(f"    {elapsed:.0f} s measured: {done:,} calls, {rate}{failed}")

    def level_interval(self, figures: IntervalFigures) -> None:
        """--interval, live: one line per interval as the generators close it."""
        self.console.print(f"    {interval_line(figures)}")

    def level_usage(self, usage: LiveUsage) -> None:
        """The terminal shows a level's usage at its end, in the table."""

    def probe_judged(
        self, server: str, number: int, phase: str, rate: float, slo: str, outcome: str
    ) -> None:
        """The capacity table shows every probe at the end."""

    def capacity_found(self, server: str, slo: str, capacity: float | None,
                       confirmed: float | None) -> None:  # fmt: skip
        """The capacity table shows it at the end."""

    def level_finished(self, level: LevelResult) -> None:
        self._levels_done += 1
        load = level.measured
        verdict = level.verdict
        flag = "" if verdict == "server-bound" else f" [yellow]{verdict}[/]"
        errors = load.count - load.ok
        error_text = f", [red]{errors} errors[/]" if errors else ""
        self.console.print(
            f"  {level.describe()}"
            f" {escape(f'[{level.driver}]')}:"
            f" {load.count} calls"
            f"{error_text}, {load.rps:,.0f} req/s,"
            f" p50 {format_latency_us(load.latency.percentile_us(50))},"
            f" p99 {format_latency_us(load.latency.percentile_us(99))}{flag}"
        )

    def warning(self, message: str) -> None:
        self.console.print(f"[yellow]warning:[/] {escape(printable(redact(message)))}")


def interval_line(figures: IntervalFigures) -> str:
    """One interval as the live view prints it. An interval in which no call finished
    says so: "0 req/s, p50 0.00 ms" would read as a perfect second."""
    span = f"{figures.start_s:6.1f}-{figures.end_s:.1f} s: "
    offered = f" of {figures.offered:,.0f}/s offered" if figures.offered else ""
    in_flight = f", {figures.in_flight} in flight" if figures.in_flight else ""
    if not figures.calls:
        return f"{span}[yellow]no call finished[/]{offered}{in_flight}"
    failed = f", [red]{figures.failed} non-OK[/]" if figures.failed else ""
    return (
        f"{span}{figures.rate:,.0f} req/s{offered},"
        f" p50 {format_latency_us(figures.latency.percentile_us(50))},"
        f" p99 {format_latency_us(figures.latency.percentile_us(99))}{failed}"
    )
