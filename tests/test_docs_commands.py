"""Every grpcbench command on a docs page (README and docs/) is run here.

`run` and `capacity` commands run with --dry-run: every option, file and output path is checked
and the plan printed, so a page that shows a command `run` would refuse fails
this test. `show`, `compare`, `report`, `servers`, `scenarios` and `--version`
run for real on a saved results file. Placeholders (HOST:PORT, PID, ...) become
values that exist; synopsis lines with alternatives ([a | b]) are not commands.
"""

from __future__ import annotations

import contextlib
import os
import re
import shlex
import shutil
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from grpcbench.cli.app import app

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
GENERATED = {ROOT / "docs" / "cli.md"}  # the CLI reference, generated from the app
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
    '"$(go env GOPATH)/bin/ghz"': "ghz",
}
RESULT_FILES = {
    **dict.fromkeys(("a.json", "b.json", "results.json", "r.json"), RESULTS),
    "capacity.json": ROOT / "docs" / "results" / "capacity.json",
}


def _fenced_lines(page: Path) -> list[str]:
    lines, inside = [], False
    for line in page.read_text().splitlines():
        if line.lstrip().startswith("```"):
            inside = not inside
            continue
        if inside:
            lines.append(line)
    return lines


def _commands(page: Path) -> list[str]:
    """grpcbench command lines in the page's code blocks, continuations joined."""
    found: list[str] = []
    joined = ""
    for line in _fenced_lines(page):
        joined += line.rstrip().removesuffix("\\").rstrip() + " "
        if line.rstrip().endswith("\\"):
            continue
        text, joined = joined.strip().removeprefix("$ ").strip(), ""
        for part in text.split("; "):
            part = re.sub(r"\s+#.*$", "", part).strip()
            if part.startswith("grpcbench ") and not re.search(r"\[[^\]]*\|", part):
                found.append(part)
    return found


def _documented() -> list[tuple[str, str]]:
    return [
        (str(page.relative_to(ROOT)), command)
        for page in PAGES
        if page not in GENERATED
        for command in _commands(page)
    ]


def test_the_pages_have_commands() -> None:
    assert len(_documented()) >= 40  # the extraction itself works


def _cases() -> list[Any]:
    """Every documented command; drawing charts (matplotlib, seconds) with the slow tests."""
    return [
        pytest.param(page, command, marks=pytest.mark.integration)
        if "--png" in command or "--svg" in command
        else pytest.param(page, command)
        for page, command in _documented()
    ]


@pytest.mark.parametrize(("page", "command"), _cases())
def test_every_documented_command_runs(
    page: str, command: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for example in ("echo", "route_guide"):  # the files the pages' commands name
        for source in (ROOT / "examples" / example).iterdir():
            if source.is_file():  # not a __pycache__ an import of the example left there
                shutil.copy(source, tmp_path / source.name)
    for name, source in RESULT_FILES.items():
        shutil.copy(source, tmp_path / name)
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    for placeholder, value in PLACEHOLDERS.items():
        command = command.replace(placeholder, value)
    argv = [word for word in shlex.split(command)[1:] if word != "..."]
    if argv[0] in ("run", "capacity"):
        argv.append("--dry-run")
    elif argv[0] == "serve":
        argv.append("--help")  # a server in the foreground until Ctrl-C
    elif argv[0] == "report" and any(a in argv for a in ("--png", "--svg")):
        pytest.importorskip("matplotlib")
    with _reflection_server_for(argv):
        result = CliRunner().invoke(app, argv, env={"COLUMNS": "200"})
    assert result.exit_code == 0, f"{page}: {command}\n{result.output}"


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


def _other_commands(pattern: str) -> set[str]:
    return {
        match
        for page in PAGES
        if page not in GENERATED
        for line in _fenced_lines(page)
        for match in re.findall(pattern, re.sub(r"\s#.*$", "", line))
    }


def test_every_documented_nox_session_and_extra_exists() -> None:
    """`nox -s NAME` and `pip install '.[EXTRA]'` on a page name real ones."""
    import tomllib

    sessions = set(re.findall(r"@nox\.session[^\n]*\ndef (\w+)", (ROOT / "noxfile.py").read_text()))
    found = _other_commands(r"nox -s ((?:\w+ ?)+)")
    named = {name for names in found for name in names.split()}
    assert named and named <= sessions, named - sessions
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    extras = set(project["optional-dependencies"])
    wanted = {e for group in _other_commands(r"\.\[([\w,]+)\]") for e in group.split(",")}
    assert wanted and wanted <= extras, wanted - extras
