"""nox sessions for grpcbench (``nox -l`` lists them with these descriptions)."""

from __future__ import annotations

import nox

nox.options.default_venv_backend = "venv"
nox.options.sessions = ["tests", "lint"]
nox.options.reuse_existing_virtualenvs = True

SOURCES = ("grpcbench", "tests", "benchmarks", "scripts", "noxfile.py")


@nox.session
def tests(session: nox.Session) -> None:
    """Run the test suite (unit, integration, CLI and process-leak tests)."""
    session.install(".[test]")
    session.run("pytest", *session.posargs)


@nox.session
def lint(session: nox.Session) -> None:
    """Check style and common bugs with ruff (lint and format)."""
    session.install("ruff")
    session.run("ruff", "check", *SOURCES)
    session.run("ruff", "format", "--check", *SOURCES)


@nox.session
def typecheck(session: nox.Session) -> None:
    """Type-check the package with mypy."""
    session.install(".", "mypy")
    session.run("mypy", "grpcbench")


@nox.session
def bench(session: nox.Session) -> None:
    """pytest-benchmark suite: the hello scenario on every server kind (autosaved)."""
    session.install(".[test]")
    session.run(
        "pytest", "benchmarks", "--benchmark-autosave", "-p", "no:cacheprovider", *session.posargs
    )


@nox.session
def loadgen(session: nox.Session) -> None:
    """The generators' own cost: CPU us per RPC and rate, built-in (1 and 2 processes) vs ghz."""
    session.install(".")
    session.run("python", "benchmarks/loadgen.py", *session.posargs)


@nox.session
def smoke(session: nox.Session) -> None:
    """A short real `grpcbench run` from an installed wheel (not the source tree)."""
    session.install(".")
    tmp = session.create_tmp()
    session.chdir(tmp)
    session.run(
        "grpcbench", "run", "--concurrency", "2,10", "--requests", "300", "--warmup", "30",
        "--output", "smoke.json", "--markdown", "smoke.md", *session.posargs,
    )  # fmt: skip


@nox.session
def proto(session: nox.Session) -> None:
    """Regenerate the grpcio and grpclib stubs from protos/ (never edit them by hand)."""
    session.install("grpcio-tools==1.85.1", "grpclib")
    session.run("python", "scripts/generate_protos.py")
