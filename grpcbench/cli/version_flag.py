"""Whether a command line asks for the version: ``--version``, or ghz's ``-v`` after
``run``. Its own module, importing nothing, so ``cli.entry`` answers it before the
command line is built."""

from __future__ import annotations


def version_spelled(argv: list[str]) -> list[str]:
    """ghz's ``-v``/``--version`` after ``run`` (a ghz line with the name swapped) is
    grpcbench's ``--version`` (after ``--``, a word is an argument, not a flag)."""
    words = argv[2 : argv.index("--")] if "--" in argv else argv[2:]
    if len(argv) > 2 and argv[1] == "run" and {"-v", "--version"} & set(words):
        return [argv[0], "--version"]
    return argv
