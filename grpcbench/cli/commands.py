"""What each ``grpcbench`` command does, once its options are parsed.

``cli`` only turns command-line options into arguments and calls one function
here. Expected failures raise a ``OneLineError`` (the CLI prints one line and
exits with its code); a function returns the exit code of a run that ended.
"""

from __future__ import annotations

import asyncio
import json
import sys
import tempfile
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.markup import escape

from grpcbench.base import interrupts
from grpcbench.base.errors import OneLineError, UsageError
from grpcbench.base.text import printable
from grpcbench.cli.consoles import (
    OUTPUT_ERRNOS,
    Consoles,
    internal_error,
)
from grpcbench.load.catalogue import driver_info
from grpcbench.run.arguments import RunArgs
from grpcbench.run.options import RunOptions, build_run_options
from grpcbench.run.recorded import recorded_options

if TYPE_CHECKING:
    from collections.abc import Callable

    from grpcbench.capacity.record import CapacitySettings
    from grpcbench.cli.console_events import ConsoleEvents
    from grpcbench.history.options import RunKeeper
    from grpcbench.model.results import RunRecord
    from grpcbench.run.runner import Runner


def run_benchmark(args: RunArgs, consoles: Consoles) -> int:
    """``grpcbench run``: ghz's own flags mapped (``ghz_compat``), every option built and
    checked, then run, print and write the results."""
    from grpcbench.cli.console_events import ConsoleEvents
    from grpcbench.model.thresholds import EXIT_BREACHED, breaches
    from grpcbench.report.console import print_summary, print_tables
    from grpcbench.run.ghz_compat import apply
    from grpcbench.run.runner import Runner

    options = build_run_options(apply(args))
    if args.dry_run:
        return print_plan(options, consoles)
    err = consoles.err
    if any(output.to_stdout for output in options.outputs):
        consoles = Consoles(out=err, err=err)  # standard output is the chosen format's
    columns = len(options.targets) * options.repeat
    levels_per_column = len(options.levels) * len(options.drivers)
    events = (
        debug_log(args.ghz_flags.debug, options, err, columns, levels_per_column)
        if args.ghz_flags.debug
        else ConsoleEvents(err, columns, levels_per_column)
    )
    if args.prometheus is not None or args.otlp is not None:
        events = live_telemetry(args, options, events, err)
    keeper = open_store(options)
    runner = Runner(options, events)
    levels = ", ".join(plan.describe() for plan in options.levels)
    recorded = recorded_options(options)
    named = recorded.describe_run()
    err.print(
        (f"run [bold]{escape(printable(named))}[/]: " if named else "")
        + f"scenario [bold]{escape(printable(options.scenario.name))}[/]: {len(options.targets)}"
        f" server(s) x {levels}; {options.settings.describe()} per level"
        + (f", {options.repeat} repeats" if options.repeat > 1 else "")
        + (
            f"; built-in client stack {options.settings.client_stack}"
            if any(driver_info(name).uses_client_stack for name in options.drivers)
            else ""
        )
        + f"; {options.placement.describe()}"
        + f"; parameters: {escape(printable(recorded.describe_params()))}",
        highlight=False,
    )

    def print_results() -> None:
        record = runner.record
        print_tables(consoles.out, record.levels, record.unavailable, options.thresholds)
        print_summary(consoles.out, record.levels)
        for breach in breaches(record.levels, options.thresholds):
            consoles.out.print(f"  [red]✗[/] {escape(breach.describe())}", highlight=False)

    code = run_to_end(runner, events, print_results, err, keeper)
    # The levels are final now; the tables above judged the same ones.
    if code == 0 and breaches(runner.record.levels, options.thresholds):
        err.print(f"[red]thresholds breached[/]: exit {EXIT_BREACHED}", highlight=False)
        return EXIT_BREACHED
    return code


def live_telemetry(args: RunArgs, options: RunOptions, events: Any, err: Console) -> Any:
    """``--prometheus``, ``--otlp``: the console's events, also fed to the run's sinks."""
    import uuid

    from grpcbench.base.parsing import parse_duration
    from grpcbench.cli.telemetry_events import TelemetryEvents, TelemetrySink
    from grpcbench.telemetry.prometheus import PrometheusEndpoint, RunCollector

    run_id = uuid.uuid4().hex[:12]
    method = measured_method(options)
    sinks: list[TelemetrySink] = []
    if args.prometheus is not None:
        collector = RunCollector(run_id, options.scenario.name, method)
        sinks.append(PrometheusEndpoint(args.prometheus, collector))
    if args.otlp is not None:
        from grpcbench.telemetry.otlp import OtlpPush, otlp_headers

        headers = otlp_headers(args.otlp_headers)
        sinks.append(OtlpPush(args.otlp, headers, options.settings.interval_s, run_id,
                              options.scenario.name, method))  # fmt: skip
    linger = parse_duration(args.prometheus_linger, "--prometheus-linger") if (
        args.prometheus_linger) else 0.0  # fmt: skip
    return TelemetryEvents(events, sinks, err, linger)


def measured_method(options: RunOptions) -> str:
    """What a run's levels call, for telemetry's ``method`` label: --call's method, "mix"
    (its methods are rows of the table), "flow" (--workload), or the scenario's
    service (its own workload)."""
    if options.flow is not None:
        return "flow"
    if options.call is not None:
        return "mix" if options.call.mix else options.call.method
    return options.scenario.service


def debug_log(
    path: str, options: RunOptions, err: Console, columns: int, levels_per_column: int
) -> ConsoleEvents:
    """ghz's --debug FILE: the console's events, also written to FILE line by line."""
    from grpcbench.base.secrets import redact_argv
    from grpcbench.cli.debug_log import DebugLog
    from grpcbench.run.arguments import secret_options

    argv = redact_argv(sys.argv, options.secret_params, secret_options())
    return DebugLog(Path(path), argv, err, columns, levels_per_column)


def open_store(options: RunOptions) -> RunKeeper | None:
    """--store: the store opened before anything is measured (None: no store)."""
    from grpcbench.history.options import RunKeeper

    return RunKeeper(options.store) if options.store else None


def run_to_end(
    runner: Runner, events: ConsoleEvents, print_results: Callable[[], None], err: Console,
    keeper: RunKeeper | None = None,
) -> int:  # fmt: skip
    """Run, then print, keep (--store) and write what was measured whatever happened:
    Ctrl-C (the exit code of the signal), a one-line error (raised after), a bug (its
    traceback to a file)."""
    error: OneLineError | None = None
    interrupted = False
    writing = ExitStack()
    held: interrupts.HeldSignal | None = None
    try:
        with events:
            interrupts.run_until_interrupted(runner.run())
            # Measured: from here a stop signal is held, the end of the live view and of
            # the --debug log included, until everything is written.
            held = writing.enter_context(interrupts.held_while_writing())
    except KeyboardInterrupt:
        interrupted = True
    except OneLineError as caught:
        error = caught
    except Exception as bug:  # keep the tables and the results; the traceback goes to a file
        error = internal_error(bug)
    stdout_failure: OSError | None = None
    with writing:
        if held is None:
            held = writing.enter_context(interrupts.held_while_writing())
        try:
            print_results()
        except OSError as failure:  # the tables could not be printed: the files still are
            if not isinstance(failure, BrokenPipeError) and failure.errno not in OUTPUT_ERRNOS:
                raise
            stdout_failure = failure
        unkept = keep_run(keeper, runner.record, err) if keeper and runner.record.levels else None
        if runner.record.levels:
            for path in runner.exports.at_end(runner.record):
                err.print(f"wrote {path}", highlight=False)
    unwritten = list(runner.exports.failed.values())
    if events.unwritten:  # the --debug log (a full disk)
        unwritten.append(events.unwritten)
    if unkept:
        unwritten.append(unkept)
    if held.signum is not None and not interrupted and error is None:
        said = "; ".join(escape(line) for line in unwritten) or "every output written"
        err.print(f"[yellow]interrupted[/] as the results were written: {said}.",
                  highlight=False)  # fmt: skip
        return interrupts.exit_code()
    if stdout_failure is not None and not interrupted and error is None:
        raise stdout_failure  # the CLI says it in one line (or, a closed pipe, quietly)
    if unwritten and not interrupted and error is None:
        error = UsageError("; ".join(unwritten))
    if interrupted:
        err.print("[yellow]interrupted[/]: all child processes stopped; partial results kept.")
        return interrupts.exit_code()
    if error:
        raise error
    return 0


def keep_run(keeper: RunKeeper, record: RunRecord, err: Console) -> str | None:
    """The run kept in the store, said; else why not (the files are written all the same)."""
    try:
        err.print(escape(keeper.keep(record)), highlight=False)
    except OneLineError as error:
        return f"the run was not stored: {error}"
    return None


@dataclass(frozen=True)
class CapacityArgs:
    """``capacity``'s own options as typed (the rest are `run`'s)."""

    slos: tuple[str, ...]
    max_error_rate: float
    precision: str
    probe_duration: str
    probe_warmup: str
    max_probes: int
    confirmations: int


def capacity_settings(args: CapacityArgs) -> CapacitySettings:
    """Checked, one clear line per bad option."""
    from grpcbench.base.parsing import parse_duration
    from grpcbench.capacity.record import CapacitySettings
    from grpcbench.capacity.slo import parse_slo

    if not args.slos:
        raise UsageError("capacity needs an SLO: --slo 'p99<=10ms'")
    if not 0 <= args.max_error_rate < 1:
        raise UsageError(
            f"bad --max-error-rate {args.max_error_rate:g}: a share of calls from 0 to below 1"
        )
    text = args.precision.strip()
    try:
        precision = float(text[:-1]) / 100 if text.endswith("%") else float(text)
    except ValueError:
        raise UsageError(f"bad --precision {args.precision!r}: e.g. 5% or 0.05") from None
    if not 0 < precision < 1:
        raise UsageError(f"bad --precision {args.precision!r}: between 0 and 100%")
    if args.max_probes < 2:
        raise UsageError(f"bad --max-probes {args.max_probes}: at least 2")
    if args.confirmations < 0:
        raise UsageError(f"bad --repeat {args.confirmations}: 0 or more confirmations")
    probe_s = parse_duration(args.probe_duration, "--probe-duration")
    if probe_s < 1.0:  # a probe's rate is judged on the second half of its window
        raise UsageError(f"bad --probe-duration {args.probe_duration!r}: at least 1s")
    slos = tuple(parse_slo(text) for text in args.slos)
    if len({slo.text for slo in slos}) != len(slos):
        raise UsageError("the same --slo given twice")
    return CapacitySettings(
        slos=slos, max_error_rate=args.max_error_rate, precision=precision,
        probe_duration_s=probe_s,
        probe_warmup_s=parse_duration(args.probe_warmup, "--probe-warmup"),
        max_probes=args.max_probes, confirmations=args.confirmations,
    )  # fmt: skip


def capacity(args: RunArgs, search: CapacityArgs, consoles: Consoles) -> int:
    """``grpcbench capacity``: `run`'s options built and checked as `run` checks them, the
    search on every server kind, its tables, and the results file."""
    from grpcbench.cli.console_events import ConsoleEvents
    from grpcbench.report.capacity import record_tables
    from grpcbench.report.console import print_comparison_tables
    from grpcbench.run.capacity_runner import CapacitySearch, check_capacity_options, probe_options
    from grpcbench.run.ghz_compat import apply

    settings = capacity_settings(search)
    options = build_run_options(apply(args))
    if args.dry_run:
        check_capacity_options(options)
        print_plan(probe_options(options, settings), consoles)
        consoles.out.print(
            f"  capacity {json.dumps(settings.to_json())}", highlight=False, markup=False
        )
        return 0
    err = consoles.err
    events: Any = (
        debug_log(args.ghz_flags.debug, options, err, len(options.targets), 0)
        if args.ghz_flags.debug
        else ConsoleEvents(err, len(options.targets), 0)
    )
    if args.prometheus is not None or args.otlp is not None:
        events = live_telemetry(args, options, events, err)
    keeper = open_store(options)
    runner = CapacitySearch(options, settings).runner(events)
    err.print(
        f"capacity: scenario [bold]{escape(options.scenario.name)}[/], {len(options.targets)}"
        f" server(s), SLO {escape(' | '.join(slo.text for slo in settings.slos))}, errors <="
        f" {settings.max_error_rate:.2%}; probes of {settings.probe_duration_s:g} s after"
        f" {settings.probe_warmup_s:g} s warm-up, precision {settings.precision:.0%},"
        f" {settings.confirmations} confirmation(s); {options.placement.describe()}",
        highlight=False,
    )
    return run_to_end(
        runner, events, lambda: print_comparison_tables(consoles.out, record_tables(runner.record)),
        err, keeper,
    )  # fmt: skip


def print_plan(options: RunOptions, consoles: Consoles) -> int:
    """``run --dry-run``: every option checked (and every output path), the plan
    printed, nothing started: a command line tried before a long run."""
    from grpcbench.report.exporters import Exports

    Exports(options.outputs).check()
    out = consoles.out
    named = recorded_options(options).describe_run()
    prefix = f"run {named}: " if named else ""
    out.print(f"{prefix}scenario {options.scenario.name} (service {options.scenario.service})",
              highlight=False, markup=False)  # fmt: skip
    for output in options.outputs:
        out.print(f"  writes {output.format} to {output.path}", highlight=False, markup=False)
    if options.store is not None:
        out.print(f"  keeps the run in {options.store.describe()}", highlight=False, markup=False)
    for target in options.targets:
        out.print(f"  target {target.label}", highlight=False, markup=False)
    for plan in options.levels:
        out.print(f"  level {plan.describe()}, connections {plan.connection or 'auto'}",
                  highlight=False, markup=False)  # fmt: skip
    out.print(
        f"  drivers {', '.join(options.drivers)}; {options.settings.describe()} per level,"
        f" {options.repeat} repeat(s); {options.placement.describe()}",
        highlight=False, markup=False,
    )  # fmt: skip
    if options.call is not None:
        out.print(f"  call {options.call.method}", highlight=False, markup=False)
    settings = ", ".join(f"{key}={value}" for key, value in options.settings.to_json().items())
    out.print(f"  settings {settings}", highlight=False, markup=False)
    return 0


def serve(args: RunArgs, port: int, cpus: str | None, consoles: Consoles) -> int:
    """``grpcbench serve``: one server in the foreground until Ctrl-C. ``args`` holds the
    spec (``servers``), scenario, ``--service`` and ``--server-param``, checked as `run`
    checks them."""
    from grpcbench.base.parsing import parse_cpu_set
    from grpcbench.run.scenario_choice import resolve_scenario
    from grpcbench.servers.launcher import start_server
    from grpcbench.servers.spec import check_served, parse_server_spec

    chosen, service = resolve_scenario(args)
    spec = parse_server_spec(args.servers[0])
    check_served(service, spec.kind)
    pinned = parse_cpu_set(cpus, "--cpus") if cpus else ()

    async def serve_forever(params: dict[str, object]) -> None:
        server = await start_server(spec, chosen.service, params, cpus=pinned, port=port)
        try:
            consoles.out.print(
                f"{server.spec.label} serving {service.name} (scenario {chosen.name}) on"
                f" {server.address} (pid {server.pid})"
            )
            consoles.out.print(f"try: grpcurl -plaintext {server.address} list")
            await server.child.process.wait()
            raise UsageError(f"server exited with code {server.child.process.returncode}")
        finally:
            await server.stop()

    try:
        with ExitStack() as stack:
            workdir = stack.enter_context(tempfile.TemporaryDirectory(prefix="grpcbench-"))
            params = dict(chosen.server_params)
            if service.prepare:
                params = service.prepare(params, Path(workdir), stack)
            asyncio.run(serve_forever(params))
    except KeyboardInterrupt:
        consoles.err.print("stopped")
    return 0
