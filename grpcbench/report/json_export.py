"""JSON exporter: the versioned results file (``results.RunRecord``), written atomically."""

from __future__ import annotations

from pathlib import Path

from grpcbench.results import RunRecord, write_json_atomically


def write_json(record: RunRecord, path: Path) -> None:
    write_json_atomically(path, record.to_json())
