"""ghz's command line, as far as it is true: ghz's flags that `run` takes, and ghz's defaults.

`grpcbench run` accepts a ghz command line with the binary name swapped for the
flags listed in ``ghz_promises.ACCEPTED`` (the docs' table); every other ghz flag is
refused by name with the reason in ``ghz_promises.REFUSED``, never silently ignored.
A ghz command line - a ``--call`` on the command line against a running server, with
no scenario file - gets ghz's own defaults for what it does not give (``-c``,
``-n``/``-z``, ``--warmup``, ``--connections``): one level of 50 concurrent calls,
200 calls, no warm-up, one connection; and, with the host as its last argument, TLS
checked against the system's trusted CAs unless ``--insecure`` (``--target`` stays
plaintext unless TLS options). Servers grpcbench starts keep the scenario's levels
and sizes, --call or not.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

from grpcbench.base import defaults
from grpcbench.base.errors import UsageError
from grpcbench.run.arguments import RunArgs
from grpcbench.run.ghz_promises import REFUSED
from grpcbench.run.ghz_schedules import GHZ_TOTAL, concurrency_schedule, load_schedule, with_horizon

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


# ghz config keys that change nothing here (see ghz_promises.ACCEPTED), and the value of a refused
# key that is ghz's default (a config file may spell defaults out).
_NO_OPS = {"count-errors", "async"}
# A refused flag with this value says what grpcbench does anyway: accepted, on the
# command line (``--load-schedule const``) and in a config file.
AGREED = {"--duration-stop": "wait"}
_DEFAULTS_OF_REFUSED = {flag.removeprefix("--"): value for flag, value in AGREED.items()}
_SETTINGS_KEYS = {
    "total": "requests", "duration": "duration",
    "timeout": "timeout", "connect-timeout": "connect_timeout",
    "connections": "connections", "authority": "authority", "keepalive": "keepalive",
    "enable-compression": "enable_compression",
    "max-recv-message-size": "max_recv_message_size",
    "max-send-message-size": "max_send_message_size",
}  # fmt: skip
_CALL_KEYS = {
    "proto": "proto", "protoset": "protoset", "data-file": "data_file",
    "metadata-file": "metadata_file", "binary-file": "binary_file",
    "stream-interval": "stream_interval", "stream-call-duration": "stream_call_duration",
    "stream-call-count": "stream_messages",
}  # fmt: skip
_TLS_KEYS = {"cacert": "cacert", "cert": "cert", "key": "key", "cname": "cname"}


def read_config(path: str) -> dict[str, object]:
    """ghz's --config file: JSON or TOML, by its name's suffix, as ghz reads it."""
    import tomllib
    from pathlib import Path

    file = Path(path)
    if file.suffix not in (".json", ".toml"):
        raise UsageError(f"--config {path}: a .json or .toml file (as ghz reads them)")
    from grpcbench.base.input_files import read_input_text

    text = read_input_text(path, "--config")
    try:
        data = json.loads(text) if file.suffix == ".json" else tomllib.loads(text)
    except RecursionError:
        raise UsageError(f"--config {path}: nested too deeply") from None
    except (json.JSONDecodeError, tomllib.TOMLDecodeError) as error:
        raise UsageError(f"--config {path}: not valid {file.suffix[1:].upper()}: {error}") from None
    if not isinstance(data, dict):
        raise UsageError(f"--config {path}: an object of ghz's options")
    return data


def refused_flags() -> dict[str, str]:
    """Every refused ghz flag as typed ("-e", "--load-schedule") -> why."""
    return {
        flag.strip(): reason
        for flags, reason in REFUSED.items()
        for part in flags.split(",")
        for flag in part.split("/")
    }


# ghz's config keys whose GhzFlags field is named otherwise.
_FLAG_FIELDS = {
    "format": "output_format", "name": "run_name", "tags": "tags_json",
    "max-duration": "max_duration", "skipFirst": "skip_first",
}  # fmt: skip


# ghz's --load-* config keys: GhzFlags fields of the same name (dashes as underscores).
_LOAD_KEYS = ("load-schedule", "load-start", "load-step", "load-end", "load-step-duration",
              "load-max-duration", "concurrency-schedule", "concurrency-start",
              "concurrency-step", "concurrency-end", "concurrency-step-duration",
              "concurrency-max-duration")  # fmt: skip
# ghz's defaults in a config file where they differ from its command line's.
_CONFIG_DEFAULTS = {"concurrency_start": "1", "concurrency_step": "0"}


def _refused_reason(key: str) -> str | None:
    """A config file's key (a flag's long name without dashes): why it is refused."""
    return refused_flags().get(f"--{key}")


def _text(value: object) -> str:
    return value if isinstance(value, str) else json.dumps(value)


def with_config(args: RunArgs) -> tuple[RunArgs, bool]:
    """ghz's --config file under the command line: each option the command line left
    unset takes the file's value; a key grpcbench refuses is refused, naming the file.
    Also: whether the file names the method (``call``)."""
    flags = args.ghz_flags
    if not flags.config:
        return args, False
    config = read_config(flags.config)
    settings = dict(args.settings)
    call_changes: dict[str, object] = {}
    tls_changes: dict[str, object] = {}
    changes: dict[str, object] = {}
    flag_changes: dict[str, object] = {}
    for key, value in config.items():
        if key in _NO_OPS or _DEFAULTS_OF_REFUSED.get(key) == value:
            continue
        if key in _SETTINGS_KEYS:
            settings.setdefault(_SETTINGS_KEYS[key], _text(value))
        elif key == "call":
            if not args.call.call:
                call_changes["call"] = (str(value),)
        elif key in _CALL_KEYS:
            if getattr(args.call, _CALL_KEYS[key]) is None:
                call_changes[_CALL_KEYS[key]] = value
        elif key in _TLS_KEYS:
            if getattr(args.call.security, _TLS_KEYS[key]) is None:
                tls_changes[_TLS_KEYS[key]] = str(value)
        elif key == "skipTLS":
            tls_changes["skip_tls"] = bool(value) or args.call.security.skip_tls
        elif key == "insecure":
            changes["insecure"] = bool(value) or args.insecure
        elif key == "import-paths":
            if args.call.import_paths is None:
                items = value if isinstance(value, list) else [value]
                call_changes["import_paths"] = ",".join(str(v) for v in items)
        elif key == "data":
            if args.call.data is None and args.call.data_file is None:
                call_changes["data"] = _text(value)
        elif key in ("metadata", "reflect-metadata"):
            field = key.replace("-", "_")
            if not getattr(args.call, field):
                text = _text(value)
                call_changes[field] = (text,) if field == "metadata" else text
        elif key == "concurrency":
            changes["concurrency"] = args.concurrency or _text(value)
        elif key == "host":
            if not (args.target or args.address):
                changes["address"] = str(value)
        elif key == "output":
            changes["output"] = args.output or Path(str(value))
        elif key in ("disable-template-functions", "disable-template-data"):
            name = key.replace("-", "_")
            flag_changes[name] = bool(value) or getattr(flags, name)
        elif key in _LOAD_KEYS:
            name = key.replace("-", "_")
            if getattr(flags, name) is None:
                flag_changes[name] = _text(value)
        elif key in ("rps", "cpus", "name", "tags", "format", "max-duration", "skipFirst"):
            name = _FLAG_FIELDS.get(key, key)
            if getattr(flags, name) is None:
                flag_changes[name] = (
                    int(str(value)) if key in ("cpus", "skipFirst") else
                    _text(value) if key in ("rps", "tags", "max-duration") else value
                )  # fmt: skip
        else:
            reason = _refused_reason(key)
            if reason:
                raise UsageError(f"--config {flags.config}: ghz's {key} is not supported: {reason}")
            raise UsageError(f"--config {flags.config}: {key!r} is not one of ghz's options")
    if str(config.get("concurrency-schedule", "const")).lower() != "const":
        for name, value in _CONFIG_DEFAULTS.items():
            if getattr(flags, name) is None:
                flag_changes.setdefault(name, value)
    security = replace(args.call.security, **tls_changes)  # type: ignore[arg-type]
    call = replace(args.call, **call_changes, security=security)  # type: ignore[arg-type]
    args = replace(args, **changes, settings=settings, call=call)  # type: ignore[arg-type]
    flags = replace(flags, **flag_changes)  # type: ignore[arg-type]
    return replace(args, ghz_flags=flags), "call" in config


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
