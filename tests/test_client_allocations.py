"""--client-allocations: the client's bytes and allocations per call (the seed's B/op)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from grpcbench.base.errors import UsageError
from grpcbench.load import allocations
from grpcbench.load.allocations import ClientAllocations, totals
from tests.conftest import GRPCBENCH


def test_a_capture_counts_what_was_allocated_and_freed(tmp_path: Path) -> None:
    """20,000 objects made and dropped: all counted, though none is held at the end
    (what tracemalloc could not tell)."""
    import memray

    capture = tmp_path / "c.bin"
    with memray.Tracker(str(capture), trace_python_allocators=True, native_traces=False):
        for _ in range(20_000):
            item = bytearray(100)
            del item
    size, count = totals(capture)
    assert 20_000 <= count < 60_000
    assert size >= 20_000 * 100


def test_figures_round_trip_through_json() -> None:
    figures = ClientAllocations(3, 3, 1024.5, 77.0, "memray 1.20.0")
    assert ClientAllocations.from_json(json.loads(json.dumps(figures.to_json()))) == figures


def test_without_memray_it_is_one_line_naming_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib.util

    monkeypatch.setattr(importlib.util, "find_spec", lambda name: None)
    with pytest.raises(UsageError, match=r"needs memray: pip install 'grpcbench\[profile\]'"):
        allocations.check_available()


def _run(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*GRPCBENCH, "run", *args], capture_output=True, text=True, timeout=240, check=False,
        cwd=tmp_path,
    )  # fmt: skip


def test_ghz_levels_are_refused(tmp_path: Path) -> None:
    result = _run(tmp_path, "--load", "ghz", "--client-allocations", "3", "--dry-run")
    assert result.returncode == 2
    assert "--client-allocations traces the built-in generator's calls here" in result.stderr


@pytest.mark.integration
def test_each_fetch_all_allocates_at_least_one_object_per_user(tmp_path: Path) -> None:
    """Every user of a reply is a message object the client builds: a count below the
    users per call would be a count that missed the client's work."""
    out = tmp_path / "r.json"
    result = _run(
        tmp_path, "--scenario", "paginate-vs-stream", "-s", "grpclib", "--database", "sqlite",
        "--server-param", "users=5000", "-n", "2", "--warmup", "0",
        "--variants", "paginate,stream-fetch-10", "--client-allocations", "3",
        "--output", str(out),
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "Client bytes / call" in result.stdout and "Client allocs / call" in result.stdout
    for level in json.loads(out.read_text())["levels"]:
        figures = level["client_allocations"]
        stream = level["load"]["stream"]
        users_per_call = stream["items"] / stream["calls"]
        assert figures["calls"] == figures["ok"] == 3
        assert figures["allocations_per_call"] > users_per_call > 500
        assert figures["bytes_per_call"] > 60 * users_per_call  # ~60 B of wire per user
        assert figures["tool"].startswith("memray ")


@pytest.mark.integration
def test_hello_calls_are_traced_on_the_wire_stack(tmp_path: Path) -> None:
    out = tmp_path / "r.json"
    result = _run(
        tmp_path, "-s", "grpclib", "-c", "2", "-n", "50", "--warmup", "0",
        "--client-allocations", "20", "--output", str(out),
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    figures = json.loads(out.read_text())["levels"][0]["client_allocations"]
    assert figures["ok"] == 20
    assert 5 < figures["allocations_per_call"] < 5_000
