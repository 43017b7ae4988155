"""Scenarios are data: one TOML file per experiment, found by name or path.

The file says which service (Python, from the registry) to run, with which
workload and server parameters, and the defaults for servers, levels and
sizes. The files live in the repository's top-level ``scenarios/`` directory;
the wheel ships them as ``grpcbench/_data/scenarios``. A file is checked like
the command line: an unknown key or a bad value is one clear error.
"""

from __future__ import annotations

import json
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from grpcbench.base import defaults
from grpcbench.base.errors import OneLineError, UsageError
from grpcbench.base.input_files import read_input_text
from grpcbench.base.parsing import parse_duration, parse_warmup
from grpcbench.base.resources import data_dirs
from grpcbench.model.level_scenarios import (
    EXECUTOR_KEYS,
    LevelScenario,
    check_names,
    split_executor,
)
from grpcbench.rpc.security import ChannelSecurity
from grpcbench.rpc.settings import CallSettings, MixEntry
from grpcbench.rpc.status_names import parse_statuses


@dataclass(frozen=True)
class Variant:
    """A named set of workload params: one more level per server (e.g. paginate vs stream)."""

    name: str
    params: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Scenario:
    name: str
    description: str
    service: str
    path: str
    servers: tuple[str, ...] = defaults.SERVERS
    concurrency: tuple[int, ...] = defaults.CONCURRENCY
    requests: int = defaults.REQUESTS
    warmup: str = defaults.WARMUP
    timeout: str = defaults.TIMEOUT
    workload_params: dict[str, Any] = field(default_factory=dict)
    server_params: dict[str, Any] = field(default_factory=dict)
    variants: tuple[Variant, ...] = ()
    # A fresh server for every level, so a level's memory is its own (not what
    # earlier levels left behind); for scenarios whose levels retain memory.
    server_per_level: bool = False
    # A method call instead of (or besides) a Python service: [call] and [tls].
    call: CallSettings = field(default_factory=CallSettings)
    # The variants a run without --variants runs (empty: all of them).
    default_variants: tuple[str, ...] = ()
    # [[scenarios]]: several at once, each its own executor (``call.mix`` holds their
    # methods, in the same order).
    level_scenarios: tuple[LevelScenario, ...] = ()


TOP_LEVEL_KEYS = (
    "name", "description", "service", "defaults", "workload", "server", "variants", "call", "tls",
    "mix", "scenarios",
)  # fmt: skip
MIX_KEYS = ("method", "weight", "data", "metadata", "timeout", "name", "expect_status")
SCENARIO_KEYS = (
    "name", "method", "data", "metadata", "timeout", "expect_status", *EXECUTOR_KEYS,
)  # fmt: skip
CALL_KEYS = (
    "method", "proto", "import_paths", "protoset", "data", "metadata", "stream_messages",
    "mix_order",
)  # fmt: skip
TLS_KEYS = ("cacert", "cert", "key", "cname", "skip_tls")
DEFAULTS_KEYS = (
    "servers", "concurrency", "requests", "warmup", "timeout", "server_per_level", "variants",
)  # fmt: skip


def scenario_files() -> dict[str, Path]:
    """Name -> file, first directory wins (the wheel's copy over a checkout's)."""
    found: dict[str, Path] = {}
    for directory in data_dirs("scenarios"):
        for path in sorted(directory.glob("*.toml")):
            found.setdefault(path.stem, path)
    return found


def load_scenario(name_or_path: str) -> Scenario:
    path = Path(name_or_path)
    if not (path.suffix == ".toml" and path.is_file()):
        files = scenario_files()
        if name_or_path not in files:
            known = ", ".join(sorted(files)) or "none found"
            raise UsageError(f"unknown scenario {name_or_path!r} (known scenarios: {known})")
        path = files[name_or_path]
    text = read_input_text(str(path), "scenario file")  # not a device, at most 256 MiB
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise UsageError(f"cannot read scenario file {path}: {error}") from None
    except RecursionError:  # tomllib recurses per level of nesting
        raise UsageError(f"cannot read scenario file {path}: nested too deeply") from None
    try:
        return parse_scenario(data, path)
    except OneLineError as error:
        raise UsageError(f"invalid scenario file {path}: {error}") from None


def _check_keys(table: dict[str, Any], known: tuple[str, ...], where: str) -> None:
    unknown = sorted(set(table) - set(known))
    if unknown:
        raise UsageError(f"unknown key {unknown[0]!r} in {where} (known: {', '.join(known)})")


def _table(data: dict[str, Any], key: str) -> dict[str, Any]:
    value = data.get(key, {})
    if not isinstance(value, dict):
        raise UsageError(f"[{key}] must be a table, not {type(value).__name__}")
    return value


def _positive_int(value: Any, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise UsageError(f"{where} must be a positive integer, not {value!r}")
    return value


def _strings(value: Any, where: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value) or not value:
        raise UsageError(f"{where} must be a non-empty list of strings, not {value!r}")
    return tuple(value)


def _variants(value: Any) -> tuple[Variant, ...]:
    if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
        raise UsageError("variants must be [[variants]] tables")
    variants = []
    for table in value:
        name = table.get("name")
        if not isinstance(name, str) or not name:
            raise UsageError("every [[variants]] table needs a name")
        variants.append(Variant(name, {k: v for k, v in table.items() if k != "name"}))
    names = [v.name for v in variants]
    if len(set(names)) != len(names):
        raise UsageError(f"variant names repeat: {names}")
    return tuple(variants)


def parse_scenario(data: dict[str, Any], path: Path) -> Scenario:
    """A scenario from a parsed TOML file; every key and value checked."""
    _check_keys(data, TOP_LEVEL_KEYS, "the scenario")
    table = _table(data, "defaults")
    _check_keys(table, DEFAULTS_KEYS, "[defaults]")
    call, level_scenarios = _call_settings(data, path.parent)
    service = data.get("service", "" if call.method else None)
    if not isinstance(service, str) or not (service or call.method):
        raise UsageError(
            'the scenario must name its service (service = "hello") or a [call] method'
        )
    variants = _variants(data.get("variants", []))
    warmup = str(table.get("warmup", defaults.WARMUP))
    timeout = str(table.get("timeout", defaults.TIMEOUT))
    parse_warmup(warmup)
    parse_duration(timeout, "timeout")
    return Scenario(
        name=str(data.get("name", path.stem)),
        description=str(data.get("description", "")),
        service=service,
        path=str(path),
        servers=_strings(table["servers"], "servers") if "servers" in table else defaults.SERVERS,
        concurrency=(
            tuple(_positive_int(c, "concurrency") for c in _list(table["concurrency"]))
            if "concurrency" in table
            else defaults.CONCURRENCY
        ),
        requests=_positive_int(table.get("requests", defaults.REQUESTS), "requests"),
        warmup=warmup,
        timeout=timeout,
        workload_params=_table(data, "workload"),
        server_params=_table(data, "server"),
        variants=variants,
        server_per_level=_boolean(table.get("server_per_level", False), "server_per_level"),
        call=call,
        default_variants=_default_variants(table, variants),
        level_scenarios=level_scenarios,
    )


def _call_settings(
    data: dict[str, Any], directory: Path
) -> tuple[CallSettings, tuple[LevelScenario, ...]]:
    """[call] and [tls]: ghz's options as keys; paths relative to the scenario file.
    [[scenarios]] are a mix whose methods each run their own executor."""
    call = _table(data, "call")
    _check_keys(call, CALL_KEYS, "[call]")
    tls = _table(data, "tls")
    _check_keys(tls, TLS_KEYS, "[tls]")

    def path(table: dict[str, Any], key: str, where: str) -> str | None:
        value = table.get(key)
        if value is None:
            return None
        if not isinstance(value, str) or not value:
            raise UsageError(f"{where} {key} must be a path, not {value!r}")
        return str(directory / value)

    def text(key: str) -> str | None:
        value = call.get(key)
        if value is None or isinstance(value, str):
            return value
        return json.dumps(value)  # a TOML table or array: the JSON it stands for

    method = call.get("method")
    if method is not None and (not isinstance(method, str) or not method):
        raise UsageError(f"[call] method must be package.Service/Method, not {method!r}")
    mix = _mix_entries(data.get("mix"))
    if mix and method is not None:
        raise UsageError("give [call] method or [[mix]] entries, not both")
    level_scenarios, mix = _level_scenarios(data.get("scenarios"), method, mix)
    if mix:
        method = mix[0].method
    mix_order = call.get("mix_order")
    if mix_order is not None and mix_order not in ("cycle", "random"):
        raise UsageError(f"[call] mix_order is cycle or random, not {mix_order!r}")
    imports = call.get("import_paths", [])
    stream_messages = call.get("stream_messages")
    settings = CallSettings(
        method=method,
        mix_order=mix_order,
        proto=path(call, "proto", "[call]"),
        import_paths=tuple(str(directory / p) for p in _strings(imports, "[call] import_paths"))
        if imports
        else (),
        protoset=path(call, "protoset", "[call]"),
        data=text("data"),
        metadata=text("metadata"),
        stream_messages=(
            _positive_int(stream_messages, "[call] stream_messages")
            if stream_messages is not None
            else None
        ),
        mix=mix,
        security=ChannelSecurity(
            cacert=path(tls, "cacert", "[tls]"),
            cert=path(tls, "cert", "[tls]"),
            key=path(tls, "key", "[tls]"),
            cname=str(tls["cname"]) if "cname" in tls else None,
            skip_tls=_boolean(tls.get("skip_tls", False), "[tls] skip_tls"),
        ),
    )
    return settings, level_scenarios


def _level_scenarios(
    value: Any, method: str | None, mix: tuple[MixEntry, ...]
) -> tuple[tuple[LevelScenario, ...], tuple[MixEntry, ...]]:
    """[[scenarios]]: each a method as a [[mix]] entry has it (weightless; [call]'s
    method where it names none), with its executor; returned as a mix of them."""
    if value is None:
        return (), mix
    if mix:
        raise UsageError("give [[mix]] or [[scenarios]], not both (a scenario runs one method)")
    if not isinstance(value, list) or not value or not all(isinstance(e, dict) for e in value):
        raise UsageError("[[scenarios]] must be one or more tables, each with a name")
    executors, entries = [], []
    for number, table in enumerate(value, 1):
        where = f"[[scenarios]] entry {number}"
        if "weight" in table:
            raise UsageError(f"{where}: a scenario has no weight; its executor sets its load")
        _check_keys(table, SCENARIO_KEYS, where)
        executor, call = split_executor(table, where)
        if method is not None and "method" not in call:
            call["method"] = method
        executors.append(executor)
        entries.append(_mix_entry(call, where))
    scenarios = tuple(executors)
    check_names(scenarios)
    return scenarios, tuple(entries)


def _mix_entries(value: Any) -> tuple[MixEntry, ...]:
    """[[mix]]: the methods of a mix, each with its weight and own data, metadata,
    timeout and name (the proto and TLS are [call]'s and [tls]'s)."""
    if value is None:
        return ()
    if not isinstance(value, list) or not value or not all(isinstance(e, dict) for e in value):
        raise UsageError("[[mix]] must be one or more tables, each with a method")
    return tuple(_mix_entry(entry, f"[[mix]] entry {n}") for n, entry in enumerate(value, 1))


def _mix_entry(entry: dict[str, Any], where: str) -> MixEntry:
    """One method of a mix, or of a scenario: its weight and own data, metadata,
    timeout, name and expected statuses."""
    _check_keys(entry, MIX_KEYS, where)
    method = entry.get("method")
    if not isinstance(method, str) or not method:
        raise UsageError(f"{where}: method must be package.Service/Method, not {method!r}")
    weight = entry.get("weight", 1)
    if isinstance(weight, bool) or not isinstance(weight, int) or weight < 1:
        raise UsageError(f"{where}: weight must be a positive integer, not {weight!r}")
    name = entry.get("name", "")
    if not isinstance(name, str):
        raise UsageError(f"{where}: name must be text, not {name!r}")
    timeout = entry.get("timeout")
    expect = entry.get("expect_status", [])
    expect = [expect] if isinstance(expect, str) else expect
    expected = (
        parse_statuses(
            ",".join(_strings(expect, f"{where} expect_status")), f"{where} expect_status"
        )
        if expect
        else ()
    )
    return MixEntry(
        method=method,
        weight=weight,
        data=_json_text(entry.get("data")),
        metadata=_json_text(entry.get("metadata")),
        timeout_s=parse_duration(str(timeout), f"{where} timeout") if timeout else 0.0,
        name=name,
        expected=expected,
    )


def _json_text(value: Any) -> str | None:
    """A TOML string as it is, a table or array as the JSON it stands for."""
    if value is None or isinstance(value, str):
        return value
    return json.dumps(value)


def _default_variants(table: dict[str, Any], variants: tuple[Variant, ...]) -> tuple[str, ...]:
    if "variants" not in table:
        return ()
    chosen = _strings(table["variants"], "[defaults] variants")
    known = {variant.name for variant in variants}
    unknown = [name for name in chosen if name not in known]
    if unknown:
        raise UsageError(f"[defaults] variants names unknown variant {unknown[0]!r}")
    return chosen


def _boolean(value: Any, where: str) -> bool:
    if not isinstance(value, bool):
        raise UsageError(f"{where} must be true or false, not {value!r}")
    return value


def _list(value: Any) -> list[Any]:
    if not isinstance(value, list) or not value:
        raise UsageError(f"concurrency must be a non-empty list, not {value!r}")
    return value
