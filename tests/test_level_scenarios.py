"""Several scenarios at once (k6's ``scenarios``): a scenario file's [[scenarios]], each
its own executor, checked at a recording server and in the rows and JSON it makes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from grpcbench.base.errors import OneLineError, UsageError
from grpcbench.model.level_scenarios import LevelScenario
from grpcbench.model.scenario import load_scenario, parse_scenario
from tests.conftest import REPO, run_grpcbench
from tests.support.logging_echo import logging_echo

PROTO = str(REPO / "examples" / "echo" / "echo.proto")
SAY, EXPAND = "echo.Echo/Say", "echo.Echo/Expand"
READERS = (
    f'[[scenarios]]\nname = "readers"\nmethod = "{SAY}"\nrate = 100\ndata = {{ message = "r" }}\n'
)
WRITERS = (
    f'[[scenarios]]\nname = "writers"\nmethod = "{EXPAND}"\nconcurrency = 3\n'
    'data = { message = "w" }\n'
)


def _file(tmp_path: Path, *scenarios: str, head: str = "") -> Path:
    path = tmp_path / "s.toml"
    path.write_text(
        f'name = "both"\n{head}[call]\nproto = "{PROTO}"\n[defaults]\nwarmup = "0"\n'
        + "".join(scenarios)
    )
    return path


def test_scenarios_are_a_mix_of_their_methods_each_with_its_executor(tmp_path: Path) -> None:
    scenario = load_scenario(str(_file(tmp_path, READERS, WRITERS)))
    assert scenario.level_scenarios == (
        LevelScenario("readers", rate=100.0),
        LevelScenario("writers", users=3),
    )
    assert [(e.method, e.name, e.weight) for e in scenario.call.mix] == [
        (SAY, "readers", 1),
        (EXPAND, "writers", 1),
    ]


@pytest.mark.parametrize(
    ("entry", "fragment"),
    [
        ('name = "a"\nmethod = "x.Y/Z"', "give its executor"),
        ('name = "a"\nmethod = "x.Y/Z"\nrate = 5\nconcurrency = 2', "give its executor"),
        ('method = "x.Y/Z"\nrate = 5', "every scenario needs a name"),
        ('name = "a"\nmethod = "x.Y/Z"\nrate = 0', "rate must be a positive number"),
        ('name = "a"\nmethod = "x.Y/Z"\nrate = inf', "rate must be a positive number"),
        ('name = "a"\nmethod = "x.Y/Z"\nconcurrency = 0', "concurrency must be a positive"),
        ('name = "a"\nmethod = "x.Y/Z"\nconcurrency = 2\nmax_in_flight = 3', "give rate"),
        ('name = "a"\nmethod = "x.Y/Z"\nconcurrency = 2\nweight = 3', "has no weight"),
        ('name = "a"\nmethod = "x.Y/Z"\nconcurrency = 2\nspeed = 3', "unknown key 'speed'"),
        ('name = "a"\nconcurrency = 2', "method must be package.Service/Method"),
    ],
)
def test_a_bad_scenario_entry_is_one_error(tmp_path: Path, entry: str, fragment: str) -> None:
    with pytest.raises(UsageError, match="invalid scenario file") as raised:
        load_scenario(str(_file(tmp_path, f"[[scenarios]]\n{entry}\n")))
    assert fragment in str(raised.value)


# What a TOML file can hold where a scenario's key is: every type, and the edges.
TOML_VALUES = st.one_of(
    st.none(), st.booleans(), st.integers(-(2**63), 2**63 - 1),
    st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=12),
    st.sampled_from(["", " ", "\x1b[31m", SAY, "echo.Echo/", "1s", "-1s", "NotFound"]),
    st.lists(st.integers(), max_size=3), st.dictionaries(st.text(max_size=3), st.integers(),
                                                          max_size=2),
)  # fmt: skip
KEYS = ["name", "method", "rate", "concurrency", "max_in_flight", "data", "metadata",
        "timeout", "expect_status", "weight", "speed"]  # fmt: skip


@given(st.lists(st.dictionaries(st.sampled_from(KEYS), TOML_VALUES, max_size=6), max_size=4))
def test_any_scenarios_tables_are_taken_or_one_error(tables: list[dict]) -> None:
    """Whatever [[scenarios]] holds: a scenario whose executors make sense, or one
    UsageError, never another exception."""
    data = {"name": "x", "call": {"proto": "p.proto"}, "scenarios": tables}
    try:
        scenario = parse_scenario(data, Path("s.toml"))
    except OneLineError as error:
        assert "\n" not in str(error)
        return
    assert len(scenario.level_scenarios) == len(scenario.call.mix) == len(tables)
    for executor in scenario.level_scenarios:
        assert (executor.users > 0) != (executor.rate > 0) and executor.name.strip()
        assert executor.rate == 0 or 0 < executor.rate < float("inf")


def test_names_repeat_or_a_mix_beside_them_is_refused(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="names repeat: 'readers'"):
        load_scenario(str(_file(tmp_path, READERS, READERS)))
    mix = f'[[mix]]\nmethod = "{SAY}"\n'
    with pytest.raises(UsageError, match=r"give \[\[mix\]\] or \[\[scenarios\]\], not both"):
        load_scenario(str(_file(tmp_path, READERS, mix)))


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["-c", "4"], "set their own load (concurrency or rate): drop --concurrency"),
        (["--rate", "50"], "drop --rate"),
        (["--rate-schedule", "step:start=10,step=10,every=1s,end=30"], "drop --rate-schedule"),
        (["--call", SAY], "each name their method: drop --call"),
        (["--call", f"{SAY}:1", "--call", f"{EXPAND}:1"], "each name their method: drop --call"),
        (["--think-time", "1s"], "scenario 'readers' sends at its rate"),
        (["--load", "ghz"], "--load ghz cannot run"),
        (["--load", "fake"], "cannot run several scenarios at once"),
        (
            ["--threshold", "p99{scenario:nope}<1s"],
            "no scenario 'nope' (scenarios: readers, writers)",
        ),
        (["--threshold", "checks{scenario:readers}>=1%"], "tags a --threshold's latency, rps or"),
    ],
)
def test_what_would_override_the_scenarios_is_one_line(
    tmp_path: Path, args: list[str], fragment: str
) -> None:
    path = _file(tmp_path, READERS, WRITERS)
    done = run_grpcbench("run", "127.0.0.1:1", "--scenario", str(path), *args, "--dry-run")
    assert done.returncode == 2, done.stderr
    errors = [line for line in done.stderr.splitlines() if "error:" in line]
    assert len(errors) == 1 and fragment in errors[0], done.stderr
    assert "Traceback" not in done.stderr


def _run(
    address: str, tmp_path: Path, path: Path, *args: str, exit_code: int = 0
) -> tuple[dict, str]:
    out = tmp_path / "r.json"
    done = run_grpcbench(
        "run", "--target", address, "--insecure", "--scenario", str(path), "--output", str(out),
        *args,
    )  # fmt: skip
    assert done.returncode == exit_code, done.stderr
    return json.loads(out.read_text()), done.stdout


@pytest.mark.integration
@pytest.mark.parametrize(("processes", "stack"), [("1", "wire"), ("2", "wire"), ("1", "grpcio")])
def test_each_scenario_runs_its_own_executor_and_has_its_own_rows(
    tmp_path: Path, processes: str, stack: str
) -> None:
    """200 calls each: the readers at 100/s (an open loop: 2 s), the writers as 3 users
    as fast as they can; the server saw exactly each one's calls, each with its data."""
    with logging_echo() as (address, log):
        result, table = _run(
            address, tmp_path, _file(tmp_path, READERS, WRITERS), "-n", "200",
            "--client-processes", processes, "--interval", "0.5s", "--client-stack", stack,
        )  # fmt: skip
        said, expanded = log.requests("Say"), log.requests("Expand")
        arrivals = [t for (method, _), t in zip(log.calls, log.arrivals, strict=True)
                    if method == "Say"]  # fmt: skip
    assert said == {b"\n\x01r": 200 + 1} and expanded == {b"\n\x01w": 200 + 1}  # + pre-flight
    (level,) = result["levels"]
    assert level["plan"]["scenarios"] == ["readers", "writers"]
    load = level["load"]
    scenarios = {s["name"]: s for s in load["scenarios"]}
    assert [s["executor"] for s in load["scenarios"]] == ["rate 100/s", "concurrency 3"]
    readers, writers = scenarios["readers"]["load"], scenarios["writers"]["load"]
    assert readers["statuses"] == {"OK": 200} and writers["statuses"] == {"OK": 200}
    assert load["statuses"] == {"OK": 400}
    assert readers["rate"] == 100 and readers["concurrency"] > 0
    assert writers["rate"] == 0 and writers["concurrency"] == 3
    assert readers["processes"] == writers["processes"] == int(processes)
    # The open loop kept its timetable (199 gaps of 10 ms), beside the closed loop.
    assert 1.9 <= readers["wall_s"] <= 2.3
    assert 1.9 <= arrivals[-1] - arrivals[1] <= 2.3  # arrivals[0]: the pre-flight call
    assert writers["wall_s"] < readers["wall_s"]
    assert sum(i["ok"] + i["failed"] for i in load["intervals"]) == 400
    assert "scenario readers (rate 100/s) · calls" in table
    assert "scenario writers (concurrency 3) · calls" in table
    recorded = result["options"]["call"]["mix"]
    assert [part["executor"] for part in recorded] == ["rate 100/s", "concurrency 3"]


@pytest.mark.integration
def test_scenarios_share_a_duration_and_each_is_judged_by_its_own_statuses_and_thresholds(
    tmp_path: Path,
) -> None:
    missing = (
        f'[[scenarios]]\nname = "missing"\nmethod = "{SAY}"\nconcurrency = 1\n'
        'data = { message = "fail" }\nexpect_status = ["NotFound"]\n'
    )
    with logging_echo() as (address, log):
        result, table = _run(
            address, tmp_path, _file(tmp_path, READERS, missing), "-z", "2s",
            "--threshold", "rps{scenario:readers}>=90",
            "--threshold", "errors{scenario:missing}<1%", "--threshold", "errors<1%",
            "--threshold", "p50{scenario:readers}<1us", exit_code=99,
        )  # fmt: skip
        said = log.requests("Say")
    (level,) = result["levels"]
    scenarios = {s["name"]: s for s in level["load"]["scenarios"]}
    readers, failing = scenarios["readers"]["load"], scenarios["missing"]["load"]
    assert said[b"\n\x01r"] == readers["statuses"]["OK"] + 1
    assert abs(readers["statuses"]["OK"] - 200) <= 2  # 2 s at 100/s
    assert failing["statuses"] == {"NotFound": said[b"\n\x04fail"] - 1}
    assert scenarios["missing"]["expected"] == ["NotFound"]
    assert "scenario missing (concurrency 1) · failed" in table
    assert result["level_errors"] == [] and result["status"] == "complete"
    # k6's thresholds on one scenario: each judged on its own figures (exit 99: one breached)
    breached = [line for line in table.splitlines() if "breached" in line]
    assert breached and all("p50{scenario:readers}<1us" in line for line in breached), table


@pytest.mark.integration
def test_on_dask_each_scenario_runs_on_workers_of_its_own(tmp_path: Path) -> None:
    """--cluster local:3: the readers on two workers, the writers on one; each worker's
    figures are its scenario's, and the scenarios merge over their workers exactly."""
    pytest.importorskip("distributed")
    with logging_echo() as (address, log):
        result, table = _run(
            address, tmp_path, _file(tmp_path, READERS, WRITERS), "-n", "200",
            "--cluster", "local:3",
        )  # fmt: skip
        said, expanded = log.requests("Say"), log.requests("Expand")
    assert said == {b"\n\x01r": 200 + 1} and expanded == {b"\n\x01w": 200 + 1}
    (level,) = result["levels"]
    load = level["load"]
    assert load["driver"] == "dask" and len(load["workers"]) == 3
    scenarios = {s["name"]: s["load"] for s in load["scenarios"]}
    assert len(scenarios["readers"]["workers"]) == 2 and len(scenarios["writers"]["workers"]) == 1
    assert scenarios["readers"]["statuses"] == {"OK": 200} == scenarios["writers"]["statuses"]
    assert 1.9 <= scenarios["readers"]["wall_s"] <= 2.3  # 100/s over its own workers
    assert "scenario writers (concurrency 3) · calls" in table


def test_on_dask_fewer_workers_than_scenarios_is_the_level_s_one_error() -> None:
    from grpcbench.base.errors import DriverError
    from grpcbench.load.cluster_split import split_over_workers
    from grpcbench.model.load_result import GeneratorJob, Share
    from grpcbench.model.plan import LevelPlan, LoadSettings

    plan = LevelPlan(4)
    job = GeneratorJob("127.0.0.1:1", "", plan, LoadSettings(), Share(4, 100, 0, 1))
    level = GeneratorJob("127.0.0.1:1", "", plan, LoadSettings(), Share(8, 100, 0, 1),
                         parts=(job, job, job))  # fmt: skip
    with pytest.raises(DriverError, match="3 scenarios, 2 worker"):
        split_over_workers(level, 2)
    parts, grouped = split_over_workers(level, 4)
    assert [len(group) for group in grouped] == [2, 1, 1]
    assert [part.share.index for part in parts] == [0, 1, 2, 3]
    assert {part.share.of for part in parts} == {4}


def test_each_scenario_s_job_is_its_method_on_its_executor_with_its_deadline() -> None:
    from grpcbench.model.level_scenarios import level_plan
    from grpcbench.model.load_result import GeneratorJob
    from grpcbench.model.plan import LoadSettings
    from grpcbench.rpc.call import MethodCall
    from grpcbench.run.measure import generator_job

    scenarios = (LevelScenario("readers", rate=50.0, max_in_flight=7), LevelScenario("w", users=3))
    say = MethodCall(SAY, "", '{"message": "r"}', label="readers", timeout_s=0.25)
    expand = MethodCall(EXPAND, "", '{"message": "w"}', label="w")
    call = MethodCall(SAY, "", mix=(say, expand))
    settings = LoadSettings(timeout_s=20.0)
    plan = level_plan(scenarios, "auto")
    job = generator_job(settings, plan, "127.0.0.1:1", "", {}, call, scenarios=scenarios)
    readers, writers = job.parts
    assert (readers.plan.rate, readers.share.concurrency, readers.share.rate) == (50.0, 7, 50.0)
    assert (writers.plan.rate, writers.share.concurrency) == (0.0, 3)
    assert readers.call is not None and readers.call["call"] == SAY and not readers.call["mix"]
    assert writers.call is not None and writers.call["call"] == EXPAND
    assert readers.settings.timeout_s == 0.25 and writers.settings.timeout_s == 20.0
    assert plan.describe() == "scenarios readers + w" and plan.concurrency == 10
    assert GeneratorJob.from_json(job.to_json()) == job  # its parts cross a pipe whole
