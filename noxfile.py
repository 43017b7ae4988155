"""nox sessions for grpcbench (``nox -l`` lists them with these descriptions)."""

from __future__ import annotations

import glob
import shutil
import subprocess
from pathlib import Path

import nox

nox.options.default_venv_backend = "venv"


def _runs(version: str) -> bool:
    """On PATH *and* working: a pyenv shim of a version that is not enabled fails."""
    binary = shutil.which(f"python{version}")
    if binary is None:
        return False
    probe = subprocess.run([binary, "-c", ""], capture_output=True, check=False)
    return probe.returncode == 0


# Every supported CPython that works on this machine (tests run once per version).
PYTHONS = [v for v in ("3.11", "3.12", "3.13", "3.14") if _runs(v)] or None
# The default server kinds, for sessions parametrized by server kind.
SERVER_KINDS = [
    "grpcio:workers=1",
    "grpcio:workers=10",
    "grpclib",
    "grpclib+uvloop",
    "grpcio-aio",
    "grpcio-aio+uvloop",
]
nox.options.sessions = ["tests", "lint"]
nox.options.reuse_existing_virtualenvs = True

SOURCES = ("grpcbench", "tests", "benchmarks", "scripts", "examples", "noxfile.py")


@nox.session(python=PYTHONS)
def tests(session: nox.Session) -> None:
    """Run the test suite (unit, integration, CLI and process-leak tests).

    ``-- -m "not integration"`` selects the fast tests; they start no server and
    pin nothing, so they are spread over every core (pytest-xdist). The
    integration tests pin servers and generators to CPUs and run one at a time."""
    session.install(".[test]")
    args = list(session.posargs)
    chose_workers = any(arg.startswith(("-n", "--numprocesses")) for arg in args)
    if _selects_fast_tests_only(args) and not chose_workers:
        args = ["--numprocesses", "auto", *args]
    session.run("pytest", *args)


def _selects_fast_tests_only(args: list[str]) -> bool:
    """True when a ``-m`` expression leaves every integration test out."""
    expressions = [args[i + 1] for i, arg in enumerate(args[:-1]) if arg == "-m"]
    expressions += [arg.removeprefix("-m") for arg in args if arg.startswith("-m") and arg != "-m"]
    return any(" ".join(e.split()) == "not integration" for e in expressions)


@nox.session
def lint(session: nox.Session) -> None:
    """Check style and common bugs with ruff (lint and format)."""
    session.install("ruff")
    session.run("ruff", "check", *SOURCES)
    session.run("ruff", "format", "--check", *SOURCES)


@nox.session
def docs(session: nox.Session) -> None:
    """The docs site (MkDocs Material) built with --strict: the CLI reference is generated
    from the Typer app first, and every results block must match its saved results."""
    session.install(".[docs,history]")  # history: the `history` output the docs show
    session.run("typer", "grpcbench.cli.app", "utils", "docs", "--name", "grpcbench",
                "--output", "docs/cli.md")  # fmt: skip
    session.run("python", "scripts/render_results.py", "--check")
    site = Path(session.create_tmp()).resolve() / "site"
    session.run("mkdocs", "build", "--strict", "--site-dir", str(site))


@nox.session
def typecheck(session: nox.Session) -> None:
    """Type-check the package with mypy (strict; the generated stubs excepted), then the
    benchmarks and scripts that call it (not strict: a renamed method is still caught)."""
    session.install(".", "mypy", "pytest")  # pytest: the plugin's decorators are typed
    session.run("mypy", "grpcbench")
    session.run(
        "mypy", "--config-file", "benchmarks/mypy.ini", *sorted(glob.glob("benchmarks/*.py")),
        *sorted(glob.glob("scripts/*.py")), env={"MYPYPATH": "benchmarks"},
    )  # fmt: skip


@nox.session
def bench(session: nox.Session) -> None:
    """pytest-benchmark suite: the hello scenario on every server kind (autosaved)."""
    session.install(".[test]")
    session.run(
        "pytest", "benchmarks", "--benchmark-autosave", "-p", "no:cacheprovider", *session.posargs
    )


@nox.session
def loadgen(session: nox.Session) -> None:
    """Clients' own cost vs a Go greeter: h2load, built-in on both stacks, bare grpc.aio, ghz;
    then what --prometheus adds to the built-in generator's CPU per call."""
    session.install(".")
    # The Go greeter is built here, in the session, never at install.
    greeter = Path(session.create_tmp()).resolve() / "greeter"
    with session.chdir("benchmarks/greeter_go"):
        session.run("go", "build", "-o", str(greeter), ".", external=True,
                    env={"GOTOOLCHAIN": "local"})  # fmt: skip
    session.run("python", "benchmarks/loadgen.py", "--greeter", str(greeter), *session.posargs)
    # What live telemetry costs the generator, side by side on the same greeter.
    session.install(".[telemetry,proto]")
    session.run("python", "benchmarks/telemetry_overhead.py", "--greeter", str(greeter))


@nox.session
def wire_replay(session: nox.Session) -> None:
    """The wire stack's own CPU per unary call with no server or socket (replayed
    replies): the figure to watch while changing the transport's hot path."""
    session.install(".")
    session.run("python", "-P", "benchmarks/wire_replay.py", *session.posargs)


@nox.session
def deadlines(session: nox.Session) -> None:
    """How late a wire call's deadline fires, on asyncio and uvloop (median, p90, worst):
    the figure the tests leave to a benchmark, since load moves it."""
    session.install(".")
    session.run("python", "-P", "benchmarks/deadline_lateness.py", *session.posargs)


@nox.session
def telemetry_overhead(session: nox.Session) -> None:
    """What --prometheus and --otlp (and the --interval they turn on) cost the generator
    per call and the coordinator, interleaved with runs without them, on the Go greeter
    at 20,000 calls/s."""
    session.install(".[telemetry,proto]")
    greeter = Path(session.create_tmp()).resolve() / "greeter"
    with session.chdir("benchmarks/greeter_go"):
        session.run("go", "build", "-o", str(greeter), ".", external=True,
                    env={"GOTOOLCHAIN": "local"})  # fmt: skip
    session.run("python", "benchmarks/telemetry_overhead.py", "--greeter", str(greeter),
                *session.posargs)  # fmt: skip


# grpc-go's examples (route_guide), pinned; built in the sessions that use them.
GRPC_GO_EXAMPLES = "google.golang.org/grpc/examples@v0.0.0-20260825154716-030ee8becb20"


def _build_go_servers(session: nox.Session) -> dict[str, str]:
    """The Go greeter and grpc-go's route_guide server, built in the session (never at
    install); returns the environment that names them and route_guide's proto."""
    tmp = Path(session.create_tmp()).resolve()
    env = {"GOTOOLCHAIN": "local", "GOFLAGS": "-mod=mod"}
    greeter = tmp / "greeter"
    with session.chdir("benchmarks/greeter_go"):
        session.run("go", "build", "-o", str(greeter), ".", external=True, env=env)
    module = tmp / "route_guide_build"
    module.mkdir(exist_ok=True)
    route_guide = tmp / "route_guide_server"
    with session.chdir(module):
        if not (module / "go.mod").exists():
            session.run("go", "mod", "init", "grpcbench/route_guide_build", external=True, env=env)
        session.run("go", "get", GRPC_GO_EXAMPLES, external=True, env=env)
        server = "google.golang.org/grpc/examples/route_guide/server"
        session.run("go", "build", "-o", str(route_guide), server, external=True, env=env)
        examples = session.run(
            "go", "list", "-m", "-f", "{{.Dir}}", GRPC_GO_EXAMPLES.split("@")[0],
            external=True, env=env, silent=True,
        )  # fmt: skip
    assert isinstance(examples, str)
    proto = Path(examples.strip()) / "route_guide/routeguide/route_guide.proto"
    return {
        "GRPCBENCH_GO_GREETER": str(greeter),
        "GRPCBENCH_ROUTE_GUIDE": str(route_guide),
        "GRPCBENCH_ROUTE_GUIDE_PROTO": str(proto),
    }


@nox.session
def startup(session: nox.Session) -> None:
    """A 200-call ghz line's wall time, ghz vs grpcbench side by side, against the Go
    greeter (built here), with the interpreter's and imports' share."""
    session.install(".[test]")
    env = _build_go_servers(session)
    session.run("python", "benchmarks/startup.py", *session.posargs, env=env)


@nox.session
def run_overhead(session: nox.Session) -> None:
    """Where a default `grpcbench run`'s time goes: measured phases, warm-ups, server
    starts and the run's own start and end (benchmarks/run_overhead.py)."""
    session.install(".[test]")
    session.run("python", "benchmarks/run_overhead.py", *session.posargs)


@nox.session
def warmup(session: nox.Session) -> None:
    """What a level's warm-up buys: a fresh server's first calls after 0, 20 and 500
    warm-up calls; a later level on the same server (each user's first 2 calls) beside
    that level alone on a fresh one (benchmarks/warmup_effect.py)."""
    session.install(".[test]")
    session.run("python", "benchmarks/warmup_effect.py", *session.posargs)


@nox.session
def history(session: nox.Session) -> None:
    """Change points in real runs: an injected change found at its run, none where there
    is none, over several rounds (benchmarks/change_detection.py); then the store at
    1,000 runs (benchmarks/history_scale.py)."""
    session.install(".[test]")
    session.run("python", "benchmarks/change_detection.py", *session.posargs)
    # `history` and the dashboard's project page on 1,000 stored runs (goal: 1 s each).
    session.run("python", "benchmarks/history_scale.py")


@nox.session
def differential(session: nox.Session) -> None:
    """The wire client stack against grpc.aio on Go servers too (greeter, route_guide + TLS)."""
    session.install(".[test]")
    env = _build_go_servers(session)
    session.run("pytest", "tests/test_wire_differential.py", "-p", "no:cacheprovider",
                *session.posargs, env=env)  # fmt: skip


@nox.session
def hostile(session: nox.Session) -> None:
    """The generated hostile-input suite at depth: 200 values per option of `run` and
    800 mutated results files (CI runs 12 and 48 of them, in the tests)."""
    session.install(".[test]")
    session.env["GRPCBENCH_HOSTILE_EXAMPLES"] = "200"
    session.run("pytest", "tests/test_hostile_generated.py", "-n", "auto", *session.posargs)


@nox.session
def faults(session: nox.Session) -> None:
    """The fault matrix five times over, each time at another moment of each phase."""
    session.install(".[test]")
    session.env["GRPCBENCH_FAULT_ROUNDS"] = "5"
    session.run("pytest", "tests/test_fault_matrix.py", "-n", "2", *session.posargs)


@nox.session
def capacity_under_load(session: nox.Session) -> None:
    """The capacity known answers beside four CPU hogs on the machine's cores (issue 41's
    goal: loose and tight SLOs found and confirmed, tight <= loose, on a busy host)."""
    session.install(".[test]")
    session.env["GRPCBENCH_TEST_HOGS"] = "4"
    session.run(
        "pytest", "tests/test_capacity.py", "-m", "integration", "-k",
        "known_ceiling or tight_slo", "-p", "no:cacheprovider", "-rs", *session.posargs,
    )  # fmt: skip


@nox.session
def large_messages(session: nox.Session) -> None:
    """Client CPU per MB of 1-16 MB replies, unary and streamed, wire vs grpc.aio, on
    grpc-go's interop TestService (benchmarks/interop_go, built here)."""
    session.install(".")
    binary = Path(session.create_tmp()).resolve() / "interop_go"
    with session.chdir("benchmarks/interop_go"):
        session.run("go", "build", "-o", str(binary), ".", external=True,
                    env={"GOTOOLCHAIN": "local", "GOFLAGS": "-mod=mod"})  # fmt: skip
    session.run("python", "benchmarks/large_messages.py", "--interop", str(binary),
                *session.posargs)  # fmt: skip


@nox.session
def parity(session: nox.Session) -> None:
    """wire = grpc on grpc-go's interop TestService (benchmarks/interop_go, built here:
    grpc-go's own service, with the server options its stock command line lacks)."""
    session.install(".[test]")
    binary = Path(session.create_tmp()).resolve() / "interop_go"
    with session.chdir("benchmarks/interop_go"):
        session.run("go", "build", "-o", str(binary), ".", external=True,
                    env={"GOTOOLCHAIN": "local", "GOFLAGS": "-mod=mod"})  # fmt: skip
    session.run("pytest", "tests/test_interop_parity.py", "-p", "no:cacheprovider",
                *session.posargs, env={"GRPCBENCH_INTEROP_GO": str(binary)})  # fmt: skip


@nox.session
def streaming(session: nox.Session) -> None:
    """Streaming RPCs on grpc-go's route_guide: built-in (wire, grpcio) vs ghz, side by side."""
    session.install(".[proto]")
    env = _build_go_servers(session)
    session.run("python", "benchmarks/streaming.py", "--route-guide", env["GRPCBENCH_ROUTE_GUIDE"],
                "--proto", env["GRPCBENCH_ROUTE_GUIDE_PROTO"], *session.posargs)  # fmt: skip


@nox.session
def traffic(session: nox.Session) -> None:
    """Mixes and chains on grpc-go's route_guide: their client cost against single methods."""
    session.install(".[proto]")
    env = _build_go_servers(session)
    session.run("python", "benchmarks/traffic.py", "--route-guide", env["GRPCBENCH_ROUTE_GUIDE"],
                "--proto", env["GRPCBENCH_ROUTE_GUIDE_PROTO"], *session.posargs)  # fmt: skip


@nox.session
def cluster(session: nox.Session) -> None:
    """The Dask engine's cost per call (1 and 2 LocalCluster workers vs 2 generator
    processes), then its fault suite against a CLI scheduler and 8 workers."""
    session.install(".[cluster]")
    session.run("python", "benchmarks/cluster.py", *session.posargs)
    session.run("python", "benchmarks/cluster_faults.py", "--workers", "8")


@nox.session
def seed002(session: nox.Session) -> None:
    """Seed 002's Unavailable errors: today's grpclib and h2, today's grpclib on h2 3.2, 2020's."""
    session.install(".[io]")
    ghz_2020 = Path(session.create_tmp()).resolve() / "ghz"
    # ghz of the seed's era (grpc-go 1.24), built here, never at install.
    session.run("go", "install", "github.com/bojand/ghz/cmd/ghz@v0.52.0", external=True,
                env={"GOBIN": str(ghz_2020.parent), "GOTOOLCHAIN": "local"})  # fmt: skip
    clients = ["--ghz", f"ghz-v0.52.0={ghz_2020}"]
    ghz_today = shutil.which("ghz")
    if ghz_today:
        clients += ["--ghz", f"ghz={ghz_today}"]
    # grpcbench asks for grpclib>=0.4.7: pip warns about the older stacks, which is expected.
    stacks = (
        ("grpclib>=0.4.7", "h2>=4"),  # today's
        ("grpclib>=0.4.7", "h2==3.2.0"),  # today's grpclib, the seed's h2
        ("grpclib==0.3.2", "h2==3.2.0"),  # the seed's
    )
    saved = "docs/results/seed-002-unavailable.json"
    for index, stack in enumerate(stacks):
        session.install(*stack)
        # Pure-Python protobuf for every stack, so only the libraries differ: grpclib 0.3's
        # bundled health stubs do not load on today's upb protobuf.
        session.run("python", "benchmarks/seed002_unavailable.py", *clients, "--save", saved,
                    *(["--append"] if index else []), *session.posargs,
                    env={"PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION": "python"})  # fmt: skip
    session.install(".")  # today's stack again, to render the page's table
    session.run("python", "scripts/render_results.py")


@nox.session
def crosscheck(session: nox.Session) -> None:
    """Verdicts checked by independent clients (built-in on both stacks, a bare grpc.aio
    loop, ghz and h2load when installed) on the same servers; --save for the docs."""
    session.install(".")
    session.run("python", "benchmarks/crosscheck.py", *session.posargs)


@nox.session
@nox.parametrize("server", SERVER_KINDS)
def smoke(session: nox.Session, server: str) -> None:
    """A short real `grpcbench run` of one server kind from the installed wheel."""
    session.install(".")
    tmp = session.create_tmp()
    session.chdir(tmp)
    session.run(
        "grpcbench", "run", "--servers", server, "--concurrency", "2,10", "--requests", "300",
        "--warmup", "30", "--output", "smoke.json", "--markdown", "smoke.md", *session.posargs,
    )  # fmt: skip


@nox.session
def proto(session: nox.Session) -> None:
    """Regenerate the grpcio and grpclib stubs from protos/ (never edit them by hand)."""
    session.install("grpcio-tools==1.85.1", "grpclib")
    session.run("python", "scripts/generate_protos.py")


@nox.session
def figures(session: nox.Session) -> None:
    """The seeds' figures in the docs measured again (benchmarks/seed_figures.py) and the
    pages' tables rewritten from them (scripts/render_results.py); commit the result."""
    session.install(".[charts,database,profile]")  # seed 000: PostgreSQL, memray
    greeter = Path(session.create_tmp()).resolve() / "greeter"  # built here, never at install
    with session.chdir("benchmarks/greeter_go"):
        session.run("go", "build", "-o", str(greeter), ".", external=True)
    session.run("python", "benchmarks/seed_figures.py", "--save", "--greeter", str(greeter),
                *session.posargs)  # fmt: skip
    session.run("python", "scripts/render_results.py")


@nox.session
def profile_overhead(session: nox.Session) -> None:
    """What --profile costs the server: the same level with and without py-spy,
    interleaved rounds, medians and the ratio (benchmarks/profile_overhead.py)."""
    session.install(".[profile]")
    session.run("python", "benchmarks/profile_overhead.py", *session.posargs)
