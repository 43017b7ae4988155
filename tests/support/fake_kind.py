"""A server kind of the tests' own: what the contributing page's recipe says a new
kind is (one module with ``serve`` plus one entry in ``servers.kinds.KINDS``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from grpcbench.servers.spec import ServerSpec
from grpcbench.services.base import ServiceDefinition

SERVED: list[tuple[str, Any]] = []


def serve(
    service: ServiceDefinition, spec: ServerSpec, params: Mapping[str, Any], host: str, port: int
) -> None:
    """Looks its servicer up by its own kind name, as every kind does."""
    servicer = service.servicer(spec.kind)
    SERVED.append((spec.label, servicer(params)))
