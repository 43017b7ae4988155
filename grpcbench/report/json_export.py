"""JSON exporter: the versioned results file (``results.RunRecord``), written atomically.

Beside the record it carries the run's summary lines (best server per level,
seed 000's variant ratios): derived, for readers of the JSON alone; ignored on load.
"""

from __future__ import annotations

from pathlib import Path

from grpcbench.base.secrets import redact_all
from grpcbench.model.results import RunRecord, write_json_atomically
from grpcbench.report.summary import summary_lines


def write_json(record: RunRecord, path: Path) -> None:
    data = record.to_json()
    data["summary"] = redact_all(summary_lines(record.levels))
    write_json_atomically(path, data)
