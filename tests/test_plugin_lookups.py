"""A built-in entry is found without reading every installed package's metadata.

Each server start looks its kind and service up again in a fresh process; reading
the entry points there (importlib.metadata, every distribution's metadata) cost
20-30 ms of each start. A built-in kind is final (no plugin may replace it), and a
child is told the built-in service's own ``module:ATTRIBUTE`` where no plugin
overrides the name, so neither lookup reads the metadata; anything else still does.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from grpcbench.base import plugins
from grpcbench.services import registry


@dataclass(frozen=True)
class _Info:
    name: str


class _NoEntryPoints:
    def select(self, group: str) -> list[Any]:
        return []


def _counted(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    reads: list[str] = []

    def every_entry_point() -> _NoEntryPoints:
        reads.append("read")
        return _NoEntryPoints()

    monkeypatch.setattr(plugins, "_every_entry_point", every_entry_point)
    return reads


def test_a_built_in_entry_is_found_without_reading_the_installed_packages(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    reads = _counted(monkeypatch)
    kinds = plugins.Registry("grpcbench.test_kinds", _Info, [_Info("grpcio")])
    assert kinds["grpcio"] == _Info("grpcio") and "grpcio" in kinds
    assert reads == []
    with pytest.raises(KeyError):
        kinds["from-a-plugin"]  # not built in: the plugins are read, once
    assert reads == ["read"] and list(kinds) == ["grpcio"]


def test_a_server_child_is_told_the_built_in_service_and_loads_it_without_a_lookup(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert registry.service_reference("hello") == "grpcbench.services.hello:SERVICE"
    assert registry.service_reference("mypkg.mod:SERVICE") == "mypkg.mod:SERVICE"

    def no_lookup() -> dict[str, str]:
        raise AssertionError("the child read the installed packages' entry points")

    monkeypatch.setattr(registry, "available_services", no_lookup)
    loaded = registry.load_service.__wrapped__("grpcbench.services.hello:SERVICE")  # type: ignore[attr-defined]
    assert loaded.name == "hello"


def test_a_plugin_that_overrides_a_built_in_service_is_looked_up_in_the_child(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(registry, "available_services", lambda: {"hello": "mypkg.mod:SERVICE"})
    assert registry.service_reference("hello") == "hello"
