"""JSON exporter: the versioned results file (``results.RunRecord``).

Beside the record it carries the run's summary lines (best server per level,
seed 000's variant ratios): derived, for readers of the JSON alone; ignored on load.
"""

from __future__ import annotations

import json
from typing import Any

from grpcbench.base.secrets import redact_all
from grpcbench.model.results import RunRecord
from grpcbench.report.summary import summary_lines


def render_json(record: RunRecord) -> bytes:
    data = record.to_json()
    data["summary"] = redact_all(summary_lines(record.levels))
    return results_bytes(data)


def results_bytes(data: dict[str, Any]) -> bytes:
    """A results file's bytes, as every writer of one writes them."""
    return (json.dumps(data, indent=2) + "\n").encode()
