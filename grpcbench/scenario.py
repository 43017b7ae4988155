"""Scenarios are data: one TOML file per experiment, found by name or path.

The file says which service (Python, from the registry) to run, with which
workload and server parameters, and the defaults for servers, levels and
sizes. The files live in the repository's top-level ``scenarios/`` directory;
the wheel ships them as ``grpcbench/_data/scenarios``.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from grpcbench.errors import UsageError
from grpcbench.resources import data_dirs
from grpcbench.servers.kinds import DEFAULT_SERVERS


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
    servers: tuple[str, ...] = DEFAULT_SERVERS
    concurrency: tuple[int, ...] = (2, 10, 25, 50)
    requests: int = 2000
    warmup: str = "200"
    timeout: str = "20s"
    workload_params: dict[str, Any] = field(default_factory=dict)
    server_params: dict[str, Any] = field(default_factory=dict)
    variants: tuple[Variant, ...] = ()


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
    try:
        data = tomllib.loads(path.read_text())
    except (OSError, tomllib.TOMLDecodeError) as error:
        raise UsageError(f"cannot read scenario file {path}: {error}") from None
    return parse_scenario(data, path)


def parse_scenario(data: dict[str, Any], path: Path) -> Scenario:
    defaults = data.get("defaults", {})
    try:
        return Scenario(
            name=str(data.get("name", path.stem)),
            description=str(data.get("description", "")),
            service=str(data["service"]),
            path=str(path),
            servers=tuple(defaults.get("servers", DEFAULT_SERVERS)),
            concurrency=tuple(int(c) for c in defaults.get("concurrency", (2, 10, 25, 50))),
            requests=int(defaults.get("requests", 2000)),
            warmup=str(defaults.get("warmup", "200")),
            timeout=str(defaults.get("timeout", "20s")),
            workload_params=dict(data.get("workload", {})),
            server_params=dict(data.get("server", {})),
            variants=tuple(
                Variant(str(v["name"]), {k: x for k, x in v.items() if k != "name"})
                for v in data.get("variants", [])
            ),
        )
    except (KeyError, TypeError, ValueError) as error:
        raise UsageError(f"invalid scenario file {path}: {error!r}") from None
