"""The ghz driver: parsing real ghz reports, a real run beside the built-in driver, errors."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
from pathlib import Path

import pytest

from grpcbench.base.errors import UsageError
from grpcbench.load.ghz import GhzError, find_ghz, ghz_command, parse_ghz_report
from grpcbench.report.table import build_tables
from tests.conftest import GRPCBENCH, REPO
from tests.support.factories import level, make_spec

FIXTURES = Path(__file__).parent / "fixtures" / "ghz"
SPEC = make_spec(target="127.0.0.1:1", service="hello", concurrency=10, connections=1)


def _report(name: str) -> dict:  # type: ignore[type-arg]
    return json.loads((FIXTURES / f"{name}.json").read_text())


def ghz_binary() -> str:
    """ghz from PATH; CI installs it (.ci/run), so there it must be present."""
    found = shutil.which("ghz")
    if not found:
        if os.environ.get("CI"):
            pytest.fail("ghz is not on PATH in CI: .ci/run must install it")
        pytest.skip("ghz not installed (go install github.com/bojand/ghz/cmd/ghz@v0.120.0)")
    return found


def test_parse_ok_report() -> None:
    report = _report("hello_ok")
    result = parse_ghz_report(report, SPEC, cpu_s=0.25)
    assert result.driver == "ghz"
    assert result.statuses == {"OK": 200}
    assert result.latency.count == 200
    assert result.wall_s == pytest.approx(report["total"] / 1e9)
    assert result.rps == pytest.approx(report["rps"], rel=1e-6)
    assert result.latency.min_us == report["fastest"] // 1000
    assert result.latency.max_us == report["slowest"] // 1000
    assert result.latency.mean_us == pytest.approx(report["average"] / 1000, rel=1e-3)
    ghz_p50 = next(p["latency"] for p in report["latencyDistribution"] if p["percentage"] == 50)
    assert result.latency.percentile_us(50) == pytest.approx(ghz_p50 / 1000, rel=5e-3)
    assert result.client_cpu_s == 0.25 and not result.latency_note


def test_parse_report_with_errors_counts_every_status_and_latency() -> None:
    result = parse_ghz_report(_report("deadline_errors"), SPEC)
    assert result.statuses == {"DeadlineExceeded": 38, "OK": 2}
    assert result.count == 40 and result.ok == 2
    # Failed calls are in the latency figures too (ghz alone would leave them out).
    assert result.latency.count == 40
    assert result.latency.percentile_us(50) >= 50_000  # the 50 ms deadline


def test_parse_unavailable_report() -> None:
    result = parse_ghz_report(_report("unreachable"), SPEC)
    assert result.statuses == {"Unavailable": 10} and result.ok == 0


def test_truncated_details_are_reported() -> None:
    report = _report("hello_ok")
    report["details"] = report["details"][:50]
    result = parse_ghz_report(report, SPEC)
    assert result.count == 200 and result.latency.count == 50
    assert "50 of 200 calls" in result.latency_note


def test_unparseable_report_is_a_driver_error() -> None:
    with pytest.raises(GhzError, match="unexpected ghz report"):
        parse_ghz_report({"statusCodeDistribution": {"OK": 1}}, SPEC)


def test_command_uses_protos_connections_and_count_errors(tmp_path: Path) -> None:
    spec = make_spec(
        target="127.0.0.1:5", service="hello", concurrency=120, connections=3,
        timeout_s=1.5, workload_params={"name": "x"}, cpus=(1,),
    )  # fmt: skip
    argv = ghz_command("ghz", spec, 1000, 0.0, tmp_path)
    assert "--count-errors" in argv and "--total=1000" in argv
    assert "--connections=3" in argv and "--concurrency=120" in argv
    assert "--timeout=1500ms" in argv and "--cpus=1" in argv
    assert f"--proto={tmp_path / 'grpcbench/proto/helloworld.proto'}" in argv
    assert '--data={"name": "x"}' in argv and argv[-1] == "127.0.0.1:5"
    timed = ghz_command("ghz", spec, 0, 2.0, tmp_path)
    assert "--duration=2000ms" in timed and "--duration-stop=wait" in timed


def test_missing_ghz_says_how_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", "/nonexistent")
    with pytest.raises(UsageError, match="go install github.com/bojand/ghz/cmd/ghz@v0.120.0"):
        find_ghz()
    with pytest.raises(UsageError, match="not an executable"):
        find_ghz("/nonexistent/ghz")


def test_side_by_side_table_states_the_gap() -> None:
    table = build_tables([level("grpclib", driver="builtin"), level("grpclib", driver="ghz")])[0]
    assert table.columns == ("grpclib [builtin]", "grpclib [ghz]")
    gap = [note for note in table.notes if note.startswith("grpclib: ghz / builtin")]
    assert gap == ["grpclib: ghz / builtin = Requests/sec 1.00x, p50 1.00x, p99 1.00x"]
    assert any("--count-errors" in note for note in table.notes)


@pytest.mark.integration
def test_both_drivers_against_the_hello_server(tmp_path: Path) -> None:
    binary = ghz_binary()
    out = tmp_path / "r.json"
    result = subprocess.run(
        [*GRPCBENCH, "run", "--load", "builtin,ghz", "--ghz", binary, "-s", "grpclib",
         "-c", "2,20", "-n", "300", "--warmup", "30", "--output", str(out)],
        capture_output=True, text=True, timeout=180, check=False, cwd=tmp_path,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    data = json.loads(out.read_text())
    drivers = [(lv["load"]["driver"], lv["plan"]["concurrency"]) for lv in data["levels"]]
    assert drivers == [("builtin", 2), ("ghz", 2), ("builtin", 20), ("ghz", 20)]
    for lv in data["levels"]:
        assert lv["load"]["statuses"] == {"OK": 300}
        assert lv["load"]["latency"]["count"] == 300
        assert lv["load"]["client_cpu_s"] > 0
        assert lv["server_usage"]["cpu_s"] > 0
    assert "grpclib [ghz]" in result.stdout and "ghz / builtin" in result.stdout


@pytest.mark.integration
def test_failing_ghz_keeps_other_results(tmp_path: Path) -> None:
    """ghz that exits non-zero: its stderr is shown, the built-in results are kept."""
    fake = tmp_path / "ghz"
    fake.write_text("#!/bin/sh\necho 'ghz: something went wrong' >&2\nexit 1\n")
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    out = tmp_path / "r.json"
    result = subprocess.run(
        [*GRPCBENCH, "run", "--load", "builtin,ghz", "--ghz", str(fake), "-s", "grpcio-aio",
         "-c", "2", "-n", "50", "--warmup", "0", "--output", str(out)],
        capture_output=True, text=True, timeout=120, check=False, cwd=REPO,
    )  # fmt: skip
    assert result.returncode == 4
    assert "Traceback" not in result.stderr
    assert "ghz: something went wrong" in result.stderr
    data = json.loads(out.read_text())
    assert data["status"] == "failed"
    assert [lv["load"]["driver"] for lv in data["levels"]] == ["builtin"]
    assert "grpcio-aio" in result.stdout  # the measured table is still printed


def test_ghz_refuses_workloads_it_cannot_run_before_anything_starts() -> None:
    from grpcbench.run.arguments import RunArgs
    from grpcbench.run.options import build_run_options

    with pytest.raises(UsageError, match="ghz cannot page through ListUsers"):
        build_run_options(RunArgs(scenario="paginate-vs-stream", load="builtin,ghz"))
    options = build_run_options(
        RunArgs(scenario="paginate-vs-stream", load="ghz", variants="stream-fetch-10")
    )
    argv = ghz_command(
        "ghz", make_spec(target="127.0.0.1:1", service="users", concurrency=1,
                        workload_params=options.workload_params(options.levels[0])),
        5, 0.0, Path("/protos"),
    )  # fmt: skip
    assert "--call=users.Users.StreamUsers" in argv
    assert '--data={"keyword": "ff", "page_size": 1000, "fetch_concurrency": 10}' in argv


@pytest.mark.integration
def test_ghz_drives_a_streaming_scenario(tmp_path: Path) -> None:
    binary = ghz_binary()
    out = tmp_path / "r.json"
    result = subprocess.run(
        [*GRPCBENCH, "run", "--scenario", "watch", "--load", "builtin,ghz", "--ghz", binary,
         "-s", "grpcio-aio", "-c", "4", "-n", "8", "--warmup", "0",
         "--variants", "separated-small-serialized", "--server-param", "pairs=50",
         "--output", str(out)],
        capture_output=True, text=True, timeout=180, check=False,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    builtin, ghz = json.loads(out.read_text())["levels"]
    assert builtin["load"]["statuses"] == ghz["load"]["statuses"] == {"OK": 8}
