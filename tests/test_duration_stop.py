"""--duration-stop (ghz's flag): what happens to the calls in flight when -z ends.

A server that answers after 200 ms, 4 calls in flight and -z 500ms: calls end at
0.2 s, 0.4 s and 0.6 s, so at the end 4 are in flight. wait lets them finish (12
OK); close cancels them, each counted Cancelled (8 OK, 4 Cancelled); ignore cancels
them uncounted (8 OK). On both client stacks, closed and open loop.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import one_level_load

pytestmark = pytest.mark.integration

SLOW = ["-s", "grpclib", "--server-param", "delay_ms=200", "--warmup", "0", "-z", "500ms"]


def _statuses(tmp_path: Path, *options: str) -> dict[str, int]:
    statuses: dict[str, int] = one_level_load(tmp_path, *SLOW, *options)["statuses"]
    return statuses


@pytest.mark.parametrize(
    ("stop", "stack", "expected"),
    [
        ("wait", "wire", {"OK": 12}),
        ("close", "wire", {"OK": 8, "Cancelled": 4}),
        ("ignore", "wire", {"OK": 8}),
        ("close", "grpcio", {"OK": 8, "Cancelled": 4}),
        ("ignore", "grpcio", {"OK": 8}),
    ],
)
def test_the_calls_in_flight_at_the_duration_s_end(
    tmp_path: Path, stop: str, stack: str, expected: dict[str, int]
) -> None:
    options = ("-c", "4", "--duration-stop", stop, "--client-stack", stack)
    assert _statuses(tmp_path, *options) == expected


@pytest.mark.parametrize("stack", ["wire", "grpcio"])
def test_an_open_loop_closes_its_calls_in_flight_too(tmp_path: Path, stack: str) -> None:
    """20 calls/s, each answered in 200 ms: about 4 in flight when -z ends."""
    closed = _statuses(tmp_path, "--rate", "20", "--duration-stop", "close",
                       "--client-stack", stack)  # fmt: skip
    assert set(closed) == {"OK", "Cancelled"} and 2 <= closed["Cancelled"] <= 6, closed
    assert set(_statuses(tmp_path, "--rate", "20", "--duration-stop", "ignore",
                         "--client-stack", stack)) == {"OK"}  # fmt: skip
