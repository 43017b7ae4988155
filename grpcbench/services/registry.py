"""Find services by name: built-ins plus any installed ``grpcbench.services`` entry point.

Entries are ``module:attribute`` strings, imported only when a service is used,
so listing never imports grpc or third-party code.
"""

from __future__ import annotations

import importlib
from importlib.metadata import entry_points

from grpcbench.errors import UsageError
from grpcbench.services.base import ServiceDefinition

ENTRY_POINT_GROUP = "grpcbench.services"

_BUILTIN: dict[str, str] = {
    "hello": "grpcbench.services.hello:SERVICE",
}


def available_services() -> dict[str, str]:
    """Name -> ``module:attribute``; installed entry points may add or override."""
    found = dict(_BUILTIN)
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        found[ep.name] = ep.value
    return found


def load_service(name: str) -> ServiceDefinition:
    services = available_services()
    if name not in services:
        known = ", ".join(sorted(services))
        raise UsageError(f"unknown service {name!r} (known services: {known})")
    module_name, _, attribute = services[name].partition(":")
    service = getattr(importlib.import_module(module_name), attribute)
    if not isinstance(service, ServiceDefinition):
        raise UsageError(f"service {name!r} ({services[name]}) is not a ServiceDefinition")
    return service
