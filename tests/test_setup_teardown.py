"""k6's setup() and teardown(data) in a --workload module: once per server, around all
its levels, their data in every user's flow, their calls not measured; counted at the
recording echo on each stack, several generator processes and Dask workers."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import REPO, run_grpcbench
from tests.support.logging_echo import logging_echo
from tests.test_user_life import said_by_verb

PROTO = str(REPO / "examples" / "echo" / "echo.proto")
ACCOUNT = "acct-5ecret"  # what setup returns: never printed or saved
MODULE = f"""
import os


async def setup(client):
    made = await client.unary("echo.Echo/Say", {{"message": "setup {ACCOUNT}"}}, name="setup")
    return {{"account": made.message.split()[1], "by": os.getpid()}}


async def flow(client):
    await client.unary("echo.Echo/Say", {{"message": "buy " + client.setup_data["account"]}})


class Shopper:
    async def on_start(self, client):
        self.account = client.setup_data["account"]

    async def flow(self, client):
        await client.unary("echo.Echo/Say", {{"message": "buy " + self.account}})


async def teardown(client, data):
    await client.unary("echo.Echo/Say", {{"message": "teardown " + data["account"]}})
"""
BROKEN = """
async def flow(client):
    await client.unary("echo.Echo/Say", {"message": "buy"})
"""


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    (tmp_path / "shop.py").write_text(MODULE)
    return tmp_path


def _run(where: Path, address: str, *args: str, code: int = 0) -> tuple[dict, str]:
    out = where / "r.json"
    done = run_grpcbench(
        "run", "--target", address, "--insecure", "--proto", PROTO, "--warmup", "0",
        "--output", str(out), *args, cwd=where, timeout=300,
    )  # fmt: skip
    assert done.returncode == code, done.stderr
    assert "Traceback" not in done.stderr
    said = done.stdout + done.stderr
    return (json.loads(out.read_text()) if code == 0 else {}), said


@pytest.mark.integration
@pytest.mark.parametrize(
    ("workload", "extra"),
    [
        ("shop:flow", ["--client-stack", "wire"]),
        ("shop:flow", ["--client-stack", "grpcio"]),
        ("shop:flow", ["--client-processes", "2"]),
        ("shop:Shopper", ["--client-stack", "wire"]),
        ("shop:flow", ["--cluster", "local:2"]),
    ],
)
def test_setup_runs_once_per_server_its_data_reaches_every_flow_and_teardown_ends_it(
    workdir: Path, workload: str, extra: list[str]
) -> None:
    if "--cluster" in extra:
        pytest.importorskip("distributed")
    with logging_echo() as (address, log):
        results, said_out = _run(
            workdir, address, "--workload", workload, "-c", "2,4", "-n", "20", *extra
        )
        said = said_by_verb(log)
    # once for the server (both levels), before the pre-flight call; teardown last
    assert said["setup"] == [[ACCOUNT]] and said["teardown"] == [[ACCOUNT]]
    assert said["buy"] == [[ACCOUNT]] * (2 * 20 + 1)  # both levels' and the pre-flight's
    order = [request[2:].decode().split()[0] for request in log.requests("Say").elements()]
    assert order[0] == "setup" and order[-1] == "teardown"
    for level in results["levels"]:  # not measured: neither a call nor a step
        assert level["load"]["statuses"] == {"OK": 20}
        assert {step["name"] for step in level["load"]["steps"]} == {"echo.Echo/Say"}
    assert ACCOUNT not in said_out and ACCOUNT not in (workdir / "r.json").read_text()


@pytest.mark.integration
@pytest.mark.parametrize(
    ("setup", "fragment"),
    [
        ("raise RuntimeError('no stock')", "the workload's setup() raised RuntimeError: no stock"),
        ("return object()", "the workload's setup() returned a object, not JSON"),
        ("await client.unary('echo.Echo/Nope', {})", "the workload's setup() failed"),
    ],
)
def test_a_failed_setup_is_one_line_and_nothing_is_measured(
    tmp_path: Path, setup: str, fragment: str
) -> None:
    (tmp_path / "shop.py").write_text(BROKEN + f"\n\nasync def setup(client):\n    {setup}\n")
    with logging_echo() as (address, log):
        _, said_out = _run(tmp_path, address, "--workload", "shop:flow", "-n", "10", code=5)
        said = said_by_verb(log)
    assert fragment in said_out, said_out
    assert "buy" not in said  # neither the pre-flight call nor a level


@pytest.mark.integration
def test_a_failed_teardown_is_a_warning_and_the_levels_stand(tmp_path: Path) -> None:
    module = BROKEN + "\n\nasync def teardown(client, data):\n    assert data is None\n    1 / 0\n"
    (tmp_path / "shop.py").write_text(module)
    with logging_echo() as (address, _):
        results, said_out = _run(tmp_path, address, "--workload", "shop:flow", "-n", "10")
    assert "the workload's teardown() raised ZeroDivisionError" in said_out, said_out
    assert results["status"] == "complete"
    assert results["levels"][0]["load"]["statuses"] == {"OK": 10}


def test_a_setup_that_is_not_async_is_one_line_before_anything_starts(tmp_path: Path) -> None:
    (tmp_path / "shop.py").write_text(BROKEN + "\n\ndef setup(client):\n    return 1\n")
    done = run_grpcbench(
        "run", "127.0.0.1:1", "--insecure", "--workload", "shop:flow", "--proto", PROTO,
        "--dry-run", cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    assert "setup in the module of workload 'shop:flow' must be `async def setup(client)`" in (
        done.stderr
    )
