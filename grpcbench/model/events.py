"""Run events: how the runner tells the outside world what happens (locust-style).

The runner knows nothing about terminals; the CLI passes a console
implementation (progress bar), tests pass ``NullEvents`` or a recorder.
"""

from __future__ import annotations

from typing import Protocol

from grpcbench.model.intervals import IntervalFigures
from grpcbench.model.results import LevelResult


class RunEvents(Protocol):
    def server_starting(self, label: str) -> None: ...
    def server_ready(self, label: str, address: str, pid: int | None) -> None: ...
    def level_started(self, label: str, driver: str, level: str, total: int) -> None: ...
    def level_progress(self, done: int, errors: int) -> None: ...
    def level_interval(self, figures: IntervalFigures) -> None: ...
    def level_finished(self, level: LevelResult) -> None: ...
    def warning(self, message: str) -> None: ...


class NullEvents:
    def server_starting(self, label: str) -> None:
        pass

    def server_ready(self, label: str, address: str, pid: int | None) -> None:
        pass

    def level_started(self, label: str, driver: str, level: str, total: int) -> None:
        pass

    def level_progress(self, done: int, errors: int) -> None:
        pass

    def level_interval(self, figures: IntervalFigures) -> None:
        pass

    def level_finished(self, level: LevelResult) -> None:
        pass

    def warning(self, message: str) -> None:
        pass
