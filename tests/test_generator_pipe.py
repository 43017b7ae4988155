"""The generator reports to its parent over a pipe of its own (pyperf's ``--pipe``):
a workload that prints, logs or writes to fd 1 changes nothing."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.conftest import GRPCBENCH, write_scenario

pytestmark = pytest.mark.integration


def test_a_workload_that_prints_changes_nothing(tmp_path: Path) -> None:
    scenario = write_scenario(tmp_path, "tests.support.services:NOISY")
    output = tmp_path / "out.json"
    result = subprocess.run(
        [*GRPCBENCH, "run", "--scenario", str(scenario), "--output", str(output)],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    level = json.loads(output.read_text())["levels"][0]
    assert level["load"]["statuses"] == {"OK": 20}
