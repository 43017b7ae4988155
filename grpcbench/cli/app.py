"""The ``grpcbench`` command line: options in, one call to ``commands`` out.

Each command function only turns its options into arguments and calls one
function of ``grpcbench.cli.commands``. Every expected failure is a ``UsageError``
and ends as one line on stderr with its exit code (see README, "Errors and
lifecycle"); Ctrl-C stops all children, keeps the partial results and exits 130.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape

from grpcbench.base import defaults, interrupts
from grpcbench.base.errors import UsageError
from grpcbench.base.secrets import redact
from grpcbench.cli import commands
from grpcbench.cli.declared_options import borrow_parameters, settings_options
from grpcbench.model.plan import LoadSettings
from grpcbench.rpc.security import ChannelSecurity
from grpcbench.rpc.settings import CallArgs
from grpcbench.run import ghz_compat
from grpcbench.run.options import RunArgs

app = typer.Typer(
    add_completion=True,
    no_args_is_help=False,
    pretty_exceptions_enable=False,
    help="Benchmark Python gRPC servers (grpcio, grpclib, grpc.aio) side by side.",
)

SPEC_HELP = (
    "Server kinds to compare, as specs KIND[+uvloop][:key=value,...] - e.g. grpcio:workers=10,"
    " grpclib+uvloop, grpcio-aio. Repeat the option or separate specs with spaces or ';'."
    f" Default: the scenario's list ({' '.join(defaults.SERVERS)})."
)

# Help panels of `grpcbench run --help`.
PANEL_WHAT_TO_RUN = "What to run"
PANEL_LOAD_MODEL = "Load model"
PANEL_TARGET = "Target"
PANEL_OUTPUT = "Output"
PANEL_PLACEMENT = "Placement"
PANEL_BACKING_SERVICES = "Backing services"
PANEL_CALL = "Any method (ghz's options)"
PANEL_TLS = "TLS (any option switches it on)"
PANEL_GHZ = "ghz's own flags (see docs: your own service)"

# Piped output (files, CI logs) gets a wide console so tables are not squeezed.
stdout = Console() if sys.stdout.isatty() else Console(width=240)
stderr = Console(stderr=True, soft_wrap=True)


def _call(command: Callable[..., int], *args: object) -> None:
    """Run one command; a ``UsageError`` becomes one line and its exit code."""
    try:
        code = command(*args, commands.Consoles(stdout, stderr))
    except UsageError as error:
        message = escape(redact(str(error)))
        stderr.print(f"[bold red]grpcbench: error:[/] {message}", highlight=False)
        raise typer.Exit(error.exit_code) from None
    except KeyboardInterrupt:  # before a run started: nothing to stop or keep
        stderr.print("[yellow]interrupted[/]")
        raise typer.Exit(interrupts.exit_code()) from None
    raise typer.Exit(code)


def _version(value: bool) -> None:
    if value:
        stdout.print(commands.versions(), highlight=False)
        raise typer.Exit(0)


@app.callback()
def main_options(
    version: Annotated[
        bool,
        typer.Option(
            "--version",
            callback=_version,
            is_eager=True,
            help="Print the versions of grpcbench, Python, grpcio, grpclib, protobuf, uvloop.",
        ),
    ] = False,
) -> None:
    """Benchmark Python gRPC servers (grpcio, grpclib, grpc.aio) side by side."""


@app.command()
@settings_options(LoadSettings)
def run(
    address: Annotated[
        str | None,
        typer.Argument(
            help="HOST:PORT of a running server, as ghz takes it: the same as --target.",
            show_default=False,
            rich_help_panel=PANEL_TARGET,
        ),
    ] = None,
    scenario: Annotated[
        str,
        typer.Option(
            help="Scenario name or path to a .toml file.", rich_help_panel=PANEL_WHAT_TO_RUN
        ),
    ] = defaults.SCENARIO,
    servers: Annotated[
        list[str] | None,
        typer.Option("--servers", "-s", help=SPEC_HELP, rich_help_panel=PANEL_WHAT_TO_RUN),
    ] = None,
    concurrency: Annotated[
        str | None,
        typer.Option(
            "--concurrency",
            "-c",
            help="Comma-separated levels, e.g. 2,10,25,50. Default: the scenario's"
            f" ({','.join(map(str, defaults.CONCURRENCY))} unless it says otherwise).",
            rich_help_panel=PANEL_WHAT_TO_RUN,
        ),
    ] = None,
    load: Annotated[
        str,
        typer.Option(
            help="Load driver(s), comma-separated: builtin, ghz (the Go tool), or fake (synthetic,"
            " for tests). builtin,ghz runs both on the same servers and levels, side by side.",
            rich_help_panel=PANEL_LOAD_MODEL,
        ),
    ] = defaults.LOAD,
    ghz: Annotated[
        str | None,
        typer.Option(
            "--ghz",
            help="Path to the ghz binary (default: from PATH).",
            rich_help_panel=PANEL_LOAD_MODEL,
        ),
    ] = None,
    channels: Annotated[
        str | None,
        typer.Option(
            help="Sweep the number of client connections, e.g. 1,10,15,20 (seed 003).",
            rich_help_panel=PANEL_LOAD_MODEL,
        ),
    ] = None,
    rate: Annotated[
        str | None,
        typer.Option(
            help="Open loop: calls/s on a timetable instead of --concurrency; a list sweeps"
            " (500,1000,2000). Latency counts from each call's intended send time.",
            rich_help_panel=PANEL_LOAD_MODEL,
        ),
    ] = None,
    profile: Annotated[
        bool,
        typer.Option(
            "--profile",
            help="Sample every server grpcbench starts (or --target-pid) with py-spy during"
            " each level's measured phase: collapsed stacks per cell beside the results, the"
            " top functions after the tables (extra: grpcbench[profile]).",
            rich_help_panel=PANEL_OUTPUT,
        ),
    ] = False,
    profile_generator: Annotated[
        bool,
        typer.Option(
            "--profile-generator",
            help="--profile: the built-in generator's processes too, in their own cells"
            " (also spelled --profile generator).",
            rich_help_panel=PANEL_OUTPUT,
        ),
    ] = False,
    profile_rate: Annotated[
        int,
        typer.Option(help="--profile's samples per second.", rich_help_panel=PANEL_OUTPUT),
    ] = 100,
    profile_native: Annotated[
        bool,
        typer.Option(
            "--profile-native",
            help="--profile: C frames too (grpcio's core).",
            rich_help_panel=PANEL_OUTPUT,
        ),
    ] = False,
    profile_idle: Annotated[
        bool,
        typer.Option(
            "--profile-idle",
            help="--profile: idle threads' samples too.",
            rich_help_panel=PANEL_OUTPUT,
        ),
    ] = False,
    threshold: Annotated[
        list[str] | None,
        typer.Option(
            help="Pass/fail on every level, k6's way: p99<20ms, avg<=5ms, rps>=5000,"
            " errors<0.1% (repeatable). A breach is named under its table and in the"
            " summary, and the run exits 99 after saving everything.",
            rich_help_panel=PANEL_WHAT_TO_RUN,
        ),
    ] = None,
    repeat: Annotated[
        int,
        typer.Option(
            help="Run every level N times, each in fresh server processes; tables show"
            " mean ± standard deviation and flag spreads over 10%.",
            rich_help_panel=PANEL_WHAT_TO_RUN,
        ),
    ] = defaults.REPEAT,
    variants: Annotated[
        str | None,
        typer.Option(
            help="Run only these of the scenario's workload variants (comma-separated).",
            rich_help_panel=PANEL_WHAT_TO_RUN,
        ),
    ] = None,
    server_param: Annotated[
        list[str] | None,
        typer.Option(
            help="Override a server param of the scenario, KEY=VALUE (repeatable), e.g."
            " users=1000000.",
            rich_help_panel=PANEL_WHAT_TO_RUN,
        ),
    ] = None,
    workload_param: Annotated[
        list[str] | None,
        typer.Option(
            help="Override a workload param of the scenario, KEY=VALUE, e.g. keyword=e.",
            rich_help_panel=PANEL_WHAT_TO_RUN,
        ),
    ] = None,
    s3_endpoint: Annotated[
        str | None,
        typer.Option(
            help="Use this S3 (or MinIO) instead of the embedded moto server.",
            rich_help_panel=PANEL_BACKING_SERVICES,
        ),
    ] = None,
    s3_bucket: Annotated[
        str | None,
        typer.Option(help="Bucket for --s3-endpoint.", rich_help_panel=PANEL_BACKING_SERVICES),
    ] = None,
    mongo_uri: Annotated[
        str | None,
        typer.Option(
            help="Use this MongoDB instead of the embedded mongo-java-server.",
            rich_help_panel=PANEL_BACKING_SERVICES,
        ),
    ] = None,
    mongo_driver: Annotated[
        str | None,
        typer.Option(
            help="Async servers' MongoDB driver: pymongo (AsyncMongoClient) or motor.",
            rich_help_panel=PANEL_BACKING_SERVICES,
        ),
    ] = None,
    io_delay_ms: Annotated[
        float | None,
        typer.Option(
            help="Simulated upstream round trip before each S3 call, in ms.",
            rich_help_panel=PANEL_BACKING_SERVICES,
        ),
    ] = None,
    database: Annotated[
        str | None,
        typer.Option(
            help="paginate-vs-stream's database: postgresql (embedded, the default with the"
            " database extra), sqlite, or your own postgresql://USER@HOST:PORT/DB or"
            " mysql://USER@HOST:PORT/DB (passwords from PGPASSWORD or the URL, never shown).",
            rich_help_panel=PANEL_BACKING_SERVICES,
        ),
    ] = None,
    client_processes: Annotated[
        str,
        typer.Option(
            help="Built-in generator processes per level, results merged; auto = one per"
            " client CPU.",
            rich_help_panel=PANEL_LOAD_MODEL,
        ),
    ] = defaults.CLIENT_PROCESSES,
    target: Annotated[
        str | None,
        typer.Option(
            help="Benchmark an already running server at HOST:PORT.", rich_help_panel=PANEL_TARGET
        ),
    ] = None,
    target_pid: Annotated[
        int | None,
        typer.Option(
            help="With --target: pid of that server, to measure its CPU and memory.",
            rich_help_panel=PANEL_TARGET,
        ),
    ] = None,
    port: Annotated[
        int,
        typer.Option(
            help="Port for the servers grpcbench starts (0 = any free port).",
            rich_help_panel=PANEL_TARGET,
        ),
    ] = defaults.PORT,
    output: Annotated[
        Path | None,
        typer.Option(
            "--output",
            "-o",
            help="Write versioned JSON results here (after every level); with -O, that format.",
            rich_help_panel=PANEL_OUTPUT,
        ),
    ] = None,
    markdown: Annotated[
        Path | None,
        typer.Option(
            help="Write the tables as markdown here (after every level).",
            rich_help_panel=PANEL_OUTPUT,
        ),
    ] = None,
    csv: Annotated[
        Path | None,
        typer.Option(
            help="Write one CSV row per level, server, driver and repeat here.",
            rich_help_panel=PANEL_OUTPUT,
        ),
    ] = None,
    report_html: Annotated[
        Path | None,
        typer.Option(
            "--report",
            help="Write a self-contained HTML report (tables + charts) here.",
            rich_help_panel=PANEL_OUTPUT,
        ),
    ] = None,
    export: Annotated[
        list[str] | None,
        typer.Option(
            help="Write FORMAT=PATH (repeatable) with any registered exporter: json, markdown,"
            " csv, html.",
            rich_help_panel=PANEL_OUTPUT,
        ),
    ] = None,
    pin: Annotated[
        bool,
        typer.Option(
            help="Pin the server and the generator to different CPUs (default when >1 CPU).",
            rich_help_panel=PANEL_PLACEMENT,
        ),
    ] = True,
    server_cpus: Annotated[
        str | None,
        typer.Option(help="CPUs for the server, e.g. 0 or 0-1.", rich_help_panel=PANEL_PLACEMENT),
    ] = None,
    client_cpus: Annotated[
        str | None,
        typer.Option(help=LoadSettings.help("client_cpus"), rich_help_panel=PANEL_PLACEMENT),
    ] = None,
    backing_cpus: Annotated[
        str | None,
        typer.Option(
            help="CPUs for the embedded S3, MongoDB and PostgreSQL (default: the generator's).",
            rich_help_panel=PANEL_PLACEMENT,
        ),
    ] = None,
    server_per_level: Annotated[
        bool | None,
        typer.Option(
            "--server-per-level/--server-per-column",
            help="A fresh server process for every level, so each level's memory is its own"
            " (default: the scenario's choice; watch does).",
            rich_help_panel=PANEL_TARGET,
        ),
    ] = None,
    start_timeout: Annotated[
        str | None,
        typer.Option(
            help="How long a server may take to start and answer SERVING"
            f" (default {defaults.START_TIMEOUT}).",
            rich_help_panel=PANEL_TARGET,
        ),
    ] = None,
    service: Annotated[
        str | None,
        typer.Option(
            help="The service to serve and load: a registered name or your own"
            " module:ATTRIBUTE (a ServiceDefinition; found in the current directory too).",
            rich_help_panel=PANEL_WHAT_TO_RUN,
        ),
    ] = None,
    max_error_rate: Annotated[
        float | None,
        typer.Option(
            help="A level whose share of failed calls exceeds this (0.01 = 1%) fails the run"
            " (exit 4). Default: only a level whose every call failed.",
            rich_help_panel=PANEL_WHAT_TO_RUN,
        ),
    ] = None,
    call: Annotated[
        str | None,
        typer.Option(
            help="Call this method instead of the service's workload: package.Service/Method"
            " (or package.Service.Method). Schema from --proto, --protoset or reflection.",
            rich_help_panel=PANEL_CALL,
        ),
    ] = None,
    proto: Annotated[
        str | None,
        typer.Option(
            help="The .proto of --call (needs grpcbench[proto]).", rich_help_panel=PANEL_CALL
        ),
    ] = None,
    import_paths: Annotated[
        str | None,
        typer.Option(
            "--import-paths",
            "-i",
            help="Comma-separated import paths of --proto.",
            rich_help_panel=PANEL_CALL,
        ),
    ] = None,
    protoset: Annotated[
        str | None,
        typer.Option(
            help="A compiled FileDescriptorSet holding --call's method.", rich_help_panel=PANEL_CALL
        ),
    ] = None,
    data: Annotated[
        str | None,
        typer.Option(
            "--data",
            "-d",
            help="The request as JSON; a list is cycled per call, or is a client stream's"
            " messages. ghz's template actions work: {{.RequestNumber}}, {{newUUID}}, ...",
            rich_help_panel=PANEL_CALL,
        ),
    ] = None,
    data_file: Annotated[
        str | None,
        typer.Option(
            "--data-file", "-D", help="The request JSON from a file.", rich_help_panel=PANEL_CALL
        ),
    ] = None,
    metadata: Annotated[
        list[str] | None,
        typer.Option(
            "--metadata",
            "-m",
            help="Request metadata, KEY=VALUE (repeatable) or a JSON object as in ghz. Values"
            " are never printed or saved.",
            rich_help_panel=PANEL_CALL,
        ),
    ] = None,
    metadata_file: Annotated[
        str | None,
        typer.Option(
            "--metadata-file",
            "-M",
            help="Request metadata as a JSON object in a file.",
            rich_help_panel=PANEL_CALL,
        ),
    ] = None,
    stream_messages: Annotated[
        int | None,
        typer.Option(
            help="Client and bidi streams: messages sent per call (default: the -d list's).",
            rich_help_panel=PANEL_CALL,
        ),
    ] = None,
    cacert: Annotated[
        str | None,
        typer.Option(
            help="Trusted root certificates (PEM) to check the target's.", rich_help_panel=PANEL_TLS
        ),
    ] = None,
    cert: Annotated[
        str | None,
        typer.Option(help="Client certificate (PEM), with --key.", rich_help_panel=PANEL_TLS),
    ] = None,
    key: Annotated[
        str | None,
        typer.Option(help="The client certificate's private key (PEM).", rich_help_panel=PANEL_TLS),
    ] = None,
    cname: Annotated[
        str | None,
        typer.Option(help="Server name to expect in its certificate.", rich_help_panel=PANEL_TLS),
    ] = None,
    cluster: Annotated[
        str | None,
        typer.Option(
            help="Run the built-in generator on Dask distributed workers: local:N (a"
            " LocalCluster of N processes here) or tcp://SCHEDULER:8786 (pip install"
            " 'grpcbench\\[cluster]').",
            rich_help_panel=PANEL_LOAD_MODEL,
        ),
    ] = None,
    cluster_workers: Annotated[
        int | None,
        typer.Option(
            help="With --cluster: use N of its workers (default all).",
            rich_help_panel=PANEL_LOAD_MODEL,
        ),
    ] = None,
    allow_plaintext_secrets: Annotated[
        bool,
        typer.Option(
            "--allow-plaintext-secrets",
            help="With --cluster tcp://: send metadata values and the client key to the"
            " workers anyway (unencrypted; tls:// schedulers need no permission).",
            rich_help_panel=PANEL_LOAD_MODEL,
        ),
    ] = False,
    bind: Annotated[
        str | None,
        typer.Option(
            help="Servers grpcbench starts listen on this address instead of 127.0.0.1, so remote"
            " cluster workers can reach them. Anyone who can reach it can call them.",
            rich_help_panel=PANEL_TARGET,
        ),
    ] = None,
    insecure: Annotated[
        bool,
        typer.Option(
            "--insecure",
            help="Plaintext, as ghz spells it (the default here; refused with TLS options).",
            rich_help_panel=PANEL_TLS,
        ),
    ] = False,
    skip_tls: Annotated[
        bool,
        typer.Option(
            "--skipTLS",
            help="TLS without checking the server's certificate.",
            rich_help_panel=PANEL_TLS,
        ),
    ] = False,
    expect_status: Annotated[
        str | None,
        typer.Option(
            help="Statuses that count as success, e.g. Unavailable or PermissionDenied,NotFound"
            " (names or numbers), to benchmark an error path: the pre-flight call accepts them"
            " and only other statuses fail a level. Default: OK.",
            rich_help_panel=PANEL_CALL,
        ),
    ] = None,
    preflight: Annotated[
        bool,
        typer.Option(
            "--preflight/--no-preflight",
            help="One real call before the first level, so a wrong method or credentials"
            " stop the run at once instead of measuring failures.",
            rich_help_panel=PANEL_CALL,
        ),
    ] = True,
    rps: Annotated[
        str | None,
        typer.Option("--rps", "-r", help="ghz's --rps: --rate.", rich_help_panel=PANEL_GHZ),
    ] = None,
    skip_first: Annotated[
        int | None,
        typer.Option("--skipFirst", help="ghz's: --warmup N.", rich_help_panel=PANEL_GHZ),
    ] = None,
    max_duration: Annotated[
        str | None,
        typer.Option("--max-duration", "-x", help="ghz's: --max-level.", rich_help_panel=PANEL_GHZ),
    ] = None,
    binary_file: Annotated[
        str | None,
        typer.Option(
            "--binary-file",
            "-B",
            help="The request as a serialized protobuf message in a file (ghz's -B).",
            rich_help_panel=PANEL_CALL,
        ),
    ] = None,
    binary: Annotated[
        bool,
        typer.Option(
            "--binary",
            "-b",
            help="The request as a serialized protobuf message on standard input (ghz's -b).",
            rich_help_panel=PANEL_CALL,
        ),
    ] = False,
    stream_interval: Annotated[
        str | None,
        typer.Option(
            help="Client and bidi streams: a pause between messages sent, e.g. 100ms.",
            rich_help_panel=PANEL_CALL,
        ),
    ] = None,
    stream_call_duration: Annotated[
        str | None,
        typer.Option(
            help="Client and bidi streams: stop sending (half-close) once a stream is this old.",
            rich_help_panel=PANEL_CALL,
        ),
    ] = None,
    reflect_metadata: Annotated[
        str | None,
        typer.Option(
            help="Metadata for the reflection requests, a JSON object (ghz's).",
            rich_help_panel=PANEL_CALL,
        ),
    ] = None,
    stream_call_count: Annotated[
        int | None,
        typer.Option(help="ghz's: --stream-messages.", rich_help_panel=PANEL_GHZ),
    ] = None,
    cpus: Annotated[
        int | None,
        typer.Option(help="ghz's: --client-processes N.", rich_help_panel=PANEL_GHZ),
    ] = None,
    config: Annotated[
        str | None,
        typer.Option(
            help="ghz's JSON or TOML file of options; the command line wins.",
            rich_help_panel=PANEL_GHZ,
        ),
    ] = None,
    output_format: Annotated[
        str | None,
        typer.Option(
            "--format",
            "-O",
            help="With -o: json (ghz's own JSON layout), csv, html or grpcbench (its JSON).",
            rich_help_panel=PANEL_GHZ,
        ),
    ] = None,
    name: Annotated[
        str | None,
        typer.Option(help="A name for the run, recorded and shown.", rich_help_panel=PANEL_GHZ),
    ] = None,
    tags: Annotated[
        str | None,
        typer.Option(
            help='Tags as a JSON object (\'{"env": "ci"}\'), recorded and shown.',
            rich_help_panel=PANEL_GHZ,
        ),
    ] = None,
    asynchronous: Annotated[
        bool,
        typer.Option("--async", help="ghz's: accepted (see docs).", rich_help_panel=PANEL_GHZ),
    ] = False,
    count_errors: Annotated[
        bool,
        typer.Option(
            "--count-errors",
            help="ghz's: always on here (failed calls count in every figure).",
            rich_help_panel=PANEL_GHZ,
        ),
    ] = False,
    disable_template_functions: Annotated[
        bool,
        typer.Option(
            "--disable-template-functions", help="ghz's: accepted.", rich_help_panel=PANEL_GHZ
        ),
    ] = False,
    disable_template_data: Annotated[
        bool,
        typer.Option("--disable-template-data", help="ghz's: accepted.", rich_help_panel=PANEL_GHZ),
    ] = False,
    dry_run: Annotated[
        bool,
        typer.Option(
            "--dry-run",
            help="Check every option, file and output path, print the plan, start nothing.",
            rich_help_panel=PANEL_WHAT_TO_RUN,
        ),
    ] = False,
    settings: dict[str, str] | None = None,
) -> None:
    """Run a scenario on every server kind at every concurrency level and print the tables."""
    _call(commands.run_benchmark, *_run_inputs(locals()))


def _run_inputs(given: dict[str, Any]) -> tuple[RunArgs, ghz_compat.GhzFlags]:
    """`run`'s options (or those `capacity` borrows) as RunArgs and ghz's own flags."""
    o = SimpleNamespace(**given)
    args = RunArgs(
        scenario=o.scenario, servers=tuple(o.servers or ()), concurrency=o.concurrency,
        thresholds=tuple(o.threshold or ()), profile=o.profile or o.profile_generator,
        profile_generator=o.profile_generator, profile_rate=o.profile_rate,
        profile_native=o.profile_native, profile_idle=o.profile_idle,
        settings=dict(o.settings or {}), load=o.load, ghz=o.ghz, channels=o.channels, rate=o.rate,
        client_processes=o.client_processes, repeat=o.repeat,
        variants=o.variants, server_params=tuple(o.server_param or ()),
        workload_params=tuple(o.workload_param or ()), s3_endpoint=o.s3_endpoint,
        s3_bucket=o.s3_bucket, mongo_uri=o.mongo_uri, mongo_driver=o.mongo_driver,
        io_delay_ms=o.io_delay_ms, database=o.database, target=o.target, address=o.address,
        insecure=o.insecure,
        target_pid=o.target_pid, port=o.port, output=o.output,
        markdown=o.markdown, csv=o.csv, report=o.report_html, exports=tuple(o.export or ()),
        pin=o.pin,
        server_cpus=o.server_cpus, client_cpus=o.client_cpus, backing_cpus=o.backing_cpus,
        start_timeout=o.start_timeout, server_per_level=o.server_per_level, service=o.service,
        max_error_rate=o.max_error_rate,
        cluster=o.cluster, cluster_workers=o.cluster_workers, bind=o.bind, dry_run=o.dry_run,
        allow_plaintext_secrets=o.allow_plaintext_secrets,
        expect_status=o.expect_status, preflight=o.preflight,
        call=CallArgs(
            call=o.call, proto=o.proto, import_paths=o.import_paths, protoset=o.protoset,
            data=o.data, data_file=o.data_file, metadata=tuple(o.metadata or ()),
            metadata_file=o.metadata_file,
            stream_messages=o.stream_messages,
            security=ChannelSecurity(o.cacert, o.cert, o.key, o.cname, o.skip_tls),
            binary_file=o.binary_file, binary_stdin=o.binary, stream_interval=o.stream_interval,
            stream_call_duration=o.stream_call_duration, reflect_metadata=o.reflect_metadata,
        ),
    )  # fmt: skip
    flags = ghz_compat.GhzFlags(
        rps=o.rps, skip_first=o.skip_first, max_duration=o.max_duration,
        stream_call_count=o.stream_call_count, cpus=o.cpus, output_format=o.output_format,
        name=o.name, tags=o.tags, method_on_command_line=o.call is not None,
        scenario_given=o.scenario != defaults.SCENARIO, config=o.config,
    )  # fmt: skip
    return args, flags


PANEL_CAPACITY = "Capacity search"


@app.command()
@settings_options(LoadSettings)
@borrow_parameters(run.__wrapped__, exclude=("rate", "server_per_level", "threshold"))  # type: ignore[attr-defined]
def capacity(
    slo: Annotated[
        list[str],
        typer.Option(
            help="Service-level objective, e.g. p99<=10ms (p50, p90, p99, p99.9, max; join"
            " several with commas). Repeat for more SLOs: each gets its own search and table.",
            rich_help_panel=PANEL_CAPACITY,
        ),
    ],
    max_error_rate: Annotated[
        float,
        typer.Option(
            help="Error budget of a passing probe: a share of calls (0.001 = 0.1%).",
            rich_help_panel=PANEL_CAPACITY,
        ),
    ] = defaults.CAPACITY_MAX_ERROR_RATE,
    precision: Annotated[
        str,
        typer.Option(
            help="Stop when the highest pass and the lowest failure are this close (5%).",
            rich_help_panel=PANEL_CAPACITY,
        ),
    ] = defaults.CAPACITY_PRECISION,
    probe_duration: Annotated[
        str,
        typer.Option(
            help="Measured phase of each probe (after a warm-up of --probe-warmup).",
            rich_help_panel=PANEL_CAPACITY,
        ),
    ] = defaults.CAPACITY_PROBE_DURATION,
    probe_warmup: Annotated[
        str,
        typer.Option(help="Warm-up of each probe.", rich_help_panel=PANEL_CAPACITY),
    ] = defaults.CAPACITY_PROBE_WARMUP,
    max_probes: Annotated[
        int,
        typer.Option(
            help="Most search probes per server kind and SLO.", rich_help_panel=PANEL_CAPACITY
        ),
    ] = defaults.CAPACITY_MAX_PROBES,
    repeat: Annotated[
        int,
        typer.Option(
            help="Confirm each capacity this many times, each on a fresh server.",
            rich_help_panel=PANEL_CAPACITY,
        ),
    ] = defaults.CAPACITY_CONFIRMATIONS,
    borrowed: dict[str, Any] | None = None,
    settings: dict[str, str] | None = None,
) -> None:
    """Search the highest open-loop rate each server kind serves within an SLO.

    Takes `run`'s targets, servers, scenarios, --call and load options. Per server
    kind: a closed-loop probe estimates the ceiling, open-loop probes step up to the
    first failing rate and bisect, and the capacity found is confirmed on fresh servers."""
    given = {**(borrowed or {}), "settings": settings, "rate": None, "repeat": 1, "threshold": None}
    given.update(server_per_level=False, max_error_rate=None)
    args, flags = _run_inputs(given)
    search = commands.CapacityArgs(
        slos=tuple(slo), max_error_rate=max_error_rate, precision=precision,
        probe_duration=probe_duration, probe_warmup=probe_warmup, max_probes=max_probes,
        confirmations=repeat,
    )  # fmt: skip
    _call(commands.capacity, args, flags, search)


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
    _call(commands.serve, args, port, cpus)


@app.command()
def show(
    results: Annotated[Path, typer.Argument(help="A results file written by `run --output`.")],
    markdown: Annotated[
        bool, typer.Option("--markdown", help="Print markdown instead of tables.")
    ] = False,
) -> None:
    """Re-render saved results as tables (or markdown) without running anything."""
    _call(commands.show, results, markdown)


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
    args = commands.CompareArgs(
        baseline, contender, fail_on, alpha, significance, output_format
    )  # fmt: skip
    _call(commands.compare, args)


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
    _call(commands.report, results, html_path, png, svg)


@app.command("servers")
def list_servers() -> None:
    """List the server kinds and their spec options."""
    _call(commands.list_servers)


@app.command("scenarios")
def list_scenarios(as_json: Annotated[bool, typer.Option("--json")] = False) -> None:
    """List the scenarios (bundled .toml files)."""
    _call(commands.list_scenarios, as_json)


def _refuse_ghz_flags(argv: list[str]) -> None:
    """A ghz flag `run` does not take is refused by name with its reason (ghz_compat)."""
    if len(argv) < 2 or argv[1] != "run":
        return
    refused = ghz_compat.refused_flags()
    for word in argv[2:]:
        if word == "--":
            return
        reason = refused.get(word.split("=", 1)[0])
        if reason:
            stderr.print(
                f"[bold red]grpcbench: error:[/] ghz's {escape(word.split('=', 1)[0])} is not"
                f" supported: {escape(reason)}",
                highlight=False,
            )
            sys.exit(2)


PROFILE_SCOPES = {"servers": ["--profile"], "generator": ["--profile", "--profile-generator"]}


def profile_scope_spelled(argv: list[str]) -> list[str]:
    """``--profile generator`` (the issue's and the docs' spelling) as the flags click
    parses: a bare ``--profile`` stays a flag, so ``--profile generator`` would
    otherwise read "generator" as the target's address."""
    spelled: list[str] = []
    words = iter(argv)
    for word in words:
        if word == "--profile":
            following = next(words, None)
            if following in PROFILE_SCOPES:
                spelled += PROFILE_SCOPES[following]
                continue
            spelled.append(word)
            if following is not None:
                spelled.append(following)
            continue
        spelled.append(word)
    return spelled


def main() -> None:
    # gRPC's C core logs every failed TLS handshake and retry at INFO on stderr;
    # grpcbench says what went wrong in one line instead (a user's setting wins).
    os.environ.setdefault("GRPC_VERBOSITY", "ERROR")
    _refuse_ghz_flags(sys.argv)
    sys.argv[:] = profile_scope_spelled(sys.argv)
    interrupts.install()
    try:
        app()
    except KeyboardInterrupt:  # before a run started, or in a command that is not a run
        stderr.print("[yellow]interrupted[/]")
        sys.exit(interrupts.exit_code())
