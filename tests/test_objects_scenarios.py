"""s3-list, s3-stream, s3-mongo (seed 002) on embedded S3 (moto) and MongoDB (mongo-java-server)."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest

from grpcbench.backing.mongo import COLLECTION, DATABASE
from grpcbench.load.builtin import BuiltinDriver
from grpcbench.servers.launcher import start_server
from grpcbench.servers.spec import parse_server_spec
from grpcbench.services.objects import SERVICE, prepare
from tests.conftest import GRPCBENCH, long_lived_children
from tests.support.factories import make_spec

pytestmark = pytest.mark.integration

KINDS = (
    "grpcio:workers=1", "grpcio:workers=4", "grpclib", "grpclib+uvloop",
    "grpcio-aio", "grpcio-aio+uvloop",
)  # fmt: skip
OBJECTS = 40


@pytest.fixture(scope="module")
def backing(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """Embedded S3 with 40 objects and an embedded MongoDB, for the whole module."""
    with ExitStack() as stack:
        params = prepare(
            {"objects": OBJECTS, "needs_mongo": True, "pool_size": 20},
            tmp_path_factory.mktemp("objects"),
            stack,
        )
        with long_lived_children():
            yield params


def _saved_documents(params: dict[str, Any]) -> list[dict[str, Any]]:
    from pymongo import MongoClient

    client: Any = MongoClient(params["mongo_uri"], serverSelectionTimeoutMS=3000)
    with client:
        return list(client[DATABASE][COLLECTION].find({}, {"_id": 0}))


@pytest.mark.parametrize("kind", KINDS)
def test_every_mode_on_every_server_kind(kind: str, backing: dict[str, Any]) -> None:
    SERVICE.reset(backing)  # type: ignore[misc]

    async def scenario() -> None:
        server = await start_server(parse_server_spec(kind), "objects", backing)
        try:
            for mode, calls in (("list", 6), ("stream", 6), ("save", 3)):
                spec = make_spec(
                    target=server.address, service="objects", concurrency=3, requests=calls,
                    workload_params={"mode": mode, "objects": OBJECTS},
                )  # fmt: skip
                result = await BuiltinDriver().run(spec, lambda *_: None)
                assert result.statuses == {"OK": calls}, (mode, result.statuses)
                assert result.stream is not None and result.stream.items == calls * OBJECTS
                if mode == "stream":
                    assert result.stream.messages == calls * OBJECTS
        finally:
            await server.stop()

    asyncio.run(scenario())
    documents = _saved_documents(backing)
    assert len(documents) == 3 * OBJECTS  # three SaveObjects calls, 40 objects each
    keys = sorted({d["key"] for d in documents})
    assert keys == [f"object-{i:05d}.txt" for i in range(OBJECTS)]
    first = next(d for d in documents if d["key"] == "object-00003.txt")
    assert first["size"] == len(b"object 3\n") * 4 and len(first["etag"]) == 32
    assert first["last_modified"] > 1_600_000_000


def test_motor_driver_and_io_delay(backing: dict[str, Any]) -> None:
    SERVICE.reset(backing)  # type: ignore[misc]
    params = {**backing, "mongo_driver": "motor", "io_delay_ms": 500}

    async def scenario() -> None:
        server = await start_server(parse_server_spec("grpclib"), "objects", params)
        try:
            spec = make_spec(
                target=server.address, service="objects", concurrency=4, requests=4,
                warmup_requests=4, workload_params={"mode": "save", "objects": OBJECTS},
            )  # fmt: skip
            result = await BuiltinDriver().run(spec, lambda *_: None)
            assert result.statuses == {"OK": 4}
            # Four awaited 500 ms delays overlap: one round (~0.5 s), not four (>= 2 s).
            assert result.latency.min_us >= 500_000 and result.wall_s < 1.5
        finally:
            await server.stop()

    asyncio.run(scenario())
    assert len(_saved_documents(backing)) == 8 * OBJECTS  # warm-up calls save too


def _run(*args: str, timeout: float = 180) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*GRPCBENCH, "run", *args], capture_output=True, text=True, timeout=timeout, check=False
    )


def test_cli_s3_mongo_run_resets_between_server_kinds(tmp_path: Path) -> None:
    out = tmp_path / "r.json"
    result = _run(
        "--scenario", "s3-mongo", "-s", "grpcio:workers=2 grpcio-aio", "-c", "2", "-n", "2",
        "--warmup", "0", "--server-param", "objects=30", "--output", str(out),
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    levels = json.loads(out.read_text())["levels"]
    assert [lv["load"]["statuses"] for lv in levels] == [{"OK": 2}, {"OK": 2}]
    assert all(lv["load"]["stream"]["items"] == 60 for lv in levels)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--s3-endpoint", "http://127.0.0.1:1"], "cannot reach S3 at http://127.0.0.1:1"),
        (["--mongo-uri", "mongodb://127.0.0.1:1/"], "cannot reach MongoDB at"),
        (["--mongo-driver", "mongoose"], "bad --mongo-driver"),
        (["--io-delay-ms", "-5"], "bad --io-delay-ms"),
    ],
)
def test_unreachable_backing_services_fail_before_the_first_level(
    args: list[str], message: str
) -> None:
    result = _run("--scenario", "s3-mongo", "-s", "grpclib", "-c", "2", "-n", "2", *args)
    assert result.returncode == 2, result.stderr
    assert message in result.stderr and "Traceback" not in result.stderr
    assert "concurrency 2 [builtin]" not in result.stderr  # no level started


def test_missing_bucket_and_missing_java(
    backing: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    # The embedded S3 treated as a real one: credentials come from the environment.
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "grpcbench")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "grpcbench")
    result = _run(
        "--scenario", "s3-list", "-s", "grpclib", "-c", "1", "-n", "1",
        "--s3-endpoint", backing["s3_endpoint"], "--s3-bucket", "no-such-bucket",
    )  # fmt: skip
    assert result.returncode == 2 and "no-such-bucket" in result.stderr
    env = {**os.environ, "GRPCBENCH_JAVA": "/nonexistent/java"}
    missing_java = subprocess.run(
        [*GRPCBENCH, "run", "--scenario", "s3-mongo", "-s", "grpclib", "-c", "1", "-n", "1"],
        capture_output=True, text=True, timeout=120, check=False, env=env,
    )  # fmt: skip
    assert missing_java.returncode == 2
    assert "needs Java" in missing_java.stderr and "Traceback" not in missing_java.stderr


def test_ctrl_c_stops_the_backing_services_too(tmp_path: Path) -> None:
    from tests.test_lifecycle import _assert_all_gone, _levels_written, _start, _watch_descendants

    out = tmp_path / "r.json"
    process = _start(
        "run", "--scenario", "s3-mongo", "-s", "grpclib grpcio-aio", "-c", "2,3",
        "-n", "20", "--output", str(out),
    )  # fmt: skip
    seen = _watch_descendants(process, lambda: _levels_written(out) >= 1, timeout=120)
    process.send_signal(signal.SIGINT)
    _, stderr = process.communicate(timeout=60)
    assert process.returncode == 130 and "Traceback" not in stderr
    assert len(seen) >= 3  # moto, the MongoDB JVM, the server (and generators)
    _assert_all_gone(seen)
    assert json.loads(out.read_text())["status"] == "interrupted"
