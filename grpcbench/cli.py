"""The ``grpcbench`` command line: options in, a frozen options object to the runner.

Every expected failure is a ``UsageError`` and ends as one line on stderr with
a non-zero exit code; Ctrl-C stops all children, keeps the partial results and
exits with 130.
"""

from __future__ import annotations

import asyncio
import json
import signal
import sys
import tempfile
from contextlib import ExitStack
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.markup import escape

from grpcbench.errors import UsageError
from grpcbench.options import RunOptions
from grpcbench.servers.kinds import DEFAULT_SERVERS, KINDS

app = typer.Typer(
    add_completion=False,
    no_args_is_help=False,
    pretty_exceptions_enable=False,
    help="Benchmark Python gRPC servers (grpcio, grpclib, grpc.aio) side by side.",
)

SPEC_HELP = (
    "Server kinds to compare, as specs KIND[+uvloop][:key=value,...] - e.g. grpcio:workers=10,"
    " grpclib+uvloop, grpcio-aio. Repeat the option or separate specs with spaces or ';'."
    f" Default: the scenario's list ({' '.join(DEFAULT_SERVERS)})."
)

# Piped output (files, CI logs) gets a wide console so tables are not squeezed.
stdout = Console() if sys.stdout.isatty() else Console(width=240)
stderr = Console(stderr=True, soft_wrap=True)


def fail(error: UsageError) -> None:
    message = str(error)
    stderr.print(f"[bold red]grpcbench: error:[/] {escape(message)}", highlight=False)
    raise typer.Exit(error.exit_code)


@app.command()
def run(
    scenario: Annotated[str, typer.Option(help="Scenario name or path to a .toml file.")] = "hello",
    servers: Annotated[list[str] | None, typer.Option("--servers", "-s", help=SPEC_HELP)] = None,
    concurrency: Annotated[
        str | None,
        typer.Option("--concurrency", "-c", help="Comma-separated levels, e.g. 2,10,25,50."),
    ] = None,
    requests: Annotated[
        int | None, typer.Option("--requests", "-n", help="Measured calls per level and server.")
    ] = None,
    duration: Annotated[
        str | None,
        typer.Option(help="Measure each level for a time (10s, 500ms) instead of --requests."),
    ] = None,
    warmup: Annotated[
        str | None,
        typer.Option(help="Discarded warm-up per level: a call count (200) or a time (2s)."),
    ] = None,
    timeout: Annotated[str | None, typer.Option(help="Per-call deadline, e.g. 20s.")] = None,
    load: Annotated[
        str,
        typer.Option(
            help="Load driver(s), comma-separated: builtin, ghz (the Go tool), or fake (synthetic,"
            " for tests). builtin,ghz runs both on the same servers and levels, side by side."
        ),
    ] = "builtin",
    ghz: Annotated[
        str | None, typer.Option("--ghz", help="Path to the ghz binary (default: from PATH).")
    ] = None,
    connections: Annotated[
        str,
        typer.Option(
            help="Client connections: auto (one per 50 concurrent calls), shared, N or pool:N"
            " (round-robin per call), pool:N:least-busy, or per-request (a new connection per"
            " call; its set-up time is shown apart)."
        ),
    ] = "auto",
    channels: Annotated[
        str | None,
        typer.Option(help="Sweep the number of client connections, e.g. 1,10,15,20 (seed 003)."),
    ] = None,
    rate: Annotated[
        str | None,
        typer.Option(
            help="Open loop: calls/s on a timetable instead of --concurrency; a list sweeps"
            " (500,1000,2000). Latency counts from each call's intended send time."
        ),
    ] = None,
    arrivals: Annotated[
        str, typer.Option(help="Open-loop arrivals: uniform or poisson.")
    ] = "uniform",
    repeat: Annotated[
        int,
        typer.Option(
            help="Run every level N times, each in fresh server processes; tables show"
            " mean ± standard deviation and flag spreads over 10%."
        ),
    ] = 1,
    variants: Annotated[
        str | None,
        typer.Option(help="Run only these of the scenario's workload variants (comma-separated)."),
    ] = None,
    server_param: Annotated[
        list[str] | None,
        typer.Option(
            help="Override a server param of the scenario, KEY=VALUE (repeatable), e.g."
            " users=1000000."
        ),
    ] = None,
    workload_param: Annotated[
        list[str] | None,
        typer.Option(help="Override a workload param of the scenario, KEY=VALUE, e.g. keyword=e."),
    ] = None,
    s3_endpoint: Annotated[
        str | None,
        typer.Option(help="Use this S3 (or MinIO) instead of the embedded moto server."),
    ] = None,
    s3_bucket: Annotated[str | None, typer.Option(help="Bucket for --s3-endpoint.")] = None,
    mongo_uri: Annotated[
        str | None,
        typer.Option(help="Use this MongoDB instead of the embedded mongo-java-server."),
    ] = None,
    mongo_driver: Annotated[
        str | None,
        typer.Option(help="Async servers' MongoDB driver: pymongo (AsyncMongoClient) or motor."),
    ] = None,
    io_delay_ms: Annotated[
        int | None,
        typer.Option(help="Simulated upstream round trip before each S3 call, in ms."),
    ] = None,
    max_in_flight: Annotated[
        int, typer.Option(help="Open loop: most calls in flight at once.")
    ] = 1000,
    client_processes: Annotated[
        str,
        typer.Option(
            help="Built-in generator processes per level, results merged; auto = one per"
            " client CPU."
        ),
    ] = "auto",
    target: Annotated[
        str | None, typer.Option(help="Benchmark an already running server at HOST:PORT.")
    ] = None,
    target_pid: Annotated[
        int | None,
        typer.Option(help="With --target: pid of that server, to measure its CPU and memory."),
    ] = None,
    port: Annotated[
        int, typer.Option(help="Port for the servers grpcbench starts (0 = any free port).")
    ] = 0,
    output: Annotated[
        Path | None, typer.Option(help="Write versioned JSON results here (after every level).")
    ] = None,
    markdown: Annotated[
        Path | None, typer.Option(help="Write the tables as markdown here.")
    ] = None,
    csv: Annotated[
        Path | None, typer.Option(help="Write one CSV row per level and server here.")
    ] = None,
    report_html: Annotated[
        Path | None,
        typer.Option("--report", help="Write a self-contained HTML report (tables + charts) here."),
    ] = None,
    pin: Annotated[
        bool,
        typer.Option(
            help="Pin the server and the generator to different CPUs (default when >1 CPU)."
        ),
    ] = True,
    server_cpus: Annotated[
        str | None, typer.Option(help="CPUs for the server, e.g. 0 or 0-1.")
    ] = None,
    client_cpus: Annotated[
        str | None, typer.Option(help="CPUs for the load generator, e.g. 1.")
    ] = None,
    max_level: Annotated[
        str | None, typer.Option(help="Hard time limit of one level's measurement (default 300s).")
    ] = None,
) -> None:
    """Run a scenario on every server kind at every concurrency level and print the tables."""
    from grpcbench.options import build_run_options

    # The backing-service options are server params of the I/O scenarios.
    named = {
        "s3_endpoint": s3_endpoint, "s3_bucket": s3_bucket, "mongo_uri": mongo_uri,
        "mongo_driver": mongo_driver, "io_delay_ms": io_delay_ms,
    }  # fmt: skip
    server_param = [
        *(server_param or []),
        *(f'{k}="{v}"' for k, v in named.items() if v is not None),
    ]
    if mongo_driver not in (None, "pymongo", "motor"):
        fail(UsageError(f"bad --mongo-driver {mongo_driver!r} (pymongo or motor)"))
    if io_delay_ms is not None and io_delay_ms < 0:
        fail(UsageError(f"bad --io-delay-ms {io_delay_ms}: must be zero or more"))
    try:
        options = build_run_options(
            scenario=scenario, servers=servers, concurrency=concurrency, requests=requests,
            duration=duration, warmup=warmup, timeout=timeout, load=load, connections=connections,
            channels=channels, rate=rate, arrivals=arrivals, max_in_flight=max_in_flight,
            repeat=repeat, variants=variants, server_params=server_param,
            workload_params=workload_param,
            client_processes=client_processes, ghz=ghz, target=target, target_pid=target_pid,
            port=port, output=output, markdown=markdown, csv=csv,
            pin=pin, server_cpus=server_cpus, client_cpus=client_cpus, max_level=max_level,
        )  # fmt: skip
    except UsageError as error:
        fail(error)
    if report_html:
        from grpcbench.report.charts import require_matplotlib

        try:
            require_matplotlib()  # fail now, not after the run
        except UsageError as error:
            fail(error)
    _run(options, report_html)


def _run(options: RunOptions, report_html: Path | None = None) -> None:
    from grpcbench.console_events import ConsoleEvents
    from grpcbench.report.console import print_tables
    from grpcbench.runner import Runner

    events = ConsoleEvents(stderr)
    try:
        runner = Runner(options, events)
    except UsageError as setup_error:
        fail(setup_error)
    placement = options.placement
    levels = ", ".join(plan.describe() for plan in options.level_plans())
    size = f"{options.requests} calls" if options.requests else f"{options.duration_s:g} s"
    stderr.print(
        f"scenario [bold]{escape(options.scenario.name)}[/]: {len(options.column_labels)}"
        f" server(s) x {levels}; {size} per level"
        + (f", {options.repeat} repeats" if options.repeat > 1 else "")
        + f"; server CPUs {list(placement.server_cpus) or 'any'},"
        f" generator CPUs {list(placement.client_cpus) or 'any'}",
        highlight=False,
    )
    error: UsageError | None = None
    interrupted = False
    try:
        with events:
            asyncio.run(runner.run())
    except KeyboardInterrupt:
        interrupted = True
    except UsageError as caught:
        error = caught
    print_tables(stdout, runner.record.levels)
    if report_html and runner.record.levels:
        from grpcbench.report.html import write_html

        write_html(runner.record, report_html)
        stderr.print(f"wrote {report_html}", highlight=False)
    if interrupted:
        stderr.print("[yellow]interrupted[/]: all child processes stopped; partial results kept.")
        raise typer.Exit(130)
    if error:
        fail(error)


@app.command()
def serve(
    spec: Annotated[
        str, typer.Argument(help="Server spec, e.g. grpcio:workers=10 or grpclib+uvloop.")
    ],
    scenario: Annotated[str, typer.Option(help="Scenario whose service to serve.")] = "hello",
    port: Annotated[int, typer.Option(help="Port on 127.0.0.1 (0 = any free port).")] = 0,
    cpus: Annotated[str | None, typer.Option(help="Pin the server to these CPUs.")] = None,
) -> None:
    """Run one server in the foreground (with health and reflection) until Ctrl-C."""
    from grpcbench.parsing import parse_cpu_set
    from grpcbench.scenario import load_scenario
    from grpcbench.servers.launcher import start_server
    from grpcbench.servers.spec import parse_server_spec
    from grpcbench.services.registry import load_service

    async def serve_forever() -> None:
        params = dict(chosen.server_params)
        service = load_service(chosen.service)
        if service.prepare:
            params = service.prepare(params, Path(workdir), stack)
        server = await start_server(
            parse_server_spec(spec), chosen.service, params,
            cpus=parse_cpu_set(cpus, "--cpus") if cpus else (), port=port,
        )  # fmt: skip
        try:
            stdout.print(
                f"{server.spec.label} serving {chosen.name} on {server.address} (pid {server.pid})"
            )
            stdout.print(f"try: grpcurl -plaintext {server.address} list")
            await server.child.process.wait()
            raise UsageError(f"server exited with code {server.child.process.returncode}")
        finally:
            await server.stop()

    try:
        chosen = load_scenario(scenario)
        with ExitStack() as stack:
            workdir = stack.enter_context(tempfile.TemporaryDirectory(prefix="grpcbench-"))
            asyncio.run(serve_forever())
    except KeyboardInterrupt:
        stderr.print("stopped")
    except UsageError as error:
        fail(error)


@app.command()
def show(
    results: Annotated[Path, typer.Argument(help="A results file written by `run --output`.")],
    markdown: Annotated[
        bool, typer.Option("--markdown", help="Print markdown instead of tables.")
    ] = False,
) -> None:
    """Re-render saved results as tables (or markdown) without running anything."""
    from grpcbench.report.console import print_tables
    from grpcbench.report.markdown import run_to_markdown
    from grpcbench.results import load_run

    try:
        record = load_run(results)
    except UsageError as error:
        fail(error)
    if markdown:
        stdout.out(run_to_markdown(record), highlight=False)
        return
    stderr.print(f"{results}: {record.status}, started {record.started_at}", highlight=False)
    print_tables(stdout, record.levels)
    for failure in record.level_errors:
        stderr.print(f"[yellow]not measured:[/] {escape(failure)}")


@app.command()
def compare(
    baseline: Annotated[Path, typer.Argument(help="Results file A (the baseline).")],
    contender: Annotated[Path, typer.Argument(help="Results file B, compared with A.")],
    fail_on: Annotated[
        str | None,
        typer.Option(
            help="Exit with 1 when B regressed beyond these changes, e.g. rps:-5%,p99:+10%."
        ),
    ] = None,
) -> None:
    """Compare two results files: ratio B / A of each figure, with its significance."""
    from grpcbench.compare import compare_runs, parse_fail_on, regressions
    from grpcbench.results import load_run

    try:
        thresholds = parse_fail_on(fail_on) if fail_on else []
        differences = compare_runs(load_run(baseline), load_run(contender))
    except UsageError as error:
        fail(error)
    for difference in differences:
        stdout.print(escape(difference.describe()), highlight=False, soft_wrap=True)
    failed = regressions(differences, thresholds)
    for line in failed:
        stderr.print(f"[red]regression:[/] {escape(line)}")
    if failed:
        raise typer.Exit(1)


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
    from grpcbench.report.charts import render_charts, write_images
    from grpcbench.report.html import write_html
    from grpcbench.results import load_run

    if not (html_path or png or svg):
        fail(UsageError("nothing to write: give --html FILE, --png DIR and/or --svg DIR"))
    try:
        record = load_run(results)
        charts = render_charts(record)
    except UsageError as error:
        fail(error)
    if html_path:
        write_html(record, html_path, charts)
        stderr.print(f"wrote {html_path}", highlight=False)
    for directory, fmt in ((png, "png"), (svg, "svg")):
        if directory:
            written = write_images(charts, directory, [fmt])
            stderr.print(
                f"wrote {len(written)} {fmt.upper()} charts to {directory}", highlight=False
            )


@app.command("servers")
def list_servers() -> None:
    """List the server kinds and their spec options."""
    for info in KINDS.values():
        options = ",".join(f"{k}={v}" for k, v in info.default_options)
        modifiers = "[+uvloop]" if info.supports_uvloop else ""
        syntax = f"{info.name}{modifiers}" + (f"[:{options}]" if options else "")
        stdout.print(f"[bold]{syntax}[/]  {info.description}", highlight=False)
    stdout.print(f"default set: {' '.join(DEFAULT_SERVERS)}", highlight=False)


@app.command("scenarios")
def list_scenarios(as_json: Annotated[bool, typer.Option("--json")] = False) -> None:
    """List the scenarios (bundled .toml files)."""
    from grpcbench.scenario import load_scenario, scenario_files

    found = {name: load_scenario(str(path)) for name, path in scenario_files().items()}
    if as_json:
        stdout.print_json(
            json.dumps(
                {n: {"description": s.description, "path": s.path} for n, s in found.items()}
            )
        )
        return
    for name, chosen in found.items():
        stdout.print(f"[bold]{name}[/]  {chosen.description}  ({chosen.path})", highlight=False)


def main() -> None:
    # A shell starts background jobs with SIGINT ignored; restore it so that
    # SIGINT always means "stop the children (and keep the partial results)".
    signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        app()
    except UsageError as error:  # raised outside a command's own handling
        stderr.print(f"grpcbench: error: {error}", highlight=False)
        sys.exit(error.exit_code)
