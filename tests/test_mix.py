"""Traffic mixes: several methods in one level, counted at a server of the tests' own."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from grpcbench.rpc.mix import weighted_cycle
from tests.conftest import REPO, run_grpcbench
from tests.support.logging_echo import logging_echo

PROTO = str(REPO / "examples" / "echo" / "echo.proto")
SAY, EXPAND = "echo.Echo/Say", "echo.Echo/Expand"


@given(st.lists(st.integers(1, 12), min_size=1, max_size=6), st.integers(1, 200))
def test_the_cycle_gives_each_method_its_weight_within_one_call_at_every_moment(
    weights: list[int], calls: int
) -> None:
    cycle = weighted_cycle(weights)
    assert Counter(cycle) == {index: weight for index, weight in enumerate(weights)}
    total = sum(weights)
    made = [cycle[n % total] for n in range(calls)]
    for index, weight in enumerate(weights):
        assert abs(made.count(index) - calls * weight / total) < len(weights)


def _run(address: str, out: Path, *args: str) -> dict:
    """grpcbench's own line (--target): a pre-flight call per method, which these tests count
    (a ghz line, the host last, makes none)."""
    done = run_grpcbench(
        "run", "--target", address, "--insecure", "--proto", PROTO, "--warmup", "0", "--output",
        str(out), *args,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return json.loads(out.read_text())


def _methods(result: dict) -> dict[str, dict]:
    (level,) = result["levels"]
    return {m["name"]: m for m in level["load"]["methods"]}


@pytest.mark.integration
@pytest.mark.parametrize(
    ("stack", "mix", "extra"),
    [
        ("wire", [f"{SAY}:3", f"{EXPAND}:1"], []),  # a stream in it: the coroutine loop
        ("wire", [f"{SAY}:3", f"{SAY}:1"], []),  # unary only: the callback loop
        ("grpcio", [f"{SAY}:3", f"{EXPAND}:1"], []),
        ("wire", [f"{SAY}:3", f"{EXPAND}:1"], ["--client-processes", "2"]),
    ],
)
def test_a_closed_loop_mix_sends_each_method_exactly_its_share(
    tmp_path: Path, stack: str, mix: list[str], extra: list[str]
) -> None:
    calls = [arg for entry in mix for arg in ("--call", entry)]
    with logging_echo() as (address, log):
        result = _run(
            address, tmp_path / "r.json", *calls, "-d", '{"message": "hi"}', "-c", "4",
            "-n", "400", "--client-stack", stack, *extra,
        )  # fmt: skip
        seen = log.methods()
    methods = _methods(result)
    preflight = {"Say": mix.count(f"{SAY}:3") + mix.count(f"{SAY}:1"), "Expand": 0}
    preflight["Expand"] = sum(entry.startswith(EXPAND) for entry in mix)
    if EXPAND in "".join(mix):
        assert seen == {"Say": 300 + preflight["Say"], "Expand": 100 + preflight["Expand"]}
        assert methods[SAY]["statuses"] == {"OK": 300}
        assert methods[EXPAND]["statuses"] == {"OK": 100}
    else:  # the same method twice: told apart by place, 300 and 100 of 400
        assert seen == {"Say": 400 + 2}
        assert methods[f"{SAY} #1"]["statuses"] == {"OK": 300}
        assert methods[f"{SAY} #2"]["statuses"] == {"OK": 100}
    (level,) = result["levels"]
    assert sum(m["latency"]["count"] for m in methods.values()) == level["load"]["latency"]["count"]


@pytest.mark.integration
@pytest.mark.parametrize("stack", ["wire", "grpcio"])
@pytest.mark.parametrize("order", ["cycle", "random"])
def test_an_open_loop_mix_keeps_its_proportions(tmp_path: Path, stack: str, order: str) -> None:
    """The cycle: exact to a call. --mix-order random (Locust's choice per call): each
    count binomial, within five of its standard deviations."""
    import math

    with logging_echo() as (address, log):
        result = _run(
            address, tmp_path / "r.json", "--call", f"{SAY}:8", "--call", f"{SAY}:1",
            "--call", f"{EXPAND}:1", "-d", '{"message": "hi"}', "--rate", "500",
            "--duration", "2s", "--client-stack", stack, "--mix-order", order,
        )  # fmt: skip
        seen = log.methods()
    methods = _methods(result)
    counts = [methods[name]["latency"]["count"] for name in (f"{SAY} #1", f"{SAY} #2", EXPAND)]
    assert seen == {"Say": counts[0] + counts[1] + 2, "Expand": counts[2] + 1}  # + pre-flight
    total = sum(counts)
    assert total > 500
    for count, weight in zip(counts, (8, 1, 1), strict=True):
        share = weight / 10
        allowed = 1 if order == "cycle" else 5 * math.sqrt(total * share * (1 - share))
        assert abs(count - total * share) <= allowed, counts
    assert result["options"]["call"].get("mix_order", "cycle") == order


@pytest.mark.integration
def test_a_scenario_mix_gives_each_method_its_own_data_and_expected_statuses(
    tmp_path: Path,
) -> None:
    scenario = tmp_path / "mix.toml"
    scenario.write_text(
        f'name = "mixed"\n[call]\nproto = "{PROTO}"\n[defaults]\nwarmup = "0"\n'
        f'[[mix]]\nmethod = "{SAY}"\nweight = 2\ndata = {{ message = "found" }}\n'
        f'[[mix]]\nmethod = "{SAY}"\nname = "missing"\nweight = 1\n'
        'data = { message = "fail" }\nexpect_status = ["NotFound"]\ntimeout = "2s"\n'
        f'[[mix]]\nmethod = "{EXPAND}"\nweight = 1\ndata = {{ message = "x" }}\n'
    )
    with logging_echo() as (address, log):
        result = _run(
            address, tmp_path / "r.json", "--scenario", str(scenario), "-n", "400", "-c", "4"
        )
        say = log.requests("Say")
    found = b"\n\x05found"  # field 1 (message), as protobuf serializes it
    assert say == {found: 200 + 1, b"\n\x04fail": 100 + 1}
    methods = _methods(result)
    assert methods[SAY]["statuses"] == {"OK": 200}
    assert methods["missing"]["statuses"] == {"NotFound": 100}
    assert methods["missing"]["expected"] == ["NotFound"]
    recorded = {part["name"]: part for part in result["options"]["call"]["mix"]}
    assert recorded["missing"]["timeout_s"] == 2.0


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["--call", f"{SAY}:0", "--call", f"{EXPAND}:1"], "weight after ':' must be a positive"),
        (["--call", f"{SAY}:x", "--call", f"{EXPAND}:1"], "weight after ':' must be a positive"),
        (["--call", "echo.Echo/Nope:2", "--call", f"{EXPAND}:1"], "Nope"),
        (["--call", f"{SAY}:2", "--call", f"{EXPAND}:1", "--load", "ghz"], "one method per run"),
        (["--call", f"{SAY}:2", "--call", f"{SAY}:1", "-B", "x.bin"], "a mix's methods take -d"),
        (["--call", f"{SAY}:1", "--call", f"{EXPAND}:1", "--mix-order", "shuffle"],
         "bad --mix-order 'shuffle': one of cycle, random"),
        (["--call", SAY, "--mix-order", "random"], "--mix-order orders a mix"),
    ],
)  # fmt: skip
def test_a_bad_mix_is_one_line(tmp_path: Path, args: list[str], fragment: str) -> None:
    (tmp_path / "x.bin").write_bytes(b"\n\x02hi")
    done = run_grpcbench("run", "127.0.0.1:1", "--proto", PROTO, *args, "--dry-run", cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    errors = [line for line in done.stderr.splitlines() if "error:" in line]
    assert len(errors) == 1 and fragment in errors[0], done.stderr


def test_a_bad_scenario_mix_is_one_line(tmp_path: Path) -> None:
    for entry, fragment in (
        (f'method = "{SAY}"\nweight = 0', "weight must be a positive integer"),
        (f'method = "{SAY}"\nspeed = 3', "speed"),
        (f'method = "{SAY}"\nexpect_status = ["Fine"]', "expect_status"),
        (f'method = "{SAY}"', "mix_order is cycle or random, not 'shuffled'"),
    ):
        scenario = tmp_path / "bad.toml"
        order = 'mix_order = "shuffled"\n' if "mix_order" in fragment else ""
        scenario.write_text(f'name = "bad"\n[call]\nproto = "{PROTO}"\n{order}[[mix]]\n{entry}\n')
        done = run_grpcbench("run", "127.0.0.1:1", "--scenario", str(scenario), "--dry-run")
        assert done.returncode == 2 and fragment in done.stderr, done.stderr
        assert "Traceback" not in done.stderr


def test_a_mix_s_failures_are_judged_per_method_s_expected_statuses() -> None:
    from dataclasses import replace

    from grpcbench.model.level_parts import MethodFigures
    from tests.support.factories import level

    mixed = level("grpclib", statuses={"OK": 6, "NotFound": 3, "DeadlineExceeded": 1})
    summary = mixed.measured.latency
    methods = (
        MethodFigures("found", SAY, 2, {"OK": 6, "NotFound": 1}, summary),
        MethodFigures("missing", SAY, 1, {"NotFound": 2}, summary, expected=("NotFound",)),
    )
    mixed = replace(mixed, measured=replace(mixed.measured, methods=methods))
    # found's NotFound, and the call no method recorded (the watchdog's), are failures
    assert mixed.unexpected == 2


def test_methods_and_steps_round_trip_and_merge_over_processes() -> None:
    from dataclasses import replace

    from grpcbench.model.level_parts import MethodFigures
    from grpcbench.model.load_result import LoadResult
    from tests.support.factories import load_result

    base = load_result([1000, 2000], {"OK": 2})
    latency = base.latency
    first = replace(
        base,
        methods=(MethodFigures("a", SAY, 3, {"OK": 2}, latency),),
        steps=(MethodFigures("create", "create", 0, {"OK": 2}, latency),),
    )
    second = replace(
        base,
        methods=(MethodFigures("a", SAY, 3, {"NotFound": 1}, latency, expected=("NotFound",)),),
        steps=(MethodFigures("delete", "delete", 0, {"OK": 1}, latency),),
    )
    assert LoadResult.from_json(first.to_json()) == first
    merged = first.merge(second)
    (method,) = merged.methods
    assert method.statuses == {"OK": 2, "NotFound": 1} and method.latency.count == 4
    # a step only one process made (a flow's rarer branch) is kept
    assert [step.name for step in merged.steps] == ["create", "delete"]
    assert LoadResult.from_json({**base.to_json(), "methods": [], "steps": []}).methods == ()


def test_a_method_s_failed_row_counts_only_unexpected_statuses() -> None:
    """A method whose DeadlineExceeded is expected (its own --expect-status) shows
    failed 0, as the level counts it; it showed 'failed 100' (count - OK)."""
    from dataclasses import replace

    from grpcbench.model.level_parts import MethodFigures
    from grpcbench.report.table_rows import table_rows
    from tests.support.factories import level

    statuses = {"OK": 100, "DeadlineExceeded": 100, "Unavailable": 3}
    base = level("s", statuses=statuses)
    latency = base.measured.latency
    methods = (
        MethodFigures("slow", "p.S/Slow", 1, {"DeadlineExceeded": 100, "Unavailable": 1},
                      latency, expected=("DeadlineExceeded",)),
        MethodFigures("fast", "p.S/Fast", 1, {"OK": 100, "Unavailable": 2}, latency),
    )  # fmt: skip
    mixed = replace(base, measured=replace(base.measured, methods=methods))
    cells = {row.name: row.cell([mixed]) for row in table_rows([[mixed]])}
    assert cells["slow ×1 · failed"].strip() == "1" and cells["fast ×1 · failed"].strip() == "2"
    assert mixed.unexpected == 3


def test_big_weights_are_reduced_and_never_built_whole() -> None:
    """1000:10 runs as 100:1; 10000000:1 starts at once, in constant memory (it took
    17.6 s and 130 MB to build the 10,000,001-call cycle), with the same order the
    built cycle would have."""
    import itertools
    import time

    from grpcbench.rpc.mix import CYCLE_KEPT, weighted_order

    first = list(itertools.islice(weighted_order([1000, 10]), 303))
    assert first == list(weighted_cycle([100, 1])) * 3
    started = time.perf_counter()
    order = weighted_order([10_000_000, 1])
    head = list(itertools.islice(order, 20_000))
    assert time.perf_counter() - started < 5
    assert 1 not in head  # its one call falls mid-period, as the built cycle had it
    long = [CYCLE_KEPT, 3]  # just past the bound: generated, as built
    assert list(itertools.islice(weighted_order(long), sum(long))) == list(weighted_cycle(long))


@pytest.mark.integration
@pytest.mark.parametrize(("stack", "shape"), [
    ("wire", ["-c", "20", "--connections", "10"]),
    ("wire", ["--rate", "2000", "--max-in-flight", "50", "--connections", "5"]),
    ("grpcio", ["-c", "20", "--connections", "10"]),
])  # fmt: skip
def test_every_connection_carries_the_mix_in_its_proportions(
    tmp_path: Path, stack: str, shape: list[str]
) -> None:
    """8:1:1 over several connections, seen per connection by a recording proxy: each
    carries all three methods, each within one call per method of its share. With one
    shared order each connection carried one method only (behind a per-connection
    balancer, whole pods would have seen one method)."""
    from tests.support.recording_proxy import recording_proxy

    calls = ["--call", f"{SAY}:8", "--call", f"{EXPAND}:1", "--call", "echo.Echo/Collect:1"]
    with logging_echo() as (address, _), recording_proxy(address) as (proxy, recording):
        _run(proxy, tmp_path / "r.json", *calls, "-d", '{"message": "m"}', "-n", "1000",
             "--client-stack", stack, *shape)  # fmt: skip
        connections = [c for c in recording.take() if len(c.streams) > 3]  # not pre-flight
    assert len(connections) == int(shape[-1])
    for connection in connections:
        paths = Counter(stream.path.rsplit("/", 1)[1] for stream in connection.streams)
        total = sum(paths.values())
        for method, weight in (("Say", 8), ("Expand", 1), ("Collect", 1)):
            assert abs(paths[method] - total * weight / 10) <= 1.5, (paths, total)


def test_a_random_order_draws_by_weight_and_each_order_apart() -> None:
    """--mix-order random: Locust's choice per call. 8:1:1 over 20,000 draws is within
    five binomial deviations of its shares, is not the cycle, and two orders (two
    connections) differ."""
    import itertools
    import math

    from grpcbench.rpc.mix import weighted_order

    first = list(itertools.islice(weighted_order((8, 1, 1), random_order=True), 20_000))
    counts = Counter(first)
    for index, share in enumerate((0.8, 0.1, 0.1)):
        assert abs(counts[index] - 20_000 * share) < 5 * math.sqrt(20_000 * share * (1 - share))
    cycle = weighted_cycle((8, 1, 1))
    assert first[:100] != [cycle[n % 10] for n in range(100)]
    second = list(itertools.islice(weighted_order((8, 1, 1), random_order=True), 100))
    assert second != first[:100]
