"""``run``'s options from Python keywords: one level, for the pytest plugin and the benchmarks.

``run_args(spec, concurrency=10, requests=2000, call="pkg.Svc/Method", ...)``
makes the same ``RunArgs`` the command line makes, each keyword being one of
``run``'s options by its Python name (load settings by field or option name),
so ``build_run_options`` checks them exactly as it checks the command line's.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from grpcbench.base.declarations import build_declared, declared_options
from grpcbench.base.errors import UsageError
from grpcbench.run.arguments import RunArgs
from grpcbench.run.ghz_flags import GhzFlags
from grpcbench.run.options import RunOptions, build_run_options

if TYPE_CHECKING:
    from grpcbench.run.context import RunContext

# Names the plugin took before it took run's: the same options.
_ALIASES = {"driver": "load", "params": "server_params", "rounds": "repeat"}
# Options a test does not give: set by the plugin (the spec or target), output files,
# live telemetry (the command line's), and ghz's own flags (ghz's spellings of
# options the plugin takes by their names).
_NOT_GIVEN = {"servers", "target", "target_pid", "output", "markdown", "csv", "report",
              "exports", "prometheus", "prometheus_linger", "otlp", "otlp_headers",
              "debug"}  # fmt: skip
DEFAULT_CONCURRENCY = 10  # a scenario's list of levels is for `run`, not one assertion


def _listed(value: Any) -> str:
    """10 or [2, 10] or "2,10" -> "2,10", as the command line takes lists."""
    if isinstance(value, str):
        return value
    if isinstance(value, Sequence):
        return ",".join(str(item) for item in value)
    return str(value)


def _params(value: Mapping[str, Any] | Sequence[str]) -> tuple[str, ...]:
    """{"users": 1000} -> ("users=1000",): the command line's KEY=VALUE."""
    if isinstance(value, Mapping):
        return tuple(f"{key}={json.dumps(item)}" for key, item in value.items())
    return tuple(value)


def _json_text(value: Any) -> Any:
    return value if value is None or isinstance(value, str) else json.dumps(value)


def run_args(
    spec: str | None = None,
    *,
    target: str | None = None,
    target_pid: int | None = None,
    **given: Any,
) -> RunArgs:
    """The plugin's keywords as ``grpcbench run``'s options (one ``RunArgs``)."""
    if (spec is None) == (target is None):
        raise UsageError("grpcbench: give a server spec or target=HOST:PORT")
    ghz_flags = {option.name for option in declared_options(GhzFlags)}
    known = {option.name for option in declared_options(RunArgs)} - _NOT_GIVEN - ghz_flags
    options: dict[str, Any] = {}
    settings: dict[str, Any] = {}
    for name, value in given.items():
        name = _ALIASES.get(name, name)
        if name in ("concurrency", "rate", "channels", "variants", "client_cpus", "server_cpus"):
            options[name] = _listed(value)
        elif name in ("server_params", "workload_params"):
            options[name] = _params(value)
        elif name == "client_processes":
            options[name] = str(value)
        elif name in ("thresholds", "metadata", "call"):  # one or several, as the option repeats
            options[name] = (_json_text(value),) if not _several(value) else tuple(value)
        elif name == "data":
            options[name] = _json_text(value)
        elif name == "import_paths":
            options[name] = _listed(value)
        elif name in known:
            options[name] = value
        else:  # a load setting, or one clear error from its declarations
            settings[name] = value
    made: RunArgs = build_declared(RunArgs, options)
    return replace(
        made, servers=(spec,) if spec else (), target=target, target_pid=target_pid,
        settings=settings,
    )  # fmt: skip


def _several(value: Any) -> bool:
    """A list or tuple of texts (several thresholds), not one value or a JSON object."""
    return isinstance(value, list | tuple) and all(isinstance(item, str) for item in value)


def one_level_options(spec: str | None = None, **given: Any) -> RunOptions:
    """``run``'s options for one level on one target (a test asserts on one result).
    A ``call=`` on a running server gets what ``run --call`` gets: ghz's defaults
    (``ghz_compat``: 50 concurrent calls, 200 calls, no warm-up, one connection);
    otherwise concurrency 10 unless a concurrency, a rate or a rate schedule is given."""
    from grpcbench.run.ghz_compat import apply

    ghz_line = given.get("target") is not None and given.get("call") is not None
    if not ghz_line and not {"concurrency", "rate", "rate_schedule"} & set(given):
        given["concurrency"] = DEFAULT_CONCURRENCY
    options = build_run_options(apply(run_args(spec, **given)))
    if len(options.levels) != 1 or len(options.targets) != 1 or len(options.drivers) != 1:
        raise UsageError(
            "grpcbench: one call measures one level of one server with one driver"
            f" ({len(options.levels)} level(s), {len(options.targets)} server(s),"
            f" {len(options.drivers)} driver(s) given)"
        )
    return options


def level_context(target: str, **given: Any) -> RunContext:
    """The ``RunContext`` of one level against ``target`` (HOST:PORT), for callers that
    measure with drivers of their own (the benchmarks): ``context.measure_level``."""
    from grpcbench.run.context import RunContext

    return RunContext.build(one_level_options(target=target, **given))
