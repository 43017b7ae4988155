"""The ``grpcbench`` command line: options in, one call to ``commands`` out.

Each command function only turns its options into arguments and calls one
function of ``grpcbench.cli.commands``. Every expected failure is a ``OneLineError``
and ends as one line on stderr with its exit code (see README, "Errors and
lifecycle"); Ctrl-C stops all children, keeps the partial results and exits 130.
"""

from __future__ import annotations

import os
import sys
from dataclasses import replace
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from grpcbench.base import defaults, interrupts, panels
from grpcbench.base.child_setup import USER_PATH_ENV
from grpcbench.base.declarations import declared_options
from grpcbench.base.errors import UsageError
from grpcbench.base.secrets import redact
from grpcbench.cli import store_app
from grpcbench.cli.argv import (
    ghz_flags_of,
    grpcurl_flags_of,
    profile_scope_spelled,
)
from grpcbench.cli.calling import ClickException, stderr, stdout
from grpcbench.cli.calling import call_command as _call
from grpcbench.cli.command_summaries import APP_HELP, HELP_OPTIONS, SUMMARIES, VERSION_HELP
from grpcbench.cli.declared_options import arguments_options, settings_options
from grpcbench.cli.version_flag import version_spelled
from grpcbench.model.metadata import versions_line
from grpcbench.model.plan import LoadSettings
from grpcbench.rpc.settings import CallArgs
from grpcbench.run.arguments import RunArgs

app = typer.Typer(
    add_completion=True,
    no_args_is_help=False,
    context_settings={"help_option_names": HELP_OPTIONS},
    pretty_exceptions_enable=False,
    help=APP_HELP,
)

RUN_DEFAULTS = RunArgs()  # what `run` takes is declared on RunArgs (run.arguments)
# `run`'s options that `capacity` decides itself: it searches the rate, starts a
# fresh server per confirmation, and judges probes by its SLOs and error budget.
CAPACITY_DECIDES = ("rate", "server_per_level", "thresholds", "repeat", "max_error_rate")
# `run`'s options that `capacity` does not take.
NOT_IN_CAPACITY = CAPACITY_DECIDES


def _version(value: bool) -> None:
    if value:
        stdout.print(versions_line(), highlight=False)
        raise typer.Exit(0)


@app.callback()
def main_options(
    version: Annotated[
        bool,
        typer.Option(
            "--version",
            callback=_version,
            is_eager=True,
            help=VERSION_HELP,
        ),
    ] = False,
) -> None:
    """Benchmark Python gRPC servers (grpcio, grpclib, grpc.aio) side by side."""


ADDRESS = typer.Argument(
    help="HOST:PORT of a running server, as ghz takes it: the same as --target.",
    show_default=False,
    rich_help_panel=panels.TARGET,
)


@app.command()
@settings_options(LoadSettings)
@arguments_options(RunArgs)
def run(
    address: Annotated[str | None, ADDRESS] = None,
    args: RunArgs = RUN_DEFAULTS,
    settings: dict[str, str] | None = None,
) -> None:
    """Run a scenario on every server kind at every concurrency level and print the tables."""
    given = replace(args, address=address, settings=dict(settings or {}))
    from grpcbench.cli import commands

    _call(commands.run_benchmark, given)


@app.command()
@settings_options(LoadSettings)
@arguments_options(RunArgs, exclude=NOT_IN_CAPACITY)
def capacity(
    address: Annotated[str | None, ADDRESS] = None,
    args: RunArgs = RUN_DEFAULTS,
    *,
    slo: Annotated[
        list[str],
        typer.Option(
            help="Service-level objective, e.g. p99<=10ms (p50, p90, p95, p99, p99.9, avg,"
            " max; join several with commas; --threshold's grammar). Repeat for more SLOs:"
            " each gets its own search and table.",
            rich_help_panel=panels.CAPACITY,
        ),
    ],
    max_error_rate: Annotated[
        float,
        typer.Option(
            help="Error budget of a passing probe: a share of calls (0.001 = 0.1%).",
            rich_help_panel=panels.CAPACITY,
        ),
    ] = defaults.CAPACITY_MAX_ERROR_RATE,
    precision: Annotated[
        str,
        typer.Option(
            help="Stop when the highest pass and the lowest failure are this close (5%).",
            rich_help_panel=panels.CAPACITY,
        ),
    ] = defaults.CAPACITY_PRECISION,
    probe_duration: Annotated[
        str,
        typer.Option(
            help="Measured phase of each probe (after a warm-up of --probe-warmup).",
            rich_help_panel=panels.CAPACITY,
        ),
    ] = defaults.CAPACITY_PROBE_DURATION,
    probe_warmup: Annotated[
        str,
        typer.Option(help="Warm-up of each probe.", rich_help_panel=panels.CAPACITY),
    ] = defaults.CAPACITY_PROBE_WARMUP,
    max_probes: Annotated[
        int,
        typer.Option(
            help="Most search probes per server kind and SLO.", rich_help_panel=panels.CAPACITY
        ),
    ] = defaults.CAPACITY_MAX_PROBES,
    confirmations: Annotated[
        int,
        typer.Option(
            "--confirmations",
            "--repeat",
            help="Confirm each capacity this many times, each on a fresh server (--repeat:"
            " the same, as `run` spells repeating).",
            rich_help_panel=panels.CAPACITY,
        ),
    ] = defaults.CAPACITY_CONFIRMATIONS,
    settings: dict[str, str] | None = None,
) -> None:
    """Search the highest open-loop rate each server kind serves within an SLO.

    Takes `run`'s targets, servers, scenarios, --call and load options. Per server
    kind: a closed-loop probe estimates the ceiling, open-loop probes step up to the
    first failing rate and bisect, and the capacity found is confirmed on fresh servers."""
    given = replace(
        args, address=address, settings=dict(settings or {}), server_per_level=False, repeat=1
    )
    from grpcbench.cli import commands

    search = commands.CapacityArgs(
        slos=tuple(slo), max_error_rate=max_error_rate, precision=precision,
        probe_duration=probe_duration, probe_warmup=probe_warmup, max_probes=max_probes,
        confirmations=confirmations,
    )  # fmt: skip
    _call(commands.capacity, given, search)


@app.command()
def serve(
    spec: Annotated[
        str, typer.Argument(help="Server spec, e.g. grpcio:workers=10 or grpclib+uvloop.")
    ],
    scenario: Annotated[
        str, typer.Option(help="Scenario whose service to serve.")
    ] = defaults.SCENARIO,
    port: Annotated[int, typer.Option(help="Port on 127.0.0.1 (0 = any free port).")] = 0,
    cpus: Annotated[str | None, typer.Option(help="Pin the server to these CPUs.")] = None,
    service: Annotated[
        str | None,
        typer.Option(help="Serve this service instead: a registered name or module:ATTRIBUTE."),
    ] = None,
    server_param: Annotated[
        list[str] | None,
        typer.Option(help="A server param of the service, KEY=VALUE (repeatable)."),
    ] = None,
) -> None:
    """Run one server in the foreground (with health and reflection) until Ctrl-C."""
    args = RunArgs(
        scenario=scenario, servers=(spec,), service=service,
        server_params=tuple(server_param or ()),
    )  # fmt: skip
    from grpcbench.cli import commands

    _call(commands.serve, args, port, cpus)


@app.command()
def show(
    results: Annotated[Path, typer.Argument(help="A results file written by `run --output`.")],
    markdown: Annotated[
        bool, typer.Option("--markdown", help="Print markdown instead of tables.")
    ] = False,
) -> None:
    """Re-render saved results as tables (or markdown) without running anything."""
    from grpcbench.cli import saved_commands

    _call(saved_commands.show, results, markdown)


@app.command()
def compare(
    baseline: Annotated[Path, typer.Argument(help="Results file A (the baseline).")],
    contender: Annotated[Path, typer.Argument(help="Results file B, compared with A.")],
    fail_on: Annotated[
        str | None,
        typer.Option(
            help="Exit with 1 when B regressed beyond these changes and significantly, e.g."
            " rps:-5%,p99:+10%."
        ),
    ] = None,
    alpha: Annotated[
        float, typer.Option(help="Significance level of the Welch t-test (two-sided).")
    ] = 0.05,
    significance: Annotated[
        bool,
        typer.Option(
            "--significance/--no-significance",
            help="--no-significance: gate on the thresholds alone (single runs).",
        ),
    ] = True,
    output_format: Annotated[
        str, typer.Option("--format", help="text, markdown (for CI comments) or json.")
    ] = "text",
) -> None:
    """Compare two results files: ratio B / A of each figure, with its significance."""
    from grpcbench.cli import saved_commands

    args = saved_commands.CompareArgs(
        baseline, contender, fail_on, alpha, significance, output_format
    )  # fmt: skip
    _call(saved_commands.compare, args)


@app.command()
def report(
    results: Annotated[Path, typer.Argument(help="A results file written by `run --output`.")],
    html_path: Annotated[
        Path | None, typer.Option("--html", help="Write a self-contained HTML report here.")
    ] = None,
    png: Annotated[
        Path | None, typer.Option(help="Write every chart as PNG into this folder.")
    ] = None,
    svg: Annotated[
        Path | None, typer.Option(help="Write every chart as SVG into this folder.")
    ] = None,
) -> None:
    """Charts and an offline HTML report from saved results (needs the charts extra)."""
    from grpcbench.cli import saved_commands

    _call(saved_commands.report, results, html_path, png, svg)


app.command("store")(store_app.store)
app.command("history")(store_app.history)
app.command("web")(store_app.web)


@app.command("servers")
def list_servers() -> None:
    """List the server kinds and their spec options."""
    from grpcbench.cli import listing_commands

    _call(listing_commands.list_servers)


# `list` and `describe` take `run`'s schema options (where the descriptors come from).
SCHEMA_OPTIONS = ("proto", "import_paths", "protoset", "reflect_metadata", "cacert", "cert",
                  "key", "cname", "skip_tls")  # fmt: skip
NOT_SCHEMA = tuple(
    option.name for option in declared_options(CallArgs) if option.name not in SCHEMA_OPTIONS
)


CALL_DEFAULTS = CallArgs()
INSECURE = typer.Option(help="Plaintext (the default without TLS options).")


@app.command("list")
@arguments_options(CallArgs, exclude=NOT_SCHEMA)
def list_symbols(
    address: Annotated[str | None, typer.Argument(help="HOST:PORT (reflection).")] = None,
    service: Annotated[str | None, typer.Argument(help="List this service's methods.")] = None,
    args: CallArgs = CALL_DEFAULTS,
    *,
    insecure: Annotated[bool, INSECURE] = False,
) -> None:
    """List a server's services, or one service's methods (grpcurl's list)."""
    from grpcbench.cli import listing_commands

    _call(listing_commands.list_symbols, address, service, args, insecure)


@app.command()
@arguments_options(CallArgs, exclude=NOT_SCHEMA)
def describe(
    address: Annotated[str | None, typer.Argument(help="HOST:PORT (reflection).")] = None,
    symbol: Annotated[
        str | None, typer.Argument(help="A service, method, message or enum.")
    ] = None,
    args: CallArgs = CALL_DEFAULTS,
    *,
    insecure: Annotated[bool, INSECURE] = False,
) -> None:
    """Show a service, method, message or enum as .proto text (grpcurl's describe)."""
    from grpcbench.cli import listing_commands

    _call(listing_commands.describe_symbol, address, symbol, args, insecure)


@app.command("scenarios")
def list_scenarios(as_json: Annotated[bool, typer.Option("--json")] = False) -> None:
    """List the scenarios (bundled .toml files)."""
    from grpcbench.cli import listing_commands

    _call(listing_commands.list_scenarios, as_json)


def _whole_summaries() -> None:
    """Each command's summary in `grpcbench --help` and the CLI page, from
    ``command_summaries`` (which `--help` reads without building the command line):
    whole, where click cuts a summary at 45 characters, and as written, a [bracket]
    in it text, not rich's markup."""
    for command in app.registered_commands:
        if command.callback is not None:
            name = command.name or command.callback.__name__.replace("_", "-")
            command.short_help = escape(SUMMARIES[name])


_whole_summaries()


def main() -> None:
    # Too late for the C core's own import when grpc came in with this module
    # (cli.entry sets it first); here for a caller of this main (the tests' warm CLI).
    os.environ.setdefault("GRPC_VERBOSITY", "ERROR")
    # What a parent grpcbench tells its children, never what a caller set: a value left
    # in the environment (a script, a test process that ran grpcbench in-process) put
    # another directory's modules before this run's own (base.child_setup).
    os.environ.pop(USER_PATH_ENV, None)
    try:
        argv = grpcurl_flags_of(version_spelled(sys.argv))
        sys.argv[:] = profile_scope_spelled(ghz_flags_of(argv))
    except UsageError as error:
        stderr.print(f"[bold red]grpcbench: error:[/] {escape(str(error))}", highlight=False)
        sys.exit(error.exit_code)
    interrupts.install()
    try:
        code = app(standalone_mode=False)
    except ClickException as error:  # the parser's: a missing value, an unknown option
        stderr.print(
            f"[bold red]grpcbench: error:[/] {escape(redact(error.format_message()))}"  # type: ignore[attr-defined]
            " (see --help)",
            highlight=False,
        )
        sys.exit(error.exit_code)  # type: ignore[attr-defined]
    except (
        KeyboardInterrupt,
        typer.Abort,
    ):  # before a run started, or in a command that is not a run
        stderr.print("[yellow]interrupted[/]")
        sys.exit(interrupts.exit_code())
    sys.exit(code if isinstance(code, int) else 0)
