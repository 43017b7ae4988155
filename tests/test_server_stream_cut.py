"""ghz's --stream-call-count and --stream-call-duration on a server stream: the client
cancels each call after N replies or after a time, as ghz does; the call counts OK.

The watch service streams a folder of 1,000 pairs, one message each (WatchSeparated)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import REPO, one_level_load

pytestmark = pytest.mark.integration

WATCH = ["-s", "grpclib", "--service", "watch", "--proto",
         str(REPO / "protos/grpcbench/proto/watch.proto"), "--call",
         "watch.StreamBench/WatchSeparated", "-d", '{"folder":"small"}', "-n", "20", "-c", "2",
         "--warmup", "0"]  # fmt: skip


@pytest.mark.parametrize("stack", ["wire", "grpcio"])
def test_a_server_stream_is_cut_after_n_replies_or_a_time(tmp_path: Path, stack: str) -> None:
    whole = one_level_load(tmp_path, *WATCH, "--client-stack", stack)
    assert whole["statuses"] == {"OK": 20} and whole["stream"]["messages"] == 20 * 1000
    counted = one_level_load(tmp_path, *WATCH, "--client-stack", stack, "--stream-messages", "5")
    assert counted["statuses"] == {"OK": 20} and counted["stream"]["messages"] == 20 * 5
    timed = one_level_load(
        tmp_path, *WATCH, "--client-stack", stack, "--stream-call-duration", "2ms"
    )
    assert timed["statuses"] == {"OK": 20} and timed["stream"]["messages"] < 20 * 1000
