"""The fault matrix: signals and killed children × the phases of a level.

Each cell starts `grpcbench run` against a logging Greeter of the test's own
(``--target``, so the test sees every call that reaches it), waits for its
phase (read from ``--debug``'s log of the run, not guessed from the clock),
then sends the signal or kills the child. It asserts the documented exit code
(docs/lifecycle.md), the JSON's status and the levels kept, that no process of
the run is left, and that no call reaches the target once grpcbench has exited.

Phases: pre-flight (a target that accepts and never answers), warm-up,
measured, cooldown; where grpcbench starts the server: its start (a service still
importing), and capacity's search and confirmations; after the run, the writing of
its tables and files; and while a Dask cluster's workers run the level (a local
one grpcbench starts, and one started by `dask scheduler` and `dask worker`, there also
with one worker killed as the signal arrives).
Faults: SIGINT, SIGTERM, SIGHUP, SIGQUIT, two SIGINTs, Ctrl-C and Ctrl-\\ to the
whole process group (the run's children get them too), and a generator killed. Every
cell runs in CI; ``nox -s faults`` runs the matrix ``GRPCBENCH_FAULT_ROUNDS`` times
(default 5) with the moment moved within the phase.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import psutil
import pytest

from tests.conftest import GRPCBENCH, long_lived_children
from tests.support.dask_cli import DASK, RealCluster, real_cluster
from tests.support.logging_greeter import logging_greeter
from tests.support.processes import assert_all_gone, descendants_running

pytestmark = pytest.mark.integration

ROUNDS = int(os.environ.get("GRPCBENCH_FAULT_ROUNDS", "1"))
PROTO = str(Path(__file__).resolve().parents[1] / "protos/grpcbench/proto/helloworld.proto")
CALL = ["--call", "helloworld.Greeter/SayHello", "--proto", PROTO, "-d", '{"name":"m"}']
# Each phase: the run's options, and the debug-log line that says it has begun.
PHASES = {
    "pre-flight": (["-c", "2", "-n", "100"], "run:"),
    "warm-up": (["-c", "2", "--warmup", "60s", "-z", "60s"], "level started"),
    "measured": (["-c", "2", "--warmup", "0", "-z", "60s"], "progress"),
    "cooldown": (
        [
            "-c",
            "2",
            "-n",
            "50",
            "--warmup",
            "0",
            "--cooldown",
            "60s",
            "--target-pid",
            str(os.getpid()),
        ],
        "level started",
    ),  # the Greeter's
}
# Each fault: its signals in order, and whether they go to the whole process group, as
# a terminal sends Ctrl-C and Ctrl-\ (the run's children get them too), or to grpcbench.
SIGNALS = {
    "SIGINT": ((signal.SIGINT,), False), "SIGTERM": ((signal.SIGTERM,), False),
    "SIGHUP": ((signal.SIGHUP,), False), "SIGQUIT": ((signal.SIGQUIT,), False),
    "SIGINT twice": ((signal.SIGINT, signal.SIGINT), False),
    "Ctrl-C (group)": ((signal.SIGINT,), True), "Ctrl-\\ (group)": ((signal.SIGQUIT,), True),
}  # fmt: skip
EXITS = {signal.SIGINT: 130, signal.SIGTERM: 143, signal.SIGHUP: 129, signal.SIGQUIT: 131}
# A level is kept once measured: during its cooldown, not while its load runs (its
# generators stop with the signal; docs/lifecycle.md).
KEEPS_A_LEVEL = {"pre-flight": False, "warm-up": False, "measured": False, "cooldown": True}


def _wait_for(log: Path, marker: str, process: subprocess.Popen[str], timeout: float = 60) -> None:
    started = time.monotonic()
    while time.monotonic() - started < timeout:
        if log.exists() and any(f" {marker}" in line for line in log.read_text().splitlines()):
            return
        assert process.poll() is None, f"the run ended before its {marker!r}"
        time.sleep(0.02)
    raise AssertionError(f"no {marker!r} in {timeout} s")


def _tree(pid: int) -> set[int]:
    try:
        return {p.pid for p in psutil.Process(pid).children(recursive=True)} | {pid}
    except psutil.NoSuchProcess:
        return set()


class Cell:
    """One run of the matrix: grpcbench against ``address``, its log and results."""

    def __init__(
        self, address: str, tmp_path: Path, options: list[str], command: list[str] | None = None
    ) -> None:
        self.log, self.out = tmp_path / "debug.log", tmp_path / "r.json"
        given = command or ["run", address, "--insecure", *CALL]
        argv = [*GRPCBENCH, *given, *options, "--no-pin",
                "--debug", str(self.log), "--output", str(self.out)]  # fmt: skip
        # A process group of its own, as a terminal's foreground job has.
        self.process = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                        text=True, start_new_session=True,
                                        cwd=tmp_path)  # fmt: skip
        self.seen: set[int] = set()

    def watch(self) -> None:
        self.seen |= _tree(self.process.pid)

    def signal(self, fault: str) -> None:
        """Send ``fault``'s signals, to the process group when a terminal would."""
        signals, to_group = SIGNALS[fault]
        self.watch()
        for sig in signals:
            if to_group:
                os.killpg(self.process.pid, sig)
            else:
                self.process.send_signal(sig)
            time.sleep(0.05)

    def assert_interrupted(self, fault: str, keeps: bool | None) -> None:
        """The signal's exit code, no traceback, the JSON ``interrupted`` with levels
        kept as ``keeps`` says (None: any), and nothing of the run left running."""
        code, stderr, data = self.finish()
        assert code == EXITS[SIGNALS[fault][0][0]], stderr
        assert "Traceback" not in stderr, stderr
        if data:
            assert data["status"] == "interrupted", data["status"]
            levels = data["levels"]
            assert isinstance(levels, list)
            assert keeps is None or bool(levels) == keeps, len(levels)
            for level in levels:
                assert sum(level["load"]["statuses"].values()) > 0
        else:
            assert not keeps, "nothing was measured"
        assert_all_gone(self.seen)

    def finish(self) -> tuple[int, str, dict[str, object]]:
        self.watch()
        _, stderr = self.process.communicate(timeout=60)
        data = json.loads(self.out.read_text()) if self.out.exists() else {}
        return self.process.returncode, stderr, data


def _no_load_after_exit(calls: list[object]) -> None:
    count = len(calls)
    time.sleep(1.0)
    assert len(calls) == count, f"{len(calls) - count} calls reached the target after exit"


def _hung_target() -> tuple[socket.socket, str]:
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    return listener, f"127.0.0.1:{listener.getsockname()[1]}"


@pytest.mark.parametrize("round_", range(ROUNDS))
@pytest.mark.parametrize("phase", list(PHASES))
@pytest.mark.parametrize("fault", list(SIGNALS))
def test_a_signal_in_each_phase(tmp_path: Path, phase: str, fault: str, round_: int) -> None:
    options, marker = PHASES[phase]
    pause = random.Random(f"{phase}{fault}{round_}").uniform(0.3, 1.5)
    listener = None
    with logging_greeter() as (address, log):
        if phase == "pre-flight":
            listener, address = _hung_target()
        try:
            cell = Cell(address, tmp_path, options)
            _wait_for(cell.log, marker, cell.process)
            time.sleep(pause)  # inside the phase: each lasts a minute
            cell.signal(fault)
            cell.assert_interrupted(fault, KEEPS_A_LEVEL[phase])
        finally:
            if listener is not None:
                listener.close()
        _no_load_after_exit(log.calls)


@pytest.mark.parametrize("fault", list(SIGNALS))
def test_a_signal_while_dask_workers_run_the_level(tmp_path: Path, fault: str) -> None:
    """The same signals while a local Dask cluster's workers run the level (``--cluster
    local:2``; their progress reaches the coordinator only at the level's end, so the
    signal comes a moment after the level starts): the signal's exit code, the JSON
    ``interrupted``, the cluster's processes stopped with the rest, and no call reaches
    the target once grpcbench has exited."""
    _signal_while_workers_run(tmp_path, fault, "local:2")


def _wait_for_load(cell: Cell, calls: list[object]) -> None:
    """Until the level has started and its first calls reached the target."""
    _wait_for(cell.log, "level started", cell.process)
    deadline = time.monotonic() + 30
    while not calls and time.monotonic() < deadline:
        time.sleep(0.05)
    assert calls, "the load never called the target"


def _signal_while_workers_run(
    tmp_path: Path, fault: str, cluster: str, before_signal: Callable[[], None] | None = None
) -> None:
    """``before_signal``: a second fault, a moment before the signal."""
    options = ["-c", "2", "--warmup", "0", "-z", "60s", "--cluster", cluster]
    with logging_greeter() as (address, log):
        cell = Cell(address, tmp_path, options)
        _wait_for_load(cell, log.calls)  # the workers' load arrived
        time.sleep(random.Random(fault).uniform(0.2, 1.0))
        if before_signal is not None:
            before_signal()
        cell.signal(fault)
        cell.assert_interrupted(fault, False)
        _no_load_after_exit(log.calls)


@pytest.fixture(scope="module")
def command_line_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RealCluster]:
    if DASK is None:
        pytest.skip("the dask command-line tool is not installed")
    folder = tmp_path_factory.mktemp("dask")
    # The cluster's processes are the module's, not a leak of the cell that started it.
    with real_cluster(folder, workers=2) as cluster, long_lived_children():
        yield cluster


@pytest.mark.parametrize("fault", list(SIGNALS))
def test_a_signal_while_a_command_line_clusters_workers_run_the_level(
    tmp_path: Path, fault: str, command_line_cluster: RealCluster
) -> None:
    """The same signals while the workers of a cluster started by `dask scheduler` and
    `dask worker` (not grpcbench's children) run the level: the signal's exit code, the
    JSON ``interrupted``, no call reaches the target once grpcbench has exited (its
    tasks on the workers were cancelled), and the cluster itself is left running."""
    _signal_while_workers_run(tmp_path, fault, command_line_cluster.address)
    assert command_line_cluster.alive(), "a run's signal stopped the cluster it used"


# Phases of a server grpcbench starts, and of capacity: the command, its options, the
# debug-log line that says the phase has begun, and whether a finished level is kept.
SLOW_START = """import sys, time
if sys.argv[0].endswith("child.py"):  # the server's process, not grpcbench's own
    time.sleep(60)
from grpcbench.services.hello import SERVICE  # noqa: E402
"""
CAPACITY = ["capacity", "-s", "grpclib", "--slo", "p99<=2s", "--probe-warmup", "0.2s"]
STARTED_PHASES = {
    "server start": (
        ["run", "--service", "slow_start:SERVICE", "-s", "grpclib"], ["-c", "2", "-n", "100"],
        "server starting", False,
    ),
    "capacity search": (CAPACITY, ["--probe-duration", "60s"], "level started", False),
    "capacity confirmations": (
        CAPACITY, ["--probe-duration", "1s", "--max-probes", "2", "--confirmations", "5"],
        "confirm rate", True,
    ),
}  # fmt: skip


@pytest.mark.parametrize("phase", list(STARTED_PHASES))
@pytest.mark.parametrize("fault", list(SIGNALS))
def test_a_signal_while_a_server_starts_and_in_capacity_s_phases(
    tmp_path: Path, phase: str, fault: str
) -> None:
    """The same cells, where grpcbench starts the servers: a server still importing its
    service, capacity's search, and its confirmations (each on a fresh server)."""
    command, options, marker, keeps = STARTED_PHASES[phase]
    (tmp_path / "slow_start.py").write_text(SLOW_START)
    cell = Cell("", tmp_path, options, command)
    _wait_for(cell.log, marker, cell.process)
    time.sleep(random.Random(f"{phase}{fault}").uniform(0.3, 1.0))
    cell.signal(fault)
    # The confirmations keep the probes measured before them; a capacity search
    # interrupted in its first probe keeps none.
    cell.assert_interrupted(fault, True if keeps else None)


def _generators(pid: int) -> list[psutil.Process]:
    return descendants_running(pid, "grpcbench.load.generator")


@pytest.mark.parametrize("fault", list(SIGNALS))
def test_a_signal_while_the_results_are_written_is_held_until_all_are(
    tmp_path: Path, fault: str
) -> None:
    """A stop signal after the run, while its tables and files are written (--report's
    charts take a second): every output is written whole, then grpcbench exits with the
    signal's code; the JSON says the run completed (it did), and nothing is left."""
    with logging_greeter() as (address, _):
        outputs = {"--report": "r.html", "--markdown": "r.md", "--csv": "r.csv"}
        given = [option for pair in outputs.items() for option in pair]
        cell = Cell(address, tmp_path, ["-c", "2", "-n", "50", "--warmup", "0", *given])
        _wait_for(cell.log, "end:", cell.process)
        cell.signal(fault)
        code, stderr, data = cell.finish()
    assert code == EXITS[SIGNALS[fault][0][0]], stderr
    assert "Traceback" not in stderr, stderr
    assert "as the results were written: every output written" in stderr, stderr
    assert data["status"] == "complete" and len(data["levels"]) == 1
    assert (tmp_path / "r.html").read_text().rstrip().endswith("</html>")
    assert "concurrency" in (tmp_path / "r.md").read_text()
    assert len((tmp_path / "r.csv").read_text().splitlines()) == 2
    assert not [p.name for p in tmp_path.iterdir() if p.name.startswith(".")]  # no temporary
    assert_all_gone(cell.seen)


@pytest.mark.parametrize("phase", ["warm-up", "measured"])
def test_a_generator_killed_in_each_phase_fails_its_level(tmp_path: Path, phase: str) -> None:
    """kill -9 of one of two generators: the level is an error (exit 4, JSON failed),
    the other generator stops, and no call reaches the target after the exit."""
    options, marker = PHASES[phase]
    with logging_greeter() as (address, log):
        cell = Cell(address, tmp_path, [*options, "--client-processes", "2"])
        _wait_for(cell.log, marker, cell.process)
        time.sleep(0.5)
        cell.watch()
        generators = _generators(cell.process.pid)
        assert len(generators) == 2, [g.cmdline() for g in generators]
        generators[0].kill()
        code, stderr, data = cell.finish()
        _no_load_after_exit(log.calls)
    assert code == 4, stderr
    assert "Traceback" not in stderr and "Exception ignored" not in stderr, stderr
    assert data["status"] == "failed" and data["levels"] == []
    assert_all_gone(cell.seen)


@pytest.mark.parametrize("profiled", [False, True], ids=["", "profiled"])
@pytest.mark.parametrize("fault", ["kill -9", "SIGSTOP"])
def test_the_server_killed_or_frozen_mid_level_fails_the_run(
    tmp_path: Path, fault: str, profiled: bool
) -> None:
    """The server grpcbench started dies or freezes while its level runs, py-spy
    sampling it or not (``--profile``): the run ends within seconds (not after the
    level's minute), exit 4, the JSON failed, nothing left running, py-spy included."""
    profile = ["--profile"] if profiled else []
    cell = Cell("", tmp_path, ["-c", "2", "-z", "60s", "--warmup", "0", "-t", "2s", *profile],
                ["run", "-s", "grpclib"])  # fmt: skip
    _wait_for(cell.log, "progress", cell.process)
    cell.watch()
    (server,) = descendants_running(cell.process.pid, "grpcbench.servers.child")
    if profiled:
        assert descendants_running(cell.process.pid, "py-spy"), "no py-spy sampled the server"
    started = time.monotonic()
    server.send_signal(signal.SIGKILL if fault == "kill -9" else signal.SIGSTOP)
    code, stderr, data = cell.finish()
    took = time.monotonic() - started
    assert took < 15, f"the run went on {took:.0f} s with its server gone"
    assert code == 4, stderr
    assert "Traceback" not in stderr, stderr
    assert data["status"] == "failed"
    assert_all_gone(cell.seen)


def test_py_spy_killed_mid_level_keeps_the_level_and_says_why_its_profile_is_missing(
    tmp_path: Path,
) -> None:
    """kill -9 of the py-spy that samples the server (``--profile``): the level's figures
    stand (exit 0, the level kept, without a profile), and one warning says that py-spy
    was killed, not only that no samples came."""
    cell = Cell("", tmp_path, ["-c", "2", "-z", "4s", "--warmup", "0", "--profile"],
                ["run", "-s", "grpclib"])  # fmt: skip
    _wait_for(cell.log, "progress", cell.process)
    cell.watch()
    (py_spy,) = descendants_running(cell.process.pid, "py-spy")
    py_spy.kill()
    code, stderr, data = cell.finish()
    assert code == 0, stderr
    assert f"py-spy (pid {py_spy.pid}) was killed by SIGKILL before the level ended" in stderr
    assert "Traceback" not in stderr, stderr
    assert data["status"] == "complete"
    (level,) = data["levels"]
    assert "profile" not in level and sum(level["load"]["statuses"].values()) > 0
    assert_all_gone(cell.seen)


@pytest.mark.parametrize("fault", ["SIGINT", "SIGTERM", "Ctrl-C (group)"])
def test_a_worker_killed_as_a_signal_arrives_on_a_command_line_cluster(
    tmp_path: Path, fault: str
) -> None:
    """Two faults at once on a cluster started by `dask scheduler` and `dask worker`: one
    worker process killed (-9) mid-level, and the signal a moment later, before Dask has
    noticed the loss. The signal decides: its exit code, the JSON ``interrupted``, no
    traceback, no call reaches the target once grpcbench has exited (the surviving
    worker's task was cancelled too), and the cluster is left running."""
    if DASK is None:
        pytest.skip("the dask command-line tool is not installed")
    with real_cluster(tmp_path, workers=2) as cluster:

        def kill_a_worker() -> None:
            [_, worker_command] = cluster.processes
            victim = next(
                child for child in psutil.Process(worker_command.pid).children(recursive=True)
                if "spawn_main" in " ".join(child.cmdline())
            )  # fmt: skip
            victim.kill()
            time.sleep(0.05)

        _signal_while_workers_run(tmp_path, fault, cluster.address, kill_a_worker)
        assert cluster.alive(), "a run's signal stopped the cluster it used"


@pytest.mark.skipif(shutil.which("ghz") is None, reason="ghz is not installed")
def test_ghz_killed_mid_level_fails_its_level(tmp_path: Path) -> None:
    """kill -9 of ghz (``--load ghz``) while its level runs: the level is an error that
    says so (exit 4, JSON failed), no traceback, and no call reaches the target after."""
    with logging_greeter() as (address, log):
        cell = Cell(address, tmp_path, ["-c", "2", "-z", "60s", "--warmup", "0",
                                        "--load", "ghz"])  # fmt: skip
        _wait_for_load(cell, log.calls)
        cell.watch()
        (ghz,) = [p for p in psutil.Process(cell.process.pid).children(True) if p.name() == "ghz"]
        started = time.monotonic()
        ghz.kill()
        code, stderr, data = cell.finish()
        took = time.monotonic() - started
        _no_load_after_exit(log.calls)
    assert took < 15, f"the run went on {took:.0f} s with ghz gone"
    assert code == 4, stderr
    assert "ghz exited with code -9" in stderr and "Traceback" not in stderr, stderr
    assert data["status"] == "failed" and data["levels"] == []
    assert_all_gone(cell.seen)
