"""Generated hostile input: every option of `run`, and mutated results files for `show`,
`compare` and `report`, must end in one clear line (exit 2) or be taken (exit 0),
never a traceback, and within two seconds.

The values come from hypothesis: a list of known troublemakers (huge and
negative numbers, NaN, deep JSON, non-UTF-8 bytes as Python's argv carries
them, control characters, long letter runs, unicode, paths that are not
files) and random text. Each call is `grpcbench.cli.app.main` in this process,
with ``--dry-run`` for `run`, so nothing starts. ``GRPCBENCH_HOSTILE_EXAMPLES``
sets the values per option (default 12; ``nox -s hostile`` runs 200).
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import random
import sys
import time
from pathlib import Path

import pytest
import typer
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from grpcbench.base import interrupts
from grpcbench.cli import app as cli

pytestmark = pytest.mark.integration

EXAMPLES = int(os.environ.get("GRPCBENCH_HOSTILE_EXAMPLES", "12"))
LIMIT_S = 2.0
RESULTS = Path(__file__).resolve().parents[1] / "docs" / "results" / "default-run.json"

HOSTILE = [
    "", " ", "-1", "0", "-0", "1e309", "-1e309", "nan", "inf", "-inf", "1" * 40,
    "0x10", "1_000", "3.5", "[" * 5000 + "]" * 5000, '{"a":' * 3000 + "1" + "}" * 3000,
    "\udcff\udcfe\udc80", "\x00", "\x01\x1b[31m\x7f", "a" * 100_000, "Ω≈ç√∫˜µ≤≥÷ 🙂",
    "../../../../etc/passwd", "/dev/full", "/", "127.0.0.1:99999", "[::1]:0", "\n\n",
    "%s%n%x", "{{.Nope}}", "p99<", "step:start=-5", "local:-1", "tls://", "=", ",,,",
    "key=", "k=v" * 5000, "--help", "-", "'; rm -rf /", "ghz", "grpclib:workers=-1",
]  # fmt: skip
# An index into HOSTILE (a failing example prints short), or random text.
VALUES = st.one_of(st.integers(0, len(HOSTILE) - 1), st.text(max_size=64))


def _value(drawn: int | str) -> str:
    return HOSTILE[drawn] if isinstance(drawn, int) else drawn


def _options() -> list[tuple[str, bool]]:
    """Every option of `run` (its first spelling) and whether it takes a value."""
    command = typer.main.get_command(cli.app).commands["run"]  # type: ignore[attr-defined]
    return [
        (param.opts[0], not param.is_flag)
        for param in command.params
        if param.param_type_name == "option" and param.opts[0] not in ("--help", "--dry-run")
    ]


VALUED = [name for name, takes_value in _options() if takes_value]


def grpcbench(*argv: str) -> tuple[int, str, float]:
    """``main`` in this process: its exit code, standard error and seconds taken."""
    sys.argv = ["grpcbench", *argv]
    err = io.StringIO()
    started = time.perf_counter()
    code: int | str | None = 0
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        try:
            cli.main()
        except SystemExit as done:
            code = done.code
    return int(code or 0), err.getvalue(), time.perf_counter() - started


def assert_one_clear_line(code: int, stderr: str, seconds: float, what: str) -> None:
    tail = stderr[-1500:]
    assert "Traceback" not in stderr, f"{what}\n{tail}"
    assert code in (0, 2), f"{what}: exit {code}\n{tail}"
    if code == 2:
        errors = [line for line in stderr.splitlines() if "grpcbench: error:" in line]
        assert len(errors) == 1, f"{what}\n{tail}"
    # A refusal is quick; a file that is taken may be rendered (charts take longer).
    assert seconds < (LIMIT_S if code == 2 else 30), f"{what}: {seconds:.1f}s"


@pytest.fixture(autouse=True)
def _in_a_scratch_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # output options write their probes here
    monkeypatch.setattr(interrupts, "install", lambda: None)  # pytest keeps its signals
    monkeypatch.setattr(sys, "argv", list(sys.argv))


@pytest.mark.parametrize("option", VALUED)
def test_every_option_of_run_takes_hostile_values_in_one_line(option: str) -> None:
    @settings(max_examples=EXAMPLES, deadline=None, database=None,
              suppress_health_check=list(HealthCheck))  # fmt: skip
    @given(drawn=VALUES)
    def one(drawn: int | str) -> None:
        value = _value(drawn)
        code, stderr, seconds = grpcbench("run", "--dry-run", "-s", "grpclib", option, value)
        assert_one_clear_line(code, stderr, seconds, f"run {option} {value[:80]!r}")

    one()


# Classes every option must meet each time, beside the drawn ones: thousands of
# digits (Python's int() refuses past 4,300), a number past 64 bits, a size past
# grpc's 2 GiB, and deep nesting in a KEY=VALUE (TOML's parser recursed).
ALWAYS = [
    "1" * 5000, "99999999999999999999", "0-99999999999999999999", "10GiB",
    "x=" + "[" * 5000 + "]" * 5000, "x=" + "{a=" * 3000 + "1" + "}" * 3000,
]  # fmt: skip


@pytest.mark.parametrize("value", range(len(ALWAYS)))
@pytest.mark.parametrize("option", VALUED)
def test_every_option_of_run_meets_each_class_in_one_line(option: str, value: int) -> None:
    text = ALWAYS[value]
    code, stderr, seconds = grpcbench("run", "--dry-run", "-s", "grpclib", option, text)
    assert_one_clear_line(code, stderr, seconds, f"run {option} {text[:40]!r}")


def _mutations(data: dict[str, object], seed: int) -> bytes:
    """The saved results, broken one way: a key gone, a value of the wrong type,
    deep nesting, a truncated or non-UTF-8 file."""
    chooser = random.Random(seed)
    levels = data.get("levels") or [{}]
    level = dict(levels[0]) if isinstance(levels, list) and levels else {}  # type: ignore[arg-type]
    load = dict(level.get("load") or {})  # type: ignore[call-overload]
    text = json.dumps(data)
    kind = chooser.randrange(10)
    if kind == 0:
        return text[: chooser.randrange(len(text))].encode()
    if kind == 1:
        return b"\xff\xfe" + text.encode()
    if kind == 2:
        return ("[" * 5000 + "]" * 5000).encode()
    if kind == 3 and load:
        load.pop(chooser.choice(sorted(load)))
    elif kind == 4 and load:
        load[chooser.choice(sorted(load))] = chooser.choice(["x", -1, None, [], {}, 1e309])
    elif kind == 5:
        level[chooser.choice(sorted(level) or ["plan"])] = chooser.choice(["x", None, 7, []])
    elif kind in (8, 9):  # a part of the level: its plan or the server's usage
        part = "plan" if kind == 8 else "server_usage"
        inner = dict(level.get(part) or {})  # type: ignore[call-overload]
        inner[chooser.choice(sorted(inner) or ["x"])] = chooser.choice(["x", None, -1, [], {}])
        level[part] = inner
    elif kind == 6:
        return json.dumps({**data, "format_version": chooser.choice([-1, 999, "x", None])}).encode()
    else:
        return json.dumps(chooser.choice([[], "x", 3, None, {"levels": "x"}])).encode()
    level["load"] = load
    return json.dumps({**data, "levels": [level]}).encode()


@settings(max_examples=EXAMPLES * 4, deadline=None, database=None,
          suppress_health_check=list(HealthCheck))  # fmt: skip
@given(seed=st.integers(0, 2**32 - 1), command=st.sampled_from(["show", "compare", "report"]))
def test_mutated_results_files_are_one_clear_line(seed: int, command: str) -> None:
    original = json.loads(RESULTS.read_text())
    broken = Path(f"broken-{seed}.json")
    broken.write_bytes(_mutations(original, seed))
    argv = {
        "show": ["show", str(broken)],
        "compare": ["compare", str(RESULTS), str(broken)],
        "report": ["report", str(broken), "--html", f"out-{seed}.html"],
    }[command]
    code, stderr, seconds = grpcbench(*argv)
    assert_one_clear_line(code, stderr, seconds, f"{command} mutation {seed}")


PROTO = str(Path(__file__).resolve().parents[1] / "protos/grpcbench/proto/helloworld.proto")
CALL = ("--call", "helloworld.Greeter/SayHello", "--proto", PROTO)
# Every place a file is named, given the path (``run`` with --dry-run: nothing starts).
READERS: dict[str, tuple[str, ...]] = {
    "--scenario": ("run", "--dry-run", "--scenario", "{}"),
    "--config": ("run", "--dry-run", "--config", "{}"),
    "-D": ("run", "--dry-run", "-s", "grpclib", *CALL, "-D", "{}"),
    "-M": ("run", "--dry-run", "-s", "grpclib", *CALL, "-M", "{}"),
    "-B": ("run", "--dry-run", "-s", "grpclib", *CALL, "-B", "{}"),
    "--proto": ("run", "--dry-run", "-s", "grpclib", "--call", "helloworld.Greeter/SayHello",
                "--proto", "{}"),
    "--protoset": ("run", "--dry-run", "-s", "grpclib", "--call", "helloworld.Greeter/SayHello",
                   "--protoset", "{}"),
    "--cacert": ("run", "--dry-run", "-s", "grpclib", "--cacert", "{}"),
    "show": ("show", "{}"),
    "compare": ("compare", "{}", "{}"),
    "report": ("report", "{}", "--html", "out.html"),
}  # fmt: skip


def hostile_file(kind: str, suffix: str) -> str:
    """A path in the scratch directory that is hostile in the way ``kind`` says."""
    path = Path(f"hostile-{kind}{suffix}")
    if kind == "endless device":
        return "/dev/zero"
    if kind == "directory":
        path.mkdir(exist_ok=True)
    elif kind == "socket":
        import socket

        path = Path(f"s{suffix}")  # a socket's path is short (108 bytes)
        if not path.exists():
            socket.socket(socket.AF_UNIX).bind(str(path))
    elif kind == "symlink loop":
        if not path.is_symlink():
            path.symlink_to(path.name)
    elif kind == "nested TOML":
        path.write_text("x = " + "[" * 5000 + "]" * 5000 + "\n")
    elif kind == "nested JSON":
        path.write_text('{"a":' * 5000 + "1" + "}" * 5000)
    elif kind == "not UTF-8":
        path.write_bytes(b"\xff\xfe\x00name = \x80\x81")
    elif kind == "empty":
        path.write_bytes(b"")
    elif kind == "escape sequences":
        path.write_text('{"name": "\x1b[31m\x1b]0;owned\x07"}\n')
    return str(path)


FILE_KINDS = ["endless device", "directory", "socket", "symlink loop", "nested TOML",
              "nested JSON", "not UTF-8", "empty", "escape sequences"]  # fmt: skip


@settings(max_examples=EXAMPLES * 6, deadline=None, database=None,
          suppress_health_check=list(HealthCheck))  # fmt: skip
@given(
    reader=st.sampled_from(sorted(READERS)),
    kind=st.sampled_from(FILE_KINDS),
    suffix=st.sampled_from([".toml", ".json", ".jsonl", ".csv", ".proto", ".pem", ""]),
)
def test_every_file_an_option_names_may_be_hostile(reader: str, kind: str, suffix: str) -> None:
    """Devices that never end, directories, sockets, symlink loops, bombs of nesting,
    bytes that are not UTF-8, empty files and escape sequences, as every file any
    command reads: one clear line (exit 2) or taken (exit 0), never a traceback or a
    read without end (``/dev/zero`` as a results file once ran out of memory, and a
    nested scenario file exited 70)."""
    path = hostile_file(kind, suffix)
    argv = [part.replace("{}", path) for part in READERS[reader]]
    code, stderr, seconds = grpcbench(*argv)
    assert_one_clear_line(code, stderr, seconds, f"{reader} given {kind} ({path})")
    assert "\x1b" not in stderr, f"{reader}: an escape sequence reached the terminal"


@pytest.mark.parametrize("kind", FILE_KINDS)
@pytest.mark.parametrize("reader", sorted(READERS))
def test_each_reader_meets_each_hostile_file_kind(reader: str, kind: str) -> None:
    """Every pair once, beside the drawn ones (the classes that found the defects)."""
    path = hostile_file(kind, ".toml" if reader == "--scenario" else ".json")
    code, stderr, seconds = grpcbench(*[p.replace("{}", path) for p in READERS[reader]])
    assert_one_clear_line(code, stderr, seconds, f"{reader} given {kind} ({path})")
