"""Run events shown on a terminal: a progress bar per level and a line per result."""

from __future__ import annotations

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

from grpcbench.report.units import format_latency_us
from grpcbench.results import LevelResult
from grpcbench.secrets import redact


class ConsoleEvents:
    def __init__(self, console: Console) -> None:
        self.console = console
        self.progress = Progress(
            SpinnerColumn(),
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=console,
            transient=True,
        )
        self._task: TaskID | None = None

    def __enter__(self) -> ConsoleEvents:
        self.progress.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.progress.stop()

    def server_starting(self, label: str) -> None:
        self.console.print(f"[bold]{escape(label)}[/]: starting")

    def server_ready(self, label: str, address: str, pid: int | None) -> None:
        suffix = f" (pid {pid})" if pid else ""
        self.console.print(f"[bold]{escape(label)}[/]: ready on {address}{suffix}")

    def level_started(self, label: str, driver: str, level: str, total: int) -> None:
        if self._task is not None:
            self.progress.remove_task(self._task)
        self._task = self.progress.add_task(
            escape(f"{label} [{driver}] {level}"), total=total or None
        )

    def level_progress(self, done: int) -> None:
        if self._task is not None:
            self.progress.update(self._task, completed=done)

    def level_finished(self, level: LevelResult) -> None:
        load = level.load
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
        self.console.print(f"[yellow]warning:[/] {escape(redact(message))}")
