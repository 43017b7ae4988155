"""``grpcbench run``'s options as typed, each declared once on the field that holds it.

A field declared with ``base.declarations.option`` carries its option's names,
help, panel, and how its text is parsed and checked (``RunArgs.value``); ``group``
fields hold the call's options (``rpc.settings.CallArgs``, with TLS's) and ghz's
own flags. From these declarations come `run`'s and
`capacity`'s parameters (``cli.declared_options``), the pytest plugin's keywords
(``run.level_options``) and which options are masked on a saved command line, so
a new option is one declaration plus the code that reads it. Load settings are
declared the same way in ``model.plan.LoadSettings`` and arrive here as text
(``settings``); ``run.options.build_run_options`` checks everything.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from grpcbench.backing.options import BackingArgs
from grpcbench.base import defaults, panels
from grpcbench.base.declarations import DeclaredArgs, group, option, secret_option_names
from grpcbench.base.parsing import (
    parse_cluster,
    parse_duration,
    parse_positive_float_list,
    parse_positive_int_list,
)
from grpcbench.history.options import StoreArgs
from grpcbench.load.catalogue import drivers_help, parse_drivers
from grpcbench.model.placement import parse_client_processes
from grpcbench.model.plan import LoadSettings
from grpcbench.model.thresholds import parse_threshold
from grpcbench.report.exporters import exports_help
from grpcbench.rpc.settings import CallArgs
from grpcbench.rpc.status_names import parse_statuses
from grpcbench.run.ghz_flags import GhzFlags
from grpcbench.servers.kinds import kinds_help
from grpcbench.targets.choice import bind_address


def spec_help() -> str:
    """--servers' help, from the kinds' declarations (plugins' kinds included)."""
    return (
        "Server kinds to compare, as specs KIND[+uvloop][:key=value,...]; repeat the option"
        " or separate specs with spaces or ';'. Kinds: "
        + kinds_help()
        + f". Default: the scenario's list ({' '.join(defaults.SERVERS)})."
    )


def positive(value: int) -> str | None:
    return None if value > 0 else "must be a positive integer"


def port_number(value: int) -> str | None:
    return None if 0 <= value < 65536 else "a port from 0 to 65535"


def share_below_one(value: float) -> str | None:
    return None if 0 <= value < 1 else "a share of calls from 0 to below 1 (0.01 = 1%)"


@dataclass(frozen=True)
class RunArgs(DeclaredArgs):
    """``grpcbench run``'s options as typed on the command line (None = not given);
    ``value(name)`` is one parsed and checked by its declaration."""

    scenario: str = option(
        defaults.SCENARIO, help=("Scenario name or path to a .toml file."), panel=panels.WHAT_TO_RUN
    )
    servers: tuple[str, ...] = option(
        (), "--servers", "-s", help=spec_help, panel=panels.WHAT_TO_RUN
    )
    concurrency: str | None = option(
        None,
        "--concurrency",
        "-c",
        help="Comma-separated levels, e.g. 2,10,25,50. Default: the scenario's"
        f" ({','.join(map(str, defaults.CONCURRENCY))} unless it says otherwise).",
        panel=panels.WHAT_TO_RUN,
        parse=parse_positive_int_list,
    )
    load: str = option(
        defaults.LOAD,
        help=drivers_help,
        panel=panels.LOAD_MODEL,
        parse=lambda text, option: parse_drivers(text),
    )
    ghz: str | None = option(
        None, help=("Path to the ghz binary (default: from PATH)."), panel=panels.LOAD_MODEL
    )
    channels: str | None = option(
        None,
        help=("Sweep the number of client connections, e.g. 1,10,15,20 (one level per count)."),
        panel=panels.LOAD_MODEL,
        parse=parse_positive_int_list,
    )
    rate: str | None = option(
        None,
        help=(
            "Open loop: calls/s on a pacer instead of --concurrency; a list sweeps "
            "(500,1000,2000). Latency counts from each call's intended send time."
        ),
        panel=panels.LOAD_MODEL,
        parse=parse_positive_float_list,
    )
    profile: bool = option(
        False,
        help=(
            "Sample every server grpcbench starts (or --target-pid) with py-spy during "
            "each level's measured phase: collapsed stacks per cell beside the results, "
            "the top functions after the tables (extra: grpcbench[profile])."
        ),
        panel=panels.OUTPUT,
    )
    profile_generator: bool = option(
        False,
        help=(
            "--profile: the built-in generator's processes too, in their own cells (also "
            "spelled --profile generator)."
        ),
        panel=panels.OUTPUT,
    )
    profile_rate: int = option(
        100,
        help="--profile's samples per second.",
        panel=panels.OUTPUT,
        check=lambda rate: None if 1 <= rate <= 10_000 else "1 to 10000 samples/s",
    )
    profile_native: bool = option(
        False, help=("--profile: C frames too (grpcio's core)."), panel=panels.OUTPUT
    )
    profile_idle: bool = option(
        False, help="--profile: idle threads' samples too.", panel=panels.OUTPUT
    )
    thresholds: tuple[str, ...] = option(
        (),
        "--threshold",
        help=(
            "Pass/fail on every level, k6's way: p99<20ms, rps>=5000, errors<0.1%, checks>=99%,"
            " checks{NAME}>=99% (a flow's client.check; none run: breached), p99{scenario:NAME}"
            "<10ms (repeatable). A breach is named under its table; the run exits 99 after saving."
        ),
        panel=panels.WHAT_TO_RUN,
        parse=lambda text, option: parse_threshold(text),
    )
    repeat: int = option(
        defaults.REPEAT,
        help=(
            "Run every level N times, each in fresh server processes; tables show mean ± "
            "standard deviation and flag spreads over 10%."
        ),
        panel=panels.WHAT_TO_RUN,
        check=positive,
    )
    variants: str | None = option(
        None,
        help=("Run only these of the scenario's workload variants (comma-separated)."),
        panel=panels.WHAT_TO_RUN,
    )
    server_params: tuple[str, ...] = option(
        (),
        "--server-param",
        help=(
            "Override a server param of the scenario, KEY=VALUE (repeatable), e.g. users=1000000."
        ),
        panel=panels.WHAT_TO_RUN,
    )
    workload_params: tuple[str, ...] = option(
        (),
        "--workload-param",
        help=("Override a workload param of the scenario, KEY=VALUE, e.g. keyword=e."),
        panel=panels.WHAT_TO_RUN,
    )
    client_processes: str = option(
        defaults.CLIENT_PROCESSES,
        help=("Built-in generator processes per level, results merged; auto = one per client CPU."),
        panel=panels.LOAD_MODEL,
        parse=parse_client_processes,
    )
    target: str | None = option(
        None, help=("Benchmark an already running server at HOST:PORT."), panel=panels.TARGET
    )
    target_pid: int | None = option(
        None,
        help=(
            "With --target: pid of that server, to measure its CPU and memory (it, or a"
            " child, must listen on the target's port)."
        ),
        panel=panels.TARGET,
    )
    port: int = option(
        defaults.PORT,
        help=("Port for the servers grpcbench starts (0 = any free port)."),
        panel=panels.TARGET,
        check=port_number,
    )
    output: Path | None = option(
        None,
        "--output",
        "-o",
        help=("Write versioned JSON results here (after every level); with -O, that format."),
        panel=panels.OUTPUT,
    )
    markdown: Path | None = option(
        None, help=("Write the tables as markdown here (after every level)."), panel=panels.OUTPUT
    )
    csv: Path | None = option(
        None,
        help=("Write one CSV row per level, server, driver and repeat here."),
        panel=panels.OUTPUT,
    )
    report: Path | None = option(
        None,
        help=("Write a self-contained HTML report (tables + charts) here."),
        panel=panels.OUTPUT,
    )
    exports: tuple[str, ...] = option(
        (),
        "--export",
        help=exports_help,
        panel=panels.OUTPUT,
    )
    pin: bool = option(
        True,
        help=("Pin the server and the generator to different CPUs (default when >1 CPU)."),
        panel=panels.PLACEMENT,
    )
    server_cpus: str | None = option(
        None, help=("CPUs for the server, e.g. 0 or 0-1."), panel=panels.PLACEMENT
    )
    client_cpus: str | None = option(
        None, help=LoadSettings.help("client_cpus"), panel=panels.PLACEMENT
    )
    backing_cpus: str | None = option(
        None,
        help=("CPUs for the embedded S3, MongoDB and PostgreSQL (default: the generator's)."),
        panel=panels.PLACEMENT,
    )
    server_per_level: bool | None = option(
        None,
        "--server-per-level/--server-per-column",
        help=(
            "A fresh server process for every level, so each level's memory is its own "
            "(default: the scenario's choice; watch does)."
        ),
        panel=panels.TARGET,
    )
    start_timeout: str | None = option(
        None,
        help="How long a server may take to start and answer SERVING"
        f" (default {defaults.START_TIMEOUT}).",
        panel=panels.TARGET,
        parse=parse_duration,
    )
    service: str | None = option(
        None,
        help=(
            "The service to serve and load: a registered name or your own "
            "module:ATTRIBUTE (a ServiceDefinition; found in the current directory too)."
        ),
        panel=panels.WHAT_TO_RUN,
    )
    workload: str | None = option(
        None,
        help=(
            "Your own calls: module:function, an async flow(client) whose calls are timed as"
            " steps, or a class of users (on_start, flow, on_stop); the module's async setup"
            "(client) and teardown(client, data) run once per server. Needs --proto/--protoset."
        ),
        panel=panels.CALL,
    )
    max_error_rate: float | None = option(
        None,
        help=(
            "A level whose share of failed calls exceeds this (0.01 = 1%) fails the run "
            "(exit 4). Default: only a level whose every call failed."
        ),
        panel=panels.WHAT_TO_RUN,
        check=share_below_one,
    )
    cluster: str | None = option(
        None,
        help=(
            "Run the built-in generator on Dask distributed workers: local:N (a "
            "LocalCluster of N processes here) or tcp://SCHEDULER:8786 (pip install "
            "'grpcbench[cluster]')."
        ),
        panel=panels.LOAD_MODEL,
        parse=lambda text, option: parse_cluster(text),
    )
    cluster_workers: int | None = option(
        None,
        help=("With --cluster: use N of its workers (default all)."),
        panel=panels.LOAD_MODEL,
        check=positive,
    )
    allow_plaintext_secrets: bool = option(
        False,
        help=(
            "With --cluster tcp://: send metadata values and the client key to the "
            "workers anyway (unencrypted; tls:// schedulers need no permission)."
        ),
        panel=panels.LOAD_MODEL,
    )
    bind: str | None = option(
        None,
        help=(
            "Servers grpcbench starts listen on this address instead of 127.0.0.1, so "
            "remote cluster workers can reach them. Anyone who can reach it can call "
            "them."
        ),
        panel=panels.TARGET,
        parse=bind_address,
    )
    insecure: bool = option(
        False,
        help=(
            "Plaintext, as ghz spells it: without it a ghz line (the host last) speaks TLS,"
            " as ghz does; --target is plaintext anyway. Refused with TLS options."
        ),
        panel=panels.TLS,
    )
    expect_status: str | None = option(
        None,
        help=(
            "Statuses that count as success, e.g. Unavailable or "
            "PermissionDenied,NotFound (names or numbers), to benchmark an error path: "
            "the pre-flight call accepts them and only other statuses fail a level. "
            "Default: OK."
        ),
        panel=panels.CALL,
        parse=parse_statuses,
    )
    prometheus: str | None = option(
        None,
        metavar="HOST:PORT",
        help="Serve the run's figures live for Prometheus to scrape (127.0.0.1 unless a"
        " host is given; port 0: any free one, printed): calls, latency histogram, rates,"
        " CPU and memory, every --interval (1s unless given). Needs 'grpcbench[telemetry]'.",
        panel=panels.OUTPUT,
    )
    prometheus_linger: str | None = option(
        None,
        metavar="DURATION",
        help="Keep serving --prometheus this long after the run, so a scraper reads the"
        " last level's final figures (default: stop with the run).",
        panel=panels.OUTPUT,
    )
    otlp: str | None = option(
        None,
        metavar="URL",
        help="Push the run's figures with OpenTelemetry over OTLP/HTTP every --interval"
        " (1s unless given), e.g. http://127.0.0.1:4318/v1/metrics: latency as an"
        " exponential histogram, calls, CPU and memory. Needs 'grpcbench[telemetry]'.",
        panel=panels.OUTPUT,
    )
    otlp_headers: tuple[str, ...] = option(
        (),
        "--otlp-header",
        metavar="KEY=VALUE",
        help="A header on every OTLP export (repeatable), e.g. authorization=Bearer T;"
        " a secret: never printed or saved. OTEL_EXPORTER_OTLP_HEADERS works too.",
        panel=panels.OUTPUT,
        secret=True,
    )
    preflight: bool = option(
        True,
        "--preflight/--no-preflight",
        help="One real call before the first level, so a wrong method or credentials stop"
        " the run at once instead of measuring failures (a ghz line makes none, as ghz).",
        panel=panels.CALL,
    )
    dry_run: bool = option(
        False,
        help=("Check every option, file and output path, print the plan, start nothing."),
        panel=panels.WHAT_TO_RUN,
    )
    backing: BackingArgs = group(BackingArgs)  # the backing services' (backing.options)
    call: CallArgs = group(CallArgs)  # --call and its companions, ghz's names
    ghz_flags: GhzFlags = group(GhzFlags)  # ghz's own flags (run.ghz_flags)
    store: StoreArgs = group(StoreArgs)  # --store, --project (history.options)
    # Given otherwise than by a declared option:
    address: str | None = None  # ghz's positional HOST:PORT, the same as --target
    # Load settings as given (field or option name -> command-line text, or a value
    # from the pytest plugin); parsed by their declarations in model.plan.LoadSettings.
    settings: Mapping[str, Any] = field(default_factory=dict)
    name: str = ""  # --name (ghz's), once ghz_compat has read it: recorded and shown
    tags: Mapping[str, str] = field(default_factory=dict)  # --tags (ghz's), likewise

    def named_server_params(self) -> dict[str, Any]:
        """Server params given through their own options (--io-delay-ms, ...)."""
        return self.backing.named_server_params()


def secret_options() -> frozenset[str]:
    """Every spelling of an option whose value may carry a credential."""
    return secret_option_names(RunArgs)
