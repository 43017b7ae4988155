"""hello's seed parameters: a handler delay (seed 001) and a request size (seed 003)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from grpcbench.base.errors import UsageError
from grpcbench.load.ghz import bundled_request, ghz_command
from grpcbench.proto import helloworld_pb2
from grpcbench.services.hello import SERVICE, SayHelloWorkload, name_for_size
from tests.conftest import GRPCBENCH
from tests.support.factories import make_spec


@pytest.mark.parametrize("size", [0, 3, 127, 128, 129, 131, 581, 4096])
def test_request_size_is_exact(size: int) -> None:
    assert len(helloworld_pb2.HelloRequest(name=name_for_size(size)).SerializeToString()) == size
    workload = SayHelloWorkload({"size": size})
    assert len(workload.request) == size


@pytest.mark.parametrize("size", [1, 2, 130])
def test_impossible_sizes_are_refused(size: int) -> None:
    with pytest.raises(UsageError, match=f"size={size}"):
        name_for_size(size)


def test_ghz_sends_the_same_request() -> None:
    spec = make_spec(target="127.0.0.1:1", service="hello", concurrency=1,
                    workload_params={"size": 581})  # fmt: skip
    argv = ghz_command("ghz", spec, 10, 0.0, Path("/protos"))
    data = json.loads(next(a for a in argv if a.startswith("--data="))[len("--data=") :])
    assert data == {"name": name_for_size(581)}
    assert bundled_request(SERVICE, {"size": 581})[1] == data


@pytest.mark.integration
def test_delay_holds_a_sync_worker_and_frees_an_event_loop(tmp_path: Path) -> None:
    """4 calls in flight, 200 ms each: one sync worker queues them, asyncio overlaps them."""
    out = tmp_path / "r.json"
    result = subprocess.run(
        [*GRPCBENCH, "run", "-s", "grpcio:workers=1 grpclib grpcio-aio", "-c", "4", "-n", "8",
         "--warmup", "0", "--server-param", "delay_ms=200", "--output", str(out)],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    averages = {
        lv["server"]: lv["load"]["latency"]["total_us"] / lv["load"]["latency"]["count"] / 1000
        for lv in json.loads(out.read_text())["levels"]
    }
    assert averages["grpcio:workers=1"] > 2 * 200  # queued behind the one worker
    assert 200 <= averages["grpclib"] < 1.5 * 200 and 200 <= averages["grpcio-aio"] < 1.5 * 200
