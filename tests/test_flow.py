"""Chains: --workload module:flow, a user's async function whose calls are timed steps."""

from __future__ import annotations

import json
import os
from collections import Counter
from pathlib import Path

import pytest

from tests.conftest import REPO, run_grpcbench
from tests.support.logging_echo import logging_echo

PROTO = str(REPO / "examples" / "echo" / "echo.proto")
FLOWS = """
async def chain(client):
    created = await client.unary("echo.Echo/Say", {"message": "create"}, name="create")
    await client.unary("echo.Echo/Say", {"message": created.message + "/read"}, name="read")
    await client.server_stream("echo.Echo/Expand", {"message": "x"}, name="list")

async def lookup(client):
    try:
        await client.unary("echo.Echo/Say", {"message": "fail"}, name="lookup")
    except Exception:
        await client.unary("echo.Echo/Say", {"message": "fallback"}, name="fallback")

async def strict(client):
    await client.unary("echo.Echo/Say", {"message": "fail"}, name="lookup")

async def lazy(client):
    return None

async def broken(client):
    raise ValueError("oops")

async def unknown(client):
    await client.unary("echo.Echo/Nope", {})

async def wrong_kind(client):
    await client.unary("echo.Echo/Expand", {})

async def talk(client):
    async with client.conversation("echo.Echo/Chat", name="talk") as chat:
        await chat.send({"message": "hello"})
        reply = await chat.receive()  # the next message is made from this reply
        await chat.send({"message": reply.message + "/again"})
        if (await chat.receive()).message != "hello/again":
            raise ValueError("a reply out of order")

async def talk_fails(client):
    try:
        async with client.conversation("echo.Echo/Chat", name="talk") as chat:
            await chat.send({"message": "fail"})
            await chat.receive()
    except Exception:
        await client.unary("echo.Echo/Say", {"message": "after"}, name="after")

async def talk_breaks(client):
    async with client.conversation("echo.Echo/Chat", name="talk") as chat:
        await chat.send({"message": "x"})
        await chat.receive()
        raise KeyError("no such field")

async def fed(client):
    row = client.row("names.jsonl")
    await client.unary("echo.Echo/Say", {"message": row["message"]}, name="say")

async def fed_csv(client):
    await client.unary("echo.Echo/Say", client.row("names.csv", order="random"), name="say")

async def fed_list(client):
    await client.unary("echo.Echo/Say", client.row("rows.jsonl"), name="say")

async def fed_badly(client):
    await client.unary("echo.Echo/Say", client.row("bad.jsonl"), name="say")

async def checked(client):
    said = await client.unary("echo.Echo/Say", {"message": "hi"}, name="say")
    client.check("echoed", said.message == "hi")
    if not client.check("shouted", said.message == "HI"):
        client.check("whispered", said.message.islower())

async def tagged(client):
    await client.unary("echo.Echo/Say", {"message": "d"}, metadata={"tenant": "a"}, name="d")
    await client.unary("echo.Echo/Say", {"message": "p"}, metadata=[("tenant", "b")], name="p")
"""


# Every way a flow runs: both client stacks, two generator processes, an open loop.
EVERY_WAY = pytest.mark.parametrize(
    ("stack", "extra"),
    [
        ("wire", []),
        ("grpcio", []),
        ("wire", ["--client-processes", "2"]),
        ("wire", ["--rate", "200"]),
    ],
)


@pytest.fixture
def flows(tmp_path: Path) -> Path:
    (tmp_path / "flows.py").write_text(FLOWS)
    (tmp_path / "names.jsonl").write_text("".join(f'{{"message": "m{n}"}}\n' for n in range(10)))
    # Excel's UTF-8 CSV: a byte-order mark, and a quoted field across two lines
    (tmp_path / "names.csv").write_text('\ufeffmessage\nc0\n"c1\nsecond line"\nc2\n')
    (tmp_path / "bad.jsonl").write_text(
        '{"message": "a"}\n{"message": "b"}\n{"message": "c"}\n{x\n'
    )
    (tmp_path / "raising.py").write_text("raise RuntimeError('no config here')\n")
    return tmp_path


def _run(address: str, where: Path, function: str, *args: str) -> dict:
    out = where / "r.json"
    done = run_grpcbench(
        "run", address, "--insecure", "--workload", f"flows:{function}", "--proto", PROTO,
        "--warmup", "0", "--output", str(out), *args, cwd=where,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return json.loads(out.read_text())


def _steps(result: dict) -> dict[str, dict]:
    (level,) = result["levels"]
    return {step["name"]: step for step in level["load"]["steps"]}


@pytest.mark.integration
@EVERY_WAY
def test_a_chain_reads_each_reply_and_times_each_step(
    flows: Path, stack: str, extra: list[str]
) -> None:
    load = ["-n", "60"] + (["-c", "3"] if "--rate" not in extra else [])
    with logging_echo() as (address, log):
        result = _run(address, flows, "chain", "--client-stack", stack, *load, *extra)
        say = Counter(request[2:].decode() for request in log.requests("Say").elements())
    # 60 flows and the pre-flight run: each read names what its create got back
    assert say == {"create": 61, "create/read": 61}
    assert log.methods()["Expand"] == 61
    steps = _steps(result)
    assert list(steps) == ["create", "read", "list"]
    for step in steps.values():
        assert step["statuses"] == {"OK": 60} and step["latency"]["count"] == 60
    (level,) = result["levels"]
    assert level["load"]["statuses"] == {"OK": 60}
    flow_p50 = level["load"]["latency"]
    assert flow_p50["min_us"] >= max(step["latency"]["min_us"] for step in steps.values())


@pytest.mark.integration
def test_a_failed_step_is_its_own_status_and_a_caught_one_lets_the_flow_go_on(
    flows: Path,
) -> None:
    with logging_echo() as (address, _):
        caught = _steps(_run(address, flows, "lookup", "-c", "2", "-n", "20"))
        uncaught = _run(
            address, flows, "strict", "-c", "2", "-n", "20", "--expect-status", "NotFound"
        )
    assert caught["lookup"]["statuses"] == {"NotFound": 20}
    assert caught["fallback"]["statuses"] == {"OK": 20}
    (level,) = uncaught["levels"]
    assert level["load"]["statuses"] == {"NotFound": 20}


@pytest.mark.integration
def test_a_step_s_metadata_is_a_dict_or_pairs(flows: Path) -> None:
    """metadata={"tenant": "a"} reaches the server beside -m's; it failed with "too
    many values to unpack" (only grpc's pairs were taken)."""
    with logging_echo() as (address, log):
        result = _run(address, flows, "tagged", "-c", "1", "-n", "2", "-m", "run=r")
        seen = [(m.get("tenant"), m.get("run")) for m in log.metadata]
    assert result["levels"][0]["load"]["statuses"] == {"OK": 2}
    assert seen.count(("a", "r")) == 3 and seen.count(("b", "r")) == 3  # pre-flight too


@pytest.mark.integration
@EVERY_WAY
def test_a_conversation_sends_what_each_reply_decides(
    flows: Path, stack: str, extra: list[str]
) -> None:
    """client.conversation (k6's Stream): the second message of each bidi call is made
    from the server's reply to the first, as the server saw it, on every stack."""
    load = ["-n", "30"] + (["-c", "3"] if "--rate" not in extra else [])
    with logging_echo() as (address, log):
        result = _run(address, flows, "talk", "--client-stack", stack, *load, *extra)
        chats = [[request[2:].decode() for request in chat] for chat in log.chats]
    assert chats == [["hello", "hello/again"]] * 31  # and the pre-flight run's
    steps = _steps(result)
    assert list(steps) == ["talk"] and steps["talk"]["statuses"] == {"OK": 30}
    assert result["levels"][0]["load"]["statuses"] == {"OK": 30}


@pytest.mark.integration
@pytest.mark.parametrize("stack", ["wire", "grpcio"])
def test_a_conversation_s_status_is_its_step_s(flows: Path, stack: str) -> None:
    """The server's NotFound reaches the flow from receive() and is the step's status; an
    error of the flow's own inside the block cancels the call (the step: Cancelled)."""
    with logging_echo() as (address, _):
        one = ["--client-stack", stack, "-n", "10", "-c", "1"]
        failed = _steps(_run(address, flows, "talk_fails", *one))
        broken = _run(address, flows, "talk_breaks", *one, "--expect-status", "Unknown")
    assert failed["talk"]["statuses"] == {"NotFound": 10}
    assert failed["after"]["statuses"] == {"OK": 10}
    (level,) = broken["levels"]
    assert level["load"]["statuses"] == {"Unknown": 10}
    assert _steps(broken)["talk"]["statuses"] == {"Cancelled": 10}


@pytest.mark.integration
@pytest.mark.parametrize(
    ("stack", "extra"),
    [
        ("wire", ["-c", "2"]),
        ("grpcio", ["-c", "2"]),
        ("wire", ["-c", "2", "--client-processes", "2"]),
    ],
)
def test_a_flow_takes_each_request_from_its_feeder_s_next_row(
    flows: Path, stack: str, extra: list[str]
) -> None:
    """client.row: in order, each line once per pass (over two processes, each takes its
    own lines, as -D's), and at random; CSV rows as dicts, a BOM and a quoted line break
    read as the csv module reads them."""
    with logging_echo() as (address, log):
        result = _run(address, flows, "fed", "--client-stack", stack, "-n", "30", *extra)
        in_order = Counter(request[2:].decode() for request in log.requests("Say").elements())
    with logging_echo() as (address, log):
        drawn = _run(address, flows, "fed_csv", "--client-stack", stack, "-n", "30", *extra)
        at_random = Counter(request[2:].decode() for request in log.requests("Say").elements())
    # 30 calls over 10 lines: each line 3 times, and the pre-flight run's first line
    assert in_order == Counter({f"m{n}": 3 for n in range(10)}) + Counter({"m0": 1})
    assert _steps(result)["say"]["statuses"] == {"OK": 30}
    assert set(at_random) == {"c0", "c1\nsecond line", "c2"} and at_random.total() == 31
    assert _steps(drawn)["say"]["statuses"] == {"OK": 30}


@pytest.mark.integration
@pytest.mark.parametrize("loop", [["-c", "1"], ["--rate", "200"]])
@pytest.mark.parametrize("stack", ["wire", "grpcio"])
def test_a_bad_row_ends_the_level_naming_its_file_and_line(
    flows: Path, stack: str, loop: list[str]
) -> None:
    """As a -D feeder's bad line does (tests/test_feeder.py): the level fails at once
    (exit 4) naming the file and line, not a call counted Unknown per bad row."""
    with logging_echo() as (address, _):
        done = run_grpcbench(
            "run", address, "--insecure", "--workload", "flows:fed_badly", "--proto", PROTO,
            "-n", "10", "--warmup", "0", "--client-stack", stack, *loop, cwd=flows, timeout=60,
        )  # fmt: skip
    assert done.returncode == 4 and "Traceback" not in done.stderr, done.stderr
    errors = [line for line in done.stderr.splitlines() if "error:" in line]
    assert len(errors) == 1 and "client.row bad.jsonl line 4: not JSON" in errors[0], done.stderr


@pytest.mark.parametrize(
    ("flow", "file", "fragment"),
    [
        ("fed_badly", "bad.jsonl", "client.row bad.jsonl line 1: not JSON"),
        ("fed", "names.jsonl", "cannot read client.row names.jsonl: No such file"),
        ("fed_list", "[1]", "client.row rows.jsonl line 1: a row is a JSON object, not list"),
    ],
)
def test_a_bad_first_row_is_one_line_before_any_load(
    flows: Path, flow: str, file: str, fragment: str
) -> None:
    """The pre-flight run meets it: exit 2, nothing measured."""
    if flow == "fed_badly":
        (flows / file).write_text("{x\n")
    elif flow == "fed":
        (flows / file).unlink()
    else:
        (flows / "rows.jsonl").write_text(file + "\n")
    with logging_echo() as (address, _):
        done = run_grpcbench(
            "run", address, "--insecure", "--workload", f"flows:{flow}", "--proto", PROTO,
            "-n", "10", "-c", "1", "--warmup", "0", cwd=flows,
        )  # fmt: skip
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    errors = [line for line in done.stderr.splitlines() if "error:" in line]
    assert len(errors) == 1 and fragment in errors[0], done.stderr


@pytest.mark.integration
@pytest.mark.parametrize("extra", [[], ["--client-processes", "2"], ["--client-stack", "grpcio"]])
def test_checks_are_counted_by_name_fail_no_call_and_hold_to_thresholds(
    flows: Path, extra: list[str]
) -> None:
    """client.check (k6's check()): each check's passes and failures, merged over
    processes, in the JSON, the table and a note; the calls stay OK. Thresholds on
    them (k6's): one check's share that held, all checks' share (40 of 60) that did
    not, and a check that never ran: breached, named, exit 99."""
    out = flows / "r.json"
    thresholds = ["checks{echoed}>=100%", "checks>=90%", "checks{never}>0%"]
    with logging_echo() as (address, _):
        done = run_grpcbench(
            "run", address, "--insecure", "--workload", "flows:checked", "--proto", PROTO,
            "-c", "2", "-n", "20", "--warmup", "4", "--output", str(out), *extra,
            *(word for t in thresholds for word in ("--threshold", t)), cwd=flows,
        )  # fmt: skip
    assert done.returncode == 99, done.stderr
    said = done.stdout + done.stderr
    assert "threshold checks>=90% breached:" in said and "(66.67%)" in said, said
    assert "threshold checks{never}>0% breached:" in said and "(no such check ran)" in said
    assert "threshold checks{echoed}" not in said
    (level,) = json.loads(out.read_text())["levels"]
    assert level["load"]["statuses"] == {"OK": 20}
    assert level["load"]["checks"] == [  # the warm-up's calls are not counted
        {"name": "echoed", "passed": 20, "failed": 0},
        {"name": "shouted", "passed": 0, "failed": 20},
        {"name": "whispered", "passed": 20, "failed": 0},
    ]
    assert "check shouted failed 20 of 20 times (a failed check fails no call)" in done.stdout
    shown = run_grpcbench("show", str(out), env={**os.environ, "COLUMNS": "200"}).stdout
    rows = {line.split("│")[1].strip(): line.split("│")[2].strip() for line in shown.splitlines()
            if line.startswith("│ check")}  # fmt: skip
    assert rows == {
        "check echoed · passed": "20 (100.0%)", "check echoed · failed": "0",
        "check shouted · passed": "0 (0.0%)", "check shouted · failed": "20",
        "check whispered · passed": "20 (100.0%)", "check whispered · failed": "0",
    }  # fmt: skip


def test_checks_merge_by_name_over_processes_and_round_trip() -> None:
    from dataclasses import replace

    from grpcbench.model.level_parts import CheckFigures
    from grpcbench.model.load_result import LoadResult
    from tests.support.factories import load_result

    base = load_result([1000, 2000], {"OK": 2})
    first = replace(base, checks=(CheckFigures("a", 3, 1), CheckFigures("b", 0, 2)))
    second = replace(base, checks=(CheckFigures("b", 5, 0), CheckFigures("c", 1, 1)))
    assert first.merge(second).checks == (
        CheckFigures("a", 3, 1), CheckFigures("b", 5, 2), CheckFigures("c", 1, 1),
    )  # fmt: skip
    assert LoadResult.from_json(json.loads(json.dumps(first.to_json()))) == first
    assert LoadResult.from_json({**base.to_json(), "checks": None}).checks == ()


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["--workload", "flows:lazy"], "the flow made no call"),
        (["--workload", "flows:broken"], "the flow raised ValueError: oops"),
        (["--workload", "flows:unknown"], "no method Nope in service echo.Echo"),
        (["--workload", "flows:wrong_kind"], "call it with client.server_stream"),
        (["--workload", "raising:flow"], "raised RuntimeError: no config here"),
        (["--workload", "flows:missing"], "has no attribute 'missing'"),
        (["--workload", "flows"], "give package.module:function"),
        (["--workload", "flows:chain", "--call", "echo.Echo/Say"], "give it or --call"),
        (["--workload", "flows:chain", "--load", "ghz"], "--load ghz cannot run a --workload flow"),
    ],
)
def test_a_bad_flow_is_one_line(flows: Path, args: list[str], fragment: str) -> None:
    with logging_echo() as (address, _):
        done = run_grpcbench(
            "run", address, "--insecure", "--proto", PROTO, *args, "-c", "1", "-n", "5",
            "--warmup", "0", cwd=flows,
        )  # fmt: skip
    assert done.returncode != 0 and "Traceback" not in done.stderr, done.stderr
    errors = [line for line in done.stderr.splitlines() if "error:" in line]
    assert len(errors) == 1 and fragment in errors[0], done.stderr


def test_a_flow_needs_a_schema(flows: Path) -> None:
    done = run_grpcbench("run", "127.0.0.1:1", "--workload", "flows:chain", "--dry-run", cwd=flows)
    assert done.returncode == 2 and "--proto or --protoset" in done.stderr, done.stderr


def test_the_pytest_plugin_takes_a_workload(flows: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from grpcbench.run.level_options import one_level_options

    monkeypatch.chdir(flows)
    options = one_level_options(target="127.0.0.1:1", workload="flows:chain", proto=PROTO)
    assert options.flow is not None and options.flow.function == "flows:chain"
    assert options.call is None
