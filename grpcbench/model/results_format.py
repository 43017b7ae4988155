"""The results file's format history and the chain that upgrades old files.

As in pyperf, every version that was ever written stays readable: ``upgrade``
applies one step per version until the data is current, so ``show``,
``compare`` and ``report`` read any grpcbench results file.

Format history:

1. grpcbench 0.1 (first release). Each level is flat: ``scenario``,
   ``server``, ``driver``, ``concurrency``, ``connection``, ``channels``,
   ``rate``, ``repeat``, ``variant``, ``load``, ``server_usage``, times.
   ``level_errors`` are strings. ``options`` is the free-form dump of the
   run's options (scenario as an object, load settings at the top level).
2. Each level carries a typed ``plan`` (concurrency, channels, rate,
   variant, connection); its driver lives only in ``load``. ``level_errors``
   are objects (server, driver, plan, message). ``options`` is typed: load
   settings under ``load``, the columns under ``targets``, the levels under
   ``levels``; ``status`` is one of running, complete, interrupted, failed.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from grpcbench.base.errors import UsageError

FORMAT_VERSION = 2

Data = dict[str, Any]


def _plan_from_v1_level(level: Data) -> Data:
    return {
        "concurrency": int(level["concurrency"]),
        "channels": int(level.get("channels", 0)),
        "rate": float(level.get("rate", 0.0)),
        "variant": str(level.get("variant", "")),
        "connection": str(level.get("connection", "")),
    }


def _v1_to_v2(data: Data) -> Data:
    old_levels = list(data["levels"])
    levels = []
    for level in old_levels:
        if not isinstance(level, dict):
            raise UsageError(f"a level is not an object: {level!r}")
        levels.append(
            {
                "scenario": level["scenario"],
                "server": level["server"],
                "plan": _plan_from_v1_level(level),
                "repeat": int(level.get("repeat", 0)),
                "load": level["load"],
                "server_usage": level.get("server_usage"),
                "started_at": level["started_at"],
                "finished_at": level["finished_at"],
            }
        )
    options = data.get("options") or {}
    scenario = options.get("scenario") or {}
    plans: list[Data] = []
    for level in levels:
        if level["plan"] not in plans:
            plans.append(level["plan"])
    new_options = {
        "scenario": scenario.get("name", ""),
        "service": "",
        "server_params": scenario.get("server_params") or {},
        "workload_params": scenario.get("workload_params") or {},
        "targets": [options["target"]] if options.get("target") else options.get("servers", []),
        "drivers": options.get("drivers", []),
        "levels": plans,
        "load": {
            key: options[key]
            for key in (
                "requests",
                "duration_s",
                "warmup_requests",
                "warmup_s",
                "timeout_s",
                "connections",
                "arrivals",
                "max_in_flight",
                "max_level_s",
            )  # fmt: skip
            if key in options
        },
        "placement": options.get("placement") or {},
        "client_processes": options.get("client_processes", 1),
        "repeat": options.get("repeat", 1),
    }
    errors = [
        {"server": "", "driver": "", "plan": None, "message": str(text)}
        for text in data.get("level_errors") or ()
    ]
    return {
        **data,
        "format_version": 2,
        "levels": levels,
        "options": new_options,
        "level_errors": errors,
    }


# version N -> the step that turns a version-N file into version N + 1.
UPGRADES: dict[int, Callable[[Data], Data]] = {1: _v1_to_v2}


def upgrade(data: Data) -> Data:
    """``data`` in the current format; one clear error for unknown versions."""
    version = data.get("format_version")
    if version == FORMAT_VERSION:
        return data
    if not isinstance(version, int) or version not in UPGRADES:
        raise UsageError(
            f"unsupported results format version {version!r} (this grpcbench reads 1 to"
            f" {FORMAT_VERSION})"
        )
    while version != FORMAT_VERSION:
        data = UPGRADES[version](data)
        version = data["format_version"]
    return data
