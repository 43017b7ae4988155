"""Real runs, kept in a store one after another: the series change points are found in.

Three projects are run interleaved, run by run, so that whatever the machine does
meanwhile (another job, a cache, a governor) falls on all alike: ``step``, whose
server's handler starts waiting ``delay_ms`` from run ``change_at`` on (the hello
service's ``delay_ms`` server param), and ``flat`` and ``canary``, whose servers never
change. The machine's own changes are real: on a shared runner a series of an
unchanged server can change too, and ``history --control`` tells them apart (the
canary is flat's control, flat is step's).
Used by tests/test_history_detection.py and benchmarks/change_detection.py.
"""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

SERVER = "grpclib"
PROJECTS = ("step", "flat", "canary")


@dataclass(frozen=True)
class Series:
    runs: int = 20
    change_at: int = 12  # the first run (1-based) whose handler waits
    delay_ms: float = 0.5
    calls: int = 500

    def argv(self, url: str, project: str, delay_ms: float) -> list[str]:
        return [
            sys.executable, "-m", "grpcbench", "run", "-s", SERVER, "-c", "1",
            "-n", str(self.calls), "--warmup", "50", "--server-param", f"delay_ms={delay_ms}",
            "--store", url, "--project", project,
        ]  # fmt: skip


def run_series(series: Series, store: Path) -> str:
    """The three projects' runs, stored in ``store`` (SQLite); its URL."""
    url = f"sqlite:///{store}"
    for number in range(1, series.runs + 1):
        step_delay = series.delay_ms if number >= series.change_at else 0.0
        for project in PROJECTS:
            delay = step_delay if project == "step" else 0.0
            done = subprocess.run(series.argv(url, project, delay), capture_output=True,
                                  text=True, timeout=120, check=False)  # fmt: skip
            if done.returncode != 0:
                raise RuntimeError(f"run {number} of {project} failed: {done.stderr[-500:]}")
    return url


def history_json(
    url: str, project: str, figure: str = "p50", control: str | None = None
) -> dict[str, Any]:
    against = ["--control", control] if control else []
    done = subprocess.run(
        [sys.executable, "-m", "grpcbench", "history", "--store", url, "--project", project,
         "--figure", figure, "--format", "json", *against],
        capture_output=True, text=True, timeout=120, check=True,
    )  # fmt: skip
    found: dict[str, Any] = json.loads(done.stdout)
    return found


def found_at(history: dict[str, Any], kinds: tuple[str, ...] = ()) -> list[int]:
    """The 1-based run numbers where change points (of ``kinds``; any) start."""
    numbers = {run["id"]: n for n, run in enumerate(history["runs"], 1)}
    return [numbers[change["run_id"]] for change in history["change_points"]
            if not kinds or change["kind"] in kinds]  # fmt: skip
