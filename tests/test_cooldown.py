"""--cooldown: the server watched on with no load after each level (seed 004's memory
held after the burst), its figures beside the measured phase's, never in them."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.conftest import GRPCBENCH


@pytest.mark.integration
def test_the_server_is_watched_after_the_load_and_kept_apart(tmp_path: Path) -> None:
    out = tmp_path / "r.json"
    done = subprocess.run(
        [*GRPCBENCH, "run", "-s", "grpclib", "-c", "4", "-n", "2000", "--warmup", "0",
         "--cooldown", "1500ms", "--sample-interval", "100ms", "--output", str(out)],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    (level,) = json.loads(out.read_text())["levels"]
    usage = level["server_usage"]
    assert usage["cooldown_s"] == 1.5 and usage["rss_after_cooldown_bytes"] > 10 * 2**20
    # An idle server spends next to nothing; the measured phase's CPU is its own (2,000
    # calls at 100-350 µs each, depending on the machine).
    assert usage["cpu_s"] > 0.1 and usage["cooldown_cpu_s"] < usage["cpu_s"] / 4
    # The measured phase, not the cooldown: the server was watched as long as the load
    # ran (a slow host makes both longer; 1.5 s more would be the cooldown counted in).
    assert usage["wall_s"] == pytest.approx(level["load"]["wall_s"], abs=0.5)
    timeline = usage["timeline"]
    sampled_s = len(timeline["cpu_percent"]) * timeline["interval_s"]
    assert sampled_s > usage["wall_s"] + 1.0  # the timeline went on through it
    assert "Server RSS after 1.5 s idle" in done.stdout
    assert "Server CPU after 1.5 s idle" in done.stdout
