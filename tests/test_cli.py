"""The command line as users run it: real processes, exit codes, one-line errors."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import GRPCBENCH, REPO, run_grpcbench, write_scenario


def grpcbench(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return run_grpcbench(*args, timeout=timeout)


def assert_one_line_error(result: subprocess.CompletedProcess[str], *fragments: str) -> None:
    assert result.returncode != 0
    assert "Traceback" not in result.stderr and "Traceback" not in result.stdout
    error_lines = [line for line in result.stderr.splitlines() if "error:" in line]
    assert len(error_lines) == 1, result.stderr
    for fragment in fragments:
        assert fragment in result.stderr, result.stderr


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["--servers", "tornado"], "unknown server kind 'tornado'"),
        (["--servers", "grpcio+uvloop"], "cannot run on uvloop"),
        (["--concurrency", "2,x"], "bad --concurrency"),
        (["--concurrency", "0"], "must be a positive integer"),
        (["--concurrency", "-5"], "must be a positive integer"),
        (["--concurrency", ""], "bad --concurrency list"),
        (["--requests", "0"], "bad --requests"),
        (["--duration", "soon"], "bad --duration"),
        (["--timeout", "-1s"], "bad --timeout"),
        (["--load", "wrk"], "unknown load driver"),
        (["--scenario", "nope"], "unknown scenario 'nope'"),
        (["--target", "localhost"], "expected HOST:PORT"),
        (["--server-cpus", "x"], "bad --server-cpus"),
        (["--server-cpus", "999"], "not available"),
        # The parser's own errors: the same one line, exit 2, not a framed box.
        (["--repeat", "many"], "Invalid value for '--repeat'"),
        (["--no-such-option"], "No such option: --no-such-option"),
        (["-c"], "Option '-c' requires an argument"),
        # A scheduler's address is checked at once, not after Dask's connect timeout.
        (["--cluster", "TCP://127.0.0.1:8786"], "(lower case)"),
        (["--cluster", "foo://127.0.0.1:1"], "starts with tcp://, tls://"),
        (["--cluster", "tls://127.0.0.1:8786", "--dry-run"], "needs Dask's TLS settings"),
        (
            [
                "--cluster",
                "ws://127.0.0.1:8786",
                "-m",
                "authorization=x",
                "--call",
                "helloworld.Greeter/SayHello",
                "--dry-run",
            ],
            "to its workers in plaintext",
        ),  # fmt: skip
    ],
)
def test_bad_input_is_one_clear_line(args: list[str], fragment: str) -> None:
    result = grpcbench("run", *args)
    assert_one_line_error(result, fragment)
    assert result.returncode == 2 and result.stderr.startswith("grpcbench: error:")
    assert "╭" not in result.stderr


HELLO_PROTO = "protos/grpcbench/proto/helloworld.proto"


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["-D", "{latin1}"], "cannot read -D"),
        (["-M", "{latin1}"], "cannot read -M"),
        (["-d", "[" * 5000 + "]" * 5000], "nested too deeply"),
        (["-d", '{"name":' * 3000 + "1" + "}" * 3000], "nested too deeply"),
        # Metadata grpc refuses to send: refused before any load, on both stacks.
        (["-m", "my key=1"], "cannot be a metadata key"),
        (["-m", ":authority=elsewhere"], "pseudo-headers cannot be a metadata key"),
        (["-m", "x=caf\u00e9"], "cannot carry"),
        (["-m", "x=a\r\nInjected: 1"], "cannot carry"),
        (["-m", "x=1", "--client-stack", "grpcio", "-m", "Bad Key=1"], "cannot be a metadata"),
    ],
)
def test_hostile_request_data_is_one_clear_line(
    args: list[str], fragment: str, tmp_path: Path
) -> None:
    """Files that are not UTF-8, JSON nested thousands deep and metadata gRPC cannot
    carry: one line and exit 2."""
    latin1 = tmp_path / "latin1.json"
    latin1.write_bytes(b'{"name": "caf\xe9"}')
    args = [arg.replace("{latin1}", str(latin1)) for arg in args]
    result = subprocess.run(
        [*GRPCBENCH, "run", "127.0.0.1:1", "--call", "helloworld.Greeter/SayHello",
         "--proto", HELLO_PROTO, "--dry-run", *args],
        capture_output=True, text=True, timeout=120, check=False, cwd=REPO,
    )  # fmt: skip
    assert result.returncode == 2, result.stderr
    assert_one_line_error(result, fragment)


@pytest.mark.parametrize(
    ("body", "fragment"),
    [
        ("raise RuntimeError('no config here')", "raised RuntimeError: no config here"),
        ("def broken(:\n    pass", "a syntax error at"),
        ("import sys\nsys.exit(3)", "called sys.exit(3)"),
    ],
)
@pytest.mark.parametrize("command", [["run", "--dry-run"], ["capacity", "--slo", "p99<=1s",
                                                            "--dry-run"]])  # fmt: skip
def test_a_service_module_that_fails_at_import_is_one_line(
    tmp_path: Path, body: str, fragment: str, command: list[str]
) -> None:
    """A user's --service module that raises, has a syntax error or exits as it is
    imported: one line naming what happened, exit 2, never a traceback or its exit code."""
    (tmp_path / "mysvc.py").write_text(body + "\n")
    result = subprocess.run(
        [*GRPCBENCH, *command, "--service", "mysvc:SERVICE", "--load", "fake"],
        capture_output=True, text=True, timeout=120, check=False, cwd=tmp_path,
    )  # fmt: skip
    assert result.returncode == 2, result.stderr
    assert_one_line_error(result, "cannot load service 'mysvc:SERVICE'", fragment)


def test_unreachable_target() -> None:
    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    result = grpcbench("run", "--target", f"127.0.0.1:{port}", "-c", "2", "-n", "10")
    assert_one_line_error(result, "connection refused (nothing listens there)")


@pytest.mark.integration
def test_port_in_use() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        port = sock.getsockname()[1]
        for kind in ("grpcio", "grpcio:processes=2", "grpclib", "grpcio-aio"):
            result = grpcbench("run", "-s", kind, "--port", str(port), "-c", "2", "-n", "10")
            assert_one_line_error(result, f"port {port}", "in use")


@pytest.mark.integration
def test_server_dying_at_start_up_shows_its_stderr(tmp_path: Path) -> None:
    scenario = write_scenario(tmp_path, "tests.support.services:CRASHING")
    result = grpcbench("run", "--scenario", str(scenario), "--output", str(tmp_path / "r.json"))
    assert result.returncode == 3
    assert "Traceback" not in result.stderr.split("its stderr:")[0]
    assert "exited during start-up" in result.stderr
    assert "boom: this service fails on purpose" in result.stderr
    saved = json.loads((tmp_path / "r.json").read_text())
    assert saved["status"] == "failed" and "start-up" in saved["error"]


@pytest.mark.integration
def test_run_writes_json_markdown_csv_and_tables(tmp_path: Path) -> None:
    out, md, csv_path = tmp_path / "r.json", tmp_path / "r.md", tmp_path / "r.csv"
    result = grpcbench(
        "run", "-s", "grpcio:workers=2", "-s", "grpclib+uvloop", "-c", "2,5", "-n", "200",
        "--warmup", "20", "--output", str(out), "--markdown", str(md), "--csv", str(csv_path),
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    for title in ("hello - concurrency 2", "hello - concurrency 5"):
        assert title in result.stdout
    assert "grpclib+uvloop" in result.stdout and "Requests/sec" in result.stdout
    data = json.loads(out.read_text())
    assert data["status"] == "complete" and data["format_version"] == 2
    assert [(lv["server"], lv["plan"]["concurrency"]) for lv in data["levels"]] == [
        ("grpcio:workers=2", 2), ("grpcio:workers=2", 5),
        ("grpclib+uvloop", 2), ("grpclib+uvloop", 5),
    ]  # fmt: skip
    for lv in data["levels"]:
        assert lv["load"]["statuses"] == {"OK": 200}
        assert lv["server_usage"]["peak_rss_bytes"] > 0
    assert data["metadata"]["packages"]["grpcio"]
    assert (
        data["options"]["placement"]["server_cpus"] != data["options"]["placement"]["client_cpus"]
    )
    assert md.read_text().count("| Count | 200 | 200 |") == 2
    assert len(csv_path.read_text().splitlines()) == 5


@pytest.mark.integration
def test_duration_mode_and_fake_driver(tmp_path: Path) -> None:
    out = tmp_path / "r.json"
    result = grpcbench(
        "run", "-s", "grpcio-aio", "-c", "3", "--duration", "300ms", "--warmup", "100ms",
        "--load", "builtin,fake", "--output", str(out),
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    data = json.loads(out.read_text())
    builtin, fake = data["levels"]
    assert builtin["load"]["driver"] == "builtin" and fake["load"]["driver"] == "fake"
    assert builtin["load"]["wall_s"] >= 0.3 and builtin["load"]["statuses"]["OK"] > 0
    assert "grpcio-aio [fake]" in result.stdout and "synthetic" in result.stdout


def test_listing_commands() -> None:
    servers = grpcbench("servers")
    assert servers.returncode == 0
    for kind in ("grpcio", "grpclib", "grpcio-aio", "+uvloop"):
        assert kind in servers.stdout
    scenarios = grpcbench("scenarios", "--json")
    assert scenarios.returncode == 0 and "hello" in json.loads(scenarios.stdout)
    help_text = grpcbench("run", "--help").stdout
    options = (
        "--scenario", "--servers", "--concurrency", "--requests", "--duration",
        "--warmup", "--timeout", "--load", "--target", "--output", "--markdown",
    )  # fmt: skip
    for option in options:
        assert option in help_text


def test_the_version_is_answered_without_building_the_command_line() -> None:
    """``--version`` (and ghz's ``run ... -v``) print the line without importing the
    command line, its declarations, grpc or asyncio (0.9 s once; issue 52)."""
    for argv in (["--version"], ["run", "-c", "2", "-v"]):
        shown = subprocess.run(
            [sys.executable, "-P", "-X", "importtime", "-m", "grpcbench", *argv],
            capture_output=True, text=True, timeout=60, check=False,
        )  # fmt: skip
        assert shown.returncode == 0 and shown.stdout.startswith("grpcbench 0.1.0 (Python")
        imported = {line.split("|")[-1].strip() for line in shown.stderr.splitlines()}
        assert "grpcbench.model.metadata" in imported
        assert not {"grpcbench.cli.app", "typer", "grpc", "asyncio"} & imported


def test_version_help_panels_and_completion() -> None:
    version = grpcbench("--version")
    assert version.returncode == 0
    for name in ("grpcbench 0.1.0", "Python 3.", "grpcio ", "grpclib ", "h2 ", "protobuf "):
        assert name in version.stdout
    helped = subprocess.run(
        [*GRPCBENCH, "run", "--help"], capture_output=True, text=True, timeout=60, check=False,
        env={**__import__("os").environ, "COLUMNS": "120"},
    )  # fmt: skip
    for panel in ("What to run", "Load model", "Target", "Output", "Placement", "Backing services"):
        assert panel in helped.stdout, panel
    assert "--install-completion" in grpcbench("--help").stdout


def test_progress_line_says_where_the_run_is() -> None:
    from rich.console import Console

    from grpcbench.cli.console_events import ConsoleEvents

    events = ConsoleEvents(Console(record=True, width=200), columns=2, levels_per_column=2)
    events.server_starting("grpclib")
    events.level_started("grpclib", "builtin", "concurrency 2", 100)
    events.level_progress(-1 + 1, 0)
    events.level_progress(40, 3)
    task = events.progress.tasks[0]
    assert task.description.startswith("server 1/2 · level 1/2 · grpclib")
    assert task.completed == 40 and "3 errors" in task.fields["live"]
    events.level_started("grpclib", "builtin", "concurrency 4", 100)
    assert events.progress.tasks[-1].description.startswith("server 1/2 · level 2/2")
    events.server_starting("grpcio-aio")
    events.level_started("grpcio-aio", "builtin", "concurrency 2", 100)
    assert events.progress.tasks[-1].description.startswith("server 2/2 · level 1/2")


def test_off_a_terminal_a_level_in_progress_prints_a_line_every_ten_seconds(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The progress bar draws nothing when stderr is not a terminal (CI logs): a
    120 s level printed nothing at all. Now a plain line every 10 s; on a terminal,
    the bar only."""
    import io

    from rich.console import Console

    from grpcbench.cli import console_events

    clock = [1000.0]
    monkeypatch.setattr(console_events.time, "monotonic", lambda: clock[0])
    for terminal, lines in ((False, 2), (True, 0)):
        out = io.StringIO()
        events = console_events.ConsoleEvents(Console(file=out, force_terminal=terminal))
        events.level_started("grpclib", "builtin", "concurrency 2", 0)
        for second in range(1, 26):
            clock[0] += 1.0
            events.level_progress(second * 100, 0)
        printed = [line for line in out.getvalue().splitlines() if "s measured:" in line]
        assert len(printed) == lines, out.getvalue()
        if lines:
            assert printed[0].strip().startswith("9 s measured: 1,000 calls")
