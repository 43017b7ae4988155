"""ghz's command line, as far as it is true: ghz's flags that `run` takes, and ghz's defaults.

`grpcbench run` accepts a ghz command line with the binary name swapped for the
flags listed in ``ghz_promises.ACCEPTED`` (the docs' table); every other ghz flag is
refused by name with the reason in ``ghz_promises.REFUSED``, never silently ignored.
A ghz command line - a ``--call`` on the command line against a running server, with
no scenario file - gets ghz's own defaults for what it does not give (``-c``,
``-n``/``-z``, ``--warmup``, ``--connections``): one level of 50 concurrent calls,
200 calls, no warm-up, one connection; and, with the host as its last argument, TLS
checked against the system's trusted CAs unless ``--insecure`` (``--target`` stays
plaintext unless TLS options), and, as in ghz, no pre-flight call or connection
before the load's (``RunOptions.ghz_line``). Servers grpcbench starts keep the
scenario's levels and sizes, --call or not.
"""

from __future__ import annotations

import json
from dataclasses import replace

from grpcbench.base import defaults
from grpcbench.base.errors import UsageError
from grpcbench.rpc.settings import CallArgs
from grpcbench.run.arguments import RunArgs
from grpcbench.run.ghz_config import with_config
from grpcbench.run.ghz_promises import REFUSED
from grpcbench.run.ghz_schedules import GHZ_TOTAL, concurrency_schedule, load_schedule, with_horizon
from grpcbench.targets.choice import plain_address

# ghz's defaults (ghz --help, v0.120.0) for a run that names only a method.
GHZ_CONCURRENCY = 50
GHZ_CONNECTIONS = "1"

# -O name -> the exporter (report.exporters) that writes it. html is grpcbench's own
# report (ghz's loads its charts from CDNs); grpcbench is grpcbench's JSON.
OUTPUT_FORMATS = {
    **{name: f"ghz-{name}" for name in (
        "summary", "csv", "json", "pretty", "influx-summary", "influx-details", "prometheus")},
    "html": "html", "grpcbench": "json",
}  # fmt: skip
# -o paths that are standard output, as ghz writes there when -o is absent.
STDOUT_PATHS = ("-", "/dev/stdout", "/dev/fd/1", "/proc/self/fd/1")


def _tags(text: str | None) -> dict[str, str]:
    if not text:
        return {}
    try:
        tags = json.loads(text)
    except (ValueError, RecursionError):  # JSONDecodeError, or a number past 4,300 digits
        tags = None
    if not isinstance(tags, dict):
        raise UsageError(f'bad --tags {text[:80]!r}: a JSON object, e.g. \'{{"env": "ci"}}\'')
    return {str(k): str(v) for k, v in tags.items()}


def refused_flags() -> dict[str, str]:
    """Every refused ghz flag as typed ("-e", "--load-schedule") -> why."""
    return {
        flag.strip(): reason
        for flags, reason in REFUSED.items()
        for part in flags.split(",")
        for flag in part.split("/")
    }


def _check_connections(connections: str, concurrency: str | None) -> None:
    """ghz refuses more connections than concurrent calls; so does a ghz command line here."""
    count = connections.removeprefix("pool:")
    if (
        count.isdecimal()
        and concurrency
        and concurrency.isdecimal()
        and int(count) > int(concurrency)
    ):
        raise UsageError(
            f"--connections {count} with -c {concurrency}: ghz refuses more connections than"
            " concurrent calls (number of connections cannot be greater than concurrency)"
        )


def is_ghz_line(args: RunArgs) -> bool:
    """A ghz command line: a method to call and the host as the last argument, no
    scenario file and no servers to start. It gets ghz's defaults and ghz's ways."""
    return bool(
        args.address and args.call.call and not args.servers
        and args.scenario == defaults.SCENARIO
    )  # fmt: skip


def _check_lb_strategy(strategy: str, target: str) -> None:
    """ghz's --lb-strategy is grpc's balancing policy, which only a name that resolves to
    several addresses (dns:///) can tell apart: refused there for round_robin."""
    if strategy not in ("pick_first", "round_robin"):
        raise UsageError(f"bad --lb-strategy {strategy!r}: grpc's pick_first or round_robin")
    if strategy == "pick_first" or not target.startswith("dns:"):
        return
    import socket

    host, _, port = plain_address(target).rpartition(":")
    try:
        found = {info[4][0] for info in socket.getaddrinfo(host.strip("[]"), port or None)}
    except (OSError, UnicodeError):
        return  # unresolvable: the connection says so, as for any target
    if len(found) > 1:
        raise UsageError(
            f"--lb-strategy round_robin: {host} resolves to {len(found)} addresses and"
            " grpcbench connects to one; give one address (or pick_first)"
        )


def _ghz_precedence(call: CallArgs, settings: dict[str, object]) -> CallArgs:
    """Two options of a kind on a ghz line: the one ghz uses, as ghz's fromConfig and
    requester choose (grpcbench's own lines refuse the pair): --proto over --protoset,
    -D over -d (but ``-d @``, standard input, over -D), -b/-B over both, and -z over -n
    (``settings`` changes in place)."""
    if {"duration", "duration_s"} & set(settings):
        settings.pop("requests", None)
        settings.pop("n", None)
    if call.proto and call.protoset:
        call = replace(call, protoset=None)
    if call.binary_file or call.binary_stdin:
        return replace(call, data=None, data_file=None)
    if call.data is not None and call.data_file is not None:
        return replace(call, data_file=None) if call.data == "@" else replace(call, data=None)
    return call


def apply(args: RunArgs) -> RunArgs:
    """``args`` with ghz's flags mapped onto `run`'s options, and ghz's defaults (on a
    ghz command line: a method given here or in --config, no scenario, a target)."""
    method_on_command_line = bool(args.call.call)
    scenario_given = args.scenario != defaults.SCENARIO
    args, method_in_config = with_config(args)
    flags = args.ghz_flags
    settings = dict(args.settings)
    changes: dict[str, object] = {}

    def take(option: str, setting: str, value: object) -> None:
        if setting in settings:
            raise UsageError(f"{option} and --{setting.replace('_', '-')} say the same: give one")
        settings[setting] = value

    if flags.skip_first is not None:
        take("--skipFirst", "warmup", str(flags.skip_first))
    if flags.max_duration is not None:
        # ghz's binary runs for -x and then ignores -n (main.go: cfg.Z = cfg.X), whatever
        # its docs say; grpcbench follows the binary, so ghz's own command lines and
        # config examples run as long and as many calls here.
        settings.pop("requests", None)
        settings["duration"] = flags.max_duration
    concurrency = args.concurrency
    workers = concurrency_schedule(flags)
    if workers is not None:
        if flags.rps is None and load_schedule(flags) is None:
            raise UsageError(
                f"--concurrency-schedule {flags.concurrency_schedule} needs --rps or"
                " --load-schedule here: without a rate ghz's workers call as fast as they"
                " can, a closed loop whose users change, which grpcbench does not run"
            )
        take("--concurrency-schedule", "worker_schedule", workers)
        concurrency = None  # ghz ignores -c under a concurrency schedule
    if flags.rps is not None:
        if args.rate:
            raise UsageError("--rps and --rate say the same: give one")
        changes["rate"] = flags.rps
        if concurrency:  # ghz: -c workers share the rate; here, the cap on calls in flight
            if "," in concurrency:
                raise UsageError("--rps with -c takes one -c: the cap on calls in flight")
            take("-c with --rps", "max_in_flight", concurrency)
            concurrency = None
    schedule = load_schedule(flags)
    if schedule is not None:
        if flags.rps is not None:
            raise UsageError(
                f"--rps with --load-schedule {flags.load_schedule}: the schedule sets the rate"
                " (ghz ignores --rps then): give one"
            )
        take("--load-schedule", "rate_schedule", schedule)
        if concurrency:  # as with --rps: -c caps the calls in flight
            if "," in concurrency:
                raise UsageError("--load-schedule with -c takes one -c: the cap on calls in flight")
            take("-c with --load-schedule", "max_in_flight", concurrency)
            concurrency = None
    if flags.lb_strategy is not None:
        _check_lb_strategy(flags.lb_strategy, args.target or args.address or "")
    if flags.cpus is not None:
        if flags.cpus <= 0:
            raise UsageError(f"bad --cpus {flags.cpus}: a positive integer")
        changes["client_processes"] = str(flags.cpus)
    call = args.call
    if flags.disable_template_data:  # ghz sends -d/-m as they are, actions included
        call = replace(call, templates="off")
    elif flags.disable_template_functions:  # the data fields only; a function fails
        call = replace(call, templates="no-functions")
    if flags.stream_call_count is not None:
        if call.stream_messages is not None:
            raise UsageError("--stream-call-count and --stream-messages say the same: give one")
        call = replace(call, stream_messages=flags.stream_call_count)
    has_host = bool(args.address or args.target)
    ghz_like = has_host and not args.servers  # a ghz command line
    schema_given = bool(args.call.proto or args.call.protoset)
    starts_nothing = not (args.servers or args.service or scenario_given)
    method_given = method_on_command_line or method_in_config
    if method_given and schema_given and starts_nothing and not has_host:  # ghz's, no host
        raise UsageError(
            "host required: give the server's HOST:PORT as the last argument (or --target),"
            " as ghz does; --servers or --service start servers to call instead"
        )
    if method_given and not scenario_given and ghz_like:
        if is_ghz_line(args):  # the host last, as ghz's; --target is grpcbench's own
            call = _ghz_precedence(call, settings)
        if concurrency is None and not (args.rate or flags.rps or "rate_schedule" in settings):
            concurrency = str(GHZ_CONCURRENCY)
        bounded = {"requests", "n", "duration", "duration_s"}
        if schedule is None:  # a step: or line: schedule sets the level's length
            bounded.add("rate_schedule")
        if not bounded & set(settings):
            settings["requests"] = str(GHZ_TOTAL)
        if not {"warmup", "warmup_requests"} & set(settings):
            settings["warmup"] = "0"
        if "connections" not in settings:
            settings["connections"] = GHZ_CONNECTIONS
        # ghz speaks TLS unless told: so does a line that gives the host as ghz does
        # (the last argument); --target is grpcbench's own, plaintext unless TLS options.
        if is_ghz_line(args) and not args.insecure and not call.security.tls:
            call = replace(call, security=replace(call.security, system_roots=True))
        _check_connections(str(settings["connections"]), concurrency)
    if flags.skip_first is not None and str(settings.get("requests", "")).isdecimal():
        # ghz's -n counts the skipped calls: -n 300 --skipFirst 100 makes 300, reports 200.
        total = int(str(settings["requests"]))
        if flags.skip_first >= total:
            raise UsageError(
                f"--skipFirst {flags.skip_first} skips every one of the {total} calls (-n)"
            )
        settings["requests"] = str(total - flags.skip_first)
    if schedule is not None:
        settings["rate_schedule"] = with_horizon(schedule, settings, flags.skip_first or 0)
    exports = args.exports
    output = args.output
    if flags.output_format is not None:
        chosen = OUTPUT_FORMATS.get(flags.output_format)
        if chosen is None:
            raise UsageError(f"-O {flags.output_format}: one of {', '.join(OUTPUT_FORMATS)}")
        # ghz prints to standard output without -o; the tables then go to stderr.
        path = "-" if output is None or str(output) in STDOUT_PATHS else str(output)
        exports, output = (*exports, f"{chosen}={path}"), None
    return replace(
        args,
        **changes,  # type: ignore[arg-type]
        concurrency=concurrency,
        settings=settings,
        call=call,
        exports=exports,
        output=output,
        name=flags.run_name or "",
        tags=_tags(flags.tags_json),
    )
