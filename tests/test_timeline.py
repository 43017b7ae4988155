"""Resource timelines: bounded samples, exact halving, saved per level, drawn over time."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from grpcbench.observe.timeline import Timeline, TimelineRecorder
from tests.conftest import GRPCBENCH


def test_a_long_level_stays_bounded_and_keeps_its_shape() -> None:
    recorder = TimelineRecorder(0.1, max_points=100)
    for tick in range(1000):  # 100 s at 100 ms: 1000 ticks
        busy = 1.0 if tick < 500 else 0.25  # one core, then a quarter
        recorder.add(busy * 0.1, 0.1, rss_bytes=tick)
    timeline = recorder.timeline()
    assert len(timeline.cpu_percent) < 100
    # 1000 ticks into fewer than 100 samples: merged in pairs 4 times (16 ticks each).
    assert timeline.interval_s == pytest.approx(1.6) and len(timeline.cpu_percent) == 62
    assert timeline.times_s[-1] == pytest.approx(len(timeline.cpu_percent) * timeline.interval_s)
    assert timeline.cpu_percent[0] == pytest.approx(100.0)
    assert timeline.cpu_percent[-1] == pytest.approx(25.0)
    assert max(timeline.rss_bytes) <= 999 and timeline.rss_bytes == tuple(
        sorted(timeline.rss_bytes)
    )


def test_generator_processes_add_up() -> None:
    a = Timeline(0.1, (50.0, 60.0, 70.0), (10, 20, 30))
    b = Timeline(0.1, (40.0, 30.0), (1, 2))
    summed = a.plus(b)
    assert summed.cpu_percent == (90.0, 90.0) and summed.rss_bytes == (11, 22)
    coarse = Timeline(0.2, (10.0,), (5,))
    assert a.plus(coarse).interval_s == 0.2
    assert Timeline.from_json(json.loads(json.dumps(a.to_json()))) == a


@pytest.mark.integration
def test_every_level_saves_server_and_generator_timelines(tmp_path: Path) -> None:
    out = tmp_path / "r.json"
    result = subprocess.run(
        [*GRPCBENCH, "run", "-s", "grpclib", "-c", "4", "--duration", "1s", "--warmup", "10",
         "--sample-interval", "100ms", "--output", str(out)],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    [level] = json.loads(out.read_text())["levels"]
    server = level["server_usage"]["timeline"]
    client = level["load"]["client_timeline"]
    for timeline in (server, client):
        assert timeline["interval_s"] == 0.1 and 7 <= len(timeline["cpu_percent"]) <= 11
        assert all(rss > 0 for rss in timeline["rss_bytes"])
    assert max(server["cpu_percent"]) > 5  # the server was busy
    off = subprocess.run(
        [*GRPCBENCH, "run", "-s", "grpclib", "-c", "2", "-n", "50", "--sample-interval", "off",
         "--output", str(out)],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert off.returncode == 0, off.stderr
    [level] = json.loads(out.read_text())["levels"]
    assert level["server_usage"]["timeline"] is None and level["load"]["client_timeline"] is None
