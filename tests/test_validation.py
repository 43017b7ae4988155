"""Options, scenario files and output paths are checked before anything starts."""

from __future__ import annotations

import csv
import subprocess
from pathlib import Path

import pytest

from grpcbench.backing.options import BackingArgs
from grpcbench.base.errors import UsageError
from grpcbench.report.exporters import Exports, Output
from grpcbench.run.arguments import RunArgs
from grpcbench.run.options import build_run_options
from tests.conftest import GRPCBENCH


def _scenario(tmp_path: Path, body: str) -> str:
    path = tmp_path / "mine.toml"
    path.write_text('name = "mine"\nservice = "hello"\n' + body)
    return str(path)


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("[defaults]\nconcurency = [2]\n", "unknown key 'concurency' in \\[defaults\\]"),
        ("colour = 1\n", "unknown key 'colour' in the scenario"),
        ("defaults = 3\n", "\\[defaults\\] must be a table"),
        ("[defaults]\nconcurrency = [0, -1]\n", "concurrency must be a positive integer"),
        ("[defaults]\nrequests = -5\n", "requests must be a positive integer"),
        ('[defaults]\ntimeout = "soon"\n', "timeout"),
        ('[workload]\nnmae = "x"\n', "unknown workload param 'nmae'.*known: name"),
        ("[server]\ndelay = 5\n", "unknown server param 'delay'.*known: delay_ms"),
        ('[[variants]]\nkind = "a"\n', "needs a name"),
    ],
)
def test_bad_scenario_files_are_one_clear_error(tmp_path: Path, body: str, message: str) -> None:
    with pytest.raises(UsageError, match=message):
        build_run_options(RunArgs(scenario=_scenario(tmp_path, body)))


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            RunArgs(backing=BackingArgs(io_delay_ms=500)),
            "--io-delay-ms does not apply to scenario hello",
        ),
        (
            RunArgs(backing=BackingArgs(mongo_uri="mongodb://h/")),
            "--mongo-uri does not apply to scenario hello",
        ),
        (RunArgs(server_params=("users=5",)), "unknown server param 'users'"),
        (RunArgs(workload_params=("keyword=e",)), "unknown workload param 'keyword'"),
        (
            RunArgs(scenario="s3-list", backing=BackingArgs(mongo_driver="mango")),
            "pymongo or motor",
        ),
        (RunArgs(scenario="s3-list", backing=BackingArgs(io_delay_ms=-1)), "bad --io-delay-ms -1"),
        (RunArgs(scenario="paginate-vs-stream", server_params=("users=0",)), "users"),
        (RunArgs(scenario="watch", variants="mono-huge-objects"), "unknown variant"),
    ],
)
def test_params_are_checked_by_the_service_that_owns_them(args: RunArgs, message: str) -> None:
    with pytest.raises(UsageError, match=message):
        build_run_options(args)


def test_named_options_reach_the_service_typed() -> None:
    options = build_run_options(
        RunArgs(
            scenario="s3-mongo",
            backing=BackingArgs(io_delay_ms=500, mongo_uri='mongodb://u:p"q@h/'),
        )
    )
    params = options.scenario.server_params
    assert params["io_delay_ms"] == 500.0 and params["mongo_uri"] == 'mongodb://u:p"q@h/'


def test_every_default_comes_from_one_place() -> None:
    from grpcbench.base import defaults
    from grpcbench.model.plan import LoadSettings

    options = build_run_options(RunArgs(scenario="hello"))
    assert options.settings.max_level_s == LoadSettings().max_level_s == 300.0
    assert options.settings.max_in_flight == defaults.MAX_IN_FLIGHT
    assert options.column_labels == defaults.SERVERS


@pytest.mark.parametrize("where", ["/proc/x.json", "DIR"])
def test_unwritable_output_fails_before_anything_starts(tmp_path: Path, where: str) -> None:
    target = str(tmp_path) if where == "DIR" else where
    result = subprocess.run(
        [*GRPCBENCH, "run", "--load", "fake", "-s", "grpclib", "-c", "2", "-n", "10",
         "--output", target],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert result.returncode == 2, result.stderr
    assert "--output" in result.stderr and "Traceback" not in result.stderr
    assert "starting" not in result.stderr  # no server was started
    assert not list(tmp_path.glob("*.tmp"))


def test_two_outputs_naming_one_file_are_refused(tmp_path: Path) -> None:
    same = tmp_path / "r.out"
    exports = Exports((Output("json", same), Output("csv", same)))
    with pytest.raises(UsageError, match="same file"):
        exports.check()


@pytest.mark.integration
def test_csv_tells_the_levels_of_a_sweep_apart(tmp_path: Path) -> None:
    path = tmp_path / "r.csv"
    result = subprocess.run(
        [*GRPCBENCH, "run", "--load", "fake", "-s", "grpclib", "--rate", "100,200",
         "--channels", "1,2", "-n", "10", "--csv", str(path)],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    rows = list(csv.DictReader(path.open()))
    keys = [(r["rate"], r["channels"], r["connection"], r["repeat"]) for r in rows]
    assert keys == [
        ("100.0", "1", "pool:1", "0"), ("100.0", "2", "pool:2", "0"),
        ("200.0", "1", "pool:1", "0"), ("200.0", "2", "pool:2", "0"),
    ]  # fmt: skip


@pytest.mark.integration
def test_any_registered_exporter_by_name(tmp_path: Path) -> None:
    path = tmp_path / "r.md"
    result = subprocess.run(
        [*GRPCBENCH, "run", "--load", "fake", "-s", "grpclib", "-c", "2", "-n", "10",
         "--export", f"markdown={path}"],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "| Count | 10 |" in path.read_text()
    bad = subprocess.run(
        [*GRPCBENCH, "run", "--load", "fake", "--export", "yaml=r.yaml"],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert bad.returncode == 2 and "bad --export 'yaml=r.yaml'" in bad.stderr


@pytest.mark.integration
def test_server_per_level_starts_a_fresh_server_for_each_level(tmp_path: Path) -> None:
    args = ["run", "--load", "fake", "-s", "grpclib", "-c", "2,3", "-n", "10"]
    shared = subprocess.run(
        [*GRPCBENCH, *args], capture_output=True, text=True, timeout=60, check=False
    )
    fresh = subprocess.run(
        [*GRPCBENCH, *args, "--server-per-level"],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert shared.returncode == fresh.returncode == 0, fresh.stderr
    assert shared.stderr.count("grpclib: starting") == 1
    assert fresh.stderr.count("grpclib: starting") == 2
    assert build_run_options(RunArgs(scenario="watch")).server_per_level is True
    assert (
        build_run_options(RunArgs(scenario="watch", server_per_level=False)).server_per_level
        is False
    )


def test_a_service_given_on_its_own_drops_the_scenarios_params() -> None:
    """--service replaces the scenario's service: hello's `name` is not the new one's
    workload param (a service declaring its own params used to be refused)."""
    from grpcbench.run.arguments import RunArgs
    from grpcbench.run.options import build_run_options

    options = build_run_options(
        RunArgs(service="tests.support.services:CLIENT_BURNER", load="fake", concurrency="2")
    )
    assert options.scenario.service == "tests.support.services:CLIENT_BURNER"
    assert dict(options.scenario.workload_params) == {}
    same = build_run_options(RunArgs(service="hello", load="fake", concurrency="2"))
    assert dict(same.scenario.workload_params) == {"name": "world"}
