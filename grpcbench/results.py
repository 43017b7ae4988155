"""Versioned run results: what was measured, with what, and whether the run finished.

The JSON file is rewritten (atomically) after every level, so a run that is
interrupted or fails keeps everything it measured; ``status`` says which.
Bump ``FORMAT_VERSION`` whenever the layout changes, and keep ``load_run``
able to read older versions.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from grpcbench.errors import UsageError
from grpcbench.load.model import LoadResult
from grpcbench.monitor import ProcessUsage

FORMAT_VERSION = 1


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


@dataclass(frozen=True)
class LevelResult:
    """One server (column) at one concurrency level, driven by one driver."""

    scenario: str
    server: str
    driver: str
    concurrency: int
    load: LoadResult
    server_usage: ProcessUsage | None
    started_at: str
    finished_at: str
    connection: str = ""  # client connection strategy (auto, shared, pool:N, per-request)
    channels: int = 0  # the swept --channels value of this level; 0 when not swept
    rate: float = 0.0  # the open-loop target rate of this level; 0 for a closed loop
    repeat: int = 0  # which of the --repeat runs (0-based); each in fresh server processes
    variant: str = ""  # the scenario's workload variant, if it has several

    def describe(self) -> str:
        """The level's name in tables: "concurrency 10", "rate 500/s, channels 2", ..."""
        from grpcbench.options import describe_level

        return describe_level(self.concurrency, self.channels, self.rate, self.variant)

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["load"] = self.load.to_json()
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> LevelResult:
        data = dict(data)
        data["load"] = LoadResult.from_json(data["load"])
        usage = data.get("server_usage")
        data["server_usage"] = ProcessUsage(**usage) if usage else None
        return cls(**data)


@dataclass
class RunRecord:
    """A run in progress or finished; the only mutable result object."""

    options: dict[str, Any]
    metadata: dict[str, Any]
    started_at: str = field(default_factory=now_iso)
    finished_at: str | None = None
    status: str = "running"  # running | complete | interrupted | failed
    error: str | None = None
    levels: list[LevelResult] = field(default_factory=list)
    # "server [driver] concurrency N: message" for every level a driver could not measure.
    level_errors: list[str] = field(default_factory=list)

    def finish(self, status: str, error: str | None = None) -> None:
        self.status = status
        self.error = error
        self.finished_at = now_iso()

    def to_json(self) -> dict[str, Any]:
        return {
            "format_version": FORMAT_VERSION,
            "tool": "grpcbench",
            "status": self.status,
            "error": self.error,
            "started_at": self.started_at,
            "finished_at": self.finished_at,
            "metadata": self.metadata,
            "options": self.options,
            "levels": [level.to_json() for level in self.levels],
            "level_errors": self.level_errors,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> RunRecord:
        version = data.get("format_version")
        if version != FORMAT_VERSION:
            raise UsageError(f"unsupported results format version {version!r}")
        return cls(
            options=data["options"],
            metadata=data["metadata"],
            started_at=data["started_at"],
            finished_at=data.get("finished_at"),
            status=data["status"],
            error=data.get("error"),
            levels=[LevelResult.from_json(level) for level in data["levels"]],
            level_errors=list(data.get("level_errors", [])),
        )


def write_json_atomically(path: Path, data: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(data, indent=2) + "\n")
    os.replace(tmp, path)


def load_run(path: Path) -> RunRecord:
    try:
        return RunRecord.from_json(json.loads(path.read_text()))
    except (OSError, json.JSONDecodeError, KeyError, TypeError) as error:
        raise UsageError(f"cannot read results file {path}: {error}") from None
