"""The pytest plugin, tested with pytest's own pytester in a separate pytest run."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

pytest_plugins = ["pytester"]

pytestmark = pytest.mark.integration

SUITE = """
def test_hello(grpcbench_benchmark):
    level = grpcbench_benchmark("grpcio-aio", concurrency=2, requests=60, warmup=6, rounds=2)
    assert level.measured.ok == 60


def test_two_servers(grpcbench):
    first = grpcbench.server("grpclib")
    second = grpcbench.server("grpcio:workers=2")
    for server in (first, second):
        level = grpcbench.load(server, concurrency=3, requests=30, warmup=0)
        assert level.measured.statuses == {"OK": 30}
        assert level.server_usage is not None
"""


def test_fixtures_feed_pytest_benchmark_storage(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Under pytest-xdist the inner run would inherit the worker's name, and
    # pytest-benchmark turns itself off in an xdist worker (nothing saved).
    monkeypatch.delenv("PYTEST_XDIST_WORKER", raising=False)
    pytester.makepyfile(test_suite=SUITE)
    result = pytester.runpytest_subprocess(
        "--benchmark-autosave", "--benchmark-storage=file://store", "-p", "no:cacheprovider"
    )
    result.assert_outcomes(passed=2)
    (saved,) = (pytester.path / "store").rglob("*.json")
    data = json.loads(saved.read_text())
    (bench,) = data["benchmarks"]
    extra = bench["extra_info"]
    # The top-level figures cover every round, as OPS does: 2 rounds of 60 calls.
    assert extra["grpcbench_server"] == "grpcio-aio" and extra["calls"] == 120
    assert [r["calls"] for r in extra["rounds"]] == [60, 60] and extra["ok"] == 120
    # pytest-benchmark's own columns are the measured phase: rounds = repeats,
    # times = seconds per call, OPS = calls per second (harmonic mean of the rounds).
    stats = bench["stats"]
    rates = extra["requests_per_sec_rounds"]
    assert stats["rounds"] == 2 and len(rates) == 2
    harmonic = 2 / sum(1 / r for r in rates)
    assert stats["ops"] == pytest.approx(harmonic, rel=0.01)
    assert stats["max"] < 0.1  # seconds per call, not the round's wall time
    assert extra["verdict"] in ("server-bound", "generator-bound", "both saturated", "neither")
    assert extra["requests_per_sec"] > 0 and extra["latency_p99_ms"] >= extra["latency_p50_ms"]
    assert extra["server_cpu_s"] >= 0 and extra["server_peak_rss_bytes"] > 0

    compared = subprocess.run(
        [sys.executable, "-c", "from pytest_benchmark.cli import main; main()",
         "--storage", "file://store", "compare"],
        cwd=pytester.path, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert compared.returncode == 0, compared.stderr
    assert "test_hello" in compared.stdout


def test_each_measurement_is_kept_in_the_store_it_names(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """store= and project= (or GRPCBENCH_STORE, GRPCBENCH_PROJECT), as `run --store`."""
    pytest.importorskip("otava")
    pytester.makepyfile(
        test_stored="""
def test_kept(grpcbench_benchmark):
    grpcbench_benchmark("grpclib", requests=50, warmup=0, store="sqlite:///runs.db",
                        project="suite")


def test_kept_by_the_environment(grpcbench_benchmark):
    grpcbench_benchmark("grpclib", requests=50, warmup=0)
"""
    )
    monkeypatch.setenv("GRPCBENCH_STORE", "sqlite:///runs.db")
    monkeypatch.setenv("GRPCBENCH_PROJECT", "suite")
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(passed=2)
    from grpcbench.history.store import Store

    runs = Store(f"sqlite:///{pytester.path / 'runs.db'}").runs("suite")
    assert len(runs) == 2 and all(run.kind == "run" for run in runs)


def test_a_running_server_as_target(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_target="""
def test_running(grpcbench, grpcbench_benchmark):
    server = grpcbench.server("grpclib")
    level = grpcbench_benchmark(target=server.address, target_pid=server.pid,
                                concurrency=2, requests=40, warmup=0)
    assert level.measured.ok == 40 and level.server_usage is not None
"""
    )
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)


def test_missing_pytest_benchmark_is_one_line(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_missing="""
def test_bench(grpcbench_benchmark):
    grpcbench_benchmark("grpclib")
"""
    )
    result = pytester.runpytest_subprocess("-p", "no:benchmark", "-p", "no:cacheprovider")
    result.assert_outcomes(errors=1)
    assert "SubRequest" not in result.stdout.str()
    assert "needs pytest-benchmark: pip install 'grpcbench[pytest]'" in result.stdout.str()


def test_any_method_through_runs_options_and_a_wrong_one_fails_clearly(
    pytester: pytest.Pytester,
) -> None:
    """The plugin takes `run`'s --call options by name; a method the target lacks
    stops at the pre-flight call with one line (it used to record failures as OPS)."""
    pytester.makepyfile(
        test_call="""
def test_call(grpcbench, grpcbench_benchmark):
    server = grpcbench.server("grpclib")
    level = grpcbench_benchmark(
        target=server.address, call="helloworld.Greeter/SayHello", data={"name": "x" * 100},
        metadata={"k": "v"}, concurrency=2, requests=40, warmup=0, rounds=2,
    )
    assert level.measured.ok == 40 and level.server_usage is None


def test_wrong_method(grpcbench):
    server = grpcbench.server("grpclib")
    grpcbench.load(server, call="helloworld.Greeter/SayGoodbye", requests=10)


def test_wrong_option(grpcbench):
    grpcbench.load("127.0.0.1:1", reqeusts=10)
"""
    )
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--benchmark-json=out.json")
    result.assert_outcomes(passed=1, failed=2)
    text = result.stdout.str()
    assert "grpcbench: " in text and "SayGoodbye" in text and "Traceback" not in text
    assert "unknown option(s) reqeusts" in text
    (bench,) = json.loads((pytester.path / "out.json").read_text())["benchmarks"]
    assert len(bench["extra_info"]["rounds"]) == 2  # every round kept, not only the last


def test_the_readmes_example_runs(pytester: pytest.Pytester) -> None:
    """The README's pytest example, as written, against examples/echo (its running
    server: one the suite starts, at the address the example names)."""
    from pathlib import Path

    from tests.support.echo_server import echo_server

    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text()
    example = readme.split("## In a pytest-benchmark suite", 1)[1].split("```python\n", 1)[1]
    example = example.split("```", 1)[0]
    echo = Path(__file__).resolve().parents[1] / "examples" / "echo"
    for path in echo.iterdir():
        if path.is_file():
            (pytester.path / path.name).write_bytes(path.read_bytes())
    with echo_server() as address:
        pytester.makepyfile(test_readme=example.replace("127.0.0.1:50051", address))
        result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(passed=2)


def test_failing_benchmarks_fail_alone_in_one_line_and_the_others_are_saved(
    pytester: pytest.Pytester,
) -> None:
    """A missing method, an unreachable target and a breached threshold each fail their
    own test with one line; pytest-benchmark still saves the passing test's results."""
    pytester.makepyfile(
        test_mixed="""
def test_passes(grpcbench, grpcbench_benchmark):
    server = grpcbench.server("grpclib")
    grpcbench_benchmark(target=server.address, call="helloworld.Greeter/SayHello",
                        data={"name": "x"}, concurrency=2, requests=20)


def test_missing_method(grpcbench, grpcbench_benchmark):
    server = grpcbench.server("grpclib")
    grpcbench_benchmark(target=server.address, call="helloworld.Greeter/SayGoodbye",
                        concurrency=2, requests=20)


def test_unreachable(grpcbench_benchmark):
    grpcbench_benchmark(target="127.0.0.1:1", call="helloworld.Greeter/SayHello",
                        proto="protos/grpcbench/proto/helloworld.proto", requests=20,
                        connect_timeout="1s")


def test_breach(grpcbench_benchmark):
    grpcbench_benchmark("grpclib", concurrency=2, requests=20, thresholds="rps>=100000000")


def test_unknown_keyword(grpcbench_benchmark):
    grpcbench_benchmark("grpclib", reqeusts=20)
"""
    )
    import shutil
    from pathlib import Path

    protos = Path(__file__).resolve().parents[1] / "protos"
    shutil.copytree(protos, pytester.path / "protos")
    result = pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", "--benchmark-json=out.json", "--benchmark-autosave",
        "--benchmark-storage=file://store",
    )  # fmt: skip
    result.assert_outcomes(passed=1, failed=4)
    text = result.stdout.str()
    assert "Traceback" not in text and "During handling" not in text
    assert "min() arg is an empty sequence" not in text + result.stderr.str()
    for words in ("SayGoodbye", "127.0.0.1:1", "rps", "reqeusts"):
        assert len([line for line in text.splitlines() if "grpcbench: " in line and words in line])
    (bench,) = json.loads((pytester.path / "out.json").read_text())["benchmarks"]
    assert bench["name"] == "test_passes"
    assert list((pytester.path / "store").rglob("*.json"))


def test_a_call_on_a_running_server_gets_run_calls_defaults(pytester: pytest.Pytester) -> None:
    """target= with call= sends what `run --call` sends: no warm-up (ghz's default), so
    requests=40 over 2 rounds reaches the server as 80 calls and 2 pre-flight calls."""
    from tests.support.echo_server import echo_server

    seen: list[dict[str, str]] = []
    with echo_server(seen=seen) as address:
        pytester.makepyfile(
            test_calls=f"""
def test_calls(grpcbench_benchmark):
    level = grpcbench_benchmark(target="{address}", call="echo.Echo/Say",
                                data={{"message": "hi"}}, requests=40, rounds=2)
    assert level.measured.ok == 40 and level.concurrency == 50
"""
        )
        result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)
    assert len(seen) == 82
