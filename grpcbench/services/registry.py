"""Find services by name: built-ins plus any installed ``grpcbench.services`` entry point.

Entries are ``module:attribute`` strings, imported only when a service is used,
so listing never imports grpc or third-party code. A user's own
``module:ATTRIBUTE`` is found in the current directory too, as users expect:
the directory is *appended* to ``sys.path`` (here and, through
``USER_PATH_ENV``, in every child), so a stray ``uvloop.py`` there can never
shadow an installed dependency.
"""

from __future__ import annotations

import functools
import importlib
import os
import sys
from types import ModuleType
from typing import Any

from grpcbench.base.child_setup import USER_PATH_ENV
from grpcbench.base.errors import UsageError
from grpcbench.base.plugins import installed_entry_points
from grpcbench.services.base import ServiceDefinition

ENTRY_POINT_GROUP = "grpcbench.services"
# A scenario that names no service (a --call on a --target): no servicers, no workload.
NO_SERVICE = ServiceDefinition(name="", description="no servicers (a --call on a --target)")

_BUILTIN: dict[str, str] = {
    "hello": "grpcbench.services.hello:SERVICE",
    "users": "grpcbench.services.users:SERVICE",
    "watch": "grpcbench.services.watch:SERVICE",
    "objects": "grpcbench.services.objects:SERVICE",
}


_BUILTIN_REFERENCES = frozenset(_BUILTIN.values())


def service_reference(name: str) -> str:
    """What a server child is told to load for ``name``: a built-in's own
    ``module:ATTRIBUTE`` when no plugin overrides it (the child then imports it
    without reading every installed package's entry points, 20-30 ms of each server
    start), else ``name`` itself, looked up there as here."""
    reference = available_services().get(name, name)
    return reference if reference in _BUILTIN_REFERENCES else name


def available_services() -> dict[str, str]:
    """Name -> ``module:attribute``; installed entry points may add or override."""
    found = dict(_BUILTIN)
    for ep in installed_entry_points(ENTRY_POINT_GROUP):
        found[ep.name] = ep.value
    return found


@functools.cache
def load_service(name: str) -> ServiceDefinition:
    """A registered name, or ``package.module:ATTRIBUTE`` for an unregistered service.

    Looked up once per process, whoever asks (the options' check, the run's context,
    each started target): a user's module is imported once, and its import-time
    side effects happen once. A failed lookup is not kept: it raises each time."""
    if not name:
        return NO_SERVICE
    # What service_reference gave a child is imported as it is: no lookup.
    services = {name: name} if name in _BUILTIN_REFERENCES else available_services()
    reference = services.get(name, name if ":" in name else None)
    if reference is None:
        known = ", ".join(sorted(services))
        raise UsageError(f"unknown service {name!r} (known services: {known})")
    service = import_attribute(reference, f"service {name!r}", registered=name in services)
    if not isinstance(service, ServiceDefinition):
        raise UsageError(f"service {name!r} ({reference}) is not a ServiceDefinition")
    return service


def import_attribute(reference: str, what: str, registered: bool = False) -> Any:
    """``package.module:ATTRIBUTE`` from a user's module (or a registered one); every
    way its import can fail is one UsageError naming ``what``."""
    module_name, _, attribute = reference.partition(":")
    try:
        module = importlib.import_module(module_name) if registered else _import(module_name)
        return getattr(module, attribute)
    except (ImportError, AttributeError) as error:
        raise UsageError(f"cannot load {what} from {reference}: {error}") from None
    except SyntaxError as error:
        where = f"{error.filename}:{error.lineno}" if error.filename else reference
        raise UsageError(f"cannot load {what}: a syntax error at {where}") from None
    except SystemExit as error:
        raise UsageError(
            f"cannot load {what}: {module_name} called sys.exit({error.code!r}) as it was imported"
        ) from None
    except Exception as error:  # noqa: BLE001 - a user's module may raise anything
        raise UsageError(
            f"cannot load {what}: importing {module_name} raised {type(error).__name__}: {error}"
        ) from None


_APPENDED: list[str] = []  # the directories this process appended for users' modules


def _import(module_name: str) -> ModuleType:
    """A user's module, found on sys.path or in the current directory (appended)."""
    directory = os.getcwd()
    if directory not in sys.path:
        sys.path.append(directory)
        _APPENDED.append(directory)
        # This process's own directories only: an inherited value is another run's.
        os.environ[USER_PATH_ENV] = os.pathsep.join(_APPENDED)
    return importlib.import_module(module_name)
