"""ghz's ``--debug FILE``: a log of what the run did, line by line, as it happens.

It wraps the console's events, so the log sees what the terminal sees: servers
starting, each level's start, progress every second, end figures and statuses,
and every warning; the run's command line (secrets masked) comes first. Nothing
is kept in memory; each line is flushed, so a run that is killed keeps its log.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime
from pathlib import Path
from typing import TextIO

from rich.console import Console

from grpcbench.base.errors import UsageError
from grpcbench.cli.console_events import ConsoleEvents
from grpcbench.model.intervals import IntervalFigures
from grpcbench.model.results import LevelResult

PROGRESS_EVERY_S = 1.0


class DebugLog(ConsoleEvents):
    """The console's events, each also written to ``path`` as a timestamped line."""

    def __init__(
        self, path: Path, argv: list[str], console: Console, columns: int, levels_per_column: int
    ) -> None:
        super().__init__(console, columns, levels_per_column)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            self._file: TextIO = path.open("a", encoding="utf-8", buffering=1)
        except OSError as error:
            raise UsageError(f"--debug {path}: {error.strerror or error}") from None
        self._last_progress = 0.0
        self._path = path
        # Once the log cannot be written (a full disk), ``unwritten`` says why: the run
        # goes on, says so once, and the command ends with 2, as for any output.
        self._line("run", " ".join(argv))

    def _line(self, event: str, text: str) -> None:
        # Closed at the run's end: what follows (an output that cannot be written) is
        # said on the terminal only.
        if self.unwritten or self._file.closed:
            return
        stamp = datetime.now(UTC).isoformat(timespec="microseconds").replace("+00:00", "Z")
        try:
            self._file.write(f"{stamp} {event}: {text}\n")
        except OSError as error:
            self.unwritten = f"cannot write --debug {self._path}: {error.strerror or error}"
            self.warning(f"{self.unwritten} (the run goes on)")

    def __exit__(self, *exc: object) -> None:
        super().__exit__(*exc)
        self._line("end", "interrupted" if exc and exc[0] is KeyboardInterrupt else "done")
        try:
            self._file.close()
        except OSError as error:  # the last line's flush
            self.unwritten = self.unwritten or f"cannot write --debug {self._path}: {error}"

    def server_starting(self, label: str, starts: bool = True) -> None:
        self._line("server starting" if starts else "target", label)
        super().server_starting(label, starts)

    def server_ready(self, label: str, address: str, pid: int | None) -> None:
        self._line("server ready", f"{label} on {address}" + (f" (pid {pid})" if pid else ""))
        super().server_ready(label, address, pid)

    def level_started(self, label: str, driver: str, level: str, total: int) -> None:
        self._line("level started", f"{label} [{driver}] {level}, {total} calls")
        super().level_started(label, driver, level, total)

    def level_progress(self, done: int, errors: int) -> None:
        now = time.monotonic()
        if now - self._last_progress >= PROGRESS_EVERY_S:
            self._last_progress = now
            self._line("progress", f"{done} calls, {errors} failed")
        super().level_progress(done, errors)

    def level_interval(self, figures: IntervalFigures) -> None:
        self._line("interval", f"{figures.ok} OK, {figures.failed} failed")
        super().level_interval(figures)

    def level_finished(self, level: LevelResult) -> None:
        load = level.measured
        statuses = ", ".join(f"{name} {n}" for name, n in sorted(load.statuses.items()))
        self._line(
            "level finished",
            f"{level.server} {level.describe()}: {load.count} calls in {load.wall_s:.3f}s,"
            f" {load.rps:.1f}/s, p50 {load.latency.percentile_us(50)}us,"
            f" p99 {load.latency.percentile_us(99)}us; statuses {statuses or 'none'}",
        )
        for error, n in sorted(load.errors.items()):
            self._line("errors", f"{n} x {error}")
        super().level_finished(level)

    def warning(self, message: str) -> None:
        self._line("warning", message)
        super().warning(message)
