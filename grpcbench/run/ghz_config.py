"""ghz's --config file (JSON, TOML or YAML) under the command line: each option the
command line left unset takes the file's value; ghz's keys map onto `run`'s options
as its flags do (``run.ghz_compat``)."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

from grpcbench.base.errors import UsageError
from grpcbench.run.arguments import RunArgs
from grpcbench.run.ghz_promises import REFUSED

# ghz config keys that change nothing here (see ghz_promises.ACCEPTED).
_NO_OPS = {"count-errors", "async"}
_SETTINGS_KEYS = {
    "total": "requests", "duration": "duration",
    "timeout": "timeout", "connect-timeout": "connect_timeout",
    "connections": "connections", "authority": "authority", "keepalive": "keepalive",
    "enable-compression": "enable_compression",
    "max-recv-message-size": "max_recv_message_size",
    "max-send-message-size": "max_send_message_size", "duration-stop": "duration_stop",
}  # fmt: skip
_CALL_KEYS = {
    "proto": "proto", "protoset": "protoset", "data-file": "data_file",
    "metadata-file": "metadata_file", "binary-file": "binary_file",
    "stream-interval": "stream_interval", "stream-call-duration": "stream_call_duration",
    "stream-call-count": "stream_messages",
}  # fmt: skip
_TLS_KEYS = {"cacert": "cacert", "cert": "cert", "key": "key", "cname": "cname"}


def read_config(path: str) -> dict[str, object]:
    """ghz's --config file: JSON, TOML or YAML, by its name's suffix, as ghz reads it."""
    import tomllib

    file = Path(path)
    kind = {".json": "JSON", ".toml": "TOML", ".yaml": "YAML", ".yml": "YAML"}.get(file.suffix)
    if kind is None:
        raise UsageError(f"--config {path}: a .json, .toml or .yaml file (as ghz reads them)")
    from grpcbench.base.input_files import read_input_text

    text = read_input_text(path, "--config")
    try:
        if kind == "YAML":
            data = _yaml(text, path)
        else:
            data = json.loads(text) if kind == "JSON" else tomllib.loads(text)
    except RecursionError:
        raise UsageError(f"--config {path}: nested too deeply") from None
    except (json.JSONDecodeError, tomllib.TOMLDecodeError) as error:
        raise UsageError(f"--config {path}: not valid {kind}: {error}") from None
    if not isinstance(data, dict):
        raise UsageError(f"--config {path}: an object of ghz's options")
    return data


def _yaml(text: str, path: str) -> object:
    """A YAML config (ghz reads them too): PyYAML's safe loader, an extra here."""
    try:
        import yaml
    except ImportError:
        raise UsageError(
            f"--config {path}: a YAML config needs PyYAML: pip install 'grpcbench[yaml]'"
        ) from None
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as error:
        where = getattr(error, "problem_mark", None)
        at = f" at line {where.line + 1}" if where is not None else ""
        raise UsageError(f"--config {path}: not valid YAML{at}") from None


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
    for flags, reason in REFUSED.items():
        if f"--{key}" in (flag.strip() for part in flags.split(",") for flag in part.split("/")):
            return reason
    return None


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
        if key in _NO_OPS:
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
        elif key == "stream-dynamic-messages":
            call_changes["stream_dynamic_messages"] = (
                bool(value) or args.call.stream_dynamic_messages
            )
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
