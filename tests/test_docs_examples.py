"""Every code block of README.md and docs/*.md is tried here (found by Sybil:
tests/support/doc_examples.py), or is marked on its page as illustrative, with the reason.

- `sh`: each command runs. `grpcbench run` and `capacity` run with --dry-run (every option,
  file and output path is checked and the plan printed); `show`, `compare`, `report`,
  `list`, `describe`... run for real, on saved results or against a live echo server;
  `serve` shows its help (it would serve until Ctrl-C). A ghz line runs as a grpcbench line
  (grpcbench takes ghz's lines). `nox -s`, `pip install '.[extra]'`, `pytest PATH`, `python
  scripts/...` and `dask ...` name sessions, extras, paths, scripts and flags that exist.
  Placeholders (HOST:PORT, PID, ...) become values that exist.
- `python`: a block `from:` a file is that file's text, line for line; a pytest test is run
  by pytest, against a live server where it names one.
- `toml`: a scenario runs with --dry-run; entry points name groups grpcbench reads.
- `yaml`: parses; a Prometheus scrape config scrapes what `--prometheus` serves.
- `text`: terminal output, regenerated from saved results by scripts/render_results.py
  (a test checks it is current), so it sits inside a results block.
"""

from __future__ import annotations

import contextlib
import glob
import json
import os
import re
import shlex
import shutil
import socket
import subprocess
import sys
import tomllib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from grpcbench.cli.app import app
from tests.support.doc_examples import (
    GENERATED,
    LANGUAGES,
    PAGES,
    ROOT,
    Block,
    blocks,
    every_block,
    fence_count,
)

RESULTS = ROOT / "docs" / "results" / "default-run.json"
# A page's --target-pid must listen on its --target's port (run checks it): this process
# stands in for the documented server, listening on a free port of its own.
_SERVER = socket.socket()
_SERVER.bind(("127.0.0.1", 0))
_SERVER.listen()
SERVER_ADDRESS = f"127.0.0.1:{_SERVER.getsockname()[1]}"
PLACEHOLDERS = {
    "HOST:PORT": SERVER_ADDRESS,
    "H:P": SERVER_ADDRESS,
    "127.0.0.1:50051": SERVER_ADDRESS,
    "SCHEDULER": "127.0.0.1",
    "PID": str(os.getpid()),
    "1234": str(os.getpid()),
    " SYMBOL": " echo.Echo",
    '"$(go env GOPATH)/bin/ghz"': "ghz",
}
RESULT_FILES = {
    **dict.fromkeys(("a.json", "b.json", "A.json", "B.json", "results.json", "r.json"), RESULTS),
    "capacity.json": ROOT / "docs" / "results" / "capacity.json",
}
SETUP = ("python3 -m venv .venv", ". .venv/bin/activate")  # what .ci/run itself does


def _cases() -> list[Any]:
    """Every block; those that start servers (charts, pytest suites) with the slow tests."""
    cases = []
    for block in every_block():
        marks: list[Any] = []
        if block.illustrative:
            marks.append(pytest.mark.skip(reason=f"illustrative: {block.illustrative}"))
        slow = "--png" in block.source or "--svg" in block.source or "def test_" in block.source
        if slow:
            marks.append(pytest.mark.integration)
        cases.append(pytest.param(block, id=block.name, marks=marks))
    return cases


def test_every_fence_is_a_block_with_a_language_we_try() -> None:
    """A block without a language, or in one nothing here evaluates, fails: no block is
    left out unseen."""
    unseen = []
    for page in PAGES:
        if page in GENERATED:
            continue
        found = blocks(page)
        if len(found) != fence_count(page):
            unseen.append(f"{page.relative_to(ROOT)}: a fence without a language")
        unseen += [f"{b.name}: {b.language}" for b in found if b.language not in LANGUAGES]
    assert not unseen, unseen
    assert len(every_block()) >= 40  # the extraction itself works


@pytest.mark.parametrize("block", _cases())
def test_every_block_runs(block: Block, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for example in ("echo", "route_guide"):  # the files the pages' commands name
        for source in (ROOT / "examples" / example).iterdir():
            if source.is_file():  # not a __pycache__ an import of the example left there
                shutil.copy(source, tmp_path / source.name)
    for name, source in RESULT_FILES.items():
        shutil.copy(source, tmp_path / name)
    shutil.copytree(ROOT / "docs" / "results", tmp_path / "docs" / "results")  # as named
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    if block.origin:
        _is_part_of(block, ROOT / block.origin)
    EVALUATORS[block.language](block, tmp_path)


def _blank(match: re.Match[str]) -> str:
    """A generated block's text as blank lines: its commands are the saved runs' own."""
    return "\n" * match.group(0).count("\n")


def _inline_commands() -> list[Any]:
    """`grpcbench ...` in a page's prose, with two words or more after the name and no
    synopsis ([...], …) in it."""
    found = []
    for page in PAGES:
        if page in GENERATED:
            continue
        text = re.sub(
            r"(<!-- results:[\w-]+ -->).*?(?=<!-- /results)",
            _blank,
            page.read_text(),
            flags=re.DOTALL,
        )
        for match in re.finditer(r"(?<!`)`(grpcbench [^`]+)`(?!`)", text):
            command = " ".join(match.group(1).split())
            if len(command.split()) >= 3 and not re.search(r"[\[…|]|\.\.\.", command):
                line = text.count("\n", 0, match.start()) + 1
                block = Block(str(page.relative_to(ROOT)), line, "sh", command, None, None)
                found.append(pytest.param(block, id=f"{block.name} {command[:40]}"))
    return found


@pytest.mark.parametrize("block", _inline_commands())
def test_every_command_in_prose_runs(
    block: Block, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    test_every_block_runs(block, tmp_path, monkeypatch)


def _is_part_of(block: Block, origin: Path) -> None:
    """The block's lines are the file's, in order (a block may leave lines out)."""
    lines = iter(line.strip() for line in origin.read_text().splitlines())
    for shown in filter(None, (line.strip() for line in block.source.splitlines())):
        assert shown in lines, f"{block.name}: {shown!r} is not in {block.origin} (in order)"


# ---- sh


def _commands(block: Block) -> list[str]:
    """The block's commands: continuations joined, prompts and comments dropped, a line's
    `&&` and `;` parts apart."""
    found, joined = [], ""
    for line in block.source.splitlines():
        joined += line.rstrip().removesuffix("\\").rstrip() + " "
        if line.rstrip().endswith("\\"):
            continue
        text, joined = re.sub(r"(^|\s)#.*$", "", joined.strip().removeprefix("$ ")), ""
        found += [part.strip() for part in re.split(r" && |; ", text) if part.strip()]
    return found


def _evaluate_sh(block: Block, workdir: Path) -> None:
    commands = _commands(block)
    assert commands, f"{block.name}: no command"
    for command in commands:
        if command in SETUP:
            continue
        words = shlex.split(command)
        assigned = {}  # `NAME=value command`: the command runs with NAME set
        while words and re.fullmatch(r"[A-Z_][A-Z0-9_]*=\S*", words[0]):
            name, value = words.pop(0).split("=", 1)
            assigned[name] = value
        runner = COMMANDS.get(words[0]) or COMMANDS.get(" ".join(words[:2]))
        assert runner, (
            f"{block.name}: nothing here tries {command!r}: make it a command this test runs,"
            " or mark the block <!-- illustrative: why -->"
        )
        with _environment(assigned):
            runner(block, shlex.join(words) if assigned else command, workdir)


@contextlib.contextmanager
def _environment(assigned: dict[str, str]) -> Iterator[None]:
    """The command's ``NAME=value`` settings, for its run only. Dask reads its settings
    from the environment once, when imported: an earlier test in this process may have
    imported it, so its configuration is read again each way."""
    saved = {name: os.environ.get(name) for name in assigned}
    os.environ.update(assigned)
    _reread_dask_config()
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        _reread_dask_config()


def _reread_dask_config() -> None:
    if "dask.config" in sys.modules:
        sys.modules["dask.config"].refresh()


def _grpcbench(block: Block, command: str, workdir: Path) -> None:
    for placeholder, value in PLACEHOLDERS.items():
        command = command.replace(placeholder, value)
    argv = [word for word in shlex.split(command)[1:] if word != "..."]
    if re.search(r"\[[^\]]*\|", command):
        return  # a synopsis ([a | b]), not a command
    env = {"COLUMNS": "200"}
    if argv[0] in ("run", "capacity"):
        argv.append("--dry-run")
    elif argv[0] in ("serve", "web"):
        argv.append("--help")  # a server in the foreground until Ctrl-C
    elif argv[0] in ("store", "history"):
        argv = [word for arg in argv for word in (sorted(glob.glob(arg)) or [arg])]
        env.update(_saved_runs_store(argv, workdir))
    elif argv[0] == "report" and any(a in argv for a in ("--png", "--svg")):
        pytest.importorskip("matplotlib")
    with _reflection_server_for(argv):
        result = CliRunner().invoke(app, argv, env=env)
    assert result.exit_code == 0, f"{block.name}: {command}\n{result.output}"


def _saved_runs_store(argv: list[str], workdir: Path) -> dict[str, str]:
    """A page's `history` reads a store: the one it names (or GRPCBENCH_STORE's), made
    from the saved runs of docs/history.md under the project it names (step's, and a
    ``--control``'s own), unless a block before filled it."""
    pytest.importorskip("otava")
    from grpcbench.history.store import Store

    url = argv[argv.index("--store") + 1] if "--store" in argv else "sqlite:///runs.db"
    project = argv[argv.index("--project") + 1] if "--project" in argv else "step"
    control = argv[argv.index("--control") + 1] if "--control" in argv else None
    store = Store(url)
    saved = workdir / "docs" / "results" / "history"
    for name, runs in ((project, "step"), (control, control)):
        if argv[0] == "history" and name and not any(n == name for n, *_ in store.projects()):
            for path in sorted(saved.glob(f"{runs}-*.json")):
                store.save(name, json.loads(path.read_text()), path.name)
    store.engine.dispose()
    return {"GRPCBENCH_STORE": url, "GRPCBENCH_PROJECT": project}


def _ghz(block: Block, command: str, workdir: Path) -> None:
    """A ghz line, as the page says grpcbench takes it: the binary's name swapped."""
    _grpcbench(block, "grpcbench run " + command.removeprefix("ghz").strip(), workdir)


@contextlib.contextmanager
def _reflection_server_for(argv: list[str]) -> Iterator[None]:
    """`list` and `describe` ask a real reflection service: examples/echo's, served
    here at the documented address's place."""
    if argv[0] not in ("list", "describe") or SERVER_ADDRESS not in argv:
        yield
        return
    from tests.support.echo_server import echo_server

    with echo_server() as address:
        argv[argv.index(SERVER_ADDRESS)] = address
        yield


def _nox(block: Block, command: str, workdir: Path) -> None:
    sessions = set(re.findall(r"@nox\.session[^\n]*\ndef (\w+)", (ROOT / "noxfile.py").read_text()))
    words = shlex.split(command.split(" -- ")[0])[1:]
    if words == ["-l"]:
        return
    assert words[0] == "-s", f"{block.name}: {command}"
    assert set(words[1:]) <= sessions, f"{block.name}: no nox session {set(words[1:]) - sessions}"


def _pip(block: Block, command: str, workdir: Path) -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    for word in shlex.split(command)[2:]:
        match = re.fullmatch(r"(\.|grpcbench)(?:\[([\w,]+)\])?", word)
        if word in ("-e", "-q", "nox"):
            continue
        assert match, f"{block.name}: pip installs {word!r}, not this project"
        wanted = set(filter(None, (match.group(2) or "").split(",")))
        missing = wanted - set(project["optional-dependencies"])
        assert not missing, f"{block.name}: no extra {missing}"


def _python_script(block: Block, command: str, workdir: Path) -> None:
    script = shlex.split(command)[1]
    assert (ROOT / script).is_file(), f"{block.name}: no {script}"
    shown = subprocess.run(
        [sys.executable, str(ROOT / script), "--help"], capture_output=True, text=True, cwd=ROOT
    )
    assert shown.returncode == 0, f"{block.name}: {script} --help: {shown.stderr}"


def _kubernetes_kit(block: Block, command: str, workdir: Path) -> None:
    """`certificates` and `manifests` run for real (the manifests are validated as they
    are written); `image` builds a wheel, so its flags are checked against its help."""
    words = shlex.split(command)
    redirect = words[words.index(">") + 1] if ">" in words else None
    argv = words[1 : words.index(">")] if redirect else words[1:]
    script = [sys.executable, str(ROOT / argv[0])]
    if argv[1] == "image":
        shown = subprocess.run([*script, "image", "--help"], capture_output=True, text=True)
        assert all(flag in shown.stdout for flag in argv[2:] if flag.startswith("--")), command
        return
    done = subprocess.run([*script, *argv[1:]], capture_output=True, text=True, cwd=workdir)
    assert done.returncode == 0, f"{block.name}: {command}\n{done.stderr}"
    if redirect:
        (workdir / redirect).write_text(done.stdout)


def _pytest(block: Block, command: str, workdir: Path) -> None:
    paths = [w for w in shlex.split(command)[1:] if not w.startswith("-")]
    assert paths and all((ROOT / p).exists() for p in paths), f"{block.name}: {command}"


def _executable(block: Block, command: str, workdir: Path) -> None:
    name = shlex.split(command)[0]
    assert shutil.which(name), f"{block.name}: {name} is not installed by the test extra"


def _go_install(block: Block, command: str, workdir: Path) -> None:
    """The ghz a page installs is the one CI tests against."""
    assert command in (ROOT / ".ci" / "run").read_text(), f"{block.name}: {command}"


def _cd(block: Block, command: str, workdir: Path) -> None:
    assert (ROOT / shlex.split(command)[1]).is_dir(), f"{block.name}: {command}"


def _dask(block: Block, command: str, workdir: Path) -> None:
    """`dask scheduler|worker`: every flag the page gives is one the command takes."""
    words = shlex.split(command)
    dask = shutil.which("dask") or pytest.skip("dask is not installed")
    shown = subprocess.run([dask, *words[1:2], "--help"], capture_output=True, text=True)
    assert shown.returncode == 0, shown.stderr
    for flag in (w for w in words[2:] if w.startswith("--")):
        assert flag in shown.stdout, f"{block.name}: `dask {words[1]}` has no {flag}"


COMMANDS: dict[str, Callable[[Block, str, Path], None]] = {
    "grpcbench": _grpcbench,
    "ghz": _ghz,
    "nox": _nox,
    "pip install": _pip,
    "python scripts/render_results.py": _python_script,
    "python scripts/kubernetes_cluster.py": _kubernetes_kit,
    "pytest": _pytest,
    "pytest-benchmark": _executable,
    "go install": _go_install,
    "cd": _cd,
    "dask": _dask,
}


# ---- python, toml, yaml, text


def _evaluate_python(block: Block, workdir: Path) -> None:
    compile(block.source, block.name, "exec")
    if "def test_" not in block.source:
        assert block.origin, f"{block.name}: a Python block runs as a test, or is `from:` a file"
        return
    test = workdir / "test_from_docs.py"
    test.write_text(block.source)
    from tests.support.echo_server import echo_server

    with echo_server() as address:
        test.write_text(block.source.replace("127.0.0.1:50051", address))
        ran = subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(test)],
            capture_output=True, text=True, cwd=workdir, timeout=600,
        )  # fmt: skip
    ran_all = ran.returncode == 0 and " passed" in ran.stdout and " skipped" not in ran.stdout
    assert ran_all, f"{block.name}:\n{ran.stdout[-3000:]}{ran.stderr[-2000:]}"


def _evaluate_toml(block: Block, workdir: Path) -> None:
    parsed = tomllib.loads(block.source)
    groups = parsed.get("project", {}).get("entry-points", {})
    if groups:
        read = _entry_point_groups()
        assert set(groups) <= read, f"{block.name}: grpcbench reads no {set(groups) - read}"
        return
    scenario = workdir / "from_docs.toml"
    scenario.write_text(block.source)
    _grpcbench(block, f"grpcbench run {SERVER_ADDRESS} --scenario {scenario}", workdir)


def _entry_point_groups() -> set[str]:
    """The groups grpcbench's registries (and its services) load entry points from."""
    source = "\n".join(path.read_text() for path in (ROOT / "grpcbench").rglob("*.py"))
    registries = re.findall(r'Registry\(\s*"(grpcbench\.\w+)"', source)
    return {*registries, *re.findall(r'group="(grpcbench\.\w+)"', source), "grpcbench.services"}


def _evaluate_yaml(block: Block, workdir: Path) -> None:
    parsed = yaml.safe_load(block.source)
    page = (ROOT / block.page).read_text()
    for job in parsed.get("scrape_configs", []):  # Prometheus scrapes a --prometheus on the page
        for target in (t for config in job["static_configs"] for t in config["targets"]):
            given = (f"--prometheus {target}", f"--prometheus {target.rsplit(':', 1)[1]}")
            assert any(g in page for g in given), f"{block.name}: no --prometheus {target}"


def _evaluate_text(block: Block, workdir: Path) -> None:
    page = (ROOT / block.page).read_text().splitlines()
    before = "\n".join(page[: block.line])
    opened = re.findall(r"<!-- (/?)results:([\w-]+) -->", before)
    assert opened and not opened[-1][0], (
        f"{block.name}: terminal output that no script regenerates: put it in a results"
        " block scripts/render_results.py renders, or mark it <!-- illustrative: why -->"
    )


EVALUATORS: dict[str, Callable[[Block, Path], None]] = {
    "sh": _evaluate_sh,
    "python": _evaluate_python,
    "toml": _evaluate_toml,
    "yaml": _evaluate_yaml,
    "text": _evaluate_text,
}
