"""run --profile: py-spy's collapsed stacks per cell, read into top functions."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from grpcbench.errors import UsageError
from grpcbench.profile import pyspy
from grpcbench.profile.stacks import function_of, top_functions

GRPCBENCH = [sys.executable, "-P", "-m", "grpcbench"]


def test_frames_are_named_without_lines_and_libraries_fold() -> None:
    assert function_of("burn (tests/support/services.py:119)") == "burn (support/services.py)"
    assert function_of("_serve (grpc/_server.py:1030)") == "[grpcio internals]"
    assert function_of("write (asyncio/selector_events.py:1)") == "[asyncio internals]"
    assert function_of("send_headers (/venv/lib/h2/stream.py:9)") == "[h2 internals]"
    assert function_of("request_handler (grpclib/server.py:5)") == "[grpclib internals]"


def test_top_functions_rank_self_then_total(tmp_path: Path) -> None:
    stacks = tmp_path / "cell.folded"
    stacks.write_text(
        'process 1:"python";main (app.py:1);work (app.py:5);burn (app.py:9) 60\n'
        'process 1:"python";main (app.py:1);work (app.py:6) 30\n'
        'process 2:"python";main (app.py:1);_serve (grpc/_server.py:3) 10\n'
        "not a stack line\n"
    )
    samples, top = top_functions(stacks)
    assert samples == 100
    assert [(t.function, t.self_share, t.total_share) for t in top] == [
        ("burn (app.py)", 0.6, 0.6),
        ("work (app.py)", 0.3, 0.9),
        ("[grpcio internals]", 0.1, 0.1),
        ("main (app.py)", 0.0, 1.0),
    ]


def test_py_spy_missing_is_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pyspy.shutil, "which", lambda *args, **kwargs: None)
    with pytest.raises(UsageError, match=r"pip install 'grpcbench\[profile\]'"):
        pyspy.py_spy()


def test_a_refused_attach_is_one_line_with_the_fix(monkeypatch: pytest.MonkeyPatch) -> None:
    """As where ptrace is forbidden: py-spy's own error, then how to allow it."""
    monkeypatch.setattr(pyspy, "py_spy", lambda: "false")  # `false` exits 1, as a refusal
    with pytest.raises(UsageError) as refused:
        pyspy.check_attach()
    message = str(refused.value)
    assert message.startswith("--profile cannot attach py-spy") and "CAP_SYS_PTRACE" in message
    assert "ptrace_scope" in message and "\n" not in message


def _profiled(tmp_path: Path, *argv: str) -> tuple[subprocess.CompletedProcess[str], dict]:  # type: ignore[type-arg]
    out = tmp_path / "r.json"
    done = subprocess.run(
        [*GRPCBENCH, "run", "--service", "tests.support.services:SERVER_BURNER",
         "--server-param", "burn_ms=2", "-c", "4", "--duration", "3s", "--warmup", "1s",
         "--profile", "--output", str(out), *argv],
        capture_output=True, text=True, timeout=180, check=False,
    )  # fmt: skip
    return done, json.loads(out.read_text()) if out.exists() else {}


@pytest.mark.integration
def test_the_function_that_burns_the_cpu_ranks_first(tmp_path: Path) -> None:
    done, data = _profiled(tmp_path, "-s", "grpcio-aio")
    if "cannot attach" in done.stderr:
        pytest.skip(done.stderr.strip())
    assert done.returncode == 0, done.stderr
    (level,) = data["levels"]
    profile = level["profile"]
    assert profile["rate_hz"] == 100 and profile["samples"] > 50
    assert profile["top"][0]["function"] == "burn (support/services.py)"
    assert profile["top"][0]["self"] > 0.5
    assert Path(profile["file"]).parent == tmp_path / "r.profiles"
    assert "py-spy profile of grpcio-aio at concurrency 4" in done.stdout
    assert "Profiled at 100 Hz" in done.stdout
    shown = subprocess.run([*GRPCBENCH, "show", str(tmp_path / "r.json")], capture_output=True,
                           text=True, check=False)  # fmt: skip
    assert "burn (support/services.py)" in shown.stdout


@pytest.mark.integration
def test_every_process_of_a_multiprocess_server_is_sampled(tmp_path: Path) -> None:
    # SO_REUSEPORT spreads connections, not calls, over the processes: with 16, the
    # chance that all land on one process is 2 in 65,536.
    done, data = _profiled(
        tmp_path, "-s", "grpcio:workers=2,processes=2", "-c", "16", "--connections", "16"
    )
    if "cannot attach" in done.stderr:
        pytest.skip(done.stderr.strip())
    assert done.returncode == 0, done.stderr
    stacks = Path(data["levels"][0]["profile"]["file"]).read_text().splitlines()
    # Each stack starts with its processes, parent first: "process P:...;process C:...;".
    sampled = {
        [frame for frame in line.split(";") if frame.startswith("process ")][-1]
        for line in stacks
        if "burn (" in line
    }
    assert len(sampled) >= 2, sampled  # the burning frames come from two processes
