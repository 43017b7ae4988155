"""`grpcbench --help` is answered without building the command line
(``cli.command_summaries``): it must print exactly what the whole command line prints."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from grpcbench.cli.command_summaries import SUMMARIES, asks_for_help

FULL_APP_HELP = (
    "import sys; sys.argv = ['grpcbench', '--help']; from grpcbench.cli.app import main; main()"
)


def first_sentence(doc: str) -> str:
    text = " ".join(doc.split())
    return text.split(". ")[0].rstrip(".") + "."


def test_the_summaries_are_the_commands_in_their_order() -> None:
    import typer

    from grpcbench.cli.app import app

    group = typer.main.get_command(app)
    assert list(SUMMARIES) == list(group.commands)  # type: ignore[attr-defined]
    for name, command in group.commands.items():  # type: ignore[attr-defined]
        # A command's own help (`grpcbench run --help`) starts with its summary.
        assert first_sentence(command.help or "") == SUMMARIES[name], name


@pytest.mark.parametrize("columns", ["80", "132"])
def test_the_quick_help_is_the_whole_command_line_s_help(columns: str) -> None:
    # Typer orders a help option's spellings by hash: one seed for both.
    env = {**os.environ, "COLUMNS": columns, "TERM": "dumb", "PYTHONHASHSEED": "0"}
    quick = subprocess.run(
        [sys.executable, "-P", "-m", "grpcbench", "--help"], capture_output=True, text=True,
        env=env, check=False, timeout=60,
    )  # fmt: skip
    whole = subprocess.run(
        [sys.executable, "-P", "-c", FULL_APP_HELP],
        capture_output=True, text=True, env=env, check=False, timeout=60,
    )  # fmt: skip
    assert quick.returncode == whole.returncode == 0, quick.stderr + whole.stderr
    assert quick.stdout == whole.stdout
    words = " ".join(quick.stdout.replace("│", " ").split())
    assert "(pip install 'grpcbench[web]')" in words  # a [bracket] is text, not markup


def test_only_a_bare_help_takes_the_quick_path() -> None:
    assert asks_for_help(["grpcbench", "--help"]) and not asks_for_help(["grpcbench", "-h"])
    assert not asks_for_help(["grpcbench", "run", "--help"])
    assert not asks_for_help(["grpcbench", "--help", "run"])
