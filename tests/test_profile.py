"""run --profile: py-spy's collapsed stacks per cell, read into top functions."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from grpcbench.base.errors import UsageError
from grpcbench.cli.argv import profile_scope_spelled
from grpcbench.profile import pyspy
from grpcbench.profile.differential import differential
from grpcbench.profile.flame import box_names, flame_tree
from grpcbench.profile.speedscope import write_speedscope
from grpcbench.profile.stacks import function_of, top_functions
from grpcbench.run.arguments import RunArgs
from grpcbench.run.options import build_run_options

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


def test_flame_boxes_fold_a_library_run_and_name_processes() -> None:
    frames = [
        'process 7:"python -P -m grpcbench.servers.child --spec grpclib"',
        "run (asyncio/runners.py:1)", "_run_once (asyncio/base_events.py:2)",
        "request_handler (grpclib/server.py:3)", "SayHello (app/svc.py:4)",
        "send (grpclib/protocol.py:5)", "send_headers (h2/connection.py:6)",
    ]  # fmt: skip
    assert box_names(frames) == [
        "process 7", "[asyncio internals]", "[grpclib internals]", "SayHello (app/svc.py)",
        "[grpclib internals]", "[h2 internals]",
    ]  # fmt: skip


def test_flame_tree_adds_samples_and_drops_slivers() -> None:
    lines = [
        "main (app.py:1);work (app.py:2);burn (app.py:3) 900",
        "main (app.py:1);work (app.py:5) 99",
        "main (app.py:1);tiny (app.py:9) 1",  # 0.1% of 1,000: kept (at the threshold)
        "main (app.py:7);rare (app.py:9) 0",
    ]
    tree = flame_tree(lines, "cell")
    data = tree.to_json(tree.value)
    assert data["n"] == "cell" and data["v"] == 1000
    (main,) = data["c"]
    assert main == {
        "n": "main (app.py)", "v": 1000,
        "c": [{"n": "work (app.py)", "v": 999, "c": [{"n": "burn (app.py)", "v": 900}]},
              {"n": "tiny (app.py)", "v": 1}],
    }  # fmt: skip
    sliver = flame_tree(["a (x.py:1) 10000", "a (x.py:1);b (x.py:2) 9"], "cell")
    assert "c" not in sliver.to_json(sliver.value)["c"][0]  # 0.09%: not drawn


def test_speedscope_file_holds_every_sample_with_files_and_lines(tmp_path: Path) -> None:
    folded = tmp_path / "grpclib-concurrency_4-r0.folded"
    folded.write_text(
        'process 1:"python";main (app.py:1);burn (app.py:9) 60\n'
        'process 1:"python";main (app.py:1);work (app.py:6) 40\n'
    )
    written = write_speedscope(folded, "grpclib at concurrency 4", 100)
    assert written.name == "grpclib-concurrency_4-r0.speedscope.json"
    document = json.loads(written.read_text())
    assert document["$schema"] == "https://www.speedscope.app/file-format-schema.json"
    frames = document["shared"]["frames"]
    assert {"name": "burn", "file": "app.py", "line": 9} in frames
    (profile,) = document["profiles"]
    assert profile["type"] == "sampled" and profile["weights"] == [60, 40]
    assert profile["endValue"] == 100
    burn = frames.index({"name": "burn", "file": "app.py", "line": 9})
    main = frames.index({"name": "main", "file": "app.py", "line": 1})
    assert profile["samples"][0][1:] == [main, burn]  # outermost first, as speedscope reads


def test_differential_names_where_two_kinds_differ_most(tmp_path: Path) -> None:
    def cell(name: str, text: str) -> dict:  # type: ignore[type-arg]
        path = tmp_path / f"{name}.folded"
        path.write_text(text)
        return {"file": str(path), "rate_hz": 100, "samples": 100, "top": []}

    slow = cell(
        "slow", "main (app.py:1);send (h2/connection.py:2) 70\nmain (app.py:1);work (app.py:3) 30\n"
    )
    fast = cell(
        "fast",
        "main (app.py:1);_serve (grpc/_server.py:2) 60\nmain (app.py:1);work (app.py:3) 40\n",
    )
    diff = differential(("grpclib", slow), ("grpcio", fast))
    assert [(r.function, round(r.points, 2)) for r in diff.rows[:3]] == [
        ("[h2 internals]", 0.7), ("[grpcio internals]", -0.6), ("work (app.py)", -0.1),
    ]  # fmt: skip
    assert diff.complete
    assert diff.headline == "grpclib: 70% in [h2 internals]; grpcio: 60% in [grpcio internals]"
    # The stack files gone: the saved top functions are what is left, and it says so.
    Path(slow["file"]).unlink()
    slow["top"] = [{"function": "[h2 internals]", "self": 0.7, "total": 0.7}]
    partial = differential(("grpclib", slow), ("grpcio", fast))
    assert not partial.complete and partial.rows[0].function == "[h2 internals]"


def test_torn_frames_and_native_code_without_symbols_are_named_as_such() -> None:
    assert function_of("(W\x00\x00)") == "[torn frame (read while it changed)]"
    assert function_of("0x7f4f68ea3f16 (libc.so.6)") == "[libc.so.6, no symbols]"
    assert function_of("epoll_wait (libc.so.6)") == "epoll_wait (libc.so.6)"


@pytest.mark.parametrize(
    ("argv", "spelled"),
    [
        (
            ["run", "--profile", "generator", "-c", "2"],
            ["run", "--profile", "--profile-generator", "-c", "2"],
        ),
        (["run", "--profile", "servers"], ["run", "--profile"]),
        (["run", "--profile", "-c", "2"], ["run", "--profile", "-c", "2"]),
        (["run", "--profile"], ["run", "--profile"]),
    ],
)
def test_profile_generator_is_spelled_as_the_docs_say(argv: list[str], spelled: list[str]) -> None:
    assert profile_scope_spelled(argv) == spelled


def test_profiling_the_generator_of_ghz_is_refused_in_one_line() -> None:
    with pytest.raises(UsageError, match="--profile generator samples the built-in generator"):
        build_run_options(
            RunArgs(load="ghz", concurrency="2", profile=True, profile_generator=True)
        )


@pytest.mark.integration
def test_profile_generator_samples_the_generator_in_its_own_cell(tmp_path: Path) -> None:
    out = tmp_path / "r.json"
    done = subprocess.run(
        [*GRPCBENCH, "run", "--service", "tests.support.services:CLIENT_BURNER",
         "--workload-param", "burn_ms=2", "-s", "grpcio-aio", "-c", "4", "--duration", "3s",
         "--warmup", "1s", "--client-processes", "2", "--profile", "generator",
         "--output", str(out)],
        capture_output=True, text=True, timeout=180, check=False,
    )  # fmt: skip
    if "cannot attach" in done.stderr:
        pytest.skip(done.stderr.strip())
    assert done.returncode == 0, done.stderr
    (level,) = json.loads(out.read_text())["levels"]
    generator = level["generator_profile"]
    assert generator["top"][0]["function"] == "burn (support/services.py)", generator["top"]
    assert Path(generator["file"]).name == "grpcio-aio-concurrency_4-r0.generator.folded"
    stacks = Path(generator["file"]).read_text().splitlines()
    processes = {line.split(";", 1)[0] for line in stacks if "burn (" in line}
    assert len(processes) == 2, processes  # both generator processes, in one file
    assert json.loads(Path(generator["speedscope"]).read_text())["profiles"][0]["endValue"] > 0
    assert "py-spy profile of the generator (grpcio-aio)" in done.stdout
    # The server was profiled too, in a file of its own.
    assert level["profile"]["file"] != generator["file"]
    assert Path(level["profile"]["speedscope"]).exists()
