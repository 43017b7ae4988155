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
    "users": "grpcbench.services.users:SERVICE",
    "watch": "grpcbench.services.watch:SERVICE",
    "objects": "grpcbench.services.objects:SERVICE",
}


def available_services() -> dict[str, str]:
    """Name -> ``module:attribute``; installed entry points may add or override."""
    found = dict(_BUILTIN)
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        found[ep.name] = ep.value
    return found


def load_service(name: str) -> ServiceDefinition:
    """A registered name, or ``package.module:ATTRIBUTE`` for an unregistered service."""
    services = available_services()
    reference = services.get(name, name if ":" in name else None)
    if reference is None:
        known = ", ".join(sorted(services))
        raise UsageError(f"unknown service {name!r} (known services: {known})")
    module_name, _, attribute = reference.partition(":")
    try:
        service = getattr(importlib.import_module(module_name), attribute)
    except (ImportError, AttributeError) as error:
        raise UsageError(f"cannot load service {name!r} from {reference}: {error}") from None
    if not isinstance(service, ServiceDefinition):
        raise UsageError(f"service {name!r} ({reference}) is not a ServiceDefinition")
    return service
